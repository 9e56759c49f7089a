// SPDX-License-Identifier: Apache-2.0
/*
 * Builds an unwind table with libdw: dwarf_next_cfi() lists the FDEs (we decode only their
 * address ranges), then dwarf_cfi_addrframe() + dwarf_frame_info() walk each FDE row by row
 * and dwarf_frame_cfa()/dwarf_frame_register() say how each row unwinds. libdw does the CFA
 * program interpretation (remember/restore_state, advance_loc, CIE initial instructions); we
 * only classify its answers into the few shapes the BPF unwinder follows.
 */
#include "symbols/unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/array.h"
#include "symbols/elf_file.h"

_Static_assert(sizeof(struct unwind_row) == 12, "unwind_row is shared with BPF");

#define MAX_SECTIONS (1u << 20)
/*
 * libelf allocates per section header (elf_begin) and per section read (elf_getdata), libdw
 * reads (and inflates) every .debug_* section: claims are checked against these first.
 */
#define CLAIM_MAX_SECTIONS (1u << 16)
#define CLAIM_MAX_BYTES (64u << 20)
#define X86_64_REG_RBP 6
#define X86_64_REG_RSP 7
#define X86_64_REG_RA 16
/* In the x86-64 struct sigcontext: offset of rsp (gregs[REG_RSP]) from the block start. */
#define SIGCONTEXT_RSP 120
#define UNWIND_ROWS_MIN_CAP 1024

struct cie_info {
	uint64_t off;	 /* section offset */
	uint8_t fde_enc; /* DW_EH_PE_* of the FDEs' initial location */
};

struct fde_range {
	uint64_t lo, hi;
};

struct unwind_table {
	struct unwind_row *rows;
	size_t nrows, cap;
	struct unwind_table_stats stats;
};

struct builder {
	Elf *elf;
	const unsigned char *ident;
	Elf_Data *data;	   /* the CFI section */
	uint64_t sec_addr; /* its sh_addr, base of DW_EH_PE_pcrel */
	bool eh_frame;
	unsigned addr_size;
	struct cie_info *cies;
	size_t ncies, cies_cap;
	struct fde_range *fdes;
	size_t nfdes, fdes_cap;
	size_t max_rows;
	struct unwind_table *t;
};

static int read_fixed(const uint8_t **p, const uint8_t *end, unsigned n, bool sign, uint64_t *v)
{
	uint64_t r = 0;
	unsigned i;

	if ((size_t)(end - *p) < n)
		return -EINVAL;
	for (i = 0; i < n; i++) /* little-endian: x86-64 only */
		r |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && n < 8 && (r >> (8 * n - 1)) & 1)
		r |= ~0ull << (8 * n);
	*p += n;
	*v = r;
	return 0;
}

/*
 * Reads a DW_EH_PE-encoded pointer at *@p, whose ELF vaddr is @vaddr. Only what compilers put in
 * FDE ranges is accepted (absolute or pc-relative); anything else is -EINVAL.
 */
static int read_encoded(const struct builder *b, const uint8_t **p, const uint8_t *end, uint8_t enc,
			bool apply, uint64_t *v)
{
	uint64_t vaddr = b->sec_addr + (uint64_t)(*p - (const uint8_t *)b->data->d_buf);
	int64_t s = 0;
	int err;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		err = read_fixed(p, end, b->addr_size, false, v);
		break;
	case DW_EH_PE_uleb128:
		/* leb128's -ERANGE (over 64 bits) is malformed here too, not add_fde's range. */
		err = leb128_u64(p, end, v) ? -EINVAL : 0;
		break;
	case DW_EH_PE_udata2:
		err = read_fixed(p, end, 2, false, v);
		break;
	case DW_EH_PE_udata4:
		err = read_fixed(p, end, 4, false, v);
		break;
	case DW_EH_PE_udata8:
		err = read_fixed(p, end, 8, false, v);
		break;
	case DW_EH_PE_sleb128:
		err = leb128_s64(p, end, &s) ? -EINVAL : 0;
		*v = (uint64_t)s;
		break;
	case DW_EH_PE_sdata2:
		err = read_fixed(p, end, 2, true, v);
		break;
	case DW_EH_PE_sdata4:
		err = read_fixed(p, end, 4, true, v);
		break;
	case DW_EH_PE_sdata8:
		err = read_fixed(p, end, 8, true, v);
		break;
	default:
		return -EINVAL;
	}
	if (err || !apply)
		return err;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return 0;
	case DW_EH_PE_pcrel:
		*v += vaddr;
		return 0;
	default:
		return -EINVAL;
	}
}

/* The FDE pointer encoding from a CIE's augmentation ("zR", "zPLR", "zRS", ...). */
static int cie_fde_encoding(const struct builder *b, const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data, *end;
	const char *a = cie->augmentation;
	uint64_t dummy;
	uint8_t penc;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return a && a[0] ? -EINVAL : 0;
	if (!p && cie->augmentation_data_size)
		return -EINVAL;
	end = p + cie->augmentation_data_size;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EINVAL;
			*enc = *p++;
			break;
		case 'L':
			if (p >= end)
				return -EINVAL;
			p++;
			break;
		case 'P':
			if (p >= end)
				return -EINVAL;
			penc = *p++;
			if (read_encoded(b, &p, end, penc & 0x7f, false, &dummy))
				return -EINVAL;
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* 'z' says how long the data is: unknown letters after it are harmless. */
			return 0;
		}
	}
	return 0;
}

static const struct cie_info *find_cie(const struct builder *b, uint64_t off)
{
	size_t lo = 0, hi = b->ncies, mid;

	/* CIEs are recorded in section order, so by increasing offset. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->cies[mid].off == off)
			return &b->cies[mid];
		if (b->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int add_fde(struct builder *b, const Dwarf_FDE *fde)
{
	const struct cie_info *cie = find_cie(b, fde->CIE_pointer);
	const uint8_t *p = fde->start;
	uint64_t lo, len;
	int err;

	if (!cie || !p || fde->end < p)
		return -EINVAL;
	err = read_encoded(b, &p, fde->end, cie->fde_enc, true, &lo);
	if (!err)
		err = read_encoded(b, &p, fde->end, cie->fde_enc & 0x0f, false, &len);
	if (err)
		return err;
	/* Discarded sections leave FDEs of length 0 (or at address 0) behind: nothing to unwind. */
	if (!len || !lo)
		return 0;
	if (lo + len < lo)
		return -EINVAL;
	if (lo + len > UINT32_MAX)
		return -ERANGE;
	err = array_ensure((void **)&b->fdes, &b->fdes_cap, sizeof(*b->fdes), b->nfdes + 1);
	if (err)
		return err;
	b->fdes[b->nfdes++] = (struct fde_range){ lo, lo + len };
	b->t->stats.fdes++;
	return 0;
}

static int list_fdes(struct builder *b)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry ent;
	uint8_t enc;
	int rc, err;

	while (off < b->data->d_size) {
		rc = dwarf_next_cfi(b->ident, b->data, b->eh_frame, off, &next, &ent);
		if (rc > 0)
			break;
		if (rc < 0 || next <= off)
			return -EINVAL;
		if (dwarf_cfi_cie_p(&ent)) {
			err = cie_fde_encoding(b, &ent.cie, &enc);
			if (!err)
				err = array_ensure((void **)&b->cies, &b->cies_cap,
						   sizeof(*b->cies), b->ncies + 1);
			if (err)
				return err;
			b->cies[b->ncies++] = (struct cie_info){ off, enc };
		} else {
			err = add_fde(b, &ent.fde);
			if (err)
				return err;
		}
		off = next;
	}
	return 0;
}

/* CFA = rsp + 8 + ((rip & 15) >= N) * 8: what ld writes for .plt. Returns N or -1. */
static int plt_threshold(const Dwarf_Op *o, size_t n)
{
	if (n != 9 || o[0].atom != DW_OP_breg7 || o[0].number != 8 || o[1].atom != DW_OP_breg16 ||
	    o[1].number != 0 || o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 || o[5].atom != DW_OP_ge ||
	    o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return -1;
	return o[4].atom - DW_OP_lit0;
}

/* "Saved at CFA + off": [DW_OP_call_frame_cfa] or [.., DW_OP_plus_uconst off] (wrapping). */
static bool reg_at_cfa(const Dwarf_Op *o, size_t n, int64_t *off)
{
	if (n == 1 && o[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && o[0].atom == DW_OP_call_frame_cfa &&
	    (o[1].atom == DW_OP_plus_uconst || o[1].atom == DW_OP_consts)) {
		*off = (int64_t)o[1].number;
		return true;
	}
	return false;
}

static void classify(Dwarf_Frame *f, bool signal, struct unwind_row *r)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	int64_t off;
	int thr;

	r->cfa_type = UNWIND_CFA_UNSUPPORTED;
	if (dwarf_frame_cfa(f, &ops, &n) == 0 && n) {
		if (n == 1 && ops[0].atom == DW_OP_bregx &&
		    (ops[0].number == X86_64_REG_RSP || ops[0].number == X86_64_REG_RBP) &&
		    (int64_t)ops[0].number2 >= INT32_MIN && (int64_t)ops[0].number2 <= INT32_MAX) {
			r->cfa_type = ops[0].number == X86_64_REG_RSP ? UNWIND_CFA_RSP :
									UNWIND_CFA_RBP;
			r->cfa_offset = (__s32)(int64_t)ops[0].number2;
		} else if (signal && n == 2 && ops[0].atom == DW_OP_breg7 &&
			   ops[1].atom == DW_OP_deref && (int64_t)ops[0].number >= SIGCONTEXT_RSP &&
			   (int64_t)ops[0].number <= INT32_MAX) {
			r->cfa_type = UNWIND_CFA_SIGNAL;
			r->cfa_offset = (__s32)((int64_t)ops[0].number - SIGCONTEXT_RSP);
			return;
		} else if ((thr = plt_threshold(ops, n)) >= 0) {
			r->cfa_type = UNWIND_CFA_PLT;
			r->cfa_offset = thr;
		}
	}

	n = 0;
	ops = NULL;
	if (dwarf_frame_register(f, X86_64_REG_RA, mem, &ops, &n) == 0) {
		if (!n && ops == mem) {
			*r = (struct unwind_row){ .pc = r->pc, .cfa_type = UNWIND_CFA_END };
			return;
		}
		if (!reg_at_cfa(ops, n, &off) || off != -8)
			r->cfa_type = UNWIND_CFA_UNSUPPORTED;
	} else {
		r->cfa_type = UNWIND_CFA_UNSUPPORTED;
	}
	if (r->cfa_type == UNWIND_CFA_UNSUPPORTED) {
		r->cfa_offset = 0;
		return;
	}

	n = 0;
	ops = NULL;
	if (dwarf_frame_register(f, X86_64_REG_RBP, mem, &ops, &n) != 0) {
		r->rbp_type = UNWIND_RBP_UNDEFINED;
	} else if (!n) {
		r->rbp_type = ops ? UNWIND_RBP_UNDEFINED : UNWIND_RBP_SAME;
	} else if (reg_at_cfa(ops, n, &off) && off >= INT16_MIN && off <= INT16_MAX) {
		r->rbp_type = UNWIND_RBP_OFFSET;
		r->rbp_offset = (__s16)off;
	} else {
		r->rbp_type = UNWIND_RBP_UNDEFINED;
	}
}

static int push_row(struct builder *b, const struct unwind_row *r)
{
	struct unwind_table *t = b->t;
	int err;

	t->stats.rows_raw++;
	if (t->nrows) {
		struct unwind_row *last = &t->rows[t->nrows - 1];

		if (last->pc == r->pc) {
			*last = *r;
			return 0;
		}
		if (last->cfa_type == r->cfa_type && last->cfa_offset == r->cfa_offset &&
		    last->rbp_type == r->rbp_type && last->rbp_offset == r->rbp_offset)
			return 0;
	}
	if (t->nrows >= b->max_rows)
		return -E2BIG;
	err = array_ensure((void **)&t->rows, &t->cap, sizeof(*t->rows), t->nrows + 1);
	if (err)
		return err;
	t->rows[t->nrows++] = *r;
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int walk_fdes(struct builder *b, Dwarf_CFI *cfi)
{
	struct unwind_row none = { .cfa_type = UNWIND_CFA_NONE }, r;
	uint64_t pc, prev_end = 0;
	Dwarf_Addr start, end;
	Dwarf_Frame *f;
	bool signal;
	size_t i;
	int err;

	qsort(b->fdes, b->nfdes, sizeof(*b->fdes), fde_cmp);
	for (i = 0; i < b->nfdes; i++) {
		const struct fde_range *fr = &b->fdes[i];

		pc = fr->lo > prev_end ? fr->lo : prev_end;
		if (pc >= fr->hi)
			continue; /* covered by an earlier, overlapping FDE */
		if (prev_end && pc > prev_end) {
			none.pc = (__u32)prev_end;
			err = push_row(b, &none);
			if (err)
				return err;
		}
		while (pc < fr->hi) {
			if (dwarf_cfi_addrframe(cfi, pc, &f))
				return -EINVAL;
			if (dwarf_frame_info(f, &start, &end, &signal) < 0 || end <= pc) {
				free(f);
				return -EINVAL;
			}
			r = (struct unwind_row){ .pc = (__u32)pc };
			classify(f, signal, &r);
			free(f);
			err = push_row(b, &r);
			if (err)
				return err;
			pc = end < fr->hi ? end : fr->hi;
		}
		prev_end = fr->hi;
	}
	if (prev_end) {
		none.pc = (__u32)prev_end;
		return push_row(b, &none);
	}
	return 0;
}

static void count_unsupported(struct unwind_table *t)
{
	size_t i;

	t->stats.unsupported = 0;
	for (i = 0; i < t->nrows; i++)
		t->stats.unsupported += t->rows[i].cfa_type == UNWIND_CFA_UNSUPPORTED;
}

static Elf_Scn *find_section(Elf *e, size_t shstrndx, const char *want, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want)) {
			*out = sh;
			return scn;
		}
	}
	return NULL;
}

/* The bytes section @sh takes once read: its size, or for SHF_COMPRESSED what it inflates to. */
static int claimed_size(const struct elf_file *ef, const Elf64_Shdr *sh, uint64_t *sz)
{
	Elf64_Chdr ch;
	int err;

	*sz = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
	if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_type == SHT_NOBITS)
		return 0;
	if (sh->sh_size < sizeof(ch))
		return -EINVAL;
	err = elf_file__read_into(ef, sh->sh_offset, sizeof(ch), &ch);
	if (err)
		return err;
	*sz = ch.ch_size > sh->sh_size ? ch.ch_size : sh->sh_size;
	return 0;
}

/*
 * Whether libelf and libdw would read section @i: the section names, the CFI sections, and
 * (for .debug_frame, which goes through dwarf_begin_elf) every .debug_* one.
 */
static bool claim_counts(const struct elf_file *ef, size_t i, size_t shstrndx, bool has_eh)
{
	const char *name = elf_file__section_name(ef, i);

	if (i == shstrndx || !strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr"))
		return true;
	return !has_eh && (!strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7));
}

/*
 * Checks with our own bounded preads (elf_file) what elf_begin(), elf_getdata() and
 * dwarf_begin_elf() would allocate, before they see the file: the section count, and the
 * sections claim_counts() names, each and together at most CLAIM_MAX_BYTES and backed by
 * data (elf_file__backed(): a sparse file claiming gigabytes of holes). Returns 0, -E2BIG
 * over a limit, -EINVAL (not an ELF, or a section table elf_file ignores), -EFBIG, -errno.
 */
static int check_claims(int fd, uint64_t max_file)
{
	struct elf_file *ef;
	const Elf64_Shdr *sh;
	uint64_t sz, total = 0;
	size_t i, n, shstrndx;
	bool has_eh;
	int err;

	err = elf_file__open(fd, &(struct elf_file_opts){ .max_file_size = max_file }, &ef);
	if (err)
		return err;
	n = elf_file__shnum(ef);
	shstrndx = elf_file__ehdr(ef)->e_shstrndx;
	if (shstrndx == SHN_XINDEX && n)
		shstrndx = elf_file__shdr(ef, 0)->sh_link;
	has_eh = elf_file__section(ef, ".eh_frame", NULL) > 0;
	err = elf_file__shdrs_ignored(ef) ? -EINVAL : n > CLAIM_MAX_SECTIONS ? -E2BIG : 0;
	for (i = 1; i < n && !err; i++) {
		if (!claim_counts(ef, i, shstrndx, has_eh))
			continue;
		sh = elf_file__shdr(ef, i);
		err = claimed_size(ef, sh, &sz);
		if (!err && (sz > CLAIM_MAX_BYTES - total || !elf_file__backed(ef, sz)))
			err = -E2BIG;
		total += err ? 0 : sz;
	}
	elf_file__free(ef);
	return err;
}

static int build(Elf *e, uint64_t file_size, size_t max_rows, struct unwind_table *t)
{
	struct builder b = { .elf = e, .max_rows = max_rows, .t = t };
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	size_t shnum, shstrndx;
	Elf_Scn *scn;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int err;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(e) != ELFCLASS64)
		return -EINVAL;
	/* libelf quietly drops section headers past the end of the file: that file is cut. */
	if (eh.e_shoff && (eh.e_shoff > file_size ||
			   (uint64_t)eh.e_shnum * eh.e_shentsize > file_size - eh.e_shoff))
		return -EINVAL;
	/* No section headers (sstrip): PT_GNU_EH_FRAME is not followed, the file has no CFI. */
	if (elf_getshdrnum(e, &shnum) || shnum > MAX_SECTIONS)
		return -EINVAL;
	if (!shnum)
		return 0;
	if (elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	b.ident = (const unsigned char *)elf_getident(e, NULL);
	b.addr_size = 8;
	if (!b.ident || b.ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;

	scn = find_section(e, shstrndx, ".eh_frame", &sh);
	if (scn) {
		b.eh_frame = true;
		t->stats.source = UNWIND_SRC_EH_FRAME;
	} else {
		scn = find_section(e, shstrndx, ".debug_frame", &sh);
		if (!scn)
			return 0;
		t->stats.source = UNWIND_SRC_DEBUG_FRAME;
	}
	/* Compressed .debug_frame (SHF_COMPRESSED) is not read: the notes count it as no CFI. */
	if (sh.sh_flags & SHF_COMPRESSED) {
		t->stats.source = UNWIND_SRC_NONE;
		return 0;
	}
	if (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)
		return -EINVAL;
	b.data = elf_getdata(scn, NULL);
	if (!b.data || !b.data->d_buf || b.data->d_size != sh.sh_size)
		return -EINVAL;
	b.sec_addr = sh.sh_addr;

	err = list_fdes(&b);
	if (err || !b.nfdes)
		goto out;
	if (b.eh_frame) {
		cfi = dwarf_getcfi_elf(e);
	} else {
		dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
		cfi = dw ? dwarf_getcfi(dw) : NULL;
	}
	if (!cfi) {
		err = -EINVAL;
		goto out;
	}
	err = walk_fdes(&b, cfi);
	count_unsupported(t);
out:
	if (cfi && b.eh_frame)
		dwarf_cfi_end(cfi);
	if (dw)
		dwarf_end(dw);
	free(b.cies);
	free(b.fdes);
	return err;
}

int unwind_table__from_fd(int fd, const struct unwind_table_opts *opts, struct unwind_table **out)
{
	struct unwind_table_opts o = opts ? *opts : (struct unwind_table_opts){ 0 };
	struct unwind_table *t;
	struct unwind_row *shrunk;
	struct stat sb;
	Elf *e;
	int err;

	if (fd < 0 || !out)
		return -EINVAL;
	if (!o.max_rows)
		o.max_rows = UNWIND_TABLE_MAX_ROWS_DEFAULT;
	if (!o.max_file_size)
		o.max_file_size = UNWIND_TABLE_MAX_FILE_DEFAULT;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	if ((uint64_t)sb.st_size > o.max_file_size)
		return -EFBIG;
	err = check_claims(fd, o.max_file_size);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	/* ELF_C_READ reads with pread: a file truncated under us gives an error, not SIGBUS. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		err = -EINVAL;
		goto err_free;
	}
	err = build(e, (uint64_t)sb.st_size, o.max_rows, t);
	elf_end(e);
	if (err)
		goto err_free;
	if (t->nrows && t->nrows < t->cap) {
		shrunk = realloc(t->rows, t->nrows * sizeof(*t->rows));
		if (shrunk) {
			t->rows = shrunk;
			t->cap = t->nrows;
		}
	}
	*out = t;
	return 0;

err_free:
	unwind_table__free(t);
	return err;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *n)
{
	*n = t->nrows;
	return t->rows;
}

void unwind_table__stats(const struct unwind_table *t, struct unwind_table_stats *st)
{
	*st = t->stats;
}

const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nrows, mid;

	if (!t->nrows || pc < t->rows[0].pc)
		return NULL;
	/* The last row with row.pc <= pc. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

const char *unwind_cfa_type_str(unsigned cfa_type)
{
	static const char *const names[] = {
		[UNWIND_CFA_NONE] = "none",
		[UNWIND_CFA_RSP] = "rsp",
		[UNWIND_CFA_RBP] = "rbp",
		[UNWIND_CFA_PLT] = "plt",
		[UNWIND_CFA_SIGNAL] = "signal",
		[UNWIND_CFA_END] = "end",
		[UNWIND_CFA_UNSUPPORTED] = "unsupported",
	};

	return cfa_type < sizeof(names) / sizeof(names[0]) ? names[cfa_type] : "?";
}
