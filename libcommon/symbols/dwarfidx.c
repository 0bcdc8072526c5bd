#include "symbols/dwarfidx.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/records.h"
#include "symbols/crc32c.h"
#include "symbols/demangle.h"
#include "symbols/dieread.h"
#include "symbols/kcache.h"
#include "symbols/lines.h"
#include "symbols/radix.h"
#include "symbols/strpool.h"
#include "util/grow.h"
#include "util/publish.h"

#define NONE UINT32_MAX
/* DIE nesting deeper than this is corrupt (real code nests a few dozen). */
#define DEPTH_MAX 256

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
	 * The index cache (see "indexed units, cached"): mapped when scopes
	 * is a copy of the cached scopes and ranges and tops point into the
	 * cache's mapping; ic_entry its entry there (NONE: none used);
	 * fresh when indexed from the DWARF in this run, dirty when a cached
	 * unit learnt something its entry lacks (a name, its lines).
	 */
	bool mapped, fresh, dirty;
	uint32_t ic_entry;
	/* Its line table in the cache (c_lines), installed on first need (unit_lines()). */
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
	uint32_t from_dies;	/* found by read_units(): checked */
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
	 * and anything that does not hold sends the index to read_units().
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
	/* The index cache (see "indexed units, cached"); ic_path NULL without one. */
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
	/* Entries made when reread_units() dropped the units' states, for ms_dwarfidx_save(). */
	struct obuf *ic_kept;
	struct ic_out *ic_kept_out;
	uint32_t n_kept, alloc_kept;
	char problem[200];
};

static void note_problem(struct ms_dwarfidx *d, const char *what, Dwarf_Off off)
{
	if (!d->problem[0])
		snprintf(d->problem, sizeof(d->problem), "%s at .debug_info offset 0x%llx: %s",
			 what, (unsigned long long)off, dwarf_errmsg(-1));
}

static int cmp_urange(const void *a, const void *b)
{
	const struct unit_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* A unit has a handful of ranges, usually in order already. */
static void sort_ranges(struct range *r, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (cmp_range(&r[i - 1], &r[i]) > 0) {
			qsort(r, n, sizeof(*r), cmp_range);
			return;
		}
}

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;
}

static void ic_attach(struct ms_dwarfidx *d, uint32_t i, struct unit *u);

/* Unit i's state, made on first use: NULL when out of memory. */
static struct unit *unit_at(struct ms_dwarfidx *d, uint32_t i)
{
	const struct unit_slot *sl = &d->units[i];
	struct unit *u;

	/* A few dozen of libc's 2,000 units are used: untouched pages of this are never faulted in. */
	if (!d->state && !(d->state = calloc(d->n_units, sizeof(*d->state))))
		return NULL;
	if ((u = d->state[i]))
		return u;
	if (!(u = calloc(1, sizeof(*u))))
		return NULL;
	u->off = sl->off;
	u->hdr = sl->hdr;
	u->ar = sl->ar;
	u->n_ar = sl->n_ar;
	u->checked = sl->from_dies;
	u->ic_entry = NONE;
	d->state[i] = u;
	if (d->ic_map)
		ic_attach(d, i, u);
	return u;
}

/* Read every unit's ranges. Errors stop the list and are remembered. */
static int read_units(struct ms_dwarfidx *d)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	uint32_t alloc_units = 0, alloc_uranges = 0;
	int r;

	while ((r = dwarf_get_units(d->dw, cu, &next, &version, &unit_type, &cudie, &subdie)) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		uint32_t u, first = d->n_uranges;
		int tag;

		cu = next;
		tag = dwarf_tag(&cudie);
		if (tag == DW_TAG_invalid) {
			/* The unit's first DIE is unreadable: whatever code it had is lost. */
			note_problem(d, "a unit's first DIE cannot be read", dwarf_dieoffset(&cudie));
			d->incomplete = true;
			continue;
		}
		/* Partial and type units hold no code of their own. */
		if (unit_type != DW_UT_compile || tag != DW_TAG_compile_unit)
			continue;
		if (!ms_reserve((void **)&d->units, &alloc_units, (uint64_t)d->n_units + 1,
				sizeof(*d->units)))
			return -1;
		u = d->n_units;
		memset(&d->units[u], 0, sizeof(d->units[u]));
		d->units[u].off = dwarf_dieoffset(&cudie);
		d->units[u].hdr = d->units[u].off - dwarf_cuoffset(&cudie);
		d->units[u].from_dies = 1;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (!ms_reserve((void **)&d->uranges, &alloc_uranges, (uint64_t)d->n_uranges + 1,
					sizeof(*d->uranges)))
				return -1;
			d->uranges[d->n_uranges++] = (struct unit_range){ lo, hi, u, 0 };
		}
		if (off < 0) {
			/* Ranges we cannot read: the unit's code is lost, and said so. */
			note_problem(d, "unreadable ranges of the unit", dwarf_dieoffset(&cudie));
			d->n_uranges = first;
			d->incomplete = true;
			continue;
		}
		if (d->n_uranges == first)
			continue;	/* no code: not kept */
		d->n_units++;
	}
	if (r < 0) {
		snprintf(d->problem, sizeof(d->problem), "the list of units stops after %u units: %s",
			 d->n_units, dwarf_errmsg(-1));
		d->incomplete = true;
	}
	if (d->n_uranges)
		qsort(d->uranges, d->n_uranges, sizeof(*d->uranges), cmp_urange);
	d->stats.units = d->n_units;
	return 0;
}

static void ours_release(struct unit *u)
{
	if (u->ours)
		ms_die_unit_release(&u->ours->du);
	free(u->ours);
	u->ours = NULL;
}

static void scopes_release(struct unit *u)
{
	free(u->scopes);
	if (!u->mapped) {
		free(u->ranges);
		free(u->tops);
	}
	u->mapped = false;
	u->scopes = NULL;
	u->ranges = NULL;
	u->tops = NULL;
	u->n_scopes = u->n_ranges = u->n_tops = 0;
	u->alloc_scopes = u->alloc_ranges = u->alloc_tops = 0;
}

static void unit_release(struct unit *u)
{
	ours_release(u);
	scopes_release(u);
}

/* Drop the list of units and their ranges (allocated, or the units cache's mapping). */
static void lists_release(struct ms_dwarfidx *d)
{
	if (d->lists_map) {
		munmap(d->lists_map, d->lists_map_len);
		d->lists_map = NULL;
	} else {
		free(d->units);
		free(d->uranges);
		free(d->ar);
	}
	d->units = NULL;
	d->uranges = NULL;
	d->ar = NULL;
	d->n_units = d->n_uranges = d->n_ar = 0;
}

/* ---- the units' ranges from .debug_aranges ---- */

/*
 * Reading every unit's first DIE makes libdw parse the unit's table of
 * abbreviations (GCC puts the unit's own abbreviation last): for libc6-dbg's
 * 2000 units that was most of ms-symbolize's start-up. .debug_aranges says
 * in one small table which unit holds which addresses, but it is only a
 * hint, never the truth:
 *  - read_aranges() uses it only when it is well formed, names units whose
 *    headers are where it says, and gives no two units overlapping ranges;
 *  - a unit found through it is checked on its first use (check_unit()): it
 *    must be a compile unit whose DIE's ranges are exactly its aranges';
 *  - an address that no range of aranges covers may still be in a unit
 *    that aranges describes short or not at all.
 * In the last two cases, and on any error, the index is built again from
 * every unit's DIE (read_units()), so an answer never depends on aranges
 * being right: they only spare reading the units no address falls in.
 */

/* One unit's header, while reading aranges. */
struct unit_hdr {
	Dwarf_Off off, die;	/* of its header and its first DIE */
	uint32_t ar, n_ar;	/* its ranges in d->ar */
	bool named;		/* aranges have a set for it */
};

/*
 * Each section's bytes into d->sec, in one pass over the headers (a pass
 * per section cost more than the rest of a cached start-up): NULL when
 * absent, empty or still compressed. The first section of a name counts.
 */
static void read_sections(struct ms_dwarfidx *d, Elf *elf)
{
	static const char *const names[SEC_N] = {
		".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str",
		".debug_ranges", ".debug_rnglists", ".debug_aranges", ".debug_line",
	};
	bool seen[SEC_N] = { false };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		Elf_Data *data;
		int k;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strncmp(n, ".debug_", 7))
			continue;
		for (k = 0; k < SEC_N && strcmp(n, names[k]); k++)
			;
		if (k == SEC_N || seen[k])
			continue;
		seen[k] = true;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		data = elf_getdata(scn, NULL);
		d->sec[k] = data && data->d_buf && data->d_size ? data : NULL;
	}
}

/* A bounded little- or big-endian reader over a section's bytes. */
struct cursor {
	const uint8_t *p, *end;
	bool swap;		/* the file's byte order is not ours */
	bool bad;		/* read past the end */
};

static inline uint64_t read_uint(struct cursor *c, unsigned int size)
{
	uint64_t v;

	if (c->bad || (size_t)(c->end - c->p) < size) {
		c->bad = true;
		return 0;
	}
	switch (size) {
	case 1:
		v = *c->p;
		break;
	case 2: {
		uint16_t x;

		memcpy(&x, c->p, 2);
		v = c->swap ? __builtin_bswap16(x) : x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, c->p, 4);
		v = c->swap ? __builtin_bswap32(x) : x;
		break;
	}
	default:
		memcpy(&v, c->p, 8);
		if (c->swap)
			v = __builtin_bswap64(v);
		break;
	}
	c->p += size;
	return v;
}

/*
 * The header at off in h (sorted by offset), else NULL. *hint is where the
 * next one is looked for first: sets come in the units' order, so the
 * search is mostly one comparison.
 */
static struct unit_hdr *find_hdr(struct unit_hdr *h, uint32_t n, Dwarf_Off off, uint32_t *hint)
{
	uint32_t lo = 0, hi = n;

	if (*hint < n && h[*hint].off == off)
		return &h[(*hint)++];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && h[lo].off == off) {
		*hint = lo + 1;
		return &h[lo];
	}
	return NULL;
}

/*
 * The sets of .debug_aranges into d->ar, each naming its unit's header in h.
 * 0, 1 when they cannot be used, -1 when out of memory.
 */
static int read_sets(struct ms_dwarfidx *d, Elf_Data *data, bool swap, struct unit_hdr *h,
		     uint32_t n_h)
{
	struct cursor c = { data->d_buf, (const uint8_t *)data->d_buf + data->d_size, swap, false };
	uint32_t alloc_ar = 0, hint = 0;

	while (c.p < c.end) {
		const uint8_t *set = c.p, *set_end;
		uint64_t len = read_uint(&c, 4), info;
		unsigned int offset_size = 4, addr_size;
		struct unit_hdr *u;

		if (len == 0xffffffff) {
			offset_size = 8;
			len = read_uint(&c, 8);
		} else if (len >= 0xfffffff0) {
			return 1;
		}
		if (c.bad || len > (uint64_t)(c.end - c.p))
			return 1;
		set_end = c.p + len;
		c.end = set_end;
		if (read_uint(&c, 2) != 2)
			return 1;
		info = read_uint(&c, offset_size);
		addr_size = (unsigned int)read_uint(&c, 1);
		if (c.bad || (addr_size != 4 && addr_size != 8) || read_uint(&c, 1) != 0)
			return 1;
		if (!(u = find_hdr(h, n_h, info, &hint)) || u->named)
			return 1;
		u->named = true;
		u->ar = d->n_ar;
		/* The tuples start at a multiple of their size from the set's start. */
		c.p = set + ((size_t)(c.p - set) + 2 * addr_size - 1) / (2 * addr_size) * (2 * addr_size);
		if (c.p > set_end)
			return 1;
		for (;;) {
			uint64_t lo = read_uint(&c, addr_size), n = read_uint(&c, addr_size);

			if (c.bad)
				return 1;
			if (!lo && !n)
				break;
			if (!n)
				continue;
			if (lo + n < lo || (addr_size == 4 && lo + n > UINT32_MAX + 1ull))
				return 1;
			if (d->n_ar >= alloc_ar &&
			    !ms_reserve((void **)&d->ar, &alloc_ar, (uint64_t)d->n_ar + 1,
					sizeof(*d->ar)))
				return -1;
			d->ar[d->n_ar++] = (struct range){ lo, lo + n };
		}
		u->n_ar = d->n_ar - u->ar;
		sort_ranges(d->ar + u->ar, u->n_ar);
		c.p = set_end;
		c.end = (const uint8_t *)data->d_buf + data->d_size;
	}
	return 0;
}

/* Whether ranges of two different units overlap (r sorted as cmp_urange() sorts). */
static bool units_overlap(const struct unit_range *ur, uint32_t n)
{
	/* The highest end so far, and the highest of units other than its one. */
	uint64_t hi1 = 0, hi2 = 0;
	uint32_t unit1 = NONE;

	for (uint32_t i = 0; i < n; i++) {
		const struct unit_range *r = &ur[i];

		if (r->lo < (r->unit == unit1 ? hi2 : hi1))
			return true;
		if (r->hi > hi1) {
			if (r->unit != unit1)
				hi2 = hi1;
			hi1 = r->hi;
			unit1 = r->unit;
		} else if (r->unit != unit1 && r->hi > hi2) {
			hi2 = r->hi;
		}
	}
	return false;
}

/*
 * d->uranges from each unit's sorted aranges, sorted as cmp_urange() sorts:
 * units are in order and each one's ranges too, so a stable sort by lo is
 * enough. 0, or -1 when out of memory.
 */
static int sort_uranges(struct ms_dwarfidx *d)
{
	uint32_t n = d->n_uranges, i, k = 0;
	struct ms_rkey *keys = malloc(2 * (size_t)n * sizeof(*keys) + 1), *sorted;
	struct unit_range *in = malloc((size_t)n * sizeof(*in) + 1);

	if (!keys || !in) {
		free(keys);
		free(in);
		return -1;
	}
	for (i = 0; i < d->n_units; i++)
		for (uint32_t j = 0; j < d->units[i].n_ar; j++, k++) {
			const struct range *a = &d->ar[d->units[i].ar + j];

			in[k] = (struct unit_range){ a->lo, a->hi, i, 0 };
			keys[k] = (struct ms_rkey){ a->lo, k, 0 };
		}
	sorted = ms_radix_sort(keys, keys + n, n);
	for (i = 0; i < n; i++)
		d->uranges[i] = in[sorted[i].pos];
	free(keys);
	free(in);
	return 0;
}

/*
 * The header of the unit at off as dwarf_next_unit() reads it (dieread.h's
 * reader when it has the sections: libdw's costs a lock and more): 0, 1
 * past the last unit, -1 on error.
 */
static int next_unit(struct ms_dwarfidx *d, Dwarf_Off off, Dwarf_Off *next, Dwarf_Off *die,
		     Dwarf_Half *version)
{
	size_t hsize;
	int r;

	if (d->dsec.info) {
		if (off + 4 >= d->dsec.info_size)
			return 1;
		return ms_die_unit_header(&d->dsec, off, next, die, version) == MS_DIE_OK ? 0 : -1;
	}
	r = dwarf_next_unit(d->dw, off, next, &hsize, version, NULL, NULL, NULL, NULL, NULL);
	if (r == 0)
		*die = off + hsize;
	return r;
}

/*
 * The units and their ranges from .debug_aranges and the units' headers.
 * 0 when done, 1 when they cannot be used (nothing kept), -1 when out of
 * memory.
 */
static int read_aranges(struct ms_dwarfidx *d, Elf *elf)
{
	Elf_Data *aranges = d->sec[SEC_ARANGES];
	Elf_Data *info = d->sec[SEC_INFO];
	struct unit_hdr *h = NULL;
	uint32_t n_h = 0, alloc_h = 0, alloc_units = 0, i;
	Dwarf_Off off = 0, next, die;
	Dwarf_Half version;
	GElf_Ehdr eh;
	int r;

	if (!aranges || !info || !gelf_getehdr(elf, &eh))
		return 1;
	/* Every unit's header: a few bytes each, no DIE read (libdw's walk when ours cannot). */
	while ((r = next_unit(d, off, &next, &die, &version)) == 0) {
		if (next <= off || next > info->d_size || version < 2 || version > 5)
			goto unusable;
		if (n_h >= alloc_h &&
		    !ms_reserve((void **)&h, &alloc_h, (uint64_t)n_h + 1, sizeof(*h))) {
			r = -1;
			goto out;
		}
		h[n_h++] = (struct unit_hdr){ off, die, 0, 0, false };
		off = next;
	}
	/* The list must end where the section does, as libdw's own walk would. */
	if (r < 0 || off != info->d_size || !n_h)
		goto unusable;
	r = read_sets(d, aranges, eh.e_ident[EI_DATA] !=
		      (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB), h, n_h);
	if (r)
		goto out;
	/* Units in the order of the file, as read_units() numbers them. */
	for (i = 0; i < n_h; i++) {
		struct unit_slot *u;

		if (!h[i].n_ar)
			continue;	/* no code, or none aranges know of: see above */
		if (!ms_reserve((void **)&d->units, &alloc_units, (uint64_t)d->n_units + 1,
				sizeof(*d->units))) {
			r = -1;
			goto out;
		}
		u = &d->units[d->n_units];
		memset(u, 0, sizeof(*u));
		u->off = h[i].die;
		u->hdr = h[i].off;
		u->ar = h[i].ar;
		u->n_ar = h[i].n_ar;
		d->n_uranges += h[i].n_ar;
		d->n_units++;
	}
	if (d->n_uranges && !(d->uranges = malloc((size_t)d->n_uranges * sizeof(*d->uranges)))) {
		r = -1;
		goto out;
	}
	if (sort_uranges(d) < 0) {
		r = -1;
		goto out;
	}
	if (units_overlap(d->uranges, d->n_uranges))
		goto unusable;
	d->from_aranges = true;
	d->stats.units = d->n_units;
	r = 0;
	goto out;
unusable:
	r = 1;
out:
	free(h);
	if (r)
		lists_release(d);
	return r;
}

/* ---- the list of units, cached ---- */

/*
 * read_aranges() reads every unit's header (a few bytes each, spread over
 * all of .debug_info: for libc6-dbg 2,000 headers, a hundred page faults)
 * and all of .debug_aranges, then sorts the ranges: a sixth of a short
 * ms-symbolize run, for a result that only changes with the DWARF. So its
 * result is kept in a file beside the inflated debug copy (dcache.h),
 * keyed by the DWARF's build id and the sizes of the sections it came
 * from, and mapped by the next run instead.
 *
 * The file is input like any other: it is used only when its header, key
 * and counts hold, every unit's header and first DIE lie inside
 * .debug_info, every range is non-empty and belongs to its unit, and the
 * sorted ranges are in order and of no two units overlapping (what
 * read_aranges() itself requires); anything else is ignored and rewritten.
 * Like aranges themselves it is never the truth: each unit is checked
 * against its DIE on first use and a miss reads every unit's DIE (see
 * above), so a list that passes these checks and is still wrong costs time,
 * never an answer.
 *
 * Layout (host byte order): struct units_header, then n_units struct
 * unit_slot, n_ar struct range, n_uranges struct unit_range, as in memory.
 */
#define UNITS_VERSION 1

static const char units_magic[8] = "MSUNITS";

struct units_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_size, range_size, urange_size;
	uint32_t bid_len;
	uint8_t bid[MS_BUILD_ID_MAX];
	uint64_t info_size, abbrev_size, aranges_size;
	uint64_t n_units, n_ar, n_uranges;
};

/* The header d's DWARF with build id bid would have (counts 0); -1 without a build id. */
static int units_key(const struct ms_dwarfidx *d, const uint8_t *bid, uint32_t bid_len,
		     struct units_header *h)
{
	Elf_Data *info = d->sec[SEC_INFO];
	Elf_Data *abbrev = d->sec[SEC_ABBREV];
	Elf_Data *aranges = d->sec[SEC_ARANGES];

	if (!bid_len || bid_len > MS_BUILD_ID_MAX || !info || !abbrev || !aranges)
		return -1;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, units_magic, sizeof(h->magic));
	h->version = UNITS_VERSION;
	h->slot_size = sizeof(struct unit_slot);
	h->range_size = sizeof(struct range);
	h->urange_size = sizeof(struct unit_range);
	h->bid_len = bid_len;
	memcpy(h->bid, bid, bid_len);
	h->info_size = info->d_size;
	h->abbrev_size = abbrev->d_size;
	h->aranges_size = aranges->d_size;
	return 0;
}

/* Whether range r is one of unit sl's (a unit has a handful). */
static bool unit_has_range(const struct range *ar, const struct unit_slot *sl,
			   const struct unit_range *r)
{
	for (uint32_t i = 0; i < sl->n_ar; i++)
		if (ar[sl->ar + i].lo == r->lo && ar[sl->ar + i].hi == r->hi)
			return true;
	return false;
}

/* The checks of a mapped list (see above) against key and .debug_info's size. */
static bool units_valid(const uint8_t *map, size_t len, const struct units_header *key)
{
	const struct units_header *h = (const void *)map;
	const struct unit_slot *units;
	const struct range *ar;
	const struct unit_range *ur;
	uint64_t n_units, n_ar, n_ur, sum = 0, i;

	if (len < sizeof(*h) ||
	    memcmp(h, key, offsetof(struct units_header, n_units)))
		return false;
	n_units = h->n_units;
	n_ar = h->n_ar;
	n_ur = h->n_uranges;
	if (!n_units || n_units > UINT32_MAX || n_ar > UINT32_MAX || n_ur > UINT32_MAX ||
	    n_units > (len - sizeof(*h)) / sizeof(*units) ||
	    n_ar > (len - sizeof(*h) - n_units * sizeof(*units)) / sizeof(*ar) ||
	    n_ur * sizeof(*ur) != len - sizeof(*h) - n_units * sizeof(*units) - n_ar * sizeof(*ar))
		return false;
	units = (const void *)(map + sizeof(*h));
	ar = (const void *)(units + n_units);
	ur = (const void *)(ar + n_ar);
	for (i = 0; i < n_units; i++) {
		const struct unit_slot *sl = &units[i];

		if (sl->from_dies || !sl->n_ar || sl->ar > n_ar || sl->n_ar > n_ar - sl->ar ||
		    sl->off <= sl->hdr || sl->off >= key->info_size ||
		    (i && sl->hdr <= units[i - 1].hdr))
			return false;
		sum += sl->n_ar;
	}
	for (i = 0; i < n_ar; i++)
		if (ar[i].lo >= ar[i].hi)
			return false;
	if (sum != n_ur)
		return false;
	for (i = 0; i < n_ur; i++)
		if (ur[i].unit >= n_units || ur[i].lo >= ur[i].hi ||
		    (i && cmp_urange(&ur[i - 1], &ur[i]) > 0) ||
		    !unit_has_range(ar, &units[ur[i].unit], &ur[i]))
			return false;
	return !units_overlap(ur, (uint32_t)n_ur);
}

/* Map the list at path into d when it is valid for key: 0, or -1. */
static int load_units(struct ms_dwarfidx *d, const char *path, const struct units_header *key)
{
	struct stat st;
	const struct units_header *h;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < sizeof(struct units_header) ||
	    (uint64_t)st.st_size > (uint64_t)1 << 32) {
		close(fd);
		return -1;
	}
	/* Private and writable as the lists in memory are (nothing writes them now). */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	if (!units_valid(map, (size_t)st.st_size, key)) {
		munmap(map, (size_t)st.st_size);
		return -1;
	}
	h = map;
	d->lists_map = map;
	d->lists_map_len = (size_t)st.st_size;
	d->n_units = (uint32_t)h->n_units;
	d->n_ar = (uint32_t)h->n_ar;
	d->n_uranges = (uint32_t)h->n_uranges;
	d->units = (struct unit_slot *)((uint8_t *)map + sizeof(*h));
	d->ar = (struct range *)(d->units + d->n_units);
	d->uranges = (struct unit_range *)(d->ar + d->n_ar);
	d->from_aranges = true;
	d->units_cached = true;
	d->stats.units = d->n_units;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write d's list from aranges to path under key; one that cannot be written costs the next run time. */
static void store_units(const struct ms_dwarfidx *d, const char *path, struct units_header *key)
{
	struct ms_publish pub;
	int fd;

	if (!d->n_units || ms_cache_mkdir(path) < 0)
		return;
	key->n_units = d->n_units;
	key->n_ar = d->n_ar;
	key->n_uranges = d->n_uranges;
	if ((fd = ms_publish_open(&pub, path)) < 0)
		return;
	if (write_all(fd, key, sizeof(*key)) < 0 ||
	    write_all(fd, d->units, d->n_units * sizeof(*d->units)) < 0 ||
	    write_all(fd, d->ar, d->n_ar * sizeof(*d->ar)) < 0 ||
	    write_all(fd, d->uranges, d->n_uranges * sizeof(*d->uranges)) < 0) {
		ms_publish_abort(&pub);
		return;
	}
	pub.cache = true;	/* checked before use: see publish.h */
	ms_publish_commit(&pub);
}

/* Release every unit's state and the list of units. */
static void units_release(struct ms_dwarfidx *d)
{
	for (uint32_t i = 0; d->state && i < d->n_units; i++)
		if (d->state[i]) {
			unit_release(d->state[i]);
			free(d->state[i]);
		}
	free(d->state);
	d->state = NULL;
	lists_release(d);
}

static void ic_keep(struct ms_dwarfidx *d);

/* Forget the units (their strings handed out stay valid) and read them all from their DIEs. */
static int reread_units(struct ms_dwarfidx *d)
{
	/* What was indexed is still the truth: kept for the cache. */
	ic_keep(d);
	units_release(d);
	d->from_aranges = false;
	/* units_indexed and the rest count the work done: they go on counting. */
	return read_units(d);
}

/*
 * A unit from aranges, before its first use: its DIE, which must be a
 * compile unit's whose ranges are the unit's aranges. 0 when it is, -1
 * when not (or on any error).
 */
/* The unit's ranges in d->tmp, sorted, as d->ar holds aranges': equal or not. */
static int same_ranges(struct ms_dwarfidx *d, const struct unit *u, uint32_t n)
{
	sort_ranges(d->tmp, n);
	for (uint32_t i = 0; i < n; i++)
		if (d->tmp[i].lo != d->ar[u->ar + i].lo || d->tmp[i].hi != d->ar[u->ar + i].hi)
			return -1;
	return 0;
}

/*
 * Open the unit with dieread.h's reader (once): MS_DIE_OK with u->ours,
 * else MS_DIE_REFUSED.
 */
static int open_ours(struct ms_dwarfidx *d, struct unit *u)
{
	if (u->ours)
		return MS_DIE_OK;
	if (u->ours_tried || !d->dsec.info)
		return MS_DIE_REFUSED;
	u->ours_tried = true;
	if (!(u->ours = malloc(sizeof(*u->ours))))
		return MS_DIE_REFUSED;
	if (ms_die_unit_open(&u->ours->du, &d->dsec, u->hdr, &u->ours->cu) != MS_DIE_OK ||
	    u->ours->cu.off != u->off) {
		ours_release(u);
		return MS_DIE_REFUSED;
	}
	return MS_DIE_OK;
}

/* check_unit() by dieread.h: 0, -1 (not as aranges say), MS_DIE_REFUSED as 1. */
static int check_unit_ours(struct ms_dwarfidx *d, struct unit *u)
{
	struct ms_die_ranges it = { 0 };
	uint64_t lo, hi;
	uint32_t n = 0;
	int r;

	if (open_ours(d, u) != MS_DIE_OK)
		return 1;
	while ((r = ms_die_ranges_next(&u->ours->du, &u->ours->cu, &it, &lo, &hi)) == MS_DIE_OK) {
		if (hi <= lo)
			continue;
		if (n == u->n_ar)
			return -1;
		if (!ms_reserve((void **)&d->tmp, &d->alloc_tmp, (uint64_t)n + 1, sizeof(*d->tmp)))
			return 1;
		d->tmp[n++] = (struct range){ lo, hi };
	}
	if (r != MS_DIE_NONE) {
		ours_release(u);
		return 1;
	}
	if (n != u->n_ar)
		return -1;
	return same_ranges(d, u, n);
}

/* The unit's DIE by libdw, read on first need: NULL when it cannot be. */
static Dwarf_Die *unit_die(struct ms_dwarfidx *d, struct unit *u)
{
	if (!u->die_read) {
		if (!dwarf_offdie(d->dw, u->off, &u->die))
			return NULL;
		u->die_read = true;
	}
	return &u->die;
}

static int check_unit(struct ms_dwarfidx *d, struct unit *u)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t n = 0;
	uint8_t unit_type;
	int r;

	if ((r = check_unit_ours(d, u)) <= 0) {
		if (r == 0)
			u->checked = true;
		return r;
	}
	if (!unit_die(d, u) ||
	    dwarf_cu_info(u->die.cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    unit_type != DW_UT_compile || dwarf_tag(&u->die) != DW_TAG_compile_unit)
		return -1;
	while ((off = dwarf_ranges(&u->die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (n == u->n_ar || !ms_reserve((void **)&d->tmp, &d->alloc_tmp, (uint64_t)n + 1,
						sizeof(*d->tmp)))
			return -1;
		d->tmp[n++] = (struct range){ lo, hi };
	}
	if (off < 0 || n != u->n_ar || same_ranges(d, u, n) < 0)
		return -1;
	u->checked = true;
	return 0;
}

static bool use_dieread = true;

void ms_dwarfidx_use_dieread(bool on)
{
	use_dieread = on;
}

/*
 * The sections dieread.h reads, when it can: the file's byte order is the
 * host's and it is not relocatable (libdw relocates those); else d->dsec
 * stays empty and libdw reads every DIE. Compressed sections are libdw's
 * too (read_sections() does not see them).
 */
static void die_sections(struct ms_dwarfidx *d, Elf *elf)
{
	Elf_Data *info = d->sec[SEC_INFO];
	Elf_Data *abbrev = d->sec[SEC_ABBREV];
	Elf_Data *str = d->sec[SEC_STR];
	Elf_Data *line_str = d->sec[SEC_LINE_STR];
	Elf_Data *ranges = d->sec[SEC_RANGES];
	Elf_Data *rnglists = d->sec[SEC_RNGLISTS];
	GElf_Ehdr eh;

	if (!use_dieread || !info || !abbrev || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB :
									      ELFDATA2MSB))
		return;
	d->dsec = (struct ms_die_sections){
		.info = info->d_buf, .info_size = info->d_size,
		.abbrev = abbrev->d_buf, .abbrev_size = abbrev->d_size,
		.str = str ? str->d_buf : NULL, .str_size = str ? str->d_size : 0,
		.line_str = line_str ? line_str->d_buf : NULL,
		.line_str_size = line_str ? line_str->d_size : 0,
		.ranges = ranges ? ranges->d_buf : NULL, .ranges_size = ranges ? ranges->d_size : 0,
		.rnglists = rnglists ? rnglists->d_buf : NULL,
		.rnglists_size = rnglists ? rnglists->d_size : 0,
	};
}

struct ms_dwarfidx *ms_dwarfidx_new(Elf *elf, const char **why)
{
	return ms_dwarfidx_new_cached(elf, NULL, NULL, 0, why);
}

struct ms_dwarfidx *ms_dwarfidx_new_cached(Elf *elf, const char *units_path, const uint8_t *bid,
					   uint32_t bid_len, const char **why)
{
	struct ms_dwarfidx *d = calloc(1, sizeof(*d));
	struct units_header key;
	bool cache;
	int r;

	*why = NULL;
	if (!d) {
		*why = "out of memory";
		return NULL;
	}
	ms_strpool_init(&d->pool);
	d->elf = elf;
	d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		*why = dwarf_errmsg(-1);
		free(d);
		return NULL;
	}
	read_sections(d, elf);
	die_sections(d, elf);
	cache = units_path && units_key(d, bid, bid_len, &key) == 0;
	if (cache && load_units(d, units_path, &key) == 0) {
		r = 0;
	} else {
		r = read_aranges(d, elf);
		if (r == 0 && cache)
			store_units(d, units_path, &key);
	}
	if (r > 0)
		r = read_units(d);
	if (r < 0) {
		*why = "out of memory";
		ms_dwarfidx_free(d);
		return NULL;
	}
	return d;
}

void ms_dwarfidx_free(struct ms_dwarfidx *d)
{
	uint32_t i;

	if (!d)
		return;
	units_release(d);
	free(d->tmp);
	free(d->die_stack);
	for (i = 0; i < d->n_tabs; i++) {
		if (d->tabs[i]->mapped)
			free((void *)d->tabs[i]->t.files);
		else
			ms_linetab_release(&d->tabs[i]->t);
		free(d->tabs[i]);
	}
	free(d->tabs);
	ms_line_scratch_release(&d->scratch);
	free(d->names);
	free(d->paths);
	ms_strpool_release(&d->pool);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->ic_map)
		munmap(d->ic_map, d->ic_len);
	free(d->ic_state);
	free(d->ic_path);
	if (d->ic_kept)
		free(d->ic_kept->p);
	free(d->ic_kept);
	free(d->ic_kept_out);
	free(d);
}

const char *ms_dwarfidx_problem(const struct ms_dwarfidx *d)
{
	return d->problem[0] ? d->problem : NULL;
}

void ms_dwarfidx_stats(const struct ms_dwarfidx *d, struct ms_dwarfidx_stats *out)
{
	*out = d->stats;
	out->from_aranges = d->from_aranges;
	out->units_cached = d->units_cached;
}

/* ---- indexing one unit ---- */

static bool has_code(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

static int push_range(struct unit *u, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (!ms_reserve((void **)&u->ranges, &u->alloc_ranges, (uint64_t)u->n_ranges + 1,
			sizeof(*u->ranges)))
		return -1;
	u->ranges[u->n_ranges++] = (struct range){ lo, hi };
	return 0;
}

/*
 * The scope whose ranges were just pushed from first on (none: *out is
 * NONE), of the DIE at off; for an inlined call, its call site.
 */
static int push_scope(struct unit *u, Dwarf_Off off, uint32_t first, uint32_t parent,
		      uint32_t call_file, uint32_t call_line, uint32_t *out)
{
	struct scope *s;
	uint32_t i;

	if (u->n_ranges == first) {
		*out = NONE;	/* no code after all (an empty range) */
		return 0;
	}
	if (!ms_reserve((void **)&u->scopes, &u->alloc_scopes, (uint64_t)u->n_scopes + 1,
			sizeof(*u->scopes)))
		return -1;
	*out = u->n_scopes++;
	s = &u->scopes[*out];
	memset(s, 0, sizeof(*s));
	s->off = off;
	s->parent = parent;
	s->first_child = s->next_sibling = NONE;
	s->range = first;
	s->n_ranges = u->n_ranges - first;
	if (parent != NONE) {
		s->call_file = call_file;
		s->call_line = call_line;
		s->next_sibling = u->scopes[parent].first_child;
		u->scopes[parent].first_child = *out;
		return 0;
	}
	for (i = first; i < u->n_ranges; i++) {
		if (!ms_reserve((void **)&u->tops, &u->alloc_tops, (uint64_t)u->n_tops + 1,
				sizeof(*u->tops)))
			return -1;
		u->tops[u->n_tops++] = (struct top){ u->ranges[i].lo, u->ranges[i].hi, *out };
	}
	return 0;
}

/* Add die as a scope: its ranges, and for an inlined call its call site. */
static int add_scope(struct unit *u, Dwarf_Die *die, uint32_t parent, uint32_t *out)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t first = u->n_ranges, call_file = 0, call_line = 0;
	Dwarf_Attribute a;
	Dwarf_Word w;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if (push_range(u, lo, hi) < 0)
			return -1;
	if (off < 0)
		return -1;
	if (parent != NONE) {
		if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
		    w <= UINT32_MAX)
			call_file = (uint32_t)w;
		if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0 &&
		    w <= UINT32_MAX)
			call_line = (uint32_t)w;
	}
	return push_scope(u, dwarf_dieoffset(die), first, parent, call_file, call_line, out);
}

/* add_scope() by dieread.h: 0, or MS_DIE_REFUSED (out of memory too). */
static int add_scope_ours(struct unit *u, const struct ms_die *die, uint32_t parent,
			  uint32_t *out)
{
	const struct ms_die_unit *du = &u->ours->du;
	struct ms_die_ranges it = { 0 };
	uint32_t first = u->n_ranges, call_file = 0, call_line = 0;
	uint64_t lo, hi, w;
	int r;

	while ((r = ms_die_ranges_next(du, die, &it, &lo, &hi)) == MS_DIE_OK)
		if (push_range(u, lo, hi) < 0)
			return MS_DIE_REFUSED;
	if (r != MS_DIE_NONE)
		return MS_DIE_REFUSED;
	if (parent != NONE) {
		if ((r = ms_die_udata(du, die, MS_DA_CALL_FILE, &w)) == MS_DIE_REFUSED)
			return MS_DIE_REFUSED;
		if (r == MS_DIE_OK && w <= UINT32_MAX)
			call_file = (uint32_t)w;
		if ((r = ms_die_udata(du, die, MS_DA_CALL_LINE, &w)) == MS_DIE_REFUSED)
			return MS_DIE_REFUSED;
		if (r == MS_DIE_OK && w <= UINT32_MAX)
			call_line = (uint32_t)w;
	}
	return push_scope(u, die->off, first, parent, call_file, call_line, out) < 0 ?
	       MS_DIE_REFUSED : 0;
}

/*
 * What both walks (index_unit_ours(), index_unit()) do at a DIE of tag,
 * inside the function scope *cur (NONE outside any): make it a scope
 * (whose parent is then *cur), enter its children, or skip it whole.
 * Only DIEs that can hold code scopes are entered: namespaces at the top,
 * and inside a function with code its blocks and inlined calls;
 * declarations and abstract instances (no code) are skipped.
 */
enum visit_kind { VISIT_SKIP, VISIT_SCOPE, VISIT_ENTER };

static enum visit_kind visit(int tag, bool code, uint32_t *cur)
{
	switch (tag) {
	case DW_TAG_subprogram:
		*cur = NONE;
		return code ? VISIT_SCOPE : VISIT_SKIP;
	case DW_TAG_inlined_subroutine:
		return *cur != NONE && code ? VISIT_SCOPE : VISIT_SKIP;
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return *cur != NONE ? VISIT_ENTER : VISIT_SKIP;
	case DW_TAG_namespace:
	case DW_TAG_module:
		return *cur == NONE ? VISIT_ENTER : VISIT_SKIP;
	default:
		return VISIT_SKIP;
	}
}

/*
 * index_unit()'s walk by dieread.h, the same walk as libdw's below:
 * 0 when done, MS_DIE_REFUSED for anything it leaves to libdw.
 */
static int index_unit_ours(struct ms_dwarfidx *d, struct unit *u)
{
	const struct ms_die_unit *du;
	struct ms_die *stack;
	uint32_t fn[DEPTH_MAX];
	uint32_t depth = 0;
	int r;

	if (open_ours(d, u) != MS_DIE_OK)
		return MS_DIE_REFUSED;
	if (!d->die_stack && !(d->die_stack = malloc(DEPTH_MAX * sizeof(*d->die_stack))))
		return MS_DIE_REFUSED;
	du = &u->ours->du;
	stack = d->die_stack;
	r = ms_die_child(du, &u->ours->cu, &stack[0]);
	if (r == MS_DIE_NONE)
		return 0;
	if (r != MS_DIE_OK)
		return MS_DIE_REFUSED;
	fn[0] = NONE;
	for (;;) {
		struct ms_die *die = &stack[depth];
		uint32_t cur = fn[depth], scope;
		bool descend = false;
		bool code = ms_die_has(die, MS_DA_LOW_PC) || ms_die_has(die, MS_DA_RANGES);

		switch (visit(die->tag, code, &cur)) {
		case VISIT_SCOPE:
			if (add_scope_ours(u, die, cur, &scope) < 0)
				return MS_DIE_REFUSED;
			if (scope != NONE) {
				cur = scope;
				descend = true;
			}
			break;
		case VISIT_ENTER:
			descend = true;
			break;
		case VISIT_SKIP:
			break;
		}
		if (descend) {
			if (depth + 1 >= DEPTH_MAX)
				return MS_DIE_REFUSED;
			r = ms_die_child(du, die, &stack[depth + 1]);
			if (r == MS_DIE_REFUSED)
				return MS_DIE_REFUSED;
			if (r == MS_DIE_OK) {
				fn[++depth] = cur;
				continue;
			}
		}
		/* The next sibling, climbing out of finished subtrees. */
		for (;;) {
			r = ms_die_sibling(du, &stack[depth], &stack[depth]);
			if (r == MS_DIE_REFUSED)
				return MS_DIE_REFUSED;
			if (r == MS_DIE_OK)
				break;
			if (depth == 0)
				return 0;
			depth--;
		}
	}
}

/*
 * Walk the unit's DIEs once, entering what visit() says (libdw skips a
 * subtree by DW_AT_sibling when the producer gave it): by dieread.h, or
 * by libdw where that reader refuses something.
 */
static int index_unit(struct ms_dwarfidx *d, struct unit *u)
{
	Dwarf_Die stack[DEPTH_MAX];
	uint32_t fn[DEPTH_MAX];
	uint32_t depth = 0;
	int r;

	if (index_unit_ours(d, u) == 0)
		goto done;
	/* Refused somewhere: libdw walks the unit again from the start. */
	scopes_release(u);
	d->stats.units_libdw++;
	if (!unit_die(d, u))
		goto bad;
	r = dwarf_child(&u->die, &stack[0]);
	if (r > 0)
		goto done;
	if (r < 0)
		goto bad;
	fn[0] = NONE;
	for (;;) {
		Dwarf_Die *die = &stack[depth];
		uint32_t cur = fn[depth], scope;
		bool descend = false;
		int tag = dwarf_tag(die);
		/* (libdw's attribute lookups: only where visit() asks.) */
		bool code = (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
			    has_code(die);

		switch (visit(tag, code, &cur)) {
		case VISIT_SCOPE:
			if (add_scope(u, die, cur, &scope) < 0)
				goto bad;
			if (scope != NONE) {
				cur = scope;
				descend = true;
			}
			break;
		case VISIT_ENTER:
			descend = true;
			break;
		case VISIT_SKIP:
			break;
		}
		if (descend) {
			if (depth + 1 >= DEPTH_MAX)
				goto bad;
			r = dwarf_child(die, &stack[depth + 1]);
			if (r < 0)
				goto bad;
			if (r == 0) {
				fn[++depth] = cur;
				continue;
			}
		}
		/* The next sibling, climbing out of finished subtrees. */
		for (;;) {
			Dwarf_Die next;

			r = dwarf_siblingof(&stack[depth], &next);
			if (r < 0)
				goto bad;
			/* A DW_AT_sibling that points back would walk in circles. */
			if (r == 0 && dwarf_dieoffset(&next) <= dwarf_dieoffset(&stack[depth]))
				goto bad;
			if (r == 0) {
				stack[depth] = next;
				break;
			}
			if (depth == 0)
				goto done;
			depth--;
		}
	}
done:
	if (u->n_tops)
		qsort(u->tops, u->n_tops, sizeof(*u->tops), cmp_top);
	u->state = UNIT_INDEXED;
	u->fresh = true;
	d->ic_pending = true;
	d->stats.units_indexed++;
	d->stats.scopes += u->n_scopes;
	return 0;
bad:
	note_problem(d, "a unit's DIEs cannot be read", u->off);
	unit_release(u);
	u->state = UNIT_BAD;
	d->stats.units_bad++;
	return -1;
}

/* ---- lookups ---- */

static bool scope_has(const struct unit *u, const struct scope *s, uint64_t addr)
{
	for (uint32_t i = 0; i < s->n_ranges; i++) {
		const struct range *r = &u->ranges[s->range + i];

		if (addr >= r->lo && addr < r->hi)
			return true;
	}
	return false;
}

/* How many back from a binary search's position to look for an enclosing range. */
#define OVERLAP_SCAN 8

static uint32_t find_unit(const struct ms_dwarfidx *d, uint64_t addr)
{
	uint32_t lo = 0, hi = d->n_uranges, k, stop;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->uranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	stop = lo > OVERLAP_SCAN ? lo - OVERLAP_SCAN : 0;
	for (k = lo; k > stop; k--)
		if (addr < d->uranges[k - 1].hi)
			return d->uranges[k - 1].unit;
	return NONE;
}

static uint32_t find_top(const struct unit *u, uint64_t addr)
{
	uint32_t lo = 0, hi = u->n_tops, k, stop;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (u->tops[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	stop = lo > OVERLAP_SCAN ? lo - OVERLAP_SCAN : 0;
	for (k = lo; k > stop; k--)
		if (addr < u->tops[k - 1].hi)
			return u->tops[k - 1].scope;
	return NONE;
}

static const char *attr_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

/* attr_string() by dieread.h: MS_DIE_OK (*out NULL when absent) or MS_DIE_REFUSED. */
static int string_ours(const struct ms_die_unit *du, const struct ms_die *die,
		       enum ms_die_attr a, const char **out)
{
	struct ms_die holder;
	int r = ms_die_integrate(du, die, a, &holder);

	*out = NULL;
	if (r == MS_DIE_NONE)
		return MS_DIE_OK;
	return r == MS_DIE_OK ? ms_die_string(du, &holder, a, out) : MS_DIE_REFUSED;
}

/*
 * What scope_name() reads of the DIE at off, by dieread.h as libdw reads
 * it: MS_DIE_OK, or MS_DIE_REFUSED.
 */
static int name_ours(struct ms_dwarfidx *d, struct unit *u, Dwarf_Off off, const char **link,
		     const char **plain, int *line, uint64_t *entry)
{
	const struct ms_die_unit *du;
	struct ms_die die, holder;
	uint64_t v;
	int r;

	if (open_ours(d, u) != MS_DIE_OK)
		return MS_DIE_REFUSED;
	du = &u->ours->du;
	if (ms_die_read(du, off, &die) != MS_DIE_OK ||
	    string_ours(du, &die, MS_DA_LINKAGE_NAME, link) != MS_DIE_OK ||
	    (!*link && string_ours(du, &die, MS_DA_MIPS_LINKAGE_NAME, link) != MS_DIE_OK) ||
	    string_ours(du, &die, MS_DA_NAME, plain) != MS_DIE_OK)
		return MS_DIE_REFUSED;
	/* dwarf_decl_line(): the integrated DW_AT_decl_line, at most INT_MAX. */
	*line = 0;
	r = ms_die_integrate(du, &die, MS_DA_DECL_LINE, &holder);
	if (r == MS_DIE_OK)
		r = ms_die_udata(du, &holder, MS_DA_DECL_LINE, &v);
	if (r == MS_DIE_REFUSED)
		return MS_DIE_REFUSED;
	if (r == MS_DIE_OK && v <= INT_MAX)
		*line = (int)v;
	/* dwarf_entrypc(): DW_AT_entry_pc, else DW_AT_low_pc, of the DIE itself. */
	*entry = 0;
	r = ms_die_addr(du, &die, ms_die_has(&die, MS_DA_ENTRY_PC) ? MS_DA_ENTRY_PC : MS_DA_LOW_PC,
			&v);
	if (r == MS_DIE_REFUSED)
		return MS_DIE_REFUSED;
	if (r == MS_DIE_OK)
		*entry = v;
	return MS_DIE_OK;
}

/* The scope's names and declaration line, read once. */
static const struct name *scope_name(struct ms_dwarfidx *d, struct unit *u, struct scope *s)
{
	static const struct name unnamed = { NULL, "", 0, 0 };
	struct name nm = { NULL, "", 0, 0 };
	Dwarf_Addr entry;
	const char *link, *plain;
	Dwarf_Die die;
	int line;
	char *dem;

	if (s->name)
		return &d->names[s->name - 1];
	if (name_ours(d, u, s->off, &link, &plain, &line, &nm.entry) == MS_DIE_OK) {
		if (line > 0)
			nm.decl_line = (uint32_t)line;
		goto names;
	}
	d->stats.names_libdw++;
	if (!dwarf_offdie(d->dw, s->off, &die))
		return &unnamed;
	link = attr_string(&die, DW_AT_linkage_name);
	if (!link)
		link = attr_string(&die, DW_AT_MIPS_linkage_name);
	plain = attr_string(&die, DW_AT_name);
	if (dwarf_decl_line(&die, &line) == 0 && line > 0)
		nm.decl_line = (uint32_t)line;
	if (dwarf_entrypc(&die, &entry) == 0)
		nm.entry = entry;
names:
	if (link && (dem = ms_demangle(link))) {
		nm.function = ms_strpool_add(&d->pool, dem, strlen(dem));
		free(dem);
	}
	if (!nm.function)
		nm.function = plain ? plain : link;
	if (link && nm.function && strcmp(link, nm.function))
		nm.system_name = link;
	if (!ms_reserve((void **)&d->names, &d->alloc_names, (uint64_t)d->n_names + 1,
			sizeof(*d->names)))
		return &unnamed;
	d->names[d->n_names++] = nm;
	s->name = d->n_names;
	if (u->mapped)
		u->dirty = d->ic_pending = true;	/* a name its cache entry lacks */
	return &d->names[s->name - 1];
}

/* The unit's DW_AT_comp_dir (dwarf_attr(), then dwarf_formstring()), or NULL. */
static const char *unit_comp_dir(struct ms_dwarfidx *d, struct unit *u)
{
	Dwarf_Attribute a;
	const char *dir;

	if (u->comp_dir_read)
		return u->comp_dir;
	u->comp_dir_read = true;
	if (open_ours(d, u) == MS_DIE_OK) {
		int r = ms_die_string(&u->ours->du, &u->ours->cu, MS_DA_COMP_DIR, &dir);

		if (r != MS_DIE_REFUSED) {
			u->comp_dir = r == MS_DIE_OK ? dir : NULL;
			return u->comp_dir;
		}
	}
	if (unit_die(d, u) && dwarf_attr(&u->die, DW_AT_comp_dir, &a))
		u->comp_dir = dwarf_formstring(&a);
	return u->comp_dir;
}

static uint32_t ptr_hash(const char *p)
{
	return (uint32_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Keep the table of paths at most half full. */
static bool paths_reserve(struct ms_dwarfidx *d)
{
	uint32_t size = d->paths_mask ? d->paths_mask + 1 : 0, i;
	struct path *old = d->paths, *p;

	if ((d->n_paths + 1) * 2 <= size)
		return true;
	size = size ? size * 2 : 256;
	if (!(p = calloc(size, sizeof(*p))))
		return false;
	d->paths = p;
	d->paths_mask = size - 1;
	for (i = 0; old && i < (d->paths_mask + 1) / 2; i++) {
		uint32_t pos;

		if (!old[i].raw)
			continue;
		for (pos = ptr_hash(old[i].raw) & d->paths_mask; p[pos].raw;
		     pos = (pos + 1) & d->paths_mask)
			;
		p[pos] = old[i];
	}
	free(old);
	return true;
}

/*
 * A file name as people want it: relative names under the unit's
 * compilation directory, "/./" and a leading "./" dropped. Made once per
 * name (libdw's strings are stable, so their pointers are the keys).
 */
static const char *shown_path(struct ms_dwarfidx *d, struct unit *u, const char *raw)
{
	uint32_t pos;
	size_t len, o = 0, i;
	const char *dir = NULL;
	char *buf;

	if (!raw || !*raw)
		return "";
	if (d->paths_mask) {
		for (pos = ptr_hash(raw) & d->paths_mask; d->paths[pos].raw;
		     pos = (pos + 1) & d->paths_mask)
			if (d->paths[pos].raw == raw)
				return d->paths[pos].shown;
	}
	unit_comp_dir(d, u);
	if (raw[0] != '/' && u->comp_dir && u->comp_dir[0] == '/')
		dir = u->comp_dir;
	len = (dir ? strlen(dir) + 1 : 0) + strlen(raw);
	if (!paths_reserve(d) || !(buf = ms_strpool_alloc(&d->pool, len + 1)))
		return raw;
	if (dir) {
		len = strlen(dir);
		memcpy(buf, dir, len);
		o = len;
		if (o && buf[o - 1] != '/')
			buf[o++] = '/';
	}
	for (i = 0; raw[i];) {
		/* "./" at the start of a component is dropped. */
		if (raw[i] == '.' && raw[i + 1] == '/' && (i == 0 || raw[i - 1] == '/')) {
			i += 2;
			while (raw[i] == '/')
				i++;
			continue;
		}
		buf[o++] = raw[i++];
	}
	buf[o] = '\0';
	for (pos = ptr_hash(raw) & d->paths_mask; d->paths[pos].raw; pos = (pos + 1) & d->paths_mask)
		;
	d->paths[pos] = (struct path){ raw, buf };
	d->n_paths++;
	return buf;
}

/* The sections lines.h reads, set up once: false when it cannot read this file's tables. */
static bool line_sections(struct ms_dwarfidx *d)
{
	if (!d->have_sections) {
		Elf_Data *line = d->sec[SEC_LINE];
		Elf_Data *str = d->sec[SEC_STR];
		Elf_Data *line_str = d->sec[SEC_LINE_STR];
		GElf_Ehdr eh;

		d->have_sections = true;
		/* Relocatable files need libdw's relocations of DW_LNE_set_address. */
		if (line && gelf_getehdr(d->elf, &eh) && eh.e_type != ET_REL)
			d->lsec = (struct ms_line_sections){
				line->d_buf, line->d_size,
				str ? str->d_buf : NULL, str ? str->d_size : 0,
				line_str ? line_str->d_buf : NULL, line_str ? line_str->d_size : 0,
				eh.e_ident[EI_DATA] == ELFDATA2MSB,
			};
	}
	return d->lsec.line != NULL;
}

/* The table already read at .debug_line offset off: NULL when none; *refused when lines.h refused it. */
static struct tab *find_tab(struct ms_dwarfidx *d, uint64_t off, bool *refused)
{
	for (uint32_t i = 0; i < d->n_tabs; i++)
		if (d->tabs[i]->t.offset == off) {
			*refused = !d->tabs[i]->t.rows && !d->tabs[i]->t.files;
			return d->tabs[i];
		}
	return NULL;
}

static struct tab *new_tab(struct ms_dwarfidx *d, struct unit *u)
{
	struct tab *t;

	if (!ms_reserve((void **)&d->tabs, &d->alloc_tabs, (uint64_t)d->n_tabs + 1,
			sizeof(*d->tabs)) ||
	    !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->reader = u->hdr;
	d->tabs[d->n_tabs++] = t;
	return t;
}

static const struct ms_linetab *cached_lines(struct ms_dwarfidx *d, struct unit *u);

/*
 * The unit's line table when lines.h can read it, each table once (units
 * may share one, as libdw shares it by offset); NULL when libdw answers.
 */
static const struct ms_linetab *unit_lines(struct ms_dwarfidx *d, struct unit *u)
{
	struct tab *t;
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint8_t addr_size;
	const char *comp_dir;
	bool refused;
	int r;

	if (u->lines_state != LINES_NEW)
		return u->lines_state == LINES_OURS ? u->lines : NULL;
	u->lines_state = LINES_LIBDW;
	/* The same attributes libdw's dwarf_getsrclines() reads. */
	if (!line_sections(d))
		return NULL;
	if (u->c_lines)
		return cached_lines(d, u);
	r = MS_DIE_REFUSED;
	if (open_ours(d, u) == MS_DIE_OK) {
		r = ms_die_udata(&u->ours->du, &u->ours->cu, MS_DA_STMT_LIST, &off);
		addr_size = u->ours->du.addr_size;
		if (r == MS_DIE_NONE)
			return NULL;
	}
	if (r != MS_DIE_OK &&
	    (!unit_die(d, u) || !dwarf_attr(&u->die, DW_AT_stmt_list, &a) ||
	     dwarf_formudata(&a, &off) != 0 ||
	     dwarf_cu_info(u->die.cu, NULL, NULL, NULL, NULL, NULL, &addr_size, NULL) != 0))
		return NULL;
	if ((t = find_tab(d, off, &refused))) {
		if (refused)
			return NULL;	/* refused before */
		u->lines = &t->t;
		u->lines_state = LINES_OURS;
		return u->lines;
	}
	comp_dir = unit_comp_dir(d, u);
	if (!(t = new_tab(d, u)))
		return NULL;
	r = ms_linetab_read(&t->t, &d->lsec, off, addr_size, comp_dir, &d->pool, &d->scratch);
	if (r)
		return NULL;
	u->lines = &t->t;
	u->lines_state = LINES_OURS;
	if (u->mapped)
		u->dirty = d->ic_pending = true;	/* lines its cache entry lacks */
	return u->lines;
}

static const char *call_file(struct ms_dwarfidx *d, struct unit *u, uint32_t idx)
{
	const struct ms_linetab *t = unit_lines(d, u);
	const char *f;

	if (t)
		return shown_path(d, u, ms_linetab_file(t, idx));
	if (!u->files_read) {
		u->files_read = true;
		if (!unit_die(d, u) || dwarf_getsrcfiles(&u->die, &u->files, &u->n_files) != 0) {
			u->files = NULL;
			u->n_files = 0;
		}
	}
	if (!u->files || idx >= u->n_files)
		return "";
	f = dwarf_filesrc(u->files, idx, NULL, NULL);
	return shown_path(d, u, f);
}

static void fill_entry(struct ms_dwarfidx *d, struct unit *u, struct scope *s,
		       struct ms_srcline *e)
{
	const struct name *nm = scope_name(d, u, s);

	e->function = nm->function;
	e->system_name = nm->system_name;
	e->function_line = nm->decl_line;
}

int ms_dwarfidx_lookup(struct ms_dwarfidx *d, uint64_t addr, struct ms_srcline *out,
		       uint32_t max, uint32_t *n, uint64_t *start)
{
	uint32_t ui, top, cur, chain[DEPTH_MAX], k = 0, i, j, m;
	struct unit *u;
	const struct ms_linetab *lines;
	Dwarf_Line *line;
	const char *src = NULL;
	bool has_line = false;
	int lineno = 0;

	*n = 0;
	*start = 0;
	for (;;) {
		ui = find_unit(d, addr);
		u = ui == NONE ? NULL : unit_at(d, ui);
		if (ui != NONE && !u) {
			if (!d->problem[0])
				snprintf(d->problem, sizeof(d->problem), "out of memory for a unit");
			return MS_SYM_BAD_DWARF;
		}
		/* From aranges, a miss or a unit that is not as they say is not an answer. */
		if (!d->from_aranges || (u && (u->checked || check_unit(d, u) == 0)))
			break;
		if (reread_units(d) < 0) {
			if (!d->problem[0])
				snprintf(d->problem, sizeof(d->problem),
					 "out of memory for the list of units");
			d->incomplete = true;
			return MS_SYM_BAD_DWARF;
		}
	}
	if (ui == NONE)
		return d->incomplete ? MS_SYM_BAD_DWARF : MS_SYM_NOT_IN_DEBUG;
	if (u->state == UNIT_NEW)
		index_unit(d, u);
	if (u->state == UNIT_BAD || !max)
		return MS_SYM_BAD_DWARF;

	/* The source line of the address itself: the innermost entry's. */
	out[0].file = "";
	out[0].line = 0;
	if ((lines = unit_lines(d, u))) {
		has_line = ms_linetab_find(lines, addr, &src, &lineno);
	} else if (unit_die(d, u) && (line = dwarf_getsrc_die(&u->die, addr))) {
		has_line = true;
		src = dwarf_linesrc(line, NULL, NULL);
		if (dwarf_lineno(line, &lineno) != 0)
			lineno = 0;
	}
	if (has_line) {
		out[0].file = shown_path(d, u, src);
		if (lineno > 0)
			out[0].line = (uint32_t)lineno;
	}

	top = find_top(u, addr);
	if (top == NONE) {
		if (!has_line)
			return MS_SYM_NOT_IN_DEBUG;
		/* Lines but no function: assembly. The caller names it. */
		out[0].function = NULL;
		out[0].system_name = "";
		out[0].function_line = 0;
		*n = 1;
		return MS_SYM_OK;
	}

	/* Down through the calls inlined at addr, outermost first. */
	chain[k++] = cur = top;
	for (;;) {
		uint32_t c;

		for (c = u->scopes[cur].first_child; c != NONE; c = u->scopes[c].next_sibling)
			if (scope_has(u, &u->scopes[c], addr))
				break;
		if (c == NONE || k == DEPTH_MAX)
			break;
		chain[k++] = cur = c;
	}

	/* Innermost first; a chain too deep keeps its innermost and the outermost. */
	m = k < max ? k : max;
	for (i = 0; i < m; i++) {
		j = i == m - 1 ? 0 : k - 1 - i;
		fill_entry(d, u, &u->scopes[chain[j]], &out[i]);
		if (i > 0) {
			/* A caller's line is the call site of the entry inside it. */
			const struct scope *inner = &u->scopes[chain[j + 1]];

			out[i].file = call_file(d, u, inner->call_file);
			out[i].line = inner->call_line;
		}
	}
	*n = m;
	*start = scope_name(d, u, &u->scopes[top])->entry;
	if (!*start)
		*start = u->ranges[u->scopes[top].range].lo;
	return MS_SYM_OK;
}

/* ---- indexed units, cached ---- */

/*
 * Indexing a unit (the walk of its DIEs for scopes, its line program for
 * rows) is most of a short ms-symbolize run, and its result only changes
 * with the DWARF. So each unit indexed in a run is kept in a file beside
 * the inflated debug copy (dcache.h), keyed by the build id and the sizes
 * of every section the index reads, and a later run maps the file and
 * takes a unit from it instead of reading the DWARF.
 *
 * The file is trusted for answers, so nothing of it is used unproved:
 *  - at ms_dwarfidx_index_cache(): the header (magic, version, the sizes of
 *    the structures, the key), then the directory (its CRC, entries sorted
 *    by unit, each unit's bytes inside the file, in order, not
 *    overlapping); anything wrong ignores the whole file;
 *  - on a unit's first use: the CRC-32C of its bytes, then every count,
 *    index and offset (scopes' parents, children and siblings, their
 *    ranges, names and strings, tops, rows in order, files); anything
 *    wrong ignores that unit's entry: it is indexed from the DWARF.
 * A unit from aranges is checked as usual unless its entry holds the very
 * ranges its DIE gave when it was indexed (the check's result). Its line
 * table is kept only when the unit read it itself (a table shared with a
 * unit of another compilation directory names files differently), and
 * installed where unit_lines() would have read it, so that sharing by
 * offset is as without the file. Names of scopes are kept once some run
 * read them.
 *
 * ms_dwarfidx_save() writes the file again when units were indexed from
 * the DWARF, a cached unit learnt a name or its lines, or an entry was
 * damaged: units used in the run first, then the file's other entries, up
 * to MS_DWARFIDX_CACHE_MAX bytes (what does not fit is left out: those
 * units are read from the DWARF when used and take the room of units not
 * used). It is published atomically (util/publish.h): concurrent runs
 * each write a whole file, the last rename wins.
 *
 * Layout (host byte order, 8-byte aligned): struct ic_header, n_entries
 * struct ic_entry sorted by unit header offset, then each entry's bytes:
 * struct ic_blob, its unit's ranges per its DIE (struct range), scopes
 * (struct scope; name: 1 + an index in the names below, 0 for none), the
 * scopes' ranges (struct range), tops (struct top), names (struct
 * ic_name), rows (struct ms_rkey), files (uint32_t string offsets; NONE
 * for ms_linetab_unknown), strings (NUL-terminated), zeros to 8 bytes.
 */
#define IC_VERSION 1

static const char ic_magic[8] = "MSUNIDX";

struct ic_header {
	char magic[8];
	uint32_t version;
	uint32_t scope_size, range_size, top_size, name_size, row_size, blob_size, entry_size;
	uint32_t bid_len;
	uint8_t bid[MS_BUILD_ID_MAX];
	uint64_t sec_size[SEC_N];
	uint64_t n_entries;
	uint32_t dir_crc;
	uint32_t pad;
};

struct ic_entry {
	uint64_t hdr;		/* the unit's header offset */
	uint64_t pos, len;	/* its bytes in the file */
	uint32_t crc;		/* their CRC-32C */
	uint32_t pad;
};

enum { IC_LINES = 1, IC_COMP_DIR = 2 };

struct ic_blob {
	uint64_t hdr, off;	/* the unit's header and first DIE */
	uint64_t line_off;	/* IC_LINES: its table's offset in .debug_line */
	uint32_t n_cu_ranges, n_scopes, n_ranges, n_tops;
	uint32_t n_names, n_rows, n_files, str_len;
	uint32_t flags;		/* IC_* */
	uint32_t comp_dir;	/* IC_COMP_DIR: its DW_AT_comp_dir in the strings */
};

struct ic_name {
	uint64_t entry;
	uint32_t function;	/* NONE when the DWARF gives none */
	uint32_t system_name;
	uint32_t decl_line;
	uint32_t pad;
};

enum { IC_UNSEEN, IC_GOOD, IC_BAD };

/* The file's size at most: see above. */
static uint64_t ic_max = MS_DWARFIDX_CACHE_MAX;

void ms_dwarfidx_cache_max(uint64_t bytes)
{
	ic_max = bytes ? bytes : MS_DWARFIDX_CACHE_MAX;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* The header d's DWARF with build id bid would have (n_entries, dir_crc 0). */
static void ic_key(const struct ms_dwarfidx *d, const uint8_t *bid, uint32_t bid_len,
		   struct ic_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, ic_magic, sizeof(h->magic));
	h->version = IC_VERSION;
	h->scope_size = sizeof(struct scope);
	h->range_size = sizeof(struct range);
	h->top_size = sizeof(struct top);
	h->name_size = sizeof(struct ic_name);
	h->row_size = sizeof(struct ms_rkey);
	h->blob_size = sizeof(struct ic_blob);
	h->entry_size = sizeof(struct ic_entry);
	h->bid_len = bid_len;
	memcpy(h->bid, bid, bid_len);
	for (int k = 0; k < SEC_N; k++)
		h->sec_size[k] = d->sec[k] ? d->sec[k]->d_size : 0;
}

/* The header and directory of the mapped file: whether they hold. */
static bool ic_dir_valid(const uint8_t *map, size_t len, const struct ic_header *key)
{
	const struct ic_header *h = (const void *)map;
	const struct ic_entry *e;
	uint64_t n, end, i;

	if (len < sizeof(*h) || len % 8 || memcmp(h, key, offsetof(struct ic_header, n_entries)))
		return false;
	n = h->n_entries;
	if (n > (len - sizeof(*h)) / sizeof(*e) || n > UINT32_MAX)
		return false;
	e = (const void *)(map + sizeof(*h));
	if (ms_crc32c(0, e, n * sizeof(*e)) != h->dir_crc)
		return false;
	end = sizeof(*h) + n * sizeof(*e);
	for (i = 0; i < n; i++) {
		if ((i && e[i].hdr <= e[i - 1].hdr) || e[i].pos < end || e[i].pos % 8 ||
		    e[i].len < sizeof(struct ic_blob) || e[i].len % 8 || e[i].pos > len ||
		    e[i].len > len - e[i].pos)
			return false;
		end = e[i].pos + e[i].len;
	}
	return end == len;	/* nothing after the last entry */
}

void ms_dwarfidx_index_cache(struct ms_dwarfidx *d, const char *path, const uint8_t *bid,
			     uint32_t bid_len)
{
	struct ic_header key;
	struct stat st;
	void *map;
	int fd;

	if (!path || !bid_len || bid_len > MS_BUILD_ID_MAX || !d->dsec.info || d->ic_path ||
	    !(d->ic_path = strdup(path)))
		return;
	memcpy(d->ic_bid, bid, bid_len);
	d->ic_bid_len = bid_len;
	ic_key(d, bid, bid_len, &key);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(key) ||
	    (uint64_t)st.st_size > ic_max) {
		close(fd);
		return;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	if (!ic_dir_valid(map, (size_t)st.st_size, &key) ||
	    !(d->ic_state = calloc(((const struct ic_header *)map)->n_entries + 1, 1))) {
		munmap(map, (size_t)st.st_size);
		d->ic_bad = true;
		return;
	}
	d->ic_map = map;
	d->ic_len = (size_t)st.st_size;
	d->ic_n = (uint32_t)((const struct ic_header *)map)->n_entries;
	d->ic_dir = (const void *)((uint8_t *)map + sizeof(struct ic_header));
}

/* The entry of the unit whose header is at hdr, or NONE. */
static uint32_t ic_find(const struct ms_dwarfidx *d, uint64_t hdr)
{
	uint32_t lo = 0, hi = d->ic_n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->ic_dir[mid].hdr < hdr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ic_n && d->ic_dir[lo].hdr == hdr ? lo : NONE;
}

/* The parts of an entry's bytes. */
struct ic_parts {
	const struct ic_blob *b;
	const struct range *cu_ranges, *ranges;
	const struct scope *scopes;
	const struct top *tops;
	const struct ic_name *names;
	const struct ms_rkey *rows;
	const uint32_t *files;
	const char *str;
};

/* Split p (len bytes) into its parts: whether the counts add up to len exactly. */
static bool ic_split(const uint8_t *p, uint64_t len, struct ic_parts *o)
{
	const struct ic_blob *b = (const void *)p;
	uint64_t need = sizeof(*b);

	o->b = b;
	/* Each count is 32 bits: the sum cannot overflow 64. */
	o->cu_ranges = (const void *)(p + need);
	need += (uint64_t)b->n_cu_ranges * sizeof(struct range);
	o->scopes = (const void *)(p + need);
	need += (uint64_t)b->n_scopes * sizeof(struct scope);
	o->ranges = (const void *)(p + need);
	need += (uint64_t)b->n_ranges * sizeof(struct range);
	o->tops = (const void *)(p + need);
	need += (uint64_t)b->n_tops * sizeof(struct top);
	o->names = (const void *)(p + need);
	need += (uint64_t)b->n_names * sizeof(struct ic_name);
	o->rows = (const void *)(p + need);
	need += (uint64_t)b->n_rows * sizeof(struct ms_rkey);
	o->files = (const void *)(p + need);
	need += (uint64_t)b->n_files * sizeof(uint32_t);
	o->str = (const char *)(p + need);
	need += b->str_len;
	return round8(need) == len;
}

static bool ic_str_ok(const struct ic_parts *c, uint32_t off)
{
	return off < c->b->str_len;
}

/*
 * Every index and offset of an entry whose CRC held, for unit u of d:
 * whether nothing in it can make a lookup read out of bounds, loop or
 * answer from another unit.
 */
static bool ic_blob_valid(const struct ms_dwarfidx *d, const struct unit *u,
			  const struct ic_parts *c)
{
	const struct ic_blob *b = c->b;
	uint32_t i, n = b->n_scopes;

	if (b->hdr != u->hdr || b->off != u->off || !b->n_cu_ranges ||
	    (b->str_len && c->str[b->str_len - 1]) || (b->flags & ~(IC_LINES | IC_COMP_DIR)) ||
	    ((b->flags & IC_COMP_DIR) && !ic_str_ok(c, b->comp_dir)))
		return false;
	for (i = 0; i < b->n_cu_ranges; i++)
		if (c->cu_ranges[i].lo >= c->cu_ranges[i].hi ||
		    (i && cmp_range(&c->cu_ranges[i - 1], &c->cu_ranges[i]) > 0))
			return false;
	for (i = 0; i < b->n_ranges; i++)
		if (c->ranges[i].lo >= c->ranges[i].hi)
			return false;
	/*
	 * Scopes are numbered as the walk met them: a parent before its
	 * calls, and each call's next sibling (pushed in front) before it,
	 * so that every chain followed by a lookup strictly moves one way.
	 */
	for (i = 0; i < n; i++) {
		const struct scope *s = &c->scopes[i];

		if (s->off <= u->off || s->off >= d->dsec.info_size ||
		    (s->parent != NONE && s->parent >= i) ||
		    (s->first_child != NONE && (s->first_child <= i || s->first_child >= n ||
						c->scopes[s->first_child].parent != i)) ||
		    (s->next_sibling != NONE && (s->next_sibling >= i || s->parent == NONE ||
						 c->scopes[s->next_sibling].parent != s->parent)) ||
		    !s->n_ranges || s->range > b->n_ranges || s->n_ranges > b->n_ranges - s->range ||
		    s->name > b->n_names ||
		    (s->parent == NONE && (s->call_file || s->call_line)))
			return false;
	}
	for (i = 0; i < b->n_tops; i++) {
		const struct top *t = &c->tops[i];

		if (t->scope >= n || c->scopes[t->scope].parent != NONE || t->lo >= t->hi ||
		    (i && cmp_top(&c->tops[i - 1], t) > 0))
			return false;
	}
	for (i = 0; i < b->n_names; i++)
		if ((c->names[i].function != NONE && !ic_str_ok(c, c->names[i].function)) ||
		    !ic_str_ok(c, c->names[i].system_name))
			return false;
	if (!(b->flags & IC_LINES))
		return !b->n_rows && !b->n_files && !b->line_off;
	/* A table lines.h read has at least one file (ms_linetab_unknown). */
	if (!b->n_files || !d->sec[SEC_LINE] || b->line_off >= d->sec[SEC_LINE]->d_size)
		return false;
	for (i = 1; i < b->n_rows; i++)
		if (c->rows[i - 1].key > c->rows[i].key)
			return false;
	for (i = 0; i < b->n_files; i++)
		if (c->files[i] != NONE && !ic_str_ok(c, c->files[i]))
			return false;
	return true;
}

/* Take unit u's index from entry e (proved): scopes, ranges, tops, names, comp_dir, lines. */
static int ic_install(struct ms_dwarfidx *d, struct unit *u, const struct ic_parts *c)
{
	const struct ic_blob *b = c->b;
	uint32_t i;

	if (b->n_scopes && !(u->scopes = malloc((size_t)b->n_scopes * sizeof(*u->scopes))))
		return -1;
	if (b->n_scopes)
		memcpy(u->scopes, c->scopes, (size_t)b->n_scopes * sizeof(*u->scopes));
	u->n_scopes = u->alloc_scopes = b->n_scopes;
	for (i = 0; i < u->n_scopes; i++) {
		struct scope *s = &u->scopes[i];
		const struct ic_name *cn;

		if (!s->name)
			continue;
		cn = &c->names[s->name - 1];
		if (!ms_reserve((void **)&d->names, &d->alloc_names, (uint64_t)d->n_names + 1,
				sizeof(*d->names))) {
			free(u->scopes);
			u->scopes = NULL;
			u->n_scopes = u->alloc_scopes = 0;
			return -1;
		}
		d->names[d->n_names++] = (struct name){
			cn->function == NONE ? NULL : c->str + cn->function,
			c->str + cn->system_name, cn->decl_line, cn->entry,
		};
		s->name = d->n_names;
	}
	u->ranges = (struct range *)c->ranges;
	u->n_ranges = b->n_ranges;
	u->tops = (struct top *)c->tops;
	u->n_tops = b->n_tops;
	u->mapped = true;
	u->comp_dir_read = true;
	u->comp_dir = b->flags & IC_COMP_DIR ? c->str + b->comp_dir : NULL;
	if (b->flags & IC_LINES) {
		u->c_lines = true;
		u->c_line_off = b->line_off;
		u->c_rows = c->rows;
		u->c_n_rows = b->n_rows;
		u->c_files = c->files;
		u->c_n_files = b->n_files;
		u->c_str = c->str;
	}
	u->state = UNIT_INDEXED;
	d->stats.units_indexed++;
	d->stats.units_index_cached++;
	d->stats.scopes += u->n_scopes;
	return 0;
}

/*
 * Unit i's index from the cache, when its entry is there and proves
 * intact (see above); else u stays as it is, to be indexed from the DWARF.
 */
static void ic_attach(struct ms_dwarfidx *d, uint32_t i, struct unit *u)
{
	uint32_t e = ic_find(d, u->hdr);
	const struct ic_entry *en;
	struct ic_parts c;

	if (e == NONE || d->ic_state[e] == IC_BAD)
		return;
	en = &d->ic_dir[e];
	if (d->ic_state[e] == IC_UNSEEN) {
		const uint8_t *p = d->ic_map + en->pos;

		if (ms_crc32c(0, p, en->len) != en->crc || !ic_split(p, en->len, &c) ||
		    !ic_blob_valid(d, u, &c)) {
			d->ic_state[e] = IC_BAD;
			d->ic_bad = true;
			return;
		}
		d->ic_state[e] = IC_GOOD;
	} else if (!ic_split(d->ic_map + en->pos, en->len, &c)) {
		return;
	}
	/*
	 * A unit from aranges is still to be checked against its DIE, unless
	 * the entry holds that DIE's ranges and they are aranges'.
	 */
	if (!d->units[i].from_dies) {
		if (c.b->n_cu_ranges != u->n_ar)
			return;
		for (uint32_t k = 0; k < u->n_ar; k++)
			if (c.cu_ranges[k].lo != d->ar[u->ar + k].lo ||
			    c.cu_ranges[k].hi != d->ar[u->ar + k].hi)
				return;
		u->checked = true;
	}
	if (ic_install(d, u, &c) == 0)
		u->ic_entry = e;
}

/*
 * unit_lines() for a unit whose table is cached: the table read before at
 * that offset when there is one (as without the cache), else the cached
 * one. NULL when libdw answers.
 */
static const struct ms_linetab *cached_lines(struct ms_dwarfidx *d, struct unit *u)
{
	struct tab *t;
	bool refused;

	if ((t = find_tab(d, u->c_line_off, &refused))) {
		if (refused)
			return NULL;
		u->lines = &t->t;
		u->lines_state = LINES_OURS;
		return u->lines;
	}
	if (!(t = new_tab(d, u)))
		return NULL;
	t->mapped = true;
	t->t.offset = u->c_line_off;
	if (!(t->t.files = malloc((size_t)u->c_n_files * sizeof(*t->t.files)))) {
		/* Looks refused to later units at this offset: libdw answers them alike. */
		return NULL;
	}
	for (uint32_t i = 0; i < u->c_n_files; i++)
		t->t.files[i] = u->c_files[i] == NONE ? ms_linetab_unknown :
				u->c_str + u->c_files[i];
	t->t.n_files = u->c_n_files;
	t->t.rows = u->c_n_rows ? (struct ms_rkey *)u->c_rows : NULL;
	t->t.n_rows = u->c_n_rows;
	u->lines = &t->t;
	u->lines_state = LINES_OURS;
	return u->lines;
}

/* ---- writing the cache ---- */

/* n more bytes at the end of o, not cleared: NULL when out of memory (o->failed). */
static void *ob_grow(struct obuf *o, size_t n)
{
	void *at;

	if (o->failed)
		return NULL;
	if (n > o->cap - o->len) {
		size_t cap = o->cap ? o->cap : 65536;
		uint8_t *p;

		while (cap - o->len < n) {
			if (cap > SIZE_MAX / 2) {
				o->failed = true;
				return NULL;
			}
			cap *= 2;
		}
		if (!(p = realloc(o->p, cap))) {
			o->failed = true;
			return NULL;
		}
		o->p = p;
		o->cap = cap;
	}
	at = o->p + o->len;
	o->len += n;
	return at;
}

/* n more bytes, zeroed. */
static void *ob_room(struct obuf *o, size_t n)
{
	void *at = ob_grow(o, n);

	if (at)
		memset(at, 0, n);
	return at;
}

static void ob_put(struct obuf *o, const void *p, size_t n)
{
	void *at = ob_grow(o, n);

	if (at && n)
		memcpy(at, p, n);
}

/* Strings of an entry being made: appended to strs, their offsets returned. */
static uint32_t ob_str(struct obuf *strs, const char *s)
{
	size_t at = strs->len;

	ob_put(strs, s, strlen(s) + 1);
	return at > UINT32_MAX - 1 ? (strs->failed = true, 0) : (uint32_t)at;
}

/* Whether unit u (number i) has the ranges of its DIE at hand: into *o (sorted), else false. */
static bool cu_ranges(struct ms_dwarfidx *d, uint32_t i, const struct unit *u, struct obuf *o)
{
	size_t at = o->len;
	uint32_t n = 0;

	if (!d->units[i].from_dies) {
		/* Checked before it was indexed: its DIE's ranges are its aranges. */
		if (!u->checked)
			return false;
		ob_put(o, d->ar + u->ar, (size_t)u->n_ar * sizeof(struct range));
		return u->n_ar > 0 && !o->failed;
	}
	/* Read from the DIEs (read_units()): its ranges are in the unit list. */
	for (uint32_t k = 0; k < d->n_uranges; k++)
		if (d->uranges[k].unit == i) {
			struct range r = { d->uranges[k].lo, d->uranges[k].hi };

			ob_put(o, &r, sizeof(r));
			n++;
		}
	if (o->failed || !n)
		return false;
	sort_ranges((struct range *)(o->p + at), n);
	return true;
}

/* Unit i's entry appended to o (8-aligned): 0, or -1 when it cannot be made (nothing kept). */
static int ic_make(struct ms_dwarfidx *d, uint32_t i, struct unit *u, struct obuf *o)
{
	struct obuf strs = { 0 }, names = { 0 };
	struct ic_blob b = { 0 };
	size_t start = o->len, at;
	const char *comp_dir = unit_comp_dir(d, u);
	uint32_t k, n_names = 0;
	struct tab *t = NULL;

	b.hdr = u->hdr;
	b.off = u->off;
	ob_room(o, sizeof(b));
	at = o->len;
	if (!cu_ranges(d, i, u, o))
		goto fail;
	b.n_cu_ranges = (uint32_t)((o->len - at) / sizeof(struct range));
	if (comp_dir) {
		b.flags |= IC_COMP_DIR;
		b.comp_dir = ob_str(&strs, comp_dir);
	}
	/* Scopes, their names numbered anew. */
	at = o->len;
	ob_put(o, u->scopes, (size_t)u->n_scopes * sizeof(*u->scopes));
	for (k = 0; k < u->n_scopes && !o->failed; k++) {
		struct scope *s = (struct scope *)(o->p + at) + k;
		const struct name *nm;
		struct ic_name cn = { 0 };

		if (!s->name)
			continue;
		nm = &d->names[s->name - 1];
		cn.entry = nm->entry;
		cn.function = nm->function ? ob_str(&strs, nm->function) : NONE;
		cn.system_name = ob_str(&strs, nm->system_name);
		cn.decl_line = nm->decl_line;
		ob_put(&names, &cn, sizeof(cn));
		s->name = ++n_names;
	}
	b.n_scopes = u->n_scopes;
	ob_put(o, u->ranges, (size_t)u->n_ranges * sizeof(*u->ranges));
	b.n_ranges = u->n_ranges;
	for (k = 0; k < u->n_tops; k++) {
		struct top *tp = ob_room(o, sizeof(*tp));

		if (tp) {
			tp->lo = u->tops[k].lo;
			tp->hi = u->tops[k].hi;
			tp->scope = u->tops[k].scope;
		}
	}
	b.n_tops = u->n_tops;
	ob_put(o, names.p, names.len);
	b.n_names = n_names;
	/* Lines only when this unit read the table (see above). */
	if (u->lines_state == LINES_OURS)
		for (k = 0; k < d->n_tabs; k++)
			if (&d->tabs[k]->t == u->lines && d->tabs[k]->reader == u->hdr)
				t = d->tabs[k];
	if (t && t->t.n_files) {
		b.flags |= IC_LINES;
		b.line_off = t->t.offset;
		b.n_rows = t->t.n_rows;
		b.n_files = t->t.n_files;
		ob_put(o, t->t.rows, (size_t)t->t.n_rows * sizeof(*t->t.rows));
		for (k = 0; k < t->t.n_files; k++) {
			uint32_t f = t->t.files[k] == ms_linetab_unknown ? NONE :
				     ob_str(&strs, t->t.files[k]);

			ob_put(o, &f, sizeof(f));
		}
	}
	if (strs.len > UINT32_MAX)
		strs.failed = true;
	b.str_len = (uint32_t)strs.len;
	ob_put(o, strs.p, strs.len);
	ob_room(o, (size_t)(round8(o->len) - o->len));
	if (o->failed || strs.failed || names.failed)
		goto fail;
	memcpy(o->p + start, &b, sizeof(b));
	free(strs.p);
	free(names.p);
	return 0;
fail:
	o->len = start;
	o->failed = false;
	free(strs.p);
	free(names.p);
	return -1;
}

/* One entry of the file to write: an old one (its bytes in the mapping) or one made now. */
enum { FROM_MAP, FROM_MADE, FROM_KEPT };

struct ic_out {
	uint64_t hdr;
	uint64_t pos, len;	/* in the mapping, or in the buffer of entries made */
	uint32_t crc;
	uint8_t from;		/* FROM_* */
	bool used, keep;
};

static int cmp_out(const void *a, const void *b)
{
	const struct ic_out *x = a, *y = b;

	return x->hdr < y->hdr ? -1 : x->hdr > y->hdr;
}

/*
 * Entries for the units indexed or learnt so far (unit i's state u), made
 * into o: one each, in *out (n of them). Units taken from the cache as
 * they were are given as their entries (FROM_MAP); taken[] marks each
 * entry of the file that a unit has here.
 */
static int ic_collect(struct ms_dwarfidx *d, struct obuf *o, uint8_t from, struct ic_out *out,
		      uint8_t *taken)
{
	uint32_t n = 0;

	for (uint32_t i = 0; d->state && i < d->n_units; i++) {
		struct unit *u = d->state[i];
		size_t at = o->len;
		uint32_t old;

		if (!u || u->state != UNIT_INDEXED)
			continue;
		/* An entry of this unit not used (its ranges were not aranges') is replaced. */
		if (taken && d->ic_map && (old = ic_find(d, u->hdr)) != NONE)
			taken[old] = 1;
		if (u->ic_entry != NONE && !u->dirty) {
			const struct ic_entry *e = &d->ic_dir[u->ic_entry];

			if (out)
				out[n++] = (struct ic_out){ e->hdr, e->pos, e->len, e->crc,
							    FROM_MAP, true, false };
			continue;
		}
		if ((!u->fresh && !u->dirty) || ic_make(d, i, u, o) < 0)
			continue;
		if (!out && !ms_reserve((void **)&d->ic_kept_out, &d->alloc_kept,
					(uint64_t)d->n_kept + 1, sizeof(*d->ic_kept_out))) {
			o->len = at;
			continue;
		}
		(out ? &out[n++] : &d->ic_kept_out[d->n_kept++])[0] = (struct ic_out){
			u->hdr, at, o->len - at, ms_crc32c(0, o->p + at, o->len - at), from, true,
			false,
		};
	}
	return (int)n;
}

/* Before reread_units() drops the units' states: their entries, made now. */
static void ic_keep(struct ms_dwarfidx *d)
{
	if (!d->ic_path || !d->ic_pending ||
	    (!d->ic_kept && !(d->ic_kept = calloc(1, sizeof(*d->ic_kept)))))
		return;
	ic_collect(d, d->ic_kept, FROM_KEPT, NULL, NULL);
}

/* Write the n_keep entries of out kept (sorted) to d's cache path. */
static void ic_write(struct ms_dwarfidx *d, const struct ic_out *out, uint32_t n, uint32_t n_keep,
		     const struct obuf *made)
{
	struct ic_header h;
	struct ic_entry *dir = calloc((size_t)n_keep + 1, sizeof(*dir));
	struct ms_publish pub;
	uint64_t pos = sizeof(h) + (uint64_t)n_keep * sizeof(*dir);
	uint32_t i, k = 0;
	int fd;

	if (!dir)
		return;
	for (i = 0; i < n; i++)
		if (out[i].keep) {
			dir[k++] = (struct ic_entry){ out[i].hdr, pos, out[i].len, out[i].crc, 0 };
			pos += out[i].len;
		}
	ic_key(d, d->ic_bid, d->ic_bid_len, &h);
	h.n_entries = n_keep;
	h.dir_crc = ms_crc32c(0, dir, (size_t)n_keep * sizeof(*dir));
	if (ms_cache_mkdir(d->ic_path) < 0 || (fd = ms_publish_open(&pub, d->ic_path)) < 0) {
		free(dir);
		return;
	}
	if (write_all(fd, &h, sizeof(h)) < 0 ||
	    write_all(fd, dir, (size_t)n_keep * sizeof(*dir)) < 0)
		goto fail;
	for (i = 0; i < n; i++)
		if (out[i].keep &&
		    write_all(fd, (out[i].from == FROM_MAP ? d->ic_map : out[i].from == FROM_MADE ?
				   made->p : d->ic_kept->p) + out[i].pos, (size_t)out[i].len) < 0)
			goto fail;
	free(dir);
	pub.cache = true;	/* checked before use: see publish.h */
	ms_publish_commit(&pub);
	return;
fail:
	free(dir);
	ms_publish_abort(&pub);
}

void ms_dwarfidx_save(struct ms_dwarfidx *d)
{
	struct obuf made = { 0 };
	struct ic_out *out = NULL;
	uint8_t *taken = NULL;
	uint32_t n = 0, n_now, cap, i, n_keep = 0;
	uint64_t size = sizeof(struct ic_header);
	bool made_kept = false;

	if (!d->ic_path || (!d->ic_pending && !d->ic_bad))
		goto done;
	cap = d->n_units + d->ic_n + d->n_kept;
	if (!(out = calloc((size_t)cap + 1, sizeof(*out))) ||
	    !(taken = calloc((size_t)d->ic_n + 1, 1)))
		goto done;
	/* The units used in this run: new or learnt entries made, the others as they were. */
	n = n_now = (uint32_t)ic_collect(d, &made, FROM_MADE, out, taken);
	/* Those made before the units were read again, unless made again since. */
	qsort(out, n_now, sizeof(*out), cmp_out);
	for (i = 0; i < d->n_kept; i++) {
		const struct ic_out *k = &d->ic_kept_out[i];
		uint32_t old;

		if (bsearch(k, out, n_now, sizeof(*out), cmp_out))
			continue;
		if (d->ic_map && (old = ic_find(d, k->hdr)) != NONE)
			taken[old] = 1;
		out[n++] = *k;
	}
	/* The file's other entries, not known damaged (unchecked ones are checked when used). */
	for (i = 0; i < d->ic_n; i++)
		if (!taken[i] && d->ic_state[i] != IC_BAD) {
			const struct ic_entry *e = &d->ic_dir[i];

			out[n++] = (struct ic_out){ e->hdr, e->pos, e->len, e->crc, FROM_MAP, false,
						    false };
		}
	/* Units used first, then the others, as long as they fit. */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			uint64_t add = sizeof(struct ic_entry) + out[i].len;

			if (out[i].used != !pass || size + add > ic_max)
				continue;
			out[i].keep = true;
			made_kept |= out[i].from != FROM_MAP;
			size += add;
			n_keep++;
		}
	/*
	 * Written when it gains an entry or had a damaged one; else (nothing
	 * new, or nothing new that fits) it stays as it is.
	 */
	if (made_kept || d->ic_bad) {
		qsort(out, n, sizeof(*out), cmp_out);
		ic_write(d, out, n, n_keep, &made);
	}
done:
	/* Once a run. */
	free(d->ic_path);
	d->ic_path = NULL;
	free(taken);
	free(out);
	free(made.p);
}
