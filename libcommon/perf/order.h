/*
 * Time ordering of records drained from several rings (perf/order.c).
 *
 * ms-collect drains one ring per CPU and writes a ROUND after each full
 * pass over all of them: each ring is in time order, but rings interleave.
 * As perf's ordered_events does with FINISHED_ROUND, a record not yet read
 * when a pass ends was written after the previous pass ended, so at each
 * ROUND everything up to the greatest time seen before the previous ROUND
 * can go out. Records go out in (time, arrival) order.
 *
 * Times:
 *  - a timed record with time 0 (synthesized by the collector) goes first,
 *    in arrival order; one that comes after later times went out goes out
 *    next, as early as it still can;
 *  - an untimed record (ATTR, INFO, TARGET_EXIT, ...) keeps its place after
 *    everything that arrived before it: its time is the greatest seen;
 *  - a timed record earlier than one already emitted cannot be put in its
 *    place: it is emitted at once and counted as "out-of-order".
 *
 * Memory: entries live in chunks of a byte arena, allocated on demand up to
 * a bound and reused once every entry in them went out; the list of pending
 * entries grows by doubling. No allocation per record after warm-up. When
 * the bound is reached, the oldest entries go out before their round,
 * counted as "order-memory-full".
 *
 * Cost: pending entries are kept in arrival order, each with its time
 * beside it. A ROUND takes out those it makes safe and sorts them by
 * merging the ascending runs they form: one run per ring in a pass, so a
 * few merges instead of a heap's log(n) steps per entry. Only when memory
 * runs short (entries must go out one at a time, before their round) are
 * the pending entries made a binary heap, until the next ROUND.
 *
 * Entries are opaque bytes to this module: emit() gets them back.
 */
#ifndef MS_PERF_ORDER_H
#define MS_PERF_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/records.h"

/* Hands one entry back, in order. Returns 0, or -1 to stop (error). */
typedef int (*ms_order_emit_fn)(void *ctx, const void *data, size_t len);

struct ms_order_chunk {
	unsigned char *mem;
	size_t used;
	uint32_t live;		/* entries in it not yet emitted */
	int32_t next_free;
};

struct ms_order_entry;

/* A pending entry, with its time at hand for comparisons. */
struct ms_order_slot {
	uint64_t time;
	struct ms_order_entry *e;
};

struct ms_order {
	size_t chunk_size;
	uint32_t max_chunks, n_chunks;
	struct ms_order_chunk *chunks;
	int32_t cur;		/* chunk entries are cut from; -1: none */
	int32_t free_list;

	/* pending entries: in arrival order, or a min-heap when is_heap */
	struct ms_order_slot *pend;
	/* room for sorting what a round takes out; as large as pend */
	struct ms_order_slot *scratch[2];
	size_t n_pend, pend_alloc;
	bool is_heap;
	struct ms_order_entry *reserved;

	uint64_t seq;
	uint64_t max_seen;	/* greatest time added */
	uint64_t round_limit;	/* max_seen at the previous ROUND */
	uint64_t last_emitted;	/* greatest time emitted */
	bool failed;

	ms_order_emit_fn emit;
	void *ctx;
	struct ms_problems *problems;
	uint64_t n_out_of_order, n_forced;
};

enum ms_order_time {
	MS_ORDER_TIMED,		/* the time given, 0 for synthesized */
	MS_ORDER_UNTIMED,	/* keep the place of arrival */
};

/*
 * max_bytes bounds the arena, cut in chunks of chunk_bytes (an entry is at
 * most chunk_bytes minus a few bytes of bookkeeping). problems counts
 * out-of-order records and forced flushes.
 */
void ms_order_init(struct ms_order *o, size_t max_bytes, size_t chunk_bytes,
		   ms_order_emit_fn emit, void *ctx, struct ms_problems *problems);
/*
 * Room for an entry of len bytes, to fill and then commit; one reservation
 * at a time. May emit the oldest entries first when memory is bound.
 * Returns NULL after a message (entry too large, no memory, emit failed).
 */
void *ms_order_reserve(struct ms_order *o, size_t len);
/* Queue the reserved entry (or emit it at once, if out of order). */
int ms_order_commit(struct ms_order *o, enum ms_order_time how, uint64_t time);
/* reserve, copy and commit */
int ms_order_add(struct ms_order *o, enum ms_order_time how, uint64_t time,
		 const void *data, size_t len);
/* A ROUND: emit what the previous round makes safe. */
int ms_order_round(struct ms_order *o);
/* Emit everything (end of input). */
int ms_order_flush(struct ms_order *o);
size_t ms_order_pending(const struct ms_order *o);
void ms_order_release(struct ms_order *o);

#endif
