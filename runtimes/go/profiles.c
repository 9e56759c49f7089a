// SPDX-License-Identifier: Apache-2.0
#include "runtimes/go/profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/merge.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/go/goroutines.h"

int go_profiles_decode(const void *body, size_t len, const char *t0, const char *t1,
		       size_t max_decoded, struct profile **out)
{
	struct pprof_decode_opts o = { .default_lang = PROF_LANG_GO,
				       .sample_types = { t0, t1 },
				       .max_decoded = max_decoded };

	return pprof_decode_ext(body, len, &o, out);
}

const char *go_profiles_decode_why(int err)
{
	return err == -ENOENT ? "those sample types are missing" :
	       err == -EFBIG  ? "too large" :
				"malformed";
}

long go_profiles_mutex_period(const char *text)
{
	const char *key = "sampling period=", *s;

	s = text ? strstr(text, key) : NULL;
	return s ? strtol(s + strlen(key), NULL, 10) : -1;
}

void go_profiles_labels(struct prof_labels *l, uint32_t pid, const char *comm)
{
	l->pid = pid;
	if (!l->process)
		l->process = comm;
	l->lang = PROF_LANG_GO;
}

bool go_profiles_not_sync_mutex(const struct profile *p, const struct prof_sample *s)
{
	size_t i;

	for (i = 0; i < s->nframes && i < 8; i++) {
		const struct prof_frame_info *f = profile__frame_info(p, s->frames[i]);

		if (f && f->function &&
		    (!strcmp(f->function, "sync.(*Mutex).Lock") ||
		     !strcmp(f->function, "sync.(*Mutex).lockSlow") ||
		     !strcmp(f->function, "sync.(*RWMutex).Lock") ||
		     !strcmp(f->function, "sync.(*RWMutex).RLock")))
			return false;
	}
	return true;
}

int go_profiles_add_delta(struct profile *dst, const struct profile *end,
			  const struct profile *start, const struct prof_labels *l,
			  const char *leaf_text,
			  bool (*keep)(const struct profile *, const struct prof_sample *))
{
	struct prof_frame_info leaf = { .function = leaf_text,
					.mapping = REPORT_WAIT_MAPPING,
					.lang = PROF_LANG_KERNEL };
	struct profile_merge_opts mo = {
		.labels = l, .positive_only = true, .leaf = leaf_text ? &leaf : NULL, .keep = keep
	};
	struct profile *d = NULL;
	int ret;

	ret = profile_delta(end, start, &d);
	if (!ret)
		ret = profile_merge(dst, d, &mo);
	profile__free(d);
	return ret;
}

static int group_add(struct go_groups *gs, uint32_t pid, const char *comm, const char *state,
		     const char *fn)
{
	struct go_goroutine_group *x;
	size_t i;

	for (i = 0; i < gs->n; i++) {
		x = &gs->g[i];
		if (x->pid == pid && !strcmp(x->state, state) && !strcmp(x->function, fn)) {
			x->count++;
			return 0;
		}
	}
	if (gs->n >= GO_PROFILES_MAX_GROUPS)
		return 0;
	if (!gs->g) {
		gs->g = calloc(GO_PROFILES_MAX_GROUPS, sizeof(*gs->g));
		if (!gs->g)
			return -ENOMEM;
	}
	x = &gs->g[gs->n++];
	x->pid = pid;
	snprintf(x->process, sizeof(x->process), "%s", comm ? comm : "");
	snprintf(x->state, sizeof(x->state), "%s", state);
	snprintf(x->function, sizeof(x->function), "%s", fn);
	x->count = 1;
	return 0;
}

/* The goroutine of the program's HTTP server that is writing the dump we asked for. */
static bool writes_the_dump(const struct go_goroutine *gr)
{
	uint32_t j;

	for (j = 0; j < gr->nframes && j < 16; j++)
		if (gr->frames[j].func &&
		    !strncmp(gr->frames[j].func, "runtime/pprof.writeGoroutine", 28))
			return true;
	return false;
}

/* One goroutine: its stack under a leaf saying its state, and its group. */
static int add_goroutine(struct profile *dst, const struct go_goroutine *gr,
			 const struct prof_labels *l, const char *comm, const char *exe,
			 struct go_groups *groups)
{
	const char *state = gr->state && *gr->state ? gr->state : "unknown", *mine = NULL;
	char leaf_text[96];
	struct prof_frame_info leaf = { .function = leaf_text,
					.mapping = REPORT_WAIT_MAPPING,
					.lang = PROF_LANG_KERNEL };
	uint32_t frames[PROF_MAX_FRAMES], j;
	/* one goroutine in the first value; a profile of more values gets 0 in the others */
	int64_t one[PROF_MAX_VALUES] = { 1 };
	size_t n = 0;
	int id, ret;

	snprintf(leaf_text, sizeof(leaf_text), "[goroutine: %s]", state);
	id = profile__frame(dst, &leaf);
	if (id < 0)
		return id;
	frames[n++] = (uint32_t)id;
	for (j = 0; j < gr->nframes && n < PROF_MAX_FRAMES; j++) {
		struct prof_frame_info fi = { .function = gr->frames[j].func,
					      .file = gr->frames[j].file,
					      .line = gr->frames[j].line,
					      .mapping = exe,
					      .lang = PROF_LANG_GO };

		if (!mine && fi.function && !report_is_go_std(fi.function))
			mine = fi.function;
		id = profile__frame(dst, &fi);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
	}
	ret = profile__add(dst, frames, n, l, one);
	if (ret)
		return ret;
	if (!mine)
		mine = gr->nframes && gr->frames[0].func ? gr->frames[0].func : "?";
	groups->total++;
	return group_add(groups, l->pid, comm, state, mine);
}

int go_profiles_add_goroutines(struct profile *dst, const struct go_goroutines *gs,
			       const struct prof_labels *l, const char *comm, const char *exe,
			       struct go_groups *groups)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < gs->n && !ret; i++)
		if (!writes_the_dump(&gs->g[i])) /* answering us: not the program's */
			ret = add_goroutine(dst, &gs->g[i], l, comm, exe, groups);
	return ret;
}

static int cmp_group(const void *a, const void *b)
{
	const struct go_goroutine_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void go_groups_sort(struct go_groups *groups)
{
	if (groups->n)
		qsort(groups->g, groups->n, sizeof(*groups->g), cmp_group);
}

void go_groups_release(struct go_groups *groups)
{
	free(groups->g);
	memset(groups, 0, sizeof(*groups));
}
