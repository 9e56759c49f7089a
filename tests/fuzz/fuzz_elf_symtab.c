// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the ELF reader: the in-memory path (elf_memory) and the fd path
 * (ELF_C_READ, what the symbolizer uses) through a memfd, then lookups on what loaded.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/log.h"
#include "symbols/elf_symtab.h"

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
	struct elf_ident id;

	if (fd == -2) {
		log_set_level(LOG_ERROR);
		fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	}
	if (!elf_symtab__from_memory(data, size, &opts, &st)) {
		exercise(st, data, size);
		elf_symtab__free(st);
	}
	if (fd >= 0 && !ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size) {
		(void)elf_read_ident(fd, &id);
		st = NULL;
		if (!elf_symtab__from_fd(fd, &opts, &st)) {
			exercise(st, data, size);
			elf_symtab__free(st);
		}
	}
	return 0;
}
