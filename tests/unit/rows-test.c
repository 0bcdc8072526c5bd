/*
 * The rows of a JIT function proved once (libcommon/jit/rows.h): at every
 * pc they say what ms_prove() says, their rules are ms_proved_rule()'s,
 * and their encoding goes back to the same table while refusing every
 * malformed one. The code is hand-assembled, the assembly beside it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dwarf/step.h"
#include "jit/prove.h"
#include "jit/rows.h"
#include "tests/unit/jit-code.h"
#include "util/error.h"

#define ENTRY 0x7f1234560000ull
#define RBX_BIT (1u << MS_DW_RBX)
#define RBP_BIT (1u << MS_DW_RBP)

static struct ms_prover *prover;
static struct ms_prove_rows table, again;
static uint8_t enc[MS_ROWS_ENCODED_MAX + 16];

static int setup(void **state)
{
	(void)state;
	prover = ms_prover_new();
	return prover ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ms_prover_free(prover);
	return 0;
}

static void expect_rule_equal(const struct ms_cfi_rule *a, const struct ms_cfi_rule *b,
			      uint64_t off)
{
	if (a->cfa_kind != b->cfa_kind || a->cfa_reg != b->cfa_reg || a->flags != b->flags ||
	    a->n != b->n || a->cfa_len != b->cfa_len || a->fast != b->fast ||
	    a->cfa_arg != b->cfa_arg || a->undef != b->undef || a->saved != b->saved ||
	    a->valued != b->valued || a->ra_off != b->ra_off || a->clear != b->clear ||
	    a->set_known != b->set_known || a->set_saved != b->set_saved)
		fail_msg("offset %llu: the row's rule is not the proof's", (unsigned long long)off);
	for (unsigned i = 0; i < a->n; i++)
		if (a->regs[i].reg != b->regs[i].reg || a->regs[i].kind != b->regs[i].kind ||
		    a->regs[i].len != b->regs[i].len || a->regs[i].arg != b->regs[i].arg)
			fail_msg("offset %llu: register rule %u differs", (unsigned long long)off, i);
}

/*
 * The rows of code[0, len), checked against ms_prove() at every pc from
 * the entry to 16 past the end: a proved boundary is covered by a row
 * with its frame and its rule; a mid-instruction pc by the row of the
 * boundary before it; any other pc is at or past stop, not covered, and
 * fails for the table's reason. Then the table goes through its encoding
 * and back unchanged.
 */
static void rows_agree(const uint8_t *code, size_t len)
{
	const struct ms_prove_row *last = NULL;
	enum ms_prove_result why = ms_prove_rows(prover, code, len, &table);
	size_t size;

	assert_int_equal(why, table.why);
	assert_true(table.n <= MS_PROVE_ROWS_MAX);
	assert_true(table.stop <= len);
	for (uint32_t i = 1; i < table.n; i++) {
		assert_true(table.row[i - 1].offset < table.row[i].offset);
		assert_false(ms_prove_row_same(&table.row[i - 1], &table.row[i]));
	}
	for (uint64_t off = 0; off < len + 16; off++) {
		struct ms_proved_frame f;
		struct ms_prove_row want;
		struct ms_cfi_rule rf, rr;
		enum ms_prove_result r = ms_prove(prover, code, len, ENTRY, ENTRY + off, &f);
		const struct ms_prove_row *row = ms_rows_find(table.row, table.n, table.stop, off);

		if (off >= table.stop && table.why == MS_PROVE_TOO_MANY_ROWS) {
			/* past the rows a table holds: proved or not, not covered */
			assert_null(row);
		} else if (r == MS_PROVE_OK) {
			if (!row)
				fail_msg("offset %llu is proved, yet no row covers it (stop %u)",
					 (unsigned long long)off, table.stop);
			ms_prove_row_of(&f, row->offset, &want);
			if (!ms_prove_row_same(row, &want))
				fail_msg("offset %llu: the row at %u is not the proof's frame",
					 (unsigned long long)off, row->offset);
			ms_proved_rule(&f, &rf);
			ms_rows_rule(row, &rr);
			expect_rule_equal(&rf, &rr, off);
			last = row;
		} else if (r == MS_PROVE_MID_INSN) {
			if (!row || row != last)
				fail_msg("offset %llu is inside an instruction, not covered by the "
					 "row of its boundary", (unsigned long long)off);
		} else {
			if (off < table.stop || row)
				fail_msg("offset %llu fails (%s), yet it is below the stop %u",
					 (unsigned long long)off, ms_prove_result_name(r), table.stop);
			if (off < len && r != table.why)
				fail_msg("offset %llu fails with %s, the rows stop with %s",
					 (unsigned long long)off, ms_prove_result_name(r),
					 ms_prove_result_name(table.why));
		}
	}
	size = ms_rows_encode(&table, enc, sizeof(enc));
	assert_true(size >= MS_ROWS_HEADER && size <= MS_ROWS_ENCODED_MAX);
	memset(&again, 0xa5, sizeof(again));
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test"), 0);
	assert_int_equal(again.n, table.n);
	assert_int_equal(again.stop, table.stop);
	assert_int_equal(again.why, table.why);
	assert_memory_equal(again.row, table.row, table.n * sizeof(table.row[0]));
}

static void expect_row(uint32_t i, uint32_t offset, uint8_t reg, int32_t cfa, uint32_t saved,
		       uint32_t lost)
{
	const struct ms_prove_row *row = &table.row[i];

	assert_true(i < table.n);
	assert_int_equal(row->offset, offset);
	assert_int_equal(row->cfa_reg, reg);
	assert_int_equal(row->cfa_off, cfa);
	assert_int_equal(row->saved, saved);
	assert_int_equal(row->lost, lost);
}


static void test_trampoline(void **state)
{
	(void)state;
	rows_agree(trampoline, sizeof(trampoline));
	assert_int_equal(table.n, 3);
	expect_row(0, 0, MS_DW_RSP, 8, 0, 0);
	expect_row(1, 4, MS_DW_RSP, 16, 0, 0);	/* the call's return address (6) too */
	expect_row(2, 10, MS_DW_RSP, 8, 0, 0);
	assert_int_equal(table.stop, 11);
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_RET);
	/* header and three rows without saves */
	assert_int_equal(ms_rows_encode(&table, enc, sizeof(enc)), 8 + 3 * 13);
	/* the map's function ends at the ret */
	rows_agree(trampoline, 11);
	assert_int_equal(table.stop, 11);
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_RET);
}

/* One step by the row at the trampoline's return address reaches its caller. */
static void test_trampoline_step(void **state)
{
	uint64_t stack[4] = { 0x1111, 0x2222 /* rsp + 8: the caller's pc */, 0x3333, 0x4444 };
	const uint64_t sp = 0x7ffc00001000ull;
	struct ms_sampled_state st = {
		.reader = { ms_sampled_read }, .start = sp, .len = sizeof(stack),
		.bytes = (const uint8_t *)stack,
	};
	struct ms_regstate rs = { 0 };
	struct ms_cfi_rule rule;
	uint64_t cfa = 0;
	uint32_t end = MS_END_UNKNOWN;
	const struct ms_prove_row *row;

	(void)state;
	ms_prove_rows(prover, trampoline, sizeof(trampoline), &table);
	row = ms_rows_find(table.row, table.n, table.stop, 6);
	assert_non_null(row);
	ms_rows_rule(row, &rule);
	rs.val[MS_DW_RSP] = sp;
	rs.val[MS_DW_RBX] = 0xb0b0;
	rs.known = 1u << MS_DW_RSP | RBX_BIT;
	assert_true(ms_dwarf_step(&rs, &st.reader, &rule, NULL, sp, &cfa, &end));
	assert_int_equal(cfa, sp + 16);
	assert_int_equal(rs.val[MS_DW_RA], 0x2222);
	assert_int_equal(rs.val[MS_DW_RBX], 0xb0b0);
}


static void test_classic(void **state)
{
	(void)state;
	rows_agree(classic, sizeof(classic));
	assert_int_equal(table.n, 6);
	expect_row(0, 0, MS_DW_RSP, 8, 0, 0);
	expect_row(1, 1, MS_DW_RSP, 16, RBP_BIT, 0);
	expect_row(2, 4, MS_DW_RBP, 16, RBP_BIT, 0);
	/* sub rsp and the call change no row: the CFA is %rbp's */
	expect_row(3, 5, MS_DW_RBP, 16, RBP_BIT | RBX_BIT, 0);
	expect_row(4, 22, MS_DW_RBP, 16, RBP_BIT, 0);
	expect_row(5, 23, MS_DW_RSP, 8, 0, 0);
	assert_int_equal(table.row[3].save_off[ms_prove_save_slot(MS_DW_RBP)], -16);
	assert_int_equal(table.row[3].save_off[ms_prove_save_slot(MS_DW_RBX)], -24);
	assert_int_equal(table.row[3].save_off[ms_prove_save_slot(12)], 0);
	assert_int_equal(table.stop, 24);
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_RET);
}

/* node/V8: a frame pointer, then the context and the function pushed. */
static const uint8_t v8[] = {
	0x55,				/* 0: push rbp */
	0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
	0x56,				/* 4: push rsi */
	0x57,				/* 5: push rdi */
	0x50,				/* 6: push rax */
	0x48, 0x83, 0xec, 0x08,		/* 7: sub rsp, 8 */
	0x48, 0x8b, 0x45, 0xe8,		/* 11: mov rax, [rbp - 24] */
	0x41, 0xff, 0xd2,		/* 15: call r10 */
	0x48, 0x89, 0xec,		/* 18: mov rsp, rbp */
	0x5d,				/* 21: pop rbp */
	0xc2, 0x10, 0x00,		/* 22: ret 16 */
};

static void test_v8(void **state)
{
	(void)state;
	rows_agree(v8, sizeof(v8));
	assert_int_equal(table.n, 4);
	expect_row(0, 0, MS_DW_RSP, 8, 0, 0);
	expect_row(1, 1, MS_DW_RSP, 16, RBP_BIT, 0);
	expect_row(2, 4, MS_DW_RBP, 16, RBP_BIT, 0);
	expect_row(3, 22, MS_DW_RSP, 8, 0, 0);
	/* ret 16 is 3 bytes: the last row covers it, then nothing */
	assert_int_equal(table.stop, 25);
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_RET);
	assert_null(ms_rows_find(table.row, table.n, table.stop, 25));
}

/* The proofs stop past a jump; the bytes after it are not covered. */
static void test_jump(void **state)
{
	static const uint8_t code[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x48, 0x85, 0xff,		/* 4: test rdi, rdi */
		0x0f, 0x84, 0x10, 0x00, 0x00, 0x00, /* 7: je +16 */
		0x53,				/* 13: push rbx */
		0x5b,				/* 14: pop rbx */
		0x5d,				/* 15: pop rbp */
		0xc3,				/* 16: ret */
	};
	static const uint8_t loose[] = {
		0x53,				/* 0: push rbx */
		0x31, 0xdb,			/* 1: xor ebx, ebx */
		0x58,				/* 3: pop rax (rbx's slot freed, rbx not the caller's) */
		0x41, 0xff, 0xe3,		/* 4: jmp r11 */
	};

	(void)state;
	rows_agree(code, sizeof(code));
	assert_int_equal(table.n, 3);
	expect_row(2, 4, MS_DW_RBP, 16, RBP_BIT, 0);
	/* the je's 6 bytes are covered, its mid-instruction pcs too */
	assert_int_equal(table.stop, 13);
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_JUMP);
	assert_ptr_equal(ms_rows_find(table.row, table.n, table.stop, 12), &table.row[2]);
	assert_null(ms_rows_find(table.row, table.n, table.stop, 13));

	rows_agree(loose, sizeof(loose));
	assert_int_equal(table.n, 3);
	expect_row(1, 1, MS_DW_RSP, 16, RBX_BIT, 0);
	expect_row(2, 4, MS_DW_RSP, 8, 0, RBX_BIT);
	assert_int_equal(table.stop, sizeof(loose));
	assert_int_equal(table.why, MS_PROVE_NOT_REACHED_JUMP);
}

/* Code that ends mid-instruction, or with bytes that do not decode. */
static void test_cut_and_undecodable(void **state)
{
	static const uint8_t cut[] = {
		0x55,		/* 0: push rbp */
		0x90,		/* 1: nop */
		0x48, 0x83,	/* 2: sub rsp, ... cut by the end of the bytes */
	};
	static const uint8_t bad[] = {
		0x55,		/* 0: push rbp */
		0x06,		/* 1: (push es: invalid in 64-bit mode) */
		0x90,		/* 2: nop */
	};
	static const uint8_t falls_off[] = {
		0x55,		/* 0: push rbp */
		0x90,		/* 1: nop */
	};

	(void)state;
	rows_agree(cut, sizeof(cut));
	assert_int_equal(table.n, 2);
	expect_row(1, 1, MS_DW_RSP, 16, RBP_BIT, 0);
	/* the cut instruction's own pc is proved, nothing inside it */
	assert_int_equal(table.stop, 3);
	assert_int_equal(table.why, MS_PROVE_CUT);

	rows_agree(bad, sizeof(bad));
	assert_int_equal(table.n, 2);
	assert_int_equal(table.stop, 2);
	assert_int_equal(table.why, MS_PROVE_UNDECODABLE);

	rows_agree(falls_off, sizeof(falls_off));
	assert_int_equal(table.n, 2);
	assert_int_equal(table.stop, 2);
	assert_int_equal(table.why, MS_PROVE_OUT_OF_BOUNDS);

	rows_agree(trampoline, 0);
	assert_int_equal(table.n, 0);
	assert_int_equal(table.stop, 0);
	assert_int_equal(table.why, MS_PROVE_OUT_OF_BOUNDS);
	assert_null(ms_rows_find(table.row, table.n, table.stop, 0));
}

/* Unmodelled writes: the proofs stop past the instruction. */
static void test_writes(void **state)
{
	static const uint8_t realign[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x48, 0x83, 0xe4, 0xf0,		/* 4: and rsp, -16 */
		0x90,				/* 8: nop */
	};
	static const uint8_t write_ra[] = {
		0x48, 0x89, 0x04, 0x24,		/* 0: mov [rsp], rax */
		0x90,				/* 4: nop */
	};

	(void)state;
	rows_agree(realign, sizeof(realign));
	assert_int_equal(table.stop, 8);
	assert_int_equal(table.why, MS_PROVE_WRITES_RSP);
	rows_agree(write_ra, sizeof(write_ra));
	assert_int_equal(table.n, 1);
	assert_int_equal(table.stop, 4);
	assert_int_equal(table.why, MS_PROVE_WRITES_RA);
}

/* Bounds: the instructions a proof follows, and the rows a table holds. */
static void test_bounds(void **state)
{
	static uint8_t code[MS_PROVE_MAX_INSNS + 8];
	uint32_t full;

	static const uint8_t deep[] = {
		0x48, 0x81, 0xec, 0x00, 0x00, 0x60, 0x00,	/* 0: sub rsp, 0x600000 */
		0x53,						/* 7: push rbx */
		0x90,						/* 8: nop */
	};

	(void)state;
	/* offsets past 16 bits go through the encoding whole */
	rows_agree(deep, sizeof(deep));
	assert_int_equal(table.n, 3);
	expect_row(2, 8, MS_DW_RSP, 0x600010, RBX_BIT, 0);
	assert_int_equal(table.row[2].save_off[0], -0x600010);

	memset(code, 0x90, sizeof(code));
	rows_agree(code, sizeof(code));
	assert_int_equal(table.n, 1);
	assert_int_equal(table.stop, MS_PROVE_MAX_INSNS + 1);
	assert_int_equal(table.why, MS_PROVE_TOO_LONG);

	/* push rax; pop rax; ...: a new row at each instruction */
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = i % 2 ? 0x58 : 0x50;
	rows_agree(code, 200);
	assert_int_equal(table.n, MS_PROVE_ROWS_MAX);
	assert_int_equal(table.why, MS_PROVE_TOO_MANY_ROWS);
	full = table.stop;
	/* the first boundary left out is the 65th row's, which ms_prove() proves */
	assert_int_equal(full, MS_PROVE_ROWS_MAX);
	assert_int_equal(table.row[MS_PROVE_ROWS_MAX - 1].offset, full - 1);
	/* past a full table, mid-instruction pcs are not covered either */
	code[158] = 0x00;	/* add al, ch */
	code[159] = 0xe8;
	rows_agree(code, 170);
	assert_int_equal(table.why, MS_PROVE_TOO_MANY_ROWS);
	assert_null(ms_rows_find(table.row, table.n, table.stop, 159));
	/* one row fewer: all fit */
	rows_agree(code, MS_PROVE_ROWS_MAX);
	assert_int_equal(table.n, MS_PROVE_ROWS_MAX);
	assert_int_equal(table.why, MS_PROVE_OUT_OF_BOUNDS);
}

static void test_find(void **state)
{
	(void)state;
	ms_prove_rows(prover, classic, sizeof(classic), &table);
	for (uint64_t off = 0; off < 40; off++) {
		const struct ms_prove_row *want = NULL;

		for (uint32_t i = 0; i < table.n && off < table.stop; i++)
			if (table.row[i].offset <= off)
				want = &table.row[i];
		assert_ptr_equal(ms_rows_find(table.row, table.n, table.stop, off), want);
	}
	assert_null(ms_rows_find(table.row, table.n, table.stop, UINT64_MAX));
	assert_null(ms_rows_find(table.row, table.n, table.stop, 1ull << 32));
	assert_ptr_equal(ms_rows_find(table.row, 1, table.stop, 23), &table.row[0]);
}

/* A rule per row kind: saves listed in register order, lost ones undefined. */
static void test_rule(void **state)
{
	struct ms_prove_row row = {
		.cfa_reg = MS_DW_RSP, .cfa_off = 32, .saved = RBX_BIT | 1u << 14,
		.lost = 1u << 12,
	};
	struct ms_cfi_rule r;

	(void)state;
	row.save_off[ms_prove_save_slot(MS_DW_RBX)] = -24;
	row.save_off[ms_prove_save_slot(14)] = -16;
	ms_rows_rule(&row, &r);
	assert_int_equal(r.cfa_kind, MS_CFA_REG);
	assert_int_equal(r.cfa_reg, MS_DW_RSP);
	assert_int_equal(r.cfa_arg, 32);
	assert_true(r.flags & MS_CFI_SIMPLE);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.regs[0].reg, MS_DW_RBX);
	assert_int_equal(r.regs[0].arg, -24);
	assert_int_equal(r.regs[1].reg, MS_DW_RSP);
	assert_int_equal(r.regs[1].kind, MS_REG_VAL_OFFSET);
	assert_int_equal(r.regs[2].reg, 14);
	assert_int_equal(r.regs[2].arg, -16);
	assert_int_equal(r.regs[3].reg, MS_DW_RA);
	assert_int_equal(r.regs[3].arg, MS_PROVE_RA_OFF);
	assert_true(r.undef & (1u << 12));
	assert_true(r.undef & (1u << MS_DW_RAX));
	assert_false(r.undef & (RBX_BIT | RBP_BIT | 1u << 13));
	for (unsigned reg = 0; reg < MS_DWARF_REGS; reg++)
		assert_int_equal(ms_prove_save_slot(reg) >= 0,
				 !!(MS_PROVE_CALLEE_SAVED & (1u << reg)));
}

/* Decoding the classic table changed by mutate must fail. */
static void refused(void (*mutate)(struct ms_prove_rows *t), const char *what)
{
	size_t size;

	ms_prove_rows(prover, classic, sizeof(classic), &table);
	mutate(&table);
	size = ms_rows_encode(&table, enc, sizeof(enc));
	assert_true(size > 0);
	if (ms_rows_decode(enc, size, &again, what) == 0)
		fail_msg("a table with %s was accepted", what);
}

static void bad_first_offset(struct ms_prove_rows *t) { t->row[0].offset = 1; }
static void bad_equal_offsets(struct ms_prove_rows *t) { t->row[2].offset = t->row[1].offset; }
static void bad_decreasing(struct ms_prove_rows *t) { t->row[3].offset = 2; }
static void bad_past_stop(struct ms_prove_rows *t) { t->stop = t->row[5].offset; }
static void bad_stop_max(struct ms_prove_rows *t) { t->stop = MS_PROVE_STOP_MAX + 1; }
static void bad_cfa_reg(struct ms_prove_rows *t) { t->row[1].cfa_reg = MS_DW_RBX; }
static void bad_cfa_zero(struct ms_prove_rows *t) { t->row[1].cfa_off = 0; }
static void bad_cfa_negative(struct ms_prove_rows *t) { t->row[1].cfa_off = -16; }
static void bad_cfa_odd(struct ms_prove_rows *t) { t->row[1].cfa_off = 12; }
static void bad_cfa_deep(struct ms_prove_rows *t) { t->row[1].cfa_off = MS_PROVE_MAX_DEPTH + 8; }
static void bad_saved_rax(struct ms_prove_rows *t) { t->row[1].saved |= 1u << MS_DW_RAX; }
static void bad_lost_rsp(struct ms_prove_rows *t) { t->row[1].lost |= 1u << MS_DW_RSP; }
static void bad_saved_lost(struct ms_prove_rows *t) { t->row[1].lost = RBP_BIT; }
static void bad_save_ra(struct ms_prove_rows *t) { t->row[1].save_off[1] = -8; }
static void bad_save_odd(struct ms_prove_rows *t) { t->row[3].save_off[0] = -20; }
static void bad_save_above(struct ms_prove_rows *t) { t->row[3].save_off[0] = 8; }
static void bad_save_below_sp(struct ms_prove_rows *t) { t->row[1].save_off[1] = -24; }
static void bad_save_deep(struct ms_prove_rows *t) { t->row[3].save_off[0] = -MS_PROVE_MAX_DEPTH - 8; }
static void bad_repeat(struct ms_prove_rows *t)
{
	uint32_t off = t->row[4].offset;

	t->row[4] = t->row[3];
	t->row[4].offset = off;
}
static void bad_why_ok(struct ms_prove_rows *t) { t->why = MS_PROVE_OK; }
static void bad_why_mid(struct ms_prove_rows *t) { t->why = MS_PROVE_MID_INSN; }
static void bad_why_past(struct ms_prove_rows *t) { t->why = MS_PROVE_RESULTS; }
static void bad_why_full(struct ms_prove_rows *t) { t->why = MS_PROVE_TOO_MANY_ROWS; }
static void bad_none_stop(struct ms_prove_rows *t) { t->n = 0; }
static void bad_none_why(struct ms_prove_rows *t) { t->n = 0; t->stop = 0; }
static void bad_rows_no_stop(struct ms_prove_rows *t) { t->stop = 0; }

static void test_decode_refuses(void **state)
{
	size_t size;

	(void)state;
	refused(bad_first_offset, "a first row not at the entry");
	refused(bad_equal_offsets, "two rows at one offset");
	refused(bad_decreasing, "offsets going down");
	refused(bad_past_stop, "a row at the stop");
	refused(bad_stop_max, "a stop past the bound");
	refused(bad_cfa_reg, "the CFA by %rbx");
	refused(bad_cfa_zero, "the CFA at %rsp + 0");
	refused(bad_cfa_negative, "the CFA below %rsp");
	refused(bad_cfa_odd, "the CFA at %rsp + 12");
	refused(bad_cfa_deep, "the CFA too deep");
	refused(bad_saved_rax, "%rax saved");
	refused(bad_lost_rsp, "%rsp lost");
	refused(bad_saved_lost, "%rbp saved and lost");
	refused(bad_save_ra, "%rbp saved over the return address");
	refused(bad_save_odd, "%rbx saved at CFA - 20");
	refused(bad_save_above, "%rbx saved above the CFA");
	refused(bad_save_below_sp, "%rbp saved below %rsp");
	refused(bad_save_deep, "%rbx saved too deep");
	refused(bad_repeat, "a row repeating the one before");
	refused(bad_why_ok, "a stop for no reason");
	refused(bad_why_mid, "a stop mid-instruction");
	refused(bad_why_past, "a reason past the enum");
	refused(bad_why_full, "too many rows that are not");
	refused(bad_none_stop, "no rows covering offsets");
	refused(bad_none_why, "no rows stopping at a return");
	refused(bad_rows_no_stop, "rows covering nothing");

	/* Byte-level: the header, the count, every cut and a trailing byte. */
	ms_prove_rows(prover, classic, sizeof(classic), &table);
	size = ms_rows_encode(&table, enc, sizeof(enc));
	assert_int_equal(size, 8 + 6 * 13 + 5 * 4);
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test"), 0);
	for (size_t cut = 0; cut < size; cut++)
		assert_int_equal(ms_rows_decode(enc, cut, &again, "rows-test cut"), -1);
	enc[size] = 0;
	assert_int_equal(ms_rows_decode(enc, size + 1, &again, "rows-test trailing"), -1);
	enc[0] = MS_ROWS_VERSION + 1;
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test version"), -1);
	enc[0] = 0;
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test version 0"), -1);
	enc[0] = MS_ROWS_VERSION;
	enc[2] = MS_PROVE_ROWS_MAX + 1;
	enc[3] = 0;
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test count"), -1);
	enc[2] = 0xff;
	enc[3] = 0xff;
	assert_int_equal(ms_rows_decode(enc, size, &again, "rows-test count"), -1);
	/* more rows than the encoder writes, or than the buffer holds */
	table.n = MS_PROVE_ROWS_MAX + 1;
	assert_int_equal(ms_rows_encode(&table, enc, sizeof(enc)), 0);
	table.n = 6;
	assert_int_equal(ms_rows_encode(&table, enc, size - 1), 0);
	assert_int_equal(ms_rows_encode(&table, enc, size), size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_trampoline_step),
		cmocka_unit_test(test_classic),
		cmocka_unit_test(test_v8),
		cmocka_unit_test(test_jump),
		cmocka_unit_test(test_cut_and_undecodable),
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_decode_refuses),
	};

	ms_set_progname("rows-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}
