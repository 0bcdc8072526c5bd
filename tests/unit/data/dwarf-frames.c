/*
 * Functions with hand-written call-frame information for the DWARF unwinder's
 * unit tests (tests/unit/dwarf-test.c): every rule is exact, whatever the
 * compiler. Nothing here is ever run; the tests make register states and
 * stack bytes as if it had, and look its labels up in .symtab.
 *
 *   t_outer      the thread's entry: return address undefined (as _start)
 *   t_fp         a standard frame: CFA = %rbp + 16, %rbp at CFA - 16
 *   t_nofp       no frame pointer: CFA = %rsp + 48, %rbx at CFA - 16
 *   t_leaf       CFA = %rsp + 32 in its body, %rsp + 8 at its entry
 *   t_nocfi      no CFI at all
 *   t_r10        CFA = %r10 (caller-saved: unknown in a caller's frame)
 *   t_realign    CFA = [%rbp - 8], an expression with a read (gcc's realigned main)
 *   t_plt        a PLT entry's CFA expression (rsp + 8, or + 16 from byte 11)
 *   t_sig        a signal frame: the caller's PC and %rbp saved by expressions
 *
 * Built three ways (libcommon/unwind/local.mk): with .eh_frame, with
 * .debug_frame only (-DDEBUG_FRAME), and from that, stripped files whose CFI
 * is in a separate debug file found by build id or by .gnu_debuglink.
 */
#ifdef DEBUG_FRAME
__asm__(".cfi_sections .debug_frame\n");
#endif

#define FUNC(name) ".globl " #name "\n.type " #name ", @function\n" #name ":\n"
#define LABEL(name) ".globl " #name "\n" #name ":\n"

__asm__(".text\n"
	".p2align 4\n"
	FUNC(t_outer)
	"\t.cfi_startproc\n"
	"\t.cfi_undefined rip\n"
	"\txor %ebp, %ebp\n"
	"\tcall t_fp\n"
	LABEL(t_outer_ret)
	"\thlt\n"
	"\t.cfi_endproc\n"
	".size t_outer, .-t_outer\n"

	".p2align 4\n"
	FUNC(t_fp)
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset rbp, -16\n"
	"\tmov %rsp, %rbp\n"
	"\t.cfi_def_cfa_register rbp\n"
	"\tsub $16, %rsp\n"
	"\tcall t_nofp\n"
	LABEL(t_fp_ret)
	"\tleave\n"
	"\t.cfi_def_cfa rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size t_fp, .-t_fp\n"

	".p2align 4\n"
	FUNC(t_nofp)
	"\t.cfi_startproc\n"
	"\tpush %rbx\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset rbx, -16\n"
	"\tsub $32, %rsp\n"
	"\t.cfi_def_cfa_offset 48\n"
	"\tcall t_leaf\n"
	LABEL(t_nofp_ret)
	"\tadd $32, %rsp\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\tpop %rbx\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size t_nofp, .-t_nofp\n"

	".p2align 4\n"
	FUNC(t_leaf)
	"\t.cfi_startproc\n"
	"\tsub $24, %rsp\n"
	"\t.cfi_def_cfa_offset 32\n"
	LABEL(t_leaf_body)
	"\tnop\n"
	"\tnop\n"
	"\tadd $24, %rsp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size t_leaf, .-t_leaf\n"

	/* Padding with no CFI before and after: t_nocfi is in no FDE. */
	".p2align 4\n"
	FUNC(t_nocfi)
	"\tnop\n"
	"\tcall t_leaf\n"
	LABEL(t_nocfi_ret)
	"\tret\n"
	".size t_nocfi, .-t_nocfi\n"

	".p2align 4\n"
	FUNC(t_r10)
	"\t.cfi_startproc\n"
	"\tlea 8(%rsp), %r10\n"
	"\t.cfi_def_cfa r10, 0\n"
	"\tcall t_leaf\n"
	LABEL(t_r10_ret)
	"\tret\n"
	"\t.cfi_endproc\n"
	".size t_r10, .-t_r10\n"

	".p2align 4\n"
	FUNC(t_realign)
	"\t.cfi_startproc\n"
	"\tnop\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg6 (rbp) -8; DW_OP_deref */
	"\t.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n"
	/* DW_CFA_expression rbp: DW_OP_breg6 (rbp) 0 */
	"\t.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n"
	LABEL(t_realign_body)
	"\tnop\n"
	"\tcall t_leaf\n"
	LABEL(t_realign_ret)
	"\tret\n"
	"\t.cfi_endproc\n"
	".size t_realign, .-t_realign\n"

	/*
	 * A PLT entry as binutils writes its CFI: DW_CFA_def_cfa_expression
	 * DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
	 * DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus.
	 */
	".p2align 4\n"
	FUNC(t_plt)
	"\t.cfi_startproc\n"
	"\t.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
	LABEL(t_plt_late)
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	"\t.cfi_endproc\n"
	".size t_plt, .-t_plt\n"

	/*
	 * A signal trampoline: CFA = [%rsp + 16], the interrupted PC saved at
	 * %rsp + 8 and %rbp at %rsp + 0.
	 */
	".p2align 4\n"
	FUNC(t_sig)
	"\t.cfi_startproc simple\n"
	"\t.cfi_signal_frame\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 (rsp) 16; DW_OP_deref */
	"\t.cfi_escape 0x0f, 0x03, 0x77, 0x10, 0x06\n"
	/* DW_CFA_expression rip: DW_OP_breg7 (rsp) 8 */
	"\t.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x08\n"
	/* DW_CFA_expression rbp: DW_OP_breg7 (rsp) 0 */
	"\t.cfi_escape 0x10, 0x06, 0x02, 0x77, 0x00\n"
	"\tnop\n"
	LABEL(t_sig_body)
	"\tnop\n"
	"\tnop\n"
	"\t.cfi_endproc\n"
	".size t_sig, .-t_sig\n");
