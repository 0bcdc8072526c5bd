/*
 * Reading one perf ring buffer: the metadata page and 2^n data pages into
 * which the kernel writes records (struct perf_event_header + body).
 *
 * Invariants:
 *  - only the kernel moves data_head; only the reader moves data_tail, and
 *    it does so with a release store after it has finished with the bytes,
 *    so the kernel never overwrites a record that is still being copied;
 *  - a record is handed out contiguous: in place when it does not wrap, in
 *    the caller's bounce buffer (MS_RING_RECORD_MAX bytes, reused, never
 *    allocated per record) when it does;
 *  - a header whose size is below 8, not a multiple of 8, or beyond what
 *    the kernel published is not trusted: the rest of the published data is
 *    skipped and the call reports it once.
 *
 * A pass: ms_ring_begin() takes a snapshot of data_head, ms_ring_next()
 * returns the records up to it one by one, ms_ring_commit() gives the space
 * of every record returned so far back to the kernel. Calling begin again
 * without commit reads the same records again (a peek).
 *
 * Rings are usually mapped from an event fd (ms_ring_mmap); tests build
 * one over plain memory (ms_ring_init_mem).
 */
#ifndef MS_PERF_RING_H
#define MS_PERF_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

/* perf_event_header.size is 16 bits: no record is larger. */
#define MS_RING_RECORD_MAX 65536u

struct ms_ring {
	struct perf_event_mmap_page *meta;
	const uint8_t *data;
	uint64_t size;		/* bytes of data, a power of two */
	uint64_t head;		/* data_head at ms_ring_begin() */
	uint64_t pos;		/* next record to return */
	uint64_t last;		/* the record ms_ring_next() returned last */
	uint64_t tail;		/* last value stored in data_tail */
	uint8_t *bounce;	/* borrowed; MS_RING_RECORD_MAX bytes */
	void *map;		/* the mapping, or NULL for a memory ring */
	size_t map_len;
};

/*
 * Map 1 + data_pages pages of the event fd; data_pages must be a power of
 * two. Returns 0, or -1 after a message naming cpu.
 */
int ms_ring_mmap(struct ms_ring *r, int fd, uint32_t data_pages, uint8_t *bounce, int cpu);
/*
 * The data pages per ring for n_rings rings when want is a default: want
 * halved until the rings (their data pages and one more each) fit in
 * lockable pages, but never below floor (a power of two, at most want):
 * under floor, the mapping is left to fail and say so.
 */
uint32_t ms_ring_pages_fit(uint32_t want, uint32_t floor, uint32_t n_rings, uint64_t lockable);
/* A ring over memory the caller owns (tests). size must be a power of two. */
void ms_ring_init_mem(struct ms_ring *r, struct perf_event_mmap_page *meta,
		      const uint8_t *data, uint64_t size, uint8_t *bounce);
/* Unmap (if mapped) and clear. */
void ms_ring_release(struct ms_ring *r);

/* Snapshot data_head (acquire); returns the bytes published and unread. */
uint64_t ms_ring_begin(struct ms_ring *r);
/*
 * Next record of the pass: 1 with *rec and *len set (valid until the next
 * call on this ring), 0 when the snapshot is exhausted, -1 when the ring
 * holds a header that cannot be trusted (message printed; the published
 * data is skipped, so the next call returns 0).
 */
int ms_ring_next(struct ms_ring *r, const uint8_t **rec, uint32_t *len);
/*
 * Put back the record the last ms_ring_next() returned: the next call
 * returns it again (a reader that cannot take it now leaves it in the ring).
 */
void ms_ring_unread(struct ms_ring *r);
/* Give the space of every record returned so far back to the kernel. */
void ms_ring_commit(struct ms_ring *r);
/* Bytes the kernel has published and the reader not yet given back. */
uint64_t ms_ring_used(const struct ms_ring *r);

#endif
