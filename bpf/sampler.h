/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * profile: on-CPU sampler shared definitions (bpf/sampler.bpf.c and daemon/collectors/sampler.c).
 *
 * Samples are counted in the kernel per (tgid, tid, cgroup, user stack, kernel stack); user
 * space reads the counts once at the end of a capture. Idle (the swapper, tgid 0) is counted
 * apart so the busy share of the server is known.
 */
#ifndef SLIDEOPS_BPF_SAMPLER_H
#define SLIDEOPS_BPF_SAMPLER_H

/* vmlinux.h defines the __u32 family for BPF; user space takes them from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* PERF_MAX_STACK_DEPTH: the kernel's limit for bpf_get_stackid() */
#define SAMPLER_MAX_STACK_DEPTH 127
/* Map sizes (overridable before load). Stack map: 16384 * 127 * 8 B = 16 MiB of kernel memory. */
#define SAMPLER_DEFAULT_STACK_ENTRIES 16384
#define SAMPLER_DEFAULT_COUNT_ENTRIES 40960
#define SAMPLER_DEFAULT_SEEN_ENTRIES 16384
#define SAMPLER_COMM_LEN 16

/* Per-CPU statistics, indexes into the `stats` array map. */
#define SAMPLER_STAT_SAMPLES 0	   /* every sample taken, idle included */
#define SAMPLER_STAT_IDLE 1	   /* samples of the idle task */
#define SAMPLER_STAT_DROP_COUNTS 2 /* count map full: sample lost */
#define SAMPLER_STAT_DROP_STACKS 3 /* stack map full (-EEXIST/-ENOMEM): stack lost, sample kept */
#define SAMPLER_STAT_FILTERED 4	   /* samples outside the target */
#define SAMPLER_STAT_MAX 6

struct sampler_key {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;     /* cgroup v2 id of the task */
	__s32 user_stack_id; /* < 0: no user stack (kernel thread, or lost) */
	__s32 kern_stack_id;
	__u64 py_stack; /* python_stacks key (bpf/python.h); 0: no Python stack */
	/* bpf_ktime_get_ns() of the sample for the main thread (tid == tgid) of a tgid in
	 * `timed_tgids` (a Node.js process whose V8 profiler runs: its samples are matched with
	 * V8's by time, daemon/capture/nodeframes.h); 0 for every other sample, which are
	 * counted together */
	__u64 time_ns;
};

/* Processes whose main thread's samples carry their time (sampler_key.time_ns). */
#define SAMPLER_TIMED_ENTRIES 64

struct sampler_value {
	__u64 count;
	char comm[SAMPLER_COMM_LEN]; /* thread name */
};

/* Off-CPU intervals (the `wall` and `threads` questions): from a thread's switch-out to its next
 * switch-in, keyed like the samples plus how it left the CPU. */
#define SAMPLER_OFF_RUNNABLE 1 /* preempted: still runnable, waiting for a CPU */
#define SAMPLER_OFF_BLOCKED 2  /* went to sleep (a syscall, a page fault, ...) */
#define SAMPLER_DEFAULT_OFF_ENTRIES 40960

struct sampler_off_key {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;
	__s32 user_stack_id;
	__s32 kern_stack_id; /* where it slept in the kernel: names the syscall */
	__u32 state;	     /* SAMPLER_OFF_* */
	__u32 pad;
	__u64 py_stack; /* python_stacks key at the switch-out (bpf/python.h); 0: none */
};

struct sampler_off_value {
	__u64 ns;    /* time off-CPU */
	__u64 count; /* number of intervals */
	char comm[SAMPLER_COMM_LEN];
};

/* Per-thread switch-out record. */
struct sampler_off_start {
	__u64 ts;
	__u64 cgroup_id;
	__u32 tgid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	__u32 state;
	__u32 pad;
	__u64 py_stack;
	char comm[SAMPLER_COMM_LEN];
};

#define SAMPLER_STAT_DROP_OFF 5 /* off-CPU map full: interval lost */

/* Ring buffer event: a tgid seen for the first time, so user space can snapshot it while it
 * lives (its maps, its owner). */
struct sampler_new_task {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;
};

#endif
