/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memgrow: the memory-growth collector (bpf/memgrow.bpf.c). Counts, by stack, in the kernel:
 *  - first-touch page faults on user memory, weighted by the base page size (MEMGROW_FAULT):
 *    resident memory that appeared, charged where it was touched;
 *  - write faults on present pages (MEMGROW_COW), informational;
 *  - anonymous mappings made or grown by mmap/mremap/brk (MEMGROW_MAP, positive bytes) and
 *    given back by munmap/mremap/brk (MEMGROW_UNMAP, negative bytes). A munmap of a mapping made
 *    during the capture is charged to the stack that made it, so MAP + UNMAP of one stack is that
 *    site's net mapping growth.
 * FAULT and MAP measure different things and must not be added (docs/memory-growth.md).
 *
 * Lifecycle as the on-CPU sampler (daemon/collectors/sampler.h): memgrow__new() opens, sizes, loads and
 * attaches; memgrow__poll() delivers first sightings; memgrow__stop() detaches (the counts
 * stay); memgrow__drain() walks the counts with their stacks. Not thread-safe.
 */
#ifndef SLIDEOPS_MEMGROW_H
#define SLIDEOPS_MEMGROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called from memgrow__poll() for each process seen for the first time. Return 0 or -errno
 * (an error stops that poll and is returned by it). */
typedef int (*memgrow_task_fn_t)(void *ctx, uint32_t tgid, uint64_t cgroup_id);

struct memgrow_opts {
	bool filter_tgids;     /* count only the tgids given here or added later */
	const uint32_t *tgids; /* initial filter set */
	size_t ntgids;
	bool kernel_stacks;	  /* kernel stacks of faults taken in kernel mode */
	uint32_t stack_entries;	  /* stack map size; default MG_DEFAULT_STACK_ENTRIES */
	uint32_t count_entries;	  /* count map size; default MG_DEFAULT_COUNT_ENTRIES */
	uint32_t mapping_entries; /* mappings netted against munmap; MG_DEFAULT_MAPPING_ENTRIES */
	memgrow_task_fn_t on_new_task; /* may be NULL */
	void *ctx;
};

enum memgrow_kind {
	MEMGROW_FAULT = 0, /* first touch (not-present fault): +page size each */
	MEMGROW_COW = 1,   /* write fault on a present page: +page size each */
	MEMGROW_MAP = 2,   /* anonymous mapping made/grown, brk growth: +bytes */
	MEMGROW_UNMAP = 3, /* mapping released/shrunk, brk trim: -bytes */
};

struct memgrow_sample {
	uint32_t tgid, tid;
	uint64_t cgroup_id;
	const char *comm; /* thread name at the first event */
	enum memgrow_kind kind;
	int64_t bytes;		/* negative for MEMGROW_UNMAP */
	uint64_t count;		/* faults, mappings or releases */
	const uint64_t *ustack; /* leaf first; borrowed for the callback's duration */
	size_t nustack;
	const uint64_t *kstack; /* kernel-mode faults with kernel_stacks only */
	size_t nkstack;
	int ustack_err;				 /* 0, or why the user stack is missing */
	const struct sampler_py_frame *pyframes; /* its CPython frames, leaf first; borrowed
							 * like ustack (daemon/collectors/collector.h) */
	size_t npyframes;  /* 0: not in Python (or not a registered process) */
	uint32_t py_flags; /* PY_STACK_* (bpf/python.h) */
};

typedef int (*memgrow_sample_fn_t)(void *ctx, const struct memgrow_sample *s);

struct memgrow_stats {
	uint64_t faults;	 /* user-address faults of target processes */
	uint64_t faults_kernel;	 /* ... of which taken in kernel mode (copy to user) */
	uint64_t faults_ignored; /* instruction fetches, reads of present pages, NULL page */
	uint64_t filtered;	 /* events of processes outside the target */
	uint64_t lost_counts;	 /* events lost: count map full */
	uint64_t lost_stacks;	 /* stacks lost: stack map full */
	uint64_t lost_threads;	 /* syscalls lost: per-thread state map full */
	uint64_t lost_mappings;	 /* mappings whose munmap can't be netted: map full */
	uint64_t brk_unknown;	 /* brk moves not counted: old break unknown */
	uint64_t unmap_unknown;	 /* munmap/mremap of ranges not mapped during the capture */
	uint64_t lost_python;	 /* Python stacks not stored: python_stacks full */
	uint64_t page_size;	 /* the weight of one fault */
	/* Conditions under which one fault is not one page (docs/memory-growth.md): */
	bool thp_always;     /* THP or mTHP "always": one anonymous fault may map more */
	bool numa_balancing; /* NUMA hinting faults look like first touches */
};

struct memgrow;
struct unwinder_stats;
struct py_proc;
struct sampler_py_frame;

/*
 * Opens, configures, loads and attaches (mounting tracefs at /sys/kernel/tracing when neither it
 * nor debugfs is mounted: libbpf finds tracepoint ids there). Returns 0, -EPERM without the
 * capabilities, -ENOENT when a tracepoint is missing, or another -errno from libbpf (logged
 * with context).
 */
int memgrow__new(const struct memgrow_opts *opts, struct memgrow **out);
/* Detaches and frees; accepts NULL. */
void memgrow__free(struct memgrow *m);

/* Waits up to @timeout_ms for first sightings and delivers them. Returns the number delivered
 * or -errno. */
int memgrow__poll(struct memgrow *m, int timeout_ms);

/*
 * Adds @tgid to the filter set while counting runs, and seeds its program break from
 * /proc/@tgid so its next brk() growth is counted. Returns 0 or -errno (-E2BIG: the set is
 * full); a process that exited meanwhile is not an error.
 */
int memgrow__add_tgid(struct memgrow *m, uint32_t tgid);

/* Walks @tgid's CPython frames from now on (collector__add_python()). Returns 0, -ENOTSUP,
 * -E2BIG (python_procs is full) or -errno. */
int memgrow__add_python(struct memgrow *m, uint32_t tgid, const struct py_proc *proc);

struct uw_jvm;
/* Walks @tgid's Java frames from now on (collector__add_jvm()). Returns 0 or -errno. */
int memgrow__add_jvm(struct memgrow *m, uint32_t tgid, const struct uw_jvm *jvm);

/* Stops counting (detaches) and delivers pending first sightings. Idempotent. */
int memgrow__stop(struct memgrow *m);

/* Calls @fn for every counted (tgid, tid, cgroup, stacks, kind), with its Python frames, then
 * clears the stored Python stacks (the last read of the counts). Returns 0, or the first
 * negative value @fn returns. */
int memgrow__drain(struct memgrow *m, memgrow_sample_fn_t fn, void *ctx);

/* Sums the per-CPU statistics. Returns 0 or -errno. */
int memgrow__stats(struct memgrow *m, struct memgrow_stats *out);

/* The user-stack unwinder's statistics (symbols/unwinder.h). Returns 0 or -errno. */
int memgrow__unwind_stats(struct memgrow *m, struct unwinder_stats *out);

#endif
