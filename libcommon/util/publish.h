/*
 * Atomic publication of an output file: a reader never sees a partial file
 * under the final name. ms_publish_open() creates "PATH.tmp-XXXXXX" in the
 * same directory; ms_publish_commit() syncs it and renames it over PATH (and
 * syncs the directory); ms_publish_abort() removes it.
 *
 * A PATH that exists and is not a regular file (/dev/null, a FIFO, a
 * terminal) is opened and written in place: renaming over it would replace
 * the device with a file.
 *
 * A cache file (cache set before commit) is not synced: every reader
 * checks a cache before using it, so a crash costs only its rebuild, and
 * the first run does not wait for the disk.
 */
#ifndef MS_UTIL_PUBLISH_H
#define MS_UTIL_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The page cache holds a file written in whole blocks of this size, at
 * offsets that are multiples of it, in large folios that a later reader
 * maps one PMD at a time (the stream writer's policy, stream/writer.c).
 */
#define MS_PAGE_BLOCK (2u << 20)

struct ms_publish {
	char *path;
	char *name;		/* ms_publish_openat(): its name in dirfd's folder */
	char *tmp;		/* NULL when written in place; relative to dirfd */
	int fd;
	int dirfd;		/* AT_FDCWD, or the folder of name and tmp (owned) */
	/*
	 * Set before commit for a cache: it is not synced (see above), and
	 * since later runs map it, a file larger than half a block that the
	 * writer wrote in pieces (libelf, small writes) is written again in
	 * whole MS_PAGE_BLOCKs first, so that it stays in the page cache in
	 * large folios. Best effort: when that fails, the file is published
	 * as written.
	 */
	bool cache;
};

/*
 * Write all len bytes to fd (again after EINTR and short writes): 0, or -1
 * with errno (0 when write returned 0). No message: the caller names the file.
 */
int ms_write_all(int fd, const void *buf, size_t len);

/* Returns the fd to write, or -1 after a message naming the file. */
int ms_publish_open(struct ms_publish *p, const char *path);
/*
 * The same for a file only its owner may read (0600 whatever the umask):
 * one that holds copies of a program's memory, such as a raw stream.
 */
int ms_publish_open_private(struct ms_publish *p, const char *path);
/*
 * The same for the file name in the folder open as dirfd (owned by p from
 * now on, whatever the result), path its name in messages: the temporary
 * and the rename are relative to dirfd, so that no link in the path is
 * followed again, and whatever is at name is replaced, never written in
 * place; the file is private to its user, 0600 (the cache's files,
 * util/cachedir.h, whose clean removes their stale temporaries).
 */
int ms_publish_openat(struct ms_publish *p, int dirfd, const char *name, const char *path);
/* Sync, close and rename; -1 after a message (the temporary is removed). */
int ms_publish_commit(struct ms_publish *p);
/* Close and remove the temporary; PATH is left as it was. */
void ms_publish_abort(struct ms_publish *p);
/*
 * fsync the directory that holds path, so that a rename into it is
 * durable; best effort: a failure here loses nothing written.
 */
void ms_sync_dir_of(const char *path);

#endif
