/*
 * Unit tests: a test's own temporary folder under $TMPDIR (else /tmp),
 * removed with everything in it at the end, so that a test leaves nothing
 * behind. Include after <cmocka.h>.
 */
#ifndef MS_TESTS_TMPDIR_H
#define MS_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* Make dir (cap bytes) a new folder named after the test. */
static inline void tmpdir_make(char *dir, size_t cap, const char *test)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, cap, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", test);
	assert_non_null(mkdtemp(dir));
}

/* Remove dir and what it holds: 0, or -1. */
static inline int tmpdir_remove(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
