/* Label spans by thread and time (capture/labels.h). */
#include "config.h"

#include "capture/labels.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int ms_labels_init(struct ms_labels *x, const struct ms_capture *cap)
{
	uint32_t i;

	x->cap = cap;
	x->thread_start = NULL;
	if (!cap->n_label_spans)
		return 0;
	x->thread_start = calloc((size_t)cap->n_threads + 2, sizeof(*x->thread_start));
	if (!x->thread_start)
		return ms_error("out of memory indexing %" PRIu32 " label spans", cap->n_label_spans);
	/* counts at t + 1, then prefix sums: the rows are sorted by thread */
	for (i = 0; i < cap->n_label_spans; i++)
		x->thread_start[cap->label_spans[i].thread + 1]++;
	for (i = 0; i < cap->n_threads; i++)
		x->thread_start[i + 1] += x->thread_start[i];
	return 0;
}

void ms_labels_release(struct ms_labels *x)
{
	free(x->thread_start);
	x->thread_start = NULL;
}

uint32_t ms_labels_at(const struct ms_labels *x, uint32_t thread, uint32_t key, uint64_t time)
{
	const struct ms_cap_label_span *sp = x->cap->label_spans;
	uint32_t lo, hi;

	if (!x->thread_start || thread >= x->cap->n_threads)
		return MS_NONE;
	lo = x->thread_start[thread];
	hi = x->thread_start[thread + 1];
	/* the first row after (key, time): its predecessor is the candidate */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sp[mid].key < key || (sp[mid].key == key && sp[mid].start <= time))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->thread_start[thread])
		return MS_NONE;
	lo--;
	return sp[lo].key == key && sp[lo].start <= time && time <= sp[lo].end ? lo : MS_NONE;
}

uint32_t ms_capture_find_string(const struct ms_capture *cap, const char *s, size_t len)
{
	for (uint32_t i = 0; i < cap->n_strings; i++)
		if (strlen(cap->strings[i]) == len && !memcmp(cap->strings[i], s, len))
			return i;
	return MS_NONE;
}
