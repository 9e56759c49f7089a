/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_symbols: the `symbols` commands of the CLI (docs/cli.md) on the local symbol store,
 * <store_dir>/symbols, which the CLI's captures name stripped builds from.
 */
#ifndef SLIDEOPS_CLI_SYMBOLS_H
#define SLIDEOPS_CLI_SYMBOLS_H

#include <stdbool.h>

struct config;
struct symstore;

/* `symbols upload FILE | list | delete BUILD_ID [--config FILE]`; argv[0] is "symbols".
 * Returns the exit status. */
int cli_symbols(int argc, char **argv);

/* Opens <store_dir>/symbols of @c; when @create is false and it does not exist, -ENOENT.
 * Returns 0 with @out (symstore__free()) or -errno. */
int cli_symbols_open(const struct config *c, bool create, struct symstore **out);

#endif
