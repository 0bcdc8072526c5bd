#include "util/crc32c.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define HAVE_HW 1
#endif

uint32_t ms_crc32c_portable(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const unsigned char *p = buf;

	if (!table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#ifdef HAVE_HW
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc, w[4];

	for (; len && ((uintptr_t)p & 7); len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	for (; len >= 32; len -= 32, p += 32) {
		memcpy(w, p, 32);
		c = _mm_crc32_u64(c, w[0]);
		c = _mm_crc32_u64(c, w[1]);
		c = _mm_crc32_u64(c, w[2]);
		c = _mm_crc32_u64(c, w[3]);
	}
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(w, p, 8);
		c = _mm_crc32_u64(c, w[0]);
	}
	for (; len; len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

uint32_t ms_crc32c(uint32_t crc, const void *buf, size_t len)
{
#ifdef HAVE_HW
	static int hw = -1;

	if (hw < 0) {
		__builtin_cpu_init();
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	}
	if (hw)
		return crc32c_hw(crc, buf, len);
#endif
	return ms_crc32c_portable(crc, buf, len);
}
