/*
 * Internal to the stream: reading msgpack values straight from a
 * record's bytes, the one decoder under every record kind (records.c),
 * the reader's header and trailer, and ms-decode's look at a passing
 * record's time. No objects are built.
 *
 * Each reader of a value returns 1 with the value when the next value is
 * of its type (and consumes it), 0 when it is of another type (nothing
 * consumed), -1 when the bytes end inside the value (nothing consumed).
 * "Unsigned integer" means what msgpack-c calls one: the unsigned
 * encodings, and the signed ones holding a value >= 0. The reader's scan
 * checked every length against the record already; the cursor still
 * checks its own bounds, for records built by hand.
 */
#ifndef MS_STREAM_CURSOR_H
#define MS_STREAM_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stream/fastpack.h"

struct ms_cursor {
	const unsigned char *p, *end;
};

/*
 * What a type byte says of the value it starts, for the code that frames
 * or steps over values of any type (the reader's scan, ms_cur_skip()).
 */
struct ms_mp_head {
	uint8_t hdr;		/* header bytes, the type byte included */
	uint8_t width;		/* bytes of the length or count at p + 1 (0: none) */
	uint8_t per;		/* containers: elements per counted entry (2 for a map) */
	bool container;
	uint32_t fixed;		/* the body bytes or elements the type byte gives itself */
};

/* False for 0xc1, which msgpack never uses. */
static inline bool ms_mp_head(unsigned char t, struct ms_mp_head *h)
{
	*h = (struct ms_mp_head){ .hdr = 1, .per = 1 };
	if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
		return true;	/* fixint, nil, false, true */
	if (t >= 0xa0 && t <= 0xbf) {
		h->fixed = t & 0x1f;
		return true;
	}
	if (t <= 0x9f) {	/* fixmap 0x80-0x8f, fixarray 0x90-0x9f */
		h->container = true;
		h->per = t <= 0x8f ? 2 : 1;
		h->fixed = (t & 0x0f) * h->per;
		return true;
	}
	switch (t) {
	case 0xcc: case 0xd0: h->hdr = 2; break;
	case 0xcd: case 0xd1: h->hdr = 3; break;
	case 0xce: case 0xd2: case 0xca: h->hdr = 5; break;
	case 0xcf: case 0xd3: case 0xcb: h->hdr = 9; break;
	case 0xd4: h->hdr = 2; h->fixed = 1; break;	/* fixext: type + data */
	case 0xd5: h->hdr = 2; h->fixed = 2; break;
	case 0xd6: h->hdr = 2; h->fixed = 4; break;
	case 0xd7: h->hdr = 2; h->fixed = 8; break;
	case 0xd8: h->hdr = 2; h->fixed = 16; break;
	case 0xc4: case 0xd9: h->hdr = 2; h->width = 1; break;	/* bin8, str8 */
	case 0xc5: case 0xda: h->hdr = 3; h->width = 2; break;
	case 0xc6: case 0xdb: h->hdr = 5; h->width = 4; break;
	case 0xc7: h->hdr = 3; h->width = 1; break;		/* ext8: len, type */
	case 0xc8: h->hdr = 4; h->width = 2; break;
	case 0xc9: h->hdr = 6; h->width = 4; break;
	case 0xdc: h->hdr = 3; h->width = 2; h->container = true; break;
	case 0xdd: h->hdr = 5; h->width = 4; h->container = true; break;
	case 0xde: h->hdr = 3; h->width = 2; h->container = true; h->per = 2; break;
	case 0xdf: h->hdr = 5; h->width = 4; h->container = true; h->per = 2; break;
	default: return false;	/* 0xc1 */
	}
	return true;
}

/*
 * With the header at p wholly present: the body bytes of a scalar, or the
 * elements of a container (a map's keys and values both counted).
 */
static inline uint64_t ms_mp_count(const unsigned char *p, const struct ms_mp_head *h)
{
	return h->width ? fp_get_be(p + 1, h->width) * h->per : h->fixed;
}

static inline void ms_cur_init(struct ms_cursor *c, const void *bytes, size_t len)
{
	c->p = bytes;
	c->end = c->p + len;
}

static inline int ms_cur_uint(struct ms_cursor *c, uint64_t *v)
{
	unsigned char t;
	int w;

	if (c->p >= c->end)
		return -1;
	t = *c->p;
	if (t <= 0x7f) {
		*v = t;
		c->p++;
		return 1;
	}
	if (t >= 0xcc && t <= 0xcf)
		w = 1 << (t - 0xcc);
	else if (t >= 0xd0 && t <= 0xd3)
		w = 1 << (t - 0xd0);
	else
		return 0;
	if ((size_t)(c->end - c->p) < 1 + (size_t)w)
		return -1;
	*v = fp_get_be(c->p + 1, w);
	if (t >= 0xd0) {
		int64_t sv = w == 8 ? (int64_t)*v :
			(int64_t)(*v << (64 - 8 * w)) >> (64 - 8 * w);

		if (sv < 0)
			return 0;
		*v = (uint64_t)sv;
	}
	c->p += 1 + w;
	return 1;
}

/*
 * The unsigned encodings, with no bounds check: the caller has made sure 9
 * bytes are left. False (nothing consumed) for any other type byte; the
 * caller then takes ms_cur_uint(), which judges it.
 */
static inline __attribute__((always_inline)) bool ms_uint_fast(const unsigned char **pp,
							       uint64_t *v)
{
	const unsigned char *p = *pp;
	unsigned t = p[0], w;
	uint64_t v64;

	if (t <= 0x7f) {
		*v = t;
		*pp = p + 1;
		return true;
	}
	if (t - 0xcc > 3)
		return false;
	/* uint8..uint64: the 8 bytes after the type byte, shifted to width. */
	w = 1u << (t - 0xcc);
	memcpy(&v64, p + 1, 8);
	*v = __builtin_bswap64(v64) >> (64 - 8 * w);
	*pp = p + 1 + w;
	return true;
}

/* ms_cur_uint(), taking the unchecked path while 9 bytes are left. */
static inline int ms_cur_uint_quick(struct ms_cursor *c, uint64_t *v)
{
	if (c->end - c->p >= 9 && ms_uint_fast(&c->p, v))
		return 1;
	return ms_cur_uint(c, v);
}

/* A header of type byte t whose w-byte length follows it: the length, consumed. */
static inline int ms_cur_sized(struct ms_cursor *c, int w, uint32_t *n)
{
	if ((size_t)(c->end - c->p) < 1 + (size_t)w)
		return -1;
	*n = (uint32_t)fp_get_be(c->p + 1, w);
	c->p += 1 + w;
	return 1;
}

static inline int ms_cur_array(struct ms_cursor *c, uint32_t *n)
{
	unsigned char t;

	if (c->p >= c->end)
		return -1;
	t = *c->p;
	if (t >= 0x90 && t <= 0x9f) {
		*n = t & 0x0f;
		c->p++;
		return 1;
	}
	if (t == 0xdc || t == 0xdd)
		return ms_cur_sized(c, t == 0xdc ? 2 : 4, n);
	return 0;
}

/* A str (want_bin false) or a bin (true): its body borrowed from the bytes. */
static inline int ms_cur_body(struct ms_cursor *c, bool want_bin, const unsigned char **ptr,
			      uint32_t *len)
{
	const unsigned char *start = c->p;
	unsigned char t;
	int r;

	if (c->p >= c->end)
		return -1;
	t = *c->p;
	if (!want_bin && t >= 0xa0 && t <= 0xbf) {
		*len = t & 0x1f;
		c->p++;
	} else if (!want_bin && t >= 0xd9 && t <= 0xdb) {
		if ((r = ms_cur_sized(c, 1 << (t - 0xd9), len)) < 0)
			return r;
	} else if (want_bin && t >= 0xc4 && t <= 0xc6) {
		if ((r = ms_cur_sized(c, 1 << (t - 0xc4), len)) < 0)
			return r;
	} else {
		return 0;
	}
	if ((size_t)(c->end - c->p) < *len) {
		c->p = start;
		return -1;
	}
	*ptr = c->p;
	c->p += *len;
	return 1;
}

static inline int ms_cur_bool(struct ms_cursor *c, bool *b)
{
	if (c->p >= c->end)
		return -1;
	if (*c->p != 0xc2 && *c->p != 0xc3)
		return 0;
	*b = *c->p++ == 0xc3;
	return 1;
}

static inline bool ms_cur_next_is_array(const struct ms_cursor *c)
{
	return c->p < c->end && ((*c->p & 0xf0) == 0x90 || *c->p == 0xdc || *c->p == 0xdd);
}

static inline bool ms_cur_next_is_bin(const struct ms_cursor *c)
{
	return c->p < c->end && *c->p >= 0xc4 && *c->p <= 0xc6;
}

/* A little-endian u64 (a SAMPLE's registers), whatever the host. */
static inline uint64_t ms_get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/*
 * Step over one value of any type, containers whole (at most
 * MS_RECORD_DEPTH deep): 1, or -1 when the bytes end inside it or it is
 * not msgpack (nothing consumed).
 */
int ms_cur_skip(struct ms_cursor *c);

#endif
