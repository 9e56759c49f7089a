/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_inspector: a DevTools session with the V8 inspector of a running Node.js process, opened
 * for a capture and closed again (docs/node.md).
 *
 * Opening: the inspector listens on the loopback of the process's own network namespace. If
 * the process already listens with it (it was started with --inspect, or opened it itself), that
 * listener is used and left open at the end. Otherwise the process is sent SIGUSR1 (through a
 * pidfd, so a reused pid is never signalled), which makes Node open it, but only when
 * /proc/PID/status shows that SIGUSR1 is caught (its default action would end the process) and
 * its command line and NODE_OPTIONS do not say --disable-sigusr1 (Node.js 22.14 and later: it
 * is then ignored, or not caught). The new listener must be
 * the process's own socket (its fds), on a loopback address; its `GET /json/list` names the
 * WebSocket (runtimes/nshttp.h), the session runs over a WebSocket from a thread inside the
 * namespace (runtimes/node/nsws.h), and `process.pid` evaluated in it must be the process's
 * own pid: no other process's inspector is ever used.
 *
 * Closing: an inspector we opened is closed with `process._debugEnd()` (what
 * `inspector.close()` calls) and its port is checked to be gone. Not thread-safe per session.
 */
#ifndef SLIDEOPS_RUNTIMES_NODE_INSPECTOR_H
#define SLIDEOPS_RUNTIMES_NODE_INSPECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_msg;

#define NODE_INSP_WHY_MAX 256
/* Node's default inspector port (SIGUSR1 opens it there unless --inspect-port says otherwise). */
#define NODE_INSP_DEFAULT_PORT 9229

/* All zero: the defaults. */
struct node_insp_opts {
	const char *proc_root; /* NULL: /proc */
	int open_ms;	       /* wait for the listener after SIGUSR1; 0: 3000 */
	int call_ms;	       /* a command's answer; 0: 5000 */
	size_t max_message;    /* largest message read; 0: CDP_MAX_MESSAGE */
	/* called just before SIGUSR1 is sent (to journal that an inspector may open); may be
	 * NULL */
	void (*on_signal)(void *ctx);
	void *ctx;
};

struct node_insp;

/*
 * Opens a session with the inspector of process @pid. Returns 0 with @out, or with a reason in
 * @why (NODE_INSP_WHY_MAX fits):
 *   -ENOTSUP     it does not catch SIGUSR1, or was started with --disable-sigusr1: nothing
 *                was sent
 *   -EADDRINUSE  no listener of its own appeared and its inspector port is another socket's
 *   -ETIMEDOUT   no listener of its own within open_ms
 *   -EPROTO      what listens is not a Node inspector, or not this process's
 *   -EACCES      its inspector listens beyond the loopback (it was closed again at once)
 *   -ESRCH       the process is gone; -ENOMEM, -EPERM or another -errno
 * An inspector opened here and not connected is closed again before the return.
 */
int node_insp__open(const struct node_insp_opts *o, uint32_t pid, struct node_insp **out, char *why,
		    size_t size);

/*
 * Whether SIGUSR1 would open the inspector of process @pid (@proc_root NULL: /proc), as
 * node_insp__open() decides it, without sending anything. Returns 0, -ENOTSUP with the reason
 * in @why, -ESRCH or another -errno.
 */
int node_insp_openable(const char *proc_root, uint32_t pid, char *why, size_t size);

/*
 * Closes the inspector process @pid listens with on loopback port @port, one a capture opened
 * and could not close (it was killed): a session, process._debugEnd(), the port gone. Returns
 * 0, -ENOENT when it no longer listens there, -ETIMEDOUT when it still does, or the errors of
 * node_insp__open() (its reason in @why).
 */
int node_insp_close_left(const struct node_insp_opts *o, uint32_t pid, uint16_t port, char *why,
			 size_t size);

/* True when the inspector was open before node_insp__open() (it is left open). */
bool node_insp__was_open(const struct node_insp *n);
uint16_t node_insp__port(const struct node_insp *n);

/*
 * Sends @method with @params (a JSON object text, or NULL) and waits up to @timeout_ms (0: the
 * default) for its answer, skipping events. Returns 0 with the answer in @out (the caller
 * frees it with cdp_msg_free()), or: -EREMOTEIO (an error answer, its text in @why),
 * -ETIMEDOUT, -EPIPE (the session ended), -EFBIG (a message over the limit), -EPROTO.
 */
int node_insp__call(struct node_insp *n, const char *method, const char *params, int timeout_ms,
		    struct cdp_msg **out, char *why, size_t size);

/* The same, with the answer's whole text (NUL-terminated, the caller frees it) in @text and
 * @len instead of the parsed message: for the large answers (the profiles). */
int node_insp__call_text(struct node_insp *n, const char *method, const char *params,
			 int timeout_ms, char **text, size_t *len, char *why, size_t size);

/*
 * Ends the session; closes an inspector it opened and waits (up to a second) for its port to
 * go. Returns 0, -ETIMEDOUT when the port still listens (reason in @why), or another -errno.
 * Frees @n; accepts NULL.
 */
int node_insp__close(struct node_insp *n, char *why, size_t size);

#endif
