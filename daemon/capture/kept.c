// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/kept.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/frames.h"
#include "daemon/capture/jvmframes.h"
#include "daemon/capture/pyframes.h"
#include "daemon/capture/source.h"
#include "symbols/symbolizer.h"

struct capture_kept {
	struct capture_kept_opts o;
	struct capture_kept_parts p;
	uint64_t windows, swept;
};

/* @err: "@what: reason"; returns @ret. */
static int fail(char *err, size_t size, int ret, const char *what)
{
	snprintf(err, size, "%s: %s", what, ret == -ENOMEM ? "out of memory" : strerror(-ret));
	return ret;
}

/* The caches that name the samples: symbols, owners, the CPython and JVM walks, names. */
static int new_caches(struct capture_kept *k, char *err, size_t size)
{
	struct symbolizer_opts so = { .proc_root = k->o.proc_root };
	struct owner_resolver_opts ro = { .proc_root = k->o.proc_root,
					  .name_fn = k->o.name_fn,
					  .name_ctx = k->o.name_ctx };
	struct frames_opts fo = { .question = Q_CPU, .proc_root = k->o.proc_root };
	int ret;

	ret = symbolizer__new(&so, &k->p.sym);
	if (!ret)
		ret = owner_resolver__new(&ro, &k->p.owners);
	if (!ret)
		ret = pyframes__new(k->o.proc_root, &k->p.py);
	if (!ret)
		ret = jvmframes__new(k->o.proc_root, &k->p.jvm);
	if (ret)
		return fail(err, size, ret, "cannot start the symbolizer");
	fo.sym = k->p.sym;
	fo.owners = k->p.owners;
	fo.py = k->p.py;
	fo.jvm = k->p.jvm;
	ret = frames__new(&fo, &k->p.frames);
	return ret ? fail(err, size, ret, "cannot start the symbolizer") : 0;
}

/* The sampler, whole server, with the CPythons and JVMs running now; later ones join as they
 * are first seen (source_opts.py, .jvm). */
static int new_source(struct capture_kept *k, char *err, size_t size)
{
	struct source_opts so = {
		.question = Q_CPU,
		.freq_hz = k->o.freq_hz,
		.on_new_task = frames_on_new_task,
		.ctx = k->p.frames,
		.ksym = frames_ksym,
		.ksym_ctx = k->p.frames,
		.py = k->p.py,
		.jvm = k->p.jvm,
	};
	const struct uw_jvm *uw;
	uint32_t tgid;
	size_t i;
	int ret;

	pyframes__add_all(k->p.py);
	jvmframes__add_all(k->p.jvm);
	so.npy = pyframes__bpf(k->p.py, &so.py_tgids, &so.py_procs);
	ret = source__new(&so, &k->p.src);
	if (ret)
		return fail(err, size, ret, "cannot start the eBPF programs");
	pyframes__set_failed(k->p.py, source__python_err(k->p.src));
	for (i = 0; i < jvmframes__count(k->p.jvm); i++) {
		uw = jvmframes__bpf_at(k->p.jvm, i, &tgid);
		if (uw)
			source__add_jvm(k->p.src, tgid, uw);
	}
	return 0;
}

int capture_kept__new(const struct capture_kept_opts *opts, struct capture_kept **out, char *err,
		      size_t size)
{
	struct capture_kept *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return fail(err, size, -ENOMEM, "");
	k->o = *opts;
	if (!k->o.freq_hz)
		k->o.freq_hz = KEPT_DEFAULT_HZ;
	ret = new_caches(k, err, size);
	if (!ret)
		ret = new_source(k, err, size);
	if (ret) {
		capture_kept__free(k);
		return ret;
	}
	*out = k;
	return 0;
}

void capture_kept__free(struct capture_kept *k)
{
	if (!k)
		return;
	source__free(k->p.src);
	frames__free(k->p.frames);
	pyframes__free(k->p.py);
	jvmframes__free(k->p.jvm);
	owner_resolver__free(k->p.owners);
	symbolizer__free(k->p.sym);
	free(k);
}

unsigned int capture_kept__hz(const struct capture_kept *k)
{
	return k->o.freq_hz;
}

const struct capture_kept_parts *capture_kept__parts(const struct capture_kept *k)
{
	return &k->p;
}

int capture_kept__restart(struct capture_kept *k)
{
	k->windows++;
	return source__restart(k->p.src);
}

void capture_kept__sweep(struct capture_kept *k)
{
	int n;

	n = source__sweep(k->p.src);
	symbolizer__sweep(k->p.sym);
	pyframes__sweep(k->p.py);
	jvmframes__sweep(k->p.jvm);
	k->swept += n > 0 ? (uint64_t)n : 0;
}

void capture_kept__stats(const struct capture_kept *k, struct capture_kept_stats *out)
{
	struct symbolizer_stats ss;
	struct source_stats st;

	memset(out, 0, sizeof(*out));
	out->windows = k->windows;
	out->swept = k->swept;
	symbolizer__stats(k->p.sym, &ss);
	out->sym_processes = ss.processes;
	out->sym_dsos = ss.dsos;
	if (!source__stats(k->p.src, &st))
		out->unwind_table_bytes = st.unwind_table_bytes;
}
