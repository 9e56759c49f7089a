// SPDX-License-Identifier: Apache-2.0
#include "runtimes/node/node_inspector.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/proc.h"
#include "base/text.h"
#include "runtimes/node/cdp.h"
#include "runtimes/node/nsws.h"
#include "runtimes/nshttp.h"
#include "runtimes/proclisten.h"

#define STATUS_MAX (64u << 10)
#define CMDLINE_MAX (64u << 10)
#define LIST_MAX (1u << 20)    /* GET /json/list: a few hundred bytes per target */
#define LIST_MS 1000	       /* GET /json/list */
#define POLL_MS 50	       /* looking for the new listener */
#define CLOSE_MS 1000	       /* process._debugEnd() and the port going away */
#define MAX_QUEUED (32u << 20) /* received messages not yet taken */
#define MAX_EVENTS 100000      /* events skipped while waiting for one answer */
#define PROBE_MAX 4	       /* listeners of its own looked at for an open inspector */

struct node_insp {
	struct node_insp_opts o;
	int pid_fd, pidfd;
	uint32_t pid, nspid;
	uint16_t port;
	char host[NSHTTP_HOST_MAX];
	uint64_t inode; /* the inspector's listening socket */
	bool was_open;
	struct nsws *ws;
	uint32_t next_id;
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool is_loopback(const struct procnet_entry *e)
{
	static const uint8_t v6_lo[16] = { [15] = 1 };
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!e->v6)
		return e->addr[0] == 127;
	return !memcmp(e->addr, v6_lo, 16) ||
	       (!memcmp(e->addr, v4_mapped, 12) && e->addr[12] == 127);
}

static bool is_wildcard(const struct procnet_entry *e)
{
	static const uint8_t zero[16];

	return !memcmp(e->addr, zero, e->v6 ? 16 : 4);
}

/* The address to reach listener @e at from inside its namespace: its own loopback address, the
 * loopback for a wildcard one, "" for any other (never used). */
static void reach_host(const struct procnet_entry *e, char *host, size_t size)
{
	host[0] = '\0';
	if (is_loopback(e)) {
		if (procnet_format_addr(e, host, size))
			host[0] = '\0';
	} else if (is_wildcard(e)) {
		snprintf(host, size, "%s", e->v6 ? "[::1]" : "127.0.0.1");
	}
}

/* The process's own listening sockets now, into @l (PROC_LISTEN_MAX). Returns the count. */
static int own_listeners(int pid_fd, struct procnet_entry *l)
{
	size_t n = 0;
	int err = proc_listening_read(pid_fd, l, PROC_LISTEN_MAX, &n);

	return err ? err : proc_listening_owned(pid_fd, l, n);
}

/* GET /json/list of the listener at @host:@port: its WebSocket path into @path. */
static int targets(int pid_fd, const char *host, uint16_t port, char *path, size_t size)
{
	struct nshttp_req req = { .host = host,
				  .port = port,
				  .path = "/json/list",
				  .timeout_ms = LIST_MS,
				  .max_bytes = LIST_MAX,
				  .max_header_bytes = 64u << 10 };
	struct nshttp_res res = {};
	int err;

	err = nshttp_get_all(pid_fd, &req, &res, 1, NULL);
	if (err)
		return err;
	err = res.err ? (res.err == -EFBIG ? -EPROTO : res.err) :
			cdp_targets_parse(res.body, res.len, port, path, size);
	free(res.body);
	return err == -ENOENT ? -EPROTO : err;
}

/* True when the process's /proc file @name holds @flag (its command line, its environment's
 * NODE_OPTIONS). Bounded; the words are not parsed, a mention is enough. */
static bool mentions(int pid_fd, const char *name, const char *flag)
{
	size_t len, i, n = strlen(flag);
	bool hit = false;
	char *buf;

	if (read_file_bounded(pid_fd, name, CMDLINE_MAX, &buf, &len))
		return false;
	for (i = 0; i + n <= len && !hit; i++)
		hit = !memcmp(buf + i, flag, n);
	free(buf);
	return hit;
}

static bool inspect_flag(int pid_fd)
{
	return mentions(pid_fd, "cmdline", "--inspect");
}

/* --disable-sigusr1 (Node.js 22.14, 23.7): SIGUSR1 is still caught, and ignored. */
static bool sigusr1_disabled(int pid_fd)
{
	return mentions(pid_fd, "cmdline", "--disable-sigusr1") ||
	       mentions(pid_fd, "environ", "--disable-sigusr1");
}

/* An inspector the process already listens with: its port 9229, or any of its loopback
 * listeners when its command line has --inspect*. Returns 0 with the path, or -ENOENT. */
static int find_open(struct node_insp *n, char *path, size_t size)
{
	struct procnet_entry l[PROC_LISTEN_MAX];
	bool any = inspect_flag(n->pid_fd);
	int k, i, probed = 0;

	k = own_listeners(n->pid_fd, l);
	for (i = 0; i < k && probed < PROBE_MAX; i++) {
		if (!is_loopback(&l[i]) || (!any && l[i].port != NODE_INSP_DEFAULT_PORT))
			continue;
		probed++;
		reach_host(&l[i], n->host, sizeof(n->host));
		if (targets(n->pid_fd, n->host, l[i].port, path, size) == 0) {
			n->port = l[i].port;
			n->inode = l[i].inode;
			n->was_open = true;
			return 0;
		}
	}
	return k < 0 ? k : -ENOENT;
}

static bool known_inode(const struct procnet_entry *l, int n, uint64_t inode)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i].inode == inode)
			return true;
	return false;
}

/* After SIGUSR1: the listener of its own that was not there before (@before, @nb). */
static int wait_new(struct node_insp *n, const struct procnet_entry *before, int nb,
		    struct procnet_entry *found)
{
	struct procnet_entry l[PROC_LISTEN_MAX];
	uint64_t end = clock_mono_ms() + (uint64_t)n->o.open_ms;
	int k, i;

	do {
		sleep_ms(POLL_MS);
		k = own_listeners(n->pid_fd, l);
		if (k < 0)
			return k;
		for (i = 0; i < k; i++)
			if (!known_inode(before, nb, l[i].inode)) {
				*found = l[i];
				return 0;
			}
	} while (clock_mono_ms() < end);
	return -ETIMEDOUT;
}

/* Why no listener appeared: port 9229 of the namespace already taken by another socket. */
static int why_none(struct node_insp *n, char *why, size_t size)
{
	struct procnet_entry l[PROC_LISTEN_MAX];
	size_t k = 0, i;

	if (proc_listening_read(n->pid_fd, l, PROC_LISTEN_MAX, &k) == 0)
		for (i = 0; i < k; i++)
			if (l[i].port == NODE_INSP_DEFAULT_PORT) {
				text_setf(why, size,
					  "its inspector could not open: port %u of its network "
					  "namespace is taken by another socket (another process's "
					  "inspector?)",
					  NODE_INSP_DEFAULT_PORT);
				return -EADDRINUSE;
			}
	text_setf(why, size, "its inspector did not open within %d ms of SIGUSR1", n->o.open_ms);
	return -ETIMEDOUT;
}

static int read_status(int pid_fd, struct proc_status *st)
{
	size_t len;
	char *buf;
	int err;

	err = read_file_bounded(pid_fd, "status", STATUS_MAX, &buf, &len);
	if (err)
		return proc_gone(err);
	err = proc_parse_status(buf, len, st);
	free(buf);
	return err;
}

/* The process's pid in its own namespace: what process.pid says in it. */
static int read_nspid(int pid_fd, uint32_t *nspid)
{
	struct proc_status st;
	int err = read_status(pid_fd, &st);

	if (!err)
		*nspid = st.nspid;
	return err;
}

/* Whether SIGUSR1 opens the inspector of the process at @pid_fd. */
static int sigusr1_opens(int pid_fd, char *why, size_t size)
{
	struct proc_status st;
	int err = read_status(pid_fd, &st);

	if (err)
		return err;
	if (sigusr1_disabled(pid_fd)) {
		text_setf(why, size,
			  "it was started with --disable-sigusr1, so its inspector cannot be opened "
			  "from outside");
		return -ENOTSUP;
	}
	if (!((st.sigcgt >> (SIGUSR1 - 1)) & 1)) {
		text_setf(why, size,
			  "it does not catch SIGUSR1, so SlideOps cannot open its inspector: the "
			  "signal would end it");
		return -ENOTSUP;
	}
	return 0;
}

int node_insp_openable(const char *proc_root, uint32_t pid, char *why, size_t size)
{
	char dir[64];
	int fd, err;

	err = proc_path(dir, sizeof(dir), proc_root, pid, "");
	if (err)
		return err;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return proc_gone(-errno);
	err = sigusr1_opens(fd, why, size);
	close(fd);
	return err;
}

/* Sends SIGUSR1 when it opens the inspector, and finds the listener it opens. */
static int open_new(struct node_insp *n, struct procnet_entry *found, char *why, size_t size)
{
	struct procnet_entry before[PROC_LISTEN_MAX];
	int nb, err;

	err = sigusr1_opens(n->pid_fd, why, size);
	if (err)
		return err;
	nb = own_listeners(n->pid_fd, before);
	if (nb < 0)
		return nb;
	if (n->o.on_signal)
		n->o.on_signal(n->o.ctx);
	if (syscall(SYS_pidfd_send_signal, n->pidfd, SIGUSR1, NULL, 0) < 0)
		return proc_gone(-errno);
	err = wait_new(n, before, nb, found);
	if (err == -ETIMEDOUT)
		return why_none(n, why, size);
	return err;
}

static int connect_ws(struct node_insp *n, const char *path, char *why, size_t size)
{
	struct nsws_opts wo = {
		.host = n->host[0] == '[' ? "::1" : n->host,
		.port = n->port,
		.path = path,
		.connect_ms = n->o.call_ms,
		.max_message = n->o.max_message,
		.max_queued = MAX_QUEUED,
	};
	char note[NSWS_NOTE_MAX] = "";
	int err = nsws_open_note(n->pid_fd, &wo, &n->ws, note, sizeof(note));

	if (err)
		text_setf(why, size, "cannot open a DevTools session on port %u (%s)", n->port,
			  note[0] ? note : strerror(-err));
	return err;
}

/* The session must be the process's own: process.pid in it is its pid in its namespace. */
static int check_pid(struct node_insp *n, char *why, size_t size)
{
	struct cdp_msg *m;
	int64_t pid = 0;
	int err;

	err = node_insp__call(n, "Runtime.evaluate",
			      "{\"expression\":\"process.pid\",\"returnByValue\":true}", 0, &m, why,
			      size);
	if (err)
		return err;
	err = cdp_msg_result_int(m, "result.value", &pid);
	cdp_msg_free(m);
	if (err || pid != (int64_t)n->nspid) {
		text_setf(why, size, "the inspector on port %u is not this process's", n->port);
		return -EPROTO;
	}
	return 0;
}

static int insp_new(const struct node_insp_opts *o, uint32_t pid, struct node_insp **out)
{
	struct node_insp *n = calloc(1, sizeof(*n));
	char dir[64];
	int err;

	if (!n)
		return -ENOMEM;
	n->pid_fd = n->pidfd = -1;
	n->o = *o;
	if (!n->o.open_ms)
		n->o.open_ms = 3000;
	if (!n->o.call_ms)
		n->o.call_ms = 5000;
	if (!n->o.max_message || n->o.max_message > CDP_MAX_MESSAGE)
		n->o.max_message = CDP_MAX_MESSAGE;
	n->pid = pid;
	n->next_id = 1;
	/* the pidfd first: while it refers to a live process, /proc/PID is that process */
	n->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	err = n->pidfd < 0 ? proc_gone(-errno) : proc_path(dir, sizeof(dir), o->proc_root, pid, "");
	if (!err) {
		n->pid_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = n->pid_fd < 0 ? proc_gone(-errno) : 0;
	}
	if (!err && syscall(SYS_pidfd_send_signal, n->pidfd, 0, NULL, 0) < 0)
		err = proc_gone(-errno);
	if (!err)
		err = read_nspid(n->pid_fd, &n->nspid);
	if (err) {
		node_insp__close(n, NULL, 0);
		return err;
	}
	*out = n;
	return 0;
}

/* Opens a session on the listener @l we made it open (its address checked). */
static int attach_new(struct node_insp *n, const struct procnet_entry *l, char *path, size_t psize,
		      char *why, size_t size)
{
	n->port = l->port;
	n->inode = l->inode;
	reach_host(l, n->host, sizeof(n->host));
	if (!n->host[0]) {
		text_setf(
			why, size,
			"its inspector opened on a non-loopback address, port %u (--inspect-port): "
			"SlideOps talks to it only over the loopback and could not close it",
			n->port);
		return -EACCES;
	}
	return targets(n->pid_fd, n->host, n->port, path, psize);
}

int node_insp__open(const struct node_insp_opts *o, uint32_t pid, struct node_insp **out, char *why,
		    size_t size)
{
	static const struct node_insp_opts none;
	struct procnet_entry l = {};
	struct node_insp *n;
	uint16_t n_port;
	char path[160];
	int err;

	err = insp_new(o ? o : &none, pid, &n);
	if (err) {
		text_setf(why, size, "it is gone (%s)", strerror(-err));
		return err;
	}
	err = find_open(n, path, sizeof(path));
	if (err == -ENOENT) {
		err = open_new(n, &l, why, size);
		if (!err)
			err = attach_new(n, &l, path, sizeof(path), why, size);
		if (err == -EPROTO)
			text_setf(why, size, "what opened on port %u is not a Node.js inspector",
				  n->port);
	} else if (err) {
		text_setf(why, size, "cannot read its sockets (%s)", strerror(-err));
	}
	if (!err)
		err = connect_ws(n, path, why, size);
	if (!err)
		err = check_pid(n, why, size);
	n_port = n->port;
	if (!err && !n->was_open && !is_loopback(&l)) {
		text_setf(why, size,
			  "its inspector opened beyond the loopback, on port %u of every address "
			  "(--inspect-port): SlideOps closed it again at once",
			  n->port);
		err = -EACCES;
	}
	if (err && node_insp__close(n, NULL, 0) == -ETIMEDOUT && why && size) {
		size_t len = strlen(why);

		snprintf(why + len, size - len,
			 "; the inspector it opened for the capture could not be closed again and "
			 "stays open on the container's loopback, port %u",
			 n_port);
	}
	if (err)
		return err;
	*out = n;
	return 0;
}

int node_insp_close_left(const struct node_insp_opts *o, uint32_t pid, uint16_t port, char *why,
			 size_t size)
{
	static const struct node_insp_opts none;
	struct procnet_entry l[PROC_LISTEN_MAX];
	struct node_insp *n;
	char path[160];
	int k, i, err;

	err = insp_new(o ? o : &none, pid, &n);
	if (err)
		return err;
	k = own_listeners(n->pid_fd, l);
	err = k < 0 ? k : -ENOENT;
	for (i = 0; i < k; i++) {
		if (l[i].port != port || (!is_loopback(&l[i]) && !is_wildcard(&l[i])))
			continue;
		reach_host(&l[i], n->host, sizeof(n->host));
		n->port = port;
		n->inode = l[i].inode;
		err = targets(n->pid_fd, n->host, port, path, sizeof(path));
		break;
	}
	if (!err)
		err = connect_ws(n, path, why, size);
	if (!err)
		err = check_pid(n, why, size);
	if (err) {
		n->inode = 0; /* not ours to wait for */
		node_insp__close(n, NULL, 0);
		return err;
	}
	return node_insp__close(n, why, size);
}

bool node_insp__was_open(const struct node_insp *n)
{
	return n->was_open;
}

uint16_t node_insp__port(const struct node_insp *n)
{
	return n->port;
}

/* The answer to a call: parsed, and its text when asked for. */
struct answer {
	struct cdp_msg *msg;
	char *text;
	size_t len;
	bool want_text;
};

/* Waits for the answer to @id; events and other answers are skipped. */
static int wait_answer(struct node_insp *n, uint32_t id, int timeout_ms, struct answer *a,
		       char *why, size_t size)
{
	uint64_t end = clock_mono_ms() + (uint64_t)timeout_ms;
	unsigned skipped = 0;
	struct cdp_msg *m;
	size_t len;
	char *text;
	int err;

	for (;;) {
		uint64_t now = clock_mono_ms();

		if (now >= end || skipped > MAX_EVENTS)
			return -ETIMEDOUT;
		err = nsws_recv(n->ws, (int)(end - now), &text, &len);
		if (err)
			return err;
		err = cdp_parse(text, len, &m);
		if (!err && (cdp_msg_is_event(m) || cdp_msg_id(m) != id)) {
			cdp_msg_free(m);
			free(text);
			skipped++;
			continue;
		}
		if (!err && cdp_msg_error(m)) {
			text_setf(why, size, "%s", cdp_msg_error(m));
			err = -EREMOTEIO;
			cdp_msg_free(m);
		}
		if (err || !a->want_text) {
			free(text);
			text = NULL;
		}
		if (err)
			return err;
		a->msg = m;
		a->text = text;
		a->len = len;
		return 0;
	}
}

/* Why @method got no answer, in words. */
static void call_why(const struct node_insp *n, const char *method, int err, int ms, char *why,
		     size_t size)
{
	switch (err) {
	case -ETIMEDOUT:
		text_setf(why, size, "%s: no answer within %d ms", method, ms);
		break;
	case -EFBIG:
		text_setf(why, size, "%s: a message over %zu MiB came instead of its answer",
			  method, n->o.max_message >> 20);
		break;
	case -ENOBUFS:
		text_setf(why, size, "%s: more messages came than are kept (%u MiB) while waiting",
			  method, MAX_QUEUED >> 20);
		break;
	case -EPIPE:
		text_setf(why, size, "%s: the session ended", method);
		break;
	case -EPROTO:
		text_setf(why, size, "%s: what came is not the DevTools protocol", method);
		break;
	default:
		text_setf(why, size, "%s: %s", method, strerror(-err));
	}
}

static int call(struct node_insp *n, const char *method, const char *params, int timeout_ms,
		struct answer *a, char *why, size_t size)
{
	char cmd[4096];
	uint32_t id = n->next_id++;
	int len, err;

	if (!n->ws)
		return -EPIPE;
	len = cdp_command(cmd, sizeof(cmd), id, method, params);
	if (len < 0)
		return len;
	err = nsws_send(n->ws, cmd, (size_t)len);
	if (!err)
		err = wait_answer(n, id, timeout_ms > 0 ? timeout_ms : n->o.call_ms, a, why, size);
	if (err && err != -EREMOTEIO)
		call_why(n, method, err, timeout_ms > 0 ? timeout_ms : n->o.call_ms, why, size);
	return err;
}

int node_insp__call(struct node_insp *n, const char *method, const char *params, int timeout_ms,
		    struct cdp_msg **out, char *why, size_t size)
{
	struct answer a = {};
	int err = call(n, method, params, timeout_ms, &a, why, size);

	if (!err)
		*out = a.msg;
	return err;
}

int node_insp__call_text(struct node_insp *n, const char *method, const char *params,
			 int timeout_ms, char **text, size_t *len, char *why, size_t size)
{
	struct answer a = { .want_text = true };
	int err = call(n, method, params, timeout_ms, &a, why, size);

	if (err)
		return err;
	cdp_msg_free(a.msg);
	*text = a.text;
	*len = a.len;
	return 0;
}

/* Whether the inspector's listening socket is still there. */
static bool still_listening(struct node_insp *n)
{
	struct procnet_entry l[PROC_LISTEN_MAX];
	int k = own_listeners(n->pid_fd, l);

	return k > 0 && known_inode(l, k, n->inode);
}

static int close_inspector(struct node_insp *n, char *why, size_t size)
{
	uint64_t end;
	struct cdp_msg *m = NULL;
	char ignored[NODE_INSP_WHY_MAX];

	/* the answer may never come: closing ends the session too */
	if (n->ws &&
	    node_insp__call(n, "Runtime.evaluate", "{\"expression\":\"process._debugEnd()\"}",
			    CLOSE_MS, &m, ignored, sizeof(ignored)) == 0)
		cdp_msg_free(m);
	nsws_close(n->ws);
	n->ws = NULL;
	end = clock_mono_ms() + CLOSE_MS;
	while (still_listening(n)) {
		if (clock_mono_ms() >= end) {
			text_setf(why, size, "its inspector still listens on port %u", n->port);
			return -ETIMEDOUT;
		}
		sleep_ms(POLL_MS);
	}
	return 0;
}

int node_insp__close(struct node_insp *n, char *why, size_t size)
{
	int err = 0;

	if (!n)
		return 0;
	if (n->inode && !n->was_open && n->pid_fd >= 0)
		err = close_inspector(n, why, size);
	nsws_close(n->ws);
	if (n->pid_fd >= 0)
		close(n->pid_fd);
	if (n->pidfd >= 0)
		close(n->pidfd);
	free(n);
	return err;
}
