#include <string.h>

#include "capture/weight.h"

uint32_t ms_capture_duty_at(const struct ms_capture *cap, uint64_t time)
{
	uint32_t lo = 0, hi = cap->n_duty;

	/* The first row after time; the one before it is in force. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cap->duty[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? cap->duty[lo - 1].duty_ppm : MS_DUTY_FULL;
}

uint64_t ms_capture_sample_weight(const struct ms_capture *cap, const struct ms_cap_sample *s)
{
	uint32_t duty = ms_capture_duty_at(cap, s->time);
	uint64_t q, r, w;

	if (duty >= MS_DUTY_FULL)
		return s->period;
	/* The reader refuses duty 0; a hand-made capture gets the largest weight. */
	if (!duty)
		return s->period ? UINT64_MAX : 0;
	/* period = q * duty + r: q * FULL + r * FULL / duty, exact, and r * FULL < 10^12. */
	q = s->period / duty;
	r = s->period % duty;
	if (__builtin_mul_overflow(q, (uint64_t)MS_DUTY_FULL, &w) ||
	    __builtin_add_overflow(w, r * MS_DUTY_FULL / duty, &w))
		return UINT64_MAX;
	return w;
}

bool ms_capture_time_event(const struct ms_capture *cap)
{
	const char *event = ms_capture_info_text(cap, "event");

	return !event || !strcmp(event, "cpu-clock") || !strcmp(event, "task-clock") ||
	       !strcmp(event, "cpu");
}
