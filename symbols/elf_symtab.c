// SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_symtab.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest symbol name kept; longer ones (pathological C++ templates) are skipped. */
#define MAX_NAME_LEN (64u << 10)
/* More sections or segments than this is not an executable or library we can name. */
#define MAX_SECTIONS (1u << 20)
#define MAX_SEGMENTS 4096u
#define GO_BUILD_ID_MAX 128
#define NT_GO_BUILDID 4
/* Symbols before the looked-up one that are checked for enclosing it (nested sized symbols). */
#define LOOKUP_WALK_BACK 4

/*
 * The optional C++ demangler: present when the binary links libstdc++, otherwise the weak
 * reference is NULL and names stay mangled. A weak reference does not make a library
 * "needed", so under --as-needed (Debian's default) link it with
 * -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state.
 */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
	__attribute__((weak));

struct elf_sym {
	uint64_t start, end;	/* [start, end) */
	uint64_t size;		/* st_size; while loading an unsized symbol holds its section end */
	uint32_t name;		/* offset in names */
	uint8_t rank;		/* lower wins among symbols at one address */
	bool sized;
};

struct elf_seg {
	uint64_t offset, vaddr, filesz, align;
};

struct sec_info {
	uint64_t addr, size;
	bool exec;
};

struct elf_symtab {
	struct elf_sym *syms;
	size_t nsyms, syms_cap;
	char *names;
	size_t names_len, names_cap;
	char **demangled;	/* lazily allocated, one slot per symbol */
	struct elf_seg *segs;
	size_t nsegs;
	unsigned e_type;
	bool stripped;
	char build_id[ELF_BUILD_ID_HEX_MAX];
	char go_build_id[GO_BUILD_ID_MAX];
};

struct notes {
	char *build_id;		/* ELF_BUILD_ID_HEX_MAX bytes */
	char *go_build_id;	/* GO_BUILD_ID_MAX bytes or NULL */
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

static void scan_note_data(const Elf_Data *data, struct notes *n)
{
	size_t off = 0, next, name_off, desc_off, i;
	const char *buf, *name;
	const uint8_t *desc;
	GElf_Nhdr nh;

	if (!data || !data->d_buf || !data->d_size)
		return;
	buf = data->d_buf;
	while (off < data->d_size) {
		next = gelf_getnote((Elf_Data *)data, off, &nh, &name_off, &desc_off);
		if (!next || next <= off)
			break;
		off = next;
		if (name_off > data->d_size || nh.n_namesz > data->d_size - name_off ||
		    desc_off > data->d_size || nh.n_descsz > data->d_size - desc_off)
			break;
		name = buf + name_off;
		desc = (const uint8_t *)buf + desc_off;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz >= 1 && nh.n_descsz <= (ELF_BUILD_ID_HEX_MAX - 1) / 2 &&
		    !n->build_id[0]) {
			hex_encode(desc, nh.n_descsz, n->build_id);
		} else if (n->go_build_id && nh.n_type == NT_GO_BUILDID && nh.n_namesz == 3 &&
			   !memcmp(name, "Go", 3) && nh.n_descsz < GO_BUILD_ID_MAX &&
			   !n->go_build_id[0]) {
			for (i = 0; i < nh.n_descsz; i++) {
				if (desc[i] < 0x20 || desc[i] > 0x7e)
					break;
				n->go_build_id[i] = (char)desc[i];
			}
			n->go_build_id[i] = '\0';
		}
	}
}

static void scan_notes(Elf *e, struct notes *n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, phnum;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		scan_note_data(elf_getdata(scn, NULL), n);
	}
	if (n->build_id[0])
		return;
	/* Section headers may be stripped away entirely: the notes are still in PT_NOTE. */
	if (elf_getphdrnum(e, &phnum) || phnum > MAX_SEGMENTS)
		return;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		scan_note_data(elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
						    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
			       n);
	}
}

static int load_segments(Elf *e, struct elf_symtab *st)
{
	size_t i, phnum;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &phnum) || phnum > MAX_SEGMENTS)
		return -EINVAL;
	if (!phnum)
		return 0;
	st->segs = calloc(phnum, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(e, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD || ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		st->segs[st->nsegs++] = (struct elf_seg){
			.offset = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.align = ph.p_align,
		};
	}
	return 0;
}

static int add_name(struct elf_symtab *st, const char *name, size_t len, uint32_t *off)
{
	size_t cap;
	char *tmp;

	if (st->names_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	if (st->names_len + len + 1 > st->names_cap) {
		cap = st->names_cap ? st->names_cap * 2 : 4096;
		while (cap < st->names_len + len + 1)
			cap *= 2;
		tmp = realloc(st->names, cap);
		if (!tmp)
			return -ENOMEM;
		st->names = tmp;
		st->names_cap = cap;
	}
	memcpy(st->names + st->names_len, name, len + 1);
	*off = (uint32_t)st->names_len;
	st->names_len += len + 1;
	return 0;
}

static uint8_t sym_rank(unsigned bind, const char *name)
{
	unsigned r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2, u = 0;

	while (name[u] == '_' && u < 15)
		u++;
	return (uint8_t)(r << 4 | u);
}

static int add_syms(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const struct sec_info *secs,
		    size_t nsecs, size_t max_syms, struct elf_symtab *st)
{
	size_t i, n, ent, len;
	struct elf_sym *tmp;
	const char *name;
	Elf_Data *data;
	unsigned type;
	GElf_Sym sym;
	uint32_t off;
	int err;

	data = elf_getdata(scn, NULL);
	ent = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !ent)
		return 0;
	n = data->d_size / ent;
	for (i = 0; i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= nsecs)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && sym.st_size && secs[sym.st_shndx].exec))
			continue;
		if (!sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		len = strnlen(name, MAX_NAME_LEN + 1);
		if (len > MAX_NAME_LEN)
			continue;
		if (st->nsyms >= max_syms)
			return -E2BIG;
		if (st->nsyms == st->syms_cap) {
			size_t cap = st->syms_cap ? st->syms_cap * 2 : 256;

			tmp = realloc(st->syms, cap * sizeof(*tmp));
			if (!tmp)
				return -ENOMEM;
			st->syms = tmp;
			st->syms_cap = cap;
		}
		err = add_name(st, name, len, &off);
		if (err)
			return err;
		tmp = &st->syms[st->nsyms++];
		tmp->start = sym.st_value;
		tmp->name = off;
		tmp->rank = sym_rank(GELF_ST_BIND(sym.st_info), name);
		tmp->sized = sym.st_size != 0;
		if (tmp->sized) {
			tmp->size = sym.st_size;
		} else {
			const struct sec_info *sec = &secs[sym.st_shndx];

			/* An unsized symbol reaches at most to the end of its section. */
			if (sec->size && sym.st_value >= sec->addr &&
			    sym.st_value - sec->addr < sec->size)
				tmp->size = sec->addr + sec->size;
			else
				tmp->size = sym.st_value + 1;
		}
	}
	return 0;
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
	return x->name < y->name ? -1 : x->name > y->name;
}

static void finish_syms(struct elf_symtab *st)
{
	size_t i, n = 0;
	uint64_t next;

	if (!st->nsyms)
		return;
	qsort(st->syms, st->nsyms, sizeof(*st->syms), sym_cmp);
	for (i = 0; i < st->nsyms; i++)
		if (!n || st->syms[n - 1].start != st->syms[i].start)
			st->syms[n++] = st->syms[i];
	st->nsyms = n;
	for (i = 0; i < n; i++) {
		struct elf_sym *s = &st->syms[i];

		if (s->sized) {
			s->end = s->start + s->size < s->start ? UINT64_MAX : s->start + s->size;
		} else {
			next = i + 1 < n ? st->syms[i + 1].start : UINT64_MAX;
			s->end = s->size < next ? s->size : next;
		}
	}
}

static int load_sections(Elf *e, const struct elf_symtab_opts *o, struct elf_symtab *st)
{
	struct notes notes = { st->build_id, st->go_build_id };
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symtab_sh, dynsym_sh;
	struct sec_info *secs = NULL;
	size_t shnum, idx;
	int err = 0;

	if (elf_getshdrnum(e, &shnum) || shnum > MAX_SECTIONS)
		return -EINVAL;
	if (shnum) {
		secs = calloc(shnum, sizeof(*secs));
		if (!secs)
			return -ENOMEM;
	}
	while ((scn = elf_nextscn(e, scn))) {
		idx = elf_ndxscn(scn);
		if (!gelf_getshdr(scn, &sh) || idx >= shnum)
			continue;
		secs[idx] = (struct sec_info){
			.addr = sh.sh_addr,
			.size = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size,
			.exec = sh.sh_flags & SHF_EXECINSTR,
		};
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		}
	}
	scan_notes(e, &notes);
	st->stripped = !symtab;
	if (symtab)
		err = add_syms(e, symtab, &symtab_sh, secs, shnum, o->max_syms, st);
	if (!err && dynsym)
		err = add_syms(e, dynsym, &dynsym_sh, secs, shnum, o->max_syms, st);
	free(secs);
	if (err)
		return err;
	finish_syms(st);
	return 0;
}

static void fill_opts(const struct elf_symtab_opts *in, struct elf_symtab_opts *o)
{
	*o = in ? *in : (struct elf_symtab_opts){ 0 };
	if (!o->max_syms)
		o->max_syms = ELF_SYMTAB_MAX_SYMS_DEFAULT;
	if (!o->max_file_size)
		o->max_file_size = ELF_SYMTAB_MAX_FILE_DEFAULT;
}

static int load_elf(Elf *e, uint64_t size, const struct elf_symtab_opts *o,
		    struct elf_symtab **out)
{
	struct elf_symtab *st;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -EINVAL;
	/* libelf quietly drops program headers past the end of the file: that file is cut. */
	if (eh.e_phnum && eh.e_phnum != PN_XNUM &&
	    (eh.e_phoff > size || (uint64_t)eh.e_phnum * eh.e_phentsize > size - eh.e_phoff))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->e_type = eh.e_type;
	err = load_segments(e, st);
	if (err)
		goto err_free;
	err = load_sections(e, o, st);
	if (err)
		goto err_free;
	*out = st;
	return 0;

err_free:
	elf_symtab__free(st);
	return err;
}

static int check_fd(int fd, uint64_t max, uint64_t *size)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	if ((uint64_t)sb.st_size > max)
		return -EFBIG;
	if (size)
		*size = (uint64_t)sb.st_size;
	return 0;
}

int elf_symtab__from_fd(int fd, const struct elf_symtab_opts *opts, struct elf_symtab **out)
{
	struct elf_symtab_opts o;
	uint64_t size;
	Elf *e;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	fill_opts(opts, &o);
	err = check_fd(fd, o.max_file_size, &size);
	if (err)
		return err;
	elf_version(EV_CURRENT);
	/* ELF_C_READ reads with pread: a file truncated under us gives an error, not SIGBUS. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -EINVAL;
	err = load_elf(e, size, &o, out);
	elf_end(e);
	return err;
}

int elf_symtab__from_memory(const void *buf, size_t len, const struct elf_symtab_opts *opts,
			    struct elf_symtab **out)
{
	struct elf_symtab_opts o;
	char *copy;
	Elf *e;
	int err;

	if (!buf || !out || len < EI_NIDENT)
		return -EINVAL;
	fill_opts(opts, &o);
	if (len > o.max_file_size)
		return -EFBIG;
	/* elf_memory() may convert the image in place. */
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	elf_version(EV_CURRENT);
	e = elf_memory(copy, len);
	if (!e) {
		err = -EINVAL;
		goto out_free;
	}
	err = load_elf(e, len, &o, out);
	elf_end(e);
out_free:
	free(copy);
	return err;
}

int elf_read_ident(int fd, struct elf_ident *out)
{
	struct elf_ident id = { 0 };
	struct notes notes = { id.build_id, NULL };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	err = check_fd(fd, ELF_SYMTAB_MAX_FILE_DEFAULT, NULL);
	if (err)
		return err;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -EINVAL;
	if (elf_kind(e) != ELF_K_ELF) {
		err = -EINVAL;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			id.has_symtab = true;
	scan_notes(e, &notes);
	*out = id;
	err = 0;
out:
	elf_end(e);
	return err;
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
			       g->align : 4096;
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

static const char *sym_name(struct elf_symtab *st, size_t i)
{
	char *raw = st->names + st->syms[i].name, *dem;
	int status = -1;

	if (!__cxa_demangle || raw[0] != '_' || raw[1] != 'Z')
		return raw;
	if (!st->demangled) {
		st->demangled = calloc(st->nsyms, sizeof(*st->demangled));
		if (!st->demangled)
			return raw;
	}
	if (!st->demangled[i]) {
		dem = __cxa_demangle(raw, NULL, NULL, &status);
		if (status || !dem) {
			free(dem);
			dem = raw;
		}
		st->demangled[i] = dem;
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
