/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfmap: the names a JIT runtime writes itself into /tmp/perf-<pid>.map, one line per code
 * region, "START SIZE name" (START and SIZE in hex, with or without "0x"; the name runs to the
 * end of the line and may hold spaces), appended as code is generated. <pid> is the process's
 * pid in its own pid namespace (the last NSpid field), /tmp its own (its mount namespace).
 *
 * The parser takes the text in pieces as it is appended (perfmap__feed()); a later line for an
 * overlapping range wins, as in perf. Lookups use a sorted, disjoint table rebuilt after a feed.
 * Bounded: lines over PERFMAP_MAX_LINE bytes are skipped, at most max_entries regions are kept,
 * names are made valid UTF-8 (base/text.h), numbers are checked (START + SIZE must not wrap).
 * The loader (perfmap__load()) opens the map of a tgid with base/safe_open inside the process's
 * root, refusing links out of it, FIFOs, devices and files over max_file_bytes, and reads only
 * what was appended since its last call (all again when the file shrank or was replaced).
 * One struct perfmap is not thread-safe; distinct ones are independent.
 */
#ifndef SLIDEOPS_SYMBOLS_PERFMAP_H
#define SLIDEOPS_SYMBOLS_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A line longer than this (its newline included) is skipped whole. */
#define PERFMAP_MAX_LINE 4096
#define PERFMAP_DEFAULT_MAX_ENTRIES (1u << 20)
#define PERFMAP_DEFAULT_MAX_FILE_BYTES (64ull << 20)

/* All zero: the defaults above, "/proc". */
struct perfmap_opts {
	size_t max_entries;	 /* regions kept; later lines are counted in dropped */
	uint64_t max_file_bytes; /* perfmap__load(): a larger file is refused (-EFBIG) */
	const char *proc_root;	 /* perfmap__load(): default "/proc" */
};

struct perfmap_stats {
	size_t entries;	     /* regions kept */
	uint64_t lines;	     /* lines parsed, good or bad */
	uint64_t bad;	     /* malformed lines (fields, numbers, zero size, wrap) */
	uint64_t long_lines; /* lines over PERFMAP_MAX_LINE */
	uint64_t dropped;    /* good lines past max_entries */
	uint64_t rereads;    /* perfmap__load() started over (file shrank or was replaced) */
	uint64_t bytes;	     /* file bytes consumed so far */
};

struct perfmap;

/* Returns 0 and a new, empty map in @out, or -ENOMEM / -EINVAL. The caller frees it. */
int perfmap__new(const struct perfmap_opts *opts, struct perfmap **out);
/* Accepts NULL. */
void perfmap__free(struct perfmap *m);

/* Forgets every region and the partial line (a file that starts over). */
void perfmap__reset(struct perfmap *m);

/*
 * Parses the @len bytes at @buf, which follow the bytes fed before. Only whole lines count: a
 * last line without its newline is kept (at most PERFMAP_MAX_LINE bytes) and completed by the
 * next feed, unless @eof says the text ends here. Malformed lines are counted and skipped.
 * Returns 0, or -ENOMEM (the lines before the failing one are kept).
 */
int perfmap__feed(struct perfmap *m, const char *buf, size_t len, bool eof);

/*
 * The name of the region holding @addr (valid UTF-8, never empty) and in @offset (may be NULL)
 * @addr minus its START, or NULL if no region holds it. Rebuilds the lookup table first when
 * lines were added (O(n log n)). The name is borrowed: valid until the next feed, reset, load
 * or free.
 */
const char *perfmap__lookup(struct perfmap *m, uint64_t addr, uint64_t *offset);

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *out);

/* Heap bytes the map holds now (for the caller's memory budget). */
size_t perfmap__mem(const struct perfmap *m);

/*
 * Reads the perf map of @tgid: /tmp/perf-<nspid>.map inside /proc/@tgid/root, through
 * base/safe_open. The first call reads the file, a later one only the bytes appended since
 * (the whole file again when it shrank or its inode changed). Returns 0; -ENOENT when there is
 * no map; -ESRCH when the process is gone; the refusals of safe_open (-ENOTSUP: not a regular
 * file, -EFBIG, -ELOOP, -EREMOTE, -EXDEV); -ENOMEM or another -errno. On error, what was read
 * before stays.
 */
int perfmap__load(struct perfmap *m, uint32_t tgid);

/*
 * The last NSpid field (the pid in the innermost namespace) of the text of a /proc/PID/status
 * file into @nspid; without an NSpid line (Linux < 4.1), the Pid line. Returns 0 or -EINVAL.
 */
int perfmap_parse_nspid(const char *status, uint32_t *nspid);

#endif
