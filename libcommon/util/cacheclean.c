/* Bounding microscope's cache folder by age: see ms_cache_clean() in cachedir.h. */
#include "util/cachedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CLEAN_INTERVAL_S	86400	/* a day */
#define DEFAULT_MAX_UNUSED_AGE_S	604800	/* a week */
/*
 * The common path is one lstat of the stamp: the interval's file is read
 * only once the stamp is older than this, so no interval is shorter.
 */
#define MIN_CLEAN_INTERVAL_S		3600
/* A publication's temporary (util/publish.h) unused this long was left by a crash. */
#define TMP_UNUSED_AGE_S		3600
#define TMP_SUFFIX_LEN			(sizeof(".tmp-XXXXXX") - 1)
/* microscope's caches lie one folder deep; nothing is looked for below this. */
#define MAX_DEPTH			4

struct clean {
	time_t now;
	time_t max_unused_age;
	dev_t dev;		/* the cache's file system: no other is entered */
};

/* The seconds that file name in folder dirfd holds, else def (missing, unparsable, negative). */
static time_t setting(int dirfd, const char *name, time_t def)
{
	char buf[32], *end;
	long long v;
	ssize_t n;
	/* Reading a setting is no use of the cache: kept(), not the read, keeps it. */
	int fd = openat(dirfd, name, O_RDONLY | O_NOATIME | O_CLOEXEC);

	if (fd < 0 && errno == EPERM)	/* not the owner's */
		fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return def;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return def;
	buf[n] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || v < 0)
		return def;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	return *end ? def : (time_t)v;
}

/* The stamp and the settings are the cache's own, not cached files. */
static bool kept(const char *name)
{
	return !strcmp(name, MS_CACHE_STAMP) || !strcmp(name, MS_CACHE_CLEAN_INTERVAL) ||
	       !strcmp(name, MS_CACHE_MAX_UNUSED_AGE);
}

/* Unused for longer than its limit: the later of reading (relatime) and writing. */
static bool stale(const struct clean *c, const char *name, const struct stat *st)
{
	time_t used = st->st_atime > st->st_mtime ? st->st_atime : st->st_mtime;
	size_t len = strlen(name);
	bool tmp = len > TMP_SUFFIX_LEN && !memcmp(name + len - TMP_SUFFIX_LEN, ".tmp-", 5);

	/* A temporary younger than that may still be written, whatever the limit says. */
	return c->now - used > (tmp ? TMP_UNUSED_AGE_S : c->max_unused_age);
}

/*
 * Remove the stale regular files in folder dirfd, depth folders below the
 * top, and then the folders left empty; closes dirfd. Symbolic links are
 * neither followed nor removed, and a file that changes between its stat
 * and its unlink is at worst rebuilt by its next reader.
 */
static void sweep(const struct clean *c, int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *e;
	struct stat st;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((e = readdir(d))) {
		const char *name = e->d_name;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != c->dev)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub;

			if (depth + 1 > MAX_DEPTH)
				continue;
			/* O_NOFOLLOW: a folder swapped for a link since the stat is not entered. */
			sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			sweep(c, sub, depth + 1);
			/* Fails (ENOTEMPTY) for a folder still holding something, as it should. */
			unlinkat(dirfd, name, AT_REMOVEDIR);
			continue;
		}
		if (!S_ISREG(st.st_mode) || (depth == 0 && kept(name)))
			continue;
		/* A reader that has it open or mapped keeps it; the next one rebuilds it. */
		if (stale(c, name, &st))
			unlinkat(dirfd, name, 0);
	}
	closedir(d);
}

void ms_cache_clean(const char *top)
{
	char stamp[PATH_MAX];
	struct clean c;
	struct stat st;
	time_t age, interval;
	int saved = errno, dirfd = -1, fd;

	if ((size_t)snprintf(stamp, sizeof(stamp), "%s/%s", top, MS_CACHE_STAMP) >= sizeof(stamp))
		return;
	c.now = time(NULL);
	if (lstat(stamp, &st) < 0) {
		/* A new cache, or one from before cleaning: its clock starts now. */
		fd = open(stamp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	age = c.now - st.st_mtime;
	if (age >= 0 && age < MIN_CLEAN_INTERVAL_S)
		goto out;
	/* The top may be a link (a cache moved to another disk); nothing below it is followed. */
	dirfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		goto out;
	interval = setting(dirfd, MS_CACHE_CLEAN_INTERVAL, DEFAULT_CLEAN_INTERVAL_S);
	if (interval < MIN_CLEAN_INTERVAL_S)
		interval = MIN_CLEAN_INTERVAL_S;
	/*
	 * Not yet due; a stamp from the future is due only when far ahead (the
	 * clock was set back), since another host's clock (NFS) may run a bit ahead.
	 */
	if (age < interval && age > -interval)
		goto out;
	/*
	 * Recorded before the walk, so that concurrent writers skip it; a clean
	 * that cannot be recorded is not done, or every write would walk.
	 */
	if (utimensat(dirfd, MS_CACHE_STAMP, NULL, AT_SYMLINK_NOFOLLOW) < 0 || fstat(dirfd, &st) < 0)
		goto out;
	c.dev = st.st_dev;
	c.max_unused_age = setting(dirfd, MS_CACHE_MAX_UNUSED_AGE, DEFAULT_MAX_UNUSED_AGE_S);
	sweep(&c, dirfd, 0);
	dirfd = -1;
out:
	if (dirfd >= 0)
		close(dirfd);
	errno = saved;
}
