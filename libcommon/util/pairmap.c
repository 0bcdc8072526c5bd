#include "util/pairmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

struct pair_ctx {
	const struct ms_pairmap *m;
};

static bool pair_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_pairmap *m = ctx;
	const uint32_t *k = key;

	return m->keys[e][0] == k[0] && m->keys[e][1] == k[1];
}

static uint32_t pair_hash(uint32_t a, uint32_t b)
{
	return ms_hash_u64((uint64_t)a << 32 | b);
}

uint32_t ms_pairmap_find(const struct ms_pairmap *m, uint32_t a, uint32_t b)
{
	uint32_t k[2] = { a, b };
	uint32_t e = ms_index_find(&m->ix, pair_hash(a, b), pair_eq, m, k);

	return e == MS_INDEX_EMPTY ? UINT32_MAX : e;
}

uint32_t ms_pairmap_get(struct ms_pairmap *m, uint32_t a, uint32_t b, bool *added)
{
	uint32_t e = ms_pairmap_find(m, a, b);

	if (added)
		*added = false;
	if (e != UINT32_MAX)
		return e;
	if (MS_GROW(m->keys, m->n, m->alloc) < 0)
		return UINT32_MAX;
	e = m->n;
	m->keys[e][0] = a;
	m->keys[e][1] = b;
	if (ms_index_add(&m->ix, pair_hash(a, b), e) < 0) {
		ms_error("out of memory");
		return UINT32_MAX;
	}
	m->n++;
	if (added)
		*added = true;
	return e;
}

void ms_pairmap_release(struct ms_pairmap *m)
{
	ms_index_release(&m->ix);
	free(m->keys);
	memset(m, 0, sizeof(*m));
}
