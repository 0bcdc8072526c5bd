/*
 * Replays the committed fuzz corpus of the capture reader
 * (tests/fuzz/corpus/capture) through its fuzz target in `make check`
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

/* The target skips larger inputs. */
#define INPUT_MAX (1u << 20)

static void test_replay_capture(void **state)
{
	(void)state;
	assert_true(corpus_replay("capture", ms_fuzz_capture, INPUT_MAX) >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_capture),
	};

	ms_set_progname("capture-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
