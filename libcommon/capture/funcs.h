/*
 * Function keys and stack paths over a loaded capture: what analysis/ and
 * formats/ both need to turn a stack into the functions people read.
 * Pure over a validated capture; every function returns 0, or -1 after
 * one message (out of memory).
 */
#ifndef MS_CAPTURE_FUNCS_H
#define MS_CAPTURE_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

/*
 * Function keys. A frame with an inline chain (capture lines, minor 1)
 * stands for one function per entry, outermost first along the stack: each
 * inlined call is a frame of its own in every view. An entry's function is
 * (module, name, file, start line) of the debug information. A frame
 * without lines is one function: (module, symbol name) when named, else
 * (module, address), the address being the function's start when
 * .eh_frame gave it (reason MS_SYM_FDE_ONLY), else the frame's own.
 * Functions get dense ids 0..n-1 in the order of their keys (module id,
 * named before unnamed, then name, file and line, or address), so ids are
 * the same for the same capture.
 *
 * label is what people read:
 *   - named:            "burn_60"
 *   - interpreted:      its qualified name (minor 7: an interpreted
 *                       module's frames); such functions are keyed by
 *                       their file too, so functions of one name in two
 *                       files stay apart;
 *   - unnamed:          "MODULE+0x1a2b", MODULE the basename of the module's
 *                       path hint, or its kind ("[anon]", "[vdso]",
 *                       "[kernel]", "[perf-map]", "[no path]" for a file)
 *                       when it has no path; "[jit-object]" for a
 *                       jit-object module always (its path, "[jit-object
 *                       0xENTRY]", holds an address of one run);
 *   - in no module:     "[no module] 0x1a2b", for a frame with no module
 *                       or one of kind MS_MODULE_UNKNOWN (where ms-unwind
 *                       puts addresses in no mapping).
 * module_name is the basename of the module's path hint, "" when there is
 * none (what JSON shows); module_label is what a text column shows: the
 * basename, else the module's kind as above, and "[unknown]" for a frame
 * in no module.
 */
struct ms_func {
	uint32_t module;	/* MS_NONE when the frame is in no module */
	uint32_t name;		/* string id; 0 when unnamed */
	uint64_t address;	/* the key of an unnamed function */
	uint32_t file;		/* string id of its source file; 0 unknown */
	uint32_t line;		/* the line where it begins; 0 unknown */
	const char *label;	/* owned by struct ms_funcs */
	/*
	 * The label where a format has no field for the file: an interpreted
	 * function's "qualname (file:line)", line where it begins; label for
	 * every other function.
	 */
	const char *qualified;
	const char *module_name;	/* borrowed from the capture, or "" */
	const char *module_label;	/* never "" */
	const char *file_name;	/* basename of the file (what text shows), or "" */
};

struct ms_funcs {
	uint32_t n;
	struct ms_func *funcs;
	/*
	 * Per capture frame f, its functions outermost first:
	 * chain[chain_start[f] .. chain_start[f + 1]) (one entry for a frame
	 * without lines). frame_func[f] is the last of them, the innermost:
	 * the function whose code is at the frame's address.
	 */
	uint32_t *chain_start;	/* n_frames + 1 entries */
	uint32_t *chain;
	uint32_t *frame_func;
	char *labels;		/* storage of the labels */
};

int ms_funcs_build(struct ms_funcs *f, const struct ms_capture *cap);
void ms_funcs_release(struct ms_funcs *f);
/* Entries a frame stands for: its lines, or 1. */
uint32_t ms_frame_chain_len(const struct ms_cap_frame *fr);
/*
 * Whether symbolization gave fr no name at all (neither a symbol name nor
 * lines): what "unsymbolized" means in every view.
 */
bool ms_frame_unnamed(const struct ms_capture *cap, const struct ms_cap_frame *fr);
/*
 * A module kind's name: "file", "kernel", "vdso", "anon", "perf-map",
 * "jit-object", "interpreted", or "unknown".
 */
const char *ms_module_kind_name(uint32_t kind);
/* Basename of module m's path hint; "" for MS_NONE or no path. */
const char *ms_module_basename(const struct ms_capture *cap, uint32_t m);
/* What a text column calls module m (see module_label above). */
const char *ms_module_label(const struct ms_capture *cap, uint32_t m);
/*
 * What every view calls a frame without a name: "module+0xADDRESS", at its
 * function's start when only an FDE gave that (reason fde-only), or
 * "[no module] 0xADDRESS". snprintf()'s contract: the length it needs.
 */
int ms_frame_label(char *buf, size_t size, const struct ms_capture *cap,
		   const struct ms_cap_frame *fr);

/*
 * Whether a stack that ended with end (enum ms_stack_end) is known to be
 * cut short: every reason but outermost (the thread's entry was reached),
 * kernel-only (a kernel thread has no user frames), fp-chain and unknown.
 * fp-chain and unknown say nothing either way (a frame-pointer chain
 * ends at the entry in a program built with frame pointers, and early in
 * one without; an import kept no reason), so no frame claims a cut there.
 * Every view and export puts ms_truncated_label() outermost on a stack
 * known to be cut, so no viewer shows its outermost frame as a root.
 */
bool ms_stack_end_truncated(uint32_t end);
/* "[truncated: stack-copy]": the synthetic frame's name. */
const char *ms_truncated_label(uint32_t end);

/* The deepest stack in cap (0 when it has none). */
uint32_t ms_stacks_max_depth(const struct ms_capture *cap);
/*
 * The stack nodes of stack, outermost first, into path (room for
 * ms_stacks_max_depth() entries); returns how many. MS_NONE gives 0.
 */
uint32_t ms_stack_nodes(const struct ms_capture *cap, uint32_t stack, uint32_t *path);

/* Room for the longest path of functions ms_stack_funcs() can give. */
uint32_t ms_funcs_max_path(const struct ms_capture *cap, const struct ms_funcs *funcs);
/*
 * The functions of stack outermost first, each frame expanded to its
 * inline chain (above), into path; nodes is scratch room for
 * ms_stacks_max_depth() entries. Returns how many.
 */
uint32_t ms_stack_funcs(const struct ms_capture *cap, const struct ms_funcs *funcs,
			uint32_t stack, uint32_t *nodes, uint32_t *path);

#endif
