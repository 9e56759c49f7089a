// SPDX-License-Identifier: Apache-2.0
/*
 * Resolver rules against the fake /proc in tests/fixtures/proc, and cache behaviour against a
 * fake /proc written to a temporary directory (so processes can exit and PIDs be reused).
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

#include "base/array.h"
#include "cgroups/resolver.h"
#include "tests/unit/fixtures.h"

#define FIXTURES "tests/fixtures/proc"
#define POD_UID "6a4ce4a0-ba47-11ea-b2a7-0cc47ac5979e"
#define CTR_ID "17db96a24ae1e9dd57143e62b1cb0d2d35e693c65c774c7470e87b0572e07c1a"

static void test_fixtures(void **state)
{
	static const struct {
		int tgid, ret;
		enum owner_group group;
		const char *name, *pod_uid, *container_id;
	} cases[] = {
		{ 1, 0, OWNER_SYSTEM, "", "", "" },		/* PID 1 */
		{ 2, 0, OWNER_SYSTEM, "", "", "" },		/* kthreadd, PF_KTHREAD */
		{ 4, 0, OWNER_SYSTEM, "", "", "" },		/* kworker, PF_KTHREAD */
		{ 17, 0, OWNER_SYSTEM, "", "", "" },		/* child of kthreadd, no flag */
		{ 100, 0, OWNER_SESSIONS, "", "", "" },		/* a shell leading its session */
		{ 101, 0, OWNER_SESSIONS, "", "", "" },		/* started from that shell */
		{ 102, 0, OWNER_SESSIONS, "", "", "" },		/* has a controlling tty */
		{ 103, 0, OWNER_SESSIONS, "", "", "" },		/* comm "evil) (name" */
		{ 200, 0, OWNER_UNIT, "nginx.service", "", "" },
		{ 300, 0, OWNER_SERVICE, "6a4ce4a0", POD_UID, CTR_ID },
		{ 400, 0, OWNER_OTHER, "", "", "" },		/* unknown tree, not a shell */
		{ 401, -EINVAL },				/* truncated stat */
		{ 600, -ESRCH },				/* exited between stat and cgroup */
		{ 999, -ESRCH },				/* never existed */
		{ 0, -EINVAL },
		{ -3, -EINVAL },
	};
	struct owner_resolver_opts opts = { .proc_root = FIXTURES };
	struct owner_resolver *r;
	struct owner o;
	size_t i;
	int ret;

	(void)state;
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = owner_resolver__resolve(r, cases[i].tgid, &o);
		assert_int_equal(ret, cases[i].ret);
		if (ret)
			continue;
		assert_int_equal(o.group, cases[i].group);
		assert_string_equal(o.name, cases[i].name);
		assert_string_equal(o.pod_uid, cases[i].pod_uid);
		assert_string_equal(o.container_id, cases[i].container_id);
	}
	owner_resolver__free(r);
}

/* A process in its own session (leader comm "daemon", no tty) in cgroup @cg. */
static void add_proc(const struct fake_proc *fp, int pid, unsigned long long start, const char *cg)
{
	fake_proc_add(fp->root, pid, "daemon", cg, NULL, 0, start);
}

static void del_proc(const struct fake_proc *fp, int pid)
{
	static const char *const files[] = { "stat", "cgroup", "comm" };
	char path[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%d/%s", fp->root, pid, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%d", fp->root, pid);
	assert_int_equal(rmdir(path), 0);
}

static struct owner resolve_ok(struct owner_resolver *r, int tgid)
{
	struct owner o;

	assert_int_equal(owner_resolver__resolve(r, tgid, &o), 0);
	return o;
}

static void test_exited_keeps_owner(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root };
	struct owner_resolver *r;
	struct owner o;

	add_proc(fp, 500, 100, "0::/system.slice/cron.service\n");
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	assert_string_equal(resolve_ok(r, 500).name, "cron.service");
	del_proc(fp, 500);
	o = resolve_ok(r, 500);
	assert_int_equal(o.group, OWNER_UNIT);
	assert_string_equal(o.name, "cron.service");
	assert_int_equal(owner_resolver__resolve(r, 501, &o), -ESRCH);
	owner_resolver__free(r);
}

static void test_pid_reuse(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root };
	struct owner_resolver *r;

	add_proc(fp, 700, 100, "0::/system.slice/old.service\n");
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	assert_string_equal(resolve_ok(r, 700).name, "old.service");
	/* same process (same start time): the cache answers, /proc is not read again */
	fake_proc_write(fp->root, 700, "cgroup", "0::/system.slice/moved.service\n");
	assert_string_equal(resolve_ok(r, 700).name, "old.service");
	/* the PID was reused: another start time is another process */
	add_proc(fp, 700, 200, "0::/system.slice/new.service\n");
	assert_string_equal(resolve_ok(r, 700).name, "new.service");
	del_proc(fp, 700);
	assert_string_equal(resolve_ok(r, 700).name, "new.service");
	owner_resolver__free(r);
}

/* The seam: checks the tgid and the owner it is given, then renames or fails. */
static int fake_name(void *ctx, int tgid, struct owner *o)
{
	int ret;

	assert_ptr_equal(ctx, (void *)0x1234);
	check_expected(tgid);
	check_expected_ptr(o->pod_uid);
	ret = mock_type(int);
	/* a failing seam may have scribbled: the resolver must not keep that */
	snprintf(o->name, sizeof(o->name), "%s", ret ? "scribbled" : mock_ptr_type(const char *));
	if (!ret)
		o->group = OWNER_SERVICE;
	return ret;
}

static void test_name_fn(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = {
		.proc_root = fp->root, .name_fn = fake_name, .name_ctx = (void *)0x1234,
	};
	struct owner_resolver *r;
	struct owner o;

	add_proc(fp, 800, 1, "0::/kubepods/burstable/pod" POD_UID "/" CTR_ID "\n");
	add_proc(fp, 801, 1, "0::/system.slice/billing.service\n");
	add_proc(fp, 802, 1, "0::/system.slice/broken.service\n");
	assert_int_equal(owner_resolver__new(&opts, &r), 0);

	expect_value(fake_name, tgid, 800);
	expect_string(fake_name, o->pod_uid, POD_UID);
	will_return(fake_name, 0);
	will_return(fake_name, "billing");
	o = resolve_ok(r, 800);
	assert_int_equal(o.group, OWNER_SERVICE);
	assert_string_equal(o.name, "billing");
	assert_string_equal(o.container_id, CTR_ID);
	/* cached: the seam is not called again (an unexpected call fails the test) */
	assert_string_equal(resolve_ok(r, 800).name, "billing");

	/* a config rule turning a unit into a Service */
	expect_value(fake_name, tgid, 801);
	expect_string(fake_name, o->pod_uid, "");
	will_return(fake_name, 0);
	will_return(fake_name, "billing-batch");
	o = resolve_ok(r, 801);
	assert_int_equal(o.group, OWNER_SERVICE);
	assert_string_equal(o.name, "billing-batch");

	/* an error keeps the owner found from the cgroup */
	expect_value(fake_name, tgid, 802);
	expect_string(fake_name, o->pod_uid, "");
	will_return(fake_name, -EIO);
	o = resolve_ok(r, 802);
	assert_int_equal(o.group, OWNER_UNIT);
	assert_string_equal(o.name, "broken.service");
	owner_resolver__free(r);
}

static void test_eviction(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root, .max_entries = 2 };
	struct owner_resolver *r;
	struct owner o;

	add_proc(fp, 901, 1, "0::/system.slice/a.service\n");
	add_proc(fp, 902, 1, "0::/system.slice/b.service\n");
	add_proc(fp, 903, 1, "0::/system.slice/c.service\n");
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	resolve_ok(r, 901);
	resolve_ok(r, 902);
	resolve_ok(r, 901);	/* 902 is now the least recently used */
	resolve_ok(r, 903);	/* evicts 902 */
	del_proc(fp, 901);
	del_proc(fp, 902);
	del_proc(fp, 903);
	assert_string_equal(resolve_ok(r, 901).name, "a.service");
	assert_string_equal(resolve_ok(r, 903).name, "c.service");
	assert_int_equal(owner_resolver__resolve(r, 902, &o), -ESRCH);
	owner_resolver__free(r);
}

static void test_churn(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root, .max_entries = 8 };
	struct owner_resolver *r;
	char cg[64], want[32];
	int pid, round;

	for (pid = 1000; pid < 1100; pid++) {
		snprintf(cg, sizeof(cg), "0::/system.slice/s%d.service\n", pid);
		add_proc(fp, pid, 7, cg);
	}
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	for (round = 0; round < 3; round++) {
		for (pid = 1000; pid < 1100; pid++) {
			snprintf(want, sizeof(want), "s%d.service", pid);
			assert_string_equal(resolve_ok(r, pid).name, want);
		}
	}
	owner_resolver__free(r);
}

/* A cgroup file that cannot be used places nothing; it is not an error. */
static void test_bad_cgroup_file(void **state)
{
	struct fake_proc *fp = *state;
	struct owner_resolver_opts opts = { .proc_root = fp->root };
	struct owner_resolver *r;
	char path[256], *big;

	add_proc(fp, 1200, 1, "");
	snprintf(path, sizeof(path), "%s/1200/cgroup", fp->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);	/* read() fails with EISDIR */
	big = malloc(70 * 1024);
	assert_non_null(big);
	memset(big, 'a', 70 * 1024 - 1);
	big[70 * 1024 - 1] = '\0';
	add_proc(fp, 1201, 1, big);			/* over the 64 KiB bound */
	free(big);
	add_proc(fp, 1202, 1, "");			/* empty */
	assert_int_equal(owner_resolver__new(&opts, &r), 0);
	assert_int_equal(resolve_ok(r, 1200).group, OWNER_OTHER);
	assert_int_equal(resolve_ok(r, 1201).group, OWNER_OTHER);
	assert_int_equal(resolve_ok(r, 1202).group, OWNER_OTHER);
	owner_resolver__free(r);
	rmdir(path);
}

static void test_new_free(void **state)
{
	struct owner_resolver_opts opts = { .proc_root = "tests/fixtures/no-such-proc" };
	struct owner_resolver *r = (void *)0x1;

	(void)state;
	assert_int_equal(owner_resolver__new(&opts, &r), -ENOENT);
	assert_ptr_equal(r, (void *)0x1);
	assert_int_equal(owner_resolver__new(NULL, NULL), -EINVAL);
	/* all-zero opts: the real /proc; this test process is alive */
	assert_int_equal(owner_resolver__new(NULL, &r), 0);
	resolve_ok(r, getpid());
	assert_int_equal(owner_resolver__resolve(NULL, 1, &(struct owner){ 0 }), -EINVAL);
	assert_int_equal(owner_resolver__resolve(r, 1, NULL), -EINVAL);
	owner_resolver__free(r);
	owner_resolver__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		fake_proc_test(test_exited_keeps_owner),
		fake_proc_test(test_pid_reuse),
		fake_proc_test(test_name_fn),
		fake_proc_test(test_eviction),
		fake_proc_test(test_churn),
		fake_proc_test(test_bad_cgroup_file),
		cmocka_unit_test(test_new_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
