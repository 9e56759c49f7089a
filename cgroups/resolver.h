/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolver: tgid -> owner, reading /proc (under a configurable root for tests).
 *
 * Order: kernel threads (PF_KTHREAD, or children of kthreadd) and PID 1 are System; then the
 * cgroup (owner.h); then, on hosts where the cgroup places nothing (no systemd, every process in
 * the root cgroup), a process whose session leader is a shell or that has a controlling
 * terminal counts as Signed-in sessions; the rest is Other processes.
 *
 * Results are cached per (tgid, start time), so PID reuse gives a fresh answer and a process
 * that exited keeps the owner it had; the cache is bounded (oldest entries evicted).
 * Not thread-safe.
 */
#ifndef SLIDEOPS_RESOLVER_H
#define SLIDEOPS_RESOLVER_H

#include <stddef.h>

#include "cgroups/owner.h"

/*
 * Seam for the daemon (Kubernetes) and the config's Service match rules: called with the
 * owner found from the cgroup (group, pod uid, container id, runtime already set); it may
 * rename it ("billing") or regroup it (a config rule makes a Unit a Service). Return 0 or -errno
 * (an error keeps the owner unchanged, whatever the function wrote).
 * Called once per process resolved from /proc (not on cache hits), after the cgroup and session
 * rules, so also for Signed-in sessions and Other processes; never for kernel threads and PID 1.
 * Runs on the caller's thread, inside owner_resolver__resolve().
 */
typedef int (*owner_name_fn_t)(void *ctx, int tgid, struct owner *o);

struct owner_resolver_opts {
	const char *proc_root;	 /* default "/proc" */
	owner_name_fn_t name_fn; /* may be NULL */
	void *name_ctx;
	size_t max_entries; /* cache bound; default 8192 */
};

struct owner_resolver;

/*
 * Creates a resolver; @opts may be NULL (all defaults). Opens proc_root once (kept open).
 * Returns 0 with *@out owned by the caller; -ENOENT/-ENOTDIR/... if proc_root cannot be opened;
 * -ENOMEM; -EINVAL if @out is NULL. Memory: about 440 bytes per cached process (3.5 MiB at the
 * default bound).
 */
int owner_resolver__new(const struct owner_resolver_opts *opts, struct owner_resolver **out);

/* Frees @r and its cache; accepts NULL. */
void owner_resolver__free(struct owner_resolver *r);

/*
 * Finds the owner of @tgid now, or returns the cached one (same start time, or the process is
 * gone). A hit refreshes the entry's recency; at the bound the least recently used entry goes.
 * Returns 0 with *@out set; -ESRCH if the process is gone and was never seen (or was evicted);
 * -EINVAL for tgid <= 0 or an unparsable /proc/PID/stat; -EACCES/-ENOMEM/... otherwise.
 * An unreadable /proc/PID/cgroup is not an error: the session rules decide.
 */
int owner_resolver__resolve(struct owner_resolver *r, int tgid, struct owner *out);

#endif
