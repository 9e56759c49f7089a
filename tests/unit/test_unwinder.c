// SPDX-License-Identifier: Apache-2.0
/*
 * symbols/unwinder: the reference walk (the BPF unwinder's logic in C) over fake stacks, the
 * notes' wording, and the table cache (sharing, reference counts, eviction, exited processes)
 * over a fake /proc and the fixtures of tests/fixtures/unwind/, through the ops seam.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "symbols/unwinder.h"

#include "base/array.h"
#define UNUSED __attribute__((unused))
#define FIXTURES "tests/fixtures/unwind/"

/* --- the reference walk ------------------------------------------------------------------ */

#define R_LEAF 0x1000	/* CFA = rsp + 8 */
#define R_PUSHED 0x1100	/* CFA = rsp + 16, rbp at CFA - 16 */
#define R_RBP 0x1200	/* CFA = rbp + 16, rbp at CFA - 16 */
#define R_NOCFI 0x1300	/* no CFI: frame pointer */
#define R_END 0x1400	/* outermost */
#define R_UNSUP 0x1500
#define R_PLT 0x1600
#define R_SIGNAL 0x1700
#define M_NOTABLE 0x600000
#define M_NOCFI 0x700000
#define STACK 0x7f0000000000ull
#define STACK_WORDS 512

static const struct unwind_row ref_rows[] = {
	{ .pc = R_LEAF, .cfa_type = UNWIND_CFA_RSP, .cfa_offset = 8 },
	{ .pc = R_PUSHED, .cfa_type = UNWIND_CFA_RSP, .cfa_offset = 16,
	  .rbp_type = UNWIND_RBP_OFFSET, .rbp_offset = -16 },
	{ .pc = R_RBP, .cfa_type = UNWIND_CFA_RBP, .cfa_offset = 16,
	  .rbp_type = UNWIND_RBP_OFFSET, .rbp_offset = -16 },
	{ .pc = R_NOCFI, .cfa_type = UNWIND_CFA_NONE },
	{ .pc = R_END, .cfa_type = UNWIND_CFA_END },
	{ .pc = R_UNSUP, .cfa_type = UNWIND_CFA_UNSUPPORTED },
	{ .pc = R_PLT, .cfa_type = UNWIND_CFA_PLT, .cfa_offset = 11 },
	{ .pc = R_SIGNAL, .cfa_type = UNWIND_CFA_SIGNAL, .cfa_offset = 40 },
	{ .pc = 0x1800, .cfa_type = UNWIND_CFA_NONE },
};

static void ref_proc(struct uw_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->nmaps = 3;
	p->maps[0] = (struct uw_mapping){ .start = 0x1000, .end = 0x2000, .bias = 0,
					  .first_row = 0, .nrows = ARRAY_SIZE(ref_rows) };
	p->maps[1] = (struct uw_mapping){ .start = M_NOTABLE, .end = M_NOTABLE + 0x1000,
					  .flags = UW_MAP_NO_TABLE };
	p->maps[2] = (struct uw_mapping){ .start = M_NOCFI, .end = M_NOCFI + 0x1000,
					  .flags = UW_MAP_NO_CFI };
}

struct word {
	unsigned idx;		/* word index from STACK */
	uint64_t val;
};

#define W(i) (STACK + 8 * (i))
#define MAXW 8

static const struct {
	const char *name;
	int no_proc, recursive;
	uint64_t ip, sp, bp;
	struct word mem[MAXW];
	int outcome, fp_used;
	size_t n;		/* frames expected */
	uint64_t ips[4];	/* the first frames expected */
} walks[] = {
	{ "leaf, pushed rbp, end", 0, 0, R_LEAF + 0x10, W(0), 7,
	  { { 0, R_PUSHED + 0x10 }, { 1, 0x5555 }, { 2, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 0, 3, { R_LEAF + 0x10, R_PUSHED + 0x10, R_END + 0x10 } },
	{ "rbp-based CFA", 0, 0, R_RBP + 0x10, W(0), W(4),
	  { { 4, 0 }, { 5, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 0, 2, { R_RBP + 0x10, R_END + 0x10 } },
	{ "no CFI row: frame pointer", 0, 0, R_NOCFI + 0x10, W(0), W(2),
	  { { 2, 0 }, { 3, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 1, 2, { R_NOCFI + 0x10, R_END + 0x10 } },
	{ "PLT entry before its push", 0, 0, R_PLT + 5, W(0), 0,
	  { { 0, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 0, 2, { R_PLT + 5, R_END + 0x10 } },
	{ "PLT entry after its push", 0, 0, R_PLT + 11, W(0), 0,
	  { { 0, 0x1234 }, { 1, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 0, 2, { R_PLT + 11, R_END + 0x10 } },
	/* sigcontext at rsp + 40 = word 5: rbp word 15, rsp word 20, rip word 21 */
	{ "signal frame: exact pc after it", 0, 0, R_SIGNAL + 4, W(0), 0,
	  { { 15, 0 }, { 20, W(30) }, { 21, R_LEAF }, { 30, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 0, 3, { R_SIGNAL + 4, R_LEAF, R_END + 0x10 } },
	{ "zero return address", 0, 0, R_LEAF + 0x10, W(0), 0, { { 0, 0 } },
	  UW_STAT_COMPLETE, 0, 1, { R_LEAF + 0x10 } },
	{ "no CFI file (Go): frame pointers by design", 0, 0, M_NOCFI + 0x10, W(0), W(2),
	  { { 2, 0 }, { 3, R_END + 0x10 } },
	  UW_STAT_COMPLETE, 1, 2, { M_NOCFI + 0x10, R_END + 0x10 } },
	/* errors */
	{ "unsupported rule", 0, 0, R_UNSUP + 0x10, W(0), 0, { { 0, 0 } },
	  UW_STAT_UNSUPPORTED, 0, 1, { R_UNSUP + 0x10 } },
	{ "return address outside the stack", 0, 0, R_LEAF + 0x10, W(STACK_WORDS), 0, { { 0, 0 } },
	  UW_STAT_READ_FAULT, 0, 1, { R_LEAF + 0x10 } },
	{ "rbp below rsp", 0, 0, R_RBP + 0x10, W(8), W(0), { { 0, 0 } },
	  UW_STAT_BAD_FRAME, 0, 1, { R_RBP + 0x10 } },
	{ "pc outside every mapping", 0, 0, 0x900000, W(0), W(2),
	  { { 2, 0 }, { 3, R_END + 0x10 } },
	  UW_STAT_NO_MAPPING, 1, 2, { 0x900000, R_END + 0x10 } },
	{ "mapping without its table", 0, 0, M_NOTABLE + 0x10, W(0), 0, { { 0, 0 } },
	  UW_STAT_NO_TABLE, 1, 1, { M_NOTABLE + 0x10 } },
	{ "process without tables", 1, 0, R_LEAF + 0x10, W(0), W(2),
	  { { 2, 0 }, { 3, R_END + 0x10 } },
	  UW_STAT_NO_PROC, 1, 2, { R_LEAF + 0x10, R_END + 0x10 } },
	{ "deeper than 127 frames", 0, 1, R_LEAF + 0x10, W(0), 0, { { 0, 0 } },
	  UW_STAT_DEPTH, 0, UW_MAX_DEPTH, { R_LEAF + 0x10, R_LEAF + 1, R_LEAF + 1, R_LEAF + 1 } },
};

static void test_reference_walk(void **state UNUSED)
{
	static uint64_t mem[STACK_WORDS];
	uint64_t ips[UW_MAX_DEPTH];
	struct uw_proc proc;
	size_t i, k, n;
	int out, fp_used;

	ref_proc(&proc);
	for (i = 0; i < ARRAY_SIZE(walks); i++) {
		print_message("case %zu: %s\n", i, walks[i].name);
		memset(mem, 0, sizeof(mem));
		if (walks[i].recursive)
			for (k = 0; k < STACK_WORDS; k++)
				mem[k] = R_LEAF + 1;	/* every frame returns into R_LEAF */
		for (k = 0; k < MAXW && (walks[i].mem[k].idx || walks[i].mem[k].val); k++)
			mem[walks[i].mem[k].idx] = walks[i].mem[k].val;
		out = unwinder_walk_reference(walks[i].no_proc ? NULL : &proc, ref_rows,
					      ARRAY_SIZE(ref_rows), mem, STACK, sizeof(mem),
					      walks[i].ip, walks[i].sp, walks[i].bp, ips, &n,
					      &fp_used);
		assert_int_equal(out, walks[i].outcome);
		assert_int_equal(fp_used, walks[i].fp_used);
		assert_int_equal(n, walks[i].n);
		for (k = 0; k < n && k < ARRAY_SIZE(walks[i].ips); k++)
			assert_int_equal(ips[k], walks[i].ips[k]);
	}
}

/* The CFA rules alone, as the BPF program applies them (bpf/unwind.h). */
static void test_row_cfa(void **state UNUSED)
{
	static const struct {
		unsigned type;
		int32_t off;
		uint64_t ip, sp, bp;
		int step;
		uint64_t cfa;
	} cases[] = {
		{ UNWIND_CFA_RSP, 8, 0x10, 1000, 5000, UW_STEP_CFA, 1008 },
		{ UNWIND_CFA_RSP, 0x98 + 8, 0x10, 1000, 5000, UW_STEP_CFA, 1000 + 0xa0 },
		{ UNWIND_CFA_RBP, 16, 0x10, 1000, 5000, UW_STEP_CFA, 5016 },
		{ UNWIND_CFA_PLT, 11, 0x1010, 1000, 0, UW_STEP_CFA, 1008 },
		{ UNWIND_CFA_PLT, 11, 0x101b, 1000, 0, UW_STEP_CFA, 1016 },
		{ UNWIND_CFA_PLT, 10, 0x101a, 1000, 0, UW_STEP_CFA, 1016 },	/* IBT entries */
		{ UNWIND_CFA_NONE, 0, 0x10, 1000, 5000, UW_STEP_FP, 5016 },
		{ UNWIND_CFA_SIGNAL, 40, 0x10, 1000, 0, UW_STEP_SIGNAL, 1040 },
		{ UNWIND_CFA_END, 0, 0x10, 1000, 0, UW_STEP_END, 0 },
		{ UNWIND_CFA_UNSUPPORTED, 0, 0x10, 1000, 0, UW_STEP_UNSUPPORTED, 0 },
		{ 200, 0, 0x10, 1000, 0, UW_STEP_UNSUPPORTED, 0 },
	};
	__u64 cfa;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		cfa = 0;
		assert_int_equal(uw_row_cfa(cases[i].type, cases[i].off, cases[i].ip, cases[i].sp,
					    cases[i].bp, &cfa),
				 cases[i].step);
		assert_int_equal(cfa, cases[i].cfa);
	}
	/* the two ids of a stack differ and are never negative */
	assert_true(uw_stack_id(~0ull, 0) >= 0 && uw_stack_id(~0ull, 1) >= 0);
	assert_int_not_equal(uw_stack_id(uw_hash_frame(1, 2), 0), uw_stack_id(uw_hash_frame(1, 2), 1));
}

static void test_incomplete_text(void **state UNUSED)
{
	static const struct {
		uint64_t walks, complete, no_proc, no_mapping, depth, bad, java_lost;
		const char *text;
	} cases[] = {
		{ 0, 0, 0, 0, 0, 0, 0, "" },
		{ 100, 100, 0, 0, 0, 0, 0, "" },
		{ 200, 190, 10, 0, 0, 0, 0,
		  "5.0% of the user stacks could not be completed: 5.0% before the process's "
		  "unwind tables were loaded" },
		{ 100, 96, 1, 2, 1, 0, 0,
		  "4.0% of the user stacks could not be completed: 1.0% before the process's "
		  "unwind tables were loaded, 2.0% in code without a file (JIT, vDSO) or mapped "
		  "after the start, 1.0% cut at 127 frames" },
		/* a walk lost in Java code is a bad frame, said as the Java one */
		{ 100, 95, 0, 0, 0, 5, 3,
		  "5.0% of the user stacks could not be completed: 2.0% at a corrupt frame, 3.0% "
		  "in Java code the walk could not follow" },
		{ 100, 98, 0, 0, 0, 2, 2,
		  "2.0% of the user stacks could not be completed: 2.0% in Java code the walk "
		  "could not follow" },
		/* more Java losses than bad frames (an earlier frame-pointer cause won): capped */
		{ 100, 99, 0, 0, 0, 1, 4,
		  "1.0% of the user stacks could not be completed: 1.0% in Java code the walk "
		  "could not follow" },
	};
	struct unwinder_stats st;
	char buf[400];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&st, 0, sizeof(st));
		st.bpf[UW_STAT_WALKS] = cases[i].walks;
		st.bpf[UW_STAT_COMPLETE] = cases[i].complete;
		st.bpf[UW_STAT_NO_PROC] = cases[i].no_proc;
		st.bpf[UW_STAT_NO_MAPPING] = cases[i].no_mapping;
		st.bpf[UW_STAT_DEPTH] = cases[i].depth;
		st.bpf[UW_STAT_BAD_FRAME] = cases[i].bad;
		st.bpf[UW_STAT_JAVA_LOST] = cases[i].java_lost;
		unwinder_incomplete_text(&st, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
	}
	/* a short buffer is cut, never overrun */
	st.bpf[UW_STAT_WALKS] = 10;
	st.bpf[UW_STAT_READ_FAULT] = 5;
	unwinder_incomplete_text(&st, buf, 12);
	assert_int_equal(strlen(buf), 11);
}

/* --- the table cache over a fake /proc ----------------------------------------------------- */

struct fake {
	uint8_t *rows;			/* UW_ROW_STRIDE bytes a row */
	uint32_t nrows;
	struct uw_proc last;
	uint32_t last_tgid;
	int sets, dels;
};

/* Keeps the rows laid out as the BPF array map does (UW_ROW_STRIDE bytes each). */
static int fake_write_rows(void *ctx, uint32_t start, const struct unwind_row *rows, uint32_t n,
			   uint32_t capacity)
{
	struct fake *f = ctx;
	uint32_t i;

	if (!f->rows) {
		f->rows = calloc(capacity, UW_ROW_STRIDE);
		if (!f->rows)
			return -ENOMEM;
		f->nrows = capacity;
	}
	assert_true((uint64_t)start + n <= f->nrows);
	for (i = 0; i < n; i++)
		memcpy(f->rows + ((size_t)start + i) * UW_ROW_STRIDE, &rows[i], sizeof(rows[i]));
	return 0;
}

static int fake_set(void *ctx, uint32_t tgid, const struct uw_proc *p)
{
	struct fake *f = ctx;

	f->last = *p;
	f->last_tgid = tgid;
	f->sets++;
	return 0;
}

static int fake_del(void *ctx, uint32_t tgid)
{
	struct fake *f = ctx;

	(void)tgid;
	f->dels++;
	return 0;
}

static const struct unwinder_ops fake_ops = { fake_write_rows, fake_set, fake_del };

struct fixture {
	char root[64];
	struct fake fake;
	size_t nofp_rows, fp_rows;
};

static size_t fixture_rows(const char *name)
{
	struct unwind_table *t;
	size_t n;
	int fd = open(name, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(unwind_table__from_fd(fd, NULL, &t), 0);
	close(fd);
	unwind_table__rows(t, &n);
	unwind_table__free(t);
	return n;
}

/* The fixture files inside the fake container root ROOT/rootfs, at /lib/<name>. */
static const char *const rootfs_files[] = { "nofp.so", "nocfi", "fp.so" };

/* Copies @name from FIXTURES to ROOT/rootfs/lib/@name. */
static void copy_to_rootfs(struct fixture *fx, const char *name)
{
	char src[PATH_MAX], dst[PATH_MAX], buf[8192];
	int in, out;
	ssize_t n;

	snprintf(src, sizeof(src), FIXTURES "%s", name);
	snprintf(dst, sizeof(dst), "%s/rootfs/lib/%s", fx->root, name);
	in = open(src, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* The inode of /lib/@name in ROOT/rootfs, 13 for a file that is not there. */
static unsigned long rootfs_ino(struct fixture *fx, const char *path)
{
	char full[PATH_MAX];
	struct stat sb;

	snprintf(full, sizeof(full), "%s/rootfs%s", fx->root, path);
	return stat(full, &sb) ? 13 : (unsigned long)sb.st_ino;
}

/*
 * Writes ROOT/PID/maps from @lines ("%lu" replaced by the inode of the line's path in
 * ROOT/rootfs), and ROOT/PID/root -> ROOT/rootfs: a container root of its own, never "/".
 */
static void make_proc(struct fixture *fx, unsigned pid, const char *const *lines, size_t n)
{
	char path[PATH_MAX];
	const char *file;
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s/%u", fx->root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%u/root", fx->root, pid);
	assert_int_equal(symlink("../rootfs", path), 0);
	snprintf(path, sizeof(path), "%s/%u/maps", fx->root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < n; i++) {
		file = strchr(lines[i], '/');
		fprintf(f, lines[i], file ? rootfs_ino(fx, file) : 0ul);
		fputc('\n', f);
	}
	fclose(f);
}

static void remove_proc(struct fixture *fx, unsigned pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u/maps", fx->root, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u/root", fx->root, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u", fx->root, pid);
	rmdir(path);
}

static const char *const maps_a[] = {
	"00400000-00401000 r--p 00000000 fe:00 %lu /lib/nofp.so",
	"00401000-00402000 r-xp 00001000 fe:00 %lu /lib/nofp.so",
	"00500000-00501000 rw-p 00000000 00:00 0",
	"00600000-00601000 r-xp 00000000 00:00 0",		/* anonymous: JIT, not listed */
	"00700000-00701000 r-xp 00001000 fe:00 %lu /lib/nocfi",
	"00800000-00801000 r-xp 00001000 fe:00 %lu /lib/does-not-exist.so",
	"7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0 [vsyscall]",
};
static const char *const maps_b[] = {
	"10401000-10402000 r-xp 00001000 fe:00 %lu /lib/nofp.so",
};
static const char *const maps_c[] = {
	"20401000-20402000 r-xp 00001000 fe:00 %lu /lib/fp.so",
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char path[PATH_MAX];
	size_t i;

	assert_non_null(fx);
	strcpy(fx->root, "/tmp/test_unwinder.XXXXXX");
	assert_non_null(mkdtemp(fx->root));
	snprintf(path, sizeof(path), "%s/rootfs", fx->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/rootfs/lib", fx->root);
	assert_int_equal(mkdir(path, 0755), 0);
	for (i = 0; i < ARRAY_SIZE(rootfs_files); i++)
		copy_to_rootfs(fx, rootfs_files[i]);
	fx->nofp_rows = fixture_rows(FIXTURES "nofp.so");
	fx->fp_rows = fixture_rows(FIXTURES "fp.so");
	make_proc(fx, 100, maps_a, ARRAY_SIZE(maps_a));
	make_proc(fx, 101, maps_b, ARRAY_SIZE(maps_b));
	make_proc(fx, 102, maps_c, ARRAY_SIZE(maps_c));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	unsigned pid;
	size_t i;

	for (pid = 100; pid <= 103; pid++)
		remove_proc(fx, pid);
	for (i = 0; i < ARRAY_SIZE(rootfs_files); i++) {
		snprintf(path, sizeof(path), "%s/rootfs/lib/%s", fx->root, rootfs_files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/rootfs/lib", fx->root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/rootfs", fx->root);
	rmdir(path);
	rmdir(fx->root);
	free(fx->fake.rows);
	free(fx);
	return 0;
}

static struct unwinder *new_unwinder(struct fixture *fx, uint32_t rows)
{
	struct unwinder_opts o = { .proc_root = fx->root, .rows = rows, .max_table_rows = rows,
				   .ops = &fake_ops, .ops_ctx = &fx->fake };
	struct unwinder_maps maps = { -1, -1, -1, -1 };
	struct unwinder *uw;

	free(fx->fake.rows);
	memset(&fx->fake, 0, sizeof(fx->fake));
	assert_int_equal(unwinder__new(&maps, &o, &uw), 0);
	return uw;
}

static void test_cache(void **state)
{
	struct fixture *fx = *state;
	struct unwinder *uw = new_unwinder(fx, 4096);
	struct unwinder_stats st;
	const struct uw_mapping *m;
	struct unwind_row row;

	/* the lists: sorted, only file-backed executable mappings, flags per file */
	assert_int_equal(unwinder__add_process(uw, 100), 3);
	assert_int_equal(fx->fake.last_tgid, 100);
	assert_int_equal(fx->fake.last.nmaps, 3);
	m = &fx->fake.last.maps[0];
	assert_int_equal(m->start, 0x401000);
	assert_int_equal(m->end, 0x402000);
	assert_int_equal(m->bias, 0x400000);	/* offset 0x1000 holds vaddr 0x1000 */
	assert_int_equal(m->nrows, fx->nofp_rows);
	assert_int_equal(m->flags, 0);
	memcpy(&row, fx->fake.rows + (size_t)m->first_row * UW_ROW_STRIDE, sizeof(row));
	assert_int_equal(row.cfa_type, UNWIND_CFA_RSP);
	m = &fx->fake.last.maps[1];
	assert_int_equal(m->start, 0x700000);
	assert_int_equal(m->nrows, 0);
	assert_int_equal(m->flags, UW_MAP_NO_CFI);
	m = &fx->fake.last.maps[2];
	assert_int_equal(m->start, 0x800000);
	assert_int_equal(m->flags, UW_MAP_NO_TABLE);

	/* another process mapping the same file shares its table */
	assert_int_equal(unwinder__add_process(uw, 101), 1);
	assert_int_equal(fx->fake.last.maps[0].first_row, 0);
	assert_int_equal(fx->fake.last.maps[0].bias, 0x10400000);
	assert_int_equal(unwinder__stats(uw, &st), 0);
	assert_int_equal(st.procs, 2);
	assert_int_equal(st.tables_built, 2);	/* nofp.so, and nocfi's empty one */
	assert_int_equal(st.tables_shared, 1);
	assert_int_equal(st.rows_used, fx->nofp_rows);
	assert_int_equal(st.rows_bytes, fx->nofp_rows * UW_ROW_STRIDE);

	/* re-adding replaces the list without leaking references */
	assert_int_equal(unwinder__add_process(uw, 100), 3);
	assert_int_equal(unwinder__stats(uw, &st), 0);
	assert_int_equal(st.procs, 2);
	assert_int_equal(st.tables_built, 2);

	/* errors */
	assert_int_equal(unwinder__add_process(uw, 999), -ESRCH);
	assert_int_equal(unwinder__remove_process(uw, 999), -ENOENT);
	assert_int_equal(unwinder__read_stack(uw, -14, NULL, 0, &(size_t){ 1 }), -14);

	/* remove, and sweep a process that exited */
	assert_int_equal(unwinder__remove_process(uw, 100), 0);
	assert_int_equal(fx->fake.dels, 1);
	make_proc(fx, 103, maps_b, ARRAY_SIZE(maps_b));
	assert_int_equal(unwinder__add_process(uw, 103), 1);
	remove_proc(fx, 103);
	assert_int_equal(unwinder__sweep(uw), 1);
	assert_int_equal(unwinder__stats(uw, &st), 0);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.tables_in_use, 1);	/* nofp.so, still used by 101 */
	unwinder__free(uw);
}

static void test_eviction(void **state)
{
	struct fixture *fx = *state;
	uint32_t room = (uint32_t)(fx->nofp_rows > fx->fp_rows ? fx->nofp_rows : fx->fp_rows);
	struct unwinder *uw = new_unwinder(fx, room);
	struct unwinder_stats st;

	/* room for one table: while nofp.so is in use, fp.so gets none (frame pointers) */
	assert_int_equal(unwinder__add_process(uw, 101), 1);
	assert_int_equal(unwinder__add_process(uw, 102), 1);
	assert_int_equal(fx->fake.last.maps[0].flags, UW_MAP_NO_TABLE);
	assert_int_equal(unwinder__stats(uw, &st), 0);
	assert_int_equal(st.tables_failed, 1);
	assert_int_equal(st.tables_evicted, 0);

	/* once nofp.so is unused, it is evicted for fp.so */
	assert_int_equal(unwinder__remove_process(uw, 101), 0);
	assert_int_equal(unwinder__add_process(uw, 102), 1);
	assert_int_equal(fx->fake.last.maps[0].flags, 0);
	assert_int_equal(fx->fake.last.maps[0].nrows, fx->fp_rows);
	assert_int_equal(unwinder__stats(uw, &st), 0);
	assert_int_equal(st.tables_evicted, 1);
	assert_int_equal(st.rows_used, fx->fp_rows);

	/* and comes back when needed again, once fp.so is unused */
	assert_int_equal(unwinder__remove_process(uw, 102), 0);
	assert_int_equal(unwinder__add_process(uw, 101), 1);
	assert_int_equal(fx->fake.last.maps[0].nrows, fx->nofp_rows);
	unwinder__free(uw);
}

static void test_bad_opts(void **state UNUSED)
{
	struct unwinder_opts o = { .rows = UW_MAX_ROWS + 1, .ops = &fake_ops };
	struct unwinder_maps maps = { -1, -1, -1, -1 };
	struct unwinder *uw = (struct unwinder *)&o;

	assert_int_equal(unwinder__new(&maps, &o, &uw), -EINVAL);
	assert_ptr_equal(uw, (struct unwinder *)&o);	/* out untouched on failure */
	unwinder__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_walk),
		cmocka_unit_test(test_row_cfa),
		cmocka_unit_test(test_incomplete_text),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
		cmocka_unit_test(test_bad_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
