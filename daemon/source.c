// SPDX-License-Identifier: Apache-2.0
#include "daemon/source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/profile.h"
#include "daemon/locks.h"
#include "daemon/memgrow.h"
#include "daemon/sampler.h"
#include "profile/profile.h"

struct source {
	enum question question;
	int64_t period_ns;
	struct sampler *sampler;
	struct locks *locks;
	struct memgrow *memgrow;
	source_emit_fn_t emit;
	void *emit_ctx;
};

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
	switch (o->question) {
	case Q_CPU:
	case Q_WALL: {
		struct sampler_opts so = { .freq_hz = hz, .filter_tgids = o->filter_tgids,
					   .offcpu = o->question == Q_WALL,
					   .on_new_task = o->on_new_task, .ctx = o->ctx };

		err = sampler__new(&so, &s->sampler);
		break;
	}
	case Q_LOCKS: {
		struct locks_opts lo = { .filter_tgids = o->filter_tgids,
					 .on_new_task = o->on_new_task, .ctx = o->ctx };

		err = locks__new(&lo, &s->locks);
		break;
	}
	case Q_MEMORY_GROWTH: {
		struct memgrow_opts mo = { .filter_tgids = o->filter_tgids,
					   .on_new_task = o->on_new_task, .ctx = o->ctx };

		err = memgrow__new(&mo, &s->memgrow);
		break;
	}
	default:
		err = -EOPNOTSUPP;
	}
	if (err) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void source__free(struct source *s)
{
	if (!s)
		return;
	sampler__free(s->sampler);
	locks__free(s->locks);
	memgrow__free(s->memgrow);
	free(s);
}

int source__add_tgid(struct source *s, uint32_t tgid)
{
	if (s->sampler)
		return sampler__add_tgid(s->sampler, tgid);
	if (s->locks)
		return locks__add_tgid(s->locks, tgid);
	return memgrow__add_tgid(s->memgrow, tgid);
}

int source__poll(struct source *s, int timeout_ms)
{
	if (s->sampler)
		return sampler__poll(s->sampler, timeout_ms);
	if (s->locks)
		return locks__poll(s->locks, timeout_ms);
	return memgrow__poll(s->memgrow, timeout_ms);
}

int source__stop(struct source *s)
{
	if (s->sampler)
		return sampler__stop(s->sampler);
	if (s->locks)
		return locks__stop(s->locks);
	return memgrow__stop(s->memgrow);
}

static int emit_sampler(void *ctx, const struct sampler_sample *x)
{
	struct source *s = ctx;
	struct source_sample o = {
		.tgid = x->tgid, .tid = x->tid, .cgroup_id = x->cgroup_id, .comm = x->comm,
		.ustack = x->ustack, .nustack = x->nustack, .ustack_err = x->ustack_err,
		.kstack = x->kstack, .nkstack = x->nkstack,
	};

	if (x->offcpu) {
		o.leaf = x->offcpu == PROF_OFF_RUNNABLE ? SOURCE_LEAF_RUNNABLE : SOURCE_LEAF_WAIT;
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
		.tgid = x->tgid, .tid = x->tid, .cgroup_id = x->cgroup_id, .comm = x->comm,
		.ustack = x->ustack, .nustack = x->nustack, .ustack_err = x->ustack_err,
		.leaf = SOURCE_LEAF_TEXT, .leaf_text = leaf,
		.values = { (int64_t)x->wait_ns, (int64_t)x->count },
	};

	snprintf(leaf, sizeof(leaf), "[lock wait: %s]", locks_kind_name(x->kind));
	return s->emit(s->emit_ctx, &o);
}

static int emit_memgrow(void *ctx, const struct memgrow_sample *x)
{
	struct source *s = ctx;
	struct source_sample o = {
		.tgid = x->tgid, .tid = x->tid, .cgroup_id = x->cgroup_id, .comm = x->comm,
		.ustack = x->ustack, .nustack = x->nustack, .ustack_err = x->ustack_err,
		.kstack = x->kstack, .nkstack = x->nkstack,
	};

	switch (x->kind) {
	case MEMGROW_FAULT:
		o.values[0] = x->bytes;
		break;
	case MEMGROW_MAP:
	case MEMGROW_UNMAP:
		o.values[1] = x->bytes;
		break;
	default:	/* write faults on present pages: not growth (docs/memory-growth.md) */
		return 0;
	}
	return s->emit(s->emit_ctx, &o);
}

int source__drain(struct source *s, source_emit_fn_t fn, void *ctx)
{
	s->emit = fn;
	s->emit_ctx = ctx;
	if (s->sampler)
		return sampler__drain(s->sampler, emit_sampler, s);
	if (s->locks)
		return locks__drain(s->locks, emit_locks, s);
	return memgrow__drain(s->memgrow, emit_memgrow, s);
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
	}
	return 0;
}

const char *source_profile_types(enum question q, int64_t period_ns, struct profile_opts *po)
{
	static const struct {
		const char *t0, *u0, *t1, *u1, *period_type, *unit;
	} types[Q_COUNT] = {
		[Q_CPU] = { "samples", "count", "cpu", "nanoseconds", "cpu", "samples" },
		[Q_WALL] = { "wall", "nanoseconds", "samples", "count", "wall", "ns" },
		[Q_LOCKS] = { "delay", "nanoseconds", "contentions", "count", "delay", "ns" },
		[Q_MEMORY_GROWTH] = { "growth", "bytes", "mapped", "bytes", "growth", "bytes" },
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
	po->period = q == Q_CPU || q == Q_WALL ? period_ns : 1;
	return types[q].unit;
}
