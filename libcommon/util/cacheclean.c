/* Bounding microscope's cache folder by age: see ms_cache_clean() in cachedir.h. */
#include "util/cachedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cachelayout.h"
#include "util/safeopen.h"

#define DEFAULT_CLEAN_INTERVAL_S	86400	/* a day */
#define DEFAULT_MAX_UNUSED_AGE_S	604800	/* a week */
/*
 * The common path is one fstatat of the stamp: the interval's file is read
 * only once the stamp is older than this, so no interval is shorter.
 */
#define MIN_CLEAN_INTERVAL_S		3600
/* A publication's temporary (util/publish.h) unused this long was left by a crash. */
#define TMP_UNUSED_AGE_S		3600
/* A setting is a number of seconds: a file longer than this is not one. */
#define SETTING_MAX			32

struct clean {
	time_t now;
	time_t max_unused_age;
	dev_t dev;		/* the cache's file system: no other is entered */
};

/* The seconds that file name in folder dirfd holds, else def (missing, unparsable, negative). */
static time_t setting(int dirfd, const char *name, time_t def)
{
	char buf[SETTING_MAX + 1], *end;
	long long v;
	ssize_t n;
	/* Not a FIFO (it would hang the writer that cleans), nor through a link. */
	int fd = ms_open_regular(dirfd, name, MS_OPEN_NOFOLLOW, SETTING_MAX, NULL, NULL);

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

/* Unused for longer than its limit: the later of reading (relatime) and writing. */
static bool stale(const struct clean *c, bool tmp, const struct stat *st)
{
	time_t used = st->st_atime > st->st_mtime ? st->st_atime : st->st_mtime;

	/* A temporary younger than that may still be written, whatever the limit says. */
	return c->now - used > (tmp ? TMP_UNUSED_AGE_S : c->max_unused_age);
}

/*
 * Remove the stale files of the layout in folder dirfd (dir its name in
 * the layout, "" for the top), and at the top look into the layout's
 * folders; closes dirfd. Nothing else is touched: no link is followed or
 * removed, no folder removed, no name the layout does not make. A file
 * that changes between its stat and its unlink is at worst rebuilt by its
 * next reader.
 */
static void sweep(const struct clean *c, int dirfd, const char *dir)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *e;
	struct stat st;
	bool tmp;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((e = readdir(d))) {
		const char *name = e->d_name;

		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != c->dev)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub;

			if (dir[0] || !ms_cache_dir_ours(name))
				continue;
			/* O_NOFOLLOW: a folder swapped for a link since the stat is not entered. */
			sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sweep(c, sub, name);
			continue;
		}
		/* A reader that has it open or mapped keeps it; the next one rebuilds it. */
		if (S_ISREG(st.st_mode) && ms_cache_name_ours(dir, name, &tmp) && stale(c, tmp, &st))
			unlinkat(dirfd, name, 0);
	}
	closedir(d);
}

void ms_cache_clean(int top)
{
	struct clean c;
	struct stat st;
	time_t age, interval;
	int saved = errno, fd;

	c.now = time(NULL);
	if (fstatat(top, MS_CACHE_STAMP, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* A new cache, or one from before cleaning: its clock starts now. */
		fd = openat(top, MS_CACHE_STAMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	age = c.now - st.st_mtime;
	if (age >= 0 && age < MIN_CLEAN_INTERVAL_S)
		goto out;
	interval = setting(top, MS_CACHE_CLEAN_INTERVAL, DEFAULT_CLEAN_INTERVAL_S);
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
	if (utimensat(top, MS_CACHE_STAMP, NULL, AT_SYMLINK_NOFOLLOW) < 0 || fstat(top, &st) < 0)
		goto out;
	c.dev = st.st_dev;
	c.max_unused_age = setting(top, MS_CACHE_MAX_UNUSED_AGE, DEFAULT_MAX_UNUSED_AGE_S);
	/* The walk's own descriptor: closedir() closes it, top stays the caller's. */
	fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		sweep(&c, fd, "");
out:
	errno = saved;
}
