// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/python.h"
#include "bpf/sampler.h"
#include "daemon/capture/jvmframes.h"
#include "daemon/capture/py_pending.h"
#include "daemon/capture/pyframes.h"
#include "daemon/collectors/locks.h"
#include "daemon/collectors/memgrow.h"
#include "daemon/collectors/sampler.h"
#include "daemon/collectors/thread_table.h"
#include "daemon/collectors/threads.h"
#include "profile/profile.h"
#include "symbols/unwinder.h"

struct source {
	enum question question;
	int64_t period_ns;
	struct sampler *sampler;
	bool sampler_borrowed; /* source_opts.sampler: stopped, not freed, at the end */
	struct locks *locks;
	struct memgrow *memgrow;
	struct threads *threads; /* threads: snapshots */
	struct thread_table *table;
	double next_snapshot;
	int snapshots;
	source_ksym_fn_t ksym;
	void *ksym_ctx;
	source_emit_fn_t emit;
	void *emit_ctx;
	int python_err; /* the CPython walk could not start */
	/* CPythons first seen while collecting (source_opts.py): looked at after the poll */
	struct pyframes *py;
	struct jvmframes *jvm; /* JVMs first seen while collecting, the same way */
	source_task_fn_t on_new_task;
	void *task_ctx;
	struct py_pending *pending;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void source_wait_reason(source_ksym_fn_t ksym, void *ctx, const uint64_t *kstack, size_t n,
			char *buf, size_t size)
{
	static const char *const prefixes[] = { "__x64_sys_", "__ia32_sys_", "__se_sys_",
						"__do_sys_", "ksys_" };
	const char *name;
	size_t i, j;

	for (i = 0; ksym && i < n; i++) {
		name = ksym(ctx, i ? kstack[i] - 1 : kstack[i]);
		if (!name)
			continue;
		for (j = 0; j < sizeof(prefixes) / sizeof(prefixes[0]); j++) {
			size_t len = strlen(prefixes[j]);

			if (!strncmp(name, prefixes[j], len) && name[len]) {
				snprintf(buf, size, "%s", name + len);
				return;
			}
		}
		if (!strcmp(name, "exc_page_fault") || !strcmp(name, "handle_mm_fault")) {
			snprintf(buf, size, "page fault");
			return;
		}
	}
	snprintf(buf, size, "kernel");
}

/* First sightings: the capture's callback, then a CPython to look at after the poll (not in the
 * ring buffer's callback: finding its runtime reads its ELF files). */
static int on_task(void *ctx, uint32_t tgid, uint64_t cgroup_id)
{
	struct source *s = ctx;
	int err = s->on_new_task ? s->on_new_task(s->task_ctx, tgid, cgroup_id) : 0;

	if (s->pending && ((s->py && !s->python_err && !pyframes__bpf_of(s->py, tgid)) ||
			   (s->jvm && !jvmframes__bpf_of(s->jvm, tgid))))
		py_pending__push(s->pending, tgid);
	return err;
}

/* The sampler kept in *@keep, loaded when it is empty or lacks the off-CPU programs. */
static int kept_sampler(struct sampler **keep, bool offcpu)
{
	struct sampler_opts po = { .preload = true, .offcpu = offcpu };

	if (*keep && offcpu && !sampler__offcpu_loaded(*keep)) {
		sampler__free(*keep); /* once: the next one has both */
		*keep = NULL;
	}
	return *keep ? 0 : sampler__new(&po, keep);
}

/* The sampler, walking @o's CPythons from its first sample. */
static int new_sampler(struct source *s, const struct source_opts *o, unsigned int hz)
{
	struct sampler_opts so = { .freq_hz = hz,
				   .filter_tgids = o->filter_tgids,
				   .offcpu = o->question != Q_CPU,
				   .on_new_task = on_task,
				   .ctx = s,
				   .py_tgids = o->py_tgids,
				   .py_procs = o->py_procs,
				   .npy = o->npy };
	int err;

	if (o->keep_sampler) {
		/* the agent's, loaded once: this capture begins on it and leaves it loaded */
		err = kept_sampler(o->keep_sampler, so.offcpu);
		if (err)
			return err;
		s->sampler = *o->keep_sampler;
		s->sampler_borrowed = true;
		err = sampler__begin(s->sampler, &so);
		if (err && so.npy && err != -EPERM) {
			s->python_err = err;
			so.npy = 0;
			err = sampler__begin(s->sampler, &so);
		}
		return err;
	}
	err = sampler__new(&so, &s->sampler);
	if (err && so.npy && err != -EPERM) {
		/* the CPython walk cannot start here: native frames, and a note */
		s->python_err = err;
		so.npy = 0;
		err = sampler__new(&so, &s->sampler);
	}
	return err;
}

/* locks and memory-growth: their CPythons, registered once they run (the sampler's are before
 * it attaches). A walk that cannot start leaves native frames and a note. */
static void add_pythons(struct source *s, const struct source_opts *o)
{
	size_t i;
	int err = 0;

	for (i = 0; i < o->npy && !err; i++)
		err = source__add_python(s, o->py_tgids[i], &o->py_procs[i]);
	if (err && err != -E2BIG)
		s->python_err = err;
}

static int new_collectors(struct source *s, const struct source_opts *o, unsigned int hz)
{
	int err;

	switch (o->question) {
	case Q_THREADS: {
		struct threads_opts to = { .filter_tgids = o->filter_tgids };

		err = threads__new(&to, &s->threads);
		if (!err)
			err = thread_table__new(&s->table);
		if (err)
			return err;
	}
		__attribute__((fallthrough)); /* threads also take on- and off-CPU stacks */
	case Q_CPU:
	case Q_WALL:
		return new_sampler(s, o, hz);
	case Q_LOCKS: {
		struct locks_opts lo = { .filter_tgids = o->filter_tgids,
					 .on_new_task = on_task,
					 .ctx = s };

		err = locks__new(&lo, &s->locks);
		break;
	}
	case Q_MEMORY_GROWTH: {
		struct memgrow_opts mo = { .filter_tgids = o->filter_tgids,
					   .on_new_task = on_task,
					   .ctx = s };

		err = memgrow__new(&mo, &s->memgrow);
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	if (!err)
		add_pythons(s, o);
	return err;
}

int source__new(const struct source_opts *o, struct source **out)
{
	struct source *s;
	unsigned int hz = o->freq_hz ? o->freq_hz : 99;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->question = o->question;
	s->period_ns = 1000000000LL / hz;
	s->ksym = o->ksym;
	s->ksym_ctx = o->ksym_ctx;
	s->on_new_task = o->on_new_task;
	s->task_ctx = o->ctx;
	s->py = o->py;
	s->jvm = o->jvm;
	err = o->py || o->jvm ? py_pending__new(SOURCE_PY_PENDING, SOURCE_PY_TRIES, &s->pending) :
				0;
	if (!err)
		err = new_collectors(s, o, hz);
	if (err) {
		source__free(s);
		return err;
	}
	*out = s;
	return 0;
}

void source__free(struct source *s)
{
	if (!s)
		return;
	if (s->sampler_borrowed)
		sampler__stop(s->sampler);
	else
		sampler__free(s->sampler);
	locks__free(s->locks);
	memgrow__free(s->memgrow);
	threads__free(s->threads);
	thread_table__free(s->table);
	py_pending__free(s->pending);
	free(s);
}

int source__add_tgid(struct source *s, uint32_t tgid)
{
	int err;

	if (s->threads) {
		err = threads__add_tgid(s->threads, tgid);
		if (err)
			return err;
	}
	if (s->sampler)
		return sampler__add_tgid(s->sampler, tgid);
	if (s->locks)
		return locks__add_tgid(s->locks, tgid);
	return memgrow__add_tgid(s->memgrow, tgid);
}

int source__add_timed(struct source *s, uint32_t tgid)
{
	return s->sampler ? sampler__add_timed(s->sampler, tgid) : -EOPNOTSUPP;
}

int source__add_jvm(struct source *s, uint32_t tgid, const struct uw_jvm *jvm)
{
	if (s->sampler)
		return sampler__add_jvm(s->sampler, tgid, jvm);
	if (s->locks)
		return locks__add_jvm(s->locks, tgid, jvm);
	if (s->memgrow)
		return memgrow__add_jvm(s->memgrow, tgid, jvm);
	return -EOPNOTSUPP;
}

int source__add_python(struct source *s, uint32_t tgid, const struct py_proc *proc)
{
	if (s->python_err)
		return -EOPNOTSUPP;
	if (s->sampler)
		return sampler__add_python(s->sampler, tgid, proc);
	if (s->locks)
		return locks__add_python(s->locks, tgid, proc);
	if (s->memgrow)
		return memgrow__add_python(s->memgrow, tgid, proc);
	return -EOPNOTSUPP;
}

/* A CPython first seen while collecting: walked from now on. Returns 1, 0 (not one) or -errno
 * (-EAGAIN: ask again after the next poll). */
static int look_python(struct source *s, uint32_t tgid)
{
	int ret;

	if (!s->py || s->python_err || pyframes__bpf_of(s->py, tgid))
		return 0; /* registered meanwhile (the capture's target refresh) */
	ret = pyframes__add(s->py, tgid);
	if (ret <= 0)
		return ret;
	ret = source__add_python(s, tgid, pyframes__bpf_of(s->py, tgid));
	return ret ? ret : 1;
}

/* The same for a HotSpot JVM. */
static int look_jvm(struct source *s, uint32_t tgid)
{
	int ret;

	if (!s->jvm || jvmframes__bpf_of(s->jvm, tgid))
		return 0;
	ret = jvmframes__add(s->jvm, tgid);
	if (ret <= 0)
		return ret;
	ret = source__add_jvm(s, tgid, jvmframes__bpf_of(s->jvm, tgid));
	return ret ? ret : 1;
}

/* py_pending_fn_t: a process first seen while collecting; walked from now on if it is a CPython
 * or a JVM. */
static int look_runtimes(void *ctx, uint32_t tgid)
{
	struct source *s = ctx;
	int py = look_python(s, tgid), jvm = look_jvm(s, tgid);

	if (py == -EAGAIN || jvm == -EAGAIN)
		return -EAGAIN;
	return py ? py : jvm;
}

int source__python_err(const struct source *s)
{
	return s->python_err;
}

static int on_thread(void *ctx, const struct threads_rec *r)
{
	struct source *s = ctx;
	enum thread_state st;
	char reason[THREAD_REASON_LEN] = "";

	switch (r->state) {
	case THREADS_RUNNING:
		st = THREAD_RUNNING;
		break;
	case THREADS_RUNNABLE:
		st = THREAD_RUNNABLE;
		break;
	case THREADS_DISK:
		st = THREAD_WAITING;
		source_wait_reason(s->ksym, s->ksym_ctx, (const uint64_t *)r->kstack, r->nkstack,
				   reason, sizeof(reason));
		if (!strcmp(reason, "kernel"))
			snprintf(reason, sizeof(reason), "disk or uninterruptible");
		break;
	case THREADS_STOPPED:
		st = THREAD_WAITING;
		snprintf(reason, sizeof(reason), "stopped");
		break;
	default:
		st = THREAD_WAITING;
		source_wait_reason(s->ksym, s->ksym_ctx, (const uint64_t *)r->kstack, r->nkstack,
				   reason, sizeof(reason));
	}
	thread_table__snapshot(s->table, r->tgid, r->tid, r->comm, st, reason);
	return 0;
}

static int snapshot_if_due(struct source *s)
{
	double now = mono_s();
	int n;

	if (!s->threads || now < s->next_snapshot)
		return 0;
	s->next_snapshot = now + SOURCE_THREADS_INTERVAL_MS / 1000.0;
	n = threads__snapshot(s->threads, on_thread, s);
	if (n >= 0)
		s->snapshots++;
	return n < 0 ? n : 0;
}

int source__poll(struct source *s, int timeout_ms)
{
	int err, wait;

	if (s->threads) {
		err = snapshot_if_due(s);
		if (err)
			return err;
		wait = (int)((s->next_snapshot - mono_s()) * 1000) + 1;
		if (wait < timeout_ms)
			timeout_ms = wait > 0 ? wait : 0;
	}
	if (s->sampler)
		err = sampler__poll(s->sampler, timeout_ms);
	else if (s->locks)
		err = locks__poll(s->locks, timeout_ms);
	else
		err = memgrow__poll(s->memgrow, timeout_ms);
	if (s->pending && py_pending__count(s->pending))
		py_pending__run(s->pending, look_runtimes, s);
	return err;
}

int source__stop(struct source *s)
{
	int err;

	if (s->sampler)
		err = sampler__stop(s->sampler);
	else if (s->locks)
		err = locks__stop(s->locks);
	else
		err = memgrow__stop(s->memgrow);
	if (s->pending) {
		/* their events are over: what is still pending is not looked at */
		if (s->py)
			pyframes__missed(s->py, py_pending__missed(s->pending));
		py_pending__free(s->pending);
		s->pending = NULL;
	}
	return err;
}

int source__restart(struct source *s)
{
	int err;

	if (!s->sampler || s->threads)
		return -EOPNOTSUPP;
	err = sampler__clear(s->sampler);
	if (err == -EBUSY)
		return 0; /* never stopped: it samples on, its counts go to the next drain */
	if (!err && !s->pending && (s->py || s->jvm))
		err = py_pending__new(SOURCE_PY_PENDING, SOURCE_PY_TRIES, &s->pending);
	if (!err)
		err = sampler__start(s->sampler);
	return err;
}

int source__sweep(struct source *s)
{
	return s->sampler ? sampler__sweep(s->sampler) : 0;
}

static int emit_sampler(void *ctx, const struct sampler_sample *x)
{
	struct source *s = ctx;
	struct source_sample o = {
		.tgid = x->tgid,
		.tid = x->tid,
		.cgroup_id = x->cgroup_id,
		.comm = x->comm,
		.ustack = x->ustack,
		.nustack = x->nustack,
		.ustack_err = x->ustack_err,
		.kstack = x->kstack,
		.nkstack = x->nkstack,
		.pyframes = x->pyframes,
		.npyframes = x->npyframes,
		.py_flags = x->py_flags,
		.time_ns = x->time_ns,
	};

	if (x->offcpu) {
		o.leaf = x->offcpu == SAMPLER_OFF_RUNNABLE ? SOURCE_LEAF_RUNNABLE :
							     SOURCE_LEAF_WAIT;
		o.values[0] = (int64_t)x->offcpu_ns;
		o.values[1] = (int64_t)x->count;
	} else {
		o.kernel_frames = true;
		o.oncpu = x->count;
		if (s->question == Q_WALL) {
			o.values[0] = (int64_t)x->count * s->period_ns;
			o.values[1] = (int64_t)x->count;
		} else {
			o.values[0] = (int64_t)x->count;
			o.values[1] = (int64_t)x->count * s->period_ns;
		}
	}
	return s->emit(s->emit_ctx, &o);
}

static int emit_locks(void *ctx, const struct locks_sample *x)
{
	struct source *s = ctx;
	char leaf[64];
	struct source_sample o = {
		.tgid = x->tgid,
		.tid = x->tid,
		.cgroup_id = x->cgroup_id,
		.comm = x->comm,
		.ustack = x->ustack,
		.nustack = x->nustack,
		.ustack_err = x->ustack_err,
		.leaf = SOURCE_LEAF_TEXT,
		.leaf_text = leaf,
		.values = { (int64_t)x->wait_ns, (int64_t)x->count },
		.pyframes = x->pyframes,
		.npyframes = x->npyframes,
		.py_flags = x->py_flags,
	};

	snprintf(leaf, sizeof(leaf), "[lock wait: %s]", locks_kind_name(x->kind));
	return s->emit(s->emit_ctx, &o);
}

static int emit_memgrow(void *ctx, const struct memgrow_sample *x)
{
	struct source *s = ctx;
	struct source_sample o = {
		.tgid = x->tgid,
		.tid = x->tid,
		.cgroup_id = x->cgroup_id,
		.comm = x->comm,
		.ustack = x->ustack,
		.nustack = x->nustack,
		.ustack_err = x->ustack_err,
		.kstack = x->kstack,
		.nkstack = x->nkstack,
		.pyframes = x->pyframes,
		.npyframes = x->npyframes,
		.py_flags = x->py_flags,
	};

	switch (x->kind) {
	case MEMGROW_FAULT:
		o.values[0] = x->bytes;
		break;
	case MEMGROW_MAP:
	case MEMGROW_UNMAP:
		o.values[1] = x->bytes;
		break;
	default: /* write faults on present pages: not growth (docs/memory-growth.md) */
		return 0;
	}
	return s->emit(s->emit_ctx, &o);
}

/* threads: the sampler's counts only choose each thread's dominant stack. */
static int offer_stack(void *ctx, const struct sampler_sample *x)
{
	struct source *s = ctx;
	int64_t v = x->offcpu ? (int64_t)x->offcpu_ns : (int64_t)x->count * s->period_ns;
	int leaf = x->offcpu == SAMPLER_OFF_RUNNABLE ? SOURCE_LEAF_RUNNABLE :
		   x->offcpu			     ? SOURCE_LEAF_WAIT :
						       SOURCE_LEAF_NONE;

	struct thread_stack st = { .value = v,
				   .ustack = x->ustack,
				   .nustack = x->nustack,
				   .kstack = x->kstack,
				   .nkstack = x->nkstack,
				   .leaf = leaf,
				   .pyframes = x->pyframes,
				   .npyframes = x->npyframes,
				   .py_flags = x->py_flags };

	thread_table__offer(s->table, x->tgid, x->tid, x->comm, &st);
	return 0;
}

/* threads: one sample per thread, its dominant stack weighted by the time it was seen. */
static int drain_threads(struct source *s)
{
	const struct thread_entry *e;
	char leaf[THREAD_REASON_LEN + 16];
	size_t i, n;
	int err;

	err = sampler__drain(s->sampler, offer_stack, s);
	if (err)
		return err;
	e = thread_table__entries(s->table, &n);
	for (i = 0; i < n; i++) {
		struct source_sample o = {
			.tgid = e[i].tgid,
			.tid = e[i].tid,
			.comm = e[i].comm,
			.ustack = e[i].ustack,
			.nustack = e[i].nustack,
			.kstack = e[i].kstack,
			.nkstack = e[i].nkstack,
			.leaf = e[i].best_leaf,
			.kernel_frames = e[i].best_leaf == SOURCE_LEAF_NONE,
			.pyframes = e[i].pyframes,
			.npyframes = e[i].npyframes,
			.py_flags = e[i].py_flags,
			.values = { (int64_t)e[i].snapshots * SOURCE_THREADS_INTERVAL_MS *
					    1000000LL,
				    e[i].snapshots },
		};

		if (!e[i].snapshots)
			continue; /* sampled, but born and gone between snapshots */
		if (!e[i].best_value) {
			/* never ran nor switched during the capture: what the snapshots saw */
			o.leaf = SOURCE_LEAF_TEXT;
			if (e[i].nwaits)
				snprintf(leaf, sizeof(leaf), "[off-CPU: %s]", e[i].waits[0].reason);
			else
				snprintf(leaf, sizeof(leaf), "[running]");
			o.leaf_text = leaf;
			o.ustack_err = -ENODATA;
		}
		err = s->emit(s->emit_ctx, &o);
		if (err < 0)
			return err;
	}
	return 0;
}

const struct thread_entry *source__threads(struct source *s, size_t *n)
{
	if (!s->table) {
		*n = 0;
		return NULL;
	}
	return thread_table__entries(s->table, n);
}

int source__drain(struct source *s, source_emit_fn_t fn, void *ctx)
{
	s->emit = fn;
	s->emit_ctx = ctx;
	if (s->threads)
		return drain_threads(s);
	if (s->sampler)
		return sampler__drain(s->sampler, emit_sampler, s);
	if (s->locks)
		return locks__drain(s->locks, emit_locks, s);
	return memgrow__drain(s->memgrow, emit_memgrow, s);
}

static void unwind_stats(struct source *s, struct source_stats *out)
{
	struct unwinder_stats st;
	int err;

	if (s->sampler)
		err = sampler__unwind_stats(s->sampler, &st);
	else if (s->locks)
		err = locks__unwind_stats(s->locks, &st);
	else
		err = memgrow__unwind_stats(s->memgrow, &st);
	if (err)
		return;
	out->stacks = st.bpf[UW_STAT_WALKS];
	out->stacks_incomplete = st.bpf[UW_STAT_WALKS] - st.bpf[UW_STAT_COMPLETE];
	out->stacks_incomplete_pct = unwinder_incomplete_text(&st, out->stacks_detail,
							      sizeof(out->stacks_detail));
	out->unwind_table_bytes = st.rows_bytes;
}

/* Python stacks not stored (python_stacks full): those events keep the interpreter's frames,
 * counted with the losses so the capture's note says so. */
static void lost_python(struct source_stats *out, uint64_t n)
{
	size_t len = strlen(out->lost_detail);

	if (!n)
		return;
	out->lost += n;
	snprintf(out->lost_detail + len, sizeof(out->lost_detail) - len,
		 ", %llu Python stacks (shown as the interpreter's frames)", (unsigned long long)n);
}

int source__stats(struct source *s, struct source_stats *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (s->sampler) {
		struct sampler_stats st;

		err = sampler__stats(s->sampler, &st);
		if (err)
			return err;
		out->samples = st.samples;
		out->idle = st.idle;
		out->filtered = st.filtered;
		out->lost = st.lost_counts + st.lost_stacks + st.lost_offcpu;
		snprintf(out->lost_detail, sizeof(out->lost_detail),
			 "%llu counts, %llu stacks, %llu off-CPU intervals",
			 (unsigned long long)st.lost_counts, (unsigned long long)st.lost_stacks,
			 (unsigned long long)st.lost_offcpu);
		lost_python(out, st.lost_python);
	} else if (s->locks) {
		struct locks_stats st;

		err = locks__stats(s->locks, &st);
		if (err)
			return err;
		out->events = st.waits;
		out->lost = st.lost_counts + st.lost_stacks + st.lost_starts;
		snprintf(out->lost_detail, sizeof(out->lost_detail),
			 "%llu counts, %llu stacks, %llu thread records",
			 (unsigned long long)st.lost_counts, (unsigned long long)st.lost_stacks,
			 (unsigned long long)st.lost_starts);
		lost_python(out, st.lost_python);
	} else {
		struct memgrow_stats st;

		err = memgrow__stats(s->memgrow, &st);
		if (err)
			return err;
		out->events = st.faults;
		out->lost = st.lost_counts + st.lost_stacks + st.lost_threads;
		snprintf(out->lost_detail, sizeof(out->lost_detail),
			 "%llu counts, %llu stacks, %llu syscalls",
			 (unsigned long long)st.lost_counts, (unsigned long long)st.lost_stacks,
			 (unsigned long long)st.lost_threads);
		lost_python(out, st.lost_python);
	}
	unwind_stats(s, out);
	return 0;
}

const char *source_profile_types(enum question q, int64_t period_ns, struct profile_opts *po)
{
	static const struct {
		const char *t0, *u0, *t1, *u1, *period_type, *unit;
	} types[Q_COUNT] = {
		[Q_CPU] = { "samples", "count", "cpu", "nanoseconds", "cpu", "samples" },
		[Q_WALL] = { "wall", "nanoseconds", "samples", "count", "wall", "ns" },
		[Q_THREADS] = { "wall", "nanoseconds", "snapshots", "count", "wall", "ns" },
		[Q_LOCKS] = { "delay", "nanoseconds", "contentions", "count", "delay", "ns" },
		[Q_MEMORY_GROWTH] = { "growth", "bytes", "mapped", "bytes", "growth", "bytes" },
		/* Read from the runtime (Go's heap and allocs profiles, daemon/capture/go_source.h). */
		[Q_MEMORY_HELD] = { "inuse_space", "bytes", "inuse_objects", "count", "space",
				    "bytes" },
		[Q_MEMORY_ALLOC] = { "alloc_space", "bytes", "alloc_objects", "count", "space",
				     "bytes" },
	};

	if ((unsigned)q >= Q_COUNT || !types[q].t0)
		q = Q_CPU;
	po->sample_type[0] = types[q].t0;
	po->sample_unit[0] = types[q].u0;
	po->sample_type[1] = types[q].t1;
	po->sample_unit[1] = types[q].u1;
	po->nvalues = 2;
	po->period_type = types[q].period_type;
	po->period_unit = types[q].u0;
	po->period = q == Q_CPU || q == Q_WALL ? period_ns :
		     q == Q_THREADS	       ? SOURCE_THREADS_INTERVAL_MS * 1000000LL :
						 1;
	return types[q].unit;
}
