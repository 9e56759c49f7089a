// SPDX-License-Identifier: Apache-2.0
/*
 * threeway: three named threads, one spinning (spin_forever), one sleeping (nap, 20 ms naps),
 * one blocked on a mutex (wait_for_lock) that the main thread holds all the time but for a
 * moment every 200 ms.
 * Usage: threeway [SECONDS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;

static __attribute__((noinline, noipa)) void spin_forever(void)
{
	uint64_t x = 1;

	for (;;) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = x;
	}
}

static __attribute__((noinline, noipa)) void nap(void)
{
	struct timespec d = { 0, 20 * 1000 * 1000 };

	for (;;)
		nanosleep(&d, NULL);
}

static __attribute__((noinline, noipa)) void wait_for_lock(void)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

static void *run(void *arg)
{
	const char *name = arg;

	pthread_setname_np(pthread_self(), name);
	if (!strcmp(name, "spinner"))
		spin_forever();
	else if (!strcmp(name, "sleeper"))
		nap();
	else
		wait_for_lock();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int secs = argc > 1 ? (unsigned int)atoi(argv[1]) : 3600;
	static char spinner[] = "spinner", sleeper[] = "sleeper", blocked[] = "blocked";
	pthread_t t[3];

	pthread_mutex_lock(&lock);
	if (pthread_create(&t[0], NULL, run, spinner) || pthread_create(&t[1], NULL, run, sleeper) ||
	    pthread_create(&t[2], NULL, run, blocked))
		return 1;
	{
		struct timespec hold = { 0, 200 * 1000 * 1000 }, gap = { 0, 100 * 1000 };
		time_t end = time(NULL) + secs;

		while (time(NULL) < end) {
			nanosleep(&hold, NULL);
			pthread_mutex_unlock(&lock);
			nanosleep(&gap, NULL);
			pthread_mutex_lock(&lock);
		}
	}
	return 0;
}
