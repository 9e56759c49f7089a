/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sink: delivers each finished profile to the cluster API (and, optionally, to a
 * Pyroscope-compatible /ingest), through a bounded on-disk spool, so that nothing is lost while
 * the API is down or the agent restarts (SPEC 7, docs/cluster-api.md).
 *
 * sink__submit() first writes the item durably into the spool; one sender thread then delivers
 * the spool strictly oldest first: a multipart POST to <cluster_api_url>/v1/profiles with an
 * Idempotency-Key, retried with exponential backoff and full jitter (Retry-After honoured) until
 * the API answers 2xx (item deleted) or refuses it for good (item moved to <spool>/dead/). After
 * the cluster API accepted an item, the same pprof is pushed once to Pyroscope; a Pyroscope
 * failure is logged and counted, never retried, and never holds up the queue. When the cluster
 * API is off and Pyroscope is on, Pyroscope takes its place as the spooled, retried sink.
 *
 * Spool layout (<spool_dir>):
 *   seq                                   the next sequence number (survives restarts)
 *   <seq:20 digits>-<id>/metadata.json    one item, complete: its directory is renamed into
 *   <seq:20 digits>-<id>/profile.pb.gz    place only after both files are on disk
 *   .tmp-*                                an item being written; removed at start (crash)
 *   dead/<seq>-<id>/{...,reason.txt}      refused items, the newest SINK_DEAD_MAX kept
 *   dropped.log                           one line per item dropped to respect the bound
 *
 * All functions are thread-safe; no curl or jansson types here.
 */
#ifndef SLIDEOPS_SINK_H
#define SLIDEOPS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "daemon/agent/sink_parse.h"

#define SINK_DEFAULT_MAX_BYTES (256ULL << 20)
#define SINK_DEFAULT_BACKOFF_BASE_MS 1000u
#define SINK_DEFAULT_BACKOFF_CAP_MS (5u * 60 * 1000)
#define SINK_DEFAULT_CONNECT_TIMEOUT_MS 5000u
#define SINK_DEFAULT_TIMEOUT_MS 60000u
#define SINK_PYROSCOPE_TIMEOUT_MS 15000u
#define SINK_MAX_METADATA_BYTES (1u << 20)
#define SINK_MAX_PROFILE_BYTES (64u << 20)
#define SINK_DEAD_MAX 16

/*
 * Time and randomness, injectable for tests; NULL members (or a NULL clock) = the real ones.
 * The sender still sleeps in real time for (deadline - now_ms()); a fake now_ms() that does
 * not advance counts each such sleep as having reached the deadline.
 */
struct sink_clock {
	uint64_t (*now_ms)(void *ctx); /* monotonic milliseconds */
	time_t (*wall)(void *ctx);     /* Unix seconds */
	uint32_t (*random)(void *ctx); /* uniform 32 bits, for the jitter */
	void *ctx;
};

struct sink_opts {
	const char *cluster_api_url; /* base URL; "/v1/profiles" is appended. NULL/"" = off */
	const char *token_file;	   /* bearer token, re-read before every attempt; NULL/"" = none */
	const char *pyroscope_url; /* base URL; "/ingest" is appended. NULL/"" = off */
	const char *pyroscope_app; /* application name prefix; default SINK_DEFAULT_APP */
	const char *spool_dir;	   /* required; created if missing */
	unsigned long long spool_max_bytes; /* default SINK_DEFAULT_MAX_BYTES */
	unsigned backoff_base_ms;	    /* default 1 s */
	unsigned backoff_cap_ms;	    /* default 5 min */
	unsigned connect_timeout_ms;	    /* default 5 s */
	unsigned timeout_ms;		    /* whole request; default 60 s */
	bool no_sender;			    /* spool only, start no thread (tests, tools) */
	const struct sink_clock *clock;	    /* copied; default the real clock */
};

struct sink_stats {
	uint64_t queued;	     /* items in the spool, waiting (the one in flight included) */
	uint64_t queued_bytes;	     /* their metadata + profile bytes */
	uint64_t delivered;	     /* accepted by the primary sink since start */
	uint64_t dropped;	     /* removed, oldest first, to respect spool_max_bytes */
	uint64_t dead;		     /* refused for good (moved to dead/) since start */
	uint64_t failures;	     /* failed attempts (each one retried later) since start */
	uint64_t pyroscope_pushed;   /* secondary pushes accepted */
	uint64_t pyroscope_failures; /* secondary pushes that failed (not retried) */
	uint64_t attempt;	     /* consecutive failed attempts of the oldest item, 0 = none */
};

struct sink;

/*
 * Opens (creating it if needed) and rescans the spool: incomplete items from a crash are
 * removed, the rest queued in order, the sequence continues after the highest one seen, and
 * the bound is applied. Then starts the sender thread unless @opts->no_sender or no URL is set.
 * Strings in @opts are copied. Returns 0 and *@out (free with sink__free()); -EINVAL (no
 * spool_dir, a URL that is not http(s)://), -ENOMEM, or -errno from the spool.
 */
int sink__new(const struct sink_opts *opts, struct sink **out);

/*
 * Spools one finished profile: @metadata_json (a JSON object; its "id", when a valid id, names
 * the item and is the Idempotency-Key, otherwise a random id is generated and added) and the
 * gzip-compressed pprof at @pprof_path (copied). When it returns 0 the item is on disk (fsync'd)
 * and will be delivered even across a crash. If the spool would then exceed spool_max_bytes,
 * the oldest items are dropped first (never this one), logged and written to dropped.log.
 * Returns 0; -EINVAL (metadata not a JSON object, profile not gzip); -EFBIG (metadata or
 * profile too large, or the item alone exceeds spool_max_bytes); -ENOENT/-EACCES/-ENOSPC/...
 * Never blocks on the network.
 */
int sink__submit(struct sink *s, const char *metadata_json, const char *pprof_path);

/* Fills @st with a consistent snapshot of the counters (for /metrics). */
void sink__stats(struct sink *s, struct sink_stats *st);

/*
 * Waits until the spool is empty (everything delivered or refused) or @timeout_ms passed.
 * Returns 0, or -ETIMEDOUT (also at once when there is no sender thread and items are queued).
 */
int sink__drain(struct sink *s, unsigned timeout_ms);

/* Stops the sender (an HTTP request in progress is aborted within about a second; the item
 * stays spooled) and joins it; frees @s. Accepts NULL and half-built objects. */
void sink__free(struct sink *s);

#endif
