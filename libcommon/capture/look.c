/*
 * Looks: a capture's stacks seen natively, as Python, or as recorded
 * (look.h). One pass over the stack nodes, outermost first (the loader
 * proved parent < node), gives each node the node of its path under the
 * look in a new prefix tree; no path is walked twice.
 */
#include "capture/look.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream/records.h"
#include "util/error.h"
#include "util/hashindex.h"

const char *const ms_look_names[MS_LOOK_COUNT] = {
	[MS_LOOK_MIXED] = "mixed",
	[MS_LOOK_NATIVE] = "native",
	[MS_LOOK_PYTHON] = "python",
};

const char *ms_look_name(enum ms_look l)
{
	return (unsigned)l < MS_LOOK_COUNT ? ms_look_names[l] : NULL;
}

int ms_look_by_name(const char *name, enum ms_look *out)
{
	for (int i = 0; i < MS_LOOK_COUNT; i++)
		if (!strcmp(name, ms_look_names[i])) {
			*out = (enum ms_look)i;
			return 0;
		}
	return -1;
}

struct tree {
	struct ms_cap_stack *nodes;
	uint32_t n, alloc;
	struct ms_index ix;
};

struct node_key {
	uint32_t parent, frame;
};

static bool node_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct tree *t = ctx;
	const struct node_key *k = key;

	return t->nodes[e].parent == k->parent && t->nodes[e].frame == k->frame;
}

/* The node (parent, frame) of the new tree, made when new; MS_NONE when out of memory. */
static uint32_t intern(struct tree *t, uint32_t parent, uint32_t frame)
{
	struct node_key k = { parent, frame };
	uint32_t h = ms_hash_mix(ms_hash_u64(parent), frame), e;

	e = ms_index_find(&t->ix, h, node_eq, t, &k);
	if (e != MS_INDEX_EMPTY)
		return e;
	if (t->n == t->alloc) {
		uint32_t alloc = t->alloc ? t->alloc * 2 : 64;
		struct ms_cap_stack *p = realloc(t->nodes, (size_t)alloc * sizeof(*p));

		if (!p)
			return MS_NONE;
		t->nodes = p;
		t->alloc = alloc;
	}
	e = t->n;
	t->nodes[e].parent = parent;
	t->nodes[e].frame = frame;
	t->nodes[e].depth = parent == MS_NONE ? 1 : t->nodes[parent].depth + 1;
	if (ms_index_add(&t->ix, h, e) < 0)
		return MS_NONE;
	t->n++;
	return e;
}

/*
 * Node i's place under the look: at[i] is the new node of its path
 * (MS_NONE: no frames), given its parent's. For python, py_at[i] is the
 * new node of its path from the outermost interpreted frame in (MS_NONE
 * until one is on the path), and at[i] is py_at[i] when there is one.
 */
static int walk(struct tree *t, const struct ms_capture *cap, enum ms_look look, uint32_t *at,
		uint32_t *py_at)
{
	for (uint32_t i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *s = &cap->stacks[i];
		const struct ms_cap_frame *f = &cap->frames[s->frame];
		uint32_t parent_at = s->parent == MS_NONE ? MS_NONE : at[s->parent];
		bool interp = ms_frame_interpreted(cap, f);

		if (look == MS_LOOK_NATIVE) {
			at[i] = interp ? parent_at : intern(t, parent_at, s->frame);
			if (!interp && at[i] == MS_NONE)
				return -1;
			continue;
		}
		/* python: the path as recorded, and the path from the outermost interpreted frame */
		{
			uint32_t native_at = s->parent == MS_NONE ? MS_NONE : py_at[s->parent] == MS_NONE ?
					     at[s->parent] : MS_NONE;
			uint32_t parent_py = s->parent == MS_NONE ? MS_NONE : py_at[s->parent];

			if (parent_py == MS_NONE && !interp) {
				/* no interpreted frame yet: the path unchanged */
				py_at[i] = MS_NONE;
				at[i] = intern(t, native_at, s->frame);
				if (at[i] == MS_NONE)
					return -1;
				continue;
			}
			if (parent_py == MS_NONE) {
				/* the outermost interpreted frame: a root */
				py_at[i] = intern(t, MS_NONE, s->frame);
			} else if (f->flags & MS_FRAME_INTERPRETER) {
				py_at[i] = parent_py;
				at[i] = py_at[i];
				continue;
			} else {
				py_at[i] = intern(t, parent_py, s->frame);
			}
			if (py_at[i] == MS_NONE)
				return -1;
			at[i] = py_at[i];
		}
	}
	return 0;
}

int ms_look_build(struct ms_look_view *v, const struct ms_capture *cap, enum ms_look look)
{
	struct tree t = { NULL, 0, 0, MS_INDEX_INIT };
	uint32_t *at = NULL, *py_at = NULL, i;
	size_t n = cap->n_stacks ? cap->n_stacks : 1;

	memset(v, 0, sizeof(*v));
	v->seen = cap;
	if (look == MS_LOOK_MIXED)
		return 0;
	at = malloc(n * sizeof(*at));
	py_at = malloc(n * sizeof(*py_at));
	v->samples = malloc((cap->n_samples ? cap->n_samples : 1) * sizeof(*v->samples));
	v->intervals = malloc((cap->n_intervals ? cap->n_intervals : 1) * sizeof(*v->intervals));
	v->waits = malloc((cap->n_waits ? cap->n_waits : 1) * sizeof(*v->waits));
	if (!at || !py_at || !v->samples || !v->intervals || !v->waits ||
	    walk(&t, cap, look, at, py_at) < 0)
		goto oom;
	for (i = 0; i < cap->n_samples; i++) {
		v->samples[i] = cap->samples[i];
		if (cap->samples[i].stack != MS_NONE)
			v->samples[i].stack = at[cap->samples[i].stack];
	}
	for (i = 0; i < cap->n_intervals; i++) {
		v->intervals[i] = cap->intervals[i];
		if (cap->intervals[i].stack != MS_NONE)
			v->intervals[i].stack = at[cap->intervals[i].stack];
	}
	for (i = 0; i < cap->n_waits; i++) {
		v->waits[i] = cap->waits[i];
		if (cap->waits[i].stack != MS_NONE)
			v->waits[i].stack = at[cap->waits[i].stack];
	}
	free(at);
	free(py_at);
	ms_index_release(&t.ix);
	v->stacks = t.nodes;
	v->own = *cap;
	v->own.storage = NULL;	/* the original owns every table but these */
	v->own.stacks = v->stacks;
	v->own.n_stacks = t.n;
	v->own.samples = v->samples;
	v->own.intervals = v->intervals;
	v->own.waits = v->waits;
	v->seen = &v->own;
	return 0;
oom:
	free(at);
	free(py_at);
	free(t.nodes);
	ms_index_release(&t.ix);
	ms_look_release(v);
	return ms_error("out of memory seeing %" PRIu32 " stacks in the %s look", cap->n_stacks,
			ms_look_name(look));
}

void ms_look_release(struct ms_look_view *v)
{
	free(v->stacks);
	free(v->samples);
	free(v->intervals);
	free(v->waits);
	memset(v, 0, sizeof(*v));
}
