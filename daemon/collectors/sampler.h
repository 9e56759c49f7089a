/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampler: the on-CPU eBPF sampler (bpf/sampler.bpf.c): cpu-clock perf events at a fixed
 * frequency on every online CPU, stacks counted in the kernel, read once at the end.
 *
 * Lifecycle: sampler__new() opens, sizes, loads and attaches; sampler__poll() delivers first
 * sightings of processes while sampling runs; sampler__stop() detaches (the counts stay);
 * sampler__drain() walks the counts with their stacks; for continuous profiling,
 * sampler__clear() and sampler__start() begin the next interval without loading again. Not
 * thread-safe.
 */
#ifndef SLIDEOPS_SAMPLER_H
#define SLIDEOPS_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/collectors/collector.h" /* struct sampler_py_frame */

/* Called from sampler__poll() for each process seen for the first time. Return 0 or -errno
 * (an error stops that poll and is returned by it). */
typedef int (*sampler_task_fn_t)(void *ctx, uint32_t tgid, uint64_t cgroup_id);

struct sampler_opts {
	unsigned int freq_hz;  /* default 99 */
	bool filter_tgids;     /* sample only the tgids given here or added later */
	const uint32_t *tgids; /* initial filter set */
	size_t ntgids;
	const uint64_t *cgroup_ids; /* sample only these cgroup v2 ids; NULL/0: all */
	size_t ncgroup_ids;
	uint32_t stack_entries;	       /* stack map size; default SAMPLER_DEFAULT_STACK_ENTRIES */
	uint32_t count_entries;	       /* count map size; default SAMPLER_DEFAULT_COUNT_ENTRIES */
	bool offcpu;		       /* also record off-CPU intervals (sched_switch) */
	bool fp_user_stacks;	       /* user stacks by frame pointer, not the DWARF unwinder
					 * (kernels without bpf_loop, comparisons) */
	sampler_task_fn_t on_new_task; /* may be NULL */
	void *ctx;
	/* CPython processes whose frames are walked from the first sample (sampler__add_python()
	 * before the perf events are attached) */
	const uint32_t *py_tgids;
	const struct py_proc *py_procs; /* bpf/python.h, one per py_tgids entry */
	size_t npy;
	/* load only: nothing is attached before sampler__begin() (the agent keeps one loaded
	 * between captures, issue 18); with offcpu, its off-CPU programs are loaded too and
	 * attached only for the captures that ask */
	bool preload;
};

struct sampler_sample {
	uint32_t tgid, tid;
	uint64_t cgroup_id;
	const char *comm; /* thread name (the process name is read from /proc) */
	uint64_t count;
	const uint64_t *ustack; /* leaf first; borrowed for the callback's duration */
	size_t nustack;
	const uint64_t *kstack;
	size_t nkstack;
	int ustack_err;	    /* 0, or why the user stack is missing (-EFAULT: none) */
	int offcpu;	    /* 0: on-CPU samples; SAMPLER_OFF_RUNNABLE or _BLOCKED */
	uint64_t offcpu_ns; /* off-CPU: time; count is the number of intervals */
	uint64_t time_ns;   /* on-CPU sample of a timed main thread (sampler__add_timed()): its
			     * CLOCK_MONOTONIC time, count 1; else 0 */
	const struct sampler_py_frame *pyframes; /* leaf first; borrowed like ustack */
	size_t npyframes;  /* 0: not in Python (or not a registered process) */
	uint32_t py_flags; /* PY_STACK_TRUNCATED, PY_STACK_READ_ERR (bpf/python.h) */
};

typedef int (*sampler_sample_fn_t)(void *ctx, const struct sampler_sample *s);

struct sampler_stats {
	uint64_t samples; /* every sample, idle included */
	uint64_t idle;
	uint64_t lost_counts; /* samples lost: count map full */
	uint64_t lost_stacks; /* stacks lost: stack map full */
	uint64_t filtered;    /* samples of processes outside the target */
	uint64_t lost_offcpu; /* off-CPU intervals lost: map full */
	uint64_t lost_python; /* Python stacks not stored (python_stacks full): native frames */
	bool offcpu_btf;      /* off-CPU from tp_btf (else the raw_tp fallback) */
	int ncpus;
};

struct sampler;
struct unwinder_stats;
struct py_proc;

/*
 * Opens, configures, loads and attaches. Returns 0, -EPERM without the capabilities, -ENOENT
 * without BTF, or another -errno from libbpf/perf_event_open (logged with context).
 */
int sampler__new(const struct sampler_opts *opts, struct sampler **out);
/* Detaches and frees; accepts NULL. */
void sampler__free(struct sampler *s);

/* Waits up to @timeout_ms for first sightings and delivers them. Returns the number delivered
 * or -errno. */
int sampler__poll(struct sampler *s, int timeout_ms);

/* Adds @tgid to the filter set while sampling runs (filter_tgids). Returns 0 or -errno
 * (-E2BIG: the set is full). */
int sampler__add_tgid(struct sampler *s, uint32_t tgid);

/*
 * Walks the CPython frames of @tgid's samples and switch-outs from now on, as @proc
 * (bpf/python.h, filled by runtimes/python/py_process.h py_process_bpf()) says. The first call reads the offset of
 * task_struct.thread.fsbase from the kernel's BTF. Returns 0, -ENOTSUP (frame-pointer mode:
 * no bpf_loop; no fsbase in this kernel's BTF), -E2BIG (python_procs is full) or -errno.
 */
int sampler__add_python(struct sampler *s, uint32_t tgid, const struct py_proc *proc);

struct uw_jvm;
/* Walks @tgid's Java frames from now on (collector__add_jvm()). Returns 0 or -errno. */
int sampler__add_jvm(struct sampler *s, uint32_t tgid, const struct uw_jvm *jvm);
/* Keeps the on-CPU samples of @tgid's main thread one by one with their time from now on
 * (sampler_sample.time_ns), for a runtime whose own samples are matched with ours by time. At
 * most SAMPLER_TIMED_ENTRIES processes: -E2BIG. Returns 0 or -errno. */
int sampler__add_timed(struct sampler *s, uint32_t tgid);

/* Stops sampling (detaches the perf events) and delivers pending first sightings. Idempotent. */
int sampler__stop(struct sampler *s);

/*
 * Continuous profiling: the sampler stays loaded and samples in intervals. sampler__start()
 * attaches the perf events again after sampler__stop() (0 when they are attached, or -errno);
 * sampler__clear(), between a drain and the next start, deletes the counts and the stacks and
 * zeroes the statistics (-EBUSY while attached); sampler__sweep() forgets the processes that
 * exited (unwind tables, Python and Java walks) and returns how many.
 */
int sampler__start(struct sampler *s);

/*
 * Begins a capture on a sampler loaded with opts.preload, or stopped after its last capture:
 * the last capture's counts, stacks, statistics, first sightings, filter set, timed and walked
 * processes are forgotten (the unwind tables of living processes are kept); @opts's filter,
 * tgids, rate, off-CPU choice, first-sighting callback and CPythons are taken (its map sizes
 * and stack mode are the loaded ones'); then it attaches. Returns 0, -EBUSY (attached),
 * -EOPNOTSUPP (off-CPU asked of a sampler loaded without it), or -errno.
 */
int sampler__begin(struct sampler *s, const struct sampler_opts *opts);
/* Whether the off-CPU programs are loaded (sampler_opts.offcpu at sampler__new()). */
bool sampler__offcpu_loaded(const struct sampler *s);
int sampler__clear(struct sampler *s);
int sampler__sweep(struct sampler *s);

/* Calls @fn for every counted (tgid, tid, cgroup, stacks), on-CPU then off-CPU, with their
 * Python frames, then clears the stored Python stacks (the drain is the last read of the
 * counts: a second drain gives the same counts without Python frames). Returns 0, or the first
 * negative value @fn returns. */
int sampler__drain(struct sampler *s, sampler_sample_fn_t fn, void *ctx);

/* Sums the per-CPU statistics. Returns 0 or -errno. */
int sampler__stats(struct sampler *s, struct sampler_stats *out);

/* The user-stack unwinder's statistics (symbols/unwinder.h). Returns 0 or -errno. */
int sampler__unwind_stats(struct sampler *s, struct unwinder_stats *out);

#endif
