/*
 * The frame of a JIT function at one pc, proved from its machine code.
 *
 * Code in anonymous memory (a perf map's functions) has no call-frame
 * information. The prover makes the rule that CFI would give at pc by
 * following the instructions that fall through from the function's entry,
 * as CFI takes a frame to be a function of the instruction: where the CFA
 * is (%rsp + N from the entry's N = 8, or %rbp + N once `mov rbp, rsp` has
 * made a frame pointer), and where each callee-saved register (%rbx, %rbp,
 * %r12-%r15) was saved. The return address is always at CFA - 8.
 *
 * Nothing is assumed: CPython 3.12's perf trampoline keeps no frame pointer,
 * and its rule is %rsp + 16 from its `sub rsp, 8`. The proof fails
 * (a reason, never a guess) when pc lies past a jump, a conditional jump, a
 * return or a trap (a join of paths could bring any state there), when
 * an instruction before pc does not decode or is cut by the end of the
 * bytes, or when an instruction writes %rsp in a way the prover does not
 * model (`and rsp, -16`, `mov rsp, rax`, `xchg`, `enter`, a 16-bit push,
 * moves by a register or by a non-multiple of 8, a pop of the return
 * address). Modelled: push, pop, pushfq, popfq, `sub`/`add rsp, imm`,
 * `lea rsp, [rsp + d]` or `[rbp + d]`, `mov rsp, rbp`, `leave`,
 * `mov rbp, rsp`, and calls, which return with %rsp unchanged (a call to
 * the next instruction, which is a push, is refused). Writes to %rbp
 * other than the frame pointer's end the frame pointer (the CFA goes back
 * to %rsp + N, which is always known); a callee-saved register written
 * before it was saved has lost the caller's value (undefined, as CFI says).
 * A save with `mov [rsp + d], reg` counts as a push does, and a load from
 * the slot (`mov rbx, [rbp - 8]` before leave) as a pop; a write through
 * %rsp or the frame pointer over a save slot ends that save, and one over
 * the return address fails the proof. A slot above %rsp after a pop or
 * add is free, so its save ends. Not modelled (refused): a stack realigned
 * by `and`, even under a frame pointer; %rsp moved by a register (alloca).
 *
 * Cost: about 100 ns per instruction followed (Zydis decodes each fully),
 * so 0.2-0.6 us for a trampoline or a prologue and 260 us at the bound:
 * callers keep proofs per function and pc, or prove once per function.
 *
 * pc is where the frame's next instruction is: the sampled pc, or for a
 * caller's frame its return address itself (not the return address - 1,
 * which lies inside the call: MS_PROVE_MID_INSN), since a call returns
 * with the state it had before it. A call that ends the bytes has its
 * return address at entry + len, out of bounds.
 *
 * Bounded: at most MS_PROVE_MAX_INSNS instructions per proof, a frame of
 * at most MS_PROVE_MAX_DEPTH bytes; the code bytes are never read outside
 * [code, code + len). No allocation per proof: the decoder is made once by
 * ms_prover_new(), and proofs only read it (threads may share it).
 */
#ifndef MS_JIT_PROVE_H
#define MS_JIT_PROVE_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf/cfi.h"

#define MS_PROVE_MAX_INSNS 4096
/* Far above any real frame, and well inside a CFI rule's int32 offsets. */
#define MS_PROVE_MAX_DEPTH (1 << 24)
/* The return address is saved at CFA - 8, whatever the pc. */
#define MS_PROVE_RA_OFF (-8)

enum ms_prove_result {
	MS_PROVE_OK = 0,
	MS_PROVE_OUT_OF_BOUNDS,		/* pc is not in [entry, entry + len) */
	MS_PROVE_MID_INSN,		/* pc lies inside an instruction */
	MS_PROVE_NOT_REACHED_JUMP,	/* pc lies past a jump or conditional jump */
	MS_PROVE_NOT_REACHED_RET,	/* pc lies past a return */
	MS_PROVE_NOT_REACHED_TRAP,	/* pc lies past ud2, hlt or int3 */
	MS_PROVE_UNDECODABLE,		/* an instruction before pc does not decode */
	MS_PROVE_CUT,			/* an instruction before pc runs past the bytes */
	MS_PROVE_WRITES_RSP,		/* an instruction writes %rsp as no rule models */
	MS_PROVE_WRITES_RA,		/* an instruction writes the return address's slot */
	MS_PROVE_TOO_DEEP,		/* the frame grows past MS_PROVE_MAX_DEPTH */
	MS_PROVE_TOO_LONG,		/* pc is past MS_PROVE_MAX_INSNS instructions */
	MS_PROVE_TOO_MANY_ROWS,		/* (ms_prove_rows() only: its table is full, jit/rows.h) */
	MS_PROVE_RESULTS
};

/* "ok", "out-of-bounds", "mid-instruction", "not-reached-jump", ...; "unknown" past the enum. */
const char *ms_prove_result_name(enum ms_prove_result r);

/*
 * A proved frame. Registers in DWARF numbering (dwarf/cfi.h): the CFA is
 * cfa_reg (MS_DW_RSP or MS_DW_RBP) + cfa_off, and also %rsp + sp_off
 * (every modelled instruction keeps %rsp known); the return address is at
 * CFA + MS_PROVE_RA_OFF. Of the callee-saved registers, those in saved
 * are at CFA + save_off[r], those in lost have no value in the caller,
 * and the others are the caller's own (same value).
 */
struct ms_proved_frame {
	uint8_t cfa_reg;
	int32_t cfa_off;
	int32_t sp_off;
	uint32_t saved;
	uint32_t lost;
	int32_t save_off[MS_DWARF_REGS];
	uint32_t insns;		/* instructions followed from the entry to pc */
};

struct ms_prover;

/* The decoder, made once. NULL after a message. */
struct ms_prover *ms_prover_new(void);
void ms_prover_free(struct ms_prover *p);

/*
 * Prove the frame at pc of the function whose code[0..len) runs at entry.
 * MS_PROVE_OK with *out set, or the reason the proof fails (*out then
 * undefined). Prints nothing: a failed proof is a result, not an error.
 */
enum ms_prove_result ms_prove(const struct ms_prover *p, const uint8_t *code, size_t len,
			      uint64_t entry, uint64_t pc, struct ms_proved_frame *out);

/*
 * Called by ms_prove_walk() with the frame at each instruction boundary
 * off (from the entry) that ms_prove() proves; anything but MS_PROVE_OK
 * ends the walk with that result, its stop at off.
 */
typedef enum ms_prove_result (*ms_prove_visit)(void *arg, uint32_t off,
					       const struct ms_proved_frame *f);

/*
 * ms_prove() at every pc in one pass (ms_prove() at each would cost the
 * square of the instructions): visit at each boundary whose proof
 * succeeds, in order of off. Returns why the walk ended, with *stop such
 * that each pc in [entry, entry + *stop) is a proved boundary or inside
 * the instruction at one, and ms_prove() fails at every pc from
 * entry + *stop on (unless visit ended the walk): *stop is past the
 * instruction whose transfer or effect ended the proofs (a jump, ret,
 * unmodelled write to %rsp ...), one past the boundary whose instruction
 * was not followed (undecodable, cut, too long), or len when every
 * instruction falls through to the end (MS_PROVE_OUT_OF_BOUNDS). At most
 * MS_PROVE_MAX_INSNS + 1 visits; no allocation.
 */
enum ms_prove_result ms_prove_walk(const struct ms_prover *p, const uint8_t *code, size_t len,
				   ms_prove_visit visit, void *arg, uint32_t *stop);

/*
 * The CFI rule of a proved frame (dwarf/cfi.h), which ms_dwarf_step()
 * applies as it applies a module's: the caller-saved registers
 * undefined, as the psABI makes them, %rsp the CFA.
 */
void ms_proved_rule(const struct ms_proved_frame *f, struct ms_cfi_rule *r);

#endif
