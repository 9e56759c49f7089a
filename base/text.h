/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text: small helpers for text that comes from outside (names read from /proc and binaries,
 * annotations, API requests, config and token files) and goes into our files and messages.
 * Pure; no I/O; thread-safe.
 */
#ifndef SLIDEOPS_TEXT_H
#define SLIDEOPS_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The one rule for untrusted text (names of processes, threads, functions and files, annotations,
 * API requests, config and token files) on its way into our files and messages: a control
 * character (below 0x20, and 0x7f; NUL) and every byte that is not part of well-formed UTF-8
 * (overlongs, surrogates, above U+10FFFF, cut sequences, lone continuations) becomes '?', one
 * '?' per byte, so the length never grows and names stay recognizable.
 */

/*
 * Returns the length (1..4) of the well-formed UTF-8 character at @s, of which @avail bytes may
 * be read, or 0 when none starts there (@avail 0 too). For escapers: ASCII, NUL included, is 1.
 */
size_t text_utf8_char_len(const char *s, size_t avail);

/* Applies the rule to @s (NUL-terminated) in place. The length does not change. */
void text_utf8_sanitize(char *s);

/* Returns true when the @len bytes at @s need no change under the rule (no NUL among them). */
bool text_utf8_is_clean(const char *s, size_t len);
/* The same, but control characters other than NUL pass: true for well-formed UTF-8 w/o NUL. */
bool text_utf8_is_valid(const char *s, size_t len);

/*
 * Copies the @len bytes at @src (NULs included) to @dst (@size bytes) under the rule, cut at a
 * character boundary to fit and NUL-terminated; @dst may be @src (in place). Returns the length written (0 and nothing
 * written when @dst is NULL or @size 0).
 */
size_t text_utf8_sanitize_copy(char *dst, size_t size, const char *src, size_t len);
/*
 * The same, but control characters other than NUL pass: for models whose writers escape them
 * their own way (the profile: collapsed, JSON, pprof). The result is well-formed UTF-8.
 */
size_t text_utf8_valid_copy(char *dst, size_t size, const char *src, size_t len);

/*
 * Drops from the end of @s (NUL-terminated) the start of a character that a cut left there
 * (snprintf into a short buffer), so the cut falls on a character boundary. Other bytes are
 * left alone. Returns the new length.
 */
size_t text_utf8_trim_partial(char *s);

/*
 * Cuts @s (NUL-terminated) to at most @max bytes without splitting a UTF-8 character: a
 * character that would be cut is dropped whole. Returns the new length.
 */
size_t text_utf8_truncate(char *s, size_t max);

/*
 * True for an absolute path of at most @max bytes made of [A-Za-z0-9._/-] only: one that no
 * option parser splits (on ',', '=', spaces) or expands ('%'), as the JVM's are.
 */
bool text_plain_path(const char *s, size_t max);

/*
 * Writes "FILE:LINE: message" (@line 0: "FILE: message") to @err (@size bytes; nothing when
 * @err is NULL or @size 0), the message from @fmt and @ap. Returns -EINVAL, for parsers to
 * `return text_file_error(...)`.
 */
int text_file_error(char *err, size_t size, const char *file, size_t line, const char *fmt,
		    va_list ap) __attribute__((format(printf, 5, 0)));

/* snprintf() into a reason buffer that may be absent: nothing when @buf is NULL or @size 0. */
void text_setf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
