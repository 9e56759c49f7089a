/* SPDX-License-Identifier: Apache-2.0 */
/*
 * busiest: the server's busiest processes right now, as ps reports them (CPU time over the
 * time since each process started), each with its owner, and the Services that have processes
 * on this server: what the server's Performance tab shows before anything is captured
 * (GET /v1/processes, docs/api.md). Reads /proc only; bounded by BUSIEST_MAX_PROCS processes.
 */
#ifndef SLIDEOPS_BUSIEST_H
#define SLIDEOPS_BUSIEST_H

#include <stddef.h>
#include <stdint.h>

#include "cgroups/owner.h"
#include "cgroups/resolver.h"

#define BUSIEST_MAX_PROCS 65536
#define BUSIEST_TOP 10
#define BUSIEST_MAX_SERVICES 256

struct busiest_opts {
	const char *proc_root;	 /* default "/proc" */
	owner_name_fn_t name_fn; /* Service names (Kubernetes, config rules); may be NULL */
	void *name_ctx;
	/* the Kubernetes namespace of a Service's process; may be NULL */
	int (*ns_fn)(void *ctx, const struct owner *o, char *ns, size_t size);
	void *ns_ctx;
};

/*
 * The document of GET /v1/processes into *@json (malloc'd):
 * {"busiest": [{"pid", "comm", "cpu_percent", "owner"}...], "services": [{"name", "namespace",
 * "target", "processes"}...]}; busiest sorted by cpu_percent, at most BUSIEST_TOP; services by
 * name. Every string is valid UTF-8 (bytes that are not are replaced). Returns 0 or -errno.
 */
int busiest_json(const struct busiest_opts *o, char **json);

/* ps's %CPU: @ticks of CPU time over the @uptime_s - @start_ticks / @hz seconds the process has
 * lived, in percent (0 when it has not lived measurably). Pure. */
double busiest_cpu_percent(unsigned long long ticks, unsigned long long start_ticks,
			   double uptime_s, long hz);

#endif
