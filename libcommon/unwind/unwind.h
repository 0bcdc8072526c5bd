/*
 * ms-unwind's model: per-process address spaces rebuilt from the mapping and
 * task records, modules known by identity, and samples turned into stacks of
 * (module, module-relative address) frames.
 *
 * The unwinder consumes records in time order:
 *  - MMAP: an executable mapping (PROT_EXEC) is added to the process's
 *    space, replacing what it overlaps; a non-executable one only removes
 *    what it overlaps (the range no longer holds that code). Kernel
 *    mappings (pid -1) are ignored: kernel addresses stay absolute.
 *  - COMM with exec: the process's space is emptied (the new image's
 *    mappings follow). Every COMM makes its thread known.
 *  - FORK: a new process (pid != ppid) gets a copy of the parent's space; a
 *    new thread shares its process's space.
 *  - EXIT: the thread is forgotten; when the last known thread of a process
 *    exits, the space is dropped.
 *  - VDSO (before the samples, from ms-collect): the vdso's image is kept
 *    when it is an ELF image with a build id; [vdso] mappings are then the
 *    module of that build id, whose call-frame information the DWARF
 *    methods read from the image. Garbage, a truncated image or one without
 *    a build id is a counted problem, and [vdso] frames then end stacks
 *    with MS_END_NO_CFI as without the record.
 *  - JIT_OBJECT (ahead, as JIT_FUNC): a registered object's image in
 *    chunks, or its unregistration (unwind/jitobj.h, jitobjtab.h).
 *  - JIT_FUNC (ahead of the records of its time, from ms-collect): a
 *    function of the process's perf map, with the frame table proved from
 *    its code, kept per process (unwind/jit.h: read times decide what a
 *    mapping, exec or fork does to it). JIT_READ: the map's path.
 *  - SAMPLE: the kernel frames (the first exact, the others return
 *    addresses), then the user frames an unwind method finds, each bound to
 *    the mapping that holds it now. The first user address in no mapping
 *    becomes a frame of the MS_MODULE_UNKNOWN module and ends the stack
 *    (MS_END_NO_MODULE): nothing is guessed past it.
 *
 * Addresses in a stack: for an ELF file, the virtual address that the
 * file's symbol tables use (the file offset addr - start + pgoff moved by
 * the PT_LOAD segment that holds it); when the file's headers could not be
 * read or proved to be the module's, the file offset itself, with frame
 * flag MS_FRAME_FILE_OFFSET. vdso: with its image, the image's virtual
 * address (its PT_LOAD, as for a file), else the offset in the image (the
 * same for the kernel's vdso, linked at 0). Kernel, anonymous and unknown:
 * the absolute address. A frame in a JIT function (the latest perf-map
 * line holding its address, as the process's table answers when the frame
 * is bound) is a frame of a perf-map module (MS_MODULE_PERF_MAP: one per
 * process, anonymous mapping range and naming epoch; base the range's
 * start, size its length, path the map's), its address absolute; the
 * unwinder names it at once: ms_unwinder_next_frame() gives the FRAME
 * record of each (module, address) the first time a stack uses it. A
 * frame in an anonymous range outside every function stays anonymous.
 * A frame in the code of an object the process registered through the
 * GDB JIT interface (unwind/jitobjtab.h: the object kept when the sample
 * is unwound), mapped or in no mapping the stream described, is a frame
 * of that object's module (MS_MODULE_JIT_OBJECT: one per object; base
 * its lowest executable section's address, size the extent to the
 * highest one's end, path "[jit-object 0xENTRY]"), its address absolute,
 * unwound by the object's CFI and named at once from its symbols as
 * perf-map frames are (a frame in no symbol: a FRAME with no name,
 * MS_SYM_NO_SYMBOL). Objects come first: a perf-map function over an
 * object's code never names it, and a perf-map module's range stops
 * short of every object's code.
 *
 * Modules: one per identity (kind, path, build id, file identity). Files
 * are probed once, on first use: the file at the mapping's path is used
 * only when it is the mapped file (device and inode equal the record's, or
 * the build id equals the record's when the record has a build id instead
 * of a device and inode). Its build id is read from its NT_GNU_BUILD_ID
 * note when the record has none; size and mtime come from stat(). A file
 * that is not proved keeps the record's device, inode and build id and gets
 * size 0 and mtime 0: consumers never open it by path alone. Stream ids are
 * dense, given in order of first use in a stack (deterministic for the same
 * input); ms_unwinder_next_module() hands out each module once, to be
 * written before the stack that first uses it.
 *
 * A module whose file at the path is gone, or is another file, and whose
 * record has a build id, is looked up through the debug-file finder
 * (elf/debugfind.h: --debug-dir, /usr/lib/debug/.build-id, debuginfod),
 * which gives the file ms-symbolize would read for it, proved by that
 * build id: when that file holds code (not a debug-only file), its
 * segments place the module's addresses and its CFI unwinds them, as the
 * file at the path would have. The module's record stays what it is for
 * an unproved file (size 0: consumers never open its path), so
 * ms-symbolize finds the same file by the same build id.
 *
 * A module whose proved file defines _PyEval_EvalFrameDefault is a Python
 * interpreter's (unwind/interp.h): its frames carry MS_FRAME_INTERPRETER,
 * and the stage splices Python frames before the activations of its loop
 * (python/splice.h).
 *
 * Memory: no allocation per sample; process and module tables grow with
 * the records that describe them.
 */
#ifndef MS_UNWIND_UNWIND_H
#define MS_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"
#include "unwind/addrspace.h"

struct ms_unwinder;
struct ms_process;

/*
 * User frames as an unwind method finds them: absolute addresses. A method
 * that already bound a frame to its module (the DWARF walk must, to find
 * its CFI) sets resolved, and the unwinder uses module/address/loc_flags
 * instead of looking the address up again.
 */
struct ms_uframe {
	uint64_t pc;
	uint32_t flags;		/* MS_FRAME_RETURN for a return address */
	bool resolved;
	uint32_t module;	/* the unwinder's module index (ms_code_loc.module) */
	uint32_t loc_flags;	/* MS_FRAME_FILE_OFFSET or 0 */
	uint64_t address;	/* module-relative, as a stack frame holds it */
};

struct ms_user_stack {
	uint32_t n;
	uint32_t end;		/* enum ms_stack_end */
	/*
	 * Nonzero: every walk the method returns with this token has these
	 * frames and end (a DWARF walk from the method's walk cache); 0 (what
	 * the unwinder sets before the walk) says nothing.
	 */
	uint64_t token;
	/*
	 * Set by the unwinder: a walk whose token the unwinder has tagged
	 * (ms_unwinder_tagged()) may come with n, end and token only, no
	 * frames.
	 */
	bool token_enough;
	struct ms_uframe frames[MS_FRAMES_MAX];
};

/*
 * An unwind method: a sample's user registers, copied stack and kernel
 * frame-pointer chain in, user frames (innermost first, at most max) and an
 * end reason out. proc is the sample's process at the sample's time (NULL
 * when none is known): a method that needs code (CFI) looks addresses up
 * with ms_unwinder_lookup(). A method returns 0, or -1 after a message for a
 * failure that must stop the stage (not for a stack that ends early: that
 * is an end reason). The unwinder binds each returned frame to its module
 * and ends the stack at the first address in no mapping, so a method need
 * not check that itself.
 */
struct ms_unwind_method {
	const char *name;
	int (*walk)(struct ms_unwinder *u, struct ms_process *proc,
		    const struct ms_sample *s, uint32_t max, struct ms_user_stack *out);
	/* Frees what the method kept in a module's slot; NULL when it keeps nothing. */
	void (*module_free)(void *data);
	/*
	 * The method's own state for one unwinder (caches), made when the
	 * method is set and freed with state_free; NULL when it keeps none.
	 * init returns 0, or -1 after a message.
	 */
	int (*init)(struct ms_unwinder *u, void **state);
	void (*state_free)(void *state);
	/*
	 * Optional: ask for the memory a later walk of s will read, without
	 * waiting for it and changing nothing (see ms_unwinder_prefetch()).
	 */
	void (*prefetch)(struct ms_unwinder *u, struct ms_process *proc,
			 const struct ms_sample *s);
};

/* The kernel's user frame-pointer chain (uchain): the first method. */
extern const struct ms_unwind_method ms_unwind_method_fp;
/*
 * DWARF call-frame information over the sample's registers and copied
 * stack (unwind/sample.c); dwarf_fp also continues a stack whose copy
 * ended from the kernel's frame-pointer chain, where the CFI proves each
 * step (see ms-unwind(1) for the rules).
 */
extern const struct ms_unwind_method ms_unwind_method_dwarf;
extern const struct ms_unwind_method ms_unwind_method_dwarf_fp;

/*
 * The stack-copy policy: which method makes the user part of the stacks.
 * AUTO is dwarf when the samples carry registers and a stack copy (the
 * recording's attr says so, or else the first sample), fp otherwise.
 */
enum ms_unwind_policy {
	MS_UNWIND_AUTO = 0,
	MS_UNWIND_DWARF = 1,
	MS_UNWIND_FP = 2,
	MS_UNWIND_DWARF_FP = 3,
};
/* "dwarf", "fp", "dwarf+fp" (and "auto"): the policy, or -1. */
int ms_unwind_policy_parse(const char *name);
const char *ms_unwind_policy_name(int policy);
/* The method of a policy other than AUTO. */
const struct ms_unwind_method *ms_unwind_policy_method(int policy);

struct ms_unwind_options {
	const struct ms_unwind_method *method;	/* NULL: by policy (stage) or frame pointers */
	int policy;				/* enum ms_unwind_policy, for the stage */
	/*
	 * Where the debug-file finder looks, as ms-symbolize's options say
	 * (elf/debugfind.h); borrowed for the unwinder's life.
	 */
	const char *const *debug_dirs;		/* --debug-dir, in order */
	uint32_t n_debug_dirs;
	const char *system_debug_dir;		/* NULL: /usr/lib/debug; "": none */
};

/* Counters for --stats. */
struct ms_unwind_stats {
	/* samples counts switch-outs too: each is unwound as a sample */
	uint64_t samples, stacks, switch_outs;
	uint64_t kernel_frames, user_frames;
	uint64_t ends[MS_END_KERNEL_ONLY + 1];
	uint64_t mmaps, exec_mmaps, kernel_mmaps;
	uint64_t execs, forks, exits, processes, processes_dropped;
	uint64_t modules, modules_unverified;
	/* modules whose file at the path was gone or another, read from a file their build id proves */
	uint64_t modules_found;
	/* DWARF methods */
	uint64_t dwarf_frames;		/* user frames the CFI walk made */
	uint64_t fp_frames;		/* frames dwarf+fp took from the frame-pointer chain */
	uint64_t pc_cache_hits, pc_cache_misses;
	uint64_t cfi_modules;		/* modules whose CFI files were opened */
	uint64_t cfi_rules;		/* rules made from libdw (per .eh_frame row, else per address) */
	uint64_t cfi_cached;		/* PCs answered by rows of an earlier run (cfi.h's cache) */
	/* The walk cache (unwind/dwarf.h): walks replayed, walks kept, times emptied. */
	uint64_t walks_replayed, walks_kept, walk_cache_resets;
	/* JIT functions kept (without rows: of them), ended by mappings, frames named */
	uint64_t jit_funcs, jit_funcs_no_rows, jit_ended, jit_frames_named;
	/*
	 * JIT objects kept, read again (the same object), given an end by an
	 * unregistration or a mapping, frames named from their symbols
	 */
	uint64_t jit_objects, jit_objects_again, jit_objects_ended, jit_object_frames_named;
	/*
	 * Python (the stage's, python/splice.h, pycode.h): walker records
	 * (PY_STACK) paired with their sample and dropped unpaired; stacks
	 * spliced (placed, truncated, unplaced), ended unknown, cut for room;
	 * interpreted frames written; codes (PY_CODE) kept, ignored as again,
	 * refused past the bound; keys given out, frames of unknown code,
	 * instructions past or outside their locations table; GIL label
	 * spans written, and samples with a GIL state that made none because
	 * too many threads had a run open (python/labels.h).
	 */
	uint64_t py_stacks, py_unpaired;
	uint64_t py_placed, py_truncated, py_unplaced, py_unknown, py_cut;
	uint64_t py_frames, py_codes, py_codes_again, py_codes_refused;
	uint64_t py_keys, py_unknown_frames, py_bad_lines;
	uint64_t py_spans, py_spans_full;
	/*
	 * Thread snapshots (PY_SNAPSHOT): read; whose TASK_WAIT is complete,
	 * changed, or dropped (the table of stacks full); malformed (a
	 * problem, no TASK_WAIT); interpreted frames of the complete ones.
	 */
	uint64_t py_snapshots, py_snapshots_complete, py_snapshots_changed;
	uint64_t py_snapshots_dropped, py_snapshots_bad, py_snapshot_frames;
};

struct ms_unwinder *ms_unwinder_new(const struct ms_unwind_options *opts);
void ms_unwinder_free(struct ms_unwinder *u);
/*
 * Change the unwind method (the stage's AUTO policy, decided at the first
 * sample): what the old method kept is freed. Returns 0, or -1 after a
 * message.
 */
int ms_unwinder_set_method(struct ms_unwinder *u, const struct ms_unwind_method *m);
const struct ms_unwind_method *ms_unwinder_method(const struct ms_unwinder *u);
/* The method's state (see init). */
void *ms_unwinder_method_state(struct ms_unwinder *u);
/* The debug-file finder made from the options, for the methods' CFI. */
struct ms_debugfind *ms_unwinder_debugfind(struct ms_unwinder *u);

/* Record handlers; each returns 0, or -1 after a message (out of memory). */
int ms_unwinder_mmap(struct ms_unwinder *u, const struct ms_mmap *m);
int ms_unwinder_comm(struct ms_unwinder *u, const struct ms_comm *c);
int ms_unwinder_fork(struct ms_unwinder *u, const struct ms_task *t);
int ms_unwinder_exit(struct ms_unwinder *u, const struct ms_task *t);
/*
 * A JIT function (MS_REC_JIT_FUNC, unpacked): kept in its process's table
 * with its rows decoded; malformed rows or a full table are counted
 * problems. JIT_READ: its path names the process's perf-map modules made
 * from then on. Each returns 0, or -1 after a message (out of memory).
 */
int ms_unwinder_jit_func(struct ms_unwinder *u, const struct ms_jit_func *f);
int ms_unwinder_jit_read(struct ms_unwinder *u, const struct ms_jit_read *r);
/*
 * A JIT object record (MS_REC_JIT_OBJECT, unpacked): a chunk of an image
 * (unwind/jitobj.h puts them together; the whole image becomes an object
 * of its process, unwind/jitobjtab.h), or an unregistration. Broken
 * sequences and images that are not usable ELF are counted problems.
 * 0, or -1 after a message (out of memory).
 */
int ms_unwinder_jit_object(struct ms_unwinder *u, const struct ms_jit_object *r);
/* The stream ended: images still coming are counted problems. */
void ms_unwinder_end(struct ms_unwinder *u);
/*
 * The VDSO record: the image is copied. A first image that cannot be used
 * and any later different one are counted problems, not errors. Returns
 * 0, or -1 after a message (out of memory).
 */
int ms_unwinder_vdso(struct ms_unwinder *u, const struct ms_vdso *v);
/*
 * A fact of the recording. "kernel-build-id" (ms-collect's) makes the
 * kernel module the kernel that ran rather than the one running here, as
 * long as no kernel frame has been written yet; without it (an older
 * stream) the running kernel's build id stands. 0, or -1 after a message.
 */
int ms_unwinder_info(struct ms_unwinder *u, const struct ms_info *i);
/* The vdso image kept (with *len), or NULL when there is none to use. */
const uint8_t *ms_unwinder_vdso_image(const struct ms_unwinder *u, uint32_t *len);
/*
 * Turn sample s into stack out (pid, tid, time, cpu, period copied).
 * Modules used for the first time are then available from
 * ms_unwinder_next_module().
 */
int ms_unwinder_sample(struct ms_unwinder *u, const struct ms_sample *s, struct ms_stack *out);
/*
 * ms_unwinder_sample() for a caller that numbers stacks: when the sample's
 * stack is one an earlier sample's was (the same user walk, by its token,
 * and no kernel frames) and that stack was tagged (ms_unwinder_tag()),
 * returns 1 with *tag, out's per-sample fields and reason set and its
 * frames not made (n_frames 0), counted as ms_unwinder_sample() counts
 * them; else what ms_unwinder_sample() returns, with out made.
 */
int ms_unwinder_sample_tagged(struct ms_unwinder *u, const struct ms_sample *s,
			      struct ms_stack *out, uint32_t *tag);
/*
 * Tag the stack the last call of ms_unwinder_sample_tagged() made (that
 * returned 0), so that later samples with that stack return tag.
 */
void ms_unwinder_tag(struct ms_unwinder *u, uint32_t tag);
/*
 * Ask for the memory unwinding s will read (its copied stack words), so
 * that it arrives while the sample before s is unwound: s is the next
 * sample (ms_reader_peek_sample()), its stack bytes set. Changes nothing
 * the unwinder answers or counts.
 */
void ms_unwinder_prefetch(struct ms_unwinder *u, const struct ms_sample *s);
/* Whether a walk's token (ms_user_stack) is one a stack was tagged by. */
bool ms_unwinder_tagged(const struct ms_unwinder *u, uint64_t token);

/*
 * The next module that the last sample used for the first time, in order
 * of id; false when none is left. out's strings borrow from the unwinder.
 */
bool ms_unwinder_next_module(struct ms_unwinder *u, struct ms_module *out);
/*
 * The next FRAME record the last sample needs, to be written after its
 * modules and before its stack: a JIT function's frame (a perf-map
 * module's (module, address) the first time a stack uses it), named by
 * the function (reason MS_SYM_OK, symbol_start its absolute start, no
 * lines). false when none is left. out's name borrows from the unwinder
 * until its next record.
 */
bool ms_unwinder_next_frame(struct ms_unwinder *u, struct ms_frame *out);

/*
 * Python (unwind/interp.h). Whether any module of the stream so far is a
 * Python interpreter's (its frames carry MS_FRAME_INTERPRETER); whether
 * frame f of the last stack is an activation of its loop; and the stream
 * id of the one interpreted module (MS_MODULE_INTERPRETED, "[python]"),
 * made on first use and then handed out by ms_unwinder_next_module()
 * like any module a sample used first (call it after the sample, before
 * its modules are taken). 0, or -1 after a message.
 */
bool ms_unwinder_any_interpreter(const struct ms_unwinder *u);
bool ms_unwinder_activation(const struct ms_unwinder *u, const struct ms_stack_frame *f);
int ms_unwinder_interpreted_module(struct ms_unwinder *u, uint32_t *id);

/*
 * Where pc lies in proc's space now: the mapping, or NULL. For methods
 * (CFI lookup) and tests.
 */
const struct ms_mapping *ms_unwinder_lookup(struct ms_unwinder *u, struct ms_process *proc,
					    uint64_t pc);
/*
 * Where a user address lies, for unwind methods (a CFI unwinder looks up
 * the rules of address in the file at path when verified) and for the
 * stacks: 1 with loc filled, 0 when pc is in no mapping (loc names the
 * unknown module), -1 after a message. The module's file is probed on
 * first use.
 */
struct ms_code_loc {
	uint32_t module;	/* the unwinder's module index, not a stream id */
	uint32_t kind;		/* enum ms_module_kind */
	uint64_t address;	/* module-relative, as a stack frame holds it */
	uint32_t flags;		/* MS_FRAME_FILE_OFFSET or 0 */
	const char *path;	/* the module's path (NULL when none) */
	/*
	 * The file at path is proved to be the module, or found is set; for
	 * the vdso, the stream's image is (ms_unwinder_vdso_image()).
	 */
	bool verified;
	/*
	 * A file module whose file at path is not the module, verified by a
	 * file its build id proves, found by the unwinder's debug-file
	 * finder: file is that one (else file is path).
	 */
	bool found;
	const char *file;
};
int ms_unwinder_resolve(struct ms_unwinder *u, struct ms_process *proc, uint64_t pc,
			struct ms_code_loc *loc);
/*
 * ms_unwinder_resolve(), and for a pc in a JIT function (loc->kind
 * MS_MODULE_PERF_MAP) *rule the rule its proved rows give at pc: NULL
 * when none covers it (no rows, or at or past where the proofs stop).
 * The rule stays where it is for the unwinder's life.
 */
struct ms_cfi_rule;
int ms_unwinder_resolve_rule(struct ms_unwinder *u, struct ms_process *proc, uint64_t pc,
			     struct ms_code_loc *loc, const struct ms_cfi_rule **rule);
/*
 * A jit-object module's call-frame information (its object's: absolute
 * addresses, kept for the unwinder's life), NULL for any other module.
 */
struct ms_cfi *ms_unwinder_module_cfi(const struct ms_unwinder *u, uint32_t module);
/*
 * A slot per module where the unwind method keeps its data (parsed CFI,
 * rule caches), kept for the unwinder's life and freed with the method's
 * module_free. NULL for an unknown module index.
 */
void **ms_unwinder_module_slot(struct ms_unwinder *u, uint32_t module);
/* Module index module as the stream will describe it (path included), or NULL. */
const struct ms_module *ms_unwinder_module(const struct ms_unwinder *u, uint32_t module);
/* The process pid, or NULL when no record made it known. */
struct ms_process *ms_unwinder_process(struct ms_unwinder *u, uint32_t pid);
/* Its address space (for tests and for methods' caches: see generation). */
struct ms_addrspace *ms_process_addrspace(struct ms_process *proc);

const struct ms_unwind_stats *ms_unwinder_stats(const struct ms_unwinder *u);
/* The counters, for methods to add to. */
struct ms_unwind_stats *ms_unwinder_counters(struct ms_unwinder *u);
/* Counted problems (unverified module files, bad mapping records). */
struct ms_problems *ms_unwinder_problems(struct ms_unwinder *u);

/*
 * The ms-unwind stage: read a stream from in_fd, write one to out_fd.
 * Consumes SAMPLE records (replaced by MODULE, FRAME, STACK_DEF and
 * STACK_REF records) and SWITCH_OUT records (unwound the same way: MODULE,
 * FRAME, STACK_DEF and an OFF_CPU referring to the stack) and JIT_FUNC
 * records (kept: they are large and only the unwinder reads them; a
 * malformed one is a counted problem), PY_CODE records (kept, likewise)
 * and PY_STACK records (spliced into the stack of the sample that follows
 * each: python/splice.h, pycode.h), passes every other
 * record through unchanged, and appends its problems before
 * the trailer. The unwind method is opts->method, else opts->policy's
 * (AUTO settled at the first sample, see enum ms_unwind_policy); its name
 * goes out once as INFO "unwind-policy" before the first stack. Runs on
 * the stage loop (stream/stage.h), whose exit status it returns.
 * stats, when not NULL, receives the counters at the end.
 */
int ms_unwind_stage(int in_fd, const char *in_name, int out_fd,
		    const struct ms_unwind_options *opts, struct ms_unwind_stats *stats);

#endif
