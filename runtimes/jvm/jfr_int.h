/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jfr_int: what the files of the JFR parser share (jfr.c: chunks and events; jfr_read.c:
 * bytes, strings, names and memory; jfr_meta.c: the metadata event and the layouts of values;
 * jfr_pool.c: checkpoints and the lazy resolution of constant-pool entries). Not a public
 * header: only runtimes/jvm/jfr*.c include it. Everything here works on one chunk at a time
 * (struct jfr_chunk), which owns all the memory; nothing is shared between parses.
 */
#ifndef SLIDEOPS_JVM_JFR_INT_H
#define SLIDEOPS_JVM_JFR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/jvm/jfr.h"

#define JFR_HEADER_SIZE 68
#define JFR_NONE UINT32_MAX /* no class */

/* How a value of a class is read: primitives by name, everything else field by field. */
enum jfr_prim {
	JP_STRUCT,
	JP_BOOL, /* 1 byte */
	JP_BYTE, /* 1 byte, signed */
	JP_CHAR, /* varint, 16 bits unsigned */
	JP_SHORT,
	JP_INT,
	JP_LONG,
	JP_FLOAT,  /* 4 bytes */
	JP_DOUBLE, /* 8 bytes */
	JP_STRING, /* an encoding byte, then its payload */
};

/* What a class is to the resolver, by its name. */
enum jfr_role {
	JR_NONE,
	JR_STRING,    /* java.lang.String: the pool of encoding 2 */
	JR_SYMBOL,    /* jdk.types.Symbol: text in "string" */
	JR_FRAMETYPE, /* jdk.types.FrameType: text in "description" */
	JR_CLASS,     /* java.lang.Class */
	JR_METHOD,    /* jdk.types.Method */
	JR_STACK,     /* jdk.types.StackTrace */
	JR_FRAME,     /* jdk.types.StackFrame (inline in stacks, or a pool of its own) */
	JR_THREAD,    /* java.lang.Thread */
	JR_OLDOBJECT, /* jdk.types.OldObject */
};

/* The field names the parser looks for (struct jfr_field.fn). */
enum jfr_fn {
	FN_NONE,
	FN_STRING,
	FN_DESCRIPTION,
	FN_NAME,
	FN_TYPE,
	FN_METHOD,
	FN_LINE,
	FN_BCI,
	FN_TRUNCATED,
	FN_FRAMES,
	FN_OS_NAME,
	FN_OS_TID,
	FN_JAVA_NAME,
	FN_START,
	FN_DURATION,
	FN_THREAD,
	FN_STACK,
	FN_OBJECT_CLASS,
	FN_MONITOR_CLASS,
	FN_PARKED_CLASS,
	FN_WEIGHT,
	FN_TLAB_SIZE,
	FN_ALLOC_SIZE,
	FN_OBJECT_SIZE,
	FN_ALLOC_TIME,
	FN_ARRAY_ELEMENTS,
	FN_OBJECT,
	FN_HIDDEN,
	FN_COUNT,
};

struct jfr_field {
	const char *name;
	uint64_t type_id; /* the "class" attribute, until jfr_meta_finish() sets cls */
	uint32_t cls;	  /* index into jfr_chunk.classes */
	uint8_t fn;	  /* enum jfr_fn */
	bool cp;	  /* a constant-pool key (varint) */
	bool array;	  /* a varint count, then the elements */
};

struct jfr_class {
	uint64_t id;
	const char *name;
	struct jfr_field *fields; /* wire order, fields that take no bytes left out */
	uint32_t nfields;
	uint32_t min_bytes; /* fewest bytes a value takes (saturated) */
	uint8_t prim;	    /* enum jfr_prim */
	uint8_t role;	    /* enum jfr_role */
	uint8_t dfs;	    /* layout pass state */
	uint8_t height;	    /* inline nesting below this class */
	int8_t kind;	    /* enum jfr_kind of an event type, -1 for others */
};

/* A string as the resolver keeps it: decoded once, its dotted class-name forms made on demand. */
struct jfr_text {
	const char *raw;
	const char *dotted;
	const char *dotted_hidden; /* of a hidden class: the last '/' kept */
};

struct jfr_stack {
	bool truncated;
	uint32_t n;
	struct jfr_frame frames[];
};

struct jfr_thread {
	uint64_t os_id;
	const char *name;
};

struct jfr_method {
	const char *class_name;
	const char *name;
	bool hidden;
};

/* What resolving an entry gave, by its class's role. */
union jfr_memo {
	const void *any;
	struct jfr_text *text;		 /* JR_STRING, JR_SYMBOL, JR_FRAMETYPE */
	const char *name;		 /* JR_CLASS, JR_OLDOBJECT: a dotted class name */
	const struct jfr_method *method; /* JR_METHOD */
	const struct jfr_frame *frame;	 /* JR_FRAME */
	const struct jfr_stack *stack;	 /* JR_STACK */
	const struct jfr_thread *thread; /* JR_THREAD */
};

/* A constant-pool entry: where its value is, and what resolving it gave. */
struct jfr_entry {
	uint64_t key;
	uint32_t cls;
	uint32_t off; /* of the value, from the chunk start */
	uint32_t len; /* of the value */
	uint8_t state;
	union jfr_memo memo;
};

struct jfr_block;

/* One chunk being parsed: its bytes, its header's clock, its metadata, its pools, its memory. */
struct jfr_chunk {
	const uint8_t *base;
	size_t size;
	uint64_t cp_offset, meta_offset;
	int64_t start_ns, start_ticks;
	uint64_t ticks_per_sec;

	struct jfr_block *blocks; /* the arena */
	uint8_t *bump;
	size_t bump_left;
	size_t mem, budget; /* bytes allocated, and the most allowed */

	const char **strings; /* the metadata's string table */
	size_t nstrings;
	struct jfr_class *classes; /* sorted by id after jfr_meta_finish() */
	size_t nclasses, classes_cap;
	uint32_t string_cls; /* java.lang.String, JFR_NONE */

	struct jfr_entry *ents; /* sorted by (cls, key, off) after jfr_pool_load() */
	size_t nents, ents_cap;

	/* The chunk before, whose pools answer the keys this one lacks (its own prev is NULL). */
	struct jfr_chunk *prev;
	struct jfr_stats *st;
};

/* A bounded reader: p moves towards end, never past it. */
struct jfr_cur {
	const uint8_t *p, *end;
};

/* What jfr_pick() found of a value's fields, indexed by enum jfr_fn. */
struct jfr_pick {
	uint32_t has;  /* bit fn: v[fn] holds the integer or the pool key of field f[fn] */
	uint32_t seen; /* bit fn: f[fn] and at[fn] are set (any shape) */
	const struct jfr_field *f[FN_COUNT];
	const uint8_t *at[FN_COUNT]; /* where the field's value starts */
	uint64_t v[FN_COUNT];
};

/* --- jfr_read.c: bytes, strings, names, memory ----------------------------------------------- */

/* Reads a JFR varint (at most 9 bytes, the 9th holding 8 bits; padding allowed). 0, -EBADMSG. */
int jfr_varint(struct jfr_cur *c, uint64_t *out);
/*
 * Reads the size and type id of the record at @c (bounded by the chunk), checks that the size
 * covers them and stays within @c, sets @rec to the rest of the record and moves @c past it.
 * 0, -EBADMSG.
 */
int jfr_record(struct jfr_cur *c, struct jfr_cur *rec, uint64_t *type);
/* Moves past @n bytes. 0, -EBADMSG when fewer are left. */
int jfr_skip(struct jfr_cur *c, uint64_t n);
/* Moves past one string (any of the six encodings). 0, -EBADMSG. */
int jfr_skip_string(struct jfr_cur *c);
/*
 * Reads one string into *@out (NULL for encodings 0 and 2's unknown keys; "" for 1), decoding
 * UTF-8, UTF-16 char arrays and Latin-1 into valid UTF-8 (cut at JFR_MAX_STRING), following an
 * encoding-2 reference into the java.lang.String pool (@depth: see jfr_entry_resolve()); with
 * @no_refs, encoding 2 is -EBADMSG. The text is the chunk's (arena). 0, -EBADMSG, -ENOMEM.
 */
int jfr_read_string(struct jfr_chunk *x, struct jfr_cur *c, unsigned depth, bool no_refs,
		    struct jfr_text **out);
/*
 * The dotted Java name of the class name in @t ("java/lang/String", "[J"), made once per form
 * (@hidden: of a hidden class). NULL when @t has none, or out of memory (*@err -ENOMEM).
 */
const char *jfr_dotted(struct jfr_chunk *x, struct jfr_text *t, bool hidden, int *err);
/*
 * Writes the dotted form of the internal class name @raw to @dst (@size bytes, NUL-terminated,
 * cut at a character boundary): "java/lang/String" -> "java.lang.String", "[J" -> "long[]",
 * "[[Ljava/lang/String;" -> "java.lang.String[][]"; a malformed descriptor only has its '/'
 * replaced. A @hidden class keeps its last '/', which separates its suffix (Class.getName():
 * "Foo$$Lambda/0x0000000033040210"). Returns the length written.
 */
size_t jfr_dotted_name(char *dst, size_t size, const char *raw, bool hidden);

/* Allocates @n bytes (8-aligned) from the chunk's arena; NULL when over the budget or malloc fails. */
void *jfr_alloc(struct jfr_chunk *x, size_t n);
/* Gives back the end of the arena's last allocation @p, keeping its first @keep bytes. */
void jfr_alloc_trim(struct jfr_chunk *x, void *p, size_t n, size_t keep);
/* Grows *@data like array_ensure(), charging the growth to the budget. 0, -ENOMEM. */
int jfr_grow(struct jfr_chunk *x, void **data, size_t *cap, size_t elem, size_t need);
/* Frees everything the chunk allocated and leaves it empty. */
void jfr_chunk_release(struct jfr_chunk *x);

/* --- jfr_meta.c: the metadata event and value layouts ---------------------------------------- */

/* Reads the metadata event at the header's offset into x->classes. 0, -EBADMSG, -E2BIG, -ENOMEM. */
int jfr_meta_load(struct jfr_chunk *x);
/* The class with type id @id, or NULL. */
struct jfr_class *jfr_class_by_id(struct jfr_chunk *x, uint64_t id);
/* Moves past one value of @cls / of field @f. 0, -EBADMSG. */
int jfr_skip_value(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
		   unsigned depth);
int jfr_skip_field(struct jfr_chunk *x, const struct jfr_field *f, struct jfr_cur *c,
		   unsigned depth);
/* Reads one value of struct class @cls at @c, noting the fields the parser looks for. 0, -EBADMSG. */
int jfr_pick(struct jfr_chunk *x, const struct jfr_class *cls, struct jfr_cur *c,
	     struct jfr_pick *pk);
/* True when @fn was read as a pool key (into *@key, its class in *@cls). */
bool jfr_pick_key(const struct jfr_pick *pk, unsigned fn, uint32_t *cls, uint64_t *key);
/* True when @fn was read as an integer (into *@v, sign-extended from its declared width). */
bool jfr_pick_int(const struct jfr_pick *pk, unsigned fn, uint64_t *v);

/* --- jfr_pool.c: checkpoints and resolution -------------------------------------------------- */

/* Walks the checkpoint chain from the header's offset and indexes every pool entry. */
int jfr_pool_load(struct jfr_chunk *x);
/*
 * Forgets what the chunk's entries resolved to (they resolve again on demand). For a chunk
 * that had a prev, before it becomes the next chunk's prev: its memos may point into the chunk
 * before it, which is then freed.
 */
void jfr_pool_forget(struct jfr_chunk *x);
/* The first entry of class @cls with key @key, or NULL. */
struct jfr_entry *jfr_pool_find(struct jfr_chunk *x, uint32_t cls, uint64_t key);
/*
 * Resolves the entry of class @cls with key @key, as its class's role says, into *@out (NULL:
 * unknown: no such key, a class of another role, a cycle, more than JFR_MAX_RESOLVE_DEPTH hops
 * from the event at @depth). Each entry is resolved once (memo). @role is what the caller
 * expects: the entry's class must have it. A key the chunk lacks is looked up in x->prev (a
 * class of the same id and role there), and resolved there. Returns 0 or -ENOMEM.
 */
int jfr_resolve(struct jfr_chunk *x, uint32_t cls, uint64_t key, unsigned role, unsigned depth,
		union jfr_memo *out);
/* The text of field @f (a String, or a key of a String, Symbol or FrameType pool) at @at. */
int jfr_field_text(struct jfr_chunk *x, const struct jfr_field *f, const uint8_t *at,
		   const uint8_t *end, unsigned depth, struct jfr_text **out);

#endif
