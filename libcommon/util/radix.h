/*
 * A stable sort of 64-bit keys, each with a position (the caller's index of
 * what it sorts): an LSD radix sort, a byte per pass. Tables sorted once per
 * file (libc's 10,000 symbols, its 2,000 units' ranges, a unit's lines) cost
 * a few passes over their keys this way, where qsort costs a call of a
 * compare function per step. Bytes in which all keys agree cost no pass, so
 * addresses of one module usually take three or four.
 */
#ifndef MS_UTIL_RADIX_H
#define MS_UTIL_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* A key and what travels with it (the caller's index, or a small record's fields). */
struct ms_rkey {
	uint64_t key;
	uint32_t pos;
	uint32_t aux;
};

/*
 * Sort a[0..n) by key; keys that are equal keep their order. tmp has room
 * for n keys. Returns the sorted array, a or tmp.
 */
struct ms_rkey *ms_radix_sort(struct ms_rkey *a, struct ms_rkey *tmp, size_t n);

#endif
