// SPDX-License-Identifier: Apache-2.0
/*
 * unwind_bench: what the DWARF unwinder costs, against the frame-pointer walk, in the same run
 * (bench/run.sh, unwinder section; docs/benchmarks.md).
 *
 *   unwind_bench tables
 *       the unwind tables of every process on this machine, as a whole-server capture loads
 *       them: processes, distinct files, rows, kernel memory (16 bytes a row in the array
 *       map), CPU to build them. No BPF: the rows go to a private buffer.
 *   unwind_bench walk SECONDS [wall]
 *       the on-CPU sampler (and with `wall` the sched_switch program) on the whole server for
 *       SECONDS with frame-pointer user stacks, then again with the DWARF unwinder: BPF runs
 *       and ns per run (kernel.bpf_stats_enabled through BPF_ENABLE_STATS), the collector's
 *       own CPU (table loading), frames per stack and the walks' outcomes.
 *
 * Run it as root with no capture running (bench/run.sh holds the capture lock around it).
 * Prints markdown tables.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "daemon/collectors/sampler.h"
#include "symbols/unwinder.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* --- tables ------------------------------------------------------------------------------ */

/* Keeps the rows in memory as the kernel would (UW_ROW_STRIDE bytes each), without a map. */
static int bench_write_rows(void *ctx, uint32_t start, const struct unwind_row *rows, uint32_t n,
			    uint32_t capacity)
{
	uint8_t **buf = ctx;
	uint32_t i;

	if (!*buf)
		*buf = calloc(capacity, UW_ROW_STRIDE);
	if (!*buf)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		memcpy(*buf + ((size_t)start + i) * UW_ROW_STRIDE, &rows[i], sizeof(rows[i]));
	return 0;
}

static int bench_set(void *ctx, uint32_t tgid, const struct uw_proc *p)
{
	(void)ctx, (void)tgid, (void)p;
	return 0;
}

static int bench_del(void *ctx, uint32_t tgid)
{
	(void)ctx, (void)tgid;
	return 0;
}

static int tables(void)
{
	static const struct unwinder_ops ops = { bench_write_rows, bench_set, bench_del };
	uint8_t *buf = NULL;
	struct unwinder_opts o = { .rows = UW_MAX_ROWS,
				   .max_table_rows = UW_MAX_ROWS,
				   .max_procs = 65536,
				   .ops = &ops,
				   .ops_ctx = &buf };
	struct unwinder_maps maps = { -1, -1, -1, -1 };
	struct unwinder_stats st;
	struct unwinder *uw;
	struct dirent *de;
	int procs = 0, gone = 0, kthreads = 0, mappings = 0, n, err;
	double t0 = now_s(), c0 = cpu_s();
	DIR *d;

	err = unwinder__new(&maps, &o, &uw);
	if (err)
		return err;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		n = unwinder__add_process(uw, (uint32_t)pid);
		if (n < 0) {
			gone++;
			continue;
		}
		if (!n) {
			kthreads++; /* no executable file mapping: a kernel thread */
			continue;
		}
		procs++;
		mappings += n;
	}
	closedir(d);
	unwinder__stats(uw, &st);
	printf("| processes | executable mappings | distinct files (tables) | rows | kernel memory "
	       "(16 B/row) | built in (CPU) | wall | files without a table |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	printf("| %d (and %d kernel threads, %d gone) | %d | %llu | %llu | %.1f MiB | %.2f s | "
	       "%.2f s | %llu |\n",
	       procs, kthreads, gone, mappings, (unsigned long long)st.tables,
	       (unsigned long long)st.rows_used, st.rows_bytes / 1048576.0, cpu_s() - c0,
	       now_s() - t0, (unsigned long long)st.tables_failed);
	unwinder__free(uw);
	free(buf);
	return 0;
}

/* --- walk -------------------------------------------------------------------------------- */

struct prog_stat {
	const char *name;
	unsigned long long runs, ns;
};

/* run_time_ns/run_cnt of the programs named in @ps created after id @after. */
static void prog_stats(__u32 after, struct prog_stat *ps, int n)
{
	__u32 id = after;
	int fd, i;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			for (i = 0; i < n; i++)
				if (!strcmp(info.name, ps[i].name)) {
					ps[i].runs += info.run_cnt;
					ps[i].ns += info.run_time_ns;
				}
		close(fd);
	}
}

static int walk_one(int secs, int wall, int fp)
{
	struct sampler_opts so = { .offcpu = wall, .fp_user_stacks = fp };
	struct prog_stat ps[2] = { { "on_cpu_sample", 0, 0 }, { "on_switch_btf", 0, 0 } };
	struct unwinder_stats us = {};
	struct sampler_stats ss;
	struct sampler *s;
	__u32 last = 0, id = 0;
	double c0 = cpu_s(), t0, c1;
	int err;

	while (!bpf_prog_get_next_id(id, &id))
		last = id;
	err = sampler__new(&so, &s);
	if (err)
		return err;
	c1 = cpu_s();
	t0 = now_s();
	while (now_s() - t0 < secs)
		sampler__poll(s, 200);
	prog_stats(last, ps, 2);
	sampler__stop(s);
	sampler__stats(s, &ss);
	if (!fp)
		sampler__unwind_stats(s, &us);
	printf("| %s | %s | %llu | %.0f | %llu | %.0f | %.3f | %.3f | %.3f |",
	       fp ? "frame pointers (bpf_get_stackid)" : "DWARF unwinder", wall ? "wall" : "cpu",
	       ps[0].runs, ps[0].runs ? (double)ps[0].ns / ps[0].runs : 0, ps[1].runs,
	       ps[1].runs ? (double)ps[1].ns / ps[1].runs : 0, (ps[0].ns + ps[1].ns) / 1e9, c1 - c0,
	       cpu_s() - c1);
	if (fp)
		printf(" - | - | - |\n");
	else
		printf(" %.1f | %.1f%% | %.1f MiB |\n",
		       us.bpf[UW_STAT_WALKS] ?
			       (double)us.bpf[UW_STAT_FRAMES] / us.bpf[UW_STAT_WALKS] :
			       0,
		       us.bpf[UW_STAT_WALKS] ?
			       100.0 * us.bpf[UW_STAT_COMPLETE] / us.bpf[UW_STAT_WALKS] :
			       0,
		       us.rows_bytes / 1048576.0);
	if (!fp) {
		char text[400];

		unwinder_incomplete_text(&us, text, sizeof(text));
		fprintf(stderr,
			"unwinder (%s): %s; tables %llu, built %llu, shared %llu, failed %llu, "
			"build CPU %.3f s\n",
			wall ? "wall" : "cpu", text[0] ? text : "all complete",
			(unsigned long long)us.tables, (unsigned long long)us.tables_built,
			(unsigned long long)us.tables_shared, (unsigned long long)us.tables_failed,
			us.build_ns / 1e9);
	}
	sampler__free(s);
	return 0;
}

static int walk(int secs, int wall)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME), err;

	if (fd < 0)
		return fd;
	printf("| user stacks | question | sampler runs | ns/run | sched_switch runs | ns/run | BPF "
	       "CPU s | load CPU s | CPU s while sampling (tables) | frames/stack | complete | "
	       "tables |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	err = walk_one(secs, wall, 1);
	if (!err)
		err = walk_one(secs, wall, 0);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	int err = -EINVAL;

	if (argc >= 2 && !strcmp(argv[1], "tables"))
		err = tables();
	else if (argc >= 3 && !strcmp(argv[1], "walk"))
		err = walk(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "wall"));
	else
		fprintf(stderr, "usage: unwind_bench tables | walk SECONDS [wall]\n");
	if (err)
		fprintf(stderr, "unwind_bench: %s\n", strerror(-err));
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
