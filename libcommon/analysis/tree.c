/*
 * tree, callers, callees: trees of keys, paths merged by key.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/present.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/json.h"
#include "util/pairmap.h"
#include "util/text.h"

struct builder {
	struct ms_tree *t;
	struct ms_pairmap map;	/* (parent node, key) -> node, in order of creation */
};

/* The node (parent, key), made when new; MS_NONE after a message. */
static uint32_t child(struct builder *b, uint32_t parent, uint32_t key)
{
	struct ms_tree *t = b->t;
	bool added;
	uint32_t id = ms_pairmap_get(&b->map, parent, key, &added);

	if (id == UINT32_MAX || !added)
		return id == UINT32_MAX ? MS_NONE : id;
	if (MS_GROW(t->nodes, id, t->alloc))
		return MS_NONE;
	t->nodes[id] = (struct ms_tree_node){
		.key = key,
		.parent = parent,
		.depth = parent == MS_NONE ? 0 : t->nodes[parent].depth + 1,
	};
	t->n = id + 1;
	return id;
}

static int cmp_child(const void *pa, const void *pb, void *data)
{
	const struct ms_tree *t = data;
	const struct ms_tree_node *a = &t->nodes[*(const uint32_t *)pa];
	const struct ms_tree_node *b = &t->nodes[*(const uint32_t *)pb];

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return ms_key_cmp(&t->sel.keys, a->key, b->key);
}

/* Totals from selves (children come after their parent), then sorted children lists. */
static int finish(struct ms_tree *t)
{
	uint32_t i, n_children = 0;

	for (i = 0; i < t->n; i++)
		t->nodes[i].total = t->nodes[i].self;
	for (i = t->n; i-- > 1;)
		t->nodes[t->nodes[i].parent].total =
			ms_weight_add(t->nodes[t->nodes[i].parent].total, t->nodes[i].total);
	/* Nodes no selected sample reached are left out of every children list. */
	if (t->n > 1 && !(t->children = malloc((t->n - 1) * sizeof(*t->children))))
		return ms_error("out of memory sorting a call tree of %" PRIu32 " nodes", t->n);
	for (i = 1; i < t->n; i++)
		if (t->nodes[i].total)
			t->children[n_children++] = i;
	if (n_children)
		qsort_r(t->children, n_children, sizeof(*t->children), cmp_child, t);
	for (i = n_children; i-- > 0;) {
		struct ms_tree_node *p = &t->nodes[t->nodes[t->children[i]].parent];

		p->first_child = i;
		p->n_children++;
	}
	return 0;
}

static int start(struct builder *b, struct ms_tree *t, const struct ms_capture *cap,
		 const struct ms_query *q)
{
	memset(t, 0, sizeof(*t));
	memset(b, 0, sizeof(*b));
	b->t = t;
	b->map = (struct ms_pairmap)MS_PAIRMAP_INIT;
	t->root_label = "[root]";
	if (ms_select_build(&t->sel, cap, q))
		return -1;
	if (child(b, MS_NONE, MS_NONE) == MS_NONE)	/* node 0, the root */
		return -1;
	return 0;
}

/*
 * The call tree, built from the outermost key in and pruned as it grows:
 * a tree node is a run of cursors, (stack node, position in its key
 * chain), that share a key; expanding it gathers the cursors one key
 * further in (the next position, or the first key of each child stack
 * node), sorts them by key and makes one child per key whose weight is
 * shown. Nothing under a hidden node is looked at, so a report's tree
 * (nodes of 0.5 % and more) costs little more than the subtree sums,
 * however many stacks the capture has; a whole tree costs a sort per
 * level. Stack nodes without keys (ignored frames, module runs) are
 * looked through.
 */
struct cursor {
	uint32_t key, node, pos;
};

struct grower {
	struct ms_tree *t;
	const struct ms_query *q;
	struct cursor *cur;	/* the arena: blocks of cursors, stack-like */
	uint32_t n_cur, alloc_cur;
	uint32_t alloc_children, n_children;
	/*
	 * Pending expansions: node, class, cursor range (the node's own, or
	 * when kids, already its children's), and the arena mark to return to.
	 */
	struct pending {
		uint32_t node, cls, lo, hi, mark;
		bool kids;
	} *work;
	uint32_t n_work, alloc_work;
};

static int cmp_cursor(const void *pa, const void *pb)
{
	const struct cursor *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int push_cursor(struct grower *g, uint32_t key, uint32_t node, uint32_t pos)
{
	if (MS_GROW(g->cur, g->n_cur, g->alloc_cur))
		return -1;
	g->cur[g->n_cur++] = (struct cursor){ key, node, pos };
	return 0;
}

/* A stack node's own weight: its subtree's less its children's. */
static uint64_t own_weight(const struct ms_select *s, const uint64_t *sub, uint32_t n)
{
	uint64_t own = sub[n];
	uint32_t i;

	for (i = ms_select_child_lo(s, n); i < ms_select_child_hi(s, n); i++)
		own = own > sub[ms_select_child(s, i)] ? own - sub[ms_select_child(s, i)] : 0;
	return own;
}

/* The first cursor of stack node m, or, when it has no keys, its own weight to *self and its children's cursors. */
static int enter(struct grower *g, const uint64_t *sub, uint32_t m, uint64_t *self)
{
	const struct ms_select *s = &g->t->sel;
	uint32_t nk, i;
	const uint32_t *keys;

	if (!sub[m])
		return 0;
	keys = ms_select_node_keys(s, m, &nk);
	if (nk)
		return push_cursor(g, keys[0], m, 0);
	*self = ms_weight_add(*self, own_weight(s, sub, m));
	for (i = ms_select_child_lo(s, m); i < ms_select_child_hi(s, m); i++)
		if (enter(g, sub, ms_select_child(s, i), self))
			return -1;
	return 0;
}

static bool weight_shown(const struct ms_tree *t, uint64_t w, double hide_below)
{
	return w && ms_select_percent(&t->sel, w) >= hide_below;
}

static int push_work(struct grower *g, uint32_t node, uint32_t cls, uint32_t lo, uint32_t hi,
		     uint32_t mark, bool kids)
{
	if (MS_GROW(g->work, g->n_work, g->alloc_work))
		return -1;
	g->work[g->n_work++] = (struct pending){ node, cls, lo, hi, mark, kids };
	return 0;
}

static int new_node(struct grower *g, uint32_t parent, uint32_t key, uint64_t total)
{
	struct ms_tree *t = g->t;

	if (MS_GROW(t->nodes, t->n, t->alloc))
		return -1;
	t->nodes[t->n] = (struct ms_tree_node){
		.key = key,
		.parent = parent,
		.depth = parent == MS_NONE ? 0 : t->nodes[parent].depth + 1,
		.total = total,
	};
	return (int)t->n++;
}

static int cmp_node(const void *pa, const void *pb, void *data)
{
	const struct ms_tree *t = data;
	const struct ms_tree_node *a = &t->nodes[*(const uint32_t *)pa];
	const struct ms_tree_node *b = &t->nodes[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return ms_key_cmp(&t->sel.keys, a->key, b->key);
}

/*
 * The children of node d: one per run of equal keys in cursors lo..hi
 * (sorted here), plus the extra nodes already made (the root's classes),
 * sorted and listed; each is queued with its run, the last queued first.
 */
static int add_children(struct grower *g, uint32_t d, uint32_t cls, uint32_t lo, uint32_t hi,
			uint32_t mark, const uint32_t *extra, const uint32_t *extra_cls,
			const uint32_t (*extra_run)[2], uint32_t n_extra)
{
	struct ms_tree *t = g->t;
	const uint64_t *sub = t->sel.self[cls];
	uint32_t first = t->n, i, j, k, n_kids;

	/* queued first, so it runs last: the arena from mark on is freed once every child is done */
	if (push_work(g, MS_NONE, 0, 0, 0, mark, false))
		return -1;
	if (hi > lo)
		qsort(g->cur + lo, hi - lo, sizeof(*g->cur), cmp_cursor);
	for (i = lo; i < hi; i = j) {
		uint64_t total = 0;

		for (j = i; j < hi && g->cur[j].key == g->cur[i].key; j++)
			total = ms_weight_add(total, sub[g->cur[j].node]);
		if (!weight_shown(t, total, g->q->hide_below))
			continue;
		if (new_node(g, d, g->cur[i].key, total) < 0 ||
		    push_work(g, t->n - 1, cls, i, j, MS_NONE, false))
			return -1;
	}
	n_kids = t->n - first + n_extra;
	if (MS_GROW(t->children, g->n_children + n_kids, g->alloc_children))
		return -1;
	for (k = 0; k < n_extra; k++)
		if (push_work(g, extra[k], extra_cls[k], extra_run[k][0], extra_run[k][1], MS_NONE,
			      true))
			return -1;
	for (k = first; k < t->n; k++)
		t->children[g->n_children + k - first] = k;
	for (k = 0; k < n_extra; k++)
		t->children[g->n_children + t->n - first + k] = extra[k];
	if (n_kids)
		qsort_r(t->children + g->n_children, n_kids, sizeof(*t->children), cmp_node, t);
	t->nodes[d].first_child = g->n_children;
	t->nodes[d].n_children = n_kids;
	g->n_children += n_kids;
	return 0;
}

/* Expand tree node d of class cls from its cursors lo..hi. */
static int expand(struct grower *g, uint32_t d, uint32_t cls, uint32_t lo, uint32_t hi)
{
	const struct ms_select *s = &g->t->sel;
	const uint64_t *sub = s->self[cls];
	uint32_t start = g->n_cur, i, k;
	uint64_t self = 0;

	for (i = lo; i < hi; i++) {
		struct cursor c = g->cur[i];
		uint32_t nk;
		const uint32_t *keys = ms_select_node_keys(s, c.node, &nk);

		if (c.pos + 1 < nk) {
			if (push_cursor(g, keys[c.pos + 1], c.node, c.pos + 1))
				return -1;
			continue;
		}
		self = ms_weight_add(self, own_weight(s, sub, c.node));
		for (k = ms_select_child_lo(s, c.node); k < ms_select_child_hi(s, c.node); k++)
			if (enter(g, sub, ms_select_child(s, k), &self))
				return -1;
	}
	g->t->nodes[d].self = self;
	return add_children(g, d, cls, start, g->n_cur, start, NULL, NULL, NULL, 0);
}

/* The root: class 0's first keys are its children; each other class is a child of its own (its truncated key). */
static int expand_root(struct grower *g)
{
	struct ms_tree *t = g->t;
	const struct ms_select *s = &t->sel;
	uint32_t n = s->cap->n_stacks, c, k, n_extra = 0, runs_lo = 0, runs_hi = 0;
	uint32_t extra[MS_SELECT_CLASSES], extra_cls[MS_SELECT_CLASSES], extra_run[MS_SELECT_CLASSES][2];
	uint64_t self0 = s->noframe[0];

	for (c = 1; c < s->n_classes; c++) {
		uint64_t total = s->noframe[c], self = s->noframe[c];
		uint32_t lo = g->n_cur;
		int id;

		if (!s->self[c] && !s->noframe[c])
			continue;
		if (s->self[c])
			for (k = ms_select_child_lo(s, n); k < ms_select_child_hi(s, n); k++) {
				total = ms_weight_add(total, s->self[c][ms_select_child(s, k)]);
				if (enter(g, s->self[c], ms_select_child(s, k), &self))
					return -1;
			}
		if (!weight_shown(t, total, g->q->hide_below)) {
			g->n_cur = lo;
			continue;
		}
		if ((id = new_node(g, 0, s->class_key[c], total)) < 0)
			return -1;
		t->nodes[id].self = self;	/* its transparent roots and frameless samples */
		extra[n_extra] = (uint32_t)id;
		extra_cls[n_extra] = c;
		extra_run[n_extra][0] = lo;
		extra_run[n_extra][1] = g->n_cur;
		n_extra++;
	}
	runs_lo = g->n_cur;
	if (s->self[0])
		for (k = ms_select_child_lo(s, n); k < ms_select_child_hi(s, n); k++)
			if (enter(g, s->self[0], ms_select_child(s, k), &self0))
				return -1;
	runs_hi = g->n_cur;
	t->nodes[0].self = self0;
	/* the class nodes were made first: they are the extra children */
	return add_children(g, 0, 0, runs_lo, runs_hi, runs_hi, extra, extra_cls,
			    (const uint32_t (*)[2])extra_run, n_extra);
}

int ms_tree_build(struct ms_tree *t, const struct ms_capture *cap, const struct ms_query *q)
{
	struct grower g = { .t = t, .q = q };

	memset(t, 0, sizeof(*t));
	t->root_label = "[root]";
	if (ms_select_build(&t->sel, cap, q))
		return -1;
	ms_select_subtree(&t->sel);
	if (ms_select_children(&t->sel) || new_node(&g, MS_NONE, MS_NONE, t->sel.selected) < 0)
		goto fail;
	if (expand_root(&g))
		goto fail;
	while (g.n_work) {
		struct pending p = g.work[--g.n_work];

		if (p.node == MS_NONE) {
			g.n_cur = p.mark;	/* every child of that block is done */
			continue;
		}
		/* a class node's cursors lie under the root's: free only what it adds */
		if (p.kids ? add_children(&g, p.node, p.cls, p.lo, p.hi, g.n_cur, NULL, NULL, NULL, 0)
			   : expand(&g, p.node, p.cls, p.lo, p.hi))
			goto fail;
	}
	free(g.cur);
	free(g.work);
	return 0;
fail:
	free(g.cur);
	free(g.work);
	ms_tree_release(t);
	return -1;
}

/* The keys q->function names, into target[] (n_keys); -1 after a message. */
static int find_target(const struct ms_select *s, const char *want, bool *target)
{
	const struct ms_keys *k = &s->keys;
	const char *first = NULL, *second = NULL;
	uint32_t i, hits = 0;
	regex_t re;

	for (i = 0; i < k->n; i++)
		if ((target[i] = !strcmp(k->keys[i].label, want)))
			hits++;
	if (hits)
		return 0;
	if (regcomp(&re, want, REG_EXTENDED | REG_NOSUB))
		return ms_error("no function is called '%s' (and it is not a regular expression)", want);
	for (i = 0; i < k->n; i++) {
		if (regexec(&re, k->keys[i].label, 0, NULL, 0))
			continue;
		if (!first || !strcmp(first, k->keys[i].label))
			first = k->keys[i].label;
		else if (!second)
			second = k->keys[i].label;
		target[i] = true;
		hits++;
	}
	regfree(&re);
	if (!hits)
		return ms_error("no function matches '%s': see ms-analyze top for the names", want);
	if (second)
		return ms_error("'%s' matches more than one function ('%s', '%s', ...): "
				"give one name exactly", want, first, second);
	return 0;
}

int ms_tree_build_from(struct ms_tree *t, const struct ms_capture *cap, const struct ms_query *q)
{
	struct builder b;
	bool *target = NULL, callers = q->view == MS_VIEW_CALLERS;
	uint32_t *nodes = NULL, *path = NULL, c, i;

	if (start(&b, t, cap, q))
		goto fail;
	target = calloc(t->sel.keys.n + 1, sizeof(*target));
	nodes = malloc(((size_t)ms_stacks_max_depth(cap) + 1) * sizeof(*nodes));
	path = malloc(((size_t)ms_select_max_path(&t->sel) + 1) * sizeof(*path));
	if (!target || !nodes || !path) {
		ms_error("out of memory building the %s tree", callers ? "callers" : "callees");
		goto fail;
	}
	if (find_target(&t->sel, q->function, target))
		goto fail;
	t->root_label = q->function;
	for (i = 0; i < t->sel.keys.n; i++)
		if (target[i]) {
			t->root_label = t->sel.keys.keys[i].label;
			break;
		}

	for (c = 0; c < t->sel.n_classes; c++) {
		uint32_t node;

		for (node = 0; node <= cap->n_stacks; node++) {
			/* node n_stacks: the class's samples without frames */
			uint32_t stack = node == cap->n_stacks ? MS_NONE : node;
			uint64_t w = stack == MS_NONE ? t->sel.noframe[c]
						      : t->sel.self[c] ? t->sel.self[c][stack] : 0;
			uint32_t n, j, at = MS_NONE, d = 0;

			if (!w)
				continue;
			n = ms_select_path(&t->sel, c, stack, nodes, path);
			for (j = 0; j < n; j++)
				if (target[path[j]]) {
					at = j;
					if (!callers)
						break;	/* callees: the outermost */
				}
			if (at == MS_NONE)
				continue;
			if (callers) {
				for (j = at; j-- > 0;)
					if ((d = child(&b, d, path[j])) == MS_NONE)
						goto fail;
			} else {
				for (j = at + 1; j < n; j++)
					if ((d = child(&b, d, path[j])) == MS_NONE)
						goto fail;
			}
			t->nodes[d].self = ms_weight_add(t->nodes[d].self, w);
		}
	}
	if (finish(t))
		goto fail;
	free(target);
	free(nodes);
	free(path);
	ms_pairmap_release(&b.map);
	return 0;
fail:
	free(target);
	free(nodes);
	free(path);
	ms_pairmap_release(&b.map);
	ms_tree_release(t);
	return -1;
}

void ms_tree_release(struct ms_tree *t)
{
	ms_select_release(&t->sel);
	free(t->nodes);
	free(t->children);
	memset(t, 0, sizeof(*t));
}

static bool shown(const struct ms_tree *t, uint32_t node, double hide_below)
{
	return ms_select_percent(&t->sel, t->nodes[node].total) >= hide_below;
}

static const char *tree_title(const struct ms_query *q)
{
	return q->view == MS_VIEW_CALLERS ? "callers of" : q->view == MS_VIEW_CALLEES ? "callees of" : NULL;
}

/* How many nodes are written between calls of the output's progress. */
#define PROGRESS_EVERY 4095u

/* The longest run of single children looked at for recursion to fold. */
#define FOLD_RUN_MAX 4096
/* Fold a run that repeats at least this often. */
#define FOLD_MIN_REPEATS 3

/* The one shown child of node id, or MS_NONE when it has none or several. */
static uint32_t only_child(const struct ms_tree *t, uint32_t id, double hide_below)
{
	const struct ms_tree_node *nd = &t->nodes[id];
	uint32_t c;

	if (!nd->n_children)
		return MS_NONE;
	c = t->children[nd->first_child];
	if (!shown(t, c, hide_below))
		return MS_NONE;
	if (nd->n_children > 1 && shown(t, t->children[nd->first_child + 1], hide_below))
		return MS_NONE;
	return c;
}

struct text_ctx {
	const struct ms_view_out *o;
	const struct ms_tree *t;
	size_t wtotal, wself, prefix;
};

static void put_line(const struct text_ctx *x, uint32_t id, uint32_t depth, uint64_t self,
		     size_t repeats, uint32_t cycle)
{
	const struct ms_select *s = &x->t->sel;
	const struct ms_tree_node *nd = &x->t->nodes[id];
	const struct ms_view_out *o = x->o;
	size_t indent = 2 * (size_t)depth, used;
	char a[32], b[32], fold[64] = "";

	if (repeats > 1 && cycle == 1)
		snprintf(fold, sizeof(fold), "  [recursion ×%zu folded]", repeats);
	else if (repeats > 1)
		snprintf(fold, sizeof(fold), "  [a cycle of %" PRIu32 " ×%zu folded]", cycle, repeats);
	used = x->prefix + indent + ms_text_width(fold);
	ms_view_value(a, sizeof(a), s, nd->total);
	ms_view_value(b, sizeof(b), s, self);
	ms_view_put_percent(o, ms_select_percent(s, nd->total));
	fputs("  ", o->f);
	ms_view_put_percent(o, ms_select_percent(s, self));
	fprintf(o->f, "  %*s  %*s  %*s", (int)x->wtotal, a, (int)x->wself, b, (int)indent, "");
	if (!id)
		ms_text_put(o->f, x->t->root_label);
	else
		ms_view_put_key(o, s, nd->key, o->width > used ? o->width - used : o->width ? 1 : 0,
				true);
	if (*fold)
		ms_styled_put(o->f, o->color, MS_STYLE_WARM, fold);
	fputc('\n', o->f);
}

/*
 * Depth-first with an explicit stack (recursion can be deep). A run of
 * nodes that each have one shown child and repeat a cycle of keys at
 * least FOLD_MIN_REPEATS times (analysis/present.h: ms_fold_at()) is
 * printed once, its last line saying how often it repeats; each printed
 * node's self is the sum of the selves of the nodes it stands for, and
 * the children of the run's last node follow.
 */
static void write_text(const struct ms_view_out *o, const struct ms_tree *t,
		       const struct ms_query *q, uint32_t *stack, uint32_t *depths,
		       uint32_t *run, uint32_t *keys)
{
	const struct ms_select *s = &t->sel;
	struct text_ctx x = { .o = o, .t = t, .wtotal = 5, .wself = 4 };
	FILE *out = o->f;
	uint32_t depth = 0, i, written = 0;
	char a[32], b[32];

	for (i = 0; i < t->n; i++) {
		ms_view_value(a, sizeof(a), s, t->nodes[i].total);
		ms_view_value(b, sizeof(b), s, t->nodes[i].self);
		if (strlen(a) > x.wtotal)
			x.wtotal = strlen(a);
		if (strlen(b) > x.wself)
			x.wself = strlen(b);
	}
	ms_view_value(a, sizeof(a), s, s->selected);
	if (tree_title(q)) {
		char r[32];

		/* the function's weight, then the selection's it is a share of */
		ms_view_value(r, sizeof(r), s, t->nodes[0].total);
		fprintf(out, "%s ", tree_title(q));
		ms_text_put(out, t->root_label);
		fprintf(out, ": %s (%.1f%%) of ", r, ms_select_percent(s, t->nodes[0].total));
	}
	fprintf(out, "%s%s", a, ms_unit_words(s->unit));
	if (q->hide_below > 0)
		fprintf(out, " (nodes under %.1f%% left out)", q->hide_below);
	fputc('\n', out);
	ms_view_selection_line(out, s);
	ms_style_put(out, o->color, MS_STYLE_HEADER);
	fprintf(out, "%6s  %6s  %*s  %*s  function", "total%", "self%",
		(int)x.wtotal, "total", (int)x.wself, "self");
	ms_style_put(out, o->color, MS_STYLE_RESET);
	fputc('\n', out);
	x.prefix = 6 + 2 + 6 + 2 + x.wtotal + 2 + x.wself + 2;

	stack[depth] = 0;
	depths[depth++] = 0;
	while (depth) {
		uint32_t id = stack[--depth], d = depths[depth], n = 0, last, k;
		struct ms_fold fold = { 1, 1 };

		if (o->progress && !(++written & PROGRESS_EVERY))
			o->progress(o->progress_ctx, written, t->n);

		/* the run of single children from id */
		for (uint32_t c = id; c != MS_NONE && n < FOLD_RUN_MAX; c = only_child(t, c, q->hide_below)) {
			run[n] = c;
			keys[n++] = t->nodes[c].key;
		}
		if (id)
			ms_fold_at(keys, n, 0, &fold);
		if (fold.repeats < FOLD_MIN_REPEATS) {
			put_line(&x, id, d, t->nodes[id].self, 1, 1);
			last = id;
		} else {
			for (k = 0; k < fold.cycle; k++) {
				uint64_t self = 0;

				for (size_t r = 0; r < fold.repeats; r++)
					self = ms_weight_add(self, t->nodes[run[r * fold.cycle + k]].self);
				put_line(&x, run[k], d + k, self,
					 k + 1 == fold.cycle ? fold.repeats : 1, fold.cycle);
			}
			last = run[fold.repeats * fold.cycle - 1];
			d += fold.cycle - 1;
		}
		for (i = t->nodes[last].n_children; i-- > 0;) {
			uint32_t c = t->children[t->nodes[last].first_child + i];

			if (shown(t, c, q->hide_below)) {
				stack[depth] = c;
				depths[depth++] = d + 1;
			}
		}
	}
}

static void open_node(struct ms_json *j, const struct ms_tree *t, uint32_t id)
{
	const struct ms_tree_node *nd = &t->nodes[id];

	ms_json_object_begin(j);
	if (id) {
		ms_key_json(j, t->sel.cap, &t->sel.keys, nd->key);
	} else {
		ms_json_key(j, "name");
		ms_json_string(j, t->root_label);
	}
	ms_json_key(j, "self");
	ms_json_uint(j, nd->self);
	ms_json_key(j, "total");
	ms_json_uint(j, nd->total);
	ms_json_key(j, "children");
	ms_json_array_begin(j);
}

static void write_json(const struct ms_view_out *o, const struct ms_tree *t,
		       const struct ms_query *q, uint32_t *stack, uint32_t *next)
{
	struct ms_json j;
	uint32_t depth, written = 0;

	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	ms_view_json_head(&j, &t->sel);
	if (tree_title(q)) {
		ms_json_key(&j, "view");
		ms_json_string(&j, ms_view_name(q->view));
	}
	ms_json_key(&j, "root");

	/* next[d]: the next child of stack[d] to visit. */
	open_node(&j, t, 0);
	stack[0] = 0;
	next[0] = 0;
	depth = 1;
	while (depth) {
		const struct ms_tree_node *nd = &t->nodes[stack[depth - 1]];
		uint32_t c;

		/* children are sorted by total: the first one hidden ends the list */
		if (next[depth - 1] < nd->n_children &&
		    shown(t, c = t->children[nd->first_child + next[depth - 1]], q->hide_below)) {
			next[depth - 1]++;
			if (o->progress && !(++written & PROGRESS_EVERY))
				o->progress(o->progress_ctx, written, t->n);
			open_node(&j, t, c);
			stack[depth] = c;
			next[depth] = 0;
			depth++;
			continue;
		}
		ms_json_array_end(&j);
		ms_json_object_end(&j);
		depth--;
	}
	ms_json_object_end(&j);
	fputc('\n', o->f);
}

int ms_tree_write(const struct ms_view_out *o, const struct ms_capture *cap, const struct ms_query *q)
{
	struct ms_tree t;
	uint32_t *stack, *next, *run = NULL, *keys = NULL;
	int rc = q->view == MS_VIEW_CALLERS || q->view == MS_VIEW_CALLEES ?
		 ms_tree_build_from(&t, cap, q) : ms_tree_build(&t, cap, q);

	if (rc)
		return -1;
	stack = malloc(t.n * sizeof(*stack));
	next = malloc(t.n * sizeof(*next));
	if (!o->json) {
		run = malloc(FOLD_RUN_MAX * sizeof(*run));
		keys = malloc(FOLD_RUN_MAX * sizeof(*keys));
	}
	if (!stack || !next || (!o->json && (!run || !keys))) {
		free(stack);
		free(next);
		free(run);
		free(keys);
		ms_tree_release(&t);
		return ms_error("out of memory writing the call tree");
	}
	if (o->json)
		write_json(o, &t, q, stack, next);
	else
		write_text(o, &t, q, stack, next, run, keys);
	free(stack);
	free(next);
	free(run);
	free(keys);
	ms_tree_release(&t);
	return 0;
}
