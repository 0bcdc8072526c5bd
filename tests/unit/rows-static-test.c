/*
 * What the statically linked ms-unwind does with a JIT function's rows,
 * linked without Zydis (libcommon/jit/local.mk leaves it out): decode a
 * table written out byte by byte, which pins the encoding's version 1,
 * find the row of a return address and step by its rule. The link fails
 * if rows.c comes to need the prover.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "dwarf/step.h"
#include "jit/rows.h"
#include "util/error.h"

/* CPython 3.12's perf trampoline: sub rsp, 8 (0); call rcx (4); add rsp, 8 (6); ret (10). */
static const uint8_t trampoline_rows[] = {
	1, MS_PROVE_NOT_REACHED_RET, 3, 0, 11, 0, 0, 0,	/* version, why, rows, stop */
	0, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 0,		/* 0: %rsp + 8 */
	4, 0, 0, 0, 16, 0, 0, 0, 7, 0, 0, 0, 0,		/* 4: %rsp + 16 */
	10, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 0,		/* 10: %rsp + 8 */
};

/* push rbp (0); mov rbp, rsp (1), ...: rows to the first jump at 4 + 6 bytes. */
static const uint8_t frame_rows[] = {
	1, MS_PROVE_NOT_REACHED_JUMP, 3, 0, 10, 0, 0, 0,
	0, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 0,
	1, 0, 0, 0, 16, 0, 0, 0, 7, 0x40, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff, /* rbp at CFA - 16 */
	4, 0, 0, 0, 16, 0, 0, 0, 6, 0x40, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff, /* CFA %rbp + 16 */
};

static struct ms_prove_rows table;

static void test_trampoline(void **state)
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
	uint8_t again[MS_ROWS_ENCODED_MAX];

	(void)state;
	assert_int_equal(ms_rows_decode(trampoline_rows, sizeof(trampoline_rows), &table,
					"the trampoline's rows"), 0);
	assert_int_equal(ms_rows_encode(&table, again, sizeof(again)), sizeof(trampoline_rows));
	assert_memory_equal(again, trampoline_rows, sizeof(trampoline_rows));
	/* the call's return address */
	row = ms_rows_find(table.row, table.n, table.stop, 6);
	assert_ptr_equal(row, &table.row[1]);
	assert_null(ms_rows_find(table.row, table.n, table.stop, 11));
	ms_rows_rule(row, &rule);
	rs.val[MS_DW_RSP] = sp;
	rs.known = 1u << MS_DW_RSP;
	assert_true(ms_dwarf_step(&rs, &st.reader, &rule, NULL, sp, &cfa, &end));
	assert_int_equal(cfa, sp + 16);
	assert_int_equal(rs.val[MS_DW_RA], 0x2222);
}

static void test_frame_pointer(void **state)
{
	struct ms_cfi_rule rule;
	uint8_t again[MS_ROWS_ENCODED_MAX];

	(void)state;
	assert_int_equal(ms_rows_decode(frame_rows, sizeof(frame_rows), &table, "a frame's rows"), 0);
	assert_int_equal(ms_rows_encode(&table, again, sizeof(again)), sizeof(frame_rows));
	assert_memory_equal(again, frame_rows, sizeof(frame_rows));
	assert_int_equal(table.row[2].save_off[ms_prove_save_slot(MS_DW_RBP)], -16);
	ms_rows_rule(ms_rows_find(table.row, table.n, table.stop, 9), &rule);
	assert_true(rule.flags & MS_CFI_FRAME_POINTER);
	ms_rows_rule(ms_rows_find(table.row, table.n, table.stop, 1), &rule);
	assert_false(rule.flags & MS_CFI_FRAME_POINTER);
	assert_int_equal(rule.cfa_reg, MS_DW_RSP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_frame_pointer),
	};

	ms_set_progname("rows-static-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
