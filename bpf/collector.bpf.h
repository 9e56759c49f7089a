/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF side of every collector shares (docs/design/collectors.md); the user-space half
 * is `struct collector` in daemon/collectors/collector.h.
 *
 * Every collector gets the target filter: `filter_tgids` (.bss) and the `target_tgids` hash
 * that user space fills after load (tgids, not thread ids), tested by tgid_wanted().
 *
 * A counting collector (profile, locks, memgrow) defines, before including this file:
 *   COLLECTOR_STAT_MAX      entries of the `stats` per-CPU array (its <c>_STAT_MAX)
 *   COLLECTOR_SEEN_ENTRIES  size of the `seen` LRU hash of tgids already announced
 *   COLLECTOR_EVENTS_BYTES  size of the `events` ring buffer
 *   COLLECTOR_NEW_TASK      its ring buffer event (struct <c>_new_task: tgid, pad, cgroup_id)
 * and gets stat_inc(), announce() and count_slot() with those maps.
 *
 * No CO-RE relocation here: one anywhere in an object makes libbpf parse the kernel's BTF at
 * every load, and the on-CPU sampler (bpf/sampler.bpf.c) must stay free of them.
 */
#ifndef SLIDEOPS_BPF_COLLECTOR_BPF_H
#define SLIDEOPS_BPF_COLLECTOR_BPF_H

/* errno values the helpers return (vmlinux.h has no uapi errno). */
#define ENOMEM 12
#define EEXIST 17

/* See only the tgids in `target_tgids`. A runtime knob (.bss), not rodata: a sampler that stays
 * loaded in the agent serves whole-server and Service captures alike (issue 18). */
__u32 filter_tgids = 0;

/* Filter set, filled by user space after load. Keys are tgids (not thread ids). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 4096);
} target_tgids SEC(".maps");

/* True when @tgid is in the target (always, without filter_tgids). */
static __always_inline bool tgid_wanted(__u32 tgid)
{
	return !filter_tgids || bpf_map_lookup_elem(&target_tgids, &tgid);
}

/* True when bpf_get_stackid() or the unwinder lost a stack because its map is full
 * (-EEXIST/-ENOMEM); -EFAULT (no user stack: a kernel thread) is not a loss. */
static __always_inline bool stack_lost(__s32 stack_id)
{
	return stack_id == -EEXIST || stack_id == -ENOMEM;
}

#ifdef COLLECTOR_STAT_MAX
#if !defined(COLLECTOR_SEEN_ENTRIES) || !defined(COLLECTOR_EVENTS_BYTES) || \
	!defined(COLLECTOR_NEW_TASK)
#error "a counting collector defines COLLECTOR_SEEN_ENTRIES, _EVENTS_BYTES and _NEW_TASK too"
#endif

/* What is lost or left out, per CPU; daemon/collectors/collector.c sums it (collector__stats()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, COLLECTOR_STAT_MAX);
} stats SEC(".maps");

/* tgids seen so far; a first sight is announced on `events`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, COLLECTOR_SEEN_ENTRIES);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, COLLECTOR_EVENTS_BYTES);
} events SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

/* Tells user space, once per tgid, that @tgid was seen, so it names the process and reads its
 * owner while it lives. */
static __always_inline void announce(__u32 tgid, __u64 cgroup_id)
{
	COLLECTOR_NEW_TASK *ev;
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

/*
 * A process that execs runs another program: it is forgotten, so that its next event announces
 * it again and user space reads its new maps, name and runtime (a shell that execs python3 is
 * first seen as the shell). One delete per exec on the server. A raw tracepoint: no tracefs
 * and no CO-RE relocation; daemon/collectors/collector.c attaches it.
 */
SEC("raw_tp/sched_process_exec")
int collector_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&seen, &tgid);
	return 0;
}

/*
 * A process that exits is forgotten too: its pid may be used again by a process that never
 * execs (a fork of a pre-fork server), which must be announced as the new process it is, with
 * its own maps. A sampler kept loaded for a day sees pids wrap. Only the group leader's exit
 * counts (its tgid is the key). One delete per process exit on the server.
 */
SEC("raw_tp/sched_process_exit")
int collector_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (tgid == (__u32)id)
		bpf_map_delete_elem(&seen, &tgid);
	return 0;
}

/* count_slot() with its arguments spelt out. */
static __always_inline void *count_slot_of(void *counts, const void *key, void *zero, char *comm,
					   __u32 comm_len, __u32 drop_stat, __u32 tgid,
					   __u64 cgroup_id)
{
	void *val = bpf_map_lookup_elem(counts, key);

	if (val)
		return val;
	bpf_get_current_comm(comm, comm_len);
	/* -EEXIST when another CPU inserted the key meanwhile: the lookup finds theirs */
	if (bpf_map_update_elem(counts, key, zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(counts, key)) {
		stat_inc(drop_stat);
		return NULL;
	}
	val = bpf_map_lookup_elem(counts, key);
	if (val)
		announce(tgid, cgroup_id);
	return val;
}

/*
 * The value of *@key in the hash @counts. A key's first event inserts *@zero, with the thread
 * name read into @zero->comm only then (not per event), and announces the key's tgid. Returns
 * NULL when the map is full (@drop_stat is counted) or the entry vanished. @key points to a
 * key with tgid and cgroup_id fields, @zero to a zeroed value with a comm array.
 */
#define count_slot(counts, key, zero, drop_stat)                                        \
	count_slot_of(counts, key, zero, (zero)->comm, sizeof((zero)->comm), drop_stat, \
		      (key)->tgid, (key)->cgroup_id)

#endif /* COLLECTOR_STAT_MAX */

#endif
