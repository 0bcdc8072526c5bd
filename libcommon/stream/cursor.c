/*
 * Stepping over a msgpack value: see stream/cursor.h.
 */
#include "stream/cursor.h"
#include "stream/stream.h"

int ms_cur_skip(struct ms_cursor *c)
{
	const unsigned char *p = c->p;
	uint64_t pending[MS_RECORD_DEPTH + 1];
	unsigned depth = 0;

	pending[0] = 1;
	for (;;) {
		struct ms_mp_head h;
		uint64_t n;

		while (pending[depth] == 0) {
			if (depth == 0) {
				c->p = p;
				return 1;
			}
			depth--;
		}
		if (p >= c->end || !ms_mp_head(*p, &h) || (size_t)(c->end - p) < h.hdr)
			return -1;
		n = ms_mp_count(p, &h);
		pending[depth]--;
		p += h.hdr;
		if (h.container) {
			if (depth + 1 > MS_RECORD_DEPTH || n > (uint64_t)(c->end - p))
				return -1;
			pending[++depth] = n;
			continue;
		}
		if (n > (uint64_t)(c->end - p))
			return -1;
		p += n;
	}
}
