/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopclntab: function names, file:line and inlined frames of a Go binary from its pc-line
 * table (.gopclntab), which `go build -ldflags='-s -w'` keeps: it is what the Go runtime
 * itself uses for tracebacks.
 *
 * Layouts: Go 1.16/1.17 (magic 0xfffffffa), 1.18/1.19 (0xfffffff0, entry PCs as 32-bit
 * offsets from textStart) and 1.20 and later (0xfffffff1, _func.startLine and the 16-byte
 * inlinedCall). Go 1.2-1.15 (0xfffffffb) is refused with -EPROTONOSUPPORT. Where the header
 * has no textStart (Go 1.26 stopped writing it; a PIE's is relocated at run time), the text
 * address is runtime.firstmoduledata's, else the .text section's.
 *
 * The table is found by section name (.gopclntab, or .data.rel.ro.gopclntab in PIE builds);
 * without section headers, and with opts.scan, by scanning the read-only PT_LOAD segments
 * for a well-formed header (at most GOPCLNTAB_MAX_SCAN bytes). Everything is read through
 * elf_file (bounded pread()s); the table is kept in memory (its size: 0.5 MiB for a hello
 * world, ~15 MiB for kubectl), the inline trees are extracted at load into a compact array.
 *
 * Inlined frames come from FUNCDATA_InlTree + PCDATA_InlTreeIndex. The tree lives outside
 * the table, in go:func.* (1.18+: offsets from moduledata.gofunc, found by locating the
 * runtime's firstmoduledata in the data segments) or at absolute addresses (1.16/1.17). When
 * it cannot be found (PIE binaries, whose data pointers are relocated at run time), lookups
 * still work but return only the physical function, with the innermost file:line.
 *
 * Addresses are ELF virtual addresses (what `go tool objdump` shows). Functions of a text
 * split into several sections (textsectmap, huge ppc64/arm binaries) are not supported.
 * A gopclntab is immutable after load: concurrent lookups are safe.
 */
#ifndef SLIDEOPS_GOPCLNTAB_H
#define SLIDEOPS_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

/*
 * The table is read whole (it is walked at random): at most this much, which holds the table
 * of a 170 MB Go binary (a 16 MB one has 4.4 MB). Larger ones, and a table that a sparse
 * file claims beyond the data it has (elf_file__backed()), give -E2BIG and no symbols.
 */
#define GOPCLNTAB_MAX_READ (48u << 20)
/* Read-only data scanned for a header when there are no section headers. */
#define GOPCLNTAB_MAX_SCAN (256u << 20)
/* Frames of one pc: the physical function and up to 31 levels of inlining into it. */
#define GOPCLNTAB_MAX_DEPTH 32

struct elf_skip;

struct gopclntab_opts {
	bool scan; /* no .gopclntab section: scan the read-only segments for the header */
	/* Non-NULL: receives why with -E2BIG and -EFBIG (elf_file.h; untouched otherwise). */
	struct elf_skip *skip;
};

struct gopclntab;

struct go_frame {
	const char *name; /* function name as Go prints it; borrowed from the table */
	const char *file; /* source file as recorded at build time, or NULL; borrowed */
	uint32_t line;	  /* 0 if unknown */
	bool inlined;	  /* inlined into the next frame */
};

/*
 * Loads the table of the ELF open on @fd (borrowed, not needed after return) or of @ef.
 * Returns 0 and an object the caller frees with gopclntab__free(); -ENOENT (no table: not a
 * Go binary, or a Go binary without section headers and !opts.scan), -EPROTONOSUPPORT (a
 * table older than Go 1.16), -EINVAL (a malformed table or ELF), -E2BIG (a table larger
 * than GOPCLNTAB_MAX_READ or than the sparse file holds), -ENOMEM, -errno of the reads.
 */
int gopclntab__from_fd(int fd, const struct gopclntab_opts *opts, struct gopclntab **out);
int gopclntab__from_elf(const struct elf_file *ef, const struct gopclntab_opts *opts,
			struct gopclntab **out);

/* Accepts NULL. */
void gopclntab__free(struct gopclntab *t);

/*
 * Names virtual address @pc (a return address minus one for caller frames, as the Go runtime
 * does). Writes up to @max frames, innermost first: frames[n - 1] is always the function
 * holding @pc, with the file:line in it (of the call site of the inlined code, if any); when
 * the inlining is deeper than @max allows, the outermost inlined frames are dropped.
 * Returns n >= 1, -ENOENT if no function holds @pc, -EINVAL for a malformed entry (or @max 0).
 * The strings are borrowed and live as long as @t.
 */
int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct go_frame *frames, size_t max);

/* 116, 118 or 120: the layout (Go 1.16/1.17, 1.18/1.19, 1.20+). */
unsigned gopclntab__version(const struct gopclntab *t);
/* Functions in the table. */
size_t gopclntab__nfunc(const struct gopclntab *t);
/* Whether the inline trees were found (lookups can return inlined frames). */
bool gopclntab__has_inline(const struct gopclntab *t);
/* Virtual address of the first function and end of the last one. */
void gopclntab__text_range(const struct gopclntab *t, uint64_t *start, uint64_t *end);

#endif
