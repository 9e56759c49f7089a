// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "bpf/unwind.h"
#include "runtimes/jvm/jvm_scopes.h"

/* Heads read at once: every field used lies inside (checked against the offsets). */
#define HEAD_MAX 512u
/* A Symbol's bytes read at most (longer names are cut). */
#define SYMBOL_READ_MAX 512u
/* The first four bytes of an nmethod's name ("nmethod", "native nmethod"). */
#define NAME_NMETHOD 0x74656d6eu
#define NAME_NATIVE 0x6974616eu

struct jm_method {
	uint64_t method; /* 0: free slot */
	uint64_t code;	 /* its bytecodes: [code, code + code_size) */
	uint32_t code_size;
	char name[JVM_NAME_MAX];
	char file[JVM_FILE_MAX];
	uint8_t *lines; /* the compressed line number table, NULL if none */
	size_t nlines;
};

struct jm_nmethod {
	uint64_t nm; /* 0: free slot */
	uint32_t compile_id;
	uint64_t method;
	uint64_t code; /* code start: PcDesc offsets count from it */
	uint8_t *pcs, *scopes;
	size_t npcs, nscopes;
	uint64_t *meta;
	size_t nmeta;
};

struct jvm_names {
	struct jvm_hotspot hs;
	unsigned excl; /* UNSIGNED5's excluded byte: 1 from JDK 20 */
	jvm_read_fn_t read;
	void *ctx;
	struct jm_method *methods;
	struct jm_nmethod *nms;
};

unsigned jvm_release_major(const char *release)
{
	unsigned long v;
	char *end;

	if (!release || release[0] < '1' || release[0] > '9')
		return 0;
	v = strtoul(release, &end, 10);
	if (v == 1 && *end == '.') /* "1.8.0_392" */
		v = strtoul(end + 1, &end, 10);
	return v < 1000 ? (unsigned)v : 0;
}

static const enum jvm_hs needed[] = {
	JVM_HS_CODEBLOB_NAME,
	JVM_HS_CODEBLOB_CODE,
	JVM_HS_NMETHOD_METHOD,
	JVM_HS_NMETHOD_COMPILE_ID,
	JVM_HS_NMETHOD_SCOPES_DATA,
	JVM_HS_NMETHOD_SCOPES_PCS,
	JVM_HS_METHOD_CONSTMETHOD,
	JVM_HS_CONSTMETHOD_CONSTANTS,
	JVM_HS_CONSTMETHOD_NAME_INDEX,
	JVM_HS_CONSTMETHOD_CODE_SIZE,
	JVM_HS_CONSTMETHOD_SIZE,
	JVM_HS_CONSTANTPOOL_HOLDER,
	JVM_HS_CONSTANTPOOL_SIZE,
	JVM_HS_KLASS_NAME,
	JVM_HS_SYMBOL_LENGTH,
	JVM_HS_SYMBOL_BODY,
	JVM_HS_CONSTMETHOD_FLAGS,
	JVM_HS_CONSTMETHOD_TOTAL,
	JVM_HS_CONSTANTPOOL_SOURCE_FILE,
};

/* True when @hs has @id and every field it names fits a head of HEAD_MAX bytes. */
static bool have(const struct jvm_hotspot *hs, enum jvm_hs id)
{
	return (hs->found >> id & 1) && hs->val[id] <= HEAD_MAX - 8;
}

/* True when field @id (of @width bytes) lies inside the head of type size @size. */
static bool inside(const struct jvm_hotspot *hs, enum jvm_hs id, unsigned width, enum jvm_hs size)
{
	return hs->val[size] <= HEAD_MAX && width <= hs->val[size] &&
	       hs->val[id] <= hs->val[size] - width;
}

int jvm_names__new(const struct jvm_hotspot *hs, unsigned major, jvm_read_fn_t read, void *ctx,
		   struct jvm_names **out)
{
	struct jvm_names *jn;
	size_t i;

	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!have(hs, needed[i]))
			return -ENOTSUP;
	/* the heads are read as long as their types: every field used must lie inside */
	if (!inside(hs, JVM_HS_CONSTMETHOD_CONSTANTS, 8, JVM_HS_CONSTMETHOD_SIZE) ||
	    !inside(hs, JVM_HS_CONSTMETHOD_NAME_INDEX, 2, JVM_HS_CONSTMETHOD_SIZE) ||
	    !inside(hs, JVM_HS_CONSTMETHOD_CODE_SIZE, 2, JVM_HS_CONSTMETHOD_SIZE) ||
	    !inside(hs, JVM_HS_CONSTMETHOD_FLAGS, 2, JVM_HS_CONSTMETHOD_SIZE) ||
	    !inside(hs, JVM_HS_CONSTMETHOD_TOTAL, 4, JVM_HS_CONSTMETHOD_SIZE) ||
	    !inside(hs, JVM_HS_CONSTANTPOOL_HOLDER, 8, JVM_HS_CONSTANTPOOL_SIZE) ||
	    !inside(hs, JVM_HS_CONSTANTPOOL_SOURCE_FILE, 2, JVM_HS_CONSTANTPOOL_SIZE))
		return -ENOTSUP;
	jn = calloc(1, sizeof(*jn));
	if (!jn)
		return -ENOMEM;
	jn->hs = *hs;
	jn->excl = major >= 20;
	jn->read = read;
	jn->ctx = ctx;
	jn->methods = calloc(JVM_NAMES_METHODS, sizeof(*jn->methods));
	jn->nms = calloc(JVM_NAMES_NMETHODS, sizeof(*jn->nms));
	if (!jn->methods || !jn->nms) {
		jvm_names__free(jn);
		return -ENOMEM;
	}
	*out = jn;
	return 0;
}

static void nm_clear(struct jm_nmethod *n)
{
	free(n->pcs);
	free(n->scopes);
	free(n->meta);
	memset(n, 0, sizeof(*n));
}

void jvm_names__free(struct jvm_names *jn)
{
	size_t i;

	if (!jn)
		return;
	for (i = 0; jn->methods && i < JVM_NAMES_METHODS; i++)
		free(jn->methods[i].lines);
	for (i = 0; jn->nms && i < JVM_NAMES_NMETHODS; i++)
		nm_clear(&jn->nms[i]);
	free(jn->methods);
	free(jn->nms);
	free(jn);
}

/* --- reading ---------------------------------------------------------------------------- */

static uint64_t u64_at(const uint8_t *head, uint64_t off)
{
	uint64_t v;

	memcpy(&v, head + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *head, uint64_t off)
{
	uint32_t v;

	memcpy(&v, head + off, sizeof(v));
	return v;
}

static uint16_t u16_at(const uint8_t *head, uint64_t off)
{
	uint16_t v;

	memcpy(&v, head + off, sizeof(v));
	return v;
}

static int rd(struct jvm_names *jn, uint64_t addr, void *buf, size_t n)
{
	if (!addr || addr >= (1ull << 47))
		return -EFAULT;
	return jn->read(jn->ctx, addr, buf, n);
}

static int rd_u64(struct jvm_names *jn, uint64_t addr, uint64_t *v)
{
	return rd(jn, addr, v, sizeof(*v));
}

/* The Symbol at @sym as text (valid UTF-8; cut to fit @size). */
static int read_symbol(struct jvm_names *jn, uint64_t sym, char *buf, size_t size)
{
	char body[SYMBOL_READ_MAX];
	uint16_t len = 0;
	int err;

	err = rd(jn, sym + jn->hs.val[JVM_HS_SYMBOL_LENGTH], &len, sizeof(len));
	if (err)
		return err;
	if (len > sizeof(body))
		len = sizeof(body);
	if (len) {
		err = rd(jn, sym + jn->hs.val[JVM_HS_SYMBOL_BODY], body, len);
		if (err)
			return err;
	}
	text_utf8_sanitize_copy(buf, size, body, len);
	return 0;
}

/* The Symbol in slot @index of the constant pool at @cp. */
static int cp_symbol(struct jvm_names *jn, uint64_t cp, uint16_t index, char *buf, size_t size)
{
	uint64_t sym;
	int err;

	if (!index)
		return -ENOENT;
	err = rd_u64(jn, cp + jn->hs.val[JVM_HS_CONSTANTPOOL_SIZE] + 8ull * index, &sym);
	if (err)
		return err;
	return read_symbol(jn, sym & ~1ull, buf, size);
}

/* "java/lang/Thread" -> "java.lang.Thread"; a hidden class's address suffix ("/0x" or "+0x" and
 * hex digits to the end) dropped: one name for every lambda of a site, not one per class. */
static void java_class_name(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if ((*p == '/' || *p == '+') && p[1] == '0' && p[2] == 'x' && p[3] &&
		    strspn(p + 3, "0123456789abcdefABCDEF") == strlen(p + 3)) {
			*p = '\0';
			break;
		}
		if (*p == '/')
			*p = '.';
	}
}

/* "@klass.@meth" into @buf, cut on a character boundary. */
static void join_name(char *buf, size_t size, const char *klass, const char *meth)
{
	size_t k = strnlen(klass, size - 1), m;

	memcpy(buf, klass, k);
	if (k + 1 < size)
		buf[k++] = '.';
	m = strnlen(meth, size - 1 - k);
	memcpy(buf + k, meth, m);
	buf[k + m] = '\0';
	text_utf8_trim_partial(buf);
}

/* --- methods ---------------------------------------------------------------------------- */

static struct jm_method *method_slot(struct jvm_names *jn, uint64_t m)
{
	return &jn->methods[((m >> 3) * 0x9e3779b97f4a7c15ull >> 54) & (JVM_NAMES_METHODS - 1)];
}

/* The line number table after the bytecodes at @code (inside the ConstMethod of @total bytes). */
static void read_lines(struct jvm_names *jn, struct jm_method *e, uint64_t cm, uint64_t total)
{
	uint64_t start = e->code + e->code_size, n;

	if (start >= cm + total)
		return;
	n = cm + total - start;
	if (n > JVM_NAMES_LINES_MAX)
		n = JVM_NAMES_LINES_MAX;
	e->lines = malloc(n);
	if (!e->lines)
		return;
	if (rd(jn, start, e->lines, n)) {
		free(e->lines);
		e->lines = NULL;
		return;
	}
	e->nlines = n;
}

/* Reads Method* @m into @e: its name "Class.method", file, bytecodes and line table. */
static int method_load(struct jvm_names *jn, uint64_t m, struct jm_method *e)
{
	const struct jvm_hotspot *hs = &jn->hs;
	uint8_t cmh[HEAD_MAX], cph[HEAD_MAX];
	char klass[JVM_NAME_MAX], meth[JVM_NAME_MAX];
	uint64_t cm, cp, holder, kname, total;
	uint16_t flags;
	int err;

	free(e->lines);
	memset(e, 0, sizeof(*e));
	err = rd_u64(jn, m + hs->val[JVM_HS_METHOD_CONSTMETHOD], &cm);
	if (!err)
		err = rd(jn, cm, cmh, hs->val[JVM_HS_CONSTMETHOD_SIZE]);
	if (err)
		return err;
	cp = u64_at(cmh, hs->val[JVM_HS_CONSTMETHOD_CONSTANTS]);
	err = rd(jn, cp, cph, hs->val[JVM_HS_CONSTANTPOOL_SIZE]);
	if (err)
		return err;
	holder = u64_at(cph, hs->val[JVM_HS_CONSTANTPOOL_HOLDER]);
	err = rd_u64(jn, holder + hs->val[JVM_HS_KLASS_NAME], &kname);
	if (!err)
		err = read_symbol(jn, kname, klass, sizeof(klass));
	if (!err)
		err = cp_symbol(jn, cp, u16_at(cmh, hs->val[JVM_HS_CONSTMETHOD_NAME_INDEX]), meth,
				sizeof(meth));
	if (err)
		return err;
	java_class_name(klass);
	join_name(e->name, sizeof(e->name), klass, meth);
	if (cp_symbol(jn, cp, u16_at(cph, hs->val[JVM_HS_CONSTANTPOOL_SOURCE_FILE]), e->file,
		      sizeof(e->file)))
		e->file[0] = '\0';
	e->code = cm + hs->val[JVM_HS_CONSTMETHOD_SIZE];
	e->code_size = u16_at(cmh, hs->val[JVM_HS_CONSTMETHOD_CODE_SIZE]);
	total = 8ull * u32_at(cmh, hs->val[JVM_HS_CONSTMETHOD_TOTAL]);
	flags = u16_at(cmh, hs->val[JVM_HS_CONSTMETHOD_FLAGS]);
	if ((flags & 1) && total <= (1u << 20)) /* has_linenumber_table */
		read_lines(jn, e, cm, total);
	e->method = m;
	return 0;
}

static int method_get(struct jvm_names *jn, uint64_t m, struct jm_method **out)
{
	struct jm_method *e = method_slot(jn, m);
	int err;

	if (e->method != m) {
		err = method_load(jn, m, e);
		if (err)
			return err;
	}
	*out = e;
	return 0;
}

static void method_frame(struct jvm_names *jn, const struct jm_method *e, int32_t bci,
			 enum jvm_frame_kind kind, struct jvm_frame *f)
{
	uint32_t line = 0;

	memcpy(f->name, e->name, sizeof(f->name));
	memcpy(f->file, e->file, sizeof(f->file));
	if (e->lines && jvm_line_of(e->lines, e->nlines, jn->excl, bci < 0 ? 0 : bci, &line))
		line = 0;
	f->line = line;
	f->kind = kind;
}

static int interpreted(struct jvm_names *jn, uint64_t m, uint64_t bcp, struct jvm_frame *out)
{
	struct jm_method *e;
	int err = method_get(jn, m, &e);

	if (err)
		return err;
	if (bcp < e->code || bcp >= e->code + e->code_size) {
		/* the slot may be another method's now: read it again once */
		err = method_load(jn, m, e);
		if (err)
			return err;
		if (bcp < e->code || bcp >= e->code + e->code_size)
			return -ESTALE;
	}
	method_frame(jn, e, (int32_t)(bcp - e->code), JVM_FRAME_INTERPRETED, out);
	return 1;
}

/* --- compiled methods ------------------------------------------------------------------- */

/* A NUL-terminated string of the JVM (a blob's name) into @buf, read a page at a time. */
static int read_cstr(struct jvm_names *jn, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0, n;
	char tmp[128];
	char *nul;
	int err;

	while (got + 1 < size && got < sizeof(tmp)) {
		n = 4096 - ((addr + got) & 4095);
		if (n > sizeof(tmp) - got)
			n = sizeof(tmp) - got;
		err = rd(jn, addr + got, tmp + got, n);
		if (err)
			return got ? 0 : err;
		nul = memchr(tmp + got, '\0', n);
		got += nul ? (size_t)(nul - (tmp + got)) : n;
		if (nul)
			break;
	}
	text_utf8_sanitize_copy(buf, size, tmp, got < size ? got : size - 1);
	return 0;
}

/* Copies [@begin, @end) of the JVM into *@out (at most @max bytes). */
static int read_region(struct jvm_names *jn, uint64_t begin, uint64_t end, size_t max,
		       uint8_t **out, size_t *n)
{
	uint8_t *buf;
	int err;

	if (end < begin)
		return -EBADMSG;
	if (end - begin > max)
		return -E2BIG;
	if (end == begin)
		return 0;
	buf = malloc(end - begin);
	if (!buf)
		return -ENOMEM;
	err = rd(jn, begin, buf, end - begin);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*n = end - begin;
	return 0;
}

static int32_t i32_at(const uint8_t *head, uint64_t off)
{
	return (int32_t)u32_at(head, off);
}

/* The PcDesc, scopes and metadata regions of the nmethod @nm with head @h, by JDK layout:
 * 17-22 keep them in the code blob, 23+ the first two in "immutable data" outside it and, 25+,
 * the metadata after the relocations in "mutable data". Unknown layouts get none. */
static int nm_regions(struct jvm_names *jn, uint64_t nm, const uint8_t *h, struct jm_nmethod *e)
{
	const struct jvm_hotspot *hs = &jn->hs;
	uint64_t pcs, pcs_end, sd, sd_end, md, md_end, imm, mut;
	uint8_t *meta = NULL;
	int err;

	if (!(hs->is_offset >> JVM_HS_NMETHOD_SCOPES_DATA & 1) &&
	    have(hs, JVM_HS_NMETHOD_METADATA_OFFSET) && have(hs, JVM_HS_NMETHOD_DEPENDENCIES)) {
		sd = u64_at(h, hs->val[JVM_HS_NMETHOD_SCOPES_DATA]);
		sd_end = pcs = nm + i32_at(h, hs->val[JVM_HS_NMETHOD_SCOPES_PCS]);
		pcs_end = nm + i32_at(h, hs->val[JVM_HS_NMETHOD_DEPENDENCIES]);
		md = nm + i32_at(h, hs->val[JVM_HS_NMETHOD_METADATA_OFFSET]);
		md_end = sd;
	} else if (have(hs, JVM_HS_NMETHOD_IMMUTABLE) && have(hs, JVM_HS_NMETHOD_IMMUTABLE_SIZE) &&
		   have(hs, JVM_HS_CODEBLOB_MUTABLE) && have(hs, JVM_HS_CODEBLOB_RELOCATION_SIZE) &&
		   have(hs, JVM_HS_CODEBLOB_MUTABLE_SIZE)) {
		imm = u64_at(h, hs->val[JVM_HS_NMETHOD_IMMUTABLE]);
		pcs = imm + i32_at(h, hs->val[JVM_HS_NMETHOD_SCOPES_PCS]);
		pcs_end = sd = imm + i32_at(h, hs->val[JVM_HS_NMETHOD_SCOPES_DATA]);
		sd_end = imm + i32_at(h, hs->val[JVM_HS_NMETHOD_IMMUTABLE_SIZE]);
		mut = u64_at(h, hs->val[JVM_HS_CODEBLOB_MUTABLE]);
		md = mut + i32_at(h, hs->val[JVM_HS_CODEBLOB_RELOCATION_SIZE]);
		md_end = mut + i32_at(h, hs->val[JVM_HS_CODEBLOB_MUTABLE_SIZE]);
	} else {
		return 0;
	}
	err = read_region(jn, pcs, pcs_end, JVM_NAMES_PCS_MAX, &e->pcs, &e->npcs);
	if (!err)
		err = read_region(jn, sd, sd_end, JVM_NAMES_SCOPES_MAX, &e->scopes, &e->nscopes);
	if (!err)
		err = read_region(jn, md, md_end & ~7ull, JVM_NAMES_METADATA_MAX, &meta, &e->nmeta);
	e->meta = (uint64_t *)meta;
	e->nmeta /= 8;
	return err;
}

static int nm_load(struct jvm_names *jn, uint64_t nm, uint32_t cid, struct jm_nmethod *e)
{
	const struct jvm_hotspot *hs = &jn->hs;
	uint8_t h[HEAD_MAX];
	uint32_t tag = 0;
	int err;

	nm_clear(e);
	err = rd(jn, nm, h, sizeof(h));
	if (!err)
		err = rd(jn, u64_at(h, hs->val[JVM_HS_CODEBLOB_NAME]), &tag, sizeof(tag));
	if (err)
		return err == -EFAULT ? -ESTALE : err;
	/* freed and reused by another blob, or recompiled under another id */
	if ((tag != NAME_NMETHOD && tag != NAME_NATIVE) ||
	    u32_at(h, hs->val[JVM_HS_NMETHOD_COMPILE_ID]) != cid)
		return -ESTALE;
	e->method = u64_at(h, hs->val[JVM_HS_NMETHOD_METHOD]);
	e->code = (hs->is_offset >> JVM_HS_CODEBLOB_CODE & 1) ?
			  nm + u32_at(h, hs->val[JVM_HS_CODEBLOB_CODE]) :
			  u64_at(h, hs->val[JVM_HS_CODEBLOB_CODE]);
	err = nm_regions(jn, nm, h, e);
	if (err == -E2BIG || err == -EBADMSG) {
		/* a method too large to expand, or odd regions: named by its own method */
		free(e->pcs);
		free(e->scopes);
		free(e->meta);
		e->pcs = e->scopes = NULL;
		e->meta = NULL;
		e->npcs = e->nscopes = e->nmeta = 0;
		err = 0;
	}
	if (err)
		return err;
	e->nm = nm;
	e->compile_id = cid;
	return 0;
}

/*
 * The scopes at pc offset @off of @e into @sc. A return address has its own PcDesc. A sampled
 * leaf pc mostly has none: HotSpot records debug information only at safepoints and calls
 * (unless -XX:+DebugNonSafepoints), so the pc lies between two. HotSpot's own rule takes the
 * one after it; between an inlined method's last safepoint (its loop's poll) and its caller's
 * next one, that names the caller for code that is mostly the inlined method's, so of the two
 * neighbours the more deeply inlined one is taken (ties: the one after).
 */
static int pc_scopes(struct jvm_names *jn, const struct jm_nmethod *e, int32_t off, bool leaf,
		     struct jvm_scope *sc, size_t max)
{
	struct jvm_scope prev[JVM_SCOPES_MAX];
	size_t idx;
	int n, np;

	if (jvm_pcdesc_find(e->pcs, e->npcs, JVM_PCDESC_SIZE, off, &idx))
		return 0;
	n = jvm_scopes_decode(e->scopes, e->nscopes, jn->excl,
			      jvm_pcdesc_scope(e->pcs, JVM_PCDESC_SIZE, idx), sc, max);
	/* entry 0 is HotSpot's sentinel (pc offset -1) */
	if (!leaf || idx < 2 || n < 0 || i32_at(e->pcs, idx * JVM_PCDESC_SIZE) == off)
		return n;
	np = jvm_scopes_decode(e->scopes, e->nscopes, jn->excl,
			       jvm_pcdesc_scope(e->pcs, JVM_PCDESC_SIZE, idx - 1), prev, max);
	if (np > n) {
		memcpy(sc, prev, (size_t)np * sizeof(*sc));
		n = np;
	}
	return n;
}

/* Frame @i of a compiled frame of @n scopes: the outermost is the compiled method. */
static enum jvm_frame_kind scope_kind(size_t i, size_t n)
{
	return i + 1 < n ? JVM_FRAME_INLINED : JVM_FRAME_COMPILED;
}

static int compiled(struct jvm_names *jn, uint64_t nm, uint64_t cookie, struct jvm_frame *out,
		    size_t max)
{
	struct jm_nmethod *e =
		&jn->nms[((nm >> 4) * 0x9e3779b97f4a7c15ull >> 57) & (JVM_NAMES_NMETHODS - 1)];
	struct jvm_scope sc[JVM_SCOPES_MAX];
	uint32_t cid = (uint32_t)(cookie >> 32);
	uint64_t pc = nm + ((uint32_t)cookie & ~UW_JAVA_LEAF);
	struct jm_method *m;
	int n = 0, err;
	size_t i;

	if (e->nm != nm || e->compile_id != cid) {
		err = nm_load(jn, nm, cid, e);
		if (err)
			return err;
	}
	if (e->npcs && pc >= e->code && pc - e->code < INT32_MAX)
		n = pc_scopes(jn, e, (int32_t)(pc - e->code), (uint32_t)cookie & UW_JAVA_LEAF, sc,
			      max);
	if (n <= 0) {
		/* no scope at that pc (a native wrapper, a stub section): the method itself */
		err = method_get(jn, e->method, &m);
		if (err)
			return err;
		method_frame(jn, m, -1, JVM_FRAME_COMPILED, &out[0]);
		return 1;
	}
	for (i = 0; i < (size_t)n; i++) {
		if (!sc[i].method_index || sc[i].method_index > e->nmeta)
			return -EBADMSG;
		err = method_get(jn, e->meta[sc[i].method_index - 1], &m);
		if (err)
			return err;
		method_frame(jn, m, sc[i].bci, scope_kind(i, (size_t)n), &out[i]);
	}
	return n;
}

static int stub(struct jvm_names *jn, uint64_t blob, struct jvm_frame *out)
{
	uint64_t name;
	int err = rd_u64(jn, blob + jn->hs.val[JVM_HS_CODEBLOB_NAME], &name);

	if (!err)
		err = read_cstr(jn, name, out->name, sizeof(out->name));
	if (err)
		return err == -EFAULT ? -ESTALE : err;
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "[JVM stub]");
	out->file[0] = '\0';
	out->line = 0;
	out->kind = JVM_FRAME_STUB;
	return 1;
}

int jvm_names__frame(struct jvm_names *jn, uint64_t word, uint64_t cookie, struct jvm_frame *out,
		     size_t max)
{
	uint64_t addr = word & UW_JAVA_ADDR_MASK;

	if (!(word & UW_JAVA_TAG) || !max)
		return -EINVAL;
	switch ((word & ~UW_JAVA_TAG) >> UW_JAVA_KIND_SHIFT) {
	case UW_JAVA_COMPILED:
		return compiled(jn, addr, cookie, out, max);
	case UW_JAVA_INTERPRETED:
		return interpreted(jn, addr, cookie, out);
	case UW_JAVA_STUB:
		return stub(jn, addr, out);
	default:
		return -EINVAL;
	}
}
