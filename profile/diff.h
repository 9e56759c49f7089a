/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diff: two profiles of the same question compared stack by stack, for a differential flame
 * graph (frames that grew in red, that shrank in blue) and flamegraph.pl's difffolded.pl. Stacks
 * are the folded lines of each profile (profile/collapsed.h: frames by their displayed names,
 * root first, owner and process first in server profiles), so two captures of one program
 * compare although their frame ids differ. Each stack has its value (value 0) in the base and
 * in the new profile, and its share of each profile's total: shares, not values, are compared,
 * so a 30 s capture compares with a 10 s one. Pure, no I/O but prof_diff_write(); not
 * thread-safe per object.
 */
#ifndef SLIDEOPS_PROFILE_DIFF_H
#define SLIDEOPS_PROFILE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

struct prof_diff_row {
	const char *stack; /* "a;b;c", root first; borrowed until prof_diff__free() */
	int64_t base, next;
	double base_share, next_share; /* of each profile's total, 0 to 1 (0 when it is 0) */
};

struct prof_diff;

/*
 * Compares @next with @base. Returns 0 with @out, -EINVAL when the profiles are of different
 * kinds (their first sample type or unit differ: two different questions) or a pointer is NULL,
 * -ENOMEM.
 */
int prof_diff__new(const struct profile *base, const struct profile *next, struct prof_diff **out);
/* Accepts NULL. */
void prof_diff__free(struct prof_diff *d);

/* The stacks of either profile, in byte order of their text; borrowed. A NULL @d has none. */
size_t prof_diff__rows(const struct prof_diff *d, const struct prof_diff_row **rows);
/* The totals (value 0) of the base and of the new profile (0 for a NULL @d); either may be
 * NULL. */
void prof_diff__totals(const struct prof_diff *d, int64_t *base, int64_t *next);

/*
 * Writes "stack base next" lines (what difffolded.pl writes and flamegraph.pl colours by the
 * difference), the values scaled so both columns have the base's total when @normalize is set
 * (difffolded.pl -n does the same; not when either total is 0). Returns the number of lines or
 * -errno (-EINVAL for a NULL @d or @f).
 */
int prof_diff_write(const struct prof_diff *d, FILE *f, int normalize);

#endif
