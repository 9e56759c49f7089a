// SPDX-License-Identifier: Apache-2.0
/*
 * Test driver for daemon/agent/kube.c (tests/integration/test_kube.sh compiles it against the
 * built objects; it is not part of the product). It runs one struct kube and answers commands
 * read from stdin, one line each, with one line on stdout:
 *
 *   sync MS                      ok | error ERRNO
 *   owner TGID                   owner <what owner_format() prints>  (resolver + kube__owner_name)
 *   pod-uid UID                  pod NS NAME WORKLOAD | error ERRNO
 *   pod-cid ID                   pod NS NAME WORKLOAD CONTAINER | error ERRNO
 *   wait-uid UID MS              ok | error ERRNO  (until the pod is in the table)
 *   wait-gone UID MS             ok | error ERRNO  (until it is not)
 *   wait-stat FIELD MIN MS       ok | error ERRNO  (until the counter is >= MIN)
 *   patch-pod NS NAME JSON       ok | error ERRNO
 *   patch-node JSON              ok | error ERRNO
 *   event-pod NS NAME UID TYPE REASON MESSAGE...   ok | error ERRNO
 *   event-node TYPE REASON MESSAGE...              ok | error ERRNO
 *   stats                        stats lists=N watches=N events=N relists=N errors=N ...
 *   quit                         (kube__free(), then exit 0)
 *
 * Capture requests (on_request) are appended to the --requests file as
 * "REQUEST <pod|node> <ns|-> <name> <uid> <rv> <value>".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/owner.h"
#include "cgroups/resolver.h"
#include "daemon/agent/kube.h"

static FILE *requests;
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_request(void *ctx, const struct kube_request *r)
{
	(void)ctx;
	pthread_mutex_lock(&req_lock);
	fprintf(requests, "REQUEST %s %s %s %s %s %s\n", r->kind == KUBE_KIND_NODE ? "node" : "pod",
		r->ns[0] ? r->ns : "-", r->name, r->uid[0] ? r->uid : "-", r->rv, r->value);
	fflush(requests);
	pthread_mutex_unlock(&req_lock);
}

static unsigned long stat_field(const struct kube_stats *s, const char *f)
{
	if (!strcmp(f, "lists"))
		return s->lists;
	if (!strcmp(f, "watches"))
		return s->watches;
	if (!strcmp(f, "events"))
		return s->events;
	if (!strcmp(f, "relists"))
		return s->relists;
	if (!strcmp(f, "errors"))
		return s->errors;
	if (!strcmp(f, "requests"))
		return s->requests;
	if (!strcmp(f, "pods"))
		return s->pods;
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void reply_err(int err)
{
	if (err)
		printf("error %d\n", err);
	else
		printf("ok\n");
}

int main(int argc, char **argv)
{
	struct kube_opts o = { .on_request = on_request, .backoff_min_ms = 200,
			       .backoff_max_ms = 2000, .user_agent = "slideops-profiler/kube-probe" };
	struct kube_object *obj = calloc(1, sizeof(*obj));
	struct kube *k = NULL;
	char line[8192], *cmd, *a, *b, *c, *rest, name[OWNER_NAME_MAX + 64];
	int i, err;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--kubeconfig"))
			o.kubeconfig = argv[i + 1];
		else if (!strcmp(argv[i], "--node"))
			o.node_name = argv[i + 1];
		else if (!strcmp(argv[i], "--requests"))
			requests = fopen(argv[i + 1], "a");
		else if (!strcmp(argv[i], "--watch-timeout"))
			o.watch_timeout_s = (unsigned)atoi(argv[i + 1]);
	}
	if (!requests || !obj) {
		fprintf(stderr, "usage: kube_probe --kubeconfig K --node N --requests FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = kube__new(&o, &k);
	if (err) {
		fprintf(stderr, "kube__new: %s\n", strerror(-err));
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		cmd = strtok_r(line, " ", &rest);
		if (!cmd)
			continue;
		if (!strcmp(cmd, "quit"))
			break;
		if (!strcmp(cmd, "sync")) {
			a = strtok_r(NULL, " ", &rest);
			reply_err(kube__wait_synced(k, a ? atoi(a) : 10000));
		} else if (!strcmp(cmd, "owner")) {
			struct owner_resolver_opts ro = { .name_fn = kube__owner_name, .name_ctx = k };
			struct owner_resolver *r;
			struct owner ow;

			a = strtok_r(NULL, " ", &rest);
			err = owner_resolver__new(&ro, &r);
			if (!err) {
				err = owner_resolver__resolve(r, a ? atoi(a) : 0, &ow);
				owner_resolver__free(r);
			}
			if (err)
				reply_err(err);
			else
				printf("owner %s\n", owner_format(&ow, name, sizeof(name)));
		} else if (!strcmp(cmd, "pod-uid") || !strcmp(cmd, "pod-cid")) {
			char ctr[KUBE_CONTAINER_NAME_MAX] = "";

			a = strtok_r(NULL, " ", &rest);
			if (!a)
				err = -EINVAL;
			else if (!strcmp(cmd, "pod-uid"))
				err = kube__pod_by_uid(k, a, obj);
			else
				err = kube__pod_by_container_id(k, a, obj, ctr, sizeof(ctr));
			if (err)
				reply_err(err);
			else
				printf("pod %s %s %s%s%s\n", obj->ns, obj->name, obj->workload,
				       ctr[0] ? " " : "", ctr);
		} else if (!strcmp(cmd, "wait-uid") || !strcmp(cmd, "wait-gone")) {
			bool want = !strcmp(cmd, "wait-uid");
			int ms;

			a = strtok_r(NULL, " ", &rest);
			b = strtok_r(NULL, " ", &rest);
			ms = b ? atoi(b) : 10000;
			err = -ETIMEDOUT;
			for (i = 0; i <= ms / 50 && a; i++) {
				if ((kube__pod_by_uid(k, a, obj) == 0) == want) {
					err = 0;
					break;
				}
				sleep_ms(50);
			}
			reply_err(err);
		} else if (!strcmp(cmd, "wait-stat")) {
			struct kube_stats st;
			unsigned long min;
			int ms;

			a = strtok_r(NULL, " ", &rest);
			b = strtok_r(NULL, " ", &rest);
			c = strtok_r(NULL, " ", &rest);
			min = b ? strtoul(b, NULL, 10) : 1;
			ms = c ? atoi(c) : 10000;
			err = -ETIMEDOUT;
			for (i = 0; i <= ms / 50 && a; i++) {
				kube__stats(k, &st);
				if (stat_field(&st, a) >= min) {
					err = 0;
					break;
				}
				sleep_ms(50);
			}
			reply_err(err);
		} else if (!strcmp(cmd, "patch-pod")) {
			a = strtok_r(NULL, " ", &rest);
			b = strtok_r(NULL, " ", &rest);
			reply_err(a && b ? kube__patch_pod_annotations(k, a, b, rest) : -EINVAL);
		} else if (!strcmp(cmd, "patch-node")) {
			reply_err(kube__patch_node_annotations(k, rest));
		} else if (!strcmp(cmd, "event-pod") || !strcmp(cmd, "event-node")) {
			struct kube_event_spec e = { .kind = KUBE_KIND_NODE };

			if (!strcmp(cmd, "event-pod")) {
				e.kind = KUBE_KIND_POD;
				e.ns = strtok_r(NULL, " ", &rest);
				e.name = strtok_r(NULL, " ", &rest);
				e.uid = strtok_r(NULL, " ", &rest);
			}
			e.type = strtok_r(NULL, " ", &rest);
			e.reason = strtok_r(NULL, " ", &rest);
			e.message = rest;
			reply_err(kube__create_event(k, &e));
		} else if (!strcmp(cmd, "stats")) {
			struct kube_stats st;

			kube__stats(k, &st);
			printf("stats lists=%lu watches=%lu events=%lu relists=%lu errors=%lu "
			       "requests=%lu dropped=%lu pods=%zu synced=%d node=%d\n",
			       st.lists, st.watches, st.events, st.relists, st.errors, st.requests,
			       st.dropped_pods, st.pods, st.synced, st.node_seen);
		} else {
			printf("error unknown-command\n");
		}
	}
	kube__free(k);
	free(obj);
	fclose(requests);
	return 0;
}
