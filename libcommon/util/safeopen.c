/* Opening a regular file someone else named: see safeopen.h. */
#include "util/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int ms_open_dir_below(int dirfd, const char *path)
{
	char part[NAME_MAX + 1];
	const char *p = path;
	int fd, next;

	if (path[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	fd = openat(dirfd, ".", DIR_FLAGS);
	/* One component at a time: O_NOFOLLOW holds for the last one only. */
	while (fd >= 0 && *p) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n > NAME_MAX || (n == 2 && !memcmp(p, "..", 2))) {
			close(fd);
			errno = n > NAME_MAX ? ENAMETOOLONG : EXDEV;
			return -1;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		next = openat(fd, part, DIR_FLAGS);
		close(fd);
		fd = next;
		p += n + (p[n] == '/');
	}
	return fd;
}

/* Refuse fd (closed) for why, with errno err: -1. */
static int refuse(int fd, int err, const char *what, const char **why)
{
	if (fd >= 0)
		close(fd);
	if (why)
		*why = what;
	errno = err;
	return -1;
}

/* A regular file of at most max bytes: else -1 after refuse(). */
static int check(int fd, const struct stat *st, uint64_t max, const char **why)
{
	if (!S_ISREG(st->st_mode))
		return refuse(fd, EINVAL, "not a regular file (a FIFO, a device or a folder)", why);
	if (st->st_size < 0 || (uint64_t)st->st_size > max)
		return refuse(fd, EFBIG, "larger than any file of its kind should be", why);
	return 0;
}

int ms_open_regular(int dirfd, const char *path, int flags, uint64_t max_size, struct stat *st,
		    const char **why)
{
	const char *name = path, *slash;
	struct stat own;
	int dir = dirfd, fd, err, oflags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

	if (!st)
		st = &own;
	if (flags & MS_OPEN_NO_LINKS) {
		if (path[0] == '/')
			return refuse(-1, EXDEV, "not below the folder it should be in", why);
		if ((slash = strrchr(path, '/'))) {
			char *parent = strndup(path, (size_t)(slash - path));

			dir = parent ? ms_open_dir_below(dirfd, parent) : -1;
			err = errno;
			free(parent);
			if (dir < 0)
				return refuse(-1, err, err == ELOOP || err == ENOTDIR ?
					      "below a symbolic link or a file, not a folder" :
					      strerror(err), why);
			name = slash + 1;
		}
		flags |= MS_OPEN_NOFOLLOW;
	}
	if (flags & MS_OPEN_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	/*
	 * What is not a regular file is refused before it is opened: opening
	 * a device can act (a tape rewinds). The fstat below is what counts.
	 */
	if (fstatat(dir, name, st, flags & MS_OPEN_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) == 0) {
		fd = S_ISLNK(st->st_mode) ?
		     refuse(-1, ELOOP, "a symbolic link, which is not followed here", why) :
		     check(-1, st, max_size, why);
		if (fd < 0)
			goto out;
	}
	/* O_NONBLOCK: a FIFO put there since the stat opens at once, then is refused. */
	fd = openat(dir, name, oflags);
	if (fd < 0) {
		err = errno;
		fd = refuse(-1, err, err == ELOOP && (flags & MS_OPEN_NOFOLLOW) ?
			    "a symbolic link, which is not followed here" : strerror(err), why);
		goto out;
	}
	if (fstat(fd, st) < 0) {
		err = errno;
		fd = refuse(fd, err, strerror(err), why);
		goto out;
	}
	if (check(fd, st, max_size, why) < 0) {
		fd = -1;
		goto out;
	}
	/* Reads of a regular file never block anyway; the flag goes for the reader's sake. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
out:
	if (dir != dirfd) {
		err = errno;
		close(dir);
		errno = err;
	}
	return fd;
}
