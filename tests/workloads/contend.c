// SPDX-License-Identifier: Apache-2.0
/*
 * contend: four threads fighting over one pthread mutex, for the lock-wait collector.
 *
 * Each thread loops in contended_update: lock, about 50-200 us of integer work on the shared
 * state (the length drawn at random per iteration), unlock. With four threads on fewer cores
 * most lock attempts find the mutex taken and sleep in futex(FUTEX_WAIT_PRIVATE) inside glibc's
 * __lll_lock_wait, called from pthread_mutex_lock, called from contended_update.
 *
 * At exit it prints one line: iterations per thread and in total, and the time each thread spent
 * in pthread_mutex_lock (measured with CLOCK_MONOTONIC around the call), to compare with what
 * the collector reports.
 *
 * Usage: contend [SECONDS]   runs for SECONDS of wall time (default 5).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define NTHREADS 4
#define BUF_WORDS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t shared[BUF_WORDS];
static uint64_t deadline_ns;

struct worker {
	pthread_t thread;
	unsigned int seed;
	uint64_t iterations;
	uint64_t lock_ns;	/* time spent in pthread_mutex_lock */
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One critical section: takes the lock and works on the shared state for @work_ns of wall time.
 * Returns the time spent waiting for the lock. */
HOT_FN uint64_t contended_update(uint64_t work_ns)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1, h;
	unsigned int i = 0;

	pthread_mutex_lock(&lock);
	t1 = now_ns(CLOCK_MONOTONIC);
	h = shared[0];
	while (now_ns(CLOCK_MONOTONIC) - t1 < work_ns) {
		for (int k = 0; k < 256; k++, i++) {
			h ^= shared[i % BUF_WORDS];
			h *= 0x100000001b3ull;
			shared[i % BUF_WORDS] = h >> 7;
		}
	}
	pthread_mutex_unlock(&lock);
	return t1 - t0;
}

static void *run(void *arg)
{
	struct worker *w = arg;

	while (now_ns(CLOCK_MONOTONIC) < deadline_ns) {
		uint64_t work_ns = 50000 + (uint64_t)(rand_r(&w->seed) % 150001);

		w->lock_ns += contended_update(work_ns);
		w->iterations++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[NTHREADS] = {};
	uint64_t total = 0, lock_ns = 0;
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	int i, err;

	if (seconds <= 0) {
		fprintf(stderr, "usage: contend [SECONDS]\n");
		return EXIT_FAILURE;
	}
	deadline_ns = now_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
	for (i = 0; i < NTHREADS; i++) {
		workers[i].seed = 12345u + (unsigned int)i;
		err = pthread_create(&workers[i].thread, NULL, run, &workers[i]);
		if (err) {
			fprintf(stderr, "pthread_create: error %d\n", err);
			return EXIT_FAILURE;
		}
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(workers[i].thread, NULL);
	printf("contend:");
	for (i = 0; i < NTHREADS; i++) {
		printf(" t%d=%llu", i, (unsigned long long)workers[i].iterations);
		total += workers[i].iterations;
		lock_ns += workers[i].lock_ns;
	}
	printf(" total=%llu lock_wait_ms=%.1f\n", (unsigned long long)total, lock_ns / 1e6);
	return EXIT_SUCCESS;
}
