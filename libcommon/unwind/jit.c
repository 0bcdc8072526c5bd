/* ms-unwind's per-process JIT functions and their interned rules: see jit.h. */
#include "unwind/jit.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/perfmap.h"
#include "jit/rows.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hashindex.h"

/* Rules ------------------------------------------------------------------- */

#define CHUNK_BITS 8
#define CHUNK (1u << CHUNK_BITS)

/* A row's frame, its offset aside, with no padding to compare. */
struct rule_key {
	uint32_t w[3 + MS_PROVE_SAVE_REGS];
};

struct ms_jit_rules {
	/* In chunks that never move: the walk keeps pointers to rules. */
	struct ms_cfi_rule **chunks;
	uint32_t n, n_chunks, chunks_alloc;
	struct rule_key *keys;
	uint32_t keys_alloc;
	struct ms_index ix;
	struct ms_prove_rows scratch;	/* a record's rows, decoded */
};

struct ms_jit_rules *ms_jit_rules_new(void)
{
	struct ms_jit_rules *r = calloc(1, sizeof(*r));

	if (!r)
		ms_error("out of memory for the rules of JIT functions");
	return r;
}

void ms_jit_rules_free(struct ms_jit_rules *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->n_chunks; i++)
		free(r->chunks[i]);
	free(r->chunks);
	free(r->keys);
	ms_index_release(&r->ix);
	free(r);
}

uint32_t ms_jit_rules_count(const struct ms_jit_rules *r)
{
	return r->n;
}

static const struct ms_cfi_rule *rule_at(const struct ms_jit_rules *r, uint32_t id)
{
	return &r->chunks[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

static void row_key(const struct ms_prove_row *row, struct rule_key *k)
{
	k->w[0] = (uint32_t)row->cfa_off;
	k->w[1] = row->cfa_reg;
	k->w[2] = (uint32_t)row->saved << 16 | row->lost;
	for (unsigned i = 0; i < MS_PROVE_SAVE_REGS; i++)
		k->w[3 + i] = (uint32_t)row->save_off[i];
}

static bool key_eq(const void *ctx, uint32_t entry, const void *key)
{
	const struct ms_jit_rules *r = ctx;

	return !memcmp(&r->keys[entry], key, sizeof(struct rule_key));
}

/* The id of row's rule, made if new: 1, 0 when the rules are full, -1 after a message. */
static int rule_get(struct ms_jit_rules *r, const struct ms_prove_row *row, uint32_t *id)
{
	struct rule_key k;
	uint32_t h, e;

	row_key(row, &k);
	h = ms_hash_bytes(&k, sizeof(k));
	if ((e = ms_index_find(&r->ix, h, key_eq, r, &k)) != MS_INDEX_EMPTY) {
		*id = e;
		return 1;
	}
	if (r->n >= MS_JIT_RULES_MAX)
		return 0;
	if (!(r->n & (CHUNK - 1))) {
		struct ms_cfi_rule *c;

		if (!ms_reserve((void **)&r->chunks, &r->chunks_alloc, (uint64_t)r->n_chunks + 1,
				sizeof(*r->chunks)) ||
		    !(c = malloc(CHUNK * sizeof(*c))))
			return ms_error("out of memory for %u rules of JIT functions", r->n + 1);
		r->chunks[r->n_chunks++] = c;
	}
	if (!ms_reserve((void **)&r->keys, &r->keys_alloc, (uint64_t)r->n + 1, sizeof(*r->keys)) ||
	    ms_index_add(&r->ix, h, r->n) < 0)
		return ms_error("out of memory for %u rules of JIT functions", r->n + 1);
	r->keys[r->n] = k;
	ms_rows_rule(row, &r->chunks[r->n >> CHUNK_BITS][r->n & (CHUNK - 1)]);
	*id = r->n++;
	return 1;
}

const struct ms_cfi_rule *ms_jit_fn_rule(const struct ms_jit_rules *r, const struct ms_jit_fn *fn,
					 uint64_t pc)
{
	uint64_t off = pc - fn->start;
	uint32_t lo = 0, hi = fn->n_rows;

	if (pc < fn->start || off >= fn->stop || !fn->n_rows)
		return NULL;
	/* The last row whose offset is at or below off (row 0 is at 0). */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fn->rows[mid].offset <= off)
			lo = mid;
		else
			hi = mid;
	}
	return rule_at(r, fn->rows[lo].rule);
}

/* Tables ------------------------------------------------------------------- */

enum { NAMED = 1 };

struct meta {
	uint64_t time;		/* when its line was read */
	uint32_t first;		/* its rows in the table's pool */
	uint32_t stop;
	uint16_t n_rows;
	uint16_t flags;
};

struct ms_jit_table {
	struct ms_perfmap map;
	struct meta *meta;	/* by function id */
	uint32_t meta_alloc;
	struct ms_jit_row *rows;
	uint32_t n_rows, rows_alloc;
	uint64_t epoch;
	uint32_t named;		/* functions whose frames were named */
	bool dirty;		/* functions not yet indexed */
	char *path;
};

/* Epochs come from one counter: a perf-map module's identity holds its epoch. */
static uint64_t last_epoch;

static void init(struct ms_jit_table *t)
{
	memset(t, 0, sizeof(*t));
	ms_perfmap_init(&t->map);
	t->epoch = ++last_epoch;
}

static void release(struct ms_jit_table *t)
{
	ms_perfmap_release(&t->map);
	free(t->meta);
	free(t->rows);
}

struct ms_jit_table *ms_jit_table_new(void)
{
	struct ms_jit_table *t = malloc(sizeof(*t));

	if (!t) {
		ms_error("out of memory for a process's JIT functions");
		return NULL;
	}
	init(t);
	return t;
}

void ms_jit_table_free(struct ms_jit_table *t)
{
	if (!t)
		return;
	release(t);
	free(t->path);
	free(t);
}

/* Function id's record, rows appended from rows[0, n) (with stop). 0, or -1 after a message. */
static int keep(struct ms_jit_table *t, uint32_t id, uint64_t time, const struct ms_jit_row *rows,
		uint32_t n, uint32_t stop)
{
	if (!ms_reserve((void **)&t->meta, &t->meta_alloc, (uint64_t)id + 1, sizeof(*t->meta)) ||
	    !ms_reserve((void **)&t->rows, &t->rows_alloc, (uint64_t)t->n_rows + n,
			sizeof(*t->rows)))
		return ms_error("out of memory for %u JIT functions", id + 1);
	t->meta[id] = (struct meta){ .time = time, .first = t->n_rows, .stop = stop,
				     .n_rows = (uint16_t)n };
	if (n)
		memcpy(&t->rows[t->n_rows], rows, n * sizeof(*rows));
	t->n_rows += n;
	t->dirty = true;
	return 0;
}

int ms_jit_table_add(struct ms_jit_table *t, struct ms_jit_rules *rules,
		     const struct ms_jit_func *f, struct ms_problems *problems)
{
	struct ms_jit_row rows[MS_PROVE_ROWS_MAX];
	struct ms_prove_rows *pr = &rules->scratch;
	uint32_t n = 0, stop = 0, id;
	int r = MS_JIT_ADDED;
	char what[128];

	if ((r = ms_perfmap_add(&t->map, f->start, f->end, f->name.ptr, f->name.len, f->line)) <= 0) {
		if (r < 0)
			return -1;
		if (t->map.n >= MS_PERFMAP_FUNCS_MAX)
			ms_problems_add(problems, "jit-functions-max",
					"pid %" PRIu32 ": more than %u JIT functions; later ones "
					"are not named and their frames end the stack (no-cfi)",
					f->pid, MS_PERFMAP_FUNCS_MAX);
		else
			ms_problems_add(problems, "jit-bad-function",
					"pid %" PRIu32 ": the JIT function at 0x%" PRIx64
					" has a name with a NUL byte: it is not kept", f->pid, f->start);
		return MS_JIT_DROPPED;
	}
	r = MS_JIT_ADDED;
	id = t->map.n - 1;
	if (f->rows_len) {
		char why[256];

		snprintf(what, sizeof(what), "pid %" PRIu32 ": the rows of JIT function at 0x%" PRIx64,
			 f->pid, f->start);
		if (ms_rows_decode_quiet(f->rows, f->rows_len, pr, what, why, sizeof(why)) < 0) {
			ms_problems_add(problems, "jit-bad-rows",
					"%s: its frames end the stack (no-cfi); the stream is "
					"corrupt or from another build of ms-collect", why);
			r = MS_JIT_ADDED_NO_ROWS;
		} else {
			for (; n < pr->n; n++) {
				int g = rule_get(rules, &pr->row[n], &rows[n].rule);

				if (g < 0)
					return -1;
				if (!g) {
					ms_problems_add(problems, "jit-rules-max",
							"more than %u distinct frames in JIT "
							"functions: the frames of later ones end "
							"the stack (no-cfi)", MS_JIT_RULES_MAX);
					r = MS_JIT_ADDED_NO_ROWS;
					break;
				}
				rows[n].offset = pr->row[n].offset;
			}
			if (r == MS_JIT_ADDED_NO_ROWS)
				n = 0;
			else
				stop = pr->stop;
		}
	}
	if (keep(t, id, f->time, rows, n, stop) < 0)
		return -1;
	return r;
}

/*
 * Index functions added since the last time; a named one that a later line
 * took addresses from starts a new epoch. 0, or -1 after a message.
 */
static int index_new(struct ms_jit_table *t)
{
	uint64_t replaced = t->map.c.replaced;

	if (!t->dirty)
		return 0;
	if (ms_perfmap_index(&t->map) < 0)
		return -1;
	t->dirty = false;
	/* (Which ones were replaced is not said: any, while some are named.) */
	if (t->map.c.replaced > replaced && t->named) {
		t->epoch = ++last_epoch;
		t->named = 0;
		for (uint32_t i = 0; i < t->map.n; i++)
			t->meta[i].flags &= (uint16_t)~NAMED;
	}
	return 0;
}

int ms_jit_table_find(struct ms_jit_table *t, uint64_t pc, struct ms_jit_fn *fn)
{
	const struct ms_perfmap_func *f;
	const struct meta *m;

	if (t->dirty && index_new(t) < 0)
		return -1;
	if (!(f = ms_perfmap_find(&t->map, pc)))
		return 0;
	fn->id = (uint32_t)(f - t->map.funcs);
	m = &t->meta[fn->id];
	fn->start = f->start;
	fn->end = f->end;
	fn->name = f->name;
	fn->n_rows = m->n_rows;
	fn->stop = m->stop;
	fn->rows = &t->rows[m->first];
	return 1;
}

struct unmap_ctx {
	struct ms_jit_table *t;
	uint64_t time;
	bool named;
};

static bool read_before(void *ctx, uint32_t id)
{
	struct unmap_ctx *c = ctx;
	const struct meta *m = &c->t->meta[id];

	if (m->time >= c->time)
		return false;
	c->named |= m->flags & NAMED;
	return true;
}

int ms_jit_table_unmap(struct ms_jit_table *t, uint64_t start, uint64_t end, uint64_t time)
{
	struct unmap_ctx c = { t, time, false };
	int n;

	if (index_new(t) < 0 || (n = ms_perfmap_unmap_if(&t->map, start, end, read_before, &c)) < 0)
		return -1;
	if (c.named)
		t->epoch = ++last_epoch;
	return n;
}

/* Append src's functions read at or after min_time to dst, in order. 0, or -1. */
static int copy_from(struct ms_jit_table *dst, const struct ms_jit_table *src, uint64_t min_time)
{
	for (uint32_t i = 0; i < src->map.n; i++) {
		const struct ms_perfmap_func *f = &src->map.funcs[i];
		const struct meta *m = &src->meta[i];
		int r;

		if (m->time < min_time)
			continue;
		if ((r = ms_perfmap_add(&dst->map, f->start, f->end, f->name, strlen(f->name),
					f->line)) < 0)
			return -1;
		if (!r)
			continue;	/* (full: it was not kept in src either) */
		/* An ended function still hides the older ones below it. */
		dst->map.funcs[dst->map.n - 1].flags |= f->flags & MS_PERFMAP_ENDED;
		if (keep(dst, dst->map.n - 1, m->time, &src->rows[m->first], m->n_rows,
			 m->stop) < 0)
			return -1;
	}
	return 0;
}

/* Make t parent's functions (when given) then its own from min_time on. 0, or -1. */
static int rebuild(struct ms_jit_table *t, const struct ms_jit_table *parent, uint64_t min_time)
{
	struct ms_jit_table n;

	init(&n);
	if ((parent && copy_from(&n, parent, 0) < 0) || copy_from(&n, t, min_time) < 0) {
		release(&n);
		return -1;
	}
	release(t);
	n.path = t->path;
	*t = n;
	return 0;
}

int ms_jit_table_exec(struct ms_jit_table *t, uint64_t time)
{
	uint32_t i;

	for (i = 0; i < t->map.n && t->meta[i].time >= time; i++)
		;
	if (i == t->map.n)
		return 0;
	return rebuild(t, NULL, time) < 0 ? -1 : 1;
}

int ms_jit_table_fork(struct ms_jit_table *child, const struct ms_jit_table *parent,
		      uint64_t time)
{
	return rebuild(child, parent, time);
}

void ms_jit_table_named(struct ms_jit_table *t, uint32_t id)
{
	if (id < t->map.n && !(t->meta[id].flags & NAMED)) {
		t->meta[id].flags |= NAMED;
		t->named++;
	}
}

uint64_t ms_jit_table_epoch(const struct ms_jit_table *t)
{
	return t->epoch;
}

uint32_t ms_jit_table_count(const struct ms_jit_table *t)
{
	return t->map.n;
}

const char *ms_jit_table_path(const struct ms_jit_table *t)
{
	return t->path ? t->path : "";
}

int ms_jit_table_set_path(struct ms_jit_table *t, const struct ms_str *path)
{
	size_t len = path->len;
	const char *nul = memchr(path->ptr, '\0', len);
	char *p;

	if (nul)
		len = (size_t)(nul - path->ptr);
	if (len > PATH_MAX)
		len = PATH_MAX;
	if (!(p = malloc(len + 1)))
		return ms_error("out of memory");
	memcpy(p, path->ptr, len);
	p[len] = '\0';
	free(t->path);
	t->path = p;
	return 0;
}
