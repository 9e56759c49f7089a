// SPDX-License-Identifier: Apache-2.0
/*
 * The JFR parser's lowest layer: varints, records, the six string encodings decoded into valid
 * UTF-8, internal class names made dotted, and the chunk's arena, whose every byte is charged
 * to the chunk's budget (jfr_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/jvm/jfr_int.h"

#define ARENA_BLOCK (64u << 10)

struct jfr_block {
	struct jfr_block *next;
	size_t size;
	uint8_t data[];
};

enum {
	ENC_NULL,
	ENC_EMPTY,
	ENC_POOL,
	ENC_UTF8,
	ENC_CHARS,
	ENC_LATIN1,
};

static size_t cur_left(const struct jfr_cur *c)
{
	return (size_t)(c->end - c->p);
}

int jfr_varint(struct jfr_cur *c, uint64_t *out)
{
	uint64_t v = 0;
	unsigned i;
	uint8_t b;

	for (i = 0; i < 9; i++) {
		if (c->p >= c->end)
			return -EBADMSG;
		b = *c->p++;
		if (i == 8) { /* the ninth byte carries bits 56..63 whole */
			v |= (uint64_t)b << 56;
			break;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
	}
	*out = v;
	return 0;
}

int jfr_skip(struct jfr_cur *c, uint64_t n)
{
	if (n > cur_left(c))
		return -EBADMSG;
	c->p += n;
	return 0;
}

int jfr_record(struct jfr_cur *c, struct jfr_cur *rec, uint64_t *type)
{
	const uint8_t *start = c->p;
	uint64_t size;
	int err;

	err = jfr_varint(c, &size);
	if (err)
		return err;
	/* the size counts the whole record, its own bytes included (0 is an error too) */
	if (size <= (uint64_t)(c->p - start) || size > (uint64_t)(c->end - start))
		return -EBADMSG;
	rec->p = c->p;
	rec->end = start + size;
	c->p = rec->end;
	return jfr_varint(rec, type);
}

int jfr_skip_string(struct jfr_cur *c)
{
	uint64_t n, v;
	uint8_t enc;
	int err;

	if (c->p >= c->end)
		return -EBADMSG;
	enc = *c->p++;
	switch (enc) {
	case ENC_NULL:
	case ENC_EMPTY:
		return 0;
	case ENC_POOL:
		return jfr_varint(c, &v);
	case ENC_UTF8:
	case ENC_LATIN1:
		err = jfr_varint(c, &n);
		return err ? err : jfr_skip(c, n);
	case ENC_CHARS:
		err = jfr_varint(c, &n);
		if (err)
			return err;
		if (n > cur_left(c)) /* a char is a varint: at least a byte */
			return -EBADMSG;
		while (n-- && !err)
			err = jfr_varint(c, &v);
		return err;
	default:
		return -EBADMSG;
	}
}

/* A UTF-8 writer into a buffer of @cap bytes (plus the NUL), which stops at the first code
 * point that does not fit, so the text is cut at a character boundary. */
struct utf8_out {
	char *buf;
	size_t len, cap;
	bool full;
};

static void put_cp(struct utf8_out *o, uint32_t cp)
{
	uint8_t b[4];
	size_t n;

	if (!cp || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = '?'; /* NUL and lone surrogates: the text rule's '?' */
	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | cp >> 6;
		b[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | cp >> 12;
		b[1] = 0x80 | ((cp >> 6) & 0x3f);
		b[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		b[0] = 0xf0 | cp >> 18;
		b[1] = 0x80 | ((cp >> 12) & 0x3f);
		b[2] = 0x80 | ((cp >> 6) & 0x3f);
		b[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	if (o->full || o->len + n > o->cap) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, b, n);
	o->len += n;
}

/* Decodes @n UTF-16 code units, each a varint, pairing surrogates. */
static int decode_chars(struct jfr_cur *c, uint64_t n, struct utf8_out *o)
{
	uint32_t hi = 0, cu;
	uint64_t v;
	int err;

	while (n--) {
		err = jfr_varint(c, &v);
		if (err)
			return err;
		cu = (uint16_t)v;
		if (hi && cu >= 0xdc00 && cu <= 0xdfff) {
			put_cp(o, 0x10000 + ((hi - 0xd800) << 10) + (cu - 0xdc00));
			hi = 0;
			continue;
		}
		if (hi)
			put_cp(o, '?');
		hi = cu >= 0xd800 && cu <= 0xdbff ? cu : 0;
		if (!hi)
			put_cp(o, cu);
	}
	if (hi)
		put_cp(o, '?');
	return 0;
}

/* Decodes the payload of encoding @enc (UTF-8, chars or Latin-1), @n its declared length. */
static int decode_payload(struct jfr_cur *c, uint8_t enc, uint64_t n, struct utf8_out *o)
{
	uint64_t i;

	if (enc == ENC_CHARS)
		return decode_chars(c, n, o);
	if (enc == ENC_UTF8) {
		o->len = text_utf8_valid_copy(o->buf, o->cap + 1, (const char *)c->p, n);
	} else {
		for (i = 0; i < n && !o->full; i++)
			put_cp(o, c->p[i]);
	}
	c->p += n;
	return 0;
}

/* The arena buffer for a payload of @n units of @enc, at most JFR_MAX_STRING bytes. */
static size_t payload_cap(uint8_t enc, uint64_t n)
{
	uint64_t per = enc == ENC_UTF8 ? 1 : enc == ENC_LATIN1 ? 2 : 3;

	return n > JFR_MAX_STRING / per ? JFR_MAX_STRING : (size_t)(n * per);
}

static int new_text(struct jfr_chunk *x, const char *raw, struct jfr_text **out)
{
	struct jfr_text *t = jfr_alloc(x, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->raw = raw;
	t->dotted = NULL;
	t->dotted_hidden = NULL;
	*out = t;
	return 0;
}

static int read_payload(struct jfr_chunk *x, struct jfr_cur *c, uint8_t enc, struct jfr_text **out)
{
	struct utf8_out o = { 0 };
	uint64_t n;
	int err;

	err = jfr_varint(c, &n);
	if (err)
		return err;
	if (n > cur_left(c)) /* a byte, or a char's varint, takes at least a byte */
		return -EBADMSG;
	o.cap = payload_cap(enc, n);
	o.buf = jfr_alloc(x, o.cap + 1);
	if (!o.buf)
		return -ENOMEM;
	err = decode_payload(c, enc, n, &o);
	if (err)
		return err;
	o.buf[o.len] = '\0';
	jfr_alloc_trim(x, o.buf, o.cap + 1, o.len + 1);
	return new_text(x, o.buf, out);
}

int jfr_read_string(struct jfr_chunk *x, struct jfr_cur *c, unsigned depth, bool no_refs,
		    struct jfr_text **out)
{
	union jfr_memo m;
	uint64_t key;
	uint8_t enc;
	int err;

	*out = NULL;
	if (c->p >= c->end)
		return -EBADMSG;
	enc = *c->p++;
	switch (enc) {
	case ENC_NULL:
		return 0;
	case ENC_EMPTY:
		return new_text(x, "", out);
	case ENC_POOL:
		err = jfr_varint(c, &key);
		if (err || no_refs)
			return err ? err : -EBADMSG;
		err = jfr_resolve(x, x->string_cls, key, JR_STRING, depth + 1, &m);
		if (!err)
			*out = m.text;
		return err;
	case ENC_UTF8:
	case ENC_CHARS:
	case ENC_LATIN1:
		return read_payload(x, c, enc, out);
	default:
		return -EBADMSG;
	}
}

/* --- class names ----------------------------------------------------------------------------- */

static const char *prim_descriptor(char c)
{
	switch (c) {
	case 'B':
		return "byte";
	case 'C':
		return "char";
	case 'D':
		return "double";
	case 'F':
		return "float";
	case 'I':
		return "int";
	case 'J':
		return "long";
	case 'S':
		return "short";
	case 'Z':
		return "boolean";
	default:
		return NULL;
	}
}

/* Appends @n bytes of @s to @dst (@size), '/' made '.' (but the last with @hidden), as far as
 * they fit. */
static void put_dotted(char *dst, size_t size, size_t *len, const char *s, size_t n, bool hidden)
{
	const char *keep = hidden ? memrchr(s, '/', n) : NULL;
	size_t i;

	for (i = 0; i < n && *len + 1 < size; i++)
		dst[(*len)++] = s[i] == '/' && s + i != keep ? '.' : s[i];
	dst[*len] = '\0';
}

size_t jfr_dotted_name(char *dst, size_t size, const char *raw, bool hidden)
{
	size_t dims = 0, len = 0, n = strlen(raw), i;
	const char *elem, *prim;

	if (!size)
		return 0;
	dst[0] = '\0';
	while (raw[dims] == '[')
		dims++;
	elem = raw + dims;
	prim = dims && n - dims == 1 ? prim_descriptor(*elem) : NULL;
	if (prim) {
		put_dotted(dst, size, &len, prim, strlen(prim), false);
	} else if (dims && n - dims > 2 && *elem == 'L' && raw[n - 1] == ';') {
		put_dotted(dst, size, &len, elem + 1, n - dims - 2, hidden);
	} else {
		put_dotted(dst, size, &len, raw, n,
			   hidden); /* not a descriptor: the name as it is */
		dims = 0;
	}
	for (i = 0; i < dims; i++)
		put_dotted(dst, size, &len, "[]", 2, false);
	if (len + 1 >= size) /* cut: do not end inside a character */
		len = text_utf8_trim_partial(dst);
	return len;
}

const char *jfr_dotted(struct jfr_chunk *x, struct jfr_text *t, bool hidden, int *err)
{
	const char **memo;
	size_t n, cap;
	char *buf;

	*err = 0;
	if (!t || !t->raw)
		return NULL;
	memo = hidden ? &t->dotted_hidden : &t->dotted;
	if (*memo)
		return *memo;
	if (t->raw[0] != '[' && !strchr(t->raw, '/')) {
		*memo = t->raw;
		return *memo;
	}
	n = strlen(t->raw); /* at most JFR_MAX_STRING: "[[Z" grows to "boolean[][]" */
	cap = 2 * n + 8 > JFR_MAX_STRING + 1 ? JFR_MAX_STRING + 1 : 2 * n + 8;
	buf = jfr_alloc(x, cap);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	n = jfr_dotted_name(buf, cap, t->raw, hidden);
	jfr_alloc_trim(x, buf, cap, n + 1);
	*memo = buf;
	return *memo;
}

/* --- memory ---------------------------------------------------------------------------------- */

static bool charge(struct jfr_chunk *x, size_t n)
{
	if (n > x->budget || x->mem > x->budget - n)
		return false;
	x->mem += n;
	return true;
}

void *jfr_alloc(struct jfr_chunk *x, size_t n)
{
	struct jfr_block *b;
	size_t bsize;
	uint8_t *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + 7) & ~(size_t)7;
	if (n <= x->bump_left) {
		p = x->bump;
		x->bump += n;
		x->bump_left -= n;
		return p;
	}
	bsize = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
	if (!charge(x, sizeof(*b) + bsize))
		return NULL;
	b = malloc(sizeof(*b) + bsize);
	if (!b)
		return NULL;
	b->next = x->blocks;
	b->size = bsize;
	x->blocks = b;
	if (n > ARENA_BLOCK / 4)
		return b->data; /* a big one: the current block keeps its room */
	x->bump = b->data + n;
	x->bump_left = bsize - n;
	return b->data;
}

void jfr_alloc_trim(struct jfr_chunk *x, void *p, size_t n, size_t keep)
{
	n = (n + 7) & ~(size_t)7;
	keep = (keep + 7) & ~(size_t)7;
	if ((uint8_t *)p + n == x->bump && keep <= n) {
		x->bump -= n - keep;
		x->bump_left += n - keep;
	}
}

int jfr_grow(struct jfr_chunk *x, void **data, size_t *cap, size_t elem, size_t need)
{
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem || !charge(x, (ncap - *cap) * elem))
		return -ENOMEM;
	n = realloc(*data, ncap * elem);
	if (!n)
		return -ENOMEM;
	*data = n;
	*cap = ncap;
	return 0;
}

void jfr_chunk_release(struct jfr_chunk *x)
{
	struct jfr_block *b, *next;

	for (b = x->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(x->classes);
	free(x->ents);
	x->blocks = NULL;
	x->bump = NULL;
	x->bump_left = 0;
	x->classes = NULL;
	x->nclasses = x->classes_cap = 0;
	x->ents = NULL;
	x->nents = x->ents_cap = 0;
	x->strings = NULL;
	x->nstrings = 0;
	x->mem = 0;
}
