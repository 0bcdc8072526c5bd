/*
 * Fuzz target: the JIT frame prover (jit/prove.h) over any code and any pc.
 *
 * The input: two bytes (little-endian) choosing pc's offset from the
 * entry, taken modulo the code's length + 16 so that pcs past the end are
 * tried too; then the code, of which at most MAX_CODE bytes are used. The
 * code is copied to the end of a mapping followed by a page that cannot be
 * read: Zydis is not built with the sanitizers, so a read past the bytes
 * must fault to be seen.
 *
 * Checked (abort() when broken):
 *  - a result is one of the enum's, with a name;
 *  - a proved frame: the CFA %rsp + sp_off or %rbp + cfa_off, both
 *    positive multiples of 8 within MS_PROVE_MAX_DEPTH, equal when the CFA
 *    is %rsp's; saves only of callee-saved registers, none also lost, each
 *    a distinct slot of 8 bytes inside the frame and below the return
 *    address; at most as many instructions as bytes before pc;
 *  - the same proof again gives the same frame, and so does the code cut
 *    right after pc's first byte (a proof reads nothing at or past pc);
 *  - the frame's CFI rule is well-formed as dwarf/cfi.h documents it
 *    (simple, registers in order, the return address last at CFA - 8) and
 *    one step by it over a zeroed stack finds the CFA at %rsp + sp_off.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dwarf/step.h"
#include "jit/prove.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz-prove: %s:%d: broken: %s\n", __FILE__,  \
				__LINE__, #cond);                                    \
			abort();                                                     \
		}                                                                    \
	} while (0)

#define ENTRY 0x7f00deadb000ull
#define CALLEE_SAVED ((1u << MS_DW_RBX) | (1u << MS_DW_RBP) | (0xfu << 12))
/* The stack a step reads: frames up to this deep are stepped. */
#define STEP_STACK 4096
#define MAX_CODE (64u << 10)
#define PAGE 4096u

static struct ms_prover *prover;
static uint8_t *area;		/* MAX_CODE bytes, then the guard page */

static void check_frame(const struct ms_proved_frame *f, uint64_t off)
{
	uint32_t slots = 0;

	CHECK(f->cfa_reg == MS_DW_RSP || f->cfa_reg == MS_DW_RBP);
	CHECK(f->cfa_off > 0 && f->cfa_off % 8 == 0 && f->cfa_off <= MS_PROVE_MAX_DEPTH);
	CHECK(f->sp_off >= 8 && f->sp_off % 8 == 0 && f->sp_off <= MS_PROVE_MAX_DEPTH);
	CHECK(f->cfa_reg != MS_DW_RSP || f->cfa_off == f->sp_off);
	CHECK((f->saved & ~CALLEE_SAVED) == 0);
	CHECK((f->lost & ~CALLEE_SAVED) == 0);
	CHECK((f->saved & f->lost) == 0);
	CHECK(f->insns <= off);
	CHECK(f->insns <= MS_PROVE_MAX_INSNS);
	for (int r = 0; r < MS_DWARF_REGS; r++) {
		int32_t o = f->save_off[r];

		if (!(f->saved & (1u << r))) {
			CHECK(o == 0);
			continue;
		}
		CHECK(o % 8 == 0 && o <= -16 && o >= -f->sp_off);
		/* distinct slots: one bit per slot among the deepest 32 */
		if (-o / 8 < 32) {
			CHECK(!(slots & (1u << (-o / 8))));
			slots |= 1u << (-o / 8);
		}
	}
}

static void check_rule(const struct ms_proved_frame *f)
{
	static uint64_t stack[STEP_STACK / 8];
	const uint64_t sp = 0x7ffc00000000ull;
	struct ms_sampled_state st = {
		.reader = { ms_sampled_read }, .start = sp, .len = sizeof(stack),
		.bytes = (const uint8_t *)stack,
	};
	struct ms_regstate rs = { 0 };
	struct ms_cfi_rule r;
	uint64_t cfa = 0;
	uint32_t end = MS_END_UNKNOWN;

	ms_proved_rule(f, &r);
	CHECK(r.cfa_kind == MS_CFA_REG && r.cfa_reg == f->cfa_reg && r.cfa_arg == f->cfa_off);
	CHECK(r.flags & MS_CFI_SIMPLE);
	CHECK(!(r.flags & (MS_CFI_OUTERMOST | MS_CFI_SIGNAL)));
	CHECK(r.n >= 2 && r.n <= MS_RULE_REGS);
	for (uint32_t i = 1; i < r.n; i++)
		CHECK(r.regs[i - 1].reg < r.regs[i].reg);
	CHECK(r.regs[r.n - 1].reg == MS_DW_RA && r.regs[r.n - 1].kind == MS_REG_OFFSET &&
	      r.regs[r.n - 1].arg == MS_PROVE_RA_OFF);
	for (uint32_t i = 0; i < r.n; i++)
		CHECK(!(r.undef & (1u << r.regs[i].reg)));
	CHECK((r.undef & f->lost) == f->lost);

	if (f->sp_off > STEP_STACK)
		return;
	rs.val[MS_DW_RSP] = sp;
	rs.val[MS_DW_RBP] = sp + (uint64_t)f->sp_off - (uint64_t)f->cfa_off;
	rs.known = 1u << MS_DW_RSP | 1u << MS_DW_RBP;
	CHECK(ms_dwarf_step(&rs, &st.reader, &r, NULL, sp, &cfa, &end));
	CHECK(cfa == sp + (uint64_t)f->sp_off);
	CHECK(rs.val[MS_DW_RSP] == cfa && rs.val[MS_DW_RA] == 0);
}

int ms_fuzz_prove(const uint8_t *data, size_t size)
{
	struct ms_proved_frame f, again;
	enum ms_prove_result res;
	uint8_t *code;
	size_t len;
	uint64_t off;

	if (!prover) {
		prover = ms_prover_new();
		CHECK(prover);
		area = mmap(NULL, MAX_CODE + PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(area != MAP_FAILED);
		CHECK(mprotect(area + MAX_CODE, PAGE, PROT_NONE) == 0);
	}
	if (size < 2)
		return 0;
	len = size - 2 < MAX_CODE ? size - 2 : MAX_CODE;
	off = ((uint64_t)data[0] | (uint64_t)data[1] << 8) % (len + 16);
	code = area + MAX_CODE - len;
	memcpy(code, data + 2, len);

	res = ms_prove(prover, code, len, ENTRY, ENTRY + off, &f);
	CHECK((unsigned)res < MS_PROVE_RESULTS);
	CHECK(strcmp(ms_prove_result_name(res), "unknown") != 0);
	CHECK((res == MS_PROVE_OUT_OF_BOUNDS) == (off >= len));
	if (res == MS_PROVE_OK) {
		check_frame(&f, off);
		CHECK(ms_prove(prover, code, len, ENTRY, ENTRY + off, &again) == MS_PROVE_OK);
		CHECK(memcmp(&f, &again, sizeof(f)) == 0);
		/* the code cut after pc's first byte, moved to end at the guard page too */
		memmove(area + MAX_CODE - (off + 1), code, off + 1);
		CHECK(ms_prove(prover, area + MAX_CODE - (off + 1), off + 1, ENTRY, ENTRY + off,
			       &again) == MS_PROVE_OK);
		CHECK(memcmp(&f, &again, sizeof(f)) == 0);
		check_rule(&f);
	} else {
		CHECK(ms_prove(prover, code, len, ENTRY, ENTRY + off, &again) == res);
	}
	return 0;
}

MS_FUZZ_TARGET("fuzz-prove", ms_fuzz_prove)
