// SPDX-License-Identifier: Apache-2.0
/*
 * pprof encoder and decoder, written against profile.proto (github.com/google/pprof,
 * proto/profile.proto) by hand: the message is small, and a hand-written reader lets every
 * length and id be checked against the buffer before it is used.
 *
 * Field numbers used (profile.proto):
 *   Profile: 1 sample_type, 2 sample, 3 mapping, 4 location, 5 function, 6 string_table,
 *            9 time_nanos, 10 duration_nanos, 11 period_type, 12 period
 *   ValueType: 1 type, 2 unit            Sample: 1 location_id, 2 value, 3 label
 *   Label: 1 key, 2 str, 3 num, 4 num_unit
 *   Mapping: 1 id, 2 memory_start, 3 memory_limit, 4 file_offset, 5 filename, 6 build_id,
 *            7 has_functions, 8 has_filenames, 9 has_line_numbers, 10 has_inline_frames
 *   Location: 1 id, 2 mapping_id, 3 address, 4 line, 5 is_folded   Line: 1 function_id, 2 line
 *   Function: 1 id, 2 name, 3 system_name, 4 filename, 5 start_line
 */
#include "profile/pprof.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/array.h"
#include "base/fileio.h"
#include "profile/profile.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* ---- a u64 -> u32 open-addressing map (keys are pprof ids or packed string ids) ---- */

struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* value + 1; 0: empty */
	size_t cap, used;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Returns the value of @key, or -ENOENT. */
static int64_t u64map_get(const struct u64map *m, uint64_t key)
{
	size_t i, mask;

	if (!m->cap)
		return -ENOENT;
	mask = m->cap - 1;
	for (i = mix64(key) & mask; m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			return m->vals[i] - 1;
	return -ENOENT;
}

static void u64map_place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t v)
{
	size_t i, mask = cap - 1;

	for (i = mix64(key) & mask; vals[i]; i = (i + 1) & mask)
		;
	keys[i] = key;
	vals[i] = v;
}

/* Inserts @key -> @val (key must be absent). Returns 0 or -ENOMEM. */
static int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	size_t ncap, i;
	uint64_t *nk;
	uint32_t *nv;

	if ((m->used + 1) * 2 > m->cap) {
		ncap = m->cap ? m->cap * 2 : 64;
		if (ncap > SIZE_MAX / sizeof(*nk))
			return -ENOMEM;
		nk = calloc(ncap, sizeof(*nk));
		nv = calloc(ncap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->vals[i])
				u64map_place(nk, nv, ncap, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	u64map_place(m->keys, m->vals, m->cap, key, val + 1);
	m->used++;
	return 0;
}

/* ---- encoder ---- */

struct pbuf {
	uint8_t *d;
	size_t len, cap;
	int err; /* sticky: the first failure */
};

static bool pb_reserve(struct pbuf *b, size_t n)
{
	if (b->err)
		return false;
	if (n > SIZE_MAX - b->len) {
		b->err = -ENOMEM;
		return false;
	}
	b->err = array_ensure((void **)&b->d, &b->cap, 1, b->len + n);
	return !b->err;
}

static void pb_raw(struct pbuf *b, const void *data, size_t n)
{
	if (!n || !pb_reserve(b, n))
		return;
	memcpy(b->d + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(b, tmp, n);
}

static void pb_key(struct pbuf *b, uint32_t field, int wt)
{
	pb_varint(b, ((uint64_t)field << 3) | (unsigned)wt);
}

/* A varint field; zero is the default and is left out. */
static void pb_uint(struct pbuf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, uint32_t field, const void *data, size_t n)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, n);
	pb_raw(b, data, n);
}

/* Appends @sub as field @field and empties it for reuse. */
static void pb_msg(struct pbuf *b, uint32_t field, struct pbuf *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->d, sub->len);
	sub->len = 0;
}

static void pb_free(struct pbuf *b)
{
	free(b->d);
	memset(b, 0, sizeof(*b));
}

struct enc_mapping {
	uint32_t file, build_id; /* pprof string indexes */
	uint64_t limit;
};

struct enc_function {
	uint32_t name, file;
};

struct enc {
	const struct profile *p;
	struct prof_strset *strs;
	struct u64map map_idx, fn_idx;
	struct enc_mapping *maps;
	size_t nmaps, maps_cap;
	struct enc_function *fns;
	size_t nfns, fns_cap;
	struct pbuf out, sub, sub2;
	uint32_t k_owner, k_process, k_thread, k_language, k_pid, k_tid;
};

static uint32_t enc_str(struct enc *e, const char *s)
{
	int i;

	if (!s || !*s)
		return 0;
	i = prof_strset__add(e->strs, s, strlen(s));
	if (i < 0) {
		if (!e->out.err)
			e->out.err = i;
		return 0;
	}
	return (uint32_t)i;
}

/* Returns the 1-based Mapping id of the frame, or 0 for none. */
static uint64_t enc_mapping(struct enc *e, const struct prof_frame_info *f)
{
	uint32_t file, build_id;
	uint64_t key;
	int64_t idx;
	int err;

	if (!(f->mapping && *f->mapping) && !(f->build_id && *f->build_id))
		return 0;
	file = enc_str(e, f->mapping);
	build_id = enc_str(e, f->build_id);
	key = ((uint64_t)file << 32) | build_id;
	idx = u64map_get(&e->map_idx, key);
	if (idx < 0) {
		err = array_ensure((void **)&e->maps, &e->maps_cap, sizeof(*e->maps), e->nmaps + 1);
		if (!err)
			err = u64map_put(&e->map_idx, key, (uint32_t)e->nmaps);
		if (err) {
			e->out.err = err;
			return 0;
		}
		e->maps[e->nmaps] = (struct enc_mapping){ file, build_id, 0 };
		idx = (int64_t)e->nmaps++;
	}
	if (f->address >= e->maps[idx].limit)
		e->maps[idx].limit = f->address == UINT64_MAX ? UINT64_MAX : f->address + 1;
	return (uint64_t)idx + 1;
}

static uint64_t enc_function(struct enc *e, uint32_t name, uint32_t file)
{
	uint64_t key = ((uint64_t)name << 32) | file;
	int64_t idx;
	int err;

	idx = u64map_get(&e->fn_idx, key);
	if (idx >= 0)
		return (uint64_t)idx + 1;
	err = array_ensure((void **)&e->fns, &e->fns_cap, sizeof(*e->fns), e->nfns + 1);
	if (!err)
		err = u64map_put(&e->fn_idx, key, (uint32_t)e->nfns);
	if (err) {
		e->out.err = err;
		return 0;
	}
	e->fns[e->nfns] = (struct enc_function){ name, file };
	return ++e->nfns;
}

static void enc_locations(struct enc *e)
{
	const struct prof_frame_info *f;
	char disp[512];
	uint64_t flags, fn;
	uint32_t name;
	size_t i, n = profile__nframes(e->p);

	for (i = 0; i < n && !e->out.err; i++) {
		f = profile__frame_info(e->p, (uint32_t)i);
		flags = f->unnamed_stripped ? PPROF_LOC_STRIPPED : 0;
		if (f->function && *f->function) {
			name = enc_str(e, f->function);
		} else {
			name = enc_str(e, profile_frame_display(f, disp, sizeof(disp)));
			flags |= PPROF_LOC_SYNTH_NAME;
		}
		fn = enc_function(e, name, enc_str(e, f->file));
		pb_uint(&e->sub, 1, i + 1);
		pb_uint(&e->sub, 2, enc_mapping(e, f));
		pb_uint(&e->sub, 3, f->address);
		pb_uint(&e->sub2, 1, fn);
		pb_uint(&e->sub2, 2, f->line);
		pb_msg(&e->sub, 4, &e->sub2);
		/* Always written, even for native: a reader then never guesses (kernel mapping). */
		pb_key(&e->sub, PPROF_LOCATION_LANG, WT_VARINT);
		pb_varint(&e->sub, f->lang);
		pb_uint(&e->sub, PPROF_LOCATION_FLAGS, flags);
		pb_msg(&e->out, 4, &e->sub);
	}
}

static void enc_str_label(struct enc *e, uint32_t key, const char *val)
{
	if (!val)
		return;
	pb_uint(&e->sub2, 1, key);
	pb_uint(&e->sub2, 2, enc_str(e, val));
	pb_msg(&e->sub, 3, &e->sub2);
}

static void enc_num_label(struct enc *e, uint32_t key, uint64_t val)
{
	if (!val)
		return;
	pb_uint(&e->sub2, 1, key);
	pb_uint(&e->sub2, 3, val);
	pb_msg(&e->sub, 3, &e->sub2);
}

static void enc_samples(struct enc *e)
{
	const struct profile_opts *o = profile__opts(e->p);
	size_t i, j, n = profile__nsamples(e->p);
	struct prof_sample s;

	for (i = 0; i < n && !e->out.err; i++) {
		profile__sample(e->p, i, &s);
		for (j = 0; j < s.nframes; j++)
			pb_varint(&e->sub2, (uint64_t)s.frames[j] + 1);
		if (s.nframes)
			pb_msg(&e->sub, 1, &e->sub2);
		for (j = 0; j < o->nvalues; j++)
			pb_varint(&e->sub2, (uint64_t)s.values[j]);
		pb_msg(&e->sub, 2, &e->sub2);
		enc_str_label(e, e->k_owner, s.labels->owner);
		enc_str_label(e, e->k_process, s.labels->process);
		enc_str_label(e, e->k_thread, s.labels->thread);
		enc_str_label(e, e->k_language, prof_lang_name(s.labels->lang));
		enc_num_label(e, e->k_pid, s.labels->pid);
		enc_num_label(e, e->k_tid, s.labels->tid);
		pb_msg(&e->out, 2, &e->sub);
	}
}

static void enc_value_type(struct enc *e, uint32_t field, const char *type, const char *unit)
{
	pb_uint(&e->sub, 1, enc_str(e, type));
	pb_uint(&e->sub, 2, enc_str(e, unit));
	pb_msg(&e->out, field, &e->sub);
}

static int gzip_buf(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z = { 0 };
	uint8_t *buf;
	size_t cap;
	int ret;

	if (len > UINT_MAX)
		return -E2BIG;
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)len) + 64;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)(cap > UINT_MAX ? UINT_MAX : cap);
	ret = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*out_len = z.total_out;
	return 0;
}

int pprof_encode(const struct profile *p, uint8_t **out, size_t *out_len)
{
	const struct profile_opts *o;
	struct enc e = { .p = p };
	size_t i;
	int err;

	if (!p || !out || !out_len)
		return -EINVAL;
	o = profile__opts(p);
	err = prof_strset__new(&e.strs);
	if (err)
		return err;
	prof_strset__add(e.strs, "", 0);
	e.k_owner = enc_str(&e, "owner");
	e.k_process = enc_str(&e, "process");
	e.k_thread = enc_str(&e, "thread");
	e.k_language = enc_str(&e, "language");
	e.k_pid = enc_str(&e, "pid");
	e.k_tid = enc_str(&e, "tid");

	for (i = 0; i < o->nvalues; i++)
		enc_value_type(&e, 1, o->sample_type[i], o->sample_unit[i]);
	enc_samples(&e);
	enc_locations(&e);
	for (i = 0; i < e.nmaps; i++) {
		pb_uint(&e.sub, 1, i + 1);
		pb_uint(&e.sub, 3, e.maps[i].limit);
		pb_uint(&e.sub, 5, e.maps[i].file);
		pb_uint(&e.sub, 6, e.maps[i].build_id);
		pb_uint(&e.sub, 7, 1);
		pb_msg(&e.out, 3, &e.sub);
	}
	for (i = 0; i < e.nfns; i++) {
		pb_uint(&e.sub, 1, i + 1);
		pb_uint(&e.sub, 2, e.fns[i].name);
		pb_uint(&e.sub, 3, e.fns[i].name);
		pb_uint(&e.sub, 4, e.fns[i].file);
		pb_msg(&e.out, 5, &e.sub);
	}
	pb_uint(&e.out, 9, (uint64_t)o->time_nanos);
	pb_uint(&e.out, 10, (uint64_t)o->duration_nanos);
	if (o->period_type)
		enc_value_type(&e, 11, o->period_type, o->period_unit);
	pb_uint(&e.out, 12, (uint64_t)o->period);
	/* The string table goes last: every index above is final by now. */
	for (i = 0; i < prof_strset__count(e.strs); i++)
		pb_bytes(&e.out, 6, prof_strset__str(e.strs, (uint32_t)i),
			 prof_strset__len(e.strs, (uint32_t)i));

	err = e.out.err ? e.out.err : e.sub.err ? e.sub.err : e.sub2.err;
	if (!err)
		err = gzip_buf(e.out.d, e.out.len, out, out_len);
	pb_free(&e.out);
	pb_free(&e.sub);
	pb_free(&e.sub2);
	u64map_free(&e.map_idx);
	u64map_free(&e.fn_idx);
	free(e.maps);
	free(e.fns);
	prof_strset__free(e.strs);
	return err;
}

int pprof_write_file(const struct profile *p, const char *path)
{
	uint8_t *buf;
	size_t len;
	int err;

	err = pprof_encode(p, &buf, &len);
	if (err)
		return err;
	err = atomic_write_buf(path, buf, len);
	free(buf);
	return err;
}

/* ---- decoder ---- */

struct rd {
	const uint8_t *p, *end;
};

/* Any malformed varint (cut off, longer than 64 bits) is -EINVAL, as every decoder error. */
static int rd_varint(struct rd *r, uint64_t *v)
{
	return leb128_u64(&r->p, r->end, v) ? -EINVAL : 0;
}

struct field {
	uint32_t num;
	int wt;
	uint64_t v;    /* WT_VARINT, WT_I64, WT_I32 */
	struct rd sub; /* WT_LEN */
};

/* Reads one field; a length-delimited one is checked against the buffer. */
static int rd_field(struct rd *r, struct field *f)
{
	uint64_t key, len;
	int err;

	err = rd_varint(r, &key);
	if (err)
		return err;
	if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return -EINVAL;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	switch (f->wt) {
	case WT_VARINT:
		return rd_varint(r, &f->v);
	case WT_I64:
		if (r->end - r->p < 8)
			return -EINVAL;
		memcpy(&f->v, r->p, 8);
		r->p += 8;
		return 0;
	case WT_I32:
		if (r->end - r->p < 4)
			return -EINVAL;
		f->v = (uint64_t)r->p[0] | (uint64_t)r->p[1] << 8 | (uint64_t)r->p[2] << 16 |
		       (uint64_t)r->p[3] << 24;
		r->p += 4;
		return 0;
	case WT_LEN:
		err = rd_varint(r, &len);
		if (err)
			return err;
		if (len > (uint64_t)(r->end - r->p))
			return -EINVAL;
		f->sub.p = r->p;
		f->sub.end = r->p + len;
		r->p += len;
		return 0;
	default:
		return -EINVAL; /* groups (3, 4) and 6, 7 */
	}
}

/* The value of a singular varint field, or -EINVAL for another wire type. */
static int want_varint(const struct field *f, uint64_t *v)
{
	if (f->wt != WT_VARINT)
		return -EINVAL;
	*v = f->v;
	return 0;
}

typedef int (*scalar_fn_t)(void *ctx, uint64_t v);

/* A repeated varint field, packed (one WT_LEN) or not: calls @fn per value. */
static int each_varint(const struct field *f, scalar_fn_t fn, void *ctx)
{
	struct rd r;
	uint64_t v;
	int err;

	if (f->wt == WT_VARINT)
		return fn(ctx, f->v);
	if (f->wt != WT_LEN)
		return -EINVAL;
	r = f->sub;
	while (r.p < r.end) {
		err = rd_varint(&r, &v);
		if (!err)
			err = fn(ctx, v);
		if (err)
			return err;
	}
	return 0;
}

struct slice {
	const uint8_t *p;
	size_t n;
};

struct slices {
	struct slice *v;
	size_t n, cap;
};

static int slices_add(struct slices *s, const struct rd *r)
{
	int err;

	if (s->n >= PPROF_MAX_ENTRIES)
		return -EFBIG;
	err = array_ensure((void **)&s->v, &s->cap, sizeof(*s->v), s->n + 1);
	if (err)
		return err;
	s->v[s->n++] = (struct slice){ r->p, (size_t)(r->end - r->p) };
	return 0;
}

static struct rd slice_rd(const struct slice *s)
{
	return (struct rd){ s->p, s->p + s->n };
}

struct dec_function {
	uint64_t id;
	uint64_t name, file;
};

struct dec_mapping {
	uint64_t id, start, limit, offset;
	uint64_t file, build_id;
};

struct dec_line {
	uint64_t function_id;
	int64_t line;
};

struct dec_location {
	uint64_t id, mapping_id, address;
	size_t line_off, nlines;
	uint64_t lang; /* UINT64_MAX: not marked */
	uint64_t flags;
	size_t frame_off, nframes; /* into dec.loc_frames */
};

struct dec {
	const struct pprof_decode_opts *opts;
	struct slices sample_types, samples, mappings, locations, functions, strings;
	struct slice period_type;
	bool has_period_type;
	uint64_t time_nanos, duration_nanos, period;

	char **strs; /* NUL-terminated copies of the string table */
	char *str_arena;
	size_t nstrs;

	struct dec_function *fns;
	struct dec_mapping *maps;
	struct dec_location *locs;
	struct dec_line *lines;
	size_t nlines, lines_cap;
	struct u64map fn_idx, map_idx, loc_idx;

	uint32_t *loc_frames;
	size_t nloc_frames, loc_frames_cap;

	size_t nentries; /* entries of every kind so far, PPROF_MAX_TOTAL_ENTRIES at most */
	size_t nst;	 /* sample types in the message */
	size_t sel[PROF_MAX_VALUES], nsel;
	struct profile *prof;

	/* per-sample scratch */
	uint32_t frames[PROF_MAX_FRAMES];
	size_t nframes;
	int64_t values[PROF_MAX_VALUES];
	size_t nvalues;
};

static void dec_free(struct dec *d)
{
	free(d->sample_types.v);
	free(d->samples.v);
	free(d->mappings.v);
	free(d->locations.v);
	free(d->functions.v);
	free(d->strings.v);
	free(d->strs);
	free(d->str_arena);
	free(d->fns);
	free(d->maps);
	free(d->locs);
	free(d->lines);
	free(d->loc_frames);
	u64map_free(&d->fn_idx);
	u64map_free(&d->map_idx);
	u64map_free(&d->loc_idx);
	profile__free(d->prof);
}

static int dec_top(struct dec *d, struct rd r)
{
	struct field f;
	int err = 0;

	while (r.p < r.end && !err) {
		err = rd_field(&r, &f);
		if (err)
			return err;
		switch (f.num) {
		case 1:
		case 2:
		case 3:
		case 4:
		case 5:
		case 6:
		case 11:
			if (f.wt != WT_LEN)
				return -EINVAL;
			break;
		case 9:
		case 10:
		case 12:
			if (f.wt != WT_VARINT)
				return -EINVAL;
			break;
		}
		if (f.num >= 1 && f.num <= 6 && ++d->nentries > PPROF_MAX_TOTAL_ENTRIES)
			return -EFBIG;
		switch (f.num) {
		case 1:
			err = slices_add(&d->sample_types, &f.sub);
			break;
		case 2:
			err = slices_add(&d->samples, &f.sub);
			break;
		case 3:
			err = slices_add(&d->mappings, &f.sub);
			break;
		case 4:
			err = slices_add(&d->locations, &f.sub);
			break;
		case 5:
			err = slices_add(&d->functions, &f.sub);
			break;
		case 6:
			err = slices_add(&d->strings, &f.sub);
			break;
		case 9:
			d->time_nanos = f.v;
			break;
		case 10:
			d->duration_nanos = f.v;
			break;
		case 11:
			d->period_type = (struct slice){ f.sub.p, (size_t)(f.sub.end - f.sub.p) };
			d->has_period_type = true;
			break;
		case 12:
			d->period = f.v;
			break;
		default:
			break; /* drop_frames, keep_frames, comment, ...: not kept */
		}
	}
	return err;
}

static int dec_strings(struct dec *d)
{
	size_t i, total = 0;
	char *a;

	/* Go requires string_table[0] == "": every absent string field points at it. */
	if (!d->strings.n || d->strings.v[0].n)
		return -EINVAL;
	for (i = 0; i < d->strings.n; i++)
		total += d->strings.v[i].n + 1; /* bounded by the input size */
	if (total > PPROF_MAX_STRING_BYTES)
		return -EFBIG;
	d->strs = calloc(d->strings.n, sizeof(*d->strs));
	d->str_arena = malloc(total);
	if (!d->strs || !d->str_arena)
		return -ENOMEM;
	a = d->str_arena;
	for (i = 0; i < d->strings.n; i++) {
		memcpy(a, d->strings.v[i].p, d->strings.v[i].n);
		a[d->strings.v[i].n] = '\0';
		d->strs[i] = a;
		a += d->strings.v[i].n + 1;
	}
	d->nstrs = d->strings.n;
	return 0;
}

static int check_str(const struct dec *d, uint64_t idx)
{
	return idx < d->nstrs ? 0 : -EINVAL;
}

/* The string at a checked index; "" (index 0 or an empty string) is returned as NULL. */
static const char *dec_str(const struct dec *d, uint64_t idx)
{
	return idx < d->nstrs && d->strs[idx][0] ? d->strs[idx] : NULL;
}

static int dec_value_type(const struct dec *d, struct slice s, uint64_t *type, uint64_t *unit)
{
	struct rd r = slice_rd(&s);
	struct field f;
	int err;

	*type = *unit = 0;
	while (r.p < r.end) {
		err = rd_field(&r, &f);
		if (!err && f.num == 1)
			err = want_varint(&f, type);
		else if (!err && f.num == 2)
			err = want_varint(&f, unit);
		if (err)
			return err;
	}
	return check_str(d, *type) || check_str(d, *unit) ? -EINVAL : 0;
}

/* A varint field of a message and where it goes in the decoded struct; PB_SKIP: checked, dropped. */
#define PB_SKIP SIZE_MAX
struct pb_varint {
	uint32_t num;
	size_t off;
};

/*
 * Reads the fields of one message into @obj by @tab; a field in the table must be a varint.
 * @other, when set, takes the fields the table does not name (sub-messages); any other field is
 * skipped.
 */
static int dec_fields(struct rd r, const struct pb_varint *tab, size_t n, void *obj,
		      int (*other)(struct dec *d, const struct field *f), struct dec *d)
{
	struct field f;
	uint64_t dummy;
	size_t i;
	int err;

	while (r.p < r.end) {
		err = rd_field(&r, &f);
		if (err)
			return err;
		for (i = 0; i < n && tab[i].num != f.num; i++)
			;
		if (i < n)
			err = want_varint(&f, tab[i].off == PB_SKIP ?
						      &dummy :
						      (uint64_t *)((char *)obj + tab[i].off));
		else if (other)
			err = other(d, &f);
		if (err)
			return err;
	}
	return 0;
}

static int dec_functions(struct dec *d)
{
	static const struct pb_varint tab[] = {
		{ 1, offsetof(struct dec_function, id) },
		{ 2, offsetof(struct dec_function, name) },
		{ 3, PB_SKIP },
		{ 4, offsetof(struct dec_function, file) },
		{ 5, PB_SKIP },
	};
	struct dec_function *fn;
	size_t i;
	int err;

	d->fns = calloc(d->functions.n ? d->functions.n : 1, sizeof(*d->fns));
	if (!d->fns)
		return -ENOMEM;
	for (i = 0; i < d->functions.n; i++) {
		fn = &d->fns[i];
		err = dec_fields(slice_rd(&d->functions.v[i]), tab, ARRAY_SIZE(tab), fn, NULL, d);
		if (err)
			return err;
		if (!fn->id || check_str(d, fn->name) || check_str(d, fn->file) ||
		    u64map_get(&d->fn_idx, fn->id) >= 0)
			return -EINVAL;
		err = u64map_put(&d->fn_idx, fn->id, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

static int dec_mappings(struct dec *d)
{
	static const struct pb_varint tab[] = {
		{ 1, offsetof(struct dec_mapping, id) },
		{ 2, offsetof(struct dec_mapping, start) },
		{ 3, offsetof(struct dec_mapping, limit) },
		{ 4, offsetof(struct dec_mapping, offset) },
		{ 5, offsetof(struct dec_mapping, file) },
		{ 6, offsetof(struct dec_mapping, build_id) },
		{ 7, PB_SKIP },
		{ 8, PB_SKIP },
		{ 9, PB_SKIP },
		{ 10, PB_SKIP },
	};
	struct dec_mapping *m;
	size_t i;
	int err;

	d->maps = calloc(d->mappings.n ? d->mappings.n : 1, sizeof(*d->maps));
	if (!d->maps)
		return -ENOMEM;
	for (i = 0; i < d->mappings.n; i++) {
		m = &d->maps[i];
		err = dec_fields(slice_rd(&d->mappings.v[i]), tab, ARRAY_SIZE(tab), m, NULL, d);
		if (err)
			return err;
		if (!m->id || check_str(d, m->file) || check_str(d, m->build_id) ||
		    u64map_get(&d->map_idx, m->id) >= 0)
			return -EINVAL;
		err = u64map_put(&d->map_idx, m->id, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

static int dec_line(struct dec *d, struct rd r)
{
	/* line is an int64 read as its two's-complement varint */
	static const struct pb_varint tab[] = {
		{ 1, offsetof(struct dec_line, function_id) },
		{ 2, offsetof(struct dec_line, line) },
	};
	struct dec_line ln = { 0 };
	int err;

	err = dec_fields(r, tab, ARRAY_SIZE(tab), &ln, NULL, d);
	if (err)
		return err;
	if (ln.function_id && u64map_get(&d->fn_idx, ln.function_id) < 0)
		return -EINVAL;
	if (d->nlines >= PPROF_MAX_ENTRIES || ++d->nentries > PPROF_MAX_TOTAL_ENTRIES)
		return -EFBIG;
	err = array_ensure((void **)&d->lines, &d->lines_cap, sizeof(*d->lines), d->nlines + 1);
	if (err)
		return err;
	d->lines[d->nlines++] = ln;
	return 0;
}

/* Location.line (4) is a sub-message; the other fields are dec_locations()' table. */
static int dec_location_line(struct dec *d, const struct field *f)
{
	if (f->num != 4)
		return 0;
	return f->wt == WT_LEN ? dec_line(d, f->sub) : -EINVAL;
}

static int dec_locations(struct dec *d)
{
	static const struct pb_varint tab[] = {
		{ 1, offsetof(struct dec_location, id) },
		{ 2, offsetof(struct dec_location, mapping_id) },
		{ 3, offsetof(struct dec_location, address) },
		{ 5, PB_SKIP },
		{ PPROF_LOCATION_LANG, offsetof(struct dec_location, lang) },
		{ PPROF_LOCATION_FLAGS, offsetof(struct dec_location, flags) },
	};
	struct dec_location *l;
	size_t i;
	int err;

	d->locs = calloc(d->locations.n ? d->locations.n : 1, sizeof(*d->locs));
	if (!d->locs)
		return -ENOMEM;
	for (i = 0; i < d->locations.n; i++) {
		l = &d->locs[i];
		l->lang = UINT64_MAX;
		l->line_off = d->nlines;
		err = dec_fields(slice_rd(&d->locations.v[i]), tab, ARRAY_SIZE(tab), l,
				 dec_location_line, d);
		if (err)
			return err;
		l->nlines = d->nlines - l->line_off;
		if (!l->id || (l->mapping_id && u64map_get(&d->map_idx, l->mapping_id) < 0) ||
		    u64map_get(&d->loc_idx, l->id) >= 0)
			return -EINVAL;
		err = u64map_put(&d->loc_idx, l->id, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

static bool kernel_mapping(const char *m)
{
	const char *base;

	if (!m)
		return false;
	base = strrchr(m, '/');
	base = base ? base + 1 : m;
	return !strncmp(m, "[kernel", 7) || !strncmp(base, "vmlinux", 7);
}

/* Interns the frames of every location, innermost inlined function first. */
static int dec_loc_frames(struct dec *d)
{
	struct prof_frame_info fi;
	const struct dec_mapping *m;
	const struct dec_function *fn;
	struct dec_location *l;
	struct dec_line *ln;
	size_t i, j, n;
	int64_t mi, id;
	int err;

	for (i = 0; i < d->locations.n; i++) {
		l = &d->locs[i];
		memset(&fi, 0, sizeof(fi));
		m = NULL;
		if (l->mapping_id) {
			mi = u64map_get(&d->map_idx, l->mapping_id);
			m = &d->maps[mi];
			fi.mapping = dec_str(d, m->file);
			fi.build_id = dec_str(d, m->build_id);
		}
		fi.address = l->address;
		if (m && m->limit > m->start && l->address >= m->start && l->address < m->limit)
			fi.address = l->address - m->start + m->offset;
		if (l->lang < PROF_LANG_COUNT)
			fi.lang = (enum prof_lang)l->lang;
		else if (kernel_mapping(fi.mapping))
			fi.lang = PROF_LANG_KERNEL;
		else
			fi.lang = d->opts->default_lang;
		fi.unnamed_stripped = l->flags & PPROF_LOC_STRIPPED;
		n = l->nlines ? l->nlines : 1;
		err = array_ensure((void **)&d->loc_frames, &d->loc_frames_cap,
				   sizeof(*d->loc_frames), d->nloc_frames + n);
		if (err)
			return err;
		l->frame_off = d->nloc_frames;
		l->nframes = n;
		for (j = 0; j < n; j++) {
			fi.function = fi.file = NULL;
			fi.line = 0;
			if (l->nlines) {
				ln = &d->lines[l->line_off + j];
				if (ln->function_id) {
					fn = &d->fns[u64map_get(&d->fn_idx, ln->function_id)];
					fi.function = dec_str(d, fn->name);
					fi.file = dec_str(d, fn->file);
				}
				fi.line = ln->line > 0 && ln->line <= UINT32_MAX ?
						  (uint32_t)ln->line :
						  0;
			}
			if (l->flags & PPROF_LOC_SYNTH_NAME)
				fi.function = NULL;
			id = profile__frame(d->prof, &fi);
			if (id < 0)
				return (int)id;
			d->loc_frames[d->nloc_frames++] = (uint32_t)id;
		}
	}
	return 0;
}

static int sample_loc(void *ctx, uint64_t id)
{
	struct dec *d = ctx;
	const struct dec_location *l;
	int64_t li = u64map_get(&d->loc_idx, id);
	size_t j;

	if (li < 0)
		return -EINVAL;
	l = &d->locs[li];
	/* Deeper stacks are cut at the root end, as profile__add() does. */
	for (j = 0; j < l->nframes && d->nframes < PROF_MAX_FRAMES; j++)
		d->frames[d->nframes++] = d->loc_frames[l->frame_off + j];
	return 0;
}

static int sample_value(void *ctx, uint64_t v)
{
	struct dec *d = ctx;
	size_t i;

	if (d->nvalues >= d->nst)
		return -EINVAL;
	for (i = 0; i < d->nsel; i++)
		if (d->sel[i] == d->nvalues)
			d->values[i] = (int64_t)v;
	d->nvalues++;
	return 0;
}

struct dec_label {
	uint64_t key, str, num, unit;
};

static int dec_label(struct dec *d, struct rd r, struct prof_labels *lb)
{
	static const struct pb_varint tab[] = {
		{ 1, offsetof(struct dec_label, key) },
		{ 2, offsetof(struct dec_label, str) },
		{ 3, offsetof(struct dec_label, num) },
		{ 4, offsetof(struct dec_label, unit) },
	};
	struct dec_label lab = { 0 };
	const char *k, *s;
	int err, lang;

	err = dec_fields(r, tab, ARRAY_SIZE(tab), &lab, NULL, d);
	if (err)
		return err;
	if (check_str(d, lab.key) || check_str(d, lab.str) || check_str(d, lab.unit))
		return -EINVAL;
	k = d->strs[lab.key];
	s = dec_str(d, lab.str);
	if (!strcmp(k, "owner")) {
		lb->owner = s;
	} else if (!strcmp(k, "process")) {
		lb->process = s;
	} else if (!strcmp(k, "thread")) {
		lb->thread = s;
	} else if (!strcmp(k, "language")) {
		lang = s ? prof_lang_parse(s) : -EINVAL;
		if (lang >= 0)
			lb->lang = (enum prof_lang)lang;
	} else if (!strcmp(k, "pid") && lab.num <= UINT32_MAX) {
		lb->pid = (uint32_t)lab.num;
	} else if (!strcmp(k, "tid") && lab.num <= UINT32_MAX) {
		lb->tid = (uint32_t)lab.num;
	}
	return 0;
}

static int dec_samples(struct dec *d)
{
	struct prof_labels lb;
	struct field f;
	struct rd r;
	size_t i;
	int err;

	for (i = 0; i < d->samples.n; i++) {
		memset(&lb, 0, sizeof(lb));
		lb.lang = d->opts->default_lang;
		d->nframes = 0;
		d->nvalues = 0;
		memset(d->values, 0, sizeof(d->values));
		r = slice_rd(&d->samples.v[i]);
		while (r.p < r.end) {
			err = rd_field(&r, &f);
			if (err)
				return err;
			switch (f.num) {
			case 1:
				err = each_varint(&f, sample_loc, d);
				break;
			case 2:
				err = each_varint(&f, sample_value, d);
				break;
			case 3:
				err = f.wt == WT_LEN ? dec_label(d, f.sub, &lb) : -EINVAL;
				break;
			}
			if (err)
				return err;
		}
		if (d->nvalues != d->nst)
			return -EINVAL;
		err = profile__add(d->prof, d->frames, d->nframes, &lb, d->values);
		if (err)
			return err;
	}
	return 0;
}

/* Chooses the kept sample types and creates the profile. */
static int dec_profile(struct dec *d)
{
	uint64_t types[PROF_MAX_VALUES], units[PROF_MAX_VALUES], t, u;
	struct profile_opts po = { 0 };
	size_t i, j;
	int err;

	d->nst = d->sample_types.n;
	if (!d->nst) {
		if (d->samples.n)
			return -EINVAL;
	} else if (d->opts->sample_types[0]) {
		for (i = 0; i < PROF_MAX_VALUES && d->opts->sample_types[i]; i++) {
			for (j = 0; j < d->nst; j++) {
				err = dec_value_type(d, d->sample_types.v[j], &t, &u);
				if (err)
					return err;
				if (!strcmp(d->strs[t], d->opts->sample_types[i]))
					break;
			}
			if (j == d->nst)
				return -ENOENT;
			d->sel[d->nsel++] = j;
		}
	} else {
		for (i = d->nst > PROF_MAX_VALUES ? d->nst - PROF_MAX_VALUES : 0; i < d->nst; i++)
			d->sel[d->nsel++] = i;
	}
	for (i = 0; i < d->nst; i++) {
		err = dec_value_type(d, d->sample_types.v[i], &t, &u);
		if (err)
			return err;
	}
	for (i = 0; i < d->nsel; i++) {
		err = dec_value_type(d, d->sample_types.v[d->sel[i]], &types[i], &units[i]);
		if (err)
			return err;
		po.sample_type[i] = d->strs[types[i]];
		po.sample_unit[i] = d->strs[units[i]];
	}
	po.nvalues = d->nsel;
	if (d->has_period_type) {
		err = dec_value_type(d, d->period_type, &t, &u);
		if (err)
			return err;
		po.period_type = d->strs[t];
		po.period_unit = d->strs[u];
	}
	po.period = (int64_t)d->period;
	po.time_nanos = (int64_t)d->time_nanos;
	po.duration_nanos = (int64_t)d->duration_nanos;
	po.owner_root = d->opts->owner_root;
	return profile__new(&po, &d->prof);
}

static int gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
	z_stream z = { 0 };
	uint8_t *buf = NULL, *nb;
	size_t cap, used = 0, left = len, chunk;
	int ret, err;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	cap = len < (1u << 20) ? (1u << 16) : len * 2;
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	z.next_in = (Bytef *)in;
	for (;;) {
		if (used == cap) {
			if (cap > max) {
				err = -EFBIG;
				goto out;
			}
			cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		if (!z.avail_in && left) {
			chunk = left > UINT_MAX ? UINT_MAX : left;
			z.avail_in = (uInt)chunk;
			left -= chunk;
		}
		chunk = cap - used > UINT_MAX ? UINT_MAX : cap - used;
		z.next_out = buf + used;
		z.avail_out = (uInt)chunk;
		ret = inflate(&z, Z_NO_FLUSH);
		used += chunk - z.avail_out;
		if (used > max) {
			err = -EFBIG;
			goto out;
		}
		if (ret == Z_STREAM_END) {
			/* A concatenated member continues the stream, as gzip readers expect. The
			 * rest of the input is contiguous from next_in. */
			if (!z.avail_in && !left)
				break;
			if (z.avail_in + left < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b ||
			    inflateReset(&z) != Z_OK) {
				err = -EINVAL;
				goto out;
			}
			continue;
		}
		if (ret == Z_MEM_ERROR) {
			err = -ENOMEM;
			goto out;
		}
		if (ret == Z_BUF_ERROR && !z.avail_in && !left) {
			err = -EINVAL; /* truncated */
			goto out;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			err = -EINVAL;
			goto out;
		}
	}
	*out = buf;
	*out_len = used;
	buf = NULL;
	err = 0;
out:
	inflateEnd(&z);
	free(buf);
	return err;
}

int pprof_decode_ext(const void *buf, size_t len, const struct pprof_decode_opts *opts,
		     struct profile **out)
{
	static const struct pprof_decode_opts defaults;
	const uint8_t *b = buf;
	uint8_t *raw = NULL;
	size_t raw_len, max;
	struct dec d;
	int err;

	if ((!buf && len) || !out)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	if ((unsigned)opts->default_lang >= PROF_LANG_COUNT)
		return -EINVAL;
	max = opts->max_decoded && opts->max_decoded < PPROF_MAX_DECODED ? opts->max_decoded :
									   PPROF_MAX_DECODED;
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		err = gunzip(b, len, max, &raw, &raw_len);
		if (err)
			return err;
		b = raw;
		len = raw_len;
	} else if (len > max) {
		return -EFBIG;
	}
	memset(&d, 0, sizeof(d));
	d.opts = opts;
	err = dec_top(&d, (struct rd){ b, b + len });
	if (!err)
		err = dec_strings(&d);
	if (!err)
		err = dec_profile(&d);
	if (!err)
		err = dec_functions(&d);
	if (!err)
		err = dec_mappings(&d);
	if (!err)
		err = dec_locations(&d);
	if (!err)
		err = dec_loc_frames(&d);
	if (!err)
		err = dec_samples(&d);
	if (!err) {
		*out = d.prof;
		d.prof = NULL;
	}
	dec_free(&d);
	free(raw);
	return err;
}

int pprof_decode(const void *buf, size_t len, struct profile **out)
{
	return pprof_decode_ext(buf, len, NULL, out);
}
