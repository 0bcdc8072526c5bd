/* Bit counting and unaligned host-order loads and stores, for per-record paths. */
#ifndef MS_UTIL_BITS_H
#define MS_UTIL_BITS_H

#include <stdint.h>
#include <string.h>

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

/* (memcpy: one move each, where a cast would be undefined when unaligned.) */
static inline uint16_t ms_load16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ms_load32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ms_load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ms_store32(void *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void ms_store64(void *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

#endif
