// SPDX-License-Identifier: Apache-2.0
/*
 * target: the words for a target (target_describe, target_kind_name) and which processes a
 * target is (target_resolve) against a fake /proc written to a temporary directory at test
 * time (stat, cgroup, comm and, for the config rules, an exe link per process, shaped like
 * tests/fixtures/proc): units, pod containers (Services), plain containers, pids and config
 * Service rules, with the exact error text for a target that matches nothing.
 */
#include <errno.h>
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

#include "cgroups/resolver.h"
#include "daemon/config.h"
#include "cgroups/rules.h"
#include "daemon/capture/target.h"
#include "tests/unit/fixtures.h"

#define POD_UID "6a4ce4a0-ba47-11ea-b2a7-0cc47ac5979e"
#define POD_UID_ "6a4ce4a0_ba47_11ea_b2a7_0cc47ac5979e"
#define POD_SHORT "6a4ce4a0"
#define POD_CID "17db96a24ae1e9dd57143e62b1cb0d2d35e693c65c774c7470e87b0572e07c1a"
#define DOCKER_CID "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
#define DOCKER_SHORT "9f8e7d6c5b4a"
#define MAXP 16

static const char *const seen_sep = " seen on this server: ";

/* --- target_describe, target_kind_name ----------------------------------------------------- */

static void test_describe(void **state)
{
	static const struct {
		struct capture_target t;
		size_t size;
		const char *text;
	} cases[] = {
		{ { .kind = TARGET_SERVER }, 64, "this server" },
		{ { .kind = TARGET_PIDS, .pids = { 1234 }, .npids = 1 }, 64, "process 1234" },
		{ { .kind = TARGET_PIDS, .pids = { 1, 2, 3 }, .npids = 3 }, 64, "3 processes" },
		{ { .kind = TARGET_UNIT, .name = "nginx.service" }, 64, "Unit nginx.service" },
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 64, "Unit nginx" },
		{ { .kind = TARGET_CONTAINER, .name = "redis" }, 64, "Container redis" },
		{ { .kind = TARGET_CONTAINER, .name = DOCKER_SHORT }, 64, "Container " DOCKER_SHORT },
		{ { .kind = TARGET_SERVICE, .name = "billing" }, 64, "Service billing" },
		/* truncated to the buffer, always terminated */
		{ { .kind = TARGET_SERVER }, 8, "this se" },
		{ { .kind = TARGET_SERVICE, .name = "billing" }, 9, "Service " },
		{ { .kind = TARGET_PIDS, .pids = { 1234 }, .npids = 1 }, 1, "" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(buf, 'x', sizeof(buf));
		assert_ptr_equal(target_describe(&cases[i].t, buf, cases[i].size), buf);
		assert_string_equal(buf, cases[i].text);
	}
}

static void test_kind_name(void **state)
{
	static const struct {
		enum target_kind k;
		const char *name;
	} cases[] = {
		{ TARGET_SERVER, "server" },
		{ TARGET_PIDS, "pids" },
		{ TARGET_UNIT, "unit" },
		{ TARGET_CONTAINER, "container" },
		{ TARGET_SERVICE, "service" },
		{ (enum target_kind)99, "?" },
		{ (enum target_kind)-1, "?" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_string_equal(target_kind_name(cases[i].k), cases[i].name);
	}
}

/* --- a fake /proc ---------------------------------------------------------------------------- */

/* fake_proc_add (fixtures.h), started at 1000 + @pid. */
static void add_proc(const char *root, int pid, const char *comm, const char *cg, const char *exe,
		     int kthread)
{
	fake_proc_add(root, pid, comm, cg, exe, kthread, 0);
}

/* The processes every target test sees. */
static void populate(const char *root)
{
	add_proc(root, 1, "init", "0::/init.scope\n", "/sbin/init", 0);
	add_proc(root, 2, "kthreadd", "0::/\n", NULL, 1);
	add_proc(root, 200, "nginx", "0::/system.slice/nginx.service\n", "/usr/sbin/nginx", 0);
	add_proc(root, 201, "nginx", "0::/system.slice/nginx.service\n", "/usr/sbin/nginx", 0);
	add_proc(root, 210, "hot2", "0::/system.slice/billing-worker.service\n",
		 "/opt/billing/bin/hot2", 0);
	/* a pod container (kubelet systemd driver, containerd); its process is named java */
	add_proc(root, 300, "java",
		 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_UID_
		 ".slice/cri-containerd-" POD_CID ".scope\n",
		 "/usr/bin/java", 0);
	/* the same on a hybrid host: v1 lines only name it */
	add_proc(root, 301, "java",
		 "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_UID_
		 ".slice/cri-containerd-" POD_CID ".scope\n0::/\n",
		 "/usr/bin/java", 0);
	add_proc(root, 400, "redis-server", "0::/system.slice/docker-" DOCKER_CID ".scope\n",
		 "/usr/bin/redis-server", 0);
	add_proc(root, 600, "ledger-job", "0::/\n", "/opt/ledger/bin/ledger-job", 0);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits the ", " list @s (modified) into @v; returns the count, sorted. */
static size_t split_sorted(char *s, char **v, size_t max)
{
	size_t n = 0;
	char *p;

	while (s && *s && n < max) {
		v[n++] = s;
		p = strstr(s, ", ");
		if (!p)
			break;
		*p = '\0';
		s = p + 2;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	return n;
}

/*
 * @got equals @want, except that the list after " seen on this server: " (in /proc's order) is
 * compared as a set of names.
 */
static void assert_err_equal(const char *got, const char *want)
{
	const char *w = strstr(want, seen_sep), *g = strstr(got, seen_sep);
	char gl[1024], wl[1024], *gv[32], *wv[32];
	size_t gn, wn, i;

	if (!w) {
		assert_string_equal(got, want);
		return;
	}
	assert_non_null(g);
	assert_int_equal(g - got, w - want);
	assert_memory_equal(got, want, (size_t)(w - want) + strlen(seen_sep));
	snprintf(gl, sizeof(gl), "%s", g + strlen(seen_sep));
	snprintf(wl, sizeof(wl), "%s", w + strlen(seen_sep));
	gn = split_sorted(gl, gv, ARRAY_SIZE(gv));
	wn = split_sorted(wl, wv, ARRAY_SIZE(wv));
	if (gn != wn)
		print_error("seen list: got '%s', want '%s'\n", g, w);
	assert_int_equal(gn, wn);
	for (i = 0; i < wn; i++)
		assert_string_equal(gv[i], wv[i]);
}

struct resolve_case {
	struct capture_target t;
	size_t max;	/* 0: MAXP */
	int ret;
	uint32_t pids[MAXP];	/* sorted; { 0 }: any of the target's, only the count is checked */
	const char *err;
};

static void run_cases(const char *root, owner_name_fn_t name_fn, void *name_ctx,
		      const struct resolve_case *cases, size_t ncases)
{
	struct owner_resolver_opts opts = { .proc_root = root, .name_fn = name_fn,
					    .name_ctx = name_ctx };
	struct owner_resolver *r;
	uint32_t pids[MAXP];
	char err[1024];
	size_t i;
	int ret, k;

	for (i = 0; i < ncases; i++) {
		print_message("case %zu\n", i);
		/* a fresh resolver per row: no row depends on another's cache */
		assert_int_equal(owner_resolver__new(&opts, &r), 0);
		memset(pids, 0, sizeof(pids));
		strcpy(err, "untouched");
		ret = target_resolve(&cases[i].t, r, root, pids,
				     cases[i].max ? cases[i].max : MAXP, err, sizeof(err));
		owner_resolver__free(r);
		assert_int_equal(ret, cases[i].ret);
		if (ret < 0) {
			assert_err_equal(err, cases[i].err);
			continue;
		}
		qsort(pids, (size_t)ret, sizeof(pids[0]), cmp_u32);
		for (k = 0; k < ret && cases[i].pids[0]; k++)
			assert_int_equal(pids[k], cases[i].pids[k]);
	}
}

static void test_resolve(void **state)
{
	struct fake_proc *fp = *state;
	static const struct resolve_case cases[] = {
		/* the whole server: nothing to list, everything is the target */
		{ { .kind = TARGET_SERVER }, 0, 0, {}, NULL },
		/* pids, as given */
		{ { .kind = TARGET_PIDS, .pids = { 200 }, .npids = 1 }, 0, 1, { 200 }, NULL },
		{ { .kind = TARGET_PIDS, .pids = { 300, 210 }, .npids = 2 }, 0, 2, { 210, 300 }, NULL },
		{ { .kind = TARGET_PIDS, .pids = { 200, 999 }, .npids = 2 }, 0, -ENOENT, {},
		  "no process with pid 999 is running" },
		{ { .kind = TARGET_PIDS, .pids = { 999, 200 }, .npids = 2 }, 0, -ENOENT, {},
		  "no process with pid 999 is running" },
		/* units: the full name, or without ".service" as systemctl takes it */
		{ { .kind = TARGET_UNIT, .name = "nginx.service" }, 0, 2, { 200, 201 }, NULL },
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 0, 2, { 200, 201 }, NULL },
		{ { .kind = TARGET_UNIT, .name = "billing-worker.service" }, 0, 1, { 210 }, NULL },
		{ { .kind = TARGET_UNIT, .name = "billing-worker" }, 0, 1, { 210 }, NULL },
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 1, 1, { 0 }, NULL },	/* at most @max */
		{ { .kind = TARGET_PIDS, .pids = { 200, 201, 210 }, .npids = 3 }, 2, 2, { 200, 201 },
		  NULL },
		{ { .kind = TARGET_UNIT, .name = "nosuch.service" }, 0, -ENOENT, {},
		  "no process of Unit nosuch.service is running; units seen on this server: "
		  "nginx.service, billing-worker.service" },
		{ { .kind = TARGET_UNIT, .name = "ngin" }, 0, -ENOENT, {},
		  "no process of Unit ngin is running; units seen on this server: "
		  "nginx.service, billing-worker.service" },
		{ { .kind = TARGET_UNIT, .name = "nginx.serv" }, 0, -ENOENT, {},
		  "no process of Unit nginx.serv is running; units seen on this server: "
		  "nginx.service, billing-worker.service" },
		/* "nginx.socket" is not "nginx": only .service is implied */
		{ { .kind = TARGET_UNIT, .name = "nginx.socket" }, 0, -ENOENT, {},
		  "no process of Unit nginx.socket is running; units seen on this server: "
		  "nginx.service, billing-worker.service" },
		/* containers: a full id, a prefix of at least 4 hex digits, or the name */
		{ { .kind = TARGET_CONTAINER, .name = POD_CID }, 0, 2, { 300, 301 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = "17db96a24ae1" }, 0, 2, { 300, 301 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = "17db" }, 0, 2, { 300, 301 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = DOCKER_SHORT }, 0, 1, { 400 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = DOCKER_CID }, 0, 1, { 400 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = "9f8e7d" }, 0, 1, { 400 }, NULL },
		{ { .kind = TARGET_CONTAINER, .name = "17d" }, 0, -ENOENT, {},
		  "no process of Container 17d is running; containers seen on this server: "
		  DOCKER_SHORT ", 17db96a24ae1" },
		{ { .kind = TARGET_CONTAINER, .name = "17dc" }, 0, -ENOENT, {},
		  "no process of Container 17dc is running; containers seen on this server: "
		  DOCKER_SHORT ", 17db96a24ae1" },
		/* a pod container is a Service, not named as a container; it is listed by its short
		 * container id, which --container takes */
		{ { .kind = TARGET_CONTAINER, .name = POD_SHORT }, 0, -ENOENT, {},
		  "no process of Container " POD_SHORT " is running; containers seen on this "
		  "server: " DOCKER_SHORT ", 17db96a24ae1" },
		/* services: a pod container without Kubernetes is its short pod uid */
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT }, 0, 2, { 300, 301 }, NULL },
		{ { .kind = TARGET_SERVICE, .name = POD_UID }, 0, -ENOENT, {},
		  "no process of Service " POD_UID " is running; services seen on this server: "
		  POD_SHORT },
		{ { .kind = TARGET_SERVICE, .name = "billing" }, 0, -ENOENT, {},
		  "no process of Service billing is running; services seen on this server: "
		  POD_SHORT },
		/* kernel threads and PID 1 are System, never a unit */
		{ { .kind = TARGET_UNIT, .name = "init.scope" }, 0, -ENOENT, {},
		  "no process of Unit init.scope is running; units seen on this server: "
		  "nginx.service, billing-worker.service" },
	};

	populate(fp->root);
	run_cases(fp->root, NULL, NULL, cases, ARRAY_SIZE(cases));
}

/* Config Service rules (service_rules_apply as the resolver's seam) make Services. */
static void test_resolve_rules(void **state)
{
	static const char yaml[] =
		"services:\n"
		"  - name: billing\n"
		"    match:\n"
		"      unit: billing-worker.service\n"
		"  - name: ledger\n"
		"    match:\n"
		"      exe: /opt/ledger/bin/*\n"
		"  - name: jvm\n"
		"    match:\n"
		"      comm: java\n";
	struct fake_proc *fp = *state;
	struct config cfg;
	struct service_rules_ctx rules = { .proc_root = fp->root };
	static const struct resolve_case cases[] = {
		{ { .kind = TARGET_SERVICE, .name = "billing" }, 0, 1, { 210 }, NULL },
		{ { .kind = TARGET_SERVICE, .name = "ledger" }, 0, 1, { 600 }, NULL },
		/* a pod container keeps its Kubernetes name; the rule for java names nothing */
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT }, 0, 2, { 300, 301 }, NULL },
		{ { .kind = TARGET_SERVICE, .name = "nosuch" }, 0, -ENOENT, {},
		  "no process of Service nosuch is running; services seen on this server: "
		  "billing, ledger, " POD_SHORT },
		{ { .kind = TARGET_SERVICE, .name = "jvm" }, 0, -ENOENT, {},
		  "no process of Service jvm is running; services seen on this server: "
		  "billing, ledger, " POD_SHORT },
		/* the unit is now Service billing: it is no unit any more */
		{ { .kind = TARGET_UNIT, .name = "billing-worker.service" }, 0, -ENOENT, {},
		  "no process of Unit billing-worker.service is running; units seen on this "
		  "server: nginx.service" },
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 0, 2, { 200, 201 }, NULL },
	};
	char err[256];

	populate(fp->root);
	assert_int_equal(config_parse(yaml, sizeof(yaml) - 1, "rules.yaml", &cfg, err, sizeof(err)), 0);
	rules.rules = cfg.services;
	rules.nrules = cfg.nservices;
	run_cases(fp->root, service_rules_apply, &rules, cases, ARRAY_SIZE(cases));
	config_free(&cfg);
}

/* Nothing of the kind exists: "none". */
static void test_resolve_none(void **state)
{
	struct fake_proc *fp = *state;
	static const struct resolve_case cases[] = {
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 0, -ENOENT, {},
		  "no process of Unit nginx is running; units seen on this server: none" },
		{ { .kind = TARGET_SERVICE, .name = "billing" }, 0, -ENOENT, {},
		  "no process of Service billing is running; services seen on this server: none" },
		{ { .kind = TARGET_CONTAINER, .name = "abcd" }, 0, -ENOENT, {},
		  "no process of Container abcd is running; containers seen on this server: none" },
		{ { .kind = TARGET_PIDS, .pids = { 1 }, .npids = 1 }, 0, 1, { 1 }, NULL },
	};

	add_proc(fp->root, 1, "init", "0::/init.scope\n", "/sbin/init", 0);
	add_proc(fp->root, 2, "kthreadd", "0::/\n", NULL, 1);
	run_cases(fp->root, NULL, NULL, cases, ARRAY_SIZE(cases));
}

/* target_ns_fn_t of the tests: the pod POD_UID is in namespace team-a, nothing else is a pod. */
static int ns_of_pod(void *ctx, const struct owner *o, char *ns, size_t size)
{
	(void)ctx;
	if (strcmp(o->pod_uid, POD_UID))
		return -ENOENT;
	snprintf(ns, size, "team-a");
	return 0;
}

/* A Service is a namespace and a workload: with a namespace, only that tenant's processes
 * match, and another tenant's Service of the same name is not even listed as seen. */
static void test_resolve_namespace(void **state)
{
	struct fake_proc *fp = *state;
	static const struct resolve_case cases[] = {
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT, .ns = "team-a", .ns_fn = ns_of_pod },
		  0, 2, { 300, 301 }, NULL },
		/* no namespace: any */
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT }, 0, 2, { 300, 301 }, NULL },
		/* errors: another tenant's, or no way to tell the namespace */
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT, .ns = "team-b", .ns_fn = ns_of_pod },
		  0, -ENOENT, {},
		  "no process of Service " POD_SHORT " is running; services seen on this server: "
		  "none" },
		{ { .kind = TARGET_SERVICE, .name = POD_SHORT, .ns = "team-a" }, 0, -ENOENT, {},
		  "no process of Service " POD_SHORT " is running; services seen on this server: "
		  "none" },
	};

	populate(fp->root);
	run_cases(fp->root, NULL, NULL, cases, ARRAY_SIZE(cases));
}

/*
 * The list of units seen holds each name once, also when one name ends with another. When
 * readdir gives "xnginx.service" before "nginx.service", the duplicate check must not read
 * before the start of the list (ASan reports it under SANITIZE=1).
 */
static void test_seen_list_suffix(void **state)
{
	struct fake_proc *fp = *state;
	static const struct resolve_case cases[] = {
		{ { .kind = TARGET_UNIT, .name = "nosuch" }, 0, -ENOENT, {},
		  "no process of Unit nosuch is running; units seen on this server: "
		  "nginx.service, xnginx.service, x-nginx.service" },
	};

	add_proc(fp->root, 10, "nginx", "0::/system.slice/nginx.service\n", NULL, 0);
	add_proc(fp->root, 11, "nginx", "0::/system.slice/nginx.service\n", NULL, 0);
	add_proc(fp->root, 12, "nginx", "0::/system.slice/x-nginx.service\n", NULL, 0);
	add_proc(fp->root, 13, "nginx", "0::/system.slice/xnginx.service\n", NULL, 0);
	run_cases(fp->root, NULL, NULL, cases, ARRAY_SIZE(cases));
}

/* A /proc that cannot be listed is an error that names it. */
static void test_resolve_no_proc(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root };
	struct capture_target t = { .kind = TARGET_UNIT, .name = "nginx" };
	struct capture_target p = { .kind = TARGET_PIDS, .pids = { 7 }, .npids = 1 };
	struct owner_resolver *r;
	char err[256], missing[128];
	uint32_t pids[4];

	snprintf(missing, sizeof(missing), "%s/nonexistent", fp->root);
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	assert_int_equal(target_resolve(&t, r, missing, pids, 4, err, sizeof(err)), -ENOENT);
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "cannot list the processes in %s: No such file or directory", missing);
		assert_string_equal(err, want);
	}
	assert_int_equal(target_resolve(&p, r, missing, pids, 4, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no process with pid 7 is running");
	owner_resolver__free(r);
}

/* --- target_proc_stat, target_pid_alive (base/proc.h reads the file) ------------------------ */

static void test_proc_stat(void **state)
{
	static const struct {
		const char *stat;	/* NULL: no such process */
		int ret;
		char state;
		unsigned long flags;
		bool alive;
	} cases[] = {
		{ "12 (spin) R 1 12 12 0 -1 4194560 90 0 0 0 5 1 0 0 20 0 1 0 777 0 0\n", 0, 'R',
		  4194560, true },
		{ "13 (sleeper) S 1 13 13 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n", 0, 'S',
		  4194304, true },
		/* comm with spaces and ')' */
		{ "14 (a) b (c)) D 1 14 14 0 -1 64 1 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n", 0, 'D', 64,
		  true },
		{ "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0\n", 0, 'S',
		  2129984, true },
		/* exited: a zombie, a dead task, gone */
		{ "15 (zombie) Z 1 15 15 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n", 0, 'Z',
		  4227084, false },
		{ "16 (dead) X 1 16 16 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n", 0, 'X',
		  4227084, false },
		{ NULL, -ESRCH, 0, 0, false },
		/* not a stat line */
		{ "garbage\n", -EINVAL, 0, 0, false },
		{ "17 (short) S 1 17\n", -EINVAL, 0, 0, false },
		{ "", -EINVAL, 0, 0, false },
	};
	struct fake_proc *fp = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t pid = 5000 + (uint32_t)i;
		unsigned long flags = 7;
		char path[512], st = '?';
		FILE *f;

		print_message("case %zu\n", i);
		if (cases[i].stat) {
			snprintf(path, sizeof(path), "%s/%u", fp->root, pid);
			assert_int_equal(mkdir(path, 0755), 0);
			snprintf(path, sizeof(path), "%s/%u/stat", fp->root, pid);
			f = fopen(path, "w");
			assert_non_null(f);
			fputs(cases[i].stat, f);
			fclose(f);
		}
		assert_int_equal(target_proc_stat(fp->root, pid, &st, &flags), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(st, cases[i].state);
			assert_int_equal(flags, cases[i].flags);
			/* the flags are optional */
			assert_int_equal(target_proc_stat(fp->root, pid, &st, NULL), 0);
		} else {
			assert_int_equal(st, '?');	/* untouched on failure */
			assert_int_equal(flags, 7);
		}
		assert_int_equal(target_pid_alive(fp->root, pid), cases[i].alive);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_kind_name),
		fake_proc_test(test_resolve),
		fake_proc_test(test_resolve_rules),
		fake_proc_test(test_resolve_none),
		fake_proc_test(test_resolve_namespace),
		fake_proc_test(test_seen_list_suffix),
		fake_proc_test(test_resolve_no_proc),
		fake_proc_test(test_proc_stat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
