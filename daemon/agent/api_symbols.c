// SPDX-License-Identifier: Apache-2.0
/*
 * The debug-symbol routes of the local API (docs/api.md): POST /v1/symbols streams an upload
 * through symbols/elf_stream.h into the symbol store, GET lists the uploads, DELETE removes
 * one. An upload is never held whole and never written anywhere: only its index is kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/text.h"
#include "daemon/agent/api_int.h"
#include "daemon/agent/api_symbols.h"
#include "symbols/elf_stream.h"
#include "symbols/symindex.h"
#include "symbols/symstore.h"

/* Past the limit, a body is read and dropped up to this much more, then the connection closes:
 * enough for the 413 to reach an honest client that sent no Content-Length. */
#define UPLOAD_DISCARD_MAX (1024 * 1024)
#define UPLOAD_NAME_MAX 255

struct api_upload {
	struct elf_stream *es;
	uint64_t bytes;
	char name[UPLOAD_NAME_MAX + 1];
};

/* Only one upload streams at a time: each holds up to elf_stream's tail ring in memory. */
static bool upload_slot_take(struct api *a)
{
	bool ok;

	pthread_mutex_lock(&a->status_lock);
	ok = !a->uploading;
	a->uploading = true;
	pthread_mutex_unlock(&a->status_lock);
	return ok;
}

static void upload_slot_give(struct api *a)
{
	pthread_mutex_lock(&a->status_lock);
	a->uploading = false;
	pthread_mutex_unlock(&a->status_lock);
}

/* The upload's file name from ?name=: its last path segment, valid UTF-8, no control
 * characters, at most UPLOAD_NAME_MAX bytes; "upload" when there is none. */
static void upload_name(const char *arg, char *out, size_t size)
{
	const char *base = arg ? strrchr(arg, '/') : NULL;
	char *p;

	base = base ? base + 1 : arg;
	if (!base || !*base)
		base = "upload";
	text_utf8_sanitize_copy(out, size, base, strlen(base));
	for (p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
}

bool api_symbols_begin(struct api *a, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
	const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);
	struct api_upload *up;
	unsigned long long clen;
	char *end;

	if (!a->symbols) {
		*ret = api_respond_error(a, c, 503, "debug symbols are not kept by this agent");
		return true;
	}
	if (hdr) {
		errno = 0;
		clen = strtoull(hdr, &end, 10);
		if (errno || end == hdr || *end || clen > API_UPLOAD_BODY_MAX) {
			api_audit(a, AUDIT_UPLOAD, r->who, "-", "refused", "larger than 1 GB");
			*ret = api_respond_error(a, c, 413, "%s", elf_stream_refusal(-EFBIG));
			return true;
		}
	}
	if (!upload_slot_take(a)) {
		*ret = api_respond_error(a, c, 503,
					 "another upload of debug symbols is running on this "
					 "agent; try again when it has finished");
		return true;
	}
	up = calloc(1, sizeof(*up));
	if (!up || elf_stream__new(NULL, &up->es)) {
		free(up);
		upload_slot_give(a);
		*ret = api_respond_error(a, c, 500, "out of memory");
		return true;
	}
	upload_name(api_arg(c, "name"), up->name, sizeof(up->name));
	r->upload = up;
	return false;
}

enum MHD_Result api_symbols_feed(struct req *r, const char *data, size_t n)
{
	struct api_upload *up = r->upload;

	up->bytes += n;
	/* an error sticks in the stream: the rest is read (bounded) so the answer can be sent */
	elf_stream__feed(up->es, data, n);
	return up->bytes > API_UPLOAD_BODY_MAX + UPLOAD_DISCARD_MAX ? MHD_NO : MHD_YES;
}

void api_symbols_end(struct api *a, struct req *r)
{
	if (!r->upload)
		return;
	elf_stream__free(r->upload->es);
	free(r->upload);
	r->upload = NULL;
	upload_slot_give(a);
}

static json_t *entry_json(const struct symstore_entry *e)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:s}", "build_id", e->build_id, "file_name",
			 e->file_name, "functions", (json_int_t)e->functions, "uploaded_at",
			 (json_int_t)e->uploaded_at, "uploaded_by", e->uploaded_by);
}

/* The answer to a finished upload refused by the reader or the store. */
static enum MHD_Result upload_refused(struct api *a, struct MHD_Connection *c, struct req *r,
				      int err, const struct symstore_entry *kept)
{
	const struct api_upload *up = r->upload;
	char detail[2 * UPLOAD_NAME_MAX + 160];
	const char *why;

	if (err == -EEXIST) {
		snprintf(detail, sizeof(detail),
			 "file=%s: kept the richer %s (%" PRIu64 " functions)", up->name,
			 kept->file_name, kept->functions);
		api_audit(a, AUDIT_UPLOAD, r->who, kept->build_id, "refused", detail);
		return api_respond_error(a, c, 409,
					 "SlideOps already names build %.12s from %s, which names "
					 "more functions (%" PRIu64 "); it was kept",
					 kept->build_id, kept->file_name, kept->functions);
	}
	why = err == -ENOSPC ? "the symbol store is full" : elf_stream__reason(up->es);
	if (!why[0])
		why = elf_stream_refusal(err);
	snprintf(detail, sizeof(detail), "file=%s: %s", up->name, why);
	api_audit(a, AUDIT_UPLOAD, r->who, "-", "refused", detail);
	if (err == -ENOSPC)
		return api_respond_error(a, c, 507,
					 "the symbol store is full: delete an upload first");
	if (err == -ENOMEM || err == -EIO)
		return api_respond_error(a, c, 500, "the upload could not be stored: %s",
					 strerror(-err));
	return api_respond_error(a, c, err == -EFBIG ? 413 : 422, "%s", why);
}

enum MHD_Result api_symbols_upload(struct api *a, struct MHD_Connection *c, struct req *r)
{
	struct api_upload *up = r->upload;
	struct symindex_build *b = NULL;
	struct symstore_entry res = { 0 };
	char detail[UPLOAD_NAME_MAX + 64];
	int err;

	err = elf_stream__finish(up->es, &b);
	if (!err)
		err = symstore__put(a->symbols, b, up->name, r->who, (int64_t)time(NULL), &res);
	symindex_build__free(b);
	if (err)
		return upload_refused(a, c, r, err, &res);
	snprintf(detail, sizeof(detail), "file=%s functions=%" PRIu64 "%s", up->name, res.functions,
		 res.replaced ? " replaced" : "");
	api_audit(a, AUDIT_UPLOAD, r->who, res.build_id, "ok", detail);
	pr_info("api: debug symbols of build %s uploaded by %s (%s, %" PRIu64 " functions)",
		res.build_id, r->who, up->name, res.functions);
	return api_respond_json(c, 201,
				json_pack("{s:o*, s:b}", "upload", entry_json(&res), "replaced",
					  res.replaced));
}

enum MHD_Result api_symbols_list(struct api *a, struct MHD_Connection *c)
{
	struct symstore_entry *list = NULL;
	json_t *arr;
	size_t n = 0, i;
	int err;

	if (!a->symbols)
		return api_respond_json(c, 200, json_pack("{s:[]}", "uploads"));
	err = symstore__list(a->symbols, &list, &n);
	if (err)
		return api_respond_error(a, c, 500, "cannot list the uploads: %s", strerror(-err));
	arr = json_array();
	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr, entry_json(&list[i]));
	symstore_list_free(list);
	return api_respond_json(c, 200, json_pack("{s:o*}", "uploads", arr));
}

enum MHD_Result api_symbols_delete(struct api *a, struct MHD_Connection *c, struct req *r)
{
	char target[API_SEG_SIZE + 16];
	int err = a->symbols ? symstore__delete(a->symbols, r->m.id) : -ENOENT;

	snprintf(target, sizeof(target), "symbols/%s", r->m.id);
	if (err == -ENOENT || err == -EINVAL) {
		api_audit(a, AUDIT_DELETE, r->who, target, "failed", "no such upload");
		return api_respond_error(a, c, 404, "no upload for build %s", r->m.id);
	}
	if (err) {
		api_audit(a, AUDIT_DELETE, r->who, target, "failed", strerror(-err));
		return api_respond_error(a, c, 500, "cannot delete the upload: %s", strerror(-err));
	}
	api_audit(a, AUDIT_DELETE, r->who, target, "ok", NULL);
	return api_respond_json(c, 200, json_pack("{s:s}", "deleted", r->m.id));
}
