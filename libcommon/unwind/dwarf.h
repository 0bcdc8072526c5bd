/*
 * The generic DWARF unwind loop: from one frame's registers to its
 * callers', by the call-frame rules of each PC, over a register-state
 * reader.
 *
 * The register state, the sampled-state reader, the expression evaluator
 * and one step by a CFI rule are dwarf/step.h's.
 *
 * Each frame's PC is looked up through a rule source (ms-unwind's binds it
 * to a module and finds the module's CFI). The first frame's PC is the
 * exact instruction; every caller's is a return address, looked up at
 * return address - 1 (the call, which may be the last instruction of its
 * function) and marked MS_FRAME_RETURN; the PC a signal frame restores is
 * exact again.
 *
 * The walk ends with a typed reason (enum ms_stack_end), and never appends
 * a frame it did not prove:
 *  - MS_END_OUTERMOST: the rule marks the return address undefined (the
 *    ABI's mark of a thread's entry: _start, clone, clone3), or the
 *    return address read is 0;
 *  - MS_END_NO_CFI / MS_END_NO_MODULE: what the rule source says for a PC
 *    (the frame is kept, nothing after it);
 *  - MS_END_MISSING_REGISTER: a register the rule needs has no value (not
 *    sampled, or not saved by the callee), or the rule has no return
 *    address;
 *  - MS_END_STACK_COPY: a read the rule needs is outside the copied bytes;
 *  - MS_END_CFA_NOT_OUTWARDS: the CFA is not above the previous frame's;
 *  - MS_END_DEPTH: max frames were made.
 *
 * No allocation: the state and the frames are the caller's.
 */
#ifndef MS_UNWIND_DWARF_H
#define MS_UNWIND_DWARF_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"
#include "dwarf/cfi.h"
#include "dwarf/step.h"

struct ms_uframe;

/*
 * Fill rs from sample s's user registers (perf's x86-64 order, regs_abi 64)
 * and st from its stack copy. The PC is the user IP register, else the
 * sample's IP when it was taken in user mode, else the first entry of the
 * user chain; without one, rs->known lacks bit MS_DW_RA.
 */
void ms_sampled_state_init(struct ms_sampled_state *st, struct ms_regstate *rs,
			   const struct ms_sample *s);

/*
 * The PC and %rsp ms_sampled_state_init() would give s, without the rest
 * of the state: false when it would give s no PC or no %rsp.
 */
bool ms_sampled_pc_sp(const struct ms_sample *s, uint64_t *pc, uint64_t *sp);

/*
 * What the walk remembers of a lookup the rule source answered with a
 * rule that needs no expression (MS_CFI_SIMPLE or MS_CFI_OUTERMOST): the
 * rule and how the source bound the frame.
 */
#define MS_RULE_MEMO_BITS 10
struct ms_rule_memo {
	uint64_t lookup;
	uint64_t key;		/* the epoch (or walk) of the answer; 0: empty */
	const struct ms_cfi_rule *rule;
	uint64_t delta;		/* the frame's module-relative address is pc - delta */
	uint32_t module;
	uint16_t loc_flags;
	bool resolved;
};

/*
 * The rule source: the rule at lookup (pc, or pc - 1 for a return
 * address) of frame f, which it may bind to a module (ms_uframe's
 * resolved fields). Returns 1 with *rule and *ops, 0 with *end
 * (MS_END_NO_CFI, MS_END_NO_MODULE), or -1 after a message. The rules it
 * returns must stay where they are for as long as the source lives.
 *
 * The walk keeps a direct-mapped memo of find's answers with rules that
 * need no expression (most), so that a repeated lookup costs one probe and no
 * call: within one walk always (a recursion), and across walks while
 * epoch stays the same nonzero value. A source that sets epoch promises
 * that its answer for a lookup does not change while epoch does not
 * (ms-unwind: the address space's generation, unique among all spaces);
 * with epoch 0 answers are reused only within the walk that found them.
 * Zero-filled is the empty state.
 */
struct ms_rule_source {
	int (*find)(struct ms_rule_source *src, struct ms_uframe *f, uint64_t lookup,
		    const struct ms_cfi_rule **rule, const struct ms_dwarf_op **ops,
		    uint32_t *end);
	uint64_t epoch;
	uint64_t memo_hits;	/* lookups the memo answered without find (for stats) */
	uint64_t walks;		/* makes the key of a walk's own answers */
	struct ms_rule_memo memo[1u << MS_RULE_MEMO_BITS];
	/* Whole walks to replay (see ms_walk_cache_new()); NULL: none. */
	struct ms_walk_cache *cache;
	/*
	 * When set and true for the token of a kept walk, the caller needs
	 * no more than the token: ms_dwarf_walk() fills w but writes no
	 * frame, and rs then holds only the last frame's %rsp (when known).
	 */
	bool (*token_enough)(struct ms_rule_source *src, uint64_t token);
	/*
	 * When set: called once before a walk that reads the stack itself,
	 * i.e. that the walk cache did not answer (ms-unwind prefetches the
	 * copy there). A replayed walk needs no prefetch: its reads are
	 * independent loads that go out together.
	 */
	void (*will_walk)(struct ms_rule_source *src);
};

struct ms_walk {
	uint32_t n;			/* frames made */
	uint32_t end;			/* enum ms_stack_end */
	const struct ms_cfi_rule *rule;	/* the last frame's rule; NULL when none was found */
	/*
	 * With a walk cache: nonzero when the walk was kept or copied from
	 * the cache; every walk given a token has the same frames, end and
	 * rule as the walk kept with it (two kept walks never share one). 0
	 * otherwise.
	 */
	uint64_t token;
};

/*
 * A cache of whole walks over sampled states, for a rule source with an
 * epoch. Samples of a thread that runs the same code repeat their walks:
 * the same PC and %rsp, the same return addresses at the same places of
 * the copy. A walk is a function of the rule source's answers (fixed while
 * the epoch is), the registers it reads and the bytes it reads, so a walk
 * that took only inline steps (and ended by any reason those give, or at
 * an outermost rule) is kept with the initial registers it read and the
 * stack words it read; a later walk with the same epoch, PC, %rsp,
 * register masks and limit whose registers and copied words are the same
 * is that walk, and is copied instead of walked: its frames, end, last
 * rule and final state are the ones the walk would make (the lookups it
 * would make count as memo hits). Anything else is walked.
 *
 * Memory: fixed, allocated by new (entries, and a pool of the walks'
 * words that is emptied when full); nothing per walk.
 */
struct ms_walk_cache;
struct ms_walk_cache *ms_walk_cache_new(void);
void ms_walk_cache_free(struct ms_walk_cache *c);
struct ms_walk_cache_stats {
	uint64_t hits, misses, stored, resets;
};
const struct ms_walk_cache_stats *ms_walk_cache_stats(const struct ms_walk_cache *c);
/*
 * Prefetch the words of the copy (len bytes at bytes, copied from %rsp sp)
 * that the walks kept for (epoch, pc, sp) read: what replaying one of them
 * will check. False when none is kept.
 */
bool ms_walk_cache_prefetch(const struct ms_walk_cache *c, uint64_t epoch, uint64_t pc,
			    uint64_t sp, const uint8_t *bytes, uint64_t len);

/*
 * Walk from state rs (the innermost frame; its PC in val[MS_DW_RA]),
 * writing at most max frames. On return rs is the last frame's state.
 * Returns 0 with *w filled, or -1 after a message from the rule source.
 */
int ms_dwarf_walk(struct ms_regstate *rs, const struct ms_state_reader *rd,
		  struct ms_rule_source *src, struct ms_uframe *frames, uint32_t max,
		  struct ms_walk *w);

#endif
