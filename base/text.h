/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text: small helpers for text that comes from outside (annotations, API requests, config and
 * token files) and goes into our files and messages. Pure; no I/O.
 */
#ifndef SLIDEOPS_TEXT_H
#define SLIDEOPS_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Makes @s (NUL-terminated) safe to store and print, in place: control characters (below
 * 0x20, and 0x7f) and every byte that is not part of well-formed UTF-8 (overlongs, surrogates,
 * above U+10FFFF, truncated sequences) become '?'. The length does not change.
 */
void text_utf8_sanitize(char *s);

/*
 * Writes "FILE:LINE: message" (@line 0: "FILE: message") to @err (@size bytes; nothing when
 * @err is NULL or @size 0), the message from @fmt and @ap. Returns -EINVAL, for parsers to
 * `return text_file_error(...)`.
 */
int text_file_error(char *err, size_t size, const char *file, size_t line, const char *fmt,
		    va_list ap) __attribute__((format(printf, 5, 0)));

#endif
