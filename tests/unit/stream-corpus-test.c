/*
 * Replays the committed fuzz corpus of the stream and the perf decoder
 * (tests/fuzz/corpus/decode and /stream) through their fuzz targets in
 * `make check`: every input a fuzzer found interesting, and every crash
 * it once found, stays a test. A target that finds an invariant broken
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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#ifndef MS_FUZZ_CORPUS
#error "MS_FUZZ_CORPUS names the corpus directory"
#endif

/* Larger than any input the targets take. */
#define INPUT_MAX (2u << 20)

static unsigned char *read_input(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf;
	struct stat st;

	if (fd < 0)
		fail_msg("cannot open '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > INPUT_MAX)
		fail_msg("'%s' is not a regular file of at most %u bytes", path, INPUT_MAX);
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	assert_non_null(buf);
	if (read(fd, buf, (size_t)st.st_size) != st.st_size)
		fail_msg("cannot read '%s'", path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static unsigned replay(const char *sub, int (*target)(const uint8_t *, size_t))
{
	char dir[4096], path[4096 + 256];
	struct dirent **names;
	unsigned done = 0;
	int n, saved, devnull;

	snprintf(dir, sizeof(dir), "%s/%s", MS_FUZZ_CORPUS, sub);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read the corpus '%s'", dir);
	/* the refusals are expected; their messages are noise here */
	fflush(stderr);
	saved = dup(2);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, 2);
	close(devnull);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			unsigned char *buf;
			size_t len;

			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			buf = read_input(path, &len);
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

static void test_replay_decode(void **state)
{
	(void)state;
	assert_true(replay("decode", ms_fuzz_decode) >= 40);
}

static void test_replay_stream(void **state)
{
	(void)state;
	assert_true(replay("stream", ms_fuzz_stream) >= 40);
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
