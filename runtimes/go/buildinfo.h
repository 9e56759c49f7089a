/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buildinfo: recognizing a Go executable and its toolchain version from the build info that
 * the linker writes ("\xff Go buildinf:", Go's debug/buildinfo), the .gopclntab section or the
 * Go build id note, read through symbols/elf_file (also without section headers). Stateless
 * and thread-safe. The version string itself is parsed by runtime_go_version_from_string()
 * (runtimes/detect.h).
 */
#ifndef SLIDEOPS_RUNTIMES_GO_BUILDINFO_H
#define SLIDEOPS_RUNTIMES_GO_BUILDINFO_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/probe.h"

/* Reads @len bytes at virtual address @addr of the binary into @buf. Returns 0 or -errno. */
typedef int (*runtime_vread_fn_t)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * Go build info: @blob (@len bytes) starts with the 32-byte header "\xff Go buildinf:"
 * ptrsize flags ... Go 1.18+ stores the version inline (flags & 2: varint length + bytes
 * after the header); earlier versions store pointers to a string header, which are read with
 * @vread (may be NULL: then such a blob gives -EINVAL). Returns 0 with "1.19" in @ver;
 * -EINVAL for a bad magic, a truncated blob, a bad pointer size or an overlong string; the
 * error of @vread.
 */
int runtime_go_parse_buildinfo(const void *blob, size_t len, runtime_vread_fn_t vread, void *ctx,
			       char *ver, size_t size);

/* The Go recognizer: the executable (second pass) only. */
extern const struct runtime_ops runtime_go_ops;

#endif
