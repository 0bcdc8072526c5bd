/*
 * timeline: density lanes. Each selected thread is a lane of buckets of
 * equal time from the window's start; a bucket holds the weight of the
 * selected samples taken in it. Text draws each bucket as one of nine
 * levels of one scale for all lanes, so lanes compare.
 *
 * A capture with off-CPU intervals adds an off-CPU lane per thread: the
 * wall-clock time of each bucket the thread spent in complete intervals
 * (drawn as a share of the bucket, an absolute scale), the cause that
 * holds most of it, and where an incomplete interval's known part lies,
 * which adds no time.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/intervals.h"
#include "analysis/present.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

/* Columns of a text lane's label and total around the buckets. */
#define LABEL_COLS 24
#define TOTAL_COLS 10

static const char *const levels[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };

struct window {
	uint64_t start, end, bucket_ns;
	uint32_t buckets;
};

/*
 * Records lost, from the capture's loss rows (minor 4): per bucket of the
 * window, and those of no known time (a capture before 1.4 has only
 * those). Losses are of no thread: every lane may miss samples there.
 */
struct losses {
	uint64_t *bucket;	/* per bucket */
	uint64_t in_window, untimed, all;
};

static void count_losses(struct losses *l, const struct ms_capture *cap, const struct window *w)
{
	uint64_t timed = 0;
	uint32_t i;

	l->all = ms_weight_add(cap->lost_kernel, cap->lost_collector);
	for (i = 0; i < cap->n_losses; i++) {
		const struct ms_cap_loss *r = &cap->losses[i];
		uint64_t b;

		timed = ms_weight_add(timed, r->count);
		/* the window's end is the recording's: a loss there is in the last bucket */
		if (r->time < w->start || r->time > w->end)
			continue;
		b = (r->time - w->start) / w->bucket_ns;
		if (b >= w->buckets)
			b = w->buckets - 1;
		l->bucket[b] = ms_weight_add(l->bucket[b], r->count);
		l->in_window = ms_weight_add(l->in_window, r->count);
	}
	l->untimed = l->all > timed ? l->all - timed : 0;
}

/* The window: --time's range, else the recording's, else its samples'. */
static void window_of(struct window *w, const struct ms_capture *cap, const struct ms_query *q,
		      uint32_t buckets)
{
	uint64_t origin = ms_query_origin(cap), last = origin, span_start, span_end;

	if (cap->n_samples)
		last = cap->samples[cap->n_samples - 1].time + 1;
	for (uint32_t i = 0; q->unit == MS_UNIT_SNAPSHOTS && i < cap->n_waits; i++)
		if (cap->waits[i].time + 1 > last)
			last = cap->waits[i].time + 1;
	for (uint32_t i = 0; i < cap->n_intervals; i++) {
		uint64_t from, to;

		/* an end is exclusive; a lone known end is a point, as a sample's time */
		ms_interval_known(cap, &cap->intervals[i], &from, &to);
		if (to + (from == to) > last)
			last = to + (from == to);
	}
	ms_capture_span(cap, &span_start, &span_end);
	if (span_end > last)
		last = span_end;
	w->start = q->has_time_start ? origin + q->time_start : origin;
	w->end = q->has_time_end ? origin + q->time_end : last;
	if (w->end <= w->start)
		w->end = w->start + 1;
	w->buckets = buckets;
	w->bucket_ns = (w->end - w->start + buckets - 1) / buckets;
	if (!w->bucket_ns)
		w->bucket_ns = 1;
}

/*
 * The off-CPU lanes: per thread and bucket, ns in complete intervals
 * (ns), the same per cause (cause_ns, MS_CAUSE_COUNT per bucket), and
 * whether an incomplete interval's known part lies there.
 */
struct off_lanes {
	uint64_t *ns, *cause_ns, *totals, *incomplete;	/* incomplete: per thread, how many */
	uint8_t *marks;
};

/* The buckets [a, b) covers in the window, with the time it spends in each. */
static void spread(const struct window *w, uint64_t a, uint64_t b, uint64_t *per_bucket,
		   uint64_t *cause_ns, uint32_t cause, uint8_t *marks)
{
	uint64_t k, k1;

	a = a < w->start ? w->start : a;
	b = b > w->end ? w->end : b;
	if (b < a || (b == a && (a < w->start || a >= w->end)))
		return;
	k = (a - w->start) / w->bucket_ns;
	k1 = b > a ? (b - 1 - w->start) / w->bucket_ns : k;
	for (; k <= k1 && k < w->buckets; k++) {
		uint64_t lo = w->start + k * w->bucket_ns, hi = lo + w->bucket_ns;
		uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;

		if (marks) {
			marks[k] = 1;
			continue;
		}
		per_bucket[k] = ms_weight_add(per_bucket[k], y - x);
		cause_ns[k * MS_CAUSE_COUNT + cause] =
			ms_weight_add(cause_ns[k * MS_CAUSE_COUNT + cause], y - x);
	}
}

static void count_off_cpu(struct off_lanes *l, const struct ms_select *s, const struct window *w)
{
	const struct ms_capture *cap = s->cap;
	uint32_t i, c;

	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		size_t t = iv->thread;
		uint64_t from, to;

		if (t >= cap->n_threads || !ms_select_interval_passes(s, i, &c))
			continue;
		ms_interval_known(cap, iv, &from, &to);
		if (iv->missing == MS_INTERVAL_COMPLETE) {
			uint64_t ns = ms_interval_clipped(iv, w->start > s->time_lo ? w->start : s->time_lo,
							  w->end < s->time_hi ? w->end : s->time_hi);

			if (!ns)
				continue;
			l->totals[t] = ms_weight_add(l->totals[t], ns);
			spread(w, from, to, l->ns + t * w->buckets,
			       l->cause_ns + t * w->buckets * MS_CAUSE_COUNT, ms_interval_cause(cap, iv),
			       NULL);
			continue;
		}
		if (from == to ? from < w->start || from >= w->end : to <= w->start || from >= w->end)
			continue;
		l->incomplete[t]++;
		spread(w, from, to, NULL, NULL, 0, l->marks + t * w->buckets);
	}
}

/* The width of bucket b: the last one ends with the window. */
static uint64_t bucket_width(const struct window *w, uint32_t b)
{
	uint64_t lo = w->start + (uint64_t)b * w->bucket_ns;

	return lo + w->bucket_ns <= w->end ? w->bucket_ns : w->end > lo ? w->end - lo : 1;
}

/* The cause that holds most of bucket b's time (ties: the lower cause); MS_NONE when none. */
static uint32_t dominant_cause(const uint64_t *cause_ns)
{
	uint32_t c, best = MS_NONE;

	for (c = 0; c < MS_CAUSE_COUNT; c++)
		if (cause_ns[c] && (best == MS_NONE || cause_ns[c] > cause_ns[best]))
			best = c;
	return best;
}

static const char cause_marks[MS_CAUSE_COUNT] = {
	[MS_CAUSE_UNKNOWN] = 'U',
	[MS_CAUSE_PREEMPTED] = 'P',
	[MS_CAUSE_SLEEPING] = 'S',
	[MS_CAUSE_BLOCKED] = 'B',
};

static bool off_lane_shown(const struct off_lanes *l, uint32_t t)
{
	return l->totals[t] || l->incomplete[t];
}

static void write_off_text(const struct ms_view_out *o, const struct ms_capture *cap,
			   const struct window *w, const struct off_lanes *l)
{
	FILE *out = o->f;
	uint32_t t, b, shown = 0;
	char a[32], label[64];

	fputs("\noff CPU: the share of each bucket in complete off-CPU intervals (wall-clock ns, "
	      "not samples); below it the cause of most of it: S sleeping, P preempted, B blocked, "
	      "U unknown; ~ where only an incomplete interval lies (no time counted)\n", out);
	for (t = 0; t < cap->n_threads; t++) {
		const struct ms_cap_thread *th = &cap->threads[t];
		const uint64_t *ns = l->ns + (size_t)t * w->buckets;
		const uint8_t *marks = l->marks + (size_t)t * w->buckets;

		if (!off_lane_shown(l, t))
			continue;
		shown++;
		snprintf(label, sizeof(label), "%" PRIu32 " ", th->tid);
		fputs(label, out);
		ms_text_pad(out, cap->strings[th->name], LABEL_COLS - strlen(label), 0);
		fputc('|', out);
		for (b = 0; b < w->buckets; b++) {
			uint64_t width = bucket_width(w, b);
			/* ceil(8 share): any time shows, a bucket wholly off CPU is full */
			unsigned lvl = !ns[b] ? 0 : 1 + (unsigned)(((double)ns[b] * 8 - 1) / (double)width);

			if (!ns[b] && marks[b]) {
				ms_style_put(out, o->color, MS_STYLE_WARN);
				fputc('~', out);
				ms_style_put(out, o->color, MS_STYLE_RESET);
				continue;
			}
			fputs(levels[lvl > 8 ? 8 : lvl], out);
		}
		ms_format_ns(a, sizeof(a), l->totals[t]);
		fprintf(out, "|%*s\n", TOTAL_COLS, a);
		fprintf(out, "%-*s|", LABEL_COLS, "  cause");
		for (b = 0; b < w->buckets; b++) {
			uint32_t c = dominant_cause(l->cause_ns + ((size_t)t * w->buckets + b) * MS_CAUSE_COUNT);

			fputc(c == MS_NONE ? ' ' : cause_marks[c], out);
		}
		fputc('|', out);
		if (l->incomplete[t])
			fprintf(out, " %" PRIu64 " incomplete", l->incomplete[t]);
		fputc('\n', out);
	}
	if (!shown)
		fputs("(no selected off-CPU interval)\n", out);
}

static void write_off_json(struct ms_json *j, const struct ms_capture *cap, const struct window *w,
			   const struct off_lanes *l)
{
	uint32_t t, b;

	ms_json_object_begin(j);
	ms_json_key(j, "source");
	ms_json_string(j, ms_unit_source(MS_UNIT_OFF_CPU));
	ms_json_key(j, "unit");
	ms_json_string(j, ms_unit_measure(MS_UNIT_OFF_CPU));
	ms_json_key(j, "lanes");
	ms_json_array_begin(j);
	for (t = 0; t < cap->n_threads; t++) {
		const struct ms_cap_thread *th = &cap->threads[t];

		if (!off_lane_shown(l, t))
			continue;
		ms_json_object_begin(j);
		ms_view_json_thread(j, cap, th);
		ms_json_key(j, "total");
		ms_json_uint(j, l->totals[t]);
		ms_json_key(j, "incomplete");
		ms_json_uint(j, l->incomplete[t]);
		ms_json_key(j, "buckets");
		ms_json_array_begin(j);
		for (b = 0; b < w->buckets; b++)
			ms_json_uint(j, l->ns[(size_t)t * w->buckets + b]);
		ms_json_array_end(j);
		ms_json_key(j, "causes");
		ms_json_array_begin(j);
		for (b = 0; b < w->buckets; b++) {
			uint32_t c = dominant_cause(l->cause_ns + ((size_t)t * w->buckets + b) * MS_CAUSE_COUNT);

			if (c == MS_NONE)
				ms_json_null(j);
			else
				ms_json_string(j, ms_off_cpu_cause_name(c));
		}
		ms_json_array_end(j);
		ms_json_key(j, "incomplete_buckets");
		ms_json_array_begin(j);
		for (b = 0; b < w->buckets; b++)
			ms_json_uint(j, l->marks[(size_t)t * w->buckets + b]);
		ms_json_array_end(j);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	ms_json_object_end(j);
}

static uint32_t bucket_count(const struct ms_view_out *o, const struct ms_query *q)
{
	if (q->buckets)
		return q->buckets;
	if (!o->json && o->width > LABEL_COLS + TOTAL_COLS + 10)
		return o->width - LABEL_COLS - TOTAL_COLS - 2;
	return MS_TIMELINE_BUCKETS;
}

static void write_text(const struct ms_view_out *o, const struct ms_select *s,
		       const struct window *w, const uint64_t *lanes, const uint64_t *totals,
		       const struct losses *lost, const struct off_lanes *off)
{
	const struct ms_capture *cap = s->cap;
	uint64_t max = 0, origin = ms_query_origin(cap);
	FILE *out = o->f;
	uint32_t t, b, shown = 0;
	char a[32], z[32], label[64];

	for (t = 0; t < cap->n_threads; t++)
		for (b = 0; b < w->buckets; b++)
			if (lanes[(size_t)t * w->buckets + b] > max)
				max = lanes[(size_t)t * w->buckets + b];
	ms_view_value(a, sizeof(a), s, s->selected);
	ms_format_ns(z, sizeof(z), w->bucket_ns);
	fprintf(out, "%s%s over %" PRIu32 " buckets of %s\n", a,
		ms_unit_words(s->unit), w->buckets, z);
	ms_view_selection_line(out, s);
	if (lost->untimed) {
		ms_style_put(out, o->color, MS_STYLE_WARN);
		fprintf(out, "warning: %" PRIu64 " record%s lost at times the capture does not "
			"keep: no bucket marks %s\n", lost->untimed,
			lost->untimed == 1 ? " was" : "s were", lost->untimed == 1 ? "it" : "them");
		ms_style_put(out, o->color, MS_STYLE_RESET);
	}
	if (lost->all - lost->untimed > lost->in_window)
		fprintf(out, "note: %" PRIu64 " record%s lost outside this window\n",
			lost->all - lost->untimed - lost->in_window,
			lost->all - lost->untimed - lost->in_window == 1 ? " was" : "s were");
	ms_format_ns(a, sizeof(a), w->start - origin);
	ms_format_ns(z, sizeof(z), w->end - origin);
	/* as wide as a lane: both ends when they fit, else the start when it does */
	fprintf(out, "%-*s|", LABEL_COLS, "thread");
	if (w->buckets > strlen(a) + strlen(z))
		fprintf(out, "%s%*s", a, (int)(w->buckets - strlen(a)), z);
	else
		fprintf(out, "%-*s", (int)w->buckets, w->buckets >= strlen(a) ? a : "");
	fprintf(out, "|%*s\n", TOTAL_COLS, "total");
	for (t = 0; t < cap->n_threads; t++) {
		const struct ms_cap_thread *th = &cap->threads[t];

		if (!totals[t] || ms_select_percent(s, totals[t]) < s->q->hide_below)
			continue;
		shown++;
		snprintf(label, sizeof(label), "%" PRIu32 " ", th->tid);
		fputs(label, out);
		ms_text_pad(out, cap->strings[th->name], LABEL_COLS - strlen(label), 0);
		fputc('|', out);
		for (b = 0; b < w->buckets; b++) {
			uint64_t v = lanes[(size_t)t * w->buckets + b];
			/* ceil(8 v / max): any weight shows (level 1 at least), the peak is full */
			unsigned lvl = !v ? 0 : 1 + (unsigned)(((double)v * 8 - 1) / (double)max);

			fputs(levels[lvl > 8 ? 8 : lvl], out);
		}
		ms_view_value(a, sizeof(a), s, totals[t]);
		fprintf(out, "|%*s\n", TOTAL_COLS, a);
	}
	if (!shown)
		fprintf(out, "(no selected %s)\n", s->unit == MS_UNIT_SNAPSHOTS ? "snapshots" : "samples");
	if (lost->in_window) {
		/* where records were lost: any lane may lack samples there */
		fprintf(out, "%-*s|", LABEL_COLS, "lost records");
		ms_style_put(out, o->color, MS_STYLE_WARN);
		for (b = 0; b < w->buckets; b++)
			fputc(lost->bucket[b] ? '!' : ' ', out);
		ms_style_put(out, o->color, MS_STYLE_RESET);
		fprintf(out, "|%*" PRIu64 "\n", TOTAL_COLS, lost->in_window);
	}
	if (off)
		write_off_text(o, cap, w, off);
}

static void write_json(const struct ms_view_out *o, const struct ms_select *s,
		       const struct window *w, const uint64_t *lanes, const uint64_t *totals,
		       const struct losses *lost, const struct off_lanes *off)
{
	const struct ms_capture *cap = s->cap;
	uint64_t origin = ms_query_origin(cap);
	struct ms_json j;
	uint32_t t, b;

	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	ms_view_json_head(&j, s);
	ms_json_key(&j, "start");
	ms_json_uint(&j, w->start - origin);
	ms_json_key(&j, "end");
	ms_json_uint(&j, w->end - origin);
	ms_json_key(&j, "bucket_ns");
	ms_json_uint(&j, w->bucket_ns);
	ms_json_key(&j, "lost");
	ms_json_uint(&j, lost->all);
	ms_json_key(&j, "lost_untimed");
	ms_json_uint(&j, lost->untimed);
	ms_json_key(&j, "lost_buckets");
	ms_json_array_begin(&j);
	for (b = 0; b < w->buckets; b++)
		ms_json_uint(&j, lost->bucket[b]);
	ms_json_array_end(&j);
	ms_json_key(&j, "lanes");
	ms_json_array_begin(&j);
	for (t = 0; t < cap->n_threads; t++) {
		const struct ms_cap_thread *th = &cap->threads[t];

		if (!totals[t] || ms_select_percent(s, totals[t]) < s->q->hide_below)
			continue;
		ms_json_object_begin(&j);
		ms_view_json_thread(&j, cap, th);
		ms_json_key(&j, "total");
		ms_json_uint(&j, totals[t]);
		ms_json_key(&j, "buckets");
		ms_json_array_begin(&j);
		for (b = 0; b < w->buckets; b++)
			ms_json_uint(&j, lanes[(size_t)t * w->buckets + b]);
		ms_json_array_end(&j);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	/* null: the capture did not record off-CPU time (not: none was spent) */
	ms_json_key(&j, "off_cpu");
	if (off)
		write_off_json(&j, cap, w, off);
	else
		ms_json_null(&j);
	ms_json_object_end(&j);
	fputc('\n', o->f);
}

/* Weight v of thread at time (inside the window) into its lane. */
static void lane_add(uint64_t *lanes, uint64_t *totals, const struct ms_capture *cap,
		     const struct window *w, uint32_t thread, uint64_t time, uint64_t v)
{
	uint64_t b = (time - w->start) / w->bucket_ns;

	if (thread >= cap->n_threads)
		return;
	if (b >= w->buckets)
		b = w->buckets - 1;
	lanes[(size_t)thread * w->buckets + b] = ms_weight_add(lanes[(size_t)thread * w->buckets + b], v);
	totals[thread] = ms_weight_add(totals[thread], v);
}

int ms_timeline_write(const struct ms_view_out *o, const struct ms_capture *cap,
		      const struct ms_query *q)
{
	struct ms_select s;
	struct window w;
	struct losses lost = { 0 };
	struct off_lanes off = { 0 };
	/* snapshots are lanes of their own: off-CPU lanes go with the samples' */
	bool has_off = (cap->flags & MS_CAPTURE_OFF_CPU) && q->unit != MS_UNIT_SNAPSHOTS;
	uint64_t *lanes, *totals;
	uint32_t i, buckets = bucket_count(o, q);
	int rc = 0;

	if (buckets > MS_TIMELINE_MAX_BUCKETS)
		return ms_error("at most %d buckets, not %" PRIu32, MS_TIMELINE_MAX_BUCKETS, buckets);
	/* an import of a format without times (folded) gives every sample time 0 */
	if (q->unit != MS_UNIT_SNAPSHOTS && cap->n_samples && !cap->samples[cap->n_samples - 1].time) {
		const char *from = ms_capture_info_text(cap, "import");

		return ms_error("the samples of this capture carry no times%s%s%s: there is no "
				"timeline to draw", from ? " (it was imported from " : "",
				from ? from : "", from ? ")" : "");
	}
	if (ms_select_build(&s, cap, q))
		return -1;
	window_of(&w, cap, q, buckets);
	lanes = calloc((size_t)(cap->n_threads + 1) * buckets, sizeof(*lanes));
	totals = calloc(cap->n_threads + 1, sizeof(*totals));
	lost.bucket = calloc(buckets, sizeof(*lost.bucket));
	if (has_off) {
		size_t n = (size_t)(cap->n_threads + 1) * buckets;

		off.ns = calloc(n, sizeof(*off.ns));
		off.cause_ns = calloc(n * MS_CAUSE_COUNT, sizeof(*off.cause_ns));
		off.marks = calloc(n, sizeof(*off.marks));
		off.totals = calloc(cap->n_threads + 1, sizeof(*off.totals));
		off.incomplete = calloc(cap->n_threads + 1, sizeof(*off.incomplete));
	}
	if (!lanes || !totals || !lost.bucket ||
	    (has_off && (!off.ns || !off.cause_ns || !off.marks || !off.totals || !off.incomplete))) {
		rc = ms_error("out of memory for %" PRIu32 " lanes of %" PRIu32 " buckets",
			      cap->n_threads, buckets);
		goto out;
	}
	for (i = 0; i < cap->n_samples && s.unit != MS_UNIT_SNAPSHOTS; i++) {
		const struct ms_cap_sample *sm = &cap->samples[i];
		uint64_t v;
		uint32_t c;

		if (sm->time < w.start || sm->time >= w.end || !ms_select_sample(&s, i, &v, &c))
			continue;
		lane_add(lanes, totals, cap, &w, sm->thread, sm->time, v);
	}
	for (i = 0; i < cap->n_waits && s.unit == MS_UNIT_SNAPSHOTS; i++) {
		uint64_t v, time = cap->waits[i].time;
		uint32_t c;

		if (time < w.start || time >= w.end || !ms_select_wait(&s, i, &v, &c))
			continue;
		lane_add(lanes, totals, cap, &w, ms_wait_thread(cap, i), time, v);
	}
	count_losses(&lost, cap, &w);
	if (has_off)
		count_off_cpu(&off, &s, &w);
	if (o->json)
		write_json(o, &s, &w, lanes, totals, &lost, has_off ? &off : NULL);
	else
		write_text(o, &s, &w, lanes, totals, &lost, has_off ? &off : NULL);
out:
	free(lanes);
	free(totals);
	free(lost.bucket);
	free(off.ns);
	free(off.cause_ns);
	free(off.marks);
	free(off.totals);
	free(off.incomplete);
	ms_select_release(&s);
	return rc;
}
