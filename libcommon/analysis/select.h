/*
 * The selection: a capture seen through a query's filters, keys and unit,
 * as weights per stack node. Every stack view (top, tree, callers,
 * callees, diff) reads it, so they agree on what was selected and how
 * much each sample weighs.
 *
 * Samples fall into classes by how their stack ended: class 0 reached
 * its entry (or its truncated key was ignored); each other class is one
 * truncated key, the synthetic outermost frame of every stack in it.
 * self[c][node] is the weight of the selected samples of class c whose
 * innermost frame is the capture stack node; noframe[c] that of those
 * without frames.
 *
 * In the unit snapshots the rows are the capture's waits instead (thread
 * snapshots): each weighs one, on its task's thread, at its read's time,
 * in the class of a stack that reached its entry (a whole read ends
 * where the runtime says the stack ends); one without a stack (the
 * thread ran no Python) is a snapshot without frames.
 */
#ifndef MS_ANALYSIS_SELECT_H
#define MS_ANALYSIS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/keys.h"
#include "analysis/query.h"
#include "capture/labels.h"
#include "capture/capture.h"

#define MS_SELECT_CLASSES 16

struct ms_select {
	const struct ms_capture *cap;
	const struct ms_query *q;
	struct ms_keys keys;
	enum ms_unit unit;
	uint64_t all;		/* weight of every sample (off-cpu: complete interval) */
	uint64_t selected;	/* weight of the selected samples (intervals) */
	uint64_t selected_samples;	/* how many samples (snapshots: wait rows) were selected */
	uint64_t selected_intervals;	/* off-cpu: how many complete intervals */
	uint32_t n_classes;
	uint32_t class_key[MS_SELECT_CLASSES];	/* MS_NONE for class 0 */
	uint8_t class_of_end[MS_KEYS_ENDS];
	uint64_t *self[MS_SELECT_CLASSES];	/* n_stacks each; NULL: nothing in the class */
	uint64_t noframe[MS_SELECT_CLASSES];
	/*
	 * Per stack node: whether its keys are left out of the path (at
	 * module granularity, a frame in the module of the frame outside it:
	 * runs of frames in one module are one key).
	 */
	bool *merged;
	/*
	 * After ms_select_children(): the children of each stack node, for
	 * walks from the outermost frame in (ms_select_child_lo() and the
	 * rest below). A capture whose nodes come depth by depth, each depth
	 * by parent (as the builder writes them), has each node's children
	 * at consecutive ids: children stays NULL and child_start alone says
	 * where they begin, which saves a table as large as the stacks'.
	 */
	uint32_t *child_start;	/* n_stacks + 2 */
	uint32_t *children;	/* n_stacks, or NULL: the children are ids */
	uint32_t root_lo, root_hi;	/* the roots, when children is NULL */
	/* After ms_select_subtree(): self[c][i] is the weight at i and below. */
	bool subtree;
	/* internal: filters */
	bool *thread_ok;	/* per capture thread */
	bool *module_ok;	/* per capture module */
	bool *focus_path;	/* per stack node: a focused key is on its path */
	uint64_t time_lo, time_hi;	/* absolute, [lo, hi) */
	/* --label: the spans, and the key's and value's string ids (MS_NONE: none in cap) */
	struct ms_labels labels;
	uint32_t label_key, label_value;
};

/*
 * Select cap's samples for q, or its complete off-CPU intervals when q's
 * unit is off-cpu: an interval weighs its duration (the part inside
 * --time's range), at its switch-out stack, in the class of how that
 * stack ended. 0, or -1 after a message.
 */
int ms_select_build(struct ms_select *s, const struct ms_capture *cap, const struct ms_query *q);
void ms_select_release(struct ms_select *s);

/*
 * Whether sample row i passes the filters; *weight its weight in the
 * unit, *cls its class. For views over samples (threads, timeline).
 */
bool ms_select_sample(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls);

/*
 * Whether wait row i passes the filters (unit snapshots); *weight 1, *cls
 * its class. For views over snapshots (threads, timeline).
 */
bool ms_select_wait(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls);
/* The thread row of wait row i: its task's (MS_NONE: the task has none). */
static inline uint32_t ms_wait_thread(const struct ms_capture *cap, uint32_t i)
{
	uint32_t t = cap->waits[i].task;

	return t < cap->n_tasks ? cap->tasks[t].thread : MS_NONE;
}

/*
 * Whether interval row i passes the filters but time and completeness
 * (its thread, cause, the module of its innermost frame, --focus); *cls
 * its class. For views that count incomplete intervals apart.
 */
bool ms_select_interval_passes(const struct ms_select *s, uint32_t i, uint32_t *cls);
/*
 * Whether interval row i is selected: it passes, is complete and has
 * time inside --time's range; *weight that time in ns.
 */
bool ms_select_interval(const struct ms_select *s, uint32_t i, uint64_t *weight, uint32_t *cls);

/* The keys of stack node i, outermost first: *n of them from *first (into keys.chain). */
static inline const uint32_t *ms_select_node_keys(const struct ms_select *s, uint32_t i, uint32_t *n)
{
	uint32_t f = s->cap->stacks[i].frame;

	if (s->merged && s->merged[i]) {
		*n = 0;
		return NULL;
	}
	*n = s->keys.chain_start[f + 1] - s->keys.chain_start[f];
	return &s->keys.chain[s->keys.chain_start[f]];
}

/*
 * The keys of the path of stack node node in class cls, outermost first
 * (the class key first), into path (room for ms_select_max_path()); returns
 * how many. nodes is scratch room for ms_stacks_max_depth() entries.
 * node MS_NONE: the class key alone (or nothing).
 */
uint32_t ms_select_path(const struct ms_select *s, uint32_t cls, uint32_t node,
			uint32_t *nodes, uint32_t *path);
uint32_t ms_select_max_path(const struct ms_select *s);

/* Build child_start and children. 0, or -1 after a message. */
int ms_select_children(struct ms_select *s);
/* Node v's children are ms_select_child(s, k) for k in [lo, hi); v n_stacks: the roots. */
static inline uint32_t ms_select_child_lo(const struct ms_select *s, uint32_t v)
{
	return !s->children && v == s->cap->n_stacks ? s->root_lo : s->child_start[v];
}
static inline uint32_t ms_select_child_hi(const struct ms_select *s, uint32_t v)
{
	return !s->children && v == s->cap->n_stacks ? s->root_hi : s->child_start[v + 1];
}
static inline uint32_t ms_select_child(const struct ms_select *s, uint32_t k)
{
	return s->children ? s->children[k] : k;
}
/*
 * Turn each self[c] into subtree sums in place (a node's own weight is
 * then its sum less its children's).
 */
void ms_select_subtree(struct ms_select *s);

/* The share of the selection w is, in percent. */
double ms_select_percent(const struct ms_select *s, uint64_t w);

#endif
