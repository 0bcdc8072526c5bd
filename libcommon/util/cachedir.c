/* microscope's cache directory: see cachedir.h. */
#include "util/cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *ms_cache_file(const char *name)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (xdg && xdg[0] == '/') {
		if (asprintf(&path, "%s/microscope/%s", xdg, name) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&path, "%s/.cache/microscope/%s", home, name) < 0)
			return NULL;
	}
	return path;
}

void *ms_cache_map(const char *path, uint64_t min_len, uint64_t max_len, size_t *len)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < min_len ||
	    (uint64_t)st.st_size > max_len) {
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

/* Clean the cache when path is in it (not a path a test or tool chose elsewhere). */
static void clean_for(const char *path)
{
	char *top = ms_cache_file("");
	size_t n;

	if (!top)
		return;
	n = strlen(top);	/* ending in '/' */
	if (n > 1 && !strncmp(path, top, n)) {
		top[n - 1] = '\0';
		ms_cache_clean(top);
	}
	free(top);
}

int ms_cache_mkdir(const char *path)
{
	char *dir, *slash;
	char *p;

	/* Before the folders are made: a clean may remove the ones it empties. */
	clean_for(path);
	if (!(dir = strdup(path)))
		return -1;
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	/* Each missing level, as mkdir -p; the cache is private to its user. */
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			break;
		*p = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		free(dir);
		return -1;
	}
	if (access(dir, W_OK) < 0) {
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}
