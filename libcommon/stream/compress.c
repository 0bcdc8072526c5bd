/* LZ4 frames around a stream: see stream/compress.h. */
#include "stream/compress.h"

#include <errno.h>
#include <lz4frame.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

#define IN_BUF (256u * 1024u)

bool ms_lz4_is_frame(const void *p, size_t len)
{
	return len >= 4 && !memcmp(p, "\x04\x22\x4d\x18", 4);
}

struct ms_lz4_in {
	LZ4F_dctx *dctx;
	char *name;
	unsigned char *buf;
	size_t start, end;
	bool eof;
	size_t hint;		/* LZ4F_decompress's: 0 when the frame ended */
};

struct ms_lz4_in *ms_lz4_in_new(const char *name, const void *seed, size_t len)
{
	struct ms_lz4_in *z = calloc(1, sizeof(*z));

	if (!z || !(z->name = strdup(name)) || !(z->buf = malloc(IN_BUF > len ? IN_BUF : len)) ||
	    LZ4F_isError(LZ4F_createDecompressionContext(&z->dctx, LZ4F_VERSION))) {
		ms_error("out of memory reading the compressed input '%s'", name);
		ms_lz4_in_free(z);
		return NULL;
	}
	memcpy(z->buf, seed, len);
	z->end = len;
	z->hint = 1;
	return z;
}

/* More compressed bytes: 0, or -1 after a message. */
static int read_more(struct ms_lz4_in *z, int fd)
{
	ssize_t n;

	z->start = z->end = 0;
	for (;;) {
		n = read(fd, z->buf, IN_BUF);
		if (n > 0) {
			z->end = (size_t)n;
			return 0;
		}
		if (n == 0) {
			z->eof = true;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			poll(&p, 1, -1);
			continue;
		}
		return ms_error_errno("cannot read '%s'", z->name);
	}
}

ssize_t ms_lz4_in_read(struct ms_lz4_in *z, int fd, void *dst, size_t cap, bool *whole)
{
	for (;;) {
		size_t dst_len = cap, src_len, hint;

		if (z->start == z->end && !z->eof && read_more(z, fd) < 0)
			return -1;
		if (z->start == z->end) {
			/* The input ended: whole when the frame did. */
			*whole = z->hint == 0;
			return 0;
		}
		src_len = z->end - z->start;
		hint = LZ4F_decompress(z->dctx, dst, &dst_len, z->buf + z->start, &src_len, NULL);
		if (LZ4F_isError(hint))
			return ms_error("'%s': the compressed stream is corrupt: %s", z->name,
					LZ4F_getErrorName(hint));
		z->start += src_len;
		z->hint = hint;
		if (dst_len)
			return (ssize_t)dst_len;
		if (!hint) {
			/* The frame ended: anything after it is not ours to read. */
			*whole = true;
			z->eof = true;
			z->start = z->end;
			return 0;
		}
	}
}

void ms_lz4_in_free(struct ms_lz4_in *z)
{
	if (!z)
		return;
	LZ4F_freeDecompressionContext(z->dctx);
	free(z->buf);
	free(z->name);
	free(z);
}

struct ms_lz4_out {
	LZ4F_cctx *cctx;
	char *name;
	unsigned char *buf;
	size_t cap;
	bool begun;
};

struct ms_lz4_out *ms_lz4_out_new(const char *name)
{
	struct ms_lz4_out *z = calloc(1, sizeof(*z));

	if (!z || !(z->name = strdup(name)) ||
	    LZ4F_isError(LZ4F_createCompressionContext(&z->cctx, LZ4F_VERSION))) {
		ms_error("out of memory compressing '%s'", name);
		ms_lz4_out_free(z);
		return NULL;
	}
	return z;
}

static int fit(struct ms_lz4_out *z, size_t need)
{
	unsigned char *b;

	if (need <= z->cap)
		return 0;
	if (!(b = realloc(z->buf, need)))
		return ms_error("out of memory compressing '%s'", z->name);
	z->buf = b;
	z->cap = need;
	return 0;
}

/*
 * Room for the frame's header and what len bytes compress to, and the
 * header itself the first time: its length in *pos. 0, or -1 after a message.
 */
static int prepare(struct ms_lz4_out *z, size_t len, size_t *pos)
{
	size_t r;

	*pos = 0;
	if (fit(z, LZ4F_HEADER_SIZE_MAX + LZ4F_compressBound(len, NULL)) < 0)
		return -1;
	if (z->begun)
		return 0;
	r = LZ4F_compressBegin(z->cctx, z->buf, z->cap, NULL);
	if (LZ4F_isError(r))
		return ms_error("cannot compress '%s': %s", z->name, LZ4F_getErrorName(r));
	*pos = r;
	z->begun = true;
	return 0;
}

int ms_lz4_out_put(struct ms_lz4_out *z, const void *src, size_t len, const void **out,
		   size_t *out_len)
{
	size_t pos, r;

	if (prepare(z, len, &pos) < 0)
		return -1;
	r = LZ4F_compressUpdate(z->cctx, z->buf + pos, z->cap - pos, src, len, NULL);
	if (LZ4F_isError(r))
		return ms_error("cannot compress '%s': %s", z->name, LZ4F_getErrorName(r));
	*out = z->buf;
	*out_len = pos + r;
	return 0;
}

int ms_lz4_out_end(struct ms_lz4_out *z, const void **out, size_t *out_len)
{
	size_t pos, r;

	if (prepare(z, 0, &pos) < 0)
		return -1;
	r = LZ4F_compressEnd(z->cctx, z->buf + pos, z->cap - pos, NULL);
	if (LZ4F_isError(r))
		return ms_error("cannot compress '%s': %s", z->name, LZ4F_getErrorName(r));
	*out = z->buf;
	*out_len = pos + r;
	return 0;
}

void ms_lz4_out_free(struct ms_lz4_out *z)
{
	if (!z)
		return;
	LZ4F_freeCompressionContext(z->cctx);
	free(z->buf);
	free(z->name);
	free(z);
}
