/*
 * Opening a file that someone else named: a path from a stream, from a
 * debug directory, from the cache folder. Such a path may name a FIFO
 * (open() blocks until a writer comes, forever), a device, a folder, or
 * a link to any of them, or a file far larger than anything sane.
 *
 * ms_open_regular() is the one way libcommon opens such a file for
 * reading: non-blocking (a FIFO cannot hang the open), optionally without
 * following a link, fstat'ed, and refused unless it is a regular file of
 * at most max_size bytes; then blocking again, for ordinary reads.
 * Files in /proc and /sys, and the stream a stage is given on its command
 * line (a pipe there is legitimate), are not opened this way.
 */
#ifndef MS_UTIL_SAFEOPEN_H
#define MS_UTIL_SAFEOPEN_H

#include <stdint.h>
#include <sys/stat.h>

enum {
	/* The last component of path must not be a symbolic link. */
	MS_OPEN_NOFOLLOW = 1 << 0,
	/*
	 * No component of path may be a symbolic link, and path must be
	 * relative (below dirfd): for the cache folder, whose layout has none.
	 */
	MS_OPEN_NO_LINKS = 1 << 1,
};

/*
 * Open path (relative to dirfd, or AT_FDCWD) read-only and close-on-exec,
 * as flags say, when it is a regular file of at most max_size bytes. The
 * fd, its status in *st (st may be NULL), or -1 with errno set and *why
 * (why may be NULL) a phrase for a message: "cannot be opened (...)",
 * "is a symbolic link", "is not a regular file (a FIFO, a device or a
 * folder)", "is larger than N bytes". No message is printed.
 */
int ms_open_regular(int dirfd, const char *path, int flags, uint64_t max_size, struct stat *st,
		    const char **why);

/*
 * Open folder path below dirfd (relative, no component a link), for
 * working relative to it: the fd, or -1 with errno. "" or "." is dirfd's
 * own folder, opened again.
 */
int ms_open_dir_below(int dirfd, const char *path);

#endif
