/*
 * ms-unwind's JIT functions: per process, the functions ms-collect read
 * from its perf map (MS_REC_JIT_FUNC records), each with the frame table
 * proved from its code (jit/rows.h), decoded once when its record comes.
 *
 * The functions live in a jit/perfmap.h table (ms_perfmap_add()), so an
 * address is in the latest function whose range holds it, as the
 * collector's own table answers. Records come ahead of the samples and
 * mappings that may be earlier in time (stream/records.h), so every change
 * is decided by the function's read time R, never by arrival:
 *  - a mapping made at time Tm over a function ends it when R < Tm (its
 *    code was replaced after the line was read); when Tm <= R the line
 *    may name the new code, and the function stays;
 *  - exec at time Te keeps only the functions read at or after Te (the
 *    new image's: their records may have come before the exec's);
 *  - a new process (fork) starts with its parent's functions, then its
 *    own read at or after the fork.
 *
 * Rows: each function's table of rows becomes (offset, rule) pairs; the
 * rules (jit/rows.h: ms_rows_rule()) are interned in struct ms_jit_rules,
 * one per unwinder, so that the many functions whose frames are alike
 * (trampolines) share them, and a rule never moves nor is freed while the
 * unwinder lives (the DWARF walk keeps pointers to rules: dwarf.h). At
 * most MS_JIT_RULES_MAX distinct rules: a function whose rows need more
 * keeps no rows (counted).
 *
 * Naming: ms-unwind names a function's frames once per (module, address)
 * with a FRAME record. So that a name written stays true, a perf-map
 * module is made per naming epoch of its process's table: the epoch
 * changes (a value unique among all tables) whenever a function whose
 * frames were named (ms_jit_table_named()) loses addresses: replaced by a
 * later line, or ended.
 *
 * Memory: per function a 24-byte record beside the perf map table's, and
 * 8 bytes per row; look-ups allocate nothing once the table is indexed
 * (the first look-up after new functions indexes them).
 */
#ifndef MS_UNWIND_JIT_H
#define MS_UNWIND_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "dwarf/cfi.h"
#include "stream/records.h"

/* Distinct rules of JIT rows an unwinder keeps. */
#define MS_JIT_RULES_MAX 65536u

struct ms_jit_rules;
struct ms_jit_rules *ms_jit_rules_new(void);
void ms_jit_rules_free(struct ms_jit_rules *r);
/* How many distinct rules are kept (tests). */
uint32_t ms_jit_rules_count(const struct ms_jit_rules *r);

/* A function as a look-up answers it: valid until its table changes. */
struct ms_jit_fn {
	uint64_t start, end;
	const char *name;	/* NUL-terminated, not empty */
	uint32_t id;		/* in its table */
	uint32_t n_rows;	/* 0: no rows (no code read, or rows refused) */
	uint32_t stop;		/* the rows cover offsets [0, stop) */
	const struct ms_jit_row *rows;
};
struct ms_jit_row {
	uint32_t offset;	/* from the function's start */
	uint32_t rule;		/* in the unwinder's ms_jit_rules */
};

/*
 * The rule at pc in fn (as ms_rows_find() finds rows: the row whose
 * offsets hold pc - start, none at or past stop), or NULL when none.
 */
const struct ms_cfi_rule *ms_jit_fn_rule(const struct ms_jit_rules *r, const struct ms_jit_fn *fn,
					 uint64_t pc);

struct ms_jit_table;
struct ms_jit_table *ms_jit_table_new(void);
void ms_jit_table_free(struct ms_jit_table *t);

/* What ms_jit_table_add() did. */
enum ms_jit_added {
	MS_JIT_ADDED = 1,		/* with its rows, or with none when the record has none */
	MS_JIT_ADDED_NO_ROWS = 2,	/* kept without rows: they were malformed, or too many rules */
	MS_JIT_DROPPED = 0,		/* not kept: the table is full (counted in problems) */
};
/*
 * Add function f (an unpacked MS_REC_JIT_FUNC: range, name, read time,
 * rows). Malformed rows are a problem counted in problems (code
 * "jit-bad-rows", what ms_rows_decode() says also printed); the function
 * is then kept without rows. Returns enum ms_jit_added, or -1 after a
 * message when memory runs out.
 */
int ms_jit_table_add(struct ms_jit_table *t, struct ms_jit_rules *rules,
		     const struct ms_jit_func *f, struct ms_problems *problems);
/*
 * A mapping made at time over [start, end): the functions there whose
 * lines were read before time end (see above). Returns how many, or -1
 * after a message.
 */
int ms_jit_table_unmap(struct ms_jit_table *t, uint64_t start, uint64_t end, uint64_t time);
/*
 * exec at time: only the functions read at or after it stay. Returns
 * whether any function went, or -1 after a message.
 */
int ms_jit_table_exec(struct ms_jit_table *t, uint64_t time);
/*
 * A new process forked at time from parent (NULL: none known): child
 * becomes the parent's functions, then its own read at or after time.
 * 0, or -1 after a message.
 */
int ms_jit_table_fork(struct ms_jit_table *child, const struct ms_jit_table *parent,
		      uint64_t time);
/*
 * The function holding pc, into *fn: 1, 0 when none, -1 after a message
 * (indexing new functions ran out of memory).
 */
int ms_jit_table_find(struct ms_jit_table *t, uint64_t pc, struct ms_jit_fn *fn);
/* A FRAME record named function id: a later change to it starts a new epoch. */
void ms_jit_table_named(struct ms_jit_table *t, uint32_t id);
/* The naming epoch (see above): nonzero. */
uint64_t ms_jit_table_epoch(const struct ms_jit_table *t);
/* Functions kept (ended ones included). */
uint32_t ms_jit_table_count(const struct ms_jit_table *t);
/*
 * The perf map's path the latest MS_REC_JIT_READ named ("" if none);
 * set copies it (truncated at PATH_MAX). 0, or -1 after a message.
 */
const char *ms_jit_table_path(const struct ms_jit_table *t);
int ms_jit_table_set_path(struct ms_jit_table *t, const struct ms_str *path);

#endif
