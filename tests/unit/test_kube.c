// SPDX-License-Identifier: Apache-2.0
/*
 * The pure half of the Kubernetes client (kube_parse.h): container ids, workload names, pod
 * objects, watch event lines, the line splitter, list responses, kubeconfig fixtures
 * (tests/fixtures/kube/) and in-cluster credentials. No network: the client's HTTP side is
 * tested against the fake API server in tests/integration/test_kube.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "daemon/agent/kube.h"
#include "daemon/agent/kube_parse.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FIXTURES "tests/fixtures/kube/"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_container_id(void **state)
{
	static const struct {
		const char *in;
		int ret;
		const char *runtime, *id;
	} cases[] = {
		{ "containerd://" HEX64, 0, "containerd", HEX64 },
		{ "cri-o://" HEX64, 0, "cri-o", HEX64 },
		{ "docker://" HEX64, 0, "docker", HEX64 },
		{ "rkt://" HEX64, -EPROTONOSUPPORT, NULL, NULL },
		{ "containerd://" HEX64 "0", -EINVAL, NULL, NULL },	/* 65 digits */
		{ "containerd://0123", -EINVAL, NULL, NULL },
		{ "containerd://" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		  -EINVAL, NULL, NULL },				/* upper case */
		{ "containerd:/" HEX64, -EINVAL, NULL, NULL },
		{ "://" HEX64, -EINVAL, NULL, NULL },
		{ HEX64, -EINVAL, NULL, NULL },
		{ "Docker://" HEX64, -EINVAL, NULL, NULL },
		{ "", -EINVAL, NULL, NULL },
		{ NULL, -EINVAL, NULL, NULL },
	};
	char rt[16], id[OWNER_CONTAINER_ID_MAX], small[4];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(rt, "untouched");
		assert_int_equal(kube_parse_container_id(cases[i].in, rt, sizeof(rt), id,
							 sizeof(id)),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_string_equal(rt, "untouched");
			continue;
		}
		assert_string_equal(rt, cases[i].runtime);
		assert_string_equal(id, cases[i].id);
	}
	assert_int_equal(kube_parse_container_id("containerd://" HEX64, small, sizeof(small), id,
						 sizeof(id)),
			 -ENAMETOOLONG);
	assert_int_equal(kube_parse_container_id("docker://" HEX64, rt, sizeof(rt), small,
						 sizeof(small)),
			 -ENAMETOOLONG);
}

static void test_workload_name(void **state)
{
	static const struct {
		const char *kind, *owner, *hash, *pod;
		int ret;
		const char *want;
	} cases[] = {
		/* the pod-template-hash label is the reliable source */
		{ "ReplicaSet", "billing-5d8f9c7b6", "5d8f9c7b6", "billing-5d8f9c7b6-x7k2p", 0, "billing" },
		{ "ReplicaSet", "web-api-7c9f8d6b4d", "7c9f8d6b4d", "p", 0, "web-api" },
		/* a hash label that does not end the name: the ReplicaSet itself */
		{ "ReplicaSet", "billing-5d8f9c7b6", "ffff", "p", 0, "billing-5d8f9c7b6" },
		{ "ReplicaSet", "5d8f9c7b6", "5d8f9c7b6", "p", 0, "5d8f9c7b6" },
		/* no label: the last segment if it looks like a hash */
		{ "ReplicaSet", "checkout-6b7c9d8f5", "", "p", 0, "checkout" },
		{ "ReplicaSet", "frontend-v2", "", "p", 0, "frontend-v2" },	/* too short */
		{ "ReplicaSet", "frontend-canary", "", "p", 0, "frontend-canary" }, /* vowels */
		{ "ReplicaSet", "frontend", "", "p", 0, "frontend" },
		{ "StatefulSet", "postgres", "", "postgres-0", 0, "postgres" },
		{ "DaemonSet", "node-exporter", "", "node-exporter-abcde", 0, "node-exporter" },
		{ "Job", "migrate-db", "", "migrate-db-x1", 0, "migrate-db" },
		/* a CronJob's Job: "<cronjob>-<unix minutes>" */
		{ "Job", "backup-28473120", "", "backup-28473120-qq", 0, "backup" },
		{ "Job", "migrate-20240101", "", "p", 0, "migrate-20240101" },	/* a date, not minutes */
		{ "Job", "report-99999999999", "", "p", 0, "report-99999999999" },
		{ "Job", "28473120", "", "p", 0, "28473120" },
		/* other controllers, no controller, static pods: the pod name */
		{ "Node", "node-1", "", "kube-apiserver-node-1", 0, "kube-apiserver-node-1" },
		{ "CloneSet", "x", "", "x-abcde", 0, "x-abcde" },
		{ "", "", "", "standalone", 0, "standalone" },
		{ "ReplicaSet", "", "", "orphan", 0, "orphan" },
		{ "", "", "", "", -EINVAL, NULL },
	};
	struct kube_object o;
	char out[KUBE_NAME_MAX], small[4];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&o, 0, sizeof(o));
		strcpy(o.owner_kind, cases[i].kind);
		strcpy(o.owner_name, cases[i].owner);
		strcpy(o.template_hash, cases[i].hash);
		strcpy(o.name, cases[i].pod);
		assert_int_equal(kube_workload_name(&o, out, sizeof(out)), cases[i].ret);
		if (!cases[i].ret)
			assert_string_equal(out, cases[i].want);
	}
	memset(&o, 0, sizeof(o));
	strcpy(o.name, "standalone");
	assert_int_equal(kube_workload_name(&o, small, sizeof(small)), -ENAMETOOLONG);
}

static char *fixture(const char *name, size_t *len)
{
	char path[256], *buf = NULL;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	assert_int_equal(read_file_bounded(AT_FDCWD, path, 1 << 20, &buf, len), 0);
	return buf;
}

static void test_parse_object(void **state)
{
	struct kube_object *o = calloc(1, sizeof(*o));
	size_t len;
	char *text = fixture("pod-billing.json", &len);

	(void)state;
	assert_non_null(o);
	assert_int_equal(kube_parse_object(text, len, o), 0);
	assert_string_equal(o->name, "billing-5d8f9c7b6-x7k2p");
	assert_string_equal(o->ns, "shop");
	assert_string_equal(o->uid, "0d7b5c3e-1f2a-4b6c-8d9e-0a1b2c3d4e5f");
	assert_string_equal(o->rv, "48213");
	assert_string_equal(o->owner_kind, "ReplicaSet"); /* the controller, not the first ref */
	assert_string_equal(o->owner_name, "billing-5d8f9c7b6");
	assert_string_equal(o->template_hash, "5d8f9c7b6");
	assert_string_equal(o->workload, "billing");
	assert_true(o->has_capture);
	assert_false(o->capture_too_long);
	assert_string_equal(o->capture, "question=cpu,duration=30");
	/* containerStatuses first, then init; the waiting container has no id yet */
	assert_int_equal(o->ncontainers, 2);
	assert_int_equal(o->dropped_containers, 1);
	assert_string_equal(o->containers[0].name, "app");
	assert_string_equal(o->containers[0].runtime, "containerd");
	assert_string_equal(o->containers[0].id,
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_string_equal(o->containers[1].name, "migrate");
	assert_string_equal(o->containers[1].runtime, "cri-o");

	/* errors, and @out untouched on failure */
	memset(o, 0x5a, sizeof(*o));
	assert_int_equal(kube_parse_object("{", 1, o), -EINVAL);
	assert_int_equal(kube_parse_object("[]", 2, o), -EINVAL);
	assert_int_equal(kube_parse_object("{\"metadata\":{}}", 15, o), -EINVAL);
	assert_int_equal(kube_parse_object("{\"metadata\":[]}", 15, o), -EINVAL);
	assert_int_equal(o->name[0], 0x5a);
	free(text);
	free(o);
}

/* A string of @n 'a's inside a JSON template with one %s. */
static char *with_long(const char *tmpl, size_t n)
{
	char *fill = malloc(n + 1), *out = NULL;

	assert_non_null(fill);
	memset(fill, 'a', n);
	fill[n] = '\0';
	assert_true(asprintf(&out, tmpl, fill) > 0);
	free(fill);
	return out;
}

/* kube_parse_event() of @tmpl with its %s filled by @n bytes "a" (with_long) into @ev. */
static int parse_long(const char *tmpl, size_t n, struct kube_event *ev)
{
	char *line = with_long(tmpl, n);
	int ret = kube_parse_event(line, strlen(line), ev);

	free(line);
	return ret;
}

static void test_parse_event(void **state)
{
	static const char capture_tmpl[] =
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":"
		"\"1\",\"annotations\":{\"profiling.slideops.io/capture\":\"%s\"}}}}";
	static const struct {
		const char *line;
		int ret;
		enum kube_event_type type;
		const char *rv, *name;
		int code;
	} cases[] = {
		{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
		  "\"namespace\":\"n\",\"uid\":\"u1\",\"resourceVersion\":\"10\"}}}",
		  0, KUBE_EV_ADDED, "10", "a", 0 },
		{ "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\","
		  "\"resourceVersion\":\"11\",\"annotations\":{\"profiling.slideops.io/capture\":"
		  "\"question=cpu\"}}}}",
		  0, KUBE_EV_MODIFIED, "11", "a", 0 },
		{ "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\","
		  "\"resourceVersion\":\"12\"}}}",
		  0, KUBE_EV_DELETED, "12", "a", 0 },
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
		  "{\"resourceVersion\":\"13\"}}}",
		  0, KUBE_EV_BOOKMARK, "13", "", 0 },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
		  "\"message\":\"too old resource version: 5 (9)\",\"reason\":\"Expired\",\"code\":410}}",
		  0, KUBE_EV_ERROR, "", "", 410 },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":500,\"message\":\"etcd\"}}",
		  0, KUBE_EV_ERROR, "", "", 500 },
		/* errors */
		{ "{\"type\":\"ERROR\",\"object\":{\"message\":\"no code\"}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ERROR\",\"object\":{\"code\":-1}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}", -EINVAL, 0, 0,
		  0, 0 },	/* no resourceVersion */
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
		  -EINVAL, 0, 0, 0, 0 },	/* no name */
		{ "{\"type\":\"RENAMED\",\"object\":{}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":[]}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\"}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"object\":{}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":1,\"object\":{}}", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"", -EINVAL, 0, 0, 0, 0 },
		{ "[\"ADDED\"]", -EINVAL, 0, 0, 0, 0 },
		{ "null", -EINVAL, 0, 0, 0, 0 },
		{ "", -EINVAL, 0, 0, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
		  "\"resourceVersion\":\"123456789012345678901234567890123\"}}}",
		  -ENAMETOOLONG, 0, 0, 0, 0 },
	};
	struct kube_event *ev = malloc(sizeof(*ev));
	size_t i;

	(void)state;
	assert_non_null(ev);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(ev, 0x5a, sizeof(*ev));
		assert_int_equal(kube_parse_event(cases[i].line, strlen(cases[i].line), ev),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_int_equal(((unsigned char *)ev)[0], 0x5a);
			continue;
		}
		assert_int_equal(ev->type, cases[i].type);
		assert_string_equal(ev->rv, cases[i].rv);
		assert_string_equal(ev->obj.name, cases[i].name);
		assert_int_equal(ev->code, cases[i].code);
	}
	assert_int_equal(kube_parse_event(NULL, 0, ev), -EINVAL);

	/* the capture annotation: kept up to the bound, flagged beyond it */
	assert_int_equal(parse_long(capture_tmpl, KUBE_ANNOTATION_MAX - 1, ev), 0);
	assert_true(ev->obj.has_capture && !ev->obj.capture_too_long);
	assert_int_equal(strlen(ev->obj.capture), KUBE_ANNOTATION_MAX - 1);
	assert_int_equal(parse_long(capture_tmpl, KUBE_ANNOTATION_MAX, ev), 0);
	assert_true(ev->obj.has_capture && ev->obj.capture_too_long);
	assert_string_equal(ev->obj.capture, "");
	/* a name longer than a DNS subdomain */
	assert_int_equal(parse_long("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"%s\","
				    "\"resourceVersion\":\"1\"}}}",
				    KUBE_NAME_MAX, ev),
			 -ENAMETOOLONG);
	/* an over-long ownerReference name or kind, or template-hash label: that field is
	 * dropped (the pod is its own workload), the event is kept, so the watch goes on */
	{
		static const char *fmts[] = {
			"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p-1\",\"namespace\":"
			"\"a\",\"resourceVersion\":\"1\",\"ownerReferences\":[{\"controller\":true,"
			"\"kind\":\"ReplicaSet\",\"name\":\"%s\"}]}}}",
			"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p-1\",\"namespace\":"
			"\"a\",\"resourceVersion\":\"1\",\"ownerReferences\":[{\"controller\":true,"
			"\"kind\":\"%s\",\"name\":\"rs\"}]}}}",
			"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p-1\",\"namespace\":"
			"\"a\",\"resourceVersion\":\"1\",\"labels\":{\"pod-template-hash\":\"%s\"}}}}",
		};
		size_t k;

		for (k = 0; k < ARRAY_SIZE(fmts); k++) {
			print_message("long field %zu\n", k);
			assert_int_equal(parse_long(fmts[k], KUBE_NAME_MAX + 10, ev), 0);
			assert_string_equal(ev->obj.owner_kind, "");
			assert_string_equal(ev->obj.owner_name, "");
			assert_string_equal(ev->obj.template_hash, "");
			assert_string_equal(ev->obj.workload, "p-1");
		}
	}
	/* oversized: refused before parsing */
	assert_int_equal(parse_long("{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
				    "{\"resourceVersion\":\"1\",\"x\":\"%s\"}}}",
				    KUBE_MAX_EVENT_BYTES, ev),
			 -EMSGSIZE);
	free(ev);
}

struct lines {
	char got[16][64];
	size_t n;
	int ret_at;	/* return -ECANCELED for this line index; -1 never */
};

static int on_line(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	assert_true(len > 0 && len < 64 && l->n < 16);
	memcpy(l->got[l->n], line, len);
	l->got[l->n][len] = '\0';
	return (int)l->n++ == l->ret_at ? -ECANCELED : 0;
}

static void test_linebuf(void **state)
{
	static const struct {
		const char *chunks[4];
		size_t max;
		int ret;
		const char *want[4];
	} cases[] = {
		{ { "a\nb\n" }, 0, 0, { "a", "b" } },
		{ { "ab", "c\nd", "e\n" }, 0, 0, { "abc", "de" } },	/* split across chunks */
		{ { "a\r\n\r\n\nb", "\r\n" }, 0, 0, { "a", "b" } },	/* CRLF, empty lines */
		{ { "partial" }, 0, 0, { NULL } },			/* no line yet */
		{ { "1234", "5\n" }, 5, 0, { "12345" } },		/* exactly max */
		{ { "1234", "56\n" }, 5, -EMSGSIZE, { NULL } },		/* one more */
		{ { "123456\n" }, 5, -EMSGSIZE, { NULL } },		/* in one chunk */
		{ { "ok\n", "1234567" }, 5, -EMSGSIZE, { "ok" } },	/* no newline yet */
	};
	struct kube_linebuf lb;
	struct lines l;
	size_t i, j;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&l, 0, sizeof(l));
		l.ret_at = -1;
		kube_linebuf_init(&lb, cases[i].max);
		ret = 0;
		for (j = 0; j < 4 && cases[i].chunks[j] && !ret; j++)
			ret = kube_linebuf_feed(&lb, cases[i].chunks[j], strlen(cases[i].chunks[j]),
						on_line, &l);
		assert_int_equal(ret, cases[i].ret);
		for (j = 0; j < 4 && cases[i].want[j]; j++)
			assert_string_equal(l.got[j], cases[i].want[j]);
		assert_int_equal(l.n, j);
		kube_linebuf_free(&lb);
	}

	/* the callback's error stops the feed; after a reset the stream starts clean */
	memset(&l, 0, sizeof(l));
	l.ret_at = 1;
	kube_linebuf_init(&lb, 0);
	assert_int_equal(kube_linebuf_feed(&lb, "a\nb\nc\npart", 10, on_line, &l), -ECANCELED);
	assert_int_equal(l.n, 2);
	kube_linebuf_reset(&lb);
	assert_int_equal(kube_linebuf_feed(&lb, "d\n", 2, on_line, &l), 0);
	assert_string_equal(l.got[2], "d");
	kube_linebuf_free(&lb);
	kube_linebuf_free(NULL);
}

static int count_items(void *ctx, const struct kube_object *o)
{
	char *names = ctx;

	strcat(names, o->name);
	strcat(names, ",");
	return strcmp(o->name, "stop") ? 0 : -ECANCELED;
}

static void test_parse_list(void **state)
{
	static const struct {
		const char *text;
		int ret;
		const char *rv, *names;
		unsigned skipped;
	} cases[] = {
		{ "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"77\"},\"items\":["
		  "{\"metadata\":{\"name\":\"a\",\"uid\":\"1\"}},{\"metadata\":{}},7,"
		  "{\"metadata\":{\"name\":\"b\",\"uid\":\"2\"}}]}",
		  2, "77", "a,b,", 2 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}", 0, "5", "", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":null}", 0, "5", "", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":"
		  "\"stop\"}},{\"metadata\":{\"name\":\"after\"}}]}",
		  -ECANCELED, NULL, "stop,", 0 },
		{ "{\"metadata\":{},\"items\":[]}", -EINVAL, NULL, "", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"}}", -EINVAL, NULL, "", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":{}}", -EINVAL, NULL, "", 0 },
		{ "[]", -EINVAL, NULL, "", 0 },
		{ "{\"items\":[", -EINVAL, NULL, "", 0 },
	};
	char rv[KUBE_RV_MAX], names[128], tiny[2];
	unsigned skipped;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		names[0] = '\0';
		strcpy(rv, "x");
		assert_int_equal(kube_parse_list(cases[i].text, strlen(cases[i].text), count_items,
						 names, rv, sizeof(rv), &skipped),
				 cases[i].ret);
		assert_string_equal(names, cases[i].names);
		if (cases[i].ret >= 0) {
			assert_string_equal(rv, cases[i].rv);
			assert_int_equal(skipped, cases[i].skipped);
		}
	}
	names[0] = '\0';
	assert_int_equal(kube_parse_list(cases[1].text, strlen(cases[1].text), count_items, names,
					 tiny, sizeof(tiny), NULL),
			 0); /* "5" fits in 2 bytes */
	assert_int_equal(kube_parse_list(cases[0].text, strlen(cases[0].text), count_items, names,
					 tiny, 1, NULL),
			 -ENAMETOOLONG);
}

static void test_kubeconfig(void **state)
{
	static const struct {
		const char *file;
		int ret;
		const char *server, *ca_file, *token, *token_file, *cert_file, *key_file, *ns;
		const char *ca_data, *cert_data, *key_data;
		bool insecure;
		const char *err;	/* a substring of the message */
	} cases[] = {
		{ "token.yaml", 0, "https://10.0.0.1:6443", "/etc/kubernetes/pki/ca.crt", "abc.def",
		  NULL, NULL, NULL, "slideops", NULL, NULL, NULL, false, NULL },
		{ "files.yaml", 0, "https://k.example", "/base/pki/ca.crt", NULL,
		  "/base/secrets/token", "/base/pki/client.crt", "/abs/client.key", "default", NULL,
		  NULL, NULL, false, NULL },
		{ "data.yaml", 0, "https://k.example:443", NULL, NULL, NULL, NULL, NULL, "default",
		  "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n", "CERT", "KEY", false,
		  NULL },
		{ "insecure.yaml", 0, "http://127.0.0.1:8080", NULL, NULL, NULL, NULL, NULL, "default",
		  NULL, NULL, NULL, true, NULL },
		{ "aliases.yaml", 0, "https://k.example", NULL, "tok", NULL, NULL, NULL, "default",
		  NULL, NULL, NULL, false, NULL },
		{ "exec.yaml", -EOPNOTSUPP, .err = "exec and auth-provider plugins" },
		{ "no-context.yaml", -EINVAL, .err = "no current-context" },
		{ "missing-cluster.yaml", -EINVAL, .err = "cluster \"gone\" not found" },
		{ "bad-server.yaml", -EINVAL, .err = "not an http(s) URL" },
		{ "bad-base64.yaml", -EINVAL, .err = "bad base64" },
		{ "cert-no-key.yaml", -EINVAL, .err = "needs its key" },
		{ "bad-yaml.yaml", -EINVAL, .err = "kubeconfig:" },
	};
	struct kube_creds c;
	char err[256];
	size_t i, len;
	char *text;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu %s\n", i, cases[i].file);
		text = fixture(cases[i].file, &len);
		memset(&c, 0x5a, sizeof(c));
		err[0] = '\0';
		assert_int_equal(kube_parse_kubeconfig(text, len, "/base", &c, err, sizeof(err)),
				 cases[i].ret);
		free(text);
		if (cases[i].ret) {
			assert_non_null(strstr(err, cases[i].err));
			assert_int_equal(((unsigned char *)&c)[0], 0x5a);
			continue;
		}
#define STR_EQ(a, b) ((b) ? assert_string_equal((a), (b)) : assert_null(a))
		STR_EQ(c.server, cases[i].server);
		STR_EQ(c.ca_file, cases[i].ca_file);
		STR_EQ(c.token, cases[i].token);
		STR_EQ(c.token_file, cases[i].token_file);
		STR_EQ(c.cert_file, cases[i].cert_file);
		STR_EQ(c.key_file, cases[i].key_file);
		STR_EQ(c.ns, cases[i].ns);
		STR_EQ(c.ca_data, cases[i].ca_data);
		STR_EQ(c.cert_data, cases[i].cert_data);
		STR_EQ(c.key_data, cases[i].key_data);
#undef STR_EQ
		if (cases[i].ca_data)
			assert_int_equal(c.ca_data_len, strlen(cases[i].ca_data));
		assert_int_equal(c.insecure, cases[i].insecure);
		kube_creds_free(&c);
	}
	/* NUL bytes, empty input, no input */
	assert_int_equal(kube_parse_kubeconfig("a: b\0", 5, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(kube_parse_kubeconfig("", 0, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(kube_parse_kubeconfig(NULL, 0, NULL, &c, NULL, 0), -EINVAL);
	kube_creds_free(NULL);
}

static void test_in_cluster(void **state)
{
	static const struct {
		const char *sa, *host, *port;
		int ret;
		const char *server, *ns;
	} cases[] = {
		{ FIXTURES "sa", "10.96.0.1", "443", 0, "https://10.96.0.1:443", "monitoring" },
		{ FIXTURES "sa", "fd00::1", "6443", 0, "https://[fd00::1]:6443", "monitoring" },
		{ FIXTURES "sa-nons", "10.96.0.1", "443", 0, "https://10.96.0.1:443", "default" },
		{ FIXTURES "sa", NULL, "443", -ENOENT, NULL, NULL },
		{ FIXTURES "sa", "10.96.0.1", "", -ENOENT, NULL, NULL },
		{ FIXTURES "sa", "10.96.0.1", "http", -EINVAL, NULL, NULL },
		{ FIXTURES "sa", "10.96.0.1", "70000", -EINVAL, NULL, NULL },
		{ FIXTURES "sa", "evil/path", "443", -EINVAL, NULL, NULL },
		{ FIXTURES "missing", "10.96.0.1", "443", -ENOENT, NULL, NULL },
	};
	struct kube_creds c;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(kube_creds_in_cluster(cases[i].sa, cases[i].host, cases[i].port, &c,
						       err, sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret)
			continue;
		assert_string_equal(c.server, cases[i].server);
		assert_string_equal(c.ns, cases[i].ns);
		assert_string_equal(c.token_file + strlen(c.token_file) - 6, "/token");
		assert_string_equal(c.ca_file + strlen(c.ca_file) - 7, "/ca.crt");
		assert_null(c.token);
		kube_creds_free(&c);
	}
}

/* kube__new() argument checks: nothing reaches the network. */
static void test_new_errors(void **state)
{
	struct kube_opts o = { .node_name = "node-1", .kubeconfig = FIXTURES "exec.yaml" };
	struct kube *k = NULL;

	(void)state;
	assert_int_equal(kube__new(NULL, &k), -EINVAL);
	assert_int_equal(kube__new(&o, NULL), -EINVAL);
	o.node_name = "Node_1";
	assert_int_equal(kube__new(&o, &k), -EINVAL);
	o.node_name = "node-1";
	assert_int_equal(kube__new(&o, &k), -EOPNOTSUPP);
	o.kubeconfig = FIXTURES "no-such-file.yaml";
	assert_int_equal(kube__new(&o, &k), -ENOENT);
	assert_null(k);
	kube__free(NULL);
	assert_int_equal(kube__owner_name(NULL, 1, NULL), -EINVAL);
	{
		struct owner ow = { .group = OWNER_SERVICE };
		char ns[8];

		assert_int_equal(kube__owner_namespace(NULL, &ow, ns, sizeof(ns)), -EINVAL);
		assert_int_equal(kube__owner_namespace((void *)1, NULL, ns, sizeof(ns)), -EINVAL);
		assert_int_equal(kube__owner_namespace((void *)1, &ow, NULL, 8), -EINVAL);
		assert_int_equal(kube__owner_namespace((void *)1, &ow, ns, 0), -EINVAL);
		/* neither a pod uid nor a container id: not a pod's, before any lookup */
		assert_int_equal(kube__owner_namespace((void *)1, &ow, ns, sizeof(ns)), -ENOENT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_id),  cmocka_unit_test(test_workload_name),
		cmocka_unit_test(test_parse_object),  cmocka_unit_test(test_parse_event),
		cmocka_unit_test(test_linebuf),	      cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_kubeconfig),    cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_new_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
