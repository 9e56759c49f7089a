// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for base/proc.c: /proc/PID/stat parsing on real-looking lines, and the readers
 * against the fake /proc in tests/fixtures/proc (tests run from the repository root) and a
 * temporary tree for the files a fixture cannot hold.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "base/fileio.h"
#include "base/proc.h"

#define FIXTURES "tests/fixtures/proc"

/* The tail after starttime (field 22) of a real line; the parser stops at field 22. */
#define TAIL " 8945664 890 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 0 0 0 0 0 0\n"

static void test_parse_stat(void **state)
{
	static const struct {
		const char *line;
		int ret;
		char state;
		long long ppid, session, tty_nr;
		unsigned long long flags, starttime;
	} cases[] = {
		{ "100 (bash) S 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  0, 'S', 90, 100, 0, 4194560, 5000 },
		{ "102 (vim) S 99 102 300 34816 -1 4194304 120 0 0 0 3 1 0 0 20 0 1 0 5200" TAIL,
		  0, 'S', 99, 300, 34816, 4194304, 5200 },
		{ "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 20" TAIL,
		  0, 'S', 0, 0, 0, 2129984, 20 },
		/* comm with spaces and ')': the fields start after the last ')' */
		{ "103 (evil) (name) S 100 103 100 0 -1 4194304 120 0 0 0 3 1 0 0 20 0 1 0 5300" TAIL,
		  0, 'S', 100, 100, 0, 4194304, 5300 },
		{ "7 (a) b ) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77" TAIL,
		  0, 'R', 1, 7, 0, 0, 77 },
		{ "8 ()) Z 1 8 8 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 88" TAIL,
		  0, 'Z', 1, 8, 0, 4194564, 88 },
		{ "4 (kworker/R-rcu_gp) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 -20 1 0 20" TAIL,
		  0, 'I', 2, 0, 0, 69238880, 20 },
		/* ends at starttime, with or without a newline; large unsigned values */
		{ "9 (x) S 1 9 9 0 -1 18446744073709551615 0 0 0 0 0 0 0 0 20 0 1 0 "
		  "18446744073709551615", 0, 'S', 1, 9, 0, ~0ull, ~0ull },
		{ "9 (x) S 1 9 9 -5 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n", 0, 'S', 1, 9, -5, 0, 9 },
		/* error rows */
		{ "", -EINVAL },
		{ "100 bash S 90", -EINVAL },					/* no ')' */
		{ "100 (bash)", -EINVAL },					/* no state */
		{ "100 (bash) ", -EINVAL },
		{ "100 (bash)S 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },							/* no space */
		{ "100 (bash)  90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },							/* no state */
		{ "100 (bash) SS 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },							/* two chars */
		{ "401 (broken) S 1 401\n", -EINVAL },				/* cut short */
		{ "100 (bash) S 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0\n", -EINVAL },
		{ "100 (bash) S x90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },							/* not a number */
		{ "100 (bash) S 90x 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },
		{ "100 (bash) S 90 100 100 0 -1 -4194560 120 0 0 0 3 1 0 0 20 0 1 0 5000" TAIL,
		  -EINVAL },							/* negative flags */
		{ "100 (bash) S 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 -5000" TAIL,
		  -EINVAL },							/* negative start */
		{ "100 (bash) S 99999999999999999999 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 "
		  "1 0 5000" TAIL, -EINVAL },					/* out of range */
		{ "100 (bash) S 90 100 100 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 "
		  "18446744073709551616" TAIL, -EINVAL },
	};
	struct proc_stat st;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&st, 0x5a, sizeof(st));
		assert_int_equal(proc_parse_stat(cases[i].line, strlen(cases[i].line), &st),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_int_equal(st.ppid, 0x5a5a5a5a5a5a5a5all);	/* untouched */
			continue;
		}
		assert_int_equal(st.state, cases[i].state);
		assert_int_equal(st.ppid, cases[i].ppid);
		assert_int_equal(st.session, cases[i].session);
		assert_int_equal(st.tty_nr, cases[i].tty_nr);
		assert_true(st.flags == cases[i].flags);
		assert_true(st.starttime == cases[i].starttime);
	}
}

/* A NUL byte inside @len is refused (comm cannot hold one). */
static void test_parse_stat_nul(void **state)
{
	static const char line[] = "1 (a\0b) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n";
	struct proc_stat st;

	(void)state;
	assert_int_equal(proc_parse_stat(line, sizeof(line) - 1, &st), -EINVAL);
}

static void test_gone_and_path(void **state)
{
	static const struct {
		int err, want;
	} gone[] = {
		{ -ENOENT, -ESRCH }, { -ESRCH, -ESRCH }, { 0, 0 }, { -EACCES, -EACCES },
		{ -EFBIG, -EFBIG }, { -EINVAL, -EINVAL },
	};
	static const struct {
		const char *root, *name;
		uint32_t pid;
		size_t size;
		int ret;
		const char *want;
	} paths[] = {
		{ NULL, "stat", 42, 64, 0, "/proc/42/stat" },
		{ "/tmp/p", "comm", 4294967295u, 64, 0, "/tmp/p/4294967295/comm" },
		{ NULL, "stat", 42, 14, 0, "/proc/42/stat" },		/* exactly fits */
		{ NULL, "stat", 42, 13, -ENAMETOOLONG, NULL },
		{ NULL, "stat", 42, 0, -ENAMETOOLONG, NULL },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(gone); i++) {
		print_message("gone %zu\n", i);
		assert_int_equal(proc_gone(gone[i].err), gone[i].want);
	}
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		print_message("path %zu\n", i);
		assert_int_equal(proc_path(buf, paths[i].size, paths[i].root, paths[i].pid,
					   paths[i].name), paths[i].ret);
		if (!paths[i].ret)
			assert_string_equal(buf, paths[i].want);
	}
}

/* proc_exists(): false only when the directory is certainly not there. */
static void test_exists(void **state)
{
	char root[] = "/tmp/test_proc_exists.XXXXXX", dir[64], longroot[600];
	static const struct {
		uint32_t pid;
		bool want;
	} cases[] = {
		{ 12, true },  /* a directory */
		{ 13, true },  /* a zombie still has one: here a plain file stands for it */
		{ 14, false }, /* gone */
		{ 0, false },
	};
	size_t i;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/12", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/13", root);
	f = fopen(dir, "w");
	assert_non_null(f);
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(proc_exists(root, cases[i].pid), cases[i].want);
	}
	assert_false(proc_exists("/nonexistent-proc", 1));
	assert_true(proc_exists(NULL, (uint32_t)getpid()));
	/* a path that does not fit says nothing: kept */
	memset(longroot, 'a', sizeof(longroot) - 1);
	longroot[0] = '/';
	longroot[sizeof(longroot) - 1] = '\0';
	assert_true(proc_exists(longroot, 1));
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/12", root);
	rmdir(dir);
	rmdir(root);
}

static void test_read_fixtures(void **state)
{
	static const struct {
		uint32_t pid;
		int ret;
		char state;
		long long ppid;
		unsigned long long starttime;
		const char *comm;
		int comm_ret;
	} cases[] = {
		{ 100, 0, 'S', 90, 5000, "bash", 0 },
		{ 103, 0, 'S', 100, 5300, "evil) (name", 0 },
		{ 4, 0, 'I', 2, 20, "kworker/R-rcu_gp", 0 },
		{ 600, 0, 'Z', 1, 9000, "exiting", 0 },
		{ 401, -EINVAL, 0, 0, 0, "broken", 0 },		/* stat cut short */
		{ 999, -ESRCH, 0, 0, 0, "", -ESRCH },		/* no such process */
		{ 0, -ESRCH, 0, 0, 0, "", -ESRCH },
	};
	struct proc_stat st;
	char comm[64];
	size_t i;
	int dfd;

	(void)state;
	dfd = open(FIXTURES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&st, 0, sizeof(st));
		assert_int_equal(proc_read_stat(FIXTURES, cases[i].pid, &st), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(st.state, cases[i].state);
			assert_int_equal(st.ppid, cases[i].ppid);
			assert_true(st.starttime == cases[i].starttime);
		}
		memset(&st, 0, sizeof(st));
		assert_int_equal(proc_read_stat_at(dfd, cases[i].pid, &st), cases[i].ret);
		if (!cases[i].ret)
			assert_true(st.starttime == cases[i].starttime);
		memset(comm, 'x', sizeof(comm));
		assert_int_equal(proc_read_comm(FIXTURES, cases[i].pid, comm, sizeof(comm)),
				 cases[i].comm_ret);
		assert_string_equal(comm, cases[i].comm);
	}
	close(dfd);
}

static void test_read_files(void **state)
{
	static const struct {
		const char *name;
		size_t max;
		int ret;
		const char *want;
	} cases[] = {
		{ "comm", 64, 0, "init\n" },
		{ "comm", 5, 0, "init\n" },		/* exactly @max */
		{ "comm", 4, -EFBIG, NULL },
		{ "cgroup", 65536, 0, NULL },		/* any content */
		{ "environ", 64, -ESRCH, NULL },	/* absent file: as if gone */
		{ "", 64, -EISDIR, NULL },		/* the directory itself */
	};
	size_t i, len;
	char *text;
	int dfd;

	(void)state;
	dfd = open(FIXTURES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		text = NULL;
		assert_int_equal(proc_read(FIXTURES, 1, cases[i].name, cases[i].max, &text, &len),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(strlen(text), len);
			if (cases[i].want)
				assert_string_equal(text, cases[i].want);
			free(text);
		} else {
			assert_null(text);
		}
		text = NULL;
		assert_int_equal(proc_read_at(dfd, 1, cases[i].name, cases[i].max, &text, &len),
				 cases[i].ret);
		free(text);
	}
	/* the real /proc through AT_FDCWD and a NULL root */
	assert_int_equal(proc_read_at(AT_FDCWD, (uint32_t)getpid(), "comm", 64, &text, NULL), 0);
	free(text);
	assert_int_equal(proc_read(NULL, 0, "stat", 64, &text, NULL), -ESRCH);
	close(dfd);
}

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* comm without a newline, comm cut to a small buffer, a stat line that is too long. */
static void test_read_tmp(void **state)
{
	char root[] = "/tmp/test_proc.XXXXXX", dir[128], comm[8], *big;
	struct proc_stat st;
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/7", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(write_text(dir, "comm", "no-newline-comm"), 0);
	big = malloc(PROC_STAT_MAX + 2);
	assert_non_null(big);
	memset(big, '1', PROC_STAT_MAX + 1);
	big[PROC_STAT_MAX + 1] = '\0';
	assert_int_equal(write_text(dir, "stat", big), 0);
	free(big);

	assert_int_equal(proc_read_comm(root, 7, comm, sizeof(comm)), 0);
	assert_string_equal(comm, "no-newl");
	assert_int_equal(proc_read_comm(root, 7, comm, 0), 0);		/* nothing written */
	assert_int_equal(proc_read_stat(root, 7, &st), -EFBIG);
	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(proc_read_stat_at(dfd, 7, &st), -EFBIG);
	assert_int_equal(proc_read_stat_at(dfd, 8, &st), -ESRCH);
	assert_int_equal(rm_tree_at(dfd, "7", 1), 0);
	close(dfd);
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_stat_nul),
		cmocka_unit_test(test_gone_and_path),
		cmocka_unit_test(test_exists),
		cmocka_unit_test(test_read_fixtures),
		cmocka_unit_test(test_read_files),
		cmocka_unit_test(test_read_tmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
