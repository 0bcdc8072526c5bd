/*
 * Replays the committed fuzz corpus of the DWARF unwinder
 * (tests/fuzz/corpus/unwind and /cfirows) through its fuzz targets in
 * `make check`: every input a fuzzer found interesting, and every crash it
 * once found, stays a test. A target that finds an invariant broken
 * aborts, which fails this test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#ifndef MS_FUZZ_CORPUS
#error "MS_FUZZ_CORPUS names the corpus directory"
#endif

static unsigned replay(const char *sub, int (*target)(const uint8_t *, size_t))
{
	char dir[4096], path[4096 + 256];
	struct dirent **names;
	unsigned done = 0;
	int n, saved, null;

	snprintf(dir, sizeof(dir), "%s/%s", MS_FUZZ_CORPUS, sub);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read the corpus '%s'", dir);
	/* the refusals are expected; their messages are noise here */
	fflush(stderr);
	saved = dup(2);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(null, 2);
	for (int i = 0; i < n; i++) {
		unsigned char *buf;
		size_t len;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			/* (an input is at most a header and a whole stack copy, or a rows file) */
			if (ms_read_file(path, 1u << 24, &buf, &len) == 0) {
				target(buf, len);
				free(buf);
				done++;
			}
		}
		free(names[i]);
	}
	free(names);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	return done;
}

static void test_replay_unwind(void **state)
{
	(void)state;
	assert_true(replay("unwind", ms_fuzz_unwind) >= 50);
}

static void test_replay_cfirows(void **state)
{
	(void)state;
	assert_true(replay("cfirows", ms_fuzz_cfirows) >= 40);
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
