// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for base/fileio.c in a temporary directory: bounded reads, opens inside a root,
 * atomic writes, write_all, mkdir_p and rm_tree_at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include <sched.h>
#include <sys/mount.h>
#include <cmocka.h>

#include "base/array.h"
#include "base/fileio.h"

struct tmp {
	char root[64];
	int dfd;
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->root, sizeof(t->root), "/tmp/test_fileio.XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	t->dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = t;
	return t->dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	int err;

	err = rm_tree_at(AT_FDCWD, t->root, 16);
	close(t->dfd);
	free(t);
	return err ? -1 : 0;
}

/* Creates @rel under the temp root: a directory when it ends in '/', else a file of @text. */
static void make(struct tmp *t, const char *rel, const char *text)
{
	size_t n = strlen(rel);
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	if (rel[n - 1] == '/') {
		assert_int_equal(mkdir_p(path), 0);
		return;
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static bool exists(struct tmp *t, const char *rel)
{
	struct stat st;

	return fstatat(t->dfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_read_bounded(void **state)
{
	static const struct {
		const char *name, *text;
		size_t max;
		int ret;
	} cases[] = {
		{ "empty", "", 0, 0 },
		{ "empty", "", 10, 0 },
		{ "five", "12345", 5, 0 },			/* exactly @max */
		{ "five", "12345", 6, 0 },
		{ "five", "12345", 4, -EFBIG },
		{ "five", "12345", 0, -EFBIG },
		{ "absent", NULL, 10, -ENOENT },
		{ ".", NULL, 10, -EISDIR },
	};
	struct tmp *t = *state;
	size_t i, len;
	char *text;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		if (cases[i].text)
			make(t, cases[i].name, cases[i].text);
		text = NULL;
		len = 12345;
		assert_int_equal(read_file_bounded(t->dfd, cases[i].name, cases[i].max, &text,
						   &len), cases[i].ret);
		if (cases[i].ret) {
			assert_null(text);
			assert_int_equal(len, 12345);
			continue;
		}
		assert_int_equal(len, strlen(cases[i].text));
		assert_string_equal(text, cases[i].text);
		free(text);
	}
}

/* Files larger than the first 4 KiB buffer, at and around the bound. */
static void test_read_large(void **state)
{
	static const struct {
		size_t size, max;
		int ret;
	} cases[] = {
		{ 4095, 4095, 0 }, { 4096, 4096, 0 }, { 4097, 4097, 0 }, { 100000, 100000, 0 },
		{ 100000, 1 << 20, 0 }, { 100000, 99999, -EFBIG }, { 4097, 4096, -EFBIG },
	};
	struct tmp *t = *state;
	char *big, *text;
	size_t i, len;
	int fd;

	big = malloc(100001);
	assert_non_null(big);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(big, 'a' + (int)(i % 26), cases[i].size);
		big[cases[i].size] = '\0';
		make(t, "large", big);
		fd = openat(t->dfd, "large", O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		text = NULL;
		assert_int_equal(read_fd_bounded(fd, cases[i].max, &text, &len), cases[i].ret);
		close(fd);
		if (!cases[i].ret) {
			assert_int_equal(len, cases[i].size);
			assert_memory_equal(text, big, len + 1);
		}
		free(text);
	}
	free(big);
}

static void test_open_in_root(void **state)
{
	static const struct {
		const char *path;
		int ret;		/* 1: opens, and reads "inside" */
	} cases[] = {
		{ "etc/os-release", 1 },
		{ "/etc/os-release", 1 },		/* absolute: from the root */
		{ "../../etc/os-release", 1 },		/* ".." stops at the root */
		{ "abs-link", 1 },			/* an absolute link resolves inside */
		{ "up-link", 1 },
		{ "etc/absent", -ENOENT },
		{ "into-proc", -ENOENT },		/* /proc/self/...: inside too, no /proc */
	};
	struct tmp *t = *state;
	char root[PATH_MAX], buf[16];
	ssize_t n;
	size_t i;
	int fd;

	snprintf(root, sizeof(root), "%s/r", t->root);
	make(t, "r/etc/", NULL);
	make(t, "r/etc/os-release", "inside");
	assert_int_equal(symlinkat("/etc/os-release", t->dfd, "r/abs-link"), 0);
	assert_int_equal(symlinkat("../../../../etc/os-release", t->dfd, "r/up-link"), 0);
	assert_int_equal(symlinkat("/proc/self/root/etc/os-release", t->dfd, "r/into-proc"), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fd = open_in_root(root, cases[i].path, O_RDONLY);
		if (cases[i].ret < 0) {
			assert_int_equal(fd, cases[i].ret);
			continue;
		}
		assert_true(fd >= 0);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		assert_true(n >= 0);
		buf[n] = '\0';
		assert_string_equal(buf, "inside");
	}
	assert_int_equal(open_in_root("/nonexistent-root", "x", O_RDONLY), -ENOENT);
	/* a magic link (/proc/PID/cwd) is refused */
	assert_int_equal(open_in_root("/proc/self", "cwd", O_RDONLY | O_DIRECTORY), -ELOOP);
}

struct writer {
	const char *text;
	int ret;
};

static int write_fn(void *ctx, FILE *f)
{
	const struct writer *w = ctx;

	fputs(w->text, f);
	return w->ret;
}

static int count_entries(struct tmp *t)
{
	char cmd[128];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s/aw | wc -l", t->root);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void test_atomic_write(void **state)
{
	static const struct {
		const char *name;
		struct writer w;
		int ret;
		const char *want;	/* the content afterwards, NULL: absent */
	} cases[] = {
		{ "aw/a", { "one", 0 }, 0, "one" },
		{ "aw/a", { "two, longer", 0 }, 0, "two, longer" },	/* replaces */
		{ "aw/a", { "three", 5 }, 0, "three" },		/* a count is success */
		{ "aw/a", { "broken", -EIO }, -EIO, "three" },	/* the old file stays */
		{ "aw/b", { "x", -ENOSPC }, -ENOSPC, NULL },	/* untouched: still absent */
		{ "aw/c", { "", 0 }, 0, "" },
		{ "aw/none/d", { "x", 0 }, -ENOENT, NULL },		/* no directory */
	};
	struct tmp *t = *state;
	char path[PATH_MAX], *text;
	struct stat st;
	size_t i;

	make(t, "aw/", NULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *want = cases[i].want;

		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), "%s/%s", t->root, cases[i].name);
		assert_int_equal(atomic_write_file(path, write_fn, (void *)&cases[i].w),
				 cases[i].ret);
		if (!want) {
			assert_false(exists(t, cases[i].name));
			continue;
		}
		assert_int_equal(read_file_bounded(t->dfd, cases[i].name, 64, &text, NULL), 0);
		assert_string_equal(text, want);
		free(text);
		assert_int_equal(fstatat(t->dfd, cases[i].name, &st, 0), 0);
		assert_int_equal(st.st_mode & 0777, 0644);
	}
	assert_int_equal(count_entries(t), 2);		/* a and c: no temp file left */
}

static void test_atomic_write_buf(void **state)
{
	static const struct {
		const char *name, *data;
		size_t len;
		int ret;
	} cases[] = {
		{ "wb/a", "hello", 5, 0 },
		{ "wb/a", "bin\0ary", 7, 0 },		/* replaces; NUL bytes kept */
		{ "wb/b", NULL, 0, 0 },			/* empty */
		{ "wb/none/c", "x", 1, -ENOENT },
	};
	struct tmp *t = *state;
	char path[PATH_MAX], *text;
	size_t i, len;

	make(t, "wb/", NULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), "%s/%s", t->root, cases[i].name);
		assert_int_equal(atomic_write_buf(path, cases[i].data, cases[i].len), cases[i].ret);
		if (cases[i].ret) {
			assert_false(exists(t, cases[i].name));
			continue;
		}
		assert_int_equal(read_file_bounded(t->dfd, cases[i].name, 64, &text, &len), 0);
		assert_int_equal(len, cases[i].len);
		if (len)
			assert_memory_equal(text, cases[i].data, len);
		free(text);
	}
}

/* write_all: every byte reaches the file; an fd it cannot write gives -errno. */
static void test_write_all(void **state)
{
	enum { TO_FILE, READ_ONLY, BAD_FD, FULL_PIPE };
	static const struct {
		int kind;
		size_t len;
		int ret;
	} cases[] = {
		{ TO_FILE, 0, 0 },
		{ TO_FILE, 5, 0 },
		{ TO_FILE, 1 << 20, 0 },
		{ READ_ONLY, 5, -EBADF },
		{ BAD_FD, 5, -EBADF },
		{ FULL_PIPE, 1 << 20, -EAGAIN }, /* non-blocking and no reader draining it */
	};
	struct tmp *t = *state;
	char *data, *text;
	size_t i, len;
	int fd, p[2];

	data = malloc(1 << 20);
	assert_non_null(data);
	for (i = 0; i < (1 << 20); i++)
		data[i] = (char)(i * 31);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p[0] = p[1] = -1;
		if (cases[i].kind == FULL_PIPE) {
			assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
			fd = p[1];
		} else if (cases[i].kind == BAD_FD) {
			fd = -1;
		} else {
			make(t, "w.bin", "");
			fd = openat(t->dfd, "w.bin",
				    (cases[i].kind == READ_ONLY ? O_RDONLY : O_WRONLY | O_TRUNC) |
					    O_CLOEXEC);
			assert_true(fd >= 0);
		}
		assert_int_equal(write_all(fd, data, cases[i].len), cases[i].ret);
		if (fd >= 0)
			close(fd);
		if (p[0] >= 0)
			close(p[0]);
		if (cases[i].ret)
			continue;
		assert_int_equal(read_file_bounded(t->dfd, "w.bin", 2 << 20, &text, &len), 0);
		assert_int_equal(len, cases[i].len);
		if (len)
			assert_memory_equal(text, data, len);
		free(text);
	}
	free(data);
}

static void test_mkdir_p(void **state)
{
	static const struct {
		const char *rel;
		int ret;
	} cases[] = {
		{ "m/a/b/c", 0 },
		{ "m/a/b/c", 0 },		/* exists */
		{ "m/a//d/", 0 },
		{ "m/file/x", -ENOTDIR },	/* a file on the way */
	};
	struct tmp *t = *state;
	char path[PATH_MAX], *longp;
	struct stat st;
	size_t i;

	make(t, "m/", NULL);
	make(t, "m/file", "x");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), "%s/%s", t->root, cases[i].rel);
		assert_int_equal(mkdir_p(path), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(stat(path, &st), 0);
			assert_true(S_ISDIR(st.st_mode));
		}
	}
	longp = malloc(PATH_MAX + 2);
	assert_non_null(longp);
	memset(longp, 'a', PATH_MAX + 1);
	longp[PATH_MAX + 1] = '\0';
	assert_int_equal(mkdir_p(longp), -ENAMETOOLONG);
	free(longp);
}

/* Builds a chain of @depth nested directories "d/d/d..." under @top with a file at the end. */
static void make_chain(struct tmp *t, const char *top, int depth)
{
	char rel[PATH_MAX];
	int n, i;

	n = snprintf(rel, sizeof(rel), "%s", top);
	for (i = 0; i < depth; i++)
		n += snprintf(rel + n, sizeof(rel) - (size_t)n, "/d");
	snprintf(rel + n, sizeof(rel) - (size_t)n, "/");
	make(t, rel, NULL);
	snprintf(rel + n, sizeof(rel) - (size_t)n, "/leaf");
	make(t, rel, "x");
}

static void test_rm_tree(void **state)
{
	static const struct {
		const char *what;
		int max_depth, ret;
		bool gone;
	} cases[] = {
		{ "file", 0, 0, true },
		{ "empty-dir", 0, 0, true },
		{ "tree", 4, 0, true },			/* dirs, files, a link to outside */
		{ "link-to-dir", 4, 0, true },		/* the link goes, the target stays */
		{ "absent", 4, 0, true },
		{ "chain3", 3, 0, true },		/* exactly @max_depth levels */
		{ "chain4", 3, -ELOOP, false },		/* one level too deep */
		{ "chain1", 0, -ELOOP, false },
	};
	struct tmp *t = *state;
	size_t i;

	make(t, "file", "x");
	make(t, "empty-dir/", NULL);
	make(t, "tree/a/b/", NULL);
	make(t, "tree/a/b/f", "x");
	make(t, "tree/a/g", "x");
	make(t, "tree/h", "x");
	make(t, "tree/e/", NULL);
	make(t, "keep/", NULL);
	make(t, "keep/precious", "x");
	assert_int_equal(symlinkat("../../keep", t->dfd, "tree/a/to-keep"), 0);
	assert_int_equal(symlinkat("keep/precious", t->dfd, "tree/to-file"), 0);
	assert_int_equal(symlinkat("keep", t->dfd, "link-to-dir"), 0);
	assert_int_equal(symlinkat("nowhere", t->dfd, "tree/dangling"), 0);
	make_chain(t, "chain3", 3);
	make_chain(t, "chain4", 4);
	make_chain(t, "chain1", 1);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(rm_tree_at(t->dfd, cases[i].what, cases[i].max_depth),
				 cases[i].ret);
		assert_int_equal(exists(t, cases[i].what), !cases[i].gone);
		/* links are never followed */
		assert_true(exists(t, "keep/precious"));
	}
	/* too deep: what could be removed is (the files above the limit), the rest stays */
	assert_false(exists(t, "chain4/d/d/d/leaf"));
	assert_true(exists(t, "chain4/d/d/d/d/leaf"));
	assert_int_equal(rm_tree_at(t->dfd, "chain4", 4), 0);
	assert_false(exists(t, "chain4"));
	/* a path through a file (teardown() removes an absolute path with AT_FDCWD) */
	assert_int_equal(rm_tree_at(t->dfd, "keep/precious/x", 1), -ENOTDIR);
}

/* A directory mounted inside the tree (a bind mount, in a mount namespace of the test's own)
 * is never entered: -EXDEV, its files kept; once it is unmounted the tree goes. */
static void test_rm_tree_mount(void **state)
{
	struct tmp *t = *state;
	char src[PATH_MAX], dst[PATH_MAX];
	int ret;

	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	/* the fd of the namespace we left would walk its mounts: one of this namespace */
	close(t->dfd);
	t->dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t->dfd >= 0);
	make(t, "outside/", NULL);
	make(t, "outside/precious", "x");
	make(t, "tree/mnt/", NULL);
	make(t, "tree/f", "x");
	snprintf(src, sizeof(src), "%s/outside", t->root);
	snprintf(dst, sizeof(dst), "%s/tree/mnt", t->root);
	assert_int_equal(mount(src, dst, NULL, MS_BIND, NULL), 0);
	/* the kernel refuses to unlink a mount point (-EBUSY) before it is looked into */
	ret = rm_tree_at(t->dfd, "tree", 4);
	assert_true(ret == -EBUSY || ret == -EXDEV);
	assert_true(exists(t, "outside/precious"));
	assert_true(exists(t, "tree/mnt/precious"));
	assert_false(exists(t, "tree/f"));
	assert_int_equal(umount(dst), 0);
	assert_int_equal(rm_tree_at(t->dfd, "tree", 4), 0);
	assert_false(exists(t, "tree"));
	assert_true(exists(t, "outside/precious"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_in_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write_buf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_tree_mount, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
