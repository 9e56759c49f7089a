// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/fileio.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static void add_reason(struct preflight *pf, const char *text)
{
	if (pf->nreasons < PREFLIGHT_MAX_REASONS)
		snprintf(pf->reasons[pf->nreasons++], sizeof(pf->reasons[0]), "%s", text);
}

static void check_caps(struct preflight *pf)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	static const struct {
		int cap, alt;
		const char *name;
	} needed[] = {
		{ CAP_BPF, CAP_SYS_ADMIN, "CAP_BPF" },
		{ CAP_PERFMON, CAP_SYS_ADMIN, "CAP_PERFMON" },
		{ CAP_SYS_PTRACE, -1, "CAP_SYS_PTRACE" },
		{ CAP_CHECKPOINT_RESTORE, CAP_SYS_ADMIN, "CAP_CHECKPOINT_RESTORE" },
	};
	char missing[160] = "";
	size_t i, n = 0;

	if (syscall(SYS_capget, &hdr, data) < 0) {
		add_reason(pf, "cannot read this process's capabilities");
		return;
	}
	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (has_cap(data, needed[i].cap) ||
		    (needed[i].alt >= 0 && has_cap(data, needed[i].alt)))
			continue;
		n += snprintf(missing + n, sizeof(missing) - n, "%s%s", n ? ", " : "",
			      needed[i].name);
		if (n >= sizeof(missing))
			break;
	}
	if (n) {
		char buf[256];

		snprintf(buf, sizeof(buf),
			 "the profiler must run as root, or with the capabilities CAP_BPF, CAP_PERFMON, "
			 "CAP_SYS_PTRACE and CAP_CHECKPOINT_RESTORE (missing: %s)",
			 missing);
		add_reason(pf, buf);
	}
}

static void read_processor(struct preflight *pf, const char *machine)
{
	char *buf = NULL, *p, *e;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char model[80] = "unknown processor";

	if (!read_file_bounded(AT_FDCWD, "/proc/cpuinfo", 4 << 20, &buf, NULL)) {
		p = strstr(buf, "model name");
		if (p && (p = strchr(p, ':'))) {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			e = strchr(p, '\n');
			snprintf(model, sizeof(model), "%.*s", e ? (int)(e - p) : (int)strlen(p),
				 p);
		}
		free(buf);
	}
	snprintf(pf->processor, sizeof(pf->processor), "%s (%s, %ld CPU%s)", model, machine, ncpu,
		 ncpu == 1 ? "" : "s");
}

int preflight_check(struct preflight *pf)
{
	struct utsname u;

	memset(pf, 0, sizeof(*pf));
	if (uname(&u) == 0) {
		char rel[sizeof(u.release)];

		snprintf(rel, sizeof(rel), "%s", u.release);
		rel[strcspn(rel, "-+")] = '\0';
		snprintf(pf->kernel, sizeof(pf->kernel), "Linux %s", rel);
		read_processor(pf, u.machine);
	}
	check_caps(pf);
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		add_reason(pf, "the kernel does not publish its type information "
			       "(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF) that eBPF needs");
	if (access("/proc/self/cgroup", R_OK) < 0)
		add_reason(pf, "the cgroup of a process cannot be read (/proc/PID/cgroup)");
	return pf->nreasons ? -EPERM : 0;
}

const char *preflight_message(const struct preflight *pf, char *buf, size_t size)
{
	size_t n;
	int i;

	if (!pf->nreasons) {
		snprintf(buf, size, "Ready to profile");
		return buf;
	}
	n = snprintf(buf, size, "Cannot profile right now: ");
	for (i = 0; i < pf->nreasons && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? "; " : "", pf->reasons[i]);
	return buf;
}
