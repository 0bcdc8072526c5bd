/*
 * microscope's cache directory ($XDG_CACHE_HOME/microscope, else
 * ~/.cache/microscope): the paths of its files, their directories, and a
 * cache file opened or mapped read-only, and its bound by age. The caches
 * themselves (kallsyms, debug copies, symbol tables, CFI rows) each check
 * what they map before use and are written whole with util/publish.h, so
 * any of them may vanish at any time: a reader that has it mapped keeps
 * it, the next one rebuilds it. Their names are in util/cachelayout.h.
 *
 * The folder (the root) is trusted only when it is a folder of the running
 * user's (not a link to one) that neither its group nor others may write:
 * each use opens it with O_NOFOLLOW | O_DIRECTORY, checks that on the open
 * folder, and works relative to that descriptor, so that nothing below it
 * is reached through a link, even one put in the root's place meanwhile.
 * Root running with another user's HOME or XDG_CACHE_HOME (sudo -E) so
 * never reads, writes or cleans a folder that user controls. A root that
 * fails is not used: one warning per process, and no caches for its run.
 *
 * A path given to the functions below that is not in the root (a test's or
 * tool's own file) is used as given, but opened as safely: no FIFO, device
 * or link as the file itself.
 */
#ifndef MS_UTIL_CACHEDIR_H
#define MS_UTIL_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/publish.h"

/*
 * The path (malloc'd) of file name in microscope's cache directory, or
 * NULL when neither variable is set to an absolute path or the folder is
 * refused (see above; warned once).
 */
char *ms_cache_file(const char *name);
/*
 * Create the directories above file path (mode 0700); 0, or -1 when
 * unwritable. For a path in the cache directory it first runs
 * ms_cache_clean() there, and makes the root and the folders below it
 * without following a link.
 */
int ms_cache_mkdir(const char *path);
/*
 * Open the cache file at path read-only when it is a regular file (never
 * a link, a FIFO or a device) of at most max_len bytes: the fd, its status
 * in *st, else -1. No message: a bad cache is rebuilt, not reported.
 */
int ms_cache_open(const char *path, uint64_t max_len, struct stat *st);
/*
 * Map the cache file at path read-only, as ms_cache_open() opens it, when
 * it holds min_len to max_len bytes: the mapping and its length in *len,
 * else NULL. No message.
 */
void *ms_cache_map(const char *path, uint64_t min_len, uint64_t max_len, size_t *len);
/*
 * Start writing the cache file at path (ms_cache_mkdir(), then a
 * temporary beside it, ms_publish_openat()): the fd to write, or -1 (a
 * message only when the temporary cannot be made). Commit or abort with
 * publish.h; whatever is at path is replaced, never written in place.
 */
int ms_cache_publish(struct ms_publish *p, const char *path);

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
 * each regular file of the layout (util/cachelayout.h: cache files in the
 * top and in its debug/ and cfi/ folders, on top's file system) whose later
 * of atime and mtime is older than the maximum unused age, and each
 * publication temporary ("*.tmp-XXXXXX") of one unused for over an hour.
 * Any other name, link or folder is left as it is: the clean removes no
 * folder. top is the root's descriptor, as ms_cache_mkdir() opened it.
 * Costs one fstatat while the stamp is younger than an hour, then a read
 * of the interval's file too. Silent and best effort: nothing is
 * reported, errno is kept.
 */
void ms_cache_clean(int top);

#endif
