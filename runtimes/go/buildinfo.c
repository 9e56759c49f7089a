// SPDX-License-Identifier: Apache-2.0
#include "runtimes/go/buildinfo.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/array.h"
#include "symbols/elf_file.h"

#define GO_BI_MAGIC "\xff Go buildinf:"
#define GO_BI_MAGIC_LEN 14
#define GO_BI_HDR 32
#define GO_BI_ALIGN 16
#define GO_BI_READ 512 /* header + inline version string */
#define GO_VERSION_MAX 128
#define GO_NOTE_BUILDID 4 /* the Go linker's note type for its build id */

int runtime_go_parse_buildinfo(const void *blob, size_t len, runtime_vread_fn_t vread, void *ctx,
			       char *ver, size_t size)
{
	const uint8_t *b = blob, *p;
	uint8_t hdr[16], str[GO_VERSION_MAX];
	uint64_t addr, n;
	unsigned ptrsize;
	bool big;
	int err;

	if (!b || len < GO_BI_HDR || memcmp(b, GO_BI_MAGIC, GO_BI_MAGIC_LEN))
		return -EINVAL;
	ptrsize = b[14];
	big = b[15] & 1;
	if (b[15] & 2) {
		/* Go 1.18+: uvarint length and the bytes of the version, right after the header. */
		p = b + GO_BI_HDR;
		if (leb128_u64(&p, b + len, &n))
			return -EINVAL;
		if (!n || n > GO_VERSION_MAX || n > (uint64_t)(b + len - p))
			return -EINVAL;
		return runtime_go_version_from_string((const char *)p, n, ver, size);
	}
	/* Before 1.18: a pointer to a Go string header {data, len} of the version. */
	if ((ptrsize != 4 && ptrsize != 8) || !vread)
		return -EINVAL;
	addr = runtime_read_uint(b + 16, ptrsize, big);
	err = vread(ctx, addr, hdr, 2 * ptrsize);
	if (err)
		return err;
	addr = runtime_read_uint(hdr, ptrsize, big);
	n = runtime_read_uint(hdr + ptrsize, ptrsize, big);
	if (!n || n > GO_VERSION_MAX)
		return -EINVAL;
	err = vread(ctx, addr, str, n);
	if (err)
		return err;
	return runtime_go_version_from_string((const char *)str, n, ver, size);
}

/* runtime_vread_fn_t over the PT_LOAD segments of an ELF file. */
static int elf_vread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return elf_file__read_vaddr(ctx, addr, len, buf);
}

static int read_buildinfo_at(const struct elf_file *ef, uint64_t off, uint64_t avail, char *ver,
			     size_t size)
{
	uint8_t blob[GO_BI_READ];
	size_t n = avail < sizeof(blob) ? (size_t)avail : sizeof(blob);
	int err;

	err = elf_file__read_into(ef, off, n, blob);
	if (err)
		return err;
	return runtime_go_parse_buildinfo(blob, n, elf_vread, (void *)ef, ver, size);
}

struct go_scan {
	const struct elf_file *ef;
	const Elf64_Phdr *ph;
	char *ver;
	size_t size;
};

/* Finds the build info magic, 16-byte aligned in the address space, as Go's debug/buildinfo
 * does when there is no .go.buildinfo section. */
static int go_scan_fn(void *ctx, const char *buf, size_t len, uint64_t file_off)
{
	struct go_scan *gs = ctx;
	const char *hit;
	uint64_t off, vaddr;
	size_t i;

	for (i = 0; i + GO_BI_MAGIC_LEN <= len; i = (size_t)(hit - buf) + 1) {
		hit = memmem(buf + i, len - i, GO_BI_MAGIC, GO_BI_MAGIC_LEN);
		if (!hit)
			break;
		off = file_off + (uint64_t)(hit - buf);
		vaddr = gs->ph->p_vaddr + (off - gs->ph->p_offset);
		if (vaddr % GO_BI_ALIGN)
			continue;
		if (!read_buildinfo_at(gs->ef, off, gs->ph->p_offset + gs->ph->p_filesz - off,
				       gs->ver, gs->size))
			return 0;
	}
	return -ENOENT;
}

/* The build info in a writable PT_LOAD segment; 0 when found. */
static int scan_segments(struct runtime_scan *s, char *ver, size_t size)
{
	struct go_scan gs = { .ef = s->ef, .ver = ver, .size = size };
	size_t i;

	for (i = 0; (gs.ph = elf_file__phdr(s->ef, i)); i++) {
		if (gs.ph->p_type != PT_LOAD || !(gs.ph->p_flags & PF_W))
			continue;
		if (!runtime_scan_range(s, gs.ph->p_offset, gs.ph->p_filesz, go_scan_fn, &gs))
			return 0;
	}
	return -ENOENT;
}

/* A section named @name that has contents in the file. */
static bool has_section(const struct elf_file *ef, const char *name, const Elf64_Shdr **sh)
{
	return elf_file__section(ef, name, sh) > 0 && (*sh)->sh_type != SHT_NOBITS;
}

static bool go_detect(struct runtime_probe *p, char *ver, size_t size)
{
	const struct elf_file *ef = p->exe;
	const Elf64_Shdr *sh;
	bool marked = false;

	if (!ef)
		return false;
	ver[0] = '\0';
	if (has_section(ef, ".go.buildinfo", &sh)) {
		if (!read_buildinfo_at(ef, sh->sh_offset, sh->sh_size, ver, size))
			return true;
		marked = true;
	}
	marked = marked || has_section(ef, ".gopclntab", &sh) ||
		 has_section(ef, ".note.go.buildid", &sh);
	/* With section headers and no Go section this is not Go: spare the scan. */
	if (elf_file__shnum(ef) && !marked)
		return false;
	if (!scan_segments(&p->exe_scan, ver, size))
		return true;
	ver[0] = '\0';
	return marked || !elf_file__find_note(ef, "Go", GO_NOTE_BUILDID);
}

const struct runtime_ops runtime_go_ops = {
	.kind = RUNTIME_GO,
	.name = "go",
	.detect = go_detect,
};
