/*
 * ULEB128, as the DWARF readers here (dieread.c, lines.c) read it: a value
 * that ends before the end of its bytes and fits 64 bits, else refused
 * (libdw would give UINT64_MAX, which neither reader could use).
 */
#ifndef MS_DWARF_LEB128_H
#define MS_DWARF_LEB128_H

#include <stdbool.h>
#include <stdint.h>

/* ms_uleb() past its first byte. */
static __attribute__((noinline, unused)) bool ms_uleb_long(const uint8_t **pp, const uint8_t *end,
							    uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	for (unsigned int shift = 0; p < end && shift <= 63; shift += 7) {
		uint8_t b = *p++;

		/* At bit 63 only the lowest bit is left, and no more bytes. */
		if (shift == 63 && b > 1)
			return false;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return true;
		}
	}
	return false;
}

/* The ULEB128 at *pp, before end: true with *out and *pp past it, else false. */
static inline bool ms_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	/* One byte, which most values are, without a call. */
	if (*pp < end && **pp < 0x80) {
		*out = *(*pp)++;
		return true;
	}
	return ms_uleb_long(pp, end, out);
}

#endif
