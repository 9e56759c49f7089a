// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/safe_open.h"
#include "bpf/python.h"
#include "runtimes/python/py_code.h"
#include "runtimes/python/py_merge.h"
#include "symbols/elf_file.h"
#include "symbols/procmaps.h"

/* glibc keeps keys below PTHREAD_KEY_2NDLEVEL_SIZE (32) in struct pthread itself. */
#define GLIBC_KEY_1STBLOCK 32
/* glibc: struct pthread_key_data { uintptr_t seq; void *data; } */
#define GLIBC_KEY_DATA_SIZE 16
#define GLIBC_KEY_DATA_OFF 8

int py_version_from_name(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned ma, mi;
	int n = 0;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (!p || sscanf(p, "python%u.%u%n", &ma, &mi, &n) != 2 || ma != 3 || mi > 99)
		return -ENOENT;
	*major = ma;
	*minor = mi;
	return 0;
}

int py_glibc_specific_offset(const uint8_t *code, size_t len, uint32_t *off)
{
	static const uint8_t add_rax[3] = { 0x48, 0x83, 0xc0 },
			     shl4[4] = { 0x48, 0xc1, 0xe0, 0x04 };
	size_t i;

	for (i = 0; i + 8 <= len && i < 64; i++) {
		if (!memcmp(code + i, add_rax, 3) && !memcmp(code + i + 4, shl4, 4) &&
		    code[i + 3] < 0x80) {
			*off = (uint32_t)code[i + 3] * GLIBC_KEY_DATA_SIZE;
			return 0;
		}
	}
	return -ENOTSUP;
}

/* One mapped ELF file we may need: the first mapping (file offset 0) and the text range. */
struct mapped {
	char path[256];
	uint64_t start; /* of the offset-0 mapping */
	uint64_t text_start, text_end;
};

struct scan {
	struct mapped lib, exe, libc; /* libpython3.X, python3.X, libc */
};

static bool is_libc(const char *base)
{
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

static void note_map(struct mapped *m, const struct procmaps_entry *e)
{
	if (m->path[0] && strcmp(m->path, e->path))
		return; /* the first file of its kind wins */
	if (!m->path[0]) {
		if (e->offset)
			return;
		snprintf(m->path, sizeof(m->path), "%s", e->path);
		m->start = e->start;
	}
	if (e->perms & PROCMAPS_EXEC) {
		if (!m->text_start || e->start < m->text_start)
			m->text_start = e->start;
		if (e->end > m->text_end)
			m->text_end = e->end;
	}
}

static int scan_map(void *ctx, const struct procmaps_entry *e)
{
	struct scan *s = ctx;
	const char *base = strrchr(e->path, '/');
	unsigned ma, mi;

	if (e->path[0] != '/' || e->deleted || strlen(e->path) >= sizeof(s->lib.path))
		return 0;
	base = base ? base + 1 : e->path;
	if (is_libc(base))
		note_map(&s->libc, e);
	else if (!py_version_from_name(base, &ma, &mi))
		note_map(strncmp(base, "lib", 3) ? &s->exe : &s->lib, e);
	return 0;
}

/* An open ELF of the process's file system and its load bias. */
struct elf {
	int fd;
	struct elf_file *ef;
	uint64_t bias;
};

static void elf_close(struct elf *e)
{
	elf_file__free(e->ef);
	if (e->fd >= 0)
		close(e->fd);
}

static int elf_open(const char *proc_root, uint32_t tgid, const struct mapped *m, struct elf *e)
{
	size_t i;
	int err;

	e->ef = NULL;
	e->fd = -1;
	e->fd = safe_open_in_proc_root(proc_root, tgid, m->path, NULL);
	if (e->fd < 0)
		return proc_gone(e->fd);
	err = elf_file__open(e->fd, NULL, &e->ef);
	if (err) {
		elf_close(e);
		return err;
	}
	for (i = 0; i < elf_file__phnum(e->ef); i++) {
		const Elf64_Phdr *ph = elf_file__phdr(e->ef, i);

		if (ph->p_type == PT_LOAD) {
			e->bias = m->start - ((ph->p_vaddr - ph->p_offset) & ~0xfffull);
			return 0;
		}
	}
	elf_close(e);
	return -EINVAL;
}

struct sym_find {
	const char *name;
	Elf64_Sym sym;
	bool found;
};

static int sym_cb(void *ctx, const char *name, const Elf64_Sym *sym)
{
	struct sym_find *f = ctx;

	if (strcmp(name, f->name))
		return 0;
	f->sym = *sym;
	f->found = true;
	return 1;
}

/* @name from .dynsym (hash table, else a walk), or from .symtab when @local. */
static int elf_sym(const struct elf *e, const char *name, bool local, Elf64_Sym *sym)
{
	struct sym_find f = { .name = name };
	int err;

	if (!local) {
		err = elf_file__gnu_hash_lookup(e->ef, name, sym);
		if (err != -EOPNOTSUPP)
			return err;
	}
	err = elf_file__foreach_sym(e->ef, local ? SHT_SYMTAB : SHT_DYNSYM, 0, sym_cb, &f);
	if (err < 0)
		return err;
	if (!f.found)
		return -ENOENT;
	*sym = f.sym;
	return 0;
}

static int sym_addr(const struct elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf64_Sym sym;
	int err = elf_sym(e, name, false, &sym);

	if (err)
		return err;
	*addr = e->bias + sym.st_value;
	if (size)
		*size = sym.st_size;
	return 0;
}

/* Version: Py_Version (3.11+) from memory, else the file name. */
static int find_version(const struct elf *e, pid_t pid, struct py_process *p)
{
	uint64_t addr;
	uint32_t hex;
	int err;

	if (!sym_addr(e, "Py_Version", &addr, NULL)) {
		err = py_read_process(&pid, addr, &hex, sizeof(hex));
		if (err)
			return proc_gone(err);
		p->version_hex = hex;
		p->major = hex >> 24;
		p->minor = (hex >> 16) & 0xff;
		return 0;
	}
	return py_version_from_name(p->path, &p->major, &p->minor);
}

/* The table for the version, checked against the binary. */
static int check_layout(const struct elf *e, pid_t pid, struct py_process *p)
{
	uint8_t dbg[PY_DEBUG_OFFSETS_LEN];
	uint64_t size;
	uint32_t hex;
	int err;

	if (p->major != 3 || py_offsets_for_version(p->major, p->minor, &p->off))
		return -ENOTSUP;
	if (!p->off->runtime_size)
		return 0; /* 3.6: no _PyRuntime */
	err = sym_addr(e, "_PyRuntime", &p->runtime, &size);
	if (err)
		return err == -ENOENT ? -ENOTSUP : err;
	if (py_offsets_check_runtime_size(p->off, size))
		return -ENOTSUP;
	if (p->minor < 13)
		return 0;
	err = py_read_process(&pid, p->runtime, dbg, sizeof(dbg));
	if (err)
		return proc_gone(err);
	if (py_offsets_check_debug(p->off, dbg, sizeof(dbg), &hex))
		return -ENOTSUP;
	p->debug_offsets = true;
	return 0;
}

/* The pthread key: Py_tss_t { int _is_initialized; pthread_key_t _key; } inside _PyRuntime
 * (3.7+), or 3.6's static int autoTLSkey (.symtab only). */
static int find_key(const struct elf *e, pid_t pid, struct py_process *p)
{
	Elf64_Sym sym;
	int32_t tss[2];
	int err;

	if (p->runtime) {
		err = py_read_process(&pid, p->runtime + p->off->runtime_tss_key - 4, tss,
				      sizeof(tss));
		if (err)
			return proc_gone(err);
		if (!tss[0])
			return -EAGAIN;
	} else {
		err = elf_sym(e, "autoTLSkey", true, &sym);
		if (err)
			return err == -ENOENT ? -ENOTSUP : err;
		err = py_read_process(&pid, e->bias + sym.st_value, &tss[1], sizeof(tss[1]));
		if (err)
			return proc_gone(err);
		if (tss[1] < 0)
			return -EAGAIN;
	}
	if (tss[1] < 0 || tss[1] >= GLIBC_KEY_1STBLOCK)
		return -ENOTSUP;
	p->tss_key = (uint32_t)tss[1];
	return 0;
}

static int find_libc_layout(const char *proc_root, uint32_t tgid, const struct mapped *libc,
			    struct py_process *p)
{
	struct elf e;
	Elf64_Sym sym;
	uint8_t code[64];
	int err;

	if (!libc->path[0])
		return -ENOTSUP; /* static or another libc */
	err = elf_open(proc_root, tgid, libc, &e);
	if (err)
		return err;
	err = elf_sym(&e, "pthread_getspecific", false, &sym);
	if (!err)
		err = elf_file__read_vaddr(e.ef, sym.st_value, sizeof(code), code);
	if (!err)
		err = py_glibc_specific_offset(code, sizeof(code), &p->pthread_specific);
	elf_close(&e);
	return err == -ENOENT || err == -EFAULT ? -ENOTSUP : err;
}

static int find_in_elf(const struct elf *e, struct py_process *p)
{
	uint64_t size;
	int err;

	err = sym_addr(e, "PyCode_Type", &p->code_type, NULL);
	if (!err)
		err = sym_addr(e, "_Py_NoneStruct", &p->none, NULL);
	if (!err)
		err = sym_addr(e, "_PyEval_EvalFrameDefault", &p->eval_start, &size);
	if (err)
		return err == -ENOENT ? -ENOTSUP : err;
	p->eval_end = p->eval_start + size;
	return 0;
}

/* The interpreter in file @m, if it holds one: -ENOENT when it does not define PyCode_Type
 * (pyenv's small python3.X executable, which links libpython). */
static int find_in_file(const char *proc_root, uint32_t tgid, const struct mapped *m,
			struct py_process *p)
{
	pid_t pid = (pid_t)tgid;
	uint64_t addr;
	struct elf e;
	int err;

	if (!m->path[0])
		return -ENOENT;
	err = elf_open(proc_root, tgid, m, &e);
	if (err)
		return err;
	memcpy(p->path, m->path, sizeof(p->path));
	p->text_start = m->text_start;
	p->text_end = m->text_end;
	p->bias = e.bias;
	err = sym_addr(&e, "PyCode_Type", &addr, NULL);
	if (!err)
		err = find_version(&e, pid, p);
	if (!err)
		err = check_layout(&e, pid, p);
	if (!err)
		err = find_in_elf(&e, p);
	if (!err)
		err = find_key(&e, pid, p);
	elf_close(&e);
	return err;
}

int py_process_find(const char *proc_root, uint32_t tgid, struct py_process *out)
{
	struct scan s = {};
	struct py_process p = { .tgid = tgid };
	int err;

	err = procmaps_foreach(proc_root, (int)tgid, scan_map, &s);
	if (err < 0)
		return err;
	err = find_in_file(proc_root, tgid, &s.lib, &p);
	if (err == -ENOENT) {
		memset(&p, 0, sizeof(p));
		p.tgid = tgid;
		err = find_in_file(proc_root, tgid, &s.exe, &p);
	}
	if (!err)
		err = find_libc_layout(proc_root, tgid, &s.libc, &p);
	if (err)
		return err;
	*out = p;
	return 0;
}

uint8_t py_process_native_kind(const struct py_process *p, uint64_t ip)
{
	if (ip >= p->eval_start && ip < p->eval_end)
		return PY_NATIVE_EVAL;
	if (ip >= p->text_start && ip < p->text_end)
		return PY_NATIVE_HELPER;
	return PY_NATIVE_OTHER;
}

/* The frame fields the walk reads, as one window [lo, hi) of the frame. */
static void frame_window(const struct py_offsets *o, struct py_proc *b)
{
	uint32_t f[] = { o->frame_back, o->frame_code, o->frame_instr, o->frame_is_entry,
			 o->frame_owner };
	uint32_t lo = UINT32_MAX, hi = 0, end;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i] == PY_OFF_NONE)
			continue;
		end = f[i] + 8;
		lo = f[i] < lo ? f[i] : lo;
		hi = end > hi ? end : hi;
	}
	b->frame_read_off = lo;
	b->frame_read_len = hi - lo;
	b->frame_back = o->frame_back - lo;
	b->frame_code = o->frame_code - lo;
	b->frame_instr = o->frame_instr - lo;
	b->frame_is_entry = o->frame_is_entry == PY_OFF_NONE ? PY_NO_OFF : o->frame_is_entry - lo;
	b->frame_owner = o->frame_owner == PY_OFF_NONE ? PY_NO_OFF : o->frame_owner - lo;
}

void py_process_bpf(const struct py_process *p, struct py_proc *out)
{
	const struct py_offsets *o = p->off;

	memset(out, 0, sizeof(*out));
	out->tls_slot = p->pthread_specific + (uint64_t)p->tss_key * GLIBC_KEY_DATA_SIZE +
			GLIBC_KEY_DATA_OFF;
	out->none_addr = p->minor >= 13 ? p->none : 0;
	out->layout = o->layout == PY_FRAMES_OBJECT ? PY_LAYOUT_OBJECT : PY_LAYOUT_INTERP;
	out->tstate_frame = o->tstate_frame;
	out->cframe_frame = o->cframe_current_frame == PY_OFF_NONE ? PY_NO_OFF :
								     o->cframe_current_frame;
	out->owner_cstack = o->owner_cstack == PY_OFF_NONE ? PY_NO_OFF : o->owner_cstack;
	frame_window(o, out);
}
