/*
 * A buffered writer for exporters' hot loops (internal.h): text is copied
 * into one block and written a block at a time; in counting mode nothing
 * is written and only the bytes are summed, by the same calls, so a size
 * estimate cannot drift from what the writer writes.
 */
#include "config.h"

#include "formats/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define BLOCK (1u << 20)

int ms_outbuf_init(struct ms_outbuf *b, FILE *out)
{
	memset(b, 0, sizeof(*b));
	b->out = out;
	if (!out)
		return 0;
	b->buf = malloc(BLOCK);
	if (!b->buf)
		return ms_error("out of memory");
	b->size = BLOCK;
	return 0;
}

void ms_outbuf_flush(struct ms_outbuf *b)
{
	/* a write error stays on out for the caller (formats.h) */
	if (b->out && b->len)
		fwrite(b->buf, 1, b->len, b->out);
	b->len = 0;
}

void ms_outbuf_write(struct ms_outbuf *b, const void *p, size_t n)
{
	b->bytes += n;
	if (!b->out)
		return;
	if (b->len + n > b->size) {
		ms_outbuf_flush(b);
		if (n > b->size) {
			fwrite(p, 1, n, b->out);
			return;
		}
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

unsigned ms_u64_digits(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void ms_outbuf_u64(struct ms_outbuf *b, uint64_t v)
{
	char tmp[20];
	unsigned n = ms_u64_digits(v), i = n;

	if (!b->out) {
		b->bytes += n;
		return;
	}
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ms_outbuf_write(b, tmp, n);
}

void ms_outbuf_release(struct ms_outbuf *b)
{
	ms_outbuf_flush(b);
	free(b->buf);
	b->buf = NULL;
	b->size = 0;
}
