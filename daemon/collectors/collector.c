// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/collector.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/array.h"
#include "base/log.h"
#include "base/proc.h"
#include "bpf/python.h"
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

/* Keys gathered per pass of bpf_util_clear_map(). */
#define CLEAR_CHUNK 1024

/* Deletes @n keys of @size bytes at @keys: in one call where the map type has batches (hash
 * maps, kernel 5.6), else one by one (a stack-trace map). Returns how many were deleted. */
static size_t delete_keys(int fd, const __u8 *keys, size_t size, __u32 n)
{
	__u32 count = n;
	size_t i, done = 0;

	if (bpf_map_delete_batch(fd, keys, &count, NULL) == 0)
		return count;
	for (i = 0; i < n; i++)
		done += bpf_map_delete_elem(fd, keys + i * size) == 0;
	return done;
}

size_t bpf_util_clear_map(const struct bpf_map *map)
{
	size_t size = bpf_map__key_size(map), n = 0, got, deleted;
	int fd = bpf_map__fd(map);
	__u8 *keys;

	if (size == 0 || size > 64)
		return 0;
	keys = malloc(CLEAR_CHUNK * size);
	if (!keys)
		return 0;
	/* Gather up to CLEAR_CHUNK keys walking forward, then delete them and start again from the
	 * first key. Restarting after every delete, as this did, scans the emptied buckets anew each
	 * time: quadratic, and most of what clearing a window's maps cost. */
	for (;;) {
		for (got = 0; got < CLEAR_CHUNK; got++)
			if (bpf_map_get_next_key(fd, got ? keys + (got - 1) * size : NULL,
						 keys + got * size))
				break;
		deleted = got ? delete_keys(fd, keys, size, (__u32)got) : 0;
		n += deleted;
		if (deleted == 0)
			break;
	}
	free(keys);
	return n;
}

int bpf_util_zero_percpu(const struct bpf_map *map, uint32_t n)
{
	int fd = bpf_map__fd(map);
	int ncpus = libbpf_num_possible_cpus();
	__u64 *zeros;
	__u32 i;
	int err = 0;

	if (ncpus < 0)
		return ncpus;
	zeros = calloc(ncpus, sizeof(*zeros));
	if (!zeros)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++)
		if (bpf_map_update_elem(fd, &i, zeros, BPF_ANY))
			err = -errno;
	free(zeros);
	return err;
}

/* The Python walk of an object (bpf/python.bpf.h); procs NULL: none. */
struct collector_py {
	const struct bpf_map *procs, *stacks, *stats;
	struct collector_python_knobs knobs;
	bool fsbase_known;
};

struct collector {
	struct ring_buffer *rb;
	struct bpf_link *exec_link; /* collector_exec: re-announces a process that execs */
	struct bpf_link *exit_link; /* collector_exit: and a pid used again after an exit */
	struct unwinder *uw;	    /* loads the unwind tables of the processes seen */
	const struct bpf_map *target_tgids;
	const struct bpf_map *stats;
	struct bpf_object *obj;
	struct collector_py py;
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

	/* Not this process's own: building the tables of the profiler's binary (of an ASan build
	 * above all) would hold up the tables of the processes it profiles, first seen after it. */
	if (c->fp_user_stacks || tgid == (uint32_t)getpid())
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

/* Attaches program @name of @obj (bpf/collector.bpf.h) to *@link here, whether or not the
 * owner attaches its skeleton afterwards (the on-CPU sampler attaches perf events only), and
 * tells the skeleton's attach to leave it. */
static int attach_prog(struct bpf_object *obj, const char *name, struct bpf_link **link)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);
	int err;

	if (!prog)
		return pr_err_errno(-ENOENT, "BPF object %s has no %s", bpf_object__name(obj),
				    name);
	bpf_program__set_autoattach(prog, false);
	*link = bpf_program__attach(prog);
	if (!*link) {
		err = -errno;
		*link = NULL;
		return pr_err_errno(err, "attaching %s", name);
	}
	return 0;
}

/* collector_exec and collector_exit: a process that execs or exits is announced again. */
static int attach_exec(struct collector *c, struct bpf_object *obj)
{
	int err = attach_prog(obj, "collector_exec", &c->exec_link);

	return err ? err : attach_prog(obj, "collector_exit", &c->exit_link);
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
	c->obj = obj;
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
	err = attach_exec(c, obj);
	if (err)
		goto err_free;
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
	bpf_link__destroy(c->exec_link);
	bpf_link__destroy(c->exit_link);
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

int collector__python(struct collector *c, const struct collector_python_knobs *knobs)
{
	struct bpf_map *procs = bpf_object__find_map_by_name(c->obj, "python_procs");
	struct bpf_map *stacks = bpf_object__find_map_by_name(c->obj, "python_stacks");
	struct bpf_map *stats = bpf_object__find_map_by_name(c->obj, "py_stats");

	if (!procs || !stacks || !stats || !knobs->enabled || !knobs->fsbase_off)
		return -ENOENT;
	c->py.procs = procs;
	c->py.stacks = stacks;
	c->py.stats = stats;
	c->py.knobs = *knobs;
	return 0;
}

/* The byte offset of member @name of struct/union @type_id; @type_id becomes its type. */
static int btf_member(const struct btf *btf, __u32 *type_id, const char *name, __u64 *off)
{
	const struct btf_type *t = btf__type_by_id(btf, *type_id);
	const struct btf_member *m;
	__u16 i;

	if (!t || !btf_is_composite(t))
		return -ENOENT;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, name)) {
			*off += btf_member_bit_offset(t, i) / 8;
			*type_id = m->type;
			return 0;
		}
	}
	return -ENOENT;
}

/* offsetof(struct task_struct, thread.fsbase) (x86-64), from the kernel's BTF. */
static int fsbase_offset(__u64 *out)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	__u64 off = 0;
	__s32 id;
	__u32 type;
	int err;

	if (!vmlinux)
		return -ENOENT;
	id = btf__find_by_name_kind(vmlinux, "task_struct", BTF_KIND_STRUCT);
	err = id > 0 ? 0 : -ENOTSUP;
	type = (__u32)id;
	if (!err)
		err = btf_member(vmlinux, &type, "thread", &off);
	if (!err)
		err = btf_member(vmlinux, &type, "fsbase", &off);
	btf__free(vmlinux);
	if (err)
		return -ENOTSUP;
	*out = off;
	return 0;
}

int collector__add_jvm(struct collector *c, uint32_t tgid, const struct uw_jvm *jvm)
{
	struct bpf_map *map = bpf_object__find_map_by_name(c->obj, "uw_jvms");
	int err;

	if (!map)
		return -ENOTSUP;
	err = bpf_map__update_elem(map, &tgid, sizeof(tgid), jvm, sizeof(*jvm), BPF_ANY);
	return err == -ENOSPC ? -E2BIG : err;
}

int collector__add_python(struct collector *c, uint32_t tgid, const struct py_proc *proc)
{
	__u64 off;
	int err;

	if (!c->py.procs)
		return -ENOTSUP;
	if (!c->py.fsbase_known) {
		err = fsbase_offset(&off);
		if (err)
			return pr_warn_errno(err,
					     "no task_struct.thread.fsbase in the kernel's BTF");
		*c->py.knobs.fsbase_off = off;
		c->py.fsbase_known = true;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->py.procs), &tgid, proc, BPF_ANY)) {
		err = -errno;
		return err == -E2BIG ? err : pr_err_errno(err, "adding python tgid %u", tgid);
	}
	/* last: the walk starts once its offsets are in place */
	*c->py.knobs.enabled = 1;
	return 0;
}

size_t collector__python_stack(struct collector *c, uint64_t id, struct sampler_py_frame *frames,
			       uint32_t *flags)
{
	struct py_stack st;
	__u64 key = id;
	__u32 i;

	*flags = 0;
	if (!id || !c->py.stacks || bpf_map_lookup_elem(bpf_map__fd(c->py.stacks), &key, &st))
		return 0;
	for (i = 0; i < st.nframes && i < PY_MAX_FRAMES; i++) {
		frames[i].code = st.frames[i].code;
		frames[i].instr = st.frames[i].instr;
		frames[i].entry = (st.entry[i / 64] >> (i % 64)) & 1;
	}
	*flags = st.flags;
	return i;
}

size_t collector__python_clear(struct collector *c)
{
	return c->py.stacks ? bpf_util_clear_map(c->py.stacks) : 0;
}

/* Zeroes the counters of the map @name of @obj, if it has one; its max_entries counters. */
static int zero_named(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_util_zero_percpu(map, bpf_map__max_entries(map)) : 0;
}

int collector__clear(struct collector *c, uint32_t nstats)
{
	struct bpf_map *stacks = bpf_object__find_map_by_name(c->obj, "uw_stacks");
	int err;

	if (stacks)
		bpf_util_clear_map(stacks);
	collector__python_clear(c);
	err = bpf_util_zero_percpu(c->stats, nstats);
	if (!err)
		err = zero_named(c->obj, "uw_stats");
	if (!err)
		err = zero_named(c->obj, "py_stats");
	return err;
}

/* Deletes every entry of the map @name of @obj, if it has one. */
static void clear_named(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (map)
		bpf_util_clear_map(map);
}

int collector__reset(struct collector *c, const struct collector_opts *opts, uint32_t nstats)
{
	size_t i;
	int err;

	/* first sightings of the last capture still in the ring buffer: not this one's */
	c->on_new_task = NULL;
	ring_buffer__consume(c->rb);
	c->on_new_task = opts->on_new_task;
	c->ctx = opts->ctx;
	/* what the processes' first sightings were for is the last capture's: announced again */
	clear_named(c->obj, "seen");
	bpf_util_clear_map(c->target_tgids);
	/* walked again as this capture finds them */
	clear_named(c->obj, "python_procs");
	clear_named(c->obj, "uw_jvms");
	if (c->uw)
		unwinder__sweep(c->uw);
	err = collector__clear(c, nstats);
	for (i = 0; !err && i < opts->ntgids; i++)
		err = collector__add_tgid(c, opts->tgids[i]);
	return err;
}

/* Deletes the entries of the tgid-keyed map @name whose process exited. Returns how many. */
static int sweep_tgids(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);
	__u32 key, next, gone[256];
	int fd, n = 0, i;
	void *prev = NULL;

	if (!map || bpf_map__key_size(map) != sizeof(key))
		return 0;
	fd = bpf_map__fd(map);
	/* deleting while walking restarts the walk: collect a batch first */
	while (n < (int)ARRAY_SIZE(gone) && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!proc_exists(NULL, key))
			gone[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return n;
}

int collector__sweep(struct collector *c)
{
	int n = c->uw ? unwinder__sweep(c->uw) : 0;

	sweep_tgids(c->obj, "python_procs");
	sweep_tgids(c->obj, "uw_jvms");
	return n;
}

uint64_t collector__python_lost(struct collector *c)
{
	uint64_t sums[PY_STAT_MAX];

	if (!c->py.stats || bpf_util_sum_percpu(c->py.stats, sums, PY_STAT_MAX))
		return 0;
	return sums[PY_STAT_DROP_STACKS];
}
