/*
 * microscope's cache directory ($XDG_CACHE_HOME/microscope, else
 * ~/.cache/microscope): the paths of its files, their directories, and a
 * cache file mapped read-only. The caches themselves (kallsyms, debug
 * copies, symbol tables, CFI rows) each check what they map before use
 * and are written whole with util/publish.h.
 */
#ifndef MS_UTIL_CACHEDIR_H
#define MS_UTIL_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>

/*
 * The path (malloc'd) of file name in microscope's cache directory
 * ($XDG_CACHE_HOME/microscope, else ~/.cache/microscope), or NULL when
 * neither variable is set to an absolute path.
 */
char *ms_cache_file(const char *name);
/* Create the directories above file path (mode 0700); 0, or -1 when unwritable. */
int ms_cache_mkdir(const char *path);
/*
 * Map the cache file at path read-only when it is a regular file of
 * min_len to max_len bytes: the mapping and its length in *len, else NULL.
 * No message: a bad cache is rebuilt, not reported.
 */
void *ms_cache_map(const char *path, uint64_t min_len, uint64_t max_len, size_t *len);

#endif
