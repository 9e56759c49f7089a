// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/target.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroups/owner.h"
#include "cgroups/resolver.h"
#include "base/proc.h"

int target_proc_stat(const char *proc_root, uint32_t pid, char *state, unsigned long *flags)
{
	struct proc_stat st;
	int ret;

	ret = proc_read_stat(proc_root, pid, &st);
	if (ret)
		return ret;
	*state = st.state;
	if (flags)
		*flags = (unsigned long)st.flags;
	return 0;
}

bool target_pid_alive(const char *proc_root, uint32_t pid)
{
	char state;

	/* A zombie (Z) or dead (X) process has exited, reaped or not. */
	return target_proc_stat(proc_root, pid, &state, NULL) == 0 && state != 'Z' && state != 'X';
}

void target_normalize(struct capture_target *t)
{
	size_t n = strlen(t->name);

	/* "nginx" names nginx.service, as systemctl takes it */
	if (t->kind == TARGET_UNIT && n && !strchr(t->name, '.') &&
	    n + sizeof(".service") <= sizeof(t->name))
		memcpy(t->name + n, ".service", sizeof(".service"));
}

const char *target_kind_name(enum target_kind k)
{
	switch (k) {
	case TARGET_SERVER:
		return "server";
	case TARGET_PIDS:
		return "pids";
	case TARGET_UNIT:
		return "unit";
	case TARGET_CONTAINER:
		return "container";
	case TARGET_SERVICE:
		return "service";
	}
	return "?";
}

const char *target_describe(const struct capture_target *t, char *buf, size_t size)
{
	switch (t->kind) {
	case TARGET_SERVER:
		snprintf(buf, size, "this server");
		break;
	case TARGET_PIDS:
		if (t->npids == 1)
			snprintf(buf, size, "process %u", t->pids[0]);
		else
			snprintf(buf, size, "%zu processes", t->npids);
		break;
	case TARGET_UNIT:
		snprintf(buf, size, "Unit %s", t->name);
		break;
	case TARGET_CONTAINER:
		snprintf(buf, size, "Container %s", t->name);
		break;
	case TARGET_SERVICE:
		snprintf(buf, size, "Service %s", t->name);
		break;
	}
	return buf;
}

static bool unit_name_matches(const char *want, const char *have)
{
	size_t n = strlen(want);

	if (!strcmp(want, have))
		return true;
	/* "nginx" names nginx.service, as systemctl takes it */
	return !strchr(want, '.') && !strncmp(have, want, n) && !strcmp(have + n, ".service");
}

/* True when @o is of the namespace @t asks for (always, when it asks for none). */
static bool ns_matches(const struct capture_target *t, const struct owner *o)
{
	char ns[TARGET_NS_MAX];

	if (!t->ns[0])
		return true;
	return t->ns_fn && !t->ns_fn(t->ns_ctx, o, ns, sizeof(ns)) && !strcmp(ns, t->ns);
}

static bool owner_matches(const struct capture_target *t, const struct owner *o)
{
	size_t n = strlen(t->name);

	switch (t->kind) {
	case TARGET_UNIT:
		return o->group == OWNER_UNIT && unit_name_matches(t->name, o->name);
	case TARGET_CONTAINER:
		if (o->group != OWNER_CONTAINER && o->group != OWNER_SERVICE)
			return false;
		if (!strcmp(o->name, t->name) && o->group == OWNER_CONTAINER)
			return true;
		/* a full or short id (at least 4 hex digits, as docker takes it) */
		return n >= 4 && o->container_id[0] && !strncmp(o->container_id, t->name, n);
	case TARGET_SERVICE:
		return o->group == OWNER_SERVICE && !strcmp(o->name, t->name) && ns_matches(t, o);
	default:
		return false;
	}
}

bool target_match(const struct capture_target *t, struct owner_resolver *owners, uint32_t tgid)
{
	struct owner o;
	size_t i;

	switch (t->kind) {
	case TARGET_SERVER:
		return true;
	case TARGET_PIDS:
		for (i = 0; i < t->npids; i++)
			if (t->pids[i] == tgid)
				return true;
		return false;
	default:
		if (owner_resolver__resolve(owners, (int)tgid, &o) < 0)
			return false;
		return owner_matches(t, &o);
	}
}

/* Appends " name" to a comma-separated list in @buf if not there yet. */
static void list_add(char *buf, size_t size, const char *name)
{
	size_t n = strlen(buf), k = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name))) {
		if ((p == buf || (p - buf >= 2 && p[-2] == ',')) && (p[k] == ',' || p[k] == '\0'))
			return;
		p += k;
	}
	if (n + k + 3 < size)
		snprintf(buf + n, size - n, "%s%s", n ? ", " : "", name);
}

static int not_found(const struct capture_target *t, struct owner_resolver *owners, DIR *d,
		     char *err, size_t errsize)
{
	enum owner_group want = t->kind == TARGET_UNIT	  ? OWNER_UNIT :
				t->kind == TARGET_SERVICE ? OWNER_SERVICE :
							    OWNER_CONTAINER;
	char seen[1024] = "", what[TARGET_NAME_MAX + 32];
	struct dirent *de;
	struct owner o;

	rewinddir(d);
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (owner_resolver__resolve(owners, atoi(de->d_name), &o) < 0)
			continue;
		if (o.group == want && (want != OWNER_SERVICE || ns_matches(t, &o))) {
			list_add(seen, sizeof(seen), o.name);
		} else if (want == OWNER_CONTAINER && o.group == OWNER_SERVICE &&
			   o.container_id[0]) {
			char shortid[16];

			snprintf(shortid, sizeof(shortid), "%.12s", o.container_id);
			list_add(seen, sizeof(seen), shortid);
		}
	}
	target_describe(t, what, sizeof(what));
	snprintf(err, errsize, "no process of %s is running; %s seen on this server: %s", what,
		 want == OWNER_UNIT    ? "units" :
		 want == OWNER_SERVICE ? "services" :
					 "containers",
		 seen[0] ? seen : "none");
	return -ENOENT;
}

int target_resolve(const struct capture_target *t, struct owner_resolver *owners,
		   const char *proc_root, uint32_t *pids, size_t max, char *err, size_t errsize)
{
	struct dirent *de;
	size_t i, n = 0;
	DIR *d;
	int ret;

	if (!proc_root)
		proc_root = "/proc";
	if (t->kind == TARGET_SERVER)
		return 0;
	if (t->kind == TARGET_PIDS) {
		for (i = 0; i < t->npids && n < max; i++) {
			if (!target_pid_alive(proc_root, t->pids[i])) {
				snprintf(err, errsize, "no process with pid %u is running",
					 t->pids[i]);
				return -ENOENT;
			}
			pids[n++] = t->pids[i];
		}
		return (int)n;
	}
	d = opendir(proc_root);
	if (!d) {
		ret = -errno;
		snprintf(err, errsize, "cannot list the processes in %s: %s", proc_root,
			 strerror(-ret));
		return ret;
	}
	while ((de = readdir(d)) && n < max) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (target_match(t, owners, (uint32_t)atoi(de->d_name)))
			pids[n++] = (uint32_t)atoi(de->d_name);
	}
	ret = n ? (int)n : not_found(t, owners, d, err, errsize);
	closedir(d);
	return ret;
}
