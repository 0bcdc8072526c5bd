/*
 * Unit tests of the DIE reader (libcommon/dwarf/dieread.h) on hand-built
 * DWARF: a DWARF 5 unit with a subprogram, an inlined call of an abstract
 * one, a lexical block with a range list and a subtree skipped by
 * DW_AT_sibling and by walking; a DWARF 4 unit with .debug_ranges; then
 * every refusal on a copy changed in one place (each must be refused,
 * never read past its section). That the reader answers as libdw on real
 * files is symbols-index-test's part.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf/dieread.h"
#include "dwarf/leb128.h"
#include "tests/unit/dwarf-bytes.h"

static void patch4(struct bytes *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* An abbreviation: code, tag, children, then (name, form) pairs ending with 0, 0. */
static void abbrev(struct bytes *b, uint32_t code, uint32_t tag, int children, const uint32_t *spec)
{
	uleb(b, code);
	uleb(b, tag);
	u8(b, children);
	for (; spec[0] || spec[1]; spec += 2) {
		uleb(b, spec[0]);
		uleb(b, spec[1]);
		if (spec[1] == DW_FORM_implicit_const)
			uleb(b, 42);	/* every implicit value here: 42 */
	}
	u8(b, 0);
	u8(b, 0);
}

/* The sections of the test and where its DIEs are. */
struct dwarf {
	struct bytes info, abbrev, str, rnglists, ranges;
	struct ms_die_sections sec;
	size_t cu, abstract, main_, var, member, inl, block, cold, v4;
	size_t main_sibling, rng_block, rng_cold, v4_cu_ranges;
};

enum { A_CU = 1, A_ABSTRACT, A_SUB, A_VAR, A_MEMBER, A_INL, A_BLOCK, A_COLD };

static void build(struct dwarf *d)
{
	static const uint32_t cu[] = { DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4,
				       DW_AT_stmt_list, DW_FORM_sec_offset, DW_AT_comp_dir,
				       DW_FORM_string, DW_AT_name, DW_FORM_strp, 0, 0 };
	static const uint32_t abstract[] = { DW_AT_name, DW_FORM_strp, DW_AT_linkage_name,
					     DW_FORM_strp, DW_AT_decl_line, DW_FORM_data2, 0, 0 };
	static const uint32_t sub[] = { DW_AT_sibling, DW_FORM_ref4, DW_AT_name, DW_FORM_string,
					DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4,
					DW_AT_decl_line, DW_FORM_data1, 0, 0 };
	static const uint32_t var[] = { DW_AT_name, DW_FORM_string, DW_AT_location,
					DW_FORM_exprloc, 0, 0 };
	static const uint32_t member[] = { DW_AT_name, DW_FORM_string, DW_AT_const_value,
					   DW_FORM_sdata, 0, 0 };
	static const uint32_t inl[] = { DW_AT_abstract_origin, DW_FORM_ref4, DW_AT_low_pc,
					DW_FORM_addr, DW_AT_high_pc, DW_FORM_data1, DW_AT_call_file,
					DW_FORM_data1, DW_AT_call_line, DW_FORM_implicit_const, 0, 0 };
	static const uint32_t block[] = { DW_AT_ranges, DW_FORM_sec_offset, 0, 0 };
	static const uint32_t cold[] = { DW_AT_name, DW_FORM_string, DW_AT_ranges,
					 DW_FORM_sec_offset, DW_AT_entry_pc, DW_FORM_addr, 0, 0 };
	static const uint32_t v4cu[] = { DW_AT_low_pc, DW_FORM_addr, DW_AT_ranges,
					 DW_FORM_sec_offset, 0, 0 };
	struct bytes *i = &d->info;
	size_t len_at, v4_abbrev;

	memset(d, 0, sizeof(*d));
	abbrev(&d->abbrev, A_CU, DW_TAG_compile_unit, 1, cu);
	abbrev(&d->abbrev, A_ABSTRACT, DW_TAG_subprogram, 0, abstract);
	abbrev(&d->abbrev, A_SUB, DW_TAG_subprogram, 1, sub);
	abbrev(&d->abbrev, A_VAR, DW_TAG_variable, 1, var);
	abbrev(&d->abbrev, A_MEMBER, DW_TAG_member, 0, member);
	abbrev(&d->abbrev, A_INL, DW_TAG_inlined_subroutine, 0, inl);
	abbrev(&d->abbrev, A_BLOCK, DW_TAG_lexical_block, 0, block);
	abbrev(&d->abbrev, A_COLD, DW_TAG_subprogram, 0, cold);
	u8(&d->abbrev, 0);
	v4_abbrev = d->abbrev.n;
	abbrev(&d->abbrev, 1, DW_TAG_compile_unit, 0, v4cu);
	u8(&d->abbrev, 0);

	cstr(&d->str, "cu.c");		/* 0 */
	cstr(&d->str, "inl");		/* 5 */
	cstr(&d->str, "_Z3inlv");	/* 9 */

	/* The range lists: the block's, then cold's. */
	d->rng_block = d->rnglists.n;
	u8(&d->rnglists, DW_RLE_offset_pair);
	uleb(&d->rnglists, 0x20);
	uleb(&d->rnglists, 0x30);
	u8(&d->rnglists, DW_RLE_base_address);
	uint_le(&d->rnglists, 0x2000, 8);
	u8(&d->rnglists, DW_RLE_offset_pair);
	uleb(&d->rnglists, 0);
	uleb(&d->rnglists, 8);
	u8(&d->rnglists, DW_RLE_start_length);
	uint_le(&d->rnglists, 0x3000, 8);
	uleb(&d->rnglists, 0x10);
	u8(&d->rnglists, DW_RLE_start_end);
	uint_le(&d->rnglists, 0x4000, 8);
	uint_le(&d->rnglists, 0x4004, 8);
	u8(&d->rnglists, DW_RLE_end_of_list);
	d->rng_cold = d->rnglists.n;
	u8(&d->rnglists, DW_RLE_start_end);
	uint_le(&d->rnglists, 0x7000, 8);
	uint_le(&d->rnglists, 0x7100, 8);
	u8(&d->rnglists, DW_RLE_end_of_list);

	/* DWARF 5 unit at 0. */
	len_at = i->n;
	uint_le(i, 0, 4);
	uint_le(i, 5, 2);
	u8(i, DW_UT_compile);
	u8(i, 8);
	uint_le(i, 0, 4);
	d->cu = i->n;
	uleb(i, A_CU);
	uint_le(i, 0x1000, 8);
	uint_le(i, 0x100, 4);
	uint_le(i, 0, 4);
	cstr(i, "/src");
	uint_le(i, 0, 4);
	d->abstract = i->n;
	uleb(i, A_ABSTRACT);
	uint_le(i, 5, 4);
	uint_le(i, 9, 4);
	uint_le(i, 7, 2);
	d->main_ = i->n;
	uleb(i, A_SUB);
	d->main_sibling = i->n;
	uint_le(i, 0, 4);		/* patched: cold */
	cstr(i, "main");
	uint_le(i, 0x1000, 8);
	uint_le(i, 0x80, 4);
	uint_le(i, 3, 1);
	d->var = i->n;
	uleb(i, A_VAR);
	cstr(i, "v");
	uleb(i, 2);		/* exprloc of 2 bytes */
	u8(i, 0x91);
	u8(i, 0x10);
	d->member = i->n;
	uleb(i, A_MEMBER);
	cstr(i, "m");
	u8(i, 0x7f);		/* sdata -1 */
	u8(i, 0);		/* end of v's children */
	d->inl = i->n;
	uleb(i, A_INL);
	uint_le(i, d->abstract, 4);
	uint_le(i, 0x1010, 8);
	uint_le(i, 0x10, 1);
	uint_le(i, 1, 1);
	d->block = i->n;
	uleb(i, A_BLOCK);
	uint_le(i, d->rng_block, 4);
	u8(i, 0);		/* end of main's children */
	d->cold = i->n;
	patch4(i, d->main_sibling, (uint32_t)d->cold);
	uleb(i, A_COLD);
	cstr(i, "cold");
	uint_le(i, d->rng_cold, 4);
	uint_le(i, 0x7050, 8);
	u8(i, 0);		/* end of the unit's children */
	patch4(i, len_at, (uint32_t)(i->n - len_at - 4));

	/* DWARF 4 unit with .debug_ranges: a range, a base address, a range, the end. */
	d->v4 = i->n;
	uint_le(i, 0, 4);
	uint_le(i, 4, 2);
	uint_le(i, v4_abbrev, 4);
	u8(i, 8);
	uleb(i, 1);
	uint_le(i, 0x5000, 8);
	d->v4_cu_ranges = d->ranges.n;
	uint_le(i, d->ranges.n, 4);
	patch4(i, d->v4, (uint32_t)(i->n - d->v4 - 4));
	uint_le(&d->ranges, 0x10, 8);
	uint_le(&d->ranges, 0x20, 8);
	uint_le(&d->ranges, UINT64_MAX, 8);
	uint_le(&d->ranges, 0x6000, 8);
	uint_le(&d->ranges, 1, 8);
	uint_le(&d->ranges, 2, 8);
	uint_le(&d->ranges, 0, 8);
	uint_le(&d->ranges, 0, 8);

	d->sec = (struct ms_die_sections){
		.info = d->info.b, .info_size = d->info.n,
		.abbrev = d->abbrev.b, .abbrev_size = d->abbrev.n,
		.str = d->str.b, .str_size = d->str.n,
		.rnglists = d->rnglists.b, .rnglists_size = d->rnglists.n,
		.ranges = d->ranges.b, .ranges_size = d->ranges.n,
	};
}

/* All ranges of die into lo/hi (at most 8); the count, or -1 when refused. */
static int ranges(const struct ms_die_unit *u, const struct ms_die *die, uint64_t *lo,
		  uint64_t *hi)
{
	struct ms_die_ranges it = { 0 };
	int n = 0, r;

	while ((r = ms_die_ranges_next(u, die, &it, &lo[n], &hi[n])) == MS_DIE_OK)
		assert_true(++n < 8);
	return r == MS_DIE_NONE ? n : -1;
}

static void test_walk(void **state)
{
	struct dwarf d;
	struct ms_die_unit u;
	struct ms_die cu, die, x;
	uint64_t next, first, v, lo[8], hi[8];
	uint16_t version;
	const char *s;

	(void)state;
	build(&d);
	assert_int_equal(ms_die_unit_header(&d.sec, 0, &next, &first, &version), MS_DIE_OK);
	assert_int_equal(next, d.v4);
	assert_int_equal(first, d.cu);
	assert_int_equal(version, 5);
	assert_int_equal(ms_die_unit_open(&u, &d.sec, 0, &cu), MS_DIE_OK);
	assert_int_equal(cu.off, d.cu);
	assert_int_equal(u.base, 0x1000);
	assert_int_equal(ms_die_string(&u, &cu, MS_DA_COMP_DIR, &s), MS_DIE_OK);
	assert_string_equal(s, "/src");
	assert_int_equal(ms_die_string(&u, &cu, MS_DA_NAME, &s), MS_DIE_OK);
	assert_string_equal(s, "cu.c");
	assert_int_equal(ms_die_udata(&u, &cu, MS_DA_STMT_LIST, &v), MS_DIE_OK);
	assert_int_equal(v, 0);
	assert_int_equal(ranges(&u, &cu, lo, hi), 1);
	assert_int_equal(lo[0], 0x1000);
	assert_int_equal(hi[0], 0x1100);

	/* Children in order; main's subtree skipped by its DW_AT_sibling. */
	assert_int_equal(ms_die_child(&u, &cu, &die), MS_DIE_OK);
	assert_int_equal(die.off, d.abstract);
	assert_int_equal(ms_die_child(&u, &die, &x), MS_DIE_NONE);
	assert_int_equal(ms_die_sibling(&u, &die, &die), MS_DIE_OK);
	assert_int_equal(die.off, d.main_);
	assert_int_equal(die.tag, DW_TAG_subprogram);
	assert_int_equal(ms_die_sibling(&u, &die, &x), MS_DIE_OK);
	assert_int_equal(x.off, d.cold);
	assert_int_equal(ms_die_sibling(&u, &x, &x), MS_DIE_NONE);

	/* Inside main: v (whose child is skipped by walking), the call, the block. */
	assert_int_equal(ms_die_child(&u, &die, &x), MS_DIE_OK);
	assert_int_equal(x.off, d.var);
	assert_int_equal(ms_die_sibling(&u, &x, &x), MS_DIE_OK);
	assert_int_equal(x.off, d.inl);
	assert_int_equal(ms_die_udata(&u, &x, MS_DA_CALL_FILE, &v), MS_DIE_OK);
	assert_int_equal(v, 1);
	assert_int_equal(ms_die_udata(&u, &x, MS_DA_CALL_LINE, &v), MS_DIE_OK);
	assert_int_equal(v, 42);
	assert_int_equal(ranges(&u, &x, lo, hi), 1);
	assert_int_equal(lo[0], 0x1010);
	assert_int_equal(hi[0], 0x1020);
	{
		struct ms_die holder;

		/* The call's names and line are its abstract origin's. */
		assert_int_equal(ms_die_integrate(&u, &x, MS_DA_LINKAGE_NAME, &holder), MS_DIE_OK);
		assert_int_equal(holder.off, d.abstract);
		assert_int_equal(ms_die_string(&u, &holder, MS_DA_LINKAGE_NAME, &s), MS_DIE_OK);
		assert_string_equal(s, "_Z3inlv");
		assert_int_equal(ms_die_integrate(&u, &x, MS_DA_DECL_LINE, &holder), MS_DIE_OK);
		assert_int_equal(ms_die_udata(&u, &holder, MS_DA_DECL_LINE, &v), MS_DIE_OK);
		assert_int_equal(v, 7);
		assert_int_equal(ms_die_integrate(&u, &x, MS_DA_COMP_DIR, &holder), MS_DIE_NONE);
		assert_int_equal(ms_die_addr(&u, &x, MS_DA_ENTRY_PC, &v), MS_DIE_NONE);
		assert_int_equal(ms_die_addr(&u, &x, MS_DA_LOW_PC, &v), MS_DIE_OK);
		assert_int_equal(v, 0x1010);
	}
	assert_int_equal(ms_die_sibling(&u, &x, &x), MS_DIE_OK);
	assert_int_equal(x.off, d.block);
	assert_int_equal(ranges(&u, &x, lo, hi), 4);
	assert_int_equal(lo[0], 0x1020);	/* offset pair on the unit's base */
	assert_int_equal(hi[0], 0x1030);
	assert_int_equal(lo[1], 0x2000);	/* on the base address entry's */
	assert_int_equal(hi[1], 0x2008);
	assert_int_equal(lo[2], 0x3000);
	assert_int_equal(hi[2], 0x3010);
	assert_int_equal(lo[3], 0x4000);
	assert_int_equal(hi[3], 0x4004);
	assert_int_equal(ms_die_sibling(&u, &x, &x), MS_DIE_NONE);

	/* cold: ranges only, and its own entry address. */
	assert_int_equal(ms_die_sibling(&u, &die, &die), MS_DIE_OK);
	assert_int_equal(ranges(&u, &die, lo, hi), 1);
	assert_int_equal(lo[0], 0x7000);
	assert_int_equal(hi[0], 0x7100);
	assert_int_equal(ms_die_addr(&u, &die, MS_DA_ENTRY_PC, &v), MS_DIE_OK);
	assert_int_equal(v, 0x7050);
	ms_die_unit_release(&u);

	/* DWARF 4: .debug_ranges on the unit's low_pc, then on a base address entry. */
	assert_int_equal(ms_die_unit_open(&u, &d.sec, d.v4, &cu), MS_DIE_OK);
	assert_int_equal(ranges(&u, &cu, lo, hi), 2);
	assert_int_equal(lo[0], 0x5010);
	assert_int_equal(hi[0], 0x5020);
	assert_int_equal(lo[1], 0x6001);
	assert_int_equal(hi[1], 0x6002);
	assert_int_equal(ms_die_child(&u, &cu, &x), MS_DIE_NONE);
	ms_die_unit_release(&u);
}

/* Open the DWARF 5 unit and walk it all, reading every DIE's ranges and names. */
static int walk_all(struct dwarf *d)
{
	struct ms_die_unit u;
	struct ms_die cu, stack[8], holder;
	uint64_t lo[8], hi[8], v;
	const char *s;
	int depth = 0, r;

	if (ms_die_unit_open(&u, &d->sec, 0, &cu) != MS_DIE_OK)
		return MS_DIE_REFUSED;
	r = ms_die_child(&u, &cu, &stack[0]);
	while (r == MS_DIE_OK) {
		struct ms_die *die = &stack[depth];

		if (ranges(&u, die, lo, hi) < 0 ||
		    ms_die_integrate(&u, die, MS_DA_NAME, &holder) == MS_DIE_REFUSED ||
		    (ms_die_has(die, MS_DA_NAME) &&
		     ms_die_string(&u, die, MS_DA_NAME, &s) != MS_DIE_OK) ||
		    ms_die_udata(&u, die, MS_DA_CALL_LINE, &v) == MS_DIE_REFUSED) {
			r = MS_DIE_REFUSED;
			break;
		}
		if (die->tag == DW_TAG_subprogram && depth < 7 &&
		    (r = ms_die_child(&u, die, &stack[depth + 1])) == MS_DIE_OK) {
			depth++;
			continue;
		}
		if (r == MS_DIE_REFUSED)
			break;
		while ((r = ms_die_sibling(&u, &stack[depth], &stack[depth])) == MS_DIE_NONE &&
		       depth > 0)
			depth--;
	}
	ms_die_unit_release(&u);
	return r == MS_DIE_REFUSED ? MS_DIE_REFUSED : MS_DIE_OK;
}

/* A copy of the test's DWARF with info[at] = byte (or a 4-byte value). */
static int walk_patched(size_t at, const void *bytes, size_t len)
{
	struct dwarf d;

	build(&d);
	memcpy(d.info.b + at, bytes, len);
	return walk_all(&d);
}

static void test_refused(void **state)
{
	struct dwarf d;
	struct ms_die_unit u;
	struct ms_die cu, die;
	uint64_t next, first, v;
	uint16_t version;
	uint32_t u32;
	uint8_t byte;

	(void)state;
	build(&d);
	assert_int_equal(walk_all(&d), MS_DIE_OK);

	/* Headers: cut short, too long, a version or unit type not read. */
	d.sec.info_size = 10;
	assert_int_equal(ms_die_unit_header(&d.sec, 0, &next, &first, &version), MS_DIE_REFUSED);
	assert_int_equal(ms_die_unit_open(&u, &d.sec, 0, &cu), MS_DIE_REFUSED);
	build(&d);
	u32 = (uint32_t)d.info.n;
	assert_int_equal(walk_patched(0, &u32, 4), MS_DIE_REFUSED);
	byte = 6;
	assert_int_equal(walk_patched(4, &byte, 1), MS_DIE_REFUSED);
	byte = DW_UT_skeleton;
	assert_int_equal(walk_patched(6, &byte, 1), MS_DIE_REFUSED);
	byte = 3;		/* address size */
	assert_int_equal(walk_patched(7, &byte, 1), MS_DIE_REFUSED);
	u32 = 1u << 20;		/* abbreviations past their section */
	assert_int_equal(walk_patched(8, &u32, 4), MS_DIE_REFUSED);

	/* Abbreviation codes must be 1..n in order. */
	build(&d);
	d.abbrev.b[0] = 2;
	assert_int_equal(walk_all(&d), MS_DIE_REFUSED);

	/* A DIE with a code past the table, or padded (0x84 0x00 is 4, in two bytes). */
	byte = 0x7f;
	assert_int_equal(walk_patched(d.var, &byte, 1), MS_DIE_REFUSED);
	assert_int_equal(walk_patched(d.var, "\x84\x00", 2), MS_DIE_REFUSED);
	/* A DIE past the unit. */
	build(&d);
	assert_int_equal(ms_die_unit_open(&u, &d.sec, 0, &cu), MS_DIE_OK);
	assert_int_equal(ms_die_read(&u, d.v4 + 11, &die), MS_DIE_REFUSED);
	ms_die_unit_release(&u);

	/* A sibling that points back, or out of the unit. */
	build(&d);
	u32 = (uint32_t)d.main_;
	assert_int_equal(walk_patched(d.main_sibling, &u32, 4), MS_DIE_REFUSED);
	u32 = 1u << 20;
	assert_int_equal(walk_patched(d.main_sibling, &u32, 4), MS_DIE_REFUSED);
	/* An abstract origin out of the unit. */
	assert_int_equal(walk_patched(d.inl + 1, &u32, 4), MS_DIE_REFUSED);
	/* A range list past its section, and one entry the reader leaves to libdw. */
	assert_int_equal(walk_patched(d.block + 1, &u32, 4), MS_DIE_REFUSED);
	build(&d);
	d.rnglists.b[d.rng_cold] = DW_RLE_startx_length;
	assert_int_equal(walk_all(&d), MS_DIE_REFUSED);
	build(&d);
	d.rnglists.b[d.rng_cold] = 0x2a;	/* no such entry */
	assert_int_equal(walk_all(&d), MS_DIE_REFUSED);
	/* A list without its end. */
	build(&d);
	d.sec.rnglists_size = d.rng_block + 3;
	assert_int_equal(walk_all(&d), MS_DIE_REFUSED);

	/* A string without its NUL at the end of .debug_str. */
	build(&d);
	d.sec.str_size = 4;
	assert_int_equal(ms_die_unit_open(&u, &d.sec, 0, &cu), MS_DIE_OK);
	assert_int_equal(ms_die_string(&u, &cu, MS_DA_NAME, &(const char *){ NULL }), MS_DIE_REFUSED);
	ms_die_unit_release(&u);

	/* Forms that need sections this reader does not read, or are not forms at all. */
	{
		static const uint16_t forms[] = { DW_FORM_strx1, DW_FORM_addrx, DW_FORM_indirect,
						  DW_FORM_GNU_ref_alt, DW_FORM_rnglistx, 0x7e };

		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			size_t at;

			build(&d);
			/* The member's name form (the walk skips the member's DIE). */
			at = 0;
			for (uint32_t code = 0; code < A_MEMBER - 1; code++) {
				while (d.abbrev.b[at] || d.abbrev.b[at + 1])
					at++;
				at += 2;
			}
			/* at: the member's abbreviation: code, tag, children, name, form. */
			assert_int_equal(d.abbrev.b[at], A_MEMBER);
			assert_int_equal(d.abbrev.b[at + 3], DW_AT_name);
			assert_true(forms[i] < 0x80 || d.abbrev.b[at + 4] < 0x80);
			if (forms[i] >= 0x80)
				continue;	/* a two-byte form does not fit in place */
			d.abbrev.b[at + 4] = (uint8_t)forms[i];
			assert_int_equal(walk_all(&d), MS_DIE_REFUSED);
		}
	}

	/* Split DWARF. */
	build(&d);
	{
		/* The abstract subprogram's linkage name becomes DW_AT_GNU_dwo_name. */
		size_t at = 0;

		while (d.abbrev.b[at] || d.abbrev.b[at + 1])
			at++;
		at += 2;
		assert_int_equal(d.abbrev.b[at], A_ABSTRACT);
		assert_int_equal(d.abbrev.b[at + 5], DW_AT_linkage_name);
		d.abbrev.b[at + 5] = DW_AT_dwo_name;
	}
	assert_int_equal(walk_all(&d), MS_DIE_REFUSED);

	/* Values that run past the unit's end. */
	build(&d);
	assert_int_equal(ms_die_unit_open(&u, &d.sec, 0, &cu), MS_DIE_OK);
	u.end = d.main_ + 3;
	assert_int_equal(ms_die_read(&u, d.main_, &die), MS_DIE_REFUSED);
	u.end = d.v4;
	assert_int_equal(ms_die_read(&u, d.main_, &die), MS_DIE_OK);
	assert_int_equal(ms_die_udata(&u, &die, MS_DA_NAME, &v), MS_DIE_REFUSED);	/* a string */
	assert_int_equal(ms_die_addr(&u, &die, MS_DA_HIGH_PC, &v), MS_DIE_REFUSED);	/* data4 */
	/* The same for a DIE whose values all have fixed sizes (read in one step). */
	u.end = d.block - 1;
	assert_int_equal(ms_die_read(&u, d.inl, &die), MS_DIE_REFUSED);
	u.end = d.block;
	assert_int_equal(ms_die_read(&u, d.inl, &die), MS_DIE_OK);
	assert_int_equal(die.end, d.block);
	assert_int_equal(ms_die_udata(&u, &die, MS_DA_CALL_FILE, &v), MS_DIE_OK);
	assert_int_equal(v, 1);
	assert_int_equal(ms_die_udata(&u, &die, MS_DA_CALL_LINE, &v), MS_DIE_OK);
	assert_int_equal(v, 42);	/* implicit: no bytes in the DIE */
	assert_int_equal(ms_die_addr(&u, &die, MS_DA_LOW_PC, &v), MS_DIE_OK);
	assert_int_equal(v, 0x1010);
	ms_die_unit_release(&u);
}

/* ULEB128 (leb128.h): every length up to 64 bits, and what does not fit or ends early. */
static void test_uleb(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		bool ok;
		uint64_t value;
	} cases[] = {
		{ "\x00", 1, true, 0 },
		{ "\x7f", 1, true, 127 },
		{ "\x80\x01", 2, true, 128 },
		{ "\xe5\x8e\x26", 3, true, 624485 },
		{ "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 10, true, 0 },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, true, UINT64_MAX },
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, false, 0 },	/* bit 64 */
		{ "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 11, false, 0 },
		{ "\x80", 1, false, 0 },					/* ends early */
		{ "\xff\xff", 2, false, 0 },
		{ "", 0, false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const uint8_t *p = (const uint8_t *)cases[i].bytes, *end = p + cases[i].len;
		uint64_t v = 12345;
		bool ok = ms_uleb(&p, end, &v);

		assert_int_equal(ok, cases[i].ok);
		if (ok) {
			assert_true(v == cases[i].value);
			assert_ptr_equal(p, end);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uleb),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
