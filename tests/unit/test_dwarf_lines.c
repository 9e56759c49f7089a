// SPDX-License-Identifier: Apache-2.0
/*
 * dwarf_lines on this very test binary (built -O2 -g): a noinline function with an
 * always_inline helper, whose code holds the global label dl_mark; then the refusals on
 * committed fixtures and made-up images.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>
#include <libelf.h>

#include "base/array.h"
#include "base/fileio.h"
#include "symbols/dwarf_lines.h"
#include "symbols/elf_symtab.h"

#define UNUSED __attribute__((unused))

extern const char dl_mark[];
volatile int dl_sink;

enum { DL_HELPER_LINE = __LINE__ + 4 };
static inline __attribute__((always_inline)) int dl_helper(int x)
{
	x += dl_sink;
	__asm__ volatile(".globl dl_mark\ndl_mark:\n\tnop" ::: "memory");
	return x * 3;
}

enum { DL_CALL_LINE = __LINE__ + 4 };
__attribute__((noinline, used)) int dl_hot(int x)
{
	x ^= dl_sink;
	return dl_helper(x) + 1;
}

/* The ELF vaddr of our own address @addr, through /proc/self/maps and the segments. */
static uint64_t self_vaddr(const struct elf_symtab *st, uintptr_t addr)
{
	unsigned long start, end, off;
	char line[512];
	uint64_t vaddr = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 && addr >= start &&
		    addr < end)
			assert_int_equal(elf_symtab__file_to_vaddr(st, addr - start + off, &vaddr), 0);
	fclose(f);
	assert_true(vaddr != 0);
	return vaddr;
}

static void test_self(void **state UNUSED)
{
	struct dwarf_frame fr[DWARF_LINES_MAX_DEPTH];
	struct dwarf_lines *dl;
	struct elf_symtab *st;
	uint64_t pc;
	int fd, i;

	assert_int_equal(dl_hot(1), 4);
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dwarf_lines_probe(fd), 1);
	assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
	assert_int_equal(dwarf_lines__from_fd(fd, NULL, &dl), 0);
	close(fd);
	assert_true(dwarf_lines__ranges(dl) > 0);
	pc = self_vaddr(st, (uintptr_t)dl_mark);
	/* Twice: computed, then from the cache. */
	for (i = 0; i < 2; i++) {
		print_message("lookup %d\n", i);
		memset(fr, 0, sizeof(fr));
		assert_int_equal(dwarf_lines__lookup(dl, pc, fr, ARRAY_SIZE(fr)), 2);
		assert_string_equal(fr[0].name, "dl_helper");
		assert_true(fr[0].inlined);
		assert_int_equal(fr[0].line, DL_HELPER_LINE);
		assert_non_null(strstr(fr[0].file, "test_dwarf_lines.c"));
		assert_string_equal(fr[1].name, "dl_hot");
		assert_false(fr[1].inlined);
		assert_int_equal(fr[1].line, DL_CALL_LINE);
		assert_non_null(strstr(fr[1].file, "test_dwarf_lines.c"));
	}
	/* One frame: the function, at the line of the call to its inlined helper. */
	assert_int_equal(dwarf_lines__lookup(dl, pc, fr, 1), 1);
	assert_string_equal(fr[0].name, "dl_hot");
	assert_int_equal(fr[0].line, DL_CALL_LINE);
	assert_int_equal(dwarf_lines__lookup(dl, pc, fr, 0), -EINVAL);
	assert_int_equal(dwarf_lines__lookup(dl, 0, fr, 4), -ENOENT);
	assert_int_equal(dwarf_lines__lookup(dl, UINT64_MAX, fr, 4), -ENOENT);
	/* A function without inlining at pc: one frame. */
	pc = self_vaddr(st, (uintptr_t)test_self);
	assert_int_equal(dwarf_lines__lookup(dl, pc, fr, 4), 1);
	assert_string_equal(fr[0].name, "test_self");
	assert_true(dwarf_lines__mem(dl) > 0);
	dwarf_lines__free(dl);
	dwarf_lines__free(NULL);
	elf_symtab__free(st);
}

/* A file with no DWARF, not an ELF, over the byte cap, and made-up images. */
static void test_refusals(void **state UNUSED)
{
	static const struct {
		const char *path;
		uint64_t max_bytes;
		int probe, ret;
	} cases[] = {
		{ "tests/fixtures/elf/exec", 0, 0, -ENOENT },	     /* built -g0 */
		{ "tests/fixtures/elf/lib-stripped.so", 0, 0, -ENOENT },
		{ "tests/fixtures/elf/fixture.c", 0, -EINVAL, -EINVAL }, /* not an ELF */
		{ "/proc/self/exe", 4096, 1, -E2BIG },		     /* over max_bytes */
	};
	static const char junk[] = "\177ELF\2\1\1\0garbage that is no ELF header at all......"
				   "................................................";
	struct dwarf_lines *dl = NULL;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dwarf_lines_opts o = { .max_bytes = cases[i].max_bytes };

		print_message("case %zu\n", i);
		fd = open(cases[i].path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(dwarf_lines_probe(fd), cases[i].probe);
		assert_int_equal(dwarf_lines__from_fd(fd, &o, &dl), cases[i].ret);
		assert_null(dl);
		close(fd);
	}
	assert_int_equal(dwarf_lines__from_memory(junk, sizeof(junk), NULL, &dl), -EINVAL);
	assert_int_equal(dwarf_lines__from_memory(junk, 4, NULL, &dl), -EINVAL);
	assert_int_equal(dwarf_lines__from_fd(-1, NULL, &dl), -EINVAL);
	assert_null(dl);
}

/* The file offset of the last byte of section @name in the ELF image @buf, or 0. */
static size_t section_end(char *buf, size_t len, const char *name)
{
	Elf *e = elf_memory(buf, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx, end = 0;
	GElf_Shdr sh;
	const char *n;

	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		assert_non_null(gelf_getshdr(scn, &sh));
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name) && sh.sh_size && !(sh.sh_flags & SHF_COMPRESSED))
			end = sh.sh_offset + sh.sh_size - 1;
	}
	elf_end(e);
	return end;
}

/* A string section without its final NUL would let libdw read past it: refused. */
static void test_unterminated_strings(void **state UNUSED)
{
	static const char *const sections[] = { ".debug_str", ".debug_line_str" };
	struct dwarf_lines *dl = NULL;
	size_t i, len, end;
	char *buf;

	elf_version(EV_CURRENT);
	for (i = 0; i < ARRAY_SIZE(sections); i++) {
		print_message("case %zu: %s\n", i, sections[i]);
		assert_int_equal(read_file_bounded(AT_FDCWD, "/proc/self/exe", 64u << 20, &buf, &len), 0);
		assert_int_equal(dwarf_lines__from_memory(buf, len, NULL, &dl), 0);
		dwarf_lines__free(dl);
		dl = NULL;
		end = section_end(buf, len, sections[i]);
		assert_true(end > 0 && end < len);
		assert_int_equal(buf[end], '\0');
		buf[end] = 'x';
		assert_int_equal(dwarf_lines__from_memory(buf, len, NULL, &dl), -EINVAL);
		assert_null(dl);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_unterminated_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
