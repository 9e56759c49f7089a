// SPDX-License-Identifier: Apache-2.0
/*
 * What the in-kernel unwinder gets for a HotSpot JVM (runtimes/jvm/jvm_unwind.h), from a fake
 * memory image of the CodeCache: the static _heaps pointer, the GrowableArray<CodeHeap*> and
 * each CodeHeap with its _memory and _segmap VirtualSpaces, at small offsets of our own (the
 * real ones come from VMStructs). One mutation per row: a starting JVM (no array, no heap), too
 * many heaps, a missing entry, heaps and offsets out of bounds, reads into nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_unwind.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define JVM_IMG_FAIL() fail()
#include "tests/unit/jvm_image.h"

#define BASE 0x7f0000010000ull
#define IMG_SIZE (16u << 10)

/* CodeHeap: _memory at 16, _segmap at 48, _log2_segment_size at 80; VirtualSpace: low 0,
 * high 8; GrowableArray: _len 0, _data 8. */
#define HEAP_SIZE 96

static void hs_init(struct jvm_hotspot *hs, uint64_t heaps_static)
{
	memset(hs, 0, sizeof(*hs));
	hs_set(hs, JVM_HS_CODECACHE_HEAPS, heaps_static);
	hs_set(hs, JVM_HS_CODEHEAP_MEMORY, 16);
	hs_set(hs, JVM_HS_CODEHEAP_SEGMAP, 48);
	hs_set(hs, JVM_HS_CODEHEAP_LOG2_SEGMENT, 80);
	hs_set(hs, JVM_HS_VIRTUALSPACE_LOW, 0);
	hs_set(hs, JVM_HS_VIRTUALSPACE_HIGH, 8);
	hs_set(hs, JVM_HS_GROWABLE_LEN, 0);
	hs_set(hs, JVM_HS_GROWABLE_DATA, 8);
	hs_set(hs, JVM_HS_HEAPBLOCK_SIZE, 16);
	hs_set(hs, JVM_HS_CODEBLOB_NAME, 8);
	hs_set(hs, JVM_HS_CODEBLOB_FRAME_SIZE, 0x2c);
	hs_set(hs, JVM_HS_CODEBLOB_CODE, 0x24);
	hs_set(hs, JVM_HS_CODEBLOB_FRAME_COMPLETE, 0x28);
	hs_set(hs, JVM_HS_NMETHOD_COMPILE_ID, 0xd0);
	hs->is_offset |= 1ull << JVM_HS_CODEBLOB_CODE;
}

static uint64_t heap_low(size_t i)
{
	return 0x7f1000000000ull + (i << 28);
}

enum uw_case {
	UW_OK,
	UW_NO_HEAPS,
	UW_NULL_ARRAY,
	UW_NO_FOUND,
	UW_LOG2_LOW,
	UW_LOG2_HIGH,
	UW_HIGH_EQ_LOW,
	UW_HIGH_BELOW_LOW,
	UW_TOO_LARGE,
	UW_NO_SEGMAP,
	UW_BLOB_OFF,
	UW_HEAPBLOCK,
	UW_FAULT_STATIC,
	UW_FAULT_ARRAY,
	UW_FAULT_HEAP,
	UW_NULL_HEAP,
	UW_NEG_LEN,
	UW_COMPLETE_16,	     /* JDK 25: _frame_complete_offset is an int16_t */
	UW_COMPLETE_16_LAST, /* ... in the last two bytes the kernel reads of a blob */
	UW_COMPLETE_32_LAST, /* an int there runs past them */
	UW_COMPLETE_8,	     /* a width no JDK uses */
};

struct build_row {
	const char *what;
	enum uw_case c;
	int nheaps;
	int ret;
};

static const struct build_row build_rows[] = {
	{ "one heap", UW_OK, 1, 0 },
	{ "three heaps", UW_OK, 3, 0 },
	{ "four heaps (the most)", UW_OK, 4, 0 },
	{ "no heaps yet", UW_NO_HEAPS, 0, -EAGAIN },
	{ "negative length", UW_NEG_LEN, 1, -EAGAIN },
	{ "NULL array", UW_NULL_ARRAY, 1, -EAGAIN },
	{ "five heaps", UW_OK, 5, -E2BIG },
	{ "missing found bit", UW_NO_FOUND, 1, -ENOTSUP },
	{ "log2 below 4", UW_LOG2_LOW, 1, -EINVAL },
	{ "log2 above 16", UW_LOG2_HIGH, 3, -EINVAL },
	{ "high == low", UW_HIGH_EQ_LOW, 1, -EINVAL },
	{ "high < low", UW_HIGH_BELOW_LOW, 1, -EINVAL },
	{ "range too large", UW_TOO_LARGE, 1, -EINVAL },
	{ "no segment map", UW_NO_SEGMAP, 1, -EINVAL },
	{ "offset past UW_JVM_BLOB_READ", UW_BLOB_OFF, 1, -EINVAL },
	{ "HeapBlock too large", UW_HEAPBLOCK, 1, -EINVAL },
	{ "read fault: _heaps", UW_FAULT_STATIC, 1, -EFAULT },
	{ "read fault: the array", UW_FAULT_ARRAY, 1, -EFAULT },
	{ "read fault: a heap", UW_FAULT_HEAP, 2, -EFAULT },
	{ "NULL heap", UW_NULL_HEAP, 2, -EINVAL },
	{ "frame complete: int16_t", UW_COMPLETE_16, 1, 0 },
	{ "frame complete: int16_t, last bytes", UW_COMPLETE_16_LAST, 1, 0 },
	{ "frame complete: int, past the read", UW_COMPLETE_32_LAST, 1, -EINVAL },
	{ "frame complete: 8 bytes", UW_COMPLETE_8, 1, -EINVAL },
};

/* The width and offset of _frame_complete_offset case @c sets (0: hs_init's). */
static void complete_case(enum uw_case c, struct jvm_hotspot *hs)
{
	if (c == UW_COMPLETE_16 || c == UW_COMPLETE_16_LAST)
		hs->width[JVM_HS_CODEBLOB_FRAME_COMPLETE] = 2;
	if (c == UW_COMPLETE_32_LAST)
		hs->width[JVM_HS_CODEBLOB_FRAME_COMPLETE] = 4;
	if (c == UW_COMPLETE_8)
		hs->width[JVM_HS_CODEBLOB_FRAME_COMPLETE] = 8;
	if (c == UW_COMPLETE_16_LAST || c == UW_COMPLETE_32_LAST)
		hs->val[JVM_HS_CODEBLOB_FRAME_COMPLETE] = UW_JVM_BLOB_READ - 2;
}

static unsigned int complete_width(enum uw_case c)
{
	return c == UW_COMPLETE_16 || c == UW_COMPLETE_16_LAST ? 2 : 4;
}

static void test_build(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(build_rows); i++) {
		const struct build_row *r = &build_rows[i];
		struct img *im = img_new(BASE, IMG_SIZE, false);
		uint64_t stat, arr, data, heap[8];
		struct jvm_hotspot hs;
		struct uw_jvm out;
		size_t k, nh = r->nheaps > 0 ? (size_t)r->nheaps : 0;
		int ret;

		print_message("unwind: %s\n", r->what);
		assert_non_null(im);
		stat = img_alloc(im, 8);
		arr = img_alloc(im, 16);
		data = img_alloc(im, 8 * 8);
		img_w64(im, stat, r->c == UW_NULL_ARRAY ? 0 : arr);
		img_w32(im, arr, r->c == UW_NEG_LEN ? (uint32_t)-1 : (uint32_t)nh);
		img_w64(im, arr + 8, r->c == UW_FAULT_ARRAY ? 0x1000 : data);
		for (k = 0; k < nh; k++) {
			heap[k] = img_alloc(im, HEAP_SIZE);
			img_w64(im, data + 8 * k, heap[k]);
			img_w64(im, heap[k] + 16, heap_low(k));
			img_w64(im, heap[k] + 16 + 8, heap_low(k) + (64u << 20));
			img_w64(im, heap[k] + 48, heap_low(k) + (200u << 20));
			img_w32(im, heap[k] + 80, (uint32_t)(6 + k));
		}
		hs_init(&hs, stat);
		switch (r->c) {
		case UW_OK:
		case UW_NO_HEAPS:
		case UW_NULL_ARRAY:
		case UW_NEG_LEN:
		case UW_FAULT_ARRAY:
			break;
		case UW_NO_FOUND:
			hs.found &= ~(1ull << JVM_HS_CODEHEAP_SEGMAP);
			break;
		case UW_LOG2_LOW:
			img_w32(im, heap[0] + 80, 3);
			break;
		case UW_LOG2_HIGH:
			img_w32(im, heap[2] + 80, 17);
			break;
		case UW_HIGH_EQ_LOW:
			img_w64(im, heap[0] + 24, heap_low(0));
			break;
		case UW_HIGH_BELOW_LOW:
			img_w64(im, heap[0] + 24, heap_low(0) - 4096);
			break;
		case UW_TOO_LARGE:
			img_w64(im, heap[0] + 24, heap_low(0) + JVM_UNWIND_HEAP_MAX + 1);
			break;
		case UW_NO_SEGMAP:
			img_w64(im, heap[0] + 48, 0);
			break;
		case UW_BLOB_OFF:
			hs.val[JVM_HS_NMETHOD_COMPILE_ID] = UW_JVM_BLOB_READ -
							    2; /* an int past it */
			break;
		case UW_HEAPBLOCK:
			hs.val[JVM_HS_HEAPBLOCK_SIZE] = 65;
			break;
		case UW_FAULT_STATIC:
			hs.val[JVM_HS_CODECACHE_HEAPS] = BASE + IMG_SIZE * 4;
			break;
		case UW_FAULT_HEAP:
			img_w64(im, data + 8, 0x7ff000000000ull);
			break;
		case UW_NULL_HEAP:
			img_w64(im, data + 8, 0);
			break;
		default:
			complete_case(r->c, &hs);
			break;
		}
		memset(&out, 0xa5, sizeof(out));
		ret = jvm_unwind_build(&hs, img_read, im, &out);
		assert_int_equal(ret, r->ret);
		if (!ret) {
			assert_int_equal(out.nheaps, nh);
			for (k = 0; k < nh; k++) {
				assert_int_equal(out.heaps[k].low, heap_low(k));
				assert_int_equal(out.heaps[k].high, heap_low(k) + (64u << 20));
				assert_int_equal(out.heaps[k].segmap, heap_low(k) + (200u << 20));
				assert_int_equal(out.heaps[k].log2_segment, 6 + k);
				assert_int_equal(out.heaps[k].pad, 0);
			}
			for (; k < UW_JVM_MAX_HEAPS; k++) {
				assert_int_equal(out.heaps[k].low, 0);
				assert_int_equal(out.heaps[k].high, 0);
			}
			assert_int_equal(out.heapblock, 16);
			assert_int_equal(out.blob_name, 8);
			assert_int_equal(out.blob_frame_size, 0x2c);
			assert_int_equal(out.blob_frame_complete,
					 r->c == UW_COMPLETE_16_LAST ? UW_JVM_BLOB_READ - 2 : 0x28);
			assert_int_equal(out.blob_frame_complete_width, complete_width(r->c));
			assert_int_equal(out.blob_code, 0x24);
			assert_int_equal(out.blob_code_is_offset, 1);
			assert_int_equal(out.nm_compile_id, 0xd0);
			assert_int_equal(out.interp_method, 24);
			assert_int_equal(out.interp_bcp, 64);
			assert_int_equal(out.interp_sender_sp, 8);
		}
		free(im);
	}
}

/* Every entry the walk needs is checked: dropping any one of them is -ENOTSUP. */
static void test_each_needed(void **state)
{
	static const enum jvm_hs ids[] = {
		JVM_HS_CODECACHE_HEAPS,		JVM_HS_CODEHEAP_MEMORY,
		JVM_HS_CODEHEAP_SEGMAP,		JVM_HS_CODEHEAP_LOG2_SEGMENT,
		JVM_HS_VIRTUALSPACE_LOW,	JVM_HS_VIRTUALSPACE_HIGH,
		JVM_HS_GROWABLE_DATA,		JVM_HS_GROWABLE_LEN,
		JVM_HS_HEAPBLOCK_SIZE,		JVM_HS_CODEBLOB_NAME,
		JVM_HS_CODEBLOB_FRAME_SIZE,	JVM_HS_CODEBLOB_CODE,
		JVM_HS_CODEBLOB_FRAME_COMPLETE, JVM_HS_NMETHOD_COMPILE_ID,
	};
	struct jvm_hotspot hs;
	struct uw_jvm out;
	static uint8_t mem[IMG_SIZE];
	struct img im = { .mem = mem, .cap = sizeof(mem), .base = BASE };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		hs_init(&hs, BASE);
		hs.found &= ~(1ull << ids[i]);
		assert_int_equal(jvm_unwind_build(&hs, img_read, &im, &out), -ENOTSUP);
	}
	/* the blob code pointer (JDK 17) is no offset */
	hs_init(&hs, BASE);
	hs.is_offset = 0;
	im.used = 8; /* _heaps: NULL */
	assert_int_equal(jvm_unwind_build(&hs, img_read, &im, &out), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_each_needed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
