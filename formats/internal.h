/*
 * Helpers the converters share: stack paths, a (key, key) -> row map, and
 * the import side's frame keys. Not an API outside formats/.
 */
#ifndef MS_FORMATS_INTERNAL_H
#define MS_FORMATS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/index.h"

/*
 * Frames an importer knows by name only get MS_FRAME_NO_ADDRESS and an
 * address made from this base and a dense ordinal. The base lies in the
 * hole between x86-64's canonical halves, so no real address has it; a
 * hostile file that uses one anyway only makes two frames share a name.
 */
#define MS_IMPORT_KEY_BASE 0x8000000000000000ull

/* The deepest stack in cap (0 when it has none). */
uint32_t ms_stacks_max_depth(const struct ms_capture *cap);
/*
 * The stack nodes of stack, outermost first, into path (room for
 * ms_stacks_max_depth() entries); returns how many. MS_NONE gives 0.
 */
uint32_t ms_stack_nodes(const struct ms_capture *cap, uint32_t stack, uint32_t *path);

struct ms_funcs;
/* Room for the longest path of functions ms_stack_funcs() can give. */
uint32_t ms_funcs_max_path(const struct ms_capture *cap, const struct ms_funcs *funcs);
/*
 * The functions of stack outermost first, each frame expanded to its
 * inline chain (analysis/analysis.h), into path; nodes is scratch room for
 * ms_stacks_max_depth() entries. Returns how many.
 */
uint32_t ms_stack_funcs(const struct ms_capture *cap, const struct ms_funcs *funcs,
			uint32_t stack, uint32_t *nodes, uint32_t *path);

/*
 * A map from a pair of 32-bit keys to dense rows 0..n-1 in order of first
 * insertion, so that row order never depends on hashing.
 */
struct ms_pairmap {
	struct ms_index ix;
	uint32_t (*keys)[2];
	uint32_t n, alloc;
};
#define MS_PAIRMAP_INIT { MS_INDEX_INIT, NULL, 0, 0 }
/* The row of (a, b), or MS_NONE. */
uint32_t ms_pairmap_find(const struct ms_pairmap *m, uint32_t a, uint32_t b);
/* The row of (a, b), added when new (*added says so); MS_NONE when out of memory (after a message). */
uint32_t ms_pairmap_get(struct ms_pairmap *m, uint32_t a, uint32_t b, bool *added);
void ms_pairmap_release(struct ms_pairmap *m);

/* Grow *arr (of *alloc elements of size sz) to hold n + 1; -1 after a message. */
int ms_grow(void *arr, uint32_t *alloc, uint32_t n, size_t sz);
#define MS_GROW(arr, n, alloc) ms_grow(&(arr), &(alloc), (n), sizeof(*(arr)))

/* The header an importer names itself with in the capture's producers. */
void ms_import_header(struct ms_header *h, const char *producer, const char *format);

/* ms_str of a NUL-terminated string. */
struct ms_str ms_str_of(const char *s);

#endif
