// SPDX-License-Identifier: Apache-2.0
/*
 * The profile store on a real temporary directory: add/list/get/open/delete, newest first,
 * the filter, retention (the 51st profile of a Service removes that Service's oldest only),
 * continuous entries (never listed, expire by age), the overall bound, the index rebuilt after
 * a restart with leftover .tmp-* directories removed (a profile being written when the agent
 * was killed), meta.json round trips and error rows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "base/fileio.h"
#include "daemon/agent/store.h"
#include "tests/unit/fixtures.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define HOUR_NS (3600LL * 1000000000LL)

struct fx {
	char root[64];		/* the test's temporary directory */
	char store[96];		/* root/store */
	char files[96];		/* root/capture: the four files of a capture */
	int64_t now;
};

static int64_t fake_clock(void *ctx)
{
	return ((struct fx *)ctx)->now;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fx_write(path, text, strlen(text));
}

static void make_files(const char *dir, bool flamegraph)
{
	assert_int_equal(mkdir_p(dir), 0);
	write_file(dir, "profile.pb.gz", "PPROF-BYTES");
	write_file(dir, "profile.collapsed", "main;work 10\n");
	write_file(dir, "summary.json", "{\"version\": 1, \"answer\": \"hi\"}\n");
	if (flamegraph)
		write_file(dir, "flamegraph.html", "<html></html>\n");
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	/* tmpfs when there is one: the store fsyncs every file, which costs seconds on a disk */
	const char *tmp = getenv("TMPDIR") ?: access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

	snprintf(f->root, sizeof(f->root), "%s/test_store.XXXXXX", tmp);
	assert_non_null(mkdtemp(f->root));
	snprintf(f->store, sizeof(f->store), "%s/store", f->root);
	snprintf(f->files, sizeof(f->files), "%s/capture", f->root);
	make_files(f->files, true);
	f->now = 1764438301LL * 1000000000LL; /* 2025-11-29T17:45:01Z */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	fx_rm_rf(f->root);
	free(f);
	return 0;
}

static struct store *open_store(struct fx *f, unsigned int retention, size_t max_entries)
{
	struct store_opts o = {
		.dir = f->store, .retention_per_service = retention, .max_entries = max_entries,
		.clock = fake_clock, .clock_ctx = f,
	};
	struct store *s = NULL;

	assert_int_equal(store__new(&o, &s), 0);
	assert_non_null(s);
	return s;
}

static void meta_for(struct store_meta *m, const char *service, int n)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->service, sizeof(m->service), "%s", service);
	snprintf(m->question, sizeof(m->question), "cpu");
	snprintf(m->target_kind, sizeof(m->target_kind), "service");
	snprintf(m->target, sizeof(m->target), "Service %s", service);
	snprintf(m->answer, sizeof(m->answer), "Over 30 seconds, answer %d.", n);
	snprintf(m->languages[0], sizeof(m->languages[0]), "native");
	snprintf(m->languages[1], sizeof(m->languages[1]), "go");
	m->nlanguages = 2;
	m->start_ns = 1764438000LL * 1000000000LL + n;
	m->duration_s = 30;
	m->samples = 1000 + n;
}

static void add(struct fx *f, struct store *s, const char *service, int n, char *id)
{
	struct store_meta m;

	meta_for(&m, service, n);
	f->now += 1000000000LL;
	assert_int_equal(store__add(s, &m, f->files, id), 0);
	assert_true(store_id_valid(id));
}

static bool dir_exists(struct fx *f, const char *id)
{
	char path[200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/profiles/%s", f->store, id);
	return stat(path, &st) == 0;
}

/* Names under DIR/profiles that start with ".tmp-" */
static int count_tmp(struct fx *f)
{
	char path[200];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/profiles", f->store);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, ".tmp-", 5);
	closedir(d);
	return n;
}

static void test_ids(void **state)
{
	static const struct {
		const char *id;
		bool valid;
	} cases[] = {
		{ "20261129T174501Z-a1b2c3", true },
		{ "20261129T174501Z-A1B2C3", false },
		{ "20261129T174501Z-a1b2c", false },
		{ "20261129T174501Z-a1b2c3d", false },
		{ "20261129T174501-a1b2c3", false },
		{ "../../etc/passwd", false },
		{ "", false },
		{ ".tmp-20261129T174501Z-a1b2c3", false },
	};
	char id[STORE_ID_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(store_id_valid(cases[i].id), cases[i].valid);
	}
	assert_false(store_id_valid(NULL));
	store_make_id(1764438301LL * 1000000000LL, id);
	assert_true(store_id_valid(id));
	assert_memory_equal(id, "20251129T174501Z-", 17);
}

static void test_add_list_get(void **state)
{
	struct fx *f = *state;
	char ids[3][STORE_ID_SIZE], buf[64];
	struct store_meta out[8], m;
	struct store *s = open_store(f, 0, 0);
	size_t n, total;
	uint64_t size;
	int fd;

	add(f, s, "billing", 1, ids[0]);
	add(f, s, "checkout", 2, ids[1]);
	add(f, s, "billing", 3, ids[2]);

	n = store__list(s, NULL, 0, out, ARRAY_SIZE(out), &total);
	assert_int_equal(n, 3);
	assert_int_equal(total, 3);
	assert_string_equal(out[0].id, ids[2]); /* newest first */
	assert_string_equal(out[1].id, ids[1]);
	assert_string_equal(out[2].id, ids[0]);
	assert_true(out[0].created_ns > out[1].created_ns);

	n = store__list(s, "billing", 0, out, ARRAY_SIZE(out), &total);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].id, ids[2]);
	assert_string_equal(out[1].id, ids[0]);
	n = store__list(s, "billing", 1, out, 1, &total);
	assert_int_equal(n, 1);
	assert_int_equal(total, 2);
	assert_string_equal(out[0].id, ids[0]);
	assert_int_equal(store__list(s, "nobody", 0, out, 8, &total), 0);
	assert_int_equal(total, 0);

	assert_int_equal(store__get(s, ids[1], &m), 0);
	assert_string_equal(m.service, "checkout");
	assert_string_equal(m.answer, "Over 30 seconds, answer 2.");
	assert_int_equal(m.nlanguages, 2);
	assert_string_equal(m.languages[1], "go");
	assert_int_equal(m.samples, 1002);
	assert_int_equal(store__get(s, "20261129T174501Z-000000", &m), -ENOENT);
	assert_int_equal(store__get(s, "../x", &m), -ENOENT);

	assert_int_equal(store__open_file(s, ids[1], STORE_FILE_PPROF, &fd, &size), 0);
	assert_int_equal(size, strlen("PPROF-BYTES"));
	assert_int_equal(read(fd, buf, sizeof(buf)), (ssize_t)size);
	assert_memory_equal(buf, "PPROF-BYTES", size);
	close(fd);
	assert_int_equal(store__open_file(s, ids[1], STORE_FILE_FLAMEGRAPH, &fd, &size), 0);
	close(fd);
	assert_int_equal(store__count(s), 3);
	assert_int_equal(count_tmp(f), 0);
	store__free(s);
}

static void test_retention(void **state)
{
	struct fx *f = *state;
	char first[STORE_ID_SIZE], id[STORE_ID_SIZE], other[3][STORE_ID_SIZE];
	struct store_meta *out = calloc(60, sizeof(*out));
	struct store *s = open_store(f, 50, 0);
	size_t total;
	int i;

	add(f, s, "billing", 0, first);
	for (i = 0; i < 3; i++)
		add(f, s, "checkout", i, other[i]);
	for (i = 1; i < 50; i++)
		add(f, s, "billing", i, id);
	assert_int_equal(store__list(s, "billing", 0, out, 60, &total), 50);
	assert_true(dir_exists(f, first));

	add(f, s, "billing", 50, id); /* the 51st */
	assert_int_equal(store__list(s, "billing", 0, out, 60, &total), 50);
	assert_string_equal(out[0].id, id);
	assert_int_equal(store__get(s, first, &out[59]), -ENOENT);
	assert_false(dir_exists(f, first));
	assert_string_equal(out[49].answer, "Over 30 seconds, answer 1.");
	/* the other Service is untouched, even its older entries */
	assert_int_equal(store__list(s, "checkout", 0, out, 60, &total), 3);
	for (i = 0; i < 3; i++)
		assert_true(dir_exists(f, other[i]));
	assert_int_equal(store__count(s), 53);
	assert_int_equal(count_tmp(f), 0);
	store__free(s);

	/* a lower retention applies at the next start */
	s = open_store(f, 10, 0);
	assert_int_equal(store__list(s, "billing", 0, out, 60, &total), 10);
	assert_string_equal(out[0].id, id);
	assert_int_equal(store__list(s, "checkout", 0, out, 60, &total), 3);
	store__free(s);
	free(out);
}

static void add_ns(struct fx *f, struct store *s, const char *ns, const char *service, int n,
		   char *id)
{
	struct store_meta m;

	meta_for(&m, service, n);
	snprintf(m.ns, sizeof(m.ns), "%s", ns);
	f->now += 1000000000LL;
	assert_int_equal(store__add(s, &m, f->files, id), 0);
}

/* Two tenants with a Service of the same name: each keeps its own N, also across a restart,
 * and "NS/NAME" lists one tenant's only. */
static void test_retention_per_namespace(void **state)
{
	struct fx *f = *state;
	char a_first[STORE_ID_SIZE], b[3][STORE_ID_SIZE], id[STORE_ID_SIZE];
	struct store_meta *out = calloc(20, sizeof(*out));
	struct store *s = open_store(f, 5, 0);
	size_t total, i;

	for (i = 0; i < 3; i++)
		add_ns(f, s, "b", "billing", (int)i, b[i]);
	add_ns(f, s, "a", "billing", 0, a_first);
	for (i = 1; i < 8; i++)
		add_ns(f, s, "a", "billing", (int)i, id);
	/* A's 8 captures removed A's oldest 3 only: B's older ones are all there */
	assert_int_equal(store__list(s, "a/billing", 0, out, 20, &total), 5);
	assert_int_equal(total, 5);
	for (i = 0; i < 5; i++)
		assert_string_equal(out[i].ns, "a");
	assert_false(dir_exists(f, a_first));
	assert_int_equal(store__list(s, "b/billing", 0, out, 20, &total), 3);
	for (i = 0; i < 3; i++)
		assert_true(dir_exists(f, b[i]));
	/* a bare name lists every namespace's Service of that name */
	assert_int_equal(store__list(s, "billing", 0, out, 20, &total), 8);
	store__free(s);
	/* the namespace survives meta.json, and retention at start is per namespace too */
	s = open_store(f, 2, 0);
	assert_int_equal(store__list(s, "a/billing", 0, out, 20, &total), 2);
	assert_string_equal(out[0].id, id);
	assert_int_equal(store__list(s, "b/billing", 0, out, 20, &total), 2);
	assert_string_equal(out[0].id, b[2]);
	store__free(s);
	free(out);
}

/* store_meta_of_service(), table-driven. */
static void test_of_service(void **state)
{
	static const struct {
		const char *ns, *service, *filter;
		bool match;
	} cases[] = {
		{ "a", "billing", NULL, true },
		{ "a", "billing", "billing", true },
		{ "a", "billing", "a/billing", true },
		{ "", "server", "server", true },
		{ "", "Service x", "Service x", true },
		/* errors: another tenant, another name, partial names */
		{ "a", "billing", "b/billing", false },
		{ "ab", "billing", "a/billing", false },
		{ "a", "billing", "ab/billing", false },
		{ "a", "billing", "a/bill", false },
		{ "a", "billing", "/billing", false },
		{ "", "billing", "/billing", true },
		{ "a", "billing", "a/", false },
		{ "a", "billing", "checkout", false },
		{ "a", "billing", "", false },
	};
	struct store_meta m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&m, 0, sizeof(m));
		snprintf(m.ns, sizeof(m.ns), "%s", cases[i].ns);
		snprintf(m.service, sizeof(m.service), "%s", cases[i].service);
		assert_int_equal(store_meta_of_service(&m, cases[i].filter), cases[i].match);
	}
}

static void test_max_entries(void **state)
{
	struct fx *f = *state;
	char ids[7][STORE_ID_SIZE];
	struct store_meta out[8];
	struct store *s = open_store(f, 0, 5);
	int i;

	for (i = 0; i < 7; i++)
		add(f, s, i % 2 ? "a" : "b", i, ids[i]);
	assert_int_equal(store__count(s), 5);
	assert_int_equal(store__list(s, NULL, 0, out, 8, NULL), 5);
	assert_string_equal(out[4].id, ids[2]);
	assert_false(dir_exists(f, ids[0]));
	assert_false(dir_exists(f, ids[1]));
	store__free(s);
}

/* Past the bound, continuous windows go before the profiles people asked for, oldest first. */
static void test_max_entries_continuous(void **state)
{
	struct fx *f = *state;
	char listed[3][STORE_ID_SIZE], win[4][STORE_ID_SIZE];
	struct store_meta m, out[8];
	struct store *s = open_store(f, 0, 4);
	int i;

	add(f, s, "a", 0, listed[0]);
	for (i = 0; i < 4; i++) {
		meta_for(&m, "server", i);
		m.continuous = true;
		f->now += 1000000000LL;
		assert_int_equal(store__add(s, &m, f->files, win[i]), 0);
	}
	/* 5 entries, bound 4: the oldest window went, not the older listed profile */
	assert_int_equal(store__count(s), 4);
	assert_int_equal(store__get(s, listed[0], &m), 0);
	assert_int_equal(store__get(s, win[0], &m), -ENOENT);
	add(f, s, "b", 1, listed[1]);
	add(f, s, "c", 2, listed[2]);
	assert_int_equal(store__list(s, NULL, 0, out, 8, NULL), 3);
	assert_int_equal(store__get(s, win[3], &m), 0);
	assert_int_equal(store__get(s, win[2], &m), -ENOENT);
	/* no window left to remove: the oldest entry goes */
	add(f, s, "d", 3, listed[0] /* reused */);
	assert_int_equal(store__count(s), 4);
	assert_int_equal(store__get(s, win[3], &m), -ENOENT);
	add(f, s, "e", 4, win[0] /* reused */);
	assert_int_equal(store__count(s), 4);
	assert_int_equal(store__list(s, NULL, 0, out, 8, NULL), 4);
	assert_string_equal(out[3].service, "b");
	store__free(s);
}

static void test_continuous(void **state)
{
	struct fx *f = *state;
	char cid[STORE_ID_SIZE], id[STORE_ID_SIZE];
	struct store_meta m, out[4];
	struct store *s = open_store(f, 1, 0);
	size_t total;

	meta_for(&m, "server", 0);
	m.continuous = true;
	assert_int_equal(store__add(s, &m, f->files, cid), 0);
	/* retention 1 per service does not count continuous entries */
	add(f, s, "server", 1, id);
	add(f, s, "server", 2, id);
	assert_int_equal(store__list(s, NULL, 0, out, 4, &total), 1);
	assert_string_equal(out[0].id, id);
	assert_int_equal(store__get(s, cid, &m), 0);
	assert_true(m.continuous);
	assert_int_equal(store__count(s), 2);

	f->now += 23 * HOUR_NS; /* kept for a day */
	add(f, s, "other", 3, id);
	assert_int_equal(store__get(s, cid, &m), 0);
	f->now += 2 * HOUR_NS;
	add(f, s, "other", 4, id);
	assert_int_equal(store__get(s, cid, &m), -ENOENT);
	assert_false(dir_exists(f, cid));
	store__free(s);
}

/* A continuous window of @dur_s seconds starting @at_s after @t0; its id in @id. */
static void add_window(struct fx *f, struct store *s, int64_t t0, int at_s, unsigned int dur_s,
		       char *id)
{
	struct store_meta m;

	meta_for(&m, "server", at_s);
	snprintf(m.target_kind, sizeof(m.target_kind), "server");
	snprintf(m.target, sizeof(m.target), "this server");
	m.continuous = true;
	m.start_ns = t0 + at_s * 1000000000LL;
	m.duration_s = dur_s;
	f->now += 1000000000LL;
	assert_int_equal(store__add(s, &m, f->files, id), 0);
}

/* The continuous windows that overlap a range: order, bounds, empty and reversed ranges. */
static void test_list_continuous(void **state)
{
	struct fx *f = *state;
	const int64_t t0 = f->now - HOUR_NS, S = 1000000000LL;
	char ids[5][STORE_ID_SIZE], listed[STORE_ID_SIZE];
	/* windows 0..2: [0,60) [60,120) [120,180) s; 3: a 0 s window at 500 s; 4: stored later,
	 * started earlier (order is by start, not by when stored) */
	static const struct {
		int from_s, until_s;
		bool oldest_first;
		size_t max;
		ssize_t ret;
		size_t total;
		int want[6]; /* window indexes, in order; -1 ends */
	} cases[] = {
		{ 0, 180, true, 8, 3, 3, { 0, 1, 2, -1 } },
		{ 0, 180, false, 8, 3, 3, { 2, 1, 0, -1 } },
		{ 30, 90, true, 8, 2, 2, { 0, 1, -1 } },
		{ 60, 120, true, 8, 1, 1, { 1, -1 } },	/* window 0 ends where the range starts */
		{ 59, 61, true, 8, 2, 2, { 0, 1, -1 } },
		{ 0, 180, false, 1, 1, 3, { 2, -1 } },	/* bounded: the newest */
		{ 0, 180, true, 2, 2, 3, { 0, 1, -1 } }, /* bounded: the oldest */
		{ 500, 501, true, 8, 1, 1, { 3, -1 } },	/* a 0 s window: its start in the range */
		{ 400, 500, true, 8, 0, 0, { -1 } },	/* ... not at the range's end */
		{ -600, 0, true, 8, 1, 1, { 4, -1 } },
		{ -900, 1000, true, 8, 5, 5, { 4, 0, 1, 2, 3, -1 } },
		/* nothing: an empty range, until before from, ranges outside every window */
		{ 100, 100, true, 8, 0, 0, { -1 } },
		{ 120, 60, true, 8, 0, 0, { -1 } },
		{ -2000, -900, true, 8, 0, 0, { -1 } },
		{ 600, 3600, true, 8, 0, 0, { -1 } },
		{ 0, 180, true, 0, 0, 3, { -1 } },
	};
	struct store *s = open_store(f, 1, 0);
	struct store_meta out[8];
	size_t i, k, total;
	ssize_t n;

	(void)state;
	add_window(f, s, t0, 0, 60, ids[0]);
	add_window(f, s, t0, 60, 60, ids[1]);
	add_window(f, s, t0, 120, 60, ids[2]);
	add_window(f, s, t0, 500, 0, ids[3]);
	add_window(f, s, t0, -600, 60, ids[4]);
	/* a listed profile over the same time is never a window */
	add(f, s, "server", 0, listed);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: [%d, %d) s\n", i, cases[i].from_s, cases[i].until_s);
		total = 99;
		n = store__list_continuous(s, t0 + cases[i].from_s * S, t0 + cases[i].until_s * S,
					   cases[i].oldest_first, out, cases[i].max, &total);
		assert_int_equal(n, cases[i].ret);
		assert_int_equal(total, cases[i].total);
		for (k = 0; k < (size_t)n; k++) {
			assert_true(cases[i].want[k] >= 0);
			assert_string_equal(out[k].id, ids[cases[i].want[k]]);
			assert_true(out[k].continuous);
		}
		assert_true(cases[i].want[k] < 0);
	}
	/* @total may be NULL */
	assert_int_equal(store__list_continuous(s, t0, t0 + 180 * S, true, out, 8, NULL), 3);
	store__free(s);
}

static void test_rebuild(void **state)
{
	struct fx *f = *state;
	char ids[4][STORE_ID_SIZE], path[512];
	struct store_meta out[8], m;
	struct store *s = open_store(f, 0, 0);
	int i;

	for (i = 0; i < 4; i++)
		add(f, s, i % 2 ? "a" : "b", i, ids[i]);
	store__free(s);

	/* killed while writing: a .tmp- directory with part of a profile */
	snprintf(path, sizeof(path), "%s/profiles/.tmp-20261129T174501Z-abcdef", f->store);
	make_files(path, false);
	/* killed while deleting */
	snprintf(path, sizeof(path), "%s/profiles/.tmp-rm-%s", f->store, ids[0]);
	make_files(path, false);
	/* a profile directory whose meta.json is corrupt is skipped (and left alone) */
	snprintf(path, sizeof(path), "%s/profiles/20201129T174501Z-000001", f->store);
	make_files(path, false);
	write_file(path, "meta.json", "{\"version\": 1, \"id\": ");
	/* and one whose meta.json names another id */
	snprintf(path, sizeof(path), "%s/profiles/20201129T174501Z-000002", f->store);
	make_files(path, false);
	snprintf(path, sizeof(path), "cp %s/profiles/%s/meta.json %s/profiles/20201129T174501Z-000002/",
		 f->store, ids[1], f->store);
	assert_int_equal(system(path), 0);

	f->now = 0; /* a clock gone back: new entries still sort newest */
	s = open_store(f, 0, 0);
	assert_int_equal(count_tmp(f), 0);
	assert_int_equal(store__count(s), 4);
	assert_int_equal(store__list(s, NULL, 0, out, 8, NULL), 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(out[i].id, ids[3 - i]);
	assert_int_equal(store__get(s, ids[2], &m), 0);
	assert_string_equal(m.answer, "Over 30 seconds, answer 2.");
	assert_string_equal(m.target, "Service b");
	add(f, s, "a", 9, ids[0]);
	assert_int_equal(store__list(s, NULL, 0, out, 8, NULL), 5);
	assert_string_equal(out[0].id, ids[0]);
	store__free(s);
}

static void test_delete(void **state)
{
	struct fx *f = *state;
	char ids[2][STORE_ID_SIZE];
	struct store_meta m;
	struct store *s = open_store(f, 0, 0);
	uint64_t size;
	char buf[32];
	int fd;

	add(f, s, "a", 0, ids[0]);
	add(f, s, "a", 1, ids[1]);
	/* an open download keeps reading after the delete */
	assert_int_equal(store__open_file(s, ids[0], STORE_FILE_COLLAPSED, &fd, &size), 0);
	assert_int_equal(store__delete(s, ids[0]), 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), (ssize_t)size);
	close(fd);
	assert_false(dir_exists(f, ids[0]));
	assert_int_equal(store__get(s, ids[0], &m), -ENOENT);
	assert_int_equal(store__delete(s, ids[0]), -ENOENT);
	assert_int_equal(store__delete(s, "nonsense"), -ENOENT);
	assert_int_equal(store__open_file(s, ids[0], STORE_FILE_PPROF, &fd, &size), -ENOENT);
	assert_int_equal(store__count(s), 1);
	assert_int_equal(count_tmp(f), 0);
	store__free(s);
	s = open_store(f, 0, 0);
	assert_int_equal(store__count(s), 1);
	assert_int_equal(store__remove_all(s), 0);
	assert_int_equal(store__count(s), 0);
	assert_int_equal(access(f->store, F_OK), 0);
	assert_false(dir_exists(f, "")); /* DIR/profiles is gone */
	store__free(s);
}

static void test_add_errors(void **state)
{
	static const struct {
		const char *remove;	/* file taken out of the capture directory */
		const char *service;
		const char *id;		/* preset id */
		int ret;
	} cases[] = {
		{ "profile.pb.gz", "a", "", -ENOENT },
		{ "profile.collapsed", "a", "", -ENOENT },
		{ "summary.json", "a", "", -ENOENT },
		{ "flamegraph.html", "a", "", 0 },	/* optional */
		{ NULL, "", "", -EINVAL },		/* no service */
		{ NULL, "a", "not-an-id", -EINVAL },
		{ NULL, "a", "20261129T174501Z-aaaaaa", 0 },
		{ NULL, "a", "20261129T174501Z-aaaaaa", -EEXIST }, /* already used */
	};
	struct fx *f = *state;
	struct store *s = open_store(f, 0, 0);
	char dir[200], id[STORE_ID_SIZE], path[256];
	struct store_meta m;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(dir, sizeof(dir), "%s/case%zu", f->root, i);
		make_files(dir, true);
		if (cases[i].remove) {
			snprintf(path, sizeof(path), "%s/%s", dir, cases[i].remove);
			assert_int_equal(unlink(path), 0);
		}
		meta_for(&m, cases[i].service, (int)i);
		snprintf(m.id, sizeof(m.id), "%s", cases[i].id);
		memset(id, 'x', sizeof(id));
		assert_int_equal(store__add(s, &m, dir, id), cases[i].ret);
		if (cases[i].ret == 0 && cases[i].id[0])
			assert_string_equal(id, cases[i].id);
		if (cases[i].ret)
			assert_int_equal(id[0], 'x'); /* untouched */
		assert_int_equal(count_tmp(f), 0);
	}
	/* a missing capture directory */
	meta_for(&m, "a", 0);
	assert_int_equal(store__add(s, &m, "/nonexistent/capture", id), -ENOENT);
	/* a capture file that is a directory, not a file */
	snprintf(dir, sizeof(dir), "%s/casedir", f->root);
	make_files(dir, false);
	snprintf(path, sizeof(path), "%s/profile.collapsed", dir);
	unlink(path);
	mkdir(path, 0755);
	assert_int_equal(store__add(s, &m, dir, id), -EINVAL);
	assert_int_equal(count_tmp(f), 0);
	/* control characters and broken UTF-8 are made safe for meta.json */
	snprintf(m.answer, sizeof(m.answer), "bad\n\xff\xc3(utf8 \xe2\x82\xac");
	assert_int_equal(store__add(s, &m, f->files, id), 0);
	assert_int_equal(store__get(s, id, &m), 0);
	assert_string_equal(m.answer, "bad??" "?(utf8 \xe2\x82\xac");
	store__free(s);
}

static void test_new_errors(void **state)
{
	struct fx *f = *state;
	struct store_opts o = { 0 };
	struct store *s = NULL;
	char path[200];

	assert_int_equal(store__new(NULL, &s), -EINVAL);
	assert_int_equal(store__new(&o, &s), -EINVAL);
	/* unwritable: a path below a regular file */
	snprintf(path, sizeof(path), "%s/profile.pb.gz/store", f->files);
	o.dir = path;
	assert_int_equal(store__new(&o, &s), -ENOTDIR);
	assert_null(s);
	store__free(NULL);
}

struct thr {
	struct fx *f;
	struct store *s;
	char service[16];
	int failures;
};

static void *adder(void *arg)
{
	struct thr *t = arg;
	char id[STORE_ID_SIZE];
	struct store_meta m;
	int i;

	for (i = 0; i < 20; i++) {
		meta_for(&m, t->service, i);
		t->failures += store__add(t->s, &m, t->f->files, id) != 0;
	}
	return NULL;
}

static void *lister(void *arg)
{
	struct thr *t = arg;
	struct store_meta out[16];
	size_t n, i;
	int k;

	for (k = 0; k < 200; k++) {
		n = store__list(t->s, NULL, 0, out, 16, NULL);
		for (i = 1; i < n; i++)
			t->failures += out[i - 1].created_ns <= out[i].created_ns;
		if (n)
			store__delete(t->s, out[n - 1].id);
	}
	return NULL;
}

/* The API thread and the capture thread use the store at once. */
static void test_threads(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f, 10, 0);
	struct thr t[3] = { { f, s, "a", 0 }, { f, s, "b", 0 }, { f, s, "", 0 } };
	pthread_t th[3];
	int i;

	assert_int_equal(pthread_create(&th[0], NULL, adder, &t[0]), 0);
	assert_int_equal(pthread_create(&th[1], NULL, adder, &t[1]), 0);
	assert_int_equal(pthread_create(&th[2], NULL, lister, &t[2]), 0);
	for (i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].failures, 0);
	}
	assert_true(store__count(s) <= 20);
	assert_int_equal(count_tmp(f), 0);
	store__free(s);
	/* what is on disk is what was in the index */
	s = open_store(f, 10, 0);
	assert_true(store__count(s) <= 20);
	store__free(s);
}

static void test_meta_parse(void **state)
{
	static const struct {
		const char *json;
		int ret;
	} cases[] = {
		{ "{\"version\":1,\"id\":\"20261129T174501Z-a1b2c3\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"target\":{\"kind\":\"server\",\"description\":\"this server\"},\"start_ns\":1,"
		  "\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[\"go\"],\"sample_count\":5,"
		  "\"created_ns\":2}",
		  0 },
		{ "{\"version\":2,\"id\":\"20261129T174501Z-a1b2c3\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"target\":{\"kind\":\"server\",\"description\":\"this server\"},\"start_ns\":1,"
		  "\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[],\"sample_count\":5,"
		  "\"created_ns\":2}",
		  -EINVAL },
		{ "{\"version\":1,\"id\":\"../x\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"target\":{\"kind\":\"server\",\"description\":\"this server\"},\"start_ns\":1,"
		  "\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[],\"sample_count\":5,"
		  "\"created_ns\":2}",
		  -EINVAL },
		{ "{\"version\":1,\"id\":\"20261129T174501Z-a1b2c3\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"namespace\":\"shop\",\"target\":{\"kind\":\"service\",\"description\":\"Service s\"},"
		  "\"start_ns\":1,\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[],"
		  "\"sample_count\":5,\"created_ns\":2}",
		  0 },
		{ "{\"version\":1,\"id\":\"20261129T174501Z-a1b2c3\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"namespace\":7,\"target\":{\"kind\":\"service\",\"description\":\"Service s\"},"
		  "\"start_ns\":1,\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[],"
		  "\"sample_count\":5,\"created_ns\":2}",
		  -EINVAL },
		{ "{\"version\":1}", -EINVAL },
		{ "[]", -EINVAL },
		{ "", -EINVAL },
		{ "{\"version\":1,\"id\":\"20261129T174501Z-a1b2c3\",\"service\":\"s\",\"question\":\"cpu\","
		  "\"target\":{\"kind\":\"server\",\"description\":\"this server\"},\"start_ns\":1,"
		  "\"duration_seconds\":30,\"answer\":\"x\",\"languages\":[1],\"sample_count\":5,"
		  "\"created_ns\":2}",
		  -EINVAL },
	};
	struct store_meta m, back;
	char *text;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(store_meta_parse(cases[i].json, strlen(cases[i].json), &m),
				 cases[i].ret);
	}
	/* round trip */
	meta_for(&m, "billing", 7);
	snprintf(m.ns, sizeof(m.ns), "shop");
	snprintf(m.id, sizeof(m.id), "20261129T174501Z-a1b2c3");
	m.created_ns = 42;
	m.continuous = true;
	text = store_meta_json(&m);
	assert_non_null(text);
	assert_int_equal(store_meta_parse(text, strlen(text), &back), 0);
	assert_memory_equal(&m, &back, sizeof(m));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test_setup_teardown(test_add_list_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_per_namespace, setup, teardown),
		cmocka_unit_test(test_of_service),
		cmocka_unit_test_setup_teardown(test_max_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_entries_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test(test_meta_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
