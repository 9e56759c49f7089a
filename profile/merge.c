// SPDX-License-Identifier: Apache-2.0
#include "profile/merge.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/profile.h"

/* Longest name a profile_merge_opts.name callback may write. */
#define NAME_MAX_BYTES 1024

/* Interns frame @id of @src in @dst, named by @o->name when it has no name. */
static int copy_frame(struct profile *dst, const struct profile *src, uint32_t id,
		      const struct profile_merge_opts *o, size_t *named)
{
	const struct prof_frame_info *fi = profile__frame_info(src, id);
	struct prof_frame_info copy;
	char name[NAME_MAX_BYTES];

	if (!o->name || !fi || fi->function || !o->name(o->name_ctx, fi, name, sizeof(name)))
		return profile__frame(dst, fi);
	copy = *fi;
	name[sizeof(name) - 1] = '\0';
	copy.function = name;
	copy.unnamed_stripped = false;
	(*named)++;
	return profile__frame(dst, &copy);
}

static int merge(struct profile *dst, const struct profile *src,
		 const struct profile_merge_opts *opts, size_t *named)
{
	const struct profile_merge_opts none = {};
	size_t nv = profile__opts(dst)->nvalues, nf = profile__nframes(src), i, j;
	uint32_t frames[PROF_MAX_FRAMES];
	int64_t values[PROF_MAX_VALUES];
	int32_t *map;
	int sign, leaf = -1, ret = 0;

	if (!opts)
		opts = &none;
	if (profile__opts(src)->nvalues != nv)
		return -EINVAL;
	sign = opts->sign ? opts->sign : 1;
	if (opts->leaf) {
		leaf = profile__frame(dst, opts->leaf);
		if (leaf < 0)
			return leaf;
	}
	/* Frame ids of @src in @dst, interned on first use. */
	map = malloc((nf ? nf : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (i = 0; i < nf; i++)
		map[i] = -1;
	for (i = 0; i < profile__nsamples(src) && !ret; i++) {
		struct prof_sample s;
		size_t n = 0;

		if (profile__sample(src, i, &s))
			break;
		for (j = 0; j < nv; j++)
			values[j] = s.values[j] * sign;
		if (opts->positive_only && values[0] <= 0)
			continue;
		if (opts->keep && !opts->keep(src, &s))
			continue;
		if (opts->filter && !opts->filter(opts->filter_ctx, src, &s))
			continue;
		if (leaf >= 0)
			frames[n++] = (uint32_t)leaf;
		for (j = 0; j < s.nframes && n < PROF_MAX_FRAMES; j++) {
			uint32_t id = s.frames[j];

			if (id >= nf) {
				ret = -EINVAL;
				break;
			}
			if (map[id] < 0) {
				int d = copy_frame(dst, src, id, opts, named);

				if (d < 0) {
					ret = d;
					break;
				}
				map[id] = d;
			}
			frames[n++] = (uint32_t)map[id];
		}
		if (!ret)
			ret = profile__add(dst, frames, n, opts->labels ? opts->labels : s.labels,
					   values);
	}
	free(map);
	return ret;
}

int profile_merge(struct profile *dst, const struct profile *src,
		  const struct profile_merge_opts *opts)
{
	size_t named = 0;

	return merge(dst, src, opts, &named);
}

int profile_rename(const struct profile *p,
		   bool (*name)(void *ctx, const struct prof_frame_info *f, char *buf, size_t size),
		   void *ctx, struct profile **out)
{
	const struct profile_merge_opts o = { .name = name, .name_ctx = ctx };
	struct profile *res = NULL;
	size_t named = 0;
	int ret;

	ret = profile__new(profile__opts(p), &res);
	if (!ret)
		ret = merge(res, p, &o, &named);
	if (ret || !named) {
		profile__free(res);
		return ret;
	}
	*out = res;
	return (int)(named > INT32_MAX ? INT32_MAX : named);
}

int profile_delta(const struct profile *end, const struct profile *start, struct profile **out)
{
	const struct profile_merge_opts sub = { .sign = -1 }, pos = { .positive_only = true };
	struct profile *sum = NULL, *res = NULL;
	int ret;

	ret = profile__new(profile__opts(end), &sum);
	if (!ret)
		ret = profile_merge(sum, end, NULL);
	if (!ret && start)
		ret = profile_merge(sum, start, &sub);
	if (!ret)
		ret = profile__new(profile__opts(end), &res);
	if (!ret)
		ret = profile_merge(res, sum, &pos);
	profile__free(sum);
	if (ret) {
		profile__free(res);
		return ret;
	}
	*out = res;
	return 0;
}
