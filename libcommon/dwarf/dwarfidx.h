/*
 * Source facts from one module's DWARF: for an address, the function that
 * holds it, the chain of calls inlined there (innermost first, each with
 * its call site) and the source file and line.
 *
 * The index is built in two lazy steps so that the cost is paid once per
 * module and once per compilation unit, never per address:
 *  - at ms_dwarfidx_new(): the address ranges of every compilation unit,
 *    sorted. They come from .debug_aranges when it is well formed and names
 *    the units' headers (no DIE read: reading each unit's first DIE makes
 *    libdw parse its abbreviations, most of the start-up for libc6-dbg);
 *    else from each unit's first DIE;
 *  - at the first address in a unit: (from aranges) a check that the unit
 *    is a compile unit whose DIE gives exactly the ranges aranges gave, then
 *    one walk of that unit's DIEs that keeps each subprogram with code and
 *    each inlined subroutine in it as a scope (ranges, parent, call site),
 *    and the subprograms' ranges sorted.
 * From aranges, an address no range covers, or a unit that fails its check,
 * makes the index read every unit's first DIE as above and answer from
 * that: an answer never depends on aranges being right or complete.
 * A lookup is then two binary searches, a descent through the inlined
 * scopes that contain the address, and a search of the unit's line table
 * (read once per unit by lines.h, or by libdw when lines.h refuses it).
 * Names (demangled) and declaration lines are read once per scope, on first
 * use. With ms_dwarfidx_index_cache(), a unit's index (scopes, names read,
 * line rows) comes from a file earlier runs wrote, when it proves intact. DIEs are read by dwarf/dieread.h where it accepts them (libdw
 * otherwise, for the part it refuses): reaching a unit through libdw
 * interns every unit before it.
 *
 * Corrupt DWARF is data, not a crash: a unit whose DIEs cannot be walked is
 * marked bad (its addresses give MS_SYM_BAD_DWARF); when the list of units
 * stops at an error, addresses no unit read so far covers give
 * MS_SYM_BAD_DWARF rather than MS_SYM_NOT_IN_DEBUG, since the lost units
 * may have covered them. ms_dwarfidx_problem() keeps the first error, found
 * when a lookup needs the part that holds it.
 *
 * Addresses are the file's virtual addresses, as in its DWARF. Strings
 * handed out borrow from the index (libdw's sections and the index's
 * pool) and stay valid until ms_dwarfidx_free().
 */
#ifndef MS_DWARF_DWARFIDX_H
#define MS_DWARF_DWARFIDX_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdw.h>

struct ms_dwarfidx;

/* One entry of an inline chain (the FRAME record's lines, unpacked). */
struct ms_srcline {
	const char *function;	/* demangled; NULL when the DWARF gives no name */
	const char *system_name;	/* linkage name when it differs from function, else "" */
	const char *file;	/* "" when unknown */
	uint32_t line;		/* of the address (innermost) or of the call site */
	uint32_t function_line;	/* the function's declaration line, 0 when unknown */
};

/*
 * Index the DWARF of elf (the module itself or its debug file), which must
 * outlive the index. NULL when elf has no DWARF libdw can open; *why then
 * says what libdw reported (a static string).
 */
struct ms_dwarfidx *ms_dwarfidx_new(Elf *elf, const char **why);
/*
 * A check the file must pass before any of its DWARF bytes are read: the
 * CRC of a cached copy (elf/dcache.h), costly on a large file and needless
 * while the caches below answer every lookup. Asked once, at the first
 * read; check(arg) false refuses the file (ms_dwarfidx_refused()).
 */
struct ms_dwarfidx_gate {
	bool (*check)(void *arg);
	void *arg;
};

/*
 * The same, keeping the list of units read from .debug_aranges in the
 * cache file at units_path (NULL: none) for the next index of the DWARF
 * with build id bid (bid_len > 0): mapped when it is valid for this DWARF,
 * else read as above and the file (re)written. The file only spares the
 * reading: every answer is the same with it, without it, or with it
 * damaged (see dwarfidx.c). gate: NULL, or the file's check (above).
 */
struct ms_dwarfidx *ms_dwarfidx_new_cached(Elf *elf, const char *units_path, const uint8_t *bid,
					   uint32_t bid_len, const struct ms_dwarfidx_gate *gate,
					   const char **why);
/*
 * Whether the gate refused the file: nothing of its DWARF was read, and
 * every lookup gives MS_SYM_BAD_DWARF. Open the DWARF another way.
 */
bool ms_dwarfidx_refused(const struct ms_dwarfidx *d);
void ms_dwarfidx_free(struct ms_dwarfidx *d);

/*
 * Keep the units indexed (each one's scopes, names read, line rows and the
 * strings they need) in the cache file at path for the next index of this
 * DWARF (build id bid, bid_len > 0; the sizes of its sections are part of
 * the key): a unit found there, and proved intact on its first use, is
 * taken from the file instead of its DIEs and line program. Answers are
 * the same with the file, without it, or with it damaged (see dwarfidx.c).
 * Call once, right after the index is made; NULL path: no cache.
 */
void ms_dwarfidx_index_cache(struct ms_dwarfidx *d, const char *path, const uint8_t *bid,
			     uint32_t bid_len);
/*
 * At the end of a run: write the cache file again, atomically, when it
 * lacks units indexed in the run (or names and lines they learnt) or had
 * damage; it keeps the units used in the run first, then its others, up
 * to MS_DWARFIDX_CACHE_MAX bytes. Later lookups work, uncached.
 */
void ms_dwarfidx_save(struct ms_dwarfidx *d);
#define MS_DWARFIDX_CACHE_MAX ((uint64_t)64 << 20)
/* Another bound than MS_DWARFIDX_CACHE_MAX (0: that one again), for tests. */
void ms_dwarfidx_cache_max(uint64_t bytes);

/*
 * The inline chain at addr into out[0..max): *n entries, innermost first,
 * the outermost being the subprogram whose code holds addr, whose entry
 * address goes to *start. Returns
 *  MS_SYM_OK           *n >= 1. When a unit's line table covers addr but
 *                      no subprogram does (assembly), one entry with
 *                      function NULL and *start 0;
 *  MS_SYM_NOT_IN_DEBUG no unit describes addr;
 *  MS_SYM_BAD_DWARF    the unit that covers addr, or the list of units,
 *                      is corrupt.
 * A chain deeper than max keeps its innermost max - 1 entries and the
 * outermost function.
 */
int ms_dwarfidx_lookup(struct ms_dwarfidx *d, uint64_t addr, struct ms_srcline *out,
		       uint32_t max, uint32_t *n, uint64_t *start);

/*
 * Whether indexes made from now on read DIEs with dwarf/dieread.h where
 * it accepts them (the default) or with libdw only: for tests that check
 * the two give the same answers.
 */
void ms_dwarfidx_use_dieread(bool on);

/* The first error met (a unit that could not be read), or NULL. */
const char *ms_dwarfidx_problem(const struct ms_dwarfidx *d);

struct ms_dwarfidx_stats {
	uint32_t units, units_indexed, units_bad;
	uint32_t units_libdw;	/* of units_indexed, walked by libdw (dieread.h refused) */
	uint32_t names_libdw;	/* scopes named by libdw (dieread.h refused) */
	uint64_t scopes;
	bool from_aranges;	/* the units are still those .debug_aranges gave */
	bool units_cached;	/* ... and came from the units cache (ms_dwarfidx_new_cached()) */
	uint32_t units_index_cached;	/* of units_indexed, taken from the index cache */
};
void ms_dwarfidx_stats(const struct ms_dwarfidx *d, struct ms_dwarfidx_stats *out);

#endif
