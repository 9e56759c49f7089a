/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report: what a profile says, in numbers and in words: shares by owner and process, the top
 * function of each ("of yours": the leaf-most frame outside the kernel, the system libraries
 * and the standard libraries of Go and Python), stripped binaries worth a card, and the answer
 * sentence of seed 001.
 *
 * Pure computation over a profile; no I/O. The report owns all its strings.
 */
#ifndef SLIDEOPS_REPORT_H
#define SLIDEOPS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

struct report_process {
	uint32_t pid;
	char *name;
	int64_t value;
	double share;	    /* percent of the report total */
	char *top_function; /* NULL if no frame */
};

struct report_group {
	char *owner; /* "Service billing" */
	int64_t value;
	double share;
	char *top_function;
	struct report_process *procs; /* sorted by value, at most opts.max_processes */
	size_t nprocs;
	/* Waiting (profiles with off-CPU frames, REPORT_WAIT_MAPPING leaves): */
	int64_t wait_value; /* value spent off-CPU */
	char *top_wait;	    /* the top reason, "read", "futex", "waiting for a CPU" */
	int64_t top_wait_value;
	char *top_wait_function; /* the function of yours that waited there most */
};

/* Mapping of the synthetic leaf frames that say why a thread was off-CPU; their function is
 * "[off-CPU: read]" or "[runnable: waiting for a CPU]". */
#define REPORT_WAIT_MAPPING "[off-cpu]"
/* Mapping of the synthetic leaf frames that name the class a JVM allocated (memory-alloc,
 * memory-held); never the answer while the stack has a frame above it. */
#define REPORT_CLASS_MAPPING "[class]"

struct report_function {
	char *name;
	int64_t value;
	double share;
};

struct report_stripped {
	char *path;
	char *build_id; /* NULL if the binary has none */
	int64_t value;
	double share;
};

struct report {
	int64_t total;	   /* sum of value opts.value_index */
	int64_t total_alt; /* sum of the other value (count of waits, mapped bytes, ...) */
	struct report_group *groups; /* sorted by value, descending */
	size_t ngroups;
	struct report_function *top; /* top functions over the whole profile */
	size_t ntop;
	struct report_stripped *stripped; /* stripped binaries with >= stripped_min_share */
	size_t nstripped;
	double unnamed_share;	/* percent of samples whose attributed frame has no name */
	unsigned int languages; /* bit (1 << enum prof_lang) for each language seen */
};

struct report_opts {
	size_t value_index;	   /* which sample value; default 0 */
	size_t max_processes;	   /* per group; default 10 */
	size_t max_top;		   /* default 20 */
	double stripped_min_share; /* percent; default 1.0 */
};

/* Computes the report. Returns 0 or -ENOMEM. The caller frees it with report__free(). */
int report__new(const struct profile *p, const struct report_opts *opts, struct report **out);
void report__free(struct report *r);

/*
 * True when a binary path is a language runtime or a system library (libc, ld.so, libstdc++,
 * libpython, libjvm, ...): never the function "of yours", never listed as stripped.
 */
bool report_is_system_dso(const char *path);

/*
 * True when a Go function belongs to the runtime or the standard library ("runtime.mallocgc",
 * "sync.(*Mutex).Lock", "net/http.(*conn).serve"): never the function "of yours". Functions
 * of package main and of module paths ("github.com/acme/billing.Build") are the program's.
 */
bool report_is_go_std(const char *function);

/*
 * True when a Python source file is the interpreter's standard library: "<frozen ...>"
 * modules, and files under a "lib/pythonX.Y/" (or lib64, or "pythonX.Yt" for a free-threaded
 * build) that are not in site-packages or dist-packages ("/usr/lib/python3.11/json/encoder.py",
 * "/root/.pyenv/versions/3.12.1/lib/python3.12/re/__init__.py"). Such frames are never the
 * function "of yours": their time goes to the application's function that called them.
 * Exec'd code ("<string>", "<generated>"), NULL and "" are not the standard library.
 */
bool report_is_python_std(const char *file);

/*
 * True when a Java method ("java.lang.Thread.sleep", "jdk.internal.misc.Unsafe.setMemory0") is
 * the JDK's own: its packages java., javax., jdk., sun. and com.sun. Like the Python standard
 * library, such frames are never the answer: their time goes to the application's method that
 * called them. NULL and "" are not.
 */
bool report_is_java_std(const char *function);

/*
 * True when a native frame's source file is a toolchain's standard library, compiled into the
 * program from headers or generics: C++'s (".../include/c++/...": libstdc++ and libc++) and
 * Rust's ("/library/{core,alloc,std}/src/..." of rustc's sources). Such frames (a
 * std::vector<long>::at() inlined into settle) go to the application's function that called
 * them, as libc's do. NULL and "" are not.
 */
bool report_is_native_std(const char *file);

/*
 * The answer, e.g. "Over 10 seconds, Unit billing-worker.service used 54% of the CPU time on
 * this server, most of it in build_report. Next was Service checkout, at 14%."
 * @what is the measured quantity ("the CPU time"), @where the scope ("on this server").
 * Writes to @buf (truncated). Returns the length it needed, as snprintf.
 */
int report_answer(const struct report *r, unsigned int seconds, const char *what, const char *where,
		  char *buf, size_t size);

/*
 * The answer for one target (a Service, a unit, processes) rather than a whole server:
 * "Over 30 seconds, Service billing used 54% of the CPU time on this server, most of it in
 * build_report." @share is the target's percent of the server's busy time (computed by the
 * caller, which knows what was filtered out). Returns the length needed, as snprintf.
 */
/*
 * The answer of a wall-time profile: for a server, the owner with the most waiting time, e.g.
 * "Over 10 seconds, Service billing spent 62% of its waiting time in read, most of it in
 * wait_for_input. Next was Unit nginx.service, at 20% of all waiting time."; for a target
 * (@who non-NULL), "Over 10 seconds, process 12 (pipewait) spent 80% of its time waiting, most of
 * it in read from wait_for_input; on the CPU most of its time went to compute."
 */
int report_answer_wall(const struct report *r, unsigned int seconds, const char *who, char *buf,
		       size_t size);

/*
 * Lock waits (value: nanoseconds asleep): "Over 10 seconds, process 12 (contend) waited 8.6 s on
 * locks in all, in 1906 waits, most of it in contended_update." or, for a server (@who NULL),
 * "Over 10 seconds, Service billing waited longest on locks, 8.6 s in all, most of it in
 * contended_update. Next was Unit nginx.service, at 1.2 s."
 */
int report_answer_locks(const struct report *r, unsigned int seconds, const char *who, char *buf,
			size_t size);

/*
 * Memory growth (value: bytes first touched): "Over 10 seconds, process 12 (grow) touched
 * 64.0 MiB of new memory, most of it in grow_cache." or, for a server, "Over 10 seconds,
 * Service billing grew the most, touching 64.0 MiB of new memory, most of it in grow_cache.
 * Next was Unit nginx.service, at 2.1 MiB."
 */
int report_answer_growth(const struct report *r, unsigned int seconds, const char *who, char *buf,
			 size_t size);

/*
 * Go heap (value: bytes, the other value objects). @held: "At the end of 10 seconds, process 12
 * (app) held 64.0 MiB of Go heap in use (16384 objects), most of it (98%) allocated in
 * main.holdMemory."; else "Over 10 seconds, process 12 (app) allocated 480.0 MiB on the Go heap
 * (7680 objects), most of it (99%) in main.allocDuring." A profile of Java frames only says
 * "Java heap", one of Go and Java frames "heap".
 */
int report_answer_memory(const struct report *r, unsigned int seconds, const char *who, bool held,
			 char *buf, size_t size);
int report_answer_target(const struct report *r, unsigned int seconds, const char *who,
			 double share, const char *what, const char *where, char *buf, size_t size);

#endif
