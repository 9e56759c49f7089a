// SPDX-License-Identifier: Apache-2.0
#include "base/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"

int read_fd_bounded_until(int fd, size_t max, uint64_t deadline_ms, char **out, size_t *out_len)
{
	size_t cap = 4096, len = 0;
	char *buf, *tmp;
	ssize_t n;
	int err;

	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (deadline_ms && clock_mono_ms() > deadline_ms) {
			err = -ETIMEDOUT;
			goto err_free;
		}
		if (len + 1 >= cap) {
			if (cap > max) {
				/* @max bytes read: the file may end exactly here */
				char c;

				n = read(fd, &c, 1);
				if (n < 0 && errno == EINTR)
					continue;
				if (n == 0)
					break;
				err = n < 0 ? -errno : -EFBIG;
				goto err_free;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = -ENOMEM;
				goto err_free;
			}
			buf = tmp;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			err = -errno;
			if (err == -EINTR)
				continue;
			goto err_free;
		}
		if (n == 0)
			break;
		len += n;
		if (len > max) {
			err = -EFBIG;
			goto err_free;
		}
	}
	buf[len] = '\0';
	*out = buf;
	if (out_len)
		*out_len = len;
	return 0;

err_free:
	free(buf);
	return err;
}

int read_fd_bounded(int fd, size_t max, char **out, size_t *out_len)
{
	return read_fd_bounded_until(fd, max, 0, out, out_len);
}

int read_file_bounded(int dirfd, const char *path, size_t max, char **out, size_t *out_len)
{
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = read_fd_bounded(fd, max, out, out_len);
	close(fd);
	return err;
}

int open_in_root(const char *root, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC | O_NOCTTY),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int rootfd, fd, err;

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	err = fd < 0 ? -errno : fd;
	close(rootfd);
	return err;
}

int atomic_write_file(const char *path, fileio_write_fn_t fn, void *ctx)
{
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	FILE *f = NULL;
	int fd = -1, dfd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0) {
		err = -errno;
		goto out_unlink;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		goto out_unlink;
	}
	fd = -1;
	err = fn(ctx, f);
	if (err < 0)
		goto out_unlink;
	if (fflush(f) != 0 || fsync(fileno(f)) < 0) {
		err = -errno;
		goto out_unlink;
	}
	if (fclose(f) != 0) {
		f = NULL;
		err = -errno;
		goto out_unlink;
	}
	f = NULL;
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto out_unlink;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;

out_unlink:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return err;
}

struct write_buf_ctx {
	const void *p;
	size_t len;
};

static int write_buf(void *ctx, FILE *f)
{
	const struct write_buf_ctx *w = ctx;

	if (w->len && fwrite(w->p, 1, w->len, f) != w->len)
		return -EIO;
	return 0;
}

int atomic_write_buf(const char *path, const void *p, size_t len)
{
	struct write_buf_ctx w = { p, len };

	return atomic_write_file(path, write_buf, &w);
}

int write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	ssize_t n;

	while (len) {
		n = write(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

int mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The mount id of @fd (statx STATX_MNT_ID, Linux 5.8), 0 when the kernel does not say. */
static uint64_t mnt_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* Removes @name under @dfd; a directory is entered only on the mount of the tree's top
 * (@mnt: 0 at the top): one mounted inside is -EXDEV, left as it is. */
static int rm_tree_depth(int dfd, const char *name, int depth, int max_depth, uint64_t mnt)
{
	struct dirent *de;
	uint64_t here;
	DIR *d;
	int fd, err = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > max_depth)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	here = mnt_id(fd);
	if (mnt && here && here != mnt) {
		close(fd);
		return -EXDEV;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		int e;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		e = rm_tree_depth(dirfd(d), de->d_name, depth + 1, max_depth, mnt ? mnt : here);
		if (e && !err)
			err = e;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !err)
		err = -errno;
	return err;
}

int rm_tree_at(int dirfd, const char *name, int max_depth)
{
	return rm_tree_depth(dirfd, name, 0, max_depth, 0);
}
