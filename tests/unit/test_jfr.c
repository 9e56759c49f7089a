// SPDX-License-Identifier: Apache-2.0
/*
 * The JFR parser (runtimes/jvm/jfr.h) over real recordings of Java 17 (OpenJDK 17.0.15) and
 * Java 25 (Temurin 25.0.3) made by tests/fixtures/jfr/make.sh, whose expected rows are what
 * `jfr print --json --stack-depth 300` says of them (counts per kind, weight and frame totals,
 * and a few events of each kind field by field), and a two-chunk Java 17 recording; every
 * 997th truncation of them; then
 * synthetic files from the small JFR writer below (header, metadata event, checkpoints,
 * events), one row per variant: the header checks, varints, the six string encodings,
 * counts, inline-struct cycles, the checkpoint chain, event sizes, missing and cyclic pool
 * references, fields found by name, deep stacks, two chunks; and the limits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/text.h"
#include "runtimes/jvm/jfr.h"
#include "runtimes/jvm/jfr_int.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define FIXTURES "tests/fixtures/jfr/"

/* --- reading fixtures ------------------------------------------------------------------------ */

static uint8_t *read_fixture(const char *name, size_t *len)
{
	char path[256];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc(n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

/* --- what a parse delivered ------------------------------------------------------------------ */

#define KEEP 6 /* events kept whole, for the synthetic rows */

struct kept {
	enum jfr_kind kind;
	int64_t start_ns, duration_ns;
	uint64_t weight, tid;
	char thread[64], cls[64];
	bool has_thread, has_cls;
	size_t cls_len, nframes;
	bool truncated;
	char f0_class[64], f0_method[64], f0_type[32];
	int32_t f0_line, f0_bci;
	bool f0_hidden, f0_has_class;
};

struct got {
	size_t n[JFR_KIND_COUNT];
	uint64_t weight[JFR_KIND_COUNT], frames[JFR_KIND_COUNT];
	size_t nkept;
	struct kept kept[KEEP];
	const struct want *want; /* fixture rows to look for */
	size_t nwant;
	unsigned *found;
	int stop_after; /* return 7 after this many events; 0: never */
};

static void copy(char *dst, size_t size, const char *s, bool *has)
{
	if (has)
		*has = s != NULL;
	snprintf(dst, size, "%s", s ? s : "");
}

static void check_strings(const struct jfr_event *ev)
{
	const char *s[] = { ev->thread_name, ev->object_class };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		if (s[i])
			assert_true(text_utf8_is_valid(s[i], strlen(s[i])));
	for (i = 0; i < ev->nframes; i++) {
		const struct jfr_frame *f = &ev->frames[i];

		if (f->class_name)
			assert_true(text_utf8_is_valid(f->class_name, strlen(f->class_name)));
		if (f->method)
			assert_true(text_utf8_is_valid(f->method, strlen(f->method)));
		if (f->type)
			assert_true(text_utf8_is_valid(f->type, strlen(f->type)));
	}
	assert_true(ev->nframes <= JFR_MAX_FRAMES);
}

static void keep(struct got *g, const struct jfr_event *ev)
{
	struct kept *k = &g->kept[g->nkept++];

	k->kind = ev->kind;
	k->start_ns = ev->start_ns;
	k->duration_ns = ev->duration_ns;
	k->weight = ev->weight;
	k->tid = ev->thread_os_id;
	copy(k->thread, sizeof(k->thread), ev->thread_name, &k->has_thread);
	copy(k->cls, sizeof(k->cls), ev->object_class, &k->has_cls);
	k->cls_len = ev->object_class ? strlen(ev->object_class) : 0;
	k->nframes = ev->nframes;
	k->truncated = ev->truncated;
	if (ev->nframes) {
		copy(k->f0_class, sizeof(k->f0_class), ev->frames[0].class_name, &k->f0_has_class);
		copy(k->f0_method, sizeof(k->f0_method), ev->frames[0].method, NULL);
		copy(k->f0_type, sizeof(k->f0_type), ev->frames[0].type, NULL);
		k->f0_line = ev->frames[0].line;
		k->f0_bci = ev->frames[0].bci;
		k->f0_hidden = ev->frames[0].hidden;
	}
}

static void match_want(struct got *g, const struct jfr_event *ev);

static int collect(void *ctx, const struct jfr_event *ev)
{
	struct got *g = ctx;
	size_t total = 0, i;

	assert_true(ev->kind < JFR_KIND_COUNT);
	check_strings(ev);
	g->n[ev->kind]++;
	g->weight[ev->kind] += ev->weight;
	g->frames[ev->kind] += ev->nframes;
	if (g->nkept < KEEP)
		keep(g, ev);
	if (g->want)
		match_want(g, ev);
	for (i = 0; i < JFR_KIND_COUNT; i++)
		total += g->n[i];
	return g->stop_after && (int)total >= g->stop_after ? 7 : 0;
}

/* --- the real recordings --------------------------------------------------------------------- */

struct want_frame {
	const char *cls, *method;
	int32_t line, bci;
	const char *type;
	bool hidden;
};

struct want {
	enum jfr_kind kind;
	int64_t start_ns, duration_ns, alloc_ns;
	uint64_t weight;
	int64_t array_elements;
	const char *thread;
	uint64_t tid;
	const char *cls;
	size_t nframes;
	bool truncated;
	struct want_frame f[4];
};

/* From `jfr print --json --stack-depth 300` (times in epoch ns; names dotted). */
static const struct want want17[] = {
	{ JFR_ALLOC_SAMPLE, 1796193902587354601ll, 0, 0, 229655592, -1, "main", 5144, "byte[]", 2, false, { { "JfrWork", "allocEscaping", 14, 12, "JIT compiled", false }, { "JfrWork", "main", 62, 74, "Interpreted", false } } },
	{ JFR_ALLOC_SAMPLE, 1796193902589242491ll, 0, 0, 521040, -1, "main", 5144, "long[]", 2, false, { { "JfrWork", "keepArrays", 19, 20, "Interpreted", false }, { "JfrWork", "main", 63, 77, "Interpreted", false } } },
	{ JFR_THREAD_PARK, 1796193902630827554ll, 50140696, 0, 0, -1, "lock-2", 5173, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 11, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false }, { "java.util.concurrent.locks.LockSupport", "park", 211, 14, "Interpreted", false }, { "java.util.concurrent.locks.AbstractQueuedSynchronizer", "acquire", 715, 347, "Interpreted", false } } },
	{ JFR_THREAD_PARK, 1796193902941805046ll, 50398275, 0, 0, -1, "lock-3", 5174, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 11, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false }, { "java.util.concurrent.locks.LockSupport", "park", 211, 14, "Interpreted", false } } },
	{ JFR_MONITOR_ENTER, 1796193902662887606ll, 314793889, 0, 0, -1, "mon-0", 5171, "java.lang.Object", 5, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false }, { "JfrWork", "loop", 45, 4, "Interpreted", false }, { "JfrWork", "lambda$main$0", 56, 1, "Interpreted", false }, { "JfrWork$$Lambda$1+0x00007fba24000a08/622488023", "run", -1, 4, "Interpreted", true } } },
	{ JFR_MONITOR_ENTER, 1796193902977838573ll, 200814693, 0, 0, -1, "mon-1", 5172, "java.lang.Object", 5, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false } } },
	{ JFR_ALLOC_OUTSIDE, 1796193903046093958ll, 0, 0, 4194320, -1, "main", 5144, "byte[]", 2, false, { { "JfrWork", "allocLarge", 23, 2, "Interpreted", false }, { "JfrWork", "main", 65, 88, "Interpreted", false } } },
	{ JFR_ALLOC_OUTSIDE, 1796193903292678379ll, 0, 0, 4194320, -1, "main", 5144, "byte[]", 2, false, { { "JfrWork", "allocLarge", 23, 2, "Interpreted", false } } },
	/* JDK 17's OldObjectSample has no objectSize: weight 0 */
	{ JFR_OLD_OBJECT, 1796193906365118460ll, 0, 1796193902589242060ll, 0, 512, "main", 5144, "long[]", 2, false, { { "JfrWork", "keepArrays", 19, 20, "Interpreted", false }, { "JfrWork", "main", 63, 77, "Interpreted", false } } },
	{ JFR_OLD_OBJECT, 1796193906365118460ll, 0, 1796193902596010013ll, 0, 512, "main", 5144, "long[]", 2, false, { { "JfrWork", "keepArrays", 19, 20, "Interpreted", false } } },
};

static const struct want want25[] = {
	{ JFR_ALLOC_SAMPLE, 1796193909112740557ll, 0, 0, 244060832, -1, "main", 5373, "byte[]", 2, false, { { "JfrWork", "allocEscaping", 14, 12, "JIT compiled", false }, { "JfrWork", "main", 62, 74, "Interpreted", false } } },
	{ JFR_ALLOC_SAMPLE, 1796193909114941100ll, 0, 0, 523120, -1, "main", 5373, "byte[]", 2, false, { { "JfrWork", "allocEscaping", 14, 12, "JIT compiled", false } } },
	{ JFR_ALLOC_OUTSIDE, 1796193909200227969ll, 0, 0, 1040, -1, "main", 5373, "byte[]", 2, false, { { "JfrWork", "allocEscaping", 14, 12, "JIT compiled", false }, { "JfrWork", "main", 62, 74, "Interpreted", false } } },
	{ JFR_ALLOC_OUTSIDE, 1796193909395207999ll, 0, 0, 4194320, -1, "main", 5373, "byte[]", 2, false, { { "JfrWork", "allocLarge", 23, 2, "Interpreted", false }, { "JfrWork", "main", 65, 88, "Interpreted", false } } },
	{ JFR_THREAD_PARK, 1796193909161153808ll, 50220918, 0, 0, -1, "lock-2", 5393, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 12, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false }, { "java.util.concurrent.locks.LockSupport", "park", 223, 32, "Interpreted", false }, { "java.util.concurrent.locks.AbstractQueuedSynchronizer", "acquire", 790, 361, "Interpreted", false } } },
	{ JFR_THREAD_PARK, 1796193909211442494ll, 50270373, 0, 0, -1, "lock-3", 5394, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 12, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false } } },
	/* Java 25 hides Thread.runWith and the lambda's class is "JfrWork$$Lambda/0x...": frames 4 and 5 */
	{ JFR_MONITOR_ENTER, 1796193909138929306ll, 111370159, 0, 0, -1, "mon-1", 5392, "java.lang.Object", 6, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false }, { "JfrWork", "loop", 45, 4, "Interpreted", false }, { "JfrWork", "lambda$main$0", 56, 1, "Interpreted", false }, { "JfrWork$$Lambda/0x0000000033040210", "run", -1, 4, "Interpreted", true } } },
	{ JFR_MONITOR_ENTER, 1796193909250388363ll, 50209647, 0, 0, -1, "mon-0", 5391, "java.lang.Object", 6, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false } } },
	/* JDK 25's OldObjectSample has objectSize (4112 bytes for a long[512]) */
	{ JFR_OLD_OBJECT, 1796193912865834177ll, 0, 1796193909243540638ll, 4112, 512, "main", 5373, "long[]", 2, false, { { "JfrWork", "keepArrays", 19, 20, "JIT compiled", false }, { "JfrWork", "main", 63, 77, "Interpreted", false } } },
	{ JFR_OLD_OBJECT, 1796193912865834177ll, 0, 1796193909248335150ll, 4112, 512, "main", 5373, "long[]", 2, false, { { "JfrWork", "keepArrays", 19, 20, "JIT compiled", false } } },
};

/*
 * Two chunks: the monitor entered before the rotation is committed into the second chunk, whose
 * checkpoints lack its stack trace (the first chunk's have it). The JDK's tools (17 and 25)
 * convert the second chunk's ticks with the first chunk's header; the parser uses each chunk's
 * own, which here gives 140 ns more (the header's wall clock and ticks drift apart by that
 * much in 1.8 s): the second chunk's rows are `jfr print`'s times plus 140 ns.
 */
static const struct want want17x2[] = {
	{ JFR_THREAD_PARK, 1796195269922731399ll, 50159963, 0, 0, -1, "lock-2", 31334, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 11, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false }, { "java.util.concurrent.locks.LockSupport", "park", 211, 14, "Interpreted", false } } },
	{ JFR_MONITOR_ENTER, 1796195269990544516ll, 101026545, 0, 0, -1, "mon-1", 31333, "java.lang.Object", 5, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false }, { "JfrWork", "loop", 45, 4, "Interpreted", false } } },
	{ JFR_MONITOR_ENTER, 1796195271548622217ll + 140, 201952080, 0, 0, -1, "mon-1", 31333, "java.lang.Object", 5, false, { { "JfrWork", "holdMonitor", 28, 6, "Interpreted", false }, { "JfrWork", "loop", 45, 4, "Interpreted", false }, { "JfrWork", "lambda$main$0", 56, 1, "Interpreted", false } } },
	{ JFR_THREAD_PARK, 1796195271889909313ll + 140, 50264541, 0, 0, -1, "lock-3", 31335, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 11, false, { { "jdk.internal.misc.Unsafe", "park", -1, 0, "Native", false }, { "java.util.concurrent.locks.LockSupport", "park", 211, 14, "Interpreted", false } } },
};

static void assert_str(const char *got, const char *want)
{
	if (!want)
		assert_null(got);
	else
		assert_string_equal(got ? got : "(null)", want);
}

static void check_want(const struct want *w, const struct jfr_event *ev)
{
	size_t i;

	assert_int_equal(ev->duration_ns, w->duration_ns);
	assert_int_equal(ev->weight, w->weight);
	assert_int_equal(ev->array_elements, w->array_elements);
	assert_str(ev->thread_name, w->thread);
	assert_int_equal(ev->thread_os_id, w->tid);
	assert_str(ev->object_class, w->cls);
	assert_int_equal(ev->nframes, w->nframes);
	assert_int_equal(ev->truncated, w->truncated);
	for (i = 0; i < ARRAY_SIZE(w->f) && w->f[i].cls; i++) {
		assert_str(ev->frames[i].class_name, w->f[i].cls);
		assert_str(ev->frames[i].method, w->f[i].method);
		assert_int_equal(ev->frames[i].line, w->f[i].line);
		assert_int_equal(ev->frames[i].bci, w->f[i].bci);
		assert_str(ev->frames[i].type, w->f[i].type);
		assert_int_equal(ev->frames[i].hidden, w->f[i].hidden);
	}
}

static void match_want(struct got *g, const struct jfr_event *ev)
{
	size_t i;

	for (i = 0; i < g->nwant; i++) {
		const struct want *w = &g->want[i];

		if (w->kind != ev->kind || w->start_ns != ev->start_ns || w->alloc_ns != ev->alloc_ns)
			continue;
		print_message("fixture row %zu\n", i);
		check_want(w, ev);
		g->found[i]++;
	}
}

static const struct fixture {
	const char *file;
	const struct want *want;
	size_t nwant;
	size_t n[JFR_KIND_COUNT];
	uint64_t weight[JFR_KIND_COUNT], frames[JFR_KIND_COUNT];
	uint64_t pool_entries, chunks;
} fixtures[] = {
	{ "java17.jfr", want17, ARRAY_SIZE(want17),
	  { [JFR_ALLOC_SAMPLE] = 3759, [JFR_ALLOC_OUTSIDE] = 12, [JFR_OLD_OBJECT] = 247, [JFR_MONITOR_ENTER] = 21, [JFR_THREAD_PARK] = 73 },
	  { [JFR_ALLOC_SAMPLE] = 2832644640ull, [JFR_ALLOC_OUTSIDE] = 50331840ull },
	  { [JFR_ALLOC_SAMPLE] = 7610, [JFR_ALLOC_OUTSIDE] = 24, [JFR_OLD_OBJECT] = 494, [JFR_MONITOR_ENTER] = 105, [JFR_THREAD_PARK] = 803 },
	  998, 1 },
	{ "java25.jfr", want25, ARRAY_SIZE(want25),
	  { [JFR_ALLOC_SAMPLE] = 3625, [JFR_ALLOC_OUTSIDE] = 26, [JFR_OLD_OBJECT] = 249, [JFR_MONITOR_ENTER] = 25, [JFR_THREAD_PARK] = 71 },
	  { [JFR_ALLOC_SAMPLE] = 2758119432ull, [JFR_ALLOC_OUTSIDE] = 46168480ull, [JFR_OLD_OBJECT] = 5214096ull },
	  { [JFR_ALLOC_SAMPLE] = 7551, [JFR_ALLOC_OUTSIDE] = 52, [JFR_OLD_OBJECT] = 498, [JFR_MONITOR_ENTER] = 150, [JFR_THREAD_PARK] = 852 },
	  1001, 1 },
	{ "java17-2chunks.jfr", want17x2, ARRAY_SIZE(want17x2),
	  { [JFR_MONITOR_ENTER] = 25, [JFR_THREAD_PARK] = 81 },
	  { 0 },
	  { [JFR_MONITOR_ENTER] = 125, [JFR_THREAD_PARK] = 891 },
	  1267, 2 },
};

static void test_fixtures(void **state)
{
	size_t i, k, len, events;
	struct jfr_stats st;
	uint8_t *buf;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(fixtures); i++) {
		const struct fixture *fx = &fixtures[i];
		unsigned found[16] = { 0 };
		struct got g = { .want = fx->want, .nwant = fx->nwant, .found = found };

		print_message("fixture %s\n", fx->file);
		buf = read_fixture(fx->file, &len);
		assert_int_equal(jfr_parse(buf, len, collect, &g, &st), 0);
		for (k = 0, events = 0; k < JFR_KIND_COUNT; k++) {
			assert_int_equal(g.n[k], fx->n[k]);
			assert_int_equal(g.weight[k], fx->weight[k]);
			assert_int_equal(g.frames[k], fx->frames[k]);
			events += fx->n[k];
		}
		for (k = 0; k < fx->nwant; k++)
			assert_int_equal(found[k], 1);
		assert_int_equal(st.chunks, fx->chunks);
		assert_int_equal(st.events, events);
		assert_int_equal(st.delivered, events);
		assert_int_equal(st.skipped_unknown, 0);
		assert_int_equal(st.bad_stacks, 0);
		assert_int_equal(st.pool_entries, fx->pool_entries);
		free(buf);
	}
}

/* A callback's nonzero return stops the parse and is returned; NULL stats are fine. */
static void test_fixture_stop(void **state)
{
	struct got g = { .stop_after = 3 };
	uint8_t *buf;
	size_t len;

	(void)state;
	buf = read_fixture("java25.jfr", &len);
	assert_int_equal(jfr_parse(buf, len, collect, &g, NULL), 7);
	assert_int_equal(g.nkept, 3);
	assert_int_equal(jfr_parse(buf, len, NULL, NULL, NULL), 0);
	free(buf);
}

/*
 * Every 997th cut of the real files, each in a buffer of exactly its size (for ASan), in three
 * forms: the prefix as it is (its header's size is past the end: -EBADMSG); the prefix with its
 * header's chunk size made the prefix's, so the parse goes on into the cut records, offsets and
 * pools; the whole file with the byte at the cut inverted. An error or 0, never a crash.
 */
static int cut_parse(const uint8_t *buf, size_t len, size_t cut, int form)
{
	size_t n = form == 2 ? len : cut;
	uint8_t *part = malloc(n ? n : 1);
	struct got g = { 0 };
	int err, i;

	assert_non_null(part);
	memcpy(part, buf, n);
	if (form == 1 && cut >= JFR_HEADER_SIZE)
		for (i = 0; i < 8; i++)
			part[8 + i] = (uint8_t)((uint64_t)cut >> (56 - 8 * i));
	if (form == 2)
		part[cut] ^= 0xff;
	err = jfr_parse(part, n, collect, &g, NULL);
	free(part);
	return err;
}

static void test_fixture_truncated(void **state)
{
	size_t i, cut, len, ok;
	int err, form;
	uint8_t *buf;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(fixtures); i++) {
		buf = read_fixture(fixtures[i].file, &len);
		for (form = 0; form < 3; form++) {
			for (cut = 0, ok = 0; cut < len; cut += 997) {
				err = cut_parse(buf, len, cut, form);
				if (form == 0)
					assert_int_equal(err, -EBADMSG);
				else
					assert_true(err == 0 || err == -EBADMSG || err == -E2BIG);
				ok += !err;
			}
			print_message("%s form %d: %zu cuts parsed\n", fixtures[i].file, form, ok);
		}
		free(buf);
	}
}

/* --- a tiny JFR writer ----------------------------------------------------------------------- */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

static void w_put(struct wbuf *b, const void *d, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void w_u8(struct wbuf *b, uint8_t v)
{
	w_put(b, &v, 1);
}

static void w_be(struct wbuf *b, uint64_t v, int n)
{
	while (n--)
		w_u8(b, v >> (8 * n));
}

static void patch_be(struct wbuf *b, size_t at, uint64_t v, int n)
{
	while (n--)
		b->p[at++] = v >> (8 * n);
}

/* A JFR varint, minimal: 7 bits a byte, the ninth byte whole. */
static void w_var(struct wbuf *b, uint64_t v)
{
	int i;

	for (i = 0; i < 8 && v >= 0x80; i++, v >>= 7)
		w_u8(b, (v & 0x7f) | 0x80);
	w_u8(b, v);
}

/* A varint padded to @n bytes (n <= 8), as HotSpot writes reserved sizes. */
static void w_var_pad(struct wbuf *b, uint64_t v, int n)
{
	while (--n) {
		w_u8(b, (v & 0x7f) | 0x80);
		v >>= 7;
	}
	w_u8(b, v & 0x7f);
}

static void patch_var_pad(struct wbuf *b, size_t at, uint64_t v, int n)
{
	while (--n) {
		b->p[at++] = (v & 0x7f) | 0x80;
		v >>= 7;
	}
	b->p[at] = v & 0x7f;
}

static void w_utf8(struct wbuf *b, const char *s)
{
	w_u8(b, 3);
	w_var(b, strlen(s));
	w_put(b, s, strlen(s));
}

/* UTF-16 char array (encoding 4), as the JDK writes its metadata strings. */
static void w_chars(struct wbuf *b, const char *s)
{
	w_u8(b, 4);
	w_var(b, strlen(s));
	while (*s)
		w_var(b, (uint8_t)*s++);
}

/* A record: a 5-byte padded size patched by rec_end(). */
static size_t rec_begin(struct wbuf *b, uint64_t type)
{
	size_t at = b->len;

	w_var_pad(b, 0, 5);
	w_var(b, type);
	return at;
}

static void rec_end(struct wbuf *b, size_t at)
{
	patch_var_pad(b, at, b->len - at, 5);
}

/* --- the synthetic recordings ---------------------------------------------------------------- */

#define T_LONG 1
#define T_INT 2
#define T_BOOL 3
#define T_STRING 4
#define T_FLOAT 5
#define T_DOUBLE 6
#define T_BYTE 7
#define T_THREAD 20
#define T_CLASS 21
#define T_SYMBOL 22
#define T_METHOD 23
#define T_FRAME 24
#define T_STACK 25
#define T_FRAMETYPE 26
#define T_ALLOC 30
#define T_MONITOR 31
#define T_UNKNOWN 32
#define T_X 40 /* the variants' own classes, 40 and up */

#define START_NS 1700000000000000000ll
#define START_TICKS 5000
#define TPS 1000000000

enum variant {
	V_OK,
	V_BAD_MAGIC,
	V_MAJOR1,
	V_MAJOR3,
	V_FLAGS0,
	V_UNFINISHED,
	V_SIZE_PAST,
	V_SIZE_SMALL,
	V_CP_OFF_PAST,
	V_META_OFF_LOW,
	V_CP_OFF_NOT_CP,
	V_META_OFF_NOT_META,
	V_TPS0,
	V_TRAILING,
	V_VARINT10,
	V_PADDED,
	V_STR_PAST_END,
	V_BAD_ENC,
	V_LATIN1,
	V_UTF16,
	V_STRREF,
	V_NULLSTR,
	V_EMPTYSTR,
	V_BAD_UTF8,
	V_LONG_STR,
	V_HUGE_STRINGS,
	V_HUGE_NPOOLS,
	V_HUGE_POOL_COUNT,
	V_HUGE_FRAMES,
	V_HUGE_ATTRS,
	V_HUGE_CHILDREN,
	V_SELF_INLINE,
	V_MUTUAL_INLINE,
	V_SELF_ARRAY,
	V_DEEP_INLINE,
	V_ZERO_SIZE_STRUCTS,
	V_FIELD_TYPE_MISSING,
	V_DUP_CLASS,
	V_BAD_STRING_INDEX,
	V_ID_NOT_DECIMAL,
	V_BAD_DIMENSION,
	V_META_DEPTH,
	V_POOL_TYPE_UNDECLARED,
	V_CP_TRAILING,
	V_DELTA_FORWARD,
	V_DELTA_LOOP,
	V_DELTA_BEFORE_HEADER,
	V_TWO_CP,
	V_EVENT_SIZE0,
	V_EVENT_PAST,
	V_EVENT_SHORT,
	V_MISSING_KEYS,
	V_REF_CYCLE,
	V_ROLE_MISMATCH,
	V_FIELD_ORDER,
	V_NO_WEIGHT,
	V_WEIGHT_STRING,
	V_EXTRA_FIELDS,
	V_DEEP_STACK,
	V_TRUNC_FLAG,
	V_HIDDEN,
	V_CHUNKS,
	V_LIMITS, /* the limit tests: the knobs of struct spec */
	V_BUDGET,
};

struct tfield {
	const char *name;
	uint64_t type;
	bool cp, array;
};

struct tclass {
	uint64_t id;
	const char *name;
	bool event;
	struct tfield f[10];
};

static const struct tclass base_classes[] = {
	{ T_LONG, "long" },
	{ T_INT, "int" },
	{ T_BOOL, "boolean" },
	{ T_STRING, "java.lang.String" },
	{ T_FLOAT, "float" },
	{ T_DOUBLE, "double" },
	{ T_BYTE, "byte" },
	{ T_THREAD, "java.lang.Thread", false, { { "osName", T_STRING }, { "osThreadId", T_LONG }, { "javaName", T_STRING }, { "javaThreadId", T_LONG } } },
	{ T_CLASS, "java.lang.Class", false, { { "name", T_SYMBOL, true }, { "hidden", T_BOOL } } },
	{ T_SYMBOL, "jdk.types.Symbol", false, { { "string", T_STRING } } },
	{ T_METHOD, "jdk.types.Method", false, { { "type", T_CLASS, true }, { "name", T_SYMBOL, true }, { "descriptor", T_SYMBOL, true }, { "hidden", T_BOOL } } },
	{ T_FRAME, "jdk.types.StackFrame", false, { { "method", T_METHOD, true }, { "lineNumber", T_INT }, { "bytecodeIndex", T_INT }, { "type", T_FRAMETYPE, true } } },
	{ T_STACK, "jdk.types.StackTrace", false, { { "truncated", T_BOOL }, { "frames", T_FRAME, false, true } } },
	{ T_FRAMETYPE, "jdk.types.FrameType", false, { { "description", T_STRING } } },
	{ T_ALLOC, "jdk.ObjectAllocationSample", true, { { "startTime", T_LONG }, { "eventThread", T_THREAD, true }, { "stackTrace", T_STACK, true }, { "objectClass", T_CLASS, true }, { "weight", T_LONG } } },
	{ T_MONITOR, "jdk.JavaMonitorEnter", true, { { "startTime", T_LONG }, { "duration", T_LONG }, { "eventThread", T_THREAD, true }, { "stackTrace", T_STACK, true }, { "monitorClass", T_CLASS, true }, { "previousOwner", T_THREAD, true }, { "address", T_LONG } } },
	{ T_UNKNOWN, "x.Unknown", true, { { "startTime", T_LONG }, { "value", T_STRING } } },
};

struct spec {
	enum variant v;
	struct tclass classes[64];
	size_t nclasses;
	int chunk;		 /* 0, then 1 and 2 for V_CHUNKS */
	size_t pad_strings;	 /* null strings added to the metadata's table */
	size_t extra_classes;	 /* fieldless classes added to the metadata */
	size_t extra_fields;	 /* long fields added to jdk.ObjectAllocationSample */
	size_t more_entries;	 /* entries of an x.Double pool (key 1, a double: 9 bytes) */
	size_t extra_cps;	 /* empty checkpoints chained before the last */
	size_t budget_stacks;	 /* V_BUDGET: stacks of 256 one-byte frames, one event each */
};

static struct tclass *spec_class(struct spec *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nclasses; i++)
		if (s->classes[i].id == id)
			return &s->classes[i];
	fail_msg("no class %llu", (unsigned long long)id);
	return NULL;
}

static void add_class(struct spec *s, uint64_t id, const char *name, const struct tfield *f,
		      size_t nf)
{
	struct tclass *c = &s->classes[s->nclasses++];

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->name = name;
	if (nf)
		memcpy(c->f, f, nf * sizeof(*f));
}

/* The variants that add classes of their own (ids from T_X). */
static void spec_added(struct spec *s)
{
	struct tclass *alloc = spec_class(s, T_ALLOC);
	unsigned i;

	switch (s->v) {
	case V_SELF_INLINE:
		add_class(s, T_X, "x.Self", (struct tfield[]){ { "me", T_X } }, 1);
		break;
	case V_MUTUAL_INLINE:
		add_class(s, T_X, "x.A", (struct tfield[]){ { "b", T_X + 1 } }, 1);
		add_class(s, T_X + 1, "x.B", (struct tfield[]){ { "a", T_X } }, 1);
		break;
	case V_SELF_ARRAY:
		add_class(s, T_X, "x.Tree", (struct tfield[]){ { "kids", T_X, false, true } }, 1);
		break;
	case V_DEEP_INLINE:
		for (i = 0; i < 20; i++)
			add_class(s, T_X + i, "x.Deep", (struct tfield[]){ { "next", i < 19 ? T_X + i + 1 : T_LONG } }, 1);
		break;
	case V_ZERO_SIZE_STRUCTS: /* x.Empty takes no bytes: fields of it and arrays of it are free */
		add_class(s, T_X, "x.Empty", NULL, 0);
		add_class(s, T_X + 1, "x.Nest", (struct tfield[]){ { "a", T_X }, { "b", T_X } }, 2);
		alloc->f[5] = (struct tfield){ "pad", T_X + 1 };
		alloc->f[6] = (struct tfield){ "pads", T_X + 1, false, true };
		break;
	case V_DUP_CLASS:
		add_class(s, T_ALLOC, "x.Again", NULL, 0);
		break;
	case V_EXTRA_FIELDS: /* fields of every shape before and after the weight */
		add_class(s, T_X, "x.Pair", (struct tfield[]){ { "d", T_DOUBLE }, { "s", T_STRING } }, 2);
		memmove(&alloc->f[5], &alloc->f[4], sizeof(alloc->f[4]));
		alloc->f[4] = (struct tfield){ "pair", T_X };
		alloc->f[6] = (struct tfield){ "f", T_FLOAT };
		alloc->f[7] = (struct tfield){ "longs", T_LONG, false, true };
		alloc->f[8] = (struct tfield){ "b", T_BYTE };
		alloc->f[9] = (struct tfield){ "pairs", T_X, false, true };
		break;
	default:
		break;
	}
	if (s->more_entries)
		add_class(s, T_X + 30, "x.Double", (struct tfield[]){ { "d", T_DOUBLE } }, 1);
}

/* The metadata's classes: the base ones, changed or added to by the variant. */
static void spec_classes(struct spec *s)
{
	struct tclass *alloc, *frame;

	memcpy(s->classes, base_classes, sizeof(base_classes));
	s->nclasses = ARRAY_SIZE(base_classes);
	alloc = spec_class(s, T_ALLOC);
	frame = spec_class(s, T_FRAME);
	switch (s->v) {
	case V_FIELD_TYPE_MISSING:
		alloc->f[5] = (struct tfield){ "ghost", 999 };
		break;
	case V_REF_CYCLE: /* Symbol.string is a key of the Symbol pool: the symbols point at themselves */
		spec_class(s, T_SYMBOL)->f[0] = (struct tfield){ "string", T_SYMBOL, true };
		break;
	case V_ROLE_MISMATCH: /* objectClass is declared a Thread key */
		alloc->f[3].type = T_THREAD;
		break;
	case V_FIELD_ORDER:
		memcpy(alloc->f, (struct tfield[]){ { "weight", T_LONG }, { "objectClass", T_CLASS, true }, { "stackTrace", T_STACK, true }, { "eventThread", T_THREAD, true }, { "startTime", T_LONG } }, 5 * sizeof(struct tfield));
		break;
	case V_NO_WEIGHT:
		alloc->f[4] = (struct tfield){ NULL };
		break;
	case V_WEIGHT_STRING:
		alloc->f[4].type = T_STRING;
		break;
	case V_BUDGET: /* frames of one byte: their memo costs 40 times their bytes */
		memset(frame->f, 0, sizeof(frame->f));
		frame->f[0] = (struct tfield){ "method", T_METHOD, true };
		break;
	default:
		break;
	}
	spec_added(s);
}

/* --- metadata -------------------------------------------------------------------------------- */

struct strtab {
	char *s[512];
	size_t n;
};

static uint64_t str_index(struct strtab *t, const char *s)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], s))
			return i;
	assert_true(t->n < ARRAY_SIZE(t->s));
	t->s[t->n] = strdup(s);
	assert_non_null(t->s[t->n]);
	return t->n++;
}

static void strtab_free(struct strtab *t)
{
	while (t->n)
		free(t->s[--t->n]);
}

/* An element header: its name, @nattr key/value pairs, its child count. */
static void w_el(struct wbuf *b, struct strtab *t, const char *name, const char *const *kv,
		 size_t nattr, uint64_t nchild)
{
	size_t i;

	w_var(b, str_index(t, name));
	w_var(b, nattr);
	for (i = 0; i < 2 * nattr; i++)
		w_var(b, str_index(t, kv[i]));
	w_var(b, nchild);
}

static size_t nfields(const struct tclass *c)
{
	size_t n = 0;

	while (n < ARRAY_SIZE(c->f) && c->f[n].name)
		n++;
	return n;
}

static void w_field(struct wbuf *b, struct strtab *t, const struct spec *s, const struct tfield *f)
{
	char id[24];
	const char *kv[8] = { "name", f->name, "class", id };
	size_t n = 2;

	snprintf(id, sizeof(id), "%llu", (unsigned long long)f->type);
	if (f->cp) {
		kv[2 * n] = "constantPool";
		kv[2 * n++ + 1] = "true";
	}
	if (f->array || s->v == V_BAD_DIMENSION) {
		kv[2 * n] = "dimension";
		kv[2 * n++ + 1] = s->v == V_BAD_DIMENSION ? "2" : "1";
	}
	w_el(b, t, "field", kv, n, 0);
}

static void w_class(struct wbuf *b, struct strtab *t, const struct spec *s, const struct tclass *c)
{
	bool simple = c->id == T_SYMBOL || c->id == T_FRAMETYPE; /* the JDK unwraps these */
	char id[24];
	const char *kv[6] = { "id", id, "name", c->name, c->event ? "superType" : "simpleType",
			      c->event ? "jdk.jfr.Event" : "true" };
	size_t i, nf = nfields(c), extra = c->id == T_ALLOC ? s->extra_fields : 0;

	snprintf(id, sizeof(id), "%llu%s", (unsigned long long)c->id,
		 s->v == V_ID_NOT_DECIMAL && c->id == T_ALLOC ? "x" : "");
	w_el(b, t, "class", kv, c->event || simple ? 3 : 2, nf + extra);
	for (i = 0; i < nf; i++)
		w_field(b, t, s, &c->f[i]);
	for (i = 0; i < extra; i++)
		w_field(b, t, s, &(struct tfield){ "more", T_LONG });
}

/* The element tree: root { metadata { class* }, region { annotation... } }. */
static void w_tree(struct wbuf *b, struct strtab *t, const struct spec *s)
{
	size_t i;

	w_el(b, t, "root", NULL, 0, 2);
	w_el(b, t, "metadata", NULL, 0, s->nclasses + s->extra_classes);
	for (i = 0; i < s->nclasses; i++)
		w_class(b, t, s, &s->classes[i]);
	for (i = 0; i < s->extra_classes; i++)
		w_el(b, t, "class", (const char *[]){ "id", "1000", "name", "x.More" }, 2, 0);
	if (s->v == V_HUGE_ATTRS) {
		w_var(b, str_index(t, "region"));
		w_var(b, 1ull << 40);
		return;
	}
	if (s->v == V_HUGE_CHILDREN) {
		w_el(b, t, "region", NULL, 0, 1ull << 40);
		return;
	}
	if (s->v == V_BAD_STRING_INDEX) {
		w_var(b, 9999);
		return;
	}
	w_el(b, t, "region", NULL, 0, s->v == V_META_DEPTH);
	for (i = 0; s->v == V_META_DEPTH && i < 40; i++)
		w_el(b, t, "annotation", NULL, 0, i < 39);
}

static void w_metadata(struct wbuf *b, const struct spec *s)
{
	struct strtab t = { .n = 0 };
	struct wbuf tree = { 0 };
	size_t at, i;

	w_tree(&tree, &t, s);
	at = rec_begin(b, 0);
	w_var(b, 0); /* start */
	w_var(b, 0); /* duration */
	w_var(b, 1); /* metadata id */
	w_var(b, s->v == V_HUGE_STRINGS ? 1ull << 40 : t.n + s->pad_strings);
	for (i = 0; i < t.n; i++)
		w_chars(b, t.s[i]);
	for (i = 0; i < s->pad_strings; i++)
		w_u8(b, 0);
	w_put(b, tree.p, tree.len);
	rec_end(b, at);
	free(tree.p);
	strtab_free(&t);
}

/* --- constant pools -------------------------------------------------------------------------- */

/* A varint in exactly 9 bytes, so it can be patched in place. */
static void w_var9(struct wbuf *b, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 7)
		w_u8(b, (v & 0x7f) | 0x80);
	w_u8(b, v);
}

static void patch_var9(struct wbuf *b, size_t at, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 7)
		b->p[at + i] = (v & 0x7f) | 0x80;
	b->p[at + 8] = v;
}

/* @n varints, each an unsigned long long argument. */
static void w_vars(struct wbuf *b, int n, ...)
{
	va_list ap;

	va_start(ap, n);
	while (n--)
		w_var(b, va_arg(ap, unsigned long long));
	va_end(ap);
}

struct pools {
	struct wbuf b;
	uint64_t n;
};

static void pool(struct pools *p, uint64_t type, uint64_t count)
{
	w_var(&p->b, type);
	w_var(&p->b, count);
	p->n++;
}

/* Symbol 1, the name of class 1 (com/example/Foo), in the string variants' encodings. */
static void w_symbol1(struct wbuf *b, const struct spec *s)
{
	static const uint16_t chars[] = { 'A', '/', 'b', 0xd83d, 0xde00, 0xd800, 'x', 0 };
	size_t i;

	switch (s->v) {
	case V_STR_PAST_END:
		w_u8(b, 3);
		w_var(b, 100000);
		w_put(b, "abc", 3);
		return;
	case V_BAD_ENC:
		w_u8(b, 6);
		return;
	case V_LATIN1:
		w_u8(b, 5);
		w_var(b, 8);
		w_put(b, "caf\xe9/B\xe4r", 8);
		return;
	case V_UTF16:
		w_u8(b, 4);
		w_var(b, ARRAY_SIZE(chars));
		for (i = 0; i < ARRAY_SIZE(chars); i++)
			w_var(b, chars[i]);
		return;
	case V_STRREF:
		w_u8(b, 2);
		w_var(b, 9);
		return;
	case V_NULLSTR:
	case V_EMPTYSTR:
		w_u8(b, s->v == V_NULLSTR ? 0 : 1);
		return;
	case V_BAD_UTF8:
		w_u8(b, 3);
		w_var(b, 7);
		w_put(b, "\xff\xfe/Foo\xc3", 7);
		return;
	default:
		w_utf8(b, s->v == V_HIDDEN ? "com/example/Foo$$Lambda/0x1234" : "com/example/Foo");
	}
}

static void w_symbols(struct pools *p, const struct spec *s)
{
	static const char *const syms[] = { NULL, "alloc", "main", "[J", "()V" };
	struct wbuf *b = &p->b;
	char *big;
	size_t i;

	if (s->chunk == 2)
		return; /* V_CHUNKS: the third chunk has neither symbols nor classes */
	pool(p, T_SYMBOL, s->v == V_HUGE_POOL_COUNT ? 1ull << 40 : ARRAY_SIZE(syms) - (s->chunk == 1));
	for (i = s->chunk == 1; i < ARRAY_SIZE(syms); i++) { /* V_CHUNKS: no symbol 1 in the second */
		w_var(b, i + 1);
		if (s->v == V_REF_CYCLE)
			w_var(b, i + 1); /* Symbol.string: this very symbol */
		else if (!i)
			w_symbol1(b, s);
		else if (i == 3 && s->v == V_LONG_STR) {
			big = malloc(70000);
			assert_non_null(big);
			memset(big, 'a', 70000);
			w_u8(b, 3);
			w_var(b, 70000);
			w_put(b, big, 70000);
			free(big);
		} else
			w_utf8(b, i == 3 && s->chunk ? "[[Ljava/lang/String;" : syms[i]);
	}
	if (s->v == V_STRREF) {
		pool(p, T_STRING, 1);
		w_var(b, 9);
		w_utf8(b, "com/example/Ref");
	}
}

static void w_frames(struct wbuf *b, const struct spec *s, uint64_t n)
{
	uint64_t i;

	w_var(b, s->v == V_HUGE_FRAMES ? 1ull << 40 : n);
	for (i = 0; i < n; i++) {
		w_var(b, i % 2 + 1); /* method */
		if (s->v == V_BUDGET)
			continue;
		w_var(b, 10 + i); /* line */
		w_var(b, 3 + i);  /* bci */
		w_var(b, 1);	  /* type */
	}
}

static void w_stacks(struct pools *p, const struct spec *s)
{
	struct wbuf *b = &p->b;
	size_t i, n = s->v == V_BUDGET ? s->budget_stacks : 1;

	pool(p, T_STACK, n);
	for (i = 0; i < n; i++) {
		w_var(b, i + 1);
		w_u8(b, s->v == V_TRUNC_FLAG);
		w_frames(b, s, s->v == V_BUDGET ? 256 : s->v == V_DEEP_STACK ? 300 : 2);
	}
}

/* Classes, methods, frame types, threads. */
static void w_others(struct pools *p, const struct spec *s)
{
	struct wbuf *b = &p->b;
	size_t i;

	if (s->chunk != 2) {
		pool(p, T_CLASS, 2); /* key, name symbol, hidden */
		w_vars(b, 2, 1ull, 1ull);
		w_u8(b, s->v == V_HIDDEN);
		w_vars(b, 2, 2ull, 4ull);
		w_u8(b, 0);
	}
	pool(p, T_METHOD, 2); /* key, class, name, descriptor, hidden */
	w_vars(b, 4, 1ull, 1ull, 2ull, 5ull);
	w_u8(b, s->v == V_HIDDEN);
	w_vars(b, 4, 2ull, 1ull, 3ull, 5ull);
	w_u8(b, 0);
	pool(p, T_FRAMETYPE, 1);
	w_var(b, 1);
	w_utf8(b, "Interpreted");
	if (!s->chunk) { /* V_CHUNKS: the later chunks have no threads */
		pool(p, T_THREAD, 1);
		w_var(b, 1);
		w_utf8(b, "os-main");
		w_var(b, 77);
		w_utf8(b, "main");
		w_var(b, 1);
	}
	if (s->more_entries) {
		pool(p, T_X + 30, s->more_entries);
		for (i = 0; i < s->more_entries; i++) {
			w_u8(b, 1);
			w_be(b, 0, 8);
		}
	}
	if (s->v == V_POOL_TYPE_UNDECLARED) {
		pool(p, 999, 1);
		w_var(b, 1);
	}
}

/* A checkpoint holding @p; its delta (9 bytes) is at *@delta_at. Returns its offset. */
static size_t w_checkpoint(struct wbuf *b, const struct spec *s, struct pools *p,
			   size_t *delta_at)
{
	size_t at = rec_begin(b, 1);

	w_var(b, 0); /* start */
	w_var(b, 0); /* duration */
	*delta_at = b->len;
	w_var9(b, 0);
	w_var(b, 1); /* flush */
	w_var(b, s->v == V_HUGE_NPOOLS ? 1ull << 40 : p->n);
	w_put(b, p->b.p, p->b.len);
	if (s->v == V_CP_TRAILING)
		w_u8(b, 0);
	rec_end(b, at);
	free(p->b.p);
	return at;
}

/* --- events ---------------------------------------------------------------------------------- */

/* Writes @v as a 9-byte varint (V_PADDED) or a minimal one. */
static void w_num(struct wbuf *b, const struct spec *s, uint64_t v)
{
	if (s->v == V_PADDED)
		w_var9(b, v);
	else
		w_var(b, v);
}

/* One x.Pair (double, String), or an array of two. */
static void w_pairs(struct wbuf *b, bool array)
{
	int i;

	if (array)
		w_var(b, 2);
	for (i = 0; i < (array ? 2 : 1); i++) {
		w_be(b, 0x400921fb54442d18ull, 8);
		w_utf8(b, "y");
	}
}

/* The value of field @f of the allocation event (the fields are written in their declared order). */
static void w_alloc_field(struct wbuf *b, const struct spec *s, const struct tfield *f,
			  uint64_t stack)
{
	bool missing = s->v == V_MISSING_KEYS;

	if (!strcmp(f->name, "startTime"))
		w_num(b, s, START_TICKS + 1000);
	else if (!strcmp(f->name, "eventThread"))
		w_var(b, missing ? 99 : 1);
	else if (!strcmp(f->name, "stackTrace"))
		w_var(b, missing ? 98 : stack);
	else if (!strcmp(f->name, "objectClass"))
		w_var(b, missing ? 97 : s->v == V_ROLE_MISMATCH ? 1 : 2);
	else if (!strcmp(f->name, "weight") && f->type == T_STRING)
		w_utf8(b, "4096");
	else if (!strcmp(f->name, "weight"))
		w_num(b, s, 4096);
	else if (!strcmp(f->name, "pads"))
		w_var(b, 1000000); /* a million elements of nothing */
	else if (!strcmp(f->name, "f"))
		w_be(b, 0, 4);
	else if (!strcmp(f->name, "longs"))
		w_vars(b, 4, 3ull, 1ull, 2ull, 3ull);
	else if (!strcmp(f->name, "b"))
		w_u8(b, 0xff);
	else if (!strcmp(f->name, "pair") || !strcmp(f->name, "pairs"))
		w_pairs(b, !strcmp(f->name, "pairs"));
}

static void w_alloc(struct wbuf *b, const struct spec *s, uint64_t stack)
{
	const struct tclass *c = &s->classes[0];
	size_t at = b->len, i;

	while (c->id != T_ALLOC)
		c++;
	if (s->v == V_VARINT10) {
		w_put(b, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10);
		return;
	}
	if (s->v == V_EVENT_SIZE0) {
		w_u8(b, 0);
		return;
	}
	rec_begin(b, T_ALLOC);
	for (i = 0; i < nfields(c); i++)
		w_alloc_field(b, s, &c->f[i], stack);
	for (i = 0; i < s->extra_fields; i++)
		w_var(b, 0);
	rec_end(b, at);
	if (s->v == V_EVENT_PAST)
		patch_var_pad(b, at, b->len - at + 100, 5);
	if (s->v == V_EVENT_SHORT)
		patch_var_pad(b, at, 5 + 1 + 2, 5); /* size, type and startTime's first byte */
}

static void w_events(struct wbuf *b, const struct spec *s)
{
	size_t at, i;

	for (i = 0; i < (s->v == V_BUDGET ? s->budget_stacks : 1); i++)
		w_alloc(b, s, i + 1);
	at = rec_begin(b, T_UNKNOWN);
	w_var(b, START_TICKS + 1500);
	w_utf8(b, "hello");
	rec_end(b, at);
	at = rec_begin(b, T_MONITOR); /* start, duration, thread, stack, class, owner, address */
	w_vars(b, 7, START_TICKS + 2000ull, 5000000ull, 1ull, 1ull, 1ull, 0ull, 0xdeadull);
	rec_end(b, at);
}

/* --- files ----------------------------------------------------------------------------------- */

static void w_header(struct wbuf *b)
{
	static const uint64_t f[] = { 0, 0, 0, START_NS, 1000000, START_TICKS, TPS };
	size_t i;

	w_put(b, "FLR\0", 4);
	w_be(b, 2, 2); /* 2.1 */
	w_be(b, 1, 2);
	for (i = 0; i < ARRAY_SIZE(f); i++) /* size, offsets (patched), start, duration, clock */
		w_be(b, f[i], 8);
	w_be(b, 1, 4); /* finished, compressed integers */
}

/* The variants of the header, once the chunk at @c0 (of @size bytes) is written. */
static void patch_header(struct wbuf *b, const struct spec *s, size_t c0, size_t size,
			 size_t cp, size_t meta)
{
	uint64_t v_size = size, v_cp = cp, v_meta = meta;

	v_size = s->v == V_SIZE_PAST ? size + 1 : s->v == V_SIZE_SMALL ? 67 : v_size;
	v_cp = s->v == V_CP_OFF_PAST ? size : s->v == V_CP_OFF_NOT_CP ? meta : v_cp;
	v_meta = s->v == V_META_OFF_LOW ? 8 : s->v == V_META_OFF_NOT_META ? cp : v_meta;
	patch_be(b, c0 + 8, v_size, 8);
	patch_be(b, c0 + 16, v_cp, 8);
	patch_be(b, c0 + 24, v_meta, 8);
	if (s->v == V_BAD_MAGIC)
		b->p[c0] = 'X';
	if (s->v == V_MAJOR1 || s->v == V_MAJOR3)
		patch_be(b, c0 + 4, s->v == V_MAJOR1 ? 1 : 3, 2);
	if (s->v == V_FLAGS0)
		b->p[c0 + 67] = 0;
	if (s->v == V_UNFINISHED)
		b->p[c0 + 64] = 1;
	if (s->v == V_TPS0)
		patch_be(b, c0 + 56, 0, 8);
}

/* The chain of checkpoints: the pools (one checkpoint, or symbols first with V_TWO_CP), the
 * variants' deltas, s->extra_cps empty ones. Returns the offset (in the chunk) of the last. */
static size_t w_chain(struct wbuf *b, const struct spec *s, size_t c0)
{
	struct pools a = { 0 }, z = { 0 };
	size_t first, last, da, dz, i;

	w_symbols(s->v == V_TWO_CP || s->v == V_DELTA_LOOP ? &a : &z, s);
	w_stacks(&z, s);
	w_others(&z, s);
	first = w_checkpoint(b, s, &a, &da) - c0;
	for (i = 0; i < s->extra_cps; i++) {
		struct pools none = { 0 };

		last = w_checkpoint(b, s, &none, &dz) - c0;
		patch_var9(b, dz, (uint64_t)first - last);
		first = last;
	}
	w_events(b, s);
	last = w_checkpoint(b, s, &z, &dz) - c0;
	patch_var9(b, dz, (uint64_t)first - last);
	if (s->v == V_DELTA_LOOP)
		patch_var9(b, da, last - first);
	if (s->v == V_DELTA_FORWARD)
		patch_var9(b, dz, 10);
	if (s->v == V_DELTA_BEFORE_HEADER)
		patch_var9(b, dz, (uint64_t)0 - last);
	return last;
}

static void w_chunk(struct wbuf *b, struct spec *s)
{
	size_t c0 = b->len, cp;

	spec_classes(s);
	w_header(b);
	w_metadata(b, s);
	cp = w_chain(b, s, c0);
	patch_header(b, s, c0, b->len - c0, cp, JFR_HEADER_SIZE);
}

static void build(struct wbuf *b, struct spec *s)
{
	memset(b, 0, sizeof(*b));
	w_chunk(b, s);
	while (s->v == V_CHUNKS && s->chunk < 2) {
		s->chunk++;
		w_chunk(b, s);
	}
	if (s->v == V_TRAILING)
		w_put(b, "FLR\0\0\2", 6);
}

/* --- the rows -------------------------------------------------------------------------------- */

#define ANY "\x01" /* a string column not checked */

static const struct row {
	enum variant v;
	int ret;
	unsigned delivered;
	uint64_t weight;
	const char *cls, *thread, *f0_class; /* NULL: unknown */
	size_t nframes;
	bool truncated;
	const char *cls3; /* the third event's class (V_CHUNKS: the second chunk's allocation) */
} rows[] = {
	{ V_OK, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_BAD_MAGIC, -EBADMSG },
	{ V_MAJOR1, -EBADMSG },
	{ V_MAJOR3, -EBADMSG },
	{ V_FLAGS0, -EBADMSG },	    /* no compressed integers */
	{ V_UNFINISHED, -EBADMSG }, /* file state 1 */
	{ V_SIZE_PAST, -EBADMSG },  /* chunk size past the end of the file */
	{ V_SIZE_SMALL, -EBADMSG },
	{ V_CP_OFF_PAST, -EBADMSG },
	{ V_META_OFF_LOW, -EBADMSG },
	{ V_CP_OFF_NOT_CP, -EBADMSG },
	{ V_META_OFF_NOT_META, -EBADMSG },
	{ V_TPS0, -EBADMSG },
	{ V_TRAILING, -EBADMSG },	  /* a second chunk cut in its header */
	{ V_VARINT10, -EBADMSG },	  /* a 10-byte event size: the ninth byte makes it huge */
	{ V_PADDED, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_STR_PAST_END, -EBADMSG },
	{ V_BAD_ENC, -EBADMSG },	  /* string encoding 6 */
	{ V_LATIN1, 0, 2, 4096, "long[]", "main", "caf\xc3\xa9.B\xc3\xa4r", 2, false, ANY },
	{ V_UTF16, 0, 2, 4096, "long[]", "main", "A.b\xf0\x9f\x98\x80?x?", 2, false, ANY },
	{ V_STRREF, 0, 2, 4096, "long[]", "main", "com.example.Ref", 2, false, ANY },
	{ V_NULLSTR, 0, 2, 4096, "long[]", "main", NULL, 2, false, ANY },
	{ V_EMPTYSTR, 0, 2, 4096, "long[]", "main", "", 2, false, ANY },
	{ V_BAD_UTF8, 0, 2, 4096, "long[]", "main", "??.Foo?", 2, false, ANY },
	{ V_LONG_STR, 0, 2, 4096, ANY, "main", "com.example.Foo", 2, false, ANY },
	{ V_HUGE_STRINGS, -E2BIG },
	{ V_HUGE_NPOOLS, -EBADMSG },
	{ V_HUGE_POOL_COUNT, -EBADMSG },
	{ V_HUGE_FRAMES, -EBADMSG },
	{ V_HUGE_ATTRS, -EBADMSG },
	{ V_HUGE_CHILDREN, -EBADMSG },
	{ V_SELF_INLINE, -EBADMSG },
	{ V_MUTUAL_INLINE, -EBADMSG },
	{ V_SELF_ARRAY, -EBADMSG },
	{ V_DEEP_INLINE, -E2BIG },
	{ V_ZERO_SIZE_STRUCTS, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_FIELD_TYPE_MISSING, -EBADMSG },
	{ V_DUP_CLASS, -EBADMSG },
	{ V_BAD_STRING_INDEX, -EBADMSG },
	{ V_ID_NOT_DECIMAL, -EBADMSG },
	{ V_BAD_DIMENSION, -EBADMSG },
	{ V_META_DEPTH, -E2BIG },
	{ V_POOL_TYPE_UNDECLARED, -EBADMSG },
	{ V_CP_TRAILING, -EBADMSG },
	{ V_DELTA_FORWARD, -EBADMSG },
	{ V_DELTA_LOOP, -EBADMSG },
	{ V_DELTA_BEFORE_HEADER, -EBADMSG },
	{ V_TWO_CP, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_EVENT_SIZE0, -EBADMSG },
	{ V_EVENT_PAST, -EBADMSG },
	{ V_EVENT_SHORT, -EBADMSG },
	{ V_MISSING_KEYS, 0, 2, 4096, NULL, NULL, ANY, 0, false, ANY },
	{ V_REF_CYCLE, 0, 2, 4096, NULL, "main", NULL, 2, false, ANY },
	{ V_ROLE_MISMATCH, 0, 2, 4096, NULL, "main", "com.example.Foo", 2, false, ANY },
	{ V_FIELD_ORDER, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_NO_WEIGHT, 0, 2, 0, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_WEIGHT_STRING, 0, 2, 0, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_EXTRA_FIELDS, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, false, ANY },
	{ V_DEEP_STACK, 0, 2, 4096, "long[]", "main", "com.example.Foo", JFR_MAX_FRAMES, true, ANY },
	{ V_TRUNC_FLAG, 0, 2, 4096, "long[]", "main", "com.example.Foo", 2, true, ANY },
	{ V_HIDDEN, 0, 2, 4096, "long[]", "main", "com.example.Foo$$Lambda/0x1234", 2, false, ANY },
	{ V_CHUNKS, 0, 6, 4096, "long[]", "main", "com.example.Foo", 2, false, "java.lang.String[][]" },
};

static void check_str(const char *got, bool has, const char *want)
{
	if (want && !strcmp(want, ANY))
		return;
	assert_int_equal(has, want != NULL);
	if (want)
		assert_string_equal(got, want);
}

static void check_row(const struct row *r, const struct got *g, const struct jfr_stats *st)
{
	const struct kept *k = &g->kept[0];

	assert_int_equal(st->delivered, r->delivered);
	assert_int_equal(st->skipped_unknown, r->v == V_CHUNKS ? 3 : 1);
	assert_int_equal(st->chunks, r->v == V_CHUNKS ? 3 : 1);
	assert_int_equal(k->kind, JFR_ALLOC_SAMPLE);
	assert_int_equal(k->start_ns, START_NS + 1000);
	assert_int_equal(k->weight, r->weight);
	check_str(k->cls, k->has_cls, r->cls);
	check_str(k->thread, k->has_thread, r->thread);
	assert_int_equal(k->tid, r->thread ? 77 : 0);
	assert_int_equal(k->nframes, r->nframes);
	assert_int_equal(k->truncated, r->truncated);
	assert_int_equal(st->bad_stacks, r->v == V_MISSING_KEYS);
	if (r->nframes) {
		check_str(k->f0_class, k->f0_has_class, r->f0_class);
		assert_string_equal(k->f0_method, r->v == V_REF_CYCLE ? "" : "alloc");
		assert_string_equal(k->f0_type, "Interpreted");
		assert_int_equal(k->f0_line, 10);
		assert_int_equal(k->f0_bci, 3);
		assert_int_equal(k->f0_hidden, r->v == V_HIDDEN);
	}
	assert_int_equal(g->kept[1].kind, JFR_MONITOR_ENTER);
	assert_int_equal(g->kept[1].duration_ns, 5000000);
	/* the monitor's class is the frames' class 1: its keys are never the missing ones */
	check_str(g->kept[1].cls, g->kept[1].has_cls,
		  r->v == V_MISSING_KEYS ? "com.example.Foo" : r->f0_class);
	check_str(g->kept[2].cls, g->kept[2].has_cls, r->cls3);
}

/*
 * Three chunks. The second has no threads and no symbol 1 (the name of class 1, the frames'),
 * and its own symbol 4 (class 2's name) is "[[Ljava/lang/String;"; the third has no threads,
 * symbols or classes. A chunk's own pools win (the second chunk's class 2); a key it lacks
 * comes from the chunk just before (the second chunk's thread and symbol 1, the third's class
 * 2), never from further back (the third's thread, and the name of its class 1, which the
 * second chunk had resolved through the first: resolved again, it is unknown, and no pointer
 * into the freed first chunk is left).
 */
static void check_chunks(const struct got *g)
{
	assert_int_equal(g->nkept, KEEP);
	assert_string_equal(g->kept[2].cls, "java.lang.String[][]");
	assert_string_equal(g->kept[2].thread, "main");
	assert_string_equal(g->kept[2].f0_class, "com.example.Foo");
	assert_string_equal(g->kept[3].cls, "com.example.Foo");
	assert_string_equal(g->kept[4].cls, "java.lang.String[][]");
	assert_false(g->kept[4].has_thread);
	assert_int_equal(g->kept[4].nframes, 2);
	assert_false(g->kept[4].f0_has_class);
	assert_string_equal(g->kept[4].f0_method, "alloc");
	assert_false(g->kept[5].has_cls);
}

static void test_rows(void **state)
{
	struct jfr_stats st;
	struct wbuf b;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct spec s = { .v = rows[i].v };
		struct got g = { 0 };
		uint8_t *exact;

		print_message("row %zu (variant %d)\n", i, rows[i].v);
		build(&b, &s);
		exact = malloc(b.len); /* exactly the file, for ASan */
		assert_non_null(exact);
		memcpy(exact, b.p, b.len);
		assert_int_equal(jfr_parse(exact, b.len, collect, &g, &st), rows[i].ret);
		if (!rows[i].ret)
			check_row(&rows[i], &g, &st);
		if (rows[i].v == V_LONG_STR)
			assert_int_equal(g.kept[0].cls_len, JFR_MAX_STRING);
		if (rows[i].v == V_CHUNKS)
			check_chunks(&g);
		free(exact);
		free(b.p);
	}
}

/* --- the limits ------------------------------------------------------------------------------ */

/* Builds the file of @s and parses it. */
static int parse_spec(struct spec *s, struct jfr_stats *st)
{
	struct wbuf b;
	int err;

	build(&b, s);
	err = jfr_parse(b.p, b.len, NULL, NULL, st);
	free(b.p);
	return err;
}

/* The base file's metadata has 60 strings and 17 classes; what the limits add goes on top. */
static void test_limits(void **state)
{
	struct jfr_stats st;
	struct spec s;
	size_t base;

	(void)state;
	s = (struct spec){ .v = V_LIMITS };
	assert_int_equal(parse_spec(&s, &st), 0);
	assert_int_equal(st.delivered, 2);

	base = 0;
	{ /* the metadata's string table: count the base file's strings first */
		struct strtab t = { .n = 0 };
		struct wbuf tree = { 0 };

		s = (struct spec){ .v = V_LIMITS };
		spec_classes(&s);
		w_tree(&tree, &t, &s);
		free(tree.p);
		base = t.n;
		strtab_free(&t);
	}
	s = (struct spec){ .v = V_LIMITS, .pad_strings = JFR_MAX_META_STRINGS - base };
	assert_int_equal(parse_spec(&s, &st), 0);
	s.pad_strings++;
	assert_int_equal(parse_spec(&s, &st), -E2BIG);

	s = (struct spec){ .v = V_LIMITS, .extra_classes = JFR_MAX_CLASSES - ARRAY_SIZE(base_classes) };
	assert_int_equal(parse_spec(&s, &st), -EBADMSG); /* the limit is not reached: duplicate ids */
	s.extra_classes++;
	assert_int_equal(parse_spec(&s, &st), -E2BIG);

	s = (struct spec){ .v = V_LIMITS, .extra_fields = JFR_MAX_FIELDS - 5 };
	assert_int_equal(parse_spec(&s, &st), 0);
	assert_int_equal(st.delivered, 2);
	s.extra_fields++;
	assert_int_equal(parse_spec(&s, &st), -E2BIG);

	s = (struct spec){ .v = V_LIMITS, .extra_cps = JFR_MAX_CHECKPOINTS - 2 };
	assert_int_equal(parse_spec(&s, &st), 0);
	s.extra_cps++;
	assert_int_equal(parse_spec(&s, &st), -E2BIG);
}

/*
 * More pool entries than JFR_MAX_POOL_ENTRIES, of 9 bytes each (a 38 MB file: an index entry
 * costs 32 bytes, so entries of a byte or two spend the JFR_MEM_FACTOR budget first, -ENOMEM).
 */
static void test_limit_pool_entries(void **state)
{
	struct jfr_stats st;
	struct spec s = { .v = V_LIMITS, .more_entries = JFR_MAX_POOL_ENTRIES - 12 };

	(void)state;
	assert_int_equal(parse_spec(&s, &st), 0); /* the base file has 12 entries */
	assert_int_equal(st.pool_entries, JFR_MAX_POOL_ENTRIES);
	s.more_entries++;
	assert_int_equal(parse_spec(&s, &st), -E2BIG);
	s = (struct spec){ .v = V_LIMITS, .more_entries = 1 };
	assert_int_equal(parse_spec(&s, &st), 0);
	assert_int_equal(st.pool_entries, 13);
}

/*
 * Frames of one byte cost 40 bytes each once resolved: a file of many such stacks, each used by
 * an event, spends the chunk's budget (JFR_MEM_FACTOR times its size) and fails cleanly. With
 * fewer stacks it parses.
 */
static void test_limit_budget(void **state)
{
	struct jfr_stats st;
	struct spec s = { .v = V_BUDGET, .budget_stacks = 100 };

	(void)state;
	assert_int_equal(parse_spec(&s, &st), 0);
	assert_int_equal(st.delivered, 101);
	s = (struct spec){ .v = V_BUDGET, .budget_stacks = 3000 };
	assert_int_equal(parse_spec(&s, &st), -ENOMEM);
}

static void test_size_limits(void **state)
{
	static const uint8_t one[1] = { 'F' };
	uint8_t *big;

	(void)state;
	assert_int_equal(jfr_parse(one, (size_t)JFR_MAX_BYTES + 1, NULL, NULL, NULL), -EFBIG);
	assert_int_equal(jfr_parse(one, 0, NULL, NULL, NULL), -EBADMSG);
	assert_int_equal(jfr_parse(one, 1, NULL, NULL, NULL), -EBADMSG);
	big = calloc(1, JFR_MAX_BYTES);
	assert_non_null(big);
	assert_int_equal(jfr_parse(big, JFR_MAX_BYTES, NULL, NULL, NULL), -EBADMSG);
	free(big);
}

/* --- the small parts ------------------------------------------------------------------------- */

static void test_varint(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		int ret;
		uint64_t v;
		size_t used;
	} cases[] = {
		{ "\x00", 1, 0, 0, 1 },
		{ "\x7f", 1, 0, 127, 1 },
		{ "\x80\x01", 2, 0, 128, 2 },
		{ "\x85\x80\x80\x80\x00", 5, 0, 5, 5 },	   /* padded */
		{ "\x80\x80\x80\x05", 4, 0, 5ull << 21, 4 }, /* HotSpot's reserved size slot */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff", 9, 0, UINT64_MAX, 9 }, /* -1: the ninth byte whole */
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, 0, 0x80ull << 56, 9 }, /* never 10 */
		{ "\x80", 1, -EBADMSG, 0, 0 },
		{ "", 0, -EBADMSG, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const uint8_t *p = (const uint8_t *)cases[i].bytes;
		struct jfr_cur c = { p, p + cases[i].len };
		uint64_t v = 0;

		print_message("case %zu\n", i);
		assert_int_equal(jfr_varint(&c, &v), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(v, cases[i].v);
			assert_int_equal(c.p - p, cases[i].used);
		}
	}
}

static void test_dotted_name(void **state)
{
	static const struct {
		const char *raw;
		bool hidden;
		size_t size;
		const char *want;
	} cases[] = {
		{ "java/lang/String", false, 64, "java.lang.String" },
		{ "java.lang.String", false, 64, "java.lang.String" },
		{ "[J", false, 64, "long[]" },
		{ "[Z", false, 64, "boolean[]" },
		{ "[[[B", false, 64, "byte[][][]" },
		{ "[[Ljava/lang/String;", false, 64, "java.lang.String[][]" },
		{ "[X", false, 64, "[X" },	  /* not a descriptor: as it is */
		{ "[L;", false, 64, "[L;" },
		{ "[Ljava/lang/String", false, 64, "[Ljava.lang.String" },
		{ "[", false, 64, "[" },
		{ "", false, 64, "" },
		{ "a/b/Foo$$Lambda/0x12", true, 64, "a.b.Foo$$Lambda/0x12" },
		{ "a/b/Foo$$Lambda/0x12", false, 64, "a.b.Foo$$Lambda.0x12" },
		{ "java/lang/String", false, 6, "java." },
		{ "\xc3\xa9/x", false, 2, "" }, /* cut inside "é": nothing of it */
		{ "[J", false, 4, "lon" },
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		n = jfr_dotted_name(buf, cases[i].size, cases[i].raw, cases[i].hidden);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

/*
 * With JFR_SEED_DIR set, writes a few synthetic files there as fuzzer seeds (small, so that
 * mutations reach pools and events rather than the JDK's 100 KB of metadata):
 *   JFR_SEED_DIR=tests/fuzz/corpus/fuzz_jfr .output/tests/test_jfr
 */
static int write_seeds(const char *dir)
{
	static const struct {
		enum variant v;
		const char *name;
	} seeds[] = {
		{ V_OK, "synthetic.jfr" },
		{ V_CHUNKS, "synthetic-chunks.jfr" },
		{ V_EXTRA_FIELDS, "synthetic-fields.jfr" },
		{ V_STRREF, "synthetic-strref.jfr" },
		{ V_UTF16, "synthetic-utf16.jfr" },
		{ V_TWO_CP, "synthetic-two-checkpoints.jfr" },
	};
	char path[512];
	struct wbuf b;
	size_t i, n;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(seeds); i++) {
		struct spec s = { .v = seeds[i].v };

		build(&b, &s);
		snprintf(path, sizeof(path), "%s/%s", dir, seeds[i].name);
		f = fopen(path, "wb");
		n = f ? fwrite(b.p, 1, b.len, f) : 0;
		if (!f || fclose(f) || n != b.len) {
			perror(path);
			return EXIT_FAILURE;
		}
		free(b.p);
	}
	return EXIT_SUCCESS;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_fixture_stop),
		cmocka_unit_test(test_fixture_truncated),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_limit_pool_entries),
		cmocka_unit_test(test_limit_budget),
		cmocka_unit_test(test_size_limits),
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_dotted_name),
	};

	if (getenv("JFR_SEED_DIR"))
		return write_seeds(getenv("JFR_SEED_DIR"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
