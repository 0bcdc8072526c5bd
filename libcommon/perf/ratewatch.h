/*
 * Whether the requested sampling rate is being kept, said while recording
 * (issue 16): a pure function of what ms-collect has counted so far and
 * the time, so that the same counts give the same words (unit-tested).
 *
 *  - before recording: a rate within a factor 2 of the kernel's ceiling
 *    (kernel.perf_event_max_sample_rate, per CPU, shared by every thread
 *    sampled there, and lowered by the kernel when sampling takes too
 *    long) is warned about at once;
 *  - the kernel throttling sampling within the first second is warned
 *    about once, at once: the rate cannot be kept;
 *  - on a terminal, one status line of losses and throttling, rewritten
 *    at most once a second, only once there is something to say.
 */
#ifndef MS_PERF_RATEWATCH_H
#define MS_PERF_RATEWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The counts so far. */
struct ms_rate_counts {
	uint64_t records;		/* copied to the output */
	uint64_t kernel_lost;		/* records the kernel lost (ring full) */
	uint64_t dropped;		/* records the collector dropped (output full) */
	uint64_t throttled;		/* PERF_RECORD_THROTTLE seen */
};

struct ms_rate_watch {
	uint64_t start_ns;
	uint64_t last_line_ns;		/* when the status line was last written, 0: never */
	bool throttle_said;
	bool line_shown;		/* a status line is on the terminal: end it with \n */
};

enum ms_rate_say {
	MS_RATE_QUIET,
	MS_RATE_THROTTLED,		/* warn once: throttled in the first second */
	MS_RATE_LINE,			/* rewrite the status line */
};

/*
 * The warning for freq (samples per second per thread; 0 for a period)
 * against the kernel's ceiling max_rate (<= 0: unknown) into buf; false
 * when there is nothing to say.
 */
bool ms_rate_precheck(uint64_t freq, long max_rate, char *buf, size_t len);

void ms_rate_watch_start(struct ms_rate_watch *w, uint64_t now_ns);
/*
 * What to say now, given the counts, and whether stderr is a terminal
 * (the status line is only for one). Records what it decided.
 */
enum ms_rate_say ms_rate_watch_step(struct ms_rate_watch *w, const struct ms_rate_counts *c,
				    uint64_t now_ns, bool tty);
/* The words for a decision (no newline for the status line). */
void ms_rate_watch_words(enum ms_rate_say say, const struct ms_rate_counts *c, char *buf,
			 size_t len);

#endif
