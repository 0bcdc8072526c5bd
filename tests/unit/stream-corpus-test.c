/*
 * Replays the committed fuzz corpus of the perf decoder and the stream
 * reader (tests/fuzz/corpus/decode and /stream) through their fuzz targets
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

/* Larger than any input the targets take. */
#define INPUT_MAX (2u << 20)

static void test_replay_decode(void **state)
{
	(void)state;
	assert_true(corpus_replay("decode", ms_fuzz_decode, INPUT_MAX) >= 40);
}

static void test_replay_stream(void **state)
{
	(void)state;
	assert_true(corpus_replay("stream", ms_fuzz_stream, INPUT_MAX) >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_decode),
		cmocka_unit_test(test_replay_stream),
	};

	ms_set_progname("stream-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
