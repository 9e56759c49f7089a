// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/text.h"

struct audit {
	int fd;
	pthread_mutex_t lock; /* guards @broken only; lines need no lock (O_APPEND) */
	bool broken;	      /* the last write was short: start the next line afresh */
	audit_clock_fn_t clock;
	void *clock_ctx;
};

static const char *const what_names[AUDIT_WHAT_COUNT] = {
	[AUDIT_CAPTURE] = "capture", [AUDIT_DOWNLOAD] = "download", [AUDIT_DELETE] = "delete",
	[AUDIT_UPLOAD] = "upload",   [AUDIT_REMOVE] = "remove",
};

const char *audit_what_name(enum audit_what w)
{
	return (unsigned)w < AUDIT_WHAT_COUNT ? what_names[w] : NULL;
}

const char *audit_raw_request(const char *s, size_t len, char *out, size_t size)
{
	size_t n = len, i;
	bool cut;

	if (!size)
		return out;
	if (!s)
		len = n = 0;
	if (n > AUDIT_RAW_MAX)
		n = AUDIT_RAW_MAX;
	if (n > size - 1)
		n = size - 1;
	cut = n < len;
	if (cut && n >= 3 && size - 1 >= 3)
		n -= 3; /* room for "..." within both bounds */
	for (i = 0; i < n; i++)
		out[i] = s[i] ? s[i] : '?';
	out[n] = '\0';
	/* a multi-byte character cut in two becomes '?', so the result stays valid UTF-8 */
	text_utf8_sanitize(out);
	if (cut && n + 3 < size)
		memcpy(out + n, "...", 4);
	return out;
}

static int64_t realtime_ns(void *ctx)
{
	(void)ctx;
	return clock_real_ns();
}

/* A JSON string of @s cut to AUDIT_FIELD_MAX bytes, invalid UTF-8 and controls made '?'.
 * Control characters are kept out even though JSON would escape them: the trail is read with
 * grep and tail as often as with a JSON parser. */
static json_t *clean_string(const char *s)
{
	char buf[AUDIT_FIELD_MAX + 1];

	snprintf(buf, sizeof(buf), "%s", s);
	text_utf8_sanitize(buf);
	return json_string(buf);
}

int audit_format(const struct audit_entry *e, int64_t now_ns, char *buf, size_t size)
{
	char when[CLOCK_RFC3339_MAX];
	json_t *doc;
	size_t n;

	if (!e || !audit_what_name(e->what) || !e->who || !e->target || !e->result)
		return -EINVAL;
	clock_rfc3339(when, sizeof(when), now_ns, 3);
	doc = json_object();
	if (!doc)
		return -ENOMEM;
	/* insertion order is kept by jansson >= 2.8: when, who, what, target, result, detail */
	if (json_object_set_new(doc, "when", json_string(when)) ||
	    json_object_set_new(doc, "who", clean_string(e->who)) ||
	    json_object_set_new(doc, "what", json_string(audit_what_name(e->what))) ||
	    json_object_set_new(doc, "target", clean_string(e->target)) ||
	    json_object_set_new(doc, "result", clean_string(e->result)) ||
	    (e->detail && json_object_set_new(doc, "detail", clean_string(e->detail)))) {
		json_decref(doc);
		return -ENOMEM;
	}
	n = json_dumpb(doc, buf, size, JSON_COMPACT);
	json_decref(doc);
	if (n == 0)
		return -ENOMEM;
	if (n + 2 > size)
		return -ENOSPC;
	buf[n++] = '\n';
	buf[n] = '\0';
	return (int)n;
}

int audit__new(const struct audit_opts *opts, struct audit **out)
{
	char dir[PATH_MAX], *slash;
	struct audit *a;
	int err;

	if (!opts || !opts->path || !opts->path[0])
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s", opts->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		err = mkdir_p(dir);
		if (err)
			return err;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = open(opts->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->fd < 0) {
		err = -errno;
		free(a);
		return err;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->clock = opts->clock ?: realtime_ns;
	a->clock_ctx = opts->clock_ctx;
	*out = a;
	return 0;
}

void audit__free(struct audit *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int audit__log(struct audit *a, const struct audit_entry *e)
{
	char buf[AUDIT_LINE_MAX + 2];
	int len, off = 0;
	ssize_t n;
	bool broken;

	buf[0] = '\n';
	len = audit_format(e, a->clock(a->clock_ctx), buf + 1, sizeof(buf) - 1);
	if (len < 0)
		return len;
	pthread_mutex_lock(&a->lock);
	broken = a->broken;
	pthread_mutex_unlock(&a->lock);
	if (!broken)
		off = 1;
	n = write(a->fd, buf + off, len + 1 - off);
	if (n < 0 || n != len + 1 - off) {
		int err = n < 0 ? -errno : -EIO;

		pthread_mutex_lock(&a->lock);
		a->broken = true;
		pthread_mutex_unlock(&a->lock);
		return err;
	}
	if (broken) {
		pthread_mutex_lock(&a->lock);
		a->broken = false;
		pthread_mutex_unlock(&a->lock);
	}
	if (fdatasync(a->fd) < 0)
		return -errno;
	return 0;
}
