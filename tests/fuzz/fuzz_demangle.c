// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the demangler (symbols/demangle.h), whose input is any symbol name of
 * any file. The input is one name: demangle() must stay within DEMANGLE_MAX_OUT and never take
 * a name over DEMANGLE_MAX_IN (inputs up to -max_len pass that bound); demangle_rust_tidy()
 * never lengthens a name, and tidies a name only when it ends in Rust's hash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *raw, *dem, *tidy;
	size_t len;
	bool rust;

	raw = malloc(size + 1);
	if (!raw)
		return 0;
	memcpy(raw, data, size);
	raw[size] = '\0';
	len = strlen(raw);

	dem = demangle(raw);
	if (dem && (len > DEMANGLE_MAX_IN || strlen(dem) > DEMANGLE_MAX_OUT))
		abort();
	free(dem);

	tidy = strdup(raw);
	if (tidy) {
		rust = demangle_rust_tidy(tidy);
		if (strlen(tidy) > len || (!rust && strcmp(tidy, raw)))
			abort();
		free(tidy);
	}
	free(raw);
	return 0;
}
