// SPDX-License-Identifier: Apache-2.0
/*
 * What we say to a JVM's Flight Recorder (runtimes/jvm/jvm_jfrctl.h): the settings of each
 * question, the command lines (and the names and paths they refuse), and how the JVM's answers
 * of Java 17 and 25 (copied from real jcmd output) are read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/text.h"
#include "runtimes/jvm/jvm_jfrctl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_settings(void **state)
{
	static const struct {
		enum jvm_jfr_mode mode;
		const char *has, *not;
	} rows[] = {
		{ JVM_JFR_ALLOC, "<event name=\"jdk.ObjectAllocationSample\">", "OldObjectSample" },
		{ JVM_JFR_ALLOC, "<setting name=\"throttle\">1000/s</setting>", "JavaMonitorEnter" },
		{ JVM_JFR_HELD, "<event name=\"jdk.OldObjectSample\">", "ObjectAllocationSample" },
		{ JVM_JFR_HELD, "<setting name=\"cutoff\">0 ns</setting>", "ThreadPark" },
		{ JVM_JFR_LOCKS, "<event name=\"jdk.JavaMonitorEnter\">", "OldObjectSample" },
		{ JVM_JFR_LOCKS, "<event name=\"jdk.ThreadPark\">", "ObjectAllocation" },
		{ JVM_JFR_LOCKS, "<setting name=\"threshold\">1 ms</setting>", "throttle" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *s = jvm_jfrctl_settings(rows[i].mode);

		assert_non_null(s);
		assert_non_null(strstr(s, rows[i].has));
		assert_null(strstr(s, rows[i].not));
		assert_non_null(strstr(s, "<setting name=\"stackTrace\">true</setting>"));
		assert_true(text_utf8_is_valid(s, strlen(s)));
		assert_int_equal(strncmp(s, "<?xml", 5), 0);
	}
	/* the values agree with the header's */
	{
		char want[64];

		snprintf(want, sizeof(want), "<setting name=\"throttle\">%d/s</setting>",
			 JVM_JFR_ALLOC_RATE);
		assert_non_null(strstr(jvm_jfrctl_settings(JVM_JFR_ALLOC), want));
		snprintf(want, sizeof(want), "<setting name=\"threshold\">%d ms</setting>",
			 JVM_JFR_LOCK_THRESHOLD_MS);
		assert_non_null(strstr(jvm_jfrctl_settings(JVM_JFR_LOCKS), want));
	}
	assert_null(jvm_jfrctl_settings(JVM_JFR_MODE_COUNT));
	assert_null(jvm_jfrctl_settings((enum jvm_jfr_mode)-1));
}

static void test_commands(void **state)
{
	static const struct {
		int which; /* 0 start, 2 stop */
		const char *name, *path;
		int ret;
		const char *want;
	} rows[] = {
		{ 0, "slideops-0a1b2c", "/tmp/.slideops-0123456789abcdef/slideops.jfc", 0,
		  "JFR.start name=slideops-0a1b2c settings=/tmp/.slideops-0123456789abcdef/"
		  "slideops.jfc disk=false duration=90s filename=/var/tmp/d/x.jfr" },
		{ 2, "slideops-0a1b2c", NULL, 0, "JFR.stop name=slideops-0a1b2c" },
		/* a number is a recording id to HotSpot */
		{ 2, "12345", NULL, -EINVAL, NULL },
		{ 0, "", "/tmp/a", -EINVAL, NULL },
		{ 0, NULL, "/tmp/a", -EINVAL, NULL },
		{ 0, "a b", "/tmp/a", -EINVAL, NULL },
		{ 0, "a=b", "/tmp/a", -EINVAL, NULL },
		/* paths: absolute, nothing the option parser splits on */
		{ 0, "n", "tmp/a", -EINVAL, NULL },
		{ 0, "n", "/tmp/a b", -EINVAL, NULL },
		{ 0, "n", "/tmp/a,b", -EINVAL, NULL },
		{ 0, "n", "/tmp/a=b", -EINVAL, NULL },
		{ 0, "n", "/tmp/\xc3\xa9", -EINVAL, NULL },
		{ 0, "n", NULL, -EINVAL, NULL },
	};
	char buf[256];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		ret = rows[i].which == 0 ? jvm_jfrctl_start(buf, sizeof(buf), rows[i].name,
							    rows[i].path, 90, "/var/tmp/d/x.jfr") :
					   jvm_jfrctl_stop(buf, sizeof(buf), rows[i].name);
		if (rows[i].ret) {
			assert_int_equal(ret, rows[i].ret);
			continue;
		}
		assert_int_equal(ret, (int)strlen(rows[i].want));
		assert_string_equal(buf, rows[i].want);
	}
	/* too small a buffer */
	assert_int_equal(jvm_jfrctl_stop(buf, 10, "slideops-0a1b2c"), -ENOSPC);
	assert_int_equal(jvm_jfrctl_start(buf, sizeof(buf), "n", "/tmp/a", 0, "/tmp/b"), -EINVAL);
	assert_int_equal(jvm_jfrctl_start(buf, sizeof(buf), "n", "/tmp/a", 9, "b"), -EINVAL);
	assert_int_equal(jvm_jfrctl_start(buf, sizeof(buf), "n", "/tmp/a", 9, NULL), -EINVAL);
	assert_int_equal(jvm_jfrctl_start(buf, sizeof(buf), "n",
					  "/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					  90, "/tmp/b"),
			 -EINVAL);
}

static void test_answers(void **state)
{
	static const struct {
		enum jvm_jfr_step step;
		const char *text;
		int ret;
		const char *why;
	} rows[] = {
		{ JVM_JFR_STEP_START,
		  "Started recording 1.\n\nUse jcmd 5738 JFR.dump name=so3 filename=FILEPATH to copy "
		  "recording data to file.\n",
		  0, NULL },
		/* Java 17 warns first */
		{ JVM_JFR_STEP_START,
		  "Warning! The .jfc option/setting 'x' doesn't exist.\nStarted recording 2. No limit "
		  "specified, using maxsize=250MB as default.\n",
		  0, NULL },
		{ JVM_JFR_STEP_STOP, "Stopped recording \"so3\".\n", 0, NULL },
		{ JVM_JFR_STEP_STOP,
		  "Stopped recording \"t\", 125.4 kB written to:\n\n/tmp/jfrx/st.jfr\n", 0, NULL },
		/* failures, with the JVM's first line */
		{ JVM_JFR_STEP_START, "Could not parse settings file '/nonexist.jfc'\n", -EREMOTEIO,
		  "Could not parse settings file '/nonexist.jfc'" },
		{ JVM_JFR_STEP_START, "\n\nCould not find file '/nonexist.jfc'", -EREMOTEIO,
		  "Could not find file '/nonexist.jfc'" },
		{ JVM_JFR_STEP_STOP,
		  "Could not find nosuch.\n\nUse JFR.check without options to see list of all "
		  "available recordings.\n",
		  -EREMOTEIO, "Could not find nosuch." },
		{ JVM_JFR_STEP_STOP,
		  "No recordings to dump from. Use JFR.start to start a recording.\n", -EREMOTEIO,
		  "No recordings to dump from. Use JFR.start to start a recording." },
		/* the right words for another step do not count */
		{ JVM_JFR_STEP_STOP, "Started recording 1.\n", -EREMOTEIO, "Started recording 1." },
		{ JVM_JFR_STEP_START, "Stopped recording \"x\".\n", -EREMOTEIO,
		  "Stopped recording \"x\"." },
		{ JVM_JFR_STEP_STOP, "", -EREMOTEIO, "the JVM gave no answer" },
		/* bad bytes come back valid */
		{ JVM_JFR_STEP_STOP, "bad \xff\xfe byte\n", -EREMOTEIO, "bad ?? byte" },
	};
	char why[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		why[0] = '\0';
		assert_int_equal(jvm_jfrctl_answer(rows[i].step, rows[i].text, strlen(rows[i].text),
						   why, sizeof(why)),
				 rows[i].ret);
		if (rows[i].why)
			assert_string_equal(why, rows[i].why);
		assert_true(text_utf8_is_valid(why, strlen(why)));
	}
	/* a long first line is cut at 200 bytes */
	{
		char text[600];

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		assert_int_equal(jvm_jfrctl_answer(JVM_JFR_STEP_START, text, strlen(text), why,
						   sizeof(why)),
				 -EREMOTEIO);
		assert_int_equal(strlen(why), 200);
	}
	assert_int_equal(jvm_jfrctl_answer(JVM_JFR_STEP_START, NULL, 0, why, sizeof(why)),
			 -EREMOTEIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
