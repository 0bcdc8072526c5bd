/*
 * A look (capture/look.h) that also sees the wait rows of thread
 * snapshots: ms_look_build() renumbers the stacks of samples and
 * intervals, not of waits, so a wait's stack is carried through the look
 * as a sample's would be and the look's capture gets waits of its own.
 * (formats/common.c does the same for the exports: the two go once
 * capture/look.c renumbers waits itself.)
 */
#include "analysis/analysis-internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream/records.h"
#include "util/error.h"

int ms_seen_build(struct ms_seen *v, const struct ms_capture *cap, enum ms_look look)
{
	struct ms_look_view carried;
	struct ms_capture waits_as_samples;
	struct ms_cap_sample *rows;
	uint32_t i;

	memset(v, 0, sizeof(*v));
	if (ms_look_build(&v->look, cap, look) < 0)
		return -1;
	v->seen = v->look.seen;
	if (look == MS_LOOK_MIXED || !cap->n_waits)
		return 0;
	/* each wait a sample on its stack: the look keeps the samples' order */
	rows = calloc(cap->n_waits, sizeof(*rows));
	v->waits = malloc((size_t)cap->n_waits * sizeof(*v->waits));
	if (!rows || !v->waits)
		goto oom;
	for (i = 0; i < cap->n_waits; i++) {
		rows[i].time = cap->waits[i].time;
		rows[i].stack = cap->waits[i].stack;
		rows[i].count = 1;
	}
	waits_as_samples = *cap;
	waits_as_samples.storage = NULL;
	waits_as_samples.samples = rows;
	waits_as_samples.n_samples = cap->n_waits;
	waits_as_samples.n_intervals = 0;
	waits_as_samples.intervals = NULL;
	if (ms_look_build(&carried, &waits_as_samples, look) < 0) {
		free(rows);
		free(v->waits);
		ms_look_release(&v->look);
		memset(v, 0, sizeof(*v));
		return -1;
	}
	for (i = 0; i < cap->n_waits; i++) {
		v->waits[i] = cap->waits[i];
		v->waits[i].stack = carried.seen->samples[i].stack;
	}
	/* stack ids of one look: the walk over one stack table gives the same tree */
	if (carried.seen->n_stacks != v->seen->n_stacks) {
		ms_look_release(&carried);
		free(rows);
		ms_seen_release(v);
		return ms_error("internal error: the %s look gave the waits another stack tree",
				ms_look_name(look));
	}
	ms_look_release(&carried);
	free(rows);
	v->look.own.waits = v->waits;
	return 0;
oom:
	free(rows);
	ms_seen_release(v);
	return ms_error("out of memory seeing %" PRIu32 " snapshots in the %s look", cap->n_waits,
			ms_look_name(look));
}

void ms_seen_release(struct ms_seen *v)
{
	ms_look_release(&v->look);
	free(v->waits);
	memset(v, 0, sizeof(*v));
}
