/* SPDX-License-Identifier: Apache-2.0 */
/*
 * safe_open: the one way this agent opens a file that a process (any container) controls.
 *
 * A container chooses the paths in its /proc/PID/maps and owns everything under /proc/PID/root:
 * an absolute symlink there must not resolve against the agent's root, a FIFO must not block
 * the agent, a device node must not be opened by root, a file may be endless or replaced.
 * Every open here:
 * - finds the file inside the process's root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS:
 *   absolute links, relative links and ".." stay inside it; magic links are refused), or
 *   through one kernel link (/proc/PID/map_files/<range>, /proc/PID/exe) that the kernel
 *   resolves to the mapped file itself, never as a path;
 * - first opens it O_PATH and fstat()s it: anything but a regular file is refused before it is
 *   really opened (no driver's open() of a device, no wait on a FIFO);
 *   (statx AT_STATX_DONT_SYNC: from the inode the kernel holds, never asking a FUSE server);
 * - refuses a file above the caller's size cap and, for a mapping, an inode that differs;
 * - refuses (-EREMOTE) a file on a FUSE or network file system (safe_open_fs_remote()), or on
 *   a mount the process's /proc/PID/mountinfo does not list: O_NONBLOCK means nothing to a
 *   regular file, and there a single open() or read() waits for as long as the FUSE server (a
 *   process the container may run) or the network server wants, which no deadline of ours
 *   can cut. A path walk in a process that has such mounts uses only cached lookups, else
 *   stays on the root's own mount (-EXDEV), so that no lookup waits on them either;
 * - then reopens that very inode O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC.
 * safe_read_fd() then reads at most a byte cap within a time budget (a file that never ends).
 * The mount check needs the process: every function below has it except
 * safe_open_in_root() (a bare root fd), and safe_open_in_root_path() of a root not named
 * ".../PID/root". All functions are thread-safe.
 *
 * tests/lint/check_opens.sh fails the build when a file outside base/ opens a path under
 * /proc/PID/root or map_files any other way.
 */
#ifndef SLIDEOPS_BASE_SAFE_OPEN_H
#define SLIDEOPS_BASE_SAFE_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* All zero: any size, any inode. */
struct safe_open_opts {
	uint64_t max_size; /* nonzero: -EFBIG when st_size is larger */
	/*
	 * Nonzero: -ESTALE unless the low 32 bits of st_ino are these (the inode /proc/PID/maps
	 * names; overlayfs with xino sets high bits in st_ino, so only the low ones compare).
	 */
	uint64_t ino;
	/*
	 * Nonzero (with @ino): -ESTALE unless st_dev is this makedev(). Only for map_files: a path
	 * through overlayfs or a btrfs subvolume reports another st_dev than the maps line.
	 */
	uint64_t dev;
};

/*
 * Opens "@proc_root/@tgid/root" (@proc_root NULL: "/proc") as an O_PATH directory fd, the
 * @rootfd of safe_open_in_root(): open it once per process and close it. Returns the fd,
 * -ESRCH when the process is gone, or -errno.
 */
int safe_open_root(const char *proc_root, uint32_t tgid);

/*
 * Opens @path (absolute or relative, resolved with @rootfd as "/") for reading, checked as
 * the file comment says (without the mount check: prefer safe_open_in_proc_root()). Returns an
 * fd (O_RDONLY | O_NONBLOCK | O_CLOEXEC), or -ENOTSUP (not a regular file), -EFBIG, -ESTALE,
 * -ELOOP (a link loop or a magic link), -EREMOTE, -EXDEV (the other functions), -ENOENT,
 * -EACCES ...
 */
int safe_open_in_root(int rootfd, const char *path, const struct safe_open_opts *o);

/* safe_open_in_root() with the root opened from its path ("/proc/PID/root") for this call. */
int safe_open_in_root_path(const char *root, const char *path, const struct safe_open_opts *o);

/*
 * safe_open_in_root() of @path inside "@proc_root/@tgid/root" (@proc_root NULL: "/proc"),
 * opened for this call. Returns an fd, -ESRCH when the process is gone, or -errno as above.
 */
int safe_open_in_proc_root(const char *proc_root, uint32_t tgid, const char *path,
			   const struct safe_open_opts *o);

/*
 * Opens the kernel link @name under @dirfd ("exe" under an open /proc/PID, or
 * "map_files/<start>-<end>") to the file it stands for, checked the same way. Returns an fd
 * or -errno as safe_open_in_root().
 */
int safe_open_link(int dirfd, const char *name, const struct safe_open_opts *o);

/*
 * Opens "@proc_root/@tgid/map_files/@start-@end" (@proc_root NULL: "/proc") with
 * safe_open_link(). Returns an fd or -errno as above (-ENOENT: no such mapping, or the
 * process is gone).
 */
int safe_open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end,
		       const struct safe_open_opts *o);

/*
 * Reads @fd (not closed) to its end into a new NUL-terminated buffer the caller frees: at most
 * @max bytes and for at most @timeout_ms milliseconds (0: no time limit; checked between
 * reads, so one read of a blocking file system is not cut). Returns 0, -EFBIG past @max,
 * -ETIMEDOUT, -EAGAIN (a non-blocking fd with nothing to read), or -errno.
 */
int safe_read_fd(int fd, size_t max, int timeout_ms, char **out, size_t *out_len);

/*
 * safe_open_in_root_path() + safe_read_fd() of a small text file (a JDK `release`), with
 * @max as the size cap of both. Returns 0 or -errno as those two.
 */
int safe_read_in_root(const char *root, const char *path, size_t max, int timeout_ms, char **out,
		      size_t *out_len);

/* Whether file system type @type (mountinfo's: "fuse.sshfs", "nfs4") is refused. */
bool safe_open_fs_remote(const char *type);

/*
 * The type of mount @mnt_id in @mountinfo (the text of /proc/PID/mountinfo) into @type (@size
 * bytes), and in @any_remote (may be NULL) whether any of its mounts is of a type
 * safe_open_fs_remote() refuses. Returns 0, -ENOENT (no such mount; @any_remote still set),
 * -ERANGE (the type does not fit in @size), -EINVAL.
 */
int safe_open_mount_type(const char *mountinfo, uint64_t mnt_id, char *type, size_t size,
			 bool *any_remote);

/*
 * A short reason for a note ("is not a regular file") for the errors above, or NULL for one
 * that needs none (-ENOENT and the other plain errno values: use strerror()).
 */
const char *safe_open_reason(int err);

#endif
