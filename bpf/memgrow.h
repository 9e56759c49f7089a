/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * memgrow: memory-growth collector shared definitions (bpf/memgrow.bpf.c and daemon/collectors/memgrow.c).
 *
 * Two measures, never added together (docs/memory-growth.md says exactly what each means):
 *  - MG_KIND_FAULT: first-touch page faults (the page was not present), each weighted by the
 *    base page size: resident memory that appeared, charged to the stack that touched it.
 *  - MG_KIND_MAP / MG_KIND_UNMAP: anonymous address space made (mmap, mremap, brk growth) and
 *    given back (munmap, mremap, brk shrink), in signed bytes. MAP + UNMAP of one stack is the
 *    net mapping growth of that allocation site.
 * MG_KIND_COW (write faults on present pages) is informational: it overlaps MG_KIND_FAULT when a
 * page is read before it is written (zero page, then copy).
 */
#ifndef SLIDEOPS_BPF_MEMGROW_H
#define SLIDEOPS_BPF_MEMGROW_H

/* vmlinux.h defines the __u32 family for BPF; user space takes them from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* PERF_MAX_STACK_DEPTH: the kernel's limit for bpf_get_stackid() */
#define MG_MAX_STACK_DEPTH 127
/* Map sizes (overridable before load). Stack map: 8192 * 127 * 8 B = 8 MiB of kernel memory;
 * counts 16384 * (40 + 32) B = 1.1 MiB; mappings 16384 * (16 + 32) B = 768 KiB, each one a
 * malloc chunk of 128 KiB or more (glibc), so 2 GiB of live mappings before netting is lost. */
#define MG_DEFAULT_STACK_ENTRIES 8192
#define MG_DEFAULT_COUNT_ENTRIES 16384
#define MG_DEFAULT_SEEN_ENTRIES 16384
#define MG_DEFAULT_MAPPING_ENTRIES 16384 /* anonymous mappings made during the capture */
#define MG_DEFAULT_THREAD_ENTRIES 4096	 /* threads inside mmap/munmap/mremap/brk */
#define MG_DEFAULT_BRK_ENTRIES 4096	 /* processes whose program break is known */
#define MG_COMM_LEN 16

/* Kinds (mg_key.kind). */
#define MG_KIND_FAULT 0 /* not-present data fault on a user address: +page size */
#define MG_KIND_COW 1	/* write fault on a present page (copy-on-write): +page size */
#define MG_KIND_MAP 2	/* anonymous mapping made or grown, brk growth: +bytes */
#define MG_KIND_UNMAP 3 /* mapping released or shrunk, brk shrink: -bytes */
#define MG_KIND_MAX 4

/* x86 page fault error code bits (arch/x86/include/asm/trap_pf.h) */
#define MG_PF_PROT 0x1 /* 0: not-present page, 1: protection violation */
#define MG_PF_WRITE 0x2
#define MG_PF_USER 0x4
#define MG_PF_INSTR 0x10

/* Per-CPU statistics, indexes into the `stats` array map. */
#define MG_STAT_FAULTS 0	 /* user-address faults of target processes */
#define MG_STAT_FAULTS_KERNEL 1	 /* ... of which taken in kernel mode (uaccess) */
#define MG_STAT_FAULTS_IGNORED 2 /* instruction fetch, read of a present page, address < 64 KiB */
#define MG_STAT_FILTERED 3	 /* events of processes outside the target */
#define MG_STAT_DROP_COUNTS 4	 /* count map full: event lost */
#define MG_STAT_DROP_STACKS 5	 /* stack map full: stack lost, event kept */
#define MG_STAT_DROP_THREADS 6	 /* per-thread syscall state not stored: syscall lost */
#define MG_STAT_DROP_MAPPINGS 7	 /* mapping record not stored: its munmap won't be netted */
#define MG_STAT_BRK_UNKNOWN 8	 /* brk moved while the old break was unknown: not counted */
#define MG_STAT_UNMAP_UNKNOWN 9	 /* munmap/mremap of a range not mapped during the capture */
#define MG_STAT_MAX 10

struct mg_key {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;     /* cgroup v2 id of the task */
	__s32 user_stack_id; /* < 0: no user stack (lost) */
	__s32 kern_stack_id; /* < 0: none (only kernel-mode faults carry one) */
	__u32 kind;	     /* MG_KIND_* */
	__u32 pad;
	__u64 py_stack; /* python_stacks key (bpf/python.h); 0: no Python stack */
};

struct mg_value {
	__s64 bytes;		/* signed: MG_KIND_UNMAP is negative */
	__u64 count;		/* events: faults, mappings, releases */
	char comm[MG_COMM_LEN]; /* thread name at the first event */
};

/* A thread inside mmap/munmap/mremap/brk: the arguments, read back at the syscall's exit. */
#define MG_OP_MMAP 1
#define MG_OP_MUNMAP 2
#define MG_OP_MREMAP 3
#define MG_OP_BRK 4

struct mg_call {
	__u32 op; /* MG_OP_* */
	__u32 pad;
	__u64 addr;    /* munmap/mremap: range start; brk: requested break */
	__u64 len;     /* mmap/munmap: length; mremap: old length */
	__u64 new_len; /* mremap */
};

/* An anonymous mapping made during the capture, by (tgid, start address). `bytes` is what was
 * credited to the allocating key and not yet given back. */
struct mg_mapping_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

struct mg_mapping {
	__u64 bytes;
	__u32 tid;
	__s32 user_stack_id;
	__u64 cgroup_id;
	__u64 py_stack;
};

/* Ring buffer event: a tgid seen for the first time. */
struct mg_new_task {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;
};

#endif
