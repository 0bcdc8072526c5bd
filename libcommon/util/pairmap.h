#ifndef MS_UTIL_PAIRMAP_H
#define MS_UTIL_PAIRMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "util/hashindex.h"

/*
 * A map from a pair of 32-bit keys to dense rows 0..n-1 in order of first
 * insertion, so that row order never depends on hashing.
 */
struct ms_pairmap {
	struct ms_index ix;
	uint32_t (*keys)[2];
	uint32_t n, alloc;
};
#define MS_PAIRMAP_INIT { MS_INDEX_INIT, NULL, 0, 0 }
/* The row of (a, b), or UINT32_MAX. */
uint32_t ms_pairmap_find(const struct ms_pairmap *m, uint32_t a, uint32_t b);
/* The row of (a, b), added when new (*added says so); UINT32_MAX when out of memory (after a message). */
uint32_t ms_pairmap_get(struct ms_pairmap *m, uint32_t a, uint32_t b, bool *added);
void ms_pairmap_release(struct ms_pairmap *m);

#endif
