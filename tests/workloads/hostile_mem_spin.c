// SPDX-License-Identifier: Apache-2.0
/*
 * hostile_mem_spin: a busy workload whose one hot function has a hostile C++ mangled name (an
 * asm label): 213 bytes that demangle to 46 MB, 20 levels of void (*)(T, T) with T the level
 * before. tests/integration/test_hostile_memory.sh profiles it as it is and as a sparse copy
 * whose section headers claim gigabytes (tests/integration/hostile_mem_sparse.py).
 *
 * Usage: hostile_mem_spin [SECONDS]   runs for SECONDS of wall time, or until killed (0, none).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define EXPLODING_NAME                                                                          \
	"_Z1fPFvvEPFvS0_S0_EPFvS2_S2_EPFvS4_S4_EPFvS6_S6_EPFvS8_S8_EPFvSA_SA_EPFvSC_SC_EPFvSE_" \
	"SE_EPFvSG_SG_EPFvSI_SI_EPFvSK_SK_EPFvSM_SM_EPFvSO_SO_EPFvSQ_SQ_EPFvSS_SS_EPFvSU_SU_"   \
	"EPFvSW_SW_EPFvSY_SY_EPFvS10_S10_EPFvS12_S12_E"

volatile uint64_t spin_sink;

uint64_t hot_loop(uint64_t iters) __asm__(EXPLODING_NAME) __attribute__((noinline, used));

/* Pure integer work for @iters iterations; returns a value so the work is not removed. */
uint64_t hot_loop(uint64_t iters)
{
	uint64_t i, x = 1;

	for (i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + (i ^ (x >> 17));
	return x;
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	time_t end = time(NULL) + seconds;

	while (!seconds || time(NULL) < end)
		spin_sink += hot_loop(20000000);
	return 0;
}
