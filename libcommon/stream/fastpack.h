/*
 * Internal to libcommon/stream: packing fixed-schema records (STACK,
 * SAMPLE: the per-sample ones) straight into the writer's buffer, without
 * a msgpack-c callback per element. The bytes are exactly what msgpack-c's
 * msgpack_pack_uint32/uint64/array/bin produce (the smallest encoding), so
 * the stream is the same whichever path wrote it.
 */
#ifndef MS_STREAM_FASTPACK_H
#define MS_STREAM_FASTPACK_H

#include <stdint.h>
#include <string.h>

#include "stream/stream.h"

/*
 * Room for up to n more bytes of the open record, or NULL when the record
 * would outgrow MS_RECORD_MAX, the writer has failed or no record is open:
 * then pack with the msgpack packer, which reports. Bytes written at the
 * pointer count once ms_writer_advance() says how many.
 */
char *ms_writer_reserve(struct ms_writer *w, size_t n);
void ms_writer_advance(struct ms_writer *w, size_t n);

/*
 * Grow the pipe at fd, if it is one of the default 64 KiB, to 1 MiB: the
 * reader does it to its input, so each pipe between stages is grown by
 * the stage downstream.
 */
void ms_pipe_grow(int fd);

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

#endif
