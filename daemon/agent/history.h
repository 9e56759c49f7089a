/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history: the continuous profile of a time range (docs/api.md, GET /v1/continuous and
 * /v1/compare?base=continuous). Continuous profiling stores the whole server's CPU profile
 * window by window as store entries (meta.continuous); this merges the windows that overlap a
 * range into one profile, all of their samples or those of one owner only ("Service billing",
 * as a server profile's owner label names it). Reads are bounded: at most HISTORY_MAX_WINDOWS
 * windows, each profile.pb.gz at most VIEW_PPROF_MAX bytes, HISTORY_MAX_BYTES in all, read
 * through the store's open files. A window removed meanwhile (retention) is left out.
 * Thread-safe (the store is; nothing else is shared).
 */
#ifndef SLIDEOPS_HISTORY_H
#define SLIDEOPS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct prof_sample;
struct store;

/* A day of 60 s windows. */
#define HISTORY_MAX_WINDOWS 1440
/* profile.pb.gz bytes read for one range, all windows together. */
#define HISTORY_MAX_BYTES (1024ull << 20)

struct history_opts {
	int64_t from_ns, until_ns; /* the range, [from, until), wall clock */
	/* Only the samples whose owner label is this ("Service billing"); NULL: every sample. */
	const char *owner;
	/* What the range is of, in messages ("Service billing"); NULL: "this server". */
	const char *what;
	bool owner_root;    /* the merged profile's profile_opts.owner_root */
	size_t max_windows; /* 0: HISTORY_MAX_WINDOWS (a seam for the tests) */
	uint64_t max_bytes; /* 0: HISTORY_MAX_BYTES (likewise) */
};

struct history_info {
	size_t windows;		  /* windows merged */
	size_t skipped;		  /* windows that matched but could not be read or merged */
	int64_t first_ns, end_ns; /* the start of the first window merged, the end of the last */
};

/*
 * Merges the continuous windows that overlap the range, oldest first, into a new profile (the
 * first window's sample types; time_nanos and duration_nanos the span of the windows merged).
 * Returns 0 with @out (profile__free() it) and @info (may be NULL); -ENOENT when no window
 * overlaps the range, or @opts->owner has no sample in them; -EINVAL for a range of more than
 * max_windows windows or max_bytes, or bad @opts; -EIO when none of the windows could
 * be read; -ENOMEM. @err (@size bytes) says which in one line a client can be shown.
 */
int history_merge(struct store *s, const struct history_opts *opts, struct profile **out,
		  struct history_info *info, char *err, size_t size);

/* The owner label of the samples of Service @name: "Service billing" (cgroups/owner.h
 * owner_format()), into @buf. Returns @buf. */
const char *history_service_owner(const char *name, char *buf, size_t size);

/*
 * profile_merge_opts.filter of an owner: true when sample @s's owner label is @ctx (a const
 * char *; samples without an owner label never match). Pure.
 */
bool history_keep_owner(void *ctx, const struct profile *src, const struct prof_sample *s);

#endif
