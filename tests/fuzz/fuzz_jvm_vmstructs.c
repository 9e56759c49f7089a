// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the VMStructs decoder (runtimes/jvm/jvm_vmstructs.c). The input's
 * first 14 bytes are the layout: the struct entry stride and its five field offsets, the type
 * entry stride and its two field offsets (one byte each, so strides up to 255 and offsets past
 * them are reached), then the two tables' offsets in the memory (16-bit little endian), then
 * the offset of the struct entry's type string (its width: 0, 1, 2, 4 or 8); the
 * rest of the input is the memory, mapped at 0x10000, which the entries' pointers reach. On
 * success every name must be printable ASCII within JVM_VMS_NAME_MAX, every entry must be
 * found again by its lookup, and the extract and the flag reader (JVMFlag entries pointing
 * into the memory) must return.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jvm/jvm_vmstructs.h"

#define BASE 0x10000ull
#define HDR 14

struct mem {
	const uint8_t *buf;
	size_t len;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->len || n > m->len - (addr - BASE))
		return -14; /* EFAULT */
	memcpy(buf, m->buf + (addr - BASE), n);
	return 0;
}

static void check_name(const char *s)
{
	size_t i, n = strnlen(s, JVM_VMS_NAME_MAX + 1);

	if (n > JVM_VMS_NAME_MAX)
		abort();
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			abort();
}

static void check(const struct jvm_vmstructs *vs, struct mem *m)
{
	struct jvm_hotspot hs;
	bool on = false;
	uint64_t size;
	size_t i;

	for (i = 0; i < jvm_vmstructs__nfields(vs); i++) {
		const struct jvm_vms_field *f = jvm_vmstructs__field_at(vs, i), *g;

		check_name(f->type);
		check_name(f->name);
		g = jvm_vmstructs__field(vs, f->type, f->name);
		if (!g || g > f || strcmp(g->type, f->type) || strcmp(g->name, f->name))
			abort();
		if (!f->is_static && f->offset > JVM_VMS_VALUE_MAX)
			abort();
		if (f->width != 0 && f->width != 1 && f->width != 2 && f->width != 4 &&
		    f->width != 8)
			abort();
	}
	for (i = 0; i < jvm_vmstructs__ntypes(vs); i++) {
		const struct jvm_vms_type *t = jvm_vmstructs__type_at(vs, i);

		check_name(t->name);
		if (jvm_vmstructs__type_size(vs, t->name, &size) || size > JVM_VMS_VALUE_MAX)
			abort();
	}
	if (jvm_hotspot_extract(vs, &hs) < 0)
		abort();
	jvm_vmstructs__flag_bool(vs, mem_read, m, "DisableAttachMechanism", &on);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data + HDR, size > HDR ? size - HDR : 0 };
	struct jvm_vmstructs *vs = NULL;
	struct jvm_vms_layout l;

	if (size < HDR)
		return 0;
	l = (struct jvm_vms_layout){
		.s_stride = data[0],
		.s_type_name = data[1],
		.s_field_name = data[2],
		.s_is_static = data[3],
		.s_offset = data[4],
		.s_address = data[5],
		.s_type_string = data[13],
		.t_stride = data[6],
		.t_type_name = data[7],
		.t_size = data[8],
		.structs = BASE + (data[9] | (uint64_t)data[10] << 8),
		.types = BASE + (data[11] | (uint64_t)data[12] << 8),
	};
	if (jvm_vmstructs__decode(&l, mem_read, &m, &vs))
		return 0;
	check(vs, &m);
	jvm_vmstructs__free(vs);
	return 0;
}
