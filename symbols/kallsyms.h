/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kallsyms: kernel text symbols from /proc/kallsyms, sorted, looked up by address.
 *
 * Only text symbols (t, T, w, W) are kept; a symbol reaches to the next one. When
 * kptr_restrict hides the addresses (all read as zero) loading fails with -EPERM so the
 * caller can report kernel names as unavailable. Immutable after load: lookups are
 * thread-safe.
 */
#ifndef SLIDEOPS_KALLSYMS_H
#define SLIDEOPS_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#define KALLSYMS_MAX_BYTES (256u << 20)

struct kallsyms;

struct ksym {
	uint64_t addr;
	const char *name;   /* borrowed from the kallsyms object */
	const char *module; /* "[nf_tables]" for a module symbol, NULL for the core kernel */
};

/*
 * Loads @path (NULL means "/proc/kallsyms"). Returns 0 and a new object the caller frees with
 * kallsyms__free(); -EPERM if every address reads as zero (kptr_restrict), -ENOENT if no text
 * symbol was found, -EFBIG, -ENOMEM, -errno of open/read.
 */
int kallsyms__load(const char *path, struct kallsyms **out);
void kallsyms__free(struct kallsyms *k);

/*
 * Finds the symbol holding @addr: the highest text symbol at or below it. Returns a borrowed
 * pointer valid until kallsyms__free(), or NULL if @addr is below the first symbol or past
 * the last one (whose extent is unknown, so at most KALLSYMS_LAST_SPAN bytes past it count).
 */
#define KALLSYMS_LAST_SPAN (1u << 20)
const struct ksym *kallsyms__find(const struct kallsyms *k, uint64_t addr);

size_t kallsyms__count(const struct kallsyms *k);

#endif
