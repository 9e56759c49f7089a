// SPDX-License-Identifier: Apache-2.0
/*
 * gopclntab on a real stripped Go binary (tests/fixtures/go: Go 1.19, the 1.18 layout), checked
 * against `go tool objdump` (layout.txt), with and without section headers; on synthetic
 * tables of each layout (1.16, 1.18, 1.20) built here, inline trees included; and on
 * corrupted copies of the fixture (error rows).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/elf_file.h"
#include "symbols/gopclntab.h"

#include "base/array.h"
#include "tests/unit/elf_fixture.h"
#include "tests/unit/hostile_mem.h"
#define UNUSED __attribute__((unused))
#define FIXTURE "tests/fixtures/go/hot-stripped"
#define LAYOUT "tests/fixtures/go/layout.txt"

/* ---- the real fixture ---- */

struct image {
	uint8_t *buf;
	size_t len;
	uint64_t tab;		/* file offset of .gopclntab */
	uint64_t tab_len;
	uint64_t shdr;		/* file offset of its section header */
};

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Reads the fixture whole (a test may) and finds .gopclntab by hand, not with the reader. */
static void image_load(struct image *im)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *names;
	struct stat sb;
	size_t i;
	int fd;

	fd = open(FIXTURE, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	im->len = (size_t)sb.st_size;
	im->buf = malloc(im->len);
	assert_non_null(im->buf);
	assert_int_equal(pread(fd, im->buf, im->len, 0), (ssize_t)im->len);
	close(fd);
	eh = (const Elf64_Ehdr *)(const void *)im->buf;
	sh = (const Elf64_Shdr *)(const void *)(im->buf + eh->e_shoff);
	names = (const char *)im->buf + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, ".gopclntab"))
			continue;
		im->tab = sh[i].sh_offset;
		im->tab_len = sh[i].sh_size;
		im->shdr = eh->e_shoff + i * sizeof(*sh);
	}
	assert_true(im->tab > 0);
}

/* Header word @i of the 1.18 layout (0 nfunc, 2 textStart, 3 funcname ... 7 pcln). */
static uint64_t tab_word(const struct image *im, unsigned i)
{
	return le64(im->buf + im->tab + 8 + 8 * i);
}

/* File offset of the functab row of the function holding @pc. */
static uint64_t ftab_row_of(const struct image *im, uint64_t pc)
{
	uint64_t nfunc = tab_word(im, 0), text = tab_word(im, 2), ftab = im->tab + tab_word(im, 7);
	uint64_t i;

	for (i = 0; i + 1 < nfunc; i++)
		if (text + le32(im->buf + ftab + 8 * (i + 1)) > pc)
			break;
	return ftab + 8 * i;
}

static int load_image(const struct image *im, bool scan, struct gopclntab **t)
{
	struct gopclntab_opts opts = { .scan = scan };
	struct elf_file *ef;
	int err;

	err = elf_file__open_memory(im->buf, im->len, NULL, &ef);
	if (err)
		return err;
	err = gopclntab__from_elf(ef, &opts, t);
	elf_file__free(ef);
	return err;
}

struct marks {
	uint32_t leaf, mid, hot_call;
};

struct row {
	uint64_t pc;
	char func[64], file[64];
	uint32_t line;
};

/* layout.txt: "mark NAME LINE" and "pc ADDR FUNC FILE LINE" lines. */
static size_t read_layout(struct marks *m, struct row *rows, size_t max)
{
	char line[256], name[64];
	size_t n = 0;
	uint32_t l;
	FILE *f;

	f = fopen(LAYOUT, "r");
	assert_non_null(f);
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "mark %63s %" SCNu32, name, &l) == 2) {
			if (!strcmp(name, "leaf-body"))
				m->leaf = l;
			else if (!strcmp(name, "mid-body"))
				m->mid = l;
			else if (!strcmp(name, "hot-call"))
				m->hot_call = l;
		} else if (n < max && sscanf(line, "pc %" SCNx64 " %63s %63s %" SCNu32, &rows[n].pc,
					     rows[n].func, rows[n].file, &rows[n].line) == 4) {
			n++;
		}
	}
	fclose(f);
	assert_true(m->leaf && m->mid && m->hot_call);
	return n;
}

/*
 * Every row: the innermost file:line is objdump's, the last frame is objdump's function. In
 * main.hot, main.mid and main.leaf are inlined: their lines have the inline frames above it.
 */
static void check_rows(const struct gopclntab *t)
{
	static struct row rows[256];
	struct go_frame f[GOPCLNTAB_MAX_DEPTH];
	struct marks m;
	size_t nrows, i;
	int n;

	nrows = read_layout(&m, rows, ARRAY_SIZE(rows));
	assert_true(nrows > 40);
	for (i = 0; i < nrows; i++) {
		print_message("row %zu: %#" PRIx64 " %s %s:%u\n", i, rows[i].pc, rows[i].func,
			      rows[i].file, rows[i].line);
		n = gopclntab__lookup(t, rows[i].pc, f, ARRAY_SIZE(f));
		assert_true(n >= 1);
		assert_string_equal(f[n - 1].name, rows[i].func);
		assert_false(f[n - 1].inlined);
		assert_non_null(f[0].file);
		assert_string_equal(f[0].file, rows[i].file);
		assert_int_equal(f[0].line, rows[i].line);
		if (strcmp(rows[i].func, "main.hot"))
			continue;
		if (rows[i].line == m.leaf) {
			assert_int_equal(n, 3);
			assert_string_equal(f[0].name, "main.leaf");
			assert_true(f[0].inlined);
			assert_string_equal(f[1].name, "main.mid");
			assert_int_equal(f[1].line, m.mid);
			assert_true(f[1].inlined);
			assert_int_equal(f[2].line, m.hot_call);
		} else if (rows[i].line == m.mid) {
			assert_int_equal(n, 2);
			assert_string_equal(f[0].name, "main.mid");
			assert_int_equal(f[1].line, m.hot_call);
		} else {
			assert_int_equal(n, 1);
		}
	}
}

static void test_fixture(void **state UNUSED)
{
	struct gopclntab *t = NULL;
	uint64_t start, end;
	int fd;

	fd = open(FIXTURE, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(gopclntab__from_fd(fd, NULL, &t), 0);
	close(fd);
	assert_int_equal(gopclntab__version(t), 118);
	assert_true(gopclntab__nfunc(t) > 1000);
	assert_true(gopclntab__has_inline(t));
	gopclntab__text_range(t, &start, &end);
	assert_int_equal(start, 0x401000);
	assert_true(end > start);
	check_rows(t);
	gopclntab__free(t);
	gopclntab__free(NULL);
}

/* sstrip'd: no section headers. Found by scanning the segments, inline trees included. */
static void test_no_section_headers(void **state UNUSED)
{
	struct gopclntab *t = NULL;
	struct image im;
	Elf64_Ehdr *eh;

	image_load(&im);
	eh = (Elf64_Ehdr *)(void *)im.buf;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	assert_int_equal(load_image(&im, false, &t), -ENOENT);
	assert_null(t);
	assert_int_equal(load_image(&im, true, &t), 0);
	assert_int_equal(gopclntab__version(t), 118);
	assert_true(gopclntab__has_inline(t));
	check_rows(t);
	gopclntab__free(t);
	free(im.buf);
}

/* ---- corrupted copies of the fixture ---- */

enum mutation {
	M_NONE,
	M_MAGIC_BAD,
	M_MAGIC_GO12,
	M_PAD,
	M_PTRSIZE,
	M_QUANTUM,
	M_TRUNC_HEADER,
	M_TRUNC_FTAB,
	M_PCLN_PAST_END,
	M_OFFSETS_UNORDERED,
	M_NFUNC_HUGE,
	M_NFUNC_ZERO,
	M_FTAB_UNSORTED,
	M_SECTION_PAST_END,
	M_SECTION_NOBITS,
	M_NO_SECTION,
	M_FUNCOFF_PAST_END,	/* main.hot's _func offset: load works, its lookup fails */
	M_NAMEOFF_PAST_END,
	M_PCLN_BAD,		/* main.hot's line table: names still, lines unknown */
	M_PCFILE_VARINT,	/* a 6-byte varint */
};

static void mutate(struct image *im, enum mutation m, uint64_t hot)
{
	uint8_t *tab = im->buf + im->tab;
	Elf64_Shdr *sh = (Elf64_Shdr *)(void *)(im->buf + im->shdr);
	uint64_t row = ftab_row_of(im, hot), func;

	func = im->tab + tab_word(im, 7) + le32(im->buf + row + 4);
	switch (m) {
	case M_NONE:
		break;
	case M_MAGIC_BAD:
		put32(tab, 0xdeadbeef);
		break;
	case M_MAGIC_GO12:
		put32(tab, 0xfffffffb);
		break;
	case M_PAD:
		tab[5] = 1;
		break;
	case M_PTRSIZE:
		tab[7] = 4;
		break;
	case M_QUANTUM:
		tab[6] = 3;
		break;
	case M_TRUNC_HEADER:
		sh->sh_size = 40;
		break;
	case M_TRUNC_FTAB:
		sh->sh_size = tab_word(im, 7) + 16;
		break;
	case M_PCLN_PAST_END:
		put64(tab + 8 + 8 * 7, 0xffffffffull);
		break;
	case M_OFFSETS_UNORDERED:
		put64(tab + 8 + 8 * 3, tab_word(im, 5) + 8);
		break;
	case M_NFUNC_HUGE:
		put64(tab + 8, 1ull << 40);
		break;
	case M_NFUNC_ZERO:
		put64(tab + 8, 0);
		break;
	case M_FTAB_UNSORTED:
		put32(im->buf + row + 8, le32(im->buf + row) - 1);
		break;
	case M_SECTION_PAST_END:
		sh->sh_offset = im->len - 16;
		break;
	case M_SECTION_NOBITS:
		sh->sh_type = SHT_NOBITS;
		break;
	case M_NO_SECTION:
		sh->sh_name = 0;
		break;
	case M_FUNCOFF_PAST_END:
		put32(im->buf + row + 4, 0xfffffff0);
		break;
	case M_NAMEOFF_PAST_END:
		put32(im->buf + func + 4, 0x7fffffff);
		break;
	case M_PCLN_BAD:
		put32(im->buf + func + 4 + 5 * 4, 0xffffffff);
		break;
	case M_PCFILE_VARINT:
		memset(im->buf + im->tab + tab_word(im, 6) + le32(im->buf + func + 4 + 4 * 4), 0xff,
		       6);
		break;
	}
}

static void test_malformed(void **state UNUSED)
{
	static const struct {
		enum mutation m;
		int load, lookup;	/* returns of the load and of a lookup in main.hot */
		bool line;		/* that lookup has a file and a line */
	} cases[] = {
		{ M_NONE, 0, 3, true },
		{ M_MAGIC_BAD, -EINVAL },
		{ M_MAGIC_GO12, -EPROTONOSUPPORT },
		{ M_PAD, -EINVAL },
		{ M_PTRSIZE, -EINVAL },
		{ M_QUANTUM, -EINVAL },
		{ M_TRUNC_HEADER, -EINVAL },
		{ M_TRUNC_FTAB, -EINVAL },
		{ M_PCLN_PAST_END, -EINVAL },
		{ M_OFFSETS_UNORDERED, -EINVAL },
		{ M_NFUNC_HUGE, -EINVAL },
		{ M_NFUNC_ZERO, -EINVAL },
		{ M_FTAB_UNSORTED, -EINVAL },
		{ M_SECTION_PAST_END, -EINVAL },
		{ M_SECTION_NOBITS, -EINVAL },
		{ M_NO_SECTION, -ENOENT },
		{ M_FUNCOFF_PAST_END, 0, -EINVAL },
		{ M_NAMEOFF_PAST_END, 0, -EINVAL },
		{ M_PCLN_BAD, 0, 3, false },
		{ M_PCFILE_VARINT, 0, 3, false },
	};
	struct go_frame f[GOPCLNTAB_MAX_DEPTH];
	struct marks mk;
	struct row rows[64];
	struct gopclntab *t;
	uint64_t leaf_pc = 0;
	struct image im;
	size_t i, n;
	int ret;

	n = read_layout(&mk, rows, ARRAY_SIZE(rows));
	for (i = 0; i < n && !leaf_pc; i++)
		if (!strcmp(rows[i].func, "main.hot") && rows[i].line == mk.leaf)
			leaf_pc = rows[i].pc;
	assert_true(leaf_pc);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		image_load(&im);
		mutate(&im, cases[i].m, leaf_pc);
		t = NULL;
		assert_int_equal(load_image(&im, false, &t), cases[i].load);
		if (cases[i].load) {
			assert_null(t);
			free(im.buf);
			continue;
		}
		ret = gopclntab__lookup(t, leaf_pc, f, ARRAY_SIZE(f));
		if (cases[i].lookup == 3 && !cases[i].line)
			assert_true(ret >= 1);
		else
			assert_int_equal(ret, cases[i].lookup);
		if (ret > 0) {
			assert_string_equal(f[ret - 1].name, "main.hot");
			assert_int_equal(f[0].file && f[0].line, cases[i].line);
		}
		gopclntab__free(t);
		free(im.buf);
	}
}

/* Lookups outside the text, and fewer frames than the inlining has. */
static void test_lookup_edges(void **state UNUSED)
{
	struct go_frame f[GOPCLNTAB_MAX_DEPTH];
	struct gopclntab *t = NULL;
	struct row rows[64];
	uint64_t start, end, leaf_pc = 0;
	struct marks mk;
	size_t i, n;
	int fd;

	n = read_layout(&mk, rows, ARRAY_SIZE(rows));
	for (i = 0; i < n && !leaf_pc; i++)
		if (!strcmp(rows[i].func, "main.hot") && rows[i].line == mk.leaf)
			leaf_pc = rows[i].pc;
	fd = open(FIXTURE, O_RDONLY | O_CLOEXEC);
	assert_int_equal(gopclntab__from_fd(fd, NULL, &t), 0);
	close(fd);
	gopclntab__text_range(t, &start, &end);
	assert_int_equal(gopclntab__lookup(t, start - 1, f, 4), -ENOENT);
	assert_int_equal(gopclntab__lookup(t, end, f, 4), -ENOENT);
	assert_int_equal(gopclntab__lookup(t, 0, f, 4), -ENOENT);
	assert_int_equal(gopclntab__lookup(t, UINT64_MAX, f, 4), -ENOENT);
	assert_int_equal(gopclntab__lookup(t, leaf_pc, f, 0), -EINVAL);
	assert_int_equal(gopclntab__lookup(NULL, leaf_pc, f, 4), -EINVAL);
	assert_int_equal(gopclntab__lookup(t, leaf_pc, f, 1), 1);
	assert_string_equal(f[0].name, "main.hot");
	assert_int_equal(f[0].line, mk.hot_call);
	assert_int_equal(gopclntab__lookup(t, leaf_pc, f, 2), 2);
	assert_string_equal(f[0].name, "main.leaf");
	assert_string_equal(f[1].name, "main.hot");
	assert_int_equal(gopclntab__lookup(t, start, f, 4), 1);
	assert_non_null(f[0].name);
	gopclntab__free(t);

	/* Not Go: a C executable, a text file, a bad fd. */
	fd = open("tests/fixtures/elf/exec", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(gopclntab__from_fd(fd, &(struct gopclntab_opts){ .scan = true }, &t),
			 -ENOENT);
	close(fd);
	fd = open("tests/fixtures/go/hot.go", O_RDONLY | O_CLOEXEC);
	assert_int_equal(gopclntab__from_fd(fd, NULL, &t), -EINVAL);
	close(fd);
	assert_true(gopclntab__from_fd(-1, NULL, &t) < 0);
	assert_int_equal(gopclntab__from_elf(NULL, NULL, &t), -EINVAL);
}

/* ---- synthetic tables of each layout ---- */

/*
 * A minimal 64-bit little-endian ELF: a read-only PT_LOAD (the table at 0x501000, the inline
 * tree at 0x502000) and a writable one holding runtime.firstmoduledata (0x603008), sections
 * .gopclntab and .shstrtab. Two functions at text 0x401000: main.f [0x401000, 0x401020), into
 * which main.g is inlined at [0x401010, 0x401018) (call site: line 10), and main.h
 * [0x401020, 0x401030). All of a.go.
 */
#define SYN_LEN 0x4100
#define SYN_TAB 0x1000
#define SYN_TREE 0x2000
#define SYN_MD 0x3008
#define SYN_SHDRS 0x4000
#define SYN_VBASE 0x500000ull
#define SYN_RWBASE 0x600000ull
#define SYN_TEXT 0x401000ull
#define SYN_GOFUNC (SYN_VBASE + SYN_TREE - 0x10)

static void synth(uint8_t *img, unsigned ver)
{
	static const uint8_t pctab[] = {
		0,
		/* 1: pcfile f */ 0x02, 0x20, 0x00,
		/* 4: pcln f: 10 for 0x10, 20 for 8, 11 for 8 */ 0x16, 0x10, 0x14, 0x08, 0x11, 0x08, 0x00,
		/* 11: inline index f: -1, 0, -1 */ 0x00, 0x10, 0x02, 0x08, 0x01, 0x08, 0x00,
		/* 18: pcfile h */ 0x02, 0x10, 0x00,
		/* 21: pcln h: 30 */ 0x3e, 0x10, 0x00,
	};
	static const char shstr[] = "\0.gopclntab\0.shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)(void *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(void *)(img + sizeof(*eh));
	Elf64_Shdr *sh = (Elf64_Shdr *)(void *)(img + SYN_SHDRS);
	uint8_t *t = img + SYN_TAB, *fn, *p;
	uint64_t fname = 0x80, cu = 0xa0, file = 0xa8, pc = 0xb0, ln = 0x100, hdr, fixed;
	uint64_t funcoff[2] = { 0x40, 0xa0 };
	unsigned i, nw = ver == 116 ? 7 : 8;

	memset(img, 0, SYN_LEN);
	fx_elf64_exec(eh, 2, SYN_SHDRS, 3, 2);
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0,
			      .p_vaddr = SYN_VBASE, .p_filesz = 0x3000, .p_memsz = 0x3000 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x3000,
			      .p_vaddr = SYN_RWBASE + 0x3000, .p_filesz = 0x1000, .p_memsz = 0x1000 };
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = SYN_VBASE + SYN_TAB, .sh_offset = SYN_TAB, .sh_size = 0x200 };
	sh[2] = (Elf64_Shdr){ .sh_name = 12, .sh_type = SHT_STRTAB, .sh_offset = 0x3800,
			      .sh_size = sizeof(shstr) };
	memcpy(img + 0x3800, shstr, sizeof(shstr));

	/* Header. */
	put32(t, ver == 116 ? 0xfffffffa : ver == 118 ? 0xfffffff0 : 0xfffffff1);
	t[6] = 1;
	t[7] = 8;
	put64(t + 8, 2);	/* nfunc */
	put64(t + 16, 1);	/* nfiles */
	i = 2;
	if (ver != 116)
		put64(t + 8 + 8 * i++, SYN_TEXT);
	put64(t + 8 + 8 * i++, fname);
	put64(t + 8 + 8 * i++, cu);
	put64(t + 8 + 8 * i++, file);
	put64(t + 8 + 8 * i++, pc);
	put64(t + 8 + 8 * i++, ln);
	assert_int_equal(i, nw);
	memcpy(t + fname, "main.f\0main.g\0main.h", 21);
	put32(t + cu, 0);
	memcpy(t + file, "a.go", 5);
	memcpy(t + pc, pctab, sizeof(pctab));

	/* functab: nfunc + 1 rows. */
	for (i = 0; i < 3; i++) {
		uint64_t e = i == 0 ? 0 : i == 1 ? 0x20 : 0x30;

		if (ver == 116) {
			put64(t + ln + 16 * i, SYN_TEXT + e);
			put64(t + ln + 16 * i + 8, i < 2 ? funcoff[i] : 0);
		} else {
			put32(t + ln + 8 * i, (uint32_t)e);
			put32(t + ln + 8 * i + 4, i < 2 ? (uint32_t)funcoff[i] : 0);
		}
	}
	/* _func: [entry] nameoff args deferreturn pcsp pcfile pcln npcdata cuOffset
	 * [startLine] funcID flag pad nfuncdata, then pcdata[] and funcdata[]. */
	hdr = ver == 116 ? 8 : 4;
	fixed = hdr + 32 + (ver >= 120 ? 4 : 0) + 4;
	for (i = 0; i < 2; i++) {
		fn = t + ln + funcoff[i];
		if (ver == 116)
			put64(fn, SYN_TEXT + 0x20 * i);
		else
			put32(fn, 0x20 * i);
		put32(fn + hdr, i ? 14 : 0);		/* nameoff */
		put32(fn + hdr + 16, i ? 18 : 1);	/* pcfile */
		put32(fn + hdr + 20, i ? 21 : 4);	/* pcln */
		put32(fn + hdr + 24, i ? 0 : 3);	/* npcdata */
		fn[fixed - 1] = i ? 0 : 4;		/* nfuncdata */
		if (i)
			continue;
		p = fn + fixed;
		put32(p + 8, 11);			/* pcdata[PCDATA_InlTreeIndex] */
		p += 12;
		if (ver == 116) {
			/* Pointers, 8-aligned in memory. */
			if ((SYN_VBASE + (uint64_t)(p - img)) & 4)
				p += 4;
			put64(p + 24, SYN_VBASE + SYN_TREE);
		} else {
			memset(p, 0xff, 12);
			put32(p + 12, (uint32_t)(SYN_VBASE + SYN_TREE - SYN_GOFUNC));
		}
	}
	/* The inline tree: main.g, called from pc offset 8 (line 10). */
	p = img + SYN_TREE;
	if (ver >= 120) {
		put32(p + 4, 7);
		put32(p + 8, 8);
		put32(p + 12, 19);
	} else {
		p[0] = p[1] = 0xff;
		put32(p + 8, 10);
		put32(p + 12, 7);
		put32(p + 16, 8);
	}
	/* runtime.firstmoduledata: pcHeader, funcnametab, ..., text (word 22), gofunc. */
	p = img + SYN_MD;
	put64(p, SYN_VBASE + SYN_TAB);
	put64(p + 8, SYN_VBASE + SYN_TAB + fname);
	put64(p + 8 * 22, SYN_TEXT);
	put64(p + 8 * (ver >= 120 ? 40 : 38), SYN_GOFUNC);
}

static void test_layouts(void **state UNUSED)
{
	static const struct {
		uint64_t pc;
		int n;
		const char *name0;
		uint32_t line0;
		const char *name1;
		uint32_t line1;
	} cases[] = {
		{ SYN_TEXT, 1, "main.f", 10 },
		{ SYN_TEXT + 0x0f, 1, "main.f", 10 },
		{ SYN_TEXT + 0x10, 2, "main.g", 20, "main.f", 10 },
		{ SYN_TEXT + 0x17, 2, "main.g", 20, "main.f", 10 },
		{ SYN_TEXT + 0x18, 1, "main.f", 11 },
		{ SYN_TEXT + 0x20, 1, "main.h", 30 },
		{ SYN_TEXT + 0x2f, 1, "main.h", 30 },
		{ SYN_TEXT + 0x30, -ENOENT },
		{ SYN_TEXT - 1, -ENOENT },
	};
	/* 126: the 1.20 layout as Go 1.26 writes it, textStart 0 (moduledata.text is used). */
	static const unsigned vers[] = { 116, 118, 120, 126 };
	static uint8_t img[SYN_LEN];
	struct go_frame f[4];
	struct gopclntab *t;
	struct elf_file *ef;
	size_t v, i;
	int n;

	for (v = 0; v < ARRAY_SIZE(vers); v++) {
		synth(img, vers[v] == 126 ? 120 : vers[v]);
		if (vers[v] == 126)
			put64(img + SYN_TAB + 8 + 8 * 2, 0);
		assert_int_equal(elf_file__open_memory(img, sizeof(img), NULL, &ef), 0);
		t = NULL;
		assert_int_equal(gopclntab__from_elf(ef, NULL, &t), 0);
		elf_file__free(ef);
		assert_int_equal(gopclntab__version(t), vers[v] == 126 ? 120 : vers[v]);
		assert_int_equal(gopclntab__nfunc(t), 2);
		assert_true(gopclntab__has_inline(t));
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			print_message("Go %u case %zu\n", vers[v], i);
			n = gopclntab__lookup(t, cases[i].pc, f, ARRAY_SIZE(f));
			assert_int_equal(n, cases[i].n);
			if (n < 0)
				continue;
			assert_string_equal(f[0].name, cases[i].name0);
			assert_string_equal(f[0].file, "a.go");
			assert_int_equal(f[0].line, cases[i].line0);
			assert_int_equal(f[0].inlined, n == 2);
			if (n == 2) {
				assert_string_equal(f[1].name, cases[i].name1);
				assert_int_equal(f[1].line, cases[i].line1);
			}
		}
		gopclntab__free(t);
	}
	/* Without the moduledata (1.18+) the inline tree is unknown: physical frames only. */
	synth(img, 120);
	memset(img + SYN_MD, 0, 8);
	assert_int_equal(elf_file__open_memory(img, sizeof(img), NULL, &ef), 0);
	assert_int_equal(gopclntab__from_elf(ef, NULL, &t), 0);
	elf_file__free(ef);
	assert_false(gopclntab__has_inline(t));
	assert_int_equal(gopclntab__lookup(t, SYN_TEXT + 0x10, f, ARRAY_SIZE(f)), 1);
	assert_string_equal(f[0].name, "main.f");
	assert_int_equal(f[0].line, 20);
	gopclntab__free(t);
}

/*
 * A sparse copy of the fixture whose .gopclntab claims a hole (or more than the table cap) is
 * refused before the claim is read (-E2BIG), under RLIMIT_AS; the unpatched copy still loads.
 */
static void test_sparse_claims(void **state UNUSED)
{
	static const uint64_t keep = ~0ull, at = HM_SPARSE_SIZE - (300ull << 20);
	static const struct {
		struct hm_patch patch;
		int ret;
	} cases[] = {
		{ { ".gopclntab", at, 40u << 20 }, -E2BIG },
		{ { ".gopclntab", at, GOPCLNTAB_MAX_READ + 1 }, -E2BIG },
		{ { ".gopclntab", at, 256u << 20 }, -E2BIG },
		{ { ".gopclntab", keep, keep }, 0 },
	};
	bool limited = hm_limit_as();
	struct gopclntab *t;
	long hwm0 = hm_vmhwm_kb();
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = hm_sparse_copy(FIXTURE, &cases[i].patch, 1, NULL, 0, 0, HM_SPARSE_SIZE);
		assert_true(fd >= 0);
		t = NULL;
		assert_int_equal(gopclntab__from_fd(fd, NULL, &t), cases[i].ret);
		gopclntab__free(t);
		close(fd);
	}
	hm_restore_as(limited);
	assert_true(hm_vmhwm_kb() - hwm0 < 16 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_no_section_headers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_lookup_edges),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_sparse_claims),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
