// SPDX-License-Identifier: Apache-2.0
#include "daemon/collectors/threads.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/collectors/collector.h"
#include "base/log.h"
#include "threads.skel.h"

_Static_assert(sizeof(struct threads_rec) == 56 + 8 * THREADS_KSTACK_DEPTH,
	       "threads_rec layout is shared with BPF");

struct threads {
	struct threads_bpf *skel;
	struct bpf_link *link;
};

int threads__new(const struct threads_opts *opts, struct threads **out)
{
	struct threads *t;
	int err;

	bpf_util_route_libbpf_log();
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->skel = threads_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_err_errno(err, "opening the threads iterator");
		goto err_free;
	}
	t->skel->bss->filter_tgids = opts && opts->filter_tgids;
	t->skel->rodata->with_kthreads = opts && opts->kthreads;
	err = threads_bpf__load(t->skel);
	if (err) {
		pr_err_errno(err, "loading the threads iterator");
		goto err_free;
	}
	t->link = bpf_program__attach_iter(t->skel->progs.dump_thread, NULL);
	if (!t->link) {
		err = -errno;
		pr_err_errno(err, "attaching the threads iterator");
		goto err_free;
	}
	*out = t;
	return 0;

err_free:
	threads__free(t);
	return err;
}

void threads__free(struct threads *t)
{
	if (!t)
		return;
	bpf_link__destroy(t->link);
	threads_bpf__destroy(t->skel);
	free(t);
}

int threads__add_tgid(struct threads *t, uint32_t tgid)
{
	return bpf_util_add_tgid(t->skel->maps.target_tgids, tgid);
}

int threads__snapshot(struct threads *t, threads_rec_fn_t fn, void *ctx)
{
	/* Whole records only: the iterator writes them with one bpf_seq_write each. */
	char buf[sizeof(struct threads_rec) * 64];
	struct threads_rec rec;
	size_t have = 0, off;
	ssize_t n;
	int fd, err = 0, count = 0;

	fd = bpf_iter_create(bpf_link__fd(t->link));
	if (fd < 0)
		return -errno;
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0) {
			err = -errno;
			if (err == -EINTR) {
				err = 0;
				continue;
			}
			break;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		for (off = 0; off + sizeof(rec) <= have; off += sizeof(rec)) {
			memcpy(&rec, buf + off, sizeof(rec));
			if (rec.nkstack > THREADS_KSTACK_DEPTH)
				rec.nkstack = THREADS_KSTACK_DEPTH;
			rec.comm[THREADS_COMM_LEN - 1] = '\0';
			count++;
			err = fn(ctx, &rec);
			if (err < 0)
				goto out;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
out:
	close(fd);
	return err < 0 ? err : count;
}
