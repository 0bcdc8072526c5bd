/* microscope's cache directory: see cachedir.h. */
#include "util/cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/error.h"
#include "util/safeopen.h"

/* The root refused in this process, warned about once (NULL: none yet). */
static pthread_mutex_t refused_lock = PTHREAD_MUTEX_INITIALIZER;
static char *refused;

/* The root's path (malloc'd) from the environment, or NULL when there is none. */
static char *root_path(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (xdg && xdg[0] == '/') {
		if (asprintf(&path, "%s/microscope", xdg) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&path, "%s/.cache/microscope", home) < 0)
			return NULL;
	}
	return path;
}

/* Whether root was refused in this process: its caches are off for the run. */
static bool was_refused(const char *root)
{
	bool r;

	pthread_mutex_lock(&refused_lock);
	r = refused && !strcmp(refused, root);
	pthread_mutex_unlock(&refused_lock);
	return r;
}

/* Refuse root for why (warned once per root and process): -1. */
static int refuse(const char *root, const char *why)
{
	bool warn;

	pthread_mutex_lock(&refused_lock);
	warn = !refused || strcmp(refused, root);
	if (warn) {
		free(refused);
		refused = strdup(root);
	}
	pthread_mutex_unlock(&refused_lock);
	if (warn)
		ms_warn("the cache folder '%s' %s: caches are off for this run; remove it, or set "
			"XDG_CACHE_HOME to a folder of your own", root, why);
	return -1;
}

/* Make the folders of path that are missing, as mkdir -p; 0 or -1. */
static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Open root (made first when create, with the folders above it) and check
 * it: the descriptor, or -1 (missing: silently; refused: warned).
 */
static int open_root(char *root, bool create)
{
	char why[96];
	struct stat st;
	int fd;

	if (was_refused(root))
		return -1;
	if (create)
		mkdirs(root);
	/* Never through a link: one put there would choose the folder written and cleaned. */
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return refuse(root, "is a symbolic link or not a folder");
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, sizeof(why), "belongs to user %u, not to this one (%u)",
			 (unsigned)st.st_uid, (unsigned)geteuid());
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, sizeof(why), "may be written by its group or others (mode %03o)",
			 (unsigned)(st.st_mode & 0777));
	} else {
		return fd;
	}
	close(fd);
	return refuse(root, why);
}

char *ms_cache_file(const char *name)
{
	char *root = root_path(), *path = NULL;
	int fd;

	if (!root)
		return NULL;
	/* A root that is missing is made by the first writer; one that is there must pass. */
	fd = open_root(root, false);
	if (fd >= 0)
		close(fd);
	if ((fd >= 0 || (errno == ENOENT && !was_refused(root))) &&
	    asprintf(&path, "%s/%s", root, name) < 0)
		path = NULL;
	free(root);
	return path;
}

/*
 * Where path is: in the cache (the root's descriptor, opened and checked,
 * made first when create, and *rel the part of path below it), elsewhere
 * (AT_FDCWD, *rel is path), or in a cache that cannot be used (-1).
 */
static int resolve(const char *path, bool create, const char **rel)
{
	char *root = root_path();
	size_t n = root ? strlen(root) : 0;
	int fd = AT_FDCWD;

	*rel = path;
	if (root && !strncmp(path, root, n) && path[n] == '/' && path[n + 1]) {
		*rel = path + n + 1;
		fd = open_root(root, create);
	}
	free(root);
	return fd;
}

/*
 * Make the folders of rel's folder below top, one at a time and none
 * through a link: the descriptor of rel's own folder, or -1.
 */
static int make_dirs_below(int top, const char *rel)
{
	const char *p = rel, *slash;
	char part[256];
	int fd = ms_open_dir_below(top, "."), next;

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);

		if (n >= sizeof(part)) {
			close(fd);
			return -1;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		if (n && mkdirat(fd, part, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = n ? ms_open_dir_below(fd, part) : fd;
		if (next != fd)
			close(fd);
		fd = next;
		p = slash + 1;
	}
	return fd;
}

/* The folder of path, outside the cache, made as mkdir -p: its descriptor, or -1. */
static int make_dirs(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd = -1;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (!slash)
		fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (slash == dir)
		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else {
		*slash = '\0';
		if (mkdirs(dir) == 0)
			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	free(dir);
	return fd;
}

/* Make path's folders: in the cache, below its root (cleaned first); the fd of its folder. */
static int prepare(const char *path)
{
	const char *rel;
	int top = resolve(path, true, &rel), fd;

	if (top == AT_FDCWD)
		return make_dirs(path);
	if (top < 0)
		return -1;
	/* Before the folders are made: a clean may remove stale files in them. */
	ms_cache_clean(top);
	fd = make_dirs_below(top, rel);
	close(top);
	return fd;
}

int ms_cache_mkdir(const char *path)
{
	int fd = prepare(path), ok;

	if (fd < 0)
		return -1;
	ok = faccessat(fd, ".", W_OK, 0) == 0;
	close(fd);
	return ok ? 0 : -1;
}

int ms_cache_publish(struct ms_publish *p, const char *path)
{
	const char *base = strrchr(path, '/');
	int dir = prepare(path);

	if (dir < 0)
		return -1;
	return ms_publish_openat(p, dir, base ? base + 1 : path, path);
}

int ms_cache_open(const char *path, uint64_t max_len, struct stat *st)
{
	const char *rel;
	int top = resolve(path, false, &rel), fd;

	if (top == AT_FDCWD)
		return ms_open_regular(AT_FDCWD, path, MS_OPEN_NOFOLLOW, max_len, st, NULL);
	if (top < 0)
		return -1;
	/* The layout has no link: none is followed, below the root either. */
	fd = ms_open_regular(top, rel, MS_OPEN_NO_LINKS, max_len, st, NULL);
	close(top);
	return fd;
}

void *ms_cache_map(const char *path, uint64_t min_len, uint64_t max_len, size_t *len)
{
	struct stat st;
	void *map;
	int fd = ms_cache_open(path, max_len, &st);

	if (fd < 0)
		return NULL;
	if ((uint64_t)st.st_size < min_len || !st.st_size) {
		close(fd);
		return NULL;
	}
	/* Read-only: display names of a mapped table are not kept in it (symtab.h). */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return map;
}
