// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/pyframes.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/proc.h"
#include "bpf/python.h"
#include "bpf/sampler.h"
#include "daemon/capture/answer.h"
#include "daemon/capture/source.h"
#include "daemon/collectors/sampler.h"
#include "runtimes/detect.h"
#include "runtimes/detect_cache.h"
#include "runtimes/python/py_code.h"
#include "runtimes/python/py_merge.h"
#include "runtimes/python/py_process.h"

/* A CPython that could not be walked: named in the notes. */
struct py_noted {
	uint32_t tgid;
	int err;
	char display[64]; /* "CPython 3.14" */
};

struct pyframes {
	const char *proc_root;
	struct py_process *procs; /* PYFRAMES_MAX_PROCS */
	uint32_t *tgids;
	struct py_proc *bpf;
	size_t nprocs;
	struct py_code_cache *cache;
	struct py_noted noted[PYFRAMES_MAX_NOTED];
	size_t nnoted, nnot_walked;
	size_t nover;	    /* CPythons past PYFRAMES_MAX_PROCS */
	size_t nmissed;	    /* new processes not looked at (pyframes__missed) */
	uint64_t unnamed;   /* frames whose code object could not be read */
	uint64_t truncated; /* samples deeper than PY_MAX_FRAMES Python frames */
	int failed;	    /* -errno: the sampler walks no Python at all */
	pid_t read_pid;	    /* py_read_process()'s context */
};

int pyframes__new(const char *proc_root, struct pyframes **out)
{
	struct pyframes *pf = calloc(1, sizeof(*pf));
	int err = -ENOMEM;

	if (!pf)
		return -ENOMEM;
	pf->proc_root = proc_root;
	pf->procs = calloc(PYFRAMES_MAX_PROCS, sizeof(*pf->procs));
	pf->tgids = calloc(PYFRAMES_MAX_PROCS, sizeof(*pf->tgids));
	pf->bpf = calloc(PYFRAMES_MAX_PROCS, sizeof(*pf->bpf));
	if (!pf->procs || !pf->tgids || !pf->bpf)
		goto err_free;
	err = py_code_cache__new(NULL, &pf->cache);
	if (err)
		goto err_free;
	*out = pf;
	return 0;
err_free:
	pyframes__free(pf);
	return err;
}

void pyframes__free(struct pyframes *pf)
{
	if (!pf)
		return;
	py_code_cache__free(pf->cache);
	free(pf->procs);
	free(pf->tgids);
	free(pf->bpf);
	free(pf);
}

static struct py_process *find(const struct pyframes *pf, uint32_t tgid)
{
	size_t i;

	for (i = 0; i < pf->nprocs; i++)
		if (pf->tgids[i] == tgid)
			return &pf->procs[i];
	return NULL;
}

static void note_not_walked(struct pyframes *pf, uint32_t tgid, int err,
			    const struct runtime_info *ri)
{
	struct py_noted *n;

	pf->nnot_walked++;
	if (pf->nnoted >= PYFRAMES_MAX_NOTED)
		return;
	n = &pf->noted[pf->nnoted++];
	n->tgid = tgid;
	n->err = err;
	snprintf(n->display, sizeof(n->display), "%s", ri->display);
}

int pyframes__sweep(struct pyframes *pf)
{
	size_t i = 0, last;
	int n = 0;

	while (i < pf->nprocs) {
		if (proc_exists(pf->proc_root, pf->tgids[i])) {
			i++;
			continue;
		}
		last = --pf->nprocs;
		pf->procs[i] = pf->procs[last];
		pf->tgids[i] = pf->tgids[last];
		pf->bpf[i] = pf->bpf[last];
		n++;
	}
	return n;
}

int pyframes__add(struct pyframes *pf, uint32_t tgid)
{
	struct runtime_detect_opts dopts = { .proc_root = pf->proc_root };
	struct runtime_info ri;
	int err;

	if (find(pf, tgid))
		return 1;
	/* cached by (pid, start time, executable): a process looked at before the capture and
	 * announced again by its first event costs a stat, an exec is looked at anew */
	if (runtime_detect_cached(&dopts, (int)tgid, &ri) < 0 || ri.kind != RUNTIME_PYTHON)
		return 0;
	if (pf->nprocs >= PYFRAMES_MAX_PROCS) {
		pf->nover++;
		return 0;
	}
	err = py_process_find(pf->proc_root, tgid, &pf->procs[pf->nprocs]);
	if (err == -ENOENT && ri.version[0] == '2')
		err = -ENOTSUP; /* CPython 2: detected, never walked */
	if (err == -ESRCH || err == -ENOENT)
		return 0; /* gone, or not a CPython after all */
	if (err == -EAGAIN)
		return err; /* starting: the caller may ask again */
	if (err) {
		note_not_walked(pf, tgid, err, &ri);
		return 0;
	}
	pf->tgids[pf->nprocs] = tgid;
	py_process_bpf(&pf->procs[pf->nprocs], &pf->bpf[pf->nprocs]);
	pf->nprocs++;
	return 1;
}

int pyframes__add_all(struct pyframes *pf)
{
	const char *root = pf->proc_root ? pf->proc_root : "/proc";
	struct dirent *de;
	DIR *d = opendir(root);
	int n = 0, err;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		err = pyframes__add(pf, (uint32_t)strtoul(de->d_name, NULL, 10));
		n += err > 0;
	}
	closedir(d);
	return n;
}

size_t pyframes__bpf(const struct pyframes *pf, const uint32_t **tgids,
		     const struct py_proc **procs)
{
	*tgids = pf->tgids;
	*procs = pf->bpf;
	return pf->nprocs;
}

const struct py_proc *pyframes__bpf_of(const struct pyframes *pf, uint32_t tgid)
{
	const struct py_process *p = find(pf, tgid);

	return p ? &pf->bpf[p - pf->procs] : NULL;
}

void pyframes__missed(struct pyframes *pf, size_t n)
{
	pf->nmissed += n;
}

void pyframes__set_failed(struct pyframes *pf, int err)
{
	pf->failed = err;
}

int pyframes__merge(struct pyframes *pf, const struct source_sample *s, struct py_merged *out,
		    size_t max)
{
	uint8_t kinds[SAMPLER_MAX_STACK_DEPTH];
	bool entry[PY_MAX_FRAMES];
	const struct py_process *p;
	size_t i, nn = s->nustack, np = s->npyframes;

	if (!np || !(p = find(pf, s->tgid)))
		return 0;
	if (nn > SAMPLER_MAX_STACK_DEPTH)
		nn = SAMPLER_MAX_STACK_DEPTH;
	if (np > PY_MAX_FRAMES)
		np = PY_MAX_FRAMES;
	for (i = 0; i < nn; i++)
		kinds[i] = py_process_native_kind(p, s->ustack[i]);
	for (i = 0; i < np; i++)
		entry[i] = s->pyframes[i].entry;
	if (s->py_flags & PY_STACK_TRUNCATED)
		pf->truncated += s->oncpu ? s->oncpu : 1; /* samples, as frames.c counts them */
	return py_merge(kinds, nn, entry, np, out, max);
}

int pyframes__frame(struct pyframes *pf, const struct source_sample *s, size_t i,
		    struct prof_frame_info *fi)
{
	const struct sampler_py_frame *fr = &s->pyframes[i];
	uint32_t tgid = s->tgid;
	const struct py_process *p = find(pf, tgid);
	const struct py_code_info *ci;
	int line = 0, err = -ENOENT;

	memset(fi, 0, sizeof(*fi));
	fi->lang = PROF_LANG_PYTHON;
	fi->function = "[unknown]";
	fi->mapping = "[python]";
	if (p) {
		pf->read_pid = (pid_t)tgid;
		err = py_code_cache__lookup(pf->cache, tgid, p->off, p->code_type, py_read_process,
					    &pf->read_pid, fr->code, &ci);
	}
	if (err) {
		pf->unnamed++;
		return err;
	}
	fi->function = ci->name;
	fi->file = ci->file;
	/* the source file stands for the mapping: report and pprof read it as where the code is */
	fi->mapping = ci->file[0] ? ci->file : "[python]";
	if (!py_code_line(p->off, ci, fr->code, fr->instr, &line) && line > 0)
		fi->line = (uint32_t)line;
	return 0;
}

static void note_one(const struct py_noted *n, struct capture_result *r)
{
	if (n->err == -ENOTSUP)
		answer_add_note(r,
				"%s in process %u is not supported%s: its frames show as the "
				"interpreter's.",
				n->display, n->tgid,
				strncmp(n->display, "CPython 2", 9) ? " yet" : "");
	else
		answer_add_note(r,
				"%s in process %u could not be read (%s): its frames show as "
				"the interpreter's.",
				n->display, n->tgid, strerror(-n->err));
}

void pyframes__notes(const struct pyframes *pf, struct capture_result *r)
{
	size_t i;

	if (pf->failed && pf->nprocs)
		answer_add_note(r,
				"Python frames could not be walked on this server (%s): the "
				"CPython processes show as the interpreter's frames.",
				strerror(-pf->failed));
	for (i = 0; i < pf->nnoted; i++)
		note_one(&pf->noted[i], r);
	if (pf->nnot_walked > pf->nnoted)
		answer_add_note(r,
				"%zu more CPython processes could not be walked: their frames "
				"show as the interpreter's.",
				pf->nnot_walked - pf->nnoted);
	if (pf->nover)
		answer_add_note(r,
				"The target runs more than %d CPython processes: the frames of "
				"the %zu others show as the interpreter's.",
				PYFRAMES_MAX_PROCS, pf->nover);
	if (pf->nmissed)
		answer_add_note(
			r,
			"%zu processes that started during the capture were not checked "
			"for CPython (too many at once): if any runs Python, its frames show "
			"as the interpreter's.",
			pf->nmissed);
	if (pf->truncated)
		answer_add_note(r,
				"%llu samples had Python stacks deeper than %d frames: their "
				"outermost Python frames are cut, under %s.",
				(unsigned long long)pf->truncated, PY_MAX_FRAMES,
				PYFRAMES_TRUNCATED);
	if (pf->unnamed)
		answer_add_note(r,
				"%llu Python frames could not be named (their code objects were "
				"freed or unreadable when the samples were read): they show as "
				"[unknown].",
				(unsigned long long)pf->unnamed);
}
