// SPDX-License-Identifier: Apache-2.0
/*
 * The page's sign-in parsing, table-driven with error rows: the Cookie header, the Origin
 * check, the body of POST /v1/session.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/agent/tokens.h"
#include "daemon/agent/web_parse.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_cookie(void **state)
{
	static const struct {
		const char *header, *name;
		int ret;
		const char *value;
	} cases[] = {
		{ "slideops_session=ab12", "slideops_session", 0, "ab12" },
		{ "a=1; slideops_session=ab12; b=2", "slideops_session", 0, "ab12" },
		{ "a=1;slideops_session=ab12", "slideops_session", 0, "ab12" },
		{ "  slideops_session=ab12  ", "slideops_session", 0, "ab12" },
		{ "slideops_session=\"ab12\"", "slideops_session", 0, "ab12" },
		{ "slideops_session=", "slideops_session", 0, "" },
		{ "slideops_session=1; slideops_session=2", "slideops_session", 0, "1" },
		{ "x_slideops_session=1; slideops_session=2", "slideops_session", 0, "2" },
		/* errors */
		{ "slideops_sessionx=1", "slideops_session", -ENOENT, NULL },
		{ "slideops_session", "slideops_session", -ENOENT, NULL },
		{ "", "slideops_session", -ENOENT, NULL },
		{ NULL, "slideops_session", -ENOENT, NULL },
		{ "a=1", "", -ENOENT, NULL },
		{ ";;;=;", "slideops_session", -ENOENT, NULL },
	};
	const char *v;
	size_t i, len;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = web_parse_cookie(cases[i].header, cases[i].name, &v, &len);

		assert_int_equal(ret, cases[i].ret);
		if (!ret) {
			assert_int_equal(len, strlen(cases[i].value));
			assert_memory_equal(v, cases[i].value, len);
		}
	}
}

static void test_cookie_too_long(void **state)
{
	char *h = malloc(WEB_COOKIE_MAX + 2);
	const char *v;
	size_t len;

	(void)state;
	assert_non_null(h);
	memset(h, 'a', WEB_COOKIE_MAX + 1);
	h[WEB_COOKIE_MAX + 1] = '\0';
	assert_int_equal(web_parse_cookie(h, "slideops_session", &v, &len), -EINVAL);
	h[WEB_COOKIE_MAX] = '\0'; /* exactly the limit: looked at */
	memcpy(h, "slideops_session=x;", 19);
	assert_int_equal(web_parse_cookie(h, "slideops_session", &v, &len), 0);
	free(h);
}

static void test_origin(void **state)
{
	static const struct {
		const char *origin, *host;
		bool same;
	} cases[] = {
		{ "http://127.0.0.1:7070", "127.0.0.1:7070", true },
		{ "https://node-1:7070", "node-1:7070", true },
		{ "http://NODE-1:7070", "node-1:7070", true },
		/* errors */
		{ "http://127.0.0.1:8000", "127.0.0.1:7070", false },
		{ "http://127.0.0.1:7070.evil", "127.0.0.1:7070", false },
		{ "http://127.0.0.1", "127.0.0.1:7070", false },
		{ "null", "127.0.0.1:7070", false },
		{ "ftp://127.0.0.1:7070", "127.0.0.1:7070", false },
		{ "127.0.0.1:7070", "127.0.0.1:7070", false },
		{ "http://127.0.0.1:7070", "", false },
		{ "http://127.0.0.1:7070", NULL, false },
		{ NULL, "127.0.0.1:7070", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(web_origin_is(cases[i].origin, cases[i].host), cases[i].same);
}

static void test_session_body(void **state)
{
	static const struct {
		const char *body;
		int ret;
		const char *token_or_err;
	} cases[] = {
		{ "{\"token\": \"operator-token-0123456789abcdef\"}", 0,
		  "operator-token-0123456789abcdef" },
		{ "{\"token\":\"x\"}", 0, "x" },
		/* errors */
		{ "", -EINVAL, "a JSON body is required" },
		{ "{", -EINVAL, "invalid JSON" },
		{ "[]", -EINVAL, "the body must be" },
		{ "{}", -EINVAL, "the body must be" },
		{ "{\"token\": \"x\", \"role\": \"admin\"}", -EINVAL, "the body must be" },
		{ "{\"tokn\": \"x\"}", -EINVAL, "the body must be" },
		{ "{\"token\": 12}", -EINVAL, "token must be a string" },
		{ "{\"token\": \"\"}", -EINVAL, "1 to" },
		{ "{\"token\": \"a b\"}", -EINVAL, "visible ASCII" },
		{ "{\"token\": \"caf\\u00e9\"}", -EINVAL, "visible ASCII" },
		{ "{\"token\": \"a\", \"token\": \"b\"}", -EINVAL, "invalid JSON" },
	};
	char token[TOKENS_MAX_LEN + 1], err[256];
	size_t i, tlen;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *b = cases[i].body;
		int ret = web_parse_session_body(b, strlen(b), token, sizeof(token), &tlen, err,
						 sizeof(err));

		assert_int_equal(ret, cases[i].ret);
		if (!ret)
			assert_string_equal(token, cases[i].token_or_err);
		else
			assert_non_null(strstr(err, cases[i].token_or_err));
	}
}

static void test_session_body_limits(void **state)
{
	char token[TOKENS_MAX_LEN + 1], err[256], body[TOKENS_MAX_LEN + 64];
	size_t tlen;
	int n;

	(void)state;
	n = snprintf(body, sizeof(body), "{\"token\":\"%0*d\"}", TOKENS_MAX_LEN, 0);
	assert_int_equal(web_parse_session_body(body, (size_t)n, token, sizeof(token), &tlen, err,
						sizeof(err)),
			 0);
	assert_int_equal(tlen, TOKENS_MAX_LEN);
	n = snprintf(body, sizeof(body), "{\"token\":\"%0*d\"}", TOKENS_MAX_LEN + 1, 0);
	assert_int_equal(web_parse_session_body(body, (size_t)n, token, sizeof(token), &tlen, err,
						sizeof(err)),
			 -EINVAL);
	assert_int_equal(web_parse_session_body(body, 70000, token, sizeof(token), &tlen, err,
						sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "too large"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookie),
		cmocka_unit_test(test_cookie_too_long),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_session_body),
		cmocka_unit_test(test_session_body_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
