/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * threads: one snapshot of every thread of the target, written by a BPF task iterator
 * (bpf/threads.bpf.c) and read by daemon/collectors/threads.c, which takes one every 100 ms.
 */
#ifndef SLIDEOPS_BPF_THREADS_H
#define SLIDEOPS_BPF_THREADS_H

/* vmlinux.h defines the __u32 family for BPF; user space takes them from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define THREADS_KSTACK_DEPTH 24
#define THREADS_COMM_LEN 16

/* How the thread stood at the snapshot. */
#define THREADS_RUNNING 1  /* on a CPU */
#define THREADS_RUNNABLE 2 /* TASK_RUNNING, waiting for a CPU */
#define THREADS_SLEEPING 3 /* TASK_INTERRUPTIBLE */
#define THREADS_DISK 4	   /* TASK_UNINTERRUPTIBLE (incl. TASK_IDLE) */
#define THREADS_STOPPED 5  /* stopped or traced */
#define THREADS_OTHER 6

struct threads_rec {
	__u32 tgid;
	__u32 tid;
	__u32 state;   /* THREADS_* */
	__u32 nkstack; /* frames in kstack */
	__u64 user_ip; /* user registers at kernel entry (syscall, fault, interrupt) */
	__u64 user_sp;
	__u64 user_bp;
	char comm[THREADS_COMM_LEN];
	__u64 kstack[THREADS_KSTACK_DEPTH];
};

#endif
