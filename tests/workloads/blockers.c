// SPDX-License-Identifier: Apache-2.0
/*
 * blockers: threads that spend their time blocked inside the C library, called from named
 * functions, for the DWARF unwinder's wall and locks tests (tests/integration/test_unwind.sh).
 * Built with -O2 and without frame pointers, like the C library itself: a frame-pointer walk
 * from inside read() or __lll_lock_wait loses the function that called it.
 *
 *   reader   wait_for_input() blocks in read() on a pipe that a feeder writes once a second
 *   waiter   take_the_lock() blocks in pthread_mutex_lock() on a mutex that
 *   holder   hold_the_lock() keeps for 200 ms at a time, releasing it for 1 ms
 *
 * Usage: blockers [SECONDS]   (default 3600)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fds[2];
static volatile uint64_t sink;
static time_t end;

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&d, NULL);
}

NOINLINE static uint64_t wait_for_input(void)
{
	char b[16];
	ssize_t n = read(fds[0], b, sizeof(b));

	sink += (uint64_t)n;
	return (uint64_t)n + 1;
}

NOINLINE static uint64_t take_the_lock(uint64_t x)
{
	uint64_t y = x * 7;

	pthread_mutex_lock(&lock);
	sink += y;
	pthread_mutex_unlock(&lock);
	return y + 1;
}

NOINLINE static void hold_the_lock(void)
{
	pthread_mutex_lock(&lock);
	sleep_ms(200);
	pthread_mutex_unlock(&lock);
	sleep_ms(1);
}

static void *reader(void *arg)
{
	uint64_t n = 0;

	(void)arg;
	while (time(NULL) < end)
		n += wait_for_input();
	sink = n;
	return NULL;
}

static void *waiter(void *arg)
{
	uint64_t n = 0;

	(void)arg;
	/* let the holder take the lock first */
	sleep_ms(20);
	while (time(NULL) < end)
		n += take_the_lock(n);
	sink = n;
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	while (time(NULL) < end)
		hold_the_lock();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3600;
	pthread_t t[3];
	int i;

	end = time(NULL) + (time_t)secs;
	if (pipe(fds))
		return 1;
	if (pthread_create(&t[0], NULL, reader, NULL) || pthread_create(&t[1], NULL, holder, NULL) ||
	    pthread_create(&t[2], NULL, waiter, NULL))
		return 1;
	while (time(NULL) < end) {
		sleep_ms(1000);
		if (write(fds[1], "x", 1) != 1)
			return 1;
	}
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
