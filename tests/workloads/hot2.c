// SPDX-License-Identifier: Apache-2.0
/*
 * hot2: a single-threaded workload with two known hot functions, for the integration tests.
 *
 *   build_report    about 75% of the CPU time
 *   compress_chunk  about 25% of the CPU time
 *
 * Both do pure integer work over a volatile buffer and alternate in slices of thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID): 3u ms in build_report, then u ms in compress_chunk, where u is drawn
 * at random from [1, 3] ms for each round. The ratio is exact per round whatever the clock speed
 * or preemption; the random slice length keeps a periodic sampler (99 Hz) from aliasing with
 * the rounds. The clock is read only every CHECK_EVERY iterations (about every 20-50 us), so
 * almost every sample lands in the two functions themselves.
 *
 * Usage: hot2 [SECONDS]   runs for SECONDS of wall time, or until killed when omitted or 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define BUF_WORDS 1024
#define CHECK_EVERY 65536

static volatile uint64_t buf[BUF_WORDS];
volatile uint64_t hot2_sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The bigger one: ~75%. Hashes the buffer until @until_ns of thread CPU time. */
HOT_FN uint64_t build_report(uint64_t until_ns)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned i = 0;

	for (;;) {
		for (int k = 0; k < CHECK_EVERY; k++, i++) {
			h ^= buf[i % BUF_WORDS];
			h *= 0x100000001b3ull;
			buf[i % BUF_WORDS] = h >> 7;
		}
		if (now_ns(CLOCK_THREAD_CPUTIME_ID) >= until_ns)
			return h;
	}
}

/* The smaller one: ~25%. Same shape, different constants, so the two never fold together. */
HOT_FN uint64_t compress_chunk(uint64_t until_ns)
{
	uint64_t h = 0x84222325cbf29ce4ull;
	unsigned i = 0;

	for (;;) {
		for (int k = 0; k < CHECK_EVERY; k++, i++) {
			h += buf[(i * 7) % BUF_WORDS];
			h = (h << 13) | (h >> 51);
			h *= 0x9e3779b97f4a7c15ull;
			buf[(i * 7) % BUF_WORDS] = h >> 3;
		}
		if (now_ns(CLOCK_THREAD_CPUTIME_ID) >= until_ns)
			return h;
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	uint64_t end = seconds > 0 ? now_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9) : 0;
	uint64_t rng = now_ns(CLOCK_MONOTONIC) | 1;

	for (unsigned i = 0; i < BUF_WORDS; i++)
		buf[i] = i * 0x9e3779b97f4a7c15ull;
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("hot2 running\n");

	while (!end || now_ns(CLOCK_MONOTONIC) < end) {
		uint64_t unit_us;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		unit_us = 1000 + rng % 2001;	/* 1..3 ms */
		hot2_sink += build_report(now_ns(CLOCK_THREAD_CPUTIME_ID) + 3 * unit_us * 1000);
		hot2_sink += compress_chunk(now_ns(CLOCK_THREAD_CPUTIME_ID) + unit_us * 1000);
	}
	return 0;
}
