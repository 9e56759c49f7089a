// SPDX-License-Identifier: GPL-2.0
/* On-CPU sampler: a perf_event program on cpu-clock, attached on every online CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sampler.h"

/* User stacks come from the DWARF unwinder (issue 7): frames in uw_stacks, ids in the keys. */
#define UW_STACK_ENTRIES SAMPLER_DEFAULT_STACK_ENTRIES
#include "unwind.bpf.h"

/* filter_tgids + target_tgids, stats, seen + events (first sights) */
#define COLLECTOR_STAT_MAX SAMPLER_STAT_MAX
#define COLLECTOR_SEEN_ENTRIES SAMPLER_DEFAULT_SEEN_ENTRIES
#define COLLECTOR_EVENTS_BYTES (256 * 1024)
#define COLLECTOR_NEW_TASK struct sampler_new_task
#include "collector.bpf.h"

/* CPython frames (issue 13): python_procs, python_stacks, py_stack_id() */
#include "python.bpf.h"

/* Load-time knobs (rodata). */
const volatile bool filter_cgroups = false; /* sample only cgroup ids in `target_cgroups` */
const volatile bool user_only = false;
/* The profiler's own process: left out, as its work is the cost of measuring, not the answer. */
const volatile __u32 self_tgid = 0;
/* Frame-pointer user stacks (bpf_get_stackid) instead of the DWARF unwinder: for kernels
 * without bpf_loop (< 5.17; the verifier prunes the branch not taken) and for comparisons
 * (bench/unwind_bench.c). */
const volatile bool fp_user_stacks = false;

/* Off-CPU records taken before this time (CLOCK_MONOTONIC ns) are not turned into time: a
 * sampler kept loaded between captures leaves records of the last one in tasks' storage, which
 * user space cannot clear (sampler__begin() sets it as it attaches). */
__u64 offcpu_since = 0;

/* Kernel stacks (frame pointers are fine there). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SAMPLER_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, SAMPLER_DEFAULT_STACK_ENTRIES);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sampler_key);
	__type(value, struct sampler_value);
	__uint(max_entries, SAMPLER_DEFAULT_COUNT_ENTRIES);
} counts SEC(".maps");

/* Processes whose main thread's samples are kept one by one with their time (sampler.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, SAMPLER_TIMED_ENTRIES);
} timed_tgids SEC(".maps");

/* Cgroup filter set, filled by user space after load (the tgid one is in collector.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 1024);
} target_cgroups SEC(".maps");

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct sampler_key key = {};
	struct sampler_value *val, zero = {};

	stat_inc(SAMPLER_STAT_SAMPLES);
	if (tid == 0) {
		stat_inc(SAMPLER_STAT_IDLE);
		return 0;
	}

	key.tgid = tgid;
	key.tid = tid;
	key.cgroup_id = bpf_get_current_cgroup_id();

	if ((self_tgid && tgid == self_tgid) || !tgid_wanted(tgid)) {
		stat_inc(SAMPLER_STAT_FILTERED);
		return 0;
	}
	if (filter_cgroups && !bpf_map_lookup_elem(&target_cgroups, &key.cgroup_id)) {
		stat_inc(SAMPLER_STAT_FILTERED);
		return 0;
	}

	key.user_stack_id = fp_user_stacks ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) :
					     uw_user_stack_perf(ctx);
	if (user_only)
		key.kern_stack_id = -1;
	else
		key.kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	if (stack_lost(key.user_stack_id) || stack_lost(key.kern_stack_id))
		stat_inc(SAMPLER_STAT_DROP_STACKS);
	/* the Python walk needs bpf_loop, as the DWARF unwinder does */
	if (!fp_user_stacks)
		key.py_stack = py_stack_id(tgid);
	if (tid == tgid && bpf_map_lookup_elem(&timed_tgids, &tgid))
		key.time_ns = bpf_ktime_get_ns();

	/* count_slot() takes the thread name (bpf_get_current_comm()) on a key's first sample; the
	 * process name is read by user space when the process is first seen: a CO-RE read of
	 * group_leader->comm here would make libbpf parse the kernel's BTF at every start, the
	 * largest part of our start-up cost (docs/benchmarks.md). */
	val = count_slot(&counts, &key, &zero, SAMPLER_STAT_DROP_COUNTS);
	if (!val)
		return 0;
	__sync_fetch_and_add(&val->count, 1);
	return 0;
}

/*
 * Off-CPU time. At sched_switch the outgoing task is `current`, so its ids, cgroup, comm and
 * stacks come from helpers (no CO-RE reads: see docs/design/collectors.md); the record is kept
 * in the task's storage and turned into time when the task is switched in again.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sampler_off_key);
	__type(value, struct sampler_off_value);
	__uint(max_entries, SAMPLER_DEFAULT_OFF_ENTRIES);
} offcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sampler_off_start);
} off_start SEC(".maps");

/* Fallback for kernels without tp_btf: the same record keyed by the task pointer. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct sampler_off_start);
	__uint(max_entries, 16384);
} off_start_ptr SEC(".maps");

static __always_inline bool in_target(__u32 tgid)
{
	__u64 cg;

	if ((self_tgid && tgid == self_tgid) || !tgid_wanted(tgid))
		return false;
	if (filter_cgroups) {
		cg = bpf_get_current_cgroup_id();
		if (!bpf_map_lookup_elem(&target_cgroups, &cg))
			return false;
	}
	return true;
}

/* Fills the switch-out record of `current` (the outgoing task). */
static __always_inline void switch_out(void *ctx, struct sampler_off_start *st, bool preempt,
				       __u64 prev_state, __u64 now, __u32 tgid, __u32 tid)
{
	st->ts = now;
	st->tgid = tgid;
	st->tid = tid;
	st->cgroup_id = bpf_get_current_cgroup_id();
	/* prev is current here: its user registers are those it entered the kernel with */
	st->user_stack_id = fp_user_stacks ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) :
					     uw_user_stack_task();
	st->kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	if (stack_lost(st->user_stack_id) || stack_lost(st->kern_stack_id))
		stat_inc(SAMPLER_STAT_DROP_STACKS);
	/* the Python frames it stopped in (time.sleep() under its caller), as for a sample */
	st->py_stack = fp_user_stacks ? 0 : py_stack_id(tgid);
	/* TASK_RUNNING (0) or preempted: it still wants the CPU */
	st->state = (preempt || !(prev_state & 0xff)) ? SAMPLER_OFF_RUNNABLE : SAMPLER_OFF_BLOCKED;
	bpf_get_current_comm(st->comm, sizeof(st->comm));
	announce(tgid, st->cgroup_id);
}

/* Turns the switch-out record of the incoming task into off-CPU time. */
static __always_inline void switch_in(struct sampler_off_start *st, __u64 now)
{
	struct sampler_off_key key = {};
	struct sampler_off_value *val, zero = {};

	if (!st->ts || now < st->ts || st->ts < offcpu_since) {
		st->ts = 0;
		return;
	}
	key.tgid = st->tgid;
	key.tid = st->tid;
	key.cgroup_id = st->cgroup_id;
	key.user_stack_id = st->user_stack_id;
	key.kern_stack_id = st->kern_stack_id;
	key.state = st->state;
	key.py_stack = st->py_stack;
	val = bpf_map_lookup_elem(&offcpu, &key);
	if (!val) {
		__builtin_memcpy(zero.comm, st->comm, sizeof(zero.comm));
		if (bpf_map_update_elem(&offcpu, &key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&offcpu, &key)) {
			stat_inc(SAMPLER_STAT_DROP_OFF);
			st->ts = 0;
			return;
		}
		val = bpf_map_lookup_elem(&offcpu, &key);
		if (!val)
			return;
	}
	__sync_fetch_and_add(&val->ns, now - st->ts);
	__sync_fetch_and_add(&val->count, 1);
	st->ts = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct sampler_off_start *st;

	if (tid && in_target(tgid)) {
		st = bpf_task_storage_get(&off_start, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (st)
			switch_out(ctx, st, preempt, prev_state, now, tgid, tid);
	}
	st = bpf_task_storage_get(&off_start, next, 0, 0);
	if (st)
		switch_in(st, now);
	return 0;
}

/* Kernels without tp_btf (chosen in user space before load). prev_state is the fourth
 * argument since Linux 5.18 (commit fa2c3254d7cf). */
SEC("raw_tp/sched_switch")
int on_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	/* ctx->args[i] of vmlinux.h's struct would be a CO-RE relocation, and one relocation in the
	 * object makes libbpf parse the kernel's BTF at every load (docs/design/collectors.md):
	 * the raw tracepoint's arguments are a plain array of u64. */
	const __u64 *args = (const __u64 *)ctx;
	__u64 prev = (__u64)bpf_get_current_task(), next = args[2];
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct sampler_off_start *st, zero = {};

	if (tid && in_target(tgid)) {
		if (!bpf_map_lookup_elem(&off_start_ptr, &prev))
			bpf_map_update_elem(&off_start_ptr, &prev, &zero, BPF_ANY);
		st = bpf_map_lookup_elem(&off_start_ptr, &prev);
		if (st)
			switch_out(ctx, st, args[0], args[3], now, tgid, tid);
	}
	st = bpf_map_lookup_elem(&off_start_ptr, &next);
	if (st)
		switch_in(st, now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
