// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's compressed debug information (runtimes/jvm/jvm_scopes.h), one table per decoder:
 * UNSIGNED5 integers in both variants (JDK 17: every byte value, JDK 20+: 0 excluded), the
 * PcDesc lookup, scope chains and the compressed line number table, each with the malformed
 * inputs a freed or racing JVM region can hold (cut short, unsorted, looping, too deep).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_scopes.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* HotSpot's UNSIGNED5 writer (unsigned5.hpp): X = @excl, L = 192 - X, H = 64. */
static size_t u5_put(uint8_t *p, uint32_t v, unsigned excl)
{
	const uint32_t l = 192 - excl;
	size_t n = 0;

	while (n < 4 && v >= l) {
		p[n++] = (uint8_t)(excl + l + ((v - l) & 63));
		v = (v - l) >> 6;
	}
	p[n++] = (uint8_t)(v + excl);
	return n;
}

/* --- jvm_u5_read ------------------------------------------------------------------------ */

struct u5_row {
	const char *what;
	uint8_t buf[8];
	size_t len;
	unsigned excl;
	int ret;
	uint32_t v;
	size_t pos; /* after the read */
};

#define B5 (255u + (255u << 6) + (255u << 12) + (255u << 18))

static const struct u5_row u5_rows[] = {
	{ "one byte", { 0x05 }, 1, 0, 0, 5, 1 },
	{ "one byte, zero (JDK 17)", { 0x00 }, 1, 0, 0, 0, 1 },
	{ "one byte, largest", { 191 }, 1, 0, 0, 191, 1 },
	{ "one byte excl", { 0x06 }, 1, 1, 0, 5, 1 },
	{ "one byte excl, zero", { 0x01 }, 1, 1, 0, 0, 1 },
	{ "two bytes", { 193, 0x02 }, 2, 0, 0, 193 + (2u << 6), 2 },
	{ "two bytes, stops", { 193, 0x02, 0x07 }, 3, 0, 0, 193 + (2u << 6), 2 },
	{ "two bytes excl", { 193, 0x03 }, 2, 1, 0, 192 + (2u << 6), 2 },
	{ "five bytes", { 255, 255, 255, 255, 3 }, 5, 0, 0, B5 + (3u << 24), 5 },
	{ "five bytes, no sixth", { 255, 255, 255, 255, 200, 7 }, 6, 0, 0, B5 + (200u << 24), 5 },
	{ "five bytes overflow", { 255, 255, 255, 255, 255 }, 5, 0, -EBADMSG, 0, 0 },
	{ "empty", { 0 }, 0, 0, -EBADMSG, 0, 0 },
	{ "truncated", { 0xc5 }, 1, 0, -EBADMSG, 0, 0 },
	{ "truncated at four", { 255, 255, 255, 255 }, 4, 0, -EBADMSG, 0, 0 },
	{ "excluded zero byte", { 0x00 }, 1, 1, -EBADMSG, 0, 0 },
	{ "excluded zero continuation", { 0xc5, 0x00 }, 2, 1, -EBADMSG, 0, 0 },
};

static void test_u5(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(u5_rows); i++) {
		const struct u5_row *r = &u5_rows[i];
		uint32_t v = 0xdeadbeef;
		size_t pos = 0;
		int ret = jvm_u5_read(r->buf, r->len, &pos, r->excl, &v);

		print_message("u5: %s\n", r->what);
		assert_int_equal(ret, r->ret);
		if (!ret) {
			assert_int_equal(v, r->v);
			assert_int_equal(pos, r->pos);
		} else {
			assert_int_equal(v, 0xdeadbeef);
		}
	}
}

/* The writer and the reader agree, in both variants, at every length's boundaries. */
static void test_u5_roundtrip(void **state)
{
	static const uint32_t vals[] = { 0,	   1,	       190,	   191,	       192,
					 193,	   255,	       12479,	   12480,      798911,
					 798912,   51130559,   51130560,   0x7fffffff, UINT32_MAX };
	unsigned excl;
	size_t i;

	(void)state;
	for (excl = 0; excl <= 1; excl++) {
		for (i = 0; i < ARRAY_SIZE(vals); i++) {
			uint8_t buf[8];
			size_t n = u5_put(buf, vals[i], excl), pos = 0, k;
			uint32_t v = 0;

			if (excl)
				for (k = 0; k < n; k++)
					assert_int_not_equal(buf[k], 0);
			assert_int_equal(jvm_u5_read(buf, n, &pos, excl, &v), 0);
			assert_int_equal(v, vals[i]);
			assert_int_equal(pos, n);
		}
	}
}

/* --- jvm_pcdesc_find -------------------------------------------------------------------- */

struct pc_row {
	const char *what;
	int32_t pcs[6];
	size_t n; /* entries */
	size_t len_adj; /* bytes cut off the table */
	size_t stride;
	int32_t pc_off;
	int ret;
	size_t index;
};

static const struct pc_row pc_rows[] = {
	{ "exact", { -1, 10, 20, 30 }, 4, 0, 16, 20, 0, 2 },
	{ "exact, last", { -1, 10, 20, 30 }, 4, 0, 16, 30, 0, 3 },
	{ "between: the first after", { -1, 10, 20, 30 }, 4, 0, 16, 15, 0, 2 },
	{ "between, just after", { -1, 10, 20, 30 }, 4, 0, 16, 11, 0, 2 },
	{ "before the first real one", { -1, 10, 20, 30 }, 4, 0, 16, 0, 0, 1 },
	{ "sentinel", { -1, 10, 20, 30 }, 4, 0, 16, -1, 0, 0 },
	{ "wide stride", { -1, 10, 20, 30, 40, 50 }, 6, 0, 24, 35, 0, 4 },
	{ "past the end", { -1, 10, 20, 30 }, 4, 0, 16, 31, -ENOENT, 0 },
	{ "empty", { 0 }, 0, 0, 16, 0, -ENOENT, 0 },
	{ "size no multiple of stride", { -1, 10, 20, 30 }, 4, 4, 16, 20, -EBADMSG, 0 },
	{ "bad stride", { -1, 10, 20, 30 }, 4, 0, 4, 20, -EINVAL, 0 },
	{ "zero stride", { -1, 10, 20, 30 }, 4, 0, 0, 20, -EINVAL, 0 },
};

/* A table not sorted by pc offset (memory reused while it was copied) is -EBADMSG, wherever
 * the disorder lies. */
static const struct pc_row pc_unsorted_rows[] = {
	{ "unsorted", { -1, 30, 10, 40 }, 4, 0, 16, 20, -EBADMSG, 0 },
	{ "unsorted, tail", { -1, 10, 50, 20, 60 }, 5, 0, 16, 40, -EBADMSG, 0 },
	{ "duplicate", { -1, 10, 10, 30 }, 4, 0, 16, 10, -EBADMSG, 0 },
};

/* @n PcDescs of @stride bytes: pc offset @pcs[i], scope offset 100 + i. */
static uint8_t *pcs_table(const int32_t *pcs, size_t n, size_t stride)
{
	uint8_t *t = calloc(n ? n : 1, stride > 16 ? stride : 16);
	size_t i;

	assert_non_null(t);
	for (i = 0; i < n && stride >= 8; i++) {
		int32_t scope = 100 + (int32_t)i;

		memcpy(t + i * stride, &pcs[i], 4);
		memcpy(t + i * stride + 4, &scope, 4);
	}
	return t;
}

static void pcdesc_rows(const struct pc_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pc_row *r = &rows[i];
		uint8_t *t = pcs_table(r->pcs, r->n, r->stride);
		size_t idx = 999;
		int ret;

		print_message("pcdesc: %s\n", r->what);
		ret = jvm_pcdesc_find(t, r->n * r->stride - r->len_adj, r->stride, r->pc_off, &idx);
		assert_int_equal(ret, r->ret);
		if (!ret) {
			assert_int_equal(idx, r->index);
			assert_int_equal(jvm_pcdesc_scope(t, r->stride, idx), 100 + idx);
		} else {
			assert_int_equal(idx, 999);
		}
		free(t);
	}
}

static void test_pcdesc(void **state)
{
	(void)state;
	pcdesc_rows(pc_rows, ARRAY_SIZE(pc_rows));
}

static void test_pcdesc_unsorted(void **state)
{
	(void)state;
	pcdesc_rows(pc_unsorted_rows, ARRAY_SIZE(pc_unsorted_rows));
}

/* --- jvm_scopes_decode ------------------------------------------------------------------ */

struct rec {
	uint32_t sender, method, bci1;
};

/* Scope records after a pad byte (offset 0 means no scope); offsets of each in @offs. */
static size_t scopes_data(uint8_t *d, const struct rec *r, size_t n, unsigned excl, uint32_t *offs)
{
	size_t len = 1, i;

	d[0] = 0x55;
	for (i = 0; i < n; i++) {
		offs[i] = (uint32_t)len;
		len += u5_put(d + len, r[i].sender, excl);
		len += u5_put(d + len, r[i].method, excl);
		len += u5_put(d + len, r[i].bci1, excl);
	}
	return len;
}

enum sc_case {
	SC_CHAIN3,
	SC_CHAIN1,
	SC_ZERO,
	SC_PAST,
	SC_AT_LEN,
	SC_LOOP_SELF,
	SC_LOOP_AHEAD,
	SC_DEEP,
	SC_CUT,
	SC_BIG_SENDER,
};

struct sc_row {
	const char *what;
	enum sc_case c;
	unsigned excl;
	int ret;
};

static const struct sc_row sc_rows[] = {
	{ "chain of 3", SC_CHAIN3, 0, 3 },
	{ "chain of 3 excl", SC_CHAIN3, 1, 3 },
	{ "outermost only", SC_CHAIN1, 1, 1 },
	{ "offset 0: no scope", SC_ZERO, 0, 0 },
	{ "offset past the data", SC_PAST, 0, -EBADMSG },
	{ "offset at the length", SC_AT_LEN, 1, -EBADMSG },
	{ "loop: sender is itself", SC_LOOP_SELF, 0, -EBADMSG },
	{ "loop: sender after it", SC_LOOP_AHEAD, 1, -EBADMSG },
	{ "deeper than max", SC_DEEP, 0, -E2BIG },
	{ "record cut short", SC_CUT, 1, -EBADMSG },
	{ "sender past the data", SC_BIG_SENDER, 0, -EBADMSG },
};

static void test_scopes(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sc_rows); i++) {
		const struct sc_row *r = &sc_rows[i];
		/* outermost first in the data: callers before callees */
		struct rec recs[3] = { { 0, 1, 11 }, { 0, 2, 0 }, { 0, 3, 1 } };
		struct jvm_scope out[JVM_SCOPES_MAX];
		uint8_t d[64];
		uint32_t offs[3], off;
		size_t len, max = JVM_SCOPES_MAX;
		int ret;

		print_message("scopes: %s\n", r->what);
		/* every field is one byte: the offsets (1, 4, 7) are known after one layout */
		len = scopes_data(d, recs, 3, r->excl, offs);
		recs[1].sender = offs[0];
		recs[2].sender = offs[1];
		len = scopes_data(d, recs, 3, r->excl, offs);
		off = offs[2];
		switch (r->c) {
		case SC_CHAIN3:
			break;
		case SC_CHAIN1:
			off = offs[0];
			break;
		case SC_ZERO:
			off = 0;
			break;
		case SC_PAST:
			off = (uint32_t)len + 10;
			break;
		case SC_AT_LEN:
			off = (uint32_t)len;
			break;
		case SC_LOOP_SELF:
			recs[0].sender = offs[0];
			len = scopes_data(d, recs, 3, r->excl, offs);
			break;
		case SC_LOOP_AHEAD:
			recs[0].sender = offs[2];
			len = scopes_data(d, recs, 3, r->excl, offs);
			break;
		case SC_DEEP:
			max = 2;
			break;
		case SC_CUT:
			len -= 1; /* the innermost record loses its bci */
			break;
		case SC_BIG_SENDER:
			recs[0].sender = 150; /* >= off: refused as a loop */
			len = scopes_data(d, recs, 3, r->excl, offs);
			break;
		}
		ret = jvm_scopes_decode(d, len, r->excl, off, out, max);
		assert_int_equal(ret, r->ret);
		if (r->c == SC_CHAIN3) {
			assert_int_equal(out[0].method_index, 3);
			assert_int_equal(out[0].bci, 0);
			assert_int_equal(out[1].method_index, 2);
			assert_int_equal(out[1].bci, -1); /* bci + 1 == 0: the entry */
			assert_int_equal(out[2].method_index, 1);
			assert_int_equal(out[2].bci, 10);
		} else if (r->c == SC_CHAIN1) {
			assert_int_equal(out[0].method_index, 1);
			assert_int_equal(out[0].bci, 10);
		}
	}
}

/* A chain of exactly JVM_SCOPES_MAX is decoded; one more is -E2BIG, even with a larger @max. */
static void test_scopes_max(void **state)
{
	static uint8_t d[JVM_SCOPES_MAX * 8 + 16];
	struct jvm_scope out[JVM_SCOPES_MAX];
	uint32_t prev = 0, last = 0;
	size_t len = 1, i;

	(void)state;
	d[0] = 0x55;
	for (i = 0; i < JVM_SCOPES_MAX + 1; i++) {
		last = (uint32_t)len;
		len += u5_put(d + len, prev, 1);
		len += u5_put(d + len, (uint32_t)i + 1, 1);
		len += u5_put(d + len, 1, 1);
		prev = last;
		if (i + 1 == JVM_SCOPES_MAX)
			assert_int_equal(jvm_scopes_decode(d, len, 1, last, out, JVM_SCOPES_MAX),
					 JVM_SCOPES_MAX);
	}
	assert_int_equal(jvm_scopes_decode(d, len, 1, last, out, JVM_SCOPES_MAX), -E2BIG);
	assert_int_equal(jvm_scopes_decode(d, len, 1, last, out, 1000), -E2BIG);
}

/* --- jvm_line_of ------------------------------------------------------------------------ */

struct line_row {
	const char *what;
	uint8_t tab[16];
	size_t len;
	unsigned excl;
	int32_t bci;
	int ret;
	uint32_t line;
};

/* (0, 10) by escape, (4, 11), (10, 13), (30, 10) by escape (a negative line delta), end.
 * zigzag: 0 -> 0, 10 -> 20, 20 -> 40, -3 -> 5. */
#define TAB17 0xff, 0, 20, (4 << 3 | 1), (6 << 3 | 2), 0xff, 40, 5
#define TAB25 0xff, 1, 21, (4 << 3 | 1), (6 << 3 | 2), 0xff, 41, 6

static const struct line_row line_rows[] = {
	{ "exact", { TAB17, 0 }, 9, 0, 4, 0, 11 },
	{ "exact, first", { TAB17, 0 }, 9, 0, 0, 0, 10 },
	{ "between", { TAB17, 0 }, 9, 0, 7, 0, 11 },
	{ "0xff escape, negative delta", { TAB17, 0 }, 9, 0, 30, 0, 10 },
	{ "past the last pair", { TAB17, 0 }, 9, 0, 1000, 0, 10 },
	{ "excl: exact", { TAB25, 0 }, 9, 1, 10, 0, 13 },
	{ "excl: escape", { TAB25, 0 }, 9, 1, 31, 0, 10 },
	{ "before the first pair", { 5 << 3 | 3, 0 }, 2, 0, 2, -ENOENT, 0 },
	{ "the first pair", { 5 << 3 | 3, 0 }, 2, 0, 5, 0, 3 },
	{ "empty", { 0 }, 1, 0, 0, -ENOENT, 0 },
	{ "no terminator", { TAB17 }, 8, 0, 4, -EBADMSG, 0 },
	{ "nothing at all", { 0 }, 0, 0, 0, -EBADMSG, 0 },
	{ "escape cut short", { 0xff, 0 }, 2, 0, 0, -EBADMSG, 0 },
	{ "escape with an excluded byte", { 0xff, 0, 3, 0 }, 4, 1, 0, -EBADMSG, 0 },
	{ "line below zero", { 0xff, 0, 1, 0 }, 4, 0, 0, -EBADMSG, 0 },
	{ "bci below zero", { 0xff, 1, 2, 0 }, 4, 0, 0, -EBADMSG, 0 },
};

static void test_line_of(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(line_rows); i++) {
		const struct line_row *r = &line_rows[i];
		uint32_t line = 0xdeadbeef;
		int ret;

		print_message("line_of: %s\n", r->what);
		ret = jvm_line_of(r->tab, r->len, r->excl, r->bci, &line);
		assert_int_equal(ret, r->ret);
		assert_int_equal(line, ret ? 0xdeadbeef : r->line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u5),	   cmocka_unit_test(test_u5_roundtrip),
		cmocka_unit_test(test_pcdesc),	   cmocka_unit_test(test_pcdesc_unsorted),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_scopes_max), cmocka_unit_test(test_line_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
