/*
 * A process's JIT objects (unwind/jitobj.h) as ms-unwind sees them over
 * time. Records come ahead of the samples and mappings that may be
 * earlier in time (stream/records.h), so, as for JIT functions
 * (unwind/jit.h), an object's read time R decides, never its arrival, and
 * an object is used from its arrival on until its end, a time: the first
 * sample at or after its end drops it (ms_jitobj_table_expire()):
 *  - unregistered at time T: its end is T + 1 (samples after T);
 *  - a mapping made at Tm over its code with R < Tm: its end is Tm (the
 *    code was replaced; one read after may describe the new code);
 *  - a newer object over its code, or under its entry, read at R2: its
 *    end is R2 (the memory was reused; the JIT's unregistration may have
 *    been missed); the same image under the same entry again is not a
 *    new object;
 *  - exec at Te keeps only the objects read at or after Te; a fork starts
 *    the child with its parent's objects, then its own read at or after.
 * Where two objects kept hold the same address (between the newer one's
 * arrival and the older one's end), the older holds it; an address both
 * would claim in a way that rule cannot settle in one pass belongs to
 * neither (left unnamed, never misnamed).
 *
 * Look-up: a sorted index of disjoint code ranges, rebuilt at the first
 * look-up after a change; a binary search, no allocation.
 */
#ifndef MS_UNWIND_JITOBJTAB_H
#define MS_UNWIND_JITOBJTAB_H

#include <stdint.h>

#include "unwind/jitobj.h"

struct ms_jitobj_table;
struct ms_jitobj_table *ms_jitobj_table_new(void);
void ms_jitobj_table_free(struct ms_jitobj_table *t);

/*
 * The object kept, not ending, that is image (len bytes) under entry: a
 * read of it again is not a new object. NULL when none.
 */
struct ms_jitobj *ms_jitobj_table_same(const struct ms_jitobj_table *t, uint64_t entry,
				       const uint8_t *image, uint32_t len);
/*
 * Keep object o read at time (a reference is taken). Returns 1 when kept,
 * 0 when o is kept already and not ending, -1 after a message.
 */
int ms_jitobj_table_add(struct ms_jitobj_table *t, struct ms_jitobj *o, uint64_t time);
/* entry was unregistered at time: its objects read at or before time end. Returns how many. */
uint32_t ms_jitobj_table_unregister(struct ms_jitobj_table *t, uint64_t entry, uint64_t time);
/* A mapping made at time over [start, end). Returns how many objects it ends. */
uint32_t ms_jitobj_table_unmap(struct ms_jitobj_table *t, uint64_t start, uint64_t end,
			       uint64_t time);
/* exec at time. */
void ms_jitobj_table_exec(struct ms_jitobj_table *t, uint64_t time);
/* child (its own objects, read at or after time, kept) gets parent's first. 0, or -1. */
int ms_jitobj_table_fork(struct ms_jitobj_table *child, const struct ms_jitobj_table *parent,
			 uint64_t time);
/* The earliest end of an object kept (UINT64_MAX: none ends). */
uint64_t ms_jitobj_table_next_end(const struct ms_jitobj_table *t);
/* A sample at time now: the objects that ended by then go. Returns how many. */
uint32_t ms_jitobj_table_expire(struct ms_jitobj_table *t, uint64_t now);
/*
 * The object whose code holds pc, into *o (borrowed: valid while the
 * table keeps it): 1, 0 when none, -1 after a message (the index ran out
 * of memory).
 */
int ms_jitobj_table_find(struct ms_jitobj_table *t, uint64_t pc, struct ms_jitobj **o);
/*
 * Narrow [*lo, *hi) (which holds pc, in no object) to the addresses
 * around pc that no object's code holds. 0, or -1 after a message.
 */
int ms_jitobj_table_gap(struct ms_jitobj_table *t, uint64_t pc, uint64_t *lo, uint64_t *hi);
/* Objects kept. */
uint32_t ms_jitobj_table_count(const struct ms_jitobj_table *t);

#endif
