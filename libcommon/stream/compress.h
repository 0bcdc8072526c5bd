/*
 * LZ4 frames around a stream (lz4's frame format, as the lz4 tool
 * writes it): ms-collect --lz4 writes its raw stream compressed, for a
 * recording whose processing is deferred (microscope record --defer) or
 * done on another host; the reader takes either form, by the frame's
 * magic. A compressed stream is read, never mapped, so its samples always
 * carry their stack bytes (ms-decode's --stack-bytes=auto).
 */
#ifndef MS_STREAM_COMPRESS_H
#define MS_STREAM_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether p (len bytes) starts an LZ4 frame. */
bool ms_lz4_is_frame(const void *p, size_t len);

/* Decompressing what is read from a descriptor. */
struct ms_lz4_in;
/*
 * A decompressor for input name, seeded with the len bytes already read
 * from it (the frame's start); NULL after a message.
 */
struct ms_lz4_in *ms_lz4_in_new(const char *name, const void *seed, size_t len);
/*
 * Up to cap decompressed bytes into dst, reading fd as needed (waiting
 * for it when it is non-blocking): their count, 0 at the end of the input
 * (eof set: true when the frame ended whole), or -1 after a message.
 */
ssize_t ms_lz4_in_read(struct ms_lz4_in *z, int fd, void *dst, size_t cap, bool *whole);
void ms_lz4_in_free(struct ms_lz4_in *z);

/* Compressing what is written. */
struct ms_lz4_out;
struct ms_lz4_out *ms_lz4_out_new(const char *name);
/*
 * Compress len bytes of src: *out and *out_len, the compressed bytes to
 * write now (the frame's header comes with the first call; maybe none),
 * valid until the next call. 0, or -1 after a message.
 */
int ms_lz4_out_put(struct ms_lz4_out *z, const void *src, size_t len, const void **out,
		   size_t *out_len);
/* The frame's end (and what it held back), once: as put(). */
int ms_lz4_out_end(struct ms_lz4_out *z, const void **out, size_t *out_len);
void ms_lz4_out_free(struct ms_lz4_out *z);

#endif
