/*
 * The JIT frame prover (libcommon/jit/prove.c) over hand-assembled code:
 * CPython 3.12's perf trampoline (no frame pointer), a classic prologue and
 * its epilogues, V8-like frames, and every way a proof must fail. The
 * bytes are written out with their assembly beside them.
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
#include "tests/unit/jit-code.h"
#include "util/error.h"

#define ENTRY 0x7f1234560000ull
#define RBX_BIT (1u << MS_DW_RBX)
#define RBP_BIT (1u << MS_DW_RBP)

static struct ms_prover *prover;

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

static enum ms_prove_result at(const uint8_t *code, size_t len, uint64_t off,
			       struct ms_proved_frame *f)
{
	return ms_prove(prover, code, len, ENTRY, ENTRY + off, f);
}

/* The proof at off succeeds with CFA = reg + cfa, %rsp + sp, and exactly the saves given. */
static void expect(const uint8_t *code, size_t len, uint64_t off, uint8_t reg, int32_t cfa,
		   int32_t sp, uint32_t saved, uint32_t lost)
{
	struct ms_proved_frame f;
	enum ms_prove_result r = at(code, len, off, &f);

	if (r != MS_PROVE_OK)
		fail_msg("offset %llu: %s", (unsigned long long)off, ms_prove_result_name(r));
	assert_int_equal(f.cfa_reg, reg);
	assert_int_equal(f.cfa_off, cfa);
	assert_int_equal(f.sp_off, sp);
	assert_int_equal(f.saved, saved);
	assert_int_equal(f.lost, lost);
}

static void expect_fail(const uint8_t *code, size_t len, uint64_t off, enum ms_prove_result want)
{
	struct ms_proved_frame f;
	enum ms_prove_result r = at(code, len, off, &f);

	if (r != want)
		fail_msg("offset %llu: %s, expected %s", (unsigned long long)off,
			 ms_prove_result_name(r), ms_prove_result_name(want));
}


static void test_trampoline(void **state)
{
	(void)state;
	expect(trampoline, sizeof(trampoline), 0, MS_DW_RSP, 8, 8, 0, 0);
	expect(trampoline, sizeof(trampoline), 4, MS_DW_RSP, 16, 16, 0, 0);
	/* the return address of the call: the frame of the evaluator's caller */
	expect(trampoline, sizeof(trampoline), 6, MS_DW_RSP, 16, 16, 0, 0);
	expect(trampoline, sizeof(trampoline), 10, MS_DW_RSP, 8, 8, 0, 0);
	for (uint64_t off = 1; off < 10; off++)
		if (off != 4 && off != 6)
			expect_fail(trampoline, sizeof(trampoline), off, MS_PROVE_MID_INSN);
	expect_fail(trampoline, sizeof(trampoline), 11, MS_PROVE_NOT_REACHED_RET);
	/* the map's function ends at the ret: nothing after it is the function's */
	expect_fail(trampoline, 11, 11, MS_PROVE_OUT_OF_BOUNDS);
}

/* The same built with CET (-fcf-protection): endbr64 first. */
static void test_trampoline_cet(void **state)
{
	static const uint8_t code[] = {
		0xf3, 0x0f, 0x1e, 0xfa,	/* 0: endbr64 */
		0x48, 0x83, 0xec, 0x08,	/* 4: sub rsp, 8 */
		0xff, 0xd1,		/* 8: call rcx */
		0x48, 0x83, 0xc4, 0x08,	/* 10: add rsp, 8 */
		0xc3,			/* 14: ret */
	};

	(void)state;
	expect(code, sizeof(code), 0, MS_DW_RSP, 8, 8, 0, 0);
	expect(code, sizeof(code), 4, MS_DW_RSP, 8, 8, 0, 0);
	expect(code, sizeof(code), 8, MS_DW_RSP, 16, 16, 0, 0);
	expect(code, sizeof(code), 10, MS_DW_RSP, 16, 16, 0, 0);
	expect(code, sizeof(code), 14, MS_DW_RSP, 8, 8, 0, 0);
}

/*
 * One step by the proved rule from the trampoline's call (its frame's pc
 * is the return address, offset 6) reaches its caller: %rsp + 16 holds
 * nothing of a frame pointer, and %rbp (garbage here) is not read.
 */
static void test_trampoline_step(void **state)
{
	uint64_t stack[4] = { 0x1111, 0x2222 /* rsp + 8: the caller's pc */, 0x3333, 0x4444 };
	const uint64_t sp = 0x7ffc00001000ull;
	struct ms_sampled_state st = {
		.reader = { ms_sampled_read }, .start = sp, .len = sizeof(stack),
		.bytes = (const uint8_t *)stack,
	};
	struct ms_regstate rs = { 0 };
	struct ms_proved_frame f;
	struct ms_cfi_rule rule;
	uint64_t cfa = 0;
	uint32_t end = MS_END_UNKNOWN;

	(void)state;
	assert_int_equal(at(trampoline, sizeof(trampoline), 6, &f), MS_PROVE_OK);
	ms_proved_rule(&f, &rule);
	assert_true(rule.flags & MS_CFI_SIMPLE);
	assert_false(rule.flags & MS_CFI_FRAME_POINTER);
	rs.val[MS_DW_RSP] = sp;
	rs.val[MS_DW_RBP] = 0xdeadbeef;
	rs.val[MS_DW_RBX] = 0xb0b0;
	rs.known = 1u << MS_DW_RSP | RBP_BIT | RBX_BIT;
	assert_true(ms_dwarf_step(&rs, &st.reader, &rule, NULL, sp, &cfa, &end));
	assert_int_equal(cfa, sp + 16);
	assert_int_equal(rs.val[MS_DW_RA], 0x2222);
	assert_int_equal(rs.val[MS_DW_RSP], sp + 16);
	/* the callee-saved registers are the caller's, unchanged */
	assert_int_equal(rs.val[MS_DW_RBX], 0xb0b0);
	assert_int_equal(rs.val[MS_DW_RBP], 0xdeadbeef);
	assert_false(rs.known & (1u << MS_DW_RAX));
}


static void test_classic(void **state)
{
	const size_t n = sizeof(classic);

	(void)state;
	expect(classic, n, 0, MS_DW_RSP, 8, 8, 0, 0);
	expect(classic, n, 1, MS_DW_RSP, 16, 16, RBP_BIT, 0);
	expect(classic, n, 4, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	expect(classic, n, 5, MS_DW_RBP, 16, 24, RBP_BIT | RBX_BIT, 0);
	expect(classic, n, 9, MS_DW_RBP, 16, 48, RBP_BIT | RBX_BIT, 0);
	expect(classic, n, 12, MS_DW_RBP, 16, 48, RBP_BIT | RBX_BIT, 0);
	expect(classic, n, 17, MS_DW_RBP, 16, 48, RBP_BIT | RBX_BIT, 0);
	expect(classic, n, 21, MS_DW_RBP, 16, 24, RBP_BIT | RBX_BIT, 0);
	/* rbx popped from its slot: the caller's again */
	expect(classic, n, 22, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	/* rbp popped: no frame pointer, the CFA is %rsp's again */
	expect(classic, n, 23, MS_DW_RSP, 8, 8, 0, 0);
	expect_fail(classic, n, 24, MS_PROVE_NOT_REACHED_RET);
	for (uint64_t off = 2; off < 4; off++)
		expect_fail(classic, n, off, MS_PROVE_MID_INSN);
	expect_fail(classic, n, 13, MS_PROVE_MID_INSN);
	expect_fail(classic, n, n, MS_PROVE_OUT_OF_BOUNDS);

	struct ms_proved_frame f;

	assert_int_equal(at(classic, n, 9, &f), MS_PROVE_OK);
	assert_int_equal(f.save_off[MS_DW_RBP], -16);
	assert_int_equal(f.save_off[MS_DW_RBX], -24);
	assert_int_equal(f.insns, 4);
}

/* One step from inside the classic frame reads the saves where they are. */
static void test_classic_step(void **state)
{
	const uint64_t sp = 0x7ffc00002000ull, cfa_want = sp + 48;
	uint64_t stack[8] = { 0 };
	struct ms_sampled_state st = {
		.reader = { ms_sampled_read }, .start = sp, .len = sizeof(stack),
		.bytes = (const uint8_t *)stack,
	};
	struct ms_regstate rs = { 0 };
	struct ms_proved_frame f;
	struct ms_cfi_rule rule;
	uint64_t cfa = 0, v = 0;
	uint32_t end = MS_END_UNKNOWN;

	(void)state;
	stack[5] = 0xcafe;		/* CFA - 8: the return address */
	stack[4] = 0x7ffc00009000ull;	/* CFA - 16: the caller's rbp */
	stack[3] = 0xbbbb;		/* CFA - 24: the caller's rbx */
	assert_int_equal(at(classic, sizeof(classic), 17, &f), MS_PROVE_OK);
	ms_proved_rule(&f, &rule);
	assert_true(rule.flags & MS_CFI_SIMPLE);
	assert_true(rule.flags & MS_CFI_FRAME_POINTER);
	rs.val[MS_DW_RSP] = sp;
	rs.val[MS_DW_RBP] = sp + 32;	/* CFA - 16 */
	rs.val[MS_DW_RBX] = 0x1234;	/* this frame's: mov rbx, rax */
	rs.known = 1u << MS_DW_RSP | RBP_BIT | RBX_BIT;
	assert_true(ms_dwarf_step(&rs, &st.reader, &rule, NULL, sp, &cfa, &end));
	assert_int_equal(cfa, cfa_want);
	assert_int_equal(rs.val[MS_DW_RA], 0xcafe);
	assert_true(ms_regstate_get(&rs, &st.reader, MS_DW_RBP, &v, &end));
	assert_int_equal(v, 0x7ffc00009000ull);
	assert_true(ms_regstate_get(&rs, &st.reader, MS_DW_RBX, &v, &end));
	assert_int_equal(v, 0xbbbb);
}

/* gcc's other epilogues: a restore by mov, then leave; lea rsp from rbp. */
static void test_epilogues(void **state)
{
	static const uint8_t leave[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x53,				/* 4: push rbx */
		0x48, 0x83, 0xec, 0x18,		/* 5: sub rsp, 24 */
		0x31, 0xdb,			/* 9: xor ebx, ebx */
		0x48, 0x8b, 0x5d, 0xf8,		/* 11: mov rbx, [rbp - 8] */
		0xc9,				/* 15: leave */
		0xc3,				/* 16: ret */
	};
	static const uint8_t realign[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x41, 0x54,			/* 4: push r12 */
		0x53,				/* 6: push rbx */
		0x48, 0x83, 0xe4, 0xf0,		/* 7: and rsp, -16 */
		0x90,				/* 11: nop */
	};
	static const uint8_t lea_ok[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x41, 0x54,			/* 4: push r12 */
		0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00, /* 6: sub rsp, 256 */
		0x48, 0x8d, 0x65, 0xf8,		/* 13: lea rsp, [rbp - 8] */
		0x41, 0x5c,			/* 17: pop r12 */
		0x5d,				/* 19: pop rbp */
		0xc3,				/* 20: ret */
	};

	(void)state;
	/* rbx overwritten while saved: still proved from its slot */
	expect(leave, sizeof(leave), 11, MS_DW_RBP, 16, 48, RBP_BIT | RBX_BIT, 0);
	expect(leave, sizeof(leave), 15, MS_DW_RBP, 16, 48, RBP_BIT | RBX_BIT, 0);
	/* leave freed rbx's slot; the mov had put its caller's value back */
	expect(leave, sizeof(leave), 16, MS_DW_RSP, 8, 8, 0, 0);

	expect(lea_ok, sizeof(lea_ok), 13, MS_DW_RBP, 16, 280, RBP_BIT | 1u << 12, 0);
	expect(lea_ok, sizeof(lea_ok), 17, MS_DW_RBP, 16, 24, RBP_BIT | 1u << 12, 0);
	expect(lea_ok, sizeof(lea_ok), 19, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	expect(lea_ok, sizeof(lea_ok), 20, MS_DW_RSP, 8, 8, 0, 0);

	/* a realigned stack is not modelled, frame pointer or not */
	expect(realign, sizeof(realign), 7, MS_DW_RBP, 16, 32, RBP_BIT | RBX_BIT | 1u << 12, 0);
	expect_fail(realign, sizeof(realign), 11, MS_PROVE_WRITES_RSP);
}

/* node/V8: a frame pointer, then the context and the function pushed. */
static void test_v8(void **state)
{
	static const uint8_t code[] = {
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

	(void)state;
	expect(code, sizeof(code), 4, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	expect(code, sizeof(code), 5, MS_DW_RBP, 16, 24, RBP_BIT, 0);
	expect(code, sizeof(code), 6, MS_DW_RBP, 16, 32, RBP_BIT, 0);
	expect(code, sizeof(code), 11, MS_DW_RBP, 16, 48, RBP_BIT, 0);
	expect(code, sizeof(code), 18, MS_DW_RBP, 16, 48, RBP_BIT, 0);
	expect(code, sizeof(code), 21, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	expect(code, sizeof(code), 22, MS_DW_RSP, 8, 8, 0, 0);
}

/* Nothing is proved past a jump, a conditional jump, a return or a trap. */
static void test_not_reached(void **state)
{
	static const uint8_t jmp[] = {
		0x55,		/* 0: push rbp */
		0xeb, 0x00,	/* 1: jmp +0 (to 3) */
		0x5d,		/* 3: pop rbp */
		0xc3,		/* 4: ret */
	};
	static const uint8_t jcc[] = {
		0x48, 0x85, 0xff,	/* 0: test rdi, rdi */
		0x74, 0x01,		/* 3: je +1 */
		0x53,			/* 5: push rbx */
		0x90,			/* 6: nop */
	};
	static const uint8_t jmpreg[] = {
		0x41, 0xff, 0xe3,	/* 0: jmp r11 */
		0x90,			/* 3: nop */
	};
	static const uint8_t ret[] = { 0xc3, 0x90 };	/* ret; nop */
	static const uint8_t ud2[] = { 0x0f, 0x0b, 0x90 };	/* ud2; nop */
	static const uint8_t hlt[] = { 0xf4, 0x90 };	/* hlt; nop */
	static const uint8_t loop[] = { 0xe2, 0xfe, 0x90 };	/* loop -2; nop */
	static const uint8_t sysret[] = { 0x48, 0x0f, 0x07, 0x90 };	/* sysretq; nop */

	(void)state;
	/* at the jump itself the frame is proved */
	expect(jmp, sizeof(jmp), 1, MS_DW_RSP, 16, 16, RBP_BIT, 0);
	expect_fail(jmp, sizeof(jmp), 3, MS_PROVE_NOT_REACHED_JUMP);
	expect_fail(jmp, sizeof(jmp), 4, MS_PROVE_NOT_REACHED_JUMP);
	expect(jcc, sizeof(jcc), 3, MS_DW_RSP, 8, 8, 0, 0);
	expect_fail(jcc, sizeof(jcc), 5, MS_PROVE_NOT_REACHED_JUMP);
	expect_fail(jcc, sizeof(jcc), 6, MS_PROVE_NOT_REACHED_JUMP);
	expect_fail(jmpreg, sizeof(jmpreg), 3, MS_PROVE_NOT_REACHED_JUMP);
	expect(ret, sizeof(ret), 0, MS_DW_RSP, 8, 8, 0, 0);
	expect_fail(ret, sizeof(ret), 1, MS_PROVE_NOT_REACHED_RET);
	expect_fail(ud2, sizeof(ud2), 2, MS_PROVE_NOT_REACHED_TRAP);
	expect_fail(hlt, sizeof(hlt), 1, MS_PROVE_NOT_REACHED_TRAP);
	expect_fail(loop, sizeof(loop), 2, MS_PROVE_NOT_REACHED_JUMP);
	/* no branch by category: caught as a write to the pc */
	expect_fail(sysret, sizeof(sysret), 3, MS_PROVE_NOT_REACHED_JUMP);
}

static void test_undecodable_and_cut(void **state)
{
	static const uint8_t bad[] = {
		0x55,		/* 0: push rbp */
		0x06,		/* 1: (push es: invalid in 64-bit mode) */
		0x90,		/* 2: nop */
	};
	static const uint8_t cut[] = {
		0x55,		/* 0: push rbp */
		0x90,		/* 1: nop */
		0x48, 0x83,	/* 2: sub rsp, ... cut by the end of the bytes */
	};

	(void)state;
	expect(bad, sizeof(bad), 1, MS_DW_RSP, 16, 16, RBP_BIT, 0);
	expect_fail(bad, sizeof(bad), 2, MS_PROVE_UNDECODABLE);
	expect(cut, sizeof(cut), 2, MS_DW_RSP, 16, 16, RBP_BIT, 0);
	expect_fail(cut, sizeof(cut), 3, MS_PROVE_CUT);
	/* the decoder sees no byte past len: the whole sub rsp, 8 is beyond */
	expect_fail(trampoline, 3, 2, MS_PROVE_CUT);
}

/* Writes to %rsp that no rule models, and writes over the return address. */
static void test_writes_rsp(void **state)
{
	static const uint8_t and_rsp[] = {
		0x48, 0x83, 0xe4, 0xf0,	/* 0: and rsp, -16 */
		0x90,			/* 4: nop */
	};
	static const uint8_t mov_rsp[] = { 0x48, 0x89, 0xc4, 0x90 };	/* mov rsp, rax; nop */
	static const uint8_t xchg[] = { 0x48, 0x94, 0x90 };		/* xchg rsp, rax; nop */
	static const uint8_t sub_odd[] = { 0x48, 0x83, 0xec, 0x04, 0x90 };	/* sub rsp, 4; nop */
	static const uint8_t sub_reg[] = { 0x48, 0x29, 0xc4, 0x90 };	/* sub rsp, rax; nop */
	static const uint8_t pop_ra[] = { 0x58, 0x90 };		/* pop rax; nop */
	static const uint8_t add_ra[] = { 0x48, 0x83, 0xc4, 0x08, 0x90 };	/* add rsp, 8; nop */
	static const uint8_t push16[] = { 0x66, 0x50, 0x90 };	/* push ax; nop */
	static const uint8_t getpc[] = {
		0xe8, 0x00, 0x00, 0x00, 0x00,	/* 0: call +0 (pushes its own pc) */
		0x58,				/* 5: pop rax */
	};
	static const uint8_t leave_nofp[] = { 0xc9, 0x90 };	/* leave; nop */
	static const uint8_t mov_rsp_rbp[] = { 0x55, 0x48, 0x89, 0xec, 0x90 }; /* push rbp; mov rsp, rbp; nop */
	static const uint8_t enter[] = { 0xc8, 0x10, 0x00, 0x00, 0x90 };	/* enter 16, 0; nop */
	static const uint8_t write_ra[] = { 0x48, 0x89, 0x04, 0x24, 0x90 };	/* mov [rsp], rax; nop */
	static const uint8_t write_ra_fp[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x48, 0x89, 0x45, 0x08,		/* 4: mov [rbp + 8], rax */
		0x90,				/* 8: nop */
	};
	static const uint8_t deep[] = {
		0x48, 0x81, 0xec, 0x00, 0x00, 0x00, 0x02,	/* 0: sub rsp, 0x2000000 */
		0x90,						/* 7: nop */
	};
	static const uint8_t deeper[] = {
		0x48, 0x81, 0xec, 0x00, 0x00, 0x60, 0x00,	/* 0: sub rsp, 0x600000 */
		0x48, 0x81, 0xec, 0x00, 0x00, 0x60, 0x00,	/* 7: sub rsp, 0x600000 */
		0x48, 0x81, 0xec, 0x00, 0x00, 0x60, 0x00,	/* 14: sub rsp, 0x600000 */
		0x90,						/* 21: nop */
	};

	(void)state;
	expect_fail(and_rsp, sizeof(and_rsp), 4, MS_PROVE_WRITES_RSP);
	expect_fail(mov_rsp, sizeof(mov_rsp), 3, MS_PROVE_WRITES_RSP);
	expect_fail(xchg, sizeof(xchg), 2, MS_PROVE_WRITES_RSP);
	expect_fail(sub_odd, sizeof(sub_odd), 4, MS_PROVE_WRITES_RSP);
	expect_fail(sub_reg, sizeof(sub_reg), 3, MS_PROVE_WRITES_RSP);
	expect_fail(pop_ra, sizeof(pop_ra), 1, MS_PROVE_WRITES_RSP);
	expect_fail(add_ra, sizeof(add_ra), 4, MS_PROVE_WRITES_RSP);
	expect_fail(push16, sizeof(push16), 2, MS_PROVE_WRITES_RSP);
	expect_fail(getpc, sizeof(getpc), 5, MS_PROVE_WRITES_RSP);
	expect_fail(leave_nofp, sizeof(leave_nofp), 1, MS_PROVE_WRITES_RSP);
	expect_fail(mov_rsp_rbp, sizeof(mov_rsp_rbp), 4, MS_PROVE_WRITES_RSP);
	expect_fail(enter, sizeof(enter), 4, MS_PROVE_WRITES_RSP);
	expect_fail(write_ra, sizeof(write_ra), 4, MS_PROVE_WRITES_RA);
	expect_fail(write_ra_fp, sizeof(write_ra_fp), 8, MS_PROVE_WRITES_RA);
	expect_fail(deep, sizeof(deep), 7, MS_PROVE_TOO_DEEP);
	/* each step is small, the sum is not */
	expect(deeper, sizeof(deeper), 14, MS_DW_RSP, 0xc00008, 0xc00008, 0, 0);
	expect_fail(deeper, sizeof(deeper), 21, MS_PROVE_TOO_DEEP);
}

/* Callee-saved registers: written before saved (lost), saved by mov, slots overwritten. */
static void test_callee_saved(void **state)
{
	static const uint8_t lost[] = {
		0xbb, 0x01, 0x00, 0x00, 0x00,	/* 0: mov ebx, 1 */
		0x53,				/* 5: push rbx (not the caller's any more) */
		0x41, 0x55,			/* 6: push r13 */
		0x90,				/* 8: nop */
	};
	static const uint8_t movsave[] = {
		0x48, 0x83, 0xec, 0x18,		/* 0: sub rsp, 24 */
		0x48, 0x89, 0x5c, 0x24, 0x08,	/* 4: mov [rsp + 8], rbx */
		0x4c, 0x89, 0x24, 0x24,		/* 9: mov [rsp], r12 */
		0x45, 0x31, 0xe4,		/* 13: xor r12d, r12d */
		0x48, 0xc7, 0x44, 0x24, 0x08, 0x00, 0x00, 0x00, 0x00, /* 16: mov qword [rsp + 8], 0 */
		0x90,				/* 25: nop */
	};
	static const uint8_t rbp_gp[] = {
		0x55,				/* 0: push rbp */
		0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
		0x48, 0x89, 0xfd,		/* 4: mov rbp, rdi (rbp as a plain register) */
		0x90,				/* 7: nop */
	};
	static const uint8_t popped_away[] = {
		0x53,		/* 0: push rbx */
		0x58,		/* 1: pop rax (rbx's slot freed) */
		0x90,		/* 2: nop */
	};
	static const uint8_t popped_lost[] = {
		0x53,		/* 0: push rbx */
		0x31, 0xdb,	/* 1: xor ebx, ebx */
		0x58,		/* 3: pop rax (rbx's slot freed, rbx not the caller's) */
		0x90,		/* 4: nop */
	};
	static const uint8_t crossed[] = {
		0x53,		/* 0: push rbx */
		0x41, 0x54,	/* 1: push r12 */
		0x5b,		/* 3: pop rbx (r12's slot: rbx is not the caller's now) */
		0x90,		/* 4: nop */
	};
	struct ms_proved_frame f;

	(void)state;
	expect(crossed, sizeof(crossed), 4, MS_DW_RSP, 16, 16, RBX_BIT, 0);
	expect(popped_away, sizeof(popped_away), 1, MS_DW_RSP, 16, 16, RBX_BIT, 0);
	expect(popped_away, sizeof(popped_away), 2, MS_DW_RSP, 8, 8, 0, 0);
	expect(popped_lost, sizeof(popped_lost), 3, MS_DW_RSP, 16, 16, RBX_BIT, 0);
	expect(popped_lost, sizeof(popped_lost), 4, MS_DW_RSP, 8, 8, 0, RBX_BIT);
	expect(lost, sizeof(lost), 8, MS_DW_RSP, 24, 24, 1u << 13, RBX_BIT);
	assert_int_equal(at(lost, sizeof(lost), 8, &f), MS_PROVE_OK);
	assert_int_equal(f.save_off[13], -24);

	expect(movsave, sizeof(movsave), 9, MS_DW_RSP, 32, 32, RBX_BIT, 0);
	expect(movsave, sizeof(movsave), 13, MS_DW_RSP, 32, 32, RBX_BIT | 1u << 12, 0);
	assert_int_equal(at(movsave, sizeof(movsave), 13, &f), MS_PROVE_OK);
	assert_int_equal(f.save_off[MS_DW_RBX], -24);
	assert_int_equal(f.save_off[12], -32);
	/* rbx's slot overwritten: rbx itself is still the caller's */
	expect(movsave, sizeof(movsave), 25, MS_DW_RSP, 32, 32, 1u << 12, 0);

	/* rbp no frame pointer any more: the CFA is %rsp's, rbp still saved */
	expect(rbp_gp, sizeof(rbp_gp), 4, MS_DW_RBP, 16, 16, RBP_BIT, 0);
	expect(rbp_gp, sizeof(rbp_gp), 7, MS_DW_RSP, 16, 16, RBP_BIT, 0);

	/* a lost register is undefined in the rule */
	struct ms_cfi_rule rule;

	assert_int_equal(at(lost, sizeof(lost), 8, &f), MS_PROVE_OK);
	ms_proved_rule(&f, &rule);
	assert_true(rule.undef & RBX_BIT);
	assert_false(rule.undef & (1u << 13));
	assert_true(rule.undef & (1u << MS_DW_RAX));
	assert_false(rule.undef & (1u << MS_DW_RSP));
}

static void test_bounds(void **state)
{
	static uint8_t nops[MS_PROVE_MAX_INSNS + 2];
	struct ms_proved_frame f;

	(void)state;
	memset(nops, 0x90, sizeof(nops));
	expect(nops, sizeof(nops), MS_PROVE_MAX_INSNS, MS_DW_RSP, 8, 8, 0, 0);
	expect_fail(nops, sizeof(nops), MS_PROVE_MAX_INSNS + 1, MS_PROVE_TOO_LONG);
	expect_fail(trampoline, sizeof(trampoline), sizeof(trampoline), MS_PROVE_OUT_OF_BOUNDS);
	expect_fail(trampoline, 0, 0, MS_PROVE_OUT_OF_BOUNDS);
	assert_int_equal(ms_prove(prover, trampoline, sizeof(trampoline), ENTRY, ENTRY - 1, &f),
			 MS_PROVE_OUT_OF_BOUNDS);
	assert_int_equal(ms_prove(prover, trampoline, sizeof(trampoline), ENTRY, 0, &f),
			 MS_PROVE_OUT_OF_BOUNDS);
	assert_int_equal(ms_prove(prover, trampoline, sizeof(trampoline), UINT64_MAX - 4,
				  UINT64_MAX, &f), MS_PROVE_OK);
	assert_int_equal(f.sp_off, 16);
}

static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < MS_PROVE_RESULTS; i++) {
		const char *n = ms_prove_result_name((enum ms_prove_result)i);

		assert_non_null(n);
		assert_string_not_equal(n, "unknown");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(n, ms_prove_result_name((enum ms_prove_result)j));
	}
	assert_string_equal(ms_prove_result_name(MS_PROVE_OK), "ok");
	assert_string_equal(ms_prove_result_name(MS_PROVE_RESULTS), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_trampoline_cet),
		cmocka_unit_test(test_trampoline_step),
		cmocka_unit_test(test_classic),
		cmocka_unit_test(test_classic_step),
		cmocka_unit_test(test_epilogues),
		cmocka_unit_test(test_v8),
		cmocka_unit_test(test_not_reached),
		cmocka_unit_test(test_undecodable_and_cut),
		cmocka_unit_test(test_writes_rsp),
		cmocka_unit_test(test_callee_saved),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_names),
	};

	ms_set_progname("prove-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}
