/* Arrays grown by doubling: see grow.h. */
#include "util/grow.h"

#include <stdlib.h>

bool ms_reserve(void **arr, uint32_t *alloc, uint64_t need, size_t size)
{
	uint64_t n = *alloc ? *alloc : 64;
	void *p;

	if (need <= *alloc)
		return true;
	if (need > UINT32_MAX)
		return false;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	if (n > SIZE_MAX / size || !(p = realloc(*arr, (size_t)n * size)))
		return false;
	*arr = p;
	*alloc = (uint32_t)n;
	return true;
}
