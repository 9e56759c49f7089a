// SPDX-License-Identifier: Apache-2.0
/*
 * daemon/agent/history.c and the continuous views of views.c on a real store in a temporary
 * directory, with real pprof windows: the range, the owner filter (its predicate, table-driven),
 * the bound on windows, windows that cannot be read, the outputs of GET /v1/continuous (page,
 * collapsed, pprof) and the comparison of a profile with the hour before it, with error rows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "daemon/agent/history.h"
#include "daemon/agent/store.h"
#include "daemon/agent/views.h"
#include "profile/collapsed.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "tests/unit/fixtures.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define S(x) ((x) * 1000000000LL)
#define T0 S(1796637600LL) /* 2026-12-07T10:00:00Z */
#define W0 (T0 - S(3600))  /* the first window: 09:00:00 */

/* One sample: its owner and process labels, its stack leaf first ("work;main"), its count. */
struct smp {
	const char *owner, *process, *stack;
	int64_t n;
};

/* Each window holds these: 12 of Service billing, 5 of a unit, 1 of System. */
static const struct smp window[] = {
	{ "Service billing", "billing", "build_report;main", 10 },
	{ "Service billing", "billing", "idle;main", 2 },
	{ "Unit nginx.service", "nginx", "ngx_worker;main", 5 },
	{ "System", "systemd", "sd_event;main", 1 },
};

struct fx {
	char root[64], store_dir[96], files[96];
	struct store *store;
	int64_t now;
	char w[4][STORE_ID_SIZE]; /* windows at 09:00, 09:01, 09:02; w[3] spare */
};

static int64_t fake_clock(void *ctx)
{
	return ((struct fx *)ctx)->now;
}

static struct profile *build(const struct smp *v, size_t n)
{
	struct profile_opts po = { .time_nanos = W0 };
	struct profile *p;
	size_t i;

	assert_int_equal(profile__new(&po, &p), 0);
	for (i = 0; i < n; i++) {
		struct prof_labels l = { .owner = v[i].owner, .process = v[i].process, .pid = 7 };
		char buf[128], *save = NULL, *tok;
		int64_t val[2] = { v[i].n, v[i].n * 10000000 };
		uint32_t ids[8];
		size_t nf = 0;

		snprintf(buf, sizeof(buf), "%s", v[i].stack);
		for (tok = strtok_r(buf, ";", &save); tok && nf < 8;
		     tok = strtok_r(NULL, ";", &save)) {
			struct prof_frame_info fi = { .function = tok, .mapping = "/usr/bin/app" };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			ids[nf++] = (uint32_t)id;
		}
		assert_int_equal(profile__add(p, ids, nf, &l, val), 0);
	}
	return p;
}

/* The capture files of @v in f->files (a profile.pb.gz of garbage with @garbage). */
static void write_files(struct fx *f, const struct smp *v, size_t n, bool garbage)
{
	char path[160];
	struct profile *p = build(v, n);

	snprintf(path, sizeof(path), "%s/profile.pb.gz", f->files);
	if (garbage)
		fx_write(path, "not pprof", 9);
	else
		assert_int_equal(pprof_write_file(p, path), 0);
	profile__free(p);
	snprintf(path, sizeof(path), "%s/profile.collapsed", f->files);
	fx_write(path, "x 1\n", 4);
	snprintf(path, sizeof(path), "%s/summary.json", f->files);
	fx_write(path, "{}", 2);
}

/* Stores a profile: a continuous window (kind "server"), or a listed one of @kind. */
static void add(struct fx *f, const char *kind, const char *service, const char *ns,
		const char *question, int64_t start, bool continuous, char *id)
{
	struct store_meta m = { 0 };

	snprintf(m.service, sizeof(m.service), "%s", service);
	snprintf(m.ns, sizeof(m.ns), "%s", ns);
	snprintf(m.question, sizeof(m.question), "%s", question);
	snprintf(m.target_kind, sizeof(m.target_kind), "%s", kind);
	if (!strcmp(kind, "server"))
		snprintf(m.target, sizeof(m.target), "this server");
	else if (!strcmp(kind, "service"))
		snprintf(m.target, sizeof(m.target), "Service %s", service);
	else
		snprintf(m.target, sizeof(m.target), "%s", service);
	m.start_ns = start;
	m.duration_s = continuous ? 60 : 30;
	m.continuous = continuous;
	f->now += S(1);
	assert_int_equal(store__add(f->store, &m, f->files, id), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR") ?: access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	struct store_opts so = { .clock = fake_clock };
	int i;

	snprintf(f->root, sizeof(f->root), "%s/test_history.XXXXXX", tmp);
	assert_non_null(mkdtemp(f->root));
	snprintf(f->store_dir, sizeof(f->store_dir), "%s/store", f->root);
	snprintf(f->files, sizeof(f->files), "%s/capture", f->root);
	assert_int_equal(mkdir_p(f->files), 0);
	f->now = T0 + S(7200);
	so.dir = f->store_dir;
	so.clock_ctx = f;
	assert_int_equal(store__new(&so, &f->store), 0);
	write_files(f, window, ARRAY_SIZE(window), false);
	for (i = 0; i < 3; i++)
		add(f, "server", "server", "", "cpu", W0 + S(60 * i), true, f->w[i]);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store__free(f->store);
	fx_rm_rf(f->root);
	free(f);
	return 0;
}

/* The folded lines of @p (the caller frees them). */
static char *folded(const struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_true(collapsed_write(p, m) >= 0);
	fclose(m);
	return text;
}

static void test_keep_owner(void **state)
{
	static const struct prof_labels billing = { .owner = "Service billing" };
	static const struct prof_labels unowned = { .process = "x" };
	static const struct {
		const char *ctx;
		const struct prof_labels *labels;
		bool keep;
	} cases[] = {
		{ "Service billing", &billing, true },
		{ "Service billin", &billing, false },
		{ "Service billing2", &billing, false },
		{ "service billing", &billing, false },
		{ "Service billing", &unowned, false },
		{ "Service billing", NULL, false },
		{ NULL, &billing, false },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof_sample s = { .labels = cases[i].labels };

		print_message("case %zu\n", i);
		assert_int_equal(history_keep_owner((void *)cases[i].ctx, NULL, &s),
				 cases[i].keep);
	}
	assert_string_equal(history_service_owner("billing", buf, sizeof(buf)),
			    "Service billing");
	assert_string_equal(history_service_owner("a b", buf, 6), "Servi");
}

/* The range, the owner, the bound; the totals of what was merged. */
static void test_merge(void **state)
{
	static const struct {
		int from_s, until_s; /* from W0 */
		const char *owner;
		size_t max;
		uint64_t max_bytes;
		int ret;
		size_t windows;
		int64_t total;
		const char *err;
	} cases[] = {
		{ 0, 180, NULL, 0, 0, 0, 3, 54, NULL },
		{ 0, 180, "Service billing", 0, 0, 0, 3, 36, NULL },
		{ 0, 180, "Unit nginx.service", 0, 0, 0, 3, 15, NULL },
		{ 30, 90, NULL, 0, 0, 0, 2, 36, NULL },
		{ 130, 3600, "Service billing", 0, 0, 0, 1, 12, NULL },
		{ 0, 180, NULL, 3, 0, 0, 3, 54, NULL },
		/* errors */
		{ 0, 180, "Service nope", 0, 0, -ENOENT, 0, 0,
		  "Service nope has no samples in the continuous profile between "
		  "2026-12-07T09:00:00Z and 2026-12-07T09:03:00Z (3 windows)" },
		{ 180, 3600, NULL, 0, 0, -ENOENT, 0, 0,
		  "no continuous profile of this server between 2026-12-07T09:03:00Z and "
		  "2026-12-07T10:00:00Z: continuous profiling is off or has not run then" },
		{ -60, 0, "Service billing", 0, 0, -ENOENT, 0, 0,
		  "no continuous profile of Service billing between" },
		{ 60, 60, NULL, 0, 0, -ENOENT, 0, 0, "no continuous profile" },
		{ 60, 0, NULL, 0, 0, -ENOENT, 0, 0, "no continuous profile" },
		{ 0, 180, NULL, 2, 0, -EINVAL, 0, 0,
		  "holds 3 continuous-profiling windows; at most 2 are merged at once" },
		{ 0, 180, NULL, 0, 100, -EINVAL, 0, 0,
		  "the continuous profile from 2026-12-07T09:00:00Z to 2026-12-07T09:03:00Z is "
		  "more than 100 bytes of windows: ask a shorter range" },
	};
	struct fx *f = *state;
	struct history_info hi;
	struct profile *p;
	char err[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct history_opts o = { .from_ns = W0 + S(cases[i].from_s),
					  .until_ns = W0 + S(cases[i].until_s),
					  .owner = cases[i].owner,
					  .max_windows = cases[i].max,
					  .max_bytes = cases[i].max_bytes };

		print_message("case %zu\n", i);
		p = NULL;
		err[0] = '\0';
		assert_int_equal(history_merge(f->store, &o, &p, &hi, err, sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret) {
			print_message("  %s\n", err);
			assert_null(p);
			assert_non_null(strstr(err, cases[i].err));
			continue;
		}
		assert_int_equal(hi.windows, cases[i].windows);
		assert_int_equal(hi.skipped, 0);
		assert_int_equal(profile__total(p, 0), cases[i].total);
		assert_int_equal(profile__total(p, 1), cases[i].total * 10000000);
		profile__free(p);
	}
}

/* The merged profile's time, owner_root and stacks. */
static void test_merge_shape(void **state)
{
	struct fx *f = *state;
	struct history_opts o = { .from_ns = W0, .until_ns = T0, .owner_root = true };
	struct history_info hi;
	struct profile *p = NULL;
	char err[256], *text;

	assert_int_equal(history_merge(f->store, &o, &p, &hi, err, sizeof(err)), 0);
	assert_true(hi.first_ns == W0);
	assert_true(hi.end_ns == W0 + S(180));
	assert_true(profile__opts(p)->time_nanos == W0);
	assert_true(profile__opts(p)->duration_nanos == S(180));
	assert_true(profile__opts(p)->owner_root);
	text = folded(p);
	assert_non_null(strstr(text, "Service billing;billing;main;build_report 30\n"));
	assert_non_null(strstr(text, "System;systemd;main;sd_event 3\n"));
	free(text);
	profile__free(p);

	o.owner = "Service billing";
	o.owner_root = false;
	assert_int_equal(history_merge(f->store, &o, &p, NULL, err, sizeof(err)), 0);
	text = folded(p);
	assert_string_equal(text, "main;build_report 30\nmain;idle 6\n");
	free(text);
	profile__free(p);
	/* bad arguments */
	assert_int_equal(history_merge(f->store, NULL, &p, NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(history_merge(NULL, &o, &p, NULL, err, sizeof(err)), -EINVAL);
}

/* A window that cannot be read is left out; when none can be, -EIO. A deleted one is gone. */
static void test_merge_unreadable(void **state)
{
	struct fx *f = *state;
	struct history_opts o = { .from_ns = W0, .until_ns = T0 };
	struct history_info hi;
	struct profile *p = NULL;
	char err[256], bad[STORE_ID_SIZE];

	write_files(f, window, ARRAY_SIZE(window), true);
	add(f, "server", "server", "", "cpu", W0 + S(180), true, bad);
	assert_int_equal(history_merge(f->store, &o, &p, &hi, err, sizeof(err)), 0);
	assert_int_equal(hi.windows, 3);
	assert_int_equal(hi.skipped, 1);
	assert_int_equal(profile__total(p, 0), 54);
	profile__free(p);

	o.from_ns = W0 + S(180);
	assert_int_equal(history_merge(f->store, &o, &p, &hi, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "none of the 1 continuous-profiling windows between "
				    "2026-12-07T09:03:00Z and 2026-12-07T10:00:00Z could be read"));

	o.from_ns = W0;
	assert_int_equal(store__delete(f->store, f->w[1]), 0);
	assert_int_equal(store__delete(f->store, bad), 0);
	assert_int_equal(history_merge(f->store, &o, &p, &hi, err, sizeof(err)), 0);
	assert_int_equal(hi.windows, 2);
	assert_int_equal(profile__total(p, 0), 36);
	profile__free(p);
}

/* GET /v1/continuous's outputs: the page, the folded stacks, pprof. */
static void test_view_continuous(void **state)
{
	struct fx *f = *state;
	struct view_range whole = { .from_ns = W0, .until_ns = T0 };
	struct view_range billing = { .from_ns = W0, .until_ns = T0, .service = "billing" };
	struct view_range none = { .from_ns = T0, .until_ns = T0 + S(60) };
	struct profile *p = NULL;
	char err[256], *out = NULL;
	size_t len = 0;

	assert_int_equal(view_continuous(f->store, &whole, VIEW_HTML, &out, &len, err, sizeof(err)),
			 0);
	assert_int_equal(strlen(out), len);
	assert_non_null(strstr(out, "What is using the CPU: this server, continuous, "
				    "2026-12-07T09:00:00Z to 2026-12-07T10:00:00Z"));
	assert_non_null(strstr(out, "Merged from 3 continuous-profiling windows"));
	assert_non_null(strstr(out, "/ui/flamegraph.js"));
	free(out);

	assert_int_equal(view_continuous(f->store, &billing, VIEW_COLLAPSED, &out, &len, err,
					 sizeof(err)),
			 0);
	assert_string_equal(out, "main;build_report 30\nmain;idle 6\n");
	free(out);

	assert_int_equal(view_continuous(f->store, &billing, VIEW_PPROF, &out, &len, err,
					 sizeof(err)),
			 0);
	assert_int_equal(pprof_decode(out, len, &p), 0);
	assert_int_equal(profile__total(p, 0), 36);
	profile__free(p);
	free(out);

	billing.service = "nope";
	assert_int_equal(view_continuous(f->store, &billing, VIEW_HTML, &out, &len, err,
					 sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "Service nope has no samples"));
	assert_int_equal(view_continuous(f->store, &none, VIEW_HTML, &out, &len, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no continuous profile of this server between"));
}

/* A profile compared with the hour before it: the owner of each kind, and error rows. */
static void test_compare_continuous(void **state)
{
	static const struct smp billing_now[] = {
		{ "Service billing", "billing", "build_report;main", 5 },
		{ "Service billing", "billing", "render;main", 5 },
	};
	static const struct smp nginx_now[] = {
		{ "Unit nginx.service", "nginx", "ngx_worker;main", 5 },
	};
	static const struct {
		const char *kind, *service, *ns, *question;
		const struct smp *v;
		size_t n;
		int64_t start;
		int ret;
		const char *want; /* in the output, or the error */
	} cases[] = {
		{ "service", "billing", "", "cpu", billing_now, 2, T0, 0,
		  "main;build_report 30 18\nmain;idle 6 0\nmain;render 0 18\n" },
		{ "service", "billing", "shop", "cpu", billing_now, 2, T0, 0,
		  "main;build_report 30 18\n" },
		{ "unit", "Unit nginx.service", "", "cpu", nginx_now, 1, T0, 0,
		  "main;ngx_worker 15 15\n" },
		{ "server", "server", "", "cpu", window, ARRAY_SIZE(window), T0, 0,
		  "Service billing;billing;main;build_report 30 30\n" },
		/* errors */
		{ "service", "billing", "", "wall", billing_now, 2, T0, -EINVAL,
		  "these profiles answer different questions (cpu and wall): compare two "
		  "profiles of the same question" },
		{ "pids", "process 42", "", "cpu", billing_now, 2, T0, -EINVAL,
		  "is of process 42: the continuous profile stands in for a Service, a unit or "
		  "the whole server, not for processes or a container" },
		{ "container", "Container redis", "", "cpu", billing_now, 2, T0, -EINVAL,
		  "is of Container redis: the continuous profile stands in" },
		{ "service", "checkout", "", "cpu", billing_now, 2, T0, -ENOENT,
		  "Service checkout has no samples in the continuous profile" },
		{ "service", "billing", "", "cpu", billing_now, 2, W0, -ENOENT,
		  "no continuous profile of Service billing between 2026-12-07T08:00:00Z and "
		  "2026-12-07T09:00:00Z" },
		{ "service", "billing", "", "cpu", billing_now, 2, T0 + S(3600) + S(180), -ENOENT,
		  "no continuous profile" },
	};
	struct fx *f = *state;
	char err[512], id[STORE_ID_SIZE], *out;
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s %s %s\n", i, cases[i].kind, cases[i].service,
			      cases[i].question);
		write_files(f, cases[i].v, cases[i].n, false);
		add(f, cases[i].kind, cases[i].service, cases[i].ns, cases[i].question,
		    cases[i].start, false, id);
		out = NULL;
		err[0] = '\0';
		assert_int_equal(view_compare_continuous(f->store, id, true, &out, &len, err,
							 sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret) {
			print_message("  %s\n", err);
			assert_null(out);
			assert_non_null(strstr(err, cases[i].want));
			continue;
		}
		print_message("%s", out);
		assert_non_null(strstr(out, cases[i].want));
		free(out);
	}
	assert_int_equal(view_compare_continuous(f->store, "20201129T174501Z-000000", true, &out,
						 &len, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "no profile 20201129T174501Z-000000");
}

/* The page names the base: the range, and every namespace for a Service of one. */
static void test_compare_page(void **state)
{
	static const struct smp billing_now[] = {
		{ "Service billing", "billing", "build_report;main", 5 },
	};
	struct fx *f = *state;
	char err[512], id[STORE_ID_SIZE], *out = NULL;
	size_t len;

	write_files(f, billing_now, 1, false);
	add(f, "service", "billing", "shop", "cpu", T0, false, id);
	assert_int_equal(view_compare_continuous(f->store, id, false, &out, &len, err,
						 sizeof(err)),
			 0);
	assert_non_null(strstr(out, "the continuous profile from 2026-12-07T09:00:00Z to "
				    "2026-12-07T10:00:00Z (Service billing of every namespace)"));
	assert_non_null(strstr(out, "/ui/flamegraph.js"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_owner),
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_page, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
