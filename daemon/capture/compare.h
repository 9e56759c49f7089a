/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compare: two stored profiles of the same question side by side (`slideops-profiler compare`,
 * the agent's GET /v1/compare). Loads a profile directory (profile.pb.gz + summary.json, as
 * `capture --out` and the agent's store write them) or a bare pprof file, refuses two
 * different questions, and writes the differential flame graph (profile/flamegraph.h) and the
 * difffolded lines (profile/diff.h) with a one-paragraph answer: the frames whose share of each
 * profile's own total grew and shrank most. Shares, not values, are compared, so a 30 s capture
 * compares with a 10 s one. No global state: thread-safe on distinct objects.
 */
#ifndef SLIDEOPS_COMPARE_H
#define SLIDEOPS_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;
struct prof_diff;

/* Largest summary.json and profile.pb.gz compare_load() reads (never trusting a size). */
#define COMPARE_MAX_SUMMARY_BYTES (16u << 20)
#define COMPARE_MAX_PPROF_BYTES (256u << 20)
/* A change of self share below this (0.1 percentage point) is no change. */
#define COMPARE_NO_CHANGE 0.001
/* The frames compare_top_changes() keeps of each kind. */
#define COMPARE_TOP 5

struct compare_side {
	struct profile *p; /* decoded profile.pb.gz (owner_root set for server profiles) */
	char question[32]; /* "cpu", ... from summary.json (or "" when unknown: a bare pprof file) */
	char label[256];   /* shown in the page: the profile id or file name, its start time */
};

/*
 * Loads @path: a profile directory (its profile.pb.gz, and its summary.json when there: the
 * question, and target "server" sets owner_root) or a pprof file, gzipped or not. @out's label
 * is the directory's or file's name and, when the profile has one, its start time:
 * "20261129T174501Z-a1b2c3 (2026-11-29 17:45:01 UTC)". Bounded reads (COMPARE_MAX_*_BYTES).
 * Returns 0 with @out filled (free it with compare_side_free()), or -errno with one line in
 * @err: -ENOENT no such file or directory, -EINVAL not a profile (a directory without
 * profile.pb.gz, a summary.json that is not JSON, a file that is not pprof), -EFBIG past a cap,
 * -EACCES, -ENOMEM, ...
 */
int compare_load(const char *path, struct compare_side *out, char *err, size_t size);
/* Frees @s->p and clears @s. Accepts NULL and a zeroed side. */
void compare_side_free(struct compare_side *s);

/*
 * Compares @next with @base. Refuses two different questions: -EINVAL with "these profiles
 * answer different questions (cpu and memory-held): compare two profiles of the same question"
 * in @err (also when the sample types differ; when a question is unknown or both are the same,
 * the first sample types stand for the questions: "(samples and inuse_space)").
 * Returns 0 with @out (prof_diff__free() it), -EINVAL for a side without a profile, -ENOMEM.
 */
int compare_profiles(const struct compare_side *base, const struct compare_side *next,
		     struct prof_diff **out, char *err, size_t size);

/* One frame whose self share changed: its samples as a stack's leaf, summed over its stacks. */
struct compare_change {
	char name[256]; /* the frame as the folded stacks name it (UTF-8, cut whole) */
	int64_t base, next;
	double base_share, next_share; /* of each profile's total, 0 to 1 */
};

struct compare_top {
	struct compare_change grew[COMPARE_TOP];   /* the largest gain first */
	struct compare_change shrank[COMPARE_TOP]; /* the largest loss first */
	size_t ngrew, nshrank;
};

/*
 * The frames of @d whose self share (as the leaf of a stack) grew most and shrank most, by
 * percentage points; changes under COMPARE_NO_CHANGE are left out, ties go by name. Pure.
 * Returns 0 with @out, -EINVAL (NULL), -ENOMEM.
 */
int compare_top_changes(const struct prof_diff *d, struct compare_top *out);

/*
 * The one-paragraph answer into @buf: "Compared with BASE, NEXT spends more in X (+N points)
 * and less in Y (−M points). ..." with the sides' labels, the verb of their question
 * (memory-held "holds more memory in", ...), or that nothing changed. Pure. Returns its length
 * (cut, NUL-terminated, when @size is too small).
 */
size_t compare_answer(const struct compare_top *top, const struct compare_side *base,
		      const struct compare_side *next, char *buf, size_t size);

/*
 * Writes the differential page of @d (title, answer, a table of the two profiles) to @f;
 * @assets as flamegraph_opts.assets (NULL: self-contained; "/ui" for the agent's API).
 * Returns 0 or -errno.
 */
int compare_write_page(const struct prof_diff *d, const struct compare_side *base,
		       const struct compare_side *next, const char *assets, FILE *f);

/*
 * Creates @dir (and its parents) and writes DIR/diff.html (compare_write_page(), self-contained)
 * and DIR/diff.collapsed (difffolded "stack base new" lines, normalised as difffolded.pl -n
 * does), each atomically. Returns 0 or -errno with one line in @err.
 */
int compare_write_dir(const struct prof_diff *d, const struct compare_side *base,
		      const struct compare_side *next, const char *dir, char *err, size_t size);

#endif
