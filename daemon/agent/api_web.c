// SPDX-License-Identifier: Apache-2.0
/*
 * api_web: the routes of the agent's page (docs/api.md "Sessions", docs/page.md): its files,
 * sign-in and sign-out, who is signed in, the cross-site checks, and the views drawn from
 * stored profiles (flame graph, compare) and the busiest processes.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "daemon/agent/api_int.h"
#include "daemon/agent/page.h"
#include "daemon/agent/store.h"
#include "daemon/agent/views.h"
#include "daemon/agent/web_parse.h"

enum auth_miss {
	AUTH_BAD_TOKEN,	    /* an Authorization header with an unknown token */
	AUTH_NONE,	    /* neither a token nor the page's cookie */
	AUTH_SESSION_ENDED, /* a cookie of a session that ended or expired */
};

/*
 * The role of the request's bearer token or, without an Authorization header, of the page's
 * session cookie; TOKEN_ROLE_NONE with the reason in @why when neither is good.
 */
static enum token_role auth_of(struct api *a, struct MHD_Connection *c, struct req *r,
			       enum auth_miss *why)
{
	const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_AUTHORIZATION);
	const char *cookie = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_COOKIE);
	enum token_role role = TOKEN_ROLE_NONE;
	const char *token, *v;
	size_t tlen, vlen;

	if (hdr) {
		if (!api_parse_bearer(hdr, &token, &tlen))
			role = tokens__lookup(a->tokens, token, tlen, r->who, sizeof(r->who));
		*why = AUTH_BAD_TOKEN;
		return role;
	}
	*why = AUTH_NONE;
	if (web_parse_cookie(cookie, SESSION_COOKIE, &v, &vlen))
		return TOKEN_ROLE_NONE;
	*why = AUTH_SESSION_ENDED;
	if (sessions__lookup(a->sessions, v, vlen, &r->session))
		return TOKEN_ROLE_NONE;
	r->via_session = true;
	snprintf(r->who, sizeof(r->who), "%s", r->session.name);
	return r->session.role;
}

/* auth_of() that answers 401 when it finds no role. */
enum token_role api_authenticate(struct api *a, struct MHD_Connection *c, struct req *r,
				 enum MHD_Result *ret)
{
	static const char *const msg[] = {
		[AUTH_BAD_TOKEN] = "unknown token",
		[AUTH_NONE] = "not signed in: a token is required: Authorization: Bearer <token>",
		[AUTH_SESSION_ENDED] = "not signed in: the session has ended or expired; sign in "
				       "again",
	};
	enum auth_miss why;
	enum token_role role = auth_of(a, c, r, &why);

	if (role == TOKEN_ROLE_NONE)
		*ret = api_respond_error_hdr(a, c, 401, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer",
					     "%s", msg[why]);
	return role;
}

/* --- the page: its files, sign-in, the views ----------------------------------------------- */

enum MHD_Result api_page(struct api *a, struct MHD_Connection *c, const char *url)
{
	const struct page_asset *pa = page_find(url);
	struct MHD_Response *resp;

	if (!pa)
		return api_respond_error(a, c, 404, "no such page");
	resp = MHD_create_response_from_buffer(pa->len, (void *)pa->data, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, pa->type);
	return api_queue(c, 200, resp);
}

static json_t *session_json(const struct session_info *si, bool with_csrf)
{
	char when[40];

	clock_rfc3339(when, sizeof(when), si->expires_ns, 0);
	return json_pack("{s:s, s:s, s:s*, s:s*}", "name", si->name, "role",
			 token_role_name(si->role), "csrf", with_csrf ? si->csrf : NULL, "expires",
			 with_csrf ? when : NULL);
}

/* POST /v1/session {"token": "..."}: the token becomes a session cookie. */
enum MHD_Result api_session_start(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE], token[TOKENS_MAX_LEN + 1], name[TOKENS_NAME_MAX + 1] = "";
	char id[SESSION_HEX_LEN + 1], cookie[SESSION_HEX_LEN + 128];
	struct session_info si;
	enum token_role role;
	size_t tlen;
	int ret;

	if (web_parse_session_body(r->body, r->len, token, sizeof(token), &tlen, err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	role = tokens__lookup(a->tokens, token, tlen, name, sizeof(name));
	explicit_bzero(token, sizeof(token));
	if (role == TOKEN_ROLE_NONE) {
		pr_info("api: a sign-in with an unknown token was refused");
		return api_respond_error(a, c, 401, "unknown token");
	}
	ret = sessions__create(a->sessions, name, role, id, &si);
	if (ret)
		return api_respond_error(a, c, 500, "cannot start a session: %s", strerror(-ret));
	snprintf(cookie, sizeof(cookie), "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict",
		 SESSION_COOKIE, id, SESSION_TTL_S);
	explicit_bzero(id, sizeof(id));
	pr_info("api: %s (%s) signed in on the page", si.name, token_role_name(si.role));
	ret = api_respond_json_hdr(c, 200, session_json(&si, true), MHD_HTTP_HEADER_SET_COOKIE,
				   cookie);
	explicit_bzero(cookie, sizeof(cookie));
	return ret;
}

/* GET /v1/session: who is signed in; nobody is an answer, not an error (the page asks first). */
enum MHD_Result api_session(struct api *a, struct MHD_Connection *c, struct req *r)
{
	struct session_info si = { 0 };
	enum auth_miss why;
	json_t *doc;

	si.role = auth_of(a, c, r, &why);
	if (si.role == TOKEN_ROLE_NONE)
		return api_respond_json(c, 200, json_pack("{s:b}", "signed_in", 0));
	if (r->via_session)
		si = r->session;
	else
		snprintf(si.name, sizeof(si.name), "%s", r->who); /* a bearer token: no session */
	doc = session_json(&si, r->via_session);
	if (doc)
		json_object_set_new(doc, "signed_in", json_true());
	return api_respond_json(c, 200, doc);
}

enum MHD_Result api_session_end(struct api *a, struct MHD_Connection *c, struct req *r)
{
	const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE);
	const char *v;
	size_t len;

	if (!r->via_session || web_parse_cookie(hdr, SESSION_COOKIE, &v, &len))
		return api_respond_error(a, c, 400,
					 "there is no session to end: this request did "
					 "not come with the page's cookie");
	sessions__remove(a->sessions, v, len);
	pr_info("api: %s signed out", r->who);
	return api_respond_json_hdr(c, 200, json_pack("{s:b}", "signed_out", 1),
				    MHD_HTTP_HEADER_SET_COOKIE,
				    SESSION_COOKIE
				    "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
}

enum MHD_Result api_processes(struct api *a, struct MHD_Connection *c)
{
	char *json = NULL;
	int err;

	if (!a->ops->processes)
		return api_respond_error(a, c, 501, "processes are not available");
	err = a->ops->processes(a->ops_ctx, &json);
	if (err)
		return api_respond_error(a, c, 500, "cannot list the processes: %s",
					 strerror(-err));
	return api_respond_text(c, 200, json, strlen(json), "application/json");
}

enum MHD_Result api_flamegraph(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE] = "", *html = NULL;
	size_t len = 0;
	int ret;

	ret = view_flamegraph(a->store, r->m.id, &html, &len, err, sizeof(err));
	if (ret)
		return api_respond_error(a, c, api_errno_code(ret), "%s",
					 err[0] ? err : strerror(-ret));
	return api_respond_text(c, 200, html, len, "text/html; charset=utf-8");
}

enum MHD_Result api_compare(struct api *a, struct MHD_Connection *c)
{
	const char *base = api_arg(c, "base"), *next = api_arg(c, "new"),
		   *fmt = api_arg(c, "format");
	char err[ERR_SIZE] = "", *out = NULL;
	bool collapsed, continuous = base && !strcmp(base, "continuous");
	size_t len = 0;
	int ret;

	if (!base || !next || (!continuous && !store_id_valid(base)) || !store_id_valid(next))
		return api_respond_error(a, c, 400,
					 "compare needs two profile ids: "
					 "/v1/compare?base=ID&new=ID, or base=continuous: the "
					 "continuous profile of the hour before profile ID");
	if (fmt && strcmp(fmt, "html") && strcmp(fmt, "collapsed"))
		return api_respond_error(a, c, 400, "format must be html or collapsed");
	collapsed = fmt && !strcmp(fmt, "collapsed");
	if (continuous)
		ret = view_compare_continuous(a->store, next, collapsed, &out, &len, err,
					      sizeof(err));
	else
		ret = view_compare(a->store, base, next, collapsed, &out, &len, err, sizeof(err));
	if (ret)
		return api_respond_error(a, c, api_errno_code(ret), "%s",
					 err[0] ? err : strerror(-ret));
	return api_respond_text(c, 200, out, len,
				collapsed ? "text/plain; charset=utf-8" :
					    "text/html; charset=utf-8");
}

/* "20261207T100000Z": RFC 3339 without its separators, for a file name. */
static const char *stamp(int64_t ns, char buf[CLOCK_RFC3339_MAX])
{
	char t[CLOCK_RFC3339_MAX];
	size_t i, n = 0;

	clock_rfc3339(t, sizeof(t), ns, 0);
	for (i = 0; t[i]; i++)
		if (t[i] != '-' && t[i] != ':')
			buf[n++] = t[i];
	buf[n] = '\0';
	return buf;
}

/* Content-Disposition of a continuous download: "continuous-NAME-FROM-UNTIL.EXT", the Service
 * name cut to 64 bytes of [A-Za-z0-9._-] (others become '_'), or "server". */
static void continuous_disposition(const struct api_continuous_req *q, char *buf, size_t size)
{
	char name[65], from[CLOCK_RFC3339_MAX], until[CLOCK_RFC3339_MAX];
	const char *svc = q->service[0] ? q->service : "server";
	size_t i;

	for (i = 0; svc[i] && i < sizeof(name) - 1; i++)
		name[i] = isalnum((unsigned char)svc[i]) || strchr("._-", svc[i]) ? svc[i] : '_';
	name[i] = '\0';
	snprintf(buf, size, "attachment; filename=\"continuous-%s-%s-%s.%s\"", name,
		 stamp(q->from_ns, from), stamp(q->until_ns, until),
		 q->format == API_FORMAT_PPROF ? "pb.gz" : "collapsed");
}

/* A continuous download in the audit trail, as GET /v1/profiles/ID/download is: done, or failed
 * (500); a bad request and nothing to download (400, 404) are not. */
static void continuous_audit(struct api *a, const struct req *r, const struct api_continuous_req *q,
			     int ret, const char *err)
{
	char target[STORE_NAME_MAX + 32], detail[ERR_SIZE + 128], from[CLOCK_RFC3339_MAX],
		until[CLOCK_RFC3339_MAX];
	unsigned int code = ret ? api_errno_code(ret) : 200;

	if (code != 200 && code < 500)
		return;
	snprintf(target, sizeof(target), "continuous:%s%s", q->service[0] ? "service:" : "server",
		 q->service);
	clock_rfc3339(from, sizeof(from), q->from_ns, 0);
	clock_rfc3339(until, sizeof(until), q->until_ns, 0);
	snprintf(detail, sizeof(detail), "format=%s from=%s until=%s%s%s",
		 q->format == API_FORMAT_PPROF ? "pprof" : "collapsed", from, until,
		 ret ? ": " : "", ret ? err : "");
	api_audit(a, AUDIT_DOWNLOAD, r->who, target, ret ? "failed" : "ok", detail);
}

static enum view_format view_format_of(enum api_format f)
{
	return f == API_FORMAT_PPROF	 ? VIEW_PPROF :
	       f == API_FORMAT_COLLAPSED ? VIEW_COLLAPSED :
					   VIEW_HTML;
}

/* GET /v1/continuous: the page (html), or a download (pprof, collapsed; audited). */
enum MHD_Result api_continuous(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char err[ERR_SIZE] = "", *out = NULL, disp[STORE_NAME_MAX + 128];
	struct api_continuous_req q;
	struct view_range vr;
	size_t len = 0;
	int ret;

	if (api_parse_continuous_query(api_arg(c, "service"), api_arg(c, "from"),
				       api_arg(c, "until"), api_arg(c, "format"), clock_real_ns(),
				       &q, err, sizeof(err)))
		return api_respond_error(a, c, 400, "%s", err);
	vr = (struct view_range){ .from_ns = q.from_ns,
				  .until_ns = q.until_ns,
				  .service = q.service };
	ret = view_continuous(a->store, &vr, view_format_of(q.format), &out, &len, err,
			      sizeof(err));
	if (!err[0] && ret)
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	if (q.format != API_FORMAT_HTML)
		continuous_audit(a, r, &q, ret, err);
	if (ret)
		return api_respond_error(a, c, api_errno_code(ret), "%s", err);
	if (q.format == API_FORMAT_HTML)
		return api_respond_text(c, 200, out, len, "text/html; charset=utf-8");
	continuous_disposition(&q, disp, sizeof(disp));
	return api_respond_text_hdr(c, 200, out, len,
				    q.format == API_FORMAT_PPROF ? "application/octet-stream" :
								   "text/plain; charset=utf-8",
				    "Content-Disposition", disp);
}

/*
 * A request that says it comes from a page of another origin (its Origin header) is refused
 * whatever it asks: with SameSite=Strict the browser would not send our cookie from another
 * site, but another port of this host is the same site. Returns true when it answered.
 */
bool api_cross_site(struct api *a, struct MHD_Connection *c, enum MHD_Result *ret)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	char buf[104];

	if (!origin || web_origin_is(origin, host))
		return false;
	*ret = api_respond_error(a, c, 403,
				 "cross-site request refused: Origin %s is not this agent",
				 api_show_url(origin, buf));
	return true;
}

/* A mutating request signed in with the cookie must carry the session's CSRF secret. */
bool api_csrf_refused(struct api *a, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, SESSION_CSRF_HEADER);

	if (h && strlen(h) == SESSION_HEX_LEN && session_equal(h, r->session.csrf, SESSION_HEX_LEN))
		return false;
	*ret = api_respond_error(a, c, 403,
				 "cross-site request refused: the %s header is missing or "
				 "wrong",
				 SESSION_CSRF_HEADER);
	return true;
}
