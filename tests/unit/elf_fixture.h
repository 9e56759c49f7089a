/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Synthetic ELF images for the unit and fuzz tests that build one in memory (gopclntab).
 * Header-only (static inline), libc only.
 */
#ifndef SLIDEOPS_TESTS_UNIT_ELF_FIXTURE_H
#define SLIDEOPS_TESTS_UNIT_ELF_FIXTURE_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

/*
 * Fills @eh as the header of a 64-bit little-endian x86-64 executable: @phnum program headers
 * right after it, @shnum section headers at @shoff, section @shstrndx holding their names.
 */
static inline void fx_elf64_exec(Elf64_Ehdr *eh, uint16_t phnum, uint64_t shoff, uint16_t shnum,
				 uint16_t shstrndx)
{
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = phnum;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = shnum;
	eh->e_shstrndx = shstrndx;
}

#endif /* SLIDEOPS_TESTS_UNIT_ELF_FIXTURE_H */
