// SPDX-License-Identifier: Apache-2.0
/*
 * The profile model. Everything is interned: strings in a prof_strset, frames, label sets and
 * stacks in growable arrays indexed by open-addressing hash tables (slots hold index + 1), and
 * samples are keyed by (stack id, label set id). Arrays keep insertion order, so every writer's
 * output is deterministic.
 */
#include "profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/text.h"

#define NO_STR UINT32_MAX
#define MAX_ENTRIES ((size_t)INT32_MAX)

static const char *const lang_names[PROF_LANG_COUNT] = {
	[PROF_LANG_NATIVE] = "native", [PROF_LANG_KERNEL] = "kernel", [PROF_LANG_GO] = "go",
	[PROF_LANG_JAVA] = "java",     [PROF_LANG_PYTHON] = "python", [PROF_LANG_NODE] = "node",
	[PROF_LANG_RUBY] = "ruby",     [PROF_LANG_OWNER] = "owner",
};

const char *prof_lang_name(enum prof_lang lang)
{
	if ((unsigned)lang >= PROF_LANG_COUNT)
		return "native";
	return lang_names[lang];
}

int prof_lang_parse(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < PROF_LANG_COUNT; i++)
		if (!strcmp(name, lang_names[i]))
			return i;
	return -EINVAL;
}

const char *profile_frame_display(const struct prof_frame_info *f, char *buf, size_t size)
{
	const char *base;
	size_t n;

	if (!buf || !size)
		return buf;
	/* cut at a character boundary when @buf is short */
	if (f && f->function && f->function[0]) {
		text_utf8_valid_copy(buf, size, f->function, strlen(f->function));
	} else if (f && f->mapping && f->mapping[0]) {
		base = strrchr(f->mapping, '/');
		base = base && base[1] ? base + 1 : f->mapping;
		n = text_utf8_valid_copy(buf, size, base, strlen(base));
		snprintf(buf + n, size - n, "+0x%" PRIx64, f->address);
	} else {
		snprintf(buf, size, "[unknown]");
	}
	return buf;
}

/* ---- hashing and the generic open-addressing table ---- */

static uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

struct htab {
	uint32_t *slots; /* 0: empty, else entry index + 1 */
	size_t cap;	 /* power of two, or 0 */
	size_t used;
};

typedef bool (*htab_eq_fn_t)(const void *ctx, uint32_t idx, const void *key);
typedef uint64_t (*htab_hash_fn_t)(const void *ctx, uint32_t idx);

/* Returns the entry index equal to @key, or UINT32_MAX and in *@slot where to insert it. */
static uint32_t htab_find(const struct htab *h, uint64_t hash, htab_eq_fn_t eq, const void *ctx,
			  const void *key, uint32_t **slot)
{
	size_t i, mask;

	*slot = NULL;
	if (!h->cap)
		return UINT32_MAX;
	mask = h->cap - 1;
	for (i = hash & mask;; i = (i + 1) & mask) {
		if (!h->slots[i]) {
			*slot = &h->slots[i];
			return UINT32_MAX;
		}
		if (eq(ctx, h->slots[i] - 1, key))
			return h->slots[i] - 1;
	}
}

/* Makes room for one more entry (load factor <= 1/2). Returns 0 or -ENOMEM. */
static int htab_reserve(struct htab *h, htab_hash_fn_t hash_of, const void *ctx)
{
	size_t ncap, i, j, mask;
	uint32_t *ns;

	if ((h->used + 1) * 2 <= h->cap)
		return 0;
	ncap = h->cap ? h->cap * 2 : 64;
	if (ncap > SIZE_MAX / sizeof(*ns))
		return -ENOMEM;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	mask = ncap - 1;
	for (i = 0; i < h->cap; i++) {
		if (!h->slots[i])
			continue;
		for (j = hash_of(ctx, h->slots[i] - 1) & mask; ns[j]; j = (j + 1) & mask)
			;
		ns[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = ns;
	h->cap = ncap;
	return 0;
}

/* ---- strings ---- */

#define STR_CHUNK (64u << 10)

struct str_entry {
	const char *s;
	size_t len;
	uint64_t hash;
};

struct prof_strset {
	struct str_entry *ents;
	size_t n, cap;
	struct htab ht;
	char **chunks; /* arena: strings never move */
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
};

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct prof_strset *s = ctx;
	const struct str_key *k = key;

	return s->ents[idx].len == k->len && !memcmp(s->ents[idx].s, k->s, k->len);
}

static uint64_t str_hash_of(const void *ctx, uint32_t idx)
{
	const struct prof_strset *s = ctx;

	return s->ents[idx].hash;
}

int prof_strset__new(struct prof_strset **out)
{
	struct prof_strset *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

void prof_strset__free(struct prof_strset *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->ents);
	free(s->ht.slots);
	free(s);
}

static char *strset_alloc(struct prof_strset *s, size_t size)
{
	size_t csize;
	char *c;

	if (s->nchunks && s->chunk_size - s->chunk_used >= size) {
		c = s->chunks[s->nchunks - 1] + s->chunk_used;
		s->chunk_used += size;
		return c;
	}
	if (array_ensure((void **)&s->chunks, &s->chunks_cap, sizeof(*s->chunks), s->nchunks + 1))
		return NULL;
	csize = size > STR_CHUNK / 4 ? size : STR_CHUNK;
	c = malloc(csize);
	if (!c)
		return NULL;
	if (csize == size && s->nchunks) {
		/* A big string gets its own chunk, slid under the current one to keep filling it. */
		s->chunks[s->nchunks] = s->chunks[s->nchunks - 1];
		s->chunks[s->nchunks - 1] = c;
		s->nchunks++;
		return c;
	}
	s->chunks[s->nchunks++] = c;
	s->chunk_size = csize;
	s->chunk_used = size;
	return c;
}

int prof_strset__find(const struct prof_strset *s, const char *str, size_t len)
{
	struct str_key k = { str ? str : "", str ? len : 0 };
	uint32_t *slot, idx;

	idx = htab_find(&s->ht, hash_bytes(k.s, k.len), str_eq, s, &k, &slot);
	return idx == UINT32_MAX ? -ENOENT : (int)idx;
}

int prof_strset__add(struct prof_strset *s, const char *str, size_t len)
{
	struct str_key k = { str ? str : "", str ? len : 0 };
	uint64_t hash = hash_bytes(k.s, k.len);
	uint32_t *slot, idx;
	char *copy;
	int err;

	idx = htab_find(&s->ht, hash, str_eq, s, &k, &slot);
	if (idx != UINT32_MAX)
		return (int)idx;
	if (s->n >= MAX_ENTRIES)
		return -E2BIG;
	if (k.len >= SIZE_MAX - 1)
		return -ENOMEM;
	err = htab_reserve(&s->ht, str_hash_of, s);
	if (err)
		return err;
	err = array_ensure((void **)&s->ents, &s->cap, sizeof(*s->ents), s->n + 1);
	if (err)
		return err;
	copy = strset_alloc(s, k.len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, k.s, k.len);
	copy[k.len] = '\0';
	s->ents[s->n] = (struct str_entry){ copy, k.len, hash };
	htab_find(&s->ht, hash, str_eq, s, &k, &slot);
	*slot = (uint32_t)s->n + 1;
	s->ht.used++;
	return (int)s->n++;
}

size_t prof_strset__count(const struct prof_strset *s)
{
	return s ? s->n : 0;
}

const char *prof_strset__str(const struct prof_strset *s, uint32_t i)
{
	return i < s->n ? s->ents[i].s : NULL;
}

size_t prof_strset__len(const struct prof_strset *s, uint32_t i)
{
	return i < s->n ? s->ents[i].len : 0;
}

/* ---- the profile ---- */

struct frame_key {
	uint32_t function, file, mapping, build_id; /* string ids or NO_STR */
	uint32_t line;
	uint32_t lang;
	uint64_t address;
	bool stripped;
};

struct labels_key {
	uint32_t owner, process, thread;
	uint32_t pid, tid, lang;
};

struct stack {
	size_t off; /* into stack_pool */
	uint32_t n;
	uint64_t hash;
};

struct sample {
	uint32_t stack, labels;
	int64_t values[PROF_MAX_VALUES];
	uint64_t hash;
};

struct profile {
	struct profile_opts opts; /* strings point into strs */
	struct prof_strset *strs;

	struct prof_frame_info *frames; /* public view */
	struct frame_key *frame_keys;
	uint64_t *frame_hashes;
	size_t nframes, frames_cap, frame_keys_cap, frame_hashes_cap;
	struct htab frame_ht;

	struct prof_labels *labels;
	struct labels_key *label_keys;
	uint64_t *label_hashes;
	size_t nlabels, labels_cap, label_keys_cap, label_hashes_cap;
	struct htab label_ht;

	uint32_t *stack_pool;
	size_t pool_len, pool_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	struct htab stack_ht;

	struct sample *samples;
	size_t nsamples, samples_cap;
	struct htab sample_ht;

	int64_t totals[PROF_MAX_VALUES];
};

void profile__free(struct profile *p)
{
	if (!p)
		return;
	prof_strset__free(p->strs);
	free(p->frames);
	free(p->frame_keys);
	free(p->frame_hashes);
	free(p->frame_ht.slots);
	free(p->labels);
	free(p->label_keys);
	free(p->label_hashes);
	free(p->label_ht.slots);
	free(p->stack_pool);
	free(p->stacks);
	free(p->stack_ht.slots);
	free(p->samples);
	free(p->sample_ht.slots);
	free(p);
}

/*
 * Adds @str (@len bytes) to @s made well-formed UTF-8 (base/text's rule, one '?' per bad byte),
 * so every name in the model, and in every writer's output, is valid UTF-8: names come from
 * /proc (comm is cut at 15 bytes, mid-character too), from symbol tables and from runtimes, all
 * untrusted. Control characters stay: each writer escapes them for its format. Returns the
 * string's index or -errno.
 */
static int strset_add_clean(struct prof_strset *s, const char *str, size_t len)
{
	char *clean;
	int i;

	if (text_utf8_is_valid(str, len))
		return prof_strset__add(s, str, len);
	clean = malloc(len + 1);
	if (!clean)
		return -ENOMEM;
	/* one '?' per bad byte: the length stays @len */
	len = text_utf8_valid_copy(clean, len + 1, str, len);
	i = prof_strset__add(s, clean, len);
	free(clean);
	return i;
}

/* Interns @str (NULL stays NULL), made valid UTF-8. Returns 0 with *@id and *@out set, or -errno. */
static int intern(struct profile *p, const char *str, uint32_t *id, const char **out)
{
	int i;

	if (!str) {
		*id = NO_STR;
		if (out)
			*out = NULL;
		return 0;
	}
	i = strset_add_clean(p->strs, str, strlen(str));
	if (i < 0)
		return i;
	*id = (uint32_t)i;
	if (out)
		*out = prof_strset__str(p->strs, *id);
	return 0;
}

static int intern_opt(struct profile *p, const char **s)
{
	uint32_t id;

	return intern(p, *s, &id, s);
}

int profile__new(const struct profile_opts *opts, struct profile **out)
{
	static const struct profile_opts zero;
	struct profile *p;
	size_t i;
	int err;

	if (!opts)
		opts = &zero;
	if (opts->nvalues > PROF_MAX_VALUES)
		return -EINVAL;
	for (i = 0; i < opts->nvalues; i++)
		if (!opts->sample_type[i] || !opts->sample_unit[i])
			return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->opts = *opts;
	err = prof_strset__new(&p->strs);
	if (err)
		goto err_free;
	if (!p->opts.nvalues) {
		p->opts.nvalues = 2;
		p->opts.sample_type[0] = "samples";
		p->opts.sample_unit[0] = "count";
		p->opts.sample_type[1] = "cpu";
		p->opts.sample_unit[1] = "nanoseconds";
		if (!p->opts.period_type) {
			p->opts.period_type = "cpu";
			p->opts.period_unit = "nanoseconds";
		}
	}
	for (i = p->opts.nvalues; i < PROF_MAX_VALUES; i++)
		p->opts.sample_type[i] = p->opts.sample_unit[i] = NULL;
	for (i = 0; i < p->opts.nvalues; i++) {
		err = intern_opt(p, &p->opts.sample_type[i]);
		if (!err)
			err = intern_opt(p, &p->opts.sample_unit[i]);
		if (err)
			goto err_free;
	}
	if (p->opts.period_type && !p->opts.period_unit)
		p->opts.period_unit = "count";
	err = intern_opt(p, &p->opts.period_type);
	if (!err)
		err = intern_opt(p, &p->opts.period_unit);
	if (err)
		goto err_free;
	*out = p;
	return 0;

err_free:
	profile__free(p);
	return err;
}

static uint64_t frame_key_hash(const struct frame_key *k)
{
	uint64_t h = 0;

	h = hash_mix(h, k->function);
	h = hash_mix(h, k->file);
	h = hash_mix(h, k->mapping);
	h = hash_mix(h, k->build_id);
	h = hash_mix(h, ((uint64_t)k->line << 32) | (k->lang << 1) | k->stripped);
	return hash_mix(h, k->address);
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const struct frame_key *a = &p->frame_keys[idx], *b = key;

	return a->function == b->function && a->file == b->file && a->mapping == b->mapping &&
	       a->build_id == b->build_id && a->line == b->line && a->lang == b->lang &&
	       a->address == b->address && a->stripped == b->stripped;
}

static uint64_t frame_hash_of(const void *ctx, uint32_t idx)
{
	const struct profile *p = ctx;

	return p->frame_hashes[idx];
}

int profile__frame(struct profile *p, const struct prof_frame_info *info)
{
	struct prof_frame_info f = { 0 };
	struct frame_key k = { 0 };
	uint32_t *slot, idx;
	uint64_t h;
	int err;

	if (!p || !info || (unsigned)info->lang >= PROF_LANG_COUNT)
		return -EINVAL;
	if ((err = intern(p, info->function, &k.function, &f.function)) ||
	    (err = intern(p, info->file, &k.file, &f.file)) ||
	    (err = intern(p, info->mapping, &k.mapping, &f.mapping)) ||
	    (err = intern(p, info->build_id, &k.build_id, &f.build_id)))
		return err;
	k.line = f.line = info->line;
	k.lang = f.lang = info->lang;
	k.address = f.address = info->address;
	k.stripped = f.unnamed_stripped = info->unnamed_stripped;
	h = frame_key_hash(&k);
	idx = htab_find(&p->frame_ht, h, frame_eq, p, &k, &slot);
	if (idx != UINT32_MAX)
		return (int)idx;
	if (p->nframes >= MAX_ENTRIES)
		return -E2BIG;
	if ((err = htab_reserve(&p->frame_ht, frame_hash_of, p)) ||
	    (err = array_ensure((void **)&p->frames, &p->frames_cap, sizeof(f), p->nframes + 1)) ||
	    (err = array_ensure((void **)&p->frame_keys, &p->frame_keys_cap, sizeof(k),
				p->nframes + 1)) ||
	    (err = array_ensure((void **)&p->frame_hashes, &p->frame_hashes_cap, sizeof(h),
				p->nframes + 1)))
		return err;
	p->frames[p->nframes] = f;
	p->frame_keys[p->nframes] = k;
	p->frame_hashes[p->nframes] = h;
	htab_find(&p->frame_ht, h, frame_eq, p, &k, &slot);
	*slot = (uint32_t)p->nframes + 1;
	p->frame_ht.used++;
	return (int)p->nframes++;
}

static bool labels_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;

	return !memcmp(&p->label_keys[idx], key, sizeof(struct labels_key));
}

static uint64_t labels_hash_of(const void *ctx, uint32_t idx)
{
	const struct profile *p = ctx;

	return p->label_hashes[idx];
}

static int intern_labels(struct profile *p, const struct prof_labels *in, uint32_t *id)
{
	static const struct prof_labels none;
	struct prof_labels l = { 0 };
	struct labels_key k;
	uint32_t *slot, idx;
	uint64_t h;
	int err;

	if (!in)
		in = &none;
	if ((unsigned)in->lang >= PROF_LANG_COUNT)
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	if ((err = intern(p, in->owner, &k.owner, &l.owner)) ||
	    (err = intern(p, in->process, &k.process, &l.process)) ||
	    (err = intern(p, in->thread, &k.thread, &l.thread)))
		return err;
	k.pid = l.pid = in->pid;
	k.tid = l.tid = in->tid;
	k.lang = l.lang = in->lang;
	h = hash_mix(hash_mix(hash_mix(0, k.owner), k.process), k.thread);
	h = hash_mix(hash_mix(h, ((uint64_t)k.pid << 32) | k.tid), k.lang);
	idx = htab_find(&p->label_ht, h, labels_eq, p, &k, &slot);
	if (idx != UINT32_MAX) {
		*id = idx;
		return 0;
	}
	if (p->nlabels >= MAX_ENTRIES)
		return -E2BIG;
	if ((err = htab_reserve(&p->label_ht, labels_hash_of, p)) ||
	    (err = array_ensure((void **)&p->labels, &p->labels_cap, sizeof(l), p->nlabels + 1)) ||
	    (err = array_ensure((void **)&p->label_keys, &p->label_keys_cap, sizeof(k),
				p->nlabels + 1)) ||
	    (err = array_ensure((void **)&p->label_hashes, &p->label_hashes_cap, sizeof(h),
				p->nlabels + 1)))
		return err;
	p->labels[p->nlabels] = l;
	p->label_keys[p->nlabels] = k;
	p->label_hashes[p->nlabels] = h;
	htab_find(&p->label_ht, h, labels_eq, p, &k, &slot);
	*slot = (uint32_t)p->nlabels + 1;
	p->label_ht.used++;
	*id = (uint32_t)p->nlabels++;
	return 0;
}

struct stack_key {
	const uint32_t *frames;
	size_t n;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const struct stack_key *k = key;
	const struct stack *s = &p->stacks[idx];

	return s->n == k->n &&
	       (!k->n || !memcmp(p->stack_pool + s->off, k->frames, k->n * sizeof(uint32_t)));
}

static uint64_t stack_hash_of(const void *ctx, uint32_t idx)
{
	const struct profile *p = ctx;

	return p->stacks[idx].hash;
}

static int intern_stack(struct profile *p, const uint32_t *frames, size_t n, uint32_t *id)
{
	struct stack_key k = { frames, n };
	uint32_t *slot, idx;
	uint64_t h = n;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		h = hash_mix(h, frames[i]);
	idx = htab_find(&p->stack_ht, h, stack_eq, p, &k, &slot);
	if (idx != UINT32_MAX) {
		*id = idx;
		return 0;
	}
	if (p->nstacks >= MAX_ENTRIES)
		return -E2BIG;
	if ((err = htab_reserve(&p->stack_ht, stack_hash_of, p)) ||
	    (err = array_ensure((void **)&p->stacks, &p->stacks_cap, sizeof(*p->stacks),
				p->nstacks + 1)) ||
	    (err = array_ensure((void **)&p->stack_pool, &p->pool_cap, sizeof(uint32_t),
				p->pool_len + n)))
		return err;
	if (n)
		memcpy(p->stack_pool + p->pool_len, frames, n * sizeof(uint32_t));
	p->stacks[p->nstacks] = (struct stack){ p->pool_len, (uint32_t)n, h };
	p->pool_len += n;
	htab_find(&p->stack_ht, h, stack_eq, p, &k, &slot);
	*slot = (uint32_t)p->nstacks + 1;
	p->stack_ht.used++;
	*id = (uint32_t)p->nstacks++;
	return 0;
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct profile *p = ctx;
	const uint32_t *k = key;

	return p->samples[idx].stack == k[0] && p->samples[idx].labels == k[1];
}

static uint64_t sample_hash_of(const void *ctx, uint32_t idx)
{
	const struct profile *p = ctx;

	return p->samples[idx].hash;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int profile__add(struct profile *p, const uint32_t *frames, size_t nframes,
		 const struct prof_labels *labels, const int64_t *values)
{
	uint32_t key[2], *slot, idx;
	struct sample *s;
	uint64_t h;
	size_t i;
	int err;

	if (!p || !values || (nframes && !frames))
		return -EINVAL;
	if (nframes > PROF_MAX_FRAMES)
		nframes = PROF_MAX_FRAMES;
	for (i = 0; i < nframes; i++)
		if (frames[i] >= p->nframes)
			return -EINVAL;
	err = intern_labels(p, labels, &key[1]);
	if (err)
		return err;
	err = intern_stack(p, frames, nframes, &key[0]);
	if (err)
		return err;
	h = hash_mix(hash_mix(0, key[0]), key[1]);
	idx = htab_find(&p->sample_ht, h, sample_eq, p, key, &slot);
	if (idx == UINT32_MAX) {
		if (p->nsamples >= MAX_ENTRIES)
			return -E2BIG;
		if ((err = htab_reserve(&p->sample_ht, sample_hash_of, p)) ||
		    (err = array_ensure((void **)&p->samples, &p->samples_cap, sizeof(*p->samples),
					p->nsamples + 1)))
			return err;
		p->samples[p->nsamples] = (struct sample){ .stack = key[0],
							   .labels = key[1],
							   .hash = h };
		htab_find(&p->sample_ht, h, sample_eq, p, key, &slot);
		*slot = (uint32_t)p->nsamples + 1;
		p->sample_ht.used++;
		idx = (uint32_t)p->nsamples++;
	}
	s = &p->samples[idx];
	for (i = 0; i < p->opts.nvalues; i++) {
		s->values[i] = sat_add(s->values[i], values[i]);
		p->totals[i] = sat_add(p->totals[i], values[i]);
	}
	return 0;
}

const struct profile_opts *profile__opts(const struct profile *p)
{
	return &p->opts;
}

size_t profile__nframes(const struct profile *p)
{
	return p ? p->nframes : 0;
}

const struct prof_frame_info *profile__frame_info(const struct profile *p, uint32_t id)
{
	return p && id < p->nframes ? &p->frames[id] : NULL;
}

size_t profile__nsamples(const struct profile *p)
{
	return p ? p->nsamples : 0;
}

int profile__sample(const struct profile *p, size_t i, struct prof_sample *out)
{
	const struct sample *s;
	const struct stack *st;

	if (!p || i >= p->nsamples)
		return -ERANGE;
	s = &p->samples[i];
	st = &p->stacks[s->stack];
	out->frames = st->n ? p->stack_pool + st->off : NULL;
	out->nframes = st->n;
	out->labels = &p->labels[s->labels];
	out->values = s->values;
	return 0;
}

int64_t profile__total(const struct profile *p, size_t vi)
{
	return p && vi < PROF_MAX_VALUES ? p->totals[vi] : 0;
}
