/*
 * Chrome's Trace Event Format (the JSON object form) that chrome://tracing
 * and Perfetto open. Times are microseconds of the capture's clock, with
 * three decimals so that no nanosecond is rounded away.
 *
 *   {"traceEvents": [metadata..., events...], "displayTimeUnit": "ns",
 *    "otherData": {...}, ["stackFrames": {...}, "samples": [...]]}
 *
 * Metadata ("ph": "M") names each process and thread. Then one of:
 *  - events (the default): each thread's samples become "X" (complete)
 *    events, one per function per run of samples that share the path to
 *    it, nested as the calls were: a flame chart on the thread's time line.
 *    A frame ends at the next sample that leaves it, or one span after
 *    the thread's last sample before a gap. A sample row's span is its
 *    period (the sum of its samples'), or when that is 0 its count of
 *    DEFAULT_SPAN_NS: a row that stands for many samples is one longer
 *    span, never that many events.
 *  - samples: "stackFrames" holds one entry per unique path of functions
 *    (its parent the path one shorter) and "samples" one entry per sample
 *    row (cpu, tid, ts, the event name, its stack frame, and as weight the
 *    row's count): the format's own weight, so a row of 67108864 samples
 *    is one entry.
 * Memory: one open path per thread, and the stack frames; samples are
 * written as they are read.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/funcs.h"
#include "util/json.h"
#include "util/error.h"

/* A sample's span when its period is unknown (0): 1 ms, like 1000 Hz. */
#define DEFAULT_SPAN_NS 1000000ull

static void json_us(struct ms_json *j, uint64_t ns)
{
	if (j->need_comma)
		fputc(',', j->out);
	fprintf(j->out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
	j->need_comma = true;
}

static void meta(struct ms_json *j, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, what);
	ms_json_key(j, "ph");
	ms_json_string(j, "M");
	ms_json_key(j, "pid");
	ms_json_uint(j, pid);
	ms_json_key(j, "tid");
	ms_json_uint(j, tid);
	ms_json_key(j, "args");
	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, name);
	ms_json_object_end(j);
	ms_json_object_end(j);
}

static void write_metadata(struct ms_json *j, const struct ms_capture *cap)
{
	const char *command = ms_capture_info_text(cap, "command");
	char buf[64];

	for (uint32_t i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];
		const char *name = t->name ? cap->strings[t->name] : NULL;

		/* threads are sorted by (pid, tid): the first of each pid names it */
		if (i == 0 || cap->threads[i - 1].pid != t->pid) {
			const char *pname = NULL;

			for (uint32_t k = i; k < cap->n_threads && cap->threads[k].pid == t->pid; k++)
				if (cap->threads[k].tid == t->pid && cap->threads[k].name)
					pname = cap->strings[cap->threads[k].name];
			if (!pname)
				pname = command && *command ? command : name;
			if (!pname) {
				snprintf(buf, sizeof(buf), "process %" PRIu32, t->pid);
				pname = buf;
			}
			meta(j, "process_name", t->pid, t->pid, pname);
		}
		if (!name) {
			snprintf(buf, sizeof(buf), "thread %" PRIu32, t->tid);
			name = buf;
		}
		meta(j, "thread_name", t->pid, t->tid, name);
	}
}

/* ---- complete events ---- */

struct open_path {
	uint32_t *funcs;
	uint64_t *start;
	uint32_t depth, alloc;
	uint64_t end;		/* when the last sample's span ends */
};

struct cx {
	struct ms_json *j;
	const struct ms_capture *cap;
	struct ms_funcs funcs;
};

static void complete_event(struct cx *c, uint32_t thread, uint32_t func, uint64_t start,
			   uint64_t end)
{
	const struct ms_func *fn = &c->funcs.funcs[func];
	const struct ms_cap_thread *t = &c->cap->threads[thread];
	struct ms_json *j = c->j;

	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, fn->label);
	ms_json_key(j, "cat");
	ms_json_string(j, fn->module_label);
	ms_json_key(j, "ph");
	ms_json_string(j, "X");
	ms_json_key(j, "ts");
	json_us(j, start);
	ms_json_key(j, "dur");
	json_us(j, end - start);
	ms_json_key(j, "pid");
	ms_json_uint(j, t->pid);
	ms_json_key(j, "tid");
	ms_json_uint(j, t->tid);
	ms_json_object_end(j);
}

/*
 * Close thread's open frames down to depth keep, at time end: outermost
 * first, since where a caller and its callee share start and end, viewers
 * (speedscope, Chrome's trace engine) take the event written first for the
 * caller, and a leaf written first became the root of the drawing.
 */
static void close_to(struct cx *c, struct open_path *op, uint32_t thread, uint32_t keep,
		     uint64_t end)
{
	for (uint32_t d = keep; d < op->depth; d++)
		complete_event(c, thread, op->funcs[d], op->start[d],
			       end > op->start[d] ? end : op->start[d]);
	if (op->depth > keep)
		op->depth = keep;
}

/* When sample row s's span ends (saturating: a hostile row may claim any period or count). */
static uint64_t span_end(const struct ms_cap_sample *s)
{
	uint64_t span = s->period, end;

	if (!span && __builtin_mul_overflow(s->count, DEFAULT_SPAN_NS, &span))
		return UINT64_MAX;
	return __builtin_add_overflow(s->time, span, &end) ? UINT64_MAX : end;
}

static int write_complete_events(struct cx *c)
{
	const struct ms_capture *cap = c->cap;
	uint32_t max_depth = ms_stacks_max_depth(cap), i, k, n;
	struct open_path *open = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*open));
	uint32_t *nodes = calloc(max_depth ? max_depth : 1, sizeof(*nodes));
	uint32_t *path = calloc(ms_funcs_max_path(cap, &c->funcs), sizeof(*path));
	int ret = -1;

	if (!open || !nodes || !path) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		struct open_path *op = &open[s->thread];
		uint32_t common = 0;

		n = ms_stack_funcs(cap, &c->funcs, s->stack, nodes, path);
		/* a gap since the thread's last sample closes everything */
		if (op->depth && s->time > op->end)
			close_to(c, op, s->thread, 0, op->end);
		while (common < op->depth && common < n && op->funcs[common] == path[common])
			common++;
		close_to(c, op, s->thread, common, s->time);
		if (n > op->alloc) {
			uint32_t *f = reallocarray(op->funcs, n, sizeof(*f));
			uint64_t *st;

			if (f)
				op->funcs = f;
			st = f ? reallocarray(op->start, n, sizeof(*st)) : NULL;
			if (!st) {
				ms_error("out of memory");
				goto out;
			}
			op->start = st;
			op->alloc = n;
		}
		for (k = common; k < n; k++) {
			op->funcs[k] = path[k];
			op->start[k] = s->time;
		}
		op->depth = n;
		op->end = span_end(s);
	}
	for (i = 0; i < cap->n_threads; i++)
		close_to(c, &open[i], i, 0, open[i].end);
	ret = 0;
out:
	if (open)
		for (i = 0; i < cap->n_threads; i++) {
			free(open[i].funcs);
			free(open[i].start);
		}
	free(open);
	free(nodes);
	free(path);
	return ret;
}

/* ---- stack frames and samples ---- */

static int write_samples_form(struct cx *c)
{
	const struct ms_capture *cap = c->cap;
	struct ms_json *j = c->j;
	struct ms_pairmap nodes = MS_PAIRMAP_INIT;
	uint32_t *sf = calloc(cap->n_stacks ? cap->n_stacks : 1, sizeof(*sf));
	uint32_t no_frames = MS_NONE, i;
	const char *event = ms_capture_info_text(cap, "event");
	char id[16];
	int ret = -1;

	if (!sf) {
		ms_error("out of memory");
		goto out;
	}
	/* parents come first in the stacks table, so their node exists */
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *st = &cap->stacks[i];
		uint32_t node = st->parent == MS_NONE ? MS_NONE : sf[st->parent];

		/* a frame with an inline chain is a path of several functions */
		for (uint32_t k = c->funcs.chain_start[st->frame];
		     k < c->funcs.chain_start[st->frame + 1]; k++)
			if ((node = ms_pairmap_get(&nodes, node, c->funcs.chain[k], NULL)) == MS_NONE)
				goto out;
		sf[i] = node;
	}
	for (i = 0; i < cap->n_samples && no_frames == MS_NONE; i++)
		if (cap->samples[i].stack == MS_NONE)
			no_frames = nodes.n;
	ms_json_key(j, "stackFrames");
	ms_json_object_begin(j);
	for (i = 0; i < nodes.n; i++) {
		const struct ms_func *fn = &c->funcs.funcs[nodes.keys[i][1]];

		snprintf(id, sizeof(id), "%" PRIu32, i + 1);
		ms_json_key(j, id);
		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, fn->label);
		ms_json_key(j, "category");
		ms_json_string(j, fn->module_label);
		if (nodes.keys[i][0] != MS_NONE) {
			snprintf(id, sizeof(id), "%" PRIu32, nodes.keys[i][0] + 1);
			ms_json_key(j, "parent");
			ms_json_string(j, id);
		}
		ms_json_object_end(j);
	}
	if (no_frames != MS_NONE) {
		snprintf(id, sizeof(id), "%" PRIu32, no_frames + 1);
		ms_json_key(j, id);
		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, "[no frames]");
		ms_json_key(j, "category");
		ms_json_string(j, "[unknown]");
		ms_json_object_end(j);
	}
	ms_json_object_end(j);
	ms_json_key(j, "samples");
	ms_json_array_begin(j);
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		ms_json_object_begin(j);
		ms_json_key(j, "cpu");
		ms_json_uint(j, s->cpu);
		ms_json_key(j, "pid");
		ms_json_uint(j, cap->threads[s->thread].pid);
		ms_json_key(j, "tid");
		ms_json_uint(j, cap->threads[s->thread].tid);
		ms_json_key(j, "ts");
		json_us(j, s->time);
		ms_json_key(j, "name");
		ms_json_string(j, event ? event : "samples");
		ms_json_key(j, "sf");
		snprintf(id, sizeof(id), "%" PRIu32,
			 (s->stack == MS_NONE ? no_frames : sf[s->stack]) + 1);
		ms_json_string(j, id);
		ms_json_key(j, "weight");
		ms_json_uint(j, s->count);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	ret = 0;
out:
	ms_pairmap_release(&nodes);
	free(sf);
	return ret;
}

int ms_chrome_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct ms_json j;
	struct cx c;
	const char *command = ms_capture_info_text(cap, "command");
	bool samples = o && o->chrome_form == MS_CHROME_SAMPLES;
	int ret = -1;

	memset(&c, 0, sizeof(c));
	c.j = &j;
	c.cap = cap;
	if (ms_funcs_build(&c.funcs, cap) < 0)
		return -1;
	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "traceEvents");
	ms_json_array_begin(&j);
	write_metadata(&j, cap);
	if (!samples && write_complete_events(&c) < 0)
		goto out;
	ms_json_array_end(&j);
	ms_json_key(&j, "displayTimeUnit");
	ms_json_string(&j, "ns");
	ms_json_key(&j, "otherData");
	ms_json_object_begin(&j);
	if (o && o->producer) {
		ms_json_key(&j, "exporter");
		ms_json_string(&j, o->producer);
	}
	if (command) {
		ms_json_key(&j, "command");
		ms_json_string(&j, command);
	}
	ms_json_object_end(&j);
	if (samples && write_samples_form(&c) < 0)
		goto out;
	ms_json_object_end(&j);
	fputc('\n', out);
	ret = 0;
out:
	ms_funcs_release(&c.funcs);
	return ret;
}
