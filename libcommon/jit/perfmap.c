/* The perf map's parser and its table of functions: see perfmap.h. */
#include "jit/perfmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

void ms_perfmap_init(struct ms_perfmap *t)
{
	memset(t, 0, sizeof(*t));
	ms_strpool_init(&t->pool);
}

void ms_perfmap_release(struct ms_perfmap *t)
{
	free(t->funcs);
	free(t->seg);
	free(t->out);
	free(t->batch);
	free(t->ids);
	free(t->heap);
	free(t->visible);
	free(t->names);
	free(t->name_lens);
	free(t->readbuf);
	ms_index_release(&t->name_ix);
	ms_strpool_release(&t->pool);
	ms_perfmap_init(t);
}

/* Hex digits, with or without 0x, at most 64 bits: the digits' end, or NULL. */
static const char *hex(const char *p, const char *end, uint64_t *v)
{
	const char *digits;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	digits = p;
	*v = 0;
	for (; p < end; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (*v >> 60)
			return NULL;	/* past 64 bits */
		*v = *v << 4 | d;
	}
	return p > digits ? p : NULL;
}

/* One or more blanks at p: their end, or NULL. */
static const char *blanks(const char *p, const char *end)
{
	const char *s = p;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p > s ? p : NULL;
}

/* len cut to at most max bytes without splitting a UTF-8 sequence. */
static size_t cut_utf8(const char *s, size_t len, size_t max)
{
	size_t n = max, back = 0;

	if (len <= max)
		return len;
	/* Step back over continuation bytes to the lead byte, at most 3. */
	while (back < 3 && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) {
		n--;
		back++;
	}
	return n ? n : max;
}

static bool name_eq(const void *ctx, uint32_t entry, const void *key)
{
	const struct ms_perfmap *t = ctx;
	const char *const *k = key;
	size_t len = (size_t)(k[1] - k[0]);

	return t->name_lens[entry] == len && memcmp(t->names[entry], k[0], len) == 0;
}

/* The pool's copy of s[0..len), one per distinct name; NULL out of memory. */
static const char *intern(struct ms_perfmap *t, const char *s, size_t len)
{
	const char *key[2] = { s, s + len };
	uint32_t h = ms_hash_bytes(s, len), e = ms_index_find(&t->name_ix, h, name_eq, t, key);
	const char *copy;

	if (e != MS_INDEX_EMPTY)
		return t->names[e];
	if (!ms_reserve((void **)&t->names, &t->names_alloc, (uint64_t)t->n_names + 1,
			sizeof(*t->names)) ||
	    !ms_reserve((void **)&t->name_lens, &t->lens_alloc, (uint64_t)t->n_names + 1,
			sizeof(*t->name_lens)) ||
	    !(copy = ms_strpool_add(&t->pool, s, len)) ||
	    ms_index_add(&t->name_ix, h, t->n_names) < 0)
		return NULL;
	t->names[t->n_names] = copy;
	t->name_lens[t->n_names++] = (uint32_t)len;
	return copy;
}

/*
 * Keep function [start, end) named s[0..len) (not empty, no NUL) from
 * line: 1, 0 when past MS_PERFMAP_FUNCS_MAX (counted), -1 out of memory.
 */
static int append(struct ms_perfmap *t, uint64_t start, uint64_t end, const char *s, size_t len,
		  uint32_t line)
{
	struct ms_perfmap_func *f;
	const char *name;
	size_t name_len;

	if (t->n >= MS_PERFMAP_FUNCS_MAX) {
		t->c.over_max++;
		return 0;
	}
	name_len = cut_utf8(s, len, MS_PERFMAP_NAME_MAX);
	if (name_len < len)
		t->c.names_cut++;
	if (!ms_reserve((void **)&t->funcs, &t->alloc, (uint64_t)t->n + 1, sizeof(*t->funcs)) ||
	    !(name = intern(t, s, name_len)))
		return ms_error("cannot keep line %u of the perf map: out of memory", line);
	f = &t->funcs[t->n++];
	f->start = start;
	f->end = end;
	f->name = name;
	f->line = line;
	f->flags = 0;
	return 1;
}

int ms_perfmap_add(struct ms_perfmap *t, uint64_t start, uint64_t end, const char *name,
		   size_t name_len, uint32_t line)
{
	if (start >= end || !name_len || memchr(name, '\0', name_len)) {
		t->c.malformed++;
		return 0;
	}
	return append(t, start, end, name, name_len, line);
}

/* One whole line, its newline not included. 0, or -1 out of memory. */
static int parse_line(struct ms_perfmap *t, const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	uint64_t start, size;

	t->c.lines++;
	if (len && end[-1] == '\r')
		end--;
	if (!(p = hex(p, end, &start)) || !(p = blanks(p, end)) || !(p = hex(p, end, &size)) ||
	    !(p = blanks(p, end)) || p == end || memchr(p, '\0', (size_t)(end - p)) ||
	    size == 0 || size > UINT64_MAX - start) {
		t->c.malformed++;
		return 0;
	}
	return append(t, start, start + size, p, (size_t)(end - p),
		      t->c.lines > UINT32_MAX ? UINT32_MAX : (uint32_t)t->c.lines) < 0 ? -1 : 0;
}

static void too_long(struct ms_perfmap *t)
{
	t->c.lines++;
	t->c.malformed++;
	t->c.too_long++;
}

int ms_perfmap_feed(struct ms_perfmap *t, const void *bytes, size_t len)
{
	const char *p = bytes, *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t take = (size_t)((nl ? nl : end) - p);

		if (t->skipping) {
			/* The rest of a line over the maximum, counted when it was found. */
			t->skipping = !nl;
		} else if (t->carry_len) {
			if (take > MS_PERFMAP_LINE_MAX - t->carry_len) {
				too_long(t);
				t->carry_len = 0;
				t->skipping = !nl;
			} else {
				memcpy(t->carry + t->carry_len, p, take);
				t->carry_len += (uint32_t)take;
				if (nl) {
					size_t n = t->carry_len;

					t->carry_len = 0;
					if (parse_line(t, t->carry, n) < 0)
						return -1;
				}
			}
		} else if (take > MS_PERFMAP_LINE_MAX) {
			too_long(t);
			t->skipping = !nl;
		} else if (nl) {
			if (parse_line(t, p, take) < 0)
				return -1;
		} else {
			memcpy(t->carry, p, take);
			t->carry_len = (uint32_t)take;
		}
		if (nl)
			t->parsed = t->consumed + (uint64_t)(nl + 1 - (const char *)bytes);
		p = nl ? nl + 1 : end;
	}
	t->consumed += len;
	return 0;
}

bool ms_perfmap_code_fits(struct ms_perfmap *t, uint32_t id)
{
	if (id >= t->n)
		return false;
	for (; t->code_next <= id; t->code_next++) {
		struct ms_perfmap_func *f = &t->funcs[t->code_next];
		uint64_t size = f->end - f->start;

		f->flags |= MS_PERFMAP_CODE_DECIDED;
		if (f->flags & MS_PERFMAP_ENDED) {
			f->flags |= MS_PERFMAP_NO_CODE;
		} else if (size <= MS_PERFMAP_CODE_MAX - t->c.code_bytes) {
			t->c.code_bytes += size;
		} else {
			f->flags |= MS_PERFMAP_NO_CODE;
			t->c.no_code++;
		}
	}
	return !(t->funcs[id].flags & MS_PERFMAP_NO_CODE);
}

bool ms_perfmap_stale(uint64_t map_mtime_ns, uint64_t proc_start_ns, uint64_t slack_ns)
{
	/* mtime + slack < start, without wrapping. */
	return map_mtime_ns < proc_start_ns && proc_start_ns - map_mtime_ns > slack_ns;
}
