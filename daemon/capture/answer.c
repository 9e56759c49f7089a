// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/answer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/text.h"
#include "profile/flamegraph.h"
#include "profile/report.h"

int answer_add_note(struct capture_result *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (r->nnotes >= CAPTURE_MAX_NOTES)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	text_utf8_sanitize(s); /* names in notes come from /proc and binaries */
	r->notes[r->nnotes++] = s;
	return 0;
}

const char *answer_target_who(const struct capture_opts *o, const struct answer_input *in,
			      char *who, size_t size)
{
	target_describe(&o->target, who, size);
	if (o->target.kind == TARGET_PIDS && o->target.npids == 1 && in->nprocs &&
	    in->procs[0].comm[0])
		snprintf(who + strlen(who), size - strlen(who), " (%s)", in->procs[0].comm);
	text_utf8_sanitize(who); /* comm: raw bytes, cut by the kernel mid-character too */
	return who;
}

/* "spinner running 98% in spin_forever" / "sleeper waiting 99% in clock_nanosleep, from nap" */
static int describe_thread(const struct capture_thread *t, char *buf, size_t size)
{
	const char *name = t->java_name[0] ? t->java_name : t->name;
	int n;

	if (t->running + t->runnable >= t->waiting)
		n = snprintf(buf, size, "%s running %.0f%% of the time, in %s", name,
			     t->running + t->runnable, t->function);
	else
		n = snprintf(buf, size, "%s waiting %.0f%% of the time in %s, from %s", name,
			     t->waiting, t->nwaits ? t->waits[0].reason : "the kernel",
			     t->function);
	/* a Java thread: what the JVM says of it */
	if (t->java_state[0] && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " (Java: %s%s%s)", t->java_state,
			      t->java_lock[0] ? ", " : "", t->java_lock);
	return n;
}

static int cmp_thread_busy(const void *a, const void *b)
{
	const struct capture_thread *x = a, *y = b;
	double bx = x->running + x->runnable, by = y->running + y->runnable;

	if (bx != by)
		return bx < by ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads of a target, busiest first (at most 4 listed) after "the N threads of WHO: ". */
static void threads_list(const struct capture_opts *o, const struct capture_thread *sorted,
			 size_t n, char *buf, size_t size)
{
	char who[TARGET_NAME_MAX + 64], one[512];
	size_t i;
	int len;

	target_describe(&o->target, who, sizeof(who));
	if (o->target.kind == TARGET_PIDS && o->target.npids == 1)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), " (%s)", sorted[0].process);
	len = snprintf(buf, size, "Over %u seconds, the %zu thread%s of %s: ", o->duration_s, n,
		       n == 1 ? "" : "s", who);
	for (i = 0; i < n && i < 4 && len >= 0 && (size_t)len < size; i++) {
		describe_thread(&sorted[i], one, sizeof(one));
		len += snprintf(buf + len, size - len, "%s%s", i ? "; " : "", one);
	}
	if (len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - len, n > 4 ? "; and %zu more." : ".", n - 4);
}

/*
 * threads, target: "Over 5 seconds, the 3 threads of process 12 (threeway): spinner running 98%
 * of the time, in spin_forever; sleeper waiting 99% of the time in clock_nanosleep, from nap;
 * ..." (at most 4 listed, busiest first). Server: "Over 5 seconds, 412 threads on this server:
 * 5 mostly running, 407 mostly waiting. The busiest was worker of Service billing, running 97%
 * of the time, in build_report."
 */
static void threads_answer(const struct capture_opts *o, const struct capture_result *r, char *buf,
			   size_t size)
{
	struct capture_thread *sorted;
	char who[TARGET_NAME_MAX + 64], one[512];
	size_t i, busy = 0, n = r->nthreads;

	if (!n) {
		snprintf(buf, size, "Over %u seconds, no thread of %s was seen.", o->duration_s,
			 o->target.kind == TARGET_SERVER ?
				 "this server" :
				 target_describe(&o->target, who, sizeof(who)));
		return;
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {
		snprintf(buf, size, "Over %u seconds, %zu threads were seen.", o->duration_s, n);
		return;
	}
	memcpy(sorted, r->threads, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_thread_busy);
	for (i = 0; i < n; i++)
		busy += sorted[i].running + sorted[i].runnable >= sorted[i].waiting;
	if (o->target.kind == TARGET_SERVER) {
		describe_thread(&sorted[0], one, sizeof(one));
		snprintf(buf, size,
			 "Over %u seconds, %zu threads on this server: %zu mostly running, "
			 "%zu mostly waiting. The busiest was %s of %s.",
			 o->duration_s, n, busy, n - busy, one, sorted[0].owner);
	} else {
		threads_list(o, sorted, n, buf, size);
	}
	free(sorted);
}

/*
 * threads of Go programs: "Process 12 (app) has 46 goroutines: 40 in chan receive in
 * main.parkHere; 5 in sleep in main.sleepHere; 1 in IO wait in net/http.(*conn).serve."
 */
static void goroutines_answer(const struct capture_opts *o, const struct answer_input *in,
			      const char *who, char *buf, size_t size)
{
	const struct go_goroutine_group *gr = in->groups;
	size_t i, n = in->ngroups;
	bool many = in->ngo > 1;
	int len;

	if (!in->total) {
		snprintf(buf, size, "No goroutine could be read from %s.", who);
		return;
	}
	len = snprintf(buf, size, "After %u seconds, %s %s %llu goroutine%s: ", o->duration_s, who,
		       many ? "have" : "has", (unsigned long long)in->total,
		       in->total == 1 ? "" : "s");
	for (i = 0; i < n && i < 4 && len >= 0 && (size_t)len < size; i++)
		len += snprintf(buf + len, size - len, "%s%u %s%s in %s%s%s%s", i ? "; " : "",
				gr[i].count,
				strcmp(gr[i].state, "running") && strcmp(gr[i].state, "runnable") ?
					"in " :
					"",
				gr[i].state, gr[i].function, many ? " (" : "",
				many ? gr[i].process : "", many ? ")" : "");
	if (len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - len,
			 n > 5	? "; and %zu more kinds." :
			 n == 5 ? "; and 1 more kind." :
				  ".",
			 n - 4);
}

/* memory-held, memory-alloc of JVMs that recorded nothing (the notes say why). */
/* memory from a runtime that samples its allocations (a JVM, V8) and sampled nothing */
static void jvm_nothing_answer(const struct capture_opts *o, const char *who, const char *heap,
			       const char *runtime, char *buf, size_t size)
{
	who = who ? who : "the target";
	if (o->question == Q_MEMORY_HELD)
		snprintf(buf, size,
			 "At the end of %u seconds, %s held nothing on the %s that %s sampled "
			 "during the capture.",
			 o->duration_s, who, heap, runtime);
	else
		snprintf(buf, size,
			 "Over %u seconds, %s allocated nothing on the %s that %s sampled.",
			 o->duration_s, who, heap, runtime);
}

void answer_write(const struct capture_opts *o, const struct answer_input *in,
		  struct capture_result *r)
{
	char who[TARGET_NAME_MAX + 64];
	const char *target = o->target.kind == TARGET_SERVER ?
				     NULL :
				     answer_target_who(o, in, who, sizeof(who));
	static const struct report empty; /* what a NULL report reads as */
	uint64_t busy = r->samples + r->stats.filtered;
	const struct report *rep = r->report ? r->report : &empty;

	r->others = r->stats.filtered;
	switch (o->question) {
	case Q_THREADS:
		if (in->goroutines)
			goroutines_answer(o, in, target ? target : "this server", r->answer,
					  sizeof(r->answer));
		else
			threads_answer(o, r, r->answer, sizeof(r->answer));
		break;
	case Q_MEMORY_HELD:
	case Q_MEMORY_ALLOC:
		if (rep->total <= 0 && (in->njvm || in->nnode) && !in->ngo)
			jvm_nothing_answer(o, target, in->njvm ? "Java heap" : "V8 heap",
					   in->njvm ? "the JVM" : "V8", r->answer,
					   sizeof(r->answer));
		else
			report_answer_memory(rep, o->duration_s, target,
					     o->question == Q_MEMORY_HELD, r->answer,
					     sizeof(r->answer));
		break;
	case Q_LOCKS:
		report_answer_locks(rep, o->duration_s, target, r->answer, sizeof(r->answer));
		break;
	case Q_MEMORY_GROWTH:
		report_answer_growth(rep, o->duration_s, target, r->answer, sizeof(r->answer));
		break;
	case Q_WALL:
		report_answer_wall(rep, o->duration_s, target, r->answer, sizeof(r->answer));
		break;
	default:
		if (!target)
			report_answer(rep, o->duration_s, "the CPU time", "on this server",
				      r->answer, sizeof(r->answer));
		else
			report_answer_target(rep, o->duration_s, target,
					     busy ? 100.0 * (double)r->samples / (double)busy : 0,
					     "the CPU time", "on this server", r->answer,
					     sizeof(r->answer));
	}
}

static void exit_notes(const struct answer_input *in, struct capture_result *r)
{
	size_t i, listed = 0;

	for (i = 0; i < in->nprocs; i++) {
		const struct answer_proc *t = &in->procs[i];

		if (t->exited_at < 0)
			continue;
		r->nexited++;
		if (listed++ < ANSWER_MAX_EXIT_NOTES)
			answer_add_note(r,
					"Process %u (%s) exited during the capture, about %.0f s "
					"after sampling started; the profile holds what it did "
					"until then.",
					t->pid, t->comm[0] ? t->comm : "?", t->exited_at);
	}
	if (listed > ANSWER_MAX_EXIT_NOTES)
		answer_add_note(r, "%zu more processes of the target exited during the capture.",
				listed - ANSWER_MAX_EXIT_NOTES);
	if (in->nprocs && r->nexited == in->nprocs)
		answer_add_note(r, "The target is no longer running: every process of it exited "
				   "during the capture.");
}

/* "the server", "the Service", "the process" */
static const char *notes_who(const struct capture_opts *o)
{
	switch (o->target.kind) {
	case TARGET_SERVER:
		return "the server";
	case TARGET_SERVICE:
		return "the Service";
	case TARGET_PIDS:
		return o->target.npids == 1 ? "the process" : "the processes";
	default:
		return "the target";
	}
}

/* No events at all, or too few samples to say much. */
static void quiet_notes(const struct capture_opts *o, struct capture_result *r)
{
	const char *who = notes_who(o);

	if (o->question == Q_LOCKS && !r->stats.events)
		answer_add_note(r,
				"No lock waits: no thread of %s slept on a lock during the "
				"capture.",
				o->target.kind == TARGET_SERVER ? "this server" : "the target");
	else if (o->question == Q_MEMORY_GROWTH && !r->stats.events)
		answer_add_note(r, "No memory growth: %s touched no new memory during the capture.",
				who);
	else if ((o->question == Q_CPU || o->question == Q_WALL) &&
		 r->samples < (uint64_t)ANSWER_FEW_SAMPLES_PER_SECOND * o->duration_s)
		answer_add_note(r,
				"Very few samples: %s was almost idle. Capture again while it is "
				"under the load you want to understand.",
				who);
}

void answer_notes(const struct capture_opts *o, const struct answer_input *in,
		  struct capture_result *r)
{
	uint64_t lost = r->stats.lost;
	size_t i;

	exit_notes(in, r);
	quiet_notes(o, r);
	if (r->report && r->report->unnamed_share >= 10.0 && !in->nrefused)
		answer_add_note(r,
				"Many native frames have no names, because the binaries were "
				"built without symbols (%.0f%% of the samples).",
				r->report->unnamed_share);
	else if (r->report && r->report->unnamed_share >= 10.0)
		answer_add_note(r,
				"Many native frames have no names (%.0f%% of the samples): "
				"their binaries were built without symbols, or their files were "
				"not read for names (a note below says which).",
				r->report->unnamed_share);
	for (i = 0; i < in->nunreadable; i++)
		answer_add_note(r,
				"Process %u (%s) could not be read, so its functions have no "
				"names: %s.",
				in->unreadable[i].pid,
				in->unreadable[i].comm[0] ? in->unreadable[i].comm : "?",
				strerror(-in->unreadable[i].err));
	if (in->unattributed)
		answer_add_note(r,
				"%llu %s from processes that exited before they could be read; "
				"%s shown under Other processes.",
				(unsigned long long)in->unattributed,
				in->unattributed == 1 ? "sample came" : "samples came",
				in->unattributed == 1 ? "it is" : "they are");
	if (lost)
		answer_add_note(r, "%llu samples lost to full maps (%s).", (unsigned long long)lost,
				r->stats.lost_detail);
	/* Stacks the DWARF unwinder could not complete, and why (docs/unwinding.md); below 1% it
	 * is noise, not worth a note. */
	if (r->stats.stacks_detail[0] && r->stats.stacks_incomplete_pct >= 1.0)
		answer_add_note(r, "%s", r->stats.stacks_detail);
	r->lost = lost;
}

static const char *const thread_cols[] = { "Thread",  "TID",	  "Process", "PID",   "Owner",
					   "Running", "Runnable", "Waiting", "Waits", "Function" };
static const char *const goroutine_cols[] = { "Goroutines", "State", "Function", "Process", "PID" };

/* A formatted copy, or NULL on ENOMEM (asprintf leaves its pointer undefined on failure). */
static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

void answer_table_free(struct flamegraph_opts *fg)
{
	size_t i;

	if (!fg->table_cells)
		return;
	for (i = 0; i < fg->table_nrows * fg->table_ncols; i++)
		free((char *)fg->table_cells[i]);
	free((void *)fg->table_cells);
	fg->table_cells = NULL;
}

/* Hands @cells (@nrows rows of @ncols) to @fg; frees them when one is missing (ENOMEM). */
static int set_table(struct flamegraph_opts *fg, const char *title, const char *const *cols,
		     size_t ncols, char **cells, size_t nrows)
{
	size_t i;

	fg->table_title = title;
	fg->table_cols = cols;
	fg->table_ncols = ncols;
	fg->table_cells = (const char *const *)cells;
	fg->table_nrows = nrows;
	for (i = 0; i < nrows * ncols; i++)
		if (!cells[i]) {
			answer_table_free(fg);
			return -ENOMEM;
		}
	return 0;
}

/* One row of the threads table into @row. */
static void thread_row(const struct capture_thread *t, char **row)
{
	char waits[256] = "";
	size_t j, n = 0;

	for (j = 0; j < t->nwaits && n < sizeof(waits); j++)
		n += snprintf(waits + n, sizeof(waits) - n, "%s%s %.0f%%", j ? ", " : "",
			      t->waits[j].reason, t->waits[j].share);
	row[0] = dupf("%s", t->name);
	row[1] = dupf("%u", t->tid);
	row[2] = dupf("%s", t->process);
	row[3] = dupf("%u", t->pid);
	row[4] = dupf("%s", t->owner);
	row[5] = dupf("%.0f%%", t->running);
	row[6] = dupf("%.0f%%", t->runnable);
	row[7] = dupf("%.0f%%", t->waiting);
	row[8] = dupf("%s", waits);
	row[9] = dupf("%s", t->function);
}

int answer_threads_table(const struct capture_result *r, struct flamegraph_opts *fg)
{
	const size_t ncols = ARRAY_SIZE(thread_cols);
	char **cells;
	size_t i;

	cells = calloc(r->nthreads * ncols + 1, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (i = 0; i < r->nthreads; i++)
		thread_row(&r->threads[i], cells + i * ncols);
	return set_table(fg, "Threads", thread_cols, ncols, cells, r->nthreads);
}

int answer_goroutines_table(const struct answer_input *in, struct flamegraph_opts *fg)
{
	const struct go_goroutine_group *gr = in->groups;
	const size_t ncols = ARRAY_SIZE(goroutine_cols);
	char **cells;
	size_t i;

	cells = calloc(in->ngroups * ncols + 1, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (i = 0; i < in->ngroups; i++) {
		char **row = cells + i * ncols;

		row[0] = dupf("%u", gr[i].count);
		row[1] = dupf("%s", gr[i].state);
		row[2] = dupf("%s", gr[i].function);
		row[3] = dupf("%s", gr[i].process);
		row[4] = dupf("%u", gr[i].pid);
	}
	return set_table(fg, "Goroutines", goroutine_cols, ncols, cells, in->ngroups);
}
