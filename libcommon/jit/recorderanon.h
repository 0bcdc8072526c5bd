/*
 * ms-collect's JIT recorder (jit/recorder.h), the pure part: which of a
 * process's executable mappings are anonymous (no file: where a JIT
 * writes code), and whether a sample points into such code that no
 * function read from the process's perf map covers (the trigger of a
 * read, perfmap.h).
 *
 * The set follows the mapping records the collector sees: a mapping
 * replaces whatever the set held under it, and adds its range when it is
 * anonymous. munmap and mprotect away from exec make no record, so ranges
 * only go when something is mapped over them; a word pointing into such a
 * range only makes a read that finds nothing, which the throttle
 * (throttle.h) then holds back.
 *
 * Bounded: at most MS_ANON_RANGES_MAX ranges (a kernel's default
 * vm.max_map_count is 65530 mappings); a range past that is not kept and
 * counted (over_max), so samples in it trigger nothing.
 *
 * The same set type holds what the functions read cover
 * (ms_anon_covered()): the perf map's index with touching functions
 * merged, since a JIT lays its code out back to back (CPython 3.12's
 * trampolines are contiguous: 180 functions, one range), so that a word
 * in JIT code costs a search over a few ranges, not over every function.
 */
#ifndef MS_JIT_RECORDERANON_H
#define MS_JIT_RECORDERANON_H

#include <stdbool.h>
#include <stdint.h>

#include "jit/perfmap.h"
#include "stream/records.h"

#define MS_ANON_RANGES_MAX 65536u

struct ms_anon_range {
	uint64_t start, end;	/* [start, end), start < end */
};

/* Disjoint ranges sorted by start; touching ones are merged. */
struct ms_anon_set {
	struct ms_anon_range *r;
	uint32_t n, alloc;
	/* [lo, hi) holds every range: lowest start, highest end; 0, 0 when empty. */
	uint64_t lo, hi;
	uint64_t over_max;	/* ranges not kept: the set was full */
};

void ms_anon_init(struct ms_anon_set *s);
void ms_anon_release(struct ms_anon_set *s);
/* Empty it (an exec), keeping its memory. */
void ms_anon_clear(struct ms_anon_set *s);
/* dst (initialized, any content) becomes a copy of src. 0, or -1 after a message. */
int ms_anon_copy(struct ms_anon_set *dst, const struct ms_anon_set *src);

/*
 * A mapping was made over [start, end): what the set held there goes,
 * and the range comes in when anon (no file behind it). An empty or
 * wrapping range changes nothing. 0, or -1 after a message (out of
 * memory: the set is then as it was before).
 */
int ms_anon_map(struct ms_anon_set *s, uint64_t start, uint64_t end, bool anon);

/*
 * s becomes what map's functions cover: the ranges of its index
 * (ms_perfmap_find()'s answers) but ended functions', touching ones merged.
 * Bounded by the map's own bounds, not MS_ANON_RANGES_MAX. 0, or -1 after
 * a message (s is then empty: every address counts as uncovered).
 */
int ms_anon_covered(struct ms_anon_set *s, const struct ms_perfmap *map);

/* Whether addr is in one of the ranges: two compares, then a binary search. */
bool ms_anon_has(const struct ms_anon_set *s, uint64_t addr);

/* Whether one of the ranges meets [start, end). */
bool ms_anon_overlaps(const struct ms_anon_set *s, uint64_t start, uint64_t end);

/*
 * dst (distinct from a and b) becomes the union of a and b, touching
 * ranges merged. 0, or -1 after a message (dst is then empty).
 */
int ms_anon_union(struct ms_anon_set *dst, const struct ms_anon_set *a, const struct ms_anon_set *b);

/*
 * Whether a mapping's name says it has no file behind it, as ms-unwind
 * classifies modules (unwind.c): "", "//anon", "[anon:NAME]", or a name
 * holding a NUL. The kernel's other regions ("[vdso]", "[vsyscall]",
 * "[heap]", "[stack]"...) and files are not a JIT's.
 */
bool ms_anon_name(const char *name, uint32_t len);

/*
 * The first address of sample s that is in the set and not in covered
 * (NULL: nothing read yet; ms_anon_covered() of the functions read), or 0: its ip,
 * then its user call chain, then each 8-byte-aligned word of its user
 * stack copy (a JIT's frames may show only as return addresses there, as
 * CPython 3.12's trampolines under libpython's own frames do). A word is
 * searched only when it is in [lo, hi). Allocates nothing.
 */
uint64_t ms_anon_trigger(const struct ms_anon_set *s, const struct ms_sample *smp,
			 const struct ms_anon_set *covered);

#endif
