/*
 * The events form of the Chrome export: each thread's samples become "X"
 * (complete) events, one per function per run of samples that share the
 * path to it, nested as the calls were: a flame chart on the thread's time
 * line. A frame ends at the next sample that leaves it, or one span after
 * the thread's last sample before a gap. A sample row's span is its period
 * (the sum of its samples'), or when that is 0 its count of
 * CHROME_DEFAULT_SPAN_NS: a row that stands for many samples is one longer
 * span, never that many events.
 *
 * Times are whole microseconds, each start and end rounded to the nearest:
 * viewers compute an event's end as ts + dur in floating point, and with
 * decimals ("ts":1.898,"dur":2999.871) frames that end together ended a
 * rounding apart, which made speedscope leave them open and nest every
 * later stack inside them. Integers add exactly.
 *
 * Speed: a trace of 2 million samples is gigabytes, so each function's
 * text up to "ts" and each thread's from "pid" on is made once; an event
 * is then a few copies and two numbers into the output block. A sample
 * with the stack of its thread's previous one (a hot loop) costs no walk
 * of its stack at all.
 */
#include "config.h"

#include "formats/chrome/chrome.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/progress.h"

#define EV_HEAD "{\"name\":"
#define EV_CAT ",\"cat\":"
#define EV_TS ",\"ph\":\"X\",\"ts\":"
#define EV_DUR ",\"dur\":"
#define EV_PID ",\"pid\":"
#define EV_TID ",\"tid\":"

/* A thread's open frames, and the path of its last sample. */
struct open_path {
	uint32_t *codes;	/* the last sample's path, outermost first */
	uint64_t *start;	/* when each open one began */
	uint32_t depth;		/* how many of codes are open */
	uint32_t len;		/* the last sample's path length */
	uint32_t alloc;
	uint32_t stack, cut;	/* the last sample's, when len or have */
	bool have;
	uint64_t end;		/* when the last sample's span ends */
};

struct ev {
	struct chrome *c;
	struct ms_outbuf *b;
	bool comma;
	/* per code: its text up to the time; per thread: from "pid" to the end */
	char *text;
	uint64_t *code_off, *thread_off;
	uint32_t *code_len, *thread_len;
};

static uint64_t code_text_len(const struct chrome *c, uint32_t code)
{
	return strlen(EV_HEAD) + c->name_len[code] + strlen(EV_CAT) + c->cat_len[code] +
	       strlen(EV_TS);
}

static uint64_t thread_text_len(const struct ms_cap_thread *t)
{
	return strlen(EV_PID) + ms_u64_digits(t->pid) + strlen(EV_TID) + ms_u64_digits(t->tid) + 1;
}

/* Each code's and each thread's text, in one block. */
static int ev_init(struct ev *e, struct chrome *c, struct ms_outbuf *b, bool comma)
{
	const struct ms_capture *cap = c->cap;
	uint64_t size = 0;
	uint32_t i;
	char *p;

	memset(e, 0, sizeof(*e));
	e->c = c;
	e->b = b;
	e->comma = comma;
	e->code_off = calloc(c->n_codes ? c->n_codes : 1, sizeof(*e->code_off));
	e->code_len = calloc(c->n_codes ? c->n_codes : 1, sizeof(*e->code_len));
	e->thread_off = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*e->thread_off));
	e->thread_len = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*e->thread_len));
	if (!e->code_off || !e->code_len || !e->thread_off || !e->thread_len)
		return ms_error("out of memory");
	for (i = 0; i < c->n_codes; i++)
		size += code_text_len(c, i);
	for (i = 0; i < cap->n_threads; i++)
		size += thread_text_len(&cap->threads[i]);
	e->text = malloc(size + 1);	/* snprintf's NUL after the last */
	if (!e->text)
		return ms_error("out of memory");
	p = e->text;
	for (i = 0; i < c->n_codes; i++) {
		e->code_off[i] = (uint64_t)(p - e->text);
		memcpy(p, EV_HEAD, strlen(EV_HEAD));
		p += strlen(EV_HEAD);
		memcpy(p, c->text + c->name_off[i], c->name_len[i]);
		p += c->name_len[i];
		memcpy(p, EV_CAT, strlen(EV_CAT));
		p += strlen(EV_CAT);
		memcpy(p, c->text + c->cat_off[i], c->cat_len[i]);
		p += c->cat_len[i];
		memcpy(p, EV_TS, strlen(EV_TS));
		p += strlen(EV_TS);
		e->code_len[i] = (uint32_t)((uint64_t)(p - e->text) - e->code_off[i]);
	}
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];

		e->thread_off[i] = (uint64_t)(p - e->text);
		p += snprintf(p, size - (uint64_t)(p - e->text) + 1,
			      EV_PID "%" PRIu32 EV_TID "%" PRIu32 "}", t->pid, t->tid);
		e->thread_len[i] = (uint32_t)((uint64_t)(p - e->text) - e->thread_off[i]);
	}
	return 0;
}

static void ev_release(struct ev *e)
{
	free(e->text);
	free(e->code_off);
	free(e->code_len);
	free(e->thread_off);
	free(e->thread_len);
}

/* ns to the nearest microsecond; rounding keeps order, so events keep nesting */
static uint64_t whole_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

static void event(struct ev *e, uint32_t thread, uint32_t code, uint64_t start, uint64_t end)
{
	struct ms_outbuf *b = e->b;

	if (e->comma)
		ms_outbuf_char(b, ',');
	e->comma = true;
	ms_outbuf_write(b, e->text + e->code_off[code], e->code_len[code]);
	start = whole_us(start);
	ms_outbuf_u64(b, start);
	ms_outbuf_write(b, EV_DUR, strlen(EV_DUR));
	ms_outbuf_u64(b, whole_us(end) - start);
	ms_outbuf_write(b, e->text + e->thread_off[thread], e->thread_len[thread]);
}

/*
 * Close thread's open frames down to depth keep, at time end: outermost
 * first, since where a caller and its callee share start and end, viewers
 * (speedscope, Chrome's trace engine) take the event written first for the
 * caller, and a leaf written first became the root of the drawing.
 */
static void close_to(struct ev *e, struct open_path *op, uint32_t thread, uint32_t keep,
		     uint64_t end)
{
	for (uint32_t d = keep; d < op->depth; d++)
		event(e, thread, op->codes[d], op->start[d], end > op->start[d] ? end : op->start[d]);
	if (op->depth > keep)
		op->depth = keep;
}

/*
 * The path of sample s, outermost first, into path (room for
 * ms_funcs_max_path() + 1): its cut's code, if cut, then its functions.
 * Returns its length and where it starts. nodes: scratch (capture/funcs.h).
 */
static uint32_t sample_path(struct chrome *c, const struct ms_cap_sample *s, uint32_t cut,
			    uint32_t *nodes, uint32_t *path, uint32_t **start)
{
	uint32_t n = ms_stack_funcs(c->cap, &c->funcs, s->stack, nodes, path + 1);

	if (cut == MS_NONE) {
		*start = path + 1;
		return n;
	}
	path[0] = chrome_code_cut(c, cut);
	*start = path;
	return n + 1;
}

/* Room for n codes on op: 0, or -1 after a message. */
static int reserve(struct open_path *op, uint32_t n)
{
	uint32_t *codes;
	uint64_t *start;

	if (n <= op->alloc)
		return 0;
	codes = reallocarray(op->codes, n, sizeof(*codes));
	if (codes)
		op->codes = codes;
	start = codes ? reallocarray(op->start, n, sizeof(*start)) : NULL;
	if (!start)
		return ms_error("out of memory");
	op->start = start;
	op->alloc = n;
	return 0;
}

int chrome_events_write(struct chrome *c, struct ms_outbuf *b, bool comma, const char *label)
{
	const struct ms_capture *cap = c->cap;
	uint32_t max_depth = ms_stacks_max_depth(cap), i, k, n;
	struct open_path *open = calloc(cap->n_threads ? cap->n_threads : 1, sizeof(*open));
	uint32_t *nodes = calloc(max_depth ? max_depth : 1, sizeof(*nodes));
	uint32_t *path = calloc((size_t)ms_funcs_max_path(cap, &c->funcs) + 1, sizeof(*path));
	struct ms_progress progress;
	struct ev e;
	int ret = -1;

	ms_progress_start(&progress, label, cap->n_samples);
	if (ev_init(&e, c, b, comma) < 0)
		goto out;
	if (!open || !nodes || !path) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		struct open_path *op = &open[s->thread];
		uint32_t cut = ms_cuts_id(&c->cuts, s->end), common = 0, *p = NULL;
		/* the stack of the thread's last sample: its path is op->codes still */
		bool same = op->have && op->stack == s->stack && op->cut == cut;

		ms_progress_update(&progress, i);
		n = same ? op->len : sample_path(c, s, cut, nodes, path, &p);
		/*
		 * A gap since the thread's last sample closes everything; one
		 * shorter than the rounding is none, or the frames would end and
		 * begin again at one time, which speedscope takes for a call
		 * of the first by the second.
		 */
		if (op->depth && whole_us(s->time) > whole_us(op->end))
			close_to(&e, op, s->thread, 0, op->end);
		if (same) {
			common = op->depth;
		} else {
			while (common < op->depth && common < n && op->codes[common] == p[common])
				common++;
			close_to(&e, op, s->thread, common, s->time);
			if (reserve(op, n) < 0)
				goto out;
			memcpy(op->codes + common, p + common, (n - common) * sizeof(*p));
		}
		for (k = common; k < n; k++)
			op->start[k] = s->time;
		op->depth = op->len = n;
		op->stack = s->stack;
		op->cut = cut;
		op->have = true;
		op->end = chrome_span_end(s);
	}
	for (i = 0; i < cap->n_threads; i++)
		close_to(&e, &open[i], i, 0, open[i].end);
	ret = 0;
out:
	ms_progress_finish(&progress);
	if (open)
		for (i = 0; i < cap->n_threads; i++) {
			free(open[i].codes);
			free(open[i].start);
		}
	ev_release(&e);
	free(open);
	free(nodes);
	free(path);
	return ret;
}

/*
 * Each sample opens at most one event per entry of its path and every
 * event is written once: the sum over samples of what all the events of
 * their paths would take bounds the events' bytes. Per stack node, that of
 * its path is its parent's plus its own frame's functions'.
 */
uint64_t chrome_events_bound(const struct chrome *c)
{
	const struct ms_capture *cap = c->cap;
	uint64_t fixed = 1 + 2 * (uint64_t)c->us_digits + strlen(EV_DUR), thread_max = 0, total = 0;
	uint64_t cut_max = 0;
	uint64_t *path_bytes = calloc(cap->n_stacks ? cap->n_stacks : 1, sizeof(*path_bytes));
	uint32_t i;

	if (!path_bytes)
		return UINT64_MAX;	/* no room to know: assume the worst */
	for (i = 0; i < cap->n_threads; i++)
		if (thread_text_len(&cap->threads[i]) > thread_max)
			thread_max = thread_text_len(&cap->threads[i]);
	fixed += thread_max;
	for (i = 0; i < c->cuts.n; i++)
		if (code_text_len(c, chrome_code_cut(c, i)) > cut_max)
			cut_max = code_text_len(c, chrome_code_cut(c, i));
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *st = &cap->stacks[i];
		uint64_t bytes = st->parent == MS_NONE ? 0 : path_bytes[st->parent];

		for (uint32_t k = c->funcs.chain_start[st->frame]; k < c->funcs.chain_start[st->frame + 1];
		     k++)
			bytes = chrome_add(bytes, fixed + code_text_len(c, c->funcs.chain[k]));
		path_bytes[i] = bytes;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		if (s->stack != MS_NONE)
			total = chrome_add(total, path_bytes[s->stack]);
		if (ms_stack_end_truncated(s->end))
			total = chrome_add(total, fixed + cut_max);
	}
	free(path_bytes);
	return total;
}
