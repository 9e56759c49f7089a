/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake JVM memory image for the tests of runtimes/jvm/ that read one through a jvm_read_fn_t:
 * a zeroed buffer at an address of the test's choosing, handed out by a bump allocator and
 * written field by field, and VMStructs entries (struct jvm_hotspot) set by hand. Included by
 * tests/unit/test_jvm_names.c, tests/unit/test_jvm_unwind.c and tests/fuzz/fuzz_jvm_names.c.
 * Header-only (static inline), libc only: no cmocka, so that the libFuzzer target can include it
 * too. A failed bounds check calls JVM_IMG_FAIL(), abort() unless the includer defines it first
 * (the cmocka tests: fail()).
 */
#ifndef SLIDEOPS_TESTS_UNIT_JVM_IMAGE_H
#define SLIDEOPS_TESTS_UNIT_JVM_IMAGE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jvm/jvm_vmstructs.h"

#ifndef JVM_IMG_FAIL
#define JVM_IMG_FAIL() abort()
#endif

/* --- the image -------------------------------------------------------------------------------- */

struct img {
	uint8_t *mem;	/* cap bytes, zero where nothing was written */
	size_t cap;
	size_t used;	/* handed out by img_alloc(), from mem[0] */
	uint64_t base;	/* the address of mem[0] */
	bool map_all;	/* reads reach all cap bytes (as a mapped page does), not only the used */
};

/* A zeroed image of @cap bytes at @base, in one allocation: free() frees it. NULL if no memory. */
static inline struct img *img_new(uint64_t base, size_t cap, bool map_all)
{
	struct img *im = calloc(1, sizeof(*im) + cap);

	if (!im)
		return NULL;
	im->mem = (uint8_t *)(im + 1);
	im->cap = cap;
	im->base = base;
	im->map_all = map_all;
	return im;
}

/* The jvm_read_fn_t over the image @ctx: -EFAULT for any byte outside what it maps. */
static inline int img_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct img *im = ctx;
	size_t span = im->map_all ? im->cap : im->used;

	if (addr < im->base || addr - im->base > span || n > span - (addr - im->base))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - im->base), n);
	return 0;
}

/* The address of @n new bytes, 16-aligned. */
static inline uint64_t img_alloc(struct img *im, size_t n)
{
	uint64_t at = im->base + im->used;
	size_t step = (n + 15) & ~(size_t)15;

	if (step > im->cap - im->used)
		JVM_IMG_FAIL();
	im->used += step;
	return at;
}

/* Writes @n bytes at @addr, which img_alloc() handed out. */
static inline void img_wr(struct img *im, uint64_t addr, const void *p, size_t n)
{
	if (addr < im->base || addr - im->base > im->used || n > im->used - (addr - im->base))
		JVM_IMG_FAIL();
	memcpy(im->mem + (addr - im->base), p, n);
}

static inline void img_w64(struct img *im, uint64_t addr, uint64_t v)
{
	img_wr(im, addr, &v, sizeof(v));
}

static inline void img_w32(struct img *im, uint64_t addr, uint32_t v)
{
	img_wr(im, addr, &v, sizeof(v));
}

static inline void img_w16(struct img *im, uint64_t addr, uint16_t v)
{
	img_wr(im, addr, &v, sizeof(v));
}

/* A NUL-terminated string, as a CodeBlob's _name points to. */
static inline uint64_t img_cstr(struct img *im, const char *s)
{
	uint64_t at = img_alloc(im, strlen(s) + 1);

	img_wr(im, at, s, strlen(s) + 1);
	return at;
}

/* A Symbol in the layout of hs_init_names(): _length 0, _body 6. */
static inline uint64_t img_symbol(struct img *im, const char *s)
{
	size_t n = strlen(s);
	uint64_t at = img_alloc(im, 6 + n);

	img_w16(im, at, (uint16_t)n);
	img_wr(im, at + 6, s, n);
	return at;
}

/* --- VMStructs ------------------------------------------------------------------------------ */

static inline void hs_set(struct jvm_hotspot *hs, enum jvm_hs id, uint64_t v)
{
	hs->val[id] = v;
	hs->found |= 1ull << id;
}

/*
 * The layout the names tests build in, at small offsets of our own. Method: _constMethod 8.
 * ConstMethod (JVM_IMG_CM_SIZE bytes): _constants 8, _name_index 16, _code_size 18, _flags 20,
 * _constMethod_size 24. ConstantPool (JVM_IMG_CP_SIZE bytes): _pool_holder 8,
 * _source_file_name_index 16. Klass: _name 16. Symbol: _length 0, _body 6. nmethod: _name 8,
 * code 16, _compile_id 24, _method 32; JDK 17: _scopes_data_begin 40, _scopes_pcs_offset 48,
 * _dependencies_offset 52, _metadata_offset 56; JDK 25: _immutable_data 64,
 * _immutable_data_size 72, _scopes_data_offset 80, _mutable_data 88, _relocation_size 96,
 * _mutable_data_size 100 (and code and the scopes data are offsets).
 */
#define JVM_IMG_CM_SIZE 48
#define JVM_IMG_CP_SIZE 32

static inline void hs_init_names(struct jvm_hotspot *hs, bool jdk25)
{
	memset(hs, 0, sizeof(*hs));
	hs_set(hs, JVM_HS_METHOD_CONSTMETHOD, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_CONSTANTS, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_NAME_INDEX, 16);
	hs_set(hs, JVM_HS_CONSTMETHOD_CODE_SIZE, 18);
	hs_set(hs, JVM_HS_CONSTMETHOD_FLAGS, 20);
	hs_set(hs, JVM_HS_CONSTMETHOD_TOTAL, 24);
	hs_set(hs, JVM_HS_CONSTMETHOD_SIZE, JVM_IMG_CM_SIZE);
	hs_set(hs, JVM_HS_CONSTANTPOOL_HOLDER, 8);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SOURCE_FILE, 16);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SIZE, JVM_IMG_CP_SIZE);
	hs_set(hs, JVM_HS_KLASS_NAME, 16);
	hs_set(hs, JVM_HS_SYMBOL_LENGTH, 0);
	hs_set(hs, JVM_HS_SYMBOL_BODY, 6);
	hs_set(hs, JVM_HS_CODEBLOB_NAME, 8);
	hs_set(hs, JVM_HS_CODEBLOB_CODE, 16);
	hs_set(hs, JVM_HS_NMETHOD_COMPILE_ID, 24);
	hs_set(hs, JVM_HS_NMETHOD_METHOD, 32);
	hs_set(hs, JVM_HS_NMETHOD_SCOPES_PCS, 48);
	if (!jdk25) {
		hs_set(hs, JVM_HS_NMETHOD_SCOPES_DATA, 40);
		hs_set(hs, JVM_HS_NMETHOD_DEPENDENCIES, 52);
		hs_set(hs, JVM_HS_NMETHOD_METADATA_OFFSET, 56);
		return;
	}
	hs_set(hs, JVM_HS_NMETHOD_IMMUTABLE, 64);
	hs_set(hs, JVM_HS_NMETHOD_IMMUTABLE_SIZE, 72);
	hs_set(hs, JVM_HS_NMETHOD_SCOPES_DATA, 80);
	hs_set(hs, JVM_HS_CODEBLOB_MUTABLE, 88);
	hs_set(hs, JVM_HS_CODEBLOB_RELOCATION_SIZE, 96);
	hs_set(hs, JVM_HS_CODEBLOB_MUTABLE_SIZE, 100);
	hs->is_offset |= 1ull << JVM_HS_NMETHOD_SCOPES_DATA | 1ull << JVM_HS_CODEBLOB_CODE;
}

#endif /* SLIDEOPS_TESTS_UNIT_JVM_IMAGE_H */
