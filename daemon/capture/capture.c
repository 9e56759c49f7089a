// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "cgroups/resolver.h"
#include "daemon/capture/answer.h"
#include "daemon/capture/frames.h"
#include "daemon/capture/go_source.h"
#include "daemon/capture/jvm_source.h"
#include "daemon/capture/kept.h"
#include "daemon/capture/node_source.h"
#include "daemon/capture/nodeframes.h"
#include "daemon/capture/preflight.h"
#include "daemon/capture/jvmframes.h"
#include "daemon/capture/jvmthreads.h"
#include "daemon/capture/pyframes.h"
#include "daemon/capture/summary.h"
#include "profile/collapsed.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "symbols/symbolizer.h"

#define DEFAULT_LOCK_PATH "/run/slideops-profiler.lock"

struct capture {
	const struct capture_opts *opts;
	struct capture_result *res;
	struct symbolizer *sym;
	struct owner_resolver *owners;
	struct frames *frames;
	struct source *src;
	struct pyframes *py;	  /* the CPythons walked; NULL for memory-held/-alloc */
	struct jvmframes *jvm;	  /* the HotSpot JVMs walked; NULL for memory-held/-alloc */
	struct go_source *go;	  /* Go programs' own profiles; NULL when none are read */
	struct jvm_source *jsrc;  /* JVMs' own records (memory, locks); NULL when none are read */
	struct node_source *nsrc; /* Node.js processes read through V8; NULL when none are */
	struct nodeframes *node;  /* their V8 CPU profiles (cpu, wall) */
	char journal[600]; /* the placement journal: the lock path + CAPTURE_JOURNAL_SUFFIX */
	struct capture_target_info info;
	char go_owner[OWNER_NAME_MAX + 32];
	struct profile *prof;
	struct answer_proc *tracked; /* the target's processes, watched while it runs */
	size_t ntracked;
	const char *unit; /* of the flame graph: samples, ns, bytes */
	struct capture_step steps[CAPTURE_MAX_STEPS];
	int nsteps;
	double t0;
	bool kept_restarted; /* a window's sampler samples on (capture_kept__restart()) */
};

int capture_validate(const struct capture_opts *o, char *err, size_t size)
{
	const struct question_info *q = question_info(o->question);
	char list[128];

	if (!q) {
		snprintf(err, size, "unknown question; choose one of: %s",
			 question_list(list, sizeof(list)));
		return -EINVAL;
	}
	if (o->duration_s < 1 || o->duration_s > 60) {
		snprintf(err, size, "the duration must be a whole number of seconds from 1 to 60");
		return -EINVAL;
	}
	if (o->target.kind == TARGET_SERVER && !q->server) {
		snprintf(err, size,
			 "%s (%s) is not offered for a whole server: it is read from inside one "
			 "runtime at a time; capture it from the Service instead",
			 q->id, q->text);
		return -EINVAL;
	}
	if (!q->implemented) {
		snprintf(err, size, "%s (%s) is not available in this build yet", q->id, q->text);
		return -EINVAL;
	}
	if (o->target.kind == TARGET_PIDS && !o->target.npids) {
		snprintf(err, size, "no process to profile");
		return -EINVAL;
	}
	if (o->target.kind > TARGET_PIDS && !o->target.name[0]) {
		snprintf(err, size, "the --%s option needs a name",
			 target_kind_name(o->target.kind));
		return -EINVAL;
	}
	if (!o->out_dir || !*o->out_dir) {
		snprintf(err, size, "no output directory (--out DIR)");
		return -EINVAL;
	}
	return 0;
}

unsigned int capture_duration(const struct capture_opts *o)
{
	return o->question == Q_THREADS ? CAPTURE_THREADS_SECONDS : o->duration_s;
}

/* Progress: the step of @phase, as the plan numbered it. */
static void progress(const struct capture *c, enum capture_phase phase)
{
	int step = capture_plan_step(c->steps, c->nsteps, phase);

	if (c->opts->progress && step)
		c->opts->progress(c->opts->progress_ctx, step, c->nsteps, c->steps[step - 1].text,
				  clock_mono_s() - c->t0);
}

/* @err: "@what: reason" ("out of memory" for -ENOMEM); returns @ret. */
static int fail(char *err, size_t size, int ret, const char *what)
{
	if (ret == -ENOMEM)
		snprintf(err, size, "out of memory");
	else
		snprintf(err, size, "%s: %s", what, strerror(-ret));
	return ret;
}

static int track(struct capture *c, uint32_t pid)
{
	struct answer_proc *t;
	size_t i;

	for (i = 0; i < c->ntracked; i++)
		if (c->tracked[i].pid == pid)
			return 0;
	if (c->ntracked >= TARGET_MAX_PIDS)
		return -E2BIG;
	t = &c->tracked[c->ntracked++];
	t->pid = pid;
	t->exited_at = -1;
	proc_read_comm(c->opts->proc_root, pid, t->comm, sizeof(t->comm));
	if (!c->src)
		return 0;
	/* a CPython that joined the target while sampling runs: its frames from now on */
	if (c->py && pyframes__add(c->py, pid) > 0)
		source__add_python(c->src, pid, pyframes__bpf_of(c->py, pid));
	if (c->jvm && jvmframes__add(c->jvm, pid) > 0)
		source__add_jvm(c->src, pid, jvmframes__bpf_of(c->jvm, pid));
	return source__add_tgid(c->src, pid);
}

/* Finds the target's processes (new ones join the filter) and notes the ones that exited. */
static int refresh_target(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	uint32_t *pids;
	size_t i;
	int n, ret = 0;

	if (o->target.kind == TARGET_SERVER)
		return 0;
	pids = malloc(TARGET_MAX_PIDS * sizeof(*pids));
	if (!pids)
		return fail(err, size, -ENOMEM, "");
	n = target_resolve(&o->target, c->owners, o->proc_root, pids, TARGET_MAX_PIDS, err, size);
	/* Once sampling runs, a target whose processes all exited is a note, not an error. */
	if (n == -ENOENT && c->ntracked)
		n = 0;
	if (n < 0) {
		ret = n;
		goto out;
	}
	for (i = 0; i < (size_t)n && !ret; i++)
		ret = track(c, pids[i]);
	for (i = 0; i < c->ntracked; i++)
		if (c->tracked[i].exited_at < 0 &&
		    !target_pid_alive(o->proc_root, c->tracked[i].pid))
			c->tracked[i].exited_at = c->t0 ? clock_mono_s() - c->t0 : 0;
out:
	free(pids);
	return ret;
}

static int take_lock(const char *path)
{
	int fd, err;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void journal_path(const char *lock_path, char *buf, size_t size)
{
	snprintf(buf, size, "%s" CAPTURE_JOURNAL_SUFFIX, lock_path ? lock_path : DEFAULT_LOCK_PATH);
}

int capture_leftovers(const char *lock_path, const char *proc_root)
{
	char journal[600];
	int fd, n;

	fd = take_lock(lock_path ? lock_path : DEFAULT_LOCK_PATH);
	if (fd < 0)
		return fd;
	journal_path(lock_path, journal, sizeof(journal));
	n = jvm_source_leftovers(journal, proc_root);
	node_source_leftovers(journal, proc_root);
	close(fd);
	return n;
}

static int check_out_dir(const char *dir, char *err, size_t size)
{
	int ret = mkdir_p(dir);

	if (!ret && access(dir, W_OK) < 0)
		ret = -errno;
	if (ret)
		snprintf(err, size, "cannot write the profile to %s: %s", dir, strerror(-ret));
	return ret;
}

/* What the answer and the notes need besides the result. */
static void answer_input(const struct capture *c, struct answer_input *in,
			 struct answer_unreadable *ur)
{
	const struct frames_unreadable *fu;
	size_t i, n = frames__unreadable(c->frames, &fu);

	memset(in, 0, sizeof(*in));
	in->procs = c->tracked;
	in->nprocs = c->ntracked;
	for (i = 0; i < n && i < FRAMES_MAX_UNREADABLE; i++) {
		ur[i].pid = fu[i].pid;
		ur[i].err = fu[i].err;
		proc_read_comm(c->opts->proc_root, fu[i].pid, ur[i].comm, sizeof(ur[i].comm));
	}
	in->unreadable = ur;
	in->nunreadable = i;
	in->unattributed = frames__unattributed(c->frames);
	in->goroutines = c->info.goroutines;
	in->ngo = c->info.ngo;
	in->njvm = jvm_source__count(c->jsrc);
	in->nnode = node_source__count(c->nsrc);
	if (c->go)
		in->groups = go_source__goroutines(c->go, &in->ngroups, &in->total);
	symbolizer__refused(c->sym, NULL, &in->nrefused);
}

/* The goroutine groups the answer read, kept in the result for summary.json. */
static int keep_goroutines(struct capture *c, const struct answer_input *in)
{
	struct capture_result *r = c->res;

	if (!in->goroutines || !in->ngroups || r->goroutines)
		return 0;
	r->goroutines = calloc(in->ngroups, sizeof(*r->goroutines));
	if (!r->goroutines)
		return -ENOMEM;
	memcpy(r->goroutines, in->groups, in->ngroups * sizeof(*r->goroutines));
	r->ngoroutines = in->ngroups;
	return 0;
}

static int write_files(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct answer_unreadable ur[FRAMES_MAX_UNREADABLE];
	const char *notes[CAPTURE_MAX_NOTES + 1] = {};
	char path[4096], title[TARGET_NAME_MAX + 128], who[TARGET_NAME_MAX + 32];
	struct flamegraph_opts fg = {};
	struct answer_input in;
	size_t i;
	int ret = 0;

	for (i = 0; i < c->res->nnotes; i++)
		notes[i] = c->res->notes[i];
	snprintf(title, sizeof(title), "%s: %s, %u s", question_info(o->question)->text,
		 target_describe(&o->target, who, sizeof(who)), o->duration_s);
	fg.title = title;
	fg.answer = c->res->answer;
	fg.notes = notes;
	fg.unit = c->unit;
	answer_input(c, &in, ur);
	if (o->question == Q_THREADS)
		ret = c->info.goroutines ? answer_goroutines_table(&in, &fg) :
					   answer_threads_table(c->res, &fg);
	if (!ret)
		ret = keep_goroutines(c, &in);
	if (ret)
		return fail(err, size, ret, "");

#define WRITE(name, call)                                                                 \
	do {                                                                              \
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, name);                  \
		ret = (call);                                                             \
		if (ret < 0) {                                                            \
			snprintf(err, size, "cannot write %s: %s", path, strerror(-ret)); \
			answer_table_free(&fg);                                           \
			return ret;                                                       \
		}                                                                         \
	} while (0)
	WRITE("profile.pb.gz", pprof_write_file(c->prof, path));
	WRITE("profile.collapsed", collapsed_write_file(c->prof, path));
	/* a continuous window's is drawn from its pprof when asked (GET .../flamegraph): a day of
	 * windows keeps 1440 pages less on disk and a window's CPU leaves out the drawing */
	if (!o->kept)
		WRITE("flamegraph.html", flamegraph_write_file(c->prof, &fg, path));
	WRITE("summary.json", summary_write_file(o, c->res, path));
#undef WRITE
	answer_table_free(&fg);
	return 0;
}

static void go_labels(void *ctx, uint32_t pid, struct prof_labels *l)
{
	struct capture *c = ctx;
	struct owner o;

	if (owner_resolver__resolve(c->owners, (int)pid, &o) < 0) {
		memset(&o, 0, sizeof(o));
		o.group = OWNER_OTHER;
	}
	l->owner = owner_format(&o, c->go_owner, sizeof(c->go_owner));
	l->process = frames__process_name(c->frames, pid, NULL);
}

/* The notes of a target whose Go programs are read only in part. */
static void go_partial_notes(struct capture *c)
{
	const struct capture_opts *o = c->opts;

	if (o->question == Q_LOCKS && c->info.ngo_missing)
		answer_add_note(c->res,
				"A Go program of the target does not serve net/http/pprof "
				"(%s): goroutines waiting on a sync.Mutex park without a "
				"futex, so only its futex waits are seen. Serve "
				"net/http/pprof on a local port to see them too.",
				c->info.go_missing);
	if (o->question == Q_THREADS && c->info.ngo_missing)
		answer_add_note(c->res,
				"A Go program of the target does not serve net/http/pprof "
				"(%s): these are its OS threads, not its goroutines. Serve "
				"net/http/pprof on a local port to see every goroutine and "
				"where it waits.",
				c->info.go_missing);
	if (o->question == Q_THREADS && c->info.ngo && !c->info.goroutines)
		answer_add_note(c->res, "The target's Go programs serve net/http/pprof, but it has "
					"other processes too: this shows OS threads. Capture a Go "
					"program alone (--pid) to see its goroutines.");
}

/* The Go programs of the target whose own profiles the question reads (daemon/capture/go_source.h);
 * refuses memory-held and memory-alloc for a target without one. */
static int prepare_go(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	uint32_t *pids;
	size_t i;
	int ret;

	c->info.nprocs = (int)c->ntracked;
	if ((!go_source_question(o->question) && !node_source_question(o->question)) ||
	    o->target.kind == TARGET_SERVER)
		return 0;
	ret = go_source_question(o->question) ? go_source__new(o->question, o->proc_root, &c->go) :
						0;
	if (ret)
		return fail(err, size, ret, "cannot read the Go programs");
	pids = malloc((c->ntracked ? c->ntracked : 1) * sizeof(*pids));
	if (!pids)
		return fail(err, size, -ENOMEM, "");
	for (i = 0; i < c->ntracked; i++) {
		pids[i] = c->tracked[i].pid;
		frames__remember_name(c->frames, pids[i]);
	}
	capture_inspect_go(o, pids, c->ntracked, c->go, &c->info);
	free(pids);
	if (c->info.refuse[0]) {
		snprintf(err, size, "%s", c->info.refuse);
		return -EOPNOTSUPP;
	}
	go_partial_notes(c);
	if (!c->info.goroutines && o->question == Q_THREADS) {
		go_source__free(c->go);
		c->go = NULL;
	}
	return 0;
}

/* The JVMs of the target read through their attach mechanism (daemon/capture/jvm_source.h):
 * found by capture_inspect_go() (prepare_go). */
static int prepare_jvm(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct jvm_source_opts jo = {
		.question = o->question,
		.proc_root = o->proc_root,
		.async_profiler = o->async_profiler ? o->async_profiler : CAPTURE_ASYNC_PROFILER,
		.journal = c->journal,
		.duration_s = o->duration_s,
	};
	size_t i;
	int ret;

	if (!jvm_source_question(o->question) || !c->info.njvm)
		return 0;
	ret = jvm_source__new(&jo, &c->jsrc);
	if (ret)
		return fail(err, size, ret, "cannot read the JVMs");
	for (i = 0; i < c->info.njvm; i++)
		jvm_source__add(c->jsrc, c->info.jvm[i].pid, c->info.jvm[i].comm,
				c->info.jvm[i].version);
	return 0;
}

/* The Node.js processes of the target read through V8's inspector (daemon/capture/
 * node_source.h): found by capture_inspect_go() (prepare_go). */
static int prepare_node(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct node_source_opts no = { .question = o->question,
				       .proc_root = o->proc_root,
				       .journal = c->journal };
	size_t i;
	int ret;

	if (!node_source_question(o->question) || !c->info.nnode)
		return 0;
	ret = node_source__new(&no, &c->nsrc);
	if (ret)
		return fail(err, size, ret, "cannot read the Node.js processes");
	for (i = 0; i < c->info.nnode; i++)
		node_source__add(c->nsrc, c->info.node[i].pid, c->info.node[i].comm,
				 c->info.node[i].version);
	return 0;
}

/* Opens the Node.js processes' inspectors and starts V8's profiler; for cpu and wall, their
 * main threads' samples are timed from then on to be matched with V8's. */
static void start_node(struct capture *c)
{
	const uint32_t *pids;
	size_t i, n;

	if (!c->nsrc)
		return;
	node_source__start(c->nsrc);
	n = node_source__running(c->nsrc, &pids);
	for (i = 0; c->src && i < n; i++)
		source__add_timed(c->src, pids[i]);
}

/* Sleeps or polls until the duration is over or the capture is stopped; refreshes the target
 * and the progress about once a second. */
static int sample(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	double t_last = 0, left;
	int ret;

	c->t0 = clock_mono_s();
	progress(c, CAPTURE_PHASE_SAMPLE);
	while (!(o->stop && *o->stop)) {
		left = o->duration_s - (clock_mono_s() - c->t0);
		if (left <= 0)
			break;
		if (c->src) {
			ret = source__poll(c->src, left < 0.2 ? (int)(left * 1000) + 1 : 200);
		} else {
			/* nothing to poll: the runtime is read at the start and at the end */
			struct timespec ts = { 0, left < 0.2 ? (long)(left * 1e9) + 1000000 :
							       200000000 };

			ret = nanosleep(&ts, NULL) ? -errno : 0;
		}
		if (ret < 0 && ret != -EINTR)
			return fail(err, size, ret, "sampling failed");
		if (clock_mono_s() - t_last >= 1.0) {
			t_last = clock_mono_s();
			refresh_target(c, err, size);
			progress(c, CAPTURE_PHASE_SAMPLE);
		}
	}
	if (c->src)
		source__stop(c->src);
	refresh_target(c, err, size);
	c->res->sampled_s = clock_mono_s() - c->t0;
	if (o->stop && *o->stop) {
		snprintf(err, size,
			 "the capture was stopped before it finished; nothing was written");
		return -ECANCELED;
	}
	return 0;
}

/* Validates, checks the server is ready and takes the lock. Returns the lock's fd or -errno. */
static int capture_begin(const struct capture_opts *o, char *err, size_t size)
{
	struct preflight pf;
	int ret, fd;

	ret = capture_validate(o, err, size);
	if (ret)
		return ret;
	if (preflight_check(&pf)) {
		preflight_message(&pf, err, size);
		return -EPERM;
	}
	fd = take_lock(o->lock_path ? o->lock_path : DEFAULT_LOCK_PATH);
	if (fd == -EBUSY)
		snprintf(err, size, CAPTURE_BUSY_MSG);
	else if (fd < 0)
		snprintf(err, size, "cannot take the capture lock: %s", strerror(-fd));
	return fd;
}

/* The symbolizer the caller keeps between captures (made by the first): the processes that
 * exited and the last capture's refused files forgotten. */
static int keep_symbolizer(struct capture *c, const struct symbolizer_opts *so)
{
	struct symbolizer **keep = c->opts->keep_symbolizer;
	int ret = *keep ? 0 : symbolizer__new(so, keep);

	if (ret)
		return ret;
	symbolizer__sweep(*keep);
	symbolizer__forget_refused(*keep);
	c->sym = *keep;
	return 0;
}

/* A window of the sampler kept loaded: its caches, its running sampler. */
static int borrow_kept(struct capture *c, char *err, size_t size)
{
	const struct capture_kept_parts *p = capture_kept__parts(c->opts->kept);

	c->sym = p->sym;
	c->owners = p->owners;
	c->frames = p->frames;
	c->py = p->py;
	c->jvm = p->jvm;
	frames__next(c->frames);
	return check_out_dir(c->opts->out_dir, err, size);
}

/* Hands back what borrow_kept() borrowed, so that capture_free() frees the window's own. */
static void return_kept(struct capture *c)
{
	if (c->opts->keep_symbolizer)
		c->sym = NULL;
	if (!c->opts->kept)
		return;
	c->src = NULL;
	c->sym = NULL;
	c->owners = NULL;
	c->frames = NULL;
	c->py = NULL;
	c->jvm = NULL;
}

/* The capture's state, the target's processes, the output directory and the Go programs. */
static int capture_setup(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct symbolizer_opts so = { .proc_root = o->proc_root };
	struct owner_resolver_opts ro = { .proc_root = o->proc_root,
					  .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct frames_opts fo = { .question = o->question, .proc_root = o->proc_root };
	int ret;

	c->res = calloc(1, sizeof(*c->res));
	c->tracked = calloc(TARGET_MAX_PIDS, sizeof(*c->tracked));
	if (!c->res || !c->tracked)
		return fail(err, size, -ENOMEM, "");
	if (o->kept)
		return borrow_kept(c, err, size);
	ret = o->keep_symbolizer ? keep_symbolizer(c, &so) : symbolizer__new(&so, &c->sym);
	if (ret)
		return fail(err, size, ret, "cannot start the symbolizer");
	ret = owner_resolver__new(&ro, &c->owners);
	if (ret)
		return fail(err, size, ret, "cannot start the owner resolver");
	fo.sym = c->sym;
	fo.owners = c->owners;
	fo.symbols = o->symbols;
	/* every question whose stacks come from eBPF names the CPython frames (issue 13) */
	if (o->question != Q_MEMORY_HELD && o->question != Q_MEMORY_ALLOC) {
		ret = pyframes__new(o->proc_root, &c->py);
		if (ret)
			return fail(err, size, ret, "");
		fo.py = c->py;
		ret = jvmframes__new(o->proc_root, &c->jvm);
		if (ret)
			return fail(err, size, ret, "");
		fo.jvm = c->jvm;
	}
	ret = frames__new(&fo, &c->frames);
	if (ret)
		return fail(err, size, ret, "");
	/* The target must exist before anything is loaded. */
	ret = refresh_target(c, err, size);
	if (!ret)
		ret = check_out_dir(o->out_dir, err, size);
	if (!ret)
		ret = prepare_go(c, err, size);
	if (!ret)
		ret = prepare_jvm(c, err, size);
	if (!ret)
		ret = prepare_node(c, err, size);
	if (!ret && c->nsrc && (o->question == Q_CPU || o->question == Q_WALL)) {
		ret = nodeframes__new(&c->node);
		if (ret)
			return fail(err, size, ret, "");
		frames__set_node(c->frames, c->node);
	}
	return ret;
}

/* The CPython processes of the target (the whole server: every one), registered with the
 * sampler before it attaches so that their first samples carry Python frames. */
static void find_python(struct capture *c, struct source_opts *so)
{
	size_t i;

	if (!c->py)
		return;
	if (c->opts->target.kind == TARGET_SERVER)
		pyframes__add_all(c->py);
	for (i = 0; i < c->ntracked; i++)
		pyframes__add(c->py, c->tracked[i].pid);
	so->npy = pyframes__bpf(c->py, &so->py_tgids, &so->py_procs);
}

/* The HotSpot JVMs of the target (the whole server: every one), read before the sampler
 * attaches; registered with it by add_jvms() once it is loaded. */
static void find_jvms(struct capture *c)
{
	size_t i;

	if (!c->jvm)
		return;
	if (c->opts->target.kind == TARGET_SERVER)
		jvmframes__add_all(c->jvm);
	for (i = 0; i < c->ntracked; i++)
		jvmframes__add(c->jvm, c->tracked[i].pid);
}

static void add_jvms(struct capture *c)
{
	const struct uw_jvm *uw;
	uint32_t tgid;
	size_t i;

	for (i = 0; c->jvm && i < jvmframes__count(c->jvm); i++) {
		uw = jvmframes__bpf_at(c->jvm, i, &tgid);
		if (uw)
			source__add_jvm(c->src, tgid, uw);
	}
}

/* Step 2: loads the eBPF programs the question needs (none when the runtime answers). */
static int start_source(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct source_opts so = {
		.question = o->question,
		.freq_hz = o->freq_hz ? o->freq_hz : 99,
		.on_new_task = frames_on_new_task,
		.ctx = c->frames,
		.filter_tgids = o->target.kind != TARGET_SERVER,
		.ksym = frames_ksym,
		.ksym_ctx = c->frames,
		.py = c->py,   /* CPythons that start while it runs */
		.jvm = c->jvm, /* and JVMs */
		.keep_sampler = o->keep_sampler,
	};
	size_t i;
	int ret;

	if (o->question == Q_MEMORY_HELD || o->question == Q_MEMORY_ALLOC || c->info.goroutines)
		return 0;
	if (o->kept) {
		c->src = capture_kept__parts(o->kept)->src; /* sampling since the last window */
		return 0;
	}
	find_python(c, &so);
	find_jvms(c);
	ret = source__new(&so, &c->src);
	if (ret)
		return fail(err, size, ret, "cannot start the eBPF programs");
	add_jvms(c);
	if (c->py)
		pyframes__set_failed(c->py, source__python_err(c->src));
	for (i = 0, ret = 0; i < c->ntracked && !ret; i++)
		ret = source__add_tgid(c->src, c->tracked[i].pid);
	if (ret)
		return fail(err, size, ret, "cannot set the sampler's filter");
	return 0;
}

/* The profile of the question: its sample types, time and period. */
static int new_profile(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	unsigned int hz = o->freq_hz ? o->freq_hz : 99;
	struct profile_opts po = {};
	int ret;

	c->unit = source_profile_types(o->question, 1000000000LL / hz, &po);
	if (c->info.goroutines) {
		po.sample_type[0] = "goroutines";
		po.sample_unit[0] = "count";
		po.nvalues = 1;
		po.period_type = "goroutines";
		po.period_unit = "count";
		po.period = 1;
		c->unit = "goroutines";
	}
	po.time_nanos = c->res->start_ns;
	po.duration_nanos = (int64_t)(c->res->sampled_s * 1e9);
	po.owner_root = o->target.kind == TARGET_SERVER;
	ret = profile__new(&po, &c->prof);
	if (ret)
		return fail(err, size, ret, "cannot build the profile");
	frames__set_profile(c->frames, c->prof);
	return 0;
}

/* The user stacks eBPF could not complete in V8's code are complete once V8's profile names
 * their JavaScript: they are not incomplete for the note. */
static void node_stacks(struct capture *c)
{
	struct source_stats *st = &c->res->stats;
	uint64_t m = nodeframes__matched(c->node);
	size_t len;

	if (!m || !st->stacks)
		return;
	st->stacks_incomplete -= m < st->stacks_incomplete ? m : st->stacks_incomplete;
	st->stacks_incomplete_pct = 100.0 * (double)st->stacks_incomplete / (double)st->stacks;
	if (st->stacks_incomplete_pct < 1.0) {
		st->stacks_detail[0] = '\0';
		return;
	}
	len = strlen(st->stacks_detail);
	snprintf(st->stacks_detail + len, sizeof(st->stacks_detail) - len,
		 " (of these, the JavaScript of %llu Node.js samples was named from V8's own "
		 "profile)",
		 (unsigned long long)m);
}

/* Step 4, reading: the samples and the Go programs' profiles into the profile. */
static int read_back(struct capture *c, char *err, size_t size)
{
	const char *const *gn;
	size_t i, n;
	int ret;

	ret = new_profile(c, err, size);
	if (ret)
		return ret;
	/* the JVMs first: their lock events replace their Java threads' futex waits */
	if (c->jsrc) {
		const uint32_t *lp;

		ret = jvm_source__finish(c->jsrc, c->prof, go_labels, c);
		if (ret)
			return fail(err, size, ret, "reading the JVMs' records failed");
		n = jvm_source__runtime_locks(c->jsrc, &lp);
		for (i = 0; c->jvm && i < n; i++)
			jvmframes__set_runtime_locks(c->jvm, lp[i]);
		n = jvm_source__notes(c->jsrc, &gn);
		for (i = 0; i < n; i++)
			answer_add_note(c->res, "%s", gn[i]);
	}
	/* Node.js: V8's CPU profiles before the samples they name, its heap profiles */
	if (c->nsrc) {
		ret = node_source__finish(c->nsrc, c->prof, go_labels, c, c->node);
		if (ret)
			return fail(err, size, ret, "reading V8's profiles failed");
		n = node_source__notes(c->nsrc, &gn);
		for (i = 0; i < n; i++)
			answer_add_note(c->res, "%s", gn[i]);
	}
	ret = c->src ? source__drain(c->src, frames_on_sample, c->frames) : 0;
	if (ret)
		return fail(err, size, ret, "reading the samples failed");
	c->res->samples = frames__samples(c->frames);
	if (c->src)
		source__stats(c->src, &c->res->stats);
	if (c->opts->kept) {
		/* the next window samples while this one is named and written */
		ret = capture_kept__restart(c->opts->kept);
		c->kept_restarted = true;
		if (ret)
			return fail(err, size, ret, "cannot sample on");
	}
	node_stacks(c);
	if (c->go) {
		ret = go_source__finish(c->go, c->prof, go_labels, c);
		if (ret)
			return fail(err, size, ret, "reading the Go programs' profiles failed");
		n = go_source__notes(c->go, &gn);
		for (i = 0; i < n; i++)
			answer_add_note(c->res, "%s", gn[i]);
	}
	return 0;
}

/* The note of the files a size limit or safe_open kept from being read for names. */
static void refused_note(struct capture *c)
{
	const struct sym_refused *r;
	char note[4096]; /* eight paths and reasons fit */
	size_t total, n = symbolizer__refused(c->sym, &r, &total);

	if (symbolizer_refused_note(r, n, total, note, sizeof(note)))
		answer_add_note(c->res, "%s", note);
}

/* Step 4, naming: the threads table, the report, the answer, the notes, the processes. */
static int conclude(struct capture *c, char *err, size_t size)
{
	struct answer_unreadable ur[FRAMES_MAX_UNREADABLE];
	struct capture_result *r = c->res;
	const struct thread_entry *e;
	struct answer_input in;
	size_t i, n;
	int ret;

	if (c->opts->question == Q_THREADS && c->src) {
		e = source__threads(c->src, &n);
		r->threads = calloc(n ? n : 1, sizeof(*r->threads));
		if (!r->threads)
			return fail(err, size, -ENOMEM, "");
		r->nthreads = frames__collect_threads(c->frames, e, n, r->threads);
		if (c->jvm)
			jvmthreads_join(c->opts->proc_root, c->jvm, r->threads, r->nthreads, r);
	}
	ret = report__new(c->prof, NULL, &r->report);
	if (ret)
		return fail(err, size, ret, "cannot summarize the profile");
	answer_input(c, &in, ur);
	answer_write(c->opts, &in, r);
	answer_notes(c->opts, &in, r);
	refused_note(c);
	if (c->py)
		pyframes__notes(c->py, r);
	if (c->jvm)
		jvmframes__notes(c->jvm, r);
	if (c->node)
		nodeframes__notes(c->node, r);
	r->pids = malloc((c->ntracked ? c->ntracked : 1) * sizeof(*r->pids));
	if (!r->pids)
		return fail(err, size, -ENOMEM, "");
	for (i = 0; i < c->ntracked; i++)
		r->pids[i] = c->tracked[i].pid;
	r->npids = c->ntracked;
	return 0;
}

static void capture_free(struct capture *c)
{
	return_kept(c);
	source__free(c->src);
	go_source__free(c->go);
	jvm_source__free(c->jsrc);
	node_source__free(c->nsrc);
	profile__free(c->prof);
	nodeframes__free(c->node);
	frames__free(c->frames);
	pyframes__free(c->py);
	jvmframes__free(c->jvm);
	symbolizer__free(c->sym);
	owner_resolver__free(c->owners);
	capture_result__free(c->res);
	free(c->tracked);
}

/* A window's end: the sampler samples on whatever happened (a window that failed after its
 * sampling stopped starts it again), and the caches forget the processes that exited. */
static void kept_end(struct capture *c)
{
	if (!c->opts->kept)
		return;
	if (!c->kept_restarted && capture_kept__restart(c->opts->kept))
		pr_warn("continuous profiling: the sampler could not start again");
	capture_kept__sweep(c->opts->kept);
}

int capture_run(const struct capture_opts *opts, struct capture_result **out, char *err,
		size_t size)
{
	struct capture_opts eff = *opts;
	struct capture c = { .opts = &eff };
	int lockfd, ret;
	double t_end;

	eff.duration_s = capture_duration(opts);
	if (opts->kept) {
		/* a window: beside requested captures, never in a container */
		eff.freq_hz = capture_kept__hz(opts->kept);
		ret = capture_validate(&eff, err, size);
		if (ret)
			return ret;
		lockfd = -1;
	} else {
		lockfd = capture_begin(opts, err, size);
		if (lockfd < 0)
			return lockfd;
		/* What a killed capture left in containers, now that no other capture runs. */
		journal_path(opts->lock_path, c.journal, sizeof(c.journal));
		jvm_source_leftovers(c.journal, opts->proc_root);
		node_source_leftovers(c.journal, opts->proc_root);
	}
	ret = capture_setup(&c, err, size);
	if (ret)
		goto out;
	c.nsteps = capture_plan(&eff, &c.info, c.steps, CAPTURE_MAX_STEPS);
	c.t0 = clock_mono_s();
	c.res->start_ns = clock_real_ns();

	/* The binary is already here: nothing to install on a plain server. */
	progress(&c, CAPTURE_PHASE_BINARY);
	progress(&c, CAPTURE_PHASE_PREPARE);
	ret = start_source(&c, err, size);
	if (ret)
		goto out;
	/* The Go programs' start snapshots first. */
	if (c.go)
		go_source__start(c.go);
	if (c.jsrc)
		jvm_source__start(c.jsrc);
	start_node(&c);
	ret = sample(&c, err, size);
	if (ret)
		goto out;
	t_end = clock_mono_s();

	progress(&c, CAPTURE_PHASE_READ);
	ret = read_back(&c, err, size);
	if (!ret)
		ret = conclude(&c, err, size);
	if (ret)
		goto out;

	progress(&c, CAPTURE_PHASE_WRITE);
	c.res->result_s = clock_mono_s() - t_end;
	ret = write_files(&c, err, size);
	if (ret)
		goto out;
	c.res->result_s = clock_mono_s() - t_end;
	c.res->profile = c.prof;
	c.prof = NULL;
	*out = c.res;
	c.res = NULL;
out:
	kept_end(&c);
	capture_free(&c);
	if (lockfd >= 0)
		close(lockfd);
	return ret;
}
