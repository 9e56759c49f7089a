// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "symbols/symindex.h"

#define UNUSED __attribute__((unused))
#define BID "abcdef0123456789"

static void test_valid_build_id(void **state UNUSED)
{
	static const struct {
		const char *id;
		bool ok;
	} cases[] = {
		{ "ab", true },
		{ BID, true },
		{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true },
		/* Error rows. */
		{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01", false },
		{ "", false },
		{ "a", false },
		{ "abc", false },
		{ "ABCD", false },
		{ "ab/d", false },
		{ "../x", false },
		{ "abcg", false },
		{ NULL, false },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(symindex_valid_build_id(cases[i].id), cases[i].ok);
	}
}

static struct symindex_build *make_build(void)
{
	static const struct {
		uint64_t start, size;
		const char *name;
		unsigned flags;
	} fns[] = {
		{ 0x3000, 0x100, "third", SYMINDEX_GLOBAL },
		{ 0x1000, 0x10, "first_local", 0 },
		{ 0x1000, 0x10, "first", SYMINDEX_GLOBAL },	/* GLOBAL wins */
		{ 0x1000, 0x20, "first_weak", SYMINDEX_WEAK },
		{ 0x2000, 0x10, "second_short", SYMINDEX_GLOBAL },
		{ 0x2000, 0x30, "second", SYMINDEX_GLOBAL },	/* the longest wins */
		{ 0x2020, 0x8, "nested", SYMINDEX_GLOBAL },	/* "second" ends at 0x2020 */
		{ 0x2800, 0x1000, "unsized", SYMINDEX_UNSIZED },	/* ends at "third" */
		{ 0x3100, 0x10, "b_name", 0 },
		{ 0x3100, 0x10, "a_name", 0 },			/* the smaller name wins */
		{ UINT64_MAX - 4, 100, "top", 0 },		/* cut at the end of the space */
	};
	struct symindex_build *b;
	size_t i;

	assert_int_equal(symindex_build__new(BID, 0, &b), 0);
	for (i = 0; i < ARRAY_SIZE(fns); i++)
		assert_int_equal(symindex_build__add(b, fns[i].start, fns[i].size, fns[i].name,
						     strlen(fns[i].name), fns[i].flags),
				 0);
	assert_false(symindex_build__sealed(b));
	assert_int_equal(symindex_build__seal(b), 0);
	assert_int_equal(symindex_build__seal(b), 0);
	return b;
}

static void encode(const struct symindex_build *b, void **data, size_t *len)
{
	struct symindex_meta meta = { "app.debug", "alice@example.com", 1700000000 };

	assert_int_equal(symindex__encode(b, &meta, data, len), 0);
}

static void test_round_trip(void **state UNUSED)
{
	static const struct {
		uint64_t addr;
		const char *name;
	} cases[] = {
		{ 0, NULL },
		{ 0xfff, NULL },		/* before the first */
		{ 0x1000, "first" },
		{ 0x100f, "first" },		/* last byte */
		{ 0x1010, NULL },		/* gap */
		{ 0x2000, "second" },
		{ 0x201f, "second" },
		{ 0x2020, "nested" },
		{ 0x2028, NULL },
		{ 0x2800, "unsized" },
		{ 0x2fff, "unsized" },
		{ 0x3000, "third" },
		{ 0x3100, "a_name" },
		{ 0x310f, "a_name" },
		{ 0x3110, NULL },		/* after the last */
		{ UINT64_MAX - 4, "top" },
		{ UINT64_MAX - 1, "top" },
		{ UINT64_MAX, NULL },
	};
	struct symindex_build *b = make_build();
	struct symindex_info info;
	struct symindex *ix;
	size_t i, len;
	void *data;

	assert_int_equal(symindex_build__count(b), 7);
	encode(b, &data, &len);
	assert_true(len < 48 + 24 + 8 * 16 + 80);
	assert_int_equal(symindex__decode(data, len, &ix), 0);
	assert_string_equal(symindex__build_id(ix), BID);
	assert_int_equal(symindex__count(ix), 7);
	assert_string_equal(symindex__file_name(ix), "app.debug");
	assert_string_equal(symindex__uploaded_by(ix), "alice@example.com");
	assert_int_equal(symindex__uploaded_at(ix), 1700000000);
	assert_true(symindex__mem(ix) >= len);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		if (cases[i].name)
			assert_string_equal(symindex__lookup(ix, cases[i].addr), cases[i].name);
		else
			assert_null(symindex__lookup(ix, cases[i].addr));
	}
	assert_int_equal(symindex_peek(data, 96, len, &info), 0);
	assert_string_equal(info.build_id, BID);
	assert_int_equal(info.functions, 7);
	assert_int_equal(symindex_peek(data, 96, len + 1, &info), -EBADMSG);
	assert_int_equal(symindex_peek(data, 95, len, &info), -EBADMSG);
	symindex__free(ix);
	free(data);
	symindex_build__free(b);
}

static void test_add(void **state UNUSED)
{
	static const struct {
		uint64_t start;
		const char *name;
		size_t len;
		int ret;
		const char *stored;
	} cases[] = {
		{ 0x10, "plain", 5, 0, "plain" },
		{ 0x20, "cut here", 3, 0, "cut" },
		{ 0x30, "bad\xff\x01utf8", 10, 0, "bad??utf8" },
		{ 0x40, "\xe2\x82", 2, 0, "??" },
		/* Error rows. */
		{ 0, "zero", 4, -EINVAL, NULL },
		{ 0x50, "", 0, -EINVAL, NULL },
		{ 0x60, "\0abc", 4, -EINVAL, NULL },
	};
	struct symindex_build *b;
	struct symindex *ix;
	size_t i, len;
	void *data;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(symindex_build__new(BID, 0, &b), 0);
		assert_int_equal(symindex_build__add(b, cases[i].start, 4, cases[i].name, cases[i].len,
						     0),
				 cases[i].ret);
		assert_int_equal(symindex_build__seal(b), 0);
		encode(b, &data, &len);
		assert_int_equal(symindex__decode(data, len, &ix), 0);
		if (cases[i].stored)
			assert_string_equal(symindex__lookup(ix, cases[i].start), cases[i].stored);
		else
			assert_int_equal(symindex__count(ix), 0);
		symindex__free(ix);
		free(data);
		symindex_build__free(b);
	}
}

/* A long name is cut on a character to SYMINDEX_NAME_MAX bytes, "..." at its end. */
static void test_long_name(void **state UNUSED)
{
	char name[3000], *p;
	struct symindex_build *b;
	struct symindex *ix;
	const char *got;
	size_t len;
	void *data;

	for (p = name; p + 3 < name + sizeof(name); p += 3)
		memcpy(p, "\xe2\x82\xac", 3);	/* U+20AC */
	*p = '\0';
	assert_int_equal(symindex_build__new(BID, 2, &b), 0);
	assert_int_equal(symindex_build__add(b, 0x10, 1, name, strlen(name), 0), 0);
	assert_int_equal(symindex_build__add(b, 0x20, 1, "x", 1, 0), 0);
	assert_int_equal(symindex_build__add(b, 0x30, 1, "y", 1, 0), -E2BIG);
	assert_int_equal(symindex_build__seal(b), 0);
	encode(b, &data, &len);
	assert_int_equal(symindex__decode(data, len, &ix), 0);
	got = symindex__lookup(ix, 0x10);
	assert_true(strlen(got) <= SYMINDEX_NAME_MAX && strlen(got) > SYMINDEX_NAME_MAX - 6);
	assert_string_equal(got + strlen(got) - 3, "...");
	assert_int_equal((strlen(got) - 3) % 3, 0);
	symindex__free(ix);
	free(data);
	symindex_build__free(b);
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Every corruption is refused. The encoding of make_build() with meta: header 48 bytes, then
 * the build id (16), "app.debug" (9), the uploader (17) padded to 48: entries at 96.
 */
static void test_corrupt(void **state UNUSED)
{
	enum { E = 96, S = 96 + 7 * 16 };
	static const struct {
		size_t at, n; /* little-endian patch of @n bytes (0: none) */
		uint64_t val;
		long dlen;    /* bytes added to (cut from) the length */
		int ret;
	} cases[] = {
		{ 0, 0, 0, 0, 0 },
		{ 0, 1, 'X', 0, -EBADMSG },			/* magic */
		{ 7, 1, 2, 0, -EBADMSG },			/* version */
		{ 8, 4, 1, 0, -EBADMSG },			/* flags */
		{ 12, 2, 15, 0, -EBADMSG },			/* odd build id length */
		{ 12, 2, 200, 0, -EBADMSG },			/* build id too long */
		{ 14, 2, 300, 0, -EBADMSG },			/* file name too long */
		{ 16, 2, 200, 0, -EBADMSG },			/* uploader too long */
		{ 18, 2, 1, 0, -EBADMSG },			/* reserved */
		{ 20, 4, 1, 0, -EBADMSG },			/* reserved */
		{ 32, 8, 9, 0, -EBADMSG },			/* count */
		{ 32, 8, UINT64_MAX / 8, 0, -EBADMSG },		/* count overflowing */
		{ 40, 8, 1, 0, -EBADMSG },			/* string table length */
		{ 48, 1, 'A', 0, -EBADMSG },			/* build id not lowercase hex */
		{ 64, 1, 0x01, 0, -EBADMSG },			/* control char in file name */
		{ 66, 1, 0xff, 0, -EBADMSG },			/* bad UTF-8 in file name */
		{ 95, 1, 1, 0, -EBADMSG },			/* padding */
		{ E, 8, 0, 0, -EBADMSG },			/* start 0 */
		{ E + 16, 8, 0xf00, 0, -EBADMSG },		/* starts not increasing */
		{ E + 8, 4, 0x2000, 0, -EBADMSG },		/* overlapping the next */
		{ E + 8, 4, 0, 0, -EBADMSG },			/* size 0 */
		{ E + 12, 4, 1, 0, -EBADMSG },			/* name inside another */
		{ E + 12, 4, 0xffff, 0, -EBADMSG },		/* name past the table */
		{ E + 6 * 16 + 8, 4, 0x10, 0, -EBADMSG },	/* wraps the address space */
		{ S, 1, 0xc0, 0, -EBADMSG },			/* bad UTF-8 in a name */
		{ S, 1, '\n', 0, -EBADMSG },			/* control char in a name */
		{ S + 5, 1, 'x', 0, -EBADMSG },			/* two names joined */
		{ 0, 0, 0, -1, -EBADMSG },			/* cut */
		{ 0, 0, 0, -100, -EBADMSG },
		{ 0, 0, 0, 1, -EBADMSG },			/* trailing byte */
	};
	struct symindex_build *b = make_build();
	uint8_t *copy;
	struct symindex *ix;
	size_t i, len, clen;
	void *data;

	encode(b, &data, &len);
	copy = malloc(len + 1);
	assert_non_null(copy);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memcpy(copy, data, len);
		copy[len] = 0;
		if (cases[i].n)
			put_le(copy + cases[i].at, cases[i].val, cases[i].n);
		clen = (size_t)((long)len + cases[i].dlen);
		ix = NULL;
		assert_int_equal(symindex__decode(copy, clen, &ix), cases[i].ret);
		assert_true(!cases[i].ret == !!ix);
		symindex__free(ix);
	}
	assert_int_equal(symindex__decode(copy, 10, &ix), -EBADMSG);
	assert_int_equal(symindex__decode(copy, 0, &ix), -EBADMSG);
	assert_int_equal(symindex__decode(copy, SYMINDEX_MAX_BYTES + 1ul, &ix), -EFBIG);
	assert_int_equal(symindex__decode(NULL, 0, &ix), -EINVAL);
	free(copy);
	free(data);
	symindex_build__free(b);
}

static void test_api_errors(void **state UNUSED)
{
	struct symindex_build *b = NULL;
	size_t len;
	void *data;

	assert_int_equal(symindex_build__new("XYZ", 0, &b), -EINVAL);
	assert_int_equal(symindex_build__new(BID, 0, NULL), -EINVAL);
	assert_null(b);
	assert_int_equal(symindex_build__new(BID, 0, &b), 0);
	assert_int_equal(symindex_build__add(b, 0x10, 1, "f", 1, 0), 0);
	assert_int_equal(symindex__encode(b, NULL, &data, &len), -EINVAL); /* not sealed */
	symindex_build__free(b);
	symindex_build__free(NULL);
	symindex__free(NULL);
	assert_null(symindex__lookup(NULL, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_build_id), cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_add),	       cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_corrupt),	       cmocka_unit_test(test_api_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
