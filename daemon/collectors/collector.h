/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_util: what every BPF owner in daemon/ needs: libbpf's messages routed to our log (STYLE 4),
 * tracefs mounted for tracepoint programs, the tgid filter set and per-CPU counters of
 * bpf/collector.bpf.h, and `struct collector`, the user-space half the counting collectors
 * (sampler, locks, memgrow) share.
 */
#ifndef SLIDEOPS_BPF_UTIL_H
#define SLIDEOPS_BPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

struct bpf_map;
struct bpf_object;
struct unwinder;

/* Routes libbpf's messages: WARN -> warn, INFO and DEBUG -> debug. Idempotent. */
void bpf_util_route_libbpf_log(void);

/*
 * libbpf finds a tracepoint's id under tracefs (or debugfs), which some machines do not mount at
 * boot. Mounts tracefs if neither is there. Returns 0 or -errno (logged).
 */
int bpf_util_ensure_tracefs(void);

/* True when tracepoint @group/@name exists (e.g. "syscalls", "sys_enter_futex_waitv"). */
bool bpf_util_have_tracepoint(const char *group, const char *name);

/* Adds @tgid to the filter set @target_tgids (bpf/collector.bpf.h) of a loaded object. Returns
 * 0 or -errno (-E2BIG: the set is full); logs nothing. */
int bpf_util_add_tgid(const struct bpf_map *target_tgids, uint32_t tgid);

/* Sums entries 0 .. @n - 1 of the per-CPU __u64 array @map (a `stats` map) over the possible
 * CPUs into @sums; an entry that cannot be read sums to 0. Returns 0 or -errno. */
int bpf_util_sum_percpu(const struct bpf_map *map, uint64_t *sums, uint32_t n);

/* Deletes every entry of the hash-like map @map (a count map, a stack map). Returns the number
 * deleted. */
size_t bpf_util_clear_map(const struct bpf_map *map);

/* Sets entries 0 .. @n - 1 of the per-CPU __u64 array @map to 0 on every CPU. Returns 0 or
 * -errno. */
int bpf_util_zero_percpu(const struct bpf_map *map, uint32_t n);

/* Reads stack @id of the BPF_MAP_TYPE_STACK_TRACE map @stacks into @ips, which holds the map's
 * @max frames, and sets *@n to the frames before the first 0. Returns 0, @id itself when it is
 * negative (why bpf_get_stackid() had no stack; *@n is 0), or -errno. */
int bpf_util_read_stack(const struct bpf_map *stacks, int32_t id, uint64_t *ips, size_t max,
			size_t *n);

/* A counting collector's `events` record (announce() in bpf/collector.bpf.h): the layout of
 * sampler_new_task, locks_new_task and mg_new_task (bpf/<c>.h), which their owners assert. */
struct collector_new_task {
	uint32_t tgid;
	uint32_t pad;
	uint64_t cgroup_id;
};

/* For the owners' _Static_assert: @type (struct <c>_new_task) has the layout above. */
#define COLLECTOR_NEW_TASK_LAYOUT(type)                                                    \
	(sizeof(type) == sizeof(struct collector_new_task) && offsetof(type, tgid) == 0 && \
	 offsetof(type, cgroup_id) == offsetof(struct collector_new_task, cgroup_id))

/* Called for each process a collector sees for the first time. Return 0 or -errno (an error
 * stops that poll and is returned by it). */
typedef int (*collector_task_fn_t)(void *ctx, uint32_t tgid, uint64_t cgroup_id);

struct collector_opts {
	const uint32_t *tgids; /* initial filter set */
	size_t ntgids;
	bool fp_user_stacks;		 /* user stacks by frame pointer: load no unwind tables */
	collector_task_fn_t on_new_task; /* may be NULL */
	void *ctx;
};

struct collector;
struct py_proc;

/* One CPython frame of an event (bpf/python.h), as the sampler, locks and memgrow hand it
 * over; named in user space (runtimes/python/py_code.h). The sampler's name for it is kept: it
 * was the first. */
struct sampler_py_frame {
	uint64_t code;	/* PyCodeObject address */
	uint64_t instr; /* f_lasti (3.6-3.10) or the instruction pointer (3.11+) */
	bool entry;	/* the first frame of its run of the eval loop (py_merge.h) */
};

/* The Python walk's runtime knobs of a loaded object (bpf/python.bpf.h's .bss globals
 * py_enabled and py_fsbase_off), which only its skeleton can reach. */
struct collector_python_knobs {
	__u32 *enabled;
	__u64 *fsbase_off;
};

/*
 * The user-space half of a counting collector whose BPF object @obj (loaded, not yet attached)
 * has the maps of bpf/collector.bpf.h and bpf/unwind.bpf.h: sets up the user-stack unwinder on
 * them, adds the initial tgids (collector__add_tgid()), opens the first-sight ring buffer and
 * attaches collector_exec (a process that execs is announced again).
 * @obj stays the caller's and must outlive the collector. Returns 0 or -errno (logged).
 */
int collector__new(struct bpf_object *obj, const struct collector_opts *opts,
		   struct collector **out);
/* Accepts NULL. Leaves the BPF maps as they are. */
void collector__free(struct collector *c);

/* Loads @tgid's unwind tables, then adds it to the filter set, so its stacks are unwound with
 * its tables from its first event on. Returns 0 or -errno (-E2BIG: the set is full); a process
 * whose tables cannot be loaded is added all the same (its stacks walk by frame pointer). */
int collector__add_tgid(struct collector *c, uint32_t tgid);

/* Waits up to @timeout_ms for first sightings: loads each process's unwind tables and calls
 * on_new_task. Returns the number delivered or -errno. */
int collector__poll(struct collector *c, int timeout_ms);

/* Delivers the first sightings still in the ring buffer, without waiting (after detaching).
 * Returns 0 or -errno. */
int collector__consume(struct collector *c);

/* Sums the first @n per-CPU counters of the `stats` map into @sums. Returns 0 or -errno. */
int collector__stats(struct collector *c, uint64_t *sums, uint32_t n);

/*
 * Starts a new interval of a collector that stays loaded (continuous profiling): deletes the
 * stored user and Python stacks and sets the first @nstats counters of `stats`, the unwinder's
 * and the Python walk's to 0. Call it after the drain, detached (an event between the drain and
 * this would lose its stack). Returns 0 or -errno.
 */
int collector__clear(struct collector *c, uint32_t nstats);

/*
 * Begins a new capture of a collector kept loaded (the agent's sampler): @opts's first-sighting
 * callback and initial tgids; the filter set, the first sightings (every process is announced
 * again), the Python and Java walks' processes (registered again by the capture) and what
 * collector__clear() clears are forgotten; the unwind tables of living processes are kept.
 * Call it detached. Returns 0 or -errno.
 */
int collector__reset(struct collector *c, const struct collector_opts *opts, uint32_t nstats);

/*
 * Forgets the processes that exited: their unwind tables' lists, and their entries in the
 * Python and Java walks' maps. Returns the number of processes dropped.
 */
int collector__sweep(struct collector *c);

/*
 * Python (issue 13), for an object that includes bpf/python.bpf.h: its maps go by their names
 * (python_procs, python_stacks, py_stats), @knobs are its skeleton's .bss globals (copied; the
 * skeleton must outlive the collector). Returns 0 or -ENOENT (the object has no walk).
 */
int collector__python(struct collector *c, const struct collector_python_knobs *knobs);

/*
 * Walks @tgid's CPython frames from its next event on, as @proc says (runtimes/python/
 * py_process.h py_process_bpf()). The first call reads offsetof(task_struct, thread.fsbase)
 * from the kernel's BTF. Returns 0, -ENOTSUP (no walk in the object; no fsbase in this
 * kernel's BTF), -E2BIG (python_procs is full) or -errno.
 */
int collector__add_python(struct collector *c, uint32_t tgid, const struct py_proc *proc);

/*
 * Reads Python stack @id (the py_stack of a key) into @frames (room for PY_MAX_FRAMES), leaf
 * first, and its PY_STACK_* flags into *@flags. Returns the number of frames; 0 for id 0, an
 * object without the walk, or an id no longer stored.
 */
size_t collector__python_stack(struct collector *c, uint64_t id, struct sampler_py_frame *frames,
			       uint32_t *flags);

/* Deletes every stored Python stack: after a drain, whose ids were the only ones naming them.
 * Returns the number deleted. */
size_t collector__python_clear(struct collector *c);

/* Python stacks not stored because python_stacks was full (PY_STAT_DROP_STACKS); 0 without
 * the walk. */
uint64_t collector__python_lost(struct collector *c);

struct uw_jvm;

/*
 * Walks @tgid's Java frames from its next event on, as @jvm says (runtimes/jvm/jvm_unwind.h):
 * its entry in the object's uw_jvms map. Returns 0, -E2BIG (uw_jvms is full) or -errno.
 */
int collector__add_jvm(struct collector *c, uint32_t tgid, const struct uw_jvm *jvm);

/* The user-stack unwinder on the object's uw_* maps (symbols/unwinder.h); borrowed, valid until
 * collector__free(). */
struct unwinder *collector__unwinder(struct collector *c);

#endif
