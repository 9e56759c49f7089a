// SPDX-License-Identifier: Apache-2.0
/*
 * The processes first seen while collecting, queued in the ring buffer's callback and looked at
 * for CPython after the poll. A fake look answers from a script: per process, one letter per
 * time it is asked (r: registered, n: nothing to do, a: -EAGAIN, e: -EACCES).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/capture/py_pending.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fake {
	const char *script[8];	/* by tgid */
	unsigned int asked[8];
};

static int fake_look(void *ctx, uint32_t tgid)
{
	struct fake *f = ctx;
	const char *s = f->script[tgid];
	char c;

	assert_true(tgid < ARRAY_SIZE(f->script) && s);
	c = s[f->asked[tgid]++];
	assert_true(c != '\0');	/* never asked more often than scripted */
	switch (c) {
	case 'r':
		return 1;
	case 'a':
		return -EAGAIN;
	case 'e':
		return -EACCES;
	default:
		return 0;
	}
}

static void test_run(void **state)
{
	static const struct {
		size_t max;
		unsigned int tries;
		const char *script[4];	/* tgids 1..4; NULL: not pushed */
		int runs;
		int registered;		/* summed over the runs */
		size_t left, missed;
	} cases[] = {
		/* one run: registered, nothing, and a failure counted */
		{ 8, 3, { "r", "n", "e" }, 1, 1, 0, 1 },
		/* starting: asked again at the next run, then registered */
		{ 8, 3, { "aar", "n" }, 3, 1, 0, 0 },
		/* still starting after its tries: given up, counted */
		{ 8, 2, { "aa", "r" }, 3, 1, 0, 1 },
		/* still waiting when the runs stop: left, not counted */
		{ 8, 5, { "aa" }, 2, 0, 1, 0 },
		/* full queue: the third is missed, never looked at */
		{ 2, 1, { "r", "r", "" }, 1, 2, 0, 1 },
		/* nothing queued */
		{ 4, 1, { NULL }, 2, 0, 0, 0 },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake f = { { NULL } };
		struct py_pending *q;
		int r, reg = 0, push;

		print_message("case %zu\n", i);
		assert_int_equal(py_pending__new(cases[i].max, cases[i].tries, &q), 0);
		for (k = 0; k < ARRAY_SIZE(cases[i].script) && cases[i].script[k]; k++) {
			f.script[k + 1] = cases[i].script[k];
			push = py_pending__push(q, (uint32_t)(k + 1));
			assert_int_equal(push, k < cases[i].max ? 0 : -ENOSPC);
		}
		for (r = 0; r < cases[i].runs; r++)
			reg += py_pending__run(q, fake_look, &f);
		assert_int_equal(reg, cases[i].registered);
		assert_int_equal(py_pending__count(q), cases[i].left);
		assert_int_equal(py_pending__missed(q), cases[i].missed);
		py_pending__free(q);
	}
}

static void test_new_errors(void **state)
{
	static const struct {
		size_t max;
		unsigned int tries;
		int ret;
	} cases[] = {
		{ 0, 1, -EINVAL },
		{ 1, 0, -EINVAL },
		{ 1, 1, 0 },
	};
	struct py_pending *q;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		q = NULL;
		assert_int_equal(py_pending__new(cases[i].max, cases[i].tries, &q), cases[i].ret);
		assert_true(cases[i].ret ? q == NULL : q != NULL);
		py_pending__free(q);
	}
	py_pending__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_new_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
