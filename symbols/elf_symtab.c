// SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_symtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/elf_file.h"

/* Longest symbol name kept; longer ones (pathological C++ templates) are skipped. */
#define MAX_NAME_LEN (64u << 10)
#define GO_BUILD_ID_MAX 128
#define NT_GO_BUILDID 4
/* Symbols before the looked-up one that are checked for enclosing it (nested sized symbols). */
#define LOOKUP_WALK_BACK 4
/* Symbol tables are decoded this many bytes at a time. */
#define SYM_CHUNK (64u << 10)
/* String tables are read through a window this large; it must hold MAX_NAME_LEN + 1. */
#define STR_WINDOW (1u << 20)
/* Note sections and segments larger than this (.note.stapsdt) are not searched for ids. */
#define NOTE_MAX (64u << 10)

/* The kept names of one file: more gives -E2BIG (a table of distinct names this large is hostile). */
#define NAMES_MAX (64u << 20)
/* The demangled names one file keeps (symbols/demangle.h bounds each one). */
#define DEMANGLE_CACHE_MAX (16u << 20)

_Static_assert(STR_WINDOW > MAX_NAME_LEN, "a name must fit in the string window");

struct elf_sym {
	uint64_t start;
	uint64_t end;	/* [start, end); while loading: st_size, or its section's end if unsized */
	uint32_t name;	/* offset in names; while loading: st_name */
	uint32_t order; /* load order (.symtab, then .dynsym, in table order): last tie-break */
	uint8_t rank;	/* lower wins among symbols at one address; while loading: the binding */
	bool sized;
};

struct elf_seg {
	uint64_t offset, vaddr, filesz, align;
};

struct elf_symtab {
	struct elf_sym *syms;
	size_t nsyms, syms_cap;
	char *names; /* the kept names only, back to back */
	size_t names_len, names_cap;
	char **demangled;	/* lazily allocated, one slot per symbol */
	size_t demangled_bytes; /* held by the demangled names, at most DEMANGLE_CACHE_MAX */
	struct elf_seg *segs;
	size_t nsegs;
	unsigned e_type;
	bool stripped;
	char build_id[ELF_BUILD_ID_HEX_MAX];
	char go_build_id[GO_BUILD_ID_MAX];
	struct elf_skip *skip; /* the caller's, during the load only; may be NULL */
};

struct notes {
	char *build_id;	   /* ELF_BUILD_ID_HEX_MAX bytes */
	char *go_build_id; /* GO_BUILD_ID_MAX bytes or NULL */
};

static void hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static void scan_note_data(const struct elf_file *ef, const void *buf, size_t len, uint64_t align,
			   struct notes *n)
{
	struct elf_note nh;
	size_t off = 0, i;

	while (elf_file__next_note(ef, buf, len, align, &off, &nh) > 0) {
		if (nh.type == NT_GNU_BUILD_ID && nh.namesz == 4 && !memcmp(nh.name, "GNU", 4) &&
		    nh.descsz >= 1 && nh.descsz <= (ELF_BUILD_ID_HEX_MAX - 1) / 2 &&
		    !n->build_id[0]) {
			hex_encode(nh.desc, nh.descsz, n->build_id);
		} else if (n->go_build_id && nh.type == NT_GO_BUILDID && nh.namesz == 3 &&
			   !memcmp(nh.name, "Go", 3) && nh.descsz < GO_BUILD_ID_MAX &&
			   !n->go_build_id[0]) {
			for (i = 0; i < nh.descsz; i++) {
				if (nh.desc[i] < 0x20 || nh.desc[i] > 0x7e)
					break;
				n->go_build_id[i] = (char)nh.desc[i];
			}
			n->go_build_id[i] = '\0';
		}
	}
}

/* Reads and scans the notes at [@off, @off + @len); a range outside the file is skipped. */
static int scan_note_range(const struct elf_file *ef, uint64_t off, uint64_t len, uint64_t align,
			   struct notes *n)
{
	void *buf;
	int err;

	if (!len || len > NOTE_MAX)
		return 0;
	err = elf_file__read(ef, off, len, &buf);
	if (err)
		return err == -EINVAL ? 0 : err;
	scan_note_data(ef, buf, len, align, n);
	free(buf);
	return 0;
}

static bool is_id_note(const char *name)
{
	return !strcmp(name, ".note.gnu.build-id") || !strcmp(name, ".note.go.buildid");
}

/*
 * The build ids, reading as little as possible: the sections the linkers name for them, then
 * the other small note sections, then, when section headers are stripped away entirely,
 * the PT_NOTE segments.
 */
static int scan_notes(const struct elf_file *ef, struct notes *n)
{
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	size_t pass, i;
	int err;

	for (pass = 0; pass < 2 && !n->build_id[0]; pass++) {
		for (i = 1; (sh = elf_file__shdr(ef, i)); i++) {
			if (sh->sh_type != SHT_NOTE ||
			    is_id_note(elf_file__section_name(ef, i)) != !pass)
				continue;
			err = scan_note_range(ef, sh->sh_offset, sh->sh_size, sh->sh_addralign, n);
			if (err)
				return err;
		}
	}
	for (i = 0; !n->build_id[0] && (ph = elf_file__phdr(ef, i)); i++) {
		if (ph->p_type != PT_NOTE)
			continue;
		err = scan_note_range(ef, ph->p_offset, ph->p_filesz, ph->p_align, n);
		if (err)
			return err;
	}
	return 0;
}

static int load_segments(const struct elf_file *ef, struct elf_symtab *st)
{
	size_t i, n = elf_file__phnum(ef);
	const Elf64_Phdr *ph;

	if (!n)
		return 0;
	st->segs = calloc(n, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ph = elf_file__phdr(ef, i);
		if (ph->p_type != PT_LOAD || ph->p_offset + ph->p_filesz < ph->p_offset)
			continue;
		st->segs[st->nsegs++] = (struct elf_seg){
			.offset = ph->p_offset,
			.vaddr = ph->p_vaddr,
			.filesz = ph->p_filesz,
			.align = ph->p_align,
		};
	}
	return 0;
}

static uint8_t sym_rank(unsigned bind, const char *name)
{
	unsigned r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2, u = 0;

	while (name[u] == '_' && u < 15)
		u++;
	return (uint8_t)(r << 4 | u);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->sized != y->sized)
		return x->sized ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int sym_name_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* True if one of the @n symbols at @syms, sorted by sym_cmp(), starts at @start. */
static bool has_start(const struct elf_sym *syms, size_t n, uint64_t start)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (syms[mid].start == start)
			return true;
		if (syms[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * A window on a string table. Names are asked for in offset order: the window only moves
 * forward, and @mark makes every byte searched for a NUL at most once, however the symbols
 * point into the table (aliases, tail-merged strings, hostile overlapping names).
 */
struct strwin {
	const struct elf_file *ef;
	uint64_t off, size; /* the table in the file */
	char *buf;
	size_t cap;
	uint64_t at; /* table offset of buf[0] */
	size_t len;
	uint64_t mark; /* no NUL in [last name asked, mark) */
	bool mark_nul; /* and the byte at mark is one */
};

/* Makes the window hold [@from, @to); @to - @from <= cap, or @to is the table end. */
static int strwin_cover(struct strwin *w, uint64_t from, uint64_t to)
{
	int err;

	if (from >= w->at && to <= w->at + w->len)
		return 0;
	w->at = from;
	w->len = w->size - from < w->cap ? w->size - from : w->cap;
	err = elf_file__read_into(w->ef, w->off + from, w->len, w->buf);
	if (err)
		w->len = 0;
	return err;
}

/*
 * The NUL-terminated name at table offset @name, borrowed until the next call, with its
 * length in @len; NULL in @out if it is empty, unterminated or longer than MAX_NAME_LEN.
 */
static int strwin_get(struct strwin *w, uint64_t name, const char **out, size_t *len)
{
	uint64_t lim;
	const char *nul;
	int err;

	*out = NULL;
	if (name >= w->size)
		return 0;
	lim = w->size - name > MAX_NAME_LEN + 1 ? name + MAX_NAME_LEN + 1 : w->size;
	if (name > w->mark) {
		w->mark = name;
		w->mark_nul = false;
	}
	if (!w->mark_nul) {
		if (w->mark >= lim)
			return 0;
		err = strwin_cover(w, name, lim);
		if (err)
			return err;
		nul = memchr(w->buf + (w->mark - w->at), '\0', lim - w->mark);
		if (!nul) {
			w->mark = lim;
			return 0;
		}
		w->mark = w->at + (uint64_t)(nul - w->buf);
		w->mark_nul = true;
	}
	if (w->mark == name || w->mark - name > MAX_NAME_LEN)
		return 0;
	err = strwin_cover(w, name, w->mark + 1);
	if (err)
		return err;
	*out = w->buf + (name - w->at);
	*len = (size_t)(w->mark - name);
	return 0;
}

/*
 * Gives the symbols [@from, nsyms), whose name fields still hold st_name offsets into the
 * string table @strsh, their names in st->names, and drops those without a usable one.
 * Names are read in offset order through a window, and one copied name serves every symbol
 * whose st_name points into it (aliases, and linkers' tail-merged strings).
 */
static int resolve_names(const struct elf_file *ef, const Elf64_Shdr *strsh, size_t from,
			 struct elf_symtab *st)
{
	struct strwin w = { .ef = ef, .off = strsh->sh_offset, .size = strsh->sh_size };
	uint64_t prev_name = 0, need;
	size_t i, kept = from, len = 0, prev_len = 0;
	uint32_t prev_at = 0;
	bool have_prev = false;
	const char *name;
	char *tmp;
	int err = 0;

	if (from == st->nsyms)
		return 0;
	qsort(st->syms + from, st->nsyms - from, sizeof(*st->syms), sym_name_cmp);
	/*
	 * Copied names are disjoint ranges of [first st_name, table end): reserving that much
	 * (capped) means the arena never moves while filling. Pages never written cost no RSS,
	 * and the arena is trimmed to its length at the end.
	 */
	need = w.size - st->syms[from].name;
	if (need > (uint64_t)(st->nsyms - from) * (MAX_NAME_LEN + 1))
		need = (uint64_t)(st->nsyms - from) * (MAX_NAME_LEN + 1);
	if (need > NAMES_MAX - st->names_len)
		need = NAMES_MAX - st->names_len;
	if (st->names_len + need > st->names_cap) {
		tmp = realloc(st->names, st->names_len + need);
		if (!tmp)
			return -ENOMEM;
		st->names = tmp;
		st->names_cap = st->names_len + need;
	}
	w.cap = w.size < STR_WINDOW ? w.size : STR_WINDOW;
	w.buf = malloc(w.cap);
	if (!w.buf)
		return -ENOMEM;
	for (i = from; i < st->nsyms; i++) {
		struct elf_sym s = st->syms[i];

		if (have_prev && s.name >= prev_name && s.name < prev_name + prev_len) {
			s.name = prev_at + (uint32_t)(s.name - prev_name);
		} else {
			err = strwin_get(&w, s.name, &name, &len);
			if (err)
				break;
			if (!name)
				continue;
			if (len + 1 > st->names_cap - st->names_len) {
				err = -E2BIG;
				break;
			}
			memcpy(st->names + st->names_len, name, len + 1);
			have_prev = true;
			prev_name = s.name;
			prev_len = len;
			prev_at = (uint32_t)st->names_len;
			s.name = prev_at;
			st->names_len += len + 1;
		}
		s.rank = sym_rank(s.rank, st->names + s.name);
		st->syms[kept++] = s;
	}
	free(w.buf);
	st->nsyms = kept;
	return err;
}

/* The SHT_SYMTAB_SHNDX section of symbol table @symidx (-ENOENT if none). */
static int find_shndx(const struct elf_file *ef, size_t symidx, const Elf64_Shdr **out)
{
	const Elf64_Shdr *sh;
	size_t i;

	for (i = 1; (sh = elf_file__shdr(ef, i)); i++) {
		if (sh->sh_type == SHT_SYMTAB_SHNDX && sh->sh_link == symidx) {
			*out = sh;
			return 0;
		}
	}
	return -ENOENT;
}

/* Decides whether @sym is a function kept; its section index is @shndx (already resolved). */
static bool want_sym(const struct elf_file *ef, const Elf64_Sym *sym, uint32_t shndx,
		     uint64_t strsz)
{
	unsigned type = ELF64_ST_TYPE(sym->st_info);
	const Elf64_Shdr *sec;

	if (shndx == SHN_UNDEF || !(sec = elf_file__shdr(ef, shndx)))
		return false;
	if (type != STT_FUNC && type != STT_GNU_IFUNC &&
	    !(type == STT_NOTYPE && sym->st_size && (sec->sh_flags & SHF_EXECINSTR)))
		return false;
	return sym->st_value && sym->st_name && sym->st_name < strsz;
}

static int push_sym(struct elf_symtab *st, const struct elf_file *ef, const Elf64_Sym *sym,
		    uint32_t shndx, uint32_t order)
{
	const Elf64_Shdr *sec = elf_file__shdr(ef, shndx);
	uint64_t sec_size = sec->sh_type == SHT_NOBITS ? 0 : sec->sh_size;
	struct elf_sym *s;

	if (st->nsyms == st->syms_cap) {
		size_t cap = st->syms_cap ? st->syms_cap * 2 : 256;

		s = realloc(st->syms, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		st->syms = s;
		st->syms_cap = cap;
	}
	s = &st->syms[st->nsyms++];
	*s = (struct elf_sym){
		.start = sym->st_value,
		.name = sym->st_name,
		.order = order,
		.rank = ELF64_ST_BIND(sym->st_info),
		.sized = sym->st_size != 0,
	};
	if (s->sized)
		s->end = sym->st_size;
	else if (sec_size && sym->st_value >= sec->sh_addr &&
		 sym->st_value - sec->sh_addr < sec_size)
		/* An unsized symbol reaches at most to the end of its section. */
		s->end = sec->sh_addr + sec_size;
	else
		s->end = sym->st_value + 1;
	return 0;
}

/*
 * Whether table @idx, claiming @len bytes, is not to be read: over @max (0: no cap of its
 * own), or a sparse file's claim (holes read as zeros: walking it would only cost time).
 * Records why in @skip.
 */
static bool skip_claim(const struct elf_file *ef, size_t idx, uint64_t len, uint64_t max,
		       struct elf_skip *skip)
{
	const char *name = elf_file__section_name(ef, idx);

	if (max && len > max) {
		elf_skip_set(skip, ELF_SKIP_OVER_LIMIT, name, len, max);
		return true;
	}
	if (!elf_file__backed(ef, len)) {
		elf_skip_set(skip, ELF_SKIP_SPARSE, name, len, elf_file__allocated(ef));
		return true;
	}
	return false;
}

/*
 * Adds the function symbols of symbol table @symidx. With @ndedup, the symbols [0, @ndedup)
 * (sorted) are already loaded, and a symbol at an address one of them starts at adds nothing:
 * .dynsym repeats .symtab. A table that is not readable as such (outside the file, a string
 * table that is not one) is skipped, as libelf-based readers do.
 */
static int load_table(const struct elf_file *ef, size_t symidx, size_t max_syms, size_t ndedup,
		      uint32_t *order, struct elf_symtab *st)
{
	const Elf64_Shdr *sh = elf_file__shdr(ef, symidx), *strsh, *xsh = NULL;
	size_t ent = elf_file__sym_size(ef), per = SYM_CHUNK / ent, from = st->nsyms;
	uint64_t i, j, n, chunk;
	uint32_t *xbuf = NULL, shndx;
	uint8_t *buf = NULL;
	Elf64_Sym sym;
	int err = 0;

	strsh = elf_file__shdr(ef, sh->sh_link);
	n = sh->sh_size / ent;
	if (!n || sh->sh_type == SHT_NOBITS || !strsh || strsh->sh_type != SHT_STRTAB ||
	    sh->sh_offset > elf_file__size(ef) ||
	    sh->sh_size > elf_file__size(ef) - sh->sh_offset ||
	    strsh->sh_offset > elf_file__size(ef) ||
	    strsh->sh_size > elf_file__size(ef) - strsh->sh_offset)
		return 0;
	if (skip_claim(ef, symidx, sh->sh_size, 0, st->skip) ||
	    skip_claim(ef, sh->sh_link, strsh->sh_size, ELF_FILE_MAX_READ, st->skip))
		return 0;
	/* Section indexes past SHN_LORESERVE live in a parallel table (SHN_XINDEX). */
	if (!find_shndx(ef, symidx, &xsh) &&
	    (xsh->sh_size / 4 < n || xsh->sh_offset > elf_file__size(ef) ||
	     n * 4 > elf_file__size(ef) - xsh->sh_offset))
		xsh = NULL;
	buf = malloc(per * ent);
	if (xsh)
		xbuf = malloc(per * 4);
	if (!buf || (xsh && !xbuf)) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !err; i += chunk) {
		chunk = n - i < per ? n - i : per;
		err = elf_file__read_into(ef, sh->sh_offset + i * ent, chunk * ent, buf);
		if (!err && xsh)
			err = elf_file__read_into(ef, xsh->sh_offset + i * 4, chunk * 4, xbuf);
		for (j = 0; j < chunk && !err; j++) {
			elf_file__sym(ef, buf + j * ent, &sym);
			shndx = sym.st_shndx;
			if (shndx == SHN_XINDEX && xsh) {
				shndx = elf_file__word(ef, &xbuf[j]);
			} else if (shndx >= SHN_LORESERVE) {
				continue;
			}
			if (!want_sym(ef, &sym, shndx, strsh->sh_size) ||
			    (ndedup && has_start(st->syms, ndedup, sym.st_value)))
				continue;
			if (st->nsyms >= max_syms) {
				elf_skip_set(st->skip, ELF_SKIP_COUNT,
					     elf_file__section_name(ef, symidx), n, max_syms);
				err = -E2BIG;
				break;
			}
			err = push_sym(st, ef, &sym, shndx, (*order)++);
		}
	}
	if (!err)
		err = resolve_names(ef, strsh, from, st);
	if (err == -E2BIG)
		elf_skip_set(st->skip, ELF_SKIP_OVER_LIMIT, elf_file__section_name(ef, sh->sh_link),
			     strsh->sh_size, NAMES_MAX);
out:
	free(xbuf);
	free(buf);
	return err;
}

/*
 * Sorts the symbols [@nhead, nsyms) and merges them with the already sorted [0, @nhead):
 * .dynsym adds few symbols to .symtab, so sorting everything again would be wasted work.
 */
static int merge_tail(struct elf_symtab *st, size_t nhead)
{
	size_t n = st->nsyms, i = 0, j = nhead, k = 0;
	struct elf_sym *out;

	if (nhead == n)
		return 0;
	qsort(st->syms + nhead, n - nhead, sizeof(*st->syms), sym_cmp);
	if (!nhead || sym_cmp(&st->syms[nhead - 1], &st->syms[nhead]) <= 0)
		return 0;
	out = malloc(n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < nhead && j < n)
		out[k++] = sym_cmp(&st->syms[j], &st->syms[i]) < 0 ? st->syms[j++] : st->syms[i++];
	while (i < nhead)
		out[k++] = st->syms[i++];
	while (j < n)
		out[k++] = st->syms[j++];
	free(st->syms);
	st->syms = out;
	st->syms_cap = n;
	return 0;
}

/* Keeps one symbol per address (the first in sym_cmp() order) and sets the ends. */
static void finish_syms(struct elf_symtab *st)
{
	size_t i, n = 0;
	uint64_t next;
	void *tmp;

	if (!st->nsyms) {
		/* All dropped: give back the reserves. */
		free(st->syms);
		free(st->names);
		st->syms = NULL;
		st->names = NULL;
		st->syms_cap = st->names_cap = st->names_len = 0;
		return;
	}
	for (i = 0; i < st->nsyms; i++)
		if (!n || st->syms[n - 1].start != st->syms[i].start)
			st->syms[n++] = st->syms[i];
	st->nsyms = n;
	for (i = 0; i < n; i++) {
		struct elf_sym *s = &st->syms[i];

		if (s->sized) {
			s->end = s->start + s->end < s->start ? UINT64_MAX : s->start + s->end;
		} else {
			next = i + 1 < n ? st->syms[i + 1].start : UINT64_MAX;
			s->end = s->end < next ? s->end : next;
		}
	}
	/* Trim to size: shrinking never moves a large block, and frees the reserve. */
	tmp = realloc(st->syms, n * sizeof(*st->syms));
	if (tmp) {
		st->syms = tmp;
		st->syms_cap = n;
	}
	tmp = realloc(st->names, st->names_len);
	if (tmp) {
		st->names = tmp;
		st->names_cap = st->names_len;
	}
}

static int load_syms(const struct elf_file *ef, const struct elf_symtab_opts *o,
		     struct elf_symtab *st)
{
	int symidx, dynidx, err = 0;
	uint32_t order = 0;
	size_t ndedup;

	symidx = elf_file__section_by_type(ef, SHT_SYMTAB, NULL);
	dynidx = elf_file__section_by_type(ef, SHT_DYNSYM, NULL);
	st->stripped = symidx < 0;
	if (symidx > 0) {
		err = load_table(ef, (size_t)symidx, o->max_syms, 0, &order, st);
		if (err)
			return err;
		if (st->nsyms > 1)
			qsort(st->syms, st->nsyms, sizeof(*st->syms), sym_cmp);
	}
	ndedup = st->nsyms;
	if (dynidx > 0)
		err = load_table(ef, (size_t)dynidx, o->max_syms, ndedup, &order, st);
	if (!err)
		err = merge_tail(st, ndedup);
	if (err)
		return err;
	finish_syms(st);
	return 0;
}

static void fill_opts(const struct elf_symtab_opts *in, struct elf_symtab_opts *o)
{
	*o = in ? *in : (struct elf_symtab_opts){ 0 };
	/* Load order is kept in 32 bits. */
	if (!o->max_syms || o->max_syms > UINT32_MAX)
		o->max_syms = o->max_syms ? UINT32_MAX : ELF_SYMTAB_MAX_SYMS_DEFAULT;
	if (!o->max_file_size)
		o->max_file_size = ELF_SYMTAB_MAX_FILE_DEFAULT;
}

static int load_elf(const struct elf_file *ef, const struct elf_symtab_opts *o,
		    struct elf_symtab **out)
{
	struct elf_symtab *st;
	struct notes notes;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->e_type = elf_file__ehdr(ef)->e_type;
	st->skip = o->skip;
	notes = (struct notes){ st->build_id, st->go_build_id };
	err = load_segments(ef, st);
	if (err)
		goto err_free;
	err = scan_notes(ef, &notes);
	if (err)
		goto err_free;
	err = load_syms(ef, o, st);
	if (err)
		goto err_free;
	st->skip = NULL;
	*out = st;
	return 0;

err_free:
	elf_symtab__free(st);
	return err;
}

int elf_symtab__from_fd(int fd, const struct elf_symtab_opts *opts, struct elf_symtab **out)
{
	struct elf_symtab_opts o;
	struct elf_file *ef;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	fill_opts(opts, &o);
	err = elf_file__open(fd,
			     &(struct elf_file_opts){ .max_file_size = o.max_file_size,
						      .skip = o.skip },
			     &ef);
	if (err)
		return err;
	err = load_elf(ef, &o, out);
	elf_file__free(ef);
	return err;
}

int elf_symtab__from_memory(const void *buf, size_t len, const struct elf_symtab_opts *opts,
			    struct elf_symtab **out)
{
	struct elf_symtab_opts o;
	struct elf_file *ef;
	int err;

	if (!buf || !out || len < EI_NIDENT)
		return -EINVAL;
	fill_opts(opts, &o);
	err = elf_file__open_memory(buf, len,
				    &(struct elf_file_opts){ .max_file_size = o.max_file_size,
							     .skip = o.skip },
				    &ef);
	if (err)
		return err;
	err = load_elf(ef, &o, out);
	elf_file__free(ef);
	return err;
}

int elf_read_ident(int fd, struct elf_ident *out)
{
	struct elf_ident id = { 0 };
	struct notes notes = { id.build_id, NULL };
	struct elf_file *ef;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	err = elf_file__open(
		fd, &(struct elf_file_opts){ .max_file_size = ELF_SYMTAB_MAX_FILE_DEFAULT }, &ef);
	if (err)
		return err;
	id.has_symtab = elf_file__section_by_type(ef, SHT_SYMTAB, NULL) > 0;
	err = scan_notes(ef, &notes);
	elf_file__free(ef);
	if (err)
		return err;
	*out = id;
	return 0;
}

void elf_symtab__free(struct elf_symtab *st)
{
	size_t i;

	if (!st)
		return;
	if (st->demangled) {
		for (i = 0; i < st->nsyms; i++)
			if (st->demangled[i] != st->names + st->syms[i].name)
				free(st->demangled[i]);
		free(st->demangled);
	}
	free(st->syms);
	free(st->names);
	free(st->segs);
	free(st);
}

const char *elf_symtab__build_id(const struct elf_symtab *st)
{
	return st && st->build_id[0] ? st->build_id : NULL;
}

const char *elf_symtab__go_build_id(const struct elf_symtab *st)
{
	return st && st->go_build_id[0] ? st->go_build_id : NULL;
}

bool elf_symtab__stripped(const struct elf_symtab *st)
{
	return st ? st->stripped : true;
}

size_t elf_symtab__count(const struct elf_symtab *st)
{
	return st ? st->nsyms : 0;
}

unsigned elf_symtab__type(const struct elf_symtab *st)
{
	return st ? st->e_type : ET_NONE;
}

int elf_symtab__file_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr)
{
	const struct elf_seg *g;
	uint64_t page, lo, hi;
	size_t i;

	if (!st || !vaddr)
		return -EINVAL;
	for (i = 0; i < st->nsegs; i++) {
		g = &st->segs[i];
		if (off >= g->offset && off - g->offset < g->filesz) {
			*vaddr = g->vaddr + (off - g->offset);
			return 0;
		}
	}
	/*
	 * The pages around a segment are mapped too (its page-aligned head and tail): an ip
	 * there is unusual but is translated the same way.
	 */
	for (i = 0; i < st->nsegs; i++) {
		g = &st->segs[i];
		page = g->align >= 4096 && g->align <= 65536 && !(g->align & (g->align - 1)) ?
			       g->align :
			       4096;
		lo = g->offset & ~(page - 1);
		hi = g->offset + g->filesz + page - 1;
		if (hi < g->offset)
			continue;
		hi &= ~(page - 1);
		if (off >= lo && off < hi && g->vaddr + off >= g->offset) {
			*vaddr = g->vaddr + off - g->offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* The demangled form of @raw (a new string), or NULL to show @raw as it is. */
static char *demangle_kept(struct elf_symtab *st, const char *raw)
{
	size_t out;
	char *dem;

	if (st->demangled_bytes >= DEMANGLE_CACHE_MAX)
		return NULL;
	dem = demangle(raw);
	if (!dem)
		return NULL;
	out = strlen(dem);
	if (out + 1 > DEMANGLE_CACHE_MAX - st->demangled_bytes) {
		free(dem);
		return NULL;
	}
	st->demangled_bytes += out + 1;
	return dem;
}

static const char *sym_name(struct elf_symtab *st, size_t i)
{
	char *raw = st->names + st->syms[i].name, *dem;

	if (!demangle_wanted(raw))
		return raw;
	if (!st->demangled) {
		st->demangled = calloc(st->nsyms, sizeof(*st->demangled));
		if (!st->demangled)
			return raw;
	}
	if (!st->demangled[i]) {
		dem = demangle_kept(st, raw);
		st->demangled[i] = dem ? dem : raw;
	}
	return st->demangled[i];
}

const char *elf_symtab__lookup(struct elf_symtab *st, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi, mid, k;

	if (!st || !st->nsyms)
		return NULL;
	hi = st->nsyms;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < LOOKUP_WALK_BACK && lo > 0; k++, lo--) {
		if (vaddr < st->syms[lo - 1].end) {
			if (start)
				*start = st->syms[lo - 1].start;
			return sym_name(st, lo - 1);
		}
	}
	return NULL;
}
