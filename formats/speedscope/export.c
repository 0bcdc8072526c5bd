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
			 const struct ms_funcs *funcs, const struct ms_cuts *cuts)
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
	ms_json_array_end(j);
}

struct run_walk {
	const struct ms_capture *cap;
	struct ms_cuts *cuts;
	uint32_t thread, next, last;
	bool by_time;
	struct ms_progress *progress;
	uint64_t *seen;		/* samples walked over, for progress */
};

/* The next run of thread's samples with one stack and cut: those and its weight. */
static bool next_run(struct run_walk *w, uint32_t *stack, uint32_t *cut, uint64_t *weight)
{
	const struct ms_capture *cap = w->cap;
	bool have = false;

	*weight = 0;
	/* a sample that ends the run is walked again by the next call: not counted twice */
	for (; w->next <= w->last && w->next < cap->n_samples; w->next++, ++*w->seen) {
		const struct ms_cap_sample *s = &cap->samples[w->next];
		uint32_t sc;

		ms_progress_update(w->progress, *w->seen);
		if (s->thread != w->thread)
			continue;
		sc = ms_cuts_id(w->cuts, s->end);
		if (have && (s->stack != *stack || sc != *cut))
			break;
		have = true;
		*stack = s->stack;
		*cut = sc;
		*weight = w->by_time ? ms_weight_add(*weight, ms_capture_sample_weight(cap, s)) :
				       *weight + s->count;
	}
	return have;
}

int ms_speedscope_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct ms_funcs funcs;
	struct ms_cuts cuts = MS_CUTS_INIT;
	struct ms_json j;
	bool by_time = o && o->weight == MS_WEIGHT_TIME;
	const char *command = ms_capture_info_text(cap, "command");
	uint32_t *first = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*first));
	uint32_t *last = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*last));
	uint32_t max_depth = ms_stacks_max_depth(cap), i, k, n;
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
	for (i = 0; i < cap->n_samples; i++) {
		uint32_t t = cap->samples[i].thread;

		if (first[t] == MS_NONE)
			first[t] = i;
		last[t] = i;
		ms_cuts_id(&cuts, cap->samples[i].end);
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
	write_frames(&j, cap, &funcs, &cuts);
	ms_json_object_end(&j);
	ms_json_key(&j, "profiles");
	ms_json_array_begin(&j);
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];
		struct run_walk w = { cap, &cuts, i, first[i], last[i], by_time, &progress, &seen };
		uint64_t total = 0, weight;
		uint32_t stack, cut;
		char name[512];

		if (first[i] == MS_NONE)
			continue;
		while (next_run(&w, &stack, &cut, &weight))
			total += weight;
		snprintf(name, sizeof(name), "%s (%" PRIu32 "/%" PRIu32 ")",
			 t->name ? cap->strings[t->name] : "thread", t->pid, t->tid);
		ms_json_object_begin(&j);
		ms_json_key(&j, "type");
		ms_json_string(&j, "sampled");
		ms_json_key(&j, "name");
		ms_json_string(&j, name);
		ms_json_key(&j, "unit");
		ms_json_string(&j, by_time ? "nanoseconds" : "none");
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
			if (cut != MS_NONE)
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
