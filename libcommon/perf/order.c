/*
 * Time ordering of ring records: see order.h. Pending entries are slots
 * (time, entry) in arrival order; a round partitions them into those it
 * makes safe and the rest, then sorts the safe ones by merging the
 * ascending runs they form. The rings were drained in turn, so these are
 * few: a ring's records of one pass are one run. When memory runs short
 * the slots become a binary min-heap, from which the oldest entry goes out
 * one at a time, until the next round. Either way entries go out in
 * (time, arrival) order: ties in time compare the arrival numbers.
 *
 * Entry bytes live in arena chunks, each counting its live entries so that
 * it is reused as soon as the last of them went out. Rings are drained in
 * rounds, so entries go out in roughly the order they came and chunks empty
 * out roughly in turn.
 */
#include "perf/order.h"
#include "util/error.h"
#include "util/prefault.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct ms_order_entry {
	uint64_t seq;		/* arrival, for ties in time */
	uint32_t len;		/* payload bytes after this header */
	int32_t chunk;
};

#define ENTRY_HEAD ((sizeof(struct ms_order_entry) + 7) & ~(size_t)7)

static size_t entry_size(size_t len)
{
	return (ENTRY_HEAD + len + 7) & ~(size_t)7;
}

void ms_order_init(struct ms_order *o, size_t max_bytes, size_t chunk_bytes,
		   ms_order_emit_fn emit, void *ctx, struct ms_problems *problems)
{
	memset(o, 0, sizeof(*o));
	o->chunk_size = chunk_bytes & ~(size_t)7;
	o->max_chunks = max_bytes / o->chunk_size;
	if (!o->max_chunks)
		o->max_chunks = 1;
	o->cur = -1;
	o->free_list = -1;
	o->emit = emit;
	o->ctx = ctx;
	o->problems = problems;
}

/* (time, arrival) order; the entry is read only on a tie in time */
static bool before(const struct ms_order_slot *a, const struct ms_order_slot *b)
{
	return a->time < b->time || (a->time == b->time && a->e->seq < b->e->seq);
}

/* ---- the heap, when memory runs short ---------------------------------- */

static void heap_up(struct ms_order_slot *h, size_t i)
{
	struct ms_order_slot x = h[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!before(&x, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = x;
}

static void heap_down(struct ms_order_slot *h, size_t n, size_t i)
{
	struct ms_order_slot x = h[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= n)
			break;
		if (child + 1 < n && before(&h[child + 1], &h[child]))
			child++;
		if (!before(&h[child], &x))
			break;
		h[i] = h[child];
		i = child;
	}
	h[i] = x;
}

static void make_heap(struct ms_order *o)
{
	for (size_t i = o->n_pend / 2; i-- > 0;)
		heap_down(o->pend, o->n_pend, i);
	o->is_heap = true;
}

/* ---- sorting what a round takes out ------------------------------------ */

/* End of the ascending run of slots that starts at i < n. */
static size_t run_end(const struct ms_order_slot *a, size_t i, size_t n)
{
	for (i++; i < n && !before(&a[i], &a[i - 1]); i++)
		;
	return i;
}

static void merge(const struct ms_order_slot *a, const struct ms_order_slot *a_end,
		  const struct ms_order_slot *b, const struct ms_order_slot *b_end,
		  struct ms_order_slot *out)
{
	while (a < a_end && b < b_end)
		*out++ = before(b, a) ? *b++ : *a++;
	/* one of the two is used up */
	memcpy(out, a, (size_t)(a_end - a) * sizeof(*a));
	out += a_end - a;
	memcpy(out, b, (size_t)(b_end - b) * sizeof(*b));
}

/*
 * Sort the n slots at a by merging adjacent ascending runs in passes, a
 * and b (room for n) taking turns as the source. Returns the one that
 * holds the result: a when the slots were in order already.
 */
static struct ms_order_slot *sort_slots(struct ms_order_slot *a, struct ms_order_slot *b,
					size_t n)
{
	for (;;) {
		size_t i = 0, m = n ? run_end(a, 0, n) : 0;
		struct ms_order_slot *t;

		if (m >= n)
			return a;
		for (;;) {
			size_t e = run_end(a, m, n);

			merge(a + i, a + m, a + m, a + e, b + i);
			i = e;
			if (i >= n)
				break;
			m = run_end(a, i, n);
			if (m >= n) {
				memcpy(b + i, a + i, (n - i) * sizeof(*a));
				break;
			}
		}
		t = a;
		a = b;
		b = t;
	}
}

/* ---- emitting ---------------------------------------------------------- */

/* The entry went out (or was never queued): give its bytes back. */
static void entry_done(struct ms_order *o, struct ms_order_entry *e)
{
	struct ms_order_chunk *c = &o->chunks[e->chunk];

	if (--c->live)
		return;
	if (e->chunk == o->cur) {
		c->used = 0;
	} else {
		c->next_free = o->free_list;
		o->free_list = e->chunk;
	}
}

static int emit_entry(struct ms_order *o, const struct ms_order_slot *s)
{
	struct ms_order_entry *e = s->e;
	int ret = 0;

	if (!o->failed && o->emit(o->ctx, (const unsigned char *)e + ENTRY_HEAD, e->len) < 0) {
		o->failed = true;
		ret = -1;
	}
	if (s->time > o->last_emitted)
		o->last_emitted = s->time;
	entry_done(o, e);
	return ret;
}

/* Emit the oldest pending entry (of the heap). */
static int emit_min(struct ms_order *o)
{
	struct ms_order_slot min = o->pend[0];

	if (--o->n_pend) {
		o->pend[0] = o->pend[o->n_pend];
		heap_down(o->pend, o->n_pend, 0);
	}
	return emit_entry(o, &min);
}

/* Emit the pending entries of time up to limit, from the list. */
static int emit_sorted(struct ms_order *o, uint64_t limit)
{
	struct ms_order_slot *p = o->pend, *out = o->scratch[0];
	size_t n = o->n_pend, n_out = 0, n_kept = 0;

	/* both stores, one count: no branch to mispredict at the limit */
	for (size_t i = 0; i < n; i++) {
		struct ms_order_slot x = p[i];
		size_t go = x.time <= limit;

		out[n_out] = x;
		p[n_kept] = x;
		n_out += go;
		n_kept += !go;
	}
	o->n_pend = n_kept;
	if (!n_out)
		return 0;
	out = sort_slots(out, o->scratch[1], n_out);
	/* emit_entry() for each, with the greatest time (the last) noted once */
	for (size_t i = 0; i < n_out; i++) {
		struct ms_order_entry *e = out[i].e;
		int ret = o->emit(o->ctx, (const unsigned char *)e + ENTRY_HEAD, e->len);

		entry_done(o, e);
		if (ret < 0) {
			o->failed = true;
			if (out[i].time > o->last_emitted)
				o->last_emitted = out[i].time;
			/* what did not go out stays pending */
			memcpy(p + o->n_pend, out + i + 1, (n_out - i - 1) * sizeof(*out));
			o->n_pend += n_out - i - 1;
			return -1;
		}
	}
	if (out[n_out - 1].time > o->last_emitted)
		o->last_emitted = out[n_out - 1].time;
	return 0;
}

static int emit_until(struct ms_order *o, uint64_t limit)
{
	if (o->failed)
		return -1;
	if (!o->is_heap)
		return emit_sorted(o, limit);
	while (o->n_pend && o->pend[0].time <= limit)
		if (emit_min(o) < 0)
			return -1;
	return 0;
}

/* A chunk with room for need bytes: fresh, reused, or freed by emitting. */
static int find_room(struct ms_order *o, size_t need)
{
	bool forced = false;

	for (;;) {
		if (o->cur >= 0 && o->chunks[o->cur].used + need <= o->chunk_size)
			return 0;
		if (o->free_list >= 0) {
			o->cur = o->free_list;
			o->free_list = o->chunks[o->cur].next_free;
			o->chunks[o->cur].used = 0;
			continue;
		}
		if (o->n_chunks < o->max_chunks) {
			struct ms_order_chunk *c;

			if (!o->chunks) {
				o->chunks = calloc(o->max_chunks, sizeof(*o->chunks));
				if (!o->chunks)
					return ms_error("out of memory for the time ordering");
			}
			c = &o->chunks[o->n_chunks];
			c->mem = malloc(o->chunk_size);
			if (!c->mem)
				return ms_error("out of memory for the time ordering (%u chunks of %zu bytes)",
						o->n_chunks + 1, o->chunk_size);
			/* filled whole before the next: its pages at once, not a fault each */
			ms_populate(c->mem, o->chunk_size);
			c->used = 0;
			c->live = 0;
			c->next_free = -1;
			o->cur = (int32_t)o->n_chunks++;
			continue;
		}
		if (!o->n_pend)
			return ms_error("time ordering: no room for an entry of %zu bytes", need);
		if (!o->is_heap)
			make_heap(o);
		if (!forced) {
			forced = true;
			o->n_forced++;
			if (o->problems)
				ms_problems_add(o->problems, "order-memory-full",
						"time ordering held %zu bytes: records up to time %" PRIu64
						" went out before their round",
						(size_t)o->max_chunks * o->chunk_size, o->pend[0].time);
		}
		if (emit_min(o) < 0)
			return -1;
	}
}

/* Cut need bytes for an entry of len from the current chunk, which has room. */
static void *cut(struct ms_order *o, size_t need, size_t len)
{
	struct ms_order_chunk *c = &o->chunks[o->cur];
	struct ms_order_entry *e = (struct ms_order_entry *)(c->mem + c->used);

	c->used += need;
	c->live++;
	e->len = (uint32_t)len;
	e->chunk = o->cur;
	o->reserved = e;
	return (unsigned char *)e + ENTRY_HEAD;
}

static __attribute__((noinline)) void *reserve_slow(struct ms_order *o, size_t len)
{
	size_t need = entry_size(len);

	if (o->failed)
		return NULL;
	if (o->reserved) {
		ms_error("time ordering: an entry is already reserved");
		return NULL;
	}
	if (need > o->chunk_size || len > UINT32_MAX) {
		ms_error("time ordering: an entry of %zu bytes exceeds the chunk size %zu",
			 len, o->chunk_size);
		return NULL;
	}
	if (find_room(o, need) < 0)
		return NULL;
	return cut(o, need, len);
}

void *ms_order_reserve(struct ms_order *o, size_t len)
{
	size_t need = entry_size(len);

	/* the common case: the current chunk has room (need did not wrap) */
	if (!o->failed && !o->reserved && o->cur >= 0 && len <= UINT32_MAX &&
	    o->chunks[o->cur].used + need <= o->chunk_size)
		return cut(o, need, len);
	return reserve_slow(o, len);
}

/* Room for one more pending slot, and for sorting them all. */
static int grow_pend(struct ms_order *o)
{
	size_t alloc = o->pend_alloc ? 2 * o->pend_alloc : 1024;

	for (int i = 0; i < 2; i++) {
		struct ms_order_slot *s = realloc(o->scratch[i], alloc * sizeof(*s));

		if (!s)
			return ms_error("out of memory for the time ordering (%zu entries)", alloc);
		o->scratch[i] = s;
	}
	{
		struct ms_order_slot *s = realloc(o->pend, alloc * sizeof(*s));

		if (!s)
			return ms_error("out of memory for the time ordering (%zu entries)", alloc);
		o->pend = s;
	}
	o->pend_alloc = alloc;
	return 0;
}

/* Queue entry e of the given time; pend has room. */
static int pend_push(struct ms_order *o, struct ms_order_entry *e, uint64_t time)
{
	struct ms_order_slot *s = &o->pend[o->n_pend];

	s->time = time;
	s->e = e;
	if (o->is_heap)
		heap_up(o->pend, o->n_pend);
	o->n_pend++;
	return 0;
}

static __attribute__((noinline)) int push_grow(struct ms_order *o, struct ms_order_entry *e,
					       uint64_t time)
{
	if (grow_pend(o) < 0) {
		entry_done(o, e);
		o->failed = true;
		return -1;
	}
	return pend_push(o, e, time);
}

/* A record earlier than one already emitted goes out at once, counted. */
static __attribute__((noinline)) int emit_late(struct ms_order *o, struct ms_order_entry *e,
					       uint64_t time)
{
	struct ms_order_slot now = { time, e };

	o->n_out_of_order++;
	if (o->problems)
		ms_problems_add(o->problems, "out-of-order",
				"a record of time %" PRIu64 " came after time %" PRIu64
				" was emitted: emitted out of order",
				time, o->last_emitted);
	if (o->failed) {
		entry_done(o, e);
		return -1;
	}
	return emit_entry(o, &now);
}

int ms_order_commit(struct ms_order *o, enum ms_order_time how, uint64_t time)
{
	struct ms_order_entry *e = o->reserved;

	if (!e)
		return ms_error("time ordering: commit without a reservation");
	o->reserved = NULL;
	e->seq = o->seq++;
	if (how == MS_ORDER_UNTIMED)
		time = o->max_seen;
	else if (!time)
		/* synthesized: first, or as early as is still possible */
		time = o->last_emitted;
	else if (time < o->last_emitted)
		return emit_late(o, e, time);
	if (time > o->max_seen)
		o->max_seen = time;
	if (o->n_pend == o->pend_alloc)
		return push_grow(o, e, time);
	return pend_push(o, e, time);
}

int ms_order_add(struct ms_order *o, enum ms_order_time how, uint64_t time,
		 const void *data, size_t len)
{
	void *p = ms_order_reserve(o, len);

	if (!p)
		return -1;
	memcpy(p, data, len);
	return ms_order_commit(o, how, time);
}

int ms_order_round(struct ms_order *o)
{
	uint64_t limit = o->round_limit;
	int ret;

	o->round_limit = o->max_seen;
	ret = emit_until(o, limit);
	/* a heap is a list in some order, which is all a round needs */
	o->is_heap = false;
	return ret;
}

int ms_order_flush(struct ms_order *o)
{
	int ret = emit_until(o, UINT64_MAX);

	o->is_heap = false;
	return ret;
}

size_t ms_order_pending(const struct ms_order *o)
{
	return o->n_pend;
}

void ms_order_release(struct ms_order *o)
{
	for (uint32_t i = 0; i < o->n_chunks; i++)
		free(o->chunks[i].mem);
	free(o->chunks);
	free(o->pend);
	free(o->scratch[0]);
	free(o->scratch[1]);
	memset(o, 0, sizeof(*o));
	o->cur = -1;
	o->free_list = -1;
}
