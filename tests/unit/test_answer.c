// SPDX-License-Identifier: Apache-2.0
/*
 * answer: the answer sentence of every question and target (SPEC section 5 "The answer", seed
 * 001), the verification notes (SPEC section 5 "Notes after every capture", seed 000), and the
 * threads and goroutines tables, from hand-built reports and results (no profile, no /proc).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/capture/answer.h"
#include "profile/flamegraph.h"
#include "profile/report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIB (1ll << 20)

/* Reports as profile/report.c builds them, by hand: only the fields the answer reads. */
static struct report_group cpu_groups[] = {
	{ .owner = "Service billing", .value = 540, .share = 54.0, .top_function = "build_report" },
	{ .owner = "Unit nginx.service", .value = 140, .share = 14.0,
	  .top_function = "ngx_http_process_request" },
	{ .owner = "System", .value = 32, .share = 3.2, .top_function = "kworker" },
};
static struct report_function cpu_top[] = { { .name = "build_report", .value = 400,
					      .share = 40.0 } };
static const struct report rep_cpu = { .total = 1000, .groups = cpu_groups, .ngroups = 3,
				       .top = cpu_top, .ntop = 1 };
static const struct report rep_cpu_one = { .total = 1000, .groups = cpu_groups, .ngroups = 1,
					   .top = cpu_top, .ntop = 1 };
static const struct report rep_empty;

/* A name with non-ASCII UTF-8 (é, ü, a CJK character), as Kubernetes and Go allow. */
#define UTF8_OWNER "Service fa\xc3\xa7" "ade-m\xc3\xbc" "nchen"
#define UTF8_FN "main.r\xc3\xa9sum\xc3\xa9\xe6\x97\xa5"
static struct report_group utf8_groups[] = {
	{ .owner = UTF8_OWNER, .value = 90, .share = 90.0, .top_function = UTF8_FN },
};
static struct report_function utf8_top[] = { { .name = UTF8_FN, .value = 90, .share = 90.0 } };
static const struct report rep_utf8 = { .total = 100, .groups = utf8_groups, .ngroups = 1,
					.top = utf8_top, .ntop = 1 };

/* A group without a top function (every frame unnamed). */
static struct report_group unnamed_groups[] = {
	{ .owner = "Other processes", .value = 10, .share = 100.0 },
};
static const struct report rep_unnamed = { .total = 10, .groups = unnamed_groups, .ngroups = 1 };

/* wall: waits of two owners (values: nanoseconds) */
static struct report_group wall_groups[] = {
	{ .owner = "Service billing", .value = 1000, .share = 50.0, .top_function = "compute",
	  .wait_value = 800, .top_wait = "read", .top_wait_value = 496,
	  .top_wait_function = "wait_for_input" },
	{ .owner = "Unit nginx.service", .value = 1000, .share = 50.0, .top_function = "ngx",
	  .wait_value = 200, .top_wait = "futex", .top_wait_value = 200,
	  .top_wait_function = "ngx_wait" },
};
static struct report_function wall_top[] = { { .name = "compute", .value = 200, .share = 10.0 } };
static const struct report rep_wall = { .total = 2000, .groups = wall_groups, .ngroups = 2,
					.top = wall_top, .ntop = 1 };
static const struct report rep_wall_one = { .total = 1000, .groups = wall_groups, .ngroups = 1,
					    .top = wall_top, .ntop = 1 };
/* wall with no waiting at all */
static const struct report rep_wall_busy = { .total = 1000, .groups = cpu_groups, .ngroups = 1,
					     .top = wall_top, .ntop = 1 };

/* locks: nanoseconds asleep, in waits */
static struct report_group lock_groups[] = {
	{ .owner = "Service billing", .value = 8600000000ll, .share = 87.8,
	  .top_function = "contended_update" },
	{ .owner = "Unit nginx.service", .value = 1200000000ll, .share = 12.2,
	  .top_function = "ngx_lock" },
};
static const struct report rep_locks = { .total = 8600000000ll, .total_alt = 1906,
					 .groups = lock_groups, .ngroups = 2 };
static const struct report rep_locks_one = { .total = 8600000000ll, .total_alt = 1906,
					     .groups = lock_groups, .ngroups = 1 };

/* memory-growth: bytes first touched */
static struct report_group grow_groups[] = {
	{ .owner = "Service billing", .value = 64 * MIB, .share = 96.8, .top_function = "grow_cache" },
	{ .owner = "Unit nginx.service", .value = 2202009, .share = 3.2, .top_function = "ngx_alloc" },
};
static const struct report rep_grow = { .total = 64 * MIB, .groups = grow_groups, .ngroups = 2 };
static const struct report rep_grow_one = { .total = 64 * MIB, .groups = grow_groups,
					    .ngroups = 1 };

/* memory-held, memory-alloc: bytes, objects */
static struct report_function heap_top[] = { { .name = "main.holdMemory", .value = 1,
					       .share = 98.0 } };
static const struct report rep_heap = { .total = 64 * MIB, .total_alt = 16384,
					.groups = grow_groups, .ngroups = 1, .top = heap_top,
					.ntop = 1 };
static struct report_function alloc_top[] = { { .name = "main.allocDuring", .value = 1,
						.share = 99.2 } };
static const struct report rep_alloc = { .total = 480 * MIB, .total_alt = 7680,
					 .groups = grow_groups, .ngroups = 1, .top = alloc_top,
					 .ntop = 1 };

enum tk { SERVER, PID, PIDS, UNIT, SERVICE, CONTAINER };

/* @o for question @q of target @k named @name (a pid: 12, two pids: 12 and 13). */
static void make_opts(struct capture_opts *o, enum question q, enum tk k, const char *name,
		      unsigned int seconds)
{
	static const enum target_kind kinds[] = {
		[SERVER] = TARGET_SERVER, [PID] = TARGET_PIDS, [PIDS] = TARGET_PIDS,
		[UNIT] = TARGET_UNIT, [SERVICE] = TARGET_SERVICE, [CONTAINER] = TARGET_CONTAINER,
	};

	memset(o, 0, sizeof(*o));
	o->question = q;
	o->duration_s = seconds;
	o->target.kind = kinds[k];
	if (k == PID || k == PIDS) {
		o->target.pids[o->target.npids++] = 12;
		if (k == PIDS)
			o->target.pids[o->target.npids++] = 13;
	}
	snprintf(o->target.name, sizeof(o->target.name), "%s", name ? name : "");
}

static void test_target_who(void **state __attribute__((unused)))
{
	static const struct {
		enum tk k;
		const char *name, *comm;	/* comm NULL: no process seen */
		size_t size;
		const char *who;
	} cases[] = {
		{ SERVER, NULL, NULL, 64, "this server" },
		{ PID, NULL, "pipewait", 64, "process 12 (pipewait)" },
		{ PID, NULL, NULL, 64, "process 12" },
		{ PID, NULL, "", 64, "process 12" },
		{ PIDS, NULL, "app", 64, "2 processes" },
		{ UNIT, "nginx.service", "nginx", 64, "Unit nginx.service" },
		{ SERVICE, "billing", "app", 64, "Service billing" },
		{ CONTAINER, "redis", "redis-server", 64, "Container redis" },
		{ PID, NULL, "r\xc3\xa9sum\xc3\xa9", 64, "process 12 (r\xc3\xa9sum\xc3\xa9)" },
		/* truncated to the buffer, never past it */
		{ SERVICE, "billing", NULL, 8, "Service" },
		{ PID, NULL, "pipewait", 14, "process 12 (p" },
		{ PID, NULL, "pipewait", 11, "process 12" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_proc proc = { .pid = 12, .exited_at = -1 };
		struct answer_input in = { .procs = &proc, .nprocs = cases[i].comm ? 1 : 0 };
		char buf[64];
		struct capture_opts o;

		print_message("case %zu\n", i);
		snprintf(proc.comm, sizeof(proc.comm), "%s", cases[i].comm ? cases[i].comm : "");
		make_opts(&o, Q_CPU, cases[i].k, cases[i].name, 30);
		memset(buf, 'x', sizeof(buf));
		assert_ptr_equal(answer_target_who(&o, &in, buf, cases[i].size), buf);
		assert_string_equal(buf, cases[i].who);
	}
}

/*
 * The sentences of every question that reads the report (SPEC 5 "The answer", seed 001), each
 * written out once; a row of test_write names one and the words that fill its %s, in order. The
 * first %s of every form is the span ("30 seconds", "1 second").
 */
enum form {
	CPU, CPU_NEXT, CPU_NOTHING, CPU_NOT_USED,
	WALL, WALL_NEXT, WALL_TARGET, WALL_BUSY, WALL_NOTHING,
	LOCKS_TARGET, LOCKS, LOCKS_NEXT, LOCKS_NONE, LOCKS_NOTHING,
	GROW_TARGET, GROW, GROW_NEXT, GROW_NONE, GROW_NOTHING,
	HELD, HELD_NONE, ALLOC, ALLOC_NONE,
};
#define NEXT " Next was %s, at %s."
#define CPU_S "Over %s, %s used %s of the CPU time on this server, most of it in %s."
#define WALL_S "Over %s, %s spent %s of its waiting time in %s, most of it from %s."
#define LOCKS_S "Over %s, %s waited longest on locks, %s in all, most of it in %s."
#define GROW_S "Over %s, %s grew the most, touching %s of new memory, most of it in %s."
static const char *const forms[] = {
	[CPU] = CPU_S,
	[CPU_NEXT] = CPU_S NEXT,
	[CPU_NOTHING] = "Over %s, nothing used the CPU time on this server: no samples were "
			"taken.",
	[CPU_NOT_USED] = "Over %s, %s did not use the CPU time on this server: no samples were "
			 "taken.",
	[WALL] = WALL_S,
	[WALL_NEXT] = WALL_S " Next was %s, at %s of all waiting time.",
	[WALL_TARGET] = "Over %s, %s spent %s of its time waiting, most of it in %s from %s; %s on "
			"the CPU.",
	[WALL_BUSY] = "Over %s, %s did not wait: it spent its time on the CPU, most of it in %s.",
	[WALL_NOTHING] = "Over %s, nothing on this server waited: no off-CPU time was recorded.",
	[LOCKS_TARGET] = "Over %s, %s waited %s on locks in all, in %s waits, most of it in %s.",
	[LOCKS] = LOCKS_S,
	[LOCKS_NEXT] = LOCKS_S NEXT,
	[LOCKS_NONE] = "Over %s, %s waited on no lock.",
	[LOCKS_NOTHING] = "Over %s, nothing on this server waited on a lock.",
	[GROW_TARGET] = "Over %s, %s touched %s of new memory, most of it in %s.",
	[GROW] = GROW_S,
	[GROW_NEXT] = GROW_S NEXT,
	[GROW_NONE] = "Over %s, %s touched no new memory.",
	[GROW_NOTHING] = "Over %s, nothing on this server touched new memory.",
	[HELD] = "At the end of %s, %s held %s of Go heap in use (%s objects), most of it (%s) "
		 "allocated in %s.",
	[HELD_NONE] = "At the end of %s, %s held no Go heap memory that its heap profile shows.",
	[ALLOC] = "Over %s, %s allocated %s on the Go heap (%s objects), most of it (%s) in %s.",
	[ALLOC_NONE] = "Over %s, %s allocated nothing on the Go heap.",
};
#undef NEXT
#undef CPU_S
#undef WALL_S
#undef LOCKS_S
#undef GROW_S

#define FORM_ARGS 6
#define BILLING "Service billing"
#define NGINX "Unit nginx.service"
#define SPIN "process 12 (spin)"

/* The answer of every question that reads the report, for the server and for targets. */
static void test_write(void **state __attribute__((unused)))
{
	static const struct {
		enum question q;
		enum tk k;
		const char *name;
		unsigned int seconds;
		const struct report *rep;	/* NULL: no report */
		uint64_t samples, filtered;
		enum form form;
		const char *words[FORM_ARGS];	/* after the span */
	} cases[] = {
		/* cpu: seed 001, SPEC 5 "The answer" */
		{ Q_CPU, SERVER, NULL, 30, &rep_cpu, 0, 0, CPU_NEXT,
		  { BILLING, "54%", "build_report", NGINX, "14%" } },
		{ Q_CPU, SERVER, NULL, 10, &rep_cpu_one, 0, 0, CPU,
		  { BILLING, "54%", "build_report" } },
		{ Q_CPU, SERVER, NULL, 1, &rep_cpu_one, 0, 0, CPU,
		  { BILLING, "54%", "build_report" } },
		{ Q_CPU, SERVICE, "billing", 30, &rep_cpu, 54, 46, CPU,
		  { BILLING, "54%", "build_report" } },
		{ Q_CPU, UNIT, "nginx.service", 30, &rep_cpu, 14, 86, CPU,
		  { NGINX, "14%", "build_report" } },
		{ Q_CPU, PID, NULL, 5, &rep_cpu, 99, 0, CPU, { SPIN, "100%", "build_report" } },
		{ Q_CPU, PIDS, NULL, 5, &rep_cpu, 1, 2, CPU,
		  { "2 processes", "33%", "build_report" } },
		{ Q_CPU, CONTAINER, "redis", 5, &rep_cpu, 10, 0, CPU,
		  { "Container redis", "100%", "build_report" } },
		{ Q_CPU, SERVER, NULL, 30, &rep_utf8, 0, 0, CPU, { UTF8_OWNER, "90%", UTF8_FN } },
		{ Q_CPU, SERVER, NULL, 30, &rep_unnamed, 0, 0, CPU,
		  { "Other processes", "100%", "[unknown]" } },
		/* no samples, and no report at all, read the same */
		{ Q_CPU, SERVER, NULL, 30, &rep_empty, 0, 0, CPU_NOTHING, { NULL } },
		{ Q_CPU, SERVER, NULL, 30, NULL, 0, 0, CPU_NOTHING, { NULL } },
		{ Q_CPU, SERVICE, "billing", 30, &rep_empty, 0, 500, CPU_NOT_USED, { BILLING } },
		{ Q_CPU, PID, NULL, 30, NULL, 0, 0, CPU_NOT_USED, { SPIN } },
		/* wall */
		{ Q_WALL, SERVER, NULL, 10, &rep_wall, 0, 0, WALL_NEXT,
		  { BILLING, "62%", "read", "wait_for_input", NGINX, "20%" } },
		{ Q_WALL, SERVER, NULL, 10, &rep_wall_one, 0, 0, WALL,
		  { BILLING, "62%", "read", "wait_for_input" } },
		{ Q_WALL, PID, NULL, 10, &rep_wall_one, 0, 0, WALL_TARGET,
		  { SPIN, "80%", "read", "wait_for_input", "20%" } },
		{ Q_WALL, SERVICE, "billing", 10, &rep_wall_busy, 0, 0, WALL_BUSY,
		  { BILLING, "compute" } },
		{ Q_WALL, SERVER, NULL, 10, &rep_empty, 0, 0, WALL_NOTHING, { NULL } },
		{ Q_WALL, PID, NULL, 10, NULL, 0, 0, WALL_BUSY, { SPIN, "[unknown]" } },
		/* locks */
		{ Q_LOCKS, PID, NULL, 10, &rep_locks_one, 0, 0, LOCKS_TARGET,
		  { SPIN, "8.6 s", "1906", "contended_update" } },
		{ Q_LOCKS, SERVER, NULL, 10, &rep_locks, 0, 0, LOCKS_NEXT,
		  { BILLING, "8.6 s", "contended_update", NGINX, "1.2 s" } },
		{ Q_LOCKS, SERVER, NULL, 10, &rep_locks_one, 0, 0, LOCKS,
		  { BILLING, "8.6 s", "contended_update" } },
		{ Q_LOCKS, SERVICE, "billing", 10, &rep_empty, 0, 0, LOCKS_NONE, { BILLING } },
		{ Q_LOCKS, SERVER, NULL, 10, NULL, 0, 0, LOCKS_NOTHING, { NULL } },
		/* memory-growth */
		{ Q_MEMORY_GROWTH, PID, NULL, 10, &rep_grow_one, 0, 0, GROW_TARGET,
		  { SPIN, "64.0 MiB", "grow_cache" } },
		{ Q_MEMORY_GROWTH, SERVER, NULL, 10, &rep_grow, 0, 0, GROW_NEXT,
		  { BILLING, "64.0 MiB", "grow_cache", NGINX, "2.1 MiB" } },
		{ Q_MEMORY_GROWTH, SERVER, NULL, 10, &rep_grow_one, 0, 0, GROW,
		  { BILLING, "64.0 MiB", "grow_cache" } },
		{ Q_MEMORY_GROWTH, UNIT, "nginx.service", 10, &rep_empty, 0, 0, GROW_NONE,
		  { NGINX } },
		{ Q_MEMORY_GROWTH, SERVER, NULL, 10, NULL, 0, 0, GROW_NOTHING, { NULL } },
		/* memory-held, memory-alloc (Go heap; never for a whole server) */
		{ Q_MEMORY_HELD, PID, NULL, 10, &rep_heap, 0, 0, HELD,
		  { SPIN, "64.0 MiB", "16384", "98%", "main.holdMemory" } },
		{ Q_MEMORY_HELD, SERVICE, "billing", 30, &rep_empty, 0, 0, HELD_NONE, { BILLING } },
		{ Q_MEMORY_HELD, SERVER, NULL, 30, NULL, 0, 0, HELD_NONE, { "the target" } },
		{ Q_MEMORY_ALLOC, PID, NULL, 10, &rep_alloc, 0, 0, ALLOC,
		  { SPIN, "480.0 MiB", "7680", "99%", "main.allocDuring" } },
		{ Q_MEMORY_ALLOC, SERVICE, "billing", 10, NULL, 0, 0, ALLOC_NONE, { BILLING } },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_proc proc = { .pid = 12, .comm = "spin", .exited_at = -1 };
		struct answer_input in = { .procs = &proc, .nprocs = 1 };
		struct capture_result r = { .report = (struct report *)cases[i].rep,
					    .samples = cases[i].samples,
					    .stats.filtered = cases[i].filtered };
		const char *const *w = cases[i].words;
		struct capture_opts o;
		char span[32], want[sizeof(r.answer)];

		print_message("case %zu\n", i);
		snprintf(span, sizeof(span), "%u second%s", cases[i].seconds,
			 cases[i].seconds == 1 ? "" : "s");
		/* a form takes at most FORM_ARGS words; printf ignores the ones it does not use */
		snprintf(want, sizeof(want), forms[cases[i].form], span, w[0], w[1], w[2], w[3], w[4],
			 w[5]);
		make_opts(&o, cases[i].q, cases[i].k, cases[i].name, cases[i].seconds);
		answer_write(&o, &in, &r);
		assert_string_equal(r.answer, want);
		assert_int_equal(r.others, cases[i].filtered);
		assert_int_equal(r.nnotes, 0);
	}
}
#undef BILLING
#undef NGINX
#undef SPIN

/* JVMs (or V8) that recorded nothing for memory-held or memory-alloc: no "Go heap" in the
 * answer; with a Go program read too, the report's answer as before. */
static void test_write_jvm_nothing(void **state __attribute__((unused)))
{
	static const struct {
		enum question q;
		size_t njvm, ngo, nnode;
		const char *want;
	} cases[] = {
		{ Q_MEMORY_HELD, 1, 0, 0,
		  "At the end of 3 seconds, process 12 (java) held nothing on the Java heap that the "
		  "JVM sampled during the capture." },
		{ Q_MEMORY_ALLOC, 2, 0, 0,
		  "Over 3 seconds, process 12 (java) allocated nothing on the Java heap that the JVM "
		  "sampled." },
		{ Q_MEMORY_ALLOC, 1, 1, 0, "Over 3 seconds, process 12 (java) allocated nothing on the Go heap." },
		{ Q_MEMORY_HELD, 0, 0, 0,
		  "At the end of 3 seconds, process 12 (java) held no Go heap memory that its heap "
		  "profile shows." },
		/* Node.js processes read through V8 */
		{ Q_MEMORY_HELD, 0, 0, 1,
		  "At the end of 3 seconds, process 12 (java) held nothing on the V8 heap that V8 "
		  "sampled during the capture." },
		{ Q_MEMORY_ALLOC, 0, 0, 2,
		  "Over 3 seconds, process 12 (java) allocated nothing on the V8 heap that V8 "
		  "sampled." },
		{ Q_MEMORY_ALLOC, 0, 1, 1, "Over 3 seconds, process 12 (java) allocated nothing on the Go heap." },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_proc proc = { .pid = 12, .comm = "java", .exited_at = -1 };
		struct answer_input in = { .procs = &proc,
					   .nprocs = 1,
					   .njvm = cases[i].njvm,
					   .ngo = cases[i].ngo,
					   .nnode = cases[i].nnode };
		struct capture_result r = { 0 };
		struct capture_opts o;

		make_opts(&o, cases[i].q, PID, NULL, 3);
		answer_write(&o, &in, &r);
		assert_string_equal(r.answer, cases[i].want);
	}
}

/* Names longer than the answer: cut at the buffer, still a C string. */
static void test_write_long(void **state __attribute__((unused)))
{
	static char long_fn[2048], long_owner[1500];
	static const enum question qs[] = { Q_CPU, Q_WALL, Q_LOCKS, Q_MEMORY_GROWTH,
					    Q_MEMORY_HELD, Q_MEMORY_ALLOC };
	struct report_group g[2];
	struct report_function top;
	struct report rep;
	size_t i;

	memset(long_fn, 'f', sizeof(long_fn) - 1);
	memset(long_owner, 'o', sizeof(long_owner) - 1);
	for (i = 0; i < ARRAY_SIZE(qs) * 2; i++) {
		struct capture_result r = { .report = &rep, .samples = 10 };
		struct answer_input in = { 0 };
		struct capture_opts o;
		char name[TARGET_NAME_MAX];

		print_message("case %zu\n", i);
		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		g[0] = (struct report_group){ .owner = long_owner, .value = 90, .share = 90,
					      .top_function = long_fn, .wait_value = 50,
					      .top_wait = long_fn, .top_wait_value = 50,
					      .top_wait_function = long_fn };
		g[1] = g[0];
		top = (struct report_function){ .name = long_fn, .value = 90, .share = 90 };
		rep = (struct report){ .total = 100, .total_alt = 3, .groups = g, .ngroups = 2,
				       .top = &top, .ntop = 1 };
		make_opts(&o, qs[i / 2], i % 2 ? SERVICE : SERVER, name, 30);
		answer_write(&o, &in, &r);
		assert_int_equal(strlen(r.answer), sizeof(r.answer) - 1);
		assert_true(!strncmp(r.answer, "Over 30 seconds, ", 17) ||
			    !strncmp(r.answer, "At the end of 30 seconds, ", 26));
	}
}

/* A thread of a `threads` capture. */
static struct capture_thread thread(uint32_t tid, const char *name, double running,
				    double waiting, const char *reason, const char *function)
{
	struct capture_thread t = { .tid = tid, .pid = 12, .running = running,
				    .waiting = waiting };

	snprintf(t.name, sizeof(t.name), "%s", name);
	snprintf(t.process, sizeof(t.process), "threeway");
	snprintf(t.owner, sizeof(t.owner), "Service billing");
	snprintf(t.function, sizeof(t.function), "%s", function);
	if (reason) {
		snprintf(t.waits[0].reason, sizeof(t.waits[0].reason), "%s", reason);
		t.waits[0].share = waiting;
		t.nwaits = 1;
	}
	return t;
}

static void test_write_threads(void **state __attribute__((unused)))
{
	static const struct {
		enum tk k;
		size_t nthreads;	/* the first n of the list below */
		const char *answer;
	} cases[] = {
		{ PID, 3,
		  "Over 5 seconds, the 3 threads of process 12 (threeway): spinner running 98% of the "
		  "time, in spin_forever; reader running 60% of the time, in parse; sleeper waiting "
		  "99% of the time in clock_nanosleep, from nap." },
		{ PID, 1,
		  "Over 5 seconds, the 1 thread of process 12 (threeway): sleeper waiting 99% of the "
		  "time in clock_nanosleep, from nap." },
		{ SERVICE, 6,
		  "Over 5 seconds, the 6 threads of Service billing: spinner running 98% of the "
		  "time, in spin_forever; reader running 60% of the time, in parse; w1 running 50% "
		  "of the time, in work; w2 waiting 90% of the time in futex, from work; and 2 "
		  "more." },
		{ SERVER, 6,
		  "Over 5 seconds, 6 threads on this server: 3 mostly running, 3 mostly waiting. The "
		  "busiest was spinner running 98% of the time, in spin_forever of Service "
		  "billing." },
		{ SERVER, 0, "Over 5 seconds, no thread of this server was seen." },
		{ UNIT, 0, "Over 5 seconds, no thread of Unit nginx.service was seen." },
	};
	struct capture_thread ts[6];
	size_t i;

	ts[0] = thread(3, "sleeper", 1, 99, "clock_nanosleep", "nap");
	ts[1] = thread(1, "spinner", 98, 2, NULL, "spin_forever");
	ts[2] = thread(2, "reader", 60, 40, "read", "parse");
	ts[3] = thread(5, "idle", 0, 100, NULL, "poll_loop");
	ts[4] = thread(4, "w1", 50, 50, "futex", "work");
	ts[5] = thread(6, "w2", 10, 90, "futex", "work");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_input in = { 0 };
		struct capture_result r = { .threads = ts,
					    .nthreads = cases[i].nthreads };
		struct capture_opts o;

		print_message("case %zu\n", i);
		make_opts(&o, Q_THREADS, cases[i].k, "nginx.service", 5);
		if (cases[i].k == SERVICE)
			snprintf(o.target.name, sizeof(o.target.name), "billing");
		answer_write(&o, &in, &r);
		assert_string_equal(r.answer, cases[i].answer);
	}
	{
		/* the wait of a thread without a reason is in "the kernel" */
		struct capture_thread t = thread(9, "blocked", 0, 100, NULL, "do_io");
		struct capture_result r = { .threads = &t, .nthreads = 1 };
		struct answer_input in = { 0 };
		struct capture_opts o;

		print_message("case %zu\n", i);
		make_opts(&o, Q_THREADS, PID, NULL, 5);
		answer_write(&o, &in, &r);
		assert_string_equal(r.answer, "Over 5 seconds, the 1 thread of process 12 (threeway): "
				    "blocked waiting 100% of the time in the kernel, from do_io.");
	}
}

static const struct go_goroutine_group go_groups[] = {
	{ 12, "app", "chan receive", "main.parkHere", 40 },
	{ 12, "app", "sleep", "main.sleepHere", 5 },
	{ 12, "app", "IO wait", "net/http.(*conn).serve", 1 },
	{ 13, "worker", "running", "main.spin", 1 },
	{ 13, "worker", "runnable", "main.next", 1 },
	{ 13, "worker", "select", "main.loop", 1 },
};

static void test_write_goroutines(void **state __attribute__((unused)))
{
	static const struct {
		enum tk k;
		size_t ngo, ngroups;
		uint64_t total;
		const char *answer;
	} cases[] = {
		{ PID, 1, 3, 46,
		  "After 5 seconds, process 12 (app) has 46 goroutines: 40 in chan receive in "
		  "main.parkHere; 5 in sleep in main.sleepHere; 1 in IO wait in "
		  "net/http.(*conn).serve." },
		{ PID, 1, 1, 1,
		  "After 5 seconds, process 12 (app) has 1 goroutine: 40 in chan receive in "
		  "main.parkHere." },
		{ SERVICE, 2, 5, 48,
		  "After 5 seconds, Service billing have 48 goroutines: 40 in chan receive in "
		  "main.parkHere (app); 5 in sleep in main.sleepHere (app); 1 in IO wait in "
		  "net/http.(*conn).serve (app); 1 running in main.spin (worker); and 1 more "
		  "kind." },
		{ SERVICE, 2, 6, 49,
		  "After 5 seconds, Service billing have 49 goroutines: 40 in chan receive in "
		  "main.parkHere (app); 5 in sleep in main.sleepHere (app); 1 in IO wait in "
		  "net/http.(*conn).serve (app); 1 running in main.spin (worker); and 2 more "
		  "kinds." },
		{ SERVER, 2, 4, 47,
		  "After 5 seconds, this server have 47 goroutines: 40 in chan receive in "
		  "main.parkHere (app); 5 in sleep in main.sleepHere (app); 1 in IO wait in "
		  "net/http.(*conn).serve (app); 1 running in main.spin (worker)." },
		/* nothing read */
		{ PID, 1, 0, 0, "No goroutine could be read from process 12 (app)." },
		{ SERVICE, 0, 0, 0, "No goroutine could be read from Service billing." },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_proc proc = { .pid = 12, .comm = "app", .exited_at = -1 };
		struct answer_input in = { .procs = &proc, .nprocs = 1, .goroutines = true,
					   .ngo = cases[i].ngo, .groups = go_groups,
					   .ngroups = cases[i].ngroups, .total = cases[i].total };
		struct capture_result r = { 0 };
		struct capture_opts o;

		print_message("case %zu\n", i);
		make_opts(&o, Q_THREADS, cases[i].k, "billing", 5);
		answer_write(&o, &in, &r);
		assert_string_equal(r.answer, cases[i].answer);
	}
}

static const char few_service[] =
	"Very few samples: the Service was almost idle. Capture again while it is under the load "
	"you want to understand.";
static const char few_server[] =
	"Very few samples: the server was almost idle. Capture again while it is under the load "
	"you want to understand.";
static const char few_process[] =
	"Very few samples: the process was almost idle. Capture again while it is under the load "
	"you want to understand.";
/* (sic: the code says "was" for several processes too) */
static const char few_processes[] =
	"Very few samples: the processes was almost idle. Capture again while it is under the "
	"load you want to understand.";
static const char few_target[] =
	"Very few samples: the target was almost idle. Capture again while it is under the load "
	"you want to understand.";
static const char exited_12[] =
	"Process 12 (spin) exited during the capture, about 3 s after sampling started; the "
	"profile holds what it did until then.";
static const char all_exited[] =
	"The target is no longer running: every process of it exited during the capture.";

#define MAX_ROW_NOTES 6

static void test_notes(void **state __attribute__((unused)))
{
	static const struct {
		enum question q;
		enum tk k;
		uint64_t samples, events, lost, unattributed;
		size_t nprocs, nexited;	/* the first nexited of nprocs exited */
		double unnamed, incomplete;
		size_t nunreadable;
		size_t nnotes;
		const char *notes[MAX_ROW_NOTES];
		size_t want_exited;
	} cases[] = {
		/* enough samples (5 a second for 30 s): nothing to say */
		{ Q_CPU, SERVICE, 150, 0, 0, 0, 1, 0, 0, 0, 0, 0, { NULL }, 0 },
		/* SPEC 5 "Notes after every capture", seed 000 */
		{ Q_CPU, SERVICE, 149, 0, 0, 0, 1, 0, 0, 0, 0, 1, { few_service }, 0 },
		{ Q_CPU, SERVICE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, { few_service }, 0 },
		{ Q_WALL, SERVER, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1, { few_server }, 0 },
		{ Q_CPU, PID, 3, 0, 0, 0, 1, 0, 0, 0, 0, 1, { few_process }, 0 },
		{ Q_CPU, PIDS, 3, 0, 0, 0, 2, 0, 0, 0, 0, 1, { few_processes }, 0 },
		{ Q_CPU, UNIT, 3, 0, 0, 0, 1, 0, 0, 0, 0, 1, { few_target }, 0 },
		/* questions that count events, not samples */
		{ Q_LOCKS, SERVICE, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		  { "No lock waits: no thread of the target slept on a lock during the capture." },
		  0 },
		{ Q_LOCKS, SERVER, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		  { "No lock waits: no thread of this server slept on a lock during the capture." },
		  0 },
		{ Q_LOCKS, SERVICE, 0, 12, 0, 0, 1, 0, 0, 0, 0, 0, { NULL }, 0 },
		{ Q_MEMORY_GROWTH, SERVICE, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		  { "No memory growth: the Service touched no new memory during the capture." }, 0 },
		{ Q_MEMORY_GROWTH, SERVICE, 0, 7, 0, 0, 1, 0, 0, 0, 0, 0, { NULL }, 0 },
		{ Q_MEMORY_HELD, SERVICE, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, { NULL }, 0 },
		{ Q_THREADS, SERVICE, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, { NULL }, 0 },
		/* the target is still running (SPEC 5): one of two exited, then both */
		{ Q_CPU, PIDS, 500, 0, 0, 0, 2, 1, 0, 0, 0, 1, { exited_12 }, 1 },
		{ Q_CPU, PID, 500, 0, 0, 0, 1, 1, 0, 0, 0, 2, { exited_12, all_exited }, 1 },
		{ Q_CPU, SERVICE, 500, 0, 0, 0, 6, 6, 0, 0, 0, 6,
		  { exited_12, exited_12, exited_12, exited_12,
		    "2 more processes of the target exited during the capture.", all_exited }, 6 },
		/* native frames without names */
		{ Q_CPU, SERVER, 500, 0, 0, 0, 0, 0, 10.0, 0, 0, 1,
		  { "Many native frames have no names, because the binaries were built without "
		    "symbols (10% of the samples)." }, 0 },
		{ Q_CPU, SERVER, 500, 0, 0, 0, 0, 0, 9.9, 0, 0, 0, { NULL }, 0 },
		/* a process that could not be read, and why */
		{ Q_CPU, SERVER, 500, 0, 0, 0, 0, 0, 0, 0, 2, 2,
		  { "Process 40 (secret) could not be read, so its functions have no names: "
		    "Permission denied.",
		    "Process 41 (?) could not be read, so its functions have no names: No such "
		    "process." }, 0 },
		/* unattributed samples, and samples lost to full maps, with the count */
		{ Q_CPU, SERVER, 500, 0, 0, 1, 0, 0, 0, 0, 0, 1,
		  { "1 sample came from processes that exited before they could be read; it is "
		    "shown under Other processes." }, 0 },
		{ Q_CPU, SERVER, 500, 0, 0, 37, 0, 0, 0, 0, 0, 1,
		  { "37 samples came from processes that exited before they could be read; they "
		    "are shown under Other processes." }, 0 },
		{ Q_CPU, SERVER, 500, 0, 15, 0, 0, 0, 0, 0, 0, 1,
		  { "15 samples lost to full maps (12 counts, 3 stacks)." }, 0 },
		/* incomplete stacks: from 1% on */
		{ Q_CPU, SERVER, 500, 0, 0, 0, 0, 0, 0, 2.0, 0, 1,
		  { "2.0% of the user stacks could not be completed." }, 0 },
		{ Q_CPU, SERVER, 500, 0, 0, 0, 0, 0, 0, 0.9, 0, 0, { NULL }, 0 },
		/* past CAPTURE_MAX_NOTES: left out */
		{ Q_CPU, SERVER, 3, 0, 0, 0, 0, 0, 0, 0, 20, CAPTURE_MAX_NOTES, { few_server },
		  0 },
	};
	static const struct answer_unreadable ur_first[] = {
		{ 40, "secret", -EACCES }, { 41, "", -ESRCH },
	};
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_unreadable ur[20];
		struct answer_proc procs[8];
		struct report rep = { .unnamed_share = cases[i].unnamed };
		struct answer_input in = { .procs = procs, .nprocs = cases[i].nprocs,
					   .unreadable = ur, .nunreadable = cases[i].nunreadable,
					   .unattributed = cases[i].unattributed };
		struct capture_result r = { .report = &rep, .samples = cases[i].samples,
					    .stats.events = cases[i].events,
					    .stats.lost = cases[i].lost,
					    .stats.stacks_incomplete_pct = cases[i].incomplete };
		struct capture_opts o;

		print_message("case %zu\n", i);
		make_opts(&o, cases[i].q, cases[i].k, "billing", 30);
		for (j = 0; j < ARRAY_SIZE(procs); j++)
			procs[j] = (struct answer_proc){ .pid = 12, .comm = "spin",
							 .exited_at = j < cases[i].nexited ? 3 : -1 };
		for (j = 0; j < ARRAY_SIZE(ur); j++)
			ur[j] = j < ARRAY_SIZE(ur_first) ? ur_first[j] :
				(struct answer_unreadable){ 100 + j, "x", -EACCES };
		snprintf(r.stats.lost_detail, sizeof(r.stats.lost_detail), "12 counts, 3 stacks");
		if (cases[i].incomplete)
			snprintf(r.stats.stacks_detail, sizeof(r.stats.stacks_detail),
				 "%.1f%% of the user stacks could not be completed.",
				 cases[i].incomplete);
		answer_notes(&o, &in, &r);
		assert_int_equal(r.nnotes, cases[i].nnotes);
		for (j = 0; j < MAX_ROW_NOTES && cases[i].notes[j]; j++)
			assert_string_equal(r.notes[j], cases[i].notes[j]);
		assert_int_equal(r.nexited, cases[i].want_exited);
		assert_int_equal(r.lost, cases[i].lost);
		for (j = 0; j < r.nnotes; j++)
			free(r.notes[j]);
	}
}

/* No report (summarizing failed): the notes that need none are still written. */
static void test_notes_no_report(void **state __attribute__((unused)))
{
	struct answer_input in = { 0 };
	struct capture_result r = { .samples = 0 };
	struct capture_opts o;

	make_opts(&o, Q_CPU, SERVICE, "billing", 30);
	answer_notes(&o, &in, &r);
	assert_int_equal(r.nnotes, 1);
	assert_string_equal(r.notes[0], few_service);
	free(r.notes[0]);
}

static void test_add_note(void **state __attribute__((unused)))
{
	static const struct {
		size_t before;		/* notes already there */
		const char *arg;
		int ret;
		const char *note;
	} cases[] = {
		{ 0, "billing", 0, "note billing" },
		{ CAPTURE_MAX_NOTES - 1, "last", 0, "note last" },
		{ 0, "fa\xc3\xa7" "ade", 0, "note fa\xc3\xa7" "ade" },
		{ 0, "", 0, "note " },
		{ CAPTURE_MAX_NOTES, "one too many", -ENOSPC, NULL },
	};
	static char big[8192];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct capture_result r = { 0 };

		print_message("case %zu\n", i);
		for (j = 0; j < cases[i].before; j++)
			assert_int_equal(answer_add_note(&r, "n%zu", j), 0);
		assert_int_equal(answer_add_note(&r, "note %s", cases[i].arg), cases[i].ret);
		assert_int_equal(r.nnotes, cases[i].before + !cases[i].ret);
		if (!cases[i].ret)
			assert_string_equal(r.notes[r.nnotes - 1], cases[i].note);
		for (j = 0; j < r.nnotes; j++)
			free(r.notes[j]);
	}
	{
		/* a note longer than any buffer is kept whole */
		struct capture_result r = { 0 };

		print_message("case %zu\n", i);
		memset(big, 'b', sizeof(big) - 1);
		assert_int_equal(answer_add_note(&r, "%s", big), 0);
		assert_int_equal(strlen(r.notes[0]), sizeof(big) - 1);
		free(r.notes[0]);
	}
}

/* The head of a table answer_*_table() built: its title, columns and rows, and cells. */
static void check_table_head(const struct flamegraph_opts *fg, const char *title, size_t ncols,
			     const char *first_col, size_t nrows)
{
	assert_string_equal(fg->table_title, title);
	assert_int_equal(fg->table_ncols, ncols);
	assert_string_equal(fg->table_cols[0], first_col);
	assert_int_equal(fg->table_nrows, nrows);
	assert_non_null(fg->table_cells);
}

static void test_threads_table(void **state __attribute__((unused)))
{
	static const char *const row0[] = { "spinner", "1", "threeway", "12", "Service billing",
					    "98%", "0%", "2%", "", "spin_forever" };
	static const char *const row1[] = { "sleeper", "3", "threeway", "12", "Service billing",
					    "1%", "0%", "99%", "clock_nanosleep 99%, futex 1%",
					    "nap" };
	static const struct {
		size_t nthreads;
		const char *const *rows[2];
	} cases[] = {
		{ 2, { row0, row1 } },
		{ 1, { row0 } },
		{ 0, { NULL } },
	};
	struct capture_thread ts[2];
	size_t i, j, k;

	ts[0] = thread(1, "spinner", 98, 2, NULL, "spin_forever");
	ts[1] = thread(3, "sleeper", 1, 99, "clock_nanosleep", "nap");
	snprintf(ts[1].waits[1].reason, sizeof(ts[1].waits[1].reason), "futex");
	ts[1].waits[1].share = 1;
	ts[1].nwaits = 2;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct capture_result r = { .threads = ts, .nthreads = cases[i].nthreads };
		struct flamegraph_opts fg = { 0 };

		print_message("case %zu\n", i);
		assert_int_equal(answer_threads_table(&r, &fg), 0);
		check_table_head(&fg, "Threads", 10, "Thread", cases[i].nthreads);
		assert_string_equal(fg.table_cols[9], "Function");
		for (j = 0; j < cases[i].nthreads; j++)
			for (k = 0; k < 10; k++)
				assert_string_equal(fg.table_cells[j * 10 + k], cases[i].rows[j][k]);
		answer_table_free(&fg);
		assert_null(fg.table_cells);
		answer_table_free(&fg);	/* twice: nothing */
	}
}

static void test_goroutines_table(void **state __attribute__((unused)))
{
	static const char *const row0[] = { "40", "chan receive", "main.parkHere", "app", "12" };
	static const char *const row3[] = { "1", "running", "main.spin", "worker", "13" };
	static const struct {
		size_t ngroups;
		size_t check;		/* the row compared with @row */
		const char *const *row;
	} cases[] = {
		{ 6, 0, row0 },
		{ 6, 3, row3 },
		{ 1, 0, row0 },
		{ 0, 0, NULL },
	};
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer_input in = { .groups = go_groups, .ngroups = cases[i].ngroups };
		struct flamegraph_opts fg = { 0 };

		print_message("case %zu\n", i);
		assert_int_equal(answer_goroutines_table(&in, &fg), 0);
		check_table_head(&fg, "Goroutines", 5, "Goroutines", cases[i].ngroups);
		for (k = 0; cases[i].row && k < 5; k++)
			assert_string_equal(fg.table_cells[cases[i].check * 5 + k],
					    cases[i].row[k]);
		answer_table_free(&fg);
		assert_null(fg.table_cells);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_who),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_write_long),
		cmocka_unit_test(test_write_jvm_nothing),
		cmocka_unit_test(test_write_threads),
		cmocka_unit_test(test_write_goroutines),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_notes_no_report),
		cmocka_unit_test(test_add_note),
		cmocka_unit_test(test_threads_table),
		cmocka_unit_test(test_goroutines_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
