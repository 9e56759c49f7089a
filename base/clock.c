// SPDX-License-Identifier: Apache-2.0
#include "base/clock.h"

#include <errno.h>
#include <stdio.h>

static uint64_t ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock_mono_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

uint64_t clock_mono_ms(void)
{
	return ns_of(CLOCK_MONOTONIC) / 1000000u;
}

double clock_mono_s(void)
{
	return (double)ns_of(CLOCK_MONOTONIC) / 1e9;
}

int64_t clock_real_ns(void)
{
	return (int64_t)ns_of(CLOCK_REALTIME);
}

uint64_t clock_real_ms(void)
{
	return ns_of(CLOCK_REALTIME) / 1000000u;
}

void clock_deadline(struct timespec *ts, clockid_t clk, uint64_t ms)
{
	clock_gettime(clk, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int clock_rfc3339(char *buf, size_t size, int64_t t_ns, int frac_digits)
{
	static const int64_t div[] = { 1000000000, 1000000, 1000, 1 };
	int64_t sec = t_ns / 1000000000, rem = t_ns % 1000000000;
	time_t t;
	struct tm tm;
	size_t n;
	int k;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm))
		return -EOVERFLOW;
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!n) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	if (frac_digits != 3 && frac_digits != 6 && frac_digits != 9)
		frac_digits = 0;
	k = frac_digits ? snprintf(buf + n, size - n, ".%0*lldZ", frac_digits,
				   (long long)(rem / div[frac_digits / 3])) :
			  snprintf(buf + n, size - n, "Z");
	if (k < 0 || (size_t)k >= size - n) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)(n + (size_t)k);
}
