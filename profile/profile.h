/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile: the in-memory profile model every capture fills and every writer reads.
 *
 * Strings, frames and label sets are interned, so a profile of a whole server costs memory in
 * proportion to its distinct stacks, not its samples. Adding the same stack with the same labels
 * twice adds to one sample. Not thread-safe: one owner at a time.
 */
#ifndef SLIDEOPS_PROFILE_H
#define SLIDEOPS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_MAX_VALUES 2
#define PROF_MAX_FRAMES 512

/* Languages, used to colour frames and to label samples. Stable: stored in profiles. */
enum prof_lang {
	PROF_LANG_NATIVE = 0,
	PROF_LANG_KERNEL,
	PROF_LANG_GO,
	PROF_LANG_JAVA,
	PROF_LANG_PYTHON,
	PROF_LANG_NODE,
	PROF_LANG_RUBY,
	PROF_LANG_OWNER, /* synthetic root frames: the owner group and the process */
	PROF_LANG_COUNT,
};

/* "native", "kernel", "go", "java", "python", "node", "ruby", "owner" */
const char *prof_lang_name(enum prof_lang lang);
/* Returns the language for a name above, or -EINVAL. */
int prof_lang_parse(const char *name);

/* One location. Strings are copied (interned) by profile__frame(); NULL means unknown. */
struct prof_frame_info {
	const char *function; /* "build_report"; NULL: the frame is shown as "<mapping>+0x<addr>" */
	const char *file;     /* source file, if known */
	uint32_t line;	      /* source line, 0 if unknown */
	const char *mapping;  /* path of the binary as the process sees it, "[kernel.kallsyms]" */
	const char *build_id; /* hex GNU build id of the mapping, if known */
	uint64_t address;     /* address relative to the mapping's file (as addr2line takes it) */
	enum prof_lang lang;
	bool unnamed_stripped; /* no name because the mapping was stripped */
};

/* Labels of one sample. Strings are copied. */
struct prof_labels {
	const char *owner;   /* "Service billing", "Signed-in sessions"; NULL for none */
	const char *process; /* process name (comm of the thread group leader) */
	const char *thread;  /* thread name */
	uint32_t pid;	     /* tgid */
	uint32_t tid;
	enum prof_lang lang; /* language of the process */
};

struct profile_opts {
	/* pprof sample types: value i is (type[i], unit[i]); e.g. {"samples","count"},{"cpu","nanoseconds"} */
	const char *sample_type[PROF_MAX_VALUES];
	const char *sample_unit[PROF_MAX_VALUES];
	size_t nvalues;			       /* 1 or 2; 0 means the CPU default above */
	const char *period_type, *period_unit; /* "cpu", "nanoseconds" */
	int64_t period;			       /* e.g. 1e9/99 */
	int64_t time_nanos;		       /* capture start, wall clock */
	int64_t duration_nanos;
	/* Prepend owner and process frames (PROF_LANG_OWNER) in collapsed and flame graph output */
	bool owner_root;
};

struct profile;

/* Creates an empty profile. The option strings are copied; profile__opts() returns them with
 * the defaults filled in (nvalues 0: samples/count + cpu/nanoseconds, period type cpu/nanoseconds).
 * Returns 0, -EINVAL for bad options (nvalues > PROF_MAX_VALUES, a NULL type or unit), -ENOMEM. */
int profile__new(const struct profile_opts *opts, struct profile **out);
/* Frees the profile and everything interned in it. Accepts NULL. */
void profile__free(struct profile *p);

/* Interns a frame; returns its id (>= 0) or -ENOMEM (-EINVAL for a language out of range, -E2BIG
 * past INT32_MAX frames). Equal infos give equal ids; "" strings are kept as "" (not NULL). */
int profile__frame(struct profile *p, const struct prof_frame_info *info);

/*
 * Adds values to the sample (stack, labels). @frames are ids from profile__frame(), leaf first
 * (pprof order), at most PROF_MAX_FRAMES (deeper stacks are cut at the root end).
 * @values has opts.nvalues entries; sums saturate at INT64_MIN/MAX. @labels may be NULL (no
 * labels). Returns 0, -EINVAL for a bad frame id or label language, -ENOMEM.
 */
int profile__add(struct profile *p, const uint32_t *frames, size_t nframes,
		 const struct prof_labels *labels, const int64_t *values);

/* Read access, for writers and for the answer. Pointers are borrowed, valid until the next
 * profile__add/profile__frame or profile__free. */
const struct profile_opts *profile__opts(const struct profile *p);
size_t profile__nframes(const struct profile *p);
const struct prof_frame_info *profile__frame_info(const struct profile *p, uint32_t id);
size_t profile__nsamples(const struct profile *p);

struct prof_sample {
	const uint32_t *frames; /* leaf first */
	size_t nframes;
	const struct prof_labels *labels;
	const int64_t *values;
};
/* Fills @out with sample @i (0 <= i < profile__nsamples). Returns 0 or -ERANGE. */
int profile__sample(const struct profile *p, size_t i, struct prof_sample *out);
/* Sum of value @vi over all samples. */
int64_t profile__total(const struct profile *p, size_t vi);

/* Display name of a frame: its function, else "<basename of mapping>+0x<address>", else "[unknown]".
 * Writes into @buf (NUL-terminated, truncated) and returns @buf. */
const char *profile_frame_display(const struct prof_frame_info *f, char *buf, size_t size);

/*
 * Additions for writers and decoders.
 */

/*
 * prof_strset: a set of strings, each with a dense index in insertion order. Used by the
 * writers (pprof string table, flame graph name table, collapsed lines). Not thread-safe.
 */
struct prof_strset;

/* Creates an empty set. Returns 0 or -ENOMEM. */
int prof_strset__new(struct prof_strset **out);
/* Frees the set and its strings. Accepts NULL. */
void prof_strset__free(struct prof_strset *s);
/* Adds the @len bytes at @str (need not be NUL-terminated). Returns the string's index (>= 0),
 * the existing one if present, or -ENOMEM / -E2BIG (more than INT32_MAX strings). */
int prof_strset__add(struct prof_strset *s, const char *str, size_t len);
/* Returns the index of the @len bytes at @str, or -ENOENT. */
int prof_strset__find(const struct prof_strset *s, const char *str, size_t len);
size_t prof_strset__count(const struct prof_strset *s);
/* String @i (NUL-terminated; may hold NULs if added with them) and its length. Borrowed, valid
 * until prof_strset__free (strings never move). @i must be < count. */
const char *prof_strset__str(const struct prof_strset *s, uint32_t i);
size_t prof_strset__len(const struct prof_strset *s, uint32_t i);

#endif
