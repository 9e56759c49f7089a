// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "daemon/agent/store.h"
#include "daemon/capture/compare.h"
#include "daemon/capture/question.h"
#include "daemon/capture/source.h"
#include "profile/diff.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"

#define ASSETS "/ui"

/* Decodes the stored pprof of @id (with its meta in @m). */
static int load(struct store *s, const char *id, struct store_meta *m, struct profile **p,
		char *err, size_t size)
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
	return 0;
}

/* What a view writes: the page or the lines, into @f; 0 (or a count) or -errno. */
struct view_out {
	const struct profile *p; /* a flame graph */
	const struct flamegraph_opts *fo;
	const struct prof_diff *d; /* a comparison: its page, or its lines without @a */
	const struct compare_side *a, *b;
};

static int view_write(const struct view_out *v, FILE *f)
{
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

int view_compare(struct store *s, const char *base, const char *next, bool collapsed, char **out,
		 size_t *len, char *err, size_t size)
{
	struct compare_side a = { 0 }, b = { 0 };
	struct profile *pa = NULL, *pb = NULL;
	struct prof_diff *d = NULL;
	struct store_meta ma, mb;
	int ret;

	ret = load(s, base, &ma, &pa, err, size);
	if (!ret)
		ret = load(s, next, &mb, &pb, err, size);
	if (!ret) {
		side_from(&a, pa, &ma);
		side_from(&b, pb, &mb);
		ret = compare_profiles(&a, &b, &d, err, size);
	}
	if (!ret) {
		struct view_out v = { .d = d, .a = collapsed ? NULL : &a, .b = &b };

		ret = to_text(&v, out, len);
		if (ret)
			snprintf(err, size, "cannot compare: %s", strerror(-ret));
	}
	prof_diff__free(d);
	profile__free(pa);
	profile__free(pb);
	return ret;
}
