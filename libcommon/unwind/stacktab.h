/*
 * The unique stacks of a stream (an end reason and frames), numbered from
 * 0 in the order they first appear: the ids of ms-unwind's STACK_DEF
 * records, so that the stages after it see each stack's frames once.
 *
 * Bounded by a number of stacks and of frames kept: a stack that does not
 * fit is not numbered (the caller writes it whole, as a STACK record) and
 * counted. Memory grows by doubling, never per stack looked up.
 */
#ifndef MS_UNWIND_STACKTAB_H
#define MS_UNWIND_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

#include "stream/records.h"

#define MS_STACKTAB_STACKS_MAX (1u << 21)
#define MS_STACKTAB_FRAMES_MAX (1u << 24)	/* 16 bytes each: 256 MiB */

struct ms_stacktab;

struct ms_stacktab *ms_stacktab_new(uint32_t max_stacks, uint32_t max_frames);
enum ms_stacktab_result {
	MS_STACKTAB_FOUND = 0,	/* *id is the stack's */
	MS_STACKTAB_ADDED = 1,	/* numbered now: *id is new */
	MS_STACKTAB_FULL = 2,	/* not kept (a bound, or no memory); no id */
};
/* The id of s's reason and frames (the per-sample fields are not part of it). */
int ms_stacktab_intern(struct ms_stacktab *t, const struct ms_stack *s, uint32_t *id);
uint32_t ms_stacktab_count(const struct ms_stacktab *t);
/* Stacks that were not kept because the table was full. */
uint64_t ms_stacktab_refused(const struct ms_stacktab *t);
void ms_stacktab_free(struct ms_stacktab *t);

#endif
