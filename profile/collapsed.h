/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collapsed: Brendan Gregg's folded stacks, one line per stack, root first:
 *   owner;process;frame;frame;... count
 * Owner and process lead only when the profile's owner_root option is set (server profiles).
 * The count is value 0 of the samples. ';' in names is replaced, so lines always parse back.
 * Details: ';' becomes ':', control characters '_', and so does the ' ' of a name ending in
 * ' ' and digits (it would read as a count); names are valid UTF-8; a missing owner is "Other processes", a
 * missing process or an empty stack "[unknown]"; lines with the same text are merged (counts
 * summed), lines summing to 0 are left out, and lines are sorted (byte order) for stable output.
 */
#ifndef SLIDEOPS_COLLAPSED_H
#define SLIDEOPS_COLLAPSED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

/* The folded lines of a profile, as collapsed_write() writes them (merged, sorted, none 0). */
struct collapsed_fold;

/* Folds @p into @out (freed with collapsed_fold_free()). Returns 0, -EINVAL or -ENOMEM. */
int collapsed_fold(const struct profile *p, struct collapsed_fold **out);
/* Accepts NULL. */
void collapsed_fold_free(struct collapsed_fold *f);
size_t collapsed_fold_count(const struct collapsed_fold *f);
/* Line @i (< count) without its count, which goes to @value (may be NULL); borrowed until
 * collapsed_fold_free(). Lines are in byte order. */
const char *collapsed_fold_line(const struct collapsed_fold *f, size_t i, int64_t *value);

/* Writes @p to @f. Returns the number of lines, or -errno on a write error. */
int collapsed_write(const struct profile *p, FILE *f);
/* Writes to @path atomically (temp file, fsync, rename). Returns 0 or -errno. */
int collapsed_write_file(const struct profile *p, const char *path);

#endif
