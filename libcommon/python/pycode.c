/* Python code objects and interpreted frame keys (pycode.h). */
#include "python/pycode.h"

#include <stdlib.h>
#include <string.h>

#include "python/pyparse.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hashindex.h"
#include "util/strpool.h"

struct code {
	uint64_t code, stamp, code_start;
	uint32_t pid, status;
	int firstlineno;
	uint32_t qual_len, file_len, lt_len;
	const char *qual, *file;	/* the pool's */
	const uint8_t *lt;
};

/* An interpreted frame: what its key stands for. */
struct key {
	const char *qual, *file;	/* the pool's (a code's) */
	uint32_t qual_len, file_len;
	int line, firstlineno;
	bool unknown;
};

/* (pid, code, stamp, instr) -> key, as last computed. */
struct centry {
	uint64_t code, stamp, instr;
	uint32_t pid, key;
};

struct ms_pycode {
	struct ms_strpool pool;
	uint64_t bytes;
	struct code *codes;
	uint32_t n_codes, alloc_codes;
	struct ms_index code_ix;
	struct key *keys;		/* key k is keys[k - 1] */
	uint32_t n_keys, alloc_keys;
	struct ms_index key_ix;
	struct centry *cache;
	uint32_t n_cache, alloc_cache;
	struct ms_index cache_ix;
	uint32_t unknown_key;		/* 0 until given out */
	struct ms_pycode_stats stats;
};

struct ms_pycode *ms_pycode_new(void)
{
	struct ms_pycode *t = calloc(1, sizeof(*t));

	if (!t) {
		ms_error("out of memory");
		return NULL;
	}
	ms_strpool_init(&t->pool);
	return t;
}

void ms_pycode_free(struct ms_pycode *t)
{
	if (!t)
		return;
	ms_strpool_release(&t->pool);
	free(t->codes);
	free(t->keys);
	free(t->cache);
	ms_index_release(&t->code_ix);
	ms_index_release(&t->key_ix);
	ms_index_release(&t->cache_ix);
	free(t);
}

const struct ms_pycode_stats *ms_pycode_stats(const struct ms_pycode *t)
{
	return &t->stats;
}

/* Codes ------------------------------------------------------------------ */

struct code_id {
	uint64_t code, stamp;
	uint32_t pid;
};

static uint32_t code_hash(uint32_t pid, uint64_t code, uint64_t stamp)
{
	return ms_hash_mix(ms_hash_mix(ms_hash_u64(code), stamp), pid);
}

static bool code_eq(const void *ctx, uint32_t entry, const void *key)
{
	const struct code *c = &((const struct ms_pycode *)ctx)->codes[entry];
	const struct code_id *k = key;

	return c->code == k->code && c->stamp == k->stamp && c->pid == k->pid;
}

static const struct code *code_find(const struct ms_pycode *t, uint32_t pid, uint64_t code,
				    uint64_t stamp)
{
	struct code_id k = { .code = code, .stamp = stamp, .pid = pid };
	uint32_t i = ms_index_find(&t->code_ix, code_hash(pid, code, stamp), code_eq, t, &k);

	return i == MS_INDEX_EMPTY ? NULL : &t->codes[i];
}

/* A pool copy of s (len bytes; "" when empty), or NULL after a message. */
static const char *pool_str(struct ms_pycode *t, const char *s, uint32_t len)
{
	const char *p = ms_strpool_add(&t->pool, len ? s : "", len);

	if (!p)
		ms_error("out of memory for a Python code's names");
	return p;
}

int ms_pycode_add(struct ms_pycode *t, const struct ms_py_code *c)
{
	uint64_t need = sizeof(struct code) + (uint64_t)c->qualname.len + c->file.len +
			c->linetable_len + 2;
	struct code *n;
	uint8_t *lt = NULL;

	if (code_find(t, c->pid, c->code, c->stamp)) {
		t->stats.codes_again++;
		return 0;
	}
	if (t->bytes + need > MS_PYCODE_BYTES_MAX) {
		t->stats.codes_refused++;
		return 0;
	}
	if (MS_GROW(t->codes, t->n_codes, t->alloc_codes) < 0)
		return -1;
	n = &t->codes[t->n_codes];
	*n = (struct code){
		.code = c->code, .stamp = c->stamp, .code_start = c->code_start, .pid = c->pid,
		.status = c->status, .firstlineno = (int)(c->firstlineno > INT32_MAX ? 0 :
							  c->firstlineno),
		.qual_len = c->qualname.len, .file_len = c->file.len, .lt_len = c->linetable_len,
	};
	if (!(n->qual = pool_str(t, c->qualname.ptr, c->qualname.len)) ||
	    !(n->file = pool_str(t, c->file.ptr, c->file.len)))
		return -1;
	if (c->linetable_len) {
		if (!(lt = ms_strpool_alloc(&t->pool, c->linetable_len)))
			return ms_error("out of memory for a Python code's locations table");
		memcpy(lt, c->linetable, c->linetable_len);
	}
	n->lt = lt;
	if (ms_index_add(&t->code_ix, code_hash(c->pid, c->code, c->stamp), t->n_codes) < 0)
		return ms_error("out of memory for the index of Python codes");
	t->n_codes++;
	t->bytes += need;
	t->stats.codes++;
	return 1;
}

/* Keys -------------------------------------------------------------------- */

static uint32_t key_hash(const struct key *k)
{
	uint32_t h = ms_hash_bytes(k->qual, k->qual_len);

	h = ms_hash_mix(h, ms_hash_bytes(k->file, k->file_len));
	h = ms_hash_mix(h, (uint32_t)k->line);
	h = ms_hash_mix(h, (uint32_t)k->firstlineno);
	return ms_hash_mix(h, k->unknown);
}

static bool key_eq(const void *ctx, uint32_t entry, const void *key)
{
	const struct key *a = &((const struct ms_pycode *)ctx)->keys[entry], *b = key;

	return a->unknown == b->unknown && a->line == b->line &&
	       a->firstlineno == b->firstlineno && a->qual_len == b->qual_len &&
	       a->file_len == b->file_len && !memcmp(a->qual, b->qual, a->qual_len) &&
	       !memcmp(a->file, b->file, a->file_len);
}

/* The key of k, given out now when new (*is_new). 0 after a message. */
static uint32_t key_get(struct ms_pycode *t, const struct key *k, bool *is_new)
{
	uint32_t h = key_hash(k), i = ms_index_find(&t->key_ix, h, key_eq, t, k);

	if (i != MS_INDEX_EMPTY)
		return i + 1;
	if (MS_GROW(t->keys, t->n_keys, t->alloc_keys) < 0)
		return 0;
	t->keys[t->n_keys] = *k;
	if (ms_index_add(&t->key_ix, h, t->n_keys) < 0) {
		ms_error("out of memory for the index of interpreted frames");
		return 0;
	}
	*is_new = true;
	t->stats.keys++;
	return ++t->n_keys;
}

/* The line of instr in c: 0 when it has none or the table cannot tell (counted). */
static int code_line(struct ms_pycode *t, const struct code *c, uint64_t instr)
{
	int line = 0;

	if (c->status != MS_PY_CODE_OK)
		return 0;
	switch (ms_py_linetable_line(c->lt, c->lt_len, c->firstlineno,
				     (int64_t)(instr - c->code_start), &line)) {
	case MS_PY_LINE_OK:
		return line < 0 ? 0 : line;
	case MS_PY_LINE_NONE:
		return 0;
	default:
		t->stats.bad_lines++;
		return 0;
	}
}

/* The key of a frame, without the cache. 0 after a message. */
static uint32_t key_of(struct ms_pycode *t, uint32_t pid, uint64_t code, uint64_t stamp,
		       uint64_t instr, bool *is_new)
{
	const struct code *c = code_find(t, pid, code, stamp);
	struct key k;

	if (!c || (c->status != MS_PY_CODE_OK && c->status != MS_PY_CODE_NO_LINES)) {
		t->stats.unknown_frames++;
		if (!t->unknown_key) {
			k = (struct key){ .qual = MS_PYCODE_UNKNOWN, .file = "",
					  .qual_len = sizeof(MS_PYCODE_UNKNOWN) - 1, .unknown = true };
			t->unknown_key = key_get(t, &k, is_new);
		}
		return t->unknown_key;
	}
	k = (struct key){ .qual = c->qual, .file = c->file, .qual_len = c->qual_len,
			  .file_len = c->file_len, .line = code_line(t, c, instr),
			  .firstlineno = c->firstlineno };
	return key_get(t, &k, is_new);
}

static uint32_t cache_hash(uint32_t pid, uint64_t code, uint64_t stamp, uint64_t instr)
{
	return ms_hash_mix(code_hash(pid, code, stamp), instr);
}

static bool cache_eq(const void *ctx, uint32_t entry, const void *key)
{
	const struct centry *a = &((const struct ms_pycode *)ctx)->cache[entry], *b = key;

	return a->instr == b->instr && a->code == b->code && a->stamp == b->stamp &&
	       a->pid == b->pid;
}

uint64_t ms_pycode_key(struct ms_pycode *t, uint32_t pid, uint64_t code, uint64_t stamp,
		       uint64_t instr, bool *is_new)
{
	struct centry e = { .code = code, .stamp = stamp, .instr = instr, .pid = pid };
	uint32_t h = cache_hash(pid, code, stamp, instr);
	uint32_t i = ms_index_find(&t->cache_ix, h, cache_eq, t, &e);

	*is_new = false;
	if (i != MS_INDEX_EMPTY) {
		t->stats.cache_hits++;
		/* (The unknown code's key is counted each time it stands for a frame.) */
		if (t->cache[i].key == t->unknown_key)
			t->stats.unknown_frames++;
		return t->cache[i].key;
	}
	t->stats.cache_misses++;
	if (!(e.key = key_of(t, pid, code, stamp, instr, is_new)))
		return 0;
	/*
	 * A frame of a code no record named yet is not cached: its record may
	 * still come (ms-collect names codes as it drains the walker's records).
	 */
	if (e.key == t->unknown_key && !code_find(t, pid, code, stamp))
		return e.key;
	if (t->n_cache < MS_PYCODE_CACHE_MAX &&
	    MS_GROW(t->cache, t->n_cache, t->alloc_cache) == 0) {
		t->cache[t->n_cache] = e;
		if (ms_index_add(&t->cache_ix, h, t->n_cache) == 0)
			t->n_cache++;
	}
	return e.key;
}

bool ms_pycode_frame(const struct ms_pycode *t, uint64_t key, uint32_t module,
		     struct ms_frame *out)
{
	const struct key *k;

	if (!key || key > t->n_keys)
		return false;
	k = &t->keys[key - 1];
	memset(out, 0, sizeof(*out) - sizeof(out->lines));
	out->module = module;
	out->address = key;
	out->name = (struct ms_str){ k->qual, k->qual_len };
	if (k->unknown) {
		out->reason = MS_SYM_NO_SYMBOL;
		return true;
	}
	out->reason = MS_SYM_OK;
	out->n_lines = 1;
	out->lines[0] = (struct ms_frame_line){
		.function = { k->qual, k->qual_len }, .system_name = { "", 0 },
		.file = { k->file, k->file_len }, .line = (uint32_t)k->line,
		.function_line = (uint32_t)k->firstlineno,
	};
	return true;
}
