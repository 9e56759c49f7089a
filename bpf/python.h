/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * python: the CPython frame walk of the sampler (bpf/python.bpf.h) and what user space gives
 * it per process (runtimes/python/py_process.c fills it, daemon/collectors/sampler.c loads it).
 *
 * For a sample whose tgid is in `python_procs`, the thread's PyThreadState is read from its
 * glibc pthread key slot (fsbase + tls_slot), then up to PY_MAX_FRAMES frames are walked and
 * their (code object, instruction) pairs stored in `python_stacks` under a 64-bit hash of the
 * stack, which goes into the event's key (sampler_key, sampler_off_key, locks_key, mg_key:
 * py_stack; 0: no Python stack). Every collector that takes user stacks (sampler, locks,
 * memgrow) includes the walk, each with its own maps; daemon/collectors/collector.c registers
 * the processes in each and reads the stacks back.
 *
 * python_stacks holds each distinct stack once, for as long as the counts that name it: user
 * space reads it with the counts at the drain and then clears it
 * (collector__python_clear()). When it is full a new stack is not stored and the event keeps
 * its native frames (PY_STAT_DROP_STACKS, reported with the lost samples).
 */
#ifndef SLIDEOPS_BPF_PYTHON_H
#define SLIDEOPS_BPF_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PY_MAX_FRAMES 128
/* python_stacks: hash -> struct py_stack (2 KiB each, allocated on use): 4096 = 8.5 MiB max. */
#define PY_DEFAULT_STACK_ENTRIES 4096
#define PY_DEFAULT_PROC_ENTRIES 1024
#define PY_NO_OFF 0xffffffffu
/* Bytes of a frame read at once; every field offset is relative to frame_read_off. */
#define PY_FRAME_READ_MAX 128

#define PY_LAYOUT_OBJECT 1 /* 3.6-3.10: PyFrameObject, f_lasti is an int */
#define PY_LAYOUT_INTERP 2 /* 3.11+: _PyInterpreterFrame, an instruction pointer */

/* Per-CPU counters of the walk, indexes into `py_stats`. */
#define PY_STAT_WALKS 0	      /* events of a registered process whose frames were walked */
#define PY_STAT_DROP_STACKS 1 /* python_stacks full: the event keeps native frames */
#define PY_STAT_MAX 2

/* python_procs value: tgid -> how to walk its frames. */
struct py_proc {
	__u64 tls_slot;	      /* fsbase + tls_slot holds the PyThreadState pointer */
	__u64 none_addr;      /* &_Py_NoneStruct (3.13 shim frames' f_executable); 0: none */
	__u32 layout;	      /* PY_LAYOUT_* */
	__u32 tstate_frame;   /* tstate -> frame / cframe / current_frame */
	__u32 cframe_frame;   /* cframe -> current_frame; PY_NO_OFF: none */
	__u32 frame_read_off; /* the frame bytes read: [off, off + len) */
	__u32 frame_read_len;
	__u32 frame_back; /* relative to frame_read_off, as the three below */
	__u32 frame_code;
	__u32 frame_instr;
	__u32 frame_is_entry; /* 3.11; PY_NO_OFF: none */
	__u32 frame_owner;    /* 3.12+; PY_NO_OFF: none */
	__u32 owner_cstack;   /* the owner value of a shim frame: skipped */
	__u32 pad;
};

struct py_frame {
	__u64 code;  /* PyCodeObject address */
	__u64 instr; /* f_lasti (PY_LAYOUT_OBJECT) or the instruction pointer */
};

#define PY_STACK_TRUNCATED 1u /* more than PY_MAX_FRAMES: the root end is missing */
#define PY_STACK_READ_ERR 2u  /* a frame could not be read: the stack ends there */

struct py_stack {
	__u32 nframes;
	__u32 flags;			       /* PY_STACK_* */
	__u64 entry[PY_MAX_FRAMES / 64];       /* bit i: frame i is its eval run's entry frame */
	struct py_frame frames[PY_MAX_FRAMES]; /* leaf first */
};

#endif
