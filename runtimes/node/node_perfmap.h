/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_perfmap: the names V8 writes into a perf map (node --perf-basic-prof, --perf-prof),
 * split into what a profile shows. V8 names a JavaScript function's code
 * "<kind>:<tier><name> <script>:<line>:<column>": kind JS (V8 11 and later; Function and
 * LazyCompile before), Script or Eval for top-level code; tier "~" (Ignition), "^"
 * (Sparkplug), "+" (Maglev), "*" (TurboFan) or none; the name may be empty (top-level code,
 * anonymous functions) or hold a space ("get x"), the script is a path or a URL
 * ("node:internal/...", "file:///app/x.mjs"). Other kinds (Builtin, BytecodeHandler, Stub,
 * RegExp, ...) are V8's own code and are not JavaScript frames. Stateless, thread-safe.
 */
#ifndef SLIDEOPS_RUNTIMES_NODE_PERFMAP_H
#define SLIDEOPS_RUNTIMES_NODE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct node_pm_name {
	char function[256]; /* "hot", "(anonymous)" for an empty name; valid UTF-8 */
	char script[512];   /* "/app/cpu.js", "" when none */
	uint32_t line;	    /* 1-based; 0 when none */
};

/*
 * Parses the perf map name @name (NUL-terminated). Returns 0 for a JavaScript function's code
 * with @out filled, -ENOENT for another kind of code (or a name that is not V8's), -EINVAL for
 * NULL. Longer parts are cut on a character boundary.
 */
int node_perfmap_parse(const char *name, struct node_pm_name *out);

#endif
