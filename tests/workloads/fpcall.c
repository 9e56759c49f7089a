// SPDX-License-Identifier: Apache-2.0
/*
 * fpcall: built WITH frame pointers (WORKLOAD_CFLAGS_fpcall in the Makefile), it spends its time
 * in the C library's memset, which keeps no frame pointer. A frame-pointer walk from inside
 * memset reads fill_buffer's saved rbp and skips fill_buffer itself; the DWARF unwinder must
 * not (tests/integration/test_unwind.sh).
 *
 * Usage: fpcall [SECONDS]   (default 3600)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))
#define BUF_BYTES (256 * 1024)

static volatile uint64_t sink;

NOINLINE static uint64_t fill_buffer(unsigned char *buf, int round)
{
	int i;

	for (i = 0; i < 64; i++)
		memset(buf, round + i, BUF_BYTES);
	return buf[round % BUF_BYTES];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3600;
	time_t end = time(NULL) + (time_t)secs;
	unsigned char *buf = malloc(BUF_BYTES);
	int round = 0;

	if (!buf)
		return 1;
	while (time(NULL) < end)
		sink += fill_buffer(buf, round++);
	free(buf);
	return 0;
}
