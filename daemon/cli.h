/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli: the command line (SPEC 5; docs/cli.md). Parses, runs, prints; returns the exit status.
 */
#ifndef SLIDEOPS_CLI_H
#define SLIDEOPS_CLI_H

/* Exit statuses besides EXIT_SUCCESS/EXIT_FAILURE. */
#define CLI_EXIT_USAGE 2

int cli_main(int argc, char **argv);

#endif
