/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nsws: one WebSocket client connection (RFC 6455, plain ws://, text messages) to a loopback
 * port inside another process's network namespace, open for as long as the caller wants (a
 * DevTools session lasts the whole capture), none of whose costs can exceed its bounds.
 *
 * Like runtimes/nshttp.h, the socket lives in a thread that enters the process's network
 * namespace (setns CLONE_NEWNET on /proc/PID/ns/net; never the mount namespace) and the
 * caller's threads never move. Here the thread stays for the connection's life: it owns a
 * libwebsockets context of its own (no state is shared between connections, so any number may
 * be open at once) and runs its service loop; the caller's calls exchange messages with it
 * through bounded queues and wake it with lws_cancel_service(). The WebSocket framing is
 * libwebsockets'; the handshake offers no subprotocol, no extension (no permessage-deflate),
 * sends no Origin, follows no redirect and never goes through a proxy (http_proxy in the
 * environment is ignored). Received messages are bounded one by one (max_message, fragments
 * summed) and all together (max_queued); the messages waiting to be sent by max_send_queued.
 *
 * nsws_open() needs CAP_SYS_ADMIN (setns). One connection's functions may be called from
 * different threads, but not at once: a connection is used by one thread at a time.
 */
#ifndef SLIDEOPS_RUNTIMES_NODE_NSWS_H
#define SLIDEOPS_RUNTIMES_NODE_NSWS_H

#include <stddef.h>
#include <stdint.h>

#define NSWS_MAX_MESSAGE_MAX (64u << 20)	       /* largest max_message */
#define NSWS_MAX_QUEUED_MAX (256u << 20)	       /* largest max_queued */
#define NSWS_MAX_SEND_MAX (64u << 20)		       /* largest max_send_queued */
#define NSWS_CONNECT_MAX_MS (60 * 1000)		       /* largest connect_ms */
#define NSWS_PATH_LEN_MAX 257			       /* '/' and 256 more */
#define NSWS_HOST_HEADER_MAX sizeof("127.0.0.1:65535") /* the longest, with its NUL */
#define NSWS_CLOSE_MS 1000 /* nsws_close() waits for the closing handshake */
#define NSWS_NOTE_MAX 160

/* All zero but host, port and path: the defaults. */
struct nsws_opts {
	const char *host;	/* "127.0.0.1" or "::1": nothing else (a name would be resolved by
				 * the agent's resolver, another address is not the loopback) */
	uint16_t port;		/* not 0 */
	const char *path;	/* "/<uuid>": '/' then 1 to 256 of [A-Za-z0-9-_/.] */
	int connect_ms;		/* TCP connection and handshake; 0: 2000 */
	size_t max_message;	/* largest whole received message; 0: 16 MiB */
	size_t max_queued;	/* bytes of received messages not yet taken (with a per-message
				 * overhead), at least max_message; 0: max(64 MiB, max_message) */
	size_t max_send_queued; /* bytes of messages not yet sent; 0: 1 MiB */
};

struct nsws;

/*
 * Opens ws://@o->host:@o->port@o->path inside the network namespace of the process whose
 * /proc/PID directory is open as @pid_dir_fd (the call does not keep or close it; it is used
 * only before the call returns), sending "Host: 127.0.0.1:<port>" ("[::1]:<port>"). Returns
 * when the handshake is done or failed, within connect_ms plus a second.
 *
 * Returns 0 with @out (nsws_close() frees it); or, with @out untouched and a short note for a
 * person in @note (@size bytes, NSWS_NOTE_MAX fits; @note may be NULL):
 *   -EINVAL        @o fails nsws_opts_check(), @pid_dir_fd < 0, @out NULL
 *   -ECONNREFUSED  nothing accepts connections there ("cannot connect: connection refused")
 *   -ETIMEDOUT     no completed handshake within connect_ms ("no WebSocket handshake within
 *                  2000 ms"): a server that never answers, or answers slowly
 *   -EPROTO        what answers is not a WebSocket server: an HTTP status other than 101
 *                  ("HTTP 404 instead of a WebSocket"), a malformed or oversized answer, a
 *                  wrong Sec-WebSocket-Accept, a connection closed before the answer
 *   -ESRCH         the process is gone
 *   -EPERM/-EACCES setns refused
 *   -ENOMEM, -EAGAIN (no thread)
 */
int nsws_open_note(int pid_dir_fd, const struct nsws_opts *o, struct nsws **out, char *note,
		   size_t size);

/* nsws_open_note() without the note. */
int nsws_open(int pid_dir_fd, const struct nsws_opts *o, struct nsws **out);

/*
 * Queues the @len bytes of @text (UTF-8, no NUL needed) to be sent as one text message, and
 * returns without waiting for it to go out. Returns 0; -EPIPE when the connection has ended
 * (or is ending); -ENOBUFS when the messages not yet sent would exceed max_send_queued (a peer
 * that stops reading); -ENOMEM; -EINVAL (@c NULL, @text NULL with @len > 0).
 */
int nsws_send(struct nsws *c, const char *text, size_t len);

/*
 * Takes the next whole received text message, waiting up to @timeout_ms (0: does not wait).
 * Returns 0 with @msg (NUL-terminated, the caller frees it) and @len (bytes without the NUL;
 * the text may hold other NULs); the messages that arrived before the connection ended are
 * all taken first. Then, once the connection has ended, the same error on every call:
 *   -EPIPE    the peer closed the connection, or it broke
 *   -EFBIG    a message was larger than max_message (nsws closed the connection)
 *   -ENOBUFS  the messages not taken exceeded max_queued (nsws closed the connection)
 *   -EPROTO   a binary message arrived: a DevTools server sends text only (closed)
 *   -ENOMEM   no memory for a message (closed)
 * Or -ETIMEDOUT (nothing within @timeout_ms), -EINVAL (@c, @msg or @len NULL, @timeout_ms < 0).
 * @msg and @len are written only on success.
 */
int nsws_recv(struct nsws *c, int timeout_ms, char **msg, size_t *len);

/*
 * Closes the connection (a close frame with status 1000, then up to NSWS_CLOSE_MS for the
 * peer's answer; after that the socket is closed anyway), ends the thread and frees @c with
 * the messages not taken. Returns within NSWS_CLOSE_MS plus a little. Accepts NULL.
 */
void nsws_close(struct nsws *c);

/* --- pure helpers, no I/O ---------------------------------------------------------------- */

/*
 * Checks @o as nsws_open() does: host "127.0.0.1" or "::1", a port, a path as in struct
 * nsws_opts, connect_ms from 0 to NSWS_CONNECT_MAX_MS, max_message up to NSWS_MAX_MESSAGE_MAX,
 * max_queued up to NSWS_MAX_QUEUED_MAX and, when given, not below the max_message in effect,
 * max_send_queued up to NSWS_MAX_SEND_MAX. Returns 0 or -EINVAL. Stateless.
 */
int nsws_opts_check(const struct nsws_opts *o);

/*
 * Writes the Host header's value for @host ("127.0.0.1" or "::1") and @port into @buf:
 * "127.0.0.1:9229", "[::1]:9229". Returns its length; -EINVAL (another host, port 0, @buf
 * NULL) or -ENOSPC (@size too small: NSWS_HOST_HEADER_MAX fits), with @buf untouched.
 */
int nsws_host_header(const char *host, uint16_t port, char *buf, size_t size);

/*
 * The error of a handshake that libwebsockets gave up on, from its reason text @why (NULL:
 * none) and the HTTP status it received (@status, 0: none), with a note for a person in @note
 * (@size bytes; nothing written when @note is NULL or @size 0). Returns -EPROTO for a status
 * other than 101 ("HTTP 404 instead of a WebSocket") and for a reply that is not a WebSocket
 * handshake, -ECONNREFUSED when the connection was refused, -ETIMEDOUT for libwebsockets' own
 * timeouts. Stateless.
 */
int nsws_handshake_error(const char *why, int status, char *note, size_t size);

#endif
