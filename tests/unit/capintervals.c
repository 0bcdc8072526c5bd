/*
 * capintervals: print off-CPU intervals one a line, for the bats tests
 * (the analysis views come later and elsewhere):
 *
 *   capintervals FILE        the intervals of capture FILE, in its order
 *   capintervals --stream    the interval records of the stream on stdin
 *                            (what ms-capture --dump writes), in its order
 *
 * Each line: tid start end missing cause sources state preempt, with
 * missing and cause by name ("complete", "sleeping"), e.g.
 *   1001 5200000000 5500000000 complete sleeping 3 1 0
 * A capture first gets a line "flag 0" or "flag 1" (MS_CAPTURE_OFF_CPU).
 * Exit 1 after a message when the file or stream is refused.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

static void line(uint32_t tid, uint64_t start, uint64_t end, uint32_t missing, uint32_t cause,
		 uint32_t sources, uint64_t state, uint32_t preempt)
{
	printf("%" PRIu32 " %" PRIu64 " %" PRIu64 " %s %s %" PRIu32 " %" PRIu64 " %" PRIu32 "\n",
	       tid, start, end, ms_interval_missing_name(missing), ms_off_cpu_cause_name(cause),
	       sources, state, preempt);
}

static int from_stream(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	struct ms_interval iv;
	struct ms_record rec;
	int res;

	if (!r)
		return 1;
	while ((res = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind != MS_REC_INTERVAL)
			continue;
		if (ms_interval_unpack(&rec, &iv) < 0) {
			ms_reader_free(r);
			return 1;
		}
		line(iv.tid, iv.start, iv.end, iv.missing, iv.cause, iv.sources, iv.state, iv.preempt);
	}
	ms_reader_free(r);
	return res == MS_READ_END ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ms_capture *cap;

	ms_set_progname("capintervals");
	if (argc != 2) {
		fprintf(stderr, "usage: capintervals FILE | --stream\n");
		return 2;
	}
	if (!strcmp(argv[1], "--stream"))
		return from_stream() || fflush(stdout) ? 1 : 0;
	cap = ms_capture_load(argv[1]);
	if (!cap)
		return 1;
	printf("flag %d\n", (cap->flags & MS_CAPTURE_OFF_CPU) ? 1 : 0);
	for (uint32_t i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *x = &cap->intervals[i];
		const struct ms_cap_evidence *e = &cap->evidence[x->evidence];

		line(cap->threads[x->thread].tid, x->start, x->end, x->missing, e->cause, e->sources,
		     e->state, e->preempt);
	}
	ms_capture_free(cap);
	return fflush(stdout) ? 1 : 0;
}
