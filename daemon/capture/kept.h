/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kept: a whole-server cpu sampler that stays loaded, with the caches that name its samples,
 * for continuous profiling (issue 18, docs/continuous.md). It is loaded once and sampled in
 * windows, each one a capture of its own (capture_run() with capture_opts.kept): the window
 * drains the counts, clears them and samples on, so a window costs the samples it takes and
 * their naming, not the loading. Between windows the caches forget the processes that exited
 * (symbolizer, process names, unwind tables, the CPython and JVM walks), so that a day of
 * processes coming and going leaves them as large as the processes living.
 *
 * It takes no capture lock: a requested capture runs beside it, each at its own rate. Not
 * thread-safe: one thread runs the windows.
 */
#ifndef SLIDEOPS_CAPTURE_KEPT_H
#define SLIDEOPS_CAPTURE_KEPT_H

#include <stddef.h>
#include <stdint.h>

#include "cgroups/resolver.h"

#define KEPT_DEFAULT_HZ 19

struct capture_kept_opts {
	unsigned int freq_hz;	 /* 0: KEPT_DEFAULT_HZ */
	const char *proc_root;	 /* NULL: /proc */
	owner_name_fn_t name_fn; /* names Services; may be NULL */
	void *name_ctx;
};

/* What a window borrows (capture.c); valid until capture_kept__free(). */
struct capture_kept_parts {
	struct source *src;
	struct symbolizer *sym;
	struct owner_resolver *owners;
	struct frames *frames;
	struct pyframes *py;
	struct jvmframes *jvm;
};

/* What the caches hold now: the figures a day of continuous profiling must keep flat. */
struct capture_kept_stats {
	uint64_t windows;
	size_t sym_processes, sym_dsos;
	uint64_t unwind_table_bytes; /* what the unwind tables take in the kernel */
	uint64_t swept;		     /* processes forgotten since the start */
};

struct capture_kept;

/*
 * Loads and attaches the sampler at @opts->freq_hz on every CPU, walking the CPythons and JVMs
 * running now. Returns 0 with @out, or -errno with @err (a one-line reason) filled.
 */
int capture_kept__new(const struct capture_kept_opts *opts, struct capture_kept **out, char *err,
		      size_t size);
/* Detaches and frees; accepts NULL. */
void capture_kept__free(struct capture_kept *k);

unsigned int capture_kept__hz(const struct capture_kept *k);
const struct capture_kept_parts *capture_kept__parts(const struct capture_kept *k);

/* After a window's drain: clears the counts and samples on. Returns 0 or -errno. (The window
 * starts its process names' counts again itself: frames__next().) */
int capture_kept__restart(struct capture_kept *k);

/* After a window's files are written: forgets the processes that exited. */
void capture_kept__sweep(struct capture_kept *k);

void capture_kept__stats(const struct capture_kept *k, struct capture_kept_stats *out);

#endif
