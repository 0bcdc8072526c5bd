/*
 * Unit tests of function starts from .eh_frame (dwarf/ehframe.h):
 * hand-built sections. Every address of a function is answered with its
 * FDE's start whatever the rows of its CFI program; gaps are answered with
 * none; the walk of .eh_frame (no usable .eh_frame_hdr) answers as the
 * table does; malformed headers and entries are none, never a read out of
 * bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "dwarf/ehframe.h"

#define HDR_VADDR 0x1000u
#define FRAME_VADDR 0x2000u
#define F1 0x5000u		/* [F1, F1 + 0x40): a function of several CFI rows */
#define F2 0x5080u		/* [F2, F2 + 0x20), after a gap */
#define F3 0x50a0u		/* [F3, F3 + 0x10), right after F2 */
#define END (F3 + 0x10)
#define PCREL4 (DW_EH_PE_pcrel | DW_EH_PE_sdata4)

struct secs {
	uint8_t hdr[256], frame[1024];
	size_t hdr_len, frame_len;
	size_t cie, fde[8];		/* offsets in frame, for damage */
	uint64_t start[8];
	int n;
	unsigned int addr_size;
};

/* Rows at +0, +1, +5, a remembered state, rows at +6 and +8, restored. */
static const uint8_t rows[] = {
	DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,
	DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 8, DW_CFA_remember_state,
	DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 24,
	DW_CFA_advance_loc2, 2, 0, DW_CFA_restore_state, DW_CFA_nop,
};

static void put(uint8_t *p, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void begin(struct secs *s, unsigned int addr_size)
{
	memset(s, 0, sizeof(*s));
	s->addr_size = addr_size;
}

/*
 * Append a CIE of version, augmentation aug (with its data when it has a
 * 'z'), code alignment 1, data alignment -8, return address register 16.
 */
static size_t add_cie(struct secs *s, uint8_t version, const char *aug, const uint8_t *data,
		      size_t n_data)
{
	static const uint8_t insns[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1 };
	uint8_t *f = s->frame;
	size_t o = s->frame_len, at = o;

	o += 4;
	put(f + o, 0, 4);
	o += 4;
	f[o++] = version;
	memcpy(f + o, aug, strlen(aug) + 1);
	o += strlen(aug) + 1;
	if (version == 4) {
		f[o++] = (uint8_t)s->addr_size;
		f[o++] = 0;
	}
	f[o++] = 1;
	f[o++] = 0x78;
	f[o++] = 16;
	if (aug[0] == 'z') {
		f[o++] = (uint8_t)n_data;
		memcpy(f + o, data, n_data);
		o += n_data;
	}
	memcpy(f + o, insns, sizeof(insns));
	o += sizeof(insns);
	put(f + at, o - at - 4, 4);
	s->frame_len = o;
	s->cie = at;
	return at;
}

/* The CIE of most tests: "zR", pc-relative 4-byte addresses. */
static size_t add_cie_zr(struct secs *s)
{
	static const uint8_t data[] = { PCREL4 };

	return add_cie(s, 1, "zR", data, sizeof(data));
}

/* Append an FDE of cie for [start, start + range), its addresses of encoding enc. */
static void add_fde(struct secs *s, size_t cie, uint8_t enc, bool z, uint64_t start,
		    uint64_t range)
{
	uint8_t *f = s->frame;
	size_t o = s->frame_len, at = o;
	unsigned int size = (enc & 0x0f) == DW_EH_PE_absptr ? s->addr_size :
			    (enc & 0x07) == DW_EH_PE_udata2 ? 2 :
			    (enc & 0x07) == DW_EH_PE_udata4 ? 4 : 8;

	o += 4;
	put(f + o, o - cie, 4);
	o += 4;
	put(f + o, (enc & 0x70) == DW_EH_PE_pcrel ? start - (FRAME_VADDR + o) : start, size);
	o += size;
	put(f + o, range, size);
	o += size;
	if (z)
		f[o++] = 0;
	memcpy(f + o, rows, sizeof(rows));
	o += sizeof(rows);
	put(f + at, o - at - 4, 4);
	s->frame_len = o;
	s->fde[s->n] = at;
	s->start[s->n++] = start;
}

/* The terminator, and .eh_frame_hdr with its table (the FDEs are added in order). */
static void finish(struct secs *s)
{
	put(s->frame + s->frame_len, 0, 4);
	s->frame_len += 4;
	s->hdr[0] = 1;
	s->hdr[1] = PCREL4;
	s->hdr[2] = DW_EH_PE_udata4;
	s->hdr[3] = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	put(s->hdr + 4, FRAME_VADDR - (HDR_VADDR + 4), 4);
	put(s->hdr + 8, (uint64_t)s->n, 4);
	for (int i = 0; i < s->n; i++) {
		put(s->hdr + 12 + 8 * i, s->start[i] - HDR_VADDR, 4);
		put(s->hdr + 16 + 8 * i, FRAME_VADDR + s->fde[i] - HDR_VADDR, 4);
	}
	s->hdr_len = 12 + 8 * (size_t)s->n;
}

/* F1, F2 and F3 of the "zR" CIE. */
static void build(struct secs *s)
{
	size_t cie;

	begin(s, 8);
	cie = add_cie_zr(s);
	add_fde(s, cie, PCREL4, true, F1, 0x40);
	add_fde(s, cie, PCREL4, true, F2, 0x20);
	add_fde(s, cie, PCREL4, true, F3, 0x10);
	finish(s);
}

/*
 * The sections in buffers of their exact sizes, so that a read past one is
 * a read past a heap block (valgrind, ASan).
 */
static void init(struct ms_ehframe *e, const struct secs *s, bool hdr, uint8_t **h, uint8_t **f)
{
	*h = test_malloc(s->hdr_len ? s->hdr_len : 1);
	*f = test_malloc(s->frame_len ? s->frame_len : 1);
	memcpy(*h, s->hdr, s->hdr_len);
	memcpy(*f, s->frame, s->frame_len);
	ms_ehframe_init(e, hdr ? *h : NULL, s->hdr_len, HDR_VADDR, *f, s->frame_len, FRAME_VADDR,
			s->addr_size);
}

static void done(struct ms_ehframe *e, uint8_t *h, uint8_t *f)
{
	ms_ehframe_release(e);
	test_free(h);
	test_free(f);
}

/* Whether the table is used (hdr true) or .eh_frame walked. */
static bool uses_table(const struct secs *s)
{
	struct ms_ehframe e;
	uint8_t *h, *f;
	bool t;

	init(&e, s, true, &h, &f);
	t = e.table != NULL;
	done(&e, h, f);
	return t;
}

/* The answer for addr by the table (hdr) or by the walk: the start, or 1 for none. */
static uint64_t answer(const struct secs *s, bool hdr, uint64_t addr)
{
	struct ms_ehframe e;
	uint64_t start = 0xdead;
	uint8_t *h, *f;
	bool found;

	init(&e, s, hdr, &h, &f);
	found = ms_ehframe_start(&e, addr, &start);
	done(&e, h, f);
	if (!found)
		return 1;
	assert_int_not_equal(start, 0xdead);
	return start;
}

/* Both ways give want for addr. */
static void expect(const struct secs *s, uint64_t addr, uint64_t want)
{
	if (answer(s, true, addr) != want || answer(s, false, addr) != want)
		fail_msg("0x%llx: table 0x%llx, walk 0x%llx, want 0x%llx",
			 (unsigned long long)addr, (unsigned long long)answer(s, true, addr),
			 (unsigned long long)answer(s, false, addr), (unsigned long long)want);
}

/* The answers for F1, F2, F3 and the gaps around them, both ways, one reader for all. */
static void expect_functions(const struct secs *s)
{
	struct ms_ehframe t, w;
	uint8_t *th, *tf, *wh, *wf;

	init(&t, s, true, &th, &tf);
	init(&w, s, false, &wh, &wf);
	for (uint64_t a = F1 - 0x20; a < END + 0x20; a++) {
		uint64_t want = a < F1 ? 1 : a < F1 + 0x40 ? F1 : a < F2 ? 1 : a < F3 ? F2 :
				a < END ? F3 : 1, st = 0, sw = 0;
		bool ft = ms_ehframe_start(&t, a, &st), fw = ms_ehframe_start(&w, a, &sw);

		if ((ft ? st : 1) != want || (fw ? sw : 1) != want)
			fail_msg("0x%llx: table 0x%llx, walk 0x%llx, want 0x%llx",
				 (unsigned long long)a, (unsigned long long)(ft ? st : 1),
				 (unsigned long long)(fw ? sw : 1), (unsigned long long)want);
	}
	assert_true(w.walked);
	assert_int_equal(w.n_ranges, 3);
	done(&t, th, tf);
	done(&w, wh, wf);
}

static void test_function_start(void **state)
{
	struct secs s;

	(void)state;
	build(&s);
	assert_true(uses_table(&s));
	/* Every row of F1 (+0, +1, +5, +6, +8, past the restore) is F1's. */
	expect(&s, F1, F1);
	expect(&s, F1 + 3, F1);
	expect(&s, F1 + 6, F1);
	expect(&s, F1 + 0x3f, F1);
	expect(&s, F1 + 0x40, 1);
	expect(&s, 0, 1);
	expect(&s, UINT64_MAX, 1);
	expect_functions(&s);
}

static void test_encodings(void **state)
{
	static const uint8_t zplr[] = {
		DW_EH_PE_udata8, 1, 2, 3, 4, 5, 6, 7, 8,	/* P: personality */
		DW_EH_PE_absptr,				/* L */
		DW_EH_PE_udata8,				/* R */
	};
	static const uint8_t zrs[] = { DW_EH_PE_udata4 };
	static const uint8_t zr2[] = { DW_EH_PE_pcrel | DW_EH_PE_sdata2 };
	struct secs s;
	size_t a, b, c;

	(void)state;
	/* Absolute 8-byte addresses after a personality; CIEs of version 3, 4 (no augmentation). */
	begin(&s, 8);
	a = add_cie(&s, 1, "zPLR", zplr, sizeof(zplr));
	add_fde(&s, a, DW_EH_PE_udata8, true, F1, 0x40);
	b = add_cie(&s, 3, "zRSB", zrs, sizeof(zrs));
	add_fde(&s, b, DW_EH_PE_udata4, true, F2, 0x20);
	c = add_cie(&s, 4, "", NULL, 0);
	add_fde(&s, c, DW_EH_PE_absptr, false, F3, 0x10);
	finish(&s);
	assert_true(uses_table(&s));
	expect_functions(&s);

	/* 32-bit addresses, absolute; pc-relative 2-byte ones. */
	begin(&s, 4);
	a = add_cie(&s, 1, "", NULL, 0);
	add_fde(&s, a, DW_EH_PE_absptr, false, F1, 0x40);
	b = add_cie(&s, 1, "zR", zr2, sizeof(zr2));
	add_fde(&s, b, DW_EH_PE_pcrel | DW_EH_PE_sdata2, true, F2, 0x20);
	add_fde(&s, b, DW_EH_PE_pcrel | DW_EH_PE_sdata2, true, F3, 0x10);
	finish(&s);
	assert_true(uses_table(&s));
	expect_functions(&s);
}

static void test_shared_start(void **state)
{
	struct secs s;
	size_t cie;

	(void)state;
	/* An FDE of no size at F1 before F1's (the table may order them either way). */
	begin(&s, 8);
	cie = add_cie_zr(&s);
	add_fde(&s, cie, PCREL4, true, F1, 0x40);
	add_fde(&s, cie, PCREL4, true, F1, 0);
	add_fde(&s, cie, PCREL4, true, F2, 0x20);
	add_fde(&s, cie, PCREL4, true, F3, 0x10);
	finish(&s);
	expect(&s, F1, F1);
	expect(&s, F1 + 0x20, F1);
	expect(&s, F2 - 1, 1);
	expect(&s, F3, F3);
}

/* Headers the table is not taken from: the walk answers, the same. */
static void test_header_refused(void **state)
{
	struct secs s;
	struct ms_ehframe e;
	uint8_t swap[8];

	(void)state;
	build(&s);
	s.hdr[0] = 2;			/* version */
	assert_false(uses_table(&s));
	expect_functions(&s);
	build(&s);
	s.hdr[3] = DW_EH_PE_udata8;	/* another table encoding */
	assert_false(uses_table(&s));
	build(&s);
	s.hdr[2] = DW_EH_PE_omit;	/* no table (the linker could not sort one) */
	assert_false(uses_table(&s));
	build(&s);
	put(s.hdr + 8, 4, 4);		/* more entries than bytes */
	assert_false(uses_table(&s));
	build(&s);
	put(s.hdr + 8, UINT32_MAX, 4);
	assert_false(uses_table(&s));
	expect(&s, F2 + 1, F2);
	build(&s);
	put(s.hdr + 8, 0, 4);		/* no entries */
	assert_false(uses_table(&s));
	expect(&s, F3, F3);
	build(&s);
	put(s.hdr + 4, 0, 4);		/* .eh_frame is elsewhere */
	assert_false(uses_table(&s));
	expect(&s, F1 + 9, F1);
	build(&s);
	memcpy(swap, s.hdr + 12, 8);	/* out of order */
	memcpy(s.hdr + 12, s.hdr + 20, 8);
	memcpy(s.hdr + 20, swap, 8);
	assert_false(uses_table(&s));
	expect(&s, F1 + 9, F1);
	expect(&s, F2, F2);
	build(&s);
	s.hdr_len = 3;			/* cut */
	assert_false(uses_table(&s));
	expect(&s, F2, F2);
	/* No .eh_frame at all: nothing, either way. */
	ms_ehframe_init(&e, s.hdr, s.hdr_len, HDR_VADDR, NULL, 0, FRAME_VADDR, 8);
	assert_false(ms_ehframe_start(&e, F1, &(uint64_t){ 0 }));
	ms_ehframe_release(&e);
	/* An address size that is neither 4 nor 8. */
	ms_ehframe_init(&e, s.hdr, s.hdr_len, HDR_VADDR, s.frame, s.frame_len, FRAME_VADDR, 2);
	assert_false(ms_ehframe_start(&e, F1, &(uint64_t){ 0 }));
	ms_ehframe_release(&e);
}

/* Malformed entries cover nothing, by the table and by the walk. */
static void test_entries_refused(void **state)
{
	struct secs s;

	(void)state;
	/* Augmentations whose data's size is unknown: the CIE's FDEs are none. */
	build(&s);
	s.frame[s.cie + 9] = 'e';		/* "eR" */
	expect(&s, F1, 1);
	expect(&s, F3, 1);
	build(&s);
	s.frame[s.cie + 10] = 'Q';		/* "zQ" */
	expect(&s, F2, 1);
	build(&s);
	s.frame[s.cie + 8] = 2;			/* CIE version */
	expect(&s, F2, 1);
	build(&s);
	s.frame[s.cie + 16] = DW_EH_PE_pcrel | DW_EH_PE_uleb128;
	expect(&s, F1, 1);
	build(&s);
	s.frame[s.cie + 16] = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	expect(&s, F1, 1);
	build(&s);
	s.frame[s.cie + 15] = 30;		/* augmentation data past the CIE */
	expect(&s, F1, 1);

	/* CIE pointers: to the FDE itself (a CIE id), inside the FDE, before the section. */
	build(&s);
	put(s.frame + s.fde[1] + 4, 0, 4);
	expect(&s, F2, 1);
	expect(&s, F1, F1);
	expect(&s, F3, F3);
	build(&s);
	put(s.frame + s.fde[1] + 4, 4, 4);
	expect(&s, F2, 1);
	expect(&s, F3, F3);
	build(&s);
	put(s.frame + s.fde[1] + 4, 5000, 4);
	expect(&s, F2 + 1, 1);
	expect(&s, F3, F3);
	build(&s);
	put(s.frame + s.fde[1] + 4, (uint32_t)(s.fde[1] + 4 - s.fde[0]), 4);	/* to an FDE */
	expect(&s, F2, 1);

	/* Lengths: the CIE's past the section; an FDE's past it (the walk stops there). */
	build(&s);
	put(s.frame, 1000, 4);
	expect(&s, F1, 1);
	build(&s);
	put(s.frame + s.fde[2], 1000, 4);
	expect(&s, F3, 1);
	expect(&s, F2 + 4, F2);
	build(&s);
	put(s.frame + s.fde[1], 0xffffffff, 4);	/* 64-bit DWARF's */
	expect(&s, F2, 1);
	assert_int_equal(answer(&s, true, F1), F1);
	build(&s);
	put(s.frame + s.fde[1], 2, 4);		/* shorter than its CIE pointer */
	expect(&s, F2, 1);
	build(&s);
	put(s.frame + s.fde[1], 9, 4);		/* ends inside the initial location */
	expect(&s, F2, 1);
	build(&s);
	s.frame_len = s.fde[2] + 10;		/* the section ends inside the FDE */
	expect(&s, F3, 1);
	expect(&s, F2, F2);

	/* An FDE that covers nothing, one whose range wraps. */
	build(&s);
	put(s.frame + s.fde[0] + 12, 0, 4);
	expect(&s, F1, 1);
	expect(&s, F2, F2);
	build(&s);
	put(s.frame + s.fde[2] + 8, (uint64_t)-(int64_t)(FRAME_VADDR + s.fde[2] + 8) - 4, 4);
	put(s.frame + s.fde[2] + 12, 0x7fffffff, 4);
	expect(&s, UINT64_MAX - 1, 1);
	expect(&s, F3, 1);

	/* The table alone: an FDE address outside .eh_frame, a start above the FDE's. */
	build(&s);
	put(s.hdr + 24, (uint64_t)-(int64_t)HDR_VADDR - 8, 4);
	assert_int_equal(answer(&s, true, F2), 1);
	build(&s);
	put(s.hdr + 24, FRAME_VADDR + 100000 - HDR_VADDR, 4);
	assert_int_equal(answer(&s, true, F2), 1);
	build(&s);
	put(s.hdr + 24, FRAME_VADDR + s.fde[0] - HDR_VADDR, 4);	/* F2's entry is F1's FDE */
	assert_int_equal(answer(&s, true, F2), 1);
	build(&s);
	put(s.hdr + 12, F1 - 0x10 - HDR_VADDR, 4);
	assert_int_equal(answer(&s, true, F1 - 8), 1);
	assert_int_equal(answer(&s, true, F1 + 8), F1);
}

/*
 * This test's own binary: every address of each of its sized functions
 * that an FDE covers has the function's symbol as its start, by the
 * table and by the walk alike (their CFI has rows at every push and pop).
 */
static void test_own_binary(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	struct ms_ehframe t, w;
	uint32_t funcs = 0, covered = 0;

	(void)state;
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	ms_ehframe_elf(&t, elf);
	assert_non_null(t.table);
	ms_ehframe_init(&w, NULL, 0, 0, t.frame, t.frame_size, t.frame_vaddr, t.addr_size);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; gelf_getsym(d, (int)i, &sym); i++) {
			uint64_t st, sw;
			bool ft, fw;

			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || !sym.st_value)
				continue;
			funcs++;
			ft = ms_ehframe_start(&t, sym.st_value, &st);
			covered += ft;
			for (uint64_t a = sym.st_value; a < sym.st_value + sym.st_size; a++) {
				ft = ms_ehframe_start(&t, a, &st);
				fw = ms_ehframe_start(&w, a, &sw);
				if (ft != fw || (ft && (st != sym.st_value || sw != st)))
					fail_msg("0x%llx in the function at 0x%llx: table %d "
						 "0x%llx, walk %d 0x%llx", (unsigned long long)a,
						 (unsigned long long)sym.st_value, ft,
						 (unsigned long long)st, fw,
						 (unsigned long long)sw);
			}
		}
	}
	assert_true(funcs > 15);
	assert_true(covered > funcs / 2);
	ms_ehframe_release(&t);
	ms_ehframe_release(&w);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_start),
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_shared_start),
		cmocka_unit_test(test_header_refused),
		cmocka_unit_test(test_entries_refused),
		cmocka_unit_test(test_own_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
