/*
 * Internal to libcommon (the stream, and ms-decode's time ordering, which
 * keeps samples packed): the msgpack encoders every record is packed with
 * (stream/schema.c, stream/fastrec.c), straight into the writer's buffer
 * (ms_writer_reserve(), stream/protocols.h). The bytes are exactly what
 * msgpack-c's msgpack_pack_uint32/uint64/array/bin produce (the smallest
 * encoding), so the streams stay what they were when msgpack-c wrote them.
 */
#ifndef MS_STREAM_FASTPACK_H
#define MS_STREAM_FASTPACK_H

#include <stdint.h>
#include <string.h>

#include "stream/protocols.h"
#include "stream/records.h"

/*
 * The other way: the big-endian integer of w bytes (1, 2, 4 or 8) after a
 * msgpack type byte, as the reader's scan and the byte decoders read it.
 */
static inline uint64_t fp_get_be(const unsigned char *p, int w)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (w) {
	case 1:
		return p[0];
	case 2:
		memcpy(&v16, p, 2);
		return __builtin_bswap16(v16);
	case 4:
		memcpy(&v32, p, 4);
		return __builtin_bswap32(v32);
	default:
		memcpy(&v64, p, 8);
		return __builtin_bswap64(v64);
	}
}

static inline char *fp_be16(char *p, unsigned char t, uint16_t v)
{
	v = __builtin_bswap16(v);
	*p++ = (char)t;
	memcpy(p, &v, 2);
	return p + 2;
}

static inline char *fp_be32(char *p, unsigned char t, uint32_t v)
{
	v = __builtin_bswap32(v);
	*p++ = (char)t;
	memcpy(p, &v, 4);
	return p + 4;
}

/* msgpack_pack_uint64 and msgpack_pack_uint32 (same encoding). At most 9 bytes. */
static inline char *fp_uint(char *p, uint64_t v)
{
	if (v < 128) {
		*p++ = (char)v;
	} else if (v < 256) {
		*p++ = (char)0xcc;
		*p++ = (char)v;
	} else if (v < 65536) {
		p = fp_be16(p, 0xcd, (uint16_t)v);
	} else if (v <= UINT32_MAX) {
		p = fp_be32(p, 0xce, (uint32_t)v);
	} else {
		uint64_t b = __builtin_bswap64(v);

		*p++ = (char)0xcf;
		memcpy(p, &b, 8);
		p += 8;
	}
	return p;
}

/*
 * fp_uint() for a value that is most often an address or a time, above
 * 16 bits: the same bytes, with the likely sizes tested first. (A version
 * without branches, by a table on the count of significant bits, took
 * twice the instructions and more time.)
 */
static inline char *fp_addr(char *p, uint64_t v)
{
	if (v > UINT32_MAX) {
		uint64_t b = __builtin_bswap64(v);

		*p++ = (char)0xcf;
		memcpy(p, &b, 8);
		return p + 8;
	}
	if (v >= 65536)
		return fp_be32(p, 0xce, (uint32_t)v);
	return fp_uint(p, v);
}

/* msgpack_pack_array. At most 5 bytes. */
static inline char *fp_array(char *p, uint32_t n)
{
	if (n < 16) {
		*p++ = (char)(0x90 | n);
		return p;
	}
	if (n < 65536)
		return fp_be16(p, 0xdc, (uint16_t)n);
	return fp_be32(p, 0xdd, n);
}

/* msgpack_pack_bin header. At most 5 bytes. */
static inline char *fp_bin(char *p, uint32_t n)
{
	if (n < 256) {
		*p++ = (char)0xc4;
		*p++ = (char)n;
		return p;
	}
	if (n < 65536)
		return fp_be16(p, 0xc5, (uint16_t)n);
	return fp_be32(p, 0xc6, n);
}

/*
 * The bytes of a SAMPLE record: the one encoder, which ms_sample_pack()
 * uses in the writer's buffer and a stage that keeps records packed
 * before it writes them (ms-decode's time ordering) uses in its own (unit
 * tests hold the bytes to msgpack-c's and ms_sample_unpack()'s): at most
 * fp_sample_bound(s) bytes at p; returns the end. The caller has checked
 * the counts against MS_CHAIN_MAX, MS_REGS_MAX and MS_STACK_MAX.
 */
static inline size_t fp_sample_bound(const struct ms_sample *s)
{
	/* array, kind; pid .. cpumode; the chains; abi, mask, the registers */
	size_t n = 2 + 5 + 5 + 9 + 5 + 9 + 9 + 5 +
		   5 + 5 + 9 * ((size_t)s->n_kchain + s->n_uchain) +
		   5 + 9 + 5 + 8 * (size_t)s->n_regs;

	/* [offset, length] or a bin */
	return n + (s->stack_in_file ? 1 + 9 + 9 : 5 + (size_t)s->stack_len);
}

static inline char *fp_sample(char *p, const struct ms_sample *s)
{
	*p++ = (char)(0x90 | 14);
	*p++ = (char)MS_REC_SAMPLE;
	p = fp_uint(p, s->pid);
	p = fp_uint(p, s->tid);
	p = fp_addr(p, s->time);
	p = fp_uint(p, s->cpu);
	p = fp_uint(p, s->period);
	p = fp_addr(p, s->ip);
	p = fp_uint(p, s->cpumode);
	p = fp_array(p, s->n_kchain);
	for (uint32_t i = 0; i < s->n_kchain; i++)
		p = fp_addr(p, s->kchain[i]);
	p = fp_array(p, s->n_uchain);
	for (uint32_t i = 0; i < s->n_uchain; i++)
		p = fp_addr(p, s->uchain[i]);
	p = fp_uint(p, s->regs_abi);
	p = fp_uint(p, s->regs_mask);
	/* the registers as one bin of little-endian u64s */
	p = fp_bin(p, 8 * s->n_regs);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, s->regs, 8 * (size_t)s->n_regs);
	p += 8 * (size_t)s->n_regs;
#else
	for (uint32_t i = 0; i < s->n_regs; i++, p += 8) {
		uint64_t v = __builtin_bswap64(s->regs[i]);

		memcpy(p, &v, 8);
	}
#endif
	if (s->stack_in_file) {
		*p++ = (char)(0x90 | 2);
		p = fp_uint(p, s->stack_offset);
		p = fp_uint(p, s->stack_len);
	} else {
		p = fp_bin(p, s->stack_len);
		if (s->stack_len)
			memcpy(p, s->stack, s->stack_len);
		p += s->stack_len;
	}
	return p;
}

#endif
