// SPDX-License-Identifier: Apache-2.0
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "symbols/elf_file.h"
#include "symbols/elf_symtab.h"

#include "base/array.h"
#include "tests/unit/hostile_mem.h"
#define UNUSED __attribute__((unused))
#define FIXTURES "tests/fixtures/elf/"
#define EXEC_BID "309f114d8c8dd873e055c070a510077dea250ebb"
#define LIB_BID "eb0c48940ed579cc2c812ac66178ed23b4bba18e"

extern char *__cxa_demangle(const char *, char *, size_t *, int *) __attribute__((weak));

static int open_fixture(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void test_load(void **state UNUSED)
{
	static const struct {
		const char *file;
		size_t max_syms;
		uint64_t max_file;
		int ret;
		const char *bid, *go_bid;
		bool stripped;
		size_t count;
		unsigned type;
	} cases[] = {
		{ "exec", 0, 0, 0, EXEC_BID, NULL, false, 5, ET_EXEC },
		{ "exec-nobid", 0, 0, 0, NULL, NULL, false, 5, ET_EXEC },
		{ "lib.so", 0, 0, 0, LIB_BID, NULL, false, 4, ET_DYN },
		{ "lib-stripped.so", 0, 0, 0, LIB_BID, NULL, true, 3, ET_DYN },
		{ "exec-sstrip", 0, 0, 0, EXEC_BID, NULL, true, 0, ET_EXEC },
		{ "exec-go", 0, 0, 0, EXEC_BID, "abcDEF/ghi-123", false, 5, ET_EXEC },
		/* Error rows. */
		{ "exec", 4, 0, -E2BIG },
		{ "exec", 0, 1000, -EFBIG },
		{ "fixture.c", 0, 0, -EINVAL },
		{ "make.sh", 0, 0, -EINVAL },
	};
	struct elf_symtab *st;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct elf_symtab_opts o = { .max_syms = cases[i].max_syms,
					     .max_file_size = cases[i].max_file };

		print_message("case %zu\n", i);
		fd = open_fixture(cases[i].file);
		assert_true(fd >= 0);
		st = NULL;
		assert_int_equal(elf_symtab__from_fd(fd, &o, &st), cases[i].ret);
		close(fd);
		if (cases[i].ret) {
			assert_null(st);
			continue;
		}
		if (cases[i].bid)
			assert_string_equal(elf_symtab__build_id(st), cases[i].bid);
		else
			assert_null(elf_symtab__build_id(st));
		if (cases[i].go_bid)
			assert_string_equal(elf_symtab__go_build_id(st), cases[i].go_bid);
		else
			assert_null(elf_symtab__go_build_id(st));
		assert_int_equal(elf_symtab__stripped(st), cases[i].stripped);
		assert_int_equal(elf_symtab__count(st), cases[i].count);
		assert_int_equal(elf_symtab__type(st), cases[i].type);
		elf_symtab__free(st);
	}
}

static void test_bad_fds(void **state UNUSED)
{
	static const char *const paths[] = { "/dev/null", "tests/fixtures/elf", "/proc/self/status" };
	struct elf_ident id;
	struct elf_symtab *st = NULL;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		print_message("case %zu\n", i);
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), -EINVAL);
		assert_int_equal(elf_read_ident(fd, &id), -EINVAL);
		close(fd);
	}
	assert_int_equal(elf_symtab__from_fd(-1, NULL, &st), -EINVAL);
	assert_int_equal(elf_read_ident(-1, &id), -EINVAL);
	assert_null(st);
	elf_symtab__free(NULL);
}

static void test_ident(void **state UNUSED)
{
	static const struct {
		const char *file;
		const char *bid;
		bool has_symtab;
	} cases[] = {
		{ "exec", EXEC_BID, true },
		{ "exec-nobid", "", true },
		{ "lib-stripped.so", LIB_BID, false },
		{ "exec-sstrip", EXEC_BID, false },
	};
	struct elf_ident id;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = open_fixture(cases[i].file);
		assert_true(fd >= 0);
		assert_int_equal(elf_read_ident(fd, &id), 0);
		close(fd);
		assert_string_equal(id.build_id, cases[i].bid);
		assert_int_equal(id.has_symtab, cases[i].has_symtab);
	}
}

static void test_lookup(void **state UNUSED)
{
	const char *gamma = __cxa_demangle ? "fx::gamma(int)" : "_ZN2fx5gammaEi";
	const struct {
		const char *file;
		uint64_t vaddr;
		const char *name;	/* NULL: unnamed */
		uint64_t start;
	} cases[] = {
		{ "exec", 0x401000, "fx_alpha", 0x401000 },
		{ "exec", 0x401004, "fx_alpha", 0x401000 },
		{ "exec", 0x401005, "fx_local", 0x401005 },
		{ "exec", 0x40100b, "fx_beta", 0x40100b },
		{ "exec", 0x401021, "fx_beta", 0x40100b },
		{ "exec", 0x401022, gamma, 0x401022 },
		{ "exec", 0x401042, "_start", 0x40102b },
		{ "exec", 0x401043, NULL },		/* past the last function */
		{ "exec", 0x400fff, NULL },		/* before the first */
		{ "exec", 0, NULL },
		{ "exec", UINT64_MAX, NULL },
		{ "lib.so", 0x1035, "fx_local", 0x1035 },
		{ "lib.so", 0x106a, gamma, 0x105a },
		{ "lib-stripped.so", 0x1034, "fx_alpha", 0x1030 },
		{ "lib-stripped.so", 0x1035, NULL },	/* static fx_local: not in .dynsym */
		{ "lib-stripped.so", 0x103b, "fx_beta", 0x103b },
		{ "exec-sstrip", 0x401000, NULL },
	};
	struct elf_symtab *st;
	const char *name;
	uint64_t start;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = open_fixture(cases[i].file);
		assert_true(fd >= 0);
		assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
		close(fd);
		start = 0xdead;
		name = elf_symtab__lookup(st, cases[i].vaddr, &start);
		if (cases[i].name) {
			assert_non_null(name);
			assert_string_equal(name, cases[i].name);
			assert_true(start == cases[i].start);
			/* A second lookup hits the demangling cache: same pointer. */
			assert_ptr_equal(elf_symtab__lookup(st, cases[i].vaddr, NULL), name);
		} else {
			assert_null(name);
			assert_true(start == 0xdead);
		}
		elf_symtab__free(st);
	}
	assert_null(elf_symtab__lookup(NULL, 0x401000, NULL));
}

static void test_file_to_vaddr(void **state UNUSED)
{
	static const struct {
		const char *file;
		uint64_t off;
		int ret;
		uint64_t vaddr;
	} cases[] = {
		{ "exec", 0x1010, 0, 0x401010 },	/* text: p_vaddr - p_offset = 0x400000 */
		{ "exec", 0x100, 0, 0x400100 },
		{ "exec", 0x1042, 0, 0x401042 },
		{ "exec", 0x1800, 0, 0x401800 },	/* mapped page tail past p_filesz */
		{ "exec", 0x5000, -ENOENT },
		{ "exec", 0x2000, -ENOENT },		/* the page after the text */
		{ "lib.so", 0x1040, 0, 0x1040 },
		{ "lib.so", 0x2f00, 0, 0x2f00 },
		{ "lib.so", 0x2e00, 0, 0x2e00 },	/* page head of the RW segment */
		{ "lib.so", UINT64_MAX, -ENOENT },
	};
	struct elf_symtab *st;
	uint64_t vaddr;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = open_fixture(cases[i].file);
		assert_true(fd >= 0);
		assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
		close(fd);
		vaddr = 0xdead;
		assert_int_equal(elf_symtab__file_to_vaddr(st, cases[i].off, &vaddr), cases[i].ret);
		assert_true(vaddr == (cases[i].ret ? 0xdead : cases[i].vaddr));
		elf_symtab__free(st);
	}
}

/* Byte patches applied to a copy of "exec" in memory: malformed ELFs must fail, not crash. */
static void test_malformed(void **state UNUSED)
{
	static const struct {
		size_t len;		/* bytes of the image kept (0: all) */
		size_t at;		/* patch offset */
		size_t n;		/* patch length (0: none) */
		uint64_t val;		/* little-endian patch value */
		int ret;
	} cases[] = {
		{ 0, 0, 0, 0, 0 },			/* the intact image */
		{ 0, 0x28, 8, 0xffffff00, 0 },		/* e_shoff past the end: no sections */
		{ 0, 0x3c, 2, 0xffff, 0 },		/* e_shnum huge */
		{ 0, 0x3e, 2, 0xfff0, 0 },		/* e_shstrndx bogus */
		{ 0, 0x20, 8, 0xfffffff0, -EINVAL },	/* e_phoff past the end */
		{ 0, 0x38, 2, 0xfff0, -EINVAL },	/* e_phnum huge */
		{ 0, 0x38, 2, 0xffff, 0 },		/* PN_XNUM: count from section 0 */
		{ 0, 0x10, 2, ET_CORE, 0 },
		{ 100, 0, 0, 0, -EINVAL },		/* cut inside the program headers */
		{ 3, 0, 0, 0, -EINVAL },
		{ 0, 0, 4, 0x464c457e, -EINVAL },	/* bad magic */
		{ 0, 4, 1, 7, -EINVAL },		/* bad class */
	};
	char *img, *copy;
	struct elf_symtab *st;
	size_t i, len, j;
	int ret;

	assert_int_equal(read_file_bounded(AT_FDCWD, FIXTURES "exec", 1 << 20, &img, &len), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, img, len);
		for (j = 0; j < cases[i].n; j++)
			copy[cases[i].at + j] = (char)(cases[i].val >> (8 * j));
		st = NULL;
		ret = elf_symtab__from_memory(copy, cases[i].len ? cases[i].len : len, NULL, &st);
		assert_int_equal(ret, cases[i].ret);
		assert_true(!ret == !!st);
		elf_symtab__free(st);
		free(copy);
	}
	assert_int_equal(elf_symtab__from_memory(NULL, 100, NULL, &st), -EINVAL);
	assert_int_equal(elf_symtab__from_memory(img, len, &(struct elf_symtab_opts){
				 .max_file_size = 10 }, &st), -EFBIG);
	free(img);
}

static void test_self(void **state UNUSED)
{
	struct elf_symtab *st;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
	close(fd);
	assert_false(elf_symtab__stripped(st));
	assert_true(elf_symtab__count(st) > 10);
	elf_symtab__free(st);
}

/*
 * 20 levels of void (*)(T, T), T the level before: 213 bytes that demangle to 46 MB (c++filt),
 * the size of the name found in issue 12.
 */
static const char exploding_name[] =
	"_Z1fPFvvEPFvS0_S0_EPFvS2_S2_EPFvS4_S4_EPFvS6_S6_EPFvS8_S8_EPFvSA_SA_EPFvSC_SC_EPFvSE_SE_EPFvSG_SG_EP"
	"FvSI_SI_EPFvSK_SK_EPFvSM_SM_EPFvSO_SO_EPFvSQ_SQ_EPFvSS_SS_EPFvSU_SU_EPFvSW_SW_EPFvSY_SY_EPFvS10_S10_EPFvS12_S12_E";

/*
 * Hostile names: fx::gamma's symbol is pointed at an exploding mangled name, then at one over
 * the 1 KiB demangling limit; both are shown mangled, and demangling cost no memory.
 */
static void test_hostile_demangle(void **state UNUSED)
{
	const uint64_t strtab = 0x2000, strtab_len = 0x4c, gamma_sym = 0x1070 + 6 * 24;
	char name[4096], strtab_buf[0x4c + sizeof(name)];
	struct hm_patch patch = { ".strtab", strtab, 0 };
	bool limited = hm_limit_as();
	struct elf_symtab *st;
	const char *got;
	uint32_t st_name = (uint32_t)strtab_len;
	long hwm0 = hm_vmhwm_kb();
	size_t len, row;
	int fd;

	for (row = 0; row < 2; row++) {
		print_message("case %zu\n", row);
		if (!row) {
			len = strlen(exploding_name);
			memcpy(name, exploding_name, len + 1);
		} else {
			len = 2000;
			memset(name, 'a', len);
			memcpy(name, "_ZN2fx", 6);
			name[len] = '\0';
		}
		fd = open_fixture("exec");
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, strtab_buf, strtab_len, 0x1160), strtab_len);
		close(fd);
		memcpy(strtab_buf + strtab_len, name, len + 1);
		patch.size = strtab_len + len + 1;
		fd = hm_sparse_copy(FIXTURES "exec", &patch, 1, strtab_buf, patch.size, strtab,
				    strtab + 0x2000);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, &st_name, 4, (off_t)gamma_sym), 4);
		assert_int_equal(elf_symtab__from_fd(fd, NULL, &st), 0);
		close(fd);
		got = elf_symtab__lookup(st, 0x401022, NULL);
		assert_non_null(got);
		assert_string_equal(got, name);
		/* The ordinary names still demangle. */
		if (__cxa_demangle)
			assert_string_equal(elf_symtab__lookup(st, 0x40100b, NULL), "fx_beta");
		elf_symtab__free(st);
	}
	hm_restore_as(limited);
	assert_true(hm_vmhwm_kb() - hwm0 < 8 * 1024);
}

/* Sparse claims of symbol and string tables: skipped without reading or allocating them. */
static void test_sparse_claims(void **state UNUSED)
{
	static const uint64_t keep = ~0ull, big = HM_SPARSE_SIZE - 0x4000;
	/* What the note will say: the refused table, its claim, the limit or the bytes on disk. */
	static const struct {
		struct hm_patch patch;
		size_t count;
		enum elf_skip_kind kind;
		const char *what;
		uint64_t claimed;
	} cases[] = {
		{ { ".symtab", 0x4000, big }, 0, ELF_SKIP_SPARSE, ".symtab", big },
		{ { ".strtab", 0x4000, big }, 0, ELF_SKIP_OVER_LIMIT, ".strtab", big },
		{ { ".strtab", 0x4000, 200u << 20 }, 0, ELF_SKIP_SPARSE, ".strtab", 200u << 20 },
		{ { ".shstrtab", 0x4000, 3u << 20 }, 5, ELF_SKIP_NONE, "", 0 },
		{ { ".strtab", keep, keep }, 5, ELF_SKIP_NONE, "", 0 },
	};
	bool limited = hm_limit_as();
	struct elf_skip skip;
	struct elf_symtab *st;
	long hwm0 = hm_vmhwm_kb();
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = hm_sparse_copy(FIXTURES "exec", &cases[i].patch, 1, NULL, 0, 0,
				    HM_SPARSE_SIZE);
		assert_true(fd >= 0);
		memset(&skip, 0, sizeof(skip));
		assert_int_equal(elf_symtab__from_fd(fd, &(struct elf_symtab_opts){ .skip = &skip },
						     &st), 0);
		assert_int_equal(elf_symtab__count(st), cases[i].count);
		assert_int_equal(skip.kind, cases[i].kind);
		assert_string_equal(skip.what, cases[i].what);
		assert_int_equal(skip.claimed, cases[i].claimed);
		if (skip.kind == ELF_SKIP_SPARSE)
			assert_true(skip.limit > 0 && skip.limit < (1u << 20));
		if (skip.kind == ELF_SKIP_OVER_LIMIT)
			assert_int_equal(skip.limit, ELF_FILE_MAX_READ);
		elf_symtab__free(st);
		close(fd);
	}
	/* Over the file cap: -EFBIG, and the note says how large the file is. */
	fd = hm_sparse_copy(FIXTURES "exec", NULL, 0, NULL, 0, 0, 64u << 20);
	assert_true(fd >= 0);
	memset(&skip, 0, sizeof(skip));
	assert_int_equal(elf_symtab__from_fd(fd, &(struct elf_symtab_opts){
			.max_file_size = 32u << 20, .skip = &skip }, &st), -EFBIG);
	assert_int_equal(skip.kind, ELF_SKIP_FILE);
	assert_int_equal(skip.claimed, 64u << 20);
	assert_int_equal(skip.limit, 32u << 20);
	close(fd);
	/* More symbols than kept: -E2BIG, with the count. */
	fd = open(FIXTURES "exec", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(&skip, 0, sizeof(skip));
	assert_int_equal(elf_symtab__from_fd(fd, &(struct elf_symtab_opts){
			.max_syms = 2, .skip = &skip }, &st), -E2BIG);
	assert_int_equal(skip.kind, ELF_SKIP_COUNT);
	assert_string_equal(skip.what, ".symtab");
	assert_int_equal(skip.limit, 2);
	close(fd);
	hm_restore_as(limited);
	assert_true(hm_vmhwm_kb() - hwm0 < 8 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_bad_fds),
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_file_to_vaddr),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_hostile_demangle),
		cmocka_unit_test(test_sparse_claims),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
