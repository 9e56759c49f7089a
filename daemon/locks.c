// SPDX-License-Identifier: Apache-2.0
#include "daemon/locks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "bpf/locks.h"
#include "daemon/bpf_util.h"
#include "daemon/log.h"
#include "locks.skel.h"
#include "symbols/unwinder.h"

_Static_assert(sizeof(struct locks_key) == 24, "locks_key layout is shared with BPF");
_Static_assert(sizeof(struct locks_value) == 32, "locks_value layout is shared with BPF");
_Static_assert(sizeof(struct locks_start) == 16, "locks_start layout is shared with BPF");
_Static_assert(sizeof(struct locks_new_task) == 16, "locks_new_task layout is shared with BPF");
_Static_assert(LOCKS_MAX_STACK_DEPTH == UW_MAX_DEPTH, "user stacks come from the unwinder");
_Static_assert(LOCKS_WAIT == LOCKS_KIND_WAIT && LOCKS_WAIT_BITSET == LOCKS_KIND_WAIT_BITSET &&
		       LOCKS_LOCK_PI == LOCKS_KIND_LOCK_PI &&
		       LOCKS_WAIT_REQUEUE_PI == LOCKS_KIND_WAIT_REQUEUE_PI &&
		       LOCKS_WAITV == LOCKS_KIND_WAITV,
	       "enum locks_kind mirrors LOCKS_KIND_*");


struct locks {
	struct locks_bpf *skel;
	struct ring_buffer *rb;
	struct unwinder *uw;		/* loads the unwind tables of the processes seen */
	locks_task_fn_t on_new_task;
	void *ctx;
	int cb_err;
	int delivered;
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

/*
 * Loads @tgid's unwind tables. Until they are, its stacks are walked by frame pointer (counted
 * as UW_STAT_NO_PROC): for a process first seen by a wait, the waits that start before its
 * tables are loaded. Failures are not fatal.
 */
static void load_unwind_tables(struct unwinder *uw, uint32_t tgid)
{
	int err = unwinder__add_process(uw, tgid);

	if (err < 0 && err != -ESRCH)
		pr_debug_errno(err, "loading the unwind tables of %u", tgid);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct locks *l = ctx;
	const struct locks_new_task *ev = data;
	int err;

	if (size < sizeof(*ev))
		return 0;
	l->delivered++;
	load_unwind_tables(l->uw, ev->tgid);
	if (!l->on_new_task)
		return 0;
	err = l->on_new_task(l->ctx, ev->tgid, ev->cgroup_id);
	if (err < 0) {
		l->cb_err = err;
		return err;
	}
	return 0;
}

static int fill_filter(struct locks *l, const struct locks_opts *opts)
{
	int fd = bpf_map__fd(l->skel->maps.target_tgids);
	__u8 one = 1;
	size_t i;
	int err;

	for (i = 0; i < opts->ntgids; i++) {
		__u32 tgid = opts->tgids[i];

		load_unwind_tables(l->uw, tgid);
		if (bpf_map_update_elem(fd, &tgid, &one, BPF_ANY)) {
			err = -errno;
			return pr_err_errno(err, "adding tgid %u to the filter", tgid);
		}
	}
	return 0;
}

static int new_unwinder(struct locks *l)
{
	struct unwinder_maps maps = {
		.rows_fd = bpf_map__fd(l->skel->maps.uw_rows),
		.procs_fd = bpf_map__fd(l->skel->maps.uw_procs),
		.stacks_fd = bpf_map__fd(l->skel->maps.uw_stacks),
		.stats_fd = bpf_map__fd(l->skel->maps.uw_stats),
	};
	struct unwinder_opts uo = {
		.rows = bpf_map__max_entries(l->skel->maps.uw_rows),
		.max_procs = bpf_map__max_entries(l->skel->maps.uw_procs),
	};
	int err = unwinder__new(&maps, &uo, &l->uw);

	if (err)
		return pr_err_errno(err, "setting up the stack unwinder");
	return 0;
}

int locks__new(const struct locks_opts *opts, struct locks **out)
{
	struct locks_opts defaults = {};
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
	l->on_new_task = opts->on_new_task;
	l->ctx = opts->ctx;

	l->skel = locks_bpf__open();
	if (!l->skel) {
		err = -errno;
		pr_err_errno(err, "opening the BPF lock waits collector");
		goto err_free;
	}
	l->skel->rodata->filter_tgids = opts->filter_tgids || opts->ntgids > 0;
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
	err = new_unwinder(l);
	if (err)
		goto err_free;
	err = fill_filter(l, opts);
	if (err)
		goto err_free;
	l->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.events), handle_event, l, NULL);
	if (!l->rb) {
		err = -errno;
		pr_err_errno(err, "creating the ring buffer");
		goto err_free;
	}
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
	ring_buffer__free(l->rb);
	unwinder__free(l->uw);
	locks_bpf__destroy(l->skel);
	free(l);
}

int locks__poll(struct locks *l, int timeout_ms)
{
	int err;

	l->delivered = 0;
	l->cb_err = 0;
	err = ring_buffer__poll(l->rb, timeout_ms);
	if (l->cb_err)
		return l->cb_err;
	if (err < 0 && err != -EINTR)
		return err;
	return l->delivered;
}

int locks__add_tgid(struct locks *l, uint32_t tgid)
{
	__u8 one = 1;

	/* before the filter admits it, so its waits are unwound with its tables */
	load_unwind_tables(l->uw, tgid);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.target_tgids), &tgid, &one, BPF_ANY))
		return -errno;
	return 0;
}

int locks__stop(struct locks *l)
{
	int err;

	locks_bpf__detach(l->skel);
	l->cb_err = 0;
	err = ring_buffer__consume(l->rb);
	if (l->cb_err)
		return l->cb_err;
	return err < 0 ? err : 0;
}

int locks__drain(struct locks *l, locks_sample_fn_t fn, void *ctx)
{
	uint64_t ustack[LOCKS_MAX_STACK_DEPTH];
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
		smp.ustack_err = unwinder__read_stack(l->uw, key.user_stack_id, ustack,
						      LOCKS_MAX_STACK_DEPTH, &smp.nustack);
		smp.ustack = ustack;
		err = fn(ctx, &smp);
		if (err < 0)
			return err;
	}
	return 0;
}

int locks__stats(struct locks *l, struct locks_stats *out)
{
	int fd = bpf_map__fd(l->skel->maps.stats);
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals, sums[LOCKS_STAT_MAX] = {};
	__u32 i;
	int c;

	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < LOCKS_STAT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (c = 0; c < ncpus; c++)
			sums[i] += vals[c];
	}
	free(vals);
	memset(out, 0, sizeof(*out));
	out->waits = sums[LOCKS_STAT_WAITS];
	out->no_sleep = sums[LOCKS_STAT_NO_SLEEP];
	out->filtered = sums[LOCKS_STAT_FILTERED];
	out->lost_counts = sums[LOCKS_STAT_DROP_COUNTS];
	out->lost_stacks = sums[LOCKS_STAT_DROP_STACKS];
	out->lost_starts = sums[LOCKS_STAT_DROP_STARTS];
	return 0;
}

int locks__unwind_stats(struct locks *l, struct unwinder_stats *out)
{
	return unwinder__stats(l->uw, out);
}
