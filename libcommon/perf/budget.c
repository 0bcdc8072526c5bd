/* The CPU budget controller: see perf/budget.h. */
#include "perf/budget.h"

/*
 * Over the budget: the frequency that would have kept this window at 90 %
 * of it, at once (the cost of recording is close to proportional to the
 * rate). Well under (below half) for two windows in a row: up again, at
 * most doubling, towards what would reach 80 % of the budget. The gap
 * between 50 % and 90 % keeps a steady load from swinging the rate.
 *
 * The share since the start counts too, so that the budget holds over
 * the whole recording and not only window by window: while it is over the
 * budget (the stages' start, the first window at the full rate, a burst
 * went over) the rate never goes up, and a window over half the budget
 * brings it down to 90 % of that half, so that the excess is paid back.
 */
#define TARGET_DOWN_PCT 90
#define TARGET_UP_PCT 80
#define CALM_PCT 50
#define CALM_WINDOWS 2


static uint64_t clamp(const struct ms_budget_config *c, uint64_t f)
{
	if (f > c->max_freq)
		f = c->max_freq;
	if (f < c->min_freq)
		f = c->min_freq;
	return f;
}

void ms_budget_init(struct ms_budget_state *s, const struct ms_budget_config *c)
{
	*s = (struct ms_budget_state){ .freq = c->start_freq ? clamp(c, c->start_freq) : c->max_freq };
}

struct ms_budget_decision ms_budget_step(const struct ms_budget_config *c,
					 struct ms_budget_state *s,
					 const struct ms_budget_obs *o)
{
	struct ms_budget_decision d = { .freq = s->freq };
	uint64_t wall, cpu, share, total, budget, want;

	if (!s->started) {
		s->started = true;
		s->window_start_ns = s->start_ns = o->wall_ns;
		s->window_cpu_ns = s->start_cpu_ns = o->cpu_ns;
		return d;
	}
	if (o->wall_ns < s->window_start_ns + c->window_ns || o->cpu_ns < s->window_cpu_ns)
		return d;
	wall = o->wall_ns - s->window_start_ns;
	cpu = o->cpu_ns - s->window_cpu_ns;
	s->window_start_ns = o->wall_ns;
	s->window_cpu_ns = o->cpu_ns;
	/* millionths of one CPU; wall >= window_ns > 0 */
	share = cpu >= UINT64_MAX / 1000000u ? UINT64_MAX : cpu * 1000000u / wall;
	d.window_ended = true;
	d.share_ppm = share > UINT32_MAX ? UINT32_MAX : (uint32_t)share;
	/* Since the start: wall > 0 here, and the CPU time never went back past its start. */
	wall = o->wall_ns - s->start_ns;
	cpu = o->cpu_ns - s->start_cpu_ns;
	total = cpu >= UINT64_MAX / 1000000u ? UINT64_MAX : cpu * 1000000u / wall;
	/* In debt: half the budget, until the share since the start is back under it. */
	budget = total > c->budget_ppm ? c->budget_ppm / 2 : c->budget_ppm;
	if (share > budget) {
		s->calm = 0;
		/* freq * (budget * 90 %) / share, in integers without overflow for sane rates */
		want = s->freq * (budget * TARGET_DOWN_PCT / 100) / share;
	} else if (budget < c->budget_ppm) {
		s->calm = 0;	/* in debt: never up */
		return d;
	} else if (share * 100 < (uint64_t)c->budget_ppm * CALM_PCT && s->freq < c->max_freq) {
		if (++s->calm < CALM_WINDOWS)
			return d;
		s->calm = 0;
		want = share ? s->freq * ((uint64_t)c->budget_ppm * TARGET_UP_PCT / 100) / share :
			       2 * s->freq;
		if (want > 2 * s->freq)
			want = 2 * s->freq;
	} else {
		s->calm = 0;
		return d;
	}
	want = clamp(c, want);
	if (want != s->freq) {
		s->freq = want;
		d.change = true;
		d.freq = want;
	}
	return d;
}
