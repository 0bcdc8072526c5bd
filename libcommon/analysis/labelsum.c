/*
 * The summary's word on label spans (capture.h: ms_cap_label_span): which
 * key=value pairs the capture has, over how many spans, samples (or
 * snapshots) and threads, so people know --label and the threads view have something
 * to show. Said only when there are spans, so other captures' summaries
 * stay as they were.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "util/json.h"
#include "util/text.h"

/* At most this many pairs are named; the rest are counted. */
#define PAIRS_MAX 8

struct pair_sum {
	uint32_t key, value;
	uint64_t spans, samples;
};

/* The pairs in (key, value) order (at most PAIRS_MAX), the threads with spans, pairs not named. */
static uint32_t sum_pairs(const struct ms_capture *cap, struct pair_sum *p, uint32_t *threads,
			  uint32_t *more)
{
	uint32_t n = 0, i, k, last_thread = MS_NONE;

	*threads = *more = 0;
	for (i = 0; i < cap->n_label_spans; i++) {
		const struct ms_cap_label_span *x = &cap->label_spans[i];

		/* rows are sorted by thread */
		if (x->thread != last_thread) {
			(*threads)++;
			last_thread = x->thread;
		}
		for (k = 0; k < n && (p[k].key != x->key || p[k].value != x->value); k++)
			;
		if (k == n) {
			if (n == PAIRS_MAX) {
				(*more)++;
				continue;
			}
			for (; k && (p[k - 1].key > x->key ||
				     (p[k - 1].key == x->key && p[k - 1].value > x->value)); k--)
				p[k] = p[k - 1];
			p[k] = (struct pair_sum){ x->key, x->value, 0, 0 };
			n++;
		}
		p[k].spans++;
		p[k].samples += x->samples;
	}
	return n;
}

/*
 * What a span's count counts: the snapshot engine's spans run over a
 * thread's snapshots, the BPF engine's over its samples (INFO python).
 */
static const char *span_unit(const struct ms_capture *cap)
{
	const char *engine = ms_capture_info_text(cap, "python");

	return engine && !strcmp(engine, "snapshot") ? "snapshots" : "samples";
}

void ms_labels_summary_text(FILE *out, const struct ms_capture *cap)
{
	struct pair_sum p[PAIRS_MAX];
	uint32_t threads, more, n, i;

	if (!cap->n_label_spans)
		return;
	n = sum_pairs(cap, p, &threads, &more);
	fprintf(out, "labels:      %" PRIu32 " span%s over %" PRIu32 " thread%s:",
		cap->n_label_spans, cap->n_label_spans == 1 ? "" : "s", threads,
		threads == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : " ", out);
		ms_text_put(out, cap->strings[p[i].key]);
		fputc('=', out);
		ms_text_put(out, cap->strings[p[i].value]);
		fprintf(out, " (%" PRIu64 " %s)", p[i].samples, span_unit(cap));
	}
	if (more)
		fprintf(out, " and spans of other values");
	fputs(" (--label KEY=VALUE selects them; the threads view shows the shares)\n", out);
}

void ms_labels_json(struct ms_json *j, const struct ms_capture *cap)
{
	struct pair_sum p[PAIRS_MAX];
	uint32_t threads, more, n, i;

	n = sum_pairs(cap, p, &threads, &more);
	ms_json_object_begin(j);
	ms_json_key(j, "spans");
	ms_json_uint(j, cap->n_label_spans);
	ms_json_key(j, "threads");
	ms_json_uint(j, threads);
	/* what each value's "samples" counts: "samples" or "snapshots" */
	ms_json_key(j, "counts");
	ms_json_string(j, span_unit(cap));
	ms_json_key(j, "values");
	ms_json_array_begin(j);
	for (i = 0; i < n; i++) {
		ms_json_object_begin(j);
		ms_json_key(j, "key");
		ms_json_string(j, cap->strings[p[i].key]);
		ms_json_key(j, "value");
		ms_json_string(j, cap->strings[p[i].value]);
		ms_json_key(j, "spans");
		ms_json_uint(j, p[i].spans);
		ms_json_key(j, "samples");
		ms_json_uint(j, p[i].samples);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	ms_json_key(j, "other_spans");
	ms_json_uint(j, more);
	ms_json_object_end(j);
}
