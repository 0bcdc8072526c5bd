/*
 * The frame prover (jit/prove.h): one pass over the instructions from the
 * entry to pc, decoded by Zydis, with the frame's state after each.
 */
#include "jit/prove.h"
#include "jit/rows.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "util/error.h"

struct ms_prover {
	ZydisDecoder dec;
};

/*
 * The frame after the instructions followed so far. Depths are bytes
 * below the CFA: %rsp = CFA - d; %rbp = CFA - fp_d while fp; the caller's
 * register r is at CFA - slot[r] while saved has r.
 */
struct state {
	int64_t d;
	bool fp;
	int64_t fp_d;
	uint32_t clobbered;	/* callee-saved registers no longer the caller's */
	uint32_t saved;
	int64_t slot[MS_DWARF_REGS];
};

static const char *const names[MS_PROVE_RESULTS] = {
	[MS_PROVE_OK] = "ok",
	[MS_PROVE_OUT_OF_BOUNDS] = "out-of-bounds",
	[MS_PROVE_MID_INSN] = "mid-instruction",
	[MS_PROVE_NOT_REACHED_JUMP] = "not-reached-jump",
	[MS_PROVE_NOT_REACHED_RET] = "not-reached-ret",
	[MS_PROVE_NOT_REACHED_TRAP] = "not-reached-trap",
	[MS_PROVE_UNDECODABLE] = "undecodable",
	[MS_PROVE_CUT] = "cut",
	[MS_PROVE_WRITES_RSP] = "writes-rsp",
	[MS_PROVE_WRITES_RA] = "writes-return-address",
	[MS_PROVE_TOO_DEEP] = "too-deep",
	[MS_PROVE_TOO_LONG] = "too-long",
	[MS_PROVE_TOO_MANY_ROWS] = "too-many-rows",
};

const char *ms_prove_result_name(enum ms_prove_result r)
{
	if ((unsigned)r >= MS_PROVE_RESULTS)
		return "unknown";
	return names[r];
}

struct ms_prover *ms_prover_new(void)
{
	struct ms_prover *p = calloc(1, sizeof(*p));
	ZyanStatus st;

	if (!p) {
		ms_error("jit prover: out of memory making the x86-64 decoder");
		return NULL;
	}
	st = ZydisDecoderInit(&p->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!ZYAN_SUCCESS(st)) {
		ms_error("jit prover: Zydis refused to make an x86-64 decoder (status 0x%x): "
			 "check the installed libzydis (scripts/install-deps)",
			 (unsigned)st);
		free(p);
		return NULL;
	}
	return p;
}

void ms_prover_free(struct ms_prover *p)
{
	free(p);
}

/* The DWARF number of the 64-bit register holding reg, or -1 (rip, flags, vectors ...). */
static int dwarf_reg(ZydisRegister reg)
{
	switch (ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg)) {
	case ZYDIS_REGISTER_RAX: return MS_DW_RAX;
	case ZYDIS_REGISTER_RDX: return MS_DW_RDX;
	case ZYDIS_REGISTER_RCX: return MS_DW_RCX;
	case ZYDIS_REGISTER_RBX: return MS_DW_RBX;
	case ZYDIS_REGISTER_RSI: return MS_DW_RSI;
	case ZYDIS_REGISTER_RDI: return MS_DW_RDI;
	case ZYDIS_REGISTER_RBP: return MS_DW_RBP;
	case ZYDIS_REGISTER_RSP: return MS_DW_RSP;
	case ZYDIS_REGISTER_R8: return 8;
	case ZYDIS_REGISTER_R9: return 9;
	case ZYDIS_REGISTER_R10: return 10;
	case ZYDIS_REGISTER_R11: return 11;
	case ZYDIS_REGISTER_R12: return 12;
	case ZYDIS_REGISTER_R13: return 13;
	case ZYDIS_REGISTER_R14: return 14;
	case ZYDIS_REGISTER_R15: return 15;
	default: return -1;
	}
}

/* %rsp went down the frame (d grew): bounded. */
static enum ms_prove_result deeper(struct state *s, int64_t by)
{
	if (by % 8)
		return MS_PROVE_WRITES_RSP;
	s->d += by;
	if (s->d > MS_PROVE_MAX_DEPTH)
		return MS_PROVE_TOO_DEEP;
	return MS_PROVE_OK;
}

/*
 * %rsp is set to CFA - d. Never above the return address; slots now below
 * %rsp are free for any later push or signal frame to overwrite, so their
 * saves end.
 */
static enum ms_prove_result set_depth(struct state *s, int64_t d)
{
	if (d % 8 || d < 8)
		return MS_PROVE_WRITES_RSP;
	if (d > MS_PROVE_MAX_DEPTH)
		return MS_PROVE_TOO_DEEP;
	s->d = d;
	for (int r = 0; r < MS_DWARF_REGS; r++)
		if ((s->saved & (1u << r)) && s->slot[r] > d)
			s->saved &= ~(1u << r);
	return MS_PROVE_OK;
}

/* r gets a value that is not its caller's. */
static void clobber(struct state *s, int r)
{
	if (r < 0 || !(MS_PROVE_CALLEE_SAVED & (1u << r)))
		return;
	s->clobbered |= 1u << r;
	if (r == MS_DW_RBP)
		s->fp = false;
}

/* A pop into register r (or memory, r < 0) from the slot at depth d. */
static enum ms_prove_result pop(struct state *s, int r)
{
	int64_t from = s->d;

	if (r == MS_DW_RSP)
		return MS_PROVE_WRITES_RSP;
	if (from - 8 < 8)
		return MS_PROVE_WRITES_RSP;	/* it would pop the return address */
	if (r >= 0 && (MS_PROVE_CALLEE_SAVED & (1u << r))) {
		if ((s->saved & (1u << r)) && s->slot[r] == from) {
			/* Restored: the caller's value is back in the register. */
			s->saved &= ~(1u << r);
			s->clobbered &= ~(1u << r);
			if (r == MS_DW_RBP)
				s->fp = false;
		} else {
			clobber(s, r);
		}
	}
	return set_depth(s, from - 8);
}

/*
 * The depth below the CFA of memory operand m's first byte, when it is in
 * this frame by %rsp or the frame pointer (no index, the stack segment):
 * true with *at (bytes above the CFA, so negative in the frame).
 */
static bool frame_addr(const struct state *s, const ZydisDecodedOperand *m, int64_t *at)
{
	if (m->mem.index != ZYDIS_REGISTER_NONE ||
	    (m->mem.segment != ZYDIS_REGISTER_SS && m->mem.segment != ZYDIS_REGISTER_DS))
		return false;
	if (m->mem.base == ZYDIS_REGISTER_RSP)
		*at = -s->d + m->mem.disp.value;
	else if (m->mem.base == ZYDIS_REGISTER_RBP && s->fp)
		*at = -s->fp_d + m->mem.disp.value;
	else
		return false;
	return true;
}

/*
 * An explicit write to memory operand m: one over the return address
 * fails the proof, one over a save slot ends that save.
 */
static enum ms_prove_result store(struct state *s, const ZydisDecodedOperand *m)
{
	int64_t at, size = m->size ? m->size / 8 : 8;

	if (!frame_addr(s, m, &at))
		return MS_PROVE_OK;
	if (at < 0 && at + size > MS_PROVE_RA_OFF)
		return MS_PROVE_WRITES_RA;
	for (int r = 0; r < MS_DWARF_REGS; r++)
		if ((s->saved & (1u << r)) && at < -s->slot[r] + 8 && at + size > -s->slot[r])
			s->saved &= ~(1u << r);
	return MS_PROVE_OK;
}

/* `mov [rsp + d], r64` of a callee-saved register still the caller's: a save. */
static void mov_save(struct state *s, const ZydisDecodedInstruction *in,
		     const ZydisDecodedOperand *op)
{
	int64_t at;
	int r;

	if (in->mnemonic != ZYDIS_MNEMONIC_MOV || op[0].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op[0].size != 64 || op[1].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op[1].reg.value) != 64)
		return;
	r = dwarf_reg(op[1].reg.value);
	if (r < 0 || !(MS_PROVE_CALLEE_SAVED & (1u << r)) || ((s->clobbered | s->saved) & (1u << r)))
		return;
	if (!frame_addr(s, &op[0], &at) || at % 8 || at < -s->d || at > -16)
		return;
	s->saved |= 1u << r;
	s->slot[r] = -at;
}

/*
 * `mov r64, [slot]` from the save slot of callee-saved r (an epilogue
 * before leave): r is its caller's again.
 */
static bool mov_restore(struct state *s, const ZydisDecodedInstruction *in,
			const ZydisDecodedOperand *op)
{
	int64_t at;
	int r;

	if (in->mnemonic != ZYDIS_MNEMONIC_MOV || op[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op[0].reg.value) != 64 ||
	    op[1].type != ZYDIS_OPERAND_TYPE_MEMORY)
		return false;
	r = dwarf_reg(op[0].reg.value);
	if (r < 0 || !(s->saved & (1u << r)) || !frame_addr(s, &op[1], &at) || at != -s->slot[r])
		return false;
	s->clobbered &= ~(1u << r);
	if (r == MS_DW_RBP)
		s->fp = false;
	return true;
}

/* A write to %rsp other than push, pop, call and leave. */
static enum ms_prove_result move_rsp(struct state *s, const ZydisDecodedInstruction *in,
				     const ZydisDecodedOperand *op)
{
	if (op[0].type != ZYDIS_OPERAND_TYPE_REGISTER || op[0].reg.value != ZYDIS_REGISTER_RSP ||
	    in->operand_count_visible != 2)
		return MS_PROVE_WRITES_RSP;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_ADD: {
		int64_t by;

		if (op[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			return MS_PROVE_WRITES_RSP;
		by = op[1].imm.value.s;
		if (by < -MS_PROVE_MAX_DEPTH || by > MS_PROVE_MAX_DEPTH)
			return MS_PROVE_TOO_DEEP;
		if (in->mnemonic == ZYDIS_MNEMONIC_SUB)
			return by >= 0 ? deeper(s, by) : set_depth(s, s->d + by);
		return set_depth(s, s->d - by);
	}
	case ZYDIS_MNEMONIC_LEA: {
		int64_t at;

		if (!frame_addr(s, &op[1], &at))
			return MS_PROVE_WRITES_RSP;
		if (at > 0 || at < -MS_PROVE_MAX_DEPTH)
			return at > 0 ? MS_PROVE_WRITES_RSP : MS_PROVE_TOO_DEEP;
		return -at >= s->d ? deeper(s, -at - s->d) : set_depth(s, -at);
	}
	case ZYDIS_MNEMONIC_MOV:
		if (op[1].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    op[1].reg.value != ZYDIS_REGISTER_RBP || !s->fp)
			return MS_PROVE_WRITES_RSP;
		return set_depth(s, s->fp_d);
	default:
		return MS_PROVE_WRITES_RSP;
	}
}

/* Where the instruction sends control: 0 when it falls through, else why pc is not reached. */
static enum ms_prove_result transfer(const ZydisDecodedInstruction *in,
				     const ZydisDecodedOperand *op)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET:
		return MS_PROVE_NOT_REACHED_RET;
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
		return MS_PROVE_NOT_REACHED_JUMP;
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_SYSCALL:
		return MS_PROVE_OK;	/* both return to the next instruction */
	default:
		break;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_INT3:
		return MS_PROVE_NOT_REACHED_TRAP;
	default:
		break;
	}
	if (in->meta.category == ZYDIS_CATEGORY_INTERRUPT)
		return MS_PROVE_OK;	/* int n: the kernel returns past it */
	/* Anything else that sets the pc (xabort, sysret, far transfers ...) jumps. */
	for (unsigned i = 0; i < in->operand_count; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    (op[i].reg.value == ZYDIS_REGISTER_RIP || op[i].reg.value == ZYDIS_REGISTER_EIP))
			return MS_PROVE_NOT_REACHED_JUMP;
	return MS_PROVE_OK;
}

/* The frame after instruction in. */
static enum ms_prove_result step(struct state *s, const ZydisDecodedInstruction *in,
				 const ZydisDecodedOperand *op)
{
	uint32_t written = 0;
	enum ms_prove_result res;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_CALL:
		/* A call to the next instruction is a push of the pc (position-independent code). */
		if (op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[0].imm.is_relative &&
		    op[0].imm.value.s == 0)
			return MS_PROVE_WRITES_RSP;
		return MS_PROVE_OK;	/* the callee keeps %rsp and the callee-saved registers */
	case ZYDIS_MNEMONIC_PUSH:
	case ZYDIS_MNEMONIC_PUSHFQ: {
		int r = -1;

		if (in->operand_width != 64)
			return MS_PROVE_WRITES_RSP;
		if (in->operand_count_visible == 1 && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
			r = dwarf_reg(op[0].reg.value);
		res = deeper(s, 8);
		if (res == MS_PROVE_OK && r >= 0 && (MS_PROVE_CALLEE_SAVED & (1u << r)) &&
		    !((s->clobbered | s->saved) & (1u << r))) {
			s->saved |= 1u << r;
			s->slot[r] = s->d;
		}
		return res;
	}
	case ZYDIS_MNEMONIC_POP:
	case ZYDIS_MNEMONIC_POPFQ: {
		int r = -1;

		if (in->operand_width != 64)
			return MS_PROVE_WRITES_RSP;
		if (in->operand_count_visible == 1 && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
			r = dwarf_reg(op[0].reg.value);
		res = pop(s, r);
		/* pop [mem] addresses with %rsp after the pop, as the CPU does. */
		if (res == MS_PROVE_OK && in->operand_count_visible == 1 &&
		    op[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
			res = store(s, &op[0]);
		return res;
	}
	case ZYDIS_MNEMONIC_LEAVE:
		if (!s->fp)
			return MS_PROVE_WRITES_RSP;
		res = set_depth(s, s->fp_d);
		return res == MS_PROVE_OK ? pop(s, MS_DW_RBP) : res;
	default:
		break;
	}

	for (unsigned i = 0; i < in->operand_count; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
			int r = dwarf_reg(op[i].reg.value);

			if (r >= 0)
				written |= 1u << r;
		}
	}
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
			res = store(s, &op[i]);
			if (res != MS_PROVE_OK)
				return res;
		}
	}
	if (written & (1u << MS_DW_RSP)) {
		res = move_rsp(s, in, op);
		if (res != MS_PROVE_OK)
			return res;
		written &= ~(1u << MS_DW_RSP);
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_MOV && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    op[0].reg.value == ZYDIS_REGISTER_RBP && op[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    op[1].reg.value == ZYDIS_REGISTER_RSP) {
		clobber(s, MS_DW_RBP);
		s->fp = true;
		s->fp_d = s->d;
		return MS_PROVE_OK;
	}
	if (mov_restore(s, in, op))
		return MS_PROVE_OK;
	for (int r = 0; r < MS_DWARF_REGS; r++)
		if (written & (1u << r))
			clobber(s, r);
	mov_save(s, in, op);
	return MS_PROVE_OK;
}

/* What ms_prove() says of the state s after n instructions. */
static void frame_of(const struct state *s, uint32_t n, struct ms_proved_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->cfa_reg = s->fp ? MS_DW_RBP : MS_DW_RSP;
	out->cfa_off = (int32_t)(s->fp ? s->fp_d : s->d);
	out->sp_off = (int32_t)s->d;
	out->saved = s->saved;
	for (int r = 0; r < MS_DWARF_REGS; r++)
		if (s->saved & (1u << r))
			out->save_off[r] = (int32_t)-s->slot[r];
	out->lost = s->clobbered & ~s->saved & MS_PROVE_CALLEE_SAVED;
	out->insns = n;
}

static enum ms_prove_result decode_failure(ZyanStatus st)
{
	return st == ZYDIS_STATUS_NO_MORE_DATA ? MS_PROVE_CUT : MS_PROVE_UNDECODABLE;
}

enum ms_prove_result ms_prove(const struct ms_prover *p, const uint8_t *code, size_t len,
			      uint64_t entry, uint64_t pc, struct ms_proved_frame *out)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	struct state s = { .d = 8 };
	uint64_t at = pc - entry, off = 0;	/* unsigned: a pc below entry wraps out */
	uint32_t n = 0;
	enum ms_prove_result res;

	if (at >= len)
		return MS_PROVE_OUT_OF_BOUNDS;
	while (off < at) {
		ZyanStatus st;

		if (n >= MS_PROVE_MAX_INSNS)
			return MS_PROVE_TOO_LONG;
		/* The decoder reads at most 15 bytes, and never past len - off. */
		st = ZydisDecoderDecodeFull(&p->dec, code + off, len - off, &in, op);
		if (!ZYAN_SUCCESS(st))
			return decode_failure(st);
		n++;
		if (off + in.length > at)
			return MS_PROVE_MID_INSN;
		res = transfer(&in, op);
		if (res == MS_PROVE_OK)
			res = step(&s, &in, op);
		if (res != MS_PROVE_OK)
			return res;
		off += in.length;
	}

	frame_of(&s, n, out);
	return MS_PROVE_OK;
}

enum ms_prove_result ms_prove_walk(const struct ms_prover *p, const uint8_t *code, size_t len,
				   ms_prove_visit visit, void *arg, uint32_t *stop)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	struct ms_proved_frame f;
	struct state s = { .d = 8 };
	uint32_t off = 0, n = 0;	/* off < MS_PROVE_MAX_INSNS * 15: no wrap */
	enum ms_prove_result res;

	for (;;) {
		ZyanStatus st;

		*stop = off;
		if (off >= len)
			return MS_PROVE_OUT_OF_BOUNDS;
		/* The frame at off is proved: ms_prove() checks the bounds only past it. */
		frame_of(&s, n, &f);
		res = visit(arg, off, &f);
		if (res != MS_PROVE_OK)
			return res;
		/* Not followed, so pc = off alone is proved (ms_prove() fails inside). */
		*stop = off + 1;
		if (n >= MS_PROVE_MAX_INSNS)
			return MS_PROVE_TOO_LONG;
		st = ZydisDecoderDecodeFull(&p->dec, code + off, len - off, &in, op);
		if (!ZYAN_SUCCESS(st))
			return decode_failure(st);
		n++;
		/* Followed and failed: the pcs inside it are mid-instruction, past it not reached. */
		*stop = off + in.length;
		res = transfer(&in, op);
		if (res == MS_PROVE_OK)
			res = step(&s, &in, op);
		if (res != MS_PROVE_OK)
			return res;
		off += in.length;
	}
}

void ms_proved_rule(const struct ms_proved_frame *f, struct ms_cfi_rule *r)
{
	struct ms_prove_row row;

	/* one rule for both: a frame is the row it would make (the prover saves callee-saved only) */
	ms_prove_row_of(f, 0, &row);
	ms_rows_rule(&row, r);
}
