// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "runtimes/detect_cache.h"

/* The cached answer is the uncached one, for this process and again from the cache. */
static void test_same_answer(void **state)
{
	struct runtime_info a, b, c;

	(void)state;
	runtime_detect_cache_clear();
	assert_int_equal(runtime_detect(NULL, getpid(), &a), 0);
	assert_int_equal(runtime_detect_cached(NULL, getpid(), &b), 0);
	assert_int_equal(runtime_detect_cached(NULL, getpid(), &c), 0);
	assert_int_equal(a.kind, b.kind);
	assert_string_equal(a.display, b.display);
	assert_memory_equal(&b, &c, sizeof(b));
}

/* A pid that exited is -ESRCH, cached before or not; a reused slot never answers for it. */
static void test_gone(void **state)
{
	struct runtime_info ri;
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(runtime_detect_cached(NULL, pid, &ri), 0);	/* a zombie still has stat */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(runtime_detect_cached(NULL, pid, &ri), -ESRCH);
}

static void test_errors(void **state)
{
	static const struct { int pid; bool out; int ret; } cases[] = {
		{ 0, true, -EINVAL },
		{ -1, true, -EINVAL },
		{ 1, false, -EINVAL },
	};
	struct runtime_info ri;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(runtime_detect_cached(NULL, cases[i].pid, cases[i].out ? &ri : NULL),
				 cases[i].ret);
	}
}

/* A fake proc root is never cached: the answer is runtime_detect()'s for that tree. */
static void test_fake_root_bypass(void **state)
{
	struct runtime_detect_opts o = { .proc_root = "tests/fixtures/proc-nonexistent" };
	struct runtime_info ri;

	(void)state;
	assert_int_equal(runtime_detect_cached(&o, getpid(), &ri), runtime_detect(&o, getpid(), &ri));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_answer),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fake_root_bypass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
