// SPDX-License-Identifier: Apache-2.0
/*
 * The audit trail: the exact line for each kind of entry, escaping (a newline or a quote in a
 * name cannot forge a line or a field), invalid UTF-8, long fields, error rows, appending to an
 * existing file from several threads (every line whole), and the file's mode.
 */
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
#include <jansson.h>

#include "daemon/agent/audit.h"
#include "base/fileio.h"
#include "tests/unit/fixtures.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NOW (1764438301LL * 1000000000LL + 123456789LL) /* 2025-11-29T17:45:01.123Z */

static int64_t fake_clock(void *ctx)
{
	(void)ctx;
	return NOW;
}

static void test_format(void **state)
{
	static const struct {
		struct audit_entry e;
		int ret;
		const char *line;
	} cases[] = {
		{ { AUDIT_CAPTURE, "alice", "service:billing", "accepted", "question=cpu duration=30" },
		  0,
		  "{\"when\":\"2025-11-29T17:45:01.123Z\",\"who\":\"alice\",\"what\":\"capture\","
		  "\"target\":\"service:billing\",\"result\":\"accepted\","
		  "\"detail\":\"question=cpu duration=30\"}\n" },
		{ { AUDIT_DOWNLOAD, "bob", "20261129T174501Z-a1b2c3", "ok", NULL },
		  0,
		  "{\"when\":\"2025-11-29T17:45:01.123Z\",\"who\":\"bob\",\"what\":\"download\","
		  "\"target\":\"20261129T174501Z-a1b2c3\",\"result\":\"ok\"}\n" },
		{ { AUDIT_DELETE, "pod/shop/billing-7d9f", "x", "denied", "viewer" }, 0, NULL },
		{ { AUDIT_UPLOAD, "a", "b", "c", NULL }, 0, NULL },
		{ { AUDIT_REMOVE, "a", "profiler", "ok", NULL }, 0, NULL },
		/* a forged line stays inside its field */
		{ { AUDIT_DELETE, "eve\n{\"who\":\"root\"}", "x\"y", "ok", NULL },
		  0,
		  "{\"when\":\"2025-11-29T17:45:01.123Z\",\"who\":\"eve?{\\\"who\\\":\\\"root\\\"}\","
		  "\"what\":\"delete\",\"target\":\"x\\\"y\",\"result\":\"ok\"}\n" },
		{ { AUDIT_DELETE, "\xff\xc3(", "t", "ok", NULL },
		  0,
		  "{\"when\":\"2025-11-29T17:45:01.123Z\",\"who\":\"?" "?(\",\"what\":\"delete\","
		  "\"target\":\"t\",\"result\":\"ok\"}\n" },
		{ { AUDIT_WHAT_COUNT, "a", "b", "c", NULL }, -EINVAL, NULL },
		{ { AUDIT_CAPTURE, NULL, "b", "c", NULL }, -EINVAL, NULL },
		{ { AUDIT_CAPTURE, "a", NULL, "c", NULL }, -EINVAL, NULL },
		{ { AUDIT_CAPTURE, "a", "b", NULL, NULL }, -EINVAL, NULL },
	};
	char buf[AUDIT_LINE_MAX + 2];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = audit_format(&cases[i].e, NOW, buf, sizeof(buf));
		if (cases[i].ret) {
			assert_int_equal(ret, cases[i].ret);
			continue;
		}
		assert_true(ret > 0);
		assert_int_equal(strlen(buf), ret);
		if (cases[i].line)
			assert_string_equal(buf, cases[i].line);
		/* exactly one line, and valid JSON */
		assert_ptr_equal(strchr(buf, '\n'), buf + ret - 1);
		json_decref(json_loads(buf, 0, NULL) ?: (fail(), NULL));
	}
	assert_int_equal(audit_format(NULL, NOW, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(audit_format(&cases[0].e, NOW, buf, 20), -ENOSPC);
	assert_null(audit_what_name(AUDIT_WHAT_COUNT));
	assert_string_equal(audit_what_name(AUDIT_UPLOAD), "upload");
}

static void test_long_fields(void **state)
{
	char *big = malloc(5000), buf[AUDIT_LINE_MAX + 2];
	struct audit_entry e = { AUDIT_CAPTURE, NULL, NULL, NULL, NULL };
	json_t *doc;
	int ret;

	(void)state;
	/* quotes double when escaped: the worst case still fits a line */
	memset(big, '"', 4999);
	big[4999] = '\0';
	e.who = e.target = e.result = e.detail = big;
	ret = audit_format(&e, NOW, buf, sizeof(buf));
	assert_true(ret > 0);
	doc = json_loads(buf, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(strlen(json_string_value(json_object_get(doc, "who"))), AUDIT_FIELD_MAX);
	json_decref(doc);
	free(big);
}

/* What was asked, kept raw but bounded and valid UTF-8 (audit_raw_request()). */
static void test_raw_request(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		size_t size;
		const char *out;
	} cases[] = {
		{ "question=cpu", 12, 64, "question=cpu" },
		{ "{\"target\":\"service:a/billing\"}", 30, 64, "{\"target\":\"service:a/billing\"}" },
		{ "", 0, 64, "" },
		{ NULL, 5, 64, "" },
		/* controls, NUL bytes and invalid UTF-8 become '?' */
		{ "a\nb\tc", 5, 64, "a?b?c" },
		{ "a\0b", 3, 64, "a?b" },
		{ "\xff\xfe ok", 5, 64, "?? ok" },
		{ "caf\xc3\xa9", 5, 64, "caf\xc3\xa9" },
		/* cut to the buffer, "..." says so; a character cut in two becomes '?' */
		{ "abcdefghij", 10, 8, "abcd..." },
		{ "ab\xc3\xa9zzzzzz", 10, 7, "ab?..." },
		{ "abcdefghij", 10, 3, "ab" },
		{ "abcdefghij", 10, 1, "" },
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(out, 'x', sizeof(out));
		assert_ptr_equal(audit_raw_request(cases[i].in, cases[i].len, out, cases[i].size),
				 out);
		assert_string_equal(out, cases[i].out);
	}
	/* longer than AUDIT_RAW_MAX: kept to the bound */
	{
		char big[AUDIT_RAW_MAX * 2], res[AUDIT_RAW_MAX * 2];

		memset(big, 'q', sizeof(big));
		audit_raw_request(big, sizeof(big), res, sizeof(res));
		assert_int_equal(strlen(res), AUDIT_RAW_MAX);
		assert_string_equal(res + AUDIT_RAW_MAX - 3, "...");
	}
	assert_ptr_equal(audit_raw_request("x", 1, out, 0), out);
}

struct thr {
	struct audit *a;
	int n;
};

static void *writer(void *arg)
{
	struct thr *t = arg;
	char who[32];
	struct audit_entry e = { AUDIT_DOWNLOAD, who, "20261129T174501Z-a1b2c3", "ok",
				 "format=pprof" };
	int i;

	for (i = 0; i < 50; i++) {
		snprintf(who, sizeof(who), "thread%d-%d", t->n, i);
		if (audit__log(t->a, &e))
			return (void *)1;
	}
	return NULL;
}

static void test_file(void **state)
{
	char dir[] = "/tmp/test_audit.XXXXXX", path[128], *text, *line, *save;
	struct audit_opts o = { .clock = fake_clock };
	struct audit_entry e = { AUDIT_REMOVE, "admin", "profiler", "ok", NULL };
	struct thr t[4];
	pthread_t th[4];
	struct audit *a = NULL;
	struct stat st;
	size_t len;
	void *rv;
	int i, n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/audit.log", dir);
	o.path = path;
	assert_int_equal(audit__new(&o, &a), 0); /* creates its directory */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(audit__log(a, &e), 0);
	audit__free(a);

	/* reopened: appends, from four threads at once */
	assert_int_equal(audit__new(&o, &a), 0);
	for (i = 0; i < 4; i++) {
		t[i].a = a;
		t[i].n = i;
		assert_int_equal(pthread_create(&th[i], NULL, writer, &t[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], &rv), 0);
		assert_null(rv);
	}
	e.what = 99;
	assert_int_equal(audit__log(a, &e), -EINVAL);
	audit__free(a);
	audit__free(NULL);

	assert_int_equal(read_file_bounded(AT_FDCWD, path, 1 << 20, &text, &len), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *doc = json_loads(line, 0, NULL);

		assert_non_null(doc);
		assert_non_null(json_string_value(json_object_get(doc, "who")));
		json_decref(doc);
		n++;
	}
	assert_int_equal(n, 1 + 4 * 50);
	assert_int_equal(text[len - 1], '\0' ); /* strtok ate the last newline */
	free(text);

	/* error rows */
	o.path = NULL;
	assert_int_equal(audit__new(&o, &a), -EINVAL);
	assert_int_equal(audit__new(NULL, &a), -EINVAL);
	snprintf(path, sizeof(path), "%s/sub/audit.log/x", dir);	/* below a file */
	o.path = path;
	assert_int_equal(audit__new(&o, &a), -ENOTDIR);
	assert_int_equal(fx_rm_rf(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_long_fields),
		cmocka_unit_test(test_raw_request),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
