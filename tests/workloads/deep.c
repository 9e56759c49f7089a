// SPDX-License-Identifier: Apache-2.0
/*
 * deep: a hot leaf three calls below main (main -> deep_a -> deep_b -> deep_leaf), built with
 * -O2 and without frame pointers, for the DWARF unwinder's tests (tests/integration/
 * test_unwind.sh): nearly every CPU sample lands in deep_leaf, and a complete stack names the
 * whole chain. Each caller uses its callee's result after the call (no tail calls) and keeps
 * some values live across it, so the compiler gives it a real frame without rbp.
 *
 * Built as a PIE by the Makefile; the test also builds it -no-pie.
 * Usage: deep [SECONDS]   (default 3600)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

NOINLINE static uint64_t deep_leaf(uint64_t x)
{
	int i;

	for (i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

NOINLINE static uint64_t deep_b(uint64_t x)
{
	uint64_t y = x ^ sink, r;

	r = deep_leaf(x + 1);
	sink = y;
	return r + y;
}

NOINLINE static uint64_t deep_a(uint64_t x)
{
	uint64_t y = x * 3, r;

	r = deep_b(x ^ 5);
	sink = y;
	return r - y;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3600;
	time_t end = time(NULL) + (time_t)secs;
	uint64_t x = 1;

	while (time(NULL) < end)
		x = deep_a(x) + 1;
	sink = x;
	return 0;
}
