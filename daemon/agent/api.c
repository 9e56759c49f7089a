// SPDX-License-Identifier: Apache-2.0
/*
 * api: libmicrohttpd in thread-per-connection mode. The first call of the access handler for
 * a request (headers read, body not yet) matches the route and checks the token, the role and
 * Content-Length, so a refused request is answered before its body is read; later calls
 * collect the body (bounded), the last one dispatches.
 */
#include "daemon/agent/api.h"
#include "daemon/agent/api_int.h"
#include "daemon/agent/api_symbols.h"
#include "daemon/agent/page.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "daemon/agent/audit.h"
#include "daemon/agent/session.h"
#include "daemon/capture/capture.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "daemon/agent/store.h"
#include "daemon/agent/tokens.h"
#include "daemon/agent/views.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CONN_MEMORY_LIMIT (32 * 1024) /* request line and headers */
#define SUMMARY_MAX_BYTES (16 * 1024 * 1024)
/* A chunked body past the limit is read and dropped up to this much, then the connection is
 * closed: enough for a 413 to reach an honest client, too little to tie a thread up. */
#define DISCARD_MAX (1024 * 1024)

static const unsigned int error_codes[] = { 400, 401, 403, 404, 405, 409, 413, 500, 501, 503 };
_Static_assert(ARRAY_SIZE(error_codes) == API_ERROR_CODES, "api_int.h counts the codes");

/* Which routes are audited, and as what. */
static int route_audit(enum api_route r)
{
	switch (r) {
	case API_CAPTURE_START:
		return AUDIT_CAPTURE;
	case API_PROFILE_DOWNLOAD:
		return AUDIT_DOWNLOAD;
	case API_PROFILE_DELETE:
	case API_SYMBOLS_DELETE:
		return AUDIT_DELETE;
	case API_SYMBOLS_UPLOAD:
		return AUDIT_UPLOAD;
	case API_REMOVE:
		return AUDIT_REMOVE;
	default:
		return -1;
	}
}

void api_audit(struct api *a, enum audit_what what, const char *who, const char *target,
	       const char *result, const char *detail)
{
	struct audit_entry e = {
		.what = what,
		.who = who,
		.target = target,
		.result = result,
		.detail = detail,
	};
	int err;

	err = audit__log(a->audit, &e);
	if (err) {
		__atomic_add_fetch(&a->audit_errors, 1, __ATOMIC_RELAXED);
		pr_err_errno(err, "audit: cannot record %s of %s by %s", audit_what_name(what),
			     target, who);
	}
}

static void count_error(struct api *a, unsigned int code)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(error_codes); i++)
		if (error_codes[i] == code)
			break;
	__atomic_add_fetch(&a->errors[i], 1, __ATOMIC_RELAXED);
}

enum MHD_Result api_queue(struct MHD_Connection *c, unsigned int code, struct MHD_Response *resp)
{
	const char *const *h;
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	for (h = page_headers; *h; h += 2) /* nosniff, the CSP, no framing elsewhere */
		MHD_add_response_header(resp, h[0], h[1]);
	ret = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Responds with @text (ownership taken), and one extra header when @hdr is set. */
enum MHD_Result api_respond_text_hdr(struct MHD_Connection *c, unsigned int code, char *text,
				     size_t len, const char *type, const char *hdr,
				     const char *hdr_value)
{
	struct MHD_Response *resp;

	if (!text)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (hdr)
		MHD_add_response_header(resp, hdr, hdr_value);
	return api_queue(c, code, resp);
}

enum MHD_Result api_respond_text(struct MHD_Connection *c, unsigned int code, char *text,
				 size_t len, const char *type)
{
	return api_respond_text_hdr(c, code, text, len, type, NULL, NULL);
}

/* Responds with @doc (reference stolen), and one extra header when @hdr is set. */
enum MHD_Result api_respond_json_hdr(struct MHD_Connection *c, unsigned int code, json_t *doc,
				     const char *hdr, const char *hdr_value)
{
	char *text;

	if (!doc)
		return MHD_NO;
	text = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!text)
		return MHD_NO;
	return api_respond_text_hdr(c, code, text, strlen(text), "application/json", hdr,
				    hdr_value);
}

enum MHD_Result api_respond_json(struct MHD_Connection *c, unsigned int code, json_t *doc)
{
	return api_respond_json_hdr(c, code, doc, NULL, NULL);
}

/* {"error": message}, with one extra header when @hdr is set. */
enum MHD_Result api_respond_error_hdr(struct api *a, struct MHD_Connection *c, unsigned int code,
				      const char *hdr, const char *hdr_value, const char *fmt, ...)
{
	char msg[ERR_SIZE];
	va_list ap;
	json_t *s;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	count_error(a, code);
	s = json_string(msg);
	if (!s) /* not UTF-8: our messages quote input only through api_parse's show() */
		s = json_string("error");
	return api_respond_json_hdr(c, code, json_pack("{s:o}", "error", s), hdr, hdr_value);
}

unsigned int api_errno_code(int err)
{
	switch (err) {
	case -EINVAL:
		return 400;
	case -ENOENT:
		return 404;
	case -EBUSY:
		return 409;
	case -EPERM:
		return 503;
	default:
		return 500;
	}
}

/* A short printable copy of a URL for a message. */
const char *api_show_url(const char *url, char buf[104])
{
	size_t i;

	for (i = 0; url[i] && i < 100; i++)
		buf[i] = (url[i] >= 0x20 && url[i] < 0x7f) ? url[i] : '?';
	buf[i] = '\0';
	return buf;
}

const char *api_arg(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

/* A copy of the last result (@a->status_lock held): 0 with *@json, or its error. */
static int status_copy_locked(struct api *a, char **json)
{
	if (a->status_err)
		return a->status_err;
	*json = a->status_json ? strdup(a->status_json) : NULL;
	return *json ? 0 : -ENOMEM;
}

/*
 * The check document, single-flight: a result younger than the TTL is served as is; while a
 * check runs, callers wait for it and share its result; otherwise this caller runs one.
 */
static int status_get(struct api *a, char **json)
{
	char *doc = NULL;
	uint64_t gen;
	int err;

	pthread_mutex_lock(&a->status_lock);
	if (!a->status_running && a->status_gen &&
	    clock_mono_ns() - a->status_at_ns < a->status_ttl_ns) {
		err = status_copy_locked(a, json);
		goto out;
	}
	if (a->status_running) {
		gen = a->status_gen;
		while (a->status_running && a->status_gen == gen)
			pthread_cond_wait(&a->status_cond, &a->status_lock);
		err = status_copy_locked(a, json);
		goto out;
	}
	a->status_running = true;
	pthread_mutex_unlock(&a->status_lock);
	err = a->ops->status(a->ops_ctx, &doc);
	if (!err && !doc)
		err = -ENOMEM;
	pthread_mutex_lock(&a->status_lock);
	free(a->status_json);
	a->status_json = err ? NULL : doc;
	a->status_err = err;
	a->status_gen++;
	a->status_at_ns = clock_mono_ns();
	a->status_running = false;
	pthread_cond_broadcast(&a->status_cond);
	err = status_copy_locked(a, json);
out:
	pthread_mutex_unlock(&a->status_lock);
	return err;
}

/* GET /v1/status?target=T: the check of one target, not shared (a Service's is quick). */
static enum MHD_Result h_status_target(struct api *a, struct MHD_Connection *c, const char *t)
{
	char err[ERR_SIZE] = "", *json = NULL;
	struct capture_target target;
	int ret;

	if (api_parse_target(t, &target, err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	if (!a->ops->status_target)
		return api_respond_error(a, c, 501, "status is not available");
	ret = a->ops->status_target(a->ops_ctx, &target, &json, err, sizeof(err));
	if (ret)
		return api_respond_error(a, c, api_errno_code(ret), "%s",
					 err[0] ? err : strerror(-ret));
	return api_respond_text(c, 200, json, strlen(json), "application/json");
}

static enum MHD_Result h_status(struct api *a, struct MHD_Connection *c)
{
	const char *t = api_arg(c, "target");
	char *json = NULL;
	int err;

	if (t && strcmp(t, "server"))
		return h_status_target(a, c, t);
	if (!a->ops->status)
		return api_respond_error(a, c, 501, "status is not available");
	err = status_get(a, &json);
	if (err || !json) {
		free(json);
		return api_respond_error(a, c, 500, "check failed: %s",
					 strerror(err ? -err : ENOMEM));
	}
	return api_respond_text(c, 200, json, strlen(json), "application/json");
}

static enum MHD_Result h_plan(struct api *a, struct MHD_Connection *c)
{
	struct capture_step steps[CAPTURE_MAX_STEPS];
	struct api_capture_req req;
	char err[ERR_SIZE] = "", tbuf[TARGET_NAME_MAX + 16];
	json_t *doc, *arr;
	int n, i;

	if (api_parse_plan_query(api_arg(c, "target"), api_arg(c, "question"),
				 api_arg(c, "duration"), &req, err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	if (!a->ops->plan)
		return api_respond_error(a, c, 501, "plan is not available");
	n = a->ops->plan(a->ops_ctx, &req, steps, CAPTURE_MAX_STEPS, err, sizeof(err));
	if (n < 0)
		return api_respond_error(a, c, api_errno_code(n), "%s",
					 err[0] ? err : strerror(-n));
	arr = json_array();
	for (i = 0; arr && i < n && i < CAPTURE_MAX_STEPS; i++) {
		steps[i].text[sizeof(steps[i].text) - 1] = '\0';
		json_array_append_new(arr, json_pack("{s:i, s:s?}", "step", i + 1, "text",
						     steps[i].text));
	}
	doc = json_pack("{s:s, s:s, s:i, s:o*}", "target",
			api_format_target(&req.target, tbuf, sizeof(tbuf)), "question",
			question_info(req.question)->id, "duration_seconds", (int)req.duration_s,
			"steps", arr);
	return api_respond_json(c, 200, doc);
}

static enum MHD_Result h_capture(struct api *a, struct MHD_Connection *c, struct req *r)
{
	struct api_capture_req req;
	char err[ERR_SIZE] = "", id[STORE_ID_SIZE] = "", tbuf[TARGET_NAME_MAX + 16];
	char detail[ERR_SIZE + AUDIT_RAW_MAX + 64];
	unsigned int code;
	json_t *doc;
	int ret;

	if (api_parse_capture_body(r->body, r->len, &req, err, sizeof(err))) {
		char raw[AUDIT_RAW_MAX + 1];

		snprintf(detail, sizeof(detail), "%s; request=%s", err,
			 audit_raw_request(r->body, r->len, raw, sizeof(raw)));
		api_audit(a, AUDIT_CAPTURE, r->who, "-", "invalid", detail);
		return api_respond_error(a, c, 400, "%s", err);
	}
	api_format_target(&req.target, tbuf, sizeof(tbuf));
	if (!a->ops->start_capture)
		return api_respond_error(a, c, 501, "captures are not available");
	ret = a->ops->start_capture(a->ops_ctx, &req, r->who, id, err, sizeof(err));
	id[STORE_ID_SIZE - 1] = '\0';
	if (ret == -EBUSY)
		snprintf(err, sizeof(err), "%s", CAPTURE_BUSY_MSG);
	snprintf(detail, sizeof(detail), "question=%s duration=%u%s%s",
		 question_info(req.question)->id, req.duration_s, ret ? ": " : "",
		 ret ? (err[0] ? err : strerror(-ret)) : "");
	if (ret) {
		code = api_errno_code(ret);
		api_audit(a, AUDIT_CAPTURE, r->who, tbuf, code == 500 ? "failed" : "refused",
			  detail);
		return api_respond_error(a, c, code, "%s", err[0] ? err : strerror(-ret));
	}
	api_audit(a, AUDIT_CAPTURE, r->who, tbuf, "accepted", detail);
	doc = json_pack("{s:s, s:s, s:s, s:s, s:i}", "id", id, "state", "running", "target", tbuf,
			"question", question_info(req.question)->id, "duration_seconds",
			(int)req.duration_s);
	return api_respond_json_hdr(c, 202, doc, MHD_HTTP_HEADER_LOCATION, "/v1/captures/current");
}

static enum MHD_Result h_progress(struct api *a, struct MHD_Connection *c)
{
	struct api_progress p;
	int err;

	if (!a->ops->progress)
		return api_respond_error(a, c, 501, "progress is not available");
	memset(&p, 0, sizeof(p));
	err = a->ops->progress(a->ops_ctx, &p);
	if (err == -ENOENT) /* not an error: the page asks this whenever it opens */
		return api_respond_json(c, 200, json_pack("{s:s}", "state", "none"));
	if (err)
		return api_respond_error(a, c, 500, "progress: %s", strerror(-err));
	p.id[sizeof(p.id) - 1] = p.state[sizeof(p.state) - 1] = '\0';
	p.target[sizeof(p.target) - 1] = p.question[sizeof(p.question) - 1] = '\0';
	p.text[sizeof(p.text) - 1] = p.message[sizeof(p.message) - 1] = '\0';
	p.profile_id[sizeof(p.profile_id) - 1] = '\0';
	return api_respond_json(
		c, 200,
		json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:s?, s:f, s:s?, s:s?}", "id", p.id,
			  "state", p.state, "target", p.target, "question", p.question,
			  "duration_seconds", (int)p.duration_s, "step", p.step, "steps", p.nsteps,
			  "text", p.text, "elapsed_seconds", p.elapsed_s, "message",
			  p.message[0] ? p.message : NULL, "profile_id",
			  p.profile_id[0] ? p.profile_id : NULL));
}

static json_t *meta_to_json(const struct store_meta *m)
{
	char *text = store_meta_json(m);
	json_t *doc;

	if (!text)
		return NULL;
	doc = json_loads(text, 0, NULL);
	free(text);
	return doc;
}

static enum MHD_Result h_profiles(struct api *a, struct MHD_Connection *c)
{
	char err[ERR_SIZE], service[STORE_NAME_MAX];
	unsigned long offset, limit;
	struct store_meta *v;
	size_t n, i, total;
	const char *svc = api_arg(c, "service"), *q = api_arg(c, "question");
	char qbuf[104];
	json_t *arr;

	if (svc && api_parse_service(svc, service, sizeof(service), err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	if (api_parse_uint(api_arg(c, "offset"), "offset", 1000000, 0, &offset, err, sizeof(err)) ||
	    api_parse_uint(api_arg(c, "limit"), "limit", API_LIST_MAX, API_LIST_DEFAULT, &limit,
			   err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	if (q && question_parse(q) < 0)
		return api_respond_error(a, c, 400, "unknown question '%s'", api_show_url(q, qbuf));
	v = calloc(limit ? limit : 1, sizeof(*v));
	if (!v)
		return api_respond_error(a, c, 500, "out of memory");
	n = store__list_q(a->store, svc ? service : NULL, q, offset, v, limit, &total);
	arr = json_array();
	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr, meta_to_json(&v[i]));
	free(v);
	return api_respond_json(c, 200,
				json_pack("{s:o*, s:I, s:I, s:I}", "profiles", arr, "total",
					  (json_int_t)total, "offset", (json_int_t)offset, "limit",
					  (json_int_t)limit));
}

/* The continuous windows of the hour before @m (GET /v1/compare?base=continuous can compare
 * it with them): a cpu capture's; 0 for another question or a window itself. */
static size_t windows_before(struct api *a, const struct store_meta *m)
{
	int64_t before = (int64_t)VIEW_CONTINUOUS_BEFORE_S * 1000000000LL;
	size_t n = 0;

	if (m->continuous || strcmp(m->question, "cpu"))
		return 0;
	if (store__list_continuous(a->store, m->start_ns - before, m->start_ns, false, NULL, 0,
				   &n) < 0)
		return 0;
	return n;
}

static enum MHD_Result h_profile(struct api *a, struct MHD_Connection *c, struct req *r)
{
	struct store_meta m;
	json_t *summary = NULL;
	char *text = NULL;
	uint64_t size;
	size_t len;
	int fd, err;

	if (store__get(a->store, r->m.id, &m))
		return api_respond_error(a, c, 404, "no profile %s", r->m.id);
	err = store__open_file(a->store, r->m.id, STORE_FILE_SUMMARY, &fd, &size);
	if (!err) {
		err = read_fd_bounded(fd, SUMMARY_MAX_BYTES, &text, &len);
		close(fd);
	}
	if (!err) {
		/* names from debug symbols uploaded since (docs/symbols.md) */
		view_named_summary(a->store, r->m.id, &text, &len, m.answer, sizeof(m.answer));
		summary = json_loadb(text, len, 0, NULL);
		free(text);
	}
	if (!summary)
		pr_warn("api: profile %s: summary.json unreadable", r->m.id);
	return api_respond_json(c, 200,
				json_pack("{s:o*, s:o, s:I}", "profile", meta_to_json(&m),
					  "summary", summary ? summary : json_null(),
					  "continuous_before", (json_int_t)windows_before(a, &m)));
}

/* The type and file name of a download. */
static void download_headers(struct MHD_Response *resp, const char *id, enum api_format fmt)
{
	char disp[API_SEG_SIZE + 64];

	snprintf(disp, sizeof(disp), "attachment; filename=\"%s.%s\"", id,
		 fmt == API_FORMAT_PPROF ? "pb.gz" : "collapsed");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				fmt == API_FORMAT_PPROF ? "application/octet-stream" :
							  "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "Content-Disposition", disp);
}

/*
 * The download of a profile that debug symbols uploaded since name: encoded again at read time
 * (views.h). Returns 1 with @resp, 0 when the stored file is right as it is (or cannot be
 * named: served as stored), -1 out of memory.
 */
static int download_named(struct api *a, struct req *r, enum api_format fmt,
			  struct MHD_Response **resp)
{
	char err[ERR_SIZE], detail[48];
	size_t len = 0;
	char *out = NULL;
	int ret;

	ret = view_named_download(a->store, r->m.id,
				  fmt == API_FORMAT_PPROF ? VIEW_PPROF : VIEW_COLLAPSED, &out, &len,
				  err, sizeof(err));
	if (ret <= 0) {
		if (ret < 0 && ret != -ENOENT)
			pr_warn("api: profile %s served without uploaded names: %s", r->m.id, err);
		return 0;
	}
	*resp = MHD_create_response_from_buffer(len, out, MHD_RESPMEM_MUST_FREE);
	if (!*resp) {
		free(out);
		return -1;
	}
	download_headers(*resp, r->m.id, fmt);
	snprintf(detail, sizeof(detail), "format=%s named=uploads",
		 fmt == API_FORMAT_PPROF ? "pprof" : "collapsed");
	api_audit(a, AUDIT_DOWNLOAD, r->who, r->m.id, "ok", detail);
	return 1;
}

static enum MHD_Result h_download(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE], detail[32];
	struct MHD_Response *resp;
	enum api_format fmt;
	uint64_t size;
	int fd, ret;

	if (api_parse_format(api_arg(c, "format"), &fmt, err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	ret = download_named(a, r, fmt, &resp);
	if (ret)
		return ret > 0 ? api_queue(c, 200, resp) : MHD_NO;
	ret = store__open_file(a->store, r->m.id,
			       fmt == API_FORMAT_PPROF ? STORE_FILE_PPROF : STORE_FILE_COLLAPSED,
			       &fd, &size);
	if (ret == -ENOENT)
		return api_respond_error(a, c, 404, "no profile %s", r->m.id);
	snprintf(detail, sizeof(detail), "format=%s",
		 fmt == API_FORMAT_PPROF ? "pprof" : "collapsed");
	if (ret) {
		api_audit(a, AUDIT_DOWNLOAD, r->who, r->m.id, "failed", strerror(-ret));
		return api_respond_error(a, c, 500, "cannot read profile %s: %s", r->m.id,
					 strerror(-ret));
	}
	resp = MHD_create_response_from_fd((size_t)size, fd); /* owns fd from here */
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	download_headers(resp, r->m.id, fmt);
	api_audit(a, AUDIT_DOWNLOAD, r->who, r->m.id, "ok", detail);
	return api_queue(c, 200, resp);
}

static enum MHD_Result h_delete(struct api *a, struct MHD_Connection *c, struct req *r)
{
	int err = store__delete(a->store, r->m.id);

	if (err == -ENOENT) {
		api_audit(a, AUDIT_DELETE, r->who, r->m.id, "failed", "no such profile");
		return api_respond_error(a, c, 404, "no profile %s", r->m.id);
	}
	if (err) {
		api_audit(a, AUDIT_DELETE, r->who, r->m.id, "failed", strerror(-err));
		return api_respond_error(a, c, 500, "cannot delete profile %s: %s", r->m.id,
					 strerror(-err));
	}
	api_audit(a, AUDIT_DELETE, r->who, r->m.id, "ok", NULL);
	return api_respond_json(c, 200, json_pack("{s:s}", "deleted", r->m.id));
}

static enum MHD_Result h_remove(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE] = "";
	int ret;

	ret = store__remove_all(a->store);
	if (ret) {
		api_audit(a, AUDIT_REMOVE, r->who, "profiler", "failed", strerror(-ret));
		return api_respond_error(a, c, 500, "cannot remove the profiles: %s",
					 strerror(-ret));
	}
	if (a->ops->remove) {
		ret = a->ops->remove(a->ops_ctx, err, sizeof(err));
		if (ret) {
			api_audit(a, AUDIT_REMOVE, r->who, "profiler", "failed",
				  err[0] ? err : strerror(-ret));
			return api_respond_error(a, c, 500, "cannot remove the profiler: %s",
						 err[0] ? err : strerror(-ret));
		}
	}
	api_audit(a, AUDIT_REMOVE, r->who, "profiler", "ok", NULL);
	return api_respond_json(c, 200, json_pack("{s:b}", "removed", 1));
}

static enum MHD_Result h_metrics(struct api *a, struct MHD_Connection *c)
{
	struct api_metrics z = { 0 }, *m = a->metrics ? a->metrics : &z;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

#define LOAD(x) (unsigned long long)__atomic_load_n(&(x), __ATOMIC_RELAXED)
	f = open_memstream(&text, &len);
	if (!f)
		return api_respond_error(a, c, 500, "out of memory");
	fprintf(f,
		"# HELP slideops_profiler_captures_total Captures by result.\n"
		"# TYPE slideops_profiler_captures_total counter\n"
		"slideops_profiler_captures_total{result=\"done\"} %llu\n"
		"slideops_profiler_captures_total{result=\"failed\"} %llu\n"
		"slideops_profiler_captures_total{result=\"refused\"} %llu\n",
		LOAD(m->captures_done), LOAD(m->captures_failed), LOAD(m->captures_refused));
	fprintf(f,
		"# HELP slideops_profiler_samples_lost_total Samples lost to full maps.\n"
		"# TYPE slideops_profiler_samples_lost_total counter\n"
		"slideops_profiler_samples_lost_total %llu\n",
		LOAD(m->samples_lost));
	fprintf(f,
		"# HELP slideops_profiler_profiles_stored Profiles in the local store.\n"
		"# TYPE slideops_profiler_profiles_stored gauge\n"
		"slideops_profiler_profiles_stored %zu\n",
		store__count(a->store));
	fprintf(f,
		"# HELP slideops_profiler_spool_depth Profiles waiting to be sent.\n"
		"# TYPE slideops_profiler_spool_depth gauge\n"
		"slideops_profiler_spool_depth %llu\n",
		LOAD(m->spool_depth));
	fprintf(f,
		"# HELP slideops_profiler_continuous_windows_total Continuous profiling windows by "
		"result.\n# TYPE slideops_profiler_continuous_windows_total counter\n"
		"slideops_profiler_continuous_windows_total{result=\"stored\"} %llu\n"
		"slideops_profiler_continuous_windows_total{result=\"failed\"} %llu\n",
		LOAD(m->continuous_stored), LOAD(m->continuous_failed));
	fprintf(f,
		"# HELP slideops_profiler_continuous_processes Process snapshots continuous "
		"profiling holds.\n# TYPE slideops_profiler_continuous_processes gauge\n"
		"slideops_profiler_continuous_processes %llu\n"
		"# HELP slideops_profiler_continuous_unwind_table_bytes Kernel memory of its unwind "
		"tables.\n# TYPE slideops_profiler_continuous_unwind_table_bytes gauge\n"
		"slideops_profiler_continuous_unwind_table_bytes %llu\n",
		LOAD(m->continuous_processes), LOAD(m->continuous_unwind_bytes));
	fprintf(f, "# HELP slideops_profiler_api_errors_total API responses with an error, by "
		   "status code.\n# TYPE slideops_profiler_api_errors_total counter\n");
	for (i = 0; i < ARRAY_SIZE(error_codes); i++)
		fprintf(f, "slideops_profiler_api_errors_total{code=\"%u\"} %llu\n", error_codes[i],
			LOAD(a->errors[i]));
	fprintf(f, "slideops_profiler_api_errors_total{code=\"other\"} %llu\n",
		LOAD(a->errors[ARRAY_SIZE(error_codes)]));
	fprintf(f,
		"# HELP slideops_profiler_audit_errors_total Audit lines that could not be "
		"written.\n# TYPE slideops_profiler_audit_errors_total counter\n"
		"slideops_profiler_audit_errors_total %llu\n",
		LOAD(a->audit_errors));
#undef LOAD
	if (fclose(f) != 0) {
		free(text);
		return api_respond_error(a, c, 500, "out of memory");
	}
	return api_respond_text(c, 200, text, len, "text/plain; version=0.0.4; charset=utf-8");
}

static enum MHD_Result dispatch(struct api *a, struct MHD_Connection *c, struct req *r)
{
	switch (r->m.route) {
	case API_STATUS:
		return h_status(a, c);
	case API_PLAN:
		return h_plan(a, c);
	case API_CAPTURE_START:
		return h_capture(a, c, r);
	case API_CAPTURE_CURRENT:
		return h_progress(a, c);
	case API_PROFILES:
		return h_profiles(a, c);
	case API_PROFILE:
		return h_profile(a, c, r);
	case API_PROFILE_DOWNLOAD:
		return h_download(a, c, r);
	case API_PROFILE_DELETE:
		return h_delete(a, c, r);
	case API_REMOVE:
		return h_remove(a, c, r);
	case API_METRICS:
		return h_metrics(a, c);
	case API_SESSION:
		return api_session(a, c, r);
	case API_SESSION_START:
		return api_session_start(a, c, r);
	case API_SESSION_END:
		return api_session_end(a, c, r);
	case API_PROCESSES:
		return api_processes(a, c);
	case API_PROFILE_FLAMEGRAPH:
		return api_flamegraph(a, c, r);
	case API_COMPARE:
		return api_compare(a, c);
	case API_CONTINUOUS:
		return api_continuous(a, c, r);
	case API_SYMBOLS_UPLOAD:
		return api_symbols_upload(a, c, r);
	case API_SYMBOLS_LIST:
		return api_symbols_list(a, c);
	case API_SYMBOLS_DELETE:
		return api_symbols_delete(a, c, r);
	default:
		break;
	}
	return api_respond_error(a, c, 501, "not implemented");
}

static enum MHD_Result respond_denied(struct api *a, struct MHD_Connection *c, const struct req *r)
{
	return api_respond_error(a, c, 403,
				 "the %s role of '%s' may not do this: it needs %s or above",
				 token_role_name(r->role), r->who, token_role_name(r->m.need));
}

/*
 * A role that may not do this: audited and answered 403 now, or (returns false) for a
 * capture once its body is read, so that the audit trail says what was asked
 * (capture_denied()). Returns true when it answered.
 */
static bool deny(struct api *a, struct MHD_Connection *c, struct req *r, enum token_role role,
		 enum MHD_Result *ret)
{
	int what = route_audit(r->m.route);
	const char *target;

	r->role = role;
	if (r->m.route == API_CAPTURE_START) {
		r->denied = true;
		return false;
	}
	target = r->m.id[0] ? r->m.id : r->m.route == API_REMOVE ? "profiler" : "-";
	if (what >= 0)
		api_audit(a, what, r->who, target, "denied", token_role_name(role));
	*ret = respond_denied(a, c, r);
	return true;
}

/* A denied capture, its body read: the target asked for (or "-") and the raw request. */
static enum MHD_Result capture_denied(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE], tbuf[TARGET_NAME_MAX + 16] = "-", raw[AUDIT_RAW_MAX + 1];
	char detail[AUDIT_RAW_MAX + 64];
	struct api_capture_req req;

	if (!api_parse_capture_body(r->body, r->len, &req, err, sizeof(err)))
		api_format_target(&req.target, tbuf, sizeof(tbuf));
	snprintf(detail, sizeof(detail), "%s: request=%s", token_role_name(r->role),
		 audit_raw_request(r->body, r->len, raw, sizeof(raw)));
	api_audit(a, AUDIT_CAPTURE, r->who, tbuf, "denied", detail);
	return respond_denied(a, c, r);
}

/* The first call for a request: route, token, role, declared size. Returns true when it
 * answered. */
static bool first_call(struct api *a, struct MHD_Connection *c, const char *url, const char *method,
		       struct req *r, enum MHD_Result *ret)
{
	char allow[64], ubuf[104], mbuf[104];
	enum token_role role;
	const char *hdr;
	unsigned long long clen;
	char *end;
	int err;

	err = api_parse_route(method, url, &r->m, allow, sizeof(allow));
	if (err == -EOPNOTSUPP) {
		*ret = api_respond_error_hdr(a, c, 405, MHD_HTTP_HEADER_ALLOW, allow,
					     "%s is not allowed on %s (allowed: %s)",
					     api_show_url(method, mbuf), api_show_url(url, ubuf),
					     allow);
		return true;
	}
	if (err) {
		*ret = api_respond_error(a, c, 404, "no such route: %s (see docs/api.md)",
					 api_show_url(url, ubuf));
		return true;
	}
	if (r->m.route == API_PAGE) {
		*ret = api_page(a, c, url);
		return true;
	}
	if (api_cross_site(a, c, ret))
		return true;
	if (r->m.need != TOKEN_ROLE_NONE) {
		role = api_authenticate(a, c, r, ret);
		if (role == TOKEN_ROLE_NONE)
			return true;
		if (r->via_session && strcmp(method, "GET") && api_csrf_refused(a, c, r, ret))
			return true;
		if (!token_role_allows(role, r->m.need) && deny(a, c, r, role, ret))
			return true;
	}
	/* before the size check: an upload streams, with its own, larger bound */
	if (r->m.route == API_SYMBOLS_UPLOAD)
		return api_symbols_begin(a, c, r, ret);
	hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (hdr) {
		errno = 0;
		clen = strtoull(hdr, &end, 10);
		if ((errno || end == hdr || *end || clen > API_JSON_BODY_MAX) && r->denied) {
			*ret = capture_denied(a, c, r); /* denied first: audited, 403 */
			return true;
		}
		if (errno || end == hdr || *end || clen > API_JSON_BODY_MAX) {
			*ret = api_respond_error(a, c, 413,
						 "the body is too large: the maximum is %d "
						 "bytes",
						 API_JSON_BODY_MAX);
			return true;
		}
	}
	return false;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct api *a = cls;
	struct req *r = *con_cls;
	enum MHD_Result ret;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		if (first_call(a, c, url, method, r, &ret)) {
			r->answered = true;
			return ret;
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (r->answered)
			return MHD_YES;
		if (r->upload)
			return api_symbols_feed(r, upload_data, n);
		if (r->too_big || r->len + n > API_JSON_BODY_MAX) {
			r->too_big = true;
			r->discarded += n;
			return r->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (!r->body) {
			r->body = malloc(API_JSON_BODY_MAX);
			if (!r->body)
				return MHD_NO;
		}
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		return MHD_YES;
	}
	if (r->answered)
		return MHD_YES;
	r->answered = true;
	if (r->denied)
		return capture_denied(a, c, r);
	if (r->too_big)
		return api_respond_error(a, c, 413,
					 "the body is too large: the maximum is %d bytes",
					 API_JSON_BODY_MAX);
	return dispatch(a, c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)c;
	(void)toe;
	if (r) {
		api_symbols_end(cls, r);
		free(r->body);
		free(r);
		*con_cls = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	pr_debug("api: microhttpd: %s", buf);
}

/* "host:port", ":port", "[v6]:port" into @ss. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, bool *any,
			unsigned short *port)
{
	char host[128], *colon;
	unsigned long p;
	char *end;

	if (!listen || snprintf(host, sizeof(host), "%s", listen) >= (int)sizeof(host))
		return -EINVAL;
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p > 65535)
		return -EINVAL;
	*port = (unsigned short)p;
	memset(ss, 0, sizeof(*ss));
	*any = !host[0];
	if (*any)
		return 0;
	if (host[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(*port);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -EINVAL;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
		struct addrinfo *res;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(*port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) == 1)
			return 0;
		/* a host name (docs/config.md): its first address */
		if (getaddrinfo(host, NULL, &hints, &res) != 0)
			return -EINVAL;
		if (res->ai_addrlen > sizeof(*ss)) {
			freeaddrinfo(res);
			return -EINVAL;
		}
		memcpy(ss, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		if (ss->ss_family == AF_INET)
			((struct sockaddr_in *)ss)->sin_port = htons(*port);
		else if (ss->ss_family == AF_INET6)
			((struct sockaddr_in6 *)ss)->sin6_port = htons(*port);
		else
			return -EINVAL;
		return 0;
	}
}

int api__new(const struct api_opts *opts, struct api **out)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG;
	unsigned short port;
	struct api *a;
	bool any;
	int err;

	if (!opts || !opts->store || !opts->tokens || !opts->audit || !opts->ops)
		return -EINVAL;
	err = parse_listen(opts->listen, &ss, &any, &port);
	if (err)
		return pr_err_errno(err,
				    "api: bad listen address '%s' (host:port, :port or "
				    "[v6]:port)",
				    opts->listen ? opts->listen : "");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->store = opts->store;
	a->tokens = opts->tokens;
	a->audit = opts->audit;
	a->ops = opts->ops;
	a->ops_ctx = opts->ops_ctx;
	a->metrics = opts->metrics;
	a->symbols = opts->symbols;
	if (sessions__new(0, 0, &a->sessions)) {
		free(a);
		return -ENOMEM;
	}
	pthread_mutex_init(&a->status_lock, NULL);
	pthread_cond_init(&a->status_cond, NULL);
	a->status_ttl_ns = (uint64_t)(opts->status_ttl_ms ?: API_DEFAULT_STATUS_TTL_MS) * 1000000;
	if (any)
		flags |= MHD_USE_DUAL_STACK;
	else if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	a->d = MHD_start_daemon(flags, port, NULL, NULL, handle, a, MHD_OPTION_NOTIFY_COMPLETED,
				completed, a, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)(opts->max_connections ?:
								       API_DEFAULT_MAX_CONNECTIONS),
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)(opts->timeout_s ?: API_DEFAULT_TIMEOUT_S),
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				any ? MHD_OPTION_END : MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_END);
	if (!a->d) {
		err = errno ? -errno : -EADDRINUSE;
		api__free(a);
		return pr_err_errno(err, "api: cannot listen on %s", opts->listen);
	}
	info = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
	a->port = info ? info->port : port;
	pr_info("api: listening on %s (port %u)", opts->listen, a->port);
	*out = a;
	return 0;
}

unsigned short api__port(const struct api *a)
{
	return a->port;
}

void api__free(struct api *a)
{
	if (!a)
		return;
	if (a->d)
		MHD_stop_daemon(a->d);
	pthread_cond_destroy(&a->status_cond);
	pthread_mutex_destroy(&a->status_lock);
	free(a->status_json);
	sessions__free(a->sessions);
	free(a);
}
