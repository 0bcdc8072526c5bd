/*
 * wall: where each thread's wall-clock time went, joining the two
 * measures the capture has: CPU samples (on CPU, the CPU time their
 * periods stand for) and complete off-CPU intervals (off CPU, per
 * cause). What neither covers is stated as unaccounted, never spread
 * over the others; incomplete intervals are counted apart.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/intervals.h"
#include "analysis/present.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

/* Widen thread t's span to hold [from, to], clipped to the range; *seen once it has one. */
static void widen(struct ms_wall_thread *t, bool *seen, const struct ms_wall *w, uint64_t from,
		  uint64_t to)
{
	from = from < w->lo ? w->lo : from;
	to = to > w->hi ? w->hi : to;
	if (to < from)
		return;
	if (!*seen) {
		t->first = from;
		t->last = to;
		*seen = true;
		return;
	}
	if (from < t->first)
		t->first = from;
	if (to > t->last)
		t->last = to;
}

/* Whether the periods are CPU time: a clock event whose samples carry periods. */
static bool on_cpu_known(const struct ms_capture *cap)
{
	uint32_t i;

	if (!ms_capture_time_event(cap))
		return false;
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].period)
			return true;
	return !cap->n_samples;
}

/* Samples: on-CPU time; each stands for the CPU time before it, so its span starts there. */
static void add_samples(struct ms_wall *w, const struct ms_capture *cap, const struct ms_select *s,
			bool *seen, uint64_t rec_start)
{
	uint32_t i;

	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *sm = &cap->samples[i];
		struct ms_wall_thread *t;
		uint64_t weight, from;
		uint32_t c;

		if (sm->thread >= cap->n_threads || !ms_select_sample(s, i, &weight, &c))
			continue;
		t = &w->threads[sm->thread];
		weight = ms_capture_sample_weight(cap, sm);
		from = sm->time > weight ? sm->time - weight : 0;
		if (from < rec_start)
			from = rec_start;
		widen(t, &seen[sm->thread], w, from, sm->time);
		t->on_cpu = ms_weight_add(t->on_cpu, weight);
		t->samples += sm->count;
	}
}

static void add_intervals(struct ms_wall *w, const struct ms_capture *cap, const struct ms_select *s,
			  bool *seen)
{
	uint32_t i, c;

	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		struct ms_wall_thread *t;
		uint64_t from, to, ns;

		if (iv->thread >= cap->n_threads || !ms_select_interval_passes(s, i, &c))
			continue;
		t = &w->threads[iv->thread];
		ms_interval_known(cap, iv, &from, &to);
		if (iv->missing == MS_INTERVAL_COMPLETE) {
			if (!(ns = ms_interval_clipped(iv, w->lo, w->hi)))
				continue;
			widen(t, &seen[iv->thread], w, from, to);
			t->off_cpu = ms_weight_add(t->off_cpu, ns);
			t->cause_ns[ms_interval_cause(cap, iv)] =
				ms_weight_add(t->cause_ns[ms_interval_cause(cap, iv)], ns);
			t->intervals++;
			continue;
		}
		/* incomplete: its known part (or its one known end) inside the range */
		if (from == to ? from < w->lo || from >= w->hi : to <= w->lo || from >= w->hi)
			continue;
		widen(t, &seen[iv->thread], w, from, to);
		if (to > from) {
			uint64_t a = from > w->lo ? from : w->lo, b = to < w->hi ? to : w->hi;

			t->incomplete_known = ms_weight_add(t->incomplete_known, b - a);
		}
		t->incomplete++;
	}
}

int ms_wall_compute(struct ms_wall *w, const struct ms_capture *cap, const struct ms_query *q)
{
	struct ms_query tq;
	struct ms_select s;
	uint64_t rec_start, rec_end;
	bool *seen, on_known;
	uint32_t i, n = 0;

	memset(w, 0, sizeof(*w));
	/* threads and time only: the wall of a thread is all of its time */
	ms_query_init(&tq, MS_VIEW_WALL);
	memcpy(tq.tids, q->tids, sizeof(tq.tids));
	tq.n_tids = q->n_tids;
	memcpy(tq.thread_names, q->thread_names, sizeof(tq.thread_names));
	tq.n_thread_names = q->n_thread_names;
	tq.has_time_start = q->has_time_start;
	tq.has_time_end = q->has_time_end;
	tq.time_start = q->time_start;
	tq.time_end = q->time_end;
	if (ms_select_build(&s, cap, &tq))
		return -1;
	w->lo = s.time_lo;
	w->hi = s.time_hi;
	ms_capture_span(cap, &rec_start, &rec_end);
	w->threads = calloc(cap->n_threads + 1, sizeof(*w->threads));
	seen = calloc(cap->n_threads + 1, sizeof(*seen));
	if (!w->threads || !seen) {
		free(seen);
		ms_select_release(&s);
		ms_wall_release(w);
		return ms_error("out of memory joining the time of %" PRIu32 " threads", cap->n_threads);
	}
	for (i = 0; i < cap->n_threads; i++)
		w->threads[i].thread = i;
	add_samples(w, cap, &s, seen, rec_start);
	add_intervals(w, cap, &s, seen);
	ms_select_release(&s);
	/* keep the threads seen, in capture order */
	on_known = on_cpu_known(cap);
	for (i = 0; i < cap->n_threads; i++) {
		struct ms_wall_thread *t = &w->threads[i];
		uint64_t span = t->last - t->first;
		uint64_t on = on_known ? t->on_cpu : 0, used = ms_weight_add(on, t->off_cpu);

		if (!seen[i])
			continue;
		t->on_known = on_known;
		t->unaccounted = span > used ? span - used : 0;
		t->excess = used > span ? used - span : 0;
		w->threads[n++] = *t;
	}
	w->n_threads = n;
	free(seen);
	return 0;
}

void ms_wall_release(struct ms_wall *w)
{
	free(w->threads);
	memset(w, 0, sizeof(*w));
}

static void put_part(FILE *out, const char *label, uint64_t ns, uint64_t span)
{
	char a[32];

	ms_format_ns(a, sizeof(a), ns);
	fprintf(out, "  %-13s %12s  %5.1f%%", label, a, ms_percent(ns, span));
}

static void write_text(const struct ms_view_out *o, const struct ms_capture *cap,
		       const struct ms_query *q, const struct ms_wall *w)
{
	uint64_t origin = ms_query_origin(cap);
	FILE *out = o->f;
	char a[32], b[32], d[32];
	uint32_t i, c;

	fputs("wall-clock time per thread, in ns of wall-clock time: on CPU from the CPU samples' "
	      "periods, off CPU from complete off-CPU intervals\n", out);
	if (ms_query_filters(q)) {
		fputs("selected", out);
		ms_view_put_filters(out, q);
		fputc('\n', out);
	}
	if (!w->n_threads)
		fputs("(no thread has a sample or an interval here)\n", out);
	for (i = 0; i < w->n_threads; i++) {
		const struct ms_wall_thread *t = &w->threads[i];
		const struct ms_cap_thread *th = &cap->threads[t->thread];
		uint64_t span = t->last - t->first;

		ms_format_ns(d, sizeof(d), span);
		ms_format_ns(a, sizeof(a), t->first - origin);
		ms_format_ns(b, sizeof(b), t->last - origin);
		fprintf(out, "\n%" PRIu32 " ", th->tid);
		ms_text_put(out, *cap->strings[th->name] ? cap->strings[th->name] : "(no name)");
		fprintf(out, " (pid %" PRIu32 "): %s, from %s to %s\n", th->pid, d, a, b);
		if (t->on_known) {
			put_part(out, "on CPU", t->on_cpu, span);
			fprintf(out, "  from %" PRIu64 " sample%s\n", t->samples, t->samples == 1 ? "" : "s");
		} else {
			fprintf(out, "  %-13s %12s  %6s  %" PRIu64 " samples, whose periods are not CPU "
				"time\n", "on CPU", "not known", "", t->samples);
		}
		put_part(out, "off CPU", t->off_cpu, span);
		fprintf(out, "  in %" PRIu64 " complete interval%s\n", t->intervals,
			t->intervals == 1 ? "" : "s");
		for (c = 0; c < MS_CAUSE_COUNT; c++) {
			char label[32];

			if (!t->cause_ns[c])
				continue;
			snprintf(label, sizeof(label), "  %s", ms_off_cpu_cause_name(c));
			put_part(out, label, t->cause_ns[c], span);
			fputc('\n', out);
		}
		put_part(out, "unaccounted", t->unaccounted, span);
		fputs(t->on_known ? "  neither sampled nor in a complete interval\n"
				  : "  not in a complete interval (on-CPU time included)\n", out);
		if (t->excess) {
			ms_format_ns(a, sizeof(a), t->excess);
			fprintf(out, "  %-13s %12s  on and off CPU add up to more than the span: the "
				"samples' periods are an estimate\n", "over", a);
		}
		if (t->incomplete) {
			ms_format_ns(a, sizeof(a), t->incomplete_known);
			fprintf(out, "  %-13s %12" PRIu64 "  interval%s with an end missing, not counted "
				"above", "incomplete", t->incomplete, t->incomplete == 1 ? "" : "s");
			if (t->incomplete_known)
				fprintf(out, " (at least %s of it known)", a);
			fputc('\n', out);
		}
	}
	if (w->n_threads)
		fputs("\nunaccounted: time in the span that no sample stands for and no complete "
		      "interval holds: incomplete intervals, on-CPU time the sampling missed, and "
		      "time records were lost\n", out);
}

static void write_json(const struct ms_view_out *o, const struct ms_capture *cap,
		       const struct ms_wall *w)
{
	uint64_t origin = ms_query_origin(cap);
	struct ms_json j;
	uint32_t i, c;

	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	ms_json_key(&j, "source");
	ms_json_string(&j, "cpu-sampling+intervals");
	ms_json_key(&j, "unit");
	ms_json_string(&j, "ns");
	ms_json_key(&j, "threads");
	ms_json_array_begin(&j);
	for (i = 0; i < w->n_threads; i++) {
		const struct ms_wall_thread *t = &w->threads[i];
		const struct ms_cap_thread *th = &cap->threads[t->thread];

		ms_json_object_begin(&j);
		ms_view_json_thread(&j, cap, th);
		ms_json_key(&j, "start");
		ms_json_uint(&j, t->first - origin);
		ms_json_key(&j, "end");
		ms_json_uint(&j, t->last - origin);
		ms_json_key(&j, "wall");
		ms_json_uint(&j, t->last - t->first);
		ms_json_key(&j, "on_cpu");
		if (t->on_known)
			ms_json_uint(&j, t->on_cpu);
		else
			ms_json_null(&j);
		ms_json_key(&j, "samples");
		ms_json_uint(&j, t->samples);
		ms_json_key(&j, "off_cpu");
		ms_json_uint(&j, t->off_cpu);
		ms_json_key(&j, "intervals");
		ms_json_uint(&j, t->intervals);
		ms_json_key(&j, "causes");
		ms_json_object_begin(&j);
		for (c = 0; c < MS_CAUSE_COUNT; c++) {
			ms_json_key(&j, ms_off_cpu_cause_name(c));
			ms_json_uint(&j, t->cause_ns[c]);
		}
		ms_json_object_end(&j);
		ms_json_key(&j, "unaccounted");
		ms_json_uint(&j, t->unaccounted);
		ms_json_key(&j, "excess");
		ms_json_uint(&j, t->excess);
		ms_json_key(&j, "incomplete");
		ms_json_uint(&j, t->incomplete);
		ms_json_key(&j, "incomplete_at_least");
		ms_json_uint(&j, t->incomplete_known);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', o->f);
}

int ms_wall_write(const struct ms_view_out *o, const struct ms_capture *cap,
		  const struct ms_query *q)
{
	struct ms_wall w;

	if (!(cap->flags & MS_CAPTURE_OFF_CPU))
		return ms_error("this capture has no off-CPU intervals, so no wall-clock time to "
				"join: record it with microscope record --off-cpu");
	if (ms_wall_compute(&w, cap, q))
		return -1;
	if (o->json)
		write_json(o, cap, &w);
	else
		write_text(o, cap, q, &w);
	ms_wall_release(&w);
	return 0;
}
