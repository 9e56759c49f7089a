// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/procmaps.h"

#include "base/array.h"
#include "tests/unit/fixtures.h"
#define R PROCMAPS_READ
#define W PROCMAPS_WRITE
#define X PROCMAPS_EXEC
#define S PROCMAPS_SHARED

static void test_parse_line(void **state __attribute__((unused)))
{
	static const struct {
		const char *line;
		int ret;
		uint64_t start, end, offset, inode;
		uint32_t maj, min, perms;
		bool deleted;
		const char *path;
	} cases[] = {
		{ "5627e8ab0000-5627e8ab5000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n",
		  0, 0x5627e8ab0000, 0x5627e8ab5000, 0x2000, 247134, 0xfe, 0, R | X, false, "/usr/bin/cat" },
		{ "7f2ed1a44000-7f2ed1a66000 rw-p 00000000 00:00 0 \n",
		  0, 0x7f2ed1a44000, 0x7f2ed1a66000, 0, 0, 0, 0, R | W, false, "" },
		{ "7f2ed1a44000-7f2ed1a66000 rw-p 00000000 00:00 0",
		  0, 0x7f2ed1a44000, 0x7f2ed1a66000, 0, 0, 0, 0, R | W, false, "" },
		{ "7ffc1b9f3000-7ffc1b9f5000 r-xp 00000000 00:00 0                          [vdso]\n",
		  0, 0x7ffc1b9f3000, 0x7ffc1b9f5000, 0, 0, 0, 0, R | X, false, "[vdso]" },
		{ "7ffc1b8f3000-7ffc1b914000 rw-p 00000000 00:00 0                          [stack]",
		  0, 0x7ffc1b8f3000, 0x7ffc1b914000, 0, 0, 0, 0, R | W, false, "[stack]" },
		{ "7f00000000-7f00001000 rw-p 00000000 00:00 0      [anon:jit code cache]",
		  0, 0x7f00000000, 0x7f00001000, 0, 0, 0, 0, R | W, false, "[anon:jit code cache]" },
		{ "400000-401000 r-xp 00001000 08:01 12 /opt/my app/bin/serve r (deleted)\n",
		  0, 0x400000, 0x401000, 0x1000, 12, 8, 1, R | X, true, "/opt/my app/bin/serve r" },
		{ "400000-401000 r-xs 00000000 00:01 1025 /memfd:jit (deleted)",
		  0, 0x400000, 0x401000, 0, 1025, 0, 1, R | X | S, true, "/memfd:jit" },
		{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
		  0, 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, X, false, "[vsyscall]" },
		{ "1000-2000 ---p 00000000 103:0a 18446744073709551615 /x",
		  0, 0x1000, 0x2000, 0, UINT64_MAX, 0x103, 0xa, 0, false, "/x" },
		{ "1000-2000 r-xp 00000000 fe:00 7  (deleted)",
		  0, 0x1000, 0x2000, 0, 7, 0xfe, 0, R | X, false, "(deleted)" },
		/* Error rows. */
		{ "", -EINVAL },
		{ "garbage", -EINVAL },
		{ "2000-1000 r-xp 00000000 fe:00 1 /x", -EINVAL },		/* start > end */
		{ "1000-1000 r-xp 00000000 fe:00 1 /x", -EINVAL },		/* empty */
		{ "1000-2000 rwxq 00000000 fe:00 1 /x", -EINVAL },		/* bad perms */
		{ "1000-2000 r-x 00000000 fe:00 1 /x", -EINVAL },
		{ "1000-2000 r-xp 0000zz00 fe:00 1 /x", -EINVAL },
		{ "1000-2000 r-xp 00000000 fe00 1 /x", -EINVAL },		/* no minor */
		{ "1000-2000 r-xp 00000000 fe:00 /x", -EINVAL },		/* no inode */
		{ "1000-2000 r-xp 00000000 fe:00 18446744073709551616 /x", -EINVAL }, /* inode overflow */
		{ "10000000000000000-10000000000000001 r-xp 0 0:0 0", -EINVAL },	/* 17 digits */
		{ "1000-2000 r-xp 00000000 fe:00 12x /x", -EINVAL },
		{ "1000-2000 r-xp 00000000 fe:00 1 /x\nmore", -EINVAL },	/* two lines */
		{ "1000 r-xp 00000000 fe:00 1 /x", -EINVAL },
	};
	struct procmaps_entry e;
	char buf[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(buf, sizeof(buf), "%s", cases[i].line);
		memset(&e, 0xa5, sizeof(e));
		assert_int_equal(procmaps_parse_line(buf, &e), cases[i].ret);
		if (cases[i].ret)
			continue;
		assert_true(e.start == cases[i].start);
		assert_true(e.end == cases[i].end);
		assert_true(e.offset == cases[i].offset);
		assert_true(e.inode == cases[i].inode);
		assert_int_equal(e.dev_major, cases[i].maj);
		assert_int_equal(e.dev_minor, cases[i].min);
		assert_int_equal(e.perms, cases[i].perms);
		assert_int_equal(e.deleted, cases[i].deleted);
		assert_string_equal(e.path, cases[i].path);
	}
	assert_int_equal(procmaps_parse_line(NULL, &e), -EINVAL);
}

struct seen {
	size_t n;
	uint64_t starts[8];
	char paths[8][64];
	int stop_at;
};

static int collect(void *ctx, const struct procmaps_entry *e)
{
	struct seen *s = ctx;

	if (s->stop_at >= 0 && (int)s->n == s->stop_at)
		return -ECANCELED;
	if (s->n < 8) {
		s->starts[s->n] = e->start;
		snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", e->path);
	}
	s->n++;
	return 0;
}

static char tmpdir[] = "/tmp/test_procmaps.XXXXXX";

static int write_maps(int tgid, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", tmpdir, tgid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/maps", tmpdir, tgid);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return 0;
}

static void test_foreach(void **state __attribute__((unused)))
{
	static const struct {
		int tgid;
		const char *maps;	/* NULL: no such process */
		int stop_at;
		int ret;
		const char *last_path;
	} cases[] = {
		{ 10, "1000-2000 r-xp 00000000 fe:00 1 /a\n"
		      "garbage line\n"
		      "3000-4000 r--p 00000000 00:00 0 \n"
		      "5000-6000 r-xp 00000000 fe:00 2 /b c (deleted)",	/* no final newline */
		  -1, 3, "/b c" },
		{ 11, "", -1, 0, NULL },
		{ 12, "1000-2000 r-xp 00000000 fe:00 1 /a\n3000-4000 r-xp 00000000 fe:00 1 /a\n",
		  1, -ECANCELED, "/a" },
		{ 13, NULL, -1, -ESRCH, NULL },
		{ -1, NULL, -1, -EINVAL, NULL },
	};
	struct seen s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		if (cases[i].maps)
			assert_int_equal(write_maps(cases[i].tgid, cases[i].maps), 0);
		memset(&s, 0, sizeof(s));
		s.stop_at = cases[i].stop_at;
		assert_int_equal(procmaps_foreach(tmpdir, cases[i].tgid, collect, &s), cases[i].ret);
		if (cases[i].last_path)
			assert_string_equal(s.paths[s.n - 1], cases[i].last_path);
	}
}

static void test_foreach_self(void **state __attribute__((unused)))
{
	struct seen s = { .stop_at = -1 };
	int n;

	/* The real /proc/self/maps of this test: parses every line. */
	n = procmaps_foreach(NULL, getpid(), collect, &s);
	assert_true(n > 5);
	assert_int_equal((size_t)n, s.n);
}

static int setup(void **state __attribute__((unused)))
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state __attribute__((unused)))
{
	return fx_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_foreach_self),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
