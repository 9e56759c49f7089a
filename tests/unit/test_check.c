// SPDX-License-Identifier: Apache-2.0
/*
 * check: why a question cannot be answered for a target (check_question_reason), and the
 * document check_run() builds, against a fake /proc written to a temporary directory.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/capture/check.h"
#include "daemon/capture/question.h"
#include "daemon/capture/target.h"
#include "runtimes/detect.h"
#include "tests/unit/fixtures.h"


#define PY (1u << RUNTIME_PYTHON)
#define NATIVE (1u << RUNTIME_NATIVE)
#define JVM (1u << RUNTIME_JVM)
#define GO (1u << RUNTIME_GO)
#define NODE (1u << RUNTIME_NODE)
#define ALL ((1u << RUNTIME_KIND_COUNT) - 1)
#define GOPP (GO | CHECK_GO_PPROF)	/* a Go program that serves net/http/pprof */

static const char not_server[] =
	"not offered for a whole server: it is read from inside one runtime at a time; capture it "
	"from the Service instead";
static const char python_memory[] =
	"memory in use is read from the runtime's own profiler, which Python does not offer to an "
	"outside tool; use Where memory grows (memory-growth) instead";
static const char not_yet[] = "not available in this build yet";
static const char no_go[] =
	"memory in use is read from a runtime's own profiler (Go's heap profile), and the target "
	"runs no Go program; use Where memory grows (memory-growth) instead";
static const char jvm_no_attach[] =
	"memory of a Java program is read from the JVM itself, through its attach mechanism, "
	"and a JVM of the target disables it (-XX:+DisableAttachMechanism); use Where memory "
	"grows (memory-growth) instead";
static const char node_no_inspector[] =
	"memory of a Node.js program is read from V8's sampling heap profiler, through its "
	"inspector, and a Node.js of the target cannot have it opened (started with "
	"--disable-sigusr1, or older than Node.js 20); use Where memory grows (memory-growth) "
	"instead";
static const char go_no_pprof[] =
	"memory in use is read from the Go program's own profiler, so the program must serve "
	"net/http/pprof on a local port, and it does not (process 12: it listens on no TCP port); "
	"use Where memory grows (memory-growth) instead";
static const char go_locks[] =
	"a Go program waits on locks in the Go scheduler, not in the kernel, so its lock waits are "
	"read from its own mutex and block profiles: the program must serve net/http/pprof on a "
	"local port, and it does not (process 12: it listens on no TCP port)";
static const char go_locks_unknown[] =
	"a Go program waits on locks in the Go scheduler, not in the kernel, so its lock waits are "
	"read from its own mutex and block profiles: the program must serve net/http/pprof on a "
	"local port, and it does not (no endpoint found)";
static const char go_no_pprof_unknown[] =
	"memory in use is read from the Go program's own profiler, so the program must serve "
	"net/http/pprof on a local port, and it does not (no endpoint found); use Where memory "
	"grows (memory-growth) instead";
/* Marks rows whose answer is "not available in this build yet" until the question's issue
 * lands (question.c "implemented"), then NULL. */
static const char until_built[] = "<until built>";

static const char *expected(const char *want, enum question q)
{
	if (want != until_built)
		return want;
	return question_info(q)->implemented ? NULL : not_yet;
}

static void test_question_reason(void **state)
{
	static const struct {
		enum question q;
		enum target_kind kind;
		unsigned int runtimes;
		const char *reason;	/* NULL: available */
	} cases[] = {
		/* cpu: always, for every target and runtime */
		{ Q_CPU, TARGET_SERVER, 0, NULL },
		{ Q_CPU, TARGET_SERVER, ALL, NULL },
		{ Q_CPU, TARGET_PIDS, PY, NULL },
		{ Q_CPU, TARGET_SERVICE, PY | JVM | GO, NULL },
		{ Q_CPU, TARGET_UNIT, NATIVE, NULL },
		{ Q_CPU, TARGET_CONTAINER, 0, NULL },
		/* memory held and allocated: never for a whole server, whatever runs there */
		{ Q_MEMORY_HELD, TARGET_SERVER, 0, not_server },
		{ Q_MEMORY_ALLOC, TARGET_SERVER, 0, not_server },
		{ Q_MEMORY_HELD, TARGET_SERVER, PY, not_server },
		{ Q_MEMORY_ALLOC, TARGET_SERVER, NATIVE | JVM, not_server },
		/* ... and never for Python, which has no profiler an outside tool can read */
		{ Q_MEMORY_HELD, TARGET_SERVICE, PY, python_memory },
		{ Q_MEMORY_ALLOC, TARGET_SERVICE, PY, python_memory },
		{ Q_MEMORY_HELD, TARGET_PIDS, PY | NATIVE, python_memory },
		{ Q_MEMORY_ALLOC, TARGET_UNIT, PY | JVM, python_memory },
		{ Q_MEMORY_ALLOC, TARGET_CONTAINER, ALL, python_memory },
		/* Go: read from the program's net/http/pprof, which it must serve */
		{ Q_MEMORY_HELD, TARGET_SERVICE, GOPP, NULL },
		{ Q_MEMORY_ALLOC, TARGET_PIDS, GOPP | NATIVE, NULL },
		{ Q_MEMORY_HELD, TARGET_CONTAINER, GO, go_no_pprof },
		{ Q_MEMORY_ALLOC, TARGET_UNIT, GO | NATIVE, go_no_pprof },
		{ Q_MEMORY_HELD, TARGET_SERVER, GOPP, not_server },
		{ Q_MEMORY_HELD, TARGET_PIDS, GOPP | PY, python_memory },
		/* no Go program at all; a JVM answers them itself, unless it refuses attach */
		{ Q_MEMORY_HELD, TARGET_SERVICE, 0, no_go },
		{ Q_MEMORY_HELD, TARGET_SERVICE, NATIVE, no_go },
		{ Q_MEMORY_ALLOC, TARGET_PIDS, JVM, NULL },
		{ Q_MEMORY_HELD, TARGET_UNIT, JVM | NATIVE, NULL },
		{ Q_MEMORY_HELD, TARGET_PIDS, JVM | GO, NULL },
		{ Q_MEMORY_ALLOC, TARGET_PIDS, JVM | CHECK_JVM_NO_ATTACH, jvm_no_attach },
		{ Q_MEMORY_HELD, TARGET_SERVER, JVM, not_server },
		{ Q_MEMORY_HELD, TARGET_PIDS, JVM | PY, python_memory },
		/* Node.js: V8's sampling heap profiler, through its inspector, when it opens */
		{ Q_MEMORY_HELD, TARGET_PIDS, NODE, NULL },
		{ Q_MEMORY_ALLOC, TARGET_SERVICE, NODE | NATIVE, NULL },
		{ Q_MEMORY_ALLOC, TARGET_PIDS, NODE | CHECK_NODE_NO_INSPECTOR, node_no_inspector },
		{ Q_MEMORY_HELD, TARGET_SERVER, NODE, not_server },
		{ Q_MEMORY_HELD, TARGET_PIDS, NODE | PY, python_memory },
		{ Q_CPU, TARGET_PIDS, NODE | CHECK_NODE_NO_INSPECTOR, NULL },
		/* locks of Go programs only: their own mutex and block profiles */
		{ Q_LOCKS, TARGET_PIDS, GO, go_locks },
		{ Q_LOCKS, TARGET_SERVICE, GOPP, NULL },
		{ Q_LOCKS, TARGET_PIDS, GO | NATIVE, NULL },
		{ Q_LOCKS, TARGET_SERVER, GO, NULL },
		/* eBPF questions stay available for Go without pprof */
		{ Q_THREADS, TARGET_PIDS, GO, NULL },
		{ Q_CPU, TARGET_PIDS, GO, NULL },
		/* memory growth is read from outside: offered for a server and for Python */
		{ Q_MEMORY_GROWTH, TARGET_SERVER, 0, until_built },
		{ Q_MEMORY_GROWTH, TARGET_SERVICE, PY, until_built },
		{ Q_WALL, TARGET_SERVER, 0, until_built },
		{ Q_WALL, TARGET_PIDS, PY, until_built },
		{ Q_THREADS, TARGET_SERVER, ALL, until_built },
		{ Q_LOCKS, TARGET_UNIT, NATIVE, until_built },
		{ Q_LOCKS, TARGET_SERVER, PY, until_built },
		/* not a question */
		{ Q_COUNT, TARGET_SERVER, 0, "unknown question" },
		{ Q_COUNT, TARGET_SERVICE, PY, "unknown question" },
		{ (enum question)-1, TARGET_PIDS, 0, "unknown question" },
		{ (enum question)1000, TARGET_SERVER, 0, "unknown question" },
	};
	const char *got, *want;
	char buf[768];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		got = check_question_reason(cases[i].q, cases[i].kind, cases[i].runtimes,
					    "process 12: it listens on no TCP port", buf,
					    sizeof(buf));
		want = (unsigned)cases[i].q < Q_COUNT ? expected(cases[i].reason, cases[i].q) :
							cases[i].reason;
		if (!want)
			assert_null(got);
		else
			assert_string_equal(got, want);
	}
}

/* Every question, every target kind: the rules in the order check.h gives them. */
static void test_question_reason_all(void **state)
{
	static const unsigned int runtimes[] = { 0, NATIVE, PY, JVM | GO, ALL, GOPP, ALL | GOPP,
						 GO };
	const struct question_info *qi;
	const char *got, *want;
	char buf[768];
	int q, k;
	size_t r;

	(void)state;
	for (q = 0; q < Q_COUNT; q++) {
		qi = question_info(q);
		for (k = TARGET_SERVER; k <= TARGET_SERVICE; k++) {
			for (r = 0; r < ARRAY_SIZE(runtimes); r++) {
				print_message("question %s, target %s, runtimes %#x\n", qi->id,
					      target_kind_name(k), runtimes[r]);
				if (k == TARGET_SERVER && !qi->server)
					want = not_server;
				else if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) &&
					 (runtimes[r] & PY))
					want = python_memory;
				else if (!qi->implemented)
					want = not_yet;
				else if (q == Q_LOCKS && k != TARGET_SERVER && runtimes[r] == GO)
					want = go_locks_unknown;
				else if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) &&
					 (runtimes[r] & JVM))
					want = NULL; /* the JVM answers itself */
				else if ((q == Q_MEMORY_HELD || q == Q_MEMORY_ALLOC) &&
					 !(runtimes[r] & CHECK_GO_PPROF))
					want = runtimes[r] & GO ? go_no_pprof_unknown : no_go;
				else
					want = NULL;
				got = check_question_reason(q, k, runtimes[r], NULL, buf,
							    sizeof(buf));
				if (!want)
					assert_null(got);
				else
					assert_string_equal(got, want);
			}
		}
	}
}

/* --- check_run on a fake /proc ---------------------------------------------------------------- */

/* Two nginx processes in a unit. */
static int setup_fake(void **state)
{
	struct fake_proc *fp;

	if (setup_fake_proc(state))
		return -1;
	fp = *state;
	fake_proc_add(fp->root, 200, "daemon", "0::/system.slice/nginx.service\n", NULL, 0, 0);
	fake_proc_add(fp->root, 201, "daemon", "0::/system.slice/nginx.service\n", NULL, 0, 0);
	return 0;
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void test_run(void **state)
{
	struct fake_proc *fp = *state;
	static const struct {
		struct capture_target t;
		int ret;	/* 1: ready or not (0 or -EPERM, as this process's capabilities say) */
		const char *kind, *description, *err;
	} cases[] = {
		{ { .kind = TARGET_UNIT, .name = "nginx.service" }, 1, "unit", "Unit nginx.service" },
		{ { .kind = TARGET_UNIT, .name = "nginx" }, 1, "unit", "Unit nginx" },
		{ { .kind = TARGET_SERVER }, 1, "server", "this server" },
		{ { .kind = TARGET_PIDS, .pids = { 200, 201 }, .npids = 2 }, 1, "pids", "2 processes" },
		{ { .kind = TARGET_UNIT, .name = "nosuch.service" }, -ENOENT, NULL, NULL,
		  "no process of Unit nosuch.service is running; units seen on this server: "
		  "nginx.service" },
		{ { .kind = TARGET_SERVICE, .name = "billing" }, -ENOENT, NULL, NULL,
		  "no process of Service billing is running; services seen on this server: none" },
		{ { .kind = TARGET_PIDS, .pids = { 200, 999 }, .npids = 2 }, -ENOENT, NULL, NULL,
		  "no process with pid 999 is running" },
	};
	struct check_result cr;
	char *json, *text, err[1024], line[1200];
	json_t *doc, *q, *l;
	char buf[768];
	json_error_t jerr;
	size_t i, k;
	int ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct check_opts o = { .target = cases[i].t, .proc_root = fp->root };

		print_message("case %zu\n", i);
		json = text = NULL;
		err[0] = '\0';
		ret = check_run(&o, &cr, err, sizeof(err));
		if (cases[i].ret < 0) {
			assert_int_equal(ret, cases[i].ret);
			assert_string_equal(err, cases[i].err);
			continue;
		}
		assert_int_equal(ret, 0);
		json = cr.json;
		text = cr.text;
		/* not ready is data: below, ret is 0 when ready and -EPERM when not, as before */
		ret = cr.ready ? 0 : -EPERM;
		assert_non_null(json);
		assert_non_null(text);
		doc = json_loads(json, 0, &jerr);
		assert_non_null(doc);

		assert_true(json_is_boolean(json_object_get(doc, "ready")));
		assert_int_equal(json_is_true(json_object_get(doc, "ready")), ret == 0);
		assert_string_equal(jstr(doc, "message"),
				    ret == 0 ? "Ready to profile" : jstr(doc, "message"));
		if (ret)
			assert_memory_equal(jstr(doc, "message"), "Cannot profile right now: ", 26);
		assert_int_equal(json_array_size(json_object_get(doc, "reasons")) == 0, ret == 0);
		assert_string_equal(jstr(json_object_get(doc, "target"), "kind"), cases[i].kind);
		assert_string_equal(jstr(json_object_get(doc, "target"), "description"),
				    cases[i].description);
		assert_string_equal(jstr(doc, "target_description"), cases[i].description);
		/* the fake processes have no executable: no runtime to show */
		assert_true(json_is_array(json_object_get(doc, "processes")));
		assert_true(json_is_array(json_object_get(doc, "runtimes")));
		assert_memory_equal(jstr(doc, "kernel"), "Linux ", 6);
		assert_true(jstr(doc, "processor")[0] != '\0');

		assert_int_equal(json_array_size(json_object_get(doc, "questions")), Q_COUNT);
		json_array_foreach(json_object_get(doc, "questions"), k, q) {
			const struct question_info *qi = question_info(k);
			const char *why = ret ? "the server is not ready to profile" :
					      check_question_reason(k, cases[i].t.kind, 0, NULL,
								    buf, sizeof(buf));

			print_message("  question %s\n", qi->id);
			assert_string_equal(jstr(q, "id"), qi->id);
			assert_string_equal(jstr(q, "text"), qi->text);
			assert_true(json_is_boolean(json_object_get(q, "available")));
			assert_int_equal(json_is_true(json_object_get(q, "available")), why == NULL);
			if (why)
				assert_string_equal(jstr(q, "reason"), why);
			else	/* documented as absent, not null */
				assert_null(json_object_get(q, "reason"));
		}
		assert_true(json_array_size(json_object_get(doc, "languages")) > 0);
		json_array_foreach(json_object_get(doc, "languages"), k, l) {
			jstr(l, "language");
			jstr(l, "versions");
			jstr(l, "how");
			jstr(l, "test");
		}

		/* the text says the same */
		snprintf(line, sizeof(line), "%s\n", jstr(doc, "message"));
		assert_memory_equal(text, line, strlen(line));
		snprintf(line, sizeof(line), "\nTarget: %s\n", cases[i].description);
		assert_non_null(strstr(text, line));
		if (!json_array_size(json_object_get(doc, "runtimes")))
			assert_non_null(strstr(text, "\nRuntimes: none found\n"));
		snprintf(line, sizeof(line), "\nKernel: %s\n", jstr(doc, "kernel"));
		assert_non_null(strstr(text, line));
		snprintf(line, sizeof(line), "\nProcessor: %s\n", jstr(doc, "processor"));
		assert_non_null(strstr(text, line));
		assert_non_null(strstr(text, "\nWhat do you want to know?\n"));
		assert_non_null(strstr(text, "\nWhich languages can be profiled?\n"));
		json_decref(doc);
		free(json);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_question_reason),
		cmocka_unit_test(test_question_reason_all),
		cmocka_unit_test_setup_teardown(test_run, setup_fake, teardown_fake_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
