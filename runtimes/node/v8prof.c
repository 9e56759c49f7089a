// SPDX-License-Identifier: Apache-2.0
/*
 * v8prof: V8's CPU and heap sampling profiles (v8prof.h). jansson decodes the message (its
 * parser stops at JSON_PARSER_MAX_DEPTH, so no input makes it, or json_decref(), recurse
 * deeper); the rest is linear or O(n log n) in the input: ids go through a sorted array, the
 * flat CPU tree is checked with one breadth-first walk, the nested heap tree is walked with an
 * explicit stack.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/text.h"
#include "runtimes/node/cdp.h"
#include "runtimes/node/v8prof.h"

/* Reals up to 2^53 are exact; larger sizes are capped there. */
#define V8PROF_EXACT_MAX (1ull << 53)
/* The arena starts with "" (offset 0) and "(anonymous)" (offset 1). */
#define ARENA_HEAD "\0(anonymous)"
#define OFF_EMPTY 0
#define OFF_ANON 1
/*
 * Slots of the intern cache: direct-mapped, so a miss only costs a copy (no chain to attack).
 * A node takes some 80 bytes of JSON: a slot per 64 bytes of input, 64 to 2^16 of them.
 */
#define INTERN_MIN 64u
#define INTERN_MAX (1u << 16)

struct v8prof {
	struct v8prof_node *nodes;
	size_t n_nodes, cap_nodes;
	uint32_t *sample_node;
	int64_t *sample_time;	/* CPU profiles */
	uint64_t *sample_bytes; /* heap profiles */
	uint32_t *by_time;	/* sample indices sorted by (time, index) */
	size_t n_samples;
	int64_t start_us, end_us;
	struct v8prof_stats stats;
	char *arena;
	size_t arena_len, arena_cap;
};

struct id_ent {
	uint32_t id, idx;
};

struct intern_slot {
	const char *raw;
	size_t len, off;
};

/* The state of one parse; names are arena offsets until the arena stops moving. */
struct parse {
	struct v8prof *p;
	json_t *root;
	struct id_ent *ids;
	size_t cap_ids;
	size_t (*names)[2]; /* per node: function, url */
	size_t cap_names;
	struct intern_slot *slots;
	size_t mask;
};

static int id_cmp(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts the ids of the @n nodes; -EPROTO on a duplicate. */
static int ids_sort(struct parse *ps, size_t n)
{
	size_t i;

	qsort(ps->ids, n, sizeof(*ps->ids), id_cmp);
	for (i = 1; i < n; i++)
		if (ps->ids[i].id == ps->ids[i - 1].id)
			return -EPROTO;
	return 0;
}

/* The node index of id @v (a JSON value), or -EPROTO when it is no integer id of a node. */
static int ids_find(const struct parse *ps, const json_t *v, uint32_t *idx)
{
	json_int_t id = json_integer_value(v);
	struct id_ent key, *e;

	if (!json_is_integer(v) || id < 0 || id > UINT32_MAX)
		return -EPROTO;
	key.id = (uint32_t)id;
	e = bsearch(&key, ps->ids, ps->p->n_nodes, sizeof(*ps->ids), id_cmp);
	if (!e)
		return -EPROTO;
	*idx = e->idx;
	return 0;
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/*
 * The arena offset of @raw (@len bytes of a JSON string: valid UTF-8, no NUL), sanitized and
 * cut to V8PROF_NAME_MAX. Each copy takes at most @len + 1 bytes, which the quoted string
 * took in the message. Returns 0 or -ENOMEM.
 */
static int intern(struct parse *ps, const char *raw, size_t len, size_t *off)
{
	struct intern_slot *s = &ps->slots[hash_bytes(raw, len) & ps->mask];
	struct v8prof *p = ps->p;
	size_t keep = len < V8PROF_NAME_MAX ? len : V8PROF_NAME_MAX;
	int err;

	if (s->raw && s->len == len && !memcmp(s->raw, raw, len)) {
		*off = s->off;
		return 0;
	}
	err = array_ensure((void **)&p->arena, &p->arena_cap, 1, p->arena_len + keep + 1);
	if (err)
		return err;
	s->raw = raw;
	s->len = len;
	s->off = p->arena_len;
	p->arena_len += text_utf8_sanitize_copy(p->arena + p->arena_len, keep + 1, raw, len) + 1;
	*off = s->off;
	return 0;
}

static bool is_str(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(s, lit, len);
}

static enum v8prof_kind frame_kind(const char *fn, size_t fn_len, size_t url_len,
				   const char *script)
{
	if (url_len)
		return V8PROF_JS;
	if (is_str(fn, fn_len, "(root)"))
		return V8PROF_ROOT;
	if (is_str(fn, fn_len, "(program)"))
		return V8PROF_PROGRAM;
	if (is_str(fn, fn_len, "(idle)"))
		return V8PROF_IDLE;
	if (is_str(fn, fn_len, "(garbage collector)"))
		return V8PROF_GC;
	if ((fn_len > 1 && fn[0] == '(' && fn[fn_len - 1] == ')') || !strcmp(script, "0"))
		return V8PROF_NATIVE;
	return V8PROF_JS; /* eval'd code: a script of its own without a url */
}

/* A 0-based CDP line or column (-1: unknown) as 1-based (0: unknown). */
static int32_t one_based(struct parse *ps, json_int_t v)
{
	if (v < -1 || v >= INT32_MAX) {
		ps->p->stats.bad_refs++;
		return 0;
	}
	return (int32_t)(v + 1);
}

/* Fills node @i from its callFrame @cf. Returns 0, -EPROTO, -ENOMEM. */
static int parse_frame(struct parse *ps, const json_t *cf, size_t i)
{
	const json_t *fn = json_object_get(cf, "functionName"), *url = json_object_get(cf, "url");
	const json_t *line = json_object_get(cf, "lineNumber"),
		     *col = json_object_get(cf, "columnNumber");
	const json_t *script = json_object_get(cf, "scriptId");
	struct v8prof_node *n = &ps->p->nodes[i];
	size_t fn_len, url_len;
	int err;

	if (!json_is_object(cf) || !json_is_string(fn) || !json_is_string(url) ||
	    !json_is_integer(line) || !json_is_integer(col) || (script && !json_is_string(script)))
		return -EPROTO;
	fn_len = json_string_length(fn);
	url_len = json_string_length(url);
	n->kind = frame_kind(json_string_value(fn), fn_len, url_len,
			     script ? json_string_value(script) : "0");
	n->line = one_based(ps, json_integer_value(line));
	n->column = one_based(ps, json_integer_value(col));
	ps->names[i][0] = OFF_ANON;
	ps->names[i][1] = OFF_EMPTY;
	if (fn_len) {
		err = intern(ps, json_string_value(fn), fn_len, &ps->names[i][0]);
		if (err)
			return err;
	}
	if (url_len)
		return intern(ps, json_string_value(url), url_len, &ps->names[i][1]);
	return 0;
}

/* Makes room for node @n (and its id and names). Returns 0, -EFBIG, -ENOMEM. */
static int grow_nodes(struct parse *ps, size_t n)
{
	struct v8prof *p = ps->p;
	int err;

	if (n > V8PROF_MAX_NODES)
		return -EFBIG;
	err = array_ensure((void **)&p->nodes, &p->cap_nodes, sizeof(*p->nodes), n);
	if (!err)
		err = array_ensure((void **)&ps->ids, &ps->cap_ids, sizeof(*ps->ids), n);
	if (!err)
		err = array_ensure((void **)&ps->names, &ps->cap_names, sizeof(*ps->names), n);
	return err;
}

/* A number that must be an integer (or an integral real within 2^53). */
static int get_i64(const json_t *v, int64_t *out)
{
	double d;

	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -EPROTO;
	d = json_real_value(v);
	if (!(d >= -(double)V8PROF_EXACT_MAX && d <= (double)V8PROF_EXACT_MAX) || d != (int64_t)d)
		return -EPROTO;
	*out = (int64_t)d;
	return 0;
}

/* A size in bytes: an integer or real >= 0, capped at 2^53 (counted). */
static int get_size(struct parse *ps, const json_t *v, uint64_t *out)
{
	double d;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
	} else if (json_is_real(v) && json_real_value(v) >= 0) {
		d = json_real_value(v);
		*out = d >= (double)V8PROF_EXACT_MAX ? V8PROF_EXACT_MAX + 1 : (uint64_t)d;
	} else {
		return -EPROTO;
	}
	if (*out > V8PROF_EXACT_MAX) {
		*out = V8PROF_EXACT_MAX;
		ps->p->stats.bad_refs++;
	}
	return 0;
}

/* The "profile" object of a whole response or of its result, or NULL. */
static const json_t *find_profile(const json_t *root)
{
	const json_t *result = json_object_get(root, "result");

	if (result)
		root = result;
	else if (json_object_get(root, "error"))
		return NULL;
	root = json_object_get(root, "profile");
	return json_is_object(root) ? root : NULL;
}

static int load(struct parse *ps, const char *buf, size_t len, const json_t **profile)
{
	json_error_t e;
	size_t n;

	if (len > CDP_MAX_MESSAGE)
		return -EFBIG;
	for (n = INTERN_MIN; n < INTERN_MAX && n < len / 64; n *= 2)
		;
	ps->mask = n - 1;
	ps->p = calloc(1, sizeof(*ps->p));
	ps->slots = calloc(n, sizeof(*ps->slots));
	if (!ps->p || !ps->slots)
		return -ENOMEM;
	ps->p->arena = malloc(sizeof(ARENA_HEAD));
	if (!ps->p->arena)
		return -ENOMEM;
	memcpy(ps->p->arena, ARENA_HEAD, sizeof(ARENA_HEAD));
	ps->p->arena_len = ps->p->arena_cap = sizeof(ARENA_HEAD);
	ps->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
	if (!ps->root)
		return json_error_code(&e) == json_error_out_of_memory ? -ENOMEM : -EPROTO;
	*profile = find_profile(ps->root);
	return *profile ? 0 : -EPROTO;
}

static int sample_cmp(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The time-sorted index of the CPU samples, for v8prof_nearest(). */
static int sort_by_time(struct v8prof *p)
{
	int64_t(*tmp)[2];
	size_t i;

	p->by_time = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*p->by_time));
	tmp = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*tmp));
	if (!p->by_time || !tmp) {
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < p->n_samples; i++) {
		tmp[i][0] = p->sample_time[i];
		tmp[i][1] = (int64_t)i;
	}
	qsort(tmp, p->n_samples, sizeof(*tmp), sample_cmp);
	for (i = 0; i < p->n_samples; i++)
		p->by_time[i] = (uint32_t)tmp[i][1];
	free(tmp);
	return 0;
}

static int alloc_samples(struct v8prof *p, size_t n, bool cpu)
{
	size_t k = n ? n : 1;

	if (n > V8PROF_MAX_SAMPLES)
		return -EFBIG;
	p->n_samples = n;
	p->sample_node = malloc(k * sizeof(*p->sample_node));
	if (cpu)
		p->sample_time = malloc(k * sizeof(*p->sample_time));
	else
		p->sample_bytes = malloc(k * sizeof(*p->sample_bytes));
	if (!p->sample_node || (cpu ? !p->sample_time : !p->sample_bytes))
		return -ENOMEM;
	return 0;
}

/* Turns the name offsets into pointers (the arena no longer moves) and fills the stats. */
static void finish(struct parse *ps)
{
	struct v8prof *p = ps->p;
	char *arena = realloc(p->arena, p->arena_len);
	size_t i;

	/* give back what the doubling left over (keeping it is no error) */
	if (arena) {
		p->arena = arena;
		p->arena_cap = p->arena_len;
	}
	for (i = 0; i < p->n_nodes; i++) {
		p->nodes[i].function = p->arena + ps->names[i][0];
		p->nodes[i].url = p->arena + ps->names[i][1];
		if (p->nodes[i].depth > V8PROF_MAX_DEPTH)
			p->stats.cut_depth++;
	}
	p->stats.nodes = p->n_nodes;
	p->stats.samples = p->n_samples;
}

/* Frees what a parse holds; hands the profile to @out when @err is 0. */
static int parse_end(struct parse *ps, int err, struct v8prof **out)
{
	if (!err)
		finish(ps);
	json_decref(ps->root);
	free(ps->ids);
	free(ps->names);
	free(ps->slots);
	if (err) {
		v8prof_free(ps->p);
		return err;
	}
	*out = ps->p;
	return 0;
}

/* CPU pass 1: each node's id and call frame. */
static int cpu_nodes(struct parse *ps, const json_t *nodes)
{
	struct v8prof *p = ps->p;
	const json_t *n, *id;
	size_t i;
	int err;

	if (!json_is_array(nodes) || !json_array_size(nodes))
		return -EPROTO;
	err = grow_nodes(ps, json_array_size(nodes));
	if (err)
		return err;
	json_array_foreach(nodes, i, n) {
		id = json_object_get(n, "id");
		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    json_integer_value(id) > UINT32_MAX)
			return -EPROTO;
		ps->ids[i].id = (uint32_t)json_integer_value(id);
		ps->ids[i].idx = (uint32_t)i;
		memset(&p->nodes[i], 0, sizeof(p->nodes[i]));
		p->nodes[i].parent = V8PROF_NONE;
		err = parse_frame(ps, json_object_get(n, "callFrame"), i);
		if (err)
			return err;
		p->n_nodes = i + 1;
	}
	return ids_sort(ps, p->n_nodes);
}

/* CPU pass 2: parents from the children lists; each node is a child at most once. */
static int cpu_links(struct parse *ps, const json_t *nodes)
{
	struct v8prof *p = ps->p;
	const json_t *n, *children, *c;
	size_t i, k;
	uint32_t j;
	int err;

	json_array_foreach(nodes, i, n) {
		children = json_object_get(n, "children");
		if (!children)
			continue;
		if (!json_is_array(children))
			return -EPROTO;
		json_array_foreach(children, k, c) {
			err = ids_find(ps, c, &j);
			if (err)
				return err;
			if (j == i || p->nodes[j].parent != V8PROF_NONE)
				return -EPROTO;
			p->nodes[j].parent = (uint32_t)i;
		}
	}
	return 0;
}

/*
 * CPU pass 3: the depths, breadth first from the one root through child lists built from the
 * parents. A node not reached is on a cycle: -EPROTO, as is no root or more than one.
 */
static int cpu_depths(struct v8prof *p)
{
	uint32_t *first = calloc(p->n_nodes + 1, sizeof(*first));
	uint32_t *kids = malloc(p->n_nodes * sizeof(*kids)), *fill = NULL;
	size_t i, head = 0, tail = 0, root = V8PROF_NONE;
	int err = -ENOMEM;

	if (!first || !kids)
		goto out;
	err = -EPROTO;
	for (i = 0; i < p->n_nodes; i++) {
		if (p->nodes[i].parent != V8PROF_NONE)
			first[p->nodes[i].parent + 1]++;
		else if (root != V8PROF_NONE)
			goto out;
		else
			root = i;
	}
	if (root == V8PROF_NONE)
		goto out;
	for (i = 0; i < p->n_nodes; i++)
		first[i + 1] += first[i];
	err = -ENOMEM;
	fill = malloc(p->n_nodes * sizeof(*fill));
	if (!fill)
		goto out;
	memcpy(fill, first, p->n_nodes * sizeof(*fill));
	for (i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].parent != V8PROF_NONE)
			kids[fill[p->nodes[i].parent]++] = (uint32_t)i;
	/* fill is reused as the queue */
	fill[tail++] = (uint32_t)root;
	p->nodes[root].depth = 0;
	while (head < tail) {
		uint32_t u = fill[head++], k;

		for (k = first[u]; k < first[u + 1]; k++) {
			p->nodes[kids[k]].depth = p->nodes[u].depth + 1;
			fill[tail++] = kids[k];
		}
	}
	err = tail == p->n_nodes ? 0 : -EPROTO;
out:
	free(first);
	free(kids);
	free(fill);
	return err;
}

/* CPU samples: node ids and the running sum of timeDeltas from startTime. */
static int cpu_samples(struct parse *ps, const json_t *prof)
{
	const json_t *samples = json_object_get(prof, "samples");
	const json_t *deltas = json_object_get(prof, "timeDeltas");
	struct v8prof *p = ps->p;
	int64_t t, d;
	size_t i;
	int err;

	if (get_i64(json_object_get(prof, "startTime"), &p->start_us) ||
	    get_i64(json_object_get(prof, "endTime"), &p->end_us))
		return -EPROTO;
	if (json_array_size(samples) > V8PROF_MAX_SAMPLES ||
	    json_array_size(deltas) > V8PROF_MAX_SAMPLES)
		return -EFBIG;
	if ((samples || deltas) && (!json_is_array(samples) || !json_is_array(deltas) ||
				    json_array_size(samples) != json_array_size(deltas)))
		return -EPROTO;
	err = alloc_samples(p, json_array_size(samples), true);
	if (err)
		return err;
	t = p->start_us;
	for (i = 0; i < p->n_samples; i++) {
		err = ids_find(ps, json_array_get(samples, i), &p->sample_node[i]);
		if (err)
			return err;
		if (get_i64(json_array_get(deltas, i), &d) || __builtin_add_overflow(t, d, &t))
			return -EPROTO;
		p->sample_time[i] = t;
	}
	return sort_by_time(p);
}

int v8prof_cpu_parse(const char *buf, size_t len, struct v8prof **out)
{
	struct parse ps = { 0 };
	const json_t *prof, *nodes;
	int err;

	if (!buf || !out)
		return -EINVAL;
	err = load(&ps, buf, len, &prof);
	if (err)
		return parse_end(&ps, err, out);
	nodes = json_object_get(prof, "nodes");
	err = cpu_nodes(&ps, nodes);
	if (!err)
		err = cpu_links(&ps, nodes);
	if (!err)
		err = cpu_depths(ps.p);
	if (!err)
		err = cpu_samples(&ps, prof);
	return parse_end(&ps, err, out);
}

struct heap_todo {
	const json_t *node;
	uint32_t parent, depth;
};

/* One heap node @t as node p->n_nodes; its children go on @stack (@n_stack of @cap). */
static int heap_node(struct parse *ps, const struct heap_todo *t, struct heap_todo **stack,
		     size_t *n_stack, size_t *cap)
{
	const json_t *id = json_object_get(t->node, "id"),
		     *kids = json_object_get(t->node, "children");
	struct v8prof *p = ps->p;
	size_t i = p->n_nodes, k;
	int err;

	if (!json_is_object(t->node) || !json_is_integer(id) || json_integer_value(id) < 0 ||
	    json_integer_value(id) > UINT32_MAX || (kids && !json_is_array(kids)))
		return -EPROTO;
	err = grow_nodes(ps, i + 1);
	if (err)
		return err;
	memset(&p->nodes[i], 0, sizeof(p->nodes[i]));
	p->nodes[i].parent = t->parent;
	p->nodes[i].depth = t->depth;
	ps->ids[i].id = (uint32_t)json_integer_value(id);
	ps->ids[i].idx = (uint32_t)i;
	err = parse_frame(ps, json_object_get(t->node, "callFrame"), i);
	if (!err)
		err = get_size(ps, json_object_get(t->node, "selfSize"), &p->nodes[i].self_bytes);
	if (err)
		return err;
	p->n_nodes = i + 1;
	k = json_array_size(kids);
	if (p->n_nodes + *n_stack + k > V8PROF_MAX_NODES)
		return -EFBIG;
	err = array_ensure((void **)stack, cap, sizeof(**stack), *n_stack + k);
	if (err)
		return err;
	/* reversed, so that the first child is walked first */
	while (k--) {
		(*stack)[*n_stack].node = json_array_get(kids, k);
		(*stack)[*n_stack].parent = (uint32_t)i;
		(*stack)[*n_stack].depth = t->depth + 1;
		(*n_stack)++;
	}
	return 0;
}

/* The nested heap tree, depth first with an explicit stack. */
static int heap_tree(struct parse *ps, const json_t *head)
{
	struct heap_todo *stack = NULL, t;
	size_t n_stack = 0, cap = 0;
	int err;

	err = array_ensure((void **)&stack, &cap, sizeof(*stack), 1);
	if (err)
		return err;
	stack[n_stack++] = (struct heap_todo){ head, V8PROF_NONE, 0 };
	while (n_stack && !err) {
		t = stack[--n_stack];
		err = heap_node(ps, &t, &stack, &n_stack, &cap);
	}
	free(stack);
	return err ? err : ids_sort(ps, ps->p->n_nodes);
}

static int heap_samples(struct parse *ps, const json_t *samples)
{
	struct v8prof *p = ps->p;
	const json_t *s;
	size_t i;
	int err;

	if (samples && !json_is_array(samples))
		return -EPROTO;
	err = alloc_samples(p, json_array_size(samples), false);
	if (err)
		return err;
	size_t k = 0;

	json_array_foreach(samples, i, s) {
		const json_t *id;

		if (!json_is_object(s))
			return -EPROTO;
		id = json_object_get(s, "nodeId");
		err = ids_find(ps, id, &p->sample_node[k]);
		/* V8 lists a sample whose node it added to the tree after building the tree it
		 * sent (a race inside V8, seen with Node.js 20): left out and counted */
		if (err && json_is_integer(id) && json_integer_value(id) >= 0 &&
		    json_integer_value(id) <= UINT32_MAX) {
			p->stats.orphan_samples++;
			continue;
		}
		if (!err)
			err = get_size(ps, json_object_get(s, "size"), &p->sample_bytes[k]);
		if (err)
			return err;
		k++;
	}
	p->n_samples = k;
	return 0;
}

int v8prof_heap_parse(const char *buf, size_t len, struct v8prof **out)
{
	struct parse ps = { 0 };
	const json_t *prof;
	int err;

	if (!buf || !out)
		return -EINVAL;
	err = load(&ps, buf, len, &prof);
	if (!err)
		err = heap_tree(&ps, json_object_get(prof, "head"));
	if (!err)
		err = heap_samples(&ps, json_object_get(prof, "samples"));
	return parse_end(&ps, err, out);
}

void v8prof_free(struct v8prof *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->sample_node);
	free(p->sample_time);
	free(p->sample_bytes);
	free(p->by_time);
	free(p->arena);
	free(p);
}

size_t v8prof_nodes(const struct v8prof *p, const struct v8prof_node **out)
{
	if (out)
		*out = p->nodes;
	return p->n_nodes;
}

size_t v8prof_samples(const struct v8prof *p, const uint32_t **node_idx, const int64_t **time_us)
{
	if (node_idx)
		*node_idx = p->sample_node;
	if (time_us)
		*time_us = p->sample_time;
	return p->n_samples;
}

const uint64_t *v8prof_sample_bytes(const struct v8prof *p)
{
	return p->sample_bytes;
}

int64_t v8prof_start_us(const struct v8prof *p)
{
	return p->start_us;
}

int64_t v8prof_end_us(const struct v8prof *p)
{
	return p->end_us;
}

void v8prof_get_stats(const struct v8prof *p, struct v8prof_stats *out)
{
	*out = p->stats;
}

size_t v8prof_stack(const struct v8prof *p, uint32_t idx, uint32_t *out, size_t max)
{
	size_t n = 0;

	if (max > V8PROF_MAX_DEPTH)
		max = V8PROF_MAX_DEPTH;
	while (idx < p->n_nodes && p->nodes[idx].parent != V8PROF_NONE && n < max) {
		out[n++] = idx;
		idx = p->nodes[idx].parent;
	}
	return n;
}

/* The first position in by_time whose time is >= @t. */
static size_t lower_bound(const struct v8prof *p, int64_t t)
{
	size_t lo = 0, hi = p->n_samples, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->sample_time[p->by_time[mid]] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* |a - b| without overflow. */
static uint64_t distance(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

int v8prof_nearest(const struct v8prof *p, int64_t t_us, int64_t tol_us, uint32_t *sample)
{
	size_t k, best = SIZE_MAX;
	uint64_t d_best = UINT64_MAX;

	if (tol_us < 0 || !sample)
		return -EINVAL;
	if (!p->sample_time || !p->n_samples)
		return -ENOENT;
	k = lower_bound(p, t_us);
	if (k > 0) {
		/* the earliest sample of the latest time below t_us */
		best = lower_bound(p, p->sample_time[p->by_time[k - 1]]);
		d_best = distance(p->sample_time[p->by_time[best]], t_us);
	}
	if (k < p->n_samples && distance(p->sample_time[p->by_time[k]], t_us) < d_best) {
		best = k;
		d_best = distance(p->sample_time[p->by_time[k]], t_us);
	}
	if (d_best > (uint64_t)tol_us)
		return -ENOENT;
	*sample = p->by_time[best];
	return 0;
}
