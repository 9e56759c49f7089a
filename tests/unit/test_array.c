// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/array.c: array growth, LEB128 varints, decimal and hex digits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"

static void test_array_ensure(void **state)
{
	static const struct {
		size_t cap, elem, need;
		int ret;
		size_t want_cap;
	} cases[] = {
		{ 0, 4, 0, 0, 0 },			/* large enough: untouched */
		{ 0, 4, 1, 0, 16 },			/* first growth: 16 */
		{ 0, 1, 16, 0, 16 },
		{ 0, 1, 17, 0, 32 },
		{ 16, 8, 16, 0, 16 },
		{ 16, 8, 17, 0, 32 },
		{ 16, 8, 1000, 0, 1024 },		/* doubles until it fits */
		{ 3, 2, 7, 0, 12 },			/* doubles from the current capacity */
		{ 0, 0, 1, -ENOMEM, 0 },		/* no element size */
		{ 0, 1, SIZE_MAX, -ENOMEM, 0 },		/* the capacity cannot double that far */
		{ 0, SIZE_MAX / 8, 32, -ENOMEM, 0 },	/* capacity * elem overflows */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t cap = cases[i].cap;
		void *data = cap ? malloc(cap * cases[i].elem) : NULL, *before = data;

		print_message("case %zu\n", i);
		assert_int_equal(array_ensure(&data, &cap, cases[i].elem, cases[i].need),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(data, before);
			assert_int_equal(cap, cases[i].cap);
		} else {
			assert_int_equal(cap, cases[i].want_cap);
			if (cases[i].need)
				memset(data, 0xa5, cases[i].need * cases[i].elem);
		}
		free(data);
	}
}

static void test_leb128_u64(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		int ret;
		uint64_t want;
		size_t used;
	} cases[] = {
		{ "\x00", 1, 0, 0, 1 },
		{ "\x01", 1, 0, 1, 1 },
		{ "\x7f", 1, 0, 127, 1 },
		{ "\x80\x01", 2, 0, 128, 2 },
		{ "\xe5\x8e\x26", 3, 0, 624485, 3 },			/* the DWARF example */
		{ "\x96\x01\xff", 3, 0, 150, 2 },			/* stops at the value's end */
		{ "\x80\x80\x00", 3, 0, 0, 3 },				/* padded */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, 0, UINT64_MAX, 10 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, 0, 1ull << 63, 10 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 9, 0, INT64_MAX, 9 },
		{ "", 0, -EINVAL, 0, 0 },				/* empty */
		{ "\x80", 1, -EINVAL, 0, 0 },				/* cut off */
		{ "\xff\xff\xff", 3, -EINVAL, 0, 0 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff", 9, -EINVAL, 0, 0 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, -ERANGE, 0, 0 }, /* bit 64 */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10, -ERANGE, 0, 0 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11, -ERANGE, 0, 0 }, /* 11 bytes */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81", 10, -ERANGE, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const uint8_t *start = (const uint8_t *)cases[i].in, *p = start;
		uint64_t v = 0xdead;

		print_message("case %zu\n", i);
		assert_int_equal(leb128_u64(&p, start + cases[i].len, &v), cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(p, start);		/* untouched on failure */
			assert_int_equal(v, 0xdead);
			continue;
		}
		assert_int_equal(v, cases[i].want);
		assert_int_equal(p - start, cases[i].used);
	}
}

static void test_leb128_s64(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		int ret;
		int64_t want;
		size_t used;
	} cases[] = {
		{ "\x00", 1, 0, 0, 1 },
		{ "\x02", 1, 0, 2, 1 },
		{ "\x7e", 1, 0, -2, 1 },
		{ "\x7f", 1, 0, -1, 1 },
		{ "\x3f", 1, 0, 63, 1 },
		{ "\x40", 1, 0, -64, 1 },
		{ "\xff\x00", 2, 0, 127, 2 },
		{ "\x81\x7f", 2, 0, -127, 2 },
		{ "\x80\x01", 2, 0, 128, 2 },
		{ "\x80\x7f", 2, 0, -128, 2 },
		{ "\xc0\xbb\x78", 3, 0, -123456, 3 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00", 10, 0, INT64_MAX, 10 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x7f", 10, 0, INT64_MIN, 10 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10, 0, -1, 10 },	/* padded -1 */
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x40", 9, 0, -(1ll << 62), 9 },
		{ "", 0, -EINVAL, 0, 0 },
		{ "\xc0", 1, -EINVAL, 0, 0 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80", 9, -EINVAL, 0, 0 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, -ERANGE, 0, 0 },	/* +2^63 */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7e", 10, -ERANGE, 0, 0 },	/* below -2^63 */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x40", 10, -ERANGE, 0, 0 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11, -ERANGE, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const uint8_t *start = (const uint8_t *)cases[i].in, *p = start;
		int64_t v = 0xdead;

		print_message("case %zu\n", i);
		assert_int_equal(leb128_s64(&p, start + cases[i].len, &v), cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(p, start);
			assert_int_equal(v, 0xdead);
			continue;
		}
		assert_true(v == cases[i].want);
		assert_int_equal(p - start, cases[i].used);
	}
}

static void test_parse_dec_u64(void **state)
{
	static const struct {
		const char *in;
		uint64_t max;
		int ret;
		uint64_t want;
		const char *rest;
	} cases[] = {
		{ "0", UINT64_MAX, 0, 0, "" },
		{ "42", UINT64_MAX, 0, 42, "" },
		{ "007 rest", UINT64_MAX, 0, 7, " rest" },
		{ "123abc", UINT64_MAX, 0, 123, "abc" },
		{ "18446744073709551615", UINT64_MAX, 0, UINT64_MAX, "" },
		{ "65535", 65535, 0, 65535, "" },
		{ "9", 9, 0, 9, "" },
		{ "18446744073709551616", UINT64_MAX, -ERANGE, 0, NULL },	/* max + 1 */
		{ "99999999999999999999", UINT64_MAX, -ERANGE, 0, NULL },
		{ "65536", 65535, -ERANGE, 0, NULL },
		{ "10", 9, -ERANGE, 0, NULL },
		{ "7", 5, -ERANGE, 0, NULL },
		{ "1", 0, -ERANGE, 0, NULL },
		{ "", UINT64_MAX, -EINVAL, 0, NULL },				/* no digit */
		{ "-1", UINT64_MAX, -EINVAL, 0, NULL },
		{ "+1", UINT64_MAX, -EINVAL, 0, NULL },
		{ " 1", UINT64_MAX, -EINVAL, 0, NULL },
		{ "x1", UINT64_MAX, -EINVAL, 0, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *p = cases[i].in;
		uint64_t v = 0xdead;

		print_message("case %zu\n", i);
		assert_int_equal(parse_dec_u64(&p, cases[i].max, &v), cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(p, cases[i].in);
			assert_int_equal(v, 0xdead);
			continue;
		}
		assert_int_equal(v, cases[i].want);
		assert_string_equal(p, cases[i].rest);
	}
}

static void test_hex_digit(void **state)
{
	static const struct {
		int c, want;
	} cases[] = {
		{ '0', 0 }, { '9', 9 }, { 'a', 10 }, { 'f', 15 }, { 'A', 10 }, { 'F', 15 },
		{ 'g', -1 }, { 'G', -1 }, { '/', -1 }, { ':', -1 }, { '@', -1 }, { '`', -1 },
		{ ' ', -1 }, { '\0', -1 }, { 0xff, -1 }, { -1, -1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(hex_digit(cases[i].c), cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_ensure),
		cmocka_unit_test(test_leb128_u64),
		cmocka_unit_test(test_leb128_s64),
		cmocka_unit_test(test_parse_dec_u64),
		cmocka_unit_test(test_hex_digit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
