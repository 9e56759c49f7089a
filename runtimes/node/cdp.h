/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cdp: the Chrome DevTools Protocol texts we exchange with a Node.js V8 inspector (the
 * WebSocket itself is runtimes/node/nsws.h): commands built here, messages and Node's
 * `GET /json/list` target list parsed here. Everything parsed is hostile (a container may run
 * a fake inspector): sizes are capped, every string handed out is sanitized UTF-8 without
 * control characters (base/text.h). Pure (no I/O); thread-safe, a message is not shared.
 */
#ifndef SLIDEOPS_RUNTIMES_NODE_CDP_H
#define SLIDEOPS_RUNTIMES_NODE_CDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest message parsed: a larger one is -EFBIG before any parsing. */
#define CDP_MAX_MESSAGE (16u << 20)
/* The largest /json/list answer parsed. */
#define CDP_MAX_TARGETS (1u << 20)
/* The longest method name a command may carry. */
#define CDP_METHOD_MAX 128
/* An error text, "CODE message", is cut to this many bytes (valid UTF-8). */
#define CDP_ERROR_MAX 200
/* The WebSocket path of a target: '/' and 1..CDP_WS_PATH_MAX of [A-Za-z0-9-]. */
#define CDP_WS_PATH_MAX 128

/*
 * Writes the command `{"id":@id,"method":"@method"}`, or with `"params":@params_json` when
 * that is not NULL, NUL-terminated into @buf (@size bytes). @method must be 1..CDP_METHOD_MAX
 * of [A-Za-z.]; @params_json is our own JSON object text (it must start with '{' and is not
 * checked further). Returns the length, -EINVAL (a bad method or params, @buf NULL), -ENOSPC
 * (it does not fit: @buf is then unspecified).
 */
int cdp_command(char *buf, size_t size, uint32_t id, const char *method, const char *params_json);

/* A parsed message: a response (an id with a result or an error) or an event. */
struct cdp_msg;

/*
 * Parses the @len bytes at @buf (need not be NUL-terminated) into @out, which the caller
 * frees with cdp_msg_free(). A message is one of
 *   a response  {"id":1..2^32-1,"result":{...}}
 *   an error    {"id":1..2^32-1,"error":{"code":int,"message":str}}
 *   an event    {"method":str,"params":{...}}   (params may be missing: an empty object)
 * Returns 0, -EINVAL (@buf NULL), -EFBIG (@len > CDP_MAX_MESSAGE), -EPROTO (not JSON, not an
 * object, none of the three, both a result and an error), -ENOMEM.
 */
int cdp_parse(const char *buf, size_t len, struct cdp_msg **out);

/* The id of a response or error; 0 for an event. */
uint32_t cdp_msg_id(const struct cdp_msg *m);
bool cdp_msg_is_event(const struct cdp_msg *m);
/* The method of an event (sanitized, at most CDP_METHOD_MAX bytes); NULL for a response. */
const char *cdp_msg_method(const struct cdp_msg *m);
/*
 * NULL unless @m is an error response; then its text, "CODE message" ("-32601 'Profiler.foo'
 * wasn't found"), sanitized and cut to CDP_ERROR_MAX bytes. Borrowed: valid until
 * cdp_msg_free(@m), as cdp_msg_method().
 */
const char *cdp_msg_error(const struct cdp_msg *m);

/*
 * Reads the string at the dotted @path ("result.value": the fields "result" then "value"; each
 * 1..63 bytes) inside the result object of response @m into @buf (@size bytes), sanitized (a
 * control character or bad byte becomes '?'). Returns the length, or -ENOENT (no result: an
 * error or an event; a field missing or an intermediate value not an object), -EPROTO (the
 * value is not a string), -ENOSPC (it does not fit; @buf untouched), -EINVAL (a bad @path).
 */
int cdp_msg_result_string(const struct cdp_msg *m, const char *path, char *buf, size_t size);
/*
 * The same for a number: an integer, or a real with an integral value within +-2^53 (V8's
 * JSON has no integer type). Returns 0 and sets @out, -ENOENT, -EPROTO (not such a number),
 * -EINVAL.
 */
int cdp_msg_result_int(const struct cdp_msg *m, const char *path, int64_t *out);

/* Frees @m; accepts NULL. */
void cdp_msg_free(struct cdp_msg *m);

/*
 * Parses Node's `GET /json/list` answer @body (@len bytes): a JSON array of target objects.
 * Picks the first whose "webSocketDebuggerUrl" is ws://HOST:@port/PATH with HOST 127.0.0.1,
 * localhost or [::1] (only the loopback, only @port, written as Node writes it: no leading
 * zeros, nothing after PATH) and PATH 1..CDP_WS_PATH_MAX of [A-Za-z0-9-], and writes "/PATH"
 * to @ws_path (@size bytes). Other entries are skipped. Returns 0, -ENOENT (no entry
 * qualifies), -EPROTO (not a JSON array), -EFBIG (@len > CDP_MAX_TARGETS), -ENOSPC (the path
 * does not fit @ws_path, untouched), -EINVAL (@port 0, NULL pointers), -ENOMEM.
 */
int cdp_targets_parse(const char *body, size_t len, uint16_t port, char *ws_path, size_t size);

#endif
