// SPDX-License-Identifier: Apache-2.0
#include "runtimes/proclisten.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

#define PROC_NET_MAX (64u << 20) /* about 400000 sockets in one network namespace */
#define FD_SCAN_MAX (1u << 17)	 /* fds of the process looked at */

static int cmp_inode(const void *a, const void *b)
{
	const struct procnet_entry *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

int proc_listening_read(int pid_fd, struct procnet_entry *l, size_t max, size_t *n)
{
	static const char *const files[2] = { "net/tcp", "net/tcp6" };
	size_t len, got = 0;
	char *buf;
	int i, k, err;

	for (i = 0; i < 2; i++) {
		err = read_file_bounded(pid_fd, files[i], PROC_NET_MAX, &buf, &len);
		if (err == -ENOENT && i == 1)
			continue; /* a kernel without IPv6 */
		if (err)
			return err == -ENOENT ? -ESRCH : err;
		k = procnet_listening(buf, len, i == 1, l + got, max - got, NULL);
		free(buf);
		if (k < 0)
			return k;
		got += (size_t)k;
	}
	*n = got;
	return 0;
}

int proc_listening_owned(int pid_fd, struct procnet_entry *l, size_t n)
{
	struct procnet_entry key, *hit;
	bool *owned;
	size_t scanned = 0, matched = 0, i, kept = 0;
	char link[64], *end;
	struct dirent *de;
	DIR *d;
	int fd, err = 0;
	ssize_t k;

	if (!n)
		return 0;
	qsort(l, n, sizeof(*l), cmp_inode);
	owned = calloc(n, sizeof(*owned));
	if (!owned)
		return -ENOMEM;
	fd = openat(pid_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
		goto out;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		goto out;
	}
	while (matched < n && scanned < FD_SCAN_MAX && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		scanned++;
		k = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (k < 9)
			continue; /* closed meanwhile, or not a socket */
		link[k] = '\0';
		if (strncmp(link, "socket:[", 8) || link[k - 1] != ']')
			continue;
		errno = 0;
		key.inode = strtoull(link + 8, &end, 10);
		if (errno || end != link + k - 1 || end == link + 8)
			continue;
		hit = bsearch(&key, l, n, sizeof(*l), cmp_inode);
		if (hit && !owned[hit - l]) {
			owned[hit - l] = true;
			matched++;
		}
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		if (owned[i])
			l[kept++] = l[i];
	}
	err = (int)kept;
out:
	free(owned);
	return err;
}
