// SPDX-License-Identifier: Apache-2.0
/* daemon/capture/node_source.c: the pure parts (the journal entries of inspectors opened). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/capture/node_source.h"

static void test_parse_entry(void **state)
{
	static const struct {
		const char *name;
		int ret;
		uint32_t pid;
		unsigned long long start;
		uint16_t port;
	} rows[] = {
		{ "inspector-10180-2339295-9229", 0, 10180, 2339295, 9229 },
		{ "inspector-1-0-1", 0, 1, 0, 1 },
		{ "inspector-2147483647-18446744073709551615-65535", 0, 2147483647,
		  18446744073709551615ull, 65535 },
		/* error rows */
		{ "inspector-0-1-9229", -EINVAL },	    /* pid 0 */
		{ "inspector-2147483648-1-9229", -EINVAL }, /* beyond a pid */
		{ "inspector-12-1-0", -EINVAL },	    /* port 0 */
		{ "inspector-12-1-65536", -EINVAL },
		{ "inspector-12-1-9229x", -EINVAL }, /* trailing text */
		{ "inspector-12-1", -EINVAL },
		{ "inspector-", -EINVAL },
		{ "12-1-slideops-0a1b2c3d4e5f", -EINVAL }, /* a JVM placement */
		{ "injected-12-1", -EINVAL },
		{ "", -EINVAL },
	};
	unsigned long long start;
	uint16_t port;
	uint32_t pid;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int ret = node_source_parse_entry(rows[i].name, &pid, &start, &port);

		print_message("row %zu: %s\n", i, rows[i].name);
		assert_int_equal(ret, rows[i].ret);
		if (ret)
			continue;
		assert_int_equal(pid, rows[i].pid);
		assert_true(start == rows[i].start);
		assert_int_equal(port, rows[i].port);
	}
}

static void test_question(void **state)
{
	(void)state;
	assert_true(node_source_question(Q_CPU));
	assert_true(node_source_question(Q_WALL));
	assert_true(node_source_question(Q_MEMORY_ALLOC));
	assert_true(node_source_question(Q_MEMORY_HELD));
	assert_false(node_source_question(Q_LOCKS));
	assert_false(node_source_question(Q_THREADS));
	assert_false(node_source_question(Q_MEMORY_GROWTH));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_entry),
		cmocka_unit_test(test_question),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
