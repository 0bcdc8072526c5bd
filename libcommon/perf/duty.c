/* The sampling duty's slices: see perf/duty.h. */
#include "perf/duty.h"

void ms_duty_init(struct ms_duty_slicer *d, uint64_t slice_ns, uint64_t now_ns)
{
	*d = (struct ms_duty_slicer){ MS_DUTY_FULL, slice_ns ? slice_ns : 1, now_ns };
}

void ms_duty_set(struct ms_duty_slicer *d, uint32_t duty_ppm, uint64_t now_ns)
{
	if (!duty_ppm)
		duty_ppm = 1;
	d->duty_ppm = duty_ppm > MS_DUTY_FULL ? MS_DUTY_FULL : duty_ppm;
	d->origin_ns = now_ns;
}

bool ms_duty_on(const struct ms_duty_slicer *d, uint64_t now_ns, uint64_t *next_ns)
{
	uint64_t into, start, on_ns;

	if (d->duty_ppm >= MS_DUTY_FULL) {
		*next_ns = UINT64_MAX;
		return true;
	}
	/* A clock set before the origin (it is monotonic: only a caller's slip) counts as its start. */
	into = now_ns > d->origin_ns ? (now_ns - d->origin_ns) % d->slice_ns : 0;
	start = now_ns - into;
	/* slice_ns < 2^64 / 10^6 for any sane slice: no overflow */
	on_ns = d->slice_ns * d->duty_ppm / MS_DUTY_FULL;
	if (!on_ns)
		on_ns = 1;
	if (into < on_ns) {
		*next_ns = start + on_ns;
		return true;
	}
	*next_ns = start + d->slice_ns;
	return false;
}
