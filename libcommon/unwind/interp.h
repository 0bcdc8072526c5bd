/*
 * Python interpreters among a stream's modules: a module is one when its
 * ELF file (the one ms-unwind proved the module's) defines
 * _PyEval_EvalFrameDefault, the interpreter's loop, in .symtab or
 * .dynsym. Every frame of such a module is marked MS_FRAME_INTERPRETER;
 * a frame whose address lies in the loop (the function, and the parts a
 * compiler split off it: _PyEval_EvalFrameDefault.cold, ...) is an
 * activation of it, which runs one segment of Python frames
 * (python/splice.h).
 */
#ifndef MS_UNWIND_INTERP_H
#define MS_UNWIND_INTERP_H
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#define MS_INTERP_LOOP "_PyEval_EvalFrameDefault"
/* Parts of the loop kept (the function and its .cold and .part pieces). */
#define MS_INTERP_RANGES 4

struct ms_interp {
	uint32_t n;				/* 0: not an interpreter */
	uint64_t lo[MS_INTERP_RANGES], hi[MS_INTERP_RANGES];	/* virtual addresses */
};

/* Fill out from elf's symbol tables: true when it defines the loop. */
bool ms_interp_scan(Elf *elf, struct ms_interp *out);

/* Whether the virtual address addr lies in the loop. */
static inline bool ms_interp_in_loop(const struct ms_interp *in, uint64_t addr)
{
	for (uint32_t i = 0; i < in->n; i++)
		if (addr >= in->lo[i] && addr < in->hi[i])
			return true;
	return false;
}

#endif
