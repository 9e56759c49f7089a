// SPDX-License-Identifier: Apache-2.0
/*
 * What a JVM's recorded event counts for (runtimes/jvm/jvm_records.h): each question's events
 * and values, the old objects from before the capture, the parks that wait for a signal, the
 * sizes Java 17 does not record, and hidden classes' names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/jvm/jvm_records.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_value(void **state)
{
	static const struct {
		enum jvm_jfr_mode mode;
		struct jfr_event ev;
		enum jvm_rec want;
		int64_t v0;
	} rows[] = {
		/* allocations: their weight */
		{ JVM_JFR_ALLOC, { .kind = JFR_ALLOC_SAMPLE, .weight = 524288 }, JVM_REC_COUNT, 524288 },
		{ JVM_JFR_ALLOC, { .kind = JFR_ALLOC_IN_TLAB, .weight = 7 }, JVM_REC_COUNT, 7 },
		{ JVM_JFR_ALLOC, { .kind = JFR_ALLOC_OUTSIDE, .weight = UINT64_MAX }, JVM_REC_COUNT,
		  INT64_MAX },
		{ JVM_JFR_ALLOC, { .kind = JFR_OLD_OBJECT, .weight = 9 }, JVM_REC_OTHER, 0 },
		{ JVM_JFR_ALLOC, { .kind = JFR_MONITOR_ENTER }, JVM_REC_OTHER, 0 },
		/* held: allocated since the capture began; a size, or an estimate */
		{ JVM_JFR_HELD, { .kind = JFR_OLD_OBJECT, .weight = 4112, .alloc_ns = 2000 },
		  JVM_REC_COUNT, 4112 },
		{ JVM_JFR_HELD, { .kind = JFR_LIVE_OBJECT, .weight = 64, .alloc_ns = 0 }, JVM_REC_COUNT,
		  64 },
		{ JVM_JFR_HELD, { .kind = JFR_OLD_OBJECT, .weight = 4112, .alloc_ns = 999 },
		  JVM_REC_NOT_HELD, 0 },
		{ JVM_JFR_HELD,
		  { .kind = JFR_OLD_OBJECT, .alloc_ns = 1000, .object_class = "long[]",
		    .array_elements = 512 },
		  JVM_REC_ESTIMATED, 16 + 512 * 8 },
		{ JVM_JFR_HELD,
		  { .kind = JFR_OLD_OBJECT, .alloc_ns = 1000, .object_class = "java.util.HashMap",
		    .array_elements = -1 },
		  JVM_REC_ESTIMATED, 16 },
		{ JVM_JFR_HELD, { .kind = JFR_ALLOC_SAMPLE, .weight = 9 }, JVM_REC_OTHER, 0 },
		/* locks: monitor enters and parks on a lock */
		{ JVM_JFR_LOCKS, { .kind = JFR_MONITOR_ENTER, .duration_ns = 20000000 }, JVM_REC_COUNT,
		  20000000 },
		{ JVM_JFR_LOCKS, { .kind = JFR_MONITOR_ENTER, .duration_ns = -5 }, JVM_REC_COUNT, 0 },
		{ JVM_JFR_LOCKS,
		  { .kind = JFR_THREAD_PARK,
		    .duration_ns = 3000000,
		    .object_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync" },
		  JVM_REC_COUNT, 3000000 },
		{ JVM_JFR_LOCKS,
		  { .kind = JFR_THREAD_PARK,
		    .duration_ns = 3000000,
		    .object_class =
			    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject" },
		  JVM_REC_NOT_LOCK, 0 },
		{ JVM_JFR_LOCKS, { .kind = JFR_THREAD_PARK, .duration_ns = 3000000 }, JVM_REC_NOT_LOCK,
		  0 },
		{ JVM_JFR_LOCKS, { .kind = JFR_ALLOC_SAMPLE }, JVM_REC_OTHER, 0 },
		{ JVM_JFR_MODE_COUNT, { .kind = JFR_ALLOC_SAMPLE }, JVM_REC_OTHER, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		int64_t v[2] = { -1, -1 };
		enum jvm_rec got = jvm_records_value(rows[i].mode, &rows[i].ev, 1000, v);

		print_message("row %zu\n", i);
		assert_int_equal(got, rows[i].want);
		if (got == JVM_REC_COUNT || got == JVM_REC_ESTIMATED) {
			assert_int_equal(v[0], rows[i].v0);
			assert_int_equal(v[1], 1);
		} else {
			assert_int_equal(v[0], -1);
		}
	}
}

static void test_sizes(void **state)
{
	static const struct {
		const char *cls;
		int64_t elems;
		uint64_t want;
	} rows[] = {
		{ "byte[]", 1024, 16 + 1024 },	   { "boolean[]", 3, 19 },
		{ "char[]", 10, 36 },		   { "short[]", 10, 36 },
		{ "int[]", 10, 56 },		   { "float[]", 10, 56 },
		{ "long[]", 512, 4112 },	   { "double[]", 1, 24 },
		{ "java.lang.String[]", 10, 56 },  { "long[][]", 2, 24 },
		{ "java.lang.String", -1, 16 },	   { "long[]", -1, 16 },
		{ "[]", 5, 16 },		   { NULL, 5, 16 },
		{ "", 5, 16 },			   { "long[]", (int64_t)1 << 50, 16 },
		{ "long[]", 0, 16 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(jvm_records_estimate_size(rows[i].cls, rows[i].elems), rows[i].want);
}

static void test_class_len(void **state)
{
	static const struct {
		const char *cls;
		size_t want;
	} rows[] = {
		{ "JavaMem", 7 },
		{ "JavaMem$$Lambda/0x0000000033040210", 15 },
		{ "JfrWork$$Lambda$1+0x0000000800c01000/622488023", 17 },
		{ "a.b.C$Inner", 11 },
		{ "x+y", 3 },
		{ "", 0 },
		{ "/0x", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(jvm_records_class_len(rows[i].cls), rows[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_class_len),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
