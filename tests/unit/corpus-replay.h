/*
 * Unit tests: replay a committed fuzz corpus (tests/fuzz/corpus/SUB)
 * through its fuzz target in `make check`, so that every input a fuzzer
 * found interesting, and every crash it once found, stays a test. A
 * target that finds an invariant broken aborts, which fails the test.
 * Include after <cmocka.h>; the program is built with -DMS_FUZZ_REPLAY
 * and -DMS_FUZZ_CORPUS (tests/fuzz/fuzz.h).
 */
#ifndef MS_TESTS_CORPUS_REPLAY_H
#define MS_TESTS_CORPUS_REPLAY_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "formats/formats.h"

#ifndef MS_FUZZ_CORPUS
#error "MS_FUZZ_CORPUS names the corpus directory"
#endif

/*
 * Run target on every file of the corpus folder sub, in name order, with
 * standard error silenced (refusals are expected; their messages are
 * noise here). A file that cannot be read, or is over max_len bytes,
 * fails the test: none may be passed over. The number of inputs replayed.
 */
static unsigned corpus_replay(const char *sub, int (*target)(const uint8_t *, size_t),
			      size_t max_len)
{
	char dir[4096], path[4096 + 256];
	struct dirent **names;
	unsigned done = 0;
	int n, saved, devnull;

	snprintf(dir, sizeof(dir), "%s/%s", MS_FUZZ_CORPUS, sub);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read the corpus '%s'", dir);
	fflush(stderr);
	saved = dup(2);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, 2);
	close(devnull);
	for (int i = 0; i < n; i++) {
		unsigned char *buf;
		size_t len;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			if (ms_read_file(path, max_len, &buf, &len) < 0) {
				dup2(saved, 2);
				fail_msg("corpus file '%s': unreadable or over %zu bytes", path,
					 max_len);
			}
			target(buf, len);
			free(buf);
			done++;
		}
		free(names[i]);
	}
	free(names);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return done;
}

#endif
