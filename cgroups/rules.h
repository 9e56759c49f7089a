/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules: the Service match rules of the config file applied to a process (SPEC 4: "or a match
 * rule from the config file"). Used as the owner resolver's naming seam on plain servers.
 */
#ifndef SLIDEOPS_CGROUPS_RULES_H
#define SLIDEOPS_CGROUPS_RULES_H

#include <stddef.h>

#include "cgroups/owner.h"

/*
 * A match rule for a plain server's Service. It matches a process when every non-empty field
 * matches: unit, cgroup and exe are fnmatch(3) globs without flags ('*' also matches '/'),
 * comm is compared exactly. At least one field is non-empty (the config parser checks).
 */
struct service_rule {
	char name[128];
	char unit[256];
	char cgroup[512];
	char exe[512];
	char comm[16];
};

/*
 * Returns the index in @rules (@n of them) of the first rule that matches these facts of a
 * process, or -ENOENT. Any fact may be NULL (unknown): a rule with a non-empty field for that
 * fact does not match then.
 */
int rules_match(const struct service_rule *rules, size_t n, const char *unit,
		const char *cgroup_path, const char *exe, const char *comm);

struct service_rules_ctx {
	const struct service_rule *rules; /* borrowed */
	size_t nrules;
	const char *proc_root; /* default /proc */
};

/*
 * owner_name_fn_t: when a rule of @ctx matches process @tgid (its unit, cgroup path,
 * executable or name), makes @o `Service <rule name>`. Pod containers keep their Kubernetes
 * name. Returns 0 (matched or not) or -ESRCH when the process is gone.
 */
int service_rules_apply(void *ctx, int tgid, struct owner *o);

#endif
