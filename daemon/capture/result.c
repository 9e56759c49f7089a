// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/result.h"

#include <stdlib.h>

#include "profile/profile.h"
#include "profile/report.h"

void capture_result__free(struct capture_result *r)
{
	size_t i;

	if (!r)
		return;
	profile__free(r->profile);
	report__free(r->report);
	free(r->threads);
	free(r->goroutines);
	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->pids);
	free(r);
}
