// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/http.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc;

static void init_curl(void)
{
	init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int http_init(const char **why)
{
	pthread_once(&init_once, init_curl);
	if (why)
		*why = curl_easy_strerror(init_rc);
	return init_rc == CURLE_OK ? 0 : -EIO;
}

void http_setup(CURL *h, const char *url, const char *user_agent, long connect_ms, long timeout_ms)
{
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_USERAGENT, user_agent ? user_agent : HTTP_USER_AGENT);
}

size_t http_body_write(char *p, size_t size, size_t n, void *body)
{
	struct http_body *b = body;
	size_t len = size * n, take = len, max = b->max ? b->max : HTTP_BODY_MAX;
	char *buf;

	if (take > max - b->len) {
		take = max - b->len; /* the rest is dropped, the transfer goes on */
		b->truncated = true;
	}
	if (take) {
		buf = realloc(b->buf, b->len + take + 1);
		if (!buf)
			return 0;
		memcpy(buf + b->len, p, take);
		b->buf = buf;
		b->len += take;
		b->buf[b->len] = '\0';
	}
	return len;
}

void http_body_free(struct http_body *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = 0;
	b->truncated = false;
}

int http_curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return 0;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_WRITE_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	default:
		return -EIO;
	}
}

int http_status_errno(long status)
{
	switch (status) {
	case 200:
	case 201:
	case 202:
		return 0;
	case 400:
	case 415:
	case 422:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 409:
		return -EEXIST;
	case 410:
		return -ESTALE;
	case 413:
		return -E2BIG;
	case 429:
		return -EAGAIN;
	default:
		return -EIO;
	}
}
