/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elf_file: bounded access to one ELF file through pread() (never mmap: a hostile process
 * can truncate its binary under us, and a mapped page past the new end is a SIGBUS), or to an
 * in-memory image. Opening reads the ELF header, the program headers, the section headers and
 * the section-name table, nothing else; callers then read just the ranges they need with
 * elf_file__read() / elf_file__read_into().
 *
 * ELF32 and ELF64, little and big endian. Headers are returned in a host-endian Elf64 form
 * whatever the file's class. Sizes in the file are never trusted: every range is checked
 * against the file size seen at open and the caps below.
 *
 * Malformed ELF or program headers fail the open (-EINVAL). A malformed section header table
 * (outside the file, wrong entry size, more than ELF_FILE_MAX_SECTIONS) is treated like a
 * missing one, as the kernel loader and sstrip'd files do: the segments still map and name the
 * file. elf_file__shdrs_ignored() tells the two cases apart. A bad section-name table leaves
 * every section nameless.
 *
 * An elf_file is immutable after open: concurrent calls on one object are safe.
 */
#ifndef SLIDEOPS_ELF_FILE_H
#define SLIDEOPS_ELF_FILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_FILE_MAX_FILE_DEFAULT (2ull << 30)
/* Largest single read (a string or symbol table, .gopclntab): more gives -E2BIG. */
#define ELF_FILE_MAX_READ (256u << 20)
/* 64-byte headers: at most 8 MiB of section headers. */
#define ELF_FILE_MAX_SECTIONS (1u << 17)
#define ELF_FILE_MAX_SEGMENTS 4096u
/* The section-name table is read at open; larger ones leave sections nameless. */
#define ELF_FILE_MAX_SHSTRTAB (4u << 20)

/*
 * A sparse file can claim gigabytes of sections that are holes on disk (a 2 MB executable
 * that still runs). A read that allocates more than ELF_FILE_SPARSE_SLACK must be backed by
 * data: at most ELF_FILE_SPARSE_RATIO times the bytes the file has on disk (st_blocks; the
 * ratio leaves room for filesystems that compress, which report fewer blocks).
 */
#define ELF_FILE_SPARSE_SLACK (1u << 20)
#define ELF_FILE_SPARSE_RATIO 4u

/*
 * What a limit kept from being read, for the capture's notes ("2 files were not read for
 * names"): the first claim a reader refused. The readers that take one (elf_file__open,
 * elf_symtab, gopclntab) record the first refusal and leave a record already set alone.
 */
enum elf_skip_kind {
	ELF_SKIP_NONE,
	ELF_SKIP_OVER_LIMIT, /* @what claims @claimed bytes, over the @limit bytes read */
	ELF_SKIP_SPARSE,     /* @what claims @claimed bytes, the file has @limit on disk */
	ELF_SKIP_COUNT,	     /* @what holds @claimed symbols, over the @limit kept */
	ELF_SKIP_FILE,	     /* the file is @claimed bytes, over the @limit */
};

struct elf_skip {
	enum elf_skip_kind kind;
	char what[24]; /* a section name as the file spells it, made valid UTF-8 */
	uint64_t claimed, limit;
};

/* Records a refusal into @skip (NULL: nothing) unless it holds one already. */
void elf_skip_set(struct elf_skip *skip, enum elf_skip_kind kind, const char *what,
		  uint64_t claimed, uint64_t limit);

/*
 * The reason in words, valid UTF-8, into @buf (@size bytes, cut at a character boundary):
 * ".symtab claims 1 GiB, but the file has 20 KiB on disk", ".gopclntab claims 200 MiB, over
 * the 48 MiB limit", ".symtab holds 5000000 symbols, over the limit of 4194304", "the file
 * is 3 GiB, over the 2 GiB limit"; "" for ELF_SKIP_NONE. Returns the length written.
 */
size_t elf_skip_format(const struct elf_skip *skip, char *buf, size_t size);

struct elf_file_opts {
	uint64_t max_file_size; /* larger files give -EFBIG; default 2 GiB */
	struct elf_skip *skip;	/* non-NULL: receives ELF_SKIP_FILE with that -EFBIG */
};

struct elf_file;

/*
 * Opens the ELF on @fd, a regular file. The fd is borrowed: it is not closed, and must stay
 * open for as long as the object is used. Returns 0 and an object the caller frees with
 * elf_file__free(); -EINVAL (not a regular file, not a well-formed ELF), -EFBIG, -ENOMEM,
 * -EIO (the file shrank while being read), -errno of fstat/pread.
 */
int elf_file__open(int fd, const struct elf_file_opts *opts, struct elf_file **out);

/* Same over @len bytes at @buf, which are borrowed (not copied) and must outlive the object. */
int elf_file__open_memory(const void *buf, size_t len, const struct elf_file_opts *opts,
			  struct elf_file **out);

/* Accepts NULL. Does not close the fd. */
void elf_file__free(struct elf_file *ef);

/* The ELF header, host-endian (ELF32 fields widened); e_ident is the file's. Borrowed. */
const Elf64_Ehdr *elf_file__ehdr(const struct elf_file *ef);
/* ELFCLASS32 or ELFCLASS64. */
unsigned elf_file__class(const struct elf_file *ef);
/* File size seen at open. */
uint64_t elf_file__size(const struct elf_file *ef);
/* Bytes the file has on disk (st_blocks * 512) seen at open; the size for an image in memory. */
uint64_t elf_file__allocated(const struct elf_file *ef);

/*
 * Whether the file can hold @len bytes of data (the sparse-file rule above): true for an image
 * in memory, for @len <= ELF_FILE_SPARSE_SLACK and where st_blocks is 0 (not counted). Callers
 * check a claimed size with it before allocating for it; elf_file__read() does.
 */
bool elf_file__backed(const struct elf_file *ef, uint64_t len);

/* Program headers (PN_XNUM resolved through section 0). elf_file__phdr: NULL past the end. */
size_t elf_file__phnum(const struct elf_file *ef);
const Elf64_Phdr *elf_file__phdr(const struct elf_file *ef, size_t i);

/*
 * Section headers, SHN_XINDEX counts resolved (index 0 is the null section when present).
 * elf_file__shdr: NULL past the end. elf_file__section_name: "" for nameless sections, NULL
 * past the end; borrowed. elf_file__shdrs_ignored: the file has a section header table that
 * was malformed and is not used.
 */
size_t elf_file__shnum(const struct elf_file *ef);
const Elf64_Shdr *elf_file__shdr(const struct elf_file *ef, size_t i);
const char *elf_file__section_name(const struct elf_file *ef, size_t i);
bool elf_file__shdrs_ignored(const struct elf_file *ef);

/*
 * The first section named @name (elf_file__section) or of type @type
 * (elf_file__section_by_type). Returns its index (> 0), or -ENOENT. @sh (may be NULL)
 * receives its borrowed header.
 */
int elf_file__section(const struct elf_file *ef, const char *name, const Elf64_Shdr **sh);
int elf_file__section_by_type(const struct elf_file *ef, uint32_t type, const Elf64_Shdr **sh);

/*
 * Reads [@off, @off + @len) into a new buffer of @len + 1 bytes, NUL-terminated (string tables
 * can be used as is), that the caller frees. elf_file__read_into reads into @buf instead.
 * Returns 0, -EINVAL (the range is not inside the file), -E2BIG (@len > ELF_FILE_MAX_READ, or
 * elf_file__read() of more than the sparse file holds: !elf_file__backed()),
 * -ENOMEM, -EIO (the file shrank), -errno of pread.
 */
int elf_file__read(const struct elf_file *ef, uint64_t off, uint64_t len, void **out);
int elf_file__read_into(const struct elf_file *ef, uint64_t off, uint64_t len, void *buf);

/*
 * Reads the contents of section @i: like elf_file__read() of its range, with its size in @len.
 * Returns -ENOENT past the end, -EINVAL for SHT_NOBITS or a range outside the file, -E2BIG for
 * one larger than @max (0: ELF_FILE_MAX_READ).
 */
int elf_file__read_section(const struct elf_file *ef, size_t i, uint64_t max, void **out,
			   uint64_t *len);

/*
 * Symbols: the size of one entry in the file (16 or 24 bytes), and the entry at @raw decoded
 * into host-endian Elf64 form.
 */
size_t elf_file__sym_size(const struct elf_file *ef);
void elf_file__sym(const struct elf_file *ef, const void *raw, Elf64_Sym *out);

/* The 32-bit word at @raw, in the file's byte order, as a host value (SHT_SYMTAB_SHNDX). */
uint32_t elf_file__word(const struct elf_file *ef, const void *raw);

struct elf_note {
	uint32_t type;
	uint32_t namesz, descsz; /* namesz counts the name's NUL */
	const char *name;	 /* inside the walked buffer */
	const uint8_t *desc;
};

/*
 * Walks the notes of @buf (@len bytes of a SHT_NOTE section or PT_NOTE segment whose
 * alignment is @align: 8 means 8-byte padded notes, anything else 4). Start with *@off = 0.
 * Returns 1 and the next note in @note (pointers into @buf), or 0 at the end or at the first
 * malformed note.
 */
int elf_file__next_note(const struct elf_file *ef, const void *buf, size_t len, uint64_t align,
			size_t *off, struct elf_note *note);

/* The largest PT_NOTE segment elf_file__find_note() reads; larger ones are skipped. */
#define ELF_FILE_MAX_NOTES (64u << 10)

/*
 * Looks for a note named @name (without its NUL) of type @type in the PT_NOTE segments (the
 * program headers: they survive sstrip; segments outside the file are skipped). Returns 0 when
 * there is one, -ENOENT, or the -errno of reading a segment.
 */
int elf_file__find_note(const struct elf_file *ef, const char *name, uint32_t type);

/*
 * Reads @len bytes at virtual address @addr into @buf from the file part of the PT_LOAD segment
 * that holds the whole range. Returns 0, -EFAULT when no segment does (or only in its bss),
 * -EINVAL when @buf is NULL, or the errors of elf_file__read_into().
 */
int elf_file__read_vaddr(const struct elf_file *ef, uint64_t addr, uint64_t len, void *buf);

/*
 * Looks the defined symbol @name up through the GNU hash table (SHT_GNU_HASH) of .dynsym: a
 * few small reads, not the whole table (Node.js exports 70000 symbols). Returns 0 and the
 * symbol in @sym; -ENOENT when it is not there; -EOPNOTSUPP when the file has no usable table
 * (none, a bad header, links to sections of the wrong type or entry size: callers then walk
 * the table with elf_file__foreach_sym()); the -errno of a read.
 */
int elf_file__gnu_hash_lookup(const struct elf_file *ef, const char *name, Elf64_Sym *sym);

/* Called per symbol; a non-zero return stops the walk and is returned. */
typedef int (*elf_file_sym_fn_t)(void *ctx, const char *name, const Elf64_Sym *sym);

/*
 * Calls @fn for every defined (st_shndx != SHN_UNDEF), named symbol of every section of type
 * @type (SHT_SYMTAB, SHT_DYNSYM), in file order. Tables whose entry size is not the class's,
 * whose string table link is not a SHT_STRTAB, or which (or whose string table) are larger
 * than @max bytes (0: ELF_FILE_MAX_READ) or lie outside the file are skipped. Returns 0,
 * @fn's non-zero value, -ENOMEM or the -errno of a read.
 */
int elf_file__foreach_sym(const struct elf_file *ef, uint32_t type, uint64_t max,
			  elf_file_sym_fn_t fn, void *ctx);

#endif
