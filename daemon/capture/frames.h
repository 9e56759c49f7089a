/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frames: the samples of a capture turned into symbolized profile frames. Names each frame
 * (symbols/), labels each sample with its owner, process and thread, remembers process names
 * (read from /proc when a process is first seen, bounded), the processes that could not be
 * read, and for `threads` the dominant function of each emitted thread. Not thread-safe: one
 * capture, one thread.
 */
#ifndef SLIDEOPS_CAPTURE_FRAMES_H
#define SLIDEOPS_CAPTURE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"
#include "daemon/capture/source.h"

struct symbolizer;
struct owner_resolver;
struct profile;
struct capture_thread;
struct pyframes;
struct jvmframes;
struct nodeframes;

/* Processes whose maps could not be read are remembered up to this many. */
#define FRAMES_MAX_UNREADABLE 4

struct frames_opts {
	enum question question;
	const char *proc_root;	       /* default /proc */
	struct symbolizer *sym;	       /* borrowed; required */
	struct owner_resolver *owners; /* borrowed; required */
	struct pyframes *py;	       /* borrowed; NULL: CPython frames are not merged */
	struct jvmframes *jvm;	       /* borrowed; NULL: Java frames are not named */
	struct nodeframes *node;       /* borrowed; NULL: V8's JavaScript stacks are not merged */
	struct symstore *symbols;      /* borrowed; NULL: no uploaded debug symbols name frames */
};

struct frames_unreadable {
	uint32_t pid;
	int err; /* -errno of symbolizer__add_process() */
};

struct frames;
struct symstore;

/* Returns 0 with @out (free with frames__free), or -ENOMEM. */
int frames__new(const struct frames_opts *opts, struct frames **out);
void frames__free(struct frames *f);

/* The next interval of a long-running sampler (continuous profiling): the counts, the threads
 * and the processes that could not be read start again; the names of the processes that exited
 * are dropped. The profile must be set again. */
void frames__next(struct frames *f);

/* The profile frames_on_sample() adds to (borrowed; set before the drain). */
void frames__set_profile(struct frames *f, struct profile *prof);

/* The V8 CPU profiles merged from now on (borrowed; set before the drain). */
void frames__set_node(struct frames *f, struct nodeframes *node);

/* source_task_fn_t (@ctx: struct frames): a new process seen; names, owner and maps. Returns 0. */
int frames_on_new_task(void *ctx, uint32_t tgid, uint64_t cgroup_id);
/* source_emit_fn_t (@ctx: struct frames): one sample into the profile. Returns 0 or -ENOMEM. */
int frames_on_sample(void *ctx, const struct source_sample *s);
/* source_ksym_fn_t (@ctx: struct frames): the name of a kernel address, or NULL. */
const char *frames_ksym(void *ctx, uint64_t ip);

/* Reads and keeps the name of @tgid (bounded); read again when @tgid is known (it was announced
 * again after an exec). */
void frames__remember_name(struct frames *f, uint32_t tgid);
/* The remembered name of @tgid (borrowed until frames__free), else @fallback. */
const char *frames__process_name(struct frames *f, uint32_t tgid, const char *fallback);

/* On-CPU samples of the target, and samples of processes gone before their owner was read. */
uint64_t frames__samples(const struct frames *f);
uint64_t frames__unattributed(const struct frames *f);
/* The processes that could not be read (borrowed). */
size_t frames__unreadable(const struct frames *f, const struct frames_unreadable **out);

/*
 * threads: the per-thread table of the result from the emitted @e[0..@n), in their order
 * (entries without snapshots are left out), into @out (room for @n). Returns the count.
 */
size_t frames__collect_threads(struct frames *f, const struct thread_entry *e, size_t n,
			       struct capture_thread *out);

#endif
