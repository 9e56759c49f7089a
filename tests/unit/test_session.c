// SPDX-License-Identifier: Apache-2.0
/*
 * The page's session table: create, look up, sign out, expiry, the bound, and the ids it
 * refuses to look at (table-driven error rows).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/agent/session.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_create_lookup_remove(void **state)
{
	char id[SESSION_HEX_LEN + 1], id2[SESSION_HEX_LEN + 1];
	struct session_info si, got;
	struct sessions *s;

	(void)state;
	assert_int_equal(sessions__new(0, 0, &s), 0);
	assert_int_equal(sessions__create(s, "otto", TOKEN_ROLE_OPERATOR, id, &si), 0);
	assert_int_equal(strlen(id), SESSION_HEX_LEN);
	assert_int_equal(strlen(si.csrf), SESSION_HEX_LEN);
	assert_string_not_equal(id, si.csrf);
	assert_int_equal(sessions__lookup(s, id, SESSION_HEX_LEN, &got), 0);
	assert_string_equal(got.name, "otto");
	assert_int_equal(got.role, TOKEN_ROLE_OPERATOR);
	assert_string_equal(got.csrf, si.csrf);
	assert_int_equal(sessions__create(s, "vera", TOKEN_ROLE_VIEWER, id2, &si), 0);
	assert_string_not_equal(id, id2);
	assert_int_equal(sessions__count(s), 2);
	assert_int_equal(sessions__remove(s, id, SESSION_HEX_LEN), 0);
	assert_int_equal(sessions__lookup(s, id, SESSION_HEX_LEN, &got), -ENOENT);
	assert_int_equal(sessions__remove(s, id, SESSION_HEX_LEN), -ENOENT);
	assert_int_equal(sessions__lookup(s, id2, SESSION_HEX_LEN, &got), 0);
	assert_string_equal(got.name, "vera");
	sessions__free(s);
}

static void test_bad_ids(void **state)
{
	static const char *const ids[] = {
		"",
		"abc",
		/* 64 characters, not all lower-case hex */
		"ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
		"g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		/* 65 */
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
		/* well formed, never issued */
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	};
	char id[SESSION_HEX_LEN + 1];
	struct session_info si, got;
	struct sessions *s;
	size_t i;

	(void)state;
	assert_int_equal(sessions__new(4, 0, &s), 0);
	assert_int_equal(sessions__create(s, "otto", TOKEN_ROLE_OPERATOR, id, &si), 0);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		assert_int_equal(sessions__lookup(s, ids[i], strlen(ids[i]), &got), -ENOENT);
	assert_int_equal(sessions__lookup(s, NULL, 0, &got), -ENOENT);
	assert_int_equal(sessions__create(s, "", TOKEN_ROLE_VIEWER, id, &si), -EINVAL);
	assert_int_equal(sessions__create(s, "x", TOKEN_ROLE_NONE, id, &si), -EINVAL);
	sessions__free(s);
}

static void test_bound(void **state)
{
	char ids[5][SESSION_HEX_LEN + 1];
	struct session_info si, got;
	struct sessions *s;
	size_t i;

	(void)state;
	assert_int_equal(sessions__new(4, 0, &s), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(sessions__create(s, "otto", TOKEN_ROLE_VIEWER, ids[i], &si), 0);
	assert_int_equal(sessions__count(s), 4);
	/* the fifth replaced the one that expires first: the first */
	assert_int_equal(sessions__lookup(s, ids[0], SESSION_HEX_LEN, &got), -ENOENT);
	for (i = 1; i < 5; i++)
		assert_int_equal(sessions__lookup(s, ids[i], SESSION_HEX_LEN, &got), 0);
	sessions__free(s);
}

static void test_expiry(void **state)
{
	char id[SESSION_HEX_LEN + 1];
	struct session_info si, got;
	struct sessions *s;

	(void)state;
	assert_int_equal(sessions__new(0, 1, &s), 0);
	assert_int_equal(sessions__create(s, "otto", TOKEN_ROLE_ADMIN, id, &si), 0);
	assert_int_equal(sessions__lookup(s, id, SESSION_HEX_LEN, &got), 0);
	usleep(1100 * 1000);
	assert_int_equal(sessions__lookup(s, id, SESSION_HEX_LEN, &got), -ENOENT);
	assert_int_equal(sessions__count(s), 0);
	sessions__free(s);
}

static void test_equal(void **state)
{
	(void)state;
	assert_true(session_equal("abc", "abc", 3));
	assert_false(session_equal("abc", "abd", 3));
	assert_true(session_equal("abc", "abd", 2));
	assert_true(session_equal("", "", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_lookup_remove),
		cmocka_unit_test(test_bad_ids),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
