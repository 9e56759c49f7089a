/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock: the one home of "what time is it" for every folder. Monotonic time for timeouts,
 * deadlines and durations; real time only for timestamps that people read (RFC 3339, UTC).
 * All functions are thread-safe and never fail (clock_gettime on these clocks cannot).
 */
#ifndef SLIDEOPS_BASE_CLOCK_H
#define SLIDEOPS_BASE_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds, milliseconds and (fractional) seconds. */
uint64_t clock_mono_ns(void);
uint64_t clock_mono_ms(void);
double clock_mono_s(void);

/* CLOCK_REALTIME in nanoseconds and milliseconds since the epoch. */
int64_t clock_real_ns(void);
uint64_t clock_real_ms(void);

/* @ms milliseconds from now on clock @clk, as an absolute timespec (pthread_cond_timedwait). */
void clock_deadline(struct timespec *ts, clockid_t clk, uint64_t ms);

/*
 * Formats @t_ns (nanoseconds since the epoch) as RFC 3339 UTC into @buf: with @frac_digits 0
 * "2026-12-01T19:48:22Z", with 3 "2026-12-01T19:48:22.175Z" (0, 3, 6 or 9 digits; others are
 * taken as 0). Returns the length written, or -ENOSPC (@buf is then "") when @size is too small
 * (CLOCK_RFC3339_MAX always fits), -EOVERFLOW for a year gmtime cannot express.
 */
#define CLOCK_RFC3339_MAX 40
int clock_rfc3339(char *buf, size_t size, int64_t t_ns, int frac_digits);

#endif
