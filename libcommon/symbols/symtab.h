/*
 * Function symbol tables: what names an address of a module, from an ELF
 * file's .symtab and .dynsym or from the kernel's /proc/kallsyms.
 *
 * A table has three tiers, searched in order; the first that covers the
 * address wins:
 *  0. .symtab functions (STT_FUNC, STT_GNU_IFUNC) with a size;
 *  1. .dynsym functions with a size (what a stripped file keeps);
 *  2. functions of either table without a size, each taken to reach up to
 *     the next function symbol or the end of its section, whichever comes
 *     first: a last resort for hand-written assembly.
 * Symbols without a name, undefined or absolute ones, and those at address
 * 0 are left out. Each tier is sorted by start; of symbols starting at the
 * same address one is kept: global before weak before local, then the
 * smallest name, so the choice does not depend on the file's order.
 *
 * kallsyms has no sizes: each text symbol (types t, T, w, W) reaches up to
 * the next symbol of any type, and all go to tier 0. The last one covers
 * nothing.
 *
 * Addresses are the file's virtual addresses (st_value), or the kernel's
 * absolute ones. Names live in the table's arena; pointers to them stay
 * valid until ms_symtab_release().
 */
#ifndef MS_SYMBOLS_SYMTAB_H
#define MS_SYMBOLS_SYMTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libelf.h>

struct ms_sym {
	uint64_t start, size;
	uint32_t name;		/* offset in the arena */
	uint32_t rank;		/* 0 global, 1 weak, 2 local */
	/*
	 * The name for people (demangled), set by the symbolizer on first use
	 * and owned by it; NULL until then. Not used by this table.
	 */
	const char *display;
};

enum {
	MS_SYMS_SYMTAB,
	MS_SYMS_DYNSYM,
	MS_SYMS_UNSIZED,
	MS_SYMS_TIERS,
};

struct ms_symlist {
	struct ms_sym *syms;
	uint32_t n, alloc;
	/* Mapped: the index in the table's fences (and checks) of this tier's first. */
	uint32_t fence;
};

/*
 * The check of one span of a mapped table (symfile.h): CRC-32C of
 * its symbols, then of its names, which the file keeps in the symbols'
 * order from the first symbol's name up to names_end.
 */
struct ms_span_check {
	uint32_t crc;
	uint32_t names_end;
};

struct ms_symtab {
	struct ms_symlist tier[MS_SYMS_TIERS];
	char *names;
	size_t names_len, names_alloc;
	/*
	 * When not NULL, syms and names live in this read-only mapping
	 * (kcache.h, symcache.h): no symbol's display is read or set. Its
	 * symbols are checked as lookups meet them, not all at load (see
	 * ms_symtab_lookup_checked()).
	 */
	void *map;
	size_t map_len;
	/*
	 * A mapped table's index, in the mapping too: fences[k] is the start
	 * of symbol k * MS_SYMS_SPAN, so that a lookup searches these few
	 * pages, then the one page of symbols of its span instead of ~10
	 * pages across the whole array. Believed no more than the symbols
	 * are: a lookup checks the fence it uses. NULL and 0 otherwise.
	 * The fences of each tier follow those of the tier before (a tier's
	 * first is tier[k].fence).
	 */
	const uint64_t *fences;
	uint32_t n_fences;
	/*
	 * A mapped table (symfile.h) has a check per fence, in the mapping,
	 * and whether each span passed it yet (a byte per fence, malloc'd):
	 * a module's tiers may nest (ELF symbols may), so a lookup searches
	 * back as an unmapped one does, and order alone cannot tell a damaged
	 * size or letter from a true one.
	 */
	const struct ms_span_check *checks;
	uint8_t *checked;
};

/* Symbols per fence of a mapped table: one 4 KiB page of them (kcache.h). */
#define MS_SYMS_SPAN 128

void ms_symtab_init(struct ms_symtab *t);
void ms_symtab_release(struct ms_symtab *t);
/*
 * Fill t from the ELF file's symbol tables. Returns 0 (a file with no
 * symbols gives an empty table), or -1 when the tables are corrupt or
 * memory ran out (no message: the caller records the reason).
 */
int ms_symtab_load_elf(struct ms_symtab *t, Elf *elf);
/*
 * Fill t from kallsyms text read from f. Returns 0, or -1 when nothing
 * usable was read: no text symbols, or every address 0 (hidden by
 * kernel.kptr_restrict).
 */
int ms_symtab_load_kallsyms(struct ms_symtab *t, FILE *f);
/* The symbol that covers addr, or NULL. */
const struct ms_sym *ms_symtab_lookup(const struct ms_symtab *t, uint64_t addr);
/*
 * The same, telling a mapped table's malformed symbols (t->map): a symbol
 * the lookup would answer with, or one it passes over, must have a name
 * inside the names, a size, an end that does not wrap, a rank of 0..2 and
 * must neither overlap nor precede its neighbours (a module table's may
 * nest, but the span it is in must pass its check). When one does not,
 * the answer is NULL and *bad is set (the table is corrupt: read it
 * again); else *bad is false. Tiers are searched in order, as
 * ms_symtab_lookup() does.
 */
const struct ms_sym *ms_symtab_lookup_checked(const struct ms_symtab *t, uint64_t addr,
					      bool *bad);
/*
 * Empty t as ms_symtab_release() does, but leave a mapped table's mapping
 * in place and return it (*len its length) for the caller to unmap later,
 * so that names handed out from it stay valid. NULL for a table in memory
 * (then released).
 */
void *ms_symtab_detach(struct ms_symtab *t, size_t *len);
/* Number of symbols in all tiers. */
uint32_t ms_symtab_count(const struct ms_symtab *t);

static inline const char *ms_symtab_name(const struct ms_symtab *t, const struct ms_sym *s)
{
	return t->names + s->name;
}

#endif
