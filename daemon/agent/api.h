/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api: the daemon's local HTTP API (libmicrohttpd, JSON; routes in docs/api.md).
 *
 * One thread per connection (at most @max_connections, each idle-timed-out), so a slow
 * download never holds up a status request. Every route but /metrics needs a bearer token
 * (struct tokens); mutating routes need a role above Viewer (403 otherwise). Request bodies
 * are bounded (API_JSON_BODY_MAX, 413 past it), headers by the connection memory limit. Every
 * error is a JSON body {"error": "message"}. Captures, downloads, deletions, uploads and
 * removal, allowed or denied, are written to the audit trail.
 *
 * What the API cannot do itself (check, plan, run a capture, report progress, remove the
 * binary) comes through struct api_ops, so tests run the real server with fakes.
 */
#ifndef SLIDEOPS_API_H
#define SLIDEOPS_API_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/agent/api_parse.h"

struct api;
struct symstore;
struct audit;
struct capture_step;
struct store;
struct tokens;

#define API_DEFAULT_MAX_CONNECTIONS 32
#define API_DEFAULT_TIMEOUT_S 30
/* GET /v1/status runs one check for every caller waiting, and serves it again this long */
#define API_DEFAULT_STATUS_TTL_MS 2000

/* Progress of the current (or last) capture, for GET /v1/captures/current. */
struct api_progress {
	char id[STORE_ID_SIZE];		   /* the capture's id (the profile id once stored) */
	char state[16];			   /* "running", "done", "failed", "refused" */
	char target[TARGET_NAME_MAX + 16]; /* "service:billing" */
	char question[32];
	unsigned int duration_s;
	int step, nsteps; /* 1-based step now running */
	char text[1024];  /* that step in words */
	double elapsed_s;
	char message[1024];		/* the answer when done, the reason when failed */
	char profile_id[STORE_ID_SIZE]; /* set when done */
};

/*
 * Callbacks into the daemon. Each is called on a connection thread, concurrently with the
 * others; @err (@size bytes) takes a one-line message shown to the client. Any may be NULL:
 * the route then answers 501.
 */
struct api_ops {
	/* GET /v1/status: the check document (JSON text, malloc'd, the caller frees). Called
	 * by one connection at a time (single-flight); its result is shared. */
	int (*status)(void *ctx, char **json);
	/* GET /v1/status?target=T: the check of that target (JSON text, malloc'd). -ENOENT (404:
	 * no such target, with the reason in @err), -errno (500). */
	int (*status_target)(void *ctx, const struct capture_target *t, char **json, char *err,
			     size_t size);
	/* GET /v1/processes: the busiest processes and the Services (daemon/capture/busiest.h). */
	int (*processes)(void *ctx, char **json);
	/* GET /v1/plan: fills up to @max steps, returns their number; -EINVAL (400), -ENOENT
	 * (404: no such target), -errno (500). */
	int (*plan)(void *ctx, const struct api_capture_req *req, struct capture_step *steps,
		    int max, char *err, size_t size);
	/* POST /v1/captures: starts the capture in the background and returns at once, with its
	 * id in @id. -EBUSY (409, CAPTURE_BUSY_MSG), -EINVAL (400), -ENOENT (404), -EPERM (503:
	 * the server cannot profile now), -errno (500). @who is the token's name. */
	int (*start_capture)(void *ctx, const struct api_capture_req *req, const char *who,
			     char id[STORE_ID_SIZE], char *err, size_t size);
	/* GET /v1/captures/current: 0 with @out, or -ENOENT when none ran since the start. */
	int (*progress)(void *ctx, struct api_progress *out);
	/* POST /v1/remove, after the store has been removed: removes the binary and the state.
	 * The daemon should stop after the response is sent. */
	int (*remove)(void *ctx, char *err, size_t size);
};

/*
 * Counters the daemon updates, read by GET /metrics. Update with
 * __atomic_add_fetch(&m->captures_done, 1, __ATOMIC_RELAXED) (or __atomic_store_n for the
 * gauge): they are read from connection threads.
 */
struct api_metrics {
	uint64_t captures_done;	   /* counter: captures stored */
	uint64_t captures_failed;  /* counter: captures that ran and failed */
	uint64_t captures_refused; /* counter: refused before running (busy, not ready) */
	uint64_t samples_lost;	   /* counter: samples lost to full maps */
	uint64_t spool_depth;	   /* gauge: profiles waiting in the spool */
	/* continuous profiling (docs/continuous.md) */
	uint64_t continuous_stored;	  /* counter: windows stored */
	uint64_t continuous_failed;	  /* counter: windows not stored */
	uint64_t continuous_processes;	  /* gauge: process snapshots its symbolizer holds */
	uint64_t continuous_unwind_bytes; /* gauge: its unwind tables in the kernel */
};

struct api_opts {
	/* "127.0.0.1:7070", "node-1:7070" (a name: its first address), ":7070" (all addresses,
	 * IPv4 and IPv6), "[::1]:7070"; port 0 picks a free port (api__port) */
	const char *listen;
	struct store *store;	     /* required, borrowed */
	const struct tokens *tokens; /* required, borrowed */
	struct audit *audit;	     /* required, borrowed */
	const struct api_ops *ops;   /* required, borrowed */
	void *ops_ctx;
	struct api_metrics *metrics;  /* may be NULL (all zero), borrowed */
	struct symstore *symbols;     /* uploaded debug symbols; NULL: none kept; borrowed */
	unsigned int max_connections; /* 0: API_DEFAULT_MAX_CONNECTIONS */
	unsigned int timeout_s;	      /* idle timeout of a connection; 0: the default */
	unsigned int status_ttl_ms;   /* GET /v1/status serves a check this long; 0: default */
};

/*
 * Starts serving on @opts->listen. Returns 0 with @out; -EINVAL for bad options or a bad
 * listen address; -EADDRINUSE or another -errno when the server cannot start. The borrowed
 * objects must outlive the api.
 */
int api__new(const struct api_opts *opts, struct api **out);

/* The port it listens on (useful with port 0). */
unsigned short api__port(const struct api *a);

/* Stops the server, waits for every connection thread to end. Accepts NULL. */
void api__free(struct api *a);

#endif
