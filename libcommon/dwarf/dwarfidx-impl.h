/*
 * The DWARF index's internals, shared by its two files: dwarfidx.c (the
 * index) and unitcache.c (indexed units kept in the cache). For no other
 * file: the interface is dwarfidx.h.
 */
#ifndef MS_DWARF_DWARFIDX_IMPL_H
#define MS_DWARF_DWARFIDX_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/records.h"
#include "dwarf/dieread.h"
#include "dwarf/dwarfidx.h"
#include "dwarf/lines.h"
#include "util/strpool.h"

#define NONE UINT32_MAX

struct range {
	uint64_t lo, hi;
};

/* A subprogram with code, or a call inlined into one. */
struct scope {
	Dwarf_Off off;		/* the DIE, for its names */
	uint32_t parent;	/* the scope it was inlined into; NONE for a subprogram */
	uint32_t first_child, next_sibling;	/* calls inlined directly into it */
	uint32_t range, n_ranges;	/* in unit->ranges */
	uint32_t call_file, call_line;	/* inlined: where the call was */
	uint32_t name;		/* index in d->names + 1; 0 until read */
};

/* A range of a subprogram, sorted by lo to find the outermost scope. */
struct top {
	uint64_t lo, hi;
	uint32_t scope;
};

enum lines_state {
	LINES_NEW,
	LINES_OURS,	/* lines.h read the table */
	LINES_LIBDW,	/* lines.h refused it: libdw's dwarf_getsrc_die() */
};

enum unit_state {
	UNIT_NEW,
	UNIT_INDEXED,
	UNIT_BAD,
};

/* A unit read by dieread.h: its abbreviations and first DIE. */
struct ours {
	struct ms_die_unit du;
	struct ms_die cu;
};

struct unit {
	Dwarf_Die die;		/* libdw's, read on first need (unit_die()) */
	bool die_read;
	Dwarf_Off off;		/* of die */
	Dwarf_Off hdr;		/* of the unit's header */
	/*
	 * dieread.h's reader of the unit, when it took the unit: then libdw
	 * reads no DIE of it (and interns no unit before it) unless a part
	 * is refused.
	 */
	struct ours *ours;
	bool ours_tried;
	uint32_t ar, n_ar;	/* from aranges: its ranges there, in d->ar */
	bool checked;		/* die read and its ranges found equal to aranges' */
	uint8_t state;
	uint8_t lines_state;	/* LINES_*: whose reader answers for its lines */
	struct ms_linetab *lines;	/* LINES_OURS: its table, maybe shared */
	bool files_read;
	bool comp_dir_read;
	const char *comp_dir;	/* NULL when the unit names none */
	struct scope *scopes;
	uint32_t n_scopes, alloc_scopes;
	struct range *ranges;
	uint32_t n_ranges, alloc_ranges;
	struct top *tops;
	uint32_t n_tops, alloc_tops;
	Dwarf_Files *files;
	size_t n_files;
	/*
	 * The index cache (unitcache.c): mapped when scopes
	 * is a copy of the cached scopes and ranges and tops point into the
	 * cache's mapping; ic_entry its entry there (NONE: none used);
	 * fresh when indexed from the DWARF in this run, dirty when a cached
	 * unit learnt something its entry lacks (a name, its lines).
	 */
	bool mapped, fresh, dirty;
	uint32_t ic_entry;
	/* Its line table in the cache (c_lines), installed on first need (ms_dwi_unit_lines()). */
	bool c_lines;
	uint32_t c_n_rows, c_n_files;
	uint64_t c_line_off;
	const struct ms_rkey *c_rows;
	const uint32_t *c_files;
	const char *c_str;
};

/* A line table read (or taken from the cache), and the unit that read it. */
struct tab {
	struct ms_linetab t;
	Dwarf_Off reader;	/* that unit's header */
	bool mapped;		/* rows in the index cache's mapping */
};

/*
 * Every unit of the list: where it is, and its state once an address falls
 * in it (a profile uses a few dozen of libc's 2,000 units: the state is
 * allocated for those only).
 */
struct unit_slot {
	Dwarf_Off off, hdr;	/* of its first DIE and its header */
	uint32_t ar, n_ar;	/* from aranges: its ranges there, in d->ar */
	uint32_t from_dies;	/* found by ms_dwi_read_units(): checked */
	uint32_t pad;		/* (slots are written to the units cache as they are) */
};

/* A unit's address range. */
struct unit_range {
	uint64_t lo, hi;
	uint32_t unit;
	uint32_t pad;
};

struct name {
	const char *function, *system_name;
	uint32_t decl_line;
	uint64_t entry;		/* DW_AT_entry_pc or the lowest address: 0 when unknown */
};

/* A source path as libdw gives it, and as we show it (absolute, no "/./"). */
struct path {
	const char *raw, *shown;
};

/* The sections the index reads by itself. */
enum {
	SEC_INFO, SEC_ABBREV, SEC_STR, SEC_LINE_STR, SEC_RANGES, SEC_RNGLISTS, SEC_ARANGES,
	SEC_LINE, SEC_N,
};

/* A buffer that grows (writing the index cache). */
struct obuf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

struct ms_dwarfidx {
	Dwarf *dw;
	struct path *paths;	/* open addressing on raw's pointer */
	uint32_t paths_mask, n_paths;
	struct unit_slot *units;
	uint32_t n_units;
	struct unit **state;	/* each unit's, NULL until first use (unit_at()) */
	struct unit_range *uranges;
	uint32_t n_uranges;
	/*
	 * When units, ar and uranges live in the units cache's mapping
	 * (load_units()) rather than in their own allocations.
	 */
	void *lists_map;
	size_t lists_map_len;
	bool units_cached;
	bool incomplete;	/* the list of units stopped at an error */
	/*
	 * The units and their ranges came from .debug_aranges (see
	 * read_aranges()); each unit is checked against its DIE on first use,
	 * and anything that does not hold sends the index to ms_dwi_read_units().
	 */
	bool from_aranges;
	struct range *ar;	/* each unit's ranges per aranges, sorted per unit */
	uint32_t n_ar;
	struct range *tmp;	/* one unit's ranges per its DIE, while checking */
	uint32_t alloc_tmp;
	Elf *elf;
	Elf_Data *sec[SEC_N];	/* read_sections()' */
	bool have_sections;	/* lsec was filled */
	struct ms_line_sections lsec;
	struct tab **tabs;	/* line tables read, each once (units may share one) */
	uint32_t n_tabs, alloc_tabs;
	struct ms_line_scratch scratch;
	struct name *names;
	uint32_t n_names, alloc_names;
	struct ms_strpool pool;
	struct ms_dwarfidx_stats stats;
	/* dieread.h: the sections (info NULL when it cannot read them), a DIE stack. */
	struct ms_die_sections dsec;
	struct ms_die *die_stack;
	/* The index cache (unitcache.c); ic_path NULL without one. */
	char *ic_path;
	uint8_t ic_bid[MS_BUILD_ID_MAX];
	uint32_t ic_bid_len;
	uint8_t *ic_map;	/* the file, mapped, when its header and directory hold */
	size_t ic_len;
	const struct ic_entry *ic_dir;
	uint32_t ic_n;
	uint8_t *ic_state;	/* IC_* of each entry */
	bool ic_bad;		/* an entry was found damaged: rewrite */
	bool ic_pending;	/* a unit was indexed from the DWARF, or a cached one learnt */
	/* Entries made when ms_dwi_reread_units() dropped the units' states, for ms_dwarfidx_save(). */
	struct obuf *ic_kept;
	struct ic_out *ic_kept_out;
	uint32_t n_kept, alloc_kept;
	char problem[200];
	/* ms_dwarfidx_gate: asked at the first read of the file (may_read()). */
	struct ms_dwarfidx_gate gate;
	enum { GATE_OPEN, GATE_UNASKED, GATE_SHUT } gate_state;
};

/* dwarfidx.c, for unitcache.c */
int ms_dwi_cmp_range(const void *a, const void *b);
int ms_dwi_cmp_top(const void *a, const void *b);
struct tab *ms_dwi_find_tab(struct ms_dwarfidx *d, uint64_t off, bool *refused);
struct tab *ms_dwi_new_tab(struct ms_dwarfidx *d, struct unit *u);
int ms_dwi_read_units(struct ms_dwarfidx *d);
int ms_dwi_reread_units(struct ms_dwarfidx *d);
void ms_dwi_sort_ranges(struct range *r, uint32_t n);
const char *ms_dwi_unit_comp_dir(struct ms_dwarfidx *d, struct unit *u);
const struct ms_linetab *ms_dwi_unit_lines(struct ms_dwarfidx *d, struct unit *u);

/* unitcache.c, for dwarfidx.c */
const struct ms_linetab *ms_dwi_cached_lines(struct ms_dwarfidx *d, struct unit *u);
void ms_dwi_ic_attach(struct ms_dwarfidx *d, uint32_t i, struct unit *u);
void ms_dwi_ic_keep(struct ms_dwarfidx *d);

#endif
