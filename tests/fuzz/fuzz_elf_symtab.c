// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the ELF reader: elf_file directly (headers, sections, notes, reads of
 * ranges taken from the input) and elf_symtab, each over the in-memory image and over a memfd
 * (the pread path the symbolizer uses), then lookups on what loaded, and the symbol, note and
 * address lookups of runtime detection.
 * Sparse-file mode: an input whose last byte has its top bit set is extended on the memfd with a
 * hole of (last byte & 0x3f) * 32 MiB (ftruncate), so offsets and sizes the headers claim far
 * past the data exist and read as zeros, as in a hostile sparse executable; run it with
 * -rss_limit_mb and -malloc_limit_mb to catch allocations driven by the claims. What a limit
 * kept from being read (struct elf_skip) is formatted for the note and checked valid UTF-8.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "base/text.h"
#include "symbols/elf_file.h"
#include "symbols/elf_symtab.h"

static uint64_t word_at(const uint8_t *data, size_t size, size_t i)
{
	uint64_t v = 0;

	if (size >= 8)
		memcpy(&v, data + (i * 8) % (size - 7), 8);
	return v;
}

static void exercise_file(const struct elf_file *ef, const uint8_t *data, size_t size)
{
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	struct elf_note note;
	uint64_t len, off;
	size_t i, noff;
	Elf64_Sym sym;
	uint8_t *buf;
	void *p;

	(void)elf_file__ehdr(ef);
	(void)elf_file__section(ef, ".text", NULL);
	(void)elf_file__section_by_type(ef, SHT_DYNSYM, NULL);
	for (i = 0; (sh = elf_file__shdr(ef, i)) && i < 64; i++) {
		(void)strlen(elf_file__section_name(ef, i));
		if (elf_file__read_section(ef, i, 1 << 16, &p, &len))
			continue;
		buf = p;
		if (sh->sh_type == SHT_NOTE)
			for (noff = 0; elf_file__next_note(ef, buf, len, sh->sh_addralign, &noff,
							   &note) > 0;)
				(void)(note.name[0] + (note.descsz ? note.desc[0] : 0));
		if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM)
			for (off = 0; off + elf_file__sym_size(ef) <= len;
			     off += elf_file__sym_size(ef))
				elf_file__sym(ef, buf + off, &sym);
		free(p);
	}
	for (i = 0; (ph = elf_file__phdr(ef, i)); i++) {
		if (ph->p_type != PT_NOTE || elf_file__read(ef, ph->p_offset, ph->p_filesz, &p))
			continue;
		for (noff = 0; elf_file__next_note(ef, p, ph->p_filesz, ph->p_align, &noff,
						   &note) > 0;)
			(void)note.type;
		free(p);
	}
	/* Ranges from the input itself: offsets anywhere, lengths kept small. */
	for (i = 0; i < 4; i++) {
		off = word_at(data, size, 2 * i);
		len = word_at(data, size, 2 * i + 1);
		if (!elf_file__read(ef, off % (size + 16), len % 4096, &p))
			free(p);
		if (!elf_file__read(ef, off, len, &p))
			free(p);
	}
}

/* The reason is valid UTF-8 and fits; a short buffer cuts it on a character. */
static void check_skip(const struct elf_skip *skip)
{
	char buf[192], small[7];
	size_t n = elf_skip_format(skip, buf, sizeof(buf));

	if (n >= sizeof(buf) || strlen(buf) != n || !text_utf8_is_valid(buf, n))
		abort();
	n = elf_skip_format(skip, small, sizeof(small));
	if (n >= sizeof(small) || !text_utf8_is_valid(small, n))
		abort();
	if ((skip->kind == ELF_SKIP_NONE) != (buf[0] == '\0'))
		abort();
}

static int count_sym(void *ctx, const char *name, const Elf64_Sym *sym)
{
	size_t *n = ctx;

	(void)strlen(name);
	(void)sym;
	return ++*n > 4096;	/* enough: stop the walk */
}

/* The lookups runtime detection makes: by GNU hash, by walking, notes, virtual addresses. */
static void exercise_lookups(const struct elf_file *ef, const uint8_t *data, size_t size)
{
	static const char *const names[] = { "Py_Version", "_PyRuntime", "ruby_init", "main" };
	uint8_t buf[64];
	Elf64_Sym sym;
	size_t i, n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		(void)elf_file__gnu_hash_lookup(ef, names[i], &sym);
	(void)elf_file__foreach_sym(ef, SHT_DYNSYM, 1 << 20, count_sym, &n);
	(void)elf_file__foreach_sym(ef, SHT_SYMTAB, 1 << 20, count_sym, &n);
	(void)elf_file__find_note(ef, "Go", 4);
	(void)elf_file__find_note(ef, "GNU", NT_GNU_BUILD_ID);
	for (i = 0; i < 4; i++)
		(void)elf_file__read_vaddr(ef, word_at(data, size, 8 + i),
					   word_at(data, size, 12 + i) % (sizeof(buf) + 1), buf);
}

/* The size of the file the input makes: its own, or more with a hole (sparse-file mode). */
static uint64_t file_size(const uint8_t *data, size_t size)
{
	if (!size || !(data[size - 1] & 0x80))
		return size;
	return size + ((uint64_t)(data[size - 1] & 0x3f) << 25);
}

static void exercise(struct elf_symtab *st, const uint8_t *data, size_t size)
{
	uint64_t probe, vaddr, start;
	size_t i;

	(void)elf_symtab__build_id(st);
	(void)elf_symtab__go_build_id(st);
	(void)elf_symtab__stripped(st);
	(void)elf_symtab__type(st);
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		probe = *(const uint64_t *)(const void *)(data + i);
		if (!elf_symtab__file_to_vaddr(st, probe & 0xffff, &vaddr))
			(void)elf_symtab__lookup(st, vaddr, &start);
		(void)elf_symtab__lookup(st, probe, &start);
	}
	(void)elf_symtab__lookup(st, 0, NULL);
	(void)elf_symtab__lookup(st, UINT64_MAX, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -2;
	struct elf_symtab_opts opts = { .max_syms = 1u << 16 };
	struct elf_symtab *st = NULL;
	struct elf_file *ef = NULL;
	struct elf_skip skip;
	struct elf_ident id;

	if (fd == -2) {
		log_set_level(LOG_ERROR);
		fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	}
	if (!elf_file__open_memory(data, size, NULL, &ef)) {
		exercise_file(ef, data, size);
		exercise_lookups(ef, data, size);
		elf_file__free(ef);
	}
	if (!elf_symtab__from_memory(data, size, &opts, &st)) {
		exercise(st, data, size);
		elf_symtab__free(st);
	}
	if (fd >= 0 && !ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size &&
	    !ftruncate(fd, (off_t)file_size(data, size))) {
		if (!elf_file__open(fd, NULL, &ef)) {
			exercise_file(ef, data, size);
			exercise_lookups(ef, data, size);
			elf_file__free(ef);
		}
		(void)elf_read_ident(fd, &id);
		st = NULL;
		/* what a limit kept from being read, and its words for the note */
		memset(&skip, 0, sizeof(skip));
		opts.skip = &skip;
		if (!elf_symtab__from_fd(fd, &opts, &st)) {
			exercise(st, data, size);
			elf_symtab__free(st);
		}
		opts.skip = NULL;
		check_skip(&skip);
	}
	return 0;
}
