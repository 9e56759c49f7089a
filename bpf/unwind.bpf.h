/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel DWARF unwinder (docs/unwinding.md), included by each collector that takes user
 * stacks (profile, locks, memgrow). It walks a user stack from the registers the task had when
 * it entered the kernel (or was interrupted in user mode), using the compact tables that
 * symbols/unwinder.c loads per process, and stores the frames in uw_stacks under a stack id
 * that takes the place of bpf_get_stackid()'s.
 *
 * Per frame: a binary search of the process's mapping list, a binary search of the file's rows,
 * one or two bpf_probe_read_user(). Frames whose pc has no table walk by the frame pointer. The
 * frame loop is a bpf_loop(), so the verifier's work does not grow with the depth; the state
 * (1.2 KiB) lives in a per-CPU scratch map, not on the 512-byte BPF stack. The scratch is safe to
 * share between the programs of one object: perf_event programs do not run inside another
 * tracing program on the same CPU (bpf_prog_active), sched_switch runs with interrupts off, and
 * the syscall and exception tracepoints run with preemption disabled.
 *
 * No CO-RE relocation: registers are read through struct uw_regs (the x86-64 pt_regs layout,
 * stable since it is also the ptrace user_regs_struct order), so libbpf never has to load the
 * kernel's BTF for this (docs/design/collectors.md).
 *
 * The includer defines UW_STACK_ENTRIES (the size of uw_stacks) before including this file.
 */
#ifndef SLIDEOPS_BPF_UNWIND_BPF_H
#define SLIDEOPS_BPF_UNWIND_BPF_H

#include "unwind.h"

#ifndef UW_STACK_ENTRIES
#error "define UW_STACK_ENTRIES (the user stack map size) before including unwind.bpf.h"
#endif

/* errno values the helpers return (vmlinux.h has no uapi errno). */
#define UW_EFAULT 14
#define UW_ENOMEM 12
#define UW_EEXIST 17

/* x86-64 user code segment selectors (arch/x86/include/asm/segment.h): __USER_CS, __USER32_CS. */
#define UW_USER_CS 0x33

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_row);
	__uint(max_entries, UW_DEFAULT_ROWS);
} uw_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct uw_proc);
	__uint(max_entries, UW_DEFAULT_PROCS);
} uw_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __s32);
	__type(value, struct uw_stack);
	__uint(max_entries, UW_STACK_ENTRIES);
} uw_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, UW_STAT_MAX);
} uw_stats SEC(".maps");

/* The HotSpot JVMs among the processes (bpf/hotspot.bpf.h). */
#define UW_JVM_ENTRIES 256
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct uw_jvm);
	__uint(max_entries, UW_JVM_ENTRIES);
} uw_jvms SEC(".maps");

/* struct pt_regs of x86-64, in the order of the uapi one and of bpf_perf_event_data.regs. */
struct uw_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

struct uw_state {
	__u64 ip, sp, bp;
	__u64 hash;
	__u32 tgid;
	__u32 depth;
	__u32 outcome;	/* UW_STAT_* */
	__u32 fp_cause; /* first UW_STAT_NO_* that forced a frame-pointer step */
	__u32 adjust;	/* 1: ip is a return address (look up ip - 1) */
	__u32 fp_used;
	__u64 sig[7];	  /* sigcontext rbp .. rip */
	__u64 jwords[16]; /* around an interpreted frame's rbp (UW_JVM_INTERP_WORDS) */
	__u8 blob[UW_JVM_BLOB_READ + 8]; /* the head of a code blob */
	struct uw_regs regs;
	struct uw_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_state);
	__uint(max_entries, 1);
} uw_scratch SEC(".maps");

struct uw_loop {
	struct uw_state *s;
	struct uw_proc *proc;
	struct uw_jvm *jvm; /* NULL: not a HotSpot JVM */
};

static __always_inline void uw_stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&uw_stats, &idx);

	if (v)
		*v += n;
}

/* Records s->ip as a frame. Returns 0, or 1 once the stack is full (outcome: depth). */
static __always_inline int uw_push(struct uw_state *s)
{
	__u32 idx = s->depth;

	if (idx >= UW_MAX_DEPTH) {
		s->outcome = UW_STAT_DEPTH;
		return 1;
	}
	s->stack.ips[idx] = s->ip;
	s->depth = idx + 1;
	s->hash = uw_hash_frame(s->hash, s->ip);
	return 0;
}

/* Ends the walk at the outermost frame: complete unless a frame-pointer step on missing
 * information came first (then nothing proves no frame was skipped). */
static __always_inline long uw_finish(struct uw_state *s)
{
	s->outcome = s->fp_cause ? s->fp_cause : UW_STAT_COMPLETE;
	return 1;
}

/* The error outcome @why, unless a frame-pointer step on missing information explains it. */
static __always_inline long uw_fail(struct uw_state *s, __u32 why)
{
	s->outcome = s->fp_cause ? s->fp_cause : why;
	return 1;
}

/* A frame-pointer step: CFA = rbp + 16, return address at rbp + 8, caller's rbp at rbp. */
static __always_inline long uw_fp_step(struct uw_state *s, __u32 cause)
{
	__u64 ra = 0, bp = 0;

	if (cause && !s->fp_cause)
		s->fp_cause = cause;
	s->fp_used = 1;
	if (!s->bp)
		return uw_finish(s);
	if (s->bp < s->sp)
		return uw_fail(s, UW_STAT_BAD_FRAME);
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(s->bp + 8)) ||
	    bpf_probe_read_user(&bp, sizeof(bp), (void *)s->bp))
		return uw_fail(s, UW_STAT_READ_FAULT);
	if (!ra)
		return uw_finish(s);
	s->sp = s->bp + 16;
	s->bp = bp;
	s->ip = ra;
	s->adjust = 1;
	return 0;
}

/* The mapping of @proc that holds @pc, or NULL. */
static __always_inline struct uw_mapping *uw_find_mapping(struct uw_proc *proc, __u64 pc)
{
	__u32 lo = 0, n = proc->nmaps, half, j;
	struct uw_mapping *m;

	if (n > UW_MAX_MAPPINGS)
		n = UW_MAX_MAPPINGS;
	if (!n)
		return NULL;
	for (j = 0; j < UW_MAPPING_SEARCH_STEPS && n > 1; j++) {
		half = n / 2;
		if (proc->maps[(lo + half) & (UW_MAX_MAPPINGS - 1)].start <= pc)
			lo += half;
		n -= half;
	}
	m = &proc->maps[lo & (UW_MAX_MAPPINGS - 1)];
	if (pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

/* The row of @m's table covering ELF vaddr @rel, or NULL (below the first row). */
static __always_inline struct uw_row *uw_find_row(struct uw_mapping *m, __u64 rel)
{
	__u32 lo = m->first_row, n = m->nrows, half, k, j;
	struct uw_row *r;

	for (j = 0; j < UW_ROW_SEARCH_STEPS && n > 1; j++) {
		half = n / 2;
		k = lo + half;
		r = bpf_map_lookup_elem(&uw_rows, &k);
		if (!r)
			return NULL;
		if (r->pc <= rel)
			lo = k;
		n -= half;
	}
	r = bpf_map_lookup_elem(&uw_rows, &lo);
	if (!r || r->pc > rel)
		return NULL;
	return r;
}

#include "hotspot.bpf.h"

/* One frame with the process's tables: records s->ip, finds its caller. 1 stops the loop. */
static long uw_step(__u32 i, void *arg)
{
	struct uw_loop *l = arg;
	struct uw_state *s = l->s;
	struct uw_mapping *m;
	struct uw_row *r = NULL;
	__u64 pc, rel, cfa = 0, ra = 0, bp;
	__u32 cfa_type = 0;
	__s32 cfa_offset = 0;
	long java;
	int step;

	pc = s->ip - s->adjust;
	m = uw_find_mapping(l->proc, pc);
	if (!m && l->jvm) {
		java = uw_jvm_frame(s, l->proc, l->jvm, pc);
		if (java >= 0)
			return java ? 1 :
				      0; /* a global function's value is any int to the verifier */
	}
	if (uw_push(s))
		return 1;
	if (!m)
		return uw_fp_step(s, UW_STAT_NO_MAPPING);
	if (!m->nrows)
		return uw_fp_step(s, (m->flags & UW_MAP_NO_CFI) ? 0 : UW_STAT_NO_TABLE);
	rel = pc - m->bias;
	if (rel >> 32)
		return uw_fp_step(s, UW_STAT_NO_TABLE);
	r = uw_find_row(m, rel);
	if (r) {
		cfa_type = r->cfa_type;
		cfa_offset = r->cfa_offset;
	}
	step = uw_row_cfa(cfa_type, cfa_offset, s->ip, s->sp, s->bp, &cfa);
	switch (step) {
	case UW_STEP_FP:
		/* a pc without CFI in a file with CFI: hand-written code, assumed to keep rbp */
		return uw_fp_step(s, 0);
	case UW_STEP_END:
		return uw_finish(s);
	case UW_STEP_SIGNAL:
		if (bpf_probe_read_user(s->sig, sizeof(s->sig), (void *)(cfa + UW_SIGCONTEXT_RBP)))
			return uw_fail(s, UW_STAT_READ_FAULT);
		/* rbp +80 (sig[0]), rsp +120 (sig[5]), rip +128 (sig[6]): an exact pc */
		if (!s->sig[6])
			return uw_finish(s);
		s->bp = s->sig[0];
		s->sp = s->sig[5];
		s->ip = s->sig[6];
		s->adjust = 0;
		return 0;
	case UW_STEP_CFA:
		break;
	default:
		return uw_fail(s, UW_STAT_UNSUPPORTED);
	}
	if (!r || cfa < s->sp + 8)
		return uw_fail(s, UW_STAT_BAD_FRAME);
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return uw_fail(s, UW_STAT_READ_FAULT);
	bp = s->bp;
	if (r->rbp_type == 1) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + (__s64)r->rbp_offset)))
			return uw_fail(s, UW_STAT_READ_FAULT);
	} else if (r->rbp_type == 2) {
		bp = 0;
	}
	if (!ra)
		return uw_finish(s);
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	s->adjust = 1;
	return 0;
}

/* One frame of a process without tables yet: frame pointers only. */
static long uw_step_fp(__u32 i, void *arg)
{
	struct uw_loop *l = arg;
	struct uw_state *s = l->s;

	if (uw_push(s))
		return 1;
	return uw_fp_step(s, UW_STAT_NO_PROC);
}

/* Stores the walked stack; returns its id, -EEXIST (both ids taken by other stacks) or
 * -ENOMEM (the map is full). */
static __always_inline __s32 uw_store(struct uw_state *s)
{
	struct uw_stack *old;
	__s32 id;
	int k, err;

	s->stack.hash = s->hash;
	s->stack.nframes = s->depth;
	s->stack.pad = 0;
	for (k = 0; k < 2; k++) {
		id = uw_stack_id(s->hash, k);
		old = bpf_map_lookup_elem(&uw_stacks, &id);
		if (!old) {
			err = bpf_map_update_elem(&uw_stacks, &id, &s->stack, BPF_NOEXIST);
			if (!err)
				return id;
			if (err != -UW_EEXIST)
				return -UW_ENOMEM;
			old = bpf_map_lookup_elem(&uw_stacks, &id);
			if (!old)
				continue;
		}
		if (old->hash == s->hash && old->nframes == s->depth)
			return id;
	}
	return -UW_EEXIST;
}

/* Walks from (ip, sp, bp) of the current task, stores the stack, counts the outcome. */
static __always_inline __s32 uw_walk(struct uw_state *s, __u64 ip, __u64 sp, __u64 bp)
{
	struct uw_loop l = { .s = s };
	__s32 id;

	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->hash = 0xcbf29ce484222325ull;
	s->depth = 0;
	s->outcome = UW_STAT_DEPTH; /* unless the loop ends earlier */
	s->fp_cause = 0;
	s->adjust = 0;
	s->fp_used = 0;
	s->tgid = bpf_get_current_pid_tgid() >> 32;
	l.proc = bpf_map_lookup_elem(&uw_procs, &s->tgid);
	l.jvm = l.proc ? bpf_map_lookup_elem(&uw_jvms, &s->tgid) : NULL;
	if (l.proc)
		bpf_loop(UW_MAX_DEPTH, uw_step, &l, 0);
	else
		bpf_loop(UW_MAX_DEPTH, uw_step_fp, &l, 0);
	uw_stat_add(UW_STAT_WALKS, 1);
	uw_stat_add(UW_STAT_FRAMES, s->depth);
	if (s->outcome < UW_STAT_MAX)
		uw_stat_add(s->outcome, 1);
	if (s->outcome == UW_STAT_COMPLETE && s->fp_used)
		uw_stat_add(UW_STAT_FP_USED, 1);
	if (!s->depth)
		return -UW_EFAULT;
	id = uw_store(s);
	if (id < 0)
		uw_stat_add(UW_STAT_DROPS, 1);
	return id;
}

/*
 * The user stack of the current task from its registers at kernel entry (bpf_task_pt_regs;
 * tracepoints, sched_switch, and perf events that hit the kernel). Returns a stack id (>= 0),
 * -EFAULT when the task has no 64-bit user context (a kernel thread, an ia32 process), -EEXIST
 * or -ENOMEM when the stack could not be stored (like bpf_get_stackid()).
 */
static __always_inline __s32 uw_user_stack_task(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct uw_state *s;
	void *regs;

	s = bpf_map_lookup_elem(&uw_scratch, &zero);
	if (!s)
		return -UW_EFAULT;
	regs = (void *)bpf_task_pt_regs(task);
	if (!regs || bpf_probe_read_kernel(&s->regs, sizeof(s->regs), regs))
		return -UW_EFAULT;
	if (s->regs.cs != UW_USER_CS)
		return -UW_EFAULT;
	return uw_walk(s, s->regs.ip, s->regs.sp, s->regs.bp);
}

/*
 * The user stack at a perf event: the sampled registers when the event hit user mode, else the
 * task's user registers at kernel entry. @ctx is the perf_event program's context, whose first
 * member is the sampled struct pt_regs. Returns as uw_user_stack_task().
 */
static __always_inline __s32 uw_user_stack_perf(void *ctx)
{
	struct uw_regs *pregs = ctx;
	__u64 cs = pregs->cs, ip, sp, bp;
	__u32 zero = 0;
	struct uw_state *s;

	if ((cs & 3) != 3)
		return uw_user_stack_task();
	if (cs != UW_USER_CS)
		return -UW_EFAULT;
	ip = pregs->ip;
	sp = pregs->sp;
	bp = pregs->bp;
	s = bpf_map_lookup_elem(&uw_scratch, &zero);
	if (!s)
		return -UW_EFAULT;
	return uw_walk(s, ip, sp, bp);
}

#endif
