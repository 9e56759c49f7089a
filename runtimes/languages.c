// SPDX-License-Identifier: Apache-2.0
#include "runtimes/languages.h"

static const struct language_row rows[] = {
	{ "Native (C)", "gcc 12 -O2, without frame pointers",
	  "ELF symbols of the binary, read inside its container",
	  "tests/integration/test_server_cpu.sh" },
	{ "Go", "1.19 (incl. stripped -s -w)",
	  "the binary's .gopclntab, read inside its container; heap, allocations, goroutines and "
	  "mutexes from its net/http/pprof, found inside its container",
	  "tests/integration/test_go_cpu.sh, tests/integration/test_go_pprof.sh" },
};

const struct language_row *languages_table(size_t *n)
{
	*n = sizeof(rows) / sizeof(rows[0]);
	return rows;
}
