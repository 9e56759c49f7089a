// SPDX-License-Identifier: Apache-2.0
/*
 * Line numbers from real line tables: the tables of one function, sample() in
 * tests/workloads/python/linetable_sample.py, dumped by each CPython on this machine
 * (co_lnotab / co_linetable .hex()); the expected lines come from the same interpreter's
 * dis.findlinestarts() (3.6-3.9) or co_lines() (3.10+).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtimes/python/py_linetable.h"
#include "runtimes/python/py_offsets.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct lt_table {
	const char *version;
	unsigned format;
	const uint8_t *tab;
	size_t len;
	int firstlineno;
};

struct lt_row {
	size_t table;
	uint32_t off;
	int ret, line;
};

static const struct lt_table tables[] = {
	{ "3.6", PY_LINES_LNOTAB,
	  (const uint8_t *)"\x00\x01\x04\x01\x0e\x01\x08\x01\x0e\x02\x0c\x01", 12, 2 },
	{ "3.7", PY_LINES_LNOTAB,
	  (const uint8_t *)"\x00\x01\x04\x01\x0e\x01\x08\x01\x0e\x02\x0c\x01", 12, 2 },
	{ "3.8", PY_LINES_LNOTAB,
	  (const uint8_t *)"\x00\x01\x04\x01\x0c\x01\x08\x01\x0e\x02\x0a\x01", 12, 2 },
	{ "3.9", PY_LINES_LNOTAB,
	  (const uint8_t *)"\x00\x01\x04\x01\x0c\x01\x08\x01\x0e\x02\x0a\x01", 12, 2 },
	{ "3.10", PY_LINES_310, (const uint8_t *)"\x04\x01\x0c\x01\x08\x01\x0e\x01\x0a\x02\x04\x01",
	  12, 2 },
	{ "3.11", PY_LINES_311,
	  (const uint8_t
		   *)"\x80\x00\xd8\x0c\x0d\x80\x45\xdd\x0d\x12\x90\x31\x89\x58\x8c\x58\xf0\x00\x04\x05\x17\xf0\x00\x04\x05\x17\x88\x01\xd8\x0b\x0c\x88\x71\x89\x35\xf0\x00\x03\x09\x17\xd8\x0c\x11\x90\x51\x98\x11\x91\x55\x89\x4e\x88\x45\x88\x45\xe0\x0c\x11\x90\x51\x89\x4a\x88\x45\x88\x45\xd8\x0b\x10\x80\x4c",
	  71, 2 },
	{ "3.12", PY_LINES_311,
	  (const uint8_t
		   *)"\x80\x00\xd8\x0c\x0d\x80\x45\xdc\x0d\x12\x90\x31\x8b\x58\xf2\x00\x04\x05\x17\x88\x01\xd8\x0b\x0c\x88\x71\x8a\x35\xd8\x0c\x11\x90\x51\x98\x11\x91\x55\x89\x4e\x89\x45\xe0\x0c\x11\x90\x51\x89\x4a\x89\x45\xf0\x09\x04\x05\x17\xf0\x0a\x00\x0c\x11\x80\x4c",
	  62, 2 },
	{ "3.13", PY_LINES_311,
	  (const uint8_t
		   *)"\x80\x00\xd8\x0c\x0d\x80\x45\xdc\x0d\x12\x90\x31\x8e\x58\x88\x01\xd8\x0b\x0c\x88\x71\x8f\x35\xd8\x0c\x11\x98\x11\x91\x55\x89\x4e\x8a\x45\xe0\x0c\x11\x90\x51\x89\x4a\x8a\x45\xf1\x09\x00\x0e\x16\xf0\x0a\x00\x0c\x11\x80\x4c",
	  55, 2 },
};

static const struct lt_row rows[] = {
	{ 0, 0, 0, 3 },	 { 0, 8, 0, 4 },  { 0, 16, 0, 4 }, { 0, 24, 0, 5 }, { 0, 32, 0, 6 },
	{ 0, 40, 0, 8 }, { 0, 48, 0, 8 }, { 0, 54, 0, 9 }, { 1, 0, 0, 3 },  { 1, 8, 0, 4 },
	{ 1, 16, 0, 4 }, { 1, 24, 0, 5 }, { 1, 32, 0, 6 }, { 1, 40, 0, 8 }, { 1, 48, 0, 8 },
	{ 1, 54, 0, 9 }, { 2, 0, 0, 3 },  { 2, 8, 0, 4 },  { 2, 16, 0, 5 }, { 2, 24, 0, 6 },
	{ 2, 32, 0, 6 }, { 2, 40, 0, 8 }, { 2, 48, 0, 9 }, { 2, 50, 0, 9 }, { 3, 0, 0, 3 },
	{ 3, 8, 0, 4 },	 { 3, 16, 0, 5 }, { 3, 24, 0, 6 }, { 3, 32, 0, 6 }, { 3, 40, 0, 8 },
	{ 3, 48, 0, 9 }, { 3, 50, 0, 9 }, { 4, 0, 0, 3 },  { 4, 8, 0, 4 },  { 4, 16, 0, 5 },
	{ 4, 24, 0, 6 }, { 4, 32, 0, 6 }, { 4, 40, 0, 8 }, { 4, 48, 0, 9 }, { 4, 50, 0, 9 },
	{ 5, 0, 0, 2 },	 { 5, 8, 0, 4 },  { 5, 16, 0, 4 }, { 5, 24, 0, 4 }, { 5, 32, 0, 4 },
	{ 5, 40, 0, 5 }, { 5, 48, 0, 5 }, { 5, 56, 0, 6 }, { 5, 64, 0, 6 }, { 5, 72, 0, 8 },
	{ 5, 80, 0, 9 }, { 5, 82, 0, 9 }, { 6, 0, 0, 2 },  { 6, 8, 0, 4 },  { 6, 16, 0, 4 },
	{ 6, 24, 0, 4 }, { 6, 32, 0, 4 }, { 6, 40, 0, 5 }, { 6, 48, 0, 6 }, { 6, 56, 0, 6 },
	{ 6, 64, 0, 8 }, { 6, 72, 0, 8 }, { 6, 78, 0, 9 }, { 7, 0, 0, 2 },  { 7, 8, 0, 4 },
	{ 7, 16, 0, 4 }, { 7, 24, 0, 4 }, { 7, 32, 0, 4 }, { 7, 40, 0, 5 }, { 7, 48, 0, 5 },
	{ 7, 56, 0, 6 }, { 7, 64, 0, 6 }, { 7, 72, 0, 8 }, { 7, 80, 0, 8 }, { 7, 88, 0, 4 },
	{ 7, 92, 0, 9 },
};

static void test_real_tables(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct lt_table *t = &tables[rows[i].table];
		int line = -1;

		print_message("case %zu (%s +%u)\n", i, t->version, rows[i].off);
		assert_int_equal(py_linetable_line(t->format, t->tab, t->len, t->firstlineno,
						   rows[i].off, &line),
				 rows[i].ret);
		if (!rows[i].ret)
			assert_int_equal(line, rows[i].line);
	}
}

/* Hand-made tables for the edges: no line, truncation, malformed varints, unknown format. */
static void test_edges(void **state)
{
	static const struct {
		unsigned format;
		const char *tab;
		size_t len;
		uint32_t off;
		int ret, line;
	} cases[] = {
		{ PY_LINES_LNOTAB, "", 0, 100, 0, 10 },			/* empty: the def line */
		{ PY_LINES_LNOTAB, "\x04\xff", 2, 4, 0, 9 },		/* negative delta (3.6+) */
		{ PY_LINES_LNOTAB, "\x04\x01\x04", 3, 8, 0, 11 },	/* odd byte ignored */
		{ PY_LINES_310, "\x04\x80\x04\x02", 4, 2, -ENOENT, 0 }, /* -128: no line */
		{ PY_LINES_310, "\x04\x80\x04\x02", 4, 6, 0, 12 },
		{ PY_LINES_310, "\x04\x01", 2, 4, -ENOENT, 0 }, /* past the end */
		{ PY_LINES_311, "\xf8", 1, 0, -ENOENT, 0 },	/* code 15: no location */
		{ PY_LINES_311, "\xe8\x43", 2, 0, -EINVAL, 0 }, /* code 13, varint runs off */
		{ PY_LINES_311, "\xe8\x06", 2, 0, 0, 13 },	/* code 13, delta +3 */
		{ PY_LINES_311, "\xe8\x07", 2, 0, 0, 7 },	/* code 13, delta -3 */
		{ PY_LINES_311, "\xf0\x02\x00\x01\x01", 5, 0, 0, 11 }, /* long form */
		{ PY_LINES_311, "\xf0\x02\x00", 3, 0, -EINVAL, 0 },    /* long form, cut */
		{ PY_LINES_311, "\xd8\x01\x02", 3, 0, 0, 11 },	       /* one-line form, +1 */
		{ PY_LINES_311, "\xd8\x01", 2, 0, -EINVAL, 0 },	       /* one-line form, cut */
		{ PY_LINES_311, "\x08", 1, 0, -EINVAL, 0 },	       /* no entry marker */
		{ PY_LINES_311, "\x80\x00", 2, 2, -ENOENT, 0 },	       /* past the end */
		{ PY_LINES_311, "\xe8\x7f\x7f\x7f\x7f\x7f\x7f\x00", 8, 0, -EINVAL, 0 }, /* huge */
		{ 0, "", 0, 0, -EINVAL, 0 },
		{ 9, "", 0, 0, -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int line = -1;

		print_message("case %zu\n", i);
		assert_int_equal(py_linetable_line(cases[i].format, (const uint8_t *)cases[i].tab,
						   cases[i].len, 10, cases[i].off, &line),
				 cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(line, cases[i].line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_tables),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
