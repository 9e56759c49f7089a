// SPDX-License-Identifier: Apache-2.0
/*
 * The names of recorded Java frames (runtimes/jvm/jvm_names.h) over a fake JVM memory image
 * built here: Methods with their ConstMethod, ConstantPool, Klass and Symbols, nmethods in the
 * JDK 17 layout (regions inside the blob) and the JDK 25 one (immutable and mutable data
 * outside it), and a stub, at small offsets of our own. One frame per row: interpreted,
 * compiled with inlining, a leaf between two PcDescs, stale blobs, stubs, hidden classes, and
 * a region past its bound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/unwind.h"
#include "runtimes/jvm/jvm_names.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BASE 0x7f0000010000ull
#define IMG_SIZE (256u << 10)

/* Our layout. Method: _constMethod 8. ConstMethod (48 bytes): _constants 8, _name_index 16,
 * _code_size 18, _flags 20, _constMethod_size 24. ConstantPool (32 bytes): _pool_holder 8,
 * _source_file_name_index 16. Klass: _name 16. Symbol: _length 0, _body 6. nmethod: _name 8,
 * code 16, _compile_id 24, _method 32; JDK 17: _scopes_data_begin 40, _scopes_pcs_offset 48,
 * _dependencies_offset 52, _metadata_offset 56; JDK 25: _immutable_data 64,
 * _immutable_data_size 72, _scopes_data_offset 80, _mutable_data 88, _relocation_size 96,
 * _mutable_data_size 100. */
#define CM_SIZE 48
#define CP_SIZE 32
#define NM_HEAD 512
#define NM_CODE 0x100 /* code start, from the nmethod */
#define CID 42

struct img {
	uint8_t mem[IMG_SIZE];
	size_t used;
};

static int img_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct img *im = ctx;

	(void)im->used; /* the whole image is mapped, as a page is: reads of a name overshoot */
	if (addr < BASE || addr - BASE > IMG_SIZE || n > IMG_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - BASE), n);
	return 0;
}

static uint64_t alloc(struct img *im, size_t n)
{
	uint64_t at = BASE + im->used;

	assert_true(im->used + n <= sizeof(im->mem));
	im->used += (n + 15) & ~(size_t)15;
	return at;
}

static void wr(struct img *im, uint64_t addr, const void *p, size_t n)
{
	assert_true(addr >= BASE && addr - BASE + n <= im->used);
	memcpy(im->mem + (addr - BASE), p, n);
}

static void w64(struct img *im, uint64_t addr, uint64_t v)
{
	wr(im, addr, &v, 8);
}

static void w32(struct img *im, uint64_t addr, uint32_t v)
{
	wr(im, addr, &v, 4);
}

static void w16(struct img *im, uint64_t addr, uint16_t v)
{
	wr(im, addr, &v, 2);
}

static uint64_t cstr(struct img *im, const char *s)
{
	uint64_t at = alloc(im, strlen(s) + 1);

	wr(im, at, s, strlen(s) + 1);
	return at;
}

static uint64_t symbol(struct img *im, const char *s)
{
	size_t n = strlen(s);
	uint64_t at = alloc(im, 6 + n);

	w16(im, at, (uint16_t)n);
	wr(im, at + 6, s, n);
	return at;
}

struct method {
	uint64_t m, cm, code;
	uint16_t code_size;
};

/* Line table of every method: (bci 0, line 3), (bci 5, line 7), end. */
static const uint8_t lines[] = { 0 << 3 | 3, 5 << 3 | 4, 0 };

static struct method method(struct img *im, const char *klass, const char *name, const char *file,
			    uint16_t code_size)
{
	struct method r = { .code_size = code_size };
	uint64_t k = alloc(im, 24), cp = alloc(im, CP_SIZE + 8 * 3);
	size_t total = CM_SIZE + code_size + sizeof(lines);

	w64(im, k + 16, symbol(im, klass));
	w64(im, cp + 8, k);
	w16(im, cp + 16, file ? 2 : 0);
	w64(im, cp + CP_SIZE + 8 * 1, symbol(im, name));
	if (file)
		w64(im, cp + CP_SIZE + 8 * 2, symbol(im, file));
	total = (total + 7) & ~(size_t)7;
	r.cm = alloc(im, total);
	w64(im, r.cm + 8, cp);
	w16(im, r.cm + 16, 1);
	w16(im, r.cm + 18, code_size);
	w16(im, r.cm + 20, 1); /* has a line number table */
	w32(im, r.cm + 24, (uint32_t)(total / 8));
	r.code = r.cm + CM_SIZE;
	wr(im, r.code + code_size, lines, sizeof(lines));
	r.m = alloc(im, 16);
	w64(im, r.m + 8, r.cm);
	return r;
}

static void hs_set(struct jvm_hotspot *hs, enum jvm_hs id, uint64_t v)
{
	hs->val[id] = v;
	hs->found |= 1ull << id;
}

static void hs_init(struct jvm_hotspot *hs, bool jdk25)
{
	memset(hs, 0, sizeof(*hs));
	hs_set(hs, JVM_HS_METHOD_CONSTMETHOD, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_CONSTANTS, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_NAME_INDEX, 16);
	hs_set(hs, JVM_HS_CONSTMETHOD_CODE_SIZE, 18);
	hs_set(hs, JVM_HS_CONSTMETHOD_FLAGS, 20);
	hs_set(hs, JVM_HS_CONSTMETHOD_TOTAL, 24);
	hs_set(hs, JVM_HS_CONSTMETHOD_SIZE, CM_SIZE);
	hs_set(hs, JVM_HS_CONSTANTPOOL_HOLDER, 8);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SOURCE_FILE, 16);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SIZE, CP_SIZE);
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

/*
 * The world of every row: "pkg/Cls.outer" (code 32 bytes) into which "pkg/Inner.inner" is
 * inlined at bci 6; an nmethod of outer with PcDescs at 0x10 (outer at bci 2), 0x20 (inner at
 * bci 1 in outer at bci 6), 0x30 (outer at bci 7); a stub.
 */
struct world {
	struct img *im;
	struct jvm_hotspot hs;
	struct method outer, inner;
	uint64_t nm, stub, scopes_at;
	size_t nscopes;
	bool jdk25;
};

static size_t u5(uint8_t *p, uint32_t v, unsigned excl)
{
	p[0] = (uint8_t)(v + excl); /* every value here fits one byte */
	return 1;
}

static void world_init(struct world *w, bool jdk25, const char *outer_klass)
{
	const unsigned excl = jdk25;
	uint8_t sd[16], pcs[4 * 16];
	int32_t pcd[4][4] = { { -1, 0, 0, 0 }, { 0x10, 0, 0, 0 }, { 0x20, 0, 0, 0 }, { 0x30, 0, 0, 0 } };
	uint64_t meta[2], name, regions, mut;
	size_t n = 1, a, b, c;

	memset(w, 0, sizeof(*w));
	w->jdk25 = jdk25;
	w->im = calloc(1, sizeof(*w->im));
	assert_non_null(w->im);
	hs_init(&w->hs, jdk25);
	alloc(w->im, 64); /* nothing at BASE */
	w->outer = method(w->im, outer_klass, "outer", "Cls.java", 32);
	w->inner = method(w->im, "pkg/Inner", "inner", "Inner.java", 8);
	meta[0] = w->outer.m;
	meta[1] = w->inner.m;
	/* scopes: pad, outer at bci 6 (a), outer at bci 2 (b), outer at bci 7 (c), inner <- a */
	sd[0] = 0x55;
	a = n;
	n += u5(sd + n, 0, excl), n += u5(sd + n, 1, excl), n += u5(sd + n, 7, excl);
	b = n;
	n += u5(sd + n, 0, excl), n += u5(sd + n, 1, excl), n += u5(sd + n, 3, excl);
	c = n;
	n += u5(sd + n, 0, excl), n += u5(sd + n, 1, excl), n += u5(sd + n, 8, excl);
	pcd[2][1] = (int32_t)n;
	n += u5(sd + n, (uint32_t)a, excl), n += u5(sd + n, 2, excl), n += u5(sd + n, 2, excl);
	pcd[1][1] = (int32_t)b;
	pcd[3][1] = (int32_t)c;
	memcpy(pcs, pcd, sizeof(pcs));
	w->nscopes = n;

	name = cstr(w->im, "nmethod");
	w->nm = alloc(w->im, NM_HEAD + 256);
	w64(w->im, w->nm + 8, name);
	w32(w->im, w->nm + 24, CID);
	w64(w->im, w->nm + 32, w->outer.m);
	if (!jdk25) {
		/* [head | code] metadata, scopes data, PcDescs, (dependencies) */
		regions = alloc(w->im, sizeof(meta) + sizeof(sd) + sizeof(pcs));
		w64(w->im, w->nm + 16, w->nm + NM_CODE);
		wr(w->im, regions, meta, sizeof(meta));
		w->scopes_at = regions + sizeof(meta);
		wr(w->im, w->scopes_at, sd, n);
		wr(w->im, w->scopes_at + sizeof(sd), pcs, sizeof(pcs));
		w64(w->im, w->nm + 40, w->scopes_at);
		w32(w->im, w->nm + 48, (uint32_t)(w->scopes_at + sizeof(sd) - w->nm));
		w32(w->im, w->nm + 52, (uint32_t)(w->scopes_at + sizeof(sd) + sizeof(pcs) - w->nm));
		w32(w->im, w->nm + 56, (uint32_t)(regions - w->nm));
		/* the scopes data end where the PcDescs begin: the tail of sd[] is padding 0 */
		w->nscopes = sizeof(sd);
	} else {
		/* immutable: PcDescs, scopes data; mutable: relocations (24 bytes), metadata */
		regions = alloc(w->im, sizeof(pcs) + n);
		mut = alloc(w->im, 24 + sizeof(meta));
		w32(w->im, w->nm + 16, NM_CODE);
		wr(w->im, regions, pcs, sizeof(pcs));
		w->scopes_at = regions + sizeof(pcs);
		wr(w->im, w->scopes_at, sd, n);
		wr(w->im, mut + 24, meta, sizeof(meta));
		w64(w->im, w->nm + 64, regions);
		w32(w->im, w->nm + 72, (uint32_t)(sizeof(pcs) + n));
		w32(w->im, w->nm + 48, 0);
		w32(w->im, w->nm + 80, sizeof(pcs));
		w64(w->im, w->nm + 88, mut);
		w32(w->im, w->nm + 96, 24);
		w32(w->im, w->nm + 100, 24 + sizeof(meta));
	}
	w->stub = alloc(w->im, NM_HEAD);
	w64(w->im, w->stub + 8, cstr(w->im, "StubRoutines (1)"));
}

static uint64_t word(uint64_t kind, uint64_t addr)
{
	return UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | addr;
}

static uint64_t cookie(uint32_t cid, uint32_t pc_off_from_code, bool leaf)
{
	return (uint64_t)cid << 32 | (NM_CODE + pc_off_from_code) | (leaf ? UW_JAVA_LEAF : 0);
}

enum nm_case {
	NC_INTERP,
	NC_INTERP_BCP_END,
	NC_INTERP_BCP_BELOW,
	NC_COMPILED,
	NC_COMPILED_OUTER,
	NC_CID,
	NC_NOT_NMETHOD,
	NC_NAME_FAULT,
	NC_LEAF_DEEPER,
	NC_RET_AFTER,
	NC_LEAF_EXACT,
	NC_NO_PCDESC,
	NC_BAD_INDEX,
	NC_STUB,
	NC_STUB_EMPTY,
	NC_NOT_JAVA,
	NC_BAD_KIND,
	NC_MAX0,
	NC_HIDDEN,
	NC_OVERSIZE,
	NC_OVERSIZE_META,
};

struct nm_row {
	const char *what;
	enum nm_case c;
	bool jdk25;
	const char *klass; /* the outer method's class, default "pkg/Cls" */
	int ret;
	/* innermost first */
	const char *name[2];
	uint32_t line[2];
	enum jvm_frame_kind kind[2];
};

#define INT JVM_FRAME_INTERPRETED
#define CMP JVM_FRAME_COMPILED
#define INL JVM_FRAME_INLINED

static const struct nm_row nm_rows[] = {
	{ "interpreted", NC_INTERP, false, NULL, 1, { "pkg.Cls.outer" }, { 7 }, { INT } },
	{ "interpreted, JDK 25", NC_INTERP, true, NULL, 1, { "pkg.Cls.outer" }, { 7 }, { INT } },
	{ "interpreted, bcp at the end", NC_INTERP_BCP_END, false, NULL, -ESTALE },
	{ "interpreted, bcp below", NC_INTERP_BCP_BELOW, false, NULL, -ESTALE },
	{ "compiled, inlined chain of 2 (17)", NC_COMPILED, false, NULL, 2,
	  { "pkg.Inner.inner", "pkg.Cls.outer" }, { 3, 7 }, { INL, CMP } },
	{ "compiled, inlined chain of 2 (25)", NC_COMPILED, true, NULL, 2,
	  { "pkg.Inner.inner", "pkg.Cls.outer" }, { 3, 7 }, { INL, CMP } },
	{ "compiled, outer only", NC_COMPILED_OUTER, true, NULL, 1, { "pkg.Cls.outer" }, { 3 },
	  { CMP } },
	{ "compile id mismatch", NC_CID, false, NULL, -ESTALE },
	{ "blob name not nmethod", NC_NOT_NMETHOD, false, NULL, -ESTALE },
	{ "blob name into nothing", NC_NAME_FAULT, true, NULL, -ESTALE },
	{ "leaf between: the deeper chain", NC_LEAF_DEEPER, false, NULL, 2,
	  { "pkg.Inner.inner", "pkg.Cls.outer" }, { 3, 7 }, { INL, CMP } },
	{ "leaf between: the deeper chain (25)", NC_LEAF_DEEPER, true, NULL, 2,
	  { "pkg.Inner.inner", "pkg.Cls.outer" }, { 3, 7 }, { INL, CMP } },
	{ "return address between: the one after", NC_RET_AFTER, false, NULL, 1, { "pkg.Cls.outer" },
	  { 7 }, { CMP } },
	{ "leaf exact: its own", NC_LEAF_EXACT, false, NULL, 1, { "pkg.Cls.outer" }, { 7 }, { CMP } },
	{ "pc past every PcDesc: the method", NC_NO_PCDESC, true, NULL, 1, { "pkg.Cls.outer" }, { 3 },
	  { CMP } },
	{ "metadata index out of range", NC_BAD_INDEX, false, NULL, -EBADMSG },
	{ "stub", NC_STUB, false, NULL, 1, { "StubRoutines (1)" }, { 0 }, { JVM_FRAME_STUB } },
	{ "stub without a name", NC_STUB_EMPTY, false, NULL, 1, { "[JVM stub]" }, { 0 },
	  { JVM_FRAME_STUB } },
	{ "not a Java word", NC_NOT_JAVA, false, NULL, -EINVAL },
	{ "unknown kind", NC_BAD_KIND, false, NULL, -EINVAL },
	{ "no room", NC_MAX0, false, NULL, -EINVAL },
	{ "hidden class, JDK 17", NC_HIDDEN, false, "pkg/Cls$$Lambda/0x0000000800c01000", 1,
	  { "pkg.Cls$$Lambda.outer" }, { 7 }, { INT } },
	{ "hidden class, JDK 25", NC_HIDDEN, true, "pkg/Cls$$Lambda+0x0000000800c01000", 1,
	  { "pkg.Cls$$Lambda.outer" }, { 7 }, { INT } },
	{ "hidden class, compiled", NC_COMPILED, true, "pkg/Cls$$Lambda+0x0000000800c01000", 2,
	  { "pkg.Inner.inner", "pkg.Cls$$Lambda.outer" }, { 3, 7 }, { INL, CMP } },
	{ "package named 0x...", NC_INTERP, false, "com/0xcafe/Util", 1, { "com.0xcafe.Util.outer" },
	  { 7 }, { INT } },
	{ "scopes past JVM_NAMES_SCOPES_MAX (17)", NC_OVERSIZE, false, NULL, 1, { "pkg.Cls.outer" },
	  { 3 }, { CMP } },
	{ "scopes past JVM_NAMES_SCOPES_MAX (25)", NC_OVERSIZE, true, NULL, 1, { "pkg.Cls.outer" },
	  { 3 }, { CMP } },
	{ "metadata past JVM_NAMES_METADATA_MAX", NC_OVERSIZE_META, true, NULL, 1,
	  { "pkg.Cls.outer" }, { 3 }, { CMP } },
};

/* @set 0: the outer class is "pkg/Cls"; 1: another "pkg/" class; 2: another package. */
static void frame_rows(int set)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nm_rows); i++) {
		const struct nm_row *r = &nm_rows[i];
		struct jvm_frame out[4];
		struct jvm_names *jn = NULL;
		uint64_t wd = 0, ck = 0;
		size_t max = ARRAY_SIZE(out);
		struct world w;
		int ret, k;

		if ((!r->klass ? 0 : !strncmp(r->klass, "pkg/", 4) ? 1 : 2) != set)
			continue;
		print_message("names: %s\n", r->what);
		world_init(&w, r->jdk25, r->klass ? r->klass : "pkg/Cls");
		switch (r->c) {
		case NC_INTERP:
		case NC_HIDDEN:
			wd = word(UW_JAVA_INTERPRETED, w.outer.m);
			ck = w.outer.code + 6;
			break;
		case NC_INTERP_BCP_END:
			wd = word(UW_JAVA_INTERPRETED, w.outer.m);
			ck = w.outer.code + w.outer.code_size;
			break;
		case NC_INTERP_BCP_BELOW:
			wd = word(UW_JAVA_INTERPRETED, w.outer.m);
			ck = w.outer.code - 1;
			break;
		case NC_COMPILED:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_COMPILED_OUTER:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x10, false);
			break;
		case NC_CID:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID + 1, 0x20, false);
			break;
		case NC_NOT_NMETHOD:
			w64(w.im, w.nm + 8, cstr(w.im, "adapter"));
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_NAME_FAULT:
			w64(w.im, w.nm + 8, 0x1000);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_LEAF_DEEPER:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x28, true);
			break;
		case NC_RET_AFTER:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x28, false);
			break;
		case NC_LEAF_EXACT:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x30, true);
			break;
		case NC_NO_PCDESC:
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x31, true);
			break;
		case NC_BAD_INDEX: {
			uint8_t three = 3;

			/* the inner record's method index (after its sender) is 3 of 2 */
			wr(w.im, w.scopes_at + 10 + 1, &three, 1);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		}
		case NC_STUB:
			wd = word(UW_JAVA_STUB, w.stub);
			ck = 0x40;
			break;
		case NC_STUB_EMPTY:
			w64(w.im, w.stub + 8, cstr(w.im, ""));
			wd = word(UW_JAVA_STUB, w.stub);
			break;
		case NC_NOT_JAVA:
			wd = w.nm;
			ck = cookie(CID, 0x20, false);
			break;
		case NC_BAD_KIND:
			wd = word(5, w.nm);
			break;
		case NC_MAX0:
			wd = word(UW_JAVA_STUB, w.stub);
			max = 0;
			break;
		case NC_OVERSIZE:
			if (!r->jdk25)
				/* _scopes_data_begin far below: [sd, pcs) is too large */
				w64(w.im, w.nm + 40, w.scopes_at - JVM_NAMES_SCOPES_MAX - 16);
			else
				w32(w.im, w.nm + 72, JVM_NAMES_SCOPES_MAX + 4096);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_OVERSIZE_META:
			w32(w.im, w.nm + 100, 24 + JVM_NAMES_METADATA_MAX + 8);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		}
		assert_int_equal(jvm_names__new(&w.hs, r->jdk25 ? 25 : 17, img_read, w.im, &jn), 0);
		memset(out, 0, sizeof(out));
		ret = jvm_names__frame(jn, wd, ck, out, max);
		assert_int_equal(ret, r->ret);
		for (k = 0; k < ret; k++) {
			assert_string_equal(out[k].name, r->name[k]);
			assert_string_equal(out[k].file, out[k].kind == JVM_FRAME_STUB ? "" :
							 strstr(out[k].name, "Inner") ? "Inner.java" :
											 "Cls.java");
			assert_int_equal(out[k].line, r->line[k]);
			assert_int_equal(out[k].kind, r->kind[k]);
		}
		/* again, from the caches */
		if (ret > 0) {
			struct jvm_frame again[4];

			assert_int_equal(jvm_names__frame(jn, wd, ck, again, max), ret);
			for (k = 0; k < ret; k++)
				assert_string_equal(again[k].name, out[k].name);
		}
		jvm_names__free(jn);
		free(w.im);
	}
}

static void test_frames(void **state)
{
	(void)state;
	frame_rows(0);
}

/* Hidden classes (lambdas) lose their address suffix; nothing else does. */
static void test_hidden(void **state)
{
	(void)state;
	frame_rows(1);
}

/* A package segment that merely starts with "0x" is no hidden class's address suffix. */
static void test_package_0x(void **state)
{
	(void)state;
	frame_rows(2);
}

/* A method whose class has no source file: file "", the rest named. */
static void test_no_file(void **state)
{
	struct jvm_names *jn = NULL;
	struct jvm_frame f;
	struct world w;
	struct method m;

	(void)state;
	world_init(&w, false, "pkg/Cls");
	m = method(w.im, "pkg/NoFile", "run", NULL, 4);
	assert_int_equal(jvm_names__new(&w.hs, 17, img_read, w.im, &jn), 0);
	assert_int_equal(jvm_names__frame(jn, word(UW_JAVA_INTERPRETED, m.m), m.code, &f, 1), 1);
	assert_string_equal(f.name, "pkg.NoFile.run");
	assert_string_equal(f.file, "");
	assert_int_equal(f.line, 3);
	jvm_names__free(jn);
	free(w.im);
}

/* A VMStructs without what naming needs is refused. */
static void test_new(void **state)
{
	struct jvm_names *jn = NULL;
	struct jvm_hotspot hs;

	(void)state;
	hs_init(&hs, false);
	hs.found &= ~(1ull << JVM_HS_SYMBOL_BODY);
	assert_int_equal(jvm_names__new(&hs, 17, img_read, NULL, &jn), -ENOTSUP);
	hs_init(&hs, false);
	hs.val[JVM_HS_KLASS_NAME] = 600; /* past the head read */
	assert_int_equal(jvm_names__new(&hs, 17, img_read, NULL, &jn), -ENOTSUP);
	hs_init(&hs, false);
	hs.val[JVM_HS_CONSTMETHOD_SIZE] = 513;
	assert_int_equal(jvm_names__new(&hs, 17, img_read, NULL, &jn), -ENOTSUP);
	assert_null(jn);
	jvm_names__free(NULL);
}

static void test_release_major(void **state)
{
	(void)state;
	assert_int_equal(jvm_release_major("17.0.15+6-Debian-1deb12u1"), 17);
	assert_int_equal(jvm_release_major("25+36"), 25);
	assert_int_equal(jvm_release_major("1.8.0_392"), 8);
	assert_int_equal(jvm_release_major(""), 0);
	assert_int_equal(jvm_release_major(NULL), 0);
	assert_int_equal(jvm_release_major("x17"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_package_0x),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_release_major),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
