/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debugfile: finds the separate debug file of a stripped ELF on the node ("names on the node
 * first"), as gdb and elfutils look for it:
 * 1. by GNU build id, /usr/lib/debug/.build-id/<2 hex>/<rest>.debug, inside the process's root
 *    (/proc/PID/root), then on the host (the agent's own root, opts' host_root);
 * 2. by .gnu_debuglink (a file name and the CRC32 of the debug file): <dir>/<name>,
 *    <dir>/.debug/<name> and /usr/lib/debug/<dir>/<name>, <dir> the binary's directory, inside
 *    the process's root only (a container's path means nothing on the host).
 * Every candidate is opened with base/safe_open (inside the root, no link out of it, regular
 * files only, non-blocking, size-capped) and accepted only if its GNU build id is the
 * binary's (when the binary has one), else if the CRC32 of its bytes is the debuglink's
 * (read with a byte cap and a time budget). A container controls every byte and link of
 * these paths: a wrong or unsafe file is skipped (counted), never an error.
 * Stateless and thread-safe.
 */
#ifndef SLIDEOPS_DEBUGFILE_H
#define SLIDEOPS_DEBUGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_symtab.h"

/* The directory debuggers look in (gdb's debug-file-directory). */
#define DEBUGFILE_DIR "/usr/lib/debug"
/* Debug files larger are refused, as mapped ELF files are (elf_symtab.h). */
#define DEBUGFILE_MAX_SIZE ELF_SYMTAB_MAX_FILE_DEFAULT
/* A CRC32 (only for binaries without a build id) reads at most this much, for this long. */
#define DEBUGFILE_CRC_MAX_BYTES (512ull << 20)
#define DEBUGFILE_CRC_TIMEOUT_MS 2000
/* Longest .gnu_debuglink file name, with its NUL. */
#define DEBUGFILE_LINK_MAX 256
/* Debuglink candidates per binary (debugfile_link_path()). */
#define DEBUGFILE_LINK_PATHS 3

struct elf_file;

struct debuglink {
	char name[DEBUGFILE_LINK_MAX]; /* a plain file name: no '/', not "." or ".." */
	uint32_t crc;		       /* CRC32 (zlib's) of the whole debug file */
};

/*
 * The .gnu_debuglink of @ef into @out. Returns 0, -ENOENT (none), -EINVAL (malformed: too
 * short, no NUL, an empty name, a name with '/', "." or ".."), -ENAMETOOLONG, -errno of the
 * read.
 */
int debugfile_read_link(const struct elf_file *ef, struct debuglink *out);

/*
 * "/usr/lib/debug/.build-id/ab/cdef....debug" of hex build id @bid into @buf. Returns 0,
 * -EINVAL (not lowercase hex of 2 to 64 bytes), -ENAMETOOLONG (@size too small).
 */
int debugfile_build_id_path(const char *bid, char *buf, size_t size);

/*
 * The @i-th debuglink candidate (0 to DEBUGFILE_LINK_PATHS - 1) of binary @path (absolute, as
 * the process names it) and link name @name into @buf. Returns 0, -ENOENT for @i past the last,
 * -EINVAL (@path not absolute, or a directory with "." or ".." components, @name not a plain
 * file name), -ENAMETOOLONG.
 */
int debugfile_link_path(const char *path, const char *name, unsigned i, char *buf, size_t size);

/*
 * The CRC32 of the file on @fd from offset 0, reading at most @max bytes for at most
 * @timeout_ms (0: none). Returns 0, -EFBIG (longer), -ETIMEDOUT, -EIO, -errno.
 */
int debugfile_crc32(int fd, uint64_t max, int timeout_ms, uint32_t *out);

/*
 * Whether the ELF on @fd is the debug file of a binary with build id @bid (hex; NULL or ""
 * when it has none) and debuglink @link (may be NULL). Returns 0 when it is; -EBADMSG when it
 * is another build (build ids differ, or no build id to compare and the CRC differs, or
 * neither to compare); -ENODATA when it is the right build without a .symtab (the stripped
 * binary itself); -EINVAL (not an ELF), -EFBIG, -ETIMEDOUT, -errno.
 */
int debugfile_check(int fd, const char *bid, const struct debuglink *link);

enum debugfile_where {
	DEBUGFILE_IN_ROOT = 1, /* path inside the process's root */
	DEBUGFILE_ON_HOST,     /* path under host_root */
};

struct debugfile_query {
	const char *proc_root; /* NULL: "/proc" */
	const char *host_root; /* NULL: "/"; "" : no lookup on the host */
	uint32_t tgid;	       /* the process whose root holds @path */
	const char *path;      /* the binary, as the process names it (absolute) */
	const char *build_id;  /* hex, NULL or "" if none */
	int bin_fd;	       /* the binary (for its .gnu_debuglink), or -1 */
};

struct debugfile_found {
	int fd; /* O_RDONLY | O_NONBLOCK | O_CLOEXEC, the caller's to close */
	enum debugfile_where where;
	char path[4096];   /* the debug file, inside the root or under host_root */
	uint64_t dev, ino; /* of the debug file, for a later safe_open_opts check */
};

struct debugfile_stats {
	unsigned tried;	  /* candidates opened */
	unsigned refused; /* of those, refused: another build, unsafe, not an ELF */
};

/*
 * Looks for the debug file of @q in the order of the file comment. Returns 0 and the first
 * accepted candidate in @out; -ENOENT when none is accepted (@stats, may be NULL, counts what
 * was tried and refused); -EINVAL for a bad query; -ENOMEM.
 */
int debugfile_find(const struct debugfile_query *q, struct debugfile_found *out,
		   struct debugfile_stats *stats);

#endif
