// SPDX-License-Identifier: Apache-2.0
/*
 * burn: the fixed CPU workload of `make bench`. One process runs a deterministic integer loop
 * (the same work per iteration every time) for SECONDS of wall time, then prints on stdout
 *
 *     burn iters=<N> wall=<seconds> cpu=<seconds> rate=<iterations per wall second>
 *
 * bench/run.sh starts one per core; the rate under a profiler against the rate with no profiler
 * is the workload's slowdown (what the profiler takes from the machine, in-kernel sampling
 * included, which the profiler's own CPU seconds do not show).
 *
 * Usage: burn SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BUF_WORDS 1024
#define BATCH 16384 /* iterations between clock reads: about 20-40 us */

static volatile uint64_t buf[BUF_WORDS];
volatile uint64_t burn_sink;

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t burn_batch(uint64_t h, uint64_t base)
{
	for (uint64_t i = base; i < base + BATCH; i++) {
		h ^= buf[i % BUF_WORDS];
		h *= 0x100000001b3ull;
		buf[i % BUF_WORDS] = h >> 7;
	}
	return h;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	double t0, end, t1, c0;
	uint64_t iters = 0, h = 0xcbf29ce484222325ull;

	if (seconds <= 0) {
		fprintf(stderr, "usage: burn SECONDS\n");
		return 2;
	}
	for (unsigned i = 0; i < BUF_WORDS; i++)
		buf[i] = i * 0x9e3779b97f4a7c15ull;
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now_s(CLOCK_MONOTONIC);
	end = t0 + seconds;
	do {
		h = burn_batch(h, iters);
		iters += BATCH;
	} while ((t1 = now_s(CLOCK_MONOTONIC)) < end);
	burn_sink = h;
	printf("burn iters=%llu wall=%.3f cpu=%.3f rate=%.0f\n", (unsigned long long)iters, t1 - t0,
	       now_s(CLOCK_PROCESS_CPUTIME_ID) - c0, (double)iters / (t1 - t0));
	return 0;
}
