// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/text.c: UTF-8 sanitizing and "FILE:LINE: message" errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/text.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_file_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
