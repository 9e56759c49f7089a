// SPDX-License-Identifier: Apache-2.0
/* Unit tests for profile/report.c: shares by owner, the function "of yours", the answer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "base/text.h"
#include "profile/profile.h"
#include "profile/report.h"

struct fr {
	const char *fn;		/* NULL: unnamed */
	const char *mapping;
	enum prof_lang lang;
	int stripped;
	const char *file;	/* source file (DWARF), or NULL */
};

/* A sample: owner, process, pid, count, frames leaf first. */
struct smp {
	const char *owner, *process;
	uint32_t pid;
	int64_t count;
	struct fr frames[4];
};

static struct profile *build(const struct smp *s, size_t n)
{
	struct profile_opts po = { .owner_root = true };
	struct profile *p;
	size_t i, j;

	assert_int_equal(profile__new(&po, &p), 0);
	for (i = 0; i < n; i++) {
		uint32_t ids[4];
		size_t nf = 0;
		struct prof_labels l = { .owner = s[i].owner, .process = s[i].process,
					 .thread = s[i].process, .pid = s[i].pid, .tid = s[i].pid };
		int64_t v[2] = { s[i].count, s[i].count * 10 };

		for (j = 0; j < 4 && s[i].frames[j].mapping; j++) {
			struct prof_frame_info fi = { .function = s[i].frames[j].fn,
						      .mapping = s[i].frames[j].mapping,
						      .lang = s[i].frames[j].lang,
						      .address = 0x1000 + j,
						      .unnamed_stripped = s[i].frames[j].stripped,
						      .file = s[i].frames[j].file };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			ids[nf++] = id;
		}
		assert_int_equal(profile__add(p, ids, nf, &l, v), 0);
	}
	return p;
}

#define APP "/usr/local/bin/billing"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define K "[kernel.kallsyms]"

static const struct smp server[] = {
	{ "Unit billing.service", "billing", 10, 60,
	  { { "build_report", APP, PROF_LANG_NATIVE }, { "main", APP, PROF_LANG_NATIVE } } },
	/* memcpy in libc called from build_report: attributed to build_report */
	{ "Unit billing.service", "billing", 10, 15,
	  { { "__memmove_avx_unaligned", LIBC, PROF_LANG_NATIVE },
	    { "build_report", APP, PROF_LANG_NATIVE } } },
	/* a syscall: kernel frames above user frames */
	{ "Unit billing.service", "billing", 10, 5,
	  { { "do_syscall_64", K, PROF_LANG_KERNEL }, { "__libc_write", LIBC, PROF_LANG_NATIVE },
	    { "flush_out", APP, PROF_LANG_NATIVE } } },
	{ "Service checkout", "checkout", 20, 20,
	  { { NULL, "/app/checkout", PROF_LANG_NATIVE, 1 }, { NULL, "/app/checkout", PROF_LANG_NATIVE, 1 } } },
};

static void test_groups_and_answer(void **state)
{
	struct profile *p = build(server, ARRAY_SIZE(server));
	struct report *r;
	char buf[512];

	(void)state;
	assert_int_equal(report__new(p, NULL, &r), 0);
	assert_int_equal(r->total, 100);
	assert_int_equal(r->ngroups, 2);
	assert_string_equal(r->groups[0].owner, "Unit billing.service");
	assert_int_equal(r->groups[0].value, 80);
	assert_string_equal(r->groups[0].top_function, "build_report");
	assert_int_equal(r->groups[0].nprocs, 1);
	assert_int_equal(r->groups[0].procs[0].pid, 10);
	assert_string_equal(r->groups[1].owner, "Service checkout");
	assert_string_equal(r->groups[1].top_function, "checkout+0x1000");
	assert_string_equal(r->top[0].name, "build_report");
	assert_int_equal(r->top[0].value, 75);
	/* unnamed: 20 of 100 */
	assert_true(r->unnamed_share > 19.9 && r->unnamed_share < 20.1);
	/* the stripped binary holds 20%, counted once per sample */
	assert_int_equal(r->nstripped, 1);
	assert_string_equal(r->stripped[0].path, "/app/checkout");
	assert_int_equal(r->stripped[0].value, 20);
	assert_true(r->languages & (1u << PROF_LANG_KERNEL));
	assert_true(r->languages & (1u << PROF_LANG_NATIVE));

	report_answer(r, 30, "the CPU time", "on this server", buf, sizeof(buf));
	assert_string_equal(buf, "Over 30 seconds, Unit billing.service used 80% of the CPU time on "
				 "this server, most of it in build_report. Next was Service "
				 "checkout, at 20%.");
	report__free(r);
	profile__free(p);
}

static void test_answer_rows(void **state)
{
	static const struct {
		struct smp s[2];
		size_t n;
		unsigned int secs;
		const char *answer;
	} cases[] = {
		{ { { "System", "kworker", 5, 3, { { "worker_thread", K, PROF_LANG_KERNEL } } } }, 1, 1,
		  "Over 1 second, System used 100% of the CPU time on this server, most of it in "
		  "worker_thread." },
		{ {}, 0, 10,
		  "Over 10 seconds, nothing used the CPU time on this server: no samples were taken." },
		/* only system frames: the leaf names it */
		{ { { "Signed-in sessions", "sh", 7, 2, { { "strlen", LIBC, PROF_LANG_NATIVE } } },
		    { "Other processes", "x", 8, 1, { { NULL, "/x", PROF_LANG_NATIVE } } } }, 2, 5,
		  "Over 5 seconds, Signed-in sessions used 67% of the CPU time on this server, most "
		  "of it in strlen. Next was Other processes, at 33%." },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile *p = build(cases[i].s, cases[i].n);
		struct report *r;
		char buf[512];

		print_message("case %zu\n", i);
		assert_int_equal(report__new(p, NULL, &r), 0);
		report_answer(r, cases[i].secs, "the CPU time", "on this server", buf, sizeof(buf));
		assert_string_equal(buf, cases[i].answer);
		report__free(r);
		profile__free(p);
	}
}

/* Go heap answers: bytes, objects (build() makes the second value ten times the first), and the
 * function of the program under the runtime's frames. */
static void test_answer_memory(void **state)
{
#define GOAPP "/usr/local/bin/app"
	static const struct {
		struct smp s[2];
		size_t n;
		unsigned int secs;
		const char *who;
		bool held;
		const char *answer;
	} cases[] = {
		{ { { "Service billing", "app", 7, 64 << 20,
		      { { "main.holdMemory", GOAPP, PROF_LANG_GO }, { "main.main", GOAPP, PROF_LANG_GO } } },
		    { "Service billing", "app", 7, 1 << 20,
		      { { "runtime.malg", GOAPP, PROF_LANG_GO }, { "runtime.newproc1", GOAPP, PROF_LANG_GO } } } },
		  2, 10, "process 7 (app)", true,
		  "At the end of 10 seconds, process 7 (app) held 65.0 MiB of Go heap in use (681574400 "
		  "objects), most of it (98%) allocated in main.holdMemory." },
		/* the runtime's allocator frames sit under the program's function */
		{ { { "Service billing", "app", 7, 3 << 29,
		      { { "runtime.mallocgc", GOAPP, PROF_LANG_GO }, { "runtime.makeslice", GOAPP, PROF_LANG_GO },
			{ "main.allocDuring", GOAPP, PROF_LANG_GO }, { "main.main", GOAPP, PROF_LANG_GO } } } },
		  1, 3, "Service billing", false,
		  "Over 3 seconds, Service billing allocated 1.5 GiB on the Go heap (16106127360 "
		  "objects), most of it (100%) in main.allocDuring." },
		/* a JVM's own records: Java frames under the class it allocated, which is never
		 * the answer while a frame is above it */
		{ { { "Service shop", "java", 9, 1 << 20,
		      { { "long[]", REPORT_CLASS_MAPPING, PROF_LANG_JAVA },
			{ "JavaMem.retainBlocks", "jfr", PROF_LANG_JAVA },
			{ "java.lang.Thread.run", "jfr", PROF_LANG_JAVA } } } },
		  1, 3, "process 9 (java)", true,
		  "At the end of 3 seconds, process 9 (java) held 1.0 MiB of Java heap in use "
		  "(10485760 sampled objects), most of it (100%) allocated in JavaMem.retainBlocks." },
		{ { { "Service shop", "java", 9, 1 << 20,
		      { { "byte[]", REPORT_CLASS_MAPPING, PROF_LANG_JAVA },
			{ "java.lang.Thread.run", "jfr", PROF_LANG_JAVA } } },
		    { "Service shop", "app", 7, 1 << 21,
		      { { "main.allocDuring", GOAPP, PROF_LANG_GO } } } },
		  2, 3, "Service shop", false,
		  "Over 3 seconds, Service shop allocated 3.0 MiB on the heap (31457280 objects), most "
		  "of it (67%) in main.allocDuring." },
		/* V8's sampling heap profiler: JavaScript frames; V8's built-ins (no script) and
		 * Node.js's own library go to the program's function */
		{ { { "Service web", "node", 11, 1 << 20,
		      { { "set", "[javascript]", PROF_LANG_NODE },
			{ "retainObjects", "/srv/app.js", PROF_LANG_NODE },
			{ "listOnTimeout", "node:internal/timers", PROF_LANG_NODE },
			{ "processTimers", "node:internal/timers", PROF_LANG_NODE } } } },
		  1, 3, "process 11 (node)", true,
		  "At the end of 3 seconds, process 11 (node) held 1.0 MiB of V8 heap in use "
		  "(10485760 sampled objects), most of it (100%) allocated in retainObjects." },
		/* V8 and a Go program together: the heap, objects */
		{ { { "Service web", "node", 11, 1 << 20,
		      { { "makeGarbage", "/srv/app.js", PROF_LANG_NODE } } },
		    { "Service web", "app", 7, 1 << 21,
		      { { "main.allocDuring", GOAPP, PROF_LANG_GO } } } },
		  2, 3, "Service web", false,
		  "Over 3 seconds, Service web allocated 3.0 MiB on the heap (31457280 objects), most "
		  "of it (67%) in main.allocDuring." },
		/* only Node.js's own library: its leaf frame stands */
		{ { { "Service web", "node", 11, 1 << 20,
		      { { "listOnTimeout", "node:internal/timers", PROF_LANG_NODE } } } },
		  1, 3, "Service web", false,
		  "Over 3 seconds, Service web allocated 1.0 MiB on the V8 heap (10485760 sampled "
		  "objects), most of it (100%) in listOnTimeout." },
		{ {}, 0, 10, "process 7 (app)", true,
		  "At the end of 10 seconds, process 7 (app) held no Go heap memory that its heap "
		  "profile shows." },
		{ {}, 0, 3, NULL, false, "Over 3 seconds, the target allocated nothing on the Go heap." },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile *p = build(cases[i].s, cases[i].n);
		struct report *r;
		char buf[512];

		print_message("case %zu\n", i);
		assert_int_equal(report__new(p, NULL, &r), 0);
		report_answer_memory(r, cases[i].secs, cases[i].who, cases[i].held, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].answer);
		report__free(r);
		profile__free(p);
	}
	/* no report at all */
	{
		char buf[128];

		report_answer_memory(NULL, 5, "x", true, buf, sizeof(buf));
		assert_string_equal(buf, "At the end of 5 seconds, x held no Go heap memory that its "
					 "heap profile shows.");
	}
#undef GOAPP
}

static void test_truncated_answer(void **state)
{
	struct profile *p = build(server, ARRAY_SIZE(server));
	struct report *r;
	char small[16];
	int n;

	(void)state;
	assert_int_equal(report__new(p, NULL, &r), 0);
	n = report_answer(r, 30, "the CPU time", "on this server", small, sizeof(small));
	assert_true(n > (int)sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	report__free(r);
	profile__free(p);
}

/* Hostile names: the answer is valid UTF-8, cut at a character boundary, whatever the cut. */
static void test_hostile_answer(void **state)
{
	/* "hot" + the asm label's bytes, in a process whose comm the kernel cut mid-character */
	static const struct smp hostile[] = {
		{ "Service \xd0\xb0\xd0\xb1\xd0\xb2", "\xd0\xb0\xd0\xb1\xd0", 7, 10,
		  { { "hot\xff\xfe\xd0\xb0\xd0\xb0", APP, PROF_LANG_NATIVE } } },
	};
	static const char want[] = "Over 30 seconds, process 7 (\xd0\xb0?) used 50% of the CPU "
				   "time on this server, most of it in hot??\xd0\xb0\xd0\xb0.";
	struct profile *p = build(hostile, ARRAY_SIZE(hostile));
	struct report *r;
	char buf[256];
	size_t size;
	int n;

	(void)state;
	assert_int_equal(report__new(p, NULL, &r), 0);
	for (size = 1; size <= sizeof(want); size++) {
		print_message("size %zu\n", size);
		n = report_answer_target(r, 30, "process 7 (\xd0\xb0\xd0)", 50, "the CPU time",
					 "on this server", buf, size);
		assert_int_equal(n, (int)sizeof(want) - 1);
		assert_true(text_utf8_is_valid(buf, strlen(buf)));
		assert_true(!strncmp(buf, want, strlen(buf)));
		/* a cut drops at most one character (<= 3 bytes of it fit) */
		assert_true(strlen(buf) + 4 > size - 1 || size == sizeof(want));
	}
	assert_string_equal(buf, want);
	n = report_answer(r, 30, "the CPU time", "on this server", buf, sizeof(buf));
	assert_true(text_utf8_is_valid(buf, strlen(buf)));
	assert_non_null(strstr(buf, "Service \xd0\xb0\xd0\xb1\xd0\xb2"));
	report__free(r);
	profile__free(p);
}

/* One row of a predicate's table: the input and whether the predicate holds. */
struct pred_case {
	const char *in;
	bool want;
};

static void check_pred(bool (*pred)(const char *), const struct pred_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		print_message("case %zu: %s\n", i, cases[i].in ? cases[i].in : "NULL");
		assert_int_equal(pred(cases[i].in), cases[i].want);
	}
}

static void test_system_dso(void **state)
{
	static const struct pred_case cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "/lib64/ld-linux-x86-64.so.2", true },
		{ "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", true },
		{ "/usr/lib/jvm/java-17/lib/server/libjvm.so", true },
		{ "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", true },
		{ "[vdso]", true },
		{ "[kernel.kallsyms]", true },
		{ "/usr/lib/x86_64-linux-gnu/libdw-0.188.so", true },	/* any distro .so */
		{ "/lib64/libfoo.so.1", true },
		{ "/usr/lib/chromium/chromium", false },	/* an executable, not a library */
		{ "/usr/local/lib/libbilling.so", false },	/* installed by the user */
		{ "/usr/bin/python3.11", true },		/* a static CPython */
		{ "/root/.pyenv/versions/3.6.15/bin/python3.6", true },
		{ "/app/python-billing", false },
		{ "/usr/local/bin/billing-worker", false },
		{ "/app/libbilling.so", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	check_pred(report_is_system_dso, cases, ARRAY_SIZE(cases));
}

static void test_go_std(void **state)
{
	static const struct pred_case cases[] = {
		{ "runtime.mallocgc", true },
		{ "runtime.gopark", true },
		{ "sync.(*Mutex).Lock", true },
		{ "net/http.(*conn).serve", true },
		{ "internal/poll.(*FD).Read", true },
		{ "encoding/json.Marshal", true },
		{ "main.holdMemory", false },
		{ "main.(*server).handle", false },
		{ "main.main.func1", false },
		{ "github.com/acme/billing.Build", false },
		{ "github.com/acme/billing/internal/db.(*Pool).Get", false },
		{ "example.org/x.F", false },
		{ "mainly.F", true },		/* a std-like package that only starts with main */
		{ "noDotAtAll", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	check_pred(report_is_go_std, cases, ARRAY_SIZE(cases));
}

static void test_python_std(void **state)
{
	static const struct pred_case cases[] = {
		{ "/usr/lib/python3.11/json/encoder.py", true },
		{ "/usr/lib/python3.11/re/__init__.py", true },
		{ "/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/base_events.py", true },
		{ "/usr/lib64/python3.9/threading.py", true },
		{ "/opt/py/lib/python3.13t/json/decoder.py", true },	/* free-threaded build */
		{ "/usr/local/lib/python2.7/socket.py", true },
		{ "lib/python3.11/json/encoder.py", true },		/* relative to the cwd */
		{ "<frozen importlib._bootstrap>", true },
		{ "<frozen runpy>", true },
		/* third-party packages are the application's */
		{ "/usr/lib/python3/dist-packages/requests/api.py", false },
		{ "/usr/local/lib/python3.11/site-packages/flask/app.py", false },
		{ "/app/venv/lib/python3.11/site-packages/django/core/handlers/base.py", false },
		{ "/root/.pyenv/versions/3.12.1/lib/python3.12/site-packages/pip/main.py", false },
		/* the application, also when its path looks a little like a prefix */
		{ "/srv/app/handlers.py", false },
		{ "/usr/lib/python3/foo.py", false },	/* no X.Y version: not one stdlib */
		{ "/usr/lib/python3./foo.py", false },
		{ "/usr/lib/python3.11.py", false },
		{ "/home/u/mylib/python3.11/x.py", false },	/* not under lib/ or lib64/ */
		{ "/usr/libpython3.11/x.py", false },
		{ "/srv/python/lib/app.py", false },
		{ "<generated>", false },	/* exec(compile(src, "<generated>", "exec")) */
		{ "<string>", false },
		{ "<frozen", false },
		{ "<frozenset>", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	check_pred(report_is_python_std, cases, ARRAY_SIZE(cases));
}

static void test_java_std(void **state)
{
	static const struct pred_case cases[] = {
		{ "java.lang.Thread.sleep", true },
		{ "java.util.concurrent.locks.LockSupport.park", true },
		{ "jdk.internal.misc.Unsafe.setMemory0", true },
		{ "javax.net.ssl.SSLSocket.read", true },
		{ "sun.nio.ch.EPoll.wait", true },
		{ "com.sun.net.httpserver.HttpServer.start", true },
		/* the application's, also when its name starts like a JDK package */
		{ "JavaWork.mixStep", false },
		{ "javawork.Main.run", false },
		{ "com.example.Service.handle", false },
		{ "org.springframework.web.servlet.DispatcherServlet.doDispatch", false },
		{ "jdkx.Foo.bar", false },
		{ "java", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	check_pred(report_is_java_std, cases, ARRAY_SIZE(cases));
}

static void test_native_std(void **state)
{
	static const struct pred_case cases[] = {
		{ "/usr/include/c++/12/bits/stl_vector.h", true },
		{ "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_algo.h", true },
		{ "/usr/lib/llvm-14/bin/../include/c++/v1/vector", true },
		{ "/rustc/4b91a6ea7258a947e59c6522cd5898e7c0a6a88f/library/core/src/iter/range.rs", true },
		{ "/usr/src/rustc-1.63.0/library/alloc/src/vec/mod.rs", true },
		{ "/rustc/abc/library/std/src/rt.rs", true },
		/* the application's */
		{ "/work/main/tests/workloads/native/ledger.cpp", false },
		{ "/src/billing/include/cache.h", false },
		{ "/src/ledger/src/main.rs", false },
		{ "/home/me/library/corelib/src/x.rs", false },
		{ "/usr/include/stdio.h", false }, /* C's headers: static inline helpers are few */
		{ "include/c++", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	check_pred(report_is_native_std, cases, ARRAY_SIZE(cases));
}

/* A Python program in json.dumps, re.match and importlib under handle_request: the answer and
 * every top function name handle_request (as a C program's memcpy under build_report); a
 * third-party package and exec'd code are the application's. */
static void test_python_answer(void **state)
{
#define PYAPP "/srv/app/server.py"
#define PYLIB "/usr/lib/python3.11/"
	static const struct smp py[] = {
		{ "Service web", "python3", 9, 50,
		  { { "JSONEncoder.encode", PYLIB "json/encoder.py", PROF_LANG_PYTHON },
		    { "dumps", PYLIB "json/__init__.py", PROF_LANG_PYTHON },
		    { "handle_request", PYAPP, PROF_LANG_PYTHON },
		    { "serve", PYAPP, PROF_LANG_PYTHON } } },
		{ "Service web", "python3", 9, 20,
		  { { "_compile", PYLIB "re/__init__.py", PROF_LANG_PYTHON },
		    { "match", PYLIB "re/__init__.py", PROF_LANG_PYTHON },
		    { "handle_request", PYAPP, PROF_LANG_PYTHON } } },
		/* the interpreter's C frames above the stdlib frame, and a frozen module */
		{ "Service web", "python3", 9, 5,
		  { { "_PyEval_EvalFrameDefault", "/usr/bin/python3.11", PROF_LANG_NATIVE },
		    { "_find_and_load", "<frozen importlib._bootstrap>", PROF_LANG_PYTHON },
		    { "handle_request", PYAPP, PROF_LANG_PYTHON } } },
		{ "Service web", "python3", 9, 15,
		  { { "Session.send", "/usr/lib/python3/dist-packages/requests/sessions.py",
		      PROF_LANG_PYTHON },
		    { "handle_request", PYAPP, PROF_LANG_PYTHON } } },
		{ "Service web", "python3", 9, 10,
		  { { "hot", "<generated>", PROF_LANG_PYTHON },
		    { "json_only", PYLIB "json/encoder.py", PROF_LANG_PYTHON } } },
	};
	struct profile *p = build(py, ARRAY_SIZE(py));
	struct report *r;
	char buf[512];

	(void)state;
	assert_int_equal(report__new(p, NULL, &r), 0);
	assert_int_equal(r->ngroups, 1);
	assert_string_equal(r->groups[0].top_function, "handle_request");
	assert_int_equal(r->ntop, 3);
	assert_string_equal(r->top[0].name, "handle_request");
	assert_int_equal(r->top[0].value, 75);
	assert_string_equal(r->top[1].name, "Session.send");
	assert_int_equal(r->top[1].value, 15);
	assert_string_equal(r->top[2].name, "hot");
	assert_true(r->languages & (1u << PROF_LANG_PYTHON));
	assert_int_equal(r->nstripped, 0);
	report_answer(r, 10, "the CPU time", "on this server", buf, sizeof(buf));
	assert_string_equal(buf, "Over 10 seconds, Service web used 100% of the CPU time on this "
				 "server, most of it in handle_request.");
	report__free(r);
	profile__free(p);
#undef PYLIB
#undef PYAPP
}

/* C++'s standard library inlined into the program's code (std::vector<long>::at() in settle,
 * from DWARF) is settle's time, as libc's memcpy is; code of the program's own files is its. */
static void test_native_std_answer(void **state)
{
#define CPP "/srv/ledger/ledger.cpp"
#define STL "/usr/include/c++/12/bits/"
	static const struct smp cpp[] = {
		{ "Service ledger", "ledger", 7, 60,
		  { { "std::vector<long, std::allocator<long> >::at(unsigned long)", APP,
		      PROF_LANG_NATIVE, 0, STL "stl_vector.h" },
		    { "billing::Ledger<long>::settle(unsigned long)", APP, PROF_LANG_NATIVE, 0, CPP },
		    { "main", APP, PROF_LANG_NATIVE, 0, CPP } } },
		{ "Service ledger", "ledger", 7, 30,
		  { { "billing::Ledger<long>::settle(unsigned long)", APP, PROF_LANG_NATIVE, 0, CPP },
		    { "main", APP, PROF_LANG_NATIVE, 0, CPP } } },
		{ "Service ledger", "ledger", 7, 10,
		  { { "std::__introsort_loop<long*, long, __gnu_cxx::__ops::_Iter_less_iter>", APP,
		      PROF_LANG_NATIVE, 0, STL "stl_algo.h" },
		    { "main", APP, PROF_LANG_NATIVE, 0, CPP } } },
	};
	struct profile *p = build(cpp, ARRAY_SIZE(cpp));
	struct report *r;

	(void)state;
	assert_int_equal(report__new(p, NULL, &r), 0);
	assert_string_equal(r->groups[0].top_function, "billing::Ledger<long>::settle(unsigned long)");
	assert_int_equal(r->ntop, 2);
	assert_int_equal(r->top[0].value, 90);
	assert_string_equal(r->top[1].name, "main");
	assert_int_equal(r->top[1].value, 10);
	report__free(r);
	profile__free(p);
#undef STL
#undef CPP
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_and_answer),
		cmocka_unit_test(test_answer_rows),
		cmocka_unit_test(test_answer_memory),
		cmocka_unit_test(test_truncated_answer),
		cmocka_unit_test(test_hostile_answer),
		cmocka_unit_test(test_system_dso),
		cmocka_unit_test(test_go_std),
		cmocka_unit_test(test_python_std),
		cmocka_unit_test(test_java_std),
		cmocka_unit_test(test_native_std),
		cmocka_unit_test(test_native_std_answer),
		cmocka_unit_test(test_python_answer),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
