// SPDX-License-Identifier: Apache-2.0
/*
 * spin: a single-threaded busy workload with one hot function, checkout_loop, for the
 * integration tests (run inside a container: its own pid, mount and net namespaces).
 *
 * Usage: spin [SECONDS]   runs for SECONDS of wall time, or until killed when omitted or 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define BUF_WORDS 512

static volatile uint64_t buf[BUF_WORDS];
volatile uint64_t spin_sink;

/* Pure integer work for @iters iterations; returns a value so the work is not removed. */
HOT_FN uint64_t checkout_loop(uint64_t iters)
{
	uint64_t h = 0x243f6a8885a308d3ull;

	for (uint64_t i = 0; i < iters; i++) {
		h ^= buf[i % BUF_WORDS];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
		buf[i % BUF_WORDS] = h;
	}
	return h;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	uint64_t end = seconds > 0 ? mono_ns() + (uint64_t)(seconds * 1e9) : 0;

	for (unsigned i = 0; i < BUF_WORDS; i++)
		buf[i] = i + 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("spin running\n");
	while (!end || mono_ns() < end)
		spin_sink += checkout_loop(1u << 20);	/* a few ms per call */
	return 0;
}
