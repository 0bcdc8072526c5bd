/*
 * ms-symbolize's model: frame facts (function name, symbol start, or the
 * reason there is none) for each unique (module, address) of the stacks.
 *
 * Modules come from MODULE records. A module's file is opened by its path
 * only when it is proved to be the module (unwind/elffile.h: build id, or
 * device, inode, size and mtime); its symbol tables are read once, on the
 * first frame that needs them (symbols/symtab.h). Kernel frames are named
 * from kallsyms, read once. Failures are reasons (enum ms_frame_reason),
 * never a guessed name:
 *   MS_SYM_NO_MODULE  the frame's module is MS_MODULE_UNKNOWN or was never
 *                     described by a MODULE record;
 *   MS_SYM_NO_FILE    no file to read: the file cannot be opened, the vdso
 *                     and anonymous memory (for now), kallsyms unreadable
 *                     or its addresses hidden by kernel.kptr_restrict;
 *   MS_SYM_IDENTITY   the file at the path is not the module that ran;
 *   MS_SYM_BAD_ELF    the file is not ELF or its tables are corrupt;
 *   MS_SYM_NO_SYMBOL  no function symbol covers the address.
 * A return-address frame (MS_FRAME_RETURN) is looked up at address - 1, so
 * that a call at the very end of a function names the caller; the fact
 * keeps the frame's address. A frame with MS_FRAME_FILE_OFFSET is moved to
 * a virtual address through the proved file's PT_LOAD headers first.
 *
 * Each (module, address) is looked up once: the facts live in an open
 * addressing table, grown by doubling, so a repeated frame costs one hash
 * probe and no allocation.
 */
#ifndef MS_SYMBOLS_SYMBOLIZE_H
#define MS_SYMBOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

struct ms_symbolizer;

struct ms_symbolize_options {
	const char *kallsyms;	/* NULL: /proc/kallsyms */
	bool text;		/* stage: print stacks as text, no stream */
};

struct ms_symbolize_stats {
	uint64_t stacks, frames;
	uint64_t unique;		/* (module, address) pairs looked up */
	uint64_t reasons[MS_SYM_NO_MODULE + 1];	/* of unique frames */
	uint64_t modules, modules_loaded;
};

struct ms_symbolizer *ms_symbolizer_new(const struct ms_symbolize_options *opts);
void ms_symbolizer_free(struct ms_symbolizer *s);

/* Name the input and byte offset of the record being handled, for messages. */
void ms_symbolizer_set_origin(struct ms_symbolizer *s, const char *name, uint64_t offset);
/*
 * Describe a module (a MODULE record). Ids are dense: an id described
 * twice, or far past those described so far, is an error.
 */
int ms_symbolizer_module(struct ms_symbolizer *s, const struct ms_module *m);
/*
 * A FRAME record from upstream: its (module, address) counts as known and
 * is not looked up again. Its name is copied.
 */
int ms_symbolizer_known(struct ms_symbolizer *s, const struct ms_frame *f);
/*
 * The fact for one frame; *is_new tells whether this is the first time the
 * pair was seen (and its FRAME record still has to be written). out's name
 * borrows from the symbolizer. Returns 0, or -1 after a message.
 */
int ms_symbolizer_frame(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			struct ms_frame *out, bool *is_new);
/*
 * Start reading kallsyms in a thread now, so that the first kernel frame
 * does not stall the pipeline for the ~100 ms the read takes. The table is
 * used only after the thread is joined (at the first kernel frame).
 * Returns 0; a thread that cannot start means a read in line later.
 */
int ms_symbolizer_preload_kernel(struct ms_symbolizer *s);
/* The path of module id, or NULL. */
const char *ms_symbolizer_module_path(const struct ms_symbolizer *s, uint32_t id);

const struct ms_symbolize_stats *ms_symbolizer_stats(const struct ms_symbolizer *s);
struct ms_problems *ms_symbolizer_problems(struct ms_symbolizer *s);

/*
 * The ms-symbolize stage: read a stream from in_fd and write it to out_fd
 * with a FRAME record before each STACK for every frame of it not seen
 * before; everything passes through. With opts->text, write instead one
 * line per stack:
 *   PID TID TIME END FRAME;FRAME;...
 * outermost frame first, each frame its function name, or
 * PATH+0xADDRESS(REASON) when it has none; END is the stack's end reason.
 * Returns an exit code as ms_unwind_stage() does.
 */
int ms_symbolize_stage(int in_fd, const char *in_name, int out_fd,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats);

#endif
