// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/node_source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/proc.h"
#include "daemon/capture/nodeframes.h"
#include "profile/profile.h"
#include "runtimes/node/cdp.h"
#include "runtimes/node/node_inspector.h"
#include "runtimes/node/v8prof.h"

/* A profile's answer can be large and V8 builds it when asked: allow it time. */
#define STOP_MS 15000
#define GC_MS 10000
#define TIMENS_MAX 4096

struct node_sproc {
	uint32_t pid;
	char comm[16];
	char version[32];
	struct node_insp *insp;
	bool started;
	int64_t offset_ns; /* its CLOCK_MONOTONIC minus ours (a time namespace) */
};

struct node_source {
	struct node_source_opts o;
	struct node_sproc procs[NODE_SOURCE_MAX_PROCS];
	size_t nprocs;
	uint32_t running[NODE_SOURCE_MAX_PROCS];
	size_t nrunning;
	char *notes[NODE_SOURCE_MAX_NOTES];
	size_t nnotes;
};

static void note(struct node_source *ns, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct node_source *ns, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (ns->nnotes >= NODE_SOURCE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		ns->notes[ns->nnotes++] = s;
	va_end(ap);
}

bool node_source_question(enum question q)
{
	return q == Q_CPU || q == Q_WALL || q == Q_MEMORY_ALLOC || q == Q_MEMORY_HELD;
}

static bool is_cpu(const struct node_source *ns)
{
	return ns->o.question == Q_CPU || ns->o.question == Q_WALL;
}

int node_source__new(const struct node_source_opts *o, struct node_source **out)
{
	struct node_source *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	ns->o = *o;
	*out = ns;
	return 0;
}

int node_source__add(struct node_source *ns, uint32_t pid, const char *comm, const char *version)
{
	struct node_sproc *p;
	size_t i;

	for (i = 0; i < ns->nprocs; i++)
		if (ns->procs[i].pid == pid)
			return -EEXIST;
	if (ns->nprocs == NODE_SOURCE_MAX_PROCS)
		return -E2BIG;
	p = &ns->procs[ns->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	snprintf(p->version, sizeof(p->version), "%s", version ? version : "");
	return 0;
}

size_t node_source__count(const struct node_source *ns)
{
	return ns ? ns->nprocs : 0;
}

/* The offset of the process's CLOCK_MONOTONIC from ours: the "monotonic" line of
 * /proc/PID/timens_offsets (Linux 5.6; 0 without the file). */
static int64_t clock_offset(const struct node_source *ns, uint32_t pid)
{
	long long sec = 0, nsec = 0;
	char *buf, *p;
	size_t len;

	if (proc_read(ns->o.proc_root, pid, "timens_offsets", TIMENS_MAX, &buf, &len))
		return 0;
	p = strstr(buf, "monotonic");
	if (p && sscanf(p, "monotonic %lld %lld", &sec, &nsec) != 2)
		sec = nsec = 0;
	free(buf);
	if (sec < -(1LL << 32) || sec > (1LL << 32))
		return 0;
	return (int64_t)sec * 1000000000LL + nsec;
}

static int call(struct node_sproc *p, const char *method, const char *params, int ms, char **text,
		size_t *len, char *why, size_t size)
{
	struct cdp_msg *m = NULL;
	int err;

	if (text)
		return node_insp__call_text(p->insp, method, params, ms, text, len, why, size);
	err = node_insp__call(p->insp, method, params, ms, &m, why, size);
	cdp_msg_free(m);
	return err;
}

static int start_profiler(struct node_source *ns, struct node_sproc *p, char *why, size_t size)
{
	char params[256];
	int err;

	if (is_cpu(ns)) {
		snprintf(params, sizeof(params), "{\"interval\":%d}", NODE_SOURCE_INTERVAL_US);
		err = call(p, "Profiler.enable", NULL, 0, NULL, NULL, why, size);
		if (!err)
			err = call(p, "Profiler.setSamplingInterval", params, 0, NULL, NULL, why,
				   size);
		return err ? err : call(p, "Profiler.start", NULL, 0, NULL, NULL, why, size);
	}
	snprintf(params, sizeof(params), "{\"samplingInterval\":%d,\"stackDepth\":128%s}",
		 NODE_SOURCE_HEAP_INTERVAL,
		 ns->o.question == Q_MEMORY_ALLOC ? ",\"includeObjectsCollectedByMajorGC\":true,"
						    "\"includeObjectsCollectedByMinorGC\":true" :
						    "");
	err = call(p, "HeapProfiler.enable", NULL, 0, NULL, NULL, why, size);
	return err ? err : call(p, "HeapProfiler.startSampling", params, 0, NULL, NULL, why, size);
}

static int major_of(const char *version)
{
	return atoi(version);
}

static void start_one(struct node_source *ns, struct node_sproc *p)
{
	struct node_insp_opts io = { .proc_root = ns->o.proc_root };
	char why[NODE_INSP_WHY_MAX] = "";
	int err;

	if (major_of(p->version) < NODE_SOURCE_MIN_MAJOR) {
		note(ns,
		     "Node.js %s in process %u (%s) is older than %d: its inspector is not opened, "
		     "and it keeps what eBPF can read.",
		     p->version[0] ? p->version : "of unknown version", p->pid, p->comm,
		     NODE_SOURCE_MIN_MAJOR);
		return;
	}
	err = node_insp__open(&io, p->pid, &p->insp, why, sizeof(why));
	if (!err) {
		p->offset_ns = clock_offset(ns, p->pid);
		err = start_profiler(ns, p, why, sizeof(why));
	}
	if (err) {
		note(ns,
		     "Node.js process %u (%s) could not be read through its inspector: %s. It keeps "
		     "what eBPF can read%s.",
		     p->pid, p->comm, why[0] ? why : strerror(-err),
		     is_cpu(ns) ? ", which names the native frames but not the JavaScript ones" :
				  " (nothing for this question)");
		node_insp__close(p->insp, NULL, 0);
		p->insp = NULL;
		return;
	}
	p->started = true;
	if (is_cpu(ns))
		ns->running[ns->nrunning++] = p->pid;
}

void node_source__start(struct node_source *ns)
{
	size_t i;

	for (i = 0; ns && i < ns->nprocs; i++)
		start_one(ns, &ns->procs[i]);
}

size_t node_source__running(const struct node_source *ns, const uint32_t **pids)
{
	*pids = ns ? ns->running : NULL;
	return ns ? ns->nrunning : 0;
}

/* Ends the session: closes an inspector we opened, with a note when it stays open. */
static void close_one(struct node_source *ns, struct node_sproc *p)
{
	char why[NODE_INSP_WHY_MAX] = "";

	if (!p->insp)
		return;
	if (node_insp__close(p->insp, why, sizeof(why)))
		note(ns, "The inspector of Node.js process %u (%s) could not be closed: %s.",
		     p->pid, p->comm, why);
	p->insp = NULL;
}

static int finish_cpu(struct node_source *ns, struct node_sproc *p, struct nodeframes *nf,
		      char *why, size_t size)
{
	struct v8prof *prof;
	size_t len;
	char *text;
	int err;

	err = call(p, "Profiler.stop", NULL, STOP_MS, &text, &len, why, size);
	if (err)
		return err;
	err = v8prof_cpu_parse(text, len, &prof);
	free(text);
	if (err) {
		snprintf(why, size, "its CPU profile could not be read (%s)", strerror(-err));
		return err;
	}
	err = nodeframes__add(nf, p->pid, prof, p->offset_ns);
	(void)ns;
	return err;
}

static int add_heap(struct profile *dst, const struct v8prof *prof, const struct prof_labels *l)
{
	const struct v8prof_node *nodes;
	const uint32_t *snode;
	const int64_t *stime;
	uint32_t idx[NODEFRAMES_MAX_DEPTH], frames[NODEFRAMES_MAX_DEPTH];
	size_t nn = v8prof_nodes(prof, &nodes), ns = v8prof_samples(prof, &snode, &stime);
	size_t i, k, n;
	uint64_t *count;
	int id, err = 0;

	count = calloc(nn ? nn : 1, sizeof(*count));
	if (!count)
		return -ENOMEM;
	for (i = 0; i < ns; i++)
		if (snode[i] < nn)
			count[snode[i]]++;
	for (i = 0; i < nn && !err; i++) {
		int64_t v[2] = { (int64_t)nodes[i].self_bytes, (int64_t)count[i] };

		if (!nodes[i].self_bytes || nodes[i].kind == V8PROF_ROOT)
			continue;
		n = v8prof_stack(prof, (uint32_t)i, idx, NODEFRAMES_MAX_DEPTH);
		for (k = 0; k < n; k++) {
			const struct v8prof_node *nd = &nodes[idx[k]];
			struct prof_frame_info fi = {
				.function = nd->function,
				.file = nd->url[0] ? nd->url : NULL,
				.line = nd->line > 0 ? (uint32_t)nd->line : 0,
				.mapping = nd->url[0] ? nd->url : "[javascript]",
				.lang = PROF_LANG_NODE,
			};

			id = profile__frame(dst, &fi);
			if (id < 0)
				break;
			frames[k] = (uint32_t)id;
		}
		err = k < n ? -ENOMEM : (n ? profile__add(dst, frames, n, l, v) : 0);
	}
	free(count);
	return err;
}

static int finish_heap(struct node_source *ns, struct node_sproc *p, struct profile *dst,
		       const struct prof_labels *l, char *why, size_t size)
{
	struct v8prof *prof;
	size_t len;
	char *text;
	int err = 0;

	if (ns->o.question == Q_MEMORY_HELD)
		err = call(p, "HeapProfiler.collectGarbage", NULL, GC_MS, NULL, NULL, why, size);
	if (!err)
		err = call(p, "HeapProfiler.stopSampling", NULL, STOP_MS, &text, &len, why, size);
	if (err)
		return err;
	err = v8prof_heap_parse(text, len, &prof);
	free(text);
	if (err) {
		snprintf(why, size, "its heap profile could not be read (%s)", strerror(-err));
		return err;
	}
	err = add_heap(dst, prof, l);
	v8prof_free(prof);
	return err;
}

int node_source__finish(struct node_source *ns, struct profile *dst, node_labels_fn_t labels,
			void *ctx, struct nodeframes *nf)
{
	char why[NODE_INSP_WHY_MAX];
	size_t i;
	int err = 0, e;

	for (i = 0; ns && i < ns->nprocs; i++) {
		struct node_sproc *p = &ns->procs[i];
		struct prof_labels l = { 0 };

		if (!p->started)
			continue;
		if (labels)
			labels(ctx, p->pid, &l);
		l.pid = p->pid;
		l.lang = PROF_LANG_NODE;
		if (!l.process)
			l.process = p->comm;
		why[0] = '\0';
		e = is_cpu(ns) ? finish_cpu(ns, p, nf, why, sizeof(why)) :
				 finish_heap(ns, p, dst, &l, why, sizeof(why));
		p->started = false;
		if (e == -ENOMEM)
			err = e;
		else if (e)
			note(ns,
			     "V8's profile of Node.js process %u (%s) could not be read: %s. It keeps "
			     "what eBPF can read.",
			     p->pid, p->comm, why[0] ? why : strerror(-e));
		close_one(ns, p);
	}
	return err;
}

size_t node_source__notes(const struct node_source *ns, const char *const **notes)
{
	*notes = ns ? (const char *const *)ns->notes : NULL;
	return ns ? ns->nnotes : 0;
}

void node_source__free(struct node_source *ns)
{
	char why[NODE_INSP_WHY_MAX];
	size_t i;

	if (!ns)
		return;
	for (i = 0; i < ns->nprocs; i++) {
		struct node_sproc *p = &ns->procs[i];

		/* a capture that failed or was stopped: stop what runs, then close */
		if (p->started && p->insp)
			call(p, is_cpu(ns) ? "Profiler.stop" : "HeapProfiler.stopSampling", NULL,
			     2000, NULL, NULL, why, sizeof(why));
		close_one(ns, p);
	}
	for (i = 0; i < ns->nnotes; i++)
		free(ns->notes[i]);
	free(ns);
}
