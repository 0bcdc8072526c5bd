/*
 * Call-frame information of one module, turned into compact unwind rules.
 *
 * A module's CFI comes from its own files, opened once and kept for the
 * unwinder's life (modules are known by identity, so a module's CFI never
 * goes stale): .eh_frame (searched through .eh_frame_hdr by libdw), then
 * .debug_frame of the module file, then .debug_frame of its separate debug
 * file: the one elf/debugfind.h's finder gives for the module's path,
 * .gnu_debuglink and build id, which is the file ms-symbolize reads the
 * module's DWARF from (the same candidates in the same order, each proved
 * by the module's build id; a module without one has none). The module
 * file is the file at the module's path when it is the module, else one
 * that the caller found by the module's build id (a binary moved away, or
 * a stream processed on another host). The vdso has no file: its CFI
 * comes the same way from its image in the stream.
 *
 * A rule says how to compute the caller's registers from this frame's at
 * one address: the CFA (a register plus an offset, or a DWARF expression
 * such as a PLT's), and for each of the x86-64 registers 0..16 (DWARF
 * numbering; 16 is the return address) whether the caller has the same
 * value, no value, a value saved at CFA + n, the value CFA + n, another
 * register's value, or one computed by an expression. Registers with no
 * value in the caller are a bit mask; only the others whose rule is not
 * "same value" are listed, so a typical rule lists two to four. Rules are
 * made from libdw's once per row of .eh_frame's table (a range of
 * addresses with one rule; other sources once per address) and kept in a
 * per-module hash table by lookup address: later lookups of the address
 * cost one probe.
 *
 * libdw 0.188's x86-64 ABI defaults mark %rax as callee-saved and %rbx as
 * not (a numbering slip); rules here follow the psABI: %rbx, %rbp and
 * %r12-%r15 default to "same value", the others to "undefined", and %rsp
 * to the CFA.
 *
 * Memory: rules and expressions live in arrays that grow with the distinct
 * addresses looked up; nothing is allocated for an address seen before.
 *
 * The rows of .eh_frame made in a run, and their rules, are kept for the
 * next run of a module file proved by build id: written at ms_cfi_free()
 * to cfi/BUILDID.rows in the cache directory (symbols/kcache.h) when the
 * run learned a row, and read back at the module's first lookup, so that
 * lookups in them need no libdw (its CFI is opened at the first miss).
 * Rows whose rule has an expression are not kept. Every field is checked
 * when read; a file that fails is ignored, silently, and rewritten.
 */
#ifndef MS_DWARF_CFI_H
#define MS_DWARF_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/records.h"

/* DWARF register numbers of x86-64. */
enum ms_dwarf_reg {
	MS_DW_RAX = 0, MS_DW_RDX = 1, MS_DW_RCX = 2, MS_DW_RBX = 3,
	MS_DW_RSI = 4, MS_DW_RDI = 5, MS_DW_RBP = 6, MS_DW_RSP = 7,
	MS_DW_R8 = 8, MS_DW_R15 = 15,
	MS_DW_RA = 16,		/* the return address column: the caller's PC */
};
#define MS_DWARF_REGS 17

/* One operation of a DWARF expression, as libdw parses it. */
struct ms_dwarf_op {
	uint8_t atom;
	uint32_t offset;	/* of the operation in the expression (branches) */
	uint64_t number, number2;
};

enum ms_cfa_kind {
	MS_CFA_REG = 0,		/* CFA = reg + arg */
	MS_CFA_EXPR = 1,	/* CFA = the value of expression (arg, len) */
};

enum ms_reg_kind {
	MS_REG_UNDEF = 1,	/* the caller's value is unknown (in undef, never listed) */
	MS_REG_OFFSET,		/* saved at CFA + arg */
	MS_REG_VAL_OFFSET,	/* the value is CFA + arg */
	MS_REG_REGISTER,	/* the value of register arg in this frame */
	MS_REG_EXPR,		/* saved at the address expression (arg, len) computes */
	MS_REG_VAL_EXPR,	/* the value expression (arg, len) computes */
};

struct ms_reg_rule {
	uint8_t reg;
	uint8_t kind;		/* enum ms_reg_kind */
	uint16_t len;		/* expression length in operations */
	int32_t arg;		/* offset, register, or first expression operation */
};

enum ms_cfi_rule_flags {
	/* The caller's PC is exact (the interrupted instruction), not a return address. */
	MS_CFI_SIGNAL = 1 << 0,
	/*
	 * A standard frame: CFA = %rbp + 16, the caller's %rbp saved at
	 * CFA - 16 and the return address at CFA - 8, so a frame-pointer step
	 * from this frame is what the CFI would do.
	 */
	MS_CFI_FRAME_POINTER = 1 << 1,
	/* The return address is undefined: the thread's outermost frame. */
	MS_CFI_OUTERMOST = 1 << 2,
	/*
	 * CFA = register + offset and every listed register saved at or
	 * equal to CFA + offset, the return address saved: no expression, so
	 * a step needs only the masks below.
	 */
	MS_CFI_SIMPLE = 1 << 3,
};

#define MS_RULE_REGS MS_DWARF_REGS
struct ms_cfi_rule {
	uint8_t cfa_kind;	/* enum ms_cfa_kind */
	uint8_t cfa_reg;
	uint8_t flags;		/* enum ms_cfi_rule_flags */
	uint8_t n;		/* entries used in regs */
	uint16_t cfa_len;
	/*
	 * MS_CFI_SIMPLE, not outermost, with its step precomputed: the return
	 * address listed last (saved at CFA + ra_off) and the masks below.
	 * Only ms_cfi_find()'s rules have it; the walk steps them inline.
	 */
	bool fast;
	int32_t cfa_arg;
	uint32_t undef;		/* bit r: the caller's register r has no value */
	uint32_t saved, valued;	/* MS_CFI_SIMPLE: the listed OFFSET and VAL_OFFSET registers */
	/* fast: the caller's known = (known & ~clear) | set_known, and so for saved. */
	int32_t ra_off;
	uint32_t clear, set_known, set_saved;
	struct ms_reg_rule regs[MS_RULE_REGS];
};

/*
 * The parts of rule r that follow from its CFA, listed registers (in
 * register order), undef mask and MS_CFI_SIGNAL: the other flags, the
 * masks and the fast step. Every rule is finished by it, however made.
 */
void ms_cfi_rule_finish(struct ms_cfi_rule *r);

struct ms_cfi;

/* Where a module's CFI was found; counted per module for --stats. */
enum ms_cfi_source {
	MS_CFI_EH_FRAME = 0,
	MS_CFI_DEBUG_FRAME = 1,		/* the module file's own .debug_frame */
	MS_CFI_DEBUG_FILE = 2,		/* a separate debug file's .debug_frame */
	MS_CFI_SOURCES
};

struct ms_debugfind;

/*
 * Open the CFI of module m from the ELF file at path: the file at the
 * module's path, or a file that m's build id proves (found by the
 * caller); it is proved again here. finder (NULL: none; borrowed, it must
 * outlive the result) finds the separate debug file, looked for at the
 * first lookup that the file's own CFI does not answer; m->path (else
 * path) is the module's path its candidates are made from. Returns NULL
 * after a message when out of memory; a file without CFI gives a valid
 * object whose lookups find nothing.
 */
struct ms_cfi *ms_cfi_open(const char *path, const struct ms_module *m,
			   struct ms_debugfind *finder);
/*
 * The same for a module whose ELF image is in memory (the vdso's, from
 * the stream): len bytes at image, copied, used only when its build id is
 * m's. Its .eh_frame and .debug_frame are read as a file's are, and a
 * separate debug file is looked for by build id only (no path and no
 * .gnu_debuglink: an image has no directory). Garbage or a truncated image
 * gives an object whose lookups find nothing.
 */
struct ms_cfi *ms_cfi_open_image(const uint8_t *image, size_t len, const struct ms_module *m,
				 struct ms_debugfind *finder);
/*
 * The same for an object a process registered through the GDB JIT
 * interface (unwind/jitobj.h): an image that is its own identity (no
 * build id, no file, no separate debug file), its sections at the
 * addresses they ran at. The image is borrowed: it must outlive the
 * result. name names it in messages. NULL after a message when out of
 * memory; an image libelf cannot read gives an object whose lookups find
 * nothing.
 */
struct ms_cfi *ms_cfi_open_object(const uint8_t *image, size_t len, const char *name);
void ms_cfi_free(struct ms_cfi *c);

/*
 * The rule at module address addr (a virtual address of the file): 1 with
 * *rule set (valid until the next lookup in this module), 0 when no CFI
 * covers addr, -1 after a message (out of memory).
 */
int ms_cfi_find(struct ms_cfi *c, uint64_t addr, uint32_t *rule);
/* For tests: every rule is made from libdw at its own address (no rows, no cache). */
void ms_cfi_no_rows(struct ms_cfi *c);
const struct ms_cfi_rule *ms_cfi_rule(const struct ms_cfi *c, uint32_t rule);
/* (The pointer stays valid for the life of c: rules are never moved.) */
/* The expression operations of the module (rules index into them). */
const struct ms_dwarf_op *ms_cfi_ops(const struct ms_cfi *c);

struct ms_cfi_stats {
	uint64_t lookups, made, none;	/* rules looked up, made from libdw, not found */
	uint64_t from_rows;		/* lookups answered by a row made before (see cfi.c) */
	uint64_t from_cache;		/* of those, by a row read from the cache */
	uint64_t cached_rows;		/* rows read from the cache */
	uint64_t from[MS_CFI_SOURCES];	/* rules made per source */
	bool has_eh_frame, has_debug_frame, has_debug_file;
};
const struct ms_cfi_stats *ms_cfi_stats(const struct ms_cfi *c);
/*
 * The path of the separate debug file whose .debug_frame is a source, or
 * NULL (none, or not looked for yet: see ms_cfi_open()).
 */
const char *ms_cfi_debug_file(const struct ms_cfi *c);

#endif
