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
 * The file is symfile.h's (magic "MSKSYMS", the key below as its bytes,
 * one tier). A profile names a few hundred of its ~120,000 symbols, so
 * only what holds for the whole file is checked when it is loaded; each
 * span of symbols is checked against its CRC-32C when a lookup first meets
 * it, and each symbol and fence a lookup uses for bounds and order
 * (ms_symtab_lookup_checked()). One that fails makes the symbolizer drop
 * the table and read /proc/kallsyms (and rewrite the cache). Checking the
 * whole ~7 MB file at load instead (a CRC of all of it) cost a warm
 * ms-symbolize of a short profile with kernel frames 1.1 ms of CPU, a
 * sixth of its 6.2 ms (issue 15, median of 7 x 30 runs). One that cannot
 * be written only costs the next run the slow read.
 *
 * A binary search of the whole symbol array touched ~10 of its pages per
 * lookup, each a fault (and at times a read) in a fresh process. The
 * fences are a first level over the symbols: a lookup searches them (a few
 * pages, shared by all lookups), then one span of MS_SYMS_SPAN symbols,
 * which the page-aligned array puts on one page.
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
