/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log: one logfmt line per message on stderr, four levels. The message is the quoted msg value:
 * '"' and '\' are escaped, newline, tab and CR written as \n, \t, \r, other control characters
 * and bytes that are not UTF-8 become '?', and a long message is cut at a character boundary, so
 * names in messages never break the line or its UTF-8.
 *
 * pr_*_errno(err, ...) log with the error's text and return -|err|, so the layer that has the
 * context logs once and returns: `return pr_err_errno(err, "open(%s)", path);`.
 * Thread-safe: each line is written with one write(2).
 */
#ifndef SLIDEOPS_LOG_H
#define SLIDEOPS_LOG_H

enum log_level {
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

/* Messages above @level are dropped. Default LOG_WARN; SLIDEOPS_LOG=debug|info|warn|error. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parse "error", "warn", "info", "debug". Returns the level or -EINVAL. */
int log_parse_level(const char *s);

__attribute__((format(printf, 3, 4))) void log_msg(enum log_level level, int err, const char *fmt,
						   ...);

/* Returns -|err| after logging it (err may be given as positive or negative errno). */
__attribute__((format(printf, 3, 4))) int log_errno(enum log_level level, int err, const char *fmt,
						    ...);

#define pr_err(...) log_msg(LOG_ERROR, 0, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, 0, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, 0, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, 0, __VA_ARGS__)
#define pr_err_errno(err, ...) log_errno(LOG_ERROR, (err), __VA_ARGS__)
#define pr_warn_errno(err, ...) log_errno(LOG_WARN, (err), __VA_ARGS__)
#define pr_debug_errno(err, ...) log_errno(LOG_DEBUG, (err), __VA_ARGS__)

#endif
