// SPDX-License-Identifier: Apache-2.0
/*
 * Config parsing: valid documents checked through a "key=value" dump of the result, error rows
 * with the exact message (file, line, key), generated documents at each limit, service rule
 * matching, and config_load() on real files.
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
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "daemon/config.h"
#include "tests/unit/fixtures.h"

#define F "profiler.yaml"

/* Every field as "\nkey=value", so a row's expectation "\nlisten=:80\n" is a substring. */
static void dump(const struct config *c, char *buf, size_t size)
{
	size_t n = 0, i;

#define P(...) n += snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__)
	P("\nnode_name=%s\nlisten=%s\nstore_dir=%s\n", c->node_name, c->listen, c->store_dir);
	P("retention_per_service=%u\ncontinuous=%d\ncontinuous_hz=%u\n", c->retention_per_service,
	  c->continuous, c->continuous_hz);
	P("continuous_window_seconds=%u\n", c->continuous_window_s);
	P("continuous_retention_hours=%u\nlog_level=%s\n", c->continuous_retention_hours,
	  c->log_level);
	P("kube_enabled=%d\nkubeconfig=%s\n", c->kube_enabled, c->kubeconfig);
	P("cluster_api_url=%s\ncluster_api_token_file=%s\n", c->cluster_api_url,
	  c->cluster_api_token_file);
	P("spool_dir=%s\nspool_max_bytes=%llu\n", c->spool_dir, c->spool_max_bytes);
	P("pyroscope_url=%s\ntokens_file=%s\naudit_log=%s\n", c->pyroscope_url, c->tokens_file,
	  c->audit_log);
	P("nservices=%zu\n", c->nservices);
	for (i = 0; i < c->nservices; i++)
		P("services[%zu]=%s unit=%s cgroup=%s exe=%s comm=%s\n", i, c->services[i].name,
		  c->services[i].unit, c->services[i].cgroup, c->services[i].exe,
		  c->services[i].comm);
#undef P
	assert_true(n < size);
}

#define DEFAULTS                                                                               \
	"\nnode_name=test-node\nlisten=127.0.0.1:7070\nstore_dir=/var/lib/slideops/profiler\n" \
	"retention_per_service=50\ncontinuous=0\ncontinuous_hz=19\n"                           \
	"continuous_window_seconds=60\n"                                                        \
	"continuous_retention_hours=24\nlog_level=info\nkube_enabled=0\nkubeconfig=\n"          \
	"cluster_api_url=\ncluster_api_token_file=\n"                                           \
	"spool_dir=/var/lib/slideops/profiler/spool\nspool_max_bytes=268435456\n"               \
	"pyroscope_url=\ntokens_file=/etc/slideops/tokens.yaml\n"                               \
	"audit_log=/var/lib/slideops/profiler/audit.log\nnservices=0\n"

#define EXAMPLE                                                                                \
	"# slideops-profiler\n"                                                                \
	"node_name: node-1\n"                                                                  \
	"listen: 127.0.0.1:7070\n"                                                             \
	"store_dir: /var/lib/slideops/profiler\n"                                              \
	"retention_per_service: 50\n"                                                          \
	"continuous: false\n"                                                                  \
	"continuous_hz: 19\n"                                                                  \
	"continuous_retention_hours: 24\n"                                                     \
	"log_level: info\n"                                                                    \
	"kubernetes:\n"                                                                        \
	"  enabled: true\n"                                                                    \
	"  kubeconfig: \"\"\n"                                                                 \
	"cluster_api:\n"                                                                       \
	"  url: https://slideops.example/api\n"                                                \
	"  token_file: /var/run/secrets/slideops/token\n"                                      \
	"  spool_dir: /var/lib/slideops/profiler/spool\n"                                      \
	"  spool_max_bytes: 268435456\n"                                                       \
	"pyroscope:\n"                                                                         \
	"  url: http://pyroscope:4040\n"                                                       \
	"tokens_file: /etc/slideops/tokens.yaml\n"                                             \
	"audit_log: /var/lib/slideops/profiler/audit.log\n"                                    \
	"services:\n"                                                                          \
	"  - name: billing\n"                                                                  \
	"    match:\n"                                                                         \
	"      unit: billing-worker.service\n"                                                 \
	"  - name: checkout\n"                                                                 \
	"    match:\n"                                                                         \
	"      exe: /opt/checkout/bin/*\n"                                                     \
	"      comm: checkout\n"

static int setup(void **state)
{
	(void)state;
	setenv("NODE_NAME", "test-node", 1);
	unsetenv("KUBERNETES_SERVICE_HOST");
	return 0;
}

static void test_valid(void **state)
{
	static const struct {
		const char *yaml;
		const char *want; /* "\nkey=value\n..." lines that must appear in the dump */
	} cases[] = {
		{ "", DEFAULTS },
		{ "# nothing set\n", DEFAULTS },
		{ "---\n", DEFAULTS },
		{ "~\n", DEFAULTS },
		{ "---\n...\n", DEFAULTS },
		{ EXAMPLE,
		  "\nnode_name=node-1\nlisten=127.0.0.1:7070\nstore_dir=/var/lib/slideops/profiler\n"
		  "retention_per_service=50\ncontinuous=0\ncontinuous_hz=19\n"
		  "continuous_window_seconds=60\n"
		  "continuous_retention_hours=24\nlog_level=info\nkube_enabled=1\nkubeconfig=\n"
		  "cluster_api_url=https://slideops.example/api\n"
		  "cluster_api_token_file=/var/run/secrets/slideops/token\n"
		  "spool_dir=/var/lib/slideops/profiler/spool\nspool_max_bytes=268435456\n"
		  "pyroscope_url=http://pyroscope:4040\ntokens_file=/etc/slideops/tokens.yaml\n"
		  "audit_log=/var/lib/slideops/profiler/audit.log\nnservices=2\n"
		  "services[0]=billing unit=billing-worker.service cgroup= exe= comm=\n"
		  "services[1]=checkout unit= cgroup= exe=/opt/checkout/bin/* comm=checkout\n" },
		/* null keeps the default */
		{ "listen: ~\nretention_per_service:\nkubernetes: null\nservices: NULL\n", DEFAULTS },
		/* spool_dir and audit_log follow store_dir unless set */
		{ "store_dir: /data/prof\n",
		  "\nspool_dir=/data/prof/spool\nspool_max_bytes=268435456\npyroscope_url=\n"
		  "tokens_file=/etc/slideops/tokens.yaml\naudit_log=/data/prof/audit.log\n" },
		{ "store_dir: /\n", "\nspool_dir=/spool\n" },
		{ "store_dir: /data/\n", "\naudit_log=/data/audit.log\n" },
		{ "store_dir: /data\ncluster_api: {spool_dir: /spool}\naudit_log: /log/audit\n",
		  "\nspool_dir=/spool\n" "spool_max_bytes=268435456\npyroscope_url=\n"
		  "tokens_file=/etc/slideops/tokens.yaml\naudit_log=/log/audit\n" },
		/* a kubeconfig turns Kubernetes on unless enabled says otherwise */
		{ "kubernetes:\n  kubeconfig: /root/.kube/config\n",
		  "\nkube_enabled=1\nkubeconfig=/root/.kube/config\n" },
		{ "kubernetes:\n  enabled: no\n  kubeconfig: /root/.kube/config\n",
		  "\nkube_enabled=0\nkubeconfig=/root/.kube/config\n" },
		{ "kubernetes: {enabled: On}\n", "\nkube_enabled=1\n" },
		{ "continuous: YES\n", "\ncontinuous=1\n" },
		{ "continuous: off\n", "\ncontinuous=0\n" },
		{ "continuous: True\ncontinuous_hz: 1000\ncontinuous_retention_hours: 720\n",
		  "\ncontinuous=1\ncontinuous_hz=1000\ncontinuous_window_seconds=60\n"
		  "continuous_retention_hours=720\n" },
		{ "continuous_window_seconds: 5\n", "\ncontinuous_window_seconds=5\n" },
		{ "continuous_window_seconds: \"60\"\n", "\ncontinuous_window_seconds=60\n" },
		{ "retention_per_service: \"7\"\n", "\nretention_per_service=7\n" },
		{ "retention_per_service: 1\n", "\nretention_per_service=1\n" },
		{ "retention_per_service: 1000\n", "\nretention_per_service=1000\n" },
		{ "cluster_api: {spool_max_bytes: 1048576}\n", "\nspool_max_bytes=1048576\n" },
		{ "cluster_api: {spool_max_bytes: 1099511627776}\n", "\nspool_max_bytes=1099511627776\n" },
		{ "listen: \":7070\"\n", "\nlisten=:7070\n" },
		{ "listen: :7070\n", "\nlisten=:7070\n" },
		{ "listen: \"[::1]:8080\"\n", "\nlisten=[::1]:8080\n" },
		{ "listen: 0.0.0.0:1\n", "\nlisten=0.0.0.0:1\n" },
		{ "listen: node-1.local:65535\n", "\nlisten=node-1.local:65535\n" },
		{ "log_level: DEBUG\n", "\nlog_level=debug\n" },
		{ "log_level: warn\n", "\nlog_level=warn\n" },
		{ "node_name: 'n\xc5\x93ud-1'\n", "\nnode_name=n\xc5\x93ud-1\n" },
		{ "pyroscope: {url: 'https://p.example:4040/x'}\n",
		  "\npyroscope_url=https://p.example:4040/x\n" },
		{ "cluster_api:\n  url: \"\"\n", "\ncluster_api_url=\n" },
		{ "services: []\n", "\nnservices=0\n" },
		{ "{listen: ':9000', services: [{name: a, match: {comm: a}}, {name: a, match: {cgroup: '/x/*'}}]}",
		  "\nlisten=:9000\n" "store_dir=/var/lib/slideops/profiler\n" },
		{ "{services: [{name: a, match: {comm: a}}, {name: a, match: {cgroup: '/x/*'}}]}",
		  "\nnservices=2\nservices[0]=a unit= cgroup= exe= comm=a\n"
		  "services[1]=a unit= cgroup=/x/* exe= comm=\n" },
		{ "services:\n- name: s\n  match: {unit: 'a@*.service'}\n",
		  "\nservices[0]=s unit=a@*.service cgroup= exe= comm=\n" },
		{ "\"listen\": ':1'\n", "\nlisten=:1\n" },
		{ "%YAML 1.1\n---\nlisten: ':2'\n...\n", "\nlisten=:2\n" },
	};
	char err[512], got[8192];
	struct config c;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = config_parse(cases[i].yaml, strlen(cases[i].yaml), F, &c, err, sizeof(err));
		if (ret)
			print_message("  %s\n", err);
		assert_int_equal(ret, 0);
		assert_string_equal(err, "");
		dump(&c, got, sizeof(got));
		if (!strstr(got, cases[i].want))
			fail_msg("want\n%s\ngot\n%s", cases[i].want, got);
		config_free(&c);
	}
}

#define KNOWN_ROOT                                                                             \
	"node_name, listen, store_dir, retention_per_service, continuous, continuous_hz, "    \
	"continuous_window_seconds, continuous_retention_hours, log_level, async_profiler, kubernetes, cluster_api, pyroscope, "          \
	"tokens_file, audit_log, services"
#define LISTEN_WANT "host:port with a port from 1 to 65535 (\":7070\" for all addresses)"
#define RETENTION(v)                                                                           \
	F ":1: retention_per_service must be a whole number from 1 to 1000, not '" v "'"
#define SPOOL_MAX(v)                                                                           \
	F ":2: cluster_api.spool_max_bytes must be a whole number from 1048576 to "            \
	  "1099511627776, not '" v "'"
#define ROW(y, r, m) { y, sizeof(y) - 1, r, m }

static void test_errors(void **state)
{
	static const struct {
		const char *yaml;
		size_t len;
		int ret;
		const char *msg;
	} cases[] = {
		ROW("retension: 5\n", -EINVAL,
		    F ":1: unknown key 'retension' (known: " KNOWN_ROOT ")"),
		ROW("listen: ':1'\n\nretention_per_service: abc\n", -EINVAL,
		    F ":3: retention_per_service must be a whole number from 1 to 1000, not 'abc'"),
		ROW("retention_per_service: 0\n", -EINVAL, RETENTION("0")),
		ROW("retention_per_service: 1001\n", -EINVAL, RETENTION("1001")),
		ROW("retention_per_service: -1\n", -EINVAL, RETENTION("-1")),
		ROW("retention_per_service: +5\n", -EINVAL, RETENTION("+5")),
		ROW("retention_per_service: 050\n", -EINVAL, RETENTION("050")),
		ROW("retention_per_service: 1.5\n", -EINVAL, RETENTION("1.5")),
		ROW("retention_per_service: 0x10\n", -EINVAL, RETENTION("0x10")),
		ROW("retention_per_service: ' 5'\n", -EINVAL, RETENTION(" 5")),
		ROW("retention_per_service: ''\n", -EINVAL, RETENTION("")),
		ROW("retention_per_service: 18446744073709551617\n", -EINVAL,
		    RETENTION("18446744073709551617")),
		ROW("retention_per_service: 4294967346\n", -EINVAL, RETENTION("4294967346")),
		ROW("retention_per_service: 1234567890123456789012345678901234567890123456789\n",
		    -EINVAL, RETENTION("1234567890123456789012345678901234567890...")),
		ROW("retention_per_service: \"1\\t\"\n", -EINVAL, RETENTION("1?")),
		ROW("retention_per_service: [1]\n", -EINVAL,
		    F ":1: retention_per_service must be a whole number from 1 to 1000, not a list"),
		ROW("continuous_hz: 1001\n", -EINVAL,
		    F ":1: continuous_hz must be a whole number from 1 to 1000, not '1001'"),
		ROW("continuous_window_seconds: 4\n", -EINVAL,
		    F ":1: continuous_window_seconds must be a whole number from 5 to 60, not '4'"),
		ROW("continuous_window_seconds: 61\n", -EINVAL,
		    F ":1: continuous_window_seconds must be a whole number from 5 to 60, not '61'"),
		ROW("continuous_retention_hours: 721\n", -EINVAL,
		    F ":1: continuous_retention_hours must be a whole number from 1 to 720, not '721'"),
		ROW("cluster_api:\n  spool_max_bytes: 1048575\n", -EINVAL, SPOOL_MAX("1048575")),
		ROW("cluster_api:\n  spool_max_bytes: 1099511627777\n", -EINVAL,
		    SPOOL_MAX("1099511627777")),
		ROW("cluster_api:\n  spool_max_bytes: 18446744073709551616\n", -EINVAL,
		    SPOOL_MAX("18446744073709551616")),
		ROW("cluster_api:\n  spool_max_bytes: 256Mi\n", -EINVAL, SPOOL_MAX("256Mi")),
		ROW("continuous: maybe\n", -EINVAL,
		    F ":1: continuous must be true or false, not 'maybe'"),
		ROW("continuous: 1\n", -EINVAL, F ":1: continuous must be true or false, not '1'"),
		ROW("continuous: \"true\\0\"\n", -EINVAL,
		    F ":1: continuous must be true or false, not 'true?'"),
		ROW("kubernetes:\n  enabled: {}\n", -EINVAL,
		    F ":2: kubernetes.enabled must be true or false, not a mapping"),
		ROW("listen: 7070\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not '7070'"),
		ROW("listen: 'host:'\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not 'host:'"),
		ROW("listen: 'host:0'\n", -EINVAL,
		    F ":1: listen must be " LISTEN_WANT ", not 'host:0'"),
		ROW("listen: 'host:65536'\n", -EINVAL,
		    F ":1: listen must be " LISTEN_WANT ", not 'host:65536'"),
		ROW("listen: '::1:80'\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not '::1:80'"),
		ROW("listen: '[]:80'\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not '[]:80'"),
		ROW("listen: '[zz]:80'\n", -EINVAL,
		    F ":1: listen must be " LISTEN_WANT ", not '[zz]:80'"),
		ROW("listen: 'a b:80'\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not 'a b:80'"),
		ROW("listen: ''\n", -EINVAL, F ":1: listen must not be empty"),
		ROW("listen: [a, b]\n", -EINVAL, F ":1: listen must be " LISTEN_WANT ", not a list"),
		ROW("node_name: {a: b}\n", -EINVAL, F ":1: node_name must be a string, not a mapping"),
		ROW("node_name: \"a\\tb\"\n", -EINVAL,
		    F ":1: node_name must not contain control characters"),
		ROW("node_name: \"a\\0b\"\n", -EINVAL,
		    F ":1: node_name must not contain control characters"),
		ROW("kubernetes: true\n", -EINVAL, F ":1: kubernetes must be a mapping, not 'true'"),
		ROW("kubernetes:\n  - enabled\n", -EINVAL,
		    F ":2: kubernetes must be a mapping, not a list"),
		ROW("kubernetes:\n  kubeconfig: .kube/config\n", -EINVAL,
		    F ":2: kubernetes.kubeconfig must be an absolute path, not '.kube/config'"),
		ROW("services: {name: x}\n", -EINVAL,
		    F ":1: services must be a list of services, not a mapping"),
		ROW("services: billing\n", -EINVAL,
		    F ":1: services must be a list of services, not 'billing'"),
		ROW("listen: ':1'\nlisten: ':2'\n", -EINVAL,
		    F ":2: duplicate key 'listen' (first on line 1)"),
		ROW("cluster_api:\n  url: http://a\n\n  url: http://b\n", -EINVAL,
		    F ":4: duplicate key 'cluster_api.url' (first on line 2)"),
		ROW("pyroscope: {}\npyroscope: {}\n", -EINVAL,
		    F ":2: duplicate key 'pyroscope' (first on line 1)"),
		ROW("cluster_api:\n  uri: http://a\n", -EINVAL,
		    F ":2: unknown key 'uri' in cluster_api (known: url, token_file, spool_dir, "
		      "spool_max_bytes)"),
		ROW("kubernetes: {in_cluster: true}\n", -EINVAL,
		    F ":1: unknown key 'in_cluster' in kubernetes (known: enabled, kubeconfig)"),
		ROW("\"list\\0en\": 1\n", -EINVAL,
		    F ":1: unknown key 'list?en' (known: " KNOWN_ROOT ")"),
		ROW("pyroscope:\n  url: ftp://p\n", -EINVAL,
		    F ":2: pyroscope.url must be an http:// or https:// URL, not 'ftp://p'"),
		ROW("pyroscope:\n  url: http://\n", -EINVAL,
		    F ":2: pyroscope.url must be an http:// or https:// URL, not 'http://'"),
		ROW("pyroscope:\n  url: https:///api\n", -EINVAL,
		    F ":2: pyroscope.url must be an http:// or https:// URL, not 'https:///api'"),
		ROW("pyroscope:\n  url: pyroscope:4040\n", -EINVAL,
		    F ":2: pyroscope.url must be an http:// or https:// URL, not 'pyroscope:4040'"),
		ROW("cluster_api:\n  url: 'http://a b'\n", -EINVAL,
		    F ":2: cluster_api.url must be an http:// or https:// URL, not 'http://a b'"),
		ROW("cluster_api:\n  token_file: token\n", -EINVAL,
		    F ":2: cluster_api.token_file must be an absolute path, not 'token'"),
		ROW("store_dir: var/lib\n", -EINVAL,
		    F ":1: store_dir must be an absolute path, not 'var/lib'"),
		ROW("store_dir: \"\"\n", -EINVAL, F ":1: store_dir must not be empty"),
		ROW("tokens_file: ''\n", -EINVAL, F ":1: tokens_file must not be empty"),
		ROW("log_level: verbose\n", -EINVAL,
		    F ":1: log_level must be one of error, warn, info, debug, not 'verbose'"),
		ROW("listen: &a ':1'\n", -EINVAL, F ":1: anchors (&a) are not allowed"),
		ROW("services: &s []\n", -EINVAL, F ":1: anchors (&s) are not allowed"),
		ROW("listen: *a\n", -EINVAL, F ":1: aliases (*a) are not allowed"),
		ROW("&root {listen: ':1'}\n", -EINVAL, F ":1: anchors (&root) are not allowed"),
		ROW("listen: !!str ':1'\n", -EINVAL,
		    F ":1: tags (tag:yaml.org,2002:str) are not allowed"),
		ROW("listen: !local ':1'\n", -EINVAL, F ":1: tags (!local) are not allowed"),
		ROW("- listen\n", -EINVAL,
		    F ":1: the top level must be a mapping of keys (listen: ..., services: ...), not a list"),
		ROW("hello\n", -EINVAL,
		    F ":1: the top level must be a mapping of keys (listen: ..., services: ...), not 'hello'"),
		ROW("listen: ':1'\n---\nlisten: ':2'\n", -EINVAL,
		    F ":2: a second YAML document; the file must hold one"),
		ROW("? [a]\n: 1\n", -EINVAL, F ":1: keys must be words, not a list"),
		ROW("kubernetes:\n  ? {a: 1}\n  : 1\n", -EINVAL,
		    F ":2: keys of kubernetes must be words, not a mapping"),
		ROW("services:\n  - billing\n", -EINVAL,
		    F ":2: services[0] must be a mapping with name and match, not 'billing'"),
		ROW("services:\n  - match:\n      comm: x\n", -EINVAL, F ":2: services[0] has no name"),
		ROW("services:\n  - name: ~\n    match: {comm: x}\n", -EINVAL,
		    F ":2: services[0] has no name"),
		ROW("services:\n  - name: ''\n    match: {comm: x}\n", -EINVAL,
		    F ":2: services[0].name must not be empty"),
		ROW("services:\n  - name: a\n", -EINVAL,
		    F ":2: services[0] (a) needs a match with at least one of unit, cgroup, exe, comm"),
		ROW("services:\n  - name: a\n    match: {comm: a}\n  - name: b\n    match: {}\n",
		    -EINVAL,
		    F ":4: services[1] (b) needs a match with at least one of unit, cgroup, exe, comm"),
		ROW("services:\n  - name: a\n    match: {unit: ''}\n", -EINVAL,
		    F ":2: services[0] (a) needs a match with at least one of unit, cgroup, exe, comm"),
		ROW("services:\n  - name: a\n    match:\n      pid: 5\n", -EINVAL,
		    F ":4: unknown key 'pid' in services[0].match (known: unit, cgroup, exe, comm)"),
		ROW("services:\n  - name: a\n    matches: {}\n", -EINVAL,
		    F ":3: unknown key 'matches' in services[0] (known: name, match)"),
		ROW("services:\n  - name: a\n    match: comm\n", -EINVAL,
		    F ":3: services[0].match must be a mapping, not 'comm'"),
		ROW("services:\n  - name: [a]\n    match: {comm: a}\n", -EINVAL,
		    F ":2: services[0].name must be a string, not a list"),
		/* nesting deeper than the schema stops at the first node of the wrong type */
		ROW("services:\n  - name: a\n    match:\n      exe: [[[[[[[[x]]]]]]]]\n", -EINVAL,
		    F ":4: services[0].match.exe must be a string, not a list"),
		ROW("services: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		    -EINVAL, F ":1: services[0] must be a mapping with name and match, not a list"),
		ROW("{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
		    -EINVAL, F ":1: keys must be words, not a mapping"),
		/* libyaml's own messages */
		ROW("{listen: ':1'\n", -EINVAL, F ":2: invalid YAML: while parsing a flow mapping, did not find expected ',' or '}'"),
		ROW("services:\n\t- name: x\n", -EINVAL,
		    F ":2: invalid YAML: while scanning for the next token, found character that "
		      "cannot start any token"),
		ROW("listen: ':1'\n  store_dir: /x\n", -EINVAL,
		    F ":2: invalid YAML: while parsing a block mapping, did not find expected key"),
		ROW("listen: \"abc\n", -EINVAL,
		    F ":2: invalid YAML: while scanning a quoted scalar, found unexpected end of stream"),
		ROW("node_name: a\nlisten: \xff\n", -EINVAL,
		    F ":2: invalid YAML: invalid leading UTF-8 octet"),
		ROW("node_name: a\n\nlisten: x\0\n", -EINVAL,
		    F ":3: invalid YAML: control characters are not allowed"),
	};
	char err[1024];
	struct config c;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&c, 0x5a, sizeof(c));
		ret = config_parse(cases[i].yaml, cases[i].len, F, &c, err, sizeof(err));
		assert_int_equal(ret, cases[i].ret);
		assert_string_equal(err, cases[i].msg);
		assert_int_equal(c.nservices, 0x5a5a5a5a5a5a5a5aULL); /* @out untouched */
	}
}

static char *repeat(const char *s, size_t n)
{
	size_t len = strlen(s), i;
	char *p = malloc(len * n + 1);

	assert_non_null(p);
	for (i = 0; i < n; i++)
		memcpy(p + i * len, s, len);
	p[len * n] = '\0';
	return p;
}

/* Documents at and just past each size limit. */
static void test_limits(void **state)
{
	static const struct {
		const char *head, *unit, *tail;
		size_t n;
		int ret;
		const char *msg;
	} cases[] = {
		{ "node_name: ", "a", "\n", 255, 0, NULL },
		{ "node_name: ", "a", "\n", 256, -EINVAL,
		  F ":1: node_name is too long: 256 bytes, the maximum is 255" },
		{ "node_name: ", "\xc5\x93", "\n", 128, -EINVAL,
		  F ":1: node_name is too long: 256 bytes, the maximum is 255" },
		{ "store_dir: /", "d", "\n", 500, 0, NULL },
		{ "store_dir: /", "d", "\n", 501, -EINVAL,
		  F ":1: store_dir is too long: 502 bytes, the maximum is 501" },
		{ "cluster_api:\n  url: http://", "a", "\n", 504, 0, NULL },
		{ "cluster_api:\n  url: http://", "a", "\n", 505, -EINVAL,
		  F ":2: cluster_api.url is too long: 512 bytes, the maximum is 511" },
		{ "services:\n- name: n\n  match: {comm: ", "c", "}\n", 15, 0, NULL },
		{ "services:\n- name: n\n  match: {comm: ", "c", "}\n", 16, -EINVAL,
		  F ":3: services[0].match.comm is too long: 16 bytes, the maximum is 15" },
		{ "services:\n", "- {name: s, match: {comm: c}}\n", "", 256, 0, NULL },
		{ "services:\n", "- {name: s, match: {comm: c}}\n", "", 257, -EINVAL,
		  F ":258: services[256]: more than 256 services" },
		{ "services: [", "{name: s, match: {exe: /x}},", "]", 300, -EINVAL,
		  F ":1: services[256]: more than 256 services" },
	};
	char *mid, *text, err[512];
	struct config c;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		mid = repeat(cases[i].unit, cases[i].n);
		assert_true(asprintf(&text, "%s%s%s", cases[i].head, mid, cases[i].tail) > 0);
		ret = config_parse(text, strlen(text), F, &c, err, sizeof(err));
		assert_int_equal(ret, cases[i].ret);
		if (ret) {
			assert_string_equal(err, cases[i].msg);
		} else {
			if (!strcmp(cases[i].head, "services:\n"))
				assert_int_equal(c.nservices, cases[i].n);
			else if (strstr(text, "node_name"))
				assert_string_equal(c.node_name, mid);
			else if (strstr(text, "store_dir")) {
				assert_int_equal(strlen(c.audit_log), 511);
				assert_int_equal(strlen(c.spool_dir), 507);
			}
			config_free(&c);
		}
		free(text);
		free(mid);
	}

	/* more than CONFIG_MAX_BYTES is refused before parsing */
	text = repeat("#", CONFIG_MAX_BYTES + 1);
	assert_int_equal(config_parse(text, CONFIG_MAX_BYTES + 1, F, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, F ": larger than 1048576 bytes");
	free(text);
}

static void test_defaults(void **state)
{
	char host[256] = "";
	struct config c;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.node_name, "test-node");
	assert_false(c.kube_enabled);
	assert_null(c.services);
	assert_string_equal(c.spool_dir, "/var/lib/slideops/profiler/spool");
	/* async-profiler: the image's path by default, any absolute path, or "" (none) */
	assert_string_equal(c.async_profiler,
			    "/opt/slideops/async-profiler/lib/libasyncProfiler.so");
	assert_int_equal(config_parse("async_profiler: /x/lib.so", 25, NULL, &c, NULL, 0), 0);
	assert_string_equal(c.async_profiler, "/x/lib.so");
	config_free(&c);
	assert_int_equal(config_parse("async_profiler: ''", 18, NULL, &c, NULL, 0), 0);
	assert_string_equal(c.async_profiler, "");
	config_free(&c);
	assert_int_equal(config_parse("async_profiler: lib.so", 22, NULL, &c, NULL, 0), -EINVAL);
	config_defaults(&c);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	unsetenv("NODE_NAME");
	config_defaults(&c);
	assert_true(c.kube_enabled);
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_string_equal(c.node_name, host[0] ? host : "localhost");
	assert_int_equal(config_parse("kubernetes: {enabled: false}", 28, NULL, &c, NULL, 0), 0);
	assert_false(c.kube_enabled);
	config_free(&c);

	setup(state);
}

static void test_err_buffer(void **state)
{
	char err[12];
	struct config c;

	(void)state;
	/* truncated but terminated; NULL and zero-sized buffers are fine */
	assert_int_equal(config_parse("bad: 1", 6, F, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "profiler.ya");
	assert_int_equal(config_parse("bad: 1", 6, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "<config>:1:");
	assert_int_equal(config_parse("bad: 1", 6, F, &c, NULL, 0), -EINVAL);
	assert_int_equal(config_parse("bad: 1", 6, F, &c, err, 0), -EINVAL);
	assert_int_equal(config_parse(NULL, 0, F, &c, err, sizeof(err)), 0);
	config_free(&c);
	assert_int_equal(config_parse(NULL, 1, F, &c, err, sizeof(err)), -EINVAL);
	config_free(NULL);
}

#define RULES                                                                                  \
	"services:\n"                                                                          \
	"  - name: billing\n"                                                                  \
	"    match: {unit: billing-*.service}\n"                                               \
	"  - name: checkout\n"                                                                 \
	"    match: {exe: /opt/checkout/bin/*, comm: checkout}\n"                              \
	"  - name: batch\n"                                                                    \
	"    match: {cgroup: /system.slice/batch*/*}\n"                                        \
	"  - name: java\n"                                                                     \
	"    match: {comm: java}\n"                                                            \
	"  - name: reports\n"                                                                  \
	"    match: {unit: 'reports@[0-9].service', exe: /usr/bin/python3*, cgroup: '*'}\n"

static void test_match(void **state)
{
	static const struct {
		const char *unit, *cgroup, *exe, *comm;
		int ret;
	} cases[] = {
		{ "billing-worker.service", NULL, NULL, NULL, 0 },
		{ "billing-worker.service", "/system.slice/billing-worker.service", "/usr/bin/x",
		  "java", 0 }, /* the first matching rule wins */
		{ "billing.service", NULL, NULL, NULL, -ENOENT },
		{ NULL, NULL, "/opt/checkout/bin/server", "checkout", 1 },
		{ NULL, NULL, "/opt/checkout/bin/sub/server", "checkout", 1 }, /* '*' matches '/' */
		{ NULL, NULL, "/opt/checkout/bin/server", "checkout-2", -ENOENT },
		{ NULL, NULL, "/opt/checkout/bin/server", NULL, -ENOENT },
		{ NULL, NULL, NULL, "checkout", -ENOENT },
		{ NULL, NULL, "/opt/checkout/lib/x", "checkout", -ENOENT },
		{ NULL, "/system.slice/batch-7.service/worker", NULL, NULL, 2 },
		{ NULL, "/system.slice/batch-7.service", NULL, NULL, -ENOENT },
		{ NULL, NULL, NULL, "java", 3 },
		{ NULL, NULL, NULL, "jav", -ENOENT },
		{ NULL, NULL, NULL, "java ", -ENOENT },
		{ "reports@3.service", "/system.slice/reports@3.service", "/usr/bin/python3.11",
		  "python3", 4 },
		{ "reports@3.service", NULL, "/usr/bin/python3.11", "python3", -ENOENT },
		{ "reports@x.service", "/", "/usr/bin/python3.11", "python3", -ENOENT },
		{ "", "", "", "", -ENOENT },
		{ NULL, NULL, NULL, NULL, -ENOENT },
	};
	char err[512];
	struct config c, empty;
	size_t i;

	(void)state;
	assert_int_equal(config_parse(RULES, strlen(RULES), F, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nservices, 5);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(config_match_service(&c, cases[i].unit, cases[i].cgroup,
						      cases[i].exe, cases[i].comm),
				 cases[i].ret);
	}
	config_free(&c);
	assert_null(c.services);

	config_defaults(&empty);
	assert_int_equal(config_match_service(&empty, "a", "/", "/a", "a"), -ENOENT);
	assert_int_equal(config_match_service(NULL, "a", "/", "/a", "a"), -ENOENT);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/test_config.XXXXXX", path[64], want[256], err[512], *big;
	struct config c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profiler.yaml", dir);

	assert_int_equal(config_load(path, &c, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: no such file", path);
	assert_string_equal(err, want);

	fx_write(path, EXAMPLE, strlen(EXAMPLE));
	assert_int_equal(config_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.node_name, "node-1");
	assert_int_equal(c.nservices, 2);
	config_free(&c);

	fx_write(path, "listen: ':1'\nlisten: ':2'\n", 26);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: duplicate key 'listen' (first on line 1)", path);
	assert_string_equal(err, want);

	big = repeat("#", CONFIG_MAX_BYTES + 1);
	fx_write(path, big, CONFIG_MAX_BYTES + 1);
	free(big);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), -EFBIG);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_string_equal(err, want);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(config_load(dir, &c, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", dir);
	assert_string_equal(err, want);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),	   cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),	   cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_err_buffer), cmocka_unit_test(test_match),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
