/*
 * Folded stacks (flamegraph.pl's input): one line per unique stack, its
 * frames' function labels outermost first joined by ';', a space, and its
 * weight. A stack cut short starts with its synthetic frame
 * ("[truncated: stack-copy]", internal.h), so samples are summed by
 * (stack, end's cut), and the thread with --thread-root. Lines are sorted
 * by their bytes, so the output depends only on what the stacks say.
 *
 * Weighed by off-CPU time (MS_WEIGHT_OFF_CPU), the lines are the complete
 * off-CPU intervals' instead of the samples: each on its switch-out stack
 * (an interval without one on "[no stack]", internal.h), its duration in
 * nanoseconds as weight. Weighed by snapshots (MS_WEIGHT_SNAPSHOTS), the
 * lines are the thread snapshots' (wait rows): each weighs one at its
 * stack, its task's thread the root with --thread-root.
 *
 * Stacks are merged by what a line can show: two stack nodes whose paths
 * have the same functions (different addresses in one function, say) are
 * one line. That merge is a tree of its own, (parent node, function) ->
 * node, no larger than the capture's stack tree (times the threads with
 * --thread-root), and the only memory besides the lines' text.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/funcs.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/progress.h"

#define NO_FRAMES_LABEL "[no frames]"

struct fold {
	const struct ms_capture *cap;
	struct ms_funcs funcs;
	struct ms_pairmap nodes;	/* (parent node or MS_NONE, code) -> node */
	uint64_t *weight;		/* per node */
	uint32_t alloc_weight;
	uint32_t code_no_frames;	/* codes past the functions' ids */
	uint32_t code_thread0;
	uint32_t code_cut0;
	uint32_t code_no_stack;
	struct ms_cuts cuts;
	char *text;			/* the lines, NUL-separated */
	size_t text_len, text_alloc;
};

/* The node of (parent, code), its weight 0 when new; MS_NONE after a message. */
static uint32_t node_get(struct fold *f, uint32_t parent, uint32_t code)
{
	bool added;
	uint32_t n = ms_pairmap_get(&f->nodes, parent, code, &added);

	if (n == MS_NONE)
		return MS_NONE;
	if (added) {
		uint32_t a = f->alloc_weight;

		if (ms_grow(&f->weight, &a, n, sizeof(*f->weight)) < 0)
			return MS_NONE;
		f->alloc_weight = a;
		f->weight[n] = 0;
	}
	return n;
}

static int text_add(struct fold *f, const char *s, size_t len)
{
	if (f->text_len + len + 1 > f->text_alloc) {
		size_t want = f->text_alloc ? f->text_alloc * 2 : 1 << 16;
		char *p;

		while (want < f->text_len + len + 1)
			want *= 2;
		p = realloc(f->text, want);
		if (!p)
			return ms_error("out of memory");
		f->text = p;
		f->text_alloc = want;
	}
	memcpy(f->text + f->text_len, s, len);
	f->text_len += len;
	return 0;
}

/*
 * A label as a folded frame: ';' separates frames and a newline ends the
 * line, so both become a look-alike ':' and ' '.
 */
static int label_add(struct fold *f, const char *label)
{
	size_t start = f->text_len;

	if (text_add(f, label, strlen(label)) < 0)
		return -1;
	for (size_t i = start; i < f->text_len; i++) {
		if (f->text[i] == ';')
			f->text[i] = ':';
		else if (f->text[i] == '\n' || f->text[i] == '\r')
			f->text[i] = ' ';
	}
	return 0;
}

static int thread_label_add(struct fold *f, uint32_t thread)
{
	const struct ms_cap_thread *t = &f->cap->threads[thread];
	char buf[64];

	if (t->name && label_add(f, f->cap->strings[t->name]) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%s%" PRIu32 "/%" PRIu32, t->name ? "-" : "thread-", t->pid,
		 t->tid);
	return text_add(f, buf, strlen(buf));
}

static int code_label_add(struct fold *f, uint32_t code)
{
	if (code < f->funcs.n)
		return label_add(f, f->funcs.funcs[code].qualified);
	if (code == f->code_no_frames)
		return text_add(f, NO_FRAMES_LABEL, strlen(NO_FRAMES_LABEL));
	if (code == f->code_no_stack)
		return text_add(f, MS_NO_STACK_LABEL, strlen(MS_NO_STACK_LABEL));
	if (code >= f->code_cut0)
		return label_add(f, f->cuts.labels[code - f->code_cut0]);
	return thread_label_add(f, code - f->code_thread0);
}

struct line {
	size_t off;
	uint64_t weight;
};

static int cmp_lines(const void *a, const void *b, void *ctx)
{
	const char *text = ctx;

	return strcmp(text + ((const struct line *)a)->off, text + ((const struct line *)b)->off);
}

int ms_folded_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct fold f;
	struct ms_rows rows = MS_ROWS_INIT;
	uint64_t *row_weight = NULL;
	uint32_t alloc_rows = 0, max_depth = ms_stacks_max_depth(cap) + 1, max_path, i, k;
	uint32_t *nodes = calloc(max_depth, sizeof(*nodes)), *path = NULL;
	struct line *lines = NULL;
	uint32_t n_lines = 0;
	struct ms_progress progress;
	bool by_time = o && o->weight == MS_WEIGHT_TIME, thread_root = o && o->thread_root;
	bool off_cpu = o && o->weight == MS_WEIGHT_OFF_CPU;
	bool snapshots = o && o->weight == MS_WEIGHT_SNAPSHOTS;
	int ret = -1;

	memset(&f, 0, sizeof(f));
	f.cap = cap;
	f.nodes = (struct ms_pairmap)MS_PAIRMAP_INIT;
	if (!nodes)
		return ms_error("out of memory");
	if (off_cpu && !(cap->flags & MS_CAPTURE_OFF_CPU)) {
		free(nodes);
		return ms_error("cannot weigh folded stacks by off-CPU time: the capture has no "
				"off-CPU intervals; record it with microscope record --off-cpu");
	}
	if (snapshots && !cap->n_waits) {
		free(nodes);
		return ms_error("cannot weigh folded stacks by snapshots: the capture has no thread "
				"snapshots; record it with microscope record --python snapshot");
	}
	ms_progress_start(&progress, "writing folded stacks",
			  off_cpu ? cap->n_intervals : snapshots ? cap->n_waits : cap->n_samples);
	if (ms_funcs_build(&f.funcs, cap) < 0)
		goto out;
	/* a line's nodes: the thread or "[no frames]", the cut, then the functions */
	max_path = ms_funcs_max_path(cap, &f.funcs) + 2;
	path = calloc(max_path, sizeof(*path));
	if (!path) {
		ms_error("out of memory");
		goto out;
	}
	/*
	 * codes: the functions, "[no frames]", the threads, the cuts, "[no
	 * stack]"; MS_NONE stays free
	 */
	if ((uint64_t)f.funcs.n + 1 + cap->n_threads + MS_CUTS_MAX + 1 >= MS_NONE) {
		ms_error("cannot write folded stacks: %" PRIu32 " functions and %" PRIu32 " threads "
			 "are more than it numbers; export pprof instead", f.funcs.n, cap->n_threads);
		goto out;
	}
	f.code_no_frames = f.funcs.n;
	f.code_thread0 = f.funcs.n + 1;
	f.code_cut0 = f.code_thread0 + cap->n_threads;
	f.code_no_stack = f.code_cut0 + MS_CUTS_MAX;
	f.cuts = (struct ms_cuts)MS_CUTS_INIT;

	/* weight per unique (stack, thread or none, cut or none) */
	for (i = 0; off_cpu && i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		uint64_t weight = ms_interval_weight(cap, o, iv);
		bool added;
		uint32_t r;

		ms_progress_update(&progress, i);
		if (!weight)
			continue;
		r = ms_rows_get(&rows, iv->stack, thread_root ? iv->thread : MS_NONE,
				ms_interval_cut(&f.cuts, iv), &added);
		if (r == MS_NONE)
			goto out;
		if (added) {
			if (ms_grow(&row_weight, &alloc_rows, r, sizeof(*row_weight)) < 0)
				goto out;
			row_weight[r] = 0;
		}
		row_weight[r] = ms_weight_add(row_weight[r], weight);
	}
	for (i = 0; snapshots && i < cap->n_waits; i++) {
		uint32_t thread = thread_root ? ms_export_wait_thread(cap, i) : MS_NONE;
		bool added;
		uint32_t r;

		ms_progress_update(&progress, i);
		r = ms_rows_get(&rows, cap->waits[i].stack, thread < cap->n_threads ? thread : MS_NONE,
				MS_NONE, &added);
		if (r == MS_NONE)
			goto out;
		if (added) {
			if (ms_grow(&row_weight, &alloc_rows, r, sizeof(*row_weight)) < 0)
				goto out;
			row_weight[r] = 0;
		}
		row_weight[r]++;
	}
	for (i = 0; !off_cpu && !snapshots && i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		bool added;
		uint32_t r;

		ms_progress_update(&progress, i);
		r = ms_rows_get(&rows, s->stack, thread_root ? s->thread : MS_NONE,
				ms_cuts_id(&f.cuts, s->end), &added);
		if (r == MS_NONE)
			goto out;
		if (added) {
			if (ms_grow(&row_weight, &alloc_rows, r, sizeof(*row_weight)) < 0)
				goto out;
			row_weight[r] = 0;
		}
		row_weight[r] = by_time ? ms_weight_add(row_weight[r], ms_capture_sample_weight(cap, s)) :
					  row_weight[r] + s->count;
	}
	/* each row's path of functions, merged into the fold tree */
	for (i = 0; i < rows.rows.n; i++) {
		uint32_t stack, thread, cut, n, node = MS_NONE;

		ms_rows_key(&rows, i, &stack, &thread, &cut);
		n = ms_stack_funcs(cap, &f.funcs, stack, nodes, path);
		if (thread != MS_NONE && (node = node_get(&f, MS_NONE, f.code_thread0 + thread)) == MS_NONE)
			goto out;
		/* the cut outermost: a stack without frames is then its cut alone */
		if (cut != MS_NONE && (node = node_get(&f, node, cut == MS_CUT_NO_STACK ?
						       f.code_no_stack : f.code_cut0 + cut)) == MS_NONE)
			goto out;
		if (!n && node == MS_NONE && (node = node_get(&f, MS_NONE, f.code_no_frames)) == MS_NONE)
			goto out;
		for (k = 0; k < n; k++)
			if ((node = node_get(&f, node, path[k])) == MS_NONE)
				goto out;
		f.weight[node] = ms_weight_add(f.weight[node], row_weight[i]);
	}
	/* the text of every line that weighs something */
	lines = calloc(f.nodes.n ? f.nodes.n : 1, sizeof(*lines));
	if (!lines) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < f.nodes.n; i++) {
		uint32_t n = 0, node;

		if (!f.weight[i])
			continue;
		for (node = i; node != MS_NONE && n < max_path; node = f.nodes.keys[node][0])
			path[n++] = node;
		lines[n_lines].off = f.text_len;
		lines[n_lines].weight = f.weight[i];
		while (n--) {
			if (code_label_add(&f, f.nodes.keys[path[n]][1]) < 0 ||
			    (n && text_add(&f, ";", 1) < 0))
				goto out;
		}
		if (text_add(&f, "", 1) < 0)
			goto out;
		f.text[f.text_len - 1] = '\0';
		n_lines++;
	}
	qsort_r(lines, n_lines, sizeof(*lines), cmp_lines, f.text);
	for (i = 0; i < n_lines; i++)
		fprintf(out, "%s %" PRIu64 "\n", f.text + lines[i].off, lines[i].weight);
	ret = 0;
out:
	ms_progress_finish(&progress);
	ms_rows_release(&rows);
	ms_pairmap_release(&f.nodes);
	ms_funcs_release(&f.funcs);
	free(row_weight);
	free(f.weight);
	free(f.text);
	free(lines);
	free(nodes);
	free(path);
	return ret;
}
