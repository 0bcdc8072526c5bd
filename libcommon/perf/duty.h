/*
 * The sampling duty: under a CPU budget (perf/budget.h) ms-collect keeps
 * its events on for a share of each slice of time and off for the rest.
 *
 * Why pausing and not a longer period: PERF_EVENT_IOC_PERIOD changes only
 * the event it is given, not the copies that threads started later
 * inherited (the shape perf/session.h describes), while turning the owner's
 * events off and on (PR_TASK_PERF_EVENTS_DISABLE/ENABLE) reaches every
 * inherited copy in one call. A clock event's period carries over a pause,
 * so the samples come at the requested rate of the time it is on: duty D
 * samples D of the time, and each sample stands for 1/D times its period.
 *
 * Pure: the caller gives the time and applies the answer.
 */
#ifndef MS_PERF_DUTY_H
#define MS_PERF_DUTY_H

#include <stdbool.h>
#include <stdint.h>

#define MS_DUTY_FULL 1000000u	/* ppm: always on */
/*
 * 20 ms: long enough that switching costs nothing (two system calls per
 * slice), short enough that a pause is not a blind spot over a phase of
 * the program (a program whose work comes in 20 ms beats could still be
 * aliased; the man page says so).
 */
#define MS_DUTY_SLICE_NS 20000000ull

struct ms_duty_slicer {
	uint32_t duty_ppm;	/* MS_DUTY_FULL: never paused */
	uint64_t slice_ns;
	uint64_t origin_ns;	/* slices start here, every slice_ns */
};

void ms_duty_init(struct ms_duty_slicer *d, uint64_t slice_ns, uint64_t now_ns);
/* A new duty (1 to MS_DUTY_FULL) from now on: slices start again at now. */
void ms_duty_set(struct ms_duty_slicer *d, uint32_t duty_ppm, uint64_t now_ns);
/*
 * Whether the events should be on at now, and in *next_ns when that next
 * changes (UINT64_MAX: never, at full duty).
 */
bool ms_duty_on(const struct ms_duty_slicer *d, uint64_t now_ns, uint64_t *next_ns);

#endif
