/* Bit counting for per-record paths. */
#ifndef MS_UTIL_BITS_H
#define MS_UTIL_BITS_H

#include <stdint.h>

/*
 * Bits set in v. Without -mpopcnt (Debian's x86-64 baseline),
 * __builtin_popcountll() is a call into libgcc's table loop; this is a
 * dozen inline instructions.
 */
static inline unsigned ms_popcount64(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((v * 0x0101010101010101ull) >> 56);
}

#endif
