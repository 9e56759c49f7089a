// SPDX-License-Identifier: Apache-2.0
/*
 * fake_asprof: a JVMTI agent that stands in for async-profiler's libasyncProfiler.so where the
 * real one cannot be had (tests). It takes async-profiler's option syntax and return codes and
 * keeps its state across loads, but profiles nothing: on stop or dump it writes a known, real
 * result, the stacks the JVM's Java threads are in at that moment, in async-profiler's collapsed
 * format, with a leaf for the started mode and a fixed value per stack.
 *
 * Built by a test from the JDK's own headers:
 *   gcc -shared -fPIC -O2 -Wall -Wextra -Werror -I$JDK/include -I$JDK/include/linux \
 *       tests/workloads/java/fake_asprof.c -o libasyncProfiler.so
 *
 * Options: key[=value] separated by ','. Known keys: start, stop, dump, status (the action;
 * the last one counts), event=cpu|wall|alloc|lock, alloc[=BYTES[k|m|g]], live,
 * lock[=TIME[ns|us|ms|s]], interval=TIME, timeout=SECONDS[s|m|h|d], file=PATH, collapsed,
 * total, jfr, log[=PATH], loglevel=LEVEL. An unknown key, a flag with a value, a missing or bad
 * value returns 100 (stricter than async-profiler, which only warns about unknown keys); start
 * while started, stop while stopped, dump before any start, and an output it cannot write (jfr,
 * a file that is not .collapsed/.folded without "collapsed") return 200.
 *
 * What it writes on stop/dump to file= (a temporary name beside it, created O_EXCL|O_NOFOLLOW,
 * then renamed over it): per Java thread with frames, "root;...;leaf VALUE\n" with frames named
 * as async-profiler names them ("java/lang/Thread.run": GetMethodDeclaringClass and
 * GetClassSignature, slashes kept), then, for a session started with alloc (or live),
 * "byte[]_[i]" and 1000000 (bytes), with lock the class of the lock the thread is blocked on
 * or parked at ("Foo$Gate_[i]", from java.lang.management's ThreadInfo.getLockInfo(): no JVMTI
 * capability names it once the JVM runs; "java.lang.Object_[i]" for any other thread) and
 * 10000000 (ns), otherwise no leaf and 10000000; with no "total" every value is 1 (the sample
 * count).
 *
 * On every load it prints one line to the JVM's stderr:
 *   fake-asprof: <start|stop|dump|status|none|invalid> uid=<uid> lib=<its path> options=<options>
 *
 * It never starts a thread, checks every JVMTI and JNI result, and frees what JVMTI allocates.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jni.h>
#include <jvmti.h>

#define ARGUMENTS_ERROR 100
#define COMMAND_ERROR 200
#define OPTIONS_MAX 4096
#define DEPTH_MAX 2048
#define OUTPUT_MAX (64u << 20)
#define ALLOC_VALUE 1000000
#define LOCK_VALUE 10000000
#define CPU_VALUE 10000000

enum action { ACT_NONE, ACT_START, ACT_STOP, ACT_DUMP, ACT_STATUS };
enum output { OUT_NONE, OUT_COLLAPSED, OUT_JFR };
enum mode { MODE_CPU, MODE_ALLOC, MODE_LOCK };

struct args {
	enum action action;
	enum output output;
	bool alloc, lock, total;
	const char *file;
};

/* Kept across loads: a load that returned 0 keeps the library mapped. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static bool running, started;
static enum mode session_mode;
static jvmtiEnv *jvmti;
static unsigned seq;

struct text {
	char *p;
	size_t len, cap;
	bool failed;
};

static void put_bytes(struct text *t, const char *s, size_t n)
{
	size_t cap;
	char *p;

	if (t->failed)
		return;
	if (t->len + n > OUTPUT_MAX) {
		t->failed = true;
		return;
	}
	if (t->len + n > t->cap) {
		cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n)
			cap *= 2;
		p = realloc(t->p, cap);
		if (!p) {
			t->failed = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

/* A name, with the bytes that would break a collapsed line ('\n', ';') as '?'. */
static void put_name(struct text *t, const char *s, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == ';') {
			put_bytes(t, s + start, i - start);
			put_bytes(t, "?", 1);
			start = i + 1;
		}
	}
	put_bytes(t, s + start, n - start);
}

static void put_str(struct text *t, const char *s)
{
	put_bytes(t, s, strlen(s));
}

/* --- options ---------------------------------------------------------------------------- */

/* A decimal number then one of the @units ("" first: none), times its factor, into @out. */
static bool parse_units(const char *v, const char *const *units, const long long *factors,
			long long *out)
{
	long long x = 0;
	size_t i = 0, u;

	if (!v || v[0] < '0' || v[0] > '9')
		return false;
	for (; v[i] >= '0' && v[i] <= '9'; i++) {
		if (x > (LLONG_MAX - 9) / 10)
			return false;
		x = x * 10 + (v[i] - '0');
	}
	for (u = 0; units[u]; u++) {
		if (!strcasecmp(v + i, units[u])) {
			if (factors[u] && x > LLONG_MAX / factors[u])
				return false;
			*out = x * factors[u];
			return true;
		}
	}
	return false;
}

static const char *const byte_units[] = { "", "k", "m", "g", NULL };
static const long long byte_factors[] = { 1, 1ll << 10, 1ll << 20, 1ll << 30 };
static const char *const time_units[] = { "", "ns", "us", "ms", "s", NULL };
static const long long time_factors[] = { 1, 1, 1000, 1000000, 1000000000 };
static const char *const secs_units[] = { "", "s", "m", "h", "d", NULL };
static const long long secs_factors[] = { 1, 1, 60, 3600, 86400 };

static bool is_level(const char *v)
{
	static const char *const levels[] = { "trace", "debug", "info", "warn", "error", "none" };
	size_t i;

	for (i = 0; v && i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcasecmp(v, levels[i]))
			return true;
	return false;
}

static bool set_event(struct args *a, const char *v)
{
	if (!v)
		return false;
	if (!strcmp(v, "alloc"))
		a->alloc = true;
	else if (!strcmp(v, "lock"))
		a->lock = true;
	else if (strcmp(v, "cpu") && strcmp(v, "wall"))
		return false;
	return true;
}

/* One key[=value] of the options. Returns false for what async-profiler would not take. */
static bool parse_arg(struct args *a, const char *key, const char *v)
{
	static const struct {
		const char *key;
		enum action action;
	} actions[] = {
		{ "start", ACT_START },
		{ "stop", ACT_STOP },
		{ "dump", ACT_DUMP },
		{ "status", ACT_STATUS },
	};
	long long n;
	size_t i;

	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (!strcmp(key, actions[i].key)) {
			a->action = actions[i].action;
			return !v;
		}
	}
	if (!strcmp(key, "event"))
		return set_event(a, v);
	if (!strcmp(key, "alloc")) {
		a->alloc = true;
		return !v || parse_units(v, byte_units, byte_factors, &n);
	}
	if (!strcmp(key, "lock")) {
		a->lock = true;
		return !v || parse_units(v, time_units, time_factors, &n);
	}
	if (!strcmp(key, "interval"))
		return parse_units(v, time_units, time_factors, &n) && n > 0;
	if (!strcmp(key, "timeout"))
		return parse_units(v, secs_units, secs_factors, &n);
	if (!strcmp(key, "file")) {
		a->file = v;
		return v && *v;
	}
	if (!strcmp(key, "loglevel"))
		return is_level(v);
	if (!strcmp(key, "log"))
		return true;
	if (!strcmp(key, "collapsed") || !strcmp(key, "jfr")) {
		a->output = key[0] == 'c' ? OUT_COLLAPSED : OUT_JFR;
		return !v;
	}
	if (!strcmp(key, "total")) {
		a->total = true;
		return !v;
	}
	return !strcmp(key, "live") && !v;
}

/* Splits @buf (modified) into the arguments. */
static bool parse_options(struct args *a, char *buf)
{
	char *save = NULL, *arg, *eq;

	for (arg = strtok_r(buf, ",", &save); arg; arg = strtok_r(NULL, ",", &save)) {
		eq = strchr(arg, '=');
		if (eq)
			*eq++ = '\0';
		if (!parse_arg(a, arg, eq))
			return false;
	}
	return true;
}

/* --- naming ----------------------------------------------------------------------------- */

/* A class signature ("Ljava/lang/Thread;", "[B", "[[Ljava/lang/String;") as a name. */
static void put_class(struct text *t, const char *sig, bool dotted)
{
	static const char prims[] = "BCDFIJSZ";
	static const char *const prim_names[] = { "byte", "char", "double", "float",
						  "int",  "long", "short",  "boolean" };
	size_t dims = 0, i, n;
	const char *p;

	while (sig[dims] == '[')
		dims++;
	p = sig + dims;
	if (*p == 'L') {
		n = strlen(p + 1);
		if (n && p[n] == ';')
			n--;
		for (i = 0; i < n; i++) {
			char c = p[1 + i] == '/' && dotted ? '.' : p[1 + i];

			put_name(t, &c, 1);
		}
	} else if (*p && strchr(prims, *p)) {
		put_str(t, prim_names[strchr(prims, *p) - prims]);
	} else {
		put_name(t, p, strlen(p));
	}
	for (i = 0; i < dims; i++)
		put_str(t, "[]");
}

static void put_error(struct text *t, jvmtiError err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "[jvmtiError %d]", (int)err);
	put_str(t, buf);
}

/* A Java frame as async-profiler names it without "dot" or "ann": "java/lang/Thread.run". */
static void put_method(struct text *t, JNIEnv *jni, jmethodID method)
{
	char *name = NULL, *sig = NULL;
	jclass cls = NULL;
	jvmtiError err;

	err = (*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL);
	if (err == JVMTI_ERROR_NONE)
		err = (*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls);
	if (err == JVMTI_ERROR_NONE)
		err = (*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL);
	if (err == JVMTI_ERROR_NONE) {
		put_class(t, sig, false);
		put_str(t, ".");
		put_name(t, name, strlen(name));
	} else {
		put_error(t, err);
	}
	if (cls)
		(*jni)->DeleteLocalRef(jni, cls);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
}

/* What names the lock a thread waits for: java.lang.management (no JVMTI capability for it
 * is available once the JVM runs). Any part missing: the leaf is java.lang.Object. */
struct mx {
	jobject bean;
	jmethodID thread_id, thread_info, lock_info, class_name;
};

static bool no_exception(JNIEnv *jni)
{
	if (!(*jni)->ExceptionCheck(jni))
		return true;
	(*jni)->ExceptionClear(jni);
	return false;
}

/* A method of the class @name, or 0 (exceptions cleared). */
static jmethodID method_of(JNIEnv *jni, const char *name, const char *meth, const char *sig)
{
	jclass cls = (*jni)->FindClass(jni, name);
	jmethodID id = NULL;

	if (cls && no_exception(jni))
		id = (*jni)->GetMethodID(jni, cls, meth, sig);
	no_exception(jni);
	if (cls)
		(*jni)->DeleteLocalRef(jni, cls);
	return id;
}

static void mx_init(JNIEnv *jni, struct mx *mx)
{
	jclass mf;
	jmethodID get;

	memset(mx, 0, sizeof(*mx));
	mf = (*jni)->FindClass(jni, "java/lang/management/ManagementFactory");
	if (!mf || !no_exception(jni))
		return;
	get = (*jni)->GetStaticMethodID(jni, mf, "getThreadMXBean",
					"()Ljava/lang/management/ThreadMXBean;");
	if (get && no_exception(jni))
		mx->bean = (*jni)->CallStaticObjectMethod(jni, mf, get);
	if (!no_exception(jni))
		mx->bean = NULL;
	(*jni)->DeleteLocalRef(jni, mf);
	mx->thread_id = method_of(jni, "java/lang/Thread", "getId", "()J");
	mx->thread_info = method_of(jni, "java/lang/management/ThreadMXBean", "getThreadInfo",
				    "(J)Ljava/lang/management/ThreadInfo;");
	mx->lock_info = method_of(jni, "java/lang/management/ThreadInfo", "getLockInfo",
				  "()Ljava/lang/management/LockInfo;");
	mx->class_name = method_of(jni, "java/lang/management/LockInfo", "getClassName",
				   "()Ljava/lang/String;");
	if (!mx->thread_id || !mx->thread_info || !mx->lock_info || !mx->class_name) {
		if (mx->bean)
			(*jni)->DeleteLocalRef(jni, mx->bean);
		mx->bean = NULL;
	}
}

/* The class of the lock @thread is blocked on or parked at, as Class.getName() has it. */
static jstring lock_class(JNIEnv *jni, const struct mx *mx, jthread thread)
{
	jobject info = NULL, lock = NULL;
	jstring name = NULL;
	jint state = 0;
	jlong id;

	if (!mx->bean || (*jvmti)->GetThreadState(jvmti, thread, &state) != JVMTI_ERROR_NONE ||
	    !(state & (JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER | JVMTI_THREAD_STATE_PARKED)))
		return NULL;
	id = (*jni)->CallLongMethod(jni, thread, mx->thread_id);
	if (no_exception(jni))
		info = (*jni)->CallObjectMethod(jni, mx->bean, mx->thread_info, id);
	if (info && no_exception(jni))
		lock = (*jni)->CallObjectMethod(jni, info, mx->lock_info);
	if (lock && no_exception(jni))
		name = (*jni)->CallObjectMethod(jni, lock, mx->class_name);
	if (!no_exception(jni))
		name = NULL;
	return name;
}

/* The leaf of a lock stack: the lock's class, dotted, as async-profiler writes it. */
static void put_lock_class(struct text *t, JNIEnv *jni, const struct mx *mx, jthread thread)
{
	const char *chars = NULL;
	jstring name;

	if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
		no_exception(jni);
		put_str(t, "java.lang.Object_[i]");
		return;
	}
	name = lock_class(jni, mx, thread);
	if (name)
		chars = (*jni)->GetStringUTFChars(jni, name, NULL);
	if (chars && chars[0] == '[')
		put_class(t, chars, true); /* "[Ljava.lang.String;" */
	else if (chars)
		put_name(t, chars, strlen(chars));
	else
		put_str(t, "java.lang.Object");
	put_str(t, "_[i]");
	if (chars)
		(*jni)->ReleaseStringUTFChars(jni, name, chars);
	no_exception(jni);
	(*jni)->PopLocalFrame(jni, NULL);
}

static void put_stack(struct text *t, JNIEnv *jni, const struct mx *mx, const jvmtiStackInfo *si,
		      bool total)
{
	unsigned long long value = 1;
	char buf[32];
	jint i;

	for (i = si->frame_count - 1; i >= 0; i--) {
		put_method(t, jni, si->frame_buffer[i].method);
		put_str(t, i ? ";" : "");
	}
	if (session_mode == MODE_ALLOC) {
		put_str(t, ";byte[]_[i]");
		value = total ? ALLOC_VALUE : 1;
	} else if (session_mode == MODE_LOCK) {
		put_str(t, ";");
		put_lock_class(t, jni, mx, si->thread);
		value = total ? LOCK_VALUE : 1;
	} else {
		value = total ? CPU_VALUE : 1;
	}
	snprintf(buf, sizeof(buf), " %llu\n", value);
	put_str(t, buf);
}

/* --- the result file --------------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes @t to @path through a temporary name beside it, renamed over it. */
static int write_result(const char *path, const struct text *t)
{
	char tmp[PATH_MAX];
	int fd, err, n;

	n = snprintf(tmp, sizeof(tmp), "%s.%d.%u.tmp", path, (int)getpid(), seq++);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, t->p ? t->p : "", t->len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* --- JVMTI --------------------------------------------------------------------------------- */

/* The one environment of this library, made at the first dump (a start has returned 0). */
static int get_jvmti(JavaVM *vm)
{
	if (jvmti)
		return 0;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		jvmti = NULL;
		return -ENOTSUP;
	}
	return 0;
}

static int dump(JavaVM *vm, const struct args *a)
{
	jvmtiStackInfo *info = NULL;
	struct text t = { 0 };
	struct mx mx = { 0 };
	JNIEnv *jni = NULL;
	jint count = 0, i;
	int err;

	if (get_jvmti(vm) || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
		return -ENOTSUP;
	if (session_mode == MODE_LOCK)
		mx_init(jni, &mx);
	if ((*jvmti)->GetAllStackTraces(jvmti, DEPTH_MAX, &info, &count) != JVMTI_ERROR_NONE) {
		info = NULL;
		count = 0;
		t.failed = true;
	}
	for (i = 0; i < count; i++) {
		if (info[i].frame_count > 0)
			put_stack(&t, jni, &mx, &info[i], a->total);
		(*jni)->DeleteLocalRef(jni, info[i].thread);
	}
	if (info)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info);
	if (mx.bean)
		(*jni)->DeleteLocalRef(jni, mx.bean);
	err = t.failed ? -ENOMEM : write_result(a->file, &t);
	free(t.p);
	return err;
}

/* The output of a dump: "collapsed", or a file named .collapsed/.folded; else none we write. */
static bool writes_collapsed(const struct args *a)
{
	const char *ext = strrchr(a->file, '.');

	if (a->output == OUT_COLLAPSED)
		return true;
	return a->output == OUT_NONE && ext &&
	       (!strcmp(ext, ".collapsed") || !strcmp(ext, ".folded"));
}

static int do_dump(JavaVM *vm, const struct args *a)
{
	if (!a->file)
		return 0; /* async-profiler would print it to its log */
	if (!writes_collapsed(a))
		return COMMAND_ERROR;
	return dump(vm, a) ? COMMAND_ERROR : 0;
}

static int run(JavaVM *vm, const struct args *a)
{
	switch (a->action) {
	case ACT_START:
		if (running)
			return COMMAND_ERROR; /* "Profiler already started" */
		running = started = true;
		session_mode = a->alloc ? MODE_ALLOC : a->lock ? MODE_LOCK : MODE_CPU;
		return 0;
	case ACT_STOP:
		if (!running)
			return COMMAND_ERROR; /* "Profiler is not active" */
		running = false;
		return a->output == OUT_NONE && !a->file ? 0 : do_dump(vm, a);
	case ACT_DUMP:
		return started ? do_dump(vm, a) : COMMAND_ERROR;
	case ACT_STATUS:
		return 0;
	case ACT_NONE:
		if (a->output == OUT_NONE)
			return 0;
		return started ? do_dump(vm, a) : COMMAND_ERROR;
	}
	return COMMAND_ERROR;
}

static const char *action_name(const struct args *a, bool ok)
{
	static const char *const names[] = { "none", "start", "stop", "dump", "status" };

	return ok ? names[a->action] : "invalid";
}

static jint handle(JavaVM *vm, const char *options)
{
	struct args a = { 0 };
	const char *lib = "?";
	char buf[OPTIONS_MAX];
	Dl_info dl;
	jint rc;
	bool ok;

	if (dladdr((void *)handle, &dl) && dl.dli_fname)
		lib = dl.dli_fname;
	ok = !options || strlen(options) < sizeof(buf);
	if (ok) {
		snprintf(buf, sizeof(buf), "%s", options ? options : "");
		ok = parse_options(&a, buf);
	}
	fprintf(stderr, "fake-asprof: %s uid=%u lib=%s options=%s\n", action_name(&a, ok),
		(unsigned)getuid(), lib, options ? options : "");
	if (!ok)
		return ARGUMENTS_ERROR;
	pthread_mutex_lock(&state_lock);
	rc = run(vm, &a);
	pthread_mutex_unlock(&state_lock);
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return handle(vm, options);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return handle(vm, options);
}
