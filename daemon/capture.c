// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/resolver.h"
#include "daemon/fileio.h"
#include "daemon/log.h"
#include "daemon/preflight.h"
#include "daemon/summary.h"
#include "profile/collapsed.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "symbols/symbolizer.h"

#define DEFAULT_LOCK_PATH "/run/slideops-profiler.lock"
#define FEW_SAMPLES_PER_SECOND 5

struct capture {
	const struct capture_opts *opts;
	struct capture_result *res;
	struct symbolizer *sym;
	struct owner_resolver *owners;
	struct profile *prof;
	int64_t period_ns;
	uint64_t unreadable;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *capture_target_text(const struct capture_target *t, char *buf, size_t size)
{
	if (t->kind == TARGET_SERVER)
		snprintf(buf, size, "this server");
	else if (t->npids == 1)
		snprintf(buf, size, "process %u", t->pids[0]);
	else
		snprintf(buf, size, "%zu processes", t->npids);
	return buf;
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
	if (!o->out_dir || !*o->out_dir) {
		snprintf(err, size, "no output directory (--out DIR)");
		return -EINVAL;
	}
	return 0;
}

int capture_plan(const struct capture_opts *o, struct capture_step *steps, int max)
{
	unsigned int hz = o->freq_hz ? o->freq_hz : 99;
	char who[128];
	int n = 0;

	if (o->target.kind == TARGET_SERVER)
		snprintf(who, sizeof(who), "every process on this server");
	else
		capture_target_text(&o->target, who, sizeof(who));
#define STEP(...)                                                                          \
	do {                                                                               \
		if (n < max)                                                               \
			snprintf(steps[n].text, sizeof(steps[n].text), __VA_ARGS__);       \
		n++;                                                                       \
	} while (0)
	STEP("Load the eBPF sampler into the kernel (cpu-clock events on every CPU).");
	STEP("Sample %s about %u times a second for %u second%s, using eBPF in the kernel. "
	     "Nothing is restarted and nothing in the processes changes.",
	     who, hz, o->duration_s, o->duration_s == 1 ? "" : "s");
	STEP("Read the result back, name each function and group the processes by owner.");
	STEP("Write profile.pb.gz, profile.collapsed, flamegraph.html and summary.json to %s.",
	     o->out_dir);
#undef STEP
	return n < max ? n : max;
}

static void progress(const struct capture_opts *o, int step, int nsteps, const char *text,
		     double t0)
{
	if (o->progress)
		o->progress(o->progress_ctx, step, nsteps, text, now_s() - t0);
}

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

static int on_new_task(void *ctx, uint32_t tgid, uint64_t cgroup_id)
{
	struct capture *c = ctx;
	struct owner o;

	(void)cgroup_id;
	/* A process may be gone already: that is not an error, it is named from what we saw. */
	owner_resolver__resolve(c->owners, tgid, &o);
	symbolizer__add_process(c->sym, tgid);
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

static int on_sample(void *ctx, const struct sampler_sample *s)
{
	struct capture *c = ctx;
	uint32_t frames[2 * 127];
	struct prof_labels labels = {};
	char owner_name[OWNER_NAME_MAX + 32];
	struct owner o;
	int64_t values[2];
	size_t i, n = 0;
	int id;

	/* Kernel frames first: the stack is leaf first, and the kernel sits above user space.
	 * Return addresses point after the call: look up ip - 1 for every frame but the leaf. */
	for (i = 0; i < s->nkstack && n < 127; i++) {
		id = kernel_frame(c, i ? s->kstack[i] - 1 : s->kstack[i]);
		if (id < 0)
			return id;
		frames[n++] = id;
	}
	for (i = 0; i < s->nustack && n < 2 * 127; i++) {
		id = user_frame(c, s->tgid, (i || s->nkstack) ? s->ustack[i] - 1 : s->ustack[i]);
		if (id < 0)
			return id;
		frames[n++] = id;
	}

	if (!n) {
		/* No stack at all: the user stack was lost (stack map full) or unreadable, and the
		 * sample hit no kernel code. Keep the time, under a frame that says so. */
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
		c->unreadable += s->count;
	}
	labels.owner = owner_format(&o, owner_name, sizeof(owner_name));
	labels.process = s->pcomm;
	labels.thread = s->comm;
	labels.pid = s->tgid;
	labels.tid = s->tid;
	labels.lang = PROF_LANG_NATIVE;
	values[0] = (int64_t)s->count;
	values[1] = (int64_t)s->count * c->period_ns;
	c->res->samples += s->count;
	return profile__add(c->prof, frames, n, &labels, values);
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

static int write_files(struct capture *c, char *err, size_t size)
{
	const struct capture_opts *o = c->opts;
	struct flamegraph_opts fg = {};
	const char *notes[CAPTURE_MAX_NOTES + 1] = {};
	char path[4096], title[256], who[128];
	size_t i;
	int ret;

	for (i = 0; i < c->res->nnotes; i++)
		notes[i] = c->res->notes[i];
	snprintf(title, sizeof(title), "%s: %s, %u s", question_info(o->question)->text,
		 capture_target_text(&o->target, who, sizeof(who)), o->duration_s);
	fg.title = title;
	fg.answer = c->res->answer;
	fg.notes = notes;
	fg.unit = "samples";

#define WRITE(name, call)                                                                   \
	do {                                                                                \
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, name);                    \
		ret = (call);                                                               \
		if (ret < 0) {                                                              \
			snprintf(err, size, "cannot write %s: %s", path, strerror(-ret));   \
			return ret;                                                         \
		}                                                                           \
	} while (0)
	WRITE("profile.pb.gz", pprof_write_file(c->prof, path));
	WRITE("profile.collapsed", collapsed_write_file(c->prof, path));
	WRITE("flamegraph.html", flamegraph_write_file(c->prof, &fg, path));
	WRITE("summary.json", summary_write_file(o, c->res, path));
#undef WRITE
	return 0;
}

static void verification_notes(struct capture *c)
{
	const struct capture_opts *o = c->opts;
	struct capture_result *r = c->res;
	uint64_t lost = r->stats.lost_counts + r->stats.lost_stacks;

	if (r->samples < (uint64_t)FEW_SAMPLES_PER_SECOND * o->duration_s)
		add_note(r, "Very few samples: %s was almost idle. Capture again while it is under "
			    "the load you want to understand.",
			 o->target.kind == TARGET_SERVER ? "the server" : "the target");
	if (r->report && r->report->unnamed_share >= 10.0)
		add_note(r, "Many native frames have no names, because the binaries were built "
			    "without symbols (%.0f%% of the samples).",
			 r->report->unnamed_share);
	if (c->unreadable)
		add_note(r, "%llu samples came from processes that exited before they could be "
			    "read; they are shown under Other processes.",
			 (unsigned long long)c->unreadable);
	if (lost)
		add_note(r, "%llu samples lost to full maps (%llu counts, %llu stacks).",
			 (unsigned long long)lost, (unsigned long long)r->stats.lost_counts,
			 (unsigned long long)r->stats.lost_stacks);
	r->lost = lost;
}

int capture_run(const struct capture_opts *o, struct capture_result **out, char *err,
		size_t size)
{
	struct capture c = { .opts = o };
	struct capture_step steps[CAPTURE_MAX_STEPS];
	struct symbolizer_opts so = { .proc_root = o->proc_root };
	struct owner_resolver_opts ro = { .proc_root = o->proc_root };
	struct profile_opts po = {};
	struct sampler_opts sopts = {};
	struct sampler *sampler = NULL;
	struct preflight pf;
	struct timespec wall;
	unsigned int hz = o->freq_hz ? o->freq_hz : 99;
	int nsteps, lockfd = -1, ret;
	double t0, t_end, t_last = 0;

	ret = capture_validate(o, err, size);
	if (ret)
		return ret;
	if (preflight_check(&pf)) {
		preflight_message(&pf, err, size);
		return -EPERM;
	}
	lockfd = take_lock(o->lock_path ? o->lock_path : DEFAULT_LOCK_PATH);
	if (lockfd < 0) {
		ret = lockfd;
		if (ret == -EBUSY)
			snprintf(err, size, CAPTURE_BUSY_MSG);
		else
			snprintf(err, size, "cannot take the capture lock: %s", strerror(-ret));
		return ret;
	}
	ret = check_out_dir(o->out_dir, err, size);
	if (ret)
		goto out;

	c.res = calloc(1, sizeof(*c.res));
	if (!c.res) {
		ret = -ENOMEM;
		goto out_oom;
	}
	nsteps = capture_plan(o, steps, CAPTURE_MAX_STEPS);
	t0 = now_s();
	clock_gettime(CLOCK_REALTIME, &wall);
	c.res->start_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
	c.period_ns = 1000000000LL / hz;

	ret = symbolizer__new(&so, &c.sym);
	if (!ret)
		ret = owner_resolver__new(&ro, &c.owners);
	if (ret)
		goto out_oom;

	/* Step 1: load. */
	progress(o, 1, nsteps, steps[0].text, t0);
	sopts.freq_hz = hz;
	sopts.on_new_task = on_new_task;
	sopts.ctx = &c;
	if (o->target.kind == TARGET_PIDS) {
		sopts.tgids = o->target.pids;
		sopts.ntgids = o->target.npids;
	}
	ret = sampler__new(&sopts, &sampler);
	if (ret) {
		snprintf(err, size, "cannot start the eBPF sampler: %s", strerror(-ret));
		goto out;
	}

	/* Step 2: sample. */
	t0 = now_s();
	progress(o, 2, nsteps, steps[1].text, t0);
	while (!(o->stop && *o->stop)) {
		double left = o->duration_s - (now_s() - t0);

		if (left <= 0)
			break;
		ret = sampler__poll(sampler, left < 0.2 ? (int)(left * 1000) + 1 : 200);
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, size, "sampling failed: %s", strerror(-ret));
			goto out;
		}
		if (now_s() - t_last >= 1.0) {
			t_last = now_s();
			progress(o, 2, nsteps, steps[1].text, t0);
		}
	}
	sampler__stop(sampler);
	t_end = now_s();
	if (o->stop && *o->stop) {
		ret = -ECANCELED;
		snprintf(err, size, "the capture was stopped before it finished; nothing was written");
		goto out;
	}
	c.res->sampled_s = t_end - t0;

	/* Step 3: read back and name. */
	progress(o, 3, nsteps, steps[2].text, t0);
	po.period_type = "cpu";
	po.period_unit = "nanoseconds";
	po.period = c.period_ns;
	po.time_nanos = c.res->start_ns;
	po.duration_nanos = (int64_t)(c.res->sampled_s * 1e9);
	po.owner_root = o->target.kind == TARGET_SERVER;
	ret = profile__new(&po, &c.prof);
	if (ret)
		goto out_oom;
	ret = sampler__drain(sampler, on_sample, &c);
	if (ret) {
		snprintf(err, size, "reading the samples failed: %s", strerror(-ret));
		goto out;
	}
	sampler__stats(sampler, &c.res->stats);
	ret = report__new(c.prof, NULL, &c.res->report);
	if (ret)
		goto out_oom;
	report_answer(c.res->report, o->duration_s, "the CPU time",
		      o->target.kind == TARGET_SERVER ? "on this server" : "of the target",
		      c.res->answer, sizeof(c.res->answer));
	verification_notes(&c);

	/* Step 4: write. */
	progress(o, 4, nsteps, steps[3].text, t0);
	c.res->result_s = now_s() - t_end;
	ret = write_files(&c, err, size);
	if (ret)
		goto out;
	c.res->profile = c.prof;
	c.prof = NULL;
	c.res->result_s = now_s() - t_end;
	*out = c.res;
	c.res = NULL;
	ret = 0;
	goto out;

out_oom:
	snprintf(err, size, "out of memory");
out:
	sampler__free(sampler);
	profile__free(c.prof);
	symbolizer__free(c.sym);
	owner_resolver__free(c.owners);
	capture_result__free(c.res);
	if (lockfd >= 0)
		close(lockfd);
	return ret;
}

void capture_result__free(struct capture_result *r)
{
	size_t i;

	if (!r)
		return;
	profile__free(r->profile);
	report__free(r->report);
	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r);
}
