/*
 * tree, callers, callees: trees of keys, paths merged by key.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
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
 * One class's stacks into the tree, under croot. Only stack nodes on the
 * path of a sample of the class make tree nodes (need[]); a stack node's
 * parent comes before it, so its tree node is made first.
 */
static int add_class(struct builder *b, uint32_t c, uint32_t croot, bool *need, uint32_t *tmap)
{
	const struct ms_select *s = &b->t->sel;
	const struct ms_capture *cap = s->cap;
	const uint64_t *self = s->self[c];
	uint32_t i;

	for (i = 0; i < cap->n_stacks; i++)
		need[i] = self[i] != 0;
	for (i = cap->n_stacks; i-- > 0;)
		if (need[i] && cap->stacks[i].parent != MS_NONE)
			need[cap->stacks[i].parent] = true;
	for (i = 0; i < cap->n_stacks; i++) {
		uint32_t parent = cap->stacks[i].parent, d, nk, k;
		const uint32_t *keys;

		if (!need[i])
			continue;
		d = parent == MS_NONE ? croot : tmap[parent];
		keys = ms_select_node_keys(s, i, &nk);
		for (k = 0; k < nk; k++)
			if ((d = child(b, d, keys[k])) == MS_NONE)
				return -1;
		tmap[i] = d;
		b->t->nodes[d].self = ms_weight_add(b->t->nodes[d].self, self[i]);
	}
	return 0;
}

int ms_tree_build(struct ms_tree *t, const struct ms_capture *cap, const struct ms_query *q)
{
	struct builder b;
	bool *need = NULL;
	uint32_t *tmap = NULL, c;

	if (start(&b, t, cap, q))
		goto fail;
	if (cap->n_stacks) {
		need = malloc(cap->n_stacks * sizeof(*need));
		tmap = malloc(cap->n_stacks * sizeof(*tmap));
		if (!need || !tmap) {
			ms_error("out of memory building the call tree of %" PRIu32 " stacks",
				 cap->n_stacks);
			goto fail;
		}
	}
	for (c = 0; c < t->sel.n_classes; c++) {
		uint32_t croot = 0;

		if (!t->sel.self[c] && !t->sel.noframe[c])
			continue;
		if (t->sel.class_key[c] != MS_NONE &&
		    (croot = child(&b, 0, t->sel.class_key[c])) == MS_NONE)
			goto fail;
		t->nodes[croot].self = ms_weight_add(t->nodes[croot].self, t->sel.noframe[c]);
		if (t->sel.self[c] && add_class(&b, c, croot, need, tmap))
			goto fail;
	}
	if (finish(t))
		goto fail;
	free(need);
	free(tmap);
	ms_pairmap_release(&b.map);
	return 0;
fail:
	free(need);
	free(tmap);
	ms_pairmap_release(&b.map);
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

static void write_text(const struct ms_view_out *o, const struct ms_tree *t,
		       const struct ms_query *q, uint32_t *stack)
{
	const struct ms_select *s = &t->sel;
	size_t wtotal = 5, wself = 4, prefix;
	FILE *out = o->f;
	uint32_t depth = 0, i;
	char a[32], b[32];

	for (i = 0; i < t->n; i++) {
		ms_view_value(a, sizeof(a), s, t->nodes[i].total);
		ms_view_value(b, sizeof(b), s, t->nodes[i].self);
		if (strlen(a) > wtotal)
			wtotal = strlen(a);
		if (strlen(b) > wself)
			wself = strlen(b);
	}
	ms_view_value(a, sizeof(a), s, s->selected);
	if (tree_title(q)) {
		fprintf(out, "%s ", tree_title(q));
		ms_text_put(out, t->root_label);
		fputs(": ", out);
	}
	fprintf(out, "%s%s", a, s->unit == MS_UNIT_CPU_TIME ? " of CPU time" : " samples");
	if (q->hide_below > 0)
		fprintf(out, " (nodes under %.1f%% left out)", q->hide_below);
	fputc('\n', out);
	ms_view_selection_line(out, s);
	fprintf(out, "%6s  %6s  %*s  %*s  function\n", "total%", "self%",
		(int)wtotal, "total", (int)wself, "self");
	prefix = 6 + 2 + 6 + 2 + wtotal + 2 + wself + 2;

	/* Depth-first with an explicit stack: recursion can be deep. */
	stack[depth++] = 0;
	while (depth) {
		uint32_t id = stack[--depth];
		const struct ms_tree_node *nd = &t->nodes[id];
		size_t indent = 2 * (size_t)nd->depth;

		ms_view_value(a, sizeof(a), s, nd->total);
		ms_view_value(b, sizeof(b), s, nd->self);
		fprintf(out, "%5.1f%%  %5.1f%%  %*s  %*s  %*s", ms_select_percent(s, nd->total),
			ms_select_percent(s, nd->self), (int)wtotal, a, (int)wself, b, (int)indent, "");
		if (!id)
			ms_text_put(out, t->root_label);
		else
			ms_view_put_key(o, s, nd->key,
					o->width > prefix + indent ? o->width - prefix - indent :
					o->width ? 1 : 0, true);
		fputc('\n', out);
		for (i = nd->n_children; i-- > 0;) {
			uint32_t c = t->children[nd->first_child + i];

			if (shown(t, c, q->hide_below))
				stack[depth++] = c;
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
	uint32_t depth;

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
	uint32_t *stack, *next;
	int rc = q->view == MS_VIEW_CALLERS || q->view == MS_VIEW_CALLEES ?
		 ms_tree_build_from(&t, cap, q) : ms_tree_build(&t, cap, q);

	if (rc)
		return -1;
	stack = malloc(t.n * sizeof(*stack));
	next = malloc(t.n * sizeof(*next));
	if (!stack || !next) {
		free(stack);
		free(next);
		ms_tree_release(&t);
		return ms_error("out of memory writing the call tree");
	}
	if (o->json)
		write_json(o, &t, q, stack, next);
	else
		write_text(o, &t, q, stack);
	free(stack);
	free(next);
	ms_tree_release(&t);
	return 0;
}
