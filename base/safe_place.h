/* SPDX-License-Identifier: Apache-2.0 */
/*
 * safe_place: the one way this agent puts a file of its own into a container (async-profiler's
 * library, a JFR settings file), lets the container's process write output beside it, reads
 * that back and removes everything again. base/safe_open.h is the opener; this is the placer.
 *
 * Every container may be hostile: /tmp may be a symlink to "/", any name we might use may be
 * planted beforehand as a symlink, FIFO or device node, /tmp may be noexec, read-only, full, or
 * a FUSE mount whose server the container runs, and files may be swapped while we work. So:
 * - a location ("/tmp") is walked from the container's root one component at a time
 *   (O_PATH | O_NOFOLLOW); a symlink or a non-directory is refused, never followed, and a
 *   component on a FUSE or network mount (or one the process's mount table does not list: a
 *   mount made after it was read) is refused before anything is looked up in it;
 * - noexec (when a library must be mapped executable), read-only and too little space skip a
 *   location, both by the process's mount table and by fstatvfs() of the walked directory;
 * - our directory gets a fresh random name (mkdirat 0700: an existing name of any kind is never
 *   reused), is checked after opening (a directory of ours on the same mount, empty) and only
 *   then given to the process's uid; from there on everything goes through its fd;
 * - a file is created O_EXCL | O_NOFOLLOW, and checked after writing by its inode and sha256;
 * - a file the process wrote is opened only when it is a regular file with one link on our
 *   directory's mount (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, O_PATH first: a FIFO or
 *   device is never really opened), within a size cap;
 * - removal unlinks what is there without following links or entering other mounts (its own
 *   walk, openat2 RESOLVE_NO_XDEV: rm_tree_at() opens a mount point with O_NOFOLLOW, which does
 *   not stop at mounts, and empties the mounted tree before its rmdir fails with EBUSY).
 * Functions on distinct struct safe_place are thread-safe.
 */
#ifndef SLIDEOPS_BASE_SAFE_PLACE_H
#define SLIDEOPS_BASE_SAFE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SAFE_PLACE_PREFIX ".slideops-"
/* ".slideops-" and 16 hex digits */
#define SAFE_PLACE_NAME_LEN 26
#define SAFE_PLACE_PATH_MAX 64
/* Names tried in one location before it is given up (each taken one is left alone). */
#define SAFE_PLACE_TRIES 8
/* The files safe_place_file() records per directory, and their longest name (with its NUL). */
#define SAFE_PLACE_MAX_FILES 8
#define SAFE_PLACE_FILE_NAME_MAX 64

/*
 * The random part of a name (@attempt 0 .. SAFE_PLACE_TRIES - 1): 16 lower-case hex digits and
 * a NUL into @hex. Returns 0 or -errno. For tests, which plant things at the names tried.
 */
typedef int (*safe_place_name_fn_t)(void *ctx, unsigned int attempt, char hex[17]);

/* The options of safe_place_dir_opts(). */
struct safe_place_opts {
	/* The text of the process's /proc/PID/mountinfo (not necessarily NUL-terminated). */
	const char *mountinfo;
	size_t mountinfo_len;
	const char *const *dirs; /* locations tried in order, as the process sees them */
	size_t ndirs;
	bool need_exec;	     /* skip noexec mounts (a library to be mapped executable) */
	uint64_t need_bytes; /* nonzero: skip a location with fewer bytes free */
	uint32_t uid, gid;   /* the owner our directory is given: the process's (host) ids */
	safe_place_name_fn_t name_fn; /* NULL: getrandom() */
	void *name_ctx;
};

/*
 * One directory of ours inside a container, made by safe_place_dir(). Callers read @path (and
 * may read the others); the fds are owned by it and closed by safe_place_remove().
 */
struct safe_place {
	int rootfd;			/* the container's root (borrowed from the caller) */
	int parentfd;			/* O_PATH fd of the location ("/tmp") */
	int dirfd;			/* our directory, O_RDONLY | O_DIRECTORY */
	char path[SAFE_PLACE_PATH_MAX]; /* as the container sees it: "/tmp/.slideops-<16 hex>" */
	char name[SAFE_PLACE_NAME_LEN + 1]; /* its last component */
	uint32_t uid, gid;		    /* its owner: the process's */
	uint64_t dev, ino;		    /* its inode, to remove only it */
	unsigned int nfiles;		    /* the files placed, removed first */
	char files[SAFE_PLACE_MAX_FILES][SAFE_PLACE_FILE_NAME_MAX];
};

/*
 * Parses the @len bytes of /proc/PID/mountinfo text at @mountinfo: the mount that holds @dir
 * (absolute, canonical: "/tmp") is the one with the longest mount point that is a prefix of it
 * on a component boundary ("/tmpx" does not hold "/tmp"; of equal ones the last, mounted on top,
 * wins; mount points are octal-escaped: "\040"). Sets @noexec from its per-mount options (field
 * 6) and @readonly from those or its super options (after " - "). Pure, thread-safe. Returns 0,
 * -ENOENT (no mount holds @dir, also for empty text), -EINVAL (a malformed line anywhere, or
 * @dir not canonical); the outputs are written only on success.
 */
int safe_place_mount_flags(const char *mountinfo, size_t len, const char *dir, bool *noexec,
			   bool *readonly);

/*
 * Makes a fresh directory of ours in the first location of @o->dirs that works, as the file
 * comment says, owned by @o->uid:@o->gid, mode 0700, into @out. @rootfd is the container's
 * root (safe_open_root(): an O_PATH fd), @o->mountinfo that of the same process. @why (@size
 * bytes) gets a reason per location skipped or failed, joined by "; " ("/tmp is a symbolic
 * link; /var/tmp is mounted noexec"), also on success. Returns 0, -EINVAL (bad arguments, a
 * malformed mount table, a location that is not canonical), or the -errno of the last location:
 * -ELOOP (a symlink), -ENOTDIR, -ENOENT, -EREMOTE (FUSE, network or unlisted mount), -EPERM
 * (noexec), -EROFS, -ENOSPC, -EEXIST (all SAFE_PLACE_TRIES names taken), -ESTALE (what we
 * made was replaced), ...; @out is written only on success.
 */
int safe_place_dir_opts(int rootfd, const struct safe_place_opts *o, struct safe_place *out,
			char *why, size_t size);

/* safe_place_dir_opts() with random names and no space requirement. */
int safe_place_dir(int rootfd, const char *mountinfo, size_t milen, const char *const *dirs,
		   size_t ndirs, bool need_exec, uint32_t uid, uint32_t gid, struct safe_place *out,
		   char *why, size_t size);

/*
 * Writes the @len bytes at @data into our directory as @name (no '/', not "." or "..", shorter
 * than SAFE_PLACE_FILE_NAME_MAX), created O_EXCL | O_NOFOLLOW (a name planted there, link or
 * not, is -EEXIST and left alone), given the directory's owner and @mode (permission bits),
 * fsync()ed, then checked through a new open of @name: the same inode, @len bytes, sha256
 * @sha256. On any failure nothing of ours is left. Returns 0, -EBADMSG (the content read back
 * is not @sha256's), -ESTALE (the name is another inode now), -ENOSPC, -EDQUOT, -EROFS,
 * -EEXIST, -EINVAL, -ENAMETOOLONG, -ENOBUFS (SAFE_PLACE_MAX_FILES placed already), -errno.
 */
int safe_place_file(struct safe_place *p, const char *name, const void *data, size_t len,
		    mode_t mode, const uint8_t sha256[32]);

/*
 * Opens @name in our directory (a file the process wrote there) for reading: only a regular
 * file with one link, on our directory's mount, of at most @max bytes (0: any) when opened; read
 * it with a cap too (safe_read_fd()), it may grow. Never waits on a FIFO, never opens a device.
 * Returns the fd (O_RDONLY | O_NONBLOCK | O_CLOEXEC, the caller closes it), -ENOENT, -ELOOP (a
 * symlink), -EXDEV (a mount point), -ENOTSUP (not a regular file), -EMLINK (a hard link),
 * -EFBIG, -EINVAL (a bad name, or no directory), -errno.
 */
int safe_place_open(struct safe_place *p, const char *name, uint64_t max);

/*
 * Removes our files, then everything else in our directory (whatever anyone put there: links
 * removed, not followed; never entering another mount; at most 16 levels deep), then the
 * directory itself when its name still holds it, and closes the fds. @p is one that
 * safe_place_dir() filled; again after this call (dirfd is -1 then) it gives 0. Returns 0 or
 * the first -errno: -EXDEV (a mount inside: not entered), -ELOOP (nested too deep), -E2BIG
 * (over 100000 entries), -ESTALE (the directory was moved away: emptied, left). The fds are
 * closed in any case.
 */
int safe_place_remove(struct safe_place *p);

/*
 * Removes a directory of ours that a killed agent left: @path must be "<loc>/.slideops-<16
 * lower-case hex>" with <loc> one of "/tmp", "/var/tmp", "/dev/shm", else -EINVAL. <loc> is
 * walked from @rootfd as safe_place_dir() does (and checked against the process's @mountinfo
 * for FUSE), the directory opened without following a link or crossing a mount and emptied as
 * safe_place_remove() does. Returns 0 (also when it is not there), -ENOTDIR or -ELOOP (the name
 * is not a directory: left alone), or -errno as safe_place_remove() and safe_place_dir().
 */
int safe_place_remove_path(int rootfd, const char *mountinfo, size_t milen, const char *path);

#endif
