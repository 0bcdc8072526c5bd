#include "unwind/addrspace.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/*
 * Generations come from one counter, so that (generation, address) names
 * one address space's state among all of them: a cache shared by every
 * process can key on it.
 */
static uint64_t last_generation;

static void new_generation(struct ms_addrspace *as)
{
	as->generation = ++last_generation;
}

void ms_addrspace_init(struct ms_addrspace *as)
{
	memset(as, 0, sizeof(*as));
	new_generation(as);
}

void ms_addrspace_release(struct ms_addrspace *as)
{
	free(as->maps);
	ms_addrspace_init(as);
}

void ms_addrspace_touch(struct ms_addrspace *as)
{
	new_generation(as);
}

void ms_addrspace_clear(struct ms_addrspace *as)
{
	as->n = 0;
	as->last = 0;
	new_generation(as);
}

static int grow(struct ms_addrspace *as, uint32_t need)
{
	struct ms_mapping *maps;
	uint32_t alloc;

	if (need <= as->alloc)
		return 0;
	alloc = as->alloc ? as->alloc : 16;
	while (alloc < need)
		alloc *= 2;
	maps = realloc(as->maps, (size_t)alloc * sizeof(*maps));
	if (!maps)
		return ms_error("out of memory for %u mappings", alloc);
	as->maps = maps;
	as->alloc = alloc;
	return 0;
}

int ms_addrspace_copy(struct ms_addrspace *dst, const struct ms_addrspace *src)
{
	if (grow(dst, src->n) < 0)
		return -1;
	if (src->n)
		memcpy(dst->maps, src->maps, (size_t)src->n * sizeof(*src->maps));
	dst->n = src->n;
	dst->last = 0;
	new_generation(dst);
	return 0;
}

/* Index of the first mapping whose end is above addr (ends are sorted too). */
static uint32_t first_ending_above(const struct ms_addrspace *as, uint64_t addr)
{
	uint32_t lo = 0, hi = as->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (as->maps[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Clear [start, end) and return the index at which a mapping of that range
 * belongs. Needs one free slot for a split, which the callers reserve.
 */
static uint32_t punch(struct ms_addrspace *as, uint64_t start, uint64_t end)
{
	uint32_t i = first_ending_above(as, start), j;

	if (i < as->n && as->maps[i].start < start) {
		struct ms_mapping *m = &as->maps[i];

		if (m->end > end) {
			/* The hole is inside m: split it around the hole. */
			struct ms_mapping right = *m;

			right.pgoff += end - right.start;
			right.start = end;
			m->end = start;
			memmove(&as->maps[i + 2], &as->maps[i + 1],
				(size_t)(as->n - i - 1) * sizeof(*m));
			as->maps[i + 1] = right;
			as->n++;
			return i + 1;
		}
		m->end = start;
		i++;
	}
	for (j = i; j < as->n && as->maps[j].end <= end; j++)
		;	/* wholly covered: dropped below */
	if (j < as->n && as->maps[j].start < end) {
		struct ms_mapping *m = &as->maps[j];

		m->pgoff += end - m->start;
		m->start = end;
	}
	if (j > i) {
		memmove(&as->maps[i], &as->maps[j], (size_t)(as->n - j) * sizeof(*as->maps));
		as->n -= j - i;
	}
	return i;
}

int ms_addrspace_insert(struct ms_addrspace *as, uint64_t start, uint64_t end,
			uint64_t pgoff, uint32_t ref)
{
	uint32_t i;

	if (end <= start)
		return 0;
	/* One slot for the new mapping, one for a split. */
	if (grow(as, as->n + 2) < 0)
		return -1;
	i = punch(as, start, end);
	memmove(&as->maps[i + 1], &as->maps[i], (size_t)(as->n - i) * sizeof(*as->maps));
	as->maps[i] = (struct ms_mapping){ .start = start, .end = end, .pgoff = pgoff, .ref = ref };
	as->n++;
	as->last = i;
	new_generation(as);
	return 0;
}

int ms_addrspace_remove(struct ms_addrspace *as, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (end <= start || !as->n)
		return 0;
	/* Data mappings come and go often: one over no code changes nothing. */
	i = first_ending_above(as, start);
	if (i >= as->n || as->maps[i].start >= end)
		return 0;
	if (grow(as, as->n + 1) < 0)
		return -1;
	punch(as, start, end);
	as->last = 0;
	new_generation(as);
	return 0;
}

const struct ms_mapping *ms_addrspace_find(struct ms_addrspace *as, uint64_t addr)
{
	const struct ms_mapping *m;
	uint32_t i;

	if (as->last < as->n) {
		m = &as->maps[as->last];
		if (addr >= m->start && addr < m->end)
			return m;
	}
	i = first_ending_above(as, addr);
	if (i >= as->n || as->maps[i].start > addr)
		return NULL;
	as->last = i;
	return &as->maps[i];
}
