// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/jvmframes.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/proc.h"
#include "bpf/unwind.h"
#include "daemon/capture/answer.h"
#include "runtimes/detect.h"
#include "runtimes/detect_cache.h"
#include "runtimes/jvm/jvm_unwind.h"
#include "runtimes/jvm/jvm_vmstructs.h"

struct jvm_proc {
	uint32_t tgid; /* jvm_read_process()'s context: stable, the array never moves */
	unsigned major;
	struct uw_jvm uw;
	struct jvm_names *names;
};

struct jvm_noted {
	uint32_t tgid;
	int err;
	char display[64];
};

struct jvmframes {
	const char *proc_root;
	struct jvm_proc *procs; /* JVMFRAMES_MAX_PROCS */
	size_t nprocs;
	struct jvm_noted noted[JVMFRAMES_MAX_NOTED];
	size_t nnoted, nnot_walked, nover;
	uint64_t frames, unnamed; /* Java frames named / not */
	uint64_t own_waits;	  /* waits of the JVMs' own threads, left out */
	int64_t own_wait_ns;
	uint64_t sleeps; /* locks: waits in Thread.sleep / Object.wait, left out */
	int64_t sleep_ns;
	uint32_t runtime_locks[JVMFRAMES_MAX_RUNTIME_LOCKS];
	size_t nruntime_locks;
	uint64_t runtime_waits; /* locks: futex waits the JVM's own lock events replace */
	int64_t runtime_wait_ns;
	struct jvm_frame out[JVMFRAMES_MAX_EXPAND];
};

int jvmframes__new(const char *proc_root, struct jvmframes **out)
{
	struct jvmframes *jf = calloc(1, sizeof(*jf));

	if (!jf)
		return -ENOMEM;
	jf->proc_root = proc_root;
	jf->procs = calloc(JVMFRAMES_MAX_PROCS, sizeof(*jf->procs));
	if (!jf->procs) {
		free(jf);
		return -ENOMEM;
	}
	*out = jf;
	return 0;
}

void jvmframes__free(struct jvmframes *jf)
{
	size_t i;

	if (!jf)
		return;
	for (i = 0; i < jf->nprocs; i++)
		jvm_names__free(jf->procs[i].names);
	free(jf->procs);
	free(jf);
}

static struct jvm_proc *find(const struct jvmframes *jf, uint32_t tgid)
{
	size_t i;

	for (i = 0; i < jf->nprocs; i++)
		if (jf->procs[i].tgid == tgid)
			return &jf->procs[i];
	return NULL;
}

static void note(struct jvmframes *jf, uint32_t tgid, int err, const struct runtime_info *ri)
{
	struct jvm_noted *n;

	jf->nnot_walked++;
	if (jf->nnoted >= JVMFRAMES_MAX_NOTED)
		return;
	n = &jf->noted[jf->nnoted++];
	n->tgid = tgid;
	n->err = err;
	snprintf(n->display, sizeof(n->display), "%s", ri->display);
}

/* The JDK major version from the JVM's own release string (Abstract_VM_Version). */
static unsigned read_major(uint32_t *tgid, const struct jvm_hotspot *hs)
{
	char buf[32] = "";
	uint64_t p = 0;

	if (!(hs->found >> JVM_HS_VM_RELEASE & 1) ||
	    jvm_read_process(tgid, hs->val[JVM_HS_VM_RELEASE], &p, sizeof(p)) || !p ||
	    jvm_read_process(tgid, p, buf, sizeof(buf) - 1))
		return 0;
	buf[sizeof(buf) - 1] = '\0';
	return jvm_release_major(buf);
}

/* Reads the JVM @p->tgid from outside: its tables, its code heaps, its naming. */
static int open_jvm(struct jvm_proc *p)
{
	struct jvm_vmstructs *vs = NULL;
	struct jvm_hotspot hs;
	int err;

	err = jvm_vmstructs__open(p->tgid, &vs);
	if (err)
		return err;
	jvm_hotspot_extract(vs, &hs);
	p->major = read_major(&p->tgid, &hs);
	err = jvm_unwind_build(&hs, jvm_read_process, &p->tgid, &p->uw);
	if (!err)
		err = jvm_names__new(&hs, p->major, jvm_read_process, &p->tgid, &p->names);
	/* hs borrows the tables' names: jvm_names copied the values it needs */
	jvm_vmstructs__free(vs);
	return err;
}

int jvmframes__sweep(struct jvmframes *jf)
{
	size_t i;
	int n = 0;

	/* a slot is emptied, never moved: its tgid is the names reader's context */
	for (i = 0; i < jf->nprocs; i++) {
		if (!jf->procs[i].tgid || proc_exists(jf->proc_root, jf->procs[i].tgid))
			continue;
		jvm_names__free(jf->procs[i].names);
		memset(&jf->procs[i], 0, sizeof(jf->procs[i]));
		n++;
	}
	while (jf->nprocs && !jf->procs[jf->nprocs - 1].tgid)
		jf->nprocs--;
	return n;
}

/* A free slot: one a sweep emptied, else the next one; NULL when the table is full. */
static struct jvm_proc *free_slot(struct jvmframes *jf)
{
	size_t i;

	for (i = 0; i < jf->nprocs; i++)
		if (!jf->procs[i].tgid)
			return &jf->procs[i];
	return jf->nprocs < JVMFRAMES_MAX_PROCS ? &jf->procs[jf->nprocs] : NULL;
}

int jvmframes__add(struct jvmframes *jf, uint32_t tgid)
{
	struct runtime_detect_opts dopts = { .proc_root = jf->proc_root };
	struct runtime_info ri;
	struct jvm_proc *p;
	int err;

	if (find(jf, tgid))
		return 1;
	if (runtime_detect_cached(&dopts, (int)tgid, &ri) < 0 || ri.kind != RUNTIME_JVM)
		return 0;
	p = free_slot(jf);
	if (!p) {
		jf->nover++;
		return 0;
	}
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	err = open_jvm(p);
	if (err) {
		jvm_names__free(p->names);
		p->names = NULL;
		p->tgid = 0; /* the slot stays free */
		/* starting: libjvm not mapped yet (-ENOENT), its tables or code heaps not filled */
		if (err == -ENOENT || err == -EAGAIN)
			return -EAGAIN;
		if (err == -ESRCH)
			return 0;
		note(jf, tgid, err, &ri);
		return 0;
	}
	if (p == &jf->procs[jf->nprocs])
		jf->nprocs++;
	return 1;
}

int jvmframes__add_all(struct jvmframes *jf)
{
	const char *root = jf->proc_root ? jf->proc_root : "/proc";
	struct dirent *de;
	DIR *d = opendir(root);
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			n += jvmframes__add(jf, (uint32_t)strtoul(de->d_name, NULL, 10)) > 0;
	closedir(d);
	return n;
}

size_t jvmframes__count(const struct jvmframes *jf)
{
	return jf->nprocs;
}

const struct uw_jvm *jvmframes__bpf_at(const struct jvmframes *jf, size_t i, uint32_t *tgid)
{
	if (i >= jf->nprocs || !jf->procs[i].tgid)
		return NULL;
	*tgid = jf->procs[i].tgid;
	return &jf->procs[i].uw;
}

const struct uw_jvm *jvmframes__bpf_of(const struct jvmframes *jf, uint32_t tgid)
{
	const struct jvm_proc *p = find(jf, tgid);

	return p ? &p->uw : NULL;
}

static void fill(const struct jvm_frame *jfr, struct prof_frame_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->function = jfr->name;
	if (jfr->kind == JVM_FRAME_STUB) {
		fi->lang = PROF_LANG_NATIVE;
		fi->mapping = "[jvm]";
		return;
	}
	fi->lang = PROF_LANG_JAVA;
	fi->file = jfr->file[0] ? jfr->file : NULL;
	/* the source file stands for the mapping, as for Python */
	fi->mapping = jfr->file[0] ? jfr->file : "[java]";
	fi->line = jfr->line;
}

int jvmframes__frame(struct jvmframes *jf, uint32_t tgid, uint64_t word, uint64_t cookie,
		     struct prof_frame_info *fi, size_t max)
{
	struct jvm_proc *p = find(jf, tgid);
	int n = -ENOENT, i;

	if (max > JVMFRAMES_MAX_EXPAND)
		max = JVMFRAMES_MAX_EXPAND;
	if (p && max)
		n = jvm_names__frame(p->names, word, cookie, jf->out, max);
	if (n <= 0) {
		jf->unnamed++;
		memset(fi, 0, sizeof(*fi));
		fi->function = JVMFRAMES_UNNAMED;
		fi->mapping = "[java]";
		fi->lang = PROF_LANG_JAVA;
		return 1;
	}
	jf->frames++;
	for (i = 0; i < n; i++)
		fill(&jf->out[i], &fi[i]);
	return n;
}

void jvmframes__own_wait(struct jvmframes *jf, int64_t ns)
{
	jf->own_waits++;
	if (ns > 0)
		jf->own_wait_ns += ns;
}

void jvmframes__not_lock(struct jvmframes *jf, int64_t ns)
{
	jf->sleeps++;
	if (ns > 0)
		jf->sleep_ns += ns;
}

void jvmframes__set_runtime_locks(struct jvmframes *jf, uint32_t tgid)
{
	if (jf->nruntime_locks < JVMFRAMES_MAX_RUNTIME_LOCKS)
		jf->runtime_locks[jf->nruntime_locks++] = tgid;
}

bool jvmframes__runtime_wait(struct jvmframes *jf, uint32_t tgid, int64_t ns)
{
	size_t i;

	for (i = 0; i < jf->nruntime_locks; i++)
		if (jf->runtime_locks[i] == tgid) {
			jf->runtime_waits++;
			if (ns > 0)
				jf->runtime_wait_ns += ns;
			return true;
		}
	return false;
}

static void note_one(const struct jvm_noted *n, struct capture_result *r)
{
	if (n->err == -ENOTSUP)
		answer_add_note(r,
				"%s in process %u is not a HotSpot JVM the profiler can read "
				"(OpenJ9, a native image): its frames show as native code.",
				n->display, n->tgid);
	else
		answer_add_note(r,
				"%s in process %u could not be read (%s): its Java frames show "
				"as unnamed JIT code.",
				n->display, n->tgid, strerror(-n->err));
}

void jvmframes__notes(const struct jvmframes *jf, struct capture_result *r)
{
	size_t i;

	for (i = 0; i < jf->nnoted; i++)
		note_one(&jf->noted[i], r);
	if (jf->nnot_walked > jf->nnoted)
		answer_add_note(r,
				"%zu more JVMs could not be read: their Java frames are unnamed.",
				jf->nnot_walked - jf->nnoted);
	if (jf->nover)
		answer_add_note(r,
				"The target runs more than %d JVMs: the Java frames of the %zu "
				"others are unnamed.",
				JVMFRAMES_MAX_PROCS, jf->nover);
	if (jf->own_waits)
		answer_add_note(r,
				"The JVM's own threads (garbage collector, JIT compilers, VM "
				"thread) waited %.1f s in %llu stacks: left out, as the JVM waits "
				"there by design; their CPU time is in the cpu question.",
				(double)jf->own_wait_ns / 1e9, (unsigned long long)jf->own_waits);
	if (jf->sleeps)
		answer_add_note(r,
				"Java threads slept (Thread.sleep) or waited for a notification "
				"(Object.wait) %.1f s in %llu stacks: not lock waits, left out; "
				"wall shows them.",
				(double)jf->sleep_ns / 1e9, (unsigned long long)jf->sleeps);
	if (jf->runtime_waits)
		answer_add_note(r,
				"The JVM's lock waits are the ones it recorded itself (monitor "
				"enters and parks on a lock, with its names): the %llu futex "
				"waits (%.1f s) of its Java threads seen in the kernel are left "
				"out, so that no wait counts twice.",
				(unsigned long long)jf->runtime_waits,
				(double)jf->runtime_wait_ns / 1e9);
	if (jf->unnamed)
		answer_add_note(r,
				"%llu of %llu Java frames could not be named: their code was freed "
				"or recompiled between the sample and its naming; they show as %s.",
				(unsigned long long)jf->unnamed,
				(unsigned long long)(jf->unnamed + jf->frames), JVMFRAMES_UNNAMED);
}
