/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sink_http: the sink's transports (sink.h): one attempt to deliver a spooled item to the
 * cluster API (multipart POST to <base>/v1/profiles, bearer token, Idempotency-Key) or to
 * Pyroscope (multipart POST to <base>/ingest?name=...&from=...&until=...&format=pprof). No
 * retries and no spool here: the sender decides from the result. Each call uses its own curl
 * handle, so calls on different threads do not share state.
 */
#ifndef SLIDEOPS_AGENT_SINK_HTTP_H
#define SLIDEOPS_AGENT_SINK_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "daemon/agent/sink.h"

#define SINK_REASON_MAX 1024
#define SINK_PROFILE_FILE "profile.pb.gz"

/* One spooled item's two files, read into memory. */
struct sink_payload {
	char *meta;
	size_t meta_len;
	char *prof;
	size_t prof_len;
};

/* What one attempt came to. */
struct sink_result {
	enum sink_verdict verdict;
	long status;		      /* HTTP status, 0 = no response */
	long long retry_after_s;      /* -1 = not given */
	bool aborted;		      /* stopped by @stop: not a failure of the server */
	char reason[SINK_REASON_MAX]; /* "HTTP 503: <body start>", curl's error, ...: one
					 * printable line without double quotes */
};

/* Where and how to deliver; the strings and @stop are borrowed from the sink. */
struct sink_http {
	const char *cluster_url; /* <base>/v1/profiles, or NULL */
	const char *pyro_url;	 /* <base>/ingest, or NULL */
	const char *token_file;	 /* re-read before every cluster API attempt; or NULL */
	const char *app;	 /* the Pyroscope application name's prefix */
	unsigned connect_ms;
	const atomic_bool *stop;	/* set: the transfer in progress is aborted */
	const struct sink_clock *clock; /* the wall clock for Retry-After dates */
};

/* Unix seconds from @clock (NULL or no wall member: time()). */
time_t sink_wall(const struct sink_clock *clock);

/* One attempt at the cluster API for item @id; the result in @out (never fails otherwise). */
void sink_http_post_cluster(const struct sink_http *h, const char *id,
			    const struct sink_payload *pl, unsigned timeout_ms,
			    struct sink_result *out);

/* One attempt at Pyroscope, named and timed from the metadata (sink_pyroscope_name(),
 * sink_metadata_range(); the last second when it has no start). */
void sink_http_post_pyroscope(const struct sink_http *h, const struct sink_payload *pl,
			      unsigned timeout_ms, struct sink_result *out);

#endif
