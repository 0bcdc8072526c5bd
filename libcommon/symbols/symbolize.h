/*
 * ms-symbolize's model: frame facts for each unique (module, address) of
 * the stacks: the function (demangled), the inline chain with source files
 * and lines, the function's start, and the reason for whatever is missing.
 *
 * Modules come from MODULE records. A module's file is opened by its path
 * only when it is proved to be the module (elf/elffile.h: build id, or
 * device, inode, size and mtime). Its debug information is the module's
 * own DWARF, or a separate debug file proved by build id
 * (elf/debugfind.h: --debug-dir, /usr/lib/debug/.build-id,
 * .gnu_debuglink, debuginfod); a module whose file is gone or replaced is
 * still symbolized from a debug file that its build id proves. Everything
 * is read once per module, on the first frame that needs it; the DWARF is
 * indexed once per compilation unit (dwarf/dwarfidx.h). A module with a
 * build id has its symbol table mapped from a cache (symbols/symcache.h),
 * dropped for the ELF files' tables when a lookup finds it corrupt.
 *
 * Each frame is named by the best evidence there is, in this order:
 *  1. DWARF: the inline chain, file and line (reason MS_SYM_OK);
 *  2. .symtab (of the module or its debug file), then .dynsym: a name
 *     without lines, the reason saying why there are none
 *     (MS_SYM_NO_DEBUG, MS_SYM_DEBUG_MISMATCH, MS_SYM_BAD_DWARF,
 *     MS_SYM_NOT_IN_DEBUG);
 *  3. the .eh_frame FDE that covers the address: no name, its start as
 *     symbol_start (MS_SYM_FDE_ONLY);
 *  4. nothing covers it: MS_SYM_NO_SYMBOL.
 * Module-level failures are reasons of every frame in the module:
 *   MS_SYM_NO_MODULE  the module is MS_MODULE_UNKNOWN or was never
 *                     described by a MODULE record;
 *   MS_SYM_NO_FILE    no file and no debug file to read: the file cannot
 *                     be opened, the vdso and anonymous memory (for now),
 *                     kallsyms unreadable or hidden by kptr_restrict;
 *   MS_SYM_IDENTITY   the file at the path is not the module that ran (and
 *                     no debug file proves it); for the kernel, the running
 *                     kernel's build id is not the module's;
 *   MS_SYM_BAD_ELF    the file is not ELF or its tables are corrupt.
 * A perf-map module (MS_MODULE_PERF_MAP: JIT code), a jit-object module
 * (MS_MODULE_JIT_OBJECT: a registered JIT object) or the interpreted module
 * (MS_MODULE_INTERPRETED: Python frames) is never read: ms-unwind
 * writes the FRAME record of each of its frames (ms_symbolizer_known()),
 * and a pair it did not name gets MS_SYM_NO_SYMBOL, with no file access.
 * Kernel frames are named from kallsyms when the kernel's MODULE record
 * arrives (so only streams with kernel frames pay for it): its cache
 * (kcache.h) is mapped there and then, or else /proc/kallsyms is read in a
 * thread. A return-address frame (MS_FRAME_RETURN) is looked up at
 * address - 1, so that a call at the very end of a function names the
 * caller; the fact keeps the frame's address. A frame with
 * MS_FRAME_FILE_OFFSET is moved to a virtual address through the PT_LOAD
 * headers of the proved file (or debug file) first.
 *
 * Each (module, address) is looked up once: the facts live in an open
 * addressing table, grown by doubling, so a repeated frame costs one hash
 * probe and no allocation. Every module-level problem is also counted in
 * the stage's problems (ms_symbolizer_problems()).
 */
#ifndef MS_SYMBOLS_SYMBOLIZE_H
#define MS_SYMBOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stream/records.h"

struct ms_symbolizer;

struct ms_symbolize_options {
	const char *kallsyms;	/* NULL: /proc/kallsyms */
	const char *kernel_notes;	/* NULL: /sys/kernel/notes */
	const char *const *debug_dirs;	/* --debug-dir, in order */
	uint32_t n_debug_dirs;
	const char *system_debug_dir;	/* NULL: /usr/lib/debug; "": none */
	bool text;		/* stage: print stacks as text, no stream */
	bool text_lines;	/* text: each function with its file:line or reason */
	/*
	 * The process exits right after the stage or batch: the symbolizer is
	 * left to the kernel (kept reachable, so not a leak) instead of being
	 * torn down; freeing libdw's trees and unmapping the debug files cost
	 * a sixth of a short run.
	 */
	bool exiting;
};

#define MS_SYM_REASONS (MS_SYM_FDE_ONLY + 1)

struct ms_symbolize_stats {
	uint64_t stacks, frames;
	uint64_t unique;		/* (module, address) pairs looked up */
	uint64_t reasons[MS_SYM_REASONS];	/* of unique frames */
	uint64_t modules, modules_loaded;
	uint64_t debug_files;		/* modules with DWARF (own or separate) */
	uint64_t units_indexed;		/* DWARF compilation units walked */
};

struct ms_symbolizer *ms_symbolizer_new(const struct ms_symbolize_options *opts);
void ms_symbolizer_free(struct ms_symbolizer *s);
/*
 * Instead of ms_symbolizer_free() when the process exits next: wait for
 * the kallsyms thread (which may be writing its cache) and keep s
 * reachable until exit, freeing nothing. NULL is allowed.
 */
void ms_symbolizer_leave(struct ms_symbolizer *s);

/* Name the input and byte offset of the record being handled, for messages. */
void ms_symbolizer_set_origin(struct ms_symbolizer *s, const char *name, uint64_t offset);
/*
 * Describe a module (a MODULE record). Ids are dense: an id described
 * twice, or far past those described so far, is an error. A kernel module
 * starts the read of kallsyms in a thread (see above).
 */
int ms_symbolizer_module(struct ms_symbolizer *s, const struct ms_module *m);
/*
 * The vdso's image (ms-collect's vdso record): vdso modules whose build id
 * is the image's are named from its symbol table. The first image is kept
 * (copied); 0, or -1 after a message (out of memory).
 */
int ms_symbolizer_vdso(struct ms_symbolizer *s, const struct ms_vdso *v);
/*
 * A FRAME record from upstream: its (module, address) counts as known and
 * is not looked up again. Its name is copied; its lines are not kept.
 */
int ms_symbolizer_known(struct ms_symbolizer *s, const struct ms_frame *f);
/*
 * The fact for one frame, lines included; *is_new tells whether this is
 * the first time the pair was seen (and its FRAME record still has to be
 * written). out's strings borrow from the symbolizer until it is freed.
 * Returns 0, or -1 after a message.
 */
int ms_symbolizer_frame(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			struct ms_frame *out, bool *is_new);
/*
 * The stream's question: the fact for f only when the pair is new
 * (returns 1 with out filled, as ms_symbolizer_frame() does); a known pair
 * returns 0 and fills nothing, for the cost of a compare (the pair asked
 * about last) or one probe. -1 after a message.
 */
int ms_symbolizer_frame_if_new(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			       struct ms_frame *out);
/*
 * Map the kallsyms cache now, or when there is none start reading kallsyms
 * in a thread, so that the first kernel frame does not stall the pipeline
 * for the ~100 ms the read takes. The table is used only after the thread
 * is joined (at the first kernel frame). Returns 0; a thread that cannot
 * start means a read in line later.
 */
int ms_symbolizer_preload_kernel(struct ms_symbolizer *s);
/* Whether kallsyms was read or is being read (for tests). */
bool ms_symbolizer_kernel_loading(const struct ms_symbolizer *s);
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
 * outermost frame first, each frame its function name (a frame with
 * inlined calls gives one name per function of its chain, outermost
 * first), or PATH+0xADDRESS(REASON) when it has none (PATH+0xSTART for
 * fde-only, START being the function's start); END is the stack's end
 * reason. With opts->text_lines each name is followed by " (FILE:LINE)",
 * or " (REASON)" when the frame has no lines.
 * Runs on the stage loop (stream/stage.h), whose exit status it returns.
 */
int ms_symbolize_stage(int in_fd, const char *in_name, int out_fd,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats);

/*
 * Batch mode (the benchmark's, and a check against addr2line): symbolize
 * each address of in (one per line, hex, 0x optional) as an address in
 * the ELF file at path, through the same symbolizer, and print like
 * `addr2line -f -i`: for each entry of the inline chain, innermost first,
 * the function and FILE:LINE on two lines; "??" and "??:0" for what is
 * unknown. Returns 0, or -1 after a message.
 */
int ms_symbolize_batch(const char *path, FILE *in, FILE *out,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats);

#endif
