/*
 * Keys: what one entry of a stack is at the query's granularity (function,
 * line, address or module), with dense ids, and each capture frame as the
 * chain of keys it stands for, outermost first. Stacks that ended early
 * get one synthetic key per reason, "[truncated: stack-copy]", that views
 * put outermost (capture/funcs.h: ms_stack_end_truncated()).
 *
 * --ignore is applied here: a key whose name matches is left out of every
 * chain, so every view drops the frame the same way. --focus marks keys.
 */
#ifndef MS_ANALYSIS_KEYS_H
#define MS_ANALYSIS_KEYS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/query.h"
#include "capture/capture.h"
#include "capture/funcs.h"
#include "util/json.h"

enum ms_key_kind {
	MS_KEY_FUNCTION = 0,
	MS_KEY_LINE,
	MS_KEY_ADDRESS,
	MS_KEY_MODULE,
	MS_KEY_TRUNCATED,
};

struct ms_key {
	uint32_t kind;		/* enum ms_key_kind */
	uint32_t func;		/* struct ms_funcs id; MS_NONE for module and truncated keys */
	uint32_t module;	/* capture module, MS_NONE when none */
	uint32_t line;		/* line keys: the line in func's file (0 unknown) */
	uint64_t address;	/* address keys: module-relative */
	uint32_t end;		/* truncated keys: enum ms_stack_end */
	const char *label;	/* what people read; borrowed from funcs, capture or static */
	bool focused;		/* matches the query's --focus */
};

#define MS_KEYS_ENDS 256	/* end reasons a truncated key can name */

struct ms_keys {
	enum ms_by by;
	struct ms_funcs funcs;
	uint32_t n;
	struct ms_key *keys;
	/* per capture frame f: chain[chain_start[f] .. chain_start[f + 1]), outermost first */
	uint32_t *chain_start;
	uint32_t *chain;
	/* the truncated key of each end reason (MS_NONE: not truncated, or ignored) */
	uint32_t truncated[MS_KEYS_ENDS];
	bool has_focus;		/* the query has --focus */
	/* internal */
	uint32_t alloc;
};

/* Build the keys of cap for q (by, ignore, focus). 0, or -1 after a message. */
int ms_keys_build(struct ms_keys *k, const struct ms_capture *cap, const struct ms_query *q);
void ms_keys_release(struct ms_keys *k);

/*
 * Where end is in a table per end reason: an end past the table is a
 * reason past the known ones, as MS_KEYS_ENDS - 2 is (MS_KEYS_ENDS - 1 is
 * MS_END_UNKNOWN, which is not known to be cut).
 */
static inline uint32_t ms_keys_end_slot(uint32_t end)
{
	return end < MS_KEYS_ENDS ? end : MS_KEYS_ENDS - 2;
}

/* The truncated key a sample ending with end gets, or MS_NONE. */
static inline uint32_t ms_keys_truncated(const struct ms_keys *k, uint32_t end)
{
	return k->truncated[ms_keys_end_slot(end)];
}

/* Total order: label, module label, file, line, address, then id. */
int ms_key_cmp(const struct ms_keys *k, uint32_t a, uint32_t b);

/* The module column: its label (funcs.h module_label). */
const char *ms_key_module_label(const struct ms_keys *k, const struct ms_capture *cap, uint32_t id);

/*
 * The key's place for text: "burn.c:12" (function: where it begins; line:
 * the line), "0x1a2b" (address), or "" when there is none; into buf.
 */
void ms_key_location(char *buf, size_t size, const struct ms_keys *k, uint32_t id);

/* JSON fields of a key: "name", "kind" when not a function, "module", "file", "line", "address". */
void ms_key_json(struct ms_json *j, const struct ms_capture *cap, const struct ms_keys *k,
		 uint32_t id);

/*
 * A string naming the key the same way in another capture of the same
 * program (module file name, name, file, line, address), for diff.
 * snprintf()'s contract.
 */
int ms_key_identity(char *buf, size_t size, const struct ms_capture *cap,
		    const struct ms_keys *k, uint32_t id);

#endif
