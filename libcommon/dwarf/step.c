/*
 * A frame's register state, DWARF expressions over it, and one step by a
 * CFI rule (dwarf/step.h).
 */
#include "dwarf/step.h"

#include <dwarf.h>
#include <stddef.h>
#include <string.h>

int ms_sampled_read(const struct ms_state_reader *r, uint64_t addr, uint64_t *out)
{
	return ms_sampled_read_inline((const struct ms_sampled_state *)r, addr, out);
}

bool ms_regstate_get(struct ms_regstate *rs, const struct ms_state_reader *rd, unsigned reg,
		     uint64_t *out, uint32_t *end)
{
	uint32_t bit;

	if (reg >= MS_DWARF_REGS) {
		*end = MS_END_MISSING_REGISTER;
		return false;
	}
	bit = 1u << reg;
	if (rs->known & bit) {
		*out = rs->val[reg];
		return true;
	}
	if (rs->saved & bit) {
		if (ms_state_read(rd, rs->val[reg], out) < 0) {
			*end = MS_END_STACK_COPY;
			return false;
		}
		rs->val[reg] = *out;
		rs->saved &= ~bit;
		rs->known |= bit;
		return true;
	}
	*end = MS_END_MISSING_REGISTER;
	return false;
}

/* Expressions ---------------------------------------------------------------- */

#define EXPR_STACK 64
#define EXPR_STEPS 1024		/* branches can loop: bound the work */

static bool read_sized(const struct ms_state_reader *rd, uint64_t addr, uint64_t size,
		       uint64_t *out, uint32_t *end)
{
	uint64_t v;

	if (size == 0 || size > 8) {
		*end = MS_END_NO_CFI;
		return false;
	}
	if (rd->read(rd, addr, &v) < 0) {
		*end = MS_END_STACK_COPY;
		return false;
	}
	*out = size == 8 ? v : v & ((1ull << (size * 8)) - 1);
	return true;
}

bool ms_dwarf_expr_eval(const struct ms_dwarf_op *ops, uint32_t n, struct ms_regstate *rs,
			const struct ms_state_reader *rd, bool have_cfa, uint64_t cfa,
			uint64_t *out, uint32_t *end)
{
	uint64_t st[EXPR_STACK], a, b;
	uint32_t sp = 0, i = 0, steps = 0;

#define NEED(k) do { if (sp < (k)) goto bad; } while (0)
#define PUSH(v) do { uint64_t v_ = (v); if (sp >= EXPR_STACK) goto bad; st[sp++] = v_; } while (0)
	while (i < n) {
		const struct ms_dwarf_op *op = &ops[i];
		uint8_t atom = op->atom;

		if (++steps > EXPR_STEPS)
			goto bad;
		i++;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH((uint64_t)(atom - DW_OP_lit0));
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (!ms_regstate_get(rs, rd, atom - DW_OP_breg0, &a, end))
				return false;
			PUSH(a + op->number);
			continue;
		}
		switch (atom) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_bregx:
			if (!ms_regstate_get(rs, rd, (unsigned)op->number, &a, end))
				return false;
			PUSH(a + op->number2);
			break;
		case DW_OP_call_frame_cfa:
			if (!have_cfa)
				goto bad;
			PUSH(cfa);
			break;
		case DW_OP_dup:
			NEED(1);
			PUSH(st[sp - 1]);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			PUSH(st[sp - 2]);
			break;
		case DW_OP_pick:
			if (op->number >= sp)
				goto bad;
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			NEED(2);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = a;
			break;
		case DW_OP_rot:
			NEED(3);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (!read_sized(rd, st[sp - 1], 8, &st[sp - 1], end))
				return false;
			break;
		case DW_OP_deref_size:
			NEED(1);
			if (!read_sized(rd, st[sp - 1], op->number, &st[sp - 1], end))
				return false;
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_neg:
			NEED(1);
			st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			st[sp - 1] = ~st[sp - 1];
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			st[sp - 1] += op->number;
			break;
		case DW_OP_and: case DW_OP_div: case DW_OP_minus: case DW_OP_mod: case DW_OP_mul:
		case DW_OP_or: case DW_OP_plus: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
		case DW_OP_xor: case DW_OP_eq: case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
		case DW_OP_lt: case DW_OP_ne:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (atom) {
			case DW_OP_and: a &= b; break;
			case DW_OP_div:
				if (!b)
					goto bad;
				/*
				 * INT64_MIN / -1 overflows: undefined, and a trap on
				 * x86-64, so a module's CFI could kill the stage. It
				 * wraps, as the other operations do.
				 */
				if ((int64_t)b == -1)
					a = -a;
				else
					a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mod:
				if (!b)
					goto bad;
				a %= b;
				break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_plus: a += b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:
				a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
				break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_ne: a = a != b; break;
			}
			st[sp - 1] = a;
			break;
		case DW_OP_skip:
		case DW_OP_bra: {
			/*
			 * libdw keeps the raw 2-byte displacement; the target is
			 * the offset of an operation.
			 */
			uint64_t target = op->offset + 3 + (uint64_t)(int64_t)(int16_t)op->number;
			uint32_t k;

			if (atom == DW_OP_bra) {
				NEED(1);
				if (!st[--sp])
					break;
			}
			for (k = 0; k < n && ops[k].offset != target; k++)
				;
			/* A branch past the last operation finishes; one into an operation is bad. */
			if (k == n && target <= ops[n - 1].offset)
				goto bad;
			i = k;
			break;
		}
		case DW_OP_nop:
			break;
		default:
			goto bad;
		}
	}
	if (!sp)
		goto bad;
	*out = st[sp - 1];
	return true;
bad:
	*end = MS_END_NO_CFI;
	return false;
#undef NEED
#undef PUSH
}

/* The loop ------------------------------------------------------------------- */

bool ms_dwarf_step(struct ms_regstate *rs, const struct ms_state_reader *rd,
		   const struct ms_cfi_rule *r, const struct ms_dwarf_op *ops, uint64_t above,
		   uint64_t *cfa_out, uint32_t *end)
{
	/* The caller's values of the registers the rule lists, before any is set. */
	struct {
		uint64_t val;
		uint32_t known, saved;
	} nv[MS_RULE_REGS];
	uint64_t cfa, v;
	int ra = -1;

	if (r->flags & MS_CFI_OUTERMOST) {
		*end = MS_END_OUTERMOST;
		return false;
	}
	if (r->cfa_kind == MS_CFA_REG) {
		if (!ms_reg_get(rs, rd, r->cfa_reg, &v, end))
			return false;
		cfa = v + (uint64_t)(int64_t)r->cfa_arg;
	} else if (!ms_dwarf_expr_eval(ops + r->cfa_arg, r->cfa_len, rs, rd, false, 0, &cfa, end)) {
		return false;
	}
	if (cfa <= above) {
		*end = MS_END_CFA_NOT_OUTWARDS;
		return false;
	}
	if (r->flags & MS_CFI_SIMPLE) {
		/* The common case: offsets from the CFA, nothing to evaluate. */
		uint32_t clear = r->undef | r->saved | r->valued;
		uint64_t pc;

		/* Listed in register order: the return address (16) comes last. */
		ra = (int)r->n - 1;
		if (ra < 0 || r->regs[ra].reg != MS_DW_RA)
			for (uint32_t i = 0; i < r->n; i++)
				if (r->regs[i].reg == MS_DW_RA)
					ra = (int)i;
		if (ms_state_read(rd, cfa + (uint64_t)(int64_t)r->regs[ra].arg, &pc) < 0) {
			*end = MS_END_STACK_COPY;
			return false;
		}
		for (uint32_t i = 0; i < r->n; i++)
			rs->val[r->regs[i].reg] = cfa + (uint64_t)(int64_t)r->regs[i].arg;
		rs->val[MS_DW_RA] = pc;
		rs->known = (rs->known & ~clear) | r->valued | (1u << MS_DW_RA);
		rs->saved = (rs->saved & ~clear) | (r->saved & ~(1u << MS_DW_RA));
		*cfa_out = cfa;
		return true;
	}
	for (uint32_t i = 0; i < r->n; i++) {
		const struct ms_reg_rule *rr = &r->regs[i];
		uint32_t bit = 1u << rr->reg, e;

		nv[i].val = 0;
		nv[i].known = nv[i].saved = 0;
		if (rr->reg == MS_DW_RA)
			ra = (int)i;
		switch (rr->kind) {
		case MS_REG_OFFSET:
			nv[i].val = cfa + (uint64_t)(int64_t)rr->arg;
			nv[i].saved = bit;
			break;
		case MS_REG_VAL_OFFSET:
			nv[i].val = cfa + (uint64_t)(int64_t)rr->arg;
			nv[i].known = bit;
			break;
		case MS_REG_REGISTER:
			if (rr->arg >= 0 && rr->arg < MS_DWARF_REGS) {
				uint32_t src = 1u << rr->arg;

				nv[i].val = rs->val[rr->arg];
				nv[i].known = rs->known & src ? bit : 0;
				nv[i].saved = rs->saved & src ? bit : 0;
			}
			break;
		case MS_REG_EXPR:
		case MS_REG_VAL_EXPR:
			/*
			 * A register whose rule cannot be evaluated has no value;
			 * that ends the walk only if a later rule needs it.
			 */
			if (ms_dwarf_expr_eval(ops + rr->arg, rr->len, rs, rd, true, cfa, &v, &e)) {
				nv[i].val = v;
				nv[i].known = rr->kind == MS_REG_VAL_EXPR ? bit : 0;
				nv[i].saved = rr->kind == MS_REG_EXPR ? bit : 0;
			} else if (rr->reg == MS_DW_RA) {
				*end = e;
				return false;
			}
			break;
		}
	}
	/* The caller's PC first: the state changes only when the step succeeds. */
	if (ra < 0) {
		/* "Same value" for the return address describes no caller. */
		*end = MS_END_MISSING_REGISTER;
		return false;
	}
	if (nv[ra].saved) {
		if (rd->read(rd, nv[ra].val, &v) < 0) {
			*end = MS_END_STACK_COPY;
			return false;
		}
		nv[ra].val = v;
		nv[ra].saved = 0;
		nv[ra].known = 1u << MS_DW_RA;
	} else if (!nv[ra].known) {
		*end = MS_END_MISSING_REGISTER;
		return false;
	}
	rs->known &= ~r->undef;
	rs->saved &= ~r->undef;
	for (uint32_t i = 0; i < r->n; i++) {
		uint32_t bit = 1u << r->regs[i].reg;

		rs->val[r->regs[i].reg] = nv[i].val;
		rs->known = (rs->known & ~bit) | nv[i].known;
		rs->saved = (rs->saved & ~bit) | nv[i].saved;
	}
	*cfa_out = cfa;
	return true;
}
