// SPDX-License-Identifier: Apache-2.0
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/elf_file.h"
#include "symbols/elf_symtab.h"

#include "base/array.h"
#include "tests/unit/hostile_mem.h"
#define UNUSED __attribute__((unused))

/*
 * A synthetic ELF, built for each class and byte order:
 *   0x000 ELF header, 0x040 program headers (PT_LOAD of [0, 0x200) at 0x1000, PT_NOTE)
 *   0x100 .text, 0x110 .note.gnu.build-id, 0x130 .strtab, 0x150 .symtab (null, fx_one,
 *   fx_two), 0x1a0 .shstrtab, 0x1e0 .symtab_shndx, 0x200 section headers.
 */
enum { S_TEXT = 1, S_NOTE, S_STRTAB, S_SYMTAB, S_SHSTRTAB, S_SHNDX, S_NUM };
#define OFF_PHDR 0x40
#define OFF_TEXT 0x100
#define OFF_NOTE 0x110
#define OFF_STR 0x130
#define OFF_SYM 0x150
#define OFF_SHSTR 0x1a0
#define OFF_SHNDX 0x1e0
#define OFF_SHDR 0x200
#define IMG_MAX 0x400
#define BID "0123456789abcdef"

struct img {
	uint8_t b[IMG_MAX];
	size_t len;
	bool is64, be;
};

static void put(struct img *m, size_t off, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		m->b[off + (m->be ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

#define PUT(m, base, t32, t64, f, v)                                                     \
	((m)->is64 ? put(m, (base) + offsetof(t64, f), v, sizeof(((t64 *)0)->f))         \
		   : put(m, (base) + offsetof(t32, f), v, sizeof(((t32 *)0)->f)))
#define EH(m, f, v) PUT(m, 0, Elf32_Ehdr, Elf64_Ehdr, f, v)
#define SHENT(m) ((m)->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr))
#define SH(m, i, f, v) PUT(m, OFF_SHDR + (i) * SHENT(m), Elf32_Shdr, Elf64_Shdr, f, v)
#define SYMENT(m) ((m)->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym))
#define SYM(m, i, f, v) PUT(m, OFF_SYM + (i) * SYMENT(m), Elf32_Sym, Elf64_Sym, f, v)

static void section(struct img *m, size_t i, uint32_t name, uint32_t type, uint64_t flags,
		    uint64_t addr, uint64_t off, uint64_t size, uint32_t link, uint64_t entsize)
{
	SH(m, i, sh_name, name);
	SH(m, i, sh_type, type);
	SH(m, i, sh_flags, flags);
	SH(m, i, sh_addr, addr);
	SH(m, i, sh_offset, off);
	SH(m, i, sh_size, size);
	SH(m, i, sh_link, link);
	SH(m, i, sh_addralign, 4);
	SH(m, i, sh_entsize, entsize);
}

static void build(struct img *m, bool is64, bool be)
{
	static const char strtab[] = "\0fx_one\0fx_two";
	static const char shstr[] =
		"\0.text\0.note.gnu.build-id\0.strtab\0.symtab\0.shstrtab\0.symtab_shndx";
	size_t ph = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr), i;

	memset(m, 0, sizeof(*m));
	m->is64 = is64;
	m->be = be;
	m->len = OFF_SHDR + S_NUM * SHENT(m);
	memcpy(m->b, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	m->b[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	m->b[EI_VERSION] = EV_CURRENT;
	EH(m, e_type, ET_DYN);
	EH(m, e_machine, EM_X86_64);
	EH(m, e_version, EV_CURRENT);
	EH(m, e_phoff, OFF_PHDR);
	EH(m, e_shoff, OFF_SHDR);
	EH(m, e_ehsize, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
	EH(m, e_phentsize, ph);
	EH(m, e_phnum, 2);
	EH(m, e_shentsize, SHENT(m));
	EH(m, e_shnum, S_NUM);
	EH(m, e_shstrndx, S_SHSTRTAB);
	PUT(m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_type, PT_LOAD);
	PUT(m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_vaddr, 0x1000);
	PUT(m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_filesz, 0x200);
	PUT(m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_memsz, 0x200);
	PUT(m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_align, 0x1000);
	PUT(m, OFF_PHDR + ph, Elf32_Phdr, Elf64_Phdr, p_type, PT_NOTE);
	PUT(m, OFF_PHDR + ph, Elf32_Phdr, Elf64_Phdr, p_offset, OFF_NOTE);
	PUT(m, OFF_PHDR + ph, Elf32_Phdr, Elf64_Phdr, p_filesz, 24);
	PUT(m, OFF_PHDR + ph, Elf32_Phdr, Elf64_Phdr, p_align, 4);
	memset(m->b + OFF_TEXT, 0xc3, 16);
	put(m, OFF_NOTE, 4, 4);
	put(m, OFF_NOTE + 4, 8, 4);
	put(m, OFF_NOTE + 8, NT_GNU_BUILD_ID, 4);
	memcpy(m->b + OFF_NOTE + 12, "GNU", 4);
	memcpy(m->b + OFF_NOTE + 16, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
	memcpy(m->b + OFF_STR, strtab, sizeof(strtab));
	for (i = 1; i <= 2; i++) {
		SYM(m, i, st_name, i == 1 ? 1 : 8);
		SYM(m, i, st_info, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC));
		SYM(m, i, st_shndx, S_TEXT);
		SYM(m, i, st_value, i == 1 ? 0x1100 : 0x1108);
		SYM(m, i, st_size, i == 1 ? 4 : 8);
		put(m, OFF_SHNDX + 4 * i, S_TEXT, 4);
	}
	memcpy(m->b + OFF_SHSTR, shstr, sizeof(shstr));
	section(m, S_TEXT, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1100, OFF_TEXT, 16, 0, 0);
	section(m, S_NOTE, 7, SHT_NOTE, SHF_ALLOC, 0x1110, OFF_NOTE, 24, 0, 0);
	section(m, S_STRTAB, 26, SHT_STRTAB, 0, 0, OFF_STR, sizeof(strtab), 0, 0);
	section(m, S_SYMTAB, 34, SHT_SYMTAB, 0, 0, OFF_SYM, 3 * SYMENT(m), S_STRTAB, SYMENT(m));
	section(m, S_SHSTRTAB, 42, SHT_STRTAB, 0, 0, OFF_SHSTR, sizeof(shstr), 0, 0);
	section(m, S_SHNDX, 52, SHT_SYMTAB_SHNDX, 0, 0, OFF_SHNDX, 12, S_SYMTAB, 4);
}

enum patch_kind {
	P_NONE,
	P_TRUNC,	/* keep val bytes */
	P_IDENT,	/* e_ident[idx] = val */
	P_SHOFF, P_SHNUM, P_SHSTRNDX, P_PHNUM, P_PHOFF, P_PHENTSIZE, P_SHENTSIZE,
	P_SH_OFFSET, P_SH_SIZE, P_SH_TYPE, P_SH_LINK, P_SH_INFO,	/* of section idx */
	P_SYM_SHNDX, P_SYM_NAME,					/* of symbol idx */
};

struct patch {
	enum patch_kind kind;
	uint32_t idx;
	uint64_t val;
};

static void apply(struct img *m, const struct patch *p)
{
	switch (p->kind) {
	case P_NONE: break;
	case P_TRUNC: m->len = p->val; break;
	case P_IDENT: m->b[p->idx] = (uint8_t)p->val; break;
	case P_SHOFF: EH(m, e_shoff, p->val); break;
	case P_SHNUM: EH(m, e_shnum, p->val); break;
	case P_SHSTRNDX: EH(m, e_shstrndx, p->val); break;
	case P_PHNUM: EH(m, e_phnum, p->val); break;
	case P_PHOFF: EH(m, e_phoff, p->val); break;
	case P_PHENTSIZE: EH(m, e_phentsize, p->val); break;
	case P_SHENTSIZE: EH(m, e_shentsize, p->val); break;
	case P_SH_OFFSET: SH(m, p->idx, sh_offset, p->val); break;
	case P_SH_SIZE: SH(m, p->idx, sh_size, p->val); break;
	case P_SH_TYPE: SH(m, p->idx, sh_type, p->val); break;
	case P_SH_LINK: SH(m, p->idx, sh_link, p->val); break;
	case P_SH_INFO: SH(m, p->idx, sh_info, p->val); break;
	case P_SYM_SHNDX: SYM(m, p->idx, st_shndx, p->val); break;
	case P_SYM_NAME: SYM(m, p->idx, st_name, p->val); break;
	}
}

/* The four layouts; rows with .all run on each, the others on ELF64 LE only. */
static const struct { bool is64, be; } layouts[] = {
	{ true, false }, { false, false }, { true, true }, { false, true },
};

/* Opens @m through a memfd (@use_fd) or in memory; *@fd receives the memfd to close. */
static int open_img(const struct img *m, bool use_fd, int *fd, struct elf_file **ef)
{
	*fd = -1;
	if (!use_fd)
		return elf_file__open_memory(m->b, m->len, NULL, ef);
	*fd = memfd_create("test_elf_file", MFD_CLOEXEC);
	assert_true(*fd >= 0);
	assert_int_equal(pwrite(*fd, m->b, m->len, 0), (ssize_t)m->len);
	return elf_file__open(*fd, NULL, ef);
}

static void test_open(void **state UNUSED)
{
	static const struct {
		bool all;
		struct patch p[2];
		int ret;
		size_t shnum, phnum;
		bool ignored, named;	/* section headers ignored; section names read */
	} cases[] = {
		{ true, { { P_NONE } }, 0, S_NUM, 2, false, true },
		/* Truncated headers. */
		{ true, { { P_TRUNC, 0, 10 } }, -EINVAL },
		{ false, { { P_TRUNC, 0, 40 } }, -EINVAL },		/* inside the ELF64 header */
		{ true, { { P_TRUNC, 0, 0x50 } }, -EINVAL },		/* inside the phdrs */
		{ true, { { P_TRUNC, 0, OFF_SHDR + 8 } }, 0, 0, 2, true, false },
		{ true, { { P_IDENT, EI_CLASS, 7 } }, -EINVAL },
		{ true, { { P_IDENT, EI_DATA, 0 } }, -EINVAL },
		{ true, { { P_IDENT, EI_VERSION, 2 } }, -EINVAL },
		{ true, { { P_IDENT, 1, 'X' } }, -EINVAL },
		/* Program headers: malformed ones fail. */
		{ true, { { P_PHOFF, 0, 0xfffffff0 } }, -EINVAL },
		{ true, { { P_PHNUM, 0, 5000 } }, -EINVAL },		/* over the limit */
		{ true, { { P_PHNUM, 0, 40 } }, -EINVAL },		/* past the end */
		{ true, { { P_PHENTSIZE, 0, 12 } }, -EINVAL },
		{ true, { { P_PHNUM, 0, 0 } }, 0, S_NUM, 0, false, true },
		/* Section headers: malformed ones are ignored. */
		{ true, { { P_SHOFF, 0, 0xffffff00 } }, 0, 0, 2, true, false },
		{ true, { { P_SHOFF, 0, OFF_SHDR + 0x100 } }, 0, 0, 2, true, false },	/* tail past EOF */
		{ true, { { P_SHNUM, 0, 0xfff0 } }, 0, 0, 2, true, false },
		{ true, { { P_SHENTSIZE, 0, 20 } }, 0, 0, 2, true, false },
		{ true, { { P_SHOFF, 0, 0 } }, 0, 0, 2, false, false },	/* none at all */
		/* The section-name table: out of range, not a string table, past EOF, huge. */
		{ true, { { P_SHSTRNDX, 0, 50 } }, 0, S_NUM, 2, false, false },
		{ true, { { P_SHSTRNDX, 0, S_TEXT } }, 0, S_NUM, 2, false, false },
		{ true, { { P_SH_OFFSET, S_SHSTRTAB, 0xfffffff0 } }, 0, S_NUM, 2, false, false },
		{ true, { { P_SH_SIZE, S_SHSTRTAB, 0x7fffffff } }, 0, S_NUM, 2, false, false },
		/* Counts overflowing into section 0: SHN_XINDEX, PN_XNUM. */
		{ true, { { P_SHNUM, 0, 0 }, { P_SH_SIZE, 0, S_NUM } }, 0, S_NUM, 2, false, true },
		{ true, { { P_SHSTRNDX, 0, SHN_XINDEX }, { P_SH_LINK, 0, S_SHSTRTAB } },
		  0, S_NUM, 2, false, true },
		{ true, { { P_SHNUM, 0, 0 }, { P_SH_SIZE, 0, 1u << 20 } }, 0, 0, 2, true, false },
		{ true, { { P_SHNUM, 0, 0 } }, 0, 0, 2, true, false },	/* and section 0 says 0 */
		{ true, { { P_PHNUM, 0, PN_XNUM }, { P_SH_INFO, 0, 2 } }, 0, S_NUM, 2, false, true },
		{ true, { { P_PHNUM, 0, PN_XNUM }, { P_SHOFF, 0, 0 } }, -EINVAL },
	};
	struct elf_file *ef;
	size_t i, l, k;
	struct img m;
	int fd, use_fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l < (cases[i].all ? ARRAY_SIZE(layouts) : 1); l++) {
			for (use_fd = 0; use_fd < 2; use_fd++) {
				print_message("case %zu layout %zu fd %d\n", i, l, use_fd);
				build(&m, layouts[l].is64, layouts[l].be);
				for (k = 0; k < ARRAY_SIZE(cases[i].p); k++)
					apply(&m, &cases[i].p[k]);
				ef = NULL;
				assert_int_equal(open_img(&m, use_fd, &fd, &ef), cases[i].ret);
				if (fd >= 0)
					close(fd);
				if (cases[i].ret) {
					assert_null(ef);
					continue;
				}
				assert_int_equal(elf_file__class(ef),
						 m.is64 ? ELFCLASS64 : ELFCLASS32);
				assert_int_equal(elf_file__ehdr(ef)->e_type, ET_DYN);
				assert_int_equal(elf_file__shnum(ef), cases[i].shnum);
				assert_int_equal(elf_file__phnum(ef), cases[i].phnum);
				assert_int_equal(elf_file__shdrs_ignored(ef), cases[i].ignored);
				assert_null(elf_file__shdr(ef, elf_file__shnum(ef)));
				assert_null(elf_file__phdr(ef, elf_file__phnum(ef)));
				assert_null(elf_file__section_name(ef, elf_file__shnum(ef)));
				if (cases[i].phnum) {
					assert_int_equal(elf_file__phdr(ef, 0)->p_type, PT_LOAD);
					assert_true(elf_file__phdr(ef, 0)->p_vaddr == 0x1000);
				}
				if (cases[i].shnum)
					assert_int_equal(elf_file__section_by_type(ef, SHT_SYMTAB,
										   NULL),
							 S_SYMTAB);
				assert_int_equal(elf_file__section(ef, ".text", NULL),
						 cases[i].named ? S_TEXT : -ENOENT);
				elf_file__free(ef);
			}
		}
	}
	assert_int_equal(elf_file__open(-1, NULL, &ef), -EINVAL);
	assert_int_equal(elf_file__open_memory(NULL, 10, NULL, &ef), -EINVAL);
	assert_int_equal(elf_file__open_memory(m.b, IMG_MAX, &(struct elf_file_opts){
				 .max_file_size = 100 }, &ef), -EFBIG);
	elf_file__free(NULL);
}

static void test_read(void **state UNUSED)
{
	static const struct {
		uint64_t off, len;
		int ret;
	} cases[] = {
		{ 0, 4, 0 },
		{ OFF_STR + 1, 6, 0 },
		{ 0, 0, 0 },
		{ 0x100000, 0, 0 },			/* the end of the file: empty */
		{ 0x100000, 1, -EINVAL },
		{ 0x100000 - 2, 4, -EINVAL },		/* straddles the end */
		{ UINT64_MAX, 2, -EINVAL },
		{ 2, UINT64_MAX, -EINVAL },		/* off + len wraps */
		{ UINT64_MAX, UINT64_MAX, -EINVAL },
	};
	struct img m;
	struct elf_file *ef;
	const Elf64_Shdr *sh;
	char small[8];
	size_t i, l;
	uint64_t len;
	void *buf;
	int fd;

	for (l = 0; l < ARRAY_SIZE(layouts); l++) {
		build(&m, layouts[l].is64, layouts[l].be);
		/* A 1 MiB file: the image then zeros. */
		fd = memfd_create("test_elf_file", MFD_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, m.b, m.len, 0), (ssize_t)m.len);
		assert_int_equal(ftruncate(fd, 0x100000), 0);
		assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			print_message("layout %zu case %zu\n", l, i);
			buf = NULL;
			assert_int_equal(elf_file__read(ef, cases[i].off, cases[i].len, &buf),
					 cases[i].ret);
			if (!cases[i].ret) {
				assert_memory_equal(buf, m.b + (cases[i].off < m.len ?
								cases[i].off : 0),
						    cases[i].off < m.len ? cases[i].len : 0);
				assert_int_equal(((char *)buf)[cases[i].len], '\0');
			}
			free(buf);
		}
		/* Sections: by name, SHT_NOBITS, past EOF, over a cap. */
		assert_int_equal(elf_file__section(ef, ".strtab", &sh), S_STRTAB);
		assert_int_equal(elf_file__read_section(ef, S_STRTAB, 0, &buf, &len), 0);
		assert_true(len == sh->sh_size);
		assert_string_equal((char *)buf + 1, "fx_one");
		free(buf);
		assert_int_equal(elf_file__read_section(ef, S_STRTAB, 4, &buf, &len), -E2BIG);
		assert_int_equal(elf_file__read_section(ef, S_NUM, 0, &buf, &len), -ENOENT);
		assert_int_equal(elf_file__read_section(ef, 0, 0, &buf, &len), 0);
		free(buf);
		elf_file__free(ef);
		/* Section 1 as SHT_NOBITS, then past EOF. */
		apply(&m, &(struct patch){ P_SH_TYPE, S_TEXT, SHT_NOBITS });
		assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
		assert_int_equal(elf_file__read_section(ef, S_TEXT, 0, &buf, &len), -EINVAL);
		elf_file__free(ef);
		apply(&m, &(struct patch){ P_SH_TYPE, S_TEXT, SHT_PROGBITS });
		apply(&m, &(struct patch){ P_SH_OFFSET, S_TEXT, m.len - 8 });
		assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
		assert_int_equal(elf_file__read_section(ef, S_TEXT, 0, &buf, &len), -EINVAL);
		elf_file__free(ef);
		/* The file shrinks under us: an error, never a short buffer or a signal. */
		assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
		assert_int_equal(ftruncate(fd, 0x1000), 0);
		assert_int_equal(elf_file__read(ef, 0x800, 0x1000, &buf), -EIO);
		assert_int_equal(elf_file__read_into(ef, 0, 4, small), 0);
		elf_file__free(ef);
		close(fd);
	}
}

/* Reads over ELF_FILE_MAX_READ are refused before allocating (a sparse 300 MiB file). */
static void test_read_cap(void **state UNUSED)
{
	struct elf_file *ef;
	struct img m;
	void *buf;
	int fd;

	build(&m, true, false);
	fd = memfd_create("test_elf_file", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, m.b, m.len, 0), (ssize_t)m.len);
	assert_int_equal(ftruncate(fd, 300u << 20), 0);
	assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
	assert_int_equal(elf_file__read(ef, 0, ELF_FILE_MAX_READ + 1ull, &buf), -E2BIG);
	elf_file__free(ef);
	assert_int_equal(elf_file__open(fd, &(struct elf_file_opts){ .max_file_size = 1 << 20 },
					&ef), -EFBIG);
	close(fd);
}

static void test_notes(void **state UNUSED)
{
	static const struct {
		size_t len;	/* bytes of the note buffer walked */
		uint32_t namesz, descsz;
		int notes;
	} cases[] = {
		{ 24, 4, 8, 1 },
		{ 22, 4, 6, 1 },	/* padding after the last note missing: still read */
		{ 20, 4, 8, 0 },	/* the descriptor cut */
		{ 11, 4, 8, 0 },	/* the header cut */
		{ 24, 0xfffffff0, 8, 0 },
		{ 24, 4, 0xfffffffc, 0 },
		{ 12, 0, 0, 1 },	/* an empty note: the header alone */
	};
	struct elf_file *ef;
	struct elf_note n;
	struct img m;
	size_t i, l, off;
	int count;

	for (l = 0; l < ARRAY_SIZE(layouts); l++) {
		build(&m, layouts[l].is64, layouts[l].be);
		assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			print_message("layout %zu case %zu\n", l, i);
			build(&m, layouts[l].is64, layouts[l].be);
			put(&m, OFF_NOTE, cases[i].namesz, 4);
			put(&m, OFF_NOTE + 4, cases[i].descsz, 4);
			off = 0;
			count = 0;
			while (elf_file__next_note(ef, m.b + OFF_NOTE, cases[i].len, 4, &off, &n) > 0) {
				assert_true(off <= cases[i].len);
				if (!count && cases[i].namesz == 4) {
					assert_int_equal(n.type, NT_GNU_BUILD_ID);
					assert_memory_equal(n.name, "GNU", 4);
					assert_int_equal(n.descsz, cases[i].descsz);
				}
				count++;
			}
			assert_int_equal(count, cases[i].notes);
		}
		elf_file__free(ef);
	}
}

/* The symbol reader over the synthetic ELFs: both classes and byte orders, and broken tables. */
static void test_symtab(void **state UNUSED)
{
	static const struct {
		bool all;
		struct patch p[2];
		int ret;
		size_t count;
		const char *bid;
	} cases[] = {
		{ true, { { P_NONE } }, 0, 2, BID },
		/* A symbol's section through SHN_XINDEX and .symtab_shndx, or lost without it. */
		{ true, { { P_SYM_SHNDX, 2, SHN_XINDEX } }, 0, 2, BID },
		{ true, { { P_SYM_SHNDX, 2, SHN_XINDEX }, { P_SH_TYPE, S_SHNDX, SHT_PROGBITS } },
		  0, 1, BID },
		{ true, { { P_SYM_SHNDX, 2, SHN_XINDEX }, { P_SH_SIZE, S_SHNDX, 4 } }, 0, 1, BID },
		{ false, { { P_SYM_SHNDX, 2, SHN_ABS } }, 0, 1, BID },
		{ false, { { P_SYM_SHNDX, 2, 40 } }, 0, 1, BID },
		/* Tables past EOF, huge, overlapping, mislinked: skipped or garbage, never read. */
		{ true, { { P_SH_OFFSET, S_SYMTAB, 0xfffffff0 } }, 0, 0, BID },
		{ true, { { P_SH_SIZE, S_SYMTAB, 0xfffffff0 } }, 0, 0, BID },
		{ true, { { P_SH_SIZE, S_STRTAB, 0xfffffff0 } }, 0, 0, BID },
		{ false, { { P_SH_SIZE, S_STRTAB, 0x7fffffffffffffff } }, 0, 0, BID },
		{ true, { { P_SH_LINK, S_SYMTAB, S_TEXT } }, 0, 0, BID },
		{ true, { { P_SH_LINK, S_SYMTAB, 99 } }, 0, 0, BID },
		{ true, { { P_SH_OFFSET, S_SYMTAB, OFF_STR } }, 0, SIZE_MAX, BID },
		{ true, { { P_SH_OFFSET, S_STRTAB, OFF_SYM } }, 0, SIZE_MAX, BID },
		{ false, { { P_SH_SIZE, S_STRTAB, 8 } }, 0, 1, BID },	/* fx_two outside */
		{ false, { { P_SH_SIZE, S_STRTAB, 9 } }, 0, 1, BID },	/* fx_two unterminated */
		{ false, { { P_SH_SIZE, S_STRTAB, 7 } }, 0, 0, BID },	/* fx_one unterminated */
		{ false, { { P_SYM_NAME, 2, 4 } }, 0, 2, BID },		/* tail of fx_one */
		{ false, { { P_SYM_NAME, 2, 7 } }, 0, 1, BID },		/* empty */
		/* Notes: the note section gone, then the PT_NOTE too. */
		{ true, { { P_SH_TYPE, S_NOTE, SHT_PROGBITS } }, 0, 2, BID },
		{ true, { { P_SH_TYPE, S_NOTE, SHT_PROGBITS }, { P_PHNUM, 0, 1 } }, 0, 2, NULL },
		{ true, { { P_SHOFF, 0, 0 } }, 0, 0, BID },		/* sstrip'd */
		{ true, { { P_TRUNC, 0, 0x60 } }, -EINVAL },
	};
	struct elf_symtab *st;
	const char *name;
	size_t i, l, k;
	uint64_t start;
	struct img m;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l < (cases[i].all ? ARRAY_SIZE(layouts) : 1); l++) {
			print_message("case %zu layout %zu\n", i, l);
			build(&m, layouts[l].is64, layouts[l].be);
			for (k = 0; k < ARRAY_SIZE(cases[i].p); k++)
				apply(&m, &cases[i].p[k]);
			st = NULL;
			assert_int_equal(elf_symtab__from_memory(m.b, m.len, NULL, &st),
					 cases[i].ret);
			if (cases[i].ret) {
				assert_null(st);
				continue;
			}
			if (cases[i].count != SIZE_MAX)
				assert_int_equal(elf_symtab__count(st), cases[i].count);
			if (cases[i].bid)
				assert_string_equal(elf_symtab__build_id(st), cases[i].bid);
			else
				assert_null(elf_symtab__build_id(st));
			if (cases[i].count == 2 && cases[i].p[0].kind != P_SYM_NAME) {
				name = elf_symtab__lookup(st, 0x110f, &start);
				assert_string_equal(name, "fx_two");
				assert_true(start == 0x1108);
				assert_string_equal(elf_symtab__lookup(st, 0x1103, NULL), "fx_one");
			}
			if (cases[i].p[0].kind == P_SYM_NAME && cases[i].count == 2)
				assert_string_equal(elf_symtab__lookup(st, 0x1108, NULL), "one");
			assert_int_equal(elf_symtab__file_to_vaddr(st, 0x104, &start), 0);
			assert_true(start == 0x1104);
			elf_symtab__free(st);
		}
	}
}

static void test_read_vaddr(void **state UNUSED)
{
	static const struct {
		uint64_t addr, len;
		int ret;
		uint64_t off;	/* where the bytes come from */
	} cases[] = {
		{ 0x1000, 4, 0, 0 },
		{ 0x1100, 16, 0, OFF_TEXT },
		{ 0x11fc, 4, 0, 0x1fc },		/* the last bytes of the segment */
		{ 0x1200, 0, 0, 0x200 },		/* empty, at its end */
		{ 0x11fd, 4, -EFAULT },			/* straddles the end */
		{ 0xfff, 2, -EFAULT },			/* starts before it */
		{ 0x2000, 1, -EFAULT },
		{ UINT64_MAX, 2, -EFAULT },
		{ 0x1000, UINT64_MAX, -EFAULT },
	};
	struct elf_file *ef;
	uint8_t buf[16];
	struct img m;
	size_t i, l;

	for (l = 0; l < ARRAY_SIZE(layouts); l++) {
		build(&m, layouts[l].is64, layouts[l].be);
		assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			print_message("layout %zu case %zu\n", l, i);
			assert_int_equal(elf_file__read_vaddr(ef, cases[i].addr, cases[i].len, buf),
					 cases[i].ret);
			if (!cases[i].ret)
				assert_memory_equal(buf, m.b + cases[i].off, cases[i].len);
		}
		assert_int_equal(elf_file__read_vaddr(ef, 0x1000, 4, NULL), -EINVAL);
		elf_file__free(ef);
		/* The segment says it lies past the end of the file. */
		PUT(&m, OFF_PHDR, Elf32_Phdr, Elf64_Phdr, p_offset, 0x10000);
		assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
		assert_int_equal(elf_file__read_vaddr(ef, 0x1000, 4, buf), -EINVAL);
		elf_file__free(ef);
	}
}

static void test_find_note(void **state UNUSED)
{
	static const struct {
		struct patch p;
		const char *name;
		uint32_t type;
		int ret;
	} cases[] = {
		{ { P_NONE }, "GNU", NT_GNU_BUILD_ID, 0 },
		{ { P_NONE }, "GNU", NT_GNU_BUILD_ID + 1, -ENOENT },
		{ { P_NONE }, "GN", NT_GNU_BUILD_ID, -ENOENT },
		{ { P_NONE }, "Go", 4, -ENOENT },
		{ { P_PHNUM, 0, 1 }, "GNU", NT_GNU_BUILD_ID, -ENOENT },	/* no PT_NOTE */
		{ { P_TRUNC, 0, OFF_NOTE + 20 }, "GNU", NT_GNU_BUILD_ID, -ENOENT },	/* cut */
	};
	struct elf_file *ef;
	struct img m;
	size_t i, l;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l < ARRAY_SIZE(layouts); l++) {
			print_message("case %zu layout %zu\n", i, l);
			build(&m, layouts[l].is64, layouts[l].be);
			apply(&m, &cases[i].p);
			assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
			assert_int_equal(elf_file__find_note(ef, cases[i].name, cases[i].type),
					 cases[i].ret);
			elf_file__free(ef);
		}
	}
}

struct sym_seen {
	int n, stop_at;
	char names[4][16];
	uint64_t values[4];
};

static int on_sym(void *ctx, const char *name, const Elf64_Sym *sym)
{
	struct sym_seen *s = ctx;

	if (s->n < 4) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->values[s->n] = sym->st_value;
	}
	if (++s->n == s->stop_at)
		return 42;
	return 0;
}

static void test_foreach_sym(void **state UNUSED)
{
	static const struct {
		bool all;
		struct patch p;
		uint32_t type;
		uint64_t max;
		int stop_at, ret, n;
	} cases[] = {
		{ true, { P_NONE }, SHT_SYMTAB, 0, 0, 0, 2 },
		{ true, { P_NONE }, SHT_SYMTAB, 0, 1, 42, 1 },		/* the callback stops it */
		{ true, { P_NONE }, SHT_DYNSYM, 0, 0, 0, 0 },
		{ false, { P_SYM_SHNDX, 1, SHN_UNDEF }, SHT_SYMTAB, 0, 0, 0, 1 },
		{ false, { P_SYM_NAME, 1, 0 }, SHT_SYMTAB, 0, 0, 0, 1 },	/* nameless */
		{ false, { P_SYM_NAME, 1, 0x1000 }, SHT_SYMTAB, 0, 0, 0, 1 },	/* outside */
		{ false, { P_NONE }, SHT_SYMTAB, 16, 0, 0, 0 },		/* over @max */
		{ true, { P_SH_LINK, S_SYMTAB, S_TEXT }, SHT_SYMTAB, 0, 0, 0, 0 },
		{ true, { P_SH_LINK, S_SYMTAB, 99 }, SHT_SYMTAB, 0, 0, 0, 0 },
		{ true, { P_SH_OFFSET, S_SYMTAB, 0xfffffff0 }, SHT_SYMTAB, 0, 0, 0, 0 },
		{ true, { P_SH_SIZE, S_STRTAB, 0xfffffff0 }, SHT_SYMTAB, 0, 0, 0, 0 },
	};
	struct sym_seen seen;
	struct elf_file *ef;
	struct img m;
	size_t i, l;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l < (cases[i].all ? ARRAY_SIZE(layouts) : 1); l++) {
			print_message("case %zu layout %zu\n", i, l);
			build(&m, layouts[l].is64, layouts[l].be);
			apply(&m, &cases[i].p);
			assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
			memset(&seen, 0, sizeof(seen));
			seen.stop_at = cases[i].stop_at;
			assert_int_equal(elf_file__foreach_sym(ef, cases[i].type, cases[i].max,
							       on_sym, &seen), cases[i].ret);
			assert_int_equal(seen.n, cases[i].n);
			if (cases[i].n == 2) {
				assert_string_equal(seen.names[0], "fx_one");
				assert_string_equal(seen.names[1], "fx_two");
				assert_true(seen.values[1] == 0x1108);
			}
			elf_file__free(ef);
		}
	}
	assert_int_equal(elf_file__foreach_sym(NULL, SHT_SYMTAB, 0, on_sym, &seen), -EINVAL);
}

/*
 * The GNU hash table, after the section headers: nbuckets 1, symoffset 1, one bloom word,
 * bucket[0] = 1, then the chain words of fx_one and fx_two (the last with the end bit). The
 * .symtab becomes the .dynsym and .symtab_shndx the hash section.
 */
#define OFF_HASH (OFF_SHDR + S_NUM * sizeof(Elf64_Shdr))

static uint32_t djb(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

static void build_hash(struct img *m, uint32_t nbuckets, uint32_t bucket, bool end_bit)
{
	size_t word = m->is64 ? 8 : 4, b = OFF_HASH + 16 + word;

	put(m, OFF_HASH, nbuckets, 4);
	put(m, OFF_HASH + 4, 1, 4);
	put(m, OFF_HASH + 8, 1, 4);
	put(m, OFF_HASH + 12, 6, 4);
	put(m, b, bucket, 4);
	put(m, b + 4, djb("fx_one") & ~1u, 4);
	put(m, b + 8, (djb("fx_two") & ~1u) | end_bit, 4);
	m->len = b + 12;
	SH(m, S_SYMTAB, sh_type, SHT_DYNSYM);
	SH(m, S_SHNDX, sh_type, SHT_GNU_HASH);
	SH(m, S_SHNDX, sh_offset, OFF_HASH);
	SH(m, S_SHNDX, sh_size, b + 12 - OFF_HASH);
	SH(m, S_SHNDX, sh_link, S_SYMTAB);
}

static void test_gnu_hash(void **state UNUSED)
{
	static const struct {
		bool all, no_hash;
		uint32_t nbuckets, bucket;
		bool end_bit;
		struct patch p;
		const char *name;
		int ret;
		uint64_t value;
	} cases[] = {
		{ true, false, 1, 1, true, { P_NONE }, "fx_one", 0, 0x1100 },
		{ true, false, 1, 1, true, { P_NONE }, "fx_two", 0, 0x1108 },
		{ true, false, 1, 1, true, { P_NONE }, "fx_three", -ENOENT },
		{ true, false, 1, 1, true, { P_NONE }, "fx_on", -ENOENT },
		{ true, true, 1, 1, true, { P_NONE }, "fx_one", -EOPNOTSUPP },	/* no table */
		{ true, false, 0, 1, true, { P_NONE }, "fx_one", -EOPNOTSUPP },
		{ false, false, 0x40000000, 1, true, { P_NONE }, "fx_one", -EOPNOTSUPP },
		/* the bucket points below symoffset */
		{ false, false, 1, 0, true, { P_NONE }, "fx_one", -ENOENT },
		{ false, false, 1, 0x7fffffff, true, { P_NONE }, "fx_one", -ENOENT },
		{ false, false, 1, 1, false, { P_NONE }, "fx_three", -ENOENT },	/* chain runs out */
		{ false, false, 1, 1, true, { P_SYM_SHNDX, 1, SHN_UNDEF }, "fx_one", -ENOENT },
		{ false, false, 1, 1, true, { P_SYM_NAME, 1, 0x1000 }, "fx_one", -ENOENT },
		{ false, false, 1, 1, true, { P_SH_SIZE, S_SYMTAB, 1 }, "fx_one", -ENOENT },
		{ true, false, 1, 1, true, { P_SH_LINK, S_SHNDX, S_TEXT }, "fx_one", -EOPNOTSUPP },
		{ true, false, 1, 1, true, { P_SH_LINK, S_SYMTAB, S_TEXT }, "fx_one", -EOPNOTSUPP },
		{ true, false, 1, 1, true, { P_SH_SIZE, S_SHNDX, 8 }, "fx_one", -EOPNOTSUPP },
		{ true, false, 1, 1, true, { P_SH_OFFSET, S_SHNDX, 0xfffffff0 }, "fx_one",
		  -EOPNOTSUPP },
		{ true, false, 1, 1, true, { P_SH_SIZE, S_STRTAB, 0xfffffff0 }, "fx_one",
		  -EOPNOTSUPP },
	};
	struct elf_file *ef;
	Elf64_Sym sym;
	struct img m;
	size_t i, l;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (l = 0; l < (cases[i].all ? ARRAY_SIZE(layouts) : 1); l++) {
			print_message("case %zu layout %zu\n", i, l);
			build(&m, layouts[l].is64, layouts[l].be);
			if (!cases[i].no_hash)
				build_hash(&m, cases[i].nbuckets, cases[i].bucket,
					   cases[i].end_bit);
			apply(&m, &cases[i].p);
			assert_int_equal(elf_file__open_memory(m.b, m.len, NULL, &ef), 0);
			assert_int_equal(elf_file__gnu_hash_lookup(ef, cases[i].name, &sym),
					 cases[i].ret);
			if (!cases[i].ret)
				assert_true(sym.st_value == cases[i].value);
			elf_file__free(ef);
		}
	}
}

static int count_syms(void *ctx, const char *name UNUSED, const Elf64_Sym *sym UNUSED)
{
	++*(size_t *)ctx;
	return 0;
}

/*
 * A sparse file (tests/fixtures/elf/exec extended by a 1.5 GiB hole) whose headers claim
 * tables in the hole: reads that would allocate for the claim fail with -E2BIG before they
 * allocate, a claimed section table is ignored, and bounded reads of real data still work,
 * all under RLIMIT_AS.
 */
static void test_sparse(void **state UNUSED)
{
	static const uint64_t keep = ~0ull, big = 200u << 20;
	static const struct hm_patch patches[] = {
		{ ".symtab", HM_SPARSE_SIZE - big, big },
		{ ".strtab", keep, keep },
	};
	bool limited = hm_limit_as();
	Elf64_Shdr sh0 = { .sh_size = 100000 };
	uint64_t shoff = HM_SPARSE_SIZE - (8u << 20), len;
	struct elf_file *ef;
	uint16_t zero = 0;
	long hwm0 = hm_vmhwm_kb();
	size_t n = 0;
	void *p;
	int fd, idx;

	fd = hm_sparse_copy("tests/fixtures/elf/exec", patches, ARRAY_SIZE(patches), NULL, 0, 0,
			    HM_SPARSE_SIZE);
	assert_true(fd >= 0);
	assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
	assert_true(elf_file__allocated(ef) < (1u << 20));
	assert_true(elf_file__backed(ef, ELF_FILE_SPARSE_SLACK));
	assert_false(elf_file__backed(ef, big));
	assert_int_equal(elf_file__read(ef, HM_SPARSE_SIZE - big, big, &p), -E2BIG);
	idx = elf_file__section(ef, ".symtab", NULL);
	assert_true(idx > 0);
	assert_int_equal(elf_file__read_section(ef, (size_t)idx, 0, &p, &len), -E2BIG);
	assert_int_equal(elf_file__foreach_sym(ef, SHT_SYMTAB, 0, count_syms, &n), 0);
	assert_int_equal(n, 0);
	/* Real data is still read. */
	assert_int_equal(elf_file__read(ef, 0, 64, &p), 0);
	free(p);
	elf_file__free(ef);

	/* e_shnum 0 and section 0 claiming 100000 headers (6.4 MB) in the hole: ignored. */
	assert_int_equal(pwrite(fd, &sh0, sizeof(sh0), (off_t)shoff), sizeof(sh0));
	assert_int_equal(pwrite(fd, &shoff, 8, offsetof(Elf64_Ehdr, e_shoff)), 8);
	assert_int_equal(pwrite(fd, &zero, 2, offsetof(Elf64_Ehdr, e_shnum)), 2);
	assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
	assert_true(elf_file__shdrs_ignored(ef));
	assert_int_equal(elf_file__shnum(ef), 0);
	elf_file__free(ef);
	close(fd);
	hm_restore_as(limited);
	assert_true(hm_vmhwm_kb() - hwm0 < 8 * 1024);
}

/* The reasons the notes give for a table not read: sizes in words, valid UTF-8, cut whole. */
static void test_skip_format(void **state UNUSED)
{
	static const struct {
		struct elf_skip skip;
		size_t size;
		const char *out;
	} cases[] = {
		{ { ELF_SKIP_SPARSE, ".symtab", 1ull << 30, 20u << 10 }, 128,
		  ".symtab claims 1 GiB, but the file has 20 KiB on disk" },
		{ { ELF_SKIP_OVER_LIMIT, ".gopclntab", 200u << 20, 48u << 20 }, 128,
		  ".gopclntab claims 200 MiB, over the 48 MiB limit" },
		{ { ELF_SKIP_OVER_LIMIT, ".strtab", (1536ull << 20) - 0x4000, 256u << 20 }, 128,
		  ".strtab claims 1.4 GiB, over the 256 MiB limit" },
		{ { ELF_SKIP_COUNT, ".dynsym", 5000000, 4194304 }, 128,
		  ".dynsym holds 5000000 symbols, over the limit of 4194304" },
		{ { ELF_SKIP_FILE, "", 3ull << 30, 2ull << 30 }, 128,
		  "the file is 3 GiB, over the 2 GiB limit" },
		{ { ELF_SKIP_SPARSE, "", 8ull << 30, 512 }, 128,
		  "a section claims 8 GiB, but the file has 512 bytes on disk" },
		{ { ELF_SKIP_NONE, ".symtab", 1, 1 }, 128, "" },
		/* cut short: at a character boundary */
		{ { ELF_SKIP_SPARSE, "\xd0\x96\xd0\x96", 1ull << 30, 20u << 10 }, 4, "\xd0\x96" },
		{ { ELF_SKIP_SPARSE, "\xd0\x96\xd0\x96", 1ull << 30, 20u << 10 }, 1, "" },
	};
	struct elf_skip skip = { ELF_SKIP_NONE };
	char buf[128];
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(buf, 'x', sizeof(buf));
		n = elf_skip_format(&cases[i].skip, buf, cases[i].size);
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
	}
	assert_int_equal(elf_skip_format(NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* The first refusal stays; a hostile name is made valid UTF-8 and cut to fit. */
	elf_skip_set(&skip, ELF_SKIP_SPARSE, ".sym\xfftab-with-a-very-long-name-indeed", 9, 1);
	elf_skip_set(&skip, ELF_SKIP_FILE, "", 1, 1);
	assert_int_equal(skip.kind, ELF_SKIP_SPARSE);
	assert_string_equal(skip.what, ".sym?tab-with-a-very-lo");
	elf_skip_set(NULL, ELF_SKIP_FILE, "", 1, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_cap),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_symtab),
		cmocka_unit_test(test_read_vaddr),
		cmocka_unit_test(test_find_note),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_foreach_sym),
		cmocka_unit_test(test_gnu_hash),
		cmocka_unit_test(test_skip_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
