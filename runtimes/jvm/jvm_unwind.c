// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_unwind.h"

#include <errno.h>
#include <string.h>

/* The x86-64 interpreter's frame slots, in words below rbp (frame_x86.hpp: sender sp -1,
 * Method* -3, bytecode pointer -8), the same in JDK 17 and 25. */
#define INTERP_SENDER_SP 1
#define INTERP_METHOD 3
#define INTERP_BCP 8

/* The entries jvm_unwind_build() reads. */
static const enum jvm_hs needed[] = {
	JVM_HS_CODECACHE_HEAPS,		JVM_HS_CODEHEAP_MEMORY,	    JVM_HS_CODEHEAP_SEGMAP,
	JVM_HS_CODEHEAP_LOG2_SEGMENT,	JVM_HS_VIRTUALSPACE_LOW,    JVM_HS_VIRTUALSPACE_HIGH,
	JVM_HS_GROWABLE_DATA,		JVM_HS_GROWABLE_LEN,	    JVM_HS_HEAPBLOCK_SIZE,
	JVM_HS_CODEBLOB_NAME,		JVM_HS_CODEBLOB_FRAME_SIZE, JVM_HS_CODEBLOB_CODE,
	JVM_HS_CODEBLOB_FRAME_COMPLETE, JVM_HS_NMETHOD_COMPILE_ID,
};

static int read_u64(jvm_read_fn_t read, void *ctx, uint64_t addr, void *v)
{
	return read(ctx, addr, v, sizeof(uint64_t));
}

/* An offset into the blob head the BPF side reads. */
static int blob_offset(const struct jvm_hotspot *hs, enum jvm_hs id, unsigned int width,
		       uint16_t *out)
{
	if (hs->val[id] > UW_JVM_BLOB_READ - width)
		return -EINVAL;
	*out = (uint16_t)hs->val[id];
	return 0;
}

static int read_heap(const struct jvm_hotspot *hs, jvm_read_fn_t read, void *ctx, uint64_t heap,
		     struct uw_jvm_heap *out)
{
	uint64_t mem = heap + hs->val[JVM_HS_CODEHEAP_MEMORY];
	uint64_t seg = heap + hs->val[JVM_HS_CODEHEAP_SEGMAP];
	uint32_t log2 = 0;
	int err;

	err = read_u64(read, ctx, mem + hs->val[JVM_HS_VIRTUALSPACE_LOW], &out->low);
	if (!err)
		err = read_u64(read, ctx, mem + hs->val[JVM_HS_VIRTUALSPACE_HIGH], &out->high);
	if (!err)
		err = read_u64(read, ctx, seg + hs->val[JVM_HS_VIRTUALSPACE_LOW], &out->segmap);
	if (!err)
		err = read(ctx, heap + hs->val[JVM_HS_CODEHEAP_LOG2_SEGMENT], &log2, sizeof(log2));
	if (err)
		return err;
	if (out->high <= out->low || out->high - out->low > JVM_UNWIND_HEAP_MAX || !out->segmap ||
	    log2 < 4 || log2 > 16)
		return -EINVAL;
	out->log2_segment = log2;
	out->pad = 0;
	return 0;
}

/* CodeBlob::_frame_complete_offset, an int up to JDK 22 and an int16_t since (width 0: a
 * table that does not say, taken as an int). */
static int frame_complete(const struct jvm_hotspot *hs, struct uw_jvm *out)
{
	unsigned int width = hs->width[JVM_HS_CODEBLOB_FRAME_COMPLETE];

	if (!width)
		width = 4;
	if (width != 2 && width != 4)
		return -EINVAL;
	out->blob_frame_complete_width = (uint16_t)width;
	return blob_offset(hs, JVM_HS_CODEBLOB_FRAME_COMPLETE, width, &out->blob_frame_complete);
}

static int fill_offsets(const struct jvm_hotspot *hs, struct uw_jvm *out)
{
	int err;

	if (hs->val[JVM_HS_HEAPBLOCK_SIZE] > 64)
		return -EINVAL;
	out->heapblock = (uint16_t)hs->val[JVM_HS_HEAPBLOCK_SIZE];
	err = blob_offset(hs, JVM_HS_CODEBLOB_NAME, 8, &out->blob_name);
	if (!err)
		err = blob_offset(hs, JVM_HS_CODEBLOB_FRAME_SIZE, 4, &out->blob_frame_size);
	if (!err)
		err = frame_complete(hs, out);
	if (!err)
		err = blob_offset(hs, JVM_HS_CODEBLOB_CODE, 8, &out->blob_code);
	if (!err)
		err = blob_offset(hs, JVM_HS_NMETHOD_COMPILE_ID, 4, &out->nm_compile_id);
	out->blob_code_is_offset = (hs->is_offset >> JVM_HS_CODEBLOB_CODE) & 1;
	out->interp_method = 8 * INTERP_METHOD;
	out->interp_bcp = 8 * INTERP_BCP;
	out->interp_sender_sp = 8 * INTERP_SENDER_SP;
	return err;
}

int jvm_unwind_build(const struct jvm_hotspot *hs, jvm_read_fn_t read, void *ctx,
		     struct uw_jvm *out)
{
	uint64_t arr, data, heap;
	int32_t len = 0;
	size_t i;
	int err;

	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!(hs->found >> needed[i] & 1))
			return -ENOTSUP;
	memset(out, 0, sizeof(*out));
	err = fill_offsets(hs, out);
	if (err)
		return err;
	err = read_u64(read, ctx, hs->val[JVM_HS_CODECACHE_HEAPS], &arr);
	if (err)
		return err;
	if (!arr)
		return -EAGAIN;
	err = read(ctx, arr + hs->val[JVM_HS_GROWABLE_LEN], &len, sizeof(len));
	if (!err)
		err = read_u64(read, ctx, arr + hs->val[JVM_HS_GROWABLE_DATA], &data);
	if (err)
		return err;
	if (len <= 0)
		return -EAGAIN;
	if (len > UW_JVM_MAX_HEAPS)
		return -E2BIG;
	for (i = 0; i < (size_t)len; i++) {
		err = read_u64(read, ctx, data + 8 * i, &heap);
		if (!err)
			err = heap ? read_heap(hs, read, ctx, heap, &out->heaps[i]) : -EINVAL;
		if (err)
			return err;
	}
	out->nheaps = (uint32_t)len;
	return 0;
}
