// SPDX-License-Identifier: Apache-2.0
/*
 * churn: short-lived processes started at a steady rate, for the integration tests of the
 * agent's continuous profiling (a day of processes coming and going must leave its caches as
 * large as the processes living).
 *
 *   churn RATE SECONDS MAX   starts RATE processes a second for SECONDS, MAX at the most, then
 *                            reaps them and prints "started N, failed M, in S s".
 *   churn child              (what each started process runs) burns about 1 ms of CPU time in
 *                            churn_child_work, then exits 0.
 *
 * Each process is this program again (/proc/self/exe, posix_spawn: a fork and an exec), so it
 * has its own mappings and stacks for a sampler to see. At most MAX_LIVE children live at once:
 * on a machine too busy to run them the rate drops instead of the process count growing.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define MAX_LIVE 64
#define CHILD_BURN_NS 1000000ull

extern char **environ;
volatile uint64_t churn_sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What each started process does: integer work until @burn_ns of its CPU time has passed. */
HOT_FN uint64_t churn_child_work(uint64_t burn_ns)
{
	uint64_t h = 0xcbf29ce484222325ull, until = now_ns(CLOCK_PROCESS_CPUTIME_ID) + burn_ns;

	do {
		for (int k = 0; k < 4096; k++) {
			h ^= (uint64_t)k;
			h *= 0x100000001b3ull;
		}
	} while (now_ns(CLOCK_PROCESS_CPUTIME_ID) < until);
	return h;
}

/* Reaps the children that ended (all of them with @block, one at least while @live is full). */
static void reap(unsigned int *live, int block)
{
	int st;

	while (*live) {
		pid_t p = waitpid(-1, &st, block || *live >= MAX_LIVE ? 0 : WNOHANG);

		if (p <= 0) {
			if (p < 0 && errno == EINTR)
				continue;
			break;
		}
		(*live)--;
	}
}

int main(int argc, char **argv)
{
	char self[4096], *cargv[3];
	uint64_t t0, period, end, next;
	unsigned long rate, secs, max, started = 0, failed = 0;
	unsigned int live = 0;
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "child")) {
		churn_sink = churn_child_work(CHILD_BURN_NS);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: churn RATE SECONDS MAX | churn child\n");
		return 2;
	}
	rate = strtoul(argv[1], NULL, 10);
	secs = strtoul(argv[2], NULL, 10);
	max = strtoul(argv[3], NULL, 10);
	if (!rate || rate > 10000 || !secs || secs > 3600 || !max) {
		fprintf(stderr, "churn: RATE 1-10000, SECONDS 1-3600, MAX > 0\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("churn: readlink /proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	cargv[0] = "churn";
	cargv[1] = "child";
	cargv[2] = NULL;

	period = 1000000000ull / rate;
	t0 = now_ns(CLOCK_MONOTONIC);
	end = t0 + secs * 1000000000ull;
	for (next = t0; started + failed < max; next += period) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		pid_t pid;
		int err;

		if (now >= end)
			break;
		if (next > now) {
			struct timespec ts = { (time_t)(next / 1000000000ull),
					       (long)(next % 1000000000ull) };

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		} else if (now - next > 1000000000ull) {
			next = now; /* more than 1 s behind: no burst to catch up */
		}
		reap(&live, 0);
		err = posix_spawn(&pid, self, NULL, NULL, cargv, environ);
		if (err) {
			failed++;
			continue;
		}
		started++;
		live++;
	}
	reap(&live, 1);
	printf("started %lu, failed %lu, in %.1f s\n", started, failed,
	       (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	return failed ? 1 : 0;
}
