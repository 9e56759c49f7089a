// SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_file.h"

#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/text.h"

struct elf_file {
	int fd; /* -1: in memory */
	const uint8_t *mem;
	uint64_t size;
	uint64_t allocated; /* bytes on disk (st_blocks), 0: unknown */
	bool is64, swap;
	bool shdrs_ignored;
	Elf64_Ehdr eh;
	Elf64_Phdr *phdrs;
	size_t phnum;
	Elf64_Shdr *shdrs;
	size_t shnum;
	char *shstrtab; /* NUL-terminated; NULL: sections are nameless */
	uint64_t shstrtab_len;
};

static uint64_t rd(const struct elf_file *ef, const uint8_t *p, size_t n)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, 2);
		return ef->swap ? bswap_16(v16) : v16;
	case 4:
		memcpy(&v32, p, 4);
		return ef->swap ? bswap_32(v32) : v32;
	default:
		memcpy(&v64, p, 8);
		return ef->swap ? bswap_64(v64) : v64;
	}
}

/* Field @f of the ELF32 struct @t32 or ELF64 struct @t64 found at @raw, by the file's class. */
#define FIELD(ef, raw, t32, t64, f)                                                              \
	((ef)->is64 ? rd(ef, (const uint8_t *)(raw) + offsetof(t64, f), sizeof(((t64 *)0)->f)) : \
		      rd(ef, (const uint8_t *)(raw) + offsetof(t32, f), sizeof(((t32 *)0)->f)))

int elf_file__read_into(const struct elf_file *ef, uint64_t off, uint64_t len, void *buf)
{
	uint8_t *p = buf;
	ssize_t n;

	if (!ef || (len && !buf))
		return -EINVAL;
	if (off > ef->size || len > ef->size - off)
		return -EINVAL;
	if (len > ELF_FILE_MAX_READ)
		return -E2BIG;
	if (!ef->mem) {
		while (len) {
			n = pread(ef->fd, p, len, (off_t)off);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			/* fstat said the range was there: the file shrank under us. */
			if (!n)
				return -EIO;
			p += n;
			off += (uint64_t)n;
			len -= (uint64_t)n;
		}
		return 0;
	}
	if (len)
		memcpy(p, ef->mem + off, len);
	return 0;
}

int elf_file__read(const struct elf_file *ef, uint64_t off, uint64_t len, void **out)
{
	char *buf;
	int err;

	if (!ef || !out)
		return -EINVAL;
	if (off > ef->size || len > ef->size - off)
		return -EINVAL;
	if (len > ELF_FILE_MAX_READ || !elf_file__backed(ef, len))
		return -E2BIG;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	err = elf_file__read_into(ef, off, len, buf);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static void decode_shdr(const struct elf_file *ef, const uint8_t *raw, Elf64_Shdr *sh)
{
#define SH(f) FIELD(ef, raw, Elf32_Shdr, Elf64_Shdr, f)
	sh->sh_name = (Elf64_Word)SH(sh_name);
	sh->sh_type = (Elf64_Word)SH(sh_type);
	sh->sh_flags = SH(sh_flags);
	sh->sh_addr = SH(sh_addr);
	sh->sh_offset = SH(sh_offset);
	sh->sh_size = SH(sh_size);
	sh->sh_link = (Elf64_Word)SH(sh_link);
	sh->sh_info = (Elf64_Word)SH(sh_info);
	sh->sh_addralign = SH(sh_addralign);
	sh->sh_entsize = SH(sh_entsize);
#undef SH
}

static void decode_phdr(const struct elf_file *ef, const uint8_t *raw, Elf64_Phdr *ph)
{
#define PH(f) FIELD(ef, raw, Elf32_Phdr, Elf64_Phdr, f)
	ph->p_type = (Elf64_Word)PH(p_type);
	ph->p_flags = (Elf64_Word)PH(p_flags);
	ph->p_offset = PH(p_offset);
	ph->p_vaddr = PH(p_vaddr);
	ph->p_paddr = PH(p_paddr);
	ph->p_filesz = PH(p_filesz);
	ph->p_memsz = PH(p_memsz);
	ph->p_align = PH(p_align);
#undef PH
}

void elf_file__sym(const struct elf_file *ef, const void *raw, Elf64_Sym *out)
{
#define ST(f) FIELD(ef, raw, Elf32_Sym, Elf64_Sym, f)
	out->st_name = (Elf64_Word)ST(st_name);
	out->st_info = (unsigned char)ST(st_info);
	out->st_other = (unsigned char)ST(st_other);
	out->st_shndx = (Elf64_Section)ST(st_shndx);
	out->st_value = ST(st_value);
	out->st_size = ST(st_size);
#undef ST
}

uint32_t elf_file__word(const struct elf_file *ef, const void *raw)
{
	return (uint32_t)rd(ef, raw, 4);
}

size_t elf_file__sym_size(const struct elf_file *ef)
{
	return ef->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
}

/* The ELF header: identification, class and byte order; -EINVAL if it is not one. */
static int read_ehdr(struct elf_file *ef)
{
	uint8_t raw[sizeof(Elf64_Ehdr)];
	size_t n;
	int err;

	if (ef->size < EI_NIDENT)
		return -EINVAL;
	err = elf_file__read_into(ef, 0, EI_NIDENT, raw);
	if (err)
		return err;
	if (memcmp(raw, ELFMAG, SELFMAG) || raw[EI_VERSION] != EV_CURRENT)
		return -EINVAL;
	if (raw[EI_CLASS] != ELFCLASS32 && raw[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	if (raw[EI_DATA] != ELFDATA2LSB && raw[EI_DATA] != ELFDATA2MSB)
		return -EINVAL;
	ef->is64 = raw[EI_CLASS] == ELFCLASS64;
	ef->swap = (raw[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	n = ef->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (ef->size < n)
		return -EINVAL;
	err = elf_file__read_into(ef, 0, n, raw);
	if (err)
		return err;
#define EH(f) FIELD(ef, raw, Elf32_Ehdr, Elf64_Ehdr, f)
	memcpy(ef->eh.e_ident, raw, EI_NIDENT);
	ef->eh.e_type = (Elf64_Half)EH(e_type);
	ef->eh.e_machine = (Elf64_Half)EH(e_machine);
	ef->eh.e_version = (Elf64_Word)EH(e_version);
	ef->eh.e_entry = EH(e_entry);
	ef->eh.e_phoff = EH(e_phoff);
	ef->eh.e_shoff = EH(e_shoff);
	ef->eh.e_flags = (Elf64_Word)EH(e_flags);
	ef->eh.e_ehsize = (Elf64_Half)EH(e_ehsize);
	ef->eh.e_phentsize = (Elf64_Half)EH(e_phentsize);
	ef->eh.e_phnum = (Elf64_Half)EH(e_phnum);
	ef->eh.e_shentsize = (Elf64_Half)EH(e_shentsize);
	ef->eh.e_shnum = (Elf64_Half)EH(e_shnum);
	ef->eh.e_shstrndx = (Elf64_Half)EH(e_shstrndx);
#undef EH
	return 0;
}

/* True if the table of @n entries of @ent bytes at @off lies inside the file. */
static bool table_fits(const struct elf_file *ef, uint64_t off, uint64_t n, uint64_t ent)
{
	return off <= ef->size && n <= (ef->size - off) / ent;
}

/* Reads @n entries of @ent bytes at @off and decodes them into @out (@outsz bytes each). */
static int read_table(struct elf_file *ef, uint64_t off, size_t n, size_t ent, void **out,
		      size_t outsz,
		      void (*decode)(const struct elf_file *, const uint8_t *, void *))
{
	uint8_t *raw, *tab;
	size_t i;
	int err;

	raw = malloc(n * ent);
	tab = calloc(n, outsz);
	if (!raw || !tab) {
		err = -ENOMEM;
		goto out_free;
	}
	err = elf_file__read_into(ef, off, (uint64_t)n * ent, raw);
	if (err)
		goto out_free;
	for (i = 0; i < n; i++)
		decode(ef, raw + i * ent, tab + i * outsz);
	free(raw);
	*out = tab;
	return 0;

out_free:
	free(tab);
	free(raw);
	return err;
}

static void decode_shdr_v(const struct elf_file *ef, const uint8_t *raw, void *out)
{
	decode_shdr(ef, raw, out);
}

static void decode_phdr_v(const struct elf_file *ef, const uint8_t *raw, void *out)
{
	decode_phdr(ef, raw, out);
}

/*
 * The section header table. Section 0 carries the real counts when they overflow the ELF
 * header (e_shnum 0, e_shstrndx SHN_XINDEX, e_phnum PN_XNUM); *@phnum receives the latter.
 * A malformed table is ignored (shnum 0, shdrs_ignored); only I/O errors and -ENOMEM fail.
 */
static int read_sections(struct elf_file *ef, uint64_t *phnum)
{
	size_t ent = ef->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint8_t raw[sizeof(Elf64_Shdr)];
	uint64_t shnum, shstrndx;
	const Elf64_Shdr *strsh;
	Elf64_Shdr sh0;
	void *tab;
	int err;

	*phnum = ef->eh.e_phnum;
	if (!ef->eh.e_shoff)
		return 0;
	if (ef->eh.e_shentsize != ent || !table_fits(ef, ef->eh.e_shoff, 1, ent))
		goto ignore;
	err = elf_file__read_into(ef, ef->eh.e_shoff, ent, raw);
	if (err)
		return err;
	decode_shdr(ef, raw, &sh0);
	shnum = ef->eh.e_shnum ? ef->eh.e_shnum : sh0.sh_size;
	shstrndx = ef->eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : ef->eh.e_shstrndx;
	if (ef->eh.e_phnum == PN_XNUM)
		*phnum = sh0.sh_info;
	if (!shnum || shnum > ELF_FILE_MAX_SECTIONS ||
	    !table_fits(ef, ef->eh.e_shoff, shnum, ent) || !elf_file__backed(ef, shnum * ent))
		goto ignore;
	err = read_table(ef, ef->eh.e_shoff, shnum, ent, &tab, sizeof(Elf64_Shdr), decode_shdr_v);
	if (err)
		return err;
	ef->shdrs = tab;
	ef->shnum = shnum;
	if (!shstrndx || shstrndx >= shnum)
		return 0;
	strsh = &ef->shdrs[shstrndx];
	if (strsh->sh_type != SHT_STRTAB || strsh->sh_size > ELF_FILE_MAX_SHSTRTAB)
		return 0;
	err = elf_file__read(ef, strsh->sh_offset, strsh->sh_size, &tab);
	if (err == -EINVAL || err == -E2BIG)
		return 0;
	if (err)
		return err;
	ef->shstrtab = tab;
	ef->shstrtab_len = strsh->sh_size;
	return 0;

ignore:
	ef->shdrs_ignored = true;
	return 0;
}

static int read_segments(struct elf_file *ef, uint64_t phnum)
{
	size_t ent = ef->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	void *tab;
	int err;

	/* PN_XNUM without a readable section 0 stays 0xffff, past the limit. */
	if (!phnum)
		return 0;
	if (phnum > ELF_FILE_MAX_SEGMENTS || ef->eh.e_phentsize != ent ||
	    !table_fits(ef, ef->eh.e_phoff, phnum, ent))
		return -EINVAL;
	err = read_table(ef, ef->eh.e_phoff, phnum, ent, &tab, sizeof(Elf64_Phdr), decode_phdr_v);
	if (err)
		return err;
	ef->phdrs = tab;
	ef->phnum = phnum;
	return 0;
}

static int open_common(struct elf_file *ef, struct elf_file **out)
{
	uint64_t phnum;
	int err;

	err = read_ehdr(ef);
	if (err)
		goto err_free;
	err = read_sections(ef, &phnum);
	if (err)
		goto err_free;
	err = read_segments(ef, phnum);
	if (err)
		goto err_free;
	*out = ef;
	return 0;

err_free:
	elf_file__free(ef);
	return err;
}

bool elf_file__backed(const struct elf_file *ef, uint64_t len)
{
	/* st_blocks 0 for a non-empty file: a filesystem that does not count blocks (FUSE). */
	if (!ef || ef->mem || !ef->allocated || len <= ELF_FILE_SPARSE_SLACK)
		return true;
	return len <= ELF_FILE_SPARSE_SLACK + ef->allocated * ELF_FILE_SPARSE_RATIO;
}

uint64_t elf_file__allocated(const struct elf_file *ef)
{
	return ef->mem || !ef->allocated ? ef->size : ef->allocated;
}

static uint64_t max_file_size(const struct elf_file_opts *opts)
{
	return opts && opts->max_file_size ? opts->max_file_size : ELF_FILE_MAX_FILE_DEFAULT;
}

int elf_file__open(int fd, const struct elf_file_opts *opts, struct elf_file **out)
{
	struct elf_file *ef;
	struct stat sb;

	if (fd < 0 || !out)
		return -EINVAL;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	if ((uint64_t)sb.st_size > max_file_size(opts)) {
		elf_skip_set(opts ? opts->skip : NULL, ELF_SKIP_FILE, "", (uint64_t)sb.st_size,
			     max_file_size(opts));
		return -EFBIG;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = fd;
	ef->size = (uint64_t)sb.st_size;
	ef->allocated = (uint64_t)sb.st_blocks * 512;
	return open_common(ef, out);
}

int elf_file__open_memory(const void *buf, size_t len, const struct elf_file_opts *opts,
			  struct elf_file **out)
{
	struct elf_file *ef;

	if (!buf || !out)
		return -EINVAL;
	if (len > max_file_size(opts))
		return -EFBIG;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = -1;
	ef->mem = buf;
	ef->size = len;
	return open_common(ef, out);
}

void elf_file__free(struct elf_file *ef)
{
	if (!ef)
		return;
	free(ef->phdrs);
	free(ef->shdrs);
	free(ef->shstrtab);
	free(ef);
}

const Elf64_Ehdr *elf_file__ehdr(const struct elf_file *ef)
{
	return &ef->eh;
}

unsigned elf_file__class(const struct elf_file *ef)
{
	return ef->is64 ? ELFCLASS64 : ELFCLASS32;
}

uint64_t elf_file__size(const struct elf_file *ef)
{
	return ef->size;
}

size_t elf_file__phnum(const struct elf_file *ef)
{
	return ef->phnum;
}

const Elf64_Phdr *elf_file__phdr(const struct elf_file *ef, size_t i)
{
	return i < ef->phnum ? &ef->phdrs[i] : NULL;
}

size_t elf_file__shnum(const struct elf_file *ef)
{
	return ef->shnum;
}

const Elf64_Shdr *elf_file__shdr(const struct elf_file *ef, size_t i)
{
	return i < ef->shnum ? &ef->shdrs[i] : NULL;
}

bool elf_file__shdrs_ignored(const struct elf_file *ef)
{
	return ef->shdrs_ignored;
}

const char *elf_file__section_name(const struct elf_file *ef, size_t i)
{
	uint64_t name;

	if (i >= ef->shnum)
		return NULL;
	name = ef->shdrs[i].sh_name;
	/* The table is NUL-terminated at shstrtab_len: any offset inside gives a string. */
	if (!ef->shstrtab || name >= ef->shstrtab_len)
		return "";
	return ef->shstrtab + name;
}

int elf_file__section(const struct elf_file *ef, const char *name, const Elf64_Shdr **sh)
{
	size_t i;

	for (i = 1; i < ef->shnum; i++) {
		if (!strcmp(elf_file__section_name(ef, i), name)) {
			if (sh)
				*sh = &ef->shdrs[i];
			return (int)i;
		}
	}
	return -ENOENT;
}

int elf_file__section_by_type(const struct elf_file *ef, uint32_t type, const Elf64_Shdr **sh)
{
	size_t i;

	for (i = 1; i < ef->shnum; i++) {
		if (ef->shdrs[i].sh_type == type) {
			if (sh)
				*sh = &ef->shdrs[i];
			return (int)i;
		}
	}
	return -ENOENT;
}

int elf_file__read_section(const struct elf_file *ef, size_t i, uint64_t max, void **out,
			   uint64_t *len)
{
	const Elf64_Shdr *sh = elf_file__shdr(ef, i);
	int err;

	if (!sh)
		return -ENOENT;
	if (sh->sh_type == SHT_NOBITS)
		return -EINVAL;
	if (sh->sh_size > (max ? max : ELF_FILE_MAX_READ))
		return -E2BIG;
	err = elf_file__read(ef, sh->sh_offset, sh->sh_size, out);
	if (err)
		return err;
	if (len)
		*len = sh->sh_size;
	return 0;
}

int elf_file__next_note(const struct elf_file *ef, const void *buf, size_t len, uint64_t align,
			size_t *off, struct elf_note *note)
{
	const uint8_t *p = buf;
	uint64_t a = align == 8 ? 8 : 4, name_off, desc_off, next;
	uint32_t namesz, descsz;

	/* The header is three words in both classes; offsets are kept in 64 bits to not wrap. */
	if (*off > len || len - *off < 12)
		return 0;
	namesz = (uint32_t)rd(ef, p + *off, 4);
	descsz = (uint32_t)rd(ef, p + *off + 4, 4);
	name_off = *off + 12;
	desc_off = (name_off + namesz + a - 1) & ~(a - 1);
	next = (desc_off + descsz + a - 1) & ~(a - 1);
	if (name_off + namesz > len || desc_off + descsz > len)
		return 0;
	note->type = (uint32_t)rd(ef, p + *off + 8, 4);
	note->namesz = namesz;
	note->descsz = descsz;
	note->name = (const char *)p + name_off;
	note->desc = p + desc_off;
	/* The padding after the last note may be missing. */
	*off = next < len ? next : len;
	return 1;
}

int elf_file__find_note(const struct elf_file *ef, const char *name, uint32_t type)
{
	size_t i, off, nlen = strlen(name) + 1;
	const Elf64_Phdr *ph;
	struct elf_note note;
	void *buf;
	int err;

	for (i = 0; i < ef->phnum; i++) {
		ph = &ef->phdrs[i];
		if (ph->p_type != PT_NOTE || !ph->p_filesz || ph->p_filesz > ELF_FILE_MAX_NOTES)
			continue;
		err = elf_file__read(ef, ph->p_offset, ph->p_filesz, &buf);
		if (err == -EINVAL)
			continue; /* outside the file */
		if (err)
			return err;
		off = 0;
		while (elf_file__next_note(ef, buf, ph->p_filesz, ph->p_align, &off, &note)) {
			if (note.type == type && note.namesz == nlen &&
			    !memcmp(note.name, name, nlen)) {
				free(buf);
				return 0;
			}
		}
		free(buf);
	}
	return -ENOENT;
}

int elf_file__read_vaddr(const struct elf_file *ef, uint64_t addr, uint64_t len, void *buf)
{
	const Elf64_Phdr *ph;
	uint64_t rel;
	size_t i;

	if (!ef || !buf)
		return -EINVAL;
	for (i = 0; i < ef->phnum; i++) {
		ph = &ef->phdrs[i];
		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr)
			continue;
		rel = addr - ph->p_vaddr;
		if (rel > ph->p_filesz || len > ph->p_filesz - rel)
			continue;
		/* p_offset + rel may still wrap or pass the end: read_into checks the range. */
		if (ph->p_offset > UINT64_MAX - rel)
			return -EINVAL;
		return elf_file__read_into(ef, ph->p_offset + rel, len, buf);
	}
	return -EFAULT;
}

/* The section @i links to, if it has type @type and lies inside the file; NULL otherwise. */
static const Elf64_Shdr *linked(const struct elf_file *ef, uint64_t i, uint32_t type)
{
	const Elf64_Shdr *sh = i ? elf_file__shdr(ef, (size_t)i) : NULL;

	if (!sh || sh->sh_type != type || sh->sh_offset > ef->size ||
	    sh->sh_size > ef->size - sh->sh_offset)
		return NULL;
	return sh;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* Reads symbol @idx of @symsh and checks that it is defined and named @name. */
static int match_sym(const struct elf_file *ef, const Elf64_Shdr *symsh, const Elf64_Shdr *strsh,
		     uint64_t idx, const char *name, Elf64_Sym *sym)
{
	size_t ent = elf_file__sym_size(ef), nlen = strlen(name) + 1;
	uint8_t raw[sizeof(Elf64_Sym)];
	char str[256];
	int err;

	if (idx >= symsh->sh_size / ent || nlen > sizeof(str))
		return -ENOENT;
	err = elf_file__read_into(ef, symsh->sh_offset + idx * ent, ent, raw);
	if (err)
		return err;
	elf_file__sym(ef, raw, sym);
	if (sym->st_shndx == SHN_UNDEF || sym->st_name >= strsh->sh_size ||
	    nlen > strsh->sh_size - sym->st_name)
		return -ENOENT;
	err = elf_file__read_into(ef, strsh->sh_offset + sym->st_name, nlen, str);
	if (err)
		return err;
	return memcmp(str, name, nlen) ? -ENOENT : 0;
}

/* Chain words are read this many at a time. */
#define GNU_CHAIN_BATCH 64u
/* A chain longer than this is hostile. */
#define GNU_CHAIN_MAX (1u << 20)

/*
 * The GNU hash section: nbuckets, symoffset, bloom_size, bloom_shift, the bloom words (4 or 8
 * bytes by class), the buckets, then one chain word per symbol from symoffset on; the low bit
 * of a chain word ends the chain.
 */
int elf_file__gnu_hash_lookup(const struct elf_file *ef, const char *name, Elf64_Sym *out)
{
	const Elf64_Shdr *hsh, *symsh, *strsh;
	uint32_t hdr[4], hash = gnu_hash(name), chain[GNU_CHAIN_BATCH], bucket;
	uint64_t word = ef->is64 ? 8 : 4, boff, coff, c, idx, steps = 0, n, k;
	Elf64_Sym sym;
	int err;

	if (elf_file__section_by_type(ef, SHT_GNU_HASH, &hsh) < 0 || hsh->sh_size < 16 ||
	    hsh->sh_offset > ef->size || hsh->sh_size > ef->size - hsh->sh_offset)
		return -EOPNOTSUPP;
	symsh = linked(ef, hsh->sh_link, SHT_DYNSYM);
	strsh = symsh ? linked(ef, symsh->sh_link, SHT_STRTAB) : NULL;
	if (!strsh || symsh->sh_entsize != elf_file__sym_size(ef))
		return -EOPNOTSUPP;
	if (elf_file__read_into(ef, hsh->sh_offset, sizeof(hdr), hdr))
		return -EOPNOTSUPP;
	for (k = 0; k < 4; k++)
		hdr[k] = elf_file__word(ef, &hdr[k]);
	boff = 16 + (uint64_t)hdr[2] * word;
	coff = boff + (uint64_t)hdr[0] * 4;
	if (!hdr[0] || coff > hsh->sh_size)
		return -EOPNOTSUPP;
	err = elf_file__read_into(ef, hsh->sh_offset + boff + (hash % hdr[0]) * 4, 4, &bucket);
	if (err)
		return err;
	idx = elf_file__word(ef, &bucket);
	if (idx < hdr[1])
		return -ENOENT;
	while (steps < GNU_CHAIN_MAX) {
		c = coff + (idx - hdr[1]) * 4;
		if (c > hsh->sh_size - 4)
			return -ENOENT;
		n = (hsh->sh_size - c) / 4;
		n = n < GNU_CHAIN_BATCH ? n : GNU_CHAIN_BATCH;
		err = elf_file__read_into(ef, hsh->sh_offset + c, n * 4, chain);
		if (err)
			return err;
		for (k = 0; k < n; k++, idx++, steps++) {
			uint32_t h2 = elf_file__word(ef, &chain[k]);

			if ((h2 | 1) == (hash | 1)) {
				err = match_sym(ef, symsh, strsh, idx, name, &sym);
				if (!err) {
					*out = sym;
					return 0;
				}
				if (err != -ENOENT)
					return err;
			}
			if (h2 & 1)
				return -ENOENT;
		}
	}
	return -ENOENT;
}

/* Calls @fn for the defined, named symbols of the table @tab (@len bytes, strings @str). */
static int walk_syms(const struct elf_file *ef, const uint8_t *tab, uint64_t len, const char *str,
		     uint64_t strlen_, elf_file_sym_fn_t fn, void *ctx)
{
	size_t ent = elf_file__sym_size(ef);
	Elf64_Sym sym;
	uint64_t i;
	int ret;

	for (i = 0; i + ent <= len; i += ent) {
		elf_file__sym(ef, tab + i, &sym);
		/* The string table is NUL-terminated at strlen_ by elf_file__read(). */
		if (sym.st_shndx == SHN_UNDEF || !sym.st_name || sym.st_name >= strlen_)
			continue;
		ret = fn(ctx, str + sym.st_name, &sym);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_file__foreach_sym(const struct elf_file *ef, uint32_t type, uint64_t max,
			  elf_file_sym_fn_t fn, void *ctx)
{
	const Elf64_Shdr *sh, *strsh;
	void *tab, *str;
	uint64_t len, slen;
	size_t i;
	int ret;

	if (!ef || !fn)
		return -EINVAL;
	for (i = 1; i < ef->shnum; i++) {
		sh = &ef->shdrs[i];
		strsh = linked(ef, sh->sh_link, SHT_STRTAB);
		if (sh->sh_type != type || sh->sh_entsize != elf_file__sym_size(ef) || !strsh)
			continue;
		ret = elf_file__read_section(ef, i, max, &tab, &len);
		if (ret == -EINVAL || ret == -E2BIG)
			continue;
		if (ret)
			return ret;
		ret = elf_file__read_section(ef, sh->sh_link, max, &str, &slen);
		if (ret) {
			free(tab);
			if (ret == -EINVAL || ret == -E2BIG)
				continue;
			return ret;
		}
		ret = walk_syms(ef, tab, len, str, slen, fn, ctx);
		free(str);
		free(tab);
		if (ret)
			return ret;
	}
	return 0;
}

void elf_skip_set(struct elf_skip *skip, enum elf_skip_kind kind, const char *what,
		  uint64_t claimed, uint64_t limit)
{
	if (!skip || skip->kind != ELF_SKIP_NONE)
		return;
	skip->kind = kind;
	/* A section name is the file's own text: valid UTF-8, cut at a character boundary. */
	text_utf8_sanitize_copy(skip->what, sizeof(skip->what), what ? what : "",
				what ? strlen(what) : 0);
	skip->claimed = claimed;
	skip->limit = limit;
}

/* "1 GiB", "1.9 GiB", "200 MiB", "20 KiB", "512 bytes": one decimal below ten units. */
static void format_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t whole = n, tenths = 0;
	unsigned u = 0;

	while (whole >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		tenths = (whole % 1024) * 10 / 1024;
		whole /= 1024;
		u++;
	}
	if (u && whole < 10 && tenths)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, units[u]);
	else
		snprintf(buf, size, "%" PRIu64 " %s", whole, units[u]);
}

size_t elf_skip_format(const struct elf_skip *skip, char *buf, size_t size)
{
	char claimed[32], limit[32];
	const char *what;

	if (!buf || !size)
		return 0;
	buf[0] = '\0';
	if (!skip)
		return 0;
	what = skip->what[0] ? skip->what : "a section";
	format_bytes(skip->claimed, claimed, sizeof(claimed));
	format_bytes(skip->limit, limit, sizeof(limit));
	switch (skip->kind) {
	case ELF_SKIP_OVER_LIMIT:
		snprintf(buf, size, "%s claims %s, over the %s limit", what, claimed, limit);
		break;
	case ELF_SKIP_SPARSE:
		snprintf(buf, size, "%s claims %s, but the file has %s on disk", what, claimed,
			 limit);
		break;
	case ELF_SKIP_COUNT:
		snprintf(buf, size, "%s holds %" PRIu64 " symbols, over the limit of %" PRIu64,
			 what, skip->claimed, skip->limit);
		break;
	case ELF_SKIP_FILE:
		snprintf(buf, size, "the file is %s, over the %s limit", claimed, limit);
		break;
	default:
		break;
	}
	return text_utf8_trim_partial(buf);
}
