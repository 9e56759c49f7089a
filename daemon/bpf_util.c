// SPDX-License-Identifier: Apache-2.0
#include "daemon/bpf_util.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "daemon/log.h"

/* libbpf's messages carry their own "libbpf: " prefix. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (level != LIBBPF_WARN && log_get_level() < LOG_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, 0, "%s", buf);
	return 0;
}

void bpf_util_route_libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

int bpf_util_ensure_tracefs(void)
{
	int err;

	if (!access(TRACEFS "/events", F_OK) || !access(DEBUGFS_TRACING "/events", F_OK))
		return 0;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		err = -errno;
		return pr_err_errno(err, "mounting tracefs at " TRACEFS);
	}
	pr_info("mounted tracefs at " TRACEFS);
	return 0;
}

bool bpf_util_have_tracepoint(const char *group, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s", group, name);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), DEBUGFS_TRACING "/events/%s/%s", group, name);
	return !access(path, F_OK);
}
