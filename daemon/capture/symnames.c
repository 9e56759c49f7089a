// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/symnames.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "profile/merge.h"
#include "profile/profile.h"
#include "symbols/symstore.h"

#define DISPLAY_MAX 1024

bool symnames_frame(struct symstore *ss, const struct prof_frame_info *f, char *buf, size_t size)
{
	if (!ss || !f || f->function || !f->build_id || !f->build_id[0] || !f->mapping ||
	    f->lang == PROF_LANG_KERNEL || f->lang == PROF_LANG_OWNER)
		return false;
	if (!symstore__has(ss, f->build_id))
		return false;
	return symstore__name(ss, f->build_id, f->address, buf, size) == 0 && buf[0];
}

/* Whether any frame of @p may be named: saves the copy when none can. */
static bool any_nameable(struct symstore *ss, const struct profile *p)
{
	size_t i, n = profile__nframes(p);

	for (i = 0; i < n; i++) {
		const struct prof_frame_info *f = profile__frame_info(p, (uint32_t)i);

		if (f && !f->function && f->build_id && f->build_id[0] &&
		    symstore__has(ss, f->build_id))
			return true;
	}
	return false;
}

static void map_add(struct symnames_map *m, const char *from, const char *to)
{
	char **nf, **nt;
	size_t cap;

	if (m->n >= SYMNAMES_MAP_MAX)
		return;
	if (m->n == m->cap) {
		cap = m->cap ? m->cap * 2 : 64;
		nf = realloc(m->from, cap * sizeof(*nf));
		if (!nf)
			return;
		m->from = nf;
		nt = realloc(m->to, cap * sizeof(*nt));
		if (!nt)
			return;
		m->to = nt;
		m->cap = cap;
	}
	m->from[m->n] = strdup(from);
	m->to[m->n] = strdup(to);
	if (!m->from[m->n] || !m->to[m->n]) {
		free(m->from[m->n]);
		free(m->to[m->n]);
		return;
	}
	m->n++;
}

struct rename_ctx {
	struct symstore *ss;
	struct symnames_map *map;
};

static bool rename_frame(void *ctx, const struct prof_frame_info *f, char *buf, size_t size)
{
	struct rename_ctx *rc = ctx;
	char before[DISPLAY_MAX];

	if (!symnames_frame(rc->ss, f, buf, size))
		return false;
	if (rc->map)
		map_add(rc->map, profile_frame_display(f, before, sizeof(before)), buf);
	return true;
}

int symnames_profile(struct symstore *ss, struct profile **p, struct symnames_map *map)
{
	struct rename_ctx rc = { ss, map };
	struct profile *named = NULL;
	int n;

	if (!ss || !p || !*p || !symstore__count(ss) || !any_nameable(ss, *p))
		return 0;
	n = profile_rename(*p, rename_frame, &rc, &named);
	if (n > 0) {
		profile__free(*p);
		*p = named;
	}
	return n;
}

void symnames_map_free(struct symnames_map *map)
{
	size_t i;

	if (!map)
		return;
	for (i = 0; i < map->n; i++) {
		free(map->from[i]);
		free(map->to[i]);
	}
	free(map->from);
	free(map->to);
	*map = (struct symnames_map){ 0 };
}

/* The name @s had before, or NULL: an exact entry of @map. */
static const char *map_find(const struct symnames_map *map, const char *s)
{
	size_t i;

	for (i = 0; s && i < map->n; i++)
		if (!strcmp(map->from[i], s))
			return map->to[i];
	return NULL;
}

/* Replaces whole names only: "app+0x1a" must match neither inside "app+0x1a2b" nor inside
 * "myapp+0x1a" or "x.app+0x1a"; a sentence's full stop may follow it. */
static bool edge_before(char c)
{
	return !(isalnum((unsigned char)c) || c == '_' || c == '+' || c == '-' || c == '.' ||
		 c == '/');
}

static bool edge_after(char c)
{
	return !(isalnum((unsigned char)c) || c == '_');
}

bool symnames_text(const struct symnames_map *map, char *s, size_t size)
{
	bool changed = false;
	size_t i, fl, tl, len;
	char *hit, *from;

	for (i = 0; s && i < map->n; i++) {
		fl = strlen(map->from[i]);
		tl = strlen(map->to[i]);
		for (from = s; fl && (hit = strstr(from, map->from[i]));) {
			len = strlen(s);
			if (!edge_after(hit[fl]) || (hit > s && !edge_before(hit[-1])) ||
			    len - fl + tl >= size) {
				from = hit + fl;
				continue;
			}
			memmove(hit + tl, hit + fl, len - (size_t)(hit - s) - fl + 1);
			memcpy(hit, map->to[i], tl);
			from = hit + tl;
			changed = true;
		}
	}
	return changed;
}

/* Sets string field @key of @o to its new name, if it has one. */
static bool rename_field(const struct symnames_map *map, json_t *o, const char *key)
{
	const char *to = map_find(map, json_string_value(json_object_get(o, key)));

	return to && !json_object_set_new(o, key, json_string(to));
}

/* top_functions: renamed, and entries that became one function merged (samples and shares
 * summed), still sorted by samples. */
static bool rename_top(const struct symnames_map *map, json_t *top)
{
	bool changed = false;
	size_t i, j;

	for (i = 0; i < json_array_size(top); i++)
		changed |= rename_field(map, json_array_get(top, i), "name");
	for (i = 0; changed && i < json_array_size(top); i++) {
		json_t *a = json_array_get(top, i);

		for (j = i + 1; j < json_array_size(top);) {
			json_t *b = json_array_get(top, j);

			if (!json_equal(json_object_get(a, "name"), json_object_get(b, "name"))) {
				j++;
				continue;
			}
			json_object_set_new(
				a, "samples",
				json_integer(json_integer_value(json_object_get(a, "samples")) +
					     json_integer_value(json_object_get(b, "samples"))));
			json_object_set_new(
				a, "share",
				json_real(json_number_value(json_object_get(a, "share")) +
					  json_number_value(json_object_get(b, "share"))));
			json_array_remove(top, j);
		}
	}
	return changed;
}

/* The card's binaries whose build has an upload now: no longer unnamed. */
static bool prune_card(struct symstore *ss, json_t *card)
{
	bool changed = false;
	size_t i;

	for (i = 0; i < json_array_size(card);) {
		const char *bid = json_string_value(
			json_object_get(json_array_get(card, i), "build_id"));

		if (bid && symstore__has(ss, bid)) {
			json_array_remove(card, i);
			changed = true;
		} else {
			i++;
		}
	}
	return changed;
}

static bool rename_summary(struct symstore *ss, json_t *summary, const struct symnames_map *map)
{
	const char *answer = json_string_value(json_object_get(summary, "answer"));
	bool changed = false;
	json_t *g, *procs;
	size_t i, j;
	char buf[2048];

	if (!ss || !json_is_object(summary))
		return false;
	changed |= prune_card(ss, json_object_get(summary, "stripped_binaries"));
	if (!map || !map->n)
		return changed;
	if (answer && strlen(answer) < sizeof(buf)) {
		strcpy(buf, answer);
		if (symnames_text(map, buf, sizeof(buf)))
			changed |= !json_object_set_new(summary, "answer", json_string(buf));
	}
	changed |= rename_top(map, json_object_get(summary, "top_functions"));
	json_array_foreach(json_object_get(summary, "groups"), i, g) {
		changed |= rename_field(map, g, "top_function");
		procs = json_object_get(g, "processes");
		for (j = 0; j < json_array_size(procs); j++)
			changed |= rename_field(map, json_array_get(procs, j), "top_function");
	}
	json_array_foreach(json_object_get(summary, "threads"), i, g)
		changed |= rename_field(map, g, "function");
	return changed;
}

int symnames_summary(struct symstore *ss, const char *text, size_t len,
		     const struct symnames_map *map, char **out, size_t *out_len)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	char *t;

	if (!doc)
		return -EINVAL;
	if (!rename_summary(ss, doc, map)) {
		json_decref(doc);
		return 0;
	}
	t = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!t)
		return -ENOMEM;
	*out = t;
	*out_len = strlen(t);
	return 1;
}
