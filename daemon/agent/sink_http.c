// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/sink_http.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fileio.h"
#include "daemon/agent/http.h"

#define TOKEN_MAX 16384
/* The start of a response body that goes into the reason. */
#define REASON_BODY_MAX 511

/* One transfer's state for the curl callbacks. */
struct sink_xfer {
	const struct sink_http *h;
	struct sink_result *out;
	struct http_body body;
};

time_t sink_wall(const struct sink_clock *clock)
{
	return clock && clock->wall ? clock->wall(clock->ctx) : time(NULL);
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	static const char name[] = "retry-after:";
	struct sink_xfer *x = ctx;
	size_t len = size * n;
	char value[128];
	long long v;

	if (len > sizeof(name) - 1 && len - (sizeof(name) - 1) < sizeof(value) &&
	    !strncasecmp(p, name, sizeof(name) - 1)) {
		memcpy(value, p + sizeof(name) - 1, len - (sizeof(name) - 1));
		value[len - (sizeof(name) - 1)] = '\0';
		v = sink_parse_retry_after(value, sink_wall(x->h->clock));
		if (v >= 0)
			x->out->retry_after_s = v;
	} else if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		x->out->retry_after_s = -1; /* a new response (after 100 Continue) */
	}
	return len;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct sink_http *h = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(h->stop) ? 1 : 0;
}

/* Printable, one line, no double quotes (it goes inside a logfmt msg="..."). */
static void clean_text(char *t)
{
	for (; *t; t++) {
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			*t = ' ';
		else if (*t == '"' || *t == '\\')
			*t = '\'';
	}
}

static void perform(const struct sink_http *sh, CURL *h, const char *url, unsigned timeout_ms,
		    struct sink_result *out)
{
	struct sink_xfer x = { .h = sh, .out = out, .body = { .max = REASON_BODY_MAX } };
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;

	out->status = 0;
	out->retry_after_s = -1;
	out->aborted = false;
	http_setup(h, url, NULL, (long)sh->connect_ms, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x.body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)sh);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		out->verdict = SINK_RETRY;
		out->aborted = rc == CURLE_ABORTED_BY_CALLBACK;
		snprintf(out->reason, sizeof(out->reason), "%s",
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
		out->verdict = sink_classify(out->status);
		snprintf(out->reason, sizeof(out->reason), "HTTP %ld%s%s", out->status,
			 x.body.len ? ": " : "", http_body_text(&x.body));
	}
	clean_text(out->reason);
	http_body_free(&x.body);
}

/* Reads the token (whitespace trimmed). Returns 0, or -errno / -EINVAL with out->reason set. */
static int read_token(const struct sink_http *h, char **token, struct sink_result *out)
{
	char *t, *p;
	size_t len;
	int err;

	*token = NULL;
	if (!h->token_file)
		return 0;
	err = read_file_bounded(AT_FDCWD, h->token_file, TOKEN_MAX, &t, &len);
	if (err) {
		snprintf(out->reason, sizeof(out->reason), "token file %s: %s", h->token_file,
			 strerror(-err));
		return err;
	}
	while (len && isspace((unsigned char)t[len - 1]))
		t[--len] = '\0';
	for (p = t; isspace((unsigned char)*p); p++)
		;
	for (len = 0; p[len]; len++) {
		if ((unsigned char)p[len] < 0x21 || p[len] == 0x7f) {
			free(t);
			snprintf(out->reason, sizeof(out->reason),
				 "token file %s: not a single-line token", h->token_file);
			return -EINVAL;
		}
	}
	if (!len) {
		free(t);
		snprintf(out->reason, sizeof(out->reason), "token file %s is empty", h->token_file);
		return -EINVAL;
	}
	memmove(t, p, len + 1);
	*token = t;
	return 0;
}

/* The pprof as the file field "profile" of @mime (both transports send it so). Returns 0 or
 * -ENOMEM. */
static int add_profile_part(curl_mime *mime, const struct sink_payload *pl)
{
	curl_mimepart *part = mime ? curl_mime_addpart(mime) : NULL;

	if (!part || curl_mime_name(part, "profile") ||
	    curl_mime_data(part, pl->prof, pl->prof_len) ||
	    curl_mime_filename(part, SINK_PROFILE_FILE) ||
	    curl_mime_type(part, "application/octet-stream"))
		return -ENOMEM;
	return 0;
}

/* The cluster API's form: the metadata as JSON, then the profile. */
static curl_mime *cluster_form(CURL *h, const struct sink_payload *pl)
{
	curl_mime *mime = curl_mime_init(h);
	curl_mimepart *part = mime ? curl_mime_addpart(mime) : NULL;

	if (!part || curl_mime_name(part, "metadata") ||
	    curl_mime_data(part, pl->meta, pl->meta_len) ||
	    curl_mime_type(part, "application/json") || add_profile_part(mime, pl)) {
		curl_mime_free(mime);
		return NULL;
	}
	return mime;
}

/* Appends the header "@name: @value" to *@hdrs. Returns 0 or -ENOMEM (*@hdrs unchanged). */
static int add_header(struct curl_slist **hdrs, const char *name, const char *value)
{
	struct curl_slist *tmp;
	char *line;

	if (asprintf(&line, "%s: %s", name, value) < 0)
		return -ENOMEM;
	tmp = curl_slist_append(*hdrs, line);
	free(line);
	if (!tmp)
		return -ENOMEM;
	*hdrs = tmp;
	return 0;
}

/* The cluster API's headers: the bearer @token (may be NULL) and the Idempotency-Key. */
static struct curl_slist *cluster_headers(const char *token, const char *id)
{
	struct curl_slist *hdrs = NULL, *tmp;
	char *bearer;
	int err;

	if (token) {
		if (asprintf(&bearer, "Bearer %s", token) < 0)
			return NULL;
		err = add_header(&hdrs, "Authorization", bearer);
		explicit_bzero(bearer, strlen(bearer));
		free(bearer);
		if (err)
			return NULL;
	}
	if (add_header(&hdrs, "Idempotency-Key", id))
		goto oom;
	/* No "Expect: 100-continue" round trip (and its 1 s wait on servers that ignore it). */
	tmp = curl_slist_append(hdrs, "Expect:");
	if (!tmp)
		goto oom;
	return tmp;
oom:
	curl_slist_free_all(hdrs);
	return NULL;
}

void sink_http_post_cluster(const struct sink_http *sh, const char *id,
			    const struct sink_payload *pl, unsigned timeout_ms,
			    struct sink_result *out)
{
	struct curl_slist *hdrs = NULL;
	curl_mime *mime = NULL;
	char *token = NULL;
	CURL *h;

	out->verdict = SINK_RETRY;
	if (read_token(sh, &token, out))
		return;
	h = curl_easy_init();
	if (!h) {
		snprintf(out->reason, sizeof(out->reason), "curl_easy_init failed");
		goto out;
	}
	mime = cluster_form(h, pl);
	hdrs = mime ? cluster_headers(token, id) : NULL;
	if (!hdrs) {
		snprintf(out->reason, sizeof(out->reason), "out of memory building the request");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	perform(sh, h, sh->cluster_url, timeout_ms, out);
out:
	curl_easy_cleanup(h);
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	if (token)
		explicit_bzero(token, strlen(token));
	free(token);
}

/* Percent-encodes everything but RFC 3986 unreserved characters. */
static int url_escape(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			if (n + 1 >= size)
				return -ENAMETOOLONG;
			out[n++] = (char)c;
		} else {
			if (n + 3 >= size)
				return -ENAMETOOLONG;
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

/* <pyro_url>?name=...&from=...&until=...&format=pprof into *@url. Returns 0, -ENAMETOOLONG
 * (the name), -ENOMEM. */
static int pyroscope_url(const struct sink_http *sh, const struct sink_payload *pl, char **url)
{
	char name[512], esc[1536];
	time_t from, until;

	if (sink_pyroscope_name(sh->app, pl->meta, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "%s{}", sh->app);
	if (url_escape(name, esc, sizeof(esc)) < 0)
		return -ENAMETOOLONG;
	if (sink_metadata_range(pl->meta, &from, &until)) {
		until = sink_wall(sh->clock);
		from = until - 1;
	}
	if (asprintf(url, "%s?name=%s&from=%lld&until=%lld&format=pprof", sh->pyro_url, esc,
		     (long long)from, (long long)until) < 0) {
		*url = NULL;
		return -ENOMEM;
	}
	return 0;
}

void sink_http_post_pyroscope(const struct sink_http *sh, const struct sink_payload *pl,
			      unsigned timeout_ms, struct sink_result *out)
{
	struct curl_slist *hdrs = NULL;
	curl_mime *mime = NULL;
	char *url = NULL;
	CURL *h = NULL;
	int err;

	out->verdict = SINK_RETRY;
	err = pyroscope_url(sh, pl, &url);
	if (err == -ENAMETOOLONG) {
		snprintf(out->reason, sizeof(out->reason), "application name too long");
		out->verdict = SINK_PERMANENT;
		return;
	}
	h = err ? NULL : curl_easy_init();
	/* The documented multipart form: the pprof in a file field named "profile". */
	mime = h ? curl_mime_init(h) : NULL;
	if (!mime || add_profile_part(mime, pl) || !(hdrs = curl_slist_append(NULL, "Expect:"))) {
		snprintf(out->reason, sizeof(out->reason), "out of memory building the request");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	perform(sh, h, url, timeout_ms, out);
out:
	curl_easy_cleanup(h);
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	free(url);
}
