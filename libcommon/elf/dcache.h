/*
 * Decompressed copies of debug files, cached by build id.
 *
 * libdw inflates every compressed debug section of a file when it opens
 * the file's DWARF (.debug_info, .debug_line, .debug_loclists, ... whether
 * a lookup needs them or not): for Debian's libc6-dbg that is ~10 MB of
 * zlib output, over half of ms-symbolize's start-up. So the first time a
 * module's DWARF is needed from a file with compressed debug sections, a
 * copy with those sections decompressed is written to
 * $XDG_CACHE_HOME/microscope/debug/BUILDID.debug (else
 * ~/.cache/microscope/debug/...), atomically (util/publish.h), and every
 * later run maps the copy instead.
 *
 * Compressed sections the symbolizer never reads (location lists, macros)
 * are written empty (SHT_NOBITS, absent to libdw) rather than inflated.
 *
 * The copy is input like any other: it is used only when it is an ELF
 * file whose build id note equals the module's, that holds the bytes of
 * every section its headers list, and whose .debug_info is not compressed;
 * anything else is ignored (and rewritten). Everything in it is read
 * through libelf and libdw, which treat it as untrusted as they treat the
 * original. Its trailer, the common header of every cache file kept at the
 * file's end (util/cachefile.h; libelf ignores it: no section covers it),
 * names this build and holds the CRC-32C of every byte before it, so that
 * a copy damaged in place is a miss, not wrong lines: ms_dcache_sealed().
 * That check costs every page of the copy (libc6-dbg's 9 MB: about 3 ms,
 * half again a warm ms-symbolize run of a short profile), and a warm run
 * reads none of the copy's DWARF (the unit caches answer), so the caller
 * makes it the gate of the copy's index (dwarfidx.h): asked at the first
 * read of the copy's DWARF, never when the caches answer.
 */
#ifndef MS_ELF_DCACHE_H
#define MS_ELF_DCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include "elf/elffile.h"

/* Whether elf's .debug_info is compressed (SHF_COMPRESSED). */
bool ms_elf_debug_compressed(Elf *elf);

/*
 * Open the decompressed copy of elf (build id bid, bid_len > 0) into *f,
 * writing it first when the cache has none, or always when fresh. Returns
 * 0 with f open, or -1 (no message): use elf itself. May decompress elf's
 * sections in memory.
 */
int ms_dcache_open(struct ms_elf_file *f, Elf *elf, const uint8_t *bid, uint32_t bid_len,
		   bool fresh);
/*
 * Whether the copy (the elf of ms_dcache_open()'s file) is as written: its trailer names
 * this build and its CRC holds. Not checked by ms_dcache_open() (see
 * above): a copy that fails is opened again with fresh (written anew).
 */
bool ms_dcache_sealed(Elf *copy);

#endif
