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

#include "base/text.h"

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

/*
 * Appends @msg to @out (@size bytes, NUL-terminated, room kept for the line's end) as the value
 * of a quoted logfmt field: '"' and '\' escaped, newline, tab and CR as \n, \t, \r, other
 * control characters and bytes that are not UTF-8 as '?' (base/text's rule), so a name in a
 * message can neither end the field or the line nor make the log invalid UTF-8. Returns the
 * length of @out.
 */
static size_t put_value(char *out, size_t size, const char *msg)
{
	static const char esc_from[] = "\"\\\n\t\r", esc_to[] = "\"\\ntr";
	size_t o = strlen(out), n;
	const char *e;

	for (; *msg; msg += n) {
		n = text_utf8_char_len(msg, strnlen(msg, 4));
		e = n == 1 ? strchr(esc_from, *msg) : NULL;
		if (o + (e ? 2 : n ? n : 1) >= size)
			break;
		if (e) {
			out[o++] = '\\';
			out[o++] = esc_to[e - esc_from];
		} else if (!n || (n == 1 && ((unsigned char)*msg < 0x20 || *msg == 0x7f))) {
			out[o++] = '?';
		} else {
			memcpy(out + o, msg, n);
			o += n;
		}
		n = n ? n : 1;
	}
	out[o] = '\0';
	return o;
}

static void vlog(enum log_level level, int err, const char *fmt, va_list ap)
{
	char line[1024], msg[960];
	struct timespec ts;
	struct tm tm;
	int n, m;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s msg=\"",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, level_names[level]);
	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (m < 0)
		msg[0] = '\0';
	else if ((size_t)m >= sizeof(msg))
		text_utf8_trim_partial(msg); /* cut: at a character boundary */
	/* room for the end: '"', the error and the newline */
	n = (int)put_value(line, sizeof(line) - 64, msg);
	if (err)
		n += snprintf(line + n, sizeof(line) - n, "\" err=\"%s\"\n",
			      strerror(err < 0 ? -err : err));
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
