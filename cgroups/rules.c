// SPDX-License-Identifier: Apache-2.0
#include "cgroups/rules.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"

static bool glob_match(const char *pattern, const char *s)
{
	return !pattern[0] || (s && !fnmatch(pattern, s, 0));
}

int rules_match(const struct service_rule *rules, size_t n, const char *unit,
		const char *cgroup_path, const char *exe, const char *comm)
{
	const struct service_rule *r;
	size_t i;

	for (i = 0; rules && i < n && i <= INT_MAX; i++) {
		r = &rules[i];
		if (glob_match(r->unit, unit) && glob_match(r->cgroup, cgroup_path) &&
		    glob_match(r->exe, exe) && (!r->comm[0] || (comm && !strcmp(r->comm, comm))))
			return (int)i;
	}
	return -ENOENT;
}

/* The process's cgroup path: the v2 line, else name=systemd, else the first v1 line. */
static void cgroup_path(const char *root, int tgid, char *buf, size_t size)
{
	char *text = NULL, *line, *save = NULL;
	char first[512] = "";

	buf[0] = '\0';
	if (proc_read(root, (uint32_t)tgid, "cgroup", 64 << 10, &text, NULL))
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!cg_parse_line(line, NULL, buf, size) && strcmp(buf, "/"))
			break;
		buf[0] = '\0';
		if (!cg_parse_line(line, "name=systemd", buf, size) && strcmp(buf, "/"))
			break;
		buf[0] = '\0';
		if (!first[0]) {
			const char *p = strchr(line, ':');

			p = p ? strchr(p + 1, ':') : NULL;
			if (p && strcmp(p + 1, "/"))
				snprintf(first, sizeof(first), "%s", p + 1);
		}
	}
	if (!buf[0])
		snprintf(buf, size, "%s", first);
	free(text);
}

int service_rules_apply(void *ctx, int tgid, struct owner *o)
{
	const struct service_rules_ctx *sc = ctx;
	const char *root = sc->proc_root ? sc->proc_root : "/proc";
	char path[512], exe[PATH_MAX], cg[512], comm[32];
	ssize_t n;
	int i;

	if (!sc->nrules || o->pod_uid[0])
		return 0;
	n = -1;
	if (!proc_path(path, sizeof(path), root, (uint32_t)tgid, "exe"))
		n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (proc_read_comm(root, (uint32_t)tgid, comm, sizeof(comm)) && n < 0)
		return -ESRCH;
	cgroup_path(root, tgid, cg, sizeof(cg));
	i = rules_match(sc->rules, sc->nrules, o->group == OWNER_UNIT ? o->name : NULL,
			cg[0] ? cg : NULL, exe[0] ? exe : NULL, comm[0] ? comm : NULL);
	if (i < 0)
		return 0;
	o->group = OWNER_SERVICE;
	snprintf(o->name, sizeof(o->name), "%s", sc->rules[i].name);
	return 0;
}
