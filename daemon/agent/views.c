// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "daemon/agent/history.h"
#include "daemon/agent/store.h"
#include "daemon/capture/compare.h"
#include "daemon/capture/question.h"
#include "daemon/capture/source.h"
#include "daemon/capture/symnames.h"
#include "profile/collapsed.h"
#include "profile/diff.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "symbols/symstore.h"

#define ASSETS "/ui"

/* Decodes the stored pprof of @id (with its meta in @m), named with the uploaded symbols;
 * the names they gave go to @map when it is not NULL, and their count to *@named. */
static int load_named(struct store *s, const char *id, struct store_meta *m, struct profile **p,
		      struct symnames_map *map, int *named, char *err, size_t size)
{
	struct pprof_decode_opts po = { 0 };
	uint64_t fsize;
	size_t len;
	char *buf;
	int fd, ret;

	if (store__get(s, id, m)) {
		snprintf(err, size, "no profile %s", id);
		return -ENOENT;
	}
	ret = store__open_file(s, id, STORE_FILE_PPROF, &fd, &fsize);
	if (ret) {
		snprintf(err, size, "cannot read profile %s: %s", id, strerror(-ret));
		return ret;
	}
	ret = read_fd_bounded(fd, VIEW_PPROF_MAX, &buf, &len);
	close(fd);
	if (ret) {
		snprintf(err, size, "cannot read profile %s: %s", id, strerror(-ret));
		return ret == -EFBIG ? -EINVAL : ret;
	}
	po.owner_root = !strcmp(m->target_kind, "server");
	ret = pprof_decode_ext(buf, len, &po, p);
	free(buf);
	if (ret) {
		snprintf(err, size, "profile %s cannot be read back: %s", id, strerror(-ret));
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	ret = symnames_profile(store__symbols(s), p, map);
	*named = ret > 0 ? ret : 0; /* out of memory: unnamed */
	return 0;
}

static int load(struct store *s, const char *id, struct store_meta *m, struct profile **p,
		char *err, size_t size)
{
	int named;

	return load_named(s, id, m, p, NULL, &named, err, size);
}

/* What a view writes: the page or the lines, into @f; 0 (or a count) or -errno. */
struct view_out {
	const struct profile *p; /* a flame graph, or its folded stacks without @fo */
	const struct flamegraph_opts *fo;
	const struct prof_diff *d; /* a comparison: its page, or its lines without @a */
	const struct compare_side *a, *b;
};

static int view_write(const struct view_out *v, FILE *f)
{
	if (v->p && !v->fo)
		return collapsed_write(v->p, f);
	if (v->p)
		return flamegraph_write(v->p, v->fo, f);
	if (v->a)
		return compare_write_page(v->d, v->a, v->b, ASSETS, f);
	return prof_diff_write(v->d, f, 1);
}

/* view_write() into memory: its text in *@out (malloc'd), *@len. */
static int to_text(const struct view_out *v, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = view_write(v, f);
	if (fclose(f) && ret >= 0)
		ret = -ENOMEM;
	if (ret < 0) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return 0;
}

int view_flamegraph(struct store *s, const char *id, char **html, size_t *len, char *err,
		    size_t size)
{
	struct flamegraph_opts fo = { .assets = ASSETS };
	struct profile_opts po = { 0 };
	struct profile *p = NULL;
	struct store_meta m;
	char title[STORE_NAME_MAX + 128];
	int q, ret;

	ret = load(s, id, &m, &p, err, size);
	if (ret)
		return ret;
	q = question_parse(m.question);
	snprintf(title, sizeof(title), "%s: %s, %u s",
		 q >= 0 ? question_info((enum question)q)->text : m.question, m.target,
		 m.duration_s);
	fo.title = title;
	fo.unit = q >= 0 ? source_profile_types((enum question)q, 1, &po) : NULL;
	ret = to_text(&(struct view_out){ .p = p, .fo = &fo }, html, len);
	if (ret)
		snprintf(err, size, "cannot draw profile %s: %s", id, strerror(-ret));
	profile__free(p);
	return ret;
}

static void side_from(struct compare_side *cs, struct profile *p, const struct store_meta *m)
{
	char when[40];

	cs->p = p;
	snprintf(cs->question, sizeof(cs->question), "%s", m->question);
	clock_rfc3339(when, sizeof(when), m->start_ns, 0);
	snprintf(cs->label, sizeof(cs->label), "%s (%s)", m->id, when);
}

/* Compares side @b with side @a: the page, or with @collapsed the difffolded lines. */
static int compare_sides(const struct compare_side *a, const struct compare_side *b, bool collapsed,
			 char **out, size_t *len, char *err, size_t size)
{
	struct prof_diff *d = NULL;
	int ret;

	ret = compare_profiles(a, b, &d, err, size);
	if (!ret) {
		struct view_out v = { .d = d, .a = collapsed ? NULL : a, .b = b };

		ret = to_text(&v, out, len);
		if (ret)
			snprintf(err, size, "cannot compare: %s", strerror(-ret));
	}
	prof_diff__free(d);
	return ret;
}

int view_compare(struct store *s, const char *base, const char *next, bool collapsed, char **out,
		 size_t *len, char *err, size_t size)
{
	struct compare_side a = { 0 }, b = { 0 };
	struct profile *pa = NULL, *pb = NULL;
	struct store_meta ma, mb;
	int ret;

	ret = load(s, base, &ma, &pa, err, size);
	if (!ret)
		ret = load(s, next, &mb, &pb, err, size);
	if (!ret) {
		side_from(&a, pa, &ma);
		side_from(&b, pb, &mb);
		ret = compare_sides(&a, &b, collapsed, out, len, err, size);
	}
	profile__free(pa);
	profile__free(pb);
	return ret;
}

/* --- the continuous profile ---------------------------------------------------------------- */

/* The flame graph page of a continuous profile: its range in the title, its windows above. */
static int continuous_page(const struct profile *p, const struct history_opts *ho,
			   const struct history_info *hi, char **out, size_t *len)
{
	char title[STORE_NAME_MAX + 160], answer[256], note[128], a[CLOCK_RFC3339_MAX],
		b[CLOCK_RFC3339_MAX];
	const char *notes[] = { hi->skipped ? note : NULL, NULL };
	struct flamegraph_opts fo = { .assets = ASSETS, .title = title, .answer = answer };
	struct profile_opts po = { 0 };

	clock_rfc3339(a, sizeof(a), ho->from_ns, 0);
	clock_rfc3339(b, sizeof(b), ho->until_ns, 0);
	snprintf(title, sizeof(title), "%s: %s, continuous, %s to %s", question_info(Q_CPU)->text,
		 ho->what ? ho->what : "this server", a, b);
	clock_rfc3339(a, sizeof(a), hi->first_ns, 0);
	clock_rfc3339(b, sizeof(b), hi->end_ns, 0);
	snprintf(answer, sizeof(answer), "Merged from %zu continuous-profiling windows, %s to %s.",
		 hi->windows, a, b);
	snprintf(note, sizeof(note), "%zu windows could not be read and are left out.",
		 hi->skipped);
	fo.notes = notes;
	fo.unit = source_profile_types(Q_CPU, 1, &po);
	return to_text(&(struct view_out){ .p = p, .fo = &fo }, out, len);
}

static int continuous_out(const struct profile *p, const struct history_opts *ho,
			  const struct history_info *hi, enum view_format fmt, char **out,
			  size_t *len)
{
	uint8_t *buf = NULL;
	int ret;

	if (fmt == VIEW_COLLAPSED)
		return to_text(&(struct view_out){ .p = p }, out, len);
	if (fmt != VIEW_PPROF)
		return continuous_page(p, ho, hi, out, len);
	ret = pprof_encode(p, &buf, len);
	if (!ret)
		*out = (char *)buf;
	return ret;
}

int view_continuous(struct store *s, const struct view_range *r, enum view_format fmt, char **out,
		    size_t *len, char *err, size_t size)
{
	char owner[STORE_NAME_MAX + 16];
	bool svc = r->service && r->service[0];
	struct history_opts ho = {
		.from_ns = r->from_ns,
		.until_ns = r->until_ns,
		.owner = svc ? history_service_owner(r->service, owner, sizeof(owner)) : NULL,
		.owner_root = !svc,
	};
	struct history_info hi;
	struct profile *p = NULL;
	int ret;

	ho.what = ho.owner;
	ret = history_merge(s, &ho, &p, &hi, err, size);
	if (ret)
		return ret;
	symnames_profile(store__symbols(s), &p, NULL);
	ret = continuous_out(p, &ho, &hi, fmt, out, len);
	if (ret)
		snprintf(err, size, "cannot write the continuous profile: %s", strerror(-ret));
	profile__free(p);
	return ret;
}

/* The owner label whose samples stand for the target of @m in the continuous profile; "" for a
 * server profile (every sample). -EINVAL for a target the samples do not name. */
static int owner_of(const struct store_meta *m, char *buf, size_t bsize, char *err, size_t size)
{
	buf[0] = '\0';
	if (!strcmp(m->target_kind, "server"))
		return 0;
	if (!strcmp(m->target_kind, "service")) {
		history_service_owner(m->service, buf, bsize);
		return 0;
	}
	if (!strcmp(m->target_kind, "unit")) { /* "Unit nginx.service": target_describe() */
		snprintf(buf, bsize, "%s", m->target);
		return 0;
	}
	snprintf(err, size,
		 "profile %s is of %s: the continuous profile stands in for a Service, a unit or "
		 "the whole server, not for processes or a container; compare it with another "
		 "profile",
		 m->id, m->target);
	return -EINVAL;
}

/* Whether @m can be compared with the continuous profile, and the owner to keep (@buf). */
static int continuous_base_of(const struct store_meta *m, char *buf, size_t bsize, char *err,
			      size_t size)
{
	if (strcmp(m->question, "cpu")) {
		snprintf(err, size,
			 "these profiles answer different questions (cpu and %s): compare two "
			 "profiles of the same question",
			 m->question);
		return -EINVAL;
	}
	return owner_of(m, buf, bsize, err, size);
}

/* The base side: the continuous profile of the hour before @m, of @owner ("" all). */
static int continuous_side(struct store *s, const struct store_meta *m, const char *owner,
			   struct compare_side *cs, char *err, size_t size)
{
	const int64_t before = (int64_t)VIEW_CONTINUOUS_BEFORE_S * 1000000000LL;
	struct history_opts ho = {
		.from_ns = m->start_ns > before ? m->start_ns - before : 0,
		.until_ns = m->start_ns,
		.owner = owner[0] ? owner : NULL,
		.what = owner[0] ? owner : NULL,
		.owner_root = !owner[0],
	};
	char a[CLOCK_RFC3339_MAX], b[CLOCK_RFC3339_MAX];
	int ret;

	ret = history_merge(s, &ho, &cs->p, NULL, err, size);
	if (ret)
		return ret;
	symnames_profile(store__symbols(s), &cs->p, NULL);
	snprintf(cs->question, sizeof(cs->question), "cpu");
	clock_rfc3339(a, sizeof(a), ho.from_ns, 0);
	clock_rfc3339(b, sizeof(b), ho.until_ns, 0);
	snprintf(cs->label, sizeof(cs->label), "the continuous profile from %s to %s%s%s%s", a, b,
		 m->ns[0] ? " (" : "", m->ns[0] ? owner : "",
		 m->ns[0] ? " of every namespace)" : "");
	return 0;
}

int view_compare_continuous(struct store *s, const char *next, bool collapsed, char **out,
			    size_t *len, char *err, size_t size)
{
	struct compare_side a = { 0 }, b = { 0 };
	char owner[STORE_NAME_MAX + 16];
	struct store_meta mb;
	int ret;

	if (store__get(s, next, &mb)) {
		snprintf(err, size, "no profile %s", next);
		return -ENOENT;
	}
	ret = continuous_base_of(&mb, owner, sizeof(owner), err, size);
	if (!ret)
		ret = continuous_side(s, &mb, owner, &a, err, size);
	if (!ret)
		ret = load(s, next, &mb, &b.p, err, size);
	if (!ret) {
		side_from(&b, b.p, &mb);
		ret = compare_sides(&a, &b, collapsed, out, len, err, size);
	}
	profile__free(a.p);
	profile__free(b.p);
	return ret;
}

int view_named_download(struct store *s, const char *id, enum view_format fmt, char **out,
			size_t *len, char *err, size_t size)
{
	struct profile *p = NULL;
	struct store_meta m;
	int named = 0, ret;

	if (!symstore__count(store__symbols(s)))
		return 0;
	ret = load_named(s, id, &m, &p, NULL, &named, err, size);
	if (!ret && named)
		ret = continuous_out(p, NULL, NULL, fmt, out, len);
	if (ret && named)
		snprintf(err, size, "cannot write profile %s: %s", id, strerror(-ret));
	profile__free(p);
	return ret ? ret : named > 0;
}

/*
 * Whether an upload may name something the summary shows: a binary of its card has one. The
 * functions a summary names hold 1% or more of the profile, and so do the card's binaries,
 * so a profile whose card has no build with an upload is not decoded for its summary.
 */
static bool summary_may_name(struct symstore *ss, const char *text)
{
	const char *p = text;
	char bid[SYMINDEX_BUILD_ID_MAX + 1];
	size_t n;

	while (p && (p = strstr(p, "\"build_id\"")) != NULL) {
		p = strchr(p + 10, '"');
		if (!p)
			break;
		n = strspn(++p, "0123456789abcdef");
		if (n && n < sizeof(bid) && p[n] == '"') {
			memcpy(bid, p, n);
			bid[n] = '\0';
			if (symstore__has(ss, bid))
				return true;
		}
	}
	return false;
}

int view_named_summary(struct store *s, const char *id, char **text, size_t *len, char *answer,
		       size_t answer_size)
{
	struct symnames_map map = { 0 };
	struct profile *p = NULL;
	struct store_meta m;
	int named = 0, ret;
	char err[256], *t = NULL;
	size_t tlen = 0;

	if (!symstore__count(store__symbols(s)) || !summary_may_name(store__symbols(s), *text))
		return 0;
	ret = load_named(s, id, &m, &p, &map, &named, err, sizeof(err));
	profile__free(p);
	if (ret)
		return ret;
	ret = *text ? symnames_summary(store__symbols(s), *text, *len, &map, &t, &tlen) : 0;
	if (ret > 0) {
		free(*text);
		*text = t;
		*len = tlen;
	}
	if (answer && symnames_text(&map, answer, answer_size) && ret >= 0)
		ret = 1;
	symnames_map_free(&map);
	return ret;
}
