/*
 * Replays the committed fuzz corpus of the capture reader
 * (tests/fuzz/corpus/capture) through its fuzz target in `make check`:
 * real captures, the inputs a fuzzer found interesting, and every input
 * that once crashed the reader or a consumer stay tests. A target that
 * finds an invariant broken aborts, which fails this test.
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
#include <string.h>
#include <unistd.h>

#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#ifndef MS_FUZZ_CORPUS
#error "MS_FUZZ_CORPUS names the corpus directory"
#endif

/* The target skips larger inputs; a larger file is not read. */
#define INPUT_MAX (1u << 20)

static unsigned replay(const char *sub, int (*target)(const uint8_t *, size_t))
{
	char dir[4096], path[4096 + 256];
	struct dirent **names;
	unsigned done = 0;
	int n, saved, null_fd;

	snprintf(dir, sizeof(dir), "%s/%s", MS_FUZZ_CORPUS, sub);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read the corpus '%s'", dir);
	/* the refusals are expected; their messages are noise here */
	fflush(stderr);
	saved = dup(2);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(saved >= 0 && null_fd >= 0);
	dup2(null_fd, 2);
	close(null_fd);
	for (int i = 0; i < n; i++) {
		unsigned char *buf;
		size_t len;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			if (ms_read_file(path, INPUT_MAX, &buf, &len) == 0) {
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
	return done;
}

static void test_replay_capture(void **state)
{
	(void)state;
	assert_true(replay("capture", ms_fuzz_capture) >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_capture),
	};

	ms_set_progname("capture-corpus-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
