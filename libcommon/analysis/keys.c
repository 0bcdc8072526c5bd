/*
 * Keys at a granularity. Ids are given in order of first appearance over
 * the frames in capture order, so the same capture and query give the
 * same ids; no output depends on them except as the last tie-break.
 */
#include "analysis/keys.h"

#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "stream/records.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hashindex.h"

static uint32_t hash_key(const struct ms_key *key)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = (h ^ key->kind) * 0x100000001b3ull;
	h = (h ^ key->func) * 0x100000001b3ull;
	h = (h ^ key->module) * 0x100000001b3ull;
	h = (h ^ key->line) * 0x100000001b3ull;
	h = (h ^ key->address) * 0x100000001b3ull;
	h = (h ^ key->end) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static bool key_eq(const void *ctx, uint32_t entry, const void *p)
{
	const struct ms_key *a = &((const struct ms_keys *)ctx)->keys[entry], *b = p;

	return a->kind == b->kind && a->func == b->func && a->module == b->module &&
	       a->line == b->line && a->address == b->address && a->end == b->end;
}

/* The id of key, added when new; MS_NONE after a message. */
static uint32_t intern(struct ms_keys *k, struct ms_index *ix, const struct ms_key *key)
{
	uint32_t h = hash_key(key);
	uint32_t id = ms_index_find(ix, h, key_eq, k, key);

	if (id != MS_INDEX_EMPTY)
		return id;
	if (MS_GROW(k->keys, k->n, k->alloc))
		return MS_NONE;
	if (ms_index_add(ix, h, k->n)) {
		ms_error("out of memory keying %" PRIu32 " keys", k->n);
		return MS_NONE;
	}
	k->keys[k->n] = *key;
	return k->n++;
}

static const char *key_label(const struct ms_keys *k, const struct ms_capture *cap,
			     const struct ms_key *key)
{
	switch (key->kind) {
	case MS_KEY_MODULE:
		return ms_module_label(cap, key->module);
	case MS_KEY_TRUNCATED:
		return ms_truncated_label(key->end);
	default:
		return k->funcs.funcs[key->func].label;
	}
}

/* The key of entry i (outermost first) of frame f's chain of n. */
static void frame_entry_key(struct ms_key *key, const struct ms_keys *k,
			    const struct ms_capture *cap, uint32_t f, uint32_t i, uint32_t n)
{
	const struct ms_cap_frame *fr = &cap->frames[f];
	uint32_t func = k->funcs.chain[k->funcs.chain_start[f] + i];

	memset(key, 0, sizeof(*key));
	key->func = func;
	key->module = k->funcs.funcs[func].module;
	switch (k->by) {
	case MS_BY_LINE:
		key->kind = MS_KEY_LINE;
		/* capture lines are innermost first */
		if (fr->n_lines)
			key->line = cap->lines[fr->first_line + (n - 1 - i)].line;
		break;
	case MS_BY_ADDRESS:
		key->kind = MS_KEY_ADDRESS;
		key->module = fr->module;
		key->address = fr->address;
		break;
	case MS_BY_MODULE:
		key->kind = MS_KEY_MODULE;
		key->func = MS_NONE;
		key->module = fr->module < cap->n_modules &&
			      cap->modules[fr->module].kind != MS_MODULE_UNKNOWN ? fr->module : MS_NONE;
		break;
	default:
		key->kind = MS_KEY_FUNCTION;
		break;
	}
}

int ms_keys_build(struct ms_keys *k, const struct ms_capture *cap, const struct ms_query *q)
{
	struct ms_index ix = MS_INDEX_INIT;
	regex_t focus, ignore;
	bool has_ignore = false;
	uint64_t total;
	uint32_t f, i, used = 0;
	bool *drop = NULL;

	memset(k, 0, sizeof(*k));
	k->by = q->by;
	memset(k->truncated, 0xff, sizeof(k->truncated));
	if (ms_funcs_build(&k->funcs, cap))
		return -1;
	k->has_focus = q->focus != NULL;
	if (q->focus && regcomp(&focus, q->focus, REG_EXTENDED | REG_NOSUB)) {
		k->has_focus = false;
		ms_error("--focus '%s' is not a regular expression", q->focus);
		goto fail;
	}
	if (q->ignore) {
		if (regcomp(&ignore, q->ignore, REG_EXTENDED | REG_NOSUB)) {
			ms_error("--ignore '%s' is not a regular expression", q->ignore);
			goto fail;
		}
		has_ignore = true;
	}

	total = k->funcs.chain_start ? k->funcs.chain_start[cap->n_frames] : 0;
	k->chain_start = malloc(((size_t)cap->n_frames + 1) * sizeof(*k->chain_start));
	k->chain = malloc((total ? total : 1) * sizeof(*k->chain));
	if (!k->chain_start || !k->chain)
		goto oom;

	/* Frames' keys, then one truncated key per end reason, in that order. */
	for (f = 0; f < cap->n_frames; f++) {
		uint32_t n = k->funcs.chain_start[f + 1] - k->funcs.chain_start[f];

		k->chain_start[f] = used;
		if (k->by == MS_BY_MODULE)
			n = 1;
		for (i = 0; i < n; i++) {
			struct ms_key key;
			uint32_t id;

			frame_entry_key(&key, k, cap, f, k->by == MS_BY_MODULE ? 0 : i,
					k->funcs.chain_start[f + 1] - k->funcs.chain_start[f]);
			if ((id = intern(k, &ix, &key)) == MS_NONE)
				goto fail;
			k->chain[used++] = id;
		}
	}
	k->chain_start[cap->n_frames] = used;
	for (i = 0; i < MS_KEYS_ENDS; i++) {
		struct ms_key key = { .kind = MS_KEY_TRUNCATED, .func = MS_NONE, .module = MS_NONE,
				      .end = i };

		if (!ms_stack_end_truncated(i))
			continue;
		/* reasons past the known ones share one key, "[truncated: unknown]" */
		if (i > MS_END_INTERPRETED_TRUNCATED)
			key.end = MS_KEYS_ENDS - 1;
		if ((k->truncated[i] = intern(k, &ix, &key)) == MS_NONE)
			goto fail;
	}

	drop = calloc(k->n ? k->n : 1, sizeof(*drop));
	if (!drop)
		goto oom;
	for (i = 0; i < k->n; i++) {
		struct ms_key *key = &k->keys[i];

		key->label = key_label(k, cap, key);
		if (k->has_focus)
			key->focused = !regexec(&focus, key->label, 0, NULL, 0);
		if (has_ignore)
			drop[i] = !regexec(&ignore, key->label, 0, NULL, 0);
	}
	if (has_ignore) {
		uint32_t out = 0;

		for (f = 0; f < cap->n_frames; f++) {
			uint32_t from = k->chain_start[f], to = k->chain_start[f + 1];

			k->chain_start[f] = out;
			for (i = from; i < to; i++)
				if (!drop[k->chain[i]])
					k->chain[out++] = k->chain[i];
		}
		k->chain_start[cap->n_frames] = out;
		for (i = 0; i < MS_KEYS_ENDS; i++)
			if (k->truncated[i] != MS_NONE && drop[k->truncated[i]])
				k->truncated[i] = MS_NONE;
	}
	free(drop);
	ms_index_release(&ix);
	if (k->has_focus)
		regfree(&focus);
	if (has_ignore)
		regfree(&ignore);
	return 0;
oom:
	ms_error("out of memory keying the frames of %" PRIu32 " stacks", cap->n_stacks);
fail:
	free(drop);
	ms_index_release(&ix);
	if (k->has_focus)
		regfree(&focus);
	if (has_ignore)
		regfree(&ignore);
	ms_keys_release(k);
	return -1;
}

void ms_keys_release(struct ms_keys *k)
{
	ms_funcs_release(&k->funcs);
	free(k->keys);
	free(k->chain_start);
	free(k->chain);
	memset(k, 0, sizeof(*k));
}

static const char *key_file(const struct ms_keys *k, const struct ms_key *key)
{
	return key->func == MS_NONE ? "" : k->funcs.funcs[key->func].file_name;
}

static uint32_t key_line(const struct ms_keys *k, const struct ms_key *key)
{
	if (key->kind == MS_KEY_LINE)
		return key->line;
	return key->kind == MS_KEY_FUNCTION ? k->funcs.funcs[key->func].line : 0;
}

const char *ms_key_module_label(const struct ms_keys *k, const struct ms_capture *cap, uint32_t id)
{
	const struct ms_key *key = &k->keys[id];

	if (key->kind == MS_KEY_TRUNCATED)
		return "";
	if (key->func != MS_NONE)
		return k->funcs.funcs[key->func].module_label;
	return ms_module_label(cap, key->module);
}

int ms_key_cmp(const struct ms_keys *k, uint32_t a, uint32_t b)
{
	const struct ms_key *x = &k->keys[a], *y = &k->keys[b];
	int c;

	if (a == b)
		return 0;
	if ((c = strcmp(x->label, y->label)))
		return c;
	if (x->func != MS_NONE && y->func != MS_NONE &&
	    (c = strcmp(k->funcs.funcs[x->func].module_label, k->funcs.funcs[y->func].module_label)))
		return c;
	if ((c = strcmp(key_file(k, x), key_file(k, y))))
		return c;
	if (key_line(k, x) != key_line(k, y))
		return key_line(k, x) < key_line(k, y) ? -1 : 1;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return a < b ? -1 : 1;
}

void ms_key_location(char *buf, size_t size, const struct ms_keys *k, uint32_t id)
{
	const struct ms_key *key = &k->keys[id];
	const char *file = key_file(k, key);
	uint32_t line = key_line(k, key);

	if (key->kind == MS_KEY_ADDRESS)
		snprintf(buf, size, "0x%" PRIx64, key->address);
	else if (*file && line)
		snprintf(buf, size, "%s:%" PRIu32, file, line);
	else
		snprintf(buf, size, "%s", file);
}

void ms_key_json(struct ms_json *j, const struct ms_capture *cap, const struct ms_keys *k,
		 uint32_t id)
{
	static const char *const kinds[] = { "function", "line", "address", "module", "truncated" };
	const struct ms_key *key = &k->keys[id];

	ms_json_key(j, "name");
	ms_json_string(j, key->label);
	if (key->kind != MS_KEY_FUNCTION) {
		ms_json_key(j, "kind");
		ms_json_string(j, kinds[key->kind]);
	}
	if (key->kind == MS_KEY_TRUNCATED)
		return;
	ms_json_key(j, "module");
	ms_json_string(j, key->func != MS_NONE ? k->funcs.funcs[key->func].module_name
					       : ms_module_basename(cap, key->module));
	if (key->kind == MS_KEY_MODULE)
		return;
	ms_json_key(j, "file");
	ms_json_string(j, cap->strings[k->funcs.funcs[key->func].file]);
	ms_json_key(j, "line");
	ms_json_uint(j, key_line(k, key));
	if (key->kind == MS_KEY_ADDRESS) {
		char hex[24];

		/* a string: kernel addresses pass 2^53, past what JSON readers keep exactly */
		snprintf(hex, sizeof(hex), "0x%" PRIx64, key->address);
		ms_json_key(j, "address");
		ms_json_string(j, hex);
	}
}

int ms_key_identity(char *buf, size_t size, const struct ms_capture *cap,
		    const struct ms_keys *k, uint32_t id)
{
	const struct ms_key *key = &k->keys[id];
	const char *module = key->func != MS_NONE ? k->funcs.funcs[key->func].module_label
						  : ms_module_label(cap, key->module);

	if (key->kind == MS_KEY_TRUNCATED)
		module = "";
	/*
	 * A function by module and name only: one build may name it from its
	 * symbol table and the other from debug information with a file and
	 * line, and it is the same function.
	 */
	if (key->kind == MS_KEY_FUNCTION || key->kind == MS_KEY_MODULE ||
	    key->kind == MS_KEY_TRUNCATED)
		return snprintf(buf, size, "%u\x1f%s\x1f%s", key->kind, module, key->label);
	return snprintf(buf, size, "%u\x1f%s\x1f%s\x1f%s\x1f%" PRIu32 "\x1f%" PRIx64, key->kind,
			module, key->label, key_file(k, key), key_line(k, key), key->address);
}
