/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_symbols: the debug-symbol routes of the local API (docs/api.md, "Debug symbols"):
 * POST /v1/symbols?name=FILE (the body is the file, streamed), GET /v1/symbols,
 * DELETE /v1/symbols/BUILD_ID. Uploads and deletions are audited. Included by api.c only.
 */
#ifndef SLIDEOPS_API_SYMBOLS_H
#define SLIDEOPS_API_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

struct api;
struct req;

/*
 * The first call of an upload, after its token and role were checked: refuses a declared size
 * above 1 GB (413) and a second upload while one streams (503), else starts the stream. Returns
 * true when it answered (*@ret), false to read the body.
 */
bool api_symbols_begin(struct api *a, struct MHD_Connection *c, struct req *r,
		       enum MHD_Result *ret);
/* The next @n bytes of the body. MHD_NO closes the connection (far past 1 GB). */
enum MHD_Result api_symbols_feed(struct req *r, const char *data, size_t n);
/* The body has ended: stores the index, or answers why not (422 with the refusal's words). */
enum MHD_Result api_symbols_upload(struct api *a, struct MHD_Connection *c, struct req *r);
/* Frees an upload's stream and frees the slot; for every request, when it ends. */
void api_symbols_end(struct api *a, struct req *r);
enum MHD_Result api_symbols_list(struct api *a, struct MHD_Connection *c);
enum MHD_Result api_symbols_delete(struct api *a, struct MHD_Connection *c, struct req *r);

#endif
