// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/py_pending.h"

#include <errno.h>
#include <stdlib.h>

#include "base/array.h"

struct py_pending_entry {
	uint32_t tgid;
	unsigned int tries; /* times @fn was asked */
};

struct py_pending {
	struct py_pending_entry *e;
	size_t n, cap, max;
	unsigned int tries;
	size_t missed;
};

int py_pending__new(size_t max, unsigned int tries, struct py_pending **out)
{
	struct py_pending *q;

	if (!max || !tries)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->max = max;
	q->tries = tries;
	*out = q;
	return 0;
}

void py_pending__free(struct py_pending *q)
{
	if (!q)
		return;
	free(q->e);
	free(q);
}

int py_pending__push(struct py_pending *q, uint32_t tgid)
{
	void *data = q->e;
	int err;

	if (q->n >= q->max) {
		q->missed++;
		return -ENOSPC;
	}
	/* grown on demand: a poll usually announces a few processes, a capture's first many */
	err = array_ensure(&data, &q->cap, sizeof(*q->e), q->n + 1);
	if (err) {
		q->missed++;
		return err;
	}
	q->e = data;
	q->e[q->n].tgid = tgid;
	q->e[q->n].tries = 0;
	q->n++;
	return 0;
}

int py_pending__run(struct py_pending *q, py_pending_fn_t fn, void *ctx)
{
	size_t i, kept = 0;
	int ret, registered = 0;

	for (i = 0; i < q->n; i++) {
		ret = fn(ctx, q->e[i].tgid);
		q->e[i].tries++;
		if (ret > 0)
			registered++;
		else if (ret == -EAGAIN && q->e[i].tries < q->tries)
			q->e[kept++] = q->e[i];
		else if (ret < 0)
			q->missed++;
	}
	q->n = kept;
	return registered;
}

size_t py_pending__count(const struct py_pending *q)
{
	return q->n;
}

size_t py_pending__missed(const struct py_pending *q)
{
	return q->missed;
}
