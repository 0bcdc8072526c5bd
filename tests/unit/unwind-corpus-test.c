/*
 * Replays the committed fuzz corpus of the DWARF unwinder and its CFI rows
 * cache (tests/fuzz/corpus/unwind and /cfirows) through their fuzz targets
 * in `make check` (tests/unit/corpus-replay.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/fuzz/fuzz.h"
#include "tests/unit/corpus-replay.h"
#include "util/error.h"

/* An input is at most a header and a whole stack copy, or a rows file. */
#define INPUT_MAX (1u << 24)

static void test_replay_unwind(void **state)
{
	(void)state;
	assert_true(corpus_replay("unwind", ms_fuzz_unwind, INPUT_MAX) >= 50);
}

static void test_replay_cfirows(void **state)
{
	(void)state;
	assert_true(corpus_replay("cfirows", ms_fuzz_cfirows, INPUT_MAX) >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_unwind),
		cmocka_unit_test(test_replay_cfirows),
	};

	ms_set_progname("unwind-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
