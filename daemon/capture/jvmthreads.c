// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/jvmthreads.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/proc.h"
#include "daemon/capture/answer.h"
#include "daemon/capture/jvmframes.h"
#include "daemon/capture/result.h"
#include "runtimes/jvm/jvm_attach.h"
#include "runtimes/jvm/jvm_threaddump.h"

/* A thread's status is a few KiB. */
#define STATUS_MAX (64u << 10)

/* The thread id of host thread @tid of @pid in the JVM's own pid namespace (last NSpid), 0. */
static uint32_t ns_tid(const char *proc_root, uint32_t pid, uint32_t tid)
{
	struct jvm_attach_ids ids;
	char name[48], *text = NULL;
	size_t len;
	uint32_t v = 0;

	snprintf(name, sizeof(name), "task/%u/status", tid);
	if (proc_read(proc_root, pid, name, STATUS_MAX, &text, &len))
		return 0;
	if (!jvm_attach_parse_status(text, len, &ids))
		v = ids.nspid;
	free(text);
	return v;
}

/* "X (detail)" and the lock line of Java thread @jt into row @t. */
static void fill_row(const struct jvm_td_thread *jt, struct capture_thread *t)
{
	const struct jvm_td_frame *f = jt->nframes ? &jt->frames[0] : NULL;

	snprintf(t->java_name, sizeof(t->java_name), "%s", jt->name);
	snprintf(t->java_state, sizeof(t->java_state), "%s%s%s%s", jt->state,
		 jt->state_detail[0] ? " (" : "", jt->state_detail, jt->state_detail[0] ? ")" : "");
	/* a thread in Object.wait() released the monitor its dump says it "locked" */
	if (jt->waiting_for[0])
		snprintf(t->java_lock, sizeof(t->java_lock), "waiting for %s", jt->waiting_for);
	else if (jt->holds[0])
		snprintf(t->java_lock, sizeof(t->java_lock), "holds %s", jt->holds);
	if (f && f->file[0] && f->line)
		snprintf(t->java_frame, sizeof(t->java_frame), "%s (%s:%u)", f->method, f->file,
			 f->line);
	else if (f)
		snprintf(t->java_frame, sizeof(t->java_frame), "%s", f->method);
}

/* Joins the dump @td of JVM @pid to its rows. Returns the rows joined. */
static size_t join_one(const char *proc_root, uint32_t pid, const struct jvm_threaddump *td,
		       struct capture_thread *t, size_t n)
{
	const struct jvm_td_thread *jt;
	size_t i, joined = 0;
	uint32_t nid;

	for (i = 0; i < n; i++) {
		if (t[i].pid != pid)
			continue;
		nid = ns_tid(proc_root, pid, t[i].tid);
		jt = nid ? jvm_threaddump__find(td, nid) : NULL;
		if (!jt || !jt->java)
			continue;
		fill_row(jt, &t[i]);
		joined++;
	}
	return joined;
}

/* Asks JVM @pid for its threads. Returns the rows joined, or -errno (the note's reason). */
static long dump_one(const char *proc_root, uint32_t pid, struct capture_thread *t, size_t n)
{
	struct jvm_attach_opts ao = { 0 };
	struct jvm_threaddump *td = NULL;
	char *text = NULL;
	size_t len = 0, joined;
	int code = 0, err;

	err = jvm_attach_run(pid, "threaddump", NULL, 0, &ao, &code, &text, &len);
	if (!err && code)
		err = -EBADMSG;
	if (!err) {
		len = jvm_attach_text_clean(text, len);
		err = jvm_threaddump_parse(text, len, &td);
	}
	free(text);
	if (err)
		return err;
	joined = join_one(proc_root, pid, td, t, n);
	jvm_threaddump__free(td);
	return (long)joined;
}

static void note_failed(struct capture_result *r, uint32_t pid, int err)
{
	const char *why = jvm_attach_reason(err);

	if (why)
		answer_add_note(r,
				"The JVM in process %u %s: its threads show their eBPF stacks, "
				"without Java names and states.",
				pid, why);
	else
		answer_add_note(
			r,
			"The JVM in process %u could not be asked for its thread dump (%s): "
			"its threads show their eBPF stacks, without Java names and states.",
			pid, strerror(-err));
}

size_t jvmthreads_join(const char *proc_root, const struct jvmframes *jf, struct capture_thread *t,
		       size_t n, struct capture_result *r)
{
	uint32_t done[JVMTHREADS_MAX_JVMS];
	size_t i, k, ndone = 0, joined = 0, skipped = 0;
	long got;

	for (i = 0; i < n; i++) {
		for (k = 0; k < ndone && done[k] != t[i].pid; k++)
			;
		if (k < ndone || !jvmframes__bpf_of(jf, t[i].pid))
			continue;
		if (ndone >= JVMTHREADS_MAX_JVMS) {
			skipped++;
			continue;
		}
		done[ndone++] = t[i].pid;
		got = dump_one(proc_root, t[i].pid, t, n);
		if (got < 0)
			note_failed(r, t[i].pid, (int)got);
		else
			joined += (size_t)got;
	}
	if (skipped)
		answer_add_note(r,
				"More than %d JVMs: the threads of the others show their eBPF "
				"stacks, without Java names and states.",
				JVMTHREADS_MAX_JVMS);
	return joined;
}
