/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goroutines: parses Go's full goroutine dump (net/http/pprof /debug/pprof/goroutine?debug=2,
 * which is runtime.Stack(all) and has the format of a panic's traceback). The text comes from
 * an untrusted process: every field is checked, every count is bounded.
 *
 *   goroutine 6 [chan receive, 2 minutes, locked to thread]:
 *   main.worker(0xc00001c0c0, 0x5)                      a frame: function and arguments
 *   	/src/x.go:20 +0x30                                its file and line
 *   main.(*T).run(...)                                  an inlined frame (no "+0x" offset)
 *   	/src/x.go:16
 *   ...additional frames elided...                      (also "...12 frames elided...", 1.21+)
 *   created by main.main in goroutine 1                 (" in goroutine N" since Go 1.21)
 *   	/src/x.go:9 +0x40
 *   <blank line between goroutines>
 *
 * Also understood: "goroutine 1 gp=0x.. m=0 mp=0x.. [running]:" headers, "(scan)" states,
 * "goroutine running on other thread; stack unavailable" and "[originating from goroutine N]:"
 * ancestor blocks (GODEBUG=tracebackancestors; their frames are not the goroutine's own and are
 * skipped). Thread-safe; no state.
 */
#ifndef SLIDEOPS_RUNTIMES_GOROUTINES_H
#define SLIDEOPS_RUNTIMES_GOROUTINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GO_GOROUTINES_MAX 100000	    /* goroutines kept; more are counted */
#define GO_GOROUTINE_FRAMES_MAX 200	    /* frames kept per goroutine; more are counted */
#define GO_GOROUTINES_TEXT_MAX (256u << 20) /* larger input: -EFBIG */

struct goroutine_frame {
	const char *func; /* "main.worker", "net/http.(*conn).serve", "main.Map[...]" */
	const char *file; /* "/src/x.go"; "" when the dump gave none (a truncated dump) */
	uint32_t line;	  /* 0 when unknown */
};

struct go_goroutine {
	uint64_t id;
	const char *state;    /* "chan receive", "running", "select (no cases)", "IO wait" */
	int32_t wait_minutes; /* -1 when the dump gives none (waiting less than a minute) */
	bool locked_to_thread;
	bool elided; /* the dump itself left frames out ("...frames elided...") */
	uint32_t nframes;
	uint32_t frames_dropped;	      /* frames past GO_GOROUTINE_FRAMES_MAX, plus those the
					 * dump says it elided when it gives their number */
	const struct goroutine_frame *frames; /* leaf first; NULL when nframes is 0 */
	const char *created_by; /* "main.main", "net/http.(*Server).Serve"; NULL if none */
	uint64_t created_in;	/* the creating goroutine (Go 1.21+), 0 if not given */
};

struct go_goroutines {
	size_t n;
	struct go_goroutine *g;	   /* in dump order */
	size_t goroutines_dropped; /* past GO_GOROUTINES_MAX */
	size_t frames_dropped;	   /* sum of the goroutines' frames_dropped */
	size_t lines_skipped;	   /* lines that are not part of the format */
	bool truncated;		   /* the text ends inside a line or a frame */
};

/*
 * Parses @len bytes of @text (need not be NUL-terminated). On success *@out is a new object
 * (all strings point into it) that the caller frees with go_goroutines_free(). Returns 0;
 * -EINVAL when the text is not a goroutine dump (its first non-blank line is not a goroutine
 * header, or it holds NUL bytes: HTML, a debug=1 profile, binary data); -EFBIG past
 * GO_GOROUTINES_TEXT_MAX; -ENOMEM. A truncated last goroutine is kept as far as it goes.
 */
int go_goroutines_parse(const char *text, size_t len, struct go_goroutines **out);

/* Frees what go_goroutines_parse() returned; NULL is fine. */
void go_goroutines_free(struct go_goroutines *g);

/*
 * Strips the argument list from a frame's function line in place: "main.(*T).run(0x1, {0x2,
 * 0x3})" -> "main.(*T).run". The line must end with the ')' of the arguments. Returns the new
 * length, or -EINVAL (no balanced argument list at the end, or an empty name).
 */
int go_goroutines_strip_args(char *line, size_t len);

#endif
