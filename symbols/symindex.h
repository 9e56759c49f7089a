/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symindex: the compact index of one build's function names, as kept for an uploaded symbol
 * file: its GNU build id, who uploaded which file when, and the functions as disjoint address
 * ranges [start, start + size) (ELF virtual addresses, what st_value and addr2line use) sorted
 * by start, each with its name (raw symbol names, valid UTF-8 with no control characters).
 *
 * A struct symindex_build collects functions (symindex_build__add()) and is then sealed
 * (symindex_build__seal()): sorted, one function per address (binding GLOBAL, then WEAK, then
 * the others; then a sized one; then the longest; then the smaller name), unsized functions
 * ended at the next function (at most their given size), and a function overlapping the next
 * ended where the next one starts (the rest of an outer function after a nested one goes
 * unnamed). symindex__encode() writes a sealed build to bytes; symindex__decode() checks
 * every byte of such a buffer before anything is looked up in it.
 *
 * The encoding, little-endian, "SOSYMIX" then version byte 1:
 *   0  magic[8]   8 u32 flags (0)   12 u16 build id length (hex chars)   14 u16 file name length
 *   16 u16 uploaded-by length   18 u16 0   20 u32 0   24 s64 uploaded at (unix seconds)
 *   32 u64 function count   40 u64 string table length   48 build id, file name, uploaded-by
 *   (no NULs), zero-padded to a multiple of 8; then per function u64 start, u32 size,
 *   u32 name offset (16 bytes, starts increasing, ranges disjoint); then the string table,
 *   names NUL-terminated, each at most SYMINDEX_NAME_MAX bytes.
 * Objects are not thread-safe while being built; a decoded symindex is immutable: lookups from
 * many threads are safe.
 */
#ifndef SLIDEOPS_SYMBOLS_SYMINDEX_H
#define SLIDEOPS_SYMBOLS_SYMINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a name; a longer one is cut on a character and ends in "...". */
#define SYMINDEX_NAME_MAX 1024
#define SYMINDEX_FILE_NAME_MAX 255
#define SYMINDEX_BY_MAX 127
/* Hex characters of a build id (64 bytes). */
#define SYMINDEX_BUILD_ID_MAX 128
/* The longest header: peeking at this many bytes reads all of it. */
#define SYMINDEX_HEADER_MAX 1024
/* Largest encoding accepted or produced. */
#define SYMINDEX_MAX_BYTES (512u << 20)
/* Default count of functions a build holds at most. */
#define SYMINDEX_DEFAULT_MAX_FUNCTIONS 4000000u

/* Flags of symindex_build__add(). */
#define SYMINDEX_GLOBAL 1u
#define SYMINDEX_WEAK 2u
#define SYMINDEX_UNSIZED 4u /* @size is only an upper bound: ends at the next function */

struct symindex_build;
struct symindex;

/* True for a build id as stored: lowercase hex, even length, 2..SYMINDEX_BUILD_ID_MAX chars. */
bool symindex_valid_build_id(const char *s);

/*
 * A new, empty build of @build_id (checked with symindex_valid_build_id()) holding at most
 * @max_functions functions (0: SYMINDEX_DEFAULT_MAX_FUNCTIONS). Returns 0, -EINVAL, -ENOMEM.
 */
int symindex_build__new(const char *build_id, size_t max_functions, struct symindex_build **out);
/* Accepts NULL. */
void symindex_build__free(struct symindex_build *b);

/*
 * Adds the function @name (the @name_len bytes at @name, NUL-terminated or not) at @start:
 * its name is copied, made valid UTF-8 (base/text.h's rule) and cut to SYMINDEX_NAME_MAX bytes.
 * @size 0 counts as 1; a range past the end of the address space is cut there. Unseals @b.
 * Returns 0; -EINVAL for start 0 or UINT64_MAX (no byte fits there) or an empty name; -E2BIG
 * past max_functions or when the names would be over SYMINDEX_MAX_BYTES; -ENOMEM.
 */
int symindex_build__add(struct symindex_build *b, uint64_t start, uint64_t size, const char *name,
			size_t name_len, unsigned flags);

/* Sorts and resolves the functions as the header says (idempotent). Returns 0 or -ENOMEM. */
int symindex_build__seal(struct symindex_build *b);

/* The build id (borrowed, lives as long as @b). */
const char *symindex_build__build_id(const struct symindex_build *b);
/* Functions held: after symindex_build__seal(), the ones an encoding names. */
size_t symindex_build__count(const struct symindex_build *b);
bool symindex_build__sealed(const struct symindex_build *b);

/* What an index says of its upload; strings are cut on a character and made valid UTF-8. */
struct symindex_meta {
	const char *file_name;	 /* NULL: "" */
	const char *uploaded_by; /* NULL: "" */
	int64_t uploaded_at;	 /* unix seconds */
};

/*
 * Encodes sealed @b with @meta (may be NULL) into a new buffer (*@out, *@len) the caller frees.
 * Returns 0; -EINVAL when @b is not sealed; -E2BIG over SYMINDEX_MAX_BYTES; -ENOMEM.
 */
int symindex__encode(const struct symindex_build *b, const struct symindex_meta *meta, void **out,
		     size_t *len);

/* An index's header, as symindex_peek() reads it. */
struct symindex_info {
	char build_id[SYMINDEX_BUILD_ID_MAX + 1];
	char file_name[SYMINDEX_FILE_NAME_MAX + 1];
	char uploaded_by[SYMINDEX_BY_MAX + 1];
	int64_t uploaded_at;
	uint64_t functions;
};

/*
 * Reads and checks the header of an index whose first @len bytes are at @data and whose whole
 * encoding is @total bytes long (the lengths must add up to it); the functions and names are
 * not read, so this needs only the first SYMINDEX_HEADER_MAX bytes. Returns 0, or -EBADMSG for any corruption.
 */
int symindex_peek(const void *data, size_t len, uint64_t total, struct symindex_info *out);

/*
 * Checks every byte of the @len-byte encoding at @data (magic, version, lengths, order and
 * disjointness of the ranges, name offsets at the start of a NUL-terminated name in the string
 * table, valid UTF-8, the build id) and returns 0 and a new index the caller frees (it holds
 * its own copy of @data), -EBADMSG for any corruption, -EFBIG over SYMINDEX_MAX_BYTES, -ENOMEM.
 */
int symindex__decode(const void *data, size_t len, struct symindex **out);
/* Accepts NULL. */
void symindex__free(struct symindex *ix);

/*
 * The name of the function holding @addr (the range with the largest start <= @addr, if @addr
 * is below its end), or NULL. Borrowed: lives as long as @ix. O(log n).
 */
const char *symindex__lookup(const struct symindex *ix, uint64_t addr);

const char *symindex__build_id(const struct symindex *ix);
size_t symindex__count(const struct symindex *ix);
const char *symindex__file_name(const struct symindex *ix);
const char *symindex__uploaded_by(const struct symindex *ix);
int64_t symindex__uploaded_at(const struct symindex *ix);
/* Heap bytes @ix holds (for a cache's budget). */
size_t symindex__mem(const struct symindex *ix);

#endif
