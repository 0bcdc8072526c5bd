/*
 * Off-CPU intervals as the views read them: causes, missing ends, known parts.
 */
#include "analysis/intervals.h"

#include "capture/weight.h"
#include "stream/records.h"

uint32_t ms_interval_cause(const struct ms_capture *cap, const struct ms_cap_interval *iv)
{
	uint32_t c;

	if (iv->evidence >= cap->n_evidence)
		return MS_CAUSE_UNKNOWN;
	c = cap->evidence[iv->evidence].cause;
	return c < MS_CAUSE_COUNT ? c : MS_CAUSE_UNKNOWN;
}

static const char *const missing_words[MS_INTERVAL_MISSING_COUNT] = {
	[MS_INTERVAL_COMPLETE] = "both ends known",
	[MS_INTERVAL_BEGAN_INSIDE] = "off CPU when the recording began",
	[MS_INTERVAL_ENDED_INSIDE] = "still off CPU when the recording ended",
	[MS_INTERVAL_LOST_START] = "records were lost before it came back: its start is not known",
	[MS_INTERVAL_LOST_END] = "records were lost while it was off CPU: its end is not known",
};

const char *ms_interval_missing_words(uint32_t missing)
{
	return missing < MS_INTERVAL_MISSING_COUNT ? missing_words[missing] : "an end is missing";
}

uint64_t ms_interval_clipped(const struct ms_cap_interval *iv, uint64_t lo, uint64_t hi)
{
	uint64_t a = iv->start > lo ? iv->start : lo, b = iv->end < hi ? iv->end : hi;

	if (iv->missing != MS_INTERVAL_COMPLETE || b <= a)
		return 0;
	return b - a;
}

void ms_interval_known(const struct ms_capture *cap, const struct ms_cap_interval *iv,
		       uint64_t *from, uint64_t *to)
{
	uint64_t rec_start, rec_end;

	ms_capture_span(cap, &rec_start, &rec_end);
	switch (iv->missing) {
	case MS_INTERVAL_COMPLETE:
		*from = iv->start;
		*to = iv->end;
		return;
	case MS_INTERVAL_BEGAN_INSIDE:
		*to = iv->end;
		*from = rec_start && rec_start <= iv->end ? rec_start : iv->end;
		return;
	case MS_INTERVAL_ENDED_INSIDE:
		*from = iv->start;
		*to = rec_end >= iv->start ? rec_end : iv->start;
		return;
	default:
		/* the one end the capture holds */
		*from = *to = iv->start ? iv->start : iv->end;
		return;
	}
}

uint64_t ms_intervals_complete_ns(const struct ms_capture *cap)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < cap->n_intervals; i++)
		sum = ms_weight_add(sum, ms_interval_clipped(&cap->intervals[i], 0, UINT64_MAX));
	return sum;
}
