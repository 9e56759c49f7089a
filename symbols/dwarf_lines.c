// SPDX-License-Identifier: Apache-2.0
/*
 * dwarf_lines: file:line and inlined frames from DWARF with libdw; the defenses against an
 * untrusted file are in the header's comment. libdw's own scope walks (dwarf_getscopes) recurse
 * without a depth limit: the DIEs are walked here instead, with DWARF_LINES_MAX_NEST and
 * DWARF_LINES_MAX_VISIT as bounds.
 */
#include "symbols/dwarf_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/elf_file.h"

#define MAX_SECTIONS (1u << 16)
#define MAX_SHSTRTAB (4u << 20)
/* Compile-unit ranges checked before the one found by the binary search (overlaps). */
#define RANGE_WALK_BACK 8

struct dl_range {
	uint64_t lo, hi;
	Dwarf_Die cu;
};

struct dl_cached {
	uint64_t pc;
	uint8_t n; /* 0: -ENOENT */
	bool used;
	struct dwarf_frame f[DWARF_LINES_MAX_DEPTH];
};

/* A linkage name (in libdw's data) and its demangled form (owned). */
struct dl_name {
	const char *linkage;
	char *readable;
};

struct dwarf_lines {
	Elf *elf;
	Dwarf *dw;
	struct dl_range *r;
	size_t nr;
	struct dl_cached *cache; /* DWARF_LINES_CACHE, allocated at the first lookup */
	uint64_t section_bytes;
	struct dl_name *names; /* DWARF_LINES_NAMES slots (open addressing), at the first one */
	size_t nnames, name_bytes;
};

/* Where the file's bytes are: an fd (pread) or memory. */
struct src {
	int fd;
	const uint8_t *mem;
	uint64_t size, allocated; /* allocated: bytes on disk, 0 unknown */
};

static bool is_debug_name(const char *name)
{
	/* .debug_*, .zdebug_*, and their .dwo and LTO (.gnu.debuglto_.debug_*) forms. */
	return strstr(name, ".debug") || strstr(name, ".zdebug");
}

/* Sections that make libdw open another file by a path taken from the DWARF. */
static bool is_alt_name(const char *name)
{
	return !strcmp(name, ".gnu_debugaltlink") || !strcmp(name, ".debug_sup");
}

static int src_read(const struct src *s, uint64_t off, size_t len, void *buf)
{
	ssize_t n;

	if (off > s->size || len > s->size - off)
		return -EINVAL;
	if (s->mem) {
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	do
		n = pread(s->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* The bytes section @sh takes once libdw has it: inflated size for compressed ones. */
static int claimed(const struct src *s, Elf *e, const char *name, const GElf_Shdr *sh,
		   uint64_t *out)
{
	uint8_t hdr[sizeof(Elf64_Chdr)];
	uint64_t sz = sh->sh_size;
	bool is64 = gelf_getclass(e) == ELFCLASS64;
	size_t need = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	int err, i;

	if (sh->sh_flags & SHF_COMPRESSED) {
		/* Headers in the file's byte order: only the host's is read. */
		if ((elf_getident(e, NULL)[EI_DATA] == ELFDATA2LSB) !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__))
			return -EOPNOTSUPP;
		if (sh->sh_size < need)
			return -EINVAL;
		err = src_read(s, sh->sh_offset, need, hdr);
		if (err)
			return err;
		if (is64)
			sz = ((const Elf64_Chdr *)(const void *)hdr)->ch_size;
		else
			sz = ((const Elf32_Chdr *)(const void *)hdr)->ch_size;
	} else if (!strncmp(name, ".zdebug", 7)) {
		/* "ZLIB" and the inflated size, 8 bytes big-endian. */
		if (sh->sh_size < 12)
			return -EINVAL;
		err = src_read(s, sh->sh_offset, 12, hdr);
		if (err)
			return err;
		if (memcmp(hdr, "ZLIB", 4))
			return -EINVAL;
		for (sz = 0, i = 4; i < 12; i++)
			sz = sz << 8 | hdr[i];
	}
	*out = sz > sh->sh_size ? sz : sh->sh_size;
	return 0;
}

/* The name table must be small before elf_strptr() reads it whole. */
static int check_shstrtab(Elf *e, size_t *shstrndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(e, shstrndx))
		return -EINVAL;
	scn = elf_getscn(e, *shstrndx);
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_size > MAX_SHSTRTAB)
		return -EINVAL;
	return 0;
}

/*
 * Sizes the .debug* sections on libelf's own view of the file (what libdw reads): each in the
 * file, together at most @max once inflated and backed by data; refuses an alt file link.
 * Returns 0 and the total in @bytes, -ENOENT without .debug_info, -E2BIG, -EOPNOTSUPP,
 * -EINVAL.
 */
static int size_sections(const struct src *s, Elf *e, uint64_t max, uint64_t *bytes)
{
	uint64_t total = 0, disk = 0, sz;
	bool info = false;
	size_t shstrndx;
	const char *name;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	err = check_shstrtab(e, &shstrndx);
	while (!err && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (is_alt_name(name))
			return -EOPNOTSUPP;
		if (!is_debug_name(name) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (sh.sh_offset > s->size || sh.sh_size > s->size - sh.sh_offset)
			return -EINVAL;
		info |= strstr(name, "debug_info") != NULL;
		err = claimed(s, e, name, &sh, &sz);
		if (!err && sz > max - total)
			err = -E2BIG;
		total += err ? 0 : sz;
		disk += sh.sh_size;
	}
	if (err)
		return err;
	if (!info)
		return -ENOENT;
	if (s->allocated && disk > ELF_FILE_SPARSE_SLACK + s->allocated * ELF_FILE_SPARSE_RATIO)
		return -E2BIG;
	*bytes = total;
	return 0;
}

/* Reads every .debug* section now, so that the fd can be detached before libdw sees it. */
static int preload(Elf *e)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && is_debug_name(name) && !elf_rawdata(scn, NULL))
			return -EINVAL;
	}
	return 0;
}

static int push_range(struct dwarf_lines *dl, size_t *cap, uint64_t lo, uint64_t hi,
		      const Dwarf_Die *cu)
{
	struct dl_range *tmp;

	if (dl->nr >= DWARF_LINES_MAX_RANGES)
		return -E2BIG;
	if (dl->nr == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		tmp = realloc(dl->r, *cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		dl->r = tmp;
	}
	dl->r[dl->nr++] = (struct dl_range){ .lo = lo, .hi = hi, .cu = *cu };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct dl_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The address ranges of the compile units. Skeleton units (split DWARF) are skipped: libdw
 * would open their .dwo file by a path the DWARF names. A malformed unit ends the walk.
 */
static int build_index(struct dwarf_lines *dl)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	ptrdiff_t off;
	size_t cap = 0;
	int err = 0;

	while (!err && dwarf_get_units(dl->dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
		if (type != DW_UT_compile && type != DW_UT_partial)
			continue;
		off = 0;
		while (!err && (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			if (lo < hi)
				err = push_range(dl, &cap, lo, hi, &cudie);
	}
	if (err)
		return err;
	if (dl->nr > 1)
		qsort(dl->r, dl->nr, sizeof(*dl->r), range_cmp);
	return 0;
}

void dwarf_lines__free(struct dwarf_lines *dl)
{
	if (!dl)
		return;
	if (dl->dw)
		dwarf_end(dl->dw);
	if (dl->elf)
		elf_end(dl->elf);
	free(dl->r);
	free(dl->cache);
	if (dl->names)
		for (size_t i = 0; i < DWARF_LINES_NAMES; i++)
			free(dl->names[i].readable);
	free(dl->names);
	free(dl);
}

/* .debug_str, .debug_line_str and their .dwo forms (.zdebug_ ones included). */
static bool is_string_section(const char *name)
{
	const char *p;

	if ((p = strstr(name, "debug_str")) != NULL)
		return !p[9] || !strcmp(p + 9, ".dwo");
	if ((p = strstr(name, "debug_line_str")) != NULL)
		return !p[14] || !strcmp(p + 14, ".dwo");
	return false;
}

/*
 * libdw hands out the strings of .debug_str and .debug_line_str as pointers into the section,
 * and reads them with strlen (elfutils 0.188, DW_FORM_line_strp in a line table's header):
 * a string section whose last byte is not NUL would take it, and us, past the section's end
 * (found by fuzz_dwarf_lines). Such a file is refused; no compiler writes one. Run after
 * dwarf_begin_elf(), which has inflated compressed sections: their data is what libdw reads.
 */
static int strings_terminated(Elf *e)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	Elf_Data *d;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || !is_string_section(name))
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size && ((const char *)d->d_buf)[d->d_size - 1])
			return -EINVAL;
	}
	return 0;
}

/* Sizes, reads and hands the file to libdw; @dl->elf is set. */
static int load(struct dwarf_lines *dl, const struct src *s, uint64_t max)
{
	int err;

	if (elf_kind(dl->elf) != ELF_K_ELF)
		return -EINVAL;
	err = size_sections(s, dl->elf, max, &dl->section_bytes);
	if (!err)
		err = preload(dl->elf);
	if (err)
		return err;
	/* No fd, no directory: libdw cannot look for a .dwo or alt file next to this one. */
	if (!s->mem && elf_cntl(dl->elf, ELF_C_FDDONE))
		return -EINVAL;
	dl->dw = dwarf_begin_elf(dl->elf, DWARF_C_READ, NULL);
	if (!dl->dw)
		return -EINVAL;
	err = strings_terminated(dl->elf);
	return err ? err : build_index(dl);
}

/* The section count, checked with elf_file before libelf allocates for each section. */
static int check_count(const struct elf_file *ef)
{
	if (elf_file__shdrs_ignored(ef))
		return -EINVAL;
	return elf_file__shnum(ef) > MAX_SECTIONS ? -E2BIG : 0;
}

static void fill_opts(const struct dwarf_lines_opts *in, struct dwarf_lines_opts *o)
{
	*o = in ? *in : (struct dwarf_lines_opts){ 0 };
	if (!o->max_bytes)
		o->max_bytes = DWARF_LINES_MAX_BYTES_DEFAULT;
	if (!o->max_file_size)
		o->max_file_size = DWARF_LINES_MAX_FILE_DEFAULT;
}

static int open_common(struct src *s, const struct dwarf_lines_opts *o, struct dwarf_lines **out)
{
	struct dwarf_lines *dl;
	int err;

	dl = calloc(1, sizeof(*dl));
	if (!dl)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	/* ELF_C_READ reads with pread: a file truncated under us gives an error, not SIGBUS. */
	dl->elf = s->mem ? elf_memory((char *)s->mem, s->size) : elf_begin(s->fd, ELF_C_READ, NULL);
	err = dl->elf ? load(dl, s, o->max_bytes) : -EINVAL;
	if (err) {
		dwarf_lines__free(dl);
		return err;
	}
	*out = dl;
	return 0;
}

int dwarf_lines__from_fd(int fd, const struct dwarf_lines_opts *opts, struct dwarf_lines **out)
{
	struct dwarf_lines_opts o;
	struct elf_file *ef;
	struct src s = { .fd = fd };
	struct stat sb;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	fill_opts(opts, &o);
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	s.size = (uint64_t)sb.st_size;
	s.allocated = (uint64_t)sb.st_blocks * 512;
	err = elf_file__open(fd, &(struct elf_file_opts){ .max_file_size = o.max_file_size }, &ef);
	if (err)
		return err;
	err = check_count(ef);
	elf_file__free(ef);
	return err ? err : open_common(&s, &o, out);
}

int dwarf_lines__from_memory(const void *buf, size_t len, const struct dwarf_lines_opts *opts,
			     struct dwarf_lines **out)
{
	struct dwarf_lines_opts o;
	struct elf_file *ef;
	struct src s = { .fd = -1, .mem = buf, .size = len };
	int err;

	if (!buf || !out)
		return -EINVAL;
	fill_opts(opts, &o);
	err = elf_file__open_memory(buf, len,
				    &(struct elf_file_opts){ .max_file_size = o.max_file_size },
				    &ef);
	if (err)
		return err;
	err = check_count(ef);
	elf_file__free(ef);
	return err ? err : open_common(&s, &o, out);
}

int dwarf_lines_probe(int fd)
{
	const Elf64_Shdr *sh = NULL;
	struct elf_file *ef;
	int err;

	err = elf_file__open(fd, NULL, &ef);
	if (err)
		return err;
	if (elf_file__section(ef, ".debug_info", &sh) < 0 &&
	    elf_file__section(ef, ".zdebug_info", &sh) < 0)
		sh = NULL;
	err = sh && sh->sh_type != SHT_NOBITS && sh->sh_size;
	elf_file__free(ef);
	return err;
}

/* ---- lookups ---- */

/* The unit holding @pc, or NULL. */
static const Dwarf_Die *find_cu(const struct dwarf_lines *dl, uint64_t pc)
{
	size_t lo = 0, hi = dl->nr, mid, k;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (dl->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < RANGE_WALK_BACK && lo > 0; k++, lo--)
		if (pc < dl->r[lo - 1].hi)
			return &dl->r[lo - 1].cu;
	return NULL;
}

static bool is_pc_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_entry_point ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* DIEs without addresses that hold functions (C++ namespaces and classes, Fortran modules). */
static bool is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_module;
}

struct walk {
	Dwarf_Die chain[DWARF_LINES_MAX_NEST]; /* the scopes holding pc, outermost first */
	size_t n;
	unsigned visits;
};

/*
 * Appends to @w the scope among @parent's children that holds @pc, then its own inner
 * scopes. Outside a function, containers are searched too (depth-first: the pc may be in any
 * of them). Returns 1 when found, 0 when not, -E2BIG past DWARF_LINES_MAX_VISIT DIEs.
 */
static int search(struct walk *w, Dwarf_Die *parent, uint64_t pc, unsigned nest, bool in_func)
{
	Dwarf_Die child, next;
	int tag, r;

	if (nest >= DWARF_LINES_MAX_NEST || dwarf_child(parent, &child) != 0)
		return 0;
	for (;;) {
		if (++w->visits > DWARF_LINES_MAX_VISIT)
			return -E2BIG;
		tag = dwarf_tag(&child);
		if (is_pc_scope(tag) && dwarf_haspc(&child, pc) > 0) {
			if (w->n >= DWARF_LINES_MAX_NEST)
				return 1;
			w->chain[w->n++] = child;
			search(w, &w->chain[w->n - 1], pc, nest + 1, true);
			return 1;
		}
		if (!in_func && is_container(tag)) {
			r = search(w, &child, pc, nest + 1, false);
			if (r)
				return r;
		}
		if (dwarf_siblingof(&child, &next) != 0)
			return 0;
		child = next;
	}
}

/*
 * The demangled form of @linkage, kept for the object's life; NULL when it does not demangle
 * or the store is full (DWARF_LINES_NAMES names, DWARF_LINES_NAME_BYTES bytes).
 */
static const char *readable_name(struct dwarf_lines *dl, const char *linkage)
{
	size_t h = ((uintptr_t)linkage >> 3) * 0x9e3779b97f4a7c15ull, i, k;
	char *dem;

	if (!demangle_wanted(linkage))
		return NULL;
	if (!dl->names && !(dl->names = calloc(DWARF_LINES_NAMES, sizeof(*dl->names))))
		return NULL;
	for (k = 0; k < DWARF_LINES_NAMES; k++) {
		i = (h + k) & (DWARF_LINES_NAMES - 1);
		if (dl->names[i].linkage == linkage)
			return dl->names[i].readable;
		if (!dl->names[i].linkage)
			break;
	}
	if (dl->nnames >= DWARF_LINES_NAMES / 2 || dl->name_bytes >= DWARF_LINES_NAME_BYTES)
		return NULL;
	dem = demangle(linkage);
	dl->names[i].linkage = linkage; /* NULL readable: remembered as not demangling */
	dl->names[i].readable = dem;
	dl->nnames++;
	dl->name_bytes += dem ? strlen(dem) + 1 : 0;
	return dem;
}

/* The function's name: its linkage name demangled (C++, Rust), else DW_AT_name. */
static const char *die_name(struct dwarf_lines *dl, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	name = name ? readable_name(dl, name) : NULL;
	return name ? name : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/* The file:line an inlined instance @die was called from, into @file and @line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, uint32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx = 0, ln = 0;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &ln) && ln <= UINT32_MAX)
		*line = (uint32_t)ln;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

/* The line-table row of @pc: file and line. */
static void pc_line(Dwarf_Die *cu, uint64_t pc, const char **file, uint32_t *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
	int ln = 0;

	*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	*line = l && !dwarf_lineno(l, &ln) && ln > 0 ? (uint32_t)ln : 0;
}

/*
 * The frames at @pc into @c (innermost first, the function last). Deeper inlining than
 * DWARF_LINES_MAX_DEPTH keeps the innermost frames and the function.
 */
static void resolve(struct dwarf_lines *dl, uint64_t pc, struct dl_cached *c)
{
	const Dwarf_Die *cu = find_cu(dl, pc);
	struct walk *w;
	Dwarf_Die cudie;
	const char *file;
	uint32_t line;
	size_t i;
	int tag;

	c->n = 0;
	if (!cu)
		return;
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	cudie = *cu;
	w->chain[w->n++] = cudie;
	search(w, &cudie, pc, 0, false);
	pc_line(&cudie, pc, &file, &line);
	for (i = w->n - 1; i > 0; i--) {
		tag = dwarf_tag(&w->chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		if (tag != DW_TAG_inlined_subroutine || c->n < DWARF_LINES_MAX_DEPTH - 1)
			c->f[c->n++] = (struct dwarf_frame){ die_name(dl, &w->chain[i]), file, line,
							     tag == DW_TAG_inlined_subroutine };
		if (tag != DW_TAG_inlined_subroutine)
			break;
		call_site(&cudie, &w->chain[i], &file, &line);
	}
	/* A unit holds pc, no function does: its line still says where. */
	if (!c->n || c->f[c->n - 1].inlined)
		c->f[c->n++] = (struct dwarf_frame){ NULL, file, line, false };
	free(w);
}

static size_t hash_pc(uint64_t pc)
{
	pc ^= pc >> 29;
	pc *= 0xbf58476d1ce4e5b9ull;
	pc ^= pc >> 32;
	return (size_t)pc & (DWARF_LINES_CACHE - 1);
}

int dwarf_lines__lookup(struct dwarf_lines *dl, uint64_t pc, struct dwarf_frame *out, size_t max)
{
	struct dl_cached *c, tmp;
	size_t i, n;

	if (!dl || !out || !max)
		return -EINVAL;
	if (!dl->cache)
		dl->cache = calloc(DWARF_LINES_CACHE, sizeof(*dl->cache));
	c = dl->cache ? &dl->cache[hash_pc(pc)] : &tmp;
	if (!dl->cache || !c->used || c->pc != pc) {
		resolve(dl, pc, c);
		c->pc = pc;
		c->used = true;
	}
	if (!c->n)
		return -ENOENT;
	n = c->n <= max ? c->n : max;
	for (i = 0; i + 1 < n; i++)
		out[i] = c->f[i];
	out[n - 1] = c->f[c->n - 1];
	return (int)n;
}

uint64_t dwarf_lines__mem(const struct dwarf_lines *dl)
{
	if (!dl)
		return 0;
	return dl->section_bytes + dl->nr * sizeof(*dl->r) +
	       (dl->cache ? DWARF_LINES_CACHE * sizeof(*dl->cache) : 0) +
	       (dl->names ? DWARF_LINES_NAMES * sizeof(*dl->names) : 0) + dl->name_bytes;
}

size_t dwarf_lines__ranges(const struct dwarf_lines *dl)
{
	return dl ? dl->nr : 0;
}
