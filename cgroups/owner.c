// SPDX-License-Identifier: Apache-2.0
/*
 * owner: classification of cgroup paths (SPEC 4). Everything works on (pointer, length) spans of
 * the caller's text, so a path is never copied and an embedded NUL is just a byte that matches
 * nothing.
 *
 * Order of the rules for one path: a Kubernetes pod anywhere in the path (kind and k3s nest
 * kubepods under a prefix), then a container anywhere in the path (rootless docker/podman sit
 * under user.slice), then init.scope, user.slice and systemd units. A component that is neither a
 * slice nor a unit stops the walk: an unknown tree places nothing.
 */
#include "cgroups/owner.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/array.h"

#define CONTAINER_ID_LEN 64
#define SHORT_ID_LEN 12
/* a pod is shown by its short uid until the resolver renames it */
#define POD_NAME_LEN 8
#define UNIT_NAME_MAX 255 /* systemd UNIT_NAME_MAX less the NUL */

struct span {
	const char *p;
	size_t len;
};

/* A container found in one cgroup component. */
struct ctr_match {
	const char *runtime;
	struct span id; /* 64-hex id, or the lxc name */
	bool is_name;	/* id is a name (lxc), not a hex id */
};

static bool span_eq(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && !memcmp(s.p, lit, n);
}

static bool span_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len >= n && !memcmp(s.p, lit, n);
}

static bool span_ends(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len >= n && !memcmp(s.p + s.len - n, lit, n);
}

static struct span span_drop(struct span s, size_t head, size_t tail)
{
	return (struct span){ s.p + head, s.len - head - tail };
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool all_hex(struct span s)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (!is_hex(s.p[i]))
			return false;
	return true;
}

static bool is_container_id(struct span s)
{
	return s.len == CONTAINER_ID_LEN && all_hex(s);
}

/* Copies @s into @dst (size @size) or fails with -ENAMETOOLONG; @dst is always terminated. */
static int copy_span(char *dst, size_t size, struct span s)
{
	if (s.len >= size) {
		dst[0] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(dst, s.p, s.len);
	dst[s.len] = '\0';
	return 0;
}

/* Splits @path (absolute) into its non-empty components; returns the count, capped at @max. */
static size_t split_path(struct span path, struct span *comps, size_t max)
{
	size_t i = 0, n = 0, start;

	while (i < path.len && n < max) {
		while (i < path.len && path.p[i] == '/')
			i++;
		start = i;
		while (i < path.len && path.p[i] != '/')
			i++;
		if (i > start)
			comps[n++] = (struct span){ path.p + start, i - start };
	}
	return n;
}

/*
 * Kubernetes pod uid: 36 chars with '-' (cgroupfs) or '_' (systemd escaping) at 8, 13, 18, 23,
 * or the 32-hex config hash of a static pod. Written to @out dashed.
 */
static bool parse_pod_uid(struct span s, char out[OWNER_POD_UID_MAX])
{
	size_t i;

	if (s.len == 32 && all_hex(s)) {
		memcpy(out, s.p, s.len);
		out[s.len] = '\0';
		return true;
	}
	if (s.len != 36)
		return false;
	for (i = 0; i < s.len; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s.p[i] != '-' && s.p[i] != '_')
				return false;
			out[i] = '-';
		} else if (is_hex(s.p[i])) {
			out[i] = s.p[i];
		} else {
			return false;
		}
	}
	out[s.len] = '\0';
	return true;
}

/* "<id>" or "<id>.scope" after a runtime prefix. */
static bool match_prefixed_id(struct span c, const char *prefix, struct span *id)
{
	if (!span_starts(c, prefix))
		return false;
	c = span_drop(c, strlen(prefix), 0);
	if (span_ends(c, ".scope"))
		c = span_drop(c, 0, strlen(".scope"));
	if (!is_container_id(c))
		return false;
	*id = c;
	return true;
}

/*
 * One component naming a container: "cri-containerd-<id>.scope", "crio-<id>.scope", the
 * monitors "crio-conmon-<id>.scope" and "libpod-conmon-<id>.scope" (counted as their container,
 * see docs), "docker-<id>.scope", "libpod-<id>.scope", "nerdctl-<id>.scope"; ".scope" optional.
 * With @bare_ok a plain 64-hex component matches too (cgroupfs kubelet, /docker/<id>).
 */
static bool match_container(struct span c, bool bare_ok, struct ctr_match *m)
{
	static const struct {
		const char *prefix, *runtime;
	} prefixes[] = {
		{ "cri-containerd-", "containerd" },
		{ "crio-conmon-", "cri-o" },
		{ "crio-", "cri-o" },
		{ "docker-", "docker" },
		{ "libpod-conmon-", "podman" },
		{ "libpod-", "podman" },
		{ "nerdctl-", "containerd" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		if (match_prefixed_id(c, prefixes[i].prefix, &m->id)) {
			m->runtime = prefixes[i].runtime;
			m->is_name = false;
			return true;
		}
	}
	if (bare_ok && is_container_id(c)) {
		m->runtime = "";
		m->id = c;
		m->is_name = false;
		return true;
	}
	return false;
}

/* containerd's systemd cgroup form "<slice>:<prefix>:<id>" (k3s, containerd SystemdCgroup). */
static bool match_colon_container(struct span tail, struct ctr_match *m)
{
	static const struct {
		const char *prefix, *runtime;
	} prefixes[] = {
		{ "cri-containerd:", "containerd" },
		{ "crio:", "cri-o" },
		{ "docker:", "docker" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		if (!span_starts(tail, prefixes[i].prefix))
			continue;
		tail = span_drop(tail, strlen(prefixes[i].prefix), 0);
		if (!is_container_id(tail))
			return false;
		m->runtime = prefixes[i].runtime;
		m->id = tail;
		m->is_name = false;
		return true;
	}
	return false;
}

/*
 * systemd-driver pod slice: "[<root>-]kubepods[-burstable|-besteffort]-pod<uid>.slice", where
 * <root> is kubelet's --cgroup-root in systemd form (kind: "kubelet-kubepods-...").
 */
static bool match_pod_slice(struct span c, char uid[OWNER_POD_UID_MAX])
{
	struct span stem, qos;
	size_t i;

	if (!span_ends(c, ".slice"))
		return false;
	stem = span_drop(c, 0, strlen(".slice"));
	for (i = stem.len; i >= 4; i--) {
		if (!memcmp(stem.p + i - 4, "-pod", 4))
			break;
	}
	if (i < 4 || !parse_pod_uid(span_drop(stem, i, 0), uid))
		return false;
	qos = (struct span){ stem.p, i - 4 };
	if (span_ends(qos, "-burstable"))
		qos.len -= strlen("-burstable");
	else if (span_ends(qos, "-besteffort"))
		qos.len -= strlen("-besteffort");
	return span_eq(qos, "kubepods") || span_ends(qos, "-kubepods");
}

static void fill_container(struct owner *o, const struct ctr_match *m)
{
	snprintf(o->runtime, sizeof(o->runtime), "%s", m->runtime);
	if (m->is_name)
		return;
	copy_span(o->container_id, sizeof(o->container_id), m->id);
}

static int classify_pod(const struct span *comps, size_t n, struct owner *o)
{
	char uid[OWNER_POD_UID_MAX];
	struct ctr_match m;
	struct span slice;
	const char *colon;
	size_t i, next;

	for (i = 0; i < n; i++) {
		slice = comps[i];
		colon = memchr(slice.p, ':', slice.len);
		if (colon)
			slice.len = colon - slice.p;
		if (match_pod_slice(slice, uid)) {
			next = i + 1;
		} else if (span_eq(comps[i], "kubepods") && i + 1 < n) {
			/* cgroupfs driver: kubepods[/burstable|/besteffort]/pod<uid> */
			next = i + 1;
			if (span_eq(comps[next], "burstable") || span_eq(comps[next], "besteffort"))
				next++;
			if (next >= n || !span_starts(comps[next], "pod") ||
			    !parse_pod_uid(span_drop(comps[next], 3, 0), uid))
				continue;
			next++;
		} else {
			continue;
		}
		o->group = OWNER_SERVICE;
		memcpy(o->pod_uid, uid, sizeof(uid));
		snprintf(o->name, sizeof(o->name), "%.*s", POD_NAME_LEN, uid);
		if (colon && match_colon_container(span_drop(comps[i], slice.len + 1, 0), &m))
			fill_container(o, &m);
		else if (!colon && next < n && match_container(comps[next], true, &m))
			fill_container(o, &m);
		return 0;
	}
	return -ENOENT;
}

static bool lxc_name_ok(struct span s)
{
	return s.len && !span_eq(s, ".") && !span_eq(s, "..");
}

/* containerd's identifier grammar: [A-Za-z0-9]+([._-][A-Za-z0-9]+)*, at most 76 chars. */
static bool containerd_id_ok(struct span s)
{
	bool sep = true;
	size_t i;

	if (!s.len || s.len > 76)
		return false;
	for (i = 0; i < s.len; i++) {
		char c = s.p[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			sep = false;
		} else if ((c == '.' || c == '_' || c == '-') && !sep) {
			sep = true;
		} else {
			return false;
		}
	}
	return !sep;
}

/* "lxc.payload.<name>" and the like: the container's name after @prefix. */
static bool match_lxc(struct span c, const char *prefix, struct ctr_match *m)
{
	struct span name;

	if (!span_starts(c, prefix))
		return false;
	name = span_drop(c, strlen(prefix), 0);
	if (!lxc_name_ok(name))
		return false;
	*m = (struct ctr_match){ "lxc", name, true };
	return true;
}

static int classify_container(const struct span *comps, size_t n, struct owner *o)
{
	struct ctr_match m = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		if (match_container(comps[i], false, &m)) {
			/* matched */
		} else if (span_eq(comps[i], "docker") && i + 1 < n &&
			   match_container(comps[i + 1], true, &m)) {
			if (!*m.runtime)
				m.runtime = "docker";
		} else if (i == 0 && n >= 2 && span_eq(comps[0], "default") &&
			   containerd_id_ok(comps[1])) {
			/*
			 * containerd's default spec puts a container at /<namespace>/<id>;
			 * only the "default" namespace (ctr, nerdctl) is recognised, other
			 * namespace names are too common to trust.
			 */
			m = (struct ctr_match){ "containerd", comps[1], false };
			m.is_name = !is_container_id(comps[1]);
		} else if (match_lxc(comps[i], "lxc.payload.", &m) ||
			   match_lxc(comps[i], "lxc.monitor.", &m)) {
			/* LXC 4+ payload; the monitor is counted as its container, like conmon */
		} else if (i == 0 && n >= 2 && span_eq(comps[0], "lxc") && lxc_name_ok(comps[1])) {
			m = (struct ctr_match){ "lxc", comps[1], true };
		} else {
			continue;
		}
		o->group = OWNER_CONTAINER;
		fill_container(o, &m);
		if (m.is_name)
			return copy_span(o->name, sizeof(o->name), m.id);
		snprintf(o->name, sizeof(o->name), "%.*s", SHORT_ID_LEN, m.id.p);
		return 0;
	}
	return -ENOENT;
}

static bool unit_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == ':' || c == '_' || c == '.' || c == '-' || c == '\\' || c == '@';
}

/*
 * A unit name systemd could have made: "<prefix>[@<instance>].<type>" with systemd's character
 * set; "getty@.service" (a template) never holds processes.
 */
static bool is_unit(struct span c, const char *type)
{
	struct span stem;
	const char *at;
	size_t i;

	if (!span_ends(c, type) || c.len > UNIT_NAME_MAX)
		return false;
	stem = span_drop(c, 0, strlen(type));
	if (!stem.len || stem.p[0] == '@')
		return false;
	for (i = 0; i < stem.len; i++)
		if (!unit_char_ok(stem.p[i]))
			return false;
	at = memchr(stem.p, '@', stem.len);
	return !at || at != stem.p + stem.len - 1;
}

static bool is_process_unit(struct span c)
{
	return is_unit(c, ".service") || is_unit(c, ".scope") || is_unit(c, ".socket") ||
	       is_unit(c, ".mount") || is_unit(c, ".swap");
}

static int classify_systemd(const struct span *comps, size_t n, struct owner *o)
{
	size_t i;

	if (span_eq(comps[0], "init.scope")) {
		o->group = OWNER_SYSTEM;
		return 0;
	}
	if (span_eq(comps[0], "user.slice")) {
		o->group = OWNER_SESSIONS;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (is_unit(comps[i], ".slice"))
			continue;
		if (!is_process_unit(comps[i]))
			return -ENOENT;
		o->group = OWNER_UNIT;
		return copy_span(o->name, sizeof(o->name), comps[i]);
	}
	return -ENOENT;
}

/* Bound on components looked at: the kernel allows deeper trees, but no rule needs them. */
#define MAX_COMPONENTS 64

static int classify_span(struct span path, struct owner *out)
{
	struct span comps[MAX_COMPONENTS];
	struct owner o = { 0 };
	size_t n;
	int err;

	if (!path.len || path.p[0] != '/')
		return -EINVAL;
	n = split_path(path, comps, MAX_COMPONENTS);
	if (!n)
		return -ENOENT;
	err = classify_pod(comps, n, &o);
	if (err == -ENOENT)
		err = classify_container(comps, n, &o);
	if (err == -ENOENT)
		err = classify_systemd(comps, n, &o);
	if (err)
		return err;
	*out = o;
	return 0;
}

int owner_from_cgroup_path(const char *path, struct owner *out)
{
	if (!path || !out)
		return -EINVAL;
	return classify_span((struct span){ path, strlen(path) }, out);
}

/* The three fields of one /proc/PID/cgroup line. */
struct cg_line {
	struct span ctrls; /* "" for the v2 line */
	struct span path;
};

/*
 * "<hierarchy id>:<controllers>:<path>" (the path may hold ':', e.g. containerd's systemd form).
 * One trailing '\n' is allowed. The v2 line has id 0 and no controllers; a v1 line has both.
 */
static int parse_line(struct span line, struct cg_line *out)
{
	const char *c1, *c2;
	struct span id, ctrls, path, tok;
	size_t i, start;

	if (line.len && line.p[line.len - 1] == '\n')
		line.len--;
	c1 = memchr(line.p, ':', line.len);
	if (!c1)
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', line.p + line.len - (c1 + 1));
	if (!c2)
		return -EINVAL;
	id = (struct span){ line.p, c1 - line.p };
	ctrls = (struct span){ c1 + 1, c2 - (c1 + 1) };
	path = (struct span){ c2 + 1, line.p + line.len - (c2 + 1) };
	if (!id.len || id.len > 10)
		return -EINVAL;
	for (i = 0; i < id.len; i++)
		if (id.p[i] < '0' || id.p[i] > '9')
			return -EINVAL;
	if (span_eq(id, "0") != !ctrls.len)
		return -EINVAL;
	for (i = 0, start = 0; i <= ctrls.len && ctrls.len; i++) {
		if (i < ctrls.len && ctrls.p[i] != ',') {
			if (ctrls.p[i] == '/' || ctrls.p[i] == '\n' || ctrls.p[i] == '\0' ||
			    ctrls.p[i] == ' ')
				return -EINVAL;
			continue;
		}
		tok = (struct span){ ctrls.p + start, i - start };
		if (!tok.len)
			return -EINVAL;
		start = i + 1;
	}
	if (!path.len || path.p[0] != '/')
		return -EINVAL;
	if (memchr(path.p, '\n', path.len) || memchr(path.p, '\0', path.len))
		return -EINVAL;
	out->ctrls = ctrls;
	out->path = path;
	return 0;
}

static bool has_ctrl(struct span ctrls, const char *ctrl)
{
	const char *comma;
	struct span tok;

	while (ctrls.len) {
		comma = memchr(ctrls.p, ',', ctrls.len);
		tok = (struct span){ ctrls.p, comma ? (size_t)(comma - ctrls.p) : ctrls.len };
		if (span_eq(tok, ctrl))
			return true;
		ctrls = comma ? span_drop(ctrls, tok.len + 1, 0) : (struct span){ ctrls.p, 0 };
	}
	return false;
}

int cg_parse_line(const char *line, const char *ctrl, char *buf, size_t size)
{
	struct cg_line l;
	int err;

	if (!line || !buf || !size)
		return -EINVAL;
	err = parse_line((struct span){ line, strlen(line) }, &l);
	if (err)
		return err;
	if (ctrl ? !has_ctrl(l.ctrls, ctrl) : l.ctrls.len != 0)
		return -ENOENT;
	if (l.path.len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, l.path.p, l.path.len);
	buf[l.path.len] = '\0';
	return 0;
}

enum pass { PASS_V2, PASS_SYSTEMD, PASS_V1, NR_PASSES };

int owner_from_proc_cgroup_n(const char *content, size_t len, struct owner *out)
{
	struct span text = { content, len }, line;
	bool parsed = false, want;
	struct cg_line l;
	const char *nl;
	int pass;

	if (!content || !out)
		return -EINVAL;
	for (pass = 0; pass < NR_PASSES; pass++) {
		text = (struct span){ content, len };
		while (text.len) {
			nl = memchr(text.p, '\n', text.len);
			line = (struct span){ text.p, nl ? (size_t)(nl - text.p) : text.len };
			text = span_drop(text, nl ? line.len + 1 : line.len, 0);
			if (parse_line(line, &l))
				continue;
			parsed = true;
			if (pass == PASS_V2)
				want = !l.ctrls.len;
			else if (pass == PASS_SYSTEMD)
				want = has_ctrl(l.ctrls, "name=systemd");
			else
				want = l.ctrls.len && !has_ctrl(l.ctrls, "name=systemd");
			if (want && !classify_span(l.path, out))
				return 0;
		}
		if (!parsed)
			return -EINVAL;
	}
	return -ENOENT;
}

int owner_from_proc_cgroup(const char *content, struct owner *out)
{
	if (!content)
		return -EINVAL;
	return owner_from_proc_cgroup_n(content, strlen(content), out);
}

const char *owner_group_name(enum owner_group g)
{
	switch (g) {
	case OWNER_SERVICE:
		return "Service";
	case OWNER_CONTAINER:
		return "Container";
	case OWNER_UNIT:
		return "Unit";
	case OWNER_SESSIONS:
		return "Signed-in sessions";
	case OWNER_SYSTEM:
		return "System";
	case OWNER_OTHER:
		break;
	}
	return "Other processes";
}

const char *owner_format(const struct owner *o, char *buf, size_t size)
{
	const char *group;
	bool named;

	if (!buf || !size)
		return buf;
	group = owner_group_name(o ? o->group : OWNER_OTHER);
	named = o &&
		(o->group == OWNER_SERVICE || o->group == OWNER_CONTAINER ||
		 o->group == OWNER_UNIT) &&
		o->name[0];
	if (named)
		snprintf(buf, size, "%s %.*s", group, OWNER_NAME_MAX, o->name);
	else
		snprintf(buf, size, "%s", group);
	return buf;
}
