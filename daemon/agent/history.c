// SPDX-License-Identifier: Apache-2.0
/*
 * history: the windows of the range from the store's index (oldest first), each read, decoded
 * and merged in turn, so at most one window's pprof and the merged profile are in memory.
 */
#include "daemon/agent/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "cgroups/owner.h"
#include "daemon/agent/store.h"
#include "daemon/agent/views.h"
#include "profile/merge.h"
#include "profile/pprof.h"
#include "profile/profile.h"

#define NS_PER_S 1000000000LL

const char *history_service_owner(const char *name, char *buf, size_t size)
{
	struct owner o = { .group = OWNER_SERVICE };

	snprintf(o.name, sizeof(o.name), "%s", name);
	return owner_format(&o, buf, size);
}

bool history_keep_owner(void *ctx, const struct profile *src, const struct prof_sample *s)
{
	(void)src;
	return ctx && s->labels && s->labels->owner && !strcmp(s->labels->owner, ctx);
}

/* One merge in progress. */
struct merge {
	const struct history_opts *o;
	int64_t span_start, span_ns; /* of the windows listed: the merged profile's time */
	struct profile *dst;	     /* created from the first window read */
	uint64_t budget;	     /* profile.pb.gz bytes still allowed */
	bool over_budget;
	struct history_info info;
	int bad_err;		    /* why the first window that was there could not be read */
	char bad_id[STORE_ID_SIZE]; /* and which */
};

static int64_t window_end(const struct store_meta *m)
{
	int64_t len = (int64_t)m->duration_s * NS_PER_S;

	return m->start_ns > INT64_MAX - len ? INT64_MAX : m->start_ns + len;
}

/* Reads and decodes window @m. -ENOENT when it went meanwhile, -E2BIG past the budget. */
static int read_window(struct store *s, const struct store_meta *m, struct merge *g,
		       struct profile **p)
{
	struct pprof_decode_opts po = { .owner_root = g->o->owner_root };
	uint64_t fsize;
	size_t len;
	char *buf;
	int fd, ret;

	ret = store__open_file(s, m->id, STORE_FILE_PPROF, &fd, &fsize);
	if (ret)
		return ret;
	if (fsize > g->budget) {
		close(fd);
		g->over_budget = true;
		return -E2BIG;
	}
	ret = read_fd_bounded(fd, VIEW_PPROF_MAX, &buf, &len);
	close(fd);
	if (ret)
		return ret;
	g->budget -= len < g->budget ? len : g->budget;
	ret = pprof_decode_ext(buf, len, &po, p);
	free(buf);
	return ret;
}

/* The merged profile, with the sample types of @first and the span of the windows. */
static int new_dst(struct merge *g, const struct profile *first)
{
	struct profile_opts po = *profile__opts(first);

	po.owner_root = g->o->owner_root;
	po.time_nanos = g->span_start;
	po.duration_nanos = g->span_ns;
	return profile__new(&po, &g->dst);
}

/* Merges window @m. Returns 0 (also when the window is left out: counted, and the first
 * kept for the log), -E2BIG past the byte budget, -ENOMEM. */
static int add_window(struct store *s, const struct store_meta *m, struct merge *g)
{
	struct profile_merge_opts mo = {
		.filter = g->o->owner ? history_keep_owner : NULL,
		.filter_ctx = (void *)g->o->owner,
	};
	struct profile *p = NULL;
	int ret;

	ret = read_window(s, m, g, &p);
	if (!ret && !g->dst)
		ret = new_dst(g, p);
	if (!ret)
		ret = profile_merge(g->dst, p, &mo);
	profile__free(p);
	if (ret == -ENOMEM || g->over_budget)
		return ret;
	if (ret) {
		/* -ENOENT: removed by retention since it was listed, nothing to tell */
		if (ret != -ENOENT && !g->bad_err) {
			g->bad_err = ret;
			memcpy(g->bad_id, m->id, sizeof(g->bad_id));
		}
		g->info.skipped++;
		return 0;
	}
	if (!g->info.windows++)
		g->info.first_ns = m->start_ns;
	if (window_end(m) > g->info.end_ns)
		g->info.end_ns = window_end(m);
	return 0;
}

/* The time of the merged profile: from the first window's start to the last end. */
static void span(const struct store_meta *w, size_t n, struct merge *g)
{
	int64_t end = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (window_end(&w[i]) > end)
			end = window_end(&w[i]);
	g->span_start = n ? w[0].start_ns : 0;
	g->span_ns = n ? end - w[0].start_ns : 0;
}

static const char *what_of(const struct history_opts *o)
{
	return o->what ? o->what : o->owner ? o->owner : "this server";
}

/* What store__list_continuous() found: 0 when it is something to merge. */
static int check_list(const struct history_opts *o, ssize_t n, size_t total, size_t max, char *err,
		      size_t size)
{
	char a[CLOCK_RFC3339_MAX], b[CLOCK_RFC3339_MAX];

	clock_rfc3339(a, sizeof(a), o->from_ns, 0);
	clock_rfc3339(b, sizeof(b), o->until_ns, 0);
	if (n < 0) {
		snprintf(err, size, "out of memory listing the continuous profile");
		return (int)n;
	}
	if (!total) {
		snprintf(err, size,
			 "no continuous profile of %s between %s and %s: continuous profiling is "
			 "off or has not run then",
			 what_of(o), a, b);
		return -ENOENT;
	}
	if (total > max) {
		snprintf(err, size,
			 "%s to %s holds %zu continuous-profiling windows; at most %zu are merged "
			 "at once: ask a shorter range",
			 a, b, total, max);
		return -EINVAL;
	}
	return 0;
}

/* The merge as it ended (@ret from the last window): 0 when it has samples to show. */
static int check_merged(const struct history_opts *o, const struct merge *g, size_t n, int ret,
			char *err, size_t size)
{
	char a[CLOCK_RFC3339_MAX], b[CLOCK_RFC3339_MAX];

	clock_rfc3339(a, sizeof(a), o->from_ns, 0);
	clock_rfc3339(b, sizeof(b), o->until_ns, 0);
	if (g->bad_err) /* once a merge, not once a window: a day is 1440 of them */
		pr_warn_errno(g->bad_err, "history: %zu continuous windows left out, the first %s",
			      g->info.skipped, g->bad_id);
	if (g->over_budget) {
		unsigned long long cap = o->max_bytes ? o->max_bytes : HISTORY_MAX_BYTES;
		bool mib = cap >= (1u << 20);

		snprintf(err, size,
			 "the continuous profile from %s to %s is more than %llu %s of windows: "
			 "ask a shorter range",
			 a, b, mib ? cap >> 20 : cap, mib ? "MiB" : "bytes");
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, size, "cannot merge the continuous profile: %s", strerror(-ret));
		return ret;
	}
	if (!g->dst) {
		snprintf(err, size,
			 "none of the %zu continuous-profiling windows between %s and %s could be "
			 "read (the agent's log says why)",
			 n, a, b);
		return -EIO;
	}
	if (!profile__nsamples(g->dst)) {
		snprintf(err, size,
			 "%s has no samples in the continuous profile between %s and %s (%zu "
			 "windows): it did not run on this server's CPUs then, or is named "
			 "otherwise here",
			 what_of(o), a, b, g->info.windows);
		return -ENOENT;
	}
	return 0;
}

int history_merge(struct store *s, const struct history_opts *opts, struct profile **out,
		  struct history_info *info, char *err, size_t size)
{
	size_t max = opts && opts->max_windows ? opts->max_windows : HISTORY_MAX_WINDOWS;
	struct merge g = { .o = opts };
	struct store_meta *w;
	size_t total = 0, i;
	ssize_t n;
	int ret;

	if (!s || !opts || !out) {
		snprintf(err, size, "history: bad arguments");
		return -EINVAL;
	}
	g.budget = opts->max_bytes ? opts->max_bytes : HISTORY_MAX_BYTES;
	w = calloc(max, sizeof(*w));
	if (!w) {
		snprintf(err, size, "out of memory listing the continuous profile");
		return -ENOMEM;
	}
	n = store__list_continuous(s, opts->from_ns, opts->until_ns, true, w, max, &total);
	ret = check_list(opts, n, total, max, err, size);
	if (!ret) {
		span(w, (size_t)n, &g);
		for (i = 0; !ret && i < (size_t)n; i++)
			ret = add_window(s, &w[i], &g);
		ret = check_merged(opts, &g, (size_t)n, ret, err, size);
	}
	free(w);
	if (ret) {
		profile__free(g.dst);
		return ret;
	}
	if (info)
		*info = g.info;
	*out = g.dst;
	return 0;
}
