/* A process's JIT objects over time: see jitobjtab.h. */
#include "unwind/jitobjtab.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

struct kept {
	struct ms_jitobj *o;
	uint64_t time;		/* read */
	uint64_t end;		/* UINT64_MAX: none */
};

struct seg {
	uint64_t start, end;
	uint32_t kept;		/* index in kept: its order of arrival */
};

struct ms_jitobj_table {
	struct kept *kept;
	uint32_t n, alloc;
	struct seg *seg;
	uint32_t n_seg, seg_alloc;
	bool dirty;
};

struct ms_jitobj_table *ms_jitobj_table_new(void)
{
	struct ms_jitobj_table *t = calloc(1, sizeof(*t));

	if (!t)
		ms_error("out of memory for a process's JIT objects");
	return t;
}

void ms_jitobj_table_free(struct ms_jitobj_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n; i++)
		ms_jitobj_unref(t->kept[i].o);
	free(t->kept);
	free(t->seg);
	free(t);
}

uint32_t ms_jitobj_table_count(const struct ms_jitobj_table *t)
{
	return t->n;
}

/* Whether a's code and b's overlap. */
static bool overlap(const struct ms_jitobj *a, const struct ms_jitobj *b)
{
	uint32_t na, nb, i = 0, j = 0;
	const struct ms_jitobj_code *x = ms_jitobj_code(a, &na), *y = ms_jitobj_code(b, &nb);

	while (i < na && j < nb) {
		if (x[i].end <= y[j].start)
			i++;
		else if (y[j].end <= x[i].start)
			j++;
		else
			return true;
	}
	return false;
}

static bool overlaps_range(const struct ms_jitobj *a, uint64_t start, uint64_t end)
{
	uint32_t n;
	const struct ms_jitobj_code *c = ms_jitobj_code(a, &n);

	for (uint32_t i = 0; i < n; i++)
		if (c[i].start < end && start < c[i].end)
			return true;
	return false;
}

static int push(struct ms_jitobj_table *t, struct ms_jitobj *o, uint64_t time, uint64_t end)
{
	if (!ms_reserve((void **)&t->kept, &t->alloc, (uint64_t)t->n + 1, sizeof(*t->kept)))
		return ms_error("out of memory for %u JIT objects", t->n + 1);
	ms_jitobj_ref(o);
	t->kept[t->n++] = (struct kept){ o, time, end };
	t->dirty = true;
	return 0;
}

struct ms_jitobj *ms_jitobj_table_same(const struct ms_jitobj_table *t, uint64_t entry,
				       const uint8_t *image, uint32_t len)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->kept[i].end == UINT64_MAX && ms_jitobj_is(t->kept[i].o, entry, image, len))
			return t->kept[i].o;
	return NULL;
}

int ms_jitobj_table_add(struct ms_jitobj_table *t, struct ms_jitobj *o, uint64_t time)
{
	for (uint32_t i = 0; i < t->n; i++) {
		struct kept *k = &t->kept[i];

		if (k->o == o && k->end == UINT64_MAX)
			return 0;
	}
	for (uint32_t i = 0; i < t->n; i++) {
		struct kept *k = &t->kept[i];

		if ((ms_jitobj_entry(k->o) == ms_jitobj_entry(o) || overlap(k->o, o)) &&
		    time < k->end)
			k->end = time;
	}
	return push(t, o, time, UINT64_MAX) < 0 ? -1 : 1;
}

uint32_t ms_jitobj_table_unregister(struct ms_jitobj_table *t, uint64_t entry, uint64_t time)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		struct kept *k = &t->kept[i];

		if (ms_jitobj_entry(k->o) == entry && k->time <= time && time < k->end) {
			k->end = time + 1;
			n++;
		}
	}
	return n;
}

uint32_t ms_jitobj_table_unmap(struct ms_jitobj_table *t, uint64_t start, uint64_t end,
			       uint64_t time)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		struct kept *k = &t->kept[i];

		if (k->time < time && time < k->end && overlaps_range(k->o, start, end)) {
			k->end = time;
			n++;
		}
	}
	return n;
}

/* Keep only the objects that keep(k, arg) says. Returns how many went. */
static uint32_t filter(struct ms_jitobj_table *t, bool (*keep)(const struct kept *, uint64_t),
		       uint64_t arg)
{
	uint32_t n = 0, gone = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		if (keep(&t->kept[i], arg)) {
			t->kept[n++] = t->kept[i];
		} else {
			ms_jitobj_unref(t->kept[i].o);
			gone++;
		}
	}
	t->n = n;
	t->dirty |= gone > 0;
	return gone;
}

static bool read_since(const struct kept *k, uint64_t time)
{
	return k->time >= time;
}

static bool not_ended(const struct kept *k, uint64_t now)
{
	return k->end > now;
}

void ms_jitobj_table_exec(struct ms_jitobj_table *t, uint64_t time)
{
	filter(t, read_since, time);
}

uint32_t ms_jitobj_table_expire(struct ms_jitobj_table *t, uint64_t now)
{
	return filter(t, not_ended, now);
}

int ms_jitobj_table_fork(struct ms_jitobj_table *child, const struct ms_jitobj_table *parent,
			 uint64_t time)
{
	struct kept *own = child->kept;
	uint32_t n_own = child->n;

	child->kept = NULL;
	child->n = child->alloc = 0;
	child->dirty = true;
	for (uint32_t i = 0; parent && i < parent->n; i++)
		if (push(child, parent->kept[i].o, parent->kept[i].time, parent->kept[i].end) < 0)
			goto fail;
	for (uint32_t i = 0; i < n_own; i++)
		if (own[i].time >= time && ms_jitobj_table_add(child, own[i].o, own[i].time) < 0)
			goto fail;
	for (uint32_t i = 0; i < n_own; i++)
		ms_jitobj_unref(own[i].o);
	free(own);
	return 0;
fail:
	for (uint32_t i = 0; i < n_own; i++)
		ms_jitobj_unref(own[i].o);
	free(own);
	return -1;
}

uint64_t ms_jitobj_table_next_end(const struct ms_jitobj_table *t)
{
	uint64_t end = UINT64_MAX;

	for (uint32_t i = 0; i < t->n; i++)
		if (t->kept[i].end < end)
			end = t->kept[i].end;
	return end;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->kept < y->kept ? -1 : x->kept > y->kept;
}

/*
 * The index: every object's code, sorted; where ranges overlap, the
 * older object (lower index) keeps the overlap. One pass over the ranges
 * by start: a newer range that overlaps the last one kept starts after
 * it; an older one cuts the last kept short where it starts, and what
 * the newer held past the older one's end is left to no object.
 */
static int index_build(struct ms_jitobj_table *t)
{
	uint32_t total = 0, n = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t c;

		ms_jitobj_code(t->kept[i].o, &c);
		total += c;
	}
	if (!ms_reserve((void **)&t->seg, &t->seg_alloc, total ? total : 1, sizeof(*t->seg)))
		return ms_error("out of memory for an index of %u JIT code ranges", total);
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t c;
		const struct ms_jitobj_code *code = ms_jitobj_code(t->kept[i].o, &c);

		for (uint32_t j = 0; j < c; j++)
			t->seg[n++] = (struct seg){ code[j].start, code[j].end, i };
	}
	qsort(t->seg, n, sizeof(*t->seg), seg_cmp);
	t->n_seg = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct seg s = t->seg[i], *last = t->n_seg ? &t->seg[t->n_seg - 1] : NULL;

		if (last && s.start < last->end) {
			if (s.kept > last->kept) {
				s.start = last->end;
				if (s.start >= s.end)
					continue;
			} else {
				last->end = s.start;
				if (last->start >= last->end)
					t->n_seg--;
			}
		}
		t->seg[t->n_seg++] = s;
	}
	t->dirty = false;
	return 0;
}

/* The first segment whose end is above pc (n_seg: none). */
static uint32_t seg_after(const struct ms_jitobj_table *t, uint64_t pc)
{
	uint32_t lo = 0, hi = t->n_seg;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->seg[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ms_jitobj_table_find(struct ms_jitobj_table *t, uint64_t pc, struct ms_jitobj **o)
{
	uint32_t i;

	if (t->dirty && index_build(t) < 0)
		return -1;
	i = seg_after(t, pc);
	if (i == t->n_seg || t->seg[i].start > pc)
		return 0;
	*o = t->kept[t->seg[i].kept].o;
	return 1;
}

int ms_jitobj_table_gap(struct ms_jitobj_table *t, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	uint32_t i;

	if (t->dirty && index_build(t) < 0)
		return -1;
	i = seg_after(t, pc);
	if (i < t->n_seg && t->seg[i].start < *hi)
		*hi = t->seg[i].start > pc ? t->seg[i].start : *hi;
	if (i > 0 && t->seg[i - 1].end > *lo)
		*lo = t->seg[i - 1].end;
	return 0;
}
