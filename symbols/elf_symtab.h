/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elf_symtab: the function symbols, build id and load segments of one ELF file, read through
 * elf_file (bounded pread()s of just the headers, notes and symbol and string tables; sizes in
 * the file are never trusted). Memory kept is proportional to the functions kept: their
 * names are copied out of the string tables, which are never held whole.
 *
 * Symbols come from .symtab and .dynsym: STT_FUNC, STT_GNU_IFUNC and sized STT_NOTYPE in
 * executable sections, sorted by address, one per address. Addresses are ELF virtual addresses
 * (what addr2line and nm show); elf_symtab__file_to_vaddr() maps a file offset to one through
 * the PT_LOAD segment holding it, which makes PIE, non-PIE and shared objects alike.
 * An elf_symtab is immutable after load except for its lazily filled demangling cache: a
 * lookup writes it, so concurrent lookups on one object need a lock held by the caller.
 */
#ifndef SLIDEOPS_ELF_SYMTAB_H
#define SLIDEOPS_ELF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_SYMTAB_MAX_SYMS_DEFAULT (4u << 20)
#define ELF_SYMTAB_MAX_FILE_DEFAULT (2ull << 30)
/* Hex text of the longest build id accepted (64 bytes), with its NUL. */
#define ELF_BUILD_ID_HEX_MAX (2 * 64 + 1)

struct elf_skip;

struct elf_symtab_opts {
	size_t max_syms;	/* symbols kept at most; more gives -E2BIG; default 4 Mi */
	uint64_t max_file_size; /* larger files give -EFBIG; default 2 GiB */
	/*
	 * Non-NULL: receives the first symbol or string table a limit kept from being read
	 * (elf_file.h; ELF_SKIP_NONE when none was), whether the load then fails (-EFBIG,
	 * -E2BIG) or succeeds without that table (a sparse file's claim, a string table over
	 * ELF_FILE_MAX_READ). Set its kind to ELF_SKIP_NONE before the call.
	 */
	struct elf_skip *skip;
};

struct elf_symtab;

/*
 * Loads the ELF open on @fd (the fd stays open and owned by the caller; it is not needed after
 * return). Returns 0 and a new object the caller frees with elf_symtab__free(); -EINVAL for a
 * file that is not a well-formed ELF, -EFBIG, -E2BIG (too many symbols), -ENOMEM, -errno of fstat.
 */
int elf_symtab__from_fd(int fd, const struct elf_symtab_opts *opts, struct elf_symtab **out);

/* Same over an in-memory image (copied; @buf is not kept). */
int elf_symtab__from_memory(const void *buf, size_t len, const struct elf_symtab_opts *opts,
			    struct elf_symtab **out);

void elf_symtab__free(struct elf_symtab *st);

struct elf_ident {
	char build_id[ELF_BUILD_ID_HEX_MAX]; /* hex GNU build id, "" if none */
	bool has_symtab;		     /* a .symtab section is present */
};

/*
 * Reads only what identifies the ELF on @fd (its headers and notes, no symbols): enough to
 * find it in a cache before loading it. Returns 0, -EINVAL (not an ELF), -EFBIG, -errno.
 */
int elf_read_ident(int fd, struct elf_ident *out);

/* Hex GNU build id or NULL; borrowed, lives as long as @st. */
const char *elf_symtab__build_id(const struct elf_symtab *st);
/* Go's build id string (.note.go.buildid) or NULL; borrowed. */
const char *elf_symtab__go_build_id(const struct elf_symtab *st);
/* True if the file has no .symtab (names, if any, come from .dynsym). */
bool elf_symtab__stripped(const struct elf_symtab *st);
/* Number of function symbols kept. */
size_t elf_symtab__count(const struct elf_symtab *st);
/* e_type: ET_EXEC, ET_DYN, ... */
unsigned elf_symtab__type(const struct elf_symtab *st);

/*
 * Translates file offset @off into the virtual address of the PT_LOAD segment holding it
 * (p_vaddr - p_offset + off). Returns 0, or -ENOENT if no segment holds @off.
 */
int elf_symtab__file_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr);

/*
 * Names virtual address @vaddr: returns the function holding it (C++/Rust names demangled when
 * __cxa_demangle is linked in; names whose demangling could explode, or whose demangled form
 * is over 4 KiB, stay mangled, and the cache of demangled names holds 16 MiB at most) and its
 * start in @start (may be NULL), or NULL if none does.
 * The name is borrowed and lives as long as @st.
 */
const char *elf_symtab__lookup(struct elf_symtab *st, uint64_t vaddr, uint64_t *start);

#endif
