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
#include "tests/unit/jvm_image.h"

#define BASE 0x10000ull
#define SPAN (1u << 20)
#define PATCHABLE (64u << 10)
#define CM_SIZE JVM_IMG_CM_SIZE
#define CP_SIZE JVM_IMG_CP_SIZE
#define NM_HEAD 512
#define NM_CODE 0x100
#define CID 42

static struct img *tpl; /* PATCHABLE bytes, built once */
static struct img *run; /* SPAN bytes, the template patched by the input */
static struct jvm_hotspot hs17, hs25;
static uint64_t m_outer, code_outer, nm17, nm25, stub_blob;

static const uint8_t lines[] = { 0 << 3 | 3, 5 << 3 | 4, 0xff, 4, 6, 0 };

static uint64_t method(const char *klass, const char *name, uint16_t code_size, uint64_t *code)
{
	uint64_t k = img_alloc(tpl, 24), cp = img_alloc(tpl, CP_SIZE + 8 * 3), cm, m;
	size_t total = (CM_SIZE + code_size + sizeof(lines) + 7) & ~(size_t)7;

	img_w64(tpl, k + 16, img_symbol(tpl, klass));
	img_w64(tpl, cp + 8, k);
	img_w16(tpl, cp + 16, 2);
	img_w64(tpl, cp + CP_SIZE + 8, img_symbol(tpl, name));
	img_w64(tpl, cp + CP_SIZE + 16, img_symbol(tpl, "Cls.java"));
	cm = img_alloc(tpl, total);
	img_w64(tpl, cm + 8, cp);
	img_w16(tpl, cm + 16, 1);
	img_w16(tpl, cm + 18, code_size);
	img_w16(tpl, cm + 20, 1);
	img_w32(tpl, cm + 24, (uint32_t)(total / 8));
	img_wr(tpl, cm + CM_SIZE + code_size, lines, sizeof(lines));
	m = img_alloc(tpl, 16);
	img_w64(tpl, m + 8, cm);
	*code = cm + CM_SIZE;
	return m;
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

	tpl = img_new(BASE, PATCHABLE, false);
	run = img_new(BASE, SPAN, true);
	if (!tpl || !run)
		abort();
	hs_init_names(&hs17, false);
	hs_init_names(&hs25, true);
	img_alloc(tpl, 64);
	m_outer = method("pkg/Cls$$Lambda+0x0000000800c01000", "outer", 32, &code_outer);
	m_inner = method("pkg/Inner", "inner", 8, &code_inner);
	meta[0] = m_outer;
	meta[1] = m_inner;
	name = img_cstr(tpl, "nmethod");

	/* JDK 17: [head | code] metadata, scopes data, PcDescs */
	nm17 = img_alloc(tpl, NM_HEAD + 256);
	img_w64(tpl, nm17 + 8, name);
	img_w64(tpl, nm17 + 16, nm17 + NM_CODE);
	img_w32(tpl, nm17 + 24, CID);
	img_w64(tpl, nm17 + 32, m_outer);
	regions(sd, pcs, 0);
	r = img_alloc(tpl, sizeof(meta) + sizeof(sd) + sizeof(pcs));
	img_wr(tpl, r, meta, sizeof(meta));
	img_wr(tpl, r + 16, sd, sizeof(sd));
	img_wr(tpl, r + 32, pcs, sizeof(pcs));
	img_w64(tpl, nm17 + 40, r + 16);
	img_w32(tpl, nm17 + 48, (uint32_t)(r + 32 - nm17));
	img_w32(tpl, nm17 + 52, (uint32_t)(r + 32 + sizeof(pcs) - nm17));
	img_w32(tpl, nm17 + 56, (uint32_t)(r - nm17));

	/* JDK 25: immutable PcDescs + scopes data; mutable relocations (24) + metadata */
	nm25 = img_alloc(tpl, NM_HEAD + 256);
	img_w64(tpl, nm25 + 8, name);
	img_w32(tpl, nm25 + 16, NM_CODE);
	img_w32(tpl, nm25 + 24, CID);
	img_w64(tpl, nm25 + 32, m_outer);
	regions(sd, pcs, 1);
	r = img_alloc(tpl, sizeof(pcs) + sizeof(sd));
	img_wr(tpl, r, pcs, sizeof(pcs));
	img_wr(tpl, r + sizeof(pcs), sd, sizeof(sd));
	mut = img_alloc(tpl, 24 + sizeof(meta));
	img_wr(tpl, mut + 24, meta, sizeof(meta));
	img_w64(tpl, nm25 + 64, r);
	img_w32(tpl, nm25 + 72, sizeof(pcs) + sizeof(sd));
	img_w32(tpl, nm25 + 48, 0);
	img_w32(tpl, nm25 + 80, sizeof(pcs));
	img_w64(tpl, nm25 + 88, mut);
	img_w32(tpl, nm25 + 96, 24);
	img_w32(tpl, nm25 + 100, 24 + sizeof(meta));

	stub_blob = img_alloc(tpl, NM_HEAD);
	img_w64(tpl, stub_blob + 8, img_cstr(tpl, "StubRoutines (1)"));
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

	if (!run)
		build();
	if (size < 4)
		return 0;
	memcpy(run->mem, tpl->mem, PATCHABLE);
	/* what earlier inputs left past the patchable part: nothing writes there */
	for (p = data + 4; p + 3 <= end;) {
		size_t off = (size_t)(p[0] | p[1] << 8) % PATCHABLE, n = p[2] % 17;

		p += 3;
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		if (off + n > PATCHABLE)
			n = PATCHABLE - off;
		memcpy(run->mem + off, p, n);
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
	if (jvm_names__new(jdk25 ? &hs25 : &hs17, jdk25 ? 25 : 17, img_read, run, &jn))
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
