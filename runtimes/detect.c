// SPDX-License-Identifier: Apache-2.0
#include "runtimes/detect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "runtimes/go/buildinfo.h"
#include "runtimes/probe.h"
#include "symbols/elf_file.h"

#define RELEASE_MAX (64u << 10)
/* A `release` file that trickles (a FUSE server) is given up after this long. */
#define RELEASE_READ_MS 500
#define NUM_DIGITS_MAX 4

static const char *const kind_names[RUNTIME_KIND_COUNT] = {
	[RUNTIME_NATIVE] = "native", [RUNTIME_PYTHON] = "python", [RUNTIME_JVM] = "java",
	[RUNTIME_GO] = "go",	     [RUNTIME_NODE] = "node",	  [RUNTIME_RUBY] = "ruby",
};

const char *runtime_kind_name(enum runtime_kind k)
{
	if ((unsigned)k >= RUNTIME_KIND_COUNT)
		return "native";
	return kind_names[k];
}

void runtime_info_format(struct runtime_info *out)
{
	static const char *const fmt[RUNTIME_KIND_COUNT][2] = {
		[RUNTIME_NATIVE] = { "native", "native" },
		[RUNTIME_PYTHON] = { "CPython", "CPython %s" },
		[RUNTIME_JVM] = { "JVM", "JVM (Java %s)" },
		[RUNTIME_GO] = { "Go", "Go %s" },
		[RUNTIME_NODE] = { "Node.js", "Node.js %s" },
		[RUNTIME_RUBY] = { "Ruby", "Ruby %s" },
	};
	unsigned k = (unsigned)out->kind < RUNTIME_KIND_COUNT ? out->kind : RUNTIME_NATIVE;

	out->version[sizeof(out->version) - 1] = '\0';
	if (!out->version[0] || k == RUNTIME_NATIVE)
		snprintf(out->display, sizeof(out->display), "%s", fmt[k][0]);
	else if (k == RUNTIME_NODE) /* the release line, as Node.js names them: "Node.js 20" */
		snprintf(out->display, sizeof(out->display), "Node.js %.*s",
			 (int)strcspn(out->version, "."), out->version);
	else
		snprintf(out->display, sizeof(out->display), fmt[k][1], out->version);
}

/* --- pure parsers ------------------------------------------------------------------------- */

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

/* Parses 1..NUM_DIGITS_MAX decimal digits at s[*i] (s has @len bytes); advances *i. */
static int parse_num(const char *s, size_t len, size_t *i, unsigned *val)
{
	size_t start = *i;
	unsigned v = 0;

	while (*i < len && is_digit(s[*i])) {
		if (*i - start >= NUM_DIGITS_MAX)
			return -EINVAL;
		v = v * 10 + (unsigned)(s[*i] - '0');
		(*i)++;
	}
	if (*i == start)
		return -EINVAL;
	*val = v;
	return 0;
}

/* "X.Y" at s[*i]. */
static int parse_major_minor(const char *s, size_t len, size_t *i, unsigned *major, unsigned *minor)
{
	if (parse_num(s, len, i, major) || *i >= len || s[*i] != '.')
		return -EINVAL;
	(*i)++;
	return parse_num(s, len, i, minor);
}

/* Writes "major.minor" (minor < 0: "major") to @ver. */
static int put_version(char *ver, size_t size, unsigned major, int minor)
{
	char tmp[32];
	int n;

	if (minor < 0)
		n = snprintf(tmp, sizeof(tmp), "%u", major);
	else
		n = snprintf(tmp, sizeof(tmp), "%u.%d", major, minor);
	if (n < 0 || !ver || (size_t)n >= size)
		return -ENOSPC;
	memcpy(ver, tmp, (size_t)n + 1);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool python_major_ok(unsigned major, unsigned minor)
{
	return major >= 2 && major <= 9 && minor <= 99;
}

/*
 * "<prefix>X.Y<flags><tail>": a libpython soname (@lib: the tail is ".so" then the end or '.',
 * and the flags stop at 's') or an interpreter's name (the tail is the end).
 */
static int python_version_from_name(const char *path, const char *prefix, bool lib, char *ver,
				    size_t size)
{
	const char *b;
	unsigned major, minor;
	size_t i = 0, len;

	if (!path)
		return -EINVAL;
	b = base_name(path);
	if (!has_prefix(b, prefix))
		return -EINVAL;
	b += strlen(prefix);
	len = strlen(b);
	if (parse_major_minor(b, len, &i, &major, &minor) || !python_major_ok(major, minor))
		return -EINVAL;
	/* ABI flags: "m" (<= 3.7), "d" (debug), "t" (free-threaded 3.13+), "u" (2.x wide). */
	while (i < len && i < 16 && is_lower(b[i]) && !(lib && b[i] == 's'))
		i++;
	if (lib ? strncmp(b + i, ".so", 3) || (b[i + 3] != '\0' && b[i + 3] != '.') : b[i] != '\0')
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
}

int runtime_python_version_from_lib(const char *path, char *ver, size_t size)
{
	return python_version_from_name(path, "libpython", true, ver, size);
}

int runtime_python_version_from_exe(const char *path, char *ver, size_t size)
{
	return python_version_from_name(path, "python", false, ver, size);
}

int runtime_python_version_from_hex(uint64_t hex, char *ver, size_t size)
{
	unsigned major = (hex >> 24) & 0xff, minor = (hex >> 16) & 0xff, level = (hex >> 4) & 0xf;

	/* PY_VERSION_HEX: major, minor, micro, release level (0xA alpha .. 0xF final), serial. */
	if (hex >> 32 || level < 0xa || !python_major_ok(major, minor))
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
}

/* "17.0.15", "1.8.0_392", "21" -> 17, 8, 21. */
static int java_major(const char *s, size_t len, size_t *i, unsigned *major)
{
	unsigned v;

	if (parse_num(s, len, i, &v))
		return -EINVAL;
	if (v == 1 && *i < len && s[*i] == '.') {
		(*i)++;
		if (parse_num(s, len, i, &v))
			return -EINVAL;
	}
	if (v < 5 || v > 999)
		return -EINVAL;
	*major = v;
	return 0;
}

int runtime_jvm_version_from_release(const char *text, size_t len, char *ver, size_t size)
{
	static const char key[] = "JAVA_VERSION=";
	const size_t klen = sizeof(key) - 1;
	unsigned major;
	size_t pos = 0, i;

	if (!text)
		return -EINVAL;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (end - pos > klen && !memcmp(text + pos, key, klen)) {
			i = pos + klen;
			if (text[i] == '"')
				i++;
			if (java_major(text, end, &i, &major))
				return -EINVAL;
			if (i < end && text[i] != '"' && text[i] != '.' && text[i] != '_' &&
			    text[i] != '+' && text[i] != '-' && text[i] != '\r')
				return -EINVAL;
			return put_version(ver, size, major, -1);
		}
		pos = end + 1;
	}
	return -EINVAL;
}

/* True when the digits at lc[i] may start a Java version: after a separator ("java-17"), at
 * the start, or right after a product name ("jdk17", "zulu17"); not inside "amd64". */
static bool java_version_start(const char *lc, size_t i)
{
	static const char *const glued[] = { "jdk", "jre", "java", "zulu" };
	size_t k, n;

	if (i && is_digit(lc[i - 1]))
		return false;
	if (!i || !is_lower(lc[i - 1]))
		return true;
	for (k = 0; k < ARRAY_SIZE(glued); k++) {
		n = strlen(glued[k]);
		if (i >= n && !memcmp(lc + i - n, glued[k], n))
			return true;
	}
	return false;
}

int runtime_jvm_version_from_path(const char *path, char *ver, size_t size)
{
	static const char *const words[] = { "jdk",	 "jre",	    "java",   "temurin", "zulu",
					     "corretto", "graalvm", "semeru", "liberica" };
	const char *comp, *end;
	char lc[NAME_MAX + 1];
	unsigned major;
	size_t n, i, j, w;
	bool named;

	if (!path)
		return -EINVAL;
	for (comp = path; *comp; comp = *end ? end + 1 : end) {
		end = strchrnul(comp, '/');
		n = (size_t)(end - comp);
		if (!n || n > NAME_MAX)
			continue;
		for (i = 0; i < n; i++)
			lc[i] = (comp[i] >= 'A' && comp[i] <= 'Z') ? comp[i] - 'A' + 'a' : comp[i];
		lc[n] = '\0';
		for (named = false, w = 0; w < ARRAY_SIZE(words) && !named; w++)
			named = strstr(lc, words[w]) != NULL;
		if (!named || !strcmp(lc, "libjvm.so"))
			continue;
		/* "java-17-openjdk-amd64", "jdk1.8.0_202", "jdk-21.0.2+13", "zulu17.44-ca-jdk17" */
		for (i = 0; i < n; i++) {
			if (!is_digit(lc[i]) || !java_version_start(lc, i))
				continue;
			j = i;
			if (java_major(lc, n, &j, &major) || major > 49 ||
			    (j < n && (is_digit(lc[j]) || is_lower(lc[j]))))
				continue;
			return put_version(ver, size, major, -1);
		}
	}
	return -EINVAL;
}

int runtime_go_version_from_string(const char *s, size_t len, char *ver, size_t size)
{
	unsigned major, minor;
	size_t i = 0;

	if (!s)
		return -EINVAL;
	if (len >= 6 && !memcmp(s, "devel ", 6))
		i = 6;
	if (len - i < 2 || memcmp(s + i, "go", 2))
		return -EINVAL;
	i += 2;
	if (parse_major_minor(s, len, &i, &major, &minor) || major < 1 || minor > 999)
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
}

int runtime_node_version_from_lib(const char *path, char *ver, size_t size)
{
	/* NODE_MODULE_VERSION of each release line (node/doc/abi_version_registry.json). */
	static const struct {
		unsigned abi, major;
	} abis[] = {
		{ 72, 12 },  { 79, 13 },  { 83, 14 },  { 88, 15 },  { 93, 16 },
		{ 102, 17 }, { 108, 18 }, { 111, 19 }, { 115, 20 }, { 120, 21 },
		{ 127, 22 }, { 131, 23 }, { 137, 24 },
	};
	const char *b;
	unsigned abi;
	size_t i = 0, k, len;

	if (!path)
		return -EINVAL;
	b = base_name(path);
	if (!has_prefix(b, "libnode.so."))
		return -EINVAL;
	b += strlen("libnode.so.");
	len = strlen(b);
	if (parse_num(b, len, &i, &abi) || (i < len && b[i] != '.'))
		return -EINVAL;
	for (k = 0; k < ARRAY_SIZE(abis); k++)
		if (abis[k].abi == abi)
			return put_version(ver, size, abis[k].major, -1);
	return -EINVAL;
}

int runtime_ruby_version_from_lib(const char *path, char *ver, size_t size)
{
	const char *b;
	unsigned major, minor;
	size_t i = 0, len;

	if (!path)
		return -EINVAL;
	b = base_name(path);
	if (!has_prefix(b, "libruby"))
		return -EINVAL;
	b += strlen("libruby");
	len = strlen(b);
	if (b[0] == '-') { /* libruby-3.1.so.3.1 (Debian, ruby's default) */
		i = 1;
	} else if (!strncmp(b, ".so.", 4)) { /* libruby.so.3.1 */
		i = 4;
	} /* else libruby3.1.so */
	if (parse_major_minor(b, len, &i, &major, &minor) || major < 1 || major > 9)
		return -EINVAL;
	if (b[i] != '\0' && b[i] != '.')
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
}

/* "X.Y.Z" at s[*i]; the major and minor out. */
static int parse_triple(const char *s, size_t len, size_t *i, unsigned *major, unsigned *minor)
{
	unsigned micro;

	if (parse_major_minor(s, len, i, major, minor) || *i >= len || s[*i] != '.')
		return -EINVAL;
	(*i)++;
	return parse_num(s, len, i, &micro);
}

static int scan_node(const char *s, size_t len, char *ver, size_t size)
{
	/* NODE_VERSION in the user agent "node.js/v20.20.2" and NODE_RELEASE_URLBASE ".../v20.20.2/". */
	static const struct {
		const char *marker;
		char term;
	} marks[] = {
		{ "node.js/v", '\0' },
		{ "/download/release/v", '/' },
	};
	const char *hit;
	unsigned major, minor;
	size_t k, i, j, mlen;

	for (k = 0; k < ARRAY_SIZE(marks); k++) {
		mlen = strlen(marks[k].marker);
		for (i = 0; i < len; i = (size_t)(hit - s) + 1) {
			hit = memmem(s + i, len - i, marks[k].marker, mlen);
			if (!hit)
				break;
			j = (size_t)(hit - s) + mlen;
			if (parse_triple(s, len, &j, &major, &minor) || j >= len)
				continue;
			if (s[j] != marks[k].term && !(marks[k].term == '\0' && s[j] == '-'))
				continue;
			return put_version(ver, size, major, -1);
		}
	}
	return -ENOENT;
}

static int scan_ruby(const char *s, size_t len, char *ver, size_t size)
{
	/* RUBY_DESCRIPTION: "ruby 3.1.2p20 (2022-04-12 revision ...) [x86_64-linux-gnu]". */
	const char *hit;
	unsigned major, minor;
	size_t i, j, tail;

	for (i = 0; i < len; i = (size_t)(hit - s) + 1) {
		hit = memmem(s + i, len - i, "ruby ", 5);
		if (!hit)
			break;
		j = (size_t)(hit - s) + 5;
		if (parse_triple(s, len, &j, &major, &minor) || major < 1 || major > 9)
			continue;
		for (tail = 0; j < len && tail < 16 && (is_lower(s[j]) || is_digit(s[j])); tail++)
			j++;
		if (len - j < 2 || s[j] != ' ' || s[j + 1] != '(')
			continue;
		return put_version(ver, size, major, (int)minor);
	}
	return -ENOENT;
}

static int scan_python(const char *s, size_t len, char *ver, size_t size)
{
	/* PY_VERSION as its own string: "\0" "3.10.12" "\0", "\0" "2.7.18+" "\0", "3.12.0rc1". */
	const char *nul;
	unsigned major, minor;
	size_t i, j, tail;

	for (i = 0; i + 1 < len; i = (size_t)(nul - s) + 1) {
		nul = memchr(s + i, '\0', len - i);
		if (!nul)
			break;
		j = (size_t)(nul - s) + 1;
		if (j >= len || (s[j] != '2' && s[j] != '3'))
			continue;
		if (parse_triple(s, len, &j, &major, &minor) || minor > 99)
			continue;
		for (tail = 0;
		     j < len && tail < 5 && (is_lower(s[j]) || is_digit(s[j]) || s[j] == '+');
		     tail++)
			j++;
		if (j >= len || s[j] != '\0')
			continue;
		return put_version(ver, size, major, (int)minor);
	}
	return -ENOENT;
}

int runtime_scan_version(enum runtime_kind kind, const void *buf, size_t len, char *ver,
			 size_t size)
{
	if (!buf)
		return -EINVAL;
	switch (kind) {
	case RUNTIME_NODE:
		return scan_node(buf, len, ver, size);
	case RUNTIME_RUBY:
		return scan_ruby(buf, len, ver, size);
	case RUNTIME_PYTHON:
		return scan_python(buf, len, ver, size);
	default:
		return -EINVAL;
	}
}

/* --- the recognizers: mapped libraries first, then the executable ------------------------ */

static bool is_libjvm(const char *b)
{
	return !strcmp(b, "libjvm.so");
}

static bool is_libpython(const char *b)
{
	return has_prefix(b, "libpython") && is_digit(b[9]);
}

static bool is_libnode(const char *b)
{
	return has_prefix(b, "libnode.so");
}

static bool is_libruby(const char *b)
{
	return has_prefix(b, "libruby") && (b[7] == '-' || b[7] == '.' || is_digit(b[7]));
}

/* JAVA_VERSION from the `release` file of the java home above libjvm (up to 5 levels:
 * JDK 8 keeps it in jre/lib/amd64/server/), read inside the process's root. */
static int jvm_version(const char *root, const char *libjvm, char *ver, size_t size)
{
	char dir[PATH_MAX], rel[PATH_MAX + 16];
	char *slash, *text;
	size_t len;
	int level, err;

	snprintf(dir, sizeof(dir), "%s", libjvm);
	for (level = 0; level < 5; level++) {
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		snprintf(rel, sizeof(rel), "%s/release", dir);
		/* A FIFO, device or endless file there is skipped, never waited on. */
		err = safe_read_in_root(root, rel, RELEASE_MAX, RELEASE_READ_MS, &text, &len);
		if (err)
			continue;
		err = runtime_jvm_version_from_release(text, len, ver, size);
		free(text);
		if (!err)
			return 0;
	}
	return runtime_jvm_version_from_path(libjvm, ver, size);
}

static bool jvm_detect(struct runtime_probe *p, char *ver, size_t size)
{
	const char *lib = p->exe ? NULL : runtime_probe_lib(p, is_libjvm);

	if (!lib)
		return false;
	ver[0] = '\0';
	jvm_version(p->root, lib, ver, size);
	return true;
}

/* Py_Version (3.11+) holds PY_VERSION_HEX. */
static int python_version_from_symbol(const struct runtime_probe *p, char *ver, size_t size)
{
	const Elf64_Sym *sym = &p->sym[RUNTIME_SYM_PY_VERSION];
	bool big = elf_file__ehdr(p->exe)->e_ident[EI_DATA] == ELFDATA2MSB;
	uint8_t raw[8];

	if (!p->found[RUNTIME_SYM_PY_VERSION] || (sym->st_size != 4 && sym->st_size != 8) ||
	    elf_file__read_vaddr(p->exe, sym->st_value, sym->st_size, raw))
		return -ENOENT;
	return runtime_python_version_from_hex(runtime_read_uint(raw, (unsigned)sym->st_size, big),
					       ver, size);
}

static bool python_detect(struct runtime_probe *p, char *ver, size_t size)
{
	const char *lib;

	ver[0] = '\0';
	if (!p->exe) {
		lib = runtime_probe_lib(p, is_libpython);
		if (lib)
			runtime_python_version_from_lib(lib, ver, size);
		return lib;
	}
	runtime_probe_syms(p);
	if (!p->found[RUNTIME_SYM_PY] && !p->found[RUNTIME_SYM_PY_VERSION])
		return false;
	/* Else the interpreter's name, else PY_VERSION in .rodata. */
	if (!python_version_from_symbol(p, ver, size) ||
	    (p->exe_name && !runtime_python_version_from_exe(p->exe_name, ver, size)))
		return true;
	if (runtime_scan_rodata(&p->exe_scan, RUNTIME_PYTHON, ver, size))
		ver[0] = '\0';
	return true;
}

/* An interpreter known by its library or by a symbol of the executable (Node.js, Ruby). */
struct interp {
	enum runtime_kind kind;
	bool (*is_lib)(const char *basename);
	enum runtime_sym sym;
	int (*version_from_lib)(const char *path, char *ver, size_t size);
	bool scan_first; /* the library's .rodata before its name */
};

static bool interp_detect(struct runtime_probe *p, const struct interp *in, char *ver, size_t size)
{
	const char *lib;

	ver[0] = '\0';
	if (!p->exe) {
		lib = runtime_probe_lib(p, in->is_lib);
		if (!lib)
			return false;
		/* the version from the library's .rodata or its name, each the other's fallback */
		if (in->scan_first) {
			if (runtime_scan_lib(p, lib, in->kind, ver, size))
				in->version_from_lib(lib, ver, size);
		} else if (in->version_from_lib(lib, ver, size)) {
			runtime_scan_lib(p, lib, in->kind, ver, size);
		}
		return true;
	}
	if (!runtime_probe_syms(p)->found[in->sym])
		return false;
	if (runtime_scan_rodata(&p->exe_scan, in->kind, ver, size))
		ver[0] = '\0';
	return true;
}

static bool node_detect(struct runtime_probe *p, char *ver, size_t size)
{
	static const struct interp node = { RUNTIME_NODE, is_libnode, RUNTIME_SYM_NODE,
					    runtime_node_version_from_lib, true };

	return interp_detect(p, &node, ver, size);
}

static bool ruby_detect(struct runtime_probe *p, char *ver, size_t size)
{
	static const struct interp ruby = { RUNTIME_RUBY, is_libruby, RUNTIME_SYM_RUBY,
					    runtime_ruby_version_from_lib, false };

	return interp_detect(p, &ruby, ver, size);
}

static const struct runtime_ops jvm_ops = { RUNTIME_JVM, "java", jvm_detect };
static const struct runtime_ops python_ops = { RUNTIME_PYTHON, "python", python_detect };
static const struct runtime_ops node_ops = { RUNTIME_NODE, "node", node_detect };
static const struct runtime_ops ruby_ops = { RUNTIME_RUBY, "ruby", ruby_detect };

/*
 * In the order they are asked, in both passes: a Go program that embeds an interpreter maps
 * its library (which wins in the first pass); in the executable, Go's own marks come first.
 */
static const struct runtime_ops *const recognizers[] = {
	&runtime_go_ops, &jvm_ops, &python_ops, &node_ops, &ruby_ops,
};

/* Asks each recognizer in turn; false (and no version) when none knows the process. */
static bool recognize(struct runtime_probe *p, struct runtime_info *ri)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(recognizers); k++) {
		if (recognizers[k]->detect(p, ri->version, sizeof(ri->version))) {
			ri->kind = recognizers[k]->kind;
			return true;
		}
	}
	ri->version[0] = '\0';
	return false;
}

/*
 * The second pass, over the executable (Go, statically linked interpreters). Returns 0, or
 * -EACCES/-EPERM when neither the maps (@maps_err) nor the executable may be read.
 */
static int recognize_exe(int dirfd, int maps_err, struct runtime_probe *p, struct runtime_info *ri)
{
	const struct elf_file_opts eo = { .max_file_size = UINT64_MAX };
	char exe_name[PATH_MAX];
	struct elf_file *ef;
	int exefd, err;
	ssize_t n;

	/* The kernel's link to the mapped executable: opened, never resolved as a path. */
	exefd = safe_open_link(dirfd, "exe", NULL);
	if (exefd < 0) {
		err = exefd;
		/* A kernel thread or a zombie has no executable: native. */
		if ((maps_err == -EACCES || maps_err == -EPERM) &&
		    (err == -EACCES || err == -EPERM))
			return err;
		return 0;
	}
	n = readlinkat(dirfd, "exe", exe_name, sizeof(exe_name) - 1);
	if (n >= 0) {
		exe_name[n] = '\0';
		if (n > 10 && !strcmp(exe_name + n - 10, " (deleted)"))
			exe_name[n - 10] = '\0';
	}
	if (!elf_file__open(exefd, &eo, &ef)) {
		p->exe = ef;
		p->exe_name = n >= 0 ? exe_name : NULL;
		p->exe_scan = (struct runtime_scan){ .ef = ef, .budget = RUNTIME_SCAN_MAX };
		recognize(p, ri);
		p->exe = NULL;
		p->exe_name = NULL;
		elf_file__free(ef);
	}
	close(exefd);
	return 0;
}

int runtime_detect(const struct runtime_detect_opts *o, int pid, struct runtime_info *out)
{
	const char *proc_root = o && o->proc_root ? o->proc_root : "/proc";
	struct runtime_info ri = { .kind = RUNTIME_NATIVE };
	struct runtime_probe p = { 0 };
	char dir[PATH_MAX], root[PATH_MAX];
	int dirfd, maps_err, err;

	if (pid <= 0 || !out)
		return -EINVAL;
	if (proc_path(dir, sizeof(dir), proc_root, (uint32_t)pid, "") ||
	    proc_path(root, sizeof(root), proc_root, (uint32_t)pid, "root"))
		return -ENAMETOOLONG;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return proc_gone(-errno);
	p.root = root;
	maps_err = runtime_probe_read_maps(&p, proc_root, pid);
	if (maps_err == -ESRCH) {
		err = -ESRCH;
		goto out;
	}
	if (!recognize(&p, &ri)) {
		err = recognize_exe(dirfd, maps_err, &p, &ri);
		if (err)
			goto out;
	}
	if (faccessat(dirfd, "stat", F_OK, 0) < 0 && proc_gone(-errno) == -ESRCH) {
		pr_debug("runtime_detect(pid=%d): process is gone", pid);
		err = -ESRCH;
		goto out;
	}
	runtime_info_format(&ri);
	*out = ri;
	err = 0;
out:
	runtime_probe_release(&p);
	close(dirfd);
	return err;
}
