/*
 * Replays the committed fuzz corpus of the BPF sampler's records and
 * their pairing (tests/fuzz/corpus/bpfrecord) through its fuzz target in
 * `make check` (tests/unit/corpus-replay.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/fuzz/fuzz.h"
#include "tests/unit/corpus-replay.h"
#include "util/error.h"

/* A ring byte and a record's RAW data: under a perf record's 64 KiB. */
#define INPUT_MAX 65536

static void test_replay_bpfrecord(void **state)
{
	(void)state;
	assert_true(corpus_replay("bpfrecord", ms_fuzz_bpfrecord, INPUT_MAX) >= 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_bpfrecord),
	};

	ms_set_progname("bpfrecord-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
