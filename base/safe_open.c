// SPDX-License-Identifier: Apache-2.0
#include "base/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/proc.h"

#define REOPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
#define RESOLVE_FLAGS (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
/* A container's mount table is tens of lines; a node's own, thousands. */
#define MOUNTINFO_MAX (4u << 20)

/*
 * File systems whose every request can wait on someone the container controls, or on a
 * network: O_NONBLOCK means nothing to a regular file, so one open(), stat() or read() there
 * can block for as long as the FUSE server (a process, maybe in the container) or the server
 * of a hard NFS mount wants. virtiofs is served by the host (virtiofsd), not the guest.
 */
static const char *const remote_types[] = {
	"fuse", "fuseblk", "nfs",	"nfs4",	  "cifs", "smb3",  "smbfs", "9p",
	"ceph", "afs",	   "glusterfs", "lustre", "gfs2", "ocfs2", "ncpfs", "coda",
};

bool safe_open_fs_remote(const char *type)
{
	size_t i;

	if (!type)
		return false;
	if (!strncmp(type, "fuse.", 5) || !strncmp(type, "fuseblk.", 8))
		return true;
	for (i = 0; i < sizeof(remote_types) / sizeof(remote_types[0]); i++)
		if (!strcmp(type, remote_types[i]))
			return true;
	return false;
}

/*
 * The file system type of one mountinfo line (proc(5): "ID PARENT MAJ:MIN ROOT POINT OPTS
 * [TAGS...] - TYPE SOURCE SUPEROPTS"), its mount id in @id. Returns 0, -EINVAL.
 */
static int mountinfo_line(const char *line, const char *end, uint64_t *id, char *type, size_t size)
{
	const char *p, *t;
	char *e;
	size_t n;

	*id = strtoull(line, &e, 10);
	if (e == line || *e != ' ')
		return -EINVAL;
	for (p = e; p + 3 <= end && memcmp(p, " - ", 3); p++)
		;
	if (p + 3 > end)
		return -EINVAL;
	t = p + 3;
	for (p = t; p < end && *p != ' '; p++)
		;
	n = (size_t)(p - t);
	if (!n)
		return -EINVAL;
	/* A long "fuse.<name>" keeps the prefix that marks it. */
	n = n < size ? n : size - 1;
	memcpy(type, t, n);
	type[n] = '\0';
	return 0;
}

int safe_open_mount_type(const char *mountinfo, uint64_t mnt_id, char *type, size_t size,
			 bool *any_remote)
{
	const char *line = mountinfo, *end;
	char t[256];
	uint64_t id;
	int ret = -ENOENT;

	if (any_remote)
		*any_remote = false;
	if (!mountinfo || !type || !size)
		return -EINVAL;
	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (mountinfo_line(line, end, &id, t, sizeof(t)))
			continue;
		if (any_remote && safe_open_fs_remote(t))
			*any_remote = true;
		if (id == mnt_id && ret)
			ret = snprintf(type, size, "%s", t) < (int)size ? 0 : -ERANGE;
	}
	return ret;
}

/*
 * The mount table of the process whose /proc/PID directory is @procfd (-1: none known) into
 * @out (NULL when there is none to check: no process known, or a test's fixture directory
 * without one). Returns 0 or -errno.
 */
static int read_mounts(int procfd, char **out)
{
	size_t len;
	int err;

	*out = NULL;
	if (procfd < 0)
		return 0;
	err = read_file_bounded(procfd, "mountinfo", MOUNTINFO_MAX, out, &len);
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	return err ? proc_gone(err) : 0;
}

/*
 * Refuses (-EREMOTE) the file on O_PATH fd @pfd when it lies on a mount whose type
 * safe_open_fs_remote() names, or on none the process lists (a mount it no longer has: its
 * type is unknown), by the mount table @mounts, else that of the process at @procfd (read
 * here; -1 and no @mounts: no check). The mount id and device come from statx with
 * AT_STATX_DONT_SYNC, which answers from the inode the kernel holds without asking the file
 * system (FUSE_GETATTR).
 */
static int check_mount(int pfd, int procfd, const char *mounts)
{
	char type[64], *own = NULL;
	struct statx sx;
	int err;

	if (!mounts && procfd < 0)
		return 0;
	if (statx(pfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) < 0)
		return -errno;
	/*
	 * Before Linux 5.8 there is no mount id: nothing to compare. A file system on a block
	 * device (major != 0) waits on no process and no network server (fuseblk needs a
	 * privileged mount: root on the node, out of scope); this spares most host files the
	 * read of the host's mount table, thousands of lines on a busy node.
	 */
	if (!(sx.stx_mask & STATX_MNT_ID) || sx.stx_dev_major)
		return 0;
	if (!mounts) {
		err = read_mounts(procfd, &own);
		if (err || !own)
			return err;
		mounts = own;
	}
	err = safe_open_mount_type(mounts, sx.stx_mnt_id, type, sizeof(type), NULL);
	if (err || safe_open_fs_remote(type))
		err = -EREMOTE;
	free(own);
	return err;
}

int safe_open_root(const char *proc_root, uint32_t tgid)
{
	char path[4096];
	int fd, err;

	err = proc_path(path, sizeof(path), proc_root, tgid, "root");
	if (err)
		return err;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return proc_gone(-errno);
	return fd;
}

/* The checks of the file comment on the stat of an O_PATH fd. Returns 0 or -errno. */
static int check_stat(const struct stat *sb, const struct safe_open_opts *o)
{
	if (!S_ISREG(sb->st_mode))
		return -ENOTSUP;
	if (!o)
		return 0;
	if (o->max_size && (uint64_t)sb->st_size > o->max_size)
		return -EFBIG;
	if (o->ino && (uint32_t)sb->st_ino != (uint32_t)o->ino)
		return -ESTALE;
	if (o->ino && o->dev && (uint64_t)sb->st_dev != o->dev)
		return -ESTALE;
	return 0;
}

/*
 * The stat of O_PATH fd @pfd from the inode the kernel holds (AT_STATX_DONT_SYNC): a FUSE
 * server is not asked (FUSE_GETATTR) before its mount is checked.
 */
static int stat_cached(int pfd, struct stat *sb)
{
	struct statx sx;

	if (statx(pfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx) < 0)
		return -errno;
	memset(sb, 0, sizeof(*sb));
	sb->st_mode = sx.stx_mode;
	sb->st_ino = sx.stx_ino;
	sb->st_size = (off_t)sx.stx_size;
	sb->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	return 0;
}

/*
 * Checks the O_PATH fd @pfd (closed here) against @o and check_mount(@procfd, @mounts) and
 * reopens its inode for reading through the kernel's own link to it, which names the open
 * file, not a path. Returns an fd or -errno.
 */
static int check_and_reopen(int pfd, int procfd, const char *mounts, const struct safe_open_opts *o)
{
	struct stat sb = { 0 }, sb2;
	char self[64];
	int fd = -1, err;

	err = stat_cached(pfd, &sb);
	if (!err)
		err = check_stat(&sb, o);
	if (!err)
		err = check_mount(pfd, procfd, mounts);
	if (err)
		goto out;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, REOPEN_FLAGS);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &sb2) < 0) {
		err = -errno;
		goto out;
	}
	if (sb2.st_dev != sb.st_dev || sb2.st_ino != sb.st_ino || !S_ISREG(sb2.st_mode)) {
		err = -ESTALE;
		goto out;
	}
	close(pfd);
	return fd;

out:
	if (fd >= 0)
		close(fd);
	close(pfd);
	return err;
}

/*
 * The walk of @path under @rootfd. With a FUSE or network mount in the process's table, a
 * lookup on it could wait on its server before the result is checked: the walk then uses only
 * what the kernel has cached (RESOLVE_CACHED), else stays on the root's own mount
 * (RESOLVE_NO_XDEV: -EXDEV for a path into any other mount).
 */
static int walk(int rootfd, const char *path, bool remote_mounts)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_FLAGS };
	int pfd;

	if (remote_mounts) {
		how.resolve = RESOLVE_FLAGS | RESOLVE_CACHED;
		pfd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (pfd >= 0 || errno != EAGAIN)
			return pfd < 0 ? -errno : pfd;
		how.resolve = RESOLVE_FLAGS | RESOLVE_NO_XDEV;
	}
	pfd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	return pfd < 0 ? -errno : pfd;
}

/* safe_open_in_root() checked against the mount table of the process at @procfd (or -1). */
static int open_checked(int rootfd, int procfd, const char *path, const struct safe_open_opts *o)
{
	char *mounts = NULL, type[8];
	bool remote = false;
	int pfd;

	if (rootfd < 0 || !path || !path[0])
		return -EINVAL;
	pfd = read_mounts(procfd, &mounts);
	if (pfd)
		return pfd;
	if (mounts)
		safe_open_mount_type(mounts, 0, type, sizeof(type), &remote);
	/* A root on such a mount (fuse-overlayfs) cannot be walked at all. */
	pfd = remote ? check_mount(rootfd, -1, mounts) : 0;
	if (!pfd)
		pfd = walk(rootfd, path, remote);
	pfd = pfd < 0 ? pfd : check_and_reopen(pfd, mounts ? procfd : -1, mounts, o);
	free(mounts);
	return pfd;
}

int safe_open_in_root(int rootfd, const char *path, const struct safe_open_opts *o)
{
	return open_checked(rootfd, -1, path, o);
}

/*
 * The /proc/PID directory of root "@root" when it is "<dir>/root" (what callers pass:
 * "/proc/PID/root"), for its mount table; -1 otherwise.
 */
static int proc_dir_of_root(const char *root)
{
	size_t n = strlen(root);
	char dir[4096];

	if (n < 6 || n >= sizeof(dir) || strcmp(root + n - 5, "/root"))
		return -1;
	memcpy(dir, root, n - 5);
	dir[n - 5] = '\0';
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int safe_open_in_root_path(const char *root, const char *path, const struct safe_open_opts *o)
{
	int rootfd, procfd, fd;

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return proc_gone(-errno);
	procfd = proc_dir_of_root(root);
	fd = open_checked(rootfd, procfd, path, o);
	if (procfd >= 0)
		close(procfd);
	close(rootfd);
	return fd;
}

/* Opens "@proc_root/@tgid" as an O_PATH directory. Returns the fd, -ESRCH, -errno. */
static int open_proc_dir(const char *proc_root, uint32_t tgid)
{
	char path[4096];
	int fd, err;

	err = proc_path(path, sizeof(path), proc_root, tgid, "");
	if (err)
		return err;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? proc_gone(-errno) : fd;
}

int safe_open_in_proc_root(const char *proc_root, uint32_t tgid, const char *path,
			   const struct safe_open_opts *o)
{
	int procfd, rootfd, fd;

	procfd = open_proc_dir(proc_root, tgid);
	if (procfd < 0)
		return procfd;
	rootfd = openat(procfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = rootfd < 0 ? proc_gone(-errno) : open_checked(rootfd, procfd, path, o);
	if (rootfd >= 0)
		close(rootfd);
	close(procfd);
	return fd;
}

int safe_open_link(int dirfd, const char *name, const struct safe_open_opts *o)
{
	int pfd;

	/* O_PATH follows the kernel link without opening the file behind it. */
	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	/* @dirfd is the process's /proc/PID: its mount table says where the file lies. */
	return check_and_reopen(pfd, dirfd == AT_FDCWD ? -1 : dirfd, NULL, o);
}

int safe_open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end,
		       const struct safe_open_opts *o)
{
	char name[64];
	int procfd, fd;

	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, start, end);
	procfd = open_proc_dir(proc_root, tgid);
	if (procfd < 0)
		return procfd == -ESRCH ? -ENOENT : procfd;
	fd = safe_open_link(procfd, name, o);
	close(procfd);
	return fd == -ESRCH ? -ENOENT : fd;
}

int safe_read_fd(int fd, size_t max, int timeout_ms, char **out, size_t *out_len)
{
	uint64_t deadline = timeout_ms > 0 ? clock_mono_ms() + (uint64_t)timeout_ms : 0;

	return read_fd_bounded_until(fd, max, deadline, out, out_len);
}

int safe_read_in_root(const char *root, const char *path, size_t max, int timeout_ms, char **out,
		      size_t *out_len)
{
	const struct safe_open_opts o = { .max_size = max };
	int fd, err;

	fd = safe_open_in_root_path(root, path, &o);
	if (fd < 0)
		return fd;
	err = safe_read_fd(fd, max, timeout_ms, out, out_len);
	close(fd);
	return err;
}

const char *safe_open_reason(int err)
{
	switch (err) {
	case -ENOTSUP:
		return "is not a regular file";
	case -EFBIG:
		return "is larger than the size limit";
	case -ESTALE:
		return "was replaced after it was mapped";
	case -ELOOP:
		return "is a link loop or a link the profiler does not follow";
	case -ETIMEDOUT:
		return "was too slow to read";
	case -EAGAIN:
		return "would block";
	case -EREMOTE:
		return "is on a FUSE or network file system, whose reads can block";
	case -EXDEV:
		return "lies on another mount of a container with FUSE or network mounts";
	default:
		return NULL;
	}
}
