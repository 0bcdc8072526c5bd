/*
 * ms-collect's CPU budget at work (--budget): the recording's own CPU time
 * (perf/cpumeter.h) is observed at each turn of the loop, the controller
 * (perf/budget.h) turns it into a sampling duty at the end of each window,
 * and the duty (perf/duty.h) into events turned off and on, all of the
 * owner's at once (PR_TASK_PERF_EVENTS_DISABLE/ENABLE: inherited copies
 * included), or those a toggle set after init switches (--off-cpu: the
 * sampler's only, so that no switch of a thread goes unrecorded). Each
 * change of duty is handed back as a stream record.
 */
#ifndef MS_PERF_GOVERNOR_H
#define MS_PERF_GOVERNOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/budget.h"
#include "perf/cpumeter.h"
#include "perf/duty.h"
#include "stream/records.h"

/* Decisions at most every 200 ms: short enough to correct a burst within a second. */
#define MS_GOVERNOR_WINDOW_NS 200000000ull
/* 0.5 %: the least duty; a profile needs some samples. */
#define MS_GOVERNOR_MIN_DUTY 5000u
/*
 * What a sample costs the recording, all stages together, for the first
 * window's duty: about 5 us with 8 KiB copies, measured here. Starting
 * at the full rate instead spent a whole window's worth of the budget
 * (and filled the rings) before the first decision; from this guess the
 * controller goes up as fast as there is room.
 */
#define MS_GOVERNOR_SAMPLE_NS 5000u

struct ms_governor {
	struct ms_budget_config config;
	struct ms_budget_state state;
	struct ms_cpumeter meter;
	struct ms_duty_slicer slicer;
	uint64_t rate;		/* the requested rate (0 in period mode) */
	bool told;		/* a failure to switch the events was said (slicer.on: their state) */
	uint64_t next_toggle_ns;
	/* for the summary */
	uint32_t first_ppm;	/* the duty from the start: a record at the first step */
	bool first_told;
	uint32_t changes, lowest_ppm;
	uint64_t start_ns, start_cpu_ns;
	/* NULL: every event of this process; else this turns the paused ones off or on (0, or -1 with errno). */
	int (*toggle)(void *arg, bool on);
	void *toggle_arg;
};

/*
 * Hold the recording to budget_ppm of one CPU, counting this process and
 * pids[0..n); rate is the requested rate (0 when unknown: a period), for
 * the records and the first duty, cpus the CPUs its threads may run on.
 * 0, or -1 after a message.
 */
int ms_governor_init(struct ms_governor *g, uint32_t budget_ppm, uint64_t rate, uint32_t cpus,
		     const pid_t *pids, uint32_t n, uint64_t now_ns);
/*
 * One turn of the loop at now: observe and decide (unless !may_change: the
 * last change is not written yet), turn the events off or on. True when
 * the duty changed: *rec is the record to write.
 */
bool ms_governor_step(struct ms_governor *g, uint64_t now_ns, bool may_change,
		       struct ms_duty *rec);
/* When step must run again at the latest (a toggle of the events is due). */
uint64_t ms_governor_deadline(const struct ms_governor *g);
/* The share of one CPU the recording used from init to now, in ppm. */
uint32_t ms_governor_share(struct ms_governor *g, uint64_t now_ns);

#endif
