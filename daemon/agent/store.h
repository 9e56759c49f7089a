/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store: past profiles on disk, DIR/profiles/<id>/ with the capture's files and a meta.json,
 * and an index of them in memory (SPEC 7, issue 5 part 4).
 *
 * Writes are atomic per profile: the files are copied into DIR/profiles/.tmp-<id>/ (each
 * fsynced), meta.json is written last, the directory is fsynced and renamed to <id> (a
 * directory rename is atomic), then DIR/profiles is fsynced. Deletion renames <id> back to a
 * .tmp- name before removing the files. So a crash or SIGKILL at any point leaves either the
 * whole profile or a .tmp-* directory, and __new() removes .tmp-* directories: no half entry.
 *
 * The index is rebuilt at __new() from DIR/profiles/<id>/meta.json. Entries are ordered by
 * the time they were stored (created_ns, strictly increasing within a process), newest first.
 * Retention, applied on every add: the latest @retention_per_service listed profiles of each
 * (namespace, service): tenants in two namespaces never evict each other's; continuous-profiling entries for @continuous_retention_hours (never listed); at
 * most @max_entries entries in all (the oldest continuous entries go first, then the oldest).
 *
 * All methods are thread-safe (one mutex); results are copies owned by the caller.
 */
#ifndef SLIDEOPS_STORE_H
#define SLIDEOPS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "20261129T174501Z-a1b2c3" plus the NUL */
#define STORE_ID_SIZE 24
#define STORE_NAME_MAX 256
#define STORE_NS_MAX 64 /* a DNS label: 63 + NUL */
#define STORE_ANSWER_MAX 1024
#define STORE_MAX_LANGUAGES 8
#define STORE_LANGUAGE_MAX 16
#define STORE_DEFAULT_RETENTION 50
#define STORE_DEFAULT_CONTINUOUS_HOURS 24
#define STORE_DEFAULT_MAX_ENTRIES 10000
/* Largest capture file copied into the store; larger ones are refused with -EFBIG. */
#define STORE_MAX_FILE_BYTES (512ULL << 20)
#define STORE_META_MAX_BYTES (64 * 1024)

struct store;
struct symstore;

/* The files of a profile, as capture writes them (docs/files.md). */
enum store_file {
	STORE_FILE_PPROF = 0,  /* profile.pb.gz, required */
	STORE_FILE_COLLAPSED,  /* profile.collapsed, required */
	STORE_FILE_SUMMARY,    /* summary.json, required */
	STORE_FILE_FLAMEGRAPH, /* flamegraph.html, copied when present */
	STORE_FILE_COUNT,
};

/* The file name of @f ("profile.pb.gz"), or NULL. */
const char *store_file_name(enum store_file f);

/* meta.json of a profile (docs/api.md). Strings are NUL-terminated (truncated to fit). */
struct store_meta {
	char id[STORE_ID_SIZE]; /* set by store__add(), or preset (store_make_id) */
	/* the Service name, "server", or the target description: with @ns, the retention group */
	char service[STORE_NAME_MAX];
	char ns[STORE_NS_MAX];	     /* the Service's Kubernetes namespace; "" if none */
	char question[32];	     /* "cpu" */
	char target_kind[16];	     /* "server", "service", "pids", "unit", "container" */
	char target[STORE_NAME_MAX]; /* "Service billing", "this server" */
	int64_t start_ns;	     /* wall clock, start of sampling */
	unsigned int duration_s;
	char answer[STORE_ANSWER_MAX];
	char languages[STORE_MAX_LANGUAGES][STORE_LANGUAGE_MAX];
	size_t nlanguages;
	uint64_t samples;
	bool continuous;    /* kept @continuous_retention_hours, never listed */
	int64_t created_ns; /* filled by store__add() */
};

/* Wall-clock now in ns; a seam for the tests (retention of continuous entries). */
typedef int64_t (*store_clock_fn_t)(void *ctx);

struct store_opts {
	const char *dir;			 /* required; profiles go in DIR/profiles */
	unsigned int retention_per_service;	 /* 0: STORE_DEFAULT_RETENTION */
	unsigned int continuous_retention_hours; /* 0: STORE_DEFAULT_CONTINUOUS_HOURS */
	size_t max_entries;			 /* 0: STORE_DEFAULT_MAX_ENTRIES */
	store_clock_fn_t clock;			 /* NULL: CLOCK_REALTIME */
	void *clock_ctx;
	/* uploaded debug symbols, which name stored profiles when they are read (views.h);
	 * NULL: none; borrowed */
	struct symstore *symbols;
};

/* True when @m is of @service as store__list() takes it ("NS/NAME" or "NAME"; NULL: all). */
bool store_meta_of_service(const struct store_meta *m, const char *service);

/* True when @id has the form of a store id (so it is safe as a file name). */
bool store_id_valid(const char *id);

/* Makes a new id for time @now_ns: "YYYYMMDDTHHMMSSZ-" and 6 random hex digits. */
void store_make_id(int64_t now_ns, char id[STORE_ID_SIZE]);

/*
 * Opens (creating DIR/profiles when missing) and indexes the store: removes leftover .tmp-*
 * directories, skips (with a warning) directories whose meta.json is missing or bad, applies
 * retention. Returns 0 with @out (free with store__free), -EINVAL for bad options, -ENOMEM,
 * or -errno from creating or reading DIR/profiles.
 */
int store__new(const struct store_opts *opts, struct store **out);

/* Accepts NULL. */
void store__free(struct store *s);

/*
 * Stores the capture files found in @files_dir (which is left untouched) with @meta. The id is
 * @meta->id when that is set (it must be valid and unused: -EEXIST otherwise), else a new one;
 * it is copied to @id_out (STORE_ID_SIZE bytes; may be NULL). Then retention runs. Returns 0;
 * -ENOENT when a required file is missing; -EFBIG for a file over STORE_MAX_FILE_BYTES;
 * -EINVAL for a bad @meta; -errno from the file system (nothing is left behind then).
 */
int store__add(struct store *s, const struct store_meta *meta, const char *files_dir, char *id_out);

/*
 * Copies up to @max listed entries (not continuous), newest first, of service @service (NULL:
 * all; "NS/NAME": the Service NAME of namespace NS only; "NAME": every Service NAME, whatever
 * its namespace), skipping the first @offset matches, into @out. Returns how many were
 * copied; *@total (may be NULL) gets the number of matches.
 */
size_t store__list(struct store *s, const char *service, size_t offset, struct store_meta *out,
		   size_t max, size_t *total);
/* store__list() of the profiles of one question ("cpu") only; @question NULL: all. */
size_t store__list_q(struct store *s, const char *service, const char *question, size_t offset,
		     struct store_meta *out, size_t max, size_t *total);

/*
 * Copies up to @max continuous entries whose window [start_ns, start_ns + duration_s) overlaps
 * [@from_ns, @until_ns) (a window of 0 s: when its start lies in the range) into @out, ordered
 * by start_ns (then id): the oldest first with @oldest_first, else the newest first; when more
 * match, the @max first of that order. *@total (may be NULL) gets the number of matches.
 * Returns the number copied (0 for an empty range, @until_ns <= @from_ns), or -ENOMEM.
 */
ssize_t store__list_continuous(struct store *s, int64_t from_ns, int64_t until_ns,
			       bool oldest_first, struct store_meta *out, size_t max,
			       size_t *total);

/* Copies the entry @id (continuous ones included) into @out. Returns 0 or -ENOENT. */
int store__get(struct store *s, const char *id, struct store_meta *out);

/*
 * Opens file @f of profile @id read-only; the fd stays readable even if the profile is deleted
 * meanwhile. Returns 0 with *@fd (the caller closes it) and *@size, -ENOENT for an unknown id or
 * a missing file, or -errno.
 */
int store__open_file(struct store *s, const char *id, enum store_file f, int *fd, uint64_t *size);

/* Deletes profile @id. Returns 0, -ENOENT, or -errno (the entry stays then). */
int store__delete(struct store *s, const char *id);

/* Deletes every profile and DIR/profiles itself (removing the profiler). Returns 0 or the
 * first -errno; the index is empty afterwards either way. */
int store__remove_all(struct store *s);

/* Number of entries (listed and continuous). */
size_t store__count(struct store *s);

/* store_opts.symbols (borrowed), or NULL. */
struct symstore *store__symbols(struct store *s);

/*
 * meta.json text of @m (one compact JSON object, fields in docs/api.md): returns a malloc'd
 * string the caller frees, or NULL on ENOMEM.
 */
char *store_meta_json(const struct store_meta *m);

/* Parses meta.json text into @out. Returns 0, or -EINVAL (bad JSON, missing or bad field). */
int store_meta_parse(const char *text, size_t len, struct store_meta *out);

#endif
