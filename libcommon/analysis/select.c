/*
 * The selection: filters applied once per sample row, weights summed per
 * (class, stack node), so views walk stack nodes, never samples.
 */
#include "analysis/select.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/intervals.h"
#include "capture/funcs.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "util/error.h"

static bool thread_selected(const struct ms_query *q, const struct ms_capture *cap,
			    const struct ms_cap_thread *t)
{
	uint32_t i;

	if (!q->n_tids && !q->n_thread_names)
		return true;
	for (i = 0; i < q->n_tids; i++)
		if (q->tids[i] == t->tid)
			return true;
	for (i = 0; i < q->n_thread_names; i++)
		if (!strcmp(q->thread_names[i], cap->strings[t->name]))
			return true;
	return false;
}

static bool module_selected(const struct ms_capture *cap, uint32_t m, const char *want)
{
	return !strcmp(ms_module_basename(cap, m), want) ||
	       !strcmp(cap->strings[cap->modules[m].path], want);
}

/* Filters that need per-row tables: threads, modules, the focus path. */
static int build_filters(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	const struct ms_query *q = s->q;
	uint64_t origin = ms_query_origin(cap);
	uint32_t i, n;

	s->time_lo = 0;
	s->time_hi = UINT64_MAX;
	if (q->has_time_start)
		s->time_lo = origin + q->time_start < origin ? UINT64_MAX : origin + q->time_start;
	if (q->has_time_end)
		s->time_hi = origin + q->time_end < origin ? UINT64_MAX : origin + q->time_end;

	if (q->n_tids || q->n_thread_names) {
		if (!(s->thread_ok = calloc(cap->n_threads + 1, sizeof(bool))))
			return -1;
		for (i = 0; i < cap->n_threads; i++)
			s->thread_ok[i] = thread_selected(q, cap, &cap->threads[i]);
	}
	if (q->label) {
		if (ms_labels_init(&s->labels, cap) < 0)
			return -1;
		s->label_key = ms_capture_find_string(cap, q->label, q->label_key_len);
		s->label_value = ms_capture_find_string(cap, q->label + q->label_key_len + 1,
							strlen(q->label + q->label_key_len + 1));
	}
	if (q->module) {
		if (!(s->module_ok = calloc(cap->n_modules + 1, sizeof(bool))))
			return -1;
		for (i = 0; i < cap->n_modules; i++)
			s->module_ok[i] = module_selected(cap, i, q->module);
	}
	if (s->keys.has_focus && cap->n_stacks) {
		if (!(s->focus_path = calloc(cap->n_stacks, sizeof(bool))))
			return -1;
		for (i = 0; i < cap->n_stacks; i++) {
			uint32_t parent = cap->stacks[i].parent, k;
			const uint32_t *keys = ms_select_node_keys(s, i, &n);

			s->focus_path[i] = parent != MS_NONE && s->focus_path[parent];
			for (k = 0; k < n && !s->focus_path[i]; k++)
				s->focus_path[i] = s->keys.keys[keys[k]].focused;
		}
	}
	return 0;
}

/* At module granularity, a frame in the module of the nearest frame outside it adds no key. */
static int build_merged(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	uint32_t *tail, i;

	if (s->keys.by != MS_BY_MODULE || !cap->n_stacks)
		return 0;
	s->merged = calloc(cap->n_stacks, sizeof(*s->merged));
	tail = malloc(cap->n_stacks * sizeof(*tail));
	if (!s->merged || !tail) {
		free(tail);
		return -1;
	}
	for (i = 0; i < cap->n_stacks; i++) {
		uint32_t f = cap->stacks[i].frame, parent = cap->stacks[i].parent;
		uint32_t up = parent == MS_NONE ? MS_NONE : tail[parent];
		uint32_t n = s->keys.chain_start[f + 1] - s->keys.chain_start[f];

		if (!n) {		/* ignored */
			tail[i] = up;
			continue;
		}
		tail[i] = s->keys.chain[s->keys.chain_start[f]];
		s->merged[i] = tail[i] == up;
	}
	free(tail);
	return 0;
}

/* A sample row's weight in the selection's unit. */
static uint64_t weight_of(const struct ms_select *s, const struct ms_cap_sample *sm)
{
	return s->unit == MS_UNIT_CPU_TIME ? ms_capture_sample_weight(s->cap, sm) : sm->count;
}

/*
 * Whether a row of thread, stack and stack end passes the filters of
 * threads, module and focus, which samples and intervals share; *cls
 * its class.
 */
static bool passes_stack(const struct ms_select *s, uint32_t thread, uint32_t stack,
			 uint32_t end, uint32_t *cls)
{
	const struct ms_capture *cap = s->cap;
	uint32_t c = s->class_of_end[ms_keys_end_slot(end)];

	if (s->thread_ok && (thread >= cap->n_threads || !s->thread_ok[thread]))
		return false;
	if (s->module_ok) {
		uint32_t m;

		if (stack >= cap->n_stacks)
			return false;
		m = cap->frames[cap->stacks[stack].frame].module;
		if (m >= cap->n_modules || !s->module_ok[m])
			return false;
	}
	if (s->keys.has_focus) {
		bool hit = c && s->keys.keys[s->class_key[c]].focused;

		if (!hit && !(stack < cap->n_stacks && s->focus_path[stack]))
			return false;
	}
	*cls = c;
	return true;
}

/* --label: whether thread had the label's value at time. */
static bool label_passes(const struct ms_select *s, uint32_t thread, uint64_t time)
{
	uint32_t sp;

	if (!s->q->label)
		return true;
	if (s->label_key == MS_NONE || s->label_value == MS_NONE || !time ||
	    thread >= s->cap->n_threads)
		return false;
	sp = ms_labels_at(&s->labels, thread, s->label_key, time);
	return sp != MS_NONE && s->cap->label_spans[sp].value == s->label_value;
}

/* Whether sample row sm passes the filters; *cls its class. */
static bool passes(const struct ms_select *s, const struct ms_cap_sample *sm, uint32_t *cls)
{
	if (sm->time < s->time_lo || sm->time >= s->time_hi)
		return false;
	if (!label_passes(s, sm->thread, sm->time))
		return false;
	return passes_stack(s, sm->thread, sm->stack, sm->end, cls);
}

bool ms_select_interval_passes(const struct ms_select *s, uint32_t i, uint32_t *cls)
{
	const struct ms_cap_interval *iv = &s->cap->intervals[i];

	if (s->q->causes && !(s->q->causes & (1u << ms_interval_cause(s->cap, iv))))
		return false;
	if (!label_passes(s, iv->thread, iv->start))
		return false;
	return passes_stack(s, iv->thread, iv->stack, iv->stack_end, cls);
}

bool ms_select_interval(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls)
{
	uint64_t w = ms_interval_clipped(&s->cap->intervals[i], s->time_lo, s->time_hi);

	if (!w || !ms_select_interval_passes(s, i, cls))
		return false;
	*weight = w;
	return true;
}

bool ms_select_wait(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls)
{
	const struct ms_cap_wait *wt = &s->cap->waits[i];
	uint32_t thread = ms_wait_thread(s->cap, i);

	if (wt->time < s->time_lo || wt->time >= s->time_hi)
		return false;
	if (!label_passes(s, thread, wt->time))
		return false;
	/* a whole read ended where its runtime says its stack ends */
	if (!passes_stack(s, thread, wt->stack, MS_END_OUTERMOST, cls))
		return false;
	*weight = 1;
	return true;
}

bool ms_select_sample(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls)
{
	const struct ms_cap_sample *sm = &s->cap->samples[i];

	if (!passes(s, sm, cls))
		return false;
	*weight = weight_of(s, sm);
	return true;
}

/* The off-cpu unit: complete intervals weigh their time at their switch-out stack. */
static int select_intervals(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	uint32_t i;

	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		uint64_t w;
		uint32_t c;

		s->all = ms_weight_add(s->all, ms_interval_clipped(iv, 0, UINT64_MAX));
		if (!ms_select_interval(s, i, &w, &c))
			continue;
		s->selected = ms_weight_add(s->selected, w);
		s->selected_intervals++;
		if (iv->stack >= cap->n_stacks) {
			s->noframe[c] = ms_weight_add(s->noframe[c], w);
			continue;
		}
		if (!s->self[c] && !(s->self[c] = calloc(cap->n_stacks, sizeof(uint64_t))))
			return -1;
		s->self[c][iv->stack] = ms_weight_add(s->self[c][iv->stack], w);
	}
	return 0;
}

/* The snapshots unit: each whole read weighs one at its stack. */
static int select_waits(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	uint32_t i;

	s->all = cap->n_waits;
	for (i = 0; i < cap->n_waits; i++) {
		uint32_t stack = cap->waits[i].stack, c;
		uint64_t w;

		if (!ms_select_wait(s, i, &w, &c))
			continue;
		s->selected++;
		s->selected_samples++;
		if (stack >= cap->n_stacks) {
			s->noframe[c]++;
			continue;
		}
		if (!s->self[c] && !(s->self[c] = calloc(cap->n_stacks, sizeof(uint64_t))))
			return -1;
		s->self[c][stack]++;
	}
	return 0;
}

int ms_select_build(struct ms_select *s, const struct ms_capture *cap, const struct ms_query *q)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->q = q;
	s->unit = q->unit;
	if (ms_keys_build(&s->keys, cap, q))
		return -1;

	/* Classes: one per truncated key in use, in order of end reason. */
	s->n_classes = 1;
	s->class_key[0] = MS_NONE;
	for (i = 0; i < MS_KEYS_ENDS; i++) {
		uint32_t key = ms_keys_truncated(&s->keys, i), c;

		s->class_of_end[i] = 0;
		if (key == MS_NONE)
			continue;
		for (c = 1; c < s->n_classes && s->class_key[c] != key; c++)
			;
		if (c == s->n_classes) {
			if (c == MS_SELECT_CLASSES)
				continue;	/* more reasons than ever defined: class 0 */
			s->class_key[s->n_classes++] = key;
		}
		s->class_of_end[i] = (uint8_t)c;
	}
	if (build_merged(s) || build_filters(s))
		goto oom;
	if (s->unit == MS_UNIT_OFF_CPU) {
		if (select_intervals(s))
			goto oom;
		return 0;
	}
	if (s->unit == MS_UNIT_SNAPSHOTS) {
		if (select_waits(s))
			goto oom;
		return 0;
	}

	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *sm = &cap->samples[i];
		uint64_t w = weight_of(s, sm);	/* once: a duty lookup per row under a budget */
		uint32_t c;

		s->all = ms_weight_add(s->all, w);
		if (!passes(s, sm, &c))
			continue;
		s->selected = ms_weight_add(s->selected, w);
		s->selected_samples += sm->count;
		if (sm->stack >= cap->n_stacks) {
			s->noframe[c] = ms_weight_add(s->noframe[c], w);
			continue;
		}
		if (!s->self[c] && !(s->self[c] = calloc(cap->n_stacks, sizeof(uint64_t))))
			goto oom;
		s->self[c][sm->stack] = ms_weight_add(s->self[c][sm->stack], w);
	}
	return 0;
oom:
	ms_error("out of memory selecting the samples of %" PRIu32 " stacks", cap->n_stacks);
	ms_select_release(s);
	return -1;
}

void ms_select_release(struct ms_select *s)
{
	uint32_t c;

	ms_keys_release(&s->keys);
	for (c = 0; c < MS_SELECT_CLASSES; c++)
		free(s->self[c]);
	free(s->merged);
	free(s->thread_ok);
	free(s->module_ok);
	free(s->focus_path);
	ms_labels_release(&s->labels);
	free(s->child_start);
	free(s->children);
	memset(s, 0, sizeof(*s));
}

/* Whether every node's children are at consecutive ids in parent order (roots, then by parent). */
static bool siblings_in_order(const struct ms_capture *cap)
{
	uint32_t i, last = 0;
	bool roots = true;

	for (i = 0; i < cap->n_stacks; i++) {
		uint32_t p = cap->stacks[i].parent;

		if (p == MS_NONE) {
			if (!roots)
				return false;
			continue;
		}
		if (roots) {
			roots = false;
			last = p;
		}
		if (p < last)
			return false;
		last = p;
	}
	return true;
}

int ms_select_children(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	uint32_t n = cap->n_stacks, i, *fill;

	if (s->child_start)
		return 0;
	s->child_start = calloc((size_t)n + 2, sizeof(*s->child_start));
	if (!s->child_start)
		return ms_error("out of memory listing the children of %" PRIu32 " stacks", n);
	if (siblings_in_order(cap)) {
		/* child_start[p]: the first child's id; the roots are 0 .. root_hi */
		for (i = 0; i < n && cap->stacks[i].parent == MS_NONE; i++)
			;
		s->root_lo = 0;
		s->root_hi = i;
		for (; i < n; i++)
			s->child_start[cap->stacks[i].parent + 1]++;
		s->child_start[0] = s->root_hi;
		for (i = 0; i < n; i++)
			s->child_start[i + 1] += s->child_start[i];
		return 0;
	}
	s->children = malloc(((size_t)n + 1) * sizeof(*s->children));
	if (!s->children)
		return ms_error("out of memory listing the children of %" PRIu32 " stacks", n);
	/* counting sort by parent: child_start[p + 1] counts, then prefix sums */
	for (i = 0; i < n; i++) {
		uint32_t p = cap->stacks[i].parent;

		s->child_start[(p == MS_NONE ? n : p) + 1]++;
	}
	for (i = 0; i <= n; i++)
		s->child_start[i + 1] += s->child_start[i];
	/* fill from the back so each list stays in node order */
	fill = s->child_start + 1;
	for (i = n; i-- > 0;) {
		uint32_t p = cap->stacks[i].parent;

		p = p == MS_NONE ? n : p;
		s->children[--fill[p]] = i;
	}
	/* fill[p] ran down to p's start: child_start[p + 1] holds it; shift back */
	for (i = 0; i <= n; i++)
		s->child_start[i] = s->child_start[i + 1];
	s->child_start[n + 1] = n;
	return 0;
}

void ms_select_subtree(struct ms_select *s)
{
	const struct ms_capture *cap = s->cap;
	uint32_t c, i;

	if (s->subtree)
		return;
	for (c = 0; c < s->n_classes; c++) {
		uint64_t *w = s->self[c];

		if (!w)
			continue;
		for (i = cap->n_stacks; i-- > 0;)
			if (w[i] && cap->stacks[i].parent != MS_NONE)
				w[cap->stacks[i].parent] = ms_weight_add(w[cap->stacks[i].parent], w[i]);
	}
	s->subtree = true;
}

uint32_t ms_select_max_path(const struct ms_select *s)
{
	uint32_t n = ms_funcs_max_path(s->cap, &s->keys.funcs);

	return n + 1;
}

uint32_t ms_select_path(const struct ms_select *s, uint32_t cls, uint32_t node,
			uint32_t *nodes, uint32_t *path)
{
	uint32_t n = 0, depth, d;

	if (s->class_key[cls] != MS_NONE)
		path[n++] = s->class_key[cls];
	depth = ms_stack_nodes(s->cap, node, nodes);
	for (d = 0; d < depth; d++) {
		uint32_t k, nk;
		const uint32_t *keys = ms_select_node_keys(s, nodes[d], &nk);

		for (k = 0; k < nk; k++)
			path[n++] = keys[k];
	}
	return n;
}

double ms_select_percent(const struct ms_select *s, uint64_t w)
{
	return ms_percent(w, s->selected);
}
