/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwarf_lines: file:line and inlined frames of native code from DWARF (.debug_info and
 * .debug_line, through libdw), for one ELF file: the binary itself, or its debug file
 * (debugfile.h).
 *
 * The file is untrusted. Before libelf sees it, the section count is checked with elf_file;
 * then the .debug* sections are sized (SHF_COMPRESSED and .zdebug ones by what they inflate
 * to), each and together at most max_bytes and backed by data (not a sparse file's claim),
 * and read with pread (ELF_C_READ: a file truncated under us is an error, not a SIGBUS).
 * The fd is then detached from libelf before libdw sees the file, so that libdw knows no
 * directory to look for other files in; files that would make it open one by a path taken
 * from the DWARF (a dwz alt file, .gnu_debugaltlink) are refused, and split-DWARF skeleton
 * units (whose .dwo file it would open) are skipped. Nothing here opens a file. A file whose
 * .debug_str or .debug_line_str does not end in NUL is refused (libdw would read past it).
 *
 * An index of the compile units' address ranges is built at load. A lookup walks the DIEs of
 * the one unit holding the pc (bounded: DWARF_LINES_MAX_NEST levels, DWARF_LINES_MAX_VISIT
 * DIEs), from the subprogram down through the DW_TAG_inlined_subroutine instances holding
 * it; its results are kept in a direct-mapped cache of DWARF_LINES_CACHE pcs.
 * Names are the linkage name demangled (symbols/demangle.h: C++, Rust), else DW_AT_name, through
 * DW_AT_abstract_origin / DW_AT_specification; DWARF_LINES_NAMES demangled names are kept (half
 * that many filled at most, DWARF_LINES_NAME_BYTES bytes in all), the short name after that.
 * Addresses are ELF virtual addresses. Not thread-safe (the cache, and libdw's own).
 */
#ifndef SLIDEOPS_DWARF_LINES_H
#define SLIDEOPS_DWARF_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* .debug* bytes read (once inflated) at most by default: more gives -E2BIG. */
#define DWARF_LINES_MAX_BYTES_DEFAULT (256ull << 20)
#define DWARF_LINES_MAX_FILE_DEFAULT (2ull << 30)
/* Frames of one pc: the function and up to 15 levels of inlining into it. */
#define DWARF_LINES_MAX_DEPTH 16
/* DIE nesting followed, and DIEs visited, by one lookup. */
#define DWARF_LINES_MAX_NEST 64
#define DWARF_LINES_MAX_VISIT (1u << 20)
/* Address ranges of compile units indexed at most. */
#define DWARF_LINES_MAX_RANGES (1u << 22)
/* Lookups remembered (direct-mapped by pc). */
#define DWARF_LINES_CACHE 1024
/* Slots for demangled names (a power of two), and the bytes they hold at most. */
#define DWARF_LINES_NAMES 8192
#define DWARF_LINES_NAME_BYTES (4u << 20)

struct dwarf_lines_opts {
	uint64_t max_bytes;	/* default DWARF_LINES_MAX_BYTES_DEFAULT */
	uint64_t max_file_size; /* larger files give -EFBIG; default 2 GiB */
};

struct dwarf_frame {
	const char *name; /* function, or NULL; borrowed, lives as long as the object */
	const char *file; /* source file, or NULL; borrowed */
	uint32_t line;	  /* 0 if unknown */
	bool inlined;	  /* inlined into the next frame */
};

struct dwarf_lines;

/*
 * Whether the ELF on @fd has DWARF to read (a .debug_info or .zdebug_info section with data):
 * a few bounded reads of its headers. Returns 1, 0, or -errno of elf_file__open().
 */
int dwarf_lines_probe(int fd);

/*
 * Loads the DWARF of the ELF on @fd (borrowed: not needed after return). Returns 0 and an
 * object the caller frees with dwarf_lines__free(); -ENOENT (no .debug_info), -E2BIG (over
 * max_bytes, more than 65536 sections, more than DWARF_LINES_MAX_RANGES ranges, or a sparse
 * file's claim), -EFBIG, -EOPNOTSUPP (a dwz alt file is needed), -EINVAL (not an ELF, or
 * malformed DWARF), -ENOMEM, -errno.
 */
int dwarf_lines__from_fd(int fd, const struct dwarf_lines_opts *opts, struct dwarf_lines **out);

/* Same over the in-memory image @buf, which must outlive the object (fuzzing, tests). */
int dwarf_lines__from_memory(const void *buf, size_t len, const struct dwarf_lines_opts *opts,
			     struct dwarf_lines **out);

/* Accepts NULL. */
void dwarf_lines__free(struct dwarf_lines *dl);

/*
 * The frames at @pc (a return address minus one for callers), innermost first, into @out
 * (@max of them): out[n - 1] is the function holding @pc (its DW_TAG_subprogram), each
 * earlier one inlined into the next at the file:line the next one shows; the first has the
 * line-table row of @pc. When the inlining is deeper than @max allows, the outermost inlined
 * frames are dropped. Returns n >= 1; -ENOENT when no unit holds @pc (a unit without a
 * subprogram there gives one frame with a NULL name); -EINVAL for @max 0.
 */
int dwarf_lines__lookup(struct dwarf_lines *dl, uint64_t pc, struct dwarf_frame *out, size_t max);

/* The bytes held: the sections read, the index and the cache. */
uint64_t dwarf_lines__mem(const struct dwarf_lines *dl);

/* Compile-unit ranges indexed. */
size_t dwarf_lines__ranges(const struct dwarf_lines *dl);

#endif
