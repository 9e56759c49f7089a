// SPDX-License-Identifier: Apache-2.0
/*
 * daemon: wiring of the DaemonSet mode (agent.h, docs/daemon.md). Everything it calls is a
 * tested module; what is here is the order things start and stop in, the signals, and the
 * API's operations. The capture worker is jobs.c, the capture annotation annotations.c.
 */
#include "daemon/agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "cgroups/rules.h"
#include "daemon/agent/annotations.h"
#include "daemon/agent/api.h"
#include "daemon/agent/audit.h"
#include "daemon/agent/continuous.h"
#include "daemon/agent/http.h"
#include "daemon/agent/jobs.h"
#include "daemon/agent/kube.h"
#include "daemon/agent/sink.h"
#include "daemon/agent/store.h"
#include "daemon/agent/tokens.h"
#include "daemon/capture/busiest.h"
#include "daemon/capture/capture.h"
#include "daemon/capture/check.h"
#include "daemon/capture/preflight.h"
#include "daemon/config.h"
#include "symbols/symstore.h"

#define EXIT_CONFIG 2
#define MSG_MAX 1024
/* Captures interrupted by a crash leave their directories; a few levels are room enough. */
#define CAPTURES_DIR_DEPTH 16

struct daemon {
	struct config cfg;
	bool cfg_loaded;
	struct service_rules_ctx rules;
	struct kube *kube;
	struct store *store;
	struct symstore *symbols; /* uploaded debug symbols, in <store_dir>/symbols */
	struct tokens *tokens;
	struct audit *audit;
	struct sink *sink;
	struct jobs *jobs;
	struct jobs_opts jobs_opts;    /* the worker's, which continuous profiling shares */
	struct continuous *continuous; /* when the config turns it on */
	struct annotations *ann;       /* when Kubernetes is on */
	struct api *api;
	struct api_metrics metrics;
	char captures_dir[528];
	atomic_bool remove_requested;
};

/* --- names: Kubernetes first, then the config's Service rules --------------------------- */

static int name_owner(void *ctx, int tgid, struct owner *o)
{
	struct daemon *d = ctx;
	int err;

	if (d->kube && (o->pod_uid[0] || o->container_id[0])) {
		err = kube__owner_name(d->kube, tgid, o);
		if (err != -ENOENT)
			return err;
	}
	if (d->cfg.nservices)
		return service_rules_apply(&d->rules, tgid, o);
	return 0;
}

/* target_ns_fn_t: the namespace of a pod's process, from the Kubernetes table. */
static int owner_ns(void *ctx, const struct owner *o, char *ns, size_t size)
{
	struct daemon *d = ctx;

	return d->kube ? kube__owner_namespace(d->kube, o, ns, size) : -ENOENT;
}

/* --- what the worker tells the annotations (set before the worker runs a job) ------------ */

static void on_job_start(void *ctx, const struct job *j, const char *message)
{
	struct daemon *d = ctx;

	if (d->ann)
		annotations__job_started(d->ann, j, message);
}

static void on_job_end(void *ctx, const struct job *j, const struct job_outcome *res)
{
	struct daemon *d = ctx;

	if (d->ann)
		annotations__job_ended(d->ann, j, res);
}

/* --- the API's operations --------------------------------------------------------------- */

static int op_status(void *ctx, char **json)
{
	struct daemon *d = ctx;
	struct check_opts co = { .target = { .kind = TARGET_SERVER },
				 .name_fn = name_owner,
				 .name_ctx = d };
	struct check_result cr;
	char err[MSG_MAX];
	int ret;

	ret = check_run(&co, &cr, err, sizeof(err));
	if (ret)
		return ret;
	free(cr.text);
	*json = cr.json;
	return 0;
}

static int op_status_target(void *ctx, const struct capture_target *t, char **json, char *err,
			    size_t size)
{
	struct daemon *d = ctx;
	struct check_opts co = { .target = *t, .name_fn = name_owner, .name_ctx = d };
	struct check_result cr;
	int ret;

	co.target.ns_fn = owner_ns;
	co.target.ns_ctx = d;
	ret = check_run(&co, &cr, err, size);
	if (ret)
		return ret;
	free(cr.text);
	*json = cr.json;
	return 0;
}

static int op_processes(void *ctx, char **json)
{
	struct daemon *d = ctx;
	struct busiest_opts bo = {
		.name_fn = name_owner, .name_ctx = d, .ns_fn = owner_ns, .ns_ctx = d
	};

	return busiest_json(&bo, json);
}

static void req_opts(struct daemon *d, const struct api_capture_req *req, struct capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->question = req->question;
	o->target = req->target;
	o->target.ns_fn = owner_ns;
	o->target.ns_ctx = d;
	o->duration_s = req->duration_s;
	o->out_dir = d->captures_dir;
	o->to_store = true;
	o->name_fn = name_owner;
	o->name_ctx = d;
	o->async_profiler = d->cfg.async_profiler;
}

static int op_plan(void *ctx, const struct api_capture_req *req, struct capture_step *steps,
		   int max, char *err, size_t size)
{
	struct capture_target_info info;
	struct capture_opts o;
	int n;

	req_opts(ctx, req, &o);
	if (capture_validate(&o, err, size))
		return -EINVAL;
	n = capture_inspect(&o, &info, err, size);
	if (n < 0)
		return n;
	if (info.refuse[0]) {
		snprintf(err, size, "%s", info.refuse);
		return -EINVAL;
	}
	return capture_plan(&o, &info, steps, max);
}

static int op_start_capture(void *ctx, const struct api_capture_req *req, const char *who,
			    char id[STORE_ID_SIZE], char *err, size_t size)
{
	struct daemon *d = ctx;
	struct capture_opts o;
	struct preflight pf;
	struct job *j;
	int ret;

	req_opts(d, req, &o);
	if (capture_validate(&o, err, size))
		return -EINVAL;
	if (preflight_check(&pf)) {
		preflight_message(&pf, err, size);
		return -EPERM;
	}
	ret = capture_count_target(&o, err, size);
	if (ret < 0)
		return ret;
	if (jobs_machine_busy())
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->origin = JOB_API;
	j->target = req->target;
	j->target.ns_fn = owner_ns;
	j->target.ns_ctx = d;
	j->question = req->question;
	j->duration_s = req->duration_s;
	snprintf(j->who, sizeof(j->who), "%s", who);
	/* the store's retention group: "server", the Service (with its namespace), or the
	 * target's description */
	if (req->target.kind == TARGET_SERVER) {
		snprintf(j->service, sizeof(j->service), "server");
	} else if (req->target.kind == TARGET_SERVICE) {
		snprintf(j->service, sizeof(j->service), "%s", req->target.name);
		snprintf(j->service_ns, sizeof(j->service_ns), "%s", req->target.ns);
	} else {
		target_describe(&req->target, j->service, sizeof(j->service));
	}
	store_make_id(clock_real_ns(), j->id);
	memcpy(id, j->id, STORE_ID_SIZE);
	ret = jobs__submit(d->jobs, j);
	if (ret == -ESHUTDOWN)
		snprintf(err, size, "the agent is stopping");
	if (ret)
		free(j);
	return ret;
}

static int op_progress(void *ctx, struct api_progress *out)
{
	struct daemon *d = ctx;

	return jobs__progress(d->jobs, out);
}

/* The store is gone already (api.c); what is left is to stop. The spool stays, so profiles
 * finished before the removal still reach the cluster API; the binary and the DaemonSet are
 * removed by whoever installed them (docs/daemon.md). */
static int op_remove(void *ctx, char *err, size_t size)
{
	struct daemon *d = ctx;

	(void)err;
	(void)size;
	atomic_store(&d->remove_requested, true);
	return 0;
}

static const struct api_ops ops = {
	.status = op_status,
	.status_target = op_status_target,
	.processes = op_processes,
	.plan = op_plan,
	.start_capture = op_start_capture,
	.progress = op_progress,
	.remove = op_remove,
};

/* --- start and stop --------------------------------------------------------------------- */

static int load_tokens(struct daemon *d)
{
	char err[MSG_MAX];
	int ret;

	ret = tokens__load(d->cfg.tokens_file, &d->tokens, err, sizeof(err));
	if (ret == -ENOENT) {
		pr_warn("no tokens file %s: every API request but /metrics is refused (401)",
			d->cfg.tokens_file);
		return tokens__parse("tokens: []\n", strlen("tokens: []\n"), d->cfg.tokens_file,
				     &d->tokens, err, sizeof(err));
	}
	if (ret)
		pr_err("%s", err);
	return ret;
}

/* The store (and its captures/ directory), the tokens, the audit trail and the sink. */
static int open_state(struct daemon *d)
{
	struct store_opts so = { .dir = d->cfg.store_dir,
				 .retention_per_service = d->cfg.retention_per_service,
				 .continuous_retention_hours = d->cfg.continuous_retention_hours };
	struct audit_opts ao = { .path = d->cfg.audit_log };
	struct symstore_opts syo = { 0 };
	char symdir[sizeof(d->cfg.store_dir) + 16];
	int err;

	snprintf(symdir, sizeof(symdir), "%s/symbols", d->cfg.store_dir);
	syo.dir = symdir;
	err = symstore__open(&syo, &d->symbols);
	if (err)
		return pr_err_errno(err, "cannot open the debug-symbol store %s", symdir);
	so.symbols = d->symbols;
	err = store__new(&so, &d->store);
	if (err)
		return pr_err_errno(err, "cannot open the profile store %s", d->cfg.store_dir);
	snprintf(d->captures_dir, sizeof(d->captures_dir), "%s/captures", d->cfg.store_dir);
	/* captures interrupted by a crash: their files never reached the store */
	err = rm_tree_at(AT_FDCWD, d->captures_dir, CAPTURES_DIR_DEPTH);
	if (!err)
		err = mkdir_p(d->captures_dir);
	if (err)
		return pr_err_errno(err, "cannot prepare %s", d->captures_dir);
	err = load_tokens(d);
	if (err)
		return err;
	err = audit__new(&ao, &d->audit);
	if (err)
		return pr_err_errno(err, "cannot open the audit trail %s", d->cfg.audit_log);
	if (d->cfg.cluster_api_url[0] || d->cfg.pyroscope_url[0]) {
		struct sink_opts sk = { .cluster_api_url = d->cfg.cluster_api_url,
					.token_file = d->cfg.cluster_api_token_file,
					.pyroscope_url = d->cfg.pyroscope_url,
					.spool_dir = d->cfg.spool_dir,
					.spool_max_bytes = d->cfg.spool_max_bytes };

		err = sink__new(&sk, &d->sink);
		if (err)
			return pr_err_errno(err, "cannot start the cluster API sink (spool %s)",
					    d->cfg.spool_dir);
	}
	return 0;
}

/* Continuous profiling, when the config asks for it: after the watches, so that its first
 * window names the Services. */
static int start_continuous(struct daemon *d)
{
	struct continuous_opts co = { .freq_hz = d->cfg.continuous_hz,
				      .window_s = d->cfg.continuous_window_s,
				      .jobs = &d->jobs_opts };

	if (!d->cfg.continuous)
		return 0;
	return continuous__new(&co, &d->continuous); /* logged */
}

/* The capture worker, then (with Kubernetes) the request thread and the watches. */
static int start_workers(struct daemon *d)
{
	struct jobs_opts jo = { .node_name = d->cfg.node_name,
				.captures_dir = d->captures_dir,
				.store = d->store,
				.symbols = d->symbols,
				.audit = d->audit,
				.sink = d->sink,
				.metrics = &d->metrics,
				.name_fn = name_owner,
				.name_ctx = d,
				.async_profiler = d->cfg.async_profiler,
				.on_start = on_job_start,
				.on_end = on_job_end,
				.ctx = d };
	struct annotations_opts ano = { .node_name = d->cfg.node_name,
					.audit = d->audit,
					.metrics = &d->metrics };
	int err;

	jo.keep_sampler = true;
	/* what a killed agent left in JVMs' containers, before the first capture */
	err = capture_leftovers(NULL, NULL);
	if (err > 0)
		pr_info("removed %d placements an earlier capture left in containers", err);
	d->jobs_opts = jo;
	err = jobs__new(&jo, &d->jobs);
	if (err)
		return pr_err_errno(err, "cannot start the capture worker");
	if (d->cfg.kube_enabled) {
		struct kube_opts ko = { .node_name = d->cfg.node_name,
					.kubeconfig = d->cfg.kubeconfig };

		ano.jobs = d->jobs;
		err = annotations__new(&ano, &d->ann);
		if (err)
			return pr_err_errno(err, "cannot start the request thread");
		ko.on_request = annotations__on_request;
		ko.ctx = d->ann;
		err = kube__new(&ko, &d->kube);
		if (err)
			return err; /* logged by kube__new() */
		if (kube__wait_synced(d->kube, DAEMON_SYNC_TIMEOUT_MS))
			pr_warn("kube: no pod list from the API server after %d s; serving anyway, "
				"Services are named once it answers",
				DAEMON_SYNC_TIMEOUT_MS / 1000);
		annotations__start(d->ann, d->kube);
	}
	jobs__start(d->jobs);
	return start_continuous(d);
}

static int start(struct daemon *d)
{
	struct api_opts apo = {
		.listen = d->cfg.listen, .ops = &ops, .ops_ctx = d, .metrics = &d->metrics
	};
	int err;

	err = open_state(d);
	if (!err)
		err = start_workers(d);
	if (err)
		return err;
	apo.store = d->store;
	apo.symbols = d->symbols;
	apo.tokens = d->tokens;
	apo.audit = d->audit;
	err = api__new(&apo, &d->api);
	if (err)
		return pr_err_errno(err, "cannot serve the API on %s", d->cfg.listen);
	pr_info("daemon ready on node %s: API on %s (port %u), store %s%s%s", d->cfg.node_name,
		d->cfg.listen, api__port(d->api), d->cfg.store_dir,
		d->kube ? ", Kubernetes on" : "", d->sink ? ", cluster API sink on" : "");
	return 0;
}

static void stop(struct daemon *d)
{
	/* no new API requests; connection threads are joined */
	api__free(d->api);
	d->api = NULL;
	/* the continuous window running is not stored */
	continuous__free(d->continuous);
	d->continuous = NULL;
	/* no new jobs, the running capture stops; then the threads that queue jobs end first */
	jobs__stop(d->jobs);
	annotations__stop(d->ann);
	jobs__free(d->jobs);
	d->jobs = NULL;
	kube__free(d->kube);
	d->kube = NULL;
	/* after kube: its watch thread may report a request until it is joined */
	annotations__free(d->ann);
	d->ann = NULL;
	if (d->sink && sink__drain(d->sink, DAEMON_DRAIN_MS))
		pr_info("sink: profiles still spooled at exit are sent at the next start");
	sink__free(d->sink);
	d->sink = NULL;
	store__free(d->store);
	symstore__free(d->symbols);
	d->symbols = NULL;
	d->store = NULL;
	audit__free(d->audit);
	d->audit = NULL;
	tokens__free(d->tokens);
	d->tokens = NULL;
	if (d->cfg_loaded)
		config_free(&d->cfg);
}

/* Refreshes the gauges /metrics reads from other modules. */
static void refresh_metrics(struct daemon *d)
{
	struct sink_stats st;

	if (!d->sink)
		return;
	sink__stats(d->sink, &st);
	__atomic_store_n(&d->metrics.spool_depth, st.queued, __ATOMIC_RELAXED);
}

int daemon_main(const char *config_path)
{
	const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	struct timespec tick = { 1, 0 };
	struct daemon *d;
	sigset_t stopset;
	char err[MSG_MAX];
	int ret, sig, level;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fprintf(stderr, "slideops-profiler: out of memory\n");
		return EXIT_FAILURE;
	}
	ret = config_load(path, &d->cfg, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "slideops-profiler: %s\n", err);
		free(d);
		return EXIT_CONFIG;
	}
	d->cfg_loaded = true;
	d->rules.rules = d->cfg.services;
	d->rules.nrules = d->cfg.nservices;
	level = log_parse_level(d->cfg.log_level);
	if (!getenv("SLIDEOPS_LOG") && level >= 0)
		log_set_level(level);

	/* Before any thread: signals are taken by this thread only (sigtimedwait), a closed
	 * connection is an error return rather than a death, and libcurl is initialised once. */
	sigemptyset(&stopset);
	sigaddset(&stopset, SIGTERM);
	sigaddset(&stopset, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopset, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_init(NULL)) {
		pr_err("cannot initialise libcurl");
		stop(d);
		free(d);
		return EXIT_FAILURE;
	}

	ret = start(d);
	if (ret) {
		stop(d);
		free(d);
		return EXIT_FAILURE;
	}
	for (;;) {
		sig = sigtimedwait(&stopset, NULL, &tick);
		if (sig > 0) {
			pr_info("signal %d: stopping", sig);
			break;
		}
		refresh_metrics(d);
		if (atomic_load(&d->remove_requested)) {
			pr_info("the profiler was removed through the API: stopping");
			break;
		}
	}
	stop(d);
	free(d);
	return EXIT_SUCCESS;
}
