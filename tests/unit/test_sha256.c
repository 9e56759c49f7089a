// SPDX-License-Identifier: Apache-2.0
/* Unit tests for base/sha256.c against the FIPS 180-4 / NIST example vectors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sha256.h"

static void test_vectors(void **state)
{
	static const struct {
		const char *in;
		size_t repeat;
		const char *hex;
	} cases[] = {
		{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
		/* 55, 56 and 64 bytes: the padding edges */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1,
		  "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1,
		  "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1,
		  "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
	};
	uint8_t d[SHA256_DIGEST_LEN];
	char hex[2 * SHA256_DIGEST_LEN + 1];
	struct sha256 s;
	size_t i, r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu\n", i);
		sha256_init(&s);
		for (r = 0; r < cases[i].repeat; r++)
			sha256_update(&s, cases[i].in, strlen(cases[i].in));
		sha256_final(&s, d);
		assert_string_equal(sha256_hex(d, hex), cases[i].hex);
	}
}

static void test_fd(void **state)
{
	char path[] = "/tmp/test_sha256.XXXXXX";
	uint8_t d[SHA256_DIGEST_LEN];
	char hex[2 * SHA256_DIGEST_LEN + 1];
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sha256_fd(fd, 3, d), 0);
	assert_string_equal(sha256_hex(d, hex),
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* error rows: over the bound, a bad fd */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sha256_fd(fd, 2, d), -EFBIG);
	close(fd);
	assert_int_equal(sha256_fd(-1, 10, d), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_fd),
	};

	return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
