#include "dwarf/dwarfidx.h"
#include "dwarf/dwarfidx-impl.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/records.h"
#include "util/demangle.h"
#include "dwarf/dieread.h"
#include "util/cachedir.h"
#include "util/cachefile.h"
#include "dwarf/lines.h"
#include "util/radix.h"
#include "util/strpool.h"
#include "util/grow.h"
#include "util/publish.h"

/* DIE nesting deeper than this is corrupt (real code nests a few dozen). */
#define DEPTH_MAX 256


static void note_problem(struct ms_dwarfidx *d, const char *what, Dwarf_Off off)
{
	if (!d->problem[0])
		snprintf(d->problem, sizeof(d->problem), "%s at .debug_info offset 0x%llx: %s",
			 what, (unsigned long long)off, dwarf_errmsg(-1));
}

/*
 * Whether the file's DWARF bytes may be read: the gate (ms_dwarfidx_gate)
 * is asked before the first read. Every path that reads them comes
 * through here: the lists of units (read_aranges(), ms_dwi_read_units()),
 * open_ours(), unit_die(), scope_name() and ms_dwi_unit_lines(). Refused,
 * the index reads nothing and ms_dwarfidx_lookup() answers MS_SYM_BAD_DWARF.
 */
static bool may_read(struct ms_dwarfidx *d)
{
	if (d->gate_state == GATE_UNASKED) {
		d->gate_state = d->gate.check(d->gate.arg) ? GATE_OPEN : GATE_SHUT;
		if (d->gate_state == GATE_SHUT) {
			snprintf(d->problem, sizeof(d->problem),
				 "the file failed its check before its DWARF was read");
			d->incomplete = true;
		}
	}
	return d->gate_state == GATE_OPEN;
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

int ms_dwi_cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* A unit has a handful of ranges, usually in order already. */
void ms_dwi_sort_ranges(struct range *r, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (ms_dwi_cmp_range(&r[i - 1], &r[i]) > 0) {
			qsort(r, n, sizeof(*r), ms_dwi_cmp_range);
			return;
		}
}

int ms_dwi_cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;
}


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
		ms_dwi_ic_attach(d, i, u);
	return u;
}

/* Read every unit's ranges. Errors stop the list and are remembered. */
int ms_dwi_read_units(struct ms_dwarfidx *d)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	uint32_t alloc_units = 0, alloc_uranges = 0;
	int r;

	if (!may_read(d))
		return 0;
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
 * every unit's DIE (ms_dwi_read_units()), so an answer never depends on aranges
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
		ms_dwi_sort_ranges(d->ar + u->ar, u->n_ar);
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

	if (!aranges || !info || !gelf_getehdr(elf, &eh) || !may_read(d))
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
	/* Units in the order of the file, as ms_dwi_read_units() numbers them. */
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
 * Layout (host byte order): the common header of every cache file
 * (util/cachefile.h, magic "MSUNITS"), struct units_header, then n_units
 * struct unit_slot, n_ar struct range, n_uranges struct unit_range, as in
 * memory. Small and read whole: checked whole against its CRC too.
 */
/* 2: the common header of util/cachefile.h, with its producer and CRCs. */
#define UNITS_VERSION 2
#define UNITS_MAGIC "MSUNITS"

struct units_header {
	uint32_t slot_size, range_size, urange_size;
	uint32_t bid_len;
	uint8_t bid[MS_BUILD_ID_MAX];
	uint64_t info_size, abbrev_size, aranges_size;
	uint64_t n_units, n_ar, n_uranges;
};

/* Where the slots start: after both headers. */
#define UNITS_AT (sizeof(struct ms_cachefile) + sizeof(struct units_header))
_Static_assert(UNITS_AT % 8 == 0, "the slots and ranges are 8-byte aligned");

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
	const struct units_header *h;
	const struct unit_slot *units;
	const struct range *ar;
	const struct unit_range *ur;
	uint64_t n_units, n_ar, n_ur, sum = 0, i, rest;

	if (!(h = ms_cachefile_check(map, len, UNITS_MAGIC, UNITS_VERSION, sizeof(*h), NULL)) ||
	    memcmp(h, key, offsetof(struct units_header, n_units)))
		return false;
	n_units = h->n_units;
	n_ar = h->n_ar;
	n_ur = h->n_uranges;
	rest = len - UNITS_AT;
	if (!n_units || n_units > UINT32_MAX || n_ar > UINT32_MAX || n_ur > UINT32_MAX ||
	    n_units > rest / sizeof(*units) ||
	    n_ar > (rest - n_units * sizeof(*units)) / sizeof(*ar) ||
	    n_ur * sizeof(*ur) != rest - n_units * sizeof(*units) - n_ar * sizeof(*ar))
		return false;
	units = (const void *)(map + UNITS_AT);
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
	int fd = ms_cache_open(path, (uint64_t)1 << 32, &st);

	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_size < UNITS_AT) {
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
	h = (const void *)((uint8_t *)map + sizeof(struct ms_cachefile));
	d->lists_map = map;
	d->lists_map_len = (size_t)st.st_size;
	d->n_units = (uint32_t)h->n_units;
	d->n_ar = (uint32_t)h->n_ar;
	d->n_uranges = (uint32_t)h->n_uranges;
	d->units = (struct unit_slot *)((uint8_t *)map + UNITS_AT);
	d->ar = (struct range *)(d->units + d->n_units);
	d->uranges = (struct unit_range *)(d->ar + d->n_ar);
	d->from_aranges = true;
	d->units_cached = true;
	d->stats.units = d->n_units;
	return 0;
}

/* Write d's list from aranges to path under key; one that cannot be written costs the next run time. */
static void store_units(const struct ms_dwarfidx *d, const char *path, struct units_header *key)
{
	struct ms_cachefile_out o;
	struct ms_publish pub;
	int fd;

	if (!d->n_units)
		return;
	key->n_units = d->n_units;
	key->n_ar = d->n_ar;
	key->n_uranges = d->n_uranges;
	if ((fd = ms_cache_publish(&pub, path)) < 0)
		return;
	if (ms_cachefile_begin(&o, fd, UNITS_MAGIC, UNITS_VERSION, sizeof(*key)) < 0 ||
	    ms_cachefile_put(&o, key, sizeof(*key)) < 0 ||
	    ms_cachefile_put(&o, d->units, d->n_units * sizeof(*d->units)) < 0 ||
	    ms_cachefile_put(&o, d->ar, d->n_ar * sizeof(*d->ar)) < 0 ||
	    ms_cachefile_put(&o, d->uranges, d->n_uranges * sizeof(*d->uranges)) < 0 ||
	    ms_cachefile_end(&o) < 0) {
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


/* Forget the units (their strings handed out stay valid) and read them all from their DIEs. */
int ms_dwi_reread_units(struct ms_dwarfidx *d)
{
	/* What was indexed is still the truth: kept for the cache. */
	ms_dwi_ic_keep(d);
	units_release(d);
	d->from_aranges = false;
	/* units_indexed and the rest count the work done: they go on counting. */
	return ms_dwi_read_units(d);
}

/*
 * A unit from aranges, before its first use: its DIE, which must be a
 * compile unit's whose ranges are the unit's aranges. 0 when it is, -1
 * when not (or on any error).
 */
/* The unit's ranges in d->tmp, sorted, as d->ar holds aranges': equal or not. */
static int same_ranges(struct ms_dwarfidx *d, const struct unit *u, uint32_t n)
{
	ms_dwi_sort_ranges(d->tmp, n);
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
	if (u->ours_tried || !d->dsec.info || !may_read(d))
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
		if (!may_read(d) || !dwarf_offdie(d->dw, u->off, &u->die))
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
	return ms_dwarfidx_new_cached(elf, NULL, NULL, 0, NULL, why);
}

struct ms_dwarfidx *ms_dwarfidx_new_cached(Elf *elf, const char *units_path, const uint8_t *bid,
					   uint32_t bid_len, const struct ms_dwarfidx_gate *gate,
					   const char **why)
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
	if (gate && gate->check) {
		d->gate = *gate;
		d->gate_state = GATE_UNASKED;
	}
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
		r = ms_dwi_read_units(d);
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

bool ms_dwarfidx_refused(const struct ms_dwarfidx *d)
{
	return d->gate_state == GATE_SHUT;
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
 * A unit's DIEs as walk_unit() reads them, by dieread.h or by libdw: a
 * stack of DIE slots that child() fills and sibling() moves along. Each
 * returns STEP_OK, STEP_NONE (no child, no more siblings) or STEP_BAD.
 */
enum step { STEP_OK, STEP_NONE, STEP_BAD };
#define SLOT_UNIT UINT32_MAX	/* child()'s from: the unit's own DIE */

struct die_reader {
	/* Slot to := the first child of slot from. */
	enum step (*child)(struct die_reader *r, uint32_t from, uint32_t to);
	/* Slot := its next sibling. */
	enum step (*sibling)(struct die_reader *r, uint32_t slot);
	int (*tag)(struct die_reader *r, uint32_t slot);
	bool (*has_code)(struct die_reader *r, uint32_t slot);
	/* add_scope() of slot's DIE: 0, or -1 (unreadable, out of memory). */
	int (*add_scope)(struct die_reader *r, uint32_t slot, uint32_t parent, uint32_t *scope);
};

/*
 * Walk a unit's DIEs once, entering what visit() says: 0 when done, -1
 * when the reader could not go on (the unit is then walked by the other
 * reader, or bad).
 */
static int walk_unit(struct die_reader *rd)
{
	uint32_t fn[DEPTH_MAX];
	uint32_t depth = 0;
	enum step r;

	r = rd->child(rd, SLOT_UNIT, 0);
	if (r != STEP_OK)
		return r == STEP_NONE ? 0 : -1;
	fn[0] = NONE;
	for (;;) {
		uint32_t cur = fn[depth], scope;
		bool descend = false;
		int tag = rd->tag(rd, depth);
		/* (libdw's attribute lookups: only where visit() asks.) */
		bool code = (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
			    rd->has_code(rd, depth);

		switch (visit(tag, code, &cur)) {
		case VISIT_SCOPE:
			if (rd->add_scope(rd, depth, cur, &scope) < 0)
				return -1;
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
				return -1;
			r = rd->child(rd, depth, depth + 1);
			if (r == STEP_BAD)
				return -1;
			if (r == STEP_OK) {
				fn[++depth] = cur;
				continue;
			}
		}
		/* The next sibling, climbing out of finished subtrees. */
		for (;;) {
			r = rd->sibling(rd, depth);
			if (r == STEP_BAD)
				return -1;
			if (r == STEP_OK)
				break;
			if (depth == 0)
				return 0;
			depth--;
		}
	}
}

/* dieread.h's reader: MS_DIE_REFUSED is STEP_BAD, left to libdw. */
struct ours_reader {
	struct die_reader rd;
	struct unit *u;
	struct ms_die *stack;
};

static enum step die_step(int r)
{
	return r == MS_DIE_OK ? STEP_OK : r == MS_DIE_NONE ? STEP_NONE : STEP_BAD;
}

static enum step ours_child(struct die_reader *rd, uint32_t from, uint32_t to)
{
	struct ours_reader *o = (struct ours_reader *)rd;
	const struct ms_die *parent = from == SLOT_UNIT ? &o->u->ours->cu : &o->stack[from];

	return die_step(ms_die_child(&o->u->ours->du, parent, &o->stack[to]));
}

static enum step ours_sibling(struct die_reader *rd, uint32_t slot)
{
	struct ours_reader *o = (struct ours_reader *)rd;

	return die_step(ms_die_sibling(&o->u->ours->du, &o->stack[slot], &o->stack[slot]));
}

static int ours_tag(struct die_reader *rd, uint32_t slot)
{
	return (int)((struct ours_reader *)rd)->stack[slot].tag;
}

static bool ours_has_code(struct die_reader *rd, uint32_t slot)
{
	const struct ms_die *die = &((struct ours_reader *)rd)->stack[slot];

	return ms_die_has(die, MS_DA_LOW_PC) || ms_die_has(die, MS_DA_RANGES);
}

static int ours_add_scope(struct die_reader *rd, uint32_t slot, uint32_t parent,
			  uint32_t *scope)
{
	struct ours_reader *o = (struct ours_reader *)rd;

	return add_scope_ours(o->u, &o->stack[slot], parent, scope) == 0 ? 0 : -1;
}

/* libdw's reader. */
struct libdw_reader {
	struct die_reader rd;
	struct unit *u;
	Dwarf_Die stack[DEPTH_MAX];
};

static enum step libdw_child(struct die_reader *rd, uint32_t from, uint32_t to)
{
	struct libdw_reader *l = (struct libdw_reader *)rd;
	int r = dwarf_child(from == SLOT_UNIT ? &l->u->die : &l->stack[from], &l->stack[to]);

	return r == 0 ? STEP_OK : r > 0 ? STEP_NONE : STEP_BAD;
}

static enum step libdw_sibling(struct die_reader *rd, uint32_t slot)
{
	struct libdw_reader *l = (struct libdw_reader *)rd;
	Dwarf_Die next;
	int r = dwarf_siblingof(&l->stack[slot], &next);

	if (r < 0)
		return STEP_BAD;
	if (r > 0)
		return STEP_NONE;
	/* A DW_AT_sibling that points back would walk in circles. */
	if (dwarf_dieoffset(&next) <= dwarf_dieoffset(&l->stack[slot]))
		return STEP_BAD;
	l->stack[slot] = next;
	return STEP_OK;
}

static int libdw_tag(struct die_reader *rd, uint32_t slot)
{
	return dwarf_tag(&((struct libdw_reader *)rd)->stack[slot]);
}

static bool libdw_has_code(struct die_reader *rd, uint32_t slot)
{
	return has_code(&((struct libdw_reader *)rd)->stack[slot]);
}

static int libdw_add_scope(struct die_reader *rd, uint32_t slot, uint32_t parent,
			   uint32_t *scope)
{
	struct libdw_reader *l = (struct libdw_reader *)rd;

	return add_scope(l->u, &l->stack[slot], parent, scope);
}

/*
 * Index a unit's DIEs: by dieread.h, or by libdw from the start where
 * that reader refuses something (libdw skips a subtree by DW_AT_sibling
 * when the producer gave it).
 */
static int index_unit(struct ms_dwarfidx *d, struct unit *u)
{
	struct libdw_reader l;

	if (open_ours(d, u) == MS_DIE_OK &&
	    (d->die_stack || (d->die_stack = malloc(DEPTH_MAX * sizeof(*d->die_stack))))) {
		struct ours_reader o = {
			{ ours_child, ours_sibling, ours_tag, ours_has_code, ours_add_scope },
			u, d->die_stack
		};

		if (walk_unit(&o.rd) == 0)
			goto done;
	}
	/* Refused somewhere: libdw walks the unit again from the start. */
	scopes_release(u);
	d->stats.units_libdw++;
	if (!unit_die(d, u))
		goto bad;
	l.rd = (struct die_reader){ libdw_child, libdw_sibling, libdw_tag, libdw_has_code,
				    libdw_add_scope };
	l.u = u;
	if (walk_unit(&l.rd) < 0)
		goto bad;
done:
	if (u->n_tops)
		qsort(u->tops, u->n_tops, sizeof(*u->tops), ms_dwi_cmp_top);
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

/*
 * The position of the range that holds addr among n ranges sorted by lo,
 * each stride bytes with its u64 lo and hi first (struct unit_range, struct
 * top): the last that starts at or below addr, or one of the OVERLAP_SCAN
 * before it that still reaches over it. NONE when none holds it.
 */
static uint32_t find_enclosing(const void *ranges, size_t stride, uint32_t n, uint64_t addr)
{
	const char *base = ranges;
	uint32_t lo = 0, hi = n, k, stop;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (*(const uint64_t *)(base + mid * stride) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	stop = lo > OVERLAP_SCAN ? lo - OVERLAP_SCAN : 0;
	for (k = lo; k > stop; k--)
		if (addr < *(const uint64_t *)(base + (k - 1) * stride + sizeof(uint64_t)))
			return k - 1;
	return NONE;
}
_Static_assert(offsetof(struct unit_range, lo) == 0 && offsetof(struct unit_range, hi) == 8 &&
	       offsetof(struct top, lo) == 0 && offsetof(struct top, hi) == 8,
	       "find_enclosing() reads lo and hi first");

static uint32_t find_unit(const struct ms_dwarfidx *d, uint64_t addr)
{
	uint32_t k = find_enclosing(d->uranges, sizeof(*d->uranges), d->n_uranges, addr);

	return k == NONE ? NONE : d->uranges[k].unit;
}

static uint32_t find_top(const struct unit *u, uint64_t addr)
{
	uint32_t k = find_enclosing(u->tops, sizeof(*u->tops), u->n_tops, addr);

	return k == NONE ? NONE : u->tops[k].scope;
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
	if (!may_read(d) || !dwarf_offdie(d->dw, s->off, &die))
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
const char *ms_dwi_unit_comp_dir(struct ms_dwarfidx *d, struct unit *u)
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
	ms_dwi_unit_comp_dir(d, u);
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
struct tab *ms_dwi_find_tab(struct ms_dwarfidx *d, uint64_t off, bool *refused)
{
	for (uint32_t i = 0; i < d->n_tabs; i++)
		if (d->tabs[i]->t.offset == off) {
			*refused = !d->tabs[i]->t.rows && !d->tabs[i]->t.files;
			return d->tabs[i];
		}
	return NULL;
}

struct tab *ms_dwi_new_tab(struct ms_dwarfidx *d, struct unit *u)
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


/*
 * The unit's line table when lines.h can read it, each table once (units
 * may share one, as libdw shares it by offset); NULL when libdw answers.
 */
const struct ms_linetab *ms_dwi_unit_lines(struct ms_dwarfidx *d, struct unit *u)
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
		return ms_dwi_cached_lines(d, u);
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
	if ((t = ms_dwi_find_tab(d, off, &refused))) {
		if (refused)
			return NULL;	/* refused before */
		u->lines = &t->t;
		u->lines_state = LINES_OURS;
		return u->lines;
	}
	comp_dir = ms_dwi_unit_comp_dir(d, u);
	if (!may_read(d) || !(t = ms_dwi_new_tab(d, u)))
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
	const struct ms_linetab *t = ms_dwi_unit_lines(d, u);
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

static int lookup(struct ms_dwarfidx *d, uint64_t addr, struct ms_srcline *out, uint32_t max,
		  uint32_t *n, uint64_t *start)
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
		if (ms_dwi_reread_units(d) < 0) {
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
	if ((lines = ms_dwi_unit_lines(d, u))) {
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

int ms_dwarfidx_lookup(struct ms_dwarfidx *d, uint64_t addr, struct ms_srcline *out,
		       uint32_t max, uint32_t *n, uint64_t *start)
{
	int r = d->gate_state == GATE_SHUT ? MS_SYM_BAD_DWARF : lookup(d, addr, out, max, n, start);

	/* Refused on the way: whatever was found is not an answer. */
	if (d->gate_state == GATE_SHUT) {
		*n = 0;
		*start = 0;
		return MS_SYM_BAD_DWARF;
	}
	return r;
}
