// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/go/goroutines.h"

#include "base/array.h"

/*
 * Real text: /debug/pprof/goroutine?debug=2 of a Go 1.19.8 program (net/http/pprof on
 * 127.0.0.1:6060, goroutines blocked for 3 minutes in a channel receive, a select {} locked to
 * its thread, a sync.Mutex, an inlined method), some goroutines cut out.
 */
static const char real_dump[] =
	"goroutine 9 [running]:\n"
	"runtime/pprof.writeGoroutineStacks({0x75c480, 0xc000068000})\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:692 +0x70\n"
	"runtime/pprof.writeGoroutine({0x75c480?, 0xc000068000?}, 0x0?)\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:681 +0x2b\n"
	"runtime/pprof.(*Profile).WriteTo(0x6bd520?, {0x75c480?, 0xc000068000?}, 0xc?)\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:330 +0x14b\n"
	"net/http/pprof.handler.ServeHTTP({0xc0000ba221, 0x9}, {0x75e3b8, 0xc000068000}, 0x2e302e302e373231?)\n"
	"\t/usr/lib/go-1.19/src/net/http/pprof/pprof.go:253 +0x4a5\n"
	"net/http/pprof.Index({0x75e3b8?, 0xc000068000}, 0xc000104500)\n"
	"\t/usr/lib/go-1.19/src/net/http/pprof/pprof.go:371 +0x13e\n"
	"net/http.HandlerFunc.ServeHTTP(0xc0001c5af0?, {0x75e3b8?, 0xc000068000?}, 0x0?)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2109 +0x2f\n"
	"net/http.(*ServeMux).ServeHTTP(0xc0000ba22b?, {0x75e3b8, 0xc000068000}, 0xc000104500)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2487 +0x149\n"
	"net/http.serverHandler.ServeHTTP({0xc000096db0?}, {0x75e3b8, 0xc000068000}, 0xc000104500)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2947 +0x30c\n"
	"net/http.(*conn).serve(0xc0000aa280, {0x75e880, 0xc0000973e0})\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:1991 +0x607\n"
	"created by net/http.(*Server).Serve\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:3102 +0x4db\n"
	"\n"
	"goroutine 1 [IO wait]:\n"
	"internal/poll.runtime_pollWait(0x7f672fa2c098, 0x72)\n"
	"\t/usr/lib/go-1.19/src/runtime/netpoll.go:305 +0x89\n"
	"internal/poll.(*pollDesc).wait(0xc0000fed00?, 0x6?, 0x0)\n"
	"\t/usr/lib/go-1.19/src/internal/poll/fd_poll_runtime.go:84 +0x32\n"
	"internal/poll.(*pollDesc).waitRead(...)\n"
	"\t/usr/lib/go-1.19/src/internal/poll/fd_poll_runtime.go:89\n"
	"internal/poll.(*FD).Accept(0xc0000fed00)\n"
	"\t/usr/lib/go-1.19/src/internal/poll/fd_unix.go:614 +0x234\n"
	"net.(*netFD).accept(0xc0000fed00)\n"
	"\t/usr/lib/go-1.19/src/net/fd_unix.go:172 +0x35\n"
	"net.(*TCPListener).accept(0xc0000a0108)\n"
	"\t/usr/lib/go-1.19/src/net/tcpsock_posix.go:142 +0x28\n"
	"net.(*TCPListener).Accept(0xc0000a0108)\n"
	"\t/usr/lib/go-1.19/src/net/tcpsock.go:288 +0x3d\n"
	"net/http.(*Server).Serve(0xc00011a000, {0x75e208, 0xc0000a0108})\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:3070 +0x385\n"
	"net/http.(*Server).ListenAndServe(0xc00011a000)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2999 +0x7d\n"
	"net/http.ListenAndServe(...)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:3255\n"
	"main.main()\n"
	"\t/tmp/gowork/main.go:52 +0x226\n"
	"\n"
	"goroutine 20 [chan receive, 3 minutes]:\n"
	"main.(*T).run(0x0?, 0x1)\n"
	"\t/tmp/gowork/main.go:16 +0x2f\n"
	"main.(*T).inl(...)\n"
	"\t/tmp/gowork/main.go:18\n"
	"main.worker(0x0?, 0x0?)\n"
	"\t/tmp/gowork/main.go:22 +0x32\n"
	"created by main.main\n"
	"\t/tmp/gowork/main.go:43 +0xea\n"
	"\n"
	"goroutine 22 [select (no cases), 3 minutes, locked to thread]:\n"
	"main.locked()\n"
	"\t/tmp/gowork/main.go:34 +0x1c\n"
	"created by main.main\n"
	"\t/tmp/gowork/main.go:45 +0x136\n"
	"\n"
	"goroutine 23 [semacquire, 3 minutes]:\n"
	"sync.runtime_SemacquireMutex(0x0?, 0x0?, 0x0?)\n"
	"\t/usr/lib/go-1.19/src/runtime/sema.go:77 +0x25\n"
	"sync.(*Mutex).lockSlow(0x924ac8)\n"
	"\t/usr/lib/go-1.19/src/sync/mutex.go:171 +0x165\n"
	"sync.(*Mutex).Lock(...)\n"
	"\t/usr/lib/go-1.19/src/sync/mutex.go:90\n"
	"main.main.func1()\n"
	"\t/tmp/gowork/main.go:47 +0x39\n"
	"created by main.main\n"
	"\t/tmp/gowork/main.go:47 +0x168\n"
	"\n"
	"goroutine 27 [runnable]:\n"
	"net/http.(*connReader).startBackgroundRead.func2()\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:674\n"
	"runtime.goexit()\n"
	"\t/usr/lib/go-1.19/src/runtime/asm_amd64.s:1594 +0x1\n"
	"created by net/http.(*connReader).startBackgroundRead\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:674 +0xca\n"
	"\n";

/* The same program under GODEBUG=tracebackancestors=2: "[originating from goroutine N]:". */
static const char real_ancestors[] =
	"goroutine 5 [running]:\n"
	"runtime/pprof.writeGoroutineStacks({0x75c480, 0xc00018a000})\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:692 +0x70\n"
	"runtime/pprof.writeGoroutine({0x75c480?, 0xc00018a000?}, 0xc000196000?)\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:681 +0x2b\n"
	"runtime/pprof.(*Profile).WriteTo(0x6bd520?, {0x75c480?, 0xc00018a000?}, 0xc?)\n"
	"\t/usr/lib/go-1.19/src/runtime/pprof/pprof.go:330 +0x14b\n"
	"net/http/pprof.handler.ServeHTTP({0xc00001a1c1, 0x9}, {0x75e3b8, 0xc00018a000}, 0x2e302e302e373231?)\n"
	"\t/usr/lib/go-1.19/src/net/http/pprof/pprof.go:253 +0x4a5\n"
	"net/http/pprof.Index({0x75e3b8?, 0xc00018a000}, 0xc000076300)\n"
	"\t/usr/lib/go-1.19/src/net/http/pprof/pprof.go:371 +0x13e\n"
	"net/http.HandlerFunc.ServeHTTP(0xc0000afaf0?, {0x75e3b8?, 0xc00018a000?}, 0x0?)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2109 +0x2f\n"
	"net/http.(*ServeMux).ServeHTTP(0xc00001a1cb?, {0x75e3b8, 0xc00018a000}, 0xc000076300)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2487 +0x149\n"
	"net/http.serverHandler.ServeHTTP({0xc000050180?}, {0x75e3b8, 0xc00018a000}, 0xc000076300)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2947 +0x30c\n"
	"net/http.(*conn).serve(0xc0000020a0, {0x75e880, 0xc00008d530})\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:1991 +0x607\n"
	"created by net/http.(*Server).Serve\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:3102 +0x4db\n"
	"[originating from goroutine 1]:\n"
	"net/http.(*Server).Serve(...)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:3102 +0x4db\n"
	"net/http.(*Server).ListenAndServe(...)\n"
	"\t/usr/lib/go-1.19/src/net/http/server.go:2999 +0x7d\n"
	"main.main(...)\n"
	"\t/tmp/gowork/main.go:52 +0x226\n"
	"main.main(...)\n"
	"\t/tmp/gowork/main.go:52 +0x1d2\n"
	"\n"
	"goroutine 18 [chan receive]:\n"
	"main.(*T).run(0x0?, 0x1)\n"
	"\t/tmp/gowork/main.go:16 +0x2f\n"
	"main.(*T).inl(...)\n"
	"\t/tmp/gowork/main.go:18\n"
	"main.worker(0x0?, 0x0?)\n"
	"\t/tmp/gowork/main.go:22 +0x32\n"
	"created by main.main\n"
	"\t/tmp/gowork/main.go:43 +0xea\n"
	"[originating from goroutine 1]:\n"
	"main.main(...)\n"
	"\t/tmp/gowork/main.go:44 +0xea\n";

struct frame_want {
	size_t idx;
	const char *func, *file;
	uint32_t line;
};

struct g_want {
	uint64_t id;
	const char *state;
	int32_t wait;
	bool locked;
	uint32_t nframes;
	const char *created_by;
	struct frame_want f[3];	/* checked where func is set */
};

static void check_goroutine(const struct go_goroutine *g, const struct g_want *w)
{
	size_t k;

	print_message("  goroutine %llu\n", (unsigned long long)w->id);
	assert_true(g->id == w->id);
	assert_string_equal(g->state, w->state);
	assert_int_equal(g->wait_minutes, w->wait);
	assert_int_equal(g->locked_to_thread, w->locked);
	assert_int_equal(g->nframes, w->nframes);
	if (w->created_by)
		assert_string_equal(g->created_by, w->created_by);
	else
		assert_null(g->created_by);
	for (k = 0; k < ARRAY_SIZE(w->f) && w->f[k].func; k++) {
		assert_true(w->f[k].idx < g->nframes);
		assert_string_equal(g->frames[w->f[k].idx].func, w->f[k].func);
		assert_string_equal(g->frames[w->f[k].idx].file, w->f[k].file);
		assert_int_equal(g->frames[w->f[k].idx].line, w->f[k].line);
	}
}

static void test_real_dump(void **state __attribute__((unused)))
{
	static const struct g_want want[] = {
		{ 9, "running", -1, false, 9, "net/http.(*Server).Serve",
		  { { 0, "runtime/pprof.writeGoroutineStacks",
		      "/usr/lib/go-1.19/src/runtime/pprof/pprof.go", 692 },
		    { 8, "net/http.(*conn).serve", "/usr/lib/go-1.19/src/net/http/server.go",
		      1991 } } },
		{ 1, "IO wait", -1, false, 11, NULL,
		  { { 2, "internal/poll.(*pollDesc).waitRead",
		      "/usr/lib/go-1.19/src/internal/poll/fd_poll_runtime.go", 89 },
		    { 10, "main.main", "/tmp/gowork/main.go", 52 } } },
		{ 20, "chan receive", 3, false, 3, "main.main",
		  { { 0, "main.(*T).run", "/tmp/gowork/main.go", 16 },
		    { 1, "main.(*T).inl", "/tmp/gowork/main.go", 18 },
		    { 2, "main.worker", "/tmp/gowork/main.go", 22 } } },
		{ 22, "select (no cases)", 3, true, 1, "main.main",
		  { { 0, "main.locked", "/tmp/gowork/main.go", 34 } } },
		{ 23, "semacquire", 3, false, 4, "main.main",
		  { { 1, "sync.(*Mutex).lockSlow", "/usr/lib/go-1.19/src/sync/mutex.go", 171 },
		    { 2, "sync.(*Mutex).Lock", "/usr/lib/go-1.19/src/sync/mutex.go", 90 },
		    { 3, "main.main.func1", "/tmp/gowork/main.go", 47 } } },
		{ 27, "runnable", -1, false, 2, "net/http.(*connReader).startBackgroundRead",
		  { { 0, "net/http.(*connReader).startBackgroundRead.func2",
		      "/usr/lib/go-1.19/src/net/http/server.go", 674 },
		    { 1, "runtime.goexit", "/usr/lib/go-1.19/src/runtime/asm_amd64.s", 1594 } } },
	};
	struct go_goroutines *gs = NULL;
	size_t i;

	assert_int_equal(go_goroutines_parse(real_dump, sizeof(real_dump) - 1, &gs), 0);
	assert_int_equal(gs->n, ARRAY_SIZE(want));
	for (i = 0; i < gs->n; i++)
		check_goroutine(&gs->g[i], &want[i]);
	assert_int_equal(gs->lines_skipped, 0);
	assert_int_equal(gs->frames_dropped, 0);
	assert_int_equal(gs->goroutines_dropped, 0);
	assert_false(gs->truncated);
	go_goroutines_free(gs);

	/* Ancestor tracebacks are not the goroutine's own frames. */
	assert_int_equal(go_goroutines_parse(real_ancestors, sizeof(real_ancestors) - 1, &gs), 0);
	assert_int_equal(gs->n, 2);
	assert_int_equal(gs->g[0].nframes, 9);
	assert_string_equal(gs->g[0].frames[8].func, "net/http.(*conn).serve");
	assert_string_equal(gs->g[0].created_by, "net/http.(*Server).Serve");
	assert_int_equal(gs->g[1].nframes, 3);
	assert_string_equal(gs->g[1].created_by, "main.main");
	assert_int_equal(gs->lines_skipped, 0);
	go_goroutines_free(gs);

	/* Every prefix of the real dump parses (a cut answer), never reading past its end. */
	for (i = 1; i < sizeof(real_dump) - 1; i++) {
		char *cut = malloc(i);

		assert_non_null(cut);
		memcpy(cut, real_dump, i);
		assert_int_equal(go_goroutines_parse(cut, i, &gs), i < 22 ? -EINVAL : 0);
		if (gs && i >= 22) {
			assert_true(gs->n >= 1 && gs->n <= 6);
			assert_true(gs->truncated || real_dump[i - 1] == '\n');
			go_goroutines_free(gs);
		}
		gs = NULL;
		free(cut);
	}
}

struct case_want {
	const char *text;
	int ret;
	size_t n;
	uint64_t id;		/* of the first goroutine */
	const char *state;
	int32_t wait;
	bool locked, elided, truncated;
	uint32_t nframes, frames_dropped;
	const char *leaf, *leaf_file;
	uint32_t leaf_line;
	const char *created_by;
	uint64_t created_in;
	size_t skipped;
};

static void test_cases(void **state __attribute__((unused)))
{
	static const struct case_want cases[] = {
		/* Go 1.21+: "created by ... in goroutine N" */
		{ "goroutine 6 [chan receive, 2 minutes]:\n"
		  "main.worker(0xc00001c0c0, 0x5)\n\t/src/x.go:20 +0x30\n"
		  "created by main.main in goroutine 1\n\t/src/x.go:9 +0x40\n",
		  0, 1, 6, "chan receive", 2, false, false, false, 1, 0,
		  "main.worker", "/src/x.go", 20, "main.main", 1, 0 },
		{ "goroutine 7 [IO wait]:\nmain.f()\n\t/x.go:1 +0x1\n"
		  "created by net/http.(*Server).Serve in goroutine 1\n\t/s.go:3 +0x2\n",
		  0, 1, 7, "IO wait", -1, false, false, false, 1, 0,
		  "main.f", "/x.go", 1, "net/http.(*Server).Serve", 1, 0 },
		/* A crash-style header with gp= m= mp=, a scan state, lock and minutes. */
		{ "goroutine 1 gp=0xc000002380 m=0 mp=0x5a8f00 [running (scan), 12 minutes, "
		  "locked to thread]:\nmain.main()\n\t/x.go:5 +0x1d fp=0xc000 sp=0xc000 pc=0x4\n",
		  0, 1, 1, "running", 12, true, false, false, 1, 0, "main.main", "/x.go", 5, NULL },
		/* Frames elided by the dump itself: Go < 1.21 and Go 1.21+. */
		{ "goroutine 2 [running]:\nmain.r(...)\n\t/x.go:3\n...additional frames elided...\n"
		  "created by main.main\n\t/x.go:9 +0x4\n",
		  0, 1, 2, "running", -1, false, true, false, 1, 0, "main.r", "/x.go", 3,
		  "main.main" },
		{ "goroutine 3 [running]:\nmain.r(0x1)\n\t/x.go:3 +0x2\n...12 frames elided...\n"
		  "main.r(0x14)\n\t/x.go:3 +0x2\n",
		  0, 1, 3, "running", -1, false, true, false, 2, 12, "main.r", "/x.go", 3, NULL },
		/* Names with brackets and parentheses; panic frames; closures. */
		{ "goroutine 4 [running]:\nmain.Map[...]({0xc000010000, 0x3, 0x3}, 0x4b2f50)\n"
		  "\t/x.go:7 +0x9\npanic({0x4a7e60, 0x52f1c0})\n\t/go/src/runtime/panic.go:838 +0x207\n",
		  0, 1, 4, "running", -1, false, false, false, 2, 0, "main.Map[...]", "/x.go", 7 },
		/* Running on another thread: no stack. */
		{ "goroutine 5 [running]:\n\tgoroutine running on other thread; stack unavailable\n"
		  "created by main.main\n\t/x.go:1 +0x1\n",
		  0, 1, 5, "running", -1, false, false, false, 0, 0, NULL, NULL, 0, "main.main" },
		/* CRLF line ends, leading blank lines, a path with a space and a colon. */
		{ "\r\n\ngoroutine 8 [sleep]:\r\ntime.Sleep(0x3b9aca00)\r\n"
		  "\tC:/Program Files/Go/src/runtime/time.go:195 +0x135\r\n",
		  0, 1, 8, "sleep", -1, false, false, false, 1, 0, "time.Sleep",
		  "C:/Program Files/Go/src/runtime/time.go", 195 },
		/* Two goroutines without the blank line between them. */
		{ "goroutine 9 [select]:\nmain.a()\n\t/x.go:1 +0x1\ngoroutine 10 [select]:\n"
		  "main.b()\n\t/x.go:2 +0x1\n",
		  0, 2, 9, "select", -1, false, false, false, 1, 0, "main.a", "/x.go", 1 },
		/* Truncated: inside a file line, after a function line, inside a function line. */
		{ "goroutine 11 [running]:\nmain.a()\n\t/x.go:1 +0x1\nmain.b()\n\t/x.g",
		  0, 1, 11, "running", -1, false, false, true, 2, 0, "main.a", "/x.go", 1, NULL, 0,
		  1 },
		{ "goroutine 12 [running]:\nmain.a()\n\t/x.go:1 +0x1\nmain.b()\n",
		  0, 1, 12, "running", -1, false, false, true, 2, 0, "main.a", "/x.go", 1 },
		{ "goroutine 13 [running]:\nmain.a()\n\t/x.go:1 +0x1\n\ngoroutine 14 [runn",
		  0, 1, 13, "running", -1, false, false, true, 1, 0, "main.a", "/x.go", 1, NULL, 0,
		  1 },
		/* Noise inside a block is counted, not fatal; a function line missing its file
		 * line is dropped. */
		{ "goroutine 15 [running]:\n<b>noise</b>\nmain.a()\nmain.b()\n\t/x.go:2 +0x1\n"
		  "\tstray file line:3\n\n<html>\n",
		  0, 1, 15, "running", -1, false, false, false, 1, 0, "main.b", "/x.go", 2, NULL, 0,
		  4 },
		/* Unknown header parts are ignored; a bad minutes value too. */
		{ "goroutine 16 [chan send, synctest group 3, 1x minutes]:\nmain.a()\n\t/x.go:1\n",
		  0, 1, 16, "chan send", -1, false, false, false, 1, 0, "main.a", "/x.go", 1 },
		/* A function line cut off by the blank line; an empty "created by". */
		{ "goroutine 17 [running]:\nmain.a()\n\t/x.go:1\nmain.b()\n\ncreated by \n",
		  0, 1, 17, "running", -1, false, false, false, 1, 0, "main.a", "/x.go", 1, NULL, 0,
		  2 },
		{ "goroutine 18446744073709551615 [idle]:\n",
		  0, 1, UINT64_MAX, "idle", -1, false, false, false, 0, 0 },

		/* Error rows: not a goroutine dump. */
		{ "", -EINVAL },
		{ "\n\n", -EINVAL },
		{ "<html>\n<head>\n<title>/debug/pprof/</title>\n", -EINVAL },
		{ "goroutine profile: total 9\n6 @ 0x43a4d6 0x4068ac\n#\t0x46e3c4\tmain.f+0x24\t/x.go:3\n",
		  -EINVAL },
		{ "404 page not found\n", -EINVAL },
		{ "main.main()\n\t/x.go:1 +0x1\n", -EINVAL },
		{ "goroutine x [running]:\n", -EINVAL },
		{ "goroutine 1 [running]\n", -EINVAL },
		{ "goroutine 1 []:\n", -EINVAL },
		{ "goroutine 1 [, 2 minutes]:\n", -EINVAL },
		{ "goroutine 1 [a[b]:\n", -EINVAL },
		{ "goroutine 1 [a]b]:\n", -EINVAL },
		{ "goroutine  1 [running]:\n", -EINVAL },
		{ "goroutine 1[running]:\n", -EINVAL },
		{ "goroutine 123456789012345678901 [running]:\n", -EINVAL },
		{ "goroutine 18446744073709551616 [running]:\n", -EINVAL },
		{ "goroutine 1 [run\x01ning]:\n", -EINVAL },
		{ "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", -EINVAL },
	};
	struct go_goroutines *gs;
	const struct go_goroutine *g;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct case_want *w = &cases[i];

		print_message("case %zu\n", i);
		gs = NULL;
		assert_int_equal(go_goroutines_parse(w->text, strlen(w->text), &gs), w->ret);
		if (w->ret) {
			assert_null(gs);
			continue;
		}
		assert_int_equal(gs->n, w->n);
		g = &gs->g[0];
		assert_true(g->id == w->id);
		assert_string_equal(g->state, w->state);
		assert_int_equal(g->wait_minutes, w->wait);
		assert_int_equal(g->locked_to_thread, w->locked);
		assert_int_equal(g->elided, w->elided);
		assert_int_equal(gs->truncated, w->truncated);
		assert_int_equal(g->nframes, w->nframes);
		assert_int_equal(g->frames_dropped, w->frames_dropped);
		assert_int_equal(gs->frames_dropped, w->frames_dropped);
		if (w->leaf) {
			assert_string_equal(g->frames[0].func, w->leaf);
			assert_string_equal(g->frames[0].file, w->leaf_file);
			assert_int_equal(g->frames[0].line, w->leaf_line);
		} else if (!w->nframes) {
			assert_null(g->frames);
		}
		if (w->created_by)
			assert_string_equal(g->created_by, w->created_by);
		else
			assert_null(g->created_by);
		assert_true(g->created_in == w->created_in);
		assert_int_equal(gs->lines_skipped, w->skipped);
		go_goroutines_free(gs);
	}

	/* A NUL byte: binary, not text. */
	assert_int_equal(go_goroutines_parse("goroutine 1 [running]:\n\0", 24, &gs), -EINVAL);
	assert_int_equal(go_goroutines_parse(NULL, 0, &gs), -EINVAL);
	assert_int_equal(go_goroutines_parse("x", 1, NULL), -EINVAL);
	/* The size is checked before anything is read. */
	assert_int_equal(go_goroutines_parse("", (size_t)GO_GOROUTINES_TEXT_MAX + 1, &gs), -EFBIG);
	go_goroutines_free(NULL);
}

static void test_strip_args(void **state __attribute__((unused)))
{
	static const struct {
		const char *in;
		int ret;
		const char *out;
	} cases[] = {
		{ "main.worker(0xc00001c0c0, 0x5)", 11, "main.worker" },
		{ "net/http.(*conn).serve(0xc0001a2000, {0x6d1c38, 0xc000014180})", 22,
		  "net/http.(*conn).serve" },
		{ "main.(*T).run(...)", 13, "main.(*T).run" },
		{ "main.main()", 9, "main.main" },
		{ "main.main.func1()", 15, "main.main.func1" },
		{ "main.Map[...]({0xc000010000, 0x3, 0x3}, 0x4b2f50)", 13, "main.Map[...]" },
		{ "runtime/pprof.writeGoroutine({0x75c480?, 0xc00012e000?}, 0x0?)", 28,
		  "runtime/pprof.writeGoroutine" },
		{ "a()", 1, "a" },
		/* Error rows. */
		{ "main.main", -EINVAL },
		{ "()", -EINVAL },
		{ "(x)", -EINVAL },
		{ "main.f(0x1", -EINVAL },
		{ "main.f 0x1)", -EINVAL },
		{ "main.f((0x1)", -EINVAL },
		{ "main.f (0x1)", -EINVAL },
		{ "main.f)(0x1)", -EINVAL },
		{ "", -EINVAL },
		{ ")", -EINVAL },
	};
	char buf[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s\n", i, cases[i].in);
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		assert_int_equal(go_goroutines_strip_args(buf, strlen(buf)), cases[i].ret);
		assert_string_equal(buf, cases[i].ret < 0 ? cases[i].in : cases[i].out);
	}
	assert_int_equal(go_goroutines_strip_args(NULL, 0), -EINVAL);
}

/* Appends to a growing buffer; aborts the test on failure. */
static void put(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	while (*len + n + 1 > *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		*buf = realloc(*buf, *cap);
		assert_non_null(*buf);
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
}

static void test_bounds(void **state __attribute__((unused)))
{
	struct go_goroutines *gs = NULL;
	char *buf = NULL, line[64];
	size_t len = 0, cap = 0, i;

	/* 250 frames: 200 kept, 50 counted. */
	put(&buf, &len, &cap, "goroutine 1 [running]:\n");
	for (i = 0; i < 250; i++) {
		snprintf(line, sizeof(line), "main.r%zu(...)\n\t/x.go:%zu\n", i, i + 1);
		put(&buf, &len, &cap, line);
	}
	put(&buf, &len, &cap, "created by main.main\n\t/x.go:1 +0x1\n");
	assert_int_equal(go_goroutines_parse(buf, len, &gs), 0);
	assert_int_equal(gs->n, 1);
	assert_int_equal(gs->g[0].nframes, GO_GOROUTINE_FRAMES_MAX);
	assert_int_equal(gs->g[0].frames_dropped, 250 - GO_GOROUTINE_FRAMES_MAX);
	assert_int_equal(gs->frames_dropped, 250 - GO_GOROUTINE_FRAMES_MAX);
	assert_string_equal(gs->g[0].frames[199].func, "main.r199");
	assert_int_equal(gs->g[0].frames[199].line, 200);
	assert_string_equal(gs->g[0].created_by, "main.main");
	go_goroutines_free(gs);

	/* One goroutine more than kept. */
	len = 0;
	for (i = 1; i <= GO_GOROUTINES_MAX + 1; i++) {
		snprintf(line, sizeof(line), "goroutine %zu [chan receive]:\nmain.f()\n\t/x.go:1\n\n",
			 i);
		put(&buf, &len, &cap, line);
	}
	assert_int_equal(go_goroutines_parse(buf, len, &gs), 0);
	assert_int_equal(gs->n, GO_GOROUTINES_MAX);
	assert_int_equal(gs->goroutines_dropped, 1);
	assert_true(gs->g[GO_GOROUTINES_MAX - 1].id == GO_GOROUTINES_MAX);
	assert_string_equal(gs->g[GO_GOROUTINES_MAX - 1].frames[0].func, "main.f");
	go_goroutines_free(gs);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_dump),
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_strip_args),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
