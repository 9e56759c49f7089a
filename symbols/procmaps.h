/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procmaps: parses /proc/PID/maps.
 *
 * A line is "start-end perms offset major:minor inode [path]"; the path may hold spaces, may
 * be a pseudo name ("[vdso]", "[stack]", "[anon:name]") or end in " (deleted)". Stateless and
 * thread-safe.
 */
#ifndef SLIDEOPS_PROCMAPS_H
#define SLIDEOPS_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest maps file read (a JVM with 65530 mappings needs about 8 MiB). */
#define PROCMAPS_MAX_BYTES (32u << 20)

enum procmaps_perm {
	PROCMAPS_READ = 1u << 0,
	PROCMAPS_WRITE = 1u << 1,
	PROCMAPS_EXEC = 1u << 2,
	PROCMAPS_SHARED = 1u << 3, /* 's'; 'p' (private) otherwise */
};

struct procmaps_entry {
	uint64_t start, end; /* [start, end), start < end */
	uint64_t offset;     /* file offset of start */
	uint64_t inode;	     /* 0 for anonymous and pseudo mappings */
	uint32_t dev_major, dev_minor;
	uint32_t perms;	  /* enum procmaps_perm bits */
	bool deleted;	  /* path had the " (deleted)" suffix (removed from path) */
	const char *path; /* "" when anonymous; points into the parsed line */
};

/*
 * Parses one line (with or without its '\n') in place: the path is cut at its end and the
 * " (deleted)" suffix is removed. @out->path points into @line. Returns 0 or -EINVAL (malformed
 * line; @out untouched).
 */
int procmaps_parse_line(char *line, struct procmaps_entry *out);

/* Called per entry; a negative return stops the walk and is returned by procmaps_foreach(). */
typedef int (*procmaps_fn_t)(void *ctx, const struct procmaps_entry *e);

/*
 * Reads @proc_root/@tgid/maps (proc_root NULL means "/proc"; at most PROCMAPS_MAX_BYTES) and calls
 * @fn for each well-formed line in file order (malformed lines are skipped). Returns the number
 * of entries, -ESRCH if the process is gone, -EFBIG, -ENOMEM, -EACCES or @fn's negative value.
 */
int procmaps_foreach(const char *proc_root, int tgid, procmaps_fn_t fn, void *ctx);

#endif
