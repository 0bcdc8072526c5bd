/* Which stage the front command blames when a pipeline fails. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util/pipeline.h"
#include "util/error.h"

static struct ms_pipeline make(const int *statuses, unsigned n)
{
	static const char *names[] = { "ms-collect", "ms-decode", "ms-unwind",
				       "ms-symbolize", "ms-capture" };
	struct ms_pipeline p = { .n = n };

	for (unsigned i = 0; i < n; i++) {
		p.stages[i].name = names[i];
		p.stages[i].status = statuses[i];
		p.stages[i].done = true;
	}
	return p;
}

#define EXITED(c) W_EXITCODE(c, 0)
#define KILLED(s) W_EXITCODE(0, s)

static void test_all_ok(void **state)
{
	int st[] = { EXITED(0), EXITED(0), EXITED(0), EXITED(0), EXITED(0) };
	struct ms_pipeline p = make(st, 5);

	assert_int_equal(ms_pipeline_culprit(&p, true), -1);
}

static void test_target_status_is_not_a_failure(void **state)
{
	int st[] = { EXITED(3), EXITED(0), EXITED(0), EXITED(0), EXITED(0) };
	struct ms_pipeline p = make(st, 5);

	assert_int_equal(ms_pipeline_culprit(&p, true), -1);
	/* When attached, the collector's own status is its own. */
	assert_int_equal(ms_pipeline_culprit(&p, false), 0);
}

static void test_killed_source_is_blamed_not_its_truncated_readers(void **state)
{
	int st[] = { KILLED(SIGKILL), EXITED(MS_EXIT_TRUNCATED), EXITED(MS_EXIT_TRUNCATED),
		     EXITED(MS_EXIT_TRUNCATED), EXITED(MS_EXIT_TRUNCATED) };
	struct ms_pipeline p = make(st, 5);
	char buf[128];

	assert_int_equal(ms_pipeline_culprit(&p, true), 0);
	ms_pipeline_describe(&p, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "ms-collect was killed by signal 9"));
}

static void test_broken_pipes_upstream_point_at_the_failing_stage(void **state)
{
	int st[] = { EXITED(MS_EXIT_PIPE), EXITED(MS_EXIT_PIPE), EXITED(1),
		     EXITED(MS_EXIT_TRUNCATED), EXITED(MS_EXIT_TRUNCATED) };
	struct ms_pipeline p = make(st, 5);
	char buf[128];

	assert_int_equal(ms_pipeline_culprit(&p, true), 2);
	ms_pipeline_describe(&p, 2, buf, sizeof(buf));
	assert_string_equal(buf, "ms-unwind exited with status 1");
}

static void test_truncation_without_other_cause_is_blamed_first(void **state)
{
	int st[] = { EXITED(0), EXITED(MS_EXIT_TRUNCATED), EXITED(MS_EXIT_TRUNCATED),
		     EXITED(MS_EXIT_TRUNCATED), EXITED(MS_EXIT_TRUNCATED) };
	struct ms_pipeline p = make(st, 5);

	assert_int_equal(ms_pipeline_culprit(&p, true), 1);
}

static void test_stage_found_in_path(void **state)
{
	char *path = ms_stage_path("sh");

	assert_non_null(path);
	assert_non_null(strstr(path, "/sh"));
	free(path);
	assert_null(ms_stage_path("no-such-stage-program-xyz"));
}

/* The source starts last, told the pids of the stages already running. */
static char source_cmd[128];

static void name_reader(struct ms_pipeline *p, void *arg)
{
	(void)arg;
	/* Both the reader and the one after it run already. */
	assert_true(p->stages[1].pid > 0);
	assert_true(p->stages[2].pid > 0);
	snprintf(source_cmd, sizeof(source_cmd), "echo %d", (int)p->stages[1].pid);
}

static void test_source_started_last_knows_the_others(void **state)
{
	char *const source[] = { "sh", "-c", source_cmd, NULL };
	/* Exits 0 only when the line it reads is its own pid. */
	char *const reader[] = { "sh", "-c", "read x && [ \"$x\" = \"$$\" ] && echo same", NULL };
	char *const last[] = { "sh", "-c", "read y && [ \"$y\" = same ]", NULL };
	struct ms_pipeline p = {
		.n = 3,
		.stages = { { .name = "sh", .argv = source }, { .name = "sh", .argv = reader },
			    { .name = "sh", .argv = last } },
		.before_source = name_reader,
	};

	(void)state;
	source_cmd[0] = '\0';
	assert_int_equal(ms_pipeline_start(&p), 0);
	ms_pipeline_wait(&p);
	assert_non_null(strstr(source_cmd, "echo "));
	for (unsigned i = 0; i < 3; i++)
		if (!WIFEXITED(p.stages[i].status) || WEXITSTATUS(p.stages[i].status))
			fail_msg("stage %u ended with status 0x%x", i, p.stages[i].status);
	assert_int_equal(ms_pipeline_culprit(&p, false), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_ok),
		cmocka_unit_test(test_target_status_is_not_a_failure),
		cmocka_unit_test(test_killed_source_is_blamed_not_its_truncated_readers),
		cmocka_unit_test(test_broken_pipes_upstream_point_at_the_failing_stage),
		cmocka_unit_test(test_truncation_without_other_cause_is_blamed_first),
		cmocka_unit_test(test_stage_found_in_path),
		cmocka_unit_test(test_source_started_last_knows_the_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
