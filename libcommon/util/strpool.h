/*
 * A pool of strings and small arrays that never move: the symbolizer hands
 * out pointers into it (demangled names, inline chains) that must stay
 * valid until the pool is released, so it grows by adding blocks, never by
 * reallocating one.
 */
#ifndef MS_UTIL_STRPOOL_H
#define MS_UTIL_STRPOOL_H

#include <stddef.h>

struct ms_strpool_block;

struct ms_strpool {
	struct ms_strpool_block *head;	/* the block being filled, newest first */
	size_t used;			/* bytes used in head */
	size_t total;			/* bytes handed out, for statistics */
};

#define MS_STRPOOL_INIT { 0 }

void ms_strpool_init(struct ms_strpool *p);
/* Free every block: every pointer handed out becomes invalid. */
void ms_strpool_release(struct ms_strpool *p);
/* size bytes aligned for any object, or NULL when out of memory. */
void *ms_strpool_alloc(struct ms_strpool *p, size_t size);
/* A NUL-terminated copy of s[0..len), or NULL when out of memory. */
const char *ms_strpool_add(struct ms_strpool *p, const char *s, size_t len);

#endif
