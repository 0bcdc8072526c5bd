/*
 * A stand-in for a Python interpreter's module, for ms-unwind's splice of
 * Python frames (tests/unit/mkpystream.c, tests/0770-python-splice.bats):
 * it defines _PyEval_EvalFrameDefault, so ms-unwind takes it for an
 * interpreter, and every function has a 16-byte frame without a frame
 * pointer (CFA = %rsp + 16 in its body, as -O2 code has), with exact
 * call-frame information, so that the DWARF walk cache keeps its walks. Nothing here is ever run: the generator makes
 * register states and stack bytes as if it had, and looks its labels up
 * in .symtab.
 *
 *   py_main                        the thread's entry (return address undefined)
 *   _PyEval_EvalFrameDefault       the loop: a frame here is an activation
 *   _PyEval_EvalFrameDefault.cold  a part split off the loop: an activation too
 *   interp_helper                  the interpreter's, outside the loop
 *   c_leaf                         C code a Python function called
 * Each calls the next at its label NAME_ret (c_leaf_body: inside c_leaf).
 */
#define FUNC(name) ".globl " #name "\n.type " #name ", @function\n" #name ":\n"
#define LOCAL_FUNC(name) ".type " name ", @function\n" name ":\n"
#define LABEL(name) ".globl " #name "\n" #name ":\n"
/* sub $8, %rsp: CFA = %rsp + 16 */
#define PROLOGUE "\t.cfi_startproc\n\tsub $8, %rsp\n\t.cfi_def_cfa_offset 16\n"
#define EPILOGUE "\tadd $8, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"

__asm__(".text\n"
	".p2align 4\n"
	FUNC(py_main)
	"\t.cfi_startproc\n"
	"\t.cfi_undefined rip\n"
	"\txor %ebp, %ebp\n"
	"\tcall _PyEval_EvalFrameDefault\n"
	LABEL(py_main_ret)
	"\thlt\n"
	"\t.cfi_endproc\n"
	".size py_main, .-py_main\n"

	".p2align 4\n"
	FUNC(_PyEval_EvalFrameDefault)
	PROLOGUE
	"\tcall interp_helper\n"
	LABEL(eval_ret)
	"\tnop\n"
	EPILOGUE
	".size _PyEval_EvalFrameDefault, .-_PyEval_EvalFrameDefault\n"

	".p2align 4\n"
	LOCAL_FUNC("_PyEval_EvalFrameDefault.cold")
	PROLOGUE
	"\tcall interp_helper\n"
	LABEL(eval_cold_ret)
	"\tnop\n"
	EPILOGUE
	".size _PyEval_EvalFrameDefault.cold, .-_PyEval_EvalFrameDefault.cold\n"

	".p2align 4\n"
	FUNC(interp_helper)
	PROLOGUE
	"\tcall c_leaf\n"
	LABEL(interp_helper_ret)
	"\tnop\n"
	EPILOGUE
	".size interp_helper, .-interp_helper\n"

	".p2align 4\n"
	FUNC(c_leaf)
	PROLOGUE
	LABEL(c_leaf_body)
	"\tnop\n"
	"\tnop\n"
	EPILOGUE
	".size c_leaf, .-c_leaf\n");
