// SPDX-License-Identifier: Apache-2.0
#include "runtimes/detect.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/log.h"

#define MAPS_MAX (16u << 20)		/* a JVM with thousands of threads stays well below */
#define RELEASE_MAX (64u << 10)
#define SCAN_CHUNK (1u << 20)
#define SYMTAB_MAX (64u << 20)		/* .dynsym/.symtab and their string tables */
#define NOTES_MAX (64u << 10)
#define GO_BI_MAGIC "\xff Go buildinf:"
#define GO_BI_MAGIC_LEN 14
#define GO_BI_HDR 32
#define GO_BI_ALIGN 16
#define GO_BI_READ 512			/* header + inline version string */
#define GO_VERSION_MAX 128
#define NUM_DIGITS_MAX 4

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

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
		[RUNTIME_JVM] = { "JVM", "JVM (OpenJDK %s)" },
		[RUNTIME_GO] = { "Go", "Go %s" },
		[RUNTIME_NODE] = { "Node.js", "Node.js %s" },
		[RUNTIME_RUBY] = { "Ruby", "Ruby %s" },
	};
	unsigned k = (unsigned)out->kind < RUNTIME_KIND_COUNT ? out->kind : RUNTIME_NATIVE;

	out->version[sizeof(out->version) - 1] = '\0';
	if (!out->version[0] || k == RUNTIME_NATIVE)
		snprintf(out->display, sizeof(out->display), "%s", fmt[k][0]);
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
static int parse_major_minor(const char *s, size_t len, size_t *i, unsigned *major,
			     unsigned *minor)
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

int runtime_python_version_from_lib(const char *path, char *ver, size_t size)
{
	const char *b;
	unsigned major, minor;
	size_t i = 0, len;

	if (!path)
		return -EINVAL;
	b = base_name(path);
	if (!has_prefix(b, "libpython"))
		return -EINVAL;
	b += strlen("libpython");
	len = strlen(b);
	if (parse_major_minor(b, len, &i, &major, &minor) || !python_major_ok(major, minor))
		return -EINVAL;
	/* ABI flags: "m" (<= 3.7), "d" (debug), "t" (free-threaded 3.13+), "u" (2.x wide). */
	while (i < len && i < 16 && is_lower(b[i]) && b[i] != 's')
		i++;
	if (strncmp(b + i, ".so", 3) || (b[i + 3] != '\0' && b[i + 3] != '.'))
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
}

int runtime_python_version_from_exe(const char *path, char *ver, size_t size)
{
	const char *b;
	unsigned major, minor;
	size_t i = 0, len;

	if (!path)
		return -EINVAL;
	b = base_name(path);
	if (!has_prefix(b, "python"))
		return -EINVAL;
	b += strlen("python");
	len = strlen(b);
	if (parse_major_minor(b, len, &i, &major, &minor) || !python_major_ok(major, minor))
		return -EINVAL;
	while (i < len && i < 16 && is_lower(b[i]))
		i++;
	if (b[i] != '\0')
		return -EINVAL;
	return put_version(ver, size, major, (int)minor);
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
	static const char *const words[] = { "jdk",	"jre",	  "java",    "temurin", "zulu",
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

static uint64_t read_uint(const uint8_t *p, unsigned n, bool big)
{
	uint64_t v = 0;
	unsigned k;

	for (k = 0; k < n; k++)
		v |= (uint64_t)p[big ? n - 1 - k : k] << (8 * k);
	return v;
}

int runtime_go_parse_buildinfo(const void *blob, size_t len, runtime_vread_fn_t vread, void *ctx,
			       char *ver, size_t size)
{
	const uint8_t *b = blob;
	uint8_t hdr[16], str[GO_VERSION_MAX];
	uint64_t addr, n = 0;
	unsigned ptrsize, shift = 0;
	size_t p;
	bool big;
	int err;

	if (!b || len < GO_BI_HDR || memcmp(b, GO_BI_MAGIC, GO_BI_MAGIC_LEN))
		return -EINVAL;
	ptrsize = b[14];
	big = b[15] & 1;
	if (b[15] & 2) {
		/* Go 1.18+: uvarint length and the bytes of the version, right after the header. */
		for (p = GO_BI_HDR;; p++) {
			if (p >= len || shift > 63)
				return -EINVAL;
			n |= (uint64_t)(b[p] & 0x7f) << shift;
			if (!(b[p] & 0x80))
				break;
			shift += 7;
		}
		p++;
		if (!n || n > GO_VERSION_MAX || n > len - p)
			return -EINVAL;
		return runtime_go_version_from_string((const char *)b + p, n, ver, size);
	}
	/* Before 1.18: a pointer to a Go string header {data, len} of the version. */
	if ((ptrsize != 4 && ptrsize != 8) || !vread)
		return -EINVAL;
	addr = read_uint(b + 16, ptrsize, big);
	err = vread(ctx, addr, hdr, 2 * ptrsize);
	if (err)
		return err;
	addr = read_uint(hdr, ptrsize, big);
	n = read_uint(hdr + ptrsize, ptrsize, big);
	if (!n || n > GO_VERSION_MAX)
		return -EINVAL;
	err = vread(ctx, addr, str, n);
	if (err)
		return err;
	return runtime_go_version_from_string((const char *)str, n, ver, size);
}

int runtime_node_version_from_lib(const char *path, char *ver, size_t size)
{
	/* NODE_MODULE_VERSION of each release line (node/doc/abi_version_registry.json). */
	static const struct { unsigned abi, major; } abis[] = {
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
	if (b[0] == '-') {			/* libruby-3.1.so.3.1 (Debian, ruby's default) */
		i = 1;
	} else if (!strncmp(b, ".so.", 4)) {	/* libruby.so.3.1 */
		i = 4;
	}					/* else libruby3.1.so */
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
	static const struct { const char *marker; char term; } marks[] = {
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
		for (tail = 0; j < len && tail < 5 && (is_lower(s[j]) || is_digit(s[j]) || s[j] == '+');
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

/* --- ELF files, read with pread (never mmap: a container may truncate its files) ---------- */

struct elf_file {
	int fd;
	Elf *elf;
	bool big;
	bool has_shdrs;
	uint64_t budget;	/* bytes left to scan in this file */
};

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* short file */
		got += (size_t)n;
	}
	return 0;
}

static int elf_file_open(int fd, struct elf_file *ef)
{
	GElf_Ehdr eh;
	size_t shnum = 0;

	elf_version(EV_CURRENT);
	ef->fd = fd;
	ef->budget = RUNTIME_SCAN_MAX;
	ef->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ef->elf)
		return -EINVAL;
	if (elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh)) {
		elf_end(ef->elf);
		ef->elf = NULL;
		return -EINVAL;
	}
	ef->big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	ef->has_shdrs = !elf_getshdrnum(ef->elf, &shnum) && shnum > 0;
	return 0;
}

static void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	ef->elf = NULL;
}

/* runtime_vread_fn_t over the PT_LOAD segments of an ELF file. */
static int elf_vread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct elf_file *ef = ctx;
	size_t i, phnum;
	GElf_Phdr ph;

	if (elf_getphdrnum(ef->elf, &phnum))
		return -EINVAL;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz ||
		    len > ph.p_filesz - (addr - ph.p_vaddr))
			continue;
		return pread_full(ef->fd, buf, len, ph.p_offset + (addr - ph.p_vaddr));
	}
	return -EFAULT;
}

typedef int (*scan_fn_t)(void *ctx, const char *buf, size_t len, uint64_t file_off);

/*
 * Calls @fn on [off, off + len) of the file in chunks that overlap by RUNTIME_SCAN_OVERLAP,
 * until @fn returns anything but -ENOENT or the file's scan budget is spent.
 */
static int scan_range(struct elf_file *ef, uint64_t off, uint64_t len, scan_fn_t fn, void *ctx)
{
	uint64_t end, pos = off;
	char *buf;
	size_t n;
	ssize_t got;
	int err = -ENOENT;

	if (len > ef->budget)
		len = ef->budget;
	end = off + len;
	if (end < off)
		return -EINVAL;
	buf = malloc(SCAN_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (pos < end) {
		n = end - pos < SCAN_CHUNK ? (size_t)(end - pos) : SCAN_CHUNK;
		got = pread(ef->fd, buf, n, (off_t)pos);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (got == 0)
			break;
		ef->budget -= (uint64_t)got < ef->budget ? (uint64_t)got : ef->budget;
		err = fn(ctx, buf, (size_t)got, pos);
		if (err != -ENOENT || pos + (uint64_t)got >= end || !ef->budget ||
		    (size_t)got <= RUNTIME_SCAN_OVERLAP)
			break;
		pos += (uint64_t)got - RUNTIME_SCAN_OVERLAP;
	}
	free(buf);
	return err;
}

static bool elf_section_by_name(struct elf_file *ef, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (!ef->has_shdrs || elf_getshdrstrndx(ef->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(ef->elf, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return out->sh_type != SHT_NOBITS;
	}
	return false;
}

struct version_scan {
	enum runtime_kind kind;
	char *ver;
	size_t size;
};

static int version_scan_fn(void *ctx, const char *buf, size_t len, uint64_t file_off)
{
	struct version_scan *vs = ctx;

	(void)file_off;
	return runtime_scan_version(vs->kind, buf, len, vs->ver, vs->size);
}

/* Scans .rodata, or without section headers the read-only PT_LOAD segments, for @kind's
 * version text. */
static int elf_scan_rodata(struct elf_file *ef, enum runtime_kind kind, char *ver, size_t size)
{
	struct version_scan vs = { kind, ver, size };
	size_t i, phnum;
	GElf_Shdr sh;
	GElf_Phdr ph;
	int err = -ENOENT;

	if (elf_section_by_name(ef, ".rodata", &sh))
		return scan_range(ef, sh.sh_offset, sh.sh_size, version_scan_fn, &vs);
	if (elf_getphdrnum(ef->elf, &phnum))
		return -ENOENT;
	for (i = 0; i < phnum && err == -ENOENT; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (ph.p_flags & (PF_W | PF_X)))
			continue;
		err = scan_range(ef, ph.p_offset, ph.p_filesz, version_scan_fn, &vs);
	}
	return err;
}

/* --- Go ----------------------------------------------------------------------------------- */

struct go_scan {
	struct elf_file *ef;
	GElf_Phdr ph;
	char *ver;
	size_t size;
};

static int go_read_buildinfo_at(struct elf_file *ef, uint64_t off, uint64_t avail, char *ver,
				size_t size)
{
	uint8_t blob[GO_BI_READ];
	size_t n = avail < sizeof(blob) ? (size_t)avail : sizeof(blob);
	int err;

	err = pread_full(ef->fd, blob, n, off);
	if (err)
		return err;
	return runtime_go_parse_buildinfo(blob, n, elf_vread, ef, ver, size);
}

/* Finds the build info magic, 16-byte aligned in the address space, as Go's debug/buildinfo
 * does when there is no .go.buildinfo section. */
static int go_scan_fn(void *ctx, const char *buf, size_t len, uint64_t file_off)
{
	struct go_scan *gs = ctx;
	const char *hit;
	uint64_t off, vaddr;
	size_t i;

	for (i = 0; i + GO_BI_MAGIC_LEN <= len; i = (size_t)(hit - buf) + 1) {
		hit = memmem(buf + i, len - i, GO_BI_MAGIC, GO_BI_MAGIC_LEN);
		if (!hit)
			break;
		off = file_off + (uint64_t)(hit - buf);
		vaddr = gs->ph.p_vaddr + (off - gs->ph.p_offset);
		if (vaddr % GO_BI_ALIGN)
			continue;
		if (!go_read_buildinfo_at(gs->ef, off, gs->ph.p_offset + gs->ph.p_filesz - off,
					  gs->ver, gs->size))
			return 0;
	}
	return -ENOENT;
}

/* A Go build id note ("Go", type 4) in a PT_NOTE segment. */
static bool go_note_in_phdrs(struct elf_file *ef)
{
	size_t i, phnum, pos;
	GElf_Phdr ph;
	uint8_t *buf;
	bool found = false;

	if (elf_getphdrnum(ef->elf, &phnum))
		return false;
	for (i = 0; i < phnum && !found; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    !ph.p_filesz || ph.p_filesz > NOTES_MAX)
			continue;
		buf = malloc(ph.p_filesz);
		if (!buf)
			return false;
		if (!pread_full(ef->fd, buf, ph.p_filesz, ph.p_offset)) {
			for (pos = 0; pos + 12 <= ph.p_filesz && !found;) {
				uint64_t nsz = read_uint(buf + pos, 4, ef->big);
				uint64_t dsz = read_uint(buf + pos + 4, 4, ef->big);
				uint64_t type = read_uint(buf + pos + 8, 4, ef->big);
				uint64_t next = pos + 12 + ((nsz + 3) & ~3ull) + ((dsz + 3) & ~3ull);

				if (nsz == 3 && type == 4 && pos + 15 <= ph.p_filesz &&
				    !memcmp(buf + pos + 12, "Go", 3))
					found = true;
				if (next > ph.p_filesz)
					break;
				pos = next;
			}
		}
		free(buf);
	}
	return found;
}

/* Returns 1 (Go, @ver set or "") or 0 (not Go). */
static int detect_go(struct elf_file *ef, char *ver, size_t size)
{
	struct go_scan gs = { .ef = ef, .ver = ver, .size = size };
	bool marked = false;
	size_t i, phnum;
	GElf_Shdr sh;

	ver[0] = '\0';
	if (elf_section_by_name(ef, ".go.buildinfo", &sh)) {
		if (!go_read_buildinfo_at(ef, sh.sh_offset, sh.sh_size, ver, size))
			return 1;
		marked = true;
	}
	marked = marked || elf_section_by_name(ef, ".gopclntab", &sh) ||
		 elf_section_by_name(ef, ".note.go.buildid", &sh);
	/* With section headers and no Go section this is not Go: spare the scan. */
	if (ef->has_shdrs && !marked)
		return 0;
	if (!elf_getphdrnum(ef->elf, &phnum)) {
		for (i = 0; i < phnum; i++) {
			if (!gelf_getphdr(ef->elf, (int)i, &gs.ph) || gs.ph.p_type != PT_LOAD ||
			    !(gs.ph.p_flags & PF_W))
				continue;
			if (!scan_range(ef, gs.ph.p_offset, gs.ph.p_filesz, go_scan_fn, &gs))
				return 1;
		}
	}
	ver[0] = '\0';
	return marked || go_note_in_phdrs(ef);
}

/* --- symbols ------------------------------------------------------------------------------ */

enum sym_id { SYM_PY_VERSION, SYM_PY, SYM_NODE, SYM_RUBY, SYM_COUNT };

static const struct { const char *name; enum sym_id id; } interesting_syms[] = {
	{ "Py_Version", SYM_PY_VERSION },
	{ "_PyRuntime", SYM_PY },
	{ "Py_Initialize", SYM_PY },
	{ "Py_BytesMain", SYM_PY },
	{ "_ZN4node5StartEiPPc", SYM_NODE },	/* node::Start(int, char**) */
	{ "node_module_register", SYM_NODE },
	{ "ruby_init", SYM_RUBY },
	{ "ruby_setup", SYM_RUBY },
	{ "ruby_run_node", SYM_RUBY },
};

struct sym_hits {
	bool found[SYM_COUNT];
	GElf_Sym py_version;
};

static void note_sym(struct sym_hits *h, const char *name, const GElf_Sym *sym)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(interesting_syms); k++) {
		if (strcmp(name, interesting_syms[k].name))
			continue;
		h->found[interesting_syms[k].id] = true;
		if (interesting_syms[k].id == SYM_PY_VERSION)
			h->py_version = *sym;
	}
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* Reads symbol @idx of the table @symsh (and checks its name is @name) with pread. */
static bool read_dynsym(struct elf_file *ef, const GElf_Shdr *symsh, const GElf_Shdr *strsh,
			uint64_t idx, const char *name, GElf_Sym *sym)
{
	bool is64 = gelf_getclass(ef->elf) == ELFCLASS64;
	size_t entsize = is64 ? 24 : 16, nlen = strlen(name) + 1;
	uint8_t raw[24];
	char str[64];

	if (symsh->sh_entsize != entsize || idx >= symsh->sh_size / entsize || nlen > sizeof(str) ||
	    pread_full(ef->fd, raw, entsize, symsh->sh_offset + idx * entsize))
		return false;
	sym->st_name = (Elf64_Word)read_uint(raw, 4, ef->big);
	if (is64) {
		sym->st_info = raw[4];
		sym->st_other = raw[5];
		sym->st_shndx = (Elf64_Section)read_uint(raw + 6, 2, ef->big);
		sym->st_value = read_uint(raw + 8, 8, ef->big);
		sym->st_size = read_uint(raw + 16, 8, ef->big);
	} else {
		sym->st_value = read_uint(raw + 4, 4, ef->big);
		sym->st_size = read_uint(raw + 8, 4, ef->big);
		sym->st_info = raw[12];
		sym->st_other = raw[13];
		sym->st_shndx = (Elf64_Section)read_uint(raw + 14, 2, ef->big);
	}
	if (sym->st_shndx == SHN_UNDEF || sym->st_name >= strsh->sh_size ||
	    nlen > strsh->sh_size - sym->st_name ||
	    pread_full(ef->fd, str, nlen, strsh->sh_offset + sym->st_name))
		return false;
	return !memcmp(str, name, nlen);
}

/*
 * Looks the names up through the GNU hash table of .dynsym (DT_GNU_HASH: a few reads instead
 * of reading the whole table; Node.js exports 70000 symbols). Returns false when there is no
 * usable table.
 */
static bool elf_find_syms_gnu_hash(struct elf_file *ef, struct sym_hits *h)
{
	Elf_Scn *scn = NULL, *symscn, *strscn;
	GElf_Shdr sh, symsh, strsh;
	uint32_t nbuckets, symoffset, bloom_size, hash, h2;
	uint64_t idx, boff, coff, steps;
	size_t k, word = gelf_getclass(ef->elf) == ELFCLASS64 ? 8 : 4;
	uint8_t *buf = NULL;
	GElf_Sym sym;
	bool ok = false;

	while ((scn = elf_nextscn(ef->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH)
			break;
	if (!scn || sh.sh_size < 16 || sh.sh_size > SYMTAB_MAX)
		return false;
	symscn = elf_getscn(ef->elf, sh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
		return false;
	strscn = elf_getscn(ef->elf, symsh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return false;
	buf = malloc(sh.sh_size);
	if (!buf || pread_full(ef->fd, buf, sh.sh_size, sh.sh_offset))
		goto out;
	nbuckets = (uint32_t)read_uint(buf, 4, ef->big);
	symoffset = (uint32_t)read_uint(buf + 4, 4, ef->big);
	bloom_size = (uint32_t)read_uint(buf + 8, 4, ef->big);
	boff = 16 + (uint64_t)bloom_size * word;
	coff = boff + (uint64_t)nbuckets * 4;
	if (!nbuckets || coff > sh.sh_size)
		goto out;
	ok = true;
	for (k = 0; k < ARRAY_SIZE(interesting_syms); k++) {
		hash = gnu_hash(interesting_syms[k].name);
		idx = read_uint(buf + boff + (hash % nbuckets) * 4, 4, ef->big);
		if (idx < symoffset)
			continue;
		for (steps = 0; steps < (1u << 20); steps++, idx++) {
			uint64_t c = coff + (idx - symoffset) * 4;

			if (c + 4 > sh.sh_size)
				break;
			h2 = (uint32_t)read_uint(buf + c, 4, ef->big);
			if ((h2 | 1) == (hash | 1) &&
			    read_dynsym(ef, &symsh, &strsh, idx, interesting_syms[k].name, &sym)) {
				note_sym(h, interesting_syms[k].name, &sym);
				break;
			}
			if (h2 & 1)
				break;
		}
	}
out:
	free(buf);
	return ok;
}

/* Looks for the defined symbols above in the tables of type @type (SHT_DYNSYM, SHT_SYMTAB). */
static void elf_find_syms(struct elf_file *ef, Elf64_Word type, struct sym_hits *h)
{
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	Elf_Data *data;
	GElf_Sym sym;
	const char *name;
	size_t i, n;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize ||
		    sh.sh_size > SYMTAB_MAX)
			continue;
		strscn = elf_getscn(ef->elf, sh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_size > SYMTAB_MAX)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_name)
				continue;
			name = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != 'P' && name[0] != '_' && name[0] != 'n' &&
				      name[0] != 'r'))
				continue;
			note_sym(h, name, &sym);
		}
	}
}

/* --- the process -------------------------------------------------------------------------- */

struct proc_libs {
	char jvm[PATH_MAX];
	char python[PATH_MAX];
	char node[PATH_MAX];
	char ruby[PATH_MAX];
};

static void note_lib(char *dst, const char *path, size_t len)
{
	if (dst[0] || len >= PATH_MAX)
		return;
	memcpy(dst, path, len);
	dst[len] = '\0';
}

/* Collects the runtime libraries mapped by the process from its maps text. */
static void parse_maps(char *text, struct proc_libs *libs)
{
	char *line, *next, *path, *b;
	size_t len;
	int field;

	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "start-end perms offset dev inode   path" */
		path = line;
		for (field = 0; field < 5 && path; field++) {
			path = strchr(path, ' ');
			if (path)
				while (*path == ' ')
					path++;
		}
		if (!path || *path != '/')
			continue;
		len = strlen(path);
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			len -= 10;
		path[len] = '\0';
		b = (char *)base_name(path);
		if (!strcmp(b, "libjvm.so"))
			note_lib(libs->jvm, path, len);
		else if (has_prefix(b, "libpython") && is_digit(b[9]))
			note_lib(libs->python, path, len);
		else if (has_prefix(b, "libnode.so"))
			note_lib(libs->node, path, len);
		else if (has_prefix(b, "libruby") && (b[7] == '-' || b[7] == '.' || is_digit(b[7])))
			note_lib(libs->ruby, path, len);
	}
}

/* JAVA_VERSION from the `release` file of the java home above libjvm (up to 5 levels:
 * JDK 8 keeps it in jre/lib/amd64/server/), read inside the process's root. */
static int jvm_version(const char *root, const char *libjvm, char *ver, size_t size)
{
	char dir[PATH_MAX], rel[PATH_MAX + 16];
	char *slash, *text;
	size_t len;
	int level, fd, err;

	snprintf(dir, sizeof(dir), "%s", libjvm);
	for (level = 0; level < 5; level++) {
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		snprintf(rel, sizeof(rel), "%s/release", dir);
		fd = open_in_root(root, rel, O_RDONLY);
		if (fd < 0)
			continue;
		err = read_fd_bounded(fd, RELEASE_MAX, &text, &len);
		close(fd);
		if (err)
			continue;
		err = runtime_jvm_version_from_release(text, len, ver, size);
		free(text);
		if (!err)
			return 0;
	}
	return runtime_jvm_version_from_path(libjvm, ver, size);
}

/* Scans the .rodata of a library mapped by the process, opened inside its root. */
static int lib_scan_version(const char *root, const char *lib, enum runtime_kind kind, char *ver,
			    size_t size)
{
	struct elf_file ef = { .fd = -1 };
	int fd, err;

	fd = open_in_root(root, lib, O_RDONLY);
	if (fd < 0)
		return fd;
	err = elf_file_open(fd, &ef);
	if (!err) {
		err = elf_scan_rodata(&ef, kind, ver, size);
		elf_file_close(&ef);
	}
	close(fd);
	return err;
}

/* Runtime from the mapped libraries; false when none is mapped. */
static bool detect_from_libs(const char *root, const struct proc_libs *libs,
			     struct runtime_info *ri)
{
	size_t vs = sizeof(ri->version);

	if (libs->jvm[0]) {
		ri->kind = RUNTIME_JVM;
		jvm_version(root, libs->jvm, ri->version, vs);
	} else if (libs->python[0]) {
		ri->kind = RUNTIME_PYTHON;
		runtime_python_version_from_lib(libs->python, ri->version, vs);
	} else if (libs->node[0]) {
		ri->kind = RUNTIME_NODE;
		if (lib_scan_version(root, libs->node, RUNTIME_NODE, ri->version, vs))
			runtime_node_version_from_lib(libs->node, ri->version, vs);
	} else if (libs->ruby[0]) {
		ri->kind = RUNTIME_RUBY;
		if (runtime_ruby_version_from_lib(libs->ruby, ri->version, vs))
			lib_scan_version(root, libs->ruby, RUNTIME_RUBY, ri->version, vs);
	} else {
		return false;
	}
	return true;
}

/* Runtime from the executable itself (Go, statically linked interpreters). */
static void detect_from_exe(int exefd, const char *exe_name, struct runtime_info *ri)
{
	struct elf_file ef = { .fd = -1 };
	struct sym_hits h = { 0 };
	size_t vs = sizeof(ri->version);
	uint8_t raw[8];

	if (elf_file_open(exefd, &ef))
		return;
	if (detect_go(&ef, ri->version, vs)) {
		ri->kind = RUNTIME_GO;
		goto out;
	}
	if (ef.has_shdrs) {
		if (!elf_find_syms_gnu_hash(&ef, &h))
			elf_find_syms(&ef, SHT_DYNSYM, &h);
		if (!h.found[SYM_PY] && !h.found[SYM_NODE] && !h.found[SYM_RUBY])
			elf_find_syms(&ef, SHT_SYMTAB, &h);
	}
	if (h.found[SYM_PY] || h.found[SYM_PY_VERSION]) {
		ri->kind = RUNTIME_PYTHON;
		/* Py_Version (3.11+) holds PY_VERSION_HEX; else the name, else PY_VERSION. */
		if (h.found[SYM_PY_VERSION] && (h.py_version.st_size == 4 || h.py_version.st_size == 8) &&
		    !elf_vread(&ef, h.py_version.st_value, raw, h.py_version.st_size) &&
		    !runtime_python_version_from_hex(read_uint(raw, h.py_version.st_size, ef.big),
						     ri->version, vs))
			goto out;
		if (exe_name && !runtime_python_version_from_exe(exe_name, ri->version, vs))
			goto out;
		if (elf_scan_rodata(&ef, RUNTIME_PYTHON, ri->version, vs))
			ri->version[0] = '\0';
	} else if (h.found[SYM_NODE]) {
		ri->kind = RUNTIME_NODE;
		if (elf_scan_rodata(&ef, RUNTIME_NODE, ri->version, vs))
			ri->version[0] = '\0';
	} else if (h.found[SYM_RUBY]) {
		ri->kind = RUNTIME_RUBY;
		if (elf_scan_rodata(&ef, RUNTIME_RUBY, ri->version, vs))
			ri->version[0] = '\0';
	}
out:
	elf_file_close(&ef);
}

static bool gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

int runtime_detect(const struct runtime_detect_opts *o, int pid, struct runtime_info *out)
{
	const char *proc_root = o && o->proc_root ? o->proc_root : "/proc";
	struct runtime_info ri = { .kind = RUNTIME_NATIVE };
	char dir[PATH_MAX], root[PATH_MAX], exe_name[PATH_MAX];
	struct proc_libs *libs = NULL;
	char *maps = NULL;
	int dirfd = -1, exefd = -1, maps_err, exe_err = 0, err;
	ssize_t n;

	if (pid <= 0 || !out)
		return -EINVAL;
	if (snprintf(dir, sizeof(dir), "%s/%d", proc_root, pid) >= (int)sizeof(dir) ||
	    snprintf(root, sizeof(root), "%s/root", dir) >= (int)sizeof(root))
		return -ENAMETOOLONG;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = -errno;
		if (gone(err))
			err = -ESRCH;
		return err;
	}
	libs = calloc(1, sizeof(*libs));
	if (!libs) {
		err = -ENOMEM;
		goto out_close;
	}

	maps_err = read_file_bounded(dirfd, "maps", MAPS_MAX, &maps, NULL);
	if (!maps_err)
		parse_maps(maps, libs);
	else if (gone(maps_err)) {
		err = -ESRCH;
		goto out_free;
	}
	if (detect_from_libs(root, libs, &ri))
		goto done;

	/* The kernel's link to the mapped executable: opened, never resolved as a path. */
	exefd = openat(dirfd, "exe", O_RDONLY | O_CLOEXEC);
	if (exefd < 0) {
		exe_err = -errno;
		/* A kernel thread or a zombie has no executable: native. */
		if ((maps_err == -EACCES || maps_err == -EPERM) &&
		    (exe_err == -EACCES || exe_err == -EPERM)) {
			err = exe_err;
			goto out_free;
		}
		goto done;
	}
	n = readlinkat(dirfd, "exe", exe_name, sizeof(exe_name) - 1);
	if (n >= 0) {
		exe_name[n] = '\0';
		if (n > 10 && !strcmp(exe_name + n - 10, " (deleted)"))
			exe_name[n - 10] = '\0';
	}
	detect_from_exe(exefd, n >= 0 ? exe_name : NULL, &ri);

done:
	if (faccessat(dirfd, "stat", F_OK, 0) < 0 && gone(-errno)) {
		pr_debug("runtime_detect(pid=%d): process is gone", pid);
		err = -ESRCH;
		goto out_free;
	}
	runtime_info_format(&ri);
	*out = ri;
	err = 0;
out_free:
	if (exefd >= 0)
		close(exefd);
	free(maps);
	free(libs);
out_close:
	close(dirfd);
	return err;
}
