/*
 * microscope's cache directory ($XDG_CACHE_HOME/microscope, else
 * ~/.cache/microscope): the paths of its files, their directories, and a
 * cache file mapped read-only, and its bound by age. The caches themselves
 * (kallsyms, debug copies, symbol tables, CFI rows) each check what they
 * map before use and are written whole with util/publish.h, so any of
 * them may vanish at any time: a reader that has it mapped keeps it, the
 * next one rebuilds it.
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
/*
 * Create the directories above file path (mode 0700); 0, or -1 when
 * unwritable. Every cache writer calls it before publishing: for a path in
 * the cache directory it first runs ms_cache_clean() on the directory.
 */
int ms_cache_mkdir(const char *path);
/*
 * Map the cache file at path read-only when it is a regular file of
 * min_len to max_len bytes: the mapping and its length in *len, else NULL.
 * No message: a bad cache is rebuilt, not reported.
 */
void *ms_cache_map(const char *path, uint64_t min_len, uint64_t max_len, size_t *len);

/*
 * The cache's bound, as debuginfod's client bounds its own: files in the
 * cache directory top that hold its state, not cached data.
 *
 * MS_CACHE_STAMP's mtime is the time of the last clean. A missing stamp is
 * created (a new cache, or one from before cleaning) and no clean is done:
 * the first comes one interval later. A stamp more than an interval ahead
 * of the clock (the clock was set back) is due; one a little ahead (another
 * host's clock) is not.
 *
 * MS_CACHE_CLEAN_INTERVAL and MS_CACHE_MAX_UNUSED_AGE, when present, each
 * hold a decimal number of seconds; a missing or unparsable one means the
 * default: a clean at most once a day (never more than once an hour,
 * whatever the file says) removing the files unused for over a week.
 */
#define MS_CACHE_STAMP			"last_clean"
#define MS_CACHE_CLEAN_INTERVAL		"clean_interval_s"
#define MS_CACHE_MAX_UNUSED_AGE		"max_unused_age_s"

/*
 * When the stamp is older than the clean interval: touch it, then remove
 * each regular file in top and the folders below it (to a small depth, on
 * top's file system) whose later of atime and mtime is older than the
 * maximum unused age, and each publication temporary ("*.tmp-XXXXXX") of
 * util/publish.h unused for over an hour; then each folder left empty.
 * Symbolic links are neither followed nor removed (top itself may be one);
 * the stamp and settings are kept. Costs one lstat while the stamp is
 * younger than an hour, then a read of the interval's file too. Silent and
 * best effort: nothing is reported, errno is kept.
 */
void ms_cache_clean(const char *top);

#endif
