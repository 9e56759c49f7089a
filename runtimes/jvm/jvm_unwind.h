/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_unwind: what the in-kernel unwinder needs to walk a HotSpot JVM's Java frames (struct
 * uw_jvm of bpf/unwind.h, bpf/hotspot.bpf.h), from the JVM's VMStructs (jvm_hotspot) and its
 * code heaps read from its memory: each heap's reserved range, segment map and segment size,
 * the code blob's field offsets, and the interpreter's frame slots (x86-64). Pure over a
 * memory-read callback.
 */
#ifndef SLIDEOPS_JVM_UNWIND_H
#define SLIDEOPS_JVM_UNWIND_H

#include "bpf/unwind.h"
#include "runtimes/jvm/jvm_vmstructs.h"

/* A heap range larger than this is absurd: refused. */
#define JVM_UNWIND_HEAP_MAX (1ull << 34)

/*
 * Fills @out for the JVM whose VMStructs gave @hs, reading its CodeCache through @read.
 * Returns 0; -ENOTSUP (an entry the walk needs is missing from @hs), -EAGAIN (no code heap
 * yet: the JVM is starting), -E2BIG (more than UW_JVM_MAX_HEAPS heaps), -EINVAL (a heap or
 * offset out of bounds: an offset past UW_JVM_BLOB_READ, a segment size outside 2^4..2^16, a
 * range upside down or larger than JVM_UNWIND_HEAP_MAX), or @read's -errno.
 */
int jvm_unwind_build(const struct jvm_hotspot *hs, jvm_read_fn_t read, void *ctx,
		     struct uw_jvm *out);

#endif
