// SPDX-License-Identifier: Apache-2.0
#include "runtimes/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/safe_open.h"
#include "symbols/elf_file.h"
#include "symbols/procmaps.h"

#define SCAN_CHUNK (1u << 20)
#define SYMTAB_MAX (64u << 20) /* .dynsym/.symtab and their string tables */

struct maps_ctx {
	struct runtime_probe *p;
	size_t cap;
};

static int add_path(void *ctx, const struct procmaps_entry *e)
{
	struct maps_ctx *m = ctx;
	struct runtime_probe *p = m->p;
	char *dup;

	if (e->path[0] != '/' || strlen(e->path) >= PATH_MAX)
		return 0;
	if (p->npaths && !strcmp(p->paths[p->npaths - 1], e->path))
		return 0;
	if (array_ensure((void **)&p->paths, &m->cap, sizeof(*p->paths), p->npaths + 1))
		return -ENOMEM;
	dup = strdup(e->path);
	if (!dup)
		return -ENOMEM;
	p->paths[p->npaths++] = dup;
	return 0;
}

int runtime_probe_read_maps(struct runtime_probe *p, const char *proc_root, int pid)
{
	struct maps_ctx m = { .p = p };
	int err;

	err = procmaps_foreach(proc_root, pid, add_path, &m);
	if (err < 0) {
		runtime_probe_release(p);
		return err;
	}
	return 0;
}

void runtime_probe_release(struct runtime_probe *p)
{
	size_t i;

	for (i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->paths);
	p->paths = NULL;
	p->npaths = 0;
}

const char *runtime_probe_lib(const struct runtime_probe *p, bool (*match)(const char *base))
{
	const char *slash;
	size_t i;

	for (i = 0; i < p->npaths; i++) {
		slash = strrchr(p->paths[i], '/');
		if (match(slash ? slash + 1 : p->paths[i]))
			return p->paths[i];
	}
	return NULL;
}

static const struct {
	const char *name;
	enum runtime_sym id;
} interesting_syms[] = {
	{ "Py_Version", RUNTIME_SYM_PY_VERSION },     { "_PyRuntime", RUNTIME_SYM_PY },
	{ "Py_Initialize", RUNTIME_SYM_PY },	      { "Py_BytesMain", RUNTIME_SYM_PY },
	{ "_ZN4node5StartEiPPc", RUNTIME_SYM_NODE }, /* node::Start(int, char**) */
	{ "node_module_register", RUNTIME_SYM_NODE }, { "ruby_init", RUNTIME_SYM_RUBY },
	{ "ruby_setup", RUNTIME_SYM_RUBY },	      { "ruby_run_node", RUNTIME_SYM_RUBY },
};

static int note_sym(void *ctx, const char *name, const Elf64_Sym *sym)
{
	struct runtime_probe *p = ctx;
	size_t k;

	if (name[0] != 'P' && name[0] != '_' && name[0] != 'n' && name[0] != 'r')
		return 0;
	for (k = 0; k < ARRAY_SIZE(interesting_syms); k++) {
		if (strcmp(name, interesting_syms[k].name))
			continue;
		p->found[interesting_syms[k].id] = true;
		p->sym[interesting_syms[k].id] = *sym;
	}
	return 0;
}

/* Through the GNU hash table; false when the file has none that is usable. */
static bool syms_by_hash(struct runtime_probe *p)
{
	Elf64_Sym sym;
	size_t k;
	int err;

	for (k = 0; k < ARRAY_SIZE(interesting_syms); k++) {
		err = elf_file__gnu_hash_lookup(p->exe, interesting_syms[k].name, &sym);
		if (err == -EOPNOTSUPP)
			return false;
		if (!err)
			note_sym(p, interesting_syms[k].name, &sym);
	}
	return true;
}

const struct runtime_probe *runtime_probe_syms(struct runtime_probe *p)
{
	if (p->syms_done || !p->exe)
		return p;
	p->syms_done = true;
	if (!elf_file__shnum(p->exe))
		return p;
	if (!syms_by_hash(p))
		elf_file__foreach_sym(p->exe, SHT_DYNSYM, SYMTAB_MAX, note_sym, p);
	if (!p->found[RUNTIME_SYM_PY] && !p->found[RUNTIME_SYM_NODE] && !p->found[RUNTIME_SYM_RUBY])
		elf_file__foreach_sym(p->exe, SHT_SYMTAB, SYMTAB_MAX, note_sym, p);
	return p;
}

int runtime_scan_range(struct runtime_scan *s, uint64_t off, uint64_t len, runtime_scan_fn_t fn,
		       void *ctx)
{
	uint64_t end, pos = off, size = elf_file__size(s->ef);
	char *buf;
	size_t n;
	int err = -ENOENT;

	/* What lies past the end of the file is not there to scan. */
	if (off >= size)
		return -ENOENT;
	if (len > size - off)
		len = size - off;
	if (len > s->budget)
		len = s->budget;
	end = off + len;
	buf = malloc(SCAN_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (pos < end) {
		n = end - pos < SCAN_CHUNK ? (size_t)(end - pos) : SCAN_CHUNK;
		err = elf_file__read_into(s->ef, pos, n, buf);
		if (err)
			break;
		s->budget -= n < s->budget ? n : s->budget;
		err = fn(ctx, buf, n, pos);
		if (err != -ENOENT || pos + n >= end || !s->budget || n <= RUNTIME_SCAN_OVERLAP)
			break;
		pos += n - RUNTIME_SCAN_OVERLAP;
	}
	free(buf);
	return err;
}

struct version_scan {
	enum runtime_kind kind;
	char *ver;
	size_t size;
};

static int version_scan_fn(void *ctx, const char *buf, size_t len, uint64_t file_off)
{
	struct version_scan *vs = ctx;

	(void)file_off;
	return runtime_scan_version(vs->kind, buf, len, vs->ver, vs->size);
}

int runtime_scan_rodata(struct runtime_scan *s, enum runtime_kind kind, char *ver, size_t size)
{
	struct version_scan vs = { kind, ver, size };
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	int err = -ENOENT;
	size_t i;

	if (elf_file__section(s->ef, ".rodata", &sh) > 0 && sh->sh_type != SHT_NOBITS)
		return runtime_scan_range(s, sh->sh_offset, sh->sh_size, version_scan_fn, &vs);
	for (i = 0; (ph = elf_file__phdr(s->ef, i)) && err == -ENOENT; i++) {
		if (ph->p_type != PT_LOAD || (ph->p_flags & (PF_W | PF_X)))
			continue;
		err = runtime_scan_range(s, ph->p_offset, ph->p_filesz, version_scan_fn, &vs);
	}
	return err;
}

int runtime_scan_lib(const struct runtime_probe *p, const char *lib, enum runtime_kind kind,
		     char *ver, size_t size)
{
	struct runtime_scan s = { .budget = RUNTIME_SCAN_MAX };
	struct elf_file *ef;
	int fd, err;

	fd = safe_open_in_root_path(p->root, lib, NULL);
	if (fd < 0)
		return fd;
	err = elf_file__open(fd, &(struct elf_file_opts){ .max_file_size = UINT64_MAX }, &ef);
	if (!err) {
		s.ef = ef;
		err = runtime_scan_rodata(&s, kind, ver, size);
		elf_file__free(ef);
	}
	close(fd);
	return err;
}

uint64_t runtime_read_uint(const uint8_t *b, unsigned n, bool big)
{
	uint64_t v = 0;
	unsigned k;

	for (k = 0; k < n; k++)
		v |= (uint64_t)b[big ? n - 1 - k : k] << (8 * k);
	return v;
}
