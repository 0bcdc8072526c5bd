/*
 * The code objects of Python processes as PY_CODE records named them
 * (stream/records.h), and the interpreted frames they give: a walker's
 * frame (pid, code, stamp, instr) becomes a key, dense from 1 per stream,
 * of its (file, qualified name, line, first line of the function), so
 * that functions of one name stay apart and one line of one function is
 * one frame whichever instruction of it ran.
 *
 * A frame's line: offset = instr - code_start, looked up in the code's
 * locations table (python/pyparse.h); an instruction without a line, or
 * one the table does not reach or describe, is line 0 (the last two
 * counted). A code that no record named, or one named unreadable or
 * invalid, gives the one key "[unknown code]"; a no-lines code, line 0.
 *
 * The first record for (pid, code, stamp) stands for the stream's life,
 * as the contract says. Memory: codes, their strings and tables are kept
 * up to MS_PYCODE_BYTES_MAX bytes (past it a code is refused, counted,
 * and its frames unknown); the frame cache (pid, code, stamp, instr) ->
 * key up to MS_PYCODE_CACHE_MAX entries (past it keys are computed each
 * time). Nothing is allocated per frame once its key and its cache entry
 * exist.
 */
#ifndef MS_PYTHON_PYCODE_H
#define MS_PYTHON_PYCODE_H
#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

#define MS_PYCODE_BYTES_MAX (256u << 20)
#define MS_PYCODE_CACHE_MAX (1u << 22)

/* The frame name of every frame whose code is not known. */
#define MS_PYCODE_UNKNOWN "[unknown code]"

struct ms_pycode;

struct ms_pycode_stats {
	uint64_t codes;			/* kept */
	uint64_t codes_again;		/* a later record for a kept (pid, code, stamp): ignored */
	uint64_t codes_refused;		/* past MS_PYCODE_BYTES_MAX */
	uint64_t keys;			/* interpreted frames given a key */
	uint64_t unknown_frames;	/* frames of no known code (each time) */
	uint64_t bad_lines;		/* an instruction the table does not reach or describe */
	uint64_t cache_hits, cache_misses;
};

struct ms_pycode *ms_pycode_new(void);
void ms_pycode_free(struct ms_pycode *t);

/*
 * A PY_CODE record (unpacked): kept unless its (pid, code, stamp) was.
 * Returns 1 kept, 0 not (kept before, or refused: counted), -1 after a
 * message (out of memory).
 */
int ms_pycode_add(struct ms_pycode *t, const struct ms_py_code *c);

/*
 * The key of a frame of process pid at instr of (code, stamp); *is_new
 * is set the first time a key is given out (its FRAME record is then
 * due). Returns the key (>= 1), or 0 after a message (out of memory).
 */
uint64_t ms_pycode_key(struct ms_pycode *t, uint32_t pid, uint64_t code, uint64_t stamp,
		       uint64_t instr, bool *is_new);

/*
 * The FRAME record of key in module: name the qualified name, one line
 * [qualname, "", file, line, firstlineno], reason MS_SYM_OK; the unknown
 * code's: its name, no line, MS_SYM_NO_SYMBOL. Strings borrow from t for
 * its life. false for a key never given out.
 */
bool ms_pycode_frame(const struct ms_pycode *t, uint64_t key, uint32_t module,
		     struct ms_frame *out);

const struct ms_pycode_stats *ms_pycode_stats(const struct ms_pycode *t);

#endif
