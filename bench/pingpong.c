// SPDX-License-Identifier: Apache-2.0
/*
 * pingpong: two threads pass one byte back and forth over two pipes, so each round trip is two
 * context switches (on one CPU, or two wake-ups across CPUs). Runs for argv[1] seconds and prints
 * "<round trips per second>" at the end: the workload whose slowdown bench/wall.sh measures.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static volatile int done;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	struct timespec t0, t;
	unsigned long n = 0;
	pthread_t th;
	char c = 'x';

	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
		if (++n % 1024 == 0)
			clock_gettime(CLOCK_MONOTONIC, &t);
	} while (n % 1024 || (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%.0f\n", n / ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9));
	return 0;
}
