/*
 * perf/budget: the controller's decisions over recorded sequences of
 * observations (steady, over, under, bursty) are exact, and a simulated
 * pipeline whose cost follows the rate is kept within its budget.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "perf/budget.h"

#define MS 1000000ull

static const struct ms_budget_config cfg = {
	.budget_ppm = 20000, .max_freq = 10000, .min_freq = 10, .window_ns = 250 * MS,
};

struct step {
	uint64_t wall_ms;
	uint64_t cpu_us;	/* cumulative */
	int change;		/* expected */
	uint64_t freq;		/* expected after the step */
};

static void replay(const struct step *steps, size_t n)
{
	struct ms_budget_state s;

	ms_budget_init(&s, &cfg);
	for (size_t i = 0; i < n; i++) {
		struct ms_budget_obs o = { steps[i].wall_ms * MS, steps[i].cpu_us * 1000 };
		struct ms_budget_decision d = ms_budget_step(&cfg, &s, &o);

		if ((int)d.change != steps[i].change || s.freq != steps[i].freq)
			fail_msg("step %zu (t=%llu ms): change %d freq %llu, expected %d %llu", i,
				 (unsigned long long)steps[i].wall_ms, d.change,
				 (unsigned long long)s.freq, steps[i].change,
				 (unsigned long long)steps[i].freq);
		if (d.change)
			assert_int_equal(d.freq, s.freq);
	}
}

/* Within the budget from the start: nothing changes. */
static void test_steady(void **state)
{
	static const struct step steps[] = {
		{ 0, 0, 0, 10000 },
		{ 250, 3000, 0, 10000 },	/* 1.2 % */
		{ 500, 6000, 0, 10000 },
		{ 750, 9500, 0, 10000 },	/* 1.4 % */
		{ 1000, 13000, 0, 10000 },
	};

	(void)state;
	replay(steps, sizeof(steps) / sizeof(steps[0]));
}

/* Over: down at once to 90 % of the budget; then kept. */
static void test_over(void **state)
{
	static const struct step steps[] = {
		{ 0, 0, 0, 10000 },
		{ 100, 50000, 0, 10000 },	/* within the window: no decision */
		{ 250, 20000, 1, 2250 },	/* 8 %: 10000 * 1.8 % / 8 % */
		{ 500, 10000, 0, 2250 },	/* CPU time went back (a misread): ignored */
		{ 500, 24500, 0, 2250 },	/* 1.8 %: kept */
		{ 750, 29000, 0, 2250 },
	};

	(void)state;
	replay(steps, sizeof(steps) / sizeof(steps[0]));
}

/* Under, after a decrease: up again after two calm windows, at most doubling. */
static void test_under(void **state)
{
	static const struct step steps[] = {
		{ 0, 0, 0, 10000 },
		{ 250, 20000, 1, 2250 },	/* 8 % */
		{ 500, 20500, 0, 2250 },	/* 0.2 %: calm 1 */
		{ 750, 21000, 1, 4500 },	/* calm 2: to 1.6 %, at most x2 */
		{ 1000, 21500, 0, 4500 },
		{ 1250, 22000, 1, 9000 },
		{ 1500, 22500, 0, 9000 },
		{ 1750, 23000, 1, 10000 },	/* the requested rate, never above */
		{ 2000, 23500, 0, 10000 },
		{ 2250, 24000, 0, 10000 },
	};

	(void)state;
	replay(steps, sizeof(steps) / sizeof(steps[0]));
}

/* Bursty: a burst resets the calm count; no swinging on one quiet window. */
static void test_bursty(void **state)
{
	static const struct step steps[] = {
		{ 0, 0, 0, 10000 },
		{ 250, 10000, 1, 4500 },	/* 4 %: 10000 * 1.8 / 4 */
		{ 500, 10500, 0, 4500 },	/* 0.2 %: calm 1 */
		{ 750, 15000, 0, 4500 },	/* 1.8 %: within, calm 0 */
		{ 1000, 15500, 0, 4500 },	/* calm 1 */
		{ 1250, 25500, 1, 2025 },	/* 4 %: down */
		{ 1500, 26000, 0, 2025 },	/* calm 1 */
		{ 1750, 26500, 1, 4050 },	/* calm 2: up */
	};

	(void)state;
	replay(steps, sizeof(steps) / sizeof(steps[0]));
}

/*
 * A pipeline whose cost follows the rate: 16 threads, 5 us of microscope's
 * CPU per sample. At 10 kHz that is 80 % of a CPU; with a 2 % budget the
 * share is at or under it from the second window on, and stays there.
 */
static void test_simulated(void **state)
{
	struct ms_budget_state s;
	uint64_t wall = 0, cpu = 0, window_cpu, over = 0;

	(void)state;
	ms_budget_init(&s, &cfg);
	for (int w = 0; w < 200; w++) {
		struct ms_budget_obs o = { wall, cpu };

		ms_budget_step(&cfg, &s, &o);
		/* a quarter second at the rate in force: freq * 16 * 5 us * 0.25 s */
		window_cpu = s.freq * 16 * 5000 / 4;
		if (w > 1 && window_cpu * 1000000 / (250 * MS) > cfg.budget_ppm)
			over++;
		wall += 250 * MS;
		cpu += window_cpu;
	}
	assert_int_equal(over, 0);
	assert_true(s.freq >= cfg.min_freq && s.freq < 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady),
		cmocka_unit_test(test_over),
		cmocka_unit_test(test_under),
		cmocka_unit_test(test_bursty),
		cmocka_unit_test(test_simulated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
