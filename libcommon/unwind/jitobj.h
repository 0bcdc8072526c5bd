/*
 * ms-unwind's JIT objects: the ELF images a process registered through
 * the GDB JIT interface (MS_REC_JIT_OBJECT records, stream/records.h),
 * each describing code it runs: sections at the addresses the code runs
 * at, call-frame information and symbols.
 *
 * An image comes in chunks, one record each (struct ms_jitobj_asm puts
 * them together, keyed by (pid, entry)): offsets from 0, consecutive and
 * in order, every chunk of one image with the same address and size (its
 * time is its first chunk's). A chunk that does not continue its image, an image cut short by
 * its entry's unregistration or by the stream's end, is a counted problem
 * ("jit-object-broken") and the image is dropped.
 *
 * A whole image is untrusted bytes: ms_jitobj_new() checks it is ELF64,
 * little-endian, x86-64, that its section headers lie within it, that
 * every section with bytes lies within it, that section names lie within
 * .shstrtab, and that its executable sections (SHF_EXECINSTR with bytes,
 * sh_addr and sh_size) neither wrap nor overlap; those are the object's
 * code, and there must be some. Symbols: STT_FUNC entries of .symtab in
 * an executable section, their names within the linked string table and
 * NUL-terminated, their ranges within the section (an ET_REL object's
 * values are offsets in their section, relocated to its sh_addr as LLVM's
 * RuntimeDyld leaves them; other objects' are addresses); a symbol of
 * size 0 reaches the next symbol or the section's end. Its call-frame
 * information (.eh_frame, .debug_frame) is read by dwarf/cfi.h from the
 * image, each section at its sh_addr, so rules are at absolute addresses.
 *
 * An object is immutable once made and shared (counted references): by
 * the processes whose tables hold it (a fork) and by the module the
 * unwinder made for it, which keeps it, its CFI and its names for the
 * unwinder's life (rules and names handed out stay valid).
 *
 * Limits: MS_JITOBJ_CODE_MAX executable sections, MS_JITOBJ_SYMS_MAX
 * symbols, names cut at MS_JITOBJ_NAME_MAX bytes; images of all objects
 * alive together at most MS_JITOBJ_LIVE_MAX bytes (a later one is refused:
 * "jit-objects-max").
 */
#ifndef MS_UNWIND_JITOBJ_H
#define MS_UNWIND_JITOBJ_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

#define MS_JITOBJ_CODE_MAX 1024u
#define MS_JITOBJ_SYMS_MAX (1u << 20)
#define MS_JITOBJ_NAME_MAX 1024u
#define MS_JITOBJ_LIVE_MAX (512ull << 20)
/* Images being put together at once; one more drops the oldest (counted). */
#define MS_JITOBJ_PENDING_MAX 64u

struct ms_jitobj;
struct ms_cfi;

/* One executable section: [start, end). */
struct ms_jitobj_code {
	uint64_t start, end;
};

/*
 * The object of image (len bytes, malloc'd: taken over, freed with the
 * object or at once when refused), registered as entry. NULL when
 * refused, with *why saying why and *code the problem's code, or NULL
 * with *why NULL after a message (out of memory). One reference.
 */
struct ms_jitobj *ms_jitobj_new(uint8_t *image, uint32_t len, uint64_t entry, const char **why,
				const char **code);
void ms_jitobj_ref(struct ms_jitobj *o);
void ms_jitobj_unref(struct ms_jitobj *o);

/* Its code: sorted by start, disjoint, at least one. */
const struct ms_jitobj_code *ms_jitobj_code(const struct ms_jitobj *o, uint32_t *n);
/* Whether pc is in its code. */
bool ms_jitobj_holds(const struct ms_jitobj *o, uint64_t pc);
uint64_t ms_jitobj_entry(const struct ms_jitobj *o);
/* Unique among all objects made by this program: a module's identity. */
uint64_t ms_jitobj_serial(const struct ms_jitobj *o);
/* Whether o is the image len bytes at image registered as entry. */
bool ms_jitobj_is(const struct ms_jitobj *o, uint64_t entry, const uint8_t *image, uint32_t len);
/* The function symbol holding pc (its name, *start its address), or NULL. */
const char *ms_jitobj_symbol(const struct ms_jitobj *o, uint64_t pc, uint64_t *start);
/* Its call-frame information (absolute addresses). */
struct ms_cfi *ms_jitobj_cfi(const struct ms_jitobj *o);
/* The unwinder's module for it (UINT32_MAX until made). */
uint32_t *ms_jitobj_module(struct ms_jitobj *o);

/* Putting images together ------------------------------------------------- */

struct ms_jitobj_asm;
struct ms_jitobj_asm *ms_jitobj_asm_new(void);
void ms_jitobj_asm_free(struct ms_jitobj_asm *a);
/*
 * A chunk (o->size > 0). Returns 1 when it completed its image: *image
 * (malloc'd, o->size bytes) is the caller's, *time its read time; 0 when the image is still
 * coming or the chunk was refused (a problem counted in problems); -1
 * after a message (out of memory).
 */
int ms_jitobj_asm_chunk(struct ms_jitobj_asm *a, const struct ms_jit_object *o,
			struct ms_problems *problems, uint8_t **image, uint64_t *time);
/* (pid, entry) was unregistered: an image of it still coming is cut short. */
void ms_jitobj_asm_cut(struct ms_jitobj_asm *a, uint32_t pid, uint64_t entry,
		       struct ms_problems *problems);
/* The stream ended: every image still coming is cut short. */
void ms_jitobj_asm_end(struct ms_jitobj_asm *a, struct ms_problems *problems);

#endif
