// SPDX-License-Identifier: Apache-2.0
/*
 * The pure parts of nshttp (the request check, the why text of an HTTP status) and
 * nshttp_get_all()'s refusals before any request: bad arguments, and a /proc/PID directory
 * without a network namespace. The requests themselves need root, a network namespace and a
 * server: tests/integration (test_go_pprof.sh, test_go_hostile.sh) runs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtimes/nshttp.h"

#include "base/array.h"

#define H10 "1111111111"
#define HOST_47 H10 H10 H10 H10 "1111111"	/* NSHTTP_HOST_MAX - 1 characters */
#define INDEX "/debug/pprof/"
#define LO "127.0.0.1"
#define K64 65536
#define X10 "xxxxxxxxxx"

static void test_req_check(void **state __attribute__((unused)))
{
	static const struct {
		struct nshttp_req r;	/* host, port, path, timeout, connect, body, headers */
		int ret;
	} cases[] = {
		{ { LO, 6060, INDEX, 500, 500, K64, K64 }, 0 },
		{ { "[::1]", 1, "/debug/pprof/heap?gc=1", 1, 0, 1, 1 }, 0 },
		{ { "[fd00::2]", 65535, "/", NSHTTP_TIMEOUT_MAX_MS, NSHTTP_TIMEOUT_MAX_MS,
		    NSHTTP_BODY_MAX_BYTES, NSHTTP_HEADER_MAX_BYTES }, 0 },
		{ { HOST_47, 80, "/%20~!$&'()*+,;=:@", 1000, 999, 10, 10 }, 0 },

		/* Error rows. */
		{ { NULL, 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { "", 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { HOST_47 "1", 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { "localhost", 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { "evil.example/x?", 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { "127.0.0.1 ", 6060, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 0, INDEX, 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, NULL, 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "debug/pprof/", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "/x HTTP/1.1\r\nHost: y", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "/x#frag", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "/\x7f", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, "/\xc3\xa9", 500, 500, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 0, 0, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, -5, 0, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, NSHTTP_TIMEOUT_MAX_MS + 1, 0, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, 501, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, -1, K64, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, 500, 0, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, 500, NSHTTP_BODY_MAX_BYTES + 1, K64 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, 500, K64, 0 }, -EINVAL },
		{ { LO, 6060, INDEX, 500, 500, K64, NSHTTP_HEADER_MAX_BYTES + 1 }, -EINVAL },
	};
	struct nshttp_req r = cases[0].r;
	char host[NSHTTP_HOST_MAX], path[NSHTTP_PATH_LEN_MAX + 2];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(nshttp_req_check(&cases[i].r), cases[i].ret);
	}
	assert_int_equal(nshttp_req_check(NULL), -EINVAL);

	/* A host array without a NUL: not read past its NSHTTP_HOST_MAX bytes (ASan). */
	memset(host, '1', sizeof(host));
	r.host = host;
	assert_int_equal(nshttp_req_check(&r), -EINVAL);
	r.host = "127.0.0.1";

	/* The longest path, and one character more. */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[NSHTTP_PATH_LEN_MAX] = '\0';
	r.path = path;
	assert_int_equal(nshttp_req_check(&r), 0);
	path[NSHTTP_PATH_LEN_MAX] = 'a';
	path[NSHTTP_PATH_LEN_MAX + 1] = '\0';
	assert_int_equal(nshttp_req_check(&r), -EINVAL);
}

static void test_status_why(void **state __attribute__((unused)))
{
	static const struct {
		long status;
		const char *body;
		size_t len;	/* 0: strlen */
		const char *want;
	} cases[] = {
		{ 404, "404 page not found\n", 0, "HTTP 404: 404 page not found" },
		{ 500, "Could not enable CPU profiling: cpu profiling already in use\r\nmore", 0,
		  "HTTP 500: Could not enable CPU profiling: cpu profiling already in use" },
		{ 403, "", 0, "HTTP 403" },
		{ 403, "\n\nsecond line", 0, "HTTP 403" },
		{ 502, "   \r\n", 0, "HTTP 502" },
		{ 418, "  <h1>\x01teapot\xff\"</h1>  ", 0, "HTTP 418: <h1>?teapot?\"</h1>" },
		{ 200, "a\0b", 3, "HTTP 200: a?b" },
		{ 400, "bare\rcarriage return", 0, "HTTP 400: bare?carriage return" },
		/* Cut to 80 characters. */
		{ 414, X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10, 0,
		  "HTTP 414: " X10 X10 X10 X10 X10 X10 X10 X10 },
		{ 301, NULL, 0, "HTTP 301" },
		{ -1, "x", 0, "HTTP -1: x" },
	};
	char why[256];
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		len = cases[i].len ? cases[i].len : cases[i].body ? strlen(cases[i].body) : 0;
		nshttp_status_why(cases[i].status, cases[i].body, len, why, sizeof(why));
		assert_string_equal(why, cases[i].want);
	}
	/* Only @len bytes count; a small buffer cuts; no buffer, nothing written. */
	nshttp_status_why(404, "not found", 3, why, sizeof(why));
	assert_string_equal(why, "HTTP 404: not");
	nshttp_status_why(404, "x", 1, why, 8);
	assert_string_equal(why, "HTTP 40");
	nshttp_status_why(404, "x", 1, NULL, 8);
	why[0] = 'z';
	nshttp_status_why(404, "x", 1, why, 0);
	assert_int_equal(why[0], 'z');
}

static void test_get_all_refused(void **state __attribute__((unused)))
{
	static const struct nshttp_req ok = { "127.0.0.1", 6060, INDEX, 500, 500, 65536, 65536 };
	static const struct nshttp_req bad = { "127.0.0.1", 0, INDEX, 500, 500, 65536, 65536 };
	struct nshttp_req req[NSHTTP_MAX_REQUESTS + 1];
	struct nshttp_res res[2];
	char dir[] = "/tmp/test_nshttp.XXXXXX";
	const struct {
		int fd;		/* -2: the fake /proc/PID */
		const struct nshttp_req *req;
		bool has_res;
		size_t n;
		int ret;
	} cases[] = {
		/* Error rows only: a request that runs needs root and a server. */
		{ -1, req, true, 1, -EINVAL },
		{ -2, NULL, true, 1, -EINVAL },
		{ -2, req, false, 1, -EINVAL },
		{ -2, req, true, 0, -EINVAL },
		{ -2, req, true, NSHTTP_MAX_REQUESTS + 1, -EINVAL },
		{ -2, &bad, true, 1, -EINVAL },
		{ -2, req + 1, true, 2, -EINVAL },	/* the second is bad */
		/* A /proc/PID without ns/net: the process is gone. */
		{ -2, req, true, 2, -ESRCH },
	};
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(req); i++)
		req[i] = ok;
	req[2] = bad;
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(res, 0x5a, sizeof(res));
		assert_int_equal(nshttp_get_all(cases[i].fd == -2 ? fd : cases[i].fd, cases[i].req,
						cases[i].has_res ? res : NULL, cases[i].n, NULL),
				 cases[i].ret);
		/* On failure the results are untouched. */
		assert_int_equal(res[0].err, 0x5a5a5a5a);
		assert_int_equal(res[1].note[0], 0x5a);
	}
	close(fd);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_check),
		cmocka_unit_test(test_status_why),
		cmocka_unit_test(test_get_all_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
