/*
 * The samples form of the Chrome export: "stackFrames" holds one entry
 * per unique path of codes (its parent the path one shorter) and
 * "samples" one entry per sample row (cpu, pid, tid, ts, the event name,
 * its stack frame, and as weight the row's count): the format's own
 * weight, so a row of 67108864 samples is one entry.
 *
 * The node of each (capture stack, cut) a sample uses is made once,
 * outermost first, in a pass before the writing: "stackFrames" comes
 * before "samples".
 */
#include "config.h"

#include "formats/chrome/chrome.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/json.h"
#include "util/progress.h"

#define SF_NAME "{\"name\":"
#define SF_CATEGORY ",\"category\":"
#define SF_PARENT ",\"parent\":\""
#define SM_CPU "{\"cpu\":"
#define SM_PID ",\"pid\":"
#define SM_TID ",\"tid\":"
#define SM_TS ",\"ts\":"
#define SM_NAME ",\"name\":"
#define SM_SF ",\"sf\":\""
#define SM_WEIGHT "\",\"weight\":"

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
static uint32_t frames_node(struct chrome *c, struct frames *fr, uint32_t stack, uint32_t cut)
{
	const struct ms_capture *cap = c->cap;
	uint32_t node = frames_find(fr, stack, cut), n, k;

	if (node != MS_NONE)
		return node;
	if (stack == MS_NONE) {
		node = ms_pairmap_get(&fr->nodes, MS_NONE,
				      cut == MS_NONE ? chrome_code_no_frames(c) : chrome_code_cut(c, cut),
				      NULL);
		return node == MS_NONE || frames_remember(fr, stack, cut, node) < 0 ? MS_NONE : node;
	}
	/* the deepest node on the way that is made already; outermost first after it */
	n = ms_stack_nodes(cap, stack, fr->path);
	for (k = n; k > 0 && (node = frames_find(fr, fr->path[k - 1], cut)) == MS_NONE; k--)
		;
	if (k == 0 && cut != MS_NONE &&
	    (node = ms_pairmap_get(&fr->nodes, MS_NONE, chrome_code_cut(c, cut), NULL)) == MS_NONE)
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

static void write_frames(struct chrome *c, struct ms_outbuf *b, const struct frames *fr)
{
	ms_outbuf_str(b, ",\"stackFrames\":{");
	for (uint32_t i = 0; i < fr->nodes.n; i++) {
		uint32_t code = fr->nodes.keys[i][1], parent = fr->nodes.keys[i][0];

		if (i)
			ms_outbuf_char(b, ',');
		ms_outbuf_char(b, '"');
		ms_outbuf_u64(b, (uint64_t)i + 1);
		ms_outbuf_str(b, "\":" SF_NAME);
		ms_outbuf_write(b, c->text + c->name_off[code], c->name_len[code]);
		ms_outbuf_str(b, SF_CATEGORY);
		ms_outbuf_write(b, c->text + c->cat_off[code], c->cat_len[code]);
		if (parent != MS_NONE) {
			ms_outbuf_str(b, SF_PARENT);
			ms_outbuf_u64(b, (uint64_t)parent + 1);
			ms_outbuf_char(b, '"');
		}
		ms_outbuf_char(b, '}');
	}
	ms_outbuf_char(b, '}');
}

/* The quoted event name every sample carries, into a malloc'd string; NULL after a message. */
static char *event_name(const struct ms_capture *cap)
{
	const char *event = ms_capture_info_text(cap, "event");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		ms_error("out of memory");
		return NULL;
	}
	ms_json_quote(f, event ? event : "samples");
	if (fclose(f)) {
		ms_error("out of memory");
		free(buf);
		return NULL;
	}
	return buf;
}

int chrome_samples_write(struct chrome *c, struct ms_outbuf *b, const char *label)
{
	const struct ms_capture *cap = c->cap;
	struct frames fr = { MS_PAIRMAP_INIT, MS_PAIRMAP_INIT, NULL, 0, NULL };
	uint32_t max_depth = ms_stacks_max_depth(cap), i;
	char *event = event_name(cap);
	struct ms_progress progress;
	int ret = -1;

	ms_progress_start(&progress, label, 2 * (uint64_t)cap->n_samples);
	fr.path = calloc((size_t)max_depth + 1, sizeof(*fr.path));
	if (!fr.path || !event) {
		ms_error("out of memory");
		goto out;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		ms_progress_update(&progress, i);
		if (frames_node(c, &fr, s->stack, ms_cuts_id(&c->cuts, s->end)) == MS_NONE)
			goto out;
	}
	write_frames(c, b, &fr);
	ms_outbuf_str(b, ",\"samples\":[");
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		const struct ms_cap_thread *t = &cap->threads[s->thread];

		ms_progress_update(&progress, (uint64_t)cap->n_samples + i);
		if (i)
			ms_outbuf_char(b, ',');
		ms_outbuf_str(b, SM_CPU);
		ms_outbuf_u64(b, s->cpu);
		ms_outbuf_str(b, SM_PID);
		ms_outbuf_u64(b, t->pid);
		ms_outbuf_str(b, SM_TID);
		ms_outbuf_u64(b, t->tid);
		ms_outbuf_str(b, SM_TS);
		chrome_us(b, s->time);
		ms_outbuf_str(b, SM_NAME);
		ms_outbuf_str(b, event);
		ms_outbuf_str(b, SM_SF);
		ms_outbuf_u64(b, (uint64_t)frames_find(&fr, s->stack, ms_cuts_id(&c->cuts, s->end)) + 1);
		ms_outbuf_str(b, SM_WEIGHT);
		ms_outbuf_u64(b, s->count);
		ms_outbuf_char(b, '}');
	}
	ms_outbuf_char(b, ']');
	ret = 0;
out:
	ms_progress_finish(&progress);
	ms_pairmap_release(&fr.nodes);
	ms_pairmap_release(&fr.memo);
	free(fr.memo_node);
	free(fr.path);
	free(event);
	return ret;
}

/*
 * Nodes: at most one per function of each stack node's frame for each cut
 * and for none, and one per cut and "[no frames]" alone; each at most its
 * text, ids and parent. Samples: each at most the widest numbers.
 */
uint64_t chrome_samples_bound(const struct chrome *c)
{
	const struct ms_capture *cap = c->cap;
	/* ,"ID":{"name":N,"category":C,"parent":"ID"} */
	uint64_t per_node = 7 + strlen(SF_NAME) + strlen(SF_CATEGORY) + strlen(SF_PARENT);
	uint64_t tree = 0, roots = 0, n_nodes = 1 + c->cuts.n, id_digits, per_sample, total;
	uint32_t cpu_max = 0, pid_max = 0, tid_max = 0, i;
	uint64_t weight_max = 0;
	char *event = event_name(cap);

	if (!event)
		return UINT64_MAX;
	for (i = 0; i < cap->n_stacks; i++) {
		uint32_t frame = cap->stacks[i].frame;

		for (uint32_t k = c->funcs.chain_start[frame]; k < c->funcs.chain_start[frame + 1]; k++) {
			uint32_t code = c->funcs.chain[k];

			tree = chrome_add(tree, c->name_len[code] + c->cat_len[code]);
			n_nodes = chrome_add(n_nodes, 1 + c->cuts.n);
		}
	}
	for (i = 0; i < c->cuts.n; i++)
		roots += c->name_len[chrome_code_cut(c, i)] + c->cat_len[chrome_code_cut(c, i)];
	roots += c->name_len[chrome_code_no_frames(c)] + c->cat_len[chrome_code_no_frames(c)];
	id_digits = ms_u64_digits(n_nodes);
	per_node += 2 * id_digits;
	total = chrome_add(chrome_mul(tree, 1 + c->cuts.n), roots);
	total = chrome_add(total, chrome_mul(n_nodes, per_node));
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		if (s->cpu > cpu_max)
			cpu_max = s->cpu;
		if (s->count > weight_max)
			weight_max = s->count;
	}
	for (i = 0; i < cap->n_threads; i++) {
		if (cap->threads[i].pid > pid_max)
			pid_max = cap->threads[i].pid;
		if (cap->threads[i].tid > tid_max)
			tid_max = cap->threads[i].tid;
	}
	per_sample = 1 + strlen(SM_CPU) + ms_u64_digits(cpu_max) + strlen(SM_PID) +
		     ms_u64_digits(pid_max) + strlen(SM_TID) + ms_u64_digits(tid_max) + strlen(SM_TS) +
		     c->us_digits + strlen(SM_NAME) + strlen(event) + strlen(SM_SF) + id_digits +
		     strlen(SM_WEIGHT) + ms_u64_digits(weight_max) + 1;
	free(event);
	total = chrome_add(total, chrome_mul(cap->n_samples, per_sample));
	return chrome_add(total, 64);	/* the members' names and brackets */
}
