/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * unwind: the in-kernel DWARF unwinder's shared definitions (bpf/unwind.bpf.h, included by each
 * collector, and symbols/unwinder.c, which fills the maps). docs/unwinding.md has the design.
 *
 * Maps (one set per collector object):
 *  - uw_rows: array of struct unwind_row (symbols/unwind_table.h), the tables of every file,
 *    each a contiguous range [first_row, first_row + nrows), sorted by pc; written with batch
 *    updates (not mmap'ed: its pages would count in the agent's resident set).
 *  - uw_procs: hash tgid -> struct uw_proc, the executable file mappings of a process sorted by
 *    start, each with its load bias and its table's range.
 *  - uw_stacks: hash stack id -> struct uw_stack: the user stacks the unwinder produced. The id
 *    is 31 bits of a 64-bit hash of the frames (the value keeps the whole hash: a different
 *    stack under the same id is a collision, tried once more at a second id, else dropped).
 *  - uw_stats: per-CPU counters, UW_STAT_*: how every walk ended.
 */
#ifndef SLIDEOPS_BPF_UNWIND_H
#define SLIDEOPS_BPF_UNWIND_H

/* vmlinux.h defines the __u32 family for BPF; user space takes them from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames per stack, as bpf_get_stackid() (PERF_MAX_STACK_DEPTH). */
#define UW_MAX_DEPTH 127
/* Executable file mappings kept per process (more: the rest unwind by frame pointers). */
#define UW_MAX_MAPPINGS 128
#define UW_MAPPING_SEARCH_STEPS 8 /* > log2(UW_MAX_MAPPINGS) */
/* Rows map size: 1 Mi rows = 16 MiB (libc 28 k rows, libjvm 191 k, node 372 k). */
#define UW_DEFAULT_ROWS (1u << 20)
#define UW_MAX_ROWS (8u << 20)
#define UW_ROW_SEARCH_STEPS 24 /* > log2(UW_MAX_ROWS) */
/* Processes with a mapping list (hash, allocated on use: 5 KiB each). */
#define UW_DEFAULT_PROCS 4096

/* The rows of symbols/unwind_table.h (struct unwind_row; symbols/unwinder.c checks the two
 * agree), repeated because that header is not for BPF. */
struct uw_row {
	__u32 pc;
	__s32 cfa_offset;
	__s16 rbp_offset;
	__u8 cfa_type; /* UNWIND_CFA_*: uw_row_cfa() */
	__u8 rbp_type; /* UNWIND_RBP_*: 0 same, 1 at CFA + rbp_offset, 2 lost */
};

/* Bytes a row takes in uw_rows' kernel memory: array maps round values up to 8 bytes. */
#define UW_ROW_STRIDE 16

/* uw_mapping.flags */
#define UW_MAP_NO_CFI 1u   /* the file has no CFI (Go): frame pointers, by design */
#define UW_MAP_NO_TABLE 2u /* the table is missing (unreadable, refused, no room): FP */

struct uw_mapping {
	__u64 start; /* [start, end) runtime addresses */
	__u64 end;
	__u64 bias;	 /* runtime address - ELF vaddr */
	__u32 first_row; /* index of the table's first row in uw_rows */
	__u32 nrows;	 /* 0: no table (see flags) */
	__u32 flags;	 /* UW_MAP_* */
	__u32 pad;
};

struct uw_proc {
	__u32 nmaps; /* entries used in maps[], sorted by start, not overlapping */
	__u32 pad;
	struct uw_mapping maps[UW_MAX_MAPPINGS];
};

struct uw_stack {
	__u64 hash; /* of the frames: tells two stacks under one id apart */
	__u32 nframes;
	__u32 pad;
	__u64 ips[UW_MAX_DEPTH]; /* leaf first */
};

/* Per-CPU counters (uw_stats). One outcome per walk: UW_STAT_COMPLETE ... UW_STAT_BAD_FRAME. */
#define UW_STAT_WALKS 0 /* user stacks walked */
#define UW_STAT_COMPLETE \
	1		  /* reached the outermost frame (CFI "return address undefined",
				 * a zero return address, or rbp 0 in code without CFI) */
#define UW_STAT_FP_USED 2 /* of the complete ones, walked some frames by frame pointer */
#define UW_STAT_DEPTH 3	  /* cut at UW_MAX_DEPTH frames */
#define UW_STAT_NO_PROC 4 /* the process's tables were not loaded yet: frame pointers */
#define UW_STAT_NO_MAPPING \
	5		      /* a pc outside the known file mappings (JIT, vdso, dlopen'ed
				 * later): frame pointers from there */
#define UW_STAT_NO_TABLE 6    /* a file whose table is missing: frame pointers from there */
#define UW_STAT_UNSUPPORTED 7 /* a CFI rule the unwinder does not follow */
#define UW_STAT_READ_FAULT 8  /* the return address or saved rbp could not be read */
#define UW_STAT_BAD_FRAME 9   /* the stack did not grow, or a frame pointer below rsp */
#define UW_STAT_FRAMES 10     /* frames in all walks */
#define UW_STAT_DROPS 11      /* stacks not stored: uw_stacks full or an id collision */
#define UW_STAT_JAVA 12	      /* HotSpot frames walked (compiled, interpreted, stubs) */
#define UW_STAT_JAVA_LOST \
	13 /* walks that ended at a pc in a code heap: a free segment, no blob start within
	    * UW_JVM_SEGMAP_HOPS, an implausible frame */
#define UW_STAT_MAX 14

/*
 * HotSpot JVMs (uw_jvms: tgid -> struct uw_jvm; runtimes/jvm/jvm_unwind.c fills it from the
 * JVM's VMStructs, docs/jvm.md). A pc inside one of the JVM's code heaps is walked by HotSpot's
 * own frame layout instead of CFI: its code blob is found through the heap's segment map, a
 * compiled frame (nmethod, stub) is left by its blob's frame size, an interpreted one by rbp.
 */
#define UW_JVM_MAX_HEAPS 4
#define UW_JVM_SEGMAP_HOPS 24 /* segment map steps to a blob's start (OTel saw at most 9) */
#define UW_JVM_BLOB_READ 512  /* bytes of a code blob read at once: every field used is inside */
/* An interpreted frame's rbp may be at most this far above rsp (its expression stack). */
#define UW_JVM_INTERP_FRAME_MAX 65536

struct uw_jvm_heap {
	__u64 low, high; /* [low, high): the heap's reserved range */
	__u64 segmap;	 /* its segment map: one byte per segment */
	__u32 log2_segment;
	__u32 pad;
};

struct uw_jvm {
	__u32 nheaps;
	__u16 heapblock;	   /* sizeof(HeapBlock): a blob starts after its segment's header */
	__u16 blob_name;	   /* CodeBlob::_name (const char *) */
	__u16 blob_frame_size;	   /* CodeBlob::_frame_size (int, words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset (from code start) */
	__u16 blob_frame_complete_width; /* its bytes: 4 (int, JDK 17) or 2 (int16_t, JDK 25) */
	__u16 blob_code;		 /* CodeBlob::_code_begin (pointer) or _code_offset (int) */
	__u16 blob_code_is_offset;
	__u16 nm_compile_id;	/* nmethod::_compile_id (int) */
	__u16 interp_method;	/* interpreted frame: bytes below rbp of the Method* slot */
	__u16 interp_bcp;	/* ... of the bytecode pointer slot */
	__u16 interp_sender_sp; /* ... of the caller's (unextended) sp */
	struct uw_jvm_heap heaps[UW_JVM_MAX_HEAPS];
};

/*
 * A Java frame takes two entries of uw_stack.ips: UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT |
 * address, then a cookie that lets user space check the address still means what it meant:
 *  - UW_JAVA_COMPILED: the nmethod; cookie compile_id << 32 | (pc - nmethod) (pc: the exact
 *    return address, or the sampled pc of the leaf, which also sets UW_JAVA_LEAF)
 *  - UW_JAVA_INTERPRETED: the Method*; cookie the frame's bytecode pointer
 *  - UW_JAVA_STUB: a code blob that is no nmethod (stubs, adapters); cookie pc - blob
 * User addresses are below 2^47, so bit 63 never marks a native frame.
 */
#define UW_JAVA_TAG (1ull << 63)
#define UW_JAVA_KIND_SHIFT 56
#define UW_JAVA_ADDR_MASK ((1ull << 56) - 1)
#define UW_JAVA_COMPILED 1ull
#define UW_JAVA_INTERPRETED 2ull
#define UW_JAVA_STUB 3ull
#define UW_JAVA_LEAF (1u << 31) /* in a cookie's pc offset: the sampled pc, not a return address */

/* Where a row puts the CFA and the caller's registers (shared by the BPF unwinder and the
 * user-space reference unwinder of symbols/unwinder.c; pure, no memory access). */
#define UW_STEP_CFA 0	 /* CFA computed: return address at CFA - 8 */
#define UW_STEP_FP 1	 /* no CFI: CFA = rbp + 16, rbp saved at CFA - 16 */
#define UW_STEP_SIGNAL 2 /* sigcontext at *cfa: rbp +80, rsp +120, rip +128 */
#define UW_STEP_END 3	 /* outermost frame: the stack is complete */
#define UW_STEP_UNSUPPORTED 4

/* Offsets in the x86-64 struct sigcontext (the rt_sigframe's uc_mcontext). */
#define UW_SIGCONTEXT_RBP 80
#define UW_SIGCONTEXT_RSP 120
#define UW_SIGCONTEXT_RIP 128

/*
 * The CFA of a frame at @ip with registers @sp, @bp under a row of type @cfa_type and offset
 * @cfa_offset (a NULL row is a pc without CFI: pass UNWIND_CFA_NONE). Returns UW_STEP_*; the
 * CFA (or, for a signal frame, the address of the sigcontext) in *@cfa.
 */
static inline int uw_row_cfa(__u32 cfa_type, __s32 cfa_offset, __u64 ip, __u64 sp, __u64 bp,
			     __u64 *cfa)
{
	switch (cfa_type) {
	case 0: /* UNWIND_CFA_NONE */
		*cfa = bp + 16;
		return UW_STEP_FP;
	case 1: /* UNWIND_CFA_RSP */
		*cfa = sp + (__s64)cfa_offset;
		return UW_STEP_CFA;
	case 2: /* UNWIND_CFA_RBP */
		*cfa = bp + (__s64)cfa_offset;
		return UW_STEP_CFA;
	case 3: /* UNWIND_CFA_PLT: +8 once the entry's push ran */
		*cfa = sp + 8 + ((__s64)(ip & 15) >= cfa_offset ? 8 : 0);
		return UW_STEP_CFA;
	case 4: /* UNWIND_CFA_SIGNAL */
		*cfa = sp + (__s64)cfa_offset;
		return UW_STEP_SIGNAL;
	case 5: /* UNWIND_CFA_END */
		return UW_STEP_END;
	default:
		return UW_STEP_UNSUPPORTED;
	}
}

/* Folds one frame into a stack's hash (the stack id is derived from it). */
static inline __u64 uw_hash_frame(__u64 h, __u64 ip)
{
	h ^= ip;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The two ids a stack of hash @h may take (31 bits: ids are >= 0, errors < 0). */
static inline __s32 uw_stack_id(__u64 h, int second)
{
	return (__s32)((second ? (h >> 33) : h) & 0x7fffffff);
}

#endif
