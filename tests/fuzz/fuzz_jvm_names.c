// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the naming of recorded Java frames (runtimes/jvm/jvm_names.c). A fake
 * JVM memory image is built once (at 0x10000, 1 MiB, zero past what is built): two Methods
 * with their ConstMethod, ConstantPool, Klass and Symbols, one nmethod in the JDK 17 layout,
 * one in the JDK 25 layout, and a stub. The input patches that image and picks the frame:
 *   byte 0: bit 0 layout (17/25), bits 1-2 kind (compiled, interpreted, stub, raw word),
 *           bit 3 leaf, bit 4 a wrong compile id, bits 5-7 unused;
 *   byte 1: room for frames (1..64); bytes 2-3: the pc offset from the code start (compiled),
 *           the bci (interpreted), or the raw word's kind and low bits;
 *   then patches: u16 offset into the image, u8 length (at most 16), the bytes.
 * Patching the nmethods' region offsets makes regions of any size up to the zeroed 1 MiB, so
 * the JVM_NAMES_*_MAX bounds are crossed both ways. Each result must keep the contract: a count
 * within the room, names and files NUL-terminated in their arrays, the kinds in order
 * (inlined frames, then one compiled; one interpreted; one stub), or a documented error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/unwind.h"
#include "runtimes/jvm/jvm_names.h"
#include "runtimes/jvm/jvm_scopes.h"

#define BASE 0x10000ull
#define SPAN (1u << 20)
#define PATCHABLE (64u << 10)
#define CM_SIZE 48
#define CP_SIZE 32
#define NM_HEAD 512
#define NM_CODE 0x100
#define CID 42

static uint8_t tpl[PATCHABLE];
static uint8_t *mem; /* SPAN bytes */
static size_t used;
static struct jvm_hotspot hs17, hs25;
static uint64_t m_outer, code_outer, nm17, nm25, stub_blob;

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > SPAN || n > SPAN - (addr - BASE))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), n);
	return 0;
}

static uint64_t alloc(size_t n)
{
	uint64_t at = BASE + used;

	used += (n + 15) & ~(size_t)15;
	if (used > PATCHABLE)
		abort();
	return at;
}

static void wr(uint64_t addr, const void *p, size_t n)
{
	memcpy(tpl + (addr - BASE), p, n);
}

static void w64(uint64_t a, uint64_t v) { wr(a, &v, 8); }
static void w32(uint64_t a, uint32_t v) { wr(a, &v, 4); }
static void w16(uint64_t a, uint16_t v) { wr(a, &v, 2); }

static uint64_t cstr(const char *s)
{
	uint64_t at = alloc(strlen(s) + 1);

	wr(at, s, strlen(s) + 1);
	return at;
}

static uint64_t symbol(const char *s)
{
	size_t n = strlen(s);
	uint64_t at = alloc(6 + n);

	w16(at, (uint16_t)n);
	wr(at + 6, s, n);
	return at;
}

static const uint8_t lines[] = { 0 << 3 | 3, 5 << 3 | 4, 0xff, 4, 6, 0 };

static uint64_t method(const char *klass, const char *name, uint16_t code_size, uint64_t *code)
{
	uint64_t k = alloc(24), cp = alloc(CP_SIZE + 8 * 3), cm, m;
	size_t total = (CM_SIZE + code_size + sizeof(lines) + 7) & ~(size_t)7;

	w64(k + 16, symbol(klass));
	w64(cp + 8, k);
	w16(cp + 16, 2);
	w64(cp + CP_SIZE + 8, symbol(name));
	w64(cp + CP_SIZE + 16, symbol("Cls.java"));
	cm = alloc(total);
	w64(cm + 8, cp);
	w16(cm + 16, 1);
	w16(cm + 18, code_size);
	w16(cm + 20, 1);
	w32(cm + 24, (uint32_t)(total / 8));
	wr(cm + CM_SIZE + code_size, lines, sizeof(lines));
	m = alloc(16);
	w64(m + 8, cm);
	*code = cm + CM_SIZE;
	return m;
}

static void hs_set(struct jvm_hotspot *hs, enum jvm_hs id, uint64_t v)
{
	hs->val[id] = v;
	hs->found |= 1ull << id;
}

static void hs_init(struct jvm_hotspot *hs, bool jdk25)
{
	hs_set(hs, JVM_HS_METHOD_CONSTMETHOD, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_CONSTANTS, 8);
	hs_set(hs, JVM_HS_CONSTMETHOD_NAME_INDEX, 16);
	hs_set(hs, JVM_HS_CONSTMETHOD_CODE_SIZE, 18);
	hs_set(hs, JVM_HS_CONSTMETHOD_FLAGS, 20);
	hs_set(hs, JVM_HS_CONSTMETHOD_TOTAL, 24);
	hs_set(hs, JVM_HS_CONSTMETHOD_SIZE, CM_SIZE);
	hs_set(hs, JVM_HS_CONSTANTPOOL_HOLDER, 8);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SOURCE_FILE, 16);
	hs_set(hs, JVM_HS_CONSTANTPOOL_SIZE, CP_SIZE);
	hs_set(hs, JVM_HS_KLASS_NAME, 16);
	hs_set(hs, JVM_HS_SYMBOL_LENGTH, 0);
	hs_set(hs, JVM_HS_SYMBOL_BODY, 6);
	hs_set(hs, JVM_HS_CODEBLOB_NAME, 8);
	hs_set(hs, JVM_HS_CODEBLOB_CODE, 16);
	hs_set(hs, JVM_HS_NMETHOD_COMPILE_ID, 24);
	hs_set(hs, JVM_HS_NMETHOD_METHOD, 32);
	hs_set(hs, JVM_HS_NMETHOD_SCOPES_PCS, 48);
	if (!jdk25) {
		hs_set(hs, JVM_HS_NMETHOD_SCOPES_DATA, 40);
		hs_set(hs, JVM_HS_NMETHOD_DEPENDENCIES, 52);
		hs_set(hs, JVM_HS_NMETHOD_METADATA_OFFSET, 56);
		return;
	}
	hs_set(hs, JVM_HS_NMETHOD_IMMUTABLE, 64);
	hs_set(hs, JVM_HS_NMETHOD_IMMUTABLE_SIZE, 72);
	hs_set(hs, JVM_HS_NMETHOD_SCOPES_DATA, 80);
	hs_set(hs, JVM_HS_CODEBLOB_MUTABLE, 88);
	hs_set(hs, JVM_HS_CODEBLOB_RELOCATION_SIZE, 96);
	hs_set(hs, JVM_HS_CODEBLOB_MUTABLE_SIZE, 100);
	hs->is_offset |= 1ull << JVM_HS_NMETHOD_SCOPES_DATA | 1ull << JVM_HS_CODEBLOB_CODE;
}

/* Scopes data (JDK 17 bytes, or + 1 from JDK 20): pad, outer at bci 6 (1), outer at bci 2 (4),
 * outer at bci 7 (7), inner at bci 1 <- 1 (10); PcDescs -1, 0x10 (4), 0x20 (10), 0x30 (7). */
static void regions(uint8_t *sd, int32_t pcs[4][4], unsigned excl)
{
	static const uint8_t recs[] = { 0x55, 0, 1, 7, 0, 1, 3, 0, 1, 8, 1, 2, 2 };
	const int32_t p[4][4] = { { -1, 0, 0, 0 }, { 0x10, 4, 0, 0 }, { 0x20, 10, 0, 0 },
				  { 0x30, 7, 0, 0 } };
	size_t i;

	for (i = 0; i < sizeof(recs); i++)
		sd[i] = (uint8_t)(recs[i] + (i ? excl : 0));
	memset(sd + sizeof(recs), 0, 16 - sizeof(recs));
	memcpy(pcs, p, sizeof(p));
}

static void build(void)
{
	uint64_t m_inner, code_inner, meta[2], name, r, mut;
	int32_t pcs[4][4];
	uint8_t sd[16];

	mem = calloc(1, SPAN);
	if (!mem)
		abort();
	hs_init(&hs17, false);
	hs_init(&hs25, true);
	alloc(64);
	m_outer = method("pkg/Cls$$Lambda+0x0000000800c01000", "outer", 32, &code_outer);
	m_inner = method("pkg/Inner", "inner", 8, &code_inner);
	meta[0] = m_outer;
	meta[1] = m_inner;
	name = cstr("nmethod");

	/* JDK 17: [head | code] metadata, scopes data, PcDescs */
	nm17 = alloc(NM_HEAD + 256);
	w64(nm17 + 8, name);
	w64(nm17 + 16, nm17 + NM_CODE);
	w32(nm17 + 24, CID);
	w64(nm17 + 32, m_outer);
	regions(sd, pcs, 0);
	r = alloc(sizeof(meta) + sizeof(sd) + sizeof(pcs));
	wr(r, meta, sizeof(meta));
	wr(r + 16, sd, sizeof(sd));
	wr(r + 32, pcs, sizeof(pcs));
	w64(nm17 + 40, r + 16);
	w32(nm17 + 48, (uint32_t)(r + 32 - nm17));
	w32(nm17 + 52, (uint32_t)(r + 32 + sizeof(pcs) - nm17));
	w32(nm17 + 56, (uint32_t)(r - nm17));

	/* JDK 25: immutable PcDescs + scopes data; mutable relocations (24) + metadata */
	nm25 = alloc(NM_HEAD + 256);
	w64(nm25 + 8, name);
	w32(nm25 + 16, NM_CODE);
	w32(nm25 + 24, CID);
	w64(nm25 + 32, m_outer);
	regions(sd, pcs, 1);
	r = alloc(sizeof(pcs) + sizeof(sd));
	wr(r, pcs, sizeof(pcs));
	wr(r + sizeof(pcs), sd, sizeof(sd));
	mut = alloc(24 + sizeof(meta));
	wr(mut + 24, meta, sizeof(meta));
	w64(nm25 + 64, r);
	w32(nm25 + 72, sizeof(pcs) + sizeof(sd));
	w32(nm25 + 48, 0);
	w32(nm25 + 80, sizeof(pcs));
	w64(nm25 + 88, mut);
	w32(nm25 + 96, 24);
	w32(nm25 + 100, 24 + sizeof(meta));

	stub_blob = alloc(NM_HEAD);
	w64(stub_blob + 8, cstr("StubRoutines (1)"));
}

static void check(int ret, const struct jvm_frame *out, size_t max, uint64_t kind)
{
	int i;

	if (ret <= 0) {
		switch (ret) {
		case -EINVAL:
		case -ESTALE:
		case -EBADMSG:
		case -E2BIG:
		case -EFAULT:
		case -ENOENT:
		case -ENOMEM:
			return;
		default:
			abort();
		}
	}
	if ((size_t)ret > max)
		abort();
	for (i = 0; i < ret; i++) {
		if (strnlen(out[i].name, JVM_NAME_MAX) >= JVM_NAME_MAX ||
		    strnlen(out[i].file, JVM_FILE_MAX) >= JVM_FILE_MAX)
			abort();
		switch (kind) {
		case UW_JAVA_COMPILED:
			if (out[i].kind != (i + 1 < ret ? JVM_FRAME_INLINED : JVM_FRAME_COMPILED))
				abort();
			break;
		case UW_JAVA_INTERPRETED:
			if (ret != 1 || out[i].kind != JVM_FRAME_INTERPRETED)
				abort();
			break;
		case UW_JAVA_STUB:
			if (ret != 1 || out[i].kind != JVM_FRAME_STUB || out[i].line || out[i].file[0])
				abort();
			break;
		default:
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_frame out[JVM_SCOPES_MAX];
	struct jvm_names *jn = NULL;
	uint64_t word, cookie, kind, nm;
	const uint8_t *p, *end = data + size;
	size_t max, pass;
	bool jdk25;
	uint16_t arg;

	if (!mem)
		build();
	if (size < 4)
		return 0;
	memcpy(mem, tpl, sizeof(tpl));
	/* what earlier inputs left past the patchable part: nothing writes there */
	for (p = data + 4; p + 3 <= end;) {
		size_t off = (size_t)(p[0] | p[1] << 8) % PATCHABLE, n = p[2] % 17;

		p += 3;
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		if (off + n > PATCHABLE)
			n = PATCHABLE - off;
		memcpy(mem + off, p, n);
		p += n;
	}
	jdk25 = data[0] & 1;
	max = 1 + data[1] % JVM_SCOPES_MAX;
	arg = (uint16_t)(data[2] | data[3] << 8);
	nm = jdk25 ? nm25 : nm17;
	switch ((data[0] >> 1) & 3) {
	case 0:
		kind = UW_JAVA_COMPILED;
		word = UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | nm;
		cookie = (uint64_t)(CID + ((data[0] >> 4) & 1)) << 32 | (NM_CODE + arg) |
			 ((data[0] & 8) ? UW_JAVA_LEAF : 0);
		break;
	case 1:
		kind = UW_JAVA_INTERPRETED;
		word = UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | m_outer;
		cookie = code_outer + (arg & 0x3f) - 8;
		break;
	case 2:
		kind = UW_JAVA_STUB;
		word = UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | stub_blob;
		cookie = arg;
		break;
	default:
		/* any kind, the address in the image */
		kind = (uint64_t)(arg >> 12);
		word = UW_JAVA_TAG | kind << UW_JAVA_KIND_SHIFT | (BASE + ((arg & 0xfff) << 4));
		cookie = (uint64_t)CID << 32 | NM_CODE;
		break;
	}
	if (jvm_names__new(jdk25 ? &hs25 : &hs17, jdk25 ? 25 : 17, mem_read, NULL, &jn))
		abort();
	/* twice: the second from the caches */
	for (pass = 0; pass < 2; pass++) {
		int ret = jvm_names__frame(jn, word, cookie, out, max);

		if (kind < UW_JAVA_COMPILED || kind > UW_JAVA_STUB) {
			if (ret != -EINVAL)
				abort();
			continue;
		}
		check(ret, out, max, kind);
	}
	jvm_names__free(jn);
	return 0;
}
