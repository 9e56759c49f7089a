// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/log.h"
#include "symbols/unwinder.h"

/* libbpf's messages carry their own "libbpf: " prefix. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (level != LIBBPF_WARN && log_get_level() < LOG_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, 0, "%s", buf);
	return 0;
}

void bpf_util_route_libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

int bpf_util_ensure_tracefs(void)
{
	int err;

	if (!access(TRACEFS "/events", F_OK) || !access(DEBUGFS_TRACING "/events", F_OK))
		return 0;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		err = -errno;
		return pr_err_errno(err, "mounting tracefs at " TRACEFS);
	}
	pr_info("mounted tracefs at " TRACEFS);
	return 0;
}

bool bpf_util_have_tracepoint(const char *group, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s", group, name);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), DEBUGFS_TRACING "/events/%s/%s", group, name);
	return !access(path, F_OK);
}

int bpf_util_add_tgid(const struct bpf_map *target_tgids, uint32_t tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(target_tgids), &tgid, &one, BPF_ANY))
		return -errno;
	return 0;
}

int bpf_util_sum_percpu(const struct bpf_map *map, uint64_t *sums, uint32_t n)
{
	int fd = bpf_map__fd(map);
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals;
	__u32 i;
	int c;

	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sums[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (c = 0; c < ncpus; c++)
			sums[i] += vals[c];
	}
	free(vals);
	return 0;
}

int bpf_util_read_stack(const struct bpf_map *stacks, int32_t id, uint64_t *ips, size_t max,
			size_t *n)
{
	size_t i;

	*n = 0;
	if (id < 0)
		return id;
	if (bpf_map_lookup_elem(bpf_map__fd(stacks), &id, ips))
		return -errno;
	for (i = 0; i < max && ips[i]; i++)
		;
	*n = i;
	return 0;
}

struct collector {
	struct ring_buffer *rb;
	struct unwinder *uw;		/* loads the unwind tables of the processes seen */
	const struct bpf_map *target_tgids;
	const struct bpf_map *stats;
	bool fp_user_stacks;
	collector_task_fn_t on_new_task;
	void *ctx;
	int cb_err;
	int delivered;
};

/*
 * Loads @tgid's unwind tables. Until they are, its stacks are walked by frame pointer (counted
 * as UW_STAT_NO_PROC): for a process first seen by an event, that event and the ones taken while
 * its tables are built. Failures are not fatal.
 */
static void load_unwind_tables(struct collector *c, uint32_t tgid)
{
	int err;

	if (c->fp_user_stacks)
		return;
	err = unwinder__add_process(c->uw, tgid);
	if (err < 0 && err != -ESRCH)
		pr_debug_errno(err, "loading the unwind tables of %u", tgid);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct collector_new_task *ev = data;
	int err;

	if (size < sizeof(*ev))
		return 0;
	c->delivered++;
	load_unwind_tables(c, ev->tgid);
	if (!c->on_new_task)
		return 0;
	err = c->on_new_task(c->ctx, ev->tgid, ev->cgroup_id);
	if (err < 0) {
		c->cb_err = err;
		return err;
	}
	return 0;
}

/* The maps of bpf/collector.bpf.h and bpf/unwind.bpf.h go by their names: a missing one is a
 * collector that does not include them. */
static struct bpf_map *find_map(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (!map)
		pr_err("BPF object %s has no map %s", bpf_object__name(obj), name);
	return map;
}

static int new_unwinder(struct collector *c, struct bpf_object *obj)
{
	struct bpf_map *rows = find_map(obj, "uw_rows"), *procs = find_map(obj, "uw_procs");
	struct bpf_map *stacks = find_map(obj, "uw_stacks"), *stats = find_map(obj, "uw_stats");
	struct unwinder_maps maps;
	struct unwinder_opts uo = {};
	int err;

	if (!rows || !procs || !stacks || !stats)
		return -ENOENT;
	maps.rows_fd = bpf_map__fd(rows);
	maps.procs_fd = bpf_map__fd(procs);
	maps.stacks_fd = bpf_map__fd(stacks);
	maps.stats_fd = bpf_map__fd(stats);
	uo.rows = bpf_map__max_entries(rows);
	uo.max_procs = bpf_map__max_entries(procs);
	err = unwinder__new(&maps, &uo, &c->uw);
	if (err)
		return pr_err_errno(err, "setting up the stack unwinder");
	return 0;
}

int collector__new(struct bpf_object *obj, const struct collector_opts *opts,
		   struct collector **out)
{
	struct collector_opts defaults = {};
	struct bpf_map *tgids = find_map(obj, "target_tgids"), *stats = find_map(obj, "stats");
	struct bpf_map *events = find_map(obj, "events");
	struct collector *c;
	size_t i;
	int err;

	if (!opts)
		opts = &defaults;
	if (!tgids || !stats || !events)
		return -ENOENT;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->target_tgids = tgids;
	c->stats = stats;
	c->fp_user_stacks = opts->fp_user_stacks;
	c->on_new_task = opts->on_new_task;
	c->ctx = opts->ctx;

	err = new_unwinder(c, obj);
	if (err)
		goto err_free;
	for (i = 0; i < opts->ntgids; i++) {
		err = collector__add_tgid(c, opts->tgids[i]);
		if (err) {
			pr_err_errno(err, "adding tgid %u to the filter", opts->tgids[i]);
			goto err_free;
		}
	}
	c->rb = ring_buffer__new(bpf_map__fd(events), handle_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		pr_err_errno(err, "creating the ring buffer");
		goto err_free;
	}
	*out = c;
	return 0;

err_free:
	collector__free(c);
	return err;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	unwinder__free(c->uw);
	free(c);
}

int collector__add_tgid(struct collector *c, uint32_t tgid)
{
	/* before the filter admits it, so its stacks are unwound with its tables */
	load_unwind_tables(c, tgid);
	return bpf_util_add_tgid(c->target_tgids, tgid);
}

int collector__poll(struct collector *c, int timeout_ms)
{
	int err;

	c->delivered = 0;
	c->cb_err = 0;
	err = ring_buffer__poll(c->rb, timeout_ms);
	if (c->cb_err)
		return c->cb_err;
	if (err < 0 && err != -EINTR)
		return err;
	return c->delivered;
}

int collector__consume(struct collector *c)
{
	int err;

	c->cb_err = 0;
	err = ring_buffer__consume(c->rb);
	if (c->cb_err)
		return c->cb_err;
	return err < 0 ? err : 0;
}

int collector__stats(struct collector *c, uint64_t *sums, uint32_t n)
{
	return bpf_util_sum_percpu(c->stats, sums, n);
}

struct unwinder *collector__unwinder(struct collector *c)
{
	return c->uw;
}
