// SPDX-License-Identifier: Apache-2.0
/*
 * Owner classification. The /proc/PID/cgroup table follows the shapes real hosts produce
 * (kubelet with the systemd and cgroupfs drivers, containerd/CRI-O/docker, kind, k3s, podman,
 * lxc, systemd units and sessions; v1, v2 and hybrid files), with ids made up for these tests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "cgroups/owner.h"

#define ID0 "06ea61d78968c974eae24bb66f6e23c1ba6a7f6a63511cd20d553d42a3e791cd"
#define ID1 "92007fb2bb51e98289825297306261aca8139d7cbc503855f353d039194a155d"
#define ID2 "63e6535e00cc3b33eda3bf18338a52f19a72c54cbc9129101d7a198dd31f29f9"
#define ID3 "e765971b30cb003b0f4f52bf47f9878d62be2701d7dfe0f723b8834cb7d48656"
#define ID4 "e60f2f31a65838e13bd91ab849342a6e552d396a955ac823e0437efe733a9567"
#define ID5 "a87d31e28ff5b0223a002440b563c3f643b989f13f3278d23b00417e551ac7cd"
#define ID6 "fb0b45d0d4416b2712f810b0c11f863b67041b9b8c973cd0b080cc820141fd8a"
#define ID7 "b978fb776f5d7d6f154de1922cb5813c0bb969e585a7289c8f0b00c9e57b2303"
#define ID8 "e1eaf71dafaf268856a24eb67d0113c4af2fc9e4db7118df0d3120bd3d271615"
#define ID9 "900e97b2fa1e47b9c5f9f6ffd9ba4627bdceafebe0637ceb1986d67241b24326"
#define ID10 "2ae5046290162ffca7a87de636ecdaac17390b621d49644ecc672d020f431f8c"
#define ID11 "c3435f01e38d30bd2a42e6d282c1730355b218bc6a83561556f81c7c8f7706d9"
#define ID12 "8e2ddca6b7a08cff6eaa70bf3354010b181b4ba804fbcd0c4bf99be596c8e151"
#define ID13 "ecb2a892a86f15d1861f368df47cd0fddbed19b5de754800113b93e129a849a0"
#define ID63 "ecb2a892a86f15d1861f368df47cd0fddbed19b5de754800113b93e129a849a"

/* pod uids, dashed (as the API shows them) and escaped (as systemd slices spell them) */
#define U0 "7e138f5a-f1f3-435a-8f0b-5e9fe7675697"
#define U0_ "7e138f5a_f1f3_435a_8f0b_5e9fe7675697"
#define U1 "5c81228f-e7cd-4502-a454-2e9b99de1be8"
#define U1_ "5c81228f_e7cd_4502_a454_2e9b99de1be8"
#define U2 "73bb6e92-e373-4b73-989f-8551af44c935"
#define U2_ "73bb6e92_e373_4b73_989f_8551af44c935"
#define U3 "9df06633-b73c-43f4-b35f-3b5ea73b907a"
#define U3_ "9df06633_b73c_43f4_b35f_3b5ea73b907a"
#define U4 "f662e00c-1fde-45fc-8200-f0b490fd7b99"
#define U4_ "f662e00c_1fde_45fc_8200_f0b490fd7b99"
#define U5 "a98139fe-4cc7-453b-8c06-903580e37b66"
#define U6 "d72e2684-c010-47cf-9553-2d836c64eb21"
#define U6_ "d72e2684_c010_47cf_9553_2d836c64eb21"
#define U7 "af1f60ef-91a9-4dde-a8f8-b7a47cde9b13"
#define USTATIC "31d4ccbd729f110d9f8ad468600f3101"

/* A cgroup v1 host (Debian 10, CentOS 7): every controller on its own line, newest first. */
#define V1(p)                                                                                    \
	"12:pids:" p "\n11:hugetlb:" p "\n10:perf_event:" p "\n9:memory:" p "\n8:freezer:" p   \
	"\n7:net_cls,net_prio:" p "\n6:cpuset:" p "\n5:devices:" p "\n4:blkio:" p              \
	"\n3:cpu,cpuacct:" p "\n2:rdma:/\n1:name=systemd:" p "\n"
/* A hybrid host (Ubuntu 20.04, this machine): v1 controllers plus the v2 line last. */
#define HYBRID(p) V1(p) "0::" p "\n"
#define V2(p) "0::" p "\n"

/* a literal with its length, for rows holding NUL bytes */
#define LIT(s) s, sizeof(s) - 1

#define KUBE_BURSTABLE "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"

struct proc_case {
	const char *content;
	size_t len;		/* 0: strlen(content) */
	int ret;
	enum owner_group group;
	const char *name, *pod_uid, *container_id, *runtime;
};

static const struct proc_case proc_cases[] = {
	/* Kubernetes, systemd driver (kubeadm default, cgroup v2) */
	{ V2(KUBE_BURSTABLE U0_ ".slice/cri-containerd-" ID0 ".scope"), 0, 0, OWNER_SERVICE,
	  "7e138f5a", U0, ID0, "containerd" },
	{ V2("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" U1_
	     ".slice/crio-" ID1 ".scope"), 0, 0, OWNER_SERVICE, "5c81228f", U1, ID1, "cri-o" },
	/* guaranteed pods hang directly off kubepods.slice */
	{ V2("/kubepods.slice/kubepods-pod" U2_ ".slice/cri-containerd-" ID2 ".scope"), 0, 0,
	  OWNER_SERVICE, "73bb6e92", U2, ID2, "containerd" },
	{ V2("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" U3_
	     ".slice/docker-" ID3 ".scope"), 0, 0, OWNER_SERVICE, "9df06633", U3, ID3, "docker" },
	/* a pod-level cgroup without a container is still the pod */
	{ V2(KUBE_BURSTABLE U0_ ".slice"), 0, 0, OWNER_SERVICE, "7e138f5a", U0, "", "" },
	/* CRI-O's conmon for a pod container */
	{ V2(KUBE_BURSTABLE U1_ ".slice/crio-conmon-" ID4 ".scope"), 0, 0, OWNER_SERVICE,
	  "5c81228f", U1, ID4, "cri-o" },
	/* CRI-O (OpenShift) puts the payload in a "container" child of the scope */
	{ V2(KUBE_BURSTABLE U1_ ".slice/crio-" ID5 ".scope/container"), 0, 0, OWNER_SERVICE,
	  "5c81228f", U1, ID5, "cri-o" },
	/* containerd's systemd cgroup without the .scope suffix */
	{ V2(KUBE_BURSTABLE U4_ ".slice/cri-containerd-" ID6), 0, 0, OWNER_SERVICE, "f662e00c", U4,
	  ID6, "containerd" },
	/* Kubernetes, cgroupfs driver on a v1 host (dockershim or containerd: runtime unknown) */
	{ V1("/kubepods/burstable/pod" U5 "/" ID7), 0, 0, OWNER_SERVICE, "a98139fe", U5, ID7, "" },
	{ V1("/kubepods/pod" U6 "/" ID8), 0, 0, OWNER_SERVICE, "d72e2684", U6, ID8, "" },
	/* kube-proxy's own child cgroup below its container */
	{ V1("/kubepods/besteffort/pod" U7 "/" ID9 "/kube-proxy"), 0, 0, OWNER_SERVICE, "af1f60ef",
	  U7, ID9, "" },
	{ V1("/kubepods/pod" U7 "/crio-" ID10), 0, 0, OWNER_SERVICE, "af1f60ef", U7, ID10,
	  "cri-o" },
	/* static pods carry the 32-hex config hash as their uid */
	{ V1("/kubepods/burstable/pod" USTATIC "/" ID11), 0, 0, OWNER_SERVICE, "31d4ccbd", USTATIC,
	  ID11, "" },
	/* a hybrid host with the systemd driver: the v2 line already names the pod */
	{ HYBRID(KUBE_BURSTABLE U2_ ".slice/cri-containerd-" ID12 ".scope"), 0, 0, OWNER_SERVICE,
	  "73bb6e92", U2, ID12, "containerd" },
	/* hybrid with an empty v2 line (v2 holds no controllers): the v1 lines decide */
	{ V1("/kubepods/burstable/pod" U5 "/" ID13) "0::/\n", 0, 0, OWNER_SERVICE, "a98139fe", U5,
	  ID13, "" },
	/* kind: the node is a docker container, kubelet's tree sits below it */
	{ V1("/docker/" ID0 "/kubepods/burstable/pod" U6 "/" ID1), 0, 0, OWNER_SERVICE, "d72e2684",
	  U6, ID1, "" },
	/* kind with the systemd driver: --cgroup-root=/kubelet */
	{ V2("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	     "kubelet-kubepods-besteffort-pod" U3_ ".slice/cri-containerd-" ID2 ".scope"),
	  0, 0, OWNER_SERVICE, "9df06633", U3, ID2, "containerd" },
	/* k3s/containerd SystemdCgroup under containerd.service: "slice:prefix:id" */
	{ V2("/system.slice/containerd.service/kubepods-burstable-pod" U4_
	     ".slice:cri-containerd:" ID3), 0, 0, OWNER_SERVICE, "f662e00c", U4, ID3, "containerd" },
	/* k3s with the cgroupfs driver, v1 host */
	{ V1("/kubepods/besteffort/pod" U0 "/" ID4), 0, 0, OWNER_SERVICE, "7e138f5a", U0, ID4, "" },
	/* the pause (sandbox) container is that pod too */
	{ V2("/kubepods.slice/kubepods-pod" U6_ ".slice/cri-containerd-" ID5 ".scope"), 0, 0,
	  OWNER_SERVICE, "d72e2684", U6, ID5, "containerd" },

	/* Containers that are not pods */
	{ "10:net_prio:/docker/" ID6 "\n9:perf_event:/docker/" ID6 "\n8:blkio:/docker/" ID6
	  "\n7:net_cls:/docker/" ID6 "\n6:freezer:/docker/" ID6 "\n5:devices:/docker/" ID6
	  "\n4:memory:/docker/" ID6 "\n3:cpuacct:/docker/" ID6 "\n2:cpu:/docker/" ID6
	  "\n1:name=systemd:/docker/" ID6 "\n", 0, 0, OWNER_CONTAINER, "fb0b45d0d441", "", ID6,
	  "docker" },
	{ V1("/system.slice/docker-" ID7 ".scope"), 0, 0, OWNER_CONTAINER, "b978fb776f5d", "", ID7,
	  "docker" },
	{ V2("/system.slice/docker-" ID8 ".scope"), 0, 0, OWNER_CONTAINER, "e1eaf71dafaf", "", ID8,
	  "docker" },
	/* systemd inside a docker container: still the container */
	{ "1:name=systemd:/docker/" ID9 "/init.scope\n0::/\n", 0, 0, OWNER_CONTAINER,
	  "900e97b2fa1e", "", ID9, "docker" },
	{ V2("/machine.slice/libpod-" ID10 ".scope"), 0, 0, OWNER_CONTAINER, "2ae504629016", "",
	  ID10, "podman" },
	/* podman's conmon for that container counts as the container */
	{ V2("/machine.slice/libpod-conmon-" ID10 ".scope"), 0, 0, OWNER_CONTAINER, "2ae504629016",
	  "", ID10, "podman" },
	{ V1("/libpod_parent/libpod-" ID11), 0, 0, OWNER_CONTAINER, "c3435f01e38d", "", ID11,
	  "podman" },
	/* rootless podman and docker live in the user's manager, but are containers */
	{ V2("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID12 ".scope"), 0,
	  0, OWNER_CONTAINER, "8e2ddca6b7a0", "", ID12, "podman" },
	{ V2("/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" ID13 ".scope"), 0, 0,
	  OWNER_CONTAINER, "ecb2a892a86f", "", ID13, "docker" },
	/* ctr run: containerd's default spec puts a container at /<namespace>/<id> */
	{ HYBRID("/default/redis"), 0, 0, OWNER_CONTAINER, "redis", "", "", "containerd" },
	{ V2("/default/" ID0), 0, 0, OWNER_CONTAINER, "06ea61d78968", "", ID0, "containerd" },
	{ V2("/system.slice/nerdctl-" ID1 ".scope"), 0, 0, OWNER_CONTAINER, "92007fb2bb51", "", ID1,
	  "containerd" },
	{ V2("/system.slice/crio-" ID2 ".scope"), 0, 0, OWNER_CONTAINER, "63e6535e00cc", "", ID2,
	  "cri-o" },
	{ V2("/lxc.payload.web01"), 0, 0, OWNER_CONTAINER, "web01", "", "", "lxc" },
	{ V2("/lxc.monitor.web01"), 0, 0, OWNER_CONTAINER, "web01", "", "", "lxc" },
	{ V1("/lxc/mysql-primary-db"), 0, 0, OWNER_CONTAINER, "mysql-primary-db", "", "", "lxc" },

	/* systemd units */
	{ V2("/system.slice/nginx.service"), 0, 0, OWNER_UNIT, "nginx.service", "", "", "" },
	/* v1 host where only some controllers follow systemd's tree */
	{ "11:perf_event:/\n10:devices:/system.slice/docker.service\n9:freezer:/\n8:cpuset:/\n"
	  "7:cpu,cpuacct:/system.slice/docker.service\n6:blkio:/system.slice/docker.service\n"
	  "5:memory:/system.slice/docker.service\n4:hugetlb:/\n3:net_cls,net_prio:/\n"
	  "2:pids:/system.slice/docker.service\n1:name=systemd:/system.slice/docker.service\n",
	  0, 0, OWNER_UNIT, "docker.service", "", "", "" },
	{ V2("/system.slice/system-getty.slice/getty@tty1.service"), 0, 0, OWNER_UNIT,
	  "getty@tty1.service", "", "", "" },
	{ HYBRID("/system.slice/system-serial\\x2dgetty.slice/serial-getty@ttyS0.service"), 0, 0,
	  OWNER_UNIT, "serial-getty@ttyS0.service", "", "", "" },
	{ V2("/system.slice/run-r1234.scope"), 0, 0, OWNER_UNIT, "run-r1234.scope", "", "", "" },
	/* a unit's own sub-cgroups belong to the unit */
	{ V2("/system.slice/containerd.service/some/child"), 0, 0, OWNER_UNIT, "containerd.service",
	  "", "", "" },
	{ V1("/runtime.slice/kubelet.service"), 0, 0, OWNER_UNIT, "kubelet.service", "", "", "" },
	{ V2("/system.slice/system-postgresql.slice/postgresql@15-main.service"), 0, 0, OWNER_UNIT,
	  "postgresql@15-main.service", "", "", "" },
	{ V2("/machine.slice/machine-qemu\\x2d1\\x2dvm.scope"), 0, 0, OWNER_UNIT,
	  "machine-qemu\\x2d1\\x2dvm.scope", "", "", "" },
	{ V2("/system.slice/ssh.socket"), 0, 0, OWNER_UNIT, "ssh.socket", "", "", "" },

	/* signed-in sessions */
	{ V2("/user.slice/user-1000.slice/session-3.scope"), 0, 0, OWNER_SESSIONS, "", "", "", "" },
	{ V2("/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4242.scope"),
	  0, 0, OWNER_SESSIONS, "", "", "", "" },
	{ HYBRID("/user.slice/user-0.slice/session-c2.scope"), 0, 0, OWNER_SESSIONS, "", "", "",
	  "" },
	{ V2("/user.slice/user-1000.slice/user@1000.service/init.scope"), 0, 0, OWNER_SESSIONS, "",
	  "", "", "" },

	/* System */
	{ V2("/init.scope"), 0, 0, OWNER_SYSTEM, "", "", "", "" },
	{ HYBRID("/init.scope"), 0, 0, OWNER_SYSTEM, "", "", "", "" },

	/* the first line that places wins: v2, then name=systemd, then the other controllers */
	{ "4:memory:/process_api/6a5efd1e78082a2e7d1a6ec110274080\n"
	  "1:name=systemd:/system.slice/cron.service\n0::/\n", 0, 0, OWNER_UNIT, "cron.service", "",
	  "", "" },
	{ "5:memory:/kubepods/pod" U5 "/" ID3 "\n1:name=systemd:/\n0::/odd/tree\n", 0, 0,
	  OWNER_SERVICE, "a98139fe", U5, ID3, "" },
	{ "1:name=systemd:/system.slice/b.service\n0::/system.slice/a.service\n", 0, 0, OWNER_UNIT,
	  "a.service", "", "", "" },
	/* garbage lines are skipped, good ones still count */
	{ "garbage\n0::/init.scope\n", 0, 0, OWNER_SYSTEM, "", "", "", "" },
	/* no trailing newline */
	{ "0::/system.slice/nginx.service", 0, 0, OWNER_UNIT, "nginx.service", "", "", "" },
	/* a NUL inside a line (by length) makes that line malformed; the next one still counts */
	{ LIT("0::/system.slice/a\0.service\n1:name=systemd:/init.scope\n"), 0, OWNER_SYSTEM, "",
	  "", "", "" },

	/* nothing placed */
	{ "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n"
	  "4:memory:/process_api/e5ff3e4611b24a0c8c2ba9a2b6e6c8c1\n3:cpuset:/\n2:cpuacct:/\n"
	  "1:cpu:/\n0::/\n", 0, -ENOENT },
	{ V2("/"), 0, -ENOENT },
	{ HYBRID("/"), 0, -ENOENT },
	{ V2("/system.slice"), 0, -ENOENT },
	{ V2("/podruntime/kubelet"), 0, -ENOENT },
	{ V2("/kubepods/burstable"), 0, -ENOENT },
	{ V2("/kubepods.slice/kubepods-burstable.slice"), 0, -ENOENT },
	{ V2("/docker/buildkit"), 0, -ENOENT },
	{ V2("/system.slice/getty@.service"), 0, -ENOENT },
	{ V2("/system.slice/docker-" ID63 "/x"), 0, -ENOENT },
	{ V2("/kubepods/pod" U0 "x/" ID0), 0, -ENOENT },
	{ V2("/other/default/redis"), 0, -ENOENT },
	{ V2("/default/-bad-"), 0, -ENOENT },
	{ V2("/lxc/.."), 0, -ENOENT },
	{ "0::/\r\n", 0, -ENOENT },
	{ LIT("0::/a\0b\n0::/\n"), -ENOENT },

	/* malformed files */
	{ "", 0, -EINVAL },
	{ "\n\n\n", 0, -EINVAL },
	{ "garbage", 0, -EINVAL },
	{ "0:/init.scope\n", 0, -EINVAL },
	{ "x::/init.scope\n", 0, -EINVAL },
	{ "0::init.scope\n", 0, -EINVAL },
	{ "1::/init.scope\n", 0, -EINVAL },
	{ "0:cpu:/init.scope\n", 0, -EINVAL },
	{ "4:cpu,,memory:/init.scope\n", 0, -EINVAL },
	{ LIT("0::/init.scope\0"), -EINVAL },
};

static void test_proc_cgroup(void **state)
{
	struct owner o;
	size_t i, len;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(proc_cases); i++) {
		const struct proc_case *c = &proc_cases[i];

		print_message("case %zu\n", i);
		len = c->len ? c->len : strlen(c->content);
		memset(&o, 0x5a, sizeof(o));
		ret = owner_from_proc_cgroup_n(c->content, len, &o);
		assert_int_equal(ret, c->ret);
		if (ret) {
			/* out-params are written only on success */
			assert_int_equal(((unsigned char *)&o)[0], 0x5a);
			continue;
		}
		assert_int_equal(o.group, c->group);
		assert_string_equal(o.name, c->name);
		assert_string_equal(o.pod_uid, c->pod_uid);
		assert_string_equal(o.container_id, c->container_id);
		assert_string_equal(o.runtime, c->runtime);
		if (!c->len) {
			struct owner o2;

			assert_int_equal(owner_from_proc_cgroup(c->content, &o2), 0);
			assert_memory_equal(&o, &o2, sizeof(o));
		}
	}
}

static void test_proc_cgroup_limits(void **state)
{
	struct owner o;
	char *buf;
	size_t i, n;

	(void)state;
	/* a unit name longer than systemd allows is not a unit */
	buf = malloc(8192);
	assert_non_null(buf);
	n = (size_t)snprintf(buf, 8192, "0::/system.slice/");
	memset(buf + n, 'a', 300);
	strcpy(buf + n + 300, ".service\n");
	assert_int_equal(owner_from_proc_cgroup(buf, &o), -ENOENT);

	/* a deep tree: only the first components are looked at, nothing overflows */
	n = (size_t)snprintf(buf, 8192, "0::");
	for (i = 0; i < 1000; i++)
		n += (size_t)snprintf(buf + n, 8192 - n, "/a");
	snprintf(buf + n, 8192 - n, "/x.service\n");
	assert_int_equal(owner_from_proc_cgroup(buf, &o), -ENOENT);

	n = (size_t)snprintf(buf, 8192, "0::/system.slice/deep.service");
	for (i = 0; i < 1000; i++)
		n += (size_t)snprintf(buf + n, 8192 - n, "/a");
	assert_int_equal(owner_from_proc_cgroup(buf, &o), 0);
	assert_string_equal(o.name, "deep.service");
	free(buf);

	assert_int_equal(owner_from_proc_cgroup(NULL, &o), -EINVAL);
	assert_int_equal(owner_from_proc_cgroup("0::/init.scope", NULL), -EINVAL);
}

static void test_cgroup_path(void **state)
{
	static const struct {
		const char *path;
		int ret;
		enum owner_group group;
		const char *name;
	} cases[] = {
		{ "/system.slice//nginx.service/", 0, OWNER_UNIT, "nginx.service" },
		{ "/init.scope", 0, OWNER_SYSTEM, "" },
		{ "/user.slice", 0, OWNER_SESSIONS, "" },
		{ KUBE_BURSTABLE U0_ ".slice/cri-containerd-" ID0 ".scope", 0, OWNER_SERVICE,
		  "7e138f5a" },
		{ "/docker/" ID1, 0, OWNER_CONTAINER, "92007fb2bb51" },
		{ "/", -ENOENT },
		{ "//", -ENOENT },
		{ "/process_api/e5ff3e4611b24a0c8c2ba9a2b6e6c8c1", -ENOENT },
		{ "/system.slice/init.scope", 0, OWNER_UNIT, "init.scope" },
		{ "", -EINVAL },
		{ "system.slice/nginx.service", -EINVAL },
		{ " /init.scope", -EINVAL },
		{ NULL, -EINVAL },
	};
	struct owner o;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = owner_from_cgroup_path(cases[i].path, &o);
		assert_int_equal(ret, cases[i].ret);
		if (ret)
			continue;
		assert_int_equal(o.group, cases[i].group);
		assert_string_equal(o.name, cases[i].name);
	}
}

static void test_parse_line(void **state)
{
	static const struct {
		const char *line, *ctrl;
		size_t size;	/* 0: the whole buffer */
		int ret;
		const char *path;
	} cases[] = {
		{ "0::/kubepods.slice/pod1.slice\n", NULL, 0, 0, "/kubepods.slice/pod1.slice" },
		{ "4:cpu,cpuacct:/kubepods/pod1\n", "cpu", 0, 0, "/kubepods/pod1" },
		{ "4:cpu,cpuacct:/kubepods/pod1", "cpuacct", 0, 0, "/kubepods/pod1" },
		{ "1:name=systemd:/init.scope\n", "name=systemd", 0, 0, "/init.scope" },
		{ "0::/a.slice:cri-containerd:b\n", NULL, 0, 0, "/a.slice:cri-containerd:b" },
		{ "0::/\n", NULL, 0, 0, "/" },
		{ "0::/\n", NULL, 2, 0, "/" },
		{ "4:cpu,cpuacct:/x\n", "cpuset", 0, -ENOENT, NULL },
		{ "4:cpuacct:/x\n", "cpu", 0, -ENOENT, NULL },
		{ "4:cpu:/x\n", "cpu,cpuacct", 0, -ENOENT, NULL },
		{ "0::/x\n", "cpu", 0, -ENOENT, NULL },
		{ "4:cpu:/x\n", NULL, 0, -ENOENT, NULL },
		{ "0::/init.scope\n", NULL, 5, -ENAMETOOLONG, NULL },
		{ "0::/init.scope\n", NULL, 11, -ENAMETOOLONG, NULL },
		{ "garbage", NULL, 0, -EINVAL, NULL },
		{ "", NULL, 0, -EINVAL, NULL },
		{ "\n", NULL, 0, -EINVAL, NULL },
		{ "0:/x\n", NULL, 0, -EINVAL, NULL },
		{ "::/x\n", NULL, 0, -EINVAL, NULL },
		{ "a::/x\n", NULL, 0, -EINVAL, NULL },
		{ "-1::/x\n", NULL, 0, -EINVAL, NULL },
		{ "12345678901:cpu:/x\n", "cpu", 0, -EINVAL, NULL },
		{ "0::x\n", NULL, 0, -EINVAL, NULL },
		{ "0::\n", NULL, 0, -EINVAL, NULL },
		{ "1::/x\n", NULL, 0, -EINVAL, NULL },
		{ "0:cpu:/x\n", "cpu", 0, -EINVAL, NULL },
		{ "4:cpu,,memory:/x\n", "cpu", 0, -EINVAL, NULL },
		{ "4:,cpu:/x\n", "cpu", 0, -EINVAL, NULL },
		{ "4:cpu,:/x\n", "cpu", 0, -EINVAL, NULL },
		{ "4:c/pu:/x\n", "c/pu", 0, -EINVAL, NULL },
		{ "0::/a\nb\n", NULL, 0, -EINVAL, NULL },
		{ "0::/a\n\n", NULL, 0, -EINVAL, NULL },
		{ NULL, NULL, 0, -EINVAL, NULL },
	};
	char buf[4096];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		ret = cg_parse_line(cases[i].line, cases[i].ctrl, buf,
				    cases[i].size ? cases[i].size : sizeof(buf));
		assert_int_equal(ret, cases[i].ret);
		if (!ret)
			assert_string_equal(buf, cases[i].path);
	}
	assert_int_equal(cg_parse_line("0::/\n", NULL, buf, 0), -EINVAL);
	assert_int_equal(cg_parse_line("0::/\n", NULL, NULL, 8), -EINVAL);
}

static void test_format(void **state)
{
	static const struct {
		struct owner o;
		size_t size;	/* 0: the whole buffer */
		const char *want;
	} cases[] = {
		{ { OWNER_SERVICE, "billing" }, 0, "Service billing" },
		{ { OWNER_CONTAINER, "redis" }, 0, "Container redis" },
		{ { OWNER_UNIT, "nginx.service" }, 0, "Unit nginx.service" },
		{ { OWNER_SESSIONS }, 0, "Signed-in sessions" },
		{ { OWNER_SYSTEM }, 0, "System" },
		{ { OWNER_OTHER }, 0, "Other processes" },
		{ { OWNER_SERVICE, "" }, 0, "Service" },
		{ { OWNER_SESSIONS, "ignored" }, 0, "Signed-in sessions" },
		{ { OWNER_UNIT, "nginx.service" }, 8, "Unit ng" },
		{ { (enum owner_group)42, "x" }, 0, "Other processes" },
	};
	char buf[OWNER_NAME_MAX + 32];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_ptr_equal(owner_format(&cases[i].o, buf, cases[i].size ? cases[i].size
									     : sizeof(buf)),
				 buf);
		assert_string_equal(buf, cases[i].want);
	}
	buf[0] = 'q';
	assert_ptr_equal(owner_format(&cases[0].o, buf, 0), buf);
	assert_int_equal(buf[0], 'q');
	assert_string_equal(owner_format(NULL, buf, sizeof(buf)), "Other processes");
	assert_string_equal(owner_group_name(OWNER_SESSIONS), "Signed-in sessions");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_proc_cgroup_limits),
		cmocka_unit_test(test_cgroup_path),
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
