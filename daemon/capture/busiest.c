// SPDX-License-Identifier: Apache-2.0
/*
 * busiest: one pass over /proc. Each process's stat gives its CPU time and start; its owner
 * comes from the resolver (which names Services through @name_fn). The top BUSIEST_TOP are kept
 * by insertion into a small sorted array; Services are counted in a small table.
 */
#include "daemon/capture/busiest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/fileio.h"
#include "base/proc.h"
#include "base/text.h"

struct busy {
	uint32_t pid;
	double cpu;
	char comm[64];
	char owner[OWNER_NAME_MAX + 32];
};

struct svc {
	char name[OWNER_NAME_MAX];
	char ns[OWNER_NAME_MAX];
	unsigned int procs;
};

struct scan {
	const struct busiest_opts *o;
	struct owner_resolver *owners;
	double uptime_s;
	long hz;
	struct busy top[BUSIEST_TOP];
	size_t ntop;
	struct svc *svcs;
	size_t nsvcs;
};

double busiest_cpu_percent(unsigned long long ticks, unsigned long long start_ticks,
			   double uptime_s, long hz)
{
	double lived;

	if (hz <= 0)
		return 0;
	lived = uptime_s - (double)start_ticks / (double)hz;
	if (lived < 0.01)
		return 0;
	return 100.0 * ((double)ticks / (double)hz) / lived;
}

static double read_uptime(const char *proc_root)
{
	char path[512], *text = NULL;
	double up = 0;
	size_t len;

	snprintf(path, sizeof(path), "%s/uptime", proc_root);
	if (!read_file_bounded(AT_FDCWD, path, 256, &text, &len)) /* "12345.67 890.12\n" */
		up = strtod(text, NULL);
	free(text);
	return up;
}

static void keep_top(struct scan *s, const struct busy *b)
{
	size_t i;

	if (s->ntop == BUSIEST_TOP) {
		if (s->top[BUSIEST_TOP - 1].cpu >= b->cpu)
			return;
		i = BUSIEST_TOP - 1;
	} else {
		i = s->ntop++;
	}
	while (i > 0 && s->top[i - 1].cpu < b->cpu) {
		s->top[i] = s->top[i - 1];
		i--;
	}
	s->top[i] = *b;
}

static void count_service(struct scan *s, const struct owner *ow)
{
	char ns[OWNER_NAME_MAX] = "";
	size_t i;

	if (s->o->ns_fn && s->o->ns_fn(s->o->ns_ctx, ow, ns, sizeof(ns)))
		ns[0] = '\0';
	for (i = 0; i < s->nsvcs; i++)
		if (!strcmp(s->svcs[i].name, ow->name) && !strcmp(s->svcs[i].ns, ns)) {
			s->svcs[i].procs++;
			return;
		}
	if (s->nsvcs == BUSIEST_MAX_SERVICES)
		return;
	snprintf(s->svcs[s->nsvcs].name, OWNER_NAME_MAX, "%s", ow->name);
	snprintf(s->svcs[s->nsvcs].ns, OWNER_NAME_MAX, "%s", ns);
	text_utf8_sanitize(s->svcs[s->nsvcs].name);
	text_utf8_sanitize(s->svcs[s->nsvcs].ns);
	s->svcs[s->nsvcs++].procs = 1;
}

static void scan_one(struct scan *s, uint32_t pid)
{
	struct proc_stat st;
	struct owner ow;
	struct busy b = { .pid = pid };

	if (proc_read_stat(s->o->proc_root, pid, &st) || (st.flags & 0x00200000))
		return; /* gone, or a kernel thread */
	b.cpu = busiest_cpu_percent(st.utime + st.stime, st.starttime, s->uptime_s, s->hz);
	if (owner_resolver__resolve(s->owners, (int)pid, &ow))
		ow.group = OWNER_OTHER;
	if (ow.group == OWNER_SERVICE && ow.name[0])
		count_service(s, &ow);
	if (s->ntop == BUSIEST_TOP && s->top[BUSIEST_TOP - 1].cpu >= b.cpu)
		return;
	if (proc_read_comm(s->o->proc_root, pid, b.comm, sizeof(b.comm)))
		snprintf(b.comm, sizeof(b.comm), "?");
	text_utf8_sanitize(b.comm);
	owner_format(&ow, b.owner, sizeof(b.owner));
	text_utf8_sanitize(b.owner);
	keep_top(s, &b);
}

static int scan_proc(struct scan *s)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	dir = opendir(s->o->proc_root);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < BUSIEST_MAX_PROCS) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > INT32_MAX)
			continue;
		n++;
		scan_one(s, (uint32_t)pid);
	}
	closedir(dir);
	return 0;
}

static int cmp_svc(const void *a, const void *b)
{
	const struct svc *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->ns, y->ns);
}

static json_t *services_json(struct scan *s)
{
	char target[2 * OWNER_NAME_MAX + 16];
	json_t *arr = json_array();
	size_t i;

	qsort(s->svcs, s->nsvcs, sizeof(*s->svcs), cmp_svc);
	for (i = 0; arr && i < s->nsvcs; i++) {
		const struct svc *v = &s->svcs[i];

		snprintf(target, sizeof(target), "service:%s%s%s", v->ns, v->ns[0] ? "/" : "",
			 v->name);
		text_utf8_sanitize(target);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:I}", "name", v->name,
						     "namespace", v->ns, "target", target,
						     "processes", (json_int_t)v->procs));
	}
	return arr;
}

static json_t *top_json(const struct scan *s)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < s->ntop; i++) {
		const struct busy *b = &s->top[i];

		json_array_append_new(arr,
				      json_pack("{s:I, s:s, s:f, s:s}", "pid", (json_int_t)b->pid,
						"comm", b->comm, "cpu_percent",
						(double)(long)(b->cpu * 10) / 10, "owner",
						b->owner));
	}
	return arr;
}

int busiest_json(const struct busiest_opts *o, char **json)
{
	struct owner_resolver_opts ro = { .proc_root = o->proc_root,
					  .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct busiest_opts dflt = *o;
	struct scan s = { .o = &dflt };
	json_t *doc;
	int err;

	if (!dflt.proc_root)
		dflt.proc_root = ro.proc_root = "/proc";
	s.uptime_s = read_uptime(dflt.proc_root);
	s.hz = sysconf(_SC_CLK_TCK);
	s.svcs = calloc(BUSIEST_MAX_SERVICES, sizeof(*s.svcs));
	if (!s.svcs)
		return -ENOMEM;
	err = owner_resolver__new(&ro, &s.owners);
	if (!err)
		err = scan_proc(&s);
	if (!err) {
		doc = json_pack("{s:o, s:o}", "busiest", top_json(&s), "services",
				services_json(&s));
		*json = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(4)) : NULL;
		json_decref(doc);
		err = *json ? 0 : -ENOMEM;
	}
	owner_resolver__free(s.owners);
	free(s.svcs);
	return err;
}
