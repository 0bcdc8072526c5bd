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
 * The copy is input like any other: it is used only when its trailer, the
 * common header of every cache file kept at the file's end
 * (util/cachefile.h), names this build and holds the CRC-32C of every byte
 * before it, and it is an ELF file whose build id note equals the
 * module's, that holds the bytes of every section its headers list, and
 * whose .debug_info is not compressed; anything else is ignored (and
 * rewritten). libelf ignores the trailer: no section covers it. Everything
 * in it is read through libelf and libdw, which treat it as untrusted as
 * they treat the original; the CRC makes a copy damaged in place a miss,
 * not wrong lines. Checking it costs its every page at each open: for
 * libc6-dbg's 9 MB copy about 3 ms of CPU, half again a warm ms-symbolize
 * run of a short profile (issue 15). A warm run reads none of the copy's
 * DWARF (the unit index answers), so a check at dwarfidx's first read of
 * it would cost those runs nothing; that gate is not built yet.
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
 * writing it first when the cache has none. Returns 0 with f open, or -1
 * (no message): use elf itself. May decompress elf's sections in memory.
 */
int ms_dcache_open(struct ms_elf_file *f, Elf *elf, const uint8_t *bid, uint32_t bid_len);

#endif
