// SPDX-License-Identifier: Apache-2.0
/* Unit tests for symbols/demangle.c: C++ and Rust legacy names, the bounds, Rust's escapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "symbols/demangle.h"

#define HASH "17h0123456789abcdefE"

static void test_demangle(void **state)
{
	static const struct {
		const char *raw, *want; /* want NULL: shown as it is */
	} cases[] = {
		/* C++ */
		{ "_ZN7billing6LedgerIlE6settleEm", "billing::Ledger<long>::settle(unsigned long)" },
		{ "_ZN7billing7run_dayERNS_6LedgerIlEE", "billing::run_day(billing::Ledger<long>&)" },
		{ "_Z4compv", "comp()" },
		/* Rust's legacy names: the hash goes, escapes are decoded */
		{ "_ZN6ledger7billing6Ledger6settle" HASH, "ledger::billing::Ledger::settle" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
		  "closure$u7d$$u7d$$GT$" HASH,
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_ZN6ledger58_$LT$impl$u20$core..fmt..Debug$u20$for$u20$ledger..Row$GT$3fmt" HASH,
		  "ledger::<impl core::fmt::Debug for ledger::Row>::fmt" },
		{ "_ZN5smile11say$u1f600$2go" HASH, "smile::say\xf0\x9f\x98\x80::go" },
		/* LLVM's suffix on a promoted local: dropped on a Rust name, kept as a clone in C++ */
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$" HASH ".llvm.16559241995774259229",
		  "std::rt::lang_start::{{closure}}" },
		{ "_ZN4core3ptr47drop_in_place$LT$alloc..sync..Arc$LT$u8$GT$$GT$" HASH ".llvm.1667",
		  "core::ptr::drop_in_place<alloc::sync::Arc<u8>>" },
		{ "_ZN3foo3barEv.llvm.123", "foo::bar() [clone .llvm.123]" },
		{ "_ZN3foo3barEv.constprop.0", "foo::bar() [clone .constprop.0]" },
		{ "_ZN3foo" HASH ".", "foo" },
		{ "_ZN3foo17h0123E.llvm.1", NULL },
		/* not mangled, or not valid */
		{ "main", NULL },
		{ "checkout_loop", NULL },
		{ "_RNvCs1234_5smile2go", NULL }, /* Rust v0: shown as it is */
		{ "_Z", NULL },
		{ "_ZN3abc", NULL },
		{ "_Z9truncated", "truncated" },
		{ "_Z9trunc", NULL }, /* the length runs past the end */
		{ "", NULL },
		{ NULL, NULL },
		/* over the bounds: long, or back-references that could blow up */
		{ "_Z1fS_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_", NULL },
		{ "_Z1fT_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_T_", NULL },
	};
	size_t i;
	char *got;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s\n", i, cases[i].raw ? cases[i].raw : "(null)");
		got = demangle(cases[i].raw);
		if (!cases[i].want)
			assert_null(got);
		else
			assert_string_equal(got ? got : "(null)", cases[i].want);
		free(got);
	}
}

/* "_Z<k>aaa...av", @len bytes in all: one source name of k letters (demangles to "aaa...a()").
 * Returns k. */
static size_t long_name(char *raw, size_t len)
{
	size_t digits, k = 0;
	int n;

	for (digits = 1; digits < 8; digits++) {
		k = len - 3 - digits;
		if (snprintf(NULL, 0, "%zu", k) == (int)digits)
			break;
	}
	n = snprintf(raw, len + 1, "_Z%zu", k);
	memset(raw + n, 'a', k);
	raw[n + k] = 'v';
	raw[n + k + 1] = '\0';
	return k;
}

/* A name of DEMANGLE_MAX_IN bytes is demangled, a longer one is shown as it is. */
static void test_demangle_long(void **state)
{
	static const size_t lens[] = { 16, DEMANGLE_MAX_IN, DEMANGLE_MAX_IN + 1, 1 << 16 };
	char *raw, *got;
	size_t i, k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		raw = malloc(lens[i] + 1);
		assert_non_null(raw);
		k = long_name(raw, lens[i]);
		assert_int_equal(strlen(raw), lens[i]);
		got = demangle(raw);
		print_message("case %zu: %zu bytes -> %s\n", i, lens[i], got ? "demangled" : "as is");
		if (lens[i] <= DEMANGLE_MAX_IN) {
			assert_non_null(got);
			assert_int_equal(strlen(got), k + 2);
		} else {
			assert_null(got);
		}
		free(got);
		free(raw);
	}
}

static void test_rust_tidy(void **state)
{
	static const struct {
		const char *in, *want;
		bool rust;
	} cases[] = {
		{ "a::b::h0123456789abcdef", "a::b", true },
		{ "a..b::h0123456789abcdef", "a::b", true },
		{ "_$LT$x$GT$::h0123456789abcdef", "<x>", true },
		{ "a::_$LT$x$GT$::h0123456789abcdef", "a::<x>", true },
		{ "$SP$$BP$$RF$$LP$$RP$$C$::h0123456789abcdef", "@*&(),", true },
		{ "$u41$$u7e$$u3b1$::h0123456789abcdef", "A~\xce\xb1", true },
		/* escapes that do not decode stay as written */
		{ "$XX$a::h0123456789abcdef", "$XX$a", true },
		{ "$u$::h0123456789abcdef", "$u$", true },
		{ "$u0$$u1b$$u7f$::h0123456789abcdef", "$u0$$u1b$$u7f$", true },
		{ "$ud800$$u110000$::h0123456789abcdef", "$ud800$$u110000$", true },
		{ "$u1234567$::h0123456789abcdef", "$u1234567$", true },
		{ "$u41::h0123456789abcdef", "$u41", true },
		{ "a$::h0123456789abcdef", "a$", true },
		{ "a_$b::h0123456789abcdef", "a_$b", true },
		/* not Rust: left as it is */
		{ "billing::Ledger<long>::settle(unsigned long)", "billing::Ledger<long>::settle(unsigned long)", false },
		{ "a::h0123", "a::h0123", false },
		{ "a::h0123456789ABCDEF", "a::h0123456789ABCDEF", false },
		{ "a::h0123456789abcdef0", "a::h0123456789abcdef0", false },
		{ "a::g0123456789abcdef", "a::g0123456789abcdef", false },
		{ "h0123456789abcdef", "h0123456789abcdef", false },
		{ "a..b$LT$", "a..b$LT$", false },
		{ "", "", false },
	};
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s\n", i, cases[i].in);
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		assert_int_equal(demangle_rust_tidy(buf), cases[i].rust);
		assert_string_equal(buf, cases[i].want);
	}
	assert_false(demangle_rust_tidy(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_demangle_long),
		cmocka_unit_test(test_rust_tidy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
