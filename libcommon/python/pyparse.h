/*
 * The pure parts of reading CPython: the 3.11+ locations table, unicode
 * objects' kinds and data, and _Py_DebugOffsets. Each works on bytes the
 * caller read from the process, checks every length before it reads, and
 * is tested on hand-made bytes (tests/unit/pyparse-test.c).
 */
#ifndef MS_PYTHON_PYPARSE_H
#define MS_PYTHON_PYPARSE_H
#include <stddef.h>
#include <stdint.h>
#include "python/layout.h"

/* The results of ms_py_linetable_line(). */
enum ms_py_line {
	MS_PY_LINE_OK = 0,	/* *line is the line */
	MS_PY_LINE_NONE,	/* the instruction has no line (a "no location" entry) */
	MS_PY_LINE_PAST,	/* the table ends before the instruction */
	MS_PY_LINE_BAD,		/* the table is malformed */
};

/*
 * The line of the instruction at byte offset addrq in a code object whose
 * co_linetable is tab[0..len) and whose first line is firstlineno, as
 * PyCode_Addr2Line computes it (Objects/locations.md): entries of a first
 * byte 1CCCCLLL (code C, L+1 code units of 2 bytes) and varints of 6-bit
 * chunks (0x40: more follow); code 15 no location, 14 long form, 13 no
 * columns (signed varint line delta), 10-12 one line form (delta C-10,
 * two column bytes), 0-9 short form (one byte). A negative addrq is the
 * first line (a frame that has not started).
 */
enum ms_py_line ms_py_linetable_line(const uint8_t *tab, size_t len, int firstlineno,
				     int64_t addrq, int *line);

/* The kinds of a compact unicode object's data. */
enum ms_py_ukind { MS_PY_U1 = 1, MS_PY_U2 = 2, MS_PY_U4 = 4 };

/*
 * From a unicode object's state word (PyASCIIObject.state: interned:2,
 * kind:3, compact:1, ascii:1), where its data starts in the object (the
 * layout's ascii or compact size) and its kind. Returns 0, or -1 for a
 * state this reader does not read (not compact, a kind not 1, 2 or 4, an
 * ASCII string of another kind).
 */
int ms_py_unicode_data(const struct ms_py_offsets *o, uint32_t state, uint32_t *data_off,
		       enum ms_py_ukind *kind);

/*
 * Decode n characters of kind at data (n * kind bytes) into UTF-8 at out
 * (cap bytes, NUL terminated). Code points above U+10FFFF, and surrogates,
 * which UTF-8 cannot carry, become U+FFFD. Returns the bytes written, or
 * -1 when out is too small.
 */
int ms_py_unicode_utf8(enum ms_py_ukind kind, const uint8_t *data, size_t n, char *out,
		       size_t cap);

/* The bytes of _Py_DebugOffsets read (3.13: 584). */
#define MS_PY_DEBUG_OFFSETS_READ 584u

/*
 * Parse the _Py_DebugOffsets at the start of _PyRuntime (buf, len bytes
 * read from the process) of an interpreter whose Py_Version is
 * version_hex: the cookie "xdebugpy", the version equal to Py_Version,
 * free_threaded 0 (a free-threaded build's objects are laid out
 * otherwise), every offset inside its structure's size. Fills o; returns
 * NULL, or what is wrong.
 */
const char *ms_py_debug_offsets_parse(const uint8_t *buf, size_t len, uint32_t version_hex,
				      struct ms_py_offsets *o);

#endif
