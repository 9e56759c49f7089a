// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for base/safe_open.c in a temporary "container root": absolute and relative
 * links, "..", link loops, FIFOs, sockets, device nodes, directories, size caps, inode checks,
 * map_files of this process, and reads bounded in bytes and time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/safe_open.h"

struct tmp {
	char base[64];		/* the host side: base/outside.txt is the canary */
	char root[96];		/* base/root: the container's root */
	int rootfd;
	bool have_dev;		/* the char device node could be made (root) */
};

static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_at(const char *dir, const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(symlink(target, path), 0);
}

static void make_socket(const char *dir, const char *rel)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, rel);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char path[PATH_MAX], big[8192];

	if (!t)
		return -1;
	snprintf(t->base, sizeof(t->base), "/tmp/test_safe_open.XXXXXX");
	if (!mkdtemp(t->base))
		return -1;
	snprintf(t->root, sizeof(t->root), "%s/root", t->base);
	put(t->base, "outside.txt", "host canary");
	assert_int_equal(mkdir(t->root, 0755), 0);
	snprintf(path, sizeof(path), "%s/lib", t->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/etc", t->root);
	assert_int_equal(mkdir(path, 0755), 0);
	put(t->root, "lib/real.so", "real");
	put(t->root, "etc/inside", "inside");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(t->root, "lib/big", big);
	/* an absolute link to the host's canary: resolved inside the root, it is not there */
	snprintf(path, sizeof(path), "%s/outside.txt", t->base);
	link_at(t->root, "lib/abs-host", path);
	link_at(t->root, "lib/abs-inside", "/etc/inside");
	link_at(t->root, "lib/rel-up", "../../../../../outside.txt");
	link_at(t->root, "lib/rel-inside", "../etc/inside");
	link_at(t->root, "lib/loop-a", "loop-b");
	link_at(t->root, "lib/loop-b", "loop-a");
	link_at(t->root, "lib/magic", "/proc/self/root/etc/hostname");
	snprintf(path, sizeof(path), "%s/lib/fifo", t->root);
	assert_int_equal(mkfifo(path, 0644), 0);
	link_at(t->root, "lib/to-fifo", "fifo");
	make_socket(t->root, "lib/sock");
	snprintf(path, sizeof(path), "%s/lib/null", t->root);
	t->have_dev = !mknod(path, S_IFCHR | 0666, makedev(1, 3));
	t->rootfd = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*state = t;
	return t->rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	int err;

	close(t->rootfd);
	err = rm_tree_at(AT_FDCWD, t->base, 8);
	free(t);
	return err ? -1 : 0;
}

/* The inode of @rel under the root. */
static uint64_t ino_of(const struct tmp *t, const char *rel)
{
	char path[PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_ino;
}

enum ino_mode { INO_ANY, INO_RIGHT, INO_WRONG };

struct open_case {
	const char *path;
	uint64_t max_size;
	enum ino_mode ino;
	int err;		/* 0: opens */
	const char *text;	/* what it holds when it opens */
	bool needs_dev;
};

static const struct open_case open_cases[] = {
	{ "/lib/real.so", 0, INO_ANY, 0, "real" },
	{ "lib/real.so", 0, INO_ANY, 0, "real" },			/* relative to the root */
	{ "/../../../lib/real.so", 0, INO_ANY, 0, "real" },		/* ".." stops at the root */
	{ "/lib/abs-inside", 0, INO_ANY, 0, "inside" },
	{ "/lib/rel-inside", 0, INO_ANY, 0, "inside" },
	{ "/lib/abs-host", 0, INO_ANY, -ENOENT, NULL },			/* never the host file */
	{ "/lib/rel-up", 0, INO_ANY, -ENOENT, NULL },
	{ "/../outside.txt", 0, INO_ANY, -ENOENT, NULL },
	/* /proc is not in the root */
	{ "/lib/magic", 0, INO_ANY, -ENOENT, NULL },
	{ "/lib/loop-a", 0, INO_ANY, -ELOOP, NULL },
	{ "/lib/fifo", 0, INO_ANY, -ENOTSUP, NULL },			/* no wait for a writer */
	{ "/lib/to-fifo", 0, INO_ANY, -ENOTSUP, NULL },
	{ "/lib/sock", 0, INO_ANY, -ENOTSUP, NULL },
	{ "/lib/null", 0, INO_ANY, -ENOTSUP, NULL, true },		/* no driver open() */
	{ "/lib", 0, INO_ANY, -ENOTSUP, NULL },
	{ "/lib/missing", 0, INO_ANY, -ENOENT, NULL },
	{ "/lib/big", 4096, INO_ANY, -EFBIG, NULL },
	{ "/lib/big", 8191, INO_ANY, 0, NULL },
	{ "/lib/real.so", 0, INO_RIGHT, 0, "real" },
	{ "/lib/real.so", 0, INO_WRONG, -ESTALE, NULL },
	{ "", 0, INO_ANY, -EINVAL, NULL },
};

static void test_open_in_root(void **state)
{
	struct tmp *t = *state;
	size_t i, len;
	char *text;
	int fd;

	for (i = 0; i < ARRAY_SIZE(open_cases); i++) {
		const struct open_case *c = &open_cases[i];
		struct safe_open_opts o = { .max_size = c->max_size };

		if (c->needs_dev && !t->have_dev)
			continue;
		if (c->ino != INO_ANY)
			o.ino = ino_of(t, c->path + 1) + (c->ino == INO_WRONG);
		fd = safe_open_in_root(t->rootfd, c->path, &o);
		if (c->err) {
			if (fd != c->err)
				fail_msg("case %zu %s: %d, want %d", i, c->path, fd, c->err);
			continue;
		}
		if (fd < 0)
			fail_msg("case %zu %s: %d", i, c->path, fd);
		assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
		assert_int_equal(safe_read_fd(fd, 1 << 20, 1000, &text, &len), 0);
		if (c->text)
			assert_string_equal(text, c->text);
		free(text);
		close(fd);
	}
}

static void test_open_root_and_path(void **state)
{
	struct tmp *t = *state;
	char *text;
	size_t len;
	int fd;

	fd = safe_open_root(NULL, (uint32_t)getpid());
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(safe_open_root(t->base, 4242), -ESRCH);	/* no t->base/4242 */
	assert_int_equal(safe_read_in_root(t->root, "/lib/abs-inside", 64, 1000, &text, &len), 0);
	assert_string_equal(text, "inside");
	assert_int_equal(len, 6);
	free(text);
	assert_int_equal(safe_read_in_root(t->root, "/lib/big", 64, 1000, &text, &len), -EFBIG);
	assert_int_equal(safe_read_in_root(t->root, "/lib/fifo", 64, 1000, &text, &len), -ENOTSUP);
	assert_int_equal(safe_read_in_root(t->root, "/lib/abs-host", 64, 1000, &text, &len),
			 -ENOENT);
	assert_int_equal(safe_open_in_root(-1, "/lib/real.so", NULL), -EINVAL);
}

/* map_files of this process: the mapped inode, a wrong one, and a range that is not mapped. */
static void test_map_file(void **state)
{
	struct tmp *t = *state;
	char path[PATH_MAX];
	struct safe_open_opts o = { .ino = ino_of(t, "lib/real.so") };
	uint64_t start;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/lib/real.so", t->root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	start = (uintptr_t)p;
	fd = safe_open_map_file(NULL, (uint32_t)getpid(), start, start + 4096, &o);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
	o.ino++;
	assert_int_equal(safe_open_map_file(NULL, (uint32_t)getpid(), start, start + 4096, &o),
			 -ESTALE);
	o.ino = 0;
	o.max_size = 2;
	assert_int_equal(safe_open_map_file(NULL, (uint32_t)getpid(), start, start + 4096, &o),
			 -EFBIG);
	munmap(p, 4096);
	assert_int_equal(safe_open_map_file(NULL, (uint32_t)getpid(), start, start + 4096, NULL),
			 -ENOENT);
}

/* A kernel-style link (here a plain one under a directory fd) to a FIFO or a device. */
static void test_open_link(void **state)
{
	struct tmp *t = *state;
	int fd;

	assert_int_equal(safe_open_link(t->rootfd, "lib/to-fifo", NULL), -ENOTSUP);
	assert_int_equal(safe_open_link(t->rootfd, "lib/sock", NULL), -ENOTSUP);
	if (t->have_dev)
		assert_int_equal(safe_open_link(t->rootfd, "lib/null", NULL), -ENOTSUP);
	fd = safe_open_link(AT_FDCWD, "/proc/self/exe", NULL);
	assert_true(fd >= 0);
	close(fd);
}

/* Endless and trickling inputs: the byte cap and the time budget end the read. */
static void test_read_bounds(void **state)
{
	int fd, p[2], status;
	char *text;
	size_t len;
	pid_t pid;

	(void)state;
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(safe_read_fd(fd, 100000, 0, &text, &len), -EFBIG);
	close(fd);

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(p[0]);
		for (;;) {
			if (write(p[1], "x", 1) != 1)
				_exit(0);
			usleep(20000);
		}
	}
	close(p[1]);
	assert_int_equal(safe_read_fd(p[0], 1 << 20, 200, &text, &len), -ETIMEDOUT);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(p[0]);

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(safe_read_fd(p[0], 64, 0, &text, &len), -EAGAIN);
	assert_int_equal(write(p[1], "ab", 2), 2);
	close(p[1]);
	assert_int_equal(safe_read_fd(p[0], 2, 0, &text, &len), 0);	/* exactly @max */
	assert_string_equal(text, "ab");
	free(text);
	close(p[0]);
}

static void test_reason(void **state)
{
	static const struct {
		int err;
		bool has;
	} rows[] = {
		{ -ENOTSUP, true }, { -EFBIG, true }, { -ESTALE, true }, { -ELOOP, true },
		{ -ETIMEDOUT, true }, { -EAGAIN, true }, { -EREMOTE, true }, { -EXDEV, true },
		{ -ENOENT, false }, { 0, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(safe_open_reason(rows[i].err) != NULL, rows[i].has);
}

/* read_file_bounded() is non-blocking too: a FIFO with no writer is refused, not waited on. */
static void test_fileio_nonblock(void **state)
{
	struct tmp *t = *state;
	char path[PATH_MAX], *text;
	int err;

	snprintf(path, sizeof(path), "%s/lib/fifo", t->root);
	err = read_file_bounded(AT_FDCWD, path, 64, &text, NULL);
	assert_int_equal(err, 0);	/* no writer: EOF at once */
	free(text);
}

/* File system types whose reads can block on a FUSE server or a network: refused. */
static void test_fs_remote(void **state)
{
	static const struct {
		const char *type;
		bool remote;
	} rows[] = {
		{ "fuse", true },     { "fuse.sshfs", true }, { "fuseblk", true },
		{ "fuse.gcsfuse", true }, { "nfs", true },   { "nfs4", true },
		{ "cifs", true },     { "9p", true },         { "ceph", true },
		{ "ext4", false },    { "xfs", false },       { "overlay", false },
		{ "tmpfs", false },   { "virtiofs", false },  { "fusectl", false },
		{ "", false },        { NULL, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu\n", i);
		assert_int_equal(safe_open_fs_remote(rows[i].type), rows[i].remote);
	}
}

/* proc(5) mountinfo lines: optional tags, escaped names, garbage skipped. */
static void test_mount_type(void **state)
{
	static const char info[] =
		"22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/a:/b\n"
		"23 22 0:22 / /proc rw,nosuid - proc proc rw\n"
		"garbage without a separator\n"
		"40 22 0:40 / /mnt/f rw,nosuid master:3 shared:4 - fuse.sshfs u@h:/ rw,user_id=0\n"
		"41 22 0:41 / /with\\040space rw - tmpfs tmpfs rw\n"
		"42 22 0:42 / /x rw -  \n"
		"43 22 0:43 / /last rw - ext4 /dev/sda1 rw";
	static const struct {
		uint64_t id;
		int ret;
		const char *type;
	} rows[] = {
		{ 22, 0, "overlay" }, { 23, 0, "proc" },  { 40, 0, "fuse.sshfs" },
		{ 41, 0, "tmpfs" },   { 43, 0, "ext4" },  { 42, -ENOENT, NULL },
		{ 99, -ENOENT, NULL }, { 0, -ENOENT, NULL },
	};
	char type[64];
	bool remote;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu\n", i);
		assert_int_equal(safe_open_mount_type(info, rows[i].id, type, sizeof(type), &remote),
				 rows[i].ret);
		if (!rows[i].ret)
			assert_string_equal(type, rows[i].type);
		assert_true(remote);
	}
	assert_int_equal(safe_open_mount_type("22 1 0:21 / / rw - ext4 x rw\n", 22, type,
					      sizeof(type), &remote), 0);
	assert_false(remote);
	assert_int_equal(safe_open_mount_type(info, 40, type, 4, NULL), -ERANGE);
	assert_int_equal(safe_open_mount_type(NULL, 40, type, sizeof(type), NULL), -EINVAL);
}

/* Writes /proc/PID/mountinfo of fake process 777 under @proc: the mount @id is of @type. */
static void fake_mounts(const char *proc, uint64_t id, const char *type)
{
	char dir[PATH_MAX], line[256];

	snprintf(line, sizeof(line),
		 "1 0 0:1 / / rw - overlay overlay rw\n"
		 "%llu 1 0:2 / /data rw - %s src rw\n"
		 "900 1 0:3 / /mnt/f rw - fuse.other src rw\n", (unsigned long long)id, type);
	snprintf(dir, sizeof(dir), "%s/777", proc);
	put(dir, "mountinfo", line);
}

/*
 * A fake /proc/PID whose mountinfo says the file's real mount (a tmpfs: no block device) is
 * FUSE or NFS: refused with -EREMOTE before the file is opened for reading; a local type
 * passes; a mount the table does not list is refused too. The walk of a process with FUSE
 * mounts (cached lookups, else the root's mount only) still finds a file on the root's mount.
 * A file system on a block device (/tmp here) is never a FUSE or network one: not checked.
 */
static void test_remote_mount(void **state)
{
	static const struct {
		const char *type;	/* of the file's mount; NULL: not listed */
		int ret;
	} rows[] = {
		{ "fuse.hostile", -EREMOTE }, { "nfs4", -EREMOTE }, { NULL, -EREMOTE },
		{ "tmpfs", 0 }, { "ext4", 0 },
	};
	struct tmp *t = *state;
	char shm[] = "/dev/shm/test_safe_open.XXXXXX", proc[128], lib[128], path[PATH_MAX],
	     root[PATH_MAX];
	struct statx sx, tsx;
	size_t i;
	int fd;

	assert_non_null(mkdtemp(shm));
	snprintf(path, sizeof(path), "%s/root", shm);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(lib, sizeof(lib), "%s/root/lib", shm);
	assert_int_equal(mkdir(lib, 0755), 0);
	put(lib, "real.so", "real");
	link_at(lib, "rel", "real.so");
	assert_int_equal(statx(AT_FDCWD, lib, 0, STATX_MNT_ID, &sx), 0);
	if (!(sx.stx_mask & STATX_MNT_ID) || sx.stx_dev_major)
		fail_msg("/dev/shm is not a tmpfs with mount ids (Linux >= 5.8)");
	snprintf(proc, sizeof(proc), "%s/proc", shm);
	snprintf(path, sizeof(path), "%s/777", proc);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/777/root", proc);
	snprintf(root, sizeof(root), "%s/root", shm);
	assert_int_equal(symlink(root, path), 0);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu\n", i);
		fake_mounts(proc, rows[i].type ? sx.stx_mnt_id : 424242, rows[i].type ? : "ext4");
		fd = safe_open_in_proc_root(proc, 777, "/lib/real.so", NULL);
		if (rows[i].ret) {
			assert_int_equal(fd, rows[i].ret);
			continue;
		}
		assert_true(fd >= 0);
		close(fd);
		/* ".../PID/root" names the process: the same check through the root's path */
		snprintf(path, sizeof(path), "%s/777/root", proc);
		fd = safe_open_in_root_path(path, "/lib/rel", NULL);
		assert_true(fd >= 0);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/777", proc);
	put(path, "mountinfo", "1 0 0:1 / / rw - fuse.hostile src rw\n");
	snprintf(path, sizeof(path), "%s/777/root", proc);
	assert_int_equal(safe_open_in_root_path(path, "/lib/real.so", NULL), -EREMOTE);
	/* the block-device file system of /tmp, said to be FUSE: not asked, not refused */
	assert_int_equal(statx(AT_FDCWD, t->root, 0, STATX_MNT_ID, &tsx), 0);
	if (tsx.stx_dev_major) {
		fake_mounts(proc, tsx.stx_mnt_id, "fuse.hostile");
		unlink(path);
		assert_int_equal(symlink(t->root, path), 0);
		fd = safe_open_in_proc_root(proc, 777, "/lib/real.so", NULL);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_non_null(safe_open_reason(-EREMOTE));
	assert_non_null(safe_open_reason(-EXDEV));
	assert_int_equal(rm_tree_at(AT_FDCWD, shm, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_in_root),
		cmocka_unit_test(test_open_root_and_path),
		cmocka_unit_test(test_map_file),
		cmocka_unit_test(test_open_link),
		cmocka_unit_test(test_read_bounds),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_fileio_nonblock),
		cmocka_unit_test(test_fs_remote),
		cmocka_unit_test(test_mount_type),
		cmocka_unit_test(test_remote_mount),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
