/* SPDX-License-Identifier: Apache-2.0 */
/*
 * views: the pages the agent renders from stored profiles at read time, for the page's frames:
 * a profile's flame graph and the differential flame graph of two profiles (docs/api.md). Both
 * are drawn from profile.pb.gz, read through the store's open files (a profile deleted meanwhile
 * still renders whole), with the script and style under /ui (page.h), so they run under the
 * page's Content-Security-Policy.
 */
#ifndef SLIDEOPS_VIEWS_H
#define SLIDEOPS_VIEWS_H

#include <stdbool.h>
#include <stddef.h>

struct store;

/* Largest profile.pb.gz a view reads. */
#define VIEW_PPROF_MAX (64u << 20)

/*
 * The flame graph page of profile @id into *@html (malloc'd, *@len bytes). Returns 0, -ENOENT
 * (no such profile), -EINVAL (its pprof does not decode), -errno; @err says which.
 */
int view_flamegraph(struct store *s, const char *id, char **html, size_t *len, char *err,
		    size_t size);

/*
 * Compares profile @next with @base: the differential flame graph page, or with @collapsed
 * their difffolded lines ("stack base new", normalised to the base's total). Returns 0, -ENOENT
 * (either is unknown), -EINVAL (two different questions, or a pprof that does not decode),
 * -errno; @err says which.
 */
int view_compare(struct store *s, const char *base, const char *next, bool collapsed, char **out,
		 size_t *len, char *err, size_t size);

#endif
