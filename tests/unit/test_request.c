// SPDX-License-Identifier: Apache-2.0
/*
 * The capture annotation's value (daemon/agent/request.c), table-driven with error rows: each error
 * message must say what is wrong and what is allowed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/agent/request.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse(void **state)
{
	static const struct {
		const char *value;
		bool server;
		int ret;
		enum question q;
		unsigned int duration;
		const char *msg;	/* a piece of the error message */
	} cases[] = {
		{ "question=cpu,duration=30", false, 0, Q_CPU, 30, NULL },
		{ "question=cpu,duration=10", true, 0, Q_CPU, 10, NULL },
		{ "duration=60,question=wall", false, 0, Q_WALL, 60, NULL },
		{ " question = locks , duration = 10 ", false, 0, Q_LOCKS, 10, NULL },
		{ "question=memory-growth", false, 0, Q_MEMORY_GROWTH, 30, NULL },
		{ "question=threads,duration=60", true, 0, Q_THREADS, 5, NULL },
		{ "question=cpu,", false, 0, Q_CPU, 30, NULL },
		{ "question=cpu,\tduration=30", false, 0, Q_CPU, 30, NULL },
		/* errors */
		{ "", false, -EINVAL, 0, 0, "question is missing; write question=Q,duration=S" },
		{ "   ", false, -EINVAL, 0, 0, "question is missing" },
		{ "duration=30", false, -EINVAL, 0, 0,
		  "question is missing; write question=Q,duration=S, e.g. question=cpu,duration=30 "
		  "(questions: cpu, wall, threads, locks, memory-growth, memory-held, memory-alloc)" },
		{ "question=disk,duration=30", false, -EINVAL, 0, 0,
		  "unknown question 'disk'; choose one of: cpu, wall, threads, locks, memory-growth, memory-held, memory-alloc" },
		{ "question=,duration=30", false, -EINVAL, 0, 0, "question is empty; choose one of" },
		{ "question=cpu,duration=45", false, -EINVAL, 0, 0,
		  "duration must be 10, 30 or 60 seconds, not '45'" },
		{ "question=cpu,duration=030", false, -EINVAL, 0, 0, "not '030'" },
		{ "question=cpu,duration=30s", false, -EINVAL, 0, 0, "not '30s'" },
		{ "question=cpu,duration=", false, -EINVAL, 0, 0, "not ''" },
		{ "question=cpu,duration=-10", false, -EINVAL, 0, 0, "not '-10'" },
		{ "question=cpu,duration=99999999999999999999", false, -EINVAL, 0, 0,
		  "duration must be 10, 30 or 60 seconds" },
		{ "question=cpu,durtion=30", false, -EINVAL, 0, 0,
		  "unknown key 'durtion' (known: question, duration)" },
		{ "question=cpu;duration=30", false, -EINVAL, 0, 0, "unknown question 'cpu;duration=30'" },
		{ "cpu", false, -EINVAL, 0, 0, "'cpu' is not key=value; write question=Q,duration=S" },
		{ "question=cpu,question=wall", false, -EINVAL, 0, 0, "question is given twice" },
		{ "question=cpu,duration=10,duration=10", false, -EINVAL, 0, 0,
		  "duration is given twice" },
		{ "question=memory-held", false, 0, Q_MEMORY_HELD, 30, NULL },
		{ "question=memory-alloc,duration=10", false, 0, Q_MEMORY_ALLOC, 10, NULL },
		{ "question=memory-held", true, -EINVAL, 0, 0,
		  "memory-held is not offered for a whole-server (Node) profile; choose one of: cpu, "
		  "wall, threads, locks, memory-growth" },
		{ "question=CPU", false, -EINVAL, 0, 0, "unknown question 'CPU'" },
		{ "question=cpu\n,duration=30", false, -EINVAL, 0, 0, "unknown question 'cpu?'" },
		{ "question=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, -EINVAL, 0, 0,
		  "unknown question 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'" },
	};
	struct capture_request r;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: '%s'\n", i, cases[i].value);
		memset(&r, 0xa5, sizeof(r));
		err[0] = '\0';
		assert_int_equal(request_parse(cases[i].value, cases[i].server, &r, err,
					       sizeof(err)),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(r.question, cases[i].q);
			assert_int_equal(r.duration_s, cases[i].duration);
		} else {
			if (!strstr(err, cases[i].msg))
				fail_msg("case %zu: message '%s' lacks '%s'", i, err, cases[i].msg);
			/* out-param untouched */
			assert_int_equal(r.duration_s, 0xa5a5a5a5u);
		}
	}
}

static void test_server_questions(void **state)
{
	struct capture_request r;
	char err[256];

	(void)state;
	/* every question a server offers parses on the node; the runtime's own memory profiles
	 * are refused there with the list */
	assert_int_equal(request_parse("question=wall,duration=60", true, &r, err, sizeof(err)), 0);
	assert_int_equal(request_parse("question=memory-alloc", true, &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not offered for a whole-server (Node) profile"));
}

static void test_limits(void **state)
{
	char big[REQUEST_MAX_LEN + 2], err[8], canon[64];
	struct capture_request r = { Q_WALL, 10 };

	(void)state;
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(request_parse(big, false, &r, NULL, 0), -EINVAL);
	/* a tiny buffer is truncated and terminated */
	assert_int_equal(request_parse("x", false, &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(request_parse(NULL, false, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(request_format(&r, canon, sizeof(canon)), "question=wall,duration=10");
	assert_int_equal(request_parse(canon, false, &r, NULL, 0), 0);
	assert_int_equal(r.question, Q_WALL);
	r = (struct capture_request){ Q_THREADS, 5 };
	assert_string_equal(request_format(&r, canon, sizeof(canon)), "question=threads");
	assert_int_equal(request_parse(canon, true, &r, NULL, 0), 0);
	assert_int_equal(r.duration_s, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_server_questions),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
