#include "unwind/dwarf.h"

#include <dwarf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"
#include "util/prefault.h"

/* perf_event's x86-64 register order (asm/perf_regs.h) in DWARF numbering; -1: none. */
static const int8_t perf_to_dwarf[] = {
	[0] = MS_DW_RAX, [1] = MS_DW_RBX, [2] = MS_DW_RCX, [3] = MS_DW_RDX,
	[4] = MS_DW_RSI, [5] = MS_DW_RDI, [6] = MS_DW_RBP, [7] = MS_DW_RSP,
	[8] = MS_DW_RA,	/* IP */
	[9] = -1, [10] = -1, [11] = -1, [12] = -1, [13] = -1, [14] = -1, [15] = -1,
	[16] = 8, [17] = 9, [18] = 10, [19] = 11, [20] = 12, [21] = 13, [22] = 14, [23] = 15,
};

#define PERF_REGS_ABI_64 2
/* AX..IP (bits 0-8) and R8..R15 (16-23): every register with a DWARF number. */
#define PERF_REGS_DWARF 0xff01ffull

void ms_sampled_state_init(struct ms_sampled_state *st, struct ms_regstate *rs,
			   const struct ms_sample *s)
{
	uint32_t idx = 0;

	rs->known = rs->saved = 0;
	if (s->regs_abi == PERF_REGS_ABI_64 && s->regs_mask == PERF_REGS_DWARF &&
	    s->n_regs >= 17) {
		/* What ms-record asks for: the 17 registers DWARF numbers, no loop. */
		const uint64_t *r = s->regs;

		rs->val[MS_DW_RAX] = r[0];
		rs->val[MS_DW_RBX] = r[1];
		rs->val[MS_DW_RCX] = r[2];
		rs->val[MS_DW_RDX] = r[3];
		rs->val[MS_DW_RSI] = r[4];
		rs->val[MS_DW_RDI] = r[5];
		rs->val[MS_DW_RBP] = r[6];
		rs->val[MS_DW_RSP] = r[7];
		rs->val[MS_DW_RA] = r[8];
		memcpy(&rs->val[8], &r[9], 8 * sizeof(*r));	/* r8-r15 */
		rs->known = (1u << MS_DWARF_REGS) - 1;
	} else if (s->regs_abi == PERF_REGS_ABI_64) {
		/* regs[] holds one value per bit of the mask, in bit order. */
		for (uint64_t mask = s->regs_mask; mask && idx < s->n_regs; mask &= mask - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(mask);
			int reg = bit < sizeof(perf_to_dwarf) ? perf_to_dwarf[bit] : -1;

			if (reg >= 0) {
				rs->val[reg] = s->regs[idx];
				rs->known |= 1u << reg;
			}
			idx++;
		}
	}
	if (!(rs->known & (1u << MS_DW_RA))) {
		uint64_t pc = s->cpumode == MS_CPUMODE_USER ? s->ip : s->n_uchain ? s->uchain[0] : 0;

		if (pc) {
			rs->val[MS_DW_RA] = pc;
			rs->known |= 1u << MS_DW_RA;
		}
	}
	st->reader.read = ms_sampled_read;
	st->bytes = s->stack;
	if (rs->known & (1u << MS_DW_RSP)) {
		st->start = rs->val[MS_DW_RSP];
		st->len = s->stack_len;
	} else {
		st->start = 0;
		st->len = 0;
	}
}

bool ms_sampled_pc_sp(const struct ms_sample *s, uint64_t *pc, uint64_t *sp)
{
	struct ms_sampled_state st;
	struct ms_regstate rs;
	const uint32_t need = 1u << MS_DW_RA | 1u << MS_DW_RSP;

	if (s->regs_abi == PERF_REGS_ABI_64 && s->regs_mask == PERF_REGS_DWARF &&
	    s->n_regs >= 17) {
		/* What ms-record asks for (see ms_sampled_state_init()): %rsp is 7, the IP 8. */
		*sp = s->regs[7];
		*pc = s->regs[8];
		return true;
	}
	ms_sampled_state_init(&st, &rs, s);
	*pc = rs.val[MS_DW_RA];
	*sp = rs.val[MS_DW_RSP];
	return (rs.known & need) == need;
}

/* The walk cache ------------------------------------------------------------- */

#define WC_SET_BITS 9
#define WC_WAYS 4		/* a PC and %rsp can have walks that differ further out */
#define WC_POOL (1u << 18)		/* words: 2 MiB */
#define WC_EXTRA 2			/* initial registers a walk may read besides %rsp */
#define WC_POPULATE (1u << 14)		/* pool words populated at a time: 128 KiB */
#define UFRAME_WORDS ((sizeof(struct ms_uframe) + 7) / 8)

/*
 * A kept walk in the pool: this, then its reads (offset, word), the final
 * values of the registers it set, its frames. The entries (the key) are
 * small: a set is touched at every walk, the pool only on a match.
 */
struct wc_walk {
	const struct ms_cfi_rule *rule;	/* the walk's last rule (ms_walk) */
	uint64_t xval[WC_EXTRA];	/* the other initial registers read */
	uint32_t known0, saved0, max;
	uint32_t n, end, n_reads;
	uint32_t need;			/* copied bytes the reads need */
	uint32_t written;		/* registers the walk set: their final values are stored */
	uint32_t known1, saved1;
	uint8_t xreg[WC_EXTRA], nx;
	uint8_t rsp_at;			/* %rsp's among the final values, when written */
};
#define WC_HEAD_WORDS ((sizeof(struct wc_walk) + 7) / 8)
/*
 * The most words a walk of max frames stores (and one so that each kept
 * walk has its own first word).
 */
#define WC_WORDS(max) \
	(WC_HEAD_WORDS + (2 + UFRAME_WORDS) * (uint64_t)(max) + MS_DWARF_REGS + 1)

struct wc_entry {
	uint64_t epoch;			/* 0: empty */
	uint64_t pc, sp;		/* the initial PC and %rsp */
	uint64_t token;			/* see ms_walk */
	uint32_t gen;			/* the pool's when stored */
	uint32_t first;			/* the walk's struct wc_walk in the pool */
};

struct ms_walk_cache {
	struct ms_walk_cache_stats stats;
	uint32_t gen, top;
	uint32_t ready;			/* pool words populated (ms_populate()) */
	uint64_t tokens;		/* given so far */
	uint32_t victim;		/* the way a walk is kept in when none is free */
	struct wc_entry e[WC_WAYS << WC_SET_BITS];
	uint64_t pool[WC_POOL];
};

/* What a walk being recorded has read: see ms_dwarf_walk(). */
struct wc_rec {
	uint64_t *reads;		/* at the pool's top: offset, word */
	uint32_t nr, need;
	uint32_t init;			/* registers that still hold their initial value */
	uint32_t written;
	uint8_t nx, xreg[WC_EXTRA];
	uint64_t xval[WC_EXTRA];
};

struct ms_walk_cache *ms_walk_cache_new(void)
{
	/* Large and zero: the pool's pages are given as it fills (wc_begin()). */
	struct ms_walk_cache *c = ms_pages_alloc(sizeof(*c));

	if (c) {
		c->gen = 1;
		/* the sets are read and written at random from the first walk */
		ms_populate(c, offsetof(struct ms_walk_cache, pool));
	}
	return c;
}

void ms_walk_cache_free(struct ms_walk_cache *c)
{
	ms_pages_free(c, sizeof(*c));
}

const struct ms_walk_cache_stats *ms_walk_cache_stats(const struct ms_walk_cache *c)
{
	return &c->stats;
}

/* The set of ways where the walks from pc and sp are kept. */
static inline struct wc_entry *wc_set(struct ms_walk_cache *c, uint64_t epoch, uint64_t pc,
				      uint64_t sp)
{
	uint64_t h = (pc ^ (sp * 0xff51afd7ed558ccdull) ^ (epoch * 0xc4ceb9fe1a85ec53ull)) *
		     0x9e3779b97f4a7c15ull;

	return &c->e[(h >> (64 - WC_SET_BITS)) * WC_WAYS];
}

bool ms_walk_cache_prefetch(const struct ms_walk_cache *c, uint64_t epoch, uint64_t pc,
			    uint64_t sp, const uint8_t *bytes, uint64_t len)
{
	const struct wc_entry *e = wc_set((struct ms_walk_cache *)c, epoch, pc, sp);

	for (uint32_t way = 0; way < WC_WAYS; way++, e++) {
		const struct wc_walk *k;
		const uint64_t *p;

		/*
		 * The key first, then the pool: a walk's record is read only for
		 * the way that matches (gcc loaded all four, each a likely miss).
		 */
		if (__builtin_expect(e->epoch != epoch || e->pc != pc || e->sp != sp ||
				     e->gen != c->gen, 1))
			continue;
		__asm__ volatile("" ::: "memory");
		k = (const struct wc_walk *)(c->pool + e->first);
		p = c->pool + e->first + WC_HEAD_WORDS;
		if (k->need > len)
			continue;
		/* (Ways of one key read nearly the same words: the first, replay's first check.) */
		for (uint32_t i = 0; i < k->n_reads; i++)
			__builtin_prefetch(bytes + p[2 * i]);
		return true;
	}
	return false;
}

/* The walk e holds when it is the walk from rs over the copy of len bytes at bytes. */
static inline const struct wc_walk *wc_match(const struct ms_walk_cache *c,
					     const struct wc_entry *e, uint64_t epoch,
					     const struct ms_regstate *rs, const uint8_t *bytes,
					     uint64_t len, uint32_t max)
{
	const struct wc_walk *k;
	const uint64_t *p, *end;
	uint64_t v, w, diff = 0;

	if (__builtin_expect(e->epoch != epoch || e->pc != rs->val[MS_DW_RA] ||
			     e->sp != rs->val[MS_DW_RSP] || e->gen != c->gen, 1))
		return NULL;
	/* (The pool only for the way that matches: see ms_walk_cache_prefetch().) */
	__asm__ volatile("" ::: "memory");
	k = (const struct wc_walk *)(c->pool + e->first);
	if (k->known0 != rs->known || k->saved0 != rs->saved || k->max != max || k->need > len)
		return NULL;
	for (uint32_t i = 0; i < k->nx; i++)
		if (rs->val[k->xreg[i]] != k->xval[i])
			return NULL;
	/* Every word, two a turn, with no branch on each: most walks match. */
	p = c->pool + e->first + WC_HEAD_WORDS;
	end = p + 2 * k->n_reads;
	for (; end - p >= 4; p += 4) {
		memcpy(&v, bytes + p[0], 8);
		memcpy(&w, bytes + p[2], 8);
		diff |= (v ^ p[1]) | (w ^ p[3]);
	}
	if (p < end) {
		memcpy(&v, bytes + p[0], 8);
		diff |= v ^ p[1];
	}
	return diff ? NULL : k;
}

/*
 * The walk from rs if the cache holds it (rs's PC and %rsp, the copy of
 * len bytes at rs's %rsp): true with rs, frames and w as the walk makes
 * them. False leaves everything as it was.
 */
static bool wc_replay(struct ms_walk_cache *c, struct ms_rule_source *src, struct ms_regstate *rs,
		      const uint8_t *bytes, uint64_t len, uint32_t max, struct ms_uframe *frames,
		      struct ms_walk *w)
{
	const struct wc_entry *e = wc_set(c, src->epoch, rs->val[MS_DW_RA], rs->val[MS_DW_RSP]);
	const struct wc_walk *k = NULL;
	const uint64_t *p;

	for (uint32_t way = 0; way < WC_WAYS && !k; way++, e++)
		k = wc_match(c, e, src->epoch, rs, bytes, len, max);
	if (!k)
		return false;
	w->n = k->n;
	w->end = k->end;
	w->rule = k->rule;
	w->token = e[-1].token;
	p = (const uint64_t *)k + WC_HEAD_WORDS + 2 * k->n_reads;
	if (src->token_enough && src->token_enough(src, w->token)) {
		/* Only the last frame's %rsp: the final values are in register order. */
		uint32_t rsp = 1u << MS_DW_RSP;

		if (k->written & rsp)
			rs->val[MS_DW_RSP] = p[k->rsp_at];
		rs->known = k->known1 & rsp;
		rs->saved = 0;
	} else {
		for (uint32_t m = k->written; m; m &= m - 1)
			rs->val[__builtin_ctz(m)] = *p++;
		rs->known = k->known1;
		rs->saved = k->saved1;
		memcpy(frames, p, k->n * sizeof(*frames));
	}
	/* The walk would have looked each frame up. */
	src->memo_hits += k->n;
	c->stats.hits++;
	return true;
}

/* Start recording a walk of at most max frames from rs: false when it cannot be kept. */
static bool wc_begin(struct ms_walk_cache *c, const struct ms_regstate *rs, uint32_t max,
		     struct wc_rec *rec)
{
	c->stats.misses++;
	if (WC_WORDS(max) > WC_POOL)
		return false;
	if (c->top + WC_WORDS(max) > WC_POOL) {
		/* Full: every entry goes at once (a new pool generation). */
		if (++c->gen == 0) {
			memset(c->e, 0, sizeof(c->e));
			c->gen = 1;
		}
		c->top = 0;
		c->stats.resets++;
	}
	if (c->top + WC_WORDS(max) > c->ready && c->ready < WC_POOL) {
		/* The next part at once, not a page fault at a time. */
		uint32_t n = WC_POOL - c->ready < WC_POPULATE ? WC_POOL - c->ready : WC_POPULATE;

		ms_populate(c->pool + c->ready, (size_t)n * sizeof(*c->pool));
		c->ready += n;
	}
	rec->reads = c->pool + c->top + WC_HEAD_WORDS;
	rec->nr = rec->need = rec->written = 0;
	rec->nx = 0;
	/* The PC and %rsp are the key. */
	rec->init = rs->known & ~(1u << MS_DW_RA | 1u << MS_DW_RSP);
	return true;
}

/*
 * A walk being recorded took an inline step by rule, its CFA register
 * holding value, reading word at offset off: rec, or NULL when the walk
 * can no longer be kept.
 */
static inline struct wc_rec *wc_note(struct wc_rec *rec, const struct ms_cfi_rule *rule,
				     uint64_t value, uint64_t off, uint64_t word)
{
	uint32_t bit = 1u << rule->cfa_reg;

	if (rec->init & bit) {
		/* An initial register the walk reads: part of the key. */
		if (rec->nx == WC_EXTRA)
			return NULL;
		rec->xreg[rec->nx] = rule->cfa_reg;
		rec->xval[rec->nx++] = value;
	}
	rec->init &= ~rule->clear;
	rec->written |= rule->saved | rule->valued;
	rec->reads[2 * rec->nr] = off;
	rec->reads[2 * rec->nr + 1] = word;
	rec->nr++;
	if (off + 8 > rec->need)
		rec->need = (uint32_t)(off + 8);
	return rec;
}

/*
 * Keep the walk recorded in rec: from pc and sp, in state known0/saved0,
 * to rs and w (w->token set), in a free way of its set, else in one
 * chosen in turn.
 */
static void wc_store(struct ms_walk_cache *c, const struct wc_rec *rec, uint64_t epoch,
		     uint64_t pc, uint64_t sp, uint32_t known0, uint32_t saved0, uint32_t max,
		     const struct ms_regstate *rs, const struct ms_uframe *frames, struct ms_walk *w)
{
	struct wc_entry *set = wc_set(c, epoch, pc, sp), *e = NULL;
	struct wc_walk *k = (struct wc_walk *)(c->pool + c->top);
	uint64_t *p = rec->reads + 2 * rec->nr;

	for (uint32_t way = 0; way < WC_WAYS && !e; way++)
		if (!set[way].epoch || set[way].gen != c->gen)
			e = &set[way];
	if (!e)
		e = &set[c->victim++ % WC_WAYS];
	for (uint32_t m = rec->written; m; m &= m - 1)
		*p++ = rs->val[__builtin_ctz(m)];
	memcpy(p, frames, w->n * sizeof(*frames));
	p += UFRAME_WORDS * w->n + 1;
	*k = (struct wc_walk){
		.rule = w->rule, .known0 = known0, .saved0 = saved0, .max = max,
		.n = w->n, .end = w->end, .n_reads = rec->nr, .need = rec->need,
		.written = rec->written, .known1 = rs->known, .saved1 = rs->saved,
		.nx = rec->nx,
		.rsp_at = (uint8_t)__builtin_popcount(rec->written & ((1u << MS_DW_RSP) - 1)),
	};
	for (uint32_t i = 0; i < rec->nx; i++) {
		k->xreg[i] = rec->xreg[i];
		k->xval[i] = rec->xval[i];
	}
	w->token = ++c->tokens;
	*e = (struct wc_entry){
		.epoch = epoch, .pc = pc, .sp = sp, .token = w->token, .gen = c->gen,
		.first = c->top,
	};
	c->top = (uint32_t)(p - c->pool);
	c->stats.stored++;
}

static inline uint32_t memo_slot(uint64_t lookup)
{
	return (uint32_t)((lookup * 0x9e3779b97f4a7c15ull) >> (64 - MS_RULE_MEMO_BITS));
}

/* A frame's flags are its return-address bit. */
_Static_assert(MS_FRAME_RETURN == 1, "MS_FRAME_RETURN is bit 0");

/*
 * A lookup the memo did not hold: ask the source, and remember the answer
 * when its rule needs no expression (simple, or outermost: the step stops
 * before any), since ops may move as the source makes rules.
 */
static inline int find_rule(struct ms_rule_source *src, struct ms_uframe *f, uint64_t lookup,
			    uint64_t key, const struct ms_cfi_rule **rule,
			    const struct ms_dwarf_op **ops, uint32_t *end)
{
	struct ms_rule_memo *m = &src->memo[memo_slot(lookup)];
	int r;

	f->resolved = false;
	*rule = NULL;
	r = src->find(src, f, lookup, rule, ops, end);
	if (r > 0 && ((*rule)->flags & (MS_CFI_SIMPLE | MS_CFI_OUTERMOST)) && f->resolved &&
	    f->loc_flags <= UINT16_MAX)
		*m = (struct ms_rule_memo){
			.lookup = lookup, .key = key, .rule = *rule,
			.delta = f->pc - f->address, .module = f->module,
			.loc_flags = (uint16_t)f->loc_flags, .resolved = true,
		};
	return r;
}

/*
 * Each frame's rule from the memo (see ms_rule_source) or the source; the
 * common rule (fast, its CFA register known) stepped inline over the
 * sampled reader's bytes, held in locals, with the register masks in
 * locals too; anything else, errors included, takes ms_dwarf_step(),
 * which decides the same. With a walk cache, a walk it holds is copied,
 * and one that took only inline steps is recorded (rec): the initial
 * registers it read and the words it read.
 */
int ms_dwarf_walk(struct ms_regstate *rs, const struct ms_state_reader *rd,
		  struct ms_rule_source *src, struct ms_uframe *frames, uint32_t max,
		  struct ms_walk *w)
{
	const struct ms_dwarf_op *ops;
	const struct ms_cfi_rule *rule = NULL;
	const uint8_t *bytes = NULL;
	uint64_t last, cfa, key, base = 0, lim = 0, pc, pc0;
	uint32_t n = 0, ret = 0, known, saved, known0, saved0;
	struct wc_rec wrec, *rec = NULL;
	int r;

	w->n = 0;
	w->rule = NULL;
	w->token = 0;
	if (!(rs->known & (1u << MS_DW_RA))) {
		w->end = MS_END_MISSING_REGISTER;
		return 0;
	}
	if (rd->read == ms_sampled_read) {
		const struct ms_sampled_state *st = (const struct ms_sampled_state *)rd;

		/* Reads at base + [0, lim) are inside the copy: one compare each. */
		if (st->len >= 8) {
			bytes = st->bytes;
			base = st->start;
			lim = st->len - 7;
			/* Kept walks are keyed by %rsp, the copy's start (offsets: 32 bits). */
			if (src->cache && src->epoch && (rs->known & (1u << MS_DW_RSP)) &&
			    rs->val[MS_DW_RSP] == base && st->len <= UINT32_MAX) {
				if (wc_replay(src->cache, src, rs, bytes, st->len, max, frames, w))
					return 0;
				if (wc_begin(src->cache, rs, max, &wrec))
					rec = &wrec;
			}
		}
	}
	if (src->will_walk)
		src->will_walk(src);
	/* Answers of this walk only carry the top bit: epochs never do. */
	key = src->epoch ? src->epoch : ++src->walks | 1ull << 63;
	/* The CFA must rise above the sampled %rsp, then above each CFA before. */
	last = rs->known & (1u << MS_DW_RSP) ? rs->val[MS_DW_RSP] : 0;
	pc = pc0 = rs->val[MS_DW_RA];
	/* (Written back to rs around the full step and at the end.) */
	known = known0 = rs->known;
	saved = saved0 = rs->saved;
	for (;;) {
		uint64_t lookup = pc - ret;
		const struct ms_rule_memo *m = &src->memo[memo_slot(lookup)];
		struct ms_uframe *f;

		if (n >= max) {
			w->end = MS_END_DEPTH;
			break;
		}
		f = &frames[n++];
		f->pc = pc;
		f->flags = ret;		/* MS_FRAME_RETURN or 0 */
		if (__builtin_expect(m->lookup == lookup && m->key == key, 1)) {
			rule = m->rule;
			ops = NULL;
			f->resolved = true;
			f->module = m->module;
			f->address = pc - m->delta;
			f->loc_flags = m->loc_flags;
			src->memo_hits++;
		} else if ((r = find_rule(src, f, lookup, key, &rule, &ops, &w->end)) <= 0) {
			w->n = n;
			w->rule = NULL;
			rs->known = known;
			rs->saved = saved;
			if (rec && !r)
				wc_store(src->cache, rec, src->epoch, pc0, base, known0,
					 saved0, max, rs, frames, w);
			return r;
		}
		if (rule->fast && (known & (1u << rule->cfa_reg))) {
			const struct ms_reg_rule *rr = rule->regs, *ra = rr + rule->n - 1;
			uint64_t off;

			cfa = rs->val[rule->cfa_reg] + (uint64_t)(int64_t)rule->cfa_arg;
			off = cfa + (uint64_t)(int64_t)rule->ra_off - base;
			if (cfa <= last || off >= lim)
				goto full;
			memcpy(&pc, bytes + off, 8);
			if (__builtin_expect(rec != NULL, 0))
				rec = wc_note(rec, rule, rs->val[rule->cfa_reg], off, pc);
			/*
			 * Where the caller's registers are saved (read only if a rule
			 * needs them), and its %rsp; unrolled: a rule lists few.
			 */
#define SAVE(i) rs->val[rr[i].reg] = cfa + (uint64_t)(int64_t)rr[i].arg
			switch (ra - rr) {
			case 7: SAVE(6); /* fall through */
			case 6: SAVE(5); /* fall through */
			case 5: SAVE(4); /* fall through */
			case 4: SAVE(3); /* fall through */
			case 3: SAVE(2); /* fall through */
			case 2: SAVE(1); /* fall through */
			case 1: SAVE(0); /* fall through */
			case 0: break;
			default:
				for (; rr < ra; rr++)
					SAVE(0);
				break;
			}
#undef SAVE
			rs->val[MS_DW_RA] = pc;
			known = (known & ~rule->clear) | rule->set_known;
			saved = (saved & ~rule->clear) | rule->set_saved;
		} else {
full:
			rs->known = known;
			rs->saved = saved;
			/* Only an outermost rule's end, which reads nothing, can be kept. */
			if (!(rule->flags & MS_CFI_OUTERMOST))
				rec = NULL;
			if (!ms_dwarf_step(rs, rd, rule, ops, last, &cfa, &w->end)) {
				w->rule = rule;
				w->n = n;
				if (rec)
					wc_store(src->cache, rec, src->epoch, pc0, base,
						 known0, saved0, max, rs, frames, w);
				return 0;
			}
			rec = NULL;	/* (an outermost rule never steps: defensive) */
			known = rs->known;
			saved = rs->saved;
			pc = rs->val[MS_DW_RA];
		}
		last = cfa;
		ret = !(rule->flags & MS_CFI_SIGNAL);
		if (!pc) {
			/* A zero return address: nothing called this frame. */
			w->end = MS_END_OUTERMOST;
			rule = NULL;
			break;
		}
	}
	w->rule = rule;
	w->n = n;
	rs->known = known;
	rs->saved = saved;
	if (rec)
		wc_store(src->cache, rec, src->epoch, pc0, base, known0, saved0, max, rs,
			 frames, w);
	return 0;
}
