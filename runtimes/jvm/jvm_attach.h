/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_attach: HotSpot's dynamic attach protocol, spoken from outside the JVM's container (no
 * jcmd, no jattach, nothing run in the container), for one command ("threaddump", "jcmd").
 *
 * What it does to a JVM (docs/jvm.md says why each step is safe):
 * - reads /proc/PID/status: the JVM's pid in its own namespace (NSpid), its effective uid and
 *   gid, and whether it catches SIGQUIT (a JVM run with -Xrs does not: SIGQUIT would kill it;
 *   such a JVM starts its listener at start-up, and without one it is refused with -EPERM
 *   before any file is made or signal sent);
 * - reads its VMStructs (jvm_vmstructs.h): a signal is only ever sent to a HotSpot JVM whose
 *   DisableAttachMechanism flag is off (with it on, -EOPNOTSUPP at once: SIGQUIT would only
 *   make the JVM print a thread dump to its own output);
 * - forks a short-lived child that chroots into /proc/PID/root (opened with safe_open_root())
 *   and becomes the JVM's uid/gid with no groups and no capabilities, so every path it touches
 *   inside the container resolves there and it can do nothing the JVM's own user could not;
 * - the child connects to /tmp/.java_pid<nspid>; when there is no listener yet it creates
 *   /tmp/.attach_pid<nspid> (O_CREAT | O_EXCL | O_NOFOLLOW, so owned by the JVM's uid/gid as
 *   HotSpot requires), sends SIGQUIT through a pidfd (never to a reused pid), tries again with
 *   backoff within the start bound, and removes the trigger it made before it answers;
 * - the connected socket comes back to this process (SCM_RIGHTS); the request
 *   "1\0<cmd>\0<arg0>\0<arg1>\0<arg2>\0" is written and the answer read, both within the answer
 *   bound and the size cap. A child that is not done within the start bound is killed.
 *
 * Thread-safe: no shared state; the child only makes system calls (async-signal-safe after
 * fork() in a threaded process).
 */
#ifndef SLIDEOPS_JVM_ATTACH_H
#define SLIDEOPS_JVM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest answer read (a thread dump of a JVM with thousands of threads is a few MiB). */
#define JVM_ATTACH_ANSWER_MAX (8u << 20)
/* Default bounds: for the listener to appear after SIGQUIT, and for the whole answer. */
#define JVM_ATTACH_START_MS 5000
#define JVM_ATTACH_ANSWER_MS 10000
/* HotSpot's protocol 1 limits: 3 arguments of at most 1024 bytes, a command of 16. */
#define JVM_ATTACH_MAX_ARGS 3
#define JVM_ATTACH_ARG_MAX 1024
#define JVM_ATTACH_CMD_MAX 16

struct jvm_vmstructs;

/* All zero: the defaults above. */
struct jvm_attach_opts {
	/* The JVM's tables (borrowed), to check DisableAttachMechanism; NULL: read them here */
	const struct jvm_vmstructs *vs;
	int start_ms;	   /* wait for the listener after SIGQUIT */
	int answer_ms;	   /* write the request and read the whole answer */
	size_t answer_max; /* bytes of the answer, its code line included */
};

/* What /proc/PID/status says about the JVM. */
struct jvm_attach_ids {
	uint32_t nspid;	     /* last NSpid field: the pid in its own namespace */
	uint32_t euid, egid; /* second Uid and Gid fields, as this process sees them */
	bool quit_caught;    /* SigCgt has SIGQUIT */
};

/*
 * Parses the text of /proc/PID/status (@len bytes). Without an NSpid line (a kernel before
 * 4.1) the Pid line stands for it. Returns 0, or -EINVAL when Pid/NSpid, Uid, Gid or SigCgt
 * is missing or malformed (@ids untouched then).
 */
int jvm_attach_parse_status(const char *text, size_t len, struct jvm_attach_ids *ids);

/*
 * Splits an answer (@len bytes at @buf): the return code on the first line ("0\n", an
 * optional '-', at most 10 digits), then the body. A last line without '\n' is the code alone.
 * Returns 0, @code and the body's offset in @body_off (its length is @len - @body_off);
 * -ENODATA for an empty answer, -EBADMSG for a code line that is not a number, -EFBIG for
 * more than @max bytes (0: JVM_ATTACH_ANSWER_MAX), -EILSEQ for a NUL byte anywhere. Pure.
 */
int jvm_attach_parse_answer(const char *buf, size_t len, size_t max, int *code, size_t *body_off);

/*
 * Builds the protocol-1 request for @cmd and up to JVM_ATTACH_MAX_ARGS @args (@nargs of them;
 * missing ones are sent empty) into @buf (@size bytes). Returns its length, or -EINVAL (an
 * empty or over-long command, too many or over-long arguments), -ENOSPC. Pure.
 */
int jvm_attach_request(char *buf, size_t size, const char *cmd, const char *const *args,
		       size_t nargs);

/*
 * Runs @cmd with @args (@nargs <= 3) in the JVM whose host pid is @tgid, as described above.
 * Returns 0, the JVM's return code in @code and the body of the answer in @text (@len bytes,
 * NUL-terminated, not checked for UTF-8: jvm_attach_text_clean()), which the caller frees.
 * Errors: -ESRCH (the process is gone), -EOPNOTSUPP (its DisableAttachMechanism flag is on:
 * nothing is sent), -EPERM (no listener, and it does not catch SIGQUIT: -Xrs with attach
 * disabled, or not a JVM), -EPROTONOSUPPORT (no listener, and not a HotSpot whose VMStructs
 * could be read: no signal is sent), -ETIME (signalled, but no listener within the start
 * bound: a stopped or overloaded JVM), -EACCES (the signal was refused), -ETIMEDOUT (the
 * answer did not end within its bound), -EFBIG, -EBADMSG/-EILSEQ/-ENODATA (a malformed
 * answer), -EINVAL, -errno of the trigger file (-EROFS, -ENOSPC ...).
 */
int jvm_attach_run(uint32_t tgid, const char *cmd, const char *const *args, size_t nargs,
		   const struct jvm_attach_opts *opts, int *code, char **text, size_t *len);

/*
 * Makes @text (@len bytes, NUL-terminated) well-formed UTF-8 in place (base/text.h rule,
 * control characters such as '\n' and '\t' kept). Returns the new length.
 */
size_t jvm_attach_text_clean(char *text, size_t len);

/* A short reason for a note for the errors of jvm_attach_run(), or NULL (use strerror()). */
const char *jvm_attach_reason(int err);

#endif
