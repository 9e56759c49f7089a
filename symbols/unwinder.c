// SPDX-License-Identifier: Apache-2.0
#include "symbols/unwinder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "symbols/elf_file.h"
#include "symbols/procmaps.h"

_Static_assert(sizeof(struct uw_row) == sizeof(struct unwind_row) &&
		       offsetof(struct uw_row, cfa_offset) ==
			       offsetof(struct unwind_row, cfa_offset) &&
		       offsetof(struct uw_row, rbp_offset) ==
			       offsetof(struct unwind_row, rbp_offset) &&
		       offsetof(struct uw_row, cfa_type) == offsetof(struct unwind_row, cfa_type) &&
		       offsetof(struct uw_row, rbp_type) == offsetof(struct unwind_row, rbp_type),
	       "uw_row mirrors unwind_row");
_Static_assert(sizeof(struct uw_mapping) == 40, "uw_mapping layout is shared with BPF");
_Static_assert(sizeof(struct uw_proc) == 8 + 40 * UW_MAX_MAPPINGS,
	       "uw_proc layout is shared with BPF");
_Static_assert(sizeof(struct uw_stack) == 16 + 8 * UW_MAX_DEPTH,
	       "uw_stack layout is shared with BPF");
_Static_assert((UW_MAX_MAPPINGS & (UW_MAX_MAPPINGS - 1)) == 0, "the BPF search masks indexes");
_Static_assert((1u << UW_MAPPING_SEARCH_STEPS) > UW_MAX_MAPPINGS, "mapping search steps");
_Static_assert((1ull << UW_ROW_SEARCH_STEPS) > UW_MAX_ROWS, "row search steps");
_Static_assert(UNWIND_CFA_NONE == 0 && UNWIND_CFA_RSP == 1 && UNWIND_CFA_RBP == 2 &&
		       UNWIND_CFA_PLT == 3 && UNWIND_CFA_SIGNAL == 4 && UNWIND_CFA_END == 5 &&
		       UNWIND_RBP_SAME == 0 && UNWIND_RBP_OFFSET == 1 && UNWIND_RBP_UNDEFINED == 2,
	       "bpf/unwind.h hard-codes these values");

#define DEFAULT_MAX_TABLES 2048
#define MAX_EXEC_SEGMENTS 4
#define BUILD_ID_MAX 64 /* bytes of a GNU build id we key on (20 for SHA-1) */
#define VDSO_KEY_INO UINT64_MAX

/* One ELF file's table and where it sits in the rows map. */
struct uw_table {
	/* identity: the file as stat() sees it, and its build id when it has one */
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len;
	/* the executable PT_LOAD segments, for the load bias of a mapping */
	struct {
		uint64_t offset, vaddr, filesz;
	} seg[MAX_EXEC_SEGMENTS];
	uint32_t nseg;
	uint32_t first_row, nrows;
	uint32_t flags;	 /* UW_MAP_NO_CFI, or UW_MAP_NO_TABLE (failed: cached, not retried) */
	uint32_t refcnt; /* mapping lists using it */
	uint64_t last_used;
	bool has_rows; /* first_row/nrows are allocated in the rows map */
};

struct uw_pentry {
	uint32_t tgid;
	uint32_t ntables;
	struct uw_table **tables; /* one reference each (duplicates allowed) */
};

struct range {
	uint32_t start, len;
};

struct unwinder {
	struct unwinder_maps maps;
	struct unwinder_ops ops;
	void *ops_ctx;
	const char *proc_root;
	uint32_t nrows_cap, max_procs, max_tables, max_table_rows;
	uint32_t *batch_keys; /* bpf_write_rows(): ROWS_BATCH keys */
	struct range *free;   /* free row ranges, sorted by start, coalesced */
	size_t nfree, free_cap;
	struct uw_table **tables;
	size_t ntables;
	struct uw_pentry *procs;
	size_t nprocs, procs_cap;
	uint64_t clock;
	struct unwinder_stats st;
	struct uw_proc scratch; /* the list being built (5 KiB: not on the stack) */
	bool bpf_maps;		/* ops are the BPF maps (not a test seam) */
	bool vdso_tried;
	struct uw_table *vdso; /* held by the unwinder itself (one reference) */
	uint64_t vdso_size;
};

/* Rows a batch update writes at a time (keys and values on the heap: 192 KiB). */
#define ROWS_BATCH 16384

/*
 * Writes rows with BPF_MAP_UPDATE_BATCH rather than through an mmap of the map: the map's
 * pages (16 MiB for UW_DEFAULT_ROWS) are kernel memory either way, but mapped they would all
 * count in the agent's resident set.
 */
static int bpf_write_rows(void *ctx, uint32_t start, const struct unwind_row *rows, uint32_t n,
			  uint32_t capacity)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = 0, .flags = 0);
	struct unwinder *uw = ctx;
	uint32_t done = 0, i, count;

	if ((uint64_t)start + n > capacity)
		return -ERANGE;
	if (!uw->batch_keys) {
		uw->batch_keys = malloc(ROWS_BATCH * sizeof(*uw->batch_keys));
		if (!uw->batch_keys)
			return -ENOMEM;
	}
	while (done < n) {
		count = n - done < ROWS_BATCH ? n - done : ROWS_BATCH;
		for (i = 0; i < count; i++)
			uw->batch_keys[i] = start + done + i;
		if (bpf_map_update_batch(uw->maps.rows_fd, uw->batch_keys, rows + done, &count,
					 &opts))
			return -errno;
		done += count;
	}
	return 0;
}

static int bpf_set_proc(void *ctx, uint32_t tgid, const struct uw_proc *proc)
{
	struct unwinder *uw = ctx;

	if (bpf_map_update_elem(uw->maps.procs_fd, &tgid, proc, BPF_ANY))
		return -errno;
	return 0;
}

static int bpf_del_proc(void *ctx, uint32_t tgid)
{
	struct unwinder *uw = ctx;

	if (bpf_map_delete_elem(uw->maps.procs_fd, &tgid))
		return -errno;
	return 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- row ranges ------------------------------------------------------------------------- */

static int free_insert(struct unwinder *uw, uint32_t start, uint32_t len)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < uw->nfree && uw->free[i].start < start; i++)
		;
	/* merge with the previous and/or the next range */
	if (i > 0 && uw->free[i - 1].start + uw->free[i - 1].len == start) {
		uw->free[i - 1].len += len;
		if (i < uw->nfree && start + len == uw->free[i].start) {
			uw->free[i - 1].len += uw->free[i].len;
			memmove(&uw->free[i], &uw->free[i + 1],
				(uw->nfree - i - 1) * sizeof(*uw->free));
			uw->nfree--;
		}
		return 0;
	}
	if (i < uw->nfree && start + len == uw->free[i].start) {
		uw->free[i].start = start;
		uw->free[i].len += len;
		return 0;
	}
	if (uw->nfree == uw->free_cap) {
		size_t cap = uw->free_cap ? uw->free_cap * 2 : 64;
		struct range *p = realloc(uw->free, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		uw->free = p;
		uw->free_cap = cap;
	}
	memmove(&uw->free[i + 1], &uw->free[i], (uw->nfree - i) * sizeof(*uw->free));
	uw->free[i].start = start;
	uw->free[i].len = len;
	uw->nfree++;
	return 0;
}

/* First fit. Returns 0 and the start in *start, or -ENOSPC. */
static int rows_alloc(struct unwinder *uw, uint32_t len, uint32_t *start)
{
	size_t i;

	for (i = 0; i < uw->nfree; i++) {
		if (uw->free[i].len < len)
			continue;
		*start = uw->free[i].start;
		uw->free[i].start += len;
		uw->free[i].len -= len;
		if (!uw->free[i].len) {
			memmove(&uw->free[i], &uw->free[i + 1],
				(uw->nfree - i - 1) * sizeof(*uw->free));
			uw->nfree--;
		}
		return 0;
	}
	return -ENOSPC;
}

/* --- tables ----------------------------------------------------------------------------- */

static void table_release_rows(struct unwinder *uw, struct uw_table *t)
{
	if (!t->has_rows)
		return;
	/* the range goes back even if the list could not grow: it is only lost space */
	free_insert(uw, t->first_row, t->nrows);
	uw->st.rows_used -= t->nrows;
	t->has_rows = false;
}

static void table_remove(struct unwinder *uw, size_t i)
{
	struct uw_table *t = uw->tables[i];

	table_release_rows(uw, t);
	free(t);
	uw->tables[i] = uw->tables[--uw->ntables];
}

/* Evicts the least recently used table nobody uses. Returns 0, or -ENOSPC when all are used. */
static int evict_one(struct unwinder *uw)
{
	size_t i, best = SIZE_MAX;

	for (i = 0; i < uw->ntables; i++) {
		if (uw->tables[i]->refcnt)
			continue;
		if (best == SIZE_MAX || uw->tables[i]->last_used < uw->tables[best]->last_used)
			best = i;
	}
	if (best == SIZE_MAX)
		return -ENOSPC;
	table_remove(uw, best);
	uw->st.tables_evicted++;
	return 0;
}

static void table_put(struct unwinder *uw, struct uw_table *t)
{
	if (t && t->refcnt)
		t->refcnt--;
	(void)uw;
}

static bool same_file(const struct uw_table *t, const struct stat *sb)
{
	return t->ino == (uint64_t)sb->st_ino && t->dev == (uint64_t)sb->st_dev &&
	       t->size == (uint64_t)sb->st_size &&
	       t->mtime_ns == (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static struct uw_table *find_by_stat(struct unwinder *uw, const struct stat *sb)
{
	size_t i;

	for (i = 0; i < uw->ntables; i++)
		if (same_file(uw->tables[i], sb))
			return uw->tables[i];
	return NULL;
}

static struct uw_table *find_by_build_id(struct unwinder *uw, const uint8_t *id, uint32_t len)
{
	size_t i;

	if (!len)
		return NULL;
	for (i = 0; i < uw->ntables; i++) {
		struct uw_table *t = uw->tables[i];

		if (t->build_id_len == len && !memcmp(t->build_id, id, len) &&
		    !(t->flags & UW_MAP_NO_TABLE))
			return t;
	}
	return NULL;
}

/* The GNU build id of @ef (from its PT_NOTE segments), or length 0. */
static void read_build_id(const struct elf_file *ef, uint8_t *id, uint32_t *len)
{
	size_t i, off;
	struct elf_note note;
	void *buf;

	*len = 0;
	for (i = 0; i < elf_file__phnum(ef) && !*len; i++) {
		const Elf64_Phdr *ph = elf_file__phdr(ef, i);

		if (ph->p_type != PT_NOTE || ph->p_filesz > 65536)
			continue;
		if (elf_file__read(ef, ph->p_offset, ph->p_filesz, &buf))
			continue;
		off = 0;
		while (elf_file__next_note(ef, buf, ph->p_filesz, ph->p_align, &off, &note)) {
			if (note.type == NT_GNU_BUILD_ID && note.namesz == 4 &&
			    !memcmp(note.name, "GNU", 4) && note.descsz &&
			    note.descsz <= BUILD_ID_MAX) {
				memcpy(id, note.desc, note.descsz);
				*len = note.descsz;
				break;
			}
		}
		free(buf);
	}
}

static void read_exec_segments(const struct elf_file *ef, struct uw_table *t)
{
	size_t i;

	t->nseg = 0;
	for (i = 0; i < elf_file__phnum(ef) && t->nseg < MAX_EXEC_SEGMENTS; i++) {
		const Elf64_Phdr *ph = elf_file__phdr(ef, i);

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		t->seg[t->nseg].offset = ph->p_offset;
		t->seg[t->nseg].vaddr = ph->p_vaddr;
		t->seg[t->nseg].filesz = ph->p_filesz;
		t->nseg++;
	}
}

/* Copies @ut's rows into the rows map, evicting unused tables for room. */
static int load_rows(struct unwinder *uw, struct uw_table *t, const struct unwind_table *ut)
{
	const struct unwind_row *src;
	uint32_t start;
	size_t n;
	int err;

	src = unwind_table__rows(ut, &n);
	if (!n)
		return 0;
	if (n > uw->max_table_rows)
		return -E2BIG;
	while ((err = rows_alloc(uw, (uint32_t)n, &start)) == -ENOSPC) {
		if (evict_one(uw))
			return -ENOSPC;
	}
	err = uw->ops.write_rows(uw->ops_ctx, start, src, (uint32_t)n, uw->nrows_cap);
	if (err) {
		free_insert(uw, start, (uint32_t)n);
		return err;
	}
	t->first_row = start;
	t->nrows = (uint32_t)n;
	t->has_rows = true;
	uw->st.rows_used += n;
	return 0;
}

/* Adds @t to the table set, making room. Returns 0 or -ENOSPC / -ENOMEM (t not added). */
static int tables_add(struct unwinder *uw, struct uw_table *t)
{
	struct uw_table **p;

	while (uw->ntables >= uw->max_tables)
		if (evict_one(uw))
			return -ENOSPC;
	p = realloc(uw->tables, (uw->ntables + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	uw->tables = p;
	uw->tables[uw->ntables++] = t;
	return 0;
}

/*
 * Builds the table of the ELF open on @fd (identity @sb) and adds it to the set. Returns 0 and
 * the new table (no reference taken), or -errno. A file the builder refuses, or that finds no
 * room, becomes a table flagged UW_MAP_NO_TABLE (a refusal is cached so it is not retried for
 * every process; no room is not).
 */
static int table_build(struct unwinder *uw, int fd, const struct stat *sb, struct elf_file *ef,
		       const uint8_t *bid, uint32_t bid_len, struct uw_table **out)
{
	struct unwind_table_opts to = { .max_rows = uw->max_table_rows };
	struct unwind_table *ut = NULL;
	struct unwind_table_stats tst;
	struct uw_table *t;
	uint64_t t0 = cpu_ns();
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->dev = sb->st_dev;
	t->ino = sb->st_ino;
	t->size = sb->st_size;
	t->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
	if (bid_len) /* bid is NULL for a file without a build id */
		memcpy(t->build_id, bid, bid_len);
	t->build_id_len = bid_len;
	read_exec_segments(ef, t);

	err = unwind_table__from_fd(fd, &to, &ut);
	if (err == -ENOMEM)
		goto out_free;
	if (!err) {
		unwind_table__stats(ut, &tst);
		if (tst.source == UNWIND_SRC_NONE)
			t->flags = UW_MAP_NO_CFI;
		else
			err = load_rows(uw, t, ut);
	}
	if (err) {
		uw->st.tables_failed++;
		t->flags = UW_MAP_NO_TABLE;
		if (err == -ENOSPC || err == -EIO) {
			/* no room now: not cached, tried again for the next process */
			free(t);
			t = NULL;
			goto out_ok;
		}
	}
	err = tables_add(uw, t);
	if (err) {
		table_release_rows(uw, t);
		if (err == -ENOMEM)
			goto out_free;
		free(t);
		t = NULL;
	} else if (!(t->flags & UW_MAP_NO_TABLE)) {
		uw->st.tables_built++;
	}
out_ok:
	unwind_table__free(ut);
	uw->st.build_ns += cpu_ns() - t0;
	*out = t;
	return 0;
out_free:
	unwind_table__free(ut);
	free(t);
	return err;
}

/*
 * The table for the file open on @fd. Returns 0 and the table (NULL: no table can be had,
 * unreadable or no room), with the reference NOT yet taken.
 */
static int table_for_fd(struct unwinder *uw, int fd, struct uw_table **out, bool *shared)
{
	struct elf_file *ef = NULL;
	uint8_t bid[BUILD_ID_MAX];
	uint32_t bid_len = 0;
	struct uw_table *t;
	struct stat sb;
	int err;

	*shared = false;
	if (fstat(fd, &sb))
		return -errno;
	t = find_by_stat(uw, &sb);
	if (t) {
		*shared = t->refcnt > 0;
		*out = t;
		return 0;
	}
	err = elf_file__open(fd, NULL, &ef);
	if (err == -ENOMEM)
		return err;
	if (err) {
		*out = NULL;
		return 0;
	}
	read_build_id(ef, bid, &bid_len);
	t = find_by_build_id(uw, bid, bid_len);
	if (t) {
		*shared = true;
		elf_file__free(ef);
		*out = t;
		return 0;
	}
	err = table_build(uw, fd, &sb, ef, bid, bid_len, out);
	elf_file__free(ef);
	return err;
}

/* The vDSO's table, from this process's own vDSO image (the same in every 64-bit process). */
static struct uw_table *vdso_table(struct unwinder *uw)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct elf_file *ef = NULL;
	struct stat sb = {};
	struct uw_table *t = NULL;
	FILE *f;
	char line[256];
	unsigned long lo, hi;
	int fd = -1;

	if (uw->vdso_tried)
		return uw->vdso;
	uw->vdso_tried = true;
	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base)
			uw->vdso_size = hi - lo;
	fclose(f);
	if (!uw->vdso_size)
		return NULL;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, (const void *)base, uw->vdso_size) != (ssize_t)uw->vdso_size)
		goto out;
	if (elf_file__open(fd, NULL, &ef))
		goto out;
	sb.st_ino = VDSO_KEY_INO;
	sb.st_size = (off_t)uw->vdso_size;
	if (table_build(uw, fd, &sb, ef, NULL, 0, &t) || !t)
		goto out;
	if (t->flags & UW_MAP_NO_TABLE)
		t = NULL;
	if (t) {
		t->refcnt++; /* the unwinder's own: never evicted */
		uw->vdso = t;
	}
out:
	elf_file__free(ef);
	close(fd);
	return uw->vdso;
}

/* --- processes -------------------------------------------------------------------------- */

static struct uw_pentry *find_proc(struct unwinder *uw, uint32_t tgid, size_t *idx)
{
	size_t i;

	for (i = 0; i < uw->nprocs; i++) {
		if (uw->procs[i].tgid == tgid) {
			if (idx)
				*idx = i;
			return &uw->procs[i];
		}
	}
	return NULL;
}

static void proc_release(struct unwinder *uw, struct uw_pentry *p)
{
	uint32_t i;

	for (i = 0; i < p->ntables; i++)
		table_put(uw, p->tables[i]);
	free(p->tables);
	p->tables = NULL;
	p->ntables = 0;
}

static void proc_drop(struct unwinder *uw, size_t i)
{
	proc_release(uw, &uw->procs[i]);
	uw->procs[i] = uw->procs[--uw->nprocs];
}

struct collect {
	struct unwinder *uw;
	uint32_t tgid;
	struct uw_table **tables; /* one per listed mapping, NULL: no table */
	int err;
};

/*
 * Opens the file behind a mapping: map_files (exact, even deleted or in another mount
 * namespace), else the path inside the process's root (base/safe_open: never a link out of
 * it, never a FIFO, device or socket, and only the mapped inode).
 */
static int open_mapping(struct unwinder *uw, uint32_t tgid, const struct procmaps_entry *e)
{
	const struct safe_open_opts o = { .ino = e->inode };
	int fd;

	fd = safe_open_map_file(uw->proc_root, tgid, e->start, e->end, &o);
	if (fd >= 0 || fd == -ENOTSUP || fd == -ESTALE)
		return fd;
	if (e->path[0] != '/')
		return -ENOENT;
	return safe_open_in_proc_root(uw->proc_root, tgid, e->path, &o);
}

static uint64_t mapping_bias(const struct uw_table *t, const struct procmaps_entry *e)
{
	uint32_t i;

	for (i = 0; i < t->nseg; i++) {
		uint64_t lo = t->seg[i].offset & ~4095ull;

		if (e->offset >= lo && e->offset < t->seg[i].offset + t->seg[i].filesz)
			return e->start - e->offset + t->seg[i].offset - t->seg[i].vaddr;
	}
	if (t->nseg)
		return e->start - e->offset + t->seg[0].offset - t->seg[0].vaddr;
	return e->start - e->offset;
}

static int collect_mapping(void *ctx, const struct procmaps_entry *e)
{
	struct collect *c = ctx;
	struct unwinder *uw = c->uw;
	struct uw_proc *p = &uw->scratch;
	struct uw_mapping *m;
	struct uw_table *t = NULL;
	bool shared = false, vdso;
	int fd, err;

	if (!(e->perms & PROCMAPS_EXEC))
		return 0;
	vdso = !strcmp(e->path, "[vdso]");
	if (!vdso && (!e->inode || e->path[0] != '/'))
		return 0; /* anonymous (JIT), [vsyscall]: frame pointers */
	if (p->nmaps >= UW_MAX_MAPPINGS) {
		uw->st.mappings_dropped++;
		return 0;
	}
	if (vdso) {
		t = vdso_table(uw);
		if (!t || e->end - e->start != uw->vdso_size)
			return 0;
	} else {
		fd = open_mapping(uw, c->tgid, e);
		if (fd >= 0) {
			err = table_for_fd(uw, fd, &t, &shared);
			close(fd);
			if (err == -ENOMEM)
				return err;
		}
	}
	m = &p->maps[p->nmaps];
	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	if (!t) {
		m->flags = UW_MAP_NO_TABLE;
	} else {
		m->bias = mapping_bias(t, e);
		m->flags = t->flags;
		if (t->has_rows) {
			m->first_row = t->first_row;
			m->nrows = t->nrows;
		}
		/* pcs are 32-bit ELF vaddrs: a mapping reaching beyond is left to frame pointers */
		if ((e->end - 1 - m->bias) >> 32) {
			m->nrows = 0;
			m->flags = UW_MAP_NO_TABLE;
		}
		t->refcnt++; /* a reference per listed mapping: taken now so no eviction hits it */
		t->last_used = ++uw->clock;
		if (shared)
			uw->st.tables_shared++;
	}
	c->tables[p->nmaps] = t;
	p->nmaps++;
	return 0;
}

int unwinder__add_process(struct unwinder *uw, uint32_t tgid)
{
	struct collect c = { .uw = uw, .tgid = tgid };
	struct uw_pentry *pe, fresh = {};
	struct uw_proc *p = &uw->scratch;
	uint32_t i, n;
	int err;

	c.tables = calloc(UW_MAX_MAPPINGS, sizeof(*c.tables));
	if (!c.tables)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	err = procmaps_foreach(uw->proc_root, (int)tgid, collect_mapping, &c);
	if (err < 0)
		goto out_put;
	n = p->nmaps;

	pe = find_proc(uw, tgid, NULL);
	if (!pe) {
		if (uw->nprocs >= uw->max_procs)
			unwinder__sweep(uw);
		if (uw->nprocs >= uw->max_procs) {
			err = -ENOSPC;
			goto out_put;
		}
		if (uw->nprocs == uw->procs_cap) {
			size_t cap = uw->procs_cap ? uw->procs_cap * 2 : 64;
			struct uw_pentry *q = realloc(uw->procs, cap * sizeof(*q));

			if (!q) {
				err = -ENOMEM;
				goto out_put;
			}
			uw->procs = q;
			uw->procs_cap = cap;
		}
	}
	err = uw->ops.set_proc(uw->ops_ctx, tgid, p);
	if (err)
		goto out_put;
	if (!pe) {
		pe = &uw->procs[uw->nprocs++];
		*pe = fresh;
		pe->tgid = tgid;
	}
	/* the new list's references were taken while collecting; the old list's go */
	proc_release(uw, pe);
	pe->tables = c.tables;
	pe->ntables = n;
	return (int)n;

out_put:
	for (i = 0; i < p->nmaps; i++)
		table_put(uw, c.tables[i]);
	free(c.tables);
	return err;
}

int unwinder__remove_process(struct unwinder *uw, uint32_t tgid)
{
	size_t i;

	if (!find_proc(uw, tgid, &i))
		return -ENOENT;
	uw->ops.del_proc(uw->ops_ctx, tgid);
	proc_drop(uw, i);
	return 0;
}

int unwinder__sweep(struct unwinder *uw)
{
	char path[PATH_MAX];
	struct stat sb;
	size_t i = 0;
	int n = 0;

	while (i < uw->nprocs) {
		snprintf(path, sizeof(path), "%s/%u", uw->proc_root, uw->procs[i].tgid);
		if (stat(path, &sb) && (errno == ENOENT || errno == ESRCH)) {
			uw->ops.del_proc(uw->ops_ctx, uw->procs[i].tgid);
			proc_drop(uw, i);
			n++;
			continue;
		}
		i++;
	}
	return n;
}

/* --- lifecycle, stacks, stats ----------------------------------------------------------- */

int unwinder__new(const struct unwinder_maps *maps, const struct unwinder_opts *opts,
		  struct unwinder **out)
{
	static const struct unwinder_ops bpf_ops = {
		.write_rows = bpf_write_rows,
		.set_proc = bpf_set_proc,
		.del_proc = bpf_del_proc,
	};
	struct unwinder_opts defaults = {};
	struct unwinder *uw;
	int err;

	if (!opts)
		opts = &defaults;
	if (opts->rows > UW_MAX_ROWS)
		return -EINVAL;
	uw = calloc(1, sizeof(*uw));
	if (!uw)
		return -ENOMEM;
	uw->maps = *maps;
	uw->proc_root = opts->proc_root ? opts->proc_root : "/proc";
	uw->nrows_cap = opts->rows ? opts->rows : UW_DEFAULT_ROWS;
	uw->max_procs = opts->max_procs ? opts->max_procs : UW_DEFAULT_PROCS;
	uw->max_tables = opts->max_tables ? opts->max_tables : DEFAULT_MAX_TABLES;
	uw->max_table_rows = opts->max_table_rows ? opts->max_table_rows : uw->nrows_cap / 2;
	if (opts->ops) {
		uw->ops = *opts->ops;
		uw->ops_ctx = opts->ops_ctx;
	} else {
		uw->ops = bpf_ops;
		uw->ops_ctx = uw;
		uw->bpf_maps = true;
	}
	err = free_insert(uw, 0, uw->nrows_cap);
	if (err)
		goto err_free;
	*out = uw;
	return 0;

err_free:
	unwinder__free(uw);
	return err;
}

void unwinder__free(struct unwinder *uw)
{
	size_t i;

	if (!uw)
		return;
	for (i = 0; i < uw->nprocs; i++)
		proc_release(uw, &uw->procs[i]);
	free(uw->procs);
	for (i = 0; i < uw->ntables; i++)
		free(uw->tables[i]);
	free(uw->tables);
	free(uw->free);
	free(uw->batch_keys);
	free(uw);
}

int unwinder__read_stack(struct unwinder *uw, int32_t id, uint64_t *ips, size_t max, size_t *n)
{
	struct uw_stack st;
	size_t k;

	*n = 0;
	if (id < 0)
		return id;
	if (bpf_map_lookup_elem(uw->maps.stacks_fd, &id, &st))
		return -errno;
	k = st.nframes < max ? st.nframes : max;
	if (k > UW_MAX_DEPTH)
		k = UW_MAX_DEPTH;
	memcpy(ips, st.ips, k * sizeof(*ips));
	*n = k;
	return 0;
}

int unwinder__stats(struct unwinder *uw, struct unwinder_stats *out)
{
	int ncpus, c;
	__u64 *vals;
	__u32 i;
	size_t k;

	*out = uw->st;
	out->procs = uw->nprocs;
	out->tables = uw->ntables;
	out->tables_in_use = 0;
	for (k = 0; k < uw->ntables; k++)
		out->tables_in_use += uw->tables[k]->refcnt > 0;
	out->rows_capacity = uw->nrows_cap;
	out->rows_bytes = out->rows_used * UW_ROW_STRIDE;
	memset(out->bpf, 0, sizeof(out->bpf));
	if (!uw->bpf_maps)
		return 0; /* a test seam: no BPF counters */
	ncpus = libbpf_num_possible_cpus();
	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < UW_STAT_MAX; i++) {
		if (bpf_map_lookup_elem(uw->maps.stats_fd, &i, vals))
			continue;
		for (c = 0; c < ncpus; c++)
			out->bpf[i] += vals[c];
	}
	free(vals);
	return 0;
}

double unwinder_incomplete_text(const struct unwinder_stats *st, char *buf, size_t size)
{
	static const struct {
		unsigned idx;
		const char *why;
	} reasons[] = {
		{ UW_STAT_NO_PROC, "before the process's unwind tables were loaded" },
		{ UW_STAT_NO_MAPPING,
		  "in code without a file (JIT, vDSO) or mapped after the start" },
		{ UW_STAT_NO_TABLE, "in files whose unwind table could not be built" },
		{ UW_STAT_UNSUPPORTED, "at unwind rules not supported" },
		{ UW_STAT_READ_FAULT, "at unreadable stack memory" },
		{ UW_STAT_BAD_FRAME, "at a corrupt frame" },
		{ UW_STAT_JAVA_LOST, "in Java code the walk could not follow" },
		{ UW_STAT_DEPTH, "cut at 127 frames" },
	};
	uint64_t walks = st->bpf[UW_STAT_WALKS], bad = 0, n[UW_STAT_MAX];
	size_t i, len;
	double pct;

	if (size)
		buf[0] = '\0';
	if (!walks)
		return 0;
	/* a walk lost in Java code ended as a bad frame: said once, as the Java one */
	memcpy(n, st->bpf, sizeof(n));
	if (n[UW_STAT_JAVA_LOST] > n[UW_STAT_BAD_FRAME])
		n[UW_STAT_JAVA_LOST] = n[UW_STAT_BAD_FRAME];
	n[UW_STAT_BAD_FRAME] -= n[UW_STAT_JAVA_LOST];
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		bad += n[reasons[i].idx];
	if (!bad)
		return 0;
	pct = 100.0 * (double)bad / (double)walks;
	len = (size_t)snprintf(buf, size, "%.1f%% of the user stacks could not be completed:", pct);
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]) && len < size; i++) {
		if (!n[reasons[i].idx])
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s %.1f%% %s",
					len && buf[len - 1] == ':' ? "" : ",",
					100.0 * (double)n[reasons[i].idx] / (double)walks,
					reasons[i].why);
	}
	return pct;
}

/* --- the reference walk ----------------------------------------------------------------- */

struct ref_mem {
	const uint8_t *mem;
	uint64_t base;
	size_t len;
};

static int ref_read(const struct ref_mem *m, uint64_t addr, void *out, size_t n)
{
	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < n)
		return -EFAULT;
	memcpy(out, m->mem + (addr - m->base), n);
	return 0;
}

static const struct uw_mapping *ref_find_mapping(const struct uw_proc *proc, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i < proc->nmaps && i < UW_MAX_MAPPINGS; i++)
		if (pc >= proc->maps[i].start && pc < proc->maps[i].end)
			return &proc->maps[i];
	return NULL;
}

static const struct unwind_row *ref_find_row(const struct unwind_row *rows, size_t nrows,
					     const struct uw_mapping *m, uint64_t rel)
{
	const struct unwind_row *r = NULL;
	uint32_t i;

	for (i = 0; i < m->nrows && (size_t)m->first_row + i < nrows; i++) {
		if (rows[m->first_row + i].pc > rel)
			break;
		r = &rows[m->first_row + i];
	}
	return r;
}

int unwinder_walk_reference(const struct uw_proc *proc, const struct unwind_row *rows, size_t nrows,
			    const void *mem, uint64_t mem_base, size_t mem_len, uint64_t ip,
			    uint64_t sp, uint64_t bp, uint64_t *ips, size_t *n, int *fp_used)
{
	struct ref_mem m = { mem, mem_base, mem_len };
	uint32_t fp_cause = 0, cause;
	uint64_t adjust = 0, ra, nbp, sig[7];
	__u64 cfa = 0;
	const struct unwind_row *r;
	const struct uw_mapping *mp;
	size_t depth = 0;
	int step;

#define FAIL(why) return fp_cause ? (int)fp_cause : (why)
#define FINISH() return fp_cause ? (int)fp_cause : UW_STAT_COMPLETE
	*n = 0;
	*fp_used = 0;
	for (;;) {
		if (depth >= UW_MAX_DEPTH)
			return UW_STAT_DEPTH;
		ips[depth++] = ip;
		*n = depth;
		r = NULL;
		cause = 0;
		mp = proc ? ref_find_mapping(proc, ip - adjust) : NULL;
		if (!proc)
			cause = UW_STAT_NO_PROC;
		else if (!mp)
			cause = UW_STAT_NO_MAPPING;
		else if (!mp->nrows)
			cause = (mp->flags & UW_MAP_NO_CFI) ? 0 : UW_STAT_NO_TABLE;
		else if ((ip - adjust - mp->bias) >> 32)
			cause = UW_STAT_NO_TABLE;
		else
			r = ref_find_row(rows, nrows, mp, ip - adjust - mp->bias);
		if (!proc || !mp || !mp->nrows || cause)
			step = UW_STEP_FP;
		else
			step = uw_row_cfa(r ? r->cfa_type : 0, r ? r->cfa_offset : 0, ip, sp, bp,
					  &cfa);
		switch (step) {
		case UW_STEP_FP:
			if (cause && !fp_cause)
				fp_cause = cause;
			*fp_used = 1;
			if (!bp)
				FINISH();
			if (bp < sp)
				FAIL(UW_STAT_BAD_FRAME);
			if (ref_read(&m, bp + 8, &ra, 8) || ref_read(&m, bp, &nbp, 8))
				FAIL(UW_STAT_READ_FAULT);
			if (!ra)
				FINISH();
			sp = bp + 16;
			bp = nbp;
			ip = ra;
			adjust = 1;
			continue;
		case UW_STEP_END:
			FINISH();
		case UW_STEP_SIGNAL:
			if (ref_read(&m, cfa + UW_SIGCONTEXT_RBP, sig, sizeof(sig)))
				FAIL(UW_STAT_READ_FAULT);
			if (!sig[6])
				FINISH();
			bp = sig[0];
			sp = sig[5];
			ip = sig[6];
			adjust = 0;
			continue;
		case UW_STEP_CFA:
			break;
		default:
			FAIL(UW_STAT_UNSUPPORTED);
		}
		if (!r || cfa < sp + 8)
			FAIL(UW_STAT_BAD_FRAME);
		if (ref_read(&m, cfa - 8, &ra, 8))
			FAIL(UW_STAT_READ_FAULT);
		nbp = bp;
		if (r->rbp_type == UNWIND_RBP_OFFSET) {
			if (ref_read(&m, cfa + r->rbp_offset, &nbp, 8))
				FAIL(UW_STAT_READ_FAULT);
		} else if (r->rbp_type == UNWIND_RBP_UNDEFINED) {
			nbp = 0;
		}
		if (!ra)
			FINISH();
		ip = ra;
		sp = cfa;
		bp = nbp;
		adjust = 1;
	}
#undef FAIL
#undef FINISH
}
