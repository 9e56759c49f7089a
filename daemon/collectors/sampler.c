// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/sampler.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/python.h"
#include "bpf/sampler.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "daemon/collectors/collector.h"
#include "base/log.h"
#include "sampler.skel.h"
#include "symbols/unwinder.h"

_Static_assert(sizeof(struct sampler_key) == 40, "sampler_key layout is shared with BPF");
_Static_assert(sizeof(struct py_proc) == 64, "py_proc layout is shared with BPF");
_Static_assert(sizeof(struct py_frame) == 16, "py_frame layout is shared with BPF");
_Static_assert(sizeof(struct py_stack) == 24 + 16 * PY_MAX_FRAMES,
	       "py_stack layout is shared with BPF");
_Static_assert(sizeof(struct sampler_value) == 24, "sampler_value layout is shared with BPF");
_Static_assert(COLLECTOR_NEW_TASK_LAYOUT(struct sampler_new_task),
	       "sampler_new_task is the event collector__poll() reads");
_Static_assert(sizeof(struct sampler_off_key) == 40, "sampler_off_key layout is shared with BPF");
_Static_assert(sizeof(struct sampler_off_value) == 32,
	       "sampler_off_value layout is shared with BPF");
_Static_assert(sizeof(struct sampler_off_start) == 64,
	       "sampler_off_start layout is shared with BPF");
_Static_assert(SAMPLER_MAX_STACK_DEPTH == UW_MAX_DEPTH, "user stacks come from the unwinder");

struct sampler {
	struct sampler_bpf *skel;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	struct collector *col; /* tgid filter, unwinder, first sightings, stats */
	bool offcpu_btf;
	bool fp_user_stacks;
	bool attached;	    /* the perf events are (sampler__stop(), sampler__start()) */
	bool offcpu;	    /* this capture records off-CPU intervals */
	bool offcpu_loaded; /* the sched_switch programs are loaded */
	unsigned int freq_hz;
	struct sampler_py_frame pyframes[PY_MAX_FRAMES]; /* drain_map()'s, for one sample */
};

/*
 * True when this kernel can load a tp_btf program on sched_switch (as libbpf-tools' offcputime
 * probes it): load a two-instruction program against the tracepoint's BTF id.
 */
static bool probe_tp_btf_sched_switch(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, fd;

	if (!vmlinux)
		return false;
	id = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(vmlinux);
	if (id <= 0)
		return false;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The cgroup filter set (the tgid one is the collector's). */
static int fill_cgroups(struct sampler *s, const struct sampler_opts *opts)
{
	__u8 one = 1;
	size_t i;
	int fd, err;

	fd = bpf_map__fd(s->skel->maps.target_cgroups);
	for (i = 0; i < opts->ncgroup_ids; i++) {
		__u64 id = opts->cgroup_ids[i];

		if (bpf_map_update_elem(fd, &id, &one, BPF_ANY)) {
			err = -errno;
			return pr_err_errno(err, "adding cgroup %llu to the filter",
					    (unsigned long long)id);
		}
	}
	return 0;
}

/* Parses a CPU list ("0-3,5\n") into a mask of *n entries (highest CPU + 1). */
static int parse_cpu_list(const char *s, bool **mask, int *n)
{
	bool *m = NULL, *tmp;
	int cap = 0, lo, hi, c;
	char *end;

	*n = 0;
	while (*s && *s != '\n') {
		lo = (int)strtol(s, &end, 10);
		if (end == s || lo < 0 || lo > 65535)
			goto err_inval;
		hi = lo;
		s = end;
		if (*s == '-') {
			hi = (int)strtol(s + 1, &end, 10);
			if (end == s + 1 || hi < lo || hi > 65535)
				goto err_inval;
			s = end;
		}
		if (hi + 1 > cap) {
			tmp = realloc(m, (hi + 1) * sizeof(*m));
			if (!tmp) {
				free(m);
				return -ENOMEM;
			}
			memset(tmp + cap, 0, (hi + 1 - cap) * sizeof(*m));
			m = tmp;
			cap = hi + 1;
		}
		for (c = lo; c <= hi; c++)
			m[c] = true;
		if (*s == ',')
			s++;
	}
	if (!cap)
		goto err_inval;
	*mask = m;
	*n = cap;
	return 0;
err_inval:
	free(m);
	return -EINVAL;
}

static int online_cpus(bool **mask, int *n)
{
	char *buf;
	int err;

	err = read_file_bounded(AT_FDCWD, "/sys/devices/system/cpu/online", 4096, &buf, NULL);
	if (err)
		return err;
	err = parse_cpu_list(buf, mask, n);
	free(buf);
	return err;
}

static int attach_cpus(struct sampler *s, unsigned int freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = freq,
		.freq = 1,
	};
	bool *online = NULL;
	int ncpus, cpu, fd, err, attached = 0;

	err = online_cpus(&online, &ncpus);
	if (err)
		return pr_err_errno(err, "reading the online CPUs");
	/* again (sampler__start()): the CPUs online now, in arrays of the new size */
	free(s->links);
	free(s->pfds);
	s->ncpus = 0;
	s->links = calloc(ncpus, sizeof(*s->links));
	s->pfds = malloc(ncpus * sizeof(*s->pfds));
	if (!s->links || !s->pfds) {
		err = -ENOMEM;
		goto out;
	}
	s->ncpus = ncpus;
	for (cpu = 0; cpu < ncpus; cpu++)
		s->pfds[cpu] = -1;
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (!online[cpu])
			continue;
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			pr_err_errno(err, "perf_event_open(cpu-clock, cpu=%d)", cpu);
			goto out;
		}
		s->pfds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_cpu_sample, fd);
		if (!s->links[cpu]) {
			err = -errno;
			s->links[cpu] = NULL;
			pr_err_errno(err, "attaching the sampler to cpu %d", cpu);
			goto out;
		}
		attached++;
	}
	err = attached ? 0 : -ENODEV;
out:
	free(online);
	return err;
}

static int fill_python(struct sampler *s, const struct sampler_opts *opts)
{
	size_t i;
	int err;

	for (i = 0; i < opts->npy; i++) {
		err = sampler__add_python(s, opts->py_tgids[i], &opts->py_procs[i]);
		if (err)
			return err;
	}
	return 0;
}

/* Off-CPU: tp_btf with task storage where the kernel has it, else raw_tp; before the load. */
static void choose_offcpu(struct sampler *s, bool offcpu)
{
	if (offcpu)
		s->offcpu_btf = probe_tp_btf_sched_switch();
	bpf_program__set_autoload(s->skel->progs.on_switch_btf, offcpu && s->offcpu_btf);
	bpf_program__set_autoload(s->skel->progs.on_switch_raw, offcpu && !s->offcpu_btf);
	if (!offcpu) {
		bpf_map__set_max_entries(s->skel->maps.offcpu, 1);
		bpf_map__set_max_entries(s->skel->maps.off_start_ptr, 1);
	} else if (s->offcpu_btf) {
		bpf_map__set_max_entries(s->skel->maps.off_start_ptr, 1);
	}
}

int sampler__new(const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler_opts defaults = {};
	struct collector_python_knobs knobs;
	struct collector_opts co = {};
	struct sampler *s;
	int err;

	if (!opts)
		opts = &defaults;
	bpf_util_route_libbpf_log();
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		pr_err_errno(err, "opening the BPF sampler");
		goto err_free;
	}
	s->skel->bss->filter_tgids = opts->filter_tgids || opts->ntgids > 0;
	s->skel->rodata->self_tgid = (__u32)getpid();
	s->skel->rodata->filter_cgroups = opts->ncgroup_ids > 0;
	s->skel->rodata->fp_user_stacks = opts->fp_user_stacks;
	s->fp_user_stacks = opts->fp_user_stacks;
	if (opts->stack_entries) {
		bpf_map__set_max_entries(s->skel->maps.stacks, opts->stack_entries);
		bpf_map__set_max_entries(s->skel->maps.uw_stacks, opts->stack_entries);
	}
	if (opts->count_entries)
		bpf_map__set_max_entries(s->skel->maps.counts, opts->count_entries);
	/* loaded with off-CPU programs, a sampler kept loaded serves cpu and wall alike: they are
	 * attached only for a capture that asks */
	choose_offcpu(s, opts->offcpu);
	s->offcpu = opts->offcpu;
	s->offcpu_loaded = opts->offcpu;

	err = sampler_bpf__load(s->skel);
	if (err) {
		pr_err_errno(err, "loading the BPF sampler");
		goto err_free;
	}
	co.tgids = opts->tgids;
	co.ntgids = opts->ntgids;
	co.fp_user_stacks = opts->fp_user_stacks;
	co.on_new_task = opts->on_new_task;
	co.ctx = opts->ctx;
	err = collector__new(s->skel->obj, &co, &s->col);
	if (err)
		goto err_free;
	knobs.enabled = &s->skel->bss->py_enabled;
	knobs.fsbase_off = &s->skel->bss->py_fsbase_off;
	err = collector__python(s->col, &knobs);
	if (err)
		goto err_free;
	err = fill_cgroups(s, opts);
	if (err)
		goto err_free;
	err = fill_python(s, opts);
	if (err)
		goto err_free;
	s->freq_hz = opts->freq_hz ? opts->freq_hz : 99;
	err = opts->preload ? 0 : sampler__start(s);
	if (err)
		goto err_free;
	*out = s;
	return 0;

err_free:
	sampler__free(s);
	return err;
}

static void detach(struct sampler *s)
{
	int cpu;

	if (s->skel)
		sampler_bpf__detach(s->skel);
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		if (s->links && s->links[cpu]) {
			bpf_link__destroy(s->links[cpu]);
			s->links[cpu] = NULL;
		}
		if (s->pfds && s->pfds[cpu] >= 0) {
			close(s->pfds[cpu]);
			s->pfds[cpu] = -1;
		}
	}
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	detach(s);
	free(s->links);
	free(s->pfds);
	collector__free(s->col);
	sampler_bpf__destroy(s->skel);
	free(s);
}

int sampler__poll(struct sampler *s, int timeout_ms)
{
	return collector__poll(s->col, timeout_ms);
}

int sampler__add_tgid(struct sampler *s, uint32_t tgid)
{
	return collector__add_tgid(s->col, tgid);
}

int sampler__add_jvm(struct sampler *s, uint32_t tgid, const struct uw_jvm *jvm)
{
	return collector__add_jvm(s->col, tgid, jvm);
}

int sampler__add_timed(struct sampler *s, uint32_t tgid)
{
	__u8 one = 1;
	int err;

	err = bpf_map__update_elem(s->skel->maps.timed_tgids, &tgid, sizeof(tgid), &one,
				   sizeof(one), BPF_ANY);
	return err < 0 ? err : 0;
}

int sampler__add_python(struct sampler *s, uint32_t tgid, const struct py_proc *proc)
{
	/* the walk needs bpf_loop, as the DWARF unwinder does */
	if (s->fp_user_stacks)
		return -ENOTSUP;
	return collector__add_python(s->col, tgid, proc);
}

int sampler__stop(struct sampler *s)
{
	detach(s);
	s->attached = false;
	return collector__consume(s->col);
}

int sampler__start(struct sampler *s)
{
	int err;

	if (s->attached)
		return 0;
	err = attach_cpus(s, s->freq_hz);
	if (err) {
		detach(s);
		return err;
	}
	if (s->offcpu) {
		/* the records of an earlier capture left in tasks' storage are not this one's */
		s->skel->bss->offcpu_since = clock_mono_ns();
		err = sampler_bpf__attach(s->skel);
		if (err) {
			detach(s);
			return pr_err_errno(err, "attaching the off-CPU programs (sched_switch)");
		}
	}
	s->attached = true;
	return 0;
}

int sampler__begin(struct sampler *s, const struct sampler_opts *opts)
{
	struct collector_opts co = {
		.tgids = opts->tgids,
		.ntgids = opts->ntgids,
		.on_new_task = opts->on_new_task,
		.ctx = opts->ctx,
	};
	int err;

	if (s->attached)
		return -EBUSY;
	if (opts->offcpu && !s->offcpu_loaded)
		return -EOPNOTSUPP;
	bpf_util_clear_map(s->skel->maps.counts);
	bpf_util_clear_map(s->skel->maps.offcpu);
	bpf_util_clear_map(s->skel->maps.stacks);
	bpf_util_clear_map(s->skel->maps.timed_tgids);
	s->skel->bss->filter_tgids = opts->filter_tgids || opts->ntgids > 0;
	err = collector__reset(s->col, &co, SAMPLER_STAT_MAX);
	if (!err)
		err = fill_python(s, opts);
	if (err)
		return err;
	s->offcpu = opts->offcpu;
	s->freq_hz = opts->freq_hz ? opts->freq_hz : 99;
	return sampler__start(s);
}

bool sampler__offcpu_loaded(const struct sampler *s)
{
	return s->offcpu_loaded;
}

int sampler__clear(struct sampler *s)
{
	if (s->attached)
		return -EBUSY;
	bpf_util_clear_map(s->skel->maps.counts);
	bpf_util_clear_map(s->skel->maps.offcpu);
	bpf_util_clear_map(s->skel->maps.stacks);
	return collector__clear(s->col, SAMPLER_STAT_MAX);
}

int sampler__sweep(struct sampler *s)
{
	return collector__sweep(s->col);
}

/*
 * Completes @smp, whose counts the caller set, with the thread name @raw_comm (SAMPLER_COMM_LEN
 * bytes, maybe unterminated) and the stacks @ustack_id and @kstack_id, and hands it to @fn.
 * Returns what @fn returns.
 */
static int emit(struct sampler *s, struct sampler_sample *smp, const char *raw_comm,
		__s32 ustack_id, __s32 kstack_id, sampler_sample_fn_t fn, void *ctx)
{
	uint64_t ustack[SAMPLER_MAX_STACK_DEPTH], kstack[SAMPLER_MAX_STACK_DEPTH];
	char comm[SAMPLER_COMM_LEN + 1];

	memcpy(comm, raw_comm, SAMPLER_COMM_LEN);
	comm[SAMPLER_COMM_LEN] = '\0';
	smp->comm = comm;
	if (s->fp_user_stacks)
		smp->ustack_err = bpf_util_read_stack(s->skel->maps.stacks, ustack_id, ustack,
						      SAMPLER_MAX_STACK_DEPTH, &smp->nustack);
	else
		smp->ustack_err = unwinder__read_stack(collector__unwinder(s->col), ustack_id,
						       ustack, SAMPLER_MAX_STACK_DEPTH,
						       &smp->nustack);
	bpf_util_read_stack(s->skel->maps.stacks, kstack_id, kstack, SAMPLER_MAX_STACK_DEPTH,
			    &smp->nkstack);
	smp->ustack = ustack;
	smp->kstack = kstack;
	return fn(ctx, smp);
}

/* What drain_map() takes from one entry of a count map. */
struct drain_row {
	__s32 ustack_id, kstack_id;
	__u64 py_stack;
	const char *comm; /* SAMPLER_COMM_LEN bytes, maybe unterminated */
};

/* Fills @smp (zeroed) and @row from the @key and @val of an entry of the map drained. */
typedef void (*drain_decode_fn_t)(const void *key, const void *val, struct sampler_sample *smp,
				  struct drain_row *row);

static void decode_oncpu(const void *k, const void *v, struct sampler_sample *smp,
			 struct drain_row *row)
{
	const struct sampler_key *key = k;
	const struct sampler_value *val = v;

	smp->tgid = key->tgid;
	smp->tid = key->tid;
	smp->cgroup_id = key->cgroup_id;
	smp->count = val->count;
	smp->time_ns = key->time_ns;
	row->ustack_id = key->user_stack_id;
	row->kstack_id = key->kern_stack_id;
	row->py_stack = key->py_stack;
	row->comm = val->comm;
}

static void decode_offcpu(const void *k, const void *v, struct sampler_sample *smp,
			  struct drain_row *row)
{
	const struct sampler_off_key *key = k;
	const struct sampler_off_value *val = v;

	smp->tgid = key->tgid;
	smp->tid = key->tid;
	smp->cgroup_id = key->cgroup_id;
	smp->count = val->count;
	smp->offcpu = (int)key->state;
	smp->offcpu_ns = val->ns;
	row->ustack_id = key->user_stack_id;
	row->kstack_id = key->kern_stack_id;
	row->py_stack = key->py_stack;
	row->comm = val->comm;
}

/* Calls @fn for every entry of the count map @map (on-CPU or off-CPU, as @decode reads it),
 * with its stacks and Python frames. Returns 0 or the first negative value of @fn. */
static int drain_map(struct sampler *s, const struct bpf_map *map, drain_decode_fn_t decode,
		     sampler_sample_fn_t fn, void *ctx)
{
	union {
		struct sampler_key on;
		struct sampler_off_key off;
	} key, next;
	union {
		struct sampler_value on;
		struct sampler_off_value off;
	} val;
	struct sampler_sample smp;
	struct drain_row row;
	int fd = bpf_map__fd(map), err;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		memset(&smp, 0, sizeof(smp));
		decode(&key, &val, &smp, &row);
		smp.npyframes = collector__python_stack(s->col, row.py_stack, s->pyframes,
							&smp.py_flags);
		smp.pyframes = smp.npyframes ? s->pyframes : NULL;
		err = emit(s, &smp, row.comm, row.ustack_id, row.kstack_id, fn, ctx);
		if (err < 0)
			return err;
	}
	return 0;
}

int sampler__drain(struct sampler *s, sampler_sample_fn_t fn, void *ctx)
{
	int err;

	err = drain_map(s, s->skel->maps.counts, decode_oncpu, fn, ctx);
	if (!err)
		err = drain_map(s, s->skel->maps.offcpu, decode_offcpu, fn, ctx);
	if (!err)
		collector__python_clear(s->col);
	return err;
}

int sampler__stats(struct sampler *s, struct sampler_stats *out)
{
	uint64_t sums[SAMPLER_STAT_MAX];
	int err;

	err = collector__stats(s->col, sums, SAMPLER_STAT_MAX);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->samples = sums[SAMPLER_STAT_SAMPLES];
	out->idle = sums[SAMPLER_STAT_IDLE];
	out->lost_counts = sums[SAMPLER_STAT_DROP_COUNTS];
	out->lost_stacks = sums[SAMPLER_STAT_DROP_STACKS];
	out->filtered = sums[SAMPLER_STAT_FILTERED];
	out->lost_offcpu = sums[SAMPLER_STAT_DROP_OFF];
	out->lost_python = collector__python_lost(s->col);
	out->offcpu_btf = s->offcpu_btf;
	out->ncpus = s->ncpus;
	return 0;
}

int sampler__unwind_stats(struct sampler *s, struct unwinder_stats *out)
{
	return unwinder__stats(collector__unwinder(s->col), out);
}
