// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/log.c: levels, and messages that carry hostile names stay one valid line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/log.h"
#include "base/text.h"

/* Runs pr_warn("%s", @arg) with stderr in a temp file; returns the line written (static). */
static const char *logged(const char *arg, int err)
{
	static char buf[2048];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	if (err)
		pr_warn_errno(err, "open(%s)", arg);
	else
		pr_warn("open(%s)", arg);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fileno(tmp), buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

/* The msg="..." value of @line, up to the closing quote. */
static const char *msg_of(const char *line)
{
	static char msg[2048];
	const char *start = strstr(line, " msg=\""), *end;

	assert_non_null(start);
	start += 6;
	for (end = start; *end && *end != '"'; end++)
		if (*end == '\\' && end[1])
			end++;
	assert_int_equal(*end, '"');
	memcpy(msg, start, (size_t)(end - start));
	msg[end - start] = '\0';
	return msg;
}

static void test_escaping(void **state)
{
	static const struct {
		const char *arg, *want;	/* want: the msg value as written */
	} cases[] = {
		{ "/etc/x", "open(/etc/x)" },
		{ "a\"b", "open(a\\\"b)" },				/* would end the value */
		{ "a\\b", "open(a\\\\b)" },
		{ "a\nlevel=error msg=\"x", "open(a\\nlevel=error msg=\\\"x)" },	/* a forged line */
		{ "a\tb\rc", "open(a\\tb\\rc)" },
		{ "\x1b[31mred", "open(?[31mred)" },			/* terminal escapes */
		{ "hot\xff\xfe", "open(hot?\?)" },			/* not UTF-8 */
		{ "\xd0\xb0\xd0", "open(\xd0\xb0?)" },			/* comm cut mid-character */
		{ "caf\xc3\xa9 \xe2\x82\xac", "open(caf\xc3\xa9 \xe2\x82\xac)" },
	};
	const char *line;
	size_t i, len;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		line = logged(cases[i].arg, i % 2 ? -ENOENT : 0);
		len = strlen(line);
		assert_true(text_utf8_is_valid(line, len));
		assert_int_equal(line[len - 1], '\n');
		assert_ptr_equal(strchr(line, '\n'), line + len - 1);	/* one line */
		assert_non_null(strstr(line, " level=warn msg=\""));
		assert_string_equal(msg_of(line), cases[i].want);
		if (i % 2)
			assert_non_null(strstr(line, "\" err=\"No such file or directory\"\n"));
	}
}

/* A message longer than the line is cut at a character boundary, and the line still ends. */
static void test_long(void **state)
{
	static const char *const units[] = { "\xd0\xb0", "\xe2\x82\xac", "\xf0\x9f\x94\xa5", "\"" };
	char big[3000];
	const char *line;
	size_t i, k, len;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(units); k++) {
		for (i = 0; i < 7; i++) {
			print_message("unit %zu shift %zu\n", k, i);
			memset(big, 'x', i);
			big[i] = '\0';
			while (strlen(big) + 5 < sizeof(big))
				strcat(big, units[k]);
			line = logged(big, (int)(i % 2));
			len = strlen(line);
			assert_true(len < 1024);
			assert_true(text_utf8_is_valid(line, len));
			assert_ptr_equal(strchr(line, '\n'), line + len - 1);
			msg_of(line);
		}
	}
}

static void test_levels(void **state)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{ "error", LOG_ERROR }, { "WARN", LOG_WARN }, { "info", LOG_INFO },
		{ "debug", LOG_DEBUG }, { "verbose", -EINVAL }, { NULL, -EINVAL }, { "", -EINVAL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(log_parse_level(cases[i].s), cases[i].want);
	}
	assert_int_equal(log_errno(LOG_DEBUG, ENOENT, "x"), -ENOENT);
	assert_int_equal(log_errno(LOG_DEBUG, -EPERM, "x"), -EPERM);
	assert_int_equal(log_errno(LOG_DEBUG, 0, "x"), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_levels),
	};

	log_set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
