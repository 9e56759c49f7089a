// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over runtimes/jvm/jvm_asprof.c: the input is async-profiler's collapsed
 * output (or whatever a JVM left in the file we read), and also HotSpot's answer to "load" and
 * a file name for the stop options. Every delivered stack must respect the bounds (1..4096
 * frames, names of 1..4096 bytes of valid UTF-8 without control characters, ';' or '\n', a
 * value of at most 2^63); the counts must add up; a NUL byte must give -EILSEQ and nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/jvm/jvm_asprof.h"

struct seen {
	size_t stacks;
};

static int check_stack(void *ctx, const struct jvm_asprof_frame *f, size_t n, uint64_t value)
{
	struct seen *seen = ctx;
	size_t i;

	if (!n || n > JVM_ASPROF_FRAMES_MAX || value > JVM_ASPROF_VALUE_MAX)
		abort();
	for (i = 0; i < n; i++) {
		if (!f[i].len || f[i].len > JVM_ASPROF_NAME_MAX || strlen(f[i].name) != f[i].len ||
		    !text_utf8_is_clean(f[i].name, f[i].len) || memchr(f[i].name, ';', f[i].len) ||
		    (unsigned)f[i].kind > JVM_ASPROF_CLASS)
			abort();
		if (f[i].kind == JVM_ASPROF_CLASS && i)
			abort(); /* only the leaf is a class */
	}
	seen->stacks++;
	return 0;
}

static void check_collapsed(const uint8_t *data, size_t size)
{
	struct jvm_asprof_counts c;
	struct seen seen = { 0 };
	bool nul = size && memchr(data, 0, size);
	int ret;

	ret = jvm_asprof_parse_collapsed((const char *)data, size, check_stack, &seen, &c);
	if (ret == -ENOMEM)
		return;
	if (nul) {
		if (ret != -EILSEQ || seen.stacks)
			abort();
		return;
	}
	if (ret < 0 || (size_t)ret != seen.stacks || c.lines != seen.stacks + c.malformed ||
	    c.cut_stacks > seen.stacks)
		abort();
}

static void check_code(const uint8_t *data, size_t size)
{
	int rc = 12345, ret = jvm_asprof_parse_code((const char *)data, size, &rc);

	if (ret && rc != 12345)
		abort();
	if (ret != 0 && ret != -ENOMSG && ret != -EBADMSG && ret != -EILSEQ)
		abort();
	if ((ret == -EILSEQ) != (size && memchr(data, 0, size) != NULL))
		abort();
}

static void check_stop(const uint8_t *data, size_t size)
{
	char file[256], buf[512];
	size_t n = size < sizeof(file) - 1 ? size : sizeof(file) - 1, commas = 0, i;
	int ret;

	memcpy(file, data, n);
	file[n] = '\0';
	ret = jvm_asprof_stop_options(JVM_ASPROF_LOCK, file, buf, sizeof(buf));
	if (ret == -EINVAL)
		return;
	if (ret < 0 || (size_t)ret != strlen(buf) || strncmp(buf, "stop,file=/", 11))
		abort();
	for (i = 0; buf[i]; i++)
		commas += buf[i] == ',';
	if (commas != 4 || strchr(buf, '%') || strchr(buf, ' '))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_collapsed(data, size);
	check_code(data, size);
	check_stop(data, size);
	return 0;
}
