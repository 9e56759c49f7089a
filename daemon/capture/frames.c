// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/frames.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/proc.h"
#include "base/text.h"
#include "bpf/python.h"
#include "bpf/sampler.h"
#include "bpf/unwind.h"
#include "cgroups/resolver.h"
#include "daemon/capture/capture.h"
#include "daemon/capture/jvmframes.h"
#include "daemon/capture/nodeframes.h"
#include "daemon/capture/pyframes.h"
#include "daemon/capture/symnames.h"
#include "daemon/collectors/thread_table.h"
#include "profile/profile.h"
#include "profile/report.h"
#include "runtimes/node/node_perfmap.h"
#include "runtimes/python/py_merge.h"
#include "symbols/symbolizer.h"

/* Process names by tgid, read from /proc when a process is first seen (bounded; a process that
 * does not fit is named by its sampled thread). */
#define PNAME_SLOTS 16384

struct pname {
	uint32_t tgid;
	char comm[16];
};

/* threads: the dominant function of one emitted thread. */
struct thread_fn {
	uint32_t tid;
	char fn[256];
};

struct frames {
	struct frames_opts o;
	struct profile *prof;
	struct pname *pnames;
	size_t npnames;
	struct thread_fn *thread_fns;
	size_t nthread_fns, cap_thread_fns;
	struct frames_unreadable unreadable[FRAMES_MAX_UNREADABLE];
	size_t nunreadable;
	uint64_t samples;
	uint64_t unattributed;
};

int frames__new(const struct frames_opts *opts, struct frames **out)
{
	struct frames *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->o = *opts;
	f->pnames = calloc(PNAME_SLOTS, sizeof(*f->pnames));
	if (!f->pnames) {
		free(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

void frames__free(struct frames *f)
{
	if (!f)
		return;
	free(f->pnames);
	free(f->thread_fns);
	free(f);
}

void frames__set_profile(struct frames *f, struct profile *prof)
{
	f->prof = prof;
}

uint64_t frames__samples(const struct frames *f)
{
	return f->samples;
}

uint64_t frames__unattributed(const struct frames *f)
{
	return f->unattributed;
}

size_t frames__unreadable(const struct frames *f, const struct frames_unreadable **out)
{
	*out = f->unreadable;
	return f->nunreadable;
}

static struct pname *pname_slot(struct frames *f, uint32_t tgid)
{
	size_t i = (tgid * 2654435761u) & (PNAME_SLOTS - 1), n;

	for (n = 0; n < PNAME_SLOTS; n++, i = (i + 1) & (PNAME_SLOTS - 1))
		if (f->pnames[i].tgid == tgid || !f->pnames[i].tgid)
			return &f->pnames[i];
	return NULL;
}

/* Keeps the names of the processes still there: the table is rebuilt (open addressing has no
 * delete), so a long-running sampler's table holds the living, not the first 8192 seen. */
static void prune_names(struct frames *f)
{
	struct pname *old = f->pnames, *p;
	size_t i;

	f->pnames = calloc(PNAME_SLOTS, sizeof(*f->pnames));
	if (!f->pnames) {
		f->pnames = old; /* kept whole: names stay right, the table just stays full */
		return;
	}
	f->npnames = 0;
	for (i = 0; i < PNAME_SLOTS; i++) {
		if (!old[i].tgid || !proc_exists(f->o.proc_root, old[i].tgid))
			continue;
		p = pname_slot(f, old[i].tgid);
		if (p) {
			*p = old[i];
			f->npnames++;
		}
	}
	free(old);
}

void frames__next(struct frames *f)
{
	f->prof = NULL;
	f->nthread_fns = 0;
	f->nunreadable = 0;
	f->samples = 0;
	f->unattributed = 0;
	prune_names(f);
}

void frames__remember_name(struct frames *f, uint32_t tgid)
{
	struct pname *p;
	char comm[sizeof(p->comm)];

	p = pname_slot(f, tgid);
	if (p && p->tgid == tgid) {
		/* announced again after an exec: it runs another program now */
		proc_read_comm(f->o.proc_root, tgid, comm, sizeof(comm));
		if (comm[0])
			memcpy(p->comm, comm, sizeof(comm));
		return;
	}
	if (f->npnames >= PNAME_SLOTS / 2 || !p)
		return;
	proc_read_comm(f->o.proc_root, tgid, p->comm, sizeof(p->comm));
	if (!p->comm[0])
		return;
	p->tgid = tgid;
	f->npnames++;
}

const char *frames__process_name(struct frames *f, uint32_t tgid, const char *fallback)
{
	struct pname *p = pname_slot(f, tgid);

	return p && p->tgid == tgid ? p->comm : fallback;
}

int frames_on_new_task(void *ctx, uint32_t tgid, uint64_t cgroup_id)
{
	struct frames *f = ctx;
	struct owner o;
	int err;

	(void)cgroup_id;
	frames__remember_name(f, tgid);
	/* A process may be gone already: not an error, it is named from what was seen. */
	owner_resolver__resolve(f->o.owners, tgid, &o);
	err = symbolizer__add_process(f->o.sym, tgid);
	if (err && err != -ESRCH && f->nunreadable < FRAMES_MAX_UNREADABLE) {
		f->unreadable[f->nunreadable].pid = tgid;
		f->unreadable[f->nunreadable].err = err;
		f->nunreadable++;
	}
	return 0;
}

/* A frame a perf map names with V8's name of JavaScript code ("JS:*hot /app/x.js:3:10"): the
 * function, its script and line, language Node.js. */
static void v8_perfmap_frame(struct prof_frame_info *fi, struct node_pm_name *pm)
{
	if (!fi->function || !fi->mapping || strcmp(fi->mapping, SYMBOLIZER_PERF_MAP_DSO) ||
	    node_perfmap_parse(fi->function, pm))
		return;
	fi->function = pm->function;
	fi->file = pm->script[0] ? pm->script : NULL;
	fi->line = pm->line;
	fi->mapping = pm->script[0] ? pm->script : "[javascript]";
	fi->address = 0;
	fi->lang = PROF_LANG_NODE;
}

/* Frames inlined at one address that a sample shows (DWARF, Go's inline trees), the function
 * holding it included. */
#define INLINE_MAX 8

/* Scratch for naming one frame: a perf map's JavaScript name, a name from an upload. */
struct frame_names {
	struct node_pm_name pm;
	char upload[1024];
};

/* @fi of what the symbolizer said of a frame: a perf map's JavaScript, else a name from
 * uploaded debug symbols when the node had none (strings in @sf and @nb). */
static void frame_of(struct frames *f, const struct sym_frame *sf, struct prof_frame_info *fi,
		     struct frame_names *nb)
{
	*fi = (struct prof_frame_info){
		.function = sf->name,
		.file = sf->file,
		.line = sf->line,
		.mapping = sf->dso,
		.build_id = sf->build_id,
		.address = sf->dso_addr,
		.unnamed_stripped = !sf->name && sf->stripped,
		.lang = sf->go ? PROF_LANG_GO : PROF_LANG_NATIVE,
	};
	v8_perfmap_frame(fi, &nb->pm);
	if (!fi->function && symnames_frame(f->o.symbols, fi, nb->upload, sizeof(nb->upload))) {
		fi->function = nb->upload;
		fi->unnamed_stripped = false;
	}
}

static int user_frame(struct frames *f, uint32_t tgid, uint64_t ip)
{
	struct prof_frame_info fi = { .lang = PROF_LANG_NATIVE,
				      .mapping = "[unknown]",
				      .address = ip };
	struct frame_names nb;
	struct sym_frame sf;

	if (symbolizer__user(f->o.sym, tgid, ip, &sf) == 0)
		frame_of(f, &sf, &fi, &nb);
	return profile__frame(f->prof, &fi);
}

static int kernel_frame(struct frames *f, uint64_t ip)
{
	struct prof_frame_info fi = { .lang = PROF_LANG_KERNEL, .mapping = "[kernel.kallsyms]" };
	struct sym_frame sf;

	if (symbolizer__kernel(f->o.sym, ip, &sf) == 0) {
		fi.function = sf.name;
		fi.address = sf.dso_addr;
	} else {
		fi.address = ip;
	}
	return profile__frame(f->prof, &fi);
}

const char *frames_ksym(void *ctx, uint64_t ip)
{
	struct frames *f = ctx;
	struct sym_frame sf;

	return symbolizer__kernel(f->o.sym, ip, &sf) == 0 ? sf.name : NULL;
}

/* Why an off-CPU interval happened, from where the thread slept in the kernel: "read", "futex",
 * "page fault", or "waiting for a CPU" when it was preempted. */
static void wait_reason(struct frames *f, const struct source_sample *s, char *buf, size_t size)
{
	char why[64];

	if (s->leaf == SOURCE_LEAF_RUNNABLE) {
		snprintf(buf, size, "[runnable: waiting for a CPU]");
		return;
	}
	source_wait_reason(frames_ksym, f, s->kstack, s->nkstack, why, sizeof(why));
	if (!strcmp(why, "kernel") && s->nustack)
		snprintf(why, sizeof(why), "other");
	snprintf(buf, size, "[off-CPU: %s]", why);
}

/* threads: the function a thread's dominant stack is "in": its leaf-most frame of the
 * application, else the synthetic leaf that says what it waited for. */
static int note_thread_fn(struct frames *f, uint32_t tid, const uint32_t *frames, size_t n)
{
	const struct prof_frame_info *fi, *pick = NULL;
	struct thread_fn *t;
	void *data = f->thread_fns;
	size_t i;
	int ret;

	for (i = 0; i < n && !pick; i++) {
		fi = profile__frame_info(f->prof, frames[i]);
		if (fi && fi->lang != PROF_LANG_KERNEL && !report_is_system_dso(fi->mapping))
			pick = fi;
	}
	if (!pick && n)
		pick = profile__frame_info(f->prof, frames[0]);
	ret = array_ensure(&data, &f->cap_thread_fns, sizeof(*f->thread_fns), f->nthread_fns + 1);
	if (ret)
		return ret;
	f->thread_fns = data;
	t = &f->thread_fns[f->nthread_fns++];
	t->tid = tid;
	if (pick)
		profile_frame_display(pick, t->fn, sizeof(t->fn));
	else
		snprintf(t->fn, sizeof(t->fn), "[unknown]");
	return 0;
}

void frames__set_node(struct frames *f, struct nodeframes *node)
{
	f->o.node = node;
}

/* Appends the frame @fi to @frames. Returns 0 or -ENOMEM. */
static int push_frame(struct frames *f, const struct prof_frame_info *fi, uint32_t *frames,
		      size_t *n)
{
	int id = profile__frame(f->prof, fi);

	if (id < 0)
		return id;
	frames[(*n)++] = (uint32_t)id;
	return 0;
}

/* The user frames of @s with its CPython frames in place of the interpreter's eval loop (the
 * Python frames named qualname, file and line), appended to @frames at *@n (room for
 * 2 * SAMPLER_MAX_STACK_DEPTH). Returns 1 when merged, 0 when @s has no Python frames (nothing
 * added), or -ENOMEM. */
static int python_frames(struct frames *f, const struct source_sample *s, uint32_t *frames,
			 size_t *n)
{
	static const struct prof_frame_info cut = { .function = PYFRAMES_TRUNCATED,
						    .mapping = "[python]",
						    .lang = PROF_LANG_PYTHON };
	struct py_merged m[SAMPLER_MAX_STACK_DEPTH + PY_MAX_FRAMES];
	struct prof_frame_info fi;
	int i, nm, id, outermost = -1;
	uint32_t ix;

	nm = f->o.py ? pyframes__merge(f->o.py, s, m, ARRAY_SIZE(m)) : 0;
	if (nm <= 0)
		return 0;
	for (i = 0; (s->py_flags & PY_STACK_TRUNCATED) && i < nm; i++)
		if (m[i].python)
			outermost = i;
	for (i = 0; i < nm && *n < 2 * SAMPLER_MAX_STACK_DEPTH; i++) {
		ix = m[i].index;
		if (m[i].python) {
			pyframes__frame(f->o.py, s, ix, &fi);
			id = profile__frame(f->prof, &fi);
		} else {
			id = user_frame(f, s->tgid,
					(ix || s->nkstack) ? s->ustack[ix] - 1 : s->ustack[ix]);
		}
		if (id < 0)
			return id;
		frames[(*n)++] = (uint32_t)id;
		/* the frames the walk did not reach sit between it and the interpreter's caller */
		if (i == outermost && *n < 2 * SAMPLER_MAX_STACK_DEPTH) {
			id = push_frame(f, &cut, frames, n);
			if (id < 0)
				return id;
		}
	}
	return 1;
}

/* The Java frame at @s->ustack[@i] (two entries), named and expanded into its inlined methods,
 * appended to @frames at *@n (room for @room). Returns 0 or -ENOMEM. */
static int java_frames(struct frames *f, const struct source_sample *s, size_t i, uint32_t *frames,
		       size_t *n, size_t room)
{
	struct prof_frame_info fi[JVMFRAMES_MAX_EXPAND];
	int k, nf, ret;

	nf = jvmframes__frame(f->o.jvm, s->tgid, s->ustack[i], s->ustack[i + 1], fi,
			      JVMFRAMES_MAX_EXPAND);
	for (k = 0; k < nf && *n < room; k++) {
		ret = push_frame(f, &fi[k], frames, n);
		if (ret)
			return ret;
	}
	return 0;
}

/* The frame at @ip with the frames inlined there (DWARF, Go's inline trees), innermost first,
 * appended to @frames at *@n while there is room (@room). Returns 0 or -ENOMEM. */
static int native_frames(struct frames *f, uint32_t tgid, uint64_t ip, uint32_t *frames, size_t *n,
			 size_t room)
{
	struct prof_frame_info fi = { .lang = PROF_LANG_NATIVE,
				      .mapping = "[unknown]",
				      .address = ip };
	struct sym_frame sf[INLINE_MAX];
	struct frame_names nb;
	int k, nf, ret;

	nf = symbolizer__user_inline(f->o.sym, tgid, ip, sf, INLINE_MAX);
	if (nf <= 0)
		return *n < room ? push_frame(f, &fi, frames, n) : 0;
	for (k = 0; k < nf && *n < room; k++) {
		frame_of(f, &sf[k], &fi, &nb);
		ret = push_frame(f, &fi, frames, n);
		if (ret)
			return ret;
	}
	return 0;
}

/* The user frames of @s (native, and Java where the unwinder walked a JVM's code heaps),
 * appended to @frames at *@n (room for @room). Returns 0 or -ENOMEM. */
static int user_frames(struct frames *f, const struct source_sample *s, uint32_t *frames, size_t *n,
		       size_t room)
{
	size_t i;
	int id;

	for (i = 0; i < s->nustack && *n < room; i++) {
		if ((s->ustack[i] & UW_JAVA_TAG) && i + 1 < s->nustack && f->o.jvm) {
			id = java_frames(f, s, i, frames, n, room);
			if (id < 0)
				return id;
			i++; /* its cookie */
			continue;
		}
		id = native_frames(f, s->tgid, (i || s->nkstack) ? s->ustack[i] - 1 : s->ustack[i],
				   frames, n, room);
		if (id < 0)
			return id;
	}
	return 0;
}

/* The user frames of @s, with the JavaScript stack V8 sampled at its time (daemon/capture/
 * nodeframes.h) in place of the frames in V8's code, appended to @frames at *@n (room for
 * @room). Returns 1 when merged, 0 when the native frames alone were added, or -ENOMEM. */
static int node_frames(struct frames *f, const struct source_sample *s, uint32_t *frames, size_t *n,
		       size_t room)
{
	struct prof_frame_info js[NODEFRAMES_MAX_DEPTH];
	uint32_t ids[SAMPLER_MAX_STACK_DEPTH];
	size_t i, nu = 0, nj = 0, inner = SIZE_MAX, outer = 0;
	const struct prof_frame_info *fi;
	int id;

	for (i = 0; i < s->nustack && nu < SAMPLER_MAX_STACK_DEPTH; i++) {
		id = user_frame(f, s->tgid, (i || s->nkstack) ? s->ustack[i] - 1 : s->ustack[i]);
		if (id < 0)
			return id;
		ids[nu++] = (uint32_t)id;
		fi = profile__frame_info(f->prof, (uint32_t)id);
		if (fi && nodeframes_in_v8(fi)) {
			inner = inner == SIZE_MAX ? i : inner;
			outer = i;
		}
	}
	if (inner != SIZE_MAX)
		nj = nodeframes__stack(f->o.node, s->tgid, s->time_ns, js, ARRAY_SIZE(js));
	if (!nj)
		inner = outer = nu; /* the native frames alone */
	for (i = 0; i < inner && *n < room; i++)
		frames[(*n)++] = ids[i];
	for (i = 0; i < nj && *n < room; i++) {
		id = push_frame(f, &js[i], frames, n);
		if (id < 0)
			return id;
	}
	for (i = nj ? outer + 1 : nu; i < nu && *n < room; i++)
		frames[(*n)++] = ids[i];
	return nj > 0;
}

/* The language of the program that took sample @s (@frames, @n; @merged: it has Python
 * frames): Python, else Go or Java after the first of its frames in either, else native. */
static enum prof_lang sample_lang(const struct frames *f, const uint32_t *frames, size_t n,
				  bool merged)
{
	const struct prof_frame_info *fi;
	size_t i;

	if (merged)
		return PROF_LANG_PYTHON;
	for (i = 0; i < n; i++) {
		fi = profile__frame_info(f->prof, frames[i]);
		if (fi && (fi->lang == PROF_LANG_GO || fi->lang == PROF_LANG_JAVA ||
			   fi->lang == PROF_LANG_NODE))
			return fi->lang;
	}
	return PROF_LANG_NATIVE;
}

/* The stack of @s, leaf first: synthetic leaf, kernel frames, user frames; *@py: it has Python
 * frames. Returns the count or -ENOMEM. */
static int sample_stack(struct frames *f, const struct source_sample *s, uint32_t *frames, bool *py)
{
	char reason[96];
	struct prof_frame_info fi = { .function = reason,
				      .mapping = REPORT_WAIT_MAPPING,
				      .lang = PROF_LANG_KERNEL };
	size_t i, n = 0;
	int id, merged;

	if (s->leaf != SOURCE_LEAF_NONE) {
		/* A synthetic leaf says why: the wait reason, the kind of lock wait. */
		if (s->leaf == SOURCE_LEAF_TEXT)
			snprintf(reason, sizeof(reason), "%s", s->leaf_text);
		else
			wait_reason(f, s, reason, sizeof(reason));
		id = push_frame(f, &fi, frames, &n);
		if (id < 0)
			return id;
	}
	/* Kernel frames first: the stack is leaf first, and the kernel sits above user space.
	 * Return addresses point after the call: look up ip - 1 for every frame but the leaf. */
	for (i = 0; s->kernel_frames && i < s->nkstack && n < SAMPLER_MAX_STACK_DEPTH; i++) {
		id = kernel_frame(f, i ? s->kstack[i] - 1 : s->kstack[i]);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
	}
	merged = s->npyframes ? python_frames(f, s, frames, &n) : 0;
	if (merged < 0)
		return merged;
	*py = merged;
	if (!merged && s->time_ns && nodeframes__has(f->o.node, s->tgid)) {
		id = node_frames(f, s, frames, &n, 2 * SAMPLER_MAX_STACK_DEPTH);
		if (id < 0)
			return id;
	} else if (!merged) {
		id = user_frames(f, s, frames, &n, 2 * SAMPLER_MAX_STACK_DEPTH);
		if (id < 0)
			return id;
	}
	return (int)n;
}

/* wall and locks: a wait of a JVM's own thread (GC, JIT compiler, VM thread: no Java frame in
 * its stack). The JVM waits there by design, like a kernel thread; async-profiler's wall mode
 * shows Java threads only. Counted for the notes and left out. */
static bool jvm_own_wait(struct frames *f, const struct source_sample *s)
{
	size_t i;

	if (!f->o.jvm || s->leaf == SOURCE_LEAF_NONE ||
	    (f->o.question != Q_WALL && f->o.question != Q_LOCKS) ||
	    !jvmframes__bpf_of(f->o.jvm, s->tgid))
		return false;
	for (i = 0; i < s->nustack; i++)
		if (s->ustack[i] & UW_JAVA_TAG)
			/* a Java thread's wait: the JVM's own lock events may stand for it */
			return f->o.question == Q_LOCKS &&
			       jvmframes__runtime_wait(f->o.jvm, s->tgid, s->values[0]);
	jvmframes__own_wait(f->o.jvm, s->values[0]);
	return true;
}

/* locks: a Java thread in Thread.sleep or Object.wait waits for time or a notification, not
 * for a lock (its futex is the JVM's own parking): counted for the notes and left out; wall
 * shows it. */
static bool java_not_lock(struct frames *f, const struct source_sample *s, const uint32_t *frames,
			  size_t n)
{
	static const char *const waits[] = { "java.lang.Thread.sleep", "java.lang.Object.wait" };
	const struct prof_frame_info *fi;
	size_t i, k;

	if (!f->o.jvm || f->o.question != Q_LOCKS)
		return false;
	for (i = 0; i < n; i++) {
		fi = profile__frame_info(f->prof, frames[i]);
		if (!fi || fi->lang != PROF_LANG_JAVA || !fi->function)
			continue;
		for (k = 0; k < ARRAY_SIZE(waits); k++)
			if (!strncmp(fi->function, waits[k], strlen(waits[k]))) {
				jvmframes__not_lock(f->o.jvm, s->values[0]);
				return true;
			}
		return false; /* the innermost Java frame decides */
	}
	return false;
}

int frames_on_sample(void *ctx, const struct source_sample *s)
{
	struct frames *f = ctx;
	/* a synthetic leaf, the kernel stack and the user stack */
	uint32_t frames[2 * SAMPLER_MAX_STACK_DEPTH + 1];
	struct prof_labels labels = {};
	char owner_name[OWNER_NAME_MAX + 32];
	struct owner o;
	bool py = false;
	size_t n;
	int ret;

	/* Kernel threads (no user stack at all) wait by design; their off-CPU time would bury
	 * the waiting of the applications. */
	if ((s->leaf == SOURCE_LEAF_WAIT || s->leaf == SOURCE_LEAF_RUNNABLE) &&
	    s->ustack_err == -EFAULT && !s->nustack)
		return 0;
	if (jvm_own_wait(f, s))
		return 0;
	ret = sample_stack(f, s, frames, &py);
	if (ret < 0)
		return ret;
	n = (size_t)ret;
	if (java_not_lock(f, s, frames, n))
		return 0;
	if (!n) {
		/* No stack at all: the user stack was lost (stack map full) or unreadable, and the
		 * sample hit no kernel code. Keep the value, under a frame that says so. */
		struct prof_frame_info fi = {
			.function = s->ustack_err == -EFAULT ? "[no stack]" : "[stack lost]",
			.mapping = "[unknown]",
			.lang = PROF_LANG_NATIVE,
		};

		ret = push_frame(f, &fi, frames, &n);
		if (ret)
			return ret;
	}
	if (owner_resolver__resolve(f->o.owners, s->tgid, &o) < 0) {
		memset(&o, 0, sizeof(o));
		o.group = OWNER_OTHER;
		f->unattributed += s->oncpu ? s->oncpu : 1;
	}
	labels.owner = owner_format(&o, owner_name, sizeof(owner_name));
	labels.process = frames__process_name(f, s->tgid, s->comm);
	labels.thread = s->comm;
	labels.pid = s->tgid;
	labels.tid = s->tid;
	labels.lang = sample_lang(f, frames, n, py);
	f->samples += s->oncpu;
	if (f->o.question == Q_THREADS) {
		ret = note_thread_fn(f, s->tid, frames, n);
		if (ret)
			return ret;
	}
	return profile__add(f->prof, frames, n, &labels, s->values);
}

static double share_of(uint32_t part, uint32_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* One row of the threads table from entry @e. */
static void fill_thread(struct frames *f, const struct thread_entry *e, struct capture_thread *t)
{
	struct owner o;
	size_t j;

	t->tid = e->tid;
	t->pid = e->tgid;
	snprintf(t->name, sizeof(t->name), "%s", e->comm);
	snprintf(t->process, sizeof(t->process), "%s", frames__process_name(f, e->tgid, e->comm));
	if (owner_resolver__resolve(f->o.owners, (int)e->tgid, &o) < 0) {
		memset(&o, 0, sizeof(o));
		o.group = OWNER_OTHER;
	}
	owner_format(&o, t->owner, sizeof(t->owner));
	/* comm is raw bytes, cut by the kernel at 15, mid-character too: base/text's rule */
	text_utf8_sanitize(t->name);
	text_utf8_sanitize(t->process);
	text_utf8_sanitize(t->owner);
	t->running = share_of(e->state[THREAD_RUNNING], e->snapshots);
	t->runnable = share_of(e->state[THREAD_RUNNABLE], e->snapshots);
	t->waiting = share_of(e->state[THREAD_WAITING], e->snapshots);
	for (j = 0; j < e->nwaits && j < ARRAY_SIZE(t->waits); j++) {
		snprintf(t->waits[j].reason, sizeof(t->waits[j].reason), "%s", e->waits[j].reason);
		t->waits[j].share = share_of(e->waits[j].snapshots, e->snapshots);
		t->nwaits++;
	}
}

size_t frames__collect_threads(struct frames *f, const struct thread_entry *e, size_t n,
			       struct capture_thread *out)
{
	size_t i, j, k = 0, nout = 0;

	for (i = 0; i < n; i++) {
		struct capture_thread *t;

		if (!e[i].snapshots)
			continue;
		t = &out[nout++];
		fill_thread(f, &e[i], t);
		/* thread_fns were noted in the order the entries were emitted (some may be
		 * missing: a sample the capture left out) */
		for (j = k; j < f->nthread_fns && f->thread_fns[j].tid != e[i].tid; j++)
			;
		snprintf(t->function, sizeof(t->function), "%s",
			 j < f->nthread_fns ? f->thread_fns[j].fn : "[unknown]");
		if (j < f->nthread_fns)
			k = j + 1;
	}
	return nout;
}
