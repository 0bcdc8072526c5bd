/*
 * Time ordering of ring records: see order.h. Pending entries sit in a
 * binary min-heap keyed by (time, arrival); their bytes in arena chunks,
 * each chunk counting its live entries so that it is reused as soon as the
 * last of them went out. Rings are drained in rounds, so entries go out in
 * roughly the order they came and chunks empty out roughly in turn.
 */
#include "perf/order.h"
#include "util/error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct ms_order_entry {
	uint64_t time;
	uint64_t seq;
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

static bool before(const struct ms_order_entry *a, const struct ms_order_entry *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_up(struct ms_order *o, size_t i)
{
	struct ms_order_entry *e = o->heap[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!before(e, o->heap[parent]))
			break;
		o->heap[i] = o->heap[parent];
		i = parent;
	}
	o->heap[i] = e;
}

static void heap_down(struct ms_order *o, size_t i)
{
	struct ms_order_entry *e = o->heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= o->n_heap)
			break;
		if (child + 1 < o->n_heap && before(o->heap[child + 1], o->heap[child]))
			child++;
		if (!before(o->heap[child], e))
			break;
		o->heap[i] = o->heap[child];
		i = child;
	}
	o->heap[i] = e;
}

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

static int emit_entry(struct ms_order *o, struct ms_order_entry *e)
{
	int ret = 0;

	if (!o->failed && o->emit(o->ctx, (const unsigned char *)e + ENTRY_HEAD, e->len) < 0) {
		o->failed = true;
		ret = -1;
	}
	if (e->time > o->last_emitted)
		o->last_emitted = e->time;
	entry_done(o, e);
	return ret;
}

/* Emit the oldest pending entry. */
static int emit_min(struct ms_order *o)
{
	struct ms_order_entry *e = o->heap[0];

	if (--o->n_heap) {
		o->heap[0] = o->heap[o->n_heap];
		heap_down(o, 0);
	}
	return emit_entry(o, e);
}

static int emit_until(struct ms_order *o, uint64_t limit, bool all)
{
	if (o->failed)
		return -1;
	while (o->n_heap && (all || o->heap[0]->time <= limit))
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
			c->used = 0;
			c->live = 0;
			c->next_free = -1;
			o->cur = (int32_t)o->n_chunks++;
			continue;
		}
		if (!o->n_heap)
			return ms_error("time ordering: no room for an entry of %zu bytes", need);
		if (!forced) {
			forced = true;
			o->n_forced++;
			if (o->problems)
				ms_problems_add(o->problems, "order-memory-full",
						"time ordering held %zu bytes: records up to time %" PRIu64
						" went out before their round",
						(size_t)o->max_chunks * o->chunk_size, o->heap[0]->time);
		}
		if (emit_min(o) < 0)
			return -1;
	}
}

void *ms_order_reserve(struct ms_order *o, size_t len)
{
	size_t need = entry_size(len);
	struct ms_order_chunk *c;
	struct ms_order_entry *e;

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
	c = &o->chunks[o->cur];
	e = (struct ms_order_entry *)(c->mem + c->used);
	c->used += need;
	c->live++;
	e->len = (uint32_t)len;
	e->chunk = o->cur;
	o->reserved = e;
	return (unsigned char *)e + ENTRY_HEAD;
}

static int heap_push(struct ms_order *o, struct ms_order_entry *e)
{
	if (o->n_heap == o->heap_alloc) {
		size_t alloc = o->heap_alloc ? 2 * o->heap_alloc : 1024;
		struct ms_order_entry **heap = realloc(o->heap, alloc * sizeof(*heap));

		if (!heap)
			return ms_error("out of memory for the time ordering (%zu entries)", alloc);
		o->heap = heap;
		o->heap_alloc = alloc;
	}
	o->heap[o->n_heap] = e;
	heap_up(o, o->n_heap++);
	return 0;
}

int ms_order_commit(struct ms_order *o, enum ms_order_time how, uint64_t time)
{
	struct ms_order_entry *e = o->reserved;

	if (!e)
		return ms_error("time ordering: commit without a reservation");
	o->reserved = NULL;
	e->seq = o->seq++;
	if (how == MS_ORDER_UNTIMED) {
		time = o->max_seen;
	} else if (!time) {
		/* synthesized: first, or as early as is still possible */
		time = o->last_emitted;
	} else if (time < o->last_emitted) {
		o->n_out_of_order++;
		if (o->problems)
			ms_problems_add(o->problems, "out-of-order",
					"a record of time %" PRIu64 " came after time %" PRIu64
					" was emitted: emitted out of order",
					time, o->last_emitted);
		e->time = time;
		if (o->failed) {
			entry_done(o, e);
			return -1;
		}
		if (o->emit(o->ctx, (const unsigned char *)e + ENTRY_HEAD, e->len) < 0)
			o->failed = true;
		entry_done(o, e);
		return o->failed ? -1 : 0;
	}
	e->time = time;
	if (time > o->max_seen)
		o->max_seen = time;
	if (heap_push(o, e) < 0) {
		entry_done(o, e);
		o->failed = true;
		return -1;
	}
	return 0;
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

	o->round_limit = o->max_seen;
	return emit_until(o, limit, false);
}

int ms_order_flush(struct ms_order *o)
{
	return emit_until(o, 0, true);
}

size_t ms_order_pending(const struct ms_order *o)
{
	return o->n_heap;
}

void ms_order_release(struct ms_order *o)
{
	for (uint32_t i = 0; i < o->n_chunks; i++)
		free(o->chunks[i].mem);
	free(o->chunks);
	free(o->heap);
	memset(o, 0, sizeof(*o));
	o->cur = -1;
	o->free_list = -1;
}
