/*
 * The cache's bound by age (util/cachedir.h, ms_cache_clean): a fake cache
 * under $XDG_CACHE_HOME of files of known ages, cleaned through
 * ms_cache_mkdir() as every cache writer does. What is stale goes, what is
 * used stays, the stamp and settings decide when and what, and nothing
 * outside the cache folder is touched, links included.
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
	put("xdg/microscope/debug/stale.syms", "s", 8 * DAY);
	put("xdg/microscope/debug/fresh.syms", "f", DAY);
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
	write_at("xdg/microscope/cfi/new.rows");
	assert_true(exists("xdg/microscope/" MS_CACHE_STAMP));
	assert_true(mtime_age("xdg/microscope/" MS_CACHE_STAMP) < 60);
	assert_true(exists("xdg/microscope/kallsyms"));
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	/* The stamp is never older than the clock: the next write does not clean either. */
	write_at("xdg/microscope/cfi/new.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
}

/* A stamp younger than the interval (a day): no clean, however stale the files. */
static void test_recent_stamp_no_clean(void **state)
{
	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 20 * HOUR, 20 * HOUR);
	put_probes();
	write_at("xdg/microscope/debug/x.syms");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	assert_int_equal(mtime_age("xdg/microscope/" MS_CACHE_STAMP), 20 * HOUR);
	/* Nor younger than an hour. */
	age("xdg/microscope/" MS_CACHE_STAMP, 10, 10);
	write_at("xdg/microscope/debug/x.syms");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	/* A little ahead (another host's clock): not due. */
	age("xdg/microscope/" MS_CACHE_STAMP, -2 * HOUR, -2 * HOUR);
	write_at("xdg/microscope/debug/x.syms");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
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
	put("xdg/microscope/debug/edge-kept.syms", "e", 7 * DAY - 60);
	/* Used is the later of atime and mtime. */
	put("xdg/microscope/debug/read.debug", "r", 0);
	age("xdg/microscope/debug/read.debug", DAY, 30 * DAY);
	put("xdg/microscope/debug/written.debug", "w", 0);
	age("xdg/microscope/debug/written.debug", 30 * DAY, DAY);
	/* A settings name below the top is just a cache file. */
	put("xdg/microscope/debug/" MS_CACHE_STAMP, "", 8 * DAY);
	/* Temporaries: an hour unused is left over by a crash, whatever the age limit. */
	put("xdg/microscope/cfi/a.rows.tmp-Ab12Cd", "t", 2 * HOUR);
	put("xdg/microscope/cfi/b.rows.tmp-Ef34Gh", "t", 10 * 60);
	put("xdg/microscope/cfi/c.rows", "c", 2 * HOUR);
	/* Nested: a folder emptied goes, an empty one too, one still holding something stays. */
	put("xdg/microscope/old/deep/x.index", "x", 9 * DAY);
	put("xdg/microscope/keep/deep/y.index", "y", HOUR);
	mkdirs("xdg/microscope/empty/");
	/* Too deep to be looked at. */
	put("xdg/microscope/1/2/3/4/5/deep.rows", "d", 30 * DAY);
	/* Not a regular file: left alone. */
	path_of(p, sizeof(p), "xdg/microscope/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	age("xdg/microscope/fifo", 30 * DAY, 30 * DAY);
	/* Outside the cache, and links into it from inside: never followed. */
	put("outside/target.syms", "o", 30 * DAY);
	put("outside/dir/old.rows", "o", 30 * DAY);
	put("xdg/other-program/old", "o", 30 * DAY);
	path_of(p, sizeof(p), "outside/target.syms");
	path_of(q, sizeof(q), "xdg/microscope/debug/link.syms");
	assert_int_equal(symlink(p, q), 0);
	age("xdg/microscope/debug/link.syms", 30 * DAY, 30 * DAY);
	path_of(p, sizeof(p), "outside/dir");
	path_of(q, sizeof(q), "xdg/microscope/cfi/linkdir");
	assert_int_equal(symlink(p, q), 0);

	write_at("xdg/microscope/cfi/new.rows");

	assert_true(mtime_age("xdg/microscope/" MS_CACHE_STAMP) < 60);
	assert_true(exists("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL));
	assert_true(exists("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE));
	assert_false(exists("xdg/microscope/kallsyms"));
	assert_false(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/fresh.syms"));
	assert_true(exists("xdg/microscope/debug/edge-kept.syms"));
	assert_true(exists("xdg/microscope/debug/read.debug"));
	assert_true(exists("xdg/microscope/debug/written.debug"));
	assert_false(exists("xdg/microscope/debug/" MS_CACHE_STAMP));
	assert_false(exists("xdg/microscope/cfi/a.rows.tmp-Ab12Cd"));
	assert_true(exists("xdg/microscope/cfi/b.rows.tmp-Ef34Gh"));
	assert_true(exists("xdg/microscope/cfi/c.rows"));
	assert_false(exists("xdg/microscope/old"));
	assert_false(exists("xdg/microscope/empty"));
	assert_true(exists("xdg/microscope/keep/deep/y.index"));
	assert_true(exists("xdg/microscope/1/2/3/4/5/deep.rows"));
	assert_true(exists("xdg/microscope/fifo"));
	assert_true(exists("xdg/microscope/debug/link.syms"));
	assert_true(exists("xdg/microscope/cfi/linkdir"));
	assert_true(exists("outside/target.syms"));
	assert_int_equal(mtime_age("outside/target.syms"), 30 * DAY);
	assert_true(exists("outside/dir/old.rows"));
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
	put("xdg/microscope/cfi/old.rows", "o", 2 * HOUR);
	put("xdg/microscope/cfi/new.rows", "n", 30 * 60);
	write_at("xdg/microscope/cfi/x.rows");
	assert_false(exists("xdg/microscope/cfi/old.rows"));
	assert_true(exists("xdg/microscope/cfi/new.rows"));
	/* A longer interval: a stamp of two days is recent. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "2592000", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "604800", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 2 * DAY, 2 * DAY);
	put_probes();
	write_at("xdg/microscope/cfi/x.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	/* A shorter one: three hours are enough. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, " 7200 \n", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 3 * HOUR, 3 * HOUR);
	write_at("xdg/microscope/cfi/x.rows");
	assert_false(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/fresh.syms"));
	/* Never more than once an hour, nor for a stamp a little ahead. */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "0", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 30 * 60, 30 * 60);
	put_probes();
	write_at("xdg/microscope/cfi/x.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	age("xdg/microscope/" MS_CACHE_STAMP, -30 * 60, -30 * 60);
	write_at("xdg/microscope/cfi/x.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	/* Unparsable or negative: the defaults (a day, a week). */
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "soon", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "-5", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 20 * HOUR, 20 * HOUR);
	write_at("xdg/microscope/cfi/x.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	age("xdg/microscope/" MS_CACHE_STAMP, 25 * HOUR, 25 * HOUR);
	write_at("xdg/microscope/cfi/x.rows");
	assert_false(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/fresh.syms"));
	put("xdg/microscope/" MS_CACHE_CLEAN_INTERVAL, "9999999x", 0);
	put("xdg/microscope/" MS_CACHE_MAX_UNUSED_AGE, "99999999999999999999999", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, 25 * HOUR, 25 * HOUR);
	put_probes();
	write_at("xdg/microscope/cfi/x.rows");
	assert_false(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/fresh.syms"));
}

/* A stamp far in the future (the clock was set back) is due, and is set to now. */
static void test_future_stamp(void **state)
{
	time_t stamp_age;

	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 0);
	age("xdg/microscope/" MS_CACHE_STAMP, -30 * DAY, -30 * DAY);
	put_probes();
	write_at("xdg/microscope/cfi/x.rows");
	assert_false(exists("xdg/microscope/debug/stale.syms"));
	assert_true(exists("xdg/microscope/debug/fresh.syms"));
	/* Set to now: not before the test began, not after this check (the
	 * clock may pass a second between the two). */
	stamp_age = mtime_age("xdg/microscope/" MS_CACHE_STAMP);
	assert_true(stamp_age <= 0);
	assert_true(stamp_age >= now - time(NULL));
}

/* A folder made for a file outside the cache (a tool's own path) cleans nothing. */
static void test_outside_path(void **state)
{
	(void)state;
	put("xdg/microscope/" MS_CACHE_STAMP, "", 2 * DAY);
	put_probes();
	write_at("elsewhere/cfi/x.rows");
	write_at("xdg/microscope-other/x.rows");
	assert_true(exists("xdg/microscope/debug/stale.syms"));
	assert_int_equal(mtime_age("xdg/microscope/" MS_CACHE_STAMP), 2 * DAY);
	/* No cache at all: nothing to clean, the folder still made. */
	{
		char *home = getenv("HOME");

		home = home ? strdup(home) : NULL;
		unsetenv("XDG_CACHE_HOME");
		unsetenv("HOME");
		write_at("xdg/microscope/cfi/x.rows");
		assert_true(exists("xdg/microscope/debug/stale.syms"));
		if (home)
			setenv("HOME", home, 1);
		free(home);
	}
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
