// SPDX-License-Identifier: GPL-2.0
/*
 * Threads snapshot: a task iterator that writes one record per thread of the target: its
 * state, where it sleeps in the kernel, and its user registers (for unwinding its user stack
 * from user space without stopping it).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "threads.h"

/* filter_tgids + target_tgids */
#include "collector.bpf.h"

/* PF_KTHREAD (include/linux/sched.h) */
#define PF_KTHREAD 0x00200000
/* Task states (include/linux/sched.h) */
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_STOPPED 0x0004
#define TASK_TRACED 0x0008

const volatile bool with_kthreads = false;

/* One record is too big for the BPF stack: build it in a per-CPU scratch slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct threads_rec);
	__uint(max_entries, 1);
} scratch SEC(".maps");

/* task->__state was task->state before Linux 5.14 (commit 2f064a59a11f) */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	__u32 st;

	if (bpf_core_field_exists(t->__state))
		st = BPF_CORE_READ(t, __state);
	else
		st = BPF_CORE_READ((struct task_struct___old *)t, state);
	if (st == 0)
		return BPF_CORE_READ(t, on_cpu) ? THREADS_RUNNING : THREADS_RUNNABLE;
	if (st & TASK_UNINTERRUPTIBLE)
		return THREADS_DISK;
	if (st & TASK_INTERRUPTIBLE)
		return THREADS_SLEEPING;
	if (st & (TASK_STOPPED | TASK_TRACED))
		return THREADS_STOPPED;
	return THREADS_OTHER;
}

SEC("iter/task")
int dump_thread(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct threads_rec *rec;
	struct pt_regs *regs;
	__u32 zero = 0, tgid;
	long n;

	if (!task)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	if (!tgid_wanted(tgid))
		return 0;
	if (!with_kthreads && (BPF_CORE_READ(task, flags) & PF_KTHREAD))
		return 0;
	rec = bpf_map_lookup_elem(&scratch, &zero);
	if (!rec)
		return 0;
	rec->tgid = tgid;
	rec->tid = BPF_CORE_READ(task, pid);
	rec->state = task_state(task);
	BPF_CORE_READ_STR_INTO(&rec->comm, task, comm);
	n = bpf_get_task_stack(task, rec->kstack, sizeof(rec->kstack), 0);
	rec->nkstack = n > 0 ? n / sizeof(__u64) : 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	rec->user_ip = regs ? BPF_CORE_READ(regs, ip) : 0;
	rec->user_sp = regs ? BPF_CORE_READ(regs, sp) : 0;
	rec->user_bp = regs ? BPF_CORE_READ(regs, bp) : 0;
	bpf_seq_write(seq, rec, sizeof(*rec));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
