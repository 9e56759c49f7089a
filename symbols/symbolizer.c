// SPDX-License-Identifier: Apache-2.0
#include "symbols/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "base/text.h"
#include "symbols/debugfile.h"
#include "symbols/dwarf_lines.h"
#include "symbols/elf_file.h"
#include "symbols/elf_symtab.h"
#include "symbols/gopclntab.h"
#include "symbols/kallsyms.h"
#include "symbols/perfmap.h"
#include "symbols/procmaps.h"

#define DEFAULT_PROC_ROOT "/proc"
#define DEFAULT_MAX_DSOS 512
#define DEFAULT_MAX_PROCESSES 8192
#define DEFAULT_MAX_PERF_MAPS 64
#define DEFAULT_MAX_PERF_MAP_BYTES (256ull << 20)
/* A process's perf map is read again (what was appended) at most this often. */
#define PERF_MAP_REREAD_MS 1000
#define DEFAULT_HOST_ROOT "/"
#define DEFAULT_MAX_DWARF 16
#define DEFAULT_MAX_DWARF_BYTES (64ull << 20)
/* A DWARF handle closed for the bounds may be opened again after this long. */
#define DWARF_REOPEN_MS 10000
/* The vdso is two to four pages; anything much larger is not one. */
#define VDSO_MAX_BYTES (1u << 20)

struct list {
	struct list *prev, *next;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static void list_init(struct list *l)
{
	l->prev = l->next = l;
}

static void list_del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

/* Adds @n at the tail of @head (the most recently used end). */
static void list_add_tail(struct list *n, struct list *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static void list_move_tail(struct list *n, struct list *head)
{
	list_del(n);
	list_add_tail(n, head);
}

struct dso_alias;

/* Where a DSO's DWARF is, to open it at the first pc that needs it. */
enum dw_kind {
	DW_SELF = 1, /* the mapped file itself (through map_files) */
	DW_ROOT,     /* its debug file, @path inside the process's root */
	DW_HOST,     /* its debug file, @path under the host root */
};

struct dw_src {
	enum dw_kind kind;
	uint64_t dev, ino; /* of the debug file, checked again at the open */
	char path[];
};

/* One ELF file's symbols, shared by every mapping of it. */
struct dso {
	struct elf_symtab *st;	/* NULL: not a readable ELF (a cached negative answer) */
	struct elf_symtab *dbg; /* stripped: the symbols of its debug file on the node, or NULL */
	struct gopclntab *go;	/* Go binaries: names and file:line from .gopclntab */
	struct dw_src *dws;	/* where its DWARF is, or NULL */
	struct dwarf_lines *dw; /* open while in symbolizer.dw_lru */
	uint64_t dw_next_ms;	/* earliest (re)open of the DWARF; UINT64_MAX: never */
	struct list dw_lru;	/* in symbolizer.dw_lru while dw is set */
	const char *build_id;	/* borrowed from st, or NULL */
	int refcnt;		/* mappings of process snapshots using it */
	bool in_bid_hash;
	struct dso *bid_next;	   /* build id hash chain */
	struct dso_alias *aliases; /* the (dev, inode) keys that lead here */
	struct list lru;	   /* in symbolizer.dso_lru; head = least recently used */
	/* what of the file was not read (size limits), noted again at every later use of it:
	 * a symbolizer kept between captures notes it in each capture that maps it */
	struct elf_skip skip, goskip;
};

struct dso_alias {
	uint64_t dev, ino;
	struct dso *dso;
	struct dso_alias *hnext; /* hash chain */
	struct dso_alias *dnext; /* the dso's aliases */
};

struct pmap {
	uint64_t start, end, offset;
	uint64_t ino;	 /* the mapped file's, for map_files opens after the snapshot */
	struct dso *dso; /* a reference, or NULL */
	uint32_t path;	 /* offset in proc.strs */
	bool vdso;
};

struct proc {
	int tgid;
	struct pmap *maps; /* executable mappings, sorted by start */
	size_t n;
	char *strs;
	struct proc *hnext;
	struct list lru;
	struct perfmap *pm;  /* its /tmp/perf-<nspid>.map, loaded at the first unnamed pc */
	uint64_t pm_next_ms; /* 0: never tried; else the earliest next read */
	struct list pm_lru;  /* in symbolizer.pm_lru while pm is set */
};

struct symbolizer {
	char *proc_root;
	size_t max_dsos, max_processes;
	size_t max_perf_maps;
	uint64_t max_perf_map_bytes;
	struct list pm_lru; /* processes holding a perf map; head = least recently used */

	struct proc **procs; /* hash by tgid */
	size_t procs_mask;
	struct list proc_lru;

	struct dso **bid_hash;
	struct dso_alias **alias_hash;
	size_t dso_mask;
	struct list dso_lru;

	char *host_root;
	size_t max_dwarf;
	uint64_t max_dwarf_bytes;
	struct list dw_lru; /* DSOs holding an open DWARF; head = least recently used */

	struct kallsyms *ksyms;
	int ksyms_err;
	bool ksyms_tried;

	struct symbolizer_stats stats;

	struct sym_refused refused[SYMBOLIZER_MAX_REFUSED];
	uint64_t refused_keys[SYMBOLIZER_MAX_REFUSED_COUNTED][2]; /* dev, inode */
	size_t nrefused; /* distinct files, at most SYMBOLIZER_MAX_REFUSED_COUNTED */
};

static size_t pow2_at_least(size_t n)
{
	size_t p = 64;

	while (p < n && p < ((size_t)1 << 24))
		p <<= 1;
	return p;
}

static size_t hash_u64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	v ^= v >> 33;
	return (size_t)v;
}

static size_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return (size_t)h;
}

/* ---- DSO cache ---- */

static struct dso *dso_find_bid(struct symbolizer *s, const char *bid)
{
	struct dso *d;

	for (d = s->bid_hash[hash_str(bid) & s->dso_mask]; d; d = d->bid_next)
		if (!strcmp(d->build_id, bid))
			return d;
	return NULL;
}

static struct dso *dso_find_alias(struct symbolizer *s, uint64_t dev, uint64_t ino)
{
	struct dso_alias *a;

	for (a = s->alias_hash[hash_u64(dev * 31 + ino) & s->dso_mask]; a; a = a->hnext)
		if (a->dev == dev && a->ino == ino)
			return a->dso;
	return NULL;
}

static int dso_add_alias(struct symbolizer *s, struct dso *d, uint64_t dev, uint64_t ino)
{
	struct dso_alias *a, **b;

	if (!ino || dso_find_alias(s, dev, ino))
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	b = &s->alias_hash[hash_u64(dev * 31 + ino) & s->dso_mask];
	*a = (struct dso_alias){
		.dev = dev, .ino = ino, .dso = d, .hnext = *b, .dnext = d->aliases
	};
	*b = a;
	d->aliases = a;
	return 0;
}

static void dso_unhash_bid(struct symbolizer *s, struct dso *d)
{
	struct dso **dp;

	if (!d->in_bid_hash)
		return;
	for (dp = &s->bid_hash[hash_str(d->build_id) & s->dso_mask]; *dp; dp = &(*dp)->bid_next) {
		if (*dp == d) {
			*dp = d->bid_next;
			break;
		}
	}
	d->in_bid_hash = false;
}

/*
 * Closes @d's DWARF handle, if open; it may be opened again @retry_ms from now (UINT64_MAX:
 * never).
 */
static void dw_close(struct symbolizer *s, struct dso *d, uint64_t retry_ms)
{
	if (!d->dw)
		return;
	list_del(&d->dw_lru);
	dwarf_lines__free(d->dw);
	d->dw = NULL;
	d->dw_next_ms = retry_ms == UINT64_MAX ? UINT64_MAX : clock_mono_ms() + retry_ms;
	s->stats.dwarfs--;
}

static void dso_evict(struct symbolizer *s, struct dso *d)
{
	struct dso_alias *a, *next, **pp;

	for (a = d->aliases; a; a = next) {
		next = a->dnext;
		for (pp = &s->alias_hash[hash_u64(a->dev * 31 + a->ino) & s->dso_mask]; *pp;
		     pp = &(*pp)->hnext) {
			if (*pp == a) {
				*pp = a->hnext;
				break;
			}
		}
		free(a);
	}
	dso_unhash_bid(s, d);
	list_del(&d->lru);
	dw_close(s, d, UINT64_MAX);
	elf_symtab__free(d->st);
	elf_symtab__free(d->dbg);
	gopclntab__free(d->go);
	free(d->dws);
	free(d);
	s->stats.dsos--;
}

/* Evicts least recently used, unreferenced DSOs while the cache is over its bound. */
static void dso_trim(struct symbolizer *s)
{
	struct list *l, *next;
	struct dso *d;

	for (l = s->dso_lru.next; l != &s->dso_lru && s->stats.dsos > s->max_dsos; l = next) {
		next = l->next;
		d = container_of(l, struct dso, lru);
		if (d->refcnt)
			continue;
		dso_evict(s, d);
		s->stats.dso_evictions++;
	}
}

static struct dso *dso_get(struct symbolizer *s, struct dso *d)
{
	d->refcnt++;
	list_move_tail(&d->lru, &s->dso_lru);
	return d;
}

static void dso_put(struct dso *d)
{
	if (!d)
		return;
	d->refcnt--;
}

/* Takes ownership of @st (may be NULL). Returns the new, cached, unreferenced DSO or NULL. */
static struct dso *dso_insert(struct symbolizer *s, struct elf_symtab *st)
{
	struct dso *d, **b;

	d = calloc(1, sizeof(*d));
	if (!d) {
		elf_symtab__free(st);
		return NULL;
	}
	d->st = st;
	d->build_id = elf_symtab__build_id(st);
	list_init(&d->lru);
	list_init(&d->dw_lru);
	list_add_tail(&d->lru, &s->dso_lru);
	if (d->build_id) {
		b = &s->bid_hash[hash_str(d->build_id) & s->dso_mask];
		d->bid_next = *b;
		*b = d;
		d->in_bid_hash = true;
	}
	s->stats.dsos++;
	return d;
}

/* ---- the record of refused files ---- */

/*
 * Records file (@dev, @ino) at @path as refused, with @reason (one of @skip's, or
 * safe_open_reason()). A file already recorded is not counted again: open refusals are not
 * cached, so every process mapping the file comes back here.
 */
static void refused_add(struct symbolizer *s, uint64_t dev, uint64_t ino, const char *path,
			const struct elf_skip *skip, const struct elf_skip *goskip,
			const char *reason)
{
	struct sym_refused *r;
	size_t i, len;

	for (i = 0; i < s->nrefused; i++)
		if (s->refused_keys[i][0] == dev && s->refused_keys[i][1] == ino)
			return;
	if (s->nrefused >= SYMBOLIZER_MAX_REFUSED_COUNTED)
		return;
	s->refused_keys[s->nrefused][0] = dev;
	s->refused_keys[s->nrefused][1] = ino;
	if (s->nrefused++ >= SYMBOLIZER_MAX_REFUSED)
		return;
	r = &s->refused[s->nrefused - 1];
	text_utf8_sanitize_copy(r->path, sizeof(r->path), path, strlen(path));
	if (reason) {
		snprintf(r->reason, sizeof(r->reason), "%s", reason);
		return;
	}
	r->size = true;
	len = skip && skip->kind ? elf_skip_format(skip, r->reason, sizeof(r->reason)) : 0;
	if (goskip && goskip->kind) {
		if (len && len + 2 < sizeof(r->reason)) {
			memcpy(r->reason + len, ", ", 3);
			len += 2;
		}
		if (!len || len + 2 < sizeof(r->reason))
			elf_skip_format(goskip, r->reason + len, sizeof(r->reason) - len);
	}
}

void symbolizer__forget_refused(struct symbolizer *s)
{
	s->nrefused = 0;
}

size_t symbolizer__refused(const struct symbolizer *s, const struct sym_refused **out,
			   size_t *total)
{
	size_t n = 0;

	if (s)
		n = s->nrefused < SYMBOLIZER_MAX_REFUSED ? s->nrefused : SYMBOLIZER_MAX_REFUSED;
	if (out)
		*out = s ? s->refused : NULL;
	if (total)
		*total = s ? s->nrefused : 0;
	return n;
}

/* Appends to @buf (@size bytes, @*len used) what @fmt says, as far as it fits. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

size_t symbolizer_refused_note(const struct sym_refused *r, size_t n, size_t total, char *buf,
			       size_t size)
{
	bool any_size = false, any_unsafe = false;
	size_t i, len = 0;

	if (!buf || !size)
		return 0;
	buf[0] = '\0';
	if (!total || (n && !r))
		return 0;
	n = n < total ? n : total;
	for (i = 0; i < n; i++) {
		any_size |= r[i].size;
		any_unsafe |= !r[i].size;
	}
	append(buf, size, &len, "%zu %s not read for names%s", total,
	       total == 1 ? "file was" : "files were",
	       any_size && any_unsafe ? " (over the size limits, or unsafe to open)" :
	       any_unsafe	      ? " (unsafe to open)" :
	       any_size		      ? " (over the size limits)" :
					"");
	for (i = 0; i < n; i++)
		append(buf, size, &len, "%s %s (%s)", i ? "," : ":", r[i].path, r[i].reason);
	if (total > n)
		append(buf, size, &len, ", and %zu more", total - n);
	append(buf, size, &len, "; %s show as addresses where no other table names them.",
	       total == 1 ? "frames in it" : "frames in them");
	/* A cut note ends on a whole character and says it was cut. */
	if (len + 1 >= size && size > 4) {
		len = text_utf8_truncate(buf, size - 4);
		memcpy(buf + len, "...", 4);
		len += 3;
	}
	return len;
}

/* ---- opening mapped files ---- */

static int open_mapped_file(struct symbolizer *s, int tgid, const struct procmaps_entry *e)
{
	/*
	 * The path may name a newer file than the mapped one (a package upgrade), and
	 * map_files may name a new mapping at the same range: the inode must be the mapped one.
	 */
	const struct safe_open_opts o = { .ino = e->inode };
	int fd;

	/* map_files opens the mapped file itself (even deleted) without walking any path. */
	fd = safe_open_map_file(s->proc_root, (uint32_t)tgid, e->start, e->end, &o);
	if (fd >= 0 || fd == -ENOTSUP || fd == -ESTALE)
		return fd;
	if (e->deleted || e->path[0] != '/')
		return -ENOENT;
	return safe_open_in_proc_root(s->proc_root, (uint32_t)tgid, e->path, &o);
}

/* ---- Go: names, file:line and inlined frames from .gopclntab ---- */

/*
 * The pc-line table of the ELF on @fd if it is a Go binary (stripped or not), else NULL.
 * Without section headers the segments are scanned for it only when the Go build id note
 * says it is there.
 */
static struct gopclntab *go_load(int fd, const struct elf_symtab *st, int tgid, const char *path,
				 struct elf_skip *skip)
{
	struct gopclntab_opts opts = { .scan = elf_symtab__go_build_id(st) != NULL, .skip = skip };
	struct gopclntab *go = NULL;
	int err;

	err = gopclntab__from_fd(fd, &opts, &go);
	if (err && err != -ENOENT)
		pr_debug_errno(err, "symbolizer: .gopclntab tgid=%d path=%s", tgid, path);
	return err ? NULL : go;
}

/*
 * Names @vaddr of Go binary @go into @out[0..max) from @base (the mapping's frame): innermost
 * first, the physical function last. Returns the count, or 0 if @vaddr is in no Go function
 * (cgo's C code: then .symtab names it).
 */
static size_t go_frames(const struct gopclntab *go, uint64_t vaddr, const struct sym_frame *base,
			struct sym_frame *out, size_t max)
{
	struct go_frame gf[GOPCLNTAB_MAX_DEPTH];
	int n, i;

	n = gopclntab__lookup(go, vaddr, gf, max < GOPCLNTAB_MAX_DEPTH ? max : GOPCLNTAB_MAX_DEPTH);
	for (i = 0; i < n; i++) {
		out[i] = *base;
		out[i].name = gf[i].name;
		out[i].file = gf[i].file;
		out[i].line = gf[i].line;
		out[i].go = true;
	}
	return n > 0 ? (size_t)n : 0;
}

/* ---- names and lines from the node: debug files (debugfile.h), DWARF (dwarf_lines.h) ---- */

static struct dw_src *dw_src_new(enum dw_kind kind, const char *path, uint64_t dev, uint64_t ino)
{
	size_t len = strlen(path) + 1;
	struct dw_src *w = malloc(sizeof(*w) + len);

	if (!w)
		return NULL;
	w->kind = kind;
	w->dev = dev;
	w->ino = ino;
	memcpy(w->path, path, len);
	return w;
}

/*
 * What the node holds for the ELF on @fd beyond its own tables: for a stripped one, the
 * symbols of its debug file in @dbg; where its DWARF is in @dws (the file itself, else that
 * debug file). NULL when there is none. Not for Go binaries: .gopclntab names them.
 */
static void dso_node_debug(struct symbolizer *s, int tgid, const struct procmaps_entry *e, int fd,
			   const struct elf_symtab *st, struct elf_symtab **dbg,
			   struct dw_src **dws)
{
	const struct debugfile_query q = {
		.proc_root = s->proc_root,
		.host_root = s->host_root,
		.tgid = (uint32_t)tgid,
		.path = e->path,
		.build_id = elf_symtab__build_id(st),
		.bin_fd = fd,
	};
	struct debugfile_stats ds = { 0 };
	struct debugfile_found found;
	int err;

	*dbg = NULL;
	*dws = dwarf_lines_probe(fd) == 1 ? dw_src_new(DW_SELF, "", 0, 0) : NULL;
	if (!elf_symtab__stripped(st))
		return;
	err = debugfile_find(&q, &found, &ds);
	s->stats.debug_refused += ds.refused;
	if (err)
		return;
	err = elf_symtab__from_fd(found.fd, NULL, dbg);
	if (err)
		pr_debug_errno(err, "symbolizer: debug file %s of %s", found.path, e->path);
	else
		s->stats.debug_files++;
	if (!*dws && dwarf_lines_probe(found.fd) == 1)
		*dws = dw_src_new(found.where == DEBUGFILE_ON_HOST ? DW_HOST : DW_ROOT, found.path,
				  found.dev, found.ino);
	close(found.fd);
}

/* Returns a referenced DSO for file mapping @e, or NULL if it cannot be read. */
static struct dso *dso_for_file(struct symbolizer *s, int tgid, const struct procmaps_entry *e)
{
	uint64_t dev = (uint64_t)e->dev_major << 32 | e->dev_minor;
	struct elf_skip skip = { ELF_SKIP_NONE }, goskip = { ELF_SKIP_NONE };
	struct elf_symtab *st = NULL, *dbg = NULL;
	struct gopclntab *go = NULL;
	struct dso *d, *poorer = NULL;
	struct dw_src *dws = NULL;
	struct elf_ident id;
	int fd, err;

	d = dso_find_alias(s, dev, e->inode);
	if (d) {
		s->stats.dso_hits++;
		if (d->skip.kind != ELF_SKIP_NONE || d->goskip.kind != ELF_SKIP_NONE)
			refused_add(s, dev, e->inode, e->path, &d->skip, &d->goskip, NULL);
		return dso_get(s, d);
	}
	fd = open_mapped_file(s, tgid, e);
	if (fd < 0) {
		s->stats.dso_open_failures++;
		if (safe_open_reason(fd)) {
			s->stats.dso_refused++;
			refused_add(s, dev, e->inode, e->path, NULL, NULL, safe_open_reason(fd));
		}
		pr_debug_errno(fd, "symbolizer: open tgid=%d path=%s", tgid, e->path);
		return NULL;
	}
	/*
	 * The same build in another container (another inode): reuse it, unless this copy has
	 * a .symtab the cached one lacks. Then the richer one takes over the build id; the
	 * poorer one lives on for the mappings that use it.
	 */
	if (!elf_read_ident(fd, &id) && id.build_id[0]) {
		poorer = dso_find_bid(s, id.build_id);
		if (poorer && (!elf_symtab__stripped(poorer->st) || !id.has_symtab)) {
			close(fd);
			s->stats.dso_hits++;
			if (poorer->skip.kind != ELF_SKIP_NONE ||
			    poorer->goskip.kind != ELF_SKIP_NONE)
				refused_add(s, dev, e->inode, e->path, &poorer->skip,
					    &poorer->goskip, NULL);
			if (dso_add_alias(s, poorer, dev, e->inode))
				return NULL;
			return dso_get(s, poorer);
		}
	}
	err = elf_symtab__from_fd(fd, &(struct elf_symtab_opts){ .skip = &skip }, &st);
	if (!err)
		go = go_load(fd, st, tgid, e->path, &goskip);
	if (!err && !go)
		dso_node_debug(s, tgid, e, fd, st, &dbg, &dws);
	close(fd);
	if (err == -ENOMEM)
		return NULL;
	/* A failed load is cached below: the file is recorded once, as it is read once. */
	if (skip.kind != ELF_SKIP_NONE || goskip.kind != ELF_SKIP_NONE)
		refused_add(s, dev, e->inode, e->path, &skip, &goskip, NULL);
	s->stats.dso_loads++;
	if (err)
		pr_debug_errno(err, "symbolizer: load tgid=%d path=%s", tgid, e->path);
	else if (poorer)
		dso_unhash_bid(s, poorer);
	/* A failed parse is cached too (st NULL): the file will not be read again. */
	d = dso_insert(s, err ? NULL : st);
	if (!d) {
		gopclntab__free(go);
		elf_symtab__free(dbg);
		free(dws);
		return NULL;
	}
	d->go = go;
	d->dbg = dbg;
	d->dws = dws;
	d->skip = skip;
	d->goskip = goskip;
	if (dso_add_alias(s, d, dev, e->inode)) {
		dso_evict(s, d);
		return NULL;
	}
	return dso_get(s, d);
}

/* The vdso is read from the process memory and shared by build id. */
static struct dso *dso_for_vdso(struct symbolizer *s, int tgid, const struct procmaps_entry *e)
{
	struct elf_symtab *st = NULL;
	size_t len = e->end - e->start;
	char path[PATH_MAX];
	struct dso *d = NULL;
	const char *bid;
	ssize_t n;
	void *buf;
	int fd;

	if (len > VDSO_MAX_BYTES)
		return NULL;
	snprintf(path, sizeof(path), "%s/%d/mem", s->proc_root, tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(len);
	if (!buf)
		goto out_close;
	n = pread(fd, buf, len, (off_t)e->start);
	if (n > 0 && !elf_symtab__from_memory(buf, (size_t)n, NULL, &st)) {
		bid = elf_symtab__build_id(st);
		d = bid ? dso_find_bid(s, bid) : NULL;
		if (d) {
			elf_symtab__free(st);
			s->stats.dso_hits++;
		} else {
			s->stats.dso_loads++;
			d = dso_insert(s, st);
		}
		if (d)
			dso_get(s, d);
	}
	free(buf);
out_close:
	close(fd);
	return d;
}

/* ---- process snapshots ---- */

static void proc_free(struct proc *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		dso_put(p->maps[i].dso);
	perfmap__free(p->pm);
	free(p->maps);
	free(p->strs);
	free(p);
}

static struct proc **proc_slot(struct symbolizer *s, int tgid)
{
	struct proc **pp;

	for (pp = &s->procs[hash_u64((uint64_t)tgid) & s->procs_mask]; *pp; pp = &(*pp)->hnext)
		if ((*pp)->tgid == tgid)
			break;
	return pp;
}

static void proc_remove(struct symbolizer *s, struct proc *p)
{
	struct proc **pp = proc_slot(s, p->tgid);

	if (*pp == p)
		*pp = p->hnext;
	list_del(&p->lru);
	if (p->pm) {
		list_del(&p->pm_lru);
		s->stats.perf_maps--;
	}
	s->stats.processes--;
	proc_free(p);
}

struct collect {
	struct symbolizer *s;
	struct proc *p;
	size_t cap;
	size_t strs_len, strs_cap;
	uint32_t last_path;
	int err;
};

static int add_str(struct collect *c, const char *str, uint32_t *off)
{
	size_t len = strlen(str) + 1, cap;
	char *tmp;

	/* Mappings of one file are adjacent: share the previous copy. */
	if (c->strs_len && !strcmp(c->p->strs + c->last_path, str)) {
		*off = c->last_path;
		return 0;
	}
	if (c->strs_len + len > UINT32_MAX)
		return -E2BIG;
	if (c->strs_len + len > c->strs_cap) {
		cap = c->strs_cap ? c->strs_cap * 2 : 1024;
		while (cap < c->strs_len + len)
			cap *= 2;
		tmp = realloc(c->p->strs, cap);
		if (!tmp)
			return -ENOMEM;
		c->p->strs = tmp;
		c->strs_cap = cap;
	}
	memcpy(c->p->strs + c->strs_len, str, len);
	*off = c->last_path = (uint32_t)c->strs_len;
	c->strs_len += len;
	return 0;
}

static int collect_map(void *ctx, const struct procmaps_entry *e)
{
	struct collect *c = ctx;
	struct proc *p = c->p;
	struct pmap *m, *tmp;
	const char *name;
	int err;

	if (!(e->perms & PROCMAPS_EXEC))
		return 0;
	/* The kernel lists mappings sorted and disjoint; keep the snapshot so for bsearch. */
	if (p->n && e->start < p->maps[p->n - 1].end)
		return 0;
	if (p->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 32;
		tmp = realloc(p->maps, c->cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		p->maps = tmp;
	}
	m = &p->maps[p->n];
	*m = (struct pmap){ .start = e->start, .end = e->end, .offset = e->offset, .ino = e->inode };
	name = e->path[0] ? e->path : "[anon]";
	err = add_str(c, name, &m->path);
	if (err)
		return err;
	p->n++;
	m->vdso = !strcmp(e->path, "[vdso]");
	if (m->vdso)
		m->dso = dso_for_vdso(c->s, p->tgid, e);
	else if (e->inode && e->path[0] == '/')
		m->dso = dso_for_file(c->s, p->tgid, e);
	return 0;
}

int symbolizer__add_process(struct symbolizer *s, int tgid)
{
	struct collect c = { .s = s };
	struct proc *p, **slot, *old;
	int err;

	if (!s || tgid <= 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->tgid = tgid;
	list_init(&p->lru);
	list_init(&p->pm_lru);
	c.p = p;
	err = procmaps_foreach(s->proc_root, tgid, collect_map, &c);
	if (err < 0) {
		proc_free(p);
		dso_trim(s);
		if (err == -ESRCH)
			pr_debug("symbolizer: tgid=%d exited before its snapshot", tgid);
		return err;
	}
	slot = proc_slot(s, tgid);
	old = *slot;
	if (old)
		proc_remove(s, old);
	slot = proc_slot(s, tgid);
	p->hnext = *slot;
	*slot = p;
	list_add_tail(&p->lru, &s->proc_lru);
	s->stats.processes++;
	while (s->stats.processes > s->max_processes) {
		old = container_of(s->proc_lru.next, struct proc, lru);
		proc_remove(s, old);
		s->stats.process_evictions++;
	}
	dso_trim(s);
	return 0;
}

int symbolizer__sweep(struct symbolizer *s)
{
	struct list *l, *next;
	struct proc *p;
	struct dso *d;
	int n = 0;

	for (l = s->proc_lru.next; l != &s->proc_lru; l = next) {
		next = l->next;
		p = container_of(l, struct proc, lru);
		if (proc_exists(s->proc_root, (uint32_t)p->tgid))
			continue;
		proc_remove(s, p);
		n++;
	}
	/* DWARF handles of files no snapshot maps any more: their memory goes first. */
	for (l = s->dw_lru.next; l != &s->dw_lru; l = next) {
		next = l->next;
		d = container_of(l, struct dso, dw_lru);
		if (!d->refcnt)
			dw_close(s, d, 0);
	}
	dso_trim(s);
	return n;
}

static struct proc *proc_find(struct symbolizer *s, int tgid)
{
	return *proc_slot(s, tgid);
}

/* ---- perf maps: names a JIT writes itself (perfmap.h) ---- */

static void pm_drop(struct symbolizer *s, struct proc *p)
{
	list_del(&p->pm_lru);
	perfmap__free(p->pm);
	p->pm = NULL;
	p->pm_next_ms = 0;
	s->stats.perf_maps--;
	s->stats.perf_map_evictions++;
}

/* Frees the least recently used perf maps but @keep's while over the count or byte bound. */
static void pm_trim(struct symbolizer *s, struct proc *keep)
{
	struct list *l, *next;
	uint64_t bytes = 0;
	struct proc *p;

	for (l = s->pm_lru.next; l != &s->pm_lru; l = l->next)
		bytes += perfmap__mem(container_of(l, struct proc, pm_lru)->pm);
	for (l = s->pm_lru.next; l != &s->pm_lru; l = next) {
		next = l->next;
		p = container_of(l, struct proc, pm_lru);
		if (s->stats.perf_maps <= s->max_perf_maps && bytes <= s->max_perf_map_bytes)
			break;
		if (p == keep)
			continue;
		bytes -= perfmap__mem(p->pm);
		pm_drop(s, p);
	}
}

/*
 * Reads (the new part of) @p's perf map, at most once per PERF_MAP_REREAD_MS: a process
 * without one costs one refused open a second. Returns the map, or NULL when there is none.
 */
static struct perfmap *pm_refresh(struct symbolizer *s, struct proc *p)
{
	uint64_t now = clock_mono_ms();
	int err;

	if (p->pm_next_ms && now < p->pm_next_ms)
		return p->pm;
	p->pm_next_ms = now + PERF_MAP_REREAD_MS;
	if (!p->pm) {
		if (perfmap__new(&(struct perfmap_opts){ .proc_root = s->proc_root }, &p->pm))
			return NULL;
		list_add_tail(&p->pm_lru, &s->pm_lru);
		s->stats.perf_maps++;
	}
	err = perfmap__load(p->pm, (uint32_t)p->tgid);
	s->stats.perf_map_reads++;
	if (err && err != -ENOENT && err != -ESRCH) {
		s->stats.perf_map_refused++;
		pr_debug_errno(err, "symbolizer: perf map of tgid=%d", p->tgid);
	}
	list_move_tail(&p->pm_lru, &s->pm_lru);
	pm_trim(s, p);
	return p->pm;
}

/* Names @ip of @p from its perf map into @out. Returns true when it does. */
static bool pm_frame(struct symbolizer *s, struct proc *p, uint64_t ip, struct sym_frame *out)
{
	struct perfmap *pm = pm_refresh(s, p);
	const char *name = pm ? perfmap__lookup(pm, ip, NULL) : NULL;

	if (!name)
		return false;
	s->stats.perf_map_hits++;
	*out = (struct sym_frame){ .name = name, .dso = SYMBOLIZER_PERF_MAP_DSO, .dso_addr = ip };
	return true;
}

/* ---- DWARF handles: opened at the first pc that needs one, a bounded number kept ---- */

/* Opens the file @m->dso's DWARF is in, as process @p sees it (checked against its inode). */
static int dw_open_file(struct symbolizer *s, const struct proc *p, const struct pmap *m)
{
	const struct dw_src *w = m->dso->dws;
	struct safe_open_opts o = { .ino = w->ino, .dev = w->dev };
	int fd;

	switch (w->kind) {
	case DW_SELF:
		o = (struct safe_open_opts){ .ino = m->ino };
		fd = safe_open_map_file(s->proc_root, (uint32_t)p->tgid, m->start, m->end, &o);
		if (fd >= 0 || fd == -ENOTSUP || fd == -ESTALE)
			return fd;
		return safe_open_in_proc_root(s->proc_root, (uint32_t)p->tgid, p->strs + m->path,
					      &o);
	case DW_ROOT:
		return safe_open_in_proc_root(s->proc_root, (uint32_t)p->tgid, w->path, &o);
	default:
		return safe_open_in_root_path(s->host_root, w->path, &o);
	}
}

/* Closes the least recently used DWARF handles but @keep's while over the bounds. */
static void dw_trim(struct symbolizer *s, struct dso *keep)
{
	struct list *l, *next;
	uint64_t bytes = 0;
	struct dso *d;

	for (l = s->dw_lru.next; l != &s->dw_lru; l = l->next)
		bytes += dwarf_lines__mem(container_of(l, struct dso, dw_lru)->dw);
	for (l = s->dw_lru.next; l != &s->dw_lru; l = next) {
		next = l->next;
		d = container_of(l, struct dso, dw_lru);
		if (s->stats.dwarfs <= s->max_dwarf && bytes <= s->max_dwarf_bytes)
			break;
		if (d == keep)
			continue;
		bytes -= dwarf_lines__mem(d->dw);
		dw_close(s, d, DWARF_REOPEN_MS);
		s->stats.dwarf_evictions++;
	}
}

/* The DWARF of @m's DSO, opened now if it has one and was not tried; NULL if none. */
static struct dwarf_lines *dw_get(struct symbolizer *s, const struct proc *p, const struct pmap *m)
{
	struct dwarf_lines_opts o = { 0 };
	struct dso *d = m->dso;
	int fd, err;

	if (d->dw) {
		list_move_tail(&d->dw_lru, &s->dw_lru);
		return d->dw;
	}
	if (!d->dws || d->dw_next_ms == UINT64_MAX || clock_mono_ms() < d->dw_next_ms)
		return NULL;
	d->dw_next_ms = UINT64_MAX;
	fd = dw_open_file(s, p, m);
	/* No one file over the whole budget: it would be kept, as the newest, whatever it holds. */
	o.max_bytes = s->max_dwarf_bytes < DWARF_LINES_MAX_BYTES_DEFAULT ? s->max_dwarf_bytes : 0;
	err = fd < 0 ? fd : dwarf_lines__from_fd(fd, &o, &d->dw);
	if (fd >= 0)
		close(fd);
	if (err) {
		s->stats.dwarf_failures++;
		pr_debug_errno(err, "symbolizer: DWARF of %s (tgid=%d)", p->strs + m->path,
			       p->tgid);
		return NULL;
	}
	s->stats.dwarf_loads++;
	s->stats.dwarfs++;
	list_add_tail(&d->dw_lru, &s->dw_lru);
	dw_trim(s, d);
	return d->dw;
}

/*
 * The frames of @vaddr in @m's DSO from its DWARF, like go_frames(); the function holding it
 * keeps @base's name (from .symtab) when it has one, so that profiles name it the same way
 * with or without DWARF. Returns the count, or 0 without DWARF there.
 */
static size_t dw_frames(struct symbolizer *s, const struct proc *p, const struct pmap *m,
			uint64_t vaddr, const struct sym_frame *base, struct sym_frame *out,
			size_t max)
{
	struct dwarf_frame df[DWARF_LINES_MAX_DEPTH];
	struct dwarf_lines *dw = dw_get(s, p, m);
	int n, i;

	if (!dw)
		return 0;
	n = dwarf_lines__lookup(dw, vaddr, df,
				max < DWARF_LINES_MAX_DEPTH ? max : DWARF_LINES_MAX_DEPTH);
	for (i = 0; i < n; i++) {
		out[i] = *base;
		out[i].name = i == n - 1 && base->name ? base->name : df[i].name;
		out[i].file = df[i].file;
		out[i].line = df[i].line;
	}
	return n > 0 ? (size_t)n : 0;
}

/* The name of @vaddr: the debug file's symbols first, then the file's own. */
static const char *dso_lookup(struct dso *d, uint64_t vaddr)
{
	const char *name = d->dbg ? elf_symtab__lookup(d->dbg, vaddr, NULL) : NULL;

	return name ? name : elf_symtab__lookup(d->st, vaddr, NULL);
}

int symbolizer__user_inline(struct symbolizer *s, int tgid, uint64_t ip, struct sym_frame *out,
			    size_t max)
{
	struct sym_frame f = { 0 };
	size_t lo = 0, hi, mid, n;
	const struct pmap *m;
	struct elf_symtab *st;
	uint64_t off, vaddr;
	struct proc *p;
	int err;

	if (!s || !out || !max || tgid <= 0)
		return -EINVAL;
	p = proc_find(s, tgid);
	if (!p) {
		err = symbolizer__add_process(s, tgid);
		if (err)
			return err;
		p = proc_find(s, tgid);
		if (!p)
			return -ESRCH;
	}
	list_move_tail(&p->lru, &s->proc_lru);
	hi = p->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Code generated after the snapshot is in no mapping of it: a JIT's perf map may name it. */
	if (!lo || ip >= p->maps[lo - 1].end)
		return pm_frame(s, p, ip, out) ? 1 : -ENOENT;
	m = &p->maps[lo - 1];
	off = ip - m->start + m->offset;
	f.dso = p->strs + m->path;
	f.dso_addr = off;
	if (m->dso && m->dso->st) {
		st = m->dso->st;
		list_move_tail(&m->dso->lru, &s->dso_lru);
		f.build_id = m->dso->build_id;
		/*
		 * Only an ELF we read can be called stripped; the vdso (dynsym only) is the
		 * kernel's, not a binary anyone could rebuild with symbols. One whose debug file
		 * was found on the node is named: not stripped.
		 */
		f.stripped = elf_symtab__stripped(st) && !m->dso->dbg && !m->vdso;
		if (!elf_symtab__file_to_vaddr(st, off, &vaddr)) {
			f.dso_addr = vaddr;
			n = m->dso->go ? go_frames(m->dso->go, vaddr, &f, out, max) : 0;
			if (n)
				return (int)n;
			f.name = dso_lookup(m->dso, vaddr);
			n = m->vdso ? 0 : dw_frames(s, p, m, vaddr, &f, out, max);
			if (n)
				return (int)n;
		}
	}
	/* Anonymous executable memory (JIT code), or a file we could not read as an ELF. */
	if ((!m->dso || !m->dso->st) && !m->vdso && pm_frame(s, p, ip, out))
		return 1;
	*out = f;
	return 1;
}

/* With room for one frame, the inlined ones are left out: the physical function remains. */
int symbolizer__user(struct symbolizer *s, int tgid, uint64_t ip, struct sym_frame *out)
{
	int n = symbolizer__user_inline(s, tgid, ip, out, 1);

	return n < 0 ? n : 0;
}

/* ---- kernel ---- */

int symbolizer__kernel_status(struct symbolizer *s)
{
	char path[PATH_MAX];

	if (!s)
		return -EINVAL;
	if (!s->ksyms_tried) {
		s->ksyms_tried = true;
		snprintf(path, sizeof(path), "%s/kallsyms", s->proc_root);
		s->ksyms_err = kallsyms__load(path, &s->ksyms);
		if (s->ksyms_err == -EPERM)
			pr_info("symbolizer: kernel addresses hidden by kptr_restrict; kernel frames "
				"stay unnamed");
		else if (s->ksyms_err)
			pr_warn_errno(s->ksyms_err, "symbolizer: load %s", path);
	}
	return s->ksyms_err;
}

int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out)
{
	const struct ksym *k;

	if (!s || !out)
		return -EINVAL;
	if (symbolizer__kernel_status(s))
		return -ENOENT;
	k = kallsyms__find(s->ksyms, ip);
	if (!k)
		return -ENOENT;
	*out = (struct sym_frame){
		.name = k->name,
		.dso = k->module ? k->module : "[kernel.kallsyms]",
		.dso_addr = ip,
		.kernel = true,
	};
	return 0;
}

/* ---- lifecycle ---- */

int symbolizer__new(const struct symbolizer_opts *opts, struct symbolizer **out)
{
	struct symbolizer *s;
	int err;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	list_init(&s->proc_lru);
	list_init(&s->dso_lru);
	list_init(&s->pm_lru);
	list_init(&s->dw_lru);
	s->max_dwarf = opts && opts->max_dwarf ? opts->max_dwarf : DEFAULT_MAX_DWARF;
	s->max_dwarf_bytes = opts && opts->max_dwarf_bytes ? opts->max_dwarf_bytes :
							     DEFAULT_MAX_DWARF_BYTES;
	s->host_root = strdup(opts && opts->host_root ? opts->host_root : DEFAULT_HOST_ROOT);
	s->max_perf_maps = opts && opts->max_perf_maps ? opts->max_perf_maps :
							 DEFAULT_MAX_PERF_MAPS;
	s->max_perf_map_bytes = opts && opts->max_perf_map_bytes ? opts->max_perf_map_bytes :
								   DEFAULT_MAX_PERF_MAP_BYTES;
	s->max_dsos = opts && opts->max_dsos ? opts->max_dsos : DEFAULT_MAX_DSOS;
	s->max_processes = opts && opts->max_processes ? opts->max_processes :
							 DEFAULT_MAX_PROCESSES;
	s->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : DEFAULT_PROC_ROOT);
	s->procs_mask = pow2_at_least(s->max_processes) - 1;
	s->dso_mask = pow2_at_least(2 * s->max_dsos) - 1;
	s->procs = calloc(s->procs_mask + 1, sizeof(*s->procs));
	s->bid_hash = calloc(s->dso_mask + 1, sizeof(*s->bid_hash));
	s->alias_hash = calloc(s->dso_mask + 1, sizeof(*s->alias_hash));
	if (!s->proc_root || !s->host_root || !s->procs || !s->bid_hash || !s->alias_hash) {
		err = -ENOMEM;
		goto err_free;
	}
	*out = s;
	return 0;

err_free:
	symbolizer__free(s);
	return err;
}

void symbolizer__free(struct symbolizer *s)
{
	struct list *l;

	if (!s)
		return;
	while (s->proc_lru.next && s->proc_lru.next != &s->proc_lru)
		proc_remove(s, container_of(s->proc_lru.next, struct proc, lru));
	while (s->dso_lru.next && (l = s->dso_lru.next) != &s->dso_lru)
		dso_evict(s, container_of(l, struct dso, lru));
	kallsyms__free(s->ksyms);
	free(s->procs);
	free(s->bid_hash);
	free(s->alias_hash);
	free(s->proc_root);
	free(s->host_root);
	free(s);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	if (!s || !out)
		return;
	*out = s->stats;
}
