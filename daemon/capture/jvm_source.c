// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/jvm_source.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "base/safe_place.h"
#include "base/sha256.h"
#include "base/strlist.h"
#include "daemon/capture/jvm_journal.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/jvm/jfr.h"
#include "runtimes/jvm/jvm_asprof.h"
#include "runtimes/jvm/jvm_attach.h"
#include "runtimes/jvm/jvm_guard.h"
#include "runtimes/jvm/jvm_jfrctl.h"
#include "runtimes/jvm/jvm_records.h"

#define LIB_NAME "libasyncProfiler.so"
#define JFC_NAME "slideops.jfc"
#define JFR_NAME "slideops.jfr"
#define ASPROF_OUT "slideops.collapsed"

/* Where our directory may go, in order (the first that is there, writable and, for the
 * library, not noexec). */
static const char *const place_dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };

struct jvm_sproc {
	uint32_t pid;
	char comm[16];
	struct jvm_attach_ids ids;
	unsigned long long starttime;
	int rootfd;
	struct safe_place place;
	bool placed;
	bool started;	  /* the recording or the profiler runs */
	bool read;	  /* its output was added */
	bool asprof;	  /* async-profiler is loaded (else its Flight Recorder records) */
	char version[32]; /* "17", as runtime detection found it */
	char id[17];	  /* its identity (identity()), for the crash records */
	char rec[32];	  /* our recording's name: "slideops-<hex>" */
	/* the JVM's own JFR repositories ("2026_12_02_06_45_25_<nspid>") in our location before
	 * the recording started: one made by our JFR.start is removed again when it is empty */
	char repos[4][40];
	size_t nrepos;
	char journal[64];
};

struct jvm_source {
	struct jvm_source_opts o;
	void *lib; /* the async-profiler library, NULL: JFR */
	size_t lib_len;
	uint8_t lib_sha[SHA256_DIGEST_LEN];
	char lib_hex[2 * SHA256_DIGEST_LEN + 1];
	int64_t start_ns; /* wall clock when the recordings started */
	struct jvm_sproc procs[JVM_SOURCE_MAX_PROCS];
	size_t nprocs;
	uint32_t locks_pids[JVM_SOURCE_MAX_PROCS];
	size_t nlocks;
	struct strlist notes;
};

bool jvm_source_question(enum question q)
{
	return q == Q_MEMORY_ALLOC || q == Q_MEMORY_HELD || q == Q_LOCKS;
}

/* A note for the capture's answer (at most STRLIST_MAX). */
#define note(src, ...) strlist_addf(&(src)->notes, __VA_ARGS__)

static enum jvm_jfr_mode jfr_mode(enum question q)
{
	return q == Q_MEMORY_ALLOC ? JVM_JFR_ALLOC :
	       q == Q_MEMORY_HELD  ? JVM_JFR_HELD :
				     JVM_JFR_LOCKS;
}

static enum jvm_asprof_mode asprof_mode(enum question q)
{
	return q == Q_MEMORY_ALLOC ? JVM_ASPROF_ALLOC :
	       q == Q_MEMORY_HELD  ? JVM_ASPROF_LIVE :
				     JVM_ASPROF_LOCK;
}

/* The library, read whole from the agent's own file system (not a container's). */
static int load_lib(struct jvm_source *js, const char *path)
{
	size_t len = 0;
	char *buf = NULL;
	int err;

	err = read_file_bounded(AT_FDCWD, path, JVM_SOURCE_MAX_LIB, &buf, &len);
	if (err == -ENOENT)
		return 0; /* not installed: JFR */
	if (err) {
		note(js,
		     "async-profiler at %s could not be read (%s): the JVMs' own Flight Recorder "
		     "is used instead.",
		     path, strerror(-err));
		return 0;
	}
	js->lib = buf;
	js->lib_len = len;
	sha256(buf, len, js->lib_sha);
	sha256_hex(js->lib_sha, js->lib_hex);
	return 0;
}

int jvm_source__new(const struct jvm_source_opts *o, struct jvm_source **out)
{
	struct jvm_source *js = calloc(1, sizeof(*js));
	int err = 0;

	if (!js)
		return -ENOMEM;
	js->o = *o;
	if (o->async_profiler && *o->async_profiler)
		err = load_lib(js, o->async_profiler);
	if (err) {
		jvm_source__free(js);
		return err;
	}
	*out = js;
	return 0;
}

int jvm_source__add(struct jvm_source *js, uint32_t pid, const char *comm, const char *version)
{
	struct jvm_sproc *p;
	size_t i, l;

	for (i = 0; i < js->nprocs; i++)
		if (js->procs[i].pid == pid)
			return -EEXIST;
	if (js->nprocs >= JVM_SOURCE_MAX_PROCS)
		return -E2BIG;
	p = &js->procs[js->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->rootfd = -1;
	l = comm ? strnlen(comm, sizeof(p->comm) - 1) : 0;
	memcpy(p->comm, comm ? comm : "", l);
	p->comm[l] = '\0';
	snprintf(p->version, sizeof(p->version), "%s", version ? version : "");
	return 0;
}

size_t jvm_source__count(const struct jvm_source *js)
{
	return js ? js->nprocs : 0;
}

bool jvm_source__async_profiler(const struct jvm_source *js, size_t *size, const char **sha256)
{
	if (!js || !js->lib)
		return false;
	*size = js->lib_len;
	*sha256 = js->lib_hex;
	return true;
}

size_t jvm_source__notes(const struct jvm_source *js, const char *const **notes)
{
	return strlist_get(&js->notes, notes);
}

size_t jvm_source__runtime_locks(const struct jvm_source *js, const uint32_t **pids)
{
	*pids = js ? js->locks_pids : NULL;
	return js ? js->nlocks : 0;
}

/* "slideops-" and 12 random hex digits: never a number, never one a JVM already has. */
static void random_name(char *buf, size_t size)
{
	uint8_t r[6] = { 0 };
	size_t i;
	int n;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		uint64_t t = (uint64_t)clock_real_ns() ^ (uint64_t)getpid() << 40;

		memcpy(r, &t, sizeof(r));
	}
	n = snprintf(buf, size, "slideops-");
	for (i = 0; i < sizeof(r) && n > 0 && (size_t)n + 2 < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%02x", r[i]);
}

/* Why the attach protocol failed, for a note. */
static void attach_why(int err, char *why, size_t size)
{
	if (err == -EROFS)
		snprintf(why, size,
			 "its /tmp is read-only, and the JVM's attach mechanism "
			 "needs to make a file there");
	else
		snprintf(why, size, "%s",
			 jvm_attach_reason(err) ? jvm_attach_reason(err) : strerror(-err));
}

/* Runs a jcmd @line in @p's JVM; the answer must say @step was done. */
static int jcmd(struct jvm_sproc *p, const char *line, enum jvm_jfr_step step, char *why,
		size_t size)
{
	const char *args[1] = { line };
	char *text = NULL;
	size_t len = 0;
	int code = 0, err;

	err = jvm_attach_run(p->pid, "jcmd", args, 1, NULL, &code, &text, &len);
	if (err) {
		attach_why(err, why, size);
		return err;
	}
	err = jvm_jfrctl_answer(step, text, len, why, size);
	free(text);
	return err;
}

/* Runs `load <lib> true <options>` in @p's JVM; the agent must answer 0. */
static int asprof_load(struct jvm_source *js, struct jvm_sproc *p, const char *options, char *why,
		       size_t size)
{
	char lib[128];
	const char *args[3] = { lib, "true", options };
	char *text = NULL;
	size_t len = 0;
	int code = 0, rc = 0, err;

	(void)js;
	snprintf(lib, sizeof(lib), "%s/" LIB_NAME, p->place.path);
	err = jvm_attach_run(p->pid, "load", args, 3, NULL, &code, &text, &len);
	if (err) {
		attach_why(err, why, size);
		return err;
	}
	err = jvm_asprof_parse_code(text, len, &rc);
	free(text);
	if (!err && !rc && !code)
		return 0;
	snprintf(why, size, "the JVM answered %d and async-profiler %d%s", code, rc,
		 rc == 100 ? " (bad arguments)" :
		 rc == 200 ? " (it could not start; is another profiler running?)" :
			     "");
	return -EREMOTEIO;
}

/* The JVM's ids, its start time and its root; then our directory in its container. */
static int place_dir(struct jvm_source *js, struct jvm_sproc *p, char *why, size_t size)
{
	struct proc_stat st;
	char *text = NULL;
	size_t len = 0;
	int err;

	err = proc_read(js->o.proc_root, p->pid, "status", 16384, &text, &len);
	if (!err)
		err = jvm_attach_parse_status(text, len, &p->ids);
	free(text);
	if (!err)
		err = proc_read_stat(js->o.proc_root, p->pid, &st);
	if (err) {
		snprintf(why, size, "%s", err == -ESRCH ? "it exited" : strerror(-err));
		return err;
	}
	p->starttime = st.starttime;
	p->rootfd = safe_open_root(js->o.proc_root, p->pid);
	if (p->rootfd < 0) {
		err = p->rootfd;
		snprintf(why, size, "its root cannot be opened (%s)", strerror(-err));
		return err;
	}
	text = NULL;
	err = proc_read(js->o.proc_root, p->pid, "mountinfo", 1u << 20, &text, &len);
	if (!err) {
		struct safe_place_opts po = {
			.mountinfo = text,
			.mountinfo_len = len,
			.dirs = place_dirs,
			.ndirs = sizeof(place_dirs) / sizeof(place_dirs[0]),
			.need_exec = p->asprof,
			/* the library, or room for the JVM's output */
			.need_bytes = p->asprof ? js->lib_len + (1u << 20) : JVM_SOURCE_NEED_BYTES,
			.uid = p->ids.euid,
			.gid = p->ids.egid,
		};

		err = safe_place_dir_opts(p->rootfd, &po, &p->place, why, size);
	} else
		snprintf(why, size, "its mounts cannot be read (%s)", strerror(-err));
	free(text);
	if (err)
		return err;
	if (why[0])
		note(js, "The JVM in process %u (%s): our files went to %s, not /tmp (%s).", p->pid,
		     p->comm, p->place.path, why);
	why[0] = '\0';
	p->placed = true;
	random_name(p->rec, sizeof(p->rec));
	jvm_journal_add(js->o.journal, p->pid, p->starttime, p->place.path, p->rec, p->asprof,
			p->journal, sizeof(p->journal));
	return 0;
}

/* Copies async-profiler in and starts it. */
static int start_asprof(struct jvm_source *js, struct jvm_sproc *p, char *why, size_t size)
{
	char opts[256];
	int err;

	err = safe_place_file(&p->place, LIB_NAME, js->lib, js->lib_len, 0500, js->lib_sha);
	if (err) {
		snprintf(why, size, "async-profiler could not be copied into %s (%s)",
			 p->place.path,
			 err == -EBADMSG ? "its sha256 did not match after writing" :
					   strerror(-err));
		return err;
	}
	err = jvm_asprof_start_options(asprof_mode(js->o.question), opts, sizeof(opts));
	if (err < 0) {
		snprintf(why, size, "%s", strerror(-err));
		return err;
	}
	/* it stops by itself if we were killed */
	snprintf(opts + err, sizeof(opts) - (size_t)err, ",timeout=%u",
		 js->o.duration_s + JVM_SOURCE_SPARE_S);
	return asprof_load(js, p, opts, why, size);
}

/* "YYYY_MM_DD_HH_MM_SS_<nspid>": the name HotSpot gives its JFR repository. */
static bool repo_name(const char *n, uint32_t nspid)
{
	char tail[16];
	size_t i;

	if (strnlen(n, 40) < 21)
		return false;
	for (i = 0; i < 19; i++)
		if (i == 4 || i == 7 || i == 10 || i == 13 || i == 16 ?
			    n[i] != '_' :
			    !isdigit((unsigned char)n[i]))
			return false;
	snprintf(tail, sizeof(tail), "_%u", nspid);
	return !strcmp(n + 19, tail);
}

/* Calls @fn for each JFR repository of @p's JVM in our location. */
static void each_repo(struct jvm_sproc *p, void (*fn)(struct jvm_sproc *, int, const char *))
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;
	int fd;

	fd = openat(p->place.parentfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	/* a container may fill its /tmp with names: a bounded look */
	while ((de = readdir(d)) && n++ < JVM_SOURCE_MAX_TMP_NAMES)
		if (de->d_type == DT_DIR && repo_name(de->d_name, p->ids.nspid))
			fn(p, dirfd(d), de->d_name);
	closedir(d);
}

static void repo_seen(struct jvm_sproc *p, int dfd, const char *name)
{
	(void)dfd;
	if (p->nrepos < sizeof(p->repos) / sizeof(p->repos[0]))
		snprintf(p->repos[p->nrepos++], sizeof(p->repos[0]), "%s", name);
}

/* A repository that was not there before our recording, and is empty: removed (rmdir refuses
 * anything else). */
static void repo_new(struct jvm_sproc *p, int dfd, const char *name)
{
	size_t i;

	for (i = 0; i < p->nrepos; i++)
		if (!strcmp(p->repos[i], name))
			return;
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* Places our settings and starts a Flight Recorder recording. */
static int start_jfr(struct jvm_source *js, struct jvm_sproc *p, char *why, size_t size)
{
	const char *jfc = jvm_jfrctl_settings(jfr_mode(js->o.question));
	uint8_t digest[SHA256_DIGEST_LEN];
	char path[128], out[128], line[512];
	int err;

	sha256(jfc, strlen(jfc), digest);
	err = safe_place_file(&p->place, JFC_NAME, jfc, strlen(jfc), 0400, digest);
	if (err) {
		snprintf(why, size, "our recording settings could not be written into %s (%s)",
			 p->place.path, strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/" JFC_NAME, p->place.path);
	each_repo(p, repo_seen);
	snprintf(out, sizeof(out), "%s/" JFR_NAME, p->place.path);
	err = jvm_jfrctl_start(line, sizeof(line), p->rec, path,
			       js->o.duration_s + JVM_SOURCE_SPARE_S, out);
	if (err < 0) {
		snprintf(why, size, "%s", strerror(-err));
		return err;
	}
	return jcmd(p, line, JVM_JFR_STEP_START, why, size);
}

static void unplace(struct jvm_source *js, struct jvm_sproc *p)
{
	int err;

	(void)js;
	if (p->placed && !p->asprof)
		each_repo(p, repo_new);
	if (p->placed) {
		err = safe_place_remove(&p->place);
		if (err)
			note(js,
			     "The JVM in process %u (%s): our directory %s in its container could "
			     "not be removed (%s).",
			     p->pid, p->comm, p->place.path, strerror(-err));
		p->placed = false;
	}
	if (p->journal[0])
		jvm_journal_remove(js->o.journal, p->journal);
	p->journal[0] = '\0';
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->rootfd = -1;
}

static const char *via(const struct jvm_sproc *p)
{
	return p->asprof ? "async-profiler" : "its Flight Recorder";
}

/* A JVM's identity across its restarts: its cgroup, executable and command line. */
static void identity(struct jvm_source *js, struct jvm_sproc *p)
{
	static const char *const files[] = { "cgroup", "cmdline" };
	uint8_t digest[SHA256_DIGEST_LEN];
	char hex[2 * SHA256_DIGEST_LEN + 1], path[64], exe[512];
	struct sha256 h;
	char *text;
	size_t i, len;
	ssize_t n;

	sha256_init(&h);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		text = NULL;
		if (!proc_read(js->o.proc_root, p->pid, files[i], 65536, &text, &len))
			sha256_update(&h, text, len);
		sha256_update(&h, "", 1);
		free(text);
	}
	proc_path(path, sizeof(path), js->o.proc_root, p->pid, "exe");
	n = readlink(path, exe, sizeof(exe));
	if (n > 0)
		sha256_update(&h, exe, (size_t)n);
	sha256_final(&h, digest);
	snprintf(p->id, sizeof(p->id), "%.16s", sha256_hex(digest, hex));
}

/* Whether async-profiler may be loaded into @p: its version (jvm_guard.h), and no crash after
 * an earlier capture loaded it. Else its Flight Recorder records, with a note. */
static void choose(struct jvm_source *js, struct jvm_sproc *p)
{
	const struct jvm_guard_bug *bug;
	char reason[256];

	identity(js, p);
	p->asprof = false;
	if (!js->lib)
		return;
	bug = jvm_guard_agent(p->version);
	if (bug) {
		note(js,
		     "async-profiler is not loaded into the JVM in process %u (%s, Java %s): %s "
		     "(%s); its own Flight Recorder is used instead.",
		     p->pid, p->comm, p->version[0] ? p->version : "of unknown version", bug->what,
		     bug->id);
		return;
	}
	if (jvm_journal_crashed(js->o.journal, p->id, reason, sizeof(reason))) {
		note(js,
		     "async-profiler is not loaded into the JVM in process %u (%s) again: a JVM "
		     "of this program %s after an earlier capture loaded it; its own Flight "
		     "Recorder is used instead.",
		     p->pid, p->comm, reason);
		return;
	}
	p->asprof = true;
}

void jvm_source__start(struct jvm_source *js)
{
	char why[512];
	size_t i;
	int err;

	js->start_ns = clock_real_ns();
	for (i = 0; i < js->nprocs; i++) {
		struct jvm_sproc *p = &js->procs[i];

		why[0] = '\0';
		choose(js, p);
		err = place_dir(js, p, why, sizeof(why));
		if (!err && p->asprof) {
			err = start_asprof(js, p, why, sizeof(why));
			/* the library did not load or start (a libc it was not built for, a profiler
			 * of the application's own): its Flight Recorder instead, in the same
			 * directory; an attach that failed fails the same for JFR */
			if (err == -EREMOTEIO) {
				note(js,
				     "async-profiler could not be started in the JVM in process %u "
				     "(%s): %s; its own Flight Recorder is used instead.",
				     p->pid, p->comm, why);
				p->asprof = false;
				why[0] = '\0';
				jvm_journal_add(js->o.journal, p->pid, p->starttime, p->place.path,
						p->rec, false, p->journal, sizeof(p->journal));
				err = start_jfr(js, p, why, sizeof(why));
			}
		} else if (!err) {
			err = start_jfr(js, p, why, sizeof(why));
		}
		if (!err) {
			p->started = true;
			continue;
		}
		note(js, "The JVM in process %u (%s) could not be recorded with %s: %s.", p->pid,
		     p->comm, via(p), why);
		unplace(js, p);
	}
}

/* What one JVM's output adds to the profile. */
struct adder {
	struct jvm_source *js;
	struct jvm_sproc *p;
	struct profile *dst;
	struct prof_labels *l;
	const char *mapping; /* "jfr", "async-profiler": who named the frames */
	uint64_t added, not_held, not_lock, unsized;
	int err;
};

/* A synthetic leaf: the allocated class, or the lock. */
static int leaf_frame(struct adder *a, const char *text)
{
	struct prof_frame_info fi = { .function = text,
				      .mapping = REPORT_CLASS_MAPPING,
				      .lang = PROF_LANG_JAVA };

	if (a->js->o.question == Q_LOCKS)
		fi.mapping = REPORT_WAIT_MAPPING; /* why it waited */
	return profile__frame(a->dst, &fi);
}

static int java_frame(struct adder *a, const char *cls, const char *method, uint32_t line)
{
	struct prof_frame_info fi = { .mapping = a->mapping, .line = line, .lang = PROF_LANG_JAVA };
	char name[512];

	snprintf(name, sizeof(name), "%.*s%s%s", cls ? (int)jvm_records_class_len(cls) : 0,
		 cls ? cls : "", cls && method ? "." : "",
		 method ? method : (cls ? "" : "[unknown]"));
	fi.function = name;
	return profile__frame(a->dst, &fi);
}

/* True for an event of the question that counts, with its two values. */
static bool event_values(struct adder *a, const struct jfr_event *ev, int64_t v[2])
{
	/* the sampler may hold objects from before our recording: 1 s of slack for the clocks */
	switch (jvm_records_value(jfr_mode(a->js->o.question), ev, a->js->start_ns - 1000000000LL,
				  v)) {
	case JVM_REC_ESTIMATED:
		a->unsized++;
		return true;
	case JVM_REC_COUNT:
		return true;
	case JVM_REC_NOT_HELD:
		a->not_held++;
		return false;
	case JVM_REC_NOT_LOCK:
		a->not_lock++;
		return false;
	default:
		return false;
	}
}

static int on_jfr_event(void *ctx, const struct jfr_event *ev)
{
	uint32_t frames[JFR_MAX_FRAMES + 1];
	struct adder *a = ctx;
	char leaf[300];
	size_t i, n = 0;
	int64_t v[2];
	int id;

	if (!event_values(a, ev, v))
		return 0;
	snprintf(leaf, sizeof(leaf), a->js->o.question == Q_LOCKS ? "[lock: %s]" : "%s",
		 ev->object_class ? ev->object_class : "unknown");
	id = leaf_frame(a, leaf);
	if (id < 0)
		return id;
	frames[n++] = (uint32_t)id;
	for (i = 0; i < ev->nframes && n < sizeof(frames) / sizeof(frames[0]); i++) {
		id = java_frame(a, ev->frames[i].class_name, ev->frames[i].method,
				ev->frames[i].line > 0 ? (uint32_t)ev->frames[i].line : 0);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
	}
	a->l->thread = ev->thread_name;
	a->l->tid = 0;
	id = profile__add(a->dst, frames, n, a->l, v);
	a->l->thread = NULL;
	if (!id)
		a->added++;
	return id;
}

/* Reads @name of our directory in @p's container, bounded. */
static int read_output(struct jvm_sproc *p, const char *name, char **buf, size_t *len)
{
	int fd, err;

	fd = safe_place_open(&p->place, name, JVM_SOURCE_MAX_OUTPUT);
	if (fd < 0)
		return fd;
	err = read_fd_bounded_until(fd, JVM_SOURCE_MAX_OUTPUT, clock_mono_ms() + 10000, buf, len);
	close(fd);
	return err;
}

static int on_asprof_stack(void *ctx, const struct jvm_asprof_frame *f, size_t nf, uint64_t value)
{
	uint32_t frames[JVM_ASPROF_FRAMES_MAX + 1];
	struct adder *a = ctx;
	char name[JVM_ASPROF_NAME_MAX + 16];
	int64_t v[2] = { value > INT64_MAX ? INT64_MAX : (int64_t)value, 1 };
	size_t i, n = 0;
	int id;

	for (i = 0; i < nf && n < sizeof(frames) / sizeof(frames[0]); i++) {
		struct prof_frame_info fi = { .mapping = a->mapping, .lang = PROF_LANG_JAVA };
		int l = (int)f[i].len;

		if (f[i].kind == JVM_ASPROF_CLASS) {
			snprintf(name, sizeof(name),
				 a->js->o.question == Q_LOCKS ? "[lock: %.*s]" : "%.*s", l,
				 f[i].name);
			id = leaf_frame(a, name);
		} else {
			snprintf(name, sizeof(name), "%.*s", l, f[i].name);
			fi.function = name;
			if (f[i].kind == JVM_ASPROF_NATIVE)
				fi.lang = PROF_LANG_NATIVE, fi.mapping = "[jvm]";
			else if (f[i].kind == JVM_ASPROF_KERNEL)
				fi.lang = PROF_LANG_KERNEL, fi.mapping = "[kernel.kallsyms]";
			id = profile__frame(a->dst, &fi);
		}
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
	}
	if (!n)
		return 0;
	id = profile__add(a->dst, frames, n, a->l, v);
	if (!id)
		a->added++;
	return id;
}

static bool still_runs(struct jvm_source *js, const struct jvm_sproc *p)
{
	struct proc_stat st;

	return !proc_read_stat(js->o.proc_root, p->pid, &st) && st.starttime == p->starttime;
}

/* held: a garbage collection first, so that what is left is held. */
static void collect(struct jvm_source *js, struct jvm_sproc *p)
{
	const char *args[1] = { "GC.run" };
	char *text = NULL;
	size_t len = 0;
	int code = 0, err;

	if (js->o.question != Q_MEMORY_HELD)
		return;
	err = jvm_attach_run(p->pid, "jcmd", args, 1, NULL, &code, &text, &len);
	free(text);
	if (err || code)
		note(js,
		     "The JVM in process %u (%s) did not run the garbage collection asked for "
		     "before the end (%s): objects it would have freed may show as held.",
		     p->pid, p->comm, err ? strerror(-err) : "it refused");
}

/* Stops @p's recording, which writes it into our directory; returns it or -errno. */
static int finish_jfr(struct jvm_sproc *p, char **buf, size_t *len, char *why, size_t size)
{
	char line[128];
	int err;

	err = jvm_jfrctl_stop(line, sizeof(line), p->rec);
	if (err >= 0)
		err = jcmd(p, line, JVM_JFR_STEP_STOP, why, size);
	p->started = false;
	if (err)
		return err;
	err = read_output(p, JFR_NAME, buf, len);
	if (err)
		snprintf(why, size, "its recording could not be read back (%s)",
			 err == -EFBIG ? "larger than 64 MiB" : strerror(-err));
	return err;
}

static int finish_asprof(struct jvm_source *js, struct jvm_sproc *p, char **buf, size_t *len,
			 char *why, size_t size)
{
	char opts[512], file[128];
	int err;

	snprintf(file, sizeof(file), "%s/" ASPROF_OUT, p->place.path);
	err = jvm_asprof_stop_options(asprof_mode(js->o.question), file, opts, sizeof(opts));
	if (err >= 0)
		err = asprof_load(js, p, opts, why, size);
	p->started = false;
	if (err)
		return err;
	err = read_output(p, ASPROF_OUT, buf, len);
	if (err)
		snprintf(why, size, "its output could not be read back (%s)",
			 err == -EFBIG ? "larger than 64 MiB" : strerror(-err));
	return err;
}

static void finish_notes(struct jvm_source *js, const struct jvm_sproc *p, const struct adder *a)
{
	if (a->unsized)
		note(js,
		     "The JVM in process %u (%s) does not say how large each held object is (Java "
		     "17 does not record it): arrays are sized from their length, other objects "
		     "counted as 16 bytes.",
		     p->pid, p->comm);
	if (!a->added)
		note(js,
		     "The JVM in process %u (%s) recorded nothing for this question during the "
		     "capture%s.",
		     p->pid, p->comm,
		     js->o.question == Q_LOCKS ?
			     (p->asprof ?
				      " (no monitor enter or park on a lock took 10 ms or longer)" :
				      " (no monitor enter or park on a lock took 1 ms or longer)") :
		     js->o.question == Q_MEMORY_HELD ?
			     " (no object sampled during the capture was still held at its end)" :
			     "");
}

static int finish_one(struct jvm_source *js, struct jvm_sproc *p, struct profile *dst,
		      struct prof_labels *l)
{
	struct adder a = { .js = js, .p = p, .dst = dst, .l = l };
	char *buf = NULL, why[512] = "";
	size_t len = 0;
	bool crashed;
	int err;

	collect(js, p);
	a.mapping = p->asprof ? "async-profiler" : "jfr";
	err = p->asprof ? finish_asprof(js, p, &buf, &len, why, sizeof(why)) :
			  finish_jfr(p, &buf, &len, why, sizeof(why));
	crashed = p->asprof && !still_runs(js, p);
	if (crashed) {
		jvm_journal_add_crashed(js->o.journal, p->id, "exited during a capture");
		note(js,
		     "The JVM in process %u (%s) exited during the capture that loaded "
		     "async-profiler into it: async-profiler is not loaded into this program again.",
		     p->pid, p->comm);
	}
	if (!err && p->asprof)
		err = jvm_asprof_parse_collapsed(buf, len, on_asprof_stack, &a, NULL) < 0 ?
			      -EBADMSG :
			      0;
	else if (!err)
		err = jfr_parse((const uint8_t *)buf, len, on_jfr_event, &a, NULL);
	free(buf);
	if (err == -ENOMEM)
		return err;
	if (err) {
		note(js, "The JVM in process %u (%s): what %s recorded could not be read: %s.",
		     p->pid, p->comm, via(p), why[0] ? why : strerror(-err));
		return 0;
	}
	p->read = true;
	if (p->asprof && !crashed) {
		struct jvm_journal_injected ij = { .pid = p->pid,
						   .nspid = p->ids.nspid,
						   .starttime = p->starttime,
						   .time = clock_real_ns() / 1000000000LL };

		memcpy(ij.id, p->id, sizeof(ij.id));
		jvm_journal_add_injected(js->o.journal, &ij);
	}
	if (js->o.question == Q_LOCKS)
		js->locks_pids[js->nlocks++] = p->pid;
	finish_notes(js, p, &a);
	return 0;
}

int jvm_source__finish(struct jvm_source *js, struct profile *dst, jvm_labels_fn_t labels,
		       void *ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; i < js->nprocs; i++) {
		struct jvm_sproc *p = &js->procs[i];
		struct prof_labels l = { 0 };

		if (!p->started)
			continue;
		if (labels)
			labels(ctx, p->pid, &l);
		l.pid = p->pid;
		l.lang = PROF_LANG_JAVA;
		if (!l.process)
			l.process = p->comm;
		if (!err)
			err = finish_one(js, p, dst, &l);
		unplace(js, p);
	}
	return err;
}

/* A capture that failed or was stopped: end what runs, remove what was placed. */
static void abandon(struct jvm_source *js, struct jvm_sproc *p)
{
	char line[128], why[256];

	if (p->started && p->asprof) {
		asprof_load(js, p, "stop", why, sizeof(why));
	} else if (p->started && jvm_jfrctl_stop(line, sizeof(line), p->rec) >= 0) {
		jcmd(p, line, JVM_JFR_STEP_STOP, why, sizeof(why));
	}
	p->started = false;
	unplace(js, p);
}

void jvm_source__free(struct jvm_source *js)
{
	size_t i;

	if (!js)
		return;
	for (i = 0; i < js->nprocs; i++)
		abandon(js, &js->procs[i]);
	strlist_clear(&js->notes);
	free(js->lib);
	free(js);
}

struct leftovers {
	const char *proc_root;
	const char *journal;
	int n;
};

/* One entry of a killed capture: its recording stopped, its directory removed, if the JVM it
 * names still runs (the same start time: not a reused pid). */
static void leftover(void *ctx, const struct jvm_journal_entry *e)
{
	struct leftovers *lo = ctx;
	struct jvm_sproc p = { .pid = e->pid, .rootfd = -1 };
	struct jvm_source js = { .o = { .proc_root = lo->proc_root } };
	struct proc_stat st;
	char line[128], why[256], *mi = NULL;
	size_t milen = 0;
	int err;

	lo->n++;
	if (proc_read_stat(lo->proc_root, e->pid, &st) || st.starttime != e->starttime)
		return;
	snprintf(p.place.path, sizeof(p.place.path), "%s", e->path);
	if (e->asprof) {
		asprof_load(&js, &p, "stop", why, sizeof(why));
	} else if (jvm_jfrctl_stop(line, sizeof(line), e->rec) >= 0) {
		jcmd(&p, line, JVM_JFR_STEP_STOP, why, sizeof(why));
	}
	p.rootfd = safe_open_root(lo->proc_root, e->pid);
	if (p.rootfd < 0)
		return;
	err = proc_read(lo->proc_root, e->pid, "mountinfo", 1u << 20, &mi, &milen);
	if (!err)
		err = safe_place_remove_path(p.rootfd, mi, milen, e->path);
	free(mi);
	if (err)
		pr_warn("process %u: %s left by an earlier capture could not be removed: %s",
			e->pid, e->path, strerror(-err));
	else
		pr_info("process %u: removed %s left by an earlier capture", e->pid, e->path);
	close(p.rootfd);
}

/* Whether JVM @e wrote "hs_err_pid<nspid>.log" (HotSpot's crash report) since @e->time, in
 * its working directory or its /tmp (where HotSpot writes it when the first is not writable). */
static bool wrote_hs_err(const char *proc_root, const struct jvm_journal_injected *e)
{
	char name[64], path[64];
	bool found = false;
	struct stat st;
	int fd, rootfd, tmpfd;

	snprintf(name, sizeof(name), "hs_err_pid%u.log", e->nspid);
	proc_path(path, sizeof(path), proc_root, e->pid, "cwd");
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		found = !fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) && st.st_mtime >= e->time;
		close(fd);
	}
	rootfd = found ? -1 : safe_open_root(proc_root, e->pid);
	if (rootfd < 0)
		return found;
	tmpfd = openat(rootfd, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmpfd >= 0) {
		found = !fstatat(tmpfd, name, &st, AT_SYMLINK_NOFOLLOW) && st.st_mtime >= e->time;
		close(tmpfd);
	}
	close(rootfd);
	return found;
}

/* A JVM async-profiler was loaded into, watched for JVM_SOURCE_WATCH_S: one that died or wrote
 * a crash report since is marked (no agent is loaded into that program again). */
static bool watch(void *ctx, const struct jvm_journal_injected *e)
{
	const struct leftovers *lo = ctx;
	long long age = clock_real_ns() / 1000000000LL - e->time;
	struct proc_stat st;
	char reason[128];

	/* gone: it may have been stopped on purpose, which nothing here can tell from a crash
	 * (its crash report went with its container); one that died during our capture was
	 * marked then (jvm_source__finish) */
	if (proc_read_stat(lo->proc_root, e->pid, &st) || st.starttime != e->starttime)
		return false;
	if (wrote_hs_err(lo->proc_root, e)) {
		snprintf(reason, sizeof(reason), "wrote a crash report (hs_err_pid%u.log)",
			 e->nspid);
	} else {
		return age <= JVM_SOURCE_WATCH_S;
	}
	pr_warn("the JVM of identity %s %s after async-profiler was loaded into it: it is not "
		"loaded there again",
		e->id, reason);
	jvm_journal_add_crashed(lo->journal, e->id, reason);
	return false;
}

int jvm_source_leftovers(const char *journal, const char *proc_root)
{
	struct leftovers lo = { .proc_root = proc_root, .journal = journal };
	int n = jvm_journal_drain(journal, leftover, &lo);

	jvm_journal_each_injected(journal, watch, &lo);
	return n < 0 ? n : lo.n;
}
