/*
 * Opening a file someone else named (util/safeopen.h): a regular file
 * opens, blocking again; a FIFO is refused at once, never waited on; a
 * device, a folder and a file over the bound are refused; a link is
 * followed or refused as asked, below a folder none is followed at all.
 * A hang fails the test (alarm) rather than stopping the suite.
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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safeopen.h"
#include "tmpdir.h"

static char dir[256];

static void path_of(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", dir, rel);
}

static void put(const char *rel, const char *text)
{
	char p[400];
	FILE *f;

	path_of(p, sizeof(p), rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void link_to(const char *target_rel, const char *rel)
{
	char p[400], q[400];

	path_of(p, sizeof(p), target_rel);
	path_of(q, sizeof(q), rel);
	assert_int_equal(symlink(p, q), 0);
}

/* ms_open_regular() of rel (below the test's folder, by full path): the fd or -1, why. */
static int try_open(const char *rel, int flags, uint64_t max, const char **why)
{
	char p[400];

	path_of(p, sizeof(p), rel);
	*why = NULL;
	return ms_open_regular(AT_FDCWD, p, flags, max, NULL, why);
}

static int setup(void **state)
{
	char p[400];

	(void)state;
	tmpdir_make(dir, sizeof(dir), "safeopen-test");
	put("file", "hello");
	path_of(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	path_of(p, sizeof(p), "sub");
	assert_int_equal(mkdir(p, 0700), 0);
	put("sub/inner", "inner");
	link_to("file", "link");
	link_to("fifo", "fifolink");
	link_to("sub", "sublink");
	alarm(30);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	assert_int_equal(tmpdir_remove(dir), 0);
	return 0;
}

static void test_regular(void **state)
{
	struct stat st;
	const char *why = "unset";
	char p[400], buf[16];
	int fd;

	(void)state;
	path_of(p, sizeof(p), "file");
	fd = ms_open_regular(AT_FDCWD, p, MS_OPEN_NOFOLLOW, 1 << 20, &st, &why);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 5);
	/* Blocking again, close-on-exec, read-only. */
	assert_int_equal(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	/* Exactly at the bound: yes; a byte over: no. */
	fd = try_open("file", 0, 5, &why);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(try_open("file", 0, 4, &why), -1);
	assert_int_equal(errno, EFBIG);
	assert_non_null(strstr(why, "larger"));
	/* Missing: open's own reason. */
	assert_int_equal(try_open("missing", 0, 100, &why), -1);
	assert_int_equal(errno, ENOENT);
}

/* A FIFO (the hang of issue 15): refused at once, never opened for a read that waits. */
static void test_fifo(void **state)
{
	const char *why;

	(void)state;
	assert_int_equal(try_open("fifo", 0, 100, &why), -1);
	assert_non_null(strstr(why, "not a regular file"));
	assert_int_equal(try_open("fifo", MS_OPEN_NOFOLLOW, 100, &why), -1);
	assert_int_equal(try_open("fifolink", 0, 100, &why), -1);
	assert_non_null(strstr(why, "not a regular file"));
}

static void test_not_files(void **state)
{
	const char *why;

	(void)state;
	assert_int_equal(ms_open_regular(AT_FDCWD, "/dev/null", 0, 100, NULL, &why), -1);
	assert_non_null(strstr(why, "not a regular file"));
	assert_int_equal(try_open("sub", 0, 1 << 20, &why), -1);
	assert_non_null(strstr(why, "not a regular file"));
}

static void test_links(void **state)
{
	const char *why;
	char p[400];
	int fd, d;

	(void)state;
	/* Followed unless asked not to (a debug folder's .build-id links). */
	fd = try_open("link", 0, 100, &why);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(try_open("link", MS_OPEN_NOFOLLOW, 100, &why), -1);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(why, "symbolic link"));
	/* Below a folder: no link anywhere, and nothing above it. */
	path_of(p, sizeof(p), "");
	d = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	fd = ms_open_regular(d, "sub/inner", MS_OPEN_NO_LINKS, 100, NULL, &why);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ms_open_regular(d, "sublink/inner", MS_OPEN_NO_LINKS, 100, NULL, &why),
			 -1);
	assert_int_equal(ms_open_regular(d, "link", MS_OPEN_NO_LINKS, 100, NULL, &why), -1);
	assert_int_equal(ms_open_regular(d, "../x", MS_OPEN_NO_LINKS, 100, NULL, &why), -1);
	assert_int_equal(ms_open_regular(d, "/etc/passwd", MS_OPEN_NO_LINKS, 1 << 20, NULL, &why),
			 -1);
	/* Folders the same way. */
	fd = ms_open_dir_below(d, "sub");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ms_open_dir_below(d, "sublink"), -1);
	assert_int_equal(ms_open_dir_below(d, "sub/.."), -1);
	close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_not_files),
		cmocka_unit_test(test_links),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
