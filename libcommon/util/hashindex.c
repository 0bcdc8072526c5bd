#include <stddef.h>
#include <stdlib.h>

#include "util/hashindex.h"

static struct ms_index_slot *find_slot(struct ms_index_slot *slots, uint32_t mask,
				       uint32_t hash)
{
	uint32_t i = hash & mask;

	while (slots[i].entry != MS_INDEX_EMPTY)
		i = (i + 1) & mask;
	return &slots[i];
}

uint32_t ms_index_find(const struct ms_index *ix, uint32_t hash,
		       ms_index_eq_fn eq, const void *ctx, const void *key)
{
	uint32_t i;

	if (!ix->slots)
		return MS_INDEX_EMPTY;
	for (i = hash & ix->mask; ix->slots[i].entry != MS_INDEX_EMPTY; i = (i + 1) & ix->mask)
		if (ix->slots[i].hash == hash && eq(ctx, ix->slots[i].entry, key))
			return ix->slots[i].entry;
	return MS_INDEX_EMPTY;
}

static int grow(struct ms_index *ix)
{
	uint64_t cap = ix->slots ? (uint64_t)ix->mask + 1 : 0;
	uint64_t new_cap = cap ? cap * 2 : 64;
	struct ms_index_slot *slots;
	uint64_t i;

	/* Entries are uint32_t with one value reserved: 2^32 slots suffice. */
	if (new_cap > ((uint64_t)1 << 32) || new_cap > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = malloc(new_cap * sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < new_cap; i++)
		slots[i].entry = MS_INDEX_EMPTY;
	for (i = 0; i < cap; i++)
		if (ix->slots[i].entry != MS_INDEX_EMPTY)
			*find_slot(slots, new_cap - 1, ix->slots[i].hash) = ix->slots[i];
	free(ix->slots);
	ix->slots = slots;
	ix->mask = new_cap - 1;
	return 0;
}

int ms_index_add(struct ms_index *ix, uint32_t hash, uint32_t entry)
{
	struct ms_index_slot *s;

	/* Keep the load under 3/4 so probe runs stay short. */
	if (!ix->slots || (uint64_t)(ix->n + 1) * 4 > ((uint64_t)ix->mask + 1) * 3)
		if (grow(ix) < 0)
			return -1;
	s = find_slot(ix->slots, ix->mask, hash);
	s->hash = hash;
	s->entry = entry;
	ix->n++;
	return 0;
}

void ms_index_release(struct ms_index *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->mask = 0;
	ix->n = 0;
}

/* FNV-1a, folded to 32 bits. */
uint32_t ms_hash_bytes(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

/* The splitmix64 finalizer: every input bit moves every output bit. */
uint32_t ms_hash_u64(uint64_t v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ull;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebull;
	v ^= v >> 31;
	return (uint32_t)v;
}

uint32_t ms_hash_mix(uint32_t h, uint64_t v)
{
	return ms_hash_u64(v ^ ((uint64_t)h << 32 | h));
}
