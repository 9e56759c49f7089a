// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/text.c: UTF-8 sanitizing, cutting and "FILE:LINE: message" errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/text.h"

static void test_utf8(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "billing", "billing" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },			/* é */
		{ "\xe2\x82\xac 5", "\xe2\x82\xac 5" },		/* € */
		{ "\xf0\x9f\x94\xa5", "\xf0\x9f\x94\xa5" },		/* 4-byte */
		{ "a\tb\nc\x1b[31m\x7f", "a?b?c?[31m?" },		/* controls */
		{ "\xc0\xaf", "??" },					/* overlong '/' */
		{ "\xe0\x80\xaf", "???" },				/* overlong, 3 bytes */
		{ "\xed\xa0\x80", "???" },				/* surrogate */
		{ "\xf4\x90\x80\x80", "????" },				/* above U+10FFFF */
		{ "\xf5\x80", "??" },					/* never valid lead */
		{ "ok\xc3", "ok?" },					/* truncated at the end */
		{ "\xe2\x82x", "??x" },					/* truncated in the middle */
		{ "\x80\xbf", "??" },					/* lone continuations */
		{ "hot\xff\xfe", "hot??" },				/* never valid bytes */
		{ "\xf0\x9f\x94", "???" },				/* 4-byte cut by the NUL */
		{ "\xd0\xb0\xd0", "\xd0\xb0?" },			/* comm cut mid-character */
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, cases[i].in);
		text_utf8_sanitize(buf);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(strlen(buf), strlen(cases[i].in));
	}
}

static void test_utf8_copy(void **state)
{
	static const struct {
		const char *in;
		size_t len, size;
		const char *want;
		bool clean;	/* the input needs no change */
	} cases[] = {
		{ "billing", 7, 64, "billing", true },
		{ "caf\xc3\xa9", 5, 64, "caf\xc3\xa9", true },
		{ "a\0b", 3, 64, "a?b", false },				/* NUL inside */
		{ "a\nb;c", 5, 64, "a?b;c", false },				/* newline */
		{ "hot\xff\xfe", 5, 64, "hot??", false },			/* never valid bytes */
		{ "\xc1\xbf", 2, 64, "??", false },				/* overlong, 2 bytes */
		{ "\xf0\x8f\xbf\xbf", 4, 64, "????", false },			/* overlong, 4 bytes */
		{ "\xed\xbf\xbf", 3, 64, "???", false },			/* low surrogate */
		{ "\xf7\xbf\xbf\xbf", 4, 64, "????", false },			/* above U+10FFFF */
		{ "\xd0\xb0\xd0", 3, 64, "\xd0\xb0?", false },			/* cut by the kernel */
		{ "\xe2\x82\xac", 2, 64, "??", false },			/* cut by @len */
		{ "ab\xe2\x82\xac", 5, 5, "ab", true },			/* no room for the whole € */
		{ "ab\xe2\x82\xac", 5, 6, "ab\xe2\x82\xac", true },		/* just room */
		{ "abc", 3, 1, "", true },
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(buf, 'x', sizeof(buf));
		n = text_utf8_sanitize_copy(buf, cases[i].size, cases[i].in, cases[i].len);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
		assert_true(text_utf8_is_clean(buf, n));
		assert_int_equal(text_utf8_is_clean(cases[i].in, cases[i].len), cases[i].clean);
	}
	/* no buffer */
	assert_int_equal(text_utf8_sanitize_copy(NULL, 8, "a", 1), 0);
	assert_int_equal(text_utf8_sanitize_copy(buf, 0, "a", 1), 0);
}

/* text_utf8_valid_copy: the same rule, but control characters other than NUL pass. */
static void test_utf8_valid(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want;
		bool valid;
	} cases[] = {
		{ "a\nb\tc\x7f", 6, "a\nb\tc\x7f", true },
		{ "a\0b", 3, "a?b", false },				/* NUL inside */
		{ "hot\xff\xfe", 5, "hot??", false },
		{ "\xe0\x80\xaf", 3, "???", false },			/* overlong */
		{ "\xed\xa0\x80", 3, "???", false },			/* surrogate */
		{ "\xf4\x90\x80\x80", 4, "????", false },			/* above U+10FFFF */
		{ "\xd0\xb0\xd0", 3, "\xd0\xb0?", false },			/* cut sequence */
		{ "\xe2\x80\xa8", 3, "\xe2\x80\xa8", true },		/* U+2028 is valid */
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		n = text_utf8_valid_copy(buf, sizeof(buf), cases[i].in, cases[i].len);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, cases[i].len);
		assert_int_equal(text_utf8_is_valid(cases[i].in, cases[i].len), cases[i].valid);
		assert_true(text_utf8_is_valid(buf, n));
	}
	assert_int_equal(text_utf8_valid_copy(NULL, 8, "a", 1), 0);
}

static void test_utf8_trim_partial(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "abc", "abc" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },			/* whole: kept */
		{ "caf\xc3", "caf" },					/* cut after the lead */
		{ "x\xe2\x82", "x" },					/* 3-byte, 2 left */
		{ "x\xf0\x9f\x94", "x" },				/* 4-byte, 3 left */
		{ "\xf0\x9f", "" },
		{ "x\xff", "x\xff" },					/* not a cut: left alone */
		{ "x\xe0\x80", "x\xe0\x80" },				/* overlong start: not a cut */
		{ "x\x80\x80\x80\x80", "x\x80\x80\x80\x80" },		/* continuations only */
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, cases[i].in);
		n = text_utf8_trim_partial(buf);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
	/* in place */
	strcpy(buf, "a\xff" "b\xc3");
	assert_int_equal(text_utf8_valid_copy(buf, sizeof(buf), buf, strlen(buf)), 4);
	assert_string_equal(buf, "a?b?");
}

static void test_utf8_truncate(void **state)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} cases[] = {
		{ "billing", 10, "billing" },
		{ "billing", 7, "billing" },
		{ "billing", 3, "bil" },
		{ "", 0, "" },
		{ "abc", 0, "" },
		{ "caf\xc3\xa9", 4, "caf" },				/* é dropped whole */
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },
		{ "\xe2\x82\xac\xe2\x82\xac", 5, "\xe2\x82\xac" },		/* second € dropped */
		{ "\xe2\x82\xac\xe2\x82\xac", 4, "\xe2\x82\xac" },
		{ "\xf0\x9f\x94\xa5x", 3, "" },			/* 4-byte, cut after 3 */
		{ "\xf0\x9f\x94\xa5x", 4, "\xf0\x9f\x94\xa5" },
		/* eight Cyrillic letters are 16 bytes: the kernel's comm keeps 15 */
		{ "\xd0\xb0\xd0\xb1\xd0\xb2\xd0\xb3\xd0\xb4\xd0\xb5\xd0\xb6\xd0\xb7", 15,
		  "\xd0\xb0\xd0\xb1\xd0\xb2\xd0\xb3\xd0\xb4\xd0\xb5\xd0\xb6" },
		{ "ab\x80\x80\x80\x80\x80", 4, "ab\x80\x80" },		/* not UTF-8: bytes */
		{ "\xffxyz", 1, "\xff" },
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, cases[i].in);
		n = text_utf8_truncate(buf, cases[i].max);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

static int errf(char *err, size_t size, const char *file, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int errf(char *err, size_t size, const char *file, size_t line, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = text_file_error(err, size, file, line, fmt, ap);
	va_end(ap);
	return ret;
}

static void test_file_error(void **state)
{
	static const struct {
		size_t size, line;
		const char *want;
	} cases[] = {
		{ 128, 7, "/etc/p.yaml:7: unknown key 'x'" },
		{ 128, 0, "/etc/p.yaml: unknown key 'x'" },
		{ 20, 7, "/etc/p.yaml:7: unkn" },	/* cut, still NUL-terminated */
		{ 10, 7, "/etc/p.ya" },			/* no room for the message */
	};
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(err, 0, sizeof(err));
		assert_int_equal(errf(err, cases[i].size, "/etc/p.yaml", cases[i].line,
				      "unknown key '%s'", "x"), -EINVAL);
		assert_string_equal(err, cases[i].want);
	}
	/* no buffer: nothing written, still -EINVAL */
	assert_int_equal(errf(NULL, 10, "f", 1, "x"), -EINVAL);
	assert_int_equal(errf(err, 0, "f", 1, "x"), -EINVAL);
}

static void test_plain_path(void **state)
{
	static const struct {
		const char *s;
		size_t max;
		bool want;
	} rows[] = {
		{ "/tmp/.slideops-0123/slideops.jfc", 64, true },
		{ "/a-b_c.d/E9", 64, true },
		{ "/", 1, true },
		{ "/abc", 3, false },
		{ "/abc", 4, true },
		{ "tmp/a", 64, false },
		{ "", 64, false },
		{ NULL, 64, false },
		{ "/tmp/a,b", 64, false },
		{ "/tmp/a=b", 64, false },
		{ "/tmp/a b", 64, false },
		{ "/tmp/%p", 64, false },
		{ "/tmp/\xc3\xa9", 64, false },
		{ "/tmp/a\n", 64, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(text_plain_path(rows[i].s, rows[i].max), rows[i].want);
}

/* text_setf: a reason buffer that may be absent or short. */
static void test_setf(void **state)
{
	char buf[8] = "unset";

	(void)state;
	text_setf(NULL, 8, "x %d", 1);
	text_setf(buf, 0, "x %d", 1);
	assert_string_equal(buf, "unset");
	text_setf(buf, sizeof(buf), "port %u", 9229u);
	assert_string_equal(buf, "port 92");
	text_setf(buf, sizeof(buf), "%s", "");
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_path),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_utf8_copy),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_trim_partial),
		cmocka_unit_test(test_utf8_truncate),
		cmocka_unit_test(test_file_error),
		cmocka_unit_test(test_setf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
