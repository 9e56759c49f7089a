// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/clock.c: RFC 3339 timestamps, deadlines, monotonic time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/clock.h"

#define NS 1000000000ll

static void test_rfc3339(void **state)
{
	static const struct {
		int64_t t_ns;
		int digits;
		size_t size;
		int ret;
		const char *want;
	} cases[] = {
		{ 0, 0, 64, 20, "1970-01-01T00:00:00Z" },
		{ 0, 3, 64, 24, "1970-01-01T00:00:00.000Z" },
		{ 0, 9, 64, 30, "1970-01-01T00:00:00.000000000Z" },
		{ 1796154502175123456ll, 0, 64, 20, "2026-12-01T19:48:22Z" },
		{ 1796154502175123456ll, 3, 64, 24, "2026-12-01T19:48:22.175Z" },
		{ 1796154502175123456ll, 6, 64, 27, "2026-12-01T19:48:22.175123Z" },
		{ 1796154502175123456ll, 9, 64, 30, "2026-12-01T19:48:22.175123456Z" },
		{ 1796154502999999999ll, 3, 64, 24, "2026-12-01T19:48:22.999Z" },	/* truncates */
		{ 1796154502175123456ll, 1, 64, 20, "2026-12-01T19:48:22Z" },	/* other: 0 */
		{ 1796154502175123456ll, -3, 64, 20, "2026-12-01T19:48:22Z" },
		{ 1796154502175123456ll, 12, 64, 20, "2026-12-01T19:48:22Z" },
		{ 951782400ll * NS, 0, 64, 20, "2000-02-29T00:00:00Z" },		/* leap day */
		{ -1, 9, 64, 30, "1969-12-31T23:59:59.999999999Z" },
		{ -1, 0, 64, 20, "1969-12-31T23:59:59Z" },
		{ -NS, 3, 64, 24, "1969-12-31T23:59:59.000Z" },
		{ -NS - 1, 3, 64, 24, "1969-12-31T23:59:58.999Z" },
		{ -1500000000ll, 3, 64, 24, "1969-12-31T23:59:58.500Z" },
		{ INT64_MIN, 9, 64, 30, "1677-09-21T00:12:43.145224192Z" },
		{ INT64_MAX, 9, 64, 30, "2262-04-11T23:47:16.854775807Z" },
		{ INT64_MAX, 9, CLOCK_RFC3339_MAX, 30, "2262-04-11T23:47:16.854775807Z" },
		{ 0, 0, 21, 20, "1970-01-01T00:00:00Z" },	/* exactly fits */
		{ 0, 3, 25, 24, "1970-01-01T00:00:00.000Z" },
		{ 0, 0, 20, -ENOSPC, "" },			/* no room for the Z */
		{ 0, 0, 19, -ENOSPC, "" },			/* no room for the seconds */
		{ 0, 3, 24, -ENOSPC, "" },
		{ 0, 3, 21, -ENOSPC, "" },			/* room for '.', not the digits */
		{ 0, 9, 29, -ENOSPC, "" },
		{ 0, 0, 1, -ENOSPC, "" },
		{ 0, 0, 0, -ENOSPC, NULL },			/* nothing may be written */
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(clock_rfc3339(buf, cases[i].size, cases[i].t_ns, cases[i].digits),
				 cases[i].ret);
		if (cases[i].want)
			assert_string_equal(buf, cases[i].want);
		else
			assert_int_equal(buf[0], 'x');
	}
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NS + ts->tv_nsec;
}

static void test_deadline(void **state)
{
	static const struct {
		clockid_t clk;
		uint64_t ms;
	} cases[] = {
		{ CLOCK_MONOTONIC, 0 },    { CLOCK_MONOTONIC, 1 },    { CLOCK_MONOTONIC, 999 },
		{ CLOCK_MONOTONIC, 1000 }, { CLOCK_MONOTONIC, 1001 }, { CLOCK_MONOTONIC, 1999 },
		{ CLOCK_MONOTONIC, 86400123 }, { CLOCK_REALTIME, 0 }, { CLOCK_REALTIME, 999 },
		{ CLOCK_REALTIME, 2500 },
	};
	struct timespec before, ts, after;
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		/* many tries so that some land with a large tv_nsec and must carry */
		for (r = 0; r < 2000; r++) {
			clock_gettime(cases[i].clk, &before);
			clock_deadline(&ts, cases[i].clk, cases[i].ms);
			clock_gettime(cases[i].clk, &after);
			assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < NS);
			assert_true(ts_ns(&ts) >= ts_ns(&before) + (int64_t)cases[i].ms * 1000000);
			assert_true(ts_ns(&ts) <= ts_ns(&after) + (int64_t)cases[i].ms * 1000000);
		}
	}
}

static void test_monotonic(void **state)
{
	uint64_t ns, prev_ns = 0, ms, prev_ms = 0;
	double s, prev_s = 0;
	struct timespec ts;
	int i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		ns = clock_mono_ns();
		ms = clock_mono_ms();
		s = clock_mono_s();
		assert_true(ns >= prev_ns);
		assert_true(ms >= prev_ms);
		assert_true(s >= prev_s);
		assert_true(ms >= ns / 1000000);
		prev_ns = ns;
		prev_ms = ms;
		prev_s = s;
	}
	assert_true(prev_ns > 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	/* real time agrees with the libc clock to the second, in both units */
	assert_true(clock_real_ns() / NS - ts.tv_sec <= 1);
	assert_true((int64_t)(clock_real_ms() / 1000) - ts.tv_sec <= 1);
	assert_true(clock_real_ns() >= (int64_t)ts.tv_sec * NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
