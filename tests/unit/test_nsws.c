// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/node/nsws.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UUID "/5c6d3a6e-8b0b-4db7-8ffe-a33117f44bf7"

static char long_path[NSWS_PATH_LEN_MAX + 2];	 /* '/' and 257 more: one too many */
static char longest_path[NSWS_PATH_LEN_MAX + 1]; /* '/' and 256 more */

static void make_paths(void)
{
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	memset(longest_path, 'a', sizeof(longest_path) - 1);
	longest_path[0] = '/';
	longest_path[sizeof(longest_path) - 1] = '\0';
}

static void test_opts_check(void **state)
{
	static const struct {
		struct nsws_opts o;
		int ret;
	} cases[] = {
		/* 0 */ { { "127.0.0.1", 9229, UUID, 0, 0, 0, 0 }, 0 },
		/* 1 */ { { "::1", 9229, UUID, 2000, 1 << 20, 1 << 20, 1 << 20 }, 0 },
		/* 2 */
		{ { "127.0.0.1", 1, "/a", NSWS_CONNECT_MAX_MS, NSWS_MAX_MESSAGE_MAX,
		    NSWS_MAX_QUEUED_MAX, NSWS_MAX_SEND_MAX },
		  0 },
		/* 3 */ { { "127.0.0.1", 9229, "/a-b_c/d.e", 0, 0, 0, 0 }, 0 },
		/* 4: hosts that are not the loopback, or not literal */
		{ { "localhost", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 5 */ { { "127.0.0.2", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 6 */ { { "[::1]", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 7 */ { { "10.0.0.1", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 8 */ { { "127.0.0.1 ", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 9 */ { { NULL, 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 10 */ { { "", 9229, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 11: port 0 */ { { "127.0.0.1", 0, UUID, 0, 0, 0, 0 }, -EINVAL },
		/* 12: paths */ { { "127.0.0.1", 9229, "/", 0, 0, 0, 0 }, -EINVAL },
		/* 13 */ { { "127.0.0.1", 9229, "", 0, 0, 0, 0 }, -EINVAL },
		/* 14 */ { { "127.0.0.1", 9229, "abc", 0, 0, 0, 0 }, -EINVAL },
		/* 15 */ { { "127.0.0.1", 9229, NULL, 0, 0, 0, 0 }, -EINVAL },
		/* 16 */ { { "127.0.0.1", 9229, "/a b", 0, 0, 0, 0 }, -EINVAL },
		/* 17 */ { { "127.0.0.1", 9229, "/a?x=1", 0, 0, 0, 0 }, -EINVAL },
		/* 18 */ { { "127.0.0.1", 9229, "/a\r\nHost: x", 0, 0, 0, 0 }, -EINVAL },
		/* 19 */ { { "127.0.0.1", 9229, "/caf\xc3\xa9", 0, 0, 0, 0 }, -EINVAL },
		/* 20 */ { { "127.0.0.1", 9229, "/a%20", 0, 0, 0, 0 }, -EINVAL },
		/* 21: bounds */ { { "127.0.0.1", 9229, UUID, -1, 0, 0, 0 }, -EINVAL },
		/* 22 */ { { "127.0.0.1", 9229, UUID, NSWS_CONNECT_MAX_MS + 1, 0, 0, 0 }, -EINVAL },
		/* 23 */ { { "127.0.0.1", 9229, UUID, 0, NSWS_MAX_MESSAGE_MAX + 1, 0, 0 }, -EINVAL },
		/* 24 */ { { "127.0.0.1", 9229, UUID, 0, 0, NSWS_MAX_QUEUED_MAX + 1, 0 }, -EINVAL },
		/* 25 */ { { "127.0.0.1", 9229, UUID, 0, 0, 0, NSWS_MAX_SEND_MAX + 1 }, -EINVAL },
		/* 26: max_queued below the max_message in effect (16 MiB by default) */
		{ { "127.0.0.1", 9229, UUID, 0, 0, 1 << 20, 0 }, -EINVAL },
		/* 27 */ { { "127.0.0.1", 9229, UUID, 0, 2 << 20, 1 << 20, 0 }, -EINVAL },
		/* 28 */ { { "127.0.0.1", 9229, UUID, 0, 1 << 20, 1 << 20, 0 }, 0 },
	};
	struct nsws_opts o = { "127.0.0.1", 9229, NULL, 0, 0, 0, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(nsws_opts_check(&cases[i].o), cases[i].ret);
	}
	make_paths();
	o.path = longest_path;
	assert_int_equal(nsws_opts_check(&o), 0);
	o.path = long_path;
	assert_int_equal(nsws_opts_check(&o), -EINVAL);
	assert_int_equal(nsws_opts_check(NULL), -EINVAL);
}

static void test_host_header(void **state)
{
	static const struct {
		const char *host;
		uint16_t port;
		size_t size;
		int ret;
		const char *out; /* NULL: untouched */
	} cases[] = {
		/* 0 */ { "127.0.0.1", 9229, NSWS_HOST_HEADER_MAX, 14, "127.0.0.1:9229" },
		/* 1 */ { "::1", 9229, NSWS_HOST_HEADER_MAX, 10, "[::1]:9229" },
		/* 2 */ { "127.0.0.1", 65535, NSWS_HOST_HEADER_MAX, 15, "127.0.0.1:65535" },
		/* 3 */ { "::1", 1, 8, 7, "[::1]:1" },
		/* 4: no room for the NUL */ { "::1", 1, 7, -ENOSPC, NULL },
		/* 5 */ { "127.0.0.1", 65535, NSWS_HOST_HEADER_MAX - 1, -ENOSPC, NULL },
		/* 6 */ { "127.0.0.1", 9229, 0, -ENOSPC, NULL },
		/* 7 */ { "localhost", 9229, NSWS_HOST_HEADER_MAX, -EINVAL, NULL },
		/* 8 */ { "[::1]", 9229, NSWS_HOST_HEADER_MAX, -EINVAL, NULL },
		/* 9 */ { NULL, 9229, NSWS_HOST_HEADER_MAX, -EINVAL, NULL },
		/* 10 */ { "127.0.0.1", 0, NSWS_HOST_HEADER_MAX, -EINVAL, NULL },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(buf, "untouched");
		assert_int_equal(nsws_host_header(cases[i].host, cases[i].port, buf, cases[i].size),
				 cases[i].ret);
		assert_string_equal(buf, cases[i].out ? cases[i].out : "untouched");
	}
	assert_int_equal(nsws_host_header("127.0.0.1", 9229, NULL, 16), -EINVAL);
}

static void test_handshake_error(void **state)
{
	static const struct {
		const char *why;
		int status, ret;
		const char *note;
	} cases[] = {
		/* 0 */ { "HS: ws upgrade response not 101", 404, -EPROTO,
			  "HTTP 404 instead of a WebSocket" },
		/* 1: Node's answer to a wrong path or Host */
		{ "HS: ws upgrade response not 101", 400, -EPROTO,
		  "HTTP 400 instead of a WebSocket" },
		/* 2 */
		{ "HS: ws upgrade unauthorized", 401, -EPROTO, "HTTP 401 instead of a WebSocket" },
		/* 3 */
		{ "HS: Redirect code but no Location", 302, -EPROTO,
		  "HTTP 302 instead of a WebSocket" },
		/* 4 */ { "Unable to connect", 0, -ECONNREFUSED, "cannot connect: connection refused" },
		/* 5 */ { "problems parsing header", 0, -EPROTO, "not an HTTP answer" },
		/* 6 */ { "HS: URI missing", 0, -EPROTO, "not an HTTP answer" },
		/* 7 */
		{ "closed before established", 0, -EPROTO,
		  "the connection closed before a WebSocket handshake" },
		/* 8 */
		{ "Peer hung up", 0, -EPROTO,
		  "the connection closed before a WebSocket handshake" },
		/* 9 */
		{ "HS: Accept hash wrong", 101, -EPROTO,
		  "not a WebSocket handshake (HS: Accept hash wrong)" },
		/* 10 */
		{ "HS: UPGRADE missing", 101, -EPROTO,
		  "not a WebSocket handshake (HS: UPGRADE missing)" },
		/* 11 */ { "HS: OOM", 0, -ENOMEM, "out of memory for the handshake" },
		/* 12 */
		{ "Timed out waiting SSL", 0, -ETIMEDOUT,
		  "no WebSocket handshake in time (Timed out waiting SSL)" },
		/* 13 */ { NULL, 0, -EPROTO, "not a WebSocket handshake (no reason)" },
		/* 14 */ { "", 0, -EPROTO, "not a WebSocket handshake (no reason)" },
		/* 15: a status wins over the text */
		{ "Unable to connect", 500, -EPROTO, "HTTP 500 instead of a WebSocket" },
	};
	char note[NSWS_NOTE_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		note[0] = '\0';
		assert_int_equal(nsws_handshake_error(cases[i].why, cases[i].status, note,
						      sizeof(note)),
				 cases[i].ret);
		assert_string_equal(note, cases[i].note);
	}
	/* no note buffer: the error alone */
	assert_int_equal(nsws_handshake_error("Unable to connect", 0, NULL, 0), -ECONNREFUSED);
	strcpy(note, "x");
	assert_int_equal(nsws_handshake_error("Unable to connect", 0, note, 0), -ECONNREFUSED);
	assert_string_equal(note, "x");
	/* a short buffer is cut, still a string */
	assert_int_equal(nsws_handshake_error(NULL, 404, note, 5), -EPROTO);
	assert_string_equal(note, "HTTP");
}

/* Calls that fail before any thread or socket exists. */
static void test_invalid_calls(void **state)
{
	struct nsws_opts o = { "localhost", 9229, UUID, 0, 0, 0, 0 };
	struct nsws *c = (struct nsws *)0x1;
	char note[NSWS_NOTE_MAX], *msg = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(nsws_open_note(0, &o, &c, note, sizeof(note)), -EINVAL);
	assert_ptr_equal(c, (struct nsws *)0x1);
	assert_string_equal(note, "invalid options");
	o.host = "127.0.0.1";
	assert_int_equal(nsws_open(-1, &o, &c), -EINVAL);
	assert_int_equal(nsws_open(0, &o, NULL), -EINVAL);
	assert_int_equal(nsws_open(0, NULL, &c), -EINVAL);
	assert_ptr_equal(c, (struct nsws *)0x1);
	assert_int_equal(nsws_send(NULL, "x", 1), -EINVAL);
	assert_int_equal(nsws_recv(NULL, 0, &msg, &len), -EINVAL);
	assert_null(msg);
	nsws_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_check),
		cmocka_unit_test(test_host_header),
		cmocka_unit_test(test_handshake_error),
		cmocka_unit_test(test_invalid_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
