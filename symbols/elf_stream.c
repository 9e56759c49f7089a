// SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_stream.h"

#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first bytes of the file are kept whole: note sections are there in every layout seen. */
#define HEAD_MAX (64u << 10)
#define NOTE_MAX (64u << 10)
#define WANTS_MAX 40
#define MIN_TAIL 4096u
#define RING_START (64u << 10)
#define BUILD_ID_BYTES_MAX 64
#define WHY_MAX 192

enum want_kind { W_PHDRS, W_SHDR0, W_SHDRS, W_NOTE, W_SYMTAB, W_STRTAB };

/* A range of the file kept as it arrives (or recovered from the head or the ring). */
struct want {
	uint64_t off, len, align;
	uint8_t *buf;
	uint64_t have, cap;
	enum want_kind kind;
	bool lost;    /* passed before it was wanted and out of reach */
	bool handled; /* its completion was acted on */
};

struct ehdr {
	uint64_t phoff, shoff;
	uint32_t phnum, shnum;
	uint16_t phentsize, shentsize;
};

struct elf_stream {
	struct elf_stream_opts o;
	uint64_t pos;
	int err;   /* sticky */
	int defer; /* -E2BIG found while reading, reported by finish() after the errors before it */
	char why[WHY_MAX];
	int why_err; /* the error why[] explains */
	bool finished;
	bool is64, hdr_done, phdrs_done, shdrs_done;
	size_t hdr_size;
	struct ehdr eh;
	struct want w[WANTS_MAX];
	size_t nw;
	struct want *shdrs;	      /* the section header table once read, or NULL */
	struct want *symtab, *strtab; /* NULL when there is none */
	uint32_t nsecs;
	bool bad_link; /* .symtab's string table link or entsize is bad */
	uint8_t *ring; /* byte at offset o is ring[o % ring_cap] */
	size_t ring_cap;
	bool ring_off;
	uint8_t head[HEAD_MAX];
};

/* ---- little-endian fields ---- */

static uint64_t rd(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* A field of @s's class: @off32/@n32 in ELFCLASS32 layouts, @off64/@n64 in ELFCLASS64 ones. */
static uint64_t fld(const struct elf_stream *s, const uint8_t *p, size_t off32, size_t n32,
		    size_t off64, size_t n64)
{
	return s->is64 ? rd(p + off64, n64) : rd(p + off32, n32);
}

static void fmt_size(char *buf, size_t size, uint64_t v)
{
	if (v >= (1ull << 30) && !(v % (1ull << 30)))
		snprintf(buf, size, "%llu GiB", (unsigned long long)(v >> 30));
	else if (v >= (1u << 20) && !(v % (1u << 20)))
		snprintf(buf, size, "%llu MiB", (unsigned long long)(v >> 20));
	else if (v >= (1u << 10) && !(v % (1u << 10)))
		snprintf(buf, size, "%llu KiB", (unsigned long long)(v >> 10));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
}

/* Records the first sentence for the refusal; returns @err. */
static int why(struct elf_stream *s, int err, const char *fmt, uint64_t limit)
{
	char lim[32];

	if (!s->why_err) {
		fmt_size(lim, sizeof(lim), limit);
		snprintf(s->why, sizeof(s->why), fmt, lim);
		s->why_err = err;
	}
	return err;
}

/* ---- lifecycle ---- */

int elf_stream__new(const struct elf_stream_opts *opts, struct elf_stream **out)
{
	struct elf_stream *s;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (opts)
		s->o = *opts;
	if (!s->o.max_bytes)
		s->o.max_bytes = ELF_STREAM_DEFAULT_MAX_BYTES;
	if (!s->o.max_tail)
		s->o.max_tail = ELF_STREAM_DEFAULT_MAX_TAIL;
	if (s->o.max_tail < MIN_TAIL)
		s->o.max_tail = MIN_TAIL;
	if (!s->o.max_section)
		s->o.max_section = ELF_STREAM_DEFAULT_MAX_SECTION;
	if (!s->o.max_functions)
		s->o.max_functions = ELF_STREAM_DEFAULT_MAX_FUNCTIONS;
	*out = s;
	return 0;
}

void elf_stream__free(struct elf_stream *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nw; i++)
		free(s->w[i].buf);
	free(s->ring);
	free(s);
}

uint64_t elf_stream__bytes(const struct elf_stream *s)
{
	return s ? s->pos : 0;
}

/* ---- the head and the ring ---- */

/* Grows the ring while it has never wrapped (pos <= ring_cap), so offsets keep their slots. */
static int ring_grow(struct elf_stream *s, size_t n)
{
	uint64_t need = s->pos + n, cap = s->ring_cap ? s->ring_cap : RING_START;
	uint8_t *p;

	if (s->ring_cap >= s->o.max_tail || need <= s->ring_cap)
		return 0;
	while (cap < need && cap < s->o.max_tail)
		cap *= 2;
	if (cap > s->o.max_tail)
		cap = s->o.max_tail;
	p = realloc(s->ring, cap);
	if (!p)
		return -ENOMEM;
	s->ring = p;
	s->ring_cap = cap;
	return 0;
}

static int ring_put(struct elf_stream *s, const uint8_t *p, size_t n)
{
	uint64_t off = s->pos;
	size_t at, m;
	int err;

	err = ring_grow(s, n);
	if (err)
		return err;
	if (n > s->ring_cap) {
		off += n - s->ring_cap;
		p += n - s->ring_cap;
		n = s->ring_cap;
	}
	at = off % s->ring_cap;
	m = n < s->ring_cap - at ? n : s->ring_cap - at;
	memcpy(s->ring + at, p, m);
	memcpy(s->ring, p + m, n - m);
	return 0;
}

/* Copies the passed bytes [@off, @off + @n) from the ring; the caller checked they are held. */
static void ring_get(const struct elf_stream *s, uint64_t off, uint8_t *dst, size_t n)
{
	size_t at = off % s->ring_cap, m = n < s->ring_cap - at ? n : s->ring_cap - at;

	memcpy(dst, s->ring + at, m);
	memcpy(dst + m, s->ring, n - m);
}

/* ---- wanted ranges ---- */

static int want_grow(struct want *w, uint64_t need)
{
	uint64_t cap = w->cap ? w->cap : 4096;
	uint8_t *p;

	if (need <= w->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > w->len)
		cap = w->len;
	p = realloc(w->buf, cap);
	if (!p)
		return -ENOMEM;
	w->buf = p;
	w->cap = cap;
	return 0;
}

/* Appends the passed bytes of @w from the head and the ring; out of reach: @w is lost. */
static int want_recover(struct elf_stream *s, struct want *w)
{
	uint64_t a = w->off, b = w->off + w->len < s->pos ? w->off + w->len : s->pos;
	uint64_t head_len = s->pos < HEAD_MAX ? s->pos : HEAD_MAX, ring_lo = s->pos, m;
	int err;

	if (!s->ring_off && s->ring_cap)
		ring_lo = s->pos - (s->pos < s->ring_cap ? s->pos : s->ring_cap);
	if (a >= b)
		return 0;
	err = want_grow(w, b - a);
	if (err)
		return err;
	while (a < b) {
		if (a < head_len) {
			m = (b < head_len ? b : head_len) - a;
			memcpy(w->buf + w->have, s->head + a, m);
		} else if (a >= ring_lo) {
			m = b - a;
			ring_get(s, a, w->buf + w->have, m);
		} else {
			w->lost = true;
			free(w->buf);
			w->buf = NULL;
			w->have = w->cap = 0;
			return 0;
		}
		w->have += m;
		a += m;
	}
	return 0;
}

/*
 * Wants [@off, @off + @len) of the file. Returns the range (NULL: none, as no room is left or
 * the range is empty or wraps; a caller that needs it decides what that means) or an error.
 */
static int want_add(struct elf_stream *s, enum want_kind kind, uint64_t off, uint64_t len,
		    uint64_t align, struct want **out)
{
	struct want *w;
	int err;

	*out = NULL;
	if (!len || off + len < off || s->nw >= WANTS_MAX)
		return 0;
	w = &s->w[s->nw++];
	*w = (struct want){ .off = off, .len = len, .align = align, .kind = kind };
	err = want_recover(s, w);
	if (err)
		return err;
	*out = w;
	return 0;
}

static bool want_done(const struct want *w)
{
	return !w->lost && w->have == w->len;
}

/* Copies the part of the chunk [pos, pos + @n) at @p that @w wants. */
static int want_take(struct elf_stream *s, struct want *w, const uint8_t *p, size_t n)
{
	uint64_t next = w->off + w->have, end = w->off + w->len, m;
	int err;

	if (w->lost || w->have == w->len || next < s->pos || next >= s->pos + n)
		return 0;
	m = (end < s->pos + n ? end : s->pos + n) - next;
	err = want_grow(w, w->have + m);
	if (err)
		return err;
	memcpy(w->buf + w->have, p + (next - s->pos), m);
	w->have += m;
	return 0;
}

/* ---- the ELF header and the header tables ---- */

/* Checks the identification bytes that have arrived; the header is parsed once whole. */
static int check_ident(struct elf_stream *s)
{
	size_t i, n = s->pos < EI_NIDENT ? s->pos : EI_NIDENT;

	for (i = 0; i < n && i < SELFMAG; i++)
		if (s->head[i] != (uint8_t)ELFMAG[i])
			return -ENOEXEC;
	if (n > EI_CLASS && s->head[EI_CLASS] != ELFCLASS32 && s->head[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	if (n > EI_DATA && s->head[EI_DATA] == ELFDATA2MSB)
		return -ELF_STREAM_EBIGENDIAN;
	if (n > EI_DATA && s->head[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (n > EI_CLASS) {
		s->is64 = s->head[EI_CLASS] == ELFCLASS64;
		s->hdr_size = s->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	}
	return 0;
}

static int parse_ehdr(struct elf_stream *s)
{
	const uint8_t *h = s->head;
	struct ehdr *eh = &s->eh;
	struct want *w;
	int err;

	eh->phoff = fld(s, h, 28, 4, 32, 8);
	eh->shoff = fld(s, h, 32, 4, 40, 8);
	eh->phentsize = (uint16_t)fld(s, h, 42, 2, 54, 2);
	eh->phnum = (uint32_t)fld(s, h, 44, 2, 56, 2);
	eh->shentsize = (uint16_t)fld(s, h, 46, 2, 58, 2);
	eh->shnum = (uint32_t)fld(s, h, 48, 2, 60, 2);
	if (!eh->phoff || eh->phnum == PN_XNUM)
		eh->phnum = 0; /* PN_XNUM: the notes come from the sections */
	if (!eh->shoff)
		eh->shnum = 0;
	if ((eh->phnum && eh->phentsize != (s->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr))) ||
	    (eh->shoff && eh->shentsize != (s->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr))))
		return -ENOEXEC;
	s->hdr_done = true;
	err = want_add(s, W_PHDRS, eh->phoff, (uint64_t)eh->phnum * eh->phentsize, 0, &w);
	if (!err && !w)
		s->phdrs_done = true;
	if (!err && (uint64_t)eh->shnum * eh->shentsize > s->o.max_section) {
		s->shdrs_done = true;
		s->defer = why(s, -E2BIG, "the section header table is larger than %s",
			       s->o.max_section);
		return 0;
	}
	if (!err && eh->shoff) {
		err = eh->shnum ? want_add(s, W_SHDRS, eh->shoff,
					   (uint64_t)eh->shnum * eh->shentsize, 0, &w) :
				  want_add(s, W_SHDR0, eh->shoff, eh->shentsize, 0, &w);
		if (!err && !w)
			return -ENOEXEC; /* a table past the end of the address space */
	}
	if (!eh->shoff)
		s->shdrs_done = true;
	return err;
}

static int on_phdrs(struct elf_stream *s, struct want *t)
{
	uint64_t off, len, align;
	const uint8_t *p;
	struct want *w;
	uint32_t i;
	int err;

	for (i = 0; i < s->eh.phnum; i++) {
		p = t->buf + (uint64_t)i * s->eh.phentsize;
		if (rd(p, 4) != PT_NOTE)
			continue;
		off = fld(s, p, 4, 4, 8, 8);
		len = fld(s, p, 16, 4, 32, 8);
		align = fld(s, p, 28, 4, 48, 8);
		if (len > NOTE_MAX)
			continue;
		err = want_add(s, W_NOTE, off, len, align, &w);
		if (err)
			return err;
	}
	s->phdrs_done = true;
	return 0;
}

/* Section @i's header (@i < s->nsecs). */
static const uint8_t *shdr(const struct elf_stream *s, uint32_t i)
{
	return s->shdrs->buf + (uint64_t)i * s->eh.shentsize;
}

#define SH_TYPE(s, p) rd((p) + 4, 4)
#define SH_FLAGS(s, p) fld(s, p, 8, 4, 8, 8)
#define SH_ADDR(s, p) fld(s, p, 12, 4, 16, 8)
#define SH_OFFSET(s, p) fld(s, p, 16, 4, 24, 8)
#define SH_SIZE(s, p) fld(s, p, 20, 4, 32, 8)
#define SH_LINK(s, p) rd((p) + (s->is64 ? 40 : 24), 4)
#define SH_ALIGN(s, p) fld(s, p, 32, 4, 48, 8)
#define SH_ENTSIZE(s, p) fld(s, p, 36, 4, 56, 8)

/* Section 0 of a file with more than SHN_LORESERVE sections holds their count. */
static int on_shdr0(struct elf_stream *s, struct want *t)
{
	uint64_t n = SH_SIZE(s, t->buf);
	struct want *w;
	int err;

	if (!n) {
		s->shdrs_done = true;
		return 0;
	}
	if (n > s->o.max_section / s->eh.shentsize) {
		s->shdrs_done = true;
		return why(s, -E2BIG, "the section header table is larger than %s",
			   s->o.max_section);
	}
	s->eh.shnum = (uint32_t)n;
	err = want_add(s, W_SHDRS, s->eh.shoff, n * s->eh.shentsize, 0, &w);
	if (!err && !w)
		return -ENOEXEC;
	return err;
}

/* The wanted sections once their headers are known: notes, .symtab and its strings. */
static int want_sections(struct elf_stream *s)
{
	const uint8_t *p;
	struct want *w;
	uint32_t i;
	int err;

	for (i = 1; i < s->nsecs; i++) {
		p = shdr(s, i);
		if (SH_TYPE(s, p) == SHT_NOTE && SH_SIZE(s, p) <= NOTE_MAX) {
			err = want_add(s, W_NOTE, SH_OFFSET(s, p), SH_SIZE(s, p), SH_ALIGN(s, p),
				       &w);
			if (err)
				return err;
		}
	}
	return 0;
}

static int want_symtab(struct elf_stream *s)
{
	uint64_t ent = s->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), link;
	const uint8_t *p = NULL, *str;
	uint32_t i;
	int err;

	for (i = 1; i < s->nsecs && !p; i++)
		if (SH_TYPE(s, shdr(s, i)) == SHT_SYMTAB)
			p = shdr(s, i);
	if (!p)
		return 0;
	link = SH_LINK(s, p);
	if (!link || link >= s->nsecs || SH_TYPE(s, shdr(s, link)) != SHT_STRTAB ||
	    (SH_ENTSIZE(s, p) && SH_ENTSIZE(s, p) != ent)) {
		s->bad_link = true;
		return 0;
	}
	str = shdr(s, (uint32_t)link);
	if (SH_SIZE(s, p) > s->o.max_section)
		return why(s, -E2BIG, "the symbol table is larger than %s", s->o.max_section);
	if (SH_SIZE(s, str) > s->o.max_section)
		return why(s, -E2BIG, "the symbol table's strings are larger than %s",
			   s->o.max_section);
	err = want_add(s, W_SYMTAB, SH_OFFSET(s, p), SH_SIZE(s, p) / ent * ent, 0, &s->symtab);
	if (!err)
		err = want_add(s, W_STRTAB, SH_OFFSET(s, str), SH_SIZE(s, str), 0, &s->strtab);
	if (!err && ((s->symtab && s->symtab->lost) || (s->strtab && s->strtab->lost)))
		err = why(s, -E2BIG,
			  "the symbol table passed before the section headers that locate it, "
			  "further than %s from the end of the file",
			  s->o.max_tail);
	return err;
}

/*
 * The section header table is read: wants its notes and symbol table. A limit reached here
 * (-E2BIG) is kept for finish(), which reports it after the errors that come first.
 */
static int on_shdrs(struct elf_stream *s, struct want *t)
{
	int err;

	s->shdrs = t;
	s->nsecs = s->eh.shnum;
	s->shdrs_done = true;
	err = want_sections(s);
	if (!err)
		err = want_symtab(s);
	return err;
}

static int on_done(struct elf_stream *s, struct want *w)
{
	w->handled = true;
	switch (w->kind) {
	case W_PHDRS:
		return on_phdrs(s, w);
	case W_SHDR0:
		return on_shdr0(s, w);
	case W_SHDRS:
		return on_shdrs(s, w);
	default:
		return 0;
	}
}

/* Acts on every wanted range just completed, and on those these add (already passed). */
static int on_progress(struct elf_stream *s)
{
	bool again = true;
	size_t i;
	int err;

	if (!s->hdr_done) {
		err = check_ident(s);
		if (err || !s->hdr_size || s->pos < s->hdr_size)
			return err;
		err = parse_ehdr(s);
		if (err)
			return err;
	}
	while (again) {
		again = false;
		for (i = 0; i < s->nw; i++) {
			if (s->w[i].handled || !want_done(&s->w[i]))
				continue;
			err = on_done(s, &s->w[i]);
			if (err == -E2BIG && !s->defer)
				s->defer = err;
			else if (err && err != -E2BIG)
				return err;
			again = true;
		}
	}
	if (s->phdrs_done && s->shdrs_done && !s->ring_off) {
		/* every wanted range is known: nothing more can be needed from the past */
		s->ring_off = true;
		free(s->ring);
		s->ring = NULL;
	}
	return 0;
}

/* Bytes of the next step: up to the end of the ELF header or of a header table. */
static size_t step_len(const struct elf_stream *s, size_t len)
{
	uint64_t stop = UINT64_MAX, end;
	size_t i;

	if (!s->hdr_done)
		stop = s->hdr_size ? s->hdr_size : EI_NIDENT;
	for (i = 0; i < s->nw; i++) {
		end = s->w[i].off + s->w[i].len;
		if (s->w[i].kind <= W_SHDRS && !s->w[i].handled && end > s->pos && end < stop)
			stop = end;
	}
	return stop - s->pos < len ? (size_t)(stop - s->pos) : len;
}

static int consume(struct elf_stream *s, const uint8_t *p, size_t n)
{
	size_t i;
	int err;

	if (s->pos < HEAD_MAX)
		memcpy(s->head + s->pos, p, n < HEAD_MAX - s->pos ? n : HEAD_MAX - s->pos);
	if (!s->ring_off) {
		err = ring_put(s, p, n);
		if (err)
			return err;
	}
	for (i = 0; i < s->nw; i++) {
		err = want_take(s, &s->w[i], p, n);
		if (err)
			return err;
	}
	s->pos += n;
	return 0;
}

static int fail(struct elf_stream *s, int err)
{
	if (err == -EFBIG)
		why(s, err, "the file is larger than %s", s->o.max_bytes);
	s->err = err;
	return err;
}

int elf_stream__feed(struct elf_stream *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t n;
	int err;

	if (!s || (!buf && len))
		return -EINVAL;
	if (s->err)
		return s->err;
	if (s->finished)
		return -EALREADY;
	while (len) {
		n = step_len(s, len);
		if (n > s->o.max_bytes - s->pos)
			return fail(s, -EFBIG);
		err = consume(s, p, n);
		if (!err)
			err = on_progress(s);
		if (err)
			return fail(s, err);
		p += n;
		len -= n;
	}
	return 0;
}

/* ---- finish: notes, checks, symbols ---- */

/* The GNU build id in the notes at @w, hex-encoded into @out; true if found. */
static bool scan_notes(const struct want *w, char *out)
{
	uint64_t pad = w->align == 8 ? 8 : 4, off = 0, namesz, descsz, desc;
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = w->buf;
	uint64_t i;

	while (w->len - off >= 12) {
		namesz = rd(p + off, 4);
		descsz = rd(p + off + 4, 4);
		desc = off + 12 + ((namesz + pad - 1) & ~(pad - 1));
		if (desc > w->len || descsz > w->len - desc)
			return false;
		if (rd(p + off + 8, 4) == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + off + 12, "GNU", 4) && descsz >= 1 &&
		    descsz <= BUILD_ID_BYTES_MAX) {
			for (i = 0; i < descsz; i++) {
				out[2 * i] = digits[p[desc + i] >> 4];
				out[2 * i + 1] = digits[p[desc + i] & 0xf];
			}
			out[2 * descsz] = '\0';
			return true;
		}
		off = desc + ((descsz + pad - 1) & ~(pad - 1));
		if (off > w->len)
			return false;
	}
	return false;
}

static bool find_build_id(const struct elf_stream *s, char *out)
{
	size_t i;

	for (i = 0; i < s->nw; i++)
		if (s->w[i].kind == W_NOTE && want_done(&s->w[i]) && scan_notes(&s->w[i], out))
			return true;
	return false;
}

/* The file is whole: its headers, tables and sections lie inside it. */
static int check_whole(const struct elf_stream *s)
{
	uint64_t off, size, type;
	const uint8_t *p;
	uint32_t i;
	size_t k;

	if (!s->hdr_done)
		return -ENOEXEC;
	for (k = 0; k < s->nw; k++)
		if (s->w[k].kind <= W_SHDRS && !s->w[k].handled)
			return -ENOEXEC;
	for (i = 1; s->shdrs && i < s->nsecs; i++) {
		p = shdr(s, i);
		type = SH_TYPE(s, p);
		off = SH_OFFSET(s, p);
		size = SH_SIZE(s, p);
		if (type != SHT_NULL && type != SHT_NOBITS && (off > s->pos || size > s->pos - off))
			return -ENOEXEC;
	}
	return s->bad_link ? -ENOEXEC : 0;
}

/* The range an unsized function may take: to its section's end, at most SYMINDEX_UNSIZED_SPAN. */
static uint64_t unsized_span(uint64_t value, uint64_t sec_addr, uint64_t sec_size)
{
	uint64_t end = sec_addr + sec_size;

	if (end < sec_addr || value < sec_addr || value >= end)
		return 1;
	return end - value < SYMINDEX_UNSIZED_SPAN ? end - value : SYMINDEX_UNSIZED_SPAN;
}

/* Adds the symbol at @p if it is a named, defined function in an executable section. */
static int add_sym(const struct elf_stream *s, const uint8_t *p, struct symindex_build *b)
{
	uint64_t name = rd(p, 4), value = fld(s, p, 4, 4, 8, 8), size = fld(s, p, 8, 4, 16, 8);
	unsigned info = p[s->is64 ? 4 : 12], shndx = (unsigned)rd(p + (s->is64 ? 6 : 14), 2);
	unsigned type = ELF64_ST_TYPE(info), bind = ELF64_ST_BIND(info), flags = 0;
	const uint8_t *sec;

	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !value || shndx == SHN_UNDEF ||
	    (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX) || name >= s->strtab->len)
		return 0;
	if (!memchr(s->strtab->buf + name, '\0', s->strtab->len - name))
		return 0; /* a name running off the table */
	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		flags = SYMINDEX_GLOBAL;
	else if (bind == STB_WEAK)
		flags = SYMINDEX_WEAK;
	if (shndx != SHN_XINDEX) {
		if (shndx >= s->nsecs)
			return 0;
		sec = shdr(s, shndx);
		if (!(SH_FLAGS(s, sec) & SHF_EXECINSTR))
			return 0;
		if (!size) {
			size = unsized_span(value, SH_ADDR(s, sec), SH_SIZE(s, sec));
			flags |= SYMINDEX_UNSIZED;
		}
	} else if (!size) {
		size = SYMINDEX_UNSIZED_SPAN;
		flags |= SYMINDEX_UNSIZED;
	}
	if (!s->strtab->buf[name])
		return 0;
	return symindex_build__add(b, value, size, (const char *)s->strtab->buf + name,
				   s->strtab->len - name, flags);
}

static int read_symbols(struct elf_stream *s, const char *build_id, struct symindex_build **out)
{
	uint64_t ent = s->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), off;
	struct symindex_build *b;
	int err;

	err = symindex_build__new(build_id, s->o.max_functions, &b);
	if (err)
		return err;
	for (off = ent; off + ent <= s->symtab->len; off += ent) {
		err = add_sym(s, s->symtab->buf + off, b);
		if (err == -E2BIG && !s->why_err) {
			snprintf(s->why, sizeof(s->why), "the file names more than %zu functions",
				 s->o.max_functions);
			s->why_err = err;
		}
		if (err)
			goto err_free;
	}
	err = symindex_build__seal(b);
	if (!err && !symindex_build__count(b))
		err = -ELF_STREAM_ESTRIPPED;
	if (err)
		goto err_free;
	*out = b;
	return 0;

err_free:
	symindex_build__free(b);
	return err;
}

static int finish(struct elf_stream *s, struct symindex_build **out)
{
	char build_id[2 * BUILD_ID_BYTES_MAX + 1];
	int err;

	err = check_whole(s);
	if (err)
		return err;
	if (!find_build_id(s, build_id))
		return -ENODATA;
	if (s->defer)
		return s->defer;
	if (!s->symtab || !s->strtab)
		return -ELF_STREAM_ESTRIPPED;
	return read_symbols(s, build_id, out);
}

int elf_stream__finish(struct elf_stream *s, struct symindex_build **out)
{
	struct symindex_build *b = NULL;
	int err;

	if (!s || !out)
		return -EINVAL;
	if (s->err)
		return s->err;
	if (s->finished)
		return -EALREADY;
	err = finish(s, &b);
	if (err)
		return fail(s, err);
	s->finished = true;
	*out = b;
	return 0;
}

const char *elf_stream_refusal(int err)
{
	switch (err) {
	case 0:
		return "";
	case -ENOEXEC:
		return "this is not an ELF binary or debug file";
	case -ENODATA:
		return "the file has no build id, so SlideOps cannot tell which build it names";
	case -ELF_STREAM_ESTRIPPED:
		return "the file is stripped too";
	case -ELF_STREAM_EBIGENDIAN:
		return "the file is a big-endian ELF file; SlideOps reads little-endian ones only";
	case -EFBIG:
		return "the file is larger than 1 GB";
	case -E2BIG:
		return "the symbol table is larger than 64 MiB or names more than 4000000 "
		       "functions, or it lies more than 64 MiB before the end of the file, before "
		       "the section headers that locate it";
	case -ENOMEM:
		return "the agent ran out of memory reading the file";
	default:
		return "the file could not be read";
	}
}

const char *elf_stream__reason(const struct elf_stream *s)
{
	if (!s || !s->err)
		return "";
	return s->why_err == s->err ? s->why : elf_stream_refusal(s->err);
}
