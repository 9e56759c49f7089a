// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/node_source.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/strlist.h"
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
	char entry[96]; /* its journal entry while its inspector, opened by us, is open */
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
	struct strlist notes;
};

/* A note for the capture's answer (at most STRLIST_MAX). */
#define note(src, ...) strlist_addf(&(src)->notes, __VA_ARGS__)

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

#define ENTRY_PREFIX "inspector-"

/* Journals (before SIGUSR1 is sent: node_insp_opts.on_signal) that process @p's inspector may
 * be opened on @port; a capture killed before it closes it leaves the entry. */
static void journal_add(struct node_source *ns, struct node_sproc *p, uint16_t port)
{
	char file[700], old[700];
	struct proc_stat st;

	if (!ns->o.journal || proc_read_stat(ns->o.proc_root, p->pid, &st) ||
	    mkdir_p(ns->o.journal))
		return;
	snprintf(old, sizeof(old), "%s/%s", ns->o.journal, p->entry);
	snprintf(p->entry, sizeof(p->entry), ENTRY_PREFIX "%u-%llu-%u", p->pid, st.starttime, port);
	snprintf(file, sizeof(file), "%s/%s", ns->o.journal, p->entry);
	if (atomic_write_buf(file, "", 0))
		p->entry[0] = '\0';
	else if (strcmp(old, file) && old[strlen(ns->o.journal) + 1])
		unlink(old);
}

struct signal_ctx {
	struct node_source *ns;
	struct node_sproc *p;
};

static void on_signal(void *ctx)
{
	struct signal_ctx *c = ctx;

	/* SIGUSR1 opens it on Node's default port unless --inspect-port says otherwise */
	journal_add(c->ns, c->p, NODE_INSP_DEFAULT_PORT);
}

static void journal_remove(const char *journal, const char *entry)
{
	char file[700];

	if (!journal || !entry[0])
		return;
	snprintf(file, sizeof(file), "%s/%s", journal, entry);
	unlink(file);
}

int node_source_parse_entry(const char *name, uint32_t *pid, unsigned long long *start,
			    uint16_t *port)
{
	unsigned long long a, b, c;
	char tail;

	if (strncmp(name, ENTRY_PREFIX, strlen(ENTRY_PREFIX)) ||
	    sscanf(name + strlen(ENTRY_PREFIX), "%llu-%llu-%llu%c", &a, &b, &c, &tail) != 3 || !a ||
	    a > INT32_MAX || !c || c > 65535)
		return -EINVAL;
	*pid = (uint32_t)a;
	*start = b;
	*port = (uint16_t)c;
	return 0;
}

static void close_left(const char *proc_root, const char *name)
{
	struct node_insp_opts io = { .proc_root = proc_root };
	char why[NODE_INSP_WHY_MAX] = "";
	unsigned long long start;
	struct proc_stat st;
	uint16_t port;
	uint32_t pid;
	int err;

	if (node_source_parse_entry(name, &pid, &start, &port) ||
	    proc_read_stat(proc_root, pid, &st) || st.starttime != start)
		return; /* gone, or another process now */
	err = node_insp_close_left(&io, pid, port, why, sizeof(why));
	if (err && err != -ENOENT)
		pr_warn("node: the inspector a killed capture opened in process %u (port %u) "
			"could not be closed: %s",
			pid, port, why[0] ? why : strerror(-err));
	else if (!err)
		pr_info("node: closed the inspector a killed capture left open in process %u", pid);
}

int node_source_leftovers(const char *journal, const char *proc_root)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (!journal)
		return 0;
	d = opendir(journal);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < 256) {
		if (strncmp(de->d_name, ENTRY_PREFIX, strlen(ENTRY_PREFIX)))
			continue;
		close_left(proc_root, de->d_name);
		journal_remove(journal, de->d_name);
		n++;
	}
	closedir(d);
	return n;
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

/* Ends the session: closes an inspector we opened, with a note when it stays open. */
static void close_one(struct node_source *ns, struct node_sproc *p)
{
	char why[NODE_INSP_WHY_MAX] = "";

	if (!p->insp)
		return;
	if (node_insp__close(p->insp, why, sizeof(why)))
		note(ns, "The inspector of Node.js process %u (%s) could not be closed: %s.",
		     p->pid, p->comm, why);
	else
		journal_remove(ns->o.journal, p->entry);
	p->insp = NULL;
}

static void start_one(struct node_source *ns, struct node_sproc *p)
{
	struct signal_ctx sc = { ns, p };
	struct node_insp_opts io = { .proc_root = ns->o.proc_root,
				     .on_signal = on_signal,
				     .ctx = &sc };
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
		close_one(ns, p);
		return;
	}
	if (!node_insp__was_open(p->insp) && node_insp__port(p->insp) != NODE_INSP_DEFAULT_PORT)
		journal_add(ns, p, node_insp__port(p->insp));
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
	if (!ns) {
		*notes = NULL;
		return 0;
	}
	return strlist_get(&ns->notes, notes);
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
	strlist_clear(&ns->notes);
	free(ns);
}
