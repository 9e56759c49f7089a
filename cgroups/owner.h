/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner: what owns a process, from its cgroup (SPEC 4), as the answer and the flame graph show it:
 * "Service billing", "Container redis", "Unit nginx.service", "Signed-in sessions", "System",
 * "Other processes".
 *
 * Pure functions over cgroup paths and /proc/PID/cgroup contents (v1, v2 and hybrid); no I/O.
 * The process-level rules that need /proc (kernel threads, PID 1, shells) are in resolver.h.
 */
#ifndef SLIDEOPS_OWNER_H
#define SLIDEOPS_OWNER_H

#include <stddef.h>

#define OWNER_NAME_MAX 256
#define OWNER_POD_UID_MAX 40 /* 36 chars + NUL, dashed form */
#define OWNER_CONTAINER_ID_MAX 72

enum owner_group {
	OWNER_OTHER = 0, /* "Other processes": nothing placed it */
	OWNER_SERVICE,	 /* a Kubernetes pod container, or a config match rule */
	OWNER_CONTAINER, /* a docker/containerd/podman/CRI-O container that is not a Service */
	OWNER_UNIT,	 /* a systemd unit (service, scope outside sessions, ...) */
	OWNER_SESSIONS,	 /* login sessions, user@UID.service, shells */
	OWNER_SYSTEM,	 /* kernel threads, init.scope, PID 1 */
};

struct owner {
	enum owner_group group;
	char name[OWNER_NAME_MAX];	 /* "billing", "redis", "nginx.service"; "" if none */
	char pod_uid[OWNER_POD_UID_MAX]; /* Kubernetes pod uid, dashed; "" if not a pod */
	char container_id[OWNER_CONTAINER_ID_MAX]; /* full hex id when known; "" otherwise */
	char runtime[16]; /* "containerd", "cri-o", "docker", "podman", "lxc"; "" if unknown
				 * (kubelet's cgroupfs driver names a container by its bare id) */
};

/*
 * Classifies one cgroup path ("/kubepods.slice/.../cri-containerd-<id>.scope"). A pod container
 * is named by its short pod uid until a name is supplied (resolver seam); a plain container by
 * its 12-char short id. Returns 0; -ENOENT when the path places nothing ("/", unknown trees);
 * -EINVAL for a path that is not absolute (or NULL); -ENAMETOOLONG when a name would not fit
 * OWNER_NAME_MAX (the kernel caps a component at 255 bytes, so only for synthetic input).
 * @out is written only on success. Pure and thread-safe, as are all functions here.
 *
 * Rules, first match wins: a Kubernetes pod anywhere in the path (systemd driver slices with an
 * optional --cgroup-root prefix, cgroupfs "kubepods/[qos/]pod<uid>", containerd's
 * "<slice>:cri-containerd:<id>"); then a container anywhere (docker, podman incl. its conmon
 * "libpod-conmon-<id>", CRI-O incl. "crio-conmon-<id>", nerdctl, "/default/<id>" of containerd's
 * default namespace, lxc "lxc.payload.<name>", "lxc.monitor.<name>", "/lxc/<name>"); then
 * "/init.scope" (System), "/user.slice/..." (Signed-in sessions), and the first systemd unit
 * after any slices (Unit; its sub-cgroups included). A component that is neither a slice nor a
 * unit places nothing. Container ids must be 64 hex chars (but see "/default/<id>").
 */
int owner_from_cgroup_path(const char *path, struct owner *out);

/*
 * Parses one line of /proc/PID/cgroup ("4:cpu,cpuacct:/kubepods/pod1"). @ctrl NULL selects
 * the v2 line ("0::/..."), otherwise a v1 controller ("cpu", "name=systemd"). Copies the path to
 * @buf. Returns 0; -ENOENT if the line is well formed but not for @ctrl; -EINVAL for a
 * malformed line; -ENAMETOOLONG if @buf is too small.
 */
int cg_parse_line(const char *line, const char *ctrl, char *buf, size_t size);

/*
 * Classifies the whole /proc/PID/cgroup text: the v2 line first, then name=systemd, then the
 * other v1 controllers; the first path that places the process wins. Returns 0; -ENOENT when
 * no line places it; -EINVAL when no line parses at all.
 */
int owner_from_proc_cgroup(const char *content, struct owner *out);

/*
 * owner_from_proc_cgroup() on @len bytes that need not be NUL-terminated (a file as read): a line
 * holding a NUL byte is malformed and skipped. Same returns; @out is written only on success.
 */
int owner_from_proc_cgroup_n(const char *content, size_t len, struct owner *out);

/*
 * "Service billing", "Signed-in sessions", ... into @buf (truncated). Service, Container and Unit
 * show their name when they have one. @o NULL formats as Other processes; @size 0 leaves @buf
 * untouched. Returns @buf.
 */
const char *owner_format(const struct owner *o, char *buf, size_t size);

/*
 * "Service", "Container", "Unit", "Signed-in sessions", "System", "Other processes" (also for a
 * value outside the enum). A static string, never NULL.
 */
const char *owner_group_name(enum owner_group g);

#endif
