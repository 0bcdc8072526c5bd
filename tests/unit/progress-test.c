/*
 * Unit tests of util/progress.h: the line's text, the stride that keeps
 * clock reads rare, and what is drawn when, on a memory stream with a
 * clock the test moves.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/progress.h"

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void test_format(void **state)
{
	char buf[128];

	(void)state;
	ms_set_progname("ms-export");
	assert_int_equal(ms_progress_format(buf, sizeof(buf), "writing", 42, 100, 3500000000ull),
			 (int)strlen("ms-export: writing  42%  3 s"));
	assert_string_equal(buf, "ms-export: writing  42%  3 s");
	ms_progress_format(buf, sizeof(buf), "writing", 0, 7, 0);
	assert_string_equal(buf, "ms-export: writing  0%  0 s");
	/* never past 100 %, whatever done says */
	ms_progress_format(buf, sizeof(buf), "writing", 9, 7, 61000000000ull);
	assert_string_equal(buf, "ms-export: writing  100%  61 s");
	/* an unknown total: the count */
	ms_progress_format(buf, sizeof(buf), "reading", 1234567, 0, 2000000000ull);
	assert_string_equal(buf, "ms-export: reading  1234567  2 s");
	/* no overflow of done * 100 */
	ms_progress_format(buf, sizeof(buf), "x", UINT64_MAX / 2, UINT64_MAX, 0);
	assert_string_equal(buf, "ms-export: x  50%  0 s");
}

static void test_stride(void **state)
{
	(void)state;
	/* rows went fast: read the clock less often, by at most 4 times */
	assert_int_equal(ms_progress_next_stride(64, 1000), 256);
	assert_int_equal(ms_progress_next_stride(64, 0), 256);
	/* about right: about the same */
	assert_int_equal(ms_progress_next_stride(1000, MS_PROGRESS_CHECK_NS), 1000);
	assert_int_equal(ms_progress_next_stride(1000, MS_PROGRESS_CHECK_NS * 2), 500);
	/* slow: more often, by at most 4 times, never below 1 */
	assert_int_equal(ms_progress_next_stride(1000, MS_PROGRESS_CHECK_NS * 100), 250);
	assert_int_equal(ms_progress_next_stride(2, MS_PROGRESS_CHECK_NS * 100), 1);
	assert_int_equal(ms_progress_next_stride(0, MS_PROGRESS_CHECK_NS * 100), 1);
	/* and never above 2^24 rows */
	assert_int_equal(ms_progress_next_stride(1ull << 24, 1), 1ull << 24);
}

/* What was drawn on the stream so far. */
static const char *drawn(FILE *f, char **buf)
{
	fflush(f);
	return *buf ? *buf : "";
}

static void test_draws_after_a_second_and_clears(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ms_progress p;
	uint64_t i;
	size_t before, widest;

	(void)state;
	ms_set_progname("ms-export");
	fake_now = 5000000000ull;
	ms_progress_start_on(&p, f, fake_clock, "writing", 1000000);
	/* half a second of work: nothing */
	for (i = 0; i < 400000; i++) {
		if (i % 1000 == 0)
			fake_now += 1250000;	/* 1.25 ms per 1000 rows */
		ms_progress_update(&p, i);
	}
	assert_string_equal(drawn(f, &buf), "");
	/* the clock is read rarely: far fewer times than rows */
	assert_true(p.clock_reads < 400);
	/* past a second: one line, redrawn over itself, never a newline */
	for (; i < 1000000; i++) {
		if (i % 1000 == 0)
			fake_now += 1250000;
		ms_progress_update(&p, i);
	}
	assert_non_null(strstr(drawn(f, &buf), "\rms-export: writing  "));
	assert_null(strchr(drawn(f, &buf), '\n'));
	/* about 0.75 s of lines at most 5 a second */
	{
		unsigned lines = 0;

		for (const char *s = drawn(f, &buf); *s; s++)
			lines += *s == '\r';
		assert_in_range(lines, 2, 6);
	}
	assert_true(p.clock_reads < 1000);
	/* finish: spaces over the line, the cursor back at its start */
	before = strlen(drawn(f, &buf));
	widest = p.width;
	assert_int_equal(widest, strlen("ms-export: writing  99%  1 s"));
	ms_progress_finish(&p);
	{
		const char *end = drawn(f, &buf) + before;

		assert_int_equal(end[0], '\r');
		assert_int_equal(end[strlen(end) - 1], '\r');
		assert_int_equal(strspn(end + 1, " "), strlen(end) - 2);
		assert_int_equal(strlen(end) - 2, widest);
	}
	fclose(f);
	free(buf);
}

static void test_quick_or_nowhere_draws_nothing(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ms_progress p;

	(void)state;
	/* quick work: finish clears nothing, draws nothing */
	fake_now = 0;
	ms_progress_start_on(&p, f, fake_clock, "writing", 10);
	for (uint64_t i = 0; i < 10; i++)
		ms_progress_update(&p, i);
	fake_now = 10 * MS_PROGRESS_DELAY_NS;
	ms_progress_finish(&p);
	assert_string_equal(drawn(f, &buf), "");
	/* no stream (stderr is not a terminal): the clock is never read */
	ms_progress_start_on(&p, NULL, fake_clock, "writing", 10);
	for (uint64_t i = 0; i < 1000000; i++)
		ms_progress_update(&p, i);
	ms_progress_finish(&p);
	assert_int_equal(p.clock_reads, 0);
	fclose(f);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_stride),
		cmocka_unit_test(test_draws_after_a_second_and_clears),
		cmocka_unit_test(test_quick_or_nowhere_draws_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
