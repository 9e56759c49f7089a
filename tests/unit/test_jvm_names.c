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
#define JVM_IMG_FAIL() fail()
#include "tests/unit/jvm_image.h"

#define BASE 0x7f0000010000ull
#define IMG_SIZE (256u << 10)

/* Our layout: hs_init_names() (tests/unit/jvm_image.h). */
#define CM_SIZE JVM_IMG_CM_SIZE
#define CP_SIZE JVM_IMG_CP_SIZE
#define NM_HEAD 512
#define NM_CODE 0x100 /* code start, from the nmethod */
#define CID 42

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
	uint64_t k = img_alloc(im, 24), cp = img_alloc(im, CP_SIZE + 8 * 3);
	size_t total = CM_SIZE + code_size + sizeof(lines);

	img_w64(im, k + 16, img_symbol(im, klass));
	img_w64(im, cp + 8, k);
	img_w16(im, cp + 16, file ? 2 : 0);
	img_w64(im, cp + CP_SIZE + 8 * 1, img_symbol(im, name));
	if (file)
		img_w64(im, cp + CP_SIZE + 8 * 2, img_symbol(im, file));
	total = (total + 7) & ~(size_t)7;
	r.cm = img_alloc(im, total);
	img_w64(im, r.cm + 8, cp);
	img_w16(im, r.cm + 16, 1);
	img_w16(im, r.cm + 18, code_size);
	img_w16(im, r.cm + 20, 1); /* has a line number table */
	img_w32(im, r.cm + 24, (uint32_t)(total / 8));
	r.code = r.cm + CM_SIZE;
	img_wr(im, r.code + code_size, lines, sizeof(lines));
	r.m = img_alloc(im, 16);
	img_w64(im, r.m + 8, r.cm);
	return r;
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
	w->im = img_new(BASE, IMG_SIZE, true); /* reads of a name overshoot */
	assert_non_null(w->im);
	hs_init_names(&w->hs, jdk25);
	img_alloc(w->im, 64); /* nothing at BASE */
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

	name = img_cstr(w->im, "nmethod");
	w->nm = img_alloc(w->im, NM_HEAD + 256);
	img_w64(w->im, w->nm + 8, name);
	img_w32(w->im, w->nm + 24, CID);
	img_w64(w->im, w->nm + 32, w->outer.m);
	if (!jdk25) {
		/* [head | code] metadata, scopes data, PcDescs, (dependencies) */
		regions = img_alloc(w->im, sizeof(meta) + sizeof(sd) + sizeof(pcs));
		img_w64(w->im, w->nm + 16, w->nm + NM_CODE);
		img_wr(w->im, regions, meta, sizeof(meta));
		w->scopes_at = regions + sizeof(meta);
		img_wr(w->im, w->scopes_at, sd, n);
		img_wr(w->im, w->scopes_at + sizeof(sd), pcs, sizeof(pcs));
		img_w64(w->im, w->nm + 40, w->scopes_at);
		img_w32(w->im, w->nm + 48, (uint32_t)(w->scopes_at + sizeof(sd) - w->nm));
		img_w32(w->im, w->nm + 52, (uint32_t)(w->scopes_at + sizeof(sd) + sizeof(pcs) - w->nm));
		img_w32(w->im, w->nm + 56, (uint32_t)(regions - w->nm));
		/* the scopes data end where the PcDescs begin: the tail of sd[] is padding 0 */
		w->nscopes = sizeof(sd);
	} else {
		/* immutable: PcDescs, scopes data; mutable: relocations (24 bytes), metadata */
		regions = img_alloc(w->im, sizeof(pcs) + n);
		mut = img_alloc(w->im, 24 + sizeof(meta));
		img_w32(w->im, w->nm + 16, NM_CODE);
		img_wr(w->im, regions, pcs, sizeof(pcs));
		w->scopes_at = regions + sizeof(pcs);
		img_wr(w->im, w->scopes_at, sd, n);
		img_wr(w->im, mut + 24, meta, sizeof(meta));
		img_w64(w->im, w->nm + 64, regions);
		img_w32(w->im, w->nm + 72, (uint32_t)(sizeof(pcs) + n));
		img_w32(w->im, w->nm + 48, 0);
		img_w32(w->im, w->nm + 80, sizeof(pcs));
		img_w64(w->im, w->nm + 88, mut);
		img_w32(w->im, w->nm + 96, 24);
		img_w32(w->im, w->nm + 100, 24 + sizeof(meta));
	}
	w->stub = img_alloc(w->im, NM_HEAD);
	img_w64(w->im, w->stub + 8, img_cstr(w->im, "StubRoutines (1)"));
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
			img_w64(w.im, w.nm + 8, img_cstr(w.im, "adapter"));
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_NAME_FAULT:
			img_w64(w.im, w.nm + 8, 0x1000);
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
			img_wr(w.im, w.scopes_at + 10 + 1, &three, 1);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		}
		case NC_STUB:
			wd = word(UW_JAVA_STUB, w.stub);
			ck = 0x40;
			break;
		case NC_STUB_EMPTY:
			img_w64(w.im, w.stub + 8, img_cstr(w.im, ""));
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
				img_w64(w.im, w.nm + 40, w.scopes_at - JVM_NAMES_SCOPES_MAX - 16);
			else
				img_w32(w.im, w.nm + 72, JVM_NAMES_SCOPES_MAX + 4096);
			wd = word(UW_JAVA_COMPILED, w.nm);
			ck = cookie(CID, 0x20, false);
			break;
		case NC_OVERSIZE_META:
			img_w32(w.im, w.nm + 100, 24 + JVM_NAMES_METADATA_MAX + 8);
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
	hs_init_names(&hs, false);
	hs.found &= ~(1ull << JVM_HS_SYMBOL_BODY);
	assert_int_equal(jvm_names__new(&hs, 17, img_read, NULL, &jn), -ENOTSUP);
	hs_init_names(&hs, false);
	hs.val[JVM_HS_KLASS_NAME] = 600; /* past the head read */
	assert_int_equal(jvm_names__new(&hs, 17, img_read, NULL, &jn), -ENOTSUP);
	hs_init_names(&hs, false);
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
