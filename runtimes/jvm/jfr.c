// SPDX-License-Identifier: Apache-2.0
/*
 * The JFR parser's top (jfr.h): the chunks of a file one after the other, each one's header
 * checked (docs/design/jfr-format.md §1.2 and §8), its metadata and constant pools read, then
 * its events in file order, those of the kinds of jfr.h decoded from the fields their type
 * declares and handed to the callback.
 */
#include <errno.h>
#include <string.h>

#include "runtimes/jvm/jfr.h"
#include "runtimes/jvm/jfr_int.h"

/* The field that holds each kind's weight, and its object's class. */
static const uint8_t weight_fn[JFR_KIND_COUNT] = {
	[JFR_ALLOC_SAMPLE] = FN_WEIGHT,	     [JFR_ALLOC_IN_TLAB] = FN_TLAB_SIZE,
	[JFR_ALLOC_OUTSIDE] = FN_ALLOC_SIZE, [JFR_OLD_OBJECT] = FN_OBJECT_SIZE,
	[JFR_LIVE_OBJECT] = FN_ALLOC_SIZE,   [JFR_MONITOR_ENTER] = FN_NONE,
	[JFR_THREAD_PARK] = FN_NONE,
};

static const uint8_t class_fn[JFR_KIND_COUNT] = {
	[JFR_ALLOC_SAMPLE] = FN_OBJECT_CLASS,  [JFR_ALLOC_IN_TLAB] = FN_OBJECT_CLASS,
	[JFR_ALLOC_OUTSIDE] = FN_OBJECT_CLASS, [JFR_OLD_OBJECT] = FN_NONE,
	[JFR_LIVE_OBJECT] = FN_OBJECT_CLASS,   [JFR_MONITOR_ENTER] = FN_MONITOR_CLASS,
	[JFR_THREAD_PARK] = FN_PARKED_CLASS,
};

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* Checks the header of the chunk at @buf (@avail bytes left in the file). 0, -EBADMSG. */
static int read_header(struct jfr_chunk *x, const uint8_t *buf, size_t avail)
{
	uint64_t size;

	if (avail < JFR_HEADER_SIZE || memcmp(buf, "FLR", 4) || be(buf + 4, 2) != 2)
		return -EBADMSG;
	size = be(buf + 8, 8);
	x->cp_offset = be(buf + 16, 8);
	x->meta_offset = be(buf + 24, 8);
	x->start_ns = (int64_t)be(buf + 32, 8);
	x->start_ticks = (int64_t)be(buf + 48, 8);
	x->ticks_per_sec = be(buf + 56, 8);
	if (size < JFR_HEADER_SIZE || size > avail)
		return -EBADMSG;
	if (x->cp_offset < JFR_HEADER_SIZE || x->cp_offset >= size ||
	    x->meta_offset < JFR_HEADER_SIZE || x->meta_offset >= size)
		return -EBADMSG;
	/* finished (state 0), compressed integers (flag bit 0), a clock */
	if (buf[64] != 0 || !(be(buf + 66, 2) & 1) || !x->ticks_per_sec)
		return -EBADMSG;
	x->base = buf;
	x->size = size;
	return 0;
}

/* Ticks (@abs: a timestamp, else a span) as ns, saturated to 64 bits. */
static int64_t ticks_ns(const struct jfr_chunk *x, uint64_t ticks, bool abs)
{
	__int128 d = (int64_t)ticks;

	if (abs)
		d -= x->start_ticks;
	d = d * 1000000000 / (__int128)x->ticks_per_sec;
	if (abs)
		d += x->start_ns;
	if (d > INT64_MAX)
		return INT64_MAX;
	if (d < INT64_MIN)
		return INT64_MIN;
	return (int64_t)d;
}

/* The numbers of event @ev, from the fields picked in @pk. */
static void event_numbers(const struct jfr_chunk *x, const struct jfr_pick *pk,
			  struct jfr_event *ev)
{
	uint64_t v;

	if (jfr_pick_int(pk, FN_START, &v))
		ev->start_ns = ticks_ns(x, v, true);
	if (jfr_pick_int(pk, FN_DURATION, &v))
		ev->duration_ns = ticks_ns(x, v, false);
	if ((ev->kind == JFR_OLD_OBJECT || ev->kind == JFR_LIVE_OBJECT) &&
	    jfr_pick_int(pk, FN_ALLOC_TIME, &v))
		ev->alloc_ns = ticks_ns(x, v, true);
	if (weight_fn[ev->kind] && jfr_pick_int(pk, weight_fn[ev->kind], &v))
		ev->weight = v;
	ev->array_elements = -1;
	/* an int: -1 (JDK 17) or INT_MIN (JDK 25) for an object that is not an array */
	if (ev->kind == JFR_OLD_OBJECT && jfr_pick_int(pk, FN_ARRAY_ELEMENTS, &v) &&
	    (int64_t)v >= 0)
		ev->array_elements = (int64_t)v;
}

/* Resolves the pool key picked as @fn, expecting @role (unknown when it is not a key). */
static int event_ref(struct jfr_chunk *x, const struct jfr_pick *pk, unsigned fn, unsigned role,
		     union jfr_memo *m, bool *missing)
{
	uint32_t cls;
	uint64_t key;
	int err;

	m->any = NULL;
	if (!fn || !jfr_pick_key(pk, fn, &cls, &key))
		return 0;
	err = jfr_resolve(x, cls, key, role, 0, m);
	if (missing)
		*missing = !err && key && !m->any;
	return err;
}

/* The thread, stack and class of event @ev, from the pool keys picked in @pk. */
static int event_refs(struct jfr_chunk *x, const struct jfr_pick *pk, struct jfr_event *ev)
{
	union jfr_memo th, st, cl;
	bool bad = false;
	int err;

	err = event_ref(x, pk, FN_THREAD, JR_THREAD, &th, NULL);
	if (!err)
		err = event_ref(x, pk, FN_STACK, JR_STACK, &st, &bad);
	if (!err && ev->kind == JFR_OLD_OBJECT)
		err = event_ref(x, pk, FN_OBJECT, JR_OLDOBJECT, &cl, NULL);
	else if (!err)
		err = event_ref(x, pk, class_fn[ev->kind], JR_CLASS, &cl, NULL);
	if (err)
		return err;
	if (th.thread) {
		ev->thread_os_id = th.thread->os_id;
		ev->thread_name = th.thread->name;
	}
	if (st.stack) {
		ev->frames = st.stack->frames;
		ev->nframes = st.stack->n;
		ev->truncated = st.stack->truncated;
	}
	x->st->bad_stacks += bad;
	ev->object_class = cl.name;
	return 0;
}

static int deliver(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *rec,
		   jfr_event_fn_t fn, void *ctx)
{
	struct jfr_event ev = { .kind = (enum jfr_kind)cls->kind };
	struct jfr_pick pk;
	int err;

	err = jfr_pick(x, cls, rec, &pk);
	if (err)
		return err;
	event_numbers(x, &pk, &ev);
	err = event_refs(x, &pk, &ev);
	if (err)
		return err;
	x->st->delivered++;
	return fn ? fn(ctx, &ev) : 0;
}

static int read_events(struct jfr_chunk *x, jfr_event_fn_t fn, void *ctx)
{
	struct jfr_cur c = { x->base + JFR_HEADER_SIZE, x->base + x->size }, rec;
	const struct jfr_class *cls;
	uint64_t type;
	int err;

	while (c.p < c.end) {
		err = jfr_record(&c, &rec, &type);
		if (err)
			return err;
		if (type == 0 || type == 1) /* metadata, checkpoint: read already */
			continue;
		x->st->events++;
		cls = jfr_class_by_id(x, type);
		if (!cls || cls->kind < 0) {
			x->st->skipped_unknown++;
			continue;
		}
		err = deliver(x, cls, &rec, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* Parses the chunk at @buf (@avail bytes left in the file) into @x, which the caller releases. */
static int parse_chunk(struct jfr_chunk *x, const uint8_t *buf, size_t avail, jfr_event_fn_t fn,
		       void *ctx)
{
	int err;

	err = read_header(x, buf, avail);
	if (err)
		return err;
	x->st->chunks++;
	x->budget = JFR_MEM_FACTOR * x->size + JFR_MEM_SLACK;
	err = jfr_meta_load(x);
	if (!err)
		err = jfr_pool_load(x);
	if (!err)
		err = read_events(x, fn, ctx);
	return err;
}

int jfr_parse(const uint8_t *buf, size_t len, jfr_event_fn_t fn, void *ctx, struct jfr_stats *stats)
{
	struct jfr_stats local;
	struct jfr_stats *st = stats ? stats : &local;
	struct jfr_chunk chunks[2], *cur, *prev = NULL;
	size_t pos = 0;
	int err = 0;

	memset(st, 0, sizeof(*st));
	if (len > JFR_MAX_BYTES)
		return -EFBIG;
	if (!buf || !len)
		return -EBADMSG;
	/* two chunks alive at most: the one parsed, and the one before for the keys it lacks */
	while (pos < len && !err) {
		cur = prev == &chunks[0] ? &chunks[1] : &chunks[0];
		memset(cur, 0, sizeof(*cur));
		cur->st = st;
		cur->prev = prev;
		err = parse_chunk(cur, buf + pos, len - pos, fn, ctx);
		if (prev) {
			jfr_pool_forget(cur); /* its memos may point into prev, freed now */
			jfr_chunk_release(prev);
		}
		cur->prev = NULL;
		prev = cur;
		pos += cur->size;
	}
	if (prev)
		jfr_chunk_release(prev);
	return err;
}
