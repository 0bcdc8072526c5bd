/* Whether the sampling rate is being kept: see perf/ratewatch.h. */
#include "perf/ratewatch.h"

#include <inttypes.h>
#include <stdio.h>

#define SECOND_NS 1000000000ull

bool ms_rate_precheck(uint64_t freq, long max_rate, char *buf, size_t len)
{
	if (!freq || max_rate <= 0 || freq * 2 <= (uint64_t)max_rate)
		return false;
	snprintf(buf, len, "-F %" PRIu64 " is near the kernel's limit of %ld samples per second "
		 "per CPU (kernel.perf_event_max_sample_rate), which all the threads sampled on "
		 "a CPU share and which the kernel lowers when sampling takes too long: expect "
		 "throttling, lost samples and a slowed program; lower -F (999 is the default)",
		 freq, max_rate);
	return true;
}

void ms_rate_watch_start(struct ms_rate_watch *w, uint64_t now_ns)
{
	*w = (struct ms_rate_watch){ .start_ns = now_ns };
}

enum ms_rate_say ms_rate_watch_step(struct ms_rate_watch *w, const struct ms_rate_counts *c,
				    uint64_t now_ns, bool tty)
{
	if (c->throttled && !w->throttle_said && now_ns - w->start_ns <= SECOND_NS) {
		w->throttle_said = true;
		return MS_RATE_THROTTLED;
	}
	if (!tty || !(c->kernel_lost || c->dropped || c->throttled))
		return MS_RATE_QUIET;
	if (w->last_line_ns && now_ns - w->last_line_ns < SECOND_NS)
		return MS_RATE_QUIET;
	w->last_line_ns = now_ns;
	w->line_shown = true;
	return MS_RATE_LINE;
}

void ms_rate_watch_words(enum ms_rate_say say, const struct ms_rate_counts *c, char *buf,
			 size_t len)
{
	switch (say) {
	case MS_RATE_THROTTLED:
		snprintf(buf, len, "the kernel throttled sampling %" PRIu64 " time%s in the first "
			 "second: this rate cannot be kept (kernel.perf_cpu_time_max_percent); "
			 "lower -F or --stack-size", c->throttled, c->throttled == 1 ? "" : "s");
		return;
	case MS_RATE_LINE:
		snprintf(buf, len, "recording: %" PRIu64 " records, %" PRIu64 " lost by the kernel, "
			 "%" PRIu64 " dropped by the collector, throttled %" PRIu64 " time%s",
			 c->records, c->kernel_lost, c->dropped, c->throttled,
			 c->throttled == 1 ? "" : "s");
		return;
	case MS_RATE_QUIET:
		break;
	}
	if (len)
		buf[0] = '\0';
}
