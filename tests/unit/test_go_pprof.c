// SPDX-License-Identifier: Apache-2.0
/*
 * The pure parts of go_pprof (index recognizer, probe order, the why texts, the start time)
 * and go_pprof_find() up to the probe, on a fake /proc tree: its answers and its cache. The
 * probing itself needs root, a network namespace and sockets: it belongs to tests/integration.
 */
#include <arpa/inet.h>
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "runtimes/go/go_pprof.h"
#include "runtimes/nshttp.h"

#include "base/array.h"
#include "tests/unit/fixtures.h"

/* The start of Go 1.19's net/http/pprof index page, as served. */
#define INDEX_PAGE "<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n" \
	"/debug/pprof/<br>\n<br>\nTypes of profiles available:\n<table>\n" \
	"<thead><td>Count</td><td>Profile</td></thead>\n" \
	"<tr><td>2</td><td><a href='allocs?debug=1'>allocs</a></td></tr>\n" \
	"<tr><td>9</td><td><a href='goroutine?debug=1'>goroutine</a></td></tr>\n" \
	"<tr><td>2</td><td><a href='heap?debug=1'>heap</a></td></tr>\n" \
	"</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n"

static void test_is_index(void **state __attribute__((unused)))
{
	static const struct {
		const char *body;
		bool ret;
	} cases[] = {
		{ INDEX_PAGE, true },
		{ "<a href=\"goroutine?debug=1\">goroutine</a><a href=\"heap?debug=1\">heap</a>", true },
		{ "<html><body>Welcome to nginx!</body></html>", false },
		{ "<a href='goroutine?debug=1'>goroutine</a>", false },
		{ "heap?debug=1", false },
		{ "404 page not found\n", false },
		{ "", false },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(go_pprof_is_index(cases[i].body, strlen(cases[i].body)),
				 cases[i].ret);
	}
	assert_false(go_pprof_is_index(NULL, 10));
	/* Only @len bytes count. */
	assert_false(go_pprof_is_index(INDEX_PAGE, 200));
}

static struct procnet_entry mk(bool v6, const char *addr, uint16_t port)
{
	struct procnet_entry e = { .v6 = v6, .port = port, .state = PROCNET_TCP_LISTEN,
				   .inode = 1 };

	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, addr, e.addr), 1);
	return e;
}

struct want_endpoint {
	uint16_t port;
	const char *host;	/* NULL: not checked */
};

/* The @n candidates in @out are @want, in order. */
static void expect_candidates(const struct go_endpoint *out, const struct want_endpoint *want,
			      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		print_message("candidate %zu\n", i);
		assert_int_equal(out[i].port, want[i].port);
		if (want[i].host)
			assert_string_equal(out[i].host, want[i].host);
	}
}

static void test_candidates(void **state __attribute__((unused)))
{
	static const struct want_endpoint first[] = {
		{ 6060, "127.0.0.1" }, { 2024, NULL }, { 8080, NULL }, { 9000, "[::1]" },
	};
	static const struct want_endpoint per_port[] = {
		{ 7000, "[::1]" },     { 7001, "127.0.0.1" }, { 7002, "10.1.2.3" },
		{ 7003, "[fd00::2]" }, { 7004, "127.0.0.1" }, { 7005, "127.0.0.1" },
	};
	struct procnet_entry e[24];
	struct go_endpoint out[GO_PPROF_MAX_PROBES];
	size_t n = 0, total, i;

	/* 6060 first, then ascending; wildcards reached on loopback. */
	e[n++] = mk(false, "127.0.0.1", 8080);
	e[n++] = mk(true, "::", 9000);
	e[n++] = mk(false, "0.0.0.0", 6060);
	e[n++] = mk(false, "127.0.0.1", 2024);
	assert_int_equal(go_pprof_candidates(e, n, out, 16, &total), ARRAY_SIZE(first));
	assert_int_equal(total, 4);
	expect_candidates(out, first, ARRAY_SIZE(first));

	/* One endpoint per port: loopback over wildcard over another address; tcp and tcp6
	 * wildcards of the same port give the first. */
	n = 0;
	e[n++] = mk(false, "10.1.2.3", 7000);
	e[n++] = mk(false, "0.0.0.0", 7000);
	e[n++] = mk(true, "::1", 7000);
	e[n++] = mk(false, "0.0.0.0", 7001);
	e[n++] = mk(true, "::", 7001);
	e[n++] = mk(false, "10.1.2.3", 7002);
	e[n++] = mk(true, "fd00::2", 7003);
	e[n++] = mk(true, "::ffff:127.0.0.1", 7004);
	e[n++] = mk(true, "::ffff:0.0.0.0", 7005);
	e[n++] = mk(true, "fe80::1", 7006);		/* link-local: left out */
	e[n++] = mk(true, "fe80::1", 7002);		/* ... and never preferred */
	assert_int_equal(go_pprof_candidates(e, n, out, 16, &total), ARRAY_SIZE(per_port));
	assert_int_equal(total, 6);
	expect_candidates(out, per_port, ARRAY_SIZE(per_port));

	/* Bounded: 20 ports, 16 probed, 6060 among them first. */
	n = 0;
	for (i = 0; i < 19; i++)
		e[n++] = mk(false, "127.0.0.1", (uint16_t)(9000 - i));
	e[n++] = mk(false, "127.0.0.1", 6060);
	assert_int_equal(go_pprof_candidates(e, n, out, GO_PPROF_MAX_PROBES, &total), 16);
	assert_int_equal(total, 20);
	assert_int_equal(out[0].port, 6060);
	assert_int_equal(out[1].port, 8982);
	assert_int_equal(out[15].port, 8996);

	/* Nothing reachable; nothing at all. */
	e[0] = mk(true, "fe80::1", 6060);
	assert_int_equal(go_pprof_candidates(e, 1, out, 16, &total), 0);
	assert_int_equal(total, 0);
	assert_int_equal(go_pprof_candidates(NULL, 0, out, 16, &total), 0);
	assert_int_equal(go_pprof_candidates(e, 0, out, 16, NULL), 0);
}

static void test_why_none(void **state __attribute__((unused)))
{
	static const uint16_t ports[] = { 8080, 9000, 9100 };
	static const char *const notes[] = { "HTTP 404", "no answer within 500 ms",
					     "not an HTTP answer (Received HTTP/0.9 when not allowed)" };
	static const struct {
		size_t n, not_probed, size;
		const char *want;
	} cases[] = {
		{ 0, 0, 256, "it listens on no TCP port" },
		{ 1, 0, 256, "none of its TCP ports (8080: HTTP 404) serves /debug/pprof/" },
		{ 2, 0, 256, "none of its TCP ports (8080: HTTP 404; 9000: no answer within 500 ms) "
			    "serves /debug/pprof/" },
		{ 2, 4, 256, "none of its TCP ports (8080: HTTP 404; 9000: no answer within 500 ms; "
			    "4 more not probed) serves /debug/pprof/" },
		/* Too long for @size: items become a count. */
		{ 3, 0, 100, "none of its TCP ports (8080: HTTP 404; 9000: no answer within 500 ms; "
			    "1 more) serves /debug/pprof/" },
		{ 3, 0, 70, "none of its TCP ports (8080: HTTP 404; 2 more) serves /debug/pprof/" },
		{ 3, 0, 60, "none of its TCP ports (3 probed) serves /debug/pprof/" },
		{ 3, 2, 70, "none of its TCP ports (3 probed; 2 more not probed) serves /debug/ppr" },
		{ 3, 0, 10, "none of i" },
	};
	static const uint16_t ports4[] = { 9000, 9001, 9002, 9003 };
	static const char *const notes4[] = { "no answer within 500 ms", "HTTP 404",
					      "no answer within 500 ms", "no answer within 500 ms" };
	char why[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(why, 'x', sizeof(why));
		go_pprof_why_none(ports, notes, cases[i].n, cases[i].not_probed, why,
				  cases[i].size);
		assert_string_equal(why, cases[i].want);
	}
	/* Ports with the same note are listed together. */
	go_pprof_why_none(ports4, notes4, 4, 0, why, sizeof(why));
	assert_string_equal(why, "none of its TCP ports (9000, 9002, 9003: no answer within 500 ms; "
				 "9001: HTTP 404) serves /debug/pprof/");
	go_pprof_why_none(ports4, NULL, 2, 0, why, sizeof(why));
	assert_string_equal(why, "none of its TCP ports (9000, 9001: no answer) serves /debug/pprof/");
	go_pprof_why_none(ports, notes, 1, 0, NULL, 0);	/* no buffer: nothing written */
}

/* go_pprof_http_why() is nshttp_status_why() (tests/unit/test_nshttp.c has its cases). */
static void test_http_why(void **state __attribute__((unused)))
{
	char why[256], want[256];

	go_pprof_http_why(404, "404 page not found\n", 19, why, sizeof(why));
	assert_string_equal(why, "HTTP 404: 404 page not found");
	nshttp_status_why(418, "  <h1>\x01tea", 10, want, sizeof(want));
	go_pprof_http_why(418, "  <h1>\x01tea", 10, why, sizeof(why));
	assert_string_equal(why, want);
	go_pprof_http_why(404, "x", 1, why, 8);
	assert_string_equal(why, "HTTP 40");
}

static void test_starttime(void **state __attribute__((unused)))
{
	static const struct {
		const char *stat;
		int ret;
		uint64_t start;
	} cases[] = {
		{ "25536 (prog) S 25534 25534 25534 0 -1 4194560 1290 0 0 0 2 4 0 0 20 0 6 0 "
		  "1297913 1263144960 2156 18446744073709551615 4194304 5384161 140734 0 0 0 0 0 "
		  "2143420159 0 0 0 17 1 0 0 0 0 0\n", 0, 1297913 },
		/* A command name with spaces and parentheses. */
		{ "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n", 0, 42 },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615", 0,
		  UINT64_MAX },
		/* Error rows. */
		{ "", -EINVAL },
		{ "7 x R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n", -EINVAL },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n", -EINVAL },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ", -EINVAL },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4x2 0\n", -EINVAL },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -42 0\n", -EINVAL },
		{ "7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551616", -EINVAL },
		{ "7 (x)  R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n", -EINVAL },
	};
	uint64_t v;
	size_t i, len;
	char *self;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		v = 7;
		assert_int_equal(go_pprof_parse_starttime(cases[i].stat, strlen(cases[i].stat), &v),
				 cases[i].ret);
		assert_true(v == (cases[i].ret ? 7 : cases[i].start));
	}
	assert_int_equal(read_file_bounded(AT_FDCWD, "/proc/self/stat", 4096, &self, &len), 0);
	assert_int_equal(go_pprof_parse_starttime(self, len, &v), 0);
	assert_true(v > 0);
	free(self);
	assert_int_equal(go_pprof_parse_starttime(NULL, 0, &v), -EINVAL);
}

/* --- go_pprof_find() on a fake /proc -------------------------------------------------------- */

#define TCP_HEADER "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
#define TCP6_HEADER "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
/* 127.0.0.1:6060 listening, inode 222; an established connection of inode 111. */
#define LISTEN_222 "   0: 0100007F:17AC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 000000007c325b04 100 0 0 10 0\n"
#define LISTEN_111 "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 000000002a0345ea 100 0 0 10 0\n"
#define ESTAB_111 "   1: 0100007F:1F90 0100007F:E384 01 00000000:00000000 00:00000000 00000000     0        0 111 1 00000000b2eb19db 20 0 0 10 -1\n"

static char root[PATH_MAX];

static void put_file(int pid, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void put_stat(int pid, unsigned long start)
{
	char stat[256];

	snprintf(stat, sizeof(stat), "%d (fake go) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %lu "
		 "0 0\n", pid, pid, pid, start);
	put_file(pid, "stat", stat);
}

/* /proc/PID with a stat, fd/0 -> /dev/null, fd/3 -> socket:[111], and net/tcp{,6}. */
static void make_proc(int pid, unsigned long start, const char *tcp)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/fd", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/net", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/fd/0", root, pid);
	assert_int_equal(symlink("/dev/null", path), 0);
	snprintf(path, sizeof(path), "%s/%d/fd/3", root, pid);
	assert_int_equal(symlink("socket:[111]", path), 0);
	snprintf(path, sizeof(path), "%s/%d/fd/4", root, pid);
	assert_int_equal(symlink("socket:[11x]", path), 0);
	put_stat(pid, start);
	put_file(pid, "net/tcp", tcp);
	put_file(pid, "net/tcp6", TCP6_HEADER);
}

static int setup_root(void **state __attribute__((unused)))
{
	snprintf(root, sizeof(root), "/tmp/test_go_pprof.XXXXXX");
	assert_non_null(mkdtemp(root));
	go_pprof_cache_clear();
	return 0;
}

static int teardown_root(void **state __attribute__((unused)))
{
	go_pprof_cache_clear();
	return fx_rm_rf(root);
}

static void test_find_fake_proc(void **state __attribute__((unused)))
{
	struct go_endpoint ep = { .port = 1, .host = "untouched" };
	char why[256];

	/* Its socket 111 is a connection; the listener 222 is another process's (a sidecar in
	 * the same network namespace). */
	make_proc(100, 1000, TCP_HEADER LISTEN_222 ESTAB_111);
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "it listens on no TCP port");
	assert_int_equal(ep.port, 1);

	/* The miss is remembered: a listener on 111 appearing is not seen yet. */
	put_file(100, "net/tcp", TCP_HEADER LISTEN_222 LISTEN_111);
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "it listens on no TCP port");

	/* A restarted process (another start time) is looked at again: now it listens, and the
	 * probe needs its network namespace, which a fake /proc does not have. Not cached. */
	put_stat(100, 2000);
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -ESRCH);
	assert_string_equal(why, "cannot reach its network namespace (No such process)");
	put_file(100, "net/tcp", TCP_HEADER LISTEN_222);
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "it listens on no TCP port");
	assert_int_equal(ep.port, 1);

	/* Cleared: looked at again. */
	put_file(100, "net/tcp", "garbage\n");
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -ENOENT);
	go_pprof_cache_clear();
	assert_int_equal(go_pprof_find(root, 100, &ep, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "cannot read its TCP sockets (Invalid argument)");

	/* No tcp6 (a kernel without IPv6) is fine; no fd directory means the process is gone. */
	make_proc(101, 1000, TCP_HEADER);
	put_file(101, "net/tcp6", "");
	assert_int_equal(go_pprof_find(root, 101, &ep, why, sizeof(why)), -EINVAL);
	go_pprof_cache_clear();
	make_proc(102, 1000, TCP_HEADER LISTEN_222);
	{
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/102/net/tcp6", root);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(go_pprof_find(root, 102, &ep, why, sizeof(why)), -ENOENT);
		snprintf(path, sizeof(path), "rm -rf '%s/102/fd'", root);
		assert_int_equal(system(path), 0);
		go_pprof_cache_clear();
		assert_int_equal(go_pprof_find(root, 102, &ep, why, sizeof(why)), -ESRCH);
		assert_string_equal(why, "cannot read its file descriptors (No such process)");
		snprintf(path, sizeof(path), "%s/102/stat", root);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(go_pprof_find(root, 102, &ep, why, sizeof(why)), -ESRCH);
	}

	/* Gone, invalid. */
	assert_int_equal(go_pprof_find(root, 999, &ep, why, sizeof(why)), -ESRCH);
	assert_string_equal(why, "the process is gone");
	assert_int_equal(go_pprof_find(root, 0, &ep, why, sizeof(why)), -EINVAL);
	assert_int_equal(go_pprof_find(root, 100, NULL, why, sizeof(why)), -EINVAL);
	assert_int_equal(go_pprof_find(root, 999, &ep, NULL, 0), -ESRCH);
	assert_int_equal(ep.port, 1);
	assert_string_equal(ep.host, "untouched");
}

static void test_cache_lru(void **state __attribute__((unused)))
{
	struct go_endpoint ep;
	char why[256];
	int pid;

	go_pprof_cache_clear();
	for (pid = 1000; pid < 1000 + GO_PPROF_CACHE_ENTRIES; pid++) {
		make_proc(pid, 5, TCP_HEADER);
		assert_int_equal(go_pprof_find(root, pid, &ep, why, sizeof(why)), -ENOENT);
	}
	/* 1000 used again; a new process evicts the least recently used, 1001. */
	assert_int_equal(go_pprof_find(root, 1000, &ep, why, sizeof(why)), -ENOENT);
	make_proc(2000, 5, TCP_HEADER);
	assert_int_equal(go_pprof_find(root, 2000, &ep, why, sizeof(why)), -ENOENT);
	put_file(1000, "net/tcp", "broken\n");
	put_file(1001, "net/tcp", "broken\n");
	put_file(1002, "net/tcp", "broken\n");
	assert_int_equal(go_pprof_find(root, 1000, &ep, why, sizeof(why)), -ENOENT);
	assert_int_equal(go_pprof_find(root, 1001, &ep, why, sizeof(why)), -EINVAL);
	assert_int_equal(go_pprof_find(root, 1002, &ep, why, sizeof(why)), -ENOENT);
}

static void test_get_invalid(void **state __attribute__((unused)))
{
	static const struct go_endpoint ok = { .port = 6060, .host = "127.0.0.1" };
	static const struct go_endpoint no_port = { .port = 0, .host = "127.0.0.1" };
	static const struct go_endpoint bad_host = { .port = 6060, .host = "evil.example/x?" };
	static const struct go_endpoint empty_host = { .port = 6060, .host = "" };
	static const struct {
		int pid;
		const struct go_endpoint *ep;
		const char *path;
		int timeout_ms;
		size_t max;
	} cases[] = {
		{ 0, &ok, "/debug/pprof/heap", 1000, 1024 },
		{ 1, NULL, "/debug/pprof/heap", 1000, 1024 },
		{ 1, &no_port, "/debug/pprof/heap", 1000, 1024 },
		{ 1, &bad_host, "/debug/pprof/heap", 1000, 1024 },
		{ 1, &empty_host, "/debug/pprof/heap", 1000, 1024 },
		{ 1, &ok, NULL, 1000, 1024 },
		{ 1, &ok, "debug/pprof/heap", 1000, 1024 },
		{ 1, &ok, "/debug/pprof/heap HTTP/1.1\r\nHost: x", 1000, 1024 },
		{ 1, &ok, "/debug/pprof/heap#frag", 1000, 1024 },
		{ 1, &ok, "/debug/pprof/\x7f", 1000, 1024 },
		{ 1, &ok, "/debug/pprof/heap", 0, 1024 },
		{ 1, &ok, "/debug/pprof/heap", -5, 1024 },
		{ 1, &ok, "/debug/pprof/heap", 1000, 0 },
		{ 1, &ok, "/debug/pprof/heap", 1000, (size_t)4 << 30 },
	};
	char why[64], *body = (char *)"untouched";
	size_t i, len = 7;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		why[0] = '\0';
		assert_int_equal(go_pprof_get(root, cases[i].pid, cases[i].ep, cases[i].path,
					      cases[i].timeout_ms, cases[i].max, &body, &len, why,
					      sizeof(why)),
				 -EINVAL);
		assert_string_equal(why, "invalid request");
		assert_string_equal(body, "untouched");
		assert_int_equal(len, 7);
	}
	assert_int_equal(go_pprof_get(root, 1, &ok, "/", 1000, 10, NULL, &len, why, sizeof(why)),
			 -EINVAL);
	/* Valid, but the process does not exist. */
	assert_int_equal(go_pprof_get(root, 999, &ok, "/debug/pprof/heap", 1000, 10, &body, &len,
				      why, sizeof(why)),
			 -ESRCH);
	assert_string_equal(why, "the process is gone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_index),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_why_none),
		cmocka_unit_test(test_http_why),
		cmocka_unit_test(test_starttime),
		cmocka_unit_test(test_find_fake_proc),
		cmocka_unit_test(test_cache_lru),
		cmocka_unit_test(test_get_invalid),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_root);
}
