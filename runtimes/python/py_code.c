// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_code.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtimes/python/py_linetable.h"

#define HDR_MAX 256 /* the code object fields we read all lie in its first 256 bytes */

int py_read_process(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	ssize_t got = process_vm_readv(*(pid_t *)ctx, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

/* The identity of a code object: what must not change for a cached name to stay right. */
struct code_hdr {
	uint64_t type, name, file, lines;
	int32_t firstlineno;
};

static uint64_t field64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static size_t hdr_len(const struct py_offsets *o)
{
	uint32_t f[] = { o->ob_type,	    o->code_filename,	 o->code_name,
			 o->code_linetable, o->code_firstlineno, o->code_qualname };
	uint32_t max = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i] != PY_OFF_NONE && f[i] > max)
			max = f[i];
	}
	return max + 8;
}

static int read_hdr(const struct py_offsets *o, py_read_fn_t read, void *ctx, uint64_t addr,
		    struct code_hdr *h)
{
	uint8_t b[HDR_MAX];
	size_t len = hdr_len(o);
	int32_t first;
	int err;

	if (!addr)
		return -EINVAL;
	if (len > sizeof(b))
		return -EINVAL;
	memset(h, 0, sizeof(*h)); /* compared with memcmp(): no stray padding */
	err = read(ctx, addr, b, len);
	if (err)
		return err;
	h->type = field64(b, o->ob_type);
	h->file = field64(b, o->code_filename);
	h->name = field64(b, o->code_qualname != PY_OFF_NONE ? o->code_qualname : o->code_name);
	h->lines = field64(b, o->code_linetable);
	memcpy(&first, b + o->code_firstlineno, sizeof(first));
	h->firstlineno = first;
	return 0;
}

/* Appends code point @cp as UTF-8 if it fits in @size (with the NUL). Returns the new length,
 * or -1 when it does not fit or is not a character. */
static int put_utf8(char *out, size_t len, size_t size, uint32_t cp)
{
	unsigned char u[4];
	size_t n;

	if (!cp || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -2;
	if (cp < 0x80) {
		u[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = 0xc0 | (cp >> 6);
		u[1] = 0x80 | (cp & 63);
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = 0xe0 | (cp >> 12);
		u[1] = 0x80 | ((cp >> 6) & 63);
		u[2] = 0x80 | (cp & 63);
		n = 3;
	} else {
		u[0] = 0xf0 | (cp >> 18);
		u[1] = 0x80 | ((cp >> 12) & 63);
		u[2] = 0x80 | ((cp >> 6) & 63);
		u[3] = 0x80 | (cp & 63);
		n = 4;
	}
	if (len + n >= size)
		return -1;
	memcpy(out + len, u, n);
	return (int)(len + n);
}

/* Decodes @count characters of @kind bytes each into UTF-8. Returns 0 or -EILSEQ. */
static int decode_chars(const uint8_t *data, size_t count, unsigned kind, bool ascii, char *out,
			size_t size)
{
	size_t len = 0;

	for (size_t i = 0; i < count; i++) {
		uint32_t cp = 0;
		int n;

		memcpy(&cp, data + i * kind, kind); /* little-endian hosts (x86-64, arm64) */
		if (ascii && cp >= 0x80)
			return -EILSEQ;
		n = put_utf8(out, len, size, cp);
		if (n == -1)
			break; /* cut at a character boundary */
		if (n < 0)
			return -EILSEQ;
		len = n;
	}
	out[len] = '\0';
	return 0;
}

/* Reads the str object at @addr into @out (PY_CODE_NAME_MAX + 1 bytes). Returns 0 or -errno. */
static int read_str(const struct py_offsets *o, py_read_fn_t read, void *ctx, uint64_t addr,
		    char *out)
{
	uint8_t hdr[HDR_MAX], data[PY_CODE_NAME_MAX * 4];
	uint32_t state, kind;
	uint64_t length;
	size_t count, at;
	bool ascii;
	int err;

	if (!addr || o->compact_size > sizeof(hdr))
		return -EINVAL;
	err = read(ctx, addr, hdr, o->ascii_size);
	if (err)
		return err;
	length = field64(hdr, o->str_length);
	memcpy(&state, hdr + o->str_state, sizeof(state));
	kind = (state >> 2) & 7;
	ascii = (state >> 6) & 1;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -EILSEQ; /* not compact (a legacy string), or a bad kind */
	if (length > (1u << 30))
		return -EILSEQ;
	count = length < PY_CODE_NAME_MAX ? length : PY_CODE_NAME_MAX;
	at = ascii ? o->ascii_size : o->compact_size;
	if (count) {
		err = read(ctx, addr + at, data, count * kind);
		if (err)
			return err;
	}
	return decode_chars(data, count, kind, ascii, out, PY_CODE_NAME_MAX + 1);
}

/* The bytes object at @addr (a line table), bounded by PY_CODE_TABLE_MAX. */
static int read_bytes(const struct py_offsets *o, py_read_fn_t read, void *ctx, uint64_t addr,
		      uint8_t **out, size_t *len)
{
	uint8_t hdr[HDR_MAX];
	uint64_t size;
	uint8_t *buf;
	int err;

	if (!addr || o->bytes_data > sizeof(hdr))
		return -EINVAL;
	err = read(ctx, addr, hdr, o->bytes_data);
	if (err)
		return err;
	size = field64(hdr, o->bytes_size);
	if (size > PY_CODE_TABLE_MAX)
		return -E2BIG;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	err = size ? read(ctx, addr + o->bytes_data, buf, size) : 0;
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = size;
	return 0;
}

static int read_body(const struct py_offsets *o, py_read_fn_t read, void *ctx,
		     const struct code_hdr *h, struct py_code_info *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (read_str(o, read, ctx, h->name, out->name))
		strcpy(out->name, PY_CODE_PLACEHOLDER);
	if (read_str(o, read, ctx, h->file, out->file))
		strcpy(out->file, PY_CODE_PLACEHOLDER);
	out->firstlineno = h->firstlineno;
	err = read_bytes(o, read, ctx, h->lines, &out->linetable, &out->linetable_len);
	return err == -ENOMEM ? err : 0;
}

int py_code_read(const struct py_offsets *o, uint64_t code_type, py_read_fn_t read, void *ctx,
		 uint64_t addr, struct py_code_info *out)
{
	struct code_hdr h;
	int err = read_hdr(o, read, ctx, addr, &h);

	if (err)
		return err;
	if (h.type != code_type)
		return -ESTALE;
	return read_body(o, read, ctx, &h, out);
}

void py_code_info_clear(struct py_code_info *ci)
{
	if (!ci)
		return;
	free(ci->linetable);
	memset(ci, 0, sizeof(*ci));
}

int py_code_line(const struct py_offsets *o, const struct py_code_info *ci, uint64_t code_addr,
		 uint64_t instr, int *line)
{
	uint64_t off;

	if (!ci->linetable)
		return -ENOENT;
	if (o->layout == PY_FRAMES_OBJECT) {
		int32_t lasti = (int32_t)(uint32_t)instr;

		if (lasti < 0) /* not started yet: the def line */
			lasti = 0;
		off = (uint64_t)lasti * o->lasti_unit;
	} else if (o->layout == PY_FRAMES_INTERP) {
		uint64_t start = code_addr + o->code_adaptive;

		if (instr < start || instr - start > (1ull << 30))
			return -ERANGE;
		off = instr - start;
	} else {
		return -EINVAL;
	}
	if (off > UINT32_MAX)
		return -ERANGE;
	return py_linetable_line(o->line_format, ci->linetable, ci->linetable_len, ci->firstlineno,
				 (uint32_t)off, line);
}

/* The cache: direct-mapped slots, a collision evicts. */
struct slot {
	uint32_t tgid;
	uint64_t addr; /* 0: empty */
	struct code_hdr hdr;
	struct py_code_info info;
};

struct py_code_cache {
	struct slot *slots;
	size_t n;
	struct py_code_cache_stats st;
};

int py_code_cache__new(const struct py_code_cache_opts *opts, struct py_code_cache **out)
{
	struct py_code_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->n = opts && opts->max_entries ? opts->max_entries : PY_CODE_CACHE_DEFAULT;
	c->slots = calloc(c->n, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void py_code_cache__free(struct py_code_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->slots && i < c->n; i++)
		py_code_info_clear(&c->slots[i].info);
	free(c->slots);
	free(c);
}

static struct slot *slot_of(struct py_code_cache *c, uint32_t tgid, uint64_t addr)
{
	uint64_t h = (addr >> 4) * 0x9e3779b97f4a7c15ull ^ (uint64_t)tgid * 0xff51afd7ed558ccdull;

	return &c->slots[(h >> 17) % c->n];
}

static void slot_drop(struct slot *s)
{
	py_code_info_clear(&s->info);
	s->addr = 0;
}

int py_code_cache__lookup(struct py_code_cache *c, uint32_t tgid, const struct py_offsets *o,
			  uint64_t code_type, py_read_fn_t read, void *ctx, uint64_t addr,
			  const struct py_code_info **out)
{
	struct slot *s = slot_of(c, tgid, addr);
	bool cached = s->addr == addr && s->tgid == tgid;
	struct code_hdr h;
	int err = read_hdr(o, read, ctx, addr, &h);

	if (err) {
		c->st.errors++;
		return err;
	}
	if (h.type != code_type) {
		c->st.stale++;
		if (cached)
			slot_drop(s);
		return -ESTALE;
	}
	if (cached && !memcmp(&h, &s->hdr, sizeof(h))) {
		c->st.hits++;
		*out = &s->info;
		return 0;
	}
	if (cached)
		c->st.reused++;
	else if (s->addr)
		c->st.evictions++;
	c->st.misses++;
	slot_drop(s);
	err = read_body(o, read, ctx, &h, &s->info);
	if (err)
		return err;
	s->tgid = tgid;
	s->addr = addr;
	s->hdr = h;
	*out = &s->info;
	return 0;
}

void py_code_cache__forget(struct py_code_cache *c, uint32_t tgid)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->slots[i].addr && c->slots[i].tgid == tgid)
			slot_drop(&c->slots[i]);
	}
}

void py_code_cache__stats(const struct py_code_cache *c, struct py_code_cache_stats *out)
{
	*out = c->st;
}
