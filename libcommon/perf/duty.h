/*
 * The sampling duty: under a CPU budget (perf/budget.h) ms-collect keeps
 * its events on for a share of the time and off for the rest.
 *
 * Why pausing and not a longer period: PERF_EVENT_IOC_PERIOD changes only
 * the event it is given, not the copies that threads started later
 * inherited (the shape perf/session.h describes), while turning the owner's
 * events off and on (PR_TASK_PERF_EVENTS_DISABLE/ENABLE) reaches every
 * inherited copy in one call. A clock event's period carries over a pause,
 * so the samples come at the requested rate of the time it is on: duty D
 * samples D of the time, and each sample stands for 1/D times its period.
 *
 * That holds only if the events are on D of the time in fact, whenever the
 * recorder gets the CPU to switch them: on a busy machine it wakes late,
 * and a fixed pattern of slices (on for the first D of each) would lose
 * every on-time it woke too late for, sampling far less than D. So the
 * slicer keeps an account instead: the time the events should have been
 * on since the duty was set (D times the time since) against the time they
 * were on as switched (ms_duty_switched()). Off, they go on once a slice's
 * worth of on-time (D times the slice) is owed; on, off once nothing is.
 * A late switch is made up by the next: over any stretch longer than a few
 * slices the share on is D, whatever the latency.
 *
 * A new duty takes over what is owed, as time stood for: each sample
 * weighs 1/D, so x ns on owed under D1 are x * D2 / D1 under D2. Starting
 * each duty's account from nothing instead dropped up to a stretch on
 * (MS_DUTY_MIN_ON_NS) at every change; at 2 % with a change a second,
 * a tenth of the time went uncounted.
 *
 * Pure: the caller gives the time, applies the answer and says when it did.
 */
#ifndef MS_PERF_DUTY_H
#define MS_PERF_DUTY_H

#include <stdbool.h>
#include <stdint.h>

#define MS_DUTY_FULL 1000000u	/* ppm: always on */
/*
 * 20 ms: long enough that switching costs little (two system calls and
 * two wake-ups per slice), short enough that a pause is not a blind spot
 * over a phase of the program (a program whose work comes in 20 ms beats
 * could still be aliased; the man page says so).
 */
#define MS_DUTY_SLICE_NS 20000000ull
/*
 * The least time on at a stretch: each time the events go on, the kernel
 * takes a sample or so early (a clock event's timer restarts), which over
 * stretches of a millisecond (5 % of a slice) counted some 15 % of time
 * that was not there. At low duties the stretches come less often instead.
 */
#define MS_DUTY_MIN_ON_NS 5000000ull

struct ms_duty_slicer {
	uint32_t duty_ppm;	/* MS_DUTY_FULL: never paused */
	uint64_t slice_ns;
	uint64_t since_ns;	/* the account starts here: the duty was set */
	uint64_t on_ns;		/* on since since_ns, up to changed_ns */
	uint64_t changed_ns;	/* the last switch (or since_ns) */
	int64_t carried_ns;	/* owed from the duty before, scaled to this one (< 0: ahead) */
	bool on;		/* as last switched */
};

/* Full duty, the events on (as they start) at now. */
void ms_duty_init(struct ms_duty_slicer *d, uint64_t slice_ns, uint64_t now_ns);
/* A new duty (1 to MS_DUTY_FULL) from now on: the account starts again at now. */
void ms_duty_set(struct ms_duty_slicer *d, uint32_t duty_ppm, uint64_t now_ns);
/*
 * Whether the events should be on at now, and in *next_ns when that is
 * to change if nothing else does (UINT64_MAX: never).
 */
bool ms_duty_on(const struct ms_duty_slicer *d, uint64_t now_ns, uint64_t *next_ns);
/* The events were switched on or off at now. */
void ms_duty_switched(struct ms_duty_slicer *d, bool on, uint64_t now_ns);
/* The share of the time since the duty was set that the events were on, in ppm. */
uint32_t ms_duty_kept(const struct ms_duty_slicer *d, uint64_t now_ns);

#endif
