// SPDX-License-Identifier: Apache-2.0
/* base/strlist.c: a bounded list of formatted strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/strlist.h"

static void test_add(void **state)
{
	struct strlist l = { 0 };
	const char *const *s;
	size_t i;

	(void)state;
	assert_int_equal(strlist_get(&l, &s), 0);
	strlist_addf(&l, "process %u (%s)", 12u, "node");
	strlist_addf(&l, "%s", "");
	assert_int_equal(strlist_get(&l, &s), 2);
	assert_string_equal(s[0], "process 12 (node)");
	assert_string_equal(s[1], "");
	/* full: later strings are dropped */
	for (i = 0; i < 2 * STRLIST_MAX; i++)
		strlist_addf(&l, "n%zu", i);
	assert_int_equal(strlist_get(&l, &s), STRLIST_MAX);
	assert_string_equal(s[STRLIST_MAX - 1], "n5");
	strlist_clear(&l);
	assert_int_equal(strlist_get(&l, &s), 0);
	strlist_clear(&l); /* twice: still empty */
	strlist_addf(&l, "again");
	assert_int_equal(strlist_get(&l, &s), 1);
	strlist_clear(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
