// SPDX-License-Identifier: Apache-2.0
/*
 * debug_hot: a hot static function (noinline, no clones) with an always-inlined helper, for
 * tests/integration/test_debug_files.sh, which builds it -O2 -g, splits its debug file off and
 * strips it. -DDECOY gives another build (another build id) of the same program.
 */
#include <stdint.h>

static volatile uint64_t sink;
static volatile uint64_t rounds = 1u << 20;

static inline __attribute__((always_inline)) uint64_t dh_mix(uint64_t x)
{
	x ^= x >> 33; /* MIXLINE */
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 29;
	return x;
}

static __attribute__((noinline, noipa)) uint64_t dh_hot(uint64_t n)
{
	uint64_t acc = 0, i;

	for (i = 0; i < n; i++)
		acc += dh_mix(i + acc); /* CALLLINE */
	return acc;
}

int main(void)
{
	for (;;) {
#ifdef DECOY
		sink ^= 1;
#endif
		sink += dh_hot(rounds);
	}
}
