// SPDX-License-Identifier: Apache-2.0
/* daemon/capture/frames.c: the process names a long-running sampler keeps across intervals
 * (frames__next()): the living kept, the exited dropped, the counts started again. */
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

#include "base/array.h"
#include "daemon/capture/frames.h"

static char root[] = "/tmp/test_frames.XXXXXX";

/* @root/@pid/comm holding @comm. */
static void make_proc(uint32_t pid, const char *comm)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%u/comm", root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", comm);
	fclose(f);
}

static void drop_proc(uint32_t pid)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%u/comm", root, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u", root, pid);
	rmdir(path);
}

static void test_next(void **state)
{
	static const struct {
		uint32_t pid;
		const char *comm;
		bool exits; /* before the interval ends */
	} procs[] = {
		{ 10, "billing", false },
		{ 11, "cron-job", true },
		{ 12, "nginx", false },
		{ 13, "sh", true },
	};
	struct frames_opts fo = { .question = Q_CPU, .proc_root = root };
	struct frames *f;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (i = 0; i < ARRAY_SIZE(procs); i++)
		make_proc(procs[i].pid, procs[i].comm);
	assert_int_equal(frames__new(&fo, &f), 0);
	for (i = 0; i < ARRAY_SIZE(procs); i++)
		frames__remember_name(f, procs[i].pid);
	for (i = 0; i < ARRAY_SIZE(procs); i++) {
		print_message("before: case %zu\n", i);
		assert_string_equal(frames__process_name(f, procs[i].pid, "?"), procs[i].comm);
		if (procs[i].exits)
			drop_proc(procs[i].pid);
	}
	/* the interval's samples were named: the next one forgets the processes gone */
	frames__next(f);
	for (i = 0; i < ARRAY_SIZE(procs); i++) {
		print_message("after: case %zu\n", i);
		assert_string_equal(frames__process_name(f, procs[i].pid, "?"),
				    procs[i].exits ? "?" : procs[i].comm);
	}
	assert_int_equal(frames__samples(f), 0);
	assert_int_equal(frames__unattributed(f), 0);
	/* a pid used again by a new process is read again */
	make_proc(11, "backup");
	frames__remember_name(f, 11);
	assert_string_equal(frames__process_name(f, 11, "?"), "backup");
	frames__free(f);
	for (i = 0; i < ARRAY_SIZE(procs); i++)
		drop_proc(procs[i].pid);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
