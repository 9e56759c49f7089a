// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Read and written from any thread (API threads, the namespace threads of runtimes/nshttp):
 * atomics, and the environment read once. */
static int current_level = LOG_WARN;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static const char *const level_names[] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warn",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

int log_parse_level(const char *s)
{
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcasecmp(s, level_names[i]))
			return (int)i;
	return -EINVAL;
}

static void init_from_env(void)
{
	int lvl = log_parse_level(getenv("SLIDEOPS_LOG"));

	if (lvl >= 0)
		__atomic_store_n(&current_level, lvl, __ATOMIC_RELAXED);
}

void log_set_level(enum log_level level)
{
	/* an explicit level wins over the environment, whenever that is read */
	pthread_once(&env_once, init_from_env);
	__atomic_store_n(&current_level, (int)level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
	pthread_once(&env_once, init_from_env);
	return (enum log_level)__atomic_load_n(&current_level, __ATOMIC_RELAXED);
}

static void vlog(enum log_level level, int err, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int n, m;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s msg=\"",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, level_names[level]);
	m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	n = m < 0 ? n : n + m;
	if (n > (int)sizeof(line) - 64)
		n = sizeof(line) - 64;
	if (err)
		n += snprintf(line + n, sizeof(line) - n, "\" err=\"%s\"\n", strerror(err < 0 ? -err : err));
	else
		n += snprintf(line + n, sizeof(line) - n, "\"\n");
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

void log_msg(enum log_level level, int err, const char *fmt, ...)
{
	va_list ap;

	if (level > log_get_level())
		return;
	va_start(ap, fmt);
	vlog(level, err, fmt, ap);
	va_end(ap);
}

int log_errno(enum log_level level, int err, const char *fmt, ...)
{
	va_list ap;

	if (err > 0)
		err = -err;
	if (level <= log_get_level()) {
		va_start(ap, fmt);
		vlog(level, err, fmt, ap);
		va_end(ap);
	}
	return err ? err : -EIO;
}
