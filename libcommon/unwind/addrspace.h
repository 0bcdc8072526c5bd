/*
 * A process's executable address space as the mapping records describe it:
 * which code was mapped where at the time of the record being processed.
 *
 * Invariants: maps[] is sorted by start and the ranges [start, end) are
 * disjoint and non-empty. A new mapping replaces whatever it overlaps (as
 * mmap(MAP_FIXED) and munmap do): a mapping partly covered is trimmed, one
 * covered in its middle is split in two, and each piece keeps the file
 * offset its first byte has (pgoff moves with start).
 *
 * Lookup is a binary search with the last hit cached: consecutive samples
 * tend to land in the same mapping.
 *
 * generation changes with every change of the space, so that caches built
 * over it (the DWARF unwinder's PC cache) can tell they are stale. It is
 * unique among all spaces of the program (one counter), so a cache shared
 * by several processes keys on (generation, address). A space made with
 * MS_ADDRSPACE_INIT has generation 0 until its first change.
 *
 * Memory: the array grows by doubling and is reused; ms_addrspace_clear()
 * keeps it. ms_addrspace_release() frees it.
 */
#ifndef MS_UNWIND_ADDRSPACE_H
#define MS_UNWIND_ADDRSPACE_H

#include <stdint.h>

struct ms_mapping {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint32_t ref;		/* the owner's tag (ms-unwind: a file entry) */
};

struct ms_addrspace {
	struct ms_mapping *maps;
	uint32_t n, alloc;
	uint32_t last;		/* index of the last hit, may be >= n */
	uint64_t generation;
};

#define MS_ADDRSPACE_INIT { 0 }

void ms_addrspace_init(struct ms_addrspace *as);
void ms_addrspace_release(struct ms_addrspace *as);
/*
 * A new generation without a change of mappings: what the space answers
 * through its owner changed (ms-unwind: the process's JIT functions).
 */
void ms_addrspace_touch(struct ms_addrspace *as);
/* Forget every mapping (exec); keeps the storage. */
void ms_addrspace_clear(struct ms_addrspace *as);
/* Make dst a copy of src (fork). Returns 0, or -1 after a message. */
int ms_addrspace_copy(struct ms_addrspace *dst, const struct ms_addrspace *src);
/*
 * Map [start, end) at file offset pgoff with tag ref, replacing what it
 * overlaps. An empty or inverted range is ignored. Returns 0, or -1 after a
 * message (out of memory).
 */
int ms_addrspace_insert(struct ms_addrspace *as, uint64_t start, uint64_t end,
			uint64_t pgoff, uint32_t ref);
/* Unmap [start, end): what it overlaps is trimmed, split or dropped. */
int ms_addrspace_remove(struct ms_addrspace *as, uint64_t start, uint64_t end);
/* The mapping that holds addr, or NULL. */
const struct ms_mapping *ms_addrspace_find(struct ms_addrspace *as, uint64_t addr);

#endif
