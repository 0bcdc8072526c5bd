/* Arrays grown by doubling: see grow.h. */
#include "util/grow.h"
#include "util/error.h"

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

int ms_grow(void *arrp, uint32_t *alloc, uint32_t n, size_t sz)
{
	if (n < *alloc)
		return 0;
	if (n >= UINT32_MAX - 1)
		return ms_error("a table reached its limit of %u rows", UINT32_MAX - 1);
	if (!ms_reserve(arrp, alloc, (uint64_t)n + 1, sz))
		return ms_error("out of memory");
	return 0;
}
