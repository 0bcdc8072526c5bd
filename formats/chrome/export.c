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
 * A stack cut short starts with its synthetic frame ("[truncated:
 * stack-copy]", internal.h) in both forms: an event of its own, or the
 * root of its stack frames; a sample without frames whose end was cut is
 * that frame alone.
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
	struct ms_cuts cuts;
};

/*
 * Codes of what a frame of either form is: a function's id, then
 * funcs.n + cut for a cut's synthetic frame, then "[no frames]".
 */
#define CUT_CATEGORY "[truncated]"
#define NO_FRAMES_LABEL "[no frames]"
#define NO_FRAMES_CATEGORY "[unknown]"

static uint32_t code_no_frames(const struct cx *c)
{
	return c->funcs.n + MS_CUTS_MAX;
}

static const char *code_label(const struct cx *c, uint32_t code)
{
	if (code < c->funcs.n)
		return c->funcs.funcs[code].label;
	return code == code_no_frames(c) ? NO_FRAMES_LABEL : c->cuts.labels[code - c->funcs.n];
}

static const char *code_category(const struct cx *c, uint32_t code)
{
	if (code < c->funcs.n)
		return c->funcs.funcs[code].module_label;
	return code == code_no_frames(c) ? NO_FRAMES_CATEGORY : CUT_CATEGORY;
}

/*
 * The path of sample s, outermost first, into path (room for
 * ms_funcs_max_path() + 1): its cut's code, if cut, then its functions;
 * returns its length and where it starts. nodes: scratch (capture/funcs.h).
 */
static uint32_t sample_path(struct cx *c, const struct ms_cap_sample *s, uint32_t *nodes,
			    uint32_t *path, uint32_t **start)
{
	uint32_t cut = ms_cuts_id(&c->cuts, s->end);
	uint32_t n = ms_stack_funcs(c->cap, &c->funcs, s->stack, nodes, path + 1);

	if (cut == MS_NONE) {
		*start = path + 1;
		return n;
	}
	path[0] = c->funcs.n + cut;
	*start = path;
	return n + 1;
}

static void complete_event(struct cx *c, uint32_t thread, uint32_t code, uint64_t start,
			   uint64_t end)
{
	const struct ms_cap_thread *t = &c->cap->threads[thread];
	struct ms_json *j = c->j;

	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, code_label(c, code));
	ms_json_key(j, "cat");
	ms_json_string(j, code_category(c, code));
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
	uint32_t *path = calloc((size_t)ms_funcs_max_path(cap, &c->funcs) + 1, sizeof(*path));
	int ret = -1;

	if (!open || !nodes || !path) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		struct open_path *op = &open[s->thread];
		uint32_t common = 0, *p;

		n = sample_path(c, s, nodes, path, &p);
		/* a gap since the thread's last sample closes everything */
		if (op->depth && s->time > op->end)
			close_to(c, op, s->thread, 0, op->end);
		while (common < op->depth && common < n && op->funcs[common] == p[common])
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
			op->funcs[k] = p[k];
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

/*
 * The stack frames: nodes (parent node, code), and the node of each
 * (capture stack, cut) a sample uses, built once, outermost first.
 */
struct frames {
	struct ms_pairmap nodes;	/* (parent node or MS_NONE, code) -> node */
	struct ms_pairmap memo;		/* (stack or MS_NONE, cut or MS_NONE) -> memo row */
	uint32_t *memo_node;		/* per memo row: its node */
	uint32_t alloc_memo;
	uint32_t *path;			/* scratch: ms_stacks_max_depth() + 1 */
};

/* The node of (stack, cut) when made, else MS_NONE. */
static uint32_t frames_find(const struct frames *fr, uint32_t stack, uint32_t cut)
{
	uint32_t r = ms_pairmap_find(&fr->memo, stack, cut);

	return r == MS_NONE ? MS_NONE : fr->memo_node[r];
}

static int frames_remember(struct frames *fr, uint32_t stack, uint32_t cut, uint32_t node)
{
	uint32_t r = ms_pairmap_get(&fr->memo, stack, cut, NULL);

	if (r == MS_NONE || ms_grow(&fr->memo_node, &fr->alloc_memo, r, sizeof(uint32_t)) < 0)
		return -1;
	fr->memo_node[r] = node;
	return 0;
}

/*
 * The node of a sample of stack whose end was cut (or not: MS_NONE), made
 * when new: its cut's root, then each frame's functions under it. Without
 * frames: the cut alone, or "[no frames]". MS_NONE after a message.
 */
static uint32_t frames_node(struct cx *c, struct frames *fr, uint32_t stack, uint32_t cut)
{
	const struct ms_capture *cap = c->cap;
	uint32_t node = frames_find(fr, stack, cut), n, k;

	if (node != MS_NONE)
		return node;
	if (stack == MS_NONE) {
		node = ms_pairmap_get(&fr->nodes, MS_NONE,
				      cut == MS_NONE ? code_no_frames(c) : c->funcs.n + cut, NULL);
		return node == MS_NONE || frames_remember(fr, stack, cut, node) < 0 ? MS_NONE : node;
	}
	/* the deepest node on the way that is made already; outermost first after it */
	n = ms_stack_nodes(cap, stack, fr->path);
	for (k = n; k > 0 && (node = frames_find(fr, fr->path[k - 1], cut)) == MS_NONE; k--)
		;
	if (k == 0 && cut != MS_NONE &&
	    (node = ms_pairmap_get(&fr->nodes, MS_NONE, c->funcs.n + cut, NULL)) == MS_NONE)
		return MS_NONE;
	for (; k < n; k++) {
		uint32_t frame = cap->stacks[fr->path[k]].frame;

		/* a frame with an inline chain is a path of several functions */
		for (uint32_t e = c->funcs.chain_start[frame]; e < c->funcs.chain_start[frame + 1]; e++)
			if ((node = ms_pairmap_get(&fr->nodes, node, c->funcs.chain[e], NULL)) == MS_NONE)
				return MS_NONE;
		if (frames_remember(fr, fr->path[k], cut, node) < 0)
			return MS_NONE;
	}
	return node;
}

static int write_samples_form(struct cx *c)
{
	const struct ms_capture *cap = c->cap;
	struct ms_json *j = c->j;
	struct frames fr = { MS_PAIRMAP_INIT, MS_PAIRMAP_INIT, NULL, 0, NULL };
	uint32_t max_depth = ms_stacks_max_depth(cap), i;
	const char *event = ms_capture_info_text(cap, "event");
	char id[16];
	int ret = -1;

	fr.path = calloc((size_t)max_depth + 1, sizeof(*fr.path));
	if (!fr.path) {
		ms_error("out of memory");
		goto out;
	}
	/* every node first: "stackFrames" comes before "samples" */
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		if (frames_node(c, &fr, s->stack, ms_cuts_id(&c->cuts, s->end)) == MS_NONE)
			goto out;
	}
	ms_json_key(j, "stackFrames");
	ms_json_object_begin(j);
	for (i = 0; i < fr.nodes.n; i++) {
		uint32_t code = fr.nodes.keys[i][1];

		snprintf(id, sizeof(id), "%" PRIu32, i + 1);
		ms_json_key(j, id);
		ms_json_object_begin(j);
		ms_json_key(j, "name");
		ms_json_string(j, code_label(c, code));
		ms_json_key(j, "category");
		ms_json_string(j, code_category(c, code));
		if (fr.nodes.keys[i][0] != MS_NONE) {
			snprintf(id, sizeof(id), "%" PRIu32, fr.nodes.keys[i][0] + 1);
			ms_json_key(j, "parent");
			ms_json_string(j, id);
		}
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
			 frames_find(&fr, s->stack, ms_cuts_id(&c->cuts, s->end)) + 1);
		ms_json_string(j, id);
		ms_json_key(j, "weight");
		ms_json_uint(j, s->count);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	ret = 0;
out:
	ms_pairmap_release(&fr.nodes);
	ms_pairmap_release(&fr.memo);
	free(fr.memo_node);
	free(fr.path);
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
	c.cuts = (struct ms_cuts)MS_CUTS_INIT;
	if (ms_funcs_build(&c.funcs, cap) < 0)
		return -1;
	/* codes past the functions' (code_no_frames()) must stay below MS_NONE */
	if (c.funcs.n >= MS_NONE - MS_CUTS_MAX - 1) {
		ms_error("cannot write a Chrome trace of %" PRIu32 " functions: more than it "
			 "numbers; export pprof instead", c.funcs.n);
		goto out;
	}
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
