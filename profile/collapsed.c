// SPDX-License-Identifier: Apache-2.0
/*
 * Folded stacks. Lines are merged by their text (two frames that differ only in file, line or
 * address display the same and fold together) and written sorted, so the output of a profile
 * is stable and diffs well.
 */
#include "profile/collapsed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "profile/profile.h"

struct linebuf {
	char *s;
	size_t len, cap;
};

static int lb_append(struct linebuf *b, const char *s, size_t n)
{
	size_t ncap;
	char *ns;

	if (b->len + n + 1 > b->cap) {
		ncap = b->cap ? b->cap : 256;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		ns = realloc(b->s, ncap);
		if (!ns)
			return -ENOMEM;
		b->s = ns;
		b->cap = ncap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

/* Appends one frame name; ';' would split the frame, a newline the line and a ' ' before the
 * name's last digits the count, so all go. Names are valid UTF-8 already (profile.c). */
static int lb_frame(struct linebuf *b, const char *name)
{
	size_t i, start = b->len;
	int err;

	if (!name || !*name)
		name = "[unknown]";
	if (start) {
		err = lb_append(b, ";", 1);
		if (err)
			return err;
		start++;
	}
	err = lb_append(b, name, strlen(name));
	if (err)
		return err;
	for (i = start; i < b->len; i++) {
		if (b->s[i] == ';')
			b->s[i] = ':';
		else if ((unsigned char)b->s[i] < 0x20 || b->s[i] == 0x7f)
			b->s[i] = '_';
	}
	/* "tick 42" as the leaf would read as a second count (flamegraph.pl's diff format) */
	for (i = b->len; i > start && b->s[i - 1] >= '0' && b->s[i - 1] <= '9'; i--)
		;
	if (i < b->len && i > start && b->s[i - 1] == ' ')
		b->s[i - 1] = '_';
	return 0;
}

struct folded {
	struct prof_strset *lines;
	int64_t *counts;
	size_t cap;
	struct prof_strset *names; /* sanitized frame names */
	uint32_t *name_of;	   /* frame id -> names index, UINT32_MAX: not yet */
	uint32_t *order;	   /* collapsed_fold(): the lines with a count, sorted */
	size_t n;
};

/* Appends the sanitized display name of frame @id, computed once per frame. */
static int lb_cached_frame(struct linebuf *b, const struct profile *p, struct folded *fo,
			   uint32_t id)
{
	struct linebuf nb = { 0 };
	char name[512];
	int idx, err;

	if (fo->name_of[id] == UINT32_MAX) {
		err = lb_frame(&nb, profile_frame_display(profile__frame_info(p, id), name,
							  sizeof(name)));
		idx = err ? err : prof_strset__add(fo->names, nb.s, nb.len);
		free(nb.s);
		if (idx < 0)
			return idx;
		fo->name_of[id] = (uint32_t)idx;
	}
	if (b->len && (err = lb_append(b, ";", 1)))
		return err;
	return lb_append(b, prof_strset__str(fo->names, fo->name_of[id]),
			 prof_strset__len(fo->names, fo->name_of[id]));
}

static int cmp_lines(const void *a, const void *b, void *ctx)
{
	const struct prof_strset *set = ctx;

	return strcmp(prof_strset__str(set, *(const uint32_t *)a),
		      prof_strset__str(set, *(const uint32_t *)b));
}

static int fold(const struct profile *p, struct folded *fo)
{
	size_t i, j, ncap, nframes = profile__nframes(p);
	struct linebuf b = { 0 };
	struct prof_sample s;
	int64_t *nc, c;
	int idx, err;

	err = prof_strset__new(&fo->names);
	if (err)
		return err;
	fo->name_of = malloc((nframes ? nframes : 1) * sizeof(*fo->name_of));
	if (!fo->name_of)
		return -ENOMEM;
	memset(fo->name_of, 0xff, nframes * sizeof(*fo->name_of));
	for (i = 0; i < profile__nsamples(p) && !err; i++) {
		profile__sample(p, i, &s);
		b.len = 0;
		if (profile__opts(p)->owner_root) {
			err = lb_frame(&b, s.labels->owner ? s.labels->owner : "Other processes");
			if (!err)
				err = lb_frame(&b, s.labels->process);
		}
		for (j = s.nframes; j-- > 0 && !err;)
			err = lb_cached_frame(&b, p, fo, s.frames[j]);
		if (!err && !b.len)
			err = lb_frame(&b, NULL);
		if (err)
			break;
		idx = prof_strset__add(fo->lines, b.s, b.len);
		if (idx < 0) {
			err = idx;
			break;
		}
		if ((size_t)idx >= fo->cap) {
			ncap = fo->cap ? fo->cap * 2 : 1024;
			nc = realloc(fo->counts, ncap * sizeof(*nc));
			if (!nc) {
				err = -ENOMEM;
				break;
			}
			memset(nc + fo->cap, 0, (ncap - fo->cap) * sizeof(*nc));
			fo->counts = nc;
			fo->cap = ncap;
		}
		if (__builtin_add_overflow(fo->counts[idx], s.values[0], &c))
			c = s.values[0] > 0 ? INT64_MAX : INT64_MIN;
		fo->counts[idx] = c;
	}
	free(b.s);
	return err;
}

static void fold_free(struct folded *fo)
{
	free(fo->counts);
	free(fo->name_of);
	free(fo->order);
	prof_strset__free(fo->names);
	prof_strset__free(fo->lines);
}

int collapsed_fold(const struct profile *p, struct collapsed_fold **out)
{
	struct folded *fo;
	size_t i, n;
	int err;

	if (!p || !out)
		return -EINVAL;
	fo = calloc(1, sizeof(*fo));
	if (!fo)
		return -ENOMEM;
	err = prof_strset__new(&fo->lines);
	if (!err)
		err = fold(p, fo);
	n = fo->lines ? prof_strset__count(fo->lines) : 0;
	if (!err) {
		fo->order = malloc((n ? n : 1) * sizeof(*fo->order));
		err = fo->order ? 0 : -ENOMEM;
	}
	if (err) {
		fold_free(fo);
		free(fo);
		return err;
	}
	/* sorted (byte order), lines summing to 0 left out */
	for (i = 0; i < n; i++)
		if (fo->counts[i])
			fo->order[fo->n++] = (uint32_t)i;
	qsort_r(fo->order, fo->n, sizeof(*fo->order), cmp_lines, fo->lines);
	*out = (struct collapsed_fold *)fo;
	return 0;
}

void collapsed_fold_free(struct collapsed_fold *f)
{
	if (!f)
		return;
	fold_free((struct folded *)f);
	free(f);
}

size_t collapsed_fold_count(const struct collapsed_fold *f)
{
	return ((const struct folded *)f)->n;
}

const char *collapsed_fold_line(const struct collapsed_fold *f, size_t i, int64_t *value)
{
	const struct folded *fo = (const struct folded *)f;

	if (value)
		*value = fo->counts[fo->order[i]];
	return prof_strset__str(fo->lines, fo->order[i]);
}

int collapsed_write(const struct profile *p, FILE *f)
{
	struct collapsed_fold *fo;
	size_t i, n;
	int64_t v;
	int err;

	if (!p || !f)
		return -EINVAL;
	err = collapsed_fold(p, &fo);
	if (err)
		return err;
	n = collapsed_fold_count(fo);
	for (i = 0; i < n && !err; i++) {
		const char *line = collapsed_fold_line(fo, i, &v);

		if (fprintf(f, "%s %lld\n", line, (long long)v) < 0)
			err = errno ? -errno : -EIO;
	}
	if (!err && ferror(f))
		err = -EIO;
	collapsed_fold_free(fo);
	return err ? err : (int)n;
}

static int write_cb(void *ctx, FILE *f)
{
	int n = collapsed_write(ctx, f);

	return n < 0 ? n : 0;
}

int collapsed_write_file(const struct profile *p, const char *path)
{
	if (!p || !path)
		return -EINVAL;
	return atomic_write_file(path, write_cb, (void *)p);
}
