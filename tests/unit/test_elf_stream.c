// SPDX-License-Identifier: Apache-2.0
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/fileio.h"
#include "symbols/elf_stream.h"
#include "symbols/elf_symtab.h"
#include "symbols/symindex.h"

#define UNUSED __attribute__((unused))
#define TEXT_ADDR 0x401000u
#define TEXT_SIZE 0x100u
#define GEN_BID "0123456789abcdef0123456789abcdef01234567"

/* ---- tiny ELF images, written in memory ---- */

struct gen {
	bool is32;
	bool no_note, no_symtab, only_objects, shdrs_first, no_phdrs;
	size_t gap;	  /* zero bytes between the text and the symbol table */
	size_t tail_gap;  /* zero bytes between the string table and the section headers */
	uint64_t bad_off; /* non-zero: the symbol table's sh_offset */
};

struct img {
	uint8_t *p;
	size_t len, cap;
};

static size_t img_at(struct img *m, size_t align, size_t n)
{
	size_t off = (m->len + align - 1) / align * align;

	assert_int_equal(array_ensure((void **)&m->p, &m->cap, 1, off + n), 0);
	memset(m->p + m->len, 0, off + n - m->len);
	m->len = off + n;
	return off;
}

static void put(uint8_t *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static const struct {
	const char *name;
	unsigned type, bind, shndx;
	uint64_t value, size;
} gen_syms[] = {
	{ "alpha", STT_FUNC, STB_GLOBAL, 2, TEXT_ADDR, 0x10 },
	{ "beta", STT_FUNC, STB_LOCAL, 2, TEXT_ADDR + 0x10, 0 },	/* unsized: to gamma */
	{ "gamma_alias", STT_FUNC, STB_LOCAL, 2, TEXT_ADDR + 0x20, 0x20 },
	{ "gamma", STT_FUNC, STB_WEAK, 2, TEXT_ADDR + 0x20, 0x20 },	/* wins: WEAK over LOCAL */
	{ "ifunc", STT_GNU_IFUNC, STB_GLOBAL, 2, TEXT_ADDR + 0x80, 0x8 },
	{ "last", STT_FUNC, STB_GLOBAL, 2, TEXT_ADDR + 0xf0, 0 },	/* unsized: to the end */
	{ "object", STT_OBJECT, STB_GLOBAL, 2, TEXT_ADDR + 0x40, 0x10 },
	{ "undef", STT_FUNC, STB_GLOBAL, SHN_UNDEF, 0, 0 },
	{ "abs", STT_FUNC, STB_GLOBAL, SHN_ABS, TEXT_ADDR + 0x50, 4 },
	{ "", STT_FUNC, STB_GLOBAL, 2, TEXT_ADDR + 0x60, 4 },
	{ "data_fn", STT_FUNC, STB_GLOBAL, 5, 0x402000, 4 },	/* not executable */
};

static void put_ehdr(const struct gen *g, uint8_t *p, uint64_t phoff, unsigned phnum,
		     uint64_t shoff, unsigned shnum)
{
	memcpy(p, ELFMAG, SELFMAG);
	p[EI_CLASS] = g->is32 ? ELFCLASS32 : ELFCLASS64;
	p[EI_DATA] = ELFDATA2LSB;
	p[EI_VERSION] = EV_CURRENT;
	put(p + 16, ET_EXEC, 2);
	put(p + 18, g->is32 ? EM_386 : EM_X86_64, 2);
	put(p + 20, EV_CURRENT, 4);
	if (g->is32) {
		put(p + 28, phoff, 4), put(p + 32, shoff, 4), put(p + 40, 52, 2);
		put(p + 42, 32, 2), put(p + 44, phnum, 2), put(p + 46, 40, 2);
		put(p + 48, shnum, 2);
	} else {
		put(p + 32, phoff, 8), put(p + 40, shoff, 8), put(p + 52, 64, 2);
		put(p + 54, 56, 2), put(p + 56, phnum, 2), put(p + 58, 64, 2);
		put(p + 60, shnum, 2);
	}
}

static void put_shdr(const struct gen *g, uint8_t *p, unsigned type, uint64_t flags,
		     uint64_t addr, uint64_t off, uint64_t size, unsigned link, uint64_t entsize)
{
	if (g->is32) {
		put(p + 4, type, 4), put(p + 8, flags, 4), put(p + 12, addr, 4);
		put(p + 16, off, 4), put(p + 20, size, 4), put(p + 24, link, 4);
		put(p + 32, 4, 4), put(p + 36, entsize, 4);
	} else {
		put(p + 4, type, 4), put(p + 8, flags, 8), put(p + 16, addr, 8);
		put(p + 24, off, 8), put(p + 32, size, 8), put(p + 40, link, 4);
		put(p + 48, 4, 8), put(p + 56, entsize, 8);
	}
}

static void put_sym(const struct gen *g, uint8_t *p, uint32_t name, size_t i)
{
	unsigned type = g->only_objects ? STT_OBJECT : gen_syms[i].type;
	uint8_t info = (uint8_t)(gen_syms[i].bind << 4 | type);

	put(p, name, 4);
	if (g->is32) {
		put(p + 4, gen_syms[i].value, 4), put(p + 8, gen_syms[i].size, 4);
		p[12] = info, put(p + 14, gen_syms[i].shndx, 2);
	} else {
		p[4] = info, put(p + 6, gen_syms[i].shndx, 2);
		put(p + 8, gen_syms[i].value, 8), put(p + 16, gen_syms[i].size, 8);
	}
}

/* The GNU build id note: "GNU", type 3, 20 bytes. */
static size_t put_note(struct img *m)
{
	size_t off = img_at(m, 4, 16 + 20), i;

	put(m->p + off, 4, 4), put(m->p + off + 4, 20, 4), put(m->p + off + 8, NT_GNU_BUILD_ID, 4);
	memcpy(m->p + off + 12, "GNU", 4);
	for (i = 0; i < 20; i++)
		m->p[off + 16 + i] = (uint8_t)(0x01 + 0x22 * i % 0xff);
	return off;
}

/* Sections: 0 null, 1 note, 2 .text, 3 .symtab, 4 .strtab, 5 .data. */
#define GEN_NSECS 6

static void gen_elf(const struct gen *g, struct img *m)
{
	size_t eh = g->is32 ? 52 : 64, ph = g->is32 ? 32 : 56, sh = g->is32 ? 40 : 64;
	size_t se = g->is32 ? 16 : 24, n = ARRAY_SIZE(gen_syms), i, note = 0, text, sym, str;
	size_t shoff = 0, phoff = 0, strlen_total = 1;
	uint8_t *p;

	memset(m, 0, sizeof(*m));
	img_at(m, 1, eh);
	if (!g->no_phdrs)
		phoff = img_at(m, 8, ph);
	if (g->shdrs_first)
		shoff = img_at(m, 8, GEN_NSECS * sh);
	if (!g->no_note)
		note = put_note(m);
	text = img_at(m, 16, TEXT_SIZE);
	img_at(m, 1, g->gap);
	sym = img_at(m, 8, (n + 1) * se);
	for (i = 0; i < n; i++)
		strlen_total += strlen(gen_syms[i].name) + 1;
	str = img_at(m, 1, strlen_total);
	for (i = 0, strlen_total = 1; i < n; i++) {
		put_sym(g, m->p + sym + (i + 1) * se, (uint32_t)strlen_total, i);
		strcpy((char *)m->p + str + strlen_total, gen_syms[i].name);
		strlen_total += strlen(gen_syms[i].name) + 1;
	}
	img_at(m, 1, g->tail_gap);
	if (!g->shdrs_first)
		shoff = img_at(m, 8, GEN_NSECS * sh);
	p = m->p;
	put_ehdr(g, p, phoff, !g->no_phdrs, shoff, GEN_NSECS);
	if (!g->no_phdrs) {
		put(p + phoff, g->no_note ? PT_LOAD : PT_NOTE, 4);
		put(p + phoff + (g->is32 ? 4 : 8), note, g->is32 ? 4 : 8);
		put(p + phoff + (g->is32 ? 16 : 32), g->no_note ? 0 : 36, g->is32 ? 4 : 8);
		put(p + phoff + (g->is32 ? 28 : 48), 4, g->is32 ? 4 : 8);
	}
	p += shoff;
	put_shdr(g, p + sh, g->no_note ? SHT_PROGBITS : SHT_NOTE, SHF_ALLOC, 0, note, 36, 0, 0);
	put_shdr(g, p + 2 * sh, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT_ADDR, text,
		 TEXT_SIZE, 0, 0);
	put_shdr(g, p + 3 * sh, g->no_symtab ? SHT_PROGBITS : SHT_SYMTAB, 0, 0,
		 g->bad_off ? g->bad_off : sym, (n + 1) * se, 4, se);
	put_shdr(g, p + 4 * sh, SHT_STRTAB, 0, 0, str, strlen_total, 0, 0);
	put_shdr(g, p + 5 * sh, SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 0x402000, text, 0x100, 0, 0);
}

/* ---- feeding ---- */

/* Feeds @len bytes at @p in chunks of @chunk (0: one feed) and finishes. */
static int stream(const uint8_t *p, size_t len, size_t chunk, const struct elf_stream_opts *o,
		  struct symindex_build **out, int *feed_err)
{
	struct elf_stream *s;
	size_t off = 0, n;
	int err = 0;

	assert_int_equal(elf_stream__new(o, &s), 0);
	while (!err && off < len) {
		n = chunk && chunk < len - off ? chunk : len - off;
		err = elf_stream__feed(s, p + off, n);
		off += n;
	}
	*feed_err = err;
	if (!err)
		err = elf_stream__finish(s, out);
	/* sticky */
	if (err) {
		assert_int_equal(elf_stream__feed(s, p, 1), err);
		assert_int_equal(elf_stream__finish(s, out), err);
		assert_true(strlen(elf_stream__reason(s)) > 10);
	}
	elf_stream__free(s);
	return err;
}

static struct symindex *decode_build(struct symindex_build *b)
{
	struct symindex *ix;
	size_t len;
	void *data;

	assert_int_equal(symindex__encode(b, NULL, &data, &len), 0);
	assert_int_equal(symindex__decode(data, len, &ix), 0);
	free(data);
	return ix;
}

static void test_generated(void **state UNUSED)
{
	static const struct {
		struct gen g;
		struct elf_stream_opts o;
		size_t cut; /* feed only this many bytes (0: all) */
		int ret, feed_ret;
	} cases[] = {
		{ { 0 }, { 0 }, 0, 0, 0 },
		{ { .is32 = true }, { 0 }, 0, 0, 0 },
		{ { .shdrs_first = true }, { 0 }, 0, 0, 0 },
		{ { .no_phdrs = true }, { 0 }, 0, 0, 0 },		/* note from SHT_NOTE */
		/* Go's layout: section headers first; the symbols far past the ring */
		{ { .shdrs_first = true, .gap = 200000 }, { .max_tail = 4096 }, 0, 0, 0 },
		/* the usual layout: in reach of the default ring, not of a small one */
		{ { .gap = 100000, .tail_gap = 20000 }, { 0 }, 0, 0, 0 },
		{ { .gap = 100000, .tail_gap = 20000 }, { .max_tail = 4096 }, 0, -E2BIG, 0 },
		/* Error rows. */
		{ { .no_note = true }, { 0 }, 0, -ENODATA, 0 },
		{ { .no_symtab = true }, { 0 }, 0, -ELF_STREAM_ESTRIPPED, 0 },
		{ { .only_objects = true }, { 0 }, 0, -ELF_STREAM_ESTRIPPED, 0 },
		{ { .bad_off = 0x7fffff00 }, { 0 }, 0, -ENOEXEC, 0 },
		{ { .bad_off = ~0ull - 8 }, { 0 }, 0, -ENOEXEC, 0 },
		{ { .is32 = true, .bad_off = 0xfffffff0 }, { 0 }, 0, -ENOEXEC, 0 },
		{ { 0 }, { .max_bytes = 1000 }, 0, -EFBIG, -EFBIG },
		{ { 0 }, { .max_section = 64 }, 0, -E2BIG, 0 },
		{ { 0 }, { .max_functions = 2 }, 0, -E2BIG, 0 },
		{ { 0 }, { 0 }, 600, -ENOEXEC, 0 },			/* cut before the symbols */
		{ { 0 }, { 0 }, 40, -ENOEXEC, 0 },			/* cut in the ELF header */
		{ { .shdrs_first = true }, { 0 }, 200, -ENOEXEC, 0 },	/* cut in the headers */
	};
	static const size_t chunks[] = { 0, 1, 7, 4096 };
	struct symindex_build *b;
	struct symindex *ix;
	struct img m;
	size_t i, c, len;
	int feed_err;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		gen_elf(&cases[i].g, &m);
		len = cases[i].cut ? cases[i].cut : m.len;
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			print_message("case %zu chunk %zu\n", i, chunks[c]);
			b = NULL;
			assert_int_equal(stream(m.p, len, chunks[c], &cases[i].o, &b, &feed_err),
					 cases[i].ret);
			assert_int_equal(feed_err, cases[i].feed_ret);
			if (cases[i].ret) {
				assert_null(b);
				continue;
			}
			assert_int_equal(symindex_build__count(b), 5);
			ix = decode_build(b);
			assert_string_equal(symindex__build_id(ix), symindex_build__build_id(b));
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR), "alpha");
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0xf), "alpha");
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0x10), "beta");
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0x1f), "beta");
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0x3f), "gamma");
			assert_null(symindex__lookup(ix, TEXT_ADDR + 0x40));
			assert_null(symindex__lookup(ix, TEXT_ADDR + 0x50));	/* abs */
			assert_null(symindex__lookup(ix, TEXT_ADDR + 0x60));	/* no name */
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0x87), "ifunc");
			assert_string_equal(symindex__lookup(ix, TEXT_ADDR + 0xff), "last");
			assert_null(symindex__lookup(ix, TEXT_ADDR + 0x100));
			assert_null(symindex__lookup(ix, 0x402000));		/* data_fn */
			symindex__free(ix);
			symindex_build__free(b);
		}
		free(m.p);
	}
}

static void test_not_elf(void **state UNUSED)
{
	static const struct {
		const char *data;
		size_t len;
		int feed_ret, ret;
	} cases[] = {
		{ "hello, world\n", 13, -ENOEXEC, -ENOEXEC },
		{ "app.debug\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32, -ENOEXEC, -ENOEXEC },
		{ "", 0, 0, -ENOEXEC },
		{ "\x7f" "ELF\x02\x01\x01\0\0\0", 10, 0, -ENOEXEC },
		{ "\x7f" "ELF", 4, 0, -ENOEXEC },
		{ "\x7f" "ELG", 4, -ENOEXEC, -ENOEXEC },
		{ "\x7f" "ELF\x03", 5, -ENOEXEC, -ENOEXEC },
		{ "\x7f" "ELF\x02\x02\x01", 7, -ELF_STREAM_EBIGENDIAN, -ELF_STREAM_EBIGENDIAN },
		{ "\x7f" "ELF\x02\x03\x01", 7, -ENOEXEC, -ENOEXEC },
		{ "\x7f", 1, 0, -ENOEXEC },
	};
	struct symindex_build *b = NULL;
	size_t i;
	int feed_err;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(stream((const uint8_t *)cases[i].data, cases[i].len, 1, NULL, &b,
					&feed_err),
				 cases[i].ret);
		assert_int_equal(feed_err, cases[i].feed_ret);
		assert_null(b);
	}
}

/* A tar archive's header: the first bytes already say it is no ELF. */
static void test_tar(void **state UNUSED)
{
	uint8_t tar[512] = "app.debug";
	struct elf_stream *s;

	memcpy(tar + 257, "ustar", 6);
	assert_int_equal(elf_stream__new(NULL, &s), 0);
	assert_int_equal(elf_stream__feed(s, tar, sizeof(tar)), -ENOEXEC);
	assert_string_equal(elf_stream__reason(s), "this is not an ELF binary or debug file");
	elf_stream__free(s);
}

static void test_refusal(void **state UNUSED)
{
	static const struct {
		int err;
		const char *text;
	} cases[] = {
		{ -ENOEXEC, "this is not an ELF binary or debug file" },
		{ -ENODATA, "the file has no build id, so SlideOps cannot tell which build it names" },
		{ -ELF_STREAM_ESTRIPPED, "the file is stripped too" },
		{ -EFBIG, "the file is larger than 1 GB" },
		{ 0, "" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_string_equal(elf_stream_refusal(cases[i].err), cases[i].text);
	}
	assert_true(strlen(elf_stream_refusal(-E2BIG)) > 20);
	assert_true(strlen(elf_stream_refusal(-ENOMEM)) > 20);
	assert_true(strlen(elf_stream_refusal(-EIO)) > 10);
}

/* The limits as configured are named in the reason. */
static void test_reason(void **state UNUSED)
{
	static const struct {
		struct gen g;
		struct elf_stream_opts o;
		const char *reason;
	} cases[] = {
		{ { 0 }, { .max_bytes = 1000 }, "the file is larger than 1000 bytes" },
		{ { 0 }, { .max_section = 64 }, "the section header table is larger than 64 bytes" },
		{ { 0 }, { .max_functions = 2 }, "the file names more than 2 functions" },
		{ { .gap = 100000, .tail_gap = 20000 }, { .max_tail = 4096 },
		  "the symbol table passed before the section headers that locate it, further than "
		  "4 KiB from the end of the file" },
	};
	struct symindex_build *b = NULL;
	struct elf_stream *s;
	struct img m;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		gen_elf(&cases[i].g, &m);
		assert_int_equal(elf_stream__new(&cases[i].o, &s), 0);
		err = elf_stream__feed(s, m.p, m.len);
		if (!err)
			err = elf_stream__finish(s, &b);
		assert_true(err < 0);
		assert_string_equal(elf_stream__reason(s), cases[i].reason);
		elf_stream__free(s);
		free(m.p);
	}
}

/* ---- this test binary ---- */

int main(void);

static __attribute__((noinline, used)) int es_fixture_static(int x)
{
	return x * 7 + 1;
}

static int first_bias(struct dl_phdr_info *info, size_t size UNUSED, void *ctx)
{
	*(uintptr_t *)ctx = info->dlpi_addr;
	return 1;
}

static void test_self(void **state UNUSED)
{
	static const size_t chunks[] = { 0, 1, 7, 65536 };
	uintptr_t bias = 0;
	uint64_t vaddr;
	struct symindex_build *b;
	struct elf_symtab *st;
	struct elf_stream *s;
	struct symindex *ix;
	void *enc, *first = NULL;
	size_t len, first_len = 0, i, flen;
	char *file;
	int fd, feed_err;

	assert_int_equal(read_file_bounded(AT_FDCWD, "/proc/self/exe", 256u << 20, &file, &flen), 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
	close(fd);
	dl_iterate_phdr(first_bias, &bias);
	vaddr = (uintptr_t)es_fixture_static - bias;
	assert_string_equal(elf_symtab__lookup(st, vaddr, NULL), "es_fixture_static");
	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		print_message("chunk %zu\n", chunks[i]);
		assert_int_equal(stream((uint8_t *)file, flen, chunks[i], NULL, &b, &feed_err), 0);
		assert_string_equal(symindex_build__build_id(b), elf_symtab__build_id(st));
		assert_true(symindex_build__count(b) > 50);
		assert_int_equal(symindex__encode(b, NULL, &enc, &len), 0);
		ix = decode_build(b);
		assert_string_equal(symindex__lookup(ix, vaddr), "es_fixture_static");
		assert_string_equal(symindex__lookup(ix, (uintptr_t)test_self - bias), "test_self");
		assert_string_equal(symindex__lookup(ix, (uintptr_t)main - bias), "main");
		symindex__free(ix);
		symindex_build__free(b);
		if (!first) {
			first = enc;
			first_len = len;
			continue;
		}
		/* the same functions, whatever the chunks */
		assert_int_equal(len, first_len);
		assert_memory_equal(enc, first, len);
		free(enc);
	}
	free(first);
	/* its symbol table (26 KiB with gcc -O2 -g) over a smaller limit: refused, saying so */
	assert_int_equal(elf_stream__new(&(struct elf_stream_opts){ .max_section = 16u << 10 }, &s),
			 0);
	assert_int_equal(elf_stream__feed(s, file, flen), 0);
	assert_int_equal(elf_stream__finish(s, &b), -E2BIG);
	assert_string_equal(elf_stream__reason(s), "the symbol table is larger than 16 KiB");
	elf_stream__free(s);
	free(file);
	elf_symtab__free(st);
}

/* Every offset at which the file can be cut: a refusal, never a crash or a half result. */
static void test_cuts(void **state UNUSED)
{
	struct gen g = { .shdrs_first = false };
	struct symindex_build *b;
	struct img m;
	size_t cut;
	int feed_err, err;

	gen_elf(&g, &m);
	for (cut = 0; cut < m.len; cut++) {
		b = NULL;
		err = stream(m.p, cut, 3, NULL, &b, &feed_err);
		assert_true(err < 0);
		assert_null(b);
	}
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated), cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_tar),	  cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_reason),	  cmocka_unit_test(test_self),
		cmocka_unit_test(test_cuts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
