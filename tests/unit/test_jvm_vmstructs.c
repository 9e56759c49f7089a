// SPDX-License-Identifier: Apache-2.0
/*
 * The VMStructs decoder (runtimes/jvm/jvm_vmstructs.h) over a memory image built here: the
 * tables laid out as HotSpot lays them (48-byte entries, the offsets its gHotSpotVM*Offset
 * variables hold on x86-64), read through a callback, with one mutation per row: good tables,
 * and truncated tables, a missing terminator, absurd strides and offsets, names that are not
 * terminated within the cap, point into nothing or hold control bytes. The reading from a
 * real JVM runs in tests/integration/test_jvm_attach.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_vmstructs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BASE 0x7f0000010000ull
#define IMG_SIZE (64u << 10)
#define STRIDE 48

struct img {
	uint8_t mem[IMG_SIZE];
	size_t used;
	size_t limit; /* reads past BASE + limit fault (a table cut short) */
	bool endless; /* every read inside the struct table returns entry 0 */
	uint64_t structs;
};

static int img_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct img *im = ctx;

	if (im->endless && addr >= im->structs && addr + n <= im->structs + (1ull << 40)) {
		memcpy(buf, im->mem + (im->structs - BASE), n);
		return 0;
	}
	if (addr < BASE || addr - BASE > im->limit || n > im->limit - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - BASE), n);
	return 0;
}

static uint64_t put(struct img *im, const void *p, size_t n)
{
	uint64_t at = BASE + im->used;

	assert_true(im->used + n <= sizeof(im->mem));
	memcpy(im->mem + im->used, p, n);
	im->used += (n + 7) & ~(size_t)7;
	return at;
}

static uint64_t str(struct img *im, const char *s)
{
	return put(im, s, strlen(s) + 1);
}

static void put64(uint8_t *e, size_t off, uint64_t v)
{
	memcpy(e + off, &v, sizeof(v));
}

struct fdef {
	const char *type, *name;
	int is_static;
	uint64_t value;
	const char *vtype; /* the type string, NULL: none */
};

/* The struct table: typeName 0, fieldName 8, typeString 16, isStatic 24, offset 32, address 40. */
static uint64_t put_fields(struct img *im, const struct fdef *f, size_t n)
{
	uint8_t(*e)[STRIDE] = calloc(n + 1, STRIDE);
	uint64_t at;
	size_t i;

	assert_non_null(e);
	for (i = 0; i < n; i++) {
		int32_t st = f[i].is_static;

		put64(e[i], 0, str(im, f[i].type));
		put64(e[i], 8, f[i].name ? str(im, f[i].name) : 0);
		put64(e[i], 16, f[i].vtype ? str(im, f[i].vtype) : 0);
		memcpy(e[i] + 24, &st, sizeof(st));
		put64(e[i], st ? 40 : 32, f[i].value);
	}
	at = put(im, e, (n + 1) * STRIDE);
	free(e);
	return at;
}

/* The type table: typeName 0, superclassName 8, three int32 flags, size 32. */
static uint64_t put_types(struct img *im, const char *const *names, const uint64_t *sizes, size_t n)
{
	uint8_t(*e)[STRIDE] = calloc(n + 1, STRIDE);
	uint64_t at;
	size_t i;

	assert_non_null(e);
	for (i = 0; i < n; i++) {
		put64(e[i], 0, str(im, names[i]));
		put64(e[i], 32, sizes[i]);
	}
	at = put(im, e, (n + 1) * STRIDE);
	free(e);
	return at;
}

static const struct fdef good_fields[] = {
	{ "CodeBlob", "_name", 0, 8, "const char*" },
	{ "CodeBlob", "_frame_size", 0, 0x2c, "int" },
	{ "CodeBlob", "_code_offset", 0, 0x24, "int" },
	{ "CodeCache", "_heaps", 1, 0x7f0000abc000ull, "GrowableArray<CodeHeap*>*" },
	{ "Thread", "_osthread", 0, 0x3f8, NULL },
	{ "nmethod", "_scopes_data_offset", 0, 0xc8, "int" },
	{ "CodeBlob", "_name", 0, 0x99 }, /* a duplicate: the first one wins */
	{ "CodeBlob", "_frame_complete_offset", 0, 0x36, "int16_t" },
	{ "nmethod", "_compile_id", 0, 0xa0, "int16_t_and_more" }, /* no integer type */
};
static const char *const good_types[] = { "CodeBlob", "Symbol", "HeapBlock" };
static const uint64_t good_sizes[] = { 64, 16, 8 };

enum mutation {
	M_NONE,
	M_TRUNCATED, /* the image ends inside the struct table */
	M_ENDLESS,   /* no terminator at all */
	M_STRIDE_HUGE,
	M_STRIDE_SMALL, /* offsets beyond the stride */
	M_NULL_TABLE,
	M_NAME_UNTERMINATED, /* a field name longer than the cap */
	M_NAME_AT_CAP,	     /* exactly JVM_VMS_NAME_MAX bytes: fits */
	M_NAME_NOWHERE,	     /* a name pointer outside the image */
	M_NAME_NULL,	     /* a field entry whose name pointer is NULL */
	M_NAME_CONTROL,
	M_OFFSET_ABSURD,
	M_SIZE_ABSURD,
	M_TYPES_TRUNCATED,
	M_VTYPE_NOWHERE, /* a type string pointer outside the image: width 0, not an error */
};

/* Builds the good tables with @m applied; the layout in @l. */
static void build(struct img *im, enum mutation m, struct jvm_vms_layout *l)
{
	struct fdef f[ARRAY_SIZE(good_fields) + 1];
	uint64_t sizes[ARRAY_SIZE(good_sizes)];
	char long_name[JVM_VMS_NAME_MAX + 2];
	size_t nf = ARRAY_SIZE(good_fields);

	memset(im, 0, sizeof(*im));
	im->limit = IMG_SIZE;
	memcpy(f, good_fields, sizeof(good_fields));
	memcpy(sizes, good_sizes, sizeof(sizes));
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	if (m == M_NAME_UNTERMINATED)
		f[1].name = long_name;
	if (m == M_NAME_AT_CAP) {
		long_name[JVM_VMS_NAME_MAX] = '\0';
		f[1].name = long_name;
	}
	if (m == M_NAME_NULL)
		f[1].name = NULL;
	if (m == M_NAME_CONTROL)
		f[1].name = "_fra\tme";
	if (m == M_OFFSET_ABSURD)
		f[1].value = JVM_VMS_VALUE_MAX + 1;
	if (m == M_SIZE_ABSURD)
		sizes[1] = 1ull << 40;
	*l = (struct jvm_vms_layout){ .s_stride = STRIDE,
				      .s_type_name = 0,
				      .s_field_name = 8,
				      .s_is_static = 24,
				      .s_offset = 32,
				      .s_address = 40,
				      .s_type_string = 16,
				      .t_stride = STRIDE,
				      .t_type_name = 0,
				      .t_size = 32 };
	l->structs = im->structs = put_fields(im, f, nf);
	l->types = put_types(im, good_types, sizes, ARRAY_SIZE(good_types));
	if (m == M_NAME_NOWHERE)
		put64(im->mem + (l->structs - BASE) + STRIDE, 8, BASE + IMG_SIZE + 4096);
	if (m == M_VTYPE_NOWHERE)
		put64(im->mem + (l->structs - BASE) + STRIDE, 16, BASE + IMG_SIZE + 4096);
	if (m == M_TRUNCATED)
		im->limit = (size_t)(l->structs - BASE) + 3 * STRIDE + 10;
	/* The type names lie before their table: cut inside the table's second entry. */
	if (m == M_TYPES_TRUNCATED)
		im->limit = (size_t)(l->types - BASE) + STRIDE + 4;
	if (m == M_ENDLESS)
		im->endless = true;
	if (m == M_STRIDE_HUGE)
		l->s_stride = 4096;
	if (m == M_STRIDE_SMALL)
		l->s_stride = 40;
	if (m == M_NULL_TABLE)
		l->types = 0;
}

static void test_decode(void **state)
{
	static const struct {
		enum mutation m;
		int ret;
	} cases[] = {
		{ M_NONE, 0 },
		{ M_NAME_AT_CAP, 0 },
		{ M_TRUNCATED, -EFAULT },
		{ M_TYPES_TRUNCATED, -EFAULT },
		{ M_ENDLESS, -E2BIG },
		{ M_STRIDE_HUGE, -EINVAL },
		{ M_STRIDE_SMALL, -EINVAL },
		{ M_NULL_TABLE, -EINVAL },
		{ M_NAME_UNTERMINATED, -ENAMETOOLONG },
		{ M_NAME_NOWHERE, -EFAULT },
		{ M_NAME_NULL, -EFAULT },
		{ M_NAME_CONTROL, -EILSEQ },
		{ M_OFFSET_ABSURD, -EINVAL },
		{ M_SIZE_ABSURD, -EINVAL },
		{ M_VTYPE_NOWHERE, 0 },
	};
	struct img *im = malloc(sizeof(*im));
	struct jvm_vms_layout l;
	size_t i;

	(void)state;
	assert_non_null(im);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jvm_vmstructs *vs = (void *)1;

		print_message("case %zu (mutation %d)\n", i, cases[i].m);
		build(im, cases[i].m, &l);
		assert_int_equal(jvm_vmstructs__decode(&l, img_read, im, &vs), cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(vs, (void *)1);
			continue;
		}
		assert_int_equal(jvm_vmstructs__nfields(vs), ARRAY_SIZE(good_fields));
		assert_int_equal(jvm_vmstructs__ntypes(vs), ARRAY_SIZE(good_types));
		/* entry 1 (_frame_size, renamed by M_NAME_AT_CAP) holds the type string */
		if (cases[i].m != M_NAME_AT_CAP)
			assert_int_equal(jvm_vmstructs__field(vs, "CodeBlob", "_frame_size")->width,
					 cases[i].m == M_VTYPE_NOWHERE ? 0 : 4);
		jvm_vmstructs__free(vs);
	}
	free(im);
}

static void test_lookup(void **state)
{
	struct img *im = malloc(sizeof(*im));
	const struct jvm_vms_field *f;
	struct jvm_vmstructs *vs;
	struct jvm_vms_layout l;
	uint64_t size = 0;

	(void)state;
	assert_non_null(im);
	build(im, M_NONE, &l);
	assert_int_equal(jvm_vmstructs__decode(&l, img_read, im, &vs), 0);
	f = jvm_vmstructs__field(vs, "CodeBlob", "_name");
	assert_non_null(f);
	assert_int_equal(f->offset, 8); /* the first of the duplicates */
	assert_false(f->is_static);
	f = jvm_vmstructs__field(vs, "CodeCache", "_heaps");
	assert_non_null(f);
	assert_true(f->is_static);
	assert_int_equal(f->address, 0x7f0000abc000ull);
	assert_int_equal(f->width, 0); /* a pointer */
	assert_int_equal(jvm_vmstructs__field(vs, "CodeBlob", "_frame_complete_offset")->width, 2);
	assert_int_equal(jvm_vmstructs__field(vs, "CodeBlob", "_code_offset")->width, 4);
	assert_int_equal(jvm_vmstructs__field(vs, "Thread", "_osthread")->width, 0);
	assert_int_equal(jvm_vmstructs__field(vs, "nmethod", "_compile_id")->width, 0);
	assert_null(jvm_vmstructs__field(vs, "CodeBlob", "_nope"));
	assert_null(jvm_vmstructs__field(vs, "Nope", "_name"));
	assert_null(jvm_vmstructs__field(vs, NULL, "_name"));
	assert_null(jvm_vmstructs__field(NULL, "CodeBlob", "_name"));
	assert_int_equal(jvm_vmstructs__type_size(vs, "Symbol", &size), 0);
	assert_int_equal(size, 16);
	assert_int_equal(jvm_vmstructs__type_size(vs, "Symbo", &size), -ENOENT);
	assert_int_equal(jvm_vmstructs__type_size(vs, "Symbol!", &size), -ENOENT);
	assert_string_equal(jvm_vmstructs__field_at(vs, 3)->name, "_heaps");
	assert_null(jvm_vmstructs__field_at(vs, 99));
	assert_string_equal(jvm_vmstructs__type_at(vs, 2)->name, "HeapBlock");
	assert_string_equal(jvm_vmstructs__libjvm(vs), "");
	jvm_vmstructs__free(vs);
	jvm_vmstructs__free(NULL);
	free(im);
}

/* The extract under JDK 25's names: renamed types and fields, offsets instead of pointers. */
static void test_extract(void **state)
{
	struct img *im = malloc(sizeof(*im));
	struct jvm_vmstructs *vs;
	struct jvm_vms_layout l;
	struct jvm_hotspot hs;
	int missing;

	(void)state;
	assert_non_null(im);
	build(im, M_NONE, &l);
	assert_int_equal(jvm_vmstructs__decode(&l, img_read, im, &vs), 0);
	missing = jvm_hotspot_extract(vs, &hs);
	/* Found: _name, _frame_size, _code_offset, _heaps, _osthread, _scopes_data_offset,
	 * _frame_complete_offset, _compile_id and the sizes of HeapBlock; everything else is
	 * missing, and the seven entries only some JDKs have are not counted. */
	assert_int_equal(missing, JVM_HS_COUNT - 7 - 9);
	assert_int_equal(hs.width[JVM_HS_CODEBLOB_FRAME_COMPLETE], 2);
	assert_int_equal(hs.val[JVM_HS_CODEBLOB_FRAME_COMPLETE], 0x36);
	assert_int_equal(hs.width[JVM_HS_CODEBLOB_FRAME_SIZE], 4);
	assert_int_equal(hs.width[JVM_HS_NMETHOD_COMPILE_ID], 0);
	assert_true(hs.found & (1ull << JVM_HS_CODEBLOB_CODE));
	assert_true(hs.is_offset & (1ull << JVM_HS_CODEBLOB_CODE));
	assert_int_equal(hs.val[JVM_HS_CODEBLOB_CODE], 0x24);
	assert_string_equal(hs.field[JVM_HS_CODEBLOB_CODE], "_code_offset");
	assert_true(hs.is_offset & (1ull << JVM_HS_NMETHOD_SCOPES_DATA));
	assert_int_equal(hs.val[JVM_HS_JAVATHREAD_OSTHREAD], 0x3f8);
	assert_string_equal(hs.type[JVM_HS_JAVATHREAD_OSTHREAD], "Thread");
	assert_int_equal(hs.val[JVM_HS_CODECACHE_HEAPS], 0x7f0000abc000ull);
	assert_int_equal(hs.val[JVM_HS_HEAPBLOCK_SIZE], 8);
	assert_null(hs.field[JVM_HS_HEAPBLOCK_SIZE]);
	assert_false(hs.is_offset & (1ull << JVM_HS_CODEBLOB_NAME));
	assert_false(hs.found & (1ull << JVM_HS_KLASS_NAME));
	assert_string_equal(jvm_hotspot_label(JVM_HS_CODEBLOB_FRAME_SIZE), "CodeBlob::_frame_size");
	assert_null(jvm_hotspot_label(JVM_HS_COUNT));
	jvm_vmstructs__free(vs);
	free(im);
}

/* Two flags, as JDK 17 and 25 describe them: JVMFlag { _addr 0, _name 8, ... } of 24 bytes. */
static void build_flags(struct img *im, uint64_t count, bool with_table, struct jvm_vms_layout *l)
{
	static const uint8_t on = 1, off = 0;
	uint8_t arr[2][24] = { { 0 } };
	uint64_t a_on, a_off, arr_at, p_at, n_at;
	const char *const tnames[] = { "JVMFlag" };
	const uint64_t tsizes[] = { 24 };

	memset(im, 0, sizeof(*im));
	im->limit = IMG_SIZE;
	a_on = put(im, &on, 1);
	a_off = put(im, &off, 1);
	put64(arr[0], 0, a_on);
	put64(arr[0], 8, str(im, "DisableAttachMechanism"));
	put64(arr[1], 0, a_off);
	put64(arr[1], 8, str(im, "UseSerialGC"));
	arr_at = put(im, arr, sizeof(arr));
	p_at = put(im, &arr_at, sizeof(arr_at));
	n_at = put(im, &count, sizeof(count));
	{
		const struct fdef f[] = {
			{ "JVMFlag", "flags", 1, p_at },
			{ "JVMFlag", "numFlags", 1, n_at },
			{ "JVMFlag", "_name", 0, 8 },
			{ with_table ? "JVMFlag" : "Other", "_addr", 0, 0 },
		};

		*l = (struct jvm_vms_layout){ .s_stride = STRIDE,
					      .s_field_name = 8,
					      .s_is_static = 24,
					      .s_offset = 32,
					      .s_address = 40,
					      .t_stride = STRIDE,
					      .t_size = 32 };
		l->structs = put_fields(im, f, ARRAY_SIZE(f));
		l->types = put_types(im, tnames, tsizes, 1);
	}
}

static void test_flag(void **state)
{
	static const struct {
		const char *name;
		uint64_t count;
		bool table;
		int ret;
		bool value;
	} cases[] = {
		{ "DisableAttachMechanism", 2, true, 0, true },
		{ "UseSerialGC", 2, true, 0, false },
		{ "UseSerialG", 2, true, -ENOENT },
		{ "UseSerialGC", 1, true, -ENOENT },
		{ "DisableAttachMechanism", 0, true, -ENOENT },
		{ "DisableAttachMechanism", 4000, true,
		  -EFAULT }, /* the array runs off the image */
		{ "DisableAttachMechanism", JVM_VMS_MAX_FLAGS + 1, true, -E2BIG },
		{ "DisableAttachMechanism", 2, false, -ENOTSUP },
		{ "", 2, true, -EINVAL },
	};
	struct img *im = malloc(sizeof(*im));
	struct jvm_vms_layout l;
	size_t i;

	(void)state;
	assert_non_null(im);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jvm_vmstructs *vs;
		bool v = !cases[i].value;

		print_message("case %zu (%s)\n", i, cases[i].name);
		build_flags(im, cases[i].count, cases[i].table, &l);
		assert_int_equal(jvm_vmstructs__decode(&l, img_read, im, &vs), 0);
		assert_int_equal(jvm_vmstructs__flag_bool(vs, img_read, im, cases[i].name, &v),
				 cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(v, cases[i].value);
		jvm_vmstructs__free(vs);
	}
	free(im);
}

static void test_decode_args(void **state)
{
	struct jvm_vms_layout l = { 0 };
	struct jvm_vmstructs *vs;

	(void)state;
	assert_int_equal(jvm_vmstructs__decode(NULL, img_read, NULL, &vs), -EINVAL);
	assert_int_equal(jvm_vmstructs__decode(&l, NULL, NULL, &vs), -EINVAL);
	assert_int_equal(jvm_vmstructs__decode(&l, img_read, NULL, &vs), -EINVAL);
	assert_int_equal(jvm_vmstructs__open(0, &vs), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),	    cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_extract),	    cmocka_unit_test(test_flag),
		cmocka_unit_test(test_decode_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
