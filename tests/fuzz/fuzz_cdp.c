// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over runtimes/node/cdp.c and v8prof.c: the input is what a (possibly fake)
 * V8 inspector sends: a CDP message, a /json/list answer, a CPU or heap profile. Every
 * accepted value must respect the bounds of the headers: clean UTF-8 names within their
 * caps, one root, parents shallower than children, stacks that follow the parents leaf first
 * within V8PROF_MAX_DEPTH, a nearest sample that no other sample beats; a refusal must be one
 * of the documented errors.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/node/cdp.h"
#include "runtimes/node/v8prof.h"

/* Stacks walked per input: enough for every node of a seed, bounded for speed. */
#define WALK_MAX 20000

static bool clean(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n <= max && text_utf8_is_clean(s, n);
}

static void check_msg(const uint8_t *data, size_t size)
{
	struct cdp_msg *m = NULL;
	char buf[64];
	int64_t v;
	int ret = cdp_parse((const char *)data, size, &m), r;

	if (ret == -EPROTO || ret == -ENOMEM)
		return;
	if (ret || !m)
		abort();
	if (cdp_msg_is_event(m) != (cdp_msg_id(m) == 0) ||
	    cdp_msg_is_event(m) != (cdp_msg_method(m) != NULL))
		abort();
	if (cdp_msg_method(m) && (!*cdp_msg_method(m) || !clean(cdp_msg_method(m), CDP_METHOD_MAX)))
		abort();
	if (cdp_msg_error(m) && !clean(cdp_msg_error(m), CDP_ERROR_MAX))
		abort();
	r = cdp_msg_result_string(m, "result.value", buf, sizeof(buf));
	if (r >= 0 ? (size_t)r != strlen(buf) || !clean(buf, sizeof(buf) - 1) :
		     r != -ENOENT && r != -EPROTO && r != -ENOSPC)
		abort();
	r = cdp_msg_result_int(m, "result.value", &v);
	if (r && r != -ENOENT && r != -EPROTO)
		abort();
	cdp_msg_free(m);
}

static void check_targets(const uint8_t *data, size_t size)
{
	char path[CDP_WS_PATH_MAX + 2];
	size_t i, n;
	int ret = cdp_targets_parse((const char *)data, size, 9229, path, sizeof(path));

	if (ret == -ENOENT || ret == -EPROTO || ret == -ENOMEM || ret == -EFBIG)
		return;
	if (ret)
		abort();
	n = strlen(path);
	if (n < 2 || n > CDP_WS_PATH_MAX + 1 || path[0] != '/')
		abort();
	for (i = 1; i < n; i++)
		if (!((path[i] >= 'A' && path[i] <= 'Z') || (path[i] >= 'a' && path[i] <= 'z') ||
		      (path[i] >= '0' && path[i] <= '9') || path[i] == '-'))
			abort();
}

static void check_stacks(const struct v8prof *p, const struct v8prof_node *nodes, size_t n)
{
	static uint32_t stack[V8PROF_MAX_DEPTH + 1];
	size_t i, k, got;

	for (i = 0; i < n && i < WALK_MAX; i++) {
		got = v8prof_stack(p, (uint32_t)i, stack, sizeof(stack) / sizeof(stack[0]));
		if (got > V8PROF_MAX_DEPTH || got > nodes[i].depth ||
		    (got < V8PROF_MAX_DEPTH && got != nodes[i].depth) || (got && stack[0] != i))
			abort();
		for (k = 1; k < got; k++)
			if (stack[k] != nodes[stack[k - 1]].parent)
				abort();
	}
}

/* v8prof_nearest() against a linear scan, for a few times around the samples. */
static void check_nearest(const struct v8prof *p)
{
	const uint32_t *idx;
	const int64_t *t;
	size_t n = v8prof_samples(p, &idx, &t), i, j;
	uint64_t d, best;
	uint32_t s;
	int64_t q;
	int ret;

	if (!t) {
		if (v8prof_nearest(p, 0, INT64_MAX, &s) != -ENOENT)
			abort();
		return;
	}
	for (i = 0; i < n && i < 8; i++) {
		q = t[i] + (int64_t)(i % 3) - 1;
		if ((i % 3 == 0 && t[i] == INT64_MIN) || (i % 3 == 2 && t[i] == INT64_MAX))
			q = t[i];
		ret = v8prof_nearest(p, q, 1, &s);
		if (ret || s >= n)
			abort();
		d = t[s] > q ? (uint64_t)t[s] - (uint64_t)q : (uint64_t)q - (uint64_t)t[s];
		for (j = 0; j < n && j < 4096; j++) {
			best = t[j] > q ? (uint64_t)t[j] - (uint64_t)q :
					  (uint64_t)q - (uint64_t)t[j];
			if (best < d || (best == d && (t[j] < t[s] || (t[j] == t[s] && j < s))))
				abort();
		}
	}
}

static void check_profile(const uint8_t *data, size_t size, bool heap)
{
	const struct v8prof_node *nodes;
	struct v8prof *p = NULL;
	struct v8prof_stats st;
	const uint32_t *idx;
	size_t n, ns, i, roots = 0;
	int ret = heap ? v8prof_heap_parse((const char *)data, size, &p) :
			 v8prof_cpu_parse((const char *)data, size, &p);

	if (ret == -EPROTO || ret == -ENOMEM || ret == -EFBIG)
		return;
	if (ret || !p)
		abort();
	n = v8prof_nodes(p, &nodes);
	if (!n || n > V8PROF_MAX_NODES)
		abort();
	for (i = 0; i < n; i++) {
		if (!*nodes[i].function || !clean(nodes[i].function, V8PROF_NAME_MAX) ||
		    !clean(nodes[i].url, V8PROF_NAME_MAX) || nodes[i].line < 0 ||
		    nodes[i].column < 0 || nodes[i].self_bytes > (1ull << 53) ||
		    (unsigned)nodes[i].kind > V8PROF_NATIVE)
			abort();
		if (nodes[i].parent == V8PROF_NONE)
			roots++;
		else if (nodes[i].parent >= n || nodes[i].depth != nodes[nodes[i].parent].depth + 1)
			abort();
	}
	ns = v8prof_samples(p, &idx, NULL);
	for (i = 0; i < ns; i++)
		if (idx[i] >= n)
			abort();
	v8prof_get_stats(p, &st);
	if (roots != 1 || st.nodes != n || st.samples != ns || ns > V8PROF_MAX_SAMPLES ||
	    (heap != (v8prof_sample_bytes(p) != NULL)))
		abort();
	check_stacks(p, nodes, n);
	check_nearest(p);
	v8prof_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_msg(data, size);
	check_targets(data, size);
	check_profile(data, size, false);
	check_profile(data, size, true);
	return 0;
}
