// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/go/goroutines.h"
#include "runtimes/go/profiles.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_STACK 4

/* One sample of a small Go profile: a stack (leaf first, NULL-ended) and its two values. */
struct row_sample {
	const char *stack[MAX_STACK + 1];
	int64_t v0, v1;
};

/* A profile in sample types @t0, @t1 holding @s (samples with an empty stack end the list). */
static struct profile *make_profile(const char *t0, const char *t1, const struct row_sample *s,
				    size_t n)
{
	struct profile_opts o = { .sample_type = { t0, t1 }, .sample_unit = { "bytes", "count" },
				  .nvalues = 2 };
	struct profile *p = NULL;
	size_t i, j;

	assert_int_equal(profile__new(&o, &p), 0);
	for (i = 0; i < n && s[i].stack[0]; i++) {
		uint32_t frames[MAX_STACK];
		int64_t v[2] = { s[i].v0, s[i].v1 };

		for (j = 0; s[i].stack[j]; j++) {
			struct prof_frame_info fi = { .function = s[i].stack[j], .mapping = "/app",
						      .lang = PROF_LANG_GO };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			frames[j] = (uint32_t)id;
		}
		assert_int_equal(profile__add(p, frames, j, NULL, v), 0);
	}
	return p;
}

/* The function of frame @k of sample @i of @p ("" past the stack). */
static const char *frame_fn(const struct profile *p, size_t i, size_t k)
{
	const struct prof_frame_info *f;
	struct prof_sample s;

	assert_int_equal(profile__sample(p, i, &s), 0);
	if (k >= s.nframes)
		return "";
	f = profile__frame_info(p, s.frames[k]);
	return f && f->function ? f->function : "";
}

static const struct row_sample heap[] = {
	{ { "main.holdMemory", "main.main", NULL }, 4096, 4 },
	{ { "main.other", NULL }, 100, 1 },
};

static void test_decode(void **state __attribute__((unused)))
{
	static const struct {
		const char *enc0, *enc1;	/* NULL enc0: @raw is the body */
		const char *raw;
		bool gzip;
		const char *t0, *t1;
		size_t max;
		int ret;
		int64_t total0, total1;	/* with t0, t1 */
	} cases[] = {
		{ "inuse_space", "inuse_objects", NULL, false, "inuse_space", "inuse_objects", 0,
		  0, 4196, 5 },
		/* the question's order, not the message's */
		{ "alloc_objects", "alloc_space", NULL, false, "alloc_space", "alloc_objects", 0,
		  0, 5, 4196 },
		{ "delay", "contentions", NULL, true, "delay", "contentions", 0, 0, 4196, 5 },
		{ "inuse_space", "inuse_objects", NULL, false, "alloc_space", "alloc_objects", 0,
		  -ENOENT, 0, 0 },
		{ "inuse_space", "inuse_objects", NULL, false, "inuse_space", "inuse_objects", 8,
		  -EFBIG, 0, 0 },
		{ "inuse_space", "inuse_objects", NULL, true, "inuse_space", "inuse_objects", 8,
		  -EFBIG, 0, 0 },
		{ NULL, NULL, "<html>404 page not found</html>", false, "delay", "contentions", 0,
		  -EINVAL, 0, 0 },
		{ NULL, NULL, "\x1f\x8b garbage", false, "delay", "contentions", 0, -EINVAL, 0, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile *src = NULL, *out = NULL;
		uint8_t *body = NULL;
		size_t len;
		int ret;

		print_message("case %zu\n", i);
		if (cases[i].enc0) {
			src = make_profile(cases[i].enc0, cases[i].enc1, heap, ARRAY_SIZE(heap));
			if (cases[i].gzip) {
				char path[] = "/tmp/test_profiles_XXXXXX";
				int fd = mkstemp(path);
				FILE *f;

				assert_true(fd >= 0);
				close(fd);
				assert_int_equal(pprof_write_file(src, path), 0);
				f = fopen(path, "rb");
				assert_non_null(f);
				body = malloc(1 << 16);
				len = fread(body, 1, 1 << 16, f);
				fclose(f);
				unlink(path);
			} else {
				assert_int_equal(pprof_encode(src, &body, &len), 0);
			}
		} else {
			len = strlen(cases[i].raw);
			body = (uint8_t *)strdup(cases[i].raw);
		}
		ret = go_profiles_decode(body, len, cases[i].t0, cases[i].t1, cases[i].max, &out);
		assert_int_equal(ret, cases[i].ret);
		if (!ret) {
			assert_int_equal(profile__total(out, 0), cases[i].total0);
			assert_int_equal(profile__total(out, 1), cases[i].total1);
			assert_string_equal(profile__opts(out)->sample_type[0], cases[i].t0);
			assert_string_equal(frame_fn(out, 0, 0), "main.holdMemory");
		}
		profile__free(out);
		profile__free(src);
		free(body);
	}
}

static void test_decode_why(void **state __attribute__((unused)))
{
	static const struct {
		int err;
		const char *why;
	} cases[] = {
		{ -ENOENT, "those sample types are missing" },
		{ -EFBIG, "too large" },
		{ -EINVAL, "malformed" },
		{ -ENOMEM, "malformed" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_string_equal(go_profiles_decode_why(cases[i].err), cases[i].why);
	}
}

static void test_mutex_period(void **state __attribute__((unused)))
{
	static const struct {
		const char *text;
		long period;
	} cases[] = {
		{ "--- mutex:\ncycles/second=2400000000\nsampling period=5\n", 5 },
		{ "--- mutex:\ncycles/second=2400000000\nsampling period=0\n", 0 },
		{ "sampling period=1", 1 },
		{ "--- mutex:\ncycles/second=2400000000\n", -1 },
		{ "", -1 },
		{ NULL, -1 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(go_profiles_mutex_period(cases[i].text), cases[i].period);
	}
}

static void test_labels(void **state __attribute__((unused)))
{
	static const struct {
		const char *process, *owner, *comm;
		const char *want_process;
	} cases[] = {
		{ NULL, NULL, "app", "app" },
		{ "billing-api", "Service billing", "app", "billing-api" },
		{ NULL, "Unit x.service", "", "" },
		{ NULL, NULL, NULL, NULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof_labels l = { .process = cases[i].process, .owner = cases[i].owner,
					 .lang = PROF_LANG_NATIVE };

		print_message("case %zu\n", i);
		go_profiles_labels(&l, 1234, cases[i].comm);
		assert_int_equal(l.pid, 1234);
		assert_int_equal(l.lang, PROF_LANG_GO);
		assert_ptr_equal(l.owner, cases[i].owner);
		if (cases[i].want_process)
			assert_string_equal(l.process, cases[i].want_process);
		else
			assert_null(l.process);
	}
}

static const struct row_sample lock_start[] = {
	{ { "sync.(*Mutex).Unlock", "main.contend", NULL }, 1000, 10 },
	{ { "runtime.chanrecv1", "main.wait", NULL }, 50, 1 },
};
static const struct row_sample lock_end[] = {
	{ { "sync.(*Mutex).Unlock", "main.contend", NULL }, 3000, 30 },
	{ { "runtime.chanrecv1", "main.wait", NULL }, 50, 1 },
	{ { "sync.(*Mutex).Lock", "main.contend", NULL }, 700, 7 },
};

static void test_add_delta(void **state __attribute__((unused)))
{
	static const struct {
		const char *t_start;		/* NULL: no start snapshot */
		const char *t_dst;		/* NULL: one value (cpu samples) */
		const char *leaf;
		bool keep;
		int ret;
		size_t nsamples;
		int64_t total0, total1;
		const char *leaf0;	/* frame 0 of the first sample; error rows: "bad-lang" */
	} cases[] = {
		/* heap at the end: everything */
		{ NULL, "delay", NULL, false, 0, 3, 3750, 38, "sync.(*Mutex).Unlock" },
		/* allocs, mutex: what grew; the channel wait did not */
		{ "delay", "delay", NULL, false, 0, 2, 2700, 27, "sync.(*Mutex).Unlock" },
		{ "delay", "delay", GO_PROFILES_MUTEX_LEAF, false, 0, 2, 2700, 27,
		  GO_PROFILES_MUTEX_LEAF },
		/* block with the mutex profile on: sync.Mutex waits left out */
		{ "delay", "delay", GO_PROFILES_BLOCK_LEAF, true, 0, 1, 2000, 20,
		  GO_PROFILES_BLOCK_LEAF },
		{ NULL, "delay", GO_PROFILES_BLOCK_LEAF, true, 0, 2, 3050, 31,
		  GO_PROFILES_BLOCK_LEAF },
		/* a destination of one value; labels in no language */
		{ "delay", NULL, NULL, false, -EINVAL, 0, 0, 0, NULL },
		{ "delay", "delay", NULL, false, -EINVAL, 0, 0, 0, "bad-lang" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile *start = NULL, *end, *dst;
		struct prof_labels l = { .owner = "Service billing", .process = "app",
					 .pid = 12, .lang = PROF_LANG_GO };
		struct prof_sample s;
		int ret;

		print_message("case %zu\n", i);
		end = make_profile("delay", "contentions", lock_end, ARRAY_SIZE(lock_end));
		if (cases[i].t_dst) {
			dst = make_profile(cases[i].t_dst, "contentions", NULL, 0);
		} else {
			struct profile_opts o = { .nvalues = 1, .sample_type = { "samples" },
						  .sample_unit = { "count" } };

			assert_int_equal(profile__new(&o, &dst), 0);
		}
		if (cases[i].ret && cases[i].leaf0)
			l.lang = PROF_LANG_COUNT;
		if (cases[i].t_start)
			start = make_profile(cases[i].t_start, "contentions", lock_start,
					     ARRAY_SIZE(lock_start));
		ret = go_profiles_add_delta(dst, end, start, &l, cases[i].leaf,
					    cases[i].keep ? go_profiles_not_sync_mutex : NULL);
		assert_int_equal(ret, cases[i].ret);
		if (!ret) {
			assert_int_equal(profile__nsamples(dst), cases[i].nsamples);
			assert_int_equal(profile__total(dst, 0), cases[i].total0);
			assert_int_equal(profile__total(dst, 1), cases[i].total1);
			assert_string_equal(frame_fn(dst, 0, 0), cases[i].leaf0);
			assert_int_equal(profile__sample(dst, 0, &s), 0);
			assert_int_equal(s.labels->pid, 12);
			assert_string_equal(s.labels->owner, "Service billing");
			if (cases[i].leaf)
				assert_string_equal(profile__frame_info(dst, s.frames[0])->mapping,
						    REPORT_WAIT_MAPPING);
		}
		profile__free(start);
		profile__free(end);
		profile__free(dst);
	}
}

static void test_not_sync_mutex(void **state __attribute__((unused)))
{
	static const struct {
		const char *stack[MAX_STACK + 1];
		bool keep;
	} cases[] = {
		{ { "sync.(*Mutex).Lock", "main.f", NULL }, false },
		{ { "sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock", "main.f", NULL }, false },
		{ { "sync.(*RWMutex).Lock", "main.f", NULL }, false },
		{ { "sync.(*RWMutex).RLock", "main.f", NULL }, false },
		{ { "runtime.chanrecv1", "main.f", NULL }, true },
		{ { "sync.(*WaitGroup).Wait", "main.f", NULL }, true },
		{ { "sync.(*Mutex).Unlock", NULL }, true },
		{ { "main.f", NULL }, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct row_sample rs = { .v0 = 1, .v1 = 1 };
		struct prof_sample s;
		struct profile *p;

		print_message("case %zu\n", i);
		memcpy(rs.stack, cases[i].stack, sizeof(rs.stack));
		p = make_profile("delay", "contentions", &rs, 1);
		assert_int_equal(profile__sample(p, 0, &s), 0);
		assert_int_equal(go_profiles_not_sync_mutex(p, &s), cases[i].keep);
		profile__free(p);
	}
}

#define DUMPER "goroutine 9 [running]:\n" \
	"runtime/pprof.writeGoroutineStacks({0x75c480, 0xc000068000})\n" \
	"\t/usr/lib/go/src/runtime/pprof/pprof.go:692 +0x70\n" \
	"runtime/pprof.writeGoroutine({0x75c480?, 0xc000068000?}, 0x0?)\n" \
	"\t/usr/lib/go/src/runtime/pprof/pprof.go:681 +0x2b\n\n"
#define PARKED(id) "goroutine " #id " [chan receive, 3 minutes]:\n" \
	"runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)\n" \
	"\t/usr/lib/go/src/runtime/proc.go:363 +0xd6\n" \
	"runtime.chanrecv1(0x0?, 0x0?)\n" \
	"\t/usr/lib/go/src/runtime/chan.go:442 +0x18\n" \
	"main.parkHere(...)\n" \
	"\t/src/app/main.go:20\n" \
	"main.main()\n" \
	"\t/src/app/main.go:30 +0x30\n\n"
#define SLEEPING(id) "goroutine " #id " [sleep]:\n" \
	"time.Sleep(0x3b9aca00)\n" \
	"\t/usr/lib/go/src/runtime/time.go:195 +0x135\n" \
	"main.sleepHere()\n" \
	"\t/src/app/main.go:40 +0x25\n\n"
#define STD_ONLY "goroutine 3 [IO wait]:\n" \
	"internal/poll.runtime_pollWait(0x7f, 0x72)\n" \
	"\t/usr/lib/go/src/runtime/netpoll.go:305 +0x89\n" \
	"net/http.(*conn).serve(0xc0000a4000, {0x75e3b8, 0xc000068000})\n" \
	"\t/usr/lib/go/src/net/http/server.go:1991 +0x607\n\n"
#define UTF8 "goroutine 4 [select]:\n" \
	"main.r\xc3\xa9sum\xc3\xa9()\n" \
	"\t/src/app/main.go:50 +0x25\n\n"

static void test_add_goroutines(void **state __attribute__((unused)))
{
	static const struct {
		const char *dump;
		const char *comm;
		enum prof_lang lang;	/* of the labels: PROF_LANG_COUNT is refused */
		int ret;
		size_t nsamples, ngroups;
		uint64_t total;
		/* the first group once sorted */
		const char *state, *function;
		uint32_t count;
	} cases[] = {
		{ DUMPER PARKED(1) PARKED(2) SLEEPING(5), "app", PROF_LANG_GO, 0, 2, 2, 3,
		  "chan receive", "main.parkHere", 2 },
		{ SLEEPING(1) PARKED(2) SLEEPING(3) SLEEPING(4), "app", PROF_LANG_GO, 0, 2, 2, 4,
		  "sleep", "main.sleepHere", 3 },
		/* only the standard library: the leaf */
		{ STD_ONLY, "app", PROF_LANG_GO, 0, 1, 1, 1, "IO wait",
		  "internal/poll.runtime_pollWait", 1 },
		{ UTF8, "r\xc3\xa9sum\xc3\xa9-app", PROF_LANG_GO, 0, 1, 1, 1, "select",
		  "main.r\xc3\xa9sum\xc3\xa9", 1 },
		/* a long comm is cut to the group's 15 bytes */
		{ UTF8, "a-very-long-process-name", PROF_LANG_GO, 0, 1, 1, 1, "select",
		  "main.r\xc3\xa9sum\xc3\xa9", 1 },
		/* the program's server answering us, nothing else */
		{ DUMPER, "app", PROF_LANG_GO, 0, 0, 0, 0, NULL, NULL, 0 },
		{ PARKED(1), "app", PROF_LANG_COUNT, -EINVAL, 0, 0, 0, NULL, NULL, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof_labels l = { .process = "app", .pid = 77, .lang = cases[i].lang };
		struct go_groups groups = { 0 };
		struct go_goroutines *gs = NULL;
		struct profile *dst;
		int ret;

		print_message("case %zu\n", i);
		dst = make_profile("goroutines", "count", NULL, 0);
		assert_int_equal(go_goroutines_parse(cases[i].dump, strlen(cases[i].dump), &gs), 0);
		ret = go_profiles_add_goroutines(dst, gs, &l, cases[i].comm, "/src/app/app",
						 &groups);
		assert_int_equal(ret, cases[i].ret);
		go_groups_sort(&groups);
		if (!ret) {
			assert_int_equal(profile__nsamples(dst), cases[i].nsamples);
			assert_int_equal(groups.n, cases[i].ngroups);
			assert_int_equal(groups.total, cases[i].total);
			assert_int_equal(profile__total(dst, 0), (int64_t)cases[i].total);
		}
		if (!ret && cases[i].state) {
			char leaf[96], comm[16];

			snprintf(leaf, sizeof(leaf), "[goroutine: %s]", cases[i].state);
			snprintf(comm, sizeof(comm), "%s", cases[i].comm);
			assert_string_equal(groups.g[0].state, cases[i].state);
			assert_string_equal(groups.g[0].function, cases[i].function);
			assert_int_equal(groups.g[0].count, cases[i].count);
			assert_int_equal(groups.g[0].pid, 77);
			assert_string_equal(groups.g[0].process, comm);
			assert_string_equal(frame_fn(dst, 0, 0), leaf);
		}
		go_groups_release(&groups);
		assert_null(groups.g);
		assert_int_equal(groups.n, 0);
		go_goroutines_free(gs);
		profile__free(dst);
	}
}

static void test_groups_sort(void **state __attribute__((unused)))
{
	static const struct {
		uint32_t pid[3], count[3];
		uint32_t want_pid[3];
	} cases[] = {
		{ { 1, 2, 3 }, { 1, 5, 3 }, { 2, 3, 1 } },
		{ { 9, 4, 7 }, { 2, 2, 2 }, { 4, 7, 9 } },
		{ { 5, 1, 0 }, { 1, 1, 9 }, { 0, 1, 5 } },
	};
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct go_goroutine_group g[3] = { 0 };
		struct go_groups groups = { .g = g, .n = 3 };

		print_message("case %zu\n", i);
		for (j = 0; j < 3; j++) {
			g[j].pid = cases[i].pid[j];
			g[j].count = cases[i].count[j];
		}
		go_groups_sort(&groups);
		for (j = 0; j < 3; j++)
			assert_int_equal(g[j].pid, cases[i].want_pid[j]);
	}
	{
		struct go_groups empty = { 0 };

		go_groups_sort(&empty);	/* nothing to sort, nothing allocated */
		go_groups_release(&empty);
		assert_null(empty.g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_why),
		cmocka_unit_test(test_mutex_period),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_add_delta),
		cmocka_unit_test(test_not_sync_mutex),
		cmocka_unit_test(test_add_goroutines),
		cmocka_unit_test(test_groups_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
