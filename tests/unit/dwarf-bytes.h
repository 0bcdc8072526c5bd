/*
 * Writing DWARF by hand in unit tests (symbols-die-test.c,
 * symbols-index-test.c): a byte buffer and its encoders.
 */
#ifndef MS_TESTS_DWARF_BYTES_H
#define MS_TESTS_DWARF_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct bytes {
	uint8_t b[1024];
	size_t n;
};

static void u8(struct bytes *b, uint64_t v)
{
	assert_true(b->n < sizeof(b->b));
	b->b[b->n++] = (uint8_t)v;
}

static __attribute__((unused)) void uint_le(struct bytes *b, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		u8(b, v >> (8 * i));
}

static __attribute__((unused)) void uleb(struct bytes *b, uint64_t v)
{
	do {
		u8(b, (v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static __attribute__((unused)) void sleb(struct bytes *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
			u8(b, byte);
			return;
		}
		u8(b, byte | 0x80);
	}
}

/* A string with its NUL. */
static __attribute__((unused)) void cstr(struct bytes *b, const char *s)
{
	do
		u8(b, (uint8_t)*s);
	while (*s++);
}

#endif
