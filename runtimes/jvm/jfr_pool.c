// SPDX-License-Identifier: Apache-2.0
/*
 * JFR checkpoints (docs/design/jfr-format.md §3): the delta chain from the header's offset is
 * walked strictly backwards, every pool entry is indexed by (class, key) with where its value
 * lies, and entries are resolved only when an event needs them, once each (the memo), so the
 * work and memory of resolution stay proportional to the bytes of the entries resolved. A key
 * that is missing, of a class of another role, or part of a cycle resolves to "unknown".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jvm/jfr_int.h"

enum entry_state {
	ENT_NEW,
	ENT_BUSY,
	ENT_DONE,
};

static size_t left(const struct jfr_cur *c)
{
	return (size_t)(c->end - c->p);
}

static int add_entry(struct jfr_chunk *x, uint32_t cls, struct jfr_cur *c)
{
	struct jfr_entry *e;
	const uint8_t *at;
	uint64_t key;
	int err;

	err = jfr_varint(c, &key);
	if (err)
		return err;
	at = c->p;
	err = jfr_skip_value(x, &x->classes[cls], c, 0);
	if (err)
		return err;
	if (x->nents >= JFR_MAX_POOL_ENTRIES)
		return -E2BIG;
	err = jfr_grow(x, (void **)&x->ents, &x->ents_cap, sizeof(*x->ents), x->nents + 1);
	if (err)
		return err;
	e = &x->ents[x->nents++];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->cls = cls;
	e->off = (uint32_t)(at - x->base);
	e->len = (uint32_t)(c->p - at);
	x->st->pool_entries++;
	return 0;
}

static int read_pool(struct jfr_chunk *x, struct jfr_cur *c)
{
	const struct jfr_class *cls;
	uint64_t id, n;
	int err;

	err = jfr_varint(c, &id);
	if (!err)
		err = jfr_varint(c, &n);
	if (err)
		return err;
	cls = jfr_class_by_id(x, id);
	if (!cls || n > left(c)) /* a pool of an undeclared type; an entry takes a byte or more */
		return -EBADMSG;
	while (n-- && !err)
		err = add_entry(x, (uint32_t)(cls - x->classes), c);
	return err;
}

/*
 * Indexes the checkpoint at @pos (from the chunk start), which must end by @limit (the start of
 * the checkpoint after it: checkpoints never overlap, so indexing them all reads each byte once);
 * *@delta is its step to the one before.
 */
static int read_checkpoint(struct jfr_chunk *x, uint64_t pos, uint64_t limit, int64_t *delta)
{
	struct jfr_cur c = { x->base + pos, x->base + limit }, rec;
	uint64_t type, v = 0, n;
	int err;

	err = jfr_record(&c, &rec, &type);
	if (err)
		return err;
	if (type != 1)
		return -EBADMSG;
	err = jfr_varint(&rec, &v); /* start */
	if (!err)
		err = jfr_varint(&rec, &v); /* duration */
	if (!err)
		err = jfr_varint(&rec, &v); /* delta */
	*delta = (int64_t)v;
	if (!err)
		err = jfr_varint(&rec, &v); /* checkpoint type */
	if (!err)
		err = jfr_varint(&rec, &n);
	if (err)
		return err;
	if (n > left(&rec) / 2) /* a pool is at least its type and count */
		return -EBADMSG;
	while (n-- && !err)
		err = read_pool(x, &rec);
	if (!err && rec.p != rec.end)
		return -EBADMSG; /* the pools must fill the event */
	return err;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct jfr_entry *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

int jfr_pool_load(struct jfr_chunk *x)
{
	uint64_t pos = x->cp_offset, limit = x->size, back;
	unsigned hops = 0;
	int64_t delta;
	int err;

	for (;;) {
		if (++hops > JFR_MAX_CHECKPOINTS)
			return -E2BIG;
		err = read_checkpoint(x, pos, limit, &delta);
		if (err)
			return err;
		if (!delta)
			break;
		if (delta > 0)
			return -EBADMSG; /* the chain only goes back */
		back = (uint64_t)0 - (uint64_t)delta;
		if (back > pos - JFR_HEADER_SIZE)
			return -EBADMSG;
		limit = pos;
		pos -= back;
	}
	if (x->nents)
		qsort(x->ents, x->nents, sizeof(*x->ents), cmp_entry);
	return 0;
}

void jfr_pool_forget(struct jfr_chunk *x)
{
	size_t i;

	for (i = 0; i < x->nents; i++) {
		x->ents[i].state = ENT_NEW;
		x->ents[i].memo.any = NULL;
	}
}

struct jfr_entry *jfr_pool_find(struct jfr_chunk *x, uint32_t cls, uint64_t key)
{
	size_t lo = 0, hi = x->nents, mid;
	struct jfr_entry *e;

	while (lo < hi) { /* the first entry not below (cls, key) */
		mid = lo + (hi - lo) / 2;
		e = &x->ents[mid];
		if (e->cls < cls || (e->cls == cls && e->key < key))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->nents && x->ents[lo].cls == cls && x->ents[lo].key == key)
		return &x->ents[lo];
	return NULL;
}

/* --- resolution ------------------------------------------------------------------------------ */

int jfr_field_text(struct jfr_chunk *x, const struct jfr_field *f, const uint8_t *at,
		   const uint8_t *end, unsigned depth, struct jfr_text **out)
{
	struct jfr_cur c = { at, end };
	union jfr_memo m;
	uint8_t role;
	uint64_t key;
	int err;

	*out = NULL;
	if (f->array)
		return 0;
	if (!f->cp) {
		if (x->classes[f->cls].prim != JP_STRING)
			return 0;
		return jfr_read_string(x, &c, depth, false, out);
	}
	err = jfr_varint(&c, &key);
	if (err)
		return err;
	role = x->classes[f->cls].role;
	if (role != JR_STRING && role != JR_SYMBOL && role != JR_FRAMETYPE)
		return 0;
	err = jfr_resolve(x, f->cls, key, role, depth + 1, &m);
	*out = err ? NULL : m.text;
	return err;
}

/* The text of the field @fn picked from a value ending at @end. */
static int pick_text(struct jfr_chunk *x, const struct jfr_pick *pk, unsigned fn,
		     const uint8_t *end, unsigned depth, struct jfr_text **out)
{
	*out = NULL;
	if (!(pk->seen & (1u << fn)))
		return 0;
	return jfr_field_text(x, pk->f[fn], pk->at[fn], end, depth, out);
}

/* Resolves the pool key picked as @fn, expecting @role. */
static int pick_ref(struct jfr_chunk *x, const struct jfr_pick *pk, unsigned fn, unsigned role,
		    unsigned depth, union jfr_memo *out)
{
	uint32_t cls;
	uint64_t key;

	out->any = NULL;
	if (!jfr_pick_key(pk, fn, &cls, &key))
		return 0;
	return jfr_resolve(x, cls, key, role, depth + 1, out);
}

static int resolve_text(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			unsigned depth, union jfr_memo *m)
{
	struct jfr_pick pk;
	int err;

	if (cls->role == JR_STRING)
		return jfr_read_string(x, c, depth, false, &m->text);
	err = jfr_pick(x, cls, c, &pk);
	if (err)
		return err;
	return pick_text(x, &pk, cls->role == JR_SYMBOL ? FN_STRING : FN_DESCRIPTION, c->end, depth,
			 &m->text);
}

static int resolve_class(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			 unsigned depth, union jfr_memo *m)
{
	struct jfr_text *t = NULL;
	struct jfr_pick pk;
	uint64_t hidden = 0;
	int err;

	err = jfr_pick(x, cls, c, &pk);
	if (!err)
		err = pick_text(x, &pk, FN_NAME, c->end, depth, &t);
	if (err)
		return err;
	jfr_pick_int(&pk, FN_HIDDEN, &hidden);
	m->name = jfr_dotted(x, t, hidden, &err);
	return err;
}

static int resolve_method(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			  unsigned depth, union jfr_memo *m)
{
	union jfr_memo type = { NULL };
	struct jfr_text *t = NULL;
	struct jfr_method *me;
	struct jfr_pick pk;
	uint64_t hidden = 0;
	int err;

	err = jfr_pick(x, cls, c, &pk);
	if (!err)
		err = pick_ref(x, &pk, FN_TYPE, JR_CLASS, depth, &type);
	if (!err)
		err = pick_text(x, &pk, FN_NAME, c->end, depth, &t);
	if (err)
		return err;
	me = jfr_alloc(x, sizeof(*me));
	if (!me)
		return -ENOMEM;
	jfr_pick_int(&pk, FN_HIDDEN, &hidden);
	me->class_name = type.name;
	me->name = t ? t->raw : NULL;
	me->hidden = hidden;
	m->method = me;
	return 0;
}

/* Reads the frame of struct class @cls at @c into @fr. */
static int read_frame(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
		      unsigned depth, struct jfr_frame *fr)
{
	union jfr_memo me = { NULL };
	struct jfr_text *t = NULL;
	struct jfr_pick pk;
	uint64_t v;
	int err;

	memset(fr, 0, sizeof(*fr));
	fr->bci = -1;
	err = jfr_pick(x, cls, c, &pk);
	if (!err)
		err = pick_ref(x, &pk, FN_METHOD, JR_METHOD, depth, &me);
	if (!err)
		err = pick_text(x, &pk, FN_TYPE, c->end, depth, &t);
	if (err)
		return err;
	if (me.method) {
		fr->class_name = me.method->class_name;
		fr->method = me.method->name;
		fr->hidden = me.method->hidden;
	}
	if (jfr_pick_int(&pk, FN_LINE, &v))
		fr->line = (int32_t)v;
	if (jfr_pick_int(&pk, FN_BCI, &v))
		fr->bci = (int32_t)v;
	fr->type = t ? t->raw : NULL;
	return 0;
}

static int resolve_frame(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			 unsigned depth, union jfr_memo *m)
{
	struct jfr_frame *fr = jfr_alloc(x, sizeof(*fr));
	int err;

	if (!fr)
		return -ENOMEM;
	err = read_frame(x, cls, c, depth, fr);
	if (!err)
		m->frame = fr;
	return err;
}

/* Reads element @i of the frames array @f (inline frames, or keys of a frame pool). */
static int stack_frame(struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		       unsigned depth, struct jfr_frame *fr)
{
	const struct jfr_class *fcls = &x->classes[f->cls];
	union jfr_memo m;
	uint64_t key;
	int err;

	if (!f->cp)
		return read_frame(x, fcls, c, depth, fr);
	err = jfr_varint(c, &key);
	if (!err)
		err = jfr_resolve(x, f->cls, key, JR_FRAME, depth + 1, &m);
	if (err)
		return err;
	memset(fr, 0, sizeof(*fr));
	fr->bci = -1;
	if (m.frame)
		*fr = *m.frame;
	return 0;
}

/*
 * Reads the frames array @f at @c into a new stack: JFR_MAX_FRAMES kept, leaf first. Inline
 * frames of a type that takes no bytes say nothing: none are kept.
 */
static int read_frames(struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		       unsigned depth, struct jfr_stack **out)
{
	uint32_t min = f->cp ? 1 : x->classes[f->cls].min_bytes;
	struct jfr_stack *s;
	uint64_t n, keep, i;
	int err;

	*out = NULL;
	if (!f->cp && x->classes[f->cls].prim != JP_STRUCT)
		return 0; /* an array of numbers or strings: not frames */
	err = jfr_varint(c, &n);
	if (err)
		return err;
	if (min && n > left(c) / min)
		return -EBADMSG;
	keep = !min ? 0 : n > JFR_MAX_FRAMES ? JFR_MAX_FRAMES : n;
	s = jfr_alloc(x, sizeof(*s) + keep * sizeof(s->frames[0]));
	if (!s)
		return -ENOMEM;
	s->n = (uint32_t)keep;
	s->truncated = keep < n;
	for (i = 0; i < keep && !err; i++)
		err = stack_frame(x, f, c, depth, &s->frames[i]);
	*out = s;
	return err;
}

static int resolve_stack(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			 unsigned depth, union jfr_memo *m)
{
	struct jfr_stack *s = NULL;
	struct jfr_pick pk;
	struct jfr_cur fc;
	uint64_t v = 0;
	int err;

	err = jfr_pick(x, cls, c, &pk);
	if (err)
		return err;
	if ((pk.seen & (1u << FN_FRAMES)) && pk.f[FN_FRAMES]->array) {
		fc.p = pk.at[FN_FRAMES];
		fc.end = c->end;
		err = read_frames(x, pk.f[FN_FRAMES], &fc, depth, &s);
		if (err)
			return err;
	}
	if (!s) {
		s = jfr_alloc(x, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->n = 0;
		s->truncated = false;
	}
	if (jfr_pick_int(&pk, FN_TRUNCATED, &v) && v)
		s->truncated = true;
	m->stack = s;
	return 0;
}

static int resolve_thread(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			  unsigned depth, union jfr_memo *m)
{
	struct jfr_text *java = NULL, *os = NULL;
	struct jfr_thread *th;
	struct jfr_pick pk;
	uint64_t v = 0;
	int err;

	err = jfr_pick(x, cls, c, &pk);
	if (!err)
		err = pick_text(x, &pk, FN_JAVA_NAME, c->end, depth, &java);
	if (!err)
		err = pick_text(x, &pk, FN_OS_NAME, c->end, depth, &os);
	if (err)
		return err;
	th = jfr_alloc(x, sizeof(*th));
	if (!th)
		return -ENOMEM;
	th->os_id = jfr_pick_int(&pk, FN_OS_TID, &v) ? v : 0;
	th->name = java && java->raw && *java->raw ? java->raw : os ? os->raw : NULL;
	m->thread = th;
	return 0;
}

static int resolve_old_object(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			      unsigned depth, union jfr_memo *m)
{
	union jfr_memo type = { NULL };
	struct jfr_pick pk;
	int err;

	err = jfr_pick(x, cls, c, &pk);
	if (!err)
		err = pick_ref(x, &pk, FN_TYPE, JR_CLASS, depth, &type);
	if (!err)
		m->name = type.name;
	return err;
}

static int resolve_entry(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
			 unsigned depth, union jfr_memo *m)
{
	switch (cls->role) {
	case JR_STRING:
	case JR_SYMBOL:
	case JR_FRAMETYPE:
		return resolve_text(x, cls, c, depth, m);
	case JR_CLASS:
		return resolve_class(x, cls, c, depth, m);
	case JR_METHOD:
		return resolve_method(x, cls, c, depth, m);
	case JR_FRAME:
		return cls->prim == JP_STRUCT ? resolve_frame(x, cls, c, depth, m) : 0;
	case JR_STACK:
		return resolve_stack(x, cls, c, depth, m);
	case JR_THREAD:
		return resolve_thread(x, cls, c, depth, m);
	case JR_OLDOBJECT:
		return resolve_old_object(x, cls, c, depth, m);
	default:
		return 0;
	}
}

/*
 * HotSpot commits an event that spans a chunk rotation (a monitor entered before it) into the
 * new chunk, but the stack trace it recorded went into the old chunk's checkpoints: a real
 * 3-chunk JDK 17 recording had two such events. Trace ids are global to a recording, so a key
 * the chunk lacks is looked up in the chunk before it, and resolved in that chunk's context.
 */
static int resolve_prev(struct jfr_chunk *x, uint32_t cls, uint64_t key, unsigned role,
			unsigned depth, union jfr_memo *out)
{
	struct jfr_class *pcls = jfr_class_by_id(x->prev, x->classes[cls].id);

	if (!pcls)
		return 0;
	return jfr_resolve(x->prev, (uint32_t)(pcls - x->prev->classes), key, role, depth, out);
}

int jfr_resolve(struct jfr_chunk *x, uint32_t cls, uint64_t key, unsigned role, unsigned depth,
		union jfr_memo *out)
{
	struct jfr_entry *e;
	struct jfr_cur c;
	union jfr_memo m = { NULL };
	int err;

	out->any = NULL;
	if (cls >= x->nclasses || x->classes[cls].role != role)
		return 0;
	e = jfr_pool_find(x, cls, key);
	if (!e && x->prev)
		return resolve_prev(x, cls, key, role, depth, out);
	if (e && e->state == ENT_DONE) {
		*out = e->memo;
		return 0;
	}
	/* missing, a cycle back to an entry being resolved, or too far from the event */
	if (!e || e->state == ENT_BUSY || depth > JFR_MAX_RESOLVE_DEPTH)
		return 0;
	e->state = ENT_BUSY;
	c.p = x->base + e->off;
	c.end = c.p + e->len;
	err = resolve_entry(x, &x->classes[cls], &c, depth, &m);
	if (err == -EBADMSG) { /* cannot be, the index read the same bytes: unknown if it were */
		err = 0;
		m.any = NULL;
	}
	if (err)
		return err;
	e->state = ENT_DONE;
	e->memo = m;
	*out = m;
	return 0;
}
