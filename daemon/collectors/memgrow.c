// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/memgrow.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/memgrow.h"
#include "bpf/python.h"
#include "base/fileio.h"
#include "daemon/collectors/collector.h"
#include "base/log.h"
#include "memgrow.skel.h"
#include "symbols/unwinder.h"

_Static_assert(sizeof(struct mg_key) == 40, "mg_key layout is shared with BPF");
_Static_assert(sizeof(struct mg_value) == 32, "mg_value layout is shared with BPF");
_Static_assert(sizeof(struct mg_call) == 32, "mg_call layout is shared with BPF");
_Static_assert(sizeof(struct mg_mapping_key) == 16, "mg_mapping_key layout is shared with BPF");
_Static_assert(sizeof(struct mg_mapping) == 32, "mg_mapping layout is shared with BPF");
_Static_assert(COLLECTOR_NEW_TASK_LAYOUT(struct mg_new_task),
	       "mg_new_task is the event collector__poll() reads");
_Static_assert(MG_MAX_STACK_DEPTH == UW_MAX_DEPTH, "user stacks come from the unwinder");
_Static_assert(MEMGROW_FAULT == MG_KIND_FAULT && MEMGROW_COW == MG_KIND_COW &&
		       MEMGROW_MAP == MG_KIND_MAP && MEMGROW_UNMAP == MG_KIND_UNMAP,
	       "memgrow_kind mirrors MG_KIND_*");

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

struct memgrow {
	struct memgrow_bpf *skel;
	struct collector *col; /* filter set, unwinder, first sightings, stats */
	uint64_t page_size;
	bool thp_always;
	bool numa_balancing;
};

static bool file_has(const char *path, const char *needle)
{
	char *buf;
	bool has;

	if (read_file_bounded(AT_FDCWD, path, 4096, &buf, NULL))
		return false;
	has = strstr(buf, needle) != NULL;
	free(buf);
	return has;
}

/* THP (or a multi-size THP size, 6.8+) set to "always" lets one anonymous fault map more than a
 * base page, which a fault count weighted by the page size cannot see. */
static bool thp_always(void)
{
	char path[512];
	struct dirent *de;
	bool always;
	DIR *d;

	always = file_has(THP_DIR "/enabled", "[always]");
	d = opendir(THP_DIR);
	if (!d)
		return always;
	while (!always && (de = readdir(d))) {
		if (strncmp(de->d_name, "hugepages-", 10))
			continue;
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", de->d_name);
		always = file_has(path, "[always]");
	}
	closedir(d);
	return always;
}

static bool numa_balancing(void)
{
	char *buf;
	bool on;

	if (read_file_bounded(AT_FDCWD, "/proc/sys/kernel/numa_balancing", 64, &buf, NULL))
		return false;
	on = buf[0] && buf[0] != '0';
	free(buf);
	return on;
}

/*
 * The program break of @tgid: the end of its [heap] mapping (the kernel keeps it at
 * PAGE_ALIGN(brk), and the BPF side compares page-aligned breaks), or start_brk (field 47 of
 * /proc/PID/stat) while it has no heap yet. Returns 0, -ESRCH if the process is gone, -ENOENT if
 * it has no break (a kernel thread), -EINVAL on a parse failure.
 */
static int read_brk(uint32_t tgid, uint64_t *out)
{
	char path[64], *buf, *line, *p;
	unsigned long long lo, hi;
	int err, field;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	err = read_file_bounded(AT_FDCWD, path, 64 << 20, &buf, NULL);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	for (line = buf; line && *line; line = p ? p + 1 : NULL) {
		p = strchr(line, '\n');
		if (p)
			*p = '\0';
		if (strstr(line, " [heap]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			free(buf);
			*out = hi;
			return 0;
		}
	}
	free(buf);

	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	err = read_file_bounded(AT_FDCWD, path, 4096, &buf, NULL);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* fields after the command name start at field 3 */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 47; field++)
		p = strchr(p + 1, ' ');
	err = -EINVAL;
	if (p && sscanf(p + 1, "%llu", &lo) == 1) {
		err = lo ? 0 : -ENOENT;
		*out = lo;
	}
	free(buf);
	return err;
}

/* Seeds @tgid's break unless brk() already taught it. Best effort: a missed seed only means the
 * process's first brk move is counted in brk_unknown. */
static void seed_brk(struct memgrow *m, uint32_t tgid)
{
	uint64_t brk;
	int err;

	err = read_brk(tgid, &brk);
	if (err) {
		pr_debug_errno(err, "reading the program break of %u", tgid);
		return;
	}
	if (bpf_map_update_elem(bpf_map__fd(m->skel->maps.brks), &tgid, &brk, BPF_NOEXIST) &&
	    errno != EEXIST)
		pr_debug_errno(-errno, "seeding the program break of %u", tgid);
}

int memgrow__new(const struct memgrow_opts *opts, struct memgrow **out)
{
	struct memgrow_opts defaults = {};
	struct collector_python_knobs knobs;
	struct collector_opts co = {};
	struct memgrow *m;
	long page;
	size_t i;
	int err;

	if (!opts)
		opts = &defaults;
	bpf_util_route_libbpf_log();
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	page = sysconf(_SC_PAGESIZE);
	m->page_size = page > 0 ? (uint64_t)page : 4096;
	m->thp_always = thp_always();
	m->numa_balancing = numa_balancing();
	if (m->thp_always)
		pr_warn("transparent huge pages are \"always\": a fault may map more than a page; "
			"memory-growth fault bytes are a lower bound");
	if (m->numa_balancing)
		pr_warn("NUMA balancing is on: its hinting faults count as first touches; "
			"memory-growth fault bytes are an upper bound");

	err = bpf_util_ensure_tracefs();
	if (err)
		goto err_free;
	m->skel = memgrow_bpf__open();
	if (!m->skel) {
		err = -errno;
		pr_err_errno(err, "opening the BPF memory-growth collector");
		goto err_free;
	}
	m->skel->bss->filter_tgids = opts->filter_tgids || opts->ntgids > 0;
	m->skel->rodata->kernel_stacks = opts->kernel_stacks;
	m->skel->rodata->page_size = m->page_size;
	if (opts->stack_entries) {
		bpf_map__set_max_entries(m->skel->maps.stacks, opts->stack_entries);
		bpf_map__set_max_entries(m->skel->maps.uw_stacks, opts->stack_entries);
	}
	if (opts->count_entries)
		bpf_map__set_max_entries(m->skel->maps.counts, opts->count_entries);
	if (opts->mapping_entries)
		bpf_map__set_max_entries(m->skel->maps.mappings, opts->mapping_entries);

	err = memgrow_bpf__load(m->skel);
	if (err) {
		pr_err_errno(err, "loading the BPF memory-growth collector");
		goto err_free;
	}
	co.tgids = opts->tgids;
	co.ntgids = opts->ntgids;
	co.on_new_task = opts->on_new_task;
	co.ctx = opts->ctx;
	err = collector__new(m->skel->obj, &co, &m->col);
	if (err)
		goto err_free;
	knobs.enabled = &m->skel->bss->py_enabled;
	knobs.fsbase_off = &m->skel->bss->py_fsbase_off;
	err = collector__python(m->col, &knobs);
	if (err)
		goto err_free;
	for (i = 0; i < opts->ntgids; i++)
		seed_brk(m, opts->tgids[i]);
	err = memgrow_bpf__attach(m->skel);
	if (err) {
		pr_err_errno(err, "attaching the memory-growth tracepoints");
		goto err_free;
	}
	*out = m;
	return 0;

err_free:
	memgrow__free(m);
	return err;
}

void memgrow__free(struct memgrow *m)
{
	if (!m)
		return;
	collector__free(m->col);
	memgrow_bpf__destroy(m->skel);
	free(m);
}

int memgrow__poll(struct memgrow *m, int timeout_ms)
{
	return collector__poll(m->col, timeout_ms);
}

int memgrow__add_tgid(struct memgrow *m, uint32_t tgid)
{
	int err;

	err = collector__add_tgid(m->col, tgid);
	if (err)
		return err;
	seed_brk(m, tgid);
	return 0;
}

int memgrow__add_jvm(struct memgrow *m, uint32_t tgid, const struct uw_jvm *jvm)
{
	return collector__add_jvm(m->col, tgid, jvm);
}

int memgrow__add_python(struct memgrow *m, uint32_t tgid, const struct py_proc *proc)
{
	return collector__add_python(m->col, tgid, proc);
}

int memgrow__stop(struct memgrow *m)
{
	memgrow_bpf__detach(m->skel);
	return collector__consume(m->col);
}

int memgrow__drain(struct memgrow *m, memgrow_sample_fn_t fn, void *ctx)
{
	uint64_t ustack[MG_MAX_STACK_DEPTH], kstack[MG_MAX_STACK_DEPTH];
	struct sampler_py_frame pyframes[PY_MAX_FRAMES];
	struct unwinder *uw = collector__unwinder(m->col);
	int counts_fd = bpf_map__fd(m->skel->maps.counts);
	struct mg_key key, next, *prev = NULL;
	struct memgrow_sample smp;
	char comm[MG_COMM_LEN + 1];
	struct mg_value val;
	int err;

	while (bpf_map_get_next_key(counts_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(counts_fd, &key, &val) || key.kind >= MG_KIND_MAX)
			continue;
		memcpy(comm, val.comm, MG_COMM_LEN);
		comm[MG_COMM_LEN] = '\0';
		memset(&smp, 0, sizeof(smp));
		smp.tgid = key.tgid;
		smp.tid = key.tid;
		smp.cgroup_id = key.cgroup_id;
		smp.comm = comm;
		smp.kind = (enum memgrow_kind)key.kind;
		smp.bytes = val.bytes;
		smp.count = val.count;
		smp.ustack_err = unwinder__read_stack(uw, key.user_stack_id, ustack,
						      MG_MAX_STACK_DEPTH, &smp.nustack);
		bpf_util_read_stack(m->skel->maps.stacks, key.kern_stack_id, kstack,
				    MG_MAX_STACK_DEPTH, &smp.nkstack);
		smp.ustack = ustack;
		smp.kstack = kstack;
		smp.npyframes = collector__python_stack(m->col, key.py_stack, pyframes,
							&smp.py_flags);
		smp.pyframes = smp.npyframes ? pyframes : NULL;
		err = fn(ctx, &smp);
		if (err < 0)
			return err;
	}
	collector__python_clear(m->col);
	return 0;
}

int memgrow__stats(struct memgrow *m, struct memgrow_stats *out)
{
	uint64_t sums[MG_STAT_MAX];
	int err;

	err = collector__stats(m->col, sums, MG_STAT_MAX);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->faults = sums[MG_STAT_FAULTS];
	out->faults_kernel = sums[MG_STAT_FAULTS_KERNEL];
	out->faults_ignored = sums[MG_STAT_FAULTS_IGNORED];
	out->filtered = sums[MG_STAT_FILTERED];
	out->lost_counts = sums[MG_STAT_DROP_COUNTS];
	out->lost_stacks = sums[MG_STAT_DROP_STACKS];
	out->lost_threads = sums[MG_STAT_DROP_THREADS];
	out->lost_mappings = sums[MG_STAT_DROP_MAPPINGS];
	out->brk_unknown = sums[MG_STAT_BRK_UNKNOWN];
	out->unmap_unknown = sums[MG_STAT_UNMAP_UNKNOWN];
	out->lost_python = collector__python_lost(m->col);
	out->page_size = m->page_size;
	out->thp_always = m->thp_always;
	out->numa_balancing = m->numa_balancing;
	return 0;
}

int memgrow__unwind_stats(struct memgrow *m, struct unwinder_stats *out)
{
	return unwinder__stats(collector__unwinder(m->col), out);
}
