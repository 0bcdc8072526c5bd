/*
 * off-cpu: the time threads spent off CPU, from the capture's complete
 * intervals, per cause (what the scheduler said when each left) and per
 * thread; incomplete intervals counted apart per missing end, never
 * closed at a time the capture does not hold; then the functions each
 * cause's time was spent in, by the switch-out stacks (top, unit off-cpu).
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/intervals.h"
#include "analysis/present.h"
#include "analysis/waits.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

static int cmp_thread(const void *pa, const void *pb, void *data)
{
	const struct ms_off_cpu_view_thread *a = pa, *b = pb;
	const struct ms_capture *cap = data;
	const struct ms_cap_thread *x = &cap->threads[a->thread], *y = &cap->threads[b->thread];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->incomplete != b->incomplete)
		return a->incomplete > b->incomplete ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/*
 * An incomplete interval is in --time's range when the part the capture
 * knows (or its one known end) is: the lower bound counts only inside.
 */
static bool incomplete_in_range(const struct ms_select *s, const struct ms_cap_interval *iv,
				uint64_t *known)
{
	uint64_t from, to, a, b;

	ms_interval_known(s->cap, iv, &from, &to);
	a = from > s->time_lo ? from : s->time_lo;
	b = to < s->time_hi ? to : s->time_hi;
	if (from == to) {
		*known = 0;
		return from >= s->time_lo && from < s->time_hi;
	}
	if (b <= a)
		return false;
	*known = b - a;
	return true;
}

int ms_off_cpu_view_compute(struct ms_off_cpu_view *v, const struct ms_capture *cap, const struct ms_query *q)
{
	uint32_t i, *slot = NULL;

	memset(v, 0, sizeof(*v));
	v->query = *q;
	v->query.unit = MS_UNIT_OFF_CPU;
	if (ms_select_build(&v->sel, cap, &v->query))
		return -1;
	v->recorded = cap->flags & MS_CAPTURE_OFF_CPU;
	slot = malloc((cap->n_threads + 1) * sizeof(*slot));
	v->threads = calloc(cap->n_threads + 1, sizeof(*v->threads));
	if (!slot || !v->threads)
		goto oom;
	for (i = 0; i < cap->n_threads; i++)
		slot[i] = MS_NONE;
	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		struct ms_off_cpu_view_thread *t;
		uint64_t w = 0;
		uint32_t c, cause = ms_interval_cause(cap, iv), m = iv->missing;
		bool complete = m == MS_INTERVAL_COMPLETE;

		if (iv->thread >= cap->n_threads)
			continue;
		if (complete ? !ms_select_interval(&v->sel, i, &w, &c)
			     : !ms_select_interval_passes(&v->sel, i, &c) ||
			       !incomplete_in_range(&v->sel, iv, &w))
			continue;
		if (slot[iv->thread] == MS_NONE) {
			slot[iv->thread] = v->n_threads;
			v->threads[v->n_threads++].thread = iv->thread;
		}
		t = &v->threads[slot[iv->thread]];
		if (!complete) {
			if (m >= MS_INTERVAL_MISSING_COUNT)
				m = MS_INTERVAL_COMPLETE;	/* the slot of reasons not known */
			v->incomplete[m]++;
			v->incomplete_known[m] = ms_weight_add(v->incomplete_known[m], w);
			v->n_incomplete++;
			t->incomplete++;
			continue;
		}
		v->total = ms_weight_add(v->total, w);
		v->intervals++;
		v->cause_ns[cause] = ms_weight_add(v->cause_ns[cause], w);
		v->cause_intervals[cause]++;
		t->total = ms_weight_add(t->total, w);
		t->cause_ns[cause] = ms_weight_add(t->cause_ns[cause], w);
		t->intervals++;
	}
	if (v->n_threads)
		qsort_r(v->threads, v->n_threads, sizeof(*v->threads), cmp_thread, (void *)cap);
	free(slot);
	return 0;
oom:
	free(slot);
	ms_off_cpu_view_release(v);
	return ms_error("out of memory counting the off-CPU time of %" PRIu32 " threads",
			cap->n_threads);
}

void ms_off_cpu_view_release(struct ms_off_cpu_view *v)
{
	ms_select_release(&v->sel);
	free(v->threads);
	memset(v, 0, sizeof(*v));
}

uint32_t ms_off_cpu_view_causes(const struct ms_off_cpu_view *v, uint32_t *order)
{
	uint32_t n = 0, i, k;

	/* by time, then by the cause's number: a handful, sorted by insertion */
	for (i = 0; i < MS_CAUSE_COUNT; i++) {
		if (!v->cause_ns[i] && !v->cause_intervals[i])
			continue;
		for (k = n; k > 0 && v->cause_ns[order[k - 1]] < v->cause_ns[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
		n++;
	}
	return n;
}

/* What the scheduler's evidence for each cause was, for people. */
static const char *cause_words(uint32_t cause)
{
	switch (cause) {
	case MS_CAUSE_PREEMPTED: return "runnable, switched out by the scheduler";
	case MS_CAUSE_SLEEPING: return "waiting interruptibly (task state S)";
	case MS_CAUSE_BLOCKED: return "waiting uninterruptibly (task state D)";
	default: return "no evidence, or another task state";
	}
}

/* "12.000 ms" into buf: every time here is nanoseconds. */
static const char *ns_text(char *buf, size_t size, uint64_t ns)
{
	ms_format_ns(buf, size, ns);
	return buf;
}

static void write_incomplete_text(FILE *out, const struct ms_off_cpu_view *v)
{
	char a[32];
	uint32_t m;

	if (!v->n_incomplete) {
		fputs("incomplete:  none (every interval has both ends)\n", out);
		return;
	}
	fprintf(out, "incomplete:  %" PRIu64 " interval%s with an end missing, counted in no "
		"time here:\n", v->n_incomplete, v->n_incomplete == 1 ? "" : "s");
	for (m = 0; m < MS_INTERVAL_MISSING_COUNT; m++) {
		if (!v->incomplete[m])
			continue;
		fprintf(out, "  %8" PRIu64 "  %-12s  %s", v->incomplete[m],
			m == MS_INTERVAL_COMPLETE ? "unknown" : ms_interval_missing_name(m),
			m == MS_INTERVAL_COMPLETE ? "an end is missing" : ms_interval_missing_words(m));
		if (v->incomplete_known[m])
			fprintf(out, " (at least %s inside the recording, not summed)",
				ns_text(a, sizeof(a), v->incomplete_known[m]));
		fputc('\n', out);
	}
}

static void write_text(const struct ms_view_out *o, const struct ms_capture *cap,
		       const struct ms_query *q, const struct ms_off_cpu_view *v)
{
	const struct ms_select *s = &v->sel;
	FILE *out = o->f;
	uint32_t order[MS_CAUSE_COUNT], n, i, k;
	char a[32];

	fprintf(out, "off-CPU time: %s in %" PRIu64 " complete interval%s (wall-clock ns from "
		"each switch-out to the switch-in after it; not CPU samples)\n",
		ns_text(a, sizeof(a), v->total), v->intervals, v->intervals == 1 ? "" : "s");
	ms_view_selection_line(out, s);
	write_incomplete_text(out, v);
	n = ms_off_cpu_view_causes(v, order);
	fputs("\nby cause (the scheduler's evidence as each thread left its CPU)\n", out);
	ms_style_put(out, o->color, MS_STYLE_HEADER);
	fprintf(out, "%6s  %12s  %9s  %-9s  %s", "share", "off cpu", "intervals", "cause", "evidence");
	ms_style_put(out, o->color, MS_STYLE_RESET);
	fputc('\n', out);
	if (!n)
		fputs("(no complete interval selected)\n", out);
	for (i = 0; i < n; i++) {
		uint32_t c = order[i];

		ms_view_put_percent(o, ms_percent(v->cause_ns[c], v->total));
		fprintf(out, "  %12s  %9" PRIu64 "  %-9s  %s\n",
			ns_text(a, sizeof(a), v->cause_ns[c]), v->cause_intervals[c],
			ms_off_cpu_cause_name(c), cause_words(c));
	}
	fputs("\nby thread\n", out);
	ms_style_put(out, o->color, MS_STYLE_HEADER);
	fprintf(out, "%6s  %12s  %9s  %10s  %8s  %8s  name", "share", "off cpu", "intervals",
		"incomplete", "pid", "tid");
	ms_style_put(out, o->color, MS_STYLE_RESET);
	fputc('\n', out);
	for (i = 0; i < v->n_threads; i++) {
		const struct ms_off_cpu_view_thread *t = &v->threads[i];
		const struct ms_cap_thread *th = &cap->threads[t->thread];
		const char *sep = "  (";

		ms_view_put_percent(o, ms_percent(t->total, v->total));
		fprintf(out, "  %12s  %9" PRIu64 "  %10" PRIu64 "  %8" PRIu32 "  %8" PRIu32 "  ",
			ns_text(a, sizeof(a), t->total), t->intervals, t->incomplete, th->pid, th->tid);
		ms_text_put(out, *cap->strings[th->name] ? cap->strings[th->name] : "(no name)");
		for (k = 0; k < n; k++) {
			if (!t->cause_ns[order[k]])
				continue;
			fprintf(out, "%s%s %s", sep, ms_off_cpu_cause_name(order[k]),
				ns_text(a, sizeof(a), t->cause_ns[order[k]]));
			sep = ", ";
		}
		fputs(*sep == ',' ? ")\n" : "\n", out);
	}
	if (!v->n_threads)
		fputs("(no selected interval)\n", out);
}

/* The top view of one cause's intervals, as the off-cpu view's part. */
static int write_cause_top(const struct ms_view_out *o, const struct ms_capture *cap,
			   const struct ms_query *q, uint32_t cause)
{
	struct ms_query tq = *q;

	tq.view = MS_VIEW_TOP;
	tq.unit = MS_UNIT_OFF_CPU;
	tq.causes = 1u << cause;
	return ms_top_write(o, cap, &tq);
}

/* How many wait sites a cause's text lists: --limit, else this. */
#define SITES_SHOWN 10

/* "futex" for the capture string "__x64_sys_futex"; "-" for none. */
static const char *syscall_label(const struct ms_capture *cap, uint32_t str)
{
	const char *name;

	if (str == MS_NONE)
		return "-";
	name = cap->strings[str];
	return name + ms_wait_syscall_name(name);
}

static void write_sites_text(const struct ms_view_out *o, const struct ms_capture *cap,
			     const struct ms_off_cpu_view *v, const struct ms_wait_site *w,
			     uint32_t n, uint32_t cause)
{
	FILE *out = o->f;
	uint32_t shown = 0, total = 0, limit = v->query.limit ? v->query.limit : SITES_SHOWN;
	char a[32];

	for (uint32_t i = 0; i < n; i++)
		total += w[i].cause == cause;
	fprintf(out, "\nwhere threads were %s: by system call, the user function in it and where "
		"its module was called from (%" PRIu32 " site%s", ms_off_cpu_cause_name(cause), total,
		total == 1 ? "" : "s");
	if (total > limit)
		fprintf(out, ", the first %" PRIu32 " shown", limit);
	fputs(")\n", out);
	ms_style_put(out, o->color, MS_STYLE_HEADER);
	fprintf(out, "%6s  %12s  %9s  %-16s  %s", "share", "off cpu", "intervals", "system call",
		"in  <  from");
	ms_style_put(out, o->color, MS_STYLE_RESET);
	fputc('\n', out);
	for (uint32_t i = 0; i < n && shown < limit; i++) {
		if (w[i].cause != cause)
			continue;
		shown++;
		ms_view_put_percent(o, ms_percent(w[i].ns, v->cause_ns[cause]));
		fprintf(out, "  %12s  %9" PRIu64 "  %-16s  ", ns_text(a, sizeof(a), w[i].ns),
			w[i].intervals, syscall_label(cap, w[i].syscall));
		if (w[i].key[0] == MS_NONE) {
			fputs("(no user frame)", out);
		} else {
			ms_view_put_key(o, &v->sel, w[i].key[0], 0, true);
			if (w[i].key[1] != MS_NONE) {
				fputs("  <  ", out);
				ms_view_put_key(o, &v->sel, w[i].key[1], 0, false);
			}
		}
		fputc('\n', out);
	}
}

static int write_causes_text(const struct ms_view_out *o, const struct ms_capture *cap,
			     const struct ms_query *q, const struct ms_off_cpu_view *v)
{
	uint32_t order[MS_CAUSE_COUNT], n = ms_off_cpu_view_causes(v, order), i, n_sites;
	struct ms_wait_site *sites;

	if (ms_wait_sites(&v->sel, &sites, &n_sites))
		return -1;
	for (i = 0; i < n; i++) {
		if (!v->cause_ns[order[i]])
			continue;
		write_sites_text(o, cap, v, sites, n_sites, order[i]);
		fprintf(o->f, "\nwhere threads were %s: functions by off-CPU time at switch-out\n",
			ms_off_cpu_cause_name(order[i]));
		if (write_cause_top(o, cap, q, order[i])) {
			free(sites);
			return -1;
		}
	}
	free(sites);
	return 0;
}

/* The wait sites of one cause, as JSON: every one. */
static void write_sites_json(struct ms_json *j, const struct ms_capture *cap,
			     const struct ms_off_cpu_view *v, const struct ms_wait_site *w,
			     uint32_t n, uint32_t cause)
{
	ms_json_key(j, "sites");
	ms_json_array_begin(j);
	for (uint32_t i = 0; i < n; i++) {
		if (w[i].cause != cause)
			continue;
		ms_json_object_begin(j);
		ms_json_key(j, "syscall");
		if (w[i].syscall == MS_NONE)
			ms_json_null(j);
		else
			ms_json_string(j, syscall_label(cap, w[i].syscall));
		ms_json_key(j, "total");
		ms_json_uint(j, w[i].ns);
		ms_json_key(j, "intervals");
		ms_json_uint(j, w[i].intervals);
		ms_json_key(j, "functions");
		ms_json_array_begin(j);
		for (int k = 0; k < 2 && w[i].key[k] != MS_NONE; k++) {
			ms_json_object_begin(j);
			ms_key_json(j, cap, &v->sel.keys, w[i].key[k]);
			ms_json_object_end(j);
		}
		ms_json_array_end(j);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

static void write_json_head(struct ms_json *j, const struct ms_off_cpu_view *v)
{
	ms_json_key(j, "source");
	ms_json_string(j, ms_unit_source(MS_UNIT_OFF_CPU));
	ms_json_key(j, "unit");
	ms_json_string(j, ms_unit_measure(MS_UNIT_OFF_CPU));
	ms_json_key(j, "look");
	ms_json_string(j, ms_look_name(v->sel.q->look));
	ms_json_key(j, "total");
	ms_json_uint(j, v->total);
	ms_json_key(j, "capture_total");
	ms_json_uint(j, v->sel.all);
	ms_json_key(j, "intervals");
	ms_json_uint(j, v->intervals);
}

/* The object of the incomplete intervals: count, and per reason count and lower bound. */
void ms_off_cpu_json_incomplete(struct ms_json *j, const struct ms_off_cpu_view *v)
{
	uint32_t m;

	ms_json_object_begin(j);
	ms_json_key(j, "intervals");
	ms_json_uint(j, v->n_incomplete);
	ms_json_key(j, "reasons");
	ms_json_array_begin(j);
	for (m = 0; m < MS_INTERVAL_MISSING_COUNT; m++) {
		if (!v->incomplete[m])
			continue;
		ms_json_object_begin(j);
		ms_json_key(j, "missing");
		ms_json_string(j, m == MS_INTERVAL_COMPLETE ? "unknown" : ms_interval_missing_name(m));
		ms_json_key(j, "intervals");
		ms_json_uint(j, v->incomplete[m]);
		ms_json_key(j, "at_least_ns");
		ms_json_uint(j, v->incomplete_known[m]);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	ms_json_object_end(j);
}

static int write_json(const struct ms_view_out *o, const struct ms_capture *cap,
		      const struct ms_query *q, const struct ms_off_cpu_view *v)
{
	uint32_t order[MS_CAUSE_COUNT], n = ms_off_cpu_view_causes(v, order), i, k, n_sites;
	struct ms_wait_site *sites;
	struct ms_json j;

	if (ms_wait_sites(&v->sel, &sites, &n_sites))
		return -1;
	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	write_json_head(&j, v);
	ms_json_key(&j, "incomplete");
	ms_off_cpu_json_incomplete(&j, v);
	ms_json_key(&j, "causes");
	ms_json_array_begin(&j);
	for (i = 0; i < n; i++) {
		struct ms_view_out part = *o;
		char *buf = NULL;
		size_t len = 0;
		int rc;

		ms_json_object_begin(&j);
		ms_json_key(&j, "cause");
		ms_json_string(&j, ms_off_cpu_cause_name(order[i]));
		ms_json_key(&j, "total");
		ms_json_uint(&j, v->cause_ns[order[i]]);
		ms_json_key(&j, "intervals");
		ms_json_uint(&j, v->cause_intervals[order[i]]);
		write_sites_json(&j, cap, v, sites, n_sites, order[i]);
		/* the cause's top view, its own object */
		ms_json_key(&j, "top");
		part.f = open_memstream(&buf, &len);
		if (!part.f) {
			free(sites);
			return ms_error("out of memory writing the off-CPU view");
		}
		rc = write_cause_top(&part, cap, q, order[i]);
		if (fclose(part.f) || rc) {
			free(buf);
			free(sites);
			return rc ? -1 : ms_error("out of memory writing the off-CPU view");
		}
		while (len && buf[len - 1] == '\n')
			len--;
		fwrite(buf, 1, len, o->f);
		free(buf);
		j.need_comma = true;
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_key(&j, "threads");
	ms_json_array_begin(&j);
	for (i = 0; i < v->n_threads; i++) {
		const struct ms_off_cpu_view_thread *t = &v->threads[i];
		const struct ms_cap_thread *th = &cap->threads[t->thread];

		ms_json_object_begin(&j);
		ms_view_json_thread(&j, cap, th);
		ms_json_key(&j, "total");
		ms_json_uint(&j, t->total);
		ms_json_key(&j, "intervals");
		ms_json_uint(&j, t->intervals);
		ms_json_key(&j, "incomplete");
		ms_json_uint(&j, t->incomplete);
		ms_json_key(&j, "causes");
		ms_json_object_begin(&j);
		for (k = 0; k < MS_CAUSE_COUNT; k++) {
			ms_json_key(&j, ms_off_cpu_cause_name(k));
			ms_json_uint(&j, t->cause_ns[k]);
		}
		ms_json_object_end(&j);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', o->f);
	free(sites);
	return 0;
}

int ms_off_cpu_write(const struct ms_view_out *o, const struct ms_capture *cap,
		     const struct ms_query *q)
{
	struct ms_off_cpu_view v;
	int rc = 0;

	if (!(cap->flags & MS_CAPTURE_OFF_CPU))
		return ms_error("this capture has no off-CPU intervals: record it with microscope "
				"record --off-cpu");
	if (ms_off_cpu_view_compute(&v, cap, q))
		return -1;
	if (o->json) {
		rc = write_json(o, cap, q, &v);
	} else {
		write_text(o, cap, q, &v);
		rc = write_causes_text(o, cap, q, &v);
	}
	ms_off_cpu_view_release(&v);
	return rc;
}
