/*
 * A reader of DWARF 2-5 debugging information entries (DIEs) for what
 * dwarf/dwarfidx.c asks of a compilation unit: the tree of subprograms
 * and inlined calls with their address ranges and call sites, and the
 * names, declaration lines and entry addresses of scopes.
 *
 * libdw answers the same questions, but reaching any DIE of a unit makes
 * it intern every unit before it (a malloc'd unit, a hash of abbreviations
 * and a tree node each: 1,500 units of libc6-dbg for a profile that needs
 * 20 of them), and each DIE call takes a lock. This reader keeps nothing
 * but the unit's abbreviations, and answers exactly as libdw 0.188 does
 * for what it accepts: dwarf_child(), dwarf_siblingof() (following
 * DW_AT_sibling), dwarf_tag(), dwarf_hasattr(), dwarf_ranges() (single
 * range, .debug_ranges, .debug_rnglists), dwarf_formudata(),
 * dwarf_formaddr(), dwarf_formstring() and dwarf_attr_integrate() within
 * the unit.
 *
 * Anything else it refuses (MS_DIE_REFUSED), and the caller asks libdw,
 * so that an answer never depends on which reader gave it: a byte order
 * that is not the host's, split or type units, split DWARF (GNU dwo
 * attributes), forms that need .debug_addr, .debug_str_offsets or an alt
 * file (DW_FORM_addrx, strx, rnglistx, GNU_ref_alt, ...), DW_FORM_indirect,
 * references outside the unit, abbreviation codes that are not 1..n in
 * order, padded (non-minimal) null entries, and anything that reads out of
 * its section. Refusing is always safe; accepting is the claim.
 */
#ifndef MS_DWARF_DIEREAD_H
#define MS_DWARF_DIEREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	MS_DIE_OK = 0,
	MS_DIE_NONE = 1,	/* no child, no sibling, no such attribute, end of a list */
	MS_DIE_REFUSED = -1,	/* ask libdw */
};

/* The sections a unit refers to; NULL and 0 when absent. Host byte order only. */
struct ms_die_sections {
	const uint8_t *info, *abbrev, *str, *line_str, *ranges, *rnglists;
	size_t info_size, abbrev_size, str_size, line_str_size, ranges_size, rnglists_size;
};

/* The attributes the reader keeps of a DIE (the first of each name, as libdw). */
enum ms_die_attr {
	MS_DA_SIBLING,
	MS_DA_LOW_PC,
	MS_DA_HIGH_PC,
	MS_DA_RANGES,
	MS_DA_ENTRY_PC,
	MS_DA_CALL_FILE,
	MS_DA_CALL_LINE,
	MS_DA_NAME,
	MS_DA_LINKAGE_NAME,
	MS_DA_MIPS_LINKAGE_NAME,
	MS_DA_ABSTRACT_ORIGIN,
	MS_DA_SPECIFICATION,
	MS_DA_DECL_LINE,
	MS_DA_STMT_LIST,
	MS_DA_COMP_DIR,
	MS_DA_DWO,		/* DW_AT_GNU_dwo_id or _name, DW_AT_dwo_name: refused */
	MS_DA_N,
};

struct ms_die_abbrev {
	uint32_t tag;
	bool children;
	bool sibling;		/* has DW_AT_sibling */
	uint32_t first, n;	/* its attribute specs in the unit's specs */
	uint32_t size;		/* of its values when all have a fixed size, else UINT32_MAX */
};

/* Sizes of a spec's value besides the fixed ones. */
#define MS_DIE_SIZE_VARIABLE 0xff
#define MS_DIE_SIZE_REFUSED 0xfe

struct ms_die_spec {
	uint32_t name, form;
	int64_t implicit;	/* DW_FORM_implicit_const's value */
	int8_t attr;		/* enum ms_die_attr, or -1 for one not kept */
	uint8_t size;		/* of the value, or MS_DIE_SIZE_* */
};

struct ms_die_unit {
	const struct ms_die_sections *sec;
	uint64_t off, end;	/* of its header, and past the unit (section offsets) */
	uint64_t first;		/* its first DIE */
	uint16_t version;
	uint8_t addr_size, offset_size;
	struct ms_die_abbrev *abbrevs;	/* code c at [c - 1] */
	uint32_t n_abbrevs, alloc_abbrevs;
	struct ms_die_spec *specs;
	uint32_t n_specs, alloc_specs;
	uint64_t base;		/* the unit's base address, as libdw's ranges take it */
};

struct ms_die {
	uint64_t off;		/* section offset of the DIE */
	uint64_t end;		/* past its attributes: its first child or next entry */
	uint32_t tag;
	bool children;
	uint32_t have;		/* bit (1 << MS_DA_*) for each attribute present */
	struct ms_die_value {
		uint32_t form;
		uint64_t pos;	/* section offset of the value */
		int64_t implicit;
	} a[MS_DA_N];
};

/*
 * Open the compile unit whose header is at section offset off: its header,
 * abbreviations and first DIE, which must be a DW_TAG_compile_unit of a
 * DW_UT_compile unit (in *cu). MS_DIE_OK, or MS_DIE_REFUSED (u is then
 * released). sec must outlive u.
 */
int ms_die_unit_open(struct ms_die_unit *u, const struct ms_die_sections *sec, uint64_t off,
		     struct ms_die *cu);
void ms_die_unit_release(struct ms_die_unit *u);

/* The DIE at section offset off of u: MS_DIE_OK or MS_DIE_REFUSED (a null entry too). */
int ms_die_read(const struct ms_die_unit *u, uint64_t off, struct ms_die *out);
/* As dwarf_child(): MS_DIE_OK with *out, MS_DIE_NONE, MS_DIE_REFUSED. */
int ms_die_child(const struct ms_die_unit *u, const struct ms_die *d, struct ms_die *out);
/* As dwarf_siblingof(): MS_DIE_OK with *out, MS_DIE_NONE, MS_DIE_REFUSED. */
int ms_die_sibling(const struct ms_die_unit *u, const struct ms_die *d, struct ms_die *out);

static inline bool ms_die_has(const struct ms_die *d, enum ms_die_attr a)
{
	return d->have & (1u << a);
}

/* As dwarf_formudata() of attribute a: MS_DIE_OK, MS_DIE_NONE (absent), MS_DIE_REFUSED. */
int ms_die_udata(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		 uint64_t *out);
/* As dwarf_formaddr(). */
int ms_die_addr(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		uint64_t *out);
/* As dwarf_formstring(): *out points into the sections. */
int ms_die_string(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		  const char **out);
/*
 * As dwarf_attr_integrate(): the DIE of d's chain of DW_AT_abstract_origin
 * and DW_AT_specification (at most 16 hops, within the unit) that has a,
 * into *holder. MS_DIE_OK, MS_DIE_NONE, MS_DIE_REFUSED.
 */
int ms_die_integrate(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		     struct ms_die *holder);

/* Iterating dwarf_ranges(): zeroed before the first call. */
struct ms_die_ranges {
	int state;
	uint64_t pos, base;
};
/*
 * The next range of d as dwarf_ranges() gives it (empty ones included):
 * MS_DIE_OK with [*lo, *hi), MS_DIE_NONE at the end, MS_DIE_REFUSED.
 */
int ms_die_ranges_next(const struct ms_die_unit *u, const struct ms_die *d,
		       struct ms_die_ranges *it, uint64_t *lo, uint64_t *hi);

/*
 * A unit's header at off: its end and version. MS_DIE_OK, or
 * MS_DIE_REFUSED when it is cut short or of a version other than 2-5.
 * *die gets the offset of its first DIE (for any unit type).
 */
int ms_die_unit_header(const struct ms_die_sections *sec, uint64_t off, uint64_t *next,
		       uint64_t *die, uint16_t *version);

#endif
