/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_util: what every BPF owner in daemon/ needs before it loads: libbpf's messages routed to
 * our log (STYLE 4), and tracefs mounted for tracepoint programs.
 */
#ifndef SLIDEOPS_BPF_UTIL_H
#define SLIDEOPS_BPF_UTIL_H

#include <stdbool.h>

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

/* Routes libbpf's messages: WARN -> warn, INFO and DEBUG -> debug. Idempotent. */
void bpf_util_route_libbpf_log(void);

/*
 * libbpf finds a tracepoint's id under tracefs (or debugfs), which some machines do not mount at
 * boot. Mounts tracefs if neither is there. Returns 0 or -errno (logged).
 */
int bpf_util_ensure_tracefs(void);

/* True when tracepoint @group/@name exists (e.g. "syscalls", "sys_enter_futex_waitv"). */
bool bpf_util_have_tracepoint(const char *group, const char *name);

#endif
