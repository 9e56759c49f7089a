// SPDX-License-Identifier: Apache-2.0
/*
 * resolver: tgid -> owner with a bounded cache.
 *
 * One cache entry per tgid, tagged with the start time from /proc/PID/stat: a live process whose
 * start time differs is a reused PID and is resolved again (the entry is overwritten); a process
 * that is gone keeps the entry it had. Entries sit in a hash table and on a recency list; when
 * the table is full the least recently used entry is recycled.
 */
#include "cgroups/resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/proc.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */
#define KTHREADD_TGID 2
#define DEFAULT_MAX_ENTRIES 8192
#define COMM_MAX 256
#define CGROUP_MAX (64 * 1024) /* a few hundred bytes in practice; v1 hosts list ~13 lines */

struct entry {
	int tgid;
	unsigned long long starttime;
	struct owner owner;
	struct entry *hnext;	   /* hash chain */
	struct entry *prev, *next; /* recency list, most recent first */
};

struct owner_resolver {
	int proc_fd;
	owner_name_fn_t name_fn;
	void *name_ctx;
	size_t max_entries;
	size_t nr_entries;
	size_t nr_buckets; /* power of two */
	struct entry **buckets;
	struct entry *head, *tail;
};

static size_t bucket_of(const struct owner_resolver *r, int tgid)
{
	uint32_t h = (uint32_t)tgid * 2654435761u;

	return h & (r->nr_buckets - 1);
}

static struct entry *cache_find(struct owner_resolver *r, int tgid)
{
	struct entry *e;

	for (e = r->buckets[bucket_of(r, tgid)]; e; e = e->hnext)
		if (e->tgid == tgid)
			return e;
	return NULL;
}

static void list_unlink(struct owner_resolver *r, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		r->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		r->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push_front(struct owner_resolver *r, struct entry *e)
{
	e->prev = NULL;
	e->next = r->head;
	if (r->head)
		r->head->prev = e;
	r->head = e;
	if (!r->tail)
		r->tail = e;
}

static void touch(struct owner_resolver *r, struct entry *e)
{
	list_unlink(r, e);
	list_push_front(r, e);
}

static void hash_unlink(struct owner_resolver *r, struct entry *e)
{
	struct entry **pp = &r->buckets[bucket_of(r, e->tgid)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	e->hnext = NULL;
}

/* Stores the answer for (tgid, starttime), replacing an older process with the same tgid. */
static int cache_store(struct owner_resolver *r, int tgid, unsigned long long starttime,
		       const struct owner *o)
{
	struct entry *e = cache_find(r, tgid);
	size_t b;

	if (e) {
		touch(r, e);
	} else {
		if (r->nr_entries >= r->max_entries) {
			e = r->tail;
			hash_unlink(r, e);
			list_unlink(r, e);
		} else {
			e = calloc(1, sizeof(*e));
			if (!e)
				return -ENOMEM;
			r->nr_entries++;
		}
		e->tgid = tgid;
		b = bucket_of(r, tgid);
		e->hnext = r->buckets[b];
		r->buckets[b] = e;
		list_push_front(r, e);
	}
	e->starttime = starttime;
	e->owner = *o;
	return 0;
}

static bool is_shell(const char *comm)
{
	static const char *const shells[] = {
		"bash", "sh",  "zsh", "dash",	 "fish", "ksh",	   "mksh", "pdksh", "oksh",
		"tcsh", "csh", "ash", "busybox", "yash", "elvish", "nu",   "xonsh",
	};
	size_t i;

	if (comm[0] == '-') /* login shells as named by some tools */
		comm++;
	for (i = 0; i < ARRAY_SIZE(shells); i++)
		if (!strcmp(comm, shells[i]))
			return true;
	return false;
}

/* Whether the session leader @sid is a shell; false when it is gone or unreadable. */
static bool leader_is_shell(const struct owner_resolver *r, long long sid)
{
	char *comm;
	size_t len;
	bool ret;

	if (sid <= 0 || sid > UINT32_MAX ||
	    proc_read_at(r->proc_fd, (uint32_t)sid, "comm", COMM_MAX, &comm, &len))
		return false;
	if (len && comm[len - 1] == '\n')
		comm[--len] = '\0';
	ret = len == strlen(comm) && is_shell(comm);
	free(comm);
	return ret;
}

/*
 * The rules of resolver.h on a live process. Returns 0 with @o set, or -ESRCH when it exited
 * meanwhile, or another -errno.
 */
static int classify(const struct owner_resolver *r, int tgid, const struct proc_stat *st,
		    struct owner *o)
{
	size_t len;
	char *buf;
	int err;

	memset(o, 0, sizeof(*o));
	if ((st->flags & PF_KTHREAD) || st->ppid == KTHREADD_TGID || tgid == KTHREADD_TGID ||
	    tgid == 1) {
		o->group = OWNER_SYSTEM;
		return 0;
	}
	err = proc_read_at(r->proc_fd, (uint32_t)tgid, "cgroup", CGROUP_MAX, &buf, &len);
	if (err == -ESRCH)
		return -ESRCH;
	/* an unreadable or oversized cgroup file places nothing; the other rules still apply */
	if (!err) {
		err = owner_from_proc_cgroup_n(buf, len, o);
		free(buf);
	}
	if (err) {
		memset(o, 0, sizeof(*o));
		if (st->tty_nr != 0 || leader_is_shell(r, st->session))
			o->group = OWNER_SESSIONS;
		else
			o->group = OWNER_OTHER;
	}
	/* An error from the seam keeps the owner found here (resolver.h). */
	if (r->name_fn) {
		struct owner renamed = *o;

		if (!r->name_fn(r->name_ctx, tgid, &renamed))
			*o = renamed;
	}
	return 0;
}

int owner_resolver__resolve(struct owner_resolver *r, int tgid, struct owner *out)
{
	struct proc_stat st = { 0 };
	struct owner o;
	struct entry *e;
	int err;

	if (!r || !out || tgid <= 0)
		return -EINVAL;
	err = proc_read_stat_at(r->proc_fd, (uint32_t)tgid, &st);
	if (err == -ESRCH) {
		e = cache_find(r, tgid);
		if (!e)
			return -ESRCH;
		*out = e->owner;
		return 0;
	}
	if (err)
		return err;
	e = cache_find(r, tgid);
	if (e && e->starttime == st.starttime) {
		touch(r, e);
		*out = e->owner;
		return 0;
	}
	err = classify(r, tgid, &st, &o);
	if (err == -ESRCH && e) {
		/* exited between the two reads: the entry may still be this process's */
		*out = e->owner;
		return 0;
	}
	if (err)
		return err;
	err = cache_store(r, tgid, st.starttime, &o);
	if (err)
		return err;
	*out = o;
	return 0;
}

int owner_resolver__new(const struct owner_resolver_opts *opts, struct owner_resolver **out)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : "/proc";
	struct owner_resolver *r;
	int err;

	if (!out)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->proc_fd = -1;
	r->max_entries = opts && opts->max_entries ? opts->max_entries : DEFAULT_MAX_ENTRIES;
	if (opts) {
		r->name_fn = opts->name_fn;
		r->name_ctx = opts->name_ctx;
	}
	/* about two entries per bucket at the bound; capped so a huge bound stays cheap */
	r->nr_buckets = 16;
	while (r->nr_buckets < r->max_entries / 2 && r->nr_buckets < (1u << 20))
		r->nr_buckets <<= 1;
	r->buckets = calloc(r->nr_buckets, sizeof(*r->buckets));
	if (!r->buckets) {
		err = -ENOMEM;
		goto err_free;
	}
	r->proc_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->proc_fd < 0) {
		err = -errno;
		goto err_free;
	}
	*out = r;
	return 0;

err_free:
	owner_resolver__free(r);
	return err;
}

void owner_resolver__free(struct owner_resolver *r)
{
	struct entry *e, *next;

	if (!r)
		return;
	for (e = r->head; e; e = next) {
		next = e->next;
		free(e);
	}
	free(r->buckets);
	if (r->proc_fd >= 0)
		close(r->proc_fd);
	free(r);
}
