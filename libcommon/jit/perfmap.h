/*
 * The perf map a JIT writes for profilers, /tmp/perf-PID.map (perf's
 * tools/perf/Documentation/jit-interface.txt): one line per function,
 * "START SIZE NAME\n", START and SIZE in hex with or without 0x, NAME the
 * rest of the line (it may hold spaces). CPython 3.12+ under -X perf and
 * node --perf-basic-prof write it.
 *
 * The map is append-only and written while it is read, by a process that
 * may be hostile, so everything here is pure over the bytes given to it and
 * bounded: the parser takes whole lines only and keeps an incomplete last
 * line (at most MS_PERFMAP_LINE_MAX bytes) for the next feed; a longer line
 * is skipped to its newline. The table holds at most MS_PERFMAP_FUNCS_MAX
 * functions, names of at most MS_PERFMAP_NAME_MAX bytes, and gives at most
 * MS_PERFMAP_CODE_MAX bytes of code to the functions, first come first
 * served in line order. Reading the file is perfmapread.c's.
 *
 * Which function an address is in: the latest line whose range holds it
 * (a JIT reuses memory: a later line over earlier functions replaces them
 * there), unless that function was ended by a mapping made over it after
 * its line was read (ms_perfmap_unmap()): its code is gone, and the older
 * functions it replaced do not come back. The answer comes from a sorted
 * index of disjoint ranges (ms_perfmap_index()), rebuilt only when lines
 * came; a look-up is a binary search and allocates nothing.
 */
#ifndef MS_JIT_PERFMAP_H
#define MS_JIT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashindex.h"
#include "util/strpool.h"

/* A line longer than this before its newline is skipped, malformed. */
#define MS_PERFMAP_LINE_MAX 4096u
/* One read (perfmapread.c) takes at most this much of the map. */
#define MS_PERFMAP_READ_MAX (16u << 20)
/* Functions the table holds; later lines are counted (over_max), not kept. */
#define MS_PERFMAP_FUNCS_MAX (4u << 20)
/* Bytes of a name; a longer one is cut at a UTF-8 boundary (names_cut). */
#define MS_PERFMAP_NAME_MAX 1024u
/* Bytes of code all functions together may have read (ms_perfmap_code_fits()). */
#define MS_PERFMAP_CODE_MAX (64ull << 20)

/* A function's flags. */
enum {
	MS_PERFMAP_ENDED = 1u << 0,	/* a mapping was made over it */
	MS_PERFMAP_REPLACED = 1u << 1,	/* a later line took some of its range */
	MS_PERFMAP_CODE_DECIDED = 1u << 2,	/* ms_perfmap_code_fits() answered for it */
	MS_PERFMAP_NO_CODE = 1u << 3,	/* past the code budget: no frames are proved */
};

struct ms_perfmap_func {
	uint64_t start, end;	/* [start, end): start < end, never wraps */
	const char *name;	/* in the table's pool, NUL-terminated, not empty */
	uint32_t line;		/* the map's line, from 1 (saturates at UINT32_MAX) */
	uint32_t flags;		/* MS_PERFMAP_* */
};

/* A range of the index: [start, end) is func's (an id into funcs). */
struct ms_perfmap_seg {
	uint64_t start, end;
	uint32_t func;
};

struct ms_perfmap_counts {
	uint64_t lines;		/* whole lines taken, malformed ones too */
	uint64_t malformed;	/* not START SIZE NAME, zero size, wrapping, too long, a NUL */
	uint64_t too_long;	/* of malformed: over MS_PERFMAP_LINE_MAX */
	uint64_t over_max;	/* good lines past MS_PERFMAP_FUNCS_MAX, not kept */
	uint64_t names_cut;	/* names cut to MS_PERFMAP_NAME_MAX */
	uint64_t replaced;	/* functions a later line took part of (or all) */
	uint64_t ended;		/* functions a mapping ended */
	uint64_t no_code;	/* functions past the code budget */
	uint64_t code_bytes;	/* of the budget, given */
};

struct ms_perfmap {
	/* The parser: the map's bytes [0, consumed) were fed. */
	uint64_t consumed;	/* where the next feed's bytes start in the map */
	uint64_t parsed;	/* just past the last whole line */
	uint32_t carry_len;	/* an incomplete last line, kept */
	bool skipping;		/* in a line over the maximum, to its newline */
	char carry[MS_PERFMAP_LINE_MAX];

	/* The functions, in line order: an id is the line's order. */
	struct ms_perfmap_func *funcs;
	uint32_t n, alloc;
	uint32_t indexed;	/* funcs[0, indexed) are in the index */
	uint32_t code_next;	/* funcs[0, code_next) have their code decided */

	/* The index: disjoint ranges by start, and the rebuild's scratch. */
	struct ms_perfmap_seg *seg, *out, *batch;
	uint32_t n_seg, seg_alloc, out_alloc, batch_alloc;
	uint32_t *ids, *heap;
	uint64_t *visible;
	uint32_t ids_alloc, heap_alloc, visible_alloc;

	/* Names, interned: each distinct name once in the pool. */
	struct ms_strpool pool;
	struct ms_index name_ix;
	const char **names;
	uint32_t *name_lens;
	uint32_t n_names, names_alloc, lens_alloc;

	uint8_t *readbuf;	/* perfmapread.c's, kept */

	struct ms_perfmap_counts c;
};

void ms_perfmap_init(struct ms_perfmap *t);
void ms_perfmap_release(struct ms_perfmap *t);

/*
 * Feed the map's bytes from offset t->consumed on: every whole line in
 * them (and in the kept incomplete line before them) is parsed, the rest
 * kept for the next feed; t->consumed grows by len. Lines seen here are
 * looked up only after ms_perfmap_index(). 0, or -1 after a message when
 * memory runs out (the table is then as it was before that line).
 */
int ms_perfmap_feed(struct ms_perfmap *t, const void *bytes, size_t len);

/* Bring the index up to date with the lines fed. 0, or -1 after a message. */
int ms_perfmap_index(struct ms_perfmap *t);

/*
 * The function that holds addr, from the lines indexed, or NULL: none
 * does, or the one that did was ended. No allocation, O(log n).
 */
const struct ms_perfmap_func *ms_perfmap_find(const struct ms_perfmap *t, uint64_t addr);

/*
 * A mapping was made over [start, end): every function whose line was read
 * before (all fed so far: they are indexed first) and that holds an address
 * of the range as ms_perfmap_find() answers ends, whole; functions from
 * lines fed after stay. 0, or -1 after a message (indexing failed).
 */
int ms_perfmap_unmap(struct ms_perfmap *t, uint64_t start, uint64_t end);

/*
 * Keep one function as a line of the map would: [start, end) named
 * name[0..name_len) (cut to MS_PERFMAP_NAME_MAX as a line's), from map
 * line line, after every function kept so far (so it wins where they
 * overlap once indexed). For a reader of functions that were parsed
 * elsewhere (ms-unwind: MS_REC_JIT_FUNC records); the parser's state is
 * not touched. Returns 1 (its id is t->n - 1); 0 when not kept: an empty
 * or inverted range, an empty name or one holding a NUL (counted
 * malformed), or the table full (counted over_max); -1 after a message
 * when memory runs out.
 */
int ms_perfmap_add(struct ms_perfmap *t, uint64_t start, uint64_t end, const char *name,
		   size_t name_len, uint32_t line);

/*
 * ms_perfmap_unmap(), but a function ends only when ends(ctx, id) says so
 * (NULL: every one): ms-unwind ends only functions whose lines were read
 * before the mapping was made. A function that does not end keeps the
 * range. Returns how many ended, or -1 after a message (indexing failed).
 */
int ms_perfmap_unmap_if(struct ms_perfmap *t, uint64_t start, uint64_t end,
			bool (*ends)(void *ctx, uint32_t id), void *ctx);

/*
 * Whether function id may have its code read: the budget of
 * MS_PERFMAP_CODE_MAX bytes goes to functions in line order, so this
 * decides every function up to id first (an ended one takes nothing and
 * has no code). A function that does not fit is marked MS_PERFMAP_NO_CODE
 * and counted, and takes nothing: a smaller later one may still fit. The
 * answer for a function never changes.
 */
bool ms_perfmap_code_fits(struct ms_perfmap *t, uint32_t id);

/*
 * Whether the map was written by an earlier process with the same pid and
 * must not be read: it was last modified before this process began. Both
 * times in ns of one clock (CLOCK_REALTIME, as stat() gives the mtime);
 * slack_ns is how early the caller's start time may be wrong the other way
 * (a start read from /proc/PID/stat is in clock ticks, and a file system
 * stamps mtimes with a coarse clock): a map modified within slack_ns before
 * the start is read. A map is stale when mtime + slack < start.
 */
bool ms_perfmap_stale(uint64_t map_mtime_ns, uint64_t proc_start_ns, uint64_t slack_ns);

#endif
