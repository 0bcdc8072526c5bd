/* ms-collect's CPU budget at work: see perf/governor.h. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "perf/governor.h"
#include "util/error.h"

/*
 * The duty at which rate samples a second on every CPU would cost the
 * budget: budget / (rate * cpus * cost), in ppm; full when unknown.
 */
static uint64_t first_duty(uint32_t budget_ppm, uint64_t rate, uint32_t cpus)
{
	uint64_t need, duty;

	/* ns of CPU a second the full rate would cost; unknown (a period) or absurd: full */
	if (!rate || __builtin_mul_overflow(rate, (uint64_t)(cpus ? cpus : 1) * MS_GOVERNOR_SAMPLE_NS,
					    &need))
		return MS_DUTY_FULL;
	/* budget_ppm * 1000 ns of CPU a second are allowed: duty = allowed / needed, in ppm */
	duty = (uint64_t)budget_ppm * 1000u * MS_DUTY_FULL / need;
	return duty > MS_DUTY_FULL ? MS_DUTY_FULL : duty;
}

int ms_governor_init(struct ms_governor *g, uint32_t budget_ppm, uint64_t rate, uint32_t cpus,
		     const pid_t *pids, uint32_t n, uint64_t now_ns)
{
	*g = (struct ms_governor){
		/* The controller works in duty units: its "frequency" is the duty in ppm. */
		.config = { budget_ppm, MS_DUTY_FULL, MS_GOVERNOR_MIN_DUTY, MS_GOVERNOR_WINDOW_NS,
			    first_duty(budget_ppm, rate, cpus) },
		.rate = rate,
		.next_toggle_ns = UINT64_MAX,
		.lowest_ppm = MS_DUTY_FULL,
		.start_ns = now_ns,
	};
	if (ms_cpumeter_init(&g->meter, pids, n) < 0)
		return -1;
	g->start_cpu_ns = ms_cpumeter_read(&g->meter);
	ms_budget_init(&g->state, &g->config);
	ms_duty_init(&g->slicer, MS_DUTY_SLICE_NS, now_ns);
	g->first_ppm = (uint32_t)g->state.freq;
	return 0;
}

/*
 * Every event this process owns, and the copies threads inherited from
 * them; or those g->toggle switches.
 */
static void set_events(struct ms_governor *g, bool on, uint64_t now_ns)
{
	int r;

	if (on == g->slicer.on)
		return;
	r = g->toggle ? g->toggle(g->toggle_arg, on) :
	    prctl(on ? PR_TASK_PERF_EVENTS_ENABLE : PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
	if (r < 0) {
		if (!g->told)
			ms_warn("cannot turn the recording's events %s for --budget (%s: %s); "
				"the budget is not kept", on ? "on" : "off",
				g->toggle ? "ioctl" : "prctl", strerror(errno));
		g->told = true;
		return;
	}
	/*
	 * On from when the call returned: it takes a few hundred
	 * microseconds (an IPI per event on a running thread), during which
	 * this process holds a CPU the target would be sampled on. Off from
	 * when it was called, for the same reason.
	 */
	if (on) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	ms_duty_switched(&g->slicer, on, now_ns);
}

/* A new duty from now on: the slicer's account starts again, and *rec says so in the stream. */
static void change_duty(struct ms_governor *g, uint32_t duty, uint32_t share_ppm, uint64_t now_ns,
			struct ms_duty *rec)
{
	ms_duty_set(&g->slicer, duty, now_ns);
	g->changes++;
	if (duty < g->lowest_ppm)
		g->lowest_ppm = duty;
	*rec = (struct ms_duty){
		.time = now_ns,
		.duty_ppm = duty,
		.rate = g->rate * duty / MS_DUTY_FULL,
		.share_ppm = share_ppm,
		.budget_ppm = g->config.budget_ppm,
	};
}

bool ms_governor_step(struct ms_governor *g, uint64_t now_ns, bool may_change,
		       struct ms_duty *rec)
{
	struct ms_budget_decision d = { 0 };

	if (!g->first_told) {
		/*
		 * The first duty, from the loop's first turn: until then the
		 * events were on (the program started or was attached at the
		 * full rate).
		 */
		g->first_told = true;
		if (g->first_ppm < MS_DUTY_FULL) {
			change_duty(g, g->first_ppm, 0, now_ns, rec);
			d.change = true;
		}
	} else if (may_change && (!g->state.started ||
				  now_ns >= g->state.window_start_ns + g->config.window_ns)) {
		/* The clocks are read only when a window ends: the loop turns far more often. */
		struct ms_budget_obs o = { now_ns, ms_cpumeter_read(&g->meter) };

		d = ms_budget_step(&g->config, &g->state, &o);
		if (d.change)
			change_duty(g, (uint32_t)d.freq, d.share_ppm, now_ns, rec);
	}
	set_events(g, ms_duty_on(&g->slicer, now_ns, &g->next_toggle_ns), now_ns);
	return d.change;
}

uint64_t ms_governor_deadline(const struct ms_governor *g)
{
	uint64_t window_end = g->state.window_start_ns + g->config.window_ns;

	return g->next_toggle_ns < window_end ? g->next_toggle_ns : window_end;
}

uint32_t ms_governor_share(struct ms_governor *g, uint64_t now_ns)
{
	uint64_t cpu = ms_cpumeter_read(&g->meter) - g->start_cpu_ns;
	uint64_t wall = now_ns > g->start_ns ? now_ns - g->start_ns : 1;
	uint64_t share = cpu * 1000000u / wall;

	return share > UINT32_MAX ? UINT32_MAX : (uint32_t)share;
}
