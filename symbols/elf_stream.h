/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elf_stream: the function names and GNU build id of an uploaded ELF file (an unstripped
 * binary, or the debug file objcopy --only-keep-debug made of it), read from a stream of
 * chunks in one pass: the file is never held whole and never written anywhere.
 *
 * Memory is bounded by the options, whatever the file says: the first 64 KiB of the file, a ring
 * of its last max_tail bytes (grown as bytes pass, freed once both header tables are read), and
 * the "wanted" ranges: the program and section header tables, PT_NOTE and SHT_NOTE ranges of at
 * most 64 KiB (40 ranges in all), the SHT_SYMTAB section and its string table (each at most
 * max_section), each held only as far as it has arrived. A range that becomes wanted after it
 * passed (gcc/ld, lld and objcopy write .symtab and .strtab just before the section header table
 * at the end; Go writes the section headers first) comes from the first 64 KiB or the ring, or
 * the file is refused with -E2BIG. Every offset and size from the file is checked against the
 * file's length and the limits, without overflow.
 *
 * Functions: .symtab's STT_FUNC and STT_GNU_IFUNC symbols with a name, a non-zero value and an
 * executable section (SHN_XINDEX accepted; undefined, absolute and common skipped); .dynsym
 * alone does not count (a stripped binary still has one). Unsized ones extend to the next
 * function, the end of their section or SYMINDEX_UNSIZED_SPAN bytes, whichever comes first;
 * duplicates and overlaps are resolved by symindex_build__seal(). ELFCLASS32 and ELFCLASS64,
 * little-endian only. One struct elf_stream is not thread-safe; distinct ones are independent.
 */
#ifndef SLIDEOPS_SYMBOLS_ELF_STREAM_H
#define SLIDEOPS_SYMBOLS_ELF_STREAM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symindex.h"

#define ELF_STREAM_DEFAULT_MAX_BYTES (1ull << 30)
#define ELF_STREAM_DEFAULT_MAX_TAIL (64u << 20)
#define ELF_STREAM_DEFAULT_MAX_SECTION (64u << 20)
#define ELF_STREAM_DEFAULT_MAX_FUNCTIONS 4000000u
/* Longest range given to a function of size 0. */
#define SYMINDEX_UNSIZED_SPAN 4096u

/* The errno of "stripped": no .symtab, or one that names no function. Returned negated. */
#define ELF_STREAM_ESTRIPPED ENOKEY
/* The errno of a big-endian ELF file. Returned negated. */
#define ELF_STREAM_EBIGENDIAN EPROTONOSUPPORT

/* All zero: the defaults above. */
struct elf_stream_opts {
	uint64_t max_bytes;   /* the whole file */
	size_t max_tail;      /* bytes of the file's end kept in the ring; at least 4 KiB */
	size_t max_section;   /* one wanted section: symbol table, its strings, section headers */
	size_t max_functions; /* function symbols */
};

struct elf_stream;

/* Returns 0 and a new stream in @out the caller frees, -EINVAL or -ENOMEM. */
int elf_stream__new(const struct elf_stream_opts *opts, struct elf_stream **out);
/* Accepts NULL. */
void elf_stream__free(struct elf_stream *s);

/*
 * Feeds the next @len bytes of the file. Returns 0; -ENOEXEC as soon as the first bytes are no
 * ELF header (bad magic, class, or header table sizes: an HTTP handler can stop reading);
 * -ELF_STREAM_EBIGENDIAN; -EFBIG past max_bytes; -ENOMEM; -EINVAL (NULL @buf with @len);
 * -EALREADY after finish(). After an error, every later call returns the same error.
 */
int elf_stream__feed(struct elf_stream *s, const void *buf, size_t len);

/*
 * Ends the file and returns its sealed functions (a new build the caller frees). Errors, in
 * this order: -ENOEXEC (not an ELF binary or debug file: cut inside its headers or a header
 * table, a section past the end, a bad symbol table link or entry size); -ENODATA (no GNU build
 * id); -ELF_STREAM_ESTRIPPED; -E2BIG (the symbol table or its strings over max_section, more
 * than max_functions functions, or the symbol table passed before the section headers said
 * where it was and is further than max_tail from the end; a section header table over
 * max_section); the errors of feed; -EALREADY after a finish() that succeeded. After an error,
 * every later call returns the same error.
 */
int elf_stream__finish(struct elf_stream *s, struct symindex_build **out);

/* Bytes fed so far. */
uint64_t elf_stream__bytes(const struct elf_stream *s);

/*
 * The user-facing sentence for error @err of feed or finish (static; default limits stated).
 */
const char *elf_stream_refusal(int err);

/*
 * The same for the error @s returned, naming the cause and the limit as configured (borrowed,
 * lives as long as @s); "" when @s had no error.
 */
const char *elf_stream__reason(const struct elf_stream *s);

#endif
