/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect: which language runtime a process runs, and its version, found without touching the
 * process and without executing anything (nothing from a container is ever run).
 *
 * Everything is read from /proc/PID/maps (which libraries are mapped), /proc/PID/exe (the
 * kernel's link to the running executable, opened, never resolved as a path string) and, for
 * files named in the maps, through /proc/PID/root with base/safe_open (a link in a container
 * cannot lead out of it). Every read is bounded: at most RUNTIME_SCAN_MAX bytes of a file are
 * scanned, in chunks.
 *
 *   runtime  recognised by                                version from
 *   JVM      libjvm.so mapped                             JAVA_VERSION of the JDK's `release`
 *                                                         file, else the libjvm path
 *   CPython  libpython*.so mapped, or Py_* symbols in     the libpython soname; Py_Version;
 *            the executable                               the executable's name; PY_VERSION
 *   Go       .go.buildinfo / .gopclntab / Go build id     the build info (both formats, also
 *            note, or the build info magic in a RW        without section headers)
 *            segment of the executable
 *   Node.js  libnode.so mapped, or node::Start symbol     "node.js/vX.Y.Z" in .rodata; the
 *                                                         libnode ABI number
 *   Ruby     libruby*.so mapped, or ruby_* symbols        the libruby soname; "ruby X.Y.Z"
 *                                                         (RUBY_DESCRIPTION) in .rodata
 *   native   anything else
 *
 * All functions are thread-safe; none keeps state.
 */
#ifndef SLIDEOPS_RUNTIMES_DETECT_H
#define SLIDEOPS_RUNTIMES_DETECT_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes of one file that are scanned for a version string or the Go build info. */
#define RUNTIME_SCAN_MAX (64u << 20)

enum runtime_kind {
	RUNTIME_NATIVE = 0,
	RUNTIME_PYTHON,
	RUNTIME_JVM,
	RUNTIME_GO,
	RUNTIME_NODE,
	RUNTIME_RUBY,
	RUNTIME_KIND_COUNT,
};

struct runtime_info {
	enum runtime_kind kind;
	char version[32]; /* "3.11", "17", "1.19", "20", "3.1"; "" if unknown */
	char display[64]; /* "CPython 3.11", "JVM (OpenJDK 17)", "Go 1.19", "Node.js 20",
				 * "Ruby 3.1", "native"; without the version when it is unknown */
};

struct runtime_detect_opts {
	const char *proc_root; /* default "/proc"; tests point it at a fake tree */
};

/*
 * Detects the runtime of @pid (a tgid or tid) and writes @out. @o may be NULL. Returns 0;
 * -ESRCH if the process is gone (or never existed); -EACCES/-EPERM when neither its maps nor
 * its executable may be read; -ENOMEM. A kernel thread or an unreadable executable is
 * "native". Never executes anything; never follows a link out of the process's root.
 */
int runtime_detect(const struct runtime_detect_opts *o, int pid, struct runtime_info *out);

/* "native", "python", "java", "go", "node", "ruby": the names of profile/profile.h
 * prof_lang_name(). Out-of-range kinds are "native". */
const char *runtime_kind_name(enum runtime_kind k);

/*
 * Fills @out->display from @out->kind and @out->version ("CPython 3.11", "Go", "native").
 */
void runtime_info_format(struct runtime_info *out);

/*
 * Pure parsers (no I/O). Each writes a NUL-terminated "X.Y" (Java: "X") to @ver (@size bytes)
 * and returns 0; -EINVAL when the input holds no version in the expected form (garbage, empty,
 * truncated, numbers too long); -ENOSPC when @size is too small. @ver is written only on
 * success.
 */

/* A libpython path or soname: ".../libpython3.11.so.1.0", "libpython3.6m.so.1.0",
 * "libpython2.7.so" -> "3.11", "3.6", "2.7". */
int runtime_python_version_from_lib(const char *path, char *ver, size_t size);
/* An executable's path or name: "/usr/bin/python3.12", "python2.7", "python3.13t" -> "3.12".
 * "python3" has no minor version: -EINVAL. */
int runtime_python_version_from_exe(const char *path, char *ver, size_t size);
/* The value of Py_Version / PY_VERSION_HEX (0x030b02f0 -> "3.11"). */
int runtime_python_version_from_hex(uint64_t hex, char *ver, size_t size);

/* A JDK's `release` file (@len bytes, need not be NUL-terminated): JAVA_VERSION="17.0.15" ->
 * "17", JAVA_VERSION="1.8.0_392" -> "8". */
int runtime_jvm_version_from_release(const char *text, size_t len, char *ver, size_t size);
/* A java home or libjvm path: "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
 * "/opt/jdk-21.0.2/...", "/usr/lib/jvm/temurin-25-jdk-amd64/..." -> "17", "21", "25". */
int runtime_jvm_version_from_path(const char *path, char *ver, size_t size);

/* A Go version string (@len bytes): "go1.19.8", "go1.21rc2", "devel go1.23-abc ..." ->
 * "1.19", "1.21", "1.23". */
int runtime_go_version_from_string(const char *s, size_t len, char *ver, size_t size);

/* The Go build info parser is in runtimes/go/buildinfo.h. */

/* A libnode path or soname: "libnode.so.115" -> "20" (the ABI number NODE_MODULE_VERSION,
 * known from Node.js 12 to 24). */
int runtime_node_version_from_lib(const char *path, char *ver, size_t size);
/* A libruby path or soname: "libruby-3.1.so.3.1", "libruby.so.3.1", "libruby3.1.so" ->
 * "3.1". */
int runtime_ruby_version_from_lib(const char *path, char *ver, size_t size);

/*
 * Scans @buf (@len bytes of a binary's read-only data) for the version text of @kind:
 *   RUNTIME_NODE    "node.js/v20.20.2" or ".../release/v20.20.2/"  -> "20"
 *   RUNTIME_RUBY    "ruby 3.1.2p20 (" or "ruby 3.3.0 ("             -> "3.1"
 *   RUNTIME_PYTHON  a NUL-delimited PY_VERSION "\0" "3.10.12" "\0"   -> "3.10"
 * Only matches wholly inside @buf count (a caller scanning in chunks overlaps them by
 * RUNTIME_SCAN_OVERLAP). Returns 0; -ENOENT if there is none; -EINVAL for another @kind;
 * -ENOSPC.
 */
#define RUNTIME_SCAN_OVERLAP 256
int runtime_scan_version(enum runtime_kind kind, const void *buf, size_t len, char *ver,
			 size_t size);

#endif
