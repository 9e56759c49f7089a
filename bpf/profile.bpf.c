// SPDX-License-Identifier: GPL-2.0
/* On-CPU sampler: a perf_event program on cpu-clock, attached on every online CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "profile.h"

/* errno values bpf_get_stackid() returns (vmlinux.h has no uapi errno). */
#define ENOMEM 12
#define EEXIST 17

/* Load-time knobs (rodata). */
const volatile bool filter_tgids = false;	/* sample only tgids in `target_tgids` */
const volatile bool filter_cgroups = false;	/* sample only cgroup ids in `target_cgroups` */
const volatile bool user_only = false;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROF_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, PROF_DEFAULT_STACK_ENTRIES);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct prof_key);
	__type(value, struct prof_value);
	__uint(max_entries, PROF_DEFAULT_COUNT_ENTRIES);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PROF_STAT_MAX);
} stats SEC(".maps");

/* tgids seen so far; a first sight is announced on `events`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, PROF_DEFAULT_SEEN_ENTRIES);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Filter sets, filled by user space after load. Keys are tgids (not thread ids). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 4096);
} target_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 1024);
} target_cgroups SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

static __always_inline void announce(__u32 tgid, __u64 cgroup_id)
{
	struct prof_new_task *ev;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&seen, &tgid))
		return;
	if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
		return;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	ev->tgid = tgid;
	ev->pad = 0;
	ev->cgroup_id = cgroup_id;
	bpf_ringbuf_submit(ev, 0);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct prof_key key = {};
	struct prof_value *val, zero = {};

	stat_inc(PROF_STAT_SAMPLES);
	if (tid == 0) {
		stat_inc(PROF_STAT_IDLE);
		return 0;
	}

	key.tgid = tgid;
	key.tid = tid;
	key.cgroup_id = bpf_get_current_cgroup_id();

	if (filter_tgids && !bpf_map_lookup_elem(&target_tgids, &tgid)) {
		stat_inc(PROF_STAT_FILTERED);
		return 0;
	}
	if (filter_cgroups && !bpf_map_lookup_elem(&target_cgroups, &key.cgroup_id)) {
		stat_inc(PROF_STAT_FILTERED);
		return 0;
	}

	key.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (user_only)
		key.kern_stack_id = -1;
	else
		key.kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	/* -EFAULT: no user stack (kernel thread); -EEXIST/-ENOMEM: the stack map is full */
	if (key.user_stack_id == -EEXIST || key.user_stack_id == -ENOMEM ||
	    key.kern_stack_id == -EEXIST || key.kern_stack_id == -ENOMEM)
		stat_inc(PROF_STAT_DROP_STACKS);

	val = bpf_map_lookup_elem(&counts, &key);
	if (!val) {
		/* The process name is read by user space when the process is first seen: a CO-RE
		 * read of group_leader->comm here would make libbpf parse the kernel's BTF at
		 * every start, the largest part of our start-up cost (docs/benchmarks.md). */
		bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		if (bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&counts, &key)) {
			stat_inc(PROF_STAT_DROP_COUNTS);
			return 0;
		}
		val = bpf_map_lookup_elem(&counts, &key);
		if (!val)
			return 0;
		announce(tgid, key.cgroup_id);
	}
	__sync_fetch_and_add(&val->count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
