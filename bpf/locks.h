/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * locks: time spent waiting in futex, shared definitions (bpf/locks.bpf.c and daemon/collectors/locks.c).
 *
 * A wait is a futex(2) call whose command blocks (FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_LOCK_PI,
 * FUTEX_LOCK_PI2, FUTEX_WAIT_REQUEUE_PI) or a futex_waitv(2) call. Its start and the user stack
 * are recorded at sys_enter, the time is added at sys_exit, in the kernel, per (tgid, tid,
 * cgroup, user stack, kind). A wait that returns -EAGAIN (the futex word had already changed:
 * the thread never slept) is not counted as a wait, only in LOCKS_STAT_NO_SLEEP.
 */
#ifndef SLIDEOPS_BPF_LOCKS_H
#define SLIDEOPS_BPF_LOCKS_H

/* vmlinux.h defines the __u32 family for BPF; user space takes them from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* PERF_MAX_STACK_DEPTH: the kernel's limit for bpf_get_stackid() */
#define LOCKS_MAX_STACK_DEPTH 127
/* Map sizes (overridable before load). Stack map: 4096 * 127 * 8 B = 4 MiB of kernel memory;
 * counts: 16384 * (32 + 32) B plus hash overhead, about 2 MiB. */
#define LOCKS_DEFAULT_STACK_ENTRIES 4096
#define LOCKS_DEFAULT_COUNT_ENTRIES 16384
#define LOCKS_DEFAULT_SEEN_ENTRIES 16384
#define LOCKS_COMM_LEN 16

/* Kinds of wait (locks_key.kind). */
#define LOCKS_KIND_WAIT 0	     /* FUTEX_WAIT: glibc's lll_lock_wait (mutexes) and more */
#define LOCKS_KIND_WAIT_BITSET 1     /* FUTEX_WAIT_BITSET: condvars, rwlocks, semaphores */
#define LOCKS_KIND_LOCK_PI 2	     /* FUTEX_LOCK_PI, FUTEX_LOCK_PI2: PI mutexes */
#define LOCKS_KIND_WAIT_REQUEUE_PI 3 /* FUTEX_WAIT_REQUEUE_PI: condvar wait on a PI mutex */
#define LOCKS_KIND_WAITV 4	     /* futex_waitv(2) (Wine/Proton, some runtimes) */
#define LOCKS_KIND_MAX 5

/* Per-CPU statistics, indexes into the `stats` array map. */
#define LOCKS_STAT_WAITS 0	 /* waits that slept and were counted */
#define LOCKS_STAT_NO_SLEEP 1	 /* waits that returned -EAGAIN at once: not counted */
#define LOCKS_STAT_FILTERED 2	 /* waits of processes outside the target */
#define LOCKS_STAT_DROP_COUNTS 3 /* count map full: wait lost */
#define LOCKS_STAT_DROP_STACKS 4 /* stack map full (-EEXIST/-ENOMEM): stack lost, wait kept */
#define LOCKS_STAT_DROP_STARTS 5 /* per-thread start not stored (storage full): wait lost */
#define LOCKS_STAT_MAX 6

/* futex(2) op bits (include/uapi/linux/futex.h), repeated here because vmlinux.h carries no
 * uapi macros and this header is shared with BPF. */
#define LOCKS_FUTEX_WAIT 0
#define LOCKS_FUTEX_LOCK_PI 6
#define LOCKS_FUTEX_WAIT_BITSET 9
#define LOCKS_FUTEX_WAIT_REQUEUE_PI 11
#define LOCKS_FUTEX_LOCK_PI2 13
#define LOCKS_FUTEX_PRIVATE_FLAG 128
#define LOCKS_FUTEX_CLOCK_REALTIME 256
#define LOCKS_FUTEX_CMD_MASK (~(LOCKS_FUTEX_PRIVATE_FLAG | LOCKS_FUTEX_CLOCK_REALTIME))

/* Classifies a futex(2) op: the LOCKS_KIND_* of a blocking command, or -1 for the others
 * (FUTEX_WAKE, FUTEX_REQUEUE, FUTEX_UNLOCK_PI, ...). Shared so the unit test checks the very
 * code the BPF program runs. */
static inline __s32 locks_futex_kind(__u32 op)
{
	switch (op & LOCKS_FUTEX_CMD_MASK) {
	case LOCKS_FUTEX_WAIT:
		return LOCKS_KIND_WAIT;
	case LOCKS_FUTEX_WAIT_BITSET:
		return LOCKS_KIND_WAIT_BITSET;
	case LOCKS_FUTEX_LOCK_PI:
	case LOCKS_FUTEX_LOCK_PI2:
		return LOCKS_KIND_LOCK_PI;
	case LOCKS_FUTEX_WAIT_REQUEUE_PI:
		return LOCKS_KIND_WAIT_REQUEUE_PI;
	default:
		return -1;
	}
}

struct locks_key {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;     /* cgroup v2 id of the task */
	__s32 user_stack_id; /* < 0: no user stack (lost, or -EFAULT) */
	__u32 kind;	     /* LOCKS_KIND_* */
	__u64 py_stack;	     /* python_stacks key (bpf/python.h); 0: no Python stack */
};

struct locks_value {
	__u64 wait_ns;		   /* total time asleep in the waits */
	__u64 count;		   /* number of waits */
	char comm[LOCKS_COMM_LEN]; /* thread name */
};

/* A wait in progress, per thread: written at sys_enter, consumed at sys_exit. */
struct locks_start {
	__u64 start_ns; /* bpf_ktime_get_ns() at sys_enter */
	__s32 user_stack_id;
	__u32 kind;
	__u64 py_stack;
};

/* Ring buffer event: a tgid seen for the first time, so user space can snapshot it while it
 * lives (its maps, its owner). Same layout as sampler_new_task. */
struct locks_new_task {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;
};

#endif
