/*
 * Replays the committed fuzz corpus of the JIT row tables
 * (tests/fuzz/corpus/rows) through its fuzz target in `make check`
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

/* An input is a byte choosing, then a function's code or an encoded table. */
#define INPUT_MAX (1u << 20)

static void test_replay_rows(void **state)
{
	(void)state;
	assert_true(corpus_replay("rows", ms_fuzz_rows, INPUT_MAX) >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_rows),
	};

	ms_set_progname("rows-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
