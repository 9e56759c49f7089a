// SPDX-License-Identifier: Apache-2.0
/*
 * The API tokens file: valid files and lookups by token (role and name), error rows with the
 * exact "FILE:LINE: ..." message (never quoting a token), roles and tokens__load().
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

#include "daemon/agent/tokens.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define T1 "viewer-token-0123456789"
#define T2 "operator-token-0123456789"
#define T3 "admin-token-0123456789"

#define GOOD                                                                                   \
	"# API tokens\n"                                                                       \
	"tokens:\n"                                                                            \
	"  - name: alice\n"                                                                    \
	"    token: \"" T1 "\"\n"                                                              \
	"    role: viewer\n"                                                                   \
	"  - {name: bob, token: " T2 ", role: operator}\n"                                     \
	"  - name: root@ci\n"                                                                  \
	"    role: admin\n"                                                                    \
	"    token: '" T3 "'\n"

static void test_good(void **state)
{
	static const struct {
		const char *token;
		enum token_role role;
		const char *name;
	} cases[] = {
		{ T1, TOKEN_ROLE_VIEWER, "alice" },
		{ T2, TOKEN_ROLE_OPERATOR, "bob" },
		{ T3, TOKEN_ROLE_ADMIN, "root@ci" },
		{ "viewer-token-012345678", TOKEN_ROLE_NONE, NULL },	/* a prefix */
		{ "viewer-token-01234567890", TOKEN_ROLE_NONE, NULL },	/* longer */
		{ "", TOKEN_ROLE_NONE, NULL },
		{ "short", TOKEN_ROLE_NONE, NULL },
	};
	struct tokens *t = NULL;
	char err[256], name[TOKENS_NAME_MAX + 1];
	size_t i;

	(void)state;
	assert_int_equal(tokens__parse(GOOD, strlen(GOOD), "tokens.yaml", &t, err, sizeof(err)), 0);
	assert_int_equal(tokens__count(t), 3);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(name, "unchanged");
		assert_int_equal(tokens__lookup(t, cases[i].token, strlen(cases[i].token), name,
						sizeof(name)),
				 cases[i].role);
		assert_string_equal(name, cases[i].name ? cases[i].name : "unchanged");
	}
	/* not terminated: only @len bytes count */
	assert_int_equal(tokens__lookup(t, T2 "trailing", strlen(T2), NULL, 0),
			 TOKEN_ROLE_OPERATOR);
	assert_int_equal(tokens__lookup(NULL, T1, strlen(T1), NULL, 0), TOKEN_ROLE_NONE);
	tokens__free(t);

	/* an empty list is valid: every request gets 401 */
	assert_int_equal(tokens__parse("tokens: []\n", 11, NULL, &t, err, sizeof(err)), 0);
	assert_int_equal(tokens__count(t), 0);
	assert_int_equal(tokens__lookup(t, T1, strlen(T1), NULL, 0), TOKEN_ROLE_NONE);
	tokens__free(t);
	assert_int_equal(tokens__parse("tokens:\n", 8, NULL, &t, err, sizeof(err)), 0);
	tokens__free(t);
	tokens__free(NULL);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "", "f.yaml: empty file: expected a mapping with the key 'tokens'" },
		{ "# only a comment\n", "f.yaml: empty file: expected a mapping with the key 'tokens'" },
		{ "- a\n", "f.yaml:1: expected a mapping with the key 'tokens'" },
		{ "toknes: []\n", "f.yaml:1: unknown key 'toknes' (known: tokens)" },
		{ "other: 1\n", "f.yaml:1: unknown key 'other' (known: tokens)" },
		{ "tokens: []\ntokens: []\n", "f.yaml:2: duplicate key 'tokens'" },
		{ "tokens: 3\n", "f.yaml:1: 'tokens' must be a list" },
		{ "tokens:\n  - alice\n", "f.yaml:2: each entry of 'tokens' must be a mapping" },
		{ "tokens:\n  - name: a\n    token: " T1 "\n",
		  "f.yaml:2: entry without a role (each entry needs name, token and role)" },
		{ "tokens:\n  - name: a\n    role: viewer\n", "f.yaml:2: entry without a token" },
		{ "tokens:\n  - token: " T1 "\n    role: viewer\n", "f.yaml:2: entry without a name" },
		{ "tokens:\n  - name: \"\"\n    token: " T1 "\n    role: viewer\n",
		  "f.yaml:2: entry without a name" },
		{ "tokens:\n  - name: a\n    token: " T1 "\n    role: superuser\n",
		  "f.yaml:2: entry 'a': unknown role 'superuser' (known: viewer, operator, admin)" },
		{ "tokens:\n  - name: a\n    token: " T1 "\n    role: Viewer\n",
		  "f.yaml:2: entry 'a': unknown role 'Viewer'" },
		{ "tokens:\n  - name: a\n    token: short\n    role: viewer\n",
		  "f.yaml:3: the token of this entry is too short: 5 characters, the minimum is 16" },
		{ "tokens:\n  - name: a\n    token: " T1 "\n    role: viewer\n    rol: admin\n",
		  "f.yaml:5: unknown key 'rol' (known: name, token, role)" },
		{ "tokens:\n  - name: a\n    name: b\n    token: " T1 "\n    role: viewer\n",
		  "f.yaml:3: duplicate key 'name'" },
		{ "tokens:\n  - {name: a, token: " T1 ", role: viewer}\n  - {name: a, token: " T2
		  ", role: viewer}\n",
		  "f.yaml:3: duplicate name 'a'" },
		{ "tokens:\n  - {name: a, token: " T1 ", role: viewer}\n  - {name: b, token: " T1
		  ", role: admin}\n",
		  "f.yaml:3: entry 'b' has the same token as 'a'" },
		{ "tokens:\n  - {name: a, token: [x], role: viewer}\n",
		  "f.yaml:2: 'token' must be a string" },
		{ "tokens:\n  - {name: \"a\\nb\", token: " T1 ", role: viewer}\n",
		  "f.yaml:2: 'name' must not contain control characters" },
		{ "tokens: &x []\n", "f.yaml:1: anchors and tags are not allowed" },
		{ "tokens:\n  - &a {name: a, token: " T1 ", role: viewer}\n  - *a\n",
		  "f.yaml:2: anchors and tags are not allowed" },
		{ "tokens:\n  - {name: a, token: !!str " T1 ", role: viewer}\n",
		  "f.yaml:2: tags are not allowed" },
		{ "tokens: []\n---\ntokens: []\n", "f.yaml:2: only one YAML document is allowed" },
		{ "tokens: [\n", "f.yaml:2: invalid YAML" },
		{ "tokens:\n  - name: a\n\ttoken: x\n", "f.yaml:3: invalid YAML" },
	};
	struct tokens *t = (struct tokens *)0x1;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		err[0] = '\0';
		assert_int_equal(tokens__parse(cases[i].text, strlen(cases[i].text), "f.yaml", &t,
					       err, sizeof(err)),
				 -EINVAL);
		print_message("  %s\n", err);
		assert_ptr_equal(t, (struct tokens *)0x1);
		assert_memory_equal(err, cases[i].err, strlen(cases[i].err));
		/* a token is never quoted */
		assert_null(strstr(err, T1));
		assert_null(strstr(err, T2));
	}
	/* NUL bytes, a tiny message buffer, no buffer */
	assert_int_equal(tokens__parse("tokens: []\0", 11, "f.yaml", &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f.yaml: NUL bytes are not allowed");
	assert_int_equal(tokens__parse("x", 1, "f.yaml", &t, err, 4), -EINVAL);
	assert_string_equal(err, "f.y");
	assert_int_equal(tokens__parse("x", 1, "f.yaml", &t, NULL, 0), -EINVAL);
}

static void test_limits(void **state)
{
	size_t size = (TOKENS_MAX + 2) * 80, n = 0;
	char *text = malloc(size), err[256];
	struct tokens *t;
	int i;

	(void)state;
	n += snprintf(text + n, size - n, "tokens:\n");
	for (i = 0; i < TOKENS_MAX; i++)
		n += snprintf(text + n, size - n, "  - {name: n%d, token: tok-%016d, role: viewer}\n",
			      i, i);
	assert_int_equal(tokens__parse(text, n, "f.yaml", &t, err, sizeof(err)), 0);
	assert_int_equal(tokens__count(t), TOKENS_MAX);
	assert_int_equal(tokens__lookup(t, "tok-0000000000000255", 20, err, sizeof(err)),
			 TOKEN_ROLE_VIEWER);
	assert_string_equal(err, "n255");
	tokens__free(t);
	n += snprintf(text + n, size - n, "  - {name: more, token: tok-more-0123456789, role: admin}\n");
	assert_int_equal(tokens__parse(text, n, "f.yaml", &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f.yaml:258: too many tokens: the maximum is 256");
	free(text);
}

static void test_roles(void **state)
{
	(void)state;
	assert_string_equal(token_role_name(TOKEN_ROLE_VIEWER), "viewer");
	assert_string_equal(token_role_name(TOKEN_ROLE_ADMIN), "admin");
	assert_string_equal(token_role_name(TOKEN_ROLE_NONE), "none");
	assert_string_equal(token_role_name(99), "none");
	assert_int_equal(token_role_parse("operator"), TOKEN_ROLE_OPERATOR);
	assert_int_equal(token_role_parse("none"), -EINVAL);
	assert_int_equal(token_role_parse(NULL), -EINVAL);
	assert_true(token_role_allows(TOKEN_ROLE_ADMIN, TOKEN_ROLE_OPERATOR));
	assert_true(token_role_allows(TOKEN_ROLE_OPERATOR, TOKEN_ROLE_OPERATOR));
	assert_false(token_role_allows(TOKEN_ROLE_VIEWER, TOKEN_ROLE_OPERATOR));
	assert_false(token_role_allows(TOKEN_ROLE_OPERATOR, TOKEN_ROLE_ADMIN));
	assert_false(token_role_allows(TOKEN_ROLE_NONE, TOKEN_ROLE_NONE));
}

static void test_load(void **state)
{
	char path[] = "/tmp/test_tokens.XXXXXX", err[256];
	struct tokens *t;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, GOOD, strlen(GOOD)), (ssize_t)strlen(GOOD));
	close(fd);
	assert_int_equal(tokens__load(path, &t, err, sizeof(err)), 0);
	assert_int_equal(tokens__count(t), 3);
	tokens__free(t);
	unlink(path);
	assert_int_equal(tokens__load(path, &t, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
