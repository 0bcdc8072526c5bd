/*
 * The pure parts of reading CPython (pyparse.h): locations tables,
 * unicode data, _Py_DebugOffsets. Nothing here reads a process.
 */
#include <stdint.h>
#include <string.h>
#include "python/pyparse.h"

/* An unsigned varint of 6-bit chunks; a byte with bit 7 set starts the next entry. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	uint32_t r = 0;
	for (unsigned shift = 0;; shift += 6) {
		if (*i >= len || shift > 24)
			return -1;
		uint8_t b = t[(*i)++];
		if (b & 0x80)
			return -1;
		r |= (uint32_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	*v = r;
	return 0;
}

static int svarint(const uint8_t *t, size_t len, size_t *i, int32_t *v)
{
	uint32_t u;
	if (varint(t, len, i, &u) < 0)
		return -1;
	*v = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

/* n bytes of an entry's body, none starting an entry. */
static int body(const uint8_t *t, size_t len, size_t *i, size_t n)
{
	for (size_t k = 0; k < n; k++, (*i)++)
		if (*i >= len || (t[*i] & 0x80))
			return -1;
	return 0;
}

enum ms_py_line ms_py_linetable_line(const uint8_t *tab, size_t len, int firstlineno,
				     int64_t addrq, int *line)
{
	if (addrq < 0) {
		*line = firstlineno;
		return MS_PY_LINE_OK;
	}
	int64_t computed = firstlineno, addr = 0;
	size_t i = 0;
	while (i < len) {
		uint8_t b = tab[i++];
		if (!(b & 0x80))
			return MS_PY_LINE_BAD;
		unsigned code = (b >> 3) & 15, units = (b & 7) + 1u;
		int32_t delta = 0;
		uint32_t skip;
		bool noline = false;
		switch (code) {
		case 15:	/* no location */
			noline = true;
			break;
		case 14:	/* long: line delta, end line delta, column+1, end column+1 */
			if (svarint(tab, len, &i, &delta) < 0 || varint(tab, len, &i, &skip) < 0 ||
			    varint(tab, len, &i, &skip) < 0 || varint(tab, len, &i, &skip) < 0)
				return MS_PY_LINE_BAD;
			break;
		case 13:	/* no columns */
			if (svarint(tab, len, &i, &delta) < 0)
				return MS_PY_LINE_BAD;
			break;
		case 10: case 11: case 12:	/* one line: delta code-10, column, end column */
			delta = (int32_t)code - 10;
			if (body(tab, len, &i, 2) < 0)
				return MS_PY_LINE_BAD;
			break;
		default:	/* short: same line, one column byte */
			if (body(tab, len, &i, 1) < 0)
				return MS_PY_LINE_BAD;
			break;
		}
		computed += delta;
		if (computed < INT32_MIN || computed > INT32_MAX)
			return MS_PY_LINE_BAD;
		int64_t end = addr + 2 * (int64_t)units;
		if (addrq < end) {
			if (noline)
				return MS_PY_LINE_NONE;
			*line = (int)computed;
			return MS_PY_LINE_OK;
		}
		addr = end;
	}
	return MS_PY_LINE_PAST;
}

int ms_py_unicode_data(const struct ms_py_offsets *o, uint32_t state, uint32_t *data_off,
		       enum ms_py_ukind *kind)
{
	unsigned k = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (k != 1 && k != 2 && k != 4) || (ascii && k != 1))
		return -1;
	*kind = (enum ms_py_ukind)k;
	*data_off = ascii ? o->uni_ascii_size : o->uni_compact_size;
	return 0;
}

int ms_py_unicode_utf8(enum ms_py_ukind kind, const uint8_t *data, size_t n, char *out,
		       size_t cap)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		if (kind == MS_PY_U1)
			c = data[i];
		else if (kind == MS_PY_U2)
			c = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			c = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			    (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		uint8_t b[4];
		size_t nb;
		if (c < 0x80) {
			b[0] = (uint8_t)c; nb = 1;
		} else if (c < 0x800) {
			b[0] = (uint8_t)(0xc0 | c >> 6); b[1] = (uint8_t)(0x80 | (c & 63)); nb = 2;
		} else if (c < 0x10000) {
			b[0] = (uint8_t)(0xe0 | c >> 12); b[1] = (uint8_t)(0x80 | ((c >> 6) & 63));
			b[2] = (uint8_t)(0x80 | (c & 63)); nb = 3;
		} else {
			b[0] = (uint8_t)(0xf0 | c >> 18); b[1] = (uint8_t)(0x80 | ((c >> 12) & 63));
			b[2] = (uint8_t)(0x80 | ((c >> 6) & 63)); b[3] = (uint8_t)(0x80 | (c & 63)); nb = 4;
		}
		if (w + nb + 1 > cap)
			return -1;
		memcpy(out + w, b, nb);
		w += nb;
	}
	if (w + 1 > cap)
		return -1;
	out[w] = '\0';
	return (int)w;
}

static uint64_t u64at(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

/*
 * 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h, as the
 * interpreter's DWARF shows it): each section a size then offsets. A
 * field: where its offset is in the struct, the section's size's place,
 * its width in the object, and where it goes.
 */
struct dfield {
	uint16_t at, size_at;
	uint8_t width;
	size_t dst;
};
#define F(a, s, w, m) { a, s, w, offsetof(struct ms_py_offsets, m) }
static const struct dfield fields313[] = {
	F(40, 24, 8, rt_interp_head),
	F(64, 48, 8, is_next), F(72, 48, 8, is_threads_head),
	F(168, 152, 8, ts_next), F(184, 152, 8, ts_frame), F(200, 152, 8, ts_native_tid),
	F(232, 224, 8, fr_previous), F(240, 224, 8, fr_code), F(248, 224, 8, fr_instr),
	F(264, 224, 1, fr_owner),
	F(280, 272, 8, co_filename), F(288, 272, 8, co_name), F(296, 272, 8, co_qualname),
	F(304, 272, 8, co_linetable), F(312, 272, 4, co_firstlineno),
	F(344, 272, 2, co_code_adaptive),
	F(360, 352, 8, ob_type),
	F(520, 512, 8, bytes_size), F(528, 512, 1, bytes_sval),
	F(544, 536, 4, uni_state), F(552, 536, 8, uni_length),
};
#undef F

/* The largest structure size believed: PyInterpreterState is about 190 KiB. */
#define MS_PY_STRUCT_MAX (1u << 22)

const char *ms_py_debug_offsets_parse(const uint8_t *buf, size_t len, uint32_t version_hex,
				      struct ms_py_offsets *o)
{
	if (len < MS_PY_DEBUG_OFFSETS_READ)
		return "_Py_DebugOffsets: fewer bytes than the structure";
	if (memcmp(buf, "xdebugpy", 8) != 0)
		return "_Py_DebugOffsets: no \"xdebugpy\" cookie at the start of _PyRuntime";
	if (u64at(buf, 8) != version_hex)
		return "_Py_DebugOffsets: its version is not the module's Py_Version";
	if (((version_hex >> 24) & 0xff) != 3 || ((version_hex >> 16) & 0xff) != 13)
		return "_Py_DebugOffsets: no reader for this version's structure (3.13 only)";
	if (u64at(buf, 16) != 0)
		return "_Py_DebugOffsets: a free-threaded build (not supported)";
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < sizeof(fields313) / sizeof(fields313[0]); i++) {
		const struct dfield *f = &fields313[i];
		uint64_t size = u64at(buf, f->size_at), off = u64at(buf, f->at);
		if (size == 0 || size > MS_PY_STRUCT_MAX)
			return "_Py_DebugOffsets: a structure size out of range";
		if (off >= MS_PY_OFFSET_MAX || (f->width > 1 && off + f->width > size) ||
		    off > size)
			return "_Py_DebugOffsets: an offset outside its structure";
		uint32_t v = (uint32_t)off;
		memcpy((char *)o + f->dst, &v, sizeof(v));
	}
	uint64_t ascii = u64at(buf, 560);
	if (ascii >= MS_PY_OFFSET_MAX || ascii < o->uni_state + 4)
		return "_Py_DebugOffsets: sizeof(PyASCIIObject) out of range";
	o->uni_ascii_size = (uint32_t)ascii;
	/* PyCompactUnicodeObject adds utf8_length and utf8 to it (3.12+). */
	o->uni_compact_size = (uint32_t)ascii + 16;
	o->cf_current_frame = -1;
	o->owner_cstack = 3;	/* FRAME_OWNED_BY_CSTACK (3.12, 3.13) */
	o->fr_is_entry = -1;
	/*
	 * The GIL: interp.ceval.gil points to a struct _gil_runtime_state;
	 * its .locked and .last_holder are given as offsets in the
	 * interpreter of its own one (interp._gil, gil_runtime_state).
	 */
	uint64_t is_size = u64at(buf, 48), gil_ptr = u64at(buf, 112), gil = u64at(buf, 120);
	uint64_t locked = u64at(buf, 136), holder = u64at(buf, 144);
	if (gil_ptr + 8 > is_size || gil > locked || gil > holder || locked + 4 > is_size ||
	    holder + 8 > is_size || locked - gil >= MS_PY_OFFSET_MAX ||
	    holder - gil >= MS_PY_OFFSET_MAX || gil_ptr >= MS_PY_OFFSET_MAX ||
	    (locked < holder + 8 && holder < locked + 4))
		return "_Py_DebugOffsets: the GIL's offsets are outside the interpreter";
	o->gil_in_runtime = -1;
	o->gil_ptr_in_interp = (int32_t)gil_ptr;
	o->gil_locked = (int32_t)(locked - gil);
	o->gil_holder = (int32_t)(holder - gil);
	return ms_py_offsets_check(o);
}
