// SPDX-License-Identifier: Apache-2.0
/*
 * The exactly-once rule of the capture annotation (daemon/agent/annotations.c,
 * annotation_decide()), table-driven: the existing capture-status (done, refused, failed,
 * running, another state, not JSON) against the request value (the same or another), and the
 * errors of reading the status.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/agent/annotations.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define REQ "question=cpu,duration=30"
#define STATUS(req, state) "{\"request\":\"" req "\",\"state\":\"" state "\",\"node\":\"n1\"}"

static void test_decide(void **state)
{
	static const struct {
		int get_err;
		const char *status;
		const char *request;
		int ret;
		const char *state;	/* copied on ANNOTATION_HANDLED */
	} cases[] = {
		/* the same request value */
		{ 0, STATUS(REQ, "done"), REQ, ANNOTATION_HANDLED, "done" },
		{ 0, STATUS(REQ, "refused"), REQ, ANNOTATION_HANDLED, "refused" },
		{ 0, STATUS(REQ, "failed"), REQ, ANNOTATION_HANDLED, "failed" },
		{ 0, STATUS(REQ, "running"), REQ, ANNOTATION_RUNNING, NULL },
		{ 0, STATUS(REQ, "queued"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS(REQ, "DONE"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS(REQ, ""), REQ, ANNOTATION_ACT, NULL },
		/* another request value: a new request */
		{ 0, STATUS("question=wall,duration=30", "done"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS("question=wall,duration=30", "refused"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS("question=wall,duration=30", "failed"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS("question=wall,duration=30", "running"), REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS(REQ " ", "done"), REQ, ANNOTATION_ACT, NULL },
		/* garbage or incomplete status: no status */
		{ 0, "not json", REQ, ANNOTATION_ACT, NULL },
		{ 0, "", REQ, ANNOTATION_ACT, NULL },
		{ 0, NULL, REQ, ANNOTATION_ACT, NULL },
		{ 0, "[\"done\"]", REQ, ANNOTATION_ACT, NULL },
		{ 0, "{\"request\":\"" REQ "\"}", REQ, ANNOTATION_ACT, NULL },
		{ 0, "{\"state\":\"done\"}", REQ, ANNOTATION_ACT, NULL },
		{ 0, "{\"request\":\"" REQ "\",\"state\":1}", REQ, ANNOTATION_ACT, NULL },
		{ 0, "{\"request\":7,\"state\":\"done\"}", REQ, ANNOTATION_ACT, NULL },
		{ 0, STATUS(REQ, "done"), NULL, ANNOTATION_ACT, NULL },
		/* reading the status: no status, too long to read (handled: never re-run), or
		 * an error */
		{ -ENODATA, NULL, REQ, ANNOTATION_ACT, NULL },
		{ -EOVERFLOW, NULL, REQ, ANNOTATION_HANDLED, "done" },
		{ -EOVERFLOW, STATUS(REQ, "running"), REQ, ANNOTATION_HANDLED, "done" },
		{ -ENOENT, STATUS(REQ, "done"), REQ, -ENOENT, NULL },
		{ -EIO, NULL, REQ, -EIO, NULL },
		{ -EACCES, NULL, REQ, -EACCES, NULL },
		{ -ETIMEDOUT, NULL, REQ, -ETIMEDOUT, NULL },
	};
	char st[16];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(st, "x");
		assert_int_equal(annotation_decide(cases[i].get_err, cases[i].status,
						   cases[i].request, st, sizeof(st)),
				 cases[i].ret);
		assert_string_equal(st, cases[i].state ? cases[i].state : "x");
	}
}

/* The state is cut to the buffer, and a NULL buffer is fine. */
static void test_decide_state_buffer(void **state)
{
	char st[3];

	(void)state;
	assert_int_equal(annotation_decide(0, STATUS(REQ, "refused"), REQ, st, sizeof(st)),
			 ANNOTATION_HANDLED);
	assert_string_equal(st, "re");
	assert_int_equal(annotation_decide(0, STATUS(REQ, "done"), REQ, NULL, 0),
			 ANNOTATION_HANDLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_state_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
