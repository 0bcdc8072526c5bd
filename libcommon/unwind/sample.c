/*
 * The DWARF unwind methods: the generic loop (unwind/dwarf.c) over a
 * sample's registers and copied stack, with rules from the CFI of the
 * modules the unwinder tracks.
 *
 * Caches:
 *  - each module's CFI (dwarf/cfi.c) lives in the module's slot for the
 *    unwinder's life: modules are known by identity, so it never goes
 *    stale, and its rules are made once per lookup address;
 *  - a PC cache, shared by all processes, maps (address-space generation,
 *    lookup address) to the module, the module-relative address and the
 *    rule index: a hit costs one probe and no mapping search. Any change
 *    to a process's mappings or to its JIT functions gives its space a
 *    new generation, so entries made before it are never used again;
 *  - a JIT function's rule comes from the rows proved from its code
 *    (unwind/jit.h), through the same entries: no frame pointer is
 *    assumed, and a pc no row covers ends the stack with no CFI;
 *  - a registered JIT object's rules come from its own CFI
 *    (unwind/jitobj.h), kept with its module, at absolute addresses; a pc
 *    its CFI does not cover ends the stack with no CFI;
 *  - a walk cache (unwind/dwarf.h: ms_walk_cache_new()) keeps whole walks
 *    by generation, PC and %rsp with the stack words they read: a sample
 *    whose words are the same is that walk, copied rather than walked, and
 *    the unwinder's tagged stacks (ms_unwinder_sample_tagged()) skip even
 *    the copy.
 *
 * dwarf+fp: when the walk ends because the copied bytes ended, the
 * kernel's frame-pointer chain (read from live memory at sample time, so
 * longer than the copy) may continue the stack, but only where the CFI
 * proves each step:
 *  1. the last frame the walk proved keeps a standard frame at its PC
 *     (CFA = %rbp + 16, the caller's %rbp at CFA - 16, the return address
 *     at CFA - 8), and its %rbp value is known;
 *  2. the kernel's chain, replayed through the copied bytes from the
 *     sampled %rbp (each step's saved %rbp and return address equal to
 *     what the copy holds), reaches that %rbp: the next chain entry is
 *     then that frame's return address as read at sample time;
 *  3. each chain frame taken is looked up by its CFI at return address - 1:
 *     a standard frame lets the next entry follow, an undefined return
 *     address ends the stack as outermost, no CFI or no module ends it
 *     there, and any other rule ends it with the walk's reason.
 * Nothing is taken from the chain in any other case (no CFI, a missing
 * register, a CFA that did not move outwards): frame-pointer evidence
 * never continues a stack past an unproven transition.
 */
#include "unwind/unwind.h"

#include <stdlib.h>

#include "dwarf/cfi.h"
#include "unwind/dwarf.h"
#include "util/error.h"
#include "util/prefault.h"

#define PC_CACHE_BITS 13
#define PC_CACHE_SIZE (1u << PC_CACHE_BITS)	/* entry indices fit in 16 bits */
#define RULE_NO_CFI UINT32_MAX
#define RULE_NO_MODULE (UINT32_MAX - 1)

struct pc_entry {
	uint64_t generation;	/* 0: empty */
	uint64_t lookup;
	uint64_t delta;		/* module-relative address = pc - delta */
	struct ms_cfi *cfi;	/* the module's (owned by its slot) */
	const struct ms_cfi_rule *rp;	/* rule's, when it has one (never moves) */
	uint32_t module;
	uint32_t rule;		/* index in cfi, or RULE_NO_* */
	uint32_t loc_flags;
};

/*
 * How far up its stack a thread's last walk read: the last frame's %rsp.
 * A thread's outermost frames stay where they are, so the next sample of
 * the thread reads about as far (see prefetch_copy()).
 */
#define REACH_SLOTS 256
struct reach {
	uint32_t tid;
	uint64_t top;		/* 0: unknown */
};

struct dwarf_state {
	struct ms_rule_source src;	/* first: find() gets it back */
	struct ms_unwinder *u;
	struct ms_unwind_stats *stats;
	struct ms_process *proc;	/* the sample's */
	uint64_t generation;		/* its space's; 0 when none (nothing cached) */
	/* The sample being walked and its state, for will_walk(). */
	const struct ms_sample *sample;
	const struct ms_sampled_state *ss;
	struct reach reach[REACH_SLOTS];
	/*
	 * The PC cache: a slot holds its entry's index, 0 (an entry never
	 * filled, so never a hit) until its first miss. Entries are given in
	 * order of first use, so the pages touched are as many as the PCs seen
	 * rather than the whole table (each a fault, at random).
	 */
	uint32_t n_entries;
	uint16_t slot[PC_CACHE_SIZE];
	struct pc_entry entries[PC_CACHE_SIZE + 1];
};

static uint32_t cache_slot(uint64_t generation, uint64_t lookup)
{
	uint64_t h = (lookup ^ (generation * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> (64 - PC_CACHE_BITS));
}

/* Bind lookup to its module and rule, into e. 0, or -1 after a message. */
/* Out of line: the hit path in find() stays small. */
static __attribute__((noinline)) int fill(struct dwarf_state *st, struct pc_entry *e,
					  uint64_t lookup)
{
	struct ms_code_loc loc;
	const struct ms_cfi_rule *jit_rule;
	uint32_t rule;
	uint64_t made, cached;
	void **slot;
	int r = ms_unwinder_resolve_rule(st->u, st->proc, lookup, &loc, &jit_rule), found;

	if (r < 0)
		return -1;
	*e = (struct pc_entry){
		.generation = st->generation, .lookup = lookup, .delta = lookup - loc.address,
		.module = loc.module, .rule = r ? RULE_NO_CFI : RULE_NO_MODULE,
		.loc_flags = loc.flags,
	};
	/*
	 * A JIT function: the rule of the rows proved from its code (no frame
	 * pointer assumed); none there is no CFI. Its rules need no
	 * expression, so no CFI object is kept for find().
	 */
	if (r && loc.kind == MS_MODULE_PERF_MAP) {
		if (jit_rule && (jit_rule->flags & MS_CFI_SIMPLE)) {
			e->rule = 0;
			e->rp = jit_rule;
		}
		return 0;
	}
	/* A registered JIT object: its own CFI, at absolute addresses. */
	if (r && loc.kind == MS_MODULE_JIT_OBJECT) {
		if (!(e->cfi = ms_unwinder_module_cfi(st->u, loc.module)))
			return 0;
		goto lookup;
	}
	/* Only a file (or vdso image) proved to be the module that ran has CFI to trust. */
	if (!r || (loc.kind != MS_MODULE_FILE && loc.kind != MS_MODULE_VDSO) || !loc.verified ||
	    (loc.flags & MS_FRAME_FILE_OFFSET))
		return 0;
	slot = ms_unwinder_module_slot(st->u, loc.module);
	if (!*slot) {
		const struct ms_module *m = ms_unwinder_module(st->u, loc.module);
		struct ms_debugfind *finder = ms_unwinder_debugfind(st->u);
		const uint8_t *image;
		uint32_t len;

		if (loc.kind == MS_MODULE_VDSO) {
			image = ms_unwinder_vdso_image(st->u, &len);
			*slot = ms_cfi_open_image(image, len, m, finder);
		} else {
			/*
			 * A file the finder gave stands in for the module's: asked
			 * for its debug file, the finder would give it again.
			 */
			*slot = ms_cfi_open(loc.file, m, loc.found ? NULL : finder);
		}
		if (!*slot)
			return -1;
		st->stats->cfi_modules++;
	}
	e->cfi = *slot;
lookup:
	made = ms_cfi_stats(e->cfi)->made;
	cached = ms_cfi_stats(e->cfi)->from_cache;
	if ((found = ms_cfi_find(e->cfi, loc.address, &rule)) < 0)
		return -1;
	st->stats->cfi_rules += ms_cfi_stats(e->cfi)->made - made;
	st->stats->cfi_cached += ms_cfi_stats(e->cfi)->from_cache - cached;
	if (found) {
		e->rule = rule;
		e->rp = ms_cfi_rule(e->cfi, rule);
	}
	return 0;
}

static int find(struct ms_rule_source *src, struct ms_uframe *f, uint64_t lookup,
		const struct ms_cfi_rule **rule, const struct ms_dwarf_op **ops, uint32_t *end)
{
	struct dwarf_state *st = (struct dwarf_state *)src;
	uint16_t *slot = &st->slot[cache_slot(st->generation, lookup)];
	struct pc_entry *e = &st->entries[*slot];

	if (e->generation == st->generation && e->lookup == lookup && st->generation) {
		st->stats->pc_cache_hits++;
	} else {
		st->stats->pc_cache_misses++;
		if (!*slot)
			*slot = (uint16_t)++st->n_entries;
		e = &st->entries[*slot];
		if (fill(st, e, lookup) < 0)
			return -1;
	}
	f->resolved = true;
	f->module = e->module;
	f->address = f->pc - e->delta;
	f->loc_flags = e->loc_flags;
	if (e->rule >= RULE_NO_MODULE) {
		*end = e->rule == RULE_NO_MODULE ? MS_END_NO_MODULE : MS_END_NO_CFI;
		return 0;
	}
	*rule = e->rp;
	/* A simple rule evaluates no expression (and ops may move as rules are made). */
	*ops = e->rp->flags & MS_CFI_SIMPLE ? NULL : ms_cfi_ops(e->cfi);
	return 1;
}

/*
 * dwarf+fp: continue out, which the walk ended with MS_END_STACK_COPY in
 * state last (its last frame's, by rule), from the kernel's chain where
 * the rules in the comment at the top allow it.
 */
static int merge_fp(struct dwarf_state *st, const struct ms_sample *s,
		    const struct ms_sampled_state *ss, struct ms_regstate *last,
		    const struct ms_regstate *sampled, const struct ms_cfi_rule *rule,
		    uint32_t max, struct ms_user_stack *out)
{
	const struct ms_state_reader *rd = &ss->reader;
	const struct ms_cfi_rule *r;
	const struct ms_dwarf_op *ops;
	uint64_t rbp, fp, next, ra;
	uint32_t e, i, j, end = out->end;
	int found;

	if (!rule || !(rule->flags & MS_CFI_FRAME_POINTER) ||
	    !ms_regstate_get(last, rd, MS_DW_RBP, &rbp, &e) ||
	    !(sampled->known & (1u << MS_DW_RBP)))
		return 0;
	/* Replay the kernel's walk: uchain[i + 1] = [fp_i + 8], fp_(i+1) = [fp_i]. */
	fp = sampled->val[MS_DW_RBP];
	for (i = 0; fp != rbp; i++) {
		if (i + 1 >= s->n_uchain || rd->read(rd, fp, &next) < 0 || next <= fp)
			return 0;
		if (rd->read(rd, fp + 8, &ra) == 0 && ra != s->uchain[i + 1])
			return 0;
		fp = next;
	}
	for (j = i + 1;; j++) {
		struct ms_uframe *f;

		if (j >= s->n_uchain) {
			out->end = MS_END_FP_CHAIN;
			return 0;
		}
		if (out->n >= max) {
			out->end = MS_END_DEPTH;
			return 0;
		}
		f = &out->frames[out->n++];
		*f = (struct ms_uframe){ .pc = s->uchain[j], .flags = MS_FRAME_RETURN };
		st->stats->fp_frames++;
		if ((found = find(&st->src, f, f->pc - 1, &r, &ops, &e)) < 0)
			return -1;
		if (!found) {
			out->end = e;
			return 0;
		}
		if (r->flags & MS_CFI_OUTERMOST) {
			out->end = MS_END_OUTERMOST;
			return 0;
		}
		if (!(r->flags & MS_CFI_FRAME_POINTER)) {
			out->end = end;
			return 0;
		}
	}
}

/*
 * A copy that stayed in the saved stream (ms-decode --stack-bytes) was not
 * read since the kernel wrote it: each of the walk's reads, a few a frame
 * and outwards, would wait for memory in turn, each address known only
 * when the read before it returned. Asking for the lines at once lets
 * them arrive together; asking only up to where this thread's last walk
 * read (and a little more) leaves the environment strings and whatever
 * lies above the thread's entry alone. (A walk the walk cache replays
 * does not come here: see will_walk in unwind/dwarf.h.)
 */
static void prefetch_copy(struct ms_rule_source *src)
{
	struct dwarf_state *st = (struct dwarf_state *)src;
	const struct ms_sample *s = st->sample;
	const struct ms_sampled_state *ss = st->ss;
	const struct reach *r = &st->reach[s->tid % REACH_SLOTS];
	uint64_t len = ss->len, i;

	if (!s->stack_in_file)
		return;	/* the copy came through a pipe: in cache already */
	if (r->tid == s->tid && r->top > ss->start && r->top - ss->start + 256 < len)
		len = r->top - ss->start + 256;
	/* (Four lines a turn: the loop costs less than its prefetches.) */
	for (i = 0; i + 256 <= len; i += 256) {
		__builtin_prefetch(ss->bytes + i);
		__builtin_prefetch(ss->bytes + i + 64);
		__builtin_prefetch(ss->bytes + i + 128);
		__builtin_prefetch(ss->bytes + i + 192);
	}
	for (; i < len; i += 64)
		__builtin_prefetch(ss->bytes + i);
}

static void note_reach(struct dwarf_state *st, const struct ms_sample *s,
		       const struct ms_regstate *rs)
{
	struct reach *r = &st->reach[s->tid % REACH_SLOTS];

	r->tid = s->tid;
	r->top = rs->known & (1u << MS_DW_RSP) ? rs->val[MS_DW_RSP] : 0;
}

/* The walk cache's question: whether the unwinder needs a kept walk's frames. */
static bool token_enough(struct ms_rule_source *src, uint64_t token)
{
	struct dwarf_state *st = (struct dwarf_state *)src;

	return ms_unwinder_tagged(st->u, token);
}

static int walk(struct ms_unwinder *u, struct ms_process *proc, const struct ms_sample *s,
		uint32_t max, struct ms_user_stack *out, bool with_fp)
{
	struct dwarf_state *st = ms_unwinder_method_state(u);
	struct ms_sampled_state ss;
	struct ms_regstate rs, sampled;
	struct ms_walk w;

	st->proc = proc;
	st->generation = proc ? ms_process_addrspace(proc)->generation : 0;
	/* find()'s answers hold while the space's generation does: the walk's memo keeps them. */
	st->src.epoch = st->generation;
	/* A tagged stack's frames are not needed (the merge needs a walk's state). */
	st->src.token_enough = out->token_enough && !with_fp ? token_enough : NULL;
	ms_sampled_state_init(&ss, &rs, s);
	st->sample = s;
	st->ss = &ss;
	if (ms_dwarf_walk(&rs, &ss.reader, &st->src, out->frames, max, &w) < 0)
		return -1;
	note_reach(st, s, &rs);
	{
		const struct ms_walk_cache_stats *wc = ms_walk_cache_stats(st->src.cache);

		st->stats->walks_replayed = wc->hits;
		st->stats->walks_kept = wc->stored;
		st->stats->walk_cache_resets = wc->resets;
	}
	out->n = w.n;
	out->end = w.end;
	out->token = w.token;
	st->stats->dwarf_frames += w.n;
	/* The walk's memo answered these without find(): hits of the PC cache too. */
	st->stats->pc_cache_hits += st->src.memo_hits;
	st->src.memo_hits = 0;
	if (with_fp && w.end == MS_END_STACK_COPY) {
		struct ms_sampled_state ss2;

		/* (Never a kept walk's end; the stack is then not the walk's alone.) */
		out->token = 0;
		/* The sampled state again: the walk made rs the last frame's. */
		ms_sampled_state_init(&ss2, &sampled, s);
		return merge_fp(st, s, &ss, &rs, &sampled, w.rule, max, out);
	}
	return 0;
}

/*
 * The next sample's stack words, asked for while this one is walked: the
 * words its kept walk will check (most samples), else nothing (the walk
 * prefetches, see prefetch_copy()).
 */
static void prefetch_sample(struct ms_unwinder *u, struct ms_process *proc,
			    const struct ms_sample *s)
{
	struct dwarf_state *st = ms_unwinder_method_state(u);
	uint64_t pc, sp;

	if (!s->stack_in_file || !s->stack)
		return;	/* a copy that came through a pipe is in cache already */
	if (ms_sampled_pc_sp(s, &pc, &sp))
		ms_walk_cache_prefetch(st->src.cache, ms_process_addrspace(proc)->generation,
				       pc, sp, s->stack, s->stack_len);
}

static int walk_dwarf(struct ms_unwinder *u, struct ms_process *proc, const struct ms_sample *s,
		      uint32_t max, struct ms_user_stack *out)
{
	return walk(u, proc, s, max, out, false);
}

static int walk_dwarf_fp(struct ms_unwinder *u, struct ms_process *proc,
			 const struct ms_sample *s, uint32_t max, struct ms_user_stack *out)
{
	return walk(u, proc, s, max, out, true);
}

static int state_init(struct ms_unwinder *u, void **state)
{
	/* (Pages of its own: the PC cache's pages are touched as PCs come.) */
	struct dwarf_state *st = ms_pages_alloc(sizeof(*st));

	if (!st || !(st->src.cache = ms_walk_cache_new())) {
		ms_pages_free(st, sizeof(*st));
		return ms_error("out of memory for the unwind cache");
	}
	st->src.find = find;
	st->src.will_walk = prefetch_copy;
	st->u = u;
	st->stats = ms_unwinder_counters(u);
	*state = st;
	return 0;
}

static void state_free(void *state)
{
	struct dwarf_state *st = state;

	if (st)
		ms_walk_cache_free(st->src.cache);
	ms_pages_free(st, sizeof(*st));
}

static void cfi_free(void *data)
{
	ms_cfi_free(data);
}

const struct ms_unwind_method ms_unwind_method_dwarf = {
	.name = "dwarf",
	.walk = walk_dwarf,
	.module_free = cfi_free,
	.init = state_init,
	.state_free = state_free,
	.prefetch = prefetch_sample,
};

const struct ms_unwind_method ms_unwind_method_dwarf_fp = {
	.name = "dwarf+fp",
	.walk = walk_dwarf_fp,
	.module_free = cfi_free,
	.init = state_init,
	.state_free = state_free,
	.prefetch = prefetch_sample,
};
