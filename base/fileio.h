/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fileio: the three ways this agent touches files, each bounded and safe.
 *
 * - read_file_bounded(): never trusts a size from the file; stops at @max.
 * - open_in_root(): opens a path inside another root (a container's /proc/PID/root) as if that
 *   root were "/": symlinks, ".." and absolute links cannot leave it (openat2 RESOLVE_IN_ROOT).
 * - atomic_write_file(): temp file in the same directory, fsync, rename, fsync of the directory:
 *   a reader (or a crash) sees the old file or the whole new one, never a part.
 * All functions are thread-safe.
 */
#ifndef SLIDEOPS_FILEIO_H
#define SLIDEOPS_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Reads up to @max bytes of @path (relative to @dirfd, AT_FDCWD for cwd) into a new
 * NUL-terminated buffer the caller frees. Opened O_NONBLOCK: for the kernel's files (/proc, /sys)
 * and the agent's own; a file a process controls goes through base/safe_open.h. Returns 0;
 * -EFBIG if the file holds more than @max bytes (nothing returned); -EAGAIN (a FIFO with no
 * writer data); -ENOENT/-EACCES/... from open or read.
 */
int read_file_bounded(int dirfd, const char *path, size_t max, char **out, size_t *out_len);

/* Like read_file_bounded() on an open fd (not closed). */
int read_fd_bounded(int fd, size_t max, char **out, size_t *out_len);
/*
 * read_fd_bounded() that also gives up with -ETIMEDOUT once CLOCK_MONOTONIC passes
 * @deadline_ms (clock_mono_ms(); 0: no deadline), checked between reads.
 */
int read_fd_bounded_until(int fd, size_t max, uint64_t deadline_ms, char **out, size_t *out_len);

/*
 * Opens @path inside @root ("/proc/123/root") with @flags (O_CLOEXEC added). Links are
 * resolved inside the root; magic links (/proc/self/...) are refused. Returns an fd or -errno
 * (-EXDEV/-ELOOP for an escape attempt).
 */
int open_in_root(const char *root, const char *path, int flags);

typedef int (*fileio_write_fn_t)(void *ctx, FILE *f);

/*
 * Creates or replaces @path with what @fn writes (mode 0644). Returns 0, or the negative
 * value @fn returned, or -errno; on failure @path is untouched and no temp file remains.
 */
int atomic_write_file(const char *path, fileio_write_fn_t fn, void *ctx);

/* atomic_write_file() of the @len bytes at @p. Returns 0, -EIO (short write) or -errno. */
int atomic_write_buf(const char *path, const void *p, size_t len);

/* Writes all @len bytes at @p to @fd, again after EINTR and short writes. Returns 0, -EIO (no
 * progress) or -errno. */
int write_all(int fd, const void *p, size_t len);

/* Creates @path and its parents (mode 0755). Returns 0 or -errno. */
int mkdir_p(const char *path);

/*
 * Removes @name under @dirfd: a file, or a directory and everything in it down to @max_depth
 * levels of subdirectories, never through a symbolic link (links are removed, not followed)
 * and never into a directory mounted inside the tree (its statx mount id differs from the
 * top's: -EXDEV, left as it is). Returns 0 (also when @name is absent), -ELOOP when a directory
 * is nested deeper than @max_depth (what could be removed is), or the first -errno.
 */
int rm_tree_at(int dirfd, const char *name, int max_depth);

#endif
