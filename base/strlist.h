/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strlist: a short, bounded list of formatted strings (the notes a runtime's source gathers
 * during a capture). At most STRLIST_MAX strings: later ones, and one that cannot be allocated,
 * are dropped. Zero-initialised is empty. Not thread-safe.
 */
#ifndef SLIDEOPS_BASE_STRLIST_H
#define SLIDEOPS_BASE_STRLIST_H

#include <stddef.h>

#define STRLIST_MAX 8

struct strlist {
	char *s[STRLIST_MAX];
	size_t n;
};

/* Appends the formatted string, unless the list is full. */
void strlist_addf(struct strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees every string; the list is empty again. */
void strlist_clear(struct strlist *l);
/* The strings (borrowed) in @out, and their count. */
size_t strlist_get(const struct strlist *l, const char *const **out);

#endif
