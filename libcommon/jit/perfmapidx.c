/*
 * The perf map's index: the functions' ranges flattened into disjoint
 * ranges by start, each the latest line's that holds it (perfmap.h).
 *
 * A rebuild takes only the lines fed since the last one (the batch): it
 * flattens them by a sweep over their starts with a heap of the ranges
 * open there, the latest line on top (O(k log k)), then lays them over the
 * index (O(n + k)), dropping the ranges of ended functions. A batch
 * function that lost part of its range to a later one of the batch, and an
 * indexed one the batch cut, are counted replaced. All arrays are kept
 * between rebuilds.
 */
#include "jit/perfmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

static bool reserve(void *arr, uint32_t *alloc, uint64_t need, size_t size)
{
	return ms_reserve(arr, alloc, need ? need : 1, size);
}

/* qsort's order of batch ids: by start; ids are distinct, so ties by id. */
static const struct ms_perfmap_func *sort_funcs;

static int by_start(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = sort_funcs[x].start, sy = sort_funcs[y].start;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The heap of open ranges: the largest id (the latest line) on top. */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t id)
{
	uint32_t i = (*n)++;

	while (i && h[(i - 1) / 2] < id) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = id;
}

static void heap_pop(uint32_t *h, uint32_t *n)
{
	uint32_t last = h[--(*n)], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= last)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

/* Append [start, end) of func to segs, joined to the last when it continues it. */
static void emit(struct ms_perfmap_seg *segs, uint32_t *n, uint64_t start, uint64_t end,
		 uint32_t func)
{
	if (*n && segs[*n - 1].func == func && segs[*n - 1].end == start) {
		segs[*n - 1].end = end;
		return;
	}
	segs[*n] = (struct ms_perfmap_seg){ start, end, func };
	(*n)++;
}

/* The batch funcs[indexed, n) flattened into t->batch; its length. */
static uint32_t flatten(struct ms_perfmap *t)
{
	uint32_t k = t->n - t->indexed, i = 0, hn = 0, nb = 0;
	const struct ms_perfmap_func *f = t->funcs;
	uint64_t x = 0;

	for (uint32_t j = 0; j < k; j++) {
		t->ids[j] = t->indexed + j;
		t->visible[j] = 0;
	}
	sort_funcs = f;
	qsort(t->ids, k, sizeof(*t->ids), by_start);
	while (i < k || hn) {
		uint32_t top;
		uint64_t next;

		if (!hn)
			x = f[t->ids[i]].start;
		while (i < k && f[t->ids[i]].start <= x)
			heap_push(t->heap, &hn, t->ids[i++]);
		while (hn && f[t->heap[0]].end <= x)
			heap_pop(t->heap, &hn);
		if (!hn)
			continue;
		top = t->heap[0];
		next = f[top].end;
		if (i < k && f[t->ids[i]].start < next)
			next = f[t->ids[i]].start;
		emit(t->batch, &nb, x, next, top);
		t->visible[top - t->indexed] += next - x;
		x = next;
	}
	for (uint32_t j = 0; j < k; j++) {
		struct ms_perfmap_func *g = &t->funcs[t->indexed + j];

		if (t->visible[j] < g->end - g->start) {
			g->flags |= MS_PERFMAP_REPLACED;
			t->c.replaced++;
		}
	}
	return nb;
}

int ms_perfmap_index(struct ms_perfmap *t)
{
	uint32_t k = t->n - t->indexed, nb, no = 0, j = 0, m = 0;
	struct ms_perfmap_seg *swap;
	uint32_t swap_alloc;

	if (!k)
		return 0;
	/*
	 * A batch of k ranges flattens into at most 2k - 1; laid over the
	 * index, each may also split one range in two: n + 4k at most.
	 */
	if (!reserve(&t->ids, &t->ids_alloc, k, sizeof(*t->ids)) ||
	    !reserve(&t->heap, &t->heap_alloc, k, sizeof(*t->heap)) ||
	    !reserve(&t->visible, &t->visible_alloc, k, sizeof(*t->visible)) ||
	    !reserve(&t->batch, &t->batch_alloc, 2ull * k, sizeof(*t->batch)) ||
	    !reserve(&t->out, &t->out_alloc, (uint64_t)t->n_seg + 4ull * k, sizeof(*t->out)))
		return ms_error("cannot index the perf map's %u new functions: out of memory", k);
	nb = flatten(t);

	/* Lay the batch over the index: what it covers goes, the rest stays. */
	for (uint32_t s = 0; s < t->n_seg; s++) {
		const struct ms_perfmap_seg *g = &t->seg[s];
		struct ms_perfmap_func *f = &t->funcs[g->func];
		uint64_t pos = g->start;
		bool cut = false;

		if (f->flags & MS_PERFMAP_ENDED)
			continue;
		while (j < nb && t->batch[j].end <= g->start)
			j++;
		for (uint32_t q = j; q < nb && t->batch[q].start < g->end; q++) {
			cut = true;
			if (t->batch[q].start > pos) {
				while (m < nb && t->batch[m].start < pos)
					t->out[no++] = t->batch[m++];
				emit(t->out, &no, pos, t->batch[q].start, g->func);
			}
			pos = t->batch[q].end;
		}
		if (pos < g->end) {
			while (m < nb && t->batch[m].start < pos)
				t->out[no++] = t->batch[m++];
			emit(t->out, &no, pos, g->end, g->func);
		}
		if (cut && !(f->flags & MS_PERFMAP_REPLACED)) {
			f->flags |= MS_PERFMAP_REPLACED;
			t->c.replaced++;
		}
	}
	while (m < nb)
		t->out[no++] = t->batch[m++];

	swap = t->seg;
	swap_alloc = t->seg_alloc;
	t->seg = t->out;
	t->seg_alloc = t->out_alloc;
	t->n_seg = no;
	t->out = swap;
	t->out_alloc = swap_alloc;
	t->indexed = t->n;
	return 0;
}

/* The first range that ends past addr (n_seg when none). */
static uint32_t first_past(const struct ms_perfmap *t, uint64_t addr)
{
	uint32_t lo = 0, hi = t->n_seg;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->seg[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ms_perfmap_func *ms_perfmap_find(const struct ms_perfmap *t, uint64_t addr)
{
	uint32_t i = first_past(t, addr);
	const struct ms_perfmap_func *f;

	if (i == t->n_seg || t->seg[i].start > addr)
		return NULL;
	f = &t->funcs[t->seg[i].func];
	return f->flags & MS_PERFMAP_ENDED ? NULL : f;
}

int ms_perfmap_unmap_if(struct ms_perfmap *t, uint64_t start, uint64_t end,
			bool (*ends)(void *ctx, uint32_t id), void *ctx)
{
	int n = 0;

	if (ms_perfmap_index(t) < 0)
		return -1;
	if (start >= end)
		return 0;
	for (uint32_t i = first_past(t, start); i < t->n_seg && t->seg[i].start < end; i++) {
		uint32_t id = t->seg[i].func;
		struct ms_perfmap_func *f = &t->funcs[id];

		if (!(f->flags & MS_PERFMAP_ENDED) && (!ends || ends(ctx, id))) {
			f->flags |= MS_PERFMAP_ENDED;
			t->c.ended++;
			if (n < INT32_MAX)
				n++;
		}
	}
	return n;
}

int ms_perfmap_unmap(struct ms_perfmap *t, uint64_t start, uint64_t end)
{
	return ms_perfmap_unmap_if(t, start, end, NULL, NULL) < 0 ? -1 : 0;
}
