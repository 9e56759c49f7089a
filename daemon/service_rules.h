/* SPDX-License-Identifier: Apache-2.0 */
/*
 * service_rules: the config file's Service match rules applied to a process (SPEC 4: "or a match
 * rule from the config file"). Used as the owner resolver's naming seam on plain servers.
 */
#ifndef SLIDEOPS_SERVICE_RULES_H
#define SLIDEOPS_SERVICE_RULES_H

#include "cgroups/owner.h"

struct config;

struct service_rules_ctx {
	const struct config *config;
	const char *proc_root;	/* default /proc */
};

/*
 * owner_name_fn_t: when a rule of ctx->config matches process @tgid (its unit, cgroup path,
 * executable or name), makes @o `Service <rule name>`. Pod containers keep their Kubernetes
 * name. Returns 0 (matched or not) or -ESRCH when the process is gone.
 */
int service_rules_apply(void *ctx, int tgid, struct owner *o);

#endif
