// SPDX-License-Identifier: Apache-2.0
/*
 * The JFR metadata event (docs/design/jfr-format.md §2): its string table and element tree
 * become the chunk's classes and their fields in wire order; then every field's type is
 * resolved, inline structs that contain themselves are rejected, each class gets the fewest
 * bytes a value of it takes, and fields that take none are dropped, so that reading any value
 * costs at most JFR_MAX_INLINE_DEPTH steps per byte it consumes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "runtimes/jvm/jfr_int.h"

enum el_kind {
	EL_OTHER,
	EL_METADATA,
	EL_CLASS,
	EL_FIELD,
};

enum dfs_state {
	DFS_NEW,
	DFS_BUSY,
	DFS_DONE,
};

/* The class element being read, for its field children. */
struct class_el {
	uint32_t ci;
	uint32_t cap; /* fields room: at most its declared children, JFR_MAX_FIELDS */
	bool has_id;
};

static const struct {
	const char *name;
	uint8_t prim;
} prims[] = {
	{ "boolean", JP_BOOL }, { "byte", JP_BYTE },	 { "char", JP_CHAR },
	{ "short", JP_SHORT },	{ "int", JP_INT },	 { "long", JP_LONG },
	{ "float", JP_FLOAT },	{ "double", JP_DOUBLE }, { "java.lang.String", JP_STRING },
};

static const struct {
	const char *name;
	uint8_t role;
} roles[] = {
	{ "java.lang.String", JR_STRING },	 { "jdk.types.Symbol", JR_SYMBOL },
	{ "jdk.types.FrameType", JR_FRAMETYPE }, { "java.lang.Class", JR_CLASS },
	{ "jdk.types.Method", JR_METHOD },	 { "jdk.types.StackTrace", JR_STACK },
	{ "jdk.types.StackFrame", JR_FRAME },	 { "java.lang.Thread", JR_THREAD },
	{ "jdk.types.OldObject", JR_OLDOBJECT },
};

static const struct {
	const char *name;
	int8_t kind;
} kinds[] = {
	{ "jdk.ObjectAllocationSample", JFR_ALLOC_SAMPLE },
	{ "jdk.ObjectAllocationInNewTLAB", JFR_ALLOC_IN_TLAB },
	{ "jdk.ObjectAllocationOutsideTLAB", JFR_ALLOC_OUTSIDE },
	{ "jdk.OldObjectSample", JFR_OLD_OBJECT },
	{ "profiler.LiveObject", JFR_LIVE_OBJECT },
	{ "jdk.JavaMonitorEnter", JFR_MONITOR_ENTER },
	{ "jdk.ThreadPark", JFR_THREAD_PARK },
};

static const char *const fn_names[FN_COUNT] = {
	[FN_STRING] = "string",
	[FN_DESCRIPTION] = "description",
	[FN_NAME] = "name",
	[FN_TYPE] = "type",
	[FN_METHOD] = "method",
	[FN_LINE] = "lineNumber",
	[FN_BCI] = "bytecodeIndex",
	[FN_TRUNCATED] = "truncated",
	[FN_FRAMES] = "frames",
	[FN_OS_NAME] = "osName",
	[FN_OS_TID] = "osThreadId",
	[FN_JAVA_NAME] = "javaName",
	[FN_START] = "startTime",
	[FN_DURATION] = "duration",
	[FN_THREAD] = "eventThread",
	[FN_STACK] = "stackTrace",
	[FN_OBJECT_CLASS] = "objectClass",
	[FN_MONITOR_CLASS] = "monitorClass",
	[FN_PARKED_CLASS] = "parkedClass",
	[FN_WEIGHT] = "weight",
	[FN_TLAB_SIZE] = "tlabSize",
	[FN_ALLOC_SIZE] = "allocationSize",
	[FN_OBJECT_SIZE] = "objectSize",
	[FN_ALLOC_TIME] = "allocationTime",
	[FN_ARRAY_ELEMENTS] = "arrayElements",
	[FN_OBJECT] = "object",
	[FN_HIDDEN] = "hidden",
};

static size_t left(const struct jfr_cur *c)
{
	return (size_t)(c->end - c->p);
}

static int read_string_table(struct jfr_chunk *x, struct jfr_cur *c)
{
	struct jfr_text *t;
	uint64_t n, i;
	int err;

	err = jfr_varint(c, &n);
	if (err)
		return err;
	if (n > JFR_MAX_META_STRINGS)
		return -E2BIG;
	if (n > left(c)) /* a string takes at least its encoding byte */
		return -EBADMSG;
	x->strings = jfr_alloc(x, (n ? n : 1) * sizeof(*x->strings));
	if (!x->strings)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = jfr_read_string(x, c, 0, true, &t);
		if (err)
			return err;
		x->strings[i] = t ? t->raw : "";
	}
	x->nstrings = n;
	return 0;
}

/* Reads a string-table index into *@s. */
static int read_sref(struct jfr_chunk *x, struct jfr_cur *c, const char **s)
{
	uint64_t i;
	int err;

	err = jfr_varint(c, &i);
	if (err)
		return err;
	if (i >= x->nstrings)
		return -EBADMSG;
	*s = x->strings[i];
	return 0;
}

/* Parses @s, all decimal digits, into *@out. */
static int parse_id(const char *s, uint64_t *out)
{
	const char *p = s;

	if (parse_dec_u64(&p, UINT64_MAX, out) || *p)
		return -EBADMSG;
	return 0;
}

static int class_attr(struct jfr_chunk *x, struct class_el *ce, const char *k, const char *v)
{
	struct jfr_class *cls = &x->classes[ce->ci];

	if (!strcmp(k, "id")) {
		ce->has_id = true;
		return parse_id(v, &cls->id);
	}
	if (!strcmp(k, "name"))
		cls->name = v;
	return 0;
}

static int field_attr(struct jfr_field *f, const char *k, const char *v, bool *has_type)
{
	if (!strcmp(k, "name")) {
		f->name = v;
	} else if (!strcmp(k, "class")) {
		*has_type = true;
		return parse_id(v, &f->type_id);
	} else if (!strcmp(k, "constantPool")) {
		f->cp = !strcmp(v, "true");
	} else if (!strcmp(k, "dimension")) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return -EBADMSG; /* JFR has scalars and arrays, nothing deeper */
		f->array = !strcmp(v, "1");
	}
	return 0;
}

static int new_class(struct jfr_chunk *x, struct class_el *ce)
{
	int err;

	if (x->nclasses >= JFR_MAX_CLASSES)
		return -E2BIG;
	err = jfr_grow(x, (void **)&x->classes, &x->classes_cap, sizeof(*x->classes),
		       x->nclasses + 1);
	if (err)
		return err;
	memset(&x->classes[x->nclasses], 0, sizeof(*x->classes));
	x->classes[x->nclasses].name = "";
	ce->ci = x->nclasses++;
	ce->cap = 0;
	ce->has_id = false;
	return 0;
}

static struct jfr_field *new_field(struct jfr_chunk *x, const struct class_el *ce)
{
	struct jfr_class *cls = &x->classes[ce->ci];
	struct jfr_field *f;

	if (cls->nfields >= ce->cap)
		return NULL;
	f = &cls->fields[cls->nfields++];
	memset(f, 0, sizeof(*f));
	f->name = "";
	return f;
}

/* Reads the @n attributes of an element of kind @kind (class @ce, field @f). */
static int read_attrs(struct jfr_chunk *x, struct jfr_cur *c, uint64_t n, enum el_kind kind,
		      struct class_el *ce, struct jfr_field *f)
{
	bool has_type = false;
	const char *k, *v;
	int err;

	if (n > left(c) / 2)
		return -EBADMSG;
	while (n--) {
		err = read_sref(x, c, &k);
		if (!err)
			err = read_sref(x, c, &v);
		if (!err && kind == EL_CLASS)
			err = class_attr(x, ce, k, v);
		if (!err && kind == EL_FIELD)
			err = field_attr(f, k, v, &has_type);
		if (err)
			return err;
	}
	if ((kind == EL_CLASS && !ce->has_id) || (kind == EL_FIELD && !has_type))
		return -EBADMSG;
	return 0;
}

static enum el_kind element_kind(enum el_kind parent, const char *name)
{
	if (!strcmp(name, "metadata"))
		return EL_METADATA;
	if (parent == EL_METADATA && !strcmp(name, "class"))
		return EL_CLASS;
	if (parent == EL_CLASS && !strcmp(name, "field"))
		return EL_FIELD;
	return EL_OTHER;
}

/* Gives the class element @ce room for its fields, now that its children are counted. */
static int class_room(struct jfr_chunk *x, struct class_el *ce, uint64_t nchild)
{
	struct jfr_class *cls = &x->classes[ce->ci];

	ce->cap = nchild > JFR_MAX_FIELDS ? JFR_MAX_FIELDS : (uint32_t)nchild;
	cls->fields = jfr_alloc(x, (ce->cap ? ce->cap : 1) * sizeof(*cls->fields));
	return cls->fields ? 0 : -ENOMEM;
}

static int parse_element(struct jfr_chunk *x, struct jfr_cur *c, unsigned depth,
			 enum el_kind parent, struct class_el *pce)
{
	struct jfr_field *f = NULL;
	struct class_el ce = { 0 };
	uint64_t nattr, nchild;
	enum el_kind kind;
	const char *name;
	int err;

	if (depth > JFR_MAX_META_DEPTH)
		return -E2BIG;
	err = read_sref(x, c, &name);
	if (err)
		return err;
	kind = element_kind(parent, name);
	if (kind == EL_CLASS)
		err = new_class(x, &ce);
	if (kind == EL_FIELD && !(f = new_field(x, pce)))
		err = -E2BIG; /* more fields than JFR_MAX_FIELDS */
	if (!err)
		err = jfr_varint(c, &nattr);
	if (!err)
		err = read_attrs(x, c, nattr, kind, &ce, f);
	if (!err)
		err = jfr_varint(c, &nchild);
	if (err)
		return err;
	if (nchild > left(c) / 3) /* an element is at least three varints */
		return -EBADMSG;
	if (kind == EL_CLASS && (err = class_room(x, &ce, nchild)))
		return err;
	while (nchild-- && !err)
		err = parse_element(x, c, depth + 1, kind, &ce);
	return err;
}

static int cmp_class(const void *a, const void *b)
{
	const struct jfr_class *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct jfr_class *jfr_class_by_id(struct jfr_chunk *x, uint64_t id)
{
	struct jfr_class key = { .id = id };

	if (!x->nclasses)
		return NULL;
	return bsearch(&key, x->classes, x->nclasses, sizeof(key), cmp_class);
}

/* Sets what the class's name says: primitive, role, event kind. */
static void name_class(struct jfr_chunk *x, struct jfr_class *cls)
{
	size_t i;

	cls->kind = -1;
	for (i = 0; i < ARRAY_SIZE(prims); i++)
		if (!strcmp(cls->name, prims[i].name))
			cls->prim = prims[i].prim;
	if (cls->prim != JP_STRUCT)
		cls->nfields = 0; /* a primitive is read by its name, whatever it declares */
	for (i = 0; i < ARRAY_SIZE(roles); i++)
		if (!strcmp(cls->name, roles[i].name))
			cls->role = roles[i].role;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(cls->name, kinds[i].name))
			cls->kind = kinds[i].kind;
	if (cls->role == JR_STRING)
		x->string_cls = (uint32_t)(cls - x->classes);
}

static int type_fields(struct jfr_chunk *x, struct jfr_class *cls)
{
	struct jfr_class *t;
	uint32_t i;
	unsigned k;

	for (i = 0; i < cls->nfields; i++) {
		struct jfr_field *f = &cls->fields[i];

		t = jfr_class_by_id(x, f->type_id);
		if (!t)
			return -EBADMSG;
		f->cls = (uint32_t)(t - x->classes);
		for (k = 1; k < FN_COUNT; k++)
			if (!strcmp(f->name, fn_names[k]))
				f->fn = k;
	}
	return 0;
}

static uint32_t prim_min_bytes(uint8_t prim)
{
	return prim == JP_FLOAT ? 4 : prim == JP_DOUBLE ? 8 : 1;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static int layout(struct jfr_chunk *x, uint32_t ci, unsigned depth);

/* Lays out the fields of struct @cls: min bytes, height, zero-byte fields dropped. */
static int layout_fields(struct jfr_chunk *x, struct jfr_class *cls, unsigned depth)
{
	uint32_t i, n = 0, min = 0;
	unsigned height = 0;
	int err;

	for (i = 0; i < cls->nfields; i++) {
		struct jfr_field f = cls->fields[i];
		const struct jfr_class *t = &x->classes[f.cls];

		if (!f.cp) {
			err = layout(x, f.cls, depth + 1); /* an inline element, array or not */
			if (err)
				return err;
			if (t->prim == JP_STRUCT && t->height + 1u > height)
				height = t->height + 1u;
		}
		if (!f.cp && !f.array && !t->min_bytes)
			continue; /* nothing on the wire */
		min = sat_add(min, f.cp || f.array ? 1 : t->min_bytes);
		cls->fields[n++] = f;
	}
	cls->nfields = n;
	cls->min_bytes = min;
	cls->height = height;
	return 0;
}

static int layout(struct jfr_chunk *x, uint32_t ci, unsigned depth)
{
	struct jfr_class *cls = &x->classes[ci];
	int err;

	if (cls->dfs == DFS_DONE)
		return 0;
	if (cls->dfs == DFS_BUSY)
		return -EBADMSG; /* a struct that contains itself inline */
	if (depth > JFR_MAX_INLINE_DEPTH)
		return -E2BIG;
	if (cls->prim != JP_STRUCT) {
		cls->min_bytes = prim_min_bytes(cls->prim);
		cls->dfs = DFS_DONE;
		return 0;
	}
	cls->dfs = DFS_BUSY;
	err = layout_fields(x, cls, depth);
	if (err)
		return err;
	cls->dfs = DFS_DONE;
	return 0;
}

static int meta_finish(struct jfr_chunk *x)
{
	size_t i;
	int err;

	if (x->nclasses)
		qsort(x->classes, x->nclasses, sizeof(*x->classes), cmp_class);
	x->string_cls = JFR_NONE;
	for (i = 0; i < x->nclasses; i++) {
		if (i && x->classes[i].id == x->classes[i - 1].id)
			return -EBADMSG;
		name_class(x, &x->classes[i]);
	}
	for (i = 0; i < x->nclasses; i++) {
		err = type_fields(x, &x->classes[i]);
		if (err)
			return err;
	}
	for (i = 0; i < x->nclasses; i++) {
		err = layout(x, (uint32_t)i, 0);
		if (err)
			return err;
	}
	return 0;
}

int jfr_meta_load(struct jfr_chunk *x)
{
	struct jfr_cur c = { x->base + x->meta_offset, x->base + x->size }, rec;
	uint64_t type, v;
	int err, i;

	err = jfr_record(&c, &rec, &type);
	if (err)
		return err;
	if (type != 0)
		return -EBADMSG;
	for (i = 0; i < 3 && !err; i++) /* start, duration, metadata id */
		err = jfr_varint(&rec, &v);
	if (!err)
		err = read_string_table(x, &rec);
	if (!err)
		err = parse_element(x, &rec, 0, EL_OTHER, NULL);
	return err ? err : meta_finish(x);
}

/* --- values ---------------------------------------------------------------------------------- */

static int skip_one(struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		    unsigned depth)
{
	uint64_t v;

	if (f->cp)
		return jfr_varint(c, &v);
	return jfr_skip_value(x, &x->classes[f->cls], c, depth);
}

int jfr_skip_field(struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		   unsigned depth)
{
	uint32_t min;
	uint64_t n;
	int err;

	if (!f->array)
		return skip_one(x, f, c, depth);
	err = jfr_varint(c, &n);
	if (err)
		return err;
	min = f->cp ? 1 : x->classes[f->cls].min_bytes;
	if (!min)
		return 0; /* elements of a type that takes no bytes */
	if (n > left(c) / min)
		return -EBADMSG;
	while (n-- && !err)
		err = skip_one(x, f, c, depth);
	return err;
}

int jfr_skip_value(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
		   unsigned depth)
{
	uint32_t i;
	uint64_t v;
	int err = 0;

	switch (cls->prim) {
	case JP_BOOL:
	case JP_BYTE:
		return jfr_skip(c, 1);
	case JP_CHAR:
	case JP_SHORT:
	case JP_INT:
	case JP_LONG:
		return jfr_varint(c, &v);
	case JP_FLOAT:
		return jfr_skip(c, 4);
	case JP_DOUBLE:
		return jfr_skip(c, 8);
	case JP_STRING:
		return jfr_skip_string(c);
	}
	if (depth > JFR_MAX_INLINE_DEPTH + 1) /* the layout pass bounds it; never taken */
		return -EBADMSG;
	for (i = 0; i < cls->nfields && !err; i++)
		err = jfr_skip_field(x, &cls->fields[i], c, depth + 1);
	return err;
}

/* Reads field @f as an integer or a key into *@v: 1, 0 when it is of another shape (nothing
 * read), or -EBADMSG. */
static int read_int(const struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		    uint64_t *v)
{
	uint8_t prim = x->classes[f->cls].prim;
	int err;

	if (f->array || (!f->cp && (prim == JP_STRUCT || prim >= JP_FLOAT)))
		return 0;
	if (!f->cp && (prim == JP_BOOL || prim == JP_BYTE)) {
		if (c->p >= c->end)
			return -EBADMSG;
		*v = prim == JP_BYTE ? (uint64_t)(int64_t)(int8_t)*c->p : *c->p;
		c->p++;
		return 1;
	}
	err = jfr_varint(c, v);
	if (err)
		return err;
	if (!f->cp && prim == JP_CHAR)
		*v = (uint16_t)*v;
	else if (!f->cp && prim == JP_SHORT)
		*v = (uint64_t)(int64_t)(int16_t)*v;
	else if (!f->cp && prim == JP_INT)
		*v = (uint64_t)(int64_t)(int32_t)*v;
	return 1;
}

int jfr_pick(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
	     struct jfr_pick *pk)
{
	uint32_t i;
	int err;

	pk->has = pk->seen = 0;
	if (cls->prim != JP_STRUCT)
		return jfr_skip_value(x, cls, c, 0);
	for (i = 0; i < cls->nfields; i++) {
		const struct jfr_field *f = &cls->fields[i];

		if (f->fn) {
			pk->seen |= 1u << f->fn;
			pk->has &= ~(1u << f->fn); /* a later field of the same name wins */
			pk->f[f->fn] = f;
			pk->at[f->fn] = c->p;
			err = read_int(x, f, c, &pk->v[f->fn]);
			if (err < 0)
				return err;
			if (err) {
				pk->has |= 1u << f->fn;
				continue;
			}
		}
		err = jfr_skip_field(x, f, c, 1);
		if (err)
			return err;
	}
	return 0;
}

bool jfr_pick_key(const struct jfr_pick *pk, unsigned fn, uint32_t *cls, uint64_t *key)
{
	if (!(pk->has & (1u << fn)) || !pk->f[fn]->cp)
		return false;
	*cls = pk->f[fn]->cls;
	*key = pk->v[fn];
	return true;
}

bool jfr_pick_int(const struct jfr_pick *pk, unsigned fn, uint64_t *v)
{
	if (!(pk->has & (1u << fn)) || pk->f[fn]->cp)
		return false;
	*v = pk->v[fn];
	return true;
}
