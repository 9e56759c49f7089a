// SPDX-License-Identifier: Apache-2.0
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "bpf/locks.h"
#include "daemon/collectors/locks.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The classifier the BPF program runs on every futex(2) call (bpf/locks.h). */
static void test_futex_kind(void **state)
{
	static const struct { __u32 op; __s32 kind; } cases[] = {
		{ 0, LOCKS_KIND_WAIT },				/* FUTEX_WAIT */
		{ 0 | 128, LOCKS_KIND_WAIT },			/* FUTEX_WAIT_PRIVATE: glibc mutexes */
		{ 0 | 256, LOCKS_KIND_WAIT },			/* with FUTEX_CLOCK_REALTIME */
		{ 9, LOCKS_KIND_WAIT_BITSET },			/* FUTEX_WAIT_BITSET */
		{ 9 | 128 | 256, LOCKS_KIND_WAIT_BITSET },	/* glibc condvar, absolute timeout */
		{ 6, LOCKS_KIND_LOCK_PI },			/* FUTEX_LOCK_PI */
		{ 6 | 128, LOCKS_KIND_LOCK_PI },
		{ 13 | 128, LOCKS_KIND_LOCK_PI },		/* FUTEX_LOCK_PI2 */
		{ 11 | 128, LOCKS_KIND_WAIT_REQUEUE_PI },	/* FUTEX_WAIT_REQUEUE_PI */
		{ 1, -1 },					/* FUTEX_WAKE */
		{ 1 | 128, -1 },
		{ 3, -1 },					/* FUTEX_REQUEUE */
		{ 4, -1 },					/* FUTEX_CMP_REQUEUE */
		{ 5, -1 },					/* FUTEX_WAKE_OP */
		{ 7, -1 },					/* FUTEX_UNLOCK_PI */
		{ 8, -1 },					/* FUTEX_TRYLOCK_PI: never sleeps */
		{ 10, -1 },					/* FUTEX_WAKE_BITSET */
		{ 12, -1 },					/* FUTEX_CMP_REQUEUE_PI */
		{ 14, -1 },					/* beyond the last command */
		{ 0x10000, -1 },				/* unknown bits: ENOSYS in the kernel */
		{ 0xffffffffu, -1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(locks_futex_kind(cases[i].op), cases[i].kind);
	}
}

static void test_kind_name(void **state)
{
	static const struct { uint32_t kind; const char *name; } cases[] = {
		{ LOCKS_WAIT, "futex_wait" },
		{ LOCKS_WAIT_BITSET, "futex_wait_bitset" },
		{ LOCKS_LOCK_PI, "futex_lock_pi" },
		{ LOCKS_WAIT_REQUEUE_PI, "futex_wait_requeue_pi" },
		{ LOCKS_WAITV, "futex_waitv" },
		{ LOCKS_KIND_MAX, "unknown" },
		{ UINT32_MAX, "unknown" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_string_equal(locks_kind_name(cases[i].kind), cases[i].name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_futex_kind),
		cmocka_unit_test(test_kind_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
