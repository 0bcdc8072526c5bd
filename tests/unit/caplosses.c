/*
 * caplosses: print what a capture says of its lost records, as JSON on
 * stdout, for the bats tests (ms-analyze shows the totals only):
 *
 *   caplosses FILE
 *   {"minor":4,"lost_kernel":3,"lost_collector":2,
 *    "losses":[{"time":6000000000,"source":0,"count":3},...]}
 *
 * losses are the capture's loss rows (format 1.4, capture.h: struct
 * ms_cap_loss) in their order; [] for a capture without rows. Exit 1
 * after the reader's message when the file is refused.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "capture/capture.h"
#include "util/error.h"

int main(int argc, char **argv)
{
	struct ms_capture *cap;

	ms_set_progname("caplosses");
	if (argc != 2) {
		fprintf(stderr, "usage: caplosses FILE\n");
		return 2;
	}
	cap = ms_capture_load(argv[1]);
	if (!cap)
		return 1;
	printf("{\"minor\":%" PRIu32 ",\"lost_kernel\":%" PRIu64 ",\"lost_collector\":%" PRIu64
	       ",\"losses\":[", cap->minor, cap->lost_kernel, cap->lost_collector);
	for (uint32_t i = 0; i < cap->n_losses; i++)
		printf("%s{\"time\":%" PRIu64 ",\"source\":%" PRIu32 ",\"count\":%" PRIu64 "}",
		       i ? "," : "", cap->losses[i].time, cap->losses[i].source,
		       cap->losses[i].count);
	printf("]}\n");
	ms_capture_free(cap);
	return fflush(stdout) ? 1 : 0;
}
