/* A process's anonymous executable ranges and the read trigger: see recorderanon.h. */
#include "jit/recorderanon.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

/* perf's x86-64 register numbers (asm/perf_regs.h): the stack pointer. */
#define PERF_REG_SP 7

void ms_anon_init(struct ms_anon_set *s)
{
	memset(s, 0, sizeof(*s));
}

void ms_anon_release(struct ms_anon_set *s)
{
	free(s->r);
	ms_anon_init(s);
}

void ms_anon_clear(struct ms_anon_set *s)
{
	s->n = 0;
	s->lo = s->hi = 0;
}

int ms_anon_copy(struct ms_anon_set *dst, const struct ms_anon_set *src)
{
	if (src->n && !ms_reserve((void **)&dst->r, &dst->alloc, src->n, sizeof(*dst->r)))
		return ms_error("out of memory copying %u anonymous code ranges", src->n);
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*dst->r));
	dst->n = src->n;
	dst->lo = src->lo;
	dst->hi = src->hi;
	dst->over_max = src->over_max;
	return 0;
}

/* The first range whose end is past addr (n when none). */
static uint32_t first_ending_after(const struct ms_anon_set *s, uint64_t addr)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ms_anon_map(struct ms_anon_set *s, uint64_t start, uint64_t end, bool anon)
{
	uint32_t i, j, keep;
	struct ms_anon_range head = { 0, 0 }, tail = { 0, 0 }, add = { start, end };

	if (start >= end)
		return 0;
	/* [i, j): the ranges that touch [start, end) (or, when anon, abut it). */
	i = first_ending_after(s, anon && start ? start - 1 : start);
	for (j = i; j < s->n && (s->r[j].start < end || (anon && s->r[j].start == end)); j++)
		;
	if (i < j) {
		/* What sticks out of [start, end) on either side stays. */
		if (s->r[i].start < start)
			head = (struct ms_anon_range){ s->r[i].start, start };
		if (s->r[j - 1].end > end)
			tail = (struct ms_anon_range){ end, s->r[j - 1].end };
	}
	if (anon) {
		/* Touching pieces merge into the new range. */
		if (head.end)
			add.start = head.start;
		if (tail.end)
			add.end = tail.end;
		head.end = tail.end = 0;
	}
	keep = (head.end ? 1u : 0u) + (anon ? 1u : 0u) + (tail.end ? 1u : 0u);
	if (s->n - (j - i) + keep > MS_ANON_RANGES_MAX) {
		s->over_max++;
		return 0;
	}
	if (keep > j - i &&
	    !ms_reserve((void **)&s->r, &s->alloc, (uint64_t)s->n + keep - (j - i), sizeof(*s->r)))
		return ms_error("out of memory for %u anonymous code ranges", s->n + keep);
	memmove(s->r + i + keep, s->r + j, (s->n - j) * sizeof(*s->r));
	s->n = s->n - (j - i) + keep;
	if (head.end)
		s->r[i++] = head;
	if (anon)
		s->r[i++] = add;
	if (tail.end)
		s->r[i++] = tail;
	s->lo = s->n ? s->r[0].start : 0;
	s->hi = s->n ? s->r[s->n - 1].end : 0;
	return 0;
}

int ms_anon_covered(struct ms_anon_set *s, const struct ms_perfmap *map)
{
	ms_anon_clear(s);
	for (uint32_t i = 0; i < map->n_seg; i++) {
		const struct ms_perfmap_seg *g = &map->seg[i];

		if (map->funcs[g->func].flags & MS_PERFMAP_ENDED)
			continue;
		/* The index's ranges come sorted and disjoint: merge touching ones. */
		if (s->n && s->r[s->n - 1].end == g->start) {
			s->r[s->n - 1].end = g->end;
			continue;
		}
		if (!ms_reserve((void **)&s->r, &s->alloc, (uint64_t)s->n + 1, sizeof(*s->r))) {
			ms_anon_clear(s);
			return ms_error("out of memory for the ranges of %u JIT functions", map->n);
		}
		s->r[s->n++] = (struct ms_anon_range){ g->start, g->end };
	}
	s->lo = s->n ? s->r[0].start : 0;
	s->hi = s->n ? s->r[s->n - 1].end : 0;
	return 0;
}

bool ms_anon_has(const struct ms_anon_set *s, uint64_t addr)
{
	uint32_t i;

	if (addr < s->lo || addr >= s->hi)
		return false;
	i = first_ending_after(s, addr);
	return i < s->n && s->r[i].start <= addr;
}

bool ms_anon_overlaps(const struct ms_anon_set *s, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (start >= end || end <= s->lo || start >= s->hi)
		return false;
	i = first_ending_after(s, start);
	return i < s->n && s->r[i].start < end;
}

int ms_anon_union(struct ms_anon_set *dst, const struct ms_anon_set *a, const struct ms_anon_set *b)
{
	uint32_t i = 0, j = 0;

	ms_anon_clear(dst);
	if (!ms_reserve((void **)&dst->r, &dst->alloc, (uint64_t)a->n + b->n, sizeof(*dst->r)))
		return ms_error("out of memory for %u JIT code ranges", a->n + b->n);
	while (i < a->n || j < b->n) {
		struct ms_anon_range r = j == b->n || (i < a->n && a->r[i].start < b->r[j].start) ?
					 a->r[i++] : b->r[j++];

		/* Sorted by start: the next one merges with the last when it touches it. */
		if (dst->n && r.start <= dst->r[dst->n - 1].end) {
			if (r.end > dst->r[dst->n - 1].end)
				dst->r[dst->n - 1].end = r.end;
			continue;
		}
		dst->r[dst->n++] = r;
	}
	dst->lo = dst->n ? dst->r[0].start : 0;
	dst->hi = dst->n ? dst->r[dst->n - 1].end : 0;
	return 0;
}

bool ms_anon_name(const char *name, uint32_t len)
{
	if (!len || memchr(name, '\0', len))
		return true;
	if (len >= 6 && !memcmp(name, "//anon", 6))
		return true;
	return len >= 6 && !memcmp(name, "[anon:", 6);
}

/* Whether addr is JIT code (in the set) no function read covers. */
static bool uncovered(const struct ms_anon_set *s, const struct ms_anon_set *covered,
		      uint64_t addr)
{
	return ms_anon_has(s, addr) && (!covered || !ms_anon_has(covered, addr));
}

/* The sample's user stack pointer, or 0 when its registers do not hold it. */
static uint64_t user_sp(const struct ms_sample *smp)
{
	uint64_t below = ((uint64_t)1 << PERF_REG_SP) - 1;
	uint32_t at;

	if (!smp->regs_abi || !(smp->regs_mask & ((uint64_t)1 << PERF_REG_SP)))
		return 0;
	at = (uint32_t)__builtin_popcountll(smp->regs_mask & below);
	return at < smp->n_regs ? smp->regs[at] : 0;
}

/* The first word of words[0, n) in s and not in covered, or 0. */
static uint64_t scan(const struct ms_anon_set *s, const struct ms_anon_set *covered,
		     const uint8_t *words, uint32_t n)
{
	uint64_t lo = s->lo, span = s->hi - s->lo, w[4];
	uint32_t i = 0;

	/*
	 * The hot loop (a stack copy is up to 8 K words): one subtraction and
	 * compare rejects a word outside [lo, hi), and four words share a
	 * branch, since nearly none is in JIT code.
	 */
	for (; i + 4 <= n; i += 4) {
		memcpy(w, words + (size_t)i * 8, sizeof(w));
		if (!((w[0] - lo < span) | (w[1] - lo < span) | (w[2] - lo < span) |
		      (w[3] - lo < span)))
			continue;
		for (int k = 0; k < 4; k++)
			if (w[k] - lo < span && uncovered(s, covered, w[k]))
				return w[k];
	}
	for (; i < n; i++) {
		memcpy(w, words + (size_t)i * 8, 8);
		if (w[0] - lo < span && uncovered(s, covered, w[0]))
			return w[0];
	}
	return 0;
}

uint64_t ms_anon_trigger(const struct ms_anon_set *s, const struct ms_sample *smp,
			 const struct ms_anon_set *covered)
{
	uint32_t skip;

	if (!s->n)
		return 0;
	if (uncovered(s, covered, smp->ip))
		return smp->ip;
	for (uint32_t i = 0; i < smp->n_uchain; i++)
		if (uncovered(s, covered, smp->uchain[i]))
			return smp->uchain[i];
	if (!smp->stack || smp->stack_len < 8)
		return 0;
	/* The copy starts at the stack pointer: its words are where sp + off is a multiple of 8. */
	skip = (uint32_t)((8 - (user_sp(smp) & 7)) & 7);
	if (skip + 8 > smp->stack_len)
		return 0;
	return scan(s, covered, smp->stack + skip, (smp->stack_len - skip) / 8);
}
