// SPDX-License-Identifier: Apache-2.0
/*
 * The server tab's busiest processes: ps's %CPU (table-driven, with the rows that must give 0),
 * and the document from a /proc made in a temporary directory: kernel threads left out, the top
 * ten by CPU, a comm that is not UTF-8 made valid, an unreadable stat skipped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/capture/busiest.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_cpu_percent(void **state)
{
	static const struct {
		unsigned long long ticks, start;
		double uptime;
		long hz;
		double want;
	} cases[] = {
		{ 100, 0, 1.0, 100, 100.0 },	/* a second of CPU in its one second */
		{ 50, 100, 2.0, 100, 50.0 },	/* started at 1 s, half a second since */
		{ 400, 0, 2.0, 100, 200.0 },	/* two threads busy */
		{ 0, 0, 100.0, 100, 0.0 },	/* idle */
		/* rows that must give 0 */
		{ 100, 1000, 5.0, 100, 0.0 },	/* started after the uptime read */
		{ 100, 500, 5.0, 100, 0.0 },	/* started just now */
		{ 100, 0, 1.0, 0, 0.0 },	/* no clock rate */
		{ 100, 0, 1.0, -1, 0.0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		double got = busiest_cpu_percent(cases[i].ticks, cases[i].start, cases[i].uptime,
						 cases[i].hz);

		assert_true(got > cases[i].want - 0.01 && got < cases[i].want + 0.01);
	}
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A process in the fake /proc: stat with @ticks of user time, started at 0, flags @flags. */
static void fake_proc(const char *root, int pid, const char *comm, unsigned long long ticks,
		      unsigned long flags)
{
	char dir[512], stat[512];

	snprintf(dir, sizeof(dir), "%s/%d", root, pid);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(stat, sizeof(stat),
		 "%d (%s) S 1 %d %d 0 -1 %lu 0 0 0 0 %llu 0 0 0 20 0 1 0 0 0 0\n", pid, comm, pid,
		 pid, flags, ticks);
	put(dir, "stat", stat);
	put(dir, "comm", comm);
	put(dir, "cgroup", "0::/system.slice/busy.service\n");
}

static void test_document(void **state)
{
	char root[] = "/tmp/test_busiest.XXXXXX", cmd[600], *json = NULL;
	struct busiest_opts o = { 0 };
	json_t *doc, *top;
	long hz = sysconf(_SC_CLK_TCK);
	int i;

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "uptime", "100.00 50.00\n");
	for (i = 0; i < 12; i++)
		fake_proc(root, 100 + i, "worker", (unsigned long long)(i + 1) * (unsigned long long)hz,
			  0);
	fake_proc(root, 200, "kthreadd", 1000ULL * (unsigned long long)hz, 0x00200000);
	fake_proc(root, 300, "bad\xff", 50ULL * (unsigned long long)hz, 0);
	assert_int_equal(mkdir(strcat(strcpy(cmd, root), "/400"), 0755), 0); /* no stat */
	o.proc_root = root;
	assert_int_equal(busiest_json(&o, &json), 0);
	doc = json_loads(json, 0, NULL);
	assert_non_null(doc);
	top = json_object_get(doc, "busiest");
	assert_int_equal(json_array_size(top), BUSIEST_TOP);
	/* the busiest is 300 (50 s over 100 s), its comm made valid; no kernel thread */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 0), "pid")), 300);
	assert_true(json_real_value(json_object_get(json_array_get(top, 0), "cpu_percent")) > 49.9);
	assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "comm")),
			    "bad?");
	assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "owner")),
			    "Unit busy.service");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 1), "pid")), 111);
	for (i = 0; i < BUSIEST_TOP; i++)
		assert_int_not_equal(
			json_integer_value(json_object_get(json_array_get(top, (size_t)i), "pid")),
			200);
	assert_int_equal(json_array_size(json_object_get(doc, "services")), 0);
	json_decref(doc);
	free(json);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_percent),
		cmocka_unit_test(test_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
