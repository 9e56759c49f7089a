/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython frame walk (bpf/python.h), included by bpf/sampler.bpf.c (on-CPU samples and
 * switch-outs), bpf/locks.bpf.c and bpf/memgrow.bpf.c. It walks `current`, so only where the
 * task is current: not from the threads iterator. For an event of a process in python_procs: the thread's own PyThreadState from its pthread key slot (glibc's
 * struct pthread, at the thread's fsbase), not the GIL holder, so a thread running C code
 * with the GIL released still shows its own Python stack; then its frames, leaf first, one
 * bpf_probe_read_user() of at most PY_FRAME_READ_MAX bytes each, in a bpf_loop() (the
 * verifier's work does not grow with the depth: python-frames.md section 4.1).
 *
 * A sample outside Python costs one test of a .bss flag (no Python process registered) or one
 * hash lookup. fsbase is read with bpf_probe_read_kernel() at an offset user space takes from
 * the kernel's BTF (py_fsbase_off), not a CO-RE relocation: one relocation makes libbpf parse
 * the kernel's BTF at every load (docs/design/collectors.md).
 */
#ifndef SLIDEOPS_BPF_PYTHON_BPF_H
#define SLIDEOPS_BPF_PYTHON_BPF_H

#include "python.h"

/* Runtime knobs, set by user space when it registers the first Python process. */
__u32 py_enabled = 0;
__u64 py_fsbase_off = 0; /* offsetof(struct task_struct, thread.fsbase) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct py_proc);
	__uint(max_entries, PY_DEFAULT_PROC_ENTRIES);
} python_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64); /* hash of the frames */
	__type(value, struct py_stack);
	__uint(max_entries, PY_DEFAULT_STACK_ENTRIES);
} python_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PY_STAT_MAX);
} py_stats SEC(".maps");

static __always_inline void py_stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&py_stats, &idx);

	if (v)
		(*v)++;
}

/*
 * One walk at a time per CPU in each object: tracepoint and perf_event programs do not nest
 * (bpf_prog_active; a fault taken by the walk's own reads does not run memgrow's fault
 * programs), and sched_switch runs with interrupts off, so the cpu-clock sample cannot
 * interrupt a switch-out's walk.
 */
struct py_walk {
	struct py_proc proc;
	__u64 frame;
	__u64 hash;
	__u32 done;
	__u32 pad;
	__u8 buf[PY_FRAME_READ_MAX];
	struct py_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_walk);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

/* A field of the frame bytes just read; @off is bounded for the verifier. */
static __always_inline __u64 py_field64(struct py_walk *w, __u32 off)
{
	if (off > PY_FRAME_READ_MAX - 8)
		return 0;
	return *(__u64 *)(w->buf + off);
}

static __always_inline __u8 py_field8(struct py_walk *w, __u32 off)
{
	if (off > PY_FRAME_READ_MAX - 1)
		return 0;
	return w->buf[off];
}

/* Marks the last recorded frame as the entry of its eval run. */
static __always_inline void py_mark_entry(struct py_walk *w)
{
	__u32 d = w->stack.nframes;

	if (d == 0 || d > PY_MAX_FRAMES)
		return;
	d = (d - 1) & (PY_MAX_FRAMES - 1); /* masked: the verifier sees the bound */
	if (d < 64)
		w->stack.entry[0] |= 1ull << d;
	else
		w->stack.entry[1] |= 1ull << (d - 64);
	w->hash = (w->hash ^ (0x10000 + d)) * 0x100000001b3ull;
}

/* bpf_loop()'s context must be on the BPF stack: it points to the scratch. */
struct py_loop {
	struct py_walk *w;
};

static long py_step(__u32 i, void *arg)
{
	struct py_walk *w = ((struct py_loop *)arg)->w;
	struct py_proc *p;
	__u64 code, instr, back;
	__u32 d, len;

	if (!w || !w->frame)
		return 1;
	p = &w->proc;
	d = w->stack.nframes;
	len = p->frame_read_len;
	if (d >= PY_MAX_FRAMES) {
		w->stack.flags |= PY_STACK_TRUNCATED;
		return 1;
	}
	if (len > PY_FRAME_READ_MAX)
		len = PY_FRAME_READ_MAX;
	if (bpf_probe_read_user(w->buf, len, (void *)(w->frame + p->frame_read_off))) {
		w->stack.flags |= PY_STACK_READ_ERR;
		return 1;
	}
	code = py_field64(w, p->frame_code);
	back = py_field64(w, p->frame_back);
	instr = py_field64(w, p->frame_instr);
	w->frame = back;
	/* 3.12+ shim frames (FRAME_OWNED_BY_CSTACK), 3.13's have f_executable == Py_None: they
	 * separate the eval loop's runs */
	if ((p->frame_owner != PY_NO_OFF && py_field8(w, p->frame_owner) == p->owner_cstack) ||
	    (p->none_addr && code == p->none_addr) || !code) {
		py_mark_entry(w);
		return 0;
	}
	if (p->layout == PY_LAYOUT_OBJECT)
		instr = (__u32)instr; /* f_lasti is an int */
	w->stack.frames[d & (PY_MAX_FRAMES - 1)].code = code;
	w->stack.frames[d & (PY_MAX_FRAMES - 1)].instr = instr;
	w->stack.nframes = d + 1;
	w->hash = (w->hash ^ code) * 0x100000001b3ull;
	w->hash = (w->hash ^ instr) * 0x100000001b3ull;
	/* before 3.11 every frame is its own eval call; 3.11 flags the first frame of each */
	if (p->layout == PY_LAYOUT_OBJECT ||
	    (p->frame_is_entry != PY_NO_OFF && py_field8(w, p->frame_is_entry)))
		py_mark_entry(w);
	return 0;
}

/* The thread's top frame, or 0. */
static __always_inline __u64 py_top_frame(struct py_proc *p)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 fsbase = 0, tstate = 0, frame = 0;

	if (bpf_probe_read_kernel(&fsbase, sizeof(fsbase), (void *)task + py_fsbase_off) || !fsbase)
		return 0;
	if (bpf_probe_read_user(&tstate, sizeof(tstate), (void *)(fsbase + p->tls_slot)) || !tstate)
		return 0;
	if (bpf_probe_read_user(&frame, sizeof(frame), (void *)(tstate + p->tstate_frame)))
		return 0;
	if (p->cframe_frame != PY_NO_OFF && frame &&
	    bpf_probe_read_user(&frame, sizeof(frame), (void *)(frame + p->cframe_frame)))
		return 0;
	return frame;
}

/* The Python stack id of `current` (0: none), after walking and storing its frames. */
static __always_inline __u64 py_stack_id(__u32 tgid)
{
	struct py_loop l = {};
	struct py_proc *p;
	struct py_walk *w;
	__u32 zero = 0;

	if (!py_enabled)
		return 0;
	p = bpf_map_lookup_elem(&python_procs, &tgid);
	if (!p)
		return 0;
	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w)
		return 0;
	w->proc = *p;
	w->frame = py_top_frame(&w->proc);
	if (!w->frame)
		return 0;
	w->hash = 0xcbf29ce484222325ull;
	w->stack.nframes = 0;
	w->stack.flags = 0;
	w->stack.entry[0] = 0;
	w->stack.entry[1] = 0;
	l.w = w;
	bpf_loop(PY_MAX_FRAMES + 32, py_step, &l, 0);
	if (w->frame && !(w->stack.flags & PY_STACK_READ_ERR))
		w->stack.flags |= PY_STACK_TRUNCATED;
	if (!w->stack.nframes)
		return 0;
	w->hash = (w->hash ^ w->stack.flags) * 0x100000001b3ull;
	if (!w->hash)
		w->hash = 1;
	py_stat_inc(PY_STAT_WALKS);
	/* -EEXIST when another CPU stored the same stack meanwhile: the lookup finds it */
	if (!bpf_map_lookup_elem(&python_stacks, &w->hash) &&
	    bpf_map_update_elem(&python_stacks, &w->hash, &w->stack, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&python_stacks, &w->hash)) {
		py_stat_inc(PY_STAT_DROP_STACKS);
		return 0;
	}
	return w->hash;
}

#endif
