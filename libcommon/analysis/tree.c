/*
 * tree: the call tree from the outermost frame in, paths merged by function.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "util/text.h"
#include "util/json.h"
#include "util/error.h"

/*
 * (parent tree node, function) -> tree node, open addressing. Sized once
 * for the largest possible tree (one node per function of each stack
 * node's inline chain, plus the root), so it never grows; its order never
 * reaches the output.
 */
struct child_map {
	uint32_t mask;
	uint32_t *slots;	/* tree node id, MS_NONE when empty */
};

static uint32_t hash_pair(uint32_t parent, uint32_t func)
{
	uint64_t h = ((uint64_t)parent << 32 | func) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static int child_map_init(struct child_map *m, uint32_t n)
{
	uint64_t size = 16;

	while (size < 2ull * n)
		size <<= 1;
	if (size > UINT32_MAX)
		return -1;
	m->mask = (uint32_t)size - 1;
	m->slots = malloc(size * sizeof(*m->slots));
	if (!m->slots)
		return -1;
	memset(m->slots, 0xff, size * sizeof(*m->slots));
	return 0;
}

/* The slot holding (parent, func), or the empty slot where it belongs. */
static uint32_t *child_map_find(struct child_map *m, const struct ms_tree_node *nodes,
				uint32_t parent, uint32_t func)
{
	uint32_t i = hash_pair(parent, func) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		uint32_t id = m->slots[i];

		if (id == MS_NONE || (nodes[id].parent == parent && nodes[id].func == func))
			return &m->slots[i];
	}
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
	return ms_func_cmp_label(&t->funcs, a->func, b->func);
}

int ms_tree_build(struct ms_tree *t, const struct ms_capture *cap)
{
	uint64_t *node_samples = NULL, max_nodes = 1;
	uint32_t *tmap = NULL;
	struct child_map map = { 0 };
	uint32_t i, n_children = 0;

	memset(t, 0, sizeof(*t));
	t->samples = ms_capture_sample_count(cap);
	if (ms_funcs_build(&t->funcs, cap))
		return -1;
	if (ms_stack_samples(&node_samples, cap))
		goto fail;
	for (i = 0; i < cap->n_stacks; i++)
		max_nodes += ms_frame_chain_len(&cap->frames[cap->stacks[i].frame]);
	if (max_nodes >= UINT32_MAX) {
		ms_error("a call tree of %" PRIu64 " nodes is too large", max_nodes);
		goto fail;
	}
	t->nodes = calloc(max_nodes, sizeof(*t->nodes));
	if (!t->nodes)
		goto oom;
	t->nodes[0] = (struct ms_tree_node){ .func = MS_NONE, .parent = MS_NONE };
	t->n = 1;
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].stack >= cap->n_stacks)
			t->nodes[0].self += cap->samples[i].count;	/* samples without frames */

	if (cap->n_stacks) {
		tmap = malloc(cap->n_stacks * sizeof(*tmap));
		if (!tmap || child_map_init(&map, (uint32_t)max_nodes))
			goto oom;
	}
	/*
	 * A stack node's parent comes before it, so its tree node exists. A
	 * frame adds a path of one node per function of its chain, outermost
	 * first; its samples are the innermost node's self.
	 */
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *st = &cap->stacks[i];
		uint32_t parent = st->parent == MS_NONE ? 0 : tmap[st->parent], k;

		for (k = t->funcs.chain_start[st->frame]; k < t->funcs.chain_start[st->frame + 1]; k++) {
			uint32_t func = t->funcs.chain[k];
			uint32_t *slot = child_map_find(&map, t->nodes, parent, func);

			if (*slot == MS_NONE) {
				*slot = t->n;
				t->nodes[t->n++] = (struct ms_tree_node){
					.func = func,
					.parent = parent,
					.depth = t->nodes[parent].depth + 1,
				};
			}
			parent = *slot;
		}
		tmap[i] = parent;
		t->nodes[parent].self += node_samples[i];
	}

	/* Children come after their parent: one backward pass sums totals. */
	for (i = 0; i < t->n; i++)
		t->nodes[i].total = t->nodes[i].self;
	for (i = t->n - 1; i > 0; i--)
		t->nodes[t->nodes[i].parent].total += t->nodes[i].total;

	/* Nodes no sample reached are left out of every children list. */
	if (t->n > 1 && !(t->children = malloc((t->n - 1) * sizeof(*t->children))))
		goto oom;
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

	free(node_samples);
	free(tmap);
	free(map.slots);
	return 0;
oom:
	ms_error("out of memory building the call tree of %" PRIu32 " stacks", cap->n_stacks);
fail:
	free(node_samples);
	free(tmap);
	free(map.slots);
	ms_tree_release(t);
	return -1;
}

void ms_tree_release(struct ms_tree *t)
{
	ms_funcs_release(&t->funcs);
	free(t->nodes);
	free(t->children);
	memset(t, 0, sizeof(*t));
}

static bool shown(const struct ms_tree *t, uint32_t node, double min_percent)
{
	return ms_percent(t->nodes[node].total, t->samples) >= min_percent;
}

static void write_text(FILE *out, const struct ms_tree *t, double min_percent, uint32_t *stack)
{
	size_t wtotal = 5, wself = 4;
	uint32_t depth = 0, i;

	for (i = 0; i < t->n; i++) {
		if (ms_digits(t->nodes[i].total) > wtotal)
			wtotal = ms_digits(t->nodes[i].total);
		if (ms_digits(t->nodes[i].self) > wself)
			wself = ms_digits(t->nodes[i].self);
	}
	fprintf(out, "%" PRIu64 " samples", t->samples);
	if (min_percent > 0)
		fprintf(out, " (nodes under %.1f%% left out)", min_percent);
	fputc('\n', out);
	fprintf(out, "%6s  %6s  %*s  %*s  function\n", "total%", "self%",
		(int)wtotal, "total", (int)wself, "self");

	/* Depth-first with an explicit stack: recursion can be deep. */
	stack[depth++] = 0;
	while (depth) {
		uint32_t id = stack[--depth];
		const struct ms_tree_node *nd = &t->nodes[id];
		const struct ms_func *fn = id ? &t->funcs.funcs[nd->func] : NULL;

		fprintf(out, "%5.1f%%  %5.1f%%  %*" PRIu64 "  %*" PRIu64 "  %*s",
			ms_percent(nd->total, t->samples), ms_percent(nd->self, t->samples),
			(int)wtotal, nd->total, (int)wself, nd->self, (int)(2 * nd->depth), "");
		if (!fn) {
			fputs("[root]", out);
		} else {
			ms_text_put(out, fn->label);
			if (fn->name) {
				fputs(" (", out);
				if (*fn->file_name) {
					ms_func_put_location(out, fn);
					fputs(", ", out);
				}
				ms_text_put(out, fn->module_label);
				fputc(')', out);
			}
		}
		fputc('\n', out);
		for (i = nd->n_children; i-- > 0;) {
			uint32_t child = t->children[nd->first_child + i];

			if (shown(t, child, min_percent))
				stack[depth++] = child;
		}
	}
}

static void open_node(struct ms_json *j, const struct ms_capture *cap, const struct ms_tree *t,
		      uint32_t id)
{
	const struct ms_tree_node *nd = &t->nodes[id];

	ms_json_object_begin(j);
	ms_json_key(j, "name");
	if (id) {
		ms_json_string(j, t->funcs.funcs[nd->func].label);
		ms_json_key(j, "module");
		ms_json_string(j, t->funcs.funcs[nd->func].module_name);
		ms_func_json_location(j, cap, &t->funcs.funcs[nd->func]);
	} else {
		ms_json_string(j, "[root]");
	}
	ms_json_key(j, "self");
	ms_json_uint(j, nd->self);
	ms_json_key(j, "total");
	ms_json_uint(j, nd->total);
	ms_json_key(j, "children");
	ms_json_array_begin(j);
}

static void write_json(FILE *out, const struct ms_capture *cap, const struct ms_tree *t,
		       double min_percent, uint32_t *stack, uint32_t *next)
{
	struct ms_json j;
	uint32_t depth = 0;

	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "samples");
	ms_json_uint(&j, t->samples);
	ms_json_key(&j, "root");

	/* next[d]: the next child of stack[d] to visit. */
	open_node(&j, cap, t, 0);
	stack[0] = 0;
	next[0] = 0;
	depth = 1;
	while (depth) {
		const struct ms_tree_node *nd = &t->nodes[stack[depth - 1]];
		uint32_t child;

		/* children are sorted by total: the first one hidden ends the list */
		if (next[depth - 1] < nd->n_children &&
		    shown(t, child = t->children[nd->first_child + next[depth - 1]], min_percent)) {
			next[depth - 1]++;
			open_node(&j, cap, t, child);
			stack[depth] = child;
			next[depth] = 0;
			depth++;
			continue;
		}
		ms_json_array_end(&j);
		ms_json_object_end(&j);
		depth--;
	}
	ms_json_object_end(&j);
	fputc('\n', out);
}

int ms_tree_write(FILE *out, const struct ms_capture *cap, const struct ms_tree_options *o)
{
	struct ms_tree t;
	uint32_t *stack, *next;

	if (ms_tree_build(&t, cap))
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
		write_json(out, cap, &t, o->min_percent, stack, next);
	else
		write_text(out, &t, o->min_percent, stack);
	free(stack);
	free(next);
	ms_tree_release(&t);
	return 0;
}
