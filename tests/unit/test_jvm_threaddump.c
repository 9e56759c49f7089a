// SPDX-License-Identifier: Apache-2.0
/*
 * The thread dump parser (runtimes/jvm/jvm_threaddump.h) over trimmed excerpts of real dumps
 * (Java 17: OpenJDK 17.0.15 Debian, nid in hex; Java 25: Temurin 25.0.3, nid in decimal and
 * "[tid]" after "#N"), then table rows for headers, frames and lock lines, and the hostile
 * cases: quotes and bad bytes in names, over-long lines, the frame and thread caps, numbers
 * past 32 bits, the size cap.
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

#include "base/text.h"
#include "runtimes/jvm/jvm_threaddump.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A literal with its length, NUL bytes included. */
#define S(lit) lit, sizeof(lit) - 1

static const char jdk17[] =
	"2026-12-02 02:54:06\n"
	"Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):\n"
	"\n"
	"Threads class SMR info:\n"
	"_java_thread_list=0x00007fbf6c002750, length=16, elements={\n"
	"0x00007fbffc017ed0, 0x00007fbffc0f83b0, 0x00007fbffc0f9790, 0x00007fbffc101220,\n"
	"}\n"
	"\n"
	"\"main\" #1 prio=5 os_prio=0 cpu=100.93ms elapsed=3.30s tid=0x00007fbffc017ed0 nid=0x21e2 waiting on condition  [0x00007fc00251e000]\n"
	"   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
	"\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)\n"
	"\tat JavaWork.main(JavaWork.java:81)\n"
	"\n"
	"\"Finalizer\" #3 daemon prio=8 os_prio=0 cpu=0.57ms elapsed=3.22s tid=0x00007fbffc0f9790 nid=0x21ea in Object.wait()  [0x00007fbfd882a000]\n"
	"   java.lang.Thread.State: WAITING (on object monitor)\n"
	"\tat java.lang.Object.wait(java.base@17.0.15/Native Method)\n"
	"\t- waiting on <0x000000069ec02f40> (a java.lang.ref.ReferenceQueue$Lock)\n"
	"\tat java.lang.ref.ReferenceQueue.remove(java.base@17.0.15/ReferenceQueue.java:155)\n"
	"\t- locked <0x000000069ec02f40> (a java.lang.ref.ReferenceQueue$Lock)\n"
	"\tat java.lang.ref.Finalizer$FinalizerThread.run(java.base@17.0.15/Finalizer.java:172)\n"
	"\n"
	"\"C2 CompilerThread0\" #7 daemon prio=9 os_prio=0 cpu=10.23ms elapsed=3.21s tid=0x00007fbffc105390 nid=0x21ee waiting on condition  [0x0000000000000000]\n"
	"   java.lang.Thread.State: RUNNABLE\n"
	"   No compile task\n"
	"\n"
	"\"contender-1\" #14 daemon prio=5 os_prio=0 cpu=1243.72ms elapsed=3.19s tid=0x00007fbffc11ae10 nid=0x21f6 runnable  [0x00007fbfc9bfc000]\n"
	"   java.lang.Thread.State: RUNNABLE\n"
	"\tat JavaWork.mixStep(JavaWork.java:25)\n"
	"\tat JavaWork.spinLoop(JavaWork.java:33)\n"
	"\tat JavaWork.holdLock(JavaWork.java:54)\n"
	"\t- locked <0x000000069ec19790> (a java.lang.Object)\n"
	"\tat JavaWork.contendForever(JavaWork.java:60)\n"
	"\tat JavaWork$$Lambda$3/0x00007fbf7c001000.run(Unknown Source)\n"
	"\tat java.lang.Thread.run(java.base@17.0.15/Thread.java:840)\n"
	"\n"
	"\"contender-2\" #15 daemon prio=5 os_prio=0 cpu=254.56ms elapsed=3.18s tid=0x00007fbffc11c010 nid=0x21f7 waiting for monitor entry  [0x00007fbfc9afd000]\n"
	"   java.lang.Thread.State: BLOCKED (on object monitor)\n"
	"\tat JavaWork.holdLock(JavaWork.java:54)\n"
	"\t- waiting to lock <0x000000069ec19790> (a java.lang.Object)\n"
	"\tat JavaWork.contendForever(JavaWork.java:60)\n"
	"\n"
	"\"pool-1-thread-1\" #16 prio=5 os_prio=0 cpu=0.30ms elapsed=3.10s tid=0x00007fbf6c003000 nid=0x2201 waiting on condition  [0x00007fbfc99fd000]\n"
	"   java.lang.Thread.State: WAITING (parking)\n"
	"\tat jdk.internal.misc.Unsafe.park(java.base@17.0.15/Native Method)\n"
	"\t- parking to wait for  <0x000000069ec20000> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n"
	"\tat java.util.concurrent.locks.LockSupport.park(java.base@17.0.15/LockSupport.java:341)\n"
	"\n"
	"\"VM Thread\" os_prio=0 cpu=0.81ms elapsed=3.22s tid=0x00007fbffc0f4420 nid=0x21e8 runnable  \n"
	"\n"
	"\"GC Thread#0\" os_prio=0 cpu=0.33ms elapsed=3.29s tid=0x00007fbffc041640 nid=0x21e3 runnable  \n"
	"\n"
	"JNI global refs: 4, weak refs: 0\n"
	"\n";

static const char jdk25[] =
	"2026-12-02 02:54:10\n"
	"Full thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode, sharing):\n"
	"\n"
	"Threads class SMR info:\n"
	"_java_thread_list=0x00007ff838002a40, length=15, elements={\n"
	"0x00007ff88402a840, 0x00007ff8840bc5a0, 0x00007ff8840bddd0, 0x00007ff8840bf820,\n"
	"}\n"
	"\n"
	"\"main\" #3 [8711] prio=5 os_prio=0 cpu=101.86ms elapsed=3.27s tid=0x00007ff88402a840 nid=8711 waiting on condition  [0x00007ff888ffe000]\n"
	"   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
	"\tat java.lang.Thread.sleepNanos0(java.base@25.0.3/Native Method)\n"
	"\tat java.lang.Thread.sleepNanos(java.base@25.0.3/Thread.java:509)\n"
	"\tat java.lang.Thread.sleep(java.base@25.0.3/Thread.java:540)\n"
	"\tat JavaWork.main(JavaWork.java:81)\n"
	"\n"
	"\"contender-1\" #23 [8732] daemon prio=5 os_prio=0 cpu=768.96ms elapsed=3.13s tid=0x00007ff8840e74e0 nid=8732 waiting for monitor entry  [0x00007ff864341000]\n"
	"   java.lang.Thread.State: BLOCKED (on object monitor)\n"
	"\tat JavaWork.holdLock(JavaWork.java:54)\n"
	"\t- waiting to lock <0x000000069ec16fa0> (a java.lang.Object)\n"
	"\tat JavaWork.contendForever(JavaWork.java:60)\n"
	"\tat JavaWork$$Lambda/0x000000000b040660.run(Unknown Source)\n"
	"\tat java.lang.Thread.runWith(java.base@25.0.3/Thread.java:1487)\n"
	"\tat java.lang.Thread.run(java.base@25.0.3/Thread.java:1474)\n"
	"\n"
	"\"contender-2\" #24 [8733] daemon prio=5 os_prio=0 cpu=743.06ms elapsed=3.13s tid=0x00007ff8840e8a10 nid=8733 runnable  [0x00007ff864240000]\n"
	"   java.lang.Thread.State: RUNNABLE\n"
	"\tat JavaWork.mixStep(JavaWork.java:25)\n"
	"\tat JavaWork.spinLoop(JavaWork.java:33)\n"
	"\tat JavaWork.holdLock(JavaWork.java:54)\n"
	"\t- locked <0x000000069ec16fa0> (a java.lang.Object)\n"
	"\tat JavaWork.contendForever(JavaWork.java:60)\n"
	"\n"
	"\"Attach Listener\" #25 [8746] daemon prio=9 os_prio=0 cpu=1.20ms elapsed=0.02s tid=0x00007ff838001650 nid=8746 waiting on condition  [0x0000000000000000]\n"
	"   java.lang.Thread.State: RUNNABLE\n"
	"\n"
	"\"VM Thread\" os_prio=0 cpu=2.75ms elapsed=3.18s tid=0x00007ff8840aff90 nid=8720 runnable  \n"
	"\n"
	"\"G1 Conc#0\" os_prio=0 cpu=0.49ms elapsed=3.27s tid=0x00007ff88406bbc0 nid=8714 runnable  \n"
	"\n"
	"JNI global refs: 4, weak refs: 0\n"
	"\n";

struct want_thread {
	const char *name;
	bool java, daemon;
	uint32_t nid;
	const char *state, *detail, *waiting_for, *holds;
	size_t nframes;
};

struct want_frame {
	size_t thread, frame;
	const char *method, *file;
	uint32_t line;
	bool native;
};

static void check_threads(const struct jvm_threaddump *td, const struct want_thread *w, size_t n)
{
	size_t i;

	assert_int_equal(td->nthreads, n);
	assert_false(td->truncated);
	for (i = 0; i < n; i++) {
		const struct jvm_td_thread *t = &td->threads[i];

		print_message("thread %zu %s\n", i, w[i].name);
		assert_string_equal(t->name, w[i].name);
		assert_int_equal(t->java, w[i].java);
		assert_int_equal(t->daemon, w[i].daemon);
		assert_int_equal(t->nid, w[i].nid);
		assert_string_equal(t->state, w[i].state);
		assert_string_equal(t->state_detail, w[i].detail);
		assert_string_equal(t->waiting_for, w[i].waiting_for);
		assert_string_equal(t->holds, w[i].holds);
		assert_int_equal(t->nframes, w[i].nframes);
		assert_int_equal(t->nframes_total, w[i].nframes);
		assert_ptr_equal(jvm_threaddump__find(td, w[i].nid), t);
	}
}

static void check_frames(const struct jvm_threaddump *td, const struct want_frame *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct jvm_td_frame *f = &td->threads[w[i].thread].frames[w[i].frame];

		print_message("frame %zu: %zu/%zu\n", i, w[i].thread, w[i].frame);
		assert_string_equal(f->method, w[i].method);
		assert_string_equal(f->file, w[i].file);
		assert_int_equal(f->line, w[i].line);
		assert_int_equal(f->native, w[i].native);
	}
}

static void test_jdk17(void **state)
{
	static const struct want_thread threads[] = {
		{ "main", true, false, 0x21e2, "TIMED_WAITING", "sleeping", "", "", 2 },
		{ "Finalizer", true, true, 0x21ea, "WAITING", "on object monitor",
		  "java.lang.ref.ReferenceQueue$Lock <0x000000069ec02f40>",
		  "java.lang.ref.ReferenceQueue$Lock <0x000000069ec02f40>", 3 },
		{ "C2 CompilerThread0", true, true, 0x21ee, "RUNNABLE", "", "", "", 0 },
		{ "contender-1", true, true, 0x21f6, "RUNNABLE", "", "", "java.lang.Object <0x000000069ec19790>", 6 },
		{ "contender-2", true, true, 0x21f7, "BLOCKED", "on object monitor", "java.lang.Object <0x000000069ec19790>", "", 2 },
		{ "pool-1-thread-1", true, false, 0x2201, "WAITING", "parking",
		  "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject <0x000000069ec20000>", "", 2 },
		{ "VM Thread", false, false, 0x21e8, "", "", "", "", 0 },
		{ "GC Thread#0", false, false, 0x21e3, "", "", "", "", 0 },
	};
	static const struct want_frame frames[] = {
		{ 0, 0, "java.lang.Thread.sleep", "", 0, true },
		{ 0, 1, "JavaWork.main", "JavaWork.java", 81, false },
		{ 1, 1, "java.lang.ref.ReferenceQueue.remove", "ReferenceQueue.java", 155, false },
		{ 3, 2, "JavaWork.holdLock", "JavaWork.java", 54, false },
		{ 3, 4, "JavaWork$$Lambda$3/0x00007fbf7c001000.run", "", 0, false },
		{ 3, 5, "java.lang.Thread.run", "Thread.java", 840, false },
		{ 4, 0, "JavaWork.holdLock", "JavaWork.java", 54, false },
		{ 5, 0, "jdk.internal.misc.Unsafe.park", "", 0, true },
	};
	struct jvm_threaddump *td = NULL;

	(void)state;
	assert_int_equal(jvm_threaddump_parse(S(jdk17), &td), 0);
	check_threads(td, threads, ARRAY_SIZE(threads));
	check_frames(td, frames, ARRAY_SIZE(frames));
	assert_null(jvm_threaddump__find(td, 0x21e4));
	assert_null(jvm_threaddump__find(td, 0));
	assert_null(jvm_threaddump__find(NULL, 0x21e2));
	jvm_threaddump__free(td);
}

static void test_jdk25(void **state)
{
	static const struct want_thread threads[] = {
		{ "main", true, false, 8711, "TIMED_WAITING", "sleeping", "", "", 4 },
		{ "contender-1", true, true, 8732, "BLOCKED", "on object monitor", "java.lang.Object <0x000000069ec16fa0>", "", 5 },
		{ "contender-2", true, true, 8733, "RUNNABLE", "", "", "java.lang.Object <0x000000069ec16fa0>", 4 },
		{ "Attach Listener", true, true, 8746, "RUNNABLE", "", "", "", 0 },
		{ "VM Thread", false, false, 8720, "", "", "", "", 0 },
		{ "G1 Conc#0", false, false, 8714, "", "", "", "", 0 },
	};
	static const struct want_frame frames[] = {
		{ 0, 0, "java.lang.Thread.sleepNanos0", "", 0, true },
		{ 0, 2, "java.lang.Thread.sleep", "Thread.java", 540, false },
		{ 1, 2, "JavaWork$$Lambda/0x000000000b040660.run", "", 0, false },
		{ 1, 3, "java.lang.Thread.runWith", "Thread.java", 1487, false },
		{ 2, 3, "JavaWork.contendForever", "JavaWork.java", 60, false },
	};
	struct jvm_threaddump *td = NULL;

	(void)state;
	assert_int_equal(jvm_threaddump_parse(S(jdk25), &td), 0);
	check_threads(td, threads, ARRAY_SIZE(threads));
	check_frames(td, frames, ARRAY_SIZE(frames));
	jvm_threaddump__free(td);
}

/* One header line per row: the name rule, "#N", daemon, nid. */
static void test_headers(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		int ret;
		const char *name;
		bool java, daemon;
		uint32_t nid;
	} cases[] = {
		{ S("\"a\" #1 prio=5 os_prio=0 tid=0x1 nid=0x10 runnable\n"), 0, "a", true, false, 0x10 },
		{ S("\"a\" #1 [77] daemon prio=5 os_prio=0 tid=0x1 nid=77 runnable\n"), 0, "a", true, true, 77 },
		{ S("\"GC Thread#0\" os_prio=0 cpu=0.33ms tid=0x1 nid=0x21e3 runnable  "), 0, "GC Thread#0", false, false, 0x21e3 },
		/* quotes in the name: up to the last quote followed by " #" (or the JVM's fields) */
		{ S("\"say \"hi\" #2\" #9 prio=5 nid=0x5 runnable\n"), 0, "say \"hi\" #2", true, false, 5 },
		{ S("\"x\" os_prio=\" #4 daemon prio=5 nid=6\n"), 0, "x\" os_prio=", true, true, 6 },
		{ S("\"\"\" #1 nid=1\n"), 0, "\"", true, false, 1 },
		{ S("\"\" #1 nid=1\n"), 0, "", true, false, 1 },
		{ S("\"a\" #1 nid=1\r\n"), 0, "a", true, false, 1 },
		/* bad bytes and control characters become '?' */
		{ S("\"caf\xc3\xa9 \xff\xfe\tx\" #1 nid=1\n"), 0, "caf\xc3\xa9 ??" "?x", true, false, 1 },
		{ S("\"n\0ul\" #1 nid=1\n"), 0, "n?ul", true, false, 1 },
		/* numbers */
		{ S("\"a\" #1 nid=0xffffffff\n"), 0, "a", true, false, 0xffffffffu },
		{ S("\"a\" #1 nid=0xffffffffff\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #1 nid=4294967296\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #1 nid=12ab\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #1 nid=0x\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #1 nid=\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #1 prio=5 runnable\n"), 0, "a", true, false, 0 },
		{ S("\"a\" #x prio=5 nid=3\n"), 0, "a", false, false, 3 },
		{ S("\"a\" #99999999999999999999 nid=3\n"), 0, "a", true, false, 3 },
		{ S("\"a\" prio=5 nid=3 daemon\n"), 0, "a", false, false, 3 },
		/* errors: no header */
		{ S("\"a\"\n"), -ENODATA },
		{ S("\"a\" runnable nid=1\n"), -ENODATA },
		{ S("\"a #1 nid=1\n"), -ENODATA },
		{ S("\""), -ENODATA },
		{ S(" \"a\" #1 nid=1\n"), -ENODATA },
	};
	struct jvm_threaddump *td;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(cases[i].text, cases[i].len, &td), cases[i].ret);
		if (cases[i].ret) {
			assert_null(td);
			continue;
		}
		assert_int_equal(td->nthreads, 1);
		assert_string_equal(td->threads[0].name, cases[i].name);
		assert_int_equal(td->threads[0].java, cases[i].java);
		assert_int_equal(td->threads[0].daemon, cases[i].daemon);
		assert_int_equal(td->threads[0].nid, cases[i].nid);
		jvm_threaddump__free(td);
	}
}

#define HDR "\"t\" #1 prio=5 nid=0x1 runnable\n"

/* The lines of one thread, after its header: the state, a frame and lock lines. */
static void test_lines(void **state)
{
	static const struct {
		const char *body;
		const char *state, *detail, *method, *file;
		uint32_t line;
		bool native;
		const char *waiting_for, *holds;
	} cases[] = {
		{ "   java.lang.Thread.State: NEW\n", "NEW", "", NULL },
		{ "   java.lang.Thread.State: WAITING (parking)\n", "WAITING", "parking", NULL },
		{ "   java.lang.Thread.State: WAITING (\n", "WAITING", "", NULL },
		{ "   java.lang.Thread.State: WAITING ()\n", "WAITING", "", NULL },
		{ "   java.lang.Thread.State:\n", "", "", NULL },
		{ "   java.lang.Thread.State: A\n   java.lang.Thread.State: B\n", "A", "", NULL },
		{ "   java.lang.Thread.State: TIMED_WAITING_WITH_A_STATE_FAR_TOO_LONG_TO_FIT\n", "TIMED_WAITING_WITH_A_STATE_FAR_", "", NULL },
		{ "   java.lang.Thread.State: R\xff (\xe2\x82)\n", "R?", "??", NULL },
		{ "\tat a.B.c(B.java:7)\n", "", "", "a.B.c", "B.java", 7 },
		{ "\tat a.B.c(app//B.java:7)\n", "", "", "a.B.c", "B.java", 7 },
		{ "\tat a.B.c(B.java)\n", "", "", "a.B.c", "B.java", 0 },
		{ "\tat a.B.c(B.java:)\n", "", "", "a.B.c", "B.java:", 0 },
		{ "\tat a.B.c(B.java:x1)\n", "", "", "a.B.c", "B.java:x1", 0 },
		{ "\tat a.B.c(B.java:99999999999)\n", "", "", "a.B.c", "B.java", 0 },
		{ "\tat a.B.c(Native Method)\n", "", "", "a.B.c", "", 0, true },
		{ "\tat a.B.c(Unknown Source)\n", "", "", "a.B.c", "", 0 },
		{ "\tat a.B.c()\n", "", "", "a.B.c", "", 0 },
		{ "\tat a.B.c\n", "", "", "a.B.c", "", 0 },
		{ "\tat a(b).c(B.java:1\n", "", "", "a(b).c(B.java:1", "", 0 },
		{ "\tat \n", "", "", "", "", 0 },
		{ "\tat a.\xc0\x80(\xed\xa0\x80.java:3)\n", "", "", "a.??", "???.java", 3 },
		{ "\t- waiting to lock <0x1> (a X)\n", "", "", NULL, NULL, 0, false, "X <0x1>", "" },
		{ "\t- waiting on <0x2> (a Y)\n", "", "", NULL, NULL, 0, false, "Y <0x2>", "" },
		{ "\t- waiting to re-lock in wait() <0x3> (a Z)\n", "", "", NULL, NULL, 0, false, "Z <0x3>", "" },
		{ "\t- parking to wait for  <0x4> (a W)\n", "", "", NULL, NULL, 0, false, "W <0x4>", "" },
		{ "\t- locked <0x5> (a V)\n\t- locked <0x6> (a U)\n", "", "", NULL, NULL, 0, false, "", "V <0x5>" },
		{ "\t- waiting on <0x2> (a Y)\n\t- waiting on <0x3> (a Z)\n", "", "", NULL, NULL, 0, false, "Y <0x2>", "" },
		{ "\t- waiting on <0x2>\n", "", "", NULL, NULL, 0, false, "<0x2>", "" },
		{ "\t- waiting on <0x2> (a )\n", "", "", NULL, NULL, 0, false, "<0x2>", "" },
		{ "\t- waiting on <0x2> (an X)\n", "", "", NULL, NULL, 0, false, "<0x2>", "" },
		{ "\t- waiting on <no object reference available>\n", "", "", NULL, NULL, 0, false, "<no object reference available>", "" },
		{ "\t- waiting on 0x2 (a Y)\n", "", "", NULL, NULL, 0, false, "", "" },
		{ "\t- waiting on <0x2 (a Y)\n", "", "", NULL, NULL, 0, false, "", "" },
		{ "\t- eliminated <owner is scalar replaced> (a Q)\n", "", "", NULL, NULL, 0, false, "", "" },
		{ "\t- locked <0x5> (a \x1b[31mX\xf0\x9f\x98)\n", "", "", NULL, NULL, 0, false, "", "?[31mX??? <0x5>" },
		/* a line that does not start with blanks ends the thread */
		{ "JNI global refs: 4\n\tat a.B.c(B.java:7)\n\t- locked <0x5> (a V)\n", "", "", NULL, NULL, 0, false, "", "" },
		{ "\n   java.lang.Thread.State: NEW\n", "", "", NULL },
	};
	struct jvm_threaddump *td;
	char text[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct jvm_td_thread *t;

		print_message("case %zu\n", i);
		snprintf(text, sizeof(text), HDR "%s", cases[i].body);
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(text, strlen(text), &td), 0);
		t = &td->threads[0];
		assert_string_equal(t->state, cases[i].state);
		assert_string_equal(t->state_detail, cases[i].detail);
		if (cases[i].method) {
			assert_int_equal(t->nframes, 1);
			assert_string_equal(t->frames[0].method, cases[i].method);
			assert_string_equal(t->frames[0].file, cases[i].file);
			assert_int_equal(t->frames[0].line, cases[i].line);
			assert_int_equal(t->frames[0].native, cases[i].native);
		} else {
			assert_int_equal(t->nframes_total, 0);
		}
		if (cases[i].waiting_for) {
			assert_string_equal(t->waiting_for, cases[i].waiting_for);
			assert_string_equal(t->holds, cases[i].holds);
		}
		jvm_threaddump__free(td);
	}
}

/* A non-Java thread's lines are not read; a field cut to its buffer stays valid UTF-8. */
static void test_cuts(void **state)
{
	static const char vm[] = "\"VM Thread\" os_prio=0 nid=0x5 runnable\n"
				 "   java.lang.Thread.State: RUNNABLE\n"
				 "\tat a.B.c(B.java:7)\n";
	struct jvm_threaddump *td = NULL;
	char text[2048], name[300];
	size_t i;

	(void)state;
	assert_int_equal(jvm_threaddump_parse(S(vm), &td), 0);
	assert_string_equal(td->threads[0].state, "");
	assert_int_equal(td->threads[0].nframes_total, 0);
	jvm_threaddump__free(td);

	/* 100 two-byte characters: the name keeps 63 of them (126 bytes), never half of one */
	for (i = 0; i < 100; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);
	name[200] = '\0';
	snprintf(text, sizeof(text), "\"%s\" #1 nid=1\n\tat %s%s(%s%s.java:1)\n", name, name, name, name, name);
	td = NULL;
	assert_int_equal(jvm_threaddump_parse(text, strlen(text), &td), 0);
	assert_int_equal(strlen(td->threads[0].name), 126);
	assert_true(text_utf8_is_valid(td->threads[0].name, 126));
	assert_int_equal(strlen(td->threads[0].frames[0].method), 254);
	assert_int_equal(strlen(td->threads[0].frames[0].file), 62);
	assert_int_equal(td->threads[0].frames[0].line, 1);
	jvm_threaddump__free(td);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		int ret;
	} cases[] = {
		{ S(""), -ENODATA },
		{ NULL, 0, -ENODATA },
		{ NULL, 5, -ENODATA },
		{ S("\n\n\n"), -ENODATA },
		{ S("2026-12-02 02:54:06\n"
		    "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):\n"
		    "\n"
		    "Threads class SMR info:\n"
		    "_java_thread_list=0x00007fbf6c002750, length=16, elements={\n"
		    "}\n"
		    "\n"
		    "JNI global refs: 4, weak refs: 0\n"),
		  -ENODATA },
		{ S("\tat a.B.c(B.java:7)\n   java.lang.Thread.State: RUNNABLE\n"), -ENODATA },
	};
	struct jvm_threaddump *td = NULL;
	char *big;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(jvm_threaddump_parse(cases[i].text, cases[i].len, &td), cases[i].ret);
		assert_null(td);
	}
	assert_int_equal(jvm_threaddump_parse(S(jdk17), NULL), -EINVAL);

	/* over the size cap: refused before a byte is read; at the cap: parsed */
	big = malloc(JVM_TD_TEXT_MAX + 1);
	assert_non_null(big);
	memset(big, '\n', JVM_TD_TEXT_MAX + 1);
	memcpy(big, S(HDR));
	assert_int_equal(jvm_threaddump_parse(big, JVM_TD_TEXT_MAX + 1, &td), -EFBIG);
	assert_null(td);
	assert_int_equal(jvm_threaddump_parse(big, JVM_TD_TEXT_MAX, &td), 0);
	assert_int_equal(td->nthreads, 1);
	jvm_threaddump__free(td);
	free(big);
	jvm_threaddump__free(NULL);
}

/* A line over JVM_TD_LINE_MAX is skipped and ends the thread it is in. */
static void test_long_line(void **state)
{
	static const struct {
		const char *before, *after;
		size_t nthreads, nframes0;
	} cases[] = {
		/* a 10000-byte header alone: no thread */
		{ "\"", "\" #1 nid=1\n", 0 },
		/* a 10000-byte header: its frames belong to no one */
		{ "\"a\" #1 nid=1\n\tat A.a(A.java:1)\n\"", "\" #2 nid=2\n\tat B.b(B.java:2)\n", 1, 1 },
		/* a 10000-byte frame: skipped, the frames after it belong to no one */
		{ "\"a\" #1 nid=1\n\tat A.a(A.java:1)\n\tat ", "(A.java:1)\n\tat B.b(B.java:2)\n\"b\" #2 nid=2\n", 2, 1 },
		/* a line of exactly JVM_TD_LINE_MAX bytes is read */
		{ "\"a\" #1 nid=1\n\tat ", NULL, 1, 2 },
	};
	struct jvm_threaddump *td;
	size_t i, n, at;
	char *text;

	(void)state;
	text = malloc(20000);
	assert_non_null(text);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		at = strlen(cases[i].before);
		memcpy(text, cases[i].before, at);
		if (cases[i].after) {
			memset(text + at, 'x', 10000);
			n = at + 10000;
			memcpy(text + n, cases[i].after, strlen(cases[i].after));
			n += strlen(cases[i].after);
		} else {
			/* "\tat " + x... + "()" is JVM_TD_LINE_MAX bytes */
			n = at + JVM_TD_LINE_MAX - 6;
			memset(text + at, 'x', JVM_TD_LINE_MAX - 6);
			memcpy(text + n, "()\n\tat Z.z(Z.java:9)\n", 21);
			n += 21;
		}
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(text, n, &td), cases[i].nthreads ? 0 : -ENODATA);
		if (!cases[i].nthreads)
			continue;
		assert_int_equal(td->nthreads, cases[i].nthreads);
		assert_int_equal(td->threads[0].nframes_total, cases[i].nframes0);
		if (cases[i].after) {
			assert_string_equal(td->threads[0].frames[0].method, "A.a");
		} else {
			assert_int_equal(strlen(td->threads[0].frames[0].method), JVM_TD_FRAME_MAX - 1);
			assert_string_equal(td->threads[0].frames[1].method, "Z.z");
		}
		if (cases[i].nthreads > 1)
			assert_int_equal(td->threads[1].nframes_total, 0);
		jvm_threaddump__free(td);
	}
	free(text);
}

/* More frames than JVM_TD_MAX_FRAMES: the first kept, all counted. */
static void test_frame_cap(void **state)
{
	static const size_t counts[] = { 1, 8, 9, 16, 17, 63, 64, 65, 100, 1000 };
	struct jvm_threaddump *td;
	size_t i, k, at, size = 64 + 1000 * 32;
	char *text;

	(void)state;
	text = malloc(size);
	assert_non_null(text);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		print_message("case %zu: %zu frames\n", i, counts[i]);
		at = (size_t)snprintf(text, size, "%s", HDR);
		for (k = 0; k < counts[i]; k++)
			at += (size_t)snprintf(text + at, size - at, "\tat C.m%zu(C.java:%zu)\n", k, k + 1);
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(text, at, &td), 0);
		assert_int_equal(td->threads[0].nframes_total, counts[i]);
		k = counts[i] < JVM_TD_MAX_FRAMES ? counts[i] : JVM_TD_MAX_FRAMES;
		assert_int_equal(td->threads[0].nframes, k);
		assert_string_equal(td->threads[0].frames[0].method, "C.m0");
		assert_int_equal(td->threads[0].frames[k - 1].line, k);
		jvm_threaddump__free(td);
	}
	free(text);
}

/* More threads than JVM_TD_MAX_THREADS: the first kept, truncated set. */
static void test_thread_cap(void **state)
{
	static const struct {
		size_t n;
		bool truncated;
	} cases[] = {
		{ 1, false },
		{ 65, false },
		{ JVM_TD_MAX_THREADS, false },
		{ JVM_TD_MAX_THREADS + 1, true },
		{ 3 * JVM_TD_MAX_THREADS, true },
	};
	struct jvm_threaddump *td;
	size_t i, k, at, size = 3 * JVM_TD_MAX_THREADS * 64;
	char *text;

	(void)state;
	text = malloc(size);
	assert_non_null(text);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %zu threads\n", i, cases[i].n);
		at = 0;
		for (k = 0; k < cases[i].n; k++)
			at += (size_t)snprintf(text + at, size - at, "\"t%zu\" #%zu nid=%zu\n\tat A.a()\n", k, k, k + 1);
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(text, at, &td), 0);
		k = cases[i].truncated ? JVM_TD_MAX_THREADS : cases[i].n;
		assert_int_equal(td->nthreads, k);
		assert_int_equal(td->truncated, cases[i].truncated);
		assert_string_equal(jvm_threaddump__find(td, (uint32_t)k)->name, td->threads[k - 1].name);
		assert_int_equal(td->threads[k - 1].nframes, 1);
		assert_null(jvm_threaddump__find(td, (uint32_t)k + 1));
		jvm_threaddump__free(td);
	}
	free(text);
}

/* Frames kept in all threads stop at JVM_TD_MAX_TOTAL_FRAMES (the dump's memory is bounded);
 * every frame is still counted. */
static void test_total_frames_cap(void **state)
{
	static const size_t threads[] = { 1, 1023, 1024, 1025, 2048 };
	struct jvm_threaddump *td;
	size_t i, t, k, at, kept, total, size = 2048 * (32 + 64 * 16);
	char *text;

	(void)state;
	text = malloc(size);
	assert_non_null(text);
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		print_message("case %zu: %zu threads of 64 frames\n", i, threads[i]);
		at = 0;
		for (t = 0; t < threads[i]; t++) {
			at += (size_t)snprintf(text + at, size - at, "\"t%zu\" #%zu nid=%zu\n", t, t, t + 1);
			for (k = 0; k < JVM_TD_MAX_FRAMES; k++)
				at += (size_t)snprintf(text + at, size - at, "\tat A.a()\n");
		}
		td = NULL;
		assert_int_equal(jvm_threaddump_parse(text, at, &td), 0);
		for (t = kept = total = 0; t < td->nthreads; t++) {
			kept += td->threads[t].nframes;
			total += td->threads[t].nframes_total;
		}
		k = threads[i] * JVM_TD_MAX_FRAMES;
		assert_int_equal(total, k);
		assert_int_equal(kept, k < JVM_TD_MAX_TOTAL_FRAMES ? k : JVM_TD_MAX_TOTAL_FRAMES);
		jvm_threaddump__free(td);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17),	   cmocka_unit_test(test_jdk25),
		cmocka_unit_test(test_headers),	   cmocka_unit_test(test_lines),
		cmocka_unit_test(test_cuts),	   cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_line),  cmocka_unit_test(test_frame_cap),
		cmocka_unit_test(test_thread_cap), cmocka_unit_test(test_total_frames_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
