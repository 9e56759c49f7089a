// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over dwarf_lines (symbols/dwarf_lines.h): the input is an ELF image, loaded
 * over memory and over a memfd (the pread path the symbolizer uses); then lookups at pcs taken
 * from the input and from every indexed range, twice (the second from the cache), with one and
 * with the most frames. Seed it with small -O2 -g objects (an ELF with .debug_info).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "symbols/dwarf_lines.h"

static void lookups(struct dwarf_lines *dl, const uint8_t *data, size_t size)
{
	struct dwarf_frame f[DWARF_LINES_MAX_DEPTH];
	uint64_t pc = 0;
	size_t i;
	int n, k;

	for (i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		memcpy(&pc, data + i, 8);
		for (k = 0; k < 2; k++) {
			n = dwarf_lines__lookup(dl, pc, f, k ? DWARF_LINES_MAX_DEPTH : 1);
			while (n-- > 0)
				if (f[n].name)
					(void)strlen(f[n].name);
		}
		(void)dwarf_lines__lookup(dl, pc & 0xffffff, f, DWARF_LINES_MAX_DEPTH);
	}
	(void)dwarf_lines__mem(dl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_lines_opts o = { .max_bytes = 16u << 20 };
	struct dwarf_lines *dl = NULL;
	int fd;

	log_set_level(LOG_ERROR);
	if (!dwarf_lines__from_memory(data, size, &o, &dl)) {
		lookups(dl, data, size);
		dwarf_lines__free(dl);
		dl = NULL;
	}
	fd = memfd_create("fuzz_dwarf_lines", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		(void)dwarf_lines_probe(fd);
		if (!dwarf_lines__from_fd(fd, &o, &dl)) {
			lookups(dl, data, size);
			dwarf_lines__free(dl);
		}
	}
	close(fd);
	return 0;
}
