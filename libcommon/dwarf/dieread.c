#include "dwarf/dieread.h"
#include "dwarf/leb128.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* A bounded reader over [p, end): any read past end sets bad. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, unsigned int size)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < size) {
		r->bad = true;
		return 0;
	}
	/* Host byte order (little-endian hosts: the low bytes first). */
	switch (size) {
	case 1:
		v = r->p[0];
		break;
	case 2: {
		uint16_t x;

		memcpy(&x, r->p, 2);
		v = x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, r->p, 4);
		v = x;
		break;
	}
	default:
		memcpy(&v, r->p, 8);
		break;
	}
	r->p += size;
	return v;
}

/* A ULEB128 (leb128.h); a bad one makes r bad. */
static inline uint64_t rd_uleb(struct rd *r)
{
	uint64_t v;

	if (r->bad || !ms_uleb(&r->p, r->end, &v)) {
		r->bad = true;
		return 0;
	}
	return v;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (!r->bad) {
		uint8_t b;

		if (r->p >= r->end || shift > 63) {
			r->bad = true;
			break;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	return 0;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n)
		r->bad = true;
	else
		r->p += n;
}

static bool little_endian_host(void)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

/* ---- unit headers ---- */

/* The header at off: its fields, and the reader left at its first DIE. */
struct header {
	uint64_t next, abbrev_off;
	uint16_t version;
	uint8_t unit_type, addr_size, offset_size;
	const uint8_t *die;
};

static int read_header(const struct ms_die_sections *sec, uint64_t off, struct header *h)
{
	struct rd r;
	uint64_t len;

	if (!little_endian_host() || !sec->info || off >= sec->info_size)
		return MS_DIE_REFUSED;
	r = (struct rd){ sec->info + off, sec->info + sec->info_size, false };
	len = rd_fixed(&r, 4);
	h->offset_size = 4;
	if (len == 0xffffffff) {
		len = rd_fixed(&r, 8);
		h->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return MS_DIE_REFUSED;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return MS_DIE_REFUSED;
	h->next = (uint64_t)(r.p - sec->info) + len;
	r.end = r.p + len;
	h->version = (uint16_t)rd_fixed(&r, 2);
	if (r.bad || h->version < 2 || h->version > 5)
		return MS_DIE_REFUSED;
	if (h->version < 5) {
		h->unit_type = DW_UT_compile;
		h->abbrev_off = rd_fixed(&r, h->offset_size);
		h->addr_size = (uint8_t)rd_fixed(&r, 1);
	} else {
		h->unit_type = (uint8_t)rd_fixed(&r, 1);
		h->addr_size = (uint8_t)rd_fixed(&r, 1);
		h->abbrev_off = rd_fixed(&r, h->offset_size);
		switch (h->unit_type) {
		case DW_UT_compile:
		case DW_UT_partial:
			break;
		case DW_UT_skeleton:
		case DW_UT_split_compile:
			rd_skip(&r, 8);
			break;
		case DW_UT_type:
		case DW_UT_split_type:
			rd_skip(&r, 8 + h->offset_size);
			break;
		default:
			return MS_DIE_REFUSED;
		}
	}
	if (r.bad)
		return MS_DIE_REFUSED;
	h->die = r.p;
	return MS_DIE_OK;
}

int ms_die_unit_header(const struct ms_die_sections *sec, uint64_t off, uint64_t *next,
		       uint64_t *die, uint16_t *version)
{
	struct header h;

	if (read_header(sec, off, &h) != MS_DIE_OK)
		return MS_DIE_REFUSED;
	*next = h.next;
	*die = (uint64_t)(h.die - sec->info);
	*version = h.version;
	return MS_DIE_OK;
}

/* ---- abbreviations ---- */

static int attr_index(uint32_t name)
{
	switch (name) {
	case DW_AT_sibling: return MS_DA_SIBLING;
	case DW_AT_low_pc: return MS_DA_LOW_PC;
	case DW_AT_high_pc: return MS_DA_HIGH_PC;
	case DW_AT_ranges: return MS_DA_RANGES;
	case DW_AT_entry_pc: return MS_DA_ENTRY_PC;
	case DW_AT_call_file: return MS_DA_CALL_FILE;
	case DW_AT_call_line: return MS_DA_CALL_LINE;
	case DW_AT_name: return MS_DA_NAME;
	case DW_AT_linkage_name: return MS_DA_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name: return MS_DA_MIPS_LINKAGE_NAME;
	case DW_AT_abstract_origin: return MS_DA_ABSTRACT_ORIGIN;
	case DW_AT_specification: return MS_DA_SPECIFICATION;
	case DW_AT_decl_line: return MS_DA_DECL_LINE;
	case DW_AT_stmt_list: return MS_DA_STMT_LIST;
	case DW_AT_comp_dir: return MS_DA_COMP_DIR;
	case DW_AT_GNU_dwo_id:
	case DW_AT_GNU_dwo_name:
	case DW_AT_dwo_name:
		return MS_DA_DWO;
	default:
		return -1;
	}
}

/* The size of a value of form in u, or MS_DIE_SIZE_VARIABLE / _REFUSED. */
static uint8_t form_size(const struct ms_die_unit *u, uint32_t form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
		return 2;
	case DW_FORM_data4:
	case DW_FORM_ref4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return u->addr_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
		return u->offset_size;
	case DW_FORM_ref_addr:
		return u->version == 2 ? u->addr_size : u->offset_size;
	case DW_FORM_udata:
	case DW_FORM_sdata:
	case DW_FORM_ref_udata:
	case DW_FORM_string:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_block:
	case DW_FORM_exprloc:
		return MS_DIE_SIZE_VARIABLE;
	default:
		/* indirect, strx*, addrx*, rnglistx, loclistx, GNU and sup forms. */
		return MS_DIE_SIZE_REFUSED;
	}
}


/* The unit's whole table, codes 1..n in order (what compilers write); else refused. */
static int read_abbrevs(struct ms_die_unit *u, uint64_t off)
{
	const struct ms_die_sections *sec = u->sec;
	struct rd r;

	if (!sec->abbrev || off >= sec->abbrev_size)
		return MS_DIE_REFUSED;
	r = (struct rd){ sec->abbrev + off, sec->abbrev + sec->abbrev_size, false };
	for (;;) {
		uint64_t code = rd_uleb(&r), tag;
		struct ms_die_abbrev *ab;
		uint8_t children;

		if (r.bad)
			return MS_DIE_REFUSED;
		if (!code)
			return MS_DIE_OK;
		if (code != (uint64_t)u->n_abbrevs + 1)
			return MS_DIE_REFUSED;
		tag = rd_uleb(&r);
		children = (uint8_t)rd_fixed(&r, 1);
		if (r.bad || tag > UINT32_MAX || children > 1 ||
		    (u->n_abbrevs >= u->alloc_abbrevs &&
		     !ms_reserve((void **)&u->abbrevs, &u->alloc_abbrevs,
				 (uint64_t)u->n_abbrevs + 1, sizeof(*u->abbrevs))))
			return MS_DIE_REFUSED;
		ab = &u->abbrevs[u->n_abbrevs++];
		ab->tag = (uint32_t)tag;
		ab->children = children;
		ab->first = u->n_specs;
		for (;;) {
			uint64_t name = rd_uleb(&r), form = rd_uleb(&r);
			int64_t implicit = 0;

			if (r.bad || name > UINT32_MAX || form > UINT32_MAX)
				return MS_DIE_REFUSED;
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const)
				implicit = rd_sleb(&r);
			if (r.bad || (u->n_specs >= u->alloc_specs &&
				      !ms_reserve((void **)&u->specs, &u->alloc_specs,
						  (uint64_t)u->n_specs + 1, sizeof(*u->specs))))
				return MS_DIE_REFUSED;
			u->specs[u->n_specs++] = (struct ms_die_spec){
				(uint32_t)name, (uint32_t)form, implicit,
				(int8_t)attr_index((uint32_t)name), form_size(u, (uint32_t)form),
			};
		}
		ab->n = u->n_specs - ab->first;
		ab->size = 0;
		ab->sibling = false;
		for (uint32_t i = ab->first; i < u->n_specs; i++) {
			ab->sibling |= u->specs[i].attr == MS_DA_SIBLING;
			if (u->specs[i].size >= MS_DIE_SIZE_REFUSED)
				ab->size = UINT32_MAX;
			else if (ab->size != UINT32_MAX)
				ab->size += u->specs[i].size;
		}
	}
}

/* ---- DIEs ---- */

/* Skip one value of form; false when the form is one this reader refuses. */
static bool skip_value(const struct ms_die_unit *u, struct rd *r, uint32_t form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return true;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
		rd_skip(r, 1);
		return true;
	case DW_FORM_data2:
	case DW_FORM_ref2:
		rd_skip(r, 2);
		return true;
	case DW_FORM_data4:
	case DW_FORM_ref4:
		rd_skip(r, 4);
		return true;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
		rd_skip(r, 8);
		return true;
	case DW_FORM_data16:
		rd_skip(r, 16);
		return true;
	case DW_FORM_addr:
		rd_skip(r, u->addr_size);
		return true;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
		rd_skip(r, u->offset_size);
		return true;
	case DW_FORM_ref_addr:
		rd_skip(r, u->version == 2 ? u->addr_size : u->offset_size);
		return true;
	case DW_FORM_udata:
	case DW_FORM_sdata:
	case DW_FORM_ref_udata:
		(void)rd_uleb(r);
		return true;
	case DW_FORM_string: {
		const uint8_t *nul = r->bad ? NULL : memchr(r->p, 0, (size_t)(r->end - r->p));

		if (!nul)
			r->bad = true;
		else
			r->p = nul + 1;
		return true;
	}
	case DW_FORM_block1:
		rd_skip(r, rd_fixed(r, 1));
		return true;
	case DW_FORM_block2:
		rd_skip(r, rd_fixed(r, 2));
		return true;
	case DW_FORM_block4:
		rd_skip(r, rd_fixed(r, 4));
		return true;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		rd_skip(r, rd_uleb(r));
		return true;
	default:
		/* indirect, strx*, addrx*, rnglistx, loclistx, GNU and sup forms. */
		return false;
	}
}

int ms_die_read(const struct ms_die_unit *u, uint64_t off, struct ms_die *out)
{
	const struct ms_die_sections *sec = u->sec;
	const struct ms_die_abbrev *ab;
	struct rd r;
	uint64_t code;
	uint32_t i;

	if (off < u->first || off >= u->end)
		return MS_DIE_REFUSED;
	r = (struct rd){ sec->info + off, sec->info + u->end, false };
	code = rd_uleb(&r);
	/* A null entry is not a DIE; a code written in more bytes than needed is refused. */
	if (r.bad || !code || code > u->n_abbrevs || (r.p - (sec->info + off) > 1 && r.p[-1] == 0))
		return MS_DIE_REFUSED;
	ab = &u->abbrevs[code - 1];
	out->off = off;
	out->tag = ab->tag;
	out->children = ab->children;
	out->have = 0;
	if (ab->size != UINT32_MAX) {
		/* Values of fixed sizes (most DIEs): one bounds check for all. */
		uint64_t pos = (uint64_t)(r.p - sec->info);

		if ((size_t)(r.end - r.p) < ab->size)
			return MS_DIE_REFUSED;
		for (i = 0; i < ab->n; i++) {
			const struct ms_die_spec *s = &u->specs[ab->first + i];
			int k = s->attr;

			if (k >= 0 && !(out->have & (1u << k))) {
				out->have |= 1u << k;
				out->a[k] = (struct ms_die_value){ s->form, pos, s->implicit };
			}
			pos += s->size;
		}
		r.p += ab->size;
		goto done;
	}
	for (i = 0; i < ab->n; i++) {
		const struct ms_die_spec *s = &u->specs[ab->first + i];
		int k = s->attr;

		if (k >= 0 && !(out->have & (1u << k))) {
			out->have |= 1u << k;
			out->a[k] = (struct ms_die_value){ s->form, (uint64_t)(r.p - sec->info),
							   s->implicit };
		}
		if (s->size < MS_DIE_SIZE_REFUSED)
			rd_skip(&r, s->size);
		else if (s->size == MS_DIE_SIZE_REFUSED || !skip_value(u, &r, s->form))
			return MS_DIE_REFUSED;
		if (r.bad)
			return MS_DIE_REFUSED;
	}
done:
	out->end = (uint64_t)(r.p - sec->info);
	/* Split DWARF is libdw's. */
	if (out->have & (1u << MS_DA_DWO))
		return MS_DIE_REFUSED;
	return MS_DIE_OK;
}

/* What is at off: MS_DIE_NONE for a null entry (one 0 byte), else as ms_die_read(). */
static int entry_at(const struct ms_die_unit *u, uint64_t off, struct ms_die *out)
{
	if (off >= u->end)
		return MS_DIE_REFUSED;
	if (u->sec->info[off] == 0)
		return MS_DIE_NONE;
	return ms_die_read(u, off, out);
}

int ms_die_child(const struct ms_die_unit *u, const struct ms_die *d, struct ms_die *out)
{
	if (!d->children)
		return MS_DIE_NONE;
	return entry_at(u, d->end, out);
}

/* A reference of the unit (CU-relative forms only) as a section offset. */
static int ref_value(const struct ms_die_unit *u, const struct ms_die_value *v, uint64_t *out)
{
	struct rd r = { u->sec->info + v->pos, u->sec->info + u->end, false };
	uint64_t rel;

	switch (v->form) {
	case DW_FORM_ref1:
		rel = rd_fixed(&r, 1);
		break;
	case DW_FORM_ref2:
		rel = rd_fixed(&r, 2);
		break;
	case DW_FORM_ref4:
		rel = rd_fixed(&r, 4);
		break;
	case DW_FORM_ref8:
		rel = rd_fixed(&r, 8);
		break;
	case DW_FORM_ref_udata:
		rel = rd_uleb(&r);
		break;
	default:
		return MS_DIE_REFUSED;	/* ref_addr, ref_sig8, alt: outside the unit */
	}
	if (r.bad || rel >= u->end - u->off)
		return MS_DIE_REFUSED;
	*out = u->off + rel;
	return MS_DIE_OK;
}

/*
 * Past the DIE at off, which lies inside the subtree being skipped: its
 * DW_AT_sibling when it has one (pointing forward), else past its values,
 * one level deeper when it has children. MS_DIE_OK or MS_DIE_REFUSED.
 */
static int skip_die(const struct ms_die_unit *u, uint64_t off, uint64_t *next, uint32_t *level)
{
	const struct ms_die_sections *sec = u->sec;
	const struct ms_die_abbrev *ab;
	struct rd r = { sec->info + off, sec->info + u->end, false };
	uint64_t code = rd_uleb(&r);
	uint32_t i;

	if (r.bad || !code || code > u->n_abbrevs || (r.p - (sec->info + off) > 1 && r.p[-1] == 0))
		return MS_DIE_REFUSED;
	ab = &u->abbrevs[code - 1];
	if (!ab->sibling && ab->size != UINT32_MAX) {
		rd_skip(&r, ab->size);
	} else {
		for (i = 0; i < ab->n; i++) {
			const struct ms_die_spec *s = &u->specs[ab->first + i];

			if (s->attr == MS_DA_SIBLING) {
				struct ms_die_value v = { s->form, (uint64_t)(r.p - sec->info), 0 };

				if (ref_value(u, &v, next) != MS_DIE_OK || *next <= off)
					return MS_DIE_REFUSED;
				return MS_DIE_OK;
			}
			if (s->size < MS_DIE_SIZE_REFUSED)
				rd_skip(&r, s->size);
			else if (s->size == MS_DIE_SIZE_REFUSED || !skip_value(u, &r, s->form))
				return MS_DIE_REFUSED;
			if (r.bad)
				return MS_DIE_REFUSED;
		}
	}
	if (r.bad)
		return MS_DIE_REFUSED;
	*next = (uint64_t)(r.p - sec->info);
	*level += ab->children;
	return MS_DIE_OK;
}

int ms_die_sibling(const struct ms_die_unit *u, const struct ms_die *d, struct ms_die *out)
{
	const uint8_t *info = u->sec->info;
	uint32_t level = 0;
	uint64_t next;

	if (d->have & (1u << MS_DA_SIBLING)) {
		/* libdw follows it, after checking it points forward inside the unit. */
		if (ref_value(u, &d->a[MS_DA_SIBLING], &next) != MS_DIE_OK || next <= d->off)
			return MS_DIE_REFUSED;
	} else {
		next = d->end;
		level = d->children;
	}
	for (;;) {
		/* Null entries close levels; the last one closes ours. */
		while (next < u->end && info[next] == 0) {
			if (level-- == 0)
				return MS_DIE_NONE;
			next++;
		}
		if (next >= u->end)
			return MS_DIE_REFUSED;
		if (!level)
			return ms_die_read(u, next, out);
		if (skip_die(u, next, &next, &level) != MS_DIE_OK)
			return MS_DIE_REFUSED;
	}
}

/* ---- attribute values ---- */

static const struct ms_die_value *value(const struct ms_die *d, enum ms_die_attr a)
{
	return d->have & (1u << a) ? &d->a[a] : NULL;
}

int ms_die_udata(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		 uint64_t *out)
{
	const struct ms_die_value *v = value(d, a);
	struct rd r;

	if (!v)
		return MS_DIE_NONE;
	r = (struct rd){ u->sec->info + v->pos, u->sec->info + u->end, false };
	switch (v->form) {
	case DW_FORM_data1:
		*out = rd_fixed(&r, 1);
		break;
	case DW_FORM_data2:
		*out = rd_fixed(&r, 2);
		break;
	case DW_FORM_data4:
		*out = rd_fixed(&r, 4);
		break;
	case DW_FORM_data8:
		*out = rd_fixed(&r, 8);
		break;
	case DW_FORM_udata:
		*out = rd_uleb(&r);
		break;
	case DW_FORM_implicit_const:
		*out = (uint64_t)v->implicit;
		break;
	case DW_FORM_sec_offset:
		/* Only as an offset into .debug_line; libdw checks it is inside. */
		if (a != MS_DA_STMT_LIST)
			return MS_DIE_REFUSED;
		*out = rd_fixed(&r, u->offset_size);
		break;
	default:
		return MS_DIE_REFUSED;
	}
	return r.bad ? MS_DIE_REFUSED : MS_DIE_OK;
}

int ms_die_addr(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		uint64_t *out)
{
	const struct ms_die_value *v = value(d, a);
	struct rd r;

	if (!v)
		return MS_DIE_NONE;
	if (v->form != DW_FORM_addr)
		return MS_DIE_REFUSED;
	r = (struct rd){ u->sec->info + v->pos, u->sec->info + u->end, false };
	*out = rd_fixed(&r, u->addr_size);
	return r.bad ? MS_DIE_REFUSED : MS_DIE_OK;
}

/* The NUL-terminated string at off of a section, or NULL. */
static const char *section_string(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

int ms_die_string(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		  const char **out)
{
	const struct ms_die_value *v = value(d, a);
	const struct ms_die_sections *sec = u->sec;
	struct rd r;
	uint64_t off;

	if (!v)
		return MS_DIE_NONE;
	r = (struct rd){ sec->info + v->pos, sec->info + u->end, false };
	switch (v->form) {
	case DW_FORM_string:
		*out = section_string(sec->info, u->end, v->pos);
		break;
	case DW_FORM_strp:
		off = rd_fixed(&r, u->offset_size);
		*out = r.bad ? NULL : section_string(sec->str, sec->str_size, off);
		break;
	case DW_FORM_line_strp:
		off = rd_fixed(&r, u->offset_size);
		*out = r.bad ? NULL : section_string(sec->line_str, sec->line_str_size, off);
		break;
	default:
		return MS_DIE_REFUSED;
	}
	return *out ? MS_DIE_OK : MS_DIE_REFUSED;
}

int ms_die_integrate(const struct ms_die_unit *u, const struct ms_die *d, enum ms_die_attr a,
		     struct ms_die *holder)
{
	struct ms_die cur = *d;
	int chain = 16;

	/* dwarf_attr_integrate(): the DIE itself and up to 17 more along the chain. */
	do {
		const struct ms_die_value *ref;
		uint64_t off;

		if (ms_die_has(&cur, a)) {
			*holder = cur;
			return MS_DIE_OK;
		}
		ref = value(&cur, MS_DA_ABSTRACT_ORIGIN);
		if (!ref)
			ref = value(&cur, MS_DA_SPECIFICATION);
		if (!ref)
			return MS_DIE_NONE;
		if (ref_value(u, ref, &off) != MS_DIE_OK || ms_die_read(u, off, &cur) != MS_DIE_OK)
			return MS_DIE_REFUSED;
	} while (chain-- != 0);
	return MS_DIE_NONE;
}

/* ---- ranges ---- */

enum { RANGES_START, RANGES_LIST, RANGES_DONE };

/* dwarf_highpc(): an address, or a constant added to dwarf_lowpc(). */
static int high_pc(const struct ms_die_unit *u, const struct ms_die *d, uint64_t *out)
{
	const struct ms_die_value *v = value(d, MS_DA_HIGH_PC);
	uint64_t lo, len;
	int r;

	if (!v)
		return MS_DIE_NONE;
	if (v->form == DW_FORM_addr)
		return ms_die_addr(u, d, MS_DA_HIGH_PC, out);
	if ((r = ms_die_addr(u, d, MS_DA_LOW_PC, &lo)) != MS_DIE_OK)
		return r;
	switch (v->form) {
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_udata:
	case DW_FORM_implicit_const:
		break;
	default:
		return MS_DIE_REFUSED;
	}
	if ((r = ms_die_udata(u, d, MS_DA_HIGH_PC, &len)) != MS_DIE_OK)
		return r;
	*out = lo + len;
	return MS_DIE_OK;
}

/* One entry of .debug_ranges: 0 a range, 1 a base address, 2 the end. */
static int ranges_entry(const struct ms_die_unit *u, struct ms_die_ranges *it, uint64_t *lo,
			uint64_t *hi)
{
	const struct ms_die_sections *sec = u->sec;
	struct rd r = { sec->ranges + it->pos, sec->ranges + sec->ranges_size, false };
	uint64_t escape = u->addr_size == 8 ? UINT64_MAX : UINT32_MAX;
	uint64_t b = rd_fixed(&r, u->addr_size), e = rd_fixed(&r, u->addr_size);

	if (r.bad)
		return -1;
	it->pos = (uint64_t)(r.p - sec->ranges);
	if (b == escape) {
		if (e == escape)
			return -1;
		it->base = e;
		return 1;
	}
	if (!b && !e)
		return 2;
	*lo = b + it->base;
	*hi = e + it->base;
	return 0;
}

/* One entry of .debug_rnglists, as ranges_entry(). */
static int rnglists_entry(const struct ms_die_unit *u, struct ms_die_ranges *it, uint64_t *lo,
			  uint64_t *hi)
{
	const struct ms_die_sections *sec = u->sec;
	struct rd r = { sec->rnglists + it->pos, sec->rnglists + sec->rnglists_size, false };
	uint8_t code = (uint8_t)rd_fixed(&r, 1);
	uint64_t a, b;
	int ret;

	switch (code) {
	case DW_RLE_end_of_list:
		ret = 2;
		break;
	case DW_RLE_offset_pair:
		a = rd_uleb(&r);
		b = rd_uleb(&r);
		*lo = a + it->base;
		*hi = b + it->base;
		ret = 0;
		break;
	case DW_RLE_base_address:
		it->base = rd_fixed(&r, u->addr_size);
		ret = 1;
		break;
	case DW_RLE_start_end:
		*lo = rd_fixed(&r, u->addr_size);
		*hi = rd_fixed(&r, u->addr_size);
		ret = 0;
		break;
	case DW_RLE_start_length:
		*lo = rd_fixed(&r, u->addr_size);
		*hi = *lo + rd_uleb(&r);
		ret = 0;
		break;
	default:
		/* The x forms need .debug_addr; anything else is corrupt. */
		return -1;
	}
	if (r.bad)
		return -1;
	it->pos = (uint64_t)(r.p - sec->rnglists);
	return ret;
}

/* Where d's DW_AT_ranges list starts (DW_FORM_sec_offset, or data4/8 before DWARF 4). */
static int ranges_start(const struct ms_die_unit *u, const struct ms_die *d, uint64_t *out)
{
	const struct ms_die_value *v = value(d, MS_DA_RANGES);
	struct rd r = { u->sec->info + v->pos, u->sec->info + u->end, false };
	size_t size = u->version < 5 ? u->sec->ranges_size : u->sec->rnglists_size;

	if (v->form == DW_FORM_sec_offset)
		*out = rd_fixed(&r, u->offset_size);
	else if (u->version < 4 && (v->form == DW_FORM_data4 || v->form == DW_FORM_data8))
		*out = rd_fixed(&r, v->form == DW_FORM_data4 ? 4 : 8);
	else
		return MS_DIE_REFUSED;
	if (r.bad || *out >= size)
		return MS_DIE_REFUSED;
	return MS_DIE_OK;
}

int ms_die_ranges_next(const struct ms_die_unit *u, const struct ms_die *d,
		       struct ms_die_ranges *it, uint64_t *lo, uint64_t *hi)
{
	int r;

	switch (it->state) {
	case RANGES_START: {
		uint64_t a, b;
		int rh = high_pc(u, d, &b);

		/* dwarf_ranges(): one range when both dwarf_highpc() and dwarf_lowpc() answer. */
		if (rh == MS_DIE_OK && (r = ms_die_addr(u, d, MS_DA_LOW_PC, &a)) != MS_DIE_NONE) {
			if (r != MS_DIE_OK)
				return MS_DIE_REFUSED;
			it->state = RANGES_DONE;
			*lo = a;
			*hi = b;
			return MS_DIE_OK;
		}
		if (rh == MS_DIE_REFUSED)
			return MS_DIE_REFUSED;
		if (!ms_die_has(d, MS_DA_RANGES)) {
			it->state = RANGES_DONE;
			return MS_DIE_NONE;
		}
		if (!(u->version < 5 ? u->sec->ranges : u->sec->rnglists) ||
		    ranges_start(u, d, &it->pos) != MS_DIE_OK)
			return MS_DIE_REFUSED;
		it->base = u->base;
		it->state = RANGES_LIST;
	}
		/* fall through */
	case RANGES_LIST:
		for (;;) {
			r = u->version < 5 ? ranges_entry(u, it, lo, hi) :
					     rnglists_entry(u, it, lo, hi);
			if (r < 0)
				return MS_DIE_REFUSED;
			if (r == 0)
				return MS_DIE_OK;
			if (r == 2) {
				it->state = RANGES_DONE;
				return MS_DIE_NONE;
			}
		}
	default:
		return MS_DIE_NONE;
	}
}

/* ---- units ---- */

void ms_die_unit_release(struct ms_die_unit *u)
{
	free(u->abbrevs);
	free(u->specs);
	memset(u, 0, sizeof(*u));
}

int ms_die_unit_open(struct ms_die_unit *u, const struct ms_die_sections *sec, uint64_t off,
		     struct ms_die *cu)
{
	struct header h;
	uint64_t base;

	memset(u, 0, sizeof(*u));
	u->sec = sec;
	if (read_header(sec, off, &h) != MS_DIE_OK || h.unit_type != DW_UT_compile ||
	    (h.addr_size != 4 && h.addr_size != 8))
		goto refused;
	u->off = off;
	u->end = h.next;
	u->first = (uint64_t)(h.die - sec->info);
	u->version = h.version;
	u->addr_size = h.addr_size;
	u->offset_size = h.offset_size;
	if (read_abbrevs(u, h.abbrev_off) != MS_DIE_OK ||
	    ms_die_read(u, u->first, cu) != MS_DIE_OK || cu->tag != DW_TAG_compile_unit)
		goto refused;
	/* __libdw_cu_base_address(): DW_AT_low_pc, else DW_AT_entry_pc, else 0. */
	if (ms_die_addr(u, cu, MS_DA_LOW_PC, &base) == MS_DIE_OK ||
	    ms_die_addr(u, cu, MS_DA_ENTRY_PC, &base) == MS_DIE_OK)
		u->base = base;
	else if ((ms_die_has(cu, MS_DA_LOW_PC) && cu->a[MS_DA_LOW_PC].form != DW_FORM_addr) ||
		 (ms_die_has(cu, MS_DA_ENTRY_PC) && cu->a[MS_DA_ENTRY_PC].form != DW_FORM_addr))
		goto refused;	/* an address form this reader does not read */
	else
		u->base = 0;
	return MS_DIE_OK;
refused:
	ms_die_unit_release(u);
	return MS_DIE_REFUSED;
}
