// SPDX-License-Identifier: Apache-2.0
/*
 * Comparing two stored profiles: loading each side (a profile directory or a pprof file, with
 * bounded reads), refusing two different questions, the frames that changed most, the answer
 * and the files of a comparison (diff.html, diff.collapsed).
 */
#include "daemon/capture/compare.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/text.h"
#include "daemon/capture/question.h"
#include "profile/diff.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"

/* A profile directory's pprof file. */
#define STORED "profile.pb.gz"

/* The message into @err (may be NULL), and @ret. */
#define fail(err, size, ret, ...) (text_setf((err), (size), __VA_ARGS__), (ret))

/* ---- loading ---- */

/* Decodes the pprof file @path (gzipped or not) into @out. */
static int decode(const char *path, bool owner_root, struct profile **out, char *err, size_t size)
{
	struct pprof_decode_opts o = { .owner_root = owner_root };
	char *buf = NULL;
	size_t len = 0;
	int ret;

	ret = read_file_bounded(AT_FDCWD, path, COMPARE_MAX_PPROF_BYTES, &buf, &len);
	if (ret == -EFBIG)
		return fail(err, size, ret, "%s is larger than %u MiB: not a profile to compare",
			    path, COMPARE_MAX_PPROF_BYTES >> 20);
	if (ret)
		return fail(err, size, ret, "cannot read %s: %s", path, strerror(-ret));
	ret = len ? pprof_decode_ext(buf, len, &o, out) : -EINVAL;
	free(buf);
	if (ret == -EINVAL || ret == -ENOENT)
		return fail(err, size, -EINVAL, "%s is not a pprof profile", path);
	if (ret == -EFBIG)
		return fail(err, size, ret, "%s holds a profile too large to compare", path);
	if (ret)
		return fail(err, size, ret, "cannot decode %s: %s", path, strerror(-ret));
	return 0;
}

/* The question of DIR/summary.json, and whether it profiled the whole server; none without
 * the file. */
static int read_summary(const char *dir, struct compare_side *s, bool *server, char *err,
			size_t size)
{
	char path[PATH_MAX], *text = NULL;
	json_t *j, *q, *kind;
	json_error_t jerr;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	ret = read_file_bounded(AT_FDCWD, path, COMPARE_MAX_SUMMARY_BYTES, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return fail(err, size, ret, "cannot read %s: %s", path, strerror(-ret));
	j = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!json_is_object(j)) {
		json_decref(j);
		return fail(err, size, -EINVAL, "%s is not a profile's summary.json", path);
	}
	q = json_object_get(j, "question");
	if (json_is_string(q))
		text_utf8_sanitize_copy(s->question, sizeof(s->question), json_string_value(q),
					json_string_length(q));
	kind = json_object_get(json_object_get(j, "target"), "kind");
	*server = json_is_string(kind) && !strcmp(json_string_value(kind), "server");
	json_decref(j);
	return 0;
}

/* Where the last part of @base (@len bytes) starts; a stored profile's "profile.pb.gz" keeps
 * its directory: "ID/profile.pb.gz". */
static const char *last_part(const char *base, size_t len)
{
	const char *p = base + len;

	while (p > base && p[-1] != '/')
		p--;
	if (base + len - p == sizeof(STORED) - 1 && !memcmp(p, STORED, sizeof(STORED) - 1) &&
	    p - base > 1)
		for (p--; p > base && p[-1] != '/'; p--)
			;
	return p;
}

/* "NAME (2026-11-29 17:45:01 UTC)": the last part of @path and the profile's start. */
static void set_label(struct compare_side *s, const char *path)
{
	int64_t t = profile__opts(s->p)->time_nanos;
	char *real = realpath(path, NULL), name[200], when[40] = "";
	const char *base = real ? real : path, *part;
	time_t sec = (time_t)(t / 1000000000);
	size_t len = strlen(base);
	struct tm tm;

	while (len > 1 && base[len - 1] == '/')
		len--;
	part = last_part(base, len);
	text_utf8_sanitize_copy(name, sizeof(name), part, (size_t)(base + len - part));
	if (t > 0 && gmtime_r(&sec, &tm))
		strftime(when, sizeof(when), " (%Y-%m-%d %H:%M:%S UTC)", &tm);
	snprintf(s->label, sizeof(s->label), "%s%s", name, when);
	free(real);
}

static int load_dir(const char *dir, struct compare_side *s, char *err, size_t size)
{
	char path[PATH_MAX];
	bool server = false;
	int ret;

	/* summary.json is no longer than profile.pb.gz: this path is the longest */
	if (snprintf(path, sizeof(path), "%s/" STORED, dir) >= (int)sizeof(path))
		return fail(err, size, -ENAMETOOLONG, "%s: the path is too long", dir);
	ret = read_summary(dir, s, &server, err, size);
	if (!ret)
		ret = decode(path, server, &s->p, err, size);
	if (ret == -ENOENT)
		return fail(err, size, -EINVAL,
			    "%s is not a profile directory: it has no profile.pb.gz", dir);
	return ret;
}

int compare_load(const char *path, struct compare_side *out, char *err, size_t size)
{
	struct compare_side s = { 0 };
	struct stat st;
	int ret;

	if (!path || !out)
		return fail(err, size, -EINVAL, "no profile to load");
	if (stat(path, &st) < 0) {
		ret = -errno;
		return fail(err, size, ret, "%s: %s", path,
			    ret == -ENOENT ? "no such file or directory" : strerror(-ret));
	}
	if (S_ISDIR(st.st_mode))
		ret = load_dir(path, &s, err, size);
	else if (S_ISREG(st.st_mode))
		ret = decode(path, false, &s.p, err, size);
	else
		ret = fail(err, size, -EINVAL, "%s is neither a profile directory nor a pprof file",
			   path);
	if (ret) {
		compare_side_free(&s);
		return ret;
	}
	set_label(&s, path);
	*out = s;
	return 0;
}

void compare_side_free(struct compare_side *s)
{
	if (!s)
		return;
	profile__free(s->p);
	memset(s, 0, sizeof(*s));
}

/* ---- comparing ---- */

/* What @s answers, for the refusal: its question, or (@by_type) its first sample type. */
static void kind_name(const struct compare_side *s, bool by_type, char *buf, size_t size)
{
	const char *t = by_type ? profile__opts(s->p)->sample_type[0] : s->question;

	text_utf8_sanitize_copy(buf, size, t, strlen(t));
}

/* The questions name the two kinds when both are known and differ, else the sample types. */
static int refuse(const struct compare_side *base, const struct compare_side *next, char *err,
		  size_t size)
{
	bool by_type = !base->question[0] || !next->question[0] ||
		       !strcmp(base->question, next->question);
	char a[64], b[64];

	kind_name(base, by_type, a, sizeof(a));
	kind_name(next, by_type, b, sizeof(b));
	return fail(err, size, -EINVAL,
		    "these profiles answer different questions (%s and %s): compare two profiles "
		    "of the same question",
		    a, b);
}

int compare_profiles(const struct compare_side *base, const struct compare_side *next,
		     struct prof_diff **out, char *err, size_t size)
{
	struct prof_diff *d;
	int ret;

	if (!base || !next || !base->p || !next->p || !out)
		return fail(err, size, -EINVAL, "two profiles are needed to compare");
	if (base->question[0] && next->question[0] && strcmp(base->question, next->question))
		return refuse(base, next, err, size);
	ret = prof_diff__new(base->p, next->p, &d);
	if (ret == -EINVAL)
		return refuse(base, next, err, size);
	if (ret)
		return fail(err, size, ret, "cannot compare the profiles: %s", strerror(-ret));
	*out = d;
	return 0;
}

/* ---- the frames that changed ---- */

/* Self values and shares of each leaf frame, indexed as the name set. */
struct leaves {
	struct prof_strset *names;
	struct leaf {
		int64_t base, next;
		double base_share, next_share;
	} * sum;
	size_t cap;
};

static int leaves_add(struct leaves *l, const struct prof_diff_row *r)
{
	const char *leaf = strrchr(r->stack, ';');
	struct leaf *grown, *x;
	size_t ncap;
	int i;

	leaf = leaf ? leaf + 1 : r->stack;
	i = prof_strset__add(l->names, leaf, strlen(leaf));
	if (i < 0)
		return i;
	if ((size_t)i >= l->cap) {
		ncap = l->cap ? l->cap * 2 : 256;
		grown = realloc(l->sum, ncap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + l->cap, 0, (ncap - l->cap) * sizeof(*grown));
		l->sum = grown;
		l->cap = ncap;
	}
	x = &l->sum[i];
	x->base += r->base;
	x->next += r->next;
	x->base_share += r->base_share;
	x->next_share += r->next_share;
	return 0;
}

/* How much a share grew (@grew) or shrank, in shares. */
static double change(double base, double next, bool grew)
{
	return grew ? next - base : base - next;
}

/* Inserts leaf @i into @list (@n kept, the largest change first, ties by name). */
static void top_insert(const struct leaves *l, uint32_t i, bool grew, struct compare_change *list,
		       size_t *n)
{
	const char *name = prof_strset__str(l->names, i);
	const struct leaf *x = &l->sum[i];
	double m = change(x->base_share, x->next_share, grew), k;
	size_t pos;

	for (pos = 0; pos < *n; pos++) {
		k = change(list[pos].base_share, list[pos].next_share, grew);
		if (m > k || (m == k && strcmp(name, list[pos].name) < 0))
			break;
	}
	if (pos >= COMPARE_TOP)
		return;
	memmove(&list[pos + 1], &list[pos], (COMPARE_TOP - 1 - pos) * sizeof(*list));
	text_utf8_valid_copy(list[pos].name, sizeof(list[pos].name), name,
			     prof_strset__len(l->names, i));
	list[pos].base = x->base;
	list[pos].next = x->next;
	list[pos].base_share = x->base_share;
	list[pos].next_share = x->next_share;
	if (*n < COMPARE_TOP)
		(*n)++;
}

int compare_top_changes(const struct prof_diff *d, struct compare_top *out)
{
	const struct prof_diff_row *rows;
	struct compare_top top = { 0 };
	struct leaves l = { 0 };
	size_t i, n;
	double delta;
	int ret;

	if (!d || !out)
		return -EINVAL;
	n = prof_diff__rows(d, &rows);
	ret = prof_strset__new(&l.names);
	for (i = 0; i < n && !ret; i++)
		ret = leaves_add(&l, &rows[i]);
	for (i = 0; !ret && i < prof_strset__count(l.names); i++) {
		delta = l.sum[i].next_share - l.sum[i].base_share;
		if (delta >= COMPARE_NO_CHANGE)
			top_insert(&l, (uint32_t)i, true, top.grew, &top.ngrew);
		else if (delta <= -COMPARE_NO_CHANGE)
			top_insert(&l, (uint32_t)i, false, top.shrank, &top.nshrank);
	}
	prof_strset__free(l.names);
	free(l.sum);
	if (!ret)
		*out = top;
	return ret;
}

/* ---- the answer and the files ---- */

#define MINUS "\xe2\x88\x92" /* U+2212 */

/* How the answer says "more in" for each question. */
static const struct verb {
	const char *question, *verb, *object, *same;
} verbs[] = {
	{ "memory-held", "holds", " memory", "holds its memory in the same places" },
	{ "memory-alloc", "allocates", "", "allocates in the same places" },
	{ "memory-growth", "touches", " new memory", "touches new memory in the same places" },
	{ NULL, "spends", "", "spends its time in the same places" },
};

static const struct verb *verb_of(const struct compare_side *base, const struct compare_side *next)
{
	const char *q = base->question[0] ? base->question : next->question;
	const struct verb *v;

	for (v = verbs; v->question && strcmp(v->question, q); v++)
		;
	return v;
}

static double points(const struct compare_change *c)
{
	return 100 * (c->next_share - c->base_share);
}

/* A bounded text being written: what does not fit is cut (at a character boundary). */
struct text {
	char *buf;
	size_t size, len;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->len + (size_t)n < t->size) {
		t->len += (size_t)n;
		return;
	}
	/* cut: nothing more is added after it */
	t->len = text_utf8_trim_partial(t->buf);
	t->size = t->len + 1;
}

size_t compare_answer(const struct compare_top *top, const struct compare_side *base,
		      const struct compare_side *next, char *buf, size_t size)
{
	const struct verb *v = verb_of(base, next);
	struct text t = { buf, size, 0 };
	const struct compare_change *g = &top->grew[0], *s = &top->shrank[0];

	if (!buf || !size)
		return 0;
	buf[0] = '\0';
	add(&t, "Compared with %s, %s ", base->label, next->label);
	if (top->ngrew)
		add(&t, "%s more%s in %s (+%.1f points)", v->verb, v->object, g->name, points(g));
	if (top->ngrew && top->nshrank)
		add(&t, " and less in %s (" MINUS "%.1f points)", s->name, -points(s));
	else if (top->nshrank)
		add(&t, "%s less%s in %s (" MINUS "%.1f points)", v->verb, v->object, s->name,
		    -points(s));
	else if (!top->ngrew)
		add(&t, "%s: no function's share changed by 0.1 point or more", v->same);
	add(&t, ". Shares are of each profile's own total, so profiles of different lengths "
		"compare.");
	return t.len;
}

/* The flame graph's unit for a profile's first sample type. */
static const char *unit_of(const struct profile *p)
{
	const struct profile_opts *o = profile__opts(p);

	if (!strcmp(o->sample_unit[0], "nanoseconds"))
		return "ns";
	if (!strcmp(o->sample_unit[0], "bytes"))
		return "bytes";
	return !strcmp(o->sample_type[0], "goroutines") ? "goroutines" : "samples";
}

static void format_total(const char *unit, int64_t v, char *buf, size_t size)
{
	if (!strcmp(unit, "ns"))
		snprintf(buf, size, "%.2f s", (double)v / 1e9);
	else if (!strcmp(unit, "bytes"))
		snprintf(buf, size, "%.1f MiB", (double)v / (1 << 20));
	else
		snprintf(buf, size, "%lld %s", (long long)v, unit);
}

/* The texts of a comparison's page. */
struct page {
	struct flamegraph_opts o;
	char title[160], answer[1600], totals[2][48];
	const char *cells[6];
};

static int page_init(struct page *pg, const struct prof_diff *d, const struct compare_side *base,
		     const struct compare_side *next)
{
	static const char *const cols[] = { "", "profile", "total" };
	int q = question_parse(base->question[0] ? base->question : next->question);
	struct compare_top top;
	int64_t bt, nt;
	int ret;

	ret = compare_top_changes(d, &top);
	if (ret)
		return ret;
	memset(pg, 0, sizeof(*pg));
	snprintf(pg->title, sizeof(pg->title), "Differential flame graph%s%s", q < 0 ? "" : ": ",
		 q < 0 ? "" : question_info(q)->text);
	compare_answer(&top, base, next, pg->answer, sizeof(pg->answer));
	prof_diff__totals(d, &bt, &nt);
	pg->o.unit = unit_of(base->p);
	format_total(pg->o.unit, bt, pg->totals[0], sizeof(pg->totals[0]));
	format_total(pg->o.unit, nt, pg->totals[1], sizeof(pg->totals[1]));
	pg->cells[0] = "base";
	pg->cells[1] = base->label;
	pg->cells[2] = pg->totals[0];
	pg->cells[3] = "new";
	pg->cells[4] = next->label;
	pg->cells[5] = pg->totals[1];
	pg->o.title = pg->title;
	pg->o.answer = pg->answer;
	pg->o.table_title = "The two profiles";
	pg->o.table_cols = cols;
	pg->o.table_ncols = 3;
	pg->o.table_cells = pg->cells;
	pg->o.table_nrows = 2;
	return 0;
}

int compare_write_page(const struct prof_diff *d, const struct compare_side *base,
		       const struct compare_side *next, const char *assets, FILE *f)
{
	struct page pg;
	int ret;

	if (!d || !base || !next || !base->p || !f)
		return -EINVAL;
	ret = page_init(&pg, d, base, next);
	if (ret)
		return ret;
	pg.o.assets = assets;
	return flamegraph_write_diff(d, &pg.o, f);
}

static int collapsed_cb(void *ctx, FILE *f)
{
	int n = prof_diff_write(ctx, f, 1);

	return n < 0 ? n : 0;
}

int compare_write_dir(const struct prof_diff *d, const struct compare_side *base,
		      const struct compare_side *next, const char *dir, char *err, size_t size)
{
	char path[PATH_MAX];
	struct page pg;
	int ret;

	if (!d || !base || !next || !base->p || !dir)
		return fail(err, size, -EINVAL, "nothing to write");
	if (strlen(dir) + sizeof("/diff.collapsed") > sizeof(path))
		return fail(err, size, -ENAMETOOLONG, "%s: the path is too long", dir);
	ret = mkdir_p(dir);
	if (ret)
		return fail(err, size, ret, "cannot create %s: %s", dir, strerror(-ret));
	ret = page_init(&pg, d, base, next);
	snprintf(path, sizeof(path), "%s/diff.html", dir);
	if (!ret)
		ret = flamegraph_write_diff_file(d, &pg.o, path);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/diff.collapsed", dir);
		ret = atomic_write_file(path, collapsed_cb, (void *)d);
	}
	if (ret)
		return fail(err, size, ret, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}
