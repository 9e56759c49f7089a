/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind_table: the compact x86-64 unwind table of one ELF file, built from its DWARF CFI
 * (.eh_frame, or .debug_frame when the file has no .eh_frame) with libdw, for an unwinder that
 * walks user stacks in BPF (docs/unwinding.md).
 *
 * A table is a sorted array of struct unwind_row. A row holds from its pc up to the next row's
 * pc; a pc below the first row, or in a row of type UNWIND_CFA_NONE, has no CFI (unwind it with
 * the frame pointer). pcs are ELF virtual addresses, like symbols/elf_symtab.h's: subtract the
 * mapping's load bias (map start - (p_vaddr - p_offset) of its segment) from a runtime pc first.
 * Adjacent rows that unwind alike are merged. Every row assumes the x86-64 return address at
 * CFA - 8; a row where the CFI says otherwise is UNWIND_CFA_UNSUPPORTED.
 *
 * struct unwind_row is meant to be copied as is into BPF maps: fixed-size types only, no holes.
 * An unwind_table is immutable once built; lookups from several threads need no lock.
 */
#ifndef SLIDEOPS_UNWIND_TABLE_H
#define SLIDEOPS_UNWIND_TABLE_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#define UNWIND_TABLE_MAX_ROWS_DEFAULT (4u << 20)
#define UNWIND_TABLE_MAX_FILE_DEFAULT (2ull << 30)

/* How the CFA (the caller's rsp after the return) of a row is found; cfa_type. */
#define UNWIND_CFA_NONE 0 /* no CFI covers this pc: use the frame pointer (rbp) chain */
#define UNWIND_CFA_RSP 1  /* CFA = rsp + cfa_offset */
#define UNWIND_CFA_RBP 2  /* CFA = rbp + cfa_offset */
/*
 * A PLT entry (the linker's DW_CFA_def_cfa_expression for .plt): CFA = rsp + 8, plus 8 more when
 * (rip & 15) >= cfa_offset (11 for the classic 16-byte entries, 10 with IBT), i.e. once the
 * entry's `push` has run.
 */
#define UNWIND_CFA_PLT 3
/*
 * A signal trampoline (__restore_rt; its CIE has the 'S' augmentation): rsp + cfa_offset is the
 * interrupted context's register block (struct sigcontext, x86-64 layout): rbp at +80, rsp at
 * +120, rip at +128. The caller's rip is exact, not a return address.
 */
#define UNWIND_CFA_SIGNAL 4
/* The return address is undefined (_start, clone): the outermost frame, the stack is complete. */
#define UNWIND_CFA_END 5
/* CFI the in-kernel unwinder does not follow (other expressions, registers, RA rules). */
#define UNWIND_CFA_UNSUPPORTED 6

/* Where the caller's rbp is; rbp_type. */
#define UNWIND_RBP_SAME 0      /* unchanged by this frame (same value or not described) */
#define UNWIND_RBP_OFFSET 1    /* saved at CFA + rbp_offset */
#define UNWIND_RBP_UNDEFINED 2 /* lost (undefined, or a rule we do not follow) */

/* 12 bytes. pc fits in 32 bits: files whose code lies above 4 GiB are refused (-ERANGE). */
struct unwind_row {
	__u32 pc;	  /* first ELF vaddr the row covers */
	__s32 cfa_offset; /* see UNWIND_CFA_* */
	__s16 rbp_offset; /* UNWIND_RBP_OFFSET: offset from the CFA, e.g. -16 */
	__u8 cfa_type;	  /* UNWIND_CFA_* */
	__u8 rbp_type;	  /* UNWIND_RBP_* */
};

/* Where the rows came from; unwind_table__source(). */
#define UNWIND_SRC_NONE 0 /* no CFI at all (e.g. a Go binary): frame pointers only */
#define UNWIND_SRC_EH_FRAME 1
#define UNWIND_SRC_DEBUG_FRAME 2

struct unwind_table_opts {
	size_t max_rows;	/* rows kept at most; more gives -E2BIG; default 4 Mi (48 MiB) */
	uint64_t max_file_size; /* larger files give -EFBIG; default 2 GiB */
};

struct unwind_table_stats {
	size_t fdes;	    /* FDEs read */
	size_t rows_raw;    /* rows before merging */
	size_t unsupported; /* UNWIND_CFA_UNSUPPORTED rows kept */
	unsigned source;    /* UNWIND_SRC_* */
};

struct unwind_table;

/*
 * Builds the table of the ELF open on @fd (the fd stays the caller's; it is not needed after
 * return). Returns 0 and a new table the caller frees with unwind_table__free() (a file without
 * CFI gives an empty table and UNWIND_SRC_NONE); -EINVAL for a file that is not a well-formed
 * ELF or whose CFI is malformed; -EFBIG; -E2BIG (more than max_rows rows, or headers that
 * claim more sections or section bytes than libelf/libdw are allowed to allocate for: over
 * 65536 sections, 64 MiB of CFI, names and (for .debug_frame) .debug_* sections, or more than
 * a sparse file holds: checked with bounded reads before libelf opens the file); -ERANGE (code above
 * 4 GiB); -ENOMEM; -errno of fstat. Not thread-safe only in the sense that libelf's and libdw's
 * per-call state is private: concurrent builds on different fds are fine.
 */
int unwind_table__from_fd(int fd, const struct unwind_table_opts *opts, struct unwind_table **out);

/* Accepts NULL. */
void unwind_table__free(struct unwind_table *t);

/* The rows, sorted by pc, and their count in @n; borrowed, live as long as @t. */
const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *n);

/* What the build saw. */
void unwind_table__stats(const struct unwind_table *t, struct unwind_table_stats *st);

/*
 * The row covering ELF vaddr @pc (the reference for the BPF binary search), or NULL when @pc is
 * below the first row. Borrowed.
 */
const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t pc);

/* A short name for a cfa_type ("rsp", "rbp", "plt", ...), for logs and tests. */
const char *unwind_cfa_type_str(unsigned cfa_type);

#endif
