/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixture helpers shared by the unit tests: scratch directories and a fake /proc written to one
 * at test time (the shape of tests/fixtures/proc). Header-only and static inline, so that every
 * test binary still links against its own module only. Failures of the helpers fail the test
 * that called them (cmocka assertions).
 */
#ifndef SLIDEOPS_TESTS_UNIT_FIXTURES_H
#define SLIDEOPS_TESTS_UNIT_FIXTURES_H

#include <limits.h>
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

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* --- files and scratch directories ----------------------------------------------------------- */

/* Removes @dir and everything below it; 0, or -1 when rm failed. */
static inline int fx_rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* Writes @len bytes of @data to @path (created or truncated). */
static inline void fx_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* --- a fake /proc ---------------------------------------------------------------------------- */

/* A fake /proc in a temporary directory: the state of the setup_fake_proc() tests. */
struct fake_proc {
	char root[64];
};

#define FX_PF_KTHREAD 0x00200000u

/* Writes @text to <@root>/<@pid>/<@name>, making the pid's directory when it is missing. */
static inline void fake_proc_write(const char *root, int pid, const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	fx_write(path, text, strlen(text));
}

/*
 * A process @pid named @comm leading its own session, no tty, child of PID 1 (or of kthreadd
 * with PF_KTHREAD when @kthread), started @start clock ticks after boot (0: 1000 + @pid), in
 * cgroup @cg (a v2 line or a whole v1 file); @exe, when not NULL, is what /proc/PID/exe points
 * to (the file need not exist).
 */
static inline void fake_proc_add(const char *root, int pid, const char *comm, const char *cg,
				 const char *exe, int kthread, unsigned long long start)
{
	char text[512], path[256];

	snprintf(text, sizeof(text),
		 "%d (%s) S %d %d %d 0 -1 %u 10 0 0 0 1 1 0 0 20 0 1 0 %llu 1000 10 "
		 "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, comm, kthread ? 2 : 1, kthread ? 0 : pid, kthread ? 0 : pid,
		 kthread ? FX_PF_KTHREAD : 4194560u, start ? start : 1000ull + pid);
	fake_proc_write(root, pid, "stat", text);
	snprintf(text, sizeof(text), "%s\n", comm);
	fake_proc_write(root, pid, "comm", text);
	fake_proc_write(root, pid, "cgroup", cg);
	if (exe) {
		snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
		assert_int_equal(symlink(exe, path), 0);
	}
}

/* A cmocka setup: an empty fake /proc (struct fake_proc, in *@state). */
static inline int setup_fake_proc(void **state)
{
	struct fake_proc *fp = calloc(1, sizeof(*fp));

	if (!fp)
		return -1;
	snprintf(fp->root, sizeof(fp->root), "/tmp/fake_proc.XXXXXX");
	if (!mkdtemp(fp->root)) {
		free(fp);
		return -1;
	}
	*state = fp;
	return 0;
}

/* A cmocka test of @f on a fresh, empty fake /proc. */
#define fake_proc_test(f) cmocka_unit_test_setup_teardown(f, setup_fake_proc, teardown_fake_proc)

/* The cmocka teardown of setup_fake_proc(): removes the directory. */
static inline int teardown_fake_proc(void **state)
{
	struct fake_proc *fp = *state;

	if (fx_rm_rf(fp->root))
		return -1;
	free(fp);
	return 0;
}

#endif /* SLIDEOPS_TESTS_UNIT_FIXTURES_H */
