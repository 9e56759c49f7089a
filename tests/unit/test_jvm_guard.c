// SPDX-License-Identifier: Apache-2.0
/* The JVM versions no agent is loaded into (runtimes/jvm/jvm_guard.h), by the spellings runtime
 * detection and HotSpot use, and the unknown ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_guard.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_agent(void **state)
{
	static const struct {
		const char *version;
		const char *bug; /* NULL: an agent may be loaded */
	} rows[] = {
		{ "17", NULL },
		{ "17.0.15", NULL },
		{ "21.0.5", NULL },
		{ "25", NULL },
		{ "16", "JDK-8212155" },
		{ "11.0.22", "JDK-8212155" },
		{ "11", "JDK-8212155" },
		{ "1.8.0_392", "JDK-8212155" },
		{ "9", "JDK-8212155" },
		/* unknown: refused */
		{ "", "JDK-8212155" },
		{ NULL, "JDK-8212155" },
		{ "x17", "JDK-8212155" },
		{ "0", "JDK-8212155" },
		{ "1.x", "JDK-8212155" },
		{ "99999", "JDK-8212155" },
	};
	const struct jvm_guard_bug *b;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		b = jvm_guard_agent(rows[i].version);
		if (!rows[i].bug) {
			assert_null(b);
			continue;
		}
		assert_non_null(b);
		assert_string_equal(b->id, rows[i].bug);
		assert_non_null(b->what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
