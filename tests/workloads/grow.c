// SPDX-License-Identifier: Apache-2.0
/*
 * grow: a workload whose memory grows by a known number of bytes in one function, grow_cache
 * (through keep, a helper the compiler inlines into it: DWARF names it as an inlined frame),
 * for the memory-growth question (docs/memory-growth.md).
 *
 * Usage: grow [MIB [DELAY]]   waits DELAY seconds (default 0), then grows by MIB MiB (default
 * 64) over about two seconds, prints "grow_cache grew BYTES bytes" and sleeps until killed.
 *
 * Seven eighths of the bytes are 1 MiB chunks (above glibc's 128 KiB mmap threshold: each one
 * an anonymous mmap), the rest 4 KiB chunks carved from the brk heap. Every chunk is filled
 * with a non-zero byte (a zero memset after malloc may become calloc, which touches nothing on
 * fresh pages) and kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define BIG_CHUNK (1u << 20)
#define SMALL_CHUNK 4096u
#define GROW_NS 2000000000ull

static void **kept;
static size_t nkept;

static void nap(unsigned long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull };

	while (nanosleep(&ts, &ts))
		;
}

static int keep(size_t size)
{
	void *p = malloc(size);

	if (!p)
		return -1;
	memset(p, 0x5a, size);
	kept[nkept++] = p;
	return 0;
}

/* Grows the process by @bytes in @nbig 1 MiB chunks and @nsmall 4 KiB chunks, spread over
 * about two seconds. Returns the bytes grown. */
HOT_FN size_t grow_cache(size_t nbig, size_t nsmall)
{
	size_t step, steps = nbig ? nbig : 1, small_per_step = nsmall / steps, grown = 0, i;

	for (step = 0; step < steps; step++) {
		if (step < nbig) {
			if (keep(BIG_CHUNK))
				return grown;
			grown += BIG_CHUNK;
		}
		for (i = 0; i < small_per_step + (step == steps - 1 ? nsmall % steps : 0); i++) {
			if (keep(SMALL_CHUNK))
				return grown;
			grown += SMALL_CHUNK;
		}
		nap(GROW_NS / steps);
	}
	return grown;
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	unsigned long delay = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	size_t total, nbig, nsmall, grown;

	if (!mib || mib > (1ul << 20)) {
		fprintf(stderr, "usage: grow [MIB [DELAY]]\n");
		return 2;
	}
	total = (size_t)mib << 20;
	nbig = total / 8 * 7 / BIG_CHUNK;
	nsmall = (total - nbig * BIG_CHUNK) / SMALL_CHUNK;
	kept = calloc(nbig + nsmall, sizeof(*kept));
	if (!kept)
		return 1;
	nap((unsigned long long)delay * 1000000000ull);
	grown = grow_cache(nbig, nsmall);
	printf("grow_cache grew %zu bytes\n", grown);
	fflush(stdout);
	if (grown != total)
		return 1;
	for (;;)
		pause();
}
