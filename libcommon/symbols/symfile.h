/*
 * The file both symbol caches share: a sorted symbol table (symtab.h)
 * written so that a later run maps it and reads only the pages its lookups
 * need: the running kernel's (kcache.h) and each module's (symcache.h).
 * Each cache names its kind (magic, version) and gives a key, bytes that
 * say what the table was read from; a file is used only with the same.
 *
 * Only what holds for the whole file is checked when it is loaded: the
 * common header (util/cachefile.h) and this file's own header against the
 * CRC the common header keeps of it, the key, sizes and counts, the names'
 * last NUL. The body is not checked whole: the kernel's table is ~7 MB, of
 * which a profile's lookups read a few pages, and checking it all cost a
 * sixth of a short ms-symbolize run (see kcache.h). Instead
 * each span of MS_SYMS_SPAN symbols has a CRC-32C of its symbols and their
 * names, checked when a lookup first meets the span, and a lookup checks
 * the fence it searched from and every symbol it reads or passes
 * (ms_symtab_lookup_checked()): a damaged byte makes the table bad, never
 * an answer wrong. A table found bad is dropped by its user for the files
 * it came from (and written again). The file is mapped read-only: display
 * names of its symbols are kept elsewhere. It is written atomically
 * (util/cachedir.h, ms_cache_publish()).
 *
 * Layout (host byte order, one host):
 *   header  the common header of every cache file (util/cachefile.h);
 *           then this file's own: u32 sizeof(struct ms_sym), u32
 *           MS_SYMS_SPAN, u32 key_len, u32 0, key[MS_SYMFILE_KEY_MAX]
 *           (key_len bytes, zeros after), u64 n[MS_SYMS_TIERS], u64
 *           n_fences, u64 names_len; then zeros up to offset 4096
 *   syms    each tier's n[k] x struct ms_sym (32 bytes, display NULL),
 *           tier 0 at offset 4096, each tier starting on a 4096 boundary
 *           (zeros between), so that each span of MS_SYMS_SPAN is a page
 *   fences  each tier's ceil(n[k] / MS_SYMS_SPAN) x u64, tier after tier:
 *           fence j is the start of the tier's symbol j * MS_SYMS_SPAN
 *   checks  one struct ms_span_check (symtab.h) per fence, in the same order
 *   names   names_len bytes of NUL-terminated strings, each symbol's own,
 *           in the order of the symbols (tier after tier), so that a
 *           span's names are one run: from its first symbol's name up to
 *           its check's names_end
 * The file's length is exactly the sum of these.
 */
#ifndef MS_SYMBOLS_SYMFILE_H
#define MS_SYMBOLS_SYMFILE_H

#include <stdint.h>

#include "symbols/symtab.h"

/* The longest key a cache gives. */
#define MS_SYMFILE_KEY_MAX 96

/* A cache's kind: the common header's magic and its format's version. */
struct ms_symfile_kind {
	const char *magic;
	uint32_t version;
};

/*
 * Map the file at path into t (empty) when it is of kind and has the key
 * (key_len bytes). Returns 0, or -1 (t untouched) when it is missing,
 * stale or invalid. No message: a bad cache is rebuilt, not reported.
 */
int ms_symfile_load(struct ms_symtab *t, const char *path, const struct ms_symfile_kind *kind,
		    const void *key, uint32_t key_len);
/*
 * Write t (a table in memory with symbols) as the file at path, of kind
 * and under the key, creating its directory. Returns 0, or -1 (a warning
 * only when writing the file failed).
 */
int ms_symfile_store(const struct ms_symtab *t, const char *path,
		     const struct ms_symfile_kind *kind, const void *key, uint32_t key_len);

#endif
