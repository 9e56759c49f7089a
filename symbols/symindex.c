// SPDX-License-Identifier: Apache-2.0
#include "symbols/symindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/text.h"

#define MAGIC "SOSYMIX"
#define VERSION 1
#define HDR_FIXED 48u
#define ENTRY_SIZE 16u
#define CUT_MARK "..."

struct bent {
	uint64_t start, size;
	uint32_t name; /* offset in names */
	uint8_t flags;
};

struct symindex_build {
	char build_id[SYMINDEX_BUILD_ID_MAX + 1];
	size_t max;
	struct bent *ents;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	bool sealed;
};

struct symindex {
	uint8_t *data; /* the checked copy of the encoding */
	size_t len;
	const uint8_t *ents;
	const char *strtab;
	size_t n;
	struct symindex_info info;
};

bool symindex_valid_build_id(const char *s)
{
	size_t i;

	if (!s)
		return false;
	for (i = 0; s[i]; i++)
		if (i >= SYMINDEX_BUILD_ID_MAX ||
		    !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i >= 2 && !(i % 2);
}

int symindex_build__new(const char *build_id, size_t max_functions, struct symindex_build **out)
{
	struct symindex_build *b;

	if (!out || !symindex_valid_build_id(build_id))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	strcpy(b->build_id, build_id);
	b->max = max_functions ? max_functions : SYMINDEX_DEFAULT_MAX_FUNCTIONS;
	b->sealed = true; /* empty: nothing to resolve */
	*out = b;
	return 0;
}

void symindex_build__free(struct symindex_build *b)
{
	if (!b)
		return;
	free(b->ents);
	free(b->names);
	free(b);
}

/* Appends @name (cut to SYMINDEX_NAME_MAX with CUT_MARK, made valid UTF-8) to b->names. */
static int add_name(struct symindex_build *b, const char *name, size_t len, uint32_t *off)
{
	size_t need = SYMINDEX_NAME_MAX + 1, n;
	char *dst;

	if (b->names_len + need > SYMINDEX_MAX_BYTES)
		return -E2BIG;
	if (array_ensure((void **)&b->names, &b->names_cap, 1, b->names_len + need))
		return -ENOMEM;
	dst = b->names + b->names_len;
	if (len <= SYMINDEX_NAME_MAX) {
		n = text_utf8_sanitize_copy(dst, len + 1, name, len);
	} else {
		n = text_utf8_sanitize_copy(dst, SYMINDEX_NAME_MAX - sizeof(CUT_MARK) + 2, name,
					    len);
		memcpy(dst + n, CUT_MARK, sizeof(CUT_MARK));
		n += sizeof(CUT_MARK) - 1;
	}
	*off = (uint32_t)b->names_len;
	b->names_len += n + 1;
	return 0;
}

int symindex_build__add(struct symindex_build *b, uint64_t start, uint64_t size, const char *name,
			size_t name_len, unsigned flags)
{
	struct bent *e;
	uint32_t off;
	int err;

	if (!b || !name || !start || start == UINT64_MAX)
		return -EINVAL;
	name_len = strnlen(name, name_len);
	if (!name_len)
		return -EINVAL;
	if (b->n >= b->max)
		return -E2BIG;
	if (array_ensure((void **)&b->ents, &b->cap, sizeof(*b->ents), b->n + 1))
		return -ENOMEM;
	err = add_name(b, name, name_len, &off);
	if (err)
		return err;
	if (!size)
		size = 1;
	if (size > UINT64_MAX - start)
		size = UINT64_MAX - start;
	e = &b->ents[b->n++];
	*e = (struct bent){ .start = start, .size = size, .name = off, .flags = (uint8_t)flags };
	b->sealed = false;
	return 0;
}

static unsigned bind_rank(unsigned flags)
{
	return flags & SYMINDEX_GLOBAL ? 0 : flags & SYMINDEX_WEAK ? 1 : 2;
}

/* Sort order: start, then the preferred function first (the header's rule). */
static int cmp_ent(const void *pa, const void *pb, void *ctx)
{
	const struct bent *a = pa, *b = pb;
	const char *names = ctx;
	unsigned ua = a->flags & SYMINDEX_UNSIZED, ub = b->flags & SYMINDEX_UNSIZED;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (bind_rank(a->flags) != bind_rank(b->flags))
		return bind_rank(a->flags) < bind_rank(b->flags) ? -1 : 1;
	if (ua != ub)
		return ua ? 1 : -1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return strcmp(names + a->name, names + b->name);
}

int symindex_build__seal(struct symindex_build *b)
{
	size_t i, k = 0;

	if (!b)
		return -EINVAL;
	if (b->sealed)
		return 0;
	qsort_r(b->ents, b->n, sizeof(*b->ents), cmp_ent, b->names);
	for (i = 0; i < b->n; i++)
		if (!k || b->ents[i].start != b->ents[k - 1].start)
			b->ents[k++] = b->ents[i];
	b->n = k;
	for (i = 0; i + 1 < b->n; i++)
		if (b->ents[i + 1].start - b->ents[i].start < b->ents[i].size)
			b->ents[i].size = b->ents[i + 1].start - b->ents[i].start;
	b->sealed = true;
	return 0;
}

const char *symindex_build__build_id(const struct symindex_build *b)
{
	return b->build_id;
}

size_t symindex_build__count(const struct symindex_build *b)
{
	return b ? b->n : 0;
}

bool symindex_build__sealed(const struct symindex_build *b)
{
	return b && b->sealed;
}

/* ---- encoding ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

struct hdr_strs {
	char file_name[SYMINDEX_FILE_NAME_MAX + 1];
	char by[SYMINDEX_BY_MAX + 1];
	size_t bid_len, fn_len, by_len, len; /* len: the whole header, padded */
};

static void hdr_strs_init(struct hdr_strs *h, const char *bid, const struct symindex_meta *m)
{
	const char *fn = m && m->file_name ? m->file_name : "";
	const char *by = m && m->uploaded_by ? m->uploaded_by : "";

	h->bid_len = strlen(bid);
	h->fn_len = text_utf8_sanitize_copy(h->file_name, sizeof(h->file_name), fn, strlen(fn));
	h->by_len = text_utf8_sanitize_copy(h->by, sizeof(h->by), by, strlen(by));
	h->len = HDR_FIXED + ((h->bid_len + h->fn_len + h->by_len + 7) & ~(size_t)7);
}

static void write_header(uint8_t *p, const struct symindex_build *b, const struct hdr_strs *h,
			 int64_t at, uint64_t strtab_len)
{
	memcpy(p, MAGIC, 7);
	p[7] = VERSION;
	put16(p + 12, (uint16_t)h->bid_len);
	put16(p + 14, (uint16_t)h->fn_len);
	put16(p + 16, (uint16_t)h->by_len);
	put64(p + 24, (uint64_t)at);
	put64(p + 32, b->n);
	put64(p + 40, strtab_len);
	p += HDR_FIXED;
	memcpy(p, b->build_id, h->bid_len);
	memcpy(p + h->bid_len, h->file_name, h->fn_len);
	memcpy(p + h->bid_len + h->fn_len, h->by, h->by_len);
}

int symindex__encode(const struct symindex_build *b, const struct symindex_meta *meta, void **out,
		     size_t *len)
{
	uint64_t strtab_len = 0, total, size;
	struct hdr_strs h;
	uint8_t *buf, *ent;
	char *strs;
	size_t i, n, off = 0;

	if (!b || !out || !len || !b->sealed)
		return -EINVAL;
	for (i = 0; i < b->n; i++)
		strtab_len += strlen(b->names + b->ents[i].name) + 1;
	hdr_strs_init(&h, b->build_id, meta);
	total = h.len + (uint64_t)b->n * ENTRY_SIZE + strtab_len;
	if (total > SYMINDEX_MAX_BYTES)
		return -E2BIG;
	buf = calloc(1, total);
	if (!buf)
		return -ENOMEM;
	write_header(buf, b, &h, meta ? meta->uploaded_at : 0, strtab_len);
	ent = buf + h.len;
	strs = (char *)ent + b->n * ENTRY_SIZE;
	for (i = 0; i < b->n; i++, ent += ENTRY_SIZE) {
		size = b->ents[i].size > UINT32_MAX ? UINT32_MAX : b->ents[i].size;
		put64(ent, b->ents[i].start);
		put32(ent + 8, (uint32_t)size);
		put32(ent + 12, (uint32_t)off);
		n = strlen(b->names + b->ents[i].name) + 1;
		memcpy(strs + off, b->names + b->ents[i].name, n);
		off += n;
	}
	*out = buf;
	*len = total;
	return 0;
}

/* ---- decoding ---- */

/* Copies the @len header bytes at @p to @dst if they are clean UTF-8 (no NUL, no controls). */
static bool take_str(char *dst, const uint8_t *p, size_t len)
{
	if (!text_utf8_is_clean((const char *)p, len))
		return false;
	memcpy(dst, p, len);
	dst[len] = '\0';
	return true;
}

static int parse_header(const uint8_t *p, size_t len, uint64_t total, struct symindex_info *info,
			size_t *hdr_len, uint64_t *strtab_len)
{
	size_t bid_len, fn_len, by_len, hl, i;
	uint64_t n, rest;

	if (len < HDR_FIXED || total < len || memcmp(p, MAGIC, 7) || p[7] != VERSION ||
	    get32(p + 8) || get16(p + 18) || get32(p + 20))
		return -EBADMSG;
	bid_len = get16(p + 12);
	fn_len = get16(p + 14);
	by_len = get16(p + 16);
	if (bid_len > SYMINDEX_BUILD_ID_MAX || fn_len > SYMINDEX_FILE_NAME_MAX ||
	    by_len > SYMINDEX_BY_MAX)
		return -EBADMSG;
	hl = HDR_FIXED + ((bid_len + fn_len + by_len + 7) & ~(size_t)7);
	if (len < hl)
		return -EBADMSG;
	for (i = HDR_FIXED + bid_len + fn_len + by_len; i < hl; i++)
		if (p[i])
			return -EBADMSG;
	p += HDR_FIXED;
	if (!take_str(info->build_id, p, bid_len) || !symindex_valid_build_id(info->build_id) ||
	    !take_str(info->file_name, p + bid_len, fn_len) ||
	    !take_str(info->uploaded_by, p + bid_len + fn_len, by_len))
		return -EBADMSG;
	p -= HDR_FIXED;
	info->uploaded_at = (int64_t)get64(p + 24);
	n = get64(p + 32);
	rest = total - hl;
	if (n > rest / ENTRY_SIZE || get64(p + 40) != rest - n * ENTRY_SIZE)
		return -EBADMSG;
	info->functions = n;
	*hdr_len = hl;
	*strtab_len = rest - n * ENTRY_SIZE;
	return 0;
}

int symindex_peek(const void *data, size_t len, uint64_t total, struct symindex_info *out)
{
	struct symindex_info info;
	uint64_t strtab_len;
	size_t hl;
	int err;

	if (!data || !out)
		return -EINVAL;
	err = parse_header(data, len, total, &info, &hl, &strtab_len);
	if (err)
		return err;
	*out = info;
	return 0;
}

/* Every name of the string table: clean UTF-8, at most SYMINDEX_NAME_MAX bytes, NUL-ended. */
static bool check_strtab(const char *s, size_t len)
{
	size_t off = 0, n;

	if (len && s[len - 1])
		return false;
	while (off < len) {
		n = strlen(s + off);
		if (!n || n > SYMINDEX_NAME_MAX || !text_utf8_is_clean(s + off, n))
			return false;
		off += n + 1;
	}
	return true;
}

/* Starts increasing, ranges non-empty, disjoint, not wrapping; names start a string. */
static bool check_entries(const uint8_t *e, size_t n, const char *strtab, size_t strtab_len)
{
	uint64_t end = 0, start, size;
	uint32_t name;
	size_t i;

	for (i = 0; i < n; i++, e += ENTRY_SIZE) {
		start = get64(e);
		size = get32(e + 8);
		name = get32(e + 12);
		if (!start || !size || start < end || size > UINT64_MAX - start)
			return false;
		if (name >= strtab_len || (name && strtab[name - 1]))
			return false;
		end = start + size;
	}
	return true;
}

int symindex__decode(const void *data, size_t len, struct symindex **out)
{
	struct symindex *ix;
	uint64_t strtab_len;
	size_t hl;
	int err;

	if (!data || !out)
		return -EINVAL;
	if (len > SYMINDEX_MAX_BYTES)
		return -EFBIG;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	err = parse_header(data, len, len, &ix->info, &hl, &strtab_len);
	if (err)
		goto err_free;
	err = -ENOMEM;
	ix->data = malloc(len);
	if (!ix->data)
		goto err_free;
	memcpy(ix->data, data, len);
	ix->len = len;
	ix->n = ix->info.functions;
	ix->ents = ix->data + hl;
	ix->strtab = (const char *)ix->ents + ix->n * ENTRY_SIZE;
	err = -EBADMSG;
	if (!check_strtab(ix->strtab, strtab_len) ||
	    !check_entries(ix->ents, ix->n, ix->strtab, strtab_len))
		goto err_free;
	*out = ix;
	return 0;

err_free:
	symindex__free(ix);
	return err;
}

void symindex__free(struct symindex *ix)
{
	if (!ix)
		return;
	free(ix->data);
	free(ix);
}

const char *symindex__lookup(const struct symindex *ix, uint64_t addr)
{
	size_t lo = 0, hi, mid;
	const uint8_t *e;

	if (!ix || !ix->n)
		return NULL;
	/* the first entry whose start is above @addr: the candidate is the one before */
	hi = ix->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (get64(ix->ents + mid * ENTRY_SIZE) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = ix->ents + (lo - 1) * ENTRY_SIZE;
	if (addr - get64(e) >= get32(e + 8))
		return NULL;
	return ix->strtab + get32(e + 12);
}

const char *symindex__build_id(const struct symindex *ix)
{
	return ix->info.build_id;
}

size_t symindex__count(const struct symindex *ix)
{
	return ix->n;
}

const char *symindex__file_name(const struct symindex *ix)
{
	return ix->info.file_name;
}

const char *symindex__uploaded_by(const struct symindex *ix)
{
	return ix->info.uploaded_by;
}

int64_t symindex__uploaded_at(const struct symindex *ix)
{
	return ix->info.uploaded_at;
}

size_t symindex__mem(const struct symindex *ix)
{
	return ix ? sizeof(*ix) + ix->len : 0;
}
