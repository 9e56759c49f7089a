// SPDX-License-Identifier: Apache-2.0
/*
 * The HTTP API end to end: the real libmicrohttpd server on 127.0.0.1 (an ephemeral port),
 * a real store and audit trail in a temporary directory, fake daemon ops, driven with libcurl.
 * The 401/403/200 matrix for no token, Viewer, operator and admin on every route; body limits
 * (413, also chunked); JSON errors; download content and headers; the audit lines of capture,
 * download, delete and remove, allowed and denied; /metrics.
 *
 * The fakes record what they were called with and the test thread checks it afterwards:
 * they run on the server's connection threads, where a cmocka assertion could not unwind.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "daemon/agent/api.h"
#include "daemon/agent/audit.h"
#include "daemon/capture/capture.h"
#include "base/fileio.h"
#include "daemon/agent/store.h"
#include "daemon/agent/tokens.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "symbols/symstore.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define VIEWER "viewer-token-0123456789"
#define OPERATOR "operator-token-0123456789"
#define ADMIN "admin-token-0123456789"
#define NOPE "unknown-token-0123456789"
#define PPROF_BYTES "\x1f\x8b\x08\x00pprof\x00bytes"
#define PPROF_LEN (sizeof(PPROF_BYTES) - 1)
#define COLLAPSED "main;build_report 144\nmain;idle 3\n"

struct fake {
	pthread_mutex_t lock;
	int start_ret; /* what start_capture returns */
	int plan_ret;
	int starts, removes;
	int statuses;	     /* status calls */
	int status_delay_ms; /* how long a status call takes */
	struct api_capture_req last;
	char last_who[64];
};

struct fx {
	char root[64], store_dir[96], files[96], audit_path[96];
	struct store *store;
	struct symstore *symbols;
	struct tokens *tokens;
	struct audit *audit;
	struct api *api;
	struct api_metrics metrics;
	struct fake fake;
	char ids[3][STORE_ID_SIZE]; /* billing (oldest), checkout, billing (newest) */
	unsigned short port;
};

/* fakes */

static int fake_status(void *ctx, char **json)
{
	struct fake *f = ctx;
	int delay;

	pthread_mutex_lock(&f->lock);
	f->statuses++;
	delay = f->status_delay_ms;
	pthread_mutex_unlock(&f->lock);
	if (delay)
		usleep((useconds_t)delay * 1000);
	*json = strdup("{\"ready\": true, \"message\": \"Ready to profile\"}");
	return *json ? 0 : -ENOMEM;
}

static int fake_plan(void *ctx, const struct api_capture_req *req, struct capture_step *steps,
		     int max, char *err, size_t size)
{
	struct fake *f = ctx;

	(void)max;
	if (f->plan_ret) {
		snprintf(err, size, "no Service named nope (services: billing, checkout)");
		return f->plan_ret;
	}
	snprintf(steps[0].text, sizeof(steps[0].text), "Sample about 99 times a second.");
	snprintf(steps[1].text, sizeof(steps[1].text), "Read the result back after %u s.",
		 req->duration_s);
	return 2;
}

static int fake_start(void *ctx, const struct api_capture_req *req, const char *who,
		      char id[STORE_ID_SIZE], char *err, size_t size)
{
	struct fake *f = ctx;
	int ret;

	pthread_mutex_lock(&f->lock);
	f->starts++;
	f->last = *req;
	snprintf(f->last_who, sizeof(f->last_who), "%s", who);
	ret = f->start_ret;
	pthread_mutex_unlock(&f->lock);
	if (ret == -EPERM)
		snprintf(err, size, "Cannot profile right now: BPF is not available");
	if (!ret)
		snprintf(id, STORE_ID_SIZE, "20261129T180000Z-c0ffee");
	return ret;
}

static int fake_progress(void *ctx, struct api_progress *p)
{
	(void)ctx;
	snprintf(p->id, sizeof(p->id), "20261129T180000Z-c0ffee");
	snprintf(p->state, sizeof(p->state), "running");
	snprintf(p->target, sizeof(p->target), "service:billing");
	snprintf(p->question, sizeof(p->question), "cpu");
	p->duration_s = 30;
	p->step = 2;
	p->nsteps = 4;
	snprintf(p->text, sizeof(p->text), "Sampling");
	p->elapsed_s = 12.5;
	return 0;
}

static int fake_remove(void *ctx, char *err, size_t size)
{
	struct fake *f = ctx;

	(void)err;
	(void)size;
	pthread_mutex_lock(&f->lock);
	f->removes++;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static const struct api_ops ops = {
	.status = fake_status,
	.plan = fake_plan,
	.start_capture = fake_start,
	.progress = fake_progress,
	.remove = fake_remove,
};

/* fixture */

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void add_profile(struct fx *f, const char *service, char *id)
{
	struct store_meta m = { 0 };

	snprintf(m.service, sizeof(m.service), "%s", service);
	snprintf(m.question, sizeof(m.question), "cpu");
	snprintf(m.target_kind, sizeof(m.target_kind), "service");
	snprintf(m.target, sizeof(m.target), "Service %s", service);
	snprintf(m.answer, sizeof(m.answer), "Over 30 seconds, Service %s used 54%%.", service);
	m.duration_s = 30;
	m.samples = 2970;
	assert_int_equal(store__add(f->store, &m, f->files, id), 0);
}

#define TOKENS_YAML                                              \
	"tokens:\n"                                              \
	"  - {name: alice, token: " VIEWER ", role: viewer}\n"   \
	"  - {name: bob, token: " OPERATOR ", role: operator}\n" \
	"  - {name: carol, token: " ADMIN ", role: admin}\n"

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR") ?: access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	struct store_opts so = { 0 };
	struct audit_opts ao = { 0 };
	struct api_opts o = { 0 };
	char err[256], symdir[128];

	snprintf(f->root, sizeof(f->root), "%s/test_api.XXXXXX", tmp);
	assert_non_null(mkdtemp(f->root));
	snprintf(f->store_dir, sizeof(f->store_dir), "%s/store", f->root);
	snprintf(f->files, sizeof(f->files), "%s/capture", f->root);
	snprintf(f->audit_path, sizeof(f->audit_path), "%s/audit.log", f->root);
	assert_int_equal(mkdir_p(f->files), 0);
	write_file(f->files, "profile.pb.gz", PPROF_BYTES, PPROF_LEN);
	write_file(f->files, "profile.collapsed", COLLAPSED, strlen(COLLAPSED));
	write_file(f->files, "summary.json", "{\"version\": 1, \"sample_count\": 2970}", 36);
	write_file(f->files, "flamegraph.html", "<html></html>", 13);

	so.dir = f->store_dir;
	snprintf(symdir, sizeof(symdir), "%s/symbols", f->store_dir);
	assert_int_equal(symstore__open(&(struct symstore_opts){ .dir = symdir }, &f->symbols), 0);
	so.symbols = f->symbols;
	assert_int_equal(store__new(&so, &f->store), 0);
	add_profile(f, "billing", f->ids[0]);
	add_profile(f, "checkout", f->ids[1]);
	add_profile(f, "billing", f->ids[2]);
	assert_int_equal(tokens__parse(TOKENS_YAML, strlen(TOKENS_YAML), "tokens.yaml", &f->tokens,
				       err, sizeof(err)),
			 0);
	ao.path = f->audit_path;
	assert_int_equal(audit__new(&ao, &f->audit), 0);
	pthread_mutex_init(&f->fake.lock, NULL);

	o.listen = "127.0.0.1:0";
	o.store = f->store;
	o.symbols = f->symbols;
	o.tokens = f->tokens;
	o.audit = f->audit;
	o.ops = &ops;
	o.ops_ctx = &f->fake;
	o.metrics = &f->metrics;
	assert_int_equal(api__new(&o, &f->api), 0);
	f->port = api__port(f->api);
	assert_true(f->port > 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	api__free(f->api);
	audit__free(f->audit);
	tokens__free(f->tokens);
	store__free(f->store);
	symstore__free(f->symbols);
	pthread_mutex_destroy(&f->fake.lock);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* HTTP client */

struct resp {
	long code;
	char *body;
	size_t len;
	char headers[2048];
	size_t hlen;
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	char *b = realloc(r->body, r->len + sz * n + 1);

	if (!b)
		return 0;
	memcpy(b + r->len, p, sz * n);
	r->body = b;
	r->len += sz * n;
	r->body[r->len] = '\0';
	return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t k = sz * n;

	if (r->hlen + k < sizeof(r->headers)) {
		memcpy(r->headers + r->hlen, p, k);
		r->hlen += k;
		r->headers[r->hlen] = '\0';
	}
	return k;
}

struct chunked {
	size_t left;
};

static size_t on_read(char *p, size_t sz, size_t n, void *arg)
{
	struct chunked *c = arg;
	size_t k = sz * n < c->left ? sz * n : c->left;

	memset(p, ' ', k);
	c->left -= k;
	return k;
}

/* Sends a request; @body may be NULL; @chunked > 0 streams that many bytes chunked; @extra: more
 * header lines, NULL-ended (may be NULL). */
static void http_hdr(struct fx *f, const char *method, const char *path, const char *token,
		     const char *body, size_t chunked, const char *const *extra, struct resp *r)
{
	struct curl_slist *h = NULL;
	struct chunked ck = { chunked };
	char url[512], auth[128];
	CURL *c = curl_easy_init();

	assert_non_null(c);
	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", f->port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		h = curl_slist_append(h, "Content-Type: application/json");
	} else if (chunked) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &ck);
		h = curl_slist_append(h, "Transfer-Encoding: chunked");
	}
	for (; extra && *extra; extra++)
		h = curl_slist_append(h, *extra);
	/* no "Expect: 100-continue" round trip */
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}

static void http(struct fx *f, const char *method, const char *path, const char *token,
		 const char *body, size_t chunked, struct resp *r)
{
	http_hdr(f, method, path, token, body, chunked, NULL, r);
}

static void resp_free(struct resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* Every error is {"error": "..."}: returns the message (valid until resp_free). */
static const char *error_of(struct resp *r, json_t **keep)
{
	json_t *doc = json_loads(r->body ? r->body : "", 0, NULL);
	const char *msg;

	assert_non_null(doc);
	msg = json_string_value(json_object_get(doc, "error"));
	assert_non_null(msg);
	*keep = doc;
	return msg;
}

static void expect_error(struct resp *r, long code, const char *msg_part)
{
	json_t *doc;

	assert_int_equal(r->code, code);
	assert_non_null(strstr(r->headers, "Content-Type: application/json"));
	if (!strstr(error_of(r, &doc), msg_part)) {
		print_message("error message: %s\n",
			      json_string_value(json_object_get(doc, "error")));
		fail();
	}
	json_decref(doc);
}

static char *read_audit(struct fx *f)
{
	char *text;
	size_t len;

	assert_int_equal(read_file_bounded(AT_FDCWD, f->audit_path, 1 << 20, &text, &len), 0);
	return text;
}

/* Number of audit lines holding every one of the (NULL-ended) fragments. */
static int audit_count(struct fx *f, ...)
{
	char *text = read_audit(f), *line, *save;
	const char *frag;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		va_list ap;
		bool all = true;

		va_start(ap, f);
		while ((frag = va_arg(ap, const char *)))
			all = all && strstr(line, frag);
		va_end(ap);
		n += all;
	}
	free(text);
	return n;
}

/* A row of the audit trail: @n lines hold every one of the (at most 5) fragments. */
struct audit_want {
	int n;
	const char *frag[6];
};

static void expect_audit(struct fx *f, const struct audit_want *rows, size_t nrows)
{
	const struct audit_want *w;
	size_t i;

	for (i = 0; i < nrows; i++) {
		w = &rows[i];
		print_message("audit row %zu\n", i);
		assert_int_equal(audit_count(f, w->frag[0], w->frag[1], w->frag[2], w->frag[3],
					     w->frag[4], w->frag[5], NULL),
				 w->n);
	}
}

/* One request that must fail: HTTP @code, an error message holding @msg_part. */
static void http_error(struct fx *f, const char *method, const char *path, const char *token,
		       const char *body, long code, const char *msg_part)
{
	struct resp r;

	http(f, method, path, token, body, 0, &r);
	expect_error(&r, code, msg_part);
	resp_free(&r);
}

/* tests */

static void test_matrix(void **state)
{
	static const struct audit_want trail[] = {
		{ 1, { "\"who\":\"alice\"", "\"what\":\"capture\"", "\"result\":\"denied\"" } },
		{ 1,
		  { "\"who\":\"alice\"", "\"what\":\"delete\"", "\"result\":\"denied\"",
		    "20201129T174501Z-000000" } },
		{ 1, { "\"who\":\"alice\"", "\"what\":\"upload\"", "\"result\":\"denied\"" } },
		{ 1,
		  { "\"who\":\"bob\"", "\"what\":\"remove\"", "\"result\":\"denied\"",
		    "\"detail\":\"operator\"" } },
		{ 1, { "\"who\":\"bob\"", "\"what\":\"capture\"", "\"result\":\"accepted\"" } },
		{ 3, { "\"what\":\"download\"", "\"result\":\"ok\"" } },
	};
	struct fx *f = *state;
	char p_get[128], p_dl[128], p_del[128];
	const char *none_id = "/v1/profiles/20201129T174501Z-000000";
	struct {
		const char *method, *path, *body;
		long none, viewer, oper, admin;
	} cases[] = {
		{ "GET", "/v1/status", NULL, 401, 200, 200, 200 },
		{ "GET", "/v1/plan?target=server&question=cpu", NULL, 401, 200, 200, 200 },
		{ "POST", "/v1/captures", "{\"target\":\"server\",\"question\":\"cpu\"}", 401, 403,
		  202, 202 },
		{ "GET", "/v1/captures/current", NULL, 401, 200, 200, 200 },
		{ "GET", "/v1/profiles", NULL, 401, 200, 200, 200 },
		{ "GET", "/v1/profiles?service=billing", NULL, 401, 200, 200, 200 },
		{ "GET", p_get, NULL, 401, 200, 200, 200 },
		{ "GET", p_dl, NULL, 401, 200, 200, 200 },
		{ "DELETE", p_del, NULL, 401, 403, 404, 404 },
		/* an empty body is no ELF file */
		{ "POST", "/v1/symbols", NULL, 401, 403, 422, 422 },
		{ "GET", "/v1/symbols", NULL, 401, 200, 200, 200 },
		{ "DELETE", "/v1/symbols/e7f804e707aede4a4891398866d99a0213915d57", NULL, 401, 403,
		  404, 404 },
		{ "POST", "/v1/remove", NULL, 401, 403, 403, -1 /* test_remove */ },
		{ "GET", "/metrics", NULL, 200, 200, 200, 200 },
		/* no continuous window in the store */
		{ "GET", "/v1/continuous", NULL, 401, 404, 404, 404 },
		{ "GET", "/v1/continuous?format=pprof", NULL, 401, 404, 404, 404 },
	};
	const char *tokens[] = { NULL, VIEWER, OPERATOR, ADMIN };
	struct resp r;
	size_t i, k;

	snprintf(p_get, sizeof(p_get), "/v1/profiles/%s", f->ids[1]);
	snprintf(p_dl, sizeof(p_dl), "/v1/profiles/%s/download?format=collapsed", f->ids[1]);
	snprintf(p_del, sizeof(p_del), "%s", none_id);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		long want[] = { cases[i].none, cases[i].viewer, cases[i].oper, cases[i].admin };

		for (k = 0; k < ARRAY_SIZE(tokens); k++) {
			if (want[k] < 0)
				continue;
			print_message("case %zu: %s %s as %s\n", i, cases[i].method, cases[i].path,
				      tokens[k] ? tokens[k] : "nobody");
			http(f, cases[i].method, cases[i].path, tokens[k], cases[i].body, 0, &r);
			assert_int_equal(r.code, want[k]);
			if (want[k] == 401) {
				expect_error(&r, 401, "a token is required");
				assert_non_null(strstr(r.headers, "WWW-Authenticate: Bearer"));
			} else if (want[k] == 403) {
				expect_error(&r, 403, "needs ");
			} else if (want[k] >= 400) {
				expect_error(&r, want[k], "");
			}
			resp_free(&r);
		}
		/* an unknown token is a 401 wherever a token is needed */
		http(f, cases[i].method, cases[i].path, NOPE, cases[i].body, 0, &r);
		if (cases[i].none == 401)
			expect_error(&r, 401, "unknown token");
		resp_free(&r);
	}
	/* every refused mutation is in the audit trail, with who and why */
	expect_audit(f, trail, ARRAY_SIZE(trail));
	/* no token ever reaches the trail */
	{
		char *text = read_audit(f);

		assert_null(strstr(text, "token-0123456789"));
		free(text);
	}
}

static void test_capture(void **state)
{
	struct fx *f = *state;
	json_t *doc;
	struct resp r;

	http(f, "POST", "/v1/captures", OPERATOR,
	     "{\"target\":\"service:billing\",\"question\":\"wall\",\"duration\":10}", 0, &r);
	assert_int_equal(r.code, 202);
	assert_non_null(strstr(r.headers, "Location: /v1/captures/current"));
	doc = json_loads(r.body, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "id")),
			    "20261129T180000Z-c0ffee");
	assert_string_equal(json_string_value(json_object_get(doc, "state")), "running");
	assert_string_equal(json_string_value(json_object_get(doc, "target")), "service:billing");
	json_decref(doc);
	resp_free(&r);
	assert_int_equal(f->fake.starts, 1);
	assert_int_equal(f->fake.last.target.kind, TARGET_SERVICE);
	assert_string_equal(f->fake.last.target.name, "billing");
	assert_int_equal(f->fake.last.question, Q_WALL);
	assert_int_equal(f->fake.last.duration_s, 10);
	assert_string_equal(f->fake.last_who, "bob");
	assert_int_equal(audit_count(f, "\"who\":\"bob\"", "\"what\":\"capture\"",
				     "\"target\":\"service:billing\"", "\"result\":\"accepted\"",
				     "question=wall duration=10", NULL),
			 1);

	/* busy: the seed's words, 409 */
	f->fake.start_ret = -EBUSY;
	http_error(f, "POST", "/v1/captures", ADMIN, "{\"target\":\"server\",\"question\":\"cpu\"}",
		   409, CAPTURE_BUSY_MSG);
	assert_int_equal(audit_count(f, "\"who\":\"carol\"", "\"result\":\"refused\"",
				     CAPTURE_BUSY_MSG, NULL),
			 1);
	f->fake.start_ret = -EPERM;
	http(f, "POST", "/v1/captures", OPERATOR, "{\"target\":\"server\",\"question\":\"cpu\"}", 0,
	     &r);
	expect_error(&r, 503, "Cannot profile right now");
	resp_free(&r);
	f->fake.start_ret = 0;

	/* bad bodies: 400 with the reason, the daemon is not called */
	http(f, "POST", "/v1/captures", OPERATOR, "{\"target\":\"server\",\"question\":\"cpu\",", 0,
	     &r);
	expect_error(&r, 400, "invalid JSON");
	resp_free(&r);
	http_error(f, "POST", "/v1/captures", OPERATOR,
		   "{\"target\":\"server\",\"question\":\"cpu\",\"duration\":45}", 400,
		   "duration must be 10, 30 or 60 seconds");
	http_error(f, "POST", "/v1/captures", OPERATOR, NULL, 400, "a JSON body is required");
	assert_int_equal(f->fake.starts, 3);
	assert_int_equal(audit_count(f, "\"what\":\"capture\"", "\"result\":\"invalid\"", NULL), 3);

	/* progress */
	http(f, "GET", "/v1/captures/current", VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	doc = json_loads(r.body, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(doc, "step")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "steps")), 4);
	assert_true(json_real_value(json_object_get(doc, "elapsed_seconds")) == 12.5);
	json_decref(doc);
	resp_free(&r);
}

static void test_plan(void **state)
{
	struct fx *f = *state;
	json_t *doc;
	struct resp r;

	http(f, "GET", "/v1/plan?target=service%3Abilling&question=cpu&duration=60", VIEWER, NULL,
	     0, &r);
	assert_int_equal(r.code, 200);
	doc = json_loads(r.body, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(doc, "duration_seconds")), 60);
	assert_int_equal(json_array_size(json_object_get(doc, "steps")), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(doc, "steps"), 1), "text")),
			    "Read the result back after 60 s.");
	json_decref(doc);
	resp_free(&r);
	http_error(f, "GET", "/v1/plan?target=server&question=memory-held", VIEWER, NULL, 400,
		   "a server profile offers");
	http_error(f, "GET", "/v1/plan?question=cpu", VIEWER, NULL, 400, "target is required");
	f->fake.plan_ret = -ENOENT;
	http_error(f, "GET", "/v1/plan?target=service:nope&question=cpu", VIEWER, NULL, 404,
		   "no Service named nope");
}

static void test_body_limits(void **state)
{
	struct fx *f = *state;
	size_t n = API_JSON_BODY_MAX + 1;
	char *big = malloc(n + 1);
	struct resp r;

	memset(big, ' ', n);
	big[n] = '\0';
	http_error(f, "POST", "/v1/captures", OPERATOR, big, 413, "too large");
	/* exactly the limit is read (and then refused as JSON) */
	big[n - 1] = '\0';
	memcpy(big, "{\"target\"", 9);
	http_error(f, "POST", "/v1/captures", OPERATOR, big, 400, "invalid JSON");
	/* chunked: no Content-Length to refuse up front */
	http(f, "POST", "/v1/captures", OPERATOR, NULL, API_JSON_BODY_MAX + 4096, &r);
	expect_error(&r, 413, "too large");
	resp_free(&r);
	/* a Viewer's oversized body is refused for the role, before it is read */
	http_error(f, "POST", "/v1/captures", VIEWER, big, 403, "needs operator");
	assert_int_equal(f->fake.starts, 0);
	free(big);
}

/* GET @path as the viewer: a list of @n profiles of @total; the list, in *@doc (the caller
 * frees it). */
static json_t *get_list(struct fx *f, const char *path, size_t n, long long total, json_t **doc)
{
	struct resp r;
	json_t *arr;

	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	*doc = json_loads(r.body, 0, NULL);
	resp_free(&r);
	arr = json_object_get(*doc, "profiles");
	assert_int_equal(json_array_size(arr), n);
	assert_int_equal(json_integer_value(json_object_get(*doc, "total")), total);
	return arr;
}

/* The string @key of the @i-th object of @arr. */
static const char *item_str(json_t *arr, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(arr, i), key));
}

static void test_profiles(void **state)
{
	struct fx *f = *state;
	char path[128];
	json_t *doc, *arr;
	struct resp r;

	arr = get_list(f, "/v1/profiles", 3, 3, &doc);
	/* newest first */
	assert_string_equal(item_str(arr, 0, "id"), f->ids[2]);
	assert_string_equal(item_str(arr, 2, "id"), f->ids[0]);
	assert_string_equal(item_str(arr, 1, "service"), "checkout");
	json_decref(doc);

	arr = get_list(f, "/v1/profiles?service=billing&limit=1&offset=1", 1, 2, &doc);
	assert_string_equal(item_str(arr, 0, "id"), f->ids[0]);
	json_decref(doc);

	http_error(f, "GET", "/v1/profiles?limit=100000", VIEWER, NULL, 400,
		   "limit must be a number from 0 to 500");
	http_error(f, "GET", "/v1/profiles?service=", VIEWER, NULL, 400, "service must be");

	snprintf(path, sizeof(path), "/v1/profiles/%s", f->ids[1]);
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	doc = json_loads(r.body, 0, NULL);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(doc, "profile"), "answer")),
			    "Over 30 seconds, Service checkout used 54%.");
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(doc, "summary"), "sample_count")),
			 2970);
	json_decref(doc);
	resp_free(&r);

	http_error(f, "GET", "/v1/profiles/20201129T174501Z-000000", VIEWER, NULL, 404,
		   "no profile 20201129T174501Z-000000");
	http_error(f, "GET", "/v1/profiles/..%2f..%2fetc", VIEWER, NULL, 404, "no such route");
}

static void test_download(void **state)
{
	struct fx *f = *state;
	char path[160], disp[160];
	struct resp r;

	snprintf(path, sizeof(path), "/v1/profiles/%s/download?format=pprof", f->ids[0]);
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_int_equal(r.len, PPROF_LEN);
	assert_memory_equal(r.body, PPROF_BYTES, PPROF_LEN);
	snprintf(disp, sizeof(disp), "Content-Disposition: attachment; filename=\"%s.pb.gz\"",
		 f->ids[0]);
	assert_non_null(strstr(r.headers, disp));
	assert_non_null(strstr(r.headers, "Content-Type: application/octet-stream"));
	resp_free(&r);

	snprintf(path, sizeof(path), "/v1/profiles/%s/download?format=collapsed", f->ids[0]);
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, COLLAPSED);
	snprintf(disp, sizeof(disp), "filename=\"%s.collapsed\"", f->ids[0]);
	assert_non_null(strstr(r.headers, disp));
	resp_free(&r);

	snprintf(path, sizeof(path), "/v1/profiles/%s/download", f->ids[0]); /* default pprof */
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.len, PPROF_LEN);
	resp_free(&r);

	snprintf(path, sizeof(path), "/v1/profiles/%s/download?format=svg", f->ids[0]);
	http_error(f, "GET", path, VIEWER, NULL, 400,
		   "format must be pprof or collapsed, not 'svg'");
	http_error(f, "GET", "/v1/profiles/20201129T174501Z-000000/download", VIEWER, NULL, 404,
		   "no profile");

	assert_int_equal(audit_count(f, "\"who\":\"alice\"", "\"what\":\"download\"", f->ids[0],
				     "\"result\":\"ok\"", "format=pprof", NULL),
			 2);
	assert_int_equal(audit_count(f, "\"what\":\"download\"", "format=collapsed", NULL), 1);
}

static void test_delete(void **state)
{
	struct fx *f = *state;
	const struct audit_want trail[] = {
		{ 1, { "\"who\":\"bob\"", "\"what\":\"delete\"", f->ids[0], "\"result\":\"ok\"" } },
		{ 1,
		  { "\"who\":\"alice\"", "\"what\":\"delete\"", f->ids[0],
		    "\"result\":\"denied\"" } },
		{ 1,
		  { "\"who\":\"bob\"", "\"what\":\"delete\"", f->ids[0],
		    "\"result\":\"failed\"" } },
	};
	char path[128];
	struct resp r;

	snprintf(path, sizeof(path), "/v1/profiles/%s", f->ids[0]);
	http_error(f, "DELETE", path, VIEWER, NULL, 403,
		   "the viewer role of 'alice' may not do this");
	http(f, "DELETE", path, OPERATOR, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	resp_free(&r);
	http_error(f, "GET", path, VIEWER, NULL, 404, "no profile");
	http_error(f, "DELETE", path, OPERATOR, NULL, 404, "no profile");
	assert_int_equal(store__count(f->store), 2);
	expect_audit(f, trail, ARRAY_SIZE(trail));
}

static void test_remove(void **state)
{
	struct fx *f = *state;
	struct resp r;
	char path[160];

	http(f, "POST", "/v1/remove", ADMIN, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	resp_free(&r);
	assert_int_equal(f->fake.removes, 1);
	assert_int_equal(store__count(f->store), 0);
	snprintf(path, sizeof(path), "%s/profiles", f->store_dir);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(audit_count(f, "\"who\":\"carol\"", "\"what\":\"remove\"",
				     "\"target\":\"profiler\"", "\"result\":\"ok\"", NULL),
			 1);
}

/* --- continuous profiling: GET /v1/continuous, /v1/compare?base=continuous --------------- */

#define NS(x) ((x)*1000000000LL)
#define T0 NS(1796637600LL) /* 2026-12-07T10:00:00Z */
#define RANGE "from=2026-12-07T09:00:00Z&until=2026-12-07T10:00:00Z"

/* Real capture files in ROOT/real: a pprof of @n samples of Service billing in main;work and
 * one of System. */
static const char *real_files(struct fx *f, int64_t n)
{
	static char dir[128];
	struct prof_labels lb = { .owner = "Service billing", .process = "billing", .pid = 9 };
	struct prof_labels ls = { .owner = "System", .process = "systemd", .pid = 1 };
	struct prof_frame_info main_fi = { .function = "main", .mapping = "/app" };
	struct prof_frame_info work_fi = { .function = "work", .mapping = "/app" };
	int64_t vb[2] = { n, n }, vs[2] = { 1, 1 };
	uint32_t frames[2];
	struct profile *p;
	char path[192];

	snprintf(dir, sizeof(dir), "%s/real", f->root);
	assert_int_equal(mkdir_p(dir), 0);
	assert_int_equal(profile__new(&(struct profile_opts){ 0 }, &p), 0);
	frames[1] = (uint32_t)profile__frame(p, &main_fi);
	frames[0] = (uint32_t)profile__frame(p, &work_fi);
	assert_int_equal(profile__add(p, frames, 2, &lb, vb), 0);
	assert_int_equal(profile__add(p, frames + 1, 1, &ls, vs), 0);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	assert_int_equal(pprof_write_file(p, path), 0);
	profile__free(p);
	write_file(dir, "profile.collapsed", COLLAPSED, strlen(COLLAPSED));
	write_file(dir, "summary.json", "{}", 2);
	return dir;
}

/* Stores a profile with real files: a continuous window of the server, or a listed one of
 * Service billing asking @question. */
static void add_real(struct fx *f, bool continuous, const char *question, int64_t start, int64_t n,
		     char *id)
{
	struct store_meta m = { 0 };

	snprintf(m.service, sizeof(m.service), continuous ? "server" : "billing");
	snprintf(m.question, sizeof(m.question), "%s", question);
	snprintf(m.target_kind, sizeof(m.target_kind), continuous ? "server" : "service");
	snprintf(m.target, sizeof(m.target), continuous ? "this server" : "Service billing");
	m.start_ns = start;
	m.duration_s = continuous ? 60 : 30;
	m.continuous = continuous;
	assert_int_equal(store__add(f->store, &m, real_files(f, n), id), 0);
}

static void test_continuous(void **state)
{
	struct fx *f = *state;
	char id[STORE_ID_SIZE];
	struct profile *p;
	json_t *doc;
	struct resp r;

	http_error(f, "GET", "/v1/continuous?" RANGE, VIEWER, NULL, 404,
		   "no continuous profile of this server between 2026-12-07T09:00:00Z and "
		   "2026-12-07T10:00:00Z: continuous profiling is off or has not run then");
	add_real(f, true, "cpu", T0 - NS(3600), 10, id);
	add_real(f, true, "cpu", T0 - NS(3540), 10, id);
	/* continuous windows are never listed */
	get_list(f, "/v1/profiles", 3, 3, &doc);
	json_decref(doc);

	http(f, "GET", "/v1/continuous?" RANGE, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.headers, "Content-Type: text/html"));
	assert_non_null(strstr(r.body, "this server, continuous, 2026-12-07T09:00:00Z"));
	resp_free(&r);

	http(f, "GET", "/v1/continuous?format=pprof&" RANGE, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.headers, "Content-Type: application/octet-stream"));
	assert_non_null(strstr(r.headers, "Content-Disposition: attachment; filename=\"continuous-"
					  "server-20261207T090000Z-20261207T100000Z.pb.gz\""));
	assert_int_equal(pprof_decode(r.body, r.len, &p), 0);
	assert_int_equal(profile__total(p, 0), 22);
	profile__free(p);
	resp_free(&r);

	/* unix seconds; a Service's samples only, without the owner and process frames */
	http(f, "GET",
	     "/v1/continuous?service=billing&format=collapsed&from=1796634000&until=1796637600",
	     VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "main;work 20\n");
	assert_non_null(strstr(r.headers, "filename=\"continuous-billing-20261207T090000Z-"
					  "20261207T100000Z.collapsed\""));
	resp_free(&r);

	http_error(f, "GET", "/v1/continuous?service=nope&" RANGE, VIEWER, NULL, 404,
		   "Service nope has no samples in the continuous profile");
	http_error(f, "GET", "/v1/continuous?service=shop/billing&" RANGE, VIEWER, NULL, 400,
		   "without its namespace: ask service=billing");
	http_error(f, "GET", "/v1/continuous?from=2026-12-07T10:00:00Z&until=2026-12-07T09:00:00Z",
		   VIEWER, NULL, 400, "must be before until");
	http_error(f, "GET", "/v1/continuous?from=2026-11-01T00:00:00Z&until=2026-12-07T09:00:00Z",
		   VIEWER, NULL, 400, "longer than 7 days (168 hours)");
	http_error(f, "GET", "/v1/continuous?from=yesterday", VIEWER, NULL, 400,
		   "from must be a time: RFC 3339");
	http_error(f, "GET", "/v1/continuous?format=svg", VIEWER, NULL, 400,
		   "format must be html, pprof or collapsed");
	/* an offset: '+' escaped, and as a query string's space */
	http(f, "GET",
	     "/v1/continuous?from=2026-12-07T10:00:00%2B01:00&until=2026-12-07T11:00:00+01:00",
	     VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	resp_free(&r);

	/* downloads are audited, the page and what was not there are not */
	assert_int_equal(
		audit_count(f, "\"what\":\"download\"", "\"target\":\"continuous:server\"",
			    "\"result\":\"ok\"",
			    "format=pprof from=2026-12-07T09:00:00Z until=2026-12-07T10:00:00Z",
			    NULL),
		1);
	assert_int_equal(audit_count(f, "\"who\":\"alice\"",
				     "\"target\":\"continuous:service:billing\"",
				     "format=collapsed", NULL),
			 1);
	assert_int_equal(audit_count(f, "continuous", NULL), 2);
}

static void test_compare_continuous(void **state)
{
	struct fx *f = *state;
	char id[STORE_ID_SIZE], wall[STORE_ID_SIZE], early[STORE_ID_SIZE], path[160];
	struct resp r;

	add_real(f, true, "cpu", T0 - NS(3600), 10, id);
	add_real(f, false, "cpu", T0, 30, id);
	add_real(f, false, "wall", T0, 30, wall);
	add_real(f, false, "cpu", T0 - NS(3600), 30, early);

	snprintf(path, sizeof(path), "/v1/compare?base=continuous&new=%s&format=collapsed", id);
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "main;work 10 10\n"));
	resp_free(&r);
	snprintf(path, sizeof(path), "/v1/compare?base=continuous&new=%s", id);
	http(f, "GET", path, VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.headers, "Content-Type: text/html"));
	assert_non_null(strstr(r.body, "the continuous profile from 2026-12-07T09:00:00Z to "
				       "2026-12-07T10:00:00Z"));
	resp_free(&r);

	snprintf(path, sizeof(path), "/v1/compare?base=continuous&new=%s", wall);
	http_error(f, "GET", path, VIEWER, NULL, 400,
		   "these profiles answer different questions (cpu and wall)");
	snprintf(path, sizeof(path), "/v1/compare?base=continuous&new=%s", early);
	http_error(f, "GET", path, VIEWER, NULL, 404,
		   "no continuous profile of Service billing between 2026-12-07T08:00:00Z");
	http_error(f, "GET", "/v1/compare?base=continuous&new=20201129T174501Z-000000", VIEWER,
		   NULL, 404, "no profile 20201129T174501Z-000000");
	http_error(f, "GET", "/v1/compare?base=continuous", VIEWER, NULL, 400,
		   "or base=continuous: the continuous profile of the hour before profile ID");
	http_error(f, "GET", "/v1/compare?base=continuous&new=continuous", VIEWER, NULL, 400,
		   "compare needs two profile ids");
}

static void test_errors(void **state)
{
	struct fx *f = *state;
	struct resp r;

	http_error(f, "GET", "/v1/nothing", VIEWER, NULL, 404, "no such route: /v1/nothing");
	http(f, "PUT", "/v1/status", VIEWER, NULL, 0, &r);
	expect_error(&r, 405, "allowed: GET");
	assert_non_null(strstr(r.headers, "Allow: GET"));
	resp_free(&r);
	http(f, "GET", "/v1/status", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", NULL, 0, &r);
	assert_int_equal(r.code, 401);
	resp_free(&r);
}

struct status_caller {
	struct fx *f;
	long code;
};

static void *status_caller(void *arg)
{
	struct status_caller *c = arg;
	struct resp r;

	http(c->f, "GET", "/v1/status", VIEWER, NULL, 0, &r);
	c->code = r.code;
	resp_free(&r);
	return NULL;
}

/* GET /v1/status: callers that come while a check runs share it (single-flight), and a
 * check is served again within the TTL, so N callers never run N checks of every process. */
static void test_status_single_flight(void **state)
{
	struct fx *f = *state;
	struct status_caller c[4];
	pthread_t t[4];
	struct resp r;
	size_t i;

	f->fake.status_delay_ms = 300;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		c[i].f = f;
		c[i].code = 0;
		assert_int_equal(pthread_create(&t[i], NULL, status_caller, &c[i]), 0);
	}
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(c[i].code, 200);
	}
	assert_int_equal(f->fake.statuses, 1);
	/* within the TTL: the same document, no new check */
	http(f, "GET", "/v1/status", VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "Ready to profile"));
	resp_free(&r);
	assert_int_equal(f->fake.statuses, 1);
}

/* A denied or invalid capture is audited with what was asked: the raw request, bounded and
 * valid UTF-8, and the target it named. */
static void test_capture_audit_raw(void **state)
{
	struct fx *f = *state;
	struct resp r;

	http_error(f, "POST", "/v1/captures", VIEWER,
		   "{\"target\":\"service:team-a/billing\",\"question\":\"cpu\",\"duration\":10}",
		   403, "needs operator");
	assert_int_equal(audit_count(f, "\"who\":\"alice\"", "\"result\":\"denied\"",
				     "\"target\":\"service:team-a/billing\"",
				     "request={\\\"target\\\":\\\"service:team-a/billing\\\"",
				     NULL),
			 1);
	/* not even JSON, with a byte that is not UTF-8: "-" and the request made safe */
	http(f, "POST", "/v1/captures", VIEWER, "question=cpu\xff\x01", 0, &r);
	assert_int_equal(r.code, 403);
	resp_free(&r);
	assert_int_equal(audit_count(f, "\"who\":\"alice\"", "\"result\":\"denied\"",
				     "\"target\":\"-\"",
				     "\"detail\":\"viewer: request=question=cpu??\"", NULL),
			 1);
	http(f, "POST", "/v1/captures", OPERATOR, "{\"target\":\"disk\",\"question\":\"cpu\"}", 0,
	     &r);
	assert_int_equal(r.code, 400);
	resp_free(&r);
	assert_int_equal(audit_count(f, "\"who\":\"bob\"", "\"result\":\"invalid\"",
				     "request={\\\"target\\\":\\\"disk\\\"", NULL),
			 1);
	assert_int_equal(f->fake.starts, 0);
}

static void test_metrics(void **state)
{
	struct fx *f = *state;
	struct resp r;

	__atomic_add_fetch(&f->metrics.captures_done, 7, __ATOMIC_RELAXED);
	__atomic_add_fetch(&f->metrics.captures_failed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&f->metrics.samples_lost, 42, __ATOMIC_RELAXED);
	__atomic_store_n(&f->metrics.spool_depth, 3, __ATOMIC_RELAXED);
	http(f, "GET", "/v1/status", NULL, NULL, 0, &r); /* a 401 */
	resp_free(&r);
	http(f, "GET", "/v1/nope", VIEWER, NULL, 0, &r); /* a 404 */
	resp_free(&r);
	http(f, "GET", "/metrics", NULL, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.headers, "Content-Type: text/plain; version=0.0.4"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_captures_total{result=\"done\"} 7\n"));
	assert_non_null(
		strstr(r.body, "\nslideops_profiler_captures_total{result=\"failed\"} 1\n"));
	assert_non_null(
		strstr(r.body, "\nslideops_profiler_captures_total{result=\"refused\"} 0\n"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_samples_lost_total 42\n"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_profiles_stored 3\n"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_spool_depth 3\n"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_api_errors_total{code=\"401\"} 1\n"));
	assert_non_null(strstr(r.body, "\nslideops_profiler_api_errors_total{code=\"404\"} 1\n"));
	assert_non_null(strstr(r.body, "# TYPE slideops_profiler_spool_depth gauge\n"));
	resp_free(&r);
}

static void test_listen(void **state)
{
	struct api_opts o = { 0 };
	struct api *a = NULL;
	struct fx *f = *state;
	static const char *const bad[] = { "",
					   "7070",
					   "127.0.0.1",
					   "127.0.0.1:70000",
					   "[::1:1",
					   "host:x",
					   "no-such-host.invalid:1" };
	size_t i;

	o.store = f->store;
	o.tokens = f->tokens;
	o.audit = f->audit;
	o.ops = &ops;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		print_message("case %zu\n", i);
		o.listen = bad[i];
		assert_int_equal(api__new(&o, &a), -EINVAL);
	}
	o.listen = "[::1]:0";
	if (api__new(&o, &a) == 0) /* no IPv6 loopback in some containers */
		api__free(a);
	o.ops = NULL;
	assert_int_equal(api__new(&o, &a), -EINVAL);
	api__free(NULL);
}

/* Signs in with @token: the cookie header line into @cookie, the CSRF header line into @csrf. */
static void sign_in(struct fx *f, const char *token, char cookie[128], char csrf[128])
{
	char body[128];
	const char *set, *v;
	struct resp r;
	json_t *doc;

	snprintf(body, sizeof(body), "{\"token\": \"%s\"}", token);
	http(f, "POST", "/v1/session", NULL, body, 0, &r);
	assert_int_equal(r.code, 200);
	set = strstr(r.headers, "Set-Cookie: slideops_session=");
	assert_non_null(set);
	assert_non_null(strstr(set, "HttpOnly"));
	assert_non_null(strstr(set, "SameSite=Strict"));
	assert_non_null(strstr(set, "Path=/"));
	snprintf(cookie, 128, "Cookie: a=1; slideops_session=%.64s", set + 29);
	doc = json_loads(r.body, 0, NULL);
	assert_non_null(doc);
	v = json_string_value(json_object_get(doc, "csrf"));
	assert_non_null(v);
	assert_int_equal(strlen(v), 64);
	assert_null(strstr(r.body, token));
	snprintf(csrf, 128, "X-SlideOps-CSRF: %s", v);
	json_decref(doc);
	resp_free(&r);
}

static void test_session(void **state)
{
	struct fx *f = *state;
	char cookie[128], csrf[128], origin[64], bad_csrf[128];
	const char *body = "{\"target\": \"server\", \"question\": \"cpu\"}";
	struct resp r;

	snprintf(origin, sizeof(origin), "Origin: http://127.0.0.1:%u", f->port);
	sign_in(f, OPERATOR, cookie, csrf);
	snprintf(bad_csrf, sizeof(bad_csrf), "%.*sg", (int)strlen(csrf) - 1, csrf);
	{
		const char *const with_cookie[] = { cookie, NULL };
		const char *const with_csrf[] = { cookie, csrf, origin, NULL };
		const char *const wrong_csrf[] = { cookie, bad_csrf, NULL };
		const char *const evil[] = { cookie, csrf, "Origin: http://127.0.0.1:1", NULL };

		http_hdr(f, "GET", "/v1/status", NULL, NULL, 0, with_cookie, &r);
		assert_int_equal(r.code, 200);
		resp_free(&r);
		http_hdr(f, "GET", "/v1/session", NULL, NULL, 0, with_cookie, &r);
		assert_int_equal(r.code, 200);
		assert_non_null(strstr(r.body, "\"bob\""));
		assert_non_null(strstr(r.body, csrf + 17));
		resp_free(&r);
		/* a mutating request with the cookie needs the CSRF secret, and our origin */
		http_hdr(f, "POST", "/v1/captures", NULL, body, 0, with_cookie, &r);
		expect_error(&r, 403, "cross-site request refused");
		resp_free(&r);
		http_hdr(f, "POST", "/v1/captures", NULL, body, 0, wrong_csrf, &r);
		expect_error(&r, 403, "X-SlideOps-CSRF");
		resp_free(&r);
		http_hdr(f, "POST", "/v1/captures", NULL, body, 0, evil, &r);
		expect_error(&r, 403, "Origin http://127.0.0.1:1 is not this agent");
		resp_free(&r);
		assert_int_equal(f->fake.starts, 0);
		http_hdr(f, "POST", "/v1/captures", NULL, body, 0, with_csrf, &r);
		assert_int_equal(r.code, 202);
		resp_free(&r);
		assert_int_equal(f->fake.starts, 1);
		assert_string_equal(f->fake.last_who, "bob");
		/* signing out ends the session */
		http_hdr(f, "DELETE", "/v1/session", NULL, NULL, 0, with_csrf, &r);
		assert_int_equal(r.code, 200);
		assert_non_null(strstr(r.headers, "slideops_session=; Path=/; Max-Age=0"));
		resp_free(&r);
		http_hdr(f, "GET", "/v1/status", NULL, NULL, 0, with_cookie, &r);
		expect_error(&r, 401, "the session has ended or expired");
		resp_free(&r);
	}
}

static void test_session_refusals(void **state)
{
	struct fx *f = *state;
	const char *body = "{\"target\": \"server\", \"question\": \"cpu\"}";
	char cookie[128], csrf[128];
	struct resp r;

	http_error(f, "POST", "/v1/session", NULL, "{\"token\": \"" NOPE "\"}", 401,
		   "unknown token");
	http_error(f, "POST", "/v1/session", NULL, "{\"token\": \"" NOPE "\", \"x\": 1}", 400,
		   "nothing else");
	http_error(f, "POST", "/v1/session", NULL, "", 400, "a JSON body is required");
	/* a sign-in posted from another origin (login CSRF) */
	{
		const char *const evil[] = { "Origin: http://evil.example", NULL };

		http_hdr(f, "POST", "/v1/session", NULL, "{\"token\": \"" VIEWER "\"}", 0, evil,
			 &r);
		expect_error(&r, 403, "cross-site request refused");
		resp_free(&r);
	}
	/* a Viewer's session: the CSRF secret does not lift the role */
	sign_in(f, VIEWER, cookie, csrf);
	{
		const char *const hdrs[] = { cookie, csrf, NULL };

		http_hdr(f, "POST", "/v1/captures", NULL, body, 0, hdrs, &r);
		expect_error(&r, 403, "the viewer role of 'alice' may not do this");
		resp_free(&r);
	}
	/* a bearer request: who it is, no session */
	http(f, "GET", "/v1/session", VIEWER, NULL, 0, &r);
	assert_int_equal(r.code, 200);
	assert_null(strstr(r.body, "csrf"));
	assert_non_null(strstr(r.body, "\"signed_in\": true"));
	resp_free(&r);
	http_error(f, "DELETE", "/v1/session", VIEWER, NULL, 400, "no session to end");
	http(f, "GET", "/v1/session", NULL, NULL, 0, &r); /* nobody: an answer, not an error */
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "\"signed_in\": false"));
	resp_free(&r);
	{
		const char *const forged[] = {
			"Cookie: slideops_session="
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			NULL
		};

		http_hdr(f, "GET", "/v1/status", NULL, NULL, 0, forged, &r);
		expect_error(&r, 401, "not signed in");
		resp_free(&r);
	}
}

static void test_page(void **state)
{
	static const struct {
		const char *path, *type;
		long code;
	} cases[] = {
		{ "/", "text/html", 200 },
		{ "/index.html", "text/html", 200 },
		{ "/ui/app.js", "text/javascript", 200 },
		{ "/ui/app.css", "text/css", 200 },
		{ "/ui/flamegraph.js", "text/javascript", 200 },
		{ "/ui/flamegraph.css", "text/css", 200 },
		/* errors */
		{ "/ui/nope.js", "application/json", 404 },
		{ "/ui/", "application/json", 404 },
	};
	struct fx *f = *state;
	struct resp r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		http(f, "GET", cases[i].path, NULL, NULL, 0, &r);
		assert_int_equal(r.code, cases[i].code);
		assert_non_null(strstr(r.headers, cases[i].type));
		assert_non_null(strstr(r.headers, "Content-Security-Policy: default-src 'none'; "
						  "script-src 'self'"));
		assert_non_null(strstr(r.headers, "X-Frame-Options: SAMEORIGIN"));
		assert_non_null(strstr(r.headers, "X-Content-Type-Options: nosniff"));
		if (r.code == 200)
			assert_true(r.len > 0);
		resp_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_matrix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_body_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_download, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_single_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_audit_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continuous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_continuous, setup, teardown),
	};
	int ret;

	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
