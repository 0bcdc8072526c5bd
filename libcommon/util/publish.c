#include "util/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"

int ms_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = 0;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void release(struct ms_publish *p)
{
	if (p->dirfd >= 0)
		close(p->dirfd);
	free(p->path);
	free(p->name);
	free(p->tmp);
	p->path = p->name = p->tmp = NULL;
	p->fd = -1;
	p->dirfd = AT_FDCWD;
}

/*
 * Create name + ".tmp-XXXXXX" (six random letters and digits, as
 * mkostemp makes them) in dirfd's folder, exclusively, not through a
 * link: the fd (read and write, 0600) with the name in *tmp (malloc'd),
 * or -1 with errno. mkostemp's own, for a folder open as a descriptor.
 */
static int make_temp(int dirfd, const char *name, char **tmp)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = strlen(name) + sizeof(".tmp-XXXXXX");
	char *t = malloc(n);
	int fd = -1;

	if (!t)
		return -1;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		uint8_t r[6];
		struct timespec ts;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (uint8_t)((uint64_t)ts.tv_nsec >> (5 * i) ^ (uint64_t)getpid() >> i ^
						 (unsigned)tries * 37u);
		}
		snprintf(t, n, "%s.tmp-", name);
		for (size_t i = 0; i < sizeof(r); i++)
			t[n - 7 + i] = letters[r[i] % (sizeof(letters) - 1)];
		t[n - 1] = '\0';
		fd = openat(dirfd, t, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		free(t);
		return -1;
	}
	*tmp = t;
	return fd;
}

/* A temporary of ours older than this was left by a process that was killed. */
#define STALE_TMP_AGE_S 3600

/*
 * Remove our own temporaries of path (path.tmp-XXXXXX, regular files we
 * own, unchanged for an hour) that a killed process left behind; a
 * younger one may belong to a run still writing. Best effort and silent.
 */
static void remove_stale_tmps(const char *path)
{
	char *copy = strdup(path), *dir, *base;
	size_t base_len;
	struct dirent *e;
	time_t now = time(NULL);
	DIR *d;
	int dfd;

	if (!copy)
		return;
	base = strrchr(copy, '/');
	if (base) {
		*base++ = '\0';
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = ".";
	}
	base_len = strlen(base);
	if (!(d = opendir(dir))) {
		free(copy);
		return;
	}
	dfd = dirfd(d);
	while ((e = readdir(d))) {
		struct stat st;

		if (strlen(e->d_name) != base_len + sizeof(".tmp-XXXXXX") - 1 ||
		    memcmp(e->d_name, base, base_len) || memcmp(e->d_name + base_len, ".tmp-", 5))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || now - st.st_mtime < STALE_TMP_AGE_S)
			continue;
		unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
	free(copy);
}

static int publish_open(struct ms_publish *p, const char *path, bool private)
{
	struct stat st;
	size_t n;

	p->path = strdup(path);
	p->name = p->tmp = NULL;
	p->fd = -1;
	p->dirfd = AT_FDCWD;
	p->cache = false;
	if (!p->path)
		return ms_error("out of memory opening '%s'", path);
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		p->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (p->fd < 0) {
			ms_error_errno("cannot open '%s'", path);
			release(p);
			return -1;
		}
		return p->fd;
	}
	n = strlen(path) + sizeof(".tmp-XXXXXX");
	p->tmp = malloc(n);
	if (!p->tmp) {
		release(p);
		return ms_error("out of memory opening '%s'", path);
	}
	snprintf(p->tmp, n, "%s.tmp-XXXXXX", path);
	remove_stale_tmps(path);
	p->fd = mkostemp(p->tmp, O_CLOEXEC);
	if (p->fd < 0) {
		ms_error_errno("cannot create a temporary file next to '%s'", path);
		release(p);
		return -1;
	}
	/* mkostemp makes 0600; an output is as readable as any new file, unless private. */
	if (!private) {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(p->fd, 0666 & ~mask);
	}
	return p->fd;
}

int ms_publish_open(struct ms_publish *p, const char *path)
{
	return publish_open(p, path, false);
}

int ms_publish_open_private(struct ms_publish *p, const char *path)
{
	return publish_open(p, path, true);
}

int ms_publish_openat(struct ms_publish *p, int dirfd, const char *name, const char *path)
{
	p->path = strdup(path);
	p->name = strdup(name);
	p->tmp = NULL;
	p->fd = -1;
	p->dirfd = dirfd;
	p->cache = false;
	if (!p->path || !p->name) {
		release(p);
		return ms_error("out of memory opening '%s'", path);
	}
	/* Private to its user, as the cache's folder is (and no umask() from a thread). */
	p->fd = make_temp(p->dirfd, p->name, &p->tmp);
	if (p->fd < 0) {
		ms_error_errno("cannot create a temporary file next to '%s'", path);
		release(p);
		return -1;
	}
	return p->fd;
}

void ms_sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * A copy of p's temporary written in whole MS_PAGE_BLOCKs, which then
 * replaces it (see cache in publish.h). Nothing changes on failure.
 */
static void rewrite_in_blocks(struct ms_publish *p)
{
	char *tmp = NULL, *buf = NULL;
	struct stat st;
	off_t off = 0;
	int fd = -1;

	if (fstat(p->fd, &st) < 0 || st.st_size <= (off_t)MS_PAGE_BLOCK / 2)
		goto out;	/* (a small file gains nothing) */
	if (!(buf = malloc(MS_PAGE_BLOCK)) ||
	    (fd = make_temp(p->dirfd, p->name ? p->name : p->path, &tmp)) < 0)
		goto out;
	while (off < st.st_size) {
		ssize_t got = pread(p->fd, buf, MS_PAGE_BLOCK, off);

		if (got <= 0 || write(fd, buf, (size_t)got) != got)
			goto out;
		off += got;
	}
	if (fchmod(fd, st.st_mode & 0777) < 0)
		goto out;
	/* The copy is the temporary now; the pieces go with their small folios. */
	close(p->fd);
	unlinkat(p->dirfd, p->tmp, 0);
	free(p->tmp);
	p->fd = fd;
	p->tmp = tmp;
	fd = -1;
	tmp = NULL;
out:
	if (fd >= 0) {
		close(fd);
		unlinkat(p->dirfd, tmp, 0);
	}
	free(buf);
	free(tmp);
}

int ms_publish_commit(struct ms_publish *p)
{
	int ret = 0;

	if (!p->tmp) {
		if (close(p->fd) < 0)
			ret = ms_error_errno("cannot write '%s'", p->path);
		release(p);
		return ret;
	}
	if (p->cache)
		rewrite_in_blocks(p);
	if (!p->cache && fsync(p->fd) < 0) {
		ms_error_errno("cannot write '%s'", p->tmp);
		ms_publish_abort(p);
		return -1;
	}
	if (close(p->fd) < 0) {
		p->fd = -1;
		ms_error_errno("cannot write '%s'", p->tmp);
		ms_publish_abort(p);
		return -1;
	}
	p->fd = -1;
	if (renameat(p->dirfd, p->tmp, p->dirfd, p->name ? p->name : p->path) < 0) {
		ms_error_errno("cannot rename '%s' to '%s'", p->tmp, p->path);
		ms_publish_abort(p);
		return -1;
	}
	if (!p->cache && p->dirfd >= 0)
		fsync(p->dirfd);
	else if (!p->cache)
		ms_sync_dir_of(p->path);
	release(p);
	return 0;
}

void ms_publish_abort(struct ms_publish *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->tmp)
		unlinkat(p->dirfd, p->tmp, 0);
	release(p);
}
