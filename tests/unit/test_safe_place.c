// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for base/safe_place.c. The mount-table parser is pure. The rest runs on the real
 * file system as root, in a private mount namespace (every tmpfs mounted here vanishes with the
 * test): a temporary directory plays the container's root (an O_PATH fd of it is @rootfd), and
 * each row builds a hostile layout in a fresh one, from a symlinked /tmp to names planted at
 * the exact names tried, then checks that nothing was written outside it (the host's "/" and
 * "/tmp", and an "outside" directory that the planted links point to). Not root: those skip.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/safe_open.h"
#include "base/safe_place.h"
#include "base/sha256.h"

#define JVM_UID 65534
#define JVM_GID 65534
#define CANARY "host canary"

/* ---- safe_place_mount_flags(): pure rows ---- */

#define ROOT_LINE "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"

static const struct mf_case {
	const char *text;
	const char *dir;
	int ret;
	bool noexec, ro;
} mf_cases[] = {
	{ ROOT_LINE, "/tmp", 0, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,size=65536k\n", "/tmp", 0, true, false },
	/* the longest prefix wins, on a component boundary */
	{ "21 1 8:1 / / ro,noexec - ext4 /dev/sda1 ro\n30 21 0:40 / /tmp rw - tmpfs tmpfs rw\n", "/tmp", 0, false, false },
	{ "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 21 0:40 / /tmp rw - tmpfs tmpfs rw\n", "/tmp/a/b", 0, false, false },
	{ ROOT_LINE "31 21 0:41 / /var ro - tmpfs tmpfs ro\n", "/var/tmp", 0, false, true },
	{ ROOT_LINE "30 21 0:40 / /tmpx rw,noexec - tmpfs tmpfs rw\n", "/tmp", 0, false, false },	/* /tmpx is not /tmp */
	{ ROOT_LINE "30 21 0:40 / /tm rw,noexec - tmpfs tmpfs rw\n", "/tmp", 0, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw,noexec - tmpfs tmpfs rw\n", "/tmpx", 0, false, false },
	/* octal escapes: a space and a backslash in the mount point */
	{ ROOT_LINE "30 21 0:40 / /my\\040tmp rw,noexec - tmpfs tmpfs rw\n", "/my tmp", 0, true, false },
	{ ROOT_LINE "30 21 0:40 / /a\\134b rw,noexec - tmpfs tmpfs rw\n", "/a\\b", 0, true, false },
	{ ROOT_LINE "30 21 0:40 / /my\\040tmp rw,noexec - tmpfs tmpfs rw\n", "/my\\040tmp", 0, false, false },
	/* read-only in the super options only, or in the mount's */
	{ ROOT_LINE "30 21 0:40 / /tmp rw,relatime - tmpfs tmpfs ro,size=4k\n", "/tmp", 0, false, true },
	{ ROOT_LINE "30 21 0:40 / /tmp ro,relatime - tmpfs tmpfs rw\n", "/tmp", 0, false, true },
	/* options are whole tokens */
	{ ROOT_LINE "30 21 0:40 / /tmp rw,xnoexec,noexecx - tmpfs tmpfs rw,errors=ro\n", "/tmp", 0, false, false },
	/* mounted on top of another: the later line */
	{ ROOT_LINE "30 21 0:40 / /tmp rw,noexec - tmpfs tmpfs rw\n40 30 0:41 / /tmp rw - tmpfs tmpfs rw\n", "/tmp", 0, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw - tmpfs tmpfs rw\n40 30 0:41 / /tmp rw,noexec - tmpfs tmpfs rw\n", "/tmp", 0, true, false },
	/* optional tags, an empty source, no final newline */
	{ ROOT_LINE "30 21 0:40 / /tmp rw,noexec shared:5 master:2 propagate_from:1 - tmpfs  rw", "/tmp", 0, true, false },
	{ ROOT_LINE "\n\n30 21 0:40 / /tmp rw,noexec - tmpfs tmpfs rw\n", "/tmp", 0, true, false },
	/* no mount holds it */
	{ "", "/tmp", -ENOENT, false, false },
	{ "30 21 0:40 / /var rw - tmpfs tmpfs rw\n", "/tmp", -ENOENT, false, false },
	/* malformed anywhere */
	{ ROOT_LINE "30 21 0:40 / /tmp rw tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },		/* no " - " */
	{ ROOT_LINE "30 21 0:40 / /tmp rw -\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw - tmpfs tmpfs\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw - tmpfs tmpfs rw extra\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /tmp rw - tmpfs tmpfs rw \n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "x 21 0:40 / /tmp rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 040 / /tmp rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / tmp rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 /  /tmp rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /my\\04tmp rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },	/* bad escapes */
	{ ROOT_LINE "30 21 0:40 / /my\\400 rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /my\\ rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21 0:40 / /x\\08a rw - tmpfs tmpfs rw\n", "/tmp", -EINVAL, false, false },
	{ ROOT_LINE "30 21\n", "/tmp", -EINVAL, false, false },
	{ "30 21 0:40 / /tmp rw - tmpfs tmpfs rw\ngarbage\n", "/tmp", -EINVAL, false, false },
	/* @dir not canonical */
	{ ROOT_LINE, "tmp", -EINVAL, false, false },
	{ ROOT_LINE, "/tmp/", -EINVAL, false, false },
	{ ROOT_LINE, "//tmp", -EINVAL, false, false },
	{ ROOT_LINE, "/tmp/../etc", -EINVAL, false, false },
	{ ROOT_LINE, "/./tmp", -EINVAL, false, false },
	{ ROOT_LINE, "", -EINVAL, false, false },
	{ ROOT_LINE, "/", 0, false, false },
};

static void test_mount_flags(void **state)
{
	bool noexec, ro;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(mf_cases); i++) {
		const struct mf_case *c = &mf_cases[i];
		size_t len = strlen(c->text);
		/* exactly @len bytes, no NUL after them: a read past the text is caught by ASan */
		char *copy = malloc(len ? len : 1);

		assert_non_null(copy);
		memcpy(copy, c->text, len);
		print_message("case %zu\n", i);
		noexec = ro = false;
		ret = safe_place_mount_flags(copy, len, c->dir, &noexec, &ro);
		if (ret != c->ret)
			fail_msg("case %zu: %d, want %d", i, ret, c->ret);
		if (!ret && (noexec != c->noexec || ro != c->ro))
			fail_msg("case %zu: noexec %d ro %d", i, noexec, ro);
		free(copy);
	}
	/* a NUL byte inside, NULL text, NULL outputs */
	assert_int_equal(safe_place_mount_flags(ROOT_LINE "\0x", sizeof(ROOT_LINE) + 1, "/", &noexec, &ro), -EINVAL);
	assert_int_equal(safe_place_mount_flags(NULL, 0, "/tmp", &noexec, &ro), -ENOENT);
	assert_int_equal(safe_place_mount_flags(NULL, 5, "/tmp", &noexec, &ro), -EINVAL);
	assert_int_equal(safe_place_mount_flags(ROOT_LINE, strlen(ROOT_LINE), "/tmp", NULL, &ro), -EINVAL);
	/* the length is obeyed: the /tmp line is past it */
	assert_int_equal(safe_place_mount_flags(ROOT_LINE "30 21 0:40 / /tmp rw,noexec - tmpfs tmpfs rw\n",
						strlen(ROOT_LINE), "/tmp", &noexec, &ro), 0);
	assert_false(noexec);
}

/* ---- the fake container: layouts, mounts, checks ---- */

struct env {
	char base[64];	   /* /tmp/test_safe_place.XXXXXX */
	char outside[96];  /* base/outside: the canary and what planted links point to */
	char root[96];	   /* base/rN: the container's root of the current row */
	int rootfd;
	unsigned int row;
	char mounts[8][PATH_MAX];
	int nmounts;
	int host_root, host_tmp; /* ".slideops-" entries in the host's / and /tmp before */
};

static struct env env;

/* Operations that build a row's layout, paths relative to its root. */
enum op_kind {
	OP_END,
	OP_DIR,	      /* a directory, mode 1777 */
	OP_LINK,      /* a symlink to @arg */
	OP_LINK_OUT,  /* a symlink to the outside directory */
	OP_FILE,      /* a regular file */
	OP_FIFO,
	OP_MOUNT,     /* a tmpfs with options @arg ("ro", "noexec", else data: "size=64k") */
};

struct op {
	enum op_kind kind;
	const char *path;
	const char *arg;
};

static void pathf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < size);
}

static void put_file(const char *path, const char *text, uid_t uid)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	if (!geteuid())
		assert_int_equal(chown(path, uid, uid), 0);
}

/* Mounts a tmpfs at @path with @opts: "ro" and "noexec" as flags, the rest as its data. */
static void mount_tmpfs(const char *path, const char *opts)
{
	char data[128] = "mode=1777", buf[128], *tok, *save;
	unsigned long flags = MS_NOSUID | MS_NODEV;

	snprintf(buf, sizeof(buf), "%s", opts ? opts : "");
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "ro"))
			flags |= MS_RDONLY;
		else if (!strcmp(tok, "noexec"))
			flags |= MS_NOEXEC;
		else
			snprintf(data + strlen(data), sizeof(data) - strlen(data), ",%s", tok);
	}
	if (mount("tmpfs", path, "tmpfs", flags, data))
		fail_msg("mount tmpfs %s (%s): %s", path, opts, strerror(errno));
	assert_true(env.nmounts < (int)ARRAY_SIZE(env.mounts));
	snprintf(env.mounts[env.nmounts++], PATH_MAX, "%s", path);
}

static void build(const struct op *ops)
{
	char path[PATH_MAX];

	for (; ops->kind != OP_END; ops++) {
		pathf(path, sizeof(path), "%s/%s", env.root, ops->path);
		switch (ops->kind) {
		case OP_DIR:
			assert_int_equal(mkdir(path, 0755), 0);
			assert_int_equal(chmod(path, 01777), 0);
			break;
		case OP_LINK:
			assert_int_equal(symlink(ops->arg, path), 0);
			break;
		case OP_LINK_OUT:
			assert_int_equal(symlink(env.outside, path), 0);
			break;
		case OP_FILE:
			put_file(path, "not a directory", 0);
			break;
		case OP_FIFO:
			assert_int_equal(mkfifo(path, 0666), 0);
			break;
		case OP_MOUNT:
			mount_tmpfs(path, ops->arg);
			break;
		case OP_END:
			break;
		}
	}
}

/* The ".slideops-" entries of directory @dir. */
static int count_ours(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, SAFE_PLACE_PREFIX, strlen(SAFE_PLACE_PREFIX));
	closedir(d);
	return n;
}

/* The outside directory holds only its canary, unchanged: no link into it was followed. */
static void check_outside(void)
{
	char path[PATH_MAX], buf[64] = "";
	struct dirent *de;
	int n = 0;
	DIR *d;
	FILE *f;

	d = opendir(env.outside);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	if (n != 2)
		fail_msg("row %u: the outside directory holds %d entries", env.row, n);
	pathf(path, sizeof(path), "%s/canary", env.outside);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, CANARY);
	pathf(path, sizeof(path), "%s/keep/.slideops-0123456789abcdef/keep", env.outside);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(count_ours("/"), env.host_root);
	assert_int_equal(count_ours("/tmp"), env.host_tmp);
}

/* A fresh root for the next row. */
static void row_begin(const struct op *ops)
{
	env.row++;
	pathf(env.root, sizeof(env.root), "%s/r%u", env.base, env.row);
	assert_int_equal(mkdir(env.root, 0755), 0);
	env.host_root = count_ours("/");
	env.host_tmp = count_ours("/tmp");
	if (ops)
		build(ops);
	env.rootfd = open(env.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(env.rootfd >= 0);
}

static void row_end(void)
{
	check_outside();
	close(env.rootfd);
	while (env.nmounts > 0)
		assert_int_equal(umount2(env.mounts[--env.nmounts], MNT_DETACH), 0);
	assert_int_equal(rm_tree_at(AT_FDCWD, env.root, 64), 0);
}

/* This process's mount table (the fake root's real mounts) and then @extra lines. */
static char *mount_table(bool host, const char *extra, size_t *len)
{
	char *text = NULL, *out;
	size_t n = 0, e = extra ? strlen(extra) : 0;

	if (host)
		assert_int_equal(read_file_bounded(AT_FDCWD, "/proc/self/mountinfo", 1 << 22, &text, &n), 0);
	out = malloc(n + e + 1);
	assert_non_null(out);
	if (n)
		memcpy(out, text, n);
	if (e)
		memcpy(out + n, extra, e);
	out[n + e] = '\0';
	free(text);
	*len = n + e;
	return out;
}

/* Test names: attempt i is "0000000000005afeI" style, so rows can plant at them. */
struct names {
	unsigned int calls;
	int fail;	/* nonzero: the hook returns this */
	bool bad;	/* the hook writes a name that is not 16 hex digits */
};

static void test_hex(unsigned int attempt, char hex[17])
{
	snprintf(hex, 17, "%016x", 0x5afe0000u + attempt);
}

static int test_name(void *ctx, unsigned int attempt, char hex[17])
{
	struct names *n = ctx;

	n->calls++;
	if (n->fail)
		return n->fail;
	test_hex(attempt, hex);
	if (n->bad)
		hex[3] = '/';
	return 0;
}

/* Plants @count things at the names tried in @loc: symlinks to the outside and FIFOs, in turn. */
static void plant(const char *loc, int count)
{
	char path[PATH_MAX], hex[17];
	int i;

	for (i = 0; i < count; i++) {
		test_hex((unsigned int)i, hex);
		pathf(path, sizeof(path), "%s%s/" SAFE_PLACE_PREFIX "%s", env.root, loc, hex);
		if (i % 2)
			assert_int_equal(mkfifo(path, 0666), 0);
		else
			assert_int_equal(symlink(env.outside, path), 0);
	}
}

/* The planted things are still what they were. */
static void check_planted(const char *loc, int count)
{
	char path[PATH_MAX], hex[17];
	struct stat sb;
	int i;

	for (i = 0; i < count; i++) {
		test_hex((unsigned int)i, hex);
		pathf(path, sizeof(path), "%s%s/" SAFE_PLACE_PREFIX "%s", env.root, loc, hex);
		assert_int_equal(lstat(path, &sb), 0);
		assert_true(i % 2 ? S_ISFIFO(sb.st_mode) : S_ISLNK(sb.st_mode));
	}
}

static void need_root(void)
{
	if (geteuid())
		skip();
}

/* ---- safe_place_dir() ---- */

#define TMP_LINE(opts, super) "900001 1 0:999 / /tmp " opts " - tmpfs tmpfs " super "\n"
#define FUSE_LINE "900002 1 0:998 / /tmp rw - fuse.sshfs host:/x rw\n"

static const char *const three[] = { "/tmp", "/var/tmp", "/dev/shm" };

static const struct dir_case {
	const char *what;
	struct op ops[6];
	bool host_mi;		/* the real mount table before @extra */
	const char *extra;	/* lines appended to the mount table */
	const char *const *dirs;
	size_t ndirs;
	bool need_exec;
	uint64_t need_bytes;
	int plant;		/* names planted in @dirs[0] */
	int ret;
	const char *loc;	/* where it lands */
	const char *why;	/* in the reasons */
	unsigned int tries;	/* names asked for (0: not checked) */
} dir_cases[] = {
	{ "plain", { { OP_DIR, "tmp" } }, true, NULL, three, 1, true, 0, 0, 0, "/tmp", NULL, 1 },
	{ "tmp -> /", { { OP_LINK, "tmp", "/" } }, true, NULL, three, 1, false, 0, 0, -ELOOP, NULL, "/tmp is a symbolic link" },
	{ "tmp -> ../../", { { OP_LINK, "tmp", "../../" } }, true, NULL, three, 1, false, 0, 0, -ELOOP, NULL, "/tmp is a symbolic link" },
	{ "tmp -> outside", { { OP_LINK_OUT, "tmp" } }, true, NULL, three, 1, false, 0, 0, -ELOOP, NULL, "/tmp is a symbolic link" },
	{ "tmp a FIFO", { { OP_FIFO, "tmp" } }, true, NULL, three, 1, false, 0, 0, -ENOTDIR, NULL, "/tmp is not a directory" },
	{ "tmp a file", { { OP_FILE, "tmp" } }, true, NULL, three, 1, false, 0, 0, -ENOTDIR, NULL, "/tmp is not a directory" },
	{ "no tmp", { { OP_END } }, true, NULL, three, 1, false, 0, 0, -ENOENT, NULL, "/tmp does not exist" },
	{ "var -> outside", { { OP_LINK_OUT, "var" } }, true, NULL, three + 1, 1, false, 0, 0, -ELOOP, NULL, "/var is a symbolic link" },
	{ "next location", { { OP_LINK_OUT, "tmp" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, NULL, three, 3, false, 0, 0, 0, "/var/tmp", "/tmp is a symbolic link" },
	{ "every location bad", { { OP_LINK_OUT, "tmp" }, { OP_FIFO, "var" }, { OP_DIR, "dev" }, { OP_LINK, "dev/shm", "/" } }, true, NULL, three, 3, false, 0, 0, -ELOOP, NULL, "/tmp is a symbolic link; /var is not a directory; /dev/shm is a symbolic link" },
	/* the mount table's word */
	{ "noexec by table", { { OP_DIR, "tmp" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, TMP_LINE("rw,noexec", "rw"), three, 3, true, 0, 0, 0, "/var/tmp", "/tmp is mounted noexec" },
	{ "noexec, no exec needed", { { OP_DIR, "tmp" } }, true, TMP_LINE("rw,noexec", "rw"), three, 3, false, 0, 0, 0, "/tmp", NULL },
	{ "ro by super options", { { OP_DIR, "tmp" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, TMP_LINE("rw", "ro"), three, 3, false, 0, 0, 0, "/var/tmp", "/tmp is read-only" },
	{ "FUSE by table", { { OP_DIR, "tmp" } }, true, FUSE_LINE, three, 1, false, 0, 0, -EREMOTE, NULL, "/tmp is on a FUSE or network file system" },
	{ "/tmpx noexec", { { OP_DIR, "tmp" } }, true, "900003 1 0:997 / /tmpx rw,noexec - tmpfs tmpfs rw\n", three, 1, true, 0, 0, 0, "/tmp", NULL },
	/* real mounts: fstatvfs() and the mount the fd is on, whatever the table says of the path */
	{ "ro tmpfs", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", "ro" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, TMP_LINE("rw", "rw"), three, 3, false, 0, 0, 0, "/var/tmp", "/tmp is read-only" },
	{ "ro tmpfs only", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", "ro" } }, true, NULL, three, 1, false, 0, 0, -EROFS, NULL, "/tmp is read-only" },
	{ "noexec tmpfs", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", "noexec" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, NULL, three, 3, true, 0, 0, 0, "/var/tmp", "/tmp is mounted noexec" },
	{ "full tmpfs", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", "size=64k" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, NULL, three, 3, false, 1 << 20, 0, 0, "/var/tmp", "no space left on /tmp" },
	{ "full tmpfs only", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", "size=64k" } }, true, NULL, three, 1, false, 1 << 20, 0, -ENOSPC, NULL, "no space left on /tmp" },
	{ "tmpfs not in the table", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", NULL } }, false, ROOT_LINE, three, 1, false, 0, 0, -EREMOTE, NULL, "/tmp is on a mount its mount table does not list" },
	{ "tmpfs in the table", { { OP_DIR, "tmp" }, { OP_MOUNT, "tmp", NULL } }, true, NULL, three, 1, true, 0, 0, 0, "/tmp", NULL },
	/* names taken: never followed, never reused, SAFE_PLACE_TRIES at most */
	{ "3 names taken", { { OP_DIR, "tmp" } }, true, NULL, three, 1, false, 0, 3, 0, "/tmp", NULL, 4 },
	{ "7 names taken", { { OP_DIR, "tmp" } }, true, NULL, three, 1, false, 0, 7, 0, "/tmp", NULL, 8 },
	{ "8 names taken", { { OP_DIR, "tmp" } }, true, NULL, three, 1, false, 0, 8, -EEXIST, NULL, "in /tmp, all 8 names tried were taken", 8 },
	{ "8 taken, next location", { { OP_DIR, "tmp" }, { OP_DIR, "var" }, { OP_DIR, "var/tmp" } }, true, NULL, three, 2, false, 0, 8, 0, "/var/tmp", "all 8 names", 9 },
	/* bad arguments */
	{ "relative location", { { OP_DIR, "tmp" } }, true, NULL, (const char *const[]){ "tmp" }, 1, false, 0, 0, -EINVAL, NULL, "tmp is not a location" },
	{ "dotdot location", { { OP_DIR, "tmp" } }, true, NULL, (const char *const[]){ "/tmp/../etc" }, 1, false, 0, 0, -EINVAL, NULL, NULL },
	{ "root location", { { OP_DIR, "tmp" } }, true, NULL, (const char *const[]){ "/" }, 1, false, 0, 0, -EINVAL, NULL, NULL },
	{ "long location", { { OP_DIR, "tmp" } }, true, NULL, (const char *const[]){ "/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, 1, false, 0, 0, -EINVAL, NULL, NULL },
	{ "no locations", { { OP_DIR, "tmp" } }, true, NULL, three, 0, false, 0, 0, -EINVAL, NULL, NULL },
	{ "malformed table", { { OP_DIR, "tmp" } }, true, "garbage\n", three, 1, false, 0, 0, -EINVAL, NULL, "the mount table is malformed" },
};

/* Our directory at @p: what it should be, in the location @loc. */
static void check_dir(const struct safe_place *p, const char *loc)
{
	char path[PATH_MAX];
	struct stat sb, fsb;
	size_t n = strlen(loc);

	assert_memory_equal(p->path, loc, n);
	assert_memory_equal(p->path + n, "/" SAFE_PLACE_PREFIX, strlen(SAFE_PLACE_PREFIX) + 1);
	assert_int_equal(strlen(p->path), n + 1 + SAFE_PLACE_NAME_LEN);
	assert_string_equal(p->path + n + 1, p->name);
	pathf(path, sizeof(path), "%s%s", env.root, p->path);
	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_int_equal(sb.st_uid, JVM_UID);
	assert_int_equal(sb.st_gid, JVM_GID);
	assert_int_equal(fstat(p->dirfd, &fsb), 0);
	assert_int_equal(fsb.st_ino, sb.st_ino);
	assert_int_equal(p->ino, sb.st_ino);
	assert_int_equal(p->uid, JVM_UID);
	assert_int_equal(p->rootfd, env.rootfd);
	assert_int_equal(count_ours(path), 0);
}

static void test_place_dir(void **state)
{
	size_t i, mlen;
	char why[512], path[PATH_MAX];

	(void)state;
	need_root();
	for (i = 0; i < ARRAY_SIZE(dir_cases); i++) {
		const struct dir_case *c = &dir_cases[i];
		struct names names = { 0 };
		struct safe_place p = { .dirfd = -2 };
		struct safe_place_opts o = { 0 };
		char *mi;
		int ret;

		print_message("case %zu: %s\n", i, c->what);
		row_begin(c->ops);
		if (c->plant)
			plant(c->dirs[0], c->plant);
		mi = mount_table(c->host_mi, c->extra, &mlen);
		o = (struct safe_place_opts){ .mountinfo = mi, .mountinfo_len = mlen, .dirs = c->dirs,
					      .ndirs = c->ndirs, .need_exec = c->need_exec,
					      .need_bytes = c->need_bytes, .uid = JVM_UID, .gid = JVM_GID,
					      .name_fn = test_name, .name_ctx = &names };
		ret = safe_place_dir_opts(env.rootfd, &o, &p, why, sizeof(why));
		if (ret != c->ret)
			fail_msg("case %zu %s: %d (%s), want %d", i, c->what, ret, why, c->ret);
		if (c->why && !strstr(why, c->why))
			fail_msg("case %zu %s: why \"%s\"", i, c->what, why);
		if (!c->why && ret == 0 && why[0])
			fail_msg("case %zu %s: why \"%s\", want none", i, c->what, why);
		if (c->tries && names.calls != c->tries)
			fail_msg("case %zu %s: %u names, want %u", i, c->what, names.calls, c->tries);
		if (c->plant)
			check_planted(c->dirs[0], c->plant);
		if (ret) {
			assert_int_equal(p.dirfd, -2);	/* untouched */
		} else {
			check_dir(&p, c->loc);
			pathf(path, sizeof(path), "%s%s", env.root, p.path);
			assert_int_equal(safe_place_remove(&p), 0);
			assert_int_equal(access(path, F_OK), -1);
			assert_int_equal(p.dirfd, -1);
			assert_int_equal(safe_place_remove(&p), 0);	/* idempotent */
		}
		free(mi);
		row_end();
	}
}

/* The random names, the brief signature, the name hook's errors. */
static void test_place_dir_names(void **state)
{
	static const struct op ops[] = { { OP_DIR, "tmp" }, { OP_END } };
	struct safe_place a, b;
	struct names names = { .fail = -EIO };
	struct safe_place_opts o = { .dirs = three, .ndirs = 1, .uid = JVM_UID, .gid = JVM_GID,
				     .name_fn = test_name, .name_ctx = &names };
	char why[256];
	size_t mlen;
	char *mi;

	(void)state;
	need_root();
	row_begin(ops);
	mi = mount_table(true, NULL, &mlen);
	assert_int_equal(safe_place_dir(env.rootfd, mi, mlen, three, 1, true, JVM_UID, JVM_GID, &a, why, sizeof(why)), 0);
	assert_int_equal(safe_place_dir(env.rootfd, mi, mlen, three, 1, true, JVM_UID, JVM_GID, &b, why, sizeof(why)), 0);
	check_dir(&a, "/tmp");
	check_dir(&b, "/tmp");
	assert_string_not_equal(a.name, b.name);
	assert_int_equal(safe_place_remove(&a), 0);
	assert_int_equal(safe_place_remove(&b), 0);
	o.mountinfo = mi;
	o.mountinfo_len = mlen;
	assert_int_equal(safe_place_dir_opts(env.rootfd, &o, &a, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "no name can be made"));
	names.fail = 0;
	names.bad = true;
	assert_int_equal(safe_place_dir_opts(env.rootfd, &o, &a, why, sizeof(why)), -EINVAL);
	assert_int_equal(safe_place_dir(-1, mi, mlen, three, 1, true, 0, 0, &a, why, sizeof(why)), -EINVAL);
	assert_int_equal(safe_place_dir(env.rootfd, NULL, 0, three, 1, true, 0, 0, &a, why, sizeof(why)), -EINVAL);
	assert_int_equal(safe_place_dir(env.rootfd, mi, mlen, three, 1, true, 0, 0, NULL, why, sizeof(why)), -EINVAL);
	/* a tiny @why is cut, never overrun */
	names.bad = false;
	names.fail = -EIO;
	why[4] = 'X';
	assert_int_equal(safe_place_dir_opts(env.rootfd, &o, &a, why, 4), -EIO);
	assert_int_equal(strlen(why), 3);
	assert_int_equal(why[4], 'X');
	assert_int_equal(count_ours(env.root), 0);
	pathf(why, sizeof(why), "%s/tmp", env.root);
	assert_int_equal(count_ours(why), 0);
	free(mi);
	row_end();
}

/* ---- safe_place_file() ---- */

enum plant_kind { PLANT_NONE, PLANT_LINK_OUT, PLANT_LINK_CANARY, PLANT_FIFO, PLANT_DIR };

static const struct file_case {
	const char *what;
	const char *mount;	/* tmpfs options for the root's /tmp */
	enum plant_kind plant;	/* at @name before */
	const char *name;
	size_t len;
	mode_t mode;
	bool bad_sha;
	bool remount_ro;	/* /tmp made read-only after the directory */
	int ret;
} file_cases[] = {
	{ "library", NULL, PLANT_NONE, "libasyncProfiler.so", 300000, 0500, false, false, 0 },
	{ "settings", NULL, PLANT_NONE, "slideops.jfc", 1000, 0400, false, false, 0 },
	{ "empty", NULL, PLANT_NONE, "empty", 0, 0644, false, false, 0 },
	{ "set-id bits dropped", NULL, PLANT_NONE, "suid", 100, 06755, false, false, 0 },
	{ "wrong sha256", NULL, PLANT_NONE, "libasyncProfiler.so", 300000, 0500, true, false, -EBADMSG },
	{ "link planted", NULL, PLANT_LINK_CANARY, "libasyncProfiler.so", 1000, 0500, false, false, -EEXIST },
	{ "dir link planted", NULL, PLANT_LINK_OUT, "libasyncProfiler.so", 1000, 0500, false, false, -EEXIST },
	{ "FIFO planted", NULL, PLANT_FIFO, "libasyncProfiler.so", 1000, 0500, false, false, -EEXIST },
	{ "dir planted", NULL, PLANT_DIR, "libasyncProfiler.so", 1000, 0500, false, false, -EEXIST },
	{ "/tmp full", "size=64k", PLANT_NONE, "libasyncProfiler.so", 1 << 20, 0500, false, false, -ENOSPC },
	{ "/tmp read-only", "size=1m", PLANT_NONE, "libasyncProfiler.so", 1000, 0500, false, true, -EROFS },
	{ "empty name", NULL, PLANT_NONE, "", 10, 0644, false, false, -EINVAL },
	{ "slash", NULL, PLANT_NONE, "a/b", 10, 0644, false, false, -EINVAL },
	{ "up", NULL, PLANT_NONE, "..", 10, 0644, false, false, -EINVAL },
	{ "dot", NULL, PLANT_NONE, ".", 10, 0644, false, false, -EINVAL },
	{ "long name", NULL, PLANT_NONE, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 10, 0644, false, false, -ENAMETOOLONG },
};

/* A directory of ours in a fresh root whose /tmp is a tmpfs with @mount options (NULL: a plain
 * directory). */
static void place_begin(const char *mount, struct safe_place *p)
{
	struct op ops[] = { { OP_DIR, "tmp" }, { mount ? OP_MOUNT : OP_END, "tmp", mount }, { OP_END } };
	char why[256], *mi;
	size_t mlen;

	row_begin(ops);
	mi = mount_table(true, NULL, &mlen);
	if (safe_place_dir(env.rootfd, mi, mlen, three, 1, false, JVM_UID, JVM_GID, p, why, sizeof(why)))
		fail_msg("row %u: %s", env.row, why);
	free(mi);
}

/* The entries of our directory. */
static int count_entries(const struct safe_place *p)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	pathf(path, sizeof(path), "%s%s", env.root, p->path);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void fill(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + i / 251);
}

static void test_place_file(void **state)
{
	uint8_t *data = malloc(1 << 20), digest[SHA256_DIGEST_LEN];
	char path[PATH_MAX], target[PATH_MAX];
	size_t i, len;
	char *text;
	struct stat sb;

	(void)state;
	need_root();
	assert_non_null(data);
	fill(data, 1 << 20);
	for (i = 0; i < ARRAY_SIZE(file_cases); i++) {
		const struct file_case *c = &file_cases[i];
		struct safe_place p;
		int ret, planted;

		print_message("case %zu: %s\n", i, c->what);
		place_begin(c->mount, &p);
		pathf(path, sizeof(path), "%s%s/%s", env.root, p.path, c->name);
		pathf(target, sizeof(target), "%s/canary", env.outside);
		switch (c->plant) {
		case PLANT_LINK_CANARY:
			assert_int_equal(symlink(target, path), 0);
			break;
		case PLANT_LINK_OUT:
			assert_int_equal(symlink(env.outside, path), 0);
			break;
		case PLANT_FIFO:
			assert_int_equal(mkfifo(path, 0666), 0);
			break;
		case PLANT_DIR:
			assert_int_equal(mkdir(path, 0777), 0);
			break;
		case PLANT_NONE:
			break;
		}
		planted = count_entries(&p);
		if (c->remount_ro) {
			pathf(target, sizeof(target), "%s/tmp", env.root);
			assert_int_equal(mount(NULL, target, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1m"), 0);
		}
		sha256(data, c->len, digest);
		digest[0] ^= c->bad_sha;
		ret = safe_place_file(&p, c->name, data, c->len, c->mode, digest);
		if (ret != c->ret)
			fail_msg("case %zu %s: %d, want %d", i, c->what, ret, c->ret);
		if (ret) {
			/* nothing of ours left; what was planted stays what it was */
			assert_int_equal(count_entries(&p), planted);
			if (c->plant != PLANT_NONE) {
				assert_int_equal(lstat(path, &sb), 0);
				assert_true(c->plant == PLANT_FIFO ? S_ISFIFO(sb.st_mode) :
					    c->plant == PLANT_DIR ? S_ISDIR(sb.st_mode) : S_ISLNK(sb.st_mode));
			}
			assert_int_equal(p.nfiles, 0);
		} else {
			assert_int_equal(lstat(path, &sb), 0);
			assert_true(S_ISREG(sb.st_mode));
			assert_int_equal(sb.st_mode & 07777, c->mode & 0777);
			assert_int_equal(sb.st_uid, JVM_UID);
			assert_int_equal(sb.st_gid, JVM_GID);
			assert_int_equal(sb.st_size, c->len);
			assert_int_equal(read_file_bounded(AT_FDCWD, path, 1 << 21, &text, &len), 0);
			assert_int_equal(len, c->len);
			assert_memory_equal(text, data, len);
			free(text);
			assert_int_equal(p.nfiles, 1);
			assert_string_equal(p.files[0], c->name);
			/* the same name again: O_EXCL */
			assert_int_equal(safe_place_file(&p, c->name, data, c->len, c->mode, digest), -EEXIST);
		}
		if (c->remount_ro) {
			assert_int_equal(mount(NULL, target, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, "size=1m"), 0);
		}
		assert_int_equal(safe_place_remove(&p), 0);
		row_end();
	}
	free(data);
}

/* SAFE_PLACE_MAX_FILES, and the arguments. */
static void test_place_file_limits(void **state)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct safe_place p;
	char name[16];
	int i;

	(void)state;
	need_root();
	place_begin(NULL, &p);
	sha256("x", 1, digest);
	for (i = 0; i < SAFE_PLACE_MAX_FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(safe_place_file(&p, name, "x", 1, 0644, digest), 0);
	}
	assert_int_equal(safe_place_file(&p, "one-more", "x", 1, 0644, digest), -ENOBUFS);
	assert_int_equal(safe_place_file(&p, "n", NULL, 1, 0644, digest), -EINVAL);
	assert_int_equal(safe_place_file(&p, "n", "x", 1, 0644, NULL), -EINVAL);
	assert_int_equal(safe_place_file(NULL, "n", "x", 1, 0644, digest), -EINVAL);
	assert_int_equal(count_entries(&p), SAFE_PLACE_MAX_FILES);
	assert_int_equal(safe_place_remove(&p), 0);
	assert_int_equal(safe_place_file(&p, "n", "x", 1, 0644, digest), -EINVAL);
	assert_int_equal(safe_place_open(&p, "f0", 0), -EINVAL);
	assert_int_equal(safe_place_remove(NULL), -EINVAL);
	row_end();
}

/* ---- safe_place_open() ---- */

enum jvm_kind {
	JVM_FILE,	/* a regular file of @size bytes */
	JVM_FIFO,
	JVM_LINK_OUT,	/* a symlink to the outside canary */
	JVM_LINK_IN,	/* a symlink to a regular file beside it */
	JVM_DIR,
	JVM_HARDLINK,	/* a second link to a regular file beside it */
	JVM_DEV,	/* /dev/null's device number */
	JVM_BIND,	/* the outside canary bind-mounted over a file */
	JVM_NONE,
};

static const struct open_case {
	const char *what;
	enum jvm_kind kind;
	const char *name;
	size_t size;
	uint64_t max;
	int ret;
} open_cases[] = {
	{ "output", JVM_FILE, "out.collapsed", 100, 1000, 0 },
	{ "exactly max", JVM_FILE, "out.collapsed", 1000, 1000, 0 },
	{ "no cap", JVM_FILE, "out.jfr", 5000, 0, 0 },
	{ "over max", JVM_FILE, "out.collapsed", 1001, 1000, -EFBIG },
	{ "FIFO", JVM_FIFO, "out.collapsed", 0, 1000, -ENOTSUP },
	{ "link out", JVM_LINK_OUT, "out.collapsed", 0, 1000, -ELOOP },
	{ "link in", JVM_LINK_IN, "out.collapsed", 0, 1000, -ELOOP },
	{ "directory", JVM_DIR, "out.collapsed", 0, 1000, -ENOTSUP },
	{ "hard link", JVM_HARDLINK, "out.collapsed", 10, 1000, -EMLINK },
	{ "device", JVM_DEV, "out.collapsed", 0, 1000, -ENOTSUP },
	{ "bind mount", JVM_BIND, "out.collapsed", 0, 1000, -EXDEV },
	{ "missing", JVM_NONE, "out.collapsed", 0, 1000, -ENOENT },
	{ "up", JVM_NONE, "..", 0, 1000, -EINVAL },
	{ "path", JVM_NONE, "../tmp/x", 0, 1000, -EINVAL },
	{ "empty", JVM_NONE, "", 0, 1000, -EINVAL },
};

/* Makes what the "JVM" (uid 65534) put at @path. */
static void jvm_make(const struct open_case *c, const char *path)
{
	char other[PATH_MAX], text[8192];

	memset(text, 'j', c->size);
	text[c->size] = '\0';
	pathf(other, sizeof(other), "%s.other", path);
	switch (c->kind) {
	case JVM_FILE:
		put_file(path, text, JVM_UID);
		break;
	case JVM_FIFO:
		assert_int_equal(mkfifo(path, 0666), 0);
		break;
	case JVM_LINK_OUT:
		pathf(other, sizeof(other), "%s/canary", env.outside);
		assert_int_equal(symlink(other, path), 0);
		break;
	case JVM_LINK_IN:
		put_file(other, "inside", JVM_UID);
		assert_int_equal(symlink(other, path), 0);
		break;
	case JVM_DIR:
		assert_int_equal(mkdir(path, 0755), 0);
		break;
	case JVM_HARDLINK:
		put_file(other, text, JVM_UID);
		assert_int_equal(link(other, path), 0);
		break;
	case JVM_DEV:
		assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
		break;
	case JVM_BIND:
		put_file(path, "", JVM_UID);
		pathf(other, sizeof(other), "%s/canary", env.outside);
		assert_int_equal(mount(other, path, NULL, MS_BIND, NULL), 0);
		snprintf(env.mounts[env.nmounts++], PATH_MAX, "%s", path);
		break;
	case JVM_NONE:
		break;
	}
}

static void test_place_open(void **state)
{
	char path[PATH_MAX], *text;
	size_t i, len;

	(void)state;
	need_root();
	for (i = 0; i < ARRAY_SIZE(open_cases); i++) {
		const struct open_case *c = &open_cases[i];
		struct safe_place p;
		int fd;

		print_message("case %zu: %s\n", i, c->what);
		place_begin(NULL, &p);
		pathf(path, sizeof(path), "%s%s/%s", env.root, p.path, c->name);
		jvm_make(c, path);
		fd = safe_place_open(&p, c->name, c->max);
		if (c->ret) {
			if (fd != c->ret)
				fail_msg("case %zu %s: %d, want %d", i, c->what, fd, c->ret);
		} else {
			if (fd < 0)
				fail_msg("case %zu %s: %d", i, c->what, fd);
			assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
			assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
			assert_int_equal(safe_read_fd(fd, 1 << 20, 1000, &text, &len), 0);
			assert_int_equal(len, c->size);
			free(text);
			close(fd);
		}
		/* a bind mount inside is not removed through: unmounted first here */
		while (env.nmounts > 0)
			assert_int_equal(umount2(env.mounts[--env.nmounts], MNT_DETACH), 0);
		assert_int_equal(safe_place_remove(&p), 0);
		row_end();
	}
}

/* A file of ours placed, then read back like an output. */
static void test_place_roundtrip(void **state)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct safe_place p;
	char *text;
	size_t len;
	int fd;

	(void)state;
	need_root();
	place_begin(NULL, &p);
	sha256("settings", 8, digest);
	assert_int_equal(safe_place_file(&p, "s.jfc", "settings", 8, 0400, digest), 0);
	fd = safe_place_open(&p, "s.jfc", 8);
	assert_true(fd >= 0);
	assert_int_equal(safe_read_fd(fd, 8, 1000, &text, &len), 0);
	assert_string_equal(text, "settings");
	free(text);
	close(fd);
	assert_int_equal(safe_place_open(&p, "s.jfc", 7), -EFBIG);
	assert_int_equal(safe_place_remove(&p), 0);
	row_end();
}

/* ---- safe_place_remove() ---- */

/* What the "JVM" leaves in our directory: a tree, links to the outside, a FIFO, a device. */
static void jvm_mess(const struct safe_place *p)
{
	static const char *const dirs[] = { "a", "a/b", "a/b/c", "repo", "repo/2024_01_01" };
	static const char *const files[] = { "a/f", "a/b/c/f", "repo/2024_01_01/chunk.jfr", "out.jfr" };
	char dir[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	size_t i;

	pathf(dir, sizeof(dir), "%s%s", env.root, p->path);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		pathf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		assert_int_equal(mkdir(path, 0700), 0);
		assert_int_equal(chown(path, JVM_UID, JVM_GID), 0);
	}
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		pathf(path, sizeof(path), "%s/%s", dir, files[i]);
		put_file(path, "jvm", JVM_UID);
	}
	pathf(target, sizeof(target), "%s/canary", env.outside);
	pathf(path, sizeof(path), "%s/to-canary", dir);
	assert_int_equal(symlink(target, path), 0);
	pathf(path, sizeof(path), "%s/to-outside", dir);
	assert_int_equal(symlink(env.outside, path), 0);
	pathf(path, sizeof(path), "%s/a/b/up", dir);
	assert_int_equal(symlink("../../../../../../../../../..", path), 0);
	pathf(path, sizeof(path), "%s/a/root", dir);
	assert_int_equal(symlink("/", path), 0);
	pathf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0666), 0);
	pathf(path, sizeof(path), "%s/null", dir);
	assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
	pathf(target, sizeof(target), "%s/out.jfr", dir);
	pathf(path, sizeof(path), "%s/repo/hard", dir);
	assert_int_equal(link(target, path), 0);
}

static void test_place_remove(void **state)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	char path[PATH_MAX], dir[PATH_MAX];
	struct safe_place p;
	char *mi;
	size_t mlen;
	int i;

	(void)state;
	need_root();
	/* everything the JVM made goes, nothing it points at */
	place_begin(NULL, &p);
	sha256("lib", 3, digest);
	assert_int_equal(safe_place_file(&p, "lib.so", "lib", 3, 0500, digest), 0);
	jvm_mess(&p);
	pathf(dir, sizeof(dir), "%s%s", env.root, p.path);
	assert_int_equal(safe_place_remove(&p), 0);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(safe_place_remove(&p), 0);
	row_end();

	/* a mount inside is not entered: its files survive; then removed by path once unmounted */
	place_begin(NULL, &p);
	jvm_mess(&p);
	pathf(dir, sizeof(dir), "%s%s", env.root, p.path);
	pathf(path, sizeof(path), "%s/mnt", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(mount(env.outside, path, NULL, MS_BIND, NULL), 0);
	snprintf(env.mounts[env.nmounts++], PATH_MAX, "%s", path);
	assert_int_equal(safe_place_remove(&p), -EXDEV);
	check_outside();
	assert_int_equal(count_entries(&p), 1);	/* all but the mount point */
	assert_int_equal(umount2(path, 0), 0);
	env.nmounts--;
	mi = mount_table(true, NULL, &mlen);
	pathf(path, sizeof(path), "%s", dir + strlen(env.root));
	assert_int_equal(safe_place_remove_path(env.rootfd, mi, mlen, path), 0);
	assert_int_equal(access(dir, F_OK), -1);
	free(mi);
	row_end();

	/* moved away, something else put at its name: emptied through its fd, the other left */
	for (i = 0; i < 2; i++) {
		place_begin(NULL, &p);
		jvm_mess(&p);
		pathf(dir, sizeof(dir), "%s%s", env.root, p.path);
		pathf(path, sizeof(path), "%s/tmp/moved", env.root);
		assert_int_equal(rename(dir, path), 0);
		if (i) {
			assert_int_equal(symlink(env.outside, dir), 0);
		} else {
			assert_int_equal(mkdir(dir, 0700), 0);
			pathf(path, sizeof(path), "%s/theirs", dir);
			put_file(path, "theirs", JVM_UID);
		}
		assert_int_equal(safe_place_remove(&p), -ESTALE);
		pathf(path, sizeof(path), "%s/tmp/moved", env.root);
		assert_int_equal(rmdir(path), 0);	/* empty */
		pathf(path, sizeof(path), "%s/theirs", dir);
		assert_int_equal(access(path, F_OK), i ? -1 : 0);
		row_end();
	}

	/* nested deeper than removal goes */
	place_begin(NULL, &p);
	pathf(dir, sizeof(dir), "%s%s", env.root, p.path);
	for (i = 0; i < 20; i++) {
		pathf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/d");
		assert_int_equal(mkdir(dir, 0700), 0);
	}
	assert_int_equal(safe_place_remove(&p), -ELOOP);
	row_end();
}

/* ---- safe_place_remove_path() ---- */

#define HEX "0123456789abcdef"

static const struct rp_case {
	const char *what;
	struct op ops[5];
	const char *path;
	int ret;
	bool gone;	/* root + @path is gone after (else: still there, when it was) */
} rp_cases[] = {
	{ "leftover", { { OP_DIR, "tmp" }, { OP_DIR, "tmp/.slideops-" HEX } }, "/tmp/.slideops-" HEX, 0, true },
	{ "leftover in /dev/shm", { { OP_DIR, "dev" }, { OP_DIR, "dev/shm" }, { OP_DIR, "dev/shm/.slideops-" HEX } }, "/dev/shm/.slideops-" HEX, 0, true },
	{ "absent", { { OP_DIR, "tmp" } }, "/tmp/.slideops-" HEX, 0, true },
	{ "no /tmp", { { OP_END } }, "/tmp/.slideops-" HEX, 0, true },
	{ "tmp -> outside/keep", { { OP_LINK, "tmp", NULL } }, "/tmp/.slideops-" HEX, -ELOOP, false },
	{ "name -> outside", { { OP_DIR, "tmp" }, { OP_LINK_OUT, "tmp/.slideops-" HEX } }, "/tmp/.slideops-" HEX, -ELOOP, false },
	{ "name a file", { { OP_DIR, "tmp" }, { OP_FILE, "tmp/.slideops-" HEX } }, "/tmp/.slideops-" HEX, -ENOTDIR, false },
	{ "name a FIFO", { { OP_DIR, "tmp" }, { OP_FIFO, "tmp/.slideops-" HEX } }, "/tmp/.slideops-" HEX, -ENOTDIR, false },
	{ "dotdot", { { OP_DIR, "tmp" } }, "/tmp/../etc/.slideops-" HEX, -EINVAL, false },
	{ "dotdot name", { { OP_DIR, "tmp" } }, "/tmp/../.slideops-" HEX, -EINVAL, false },
	{ "other prefix", { { OP_DIR, "tmp" } }, "/etc/.slideops-" HEX, -EINVAL, false },
	{ "tmpx", { { OP_DIR, "tmp" } }, "/tmpx/.slideops-" HEX, -EINVAL, false },
	{ "relative", { { OP_DIR, "tmp" } }, "tmp/.slideops-" HEX, -EINVAL, false },
	{ "double slash", { { OP_DIR, "tmp" } }, "/tmp//.slideops-" HEX, -EINVAL, false },
	{ "15 hex", { { OP_DIR, "tmp" } }, "/tmp/.slideops-0123456789abcde", -EINVAL, false },
	{ "17 hex", { { OP_DIR, "tmp" } }, "/tmp/.slideops-" HEX "0", -EINVAL, false },
	{ "upper hex", { { OP_DIR, "tmp" } }, "/tmp/.slideops-0123456789ABCDEF", -EINVAL, false },
	{ "not hex", { { OP_DIR, "tmp" } }, "/tmp/.slideops-0123456789abcdeg", -EINVAL, false },
	{ "below ours", { { OP_DIR, "tmp" } }, "/tmp/.slideops-" HEX "/x", -EINVAL, false },
	{ "trailing slash", { { OP_DIR, "tmp" } }, "/tmp/.slideops-" HEX "/", -EINVAL, false },
	{ "other name", { { OP_DIR, "tmp" } }, "/tmp/slideops-" HEX, -EINVAL, false },
	{ "the location", { { OP_DIR, "tmp" } }, "/tmp", -EINVAL, false },
	{ "empty", { { OP_DIR, "tmp" } }, "", -EINVAL, false },
};

static void test_remove_path(void **state)
{
	char path[PATH_MAX], keep[PATH_MAX];
	struct stat sb;
	size_t i, mlen;
	char *mi;

	(void)state;
	need_root();
	for (i = 0; i < ARRAY_SIZE(rp_cases); i++) {
		const struct rp_case *c = &rp_cases[i];
		bool was;
		int ret;

		print_message("case %zu: %s\n", i, c->what);
		row_begin(NULL);
		if (c->ops[0].kind == OP_LINK && !c->ops[0].arg) {
			/* /tmp is a link to a directory that holds a real leftover-looking tree */
			pathf(keep, sizeof(keep), "%s/keep", env.outside);
			pathf(path, sizeof(path), "%s/tmp", env.root);
			assert_int_equal(symlink(keep, path), 0);
		} else {
			build(c->ops);
		}
		pathf(path, sizeof(path), "%s%s", env.root, c->path);
		if (c->path[0] == '/' && !lstat(path, &sb) && S_ISDIR(sb.st_mode)) {
			pathf(keep, sizeof(keep), "%s/file", path);
			put_file(keep, "jvm", JVM_UID);
			pathf(keep, sizeof(keep), "%s/to-outside", path);
			assert_int_equal(symlink(env.outside, keep), 0);
		}
		was = c->path[0] == '/' && !lstat(path, &sb);
		mi = mount_table(true, NULL, &mlen);
		ret = safe_place_remove_path(env.rootfd, mi, mlen, c->path);
		if (ret != c->ret)
			fail_msg("case %zu %s: %d, want %d", i, c->what, ret, c->ret);
		if (c->gone)
			assert_int_equal(lstat(path, &sb), -1);
		else if (was)
			assert_int_equal(lstat(path, &sb), 0);
		free(mi);
		row_end();
	}
	row_begin(NULL);
	assert_int_equal(safe_place_remove_path(env.rootfd, NULL, 0, "/tmp/.slideops-" HEX), -EINVAL);
	assert_int_equal(safe_place_remove_path(-1, "", 0, "/tmp/.slideops-" HEX), -EINVAL);
	assert_int_equal(safe_place_remove_path(env.rootfd, "", 0, NULL), -EINVAL);
	assert_int_equal(safe_place_remove_path(env.rootfd, "garbage", 7, "/tmp/.slideops-" HEX), -EINVAL);
	row_end();
}

static int setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	/* Mounts made here stay in this process's own namespace and go with it. */
	if (!geteuid() && (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)))
		return -1;
	snprintf(env.base, sizeof(env.base), "/tmp/test_safe_place.XXXXXX");
	if (!mkdtemp(env.base))
		return -1;
	snprintf(env.outside, sizeof(env.outside), "%s/outside", env.base);
	if (mkdir(env.outside, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/canary", env.outside);
	put_file(path, CANARY, 0);
	/* what remove_path must not reach through a symlinked /tmp */
	snprintf(path, sizeof(path), "%s/keep", env.outside);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/keep/.slideops-0123456789abcdef", env.outside);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/keep/.slideops-0123456789abcdef/keep", env.outside);
	put_file(path, "keep", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree_at(AT_FDCWD, env.base, 64) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_flags),
		cmocka_unit_test(test_place_dir),
		cmocka_unit_test(test_place_dir_names),
		cmocka_unit_test(test_place_file),
		cmocka_unit_test(test_place_file_limits),
		cmocka_unit_test(test_place_open),
		cmocka_unit_test(test_place_roundtrip),
		cmocka_unit_test(test_place_remove),
		cmocka_unit_test(test_remove_path),
	};

	/* A FIFO opened by mistake would hang the test: fail it instead. */
	alarm(120);
	return cmocka_run_group_tests(tests, setup, teardown);
}
