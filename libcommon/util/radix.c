#include "util/radix.h"

#include <string.h>

struct ms_rkey *ms_radix_sort(struct ms_rkey *a, struct ms_rkey *tmp, size_t n)
{
	size_t count[8][256];
	unsigned int bytes[8], n_bytes = 0, b;
	uint64_t differ = 0;
	size_t i;

	if (n < 2)
		return a;
	for (i = 1; i < n; i++)
		differ |= a[i].key ^ a[0].key;
	for (b = 0; b < 8; b++)
		if ((differ >> (8 * b)) & 255)
			bytes[n_bytes++] = b;
	if (!n_bytes)
		return a;
	memset(count, 0, n_bytes * sizeof(count[0]));
	for (i = 0; i < n; i++)
		for (b = 0; b < n_bytes; b++)
			count[b][(a[i].key >> (8 * bytes[b])) & 255]++;
	for (b = 0; b < n_bytes; b++) {
		unsigned int shift = 8 * bytes[b];
		size_t *c = count[b], sum = 0;
		struct ms_rkey *t;

		for (unsigned int v = 0; v < 256; v++) {
			size_t k = c[v];

			c[v] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			tmp[c[(a[i].key >> shift) & 255]++] = a[i];
		t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}
