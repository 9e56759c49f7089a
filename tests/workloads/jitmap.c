// SPDX-License-Identifier: Apache-2.0
/*
 * A JIT in miniature (issue 14): copies a hand-written x86-64 loop into anonymous memory, makes
 * it executable, names it in /tmp/perf-<pid>.map (the pid as this process sees it, so in its
 * own pid namespace) and runs it for argv[1] seconds (default 10). Prints "ready" once the map
 * is written and the loop runs. Other architectures print "unsupported" and exit 77.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
/*
 * uint64_t f(uint64_t n), n > 0:
 *	xor eax, eax; 1: add rax, rdi; xor rax, 0x55; dec rdi; jnz 1b; ret
 * No call or jump leaves it, so it runs anywhere.
 */
static const unsigned char jit_code[] = {
	0x31, 0xc0,		/* xor %eax,%eax */
	0x48, 0x01, 0xf8,	/* add %rdi,%rax */
	0x48, 0x83, 0xf0, 0x55, /* xor $0x55,%rax */
	0x48, 0xff, 0xcf,	/* dec %rdi */
	0x75, 0xf4,		/* jnz -12 */
	0xc3,			/* ret */
};
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	double seconds = argc > 1 ? atof(argv[1]) : 10, end;
	uint64_t (*fn)(uint64_t);
	volatile uint64_t sink = 0;
	long page = sysconf(_SC_PAGESIZE);
	char path[64];
	unsigned char *mem;
	FILE *f;

	mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(mem, 0xcc, (size_t)page);
	memcpy(mem, jit_code, sizeof(jit_code));
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	/* the hot loop, and a stub elsewhere in the page (with "0x", as some writers do) */
	fprintf(f, "%lx %zx jitted_hot_loop\n", (unsigned long)(uintptr_t)mem, sizeof(jit_code));
	fprintf(f, "0x%lx 0x40 LazyCompile:~unrelated stub.js:1\n",
		(unsigned long)(uintptr_t)(mem + page / 2));
	if (fclose(f)) {
		perror(path);
		return 1;
	}
	fn = (uint64_t(*)(uint64_t))(uintptr_t)mem;
	end = now_s() + seconds;
	sink += fn(1000);
	printf("ready pid=%d map=%s addr=%p\n", (int)getpid(), path, (void *)mem);
	fflush(stdout);
	while (now_s() < end)
		sink += fn(1u << 20);
	return sink == 42 ? 2 : 0;
#else
	(void)argc;
	(void)argv;
	puts("unsupported");
	return 77;
#endif
}
