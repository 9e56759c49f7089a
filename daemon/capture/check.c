// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/check.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "cgroups/owner.h"
#include "daemon/capture/node_source.h"
#include "daemon/capture/preflight.h"
#include "runtimes/detect.h"
#include "runtimes/detect_cache.h"
#include "runtimes/go/go_pprof.h"
#include "runtimes/jvm/jvm_vmstructs.h"
#include "runtimes/languages.h"
#include "runtimes/node/node_inspector.h"

#define MAX_RUNTIME_GROUPS 32
/* Go programs whose pprof endpoint check looks for (each probe takes up to a second or two). */
#define CHECK_MAX_GO_PROBES 16

static const char python_memory_reason[] =
	"memory in use is read from the runtime's own profiler, which Python does not offer to "
	"an outside tool; use Where memory grows (memory-growth) instead";

static const char jvm_no_attach_reason[] =
	"memory of a Java program is read from the JVM itself, through its attach mechanism, "
	"and a JVM of the target disables it (-XX:+DisableAttachMechanism); use Where memory "
	"grows (memory-growth) instead";

static const char node_no_inspector_reason[] =
	"memory of a Node.js program is read from V8's sampling heap profiler, through its "
	"inspector, and a Node.js of the target cannot have it opened (started with "
	"--disable-sigusr1, or older than Node.js 20); use Where memory grows (memory-growth) "
	"instead";

static const char no_go_reason[] =
	"memory in use is read from a runtime's own profiler (Go's heap profile), and the target "
	"runs no Go program; use Where memory grows (memory-growth) instead";

const char *check_question_reason(enum question q, enum target_kind kind, unsigned int runtimes,
				  const char *go_missing, char *buf, size_t size)
{
	const struct question_info *qi = question_info(q);

	if (!qi)
		return "unknown question";
	if (kind == TARGET_SERVER && !qi->server)
		return "not offered for a whole server: it is read from inside one runtime at a "
		       "time; capture it from the Service instead";
	if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) && (runtimes & (1u << RUNTIME_PYTHON)))
		return python_memory_reason;
	if (!qi->implemented)
		return "not available in this build yet";
	/* a JVM answers them itself (async-profiler or its Flight Recorder) */
	if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) && (runtimes & (1u << RUNTIME_JVM)))
		return (runtimes & CHECK_JVM_NO_ATTACH) ? jvm_no_attach_reason : NULL;
	/* and so does Node.js's V8, through its inspector */
	if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) && (runtimes & (1u << RUNTIME_NODE)))
		return (runtimes & CHECK_NODE_NO_INSPECTOR) ? node_no_inspector_reason : NULL;
	/* Go programs wait on a sync.Mutex in the Go scheduler, not in the kernel: for a target
	 * of Go programs only, lock waits come from their own mutex and block profiles. */
	if (q == Q_LOCKS && kind != TARGET_SERVER && runtimes == (1u << RUNTIME_GO)) {
		snprintf(
			buf, size,
			"a Go program waits on locks in the Go scheduler, not in the "
			"kernel, so its lock waits are read from its own mutex and block profiles: "
			"the program must serve net/http/pprof on a local port, and it does not (%s)",
			go_missing && *go_missing ? go_missing : "no endpoint found");
		return buf;
	}
	if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) && !(runtimes & CHECK_GO_PPROF)) {
		if (!(runtimes & (1u << RUNTIME_GO)))
			return no_go_reason;
		snprintf(buf, size,
			 "memory in use is read from the Go program's own profiler, so "
			 "the program must serve net/http/pprof on a local port, and it does not "
			 "(%s); use Where memory grows (memory-growth) instead",
			 go_missing && *go_missing ? go_missing : "no endpoint found");
		return buf;
	}
	return NULL;
}

struct rt_group {
	char display[sizeof(((struct runtime_info *)0)->display)];
	enum runtime_kind kind;
	size_t count;
};

static void add_group(struct rt_group *g, size_t *n, const struct runtime_info *ri)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(g[i].display, ri->display)) {
			g[i].count++;
			return;
		}
	if (*n >= MAX_RUNTIME_GROUPS)
		return;
	snprintf(g[*n].display, sizeof(g[0].display), "%s", ri->display);
	g[*n].kind = ri->kind;
	g[*n].count = 1;
	(*n)++;
}

/* True for kernel threads (PF_KTHREAD), which have no runtime to detect. */
static bool is_kthread(const char *proc_root, uint32_t pid)
{
	unsigned long flags = 0;
	char state;

	return target_proc_stat(proc_root, pid, &state, &flags) == 0 && (flags & 0x00200000);
}

static int list_pids(const struct check_opts *o, struct owner_resolver *owners, uint32_t **out,
		     char *err, size_t size)
{
	uint32_t *pids = malloc(TARGET_MAX_PIDS * sizeof(*pids));
	const char *root = o->proc_root ? o->proc_root : "/proc";
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (!pids)
		return -ENOMEM;
	if (o->target.kind != TARGET_SERVER) {
		n = target_resolve(&o->target, owners, root, pids, TARGET_MAX_PIDS, err, size);
		if (n < 0) {
			free(pids);
			return n;
		}
		*out = pids;
		return n;
	}
	d = opendir(root);
	if (!d) {
		n = -errno;
		free(pids);
		snprintf(err, size, "cannot list the processes in %s: %s", root, strerror(-n));
		return n;
	}
	while ((de = readdir(d)) && n < TARGET_MAX_PIDS)
		if (isdigit((unsigned char)de->d_name[0]))
			pids[n++] = (uint32_t)atoi(de->d_name);
	closedir(d);
	*out = pids;
	return n;
}

static char *render_text(json_t *doc)
{
	json_t *v, *q;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s\n", json_string_value(json_object_get(doc, "message")));
	fprintf(f, "Target: %s\n", json_string_value(json_object_get(doc, "target_description")));
	fprintf(f, "Runtimes:");
	json_array_foreach(json_object_get(doc, "runtimes"), i, v)
		fprintf(f, "%s %s", i ? "," : "", json_string_value(json_object_get(v, "text")));
	fprintf(f, "%s\n", json_array_size(json_object_get(doc, "runtimes")) ? "" : " none found");
	json_array_foreach(json_object_get(doc, "go_pprof"), i, v) {
		const char *ep = json_string_value(json_object_get(v, "endpoint"));

		if (ep)
			fprintf(f,
				"Go pprof: process %lld serves net/http/pprof on %s (found inside "
				"its network namespace)\n",
				(long long)json_integer_value(json_object_get(v, "pid")), ep);
		else
			fprintf(f, "Go pprof: process %lld does not serve net/http/pprof: %s\n",
				(long long)json_integer_value(json_object_get(v, "pid")),
				json_string_value(json_object_get(v, "reason")));
	}
	fprintf(f, "Kernel: %s\n", json_string_value(json_object_get(doc, "kernel")));
	fprintf(f, "Processor: %s\n", json_string_value(json_object_get(doc, "processor")));
	fprintf(f, "\nWhat do you want to know?\n");
	json_array_foreach(json_object_get(doc, "questions"), i, q) {
		const char *reason = json_string_value(json_object_get(q, "reason"));

		if (!reason)
			reason = json_string_value(json_object_get(q, "note"));
		fprintf(f, "  %-14s %-38s %s%s%s\n", json_string_value(json_object_get(q, "id")),
			json_string_value(json_object_get(q, "text")),
			json_is_true(json_object_get(q, "available")) ? "available" : "unavailable",
			reason ? ": " : "", reason ? reason : "");
	}
	fprintf(f, "\nWhich languages can be profiled?\n");
	json_array_foreach(json_object_get(doc, "languages"), i, v)
		fprintf(f, "  %-12s %s (%s)\n", json_string_value(json_object_get(v, "language")),
			json_string_value(json_object_get(v, "versions")),
			json_string_value(json_object_get(v, "how")));
	fclose(f);
	return buf;
}

/* What check found about the target's processes. */
struct check_scan {
	struct rt_group groups[MAX_RUNTIME_GROUPS];
	size_t ngroups, ngo, njvm;
	unsigned int seen; /* bit per enum runtime_kind, plus CHECK_GO_PPROF */
	char go_missing[320];
	uint32_t jvm_no_attach; /* a JVM started with -XX:+DisableAttachMechanism, 0 if none */
	uint32_t node_no_insp;	/* a Node.js whose inspector cannot be opened, 0 if none */
	char node_why[256];	/* why */
	json_t *procs, *gop;
};

/* Most JVMs whose attach flag check reads (each costs a VMStructs read, ~30 ms). */
#define CHECK_MAX_JVM_PROBES 8

/* A JVM whose attach mechanism is off still gets every eBPF question, but `threads` has no
 * Java thread states (they come from Thread.print through the attach protocol). */
static void scan_jvm(uint32_t pid, struct check_scan *sc)
{
	struct jvm_vmstructs *vs = NULL;
	bool off = false;

	if (sc->jvm_no_attach || jvm_vmstructs__open(pid, &vs))
		return;
	if (!jvm_vmstructs__flag_bool(vs, jvm_read_process, &pid, "DisableAttachMechanism", &off) &&
	    off) {
		sc->jvm_no_attach = pid;
		sc->seen |= CHECK_JVM_NO_ATTACH;
	}
	jvm_vmstructs__free(vs);
}

/* A Node.js whose inspector cannot be opened: it does not catch SIGUSR1 (node_inspector.h),
 * or it is too old. It has every eBPF question, without JavaScript names. */
static void scan_node(const struct check_opts *o, uint32_t pid, const struct runtime_info *ri,
		      struct check_scan *sc)
{
	if (sc->node_no_insp)
		return;
	if (atoi(ri->version) < NODE_SOURCE_MIN_MAJOR)
		snprintf(sc->node_why, sizeof(sc->node_why), "it is older than Node.js %d",
			 NODE_SOURCE_MIN_MAJOR);
	else if (node_insp_openable(o->proc_root, pid, sc->node_why, sizeof(sc->node_why)) !=
		 -ENOTSUP)
		return;
	sc->node_no_insp = pid;
	sc->seen |= CHECK_NODE_NO_INSPECTOR;
}

/* A Go program's own profiles (memory, goroutines, mutexes) come from its net/http/pprof, found
 * inside its network namespace. */
static void scan_go(const struct check_opts *o, uint32_t pid, struct check_scan *sc)
{
	struct go_endpoint ep;
	char why[256] = "", where[80];

	if (!go_pprof_find(o->proc_root, (int)pid, &ep, why, sizeof(why))) {
		sc->seen |= CHECK_GO_PPROF;
		snprintf(where, sizeof(where), "%s:%u", ep.host, ep.port);
		json_array_append_new(sc->gop, json_pack("{s:I, s:s, s:n}", "pid", (json_int_t)pid,
							 "endpoint", where, "reason"));
		return;
	}
	if (!sc->go_missing[0])
		snprintf(sc->go_missing, sizeof(sc->go_missing), "process %u: %s", pid,
			 why[0] ? why : "no endpoint found");
	json_array_append_new(sc->gop,
			      json_pack("{s:I, s:n, s:s}", "pid", (json_int_t)pid, "endpoint",
					"reason", why[0] ? why : "no endpoint found"));
}

/* The runtime of each of @pids (kernel threads left out), and the Go endpoints. */
static void scan_processes(const struct check_opts *o, const uint32_t *pids, size_t n,
			   struct check_scan *sc)
{
	struct runtime_detect_opts dopts = { .proc_root = o->proc_root };
	const char *root = o->proc_root ? o->proc_root : "/proc";
	struct runtime_info ri;
	size_t i;

	for (i = 0; i < n; i++) {
		if (is_kthread(root, pids[i]))
			continue;
		/* cached per (pid, start time, executable): GET /v1/status runs this often */
		if (runtime_detect_cached(&dopts, (int)pids[i], &ri) < 0)
			continue;
		sc->seen |= 1u << ri.kind;
		/* not for a whole server */
		if (ri.kind == RUNTIME_GO && o->target.kind != TARGET_SERVER &&
		    sc->ngo++ < CHECK_MAX_GO_PROBES)
			scan_go(o, pids[i], sc);
		if (ri.kind == RUNTIME_JVM && o->target.kind != TARGET_SERVER &&
		    sc->njvm++ < CHECK_MAX_JVM_PROBES)
			scan_jvm(pids[i], sc);
		if (ri.kind == RUNTIME_NODE && o->target.kind != TARGET_SERVER)
			scan_node(o, pids[i], &ri, sc);
		add_group(sc->groups, &sc->ngroups, &ri);
		json_array_append_new(sc->procs,
				      json_pack("{s:I, s:s, s:s, s:s}", "pid", (json_int_t)pids[i],
						"runtime", runtime_kind_name(ri.kind), "version",
						ri.version, "display", ri.display));
	}
}

static json_t *runtimes_json(const struct check_scan *sc)
{
	json_t *rts = json_array();
	size_t i;

	for (i = 0; i < sc->ngroups; i++) {
		const struct rt_group *g = &sc->groups[i];
		char t[sizeof(g->display) + 48];

		if (g->count > 1)
			snprintf(t, sizeof(t), "%.63s \u00d7 %zu processes", g->display, g->count);
		else
			snprintf(t, sizeof(t), "%.63s", g->display);
		json_array_append_new(rts,
				      json_pack("{s:s, s:s, s:I}", "text", t, "display", g->display,
						"processes", (json_int_t)g->count));
	}
	return rts;
}

/* What an available question will lack, or NULL. */
static const char *question_note(enum question q, const struct check_scan *sc, char *buf,
				 size_t size)
{
	if ((q == Q_CPU || q == Q_WALL) && sc->node_no_insp) {
		snprintf(buf, size,
			 "without JavaScript names for Node.js process %u: %s; it shows the native "
			 "frames eBPF reads",
			 sc->node_no_insp, sc->node_why);
		return buf;
	}
	if (q != Q_THREADS || !sc->jvm_no_attach)
		return NULL;
	snprintf(buf, size,
		 "without Java thread states: the JVM in process %u disables the attach "
		 "mechanism (-XX:+DisableAttachMechanism), so its threads show their eBPF "
		 "stacks only",
		 sc->jvm_no_attach);
	return buf;
}

static json_t *questions_json(const struct check_opts *o, const struct check_scan *sc, bool ready)
{
	json_t *qs = json_array();
	char why_buf[768], note_buf[512];
	size_t i;

	for (i = 0; i < Q_COUNT; i++) {
		const struct question_info *qi = question_info(i);
		const char *why = !ready ? "the server is not ready to profile" :
					   check_question_reason(i, o->target.kind, sc->seen,
								 sc->go_missing, why_buf,
								 sizeof(why_buf));

		json_array_append_new(
			qs,
			json_pack("{s:s, s:s, s:b, s:s*, s:s*}", "id", qi->id, "text", qi->text,
				  "available", why == NULL, "reason", why, "note",
				  why ? NULL : question_note(i, sc, note_buf, sizeof(note_buf))));
	}
	return qs;
}

static json_t *languages_json(void)
{
	const struct language_row *langs;
	json_t *ls = json_array();
	size_t i, n;

	langs = languages_table(&n);
	for (i = 0; i < n; i++)
		json_array_append_new(ls,
				      json_pack("{s:s, s:s, s:s, s:s}", "language",
						langs[i].language, "versions", langs[i].versions,
						"how", langs[i].how, "test", langs[i].test));
	return ls;
}

/* The document of docs/cli.md from the scan and the preflight. */
static json_t *check_doc(const struct check_opts *o, struct check_scan *sc,
			 const struct preflight *pf, bool ready)
{
	char msg[2048], who[TARGET_NAME_MAX + 32];
	json_t *reasons = json_array();
	int i;

	for (i = 0; i < pf->nreasons; i++)
		json_array_append_new(reasons, json_string(pf->reasons[i]));
	return json_pack("{s:b, s:s, s:o, s:{s:s, s:s}, s:s, s:o, s:o, s:o, s:s, s:s, s:o, s:o}",
			 "ready", ready, "message", preflight_message(pf, msg, sizeof(msg)),
			 "reasons", reasons, "target", "kind", target_kind_name(o->target.kind),
			 "description", target_describe(&o->target, who, sizeof(who)),
			 "target_description", who, "processes", sc->procs, "runtimes",
			 runtimes_json(sc), "go_pprof", sc->gop, "kernel", pf->kernel, "processor",
			 pf->processor, "questions", questions_json(o, sc, ready), "languages",
			 languages_json());
}

int check_run(const struct check_opts *o, struct check_result *out, char *err, size_t size)
{
	struct owner_resolver_opts ro = { .proc_root = o->proc_root,
					  .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct owner_resolver *owners = NULL;
	struct check_scan sc = {};
	struct preflight pf;
	uint32_t *pids = NULL;
	char *json, *text;
	json_t *doc;
	bool ready;
	int n, ret;

	ready = !preflight_check(&pf);
	ret = owner_resolver__new(&ro, &owners);
	if (ret)
		return ret;
	n = list_pids(o, owners, &pids, err, size);
	owner_resolver__free(owners);
	if (n < 0)
		return n;
	sc.procs = json_array();
	sc.gop = json_array();
	scan_processes(o, pids, (size_t)n, &sc);
	free(pids);
	doc = check_doc(o, &sc, &pf, ready);
	if (!doc)
		return -ENOMEM;
	json = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	text = render_text(doc);
	json_decref(doc);
	if (!json || !text) {
		free(json);
		free(text);
		return -ENOMEM;
	}
	out->json = json;
	out->text = text;
	out->ready = ready;
	return 0;
}

void check_result__fini(struct check_result *r)
{
	free(r->json);
	free(r->text);
	r->json = r->text = NULL;
}
