// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "daemon/agent/sink.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_valid_id(void **state)
{
	static const struct { const char *id; bool ok; } cases[] = {
		{ "a", true },
		{ "prof-2024.05_01", true },
		{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true }, /* 64 */
		{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0", false },
		{ "", false },
		{ NULL, false },
		{ ".hidden", false },
		{ "a/b", false },
		{ "../etc", false },
		{ "sp ace", false },
		{ "ü", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_valid_id(cases[i].id), cases[i].ok);
	}
}

static void test_item_name(void **state)
{
	static const struct { uint64_t seq; const char *id; size_t size; int ret; const char *name; }
	cases[] = {
		{ 1, "abc", 64, 24, "00000000000000000001-abc" },
		{ 42, "p-1", 64, 24, "00000000000000000042-p-1" },
		{ UINT64_MAX, "x", 64, 22, "18446744073709551615-x" },
		{ 1, "abc", 24, -ENAMETOOLONG, NULL },
		{ 1, "a/b", 64, -EINVAL, NULL },
		{ 1, "", 64, -EINVAL, NULL },
	};
	char buf[SINK_NAME_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_item_name(cases[i].seq, cases[i].id, buf, cases[i].size),
				 cases[i].ret);
		if (cases[i].ret > 0)
			assert_string_equal(buf, cases[i].name);
	}
}

static void test_parse_item_name(void **state)
{
	static const struct { const char *name; int ret; uint64_t seq; const char *id; } cases[] = {
		{ "00000000000000000001-abc", 0, 1, "abc" },
		{ "00000000000000001000-prof-1.x", 0, 1000, "prof-1.x" },
		{ "18446744073709551615-x", 0, UINT64_MAX, "x" },
		{ "18446744073709551616-x", -EINVAL, 0, NULL },		/* overflow */
		{ "0000000000000000001-abc", -EINVAL, 0, NULL },		/* 19 digits */
		{ "00000000000000000001abc", -EINVAL, 0, NULL },
		{ "00000000000000000001-", -EINVAL, 0, NULL },
		{ "00000000000000000001-.x", -EINVAL, 0, NULL },
		{ ".tmp-00000000000000000001-abc-Xy12Ab", -EINVAL, 0, NULL },
		{ "dead", -EINVAL, 0, NULL },
		{ "seq", -EINVAL, 0, NULL },
		{ "", -EINVAL, 0, NULL },
	};
	char id[SINK_ID_MAX + 1];
	uint64_t seq;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_parse_item_name(cases[i].name, &seq, id), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(seq, cases[i].seq);
			assert_string_equal(id, cases[i].id);
		}
	}
}

static void test_classify(void **state)
{
	static const struct { long status; enum sink_verdict v; } cases[] = {
		{ 200, SINK_OK }, { 201, SINK_OK }, { 202, SINK_OK }, { 204, SINK_OK },
		{ 0, SINK_RETRY },		/* no response */
		{ 100, SINK_RETRY }, { 301, SINK_RETRY }, { 307, SINK_RETRY },
		{ 400, SINK_PERMANENT }, { 410, SINK_PERMANENT }, { 413, SINK_PERMANENT },
		{ 415, SINK_PERMANENT }, { 422, SINK_PERMANENT }, { 499, SINK_PERMANENT },
		{ 401, SINK_RETRY }, { 403, SINK_RETRY }, { 404, SINK_RETRY }, { 405, SINK_RETRY },
		{ 408, SINK_RETRY }, { 409, SINK_RETRY }, { 425, SINK_RETRY }, { 429, SINK_RETRY },
		{ 500, SINK_RETRY }, { 502, SINK_RETRY }, { 503, SINK_RETRY }, { 504, SINK_RETRY },
		{ 999, SINK_RETRY }, { -1, SINK_RETRY },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_classify(cases[i].status), cases[i].v);
	}
}

static void test_backoff(void **state)
{
	static const struct {
		unsigned attempt, base, cap;
		long long retry_after;
		uint32_t rnd;
		uint64_t ms;
	} cases[] = {
		{ 1, 1000, 300000, -1, 0, 0 },
		{ 1, 1000, 300000, -1, UINT32_MAX, 1000 },
		{ 1, 1000, 300000, -1, 1u << 31, 500 },
		{ 2, 1000, 300000, -1, UINT32_MAX, 2000 },
		{ 5, 1000, 300000, -1, UINT32_MAX, 16000 },
		{ 9, 1000, 300000, -1, UINT32_MAX, 256000 },
		{ 10, 1000, 300000, -1, UINT32_MAX, 300000 },	/* capped */
		{ 1000, 1000, 300000, -1, UINT32_MAX, 300000 },	/* no overflow */
		{ 1000, 1000, 300000, -1, 1u << 31, 150000 },
		{ 0, 1000, 300000, -1, UINT32_MAX, 1000 },	/* 0 counts as the first */
		{ 1, 1000, 300000, 30, 0, 30000 },		/* Retry-After is a floor */
		{ 1, 1000, 300000, 0, 1u << 31, 500 },
		{ 12, 1000, 300000, 2, UINT32_MAX, 300000 },	/* longer jitter wins */
		{ 1, 1000, 300000, 1LL << 40, 0, SINK_RETRY_AFTER_MAX_S * 1000ULL },
		{ 3, 0, 0, -1, UINT32_MAX, 0 },
	};
	uint32_t r = 12345;
	unsigned a;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_backoff_ms(cases[i].attempt, cases[i].base, cases[i].cap,
						 cases[i].retry_after, cases[i].rnd),
				 cases[i].ms);
	}
	/* Full jitter: always within [0, min(cap, base * 2^(attempt-1))], and spread out. */
	for (a = 1; a <= 20; a++) {
		uint64_t ceil = a >= 20 ? 300000 : 1000ULL << (a - 1), lo = UINT64_MAX, hi = 0, d;

		if (ceil > 300000)
			ceil = 300000;
		for (k = 0; k < 2000; k++) {
			r ^= r << 13, r ^= r >> 17, r ^= r << 5;
			d = sink_backoff_ms(a, 1000, 300000, -1, r);
			assert_true(d <= ceil);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		assert_true(lo < ceil / 10 && hi > ceil - ceil / 10);
	}
}

static void test_retry_after(void **state)
{
	const time_t now = 1445412480;	/* Wed, 21 Oct 2015 07:28:00 GMT */
	static const struct { const char *v; long long ret; } cases[] = {
		{ "120", 120 },
		{ "0", 0 },
		{ " 5 \r\n", 5 },
		{ "3600", 3600 },
		{ "3601", SINK_RETRY_AFTER_MAX_S },
		{ "99999999999999999999999", SINK_RETRY_AFTER_MAX_S },
		{ "Wed, 21 Oct 2015 07:30:00 GMT", 120 },		/* IMF-fixdate */
		{ "Wednesday, 21-Oct-15 07:29:00 GMT", 60 },		/* RFC 850 */
		{ "Wed Oct 21 07:28:30 2015", 30 },			/* asctime */
		{ "Wed, 21 Oct 2015 07:00:00 GMT", 0 },			/* in the past */
		{ "Thu, 22 Oct 2015 07:28:00 GMT", SINK_RETRY_AFTER_MAX_S },
		{ "", -EINVAL },
		{ "   ", -EINVAL },
		{ NULL, -EINVAL },
		{ "-5", -EINVAL },
		{ "1.5", -EINVAL },
		{ "12abc", -EINVAL },
		{ "soon", -EINVAL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_parse_retry_after(cases[i].v, now), cases[i].ret);
	}
}

static void test_rfc3339(void **state)
{
	static const struct { const char *s; int ret; long long t; } cases[] = {
		{ "2024-05-01T10:00:00Z", 0, 1714557600 },
		{ "2024-05-01t10:00:00z", 0, 1714557600 },
		{ "2024-05-01 10:00:00Z", 0, 1714557600 },
		{ "2024-05-01T10:00:00.123456Z", 0, 1714557600 },
		{ "2024-05-01T12:00:00+02:00", 0, 1714557600 },
		{ "2024-05-01T09:30:00-00:30", 0, 1714557600 },
		{ "1970-01-01T00:00:00Z", 0, 0 },
		{ "2016-12-31T23:59:60Z", 0, 1483228800 },	/* a leap second */
		/* errors */
		{ "", -EINVAL, 0 },
		{ "2024-05-01", -EINVAL, 0 },
		{ "2024-05-01T10:00:00", -EINVAL, 0 },
		{ "2024-05-01T10:00:00.Z", -EINVAL, 0 },
		{ "2024-05-01T10:00:00+0200", -EINVAL, 0 },
		{ "2024-05-01T10:00:00+24:00", -EINVAL, 0 },
		{ "2024-05-01T10:00:00Zjunk", -EINVAL, 0 },
		{ "2024-13-01T10:00:00Z", -EINVAL, 0 },
		{ "2024-05-32T10:00:00Z", -EINVAL, 0 },
		{ "2024-05-01T24:00:00Z", -EINVAL, 0 },
		{ "1969-12-31T23:59:59Z", -EINVAL, 0 },
		{ "2024/05/01T10:00:00Z", -EINVAL, 0 },
	};
	time_t t;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		t = -1;
		assert_int_equal(sink_parse_rfc3339(cases[i].s, &t), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal((long long)t, cases[i].t);
	}
}

static void test_metadata_range(void **state)
{
	static const struct { const char *json; int ret; long long from, until; } cases[] = {
		{ "{\"start\":\"2024-05-01T10:00:00Z\",\"duration\":30}", 0, 1714557600, 1714557630 },
		{ "{\"start\":\"2024-05-01T10:00:00.123Z\",\"duration_seconds\":10}", 0, 1714557600,
		  1714557610 },
		{ "{\"start\":\"2024-05-01T12:00:00+02:00\",\"duration\":5}", 0, 1714557600, 1714557605 },
		{ "{\"start\":\"2024-05-01T08:30:00-01:30\",\"duration\":5}", 0, 1714557600, 1714557605 },
		{ "{\"start\":1714557600,\"duration\":2.6}", 0, 1714557600, 1714557603 },
		{ "{\"start\":1714557600.9}", 0, 1714557600, 1714557601 },	/* at least 1 s */
		{ "{\"start\":1714557600,\"duration\":0}", 0, 1714557600, 1714557601 },
		{ "{\"start\":\"2024-05-01T10:00:00\",\"duration\":5}", -EINVAL, 0, 0 },	/* no zone */
		{ "{\"start\":\"2024-13-01T10:00:00Z\"}", -EINVAL, 0, 0 },
		{ "{\"start\":\"2024-05-01T10:00:00.Z\"}", -EINVAL, 0, 0 },
		{ "{\"start\":\"yesterday\"}", -EINVAL, 0, 0 },
		{ "{\"start\":-5}", -EINVAL, 0, 0 },
		{ "{\"duration\":5}", -EINVAL, 0, 0 },
		{ "[1,2]", -EINVAL, 0, 0 },
		{ "not json", -EINVAL, 0, 0 },
	};
	time_t from, until;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink_metadata_range(cases[i].json, &from, &until), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(from, cases[i].from);
			assert_int_equal(until, cases[i].until);
		}
	}
}

static void test_pyroscope_name(void **state)
{
	static const struct { const char *app, *json; size_t size; int ret; const char *name; }
	cases[] = {
		{ "slideops", "{\"node\":\"n1\",\"target\":{\"service\":\"billing\"},\"question\":\"cpu\"}",
		  256, 0, "slideops{node=n1,service=billing,question=cpu}" },
		{ NULL, "{\"node\":\"n1\",\"target\":\"web\"}", 256, 0, "slideops{node=n1,service=web}" },
		{ "s", "{\"node\":\"n1\",\"target\":{\"service\":\"billing\",\"namespace\":\"team-a\"}}",
		  256, 0, "s{node=n1,namespace=team-a,service=billing}" },
		{ "s", "{\"target\":{\"service\":\"billing\",\"namespace\":\"a}b,c\"}}", 256, 0,
		  "s{namespace=a_b_c,service=billing}" },
		{ "s", "{\"target\":{\"service\":\"billing\",\"namespace\":7}}", 256, 0,
		  "s{service=billing}" },
		{ "a", "{\"target\":{\"kind\":\"pid\",\"description\":\"pid 12 (spin), x=y}\"}}", 256, 0,
		  "a{service=pid_12__spin___x_y_}" },
		{ "a", "{\"node\":\"ip-10-0-0-1.eu-west-1.compute.internal\",\"question\":\"\"}", 256,
		  0, "a{node=ip-10-0-0-1.eu-west-1.compute.internal}" },
		{ "a", "{}", 256, 0, "a{}" },
		{ "a", "{\"node\":\"n1\"}", 9, -ENAMETOOLONG, NULL },
		{ "a", "{\"node\":\"n1\"}", 10, -ENAMETOOLONG, NULL },	/* no room for the NUL */
		{ "a", "{\"node\":\"n1\"}", 11, 0, "a{node=n1}" },
		{ "a", "[]", 256, -EINVAL, NULL },
		{ "a", "{", 256, -EINVAL, NULL },
	};
	char buf[256];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = sink_pyroscope_name(cases[i].app, cases[i].json, buf, cases[i].size);
		if (cases[i].ret) {
			assert_int_equal(ret, cases[i].ret);
		} else {
			assert_int_equal(ret, (int)strlen(cases[i].name));
			assert_string_equal(buf, cases[i].name);
		}
	}
}

/* ---- Spool, on a temporary directory, without a sender ------------------------------------ */

struct fixture {
	char dir[64];
	char spool[128];
	char profile[128];
	char notgz[128];
};

static int write_bytes(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fwrite(p, 1, len, f);
	return fclose(f) ? -errno : 0;
}

static int setup(void **state)
{
	static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 'p', 'r', 'o', 'f', 'i', 'l',
					    'e', 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sink.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->spool, sizeof(f->spool), "%s/spool", f->dir);
	snprintf(f->profile, sizeof(f->profile), "%s/profile.pb.gz", f->dir);
	snprintf(f->notgz, sizeof(f->notgz), "%s/profile.txt", f->dir);
	if (write_bytes(f->profile, gz, sizeof(gz)) || write_bytes(f->notgz, "hello", 5))
		return -1;
	*state = f;
	return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	nftw(f->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* The item directory names in @dir, sorted, space separated. */
static void list_items(const char *dir, char *out, size_t size)
{
	struct dirent **names;
	uint64_t seq;
	char id[SINK_ID_MAX + 1];
	int n, i;
	size_t len = 0;

	out[0] = '\0';
	n = scandir(dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (!sink_parse_item_name(names[i]->d_name, &seq, id))
			len += snprintf(out + len, size - len, "%s%s", len ? " " : "",
					names[i]->d_name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static void submit_ids(struct sink *s, const char *profile, const char *const *ids, size_t n)
{
	char meta[256];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(meta, sizeof(meta), "{\"id\":\"%s\",\"node\":\"n1\",\"question\":\"cpu\"}",
			 ids[i]);
		assert_int_equal(sink__submit(s, meta, profile), 0);
	}
}

static void test_new_errors(void **state)
{
	struct fixture *f = *state;
	const struct {
		struct sink_opts o;
		int ret;
	} cases[] = {
		{ { .spool_dir = NULL }, -EINVAL },
		{ { .spool_dir = "" }, -EINVAL },
		{ { .spool_dir = f->spool, .cluster_api_url = "ftp://x/" }, -EINVAL },
		{ { .spool_dir = f->spool, .pyroscope_url = "localhost:4040" }, -EINVAL },
		{ { .spool_dir = "/proc/version/spool" }, -ENOTDIR },
		{ { .spool_dir = f->spool, .cluster_api_url = "https://api.example/", .no_sender = true },
		  0 },
	};
	struct sink *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		s = NULL;
		assert_int_equal(sink__new(&cases[i].o, &s), cases[i].ret);
		if (cases[i].ret)
			assert_null(s);
		sink__free(s);
	}
	assert_int_equal(sink__new(NULL, &s), -EINVAL);
	sink__free(NULL);
}

static void test_submit(void **state)
{
	struct fixture *f = *state;
	struct sink_opts o = { .spool_dir = f->spool };
	char path[256], got[512], *text;
	const struct {
		const char *meta, *profile;
		int ret;
	} cases[] = {
		{ "{\"id\":\"p1\",\"node\":\"n\"}", f->profile, 0 },
		{ "{\"id\":\"../escape\"}", f->profile, 0 },	/* gets a generated id */
		{ "{}", f->profile, 0 },
		{ "[]", f->profile, -EINVAL },
		{ "not json", f->profile, -EINVAL },
		{ "\"str\"", f->profile, -EINVAL },
		{ "{\"id\":\"p2\"}", "/nonexistent/profile.pb.gz", -ENOENT },
		{ "{\"id\":\"p3\"}", f->notgz, -EINVAL },
	};
	struct sink_stats st;
	struct sink *s;
	size_t i, len;

	assert_int_equal(sink__new(&o, &s), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(sink__submit(s, cases[i].meta, cases[i].profile), cases[i].ret);
	}
	assert_int_equal(sink__submit(NULL, "{}", f->profile), -EINVAL);
	sink__stats(s, &st);
	assert_int_equal(st.queued, 3);
	list_items(f->spool, got, sizeof(got));
	/* seq 1 keeps its id; 2 and 3 get 32 hex digits, also written into the metadata. */
	assert_int_equal(strncmp(got, "00000000000000000001-p1 00000000000000000002-", 45), 0);
	assert_int_equal(strlen(got), 3 * 20 + 3 + 2 + 32 + 32 + 2);
	snprintf(path, sizeof(path), "%s/%.53s/metadata.json", f->spool, got + 24);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 4096, &text, &len), 0);
	snprintf(path, sizeof(path), "\"id\":\"%.32s\"", got + 24 + 21);
	assert_non_null(strstr(text, path));
	free(text);
	snprintf(path, sizeof(path), "%s/seq", f->spool);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 64, &text, &len), 0);
	assert_string_equal(text, "4\n");
	free(text);
	/* No sender: drain cannot empty the spool. */
	assert_int_equal(sink__drain(s, 10), -ETIMEDOUT);
	sink__free(s);
}

static void test_rescan_after_crash(void **state)
{
	static const char *const ids[] = { "a", "b", "c" };
	struct fixture *f = *state;
	struct sink_opts o = { .spool_dir = f->spool };
	char path[256], got[512];
	struct sink_stats st;
	struct sink *s;

	assert_int_equal(sink__new(&o, &s), 0);
	submit_ids(s, f->profile, ids, 3);
	sink__free(s);

	/* What a crash can leave: a half-written item (temp dir), an item directory that lost a
	 * file, and files that are none of the sink's business. */
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000004-d-Ab12Cd", f->spool);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000004-d-Ab12Cd/metadata.json", f->spool);
	assert_int_equal(write_bytes(path, "{\"id\":", 6), 0);
	snprintf(path, sizeof(path), "%s/00000000000000000009-partial", f->spool);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/00000000000000000009-partial/metadata.json", f->spool);
	assert_int_equal(write_bytes(path, "{}", 2), 0);
	snprintf(path, sizeof(path), "%s/README", f->spool);
	assert_int_equal(write_bytes(path, "x", 1), 0);

	assert_int_equal(sink__new(&o, &s), 0);
	sink__stats(s, &st);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.queued_bytes, 3 * (strlen("{\"id\":\"a\",\"node\":\"n1\",\"question\":\"cpu\"}") + 20));
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000004-d-Ab12Cd", f->spool);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/00000000000000000009-partial", f->spool);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/README", f->spool);
	assert_int_equal(access(path, F_OK), 0);
	/* The order continues after a restart. */
	submit_ids(s, f->profile, (const char *const[]){ "d" }, 1);
	list_items(f->spool, got, sizeof(got));
	assert_string_equal(got, "00000000000000000001-a 00000000000000000002-b "
				 "00000000000000000003-c 00000000000000000004-d");
	sink__free(s);

	/* Everything delivered (removed), and the sequence still goes on from the seq file. */
	snprintf(path, sizeof(path), "rm -rf %s/0000*", f->spool);
	assert_int_equal(system(path), 0);
	assert_int_equal(sink__new(&o, &s), 0);
	submit_ids(s, f->profile, (const char *const[]){ "e" }, 1);
	list_items(f->spool, got, sizeof(got));
	assert_string_equal(got, "00000000000000000005-e");
	sink__free(s);

	/* A lost or garbled seq file: the highest item (or dead/ item) still wins. */
	snprintf(path, sizeof(path), "%s/seq", f->spool);
	assert_int_equal(write_bytes(path, "garbage", 7), 0);
	snprintf(path, sizeof(path), "%s/dead/00000000000000000011-old", f->spool);
	assert_int_equal(mkdir_p(path), 0);
	assert_int_equal(sink__new(&o, &s), 0);
	submit_ids(s, f->profile, (const char *const[]){ "f" }, 1);
	list_items(f->spool, got, sizeof(got));
	assert_string_equal(got, "00000000000000000005-e 00000000000000000012-f");
	sink__free(s);
}

static void test_bound(void **state)
{
	static const char *const ids[] = { "i1", "i2", "i3", "i4", "i5" };
	struct fixture *f = *state;
	const size_t item = strlen("{\"id\":\"i1\",\"node\":\"n1\",\"question\":\"cpu\"}") + 20;
	struct sink_opts o = { .spool_dir = f->spool, .spool_max_bytes = item * 5 / 2 };
	char path[256], got[512], *text;
	struct sink_stats st;
	struct sink *s;
	size_t len;

	assert_int_equal(sink__new(&o, &s), 0);
	submit_ids(s, f->profile, ids, 5);
	sink__stats(s, &st);
	assert_int_equal(st.queued, 2);
	assert_int_equal(st.queued_bytes, 2 * item);
	assert_int_equal(st.dropped, 3);
	list_items(f->spool, got, sizeof(got));
	assert_string_equal(got, "00000000000000000004-i4 00000000000000000005-i5");
	snprintf(path, sizeof(path), "%s/dropped.log", f->spool);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 65536, &text, &len), 0);
	assert_non_null(strstr(text, " dropped id=i1 seq=1 "));
	assert_non_null(strstr(text, " dropped id=i2 seq=2 "));
	assert_non_null(strstr(text, " dropped id=i3 seq=3 "));
	assert_null(strstr(text, "id=i4"));
	free(text);
	sink__free(s);

	/* A lower bound at start drops the oldest of what is there. */
	o.spool_max_bytes = item + 1;
	assert_int_equal(sink__new(&o, &s), 0);
	sink__stats(s, &st);
	assert_int_equal(st.queued, 1);
	assert_int_equal(st.dropped, 1);
	list_items(f->spool, got, sizeof(got));
	assert_string_equal(got, "00000000000000000005-i5");
	/* An item larger than the whole bound is refused, and nothing is dropped for it. */
	assert_int_equal(sink__submit(s, "{\"id\":\"this-one-is-too-big-for-the-spool\"}", f->profile),
			 -EFBIG);
	sink__stats(s, &st);
	assert_int_equal(st.queued, 1);
	assert_int_equal(st.dropped, 1);
	sink__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_id),
		cmocka_unit_test(test_item_name),
		cmocka_unit_test(test_parse_item_name),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_metadata_range),
		cmocka_unit_test(test_pyroscope_name),
		cmocka_unit_test_setup_teardown(test_new_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rescan_after_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
