// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/resolver.h"
#include "base/fileio.h"
#include "daemon/capture/go_source.h"
#include "base/log.h"
#include "daemon/capture/preflight.h"
#include "base/sha256.h"
#include "daemon/capture/summary.h"
#include "profile/collapsed.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/detect.h"
#include "daemon/collectors/thread_table.h"
#include "symbols/symbolizer.h"

#define DEFAULT_LOCK_PATH "/run/slideops-profiler.lock"
#define FEW_SAMPLES_PER_SECOND 5
#define MAX_UNREADABLE_NOTES 4

/* A process of the target, watched while the capture runs. */
struct tracked {
	uint32_t pid;
	char comm[16];
	double exited_at;	/* seconds into sampling; < 0 while running */
};

/* Process names by tgid, read from /proc when a process is first seen (bounded; a process that
 * does not fit is named by its sampled thread). */
#define PNAME_SLOTS 16384
struct pname {
	uint32_t tgid;
	char comm[16];
};

struct unreadable {
	uint32_t pid;
	int err;
};

struct capture {
	const struct capture_opts *opts;
	struct capture_result *res;
	struct symbolizer *sym;
	struct owner_resolver *owners;
	struct source *src;
	struct go_source *go;		/* Go programs' own profiles; NULL when none are read */
	struct capture_target_info info;
	char go_owner[OWNER_NAME_MAX + 32];
	struct profile *prof;
	int64_t period_ns;
	uint64_t unattributed;	/* samples of processes gone before their owner was read */
	struct tracked *tracked;
	size_t ntracked;
	const char *unit;	/* of the flame graph: samples, ns, bytes */
	struct thread_fn {
		uint32_t tid;
		char fn[256];
	} *thread_fns;		/* threads: the dominant function of each thread emitted */
	size_t nthread_fns, cap_thread_fns;
	struct pname *pnames;
	size_t npnames;
	struct unreadable unreadable[MAX_UNREADABLE_NOTES];
	size_t nunreadable;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

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
		snprintf(err, size, "the --%s option needs a name", target_kind_name(o->target.kind));
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

static const char *self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0)
		n = snprintf(buf, size, "%s", "/proc/self/exe");
	buf[n] = '\0';
	return buf;
}

/* "0.9 MB, sha256 3f2a..." of the running binary, read through /proc/self/exe. */
static const char *self_desc(char *buf, size_t size)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	char hex[2 * SHA256_DIGEST_LEN + 1];
	struct stat st;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || sha256_fd(fd, 256u << 20, digest) < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(buf, size, "size and checksum unknown");
		return buf;
	}
	close(fd);
	snprintf(buf, size, "%.1f MB, sha256 %.16s", st.st_size / 1e6, sha256_hex(digest, hex));
	return buf;
}

/* "process 12 (app) on 127.0.0.1:6060", "3 Go programs (process 12 (app) on 127.0.0.1:6060, ...)" */
static const char *go_endpoints(const struct capture_target_info *info, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < info->ngo && len < size; i++)
		len += snprintf(buf + len, size - len, "%sprocess %u (%s) on %s:%u",
				i ? (i + 1 == info->ngo ? " and " : ", ") : "", info->go[i].pid,
				info->go[i].comm, info->go[i].host, info->go[i].port);
	return buf;
}

int capture_plan(const struct capture_opts *o, const struct capture_target_info *info,
		 struct capture_step *steps, int max)
{
	unsigned int hz = o->freq_hz ? o->freq_hz : 99, secs = capture_duration(o);
	char who[TARGET_NAME_MAX + 64], path[512], desc[128], eps[512];
	int n = 0, nprocs = info ? info->nprocs : -1;
	size_t ngo = info && o->target.kind != TARGET_SERVER ? info->ngo : 0;

	if (o->target.kind == TARGET_SERVER)
		snprintf(who, sizeof(who), "every process on this server");
	else if (o->target.kind == TARGET_PIDS)
		target_describe(&o->target, who, sizeof(who));
	else if (nprocs == 1)
		snprintf(who, sizeof(who), "the process of %s",
			 target_describe(&o->target, who + 256, sizeof(who) - 256));
	else if (nprocs > 1)
		snprintf(who, sizeof(who), "the %d processes of %s", nprocs,
			 target_describe(&o->target, who + 256, sizeof(who) - 256));
	else
		snprintf(who, sizeof(who), "the processes of %s",
			 target_describe(&o->target, who + 256, sizeof(who) - 256));
#define STEP(...)                                                                          \
	do {                                                                               \
		if (n < max)                                                               \
			snprintf(steps[n].text, sizeof(steps[n].text), __VA_ARGS__);       \
		n++;                                                                       \
	} while (0)
	STEP("Use the SlideOps profiler at %s (%s). It stays there for the next capture.",
	     self_path(path, sizeof(path)), self_desc(desc, sizeof(desc)));
	if (ngo)
		go_endpoints(info, eps, sizeof(eps));
	if (ngo && (o->question == Q_MEMORY_HELD || o->question == Q_MEMORY_ALLOC ||
		    (o->question == Q_THREADS && info->goroutines))) {
		STEP("Find the Go program's net/http/pprof endpoint inside its container, by "
		     "itself: %s (a listening socket of the process, probed from inside its "
		     "network namespace).", eps);
		if (o->question == Q_MEMORY_HELD)
			STEP("Wait %u second%s, then read the heap profile (memory in use, after a "
			     "garbage collection) from that endpoint. Nothing is restarted and "
			     "nothing in the program changes. Expected overhead: one garbage "
			     "collection and one heap profile.", secs, secs == 1 ? "" : "s");
		else if (o->question == Q_MEMORY_ALLOC)
			STEP("Read the allocation profile from that endpoint now and again after %u "
			     "second%s: the difference is what was allocated during the capture. "
			     "Nothing is restarted and nothing in the program changes. Expected "
			     "overhead: two allocation profiles.", secs, secs == 1 ? "" : "s");
		else
			STEP("After %u seconds, read every goroutine's stack and state from that "
			     "endpoint (the goroutine dump). Nothing is restarted and nothing in the "
			     "program changes. Expected overhead: one goroutine dump (the program "
			     "pauses for it).", secs);
	} else if (o->question == Q_THREADS) {
		STEP("Load the eBPF sampler and the thread snapshot program into the kernel "
		     "(cpu-clock events on every CPU, sched_switch, and a task iterator).");
		STEP("Take a snapshot of every thread of %s every %d ms for %u seconds (state, and "
		     "where it waits), sample them about %u times a second and time every wait off "
		     "the CPU, using eBPF in the kernel. Nothing is restarted and nothing in the "
		     "processes changes. Expected overhead: %s.", who, SOURCE_THREADS_INTERVAL_MS,
		     CAPTURE_THREADS_SECONDS, hz, CAPTURE_OVERHEAD_WALL_TEXT);
	} else if (o->question == Q_LOCKS) {
		STEP("Load the eBPF lock-wait programs into the kernel (the futex and futex_waitv "
		     "system call tracepoints).");
		STEP("Time every lock wait that sleeps (futex waits, priority-inheritance locks) of "
		     "%s for %u second%s, with the stack that waited, using eBPF in the kernel%s%s%s. "
		     "Nothing is restarted and nothing in the processes changes. Expected overhead: "
		     "%s.", who, secs, secs == 1 ? "" : "s",
		     ngo ? "; and read the Go mutex and block profiles at the start and at the "
			   "end from the net/http/pprof endpoint found inside the container: " : "",
		     ngo ? eps : "", ngo ? " (goroutines waiting on a sync.Mutex park without a "
					   "futex)" : "",
		     CAPTURE_OVERHEAD_LOCKS_TEXT);
	} else if (o->question == Q_MEMORY_GROWTH) {
		STEP("Load the eBPF memory programs into the kernel (the page_fault_user tracepoint "
		     "and the mmap, mremap, brk and munmap system call tracepoints).");
		STEP("Record where %s touches new memory and maps or releases memory for %u "
		     "second%s, with the stack, using eBPF in the kernel. Nothing is restarted and "
		     "nothing in the processes changes. Expected overhead: %s.", who,
		     secs, secs == 1 ? "" : "s", CAPTURE_OVERHEAD_MEMORY_TEXT);
	} else if (o->question == Q_WALL) {
		STEP("Load the eBPF sampler into the kernel (cpu-clock events on every CPU, and the "
		     "scheduler's sched_switch tracepoint).");
		STEP("Sample %s about %u times a second for %u second%s, and time every wait off "
		     "the CPU, using eBPF in the kernel. Nothing is restarted and nothing in the "
		     "processes changes. Expected overhead: %s.",
		     who, hz, secs, secs == 1 ? "" : "s",
		     CAPTURE_OVERHEAD_WALL_TEXT);
	} else {
		STEP("Load the eBPF sampler into the kernel (cpu-clock events on every CPU).");
		STEP("Sample %s about %u times a second for %u second%s, using eBPF in the kernel. "
		     "Nothing is restarted and nothing in the processes changes. Expected overhead: "
		     "%s.",
		     who, hz, secs, secs == 1 ? "" : "s", CAPTURE_OVERHEAD_TEXT);
	}
	STEP("Read the result back, name each function and group the processes by owner, "
	     "then check the target is still running.");
	STEP("Write profile.pb.gz, profile.collapsed, flamegraph.html and summary.json to %s.",
	     o->out_dir);
#undef STEP
	return n < max ? n : max;
}

static void progress(const struct capture *c, int step, int nsteps, const char *text)
{
	if (c->opts->progress)
		c->opts->progress(c->opts->progress_ctx, step, nsteps, text, now_s() - c->t0);
}

static int add_note(struct capture_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int add_note(struct capture_result *r, const char *fmt, ...)
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
	r->notes[r->nnotes++] = s;
	return 0;
}

static void read_comm(const char *proc_root, uint32_t pid, char *buf, size_t size)
{
	char path[64], *text = NULL;

	snprintf(path, sizeof(path), "%s/%u/comm", proc_root ? proc_root : "/proc", pid);
	buf[0] = '\0';
	if (read_file_bounded(AT_FDCWD, path, 64, &text, NULL))
		return;
	text[strcspn(text, "\n")] = '\0';
	snprintf(buf, size, "%s", text);
	free(text);
}

static int track(struct capture *c, uint32_t pid)
{
	size_t i;

	for (i = 0; i < c->ntracked; i++)
		if (c->tracked[i].pid == pid)
			return 0;
	if (c->ntracked >= TARGET_MAX_PIDS)
		return -E2BIG;
	c->tracked[c->ntracked].pid = pid;
	c->tracked[c->ntracked].exited_at = -1;
	read_comm(c->opts->proc_root, pid, c->tracked[c->ntracked].comm,
		  sizeof(c->tracked[0].comm));
	c->ntracked++;
	if (c->src)
		return source__add_tgid(c->src, pid);
	return 0;
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
		return -ENOMEM;
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
		if (c->tracked[i].exited_at < 0 && !target_pid_alive(o->proc_root, c->tracked[i].pid))
			c->tracked[i].exited_at = c->t0 ? now_s() - c->t0 : 0;
out:
	free(pids);
	return ret;
}

static struct pname *pname_slot(struct capture *c, uint32_t tgid)
{
	size_t i = (tgid * 2654435761u) & (PNAME_SLOTS - 1), n;

	for (n = 0; n < PNAME_SLOTS; n++, i = (i + 1) & (PNAME_SLOTS - 1))
		if (c->pnames[i].tgid == tgid || !c->pnames[i].tgid)
			return &c->pnames[i];
	return NULL;
}

static void remember_name(struct capture *c, uint32_t tgid)
{
	struct pname *p;

	if (c->npnames >= PNAME_SLOTS / 2)
		return;
	p = pname_slot(c, tgid);
	if (!p || p->tgid)
		return;
	read_comm(c->opts->proc_root, tgid, p->comm, sizeof(p->comm));
	if (!p->comm[0])
		return;
	p->tgid = tgid;
	c->npnames++;
}

static const char *process_name(struct capture *c, uint32_t tgid, const char *fallback)
{
	struct pname *p = pname_slot(c, tgid);

	return p && p->tgid == tgid ? p->comm : fallback;
}

static int on_new_task(void *ctx, uint32_t tgid, uint64_t cgroup_id)
{
	struct capture *c = ctx;
	struct owner o;
	int err;

	(void)cgroup_id;
	remember_name(c, tgid);
	/* A process may be gone already: not an error, it is named from what was seen. */
	owner_resolver__resolve(c->owners, tgid, &o);
	err = symbolizer__add_process(c->sym, tgid);
	if (err && err != -ESRCH && c->nunreadable < MAX_UNREADABLE_NOTES) {
		c->unreadable[c->nunreadable].pid = tgid;
		c->unreadable[c->nunreadable].err = err;
		c->nunreadable++;
	}
	return 0;
}

static int user_frame(struct capture *c, uint32_t tgid, uint64_t ip)
{
	struct prof_frame_info fi = { .lang = PROF_LANG_NATIVE };
	struct sym_frame sf;

	if (symbolizer__user(c->sym, tgid, ip, &sf) == 0) {
		fi.function = sf.name;
		fi.file = sf.file;
		fi.line = sf.line;
		fi.mapping = sf.dso;
		fi.build_id = sf.build_id;
		fi.address = sf.dso_addr;
		fi.unnamed_stripped = !sf.name && sf.stripped;
		fi.lang = sf.go ? PROF_LANG_GO : PROF_LANG_NATIVE;
	} else {
		fi.mapping = "[unknown]";
		fi.address = ip;
	}
	return profile__frame(c->prof, &fi);
}

static int kernel_frame(struct capture *c, uint64_t ip)
{
	struct prof_frame_info fi = { .lang = PROF_LANG_KERNEL, .mapping = "[kernel.kallsyms]" };
	struct sym_frame sf;

	if (symbolizer__kernel(c->sym, ip, &sf) == 0) {
		fi.function = sf.name;
		fi.address = sf.dso_addr;
	} else {
		fi.address = ip;
	}
	return profile__frame(c->prof, &fi);
}

static const char *capture_ksym(void *ctx, uint64_t ip)
{
	struct capture *c = ctx;
	struct sym_frame sf;

	return symbolizer__kernel(c->sym, ip, &sf) == 0 ? sf.name : NULL;
}

/* Why an off-CPU interval happened, from where the thread slept in the kernel: "read", "futex",
 * "page fault", or "waiting for a CPU" when it was preempted. */
static void wait_reason(struct capture *c, const struct source_sample *s, char *buf, size_t size)
{
	char why[64];

	if (s->leaf == SOURCE_LEAF_RUNNABLE) {
		snprintf(buf, size, "[runnable: waiting for a CPU]");
		return;
	}
	source_wait_reason(capture_ksym, c, s->kstack, s->nkstack, why, sizeof(why));
	if (!strcmp(why, "kernel") && s->nustack)
		snprintf(why, sizeof(why), "other");
	snprintf(buf, size, "[off-CPU: %s]", why);
}

/* threads: the function a thread's dominant stack is "in": its leaf-most frame of the
 * application, else the synthetic leaf that says what it waited for. */
static int note_thread_fn(struct capture *c, uint32_t tid, const uint32_t *frames, size_t n)
{
	const struct prof_frame_info *f, *pick = NULL;
	struct thread_fn *tmp;
	size_t i;

	for (i = 0; i < n && !pick; i++) {
		f = profile__frame_info(c->prof, frames[i]);
		if (f && f->lang != PROF_LANG_KERNEL && !report_is_system_dso(f->mapping))
			pick = f;
	}
	if (!pick && n)
		pick = profile__frame_info(c->prof, frames[0]);
	if (c->nthread_fns == c->cap_thread_fns) {
		size_t ncap = c->cap_thread_fns ? 2 * c->cap_thread_fns : 64;

		tmp = realloc(c->thread_fns, ncap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		c->thread_fns = tmp;
		c->cap_thread_fns = ncap;
	}
	c->thread_fns[c->nthread_fns].tid = tid;
	if (pick)
		profile_frame_display(pick, c->thread_fns[c->nthread_fns].fn,
				      sizeof(c->thread_fns[0].fn));
	else
		snprintf(c->thread_fns[c->nthread_fns].fn, sizeof(c->thread_fns[0].fn), "[unknown]");
	c->nthread_fns++;
	return 0;
}

static int on_sample(void *ctx, const struct source_sample *s)
{
	struct capture *c = ctx;
	uint32_t frames[2 * 127 + 1];
	struct prof_labels labels = {};
	char owner_name[OWNER_NAME_MAX + 32], reason[96];
	struct owner o;
	size_t i, n = 0;
	int id;

	/* Kernel threads (no user stack at all) wait by design; their off-CPU time would bury
	 * the waiting of the applications. */
	if ((s->leaf == SOURCE_LEAF_WAIT || s->leaf == SOURCE_LEAF_RUNNABLE) &&
	    s->ustack_err == -EFAULT && !s->nustack)
		return 0;
	if (s->leaf != SOURCE_LEAF_NONE) {
		/* A synthetic leaf says why: the wait reason, the kind of lock wait. */
		struct prof_frame_info fi = { .function = reason, .mapping = REPORT_WAIT_MAPPING,
					      .lang = PROF_LANG_KERNEL };

		if (s->leaf == SOURCE_LEAF_TEXT)
			snprintf(reason, sizeof(reason), "%s", s->leaf_text);
		else
			wait_reason(c, s, reason, sizeof(reason));
		id = profile__frame(c->prof, &fi);
		if (id < 0)
			return id;
		frames[n++] = id;
	}
	if (s->kernel_frames) {
		/* Kernel frames first: the stack is leaf first, and the kernel sits above user
		 * space. Return addresses point after the call: look up ip - 1 for every frame but
		 * the leaf. */
		for (i = 0; i < s->nkstack && n < 127; i++) {
			id = kernel_frame(c, i ? s->kstack[i] - 1 : s->kstack[i]);
			if (id < 0)
				return id;
			frames[n++] = id;
		}
	}
	for (i = 0; i < s->nustack && n < 2 * 127; i++) {
		id = user_frame(c, s->tgid, (i || s->nkstack) ? s->ustack[i] - 1 : s->ustack[i]);
		if (id < 0)
			return id;
		frames[n++] = id;
	}
	if (!n) {
		/* No stack at all: the user stack was lost (stack map full) or unreadable, and the
		 * sample hit no kernel code. Keep the value, under a frame that says so. */
		struct prof_frame_info fi = {
			.function = s->ustack_err == -EFAULT ? "[no stack]" : "[stack lost]",
			.mapping = "[unknown]",
			.lang = PROF_LANG_NATIVE,
		};

		id = profile__frame(c->prof, &fi);
		if (id < 0)
			return id;
		frames[n++] = id;
	}
	if (owner_resolver__resolve(c->owners, s->tgid, &o) < 0) {
		memset(&o, 0, sizeof(o));
		o.group = OWNER_OTHER;
		c->unattributed += s->oncpu ? s->oncpu : 1;
	}
	labels.owner = owner_format(&o, owner_name, sizeof(owner_name));
	labels.process = process_name(c, s->tgid, s->comm);
	labels.thread = s->comm;
	labels.pid = s->tgid;
	labels.tid = s->tid;
	labels.lang = PROF_LANG_NATIVE;
	c->res->samples += s->oncpu;
	if (c->opts->question == Q_THREADS) {
		id = note_thread_fn(c, s->tid, frames, n);
		if (id < 0)
			return id;
	}
	return profile__add(c->prof, frames, n, &labels, s->values);
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

static int check_out_dir(const char *dir, char *err, size_t size)
{
	int ret = mkdir_p(dir);

	if (!ret && access(dir, W_OK) < 0)
		ret = -errno;
	if (ret)
		snprintf(err, size, "cannot write the profile to %s: %s", dir, strerror(-ret));
	return ret;
}

static const char *const thread_cols[] = { "Thread", "TID", "Process", "PID", "Owner",
					    "Running", "Runnable", "Waiting", "Waits", "Function" };
#define THREAD_NCOLS (sizeof(thread_cols) / sizeof(thread_cols[0]))

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

static void free_table(struct flamegraph_opts *fg)
{
	size_t i;

	if (!fg->table_cells)
		return;
	for (i = 0; i < fg->table_nrows * fg->table_ncols; i++)
		free((char *)fg->table_cells[i]);
	free((void *)fg->table_cells);
	fg->table_cells = NULL;
}

/* The per-thread table of a `threads` capture, for the flame graph page. */
static int threads_table(struct capture *c, struct flamegraph_opts *fg)
{
	const struct capture_result *r = c->res;
	char **cells;
	size_t i, j;
	int bad = 0;

	cells = calloc(r->nthreads * THREAD_NCOLS + 1, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (i = 0; i < r->nthreads; i++) {
		const struct capture_thread *t = &r->threads[i];
		char **row = cells + i * THREAD_NCOLS, waits[256] = "";
		size_t n = 0;

		for (j = 0; j < t->nwaits && n < sizeof(waits); j++)
			n += snprintf(waits + n, sizeof(waits) - n, "%s%s %.0f%%", j ? ", " : "",
				      t->waits[j].reason, t->waits[j].share);
		row[0] = dupf("%s", t->name);
		bad |= !row[0];
		row[1] = dupf("%u", t->tid);
		bad |= !row[1];
		row[2] = dupf("%s", t->process);
		bad |= !row[2];
		row[3] = dupf("%u", t->pid);
		bad |= !row[3];
		row[4] = dupf("%s", t->owner);
		bad |= !row[4];
		row[5] = dupf("%.0f%%", t->running);
		bad |= !row[5];
		row[6] = dupf("%.0f%%", t->runnable);
		bad |= !row[6];
		row[7] = dupf("%.0f%%", t->waiting);
		bad |= !row[7];
		row[8] = dupf("%s", waits);
		bad |= !row[8];
		row[9] = dupf("%s", t->function);
		bad |= !row[9];
	}
	fg->table_title = "Threads";
	fg->table_cols = thread_cols;
	fg->table_ncols = THREAD_NCOLS;
	fg->table_cells = (const char *const *)cells;
	fg->table_nrows = r->nthreads;
	if (bad) {
		free_table(fg);
		return -ENOMEM;
	}
	return 0;
}

static const char *const goroutine_cols[] = { "Goroutines", "State", "Function", "Process",
						"PID" };
#define GOROUTINE_NCOLS (sizeof(goroutine_cols) / sizeof(goroutine_cols[0]))

/* The goroutine groups of a `threads` capture of Go programs, for the flame graph page. */
static int goroutines_table(struct capture *c, struct flamegraph_opts *fg)
{
	const struct go_goroutine_group *gr;
	uint64_t total;
	size_t n, i;
	char **cells;
	int bad = 0;

	gr = go_source__goroutines(c->go, &n, &total);
	cells = calloc(n * GOROUTINE_NCOLS + 1, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		char **row = cells + i * GOROUTINE_NCOLS;

		row[0] = dupf("%u", gr[i].count);
		row[1] = dupf("%s", gr[i].state);
		row[2] = dupf("%s", gr[i].function);
		row[3] = dupf("%s", gr[i].process);
		row[4] = dupf("%u", gr[i].pid);
		bad |= !row[0] || !row[1] || !row[2] || !row[3] || !row[4];
	}
	fg->table_title = "Goroutines";
	fg->table_cols = goroutine_cols;
	fg->table_ncols = GOROUTINE_NCOLS;
	fg->table_cells = (const char *const *)cells;
	fg->table_nrows = n;
	if (bad) {
		free_table(fg);
		return -ENOMEM;
	}
	return 0;
}

static int write_files(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct flamegraph_opts fg = {};
	const char *notes[CAPTURE_MAX_NOTES + 1] = {};
	char path[4096], title[TARGET_NAME_MAX + 128], who[TARGET_NAME_MAX + 32];
	size_t i;
	int ret;

	for (i = 0; i < c->res->nnotes; i++)
		notes[i] = c->res->notes[i];
	snprintf(title, sizeof(title), "%s: %s, %u s", question_info(o->question)->text,
		 target_describe(&o->target, who, sizeof(who)), o->duration_s);
	fg.title = title;
	fg.answer = c->res->answer;
	fg.notes = notes;
	fg.unit = c->unit;
	if (o->question == Q_THREADS) {
		ret = c->info.goroutines ? goroutines_table(c, &fg) : threads_table(c, &fg);
		if (ret)
			return ret;
	}

#define WRITE(name, call)                                                                   \
	do {                                                                                \
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, name);                    \
		ret = (call);                                                               \
		if (ret < 0) {                                                              \
			snprintf(err, size, "cannot write %s: %s", path, strerror(-ret));   \
			free_table(&fg);                                                    \
			return ret;                                                         \
		}                                                                           \
	} while (0)
	WRITE("profile.pb.gz", pprof_write_file(c->prof, path));
	WRITE("profile.collapsed", collapsed_write_file(c->prof, path));
	WRITE("flamegraph.html", flamegraph_write_file(c->prof, &fg, path));
	WRITE("summary.json", summary_write_file(o, c->res, path));
#undef WRITE
	free_table(&fg);
	return 0;
}

static void exit_notes(struct capture *c)
{
	struct capture_result *r = c->res;
	size_t i, listed = 0;

	for (i = 0; i < c->ntracked; i++) {
		const struct tracked *t = &c->tracked[i];

		if (t->exited_at < 0)
			continue;
		r->nexited++;
		if (listed++ < 4)
			add_note(r, "Process %u (%s) exited during the capture, about %.0f s after "
				    "sampling started; the profile holds what it did until then.",
				 t->pid, t->comm[0] ? t->comm : "?", t->exited_at);
	}
	if (listed > 4)
		add_note(r, "%zu more processes of the target exited during the capture.",
			 listed - 4);
	if (c->ntracked && r->nexited == c->ntracked)
		add_note(r, "The target is no longer running: every process of it exited during "
			    "the capture.");
}

static void verification_notes(struct capture *c)
{
	const struct capture_opts *o = c->opts;
	struct capture_result *r = c->res;
	uint64_t lost = r->stats.lost;
	const char *who;
	size_t i;

	exit_notes(c);
	switch (o->target.kind) {
	case TARGET_SERVER:
		who = "the server";
		break;
	case TARGET_SERVICE:
		who = "the Service";
		break;
	case TARGET_PIDS:
		who = o->target.npids == 1 ? "the process" : "the processes";
		break;
	default:
		who = "the target";
	}
	if (o->question == Q_LOCKS && !r->stats.events)
		add_note(r, "No lock waits: no thread of %s slept on a lock during the capture.",
			 o->target.kind == TARGET_SERVER ? "this server" : "the target");
	else if (o->question == Q_MEMORY_GROWTH && !r->stats.events)
		add_note(r, "No memory growth: %s touched no new memory during the capture.",
			 who);
	else if ((o->question == Q_CPU || o->question == Q_WALL) &&
		 r->samples < (uint64_t)FEW_SAMPLES_PER_SECOND * o->duration_s)
		add_note(r, "Very few samples: %s was almost idle. Capture again while it is under "
			    "the load you want to understand.", who);
	if (r->report && r->report->unnamed_share >= 10.0)
		add_note(r, "Many native frames have no names, because the binaries were built "
			    "without symbols (%.0f%% of the samples).",
			 r->report->unnamed_share);
	for (i = 0; i < c->nunreadable; i++) {
		char comm[16];

		read_comm(o->proc_root, c->unreadable[i].pid, comm, sizeof(comm));
		add_note(r, "Process %u (%s) could not be read, so its functions have no names: %s.",
			 c->unreadable[i].pid, comm[0] ? comm : "?",
			 strerror(-c->unreadable[i].err));
	}
	if (c->unattributed)
		add_note(r, "%llu %s from processes that exited before they could be read; %s "
			    "shown under Other processes.",
			 (unsigned long long)c->unattributed,
			 c->unattributed == 1 ? "sample came" : "samples came",
			 c->unattributed == 1 ? "it is" : "they are");
	if (lost)
		add_note(r, "%llu samples lost to full maps (%s).", (unsigned long long)lost,
			 r->stats.lost_detail);
	/* Stacks the DWARF unwinder could not complete, and why (docs/unwinding.md); below 1% it
	 * is noise, not worth a note. */
	if (r->stats.stacks_detail[0] && r->stats.stacks_incomplete_pct >= 1.0)
		add_note(r, "%s", r->stats.stacks_detail);
	r->lost = lost;
}

/* "spinner running 98% in spin_forever" / "sleeper waiting 99% in clock_nanosleep, from nap" */
static int describe_thread(const struct capture_thread *t, char *buf, size_t size)
{
	if (t->running + t->runnable >= t->waiting)
		return snprintf(buf, size, "%s running %.0f%% of the time, in %s", t->name,
				t->running + t->runnable, t->function);
	return snprintf(buf, size, "%s waiting %.0f%% of the time in %s, from %s", t->name,
			t->waiting, t->nwaits ? t->waits[0].reason : "the kernel", t->function);
}

static int cmp_thread_busy(const void *a, const void *b)
{
	const struct capture_thread *x = a, *y = b;
	double bx = x->running + x->runnable, by = y->running + y->runnable;

	if (bx != by)
		return bx < by ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * threads, target: "Over 5 seconds, the 3 threads of process 12 (threeway): spinner running 98%
 * of the time, in spin_forever; sleeper waiting 99% of the time in clock_nanosleep, from nap;
 * ..." (at most 4 listed, busiest first). Server: "Over 5 seconds, 412 threads on this server:
 * 5 mostly running, 407 mostly waiting. The busiest was worker of Service billing, running 97%
 * of the time, in build_report."
 */
static void threads_answer(struct capture *c, char *buf, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct capture_result *r = c->res;
	struct capture_thread *sorted;
	char who[TARGET_NAME_MAX + 64], one[512];
	size_t i, busy = 0, n = r->nthreads;
	int len;

	if (!n) {
		snprintf(buf, size, "Over %u seconds, no thread of %s was seen.", o->duration_s,
			 o->target.kind == TARGET_SERVER ? "this server" :
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
		snprintf(buf, size, "Over %u seconds, %zu threads on this server: %zu mostly running, "
			 "%zu mostly waiting. The busiest was %s of %s.", o->duration_s, n, busy,
			 n - busy, one, sorted[0].owner);
		free(sorted);
		return;
	}
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
	free(sorted);
}

/* "process 12 (pipewait)", "Unit nginx.service", "Service billing" */
static const char *target_who(const struct capture *c, char *who, size_t size)
{
	const struct capture_opts *o = c->opts;

	target_describe(&o->target, who, size);
	if (o->target.kind == TARGET_PIDS && o->target.npids == 1 && c->ntracked &&
	    c->tracked[0].comm[0])
		snprintf(who + strlen(who), size - strlen(who), " (%s)", c->tracked[0].comm);
	return who;
}

/*
 * threads of Go programs: "Process 12 (app) has 46 goroutines: 40 in chan receive in
 * main.parkHere; 5 in sleep in main.sleepHere; 1 in IO wait in net/http.(*conn).serve."
 */
static void goroutines_answer(struct capture *c, const char *who, char *buf, size_t size)
{
	const struct go_goroutine_group *gr;
	uint64_t total;
	size_t n, i;
	int len;

	gr = go_source__goroutines(c->go, &n, &total);
	if (!total) {
		snprintf(buf, size, "No goroutine could be read from %s.", who);
		return;
	}
	len = snprintf(buf, size, "After %u seconds, %s %s %llu goroutine%s: ", c->opts->duration_s,
		       who, c->info.ngo > 1 ? "have" : "has", (unsigned long long)total,
		       total == 1 ? "" : "s");
	for (i = 0; i < n && i < 4 && len >= 0 && (size_t)len < size; i++)
		len += snprintf(buf + len, size - len, "%s%u %s%s in %s%s%s%s", i ? "; " : "",
				gr[i].count,
				strcmp(gr[i].state, "running") && strcmp(gr[i].state, "runnable") ?
				"in " : "", gr[i].state, gr[i].function,
				c->info.ngo > 1 ? " (" : "", c->info.ngo > 1 ? gr[i].process : "",
				c->info.ngo > 1 ? ")" : "");
	if (len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - len, n > 5 ? "; and %zu more kinds." :
			 n == 5 ? "; and 1 more kind." : ".", n - 4);
}

static void answer(struct capture *c)
{
	const struct capture_opts *o = c->opts;
	struct capture_result *r = c->res;
	char who[TARGET_NAME_MAX + 64];
	const char *target = o->target.kind == TARGET_SERVER ? NULL :
			     target_who(c, who, sizeof(who));
	uint64_t busy = r->samples + r->stats.filtered;

	r->others = r->stats.filtered;
	switch (o->question) {
	case Q_THREADS:
		if (c->info.goroutines)
			goroutines_answer(c, target, r->answer, sizeof(r->answer));
		else
			threads_answer(c, r->answer, sizeof(r->answer));
		break;
	case Q_MEMORY_HELD:
	case Q_MEMORY_ALLOC:
		report_answer_memory(r->report, o->duration_s, target,
				     o->question == Q_MEMORY_HELD, r->answer, sizeof(r->answer));
		break;
	case Q_LOCKS:
		report_answer_locks(r->report, o->duration_s, target, r->answer, sizeof(r->answer));
		break;
	case Q_MEMORY_GROWTH:
		report_answer_growth(r->report, o->duration_s, target, r->answer,
				     sizeof(r->answer));
		break;
	case Q_WALL:
		report_answer_wall(r->report, o->duration_s, target, r->answer, sizeof(r->answer));
		break;
	default:
		if (!target)
			report_answer(r->report, o->duration_s, "the CPU time", "on this server",
				      r->answer, sizeof(r->answer));
		else
			report_answer_target(r->report, o->duration_s, target,
					     busy ? 100.0 * (double)r->samples / (double)busy : 0,
					     "the CPU time", "on this server", r->answer,
					     sizeof(r->answer));
	}
}

static double share_of(uint32_t part, uint32_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* threads: the per-thread table of the result, in the order the threads were emitted. */
static int collect_threads(struct capture *c)
{
	const struct thread_entry *e;
	struct capture_thread *t;
	struct owner o;
	size_t i, j, n, k = 0;

	e = source__threads(c->src, &n);
	c->res->threads = calloc(n ? n : 1, sizeof(*c->res->threads));
	if (!c->res->threads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!e[i].snapshots)
			continue;
		t = &c->res->threads[c->res->nthreads++];
		t->tid = e[i].tid;
		t->pid = e[i].tgid;
		snprintf(t->name, sizeof(t->name), "%s", e[i].comm);
		snprintf(t->process, sizeof(t->process), "%s", process_name(c, e[i].tgid, e[i].comm));
		if (owner_resolver__resolve(c->owners, (int)e[i].tgid, &o) < 0) {
			memset(&o, 0, sizeof(o));
			o.group = OWNER_OTHER;
		}
		owner_format(&o, t->owner, sizeof(t->owner));
		t->running = share_of(e[i].state[THREAD_RUNNING], e[i].snapshots);
		t->runnable = share_of(e[i].state[THREAD_RUNNABLE], e[i].snapshots);
		t->waiting = share_of(e[i].state[THREAD_WAITING], e[i].snapshots);
		for (j = 0; j < e[i].nwaits && j < 4; j++) {
			snprintf(t->waits[j].reason, sizeof(t->waits[j].reason), "%s",
				 e[i].waits[j].reason);
			t->waits[j].share = share_of(e[i].waits[j].snapshots, e[i].snapshots);
			t->nwaits++;
		}
		/* thread_fns were noted in the order the entries were emitted (some may be
		 * missing: a sample the capture left out) */
		for (j = k; j < c->nthread_fns && c->thread_fns[j].tid != e[i].tid; j++)
			;
		snprintf(t->function, sizeof(t->function), "%s",
			 j < c->nthread_fns ? c->thread_fns[j].fn : "[unknown]");
		if (j < c->nthread_fns)
			k = j + 1;
	}
	return 0;
}

static void capture_free(struct capture *c)
{
	source__free(c->src);
	go_source__free(c->go);
	profile__free(c->prof);
	symbolizer__free(c->sym);
	owner_resolver__free(c->owners);
	capture_result__free(c->res);
	free(c->tracked);
	free(c->pnames);
	free(c->thread_fns);
}

static int sample(struct capture *c, struct capture_step *steps, int nsteps, char *err,
		  size_t size)
{
	const struct capture_opts *o = c->opts;
	double t_last = 0, left;
	int ret;

	c->t0 = now_s();
	progress(c, 3, nsteps, steps[2].text);
	while (!(o->stop && *o->stop)) {
		left = o->duration_s - (now_s() - c->t0);
		if (left <= 0)
			break;
		if (c->src) {
			ret = source__poll(c->src, left < 0.2 ? (int)(left * 1000) + 1 : 200);
		} else {
			/* nothing to poll: the runtime is read at the start and at the end */
			struct timespec ts = { 0, left < 0.2 ? (long)(left * 1e9) + 1000000 : 200000000 };

			ret = nanosleep(&ts, NULL) ? -errno : 0;
		}
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, size, "sampling failed: %s", strerror(-ret));
			return ret;
		}
		if (now_s() - t_last >= 1.0) {
			t_last = now_s();
			refresh_target(c, err, size);
			progress(c, 3, nsteps, steps[2].text);
		}
	}
	if (c->src)
		source__stop(c->src);
	refresh_target(c, err, size);
	c->res->sampled_s = now_s() - c->t0;
	if (o->stop && *o->stop) {
		snprintf(err, size, "the capture was stopped before it finished; nothing was written");
		return -ECANCELED;
	}
	return 0;
}

/*
 * The runtime of each of @pids and, for Go programs, their pprof endpoint (added to @gs);
 * fills @info, with info->refuse when the question cannot be answered for this target.
 */
static void inspect_go(const struct capture_opts *o, const uint32_t *pids, size_t n,
		       struct go_source *gs, struct capture_target_info *info)
{
	const struct question_info *qi = question_info(o->question);
	struct runtime_detect_opts dopts = { .proc_root = o->proc_root };
	char other[96] = "", why[256], comm[16];
	size_t i;

	info->nprocs = (int)n;
	for (i = 0; i < n; i++) {
		struct runtime_info ri;
		uint16_t port = 0;
		int ret;

		read_comm(o->proc_root, pids[i], comm, sizeof(comm));
		if (runtime_detect(&dopts, (int)pids[i], &ri) < 0 || ri.kind != RUNTIME_GO) {
			if (!info->nother++)
				snprintf(other, sizeof(other), "process %u (%s)", pids[i], comm);
			continue;
		}
		why[0] = '\0';
		ret = go_source__add(gs, pids[i], comm, &port, why, sizeof(why));
		if (ret == -EEXIST)
			continue;
		if (ret) {
			if (!info->ngo_missing++)
				snprintf(info->go_missing, sizeof(info->go_missing),
					 "process %u (%s): %s", pids[i], comm,
					 why[0] ? why : strerror(-ret));
			continue;
		}
		if (info->ngo < GO_SOURCE_MAX_PROCS) {
			typeof(info->go[0]) *e = &info->go[info->ngo++];

			e->pid = pids[i];
			snprintf(e->comm, sizeof(e->comm), "%s", comm);
			e->port = port;
		}
	}
	/* the endpoints' hosts, as the source found them */
	for (i = 0; i < info->ngo; i++)
		go_source__endpoint(gs, info->go[i].pid, info->go[i].host, sizeof(info->go[i].host));
	info->goroutines = o->question == Q_THREADS && info->ngo && info->ngo == n;
	if (o->question == Q_LOCKS && !info->ngo && info->ngo_missing && !info->nother) {
		snprintf(info->refuse, sizeof(info->refuse),
			 "%s (%s): a Go program waits on locks in the Go scheduler, not in the "
			 "kernel, so its lock waits are read from its own mutex and block profiles: the "
			 "program must serve net/http/pprof on a local port, and it does not (%s)",
			 qi->id, qi->text, info->go_missing);
		return;
	}
	if ((o->question != Q_MEMORY_HELD && o->question != Q_MEMORY_ALLOC) || info->ngo)
		return;
	if (info->ngo_missing)
		snprintf(info->refuse, sizeof(info->refuse),
			 "%s (%s) is read from the Go program's own profiler, so the program must "
			 "serve net/http/pprof on a local port, and it does not (%s); use Where memory "
			 "grows (memory-growth) instead, which works for every program",
			 qi->id, qi->text, info->go_missing);
	else
		snprintf(info->refuse, sizeof(info->refuse),
			 "%s (%s) is read from a runtime's own profiler (Go's heap profile), and %s "
			 "is not a Go program; use Where memory grows (memory-growth) instead, which "
			 "works for every program", qi->id, qi->text, other[0] ? other : "the target");
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
	l->process = process_name(c, pid, NULL);
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
	if (!go_source_question(o->question) || o->target.kind == TARGET_SERVER)
		return 0;
	ret = go_source__new(o->question, o->proc_root, &c->go);
	pids = malloc((c->ntracked ? c->ntracked : 1) * sizeof(*pids));
	if (ret || !pids) {
		free(pids);
		snprintf(err, size, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < c->ntracked; i++) {
		pids[i] = c->tracked[i].pid;
		remember_name(c, pids[i]);
	}
	inspect_go(o, pids, c->ntracked, c->go, &c->info);
	free(pids);
	if (c->info.refuse[0]) {
		snprintf(err, size, "%s", c->info.refuse);
		return -EOPNOTSUPP;
	}
	if (o->question == Q_LOCKS && c->info.ngo_missing)
		add_note(c->res, "A Go program of the target does not serve net/http/pprof (%s): "
				 "goroutines waiting on a sync.Mutex park without a futex, so only its "
				 "futex waits are seen. Serve net/http/pprof on a local port to see "
				 "them too.", c->info.go_missing);
	if (o->question == Q_THREADS && c->info.ngo_missing)
		add_note(c->res, "A Go program of the target does not serve net/http/pprof (%s): "
				 "these are its OS threads, not its goroutines. Serve net/http/pprof "
				 "on a local port to see every goroutine and where it waits.",
			 c->info.go_missing);
	if (o->question == Q_THREADS && c->info.ngo && !c->info.goroutines)
		add_note(c->res, "The target's Go programs serve net/http/pprof, but it has other "
				 "processes too: this shows OS threads. Capture a Go program alone "
				 "(--pid) to see its goroutines.");
	if (!c->info.goroutines && o->question == Q_THREADS) {
		go_source__free(c->go);
		c->go = NULL;
	}
	return 0;
}

int capture_run(const struct capture_opts *opts, struct capture_result **out, char *err,
		size_t size)
{
	struct capture_opts eff = *opts;
	const struct capture_opts *o = &eff;
	struct capture c = { .opts = o };
	struct capture_step steps[CAPTURE_MAX_STEPS];
	struct symbolizer_opts so = { .proc_root = o->proc_root };
	struct owner_resolver_opts ro = { .proc_root = o->proc_root, .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct profile_opts po = {};
	struct source_opts sopts = {};
	struct preflight pf;
	struct timespec wall;
	unsigned int hz = o->freq_hz ? o->freq_hz : 99;
	int nsteps, lockfd = -1, ret;
	bool use_ebpf;
	double t_end;

	ret = capture_validate(o, err, size);
	if (ret)
		return ret;
	eff.duration_s = capture_duration(opts);
	if (preflight_check(&pf)) {
		preflight_message(&pf, err, size);
		return -EPERM;
	}
	lockfd = take_lock(o->lock_path ? o->lock_path : DEFAULT_LOCK_PATH);
	if (lockfd < 0) {
		if (lockfd == -EBUSY)
			snprintf(err, size, CAPTURE_BUSY_MSG);
		else
			snprintf(err, size, "cannot take the capture lock: %s", strerror(-lockfd));
		return lockfd;
	}
	c.res = calloc(1, sizeof(*c.res));
	c.tracked = calloc(TARGET_MAX_PIDS, sizeof(*c.tracked));
	c.pnames = calloc(PNAME_SLOTS, sizeof(*c.pnames));
	if (!c.res || !c.tracked || !c.pnames)
		goto out_oom;
	ret = symbolizer__new(&so, &c.sym);
	if (!ret)
		ret = owner_resolver__new(&ro, &c.owners);
	if (ret)
		goto out_oom;
	/* The target must exist before anything is loaded. */
	ret = refresh_target(&c, err, size);
	if (ret)
		goto out;
	ret = check_out_dir(o->out_dir, err, size);
	if (ret)
		goto out;
	ret = prepare_go(&c, err, size);
	if (ret)
		goto out;
	use_ebpf = !(o->question == Q_MEMORY_HELD || o->question == Q_MEMORY_ALLOC ||
		     c.info.goroutines);

	nsteps = capture_plan(o, &c.info, steps, CAPTURE_MAX_STEPS);
	c.t0 = now_s();
	clock_gettime(CLOCK_REALTIME, &wall);
	c.res->start_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
	c.period_ns = 1000000000LL / hz;

	/* Step 1: the binary (already here: nothing to install on a plain server). */
	progress(&c, 1, nsteps, steps[0].text);
	/* Step 2: load. */
	progress(&c, 2, nsteps, steps[1].text);
	sopts.question = o->question;
	sopts.freq_hz = hz;
	sopts.on_new_task = on_new_task;
	sopts.ctx = &c;
	sopts.filter_tgids = o->target.kind != TARGET_SERVER;
	sopts.ksym = capture_ksym;
	sopts.ksym_ctx = &c;
	ret = use_ebpf ? source__new(&sopts, &c.src) : 0;
	if (ret) {
		snprintf(err, size, "cannot start the eBPF programs: %s", strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < c.ntracked && c.src && !ret; i++)
		ret = source__add_tgid(c.src, c.tracked[i].pid);
	if (ret) {
		snprintf(err, size, "cannot set the sampler's filter: %s", strerror(-ret));
		goto out;
	}

	/* Step 3: sample (the Go programs' start snapshots first). */
	if (c.go)
		go_source__start(c.go);
	ret = sample(&c, steps, nsteps, err, size);
	if (ret)
		goto out;
	t_end = now_s();

	/* Step 4: read back, name, verify. */
	progress(&c, 4, nsteps, steps[3].text);
	c.unit = source_profile_types(o->question, c.period_ns, &po);
	if (c.info.goroutines) {
		po.sample_type[0] = "goroutines";
		po.sample_unit[0] = "count";
		po.nvalues = 1;
		po.period_type = "goroutines";
		po.period_unit = "count";
		po.period = 1;
		c.unit = "goroutines";
	}
	po.time_nanos = c.res->start_ns;
	po.duration_nanos = (int64_t)(c.res->sampled_s * 1e9);
	po.owner_root = o->target.kind == TARGET_SERVER;
	ret = profile__new(&po, &c.prof);
	if (ret)
		goto out_oom;
	ret = c.src ? source__drain(c.src, on_sample, &c) : 0;
	if (ret) {
		snprintf(err, size, "reading the samples failed: %s", strerror(-ret));
		goto out;
	}
	if (c.src)
		source__stats(c.src, &c.res->stats);
	if (c.go) {
		const char *const *gn;
		size_t i, ngn;

		ret = go_source__finish(c.go, c.prof, go_labels, &c);
		if (ret)
			goto out_oom;
		ngn = go_source__notes(c.go, &gn);
		for (i = 0; i < ngn; i++)
			add_note(c.res, "%s", gn[i]);
	}
	if (o->question == Q_THREADS && c.src) {
		ret = collect_threads(&c);
		if (ret)
			goto out_oom;
	}
	ret = report__new(c.prof, NULL, &c.res->report);
	if (ret)
		goto out_oom;
	answer(&c);
	verification_notes(&c);
	c.res->pids = malloc((c.ntracked ? c.ntracked : 1) * sizeof(*c.res->pids));
	if (!c.res->pids)
		goto out_oom;
	for (c.res->npids = 0; c.res->npids < c.ntracked; c.res->npids++)
		c.res->pids[c.res->npids] = c.tracked[c.res->npids].pid;

	/* Step 5: write. */
	progress(&c, 5, nsteps, steps[4].text);
	c.res->result_s = now_s() - t_end;
	ret = write_files(&c, err, size);
	if (ret)
		goto out;
	c.res->result_s = now_s() - t_end;
	c.res->profile = c.prof;
	c.prof = NULL;
	*out = c.res;
	c.res = NULL;
	ret = 0;
	goto out;

out_oom:
	ret = -ENOMEM;
	snprintf(err, size, "out of memory");
out:
	capture_free(&c);
	if (lockfd >= 0)
		close(lockfd);
	return ret;
}

/* The target's processes now, into a new array @pids the caller frees. Returns the count, or
 * -ENOENT with @err naming what exists, or -errno. */
static int resolve_target(const struct capture_opts *o, uint32_t **pids, char *err, size_t size)
{
	struct owner_resolver_opts ro = { .proc_root = o->proc_root, .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct owner_resolver *owners;
	int n;

	*pids = malloc(TARGET_MAX_PIDS * sizeof(**pids));
	if (!*pids)
		return -ENOMEM;
	n = owner_resolver__new(&ro, &owners);
	if (!n) {
		n = target_resolve(&o->target, owners, o->proc_root, *pids, TARGET_MAX_PIDS, err,
				   size);
		owner_resolver__free(owners);
	}
	if (n < 0) {
		free(*pids);
		*pids = NULL;
	}
	return n;
}

int capture_inspect(const struct capture_opts *o, struct capture_target_info *info, char *err,
		    size_t size)
{
	struct go_source *gs = NULL;
	uint32_t *pids;
	int n;

	memset(info, 0, sizeof(*info));
	info->nprocs = -1;
	if (o->target.kind == TARGET_SERVER)
		return 0;
	n = resolve_target(o, &pids, err, size);
	if (n < 0)
		return n;
	info->nprocs = n;
	if (go_source_question(o->question) && !go_source__new(o->question, o->proc_root, &gs))
		inspect_go(o, pids, (size_t)n, gs, info);
	go_source__free(gs);
	free(pids);
	return n;
}

int capture_count_target(const struct capture_opts *o, char *err, size_t size)
{
	uint32_t *pids;
	int n;

	if (o->target.kind == TARGET_SERVER)
		return 0;
	n = resolve_target(o, &pids, err, size);
	if (n >= 0)
		free(pids);
	return n;
}

void capture_result__free(struct capture_result *r)
{
	size_t i;

	if (!r)
		return;
	profile__free(r->profile);
	report__free(r->report);
	free(r->threads);
	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->pids);
	free(r);
}
