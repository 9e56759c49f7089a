// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/log.h"
#include "symbols/symindex.h"
#include "symbols/symstore.h"
#include "tests/unit/fixtures.h"

#define UNUSED __attribute__((unused))
#define BID_A "aaaa0001"
#define BID_B "bbbb0002"

static char dir[64];

static int setup(void **state UNUSED)
{
	strcpy(dir, "/tmp/test_symstore.XXXXXX");
	log_set_level(LOG_ERROR);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state UNUSED)
{
	return fx_rm_rf(dir);
}

/* A build of @n functions at 0x1000, 0x2000, ... named "<prefix>0", "<prefix>1", ... */
static struct symindex_build *build(const char *bid, size_t n, const char *prefix)
{
	struct symindex_build *b;
	char name[64];
	size_t i;

	assert_int_equal(symindex_build__new(bid, 0, &b), 0);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%zu", prefix, i);
		assert_int_equal(symindex_build__add(b, 0x1000 * (i + 1), 0x100, name,
						     strlen(name), 0),
				 0);
	}
	assert_int_equal(symindex_build__seal(b), 0);
	return b;
}

static void put(struct symstore *s, const char *bid, size_t n, const char *prefix, int64_t at,
		int ret, struct symstore_entry *res)
{
	struct symindex_build *b = build(bid, n, prefix);

	assert_int_equal(symstore__put(s, b, "app.debug", "alice", at, res), ret);
	symindex_build__free(b);
}

static struct symstore *open_store(const struct symstore_opts *o)
{
	struct symstore_opts def = { .dir = dir };
	struct symstore *s;

	assert_int_equal(symstore__open(o ? o : &def, &s), 0);
	return s;
}

static void expect_name(struct symstore *s, const char *bid, uint64_t addr, const char *name)
{
	char buf[64];

	if (!name) {
		assert_int_equal(symstore__name(s, bid, addr, buf, sizeof(buf)), -ENOENT);
		return;
	}
	assert_int_equal(symstore__name(s, bid, addr, buf, sizeof(buf)), 0);
	assert_string_equal(buf, name);
}

static void test_put_list_delete(void **state UNUSED)
{
	struct symstore *s = open_store(NULL);
	struct symstore_entry res, *list;
	struct stat st;
	size_t n;

	put(s, BID_A, 3, "a", 100, 0, &res);
	assert_false(res.replaced);
	assert_int_equal(res.functions, 3);
	put(s, BID_B, 2, "b", 200, 0, NULL);
	assert_int_equal(symstore__list(s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].build_id, BID_B); /* newest first */
	assert_string_equal(list[1].build_id, BID_A);
	assert_string_equal(list[1].file_name, "app.debug");
	assert_string_equal(list[1].uploaded_by, "alice");
	assert_int_equal(list[1].uploaded_at, 100);
	assert_int_equal(list[1].functions, 3);
	symstore_list_free(list);
	assert_true(symstore__has(s, BID_A));
	assert_false(symstore__has(s, "cccc"));
	expect_name(s, BID_A, 0x1000, "a0");
	expect_name(s, BID_A, 0x30ff, "a2");
	expect_name(s, BID_A, 0x3100, NULL);
	expect_name(s, BID_B, 0x2000, "b1");
	expect_name(s, "cccc", 0x2000, NULL);
	assert_int_equal(symstore__delete(s, BID_A), 0);
	assert_int_equal(symstore__delete(s, BID_A), -ENOENT);
	assert_false(symstore__has(s, BID_A));
	expect_name(s, BID_A, 0x1000, NULL);
	assert_int_equal(symstore__list(s, &list, &n), 0);
	assert_int_equal(n, 1);
	symstore_list_free(list);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	symstore__free(s);
}

static void test_replace(void **state UNUSED)
{
	static const struct {
		size_t stored, put;
		int ret;
		bool replaced;
		size_t after;
		const char *name; /* at 0x1000 after */
	} cases[] = {
		{ 3, 3, 0, true, 3, "new0" },
		{ 3, 5, 0, true, 5, "new0" },
		{ 5, 3, -EEXIST, false, 5, "old0" },
	};
	struct symstore_entry res;
	struct symstore *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		s = open_store(NULL);
		put(s, BID_A, cases[i].stored, "old", 1, 0, NULL);
		expect_name(s, BID_A, 0x1000, "old0"); /* cached now */
		memset(&res, 0, sizeof(res));
		put(s, BID_A, cases[i].put, "new", 2, cases[i].ret, &res);
		assert_int_equal(res.replaced, cases[i].replaced);
		assert_int_equal(res.functions, cases[i].after);
		expect_name(s, BID_A, 0x1000, cases[i].name);
		assert_int_equal(symstore__delete(s, BID_A), 0);
		symstore__free(s);
	}
}

static size_t count_files(const char *prefix)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fx_write(path, data, len);
}

/* A store opened again has what was put; corrupt files and stale temp files are dropped. */
static void test_reopen(void **state UNUSED)
{
	struct symstore *s = open_store(NULL);
	struct symstore_entry *list;
	char path[128], path2[128];
	size_t n;

	put(s, BID_A, 3, "a", 100, 0, NULL);
	put(s, BID_B, 2, "b", 200, 0, NULL);
	symstore__free(s);
	assert_int_equal(count_files(".tmp."), 0); /* atomic writes leave no temp file */
	write_file(".tmp.cccc.1.1", "half", 4);
	write_file("cccc.sym", "garbage", 7);
	write_file("not-an-index.txt", "x", 1);
	snprintf(path, sizeof(path), "%s/" BID_A ".sym", dir);
	snprintf(path2, sizeof(path2), "%s/dddd.sym", dir);
	assert_int_equal(link(path, path2), 0); /* names another build */
	s = open_store(NULL);
	assert_int_equal(symstore__skipped(s), 2);
	assert_int_equal(count_files(".tmp."), 0);
	assert_int_equal(symstore__list(s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].build_id, BID_B);
	symstore_list_free(list);
	expect_name(s, BID_A, 0x2000, "a1");
	assert_false(symstore__has(s, "cccc"));
	assert_int_equal(symstore__delete(s, BID_A), 0);
	assert_int_equal(symstore__delete(s, BID_B), 0);
	symstore__free(s);
	unlink(path2);
	snprintf(path, sizeof(path), "%s/cccc.sym", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/not-an-index.txt", dir);
	unlink(path);
}

/* An index file corrupted after open: its frames stay unnamed, nothing crashes. */
static void test_corrupt_after_open(void **state UNUSED)
{
	struct symstore *s = open_store(NULL);
	char path[128];
	FILE *f;

	put(s, BID_A, 3, "a", 100, 0, NULL);
	snprintf(path, sizeof(path), "%s/" BID_A ".sym", dir);
	f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, -2, SEEK_END);
	fputc(0xff, f);
	fclose(f);
	expect_name(s, BID_A, 0x1000, NULL);
	expect_name(s, BID_A, 0x1000, NULL);
	assert_true(symstore__has(s, BID_A));
	assert_int_equal(symstore__delete(s, BID_A), 0);
	symstore__free(s);
}

static void test_invalid_ids(void **state UNUSED)
{
	static const char *const ids[] = { "", "a", "abc", "ABCD", "../../etc/passwd", "aa/b",
					   "aaaa.sym", NULL };
	struct symstore *s = open_store(NULL);
	char buf[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(symstore__delete(s, ids[i]), -EINVAL);
		assert_int_equal(symstore__name(s, ids[i], 0x1000, buf, sizeof(buf)), -EINVAL);
		assert_false(symstore__has(s, ids[i]));
	}
	symstore__free(s);
}

static void test_bounds(void **state UNUSED)
{
	static const struct {
		size_t max_builds;
		uint64_t max_bytes;
		int second, again;
	} cases[] = {
		{ 2, 0, 0, 0 },
		{ 1, 0, -ENOSPC, 0 },		/* replacing the one stored is fine */
		{ 0, 200, -ENOSPC, 0 },		/* one index is 129 bytes */
		{ 0, 100, -ENOSPC, -ENOSPC },
	};
	struct symstore_opts o = { .dir = dir };
	struct symstore *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		o.max_builds = cases[i].max_builds;
		o.max_bytes = cases[i].max_bytes;
		s = open_store(&o);
		if (cases[i].max_bytes != 100)
			put(s, BID_A, 3, "a", 1, 0, NULL);
		put(s, BID_B, 3, "b", 1, cases[i].second, NULL);
		put(s, BID_A, 3, "a", 2, cases[i].again, NULL);
		symstore__delete(s, BID_A);
		symstore__delete(s, BID_B);
		assert_int_equal(count_files(""), 2); /* . and .. */
		symstore__free(s);
	}
}

/* Names are cut on a character to fit the caller's buffer; the cache keeps one index. */
static void test_name_and_cache(void **state UNUSED)
{
	static const struct {
		size_t size;
		const char *name;
	} cases[] = {
		{ 64, "\xe2\x82\xac\xe2\x82\xac" },
		{ 7, "\xe2\x82\xac\xe2\x82\xac" },
		{ 6, "\xe2\x82\xac" },
		{ 4, "\xe2\x82\xac" },
		{ 3, "" },
		{ 1, "" },
	};
	struct symstore_opts o = { .dir = dir, .cache_builds = 1 };
	struct symstore *s = open_store(&o);
	struct symindex_build *b;
	char buf[64];
	size_t i;

	assert_int_equal(symindex_build__new(BID_A, 0, &b), 0);
	assert_int_equal(symindex_build__add(b, 0x1000, 16, "\xe2\x82\xac\xe2\x82\xac", 6, 0), 0);
	assert_int_equal(symindex_build__seal(b), 0);
	assert_int_equal(symstore__put(s, b, NULL, NULL, 0, NULL), 0);
	symindex_build__free(b);
	put(s, BID_B, 2, "b", 1, 0, NULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(symstore__name(s, BID_A, 0x1000, buf, cases[i].size), 0);
		assert_string_equal(buf, cases[i].name);
		expect_name(s, BID_B, 0x1000, "b0"); /* evicts A from the one-slot cache */
	}
	assert_int_equal(symstore__name(s, BID_A, 0x1000, buf, 0), -EINVAL);
	assert_int_equal(symstore__name(s, BID_A, 0x1000, NULL, 4), -EINVAL);
	symstore__delete(s, BID_A);
	symstore__delete(s, BID_B);
	symstore__free(s);
}

static void test_open_errors(void **state UNUSED)
{
	struct symstore_opts o = { 0 };
	struct symstore *s = NULL;
	char path[128];

	assert_int_equal(symstore__open(&o, &s), -EINVAL);
	assert_int_equal(symstore__open(NULL, &s), -EINVAL);
	snprintf(path, sizeof(path), "%s/file", dir);
	fx_write(path, "x", 1);
	o.dir = path;
	assert_true(symstore__open(&o, &s) < 0);
	assert_null(s);
	unlink(path);
	/* missing parents are made */
	snprintf(path, sizeof(path), "%s/p/q/store", dir);
	o.dir = path;
	assert_int_equal(symstore__open(&o, &s), 0);
	symstore__free(s);
	symstore__free(NULL);
	snprintf(path, sizeof(path), "%s/p", dir);
	assert_int_equal(fx_rm_rf(path), 0);
}

struct race {
	struct symstore *s;
	int errors;
};

static void *putter(void *arg)
{
	struct race *r = arg;
	struct symindex_build *b;
	size_t i;

	for (i = 0; i < 200; i++) {
		b = build(i % 2 ? BID_A : BID_B, 2 + i / 2, "f");
		if (symstore__put(r->s, b, "x", "y", (int64_t)i, NULL))
			r->errors++;
		symindex_build__free(b);
		if (i % 50 == 49 && symstore__delete(r->s, BID_B))
			r->errors++;
	}
	return NULL;
}

static void test_threads(void **state UNUSED)
{
	struct symstore_opts o = { .dir = dir, .cache_builds = 1 };
	struct race r = { .s = open_store(&o) };
	pthread_t t;
	char buf[32];
	size_t i;
	int err;

	assert_int_equal(pthread_create(&t, NULL, putter, &r), 0);
	for (i = 0; i < 20000; i++) {
		err = symstore__name(r.s, i % 2 ? BID_A : BID_B, 0x1000, buf, sizeof(buf));
		assert_true(err == 0 || err == -ENOENT);
		if (!err)
			assert_string_equal(buf, "f0");
		(void)symstore__has(r.s, BID_A);
	}
	pthread_join(t, NULL);
	assert_int_equal(r.errors, 0);
	expect_name(r.s, BID_A, 0x1000 * 101, "f100");
	symstore__delete(r.s, BID_A);
	symstore__delete(r.s, BID_B);
	assert_int_equal(count_files(".tmp."), 0);
	symstore__free(r.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_list_delete), cmocka_unit_test(test_replace),
		cmocka_unit_test(test_reopen),		cmocka_unit_test(test_corrupt_after_open),
		cmocka_unit_test(test_invalid_ids),	cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_name_and_cache),	cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
