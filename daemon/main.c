// SPDX-License-Identifier: Apache-2.0
/* slideops-profiler: wiring only; see daemon/cli.c. */
#include "daemon/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
