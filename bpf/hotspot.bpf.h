/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HotSpot step of the in-kernel unwinder (bpf/unwind.bpf.h includes it; docs/jvm.md): a pc
 * inside a JVM's code heap has no CFI, so its frame is left by HotSpot's own layout.
 *
 * The code blob that holds the pc is found through the heap's segment map (one byte per
 * segment: 0 at a blob's first segment, else how many segments to step back, 0xff free); its
 * first UW_JVM_BLOB_READ bytes are read at once, and the first four bytes of its name say what
 * it is: "Inte" (the template interpreter), "nmet" or "nati" (a compiled Java method or a
 * native wrapper), anything else a stub. Then:
 *  - interpreted: rbp is the frame pointer; the Method*, bytecode pointer and caller's sp sit
 *    at fixed slots below it, the caller's rbp and return address at rbp and rbp + 8;
 *  - compiled or stub with a frame size: the caller's frame starts at sp + frame size, with the
 *    return address and the saved rbp in its last two words; at the leaf, a pc in the prologue
 *    or the epilogue (sp not yet or no longer where the body keeps it) takes the return address
 *    from the top of the stack instead, when the body's rule gives none that points at code;
 *  - frameless stubs (adapters, vtable chunks): at the leaf the return address is on top of the
 *    stack; elsewhere they keep rbp (the call stub), a frame-pointer step.
 * Every return address must point at code (a code heap or an executable file mapping) or the
 * walk ends (UW_STAT_JAVA_LOST).
 */
#ifndef SLIDEOPS_BPF_HOTSPOT_BPF_H
#define SLIDEOPS_BPF_HOTSPOT_BPF_H

/* The first four bytes of a blob's name, little-endian. */
#define UW_JVM_NAME_INTERP 0x65746e49u	/* "Inte" */
#define UW_JVM_NAME_NMETHOD 0x74656d6eu /* "nmet" */
#define UW_JVM_NAME_NATIVE 0x6974616eu	/* "nati" */

/* Words read around an interpreted frame's rbp: [rbp - 8 * (UW_JVM_INTERP_WORDS - 2), rbp + 16). */
#define UW_JVM_INTERP_WORDS 16

/* The index of the heap of @j holding @pc, or -1. */
static __always_inline int uw_jvm_heap_of(const struct uw_jvm *j, __u64 pc)
{
	int h;

	for (h = 0; h < UW_JVM_MAX_HEAPS; h++)
		if (h < j->nheaps && j->heaps[h].low <= pc && pc < j->heaps[h].high)
			return h;
	return -1;
}

/* 1 when @a may be a return address: inside a code heap of @j or an executable file mapping
 * of @proc (either may be NULL). A global function, checked once by the verifier rather than at
 * each of its four callers (see uw_jvm_frame()). */
__noinline int uw_is_code(struct uw_proc *proc, struct uw_jvm *j, __u64 a)
{
	if (!a || a >= (1ull << 47))
		return 0;
	if (j && uw_jvm_heap_of(j, a) >= 0)
		return 1;
	return proc && uw_find_mapping(proc, a) ? 1 : 0;
}

static __always_inline bool uw_code_addr(struct uw_loop *l, __u64 a)
{
	return uw_is_code(l->proc, l->jvm, a) != 0;
}

static __always_inline __u64 uw_blob_u64(struct uw_state *s, __u32 off)
{
	__u64 v = 0;

	if (off > UW_JVM_BLOB_READ - 8)
		return 0;
	__builtin_memcpy(&v, &s->blob[off & (UW_JVM_BLOB_READ - 1)], sizeof(v));
	return v;
}

static __always_inline __s32 uw_blob_s32(struct uw_state *s, __u32 off)
{
	__s32 v = 0;

	if (off > UW_JVM_BLOB_READ - 4)
		return 0;
	__builtin_memcpy(&v, &s->blob[off & (UW_JVM_BLOB_READ - 1)], sizeof(v));
	return v;
}

static __always_inline __s32 uw_blob_s16(struct uw_state *s, __u32 off)
{
	__s16 v = 0;

	if (off > UW_JVM_BLOB_READ - 2)
		return 0;
	__builtin_memcpy(&v, &s->blob[off & (UW_JVM_BLOB_READ - 1)], sizeof(v));
	return v;
}

/* Appends @v to the stack. Returns 0, or 1 when it is full. */
static __always_inline int uw_push_word(struct uw_state *s, __u64 v)
{
	__u32 idx = s->depth;

	/* keeps the compiler from folding this bound into the caller's (the verifier needs it) */
	asm volatile("" : "+r"(idx));
	if (idx >= UW_MAX_DEPTH)
		return 1;
	s->stack.ips[idx] = v;
	s->depth = idx + 1;
	s->hash = uw_hash_frame(s->hash, v);
	return 0;
}

/* Records a Java frame (two entries). Returns 0, or 1 once the stack is full. */
static __always_inline int uw_push_java(struct uw_state *s, __u64 kind, __u64 addr, __u64 cookie)
{
	if (s->depth + 2 > UW_MAX_DEPTH ||
	    uw_push_word(s,
			 UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | (addr & UW_JAVA_ADDR_MASK)) ||
	    uw_push_word(s, cookie)) {
		s->outcome = UW_STAT_DEPTH;
		return 1;
	}
	return 0;
}

static __always_inline long uw_java_lost(struct uw_state *s)
{
	uw_stat_add(UW_STAT_JAVA_LOST, 1);
	return uw_fail(s, UW_STAT_BAD_FRAME);
}

/* The start of the blob holding @pc in heap @hp, through the segment map. 0: none. */
static __always_inline __u64 uw_jvm_find_blob(const struct uw_jvm *j, const struct uw_jvm_heap *hp,
					      __u64 pc)
{
	__u32 shift = hp->log2_segment & 31;
	__u64 seg = (pc - hp->low) >> shift;
	__u8 tag = 0;
	int k;

	for (k = 0; k < UW_JVM_SEGMAP_HOPS; k++) {
		if (bpf_probe_read_user(&tag, 1, (void *)(hp->segmap + seg)))
			return 0;
		if (tag == 0xff)
			return 0;
		if (!tag)
			return hp->low + (seg << shift) + j->heapblock;
		if (tag > seg)
			return 0;
		seg -= tag;
	}
	return 0;
}

/* The leaf's return address on top of the stack (a prologue, an epilogue, a frameless stub):
 * [sp], or [sp + 8] under a saved rbp. Returns 0 and steps, or -1. */
static __always_inline long uw_jvm_top_of_stack(struct uw_loop *l, struct uw_state *s)
{
	__u64 w[2] = {};

	if (bpf_probe_read_user(w, sizeof(w), (void *)s->sp))
		return -1;
	if (uw_code_addr(l, w[0])) {
		s->ip = w[0];
		s->sp += 8;
	} else if (uw_code_addr(l, w[1])) {
		s->ip = w[1];
		s->bp = w[0];
		s->sp += 16;
	} else {
		return -1;
	}
	s->adjust = 1;
	return 0;
}

/* Leaves a compiled frame or stub of @frame_size words whose code starts at @code. */
static __always_inline long uw_jvm_sized_step(struct uw_loop *l, struct uw_state *s, __u64 code,
					      __s32 frame_complete, __s32 frame_size)
{
	__u64 w[2] = {}, cfa;
	bool leaf = !s->adjust;

	if (frame_size <= 0 || frame_size > UW_JVM_INTERP_FRAME_MAX / 8) {
		if (leaf && !uw_jvm_top_of_stack(l, s))
			return 0;
		return uw_fp_step(s, 0);
	}
	if (leaf && frame_complete > 0 && s->ip < code + (__u64)frame_complete &&
	    !uw_jvm_top_of_stack(l, s))
		return 0;
	cfa = s->sp + (__u64)frame_size * 8;
	if (bpf_probe_read_user(w, sizeof(w), (void *)(cfa - 16)))
		return uw_java_lost(s);
	if (!uw_code_addr(l, w[1])) {
		if (leaf && !uw_jvm_top_of_stack(l, s))
			return 0;
		return uw_java_lost(s);
	}
	s->ip = w[1];
	s->bp = w[0];
	s->sp = cfa;
	s->adjust = 1;
	return 0;
}

/* Leaves an interpreted frame (rbp its frame pointer), recording its Method* and bcp. */
static __always_inline long uw_jvm_interp_step(struct uw_loop *l, struct uw_state *s)
{
	const struct uw_jvm *j = l->jvm;
	__u64 fp = s->bp, base, method, bcp, sender_sp;
	__u32 im = j->interp_method / 8, ib = j->interp_bcp / 8, is = j->interp_sender_sp / 8;

	if (fp < s->sp || fp - s->sp > UW_JVM_INTERP_FRAME_MAX || (fp & 7))
		return uw_java_lost(s);
	if (!im || !ib || !is || im > UW_JVM_INTERP_WORDS - 2 || ib > UW_JVM_INTERP_WORDS - 2 ||
	    is > UW_JVM_INTERP_WORDS - 2)
		return uw_java_lost(s);
	base = fp - 8 * (UW_JVM_INTERP_WORDS - 2);
	if (bpf_probe_read_user(s->jwords, sizeof(s->jwords), (void *)base))
		return uw_java_lost(s);
	/* slot k words below rbp is jwords[UW_JVM_INTERP_WORDS - 2 - k] */
	method = s->jwords[(UW_JVM_INTERP_WORDS - 2 - im) & (UW_JVM_INTERP_WORDS - 1)];
	bcp = s->jwords[(UW_JVM_INTERP_WORDS - 2 - ib) & (UW_JVM_INTERP_WORDS - 1)];
	sender_sp = s->jwords[(UW_JVM_INTERP_WORDS - 2 - is) & (UW_JVM_INTERP_WORDS - 1)];
	if (uw_push_java(s, UW_JAVA_INTERPRETED, method, bcp))
		return 1;
	if (!s->jwords[UW_JVM_INTERP_WORDS - 1])
		return uw_finish(s);
	if (!uw_code_addr(l, s->jwords[UW_JVM_INTERP_WORDS - 1]))
		return uw_java_lost(s);
	s->ip = s->jwords[UW_JVM_INTERP_WORDS - 1];
	s->bp = s->jwords[UW_JVM_INTERP_WORDS - 2];
	s->sp = sender_sp >= fp + 16 ? sender_sp : fp + 16;
	s->adjust = 1;
	return 0;
}

/*
 * One frame at pc @pc (s->ip less the return-address adjustment) of a process with a JVM.
 * Returns -1 when @pc is in none of its code heaps (the caller walks on as before), else the
 * loop's verdict: 0 to go on, 1 to stop.
 */
static __always_inline long uw_jvm_step(struct uw_loop *l, struct uw_state *s, __u64 pc)
{
	const struct uw_jvm *j = l->jvm;
	__u64 blob, name, code, kind;
	__u32 tag = 0;
	int h;

	h = uw_jvm_heap_of(j, pc);
	if (h < 0)
		return -1;
	uw_stat_add(UW_STAT_JAVA, 1);
	blob = uw_jvm_find_blob(j, &j->heaps[h & (UW_JVM_MAX_HEAPS - 1)], pc);
	if (!blob || bpf_probe_read_user(s->blob, UW_JVM_BLOB_READ, (void *)blob))
		return uw_java_lost(s);
	name = uw_blob_u64(s, j->blob_name);
	if (!name || bpf_probe_read_user(&tag, sizeof(tag), (void *)name))
		return uw_java_lost(s);
	if (tag == UW_JVM_NAME_INTERP)
		return uw_jvm_interp_step(l, s);
	code = uw_blob_u64(s, j->blob_code);
	if (j->blob_code_is_offset)
		code = blob + (__u32)uw_blob_s32(s, j->blob_code);
	kind = (tag == UW_JVM_NAME_NMETHOD || tag == UW_JVM_NAME_NATIVE) ? UW_JAVA_COMPILED :
									   UW_JAVA_STUB;
	if (uw_push_java(s, kind, blob,
			 (kind == UW_JAVA_COMPILED ?
				  (__u64)(__u32)uw_blob_s32(s, j->nm_compile_id) << 32 :
				  0) |
				 ((__u32)(s->ip - blob) & ~UW_JAVA_LEAF) |
				 (s->adjust ? 0 : UW_JAVA_LEAF)))
		return 1;
	return uw_jvm_sized_step(l, s, code,
				 j->blob_frame_complete_width == 2 ?
					 uw_blob_s16(s, j->blob_frame_complete) :
					 uw_blob_s32(s, j->blob_frame_complete),
				 uw_blob_s32(s, j->blob_frame_size));
}

/*
 * uw_jvm_step() as a global function: the verifier checks it once, on its own, instead of along
 * every path of uw_step() that reaches it (inlined, it made the sampler's load about 25 times
 * slower: 920,000 instructions processed against 35,000 without it, seconds of CPU at every
 * load). Its pointer arguments may be NULL as far as the verifier knows: @s and @j are checked,
 * @proc may be NULL (uw_code_addr() checks it).
 */
__noinline int uw_jvm_frame(struct uw_state *s, struct uw_proc *proc, struct uw_jvm *j, __u64 pc)
{
	struct uw_loop l = { .s = s, .proc = proc, .jvm = j };

	if (!s || !j)
		return -1;
	return (int)uw_jvm_step(&l, s, pc);
}

#endif
