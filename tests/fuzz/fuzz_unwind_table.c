// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the unwind table builder: arbitrary bytes as an ELF file read through
 * a memfd (the fd path the daemon uses), then lookups and invariants on what was built.
 * Sparse-file mode: an input whose last byte has its top bit set is extended with a hole of
 * (last byte & 0x3f) * 32 MiB (ftruncate), so offsets and sizes the headers claim far past the
 * data exist and read as zeros, as in a hostile sparse executable; run it with -rss_limit_mb
 * and -malloc_limit_mb to catch allocations driven by the claims.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/unwind_table.h"

/* The size of the file the input makes: its own, or more with a hole (sparse-file mode). */
static uint64_t file_size(const uint8_t *data, size_t size)
{
	if (!size || !(data[size - 1] & 0x80))
		return size;
	return size + ((uint64_t)(data[size - 1] & 0x3f) << 25);
}

static void check(const struct unwind_table *t, const uint8_t *data, size_t size)
{
	const struct unwind_row *rows, *r;
	struct unwind_table_stats st;
	uint64_t probe;
	size_t i, n;

	unwind_table__stats(t, &st);
	rows = unwind_table__rows(t, &n);
	if (n > st.rows_raw || n > (1u << 16))
		abort();
	for (i = 0; i < n; i++) {
		if (i && rows[i - 1].pc >= rows[i].pc)
			abort();
		if (rows[i].cfa_type > UNWIND_CFA_UNSUPPORTED || rows[i].rbp_type > UNWIND_RBP_UNDEFINED)
			abort();
		if (unwind_table__find(t, rows[i].pc) != &rows[i])
			abort();
	}
	for (i = 0; i + 4 <= size && i < 256; i += 4) {
		probe = (uint64_t)data[i] | (uint64_t)data[i + 1] << 8 | (uint64_t)data[i + 2] << 16 |
			(uint64_t)data[i + 3] << 24;
		r = unwind_table__find(t, probe);
		if (r && r->pc > probe)
			abort();
	}
	(void)unwind_table__find(t, 0);
	(void)unwind_table__find(t, UINT64_MAX);
	(void)unwind_cfa_type_str(rows && n ? rows[0].cfa_type : 99);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -2;
	struct unwind_table_opts opts = { .max_rows = 1u << 16, .max_file_size = 4ull << 30 };
	struct unwind_table *t = NULL;

	if (fd == -2)
		fd = memfd_create("fuzz_unwind", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    ftruncate(fd, (off_t)file_size(data, size)))
		return 0;
	if (!unwind_table__from_fd(fd, &opts, &t)) {
		check(t, data, size);
		unwind_table__free(t);
	}
	return 0;
}
