/* SPDX-License-Identifier: Apache-2.0 */
/*
 * target: what a capture looks at (SPEC 5 TARGET) and which processes that is right now.
 *
 * --server is every process; --pid names processes; --unit, --container and --service name an
 * owner (cgroups/owner.h), whose processes are found by scanning /proc. An unknown name is a
 * clear error that lists what exists.
 */
#ifndef SLIDEOPS_TARGET_H
#define SLIDEOPS_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TARGET_MAX_PIDS 4096
#define TARGET_NAME_MAX 256
#define TARGET_NS_MAX 64 /* a Kubernetes namespace: a DNS label, 63 + NUL */

struct owner;
struct owner_resolver;

/* The namespace of the pod owner @o belongs to, into @ns (@size bytes). Returns 0, or -errno
 * (-ENOENT: not a known pod's). Must be thread-safe and must not block. */
typedef int (*target_ns_fn_t)(void *ctx, const struct owner *o, char *ns, size_t size);

enum target_kind {
	TARGET_SERVER = 0,
	TARGET_PIDS,
	TARGET_UNIT,
	TARGET_CONTAINER,
	TARGET_SERVICE,
};

struct capture_target {
	enum target_kind kind;
	uint32_t pids[64]; /* TARGET_PIDS: as given */
	size_t npids;
	char name[TARGET_NAME_MAX]; /* unit, container id or name, service */
	/* TARGET_SERVICE: a Service is a namespace and a workload. With @ns set, only the
	 * processes whose owner @ns_fn places in @ns match (another tenant's Service of the same
	 * name does not; nor is it listed as seen); "" matches any namespace. */
	char ns[TARGET_NS_MAX];
	target_ns_fn_t ns_fn; /* required with @ns: without it nothing matches */
	void *ns_ctx;
};

/* Completes a short unit name ("nginx" -> "nginx.service", as systemctl does). */
void target_normalize(struct capture_target *t);

/* Reads the state letter and the flags (PF_*) of process @pid from /proc/PID/stat. Returns 0,
 * -ESRCH if gone, -EINVAL if unparsable. */
int target_proc_stat(const char *proc_root, uint32_t pid, char *state, unsigned long *flags);

/* True while @pid runs: it exists and is neither a zombie nor dead. */
bool target_pid_alive(const char *proc_root, uint32_t pid);

/* "this server", "process 1234", "Unit nginx.service", "Container redis" into @buf. */
const char *target_describe(const struct capture_target *t, char *buf, size_t size);

/* "server", "pids", "unit", "container", "service" */
const char *target_kind_name(enum target_kind k);

/*
 * Finds the processes of @t now: fills @pids (at most @max) and returns their number (>= 0).
 * For TARGET_SERVER returns 0 and fills nothing (everything is the target). Returns -ENOENT with
 * @err set when the target matches no process (listing the units, containers and services
 * seen, or which pid does not exist); -errno on failure to read /proc.
 */
int target_resolve(const struct capture_target *t, struct owner_resolver *owners,
		   const char *proc_root, uint32_t *pids, size_t max, char *err, size_t errsize);

/* True when process @tgid (with its owner resolved by @owners) belongs to @t. */
bool target_match(const struct capture_target *t, struct owner_resolver *owners, uint32_t tgid);

#endif
