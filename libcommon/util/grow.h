/*
 * Growing an array by doubling: the one way every table in libcommon
 * makes room, so that no hot path allocates more than O(log n) times.
 */
#ifndef MS_UTIL_GROW_H
#define MS_UTIL_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Make *arr (of *alloc elements of size bytes) hold at least need: the
 * capacity doubles from 64 until it does (capped at UINT32_MAX). False,
 * with *arr and *alloc unchanged and no message, when memory runs out or
 * need passes UINT32_MAX; the caller says what it was growing.
 */
bool ms_reserve(void **arr, uint32_t *alloc, uint64_t need, size_t size);

#endif
