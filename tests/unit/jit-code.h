/*
 * Machine code the JIT tests prove frames over (prove-test, rows-test),
 * hand-assembled, each instruction's offset and assembly beside its bytes.
 */
#ifndef MS_TESTS_JIT_CODE_H
#define MS_TESTS_JIT_CODE_H

#include <stdint.h>

/* CPython 3.12's Python/asm_trampoline.S, as libpython3.12.so holds it. */
static const uint8_t trampoline[] = {
	0x48, 0x83, 0xec, 0x08,	/* 0: sub rsp, 8 */
	0xff, 0xd1,		/* 4: call rcx */
	0x48, 0x83, 0xc4, 0x08,	/* 6: add rsp, 8 */
	0xc3,			/* 10: ret */
	0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* 11: nopw (padding) */
};

/* A classic frame: frame pointer, a saved rbx, locals, a call, the epilogue. */
static const uint8_t classic[] = {
	0x55,				/* 0: push rbp */
	0x48, 0x89, 0xe5,		/* 1: mov rbp, rsp */
	0x53,				/* 4: push rbx */
	0x48, 0x83, 0xec, 0x18,		/* 5: sub rsp, 24 */
	0x48, 0x89, 0xc3,		/* 9: mov rbx, rax */
	0xe8, 0x10, 0x00, 0x00, 0x00,	/* 12: call +16 */
	0x48, 0x83, 0xc4, 0x18,		/* 17: add rsp, 24 */
	0x5b,				/* 21: pop rbx */
	0x5d,				/* 22: pop rbp */
	0xc3,				/* 23: ret */
	0xcc,				/* 24: int3 */
};

#endif
