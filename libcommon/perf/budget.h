/*
 * The CPU budget controller (issue 16): keeps microscope's own CPU time
 * (the collector's and every live stage's, read by the caller: perf/cpumeter.h)
 * within a share of one CPU, by lowering the sampling frequency when a
 * window's share, or the share since the start, is over the budget, and
 * raising it again, up to the requested rate, when there is room.
 * (ms-collect's "frequency" is the sampling duty: perf/governor.h.)
 *
 * A pure function of (state, observation) -> (state, decision): no clock,
 * no I/O, integer arithmetic only, so that the same observations give the
 * same decisions (tests/unit/budget-test replays recorded sequences).
 *
 * The budget is microscope's own cost, not a promise about the target's
 * total slowdown: the kernel's work at each sample (the interrupt, the
 * stack copy) is charged to the target, not to microscope.
 */
#ifndef MS_PERF_BUDGET_H
#define MS_PERF_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct ms_budget_config {
	uint32_t budget_ppm;	/* the share of one CPU allowed, in millionths (2 % = 20000) */
	uint64_t max_freq;	/* the requested rate: never above it */
	uint64_t min_freq;	/* never below it (a profile needs some samples) */
	uint64_t window_ns;	/* a decision at most once per window */
	uint64_t start_freq;	/* the first window's, 0: max_freq */
};

struct ms_budget_state {
	uint64_t freq;		/* in force */
	uint64_t window_start_ns, window_cpu_ns;	/* where the current window began */
	uint64_t start_ns, start_cpu_ns;	/* the first observation */
	uint32_t calm;		/* consecutive windows well under the budget */
	bool started;
};

/* What the caller observed: cumulative, monotonic. */
struct ms_budget_obs {
	uint64_t wall_ns;
	uint64_t cpu_ns;	/* microscope's own CPU time so far */
};

struct ms_budget_decision {
	bool change;		/* set freq now (and record the change) */
	uint64_t freq;
	uint32_t share_ppm;	/* the window's share, when a window ended; else 0 */
	bool window_ended;
};

void ms_budget_init(struct ms_budget_state *s, const struct ms_budget_config *c);
struct ms_budget_decision ms_budget_step(const struct ms_budget_config *c,
					 struct ms_budget_state *s,
					 const struct ms_budget_obs *o);

#endif
