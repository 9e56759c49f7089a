// SPDX-License-Identifier: Apache-2.0
#include "profile/diff.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profile/collapsed.h"
#include "profile/profile.h"

struct prof_diff {
	struct collapsed_fold *base, *next;
	struct prof_diff_row *rows;
	size_t n;
	int64_t base_total, next_total;
};

static bool same_kind(const struct profile *a, const struct profile *b)
{
	const struct profile_opts *x = profile__opts(a), *y = profile__opts(b);
	const char *tx = x->sample_type[0] ? x->sample_type[0] : "samples";
	const char *ty = y->sample_type[0] ? y->sample_type[0] : "samples";
	const char *ux = x->sample_unit[0] ? x->sample_unit[0] : "count";
	const char *uy = y->sample_unit[0] ? y->sample_unit[0] : "count";

	return !strcmp(tx, ty) && !strcmp(ux, uy);
}

static double share(int64_t v, int64_t total)
{
	return total > 0 ? (double)v / (double)total : 0;
}

static int64_t sum(const struct collapsed_fold *f)
{
	size_t i, n = collapsed_fold_count(f);
	int64_t v, t = 0;

	for (i = 0; i < n; i++) {
		collapsed_fold_line(f, i, &v);
		if (__builtin_add_overflow(t, v, &t))
			t = INT64_MAX;
	}
	return t;
}

/* Merges the two sorted folds into rows. */
static int join(struct prof_diff *d)
{
	size_t nb = collapsed_fold_count(d->base), nn = collapsed_fold_count(d->next), i = 0, j = 0;
	const char *sb, *sn;
	int64_t vb, vn;
	int c;

	d->rows = calloc(nb + nn ? nb + nn : 1, sizeof(*d->rows));
	if (!d->rows)
		return -ENOMEM;
	while (i < nb || j < nn) {
		struct prof_diff_row *r = &d->rows[d->n++];

		sb = i < nb ? collapsed_fold_line(d->base, i, &vb) : NULL;
		sn = j < nn ? collapsed_fold_line(d->next, j, &vn) : NULL;
		c = !sb ? 1 : !sn ? -1 : strcmp(sb, sn);
		r->stack = c <= 0 ? sb : sn;
		r->base = c <= 0 ? vb : 0;
		r->next = c >= 0 ? vn : 0;
		i += c <= 0;
		j += c >= 0;
		r->base_share = share(r->base, d->base_total);
		r->next_share = share(r->next, d->next_total);
	}
	return 0;
}

int prof_diff__new(const struct profile *base, const struct profile *next, struct prof_diff **out)
{
	struct prof_diff *d;
	int err;

	if (!base || !next || !out)
		return -EINVAL;
	if (!same_kind(base, next))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = collapsed_fold(base, &d->base);
	if (!err)
		err = collapsed_fold(next, &d->next);
	if (!err) {
		d->base_total = sum(d->base);
		d->next_total = sum(d->next);
		err = join(d);
	}
	if (err) {
		prof_diff__free(d);
		return err;
	}
	*out = d;
	return 0;
}

void prof_diff__free(struct prof_diff *d)
{
	if (!d)
		return;
	collapsed_fold_free(d->base);
	collapsed_fold_free(d->next);
	free(d->rows);
	free(d);
}

size_t prof_diff__rows(const struct prof_diff *d, const struct prof_diff_row **rows)
{
	*rows = d ? d->rows : NULL;
	return d ? d->n : 0;
}

void prof_diff__totals(const struct prof_diff *d, int64_t *base, int64_t *next)
{
	if (base)
		*base = d ? d->base_total : 0;
	if (next)
		*next = d ? d->next_total : 0;
}

int prof_diff_write(const struct prof_diff *d, FILE *f, int normalize)
{
	size_t i;

	if (!d || !f)
		return -EINVAL;
	for (i = 0; i < d->n; i++) {
		const struct prof_diff_row *r = &d->rows[i];
		long long next = r->next;

		/* an empty base has nothing to scale to: both columns stay as they are */
		if (normalize && d->next_total > 0 && d->base_total > 0)
			next = (long long)(r->next_share * (double)d->base_total + 0.5);
		if (fprintf(f, "%s %lld %lld\n", r->stack, (long long)r->base, next) < 0)
			return errno ? -errno : -EIO;
	}
	return ferror(f) ? -EIO : (int)d->n;
}
