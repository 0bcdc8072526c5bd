/*
 * One frame's registers and what DWARF computes from them: the register
 * state, the readers of memory it may use, the expression evaluator of
 * CFI rules (DW_CFA_def_cfa_expression, DW_CFA_expression,
 * DW_CFA_val_expression) and one step by a CFI rule (dwarf/cfi.h) from a
 * frame to its caller. unwind/dwarf.h's walk is made of these steps.
 *
 * A register state holds, for each x86-64 register in DWARF numbering
 * (16 is the PC), either its value, or the address where the frame saved
 * it (read only when a later rule needs it: most callee-saved registers
 * never are), or nothing. Memory comes only through the reader:
 *  - the sampled-state reader (ms_sampled_state) holds a sample's user
 *    registers (perf's order mapped to DWARF's) and the bytes of its copied
 *    stack; a read outside those bytes fails, it never falls back to the
 *    process's memory, which has changed since the sample;
 *  - a live-state reader (a stopped thread's memory) can reuse the steps.
 *
 * No allocation: the state is the caller's.
 */
#ifndef MS_DWARF_STEP_H
#define MS_DWARF_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dwarf/cfi.h"
#include "stream/records.h"

struct ms_regstate {
	uint64_t val[MS_DWARF_REGS];
	uint32_t known;		/* bit r: val[r] is r's value */
	uint32_t saved;		/* bit r: val[r] is the address r's value is saved at */
};

struct ms_state_reader {
	/* The 8 bytes at addr: 0, or -1 when the state does not hold them. */
	int (*read)(const struct ms_state_reader *r, uint64_t addr, uint64_t *out);
};

/* The sampled-state reader: registers and copied stack of one sample. */
struct ms_sampled_state {
	struct ms_state_reader reader;
	uint64_t start;		/* the sampled %rsp: the copy's first byte */
	uint64_t len;
	const uint8_t *bytes;	/* borrowed from the sample */
};

/* The sampled-state reader's read (its reader.read). */
int ms_sampled_read(const struct ms_state_reader *r, uint64_t addr, uint64_t *out);

/*
 * Value of register reg: true with *out, or false with *end set
 * (MS_END_MISSING_REGISTER, or MS_END_STACK_COPY when its save slot cannot
 * be read). A value read from its slot is kept in rs.
 */
bool ms_regstate_get(struct ms_regstate *rs, const struct ms_state_reader *rd, unsigned reg,
		     uint64_t *out, uint32_t *end);

/*
 * Evaluate a DWARF expression (CFA or register rule) in state rs. cfa is
 * what DW_OP_call_frame_cfa pushes (have_cfa false: the op fails). True
 * with *out the value on top of the stack, or false with *end:
 * MS_END_MISSING_REGISTER, MS_END_STACK_COPY, or MS_END_NO_CFI for an
 * operation this evaluator does not know or a malformed expression.
 */
bool ms_dwarf_expr_eval(const struct ms_dwarf_op *ops, uint32_t n, struct ms_regstate *rs,
			const struct ms_state_reader *rd, bool have_cfa, uint64_t cfa,
			uint64_t *out, uint32_t *end);

/*
 * One step: frame state rs becomes its caller's by rule r (ops: its
 * module's expression operations); the CFA must be above `above` (the
 * previous frame's CFA, or the sampled %rsp). True with the caller's PC in
 * rs->val[MS_DW_RA] and *cfa, or false with *end and rs still this frame's
 * (registers read from their save slots may have become known).
 */
bool ms_dwarf_step(struct ms_regstate *rs, const struct ms_state_reader *rd,
		   const struct ms_cfi_rule *r, const struct ms_dwarf_op *ops, uint64_t above,
		   uint64_t *cfa, uint32_t *end);

static inline int ms_sampled_read_inline(const struct ms_sampled_state *st, uint64_t addr,
					 uint64_t *out)
{
	uint64_t off = addr - st->start;

	/* Unsigned: an address below the copy wraps to a huge offset. */
	if (off >= st->len || st->len - off < 8)
		return -1;
	memcpy(out, st->bytes + off, 8);
	return 0;
}

/*
 * A read through rd, with the sampled-state reader (every read of
 * ms-unwind's walk) called directly so that the compiler inlines it.
 */
static inline int ms_state_read(const struct ms_state_reader *rd, uint64_t addr, uint64_t *out)
{
	if (rd->read == ms_sampled_read)
		return ms_sampled_read_inline((const struct ms_sampled_state *)rd, addr, out);
	return rd->read(rd, addr, out);
}

/* ms_regstate_get() with the common case, a known register, inline. */
static inline bool ms_reg_get(struct ms_regstate *rs, const struct ms_state_reader *rd,
			      unsigned reg, uint64_t *out, uint32_t *end)
{
	if (reg < MS_DWARF_REGS && (rs->known & (1u << reg))) {
		*out = rs->val[reg];
		return true;
	}
	return ms_regstate_get(rs, rd, reg, out, end);
}

#endif
