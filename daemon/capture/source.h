/* SPDX-License-Identifier: Apache-2.0 */
/*
 * source: the collectors behind each question, behind one interface, so that a capture runs
 * the same way whatever it asks (docs/design/collectors.md):
 *
 *   cpu            sampler (on-CPU samples)
 *   wall           sampler with off-CPU intervals from sched_switch
 *   locks          locks (futex waits that slept)
 *   memory-growth  memgrow (first-touch faults, mapping growth)
 *
 * Each collector's aggregated counts come out as source samples: stacks, a synthetic leaf
 * saying why (a wait reason, a lock kind), and the two profile values of the question.
 */
#ifndef SLIDEOPS_SOURCE_H
#define SLIDEOPS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"

struct profile_opts;
struct py_proc;
struct pyframes;
struct sampler;
struct sampler_py_frame;

enum source_leaf {
	SOURCE_LEAF_NONE = 0, /* the stack as sampled */
	SOURCE_LEAF_TEXT,     /* add leaf_text as a synthetic leaf frame */
	SOURCE_LEAF_WAIT,     /* off-CPU: the caller names the wait from the kernel stack */
	SOURCE_LEAF_RUNNABLE, /* off-CPU while runnable */
};

struct source_sample {
	uint32_t tgid, tid;
	uint64_t cgroup_id;
	const char *comm;	/* thread name */
	const uint64_t *ustack; /* leaf first */
	size_t nustack;
	int ustack_err;
	const uint64_t *kstack; /* leaf first */
	size_t nkstack;
	bool kernel_frames; /* show the kernel stack as frames */
	enum source_leaf leaf;
	const char *leaf_text;
	int64_t values[2]; /* in the question's sample types (source_profile_types) */
	uint64_t oncpu;	   /* on-CPU samples this adds (cpu, wall) */
	/* CPython frames of an on-CPU sample of a registered process (daemon/collectors/sampler.h),
	 * leaf first; 0: none */
	const struct sampler_py_frame *pyframes;
	size_t npyframes;
	uint32_t py_flags;
	/* cpu, wall: an on-CPU sample of the main thread of a process added with
	 * source__add_timed(), taken at this CLOCK_MONOTONIC time (oncpu 1); else 0 */
	uint64_t time_ns;
};

typedef int (*source_emit_fn_t)(void *ctx, const struct source_sample *s);
/* Names a kernel address (for wait reasons); returns NULL when unknown. */
typedef const char *(*source_ksym_fn_t)(void *ctx, uint64_t ip);

/* Processes first seen during a poll, looked at for CPython after it (daemon/capture/
 * py_pending.h), at most as many as a collector remembers (SAMPLER_DEFAULT_SEEN_ENTRIES; more:
 * pyframes__missed()). A CPython still starting is looked at again after the next polls, up to
 * SOURCE_PY_TRIES times (a poll waits up to 200 ms). */
#define SOURCE_PY_PENDING 16384
#define SOURCE_PY_TRIES 10

/* Snapshot interval of the `threads` question. */
#define SOURCE_THREADS_INTERVAL_MS 100
typedef int (*source_task_fn_t)(void *ctx, uint32_t tgid, uint64_t cgroup_id);

struct source_opts {
	enum question question;
	unsigned int freq_hz;	      /* on-CPU sampling rate; default 99 */
	bool filter_tgids;	      /* only the tgids added with source__add_tgid() */
	source_task_fn_t on_new_task; /* first sightings; may be NULL */
	void *ctx;
	source_ksym_fn_t ksym; /* names kernel addresses (threads); may be NULL */
	void *ksym_ctx;
	/* CPythons whose frames are walked from the start (cpu, wall, locks, memory-growth;
	 * daemon/capture/pyframes.h) */
	const uint32_t *py_tgids;
	const struct py_proc *py_procs;
	size_t npy;
	/* borrowed, may be NULL: processes first seen while collecting are looked at (after each
	 * source__poll(), never in the ring buffer's callback) and the CPythons among them walked
	 * from then on */
	struct pyframes *py;
	/* borrowed, may be NULL: the same for HotSpot JVMs (daemon/capture/jvmframes.h) */
	struct jvmframes *jvm;
	/* may be NULL: the slot of a sampler kept loaded between captures (the agent's, issue
	 * 18). cpu, wall and threads load one into it (sampler_opts.preload) when it is empty or
	 * lacks the off-CPU programs they need, and begin on it instead of loading their own;
	 * source__free() stops it and leaves it there: its owner frees it (sampler__free()) */
	struct sampler **keep_sampler;
};

struct source_stats {
	uint64_t samples; /* every on-CPU sample, idle included (cpu, wall) */
	uint64_t idle;
	uint64_t filtered;     /* on-CPU samples of processes outside the target */
	uint64_t events;       /* waits (locks), faults (memory-growth) of the target */
	uint64_t lost;	       /* samples, intervals or events lost to full maps */
	char lost_detail[160]; /* "12 counts, 3 stacks" */
	/* User stacks (the DWARF unwinder, docs/unwinding.md): walked, and not completed. */
	uint64_t stacks;
	uint64_t stacks_incomplete;
	double stacks_incomplete_pct;
	char stacks_detail[400];     /* "" or "2.0% of the user stacks could not be completed:
					 * 1.5% before ..., 0.5% ..." */
	uint64_t unwind_table_bytes; /* memory the unwind tables take in the kernel */
};

struct source;

/* Opens, loads and attaches the collectors of @opts->question. Returns 0, -EOPNOTSUPP for a
 * question without a collector, or the collector's -errno (logged). A sampler that cannot walk
 * the CPython processes is started without them (source__python_err() says why). */
int source__new(const struct source_opts *opts, struct source **out);
void source__free(struct source *s);
int source__add_tgid(struct source *s, uint32_t tgid);
/* Walks the CPython frames of @tgid from now on (a process that joined the target). Returns 0,
 * -EOPNOTSUPP (the CPython walk did not start) or the collector's -errno
 * (collector__add_python()). */
int source__add_python(struct source *s, uint32_t tgid, const struct py_proc *proc);

/* cpu, wall: keeps the on-CPU samples of @tgid's main thread one by one with their time
 * (source_sample.time_ns). Returns 0, -EOPNOTSUPP for another question, -E2BIG past
 * SAMPLER_TIMED_ENTRIES processes, or -errno. */
int source__add_timed(struct source *s, uint32_t tgid);

struct uw_jvm;
/* Walks @tgid's Java frames from now on, in the collector that runs (collector__add_jvm()).
 * Returns 0 or -errno. */
int source__add_jvm(struct source *s, uint32_t tgid, const struct uw_jvm *jvm);
/* 0, or why the sampler walks no CPython frames although some were asked for (-errno). */
int source__python_err(const struct source *s);
/* Delivers first sightings for up to @timeout_ms, then registers the CPythons among them
 * (source_opts.py). Returns the number or -errno. */
int source__poll(struct source *s, int timeout_ms);
/* Stops collecting; idempotent. */
int source__stop(struct source *s);
/*
 * cpu and wall, kept loaded (continuous profiling): after source__stop() and source__drain(),
 * deletes the counts and stacks and starts collecting again. Returns 0, -EOPNOTSUPP for
 * another question, or -errno.
 */
int source__restart(struct source *s);
/* Forgets the processes that exited (the collector's maps; sampler__sweep()). Returns how
 * many. */
int source__sweep(struct source *s);
/* Emits every aggregated count. Returns 0 or the first negative value @fn returns. */
int source__drain(struct source *s, source_emit_fn_t fn, void *ctx);
int source__stats(struct source *s, struct source_stats *out);

struct thread_entry;

/* The threads seen by a `threads` capture (after source__drain), sorted by tgid and tid;
 * borrowed until source__free. NULL with *n = 0 for other questions. */
const struct thread_entry *source__threads(struct source *s, size_t *n);

/*
 * Why a thread slept, from its kernel stack (leaf first): the syscall it is in ("read",
 * "futex", "epoll_wait"), "page fault", or "kernel" when nothing says. Writes to @buf.
 */
void source_wait_reason(source_ksym_fn_t ksym, void *ctx, const uint64_t *kstack, size_t n,
			char *buf, size_t size);

/* Fills the sample types and period of @q's profile: cpu {samples, cpu ns}, wall {wall ns,
 * samples}, locks {wait ns, waits}, memory-growth {first-touched bytes, mapped bytes}. Also
 * returns the flame graph unit ("samples", "ns", "bytes"). */
const char *source_profile_types(enum question q, int64_t period_ns, struct profile_opts *po);

#endif
