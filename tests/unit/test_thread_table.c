// SPDX-License-Identifier: Apache-2.0
/* Unit tests for daemon/collectors/thread_table.c: state split, commonest waits, dominant stacks, bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bpf/python.h"
#include "daemon/collectors/collector.h"
#include "daemon/collectors/thread_table.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct thread_entry *find(struct thread_table *t, uint32_t tid)
{
	const struct thread_entry *e;
	size_t n, i;

	e = thread_table__entries(t, &n);
	for (i = 0; i < n; i++)
		if (e[i].tid == tid)
			return &e[i];
	return NULL;
}

static void test_snapshots(void **state)
{
	static const struct {
		uint32_t tgid, tid;
		const char *comm;
		enum thread_state st;
		const char *reason;
		int ret;
	} rows[] = {
		{ 10, 10, "main", THREAD_WAITING, "clock_nanosleep", 0 },
		{ 10, 11, "spinner", THREAD_RUNNING, NULL, 0 },
		{ 10, 11, "spinner", THREAD_RUNNABLE, NULL, 0 },
		{ 10, 12, "blocked", THREAD_WAITING, "futex", 0 },
		{ 10, 12, "blocked", THREAD_WAITING, "futex", 0 },
		{ 10, 12, "blocked", THREAD_WAITING, "read", 0 },
		{ 10, 12, "blocked", THREAD_WAITING, NULL, 0 },	/* no reason: "other" */
		{ 10, 12, "blocked", THREAD_STATES, NULL, -EINVAL },	/* error row */
		{ 10, 12, "blocked", (enum thread_state)-1, NULL, -EINVAL },
	};
	struct thread_table *t;
	const struct thread_entry *e;
	size_t i, n;

	(void)state;
	assert_int_equal(thread_table__new(&t), 0);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(thread_table__snapshot(t, rows[i].tgid, rows[i].tid, rows[i].comm,
							rows[i].st, rows[i].reason),
				 rows[i].ret);
	}
	e = thread_table__entries(t, &n);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].tid, 10);	/* sorted by tgid, tid */
	e = find(t, 11);
	assert_int_equal(e->snapshots, 2);
	assert_int_equal(e->state[THREAD_RUNNING], 1);
	assert_int_equal(e->state[THREAD_RUNNABLE], 1);
	e = find(t, 12);
	assert_string_equal(e->comm, "blocked");
	assert_int_equal(e->snapshots, 4);
	assert_int_equal(e->nwaits, 3);
	assert_string_equal(e->waits[0].reason, "futex");
	assert_int_equal(e->waits[0].snapshots, 2);
	/* lookups after sorting still find the same entries */
	assert_int_equal(thread_table__snapshot(t, 10, 12, "blocked", THREAD_WAITING, "read"), 0);
	assert_int_equal(thread_table__snapshot(t, 10, 12, "blocked", THREAD_WAITING, "read"), 0);
	e = find(t, 12);
	assert_int_equal(e->snapshots, 6);
	assert_string_equal(e->waits[0].reason, "read");
	assert_int_equal(e->waits[0].snapshots, 3);
	thread_table__free(t);
}

static void test_waits_bounded(void **state)
{
	static const char *const reasons[] = { "a", "b", "b", "c", "c", "c", "d", "e", "f" };
	struct thread_table *t;
	const struct thread_entry *e;
	size_t i;

	(void)state;
	assert_int_equal(thread_table__new(&t), 0);
	for (i = 0; i < ARRAY_SIZE(reasons); i++)
		assert_int_equal(thread_table__snapshot(t, 1, 1, "x", THREAD_WAITING, reasons[i]),
				 0);
	e = find(t, 1);
	assert_int_equal(e->nwaits, THREAD_MAX_WAITS);
	assert_string_equal(e->waits[0].reason, "c");
	assert_int_equal(e->waits[0].snapshots, 3);
	assert_string_equal(e->waits[1].reason, "b");
	thread_table__free(t);
}

static void test_best_stack(void **state)
{
	static const uint64_t small[] = { 0x10, 0x20 }, big[] = { 0x30, 0x40, 0x50 };
	struct thread_table *t;
	const struct thread_entry *e;

	(void)state;
	assert_int_equal(thread_table__new(&t), 0);
	assert_int_equal(thread_table__offer_stack(t, 5, 6, "w", 100, small, 2, NULL, 0, 0, NULL), 0);
	assert_int_equal(thread_table__offer_stack(t, 5, 6, "w", 300, big, 3, big, 1, 2, "x"), 0);
	assert_int_equal(thread_table__offer_stack(t, 5, 6, "w", 200, small, 2, NULL, 0, 0, NULL), 0);
	e = find(t, 6);
	assert_int_equal(e->best_value, 300);
	assert_int_equal(e->nustack, 3);
	assert_int_equal(e->ustack[2], 0x50);
	assert_int_equal(e->nkstack, 1);
	assert_int_equal(e->best_leaf, 2);
	assert_int_equal(e->snapshots, 0);	/* offered, never snapshotted */
	thread_table__free(t);
}

/* The dominant stack keeps its Python frames; a later, larger stack without any drops them;
 * more than PY_MAX_FRAMES are cut. Rows: offers in order, then what
 * the entry holds. */
static void test_python_frames(void **state)
{
	static struct sampler_py_frame py[PY_MAX_FRAMES + 2];
	static const struct {
		int64_t value[3];	/* offers of one thread; 0: none */
		size_t npy[3];		/* their Python frames */
		int64_t best;
		size_t want_npy;
	} cases[] = {
		{ { 100 }, { 2 }, 100, 2 },
		{ { 100, 50 }, { 2, 5 }, 100, 2 },		/* smaller: not kept */
		{ { 100, 300 }, { 2, 0 }, 300, 0 },		/* larger, native only */
		{ { 100, 300, 400 }, { 0, 3, 1 }, 400, 1 },
		{ { 100 }, { PY_MAX_FRAMES + 2 }, 100, PY_MAX_FRAMES },
	};
	struct thread_table *t;
	const struct thread_entry *e;
	size_t i, k;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(py); k++)
		py[k].code = 0x1000 + k;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(thread_table__new(&t), 0);
		for (k = 0; k < 3 && cases[i].value[k]; k++) {
			struct thread_stack st = { .value = cases[i].value[k], .pyframes = py,
						   .npyframes = cases[i].npy[k], .py_flags = 1 };

			assert_int_equal(thread_table__offer(t, 1, 2, "w", &st), 0);
		}
		e = find(t, 2);
		assert_non_null(e);
		assert_int_equal(e->best_value, cases[i].best);
		assert_int_equal(e->npyframes, cases[i].want_npy);
		assert_int_equal(e->py_flags, cases[i].want_npy ? 1 : 0);
		if (cases[i].want_npy)
			assert_int_equal(e->pyframes[cases[i].want_npy - 1].code,
					 0x1000 + cases[i].want_npy - 1);
		thread_table__free(t);
	}
}

static void test_bound(void **state)
{
	struct thread_table *t;
	uint32_t tid;
	size_t n;

	(void)state;
	assert_int_equal(thread_table__new(&t), 0);
	for (tid = 1; tid <= THREAD_TABLE_MAX; tid++)
		assert_int_equal(thread_table__snapshot(t, 1, tid, "t", THREAD_RUNNING, NULL), 0);
	assert_int_equal(thread_table__snapshot(t, 1, tid, "t", THREAD_RUNNING, NULL), -ENOSPC);
	assert_int_equal(thread_table__dropped(t), 1);
	thread_table__entries(t, &n);
	assert_int_equal(n, THREAD_TABLE_MAX);
	/* an existing thread is still found when full */
	assert_int_equal(thread_table__snapshot(t, 1, 77, "t", THREAD_RUNNING, NULL), 0);
	thread_table__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshots),
		cmocka_unit_test(test_waits_bounded),
		cmocka_unit_test(test_best_stack),
		cmocka_unit_test(test_python_frames),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests_name("thread_table", tests, NULL, NULL);
}
