/*
 * Replays the committed fuzz corpus of the importers (tests/fuzz/corpus/
 * pprof and /folded) through their fuzz targets in `make check`
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

static void test_replay_pprof(void **state)
{
	(void)state;
	assert_true(corpus_replay("pprof", ms_fuzz_pprof, MS_IMPORT_PPROF_MAX) >= 10);
}

static void test_replay_folded(void **state)
{
	(void)state;
	assert_true(corpus_replay("folded", ms_fuzz_folded, MS_IMPORT_PPROF_MAX) >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_pprof),
		cmocka_unit_test(test_replay_folded),
	};

	ms_set_progname("formats-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
