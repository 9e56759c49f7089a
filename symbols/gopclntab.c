// SPDX-License-Identifier: Apache-2.0
/*
 * The layouts follow the Go runtime (runtime/symtab.go, runtime2.go: pcHeader, _func,
 * inlinedCall, pcvalue, funcdata) and the linker that writes them (cmd/link/internal/ld/
 * pcln.go) of Go 1.16, 1.18 and 1.20; debug/gosym reads the same tables but knows nothing of
 * inlining. Every offset read from the file is checked against the region it must lie in.
 */
#include "symbols/gopclntab.h"

#include <byteswap.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "symbols/elf_file.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu

/* runtime/symtab.go */
#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

/* Bounds on hostile input. */
#define MAX_NFUNC (1u << 24)
#define MAX_INL_PER_FUNC (1u << 16)
/* 8 bytes each: 32 MiB at most (a 16 MB go binary has about 100000). */
#define MAX_INL_TOTAL (1u << 22)
/* pc-value steps decoded at load to size the inline trees, all functions together. */
#define MAX_LOAD_STEPS (1u << 27)
#define SCAN_CHUNK (1u << 20)
#define SCAN_MAX_CANDIDATES 16
/* Data segments searched for runtime.firstmoduledata. */
#define MODDATA_MAX_SCAN (64u << 20)
/* moduledata words up to gofunc (1.20 added covctrs, ecovctrs before end). */
#define MODDATA_TEXT_WORD 22
#define MODDATA_GOFUNC_118 38
#define MODDATA_GOFUNC_120 40
#define RDCACHE_SIZE (256u << 10)

struct inl_entry {
	int32_t name_off;   /* into funcnametab */
	uint32_t parent_pc; /* offset from the function's entry */
};

struct inl_tree {
	uint32_t start, count; /* in gopclntab.inl; count 0: none */
};

struct gopclntab {
	uint8_t *data; /* the table, NUL-terminated */
	uint64_t len;
	uint64_t foff, vaddr; /* file offset and virtual address of data[0] */
	unsigned ver, ptrsize, quantum;
	bool big;
	uint64_t nfunc;
	uint64_t text_start; /* 1.18+: base of the entry offsets */
	/* Regions of data: funcnametab, cutab, filetab, pctab, then pclntable to the end. */
	uint64_t fname_off, fname_len, cu_off, cu_len, file_off, file_len, pc_off, pc_len, ln_off;
	struct inl_tree *trees; /* per function, or NULL */
	struct inl_entry *inl;
	size_t ninl;
};

struct fn {
	uint64_t entry;
	int32_t name_off;
	uint32_t pcfile, pcln, npcdata, cu_off;
	uint8_t nfuncdata;
	uint64_t pcdata; /* offset in data of the pcdata offsets */
};

static uint32_t get32(bool big, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	if (big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		v = bswap_32(v);
	return v;
}

static uint64_t getw(bool big, unsigned ptrsize, const uint8_t *p)
{
	uint64_t v;

	if (ptrsize == 4)
		return get32(big, p);
	memcpy(&v, p, 8);
	if (big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		v = bswap_64(v);
	return v;
}

/* Bounded reads inside the table. */
static int rd32(const struct gopclntab *t, uint64_t off, uint32_t *v)
{
	if (off > t->len || t->len - off < 4)
		return -EINVAL;
	*v = get32(t->big, t->data + off);
	return 0;
}

static int rdw(const struct gopclntab *t, uint64_t off, uint64_t *v)
{
	if (off > t->len || t->len - off < t->ptrsize)
		return -EINVAL;
	*v = getw(t->big, t->ptrsize, t->data + off);
	return 0;
}

/* ---- header ---- */

static unsigned version_of(uint32_t magic)
{
	switch (magic) {
	case MAGIC_116:
		return 116;
	case MAGIC_118:
		return 118;
	case MAGIC_120:
		return 120;
	default:
		return 0;
	}
}

/*
 * Checks the header at @p (@avail bytes readable there, @len the table's extent) and fills
 * the layout fields of @t. Returns 0, -EPROTONOSUPPORT (Go < 1.16) or -EINVAL.
 */
static int parse_header(struct gopclntab *t, const uint8_t *p, uint64_t avail, uint64_t len,
			unsigned elf_ptrsize)
{
	uint64_t w[8], need, entsz;
	unsigned nw, i, ps;
	uint32_t magic;

	if (avail < 8)
		return -EINVAL;
	magic = get32(t->big, p);
	if (magic == MAGIC_12)
		return -EPROTONOSUPPORT;
	t->ver = version_of(magic);
	if (!t->ver || p[4] || p[5])
		return -EINVAL;
	t->quantum = p[6];
	ps = t->ptrsize = p[7];
	if ((t->quantum != 1 && t->quantum != 2 && t->quantum != 4) || ps != elf_ptrsize)
		return -EINVAL;
	nw = t->ver == 116 ? 7 : 8;
	need = 8 + (uint64_t)nw * ps;
	if (avail < need || len < need)
		return -EINVAL;
	for (i = 0; i < nw; i++)
		w[i] = getw(t->big, ps, p + 8 + i * ps);
	t->nfunc = w[0];
	if (t->ver != 116)
		t->text_start = w[2];
	i = t->ver == 116 ? 2 : 3;
	t->fname_off = w[i];
	t->cu_off = w[i + 1];
	t->file_off = w[i + 2];
	t->pc_off = w[i + 3];
	t->ln_off = w[i + 4];
	/* The linker writes the tables in this order; the sizes follow from it. */
	if (t->fname_off < need || t->cu_off < t->fname_off || t->file_off < t->cu_off ||
	    t->pc_off < t->file_off || t->ln_off < t->pc_off || t->ln_off >= len)
		return -EINVAL;
	t->fname_len = t->cu_off - t->fname_off;
	t->cu_len = t->file_off - t->cu_off;
	t->file_len = t->pc_off - t->file_off;
	t->pc_len = t->ln_off - t->pc_off;
	entsz = t->ver == 116 ? 2ull * ps : 8;
	if (!t->nfunc || t->nfunc > MAX_NFUNC || (t->nfunc + 1) * entsz > len - t->ln_off)
		return -EINVAL;
	return 0;
}

/* ---- functab and _func ---- */

/* Entry pc and _func offset (in data) of functab row @i (0..nfunc, nfunc is the end). */
static int ftab_row(const struct gopclntab *t, uint64_t i, uint64_t *entry, uint64_t *func)
{
	uint64_t off, fo;
	uint32_t e32, f32;

	if (t->ver == 116) {
		off = t->ln_off + i * 2 * t->ptrsize;
		if (rdw(t, off, entry) || rdw(t, off + t->ptrsize, &fo))
			return -EINVAL;
	} else {
		off = t->ln_off + i * 8;
		if (rd32(t, off, &e32) || rd32(t, off + 4, &f32))
			return -EINVAL;
		*entry = t->text_start + e32;
		fo = f32;
	}
	if (func) {
		if (fo >= t->len - t->ln_off)
			return -EINVAL;
		*func = t->ln_off + fo;
	}
	return 0;
}

static int read_fn(const struct gopclntab *t, uint64_t i, struct fn *f)
{
	uint64_t base, hdr, fixed, entry;
	uint32_t v[8];
	unsigned k;

	if (ftab_row(t, i, &entry, &base))
		return -EINVAL;
	hdr = t->ver == 116 ? t->ptrsize : 4;
	fixed = hdr + 32 + (t->ver >= 120 ? 4 : 0) + 4;
	if (base > t->len || t->len - base < fixed)
		return -EINVAL;
	for (k = 0; k < 8; k++)
		v[k] = get32(t->big, t->data + base + hdr + 4 * k);
	*f = (struct fn){
		.entry = entry,
		.name_off = (int32_t)v[0],
		.pcfile = v[4],
		.pcln = v[5],
		.npcdata = v[6],
		.cu_off = v[7],
		.nfuncdata = t->data[base + fixed - 1],
		.pcdata = base + fixed,
	};
	return 0;
}

static const char *func_name(const struct gopclntab *t, int32_t off)
{
	if (off < 0 || (uint64_t)off >= t->fname_len)
		return NULL;
	/* data is NUL-terminated: a string missing its NUL ends there at the latest. */
	return (const char *)t->data + t->fname_off + off;
}

/* Index of the function holding @pc, or -ENOENT. */
static int64_t find_func(const struct gopclntab *t, uint64_t pc)
{
	uint64_t lo = 0, hi = t->nfunc, mid, e;

	if (ftab_row(t, 0, &e, NULL) || pc < e || ftab_row(t, t->nfunc, &e, NULL) || pc >= e)
		return -ENOENT;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (ftab_row(t, mid, &e, NULL))
			return -EINVAL;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t)lo;
}

/* ---- pc-value tables ---- */

/*
 * Go's readvarint, at most 5 bytes for 32 bits (bits past 32 in the fifth byte are dropped, as
 * Go does). Returns bytes read, 0 if malformed (cut off at @end, or longer than 5 bytes).
 */
static unsigned varint(const struct gopclntab *t, uint64_t p, uint64_t end, uint32_t *v)
{
	const uint8_t *q = t->data + p;
	uint64_t val;

	if (p >= end)
		return 0;
	if (leb128_u64(&q, t->data + (end - p > 5 ? p + 5 : end), &val))
		return 0;
	*v = (uint32_t)val;
	return (unsigned)(q - (t->data + p));
}

struct pcv {
	uint64_t p, end; /* in data */
	uint64_t pc;
	int32_t val;
	bool first;
};

static int pcv_init(const struct gopclntab *t, struct pcv *it, uint32_t off, uint64_t entry)
{
	if (!off || off >= t->pc_len)
		return -ENOENT;
	*it = (struct pcv){ .p = t->pc_off + off,
			    .end = t->pc_off + t->pc_len,
			    .pc = entry,
			    .val = -1,
			    .first = true };
	return 0;
}

/* runtime.step: 1 and the next (pc, val) pair, 0 at the end, -EINVAL if malformed. */
static int pcv_step(const struct gopclntab *t, struct pcv *it)
{
	uint32_t uvdelta, pcdelta;
	unsigned n;

	if (it->p >= it->end)
		return -EINVAL;
	if (!t->data[it->p] && !it->first)
		return 0;
	it->first = false;
	n = varint(t, it->p, it->end, &uvdelta);
	if (!n)
		return -EINVAL;
	it->p += n;
	n = varint(t, it->p, it->end, &pcdelta);
	if (!n)
		return -EINVAL;
	it->p += n;
	/* Zig-zag delta, wrapping as Go's int32 does. */
	it->val = (int32_t)((uint32_t)it->val + (-(uvdelta & 1) ^ (uvdelta >> 1)));
	it->pc += (uint64_t)(uint32_t)(pcdelta * t->quantum);
	return 1;
}

/* runtime.pcvalue: the value of table @off of the function at @entry for @pc. */
static int pcvalue(const struct gopclntab *t, uint32_t off, uint64_t entry, uint64_t pc,
		   int32_t *val)
{
	struct pcv it;
	int err;

	err = pcv_init(t, &it, off, entry);
	if (err)
		return err;
	while ((err = pcv_step(t, &it)) > 0) {
		if (pc < it.pc) {
			*val = it.val;
			return 0;
		}
	}
	return err ? err : -ENOENT;
}

static int pcdata_off(const struct gopclntab *t, const struct fn *f, uint32_t table, uint32_t *off)
{
	if (table >= f->npcdata)
		return -ENOENT;
	return rd32(t, f->pcdata + 4ull * table, off);
}

static const char *file_name(const struct gopclntab *t, const struct fn *f, int32_t fileno)
{
	uint64_t idx;
	uint32_t fo;

	if (fileno < 0)
		return NULL;
	idx = (uint64_t)f->cu_off + (uint32_t)fileno;
	if (idx >= t->cu_len / 4 || rd32(t, t->cu_off + idx * 4, &fo) || fo >= t->file_len)
		return NULL;
	return (const char *)t->data + t->file_off + fo;
}

static void file_line(const struct gopclntab *t, const struct fn *f, uint64_t pc,
		      struct go_frame *fr)
{
	int32_t v;

	fr->file = NULL;
	fr->line = 0;
	if (!pcvalue(t, f->pcfile, f->entry, pc, &v))
		fr->file = file_name(t, f, v);
	if (!pcvalue(t, f->pcln, f->entry, pc, &v) && v > 0)
		fr->line = (uint32_t)v;
}

/* ---- lookup ---- */

int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct go_frame *frames, size_t max)
{
	struct go_frame tmp[GOPCLNTAB_MAX_DEPTH];
	const struct inl_tree *tree = NULL;
	const struct inl_entry *e;
	uint64_t cur = pc;
	int32_t ix = -1;
	uint32_t off;
	size_t n = 0, i;
	struct fn f;
	int64_t fi;

	if (!t || !frames || !max)
		return -EINVAL;
	fi = find_func(t, pc);
	if (fi < 0)
		return (int)fi;
	if (read_fn(t, (uint64_t)fi, &f))
		return -EINVAL;
	tmp[GOPCLNTAB_MAX_DEPTH - 1].name = func_name(t, f.name_off);
	if (!tmp[GOPCLNTAB_MAX_DEPTH - 1].name)
		return -EINVAL;
	if (t->trees && t->trees[fi].count && !pcdata_off(t, &f, PCDATA_INLTREEINDEX, &off)) {
		tree = &t->trees[fi];
		if (pcvalue(t, off, f.entry, cur, &ix))
			ix = -1;
	}
	/*
	 * As the runtime's inline unwinder: the innermost name is the tree entry's, its
	 * file:line the pc's; the caller's position is that of parentPc, whose own tree index
	 * names the next level (-1: the physical function).
	 */
	while (tree && ix >= 0 && (uint32_t)ix < tree->count && n < GOPCLNTAB_MAX_DEPTH - 1) {
		e = &t->inl[tree->start + (uint32_t)ix];
		tmp[n].name = func_name(t, e->name_off);
		if (!tmp[n].name)
			break;
		tmp[n].inlined = true;
		file_line(t, &f, cur, &tmp[n]);
		n++;
		cur = f.entry + e->parent_pc;
		if (pcvalue(t, off, f.entry, cur, &ix))
			ix = -1;
	}
	tmp[n].name = tmp[GOPCLNTAB_MAX_DEPTH - 1].name;
	tmp[n].inlined = false;
	file_line(t, &f, cur, &tmp[n]);
	n++;
	if (n <= max) {
		memcpy(frames, tmp, n * sizeof(*tmp));
		return (int)n;
	}
	for (i = 0; i < max - 1; i++)
		frames[i] = tmp[i];
	frames[max - 1] = tmp[n - 1];
	return (int)max;
}

/* ---- reading other parts of the file by virtual address ---- */

struct rdcache {
	const struct elf_file *ef;
	uint8_t *buf;
	uint64_t off, len, cap;
};

/* Buffers for reading @ef in pieces of at most @max bytes: no larger than the file. */
static uint64_t buf_size(const struct elf_file *ef, uint64_t max)
{
	uint64_t size = elf_file__size(ef);

	return size < 4096 ? 4096 : size < max ? size : max;
}

static int vaddr_to_off(const struct elf_file *ef, uint64_t vaddr, uint64_t n, uint64_t *off)
{
	const Elf64_Phdr *ph;
	size_t i;

	for (i = 0; (ph = elf_file__phdr(ef, i)); i++) {
		if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr)
			continue;
		if (vaddr - ph->p_vaddr > ph->p_filesz || n > ph->p_filesz - (vaddr - ph->p_vaddr))
			continue;
		*off = ph->p_offset + (vaddr - ph->p_vaddr);
		return 0;
	}
	return -ENOENT;
}

static int off_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
	const Elf64_Phdr *ph;
	size_t i;

	for (i = 0; (ph = elf_file__phdr(ef, i)); i++) {
		if (ph->p_type == PT_LOAD && off >= ph->p_offset &&
		    off - ph->p_offset < ph->p_filesz) {
			*vaddr = ph->p_vaddr + (off - ph->p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

static int cache_read(struct rdcache *c, uint64_t vaddr, uint64_t n, void *dst)
{
	uint64_t off, size = elf_file__size(c->ef);
	int err;

	err = vaddr_to_off(c->ef, vaddr, n, &off);
	if (err)
		return err;
	if (n > c->cap)
		return elf_file__read_into(c->ef, off, n, dst);
	if (off < c->off || off + n > c->off + c->len) {
		if (off > size)
			return -EINVAL;
		c->len = size - off < c->cap ? size - off : c->cap;
		c->off = off;
		err = elf_file__read_into(c->ef, off, c->len, c->buf);
		if (err) {
			c->len = 0;
			return err;
		}
		if (n > c->len)
			return -EINVAL;
	}
	memcpy(dst, c->buf + (off - c->off), n);
	return 0;
}

/* ---- inline trees ---- */

/*
 * Finds runtime.firstmoduledata (1.18+) and reads its text and gofunc: it starts with the
 * address of the table and the funcnametab slice, and its text is textStart when the header
 * has one (Go 1.26 stopped filling it in). Returns 0, -ENOENT (not found: a PIE, whose
 * pointers are relocated at run time, or no such data), -ENOMEM.
 */
static int find_moduledata(const struct gopclntab *t, const struct elf_file *ef, uint64_t *text,
			   uint64_t *gofunc)
{
	unsigned ps = t->ptrsize, gw = t->ver >= 120 ? MODDATA_GOFUNC_120 : MODDATA_GOFUNC_118;
	uint64_t start, end, pos, scanned = 0, n, i, off, chunk;
	uint8_t md[(MODDATA_GOFUNC_120 + 1) * 8];
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	uint8_t *buf;
	size_t k, nregions = 0;
	uint64_t regions[2 * 64];
	int err = -ENOENT;

	if (elf_file__section(ef, ".noptrdata", &sh) > 0 && sh->sh_type != SHT_NOBITS) {
		regions[0] = sh->sh_offset;
		regions[1] = sh->sh_offset + sh->sh_size;
		nregions = 1;
	} else {
		for (k = 0; (ph = elf_file__phdr(ef, k)) && nregions < 64; k++) {
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
				continue;
			regions[2 * nregions] = ph->p_offset;
			regions[2 * nregions + 1] = ph->p_offset + ph->p_filesz;
			nregions++;
		}
	}
	chunk = buf_size(ef, SCAN_CHUNK);
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	for (k = 0; k < nregions && err == -ENOENT; k++) {
		start = regions[2 * k];
		end = regions[2 * k + 1];
		if (end > elf_file__size(ef) || end < start)
			continue;
		start = (start + ps - 1) / ps * ps;
		for (pos = start; pos < end && scanned < MODDATA_MAX_SCAN && err == -ENOENT;
		     pos += n) {
			n = end - pos < chunk ? end - pos : chunk;
			scanned += n;
			if (elf_file__read_into(ef, pos, n, buf))
				break;
			for (i = 0; i + ps <= n; i += ps) {
				if (getw(t->big, ps, buf + i) != t->vaddr)
					continue;
				off = pos + i;
				if (elf_file__read_into(ef, off, (gw + 1) * ps, md))
					continue;
				if (getw(t->big, ps, md + ps) != t->vaddr + t->fname_off ||
				    (t->text_start &&
				     getw(t->big, ps, md + MODDATA_TEXT_WORD * ps) !=
					     t->text_start))
					continue;
				*text = getw(t->big, ps, md + MODDATA_TEXT_WORD * ps);
				*gofunc = getw(t->big, ps, md + gw * ps);
				err = 0;
				break;
			}
		}
	}
	free(buf);
	return err;
}

/* Address of @f's FUNCDATA_InlTree, or -ENOENT. */
static int inltree_addr(const struct gopclntab *t, const struct fn *f, uint64_t gofunc,
			uint64_t *addr)
{
	uint64_t p = f->pcdata + 4ull * f->npcdata;
	uint32_t off;

	if (f->nfuncdata <= FUNCDATA_INLTREE || f->npcdata > t->len)
		return -ENOENT;
	if (t->ver != 116) {
		if (rd32(t, p + 4 * FUNCDATA_INLTREE, &off) || off == UINT32_MAX)
			return -ENOENT;
		*addr = gofunc + off;
		return 0;
	}
	/* 1.16/1.17: pointers, 8-aligned in memory on 64-bit. */
	if (t->ptrsize == 8 && ((t->vaddr + p) & 4))
		p += 4;
	if (rdw(t, p + (uint64_t)t->ptrsize * FUNCDATA_INLTREE, addr) || !*addr)
		return -ENOENT;
	return 0;
}

/* Largest value of pc-value table @off of @f (-1 if none); *budget bounds the steps. */
static int32_t table_max(const struct gopclntab *t, uint32_t off, uint64_t entry, uint64_t *budget)
{
	int32_t max = -1;
	struct pcv it;

	if (pcv_init(t, &it, off, entry))
		return -1;
	while (*budget && pcv_step(t, &it) > 0) {
		(*budget)--;
		if (it.val > max)
			max = it.val;
	}
	return max;
}

/*
 * Copies the inline trees the functions use (sized by the largest PCDATA_InlTreeIndex of
 * each) into t->inl. Best effort: a tree that cannot be read leaves its function without
 * inlined frames; only -ENOMEM fails.
 */
static int load_inline(struct gopclntab *t, const struct elf_file *ef, uint64_t gofunc)
{
	unsigned esz = t->ver >= 120 ? 16 : 20, noff = t->ver >= 120 ? 4 : 12;
	unsigned poff = t->ver >= 120 ? 8 : 16;
	uint64_t i, addr, budget = MAX_LOAD_STEPS;
	struct rdcache c = { .ef = ef };
	size_t cap = 0, j;
	struct inl_entry *tmp;
	uint8_t raw[20];
	int32_t max;
	uint32_t off;
	struct fn f;
	int err = 0;

	if (t->ver != 116 && !gofunc)
		return 0;
	t->trees = calloc(t->nfunc, sizeof(*t->trees));
	c.cap = buf_size(ef, RDCACHE_SIZE);
	c.buf = malloc(c.cap);
	if (!t->trees || !c.buf) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nfunc && budget; i++) {
		if (read_fn(t, i, &f) || inltree_addr(t, &f, gofunc, &addr) ||
		    pcdata_off(t, &f, PCDATA_INLTREEINDEX, &off))
			continue;
		max = table_max(t, off, f.entry, &budget);
		if (max < 0 || (uint32_t)max >= MAX_INL_PER_FUNC ||
		    t->ninl + (uint32_t)max + 1 > MAX_INL_TOTAL)
			continue;
		if (t->ninl + (uint32_t)max + 1 > cap) {
			cap = cap ? 2 * cap : 4096;
			while (cap < t->ninl + (uint32_t)max + 1)
				cap *= 2;
			tmp = realloc(t->inl, cap * sizeof(*tmp));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			t->inl = tmp;
		}
		for (j = 0; j <= (uint32_t)max; j++) {
			if (cache_read(&c, addr + j * esz, esz, raw))
				break;
			t->inl[t->ninl + j] = (struct inl_entry){
				.name_off = (int32_t)get32(t->big, raw + noff),
				.parent_pc = get32(t->big, raw + poff),
			};
		}
		if (j <= (uint32_t)max)
			continue;
		t->trees[i] = (struct inl_tree){ .start = (uint32_t)t->ninl, .count = j };
		t->ninl += j;
	}
	if (!t->ninl) {
		free(t->trees);
		t->trees = NULL;
	}
out:
	free(c.buf);
	return err;
}

/* ---- locating the table ---- */

/* Checks that the functab is sorted, so lookups can bisect it. */
static int check_ftab(const struct gopclntab *t)
{
	uint64_t i, e, prev = 0;

	for (i = 0; i <= t->nfunc; i++) {
		if (ftab_row(t, i, &e, NULL) || e < prev)
			return -EINVAL;
		prev = e;
	}
	return 0;
}

/* Reads the table at file offset @off, @len bytes at most, and checks it. */
static int load_at(struct gopclntab *t, const struct elf_file *ef, uint64_t off, uint64_t len,
		   unsigned ps)
{
	void *p;
	int err;

	if (len > GOPCLNTAB_MAX_READ)
		len = GOPCLNTAB_MAX_READ;
	err = elf_file__read(ef, off, len, &p);
	if (err)
		return err;
	t->data = p;
	t->len = len;
	t->foff = off;
	err = parse_header(t, t->data, len, len, ps);
	if (!err)
		err = check_ftab(t);
	if (err) {
		free(t->data);
		t->data = NULL;
	}
	return err;
}

/* No section headers: the read-only segments, 4 bytes at a time, for a plausible header. */
static int scan_segments(struct gopclntab *t, const struct elf_file *ef, unsigned ps)
{
	uint64_t pos, end, n, i, scanned = 0, chunk;
	struct gopclntab probe;
	unsigned tries = 0;
	const Elf64_Phdr *ph;
	uint8_t *buf;
	size_t k;
	int err = -ENOENT, e;

	chunk = buf_size(ef, SCAN_CHUNK);
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	for (k = 0; (ph = elf_file__phdr(ef, k)) && err == -ENOENT; k++) {
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) ||
		    ph->p_offset > elf_file__size(ef) ||
		    ph->p_filesz > elf_file__size(ef) - ph->p_offset)
			continue;
		end = ph->p_offset + ph->p_filesz;
		for (pos = (ph->p_offset + 3) & ~3ull;
		     pos + 8 <= end && scanned < GOPCLNTAB_MAX_SCAN && err == -ENOENT; pos += n) {
			/* Chunks overlap by a header so none is missed at a boundary. */
			n = end - pos < chunk ? end - pos : chunk;
			if (elf_file__read_into(ef, pos, n, buf)) {
				err = -EIO;
				break;
			}
			scanned += n;
			for (i = 0; i + 8 <= n && err == -ENOENT; i += 4) {
				probe = (struct gopclntab){ .big = t->big };
				if (!version_of(get32(t->big, buf + i)) ||
				    parse_header(&probe, buf + i, n - i, end - pos - i, ps))
					continue;
				if (++tries > SCAN_MAX_CANDIDATES)
					break;
				e = load_at(t, ef, pos + i, end - pos - i, ps);
				if (!e)
					err = 0;
				else if (e == -ENOMEM)
					err = e;
			}
			if (n == end - pos || tries > SCAN_MAX_CANDIDATES)
				break;
			n -= 128;
		}
	}
	free(buf);
	return err;
}

int gopclntab__from_elf(const struct elf_file *ef, const struct gopclntab_opts *opts,
			struct gopclntab **out)
{
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh = NULL, *text;
	uint64_t md_text = 0, gofunc = 0;
	struct gopclntab *t;
	unsigned ps, i;
	int err = -ENOENT;

	if (!ef || !out)
		return -EINVAL;
	eh = elf_file__ehdr(ef);
	ps = elf_file__class(ef) == ELFCLASS64 ? 8 : 4;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->big = eh->e_ident[EI_DATA] == ELFDATA2MSB;
	for (i = 0; i < 2 && err == -ENOENT; i++)
		if (elf_file__section(ef, names[i], &sh) > 0)
			err = 0;
	if (!err) {
		if (sh->sh_type == SHT_NOBITS) {
			err = -EINVAL;
			goto err_free;
		}
		if (sh->sh_size > GOPCLNTAB_MAX_READ || !elf_file__backed(ef, sh->sh_size)) {
			if (sh->sh_size > GOPCLNTAB_MAX_READ)
				elf_skip_set(opts ? opts->skip : NULL, ELF_SKIP_OVER_LIMIT,
					     names[i - 1], sh->sh_size, GOPCLNTAB_MAX_READ);
			else
				elf_skip_set(opts ? opts->skip : NULL, ELF_SKIP_SPARSE,
					     names[i - 1], sh->sh_size, elf_file__allocated(ef));
			err = -E2BIG;
			goto err_free;
		}
		err = load_at(t, ef, sh->sh_offset, sh->sh_size, ps);
		if (err)
			goto err_free;
		t->vaddr = sh->sh_addr;
	} else if (opts && opts->scan) {
		err = scan_segments(t, ef, ps);
		if (err)
			goto err_free;
		if (off_to_vaddr(ef, t->foff, &t->vaddr))
			t->vaddr = 0;
	} else {
		goto err_free;
	}
	if (t->ver != 116) {
		err = find_moduledata(t, ef, &md_text, &gofunc);
		if (err == -ENOMEM)
			goto err_free;
		/* No textStart (Go 1.26+, or a PIE's, relocated at run time): moduledata's. */
		if (!err && !t->text_start)
			t->text_start = md_text;
		/* A PIE: runtime.text starts .text when Go linked it. */
		if (!t->text_start && elf_file__section(ef, ".text", &text) > 0)
			t->text_start = text->sh_addr;
	}
	err = load_inline(t, ef, gofunc);
	if (err)
		goto err_free;
	*out = t;
	return 0;

err_free:
	gopclntab__free(t);
	return err;
}

int gopclntab__from_fd(int fd, const struct gopclntab_opts *opts, struct gopclntab **out)
{
	struct elf_file *ef;
	int err;

	if (!out)
		return -EINVAL;
	err = elf_file__open(fd, &(struct elf_file_opts){ .skip = opts ? opts->skip : NULL }, &ef);
	if (err)
		return err;
	err = gopclntab__from_elf(ef, opts, out);
	elf_file__free(ef);
	return err;
}

void gopclntab__free(struct gopclntab *t)
{
	if (!t)
		return;
	free(t->data);
	free(t->trees);
	free(t->inl);
	free(t);
}

unsigned gopclntab__version(const struct gopclntab *t)
{
	return t ? t->ver : 0;
}

size_t gopclntab__nfunc(const struct gopclntab *t)
{
	return t ? (size_t)t->nfunc : 0;
}

bool gopclntab__has_inline(const struct gopclntab *t)
{
	return t && t->trees;
}

void gopclntab__text_range(const struct gopclntab *t, uint64_t *start, uint64_t *end)
{
	uint64_t s = 0, e = 0;

	if (t && (ftab_row(t, 0, &s, NULL) || ftab_row(t, t->nfunc, &e, NULL)))
		s = e = 0;
	if (start)
		*start = s;
	if (end)
		*end = e;
}
