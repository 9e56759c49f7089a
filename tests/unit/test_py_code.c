// SPDX-License-Identifier: Apache-2.0
/* The code-object reader and its cache over a fake process memory image. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/python/py_code.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BASE 0x10000ull
#define MEM_SIZE (160u * 1024)
#define CODE_TYPE 0xc0de0000ull
#define CODE (BASE + 0x100)
#define NAME (BASE + 0x1000)
#define FILE_ (BASE + 0x2000)
#define LINES (BASE + 0x3000)

struct fake {
	uint8_t mem[MEM_SIZE];
	unsigned reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct fake *f = ctx;

	f->reads++;
	if (addr < BASE || addr - BASE > MEM_SIZE || n > MEM_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - BASE), n);
	return 0;
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(f->mem + (addr - BASE), &v, 8);
}

static void put32(struct fake *f, uint64_t addr, uint32_t v)
{
	memcpy(f->mem + (addr - BASE), &v, 4);
}

/* A str object: @kind 1/2/4, @ascii, @compact, @n characters of @data (@n * @kind bytes). */
static void put_str(struct fake *f, const struct py_offsets *o, uint64_t at, unsigned kind,
		    int ascii, int compact, uint64_t n, const void *data, size_t bytes)
{
	uint32_t state = (kind << 2) | (compact << 5) | (ascii << 6);

	put64(f, at + o->str_length, n);
	put32(f, at + o->str_state, state);
	memcpy(f->mem + (at - BASE) + (ascii ? o->ascii_size : o->compact_size), data, bytes);
}

static void put_code(struct fake *f, const struct py_offsets *o)
{
	memset(f->mem, 0, sizeof(f->mem));
	put64(f, CODE + o->ob_type, CODE_TYPE);
	put64(f, CODE + (o->code_qualname != PY_OFF_NONE ? o->code_qualname : o->code_name), NAME);
	put64(f, CODE + o->code_filename, FILE_);
	put64(f, CODE + o->code_linetable, LINES);
	put32(f, CODE + o->code_firstlineno, 41);
	put_str(f, o, NAME, 1, 1, 1, 9, "Worker.go", 9);
	put_str(f, o, FILE_, 1, 1, 1, 4, "w.py", 4);
	put64(f, LINES + o->bytes_size, 4);
	memcpy(f->mem + (LINES - BASE) + o->bytes_data, "\x00\x01\x04\x01", 4);
}

enum patch {
	NONE,
	TYPE,
	LATIN1,
	UCS2,
	UCS4,
	LEGACY,
	LONG,
	HUGE,
	SURROGATE,
	NUL,
	BIGTABLE,
	NOTABLE,
	NONAME,
	ADDR0,
	UNMAPPED
};

static void test_read(void **state)
{
	static const struct {
		unsigned minor;
		enum patch patch;
		int ret;
		const char *name;
		size_t name_len; /* 0: strlen(name) */
		int has_table;
	} cases[] = {
		{ 12, NONE, 0, "Worker.go", 0, 1 },
		{ 6, NONE, 0, "Worker.go", 0, 1 }, /* co_name, 3.6 layout */
		{ 13, TYPE, -ESTALE },
		{ 12, LATIN1, 0, "caf\xc3\xa9", 0, 1 },
		{ 11, UCS2, 0,
		  "\xe2\x82\xac"
		  "1",
		  0, 1 },
		{ 12, UCS4, 0, "\xf0\x9f\x90\x8d", 0, 1 },
		{ 12, LEGACY, 0, PY_CODE_PLACEHOLDER, 0, 1 },
		{ 12, LONG, 0, NULL, PY_CODE_NAME_MAX, 1 },
		{ 12, HUGE, 0, PY_CODE_PLACEHOLDER, 0, 1 },
		{ 12, SURROGATE, 0, PY_CODE_PLACEHOLDER, 0, 1 },
		{ 12, NUL, 0, PY_CODE_PLACEHOLDER, 0, 1 },
		{ 12, BIGTABLE, 0, "Worker.go", 0, 0 },
		{ 12, NOTABLE, 0, "Worker.go", 0, 0 },
		{ 12, NONAME, 0, PY_CODE_PLACEHOLDER, 0, 1 },
		{ 12, ADDR0, -EINVAL },
		{ 12, UNMAPPED, -EFAULT },
	};
	static const uint16_t ucs2[2] = { 0x20ac, '1' }, sur = 0xd800;
	static const uint32_t ucs4 = 0x1f40d;
	static char longname[400];
	/* the name str object a patch writes instead: kind, ascii, compact, length, data, bytes */
	static const struct {
		unsigned kind;
		int ascii, compact;
		uint64_t n;
		const void *data;
		size_t bytes;
	} names[] = {
		[LATIN1] = { 1, 0, 1, 4, "caf\xe9", 4 },
		[UCS2] = { 2, 0, 1, 2, ucs2, 4 },
		[UCS4] = { 4, 0, 1, 1, &ucs4, 4 },
		[LEGACY] = { 1, 1, 0, 4, "abcd", 4 },
		[LONG] = { 1, 1, 1, sizeof(longname), longname, sizeof(longname) },
		[HUGE] = { 1, 1, 1, 1ull << 40, "x", 1 },
		[SURROGATE] = { 2, 0, 1, 1, &sur, 2 },
		[NUL] = { 1, 1, 1, 3, "a\0b", 3 },
	};
	static struct fake f;
	size_t i;

	(void)state;
	memset(longname, 'a', sizeof(longname));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum patch patch = cases[i].patch;
		const struct py_offsets *o;
		struct py_code_info ci;
		uint64_t addr = CODE;

		print_message("case %zu\n", i);
		assert_int_equal(py_offsets_for_version(3, cases[i].minor, &o), 0);
		put_code(&f, o);
		if (patch < ARRAY_SIZE(names) && names[patch].kind)
			put_str(&f, o, NAME, names[patch].kind, names[patch].ascii,
				names[patch].compact, names[patch].n, names[patch].data,
				names[patch].bytes);
		switch (patch) {
		case TYPE:
			put64(&f, CODE + o->ob_type, CODE_TYPE + 8);
			break;
		case BIGTABLE:
			put64(&f, LINES + o->bytes_size, PY_CODE_TABLE_MAX + 1);
			break;
		case NOTABLE:
			put64(&f, CODE + o->code_linetable, 0);
			break;
		case NONAME:
			put64(&f, CODE + o->code_name, 8);
			put64(&f, CODE + o->code_qualname, 8);
			break;
		case ADDR0:
			addr = 0;
			break;
		case UNMAPPED:
			addr = BASE + MEM_SIZE - 16;
			break;
		default:
			break;
		}
		assert_int_equal(py_code_read(o, CODE_TYPE, fake_read, &f, addr, &ci),
				 cases[i].ret);
		if (cases[i].ret)
			continue;
		if (cases[i].name)
			assert_string_equal(ci.name, cases[i].name);
		else
			assert_int_equal(strlen(ci.name), cases[i].name_len);
		assert_string_equal(ci.file, "w.py");
		assert_int_equal(ci.firstlineno, 41);
		assert_int_equal(ci.linetable != NULL, cases[i].has_table);
		py_code_info_clear(&ci);
	}
}

static void test_line(void **state)
{
	/* lnotab "\x00\x01\x04\x01": offsets 0-3 line 42, 4+ line 43 (firstlineno 41) */
	static const struct {
		unsigned minor;
		uint64_t instr;
		int ret, line;
	} cases[] = {
		{ 8, 0, 0, 42 },
		{ 8, 4, 0, 43 },
		{ 8, (uint32_t)-1, 0, 42 },
		{ 10, 2, 0, 43 }, /* 3.10 counts code units */
	};
	static struct fake f;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct py_offsets *o;
		struct py_code_info ci;
		int line = 0;

		print_message("case %zu\n", i);
		assert_int_equal(py_offsets_for_version(3, cases[i].minor, &o), 0);
		put_code(&f, o);
		if (cases[i].minor == 10) /* (4 bytes, +1) (4 bytes, +1) */
			memcpy(f.mem + (LINES - BASE) + o->bytes_data, "\x04\x01\x04\x01", 4);
		assert_int_equal(py_code_read(o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
		assert_int_equal(py_code_line(o, &ci, CODE, cases[i].instr, &line), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(line, cases[i].line);
		py_code_info_clear(&ci);
	}
}

static void test_line_interp(void **state)
{
	static const struct {
		uint64_t instr;
		int ret, line;
	} cases[] = {
		{ CODE + 192, 0, 41 },	    /* first code unit: "\x80\x00" line +0 */
		{ CODE + 194, 0, 42 },	    /* "\xd8\x01\x02" one-line form +1 */
		{ CODE + 196, -ENOENT, 0 }, /* past the table */
		{ CODE + 100, -ERANGE, 0 }, /* before the code */
	};
	static struct fake f;
	const struct py_offsets *o;
	struct py_code_info ci;
	size_t i;

	(void)state;
	assert_int_equal(py_offsets_for_version(3, 12, &o), 0);
	put_code(&f, o);
	put64(&f, LINES + o->bytes_size, 5);
	memcpy(f.mem + (LINES - BASE) + o->bytes_data, "\x80\x00\xd8\x01\x02", 5);
	assert_int_equal(py_code_read(o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int line = 0;

		print_message("case %zu\n", i);
		assert_int_equal(py_code_line(o, &ci, CODE, cases[i].instr, &line), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(line, cases[i].line);
	}
	py_code_info_clear(&ci);
}

static void test_cache(void **state)
{
	static struct fake f;
	struct py_code_cache_opts opts = { .max_entries = 8 };
	struct py_code_cache_stats st;
	const struct py_code_info *ci;
	const struct py_offsets *o;
	struct py_code_cache *c;

	(void)state;
	assert_int_equal(py_offsets_for_version(3, 12, &o), 0);
	put_code(&f, o);
	assert_int_equal(py_code_cache__new(&opts, &c), 0);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	assert_string_equal(ci->name, "Worker.go");
	f.reads = 0;
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	assert_int_equal(f.reads, 1); /* the header only */
	/* freed: its type is no longer PyCode_Type */
	put64(&f, CODE + o->ob_type, 0x1234);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci),
			 -ESTALE);
	/* reused by another code object at the same address: re-read, never the old name */
	put64(&f, CODE + o->ob_type, CODE_TYPE);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	put_str(&f, o, NAME + 0x100, 1, 1, 1, 5, "other", 5);
	put64(&f, CODE + o->code_qualname, NAME + 0x100);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	assert_string_equal(ci->name, "other");
	py_code_cache__forget(c, 7);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, CODE, &ci), 0);
	assert_int_equal(py_code_cache__lookup(c, 7, o, CODE_TYPE, fake_read, &f, 8, &ci), -EFAULT);
	py_code_cache__stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 4);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.reused, 1);
	assert_int_equal(st.errors, 1);
	py_code_cache__free(c);
	py_code_cache__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_line_interp),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
