/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the memory-bound tests of the readers (issue 12, class 3): sparse copies of real
 * ELF fixtures whose section headers claim gigabytes of holes, and an address-space limit
 * (RLIMIT_AS) under which a reader that allocates what a file claims fails its test instead
 * of succeeding on a big machine. ASan reserves terabytes of shadow memory, so under ASan the
 * limit is not set (hm_limit_as() returns false) and only the results are checked.
 *
 * Static functions: include this from one test file only.
 */
#ifndef SLIDEOPS_TESTS_HOSTILE_MEM_H
#define SLIDEOPS_TESTS_HOSTILE_MEM_H

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define HM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HM_ASAN 1
#endif
#endif

/* Not every test uses every helper. */
#define HM_FN static __attribute__((unused))

/* The address space a test process gets while it reads hostile files. */
#define HM_AS_LIMIT (512ull << 20)
/* What a sparse file claims: far beyond HM_AS_LIMIT, under the readers' 2 GiB file cap. */
#define HM_SPARSE_SIZE (1536ull << 20)

static struct rlimit hm_saved_as;

/* Lowers RLIMIT_AS to HM_AS_LIMIT; false (nothing set) under ASan. hm_restore_as() undoes it. */
HM_FN bool hm_limit_as(void)
{
#ifdef HM_ASAN
	return false;
#else
	struct rlimit r;

	if (getrlimit(RLIMIT_AS, &hm_saved_as))
		return false;
	r = hm_saved_as;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < HM_AS_LIMIT)
		return false;
	r.rlim_cur = HM_AS_LIMIT;
	return setrlimit(RLIMIT_AS, &r) == 0;
#endif
}

HM_FN void hm_restore_as(bool limited)
{
	if (limited)
		setrlimit(RLIMIT_AS, &hm_saved_as);
}

/* VmHWM of this process in KiB (0 if unknown). */
HM_FN long hm_vmhwm_kb(void)
{
	char line[128];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* One section header change: the section named @name gets @offset and @size (~0: unchanged). */
struct hm_patch {
	const char *name;
	uint64_t offset, size;
	uint32_t type; /* 0: unchanged */
};

/*
 * Copies the ELF64 little-endian file @src into a new unlinked temporary file, applies
 * @patches to its section headers, writes @extra (may be NULL) of @extra_len bytes at
 * @extra_off, and extends the file to @size with ftruncate (a hole: no blocks). Returns the fd
 * (read-write, the caller closes it) or -1.
 */
HM_FN int hm_sparse_copy(const char *src, const struct hm_patch *patches, size_t npatches,
			 const void *extra, size_t extra_len, uint64_t extra_off, uint64_t size)
{
	char path[] = "/tmp/hostile_mem_XXXXXX";
	uint8_t *buf = NULL;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	const char *names;
	long len;
	size_t i, k;
	FILE *f;
	int fd;

	f = fopen(src, "rbe");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = len > (long)sizeof(*eh) ? malloc((size_t)len) : NULL;
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	eh = (Elf64_Ehdr *)buf;
	sh = (Elf64_Shdr *)(buf + eh->e_shoff);
	names = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
	for (i = 1; i < eh->e_shnum; i++)
		for (k = 0; k < npatches; k++) {
			if (strcmp(names + sh[i].sh_name, patches[k].name))
				continue;
			if (patches[k].offset != ~0ull)
				sh[i].sh_offset = patches[k].offset;
			if (patches[k].size != ~0ull)
				sh[i].sh_size = patches[k].size;
			if (patches[k].type)
				sh[i].sh_type = patches[k].type;
		}
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		if (pwrite(fd, buf, (size_t)len, 0) != len ||
		    (extra &&
		     pwrite(fd, extra, extra_len, (off_t)extra_off) != (ssize_t)extra_len) ||
		    ftruncate(fd, (off_t)size)) {
			close(fd);
			fd = -1;
		}
	}
	free(buf);
	return fd;
}

#endif
