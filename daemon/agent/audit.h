/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit: the audit trail, one JSON object per line appended to a file (docs/api.md):
 *
 *   {"when":"2026-11-29T17:45:01.123Z","who":"alice","what":"download",
 *    "target":"20261129T174501Z-a1b2c3","result":"ok","detail":"format=pprof"}
 *
 * Each line is written with one write(2) on an O_APPEND descriptor, so lines from threads (or
 * processes) never interleave, and fdatasync'd before audit__log() returns: the actions
 * audited are rare and made by people (captures, downloads, deletions), so the cost of a
 * sync each is nothing next to losing the record of a deletion in a crash. Strings are
 * escaped by the JSON encoder (a newline in a name cannot forge a line) and invalid UTF-8 is
 * replaced by '?'. Callers pass names, never tokens: nothing secret is given to this module.
 *
 * Thread-safe.
 */
#ifndef SLIDEOPS_AUDIT_H
#define SLIDEOPS_AUDIT_H

#include <stddef.h>
#include <stdint.h>

/* Longest line: five fields of AUDIT_FIELD_MAX bytes, each at most doubled by escaping. */
#define AUDIT_LINE_MAX 12288
#define AUDIT_FIELD_MAX 1024

struct audit;

/* What was done (SPEC 7, issue 5 part 6). */
enum audit_what {
	AUDIT_CAPTURE = 0,
	AUDIT_DOWNLOAD,
	AUDIT_DELETE,
	AUDIT_UPLOAD,
	AUDIT_REMOVE,
	AUDIT_WHAT_COUNT,
};

struct audit_entry {
	enum audit_what what;
	const char *who;    /* token name, or the annotated object ("pod/shop/billing-7d9f") */
	const char *target; /* profile id, capture target ("service:billing"), ... */
	const char *result; /* "ok", "accepted", "denied", "refused", "failed", ... */
	const char *detail; /* may be NULL: "question=cpu duration=30", an error message */
};

/* How much of a raw request audit_raw_request() keeps. */
#define AUDIT_RAW_MAX 256

/*
 * What was asked, as the audit trail keeps it: the first AUDIT_RAW_MAX bytes of @s (@len
 * bytes, not NUL-terminated, may be NULL; NUL bytes, controls and invalid UTF-8 become '?'),
 * with "..." when cut, into @out (@size bytes; nothing when @size is 0). Returns @out. Pure.
 */
const char *audit_raw_request(const char *s, size_t len, char *out, size_t size);

/* "capture", "download", "delete", "upload", "remove", or NULL. */
const char *audit_what_name(enum audit_what w);

/* Wall-clock now in ns; a seam for the tests. */
typedef int64_t (*audit_clock_fn_t)(void *ctx);

struct audit_opts {
	const char *path;	/* required; created 0600 with its directory when missing */
	audit_clock_fn_t clock; /* NULL: CLOCK_REALTIME */
	void *clock_ctx;
};

/* Opens (creates) the trail. Returns 0 with @out, -EINVAL, -ENOMEM or -errno from open. */
int audit__new(const struct audit_opts *opts, struct audit **out);

/* Closes the file. Accepts NULL. */
void audit__free(struct audit *a);

/*
 * Formats @e as one line (each string field cut to AUDIT_FIELD_MAX bytes) and appends it.
 * Returns 0, -EINVAL for a bad @e (unknown what, NULL who/target/result), -ENOMEM, or -errno
 * from write/fdatasync (-EIO for a short write: the line is then incomplete on disk, and the
 * next line starts with a newline so it stays parsable).
 */
int audit__log(struct audit *a, const struct audit_entry *e);

/*
 * Formats @e at time @now_ns into @buf (@size bytes) as audit__log() writes it, with the
 * trailing newline, NUL-terminated. Returns the length (without the NUL), -EINVAL, -ENOMEM,
 * or -ENOSPC when @size is too small.
 */
int audit_format(const struct audit_entry *e, int64_t now_ns, char *buf, size_t size);

#endif
