/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sink_parse: the sink's stateless helpers (sink.h): spool item names, the verdict on an HTTP
 * status, the backoff, Retry-After, RFC 3339 and the Pyroscope application name. Pure (no
 * I/O, no clock: "now" is a parameter), thread-safe; fuzzable and unit-tested alone.
 */
#ifndef SLIDEOPS_AGENT_SINK_PARSE_H
#define SLIDEOPS_AGENT_SINK_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SINK_DEFAULT_APP "slideops"
/* A Retry-After longer than this is shortened to it (a broken server must not park us for days). */
#define SINK_RETRY_AFTER_MAX_S 3600
#define SINK_ID_MAX 64 /* characters of an item id: [A-Za-z0-9._-] */
#define SINK_NAME_MAX (20 + 1 + SINK_ID_MAX + 1)

/* Writes "<seq as 20 digits>-<id>" into @buf. Returns its length, -EINVAL (bad id),
 * -ENAMETOOLONG. */
int sink_item_name(uint64_t seq, const char *id, char *buf, size_t size);
/* Parses an item directory name. Returns 0 and fills @seq and @id (SINK_ID_MAX + 1 bytes);
 * -EINVAL for anything else (temp dirs, "dead", files). */
int sink_parse_item_name(const char *name, uint64_t *seq, char *id);
/* True for 1..SINK_ID_MAX characters of [A-Za-z0-9._-] not starting with '.'. */
bool sink_valid_id(const char *id);

enum sink_verdict {
	SINK_OK = 0,	    /* accepted: delete the item */
	SINK_RETRY = 1,	    /* try again later: 5xx, 408, 429, 3xx, 401/403/404/405/409, network */
	SINK_PERMANENT = 2, /* this item will never be accepted: other 4xx */
};
/* Classifies an HTTP status (0 = no response: network error, timeout). */
enum sink_verdict sink_classify(long http_status);

/*
 * The delay before attempt @attempt + 1 after @attempt (>= 1) consecutive failures: full
 * jitter, uniform in [0, min(cap, base * 2^(attempt-1))] drawn from @rnd; at least
 * @retry_after_s seconds when the server said so (>= 0; < 0 = not given), at most
 * SINK_RETRY_AFTER_MAX_S. Returns milliseconds.
 */
uint64_t sink_backoff_ms(unsigned attempt, unsigned base_ms, unsigned cap_ms,
			 long long retry_after_s, uint32_t rnd);

/*
 * Parses a Retry-After value: delta-seconds or an HTTP-date (RFC 9110 10.2.3), relative to
 * @now. Returns the seconds to wait (>= 0; a date in the past is 0), capped at
 * SINK_RETRY_AFTER_MAX_S, or -EINVAL.
 */
long long sink_parse_retry_after(const char *value, time_t now);

/*
 * Parses "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)" (RFC 3339; 't', 'z' and ' ' accepted
 * too; years from 1970). Returns 0 with *@out in Unix seconds (the fraction dropped), or
 * -EINVAL.
 */
int sink_parse_rfc3339(const char *s, time_t *out);

/*
 * From the item's metadata (JSON text): the profile's time range for Pyroscope, "start" (Unix
 * seconds, or RFC 3339 "2024-05-01T10:00:00Z" / with an offset) plus "duration" or
 * "duration_seconds". Returns 0; -EINVAL when "start" is missing or malformed (the caller then
 * uses the spool time).
 */
int sink_metadata_range(const char *metadata_json, time_t *from, time_t *until);

/*
 * The Pyroscope application name "<app>{node=N,service=S,question=Q}" from the metadata
 * ("node", "target" as a string or an object's "service"/"name"/"description", "question"),
 * label values reduced to [A-Za-z0-9._:/-] (others become '_'), empty labels left out.
 * Returns its length, -EINVAL (metadata not an object), -ENAMETOOLONG.
 */
int sink_pyroscope_name(const char *app, const char *metadata_json, char *buf, size_t size);

#endif
