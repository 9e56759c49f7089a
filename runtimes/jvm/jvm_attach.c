// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "base/text.h"
#include "runtimes/jvm/jvm_vmstructs.h"

/* /proc/PID/status is about 1.5 KiB; a process with many groups makes it longer. */
#define STATUS_MAX (64u << 10)
/* The child's set-up (chroot, credentials) before the start bound begins to count. */
#define CHILD_SLACK_MS 1000
/* Backoff between connection attempts after SIGQUIT: 20 ms doubling, at most 500 ms. */
#define BACKOFF_FIRST_MS 20
#define BACKOFF_MAX_MS 500
#define READ_CHUNK (64u << 10)

int jvm_attach_parse_status(const char *text, size_t len, struct jvm_attach_ids *ids)
{
	struct proc_status st;
	int err = proc_parse_status(text, len, &st);

	if (err)
		return err;
	ids->nspid = st.nspid;
	ids->euid = st.euid;
	ids->egid = st.egid;
	ids->quit_caught = (st.sigcgt >> (SIGQUIT - 1)) & 1;
	return 0;
}

int jvm_attach_parse_answer(const char *buf, size_t len, size_t max, int *code, size_t *body_off)
{
	size_t i = 0, digits = 0;
	int64_t v = 0;
	bool neg = false;

	if (!max)
		max = JVM_ATTACH_ANSWER_MAX;
	if (len > max)
		return -EFBIG;
	if (!buf || !len)
		return -ENODATA;
	if (memchr(buf, '\0', len))
		return -EILSEQ;
	if (buf[0] == '-') {
		neg = true;
		i = 1;
	}
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (++digits > 10)
			return -EBADMSG;
		v = v * 10 + (buf[i] - '0');
	}
	if (!digits || (i < len && buf[i] != '\n'))
		return -EBADMSG;
	v = neg ? -v : v;
	if (v < INT_MIN || v > INT_MAX)
		return -EBADMSG;
	*code = (int)v;
	*body_off = i < len ? i + 1 : i;
	return 0;
}

int jvm_attach_request(char *buf, size_t size, const char *cmd, const char *const *args,
		       size_t nargs)
{
	size_t n = 0, i, l;
	const char *s;

	if (!cmd || !cmd[0] || strlen(cmd) > JVM_ATTACH_CMD_MAX || nargs > JVM_ATTACH_MAX_ARGS ||
	    (nargs && !args))
		return -EINVAL;
	for (i = 0; i < 2 + JVM_ATTACH_MAX_ARGS; i++) {
		s = i == 0 ? "1" : i == 1 ? cmd : i - 2 < nargs && args[i - 2] ? args[i - 2] : "";
		l = strlen(s);
		if (i >= 2 && l > JVM_ATTACH_ARG_MAX)
			return -EINVAL;
		if (l + 1 > size - n || n > INT_MAX - l - 1)
			return -ENOSPC;
		memcpy(buf + n, s, l + 1);
		n += l + 1;
	}
	return (int)n;
}

size_t jvm_attach_text_clean(char *text, size_t len)
{
	return text ? text_utf8_valid_copy(text, len + 1, text, len) : 0;
}

const char *jvm_attach_reason(int err)
{
	switch (err) {
	case -EPERM:
		return "does not catch SIGQUIT (-Xrs), so it cannot be asked to start its attach "
		       "listener";
	case -EOPNOTSUPP:
		return "has its attach mechanism disabled (-XX:+DisableAttachMechanism)";
	case -EPROTONOSUPPORT:
		return "is not a HotSpot JVM whose attach listener the profiler can start";
	case -ETIME:
		return "did not start its attach listener in time";
	case -ETIMEDOUT:
		return "did not answer in time";
	case -EFBIG:
		return "answered more than the size limit";
	case -EBADMSG:
	case -EILSEQ:
	case -ENODATA:
		return "gave a malformed answer";
	default:
		return NULL;
	}
}

/* --- the child: inside the JVM's root, as the JVM's user -------------------------------- */

/* Everything the child needs, prepared before fork(): it only makes system calls. */
struct child {
	int rootfd, pidfd, sock; /* sock: our end of the socketpair */
	uint32_t euid, egid;
	int may_start;		 /* 0: SIGQUIT may be sent; else why not (-errno) */
	struct sockaddr_un addr; /* /tmp/.java_pid<nspid> */
	char trigger[64];	 /* /tmp/.attach_pid<nspid> */
	uint64_t deadline_ms;
};

/*
 * Confines the child: chroot into the JVM's root (every path below resolves inside it, links
 * included), then the JVM's gid and uid, no supplementary groups, no capabilities (a JVM run
 * as root keeps uid 0 but nothing more). Raw system calls: glibc's set*id wrappers signal
 * every thread, and after fork() their bookkeeping may be held by a thread that is not here.
 */
static int child_confine(const struct child *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (fchdir(c->rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return -errno;
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, c->egid, c->egid, c->egid) < 0 ||
	    syscall(SYS_setresuid, c->euid, c->euid, c->euid) < 0 ||
	    syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	/* After the credentials: changing them clears the parent-death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -errno;
	return 0;
}

/*
 * One connection attempt to the listener. The path must be a socket of the JVM's user, not
 * a link (checked first; the connect then happens inside the root anyway). Returns the
 * socket, or -ENOENT/-ECONNREFUSED/-EAGAIN (not listening yet: try again) or -errno.
 */
static int child_connect(const struct child *c)
{
	struct stat st;
	int s;

	if (fstatat(AT_FDCWD, c->addr.sun_path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != c->euid)
		return -ECONNREFUSED;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (const struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		int err = -errno;

		close(s);
		return err;
	}
	return s;
}

static bool retryable(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED || err == -EAGAIN;
}

static uint64_t child_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Tries to connect with backoff until the deadline or the JVM's exit. */
static int child_wait_listener(const struct child *c)
{
	uint64_t delay = BACKOFF_FIRST_MS, now;
	int s;

	for (;;) {
		struct timespec ts;

		now = child_now_ms();
		if (now >= c->deadline_ms)
			return -ETIME;
		if (delay > c->deadline_ms - now)
			delay = c->deadline_ms - now;
		ts.tv_sec = (time_t)(delay / 1000);
		ts.tv_nsec = (long)(delay % 1000) * 1000000;
		nanosleep(&ts, NULL);
		s = child_connect(c);
		if (s >= 0 || !retryable(s))
			return s;
		if (syscall(SYS_pidfd_send_signal, c->pidfd, 0, NULL, 0) < 0)
			return -ESRCH;
		delay = delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : delay * 2;
	}
}

/* Removes the trigger we made, unless something else now stands at its name. */
static void child_remove_trigger(const struct child *c, const struct stat *made)
{
	struct stat st;

	if (fstatat(AT_FDCWD, c->trigger, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == made->st_dev && st.st_ino == made->st_ino)
		unlink(c->trigger);
}

/*
 * Connects, or starts the listener: trigger file (O_EXCL: ours alone; one that is there
 * already belongs to someone else and is left alone), SIGQUIT, wait, remove the trigger.
 * Returns the connected socket or -errno.
 */
static int child_attach(const struct child *c)
{
	struct stat made;
	int s, tfd;

	s = child_connect(c);
	if (s >= 0 || !retryable(s))
		return s;
	if (c->may_start)
		return c->may_start;
	tfd = open(c->trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		   0600);
	if (tfd < 0 && errno != EEXIST)
		return -errno;
	if (tfd >= 0 && fstat(tfd, &made) < 0) {
		s = -errno;
		unlink(c->trigger);
		close(tfd);
		return s;
	}
	if (syscall(SYS_pidfd_send_signal, c->pidfd, SIGQUIT, NULL, 0) < 0)
		s = errno == EPERM ? -EACCES : -errno; /* -EPERM means -Xrs above */
	else
		s = child_wait_listener(c);
	if (tfd >= 0) {
		child_remove_trigger(c, &made);
		close(tfd);
	}
	return s;
}

/* Sends @err, and with 0 the socket @fd, to the parent. */
static void child_reply(int sock, int32_t err, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static void __attribute__((noreturn)) child_main(const struct child *c)
{
	int s = child_confine(c);

	if (!s)
		s = child_attach(c);
	child_reply(c->sock, s < 0 ? s : 0, s);
	_exit(0);
}

/* --- the parent ------------------------------------------------------------------------- */

static int poll_until(int fd, short events, uint64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = clock_mono_ms();
		if (now >= deadline_ms)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(deadline_ms - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* The child's reply: its -errno, or 0 and the connected socket in @fd. */
static int recv_reply(int sock, uint64_t deadline_ms, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	int32_t err = -EIO;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;
	int ret;

	*fd = -1;
	ret = poll_until(sock, POLLIN, deadline_ms);
	if (ret)
		return ret;
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	if (n != sizeof(err))
		return -EIO; /* the child died before it answered */
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	if (!err && *fd < 0)
		return -EIO;
	if (err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err > 0 ? -EIO : err;
}

/* Runs the child and returns its connected socket, or -errno. */
static int spawn_child(struct child *c, int start_ms)
{
	int sv[2], fd = -1, err, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	c->sock = sv[1];
	c->deadline_ms = clock_mono_ms() + (uint64_t)start_ms;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		child_main(c);
	}
	close(sv[1]);
	err = recv_reply(sv[0], c->deadline_ms + CHILD_SLACK_MS, &fd);
	if (err == -ETIMEDOUT) {
		/* Stuck (a /tmp on FUSE, say): it is killed; what it made may stay. */
		kill(pid, SIGKILL);
		err = -ETIME;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	close(sv[0]);
	return err ? err : fd;
}

/* Writes the request and reads the answer to its end within @o's bounds. */
static int converse(int fd, const char *req, size_t req_len, const struct jvm_attach_opts *o,
		    char **out, size_t *out_len)
{
	size_t max = o->answer_max ? o->answer_max : JVM_ATTACH_ANSWER_MAX, len = 0, cap = 0;
	uint64_t deadline = clock_mono_ms() +
			    (uint64_t)(o->answer_ms > 0 ? o->answer_ms : JVM_ATTACH_ANSWER_MS);
	char *buf = NULL, *nb;
	size_t off = 0;
	ssize_t n;
	int err;

	while (off < req_len) {
		err = poll_until(fd, POLLOUT, deadline);
		if (err)
			return err;
		n = send(fd, req + off, req_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		off += n > 0 ? (size_t)n : 0;
	}
	for (;;) {
		if (len == cap) {
			/* One byte past @max tells an answer over the cap. */
			size_t ncap = cap ? cap * 2 : READ_CHUNK;

			ncap = ncap > max + 1 ? max + 1 : ncap;
			nb = realloc(buf, ncap + 1);
			if (!nb) {
				err = -ENOMEM;
				goto err_free;
			}
			buf = nb;
			cap = ncap;
		}
		err = poll_until(fd, POLLIN, deadline);
		if (err)
			goto err_free;
		n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			err = -errno;
			goto err_free;
		}
		len += (size_t)n;
		if (len > max) {
			err = -EFBIG;
			goto err_free;
		}
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;

err_free:
	free(buf);
	return err;
}

/*
 * The JVM's ids from /proc/PID/status, checked against @pidfd afterwards: while that process
 * lives its pid cannot have been reused, so the status read was its own.
 */
static int read_ids(uint32_t tgid, int pidfd, struct jvm_attach_ids *ids)
{
	char *text = NULL;
	size_t len;
	int err;

	err = proc_read(NULL, tgid, "status", STATUS_MAX, &text, &len);
	if (!err)
		err = jvm_attach_parse_status(text, len, ids);
	free(text);
	if (err)
		return proc_gone(err);
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return -ESRCH;
	return 0;
}

/*
 * Whether the listener may be started, into @may_start: 0, -EPERM (SIGQUIT has no handler: it
 * would end the JVM), -EPROTONOSUPPORT (not a HotSpot whose tables we can read: SIGQUIT may
 * mean something else there, OpenJ9 writes a javacore file). A HotSpot whose
 * DisableAttachMechanism is true never listens: -EOPNOTSUPP at once, nothing sent. Returns 0,
 * -EOPNOTSUPP or -ESRCH.
 */
static int start_check(uint32_t tgid, const struct jvm_attach_opts *o,
		       const struct jvm_attach_ids *ids, int *may_start)
{
	const struct jvm_vmstructs *vs = o->vs;
	struct jvm_vmstructs *own = NULL;
	bool disabled = false;
	int err = 0;

	*may_start = -EPERM;
	if (!ids->quit_caught)
		return 0;
	if (!vs) {
		err = jvm_vmstructs__open(tgid, &own);
		vs = own;
	}
	if (!err)
		err = jvm_vmstructs__flag_bool(vs, jvm_read_process, &tgid,
					       "DisableAttachMechanism", &disabled);
	jvm_vmstructs__free(own);
	if (err == -ESRCH)
		return err;
	if (!err && disabled)
		return -EOPNOTSUPP;
	*may_start = err ? -EPROTONOSUPPORT : 0;
	return 0;
}

/* Connects to the listener of @tgid (started if need be). Returns the socket or -errno. */
static int attach_connect(uint32_t tgid, const struct jvm_attach_opts *o)
{
	struct child c = { .rootfd = -1, .sock = -1 };
	struct jvm_attach_ids ids = {};
	int err, pidfd;

	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0);
	if (pidfd < 0)
		return proc_gone(-errno);
	err = read_ids(tgid, pidfd, &ids);
	if (!err)
		err = start_check(tgid, o, &ids, &c.may_start);
	if (err)
		goto out;
	c.rootfd = safe_open_root(NULL, tgid);
	if (c.rootfd < 0) {
		err = c.rootfd;
		goto out;
	}
	c.pidfd = pidfd;
	c.euid = ids.euid;
	c.egid = ids.egid;
	c.addr.sun_family = AF_UNIX;
	snprintf(c.addr.sun_path, sizeof(c.addr.sun_path), "/tmp/.java_pid%u", ids.nspid);
	snprintf(c.trigger, sizeof(c.trigger), "/tmp/.attach_pid%u", ids.nspid);
	err = spawn_child(&c, o->start_ms > 0 ? o->start_ms : JVM_ATTACH_START_MS);
out:
	if (c.rootfd >= 0)
		close(c.rootfd);
	close(pidfd);
	return err;
}

int jvm_attach_run(uint32_t tgid, const char *cmd, const char *const *args, size_t nargs,
		   const struct jvm_attach_opts *opts, int *code, char **text, size_t *len)
{
	static const struct jvm_attach_opts defaults;
	const struct jvm_attach_opts *o = opts ? opts : &defaults;
	char req[2 + JVM_ATTACH_CMD_MAX + 1 + JVM_ATTACH_MAX_ARGS * (JVM_ATTACH_ARG_MAX + 1)];
	char *buf = NULL;
	size_t n = 0, off = 0;
	int req_len, fd, err, rc;

	if (!tgid || !code || !text || !len)
		return -EINVAL;
	req_len = jvm_attach_request(req, sizeof(req), cmd, args, nargs);
	if (req_len < 0)
		return req_len;
	fd = attach_connect(tgid, o);
	if (fd < 0)
		return fd;
	err = converse(fd, req, (size_t)req_len, o, &buf, &n);
	close(fd);
	if (err)
		return err;
	err = jvm_attach_parse_answer(buf, n, o->answer_max, &rc, &off);
	if (err) {
		free(buf);
		return err;
	}
	memmove(buf, buf + off, n - off + 1);
	*code = rc;
	*text = buf;
	*len = n - off;
	return 0;
}
