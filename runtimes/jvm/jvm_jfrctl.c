// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_jfrctl.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

/* The settings of each question: the values are JVM_JFR_ALLOC_RATE and
 * JVM_JFR_LOCK_THRESHOLD_MS (tests/unit/test_jvm_jfrctl.c checks they agree). */
static const char alloc_jfc[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<configuration version=\"2.0\" label=\"SlideOps\" provider=\"SlideOps\">\n"
	"  <event name=\"jdk.ObjectAllocationSample\">\n"
	"    <setting name=\"enabled\">true</setting>\n"
	"    <setting name=\"throttle\">1000/s</setting>\n"
	"    <setting name=\"stackTrace\">true</setting>\n"
	"  </event>\n"
	"</configuration>\n";

static const char held_jfc[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<configuration version=\"2.0\" label=\"SlideOps\" provider=\"SlideOps\">\n"
	"  <event name=\"jdk.OldObjectSample\">\n"
	"    <setting name=\"enabled\">true</setting>\n"
	"    <setting name=\"stackTrace\">true</setting>\n"
	"    <setting name=\"cutoff\">0 ns</setting>\n"
	"  </event>\n"
	"</configuration>\n";

static const char locks_jfc[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<configuration version=\"2.0\" label=\"SlideOps\" provider=\"SlideOps\">\n"
	"  <event name=\"jdk.JavaMonitorEnter\">\n"
	"    <setting name=\"enabled\">true</setting>\n"
	"    <setting name=\"threshold\">1 ms</setting>\n"
	"    <setting name=\"stackTrace\">true</setting>\n"
	"  </event>\n"
	"  <event name=\"jdk.ThreadPark\">\n"
	"    <setting name=\"enabled\">true</setting>\n"
	"    <setting name=\"threshold\">1 ms</setting>\n"
	"    <setting name=\"stackTrace\">true</setting>\n"
	"  </event>\n"
	"</configuration>\n";

static const char *const settings[JVM_JFR_MODE_COUNT] = {
	[JVM_JFR_ALLOC] = alloc_jfc,
	[JVM_JFR_HELD] = held_jfc,
	[JVM_JFR_LOCKS] = locks_jfc,
};

const char *jvm_jfrctl_settings(enum jvm_jfr_mode mode)
{
	return (unsigned)mode < JVM_JFR_MODE_COUNT ? settings[mode] : NULL;
}

static bool name_ok(const char *s)
{
	bool digits = true;
	size_t i;

	if (!s || !*s || strlen(s) > 64)
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
		digits = digits && c >= '0' && c <= '9';
	}
	return !digits;
}

static bool path_ok(const char *s)
{
	return text_plain_path(s, 256);
}

static int put(size_t size, int n)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size ? -ENOSPC : n;
}

int jvm_jfrctl_start(char *buf, size_t size, const char *name, const char *settings_path,
		     unsigned int secs, const char *file)
{
	if (!name_ok(name) || !path_ok(settings_path) || !path_ok(file) || !secs)
		return -EINVAL;
	return put(size,
		   snprintf(buf, size,
			    "JFR.start name=%s settings=%s disk=false duration=%us filename=%s",
			    name, settings_path, secs, file));
}

int jvm_jfrctl_stop(char *buf, size_t size, const char *name)
{
	if (!name_ok(name))
		return -EINVAL;
	return put(size, snprintf(buf, size, "JFR.stop name=%s", name));
}

/* The first line of @text with something on it, into @why. */
static void first_line(const char *text, size_t len, char *why, size_t size)
{
	size_t i = 0, j;

	while (i < len && (text[i] == '\n' || text[i] == '\r' || text[i] == ' '))
		i++;
	for (j = i; j < len && text[j] != '\n' && text[j] != '\r'; j++)
		;
	if (j - i > 200)
		j = i + 200;
	if (!size)
		return;
	if (j == i) {
		snprintf(why, size, "the JVM gave no answer");
		return;
	}
	text_utf8_sanitize_copy(why, size, text + i, j - i);
}

int jvm_jfrctl_answer(enum jvm_jfr_step step, const char *text, size_t len, char *why, size_t size)
{
	static const char *const done[] = {
		[JVM_JFR_STEP_START] = "Started recording ",
		[JVM_JFR_STEP_STOP] = "Stopped recording ",
	};

	if ((unsigned)step < sizeof(done) / sizeof(done[0]) && text &&
	    memmem(text, len, done[step], strlen(done[step])))
		return 0;
	first_line(text ? text : "", text ? len : 0, why, size);
	return -EREMOTEIO;
}
