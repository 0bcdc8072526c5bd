#include "dwarf/ehframe.h"
#include "dwarf/leb128.h"
#include "util/grow.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* A bounded reader over [p, end): a read past end sets bad and gives 0. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_le(struct rd *r, unsigned int size)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < size) {
		r->bad = true;
		return 0;
	}
	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += size;
	return v;
}

/* A little-endian signed 32-bit value (the table's), whatever the host's order. */
static int32_t le32s(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

static void rd_skip_leb(struct rd *r)
{
	uint64_t v;

	if (r->bad || !ms_uleb(&r->p, r->end, &v))
		r->bad = true;
}

/* The size of a value of a pointer encoding's format, or 0 for one not taken (LEB128s). */
static unsigned int enc_size(uint8_t enc, unsigned int addr_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

/*
 * A pointer of encoding enc at r: absolute, or pc-relative (base is the
 * address of sec's first byte). false for an encoding not taken here.
 */
static bool rd_pointer(struct rd *r, uint8_t enc, unsigned int addr_size, const uint8_t *sec,
		       uint64_t base, uint64_t *out)
{
	unsigned int size = enc_size(enc, addr_size);
	uint64_t at = base + (uint64_t)(r->p - sec), v;

	if (!size || (enc & DW_EH_PE_indirect) ||
	    ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel))
		return false;
	v = rd_le(r, size);
	if ((enc & DW_EH_PE_signed) && size < 8 && (v >> (8 * size - 1)))
		v |= ~(uint64_t)0 << (8 * size);
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += at;
	if (addr_size < 8)
		v &= ((uint64_t)1 << (8 * addr_size)) - 1;
	*out = v;
	return !r->bad;
}

/*
 * The entry whose length word is at off: r set to its body (after the
 * length). false for a length past the section, or one not taken (64-bit
 * DWARF's, the terminator's 0).
 */
static bool entry_at(const struct ms_ehframe *e, uint64_t off, struct rd *r)
{
	uint64_t len;

	if (off >= e->frame_size)
		return false;
	*r = (struct rd){ e->frame + off, e->frame + e->frame_size, false };
	len = rd_le(r, 4);
	if (r->bad || len < 4 || len >= 0xfffffff0 || len > (uint64_t)(r->end - r->p))
		return false;
	r->end = r->p + len;
	return true;
}

/* The address encoding of the CIE at off ('R'; absolute without): false when not taken. */
static bool cie_encoding(const struct ms_ehframe *e, uint64_t off, uint8_t *enc)
{
	struct rd r, a;
	const uint8_t *aug, *nul;
	uint64_t version, aug_len;

	if (!entry_at(e, off, &r) || rd_le(&r, 4) != 0)
		return false;	/* not a CIE */
	version = rd_le(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return false;
	aug = r.p;
	if (!(nul = memchr(r.p, 0, (size_t)(r.end - r.p))))
		return false;
	r.p = nul + 1;
	*enc = DW_EH_PE_absptr;
	if (!*aug)
		return true;
	if (*aug != 'z')
		return false;	/* "eh" and the like: their data's size is unknown */
	if (version == 4)
		rd_le(&r, 2);	/* address and segment selector sizes */
	rd_skip_leb(&r);	/* code alignment */
	rd_skip_leb(&r);	/* data alignment (an SLEB128 ends the same way) */
	if (version == 1)
		rd_le(&r, 1);	/* return address register */
	else
		rd_skip_leb(&r);
	if (r.bad || !ms_uleb(&r.p, r.end, &aug_len) || aug_len > (uint64_t)(r.end - r.p))
		return false;
	a = (struct rd){ r.p, r.p + aug_len, false };
	for (aug++; *aug && !a.bad; aug++) {
		uint8_t pe;

		switch (*aug) {
		case 'R':
			*enc = (uint8_t)rd_le(&a, 1);
			break;
		case 'L':
			rd_le(&a, 1);
			break;
		case 'P':
			/* The personality routine's pointer: only its size matters. */
			pe = (uint8_t)rd_le(&a, 1);
			if (!enc_size(pe, e->addr_size) || (pe & 0x70) == DW_EH_PE_aligned)
				return false;
			rd_le(&a, enc_size(pe, e->addr_size));
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false;
		}
	}
	return !a.bad;
}

/*
 * The FDE whose length word is at off: its range [*lo, *hi). false when
 * the entry is a CIE or not an FDE this reader decodes.
 */
static bool fde_range(const struct ms_ehframe *e, uint64_t off, uint64_t *lo, uint64_t *hi)
{
	struct rd r;
	uint64_t pos, id, range;
	uint8_t enc;

	if (!entry_at(e, off, &r))
		return false;
	pos = (uint64_t)(r.p - e->frame);
	id = rd_le(&r, 4);
	/* The CIE pointer is the distance back from itself to its CIE. */
	if (r.bad || !id || id > pos || !cie_encoding(e, pos - id, &enc) ||
	    !rd_pointer(&r, enc, e->addr_size, e->frame, e->frame_vaddr, lo) ||
	    !rd_pointer(&r, enc & 0x0f, e->addr_size, e->frame, e->frame_vaddr, &range) ||
	    *lo + range < *lo)
		return false;
	*hi = *lo + range;
	return true;
}

void ms_ehframe_init(struct ms_ehframe *e, const uint8_t *hdr, size_t hdr_size,
		     uint64_t hdr_vaddr, const uint8_t *frame, size_t frame_size,
		     uint64_t frame_vaddr, unsigned int addr_size)
{
	struct rd r;
	uint8_t ptr_enc, count_enc, table_enc;
	uint64_t frame_ptr, count;
	int32_t prev = INT32_MIN;

	memset(e, 0, sizeof(*e));
	if (!frame || (addr_size != 4 && addr_size != 8))
		return;
	e->frame = frame;
	e->frame_size = frame_size;
	e->frame_vaddr = frame_vaddr;
	e->addr_size = addr_size;
	if (!hdr)
		return;
	r = (struct rd){ hdr, hdr + hdr_size, false };
	if (rd_le(&r, 1) != 1)
		return;
	ptr_enc = (uint8_t)rd_le(&r, 1);
	count_enc = (uint8_t)rd_le(&r, 1);
	table_enc = (uint8_t)rd_le(&r, 1);
	/* The table's FDE addresses are the ones to read only where .eh_frame is. */
	if (table_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || (count_enc & 0x70) ||
	    !rd_pointer(&r, ptr_enc, addr_size, hdr, hdr_vaddr, &frame_ptr) ||
	    frame_ptr != frame_vaddr ||
	    !rd_pointer(&r, count_enc, addr_size, hdr, hdr_vaddr, &count) ||
	    !count || count > (size_t)(r.end - r.p) / 8)
		return;
	/* A binary search needs the order the linker promises: checked once. */
	for (uint64_t i = 0; i < count; i++) {
		int32_t v = le32s(r.p + 8 * i);

		if (v < prev)
			return;
		prev = v;
	}
	e->table = r.p;
	e->n = (uint32_t)count;
	e->hdr_vaddr = hdr_vaddr;
}

void ms_ehframe_elf(struct ms_ehframe *e, Elf *elf)
{
	Elf_Scn *scn = NULL, *hdr = NULL, *frame = NULL;
	GElf_Shdr hsh = { 0 }, fsh = { 0 }, sh;
	GElf_Ehdr eh;
	Elf_Data *hd = NULL, *fd;
	size_t shstrndx;

	memset(e, 0, sizeof(*e));
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	/* The first of each name that has bytes (a debug file's are NOBITS). */
	while ((scn = elf_nextscn(elf, scn)) && !(hdr && frame)) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!hdr && !strcmp(name, ".eh_frame_hdr")) {
			hdr = scn;
			hsh = sh;
		} else if (!frame && !strcmp(name, ".eh_frame")) {
			frame = scn;
			fsh = sh;
		}
	}
	if (!frame || !(fd = elf_rawdata(frame, NULL)) || !fd->d_buf)
		return;
	if (hdr && (!(hd = elf_rawdata(hdr, NULL)) || !hd->d_buf))
		hd = NULL;
	ms_ehframe_init(e, hd ? hd->d_buf : NULL, hd ? hd->d_size : 0, hsh.sh_addr, fd->d_buf,
			fd->d_size, fsh.sh_addr, eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8);
}

void ms_ehframe_release(struct ms_ehframe *e)
{
	free(e->ranges);
	memset(e, 0, sizeof(*e));
}

static int by_start(const void *a, const void *b)
{
	const struct ms_eh_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every FDE of .eh_frame that covers something, by start: once, when the table is not usable. */
static void walk(struct ms_ehframe *e)
{
	uint64_t off = 0, lo, hi;
	struct rd r;

	e->walked = true;
	/* A length that is not an entry's (0 ends the section) ends the walk. */
	while (entry_at(e, off, &r)) {
		if (fde_range(e, off, &lo, &hi) && hi > lo) {
			if (!ms_reserve((void **)&e->ranges, &e->alloc, (uint64_t)e->n_ranges + 1,
					sizeof(*e->ranges)))
				break;	/* out of memory: the FDEs so far */
			e->ranges[e->n_ranges++] = (struct ms_eh_range){ lo, hi };
		}
		off = (uint64_t)(r.end - e->frame);
	}
	if (e->n_ranges)
		qsort(e->ranges, e->n_ranges, sizeof(*e->ranges), by_start);
}

/* Table entry i's start (k 0) or FDE address (k 1). */
static uint64_t entry(const struct ms_ehframe *e, uint32_t i, int k)
{
	return e->hdr_vaddr + (uint64_t)(int64_t)le32s(e->table + 8 * (size_t)i + 4 * k);
}

/*
 * The number of entries that start at or below addr: the last of them is
 * the candidate, and those of the same start before it (FDEs of no size
 * share a start with the function after them).
 */
static uint32_t below(const struct ms_ehframe *e, uint64_t addr)
{
	uint32_t l = 0, u = e->table ? e->n : e->n_ranges;

	while (l < u) {
		uint32_t mid = l + (u - l) / 2;
		uint64_t s = e->table ? entry(e, mid, 0) : e->ranges[mid].start;

		if (s <= addr)
			l = mid + 1;
		else
			u = mid;
	}
	return l;
}

bool ms_ehframe_start(struct ms_ehframe *e, uint64_t addr, uint64_t *start)
{
	uint32_t i;
	uint64_t first, fde, lo, hi;

	if (!e->frame)
		return false;
	if (!e->table && !e->walked)
		walk(e);
	if (!(i = below(e, addr)))
		return false;
	if (!e->table) {
		/* Sorted by start: the covering one of a start is any with the end past addr. */
		for (first = e->ranges[i - 1].start; i && e->ranges[i - 1].start == first; i--)
			if (addr < e->ranges[i - 1].end) {
				*start = first;
				return true;
			}
		return false;
	}
	for (first = entry(e, i - 1, 0); i && entry(e, i - 1, 0) == first; i--) {
		fde = entry(e, i - 1, 1);
		if (fde >= e->frame_vaddr && fde_range(e, fde - e->frame_vaddr, &lo, &hi) &&
		    lo <= addr && addr < hi) {
			*start = lo;
			return true;
		}
	}
	return false;
}
