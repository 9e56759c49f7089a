// SPDX-License-Identifier: Apache-2.0
/*
 * limits_hostile: the programs of the hostile containers of tests/integration/test_daemon_limits.sh
 * (issue 12). Each runs a little hot code (hostile_loop: about 20% of one CPU) until killed.
 *
 *   limits_hostile map FILE           maps FILE (read-only, e.g. .../lib/server/libjvm.so) and runs
 *   limits_hostile sparse SRC DST GB  writes DST: a copy of the executable SRC that still runs,
 *                                     made GB GiB long (sparse: a hole after the real content)
 *                                     with a section header table at its end that claims a
 *                                     .symtab, .dynsym, .strtab, .eh_frame, .gopclntab and
 *                                     .debug_info of gigabytes each, all inside the file; exits
 *   limits_hostile names              runs with a second thread whose name is not UTF-8
 *   limits_hostile                    just runs (what the sparse copy does)
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t hostile_sink;

/* About 20 ms of integer work. */
__attribute__((noinline, used)) void hostile_loop(void)
{
	struct timespec t0, t;
	uint64_t x = hostile_sink | 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	hostile_sink = x;
}

static void *run(void *arg)
{
	(void)arg;
	for (;;) {
		hostile_loop();
		usleep(80000);
	}
	return NULL;
}

static int map_file(const char *path)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror(path);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	run(NULL);
	return 0;
}

static int copy_file(const char *src, const char *dst, off_t *size)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0) {
		perror("open");
		return -1;
	}
	*size = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			perror("write");
			return -1;
		}
		*size += n;
	}
	close(in);
	return n < 0 ? -1 : out;
}

static const char shstrtab[] = "\0.shstrtab\0.symtab\0.strtab\0.eh_frame\0.gopclntab\0"
			       ".debug_info\0.dynsym";

static Elf64_Shdr shdr(const char *name, uint32_t type, uint64_t off, uint64_t size,
		       uint64_t entsize, uint32_t link)
{
	Elf64_Shdr s = { 0 };
	const char *p;

	for (p = shstrtab + 1; *p && strcmp(p, name); p += strlen(p) + 1)
		;
	s.sh_name = (uint32_t)(p - shstrtab);
	s.sh_type = type;
	s.sh_offset = off;
	s.sh_size = size;
	s.sh_entsize = entsize;
	s.sh_link = link;
	s.sh_addralign = 8;
	if (type == SHT_PROGBITS)
		s.sh_flags = SHF_ALLOC;
	return s;
}

/* The sparse executable: SRC's bytes, a hole, names and section headers at the end. */
static int make_sparse(const char *src, const char *dst, unsigned gib)
{
	const uint64_t G = 1ull << 30, total = (uint64_t)gib * G;
	Elf64_Shdr sh[8];
	Elf64_Ehdr eh;
	off_t size, names;
	int fd;

	if (gib < 4) {
		fprintf(stderr, "sparse: at least 4 GiB\n");
		return 2;
	}
	fd = copy_file(src, dst, &size);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 1;
	names = (size + 7) & ~7;
	sh[0] = (Elf64_Shdr){ 0 };
	sh[1] = shdr(".shstrtab", SHT_STRTAB, (uint64_t)names, sizeof(shstrtab), 0, 0);
	sh[2] = shdr(".symtab", SHT_SYMTAB, G, total - 2 * G, sizeof(Elf64_Sym), 3);
	sh[3] = shdr(".strtab", SHT_STRTAB, G, total - 2 * G, 0, 0);
	sh[4] = shdr(".eh_frame", SHT_PROGBITS, G, total - 2 * G, 0, 0);
	sh[5] = shdr(".gopclntab", SHT_PROGBITS, G, total - 2 * G, 0, 0);
	sh[6] = shdr(".debug_info", SHT_PROGBITS, G, total - 2 * G, 0, 0);
	sh[7] = shdr(".dynsym", SHT_DYNSYM, G, total - 2 * G, sizeof(Elf64_Sym), 3);
	eh.e_shoff = total - sizeof(sh);
	eh.e_shnum = 8;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shstrndx = 1;
	if (pwrite(fd, shstrtab, sizeof(shstrtab), names) != (ssize_t)sizeof(shstrtab) ||
	    pwrite(fd, sh, sizeof(sh), (off_t)eh.e_shoff) != (ssize_t)sizeof(sh) ||
	    pwrite(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || close(fd) < 0) {
		perror(dst);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc >= 3 && !strcmp(argv[1], "map"))
		return map_file(argv[2]);
	if (argc >= 5 && !strcmp(argv[1], "sparse"))
		return make_sparse(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 10));
	if (argc >= 2 && !strcmp(argv[1], "names")) {
		if (pthread_create(&t, NULL, run, NULL))
			return 1;
		/* not UTF-8: a lone continuation byte, an invalid lead, a cut 3-byte sequence */
		pthread_setname_np(t, "\x80\xff\xfe-\xe2\x82");
	}
	run(NULL);
	return 0;
}
