/*
 * The layout of microscope's cache folder: every name in it, in one place.
 * Writers make their names here (ms_cache_path()); the clean
 * (ms_cache_clean(), cachedir.h) removes only names that match here, so
 * that a folder that is not microscope's (a link, a mistake, a setting)
 * loses nothing of its own.
 *
 *   kallsyms                the running kernel's sorted symbols (symbols/kcache.h)
 *   debug/ID.debug          a debug file with its sections inflated (elf/dcache.h)
 *   debug/ID.syms           a module's sorted symbol table (symbols/symcache.h)
 *   debug/ID.units          a module's list of DWARF units (dwarf/dwarfidx.c)
 *   debug/ID.index          a module's indexed DWARF units (dwarf/unitcache.c)
 *   cfi/ID.rows             a module's call-frame rows (dwarf/cfi.c)
 *   NAME.tmp-XXXXXX         a file above being written (util/publish.h)
 *   last_clean, clean_interval_s, max_unused_age_s
 *                           the clean's state and settings (cachedir.h), kept
 *
 * ID is a build id in lowercase hex, 1 to MS_CACHE_ID_MAX bytes; XXXXXX six
 * letters or digits. The folders debug/ and cfi/ are the only ones.
 */
#ifndef MS_UTIL_CACHELAYOUT_H
#define MS_UTIL_CACHELAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* The longest build id a name holds (GNU ld's sha1 is 20 bytes). */
#define MS_CACHE_ID_MAX 64

enum ms_cache_kind {
	MS_CACHE_KALLSYMS,
	MS_CACHE_DEBUG_COPY,
	MS_CACHE_SYMS,
	MS_CACHE_UNITS,
	MS_CACHE_INDEX,
	MS_CACHE_CFI_ROWS,
	MS_CACHE_KINDS,
};

/*
 * The path (malloc'd) of the cache file of kind for build id id (id_len
 * bytes; none for MS_CACHE_KALLSYMS), or NULL: no usable cache folder
 * (ms_cache_file(), cachedir.h), or no build id, or one too long.
 */
char *ms_cache_path(enum ms_cache_kind kind, const uint8_t *id, uint32_t id_len);

/* Whether folder name at the cache's top is one of the layout's. */
bool ms_cache_dir_ours(const char *name);
/*
 * Whether name, a file in the cache's folder dir ("" for the top, else a
 * folder ms_cache_dir_ours() accepts), is one the layout makes: a cache
 * file, or (*tmp set) the temporary of one being written. The clean's
 * state and settings are not (they are kept, not cleaned).
 */
bool ms_cache_name_ours(const char *dir, const char *name, bool *tmp);

#endif
