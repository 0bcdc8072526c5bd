/*
 * Fuzz target: the perf map parser and its table (jit/perfmap.h).
 *
 * The input: a chunk byte, a mapping byte, then the map's bytes. The map
 * is fed twice: whole, and in chunks of sizes drawn from the chunk byte
 * (1 byte to 8 KiB, indexed after some of them). Checked (abort() when
 * broken):
 *  - both tables are the same: functions (ranges, names, lines, flags),
 *    counts, the offsets consumed and parsed, the kept incomplete line;
 *  - every function has start < end, a name of 1 to MS_PERFMAP_NAME_MAX
 *    bytes, and lines that grow;
 *  - a look-up around a function's edges (and across the map) gives the
 *    latest function holding the address (all of them when they are few),
 *    or NULL when none does;
 *  - after mappings drawn from the mapping byte over functions' ranges,
 *    applied to both tables, nothing under them is found, both agree
 *    everywhere looked, and so do their code budgets.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/perfmap.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "fuzz-perfmap: %s:%d: broken: %s\n", __FILE__, \
				__LINE__, #cond);                                       \
			abort();                                                        \
		}                                                                       \
	} while (0)

#define BRUTE_MAX 4096		/* functions a look-up is checked against, all of them */
#define LOOKED 64		/* functions whose edges are looked up */
#define MAPPINGS 4

static uint32_t rng(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void same(const struct ms_perfmap *a, const struct ms_perfmap *b)
{
	CHECK(a->n == b->n);
	CHECK(memcmp(&a->c, &b->c, sizeof(a->c)) == 0);
	CHECK(a->consumed == b->consumed && a->parsed == b->parsed);
	CHECK(a->carry_len == b->carry_len && a->skipping == b->skipping);
	CHECK(memcmp(a->carry, b->carry, a->carry_len) == 0);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct ms_perfmap_func *f = &a->funcs[i], *g = &b->funcs[i];

		CHECK(f->start == g->start && f->end == g->end && f->line == g->line &&
		      f->flags == g->flags && strcmp(f->name, g->name) == 0);
	}
}

static void well_formed(const struct ms_perfmap *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ms_perfmap_func *f = &t->funcs[i];
		size_t len = strlen(f->name);

		CHECK(f->start < f->end);
		CHECK(len >= 1 && len <= MS_PERFMAP_NAME_MAX);
		CHECK(!i || f->line > t->funcs[i - 1].line || f->line == UINT32_MAX);
	}
	CHECK(t->parsed <= t->consumed);
	CHECK(t->consumed - t->parsed == t->carry_len ||
	      t->skipping);
	CHECK(t->c.malformed <= t->c.lines && t->c.too_long <= t->c.malformed);
	CHECK(t->n + t->c.malformed + t->c.over_max == t->c.lines);
}

/* The latest function holding a, ended or not: what the index answers from. */
static const struct ms_perfmap_func *latest(const struct ms_perfmap *t, uint64_t a)
{
	for (uint32_t i = t->n; i-- > 0;)
		if (t->funcs[i].start <= a && a < t->funcs[i].end)
			return &t->funcs[i];
	return NULL;
}

static void look(const struct ms_perfmap *a, const struct ms_perfmap *b, uint64_t addr)
{
	const struct ms_perfmap_func *f = ms_perfmap_find(a, addr), *g = ms_perfmap_find(b, addr);

	CHECK((f == NULL) == (g == NULL));
	CHECK(!f || f - a->funcs == g - b->funcs);
	CHECK(!f || (f->start <= addr && addr < f->end && !(f->flags & MS_PERFMAP_ENDED)));
	if (a->n <= BRUTE_MAX) {
		const struct ms_perfmap_func *w = latest(a, addr);

		CHECK(f == (w && !(w->flags & MS_PERFMAP_ENDED) ? w : NULL));
	}
}

static void look_around(const struct ms_perfmap *a, const struct ms_perfmap *b)
{
	uint32_t step = a->n > LOOKED ? a->n / LOOKED : 1;

	for (uint32_t i = 0; i < a->n; i += step) {
		const struct ms_perfmap_func *f = &a->funcs[i];

		look(a, b, f->start);
		look(a, b, f->start - 1);
		look(a, b, f->end - 1);
		look(a, b, f->end);
		look(a, b, f->start + (f->end - f->start) / 2);
	}
}

int ms_fuzz_perfmap(const uint8_t *data, size_t size)
{
	static struct ms_perfmap a, b;
	uint32_t seed, mseed;
	size_t off;

	if (size < 2)
		return 0;
	seed = data[0] * 2654435761u + 1;
	mseed = data[1] * 2246822519u + 7;
	data += 2;
	size -= 2;
	ms_perfmap_init(&a);
	ms_perfmap_init(&b);
	if (ms_perfmap_feed(&a, data, size) < 0 || ms_perfmap_index(&a) < 0)
		abort();
	for (off = 0; off < size;) {
		uint32_t r = rng(&seed);
		size_t n = r & 1 ? 1 + (r >> 1) % 16 : 1 + (r >> 1) % 8192;

		if (n > size - off)
			n = size - off;
		if (ms_perfmap_feed(&b, data + off, n) < 0)
			abort();
		if (rng(&seed) % 4 == 0 && ms_perfmap_index(&b) < 0)
			abort();
		off += n;
	}
	if (ms_perfmap_index(&b) < 0)
		abort();
	same(&a, &b);
	well_formed(&a);
	look_around(&a, &b);

	/* Mappings over some functions' ranges, the same on both. */
	for (int m = 0; m < MAPPINGS && a.n; m++) {
		const struct ms_perfmap_func *f = &a.funcs[rng(&mseed) % a.n];
		uint64_t s = f->start + rng(&mseed) % (f->end - f->start);
		uint64_t len = 1 + rng(&mseed) % 256, e = s + len < s ? UINT64_MAX : s + len;

		if (ms_perfmap_unmap(&a, s, e) < 0 || ms_perfmap_unmap(&b, s, e) < 0)
			abort();
		for (uint64_t k = 0; k < e - s; k += 1 + (e - s) / 16)
			CHECK(!ms_perfmap_find(&a, s + k) && !ms_perfmap_find(&b, s + k));
	}
	same(&a, &b);
	look_around(&a, &b);
	if (a.n) {
		CHECK(ms_perfmap_code_fits(&a, a.n - 1) == ms_perfmap_code_fits(&b, b.n - 1));
		CHECK(a.c.code_bytes <= MS_PERFMAP_CODE_MAX);
		same(&a, &b);
	}
	ms_perfmap_release(&a);
	ms_perfmap_release(&b);
	return 0;
}

MS_FUZZ_TARGET("fuzz-perfmap", ms_fuzz_perfmap)
