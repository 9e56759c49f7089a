/* SPDX-License-Identifier: Apache-2.0 */
/*
 * merge: copy the samples of one profile into another, e.g. a Go program's own heap profile
 * (decoded from pprof) into a capture's profile, and the difference of two snapshots of a
 * cumulative profile (allocations, mutex waits) over the capture.
 */
#ifndef SLIDEOPS_MERGE_H
#define SLIDEOPS_MERGE_H

#include <stdbool.h>
#include <stddef.h>

struct profile;
struct prof_labels;
struct prof_frame_info;
struct prof_sample;

struct profile_merge_opts {
	/* Labels of every copied sample; NULL keeps each sample's own. */
	const struct prof_labels *labels;
	/* Multiplies every value: 1 adds, -1 subtracts (0 means 1). */
	int sign;
	/* Leave out samples whose first value is not positive (after the sign). */
	bool positive_only;
	/* A synthetic leaf frame added below every copied stack (e.g. why a goroutine waits);
	 * NULL for none. */
	const struct prof_frame_info *leaf;
	/* Copies only the samples for which it returns true; NULL copies all. */
	bool (*keep)(const struct profile *src, const struct prof_sample *s);
	/* The same with a context (@filter_ctx, e.g. the owner whose samples to copy); a sample
	 * is copied when it passes both @keep and @filter. NULL copies all. */
	bool (*filter)(void *ctx, const struct profile *src, const struct prof_sample *s);
	void *filter_ctx;
	/* Names a frame of @src that has no name (function NULL) on its way into @dst: writes the
	 * name into @buf (@size bytes, NUL-terminated, valid UTF-8) and returns true, or returns
	 * false to leave it unnamed. Called once per distinct frame; NULL names none. */
	bool (*name)(void *ctx, const struct prof_frame_info *f, char *buf, size_t size);
	void *name_ctx;
};

/*
 * Adds every sample of @src to @dst, frames re-interned in @dst, values in @dst's sample types
 * (the two profiles must have the same number of values). Returns 0, -EINVAL when the value
 * counts differ, -ENOMEM.
 */
int profile_merge(struct profile *dst, const struct profile *src,
		  const struct profile_merge_opts *opts);

/*
 * The difference @end - @start of two snapshots of a cumulative profile, as a new profile with
 * @end's options: only stacks whose first value grew. Returns 0 or what profile_merge returns.
 */
int profile_delta(const struct profile *end, const struct profile *start, struct profile **out);

/*
 * A copy of @p in which @name (profile_merge_opts.name) gave some unnamed frames a name, e.g.
 * the functions of a stripped binary from debug symbols uploaded after the capture. A frame
 * named this way is no longer unnamed_stripped. Returns the number of frames named (>= 0), with
 * the copy in *@out only when it is above 0; -ENOMEM.
 */
int profile_rename(const struct profile *p,
		   bool (*name)(void *ctx, const struct prof_frame_info *f, char *buf, size_t size),
		   void *ctx, struct profile **out);

#endif
