/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locks: what is waiting on locks (bpf/locks.bpf.c). Time asleep in futex(2) waits
 * (FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_LOCK_PI/PI2, FUTEX_WAIT_REQUEUE_PI) and futex_waitv(2),
 * with the number of waits, counted in the kernel per thread, user stack and kind of wait.
 * Waits that return -EAGAIN at once (the thread never slept) are not counted. Waits already in
 * progress at start, or still in progress at stop, are not seen.
 *
 * Lifecycle as the sampler's: locks__new() opens, sizes, loads and attaches (the syscall
 * tracepoints; tracefs is mounted at /sys/kernel/tracing when it is missing); locks__poll()
 * delivers first sightings of processes; locks__stop() detaches (the counts stay);
 * locks__drain() walks the counts with their stacks. Not thread-safe.
 */
#ifndef SLIDEOPS_LOCKS_H
#define SLIDEOPS_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kinds of wait, as in bpf/locks.h (LOCKS_KIND_*). */
enum locks_kind {
	LOCKS_WAIT = 0,		   /* FUTEX_WAIT: glibc mutexes (lll_lock_wait) and more */
	LOCKS_WAIT_BITSET = 1,	   /* FUTEX_WAIT_BITSET: condvars, rwlocks, semaphores */
	LOCKS_LOCK_PI = 2,	   /* FUTEX_LOCK_PI, FUTEX_LOCK_PI2 */
	LOCKS_WAIT_REQUEUE_PI = 3, /* FUTEX_WAIT_REQUEUE_PI */
	LOCKS_WAITV = 4,	   /* futex_waitv(2) */
};

/* Called from locks__poll() for each process seen for the first time. Return 0 or -errno (an
 * error stops that poll and is returned by it). */
typedef int (*locks_task_fn_t)(void *ctx, uint32_t tgid, uint64_t cgroup_id);

struct locks_opts {
	bool filter_tgids;     /* count only the tgids given here or added later */
	const uint32_t *tgids; /* initial filter set */
	size_t ntgids;
	uint32_t stack_entries;	     /* stack map size; default LOCKS_DEFAULT_STACK_ENTRIES */
	uint32_t count_entries;	     /* count map size; default LOCKS_DEFAULT_COUNT_ENTRIES */
	locks_task_fn_t on_new_task; /* may be NULL */
	void *ctx;
};

struct locks_sample {
	uint32_t tgid, tid;
	uint64_t cgroup_id;
	const char *comm;	/* thread name (the process name is read from /proc) */
	uint32_t kind;		/* enum locks_kind */
	uint64_t wait_ns;	/* total time asleep */
	uint64_t count;		/* number of waits */
	const uint64_t *ustack; /* where the wait was made, leaf first; borrowed for the
					 * callback's duration */
	size_t nustack;
	int ustack_err; /* 0, or why the user stack is missing (-EFAULT: none,
					 * -EEXIST/-ENOMEM: stack map full) */
	const struct sampler_py_frame *pyframes; /* its CPython frames, leaf first; borrowed
							 * like ustack (daemon/collectors/collector.h) */
	size_t npyframes;  /* 0: not in Python (or not a registered process) */
	uint32_t py_flags; /* PY_STACK_* (bpf/python.h) */
};

typedef int (*locks_sample_fn_t)(void *ctx, const struct locks_sample *s);

struct locks_stats {
	uint64_t waits;	      /* waits counted */
	uint64_t no_sleep;    /* waits that returned -EAGAIN at once, not counted */
	uint64_t filtered;    /* waits of processes outside the target */
	uint64_t lost_counts; /* waits lost: count map full */
	uint64_t lost_stacks; /* stacks lost: stack map full (the wait is kept) */
	uint64_t lost_starts; /* waits lost: no per-thread storage */
	uint64_t lost_python; /* Python stacks not stored: python_stacks full */
};

struct locks;
struct unwinder_stats;
struct py_proc;
struct sampler_py_frame;

/*
 * Opens, configures, loads and attaches. Returns 0, -EPERM without the capabilities, -ENOENT
 * when tracefs or the futex tracepoints are missing, or another -errno from libbpf (logged
 * with context).
 */
int locks__new(const struct locks_opts *opts, struct locks **out);
/* Detaches and frees; accepts NULL and half-built objects. */
void locks__free(struct locks *l);

/* Waits up to @timeout_ms for first sightings and delivers them. Returns the number delivered
 * or -errno. */
int locks__poll(struct locks *l, int timeout_ms);

/* Adds @tgid to the filter set while counting runs (filter_tgids). Returns 0 or -errno
 * (-E2BIG: the set is full). */
int locks__add_tgid(struct locks *l, uint32_t tgid);

/* Walks @tgid's CPython frames from now on (collector__add_python()). Returns 0, -ENOTSUP,
 * -E2BIG (python_procs is full) or -errno. */
int locks__add_python(struct locks *l, uint32_t tgid, const struct py_proc *proc);

struct uw_jvm;
/* Walks @tgid's Java frames from now on (collector__add_jvm()). Returns 0 or -errno. */
int locks__add_jvm(struct locks *l, uint32_t tgid, const struct uw_jvm *jvm);

/* Stops counting (detaches the tracepoints) and delivers pending first sightings. Idempotent. */
int locks__stop(struct locks *l);

/* Calls @fn for every counted (tgid, tid, cgroup, user stack, kind), with its Python frames,
 * then clears the stored Python stacks (the last read of the counts). Returns 0, or the first
 * negative value @fn returns. */
int locks__drain(struct locks *l, locks_sample_fn_t fn, void *ctx);

/* Sums the per-CPU statistics. Returns 0 or -errno. */
int locks__stats(struct locks *l, struct locks_stats *out);

/* The user-stack unwinder's statistics (symbols/unwinder.h). Returns 0 or -errno. */
int locks__unwind_stats(struct locks *l, struct unwinder_stats *out);

/* The name of a kind of wait ("futex_wait", ...), or "unknown". Static string. */
const char *locks_kind_name(uint32_t kind);

#endif
