/*
 * perf/ratewatch: the same counts at the same times give the same words.
 * Sequences as ms-collect sees them: a quiet recording, throttling in the
 * first second and later, losses on a terminal and not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "perf/ratewatch.h"

#define S 1000000000ull
#define MS 1000000ull

static void test_precheck(void **state)
{
	char buf[512];

	(void)state;
	assert_false(ms_rate_precheck(999, 100000, buf, sizeof(buf)));
	assert_false(ms_rate_precheck(50000, 100000, buf, sizeof(buf)));	/* half: fine */
	assert_false(ms_rate_precheck(0, 100000, buf, sizeof(buf)));	/* a period */
	assert_false(ms_rate_precheck(100000, -1, buf, sizeof(buf)));	/* unknown limit */
	assert_true(ms_rate_precheck(50001, 100000, buf, sizeof(buf)));
	assert_true(ms_rate_precheck(100000, 100000, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "-F 100000 is near the kernel's limit of 100000 samples per "
			       "second per CPU (kernel.perf_event_max_sample_rate)"));
	assert_non_null(strstr(buf, "lower -F"));
}

static void test_quiet(void **state)
{
	struct ms_rate_watch w;
	struct ms_rate_counts c = { .records = 0 };

	(void)state;
	ms_rate_watch_start(&w, 10 * S);
	for (uint64_t t = 10 * S; t < 20 * S; t += 100 * MS) {
		c.records += 1000;
		assert_int_equal(ms_rate_watch_step(&w, &c, t, true), MS_RATE_QUIET);
	}
	assert_false(w.line_shown);
}

static void test_throttled_first_second(void **state)
{
	struct ms_rate_watch w;
	struct ms_rate_counts c = { .records = 500 };
	char buf[256];

	(void)state;
	ms_rate_watch_start(&w, 0);
	assert_int_equal(ms_rate_watch_step(&w, &c, 200 * MS, false), MS_RATE_QUIET);
	c.throttled = 3;
	assert_int_equal(ms_rate_watch_step(&w, &c, 700 * MS, false), MS_RATE_THROTTLED);
	ms_rate_watch_words(MS_RATE_THROTTLED, &c, buf, sizeof(buf));
	assert_string_equal(buf, "the kernel throttled sampling 3 times in the first second: this "
			    "rate cannot be kept (kernel.perf_cpu_time_max_percent); lower -F or "
			    "--stack-size");
	/* once only; not a terminal: no status line either */
	c.throttled = 9;
	assert_int_equal(ms_rate_watch_step(&w, &c, 900 * MS, false), MS_RATE_QUIET);
	assert_int_equal(ms_rate_watch_step(&w, &c, 5 * S, false), MS_RATE_QUIET);
}

/* Throttling that starts later is for the status line, not the warning. */
static void test_throttled_later(void **state)
{
	struct ms_rate_watch w;
	struct ms_rate_counts c = { .records = 500, .throttled = 1 };

	(void)state;
	ms_rate_watch_start(&w, 0);
	assert_int_equal(ms_rate_watch_step(&w, &c, S + 1, false), MS_RATE_QUIET);
	assert_int_equal(ms_rate_watch_step(&w, &c, S + 2, true), MS_RATE_LINE);
}

/* Losses on a terminal: a line at once, then at most once a second. */
static void test_status_line(void **state)
{
	struct ms_rate_watch w;
	struct ms_rate_counts c = { .records = 100 };
	char buf[256];
	int lines = 0;

	(void)state;
	ms_rate_watch_start(&w, 0);
	assert_int_equal(ms_rate_watch_step(&w, &c, 2 * S, true), MS_RATE_QUIET);
	c.kernel_lost = 7;
	c.dropped = 2;
	for (uint64_t t = 2 * S; t <= 5 * S; t += 100 * MS)
		if (ms_rate_watch_step(&w, &c, t, true) == MS_RATE_LINE)
			lines++;
	/* at 2.0, 3.0, 4.0 and 5.0 s */
	assert_int_equal(lines, 4);
	assert_true(w.line_shown);
	ms_rate_watch_words(MS_RATE_LINE, &c, buf, sizeof(buf));
	assert_string_equal(buf, "recording: 100 records, 7 lost by the kernel, 2 dropped by the "
			    "collector, throttled 0 times");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precheck),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_throttled_first_second),
		cmocka_unit_test(test_throttled_later),
		cmocka_unit_test(test_status_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
