// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/proc.h"
#include "base/sha256.h"
#include "cgroups/resolver.h"
#include "daemon/capture/capture.h"
#include "runtimes/detect.h"
#include "runtimes/jvm/jvm_asprof.h"
#include "runtimes/jvm/jvm_guard.h"
#include "runtimes/jvm/jvm_jfrctl.h"

/* What the step texts are filled with. */
struct plan_args {
	const char *who; /* "the 3 processes of Service billing" */
	const char *eps; /* the Go endpoints read */
	size_t ngo;
	const char *jvms; /* "process 12 (java)": the JVMs read through their attach mechanism */
	size_t njvm;
	const struct capture_target_info *info;
	const char *nodes; /* "process 12 (node)": the Node.js processes read through V8 */
	size_t nnode;
	enum question q;
	unsigned int hz, secs;
};

typedef void (*plan_text_fn_t)(const struct plan_args *a, char *buf, size_t size);

static const char *plural(unsigned int n)
{
	return n == 1 ? "" : "s";
}

static void go_find_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Find the Go program's net/http/pprof endpoint inside its container, by "
		 "itself: %s (a listening socket of the process, probed from inside its network "
		 "namespace).",
		 a->eps);
}

static void go_heap_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Wait %u second%s, then read the heap profile (memory in use, after a "
		 "garbage collection) from that endpoint. Nothing is restarted and nothing in the "
		 "program changes. Expected overhead: one garbage collection and one heap profile.",
		 a->secs, plural(a->secs));
}

static void go_allocs_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Read the allocation profile from that endpoint now and again after %u "
		 "second%s: the difference is what was allocated during the capture. Nothing is "
		 "restarted and nothing in the program changes. Expected overhead: two allocation "
		 "profiles.",
		 a->secs, plural(a->secs));
}

static void go_goroutines_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "After %u seconds, read every goroutine's stack and state from that "
		 "endpoint (the goroutine dump). Nothing is restarted and nothing in the program "
		 "changes. Expected overhead: one goroutine dump (the program pauses for it).",
		 a->secs);
}

/* The JVM's step of preparing: our file copied into its container. */
static void jvm_place_text(const struct plan_args *a, char *buf, size_t size)
{
	if (a->info->asprof)
		snprintf(buf, size,
			 "Copy async-profiler (%.*f %s, checksum verified: sha256 %.16s) into the "
			 "container's /tmp of %s for the capture, in a new directory of its own, and "
			 "remove it afterwards.",
			 a->info->asprof_size < 100000 ? 0 : 1,
			 a->info->asprof_size < 100000 ? a->info->asprof_size / 1e3 :
							 a->info->asprof_size / 1e6,
			 a->info->asprof_size < 100000 ? "kB" : "MB", a->info->asprof_sha, a->jvms);
	else
		snprintf(buf, size,
			 "Write a recording settings file into the container's /tmp of %s for the "
			 "capture, in a new directory of its own, and remove it afterwards. The "
			 "JVM's own Flight Recorder is used: async-profiler is not installed with "
			 "this profiler.",
			 a->jvms);
}

static const char *jvm_via(const struct plan_args *a)
{
	return a->info->asprof ? "load async-profiler into the JVM" :
				 "start a Flight Recorder recording in the JVM";
}

static void jvm_alloc_text(const struct plan_args *a, char *buf, size_t size)
{
	char rate[64];

	if (a->info->asprof)
		snprintf(rate, sizeof(rate), "one sample per %d KiB allocated",
			 JVM_ASPROF_ALLOC_BYTES >> 10);
	else
		snprintf(rate, sizeof(rate), "at most %d allocation samples a second",
			 JVM_JFR_ALLOC_RATE);
	snprintf(buf, size,
		 "Through the JVM's attach mechanism, %s, recording a sample of the "
		 "allocations with their stacks for %u second%s; then stop it and read what it "
		 "wrote back. Nothing is restarted and nothing in the program changes. Expected "
		 "overhead: %s.",
		 jvm_via(a), a->secs, plural(a->secs), rate);
}

static void jvm_held_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Through the JVM's attach mechanism, %s, which samples objects as they are "
		 "allocated for %u second%s; then run one garbage collection and read back "
		 "which of them are still held, with the stacks that allocated them. Nothing is "
		 "restarted and nothing in the program changes. Expected overhead: sampled "
		 "allocations and one garbage collection.",
		 jvm_via(a), a->secs, plural(a->secs));
}

static void threads_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Take a snapshot of every thread of %s every %d ms for %u seconds "
		 "(state, and where it waits), sample them about %u times a second and time every "
		 "wait off the CPU, using eBPF in the kernel. Nothing is restarted and nothing in "
		 "the processes changes. Expected overhead: %s.",
		 a->who, SOURCE_THREADS_INTERVAL_MS, CAPTURE_THREADS_SECONDS, a->hz,
		 CAPTURE_OVERHEAD_WALL_TEXT);
}

static void locks_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Time every lock wait that sleeps (futex waits, priority-inheritance "
		 "locks) of %s for %u second%s, with the stack that waited, using eBPF in the "
		 "kernel%s%s%s. Nothing is restarted and nothing in the processes changes. Expected "
		 "overhead: %s.",
		 a->who, a->secs, plural(a->secs),
		 a->ngo ? "; and read the Go mutex and block profiles at the start and at the end "
			  "from the net/http/pprof endpoint found inside the container: " :
			  "",
		 a->ngo ? a->eps : "",
		 a->ngo ? " (goroutines waiting on a sync.Mutex park without a futex)" : "",
		 CAPTURE_OVERHEAD_LOCKS_TEXT);
	if (a->njvm) {
		size_t n = strlen(buf);

		snprintf(buf + n, size - n,
			 " For %s, through the JVM's attach mechanism, %s that records its "
			 "monitor and lock waits of %d ms or longer, with the JVM's own names.",
			 a->jvms,
			 a->info->asprof ? "load async-profiler" :
					   "start a Flight Recorder recording",
			 a->info->asprof ? JVM_ASPROF_LOCK_NS / 1000000 :
					   JVM_JFR_LOCK_THRESHOLD_MS);
	}
}

static void growth_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Record where %s touches new memory and maps or releases memory for %u "
		 "second%s, with the stack, using eBPF in the kernel. Nothing is restarted and "
		 "nothing in the processes changes. Expected overhead: %s.",
		 a->who, a->secs, plural(a->secs), CAPTURE_OVERHEAD_MEMORY_TEXT);
}

static void wall_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Sample %s about %u times a second for %u second%s, and time every wait "
		 "off the CPU, using eBPF in the kernel. Nothing is restarted and nothing in the "
		 "processes changes. Expected overhead: %s.",
		 a->who, a->hz, a->secs, plural(a->secs), CAPTURE_OVERHEAD_WALL_TEXT);
}

static void cpu_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Sample %s about %u times a second for %u second%s, using eBPF in the "
		 "kernel. Nothing is restarted and nothing in the processes changes. Expected "
		 "overhead: %s.",
		 a->who, a->hz, a->secs, plural(a->secs), CAPTURE_OVERHEAD_TEXT);
}

/* Node.js processes read through V8's inspector (daemon/capture/node_source.h). */
static void node_open_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Open V8's inspector inside the container of %s for the capture and close it "
		 "again (SIGUSR1, then the DevTools protocol on the container's loopback; an "
		 "inspector it already has open is used and left open). V8 recompiles the "
		 "application's optimised code once at the start, which slows it for a moment.",
		 a->nodes);
}

static void node_heap_text(const struct plan_args *a, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Sample the JavaScript allocations of %s for %u second%s with V8's sampling heap "
		 "profiler (one allocation in every %d KiB on average, with its stack)%s. Nothing is "
		 "restarted and nothing in the program changes. Expected overhead: a few percent "
		 "while it runs%s.",
		 a->nodes, a->secs, plural(a->secs), NODE_SOURCE_HEAP_INTERVAL / 1024,
		 a->q == Q_MEMORY_HELD ?
			 ", then collect garbage once and keep what is still held: what was "
			 "allocated during the capture and is still live at its end" :
			 ", the objects collected since included",
		 a->q == Q_MEMORY_HELD ? ", and one garbage collection" : "");
}

/* cpu, wall: what is done for the Node.js processes, after the sampling text. */
static void node_cpu_text(const struct plan_args *a, char *buf, size_t size)
{
	size_t n = strlen(buf);

	snprintf(buf + n, size - n,
		 " For %s, open V8's inspector inside its container for the capture and close it "
		 "again, and run V8's CPU profiler every %d µs to name the JavaScript functions "
		 "our samples ran in. V8 recompiles the application's optimised code once at the "
		 "start, which slows it for a moment.",
		 a->nodes, NODE_SOURCE_INTERVAL_US);
}

/* The middle of each plan: how the data is gathered (prepare) and gathered (sample). */
static const struct plan_branch {
	const char *prepare; /* a constant text, or NULL: prepare_fn */
	plan_text_fn_t prepare_fn;
	plan_text_fn_t sample_fn;
} go_branches[] = {
	[Q_MEMORY_HELD] = { NULL, go_find_text, go_heap_text },
	[Q_MEMORY_ALLOC] = { NULL, go_find_text, go_allocs_text },
	[Q_THREADS] = { NULL, go_find_text, go_goroutines_text },
}, jvm_branches[] = {
	[Q_MEMORY_HELD] = { NULL, jvm_place_text, jvm_held_text },
	[Q_MEMORY_ALLOC] = { NULL, jvm_place_text, jvm_alloc_text },
}, node_branches[] = {
	[Q_MEMORY_HELD] = { NULL, node_open_text, node_heap_text },
	[Q_MEMORY_ALLOC] = { NULL, node_open_text, node_heap_text },
}, ebpf_branches[] = {
	[Q_CPU] = { "Load the eBPF sampler into the kernel (cpu-clock events on every CPU).", NULL,
		    cpu_text },
	[Q_WALL] = { "Load the eBPF sampler into the kernel (cpu-clock events on every CPU, and "
		     "the scheduler's sched_switch tracepoint).", NULL, wall_text },
	[Q_THREADS] = { "Load the eBPF sampler and the thread snapshot program into the kernel "
			"(cpu-clock events on every CPU, sched_switch, and a task iterator).", NULL,
			threads_text },
	[Q_LOCKS] = { "Load the eBPF lock-wait programs into the kernel (the futex and "
		      "futex_waitv system call tracepoints).", NULL, locks_text },
	[Q_MEMORY_GROWTH] = { "Load the eBPF memory programs into the kernel (the page_fault_user "
			      "tracepoint and the mmap, mremap, brk and munmap system call "
			      "tracepoints).", NULL, growth_text },
};

/* Which branch @o takes: a Go program's own profiles, else eBPF (cpu for the rest). */
static const struct plan_branch *plan_branch(const struct capture_opts *o, size_t ngo,
					     const struct capture_target_info *info)
{
	enum question q = o->question;

	if (ngo &&
	    (q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC || (q == Q_THREADS && info->goroutines)))
		return &go_branches[q];
	if (info && info->njvm && (q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC))
		return &jvm_branches[q];
	if (info && info->nnode && o->target.kind != TARGET_SERVER &&
	    (q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC))
		return &node_branches[q];
	if ((size_t)q < ARRAY_SIZE(ebpf_branches) && ebpf_branches[q].sample_fn)
		return &ebpf_branches[q];
	return &ebpf_branches[Q_CPU];
}

static const char *self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0)
		n = snprintf(buf, size, "%s", "/proc/self/exe");
	buf[n] = '\0';
	return buf;
}

static char self_desc_text[64];

/* "0.9 MB, sha256 3f2a..." of the running binary, read through /proc/self/exe. */
static void self_desc_once(void)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	char hex[2 * SHA256_DIGEST_LEN + 1];
	struct stat st;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || sha256_fd(fd, 256u << 20, digest) < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(self_desc_text, sizeof(self_desc_text), "size and checksum unknown");
		return;
	}
	close(fd);
	snprintf(self_desc_text, sizeof(self_desc_text), "%.1f MB, sha256 %.16s", st.st_size / 1e6,
		 sha256_hex(digest, hex));
}

/* Hashed once per process: /proc/self/exe is the inode we run, which a new file at its path does
 * not change, and hashing 4 MB was most of a continuous window's CPU (docs/benchmarks.md). */
static const char *self_desc(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, self_desc_once);
	return self_desc_text;
}

/* "process 12 (app) on 127.0.0.1:6060", "3 Go programs (process 12 (app) on 127.0.0.1:6060, ...)" */
static const char *go_endpoints(const struct capture_target_info *info, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < info->ngo && len < size; i++)
		len += snprintf(buf + len, size - len, "%sprocess %u (%s) on %s:%u",
				i ? (i + 1 == info->ngo ? " and " : ", ") : "", info->go[i].pid,
				info->go[i].comm, info->go[i].host, info->go[i].port);
	return buf;
}

/* "process 12 (java)", "process 12 (java) and process 13 (java)" */
static const char *jvm_list(const struct capture_target_info *info, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < info->njvm && len < size; i++)
		len += snprintf(buf + len, size - len, "%sprocess %u (%s)",
				i ? (i + 1 == info->njvm ? " and " : ", ") : "", info->jvm[i].pid,
				info->jvm[i].comm);
	return buf;
}

/* "process 12 (node)", "process 12 (node) and process 13 (node)" */
static const char *node_list(const struct capture_target_info *info, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < info->nnode && len < size; i++)
		len += snprintf(buf + len, size - len, "%sprocess %u (%s)",
				i ? (i + 1 == info->nnode ? " and " : ", ") : "", info->node[i].pid,
				info->node[i].comm);
	return buf;
}

/* "every process on this server", "the 3 processes of Service billing" */
static const char *plan_who(const struct capture_opts *o, int nprocs, char *who, size_t size)
{
	char what[TARGET_NAME_MAX + 32];

	if (o->target.kind == TARGET_SERVER)
		snprintf(who, size, "every process on this server");
	else if (o->target.kind == TARGET_PIDS)
		target_describe(&o->target, who, size);
	else if (nprocs == 1)
		snprintf(who, size, "the process of %s",
			 target_describe(&o->target, what, sizeof(what)));
	else if (nprocs > 1)
		snprintf(who, size, "the %d processes of %s", nprocs,
			 target_describe(&o->target, what, sizeof(what)));
	else
		snprintf(who, size, "the processes of %s",
			 target_describe(&o->target, what, sizeof(what)));
	return who;
}

/* The last step: the files, or for the agent its store. */
static void write_text(const struct capture_opts *o, char *buf, size_t size)
{
	char what[TARGET_NAME_MAX + 64];

	if (o->to_store)
		snprintf(buf, size, "Store the profile with the past profiles of %s.",
			 target_describe(&o->target, what, sizeof(what)));
	else
		snprintf(buf, size,
			 "Write profile.pb.gz, profile.collapsed, flamegraph.html and summary.json "
			 "to %s.",
			 o->out_dir);
}

int capture_plan(const struct capture_opts *o, const struct capture_target_info *info,
		 struct capture_step *steps, int max)
{
	char who[TARGET_NAME_MAX + 64], path[512], eps[512] = "", jvms[512] = "", nodes[512] = "";
	struct capture_step all[CAPTURE_PHASE_COUNT];
	size_t ngo = info && o->target.kind != TARGET_SERVER ? info->ngo : 0;
	struct plan_args a = { .who = who,
			       .eps = eps,
			       .ngo = ngo,
			       .jvms = jvms,
			       .njvm = info && o->target.kind != TARGET_SERVER ? info->njvm : 0,
			       .info = info,
			       .nodes = nodes,
			       .nnode = info && o->target.kind != TARGET_SERVER ? info->nnode : 0,
			       .q = o->question,
			       .hz = o->freq_hz ? o->freq_hz : 99,
			       .secs = capture_duration(o) };
	const struct plan_branch *b = plan_branch(o, ngo, info);
	int i, n = 0;

	plan_who(o, info ? info->nprocs : -1, who, sizeof(who));
	if (ngo)
		go_endpoints(info, eps, sizeof(eps));
	if (a.njvm)
		jvm_list(info, jvms, sizeof(jvms));
	if (a.nnode)
		node_list(info, nodes, sizeof(nodes));
	snprintf(all[CAPTURE_PHASE_BINARY].text, sizeof(all[0].text),
		 "Use the SlideOps profiler at %s (%s). It stays there for the next capture.",
		 self_path(path, sizeof(path)), self_desc());
	if (b->prepare)
		snprintf(all[CAPTURE_PHASE_PREPARE].text, sizeof(all[0].text), "%s", b->prepare);
	else
		b->prepare_fn(&a, all[CAPTURE_PHASE_PREPARE].text, sizeof(all[0].text));
	b->sample_fn(&a, all[CAPTURE_PHASE_SAMPLE].text, sizeof(all[0].text));
	if (a.nnode && (o->question == Q_CPU || o->question == Q_WALL))
		node_cpu_text(&a, all[CAPTURE_PHASE_SAMPLE].text, sizeof(all[0].text));
	snprintf(all[CAPTURE_PHASE_READ].text, sizeof(all[0].text),
		 "Read the result back, name each function and group the processes by owner, then "
		 "check the target is still running.");
	write_text(o, all[CAPTURE_PHASE_WRITE].text, sizeof(all[0].text));
	for (i = 0; i < CAPTURE_PHASE_COUNT && n < max; i++) {
		all[i].phase = (enum capture_phase)i;
		steps[n++] = all[i];
	}
	return n;
}

int capture_plan_step(const struct capture_step *steps, int n, enum capture_phase phase)
{
	int i;

	for (i = 0; i < n; i++)
		if (steps[i].phase == phase)
			return i + 1;
	return 0;
}

/* The first process that is not a Go program, or a refusal of the question for the target. */
static void inspect_refuse(const struct capture_opts *o, const char *other,
			   struct capture_target_info *info)
{
	const struct question_info *qi = question_info(o->question);

	if (o->question == Q_LOCKS && !info->ngo && info->ngo_missing && !info->nother) {
		snprintf(info->refuse, sizeof(info->refuse),
			 "%s (%s): a Go program waits on locks in the Go scheduler, not in the "
			 "kernel, so its lock waits are read from its own mutex and block profiles: the "
			 "program must serve net/http/pprof on a local port, and it does not (%s)",
			 qi->id, qi->text, info->go_missing);
		return;
	}
	if ((o->question != Q_MEMORY_HELD && o->question != Q_MEMORY_ALLOC) || info->ngo ||
	    info->njvm || info->nnode)
		return;
	if (info->ngo_missing)
		snprintf(info->refuse, sizeof(info->refuse),
			 "%s (%s) is read from the Go program's own profiler, so the program must "
			 "serve net/http/pprof on a local port, and it does not (%s); use Where memory "
			 "grows (memory-growth) instead, which works for every program",
			 qi->id, qi->text, info->go_missing);
	else
		snprintf(
			info->refuse, sizeof(info->refuse),
			"%s (%s) is read from a runtime's own profiler (Go's heap profile), and %s "
			"is not a Go program; use Where memory grows (memory-growth) instead, which "
			"works for every program",
			qi->id, qi->text, other[0] ? other : "the target");
}

/* Whether async-profiler is there to be copied into the JVMs, with its size and sha256. */
static void inspect_asprof(const struct capture_opts *o, struct capture_target_info *info)
{
	const char *path = o->async_profiler ? o->async_profiler : CAPTURE_ASYNC_PROFILER;
	uint8_t digest[SHA256_DIGEST_LEN];
	struct stat st;
	int fd;

	size_t i, ok = 0;

	info->asprof = false;
	/* not for JVMs of versions an agent may crash (runtimes/jvm/jvm_guard.h) */
	for (i = 0; i < info->njvm; i++)
		ok += !jvm_guard_agent(info->jvm[i].version);
	if (!ok || !*path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size <= JVM_SOURCE_MAX_LIB &&
	    sha256_fd(fd, JVM_SOURCE_MAX_LIB, digest) >= 0) {
		info->asprof = true;
		info->asprof_size = (size_t)st.st_size;
		sha256_hex(digest, info->asprof_sha);
	}
	close(fd);
}

void capture_inspect_go(const struct capture_opts *o, const uint32_t *pids, size_t n,
			struct go_source *gs, struct capture_target_info *info)
{
	struct runtime_detect_opts dopts = { .proc_root = o->proc_root };
	char other[96] = "", why[256], comm[16];
	size_t i;

	info->nprocs = (int)n;
	for (i = 0; i < n; i++) {
		struct runtime_info ri = { 0 };
		uint16_t port = 0;
		int ret;

		proc_read_comm(o->proc_root, pids[i], comm, sizeof(comm));
		if (runtime_detect(&dopts, (int)pids[i], &ri) < 0 || ri.kind != RUNTIME_GO || !gs) {
			if (node_source_question(o->question) && ri.kind == RUNTIME_NODE &&
			    info->nnode < NODE_SOURCE_MAX_PROCS) {
				info->node[info->nnode].pid = pids[i];
				snprintf(info->node[info->nnode].comm, sizeof(info->node[0].comm),
					 "%s", comm);
				snprintf(info->node[info->nnode].version,
					 sizeof(info->node[0].version), "%s", ri.version);
				info->nnode++;
			}
			if (jvm_source_question(o->question) && ri.kind == RUNTIME_JVM &&
			    info->njvm < JVM_SOURCE_MAX_PROCS) {
				info->jvm[info->njvm].pid = pids[i];
				snprintf(info->jvm[info->njvm].comm, sizeof(info->jvm[0].comm),
					 "%s", comm);
				snprintf(info->jvm[info->njvm].version,
					 sizeof(info->jvm[0].version), "%s", ri.version);
				info->njvm++;
			}
			if (!info->nother++)
				snprintf(other, sizeof(other), "process %u (%s)", pids[i], comm);
			continue;
		}
		why[0] = '\0';
		ret = go_source__add(gs, pids[i], comm, &port, why, sizeof(why));
		if (ret == -EEXIST)
			continue;
		if (ret) {
			if (!info->ngo_missing++)
				snprintf(info->go_missing, sizeof(info->go_missing),
					 "process %u (%s): %s", pids[i], comm,
					 why[0] ? why : strerror(-ret));
			continue;
		}
		if (info->ngo < GO_SOURCE_MAX_PROCS) {
			typeof(info->go[0]) *e = &info->go[info->ngo++];

			e->pid = pids[i];
			snprintf(e->comm, sizeof(e->comm), "%s", comm);
			e->port = port;
		}
	}
	/* the endpoints' hosts, as the source found them */
	for (i = 0; i < info->ngo; i++)
		go_source__endpoint(gs, info->go[i].pid, info->go[i].host,
				    sizeof(info->go[i].host));
	info->goroutines = o->question == Q_THREADS && info->ngo && info->ngo == n;
	inspect_asprof(o, info);
	inspect_refuse(o, other, info);
}

/* The target's processes now, into a new array @pids the caller frees. Returns the count, or
 * -ENOENT with @err naming what exists, or -errno. */
static int resolve_target(const struct capture_opts *o, uint32_t **pids, char *err, size_t size)
{
	struct owner_resolver_opts ro = { .proc_root = o->proc_root,
					  .name_fn = o->name_fn,
					  .name_ctx = o->name_ctx };
	struct owner_resolver *owners;
	int n;

	*pids = malloc(TARGET_MAX_PIDS * sizeof(**pids));
	if (!*pids)
		return -ENOMEM;
	n = owner_resolver__new(&ro, &owners);
	if (!n) {
		n = target_resolve(&o->target, owners, o->proc_root, *pids, TARGET_MAX_PIDS, err,
				   size);
		owner_resolver__free(owners);
	}
	if (n < 0) {
		free(*pids);
		*pids = NULL;
	}
	return n;
}

int capture_inspect(const struct capture_opts *o, struct capture_target_info *info, char *err,
		    size_t size)
{
	struct go_source *gs = NULL;
	uint32_t *pids;
	int n;

	memset(info, 0, sizeof(*info));
	info->nprocs = -1;
	if (o->target.kind == TARGET_SERVER)
		return 0;
	n = resolve_target(o, &pids, err, size);
	if (n < 0)
		return n;
	info->nprocs = n;
	if (go_source_question(o->question) && !go_source__new(o->question, o->proc_root, &gs))
		capture_inspect_go(o, pids, (size_t)n, gs, info);
	else if (node_source_question(o->question))
		capture_inspect_go(o, pids, (size_t)n, NULL, info);
	go_source__free(gs);
	free(pids);
	return n;
}

int capture_count_target(const struct capture_opts *o, char *err, size_t size)
{
	uint32_t *pids;
	int n;

	if (o->target.kind == TARGET_SERVER)
		return 0;
	n = resolve_target(o, &pids, err, size);
	if (n >= 0)
		free(pids);
	return n;
}
