// SPDX-License-Identifier: Apache-2.0
/*
 * V8's two profiles (runtimes/node/v8prof.h): a hand-made CPU profile shaped as Node writes
 * one, every malformed and hostile form (cycles, duplicate ids, children listed twice, unknown
 * ids, mismatched lengths, time overflow, too many nodes and samples, stacks beyond the depth
 * cap), nested heap profiles up to and beyond the decoder's nesting limit, and the real
 * fixtures tests/fixtures/v8/{cpu,heap}.json that tests/fixtures/v8/make.js captured.
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

#include "base/text.h"
#include "runtimes/node/cdp.h"
#include "runtimes/node/v8prof.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A callFrame, a CPU node, a CPU profile (result form) and a heap node. */
#define CF(fn, sid, url, l, c)                                                               \
	"\"callFrame\":{\"functionName\":\"" fn "\",\"scriptId\":\"" sid "\",\"url\":\"" url \
	"\",\"lineNumber\":" #l ",\"columnNumber\":" #c "}"
#define CF0 CF("f", "1", "u", 0, 0)
#define N(id, kids) "{\"id\":" #id "," CF0 ",\"children\":[" kids "]}"
#define TIMES "\"startTime\":0,\"endTime\":1"
#define CPU(nodes, rest) "{\"profile\":{\"nodes\":[" nodes "]," rest "}}"
#define CPU0(nodes) CPU(nodes, TIMES ",\"samples\":[],\"timeDeltas\":[]")
#define H(id, size, kids) "{\"id\":" #id "," CF0 ",\"selfSize\":" #size ",\"children\":[" kids "]}"
#define HEAP(head, samples) "{\"profile\":{\"head\":" head ",\"samples\":[" samples "]}}"

/* What Profiler.stop answers, by hand: ids far apart, deltas that go back in time. */
static const char cpu_real[] =
	"{\"id\":12,\"result\":{\"profile\":{\"nodes\":["
	"{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":0,\"children\":[2,3,4000000000,7]},"
	"{\"id\":2,\"callFrame\":{\"functionName\":\"(program)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":1},"
	"{\"id\":3,\"callFrame\":{\"functionName\":\"(garbage collector)\",\"scriptId\":\"0\","
	"\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":1},"
	"{\"id\":4000000000,\"callFrame\":{\"functionName\":\"\",\"scriptId\":\"42\","
	"\"url\":\"file:///app/server.js\",\"lineNumber\":0,\"columnNumber\":0},\"hitCount\":0,"
	"\"children\":[5]},"
	"{\"id\":5,\"callFrame\":{\"functionName\":\"handle\",\"scriptId\":\"42\","
	"\"url\":\"file:///app/server.js\",\"lineNumber\":9,\"columnNumber\":15},\"hitCount\":1,"
	"\"children\":[6],\"positionTicks\":[{\"line\":11,\"ticks\":1}]},"
	"{\"id\":6,\"callFrame\":{\"functionName\":\"writeUtf8String\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":1},"
	"{\"id\":7,\"callFrame\":{\"functionName\":\"(idle)\",\"scriptId\":\"0\",\"url\":\"\","
	"\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":1}],"
	"\"startTime\":1000,\"endTime\":1040,\"samples\":[2,5,6,3,7],"
	"\"timeDeltas\":[10,10,-6,20,0]}}}";

static char *read_fixture(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The index of the first node named @fn, or -1. */
static long find_node(const struct v8prof *p, const char *fn)
{
	const struct v8prof_node *nodes;
	size_t n = v8prof_nodes(p, &nodes), i;

	for (i = 0; i < n; i++)
		if (!strcmp(nodes[i].function, fn))
			return (long)i;
	return -1;
}

/* Every name is clean UTF-8 within V8PROF_NAME_MAX; every parent is a shallower node. */
static void check_model(const struct v8prof *p)
{
	const struct v8prof_node *nodes;
	size_t n = v8prof_nodes(p, &nodes), i, roots = 0, ns;
	const uint32_t *idx;

	assert_true(n >= 1);
	for (i = 0; i < n; i++) {
		assert_true(strlen(nodes[i].function) >= 1);
		assert_true(strlen(nodes[i].function) <= V8PROF_NAME_MAX);
		assert_true(strlen(nodes[i].url) <= V8PROF_NAME_MAX);
		assert_true(text_utf8_is_clean(nodes[i].function, strlen(nodes[i].function)));
		assert_true(text_utf8_is_clean(nodes[i].url, strlen(nodes[i].url)));
		if (nodes[i].parent == V8PROF_NONE) {
			roots++;
			assert_int_equal(nodes[i].depth, 0);
		} else {
			assert_true(nodes[i].parent < n);
			assert_int_equal(nodes[i].depth, nodes[nodes[i].parent].depth + 1);
		}
	}
	assert_int_equal(roots, 1);
	ns = v8prof_samples(p, &idx, NULL);
	for (i = 0; i < ns; i++)
		assert_true(idx[i] < n);
}

static void test_cpu_real_shape(void **state)
{
	static const struct {
		const char *fn;
		enum v8prof_kind kind;
		const char *url;
		int32_t line, column;
		uint32_t depth;
	} want[] = {
		{ "(root)", V8PROF_ROOT, "", 0, 0, 0 },
		{ "(program)", V8PROF_PROGRAM, "", 0, 0, 1 },
		{ "(garbage collector)", V8PROF_GC, "", 0, 0, 1 },
		{ "(anonymous)", V8PROF_JS, "file:///app/server.js", 1, 1, 1 },
		{ "handle", V8PROF_JS, "file:///app/server.js", 10, 16, 2 },
		{ "writeUtf8String", V8PROF_NATIVE, "", 0, 0, 3 },
		{ "(idle)", V8PROF_IDLE, "", 0, 0, 1 },
	};
	static const int64_t times[] = { 1010, 1020, 1014, 1034, 1034 };
	static const uint32_t sample_nodes[] = { 1, 4, 5, 2, 6 };
	const struct v8prof_node *nodes;
	const uint32_t *idx;
	const int64_t *t;
	struct v8prof_stats st;
	struct v8prof *p;
	uint32_t stack[8];
	size_t i, n;

	(void)state;
	assert_int_equal(v8prof_cpu_parse(cpu_real, sizeof(cpu_real) - 1, &p), 0);
	check_model(p);
	assert_int_equal(v8prof_nodes(p, &nodes), ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		print_message("node %zu\n", i);
		assert_string_equal(nodes[i].function, want[i].fn);
		assert_int_equal(nodes[i].kind, want[i].kind);
		assert_string_equal(nodes[i].url, want[i].url);
		assert_int_equal(nodes[i].line, want[i].line);
		assert_int_equal(nodes[i].column, want[i].column);
		assert_int_equal(nodes[i].depth, want[i].depth);
		assert_int_equal(nodes[i].self_bytes, 0);
	}
	assert_int_equal(nodes[0].parent, V8PROF_NONE);
	assert_ptr_equal(nodes[3].url, nodes[4].url); /* interned */

	/* stacks leaf first, without the root */
	n = v8prof_stack(p, 5, stack, ARRAY_SIZE(stack));
	assert_int_equal(n, 3);
	assert_int_equal(stack[0], 5);
	assert_int_equal(stack[1], 4);
	assert_int_equal(stack[2], 3);
	assert_int_equal(v8prof_stack(p, 5, stack, 2), 2);
	assert_int_equal(stack[1], 4);
	assert_int_equal(v8prof_stack(p, 0, stack, 8), 0);
	assert_int_equal(v8prof_stack(p, 7, stack, 8), 0);
	assert_int_equal(v8prof_stack(p, V8PROF_NONE, stack, 8), 0);
	assert_int_equal(v8prof_stack(p, 5, stack, 0), 0);

	/* samples with a negative delta */
	assert_int_equal(v8prof_samples(p, &idx, &t), ARRAY_SIZE(times));
	for (i = 0; i < ARRAY_SIZE(times); i++) {
		assert_int_equal(t[i], times[i]);
		assert_int_equal(idx[i], sample_nodes[i]);
	}
	assert_null(v8prof_sample_bytes(p));
	assert_int_equal(v8prof_start_us(p), 1000);
	assert_int_equal(v8prof_end_us(p), 1040);
	v8prof_get_stats(p, &st);
	assert_int_equal(st.nodes, 7);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.cut_depth, 0);
	assert_int_equal(st.bad_refs, 0);
	v8prof_free(p);
	v8prof_free(NULL);
}

static void test_nearest(void **state)
{
	/* sample times 1010(0) 1020(1) 1014(2) 1034(3) 1034(4) */
	static const struct {
		int64_t t, tol;
		int ret;
		uint32_t sample;
	} cases[] = {
		{ 1010, 0, 0, 0 },
		{ 1012, 2, 0, 0 },
		{ 1013, 1, 0, 2 },
		{ 1017, 3, 0, 2 }, /* a tie: the earlier */
		{ 1027, 7, 0, 1 }, /* a tie: the earlier */
		{ 1034, 0, 0, 3 }, /* the same time: the first in input order */
		{ 1040, 6, 0, 3 },
		{ 0, 1010, 0, 0 },
		{ INT64_MAX, INT64_MAX, 0, 3 },
		{ INT64_MIN, INT64_MAX, -ENOENT },
		{ INT64_MIN + 1011, INT64_MAX, 0, 0 }, /* exactly INT64_MAX away */
		{ INT64_MIN + 1010, INT64_MAX, -ENOENT },
		/* errors */
		{ 1012, 1, -ENOENT },
		{ 1017, 2, -ENOENT },
		{ 1040, 5, -ENOENT },
		{ 1009, 0, -ENOENT },
		{ 0, 1009, -ENOENT },
		{ INT64_MAX, 0, -ENOENT },
		{ 1010, -1, -EINVAL },
	};
	struct v8prof *p, *h;
	uint32_t s;
	size_t i;

	(void)state;
	assert_int_equal(v8prof_cpu_parse(cpu_real, sizeof(cpu_real) - 1, &p), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		s = 12345;
		assert_int_equal(v8prof_nearest(p, cases[i].t, cases[i].tol, &s), cases[i].ret);
		assert_int_equal(s, cases[i].ret ? 12345 : cases[i].sample);
	}
	v8prof_free(p);

	/* no samples; a heap profile has no times */
	assert_int_equal(v8prof_cpu_parse(CPU0(N(1, "")), sizeof(CPU0(N(1, ""))) - 1, &p), 0);
	assert_int_equal(v8prof_nearest(p, 0, INT64_MAX, &s), -ENOENT);
	v8prof_free(p);
	assert_int_equal(v8prof_heap_parse(HEAP(H(1, 0, ""), ""), sizeof(HEAP(H(1, 0, ""), "")) - 1,
					   &h),
			 0);
	assert_int_equal(v8prof_nearest(h, 0, INT64_MAX, &s), -ENOENT);
	v8prof_free(h);
}

static void test_cpu_parse(void **state)
{
	static const struct {
		const char *in;
		int ret;
		size_t nodes, samples;
		uint64_t bad_refs;
	} cases[] = {
		{ CPU0(N(1, "")), 0, 1 },
		{ "{\"id\":1,\"result\":" CPU0(N(1, "")) "}", 0, 1 },
		{ CPU0(N(4294967295, "0") "," N(0, "")), 0, 2 },
		{ CPU0(N(2, "") "," N(1, "2")), 0, 2 }, /* the root need not come first */
		{ CPU(N(1, ""), TIMES), 0, 1, 0 },	/* no samples at all */
		{ CPU(N(1, ""), TIMES ",\"samples\":[1,1],\"timeDeltas\":[5,-5]"), 0, 1, 2 },
		{ CPU(N(1, ""), "\"startTime\":1.0e3,\"endTime\":2e3"), 0, 1 },
		{ CPU0("{\"id\":1," CF("f", "1", "u", 2147483647, -2) "}"), 0, 1, 0, 2 },
		{ CPU0("{\"id\":1," CF("f", "1", "u", 2147483646, -1) "}"), 0, 1, 0, 0 },
		{ CPU0("{\"id\":1," CF0 "}"), 0, 1 }, /* no children */
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":\"\",\"url\":\"\",\"lineNumber\":0,"
		       "\"columnNumber\":0}}"),
		  0, 1 }, /* no scriptId */
		/* errors */
		{ "", -EPROTO },
		{ "[]", -EPROTO },
		{ "{}", -EPROTO },
		{ "{\"id\":1,\"error\":{\"code\":1,\"message\":\"x\"}}", -EPROTO },
		{ "{\"id\":1,\"result\":{}}", -EPROTO },
		{ "{\"profile\":[]}", -EPROTO },
		{ CPU0(""), -EPROTO },
		{ "{\"profile\":{\"nodes\":{}," TIMES "}}", -EPROTO },
		{ CPU0(N(1, "2") "," N(2, "") "," N(2, "")), -EPROTO },	   /* duplicate id */
		{ CPU0(N(1, "2,2") "," N(2, "")), -EPROTO },		   /* child twice */
		{ CPU0(N(1, "2,3") "," N(2, "3") "," N(3, "")), -EPROTO }, /* two parents */
		{ CPU0(N(1, "") "," N(2, "3") "," N(3, "2")), -EPROTO },   /* a cycle */
		{ CPU0(N(1, "2") "," N(2, "3") "," N(3, "4") "," N(4, "2")), -EPROTO },
		{ CPU0(N(1, "1")), -EPROTO },		    /* its own child */
		{ CPU0(N(1, "2") "," N(2, "1")), -EPROTO }, /* no root */
		{ CPU0(N(1, "") "," N(2, "")), -EPROTO },   /* two roots */
		{ CPU0(N(1, "9")), -EPROTO },		    /* unknown child */
		{ CPU0(N(1, "-1")), -EPROTO },
		{ CPU0(N(1, "4294967296")), -EPROTO },
		{ CPU0(N(1, "\"2\"") "," N(2, "")), -EPROTO },
		{ CPU0(N(1, "2.0") "," N(2, "")), -EPROTO },
		{ CPU0("{\"id\":1," CF0 ",\"children\":{}}"), -EPROTO },
		{ CPU0("{\"id\":-1," CF0 "}"), -EPROTO },
		{ CPU0("{\"id\":4294967296," CF0 "}"), -EPROTO },
		{ CPU0("{\"id\":\"1\"," CF0 "}"), -EPROTO },
		{ CPU0("{\"id\":1}"), -EPROTO },
		{ CPU0("{\"id\":1,\"callFrame\":[]}"), -EPROTO },
		{ CPU0("{\"id\":1," CF0 ",\"id\":2}"), -EPROTO }, /* a duplicate key */
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":1,\"url\":\"\",\"lineNumber\":0,"
		       "\"columnNumber\":0}}"),
		  -EPROTO },
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":\"\",\"lineNumber\":0,"
		       "\"columnNumber\":0}}"),
		  -EPROTO },
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":\"\",\"url\":\"\",\"lineNumber\":\"0\","
		       "\"columnNumber\":0}}"),
		  -EPROTO },
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":\"\",\"url\":\"\",\"lineNumber\":0,"
		       "\"columnNumber\":0.5}}"),
		  -EPROTO },
		{ CPU0("{\"id\":1,\"callFrame\":{\"functionName\":\"\",\"url\":\"\",\"lineNumber\":0,"
		       "\"columnNumber\":0,\"scriptId\":0}}"),
		  -EPROTO },
		{ CPU("1", TIMES), -EPROTO },
		{ CPU(N(1, ""), "\"endTime\":1"), -EPROTO },
		{ CPU(N(1, ""), "\"startTime\":\"0\",\"endTime\":1"), -EPROTO },
		{ CPU(N(1, ""), "\"startTime\":0.5,\"endTime\":1"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[1]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"timeDeltas\":[1]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[1,1],\"timeDeltas\":[1]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[1],\"timeDeltas\":[1,2]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[2],\"timeDeltas\":[1]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[\"1\"],\"timeDeltas\":[1]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":[1],\"timeDeltas\":[\"1\"]"), -EPROTO },
		{ CPU(N(1, ""), TIMES ",\"samples\":{},\"timeDeltas\":{}"), -EPROTO },
		{ CPU(N(1, ""), "\"startTime\":9223372036854775807,\"endTime\":0,\"samples\":[1,1],"
				"\"timeDeltas\":[0,1]"),
		  -EPROTO },
		{ CPU(N(1, ""),
		      "\"startTime\":-9223372036854775807,\"endTime\":0,\"samples\":[1,1],"
		      "\"timeDeltas\":[-1,-1]"),
		  -EPROTO },
	};
	struct v8prof_stats st;
	struct v8prof *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p = (struct v8prof *)0x1;
		assert_int_equal(v8prof_cpu_parse(cases[i].in, strlen(cases[i].in), &p),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(p, (struct v8prof *)0x1);
			continue;
		}
		check_model(p);
		v8prof_get_stats(p, &st);
		assert_int_equal(st.nodes, cases[i].nodes);
		assert_int_equal(st.samples, cases[i].samples);
		assert_int_equal(st.bad_refs, cases[i].bad_refs);
		v8prof_free(p);
	}
	assert_int_equal(v8prof_cpu_parse(NULL, 0, &p), -EINVAL);
	assert_int_equal(v8prof_cpu_parse("{}", 2, NULL), -EINVAL);
	assert_int_equal(v8prof_cpu_parse("{}", CDP_MAX_MESSAGE + 1, &p), -EFBIG);
}

/* A growing text buffer for the big inputs. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->cap - t->len < 256) {
		t->cap = t->cap ? t->cap * 2 : 4096;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	va_start(ap, fmt);
	n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < t->cap - t->len);
	t->len += (size_t)n;
}

static void test_cpu_limits(void **state)
{
	struct text t = { 0 };
	struct v8prof *p;
	size_t i;

	(void)state;
	/* one node over the cap is refused before any node is read */
	put(&t, "{\"profile\":{\"nodes\":[");
	for (i = 0; i <= V8PROF_MAX_NODES; i++)
		put(&t, i ? ",{}" : "{}");
	put(&t, "]," TIMES "}}");
	assert_true(t.len < CDP_MAX_MESSAGE);
	assert_int_equal(v8prof_cpu_parse(t.s, t.len, &p), -EFBIG);
	t.len = 0;

	/* as are samples (timeDeltas as long would not fit CDP_MAX_MESSAGE) */
	put(&t, "{\"profile\":{\"nodes\":[" N(1, "") "]," TIMES ",\"samples\":[");
	for (i = 0; i <= V8PROF_MAX_SAMPLES; i++)
		put(&t, i ? ",1" : "1");
	put(&t, "],\"timeDeltas\":[]}}");
	assert_true(t.len < CDP_MAX_MESSAGE);
	assert_int_equal(v8prof_cpu_parse(t.s, t.len, &p), -EFBIG);
	free(t.s);
}

/* A chain deeper than V8PROF_MAX_DEPTH: stacks are cut at the root side, and counted. */
static void test_cpu_depth_cut(void **state)
{
	enum { CHAIN = V8PROF_MAX_DEPTH + 76 };
	const struct v8prof_node *nodes;
	struct text t = { 0 };
	struct v8prof_stats st;
	struct v8prof *p;
	uint32_t *stack;
	size_t i, n;

	(void)state;
	put(&t, "{\"profile\":{\"nodes\":[");
	for (i = 0; i < CHAIN; i++) {
		put(&t, "%s{\"id\":%zu," CF("f", "1", "u", 0, 0), i ? "," : "", i * 7 + 3);
		if (i + 1 < CHAIN)
			put(&t, ",\"children\":[%zu]", (i + 1) * 7 + 3);
		put(&t, "}");
	}
	put(&t, "]," TIMES ",\"samples\":[%zu],\"timeDeltas\":[1]}}", (size_t)(CHAIN - 1) * 7 + 3);
	assert_int_equal(v8prof_cpu_parse(t.s, t.len, &p), 0);
	check_model(p);
	assert_int_equal(v8prof_nodes(p, &nodes), CHAIN);
	assert_int_equal(nodes[CHAIN - 1].depth, CHAIN - 1);
	stack = calloc(CHAIN, sizeof(*stack));
	assert_non_null(stack);
	n = v8prof_stack(p, CHAIN - 1, stack, CHAIN);
	assert_int_equal(n, V8PROF_MAX_DEPTH);
	for (i = 0; i < n; i++)
		assert_int_equal(stack[i], CHAIN - 1 - i); /* leaf first, the root side cut */
	assert_int_equal(v8prof_stack(p, V8PROF_MAX_DEPTH, stack, CHAIN), V8PROF_MAX_DEPTH);
	assert_int_equal(v8prof_stack(p, V8PROF_MAX_DEPTH - 1, stack, CHAIN), V8PROF_MAX_DEPTH - 1);
	v8prof_get_stats(p, &st);
	assert_int_equal(st.cut_depth, CHAIN - 1 - V8PROF_MAX_DEPTH);
	v8prof_free(p);
	free(stack);
	free(t.s);
}

/* Names are sanitized and cut at a character boundary; "" becomes "(anonymous)". */
static void test_names(void **state)
{
	const struct v8prof_node *nodes;
	struct text t = { 0 };
	struct v8prof *p;
	size_t i, len;

	(void)state;
	put(&t, "{\"profile\":{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"");
	for (i = 0; i < 300; i++)
		put(&t, "\xc3\xa4");
	put(&t, "\",\"scriptId\":\"3\",\"url\":\"a\\u0007b\\u007f\\n\",\"lineNumber\":1,"
		"\"columnNumber\":2}}]," TIMES "}}");
	assert_int_equal(v8prof_cpu_parse(t.s, t.len, &p), 0);
	check_model(p);
	v8prof_nodes(p, &nodes);
	len = strlen(nodes[0].function);
	assert_int_equal(len, V8PROF_NAME_MAX);
	assert_memory_equal(nodes[0].function, "\xc3\xa4\xc3\xa4", 4);
	assert_string_equal(nodes[0].url, "a?b??");
	assert_int_equal(nodes[0].kind, V8PROF_JS);
	v8prof_free(p);
	free(t.s);
}

static void test_kinds(void **state)
{
	static const struct {
		const char *in;
		enum v8prof_kind kind;
		const char *fn;
	} cases[] = {
		{ CPU0("{\"id\":1," CF("(root)", "0", "", -1, -1) "}"), V8PROF_ROOT, "(root)" },
		{ CPU0("{\"id\":1," CF("(program)", "0", "", -1, -1) "}"), V8PROF_PROGRAM,
		  "(program)" },
		{ CPU0("{\"id\":1," CF("(idle)", "0", "", -1, -1) "}"), V8PROF_IDLE, "(idle)" },
		{ CPU0("{\"id\":1," CF("(garbage collector)", "0", "", -1, -1) "}"), V8PROF_GC,
		  "(garbage collector)" },
		{ CPU0("{\"id\":1," CF("(V8 API)", "0", "", -1, -1) "}"), V8PROF_NATIVE,
		  "(V8 API)" },
		{ CPU0("{\"id\":1," CF("(BYTECODE_COMPILER)", "5", "", -1, -1) "}"), V8PROF_NATIVE,
		  "(BYTECODE_COMPILER)" },
		{ CPU0("{\"id\":1," CF("writev", "0", "", -1, -1) "}"), V8PROF_NATIVE, "writev" },
		{ CPU0("{\"id\":1," CF("", "0", "", -1, -1) "}"), V8PROF_NATIVE, "(anonymous)" },
		{ CPU0("{\"id\":1," CF("evald", "17", "", 3, 4) "}"), V8PROF_JS, "evald" },
		{ CPU0("{\"id\":1," CF("(root)", "0", "x.js", -1, -1) "}"), V8PROF_JS, "(root)" },
		{ CPU0("{\"id\":1," CF("()", "4", "", -1, -1) "}"), V8PROF_NATIVE, "()" },
		{ CPU0("{\"id\":1," CF("(", "4", "", -1, -1) "}"), V8PROF_JS, "(" },
	};
	const struct v8prof_node *nodes;
	struct v8prof *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(v8prof_cpu_parse(cases[i].in, strlen(cases[i].in), &p), 0);
		v8prof_nodes(p, &nodes);
		assert_int_equal(nodes[0].kind, cases[i].kind);
		assert_string_equal(nodes[0].function, cases[i].fn);
		v8prof_free(p);
	}
}

static void test_heap_parse(void **state)
{
	static const char heap[] =
		"{\"id\":7,\"result\":{\"profile\":{\"head\":{\"callFrame\":{\"functionName\":\"(root)\","
		"\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"selfSize\":0,"
		"\"id\":1,\"children\":[{\"callFrame\":{\"functionName\":\"main\",\"scriptId\":\"9\","
		"\"url\":\"/app/a.js\",\"lineNumber\":4,\"columnNumber\":2},\"selfSize\":1024.0,"
		"\"id\":90,\"children\":[{\"callFrame\":{\"functionName\":\"alloc\",\"scriptId\":\"9\","
		"\"url\":\"/app/a.js\",\"lineNumber\":19,\"columnNumber\":0},\"selfSize\":65536,"
		"\"id\":3000000000,\"children\":[]}]},{\"callFrame\":{\"functionName\":\"(V8 API)\","
		"\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},"
		"\"selfSize\":32.5,\"id\":4}]},\"samples\":[{\"size\":65536,\"nodeId\":3000000000,"
		"\"ordinal\":1},{\"size\":1024.0,\"nodeId\":90,\"ordinal\":2},{\"size\":32,\"nodeId\":4,"
		"\"ordinal\":3}]}}}";
	static const struct {
		const char *fn;
		uint32_t parent, depth;
		int32_t line;
		uint64_t bytes;
		enum v8prof_kind kind;
	} want[] = {
		{ "(root)", V8PROF_NONE, 0, 0, 0, V8PROF_ROOT },
		{ "main", 0, 1, 5, 1024, V8PROF_JS },
		{ "alloc", 1, 2, 20, 65536, V8PROF_JS },
		{ "(V8 API)", 0, 1, 0, 32, V8PROF_NATIVE },
	};
	static const uint32_t sample_nodes[] = { 2, 1, 3 };
	static const uint64_t sample_bytes[] = { 65536, 1024, 32 };
	const struct v8prof_node *nodes;
	const uint64_t *bytes;
	const uint32_t *idx;
	const int64_t *t;
	struct v8prof *p;
	uint32_t stack[4];
	size_t i;

	(void)state;
	assert_int_equal(v8prof_heap_parse(heap, sizeof(heap) - 1, &p), 0);
	check_model(p);
	assert_int_equal(v8prof_nodes(p, &nodes), ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		print_message("node %zu\n", i);
		assert_string_equal(nodes[i].function, want[i].fn);
		assert_int_equal(nodes[i].parent, want[i].parent);
		assert_int_equal(nodes[i].depth, want[i].depth);
		assert_int_equal(nodes[i].line, want[i].line);
		assert_int_equal(nodes[i].self_bytes, want[i].bytes);
		assert_int_equal(nodes[i].kind, want[i].kind);
	}
	assert_int_equal(v8prof_samples(p, &idx, &t), 3);
	assert_null(t);
	bytes = v8prof_sample_bytes(p);
	assert_non_null(bytes);
	for (i = 0; i < 3; i++) {
		assert_int_equal(idx[i], sample_nodes[i]);
		assert_int_equal(bytes[i], sample_bytes[i]);
	}
	assert_int_equal(v8prof_stack(p, 2, stack, 4), 2);
	assert_int_equal(stack[0], 2);
	assert_int_equal(stack[1], 1);
	assert_int_equal(v8prof_start_us(p), 0);
	v8prof_free(p);
}

static void test_heap_errors(void **state)
{
	static const struct {
		const char *in;
		int ret;
		size_t nodes;
		uint64_t bad_refs, self0;
	} cases[] = {
		{ HEAP(H(1, 0, ""), ""), 0, 1 },
		{ HEAP(H(1, 0, H(2, 0, "") "," H(3, 0, H(4, 1, ""))), "{\"size\":1,\"nodeId\":4}"),
		  0, 4 },
		{ "{\"profile\":{\"head\":" H(1, 0, "") "}}", 0, 1 }, /* no samples */
		/* no children */
		{ "{\"profile\":{\"head\":{\"id\":1," CF0 ",\"selfSize\":0}}}", 0, 1 },
		{ HEAP(H(1, 9007199254740992, ""), ""), 0, 1, 0, 9007199254740992ull },
		{ HEAP(H(1, 9007199254740993, ""), ""), 0, 1, 1, 9007199254740992ull },
		{ HEAP(H(1, 1e300, ""), ""), 0, 1, 1, 9007199254740992ull },
		{ HEAP(H(1, 7.9, ""), ""), 0, 1, 0, 7 },
		{ HEAP(H(1, 0, ""), "{\"size\":1e300,\"nodeId\":1}"), 0, 1, 1 },
		/* a sample of a node the tree lacks (V8 sends them): left out, counted below */
		{ HEAP(H(1, 0, ""), "{\"size\":1,\"nodeId\":2}"), 0, 1, 0 },
		/* errors */
		{ HEAP(H(1, -1, ""), ""), -EPROTO },
		{ HEAP(H(1, -0.5, ""), ""), -EPROTO },
		{ HEAP(H(1, "1", ""), ""), -EPROTO },
		{ HEAP(H(1, null, ""), ""), -EPROTO },
		{ HEAP("{\"id\":1," CF0 "}", ""), -EPROTO }, /* no selfSize */
		{ HEAP(H(1, 0, H(1, 0, "")), ""), -EPROTO }, /* duplicate id */
		{ HEAP(H(1, 0, H(2, 0, H(3, 0, "")) "," H(3, 0, "")), ""), -EPROTO },
		{ HEAP(H(1, 0, ""), "{\"size\":-1,\"nodeId\":1}"), -EPROTO },
		{ HEAP(H(1, 0, ""), "{\"size\":\"1\",\"nodeId\":1}"), -EPROTO },
		{ HEAP(H(1, 0, ""), "{\"nodeId\":1}"), -EPROTO },
		{ HEAP(H(1, 0, ""), "{\"size\":1}"), -EPROTO },
		{ HEAP(H(1, 0, ""), "1"), -EPROTO },
		{ "{\"profile\":{\"head\":" H(1, 0, "") ",\"samples\":{}}}", -EPROTO },
		{ HEAP(H(1, 0, "1"), ""), -EPROTO },
		{ HEAP(H(1, 0, "[]"), ""), -EPROTO },
		{ HEAP("{\"id\":1," CF0 ",\"selfSize\":0,\"children\":{}}", ""), -EPROTO },
		{ HEAP("{\"id\":-1," CF0 ",\"selfSize\":0}", ""), -EPROTO },
		{ HEAP("{\"id\":1,\"selfSize\":0}", ""), -EPROTO },
		{ HEAP("[]", ""), -EPROTO },
		{ "{\"profile\":{\"samples\":[]}}", -EPROTO },
		{ "{\"id\":2,\"error\":{\"code\":1,\"message\":\"x\"}}", -EPROTO },
		{ "[", -EPROTO },
	};
	const struct v8prof_node *nodes;
	struct v8prof_stats st;
	struct v8prof *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p = (struct v8prof *)0x1;
		assert_int_equal(v8prof_heap_parse(cases[i].in, strlen(cases[i].in), &p),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_ptr_equal(p, (struct v8prof *)0x1);
			continue;
		}
		check_model(p);
		v8prof_get_stats(p, &st);
		assert_int_equal(v8prof_nodes(p, &nodes), cases[i].nodes);
		assert_int_equal(st.bad_refs, cases[i].bad_refs);
		assert_int_equal(nodes[0].self_bytes, cases[i].self0);
		v8prof_free(p);
	}
	assert_int_equal(v8prof_heap_parse("{}", CDP_MAX_MESSAGE + 1, &p), -EFBIG);
	assert_int_equal(v8prof_heap_parse(NULL, 0, &p), -EINVAL);
	/* the orphan sample: one of two kept */
	{
		static const char two[] = HEAP(H(1, 5, ""), "{\"size\":1,\"nodeId\":2},"
							  "{\"size\":3,\"nodeId\":1}");
		const uint32_t *idx;

		assert_int_equal(v8prof_heap_parse(two, strlen(two), &p), 0);
		v8prof_get_stats(p, &st);
		assert_int_equal(st.orphan_samples, 1);
		assert_int_equal(v8prof_samples(p, &idx, NULL), 1);
		assert_int_equal(idx[0], 0);
		assert_int_equal(v8prof_sample_bytes(p)[0], 3);
		v8prof_free(p);
	}
}

/* Nesting as deep as the decoder allows parses (iteratively); deeper is refused, no crash. */
static void test_heap_deep(void **state)
{
	static const size_t levels[] = { 1000, 5000, 50000 };
	struct text t = { 0 };
	struct v8prof *p;
	uint32_t *stack;
	size_t i, k;

	(void)state;
	stack = calloc(V8PROF_MAX_DEPTH, sizeof(*stack));
	assert_non_null(stack);
	for (k = 0; k < ARRAY_SIZE(levels); k++) {
		print_message("levels %zu\n", levels[k]);
		t.len = 0;
		put(&t, "{\"profile\":{\"head\":");
		for (i = 0; i < levels[k]; i++)
			put(&t, "{\"id\":%zu," CF0 ",\"selfSize\":1,\"children\":[", i);
		for (i = 0; i < levels[k]; i++)
			put(&t, "]}");
		put(&t, ",\"samples\":[{\"size\":1,\"nodeId\":%zu}]}}", levels[k] - 1);
		if (levels[k] > 1000) {
			assert_int_equal(v8prof_heap_parse(t.s, t.len, &p), -EPROTO);
			continue;
		}
		assert_int_equal(v8prof_heap_parse(t.s, t.len, &p), 0);
		check_model(p);
		assert_int_equal(v8prof_stack(p, (uint32_t)levels[k] - 1, stack, V8PROF_MAX_DEPTH),
				 levels[k] - 1);
		v8prof_free(p);
	}
	/* bare brackets, and a node with a very wide children list */
	t.len = 0;
	for (i = 0; i < 100000; i++)
		put(&t, "[");
	assert_int_equal(v8prof_heap_parse(t.s, t.len, &p), -EPROTO);
	t.len = 0;
	put(&t, "{\"profile\":{\"head\":{\"id\":0," CF0 ",\"selfSize\":1,\"children\":[");
	for (i = 1; i <= 100000; i++)
		put(&t, "%s{\"id\":%zu," CF0 ",\"selfSize\":%zu}", i > 1 ? "," : "", i, i);
	put(&t, "]}}}");
	assert_int_equal(v8prof_heap_parse(t.s, t.len, &p), 0);
	assert_int_equal(v8prof_nodes(p, NULL), 100001);
	v8prof_free(p);
	free(stack);
	free(t.s);
}

/* The real captures of tests/fixtures/v8/make.js (Node 20). */
static void test_fixtures(void **state)
{
	const struct v8prof_node *nodes;
	const uint32_t *idx;
	const int64_t *t;
	struct v8prof *p;
	struct cdp_msg *m;
	size_t len, n, i;
	char *buf;
	long k;

	(void)state;
	buf = read_fixture("tests/fixtures/v8/cpu.json", &len);
	assert_int_equal(cdp_parse(buf, len, &m), 0);
	assert_int_equal(cdp_msg_id(m), 7);
	cdp_msg_free(m);
	assert_int_equal(v8prof_cpu_parse(buf, len, &p), 0);
	check_model(p);
	k = find_node(p, "fixtureBusyLoop");
	assert_true(k >= 0);
	v8prof_nodes(p, &nodes);
	assert_int_equal(nodes[k].kind, V8PROF_JS);
	assert_int_equal(nodes[k].line, 21);
	assert_int_equal(nodes[k].column, 25);
	len = strlen(nodes[k].url);
	assert_true(len > 24 && !strcmp(nodes[k].url + len - 24, "tests/fixtures/v8/make.js" + 1));
	assert_int_equal(nodes[0].kind, V8PROF_ROOT);
	n = v8prof_samples(p, &idx, &t);
	assert_true(n > 50);
	for (i = 0; i < n; i++)
		assert_true(t[i] >= v8prof_start_us(p) && t[i] <= v8prof_end_us(p) + 1000000);
	v8prof_free(p);
	free(buf);

	buf = read_fixture("tests/fixtures/v8/heap.json", &len);
	assert_int_equal(v8prof_heap_parse(buf, len, &p), 0);
	check_model(p);
	k = find_node(p, "fixtureAllocate");
	assert_true(k >= 0);
	v8prof_nodes(p, &nodes);
	assert_int_equal(nodes[k].line, 31);
	assert_true(nodes[k].self_bytes > 0);
	assert_non_null(strstr(nodes[k].url, "tests/fixtures/v8/make.js"));
	k = find_node(p, "repeat");
	assert_true(k >= 0);
	assert_int_equal(nodes[k].kind, V8PROF_NATIVE);
	assert_true(v8prof_samples(p, NULL, NULL) > 100);
	v8prof_free(p);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_real_shape), cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_cpu_parse),      cmocka_unit_test(test_cpu_limits),
		cmocka_unit_test(test_cpu_depth_cut),  cmocka_unit_test(test_names),
		cmocka_unit_test(test_kinds),	       cmocka_unit_test(test_heap_parse),
		cmocka_unit_test(test_heap_errors),    cmocka_unit_test(test_heap_deep),
		cmocka_unit_test(test_fixtures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
