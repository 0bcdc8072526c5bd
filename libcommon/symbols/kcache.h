/*
 * A cache of the running kernel's parsed and sorted kallsyms, so that a
 * stage with kernel frames maps a file instead of formatting, reading,
 * parsing and sorting ~120,000 lines of /proc/kallsyms (about a quarter of
 * ms-symbolize's start-up).
 *
 * The file ("kallsyms" under $XDG_CACHE_HOME/microscope, else
 * ~/.cache/microscope) is keyed by what makes the addresses valid: the
 * kernel's build id (/sys/kernel/notes), the boot id (KASLR moves the
 * kernel at every boot) and a hash of the name, size, state and address of
 * every loaded module (/proc/modules). Symbols that appear without a module
 * change (BPF programs, ftrace trampolines) are not covered by the key.
 *
 * The file is input like any other, but a profile names a few hundred of
 * its ~120,000 symbols, so only what holds for the whole file is checked
 * when it is loaded (headers, key, sizes, counts, the names' last NUL): a
 * file that fails is ignored and rewritten. Each symbol is checked when a
 * lookup meets it (ms_symtab_lookup_checked(): string bounds, size, order
 * and no overlap with its neighbours), and so is the fence it searched
 * from; one that fails makes the symbolizer drop the table and read
 * /proc/kallsyms (and rewrite the cache). It is mapped read-only: display
 * names of its symbols are kept elsewhere. It is written atomically
 * (util/publish.h); one that cannot be written only costs the next run the
 * slow read.
 *
 * A binary search of the whole symbol array touched ~10 of its pages per
 * lookup, each a fault (and at times a read) in a fresh process. The
 * fences are a first level over the symbols: a lookup searches them (a few
 * pages, shared by all lookups), then one span of MS_SYMS_SPAN symbols,
 * which the page-aligned array puts on one page.
 *
 * Layout (host byte order, one kernel, one host):
 *   header  the common header of every cache file (util/cachefile.h),
 *           magic "MSKSYMS"; then this cache's own: u32 sizeof(struct
 *           ms_sym), u32 0, key[MS_KCACHE_KEY], u64 n_syms, u64 names_len,
 *           u64 n_fences; then zeros up to offset 4096
 *   syms    n_syms x struct ms_sym (32 bytes, display NULL), at offset 4096
 *   fences  n_fences = ceil(n_syms / MS_SYMS_SPAN) x u64: fence k is the
 *           start of symbol k * MS_SYMS_SPAN
 *   names   names_len bytes, NUL-terminated strings
 * The file's length is exactly the sum of these.
 */
#ifndef MS_SYMBOLS_KCACHE_H
#define MS_SYMBOLS_KCACHE_H

#include <stdint.h>

#include "symbols/symtab.h"
#include "util/cachedir.h"

#define MS_KCACHE_KEY 80

struct ms_kcache_key {
	uint8_t bytes[MS_KCACHE_KEY];
};

/*
 * The running kernel's key from the notes file (NULL: /sys/kernel/notes),
 * boot id file and modules file (NULL: the /proc ones). Returns 0, or -1
 * when a part is unreadable (then there is no cache).
 */
int ms_kcache_key(struct ms_kcache_key *k, const char *notes, const char *boot_id,
		  const char *modules);
/* The cache file's path (malloc'd), or NULL when there is no cache dir. */
char *ms_kcache_path(void);
/*
 * Map the cache at path into t (empty) when its header is valid and has
 * key k (its symbols are checked as they are looked up, see above).
 * Returns 0, or -1 (t untouched) when it is missing, stale or invalid.
 * No message: a bad cache is rebuilt, not reported.
 */
int ms_kcache_load(struct ms_symtab *t, const char *path, const struct ms_kcache_key *k);
/*
 * Write t's tier 0 as the cache at path under key k, creating its
 * directory. Returns 0, or -1 (a message only when writing the file failed).
 */
int ms_kcache_store(const struct ms_symtab *t, const char *path, const struct ms_kcache_key *k);

#endif
