// SPDX-License-Identifier: Apache-2.0
/* daemon/capture/nodeframes.c: V8's JavaScript stacks matched with our samples by time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/capture/nodeframes.h"
#include "profile/profile.h"
#include "runtimes/node/v8prof.h"
#include "symbols/symbolizer.h"

/*
 * (root) -> spin -> outerCaller -> hotLoop, and (program), (idle). Samples at 1000 us (hotLoop),
 * 2000 (program), 3000 (outerCaller), 10000 (idle) of V8's clock.
 */
static const char cpu_json[] =
	"{\"id\":3,\"result\":{\"profile\":{\"nodes\":["
	"{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1},\"children\":[2,5,6]},"
	"{\"id\":2,\"callFrame\":{\"functionName\":\"spin\",\"scriptId\":\"3\",\"url\":\"/mnt/app.js\","
	"\"lineNumber\":70,\"columnNumber\":13},\"children\":[3]},"
	"{\"id\":3,\"callFrame\":{\"functionName\":\"outerCaller\",\"scriptId\":\"3\",\"url\":\"/mnt/app.js\","
	"\"lineNumber\":50,\"columnNumber\":20},\"children\":[4]},"
	"{\"id\":4,\"callFrame\":{\"functionName\":\"hotLoop\",\"scriptId\":\"3\",\"url\":\"/mnt/app.js\","
	"\"lineNumber\":30,\"columnNumber\":16}},"
	"{\"id\":5,\"callFrame\":{\"functionName\":\"(program)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1}},"
	"{\"id\":6,\"callFrame\":{\"functionName\":\"(idle)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1}}],"
	"\"startTime\":0,\"endTime\":20000,\"samples\":[4,5,3,6],"
	"\"timeDeltas\":[1000,1000,1000,7000]}}}";

static struct v8prof *parse(void)
{
	struct v8prof *p = NULL;

	assert_int_equal(v8prof_cpu_parse(cpu_json, strlen(cpu_json), &p), 0);
	return p;
}

static void test_stack(void **state)
{
	static const struct {
		uint64_t time_ns;
		uint32_t tgid;
		size_t n;	  /* JavaScript frames */
		const char *leaf; /* and the leaf's name */
	} rows[] = {
		{ 1000000, 7, 3, "hotLoop" },
		{ 2900000, 7, 2, "outerCaller" }, /* 0.1 ms from 3000 us */
		{ 3000000, 7, 2, "outerCaller" },
		{ 4900000, 7, 2, "outerCaller" }, /* 1.9 ms away: within tolerance */
		{ 5100000, 7, 0, NULL },	  /* 2.1 ms from any sample */
		{ 2000000, 7, 0, NULL },	  /* (program): the native stack stays */
		{ 10000000, 7, 0, NULL },	  /* (idle) */
		{ 1000000, 8, 0, NULL },	  /* another process */
		{ 0, 7, 0, NULL },		  /* an untimed sample */
	};
	struct prof_frame_info fi[NODEFRAMES_MAX_DEPTH];
	struct nodeframes *nf;
	size_t i, n;

	(void)state;
	assert_int_equal(nodeframes__new(&nf), 0);
	assert_int_equal(nodeframes__add(nf, 7, parse(), 0), 0);
	assert_true(nodeframes__has(nf, 7));
	assert_false(nodeframes__has(nf, 8));
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = nodeframes__stack(nf, rows[i].tgid, rows[i].time_ns, fi, NODEFRAMES_MAX_DEPTH);
		print_message("row %zu\n", i);
		assert_int_equal(n, rows[i].n);
		if (!n)
			continue;
		assert_string_equal(fi[0].function, rows[i].leaf);
		assert_int_equal(fi[0].lang, PROF_LANG_NODE);
		assert_string_equal(fi[0].file, "/mnt/app.js");
		assert_string_equal(fi[n - 1].function, "spin");
	}
	/* the line is 1-based, the script stands for the mapping */
	n = nodeframes__stack(nf, 7, 1000000, fi, NODEFRAMES_MAX_DEPTH);
	assert_int_equal(fi[0].line, 31);
	assert_string_equal(fi[0].mapping, "/mnt/app.js");
	/* room for one frame: the leaf */
	assert_int_equal(nodeframes__stack(nf, 7, 1000000, fi, 1), 1);
	assert_string_equal(fi[0].function, "hotLoop");
	assert_true(nodeframes__matched(nf) > 0);
	nodeframes__free(nf);
}

static void test_offset(void **state)
{
	struct prof_frame_info fi[8];
	struct nodeframes *nf;

	(void)state;
	assert_int_equal(nodeframes__new(&nf), 0);
	/* a time namespace: the process's clock runs 5 s behind ours, so its sample at 1000 us
	 * was taken at our 5001000 us */
	assert_int_equal(nodeframes__add(nf, 7, parse(), -5000000000LL), 0);
	assert_int_equal(nodeframes__stack(nf, 7, 5001000000ULL, fi, 8), 3);
	assert_string_equal(fi[0].function, "hotLoop");
	assert_int_equal(nodeframes__stack(nf, 7, 1000000, fi, 8), 0);
	nodeframes__free(nf);
}

static void test_add_errors(void **state)
{
	struct nodeframes *nf;
	uint32_t t;

	(void)state;
	assert_int_equal(nodeframes__new(&nf), 0);
	for (t = 1; t <= NODEFRAMES_MAX_PROCS; t++)
		assert_int_equal(nodeframes__add(nf, t, parse(), 0), 0);
	/* the profile is taken (and freed) on error too: no leak under ASan */
	assert_int_equal(nodeframes__add(nf, 1, parse(), 0), -EEXIST);
	assert_int_equal(nodeframes__add(nf, 99, parse(), 0), -E2BIG);
	nodeframes__free(nf);
	nodeframes__free(NULL);
	assert_false(nodeframes__has(NULL, 1));
}

static void test_in_v8(void **state)
{
	static const struct {
		struct prof_frame_info fi;
		bool in;
	} rows[] = {
		{ { .function = "Builtins_JSEntryTrampoline", .mapping = "/usr/bin/node" }, true },
		{ { .function = "Builtins_InterpreterEntryTrampoline", .mapping = "/usr/bin/node" },
		  true },
		{ { .mapping = "[anon]", .address = 0x1234 }, true },
		{ { .function = "Builtin:ArrayMap", .mapping = SYMBOLIZER_PERF_MAP_DSO }, true },
		{ { .function = "hotLoop", .mapping = "/mnt/app.js", .lang = PROF_LANG_NODE },
		  true },
		{ { .function = "uv_run", .mapping = "/usr/bin/node" }, false },
		{ { .function = "node::Start(int, char**)", .mapping = "/usr/bin/node" }, false },
		{ { .mapping = "/usr/lib/x86_64-linux-gnu/libc.so.6" }, false },
		{ { .function = "epoll_wait",
		    .mapping = "[kernel.kallsyms]",
		    .lang = PROF_LANG_KERNEL },
		  false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(nodeframes_in_v8(&rows[i].fi), rows[i].in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_offset),
		cmocka_unit_test(test_add_errors),
		cmocka_unit_test(test_in_v8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
