// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "base/array.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "tests/unit/profile_fixture.h"
#include "tests/unit/hostile_mem.h"

/* ---- a tiny protobuf writer for hand-made messages ---- */

struct msg {
	uint8_t b[4096];
	size_t n;
};

static void m_raw(struct msg *m, const void *p, size_t n)
{
	assert_true(m->n + n <= sizeof(m->b));
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void m_varint(struct msg *m, uint64_t v)
{
	do {
		uint8_t c = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);

		m_raw(m, &c, 1);
		v >>= 7;
	} while (v);
}

static void m_int(struct msg *m, uint32_t field, uint64_t v)
{
	m_varint(m, (uint64_t)field << 3);
	m_varint(m, v);
}

static void m_bytes(struct msg *m, uint32_t field, const void *p, size_t n)
{
	m_varint(m, (uint64_t)field << 3 | 2);
	m_varint(m, n);
	m_raw(m, p, n);
}

static void m_str(struct msg *m, const char *s)
{
	m_bytes(m, 6, s, strlen(s));
}

static void m_sub(struct msg *m, uint32_t field, const struct msg *sub)
{
	m_bytes(m, field, sub->b, sub->n);
}

/* ValueType{type, unit} as field @field */
static void m_vt(struct msg *m, uint32_t field, uint64_t type, uint64_t unit)
{
	struct msg s = { .n = 0 };

	m_int(&s, 1, type);
	m_int(&s, 2, unit);
	m_sub(m, field, &s);
}

/*
 * Strings: 0 "", 1 samples, 2 count, 3 cpu, 4 nanoseconds, 5 main, 6 inl, 7 a.c, 8 /bin/app,
 * 9 owner, 10 Service x, 11 pid, 12 language, 13 go
 */
static void base_strings(struct msg *m)
{
	static const char *const s[] = { "",	"samples", "count", "cpu",	 "nanoseconds",
					 "main", "inl",	   "a.c",   "/bin/app", "owner",
					 "Service x", "pid", "language", "go" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		m_str(m, s[i]);
}

static void base_function(struct msg *m, uint64_t id, uint64_t name)
{
	struct msg f = { .n = 0 };

	m_int(&f, 1, id);
	m_int(&f, 2, name);
	m_int(&f, 4, 7);
	m_sub(m, 5, &f);
}

/* A valid profile: location 1 = inl (line 5) inlined into main (line 9), mapping 1 at 0x1000
 * with offset 0x200; one sample with packed ids and values and two labels. */
static void valid_msg(struct msg *m)
{
	struct msg loc = { .n = 0 }, ln = { .n = 0 }, map = { .n = 0 }, s = { .n = 0 },
		   ids = { .n = 0 }, lab = { .n = 0 };

	m->n = 0;
	m_vt(m, 1, 1, 2);
	m_vt(m, 1, 3, 4);
	base_function(m, 1, 5);
	base_function(m, 2, 6);
	m_int(&map, 1, 1);
	m_int(&map, 2, 0x1000);
	m_int(&map, 3, 0x2000);
	m_int(&map, 4, 0x200);
	m_int(&map, 5, 8);
	m_sub(m, 3, &map);
	m_int(&loc, 1, 1);
	m_int(&loc, 2, 1);
	m_int(&loc, 3, 0x1010);
	m_int(&ln, 1, 2);
	m_int(&ln, 2, 5);
	m_sub(&loc, 4, &ln);
	ln.n = 0;
	m_int(&ln, 1, 1);
	m_int(&ln, 2, 9);
	m_sub(&loc, 4, &ln);
	m_sub(m, 4, &loc);
	m_varint(&ids, 1);
	m_sub(&s, 1, &ids);
	ids.n = 0;
	m_varint(&ids, 3);
	m_varint(&ids, 30);
	m_sub(&s, 2, &ids);
	m_int(&lab, 1, 9);
	m_int(&lab, 2, 10);
	m_sub(&s, 3, &lab);
	lab.n = 0;
	m_int(&lab, 1, 11);
	m_int(&lab, 3, 42);
	m_sub(&s, 3, &lab);
	lab.n = 0;
	m_int(&lab, 1, 12);
	m_int(&lab, 2, 13);
	m_sub(&s, 3, &lab);
	m_sub(m, 2, &s);
	m_int(m, 9, 1000);
	m_int(m, 10, 2000);
	m_vt(m, 11, 3, 4);
	m_int(m, 12, 10101010);
	base_strings(m);
}

static void test_decode_valid(void **state)
{
	const struct prof_frame_info *f0, *f1;
	const struct profile_opts *o;
	struct prof_sample s;
	struct profile *p;
	struct msg m;

	(void)state;
	valid_msg(&m);
	assert_int_equal(pprof_decode(m.b, m.n, &p), 0);
	o = profile__opts(p);
	assert_int_equal(o->nvalues, 2);
	assert_string_equal(o->sample_type[0], "samples");
	assert_string_equal(o->sample_unit[1], "nanoseconds");
	assert_string_equal(o->period_type, "cpu");
	assert_int_equal(o->period, 10101010);
	assert_int_equal(o->time_nanos, 1000);
	assert_int_equal(o->duration_nanos, 2000);
	assert_int_equal(profile__nsamples(p), 1);
	assert_int_equal(profile__sample(p, 0, &s), 0);
	assert_int_equal(s.nframes, 2);
	f0 = profile__frame_info(p, s.frames[0]);
	f1 = profile__frame_info(p, s.frames[1]);
	/* The inlined function comes first (leaf first), then its caller. */
	assert_string_equal(f0->function, "inl");
	assert_int_equal(f0->line, 5);
	assert_string_equal(f1->function, "main");
	assert_int_equal(f1->line, 9);
	assert_string_equal(f0->file, "a.c");
	assert_string_equal(f0->mapping, "/bin/app");
	assert_null(f0->build_id);
	assert_int_equal(f0->address, 0x1010 - 0x1000 + 0x200);
	assert_int_equal(f0->lang, PROF_LANG_NATIVE);
	assert_int_equal(s.values[0], 3);
	assert_int_equal(s.values[1], 30);
	assert_string_equal(s.labels->owner, "Service x");
	assert_int_equal(s.labels->pid, 42);
	assert_int_equal(s.labels->lang, PROF_LANG_GO);
	profile__free(p);
}

/* Sample variants: unpacked ids and values, several sample types, default language. */
static void test_decode_variants(void **state)
{
	static const char *const strs[] = { "",	"alloc_objects", "count", "alloc_space", "bytes",
					    "inuse_objects", "inuse_space", "f", "[kernel.kallsyms]" };
	static const struct {
		const char *want[PROF_MAX_VALUES];
		int ret;
		size_t nvalues;
		int64_t v0;
		const char *type0;
	} cases[] = {
		{ { NULL }, 0, 2, 3, "inuse_objects" },
		{ { "alloc_space" }, 0, 1, 2, "alloc_space" },
		{ { "inuse_space", "alloc_objects" }, 0, 2, 4, "inuse_space" },
		{ { "nope" }, -ENOENT, 0, 0, NULL },
	};
	struct pprof_decode_opts opts = { .default_lang = PROF_LANG_GO };
	struct msg m = { .n = 0 }, s = { .n = 0 }, loc = { .n = 0 }, ln = { .n = 0 },
		   map = { .n = 0 };
	const struct prof_frame_info *fi;
	struct prof_sample ps;
	struct profile *p;
	size_t i, j;

	(void)state;
	m_vt(&m, 1, 1, 2);
	m_vt(&m, 1, 3, 4);
	m_vt(&m, 1, 5, 2);
	m_vt(&m, 1, 6, 4);
	base_function(&m, 7, 7);
	m_int(&loc, 1, 1);
	m_int(&ln, 1, 7);
	m_sub(&loc, 4, &ln);
	m_sub(&m, 4, &loc);
	loc.n = 0;
	m_int(&map, 1, 3);
	m_int(&map, 5, 8);
	m_sub(&m, 3, &map);
	m_int(&loc, 1, 2);
	m_int(&loc, 2, 3);
	m_int(&loc, 3, 0xffffffff81000000ULL);
	m_sub(&m, 4, &loc);
	m_int(&s, 1, 1);	/* unpacked location ids */
	m_int(&s, 1, 2);
	m_int(&s, 2, 1);	/* unpacked values */
	m_int(&s, 2, 2);
	m_int(&s, 2, 3);
	m_int(&s, 2, 4);
	m_sub(&m, 2, &s);
	for (j = 0; j < ARRAY_SIZE(strs); j++)
		m_str(&m, strs[j]);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memcpy(opts.sample_types, cases[i].want, sizeof(opts.sample_types));
		p = NULL;
		assert_int_equal(pprof_decode_ext(m.b, m.n, &opts, &p), cases[i].ret);
		if (cases[i].ret) {
			assert_null(p);
			continue;
		}
		assert_int_equal(profile__opts(p)->nvalues, cases[i].nvalues);
		assert_string_equal(profile__opts(p)->sample_type[0], cases[i].type0);
		assert_int_equal(profile__sample(p, 0, &ps), 0);
		assert_int_equal(ps.values[0], cases[i].v0);
		assert_int_equal(ps.nframes, 2);
		fi = profile__frame_info(p, ps.frames[0]);
		assert_string_equal(fi->function, "f");
		assert_int_equal(fi->lang, PROF_LANG_GO);
		assert_int_equal(ps.labels->lang, PROF_LANG_GO);
		fi = profile__frame_info(p, ps.frames[1]);
		assert_null(fi->function);
		assert_int_equal(fi->lang, PROF_LANG_KERNEL);
		assert_true(fi->address == 0xffffffff81000000ULL);
		profile__free(p);
	}
}

static uint8_t *gz(const void *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound(len) + 64;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
			 Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Gzip of @total zero bytes, made in chunks so the test never holds them all. */
static uint8_t *gz_zeros(size_t total, size_t *out_len)
{
	static uint8_t zeros[1 << 16];
	z_stream z = { 0 };
	size_t cap = total / 500 + 4096, left = total;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY),
			 Z_OK);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	while (left) {
		size_t n = left < sizeof(zeros) ? left : sizeof(zeros);

		z.next_in = zeros;
		z.avail_in = (uInt)n;
		left -= n;
		assert_int_equal(deflate(&z, left ? Z_NO_FLUSH : Z_FINISH),
				 left ? Z_OK : Z_STREAM_END);
		assert_int_equal(z.avail_in, 0);
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

static void test_decode_malformed(void **state)
{
	enum { RAW, GZ, GZ_HALF, GZ_TRAILER, GZ_CORRUPT, GZ_TWO };
	static const struct {
		const char *name;
		const uint8_t *b;
		size_t n;
		int ret;
	} raw[] = {
		{ "empty", (const uint8_t *)"", 0, -EINVAL },
		{ "truncated varint", (const uint8_t *)"\x48\x80", 2, -EINVAL },
		{ "truncated key", (const uint8_t *)"\x80", 1, -EINVAL },
		{ "length past end", (const uint8_t *)"\x32\x05\x61", 3, -EINVAL },
		{ "huge length", (const uint8_t *)"\x32\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10,
		  -EINVAL },
		{ "11-byte varint", (const uint8_t *)"\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		  12, -EINVAL },
		{ "wire type 3", (const uint8_t *)"\x0b", 1, -EINVAL },
		{ "wire type 7", (const uint8_t *)"\x0f", 1, -EINVAL },
		{ "field 0", (const uint8_t *)"\x02\x00", 2, -EINVAL },
		{ "sample_type as varint", (const uint8_t *)"\x08\x01\x32\x00", 4, -EINVAL },
		{ "no string table", (const uint8_t *)"\x48\x01", 2, -EINVAL },
		{ "string 0 not empty", (const uint8_t *)"\x32\x01\x61", 3, -EINVAL },
		{ "fixed64 cut", (const uint8_t *)"\x32\x00\x79\x01\x02", 5, -EINVAL },
		{ "only empty string", (const uint8_t *)"\x32\x00", 2, 0 },
		{ "unknown fields skipped", (const uint8_t *)"\x32\x00\x79\x01\x02\x03\x04\x05\x06\x07"
							     "\x08\x7d\x01\x02\x03\x04\xa2\x06\x01\x00",
		  20, 0 },
	};
	struct msg m, sub, sub2;
	struct profile *p;
	uint8_t *z, *z2;
	size_t i, zn, zn2;
	int kind;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(raw); i++) {
		print_message("case %zu (%s)\n", i, raw[i].name);
		p = NULL;
		assert_int_equal(pprof_decode(raw[i].b, raw[i].n, &p), raw[i].ret);
		assert_true(raw[i].ret ? p == NULL : p != NULL);
		profile__free(p);
	}

	/* Edits of the valid message, each making one reference or length wrong. */
	static const struct { const char *name; int edit; int ret; } edits[] = {
		{ "valid", 0, 0 },
		{ "location id missing", 1, -EINVAL },
		{ "mapping id missing", 2, -EINVAL },
		{ "function id missing", 3, -EINVAL },
		{ "string index out of range", 4, -EINVAL },
		{ "duplicate location id", 5, -EINVAL },
		{ "location id 0", 6, -EINVAL },
		{ "too many values", 7, -EINVAL },
		{ "too few values", 8, -EINVAL },
		{ "samples without sample types", 9, -EINVAL },
		{ "label string out of range", 10, -EINVAL },
		{ "line as varint", 11, -EINVAL },
		{ "duplicate function id", 12, -EINVAL },
		{ "mapping id 0", 13, -EINVAL },
		{ "sample location 0", 14, -EINVAL },
		{ "truncated whole message", 15, -EINVAL },
		{ "nested length past parent", 16, -EINVAL },
	};
	for (i = 0; i < ARRAY_SIZE(edits); i++) {
		print_message("edit %zu (%s)\n", i, edits[i].name);
		m.n = 0;
		sub.n = 0;
		sub2.n = 0;
		if (edits[i].edit == 9) {
			m_int(&sub, 2, 1);
			m_sub(&m, 2, &sub);
			base_strings(&m);
		} else {
			valid_msg(&m);
		}
		switch (edits[i].edit) {
		case 1: m_int(&sub, 1, 7); m_int(&sub, 2, 1); m_int(&sub, 2, 1); break;
		case 2: m_int(&sub, 1, 5); m_int(&sub, 2, 9); m_sub(&m, 4, &sub); sub.n = 0; break;
		case 3:
			m_int(&sub, 1, 5);
			m_int(&sub2, 1, 99);
			m_sub(&sub, 4, &sub2);
			m_sub(&m, 4, &sub);
			sub.n = 0;
			break;
		case 4: base_function(&m, 9, 500); break;
		case 5: m_int(&sub, 1, 1); m_sub(&m, 4, &sub); sub.n = 0; break;
		case 6: m_int(&sub, 3, 1); m_sub(&m, 4, &sub); sub.n = 0; break;
		case 7: m_int(&sub, 2, 1); m_int(&sub, 2, 1); m_int(&sub, 2, 1); break;
		case 8: m_int(&sub, 2, 1); break;
		case 10:
			m_int(&sub2, 1, 9);
			m_int(&sub2, 2, 77);
			m_int(&sub, 2, 1);
			m_int(&sub, 2, 1);
			m_sub(&sub, 3, &sub2);
			break;
		case 11: m_int(&sub, 1, 6); m_int(&sub, 4, 1); m_sub(&m, 4, &sub); sub.n = 0; break;
		case 12: base_function(&m, 1, 5); break;
		case 13: m_int(&sub, 5, 8); m_sub(&m, 3, &sub); sub.n = 0; break;
		case 14: m_int(&sub, 1, 0); m_int(&sub, 2, 1); m_int(&sub, 2, 1); break;
		case 15: m.n -= 3; break;
		case 16:
			/* A location whose line claims 9 bytes but the location holds 2. */
			m_raw(&m, "\x22\x04\x22\x09\x08\x01", 6);
			break;
		}
		if (sub.n)
			m_sub(&m, 2, &sub);
		p = NULL;
		assert_int_equal(pprof_decode(m.b, m.n, &p), edits[i].ret);
		profile__free(p);
	}

	/* Gzip framing. */
	valid_msg(&m);
	for (kind = GZ; kind <= GZ_TWO; kind++) {
		int want = kind == GZ || kind == GZ_TWO ? 0 : -EINVAL;

		print_message("gzip %d\n", kind);
		z = gz(m.b, m.n, &zn);
		switch (kind) {
		case GZ_HALF: zn /= 2; break;
		case GZ_TRAILER:
			z = realloc(z, zn + 3);
			memcpy(z + zn, "abc", 3);
			zn += 3;
			break;
		case GZ_CORRUPT: z[zn / 2] ^= 0x55; z[zn / 2 + 1] ^= 0xaa; break;
		case GZ_TWO:
			/* Two members, as `cat a.gz b.gz` makes: one stream to a reader. */
			free(z);
			z = gz(m.b, 40, &zn);
			z2 = gz(m.b + 40, m.n - 40, &zn2);
			z = realloc(z, zn + zn2);
			memcpy(z + zn, z2, zn2);
			zn += zn2;
			free(z2);
			break;
		}
		p = NULL;
		assert_int_equal(pprof_decode(z, zn, &p), want);
		if (!want)
			assert_int_equal(profile__nsamples(p), 1);
		profile__free(p);
		free(z);
	}
	(void)RAW;
}

static void test_decode_limits(void **state)
{
	struct pprof_decode_opts opts = { .max_decoded = 1 << 20 };
	struct profile *p = NULL;
	uint8_t *z, *big;
	size_t zn;

	(void)state;
	/* A gzip bomb: 2 MiB of zeros against a 1 MiB limit. */
	z = gz_zeros(2 << 20, &zn);
	assert_int_equal(pprof_decode_ext(z, zn, &opts, &p), -EFBIG);
	free(z);
	/* Exactly at the limit is fine as far as the size goes (zeros are then bad protobuf). */
	z = gz_zeros(1 << 20, &zn);
	assert_int_equal(pprof_decode_ext(z, zn, &opts, &p), -EINVAL);
	free(z);
	/* Raw input over the limit. */
	big = calloc(1, (1 << 20) + 1);
	assert_non_null(big);
	assert_int_equal(pprof_decode_ext(big, (1 << 20) + 1, &opts, &p), -EFBIG);
	free(big);
	/* The real limit: a bomb just over PPROF_MAX_DECODED (about 260 KB compressed). */
	z = gz_zeros((size_t)PPROF_MAX_DECODED + 4096, &zn);
	print_message("bomb of %zu bytes\n", zn);
	assert_int_equal(pprof_decode(z, zn, &p), -EFBIG);
	free(z);
	assert_null(p);
	/* Bad arguments. */
	assert_int_equal(pprof_decode(NULL, 3, &p), -EINVAL);
	assert_int_equal(pprof_decode("\x32\x00", 2, NULL), -EINVAL);
	opts.default_lang = PROF_LANG_COUNT;
	assert_int_equal(pprof_decode_ext("\x32\x00", 2, &opts, &p), -EINVAL);
}

/* ---- round trip ---- */

static struct profile *sample_profile(void)
{
	static const struct prof_frame_info frames[] = {
		{ .function = "build_report", .file = "/app/report.py", .line = 42,
		  .lang = PROF_LANG_PYTHON, .address = 0x10 },
		{ .function = "_PyEval_EvalFrameDefault", .mapping = "/usr/bin/python3.11",
		  .build_id = "0123abcd", .address = 0x1a2b3c },
		{ .mapping = "/usr/local/bin/billing-worker", .build_id = "b65a313cbf47",
		  .address = 0x4a1f20, .unnamed_stripped = true },
		{ .function = "tcp_sendmsg", .mapping = "[kernel.kallsyms]",
		  .address = 0xffffffff81a00000ULL, .lang = PROF_LANG_KERNEL },
		{ .function = "main.priceCart", .file = "/src/cart.go", .line = 7,
		  .mapping = "/usr/local/bin/checkout", .address = 0x401000, .lang = PROF_LANG_GO },
		{ .function = "main.priceCart", .file = "/src/cart.go", .line = 8,
		  .mapping = "/usr/local/bin/checkout", .address = 0x401010, .lang = PROF_LANG_GO },
		{ .address = 0x77 },
		{ .function = "name;with\nodd</script>chars", .lang = PROF_LANG_JAVA },
		/* Marked native although the mapping looks like the kernel's: kept as marked. */
		{ .function = "odd", .mapping = "[kernel.kallsyms]", .address = 1 },
	};
	static const struct prof_labels labels[] = {
		{ "Service billing", "gunicorn", "gunicorn", 4100, 4101, PROF_LANG_PYTHON },
		{ "Service billing", "billing-worker", "worker", 5200, 5201, PROF_LANG_NATIVE },
		{ "Unit nginx.service", "nginx", NULL, 880, 0, PROF_LANG_NATIVE },
		{ NULL, NULL, NULL, 0, 0, PROF_LANG_NATIVE },
	};
	static const struct fx_sample samples[] = {
		{ { 0, 1 }, 2, 0, { 5, 50 } },	{ { 3, 2 }, 2, 1, { 7, 70 } },
		{ { 4, 5 }, 2, 2, { 1, 10 } },	{ { 6 }, 1, 3, { 2, -3 } },
		{ { 0 }, 0, 3, { 1, 1 } },	{ { 7, 3, 6 }, 3, 0, { 9, 0 } },
		{ { 0, 1 }, 2, 1, { 4, 40 } },	{ { 8, 3 }, 2, 2, { 1, 1 } },
	};
	struct profile_opts o = { .period = 10101010, .time_nanos = 1700000000123456789LL,
				  .duration_nanos = 30000000000LL };

	return fx_profile(&o, frames, ARRAY_SIZE(frames), labels, samples, ARRAY_SIZE(samples));
}

static void assert_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_profile(const struct profile *a, const struct profile *b)
{
	const struct profile_opts *oa = profile__opts(a), *ob = profile__opts(b);
	const struct prof_frame_info *fa, *fb;
	struct prof_sample sa, sb;
	size_t i, j;

	assert_int_equal(oa->nvalues, ob->nvalues);
	for (i = 0; i < oa->nvalues; i++) {
		assert_string_equal(oa->sample_type[i], ob->sample_type[i]);
		assert_string_equal(oa->sample_unit[i], ob->sample_unit[i]);
		assert_true(profile__total(a, i) == profile__total(b, i));
	}
	assert_str_eq(oa->period_type, ob->period_type);
	assert_str_eq(oa->period_unit, ob->period_unit);
	assert_true(oa->period == ob->period);
	assert_true(oa->time_nanos == ob->time_nanos);
	assert_true(oa->duration_nanos == ob->duration_nanos);
	assert_int_equal(profile__nframes(a), profile__nframes(b));
	for (i = 0; i < profile__nframes(a); i++) {
		print_message("frame %zu\n", i);
		fa = profile__frame_info(a, (uint32_t)i);
		fb = profile__frame_info(b, (uint32_t)i);
		assert_str_eq(fa->function, fb->function);
		assert_str_eq(fa->file, fb->file);
		assert_int_equal(fa->line, fb->line);
		assert_str_eq(fa->mapping, fb->mapping);
		assert_str_eq(fa->build_id, fb->build_id);
		assert_true(fa->address == fb->address);
		assert_int_equal(fa->lang, fb->lang);
		assert_int_equal(fa->unnamed_stripped, fb->unnamed_stripped);
	}
	assert_int_equal(profile__nsamples(a), profile__nsamples(b));
	for (i = 0; i < profile__nsamples(a); i++) {
		print_message("sample %zu\n", i);
		assert_int_equal(profile__sample(a, i, &sa), 0);
		assert_int_equal(profile__sample(b, i, &sb), 0);
		assert_int_equal(sa.nframes, sb.nframes);
		for (j = 0; j < sa.nframes; j++)
			assert_int_equal(sa.frames[j], sb.frames[j]);
		for (j = 0; j < oa->nvalues; j++)
			assert_true(sa.values[j] == sb.values[j]);
		assert_str_eq(sa.labels->owner, sb.labels->owner);
		assert_str_eq(sa.labels->process, sb.labels->process);
		assert_str_eq(sa.labels->thread, sb.labels->thread);
		assert_int_equal(sa.labels->pid, sb.labels->pid);
		assert_int_equal(sa.labels->tid, sb.labels->tid);
		assert_int_equal(sa.labels->lang, sb.labels->lang);
	}
}

static void test_round_trip(void **state)
{
	struct profile *a, *b = NULL, *c = NULL, *empty;
	uint8_t *buf, *buf2;
	size_t len, len2;

	(void)state;
	a = sample_profile();
	assert_int_equal(pprof_encode(a, &buf, &len), 0);
	assert_true(len > 20 && buf[0] == 0x1f && buf[1] == 0x8b);
	assert_int_equal(pprof_decode(buf, len, &b), 0);
	assert_same_profile(a, b);
	/* Encoding the decoded profile gives the same bytes: nothing was lost or reordered. */
	assert_int_equal(pprof_encode(b, &buf2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	free(buf);

	/* An empty profile and a one-value profile. */
	struct profile_opts o1 = { .nvalues = 1, .sample_type = { "inuse_space" },
				   .sample_unit = { "bytes" } };
	assert_int_equal(profile__new(&o1, &empty), 0);
	assert_int_equal(pprof_encode(empty, &buf, &len), 0);
	assert_int_equal(pprof_decode(buf, len, &c), 0);
	assert_same_profile(empty, c);
	free(buf);
	profile__free(c);
	profile__free(empty);
	profile__free(a);
	profile__free(b);
	assert_int_equal(pprof_encode(NULL, &buf, &len), -EINVAL);
}

static void test_write_file(void **state)
{
	char dir[] = "/tmp/test_pprof.XXXXXX", path[256];
	struct profile *a, *b = NULL;
	FILE *f;
	uint8_t buf[1 << 16];
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	a = sample_profile();
	assert_int_equal(pprof_write_file(a, path), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(pprof_decode(buf, n, &b), 0);
	assert_same_profile(a, b);
	unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/missing/profile.pb.gz", dir);
	assert_int_equal(pprof_write_file(a, path), -ENOENT);
	profile__free(a);
	profile__free(b);
}

/* A raw message: "" then @n string_table entries (field 6) of @len bytes each ("x"s). */
static uint8_t *strings_msg(size_t n, size_t len, size_t *out_len)
{
	size_t i, at = 0, per = 1 + 5 + len;
	uint8_t *m = malloc(n * per + 2), *q;
	uint64_t v;

	assert_non_null(m);
	m[at++] = 0x32;	/* the mandatory "" */
	m[at++] = 0;
	for (i = 0; i < n; i++) {
		m[at++] = 0x32;
		for (v = len, q = m + at; v >= 0x80; v >>= 7)
			*q++ = (uint8_t)(v | 0x80);
		*q++ = (uint8_t)v;
		at = (size_t)(q - m);
		memset(m + at, 'x', len);
		at += len;
	}
	*out_len = at;
	return m;
}

/*
 * Hostile answers under RLIMIT_AS: many tiny entries (two bytes each, a hundred bytes each
 * decoded), a huge string table and a gzip bomb against the Go path's 64 MiB cap are refused
 * with -EFBIG before they are held, and the peak RSS stays far under the capture limit.
 */
static void test_decode_hostile(void **state)
{
	struct pprof_decode_opts go = { .max_decoded = 64u << 20 };
	static const struct {
		size_t n, len;
	} cases[] = {
		{ PPROF_MAX_TOTAL_ENTRIES, 0 },
		{ 20, PPROF_MAX_STRING_BYTES / 16 },
	};
	bool limited = hm_limit_as();
	struct profile *p = NULL;
	long hwm0 = hm_vmhwm_kb();
	size_t i, n;
	uint8_t *m;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		m = strings_msg(cases[i].n, cases[i].len, &n);
		assert_int_equal(pprof_decode_ext(m, n, &go, &p), -EFBIG);
		assert_null(p);
		free(m);
	}
	m = gz_zeros((64u << 20) + 4096, &n);
	assert_int_equal(pprof_decode_ext(m, n, &go, &p), -EFBIG);
	free(m);
	hm_restore_as(limited);
	/* The bomb's buffer grows to the 64 MiB cap; nothing else is held. */
	assert_true(hm_vmhwm_kb() - hwm0 < 100 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_valid),	 cmocka_unit_test(test_decode_variants),
		cmocka_unit_test(test_decode_malformed), cmocka_unit_test(test_decode_limits),
		cmocka_unit_test(test_decode_hostile),
		cmocka_unit_test(test_round_trip),	 cmocka_unit_test(test_write_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
