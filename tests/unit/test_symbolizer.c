// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/symbolizer.h"

#include "base/array.h"
#include "tests/unit/hostile_mem.h"
#define UNUSED __attribute__((unused))
#define FIXTURES "tests/fixtures/elf/"
#define EXEC_BID "309f114d8c8dd873e055c070a510077dea250ebb"
#define LIB_BID "eb0c48940ed579cc2c812ac66178ed23b4bba18e"
#define LIB_A 0x7f0000000000ull		/* lib-stripped.so */
#define LIB_B 0x7f1000000000ull		/* lib.so */

extern char *__cxa_demangle(const char *, char *, size_t *, int *) __attribute__((weak));

static char tmpdir[] = "/tmp/test_symbolizer.XXXXXX";

static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp %s %s/root/%s", from, tmpdir, to);
	assert_int_equal(system(cmd), 0);
}

static uint64_t inode_of(const char *rel, bool in_root)
{
	char path[PATH_MAX];
	struct stat sb;

	if (in_root)
		snprintf(path, sizeof(path), "%s/root/%s", tmpdir, rel);
	else
		snprintf(path, sizeof(path), "%s", rel);
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_ino;
}

static void write_maps(int tgid, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", tmpdir, tgid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/root", tmpdir, tgid);
	assert_int_equal(symlink("../root", path), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", tmpdir, tgid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A fake proc root: tgid 100 runs the non-PIE exec with the stripped lib, an anonymous JIT
 * region, a vdso without readable memory, a deleted library and a symlink out of its root;
 * 200 maps the same stripped lib (same inode), 300 the unstripped lib.so of the same build id,
 * 500 another copy of lib.so (another inode, same build id).
 */
static int setup_fixture(void **state UNUSED)
{
	char buf[2 * PATH_MAX], real[PATH_MAX], link[PATH_MAX];
	uint64_t exec, stripped, lib, lib2, notelf, outside;

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(buf, sizeof(buf), "%s/root", tmpdir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/root/bin", tmpdir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/root/lib", tmpdir);
	mkdir(buf, 0755);
	copy_file(FIXTURES "exec", "bin/exec");
	copy_file(FIXTURES "lib-stripped.so", "lib/libfx.so");
	copy_file(FIXTURES "lib.so", "lib/libfx-dbg.so");
	copy_file(FIXTURES "lib.so", "lib/libfx-copy.so");
	copy_file(FIXTURES "fixture.c", "bin/notelf");
	copy_file("tests/fixtures/go/hot-stripped", "bin/hot");
	if (!realpath(FIXTURES "lib.so", real))
		return -1;
	snprintf(link, sizeof(link), "%s/root/lib/escape.so", tmpdir);
	if (symlink(real, link))
		return -1;
	snprintf(link, sizeof(link), "%s/root/lib/escape2.so", tmpdir);
	snprintf(buf, sizeof(buf), "../../../../../../../../../..%s", real);
	if (symlink(buf, link))
		return -1;
	exec = inode_of("bin/exec", true);
	stripped = inode_of("lib/libfx.so", true);
	lib = inode_of("lib/libfx-dbg.so", true);
	lib2 = inode_of("lib/libfx-copy.so", true);
	notelf = inode_of("bin/notelf", true);
	outside = inode_of(real, false);

	snprintf(buf, sizeof(buf),
		 "00400000-00401000 r--p 00000000 fe:00 %1$lu  /bin/exec\n"
		 "00401000-00402000 r-xp 00001000 fe:00 %1$lu  /bin/exec\n"
		 "00402000-00403000 rwxp 00000000 00:00 0 \n"
		 "00500000-00501000 r-xp 00000000 fe:00 %4$lu  /bin/notelf\n"
		 "7ef000000000-7ef000001000 r-xp 00001000 fe:00 999 /lib/gone.so (deleted)\n"
		 "7ef100000000-7ef100001000 r-xp 00001000 fe:00 %3$lu /lib/escape.so\n"
		 "7ef200000000-7ef200001000 r-xp 00001000 fe:00 %3$lu /lib/escape2.so\n"
		 "7f0000000000-7f0000001000 r--p 00000000 fe:00 %2$lu /lib/libfx.so\n"
		 "7f0000001000-7f0000002000 r-xp 00001000 fe:00 %2$lu /lib/libfx.so\n"
		 "7f0000002000-7f0000003000 r--p 00002000 fe:00 %2$lu /lib/libfx.so\n"
		 "7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0      [vdso]\n"
		 "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n",
		 (unsigned long)exec, (unsigned long)stripped, (unsigned long)outside,
		 (unsigned long)notelf);
	write_maps(100, buf);
	snprintf(buf, sizeof(buf),
		 "7f0000001000-7f0000002000 r-xp 00001000 fe:00 %lu /lib/libfx.so\n",
		 (unsigned long)stripped);
	write_maps(200, buf);
	snprintf(buf, sizeof(buf),
		 "7f1000001000-7f1000002000 r-xp 00001000 fe:00 %lu /lib/libfx-dbg.so\n",
		 (unsigned long)lib);
	write_maps(300, buf);
	snprintf(buf, sizeof(buf),
		 "7f1000001000-7f1000002000 r-xp 00001000 fe:00 %lu /lib/libfx-copy.so\n",
		 (unsigned long)lib2);
	write_maps(500, buf);
	write_maps(600, "");
	snprintf(buf, sizeof(buf),
		 "00400000-00461000 r-xp 00000000 fe:00 %lu /bin/hot\n"
		 "00461000-004d2000 r--p 00061000 fe:00 %lu /bin/hot\n",
		 (unsigned long)inode_of("bin/hot", true), (unsigned long)inode_of("bin/hot", true));
	write_maps(800, buf);
	return 0;
}

static int teardown_fixture(void **state UNUSED)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_fixture(void **state UNUSED)
{
	const char *gamma = __cxa_demangle ? "fx::gamma(int)" : "_ZN2fx5gammaEi";
	const struct {
		int tgid;
		uint64_t ip;
		int ret;
		const char *name, *dso;
		uint64_t dso_addr;
		const char *bid;
		bool stripped;
	} cases[] = {
		{ 100, 0x401005, 0, "fx_local", "/bin/exec", 0x401005, EXEC_BID, false },
		{ 100, 0x401022, 0, gamma, "/bin/exec", 0x401022, EXEC_BID, false },
		{ 100, 0x401043, 0, NULL, "/bin/exec", 0x401043, EXEC_BID, false },
		{ 100, 0x401900, 0, NULL, "/bin/exec", 0x401900, EXEC_BID, false }, /* page tail */
		{ 100, 0x402010, 0, NULL, "[anon]", 0x10, NULL, false },
		{ 100, 0x500010, 0, NULL, "/bin/notelf", 0x10, NULL, false },
		{ 100, 0x7ef000000010, 0, NULL, "/lib/gone.so", 0x1010, NULL, false },
		{ 100, 0x7ef100000035, 0, NULL, "/lib/escape.so", 0x1035, NULL, false },
		{ 100, 0x7ef200000035, 0, NULL, "/lib/escape2.so", 0x1035, NULL, false },
		{ 100, LIB_A + 0x1030, 0, "fx_alpha", "/lib/libfx.so", 0x1030, LIB_BID, true },
		{ 100, LIB_A + 0x1035, 0, NULL, "/lib/libfx.so", 0x1035, LIB_BID, true },
		{ 100, 0x7ffc00000100, 0, NULL, "[vdso]", 0x100, NULL, false },
		{ 200, LIB_A + 0x1040, 0, "fx_beta", "/lib/libfx.so", 0x1040, LIB_BID, true },
		/* The unstripped build of the same build id replaces the stripped one... */
		{ 300, LIB_B + 0x1035, 0, "fx_local", "/lib/libfx-dbg.so", 0x1035, LIB_BID, false },
		/* ...for later processes only: 100's snapshot keeps what it had. */
		{ 100, LIB_A + 0x1035, 0, NULL, "/lib/libfx.so", 0x1035, LIB_BID, true },
		{ 500, LIB_B + 0x1035, 0, "fx_local", "/lib/libfx-copy.so", 0x1035, LIB_BID, false },
		/* Error rows. */
		{ 100, 0x7ffd00000010, -ENOENT },	/* [stack] is not executable */
		{ 100, 0x400010, -ENOENT },		/* nor the ELF header page */
		{ 100, 0, -ENOENT },
		{ 100, UINT64_MAX, -ENOENT },
		{ 600, 0x401000, -ENOENT },		/* no mappings (a kernel thread) */
		{ 700, 0x401000, -ESRCH },		/* never seen, gone */
		{ 0, 0x401000, -EINVAL },
	};
	struct symbolizer_opts opts = { .proc_root = tmpdir };
	struct symbolizer_stats stats;
	struct symbolizer *s;
	struct sym_frame f;
	size_t i;

	assert_int_equal(symbolizer__new(&opts, &s), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&f, 0xa5, sizeof(f));
		assert_int_equal(symbolizer__user(s, cases[i].tgid, cases[i].ip, &f), cases[i].ret);
		if (cases[i].ret)
			continue;
		if (cases[i].name)
			assert_string_equal(f.name, cases[i].name);
		else
			assert_null(f.name);
		assert_string_equal(f.dso, cases[i].dso);
		assert_true(f.dso_addr == cases[i].dso_addr);
		if (cases[i].bid)
			assert_string_equal(f.build_id, cases[i].bid);
		else
			assert_null(f.build_id);
		assert_int_equal(f.stripped, cases[i].stripped);
		assert_false(f.kernel);
		assert_null(f.file);
		assert_int_equal(f.line, 0);
	}
	symbolizer__stats(s, &stats);
	assert_int_equal(stats.processes, 5);		/* 100 200 300 500 600 */
	assert_int_equal(stats.dso_loads, 4);		/* exec, notelf, libfx.so, libfx-dbg.so */
	assert_int_equal(stats.dso_hits, 2);		/* 200 by inode, 500 by build id */
	assert_int_equal(stats.dso_open_failures, 3);	/* gone, escape, escape2 */
	assert_int_equal(stats.dsos, 4);
	symbolizer__free(s);
}

static void test_bounds(void **state UNUSED)
{
	static const int order[] = { 100, 200, 300, 500, 100, 300 };
	struct symbolizer_opts opts = { .proc_root = tmpdir, .max_dsos = 1, .max_processes = 2 };
	struct symbolizer_stats stats;
	struct symbolizer *s;
	struct sym_frame f;
	size_t i;

	assert_int_equal(symbolizer__new(&opts, &s), 0);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(symbolizer__add_process(s, order[i]), 0);
		symbolizer__stats(s, &stats);
		assert_true(stats.processes <= 2);
		/* Over max_dsos only while the two snapshots hold more than one DSO. */
		assert_true(stats.dsos <= 3);
	}
	assert_int_equal(stats.process_evictions, 4);
	assert_true(stats.dso_evictions > 0);
	/* An evicted snapshot is taken again on demand. */
	assert_int_equal(symbolizer__user(s, 200, LIB_A + 0x1030, &f), 0);
	assert_string_equal(f.name, "fx_alpha");
	/* Replacing a snapshot (exec) keeps the count. */
	assert_int_equal(symbolizer__add_process(s, 200), 0);
	symbolizer__stats(s, &stats);
	assert_int_equal(stats.processes, 2);
	assert_int_equal(symbolizer__add_process(s, 700), -ESRCH);
	assert_int_equal(symbolizer__add_process(s, -1), -EINVAL);
	symbolizer__free(s);
}

/* A sweep drops the snapshots of the processes that exited, and only those. */
static void test_sweep(void **state UNUSED)
{
	static const struct {
		int gone; /* the pid whose /proc directory is taken away; 0: none */
		int ret;
		size_t left;
	} cases[] = {
		{ 0, 0, 3 },   /* all living */
		{ 200, 1, 2 }, /* one exited */
		{ 200, 0, 2 }, /* swept already */
		{ 300, 1, 1 },
	};
	struct symbolizer_opts opts = { .proc_root = tmpdir };
	char from[PATH_MAX], to[PATH_MAX + 8];
	struct symbolizer_stats stats;
	struct symbolizer *s;
	struct sym_frame f;
	size_t i;

	assert_int_equal(symbolizer__new(&opts, &s), 0);
	assert_int_equal(symbolizer__add_process(s, 100), 0);
	assert_int_equal(symbolizer__add_process(s, 200), 0);
	assert_int_equal(symbolizer__add_process(s, 300), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		if (cases[i].gone) {
			snprintf(from, sizeof(from), "%s/%d", tmpdir, cases[i].gone);
			snprintf(to, sizeof(to), "%s.gone", from);
			if (!access(from, F_OK))
				assert_int_equal(rename(from, to), 0);
		}
		assert_int_equal(symbolizer__sweep(s), cases[i].ret);
		symbolizer__stats(s, &stats);
		assert_int_equal(stats.processes, cases[i].left);
	}
	/* a swept process is not named again from a stale snapshot */
	assert_int_equal(symbolizer__user(s, 200, LIB_A + 0x1030, &f), -ESRCH);
	assert_int_equal(symbolizer__user(s, 100, 0x401000, &f), 0);
	for (i = 200; i <= 300; i += 100) {
		snprintf(from, sizeof(from), "%s/%zu", tmpdir, i);
		snprintf(to, sizeof(to), "%s.gone", from);
		assert_int_equal(rename(to, from), 0);
	}
	symbolizer__free(s);
}

static void test_kernel(void **state UNUSED)
{
	static const struct {
		const char *kallsyms;	/* NULL: no file */
		uint64_t ip;
		int status, ret;
		const char *name, *dso;
	} cases[] = {
		{ "ffffffff81000000 T _stext\nffffffff81001000 t do_sys_poll\n"
		  "ffffffffc0000000 t nft_do_chain\t[nf_tables]\n",
		  0xffffffff81001010, 0, 0, "do_sys_poll", "[kernel.kallsyms]" },
		{ "ffffffff81000000 T _stext\nffffffffc0000000 t nft_do_chain\t[nf_tables]\n",
		  0xffffffffc0000010, 0, 0, "nft_do_chain", "[nf_tables]" },
		{ "ffffffff81000000 T _stext\n", 0x1000, 0, -ENOENT },
		{ "0000000000000000 T _stext\n0000000000000000 t foo\n", 0xffffffff81000000, -EPERM,
		  -ENOENT },
		{ NULL, 0xffffffff81000000, -ENOENT, -ENOENT },
	};
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct symbolizer *s;
	struct sym_frame f;
	size_t i;
	FILE *fp;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct symbolizer_opts opts = { .proc_root = dir };

		print_message("case %zu\n", i);
		snprintf(dir, sizeof(dir), "%s/k%zu", tmpdir, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		if (cases[i].kallsyms) {
			snprintf(path, sizeof(path), "%s/kallsyms", dir);
			fp = fopen(path, "w");
			assert_non_null(fp);
			fputs(cases[i].kallsyms, fp);
			fclose(fp);
		}
		assert_int_equal(symbolizer__new(&opts, &s), 0);
		assert_int_equal(symbolizer__kernel(s, cases[i].ip, &f), cases[i].ret);
		assert_int_equal(symbolizer__kernel_status(s), cases[i].status);
		if (!cases[i].ret) {
			assert_string_equal(f.name, cases[i].name);
			assert_string_equal(f.dso, cases[i].dso);
			assert_true(f.kernel);
			assert_true(f.dso_addr == cases[i].ip);
		}
		symbolizer__free(s);
	}
}

/* ---- end to end on this very process ---- */

__attribute__((noinline, used)) int e2e_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7;
}

static void test_self(void **state UNUSED)
{
	char exe[PATH_MAX];
	struct symbolizer *s;
	struct sym_frame f;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(symbolizer__new(NULL, &s), 0);
	assert_int_equal(symbolizer__add_process(s, getpid()), 0);
	assert_int_equal(symbolizer__user(s, getpid(), (uintptr_t)e2e_target + 2, &f), 0);
	assert_string_equal(f.name, "e2e_target");
	assert_string_equal(f.dso, exe);
	assert_false(f.stripped);
	/* A libc function: named from .dynsym even if libc is stripped. */
	assert_int_equal(symbolizer__user(s, getpid(), (uintptr_t)getpid + 1, &f), 0);
	assert_non_null(f.name);
	assert_non_null(strstr(f.name, "getpid"));
	assert_non_null(strstr(f.dso, "libc"));
	/* The vdso: read from /proc/PID/mem (allowed on ourselves). */
	assert_int_equal(symbolizer__user(s, getpid(), getauxval(AT_SYSINFO_EHDR) + 0x10, &f), 0);
	assert_string_equal(f.dso, "[vdso]");
	assert_non_null(f.build_id);
	assert_false(f.stripped);
	symbolizer__free(s);
}

/* A snapshot outlives its process. */
static void test_exited(void **state UNUSED)
{
	struct symbolizer *s;
	struct sym_frame f;
	int status, p[2];
	pid_t child;
	char c;

	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(p[0]);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(symbolizer__new(NULL, &s), 0);
	assert_int_equal(symbolizer__add_process(s, child), 0);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(symbolizer__user(s, child, (uintptr_t)e2e_target, &f), 0);
	assert_string_equal(f.name, "e2e_target");
	/* Re-snapshotting a gone process fails but keeps nothing stale around. */
	assert_int_equal(symbolizer__add_process(s, child), -ESRCH);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

/*
 * A stripped Go binary (tests/fixtures/go, -ldflags='-s -w') is named from its .gopclntab:
 * function, file:line and the frames inlined at the pc (addresses and lines: layout.txt).
 */
static void test_go(void **state UNUSED)
{
	struct symbolizer_opts opts = { .proc_root = tmpdir };
	struct sym_frame f[4];
	struct symbolizer *s;

	assert_int_equal(symbolizer__new(&opts, &s), 0);
	/* main.hot at hot.go:23, where main.mid and main.leaf are inlined. */
	assert_int_equal(symbolizer__user(s, 800, 0x46060a, &f[0]), 0);
	assert_string_equal(f[0].name, "main.hot");
	assert_string_equal(f[0].file, "gofixture/hot.go");
	assert_int_equal(f[0].line, 23);
	assert_true(f[0].go);
	assert_true(f[0].stripped);
	assert_string_equal(f[0].dso, "/bin/hot");
	assert_int_equal(f[0].dso_addr, 0x46060a);
	assert_int_equal(symbolizer__user_inline(s, 800, 0x46060a, f, 4), 3);
	assert_string_equal(f[0].name, "main.leaf");
	assert_int_equal(f[0].line, 12);
	assert_string_equal(f[1].name, "main.mid");
	assert_int_equal(f[1].line, 16);
	assert_string_equal(f[2].name, "main.hot");
	assert_int_equal(f[2].line, 23);
	assert_true(f[0].go && f[1].go && f[2].go);
	assert_string_equal(f[0].dso, "/bin/hot");
	assert_int_equal(symbolizer__user_inline(s, 800, 0x46060a, f, 1), 1);
	assert_string_equal(f[0].name, "main.hot");
	assert_int_equal(symbolizer__user_inline(s, 800, 0x46060a, f, 0), -EINVAL);
	/* main.main, not inlined; then a C binary's frame is not Go. */
	assert_int_equal(symbolizer__user_inline(s, 800, 0x460654, f, 4), 1);
	assert_string_equal(f[0].name, "main.main");
	assert_int_equal(f[0].line, 29);
	assert_int_equal(symbolizer__user_inline(s, 100, 0x401005, f, 4), 1);
	assert_string_equal(f[0].name, "fx_local");
	assert_false(f[0].go);
	assert_null(f[0].file);
	symbolizer__free(s);
}

/*
 * A stripped library named from its debug file on the node (the build-id path inside its
 * root), and a decoy there of another build that names nothing: rows of (tgid, what the
 * root's build-id path holds, name expected at fx_local, stripped).
 */
static void test_debug_file(void **state UNUSED)
{
	static const struct {
		int tgid;
		const char *debug; /* the fixture at the build-id path, or NULL */
		const char *name;
		bool stripped;
		uint64_t files, refused;
	} cases[] = {
		{ 900, "lib.so", "fx_local", false, 1, 0 },
		{ 901, "exec", NULL, true, 0, 1 },	     /* another build id */
		{ 902, "lib-stripped.so", NULL, true, 0, 1 }, /* the stripped file itself */
		{ 903, NULL, NULL, true, 0, 0 },
	};
	char buf[4 * PATH_MAX], host[PATH_MAX];
	struct symbolizer_stats stats;
	struct symbolizer *s;
	struct sym_frame f;
	size_t i;

	snprintf(host, sizeof(host), "%s/host", tmpdir);
	assert_int_equal(mkdir(host, 0755), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct symbolizer_opts opts = { .proc_root = tmpdir, .host_root = host };
		int t = cases[i].tgid;

		print_message("case %zu\n", i);
		snprintf(buf, sizeof(buf),
			 "set -e; d=$PWD; cd %1$s; mkdir -p %2$d r%2$d/lib r%2$d/usr/lib/debug/.build-id/eb; "
			 "ln -s ../r%2$d %2$d/root; cp $d/" FIXTURES "lib-stripped.so r%2$d/lib/libfx.so; "
			 "[ -z '%3$s' ] || cp $d/" FIXTURES "%3$s r%2$d/usr/lib/debug/.build-id/eb/"
			 "0c48940ed579cc2c812ac66178ed23b4bba18e.debug; "
			 "printf '7f0000001000-7f0000002000 r-xp 00001000 fe:00 %%s /lib/libfx.so\\n' "
			 "$(stat -c %%i r%2$d/lib/libfx.so) > %2$d/maps",
			 tmpdir, t, cases[i].debug ? cases[i].debug : "");
		assert_int_equal(system(buf), 0);
		assert_int_equal(symbolizer__new(&opts, &s), 0);
		assert_int_equal(symbolizer__user(s, t, LIB_A + 0x1035, &f), 0);
		if (cases[i].name)
			assert_string_equal(f.name, cases[i].name);
		else
			assert_null(f.name);
		assert_int_equal(f.stripped, cases[i].stripped);
		assert_string_equal(f.build_id, LIB_BID);
		assert_string_equal(f.dso, "/lib/libfx.so");
		/* .dynsym's names still come through */
		assert_int_equal(symbolizer__user(s, t, LIB_A + 0x1030, &f), 0);
		assert_string_equal(f.name, "fx_alpha");
		symbolizer__stats(s, &stats);
		assert_int_equal(stats.debug_files, cases[i].files);
		assert_int_equal(stats.debug_refused, cases[i].refused);
		symbolizer__free(s);
	}
}

/* This test binary (-O2 -g): file:line and the inlined helper from its DWARF. */
extern const char sym_mark[];
volatile int sym_sink;

enum { SYM_HELPER_LINE = __LINE__ + 4 };
static inline __attribute__((always_inline)) int sym_helper(int x)
{
	x += sym_sink;
	__asm__ volatile(".globl sym_mark\nsym_mark:\n\tnop" ::: "memory");
	return x * 3;
}

enum { SYM_CALL_LINE = __LINE__ + 4 };
__attribute__((noinline, used)) int sym_hot(int x)
{
	x ^= sym_sink;
	return sym_helper(x) + 1;
}

static void test_dwarf(void **state UNUSED)
{
	struct symbolizer_opts opts = { .max_dwarf = 1 };
	struct symbolizer_stats stats;
	struct sym_frame f[4];
	struct symbolizer *s;

	assert_int_equal(sym_hot(1), 4);
	assert_int_equal(symbolizer__new(&opts, &s), 0);
	assert_int_equal(symbolizer__user_inline(s, getpid(), (uintptr_t)sym_mark, f, 4), 2);
	assert_string_equal(f[0].name, "sym_helper");
	assert_int_equal(f[0].line, SYM_HELPER_LINE);
	assert_non_null(strstr(f[0].file, "test_symbolizer.c"));
	assert_string_equal(f[1].name, "sym_hot");
	assert_int_equal(f[1].line, SYM_CALL_LINE);
	assert_false(f[0].stripped || f[1].stripped || f[0].go);
	assert_non_null(f[1].build_id);
	/* one frame: the function, at the call of its inlined helper */
	assert_int_equal(symbolizer__user(s, getpid(), (uintptr_t)sym_mark, f), 0);
	assert_string_equal(f[0].name, "sym_hot");
	assert_int_equal(f[0].line, SYM_CALL_LINE);
	symbolizer__stats(s, &stats);
	assert_int_equal(stats.dwarf_loads, 1);
	assert_int_equal(stats.dwarfs, 1);
	/* the sweep closes only what no snapshot maps */
	assert_int_equal(symbolizer__sweep(s), 0);
	symbolizer__stats(s, &stats);
	assert_int_equal(stats.dwarfs, 1);
	symbolizer__free(s);
}

/* The note about files not read for names: counts, reasons, the cap, cut on a character. */
static void test_refused_note(void **state UNUSED)
{
	static const struct sym_refused r[] = {
		{ "/app/big.so", ".symtab claims 3 GiB, but the file has 20 KiB on disk", true },
		{ "/app/\xd0\x96.so", "the file is 3 GiB, over the 2 GiB limit", true },
		{ "/app/fifo.so", "is not a regular file", false },
	};
	static const struct {
		size_t n, total, size;
		const char *out;
	} cases[] = {
		{ 1, 1, 512, "1 file was not read for names (over the size limits): /app/big.so "
			     "(.symtab claims 3 GiB, but the file has 20 KiB on disk); frames in it "
			     "show as addresses where no other table names them." },
		{ 2, 2, 512, "2 files were not read for names (over the size limits): /app/big.so "
			     "(.symtab claims 3 GiB, but the file has 20 KiB on disk), /app/\xd0\x96.so "
			     "(the file is 3 GiB, over the 2 GiB limit); frames in them show as "
			     "addresses where no other table names them." },
		{ 1, 12, 512, "12 files were not read for names (over the size limits): /app/big.so "
			      "(.symtab claims 3 GiB, but the file has 20 KiB on disk), and 11 more; "
			      "frames in them show as addresses where no other table names them." },
		{ 3, 3, 512, "3 files were not read for names (over the size limits, or unsafe to "
			     "open): /app/big.so (.symtab claims 3 GiB, but the file has 20 KiB on "
			     "disk), /app/\xd0\x96.so (the file is 3 GiB, over the 2 GiB limit), "
			     "/app/fifo.so (is not a regular file); frames in them show as addresses "
			     "where no other table names them." },
		{ 0, 0, 512, "" },
		/* Cut inside the two-byte letter: it goes whole, "..." says the note was cut. */
		{ 2, 2, 134, "2 files were not read for names (over the size limits): /app/big.so "
			     "(.symtab claims 3 GiB, but the file has 20 KiB on disk), /app/..." },
	};
	char buf[512];
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		n = symbolizer_refused_note(r, cases[i].n, cases[i].total, buf, cases[i].size);
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
		assert_true(n < cases[i].size);
	}
	assert_int_equal(symbolizer_refused_note(NULL, 0, 0, NULL, 0), 0);
}

/*
 * A process that maps a sparse copy of a fixture claiming 1.5 GiB of symbols: the file is
 * recorded once (two mappings, two snapshots), with the claim and its bytes on disk.
 */
static void test_refused(void **state UNUSED)
{
	static const struct hm_patch patch = { ".symtab", 0x4000, HM_SPARSE_SIZE - 0x4000 };
	const struct sym_refused *r;
	struct symbolizer *s;
	size_t total;
	void *a, *b;
	int fd;

	fd = hm_sparse_copy(FIXTURES "lib.so", &patch, 1, NULL, 0, 0, HM_SPARSE_SIZE);
	assert_true(fd >= 0);
	a = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	b = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(a != MAP_FAILED && b != MAP_FAILED);
	assert_int_equal(symbolizer__new(NULL, &s), 0);
	assert_int_equal(symbolizer__refused(s, &r, &total), 0);
	assert_int_equal(total, 0);
	assert_int_equal(symbolizer__add_process(s, getpid()), 0);
	assert_int_equal(symbolizer__add_process(s, getpid()), 0);
	assert_int_equal(symbolizer__refused(s, &r, &total), 1);
	assert_int_equal(total, 1);
	assert_non_null(strstr(r[0].path, "/tmp/hostile_mem_"));
	assert_true(r[0].size);
	assert_non_null(strstr(r[0].reason, ".symtab claims 1.4 GiB, but the file has "));
	munmap(a, 4096);
	munmap(b, 4096);
	close(fd);
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_exited),
		cmocka_unit_test(test_go),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_dwarf),
		cmocka_unit_test(test_refused_note),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup_fixture, teardown_fixture);
}
