// SPDX-License-Identifier: Apache-2.0
/*
 * The pure parts of the HotSpot attach protocol (runtimes/jvm/jvm_attach.h): the answer's
 * return code and body, the /proc/PID/status fields the attach needs, and the request bytes.
 * The protocol itself runs against real JVMs in tests/integration/test_jvm_attach.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_attach.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A literal with its length, NUL bytes included (sizeof minus the terminator). */
#define S(lit) lit, sizeof(lit) - 1

static void test_parse_answer(void **state)
{
	static const struct {
		const char *buf;
		size_t len, max;
		int ret, code;
		const char *body;
	} cases[] = {
		{ S("0\nFull thread dump\n"), 0, 0, 0, "Full thread dump\n" },
		{ S("0\n"), 0, 0, 0, "" },
		{ S("0"), 0, 0, 0, "" },
		{ S("101\n"), 0, 0, 101, "" },
		{ S("-1\nerror text\n"), 0, 0, -1, "error text\n" },
		{ S("2147483647\n"), 0, 0, 2147483647, "" },
		{ S("-2147483648\nx"), 0, 0, -2147483647 - 1, "x" },
		{ S("0\nline1\nline2"), 0, 0, 0, "line1\nline2" },
		/* errors */
		{ S(""), 0, -ENODATA },
		{ NULL, 0, 0, -ENODATA },
		{ S("\n"), 0, -EBADMSG },
		{ S("-\n"), 0, -EBADMSG },
		{ S("ok\n"), 0, -EBADMSG },
		{ S(" 0\n"), 0, -EBADMSG },
		{ S("0 \n"), 0, -EBADMSG },
		{ S("0x1\n"), 0, -EBADMSG },
		{ S("12345678901\n"), 0, -EBADMSG },
		{ S("2147483648\n"), 0, -EBADMSG },
		{ S("-2147483649\n"), 0, -EBADMSG },
		{ S("0\0\nbody"), 0, -EILSEQ },
		{ S("0\nbo\0dy"), 0, -EILSEQ },
		{ S("0\n0123456789"), 8, -EFBIG },
		{ S("0\n012345"), 8, 0, 0, "012345" },
	};
	size_t i, off;
	int code;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		code = 12345;
		off = 999;
		assert_int_equal(jvm_attach_parse_answer(cases[i].buf, cases[i].len, cases[i].max,
							 &code, &off),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_int_equal(code, 12345);
			assert_int_equal(off, 999);
			continue;
		}
		assert_int_equal(code, cases[i].code);
		assert_true(off <= cases[i].len);
		assert_int_equal(cases[i].len - off, strlen(cases[i].body));
		assert_memory_equal(cases[i].buf + off, cases[i].body, strlen(cases[i].body));
	}
}

static void test_parse_answer_over_default_cap(void **state)
{
	size_t len = JVM_ATTACH_ANSWER_MAX + 1, off;
	char *buf = malloc(len);
	int code;

	(void)state;
	assert_non_null(buf);
	memset(buf, 'a', len);
	buf[0] = '0';
	buf[1] = '\n';
	assert_int_equal(jvm_attach_parse_answer(buf, len, 0, &code, &off), -EFBIG);
	assert_int_equal(jvm_attach_parse_answer(buf, len - 1, 0, &code, &off), 0);
	assert_int_equal(off, 2);
	free(buf);
}

#define STATUS_HEAD "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
#define STATUS_IDS "Uid:\t1000\t1001\t1001\t1001\nGid:\t2000\t2002\t2002\t2002\n"

static void test_parse_status(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint32_t nspid, euid, egid;
		bool quit;
	} cases[] = {
		{ STATUS_HEAD "Pid:\t4242\nNSpid:\t4242\t7\n" STATUS_IDS
			      "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
			      "SigCgt:\t0000000000000004\n",
		  0, 7, 1001, 2002, true },
		/* a JVM with -Xrs: SIGQUIT (bit 2) not caught, others are */
		{ STATUS_HEAD "Pid:\t4242\nNSpid:\t4242\t1\n" STATUS_IDS
			      "SigCgt:\t00000001c1007afb\n",
		  0, 1, 1001, 2002, false },
		{ STATUS_HEAD "Pid:\t4242\nNSpid:\t4242\t9\t3\n" STATUS_IDS
			      "SigCgt:\tffffffffffffffff\n",
		  0, 3, 1001, 2002, true },
		/* no NSpid line (before Linux 4.1): Pid stands for it */
		{ STATUS_HEAD "Pid:\t4242\n" STATUS_IDS "SigCgt:\t0000000000000004\n", 0, 4242,
		  1001, 2002, true },
		/* errors */
		{ "", -EINVAL },
		{ STATUS_HEAD "NSpid:\t4242\t7\n" STATUS_IDS, -EINVAL },
		{ STATUS_HEAD "NSpid:\t4242\t7\nGid:\t1\t2\t2\t2\nSigCgt:\t4\n", -EINVAL },
		{ STATUS_HEAD "NSpid:\t4242\t7\nUid:\t1\nGid:\t1\t2\nSigCgt:\t4\n", -EINVAL },
		{ STATUS_HEAD "NSpid:\t\nUid:\t1\t1\nGid:\t1\t2\nSigCgt:\t4\n", -EINVAL },
		{ STATUS_HEAD "NSpid:\t4242\tx\nUid:\t1\t1\nGid:\t1\t2\nSigCgt:\t4\n", -EINVAL },
		{ STATUS_HEAD "NSpid:\t0\nUid:\t1\t1\nGid:\t1\t2\nSigCgt:\t4\n", -EINVAL },
		{ STATUS_HEAD "NSpid:\t4242\t7\nUid:\t1\t99999999999\nGid:\t1\t2\nSigCgt:\t4\n",
		  -EINVAL },
		{ STATUS_HEAD "NSpid:\t7\nUid:\t1\t1\nGid:\t1\t2\nSigCgt:\t00000000000000004\n",
		  -EINVAL },
		{ STATUS_HEAD "NSpid:\t7\nUid:\t1\t1\nGid:\t1\t2\nSigCgt:\tzz\n", -EINVAL },
	};
	struct jvm_attach_ids ids;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&ids, 0xa5, sizeof(ids));
		assert_int_equal(jvm_attach_parse_status(cases[i].text, strlen(cases[i].text),
							 &ids),
				 cases[i].ret);
		if (cases[i].ret)
			continue;
		assert_int_equal(ids.nspid, cases[i].nspid);
		assert_int_equal(ids.euid, cases[i].euid);
		assert_int_equal(ids.egid, cases[i].egid);
		assert_int_equal(ids.quit_caught, cases[i].quit);
	}
	/* A NUL inside the text is refused. */
	assert_int_equal(jvm_attach_parse_status(S("Pid:\t1\0\nUid:\t1\t1\n"), &ids), -EINVAL);
}

static void test_request(void **state)
{
	static const char long_arg[JVM_ATTACH_ARG_MAX + 2] = { [0 ... JVM_ATTACH_ARG_MAX] = 'a' };
	static const char *const one[] = { "Thread.print -l" };
	static const char *const three[] = { "a", NULL, "c" };
	static const char *const four[] = { "a", "b", "c", "d" };
	static const char *const too_long[] = { long_arg };
	static const struct {
		const char *cmd;
		const char *const *args;
		size_t nargs, size;
		int ret;
		const char *bytes;
		size_t len;
	} cases[] = {
		{ "threaddump", NULL, 0, 64, 16, S("1\0threaddump\0\0\0\0") },
		{ "jcmd", one, 1, 64, 25, S("1\0jcmd\0Thread.print -l\0\0\0") },
		{ "x", three, 3, 64, 9, S("1\0x\0a\0\0c\0") },
		{ "threaddump", NULL, 0, 16, 16, S("1\0threaddump\0\0\0\0") },
		/* errors */
		{ "threaddump", NULL, 0, 15, -ENOSPC },
		{ "", NULL, 0, 64, -EINVAL },
		{ NULL, NULL, 0, 64, -EINVAL },
		{ "12345678901234567", NULL, 0, 64, -EINVAL },
		{ "x", four, 4, 64, -EINVAL },
		{ "x", NULL, 1, 64, -EINVAL },
		{ "x", too_long, 1, 4096, -EINVAL },
	};
	char buf[4096];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(jvm_attach_request(buf, cases[i].size, cases[i].cmd, cases[i].args,
						    cases[i].nargs),
				 cases[i].ret);
		if (cases[i].ret > 0) {
			assert_int_equal(cases[i].len, (size_t)cases[i].ret);
			assert_memory_equal(buf, cases[i].bytes, cases[i].len);
		}
	}
	/* The longest argument HotSpot takes fits. */
	{
		const char *const max_arg[] = { long_arg + 1 };

		assert_int_equal(jvm_attach_request(buf, sizeof(buf), "jcmd", max_arg, 1),
				 2 + 5 + JVM_ATTACH_ARG_MAX + 1 + 2);
	}
}

static void test_text_clean(void **state)
{
	char s[] = "\"main\" #1\n\tat A.b(A.java:1)\n\xff\xc3";
	size_t n;

	(void)state;
	n = jvm_attach_text_clean(s, strlen(s));
	assert_int_equal(n, strlen(s));
	assert_string_equal(s, "\"main\" #1\n\tat A.b(A.java:1)\n??");
	assert_int_equal(jvm_attach_text_clean(NULL, 0), 0);
}

static void test_reason(void **state)
{
	(void)state;
	assert_non_null(jvm_attach_reason(-EOPNOTSUPP));
	assert_non_null(jvm_attach_reason(-EPERM));
	assert_non_null(jvm_attach_reason(-EBADMSG));
	assert_null(jvm_attach_reason(-ENOENT));
}

static void test_run_errors(void **state)
{
	int code;
	char *text = NULL;
	size_t len;

	(void)state;
	assert_int_equal(jvm_attach_run(0, "threaddump", NULL, 0, NULL, &code, &text, &len),
			 -EINVAL);
	assert_int_equal(jvm_attach_run(1, "", NULL, 0, NULL, &code, &text, &len), -EINVAL);
	assert_int_equal(jvm_attach_run(1, "x", NULL, 0, NULL, NULL, &text, &len), -EINVAL);
	assert_null(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_answer),
		cmocka_unit_test(test_parse_answer_over_default_cap),
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_text_clean),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_run_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
