/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config: the daemon's YAML configuration (/etc/slideops/profiler.yaml), every key documented
 * with its default in docs/config.md.
 *
 * The parser is strict: an unknown key, a duplicate key, a value of the wrong type or out of
 * range, an anchor, an alias, a tag or a second document is an error whose message names the
 * file, the line and the key ("profiler.yaml:12: unknown key 'retension' (known: ...)").
 * Nesting is bounded by the schema (at most four levels: services -> item -> match); any node
 * deeper than the schema allows is a type error reported at its line before more is read.
 *
 * All functions are thread-safe on distinct struct config objects; config_defaults() reads the
 * environment (NODE_NAME, KUBERNETES_SERVICE_HOST) and the hostname.
 */
#ifndef SLIDEOPS_CONFIG_H
#define SLIDEOPS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroups/rules.h"

#define CONFIG_DEFAULT_PATH "/etc/slideops/profiler.yaml"
#define CONFIG_MAX_BYTES (1024 * 1024)
#define CONFIG_MAX_SERVICES 256

struct config {
	char node_name[256];		     /* default: $NODE_NAME, else the hostname */
	char listen[128];		     /* default "127.0.0.1:7070"; ":7070" = all addresses */
	char store_dir[512];		     /* default "/var/lib/slideops/profiler" */
	unsigned retention_per_service;	     /* default 50 */
	unsigned continuous_retention_hours; /* default 24 */
	bool continuous;		     /* default false */
	unsigned continuous_hz;		     /* default 19 */
	unsigned continuous_window_s;	     /* continuous_window_seconds, default 60 */
	/* kubernetes */
	bool kube_enabled; /* default: true if KUBERNETES_SERVICE_HOST is set or kubeconfig given */
	char kubeconfig[512]; /* default "" = in-cluster credentials */
	/* sinks; an empty URL means that sink is off */
	char cluster_api_url[512];
	char cluster_api_token_file[512];
	char pyroscope_url[512];
	char spool_dir[512];		    /* default "<store_dir>/spool" */
	unsigned long long spool_max_bytes; /* default 256 MiB */
	char tokens_file[512];		    /* default "/etc/slideops/tokens.yaml" */
	char audit_log[512];		    /* default "<store_dir>/audit.log" */
	char log_level[16];		    /* default "info"; one of error, warn, info, debug */
	/* async-profiler's library for the JVM memory and lock questions; "" = the JVM's own
	 * Flight Recorder. Default "/opt/slideops/async-profiler/lib/libasyncProfiler.so" (used
	 * only when it is there) */
	char async_profiler[512];
	struct service_rule *services; /* owned; freed by config_free() */
	size_t nservices;	       /* at most CONFIG_MAX_SERVICES */
};

/* Fills @c with the defaults (no services; @c->services is overwritten, not freed). */
void config_defaults(struct config *c);

/*
 * Parses the YAML text @text (@len bytes, no terminator needed; NUL bytes are refused) on top
 * of the defaults. @filename only names the file in messages (NULL: "<config>"). An empty
 * document gives the defaults. Returns 0 and fills @out (which the caller later passes to
 * config_free(); a previous @out is overwritten, not freed); -EINVAL for bad input with a
 * one-line message "FILE:LINE: ..." in @err (@errsize bytes, truncated to fit; @err may be
 * NULL); -ENOMEM. @out is untouched on failure.
 */
int config_parse(const char *text, size_t len, const char *filename, struct config *out, char *err,
		 size_t errsize);

/*
 * Reads @path (at most CONFIG_MAX_BYTES) and parses it as config_parse() does. Returns 0;
 * -ENOENT ("PATH: no such file"), -EFBIG, -EACCES, ... from reading, with a message in @err;
 * or what config_parse() returns.
 */
int config_load(const char *path, struct config *out, char *err, size_t errsize);

/* Frees the services of @c and empties the list. Accepts NULL. */
void config_free(struct config *c);

/*
 * Returns the index in @c->services of the first rule that matches these facts of a process,
 * or -ENOENT. Any fact may be NULL (unknown): a rule with a non-empty field for that fact does
 * not match then.
 */
int config_match_service(const struct config *c, const char *unit, const char *cgroup_path,
			 const char *exe, const char *comm);

#endif
