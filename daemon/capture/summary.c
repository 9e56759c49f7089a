// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/summary.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroups/owner.h"
#include "daemon/capture/result.h"
#include "base/fileio.h"
#include "base/text.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/go/profiles.h"

/*
 * @s as jansson takes it: json_pack refuses a string that is not UTF-8, and names read from
 * /proc (comm is cut at 15 bytes, mid-character too) may be none. Returns @s when it is valid,
 * else its copy in @buf (@size bytes) under base/text's rule; NULL stays NULL.
 */
static const char *utf8(const char *s, char *buf, size_t size)
{
	if (!s || text_utf8_is_valid(s, strlen(s)))
		return s;
	text_utf8_valid_copy(buf, size, s, strlen(s));
	return buf;
}

static double round1(double v)
{
	return (double)(long long)(v * 10 + (v >= 0 ? 0.5 : -0.5)) / 10;
}

/* "Service billing" -> ("Service", "billing"); "Signed-in sessions" -> (that, ""). */
static void split_owner(const char *owner, const char **group, const char **name)
{
	static const enum owner_group named[] = { OWNER_SERVICE, OWNER_CONTAINER, OWNER_UNIT };
	size_t i, n;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		const char *g = owner_group_name(named[i]);

		n = strlen(g);
		if (!strncmp(owner, g, n) && owner[n] == ' ') {
			*group = g;
			*name = owner + n + 1;
			return;
		}
	}
	*group = owner;
	*name = "";
}

static json_t *groups_json(const struct report *r)
{
	json_t *arr = json_array(), *g, *procs;
	size_t i, j;

	for (i = 0; arr && i < r->ngroups; i++) {
		const struct report_group *rg = &r->groups[i];
		const char *group, *name;
		char gbuf[64];

		split_owner(rg->owner, &group, &name);
		snprintf(gbuf, sizeof(gbuf), "%s", group);
		procs = json_array();
		for (j = 0; procs && j < rg->nprocs; j++)
			json_array_append_new(procs,
					      json_pack("{s:I, s:s, s:I, s:f, s:s?}", "pid",
							(json_int_t)rg->procs[j].pid, "name",
							rg->procs[j].name, "samples",
							(json_int_t)rg->procs[j].value, "share",
							round1(rg->procs[j].share), "top_function",
							rg->procs[j].top_function));
		g = json_pack("{s:s, s:s, s:s, s:I, s:f, s:s?, s:o}", "owner", rg->owner, "group",
			      gbuf, "name", name, "samples", (json_int_t)rg->value, "share",
			      round1(rg->share), "top_function", rg->top_function, "processes",
			      procs ? procs : json_array());
		json_array_append_new(arr, g);
	}
	return arr;
}

/* A Java thread's row from its JVM's thread dump (daemon/capture/jvmthreads.h), or null. */
static json_t *java_json(const struct capture_thread *t)
{
	char nb[sizeof(t->java_name)], sb[sizeof(t->java_state)], lb[sizeof(t->java_lock)];
	char fb[sizeof(t->java_frame)];

	if (!t->java_state[0] && !t->java_name[0])
		return json_null();
	return json_pack("{s:s, s:s, s:s, s:s}", "name", utf8(t->java_name, nb, sizeof(nb)),
			 "state", utf8(t->java_state, sb, sizeof(sb)), "lock",
			 utf8(t->java_lock, lb, sizeof(lb)), "frame",
			 utf8(t->java_frame, fb, sizeof(fb)));
}

static json_t *goroutines_json(const struct capture_result *r)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < r->ngoroutines; i++) {
		const struct go_goroutine_group *g = &r->goroutines[i];
		char sb[sizeof(g->state)], fb[sizeof(g->function)], pb[sizeof(g->process)];

		json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:s, s:I}", "count",
						     (json_int_t)g->count, "state",
						     utf8(g->state, sb, sizeof(sb)), "function",
						     utf8(g->function, fb, sizeof(fb)), "process",
						     utf8(g->process, pb, sizeof(pb)), "pid",
						     (json_int_t)g->pid));
	}
	return arr ? arr : json_array();
}

static json_t *threads_json(const struct capture_result *r)
{
	json_t *arr = json_array(), *waits;
	size_t i, j;

	for (i = 0; arr && i < r->nthreads; i++) {
		const struct capture_thread *t = &r->threads[i];
		char nb[sizeof(t->name)], pb[sizeof(t->process)], ob[sizeof(t->owner)];
		char fb[sizeof(t->function)], rb[sizeof(t->waits[0].reason)];

		waits = json_array();
		for (j = 0; waits && j < t->nwaits; j++)
			json_array_append_new(waits,
					      json_pack("{s:s, s:f}", "reason",
							utf8(t->waits[j].reason, rb, sizeof(rb)),
							"share", round1(t->waits[j].share)));
		json_array_append_new(
			arr,
			json_pack("{s:I, s:I, s:s, s:s, s:s, s:f, s:f, s:f, s:o, "
				  "s:s, s:o}",
				  "tid", (json_int_t)t->tid, "pid", (json_int_t)t->pid, "name",
				  utf8(t->name, nb, sizeof(nb)), "process",
				  utf8(t->process, pb, sizeof(pb)), "owner",
				  utf8(t->owner, ob, sizeof(ob)), "running", round1(t->running),
				  "runnable", round1(t->runnable), "waiting", round1(t->waiting),
				  "waits", waits ? waits : json_array(), "function",
				  utf8(t->function, fb, sizeof(fb)), "java", java_json(t)));
	}
	return arr ? arr : json_array();
}

char *summary_json(const struct capture_opts *o, const struct capture_result *r)
{
	const struct report *rep = r->report;
	json_t *root, *top, *notes, *stripped, *langs;
	char start[64], who[TARGET_NAME_MAX + 32], whob[sizeof(who)], *text;
	char answer[sizeof(r->answer)], note[1024];
	time_t secs = r->start_ns / 1000000000;
	struct tm tm;
	uint64_t all = r->stats.samples;
	size_t i;
	int l;

	gmtime_r(&secs, &tm);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);

	top = json_array();
	for (i = 0; top && rep && i < rep->ntop; i++)
		json_array_append_new(top, json_pack("{s:s, s:I, s:f}", "name", rep->top[i].name,
						     "samples", (json_int_t)rep->top[i].value,
						     "share", round1(rep->top[i].share)));
	notes = json_array();
	for (i = 0; notes && i < r->nnotes; i++)
		json_array_append_new(notes, json_string(utf8(r->notes[i], note, sizeof(note))));
	stripped = json_array();
	for (i = 0; stripped && rep && i < rep->nstripped; i++)
		json_array_append_new(stripped,
				      json_pack("{s:s, s:f, s:s?}", "path", rep->stripped[i].path,
						"share", round1(rep->stripped[i].share), "build_id",
						rep->stripped[i].build_id));
	langs = json_array();
	for (l = 0; langs && rep && l < PROF_LANG_COUNT; l++)
		if (rep->languages & (1u << l))
			json_array_append_new(langs, json_string(prof_lang_name(l)));

	root = json_pack(
		"{s:i, s:s, s:s, s:{s:s, s:s}, s:s, s:i, s:f, s:f, s:I, s:I, s:f, s:s, s:o, s:o, "
		"s:o, s:o, s:o, s:I, s:I, s:{s:s, s:s, s:s, s:s}}",
		"version", SUMMARY_VERSION, "question", question_info(o->question)->id,
		"question_text", question_info(o->question)->text, "target", "kind",
		target_kind_name(o->target.kind), "description",
		utf8(target_describe(&o->target, who, sizeof(who)), whob, sizeof(whob)), "start",
		start, "duration_seconds", (int)o->duration_s, "sampled_seconds",
		round1(r->sampled_s), "time_to_result_seconds",
		(double)(long long)(r->result_s * 1000) / 1000, "sample_count",
		(json_int_t)r->samples, "idle_samples", (json_int_t)r->stats.idle, "busy_percent",
		round1(all ? 100.0 * (double)(all - r->stats.idle) / (double)all : 0), "answer",
		utf8(r->answer, answer, sizeof(answer)), "groups",
		rep ? groups_json(rep) : json_array(), "top_functions", top ? top : json_array(),
		"notes", notes ? notes : json_array(), "stripped_binaries",
		stripped ? stripped : json_array(), "languages", langs ? langs : json_array(),
		"lost_samples", (json_int_t)r->lost, "events", (json_int_t)r->stats.events, "files",
		"pprof", "profile.pb.gz", "collapsed", "profile.collapsed", "flamegraph",
		"flamegraph.html", "summary", "summary.json");
	if (!root) /* never the capture's end: a summary that says so */
		root = json_pack("{s:i, s:s, s:s, s:[s]}", "version", SUMMARY_VERSION, "question",
				 question_info(o->question)->id, "answer", "", "notes",
				 "The summary could not be written in full.");
	if (!root)
		return NULL;
	/* the frames of this profile carry their binaries' build ids: an upload can name them
	 * (profiles without this key were captured before SlideOps kept build ids) */
	json_object_set_new(root, "build_ids", json_true());
	if (r->nthreads)
		json_object_set_new(root, "threads", threads_json(r));
	if (r->ngoroutines)
		json_object_set_new(root, "goroutines", goroutines_json(r));
	json_object_set_new(root, "stacks",
			    json_pack("{s:I, s:I, s:f}", "walked", (json_int_t)r->stats.stacks,
				      "incomplete", (json_int_t)r->stats.stacks_incomplete,
				      "incomplete_percent",
				      round1(r->stats.stacks_incomplete_pct)));
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(root);
	return text;
}

static int write_text(void *ctx, FILE *f)
{
	const char *text = ctx;

	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		return -EIO;
	return 0;
}

int summary_write_file(const struct capture_opts *o, const struct capture_result *r,
		       const char *path)
{
	char *text = summary_json(o, r);
	int err;

	if (!text)
		return -ENOMEM;
	err = atomic_write_file(path, write_text, text);
	free(text);
	return err;
}
