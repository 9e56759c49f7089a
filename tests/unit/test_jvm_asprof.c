// SPDX-License-Identifier: Apache-2.0
/*
 * What we say to async-profiler and read back (runtimes/jvm/jvm_asprof.h): the option strings
 * of the three modes, the agent's code in HotSpot's answer to "load", and the collapsed-stack
 * parser with every bound and malformed form. The agent itself runs in the JVM through
 * tests/workloads/java/fake_asprof.c.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/text.h"
#include "runtimes/jvm/jvm_asprof.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A literal with its length, NUL bytes included (sizeof minus the terminator). */
#define S(lit) lit, sizeof(lit) - 1

static void test_start_options(void **state)
{
	static const struct {
		int mode;
		size_t size;
		int ret;
		const char *out;
	} cases[] = {
		{ JVM_ASPROF_ALLOC, 256, 44, "start,event=alloc,alloc=524288,loglevel=none" },
		{ JVM_ASPROF_LIVE, 256, 49, "start,event=alloc,alloc=524288,live,loglevel=none" },
		{ JVM_ASPROF_LOCK, 256, 44, "start,event=lock,lock=10000000,loglevel=none" },
		{ JVM_ASPROF_LOCK, 45, 44, "start,event=lock,lock=10000000,loglevel=none" },
		/* errors */
		{ JVM_ASPROF_LOCK, 44, -ENOSPC },
		{ JVM_ASPROF_ALLOC, 1, -ENOSPC },
		{ JVM_ASPROF_ALLOC, 0, -ENOSPC },
		{ JVM_ASPROF_MODE_COUNT, 256, -EINVAL },
		{ -1, 256, -EINVAL },
	};
	char buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(jvm_asprof_start_options(cases[i].mode, buf, cases[i].size),
				 cases[i].ret);
		if (cases[i].ret >= 0)
			assert_string_equal(buf, cases[i].out);
	}
}

static void test_stop_options(void **state)
{
	static const struct {
		int mode;
		const char *file;
		size_t size;
		int ret;
		const char *out;
	} cases[] = {
		{ JVM_ASPROF_ALLOC, "/tmp/slideops/a.collapsed", 256, 65,
		  "stop,file=/tmp/slideops/a.collapsed,collapsed,total,loglevel=none" },
		{ JVM_ASPROF_LIVE, "/x", 256, 42, "stop,file=/x,collapsed,total,loglevel=none" },
		{ JVM_ASPROF_LOCK, "/A-z_0.9/b", 256, 50, "stop,file=/A-z_0.9/b,collapsed,total,loglevel=none" },
		{ JVM_ASPROF_LOCK, "/x", 43, 42, "stop,file=/x,collapsed,total,loglevel=none" },
		/* errors */
		{ JVM_ASPROF_LOCK, "/x", 42, -ENOSPC },
		{ JVM_ASPROF_LOCK, "/x", 0, -ENOSPC },
		{ JVM_ASPROF_ALLOC, NULL, 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "tmp/a.collapsed", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/a,b", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/a=b", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/a b", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/%p.collapsed", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/a\n", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/\xc3\xa4", 256, -EINVAL },
		{ JVM_ASPROF_ALLOC, "/tmp/a;b", 256, -EINVAL },
		{ JVM_ASPROF_MODE_COUNT, "/x", 256, -EINVAL },
		{ -1, "/x", 256, -EINVAL },
	};
	char buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(jvm_asprof_stop_options(cases[i].mode, cases[i].file, buf,
							 cases[i].size),
				 cases[i].ret);
		if (cases[i].ret >= 0)
			assert_string_equal(buf, cases[i].out);
	}
}

static void test_parse_code(void **state)
{
	static const struct {
		const char *body;
		size_t len;
		int ret, rc;
	} cases[] = {
		{ S("return code: 0\n"), 0, 0 },
		{ S("return code: 100\n"), 0, 100 },
		{ S("return code: 200"), 0, 200 },
		{ S("return code: -1\n"), 0, -1 },
		{ S("return code: 2147483647\n"), 0, 2147483647 },
		{ S("return code: -2147483648\n"), 0, -2147483647 - 1 },
		{ S("some text first\nreturn code: 0\n"), 0, 0 },
		{ S("return code: 0\nreturn code: 200\n"), 0, 200 }, /* the last one */
		{ S("0\n"), 0, 0 },				      /* JDK 8 */
		{ S("100"), 0, 100 },
		{ S("100\nreturn code: 0\n"), 0, 0 },
		/* errors */
		{ S(""), -ENOMSG },
		{ NULL, 0, -ENOMSG },
		{ NULL, 5, -EINVAL },
		{ S("/x/libasyncProfiler.so was not loaded.\n/x/libasyncProfiler.so: cannot open "
		    "shared object file: No such file or directory\n"),
		  -ENOMSG },
		{ S("Dynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch "
		    "target VM."),
		  -ENOMSG },
		{ S("Agent_OnAttach is not available in /x/lib.so\n"), -ENOMSG },
		{ S("text\n0\n"), -ENOMSG }, /* a bare number only as the first line */
		{ S("return code:0\n"), -ENOMSG },
		{ S("Return code: 0\n"), -ENOMSG },
		{ S(" return code: 0\n"), -ENOMSG },
		{ S("return code: \n"), -EBADMSG },
		{ S("return code: x\n"), -EBADMSG },
		{ S("return code: 0 \n"), -EBADMSG },
		{ S("return code: +1\n"), -EBADMSG },
		{ S("return code: -\n"), -EBADMSG },
		{ S("return code: 2147483648\n"), -EBADMSG },
		{ S("return code: -2147483649\n"), -EBADMSG },
		{ S("return code: 12345678901\n"), -EBADMSG },
		{ S("return code: 0\r\n"), -EBADMSG },
		{ S("return code: 1\nreturn code: z\n"), -EBADMSG }, /* the last one counts */
		{ S("return code: 0\n\0"), -EILSEQ },
		{ S("\0return code: 0\n"), -EILSEQ },
	};
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		rc = 12345;
		assert_int_equal(jvm_asprof_parse_code(cases[i].body, cases[i].len, &rc),
				 cases[i].ret);
		assert_int_equal(rc, cases[i].ret ? 12345 : cases[i].rc);
	}
}

/* --- collapsed ----------------------------------------------------------------------------- */

struct sink {
	char *out; /* "K:name K:name =value\n" per stack, leaf first */
	size_t len, cap;
	size_t stacks, abort_at; /* abort_at: return -ECANCELED at that stack (1-based), 0 never */
	size_t nframes;		 /* of the last stack */
	size_t first_len;	 /* and its leaf's and root's names (copies: the parser's go) */
	char first[JVM_ASPROF_NAME_MAX + 1], last[JVM_ASPROF_NAME_MAX + 1];
};

static void sink_put(struct sink *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->out = realloc(s->out, s->cap);
		assert_non_null(s->out);
	}
	memcpy(s->out + s->len, p, n);
	s->len += n;
	s->out[s->len] = '\0';
}

static int collect(void *ctx, const struct jvm_asprof_frame *f, size_t n, uint64_t value)
{
	static const char kinds[] = "JNKC";
	struct sink *s = ctx;
	char buf[32];
	size_t i;

	s->stacks++;
	if (s->abort_at && s->stacks == s->abort_at)
		return -ECANCELED;
	assert_true(n >= 1 && n <= JVM_ASPROF_FRAMES_MAX);
	s->nframes = n;
	s->first_len = f[0].len;
	memcpy(s->first, f[0].name, f[0].len + 1);
	memcpy(s->last, f[n - 1].name, f[n - 1].len + 1);
	for (i = 0; i < n; i++) {
		assert_int_equal(strlen(f[i].name), f[i].len);
		assert_true(f[i].len >= 1 && f[i].len <= JVM_ASPROF_NAME_MAX);
		assert_true(text_utf8_is_clean(f[i].name, f[i].len));
		assert_true((unsigned)f[i].kind <= JVM_ASPROF_CLASS);
		if (s->len < 4096) { /* the rendering is for the table rows */
			sink_put(s, &kinds[f[i].kind], 1);
			sink_put(s, ":", 1);
			sink_put(s, f[i].name, f[i].len);
			sink_put(s, " ", 1);
		}
	}
	snprintf(buf, sizeof(buf), "=%llu\n", (unsigned long long)value);
	if (s->len < 4096)
		sink_put(s, buf, strlen(buf));
	return 0;
}

static void test_parse_collapsed(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		int ret;
		const char *out;
		size_t malformed, fixed;
	} cases[] = {
		/* what async-profiler writes for alloc (TLAB samples, outside TLAB), live, lock */
		{ S("java/lang/Thread.run;Foo.bar;byte[]_[i] 1000000\n"), 1,
		  "C:byte[] J:Foo.bar J:java.lang.Thread.run =1000000\n" },
		{ S("a/B.c;java.lang.String[]_[k] 5\n"), 1, "C:java.lang.String[] J:a.B.c =5\n" },
		{ S("A.run;java.util.concurrent.locks.ReentrantLock$NonfairSync_[i] 10000000"), 1,
		  "C:java.util.concurrent.locks.ReentrantLock$NonfairSync J:A.run =10000000\n" },
		/* "ann" suffixes; "_[i]" below the leaf is an inlined frame, "_[k]" a kernel one */
		{ S("A.main_[0];B.run_[j];C.inl_[i];D.c1_[1];E.leaf_[j] 7\n"), 1,
		  "J:E.leaf J:D.c1 J:C.inl J:B.run J:A.main =7\n" },
		{ S("start_thread;do_syscall_64_[k];c/D.e 1\n"), 1,
		  "J:c.D.e K:do_syscall_64 N:start_thread =1\n" },
		{ S("start_thread;do_nanosleep_[k] 1\n"), 1, "C:do_nanosleep N:start_thread =1\n" },
		/* native and pseudo frames */
		{ S("start_thread;JavaThread::run();memcpy.part.0;libjvm.so`foo;[unknown];"
		    "[no_Java_frame] 2\n"),
		  1,
		  "N:[no_Java_frame] N:[unknown] N:libjvm.so`foo N:memcpy.part.0 N:JavaThread::run() "
		  "N:start_thread =2\n" },
		{ S("[Thread-1 tid=12];Foo.bar 4\n"), 1, "J:Foo.bar N:[Thread-1 tid=12] =4\n" },
		{ S("Main.main;Foo.my test 5\n"), 1, "N:Foo.my test J:Main.main =5\n" },
		{ S("_[j];x_[z] 1\n"), 1, "N:x_[z] N:_[j] =1\n" },
		{ S("Foo.bar_[x] 1\n"), 1, "J:Foo.bar_[x] =1\n" },
		{ S("Foo.<init>;Foo.<clinit>;Foo.lambda$main$0 1\n"), 1,
		  "J:Foo.lambda$main$0 J:Foo.<clinit> J:Foo.<init> =1\n" },
		/* hidden classes (JDK 17 and 25 JVMTI signatures, Class.getName(), internal) */
		{ S("Sitter$$Lambda$1.0x00007f44c4000c10.run;Sitter$$Lambda.0x0000000013040420.run;"
		    "Foo$$Lambda/0x0000000800c01000.run;Foo+0x12.run 1\n"),
		  1, "J:Foo.run J:Foo$$Lambda.run J:Sitter$$Lambda.run J:Sitter$$Lambda$1.run =1\n" },
		{ S("a/b0x/C.run;Foo.0xzz.run;Foo.0x.run;x/Y.0x12 1\n"), 1,
		  "N:x/Y.0x12 J:Foo.0x.run J:Foo.0xzz.run J:a.b0x.C.run =1\n" },
		{ S("A.b;Foo$$Lambda.0x1f2c_[i] 1\n"), 1, "C:Foo$$Lambda J:A.b =1\n" },
		{ S("A.b;Foo.0x1f2c[]_[i] 1\n"), 1, "C:Foo[] J:A.b =1\n" },
		{ S(".0x1f;.0x1f.run;a.0x1f_[i] 1\n"), 1, "C:a J:.0x1f.run N:.0x1f =1\n" },
		/* values */
		{ S("a 0\n"), 1, "N:a =0\n" },
		{ S("a 9223372036854775808\n"), 1, "N:a =9223372036854775808\n" },
		{ S("a 00000000000000000000000000000001\n"), 1, "N:a =1\n" },
		{ S("a 9223372036854775809\n"), 0, "", 1 },
		{ S("a 18446744073709551616\n"), 0, "", 1 },
		{ S("a 99999999999999999999999999\n"), 0, "", 1 },
		{ S("a -1\n"), 0, "", 1 },
		{ S("a +1\n"), 0, "", 1 },
		{ S("a 1x\n"), 0, "", 1 },
		{ S("a 0x10\n"), 0, "", 1 },
		{ S("a \n"), 0, "", 1 },
		{ S("a 1 \n"), 0, "", 1 },
		{ S("a\t1\n"), 0, "", 1 },
		{ S("a\n"), 0, "", 1 },
		{ S("a 1\r\n"), 0, "", 1 },
		/* empty stacks and frames */
		{ S(" 1\n"), 0, "", 1 },
		{ S(";a 1\n"), 0, "", 1 },
		{ S("a; 1\n"), 0, "", 1 },
		{ S("a;;b 1\n"), 0, "", 1 },
		{ S(";\n"), 0, "", 1 },
		/* lines */
		{ S(""), 0, "" },
		{ NULL, 0, 0, "" },
		{ S("\n\n\na 1\n\n"), 1, "N:a =1\n" },
		{ S("a 1\nbad\nb 2\n"), 2, "N:a =1\nN:b =2\n", 1 },
		{ S("a 1\nb 2"), 2, "N:a =1\nN:b =2\n" },
		/* names made valid UTF-8 without control characters */
		{ S("Foo.b\xffr 1\n"), 1, "J:Foo.b?r =1\n", 0, 1 },
		{ S("Foo.b\tr;x\xc3\xa4 1\n"), 1, "N:x\xc3\xa4 J:Foo.b?r =1\n", 0, 1 },
		{ S("x\xed\xa0\x80y\xc3 1\n"), 1, "N:x???y? =1\n", 0, 1 },
		/* errors */
		{ S("a 1\n\0"), -EILSEQ },
		{ S("\0"), -EILSEQ },
		{ NULL, 5, -EINVAL },
	};
	struct jvm_asprof_counts c;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sink s = { 0 };

		print_message("case %zu\n", i);
		memset(&c, 0xa5, sizeof(c));
		assert_int_equal(jvm_asprof_parse_collapsed(cases[i].in, cases[i].len, collect, &s, &c),
				 cases[i].ret);
		if (cases[i].ret < 0) {
			assert_int_equal(s.stacks, 0);
			assert_int_equal(c.lines, (size_t)0xa5a5a5a5a5a5a5a5ull);
			free(s.out);
			continue;
		}
		assert_string_equal(s.out ? s.out : "", cases[i].out);
		assert_int_equal(c.malformed, cases[i].malformed);
		assert_int_equal(c.lines, cases[i].ret + cases[i].malformed);
		assert_int_equal(c.fixed_names, cases[i].fixed);
		assert_int_equal(c.cut_stacks, 0);
		assert_int_equal(c.cut_names, 0);
		free(s.out);
	}
}

/* "f0;f1;...;f<n-1> 1\n", plus @tail. */
static char *deep_line(size_t n, const char *tail, size_t *len)
{
	size_t cap = n * 8 + 64 + strlen(tail), i, at = 0;
	char *buf = malloc(cap);

	assert_non_null(buf);
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, cap - at, "%sf%zu", i ? ";" : "", i);
	at += (size_t)snprintf(buf + at, cap - at, " 1\n%s", tail);
	*len = at;
	return buf;
}

static void test_frames_bound(void **state)
{
	static const struct {
		size_t frames;
		const char *tail;
		int ret;
		size_t kept, cut, malformed;
	} cases[] = {
		{ 1, "", 1, 1, 0, 0 },
		{ JVM_ASPROF_FRAMES_MAX, "", 1, JVM_ASPROF_FRAMES_MAX, 0, 0 },
		{ JVM_ASPROF_FRAMES_MAX + 1, "", 1, JVM_ASPROF_FRAMES_MAX, 1, 0 },
		{ 3 * JVM_ASPROF_FRAMES_MAX, "x 2\n", 2, 1, 1, 0 },
	};
	struct jvm_asprof_counts c;
	size_t i, len;
	char *buf, name[32];

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sink s = { 0 };

		print_message("case %zu\n", i);
		buf = deep_line(cases[i].frames, cases[i].tail, &len);
		assert_int_equal(jvm_asprof_parse_collapsed(buf, len, collect, &s, &c), cases[i].ret);
		assert_int_equal(c.cut_stacks, cases[i].cut);
		assert_int_equal(c.malformed, cases[i].malformed);
		assert_int_equal(s.nframes, cases[i].kept);
		if (!cases[i].tail[0]) {
			/* the leaf stays; the root end goes */
			snprintf(name, sizeof(name), "f%zu", cases[i].frames - 1);
			assert_string_equal(s.first, name);
			snprintf(name, sizeof(name), "f%zu", cases[i].frames - cases[i].kept);
			assert_string_equal(s.last, name);
		}
		free(buf);
		free(s.out);
	}
}

/* An empty frame in the part that is cut off still makes the line malformed. */
static void test_frames_bound_malformed(void **state)
{
	struct jvm_asprof_counts c;
	struct sink s = { 0 };
	size_t len;
	char *buf = deep_line(2 * JVM_ASPROF_FRAMES_MAX, "ok 3\n", &len);

	(void)state;
	memmove(buf + 1, buf, len);
	buf[0] = ';';
	assert_int_equal(jvm_asprof_parse_collapsed(buf, len + 1, collect, &s, &c), 1);
	assert_int_equal(c.malformed, 1);
	assert_int_equal(c.lines, 2);
	assert_string_equal(s.first, "ok");
	free(buf);
	free(s.out);
}

/* A line of @n bytes before its '\n': one frame "aaa...", a space and "1"; then "b 2\n". */
static void test_line_bound(void **state)
{
	static const struct {
		size_t n;
		int ret;
		size_t malformed;
	} cases[] = {
		{ JVM_ASPROF_LINE_MAX - 1, 2, 0 },
		{ JVM_ASPROF_LINE_MAX, 2, 0 },
		{ JVM_ASPROF_LINE_MAX + 1, 1, 1 },
		{ 4 * JVM_ASPROF_LINE_MAX, 1, 1 },
	};
	struct jvm_asprof_counts c;
	size_t i;
	char *buf;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sink s = { 0 };
		size_t n = cases[i].n;

		print_message("case %zu\n", i);
		buf = malloc(n + 8);
		assert_non_null(buf);
		memset(buf, 'a', n - 2);
		memcpy(buf + n - 2, " 1\nb 2\n", 7);
		assert_int_equal(jvm_asprof_parse_collapsed(buf, n + 5, collect, &s, &c), cases[i].ret);
		assert_int_equal(c.malformed, cases[i].malformed);
		assert_string_equal(s.first, "b");
		if (!cases[i].malformed)
			assert_int_equal(c.cut_names, 1); /* its one name is over the name bound */
		free(buf);
		free(s.out);
	}
}

static void test_name_bound(void **state)
{
	static const struct {
		size_t a;	  /* bytes of 'a' */
		const char *tail; /* then this, then " 1\n" */
		size_t len, cut, fixed;
	} cases[] = {
		{ JVM_ASPROF_NAME_MAX - 1, "", JVM_ASPROF_NAME_MAX - 1, 0, 0 },
		{ JVM_ASPROF_NAME_MAX, "", JVM_ASPROF_NAME_MAX, 0, 0 },
		{ JVM_ASPROF_NAME_MAX + 1, "", JVM_ASPROF_NAME_MAX, 1, 0 },
		{ JVM_ASPROF_NAME_MAX, "_[j]", JVM_ASPROF_NAME_MAX, 0, 0 }, /* the suffix goes first */
		{ JVM_ASPROF_NAME_MAX - 1, "\xc3\xa4", JVM_ASPROF_NAME_MAX - 1, 1, 0 }, /* no half é */
		{ JVM_ASPROF_NAME_MAX - 2, "\xc3\xa4", JVM_ASPROF_NAME_MAX, 0, 0 },
		{ JVM_ASPROF_NAME_MAX - 1, "\xff", JVM_ASPROF_NAME_MAX, 0, 1 },
		{ 3 * JVM_ASPROF_NAME_MAX, "", JVM_ASPROF_NAME_MAX, 1, 0 },
	};
	struct jvm_asprof_counts c;
	size_t i, n;
	char *buf;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sink s = { 0 };

		print_message("case %zu\n", i);
		n = cases[i].a + strlen(cases[i].tail);
		buf = malloc(n + 4);
		assert_non_null(buf);
		memset(buf, 'a', cases[i].a);
		memcpy(buf + cases[i].a, cases[i].tail, strlen(cases[i].tail));
		memcpy(buf + n, " 1\n", 3);
		assert_int_equal(jvm_asprof_parse_collapsed(buf, n + 3, collect, &s, &c), 1);
		assert_int_equal(s.first_len, cases[i].len);
		assert_int_equal(c.cut_names, cases[i].cut);
		assert_int_equal(c.fixed_names, cases[i].fixed);
		free(buf);
		free(s.out);
	}
}

static void test_callback_stops(void **state)
{
	static const char in[] = "a 1\nb 2\nc 3\n";
	struct jvm_asprof_counts c = { .lines = 77 };
	struct sink s = { .abort_at = 2 };

	(void)state;
	assert_int_equal(jvm_asprof_parse_collapsed(in, sizeof(in) - 1, collect, &s, &c),
			 -ECANCELED);
	assert_int_equal(s.stacks, 2);
	assert_int_equal(c.lines, 77); /* counts are written only on success */
	free(s.out);
}

static void test_bad_arguments(void **state)
{
	static const char in[] = "a 1\n";
	struct sink s = { 0 };

	(void)state;
	assert_int_equal(jvm_asprof_parse_collapsed(in, 4, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(jvm_asprof_parse_collapsed(in, (size_t)INT_MAX + 1, collect, &s, NULL),
			 -EFBIG);
	assert_int_equal(jvm_asprof_parse_collapsed(in, 4, collect, &s, NULL), 1);
	free(s.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_options),
		cmocka_unit_test(test_stop_options),
		cmocka_unit_test(test_parse_code),
		cmocka_unit_test(test_parse_collapsed),
		cmocka_unit_test(test_frames_bound),
		cmocka_unit_test(test_frames_bound_malformed),
		cmocka_unit_test(test_line_bound),
		cmocka_unit_test(test_name_bound),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
