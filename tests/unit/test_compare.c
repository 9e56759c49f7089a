// SPDX-License-Identifier: Apache-2.0
/* daemon/capture/compare.c: loading two stored profiles, comparing them, the answer, the files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "base/fileio.h"
#include "base/text.h"
#include "daemon/capture/compare.h"
#include "profile/diff.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "tests/unit/fixtures.h"

#define T2020 (1577836800LL * 1000000000LL) /* 2020-01-01 00:00:00 UTC */

/* One stack, leaf first ("leaf;caller;main"), and its count. */
struct st {
	const char *frames;
	int64_t count;
};

/* A profile of @n stacks, of sample type @type/@unit ("samples"/"count" when NULL). */
static struct profile *build(const struct st *s, size_t n, const char *type, const char *unit)
{
	struct profile_opts po = { .sample_type = { type },
				   .sample_unit = { unit },
				   .nvalues = type ? 1 : 0,
				   .time_nanos = T2020 };
	struct prof_labels l = { .owner = "Unit app.service", .process = "app", .pid = 7 };
	struct profile *p;
	size_t i;

	assert_int_equal(profile__new(&po, &p), 0);
	for (i = 0; i < n; i++) {
		char buf[256], *save = NULL, *tok;
		int64_t v[2] = { s[i].count, 0 };
		uint32_t ids[16];
		size_t nf = 0;

		snprintf(buf, sizeof(buf), "%s", s[i].frames);
		for (tok = strtok_r(buf, ";", &save); tok && nf < 16;
		     tok = strtok_r(NULL, ";", &save)) {
			struct prof_frame_info fi = { .function = tok, .mapping = "/usr/bin/app" };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			ids[nf++] = (uint32_t)id;
		}
		assert_int_equal(profile__add(p, ids, nf, &l, v), 0);
	}
	return p;
}

/* The gunzipped @len bytes at @gz (a malloc'd buffer, its length in @out_len). */
static uint8_t *gunzip(const uint8_t *gz, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream zs = { 0 };

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static char root[] = "/tmp/test_compare.XXXXXX";

/* ROOT/@name, into @buf. */
static const char *at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", root, name);
	return buf;
}

/* A profile directory ROOT/@name: profile.pb.gz of @p and, when @summary is set, that text as
 * summary.json. Frees @p. */
static void make_dir(const char *name, struct profile *p, const char *summary)
{
	char dir[256], path[300];

	assert_int_equal(mkdir(at(dir, sizeof(dir), name), 0755), 0);
	if (p) {
		snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
		assert_int_equal(pprof_write_file(p, path), 0);
	}
	if (summary) {
		snprintf(path, sizeof(path), "%s/summary.json", dir);
		fx_write(path, summary, strlen(summary));
	}
	profile__free(p);
}

static const struct st hot[] = { { "hot;main", 30 }, { "cold;main", 10 } };
static const struct st moved[] = { { "hot;main", 10 }, { "new;main", 30 } };

#define CPU "{\"question\":\"cpu\",\"target\":{\"kind\":\"pids\"}}"

static int setup(void **state)
{
	uint8_t *gz, *raw;
	size_t len, rlen;
	char path[256], big[300];
	struct profile *p;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(root));
	make_dir("cpu1", build(hot, 2, NULL, NULL), CPU);
	make_dir("cpu2", build(moved, 2, NULL, NULL), CPU);
	make_dir("server", build(hot, 2, NULL, NULL),
		 "{\"question\":\"cpu\",\"target\":{\"kind\":\"server\"}}");
	make_dir("nosum", build(moved, 2, NULL, NULL), NULL);
	make_dir("held", build(hot, 2, "inuse_space", "bytes"), "{\"question\":\"memory-held\"}");
	make_dir("wall", build(hot, 2, "wall", "nanoseconds"), "{\"question\":\"wall\"}");
	make_dir("cpuwall", build(hot, 2, "wall", "nanoseconds"), CPU); /* types and question disagree */
	make_dir("badsum", build(hot, 2, NULL, NULL), "{\"question\":");
	make_dir("arraysum", build(hot, 2, NULL, NULL), "[\"cpu\"]");
	make_dir("longq", build(hot, 2, NULL, NULL),
		 "{\"question\":\"a-question-of-more-than-thirty-two-bytes\"}");
	make_dir("empty", NULL, NULL);
	make_dir("bigsum", build(hot, 2, NULL, NULL), NULL);
	fd = open(at(big, sizeof(big), "bigsum/summary.json"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, COMPARE_MAX_SUMMARY_BYTES + 1), 0);
	close(fd);

	p = build(hot, 2, NULL, NULL);
	assert_int_equal(pprof_encode(p, &gz, &len), 0);
	fx_write(at(path, sizeof(path), "hot.pb.gz"), gz, len);
	raw = gunzip(gz, len, &rlen);
	fx_write(at(path, sizeof(path), "hot.pb"), raw, rlen);
	free(raw);
	free(gz);
	profile__free(p);
	fx_write(at(path, sizeof(path), "empty.pb.gz"), "", 0);
	fx_write(at(path, sizeof(path), "broken.pb.gz"), "\x1f\x8b\x08\x00garbage", 11);
	assert_int_equal(mkfifo(at(path, sizeof(path), "fifo"), 0644), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fx_rm_rf(root);
}

static void test_load(void **state)
{
	static const struct {
		const char *name;
		int ret;
		const char *question, *label; /* label: its start */
		bool owner_root;
		const char *err; /* a part of the message */
	} cases[] = {
		{ "cpu1", 0, "cpu", "cpu1 (2020-01-01 00:00:00 UTC)", false, NULL },
		{ "cpu1/", 0, "cpu", "cpu1 (2020-01-01 00:00:00 UTC)", false, NULL },
		{ "server", 0, "cpu", "server (", true, NULL },
		{ "nosum", 0, "", "nosum (", false, NULL },
		{ "held", 0, "memory-held", "held (", false, NULL },
		{ "longq", 0, "a-question-of-more-than-thirty-", "longq (", false, NULL },
		{ "hot.pb.gz", 0, "", "hot.pb.gz (2020-01-01 00:00:00 UTC)", false, NULL },
		{ "hot.pb", 0, "", "hot.pb (", false, NULL },
		{ "cpu1/profile.pb.gz", 0, "", "cpu1/profile.pb.gz (", false, NULL },
		{ "nosuch", -ENOENT, NULL, NULL, false, "nosuch: no such file or directory" },
		{ "nosuch/profile.pb.gz", -ENOENT, NULL, NULL, false, "no such file" },
		{ "empty", -EINVAL, NULL, NULL, false, "is not a profile directory: it has no profile.pb.gz" },
		{ "badsum", -EINVAL, NULL, NULL, false, "badsum/summary.json is not a profile's summary.json" },
		{ "arraysum", -EINVAL, NULL, NULL, false, "summary.json is not a profile's" },
		{ "bigsum", -EFBIG, NULL, NULL, false, "cannot read" },
		{ "empty.pb.gz", -EINVAL, NULL, NULL, false, "empty.pb.gz is not a pprof profile" },
		{ "broken.pb.gz", -EINVAL, NULL, NULL, false, "broken.pb.gz is not a pprof profile" },
		{ "cpu1/summary.json", -EINVAL, NULL, NULL, false, "is not a pprof profile" },
		{ "fifo", -EINVAL, NULL, NULL, false, "neither a profile directory nor a pprof file" },
	};
	struct compare_side s, untouched = { .label = "x" };
	char path[256], err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu: %s\n", i, cases[i].name);
		s = untouched;
		err[0] = '\0';
		assert_int_equal(compare_load(at(path, sizeof(path), cases[i].name), &s, err,
					      sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret) {
			print_message("  %s\n", err);
			assert_non_null(strstr(err, cases[i].err));
			assert_memory_equal(&s, &untouched, sizeof(s));
			continue;
		}
		assert_non_null(s.p);
		assert_string_equal(s.question, cases[i].question);
		assert_true(!strncmp(s.label, cases[i].label, strlen(cases[i].label)));
		assert_int_equal(profile__opts(s.p)->owner_root, cases[i].owner_root);
		assert_int_equal(profile__total(s.p, 0), 40);
		compare_side_free(&s);
		assert_null(s.p);
	}
	assert_int_equal(compare_load(NULL, &s, err, sizeof(err)), -EINVAL);
	assert_int_equal(compare_load(path, NULL, NULL, 0), -EINVAL);
	compare_side_free(NULL);
}

static void test_profiles(void **state)
{
	static const struct {
		const char *base, *next;
		int ret;
		const char *err;
	} cases[] = {
		{ "cpu1", "cpu2", 0, NULL },
		{ "cpu1", "nosum", 0, NULL },	  /* a question unknown: the sample types decide */
		{ "hot.pb.gz", "cpu2", 0, NULL },
		{ "cpu1", "held", -EINVAL,
		  "these profiles answer different questions (cpu and memory-held): compare two "
		  "profiles of the same question" },
		{ "wall", "cpu1", -EINVAL, "(wall and cpu)" },
		{ "nosum", "held", -EINVAL, "(samples and inuse_space)" },
		{ "hot.pb.gz", "wall", -EINVAL, "(samples and wall)" },
		{ "cpu1", "cpuwall", -EINVAL, "(samples and wall)" }, /* one question, two types */
	};
	struct compare_side a, b;
	struct prof_diff *d;
	char path[256], err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu: %s %s\n", i, cases[i].base, cases[i].next);
		assert_int_equal(compare_load(at(path, sizeof(path), cases[i].base), &a, err,
					      sizeof(err)),
				 0);
		assert_int_equal(compare_load(at(path, sizeof(path), cases[i].next), &b, err,
					      sizeof(err)),
				 0);
		d = NULL;
		err[0] = '\0';
		assert_int_equal(compare_profiles(&a, &b, &d, err, sizeof(err)), cases[i].ret);
		if (cases[i].ret) {
			print_message("  %s\n", err);
			assert_non_null(strstr(err, cases[i].err));
			assert_null(d);
		} else {
			assert_non_null(d);
		}
		prof_diff__free(d);
		compare_side_free(&a);
		compare_side_free(&b);
	}
	memset(&a, 0, sizeof(a));
	assert_int_equal(compare_profiles(&a, &a, &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(compare_profiles(NULL, NULL, NULL, NULL, 0), -EINVAL);
}

struct change {
	const char *name;
	double base_share, next_share;
};

/* The diff of two stack tables. */
static struct prof_diff *diff_of(const struct st *b, size_t nb, const struct st *n, size_t nn)
{
	struct profile *pb = build(b, nb, NULL, NULL), *pn = build(n, nn, NULL, NULL);
	struct prof_diff *d;

	assert_int_equal(prof_diff__new(pb, pn, &d), 0);
	profile__free(pb);
	profile__free(pn);
	return d;
}

static void check_list(const struct compare_change *got, size_t n, const struct change *want)
{
	size_t i, k = 0;

	while (k < COMPARE_TOP && want[k].name)
		k++;
	assert_int_equal(n, k);
	for (i = 0; i < n; i++) {
		print_message("  %s %f %f\n", got[i].name, got[i].base_share, got[i].next_share);
		assert_string_equal(got[i].name, want[i].name);
		assert_true(got[i].base_share > want[i].base_share - 1e-9 &&
			    got[i].base_share < want[i].base_share + 1e-9);
		assert_true(got[i].next_share > want[i].next_share - 1e-9 &&
			    got[i].next_share < want[i].next_share + 1e-9);
	}
}

static void test_top_changes(void **state)
{
	static const struct {
		struct st b[8], n[8];
		size_t nb, nn;
		struct change grew[COMPARE_TOP + 1], shrank[COMPARE_TOP + 1];
	} cases[] = {
		/* 0: hot and cold gave way to new */
		{ { { "hot;main", 30 }, { "cold;main", 10 } }, { { "hot;main", 10 }, { "new;main", 30 } },
		  2, 2, { { "new", 0, 0.75 } }, { { "hot", 0.75, 0.25 }, { "cold", 0.25, 0 } } },
		/* 1: equal: nothing changed */
		{ { { "hot;main", 30 }, { "cold;main", 10 } }, { { "hot;main", 60 }, { "cold;main", 20 } },
		  2, 2, { { NULL } }, { { NULL } } },
		/* 2: under 0.1 point is no change */
		{ { { "a", 1000 }, { "b", 1000 } }, { { "a", 1001 }, { "b", 999 } }, 2, 2, { { NULL } },
		  { { NULL } } },
		/* 3: a leaf's self share sums over its stacks */
		{ { { "a;x", 10 }, { "a;y", 10 }, { "b", 20 } }, { { "b", 40 } }, 3, 1,
		  { { "b", 0.5, 1 } }, { { "a", 0.5, 0 } } },
		/* 4: at most COMPARE_TOP, the largest first, ties by name */
		{ { { "z", 1 } },
		  { { "g", 10 }, { "f", 10 }, { "e", 10 }, { "d", 20 }, { "c", 10 }, { "b", 10 },
		    { "a", 10 } },
		  1, 7,
		  { { "d", 0, 0.25 }, { "a", 0, 0.125 }, { "b", 0, 0.125 }, { "c", 0, 0.125 },
		    { "e", 0, 0.125 } },
		  { { "z", 1, 0 } } },
		/* 5: an empty new profile: everything shrank */
		{ { { "a", 3 }, { "b", 1 } }, { { NULL, 0 } }, 2, 0, { { NULL } },
		  { { "a", 0.75, 0 }, { "b", 0.25, 0 } } },
	};
	struct compare_top top;
	struct prof_diff *d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu\n", i);
		d = diff_of(cases[i].b, cases[i].nb, cases[i].n, cases[i].nn);
		assert_int_equal(compare_top_changes(d, &top), 0);
		check_list(top.grew, top.ngrew, cases[i].grew);
		check_list(top.shrank, top.nshrank, cases[i].shrank);
		prof_diff__free(d);
	}
	assert_int_equal(compare_top_changes(NULL, &top), -EINVAL);
	d = diff_of(hot, 2, hot, 2);
	assert_int_equal(compare_top_changes(d, NULL), -EINVAL);
	prof_diff__free(d);
}

static void test_answer(void **state)
{
	static const struct compare_change up = { "checkout_loop", 10, 990, 0.01, 0.99 };
	static const struct compare_change down = { "build_report", 750, 0, 0.75, 0 };
#define SHARES " Shares are of each profile's own total, so profiles of different lengths compare."
	static const struct {
		const char *question;
		bool grew, shrank;
		size_t size;
		const char *want;
	} cases[] = {
		{ "cpu", true, true, 1000,
		  "Compared with A, B spends more in checkout_loop (+98.0 points) and less in "
		  "build_report (\xe2\x88\x92" "75.0 points)." SHARES },
		{ "", true, false, 1000,
		  "Compared with A, B spends more in checkout_loop (+98.0 points)." SHARES },
		{ "wall", false, true, 1000,
		  "Compared with A, B spends less in build_report (\xe2\x88\x92" "75.0 points)." SHARES },
		{ "memory-held", true, true, 1000,
		  "Compared with A, B holds more memory in checkout_loop (+98.0 points) and less in "
		  "build_report (\xe2\x88\x92" "75.0 points)." SHARES },
		{ "memory-growth", false, true, 1000,
		  "Compared with A, B touches less new memory in build_report (\xe2\x88\x92"
		  "75.0 points)." SHARES },
		{ "cpu", false, false, 1000,
		  "Compared with A, B spends its time in the same places: no function's share "
		  "changed by 0.1 point or more." SHARES },
		{ "memory-alloc", false, false, 1000,
		  "Compared with A, B allocates in the same places: no function's share changed by "
		  "0.1 point or more." SHARES },
		/* cut at a character boundary: the minus sign does not fit whole */
		{ "cpu", true, true, 91,
		  "Compared with A, B spends more in checkout_loop (+98.0 points) and less in "
		  "build_report (" },
		{ "cpu", true, true, 1, "" },
	};
	struct compare_side a = { .label = "A" }, b = { .label = "B" };
	struct compare_top top;
	char buf[1000];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu\n", i);
		memset(&top, 0, sizeof(top));
		top.grew[0] = up;
		top.shrank[0] = down;
		top.ngrew = cases[i].grew;
		top.nshrank = cases[i].shrank;
		snprintf(a.question, sizeof(a.question), "%s", cases[i].question);
		n = compare_answer(&top, &a, &b, buf, cases[i].size);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
		assert_true(text_utf8_is_valid(buf, n));
	}
	assert_int_equal(compare_answer(&top, &a, &b, NULL, 0), 0);
}

/* diff.html and diff.collapsed; the page in asset mode; error rows. */
static void test_write(void **state)
{
	struct compare_side a, b;
	struct prof_diff *d;
	char path[512], dir[256], err[512], *text;
	char *page = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(compare_load(at(path, sizeof(path), "cpu1"), &a, err, sizeof(err)), 0);
	assert_int_equal(compare_load(at(path, sizeof(path), "cpu2"), &b, err, sizeof(err)), 0);
	assert_int_equal(compare_profiles(&a, &b, &d, err, sizeof(err)), 0);
	at(dir, sizeof(dir), "out/sub");
	assert_int_equal(compare_write_dir(d, &a, &b, dir, err, sizeof(err)), 0);

	snprintf(path, sizeof(path), "%s/diff.collapsed", dir);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 4096, &text, &len), 0);
	assert_string_equal(text, "main;cold 10 0\nmain;hot 30 10\nmain;new 0 30\n");
	free(text);
	snprintf(path, sizeof(path), "%s/diff.html", dir);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 1 << 20, &text, &len), 0);
	assert_non_null(strstr(text, "<title>Differential flame graph: What is using the CPU</title>"));
	assert_non_null(strstr(text, "{\"version\":1,\"diff\":true,\"unit\":\"samples\""));
	assert_non_null(strstr(text, "Compared with cpu1 (2020-01-01 00:00:00 UTC), cpu2 ("));
	assert_non_null(strstr(text, "spends more in new (+75.0 points) and less in hot"));
	assert_non_null(strstr(text, "<td>40 samples</td>"));
	assert_non_null(strstr(text, "Content-Security-Policy"));
	free(text);

	f = open_memstream(&page, &len);
	assert_int_equal(compare_write_page(d, &a, &b, "/ui", f), 0);
	fclose(f);
	assert_non_null(strstr(page, "<script src=\"/ui/flamegraph.js\"></script>"));
	assert_null(strstr(page, "Content-Security-Policy"));
	free(page);

	/* error rows: a directory that cannot be made, NULLs */
	snprintf(path, sizeof(path), "%s/diff.html/x", dir);
	assert_int_equal(compare_write_dir(d, &a, &b, path, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "cannot create"));
	assert_int_equal(compare_write_dir(NULL, &a, &b, dir, err, sizeof(err)), -EINVAL);
	assert_int_equal(compare_write_dir(d, &a, &b, NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(compare_write_page(d, &a, &b, NULL, NULL), -EINVAL);
	prof_diff__free(d);
	compare_side_free(&a);
	compare_side_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_top_changes),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
