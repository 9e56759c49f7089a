// SPDX-License-Identifier: Apache-2.0
/*
 * Merging native and Python frames. Native frames are written leaf first as letters (o: other
 * code, e: the eval loop, h: interpreter glue), Python frames as p (in a group) and E (the
 * group's entry frame); the expected stack lists nI (native frame I) and pJ (Python frame J).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/python/py_merge.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_merge(void **state)
{
	static const struct {
		const char *native, *py;
		size_t max;
		int ret;
		const char *want;
	} cases[] = {
		/* 3.10-style pure Python: eval per frame, glue between (dropped) and under the root
		 * (kept: how the interpreter was entered) */
		{ "eheheho", "EEE", 0, 5, "p0 p1 p2 n5 n6" },
		/* 3.11+: one eval run holds three frames, a second holds <module> */
		{ "ehhehoo", "ppEE", 0, 7, "p0 p1 p2 p3 n4 n5 n6" },
		/* a C extension (leaf) called from Python: above its caller */
		{ "ooehoo", "EE", 0, 7, "n0 n1 p0 n3 n4 n5 p1" },
		/* interpreter glue at the leaf (a builtin) stays: it is where the time went */
		{ "hhehoo", "E", 0, 6, "n0 n1 p0 n3 n4 n5" },
		/* native code that calls back into Python: both, in order */
		{ "eoehoo", "EE", 0, 6, "p0 n1 p1 n3 n4 n5" },
		{ "ehoeoo", "EE", 0, 6, "p0 n1 n2 p1 n4 n5" },
		/* the native stack was lost: only Python frames */
		{ "", "ppE", 0, 3, "p0 p1 p2" },
		/* native stack cut short: the leftover groups go at the root end */
		{ "ehe", "EEE", 0, 3, "p0 p1 p2" },
		/* Python stack truncated: the extra eval frames go */
		{ "eheheoo", "E", 0, 3, "p0 n5 n6" },
		/* no Python frames (a thread outside Python): native unchanged */
		{ "oho", "", 0, 3, "n0 n1 n2" },
		{ "", "", 0, 0, "" },
		/* off the CPU (wall, locks): blocked in a builtin (time.sleep) called from Python:
		 * libc's clock_nanosleep and the builtin above the caller, whose run holds two
		 * frames */
		{ "ohhehoo", "pE", 0, 8, "n0 n1 n2 p0 p1 n4 n5 n6" },
		/* waiting for the GIL on the way back from a C extension (hashlib): libc, the
		 * interpreter's wait, the extension, then its caller */
		{ "ohhoehoo", "pE", 0, 9, "n0 n1 n2 n3 p0 p1 n5 n6 n7" },
		/* memory growth: the allocator under a builtin under a Python loop of 3.10 */
		{ "oohehe", "EE", 0, 5, "n0 n1 n2 p0 p1" },
		/* out of room */
		{ "ooeo", "E", 2, -ENOSPC, NULL },
		{ "ohhe", "pE", 3, -ENOSPC, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t kinds[32];
		bool entry[32];
		struct py_merged out[64];
		char got[256] = "";
		size_t nn = strlen(cases[i].native), np = strlen(cases[i].py), k;
		int n;

		print_message("case %zu\n", i);
		for (k = 0; k < nn; k++)
			kinds[k] = cases[i].native[k] == 'e' ? PY_NATIVE_EVAL :
				   cases[i].native[k] == 'h' ? PY_NATIVE_HELPER :
							       PY_NATIVE_OTHER;
		for (k = 0; k < np; k++)
			entry[k] = cases[i].py[k] == 'E';
		n = py_merge(kinds, nn, entry, np, out, cases[i].max ? cases[i].max : 64);
		assert_int_equal(n, cases[i].ret);
		if (n < 0)
			continue;
		for (k = 0; k < (size_t)n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%c%u",
				 k ? " " : "", out[k].python ? 'p' : 'n', out[k].index);
		assert_string_equal(got, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
