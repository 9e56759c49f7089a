// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_vmstructs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/array.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "symbols/elf_file.h"
#include "symbols/procmaps.h"

#define PAGE 4096u

struct jvm_vmstructs {
	struct jvm_vms_field *fields;
	size_t nfields, fields_cap;
	struct jvm_vms_type *types;
	size_t ntypes, types_cap;
	/* The entries sorted by (type, name) and by name, for the lookups. */
	const struct jvm_vms_field **field_order;
	const struct jvm_vms_type **type_order;
	char **names; /* every string we own, freed with the object */
	size_t nnames, names_cap;
	char libjvm[256];
	uint64_t bias;
};

int jvm_read_process(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	ssize_t got = process_vm_readv((pid_t) * (uint32_t *)ctx, &local, 1, &remote, 1, 0);

	if (got < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

/* --- the decoder ------------------------------------------------------------------------ */

struct reader {
	jvm_read_fn_t read;
	void *ctx;
	struct jvm_vmstructs *vs;
	uint64_t last_addr; /* the name read last: entries of one type share its pointer */
	const char *last;
};

/*
 * Reads the NUL-terminated name at @addr into a string the object owns: in pieces that do not
 * cross a page (the name may end just before an unmapped one), at most JVM_VMS_NAME_MAX bytes,
 * printable ASCII only. Returns 0 or -errno.
 */
static int read_name(struct reader *r, uint64_t addr, const char **out)
{
	char buf[JVM_VMS_NAME_MAX + 1], *s;
	size_t len = 0, n, i;
	int err;

	if (!addr)
		return -EFAULT;
	if (r->last && addr == r->last_addr) {
		*out = r->last;
		return 0;
	}
	while (len < sizeof(buf)) {
		n = PAGE - (size_t)((addr + len) % PAGE);
		n = n < sizeof(buf) - len ? n : sizeof(buf) - len;
		err = r->read(r->ctx, addr + len, buf + len, n);
		if (err)
			return err;
		for (i = len; i < len + n && buf[i]; i++)
			if (buf[i] < 0x20 || buf[i] > 0x7e)
				return -EILSEQ;
		if (i < len + n)
			break;
		len += n;
	}
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	if (array_ensure((void **)&r->vs->names, &r->vs->names_cap, sizeof(char *),
			 r->vs->nnames + 1))
		return -ENOMEM;
	s = strdup(buf);
	if (!s)
		return -ENOMEM;
	r->vs->names[r->vs->nnames++] = s;
	r->last_addr = addr;
	r->last = s;
	*out = s;
	return 0;
}

static uint64_t get64(const uint8_t *b, uint64_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* An entry field of @width bytes at @off must lie inside the @stride bytes of an entry. */
static bool fits(uint64_t off, uint64_t width, uint64_t stride)
{
	return off <= stride && width <= stride - off;
}

static int check_layout(const struct jvm_vms_layout *l)
{
	if (!l->structs || !l->types || l->s_stride > JVM_VMS_STRIDE_MAX ||
	    l->t_stride > JVM_VMS_STRIDE_MAX)
		return -EINVAL;
	if (!fits(l->s_type_name, 8, l->s_stride) || !fits(l->s_field_name, 8, l->s_stride) ||
	    !fits(l->s_is_static, 4, l->s_stride) || !fits(l->s_offset, 8, l->s_stride) ||
	    !fits(l->s_address, 8, l->s_stride) || !fits(l->s_type_string, 8, l->s_stride))
		return -EINVAL;
	if (!fits(l->t_type_name, 8, l->t_stride) || !fits(l->t_size, 8, l->t_stride))
		return -EINVAL;
	return 0;
}

/* The widths of the fixed-width integer types HotSpot's tables name. */
static const struct {
	const char *name;
	uint8_t width;
} int_types[] = {
	{ "int8_t", 1 },   { "uint8_t", 1 },  { "u1", 1 },	 { "jbyte", 1 },
	{ "bool", 1 },	   { "int16_t", 2 },  { "uint16_t", 2 }, { "u2", 2 },
	{ "jshort", 2 },   { "short", 2 },    { "int", 4 },	 { "int32_t", 4 },
	{ "uint32_t", 4 }, { "u4", 4 },	      { "jint", 4 },	 { "unsigned int", 4 },
	{ "int64_t", 8 },  { "uint64_t", 8 }, { "u8", 8 },	 { "jlong", 8 },
	{ "intx", 8 },	   { "uintx", 8 },    { "size_t", 8 },
};

/* The width of the value of a field whose type string is at @addr: 0 when it names no
 * integer type above, or cannot be read (a width is a hint, never a reason to fail). */
static uint8_t value_width(struct reader *r, uint64_t addr)
{
	char buf[16] = "";
	size_t n, i;

	if (!addr)
		return 0;
	n = PAGE - (size_t)(addr % PAGE);
	n = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
	if (r->read(r->ctx, addr, buf, n))
		return 0;
	buf[n] = '\0';
	for (i = 0; i < sizeof(int_types) / sizeof(int_types[0]); i++)
		if (!strcmp(buf, int_types[i].name))
			return int_types[i].width;
	return 0;
}

/* One struct entry (@e, a stride's bytes) into the object; 1 at the terminator. */
static int add_field(struct reader *r, const struct jvm_vms_layout *l, const uint8_t *e)
{
	struct jvm_vmstructs *vs = r->vs;
	struct jvm_vms_field f = { 0 };
	uint64_t type = get64(e, l->s_type_name);
	int32_t is_static;
	int err;

	if (!type)
		return 1;
	err = read_name(r, type, &f.type);
	if (!err)
		err = read_name(r, get64(e, l->s_field_name), &f.name);
	if (err)
		return err;
	memcpy(&is_static, e + l->s_is_static, sizeof(is_static));
	f.is_static = is_static != 0;
	f.offset = get64(e, l->s_offset);
	f.address = get64(e, l->s_address);
	f.width = value_width(r, get64(e, l->s_type_string));
	if (!f.is_static && f.offset > JVM_VMS_VALUE_MAX)
		return -EINVAL;
	if (array_ensure((void **)&vs->fields, &vs->fields_cap, sizeof(f), vs->nfields + 1))
		return -ENOMEM;
	vs->fields[vs->nfields++] = f;
	return 0;
}

/* One type entry into the object; 1 at the terminator. */
static int add_type(struct reader *r, const struct jvm_vms_layout *l, const uint8_t *e)
{
	struct jvm_vmstructs *vs = r->vs;
	struct jvm_vms_type t = { 0 };
	uint64_t name = get64(e, l->t_type_name);
	int err;

	if (!name)
		return 1;
	err = read_name(r, name, &t.name);
	if (err)
		return err;
	t.size = get64(e, l->t_size);
	if (t.size > JVM_VMS_VALUE_MAX)
		return -EINVAL;
	if (array_ensure((void **)&vs->types, &vs->types_cap, sizeof(t), vs->ntypes + 1))
		return -ENOMEM;
	vs->types[vs->ntypes++] = t;
	return 0;
}

typedef int (*add_fn_t)(struct reader *r, const struct jvm_vms_layout *l, const uint8_t *e);

/* Walks one table of @stride-byte entries at @base to its terminator. */
static int walk_table(struct reader *r, const struct jvm_vms_layout *l, uint64_t base,
		      uint64_t stride, add_fn_t add)
{
	uint8_t e[JVM_VMS_STRIDE_MAX];
	uint32_t i;
	int err;

	for (i = 0; i < JVM_VMS_MAX_ENTRIES; i++) {
		if (base + (uint64_t)i * stride < base)
			return -EFAULT;
		err = r->read(r->ctx, base + (uint64_t)i * stride, e, stride);
		if (!err)
			err = add(r, l, e);
		if (err)
			return err > 0 ? 0 : err;
	}
	return -E2BIG;
}

/* Entries are sorted as pointers into their final array: equal names keep the JVM's order,
 * so the first entry of a name wins a lookup. */
static int cmp_ptr(const void *x, const void *y)
{
	return (x > y) - (x < y);
}

static int cmp_field(const void *a, const void *b)
{
	const struct jvm_vms_field *x = *(const struct jvm_vms_field *const *)a,
				   *y = *(const struct jvm_vms_field *const *)b;
	int c = strcmp(x->type, y->type);

	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : cmp_ptr(x, y);
}

static int cmp_type(const void *a, const void *b)
{
	const struct jvm_vms_type *x = *(const struct jvm_vms_type *const *)a,
				  *y = *(const struct jvm_vms_type *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : cmp_ptr(x, y);
}

static int build_index(struct jvm_vmstructs *vs)
{
	size_t i;

	vs->field_order = malloc((vs->nfields + 1) * sizeof(*vs->field_order));
	vs->type_order = malloc((vs->ntypes + 1) * sizeof(*vs->type_order));
	if (!vs->field_order || !vs->type_order)
		return -ENOMEM;
	for (i = 0; i < vs->nfields; i++)
		vs->field_order[i] = &vs->fields[i];
	for (i = 0; i < vs->ntypes; i++)
		vs->type_order[i] = &vs->types[i];
	qsort(vs->field_order, vs->nfields, sizeof(*vs->field_order), cmp_field);
	qsort(vs->type_order, vs->ntypes, sizeof(*vs->type_order), cmp_type);
	return 0;
}

int jvm_vmstructs__decode(const struct jvm_vms_layout *l, jvm_read_fn_t read, void *ctx,
			  struct jvm_vmstructs **out)
{
	struct jvm_vmstructs *vs;
	struct reader r = { .read = read, .ctx = ctx };
	int err;

	if (!l || !read || !out)
		return -EINVAL;
	err = check_layout(l);
	if (err)
		return err;
	vs = calloc(1, sizeof(*vs));
	if (!vs)
		return -ENOMEM;
	r.vs = vs;
	err = walk_table(&r, l, l->structs, l->s_stride, add_field);
	if (!err) {
		r.last = NULL;
		err = walk_table(&r, l, l->types, l->t_stride, add_type);
	}
	if (!err)
		err = build_index(vs);
	if (err)
		goto err_free;
	*out = vs;
	return 0;

err_free:
	jvm_vmstructs__free(vs);
	return err;
}

void jvm_vmstructs__free(struct jvm_vmstructs *vs)
{
	size_t i;

	if (!vs)
		return;
	for (i = 0; i < vs->nnames; i++)
		free(vs->names[i]);
	free(vs->names);
	free(vs->fields);
	free(vs->types);
	free(vs->field_order);
	free(vs->type_order);
	free(vs);
}

/* --- lookups ---------------------------------------------------------------------------- */

const struct jvm_vms_field *jvm_vmstructs__field(const struct jvm_vmstructs *vs, const char *type,
						 const char *name)
{
	size_t lo = 0, hi = vs ? vs->nfields : 0;

	if (!type || !name)
		return NULL;
	/* The first index whose (type, name) is not below the key. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jvm_vms_field *f = vs->field_order[mid];
		int c = strcmp(f->type, type);

		if (!c)
			c = strcmp(f->name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (vs && lo < vs->nfields) {
		const struct jvm_vms_field *f = vs->field_order[lo];

		if (!strcmp(f->type, type) && !strcmp(f->name, name))
			return f;
	}
	return NULL;
}

static const struct jvm_vms_type *find_type(const struct jvm_vmstructs *vs, const char *type)
{
	size_t lo = 0, hi = vs ? vs->ntypes : 0;

	if (!type)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(vs->type_order[mid]->name, type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!vs || lo >= vs->ntypes || strcmp(vs->type_order[lo]->name, type))
		return NULL;
	return vs->type_order[lo];
}

int jvm_vmstructs__type_size(const struct jvm_vmstructs *vs, const char *type, uint64_t *size)
{
	const struct jvm_vms_type *t = find_type(vs, type);

	if (!t)
		return -ENOENT;
	if (size)
		*size = t->size;
	return 0;
}

size_t jvm_vmstructs__nfields(const struct jvm_vmstructs *vs)
{
	return vs ? vs->nfields : 0;
}

const struct jvm_vms_field *jvm_vmstructs__field_at(const struct jvm_vmstructs *vs, size_t i)
{
	return vs && i < vs->nfields ? &vs->fields[i] : NULL;
}

size_t jvm_vmstructs__ntypes(const struct jvm_vmstructs *vs)
{
	return vs ? vs->ntypes : 0;
}

const struct jvm_vms_type *jvm_vmstructs__type_at(const struct jvm_vmstructs *vs, size_t i)
{
	return vs && i < vs->ntypes ? &vs->types[i] : NULL;
}

const char *jvm_vmstructs__libjvm(const struct jvm_vmstructs *vs)
{
	return vs ? vs->libjvm : "";
}

uint64_t jvm_vmstructs__bias(const struct jvm_vmstructs *vs)
{
	return vs ? vs->bias : 0;
}

/* --- from a process --------------------------------------------------------------------- */

/* The first mapping of libjvm.so (file offset 0) in a process's maps. */
struct libjvm_map {
	char path[256];
	uint64_t start, end, inode;
	uint32_t dev_major, dev_minor;
};

static int find_map(void *ctx, const struct procmaps_entry *e)
{
	struct libjvm_map *m = ctx;
	const char *base = strrchr(e->path, '/');

	if (m->path[0] || e->offset || e->deleted || e->path[0] != '/' ||
	    strlen(e->path) >= sizeof(m->path) || strcmp(base ? base + 1 : e->path, "libjvm.so"))
		return 0;
	snprintf(m->path, sizeof(m->path), "%s", e->path);
	m->start = e->start;
	m->end = e->end;
	m->inode = e->inode;
	m->dev_major = e->dev_major;
	m->dev_minor = e->dev_minor;
	return 0;
}

/*
 * Opens the mapped libjvm.so: the kernel's link to the mapping itself, else (no map_files
 * access) the path inside the process's root, checked against the mapping's inode.
 */
static int open_libjvm(uint32_t tgid, const struct libjvm_map *m)
{
	struct safe_open_opts o = { .ino = m->inode, .dev = makedev(m->dev_major, m->dev_minor) };
	int fd = safe_open_map_file(NULL, tgid, m->start, m->end, &o);

	if (fd == -EPERM || fd == -EACCES) {
		o.dev = 0;
		fd = safe_open_in_proc_root(NULL, tgid, m->path, &o);
	}
	return fd;
}

static const char *const layout_syms[] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
};
#define NLAYOUT (sizeof(layout_syms) / sizeof(layout_syms[0]))

struct sym_walk {
	uint64_t value[NLAYOUT];
	uint32_t found;
};

static int sym_cb(void *ctx, const char *name, const Elf64_Sym *sym)
{
	struct sym_walk *w = ctx;
	size_t i;

	for (i = 0; i < NLAYOUT; i++) {
		if (!(w->found & (1u << i)) && !strcmp(name, layout_syms[i])) {
			w->value[i] = sym->st_value;
			w->found |= 1u << i;
		}
	}
	return 0;
}

/* The link-time addresses of the layout symbols (.dynsym: hash lookups, else one walk). */
static int layout_symbols(const struct elf_file *ef, uint64_t *vaddr)
{
	struct sym_walk w = { { 0 }, 0 };
	Elf64_Sym sym;
	size_t i;
	int err = 0;

	for (i = 0; i < NLAYOUT && !err; i++) {
		err = elf_file__gnu_hash_lookup(ef, layout_syms[i], &sym);
		vaddr[i] = err ? 0 : sym.st_value;
	}
	if (err == -EOPNOTSUPP) {
		err = elf_file__foreach_sym(ef, SHT_DYNSYM, 0, sym_cb, &w);
		if (err)
			return err;
		if (w.found != (1u << NLAYOUT) - 1)
			return -ENOTSUP;
		memcpy(vaddr, w.value, sizeof(w.value));
		return 0;
	}
	return err == -ENOENT ? -ENOTSUP : err;
}

/* The load bias of the ELF whose offset-0 mapping starts at @start. */
static int load_bias(const struct elf_file *ef, uint64_t start, uint64_t *bias)
{
	size_t i;

	for (i = 0; i < elf_file__phnum(ef); i++) {
		const Elf64_Phdr *ph = elf_file__phdr(ef, i);

		if (ph->p_type == PT_LOAD) {
			*bias = start - ((ph->p_vaddr - ph->p_offset) & ~(uint64_t)(PAGE - 1));
			return 0;
		}
	}
	return -EINVAL;
}

/* Reads the twelve layout words from the process into @l (in layout_syms' order). */
static int read_layout(uint32_t tgid, const uint64_t *vaddr, uint64_t bias,
		       struct jvm_vms_layout *l)
{
	uint64_t *dst[NLAYOUT] = { &l->structs,	     &l->s_stride,	&l->s_type_name,
				   &l->s_field_name, &l->s_is_static,	&l->s_offset,
				   &l->s_address,    &l->s_type_string, &l->types,
				   &l->t_stride,     &l->t_type_name,	&l->t_size };
	size_t i;
	int err;

	for (i = 0; i < NLAYOUT; i++) {
		err = jvm_read_process(&tgid, bias + vaddr[i], dst[i], sizeof(uint64_t));
		if (err)
			return err;
	}
	return !l->s_stride || !l->t_stride || !l->structs || !l->types ? -EAGAIN : 0;
}

/* The layout of the tables in the libjvm @m of @tgid. */
static int libjvm_layout(uint32_t tgid, const struct libjvm_map *m, struct jvm_vms_layout *l,
			 uint64_t *bias)
{
	struct elf_file *ef = NULL;
	uint64_t vaddr[NLAYOUT];
	int fd, err;

	fd = open_libjvm(tgid, m);
	if (fd < 0)
		return proc_gone(fd);
	err = elf_file__open(fd, NULL, &ef);
	if (!err)
		err = load_bias(ef, m->start, bias);
	if (!err)
		err = layout_symbols(ef, vaddr);
	if (!err)
		err = read_layout(tgid, vaddr, *bias, l);
	elf_file__free(ef);
	close(fd);
	return err;
}

int jvm_vmstructs__open(uint32_t tgid, struct jvm_vmstructs **out)
{
	struct libjvm_map m = { .path = "" };
	struct jvm_vms_layout l;
	struct jvm_vmstructs *vs;
	uint64_t bias = 0;
	int err;

	if (!tgid || !out)
		return -EINVAL;
	err = procmaps_foreach(NULL, (int)tgid, find_map, &m);
	if (err < 0)
		return err;
	if (!m.path[0])
		return -ENOENT;
	err = libjvm_layout(tgid, &m, &l, &bias);
	if (!err)
		err = jvm_vmstructs__decode(&l, jvm_read_process, &tgid, &vs);
	if (err)
		return err;
	snprintf(vs->libjvm, sizeof(vs->libjvm), "%s", m.path);
	vs->bias = bias;
	*out = vs;
	return 0;
}

/* --- JVM flags -------------------------------------------------------------------------- */

struct flag_layout {
	uint64_t array, count, stride, name_off, addr_off;
};

static int flag_layout(const struct jvm_vmstructs *vs, jvm_read_fn_t read, void *ctx,
		       struct flag_layout *fl)
{
	const struct jvm_vms_field *flags = jvm_vmstructs__field(vs, "JVMFlag", "flags"),
				   *num = jvm_vmstructs__field(vs, "JVMFlag", "numFlags"),
				   *name = jvm_vmstructs__field(vs, "JVMFlag", "_name"),
				   *addr = jvm_vmstructs__field(vs, "JVMFlag", "_addr");
	int err;

	if (!flags || !num || !name || !addr || !flags->is_static || !num->is_static ||
	    name->is_static || addr->is_static ||
	    jvm_vmstructs__type_size(vs, "JVMFlag", &fl->stride))
		return -ENOTSUP;
	fl->name_off = name->offset;
	fl->addr_off = addr->offset;
	if (!fits(fl->name_off, 8, fl->stride) || !fits(fl->addr_off, 8, fl->stride) ||
	    fl->stride > JVM_VMS_STRIDE_MAX)
		return -ENOTSUP;
	err = read(ctx, flags->address, &fl->array, sizeof(fl->array));
	if (!err)
		err = read(ctx, num->address, &fl->count, sizeof(fl->count));
	if (err)
		return err;
	return fl->count > JVM_VMS_MAX_FLAGS ? -E2BIG : 0;
}

int jvm_vmstructs__flag_bool(const struct jvm_vmstructs *vs, jvm_read_fn_t read, void *ctx,
			     const char *name, bool *value)
{
	char want[JVM_VMS_NAME_MAX + 1];
	struct flag_layout fl;
	uint8_t *tab, v;
	size_t n = name ? strlen(name) + 1 : 0, i;
	int err;

	if (!vs || !read || n < 2 || n > sizeof(want) || !value)
		return -EINVAL;
	err = flag_layout(vs, read, ctx, &fl);
	if (err)
		return err;
	tab = malloc(fl.count * fl.stride + 1);
	if (!tab)
		return -ENOMEM;
	err = fl.count ? read(ctx, fl.array, tab, fl.count * fl.stride) : 0;
	for (i = 0; !err && i < fl.count; i++) {
		const uint8_t *e = tab + i * fl.stride;

		/* The name's own length is read: a shorter name that faults is another one. */
		if (!get64(e, fl.name_off) || read(ctx, get64(e, fl.name_off), want, n) ||
		    memcmp(want, name, n))
			continue;
		err = read(ctx, get64(e, fl.addr_off), &v, 1);
		if (!err)
			*value = v != 0;
		free(tab);
		return err;
	}
	free(tab);
	return err ? err : -ENOENT;
}

/* --- what the frame walk needs ---------------------------------------------------------- */

enum hs_kind { HS_FIELD, HS_STATIC, HS_SIZE };

/*
 * Each entry under every name a JDK from 17 to 25 gave it: '|' separates the alternatives of
 * the type and of the field; the first pair present wins. @offset_name is the field name that
 * holds an offset from the start of the blob where the older one held a pointer.
 */
static const struct {
	enum hs_kind kind;
	const char *types, *fields, *offset_name;
	bool optional; /* one JDK has it, another not */
} hs_table[JVM_HS_COUNT] = {
	[JVM_HS_CODECACHE_HEAPS] = { HS_STATIC, "CodeCache", "_heaps" },
	[JVM_HS_CODECACHE_LOW] = { HS_STATIC, "CodeCache", "_low_bound" },
	[JVM_HS_CODECACHE_HIGH] = { HS_STATIC, "CodeCache", "_high_bound" },
	[JVM_HS_CODEHEAP_MEMORY] = { HS_FIELD, "CodeHeap", "_memory" },
	[JVM_HS_CODEHEAP_SEGMAP] = { HS_FIELD, "CodeHeap", "_segmap" },
	[JVM_HS_CODEHEAP_LOG2_SEGMENT] = { HS_FIELD, "CodeHeap", "_log2_segment_size" },
	[JVM_HS_VIRTUALSPACE_LOW] = { HS_FIELD, "VirtualSpace", "_low_boundary" },
	[JVM_HS_VIRTUALSPACE_HIGH] = { HS_FIELD, "VirtualSpace", "_high_boundary" },
	[JVM_HS_GROWABLE_DATA] = { HS_FIELD, "GrowableArray<int>", "_data" },
	[JVM_HS_GROWABLE_LEN] = { HS_FIELD, "GrowableArrayBase|GenericGrowableArray", "_len" },
	[JVM_HS_HEAPBLOCK_SIZE] = { HS_SIZE, "HeapBlock", NULL },
	[JVM_HS_CODEBLOB_NAME] = { HS_FIELD, "CodeBlob", "_name" },
	[JVM_HS_CODEBLOB_FRAME_SIZE] = { HS_FIELD, "CodeBlob", "_frame_size" },
	[JVM_HS_CODEBLOB_CODE] = { HS_FIELD, "CodeBlob", "_code_begin|_code_offset",
				   "_code_offset" },
	[JVM_HS_CODEBLOB_SIZE] = { HS_FIELD, "CodeBlob", "_size" },
	[JVM_HS_CODEBLOB_FRAME_COMPLETE] = { HS_FIELD, "CodeBlob", "_frame_complete_offset" },
	[JVM_HS_NMETHOD_METHOD] = { HS_FIELD, "nmethod|CompiledMethod", "_method" },
	[JVM_HS_NMETHOD_COMPILE_ID] = { HS_FIELD, "nmethod", "_compile_id" },
	[JVM_HS_NMETHOD_SCOPES_DATA] = { HS_FIELD, "nmethod|CompiledMethod",
					 "_scopes_data_begin|_scopes_data_offset",
					 "_scopes_data_offset" },
	[JVM_HS_NMETHOD_SCOPES_PCS] = { HS_FIELD, "nmethod", "_scopes_pcs_offset" },
	[JVM_HS_METHOD_CONSTMETHOD] = { HS_FIELD, "Method", "_constMethod" },
	[JVM_HS_CONSTMETHOD_CONSTANTS] = { HS_FIELD, "ConstMethod", "_constants" },
	[JVM_HS_CONSTMETHOD_NAME_INDEX] = { HS_FIELD, "ConstMethod", "_name_index" },
	[JVM_HS_CONSTMETHOD_SIGNATURE_INDEX] = { HS_FIELD, "ConstMethod", "_signature_index" },
	[JVM_HS_CONSTMETHOD_CODE_SIZE] = { HS_FIELD, "ConstMethod", "_code_size" },
	[JVM_HS_CONSTMETHOD_SIZE] = { HS_SIZE, "ConstMethod", NULL },
	[JVM_HS_CONSTANTPOOL_HOLDER] = { HS_FIELD, "ConstantPool", "_pool_holder" },
	[JVM_HS_CONSTANTPOOL_SIZE] = { HS_SIZE, "ConstantPool", NULL },
	[JVM_HS_KLASS_NAME] = { HS_FIELD, "Klass", "_name" },
	[JVM_HS_SYMBOL_LENGTH] = { HS_FIELD, "Symbol", "_length" },
	[JVM_HS_SYMBOL_BODY] = { HS_FIELD, "Symbol", "_body" },
	[JVM_HS_JAVATHREAD_ANCHOR] = { HS_FIELD, "JavaThread", "_anchor" },
	[JVM_HS_JAVATHREAD_OSTHREAD] = { HS_FIELD, "JavaThread|Thread", "_osthread" },
	[JVM_HS_JAVATHREAD_THREADOBJ] = { HS_FIELD, "JavaThread", "_threadObj" },
	[JVM_HS_OSTHREAD_THREAD_ID] = { HS_FIELD, "OSThread", "_thread_id" },
	[JVM_HS_ANCHOR_LAST_SP] = { HS_FIELD, "JavaFrameAnchor", "_last_Java_sp" },
	[JVM_HS_ANCHOR_LAST_PC] = { HS_FIELD, "JavaFrameAnchor", "_last_Java_pc" },
	[JVM_HS_ANCHOR_LAST_FP] = { HS_FIELD, "JavaFrameAnchor", "_last_Java_fp" },
	[JVM_HS_VM_RELEASE] = { HS_STATIC, "Abstract_VM_Version", "_s_vm_release" },
	[JVM_HS_CONSTMETHOD_FLAGS] = { HS_FIELD, "ConstMethod", "_flags|_flags._flags" },
	[JVM_HS_CONSTMETHOD_TOTAL] = { HS_FIELD, "ConstMethod", "_constMethod_size" },
	[JVM_HS_CONSTANTPOOL_SOURCE_FILE] = { HS_FIELD, "ConstantPool", "_source_file_name_index" },
	[JVM_HS_NMETHOD_METADATA_OFFSET] = { HS_FIELD, "nmethod", "_metadata_offset", NULL, true },
	[JVM_HS_NMETHOD_DEPENDENCIES] = { HS_FIELD, "nmethod", "_dependencies_offset", NULL, true },
	[JVM_HS_NMETHOD_IMMUTABLE] = { HS_FIELD, "nmethod", "_immutable_data", NULL, true },
	[JVM_HS_NMETHOD_IMMUTABLE_SIZE] = { HS_FIELD, "nmethod", "_immutable_data_size", NULL,
					    true },
	[JVM_HS_CODEBLOB_MUTABLE] = { HS_FIELD, "CodeBlob", "_mutable_data", NULL, true },
	[JVM_HS_CODEBLOB_RELOCATION_SIZE] = { HS_FIELD, "CodeBlob", "_relocation_size", NULL,
					      true },
	[JVM_HS_CODEBLOB_MUTABLE_SIZE] = { HS_FIELD, "CodeBlob", "_mutable_data_size", NULL, true },
};

/* The @i-th '|'-separated alternative of @list into @buf; false past the last. */
static bool alt(const char *list, unsigned i, char *buf, size_t size)
{
	const char *p = list, *e;

	for (;;) {
		e = strchrnul(p, '|');
		if (!i--) {
			if ((size_t)(e - p) >= size)
				return false;
			memcpy(buf, p, (size_t)(e - p));
			buf[e - p] = '\0';
			return true;
		}
		if (!*e)
			return false;
		p = e + 1;
	}
}

bool jvm_hotspot_optional(enum jvm_hs id)
{
	return (unsigned)id < JVM_HS_COUNT && hs_table[id].optional;
}

const char *jvm_hotspot_label(enum jvm_hs id)
{
	static const char *const labels[JVM_HS_COUNT] = {
#define L(id, s) [id] = s
		L(JVM_HS_CODECACHE_HEAPS, "CodeCache::_heaps"),
		L(JVM_HS_CODECACHE_LOW, "CodeCache::_low_bound"),
		L(JVM_HS_CODECACHE_HIGH, "CodeCache::_high_bound"),
		L(JVM_HS_CODEHEAP_MEMORY, "CodeHeap::_memory"),
		L(JVM_HS_CODEHEAP_SEGMAP, "CodeHeap::_segmap"),
		L(JVM_HS_CODEHEAP_LOG2_SEGMENT, "CodeHeap::_log2_segment_size"),
		L(JVM_HS_VIRTUALSPACE_LOW, "VirtualSpace::_low_boundary"),
		L(JVM_HS_VIRTUALSPACE_HIGH, "VirtualSpace::_high_boundary"),
		L(JVM_HS_GROWABLE_DATA, "GrowableArray<int>::_data"),
		L(JVM_HS_GROWABLE_LEN, "GrowableArrayBase::_len"),
		L(JVM_HS_HEAPBLOCK_SIZE, "sizeof(HeapBlock)"),
		L(JVM_HS_CODEBLOB_NAME, "CodeBlob::_name"),
		L(JVM_HS_CODEBLOB_FRAME_SIZE, "CodeBlob::_frame_size"),
		L(JVM_HS_CODEBLOB_CODE, "CodeBlob::_code_begin"),
		L(JVM_HS_CODEBLOB_SIZE, "CodeBlob::_size"),
		L(JVM_HS_CODEBLOB_FRAME_COMPLETE, "CodeBlob::_frame_complete_offset"),
		L(JVM_HS_NMETHOD_METHOD, "nmethod::_method"),
		L(JVM_HS_NMETHOD_COMPILE_ID, "nmethod::_compile_id"),
		L(JVM_HS_NMETHOD_SCOPES_DATA, "nmethod::_scopes_data_begin"),
		L(JVM_HS_NMETHOD_SCOPES_PCS, "nmethod::_scopes_pcs_offset"),
		L(JVM_HS_METHOD_CONSTMETHOD, "Method::_constMethod"),
		L(JVM_HS_CONSTMETHOD_CONSTANTS, "ConstMethod::_constants"),
		L(JVM_HS_CONSTMETHOD_NAME_INDEX, "ConstMethod::_name_index"),
		L(JVM_HS_CONSTMETHOD_SIGNATURE_INDEX, "ConstMethod::_signature_index"),
		L(JVM_HS_CONSTMETHOD_CODE_SIZE, "ConstMethod::_code_size"),
		L(JVM_HS_CONSTMETHOD_SIZE, "sizeof(ConstMethod)"),
		L(JVM_HS_CONSTANTPOOL_HOLDER, "ConstantPool::_pool_holder"),
		L(JVM_HS_CONSTANTPOOL_SIZE, "sizeof(ConstantPool)"),
		L(JVM_HS_KLASS_NAME, "Klass::_name"),
		L(JVM_HS_SYMBOL_LENGTH, "Symbol::_length"),
		L(JVM_HS_SYMBOL_BODY, "Symbol::_body"),
		L(JVM_HS_JAVATHREAD_ANCHOR, "JavaThread::_anchor"),
		L(JVM_HS_JAVATHREAD_OSTHREAD, "JavaThread::_osthread"),
		L(JVM_HS_JAVATHREAD_THREADOBJ, "JavaThread::_threadObj"),
		L(JVM_HS_OSTHREAD_THREAD_ID, "OSThread::_thread_id"),
		L(JVM_HS_ANCHOR_LAST_SP, "JavaFrameAnchor::_last_Java_sp"),
		L(JVM_HS_ANCHOR_LAST_PC, "JavaFrameAnchor::_last_Java_pc"),
		L(JVM_HS_ANCHOR_LAST_FP, "JavaFrameAnchor::_last_Java_fp"),
		L(JVM_HS_VM_RELEASE, "Abstract_VM_Version::_s_vm_release"),
		L(JVM_HS_CONSTMETHOD_FLAGS, "ConstMethod::_flags"),
		L(JVM_HS_CONSTMETHOD_TOTAL, "ConstMethod::_constMethod_size"),
		L(JVM_HS_CONSTANTPOOL_SOURCE_FILE, "ConstantPool::_source_file_name_index"),
		L(JVM_HS_NMETHOD_METADATA_OFFSET, "nmethod::_metadata_offset"),
		L(JVM_HS_NMETHOD_DEPENDENCIES, "nmethod::_dependencies_offset"),
		L(JVM_HS_NMETHOD_IMMUTABLE, "nmethod::_immutable_data"),
		L(JVM_HS_NMETHOD_IMMUTABLE_SIZE, "nmethod::_immutable_data_size"),
		L(JVM_HS_CODEBLOB_MUTABLE, "CodeBlob::_mutable_data"),
		L(JVM_HS_CODEBLOB_RELOCATION_SIZE, "CodeBlob::_relocation_size"),
		L(JVM_HS_CODEBLOB_MUTABLE_SIZE, "CodeBlob::_mutable_data_size"),
#undef L
	};

	return (unsigned)id < JVM_HS_COUNT ? labels[id] : NULL;
}

/* Looks entry @id up under each of its names; true when found. */
static bool extract_one(const struct jvm_vmstructs *vs, enum jvm_hs id, struct jvm_hotspot *hs)
{
	char type[JVM_VMS_NAME_MAX + 1], field[JVM_VMS_NAME_MAX + 1];
	const struct jvm_vms_field *f;
	unsigned t, n;

	for (t = 0; alt(hs_table[id].types, t, type, sizeof(type)); t++) {
		if (hs_table[id].kind == HS_SIZE) {
			const struct jvm_vms_type *ty = find_type(vs, type);

			if (!ty)
				continue;
			hs->val[id] = ty->size;
			hs->type[id] = ty->name;
			return true;
		}
		for (n = 0; alt(hs_table[id].fields, n, field, sizeof(field)); n++) {
			f = jvm_vmstructs__field(vs, type, field);
			if (!f || f->is_static != (hs_table[id].kind == HS_STATIC))
				continue;
			hs->val[id] = f->is_static ? f->address : f->offset;
			hs->type[id] = f->type;
			hs->field[id] = f->name;
			hs->width[id] = f->width;
			if (hs_table[id].offset_name && !strcmp(field, hs_table[id].offset_name))
				hs->is_offset |= 1ull << id;
			return true;
		}
	}
	return false;
}

int jvm_hotspot_extract(const struct jvm_vmstructs *vs, struct jvm_hotspot *hs)
{
	int missing = 0;
	unsigned i;

	memset(hs, 0, sizeof(*hs));
	for (i = 0; i < JVM_HS_COUNT; i++) {
		if (extract_one(vs, (enum jvm_hs)i, hs))
			hs->found |= 1ull << i;
		else if (!hs_table[i].optional)
			missing++;
	}
	return missing;
}
