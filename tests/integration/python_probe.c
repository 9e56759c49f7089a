// SPDX-License-Identifier: Apache-2.0
/*
 * Test driver for the CPython frame walk (tests/integration/test_python_frames.sh compiles it
 * against the built objects; it is not part of the product):
 *
 *   python_probe PID SECONDS
 *
 * finds PID's CPython (runtimes/python/py_process.h), samples it for SECONDS with the sampler
 * (daemon/collectors/sampler.h), names each Python frame (py_code.h), merges it with the
 * native frames (py_merge.h) and prints one collapsed line per distinct stack, root first:
 *
 *   <module> (w.py:40);main (w.py:33);[native];outer (w.py:14);hot (w.py:7) 123
 *
 * Native frames print as [native] (runs of them as one). On stderr, a summary:
 *   python_probe: version=3.12 samples=N python=N stale=N unnamed=N truncated=N
 * Exit status 0, or 1 with a message when the process is not a CPython we can walk.
 * PYTHON_PROBE_NATIVE_ONLY=1 samples without the Python walk (the cost baseline).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "bpf/python.h"
#include "bpf/sampler.h"
#include "daemon/collectors/sampler.h"
#include "runtimes/python/py_code.h"
#include "runtimes/python/py_merge.h"
#include "runtimes/python/py_process.h"

#define LINE_MAX_LEN 16384
#define MAX_LINES 4096

struct line {
	char *text;
	uint64_t count;
};

struct probe {
	struct py_process py;
	struct py_code_cache *cache;
	pid_t pid;
	struct line lines[MAX_LINES];
	size_t nlines;
	uint64_t samples, python, stale, unnamed, truncated;
};

static void add_line(struct probe *p, const char *text, uint64_t count)
{
	size_t i;

	for (i = 0; i < p->nlines; i++) {
		if (!strcmp(p->lines[i].text, text)) {
			p->lines[i].count += count;
			return;
		}
	}
	if (p->nlines < MAX_LINES) {
		p->lines[p->nlines].text = strdup(text);
		p->lines[p->nlines].count = count;
		if (p->lines[p->nlines].text)
			p->nlines++;
	}
}

/* Appends "name (file:line)" of Python frame @f to @buf. Returns -ESTALE for a freed one. */
static int name_frame(struct probe *p, const struct sampler_py_frame *f, char *buf, size_t size)
{
	const struct py_code_info *ci;
	const char *file;
	int line = 0, err;

	err = py_code_cache__lookup(p->cache, p->py.tgid, p->py.off, p->py.code_type,
				    py_read_process, &p->pid, f->code, &ci);
	if (err)
		return err;
	file = strrchr(ci->file, '/');
	file = file ? file + 1 : ci->file;
	if (py_code_line(p->py.off, ci, f->code, f->instr, &line))
		snprintf(buf, size, "%s (%s:?)", ci->name, file);
	else
		snprintf(buf, size, "%s (%s:%d)", ci->name, file, line);
	return 0;
}

static int on_sample(void *ctx, const struct sampler_sample *s)
{
	struct probe *p = ctx;
	uint8_t kinds[SAMPLER_MAX_STACK_DEPTH];
	bool entry[PY_MAX_FRAMES];
	struct py_merged m[SAMPLER_MAX_STACK_DEPTH + PY_MAX_FRAMES];
	char text[LINE_MAX_LEN] = "", frame[2 * PY_CODE_NAME_MAX + 32];
	bool last_native = false, stale = false;
	size_t i;
	int n;

	if (s->tgid != p->py.tgid || s->offcpu)
		return 0;
	p->samples += s->count;
	if (!s->npyframes) {
		fprintf(stderr,
			"python_probe: no Python frames: tid=%u count=%llu native=%zu "
			"kernel=%zu leaf=%s\n",
			s->tid, (unsigned long long)s->count, s->nustack, s->nkstack,
			!s->nustack ? "-" :
			py_process_native_kind(&p->py, s->ustack[0]) == PY_NATIVE_OTHER ?
				      "other" :
				      "interpreter");
		return 0;
	}
	p->python += s->count;
	if (s->py_flags & PY_STACK_TRUNCATED)
		p->truncated += s->count;
	for (i = 0; i < s->nustack; i++)
		kinds[i] = py_process_native_kind(&p->py, s->ustack[i]);
	for (i = 0; i < s->npyframes; i++)
		entry[i] = s->pyframes[i].entry;
	n = py_merge(kinds, s->nustack, entry, s->npyframes, m, sizeof(m) / sizeof(m[0]));
	for (i = n > 0 ? (size_t)n : 0; i-- > 0;) {
		if (!m[i].python) {
			if (last_native)
				continue;
			snprintf(frame, sizeof(frame), "[native]");
			last_native = true;
		} else {
			last_native = false;
			if (name_frame(p, &s->pyframes[m[i].index], frame, sizeof(frame))) {
				snprintf(frame, sizeof(frame), "[unknown]");
				stale = true;
			}
		}
		if (strlen(text) + strlen(frame) + 2 < sizeof(text))
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
				 text[0] ? ";" : "", frame);
	}
	if (stale)
		p->unnamed += s->count;
	add_line(p, text, s->count);
	return 0;
}

static int run(struct probe *p, unsigned seconds)
{
	uint32_t tgid = (uint32_t)p->pid;
	struct sampler_opts so = { .filter_tgids = true, .tgids = &tgid, .ntgids = 1 };
	struct timespec end, now;
	struct sampler *s = NULL;
	struct py_proc bp;
	int err;

	py_process_bpf(&p->py, &bp);
	if (!getenv("PYTHON_PROBE_NATIVE_ONLY")) { /* the cost baseline */
		so.py_tgids = &tgid;
		so.py_procs = &bp;
		so.npy = 1;
	}
	err = sampler__new(&so, &s);
	if (err)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	do {
		sampler__poll(s, 100);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	err = sampler__stop(s);
	if (!err)
		err = sampler__drain(s, on_sample, p);
out:
	sampler__free(s);
	return err;
}

int main(int argc, char **argv)
{
	static struct probe p;
	struct py_code_cache_stats st;
	size_t i;
	int err;

	if (argc != 3)
		return fprintf(stderr, "usage: %s PID SECONDS\n", argv[0]), 2;
	p.pid = (pid_t)atoi(argv[1]);
	err = py_process_find(NULL, (uint32_t)p.pid, &p.py);
	if (err)
		return fprintf(stderr, "python_probe: pid %d: %s\n", p.pid, strerror(-err)), 1;
	err = py_code_cache__new(NULL, &p.cache);
	if (!err)
		err = run(&p, (unsigned)atoi(argv[2]));
	if (err)
		return fprintf(stderr, "python_probe: sampling: %s\n", strerror(-err)), 1;
	for (i = 0; i < p.nlines; i++)
		printf("%s %llu\n", p.lines[i].text, (unsigned long long)p.lines[i].count);
	py_code_cache__stats(p.cache, &st);
	fprintf(stderr,
		"python_probe: version=%u.%u path=%s debug_offsets=%d samples=%llu "
		"python=%llu stale=%llu unnamed=%llu truncated=%llu\n",
		p.py.major, p.py.minor, p.py.path, p.py.debug_offsets,
		(unsigned long long)p.samples, (unsigned long long)p.python,
		(unsigned long long)st.stale, (unsigned long long)p.unnamed,
		(unsigned long long)p.truncated);
	py_code_cache__free(p.cache);
	return 0;
}
