/*
 * The cache's bound by age (util/cachedir.h, ms_cache_clean): a fake cache
 * under $XDG_CACHE_HOME of files of known ages, cleaned through
 * ms_cache_mkdir() as every cache writer does. What is stale goes, what is
 * used stays, the stamp and settings decide when and what, and nothing
 * outside the cache folder is touched, links included: only names of the
 * layout (util/cachelayout.h) are removed, never a folder, and a cache
 * folder that is a link, or not its user's alone, is not used at all.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/cachelayout.h"
#include "stderr-capture.h"
#include "tmpdir.h"

#define HOUR	3600
#define DAY	(24 * HOUR)

static char root[256];		/* the test's folder: xdg/ and outside/ */
static time_t now;

static void path_of(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", root, rel);
}

/* Make the folders above rel (below root). */
static void mkdirs(const char *rel)
{
	char p[600];

	path_of(p, sizeof(p), rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		assert_true(mkdir(p, 0700) == 0 || errno == EEXIST);
		*s = '/';
	}
}

/* Set rel's atime and mtime to these ages (seconds before now), not following a link. */
static void age(const char *rel, time_t atime_age, time_t mtime_age)
{
	char p[600];
	struct timespec ts[2] = { { now - atime_age, 0 }, { now - mtime_age, 0 } };

	path_of(p, sizeof(p), rel);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* A file rel holding text, last used (read and written) used_age seconds ago. */
static void put(const char *rel, const char *text, time_t used_age)
{
	char p[600];
	FILE *f;

	mkdirs(rel);
	path_of(p, sizeof(p), rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	age(rel, used_age, used_age);
}

static bool exists(const char *rel)
{
	char p[600];
	struct stat st;

	path_of(p, sizeof(p), rel);
	return lstat(p, &st) == 0;
}

static time_t mtime_age(const char *rel)
{
	char p[600];
	struct stat st;

	path_of(p, sizeof(p), rel);
	assert_int_equal(lstat(p, &st), 0);
	return now - st.st_mtime;
}

/* A cache writer about to publish rel (below root): 0 from ms_cache_mkdir, its folder made. */
static void write_at(const char *rel)
{
	char p[600], *slash;
	struct stat st;

	path_of(p, sizeof(p), rel);
	assert_int_equal(ms_cache_mkdir(p), 0);
	slash = strrchr(p, '/');
	*slash = '\0';
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

/* One stale cache file, one fresh: which of them a clean left. */
static void put_probes(void)
{
	put("xdg/microscope/debug/5ca1e0.syms", "s", 8 * DAY);
	put("xdg/microscope/debug/f2e540.syms", "f", DAY);
}

static int setup(void **state)
{
	char xdg[300];

	(void)state;
	tmpdir_make(root, sizeof(root), "cacheclean-test");
	mkdirs("xdg/microscope/");
	path_of(xdg, sizeof(xdg), "xdg");
	assert_int_equal(setenv("XDG_CACHE_HOME", xdg, 1), 0);
	now = time(NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("XDG_CACHE_HOME");
	assert_int_equal(tmpdir_remove(root), 0);
	return 0;
}

/* No stamp: it is made, and the clock starts; nothing is removed yet. */
static void test_first_write_starts_clock(void **state)
{
	(void)state;
	put("xdg/microscope/kallsyms", "k", 30 * DAY);
	put_probes();
	write_at("xdg/microscope/cfi/00.rows");
	assert_true(exists("xdg/microscope/" MS_CACHE_STAMP));
	assert_true(mtime_age("xdg/microscope/" MS_CACHE_STAMP) < 60);
	assert_true(exists("xdg/microscope/kallsyms"));
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	/* The stamp is never older than the clock: the next write does not clean either. */
	write_at("xdg/microscope/cfi/00.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
}

/* A stamp younger than the interval (a day): no clean, however stale the files. */
static void test_recent_stamp_no_clean(void **state)
{
	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 20 * HOUR, 20 * HOUR);
	put_probes();
	write_at("xdg/microscope/debug/ab.syms");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_int_equal(mtime_age("xdg/microscope/" MS_CACHE_STAMP), 20 * HOUR);
	/* Nor younger than an hour. */
	age("xdg/microscope/" MS_CACHE_STAMP, 10, 10);
	write_at("xdg/microscope/debug/ab.syms");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	/* A little ahead (another host's clock): not due. */
	age("xdg/microscope/" MS_CACHE_STAMP, -2 * HOUR, -2 * HOUR);
	write_at("xdg/microscope/debug/ab.syms");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
}

/* A stamp older than the interval: what was unused for a week goes, the rest stays. */
static void test_old_stamp_cleans(void **state)
{
	char p[600], q[600];

	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 2 * DAY, 2 * DAY);
	/* The cache's own state, however old. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "\n", 30 * DAY);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "junk\n", 30 * DAY);
	/* Top level and one folder down. */
	put("xdg/microscope/kallsyms", "k", 8 * DAY);
	put_probes();
	put("xdg/microscope/debug/ed6e.syms", "e", 7 * DAY - 60);
	/* Used is the later of atime and mtime. */
	put("xdg/microscope/debug/0ead.debug", "r", 0);
	age("xdg/microscope/debug/0ead.debug", DAY, 30 * DAY);
	put("xdg/microscope/debug/0717.debug", "w", 0);
	age("xdg/microscope/debug/0717.debug", 30 * DAY, DAY);
	/* Each kind of the layout goes, in its own folder only. */
	put("xdg/microscope/debug/aa.units", "u", 8 * DAY);
	put("xdg/microscope/debug/aa.index", "i", 8 * DAY);
	put("xdg/microscope/cfi/aa.rows", "c", 8 * DAY);
	put("xdg/microscope/cfi/aa.syms", "c", 8 * DAY);
	put("xdg/microscope/debug/kallsyms", "k", 8 * DAY);
	/* Names the layout does not make stay, however old: a settings name below the top, ... */
	put("xdg/microscope/debug/" MS_CACHE_STAMP, "", 8 * DAY);
	/* ... a name that is not a build id, in upper case, of odd length, another suffix ... */
	put("xdg/microscope/debug/stale.syms", "n", 30 * DAY);
	put("xdg/microscope/debug/ABCD.syms", "n", 30 * DAY);
	put("xdg/microscope/debug/abc.syms", "n", 30 * DAY);
	put("xdg/microscope/debug/ab.txt", "n", 30 * DAY);
	put("xdg/microscope/notes.txt", "n", 30 * DAY);
	put("xdg/microscope/debug/ab.syms.tmp-Ab12", "n", 30 * DAY);
	/* Temporaries: an hour unused is left over by a crash, whatever the age limit. */
	put("xdg/microscope/cfi/a0.rows.tmp-Ab12Cd", "t", 2 * HOUR);
	put("xdg/microscope/cfi/b0.rows.tmp-Ef34Gh", "t", 10 * 60);
	put("xdg/microscope/cfi/c0.rows", "c", 2 * HOUR);
	/* Folders the layout does not have are not entered; no folder is removed. */
	put("xdg/microscope/old/deep/aa.index", "x", 9 * DAY);
	put("xdg/microscope/old/aa.index", "x", 9 * DAY);
	mkdirs("xdg/microscope/empty/");
	mkdirs("xdg/microscope/cfi/empty/");
	/* Not a regular file: left alone. */
	path_of(p, sizeof(p), "xdg/microscope/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	age("xdg/microscope/fifo", 30 * DAY, 30 * DAY);
	path_of(p, sizeof(p), "xdg/microscope/cfi/ff.rows");
	assert_int_equal(mkfifo(p, 0600), 0);
	age("xdg/microscope/cfi/ff.rows", 30 * DAY, 30 * DAY);
	/* Outside the cache, and links into it from inside: never followed. */
	put("outside/target.syms", "o", 30 * DAY);
	put("outside/dir/aa.rows", "o", 30 * DAY);
	put("xdg/other-program/old", "o", 30 * DAY);
	path_of(p, sizeof(p), "outside/target.syms");
	path_of(q, sizeof(q), "xdg/microscope/debug/11.syms");
	assert_int_equal(symlink(p, q), 0);
	age("xdg/microscope/debug/11.syms", 30 * DAY, 30 * DAY);
	path_of(p, sizeof(p), "outside/dir");
	path_of(q, sizeof(q), "xdg/microscope/cfi/linkdir");
	assert_int_equal(symlink(p, q), 0);

	write_at("xdg/microscope/cfi/00.rows");

	assert_true(mtime_age("xdg/microscope/" MS_CACHE_STAMP) < 60);
	assert_true(exists("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL));
	assert_true(exists("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE));
	assert_false(exists("xdg/microscope/kallsyms"));
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
	assert_true(exists("xdg/microscope/debug/ed6e.syms"));
	assert_true(exists("xdg/microscope/debug/0ead.debug"));
	assert_true(exists("xdg/microscope/debug/0717.debug"));
	assert_false(exists("xdg/microscope/debug/aa.units"));
	assert_false(exists("xdg/microscope/debug/aa.index"));
	assert_false(exists("xdg/microscope/cfi/aa.rows"));
	assert_true(exists("xdg/microscope/cfi/aa.syms"));
	assert_true(exists("xdg/microscope/debug/kallsyms"));
	assert_true(exists("xdg/microscope/debug/" MS_CACHE_STAMP));
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/ABCD.syms"));
	assert_true(exists("xdg/microscope/debug/abc.syms"));
	assert_true(exists("xdg/microscope/debug/ab.txt"));
	assert_true(exists("xdg/microscope/notes.txt"));
	assert_true(exists("xdg/microscope/debug/ab.syms.tmp-Ab12"));
	assert_false(exists("xdg/microscope/cfi/a0.rows.tmp-Ab12Cd"));
	assert_true(exists("xdg/microscope/cfi/b0.rows.tmp-Ef34Gh"));
	assert_true(exists("xdg/microscope/cfi/c0.rows"));
	assert_true(exists("xdg/microscope/old/deep/aa.index"));
	assert_true(exists("xdg/microscope/old/aa.index"));
	assert_true(exists("xdg/microscope/empty"));
	assert_true(exists("xdg/microscope/cfi/empty"));
	assert_true(exists("xdg/microscope/fifo"));
	assert_true(exists("xdg/microscope/cfi/ff.rows"));
	assert_true(exists("xdg/microscope/debug/11.syms"));
	assert_true(exists("xdg/microscope/cfi/linkdir"));
	assert_true(exists("outside/target.syms"));
	assert_int_equal(mtime_age("outside/target.syms"), 30 * DAY);
	assert_true(exists("outside/dir/aa.rows"));
	assert_true(exists("xdg/other-program/old"));
	/* The writer's folder is there (made again if the clean emptied it). */
	assert_true(exists("xdg/microscope/cfi"));
}

/* The settings: their numbers replace the defaults; what is not a number does not. */
static void test_settings(void **state)
{
	(void)state;
	/* A shorter age limit. */
	put("xdg/microscope/" MS_CACHE_STAMP, "", 2 * DAY);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "3600\n", 0);
	put("xdg/microscope/cfi/01d0.rows", "o", 2 * HOUR);
	put("xdg/microscope/cfi/00.rows", "n", 30 * 60);
	write_at("xdg/microscope/cfi/ab.rows");
	assert_false(exists("xdg/microscope/cfi/01d0.rows"));
	assert_true(exists("xdg/microscope/cfi/00.rows"));
	/* A longer interval: a stamp of two days is recent. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "2592000", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "604800", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 2 * DAY, 2 * DAY);
	put_probes();
	write_at("xdg/microscope/cfi/ab.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	/* A shorter one: three hours are enough. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, " 7200 \n", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 3 * HOUR, 3 * HOUR);
	write_at("xdg/microscope/cfi/ab.rows");
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
	/* Never more than once an hour, nor for a stamp a little ahead. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "0", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 30 * 60, 30 * 60);
	put_probes();
	write_at("xdg/microscope/cfi/ab.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	age("xdg/microscope/" MS_CACHE_STAMP, -30 * 60, -30 * 60);
	write_at("xdg/microscope/cfi/ab.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	/* Unparsable or negative: the defaults (a day, a week). */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "soon", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "-5", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 20 * HOUR, 20 * HOUR);
	write_at("xdg/microscope/cfi/ab.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	age("xdg/microscope/" MS_CACHE_STAMP, 25 * HOUR, 25 * HOUR);
	write_at("xdg/microscope/cfi/ab.rows");
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "9999999x", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "99999999999999999999999", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 25 * HOUR, 25 * HOUR);
	put_probes();
	write_at("xdg/microscope/cfi/ab.rows");
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
}

/* A stamp far in the future (the clock was set back) is due, and is set to now. */
static void test_future_stamp(void **state)
{
	time_t stamp_age;

	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, -30 * DAY, -30 * DAY);
	put_probes();
	write_at("xdg/microscope/cfi/ab.rows");
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
	/* Set to now: not before the test began, not after this check (the
	 * clock may pass a second between the two). The file system stamps
	 * from a finer clock than time()'s, which can trail it across a
	 * second's edge by a tick: one second of slack. */
	stamp_age = mtime_age("xdg/microscope/" MS_CACHE_STAMP);
	assert_true(stamp_age <= 0);
	assert_true(stamp_age >= now - time(NULL) - 1);
}

/* A folder made for a file outside the cache (a tool's own path) cleans nothing. */
static void test_outside_path(void **state)
{
	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 2 * DAY);
	put_probes();
	write_at("elsewhere/cfi/x.rows");
	write_at("xdg/microscope-other/x.rows");
	assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_int_equal(mtime_age("xdg/microscope/" MS_CACHE_STAMP), 2 * DAY);
	/* No cache at all: nothing to clean, the folder still made. */
	{
		char *home = getenv("HOME");

		home = home ? strdup(home) : NULL;
		unsetenv("XDG_CACHE_HOME");
		unsetenv("HOME");
		write_at("xdg/microscope/cfi/ab.rows");
		assert_true(exists("xdg/microscope/debug/5ca1e0.syms"));
		if (home)
			setenv("HOME", home, 1);
		free(home);
	}
}

/*
 * Stale files named as the layout names them, in folder rel (below root)
 * and its debug/, under a stamp two days old: what a clean there removes.
 */
static void put_victims(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/" MS_CACHE_STAMP, rel);
	put(p, "", 2 * DAY);
	snprintf(p, sizeof(p), "%s/kallsyms", rel);
	put(p, "precious", 30 * DAY);
	snprintf(p, sizeof(p), "%s/debug/ab.syms", rel);
	put(p, "precious", 30 * DAY);
}

static void assert_victims(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/kallsyms", rel);
	assert_true(exists(p));
	snprintf(p, sizeof(p), "%s/debug/ab.syms", rel);
	assert_true(exists(p));
}

/* A cache writer about to publish rel in a cache that is refused: -1, nothing made or cleaned. */
static void write_refused(const char *rel)
{
	char p[600];

	path_of(p, sizeof(p), rel);
	assert_int_equal(ms_cache_mkdir(p), -1);
}

/*
 * The cache folder a link to another folder (a user's choice, when root
 * runs with that user's HOME): nothing there is cleaned, read or written,
 * one warning says so, and caches are off for the run.
 */
static void test_root_link(void **state)
{
	char p[600], q[600];
	const char *err;
	char *f;

	(void)state;
	path_of(p, sizeof(p), "xdg/microscope");
	assert_int_equal(rmdir(p), 0);
	put_victims("outside/victim");
	path_of(p, sizeof(p), "outside/victim");
	path_of(q, sizeof(q), "xdg/microscope");
	assert_int_equal(symlink(p, q), 0);
	stderr_begin();
	write_refused("xdg/microscope/cfi/00.rows");
	write_refused("xdg/microscope/debug/00.syms");
	f = ms_cache_file("kallsyms");
	err = stderr_end();
	assert_null(f);
	assert_victims("outside/victim");
	assert_false(exists("outside/victim/cfi"));
	assert_int_equal(mtime_age("outside/victim/" MS_CACHE_STAMP), 2 * DAY);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "is a symbolic link"));
	assert_non_null(strstr(err, "caches are off"));
}

/* A cache folder its group or others may write, or another user's: refused too. */
static void test_root_unsafe(void **state)
{
	char p[600];
	const char *err;
	char *f;

	(void)state;
	put_victims("xdg/microscope");
	path_of(p, sizeof(p), "xdg/microscope");
	assert_int_equal(chmod(p, 0770), 0);
	stderr_begin();
	write_refused("xdg/microscope/cfi/00.rows");
	f = ms_cache_file("cfi/00.rows");
	err = stderr_end();
	assert_null(f);
	assert_victims("xdg/microscope");
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "may be written by its group or others (mode 770)"));
	/* Off for the whole run, even once mended: the run's caches stay off. */
	assert_int_equal(chmod(p, 0700), 0);
	write_refused("xdg/microscope/cfi/00.rows");
	/* Another user's (only root can give it away). */
	if (geteuid() == 0) {
		char other[300];

		path_of(other, sizeof(other), "xdg2");
		assert_int_equal(setenv("XDG_CACHE_HOME", other, 1), 0);
		put_victims("xdg2/microscope");
		path_of(p, sizeof(p), "xdg2/microscope");
		assert_int_equal(chown(p, 65534, 65534), 0);
		stderr_begin();
		write_refused("xdg2/microscope/cfi/00.rows");
		err = stderr_end();
		assert_victims("xdg2/microscope");
		assert_non_null(strstr(err, "belongs to user 65534, not to this one (0)"));
	}
}

/* A FIFO as a setting or the stamp: the clean neither hangs nor takes it. */
static void test_fifo_setting(void **state)
{
	char p[600];

	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 2 * DAY);
	path_of(p, sizeof(p), "xdg/microscope/" MS_CACHE_CLEAN_INTERVAL);
	assert_int_equal(mkfifo(p, 0600), 0);
	path_of(p, sizeof(p), "xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE);
	assert_int_equal(mkfifo(p, 0600), 0);
	put_probes();
	/* A hang fails the test instead of stopping the suite. */
	alarm(20);
	write_at("xdg/microscope/cfi/00.rows");
	alarm(0);
	assert_false(exists("xdg/microscope/debug/5ca1e0.syms"));
	assert_true(exists("xdg/microscope/debug/f2e540.syms"));
}

/* The layout's names (util/cachelayout.h): what writers make is what the clean accepts. */
static void test_layout_names(void **state)
{
	static const uint8_t id[3] = { 0x0a, 0xbc, 0xff };
	static const struct {
		const char *dir, *name;
		bool ours, tmp;
	} names[] = {
		{ "", "kallsyms", true, false },
		{ "", "kallsyms.tmp-aZ09bY", true, true },
		{ "", "kallsyms.tmp-aZ09b", false, false },
		{ "", "kallsyms.tmp-aZ09b!", false, false },
		{ "", MS_CACHE_STAMP, false, false },
		{ "", MS_CACHE_CLEAN_INTERVAL, false, false },
		{ "", "0abcff.syms", false, false },
		{ "debug", "0abcff.debug", true, false },
		{ "debug", "0abcff.syms", true, false },
		{ "debug", "0abcff.units", true, false },
		{ "debug", "0abcff.index", true, false },
		{ "debug", "0abcff.index.tmp-XXXXXX", true, true },
		{ "debug", "0abcff.rows", false, false },
		{ "debug", "0ABCFF.syms", false, false },
		{ "debug", "0abcf.syms", false, false },
		{ "debug", ".syms", false, false },
		{ "debug", "kallsyms", false, false },
		{ "cfi", "0abcff.rows", true, false },
		{ "cfi", "0abcff.rows.bak", false, false },
		{ "other", "0abcff.rows", false, false },
	};
	char *p;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool tmp = !names[i].tmp;

		if (ms_cache_name_ours(names[i].dir, names[i].name, &tmp) != names[i].ours)
			fail_msg("'%s' in '%s': ours should be %d", names[i].name, names[i].dir,
				 names[i].ours);
		if (names[i].ours)
			assert_int_equal(tmp, names[i].tmp);
	}
	assert_true(ms_cache_dir_ours("debug"));
	assert_true(ms_cache_dir_ours("cfi"));
	assert_false(ms_cache_dir_ours(""));
	assert_false(ms_cache_dir_ours("old"));
	/* What the writers ask for, where the clean looks for it. */
	p = ms_cache_path(MS_CACHE_CFI_ROWS, id, sizeof(id));
	assert_non_null(p);
	assert_non_null(strstr(p, "/microscope/cfi/0abcff.rows"));
	free(p);
	p = ms_cache_path(MS_CACHE_KALLSYMS, NULL, 0);
	assert_non_null(strstr(p, "/microscope/kallsyms"));
	free(p);
	assert_null(ms_cache_path(MS_CACHE_SYMS, id, 0));
	assert_null(ms_cache_path(MS_CACHE_KINDS, id, sizeof(id)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_write_starts_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recent_stamp_no_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_stamp_cleans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_future_stamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_unsafe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_setting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_names, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
