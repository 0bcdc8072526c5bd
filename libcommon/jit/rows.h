/*
 * The frames of a JIT function proved once, as a table of rows.
 *
 * ms-collect reads a JIT function's code and proves it once
 * (ms_prove_rows(), one pass with the Zydis decoder); the stream carries
 * the table encoded (ms_rows_encode()), and ms-unwind, linked statically
 * without Zydis, decodes it (ms_rows_decode()), finds the row of a pc
 * (ms_rows_find()) and steps by its rule (ms_rows_rule()) with
 * libcommon/dwarf. Only rowsprove.c needs Zydis: rows.c, which has the
 * rest, calls nothing of prove.c.
 *
 * Row i covers the pc offsets [row[i].offset, row[i + 1].offset) from the
 * entry, the last up to stop, with the frame ms_prove() proves at each
 * instruction boundary there: a new row starts only where that frame
 * changes (its CFA, saves or lost registers; %rsp's own depth under a
 * frame pointer is not kept, as the rule does not use it). Past stop,
 * ms_prove() fails (why says why) and no row covers the pc.
 *
 * Mid-instruction pcs: rows are ranges of bytes, as .eh_frame's are, so a
 * pc inside an instruction gets the row of the instruction's boundary,
 * where ms_prove() says MS_PROVE_MID_INSN. Callers ask at sampled ips and
 * at return addresses, which are boundaries (a return address is the
 * boundary after its call); a bogus return address read from a corrupt
 * stack gets a rule that may be wrong, as it would from a module's CFI.
 *
 * Bounded: at most MS_PROVE_ROWS_MAX rows (a function whose frame changes
 * more often before its proofs stop has its table cut: why is
 * MS_PROVE_TOO_MANY_ROWS and its stop the first boundary left out), an
 * encoding of at most MS_ROWS_ENCODED_MAX bytes. Decoding takes hostile
 * bytes: every field is checked.
 */
#ifndef MS_JIT_ROWS_H
#define MS_JIT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf/cfi.h"
#include "jit/prove.h"

/* Real prologues change the frame 2-8 times before their first jump. */
#define MS_PROVE_ROWS_MAX 64
/* %rbx, %rbp, %r12-%r15: the registers a callee keeps for its caller. */
#define MS_PROVE_CALLEE_SAVED ((1u << MS_DW_RBX) | (1u << MS_DW_RBP) | (0xfu << 12))
#define MS_PROVE_SAVE_REGS 6
/* Past the last boundary a walk reaches (MS_PROVE_MAX_INSNS of 15 bytes) and its instruction. */
#define MS_PROVE_STOP_MAX ((MS_PROVE_MAX_INSNS + 1) * 15)
/* The encoding's version, its first byte. */
#define MS_ROWS_VERSION 1
/* Header: version, why, rows (u16), stop (u32); a row: 13 bytes and 4 per save. */
#define MS_ROWS_HEADER 8
#define MS_ROWS_ROW_MIN 13
#define MS_ROWS_ENCODED_MAX \
	(MS_ROWS_HEADER + MS_PROVE_ROWS_MAX * (MS_ROWS_ROW_MIN + 4 * MS_PROVE_SAVE_REGS))

/*
 * One row: the CFA is cfa_reg (MS_DW_RSP or MS_DW_RBP) + cfa_off, the
 * return address at CFA + MS_PROVE_RA_OFF; callee-saved register r
 * (DWARF numbering) is at CFA + save_off[ms_prove_save_slot(r)] when
 * saved has r, has no value in the caller when lost has r, else is the
 * caller's own. Unused save_off entries are 0. 40 bytes.
 */
struct ms_prove_row {
	uint32_t offset;	/* of the row's first pc from the entry */
	int32_t cfa_off;
	uint8_t cfa_reg;
	uint8_t pad;		/* 0 */
	uint16_t saved, lost;	/* masks of DWARF registers, callee-saved only */
	int32_t save_off[MS_PROVE_SAVE_REGS];
};

/* A function's table: row[0, n), sorted by offset, row[0] at offset 0 unless n == 0. */
struct ms_prove_rows {
	uint32_t n;
	uint32_t stop;			/* rows cover [0, stop) from the entry */
	enum ms_prove_result why;	/* why proofs stop there: never OK or MID_INSN */
	struct ms_prove_row row[MS_PROVE_ROWS_MAX];
};

/* The index in save_off of callee-saved register reg (rbx, rbp, r12-r15: 0-5), else -1. */
static inline int ms_prove_save_slot(unsigned reg)
{
	if (reg == MS_DW_RBX)
		return 0;
	if (reg == MS_DW_RBP)
		return 1;
	return reg >= 12 && reg <= 15 ? (int)reg - 10 : -1;
}

/*
 * Prove the function whose code[0..len) runs at its entry, in one pass
 * (ms_prove_walk()): *out gets its rows, and the result is out->why.
 * Prints nothing, allocates nothing. In rowsprove.c, which needs Zydis.
 */
enum ms_prove_result ms_prove_rows(const struct ms_prover *p, const uint8_t *code, size_t len,
				   struct ms_prove_rows *out);

/* The row of frame f, at offset (f's sp_off and insns are not kept). */
void ms_prove_row_of(const struct ms_proved_frame *f, uint32_t offset, struct ms_prove_row *row);

/* Whether two rows give the same frame (their offsets aside). */
bool ms_prove_row_same(const struct ms_prove_row *a, const struct ms_prove_row *b);

/*
 * The row covering pc offset off of a table row[0, n) whose rows cover
 * [0, stop): binary search; NULL when off >= stop or n == 0.
 */
const struct ms_prove_row *ms_rows_find(const struct ms_prove_row *row, uint32_t n,
					uint32_t stop, uint64_t off);

/* The CFI rule of a row: the one ms_proved_rule() gives for its frame. */
void ms_rows_rule(const struct ms_prove_row *row, struct ms_cfi_rule *r);

/*
 * Encode t (as ms_prove_rows() or ms_rows_decode() made it), little-endian:
 * the bytes written, at most MS_ROWS_ENCODED_MAX; 0 when cap is too small
 * or t has more than MS_PROVE_ROWS_MAX rows.
 */
size_t ms_rows_encode(const struct ms_prove_rows *t, uint8_t *buf, size_t cap);

/*
 * Decode len bytes (exactly one table) into *t: 0, or -1 after a message
 * naming what (e.g. "the rows of JIT function at 0x...") and the field
 * that failed. Refused: another version, a table cut short or followed by
 * bytes, more rows than MS_PROVE_ROWS_MAX, a first offset not 0 or
 * offsets not strictly increasing below stop, stop past
 * MS_PROVE_STOP_MAX, a reason that ms_prove_rows() never gives, a CFA
 * register other than %rsp and %rbp, CFA offsets not positive multiples
 * of 8 within MS_PROVE_MAX_DEPTH, saves or lost registers not
 * callee-saved or both, save offsets not multiples of 8 in
 * [-MS_PROVE_MAX_DEPTH, -16] (nor, under a CFA of %rsp's, below %rsp),
 * a row equal to the one before. So every table it accepts encodes to the same
 * bytes.
 */
int ms_rows_decode(const uint8_t *buf, size_t len, struct ms_prove_rows *t, const char *what);
/* ms_rows_decode(), the refusal kept in why (why_size bytes) instead of printed. */
int ms_rows_decode_quiet(const uint8_t *buf, size_t len, struct ms_prove_rows *t,
			 const char *what, char *why, size_t why_size);

#endif
