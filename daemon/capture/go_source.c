// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/go_source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "profile/merge.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/go/go_pprof.h"
#include "runtimes/go/goroutines.h"

#define MAX_GROUPS 4096

struct go_proc {
	uint32_t pid;
	char comm[16];
	char exe[256];			/* the binary as the process sees it */
	struct go_endpoint ep;
	struct profile *start[2];	/* memory-alloc: allocs; locks: mutex, block */
	long mutex_period;		/* from mutex?debug=1; -1 unknown */
	bool unreachable;		/* a request failed on the network: no more are sent */
};

struct go_source {
	enum question q;
	const char *proc_root;
	struct go_proc procs[GO_SOURCE_MAX_PROCS];
	size_t nprocs;
	char *notes[GO_SOURCE_MAX_NOTES];
	size_t nnotes;
	struct go_goroutine_group *groups;
	size_t ngroups;
	uint64_t goroutines;
};

bool go_source_question(enum question q)
{
	return q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC || q == Q_LOCKS || q == Q_THREADS;
}

static void note(struct go_source *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct go_source *g, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (g->nnotes >= GO_SOURCE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		g->notes[g->nnotes++] = s;
	va_end(ap);
}

int go_source__new(enum question q, const char *proc_root, struct go_source **out)
{
	struct go_source *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->q = q;
	g->proc_root = proc_root ? proc_root : "/proc";
	*out = g;
	return 0;
}

void go_source__free(struct go_source *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nprocs; i++) {
		profile__free(g->procs[i].start[0]);
		profile__free(g->procs[i].start[1]);
	}
	for (i = 0; i < g->nnotes; i++)
		free(g->notes[i]);
	free(g->groups);
	free(g);
}

int go_source__add(struct go_source *g, uint32_t pid, const char *comm, uint16_t *port,
		   char *why, size_t size)
{
	struct go_proc *p;
	char path[64];
	ssize_t n;
	size_t i;
	int ret;

	for (i = 0; i < g->nprocs; i++)
		if (g->procs[i].pid == pid)
			return -EEXIST;
	if (g->nprocs >= GO_SOURCE_MAX_PROCS) {
		snprintf(why, size, "more than %d Go processes in the target", GO_SOURCE_MAX_PROCS);
		return -E2BIG;
	}
	p = &g->procs[g->nprocs];
	memset(p, 0, sizeof(*p));
	ret = go_pprof_find(g->proc_root, (int)pid, &p->ep, why, size);
	if (ret)
		return ret;
	p->pid = pid;
	p->mutex_period = -1;
	{
		size_t l = comm ? strnlen(comm, sizeof(p->comm) - 1) : 0;

		memmove(p->comm, comm ? comm : "", l);
		p->comm[l] = '\0';
	}
	snprintf(path, sizeof(path), "%s/%u/exe", g->proc_root, pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	p->exe[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		memcpy(p->exe, p->comm, sizeof(p->comm));
	*port = p->ep.port;
	g->nprocs++;
	return 0;
}

size_t go_source__count(const struct go_source *g)
{
	return g ? g->nprocs : 0;
}

void go_source__endpoint(const struct go_source *g, uint32_t pid, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < g->nprocs; i++)
		if (g->procs[i].pid == pid)
			snprintf(buf, size, "%s", g->procs[i].ep.host);
}

size_t go_source__notes(const struct go_source *g, const char *const **notes)
{
	*notes = (const char *const *)g->notes;
	return g->nnotes;
}

const struct go_goroutine_group *go_source__goroutines(const struct go_source *g, size_t *n,
							 uint64_t *total)
{
	*n = g->ngroups;
	*total = g->goroutines;
	return g->groups;
}

/* GET @path from @p's endpoint; failures become a note naming @what. */
static int fetch(struct go_source *g, struct go_proc *p, const char *path, const char *what,
		 char **body, size_t *len)
{
	char why[256] = "";
	int ret;

	/* One note per process that stopped answering, and no more waiting on it. */
	if (p->unreachable)
		return -EHOSTUNREACH;
	ret = go_pprof_get(g->proc_root, (int)p->pid, &p->ep, path, GO_SOURCE_FETCH_TIMEOUT_MS,
			   GO_SOURCE_MAX_BYTES, body, len, why, sizeof(why));
	if (!ret)
		return 0;
	p->unreachable = ret == -ETIMEDOUT || ret == -ECONNREFUSED || ret == -ECONNRESET ||
			 ret == -ENETUNREACH || ret == -EHOSTUNREACH || ret == -ESRCH ||
			 ret == -EPERM;
	if (ret == -ETIMEDOUT)
		snprintf(why, sizeof(why), "no complete answer within %.0f s",
			 GO_SOURCE_FETCH_TIMEOUT_MS / 1000.0);
	else if (ret == -EFBIG)
		snprintf(why, sizeof(why), "the answer was larger than %u MiB",
			 GO_SOURCE_MAX_BYTES >> 20);
	else if (!why[0])
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	note(g, "Process %u (%s): its %s could not be read from %s:%u%s: %s.", p->pid, p->comm,
	     what, p->ep.host, p->ep.port, path, why);
	return ret;
}

/* Fetches and decodes one profile in the sample types @t0, @t1. */
static int fetch_profile(struct go_source *g, struct go_proc *p, const char *path,
			 const char *what, const char *t0, const char *t1, struct profile **out)
{
	struct pprof_decode_opts o = { .default_lang = PROF_LANG_GO,
				       .sample_types = { t0, t1 },
				       .max_decoded = GO_SOURCE_MAX_DECODED };
	char *body = NULL;
	size_t len = 0;
	int ret;

	ret = fetch(g, p, path, what, &body, &len);
	if (ret)
		return ret;
	ret = pprof_decode_ext(body, len, &o, out);
	free(body);
	if (ret)
		note(g, "Process %u (%s): its %s from %s:%u%s is not a pprof profile with %s and %s "
			"(%s); it is left out.", p->pid, p->comm, what, p->ep.host, p->ep.port, path,
		     t0, t1, ret == -ENOENT ? "those sample types are missing" :
		     ret == -EFBIG ? "too large" : "malformed");
	return ret;
}

/* "sampling period=N" of /debug/pprof/mutex?debug=1: the program's mutex profile fraction. */
static long mutex_period(struct go_source *g, struct go_proc *p)
{
	const char *key = "sampling period=";
	char *body = NULL, *s;
	size_t len = 0;
	long v = -1;

	if (fetch(g, p, "/debug/pprof/mutex?debug=1", "mutex profile", &body, &len))
		return -1;
	s = strstr(body, key);
	if (s)
		v = strtol(s + strlen(key), NULL, 10);
	free(body);
	return v;
}

void go_source__start(struct go_source *g)
{
	size_t i;

	for (i = 0; i < g->nprocs; i++) {
		struct go_proc *p = &g->procs[i];

		if (g->q == Q_MEMORY_ALLOC) {
			fetch_profile(g, p, "/debug/pprof/allocs", "allocation profile",
				      "alloc_space", "alloc_objects", &p->start[0]);
		} else if (g->q == Q_LOCKS) {
			p->mutex_period = mutex_period(g, p);
			if (p->mutex_period != 0)
				fetch_profile(g, p, "/debug/pprof/mutex", "mutex profile", "delay",
					      "contentions", &p->start[0]);
			fetch_profile(g, p, "/debug/pprof/block", "block profile", "delay",
				      "contentions", &p->start[1]);
		}
	}
}

static void labels_of(struct go_proc *p, go_labels_fn_t fn, void *ctx, struct prof_labels *l)
{
	memset(l, 0, sizeof(*l));
	if (fn)
		fn(ctx, p->pid, l);
	l->pid = p->pid;
	if (!l->process)
		l->process = p->comm;
	l->lang = PROF_LANG_GO;
}

/* False when a stack (leaf first) waits on a sync mutex: the block profile's view of a wait the
 * mutex profile also holds. */
static bool not_sync_mutex(const struct profile *p, const struct prof_sample *s)
{
	size_t i;

	for (i = 0; i < s->nframes && i < 8; i++) {
		const struct prof_frame_info *f = profile__frame_info(p, s->frames[i]);

		if (f && f->function && (!strcmp(f->function, "sync.(*Mutex).Lock") ||
					 !strcmp(f->function, "sync.(*Mutex).lockSlow") ||
					 !strcmp(f->function, "sync.(*RWMutex).Lock") ||
					 !strcmp(f->function, "sync.(*RWMutex).RLock")))
			return false;
	}
	return true;
}

/* Adds @end (minus @start when given) to @dst under @leaf_text; frees nothing. */
static int add_delta(struct profile *dst, struct profile *end, struct profile *start,
		     const struct prof_labels *l, const char *leaf_text,
		     bool (*keep)(const struct profile *, const struct prof_sample *))
{
	struct prof_frame_info leaf = { .function = leaf_text, .mapping = REPORT_WAIT_MAPPING,
					.lang = PROF_LANG_KERNEL };
	struct profile_merge_opts mo = { .labels = l, .positive_only = true,
					 .leaf = leaf_text ? &leaf : NULL, .keep = keep };
	struct profile *d = NULL;
	int ret;

	ret = profile_delta(end, start, &d);
	if (!ret)
		ret = profile_merge(dst, d, &mo);
	profile__free(d);
	return ret;
}

static int finish_locks(struct go_source *g, struct go_proc *p, struct profile *dst,
			const struct prof_labels *l)
{
	struct profile *end = NULL;
	int ret = 0;

	if (p->mutex_period == 0)
		note(g, "Process %u (%s) does not record Go mutex contention: the program has not "
			"turned on the mutex profile. To see which functions hold contended "
			"sync.Mutex locks, call runtime.SetMutexProfileFraction(5) when it starts "
			"(and runtime.SetBlockProfileRate(10000) for where goroutines block).",
		     p->pid, p->comm);
	else if (p->start[0] &&
		 !fetch_profile(g, p, "/debug/pprof/mutex", "mutex profile", "delay",
				"contentions", &end)) {
		ret = add_delta(dst, end, p->start[0], l, "[lock wait: Go sync.Mutex, by holder]",
				NULL);
		profile__free(end);
		end = NULL;
	}
	if (ret || !p->start[1] ||
	    fetch_profile(g, p, "/debug/pprof/block", "block profile", "delay", "contentions",
			  &end))
		return ret;
	if (!profile__nsamples(end) && p->mutex_period == 0)
		note(g, "Process %u (%s) recorded no Go blocking events either: the block profile "
			"is off unless the program calls runtime.SetBlockProfileRate.", p->pid,
		     p->comm);
	/* With the mutex profile on, its waits are already counted from the holder's side. */
	ret = add_delta(dst, end, p->start[1], l, "[lock wait: Go blocking]",
			p->mutex_period > 0 ? not_sync_mutex : NULL);
	profile__free(end);
	return ret;
}

static int group_add(struct go_source *g, const struct go_proc *p, const char *state,
		     const char *fn)
{
	size_t i;

	for (i = 0; i < g->ngroups; i++) {
		struct go_goroutine_group *x = &g->groups[i];

		if (x->pid == p->pid && !strcmp(x->state, state) && !strcmp(x->function, fn)) {
			x->count++;
			return 0;
		}
	}
	if (g->ngroups >= MAX_GROUPS)
		return 0;
	if (!g->groups) {
		g->groups = calloc(MAX_GROUPS, sizeof(*g->groups));
		if (!g->groups)
			return -ENOMEM;
	}
	g->groups[g->ngroups].pid = p->pid;
	snprintf(g->groups[g->ngroups].process, sizeof(g->groups[0].process), "%s", p->comm);
	snprintf(g->groups[g->ngroups].state, sizeof(g->groups[0].state), "%s", state);
	snprintf(g->groups[g->ngroups].function, sizeof(g->groups[0].function), "%s", fn);
	g->groups[g->ngroups].count = 1;
	g->ngroups++;
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct go_goroutine_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The goroutine of the program's HTTP server that is writing the dump we asked for. */
static bool writes_the_dump(const struct go_goroutine *gr)
{
	uint32_t j;

	for (j = 0; j < gr->nframes && j < 16; j++)
		if (gr->frames[j].func &&
		    !strncmp(gr->frames[j].func, "runtime/pprof.writeGoroutine", 28))
			return true;
	return false;
}

/* One goroutine: its stack under a leaf saying its state, and its group. */
static int add_goroutine(struct go_source *g, const struct go_proc *p, struct profile *dst,
			 const struct prof_labels *l, const struct go_goroutine *gr)
{
	const char *state = gr->state && *gr->state ? gr->state : "unknown", *mine = NULL;
	char leaf_text[96];
	struct prof_frame_info leaf = { .function = leaf_text, .mapping = REPORT_WAIT_MAPPING,
					.lang = PROF_LANG_KERNEL };
	uint32_t frames[PROF_MAX_FRAMES], j;
	int64_t one = 1;
	size_t n = 0;
	int id, ret;

	snprintf(leaf_text, sizeof(leaf_text), "[goroutine: %s]", state);
	id = profile__frame(dst, &leaf);
	if (id < 0)
		return id;
	frames[n++] = (uint32_t)id;
	for (j = 0; j < gr->nframes && n < PROF_MAX_FRAMES; j++) {
		struct prof_frame_info fi = { .function = gr->frames[j].func,
					      .file = gr->frames[j].file,
					      .line = gr->frames[j].line,
					      .mapping = p->exe, .lang = PROF_LANG_GO };

		if (!mine && fi.function && !report_is_go_std(fi.function))
			mine = fi.function;
		id = profile__frame(dst, &fi);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
	}
	ret = profile__add(dst, frames, n, l, &one);
	if (ret)
		return ret;
	if (!mine)
		mine = gr->nframes && gr->frames[0].func ? gr->frames[0].func : "?";
	g->goroutines++;
	return group_add(g, p, state, mine);
}

static int finish_goroutines(struct go_source *g, struct go_proc *p, struct profile *dst,
			     const struct prof_labels *l)
{
	struct go_goroutines *gs = NULL;
	char *body = NULL;
	size_t len = 0, i;
	int ret;

	if (fetch(g, p, "/debug/pprof/goroutine?debug=2", "goroutine dump", &body, &len))
		return 0;
	ret = go_goroutines_parse(body, len, &gs);
	free(body);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		note(g, "Process %u (%s): what %s:%u sent as its goroutine dump is not one (%s); "
			"it is left out.", p->pid, p->comm, p->ep.host, p->ep.port,
		     ret == -EFBIG ? "too large" : "not the text of a goroutine dump");
		return 0;
	}
	for (i = 0; i < gs->n && !ret; i++)
		if (!writes_the_dump(&gs->g[i]))	/* answering us: not the program's */
			ret = add_goroutine(g, p, dst, l, &gs->g[i]);
	if (!ret && gs->goroutines_dropped)
		note(g, "Process %u (%s) has more goroutines than one capture keeps; %zu are left "
			"out.", p->pid, p->comm, gs->goroutines_dropped);
	go_goroutines_free(gs);
	return ret;
}

int go_source__finish(struct go_source *g, struct profile *dst, go_labels_fn_t labels, void *ctx)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < g->nprocs && !ret; i++) {
		struct go_proc *p = &g->procs[i];
		struct profile *end = NULL;
		struct prof_labels l;

		labels_of(p, labels, ctx, &l);
		switch (g->q) {
		case Q_MEMORY_HELD:
			if (!fetch_profile(g, p, "/debug/pprof/heap?gc=1", "heap profile",
					   "inuse_space", "inuse_objects", &end))
				ret = add_delta(dst, end, NULL, &l, NULL, NULL);
			break;
		case Q_MEMORY_ALLOC:
			if (p->start[0] &&
			    !fetch_profile(g, p, "/debug/pprof/allocs", "allocation profile",
					   "alloc_space", "alloc_objects", &end))
				ret = add_delta(dst, end, p->start[0], &l, NULL, NULL);
			break;
		case Q_LOCKS:
			ret = finish_locks(g, p, dst, &l);
			break;
		case Q_THREADS:
			ret = finish_goroutines(g, p, dst, &l);
			break;
		default:
			break;
		}
		profile__free(end);
	}
	if (g->ngroups)
		qsort(g->groups, g->ngroups, sizeof(*g->groups), cmp_group);
	return ret;
}
