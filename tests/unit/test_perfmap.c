// SPDX-License-Identifier: Apache-2.0
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/perfmap.h"
#include "symbols/symbolizer.h"

#include "base/text.h"
#include "tests/unit/fixtures.h"

#define MAX_LOOKUPS 4
#define NOPE UINT64_MAX

struct lookup {
	uint64_t addr;
	const char *name; /* NULL: no region */
	uint64_t offset;
};

/* Text (@len bytes, 0: strlen) parsed as a whole; then the counters and lookups it must give. */
static const struct {
	const char *text;
	size_t len;
	size_t entries;
	uint64_t bad, long_lines;
	struct lookup l[MAX_LOOKUPS];
} cases[] = {
	/* 0 */ { "10 20 foo\n", 0, 1, 0, 0,
		{ { 0x10, "foo", 0 }, { 0x2f, "foo", 0x1f }, { 0x30, NULL, 0 }, { 0xf, NULL, 0 } } },
	/* 1 */ { "0x10 0x20 foo\n", 0, 1, 0, 0, { { 0x10, "foo", 0 }, { 0x30, NULL, 0 } } },
	/* 2 */ { "0X10 20 a b  c  \n", 0, 1, 0, 0, { { 0x11, "a b  c", 1 } } },
	/* 3 */ { "10\t20\tname with\ttab\n", 0, 1, 0, 0, { { 0x10, "name with?tab", 0 } } },
	/* 4: a later line over an earlier one wins where they overlap */
	{ "10 20 old\n18 8 new\n", 0, 2, 0, 0,
		{ { 0x10, "old", 0 }, { 0x18, "new", 0 }, { 0x1f, "new", 7 }, { 0x20, "old", 0x10 } } },
	/* 5 */ { "18 8 inner\n10 20 outer\n", 0, 2, 0, 0,
		{ { 0x18, "outer", 8 }, { 0x10, "outer", 0 }, { 0x2f, "outer", 0x1f } } },
	/* 6: unsorted input */
	{ "100 10 b\n10 10 a\n", 0, 2, 0, 0,
		{ { 0x10, "a", 0 }, { 0x105, "b", 5 }, { 0x50, NULL, 0 }, { 0x110, NULL, 0 } } },
	/* 7 */ { "10 0 zero\n", 0, 0, 1, 0, { { 0x10, NULL, 0 } } },
	/* 8: START + SIZE wraps */
	{ "ffffffffffffffff 1 w\nfffffffffffffff0 10 w2\n", 0, 0, 2, 0, { { 0xfffffffffffffff0, NULL, 0 } } },
	/* 9: the top of the address space, not wrapping */
	{ "fffffffffffffff0 f top\n", 0, 1, 0, 0,
		{ { 0xfffffffffffffffe, "top", 0xe }, { 0xffffffffffffffff, NULL, 0 } } },
	/* 10: 17 digits overflow */
	{ "10000000000000000 1 x\n1 10000000000000000 y\n", 0, 0, 2, 0, { { 1, NULL, 0 } } },
	/* 11: not hex */
	{ "xyz 10 a\n10 zz a\n-10 10 a\n10x 20 a\n0x 10 a\n", 0, 0, 5, 0, { { 0x10, NULL, 0 } } },
	/* 12: missing fields; an empty line */
	{ "10 20\n10\n10 20   \n\n 10 20 a\n", 0, 0, 5, 0, { { 0x10, NULL, 0 } } },
	/* 13 */ { "10 20 foo\r\n", 0, 1, 0, 0, { { 0x10, "foo", 0 } } },
	/* 14: invalid UTF-8, a NUL in the name */
	{ "10 10 caf\xc3\n20 10 \xff\xfe\n30 10 a\0b\n40 10 \xc3\xa9t\xc3\xa9\n", 41, 4, 0, 0,
		{ { 0x10, "caf?", 0 }, { 0x20, "??", 0 }, { 0x30, "a?b", 0 }, { 0x40, "\xc3\xa9t\xc3\xa9", 0 } } },
	/* 15 */ { "", 0, 0, 0, 0, { { 0, NULL, 0 } } },
	/* 16: the last line without its newline counts at the end of the text */
	{ "10 20 foo\n30 10 bar", 0, 2, 0, 0, { { 0x30, "bar", 0 } } },
	/* 17: good lines around bad ones */
	{ "10 10 a\nbad\n30 10 c\n", 0, 2, 1, 0, { { 0x10, "a", 0 }, { 0x30, "c", 0 }, { 0x20, NULL, 0 } } },
	/* 18: identical ranges: the last one */
	{ "10 10 a\n10 10 b\n10 10 c\n", 0, 3, 0, 0, { { 0x10, "c", 0 }, { 0x1f, "c", 0xf } } },
	/* 19: a later small one inside, then an earlier one shows again */
	{ "0 100 big\n40 10 small\n", 0, 2, 0, 0,
		{ { 0x3f, "big", 0x3f }, { 0x40, "small", 0 }, { 0x50, "big", 0x50 }, { 0xff, "big", 0xff } } },
};

static void check_lookups(struct perfmap *m, const struct lookup *l, size_t n)
{
	const char *name;
	uint64_t off;
	size_t j;

	for (j = 0; j < n && (j == 0 || l[j].addr || l[j].name); j++) {
		off = NOPE;
		name = perfmap__lookup(m, l[j].addr, &off);
		print_message("  lookup 0x%llx -> %s\n", (unsigned long long)l[j].addr,
			      name ? name : "(none)");
		if (!l[j].name) {
			assert_null(name);
			continue;
		}
		assert_non_null(name);
		assert_string_equal(name, l[j].name);
		assert_int_equal(off, l[j].offset);
		assert_true(text_utf8_is_valid(name, strlen(name)));
	}
}

static void test_parse(void **state __attribute__((unused)))
{
	struct perfmap_stats st;
	struct perfmap *m;
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		assert_int_equal(perfmap__new(NULL, &m), 0);
		assert_int_equal(perfmap__feed(m, cases[i].text, len, true), 0);
		perfmap__stats(m, &st);
		assert_int_equal(st.entries, cases[i].entries);
		assert_int_equal(st.bad, cases[i].bad);
		assert_int_equal(st.long_lines, cases[i].long_lines);
		check_lookups(m, cases[i].l, MAX_LOOKUPS);
		perfmap__free(m);
	}
}

/* Every case fed in pieces of every size from 1 to 7 gives the same table. */
static void test_pieces(void **state __attribute__((unused)))
{
	struct perfmap_stats st;
	struct perfmap *m;
	size_t i, step, p, len, k;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		for (step = 1; step <= 7; step++) {
			print_message("case %zu step %zu\n", i, step);
			assert_int_equal(perfmap__new(NULL, &m), 0);
			for (p = 0; p < len; p += k) {
				k = len - p < step ? len - p : step;
				assert_int_equal(perfmap__feed(m, cases[i].text + p, k, false), 0);
			}
			assert_int_equal(perfmap__feed(m, NULL, 0, true), 0);
			perfmap__stats(m, &st);
			assert_int_equal(st.entries, cases[i].entries);
			assert_int_equal(st.bad, cases[i].bad);
			check_lookups(m, cases[i].l, MAX_LOOKUPS);
			perfmap__free(m);
		}
	}
}

/* Appended lines: only whole lines count until the end; a table built before is rebuilt. */
static void test_append(void **state __attribute__((unused)))
{
	struct perfmap *m;

	assert_int_equal(perfmap__new(NULL, &m), 0);
	assert_int_equal(perfmap__feed(m, "10 20 a\n30 1", 12, false), 0);
	assert_string_equal(perfmap__lookup(m, 0x10, NULL), "a");
	assert_null(perfmap__lookup(m, 0x30, NULL));
	assert_int_equal(perfmap__feed(m, "0 b\n", 4, false), 0);
	assert_string_equal(perfmap__lookup(m, 0x30, NULL), "b");
	/* a later line over the first */
	assert_int_equal(perfmap__feed(m, "10 8 c\n", 7, false), 0);
	assert_string_equal(perfmap__lookup(m, 0x10, NULL), "c");
	assert_string_equal(perfmap__lookup(m, 0x18, NULL), "a");
	perfmap__reset(m);
	assert_null(perfmap__lookup(m, 0x10, NULL));
	perfmap__free(m);
}

/* A line over PERFMAP_MAX_LINE is skipped, whole or in pieces; the next one is read. */
static void test_long_line(void **state __attribute__((unused)))
{
	static const size_t lens[] = { PERFMAP_MAX_LINE - 1, PERFMAP_MAX_LINE, 3 * PERFMAP_MAX_LINE };
	static const size_t steps[] = { 0, 1000, PERFMAP_MAX_LINE };
	struct perfmap_stats st;
	struct perfmap *m;
	size_t i, j, p, k, len;
	char *text;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		for (j = 0; j < ARRAY_SIZE(steps); j++) {
			print_message("line %zu step %zu\n", lens[i], steps[j]);
			text = malloc(lens[i] + 32);
			assert_non_null(text);
			memcpy(text, "10 20 ", 6);
			memset(text + 6, 'a', lens[i] - 6);
			len = lens[i] + (size_t)sprintf(text + lens[i], "\n30 10 ok\n");
			assert_int_equal(perfmap__new(NULL, &m), 0);
			for (p = 0; p < len; p += k) {
				k = steps[j] && len - p > steps[j] ? steps[j] : len - p;
				assert_int_equal(perfmap__feed(m, text + p, k, false), 0);
			}
			perfmap__stats(m, &st);
			/* the newline makes PERFMAP_MAX_LINE - 1 bytes the longest line kept */
			assert_int_equal(st.long_lines, lens[i] >= PERFMAP_MAX_LINE);
			assert_int_equal(st.entries, lens[i] >= PERFMAP_MAX_LINE ? 1 : 2);
			assert_int_equal(!!perfmap__lookup(m, 0x10, NULL), lens[i] < PERFMAP_MAX_LINE);
			assert_string_equal(perfmap__lookup(m, 0x30, NULL), "ok");
			perfmap__free(m);
			free(text);
		}
	}
}

static void test_entry_cap(void **state __attribute__((unused)))
{
	struct perfmap_opts o = { .max_entries = 3 };
	struct perfmap_stats st;
	struct perfmap *m;
	char line[64];
	int i;

	assert_int_equal(perfmap__new(&o, &m), 0);
	for (i = 0; i < 5; i++) {
		snprintf(line, sizeof(line), "%x 10 f%d\n", 0x100 * (i + 1), i);
		assert_int_equal(perfmap__feed(m, line, strlen(line), false), 0);
	}
	perfmap__stats(m, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.lines, 5);
	assert_string_equal(perfmap__lookup(m, 0x300, NULL), "f2");
	assert_null(perfmap__lookup(m, 0x400, NULL));
	perfmap__free(m);
	assert_int_equal(perfmap__new(NULL, NULL), -EINVAL);
	assert_int_equal(perfmap__feed(NULL, "", 0, true), -EINVAL);
	assert_null(perfmap__lookup(NULL, 0, NULL));
	perfmap__free(NULL);
}

static void test_nspid(void **state __attribute__((unused)))
{
	static const struct {
		const char *status;
		int ret;
		uint32_t nspid;
	} rows[] = {
		{ "Name:\tx\nPid:\t5\nPPid:\t1\nNSpid:\t5\t1\n", 0, 1 },
		{ "Name:\tx\nTracerPid:\t0\nPid:\t5\nNSpid:\t5\n", 0, 5 },
		{ "PPid:\t3\nPid:\t9\n", 0, 9 },
		{ "NSpid:\t7\t3\t2\nPid:\t7\n", 0, 2 },
		{ "NSpid:\t\nPid:\t7\n", 0, 7 },
		{ "NSpid:\t\n", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "NSpid:\t5 x\n", -EINVAL, 0 },
		{ "NSpid:\t99999999999\n", -EINVAL, 0 },
		{ "NSpid:\t0\n", -EINVAL, 0 },
		{ "NSpid:\t-3\n", -EINVAL, 0 },
	};
	uint32_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("case %zu\n", i);
		v = 0;
		assert_int_equal(perfmap_parse_nspid(rows[i].status, &v), rows[i].ret);
		if (!rows[i].ret)
			assert_int_equal(v, rows[i].nspid);
	}
}

/* --- the loader, over a fake /proc: <dir>/<tgid>/{status,root/tmp/perf-<nspid>.map} --- */

static char tmpdir[] = "/tmp/test_perfmap.XXXXXX";

static void map_path(char *buf, size_t size, int tgid, int nspid)
{
	snprintf(buf, size, "%s/%d/root/tmp/perf-%d.map", tmpdir, tgid, nspid);
}

static void add_proc(int tgid, int nspid)
{
	char path[PATH_MAX], status[128];

	snprintf(status, sizeof(status), "Name:\tjit\nPid:\t%d\nNSpid:\t%d\t%d\n", tgid, tgid, nspid);
	fake_proc_write(tmpdir, tgid, "status", status);
	snprintf(path, sizeof(path), "%s/%d/root", tmpdir, tgid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/root/tmp", tmpdir, tgid);
	mkdir(path, 0755);
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_load(void **state __attribute__((unused)))
{
	struct perfmap_opts o = { .proc_root = tmpdir, .max_file_bytes = 1 << 20 };
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	struct perfmap_stats st;
	struct perfmap *m;

	assert_non_null(mkdtemp(tmpdir));
	add_proc(100, 7);
	map_path(path, sizeof(path), 100, 7);
	assert_int_equal(perfmap__new(&o, &m), 0);
	assert_int_equal(perfmap__load(m, 100), -ENOENT);
	assert_int_equal(perfmap__load(m, 999), -ESRCH);
	assert_int_equal(perfmap__load(m, 0), -EINVAL);

	/* read, then only the appended part, a partial line completed later */
	append(path, "1000 100 one\n2000 10");
	assert_int_equal(perfmap__load(m, 100), 0);
	assert_string_equal(perfmap__lookup(m, 0x1000, NULL), "one");
	assert_null(perfmap__lookup(m, 0x2000, NULL));
	append(path, "0 two\n1080 10 over\n");
	assert_int_equal(perfmap__load(m, 100), 0);
	assert_string_equal(perfmap__lookup(m, 0x2000, NULL), "two");
	assert_string_equal(perfmap__lookup(m, 0x1085, NULL), "over");
	perfmap__stats(m, &st);
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.rereads, 0);
	assert_int_equal(st.bytes, 39);
	/* unchanged: nothing read */
	assert_int_equal(perfmap__load(m, 100), 0);
	perfmap__stats(m, &st);
	assert_int_equal(st.lines, 3);

	/* shrank: read again from the start */
	fx_write(path, "3000 10 three\n", 14);
	assert_int_equal(perfmap__load(m, 100), 0);
	assert_null(perfmap__lookup(m, 0x1000, NULL));
	assert_string_equal(perfmap__lookup(m, 0x3000, NULL), "three");
	perfmap__stats(m, &st);
	assert_int_equal(st.rereads, 1);

	/* replaced by another inode, larger: read again too */
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fx_write(tmp, "4000 10 four\n5000 10 five\n", 26);
	assert_int_equal(rename(tmp, path), 0);
	assert_int_equal(perfmap__load(m, 100), 0);
	assert_null(perfmap__lookup(m, 0x3000, NULL));
	assert_string_equal(perfmap__lookup(m, 0x5000, NULL), "five");
	perfmap__stats(m, &st);
	assert_int_equal(st.rereads, 2);
	perfmap__free(m);
}

/* Hostile maps: refused by safe_open, nothing named, what was read before stays. */
static void test_load_hostile(void **state __attribute__((unused)))
{
	struct perfmap_opts o = { .proc_root = tmpdir, .max_file_bytes = 1 << 20 };
	char path[PATH_MAX], outside[PATH_MAX];
	struct perfmap *m;
	int fd;

	add_proc(200, 8);
	map_path(path, sizeof(path), 200, 8);
	snprintf(outside, sizeof(outside), "%s/outside.map", tmpdir);
	fx_write(outside, "1000 10 secret\n", 15);
	assert_int_equal(perfmap__new(&o, &m), 0);

	/* an absolute link resolves inside the root: there is no such file there */
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(perfmap__load(m, 200), -ENOENT);
	unlink(path);
	/* a relative one cannot climb out of it either */
	assert_int_equal(symlink("../../../../../../../../outside.map", path), 0);
	assert_int_not_equal(perfmap__load(m, 200), 0);
	assert_null(perfmap__lookup(m, 0x1000, NULL));
	unlink(path);
	/* a link to a file inside the root is followed */
	snprintf(outside, sizeof(outside), "%s/200/root/tmp/real.map", tmpdir);
	fx_write(outside, "1000 10 inside\n", 15);
	assert_int_equal(symlink("/tmp/real.map", path), 0);
	assert_int_equal(perfmap__load(m, 200), 0);
	assert_string_equal(perfmap__lookup(m, 0x1000, NULL), "inside");
	unlink(path);

	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(perfmap__load(m, 200), -ENOTSUP);
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(perfmap__load(m, 200), -ENOTSUP);
	rmdir(path);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (2 << 20)), 0);
	close(fd);
	assert_int_equal(perfmap__load(m, 200), -EFBIG);
	unlink(path);
	assert_string_equal(perfmap__lookup(m, 0x1000, NULL), "inside");
	perfmap__free(m);
}

/*
 * The symbolizer names anonymous executable memory, and addresses mapped after its snapshot,
 * from the perf map; a process without one keeps its "[anon]" frames.
 */
static void test_symbolizer(void **state __attribute__((unused)))
{
	static const char maps[] = "7f0000000000-7f0000002000 r-xp 00000000 00:00 0 \n"
				   "7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n";
	struct symbolizer_opts so = { .proc_root = tmpdir };
	struct symbolizer_stats st;
	struct symbolizer *s;
	struct sym_frame f;
	char path[PATH_MAX];

	add_proc(300, 9);
	fake_proc_write(tmpdir, 300, "maps", maps);
	map_path(path, sizeof(path), 300, 9);
	append(path, "7f0000000100 100 jitted fn\n7f0000005000 10 later code\n");
	add_proc(301, 10);
	fake_proc_write(tmpdir, 301, "maps", maps);
	assert_int_equal(symbolizer__new(&so, &s), 0);

	assert_int_equal(symbolizer__user(s, 300, 0x7f0000000180, &f), 0);
	assert_string_equal(f.name, "jitted fn");
	assert_string_equal(f.dso, SYMBOLIZER_PERF_MAP_DSO);
	assert_int_equal(f.dso_addr, 0x7f0000000180);
	/* in the anonymous mapping, not in the map: as before */
	assert_int_equal(symbolizer__user(s, 300, 0x7f0000001000, &f), 0);
	assert_null(f.name);
	assert_string_equal(f.dso, "[anon]");
	/* in no mapping of the snapshot, but in the map */
	assert_int_equal(symbolizer__user(s, 300, 0x7f0000005008, &f), 0);
	assert_string_equal(f.name, "later code");
	assert_int_equal(symbolizer__user(s, 300, 0x7f0000009000, &f), -ENOENT);
	/* no map at all */
	assert_int_equal(symbolizer__user(s, 301, 0x7f0000000180, &f), 0);
	assert_null(f.name);
	assert_string_equal(f.dso, "[anon]");
	symbolizer__stats(s, &st);
	assert_int_equal(st.perf_maps, 2);
	assert_int_equal(st.perf_map_hits, 2);
	/* at most once a second: 5 lookups, 2 reads (3 if this machine stalled for a second) */
	assert_in_range(st.perf_map_reads, 2, 3);
	assert_int_equal(st.perf_map_refused, 0);
	symbolizer__free(s);

	/* the bound: one map held, the least recently used freed */
	so.max_perf_maps = 1;
	assert_int_equal(symbolizer__new(&so, &s), 0);
	assert_int_equal(symbolizer__user(s, 301, 0x7f0000000180, &f), 0);
	assert_int_equal(symbolizer__user(s, 300, 0x7f0000000180, &f), 0);
	assert_string_equal(f.name, "jitted fn");
	symbolizer__stats(s, &st);
	assert_int_equal(st.perf_maps, 1);
	assert_int_equal(st.perf_map_evictions, 1);
	symbolizer__free(s);
}

static int teardown(void **state __attribute__((unused)))
{
	return fx_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_entry_cap),
		cmocka_unit_test(test_nspid),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_load_hostile),
		cmocka_unit_test(test_symbolizer),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
