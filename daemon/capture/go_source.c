// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/go_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/strlist.h"
#include "profile/profile.h"
#include "runtimes/go/go_pprof.h"
#include "runtimes/go/goroutines.h"

struct go_proc {
	uint32_t pid;
	char comm[16];
	char exe[256]; /* the binary as the process sees it */
	struct go_endpoint ep;
	struct profile *start[2]; /* memory-alloc: allocs; locks: mutex, block */
	long mutex_period;	  /* from mutex?debug=1; -1 unknown */
	bool unreachable;	  /* a request failed on the network: no more are sent */
};

struct go_source {
	enum question q;
	const char *proc_root;
	struct go_proc procs[GO_SOURCE_MAX_PROCS];
	size_t nprocs;
	struct strlist notes;
	struct go_groups groups;
};

bool go_source_question(enum question q)
{
	return q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC || q == Q_LOCKS || q == Q_THREADS;
}

/* A note for the capture's answer (at most STRLIST_MAX). */
#define note(src, ...) strlist_addf(&(src)->notes, __VA_ARGS__)

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
	strlist_clear(&g->notes);
	go_groups_release(&g->groups);
	free(g);
}

int go_source__add(struct go_source *g, uint32_t pid, const char *comm, uint16_t *port, char *why,
		   size_t size)
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
	return strlist_get(&g->notes, notes);
}

const struct go_goroutine_group *go_source__goroutines(const struct go_source *g, size_t *n,
						       uint64_t *total)
{
	*n = g->groups.n;
	*total = g->groups.total;
	return g->groups.g;
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
static int fetch_profile(struct go_source *g, struct go_proc *p, const char *path, const char *what,
			 const char *t0, const char *t1, struct profile **out)
{
	char *body = NULL;
	size_t len = 0;
	int ret;

	ret = fetch(g, p, path, what, &body, &len);
	if (ret)
		return ret;
	ret = go_profiles_decode(body, len, t0, t1, GO_SOURCE_MAX_DECODED, out);
	free(body);
	if (ret)
		note(g,
		     "Process %u (%s): its %s from %s:%u%s is not a pprof profile with %s and %s "
		     "(%s); it is left out.",
		     p->pid, p->comm, what, p->ep.host, p->ep.port, path, t0, t1,
		     go_profiles_decode_why(ret));
	return ret;
}

/* "sampling period=N" of /debug/pprof/mutex?debug=1: the program's mutex profile fraction. */
static long mutex_period(struct go_source *g, struct go_proc *p)
{
	char *body = NULL;
	size_t len = 0;
	long v;

	if (fetch(g, p, "/debug/pprof/mutex?debug=1", "mutex profile", &body, &len))
		return -1;
	v = go_profiles_mutex_period(body);
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
	go_profiles_labels(l, p->pid, p->comm);
}

static int finish_locks(struct go_source *g, struct go_proc *p, struct profile *dst,
			const struct prof_labels *l)
{
	struct profile *end = NULL;
	int ret = 0;

	if (p->mutex_period == 0)
		note(g,
		     "Process %u (%s) does not record Go mutex contention: the program has not "
		     "turned on the mutex profile. To see which functions hold contended "
		     "sync.Mutex locks, call runtime.SetMutexProfileFraction(5) when it starts "
		     "(and runtime.SetBlockProfileRate(10000) for where goroutines block).",
		     p->pid, p->comm);
	else if (p->start[0] && !fetch_profile(g, p, "/debug/pprof/mutex", "mutex profile", "delay",
					       "contentions", &end)) {
		ret = go_profiles_add_delta(dst, end, p->start[0], l, GO_PROFILES_MUTEX_LEAF, NULL);
		profile__free(end);
		end = NULL;
	}
	if (ret || !p->start[1] ||
	    fetch_profile(g, p, "/debug/pprof/block", "block profile", "delay", "contentions",
			  &end))
		return ret;
	if (!profile__nsamples(end) && p->mutex_period == 0)
		note(g,
		     "Process %u (%s) recorded no Go blocking events either: the block profile "
		     "is off unless the program calls runtime.SetBlockProfileRate.",
		     p->pid, p->comm);
	/* With the mutex profile on, its waits are already counted from the holder's side. */
	ret = go_profiles_add_delta(dst, end, p->start[1], l, GO_PROFILES_BLOCK_LEAF,
				    p->mutex_period > 0 ? go_profiles_not_sync_mutex : NULL);
	profile__free(end);
	return ret;
}

static int finish_goroutines(struct go_source *g, struct go_proc *p, struct profile *dst,
			     const struct prof_labels *l)
{
	struct go_goroutines *gs = NULL;
	char *body = NULL;
	size_t len = 0;
	int ret;

	if (fetch(g, p, "/debug/pprof/goroutine?debug=2", "goroutine dump", &body, &len))
		return 0;
	ret = go_goroutines_parse(body, len, &gs);
	free(body);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		note(g,
		     "Process %u (%s): what %s:%u sent as its goroutine dump is not one (%s); "
		     "it is left out.",
		     p->pid, p->comm, p->ep.host, p->ep.port,
		     ret == -EFBIG ? "too large" : "not the text of a goroutine dump");
		return 0;
	}
	ret = go_profiles_add_goroutines(dst, gs, l, p->comm, p->exe, &g->groups);
	if (!ret && gs->goroutines_dropped)
		note(g,
		     "Process %u (%s) has more goroutines than one capture keeps; %zu are left "
		     "out.",
		     p->pid, p->comm, gs->goroutines_dropped);
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
				ret = go_profiles_add_delta(dst, end, NULL, &l, NULL, NULL);
			break;
		case Q_MEMORY_ALLOC:
			if (p->start[0] &&
			    !fetch_profile(g, p, "/debug/pprof/allocs", "allocation profile",
					   "alloc_space", "alloc_objects", &end))
				ret = go_profiles_add_delta(dst, end, p->start[0], &l, NULL, NULL);
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
	go_groups_sort(&g->groups);
	return ret;
}
