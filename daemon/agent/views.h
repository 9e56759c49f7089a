/* SPDX-License-Identifier: Apache-2.0 */
/*
 * views: the pages the agent renders from stored profiles at read time, for the page's frames:
 * a profile's flame graph, the differential flame graph of two profiles, and the continuous
 * profile of a time range (history.h) and its comparison with a profile (docs/api.md). All
 * are drawn from profile.pb.gz, read through the store's open files (a profile deleted meanwhile
 * still renders whole), with the script and style under /ui (page.h), so they run under the
 * page's Content-Security-Policy.
 */
#ifndef SLIDEOPS_VIEWS_H
#define SLIDEOPS_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* What view_continuous() writes. */
enum view_format {
	VIEW_HTML = 0,	/* the flame graph page */
	VIEW_COLLAPSED, /* folded stacks (profile/collapsed.h) */
	VIEW_PPROF,	/* gzipped pprof */
};

/* A range of the continuous profile, [from, until), wall clock. */
struct view_range {
	int64_t from_ns, until_ns;
	const char *service; /* a Service name: its samples only; NULL or "": the whole server */
};

/*
 * The continuous profile of @r (history.h) as @fmt into *@out (malloc'd), *@len. The whole
 * server's has the owner and process frames at its root, as a server capture has; a Service's
 * has not, as a capture of that Service has not. Returns 0, -ENOENT (no window in the range,
 * or no sample of the Service), -EINVAL (too many windows), -EIO (none could be read), -errno;
 * @err says which.
 */
int view_continuous(struct store *s, const struct view_range *r, enum view_format fmt, char **out,
		    size_t *len, char *err, size_t size);

/* How far back view_compare_continuous() looks: the hour before the profile. */
#define VIEW_CONTINUOUS_BEFORE_S 3600

/*
 * Compares profile @next with the continuous profile of the hour before its start, of the
 * same owner: its Service's samples (every namespace's Service of that name: the samples do
 * not name a namespace), its unit's, or all of them for a server profile. Output as
 * view_compare(). Returns 0; -ENOENT (no such profile, no window in that hour, no sample of
 * the owner); -EINVAL (@next does not answer cpu, with view_compare()'s "these profiles answer
 * different questions" message, or is of processes or a container, which the samples do not
 * name as an owner); -errno; @err says which.
 */
int view_compare_continuous(struct store *s, const char *next, bool collapsed, char **out,
			    size_t *len, char *err, size_t size);

/*
 * Profile @id named at read time by the debug symbols uploaded since it was taken
 * (docs/symbols.md): returns 1 with its pprof or collapsed stacks (@fmt) in *@out (malloc'd),
 * *@len; 0 when no upload names a frame of it (the stored file is right as it is); -errno, with
 * @err.
 */
int view_named_download(struct store *s, const char *id, enum view_format fmt, char **out,
			size_t *len, char *err, size_t size);

/*
 * The stored summary.json of @id (*@text, *@len; replaced when it changes) and its answer
 * (@answer, @answer_size bytes, changed in place) with the names uploads give. Returns 1 when
 * either changed, 0, or -errno (both left as they were).
 */
int view_named_summary(struct store *s, const char *id, char **text, size_t *len, char *answer,
		       size_t answer_size);

#endif
