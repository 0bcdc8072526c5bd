/*
 * threads: the selected weight per thread, and, in a capture with label
 * spans, the share of it under each label value (gil=held); the
 * timeline's density lanes: the same weight per thread per time bucket.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "capture/labels.h"
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

/* At most this many (key, value) pairs get a share per thread; the others are left out. */
#define LABEL_PAIRS_MAX 32

/*
 * Per thread, the selected weight under each (key, value) pair of the
 * capture's label spans: pairs sorted by (key, value) string ids (byte
 * order), at most LABEL_PAIRS_MAX; weight[t * n + p].
 */
struct label_shares {
	uint32_t n;
	uint32_t key[LABEL_PAIRS_MAX], value[LABEL_PAIRS_MAX];
	uint32_t n_keys;
	uint32_t keys[LABEL_PAIRS_MAX];
	bool cut;		/* pairs past LABEL_PAIRS_MAX were left out */
	struct ms_labels spans;
	uint64_t *weight;
};

static int shares_init(struct label_shares *ls, const struct ms_capture *cap)
{
	uint32_t i, p;

	memset(ls, 0, sizeof(*ls));
	for (i = 0; i < cap->n_label_spans; i++) {
		const struct ms_cap_label_span *x = &cap->label_spans[i];

		for (p = 0; p < ls->n && (ls->key[p] != x->key || ls->value[p] != x->value); p++)
			;
		if (p < ls->n)
			continue;
		if (ls->n == LABEL_PAIRS_MAX) {
			ls->cut = true;
			continue;
		}
		/* insertion in (key, value) order */
		for (p = ls->n; p && (ls->key[p - 1] > x->key ||
				      (ls->key[p - 1] == x->key && ls->value[p - 1] > x->value)); p--) {
			ls->key[p] = ls->key[p - 1];
			ls->value[p] = ls->value[p - 1];
		}
		ls->key[p] = x->key;
		ls->value[p] = x->value;
		ls->n++;
	}
	for (p = 0; p < ls->n; p++)
		if (!ls->n_keys || ls->keys[ls->n_keys - 1] != ls->key[p])
			ls->keys[ls->n_keys++] = ls->key[p];
	if (!ls->n)
		return 0;
	if (ms_labels_init(&ls->spans, cap) < 0)
		return -1;
	ls->weight = calloc((size_t)cap->n_threads * ls->n, sizeof(*ls->weight));
	if (!ls->weight)
		return ms_error("out of memory counting the labels of %" PRIu32 " threads",
				cap->n_threads);
	return 0;
}

/* A row at time (of thread t, weight w) under each key's value. */
static void shares_add(struct label_shares *ls, const struct ms_capture *cap, uint64_t time,
		       uint32_t t, uint64_t w)
{
	for (uint32_t k = 0; k < ls->n_keys; k++) {
		uint32_t sp = ms_labels_at(&ls->spans, t, ls->keys[k], time), p;

		if (sp == MS_NONE)
			continue;
		for (p = 0; p < ls->n; p++)
			if (ls->key[p] == ls->keys[k] && ls->value[p] == cap->label_spans[sp].value) {
				uint64_t *x = &ls->weight[(size_t)t * ls->n + p];

				*x = ms_weight_add(*x, w);
				break;
			}
	}
}

static void shares_release(struct label_shares *ls)
{
	ms_labels_release(&ls->spans);
	free(ls->weight);
}

/* The share of thread t's weight under each label value: "key": [{value, total, percent}]. */
static void json_labels(struct ms_json *j, const struct label_shares *ls,
			const struct ms_capture *cap, uint32_t t, uint64_t total)
{
	ms_json_key(j, "labels");
	ms_json_array_begin(j);
	for (uint32_t p = 0; p < ls->n; p++) {
		uint64_t w = ls->weight[(size_t)t * ls->n + p];

		if (!w)
			continue;
		ms_json_object_begin(j);
		ms_json_key(j, "key");
		ms_json_string(j, cap->strings[ls->key[p]]);
		ms_json_key(j, "value");
		ms_json_string(j, cap->strings[ls->value[p]]);
		ms_json_key(j, "total");
		ms_json_uint(j, w);
		ms_json_key(j, "percent");
		ms_json_double(j, ms_percent(w, total), 2);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

/* "  [gil=held 93.1%, gil=released 4.0%]" after the thread's name. */
static void text_labels(FILE *f, const struct label_shares *ls, const struct ms_capture *cap,
			uint32_t t, uint64_t total)
{
	const char *sep = "  [";

	for (uint32_t p = 0; p < ls->n; p++) {
		uint64_t w = ls->weight[(size_t)t * ls->n + p];

		if (!w)
			continue;
		fputs(sep, f);
		ms_text_put(f, cap->strings[ls->key[p]]);
		fputc('=', f);
		ms_text_put(f, cap->strings[ls->value[p]]);
		fprintf(f, " %.1f%%", ms_percent(w, total));
		sep = ", ";
	}
	if (*sep == ',')
		fputc(']', f);
}

int ms_threads_write(const struct ms_view_out *o, const struct ms_capture *cap,
		     const struct ms_query *q)
{
	struct label_shares ls;
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
	/* labels share the samples' weight; off-CPU time has none */
	memset(&ls, 0, sizeof(ls));
	if (s.unit != MS_UNIT_OFF_CPU && shares_init(&ls, cap) < 0) {
		shares_release(&ls);
		free(rows);
		ms_select_release(&s);
		return -1;
	}
	for (i = 0; i < cap->n_threads; i++)
		rows[i].thread = i;
	for (i = 0; i < cap->n_samples && s.unit != MS_UNIT_OFF_CPU && s.unit != MS_UNIT_SNAPSHOTS;
	     i++) {
		uint64_t w;
		uint32_t c, t = cap->samples[i].thread;

		if (t >= cap->n_threads || !ms_select_sample(&s, i, &w, &c))
			continue;
		rows[t].weight = ms_weight_add(rows[t].weight, w);
		rows[t].samples += cap->samples[i].count;
		if (ls.n)
			shares_add(&ls, cap, cap->samples[i].time, t, w);
	}
	/* snapshots: samples counts the thread's snapshots (each weighs one) */
	for (i = 0; i < cap->n_waits && s.unit == MS_UNIT_SNAPSHOTS; i++) {
		uint64_t w;
		uint32_t c, t = ms_wait_thread(cap, i);

		if (t >= cap->n_threads || !ms_select_wait(&s, i, &w, &c))
			continue;
		rows[t].weight = ms_weight_add(rows[t].weight, w);
		rows[t].samples++;
		if (ls.n)
			shares_add(&ls, cap, cap->waits[i].time, t, w);
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
			ms_json_key(&j, s.unit == MS_UNIT_OFF_CPU ? "intervals" :
				    s.unit == MS_UNIT_SNAPSHOTS ? "snapshots" : "samples");
			ms_json_uint(&j, rows[i].samples);
			ms_json_key(&j, "total");
			ms_json_uint(&j, rows[i].weight);
			ms_json_key(&j, "percent");
			ms_json_double(&j, ms_select_percent(&s, rows[i].weight), 2);
			if (ls.n)
				json_labels(&j, &ls, cap, rows[i].thread, rows[i].weight);
			ms_json_object_end(&j);
		}
		ms_json_array_end(&j);
		if (ls.cut) {
			ms_json_key(&j, "labels_cut");
			ms_json_uint(&j, LABEL_PAIRS_MAX);
		}
		ms_json_object_end(&j);
		fputc('\n', o->f);
	} else {
		ms_view_value(a, sizeof(a), &s, s.selected);
		fprintf(o->f, "%s%s in %" PRIu32 " thread%s", a,
			ms_unit_words(s.unit), cap->n_threads,
			cap->n_threads == 1 ? "" : "s");
		if (listed < cap->n_threads)
			fprintf(o->f, " (%" PRIu32 " not listed: no selected %s%s)",
				cap->n_threads - listed, s.unit == MS_UNIT_OFF_CPU ? "intervals" :
				s.unit == MS_UNIT_SNAPSHOTS ? "snapshots" : "samples",
				q->hide_below > 0 ? " or under --hide-below" : "");
		fputc('\n', o->f);
		ms_view_selection_line(o->f, &s);
		fprintf(o->f, "%6s  %12s  %8s  %8s  name\n", "share", ms_unit_column(s.unit),
			"pid", "tid");
		for (i = 0; i < listed; i++) {
			const struct ms_cap_thread *t = &cap->threads[rows[i].thread];

			ms_view_value(a, sizeof(a), &s, rows[i].weight);
			fprintf(o->f, "%5.1f%%  %12s  %8" PRIu32 "  %8" PRIu32 "  ",
				ms_select_percent(&s, rows[i].weight), a, t->pid, t->tid);
			ms_text_put(o->f, *cap->strings[t->name] ? cap->strings[t->name] : "(no name)");
			if (ls.n)
				text_labels(o->f, &ls, cap, rows[i].thread, rows[i].weight);
			fputc('\n', o->f);
		}
		if (ls.cut)
			fprintf(o->f, "(label values past the first %d are not shown)\n",
				LABEL_PAIRS_MAX);
	}
	shares_release(&ls);
	free(rows);
	ms_select_release(&s);
	return 0;
}
