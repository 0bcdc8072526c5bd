/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per thread that has samples, in time order, over
 * a shared table of frames (one per function: its label, and its source
 * file and first line when the capture has lines, else its module's path).
 *
 * A stack cut short starts with its synthetic frame ("[truncated:
 * stack-copy]", internal.h), shared frames after the functions'; a sample
 * without frames whose end was cut is that frame alone.
 *
 * A run of samples of a thread with the same stack and cut is one entry
 * whose weight is the run's: speedscope's time-order view is unchanged and
 * the file is smaller. Each thread's samples are found by a pass over the
 * capture's (time-sorted) samples from the thread's first to its last, so
 * nothing is held per sample.
 *
 * Weighed by off-CPU time (MS_WEIGHT_OFF_CPU), the profiles are of the
 * complete off-CPU intervals instead (sorted by time as the samples are),
 * each on its switch-out stack, its duration in nanoseconds as weight; an
 * interval without a switch-out stack stands on the shared frame "[no
 * stack]" (internal.h), after the cuts'.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/funcs.h"
#include "capture/weight.h"
#include "util/json.h"
#include "util/error.h"
#include "util/progress.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

static void write_frames(struct ms_json *j, const struct ms_capture *cap,
			 const struct ms_funcs *funcs, const struct ms_cuts *cuts, bool no_stack)
{
	ms_json_array_begin(j);
	for (uint32_t i = 0; i < funcs->n; i++) {
		const struct ms_func *fn = &funcs->funcs[i];

		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, fn->label);
		if (fn->file) {
			/* the source, when debug information gave it */
			ms_json_key(j, "file");
			ms_json_string(j, cap->strings[fn->file]);
			if (fn->line) {
				ms_json_key(j, "line");
				ms_json_uint(j, fn->line);
			}
		} else if (fn->module != MS_NONE && cap->modules[fn->module].path) {
			ms_json_key(j, "file");
			ms_json_string(j, cap->strings[cap->modules[fn->module].path]);
		}
		ms_json_object_end(j);
	}
	for (uint32_t c = 0; c < cuts->n; c++) {
		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, cuts->labels[c]);
		ms_json_object_end(j);
	}
	if (no_stack) {
		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, MS_NO_STACK_LABEL);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

struct run_walk {
	const struct ms_capture *cap;
	const struct ms_export_options *o;
	struct ms_cuts *cuts;
	uint32_t thread, next, last;
	struct ms_progress *progress;
	uint64_t *seen;		/* samples walked over, for progress */
};

/* What is walked: the samples, the off-CPU intervals, or the snapshots (waits). */
static uint32_t n_items(const struct ms_capture *cap, const struct ms_export_options *o)
{
	return o && o->weight == MS_WEIGHT_OFF_CPU ? cap->n_intervals :
	       o && o->weight == MS_WEIGHT_SNAPSHOTS ? cap->n_waits : cap->n_samples;
}

/*
 * Item i's thread, stack, cut (MS_CUT_NO_STACK: "[no stack]") and weight
 * as o weighs it; false when it weighs nothing (an incomplete interval, or
 * one of a cause not chosen).
 */
static bool item(const struct ms_capture *cap, const struct ms_export_options *o,
		 struct ms_cuts *cuts, uint32_t i, uint32_t *thread, uint32_t *stack,
		 uint32_t *cut, uint64_t *weight)
{
	if (o && o->weight == MS_WEIGHT_OFF_CPU) {
		const struct ms_cap_interval *iv = &cap->intervals[i];

		*weight = ms_interval_weight(cap, o, iv);
		*thread = iv->thread;
		*stack = iv->stack;
		*cut = *weight ? ms_interval_cut(cuts, iv) : MS_NONE;
		return *weight > 0;
	}
	/* a whole read ended where its runtime says: no cut; a task without a thread has no profile */
	if (o && o->weight == MS_WEIGHT_SNAPSHOTS) {
		*thread = ms_export_wait_thread(cap, i);
		*stack = cap->waits[i].stack;
		*cut = MS_NONE;
		*weight = 1;
		return *thread < cap->n_threads;
	}
	*thread = cap->samples[i].thread;
	*stack = cap->samples[i].stack;
	*cut = ms_cuts_id(cuts, cap->samples[i].end);
	*weight = o && o->weight == MS_WEIGHT_TIME ?
		  ms_capture_sample_weight(cap, &cap->samples[i]) : cap->samples[i].count;
	return true;
}

/* The next run of thread's samples with one stack and cut: those and its weight. */
static bool next_run(struct run_walk *w, uint32_t *stack, uint32_t *cut, uint64_t *weight)
{
	const struct ms_capture *cap = w->cap;
	uint32_t n = n_items(cap, w->o);
	bool have = false;

	*weight = 0;
	/* a sample that ends the run is walked again by the next call: not counted twice */
	for (; w->next <= w->last && w->next < n; w->next++, ++*w->seen) {
		uint32_t thread, st, sc;
		uint64_t wt;

		ms_progress_update(w->progress, *w->seen);
		if (!item(cap, w->o, w->cuts, w->next, &thread, &st, &sc, &wt) ||
		    thread != w->thread)
			continue;
		if (have && (st != *stack || sc != *cut))
			break;
		have = true;
		*stack = st;
		*cut = sc;
		*weight = ms_weight_add(*weight, wt);
	}
	return have;
}

int ms_speedscope_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct ms_funcs funcs;
	struct ms_cuts cuts = MS_CUTS_INIT;
	struct ms_json j;
	bool by_time = o && o->weight == MS_WEIGHT_TIME;
	bool off_cpu = o && o->weight == MS_WEIGHT_OFF_CPU, no_stack = false;
	bool snapshots = o && o->weight == MS_WEIGHT_SNAPSHOTS;
	const char *command = ms_capture_info_text(cap, "command");
	uint32_t *first = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*first));
	uint32_t *last = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*last));
	uint32_t max_depth = ms_stacks_max_depth(cap), n_walked = n_items(cap, o), i, k, n;
	uint32_t *nodes = calloc(max_depth ? max_depth : 1, sizeof(*nodes)), *path = NULL;
	struct ms_progress progress;
	uint64_t walk = 0, seen = 0;
	int ret = -1;

	if (!first || !last || !nodes) {
		free(first);
		free(last);
		free(nodes);
		return ms_error("out of memory");
	}
	if (off_cpu && !(cap->flags & MS_CAPTURE_OFF_CPU)) {
		ms_error("cannot weigh a speedscope profile by off-CPU time: the capture has no "
			 "off-CPU intervals; record it with microscope record --off-cpu");
		goto out_free;
	}
	if (snapshots && !cap->n_waits) {
		ms_error("cannot weigh a speedscope profile by snapshots: the capture has no thread "
			 "snapshots; record it with microscope record --python snapshot");
		goto out_free;
	}
	if (ms_funcs_build(&funcs, cap) < 0)
		goto out_free;
	path = calloc(ms_funcs_max_path(cap, &funcs), sizeof(*path));
	if (!path) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < cap->n_threads; i++)
		first[i] = MS_NONE;
	/* also every cut, for the shared frames */
	for (i = 0; i < n_walked; i++) {
		uint32_t t, stack, cut;
		uint64_t weight;

		if (!item(cap, o, &cuts, i, &t, &stack, &cut, &weight))
			continue;
		if (first[t] == MS_NONE)
			first[t] = i;
		last[t] = i;
		no_stack |= cut == MS_CUT_NO_STACK;
	}
	/* each thread's samples are walked three times: total, stacks, weights */
	for (i = 0; i < cap->n_threads; i++)
		if (first[i] != MS_NONE)
			walk += 3 * ((uint64_t)last[i] - first[i] + 1);
	ms_progress_start(&progress, "writing the speedscope file", walk);
	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "$schema");
	ms_json_string(&j, SCHEMA);
	ms_json_key(&j, "shared");
	ms_json_object_begin(&j);
	ms_json_key(&j, "frames");
	write_frames(&j, cap, &funcs, &cuts, no_stack);
	ms_json_object_end(&j);
	ms_json_key(&j, "profiles");
	ms_json_array_begin(&j);
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];
		struct run_walk w = { cap, o, &cuts, i, first[i], last[i], &progress, &seen };
		uint64_t total = 0, weight;
		uint32_t stack, cut;
		char name[512];

		if (first[i] == MS_NONE)
			continue;
		while (next_run(&w, &stack, &cut, &weight))
			total += weight;
		snprintf(name, sizeof(name), "%s (%" PRIu32 "/%" PRIu32 ")%s",
			 t->name ? cap->strings[t->name] : "thread", t->pid, t->tid,
			 off_cpu ? " off-CPU" : snapshots ? " snapshots" : "");
		ms_json_object_begin(&j);
		ms_json_key(&j, "type");
		ms_json_string(&j, "sampled");
		ms_json_key(&j, "name");
		ms_json_string(&j, name);
		ms_json_key(&j, "unit");
		ms_json_string(&j, by_time || off_cpu ? "nanoseconds" : "none");
		ms_json_key(&j, "startValue");
		ms_json_uint(&j, 0);
		ms_json_key(&j, "endValue");
		ms_json_uint(&j, total);
		ms_json_key(&j, "samples");
		ms_json_array_begin(&j);
		w.next = first[i];
		while (next_run(&w, &stack, &cut, &weight)) {
			n = ms_stack_funcs(cap, &funcs, stack, nodes, path);
			ms_json_array_begin(&j);
			if (cut == MS_CUT_NO_STACK)
				ms_json_uint(&j, (uint64_t)funcs.n + cuts.n);
			else if (cut != MS_NONE)
				ms_json_uint(&j, (uint64_t)funcs.n + cut);
			for (k = 0; k < n; k++)
				ms_json_uint(&j, path[k]);
			ms_json_array_end(&j);
		}
		ms_json_array_end(&j);
		ms_json_key(&j, "weights");
		ms_json_array_begin(&j);
		w.next = first[i];
		while (next_run(&w, &stack, &cut, &weight))
			ms_json_uint(&j, weight);
		ms_json_array_end(&j);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_key(&j, "name");
	ms_json_string(&j, command && *command ? command : "microscope capture");
	ms_json_key(&j, "activeProfileIndex");
	ms_json_uint(&j, 0);
	ms_json_key(&j, "exporter");
	ms_json_string(&j, o && o->producer ? o->producer : "microscope");
	ms_json_object_end(&j);
	fputc('\n', out);
	ret = 0;
	ms_progress_finish(&progress);
out:
	ms_funcs_release(&funcs);
out_free:
	free(first);
	free(last);
	free(nodes);
	free(path);
	return ret;
}
