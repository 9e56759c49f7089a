// SPDX-License-Identifier: Apache-2.0
#include "base/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/proc.h"

#define REOPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

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
 * Checks the O_PATH fd @pfd (closed here) and reopens its inode for reading through the
 * kernel's own link to it, which names the open file, not a path. Returns an fd or -errno.
 */
static int check_and_reopen(int pfd, const struct safe_open_opts *o)
{
	struct stat sb, sb2;
	char self[64];
	int fd = -1, err;

	if (fstat(pfd, &sb) < 0) {
		err = -errno;
		goto out;
	}
	err = check_stat(&sb, o);
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

int safe_open_in_root(int rootfd, const char *path, const struct safe_open_opts *o)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int pfd;

	if (rootfd < 0 || !path || !path[0])
		return -EINVAL;
	pfd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	return check_and_reopen(pfd, o);
}

int safe_open_in_root_path(const char *root, const char *path, const struct safe_open_opts *o)
{
	int rootfd, fd;

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return proc_gone(-errno);
	fd = safe_open_in_root(rootfd, path, o);
	close(rootfd);
	return fd;
}

int safe_open_in_proc_root(const char *proc_root, uint32_t tgid, const char *path,
			   const struct safe_open_opts *o)
{
	int rootfd, fd;

	rootfd = safe_open_root(proc_root, tgid);
	if (rootfd < 0)
		return rootfd;
	fd = safe_open_in_root(rootfd, path, o);
	close(rootfd);
	return fd;
}

int safe_open_link(int dirfd, const char *name, const struct safe_open_opts *o)
{
	int pfd;

	/* O_PATH follows the kernel link without opening the file behind it. */
	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	return check_and_reopen(pfd, o);
}

int safe_open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end,
		       const struct safe_open_opts *o)
{
	char name[64], path[4096];
	int err;

	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, start, end);
	err = proc_path(path, sizeof(path), proc_root, tgid, name);
	if (err)
		return err;
	return safe_open_link(AT_FDCWD, path, o);
}

int safe_read_fd(int fd, size_t max, int timeout_ms, char **out, size_t *out_len)
{
	uint64_t deadline = timeout_ms > 0 ? clock_mono_ms() + (uint64_t)timeout_ms : 0;

	return read_fd_bounded_until(fd, max, deadline, out, out_len);
}

int safe_read_in_root(const char *root, const char *path, size_t max, int timeout_ms,
		      char **out, size_t *out_len)
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
	default:
		return NULL;
	}
}
