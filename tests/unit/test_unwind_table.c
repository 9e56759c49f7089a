// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/unwind_table.h"

#include "base/array.h"
#include "tests/unit/hostile_mem.h"
#define UNUSED __attribute__((unused))
#define FIXTURES "tests/fixtures/unwind/"

static int open_fixture(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int build(const char *name, const struct unwind_table_opts *opts, struct unwind_table **t)
{
	int fd = open_fixture(name), err;

	assert_true(fd >= 0);
	err = unwind_table__from_fd(fd, opts, t);
	close(fd);
	return err;
}

/* Rows at known pcs; the addresses come from layout.txt (make.sh). */
static void test_rows(void **state UNUSED)
{
	static const struct {
		const char *file;
		uint64_t pc;
		unsigned cfa_type;
		int cfa_offset;
		unsigned rbp_type;
		int rbp_offset;
	} cases[] = {
		/* .plt: push GOT[1] (rsp+16), jmp *GOT[2] (rsp+24), then the entries. */
		{ "nofp.so", 0x1000, UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1006, UNWIND_CFA_RSP, 24, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1010, UNWIND_CFA_PLT, 11, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x102f, UNWIND_CFA_PLT, 11, UNWIND_RBP_SAME, 0 },
		/* uw_asm has no CFI: the gap is a frame-pointer row. */
		{ "nofp.so", 0x1030, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1040, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },	/* uw_leaf */
		/* uw_frame: sub $0x28, %rsp at 0x1050 gives rsp + 0x30 in the body. */
		{ "nofp.so", 0x1050, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1054, UNWIND_CFA_RSP, 0x30, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1060, UNWIND_CFA_RSP, 0x30, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1074, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1078, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0 },	/* padding */
		/* uw_pushrbp: r15 r14 r13 r12 rbp rbx pushed; rbp lands at CFA - 48. */
		{ "nofp.so", 0x1088, UNWIND_CFA_RSP, 40, UNWIND_RBP_SAME, 0 },
		{ "nofp.so", 0x1089, UNWIND_CFA_RSP, 48, UNWIND_RBP_OFFSET, -48 },
		{ "nofp.so", 0x10a0, UNWIND_CFA_RSP, 80, UNWIND_RBP_OFFSET, -48 },
		{ "nofp.so", 0x1103, UNWIND_CFA_RSP, 8, UNWIND_RBP_OFFSET, -48 },
		{ "nofp.so", 0x1104, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0 },	/* past the end */
		{ "nofp.so", 0x7fffffff, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0 },
		/* Frame pointers: push %rbp gives rsp + 16, then mov %rsp, %rbp gives rbp + 16. */
		{ "fp.so", 0x1050, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },
		{ "fp.so", 0x1051, UNWIND_CFA_RSP, 16, UNWIND_RBP_OFFSET, -16 },
		{ "fp.so", 0x1054, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16 },
		{ "fp.so", 0x1071, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16 },
		{ "fp.so", 0x1072, UNWIND_CFA_RSP, 8, UNWIND_RBP_OFFSET, -16 },
		{ "fp.so", 0x1090, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16 },
		{ "fp.so", 0x1010, UNWIND_CFA_PLT, 11, UNWIND_RBP_SAME, 0 },
		/* CFI in .debug_frame only (static ET_EXEC, addresses from 0x401000). */
		{ "nofp-debugframe", 0x401000, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0 },
		{ "nofp-debugframe", 0x401010, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },
		{ "nofp-debugframe", 0x401024, UNWIND_CFA_RSP, 0x30, UNWIND_RBP_SAME, 0 },
		{ "nofp-debugframe", 0x401044, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0 },
	};
	const struct unwind_row *r;
	struct unwind_table *t;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(build(cases[i].file, NULL, &t), 0);
		r = unwind_table__find(t, cases[i].pc);
		if (cases[i].pc < 0x1000 ||
		    (cases[i].pc == 0x401000 && !strcmp(cases[i].file, "nofp-debugframe"))) {
			/* Below the first row: no CFI there at all. */
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_string_equal(unwind_cfa_type_str(r->cfa_type),
					    unwind_cfa_type_str(cases[i].cfa_type));
			assert_int_equal(r->cfa_offset, cases[i].cfa_offset);
			assert_int_equal(r->rbp_type, cases[i].rbp_type);
			assert_int_equal(r->rbp_offset, cases[i].rbp_offset);
		}
		unwind_table__free(t);
	}
}

static void test_sources(void **state UNUSED)
{
	static const struct {
		const char *file;
		unsigned source;
		size_t fdes;
		bool empty;
	} cases[] = {
		{ "nofp.so", UNWIND_SRC_EH_FRAME, 4, false },
		{ "fp.so", UNWIND_SRC_EH_FRAME, 4, false },
		{ "nofp-debugframe", UNWIND_SRC_DEBUG_FRAME, 4, false },
		{ "nocfi", UNWIND_SRC_NONE, 0, true },
	};
	struct unwind_table_stats st;
	const struct unwind_row *rows;
	struct unwind_table *t;
	size_t i, j, n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(build(cases[i].file, NULL, &t), 0);
		unwind_table__stats(t, &st);
		assert_int_equal(st.source, cases[i].source);
		assert_int_equal(st.fdes, cases[i].fdes);
		assert_int_equal(st.unsupported, 0);
		rows = unwind_table__rows(t, &n);
		assert_int_equal(n == 0, cases[i].empty);
		assert_true(st.rows_raw >= n);
		if (n) {
			assert_null(unwind_table__find(t, rows[0].pc - 1));
			/* The table ends with a no-CFI row. */
			assert_int_equal(rows[n - 1].cfa_type, UNWIND_CFA_NONE);
		}
		for (j = 0; j < n; j++) {
			assert_ptr_equal(unwind_table__find(t, rows[j].pc), &rows[j]);
			if (!j)
				continue;
			/* Sorted, and merged: no two neighbours unwind alike. */
			assert_true(rows[j - 1].pc < rows[j].pc);
			assert_false(rows[j - 1].cfa_type == rows[j].cfa_type &&
				     rows[j - 1].cfa_offset == rows[j].cfa_offset &&
				     rows[j - 1].rbp_type == rows[j].rbp_type &&
				     rows[j - 1].rbp_offset == rows[j].rbp_offset);
			assert_ptr_equal(unwind_table__find(t, rows[j].pc - 1), &rows[j - 1]);
		}
		unwind_table__free(t);
	}
}

static void test_limits(void **state UNUSED)
{
	static const struct {
		const char *file;
		size_t max_rows;
		uint64_t max_file;
		int ret;
	} cases[] = {
		{ "nofp.so", 26, 0, 0 },
		{ "nofp.so", 25, 0, -E2BIG },
		{ "nofp.so", 0, 1000, -EFBIG },
		{ "fixture.c", 0, 0, -EINVAL },
		{ "make.sh", 0, 0, -EINVAL },
	};
	struct unwind_table *t;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct unwind_table_opts o = { cases[i].max_rows, cases[i].max_file };

		print_message("case %zu\n", i);
		t = NULL;
		assert_int_equal(build(cases[i].file, &o, &t), cases[i].ret);
		if (cases[i].ret)
			assert_null(t);
		unwind_table__free(t);
	}
	assert_int_equal(unwind_table__from_fd(-1, NULL, &t), -EINVAL);
	fd = open(FIXTURES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unwind_table__from_fd(fd, NULL, &t), -EINVAL);
	close(fd);
	unwind_table__free(NULL);
}

struct blob {
	uint8_t *buf;
	size_t len;
	size_t eh_off, eh_size;	/* file offset and size of .eh_frame */
};

static void load_blob(const char *name, struct blob *b)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	struct stat sb;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	fd = open_fixture(name);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	b->len = (size_t)sb.st_size;
	b->buf = malloc(b->len);
	assert_non_null(b->buf);
	assert_int_equal(pread(fd, b->buf, b->len, 0), (ssize_t)b->len);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	b->eh_off = 0;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		assert_non_null(gelf_getshdr(scn, &sh));
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, ".eh_frame")) {
			b->eh_off = sh.sh_offset;
			b->eh_size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(b->eh_off > 0 && b->eh_size > 32);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Corrupted copies of nofp.so, made at run time and read back through a memfd. */
static void test_malformed(void **state UNUSED)
{
	enum { TRUNC_EH, GARBAGE_EH, ONES_EH, BAD_CIE_PTR, HUGE_RANGE, WRAP_RANGE, BAD_FDE_ENC,
	       ZERO_EH, INTACT };
	static const struct {
		int kind;
		int ret;
	} cases[] = {
		{ TRUNC_EH, -EINVAL },	  /* file cut in the middle of .eh_frame */
		{ GARBAGE_EH, -EINVAL },  /* a CIE with a garbage augmentation and version */
		{ ONES_EH, -EINVAL },	  /* all 0xff: a 64-bit length running off the end */
		{ BAD_CIE_PTR, -EINVAL }, /* the first FDE points at no CIE */
		{ HUGE_RANGE, -ERANGE },  /* the first FDE reaches past 4 GiB */
		{ WRAP_RANGE, -EINVAL },  /* ... or wraps around (range -1) */
		{ BAD_FDE_ENC, -EINVAL }, /* the CIE's 'R' encoding is not one FDEs can use */
		{ ZERO_EH, 0 },		  /* a zero terminator first: an empty table */
		{ INTACT, 0 },
	};
	struct blob b = { 0 };
	struct unwind_table *t;
	uint8_t *copy, *eh, *fde;
	size_t i, len, cie_len;
	int fd;

	load_blob("nofp.so", &b);
	fd = memfd_create("unwind_test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		copy = malloc(b.len);
		assert_non_null(copy);
		memcpy(copy, b.buf, b.len);
		len = b.len;
		eh = copy + b.eh_off;
		cie_len = get32(eh) + 4;
		fde = eh + cie_len;
		switch (cases[i].kind) {
		case TRUNC_EH:
			len = b.eh_off + b.eh_size / 2;
			break;
		case GARBAGE_EH:
			memset(eh + 8, 0x5a, b.eh_size - 8);
			break;
		case ONES_EH:
			memset(eh, 0xff, b.eh_size);
			break;
		case BAD_CIE_PTR:
			put32(fde + 4, get32(fde + 4) + 3);
			break;
		case HUGE_RANGE:
			eh[16] = 0x13; /* DW_EH_PE_pcrel | udata4: a range of up to 4 GiB */
			put32(fde + 12, 0xffffff00);
			break;
		case WRAP_RANGE:
			put32(fde + 12, 0xffffffff);
			break;
		case BAD_FDE_ENC:
			/* CIE: len, id, version, "zR\0", code align, data align, ra reg, aug len, enc */
			assert_memory_equal(eh + 9, "zR", 3);
			eh[16] = 0x50; /* DW_EH_PE_aligned */
			break;
		case ZERO_EH:
			memset(eh, 0, 4);
			break;
		}
		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(pwrite(fd, copy, len, 0), (ssize_t)len);
		t = NULL;
		assert_int_equal(unwind_table__from_fd(fd, NULL, &t), cases[i].ret);
		assert_true(cases[i].ret ? t == NULL : t != NULL);
		unwind_table__free(t);
		free(copy);
	}
	close(fd);
	free(b.buf);
}

/*
 * Opens the C library this very test runs with, the file /proc/self/maps names for it (no
 * list of distribution paths to go stale, so never a skip). Returns an fd or -1.
 */
static int open_own_libc(void)
{
	char line[PATH_MAX + 128], path[PATH_MAX];
	const char *base;
	int fd = -1;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) != 1 || path[0] != '/')
			continue;
		base = strrchr(path, '/') + 1;
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5))
			fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	fclose(f);
	return fd;
}

/* The C library this test runs with: its PLT and its signal trampoline (__restore_rt). */
static void test_libc(void **state UNUSED)
{
	size_t i, n, plt = 0, sig = 0, rsp = 0;
	struct unwind_table_stats st;
	const struct unwind_row *rows;
	struct unwind_table *t;
	int fd;

	fd = open_own_libc();
	assert_true(fd >= 0);
	assert_int_equal(unwind_table__from_fd(fd, NULL, &t), 0);
	close(fd);
	unwind_table__stats(t, &st);
	rows = unwind_table__rows(t, &n);
	for (i = 0; i < n; i++) {
		plt += rows[i].cfa_type == UNWIND_CFA_PLT;
		rsp += rows[i].cfa_type == UNWIND_CFA_RSP;
		if (rows[i].cfa_type == UNWIND_CFA_SIGNAL) {
			sig++;
			/* glibc: CFA = *(rsp + 160), uc_mcontext at rsp + 40. */
			assert_int_equal(rows[i].cfa_offset, 40);
		}
	}
	assert_int_equal(st.source, UNWIND_SRC_EH_FRAME);
	assert_true(n > 1000);
	assert_true(rsp > n / 2);
	assert_true(plt >= 1);
	assert_int_equal(sig, 1);
	/* A few hand-written routines (clone, setcontext) use rules we do not follow. */
	assert_true(st.unsupported < 64);
	unwind_table__free(t);
}

/*
 * Sparse copies of real fixtures whose section headers claim gigabytes (holes on disk): the
 * claims are refused (-E2BIG) before libelf or libdw allocate for them, under RLIMIT_AS, and
 * the peak RSS stays small. A claimed section table goes the way elf_file ignores it.
 */
static void test_sparse_claims(void **state UNUSED)
{
	static const uint64_t keep = ~0ull, big = HM_SPARSE_SIZE - 0x4000;
	static const struct {
		const char *file;
		struct hm_patch patch;
		uint64_t shoff;	/* non-zero: e_shoff there, e_shnum 0, sh0 claiming 1 Mi sections */
		int ret;
	} cases[] = {
		{ "nofp.so", { ".eh_frame", keep, big }, 0, -E2BIG },
		{ "nofp.so", { ".eh_frame", 0x4000, 60u << 20 }, 0, -E2BIG },
		{ "nofp.so", { ".eh_frame", keep, keep }, 0, 0 },
		{ "nofp.so", { ".shstrtab", 0x4000, big }, 0, -E2BIG },
		{ "nofp-debugframe", { ".debug_frame", 0x4000, big }, 0, -E2BIG },
		{ "nofp-debugframe", { ".debug_frame", 0x4000, 48u << 20 }, 0, -E2BIG },
		{ "nofp.so", { ".eh_frame", keep, keep }, 1u << 30, -EINVAL },
	};
	bool limited = hm_limit_as();
	char path[PATH_MAX];
	Elf64_Shdr sh0 = { .sh_size = 1u << 20 };
	struct unwind_table *t;
	uint64_t shoff;
	uint16_t zero = 0;
	long hwm0 = hm_vmhwm_kb();
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), FIXTURES "%s", cases[i].file);
		fd = hm_sparse_copy(path, &cases[i].patch, 1, NULL, 0, 0, HM_SPARSE_SIZE);
		assert_true(fd >= 0);
		shoff = cases[i].shoff;
		if (shoff) {
			assert_int_equal(pwrite(fd, &sh0, sizeof(sh0), (off_t)shoff), sizeof(sh0));
			assert_int_equal(pwrite(fd, &shoff, 8, offsetof(Elf64_Ehdr, e_shoff)), 8);
			assert_int_equal(pwrite(fd, &zero, 2, offsetof(Elf64_Ehdr, e_shnum)), 2);
		}
		t = NULL;
		assert_int_equal(unwind_table__from_fd(fd, NULL, &t), cases[i].ret);
		unwind_table__free(t);
		close(fd);
	}
	hm_restore_as(limited);
	/* Nothing claimed was allocated: a few MiB at most for libelf's own state. */
	assert_true(hm_vmhwm_kb() - hwm0 < 16 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_sparse_claims),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
