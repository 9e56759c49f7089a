// SPDX-License-Identifier: GPL-2.0
/*
 * Lock waits: time spent asleep in futex(2) waits and futex_waitv(2), by user stack.
 *
 * syscalls/sys_enter_futex{,_waitv} record the start and the user stack of a blocking wait in
 * the thread's task storage; syscalls/sys_exit_futex{,_waitv} add the elapsed time to the
 * counts. Waits already in progress when the programs attach, or still in progress when they
 * detach, are not seen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "locks.h"

/* User stacks come from the DWARF unwinder (issue 7): frames in uw_stacks, ids in the keys. */
#define UW_STACK_ENTRIES LOCKS_DEFAULT_STACK_ENTRIES
#include "unwind.bpf.h"

/* filter_tgids + target_tgids, stats, seen + events (first sights) */
#define COLLECTOR_STAT_MAX LOCKS_STAT_MAX
#define COLLECTOR_SEEN_ENTRIES LOCKS_DEFAULT_SEEN_ENTRIES
#define COLLECTOR_EVENTS_BYTES (64 * 1024)
#define COLLECTOR_NEW_TASK struct locks_new_task
#include "collector.bpf.h"

/* CPython frames (issue 13): python_procs, python_stacks, py_stack_id() */
#include "python.bpf.h"

/* errno value (vmlinux.h has no uapi errno). */
#define EAGAIN 11

/*
 * Tracepoint records, from /sys/kernel/tracing/events/syscalls/sys_{enter,exit}_futex/format
 * (the same layout for futex_waitv): an 8-byte common header, int __syscall_nr, 4 bytes of
 * padding, then the six arguments (or the return value) as 8-byte words. Written out here
 * rather than taken from vmlinux.h (trace_event_raw_sys_enter) so the object carries no CO-RE
 * relocation and libbpf need not parse the kernel's BTF at load (docs/design/collectors.md).
 */
struct locks_sys_enter {
	__u64 common;
	__s32 syscall_nr;
	__u32 pad;
	__u64 args[6];
};

struct locks_sys_exit {
	__u64 common;
	__s32 syscall_nr;
	__u32 pad;
	__s64 ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct locks_key);
	__type(value, struct locks_value);
	__uint(max_entries, LOCKS_DEFAULT_COUNT_ENTRIES);
} counts SEC(".maps");

/*
 * The wait in progress of each thread. Task storage rather than an LRU hash keyed by tid
 * (STYLE 6): bpf_get_current_task_btf() and bpf_task_storage_get() are both allowed in
 * tracepoint programs (bpf_tracing_func_proto) and were checked to load and run on this 6.18
 * kernel. The storage is freed with the thread, cannot evict a wait in progress under
 * pressure as an LRU can, and is kept between waits (start_ns = 0 marks it consumed) so a
 * thread that waits often allocates once. Its BTF task pointer comes from a helper, not a CO-RE
 * relocation: libbpf still does not load the kernel's BTF.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct locks_start);
} starts SEC(".maps");

/* The one place stacks are taken: the DWARF unwinder, from the registers at syscall entry. */
static __always_inline __s32 user_stack_id(void)
{
	__s32 id = uw_user_stack_task();

	if (stack_lost(id))
		stat_inc(LOCKS_STAT_DROP_STACKS);
	return id;
}

static __always_inline int wait_enter(void *ctx, __u32 kind)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct locks_start *s;

	if (!tgid_wanted(tgid)) {
		stat_inc(LOCKS_STAT_FILTERED);
		return 0;
	}
	s = bpf_task_storage_get(&starts, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		stat_inc(LOCKS_STAT_DROP_STARTS);
		return 0;
	}
	s->user_stack_id = user_stack_id();
	s->py_stack = py_stack_id(tgid);
	s->kind = kind;
	/* last: a non-zero start marks the record complete */
	s->start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int wait_exit(struct locks_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), delta;
	struct locks_value *val, zero = {};
	struct locks_key key = {};
	struct locks_start *s;

	/* every futex call exits here, FUTEX_WAKE included: a lookup without F_CREATE is all
	 * they cost */
	s = bpf_task_storage_get(&starts, bpf_get_current_task_btf(), 0, 0);
	if (!s || !s->start_ns)
		return 0;
	delta = now - s->start_ns;
	s->start_ns = 0;
	if (ctx->ret == -EAGAIN) {
		stat_inc(LOCKS_STAT_NO_SLEEP);
		return 0;
	}

	key.tgid = id >> 32;
	key.tid = (__u32)id;
	key.cgroup_id = bpf_get_current_cgroup_id();
	key.user_stack_id = s->user_stack_id;
	key.kind = s->kind;
	key.py_stack = s->py_stack;

	val = count_slot(&counts, &key, &zero, LOCKS_STAT_DROP_COUNTS);
	if (!val)
		return 0;
	__sync_fetch_and_add(&val->wait_ns, delta);
	__sync_fetch_and_add(&val->count, 1);
	stat_inc(LOCKS_STAT_WAITS);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct locks_sys_enter *ctx)
{
	__s32 kind = locks_futex_kind((__u32)ctx->args[1]);

	if (kind < 0)
		return 0;
	return wait_enter(ctx, kind);
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct locks_sys_exit *ctx)
{
	return wait_exit(ctx);
}

SEC("tracepoint/syscalls/sys_enter_futex_waitv")
int futex_waitv_enter(struct locks_sys_enter *ctx)
{
	return wait_enter(ctx, LOCKS_KIND_WAITV);
}

SEC("tracepoint/syscalls/sys_exit_futex_waitv")
int futex_waitv_exit(struct locks_sys_exit *ctx)
{
	return wait_exit(ctx);
}

char LICENSE[] SEC("license") = "GPL";
