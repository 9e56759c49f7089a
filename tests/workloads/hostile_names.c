// SPDX-License-Identifier: Apache-2.0
/*
 * hostile_names: a busy program whose names are not what writers expect, for
 * tests/integration/test_hostile_names.sh (issue 12, class 4). Once /tmp/go exists it
 *   - names its main thread with eight Cyrillic letters (16 bytes: the kernel keeps 15 of them
 *     in comm, cutting the last letter in half),
 *   - starts a thread named with bytes that are not UTF-8,
 * and both spin in a function whose symbol is "hot\xff\xfe" (an asm label: no valid UTF-8).
 * Prints "ready" when both run.
 *
 * Usage: hostile_names
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

/* "абвгдежз": eight 2-byte letters */
#define CYRILLIC "\xd0\xb0\xd0\xb1\xd0\xb2\xd0\xb3\xd0\xb4\xd0\xb5\xd0\xb6\xd0\xb7"
/* a lone continuation, never-valid bytes, a cut sequence; comm keeps 15 bytes */
#define BAD_THREAD "w\x80\xff\xfe\xc0\xaf\"</\xe2\x82"

volatile uint64_t hot_sink, hot_iters = 1u << 20;

uint64_t hot_loop(uint64_t iters) __asm__("hot\xff\xfe");

/* noipa: else gcc sees a pure function of a constant and calls it once */
__attribute__((noinline, noipa, used)) uint64_t hot_loop(uint64_t iters)
{
	uint64_t h = 0x243f6a8885a308d3ull;

	for (uint64_t i = 0; i < iters; i++) {
		h ^= i;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return h;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		hot_sink += hot_loop(hot_iters);
	return NULL;
}

int main(void)
{
	pthread_t t;

	while (access("/tmp/go", F_OK))
		usleep(10000);
	if (prctl(PR_SET_NAME, CYRILLIC, 0, 0, 0)) {
		perror("prctl");
		return 1;
	}
	if (pthread_create(&t, NULL, spin, NULL)) {
		fputs("pthread_create failed\n", stderr);
		return 1;
	}
	if (pthread_setname_np(t, BAD_THREAD))
		fputs("pthread_setname_np failed\n", stderr);
	printf("ready\n");
	fflush(stdout);
	spin(NULL);
	return 0;
}
