/*
 * The GDB JIT interface as ms-collect reads it (GDB's manual, "JIT
 * Compilation Interface"), the pure part: a process that holds
 * __jit_debug_descriptor lists the ELF objects it registered,
 *
 *   struct jit_descriptor { uint32_t version; uint32_t action_flag;
 *                           uint64_t relevant_entry; uint64_t first_entry; };
 *   struct jit_code_entry { uint64_t next, prev, symfile_addr, symfile_size; };
 *
 * each object an ELF image whose sections lie at the addresses its code
 * runs at. Everything here works on bytes given (or read through a reader
 * the caller gives), so it is unit-tested over fake memory; the process's
 * memory, its files and the records are recordergdb.h's.
 *
 * The target writes all of it: every pointer, size and header is hostile.
 * The walk is bounded (MS_GDBJIT_WALK_MAX entries, a cycle stops it), an
 * image is only sanity-checked (ELF64, little-endian, x86-64, section
 * headers inside it): ms-unwind validates it in full.
 */
#ifndef MS_JIT_GDBJIT_H
#define MS_JIT_GDBJIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elffile.h"

#define MS_GDBJIT_SYMBOL "__jit_debug_descriptor"
#define MS_GDBJIT_DESC_SIZE 24
#define MS_GDBJIT_ENTRY_SIZE 32
/* Entries one walk follows at most: past them the list is not read on. */
#define MS_GDBJIT_WALK_MAX 65536u

struct ms_gdbjit_desc {
	uint32_t version;	/* 1 is the only one GDB knows */
	uint32_t action;	/* 0 none, 1 registered, 2 unregistered */
	uint64_t relevant, first;
};

/* The descriptor's 24 bytes, as the target's (little-endian) layout has them. */
void ms_gdbjit_desc_parse(const uint8_t b[MS_GDBJIT_DESC_SIZE], struct ms_gdbjit_desc *d);

/* One registration: the entry's address (its identity) and its image. */
struct ms_gdbjit_entry {
	uint64_t entry, addr, size;
};

/*
 * Read len bytes of the target at addr into buf: the bytes read (all of
 * them, or the call failed), or -1 with errno.
 */
typedef long (*ms_gdbjit_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* How a walk ended. */
enum ms_gdbjit_walk_end {
	MS_GDBJIT_WALK_DONE = 0,	/* at a NULL next: every entry listed */
	MS_GDBJIT_WALK_UNREADABLE,	/* an entry could not be read (errno kept in err) */
	MS_GDBJIT_WALK_CYCLE,		/* an entry came again */
	MS_GDBJIT_WALK_MAX_REACHED,	/* MS_GDBJIT_WALK_MAX entries and more */
	MS_GDBJIT_WALK_MISALIGNED,	/* an entry pointer not 8-byte aligned */
};

/* A walk's result and buffers, reused from walk to walk (per read, never per sample). */
struct ms_gdbjit_walk {
	struct ms_gdbjit_entry *e;	/* in list order */
	uint32_t n, alloc;
	enum ms_gdbjit_walk_end end;
	uint64_t end_at;	/* the entry address the walk stopped at (not DONE) */
	int err;
	/* Open-addressing set of the entry addresses seen (cycle check). */
	uint64_t *seen;
	uint32_t seen_cap;
};

void ms_gdbjit_walk_init(struct ms_gdbjit_walk *w);
void ms_gdbjit_walk_release(struct ms_gdbjit_walk *w);

/*
 * Follow the list from first (the descriptor's first_entry; 0: empty)
 * through read, appending each entry to w (emptied first), at most max
 * (<= MS_GDBJIT_WALK_MAX; 0 means MS_GDBJIT_WALK_MAX). w->end says why
 * it stopped: only DONE means that w holds the whole list. 0, or -1
 * after a message (out of memory).
 */
int ms_gdbjit_walk(struct ms_gdbjit_walk *w, uint64_t first, uint32_t max,
		   ms_gdbjit_read_fn read, void *ctx);

/*
 * Whether img[0, len) looks like a registered object: ELF64, little-endian,
 * x86-64, its section header table inside it. NULL, or why not (a
 * phrase). A sanity check, not a validation.
 */
const char *ms_gdbjit_image_wrong(const uint8_t *img, size_t len);

struct ms_gdbjit_range {
	uint64_t start, end;	/* [start, end) */
};

/*
 * The ranges of img's executable sections (SHF_EXECINSTR, not empty, not
 * wrapping: sh_addr, sh_size), sorted and with touching or overlapping
 * ones merged, into out (at most max; the count found may exceed max: the
 * return is the count of merged ranges written). -1 when the image is
 * wrong (ms_gdbjit_image_wrong()).
 */
int ms_gdbjit_exec_ranges(const uint8_t *img, size_t len, struct ms_gdbjit_range *out,
			  uint32_t max);

/*
 * The load bias of a module mapped at start from file offset pgoff: what
 * is added to its symbols' values (virtual addresses) to get where they
 * are. The PT_LOAD segment whose page-aligned file range holds pgoff says
 * which virtual address start is. False when none holds it.
 */
bool ms_gdbjit_bias(const struct ms_elf_load *loads, uint32_t n, uint64_t start, uint64_t pgoff,
		    uint64_t page, uint64_t *bias);

/*
 * What changed between the entries shipped (old, sorted by entry) and a
 * walk's (now, any order: sorted here in place). Calls gone(ctx, old
 * entry) for each shipped entry not listed with its image (only when
 * complete: a walk that stopped early says nothing of the rest), then
 * added(ctx, now entry) for each listed entry not shipped with the same
 * image, kept(ctx, old index) for each listed with the same image, in
 * entry order. An entry whose image changed is gone, then added.
 */
struct ms_gdbjit_diff_fns {
	void (*gone)(void *ctx, const struct ms_gdbjit_entry *e);
	void (*added)(void *ctx, const struct ms_gdbjit_entry *e);
	void (*kept)(void *ctx, uint32_t old_index);
};
void ms_gdbjit_diff(const struct ms_gdbjit_entry *old, uint32_t n_old,
		    struct ms_gdbjit_entry *now, uint32_t n_now, bool complete,
		    const struct ms_gdbjit_diff_fns *fns, void *ctx);

#endif
