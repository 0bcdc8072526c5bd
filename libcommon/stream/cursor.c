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
		unsigned char t;
		uint64_t body = 0, elems = 0;
		size_t hdr = 1, w = 0;
		bool container = false;

		while (pending[depth] == 0) {
			if (depth == 0) {
				c->p = p;
				return 1;
			}
			depth--;
		}
		if (p >= c->end)
			return -1;
		t = *p;
		if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) {
			/* fixint, nil, booleans */
		} else if (t >= 0xa0 && t <= 0xbf) {
			body = t & 0x1f;
		} else if (t >= 0x90 && t <= 0x9f) {
			container = true;
			elems = t & 0x0f;
		} else if (t >= 0x80 && t <= 0x8f) {
			container = true;
			elems = 2 * (uint64_t)(t & 0x0f);
		} else {
			switch (t) {
			case 0xcc: case 0xd0: hdr = 2; break;
			case 0xcd: case 0xd1: hdr = 3; break;
			case 0xce: case 0xd2: case 0xca: hdr = 5; break;
			case 0xcf: case 0xd3: case 0xcb: hdr = 9; break;
			case 0xd4: hdr = 2; body = 1; break;	/* fixext: type + data */
			case 0xd5: hdr = 2; body = 2; break;
			case 0xd6: hdr = 2; body = 4; break;
			case 0xd7: hdr = 2; body = 8; break;
			case 0xd8: hdr = 2; body = 16; break;
			case 0xc4: case 0xd9: w = 1; break;	/* bin8, str8 */
			case 0xc5: case 0xda: w = 2; break;
			case 0xc6: case 0xdb: w = 4; break;
			case 0xc7: w = 1; hdr = 3; break;	/* ext8: len, type */
			case 0xc8: w = 2; hdr = 4; break;
			case 0xc9: w = 4; hdr = 6; break;
			case 0xdc: w = 2; container = true; break;
			case 0xdd: w = 4; container = true; break;
			case 0xde: w = 2; container = true; break;
			case 0xdf: w = 4; container = true; break;
			default:
				return -1;	/* 0xc1 */
			}
			if (w && hdr == 1)
				hdr = 1 + w;
		}
		if ((size_t)(c->end - p) < hdr)
			return -1;
		if (w) {
			uint64_t n = fp_get_be(p + 1, (int)w);

			if (!container)
				body = n;
			else
				elems = t >= 0xde ? 2 * n : n;
		}
		pending[depth]--;
		p += hdr;
		if (container) {
			if (depth + 1 > MS_RECORD_DEPTH || elems > (uint64_t)(c->end - p))
				return -1;
			pending[++depth] = elems;
			continue;
		}
		if (body > (uint64_t)(c->end - p))
			return -1;
		p += body;
	}
}
