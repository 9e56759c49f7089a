// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the Go pc-line table reader. An input is either an ELF file (loaded
 * from memory with and without the segment scan, and through a memfd: the pread path the
 * symbolizer uses) or, when it starts with 'P', a bare table that is wrapped here into an
 * ELF as its .gopclntab, so the fuzzer mutates the table without having to keep an ELF intact.
 * Whatever loads is looked up at the ends of its text, at pcs spread over it, and at pcs taken
 * from the input.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "base/text.h"
#include "symbols/elf_file.h"
#include "symbols/gopclntab.h"
#include "tests/unit/elf_fixture.h"

#define WRAP_TAB 0x1000u
#define WRAP_VBASE 0x500000ull

static void exercise(const struct gopclntab *t, const uint8_t *data, size_t size)
{
	struct go_frame f[GOPCLNTAB_MAX_DEPTH];
	uint64_t start, end, pc;
	size_t i;
	int n, k;

	(void)gopclntab__version(t);
	(void)gopclntab__nfunc(t);
	(void)gopclntab__has_inline(t);
	gopclntab__text_range(t, &start, &end);
	for (i = 0; i <= 64; i++) {
		pc = start + (end > start ? (end - start) / 64 * i : i);
		n = gopclntab__lookup(t, pc, f, i % 2 ? 2 : GOPCLNTAB_MAX_DEPTH);
		for (k = 0; k < n; k++)
			(void)(strlen(f[k].name) + (f[k].file ? strlen(f[k].file) : 0) + f[k].line);
	}
	(void)gopclntab__lookup(t, end - 1, f, 1);
	(void)gopclntab__lookup(t, end, f, 1);
	for (i = 0; i + 8 <= size && i < 128; i += 8) {
		memcpy(&pc, data + i, 8);
		(void)gopclntab__lookup(t, pc, f, 4);
		(void)gopclntab__lookup(t, start + (pc & 0xffff), f, 4);
	}
}

static void load_elf(const uint8_t *img, size_t len, const uint8_t *data, size_t size)
{
	struct gopclntab_opts scan = { .scan = true };
	struct gopclntab *t = NULL;
	struct elf_file *ef;

	if (elf_file__open_memory(img, len, NULL, &ef))
		return;
	if (!gopclntab__from_elf(ef, NULL, &t)) {
		exercise(t, data, size);
		gopclntab__free(t);
	}
	t = NULL;
	if (!gopclntab__from_elf(ef, &scan, &t)) {
		exercise(t, data, size);
		gopclntab__free(t);
	}
	elf_file__free(ef);
}

/* A 64-bit little-endian ELF with @tab at 0x501000 in a read-only PT_LOAD, as .gopclntab. */
static uint8_t *wrap(const uint8_t *tab, size_t n, size_t *len)
{
	static const char shstr[] = "\0.gopclntab\0.shstrtab";
	size_t shoff = WRAP_TAB + n + sizeof(shstr), total = shoff + 3 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, total);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)(void *)img;
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R, .p_vaddr = WRAP_VBASE,
			  .p_filesz = WRAP_TAB + n, .p_memsz = WRAP_TAB + n };
	Elf64_Shdr sh[3] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
		  .sh_addr = WRAP_VBASE + WRAP_TAB, .sh_offset = WRAP_TAB, .sh_size = n },
		{ .sh_name = 12, .sh_type = SHT_STRTAB, .sh_offset = WRAP_TAB + n,
		  .sh_size = sizeof(shstr) },
	};

	if (!img)
		return NULL;
	fx_elf64_exec(eh, 1, shoff, 3, 2);
	memcpy(img + sizeof(*eh), &ph, sizeof(ph));
	memcpy(img + WRAP_TAB, tab, n);
	memcpy(img + WRAP_TAB + n, shstr, sizeof(shstr));
	memcpy(img + shoff, sh, sizeof(sh));
	*len = total;
	return img;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -2;
	struct elf_skip skip = { ELF_SKIP_NONE };
	struct gopclntab *t = NULL;
	char why[192];
	uint8_t *img;
	size_t len, n;

	if (fd == -2) {
		log_set_level(LOG_ERROR);
		fd = memfd_create("fuzz_gopclntab", MFD_CLOEXEC);
	}
	if (size && data[0] == 'P') {
		img = wrap(data + 1, size - 1, &len);
		if (img) {
			load_elf(img, len, data, size);
			free(img);
		}
		return 0;
	}
	load_elf(data, size, data, size);
	if (fd >= 0 && !ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size &&
	    !gopclntab__from_fd(fd, &(struct gopclntab_opts){ .scan = true, .skip = &skip }, &t)) {
		exercise(t, data, size);
		gopclntab__free(t);
	}
	/* a refusal is said in valid UTF-8 (the note of files not read for names) */
	n = elf_skip_format(&skip, why, sizeof(why));
	if (n >= sizeof(why) || !text_utf8_is_valid(why, n))
		abort();
	return 0;
}
