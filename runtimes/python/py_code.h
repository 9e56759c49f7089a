/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_code: names a CPython code object from outside the process, through a memory-read
 * callback: its qualified name (co_qualname 3.11+, else co_name), file, first line and line
 * table, every size bounded; and a bounded cache of them keyed by (tgid, code address).
 *
 * A code object is only believed when its ob_type is the process's PyCode_Type: a code object
 * freed (and its memory reused) between the sample and the read gives -ESTALE, which callers
 * count, never another object's name. Strings: compact ASCII, Latin-1, UCS-2 and UCS-4 are
 * turned into valid UTF-8 of at most PY_CODE_NAME_MAX bytes (cut at a character boundary);
 * anything else (a legacy string, a lone surrogate, a NUL) becomes PY_CODE_PLACEHOLDER.
 *
 * Not thread-safe (a cache belongs to one thread); the pure functions are.
 */
#ifndef SLIDEOPS_PY_CODE_H
#define SLIDEOPS_PY_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#include "runtimes/python/py_offsets.h"

#define PY_CODE_NAME_MAX 256
#define PY_CODE_TABLE_MAX (64u * 1024)
#define PY_CODE_PLACEHOLDER "<unreadable>"
#define PY_CODE_CACHE_DEFAULT 4096

/* Reads @n bytes at @addr of the target into @buf. Returns 0 or -errno (-EFAULT: unmapped,
 * -ESRCH: the process is gone). A short read is an error. */
typedef int (*py_read_fn_t)(void *ctx, uint64_t addr, void *buf, size_t n);

/* The real reader: process_vm_readv() of the process whose tgid is *(pid_t *)@ctx. */
int py_read_process(void *ctx, uint64_t addr, void *buf, size_t n);

struct py_code_info {
	char name[PY_CODE_NAME_MAX + 1]; /* qualname or name; valid UTF-8 */
	char file[PY_CODE_NAME_MAX + 1];
	int firstlineno;
	uint8_t *linetable; /* owned; NULL when unreadable or over PY_CODE_TABLE_MAX */
	size_t linetable_len;
};

/*
 * Reads the code object at @addr of a process whose PyCode_Type is at @code_type. Returns 0 and
 * fills @out (free its table with py_code_info_clear()); -ESTALE (not a code object: freed or
 * reused), -EINVAL (@addr 0), -ENOMEM, or the reader's -errno for the object's header.
 * Unreadable strings become the placeholder, an unreadable table leaves lines unknown.
 */
int py_code_read(const struct py_offsets *o, uint64_t code_type, py_read_fn_t read, void *ctx,
		 uint64_t addr, struct py_code_info *out);

/* Frees @ci's table and zeroes it; accepts NULL. */
void py_code_info_clear(struct py_code_info *ci);

/*
 * The source line of a frame of code object @ci (at @code_addr) whose instruction is @instr
 * as the BPF walk records it (f_lasti for PY_FRAMES_OBJECT, the instruction pointer for
 * PY_FRAMES_INTERP). Returns 0 and @line, -ENOENT (no table, or no line for it), -ERANGE
 * (the instruction is outside the code), -EINVAL.
 */
int py_code_line(const struct py_offsets *o, const struct py_code_info *ci, uint64_t code_addr,
		 uint64_t instr, int *line);

struct py_code_cache_opts {
	size_t max_entries; /* default PY_CODE_CACHE_DEFAULT */
};

struct py_code_cache_stats {
	uint64_t hits, misses;
	uint64_t stale;	 /* not (or no longer) a code object: counted, never named */
	uint64_t reused; /* a cached address now holds another code object: re-read */
	uint64_t errors; /* unreadable headers */
	uint64_t evictions;
};

struct py_code_cache;

/* Returns 0 and a cache the caller frees with py_code_cache__free(), or -ENOMEM. */
int py_code_cache__new(const struct py_code_cache_opts *opts, struct py_code_cache **out);
/* Accepts NULL. */
void py_code_cache__free(struct py_code_cache *c);

/*
 * The code object at @addr of process @tgid, from the cache when its header still matches
 * (one small read), else read again. Returns 0 and a borrowed pointer valid until the next
 * lookup, or py_code_read()'s errors (-ESTALE counted in the stats).
 */
int py_code_cache__lookup(struct py_code_cache *c, uint32_t tgid, const struct py_offsets *o,
			  uint64_t code_type, py_read_fn_t read, void *ctx, uint64_t addr,
			  const struct py_code_info **out);

/* Drops every entry of @tgid (the process exited). */
void py_code_cache__forget(struct py_code_cache *c, uint32_t tgid);

void py_code_cache__stats(const struct py_code_cache *c, struct py_code_cache_stats *out);

#endif
