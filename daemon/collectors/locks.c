// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/locks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/locks.h"
#include "bpf/python.h"
#include "daemon/collectors/collector.h"
#include "base/log.h"
#include "locks.skel.h"
#include "symbols/unwinder.h"

_Static_assert(sizeof(struct locks_key) == 32, "locks_key layout is shared with BPF");
_Static_assert(sizeof(struct locks_value) == 32, "locks_value layout is shared with BPF");
_Static_assert(sizeof(struct locks_start) == 24, "locks_start layout is shared with BPF");
_Static_assert(COLLECTOR_NEW_TASK_LAYOUT(struct locks_new_task),
	       "locks_new_task is the event collector__poll() reads");
_Static_assert(LOCKS_MAX_STACK_DEPTH == UW_MAX_DEPTH, "user stacks come from the unwinder");
_Static_assert(LOCKS_WAIT == LOCKS_KIND_WAIT && LOCKS_WAIT_BITSET == LOCKS_KIND_WAIT_BITSET &&
		       LOCKS_LOCK_PI == LOCKS_KIND_LOCK_PI &&
		       LOCKS_WAIT_REQUEUE_PI == LOCKS_KIND_WAIT_REQUEUE_PI &&
		       LOCKS_WAITV == LOCKS_KIND_WAITV,
	       "enum locks_kind mirrors LOCKS_KIND_*");

struct locks {
	struct locks_bpf *skel;
	struct collector *col; /* filter set, unwinder, first sightings, stats */
};

static const char *const kind_names[LOCKS_KIND_MAX] = {
	[LOCKS_KIND_WAIT] = "futex_wait",
	[LOCKS_KIND_WAIT_BITSET] = "futex_wait_bitset",
	[LOCKS_KIND_LOCK_PI] = "futex_lock_pi",
	[LOCKS_KIND_WAIT_REQUEUE_PI] = "futex_wait_requeue_pi",
	[LOCKS_KIND_WAITV] = "futex_waitv",
};

const char *locks_kind_name(uint32_t kind)
{
	return kind < LOCKS_KIND_MAX ? kind_names[kind] : "unknown";
}

int locks__new(const struct locks_opts *opts, struct locks **out)
{
	struct locks_opts defaults = {};
	struct collector_python_knobs knobs;
	struct collector_opts co = {};
	struct locks *l;
	bool waitv;
	int err;

	if (!opts)
		opts = &defaults;
	bpf_util_route_libbpf_log();
	err = bpf_util_ensure_tracefs();
	if (err)
		return err;
	if (!bpf_util_have_tracepoint("syscalls", "sys_enter_futex"))
		return pr_err_errno(-ENOENT, "no syscalls/sys_enter_futex tracepoint");
	waitv = bpf_util_have_tracepoint("syscalls", "sys_enter_futex_waitv");

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;

	l->skel = locks_bpf__open();
	if (!l->skel) {
		err = -errno;
		pr_err_errno(err, "opening the BPF lock waits collector");
		goto err_free;
	}
	l->skel->bss->filter_tgids = opts->filter_tgids || opts->ntgids > 0;
	if (opts->stack_entries)
		bpf_map__set_max_entries(l->skel->maps.uw_stacks, opts->stack_entries);
	if (opts->count_entries)
		bpf_map__set_max_entries(l->skel->maps.counts, opts->count_entries);
	if (!waitv) {
		pr_debug("no futex_waitv tracepoints: futex_waitv(2) waits are not counted");
		bpf_program__set_autoload(l->skel->progs.futex_waitv_enter, false);
		bpf_program__set_autoload(l->skel->progs.futex_waitv_exit, false);
	}

	err = locks_bpf__load(l->skel);
	if (err) {
		pr_err_errno(err, "loading the BPF lock waits collector");
		goto err_free;
	}
	co.tgids = opts->tgids;
	co.ntgids = opts->ntgids;
	co.on_new_task = opts->on_new_task;
	co.ctx = opts->ctx;
	err = collector__new(l->skel->obj, &co, &l->col);
	if (err)
		goto err_free;
	knobs.enabled = &l->skel->bss->py_enabled;
	knobs.fsbase_off = &l->skel->bss->py_fsbase_off;
	err = collector__python(l->col, &knobs);
	if (err)
		goto err_free;
	err = locks_bpf__attach(l->skel);
	if (err) {
		pr_err_errno(err, "attaching the futex tracepoints");
		goto err_free;
	}
	*out = l;
	return 0;

err_free:
	locks__free(l);
	return err;
}

void locks__free(struct locks *l)
{
	if (!l)
		return;
	collector__free(l->col);
	locks_bpf__destroy(l->skel);
	free(l);
}

int locks__poll(struct locks *l, int timeout_ms)
{
	return collector__poll(l->col, timeout_ms);
}

int locks__add_tgid(struct locks *l, uint32_t tgid)
{
	return collector__add_tgid(l->col, tgid);
}

int locks__add_jvm(struct locks *l, uint32_t tgid, const struct uw_jvm *jvm)
{
	return collector__add_jvm(l->col, tgid, jvm);
}

int locks__add_python(struct locks *l, uint32_t tgid, const struct py_proc *proc)
{
	return collector__add_python(l->col, tgid, proc);
}

int locks__stop(struct locks *l)
{
	locks_bpf__detach(l->skel);
	return collector__consume(l->col);
}

int locks__drain(struct locks *l, locks_sample_fn_t fn, void *ctx)
{
	uint64_t ustack[LOCKS_MAX_STACK_DEPTH];
	struct sampler_py_frame pyframes[PY_MAX_FRAMES];
	struct unwinder *uw = collector__unwinder(l->col);
	int counts_fd = bpf_map__fd(l->skel->maps.counts);
	struct locks_key key, next, *prev = NULL;
	struct locks_value val;
	struct locks_sample smp;
	char comm[LOCKS_COMM_LEN + 1];
	int err;

	while (bpf_map_get_next_key(counts_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(counts_fd, &key, &val))
			continue;
		memcpy(comm, val.comm, LOCKS_COMM_LEN);
		comm[LOCKS_COMM_LEN] = '\0';
		memset(&smp, 0, sizeof(smp));
		smp.tgid = key.tgid;
		smp.tid = key.tid;
		smp.cgroup_id = key.cgroup_id;
		smp.comm = comm;
		smp.kind = key.kind;
		smp.wait_ns = val.wait_ns;
		smp.count = val.count;
		smp.ustack_err = unwinder__read_stack(uw, key.user_stack_id, ustack,
						      LOCKS_MAX_STACK_DEPTH, &smp.nustack);
		smp.ustack = ustack;
		smp.npyframes = collector__python_stack(l->col, key.py_stack, pyframes,
							&smp.py_flags);
		smp.pyframes = smp.npyframes ? pyframes : NULL;
		err = fn(ctx, &smp);
		if (err < 0)
			return err;
	}
	collector__python_clear(l->col);
	return 0;
}

int locks__stats(struct locks *l, struct locks_stats *out)
{
	uint64_t sums[LOCKS_STAT_MAX];
	int err;

	err = collector__stats(l->col, sums, LOCKS_STAT_MAX);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->waits = sums[LOCKS_STAT_WAITS];
	out->no_sleep = sums[LOCKS_STAT_NO_SLEEP];
	out->filtered = sums[LOCKS_STAT_FILTERED];
	out->lost_counts = sums[LOCKS_STAT_DROP_COUNTS];
	out->lost_stacks = sums[LOCKS_STAT_DROP_STACKS];
	out->lost_starts = sums[LOCKS_STAT_DROP_STARTS];
	out->lost_python = collector__python_lost(l->col);
	return 0;
}

int locks__unwind_stats(struct locks *l, struct unwinder_stats *out)
{
	return unwinder__stats(collector__unwinder(l->col), out);
}
