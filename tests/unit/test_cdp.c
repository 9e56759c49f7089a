// SPDX-License-Identifier: Apache-2.0
/*
 * The CDP texts of runtimes/node/cdp.h: commands, responses, error answers and events, small
 * results read by path, and Node's /json/list with every host, port and path a hostile
 * "inspector" could offer.
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

#include "runtimes/node/cdp.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_command(void **state)
{
	static const struct {
		size_t size;
		uint32_t id;
		const char *method, *params;
		int ret;
		const char *out;
	} cases[] = {
		{ 256, 1, "Profiler.enable", NULL, 35,
		  "{\"id\":1,\"method\":\"Profiler.enable\"}" },
		{ 256, 4294967295u, "Runtime.evaluate", "{\"expression\":\"process.pid\"}", 83,
		  "{\"id\":4294967295,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":\"process.pid\"}}" },
		{ 256, 0, "a", "{}", 33, "{\"id\":0,\"method\":\"a\",\"params\":{}}" },
		{ 36, 1, "Profiler.enable", NULL, 35, "{\"id\":1,\"method\":\"Profiler.enable\"}" },
		/* errors */
		{ 35, 1, "Profiler.enable", NULL, -ENOSPC },
		{ 1, 1, "Profiler.enable", NULL, -ENOSPC },
		{ 0, 1, "Profiler.enable", NULL, -ENOSPC },
		{ 256, 1, "", NULL, -EINVAL },
		{ 256, 1, NULL, NULL, -EINVAL },
		{ 256, 1, "Profiler.enable\"", NULL, -EINVAL },
		{ 256, 1, "Profiler_enable", NULL, -EINVAL },
		{ 256, 1, "Profiler.enable2", NULL, -EINVAL },
		{ 256, 1, "Profiler.\xc3\xa4", NULL, -EINVAL },
		{ 256, 1, "Profiler enable", NULL, -EINVAL },
		{ 256, 1, "Profiler.enable", "", -EINVAL },
		{ 256, 1, "Profiler.enable", "[1]", -EINVAL },
		{ 256, 1, "Profiler.enable", " {}", -EINVAL },
	};
	char buf[256], long_method[CDP_METHOD_MAX + 2];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(cdp_command(buf, cases[i].size, cases[i].id, cases[i].method,
					     cases[i].params),
				 cases[i].ret);
		if (cases[i].ret >= 0)
			assert_string_equal(buf, cases[i].out);
	}
	memset(long_method, 'a', sizeof(long_method) - 1);
	long_method[CDP_METHOD_MAX] = '\0';
	assert_true(cdp_command(buf, sizeof(buf), 1, long_method, NULL) > 0);
	long_method[CDP_METHOD_MAX] = 'a';
	long_method[CDP_METHOD_MAX + 1] = '\0';
	assert_int_equal(cdp_command(buf, sizeof(buf), 1, long_method, NULL), -EINVAL);
	assert_int_equal(cdp_command(NULL, 10, 1, "a", NULL), -EINVAL);
}

static void test_parse(void **state)
{
	static const struct {
		const char *in;
		int ret;
		uint32_t id;
		const char *method, *error;
	} cases[] = {
		{ "{\"id\":1,\"result\":{}}", 0, 1 },
		{ "{\"id\":4294967295,\"result\":{\"x\":[1,2]}}", 0, 4294967295u },
		{ "  {\"result\":{},\"id\":7}\n", 0, 7 },
		{ "{\"id\":3,\"error\":{\"code\":-32601,\"message\":\"'Profiler.foo' wasn't found\"}}",
		  0, 3, NULL, "-32601 'Profiler.foo' wasn't found" },
		{ "{\"id\":3,\"error\":{\"code\":-32000,\"message\":\"a\\u0001b\\nc\",\"data\":\"x\"}}",
		  0, 3, NULL, "-32000 a?b?c" },
		{ "{\"id\":3,\"error\":{\"code\":1,\"message\":\"\"}}", 0, 3, NULL, "1 " },
		{ "{\"method\":\"Runtime.consoleAPICalled\",\"params\":{\"type\":\"log\"}}", 0, 0,
		  "Runtime.consoleAPICalled" },
		{ "{\"method\":\"Inspector.detached\"}", 0, 0, "Inspector.detached" },
		{ "{\"method\":\"a\\u001bb\",\"params\":{}}", 0, 0, "a?b" },
		/* errors */
		{ "", -EPROTO },
		{ "{", -EPROTO },
		{ "[]", -EPROTO },
		{ "1", -EPROTO },
		{ "\"x\"", -EPROTO },
		{ "{}", -EPROTO },
		{ "{\"id\":1}", -EPROTO },
		{ "{\"id\":0,\"result\":{}}", -EPROTO },
		{ "{\"id\":-1,\"result\":{}}", -EPROTO },
		{ "{\"id\":4294967296,\"result\":{}}", -EPROTO },
		{ "{\"id\":1.5,\"result\":{}}", -EPROTO },
		{ "{\"id\":\"1\",\"result\":{}}", -EPROTO },
		{ "{\"id\":1,\"result\":[]}", -EPROTO },
		{ "{\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}", -EPROTO },
		{ "{\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"x\"}}", -EPROTO },
		{ "{\"id\":1,\"error\":{\"code\":1}}", -EPROTO },
		{ "{\"id\":1,\"error\":{\"code\":1,\"message\":2}}", -EPROTO },
		{ "{\"id\":1,\"error\":\"x\"}", -EPROTO },
		{ "{\"method\":1}", -EPROTO },
		{ "{\"method\":\"\"}", -EPROTO },
		{ "{\"method\":\"a\",\"params\":[]}", -EPROTO },
		{ "{\"id\":1,\"result\":{},\"id\":2}", -EPROTO }, /* duplicate key */
		{ "{\"id\":1,\"result\":{}} x", -EPROTO },
		{ "{\"id\":1,\"result\":{\"s\":\"\xff\"}}", -EPROTO }, /* not UTF-8 */
		{ "{\"id\":1,\"result\":{\"s\":\"a\\u0000\"}}", -EPROTO },
	};
	struct cdp_msg *m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		m = (struct cdp_msg *)0x1;
		assert_int_equal(cdp_parse(cases[i].in, strlen(cases[i].in), &m), cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(m, (struct cdp_msg *)0x1);
			continue;
		}
		assert_int_equal(cdp_msg_id(m), cases[i].id);
		assert_int_equal(cdp_msg_is_event(m), cases[i].method != NULL);
		if (cases[i].method)
			assert_string_equal(cdp_msg_method(m), cases[i].method);
		else
			assert_null(cdp_msg_method(m));
		if (cases[i].error)
			assert_string_equal(cdp_msg_error(m), cases[i].error);
		else
			assert_null(cdp_msg_error(m));
		cdp_msg_free(m);
	}
	cdp_msg_free(NULL);
	assert_int_equal(cdp_parse(NULL, 0, &m), -EINVAL);
	assert_int_equal(cdp_parse("{}", CDP_MAX_MESSAGE + 1, &m), -EFBIG);
}

/* A long error message is cut to CDP_ERROR_MAX bytes at a character boundary. */
static void test_error_cut(void **state)
{
	size_t n = 3 * CDP_ERROR_MAX, len, i;
	char *buf = malloc(n * 2 + 64);
	struct cdp_msg *m;
	const char *e;

	(void)state;
	assert_non_null(buf);
	len = (size_t)sprintf(buf, "{\"id\":9,\"error\":{\"code\":-1,\"message\":\"");
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "\xc3\xa4");
	len += (size_t)sprintf(buf + len, "\"}}");
	assert_int_equal(cdp_parse(buf, len, &m), 0);
	e = cdp_msg_error(m);
	assert_non_null(e);
	/* "-1 " and 98 characters of two bytes: the 99th would cross CDP_ERROR_MAX */
	assert_int_equal(strlen(e), CDP_ERROR_MAX - 1);
	assert_memory_equal(e, "-1 \xc3\xa4", 5);
	assert_memory_equal(e + CDP_ERROR_MAX - 3, "\xc3\xa4", 2);
	cdp_msg_free(m);
	free(buf);
}

static void test_result(void **state)
{
	static const char *const msg =
		"{\"id\":5,\"result\":{\"result\":{\"type\":\"number\",\"value\":1234,\"description\":\"1234\"},"
		"\"s\":{\"type\":\"string\",\"value\":\"v20.20.2\"},\"ctl\":\"a\\tb\",\"r\":12.0,"
		"\"half\":1.5,\"big\":9007199254740994.0,\"neg\":-7,\"arr\":[1],\"n\":null}}";
	static const struct {
		const char *path;
		size_t size;
		int ret_str;
		const char *str;
		int ret_int;
		int64_t val;
	} cases[] = {
		{ "result.value", 64, -EPROTO, NULL, 0, 1234 },
		{ "result.description", 64, 4, "1234", -EPROTO },
		{ "result.type", 64, 6, "number", -EPROTO },
		{ "result.type", 7, 6, "number", -EPROTO },
		{ "s.value", 64, 8, "v20.20.2", -EPROTO },
		{ "ctl", 64, 3, "a?b", -EPROTO },
		{ "r", 64, -EPROTO, NULL, 0, 12 },
		{ "neg", 64, -EPROTO, NULL, 0, -7 },
		/* errors */
		{ "result.type", 6, -ENOSPC, NULL, -EPROTO },
		{ "half", 64, -EPROTO, NULL, -EPROTO },
		{ "big", 64, -EPROTO, NULL, -EPROTO },
		{ "arr", 64, -EPROTO, NULL, -EPROTO },
		{ "n", 64, -EPROTO, NULL, -EPROTO },
		{ "result", 64, -EPROTO, NULL, -EPROTO },
		{ "result.nope", 64, -ENOENT, NULL, -ENOENT },
		{ "nope", 64, -ENOENT, NULL, -ENOENT },
		{ "result.value.x", 64, -ENOENT, NULL, -ENOENT },
		{ "arr.0", 64, -ENOENT, NULL, -ENOENT },
		{ "", 64, -EINVAL, NULL, -EINVAL },
		{ NULL, 64, -EINVAL, NULL, -EINVAL },
		{ "result.", 64, -EINVAL, NULL, -EINVAL },
		{ ".result", 64, -EINVAL, NULL, -EINVAL },
		{ "result..value", 64, -EINVAL, NULL, -EINVAL },
	};
	static const char ev_text[] = "{\"method\":\"a\",\"params\":{\"result\":{\"value\":1}}}";
	static const char er_text[] = "{\"id\":1,\"error\":{\"code\":1,\"message\":\"x\"}}";
	struct cdp_msg *m, *ev, *er;
	char buf[64];
	int64_t v;
	size_t i;

	(void)state;
	assert_int_equal(cdp_parse(msg, strlen(msg), &m), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, "untouched");
		assert_int_equal(cdp_msg_result_string(m, cases[i].path, buf, cases[i].size),
				 cases[i].ret_str);
		if (cases[i].ret_str >= 0)
			assert_string_equal(buf, cases[i].str);
		else
			assert_string_equal(buf, "untouched");
		v = 42;
		assert_int_equal(cdp_msg_result_int(m, cases[i].path, &v), cases[i].ret_int);
		assert_true(v == (cases[i].ret_int ? 42 : cases[i].val));
	}
	cdp_msg_free(m);

	/* an event and an error answer have no result */
	assert_int_equal(cdp_parse(ev_text, strlen(ev_text), &ev), 0);
	assert_int_equal(cdp_msg_result_int(ev, "result.value", &v), -ENOENT);
	cdp_msg_free(ev);
	assert_int_equal(cdp_parse(er_text, strlen(er_text), &er), 0);
	assert_int_equal(cdp_msg_result_string(er, "result.value", buf, sizeof(buf)), -ENOENT);
	cdp_msg_free(er);
}

static void test_targets(void **state)
{
	static const struct {
		const char *body;
		uint16_t port;
		size_t size;
		int ret;
		const char *path;
	} cases[] = {
		/* what Node 20 answers */
		{ "[ {\n  \"description\": \"node.js instance\",\n  \"devtoolsFrontendUrl\": "
		  "\"devtools://devtools/bundled/js_app.html?experiments=true&v8only=true&ws=127.0.0.1:9229/"
		  "0f2c936f-b1cd-4ac9-aab3-f63b0f33d55e\",\n  \"faviconUrl\": \"https://nodejs.org/static/"
		  "images/favicons/favicon.ico\",\n  \"id\": \"0f2c936f-b1cd-4ac9-aab3-f63b0f33d55e\",\n"
		  "  \"title\": \"app.js\",\n  \"type\": \"node\",\n  \"url\": \"file:///app/app.js\",\n"
		  "  \"webSocketDebuggerUrl\": \"ws://127.0.0.1:9229/0f2c936f-b1cd-4ac9-aab3-f63b0f33d55e\"\n"
		  "} ]\n",
		  9229, 64, 0, "/0f2c936f-b1cd-4ac9-aab3-f63b0f33d55e" },
		{ "[{\"webSocketDebuggerUrl\":\"ws://localhost:9230/abc\"}]", 9230, 64, 0, "/abc" },
		{ "[{\"webSocketDebuggerUrl\":\"ws://[::1]:1/A-z0\"}]", 1, 64, 0, "/A-z0" },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:65535/x\"}]", 65535, 3, 0, "/x" },
		/* the first that qualifies */
		{ "[{\"type\":\"node\"},{\"webSocketDebuggerUrl\":\"ws://evil.example:9229/x\"},"
		  "{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/good\"},"
		  "{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/second\"}]",
		  9229, 64, 0, "/good" },
		{ "[1,\"x\",null,[],{\"webSocketDebuggerUrl\":5},"
		  "{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/ok\"}]",
		  9229, 64, 0, "/ok" },
		/* none qualifies */
		{ "[]", 9229, 64, -ENOENT },
		{ "[{}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://evil.example:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9230/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:92290/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:09229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/a/b\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/a?b\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/a.b\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/a b\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/\\u00e4\"}]", 9229, 64,
		  -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/x\\n\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1.evil.example:9229/x\"}]", 9229, 64,
		  -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.2:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://0.0.0.0:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://user@127.0.0.1:9229/x\"}]", 9229, 64,
		  -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://LOCALHOST:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"wss://127.0.0.1:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"http://127.0.0.1:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\" ws://127.0.0.1:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://[::2]:9229/x\"}]", 9229, 64, -ENOENT },
		{ "[{\"webSocketDebuggerUrl\":\"ws://[::ffff:127.0.0.1]:9229/x\"}]", 9229, 64,
		  -ENOENT },
		/* errors */
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/x\"}]", 9229, 2, -ENOSPC },
		{ "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/x\"}]", 0, 64, -EINVAL },
		{ "{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/x\"}", 9229, 64, -EPROTO },
		{ "", 9229, 64, -EPROTO },
		{ "[", 9229, 64, -EPROTO },
		{ "HTTP/1.1 200 OK", 9229, 64, -EPROTO },
		{ "\"ws://127.0.0.1:9229/x\"", 9229, 64, -EPROTO },
	};
	char buf[64], path[CDP_WS_PATH_MAX + 2], body[CDP_WS_PATH_MAX + 128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, "u");
		assert_int_equal(cdp_targets_parse(cases[i].body, strlen(cases[i].body),
						   cases[i].port, buf, cases[i].size),
				 cases[i].ret);
		assert_string_equal(buf, cases[i].ret ? "u" : cases[i].path);
	}
	/* the path's length: 128 characters pass, 129 do not */
	memset(path, 'a', sizeof(path) - 1);
	path[CDP_WS_PATH_MAX] = '\0';
	snprintf(body, sizeof(body), "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/%s\"}]",
		 path);
	assert_int_equal(cdp_targets_parse(body, strlen(body), 9229, buf, sizeof(buf)), -ENOSPC);
	{
		char big[CDP_WS_PATH_MAX + 2];

		assert_int_equal(cdp_targets_parse(body, strlen(body), 9229, big, sizeof(big)), 0);
		assert_int_equal(strlen(big), CDP_WS_PATH_MAX + 1);
	}
	path[CDP_WS_PATH_MAX] = 'a';
	path[CDP_WS_PATH_MAX + 1] = '\0';
	snprintf(body, sizeof(body), "[{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9229/%s\"}]",
		 path);
	assert_int_equal(cdp_targets_parse(body, strlen(body), 9229, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(cdp_targets_parse("[]", CDP_MAX_TARGETS + 1, 9229, buf, sizeof(buf)),
			 -EFBIG);
	assert_int_equal(cdp_targets_parse(NULL, 0, 9229, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command),	  cmocka_unit_test(test_parse),
		cmocka_unit_test(test_error_cut), cmocka_unit_test(test_result),
		cmocka_unit_test(test_targets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
