/*
 * Replays the committed fuzz corpus of the JIT frame prover
 * (tests/fuzz/corpus/prove) through its fuzz target in `make check`
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

/* An input is two bytes of pc and a function's code. */
#define INPUT_MAX (1u << 20)

static void test_replay_prove(void **state)
{
	(void)state;
	assert_true(corpus_replay("prove", ms_fuzz_prove, INPUT_MAX) >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_prove),
	};

	ms_set_progname("prove-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
