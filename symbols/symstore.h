/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symstore: the uploaded symbol indexes (symindex.h) of a node, one file per build in a
 * directory: <build id>.sym, written atomically (a temp file ".tmp.*" made with O_EXCL in the
 * same directory, written, fsync'd, renamed over the old one, then the directory fsync'd), so a
 * killed process leaves the old index or the new one, never a part; temp files left by a kill
 * are removed at open.
 *
 * What every stored build says (its header) is kept in memory from open on: symstore__has()
 * and symstore__list() never touch the disk, and a frame of an unknown build costs a lookup in
 * memory. Decoded indexes are cached for symstore__name(), least recently used first out, by
 * count and bytes (the index just used stays even when alone over the byte budget); a put or a
 * delete of a build drops its cached index.
 *
 * Thread-safe: one mutex guards the store. put() encodes and writes its temp file outside it;
 * name() reads and decodes an index missing from the cache while holding it.
 */
#ifndef SLIDEOPS_SYMBOLS_SYMSTORE_H
#define SLIDEOPS_SYMBOLS_SYMSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symindex.h"

#define SYMSTORE_DEFAULT_MAX_BUILDS 10000u
#define SYMSTORE_DEFAULT_MAX_BYTES (2ull << 30)
#define SYMSTORE_DEFAULT_CACHE_BUILDS 32u
#define SYMSTORE_DEFAULT_CACHE_BYTES (256ull << 20)

/* All zero but @dir: the defaults above. */
struct symstore_opts {
	const char *dir;      /* created (mode 0700, parents 0755) if missing */
	size_t max_builds;    /* builds stored at most */
	uint64_t max_bytes;   /* bytes of all index files at most */
	size_t cache_builds;  /* decoded indexes kept */
	uint64_t cache_bytes; /* bytes of decoded indexes kept */
};

/* One stored build. */
struct symstore_entry {
	char build_id[SYMINDEX_BUILD_ID_MAX + 1];
	char file_name[SYMINDEX_FILE_NAME_MAX + 1];
	char uploaded_by[SYMINDEX_BY_MAX + 1];
	int64_t uploaded_at; /* unix seconds */
	uint64_t functions;  /* functions named */
	uint64_t bytes;	     /* size of its index file */
	bool replaced;	     /* symstore__put(): an earlier upload of this build was replaced */
};

struct symstore;

/*
 * Opens the store in @o->dir, reading the header of every "<build id>.sym" in it (at most
 * max_builds; files that fail to read or decode, or whose header names another build, are
 * skipped, counted and logged once) and removing stale temp files. Returns 0 and a new store
 * the caller frees with symstore__free(), -EINVAL, -ENOMEM, or -errno of mkdir/open.
 */
int symstore__open(const struct symstore_opts *o, struct symstore **out);
/* Accepts NULL. */
void symstore__free(struct symstore *s);

/*
 * Stores sealed @b with its upload's facts (@file_name and @by cut to the header's limits and
 * made valid UTF-8, @at unix seconds). A build already stored is replaced when @b names at least
 * as many functions (@res->replaced is then true); when the stored one names more, it is kept
 * and -EEXIST returned with its facts in @res. Returns 0 and the stored facts in @res (may be
 * NULL); -EEXIST; -EINVAL (@b not sealed); -ENOSPC over max_builds or max_bytes; -E2BIG or
 * -ENOMEM from the encoding; -errno of the write. @res is written on success and on -EEXIST.
 */
int symstore__put(struct symstore *s, const struct symindex_build *b, const char *file_name,
		  const char *by, int64_t at, struct symstore_entry *res);

/*
 * Every stored build, newest upload first (then by build id), in a new array (*@out, *@n) the
 * caller frees with symstore_list_free(). Returns 0 or -ENOMEM.
 */
int symstore__list(struct symstore *s, struct symstore_entry **out, size_t *n);
void symstore_list_free(struct symstore_entry *list);

/* Removes build @build_id. Returns 0, -EINVAL (not a valid build id), -ENOENT, -errno. */
int symstore__delete(struct symstore *s, const char *build_id);

/* True when build @build_id is stored (memory only). */
bool symstore__has(struct symstore *s, const char *build_id);

/* The number of builds stored (0 for NULL): readers skip their work when it is 0. */
size_t symstore__count(struct symstore *s);

/*
 * Names @addr (an ELF virtual address, as addr2line takes) of build @build_id: the function's
 * name, demangled (symbols/demangle.h), into @buf (@size bytes, NUL-terminated, cut on a UTF-8
 * character). Returns 0; -ENOENT when the build is not stored, its index cannot be read (logged
 * once) or no function holds @addr; -EINVAL (a bad build id, no @buf); -ENOMEM.
 */
int symstore__name(struct symstore *s, const char *build_id, uint64_t addr, char *buf, size_t size);

/* Index files skipped at open (unreadable or corrupt). */
size_t symstore__skipped(const struct symstore *s);

#endif
