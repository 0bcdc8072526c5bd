/*
 * Function starts from .eh_frame: the initial location of the FDE that
 * covers an address, which names a frame no symbol names
 * (MS_SYM_FDE_ONLY; a stripped binary's static functions).
 *
 * Only the entries' headers are read (length, CIE pointer, the CIE's
 * augmentation for the pointer encoding, initial location and range),
 * never the CFI programs: the start is the function's, the same for every
 * address in it, not that of the CFI row that holds the address.
 *
 * The FDE is found by the sorted table of .eh_frame_hdr when it is one this
 * reader takes (version 1, datarel|sdata4 entries, in order); otherwise,
 * on the first look-up, .eh_frame is walked once with the same header
 * reader into a sorted table of ranges. Both give the same answer: the last
 * FDE (by initial location) that starts at or below the address, if it
 * reaches past it. Taken: little-endian files of 32 or 64-bit addresses,
 * CIEs of version 1, 3 or 4 with no augmentation or a 'z' one of the
 * letters R, P, L, S, B and G, and absolute or pc-relative addresses of 2, 4
 * or 8 bytes. An entry outside that, or malformed, covers nothing; a
 * malformed length ends the walk. Every read is bounded by its section.
 */
#ifndef MS_DWARF_EHFRAME_H
#define MS_DWARF_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct ms_eh_range {
	uint64_t start, end;
};

struct ms_ehframe {
	const uint8_t *frame;	/* .eh_frame; NULL: no FDE covers anything */
	size_t frame_size;
	uint64_t frame_vaddr;
	unsigned int addr_size;	/* of an absolute pointer (DW_EH_PE_absptr): 4 or 8 */
	const uint8_t *table;	/* .eh_frame_hdr's n entries (start, FDE); NULL: walk */
	uint32_t n;
	uint64_t hdr_vaddr;
	struct ms_eh_range *ranges;	/* the walk's, by start (made on first need) */
	uint32_t n_ranges, alloc;
	bool walked;
};

/*
 * Take the sections' bytes and addresses (hdr may be NULL). The table is
 * used when it is valid and sorted, else .eh_frame will be walked.
 */
void ms_ehframe_init(struct ms_ehframe *e, const uint8_t *hdr, size_t hdr_size,
		     uint64_t hdr_vaddr, const uint8_t *frame, size_t frame_size,
		     uint64_t frame_vaddr, unsigned int addr_size);
/* The same from elf's first .eh_frame_hdr and .eh_frame that have bytes. */
void ms_ehframe_elf(struct ms_ehframe *e, Elf *elf);
/* The start of the FDE that covers addr: true and *start, or false for none. */
bool ms_ehframe_start(struct ms_ehframe *e, uint64_t addr, uint64_t *start);
void ms_ehframe_release(struct ms_ehframe *e);

#endif
