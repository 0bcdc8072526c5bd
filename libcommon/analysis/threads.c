/*
 * threads: the selected weight per thread, and the timeline's density
 * lanes: the same weight per thread per time bucket.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

struct thread_row {
	uint32_t thread;
	uint64_t weight;
	uint64_t samples;	/* off-cpu: complete intervals */
};

static int cmp_row(const void *pa, const void *pb, void *data)
{
	const struct thread_row *a = pa, *b = pb;
	const struct ms_capture *cap = data;
	const struct ms_cap_thread *x = &cap->threads[a->thread], *y = &cap->threads[b->thread];

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

int ms_threads_write(const struct ms_view_out *o, const struct ms_capture *cap,
		     const struct ms_query *q)
{
	struct ms_select s;
	struct thread_row *rows;
	uint32_t i, listed = 0;
	char a[32];

	if (ms_select_build(&s, cap, q))
		return -1;
	rows = calloc(cap->n_threads + 1, sizeof(*rows));
	if (!rows) {
		ms_select_release(&s);
		return ms_error("out of memory counting %" PRIu32 " threads", cap->n_threads);
	}
	for (i = 0; i < cap->n_threads; i++)
		rows[i].thread = i;
	for (i = 0; i < cap->n_samples && s.unit != MS_UNIT_OFF_CPU; i++) {
		uint64_t w;
		uint32_t c, t = cap->samples[i].thread;

		if (t >= cap->n_threads || !ms_select_sample(&s, i, &w, &c))
			continue;
		rows[t].weight = ms_weight_add(rows[t].weight, w);
		rows[t].samples += cap->samples[i].count;
	}
	/* off-cpu: samples counts the thread's complete intervals */
	for (i = 0; i < cap->n_intervals && s.unit == MS_UNIT_OFF_CPU; i++) {
		uint64_t w;
		uint32_t c, t = cap->intervals[i].thread;

		if (t >= cap->n_threads || !ms_select_interval(&s, i, &w, &c))
			continue;
		rows[t].weight = ms_weight_add(rows[t].weight, w);
		rows[t].samples++;
	}
	if (cap->n_threads)
		qsort_r(rows, cap->n_threads, sizeof(*rows), cmp_row, (void *)cap);
	for (i = 0; i < cap->n_threads; i++)
		if (rows[i].weight && ms_select_percent(&s, rows[i].weight) >= q->hide_below)
			listed++;

	if (o->json) {
		struct ms_json j;

		ms_json_init(&j, o->f);
		ms_json_object_begin(&j);
		ms_view_json_head(&j, &s);
		ms_json_key(&j, "threads");
		ms_json_array_begin(&j);
		for (i = 0; i < cap->n_threads; i++) {
			const struct ms_cap_thread *t = &cap->threads[rows[i].thread];

			ms_json_object_begin(&j);
			ms_view_json_thread(&j, cap, t);
			ms_json_key(&j, s.unit == MS_UNIT_OFF_CPU ? "intervals" : "samples");
			ms_json_uint(&j, rows[i].samples);
			ms_json_key(&j, "total");
			ms_json_uint(&j, rows[i].weight);
			ms_json_key(&j, "percent");
			ms_json_double(&j, ms_select_percent(&s, rows[i].weight), 2);
			ms_json_object_end(&j);
		}
		ms_json_array_end(&j);
		ms_json_object_end(&j);
		fputc('\n', o->f);
	} else {
		ms_view_value(a, sizeof(a), &s, s.selected);
		fprintf(o->f, "%s%s in %" PRIu32 " thread%s", a,
			ms_unit_words(s.unit), cap->n_threads,
			cap->n_threads == 1 ? "" : "s");
		if (listed < cap->n_threads)
			fprintf(o->f, " (%" PRIu32 " not listed: no selected %s%s)",
				cap->n_threads - listed, s.unit == MS_UNIT_OFF_CPU ? "intervals" : "samples",
				q->hide_below > 0 ? " or under --hide-below" : "");
		fputc('\n', o->f);
		ms_view_selection_line(o->f, &s);
		fprintf(o->f, "%6s  %12s  %8s  %8s  name\n", "share", s.unit == MS_UNIT_SAMPLES ? "samples" : s.unit == MS_UNIT_CPU_TIME ? "cpu time" : "off cpu",
			"pid", "tid");
		for (i = 0; i < listed; i++) {
			const struct ms_cap_thread *t = &cap->threads[rows[i].thread];

			ms_view_value(a, sizeof(a), &s, rows[i].weight);
			fprintf(o->f, "%5.1f%%  %12s  %8" PRIu32 "  %8" PRIu32 "  ",
				ms_select_percent(&s, rows[i].weight), a, t->pid, t->tid);
			ms_text_put(o->f, *cap->strings[t->name] ? cap->strings[t->name] : "(no name)");
			fputc('\n', o->f);
		}
	}
	free(rows);
	ms_select_release(&s);
	return 0;
}
