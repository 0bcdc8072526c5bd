/*
 * A module for the debug-file search test (tests/unit/debugfind-test.c):
 * one function with hand-written call-frame information in .debug_frame.
 * Built several ways with one build id: its name (NAME) and the CFA offset
 * its CFI states in the body (CFA) differ by build, its code does not, so
 * what the unwinder walks and the symbolizer names tells which build's
 * file each read. Nothing here is ever run.
 */
#ifndef NAME
#define NAME pick_a
#endif
#ifndef CFA
#define CFA 16
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

__asm__(".cfi_sections .debug_frame\n"
	".text\n"
	".p2align 4\n"
	/* Hidden: not in .dynsym, so the stripped module names nothing. */
	".globl " STR(NAME) "\n"
	".hidden " STR(NAME) "\n"
	".type " STR(NAME) ", @function\n"
	STR(NAME) ":\n"
	"\t.cfi_startproc\n"
	"\tsub $24, %rsp\n"		/* 4 bytes: the body starts at NAME + 4 */
	"\t.cfi_def_cfa_offset " STR(CFA) "\n"
	"\tnop\n"
	"\tnop\n"
	"\tadd $24, %rsp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size " STR(NAME) ", .-" STR(NAME) "\n");

/* Something for the debug information to describe: each build has DWARF. */
__attribute__((used)) static const int pick_cfa = CFA;
