/*
 * An open-addressing index from a 32-bit hash to entries of a table the
 * caller keeps (the builder's interning tables). The index stores only the
 * hash and the entry number; the caller compares keys through eq, so one
 * index type serves strings, frames, stack nodes and threads.
 *
 * Iteration order never leaks out: the builder numbers entries in order of
 * insertion, so hash order cannot change a capture.
 */
#ifndef MS_UTIL_HASHINDEX_H
#define MS_UTIL_HASHINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ms_index_slot {
	uint32_t hash;
	uint32_t entry;		/* MS_INDEX_EMPTY when free */
};

struct ms_index {
	struct ms_index_slot *slots;
	uint32_t mask;		/* capacity - 1; 0 while slots is NULL */
	uint32_t n;
};

#define MS_INDEX_EMPTY UINT32_MAX
#define MS_INDEX_INIT { NULL, 0, 0 }

/* Whether entry's key equals key. */
typedef bool (*ms_index_eq_fn)(const void *ctx, uint32_t entry, const void *key);

/* The entry whose key equals key, or MS_INDEX_EMPTY. */
uint32_t ms_index_find(const struct ms_index *ix, uint32_t hash,
		       ms_index_eq_fn eq, const void *ctx, const void *key);
/* Add entry (whose key is not in the index yet). -1 when out of memory. */
int ms_index_add(struct ms_index *ix, uint32_t hash, uint32_t entry);
void ms_index_release(struct ms_index *ix);

/* Hashes: fixed functions, no seed, so runs are reproducible. */
uint32_t ms_hash_bytes(const void *p, size_t len);
uint32_t ms_hash_u64(uint64_t v);
uint32_t ms_hash_mix(uint32_t h, uint64_t v);

#endif
