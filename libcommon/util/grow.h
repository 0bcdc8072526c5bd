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

/*
 * Make *arr (of *alloc elements of sz bytes) hold row n: ms_reserve() for
 * n + 1, for tables whose rows are 32-bit ids below UINT32_MAX. Returns 0,
 * or -1 after a message naming the limit or the lack of memory.
 */
int ms_grow(void *arr, uint32_t *alloc, uint32_t n, size_t sz);
#define MS_GROW(arr, n, alloc) ms_grow(&(arr), &(alloc), (n), sizeof(*(arr)))

#endif
