/*
 * Unique stacks, numbered: see stacktab.h. Open addressing on a hash of
 * the reason and frames; the frames of every stack kept live one after
 * another in one pool, compared with memcmp on a hash match.
 */
#include "unwind/stacktab.h"
#include "util/grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t hash;
	uint32_t first;		/* index in frames */
	uint32_t n;
	uint32_t reason;
};

struct ms_stacktab {
	uint32_t max_stacks, max_frames;
	struct entry *entries;	/* by id */
	uint32_t n, alloc;
	struct ms_stack_frame *frames;
	uint32_t n_frames, alloc_frames;
	uint32_t *slots;	/* id + 1; 0 empty */
	uint32_t mask;
	uint64_t refused;
};

struct ms_stacktab *ms_stacktab_new(uint32_t max_stacks, uint32_t max_frames)
{
	struct ms_stacktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_stacks = max_stacks;
	t->max_frames = max_frames;
	t->mask = 1023;
	t->slots = calloc(t->mask + 1, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

static uint64_t hash_stack(const struct ms_stack *s)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = (s->reason + 1) * k ^ s->n_frames;

	for (uint32_t i = 0; i < s->n_frames; i++) {
		const struct ms_stack_frame *f = &s->frames[i];

		h = (h ^ ((uint64_t)f->module << 32 | f->flags)) * k;
		h = (h ^ f->address) * k;
		h ^= h >> 29;
	}
	return h ^ h >> 32;
}

static bool same(const struct ms_stacktab *t, const struct entry *e, const struct ms_stack *s)
{
	return e->n == s->n_frames && e->reason == s->reason &&
	       !memcmp(&t->frames[e->first], s->frames, (size_t)e->n * sizeof(s->frames[0]));
}

/* Twice the slots, every id placed again by its stored hash. */
static bool grow_slots(struct ms_stacktab *t)
{
	uint32_t mask = 2 * t->mask + 1;
	uint32_t *slots = calloc((size_t)mask + 1, sizeof(*slots));

	if (!slots)
		return false;
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t i = (uint32_t)t->entries[id].hash & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = mask;
	return true;
}

int ms_stacktab_intern(struct ms_stacktab *t, const struct ms_stack *s, uint32_t *id)
{
	uint64_t h = hash_stack(s);
	uint32_t i = (uint32_t)h & t->mask, e;
	struct entry *en;

	while ((e = t->slots[i])) {
		en = &t->entries[e - 1];
		if (en->hash == h && same(t, en, s)) {
			*id = e - 1;
			return MS_STACKTAB_FOUND;
		}
		i = (i + 1) & t->mask;
	}
	if (t->n >= t->max_stacks || (uint64_t)t->n_frames + s->n_frames > t->max_frames ||
	    !ms_reserve((void **)&t->entries, &t->alloc, (uint64_t)t->n + 1, sizeof(*t->entries)) ||
	    !ms_reserve((void **)&t->frames, &t->alloc_frames, (uint64_t)t->n_frames + s->n_frames,
			sizeof(*t->frames))) {
		t->refused++;
		return MS_STACKTAB_FULL;
	}
	en = &t->entries[t->n];
	en->hash = h;
	en->first = t->n_frames;
	en->n = s->n_frames;
	en->reason = s->reason;
	if (s->n_frames)
		memcpy(&t->frames[t->n_frames], s->frames, (size_t)s->n_frames * sizeof(s->frames[0]));
	t->n_frames += s->n_frames;
	t->slots[i] = ++t->n;
	*id = t->n - 1;
	/* Kept at most half full; a failed growth only makes probes longer. */
	if (2 * (uint64_t)t->n > t->mask)
		grow_slots(t);
	return MS_STACKTAB_ADDED;
}

uint32_t ms_stacktab_count(const struct ms_stacktab *t)
{
	return t->n;
}

uint64_t ms_stacktab_refused(const struct ms_stacktab *t)
{
	return t->refused;
}

void ms_stacktab_free(struct ms_stacktab *t)
{
	if (!t)
		return;
	free(t->entries);
	free(t->frames);
	free(t->slots);
	free(t);
}
