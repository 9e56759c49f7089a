// SPDX-License-Identifier: Apache-2.0
/*
 * pipewait: blocks on a pipe read about 80% of the time and computes about 20%, in wall time.
 * The single-threaded main process computes for 20 ms in `compute`, asks a child process (the
 * feeder) for input and waits in `wait_for_input`; the feeder answers 80 ms after each request.
 * Both phases are timed on the wall clock, so the split holds on a busy machine too (time
 * waiting for a CPU during `compute` is part of the compute phase).
 * Usage: pipewait [SECONDS]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2], req[2];
static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static __attribute__((noinline, noipa)) void compute(double ms)
{
	double end = now_ms() + ms;
	uint64_t x = sink;
	int i;

	while (now_ms() < end)
		for (i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static __attribute__((noinline, noipa)) void wait_for_input(void)
{
	char b = 'r';

	if (write(req[1], &b, 1) != 1 || read(fds[0], &b, 1) != 1)
		exit(1);
}

static void feeder(void)
{
	struct timespec d = { 0, 80 * 1000 * 1000 };

	char b;

	for (;;) {
		if (read(req[0], &b, 1) != 1)
			_exit(0);
		nanosleep(&d, NULL);
		if (write(fds[1], "x", 1) != 1)
			_exit(0);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3600;
	time_t end = time(NULL) + (time_t)secs;
	pid_t pid;

	if (pipe(fds) || pipe(req))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		feeder();
	while (time(NULL) < end) {
		compute(20);
		wait_for_input();
	}
	kill(pid, SIGTERM);
	return 0;
}
