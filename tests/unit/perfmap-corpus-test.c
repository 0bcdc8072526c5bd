/*
 * Replays the committed fuzz corpus of the perf map reader
 * (tests/fuzz/corpus/perfmap) through its fuzz target in `make check`
 * (tests/unit/corpus-replay.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/fuzz/fuzz.h"
#include "tests/unit/corpus-replay.h"
#include "util/error.h"

/* An input is a map of at most a few reads. */
#define INPUT_MAX (1u << 26)

static void test_replay_perfmap(void **state)
{
	(void)state;
	assert_true(corpus_replay("perfmap", ms_fuzz_perfmap, INPUT_MAX) >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_perfmap),
	};

	ms_set_progname("perfmap-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
