/*
 * What a sample row stands for in time. A recording held to a CPU budget
 * paused its sampling for part of the time (capture.h: ms_cap_duty): a
 * sample taken while the duty was duty_ppm stands for 1000000 / duty_ppm
 * times its period. Every view and exporter that weighs samples by time
 * calls these, so that their numbers agree. Pure functions of a loaded
 * capture (whose duty rows the reader checked: sorted, 1..1000000).
 */
#ifndef MS_CAPTURE_WEIGHT_H
#define MS_CAPTURE_WEIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"

/* The duty of sampling that never paused, in millionths. */
#define MS_DUTY_FULL 1000000u

/*
 * The duty in force at time: that of the last duty row at or before time,
 * MS_DUTY_FULL before the first row or without rows. O(log n_duty).
 */
uint32_t ms_capture_duty_at(const struct ms_capture *cap, uint64_t time);

/*
 * The time sample row s stands for (nanoseconds for cpu-clock): its period
 * (already the sum of its count samples') times MS_DUTY_FULL / the duty
 * in force at its time, rounded down; UINT64_MAX when that does not fit.
 * Without duty rows, its period.
 */
uint64_t ms_capture_sample_weight(const struct ms_capture *cap, const struct ms_cap_sample *s);

/*
 * Whether the samples' periods are nanoseconds of CPU time: info "event"
 * is cpu-clock or task-clock, "cpu" (as a pprof import names it), or
 * absent.
 */
bool ms_capture_time_event(const struct ms_capture *cap);

/* a + b, or UINT64_MAX when that does not fit: sums of weights saturate as weights do. */
static inline uint64_t ms_weight_add(uint64_t a, uint64_t b)
{
	return __builtin_add_overflow(a, b, &a) ? UINT64_MAX : a;
}

#endif
