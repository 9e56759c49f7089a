// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/thread_table.h"

#include "bpf/python.h"
#include "daemon/collectors/collector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct thread_table {
	struct thread_entry *e;
	size_t n, cap;
	uint32_t *index; /* open addressing by tid: entry index + 1, 0 empty */
	size_t nindex;
	size_t dropped;
	int sorted;
};

int thread_table__new(struct thread_table **out)
{
	struct thread_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->nindex = 2 * THREAD_TABLE_MAX;
	t->index = calloc(t->nindex, sizeof(*t->index));
	if (!t->index) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void thread_table__free(struct thread_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->e[i].pyframes);
	free(t->e);
	free(t->index);
	free(t);
}

static size_t slot_of(const struct thread_table *t, uint32_t tid)
{
	return (tid * 2654435761u) % t->nindex;
}

/* Sorting moves entries: the index is rebuilt before the next lookup. */
static void reindex(struct thread_table *t)
{
	size_t k, j;

	memset(t->index, 0, t->nindex * sizeof(*t->index));
	for (k = 0; k < t->n; k++) {
		j = slot_of(t, t->e[k].tid);
		while (t->index[j])
			j = (j + 1) % t->nindex;
		t->index[j] = (uint32_t)k + 1;
	}
	t->sorted = 0;
}

static struct thread_entry *lookup(struct thread_table *t, uint32_t tgid, uint32_t tid,
				   const char *comm, int *err)
{
	size_t i, k;
	struct thread_entry *e, *tmp;

	if (t->sorted)
		reindex(t);
	i = slot_of(t, tid);
	for (k = 0; k < t->nindex; k++, i = (i + 1) % t->nindex) {
		if (!t->index[i])
			break;
		e = &t->e[t->index[i] - 1];
		if (e->tid == tid && e->tgid == tgid)
			return e;
	}
	if (t->n >= THREAD_TABLE_MAX || k == t->nindex) {
		t->dropped++;
		*err = -ENOSPC;
		return NULL;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 64;

		tmp = realloc(t->e, ncap * sizeof(*t->e));
		if (!tmp) {
			*err = -ENOMEM;
			return NULL;
		}
		t->e = tmp;
		t->cap = ncap;
	}
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->tgid = tgid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "");
	t->index[i] = (uint32_t)++t->n;
	return e;
}

int thread_table__snapshot(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			   enum thread_state state, const char *reason)
{
	struct thread_entry *e;
	struct thread_wait tmp;
	size_t i;
	int err = 0;

	if ((unsigned)state >= THREAD_STATES)
		return -EINVAL;
	e = lookup(t, tgid, tid, comm, &err);
	if (!e)
		return err;
	if (comm && *comm)
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	e->snapshots++;
	e->state[state]++;
	if (state != THREAD_WAITING)
		return 0;
	if (!reason || !*reason)
		reason = "other";
	for (i = 0; i < e->nwaits; i++)
		if (!strcmp(e->waits[i].reason, reason))
			break;
	if (i == e->nwaits) {
		if (e->nwaits < THREAD_MAX_WAITS)
			e->nwaits++;
		else
			i = e->nwaits - 1; /* the rarest gives way */
		snprintf(e->waits[i].reason, sizeof(e->waits[i].reason), "%s", reason);
		e->waits[i].snapshots = 0;
	}
	e->waits[i].snapshots++;
	/* keep the commonest first */
	while (i > 0 && e->waits[i].snapshots > e->waits[i - 1].snapshots) {
		tmp = e->waits[i - 1];
		e->waits[i - 1] = e->waits[i];
		e->waits[i] = tmp;
		i--;
	}
	return 0;
}

/* Keeps @n Python frames of @src as @e's (none when @n is 0). Returns 0 or -ENOMEM. */
static int keep_pyframes(struct thread_entry *e, const struct sampler_py_frame *src, size_t n)
{
	struct sampler_py_frame *p;

	if (n > PY_MAX_FRAMES)
		n = PY_MAX_FRAMES;
	if (n > e->cap_pyframes) {
		p = realloc(e->pyframes, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		e->pyframes = p;
		e->cap_pyframes = n;
	}
	if (n)
		memcpy(e->pyframes, src, n * sizeof(*src));
	e->npyframes = n;
	return 0;
}

int thread_table__offer(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			const struct thread_stack *st)
{
	struct thread_entry *e;
	int err = 0;

	e = lookup(t, tgid, tid, comm, &err);
	if (!e)
		return err;
	if (!e->comm[0] && comm)
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	if (st->value <= e->best_value)
		return 0;
	err = keep_pyframes(e, st->pyframes, st->pyframes ? st->npyframes : 0);
	if (err)
		return err;
	e->py_flags = e->npyframes ? st->py_flags : 0;
	e->best_value = st->value;
	e->nustack = st->nustack < THREAD_STACK_MAX ? st->nustack : THREAD_STACK_MAX;
	e->nkstack = st->nkstack < THREAD_STACK_MAX ? st->nkstack : THREAD_STACK_MAX;
	if (e->nustack)
		memcpy(e->ustack, st->ustack, e->nustack * sizeof(*st->ustack));
	if (e->nkstack)
		memcpy(e->kstack, st->kstack, e->nkstack * sizeof(*st->kstack));
	e->best_leaf = st->leaf;
	snprintf(e->best_leaf_text, sizeof(e->best_leaf_text), "%s",
		 st->leaf_text ? st->leaf_text : "");
	return 0;
}

int thread_table__offer_stack(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			      int64_t value, const uint64_t *ustack, size_t nustack,
			      const uint64_t *kstack, size_t nkstack, int leaf,
			      const char *leaf_text)
{
	struct thread_stack st = { .value = value,
				   .ustack = ustack,
				   .nustack = nustack,
				   .kstack = kstack,
				   .nkstack = nkstack,
				   .leaf = leaf,
				   .leaf_text = leaf_text };

	return thread_table__offer(t, tgid, tid, comm, &st);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct thread_entry *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const struct thread_entry *thread_table__entries(struct thread_table *t, size_t *n)
{
	if (!t->sorted && t->n) {
		qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
		t->sorted = 1;
	}
	*n = t->n;
	return t->e;
}

size_t thread_table__dropped(const struct thread_table *t)
{
	return t->dropped;
}
