/*
 * libcommon/util pieces without a layer of their own: arrays grown by
 * doubling (grow.h), mappings faulted in from a thread (prefault.h) and
 * atomic publication, rewritten in whole blocks for caches (publish.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/grow.h"
#include "util/prefault.h"
#include "util/publish.h"

static void test_reserve(void **state)
{
	uint32_t *a = NULL, alloc = 0;

	(void)state;
	/* from nothing: 64 at least */
	assert_true(ms_reserve((void **)&a, &alloc, 1, sizeof(*a)));
	assert_int_equal(alloc, 64);
	a[63] = 7;
	/* several doublings in one call, contents kept */
	assert_true(ms_reserve((void **)&a, &alloc, 1000, sizeof(*a)));
	assert_int_equal(alloc, 1024);
	assert_int_equal(a[63], 7);
	a[999] = 9;
	/* enough already: nothing moves */
	{
		uint32_t *before = a;

		assert_true(ms_reserve((void **)&a, &alloc, 1024, sizeof(*a)));
		assert_ptr_equal(a, before);
		assert_int_equal(alloc, 1024);
	}
	/* past 32-bit counts, or past memory: refused, nothing changed */
	assert_false(ms_reserve((void **)&a, &alloc, (uint64_t)UINT32_MAX + 1, sizeof(*a)));
	assert_false(ms_reserve((void **)&a, &alloc, UINT32_MAX, SIZE_MAX / 4));
	assert_int_equal(alloc, 1024);
	assert_int_equal(a[999], 9);
	free(a);
}

/* Whether each page of [p, p + len) is mapped (/proc/self/pagemap); -1: cannot tell. */
static int mapped_pages(const void *p, size_t len, size_t *n_mapped)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page;
	uint64_t *e = malloc(n * sizeof(*e));
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t got;

	assert_non_null(e);
	if (fd < 0) {
		free(e);
		return -1;
	}
	got = pread(fd, e, n * sizeof(*e), (off_t)((uintptr_t)p / page * sizeof(*e)));
	close(fd);
	assert_int_equal(got, (ssize_t)(n * sizeof(*e)));
	*n_mapped = 0;
	for (size_t i = 0; i < n; i++)
		*n_mapped += (e[i] >> 63) & 1;
	free(e);
	return 0;
}

/* A fresh buffer's whole pages populated for writing; nothing outside it touched. */
static void test_populate(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n_mapped = 0;
	char *m = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r;

	(void)state;
	assert_true(m != MAP_FAILED);
	/* From the middle of page 1 to the middle of page 6: pages 2 to 5. */
	ms_populate(m + page + page / 2, 5 * page);
	r = mapped_pages(m, 8 * page, &n_mapped);
	if (r < 0) {
		munmap(m, 8 * page);
		skip();		/* no /proc/self/pagemap: cannot tell */
	}
#ifdef MADV_POPULATE_WRITE
	assert_int_equal(n_mapped, 4);
	assert_int_equal(mapped_pages(m + 2 * page, 4 * page, &n_mapped), 0);
	assert_int_equal(n_mapped, 4);
#else
	assert_int_equal(n_mapped, 0);
#endif
	/* Less than a page, or nothing: no page, no failure. */
	ms_populate(m + 7 * page + 1, page - 2);
	ms_populate(m, 0);
	assert_int_equal(mapped_pages(m + 6 * page, 2 * page, &n_mapped), 0);
	assert_int_equal(n_mapped, 0);
	munmap(m, 8 * page);
}

/* ms_pages_alloc(): zeroed, and no page mapped until used (calloc would clear each). */
static void test_pages_alloc(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 16 * page, n = 1;
	unsigned char *p = ms_pages_alloc(len);

	(void)state;
	assert_non_null(p);
	if (mapped_pages(p, len, &n) == 0)
		assert_int_equal(n, 0);
	for (size_t i = 0; i < len; i += 512)
		assert_int_equal(p[i], 0);
	p[3 * page] = 7;
	assert_int_equal(p[3 * page], 7);
	ms_pages_free(p, len);
	ms_pages_free(NULL, len);
}

static void test_prefault_small(void **state)
{
	static char buf[4096];

	(void)state;
	/* under MS_PREFAULT_MIN: no thread, nothing to wait for */
	assert_null(ms_prefault_start(buf, sizeof(buf)));
	assert_null(ms_prefault_start(buf, 0));
	ms_prefault_wait(NULL);
}

static void test_prefault_anonymous(void **state)
{
	/*
	 * No fault-around: every page populated. The range starts 49 pages
	 * before a PMD boundary (a first part whose last page is one the
	 * thread populates in steps of 16 pages) and ends in a partial PMD.
	 */
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pmd = page * (page / 8);
	size_t len = MS_PREFAULT_MIN + 5 * page, room = len + 2 * pmd;
	unsigned char *m = mmap(NULL, room, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	struct ms_prefault *pf;
	size_t n;

	(void)state;
	assert_true(m != MAP_FAILED);
	p = (unsigned char *)(((uintptr_t)m / pmd + 1) * pmd) + pmd - 49 * page;
	if (mapped_pages(p, len, &n) == 0)
		assert_int_equal(n, 0);
	pf = ms_prefault_start(p, len);
	assert_non_null(pf);
	ms_prefault_wait(pf);
	if (mapped_pages(p, len, &n) == 0)
		assert_int_equal(n, len / page);
	assert_int_equal(p[len - 1], 0);
	munmap(m, room);
}

/*
 * A mapping already mapped by whole PMDs where ms_prefault_start() probes
 * (its first, middle and last) gets no thread; one whose middle PMD maps
 * page by page gets one, which populates it. Huge pages of anonymous
 * memory stand in for a file cached in 2 MiB folios.
 */
static unsigned char *huge_mapping(size_t len, size_t pmd, unsigned char **m, size_t *room,
				   bool small_middle)
{
	unsigned char *p;

	*room = len + pmd;
	*m = mmap(NULL, *room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(*m != MAP_FAILED);
	p = (unsigned char *)(((uintptr_t)*m + pmd - 1) / pmd * pmd);
	if (madvise(p, len, MADV_HUGEPAGE) < 0)
		return NULL;
	if (small_middle && madvise(p + len / pmd / 2 * pmd, pmd, MADV_NOHUGEPAGE) < 0)
		return NULL;
	for (size_t at = 0; at < len; at += pmd)
		p[at] = 1;
	return p;
}

static void test_prefault_pmd_mapped(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pmd = page * (page / 8);
	size_t len = MS_PREFAULT_MIN + 2 * pmd, room, n;
	unsigned char *m, *p = huge_mapping(len, pmd, &m, &room, false);
	struct ms_prefault *pf;

	(void)state;
	if (!p || mapped_pages(p + pmd - page, page, &n) < 0 || n != 1) {
		munmap(m, room);
		skip();		/* no huge pages for anonymous memory here: cannot stand in */
	}
	assert_null(ms_prefault_start(p, len));
	munmap(m, room);

	p = huge_mapping(len, pmd, &m, &room, true);
	assert_non_null(p);
	assert_int_equal(mapped_pages(p + len / pmd / 2 * pmd + pmd - page, page, &n), 0);
	assert_int_equal(n, 0);		/* the middle PMD: its first page only */
	pf = ms_prefault_start(p, len);
	assert_non_null(pf);
	ms_prefault_wait(pf);
	assert_int_equal(mapped_pages(p, len, &n), 0);
	assert_int_equal(n, len / page);
	munmap(m, room);
}

static int file_of(size_t len)
{
	int fd = memfd_create("util-test", 0);
	char block[65536];

	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (char)(i * 7);
	for (size_t done = 0; done < len; done += sizeof(block)) {
		size_t n = len - done < sizeof(block) ? len - done : sizeof(block);

		assert_int_equal(write(fd, block, n), (ssize_t)n);
	}
	return fd;
}

static void test_prefault_file(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = MS_PREFAULT_MIN + 3 * 65536 + 100;
	int fd = file_of(len);
	unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	struct ms_prefault *pf;
	size_t n;

	(void)state;
	assert_true(m != MAP_FAILED);
	pf = ms_prefault_start(m, len);
	assert_non_null(pf);
	ms_prefault_wait(pf);
	/* one page populated per fault-around window, every page mapped */
	if (mapped_pages(m, len, &n) == 0)
		assert_int_equal(n, (len + page - 1) / page);
	assert_int_equal(m[len - 1], (unsigned char)(((len - 1) % 65536) * 7));
	munmap(m, len);
	close(fd);
}

static void test_prefault_file_cut_short(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = MS_PREFAULT_MIN + 65536, kept = 1u << 20;
	int fd = file_of(len);
	unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	struct ms_prefault *pf;
	size_t n;

	(void)state;
	assert_true(m != MAP_FAILED);
	/* cut after mapping: reading past the end would raise SIGBUS, populating does not */
	assert_int_equal(ftruncate(fd, (off_t)kept), 0);
	pf = ms_prefault_start(m, len);
	assert_non_null(pf);
	ms_prefault_wait(pf);
	if (mapped_pages(m, len, &n) == 0)
		assert_true(n <= kept / page);
	assert_int_equal(m[kept - 1], (unsigned char)(((kept - 1) % 65536) * 7));
	munmap(m, len);
	close(fd);
}

/* Entries of dir other than . and .. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Publish len bytes written in pieces of 4 KiB, as a cache or not. */
static void publish_and_check(const char *dir, size_t len, bool cache)
{
	char path[256];
	unsigned char *want = malloc(len), *got = malloc(len + 1);
	struct ms_publish pub;
	struct stat st;
	ino_t written;
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	assert_non_null(want);
	assert_non_null(got);
	for (size_t i = 0; i < len; i++)
		want[i] = (unsigned char)(i * 31 + i / 4099);
	snprintf(path, sizeof(path), "%s/out", dir);
	fd = ms_publish_open(&pub, path);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	written = st.st_ino;
	for (size_t off = 0; off < len; off += 4096) {
		size_t n = len - off < 4096 ? len - off : 4096;

		assert_int_equal(write(fd, want + off, n), (ssize_t)n);
	}
	pub.cache = cache;
	assert_int_equal(ms_publish_commit(&pub), 0);
	/* The bytes, the mode of a new file, and no temporary left behind. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, (off_t)len);
	/* A large cache was written again (another file); anything else is the file written. */
	if (cache && len > MS_PAGE_BLOCK / 2)
		assert_true(st.st_ino != written);
	else
		assert_true(st.st_ino == written);
	assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
	assert_int_equal(read(fd, got, len + 1), (ssize_t)len);
	assert_memory_equal(got, want, len);
	close(fd);
	assert_int_equal(dir_entries(dir), 1);
	unlink(path);
	free(want);
	free(got);
}

static void test_publish_cache(void **state)
{
	char dir[] = "/tmp/ms-util-publish-XXXXXX";
	struct ms_publish pub;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* Several blocks and a piece, one block exactly, a small file: with and without. */
	publish_and_check(dir, 2 * MS_PAGE_BLOCK + 12345, true);
	publish_and_check(dir, MS_PAGE_BLOCK, true);
	publish_and_check(dir, 1000, true);
	publish_and_check(dir, MS_PAGE_BLOCK + 1, false);
	/* Written in place (not a regular file): nothing to rewrite. */
	fd = ms_publish_open(&pub, "/dev/null");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	pub.cache = true;
	assert_int_equal(ms_publish_commit(&pub), 0);
	/* Aborted: nothing left. */
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/gone", dir);
		fd = ms_publish_open(&pub, path);
		assert_true(fd >= 0);
		pub.cache = true;
		ms_publish_abort(&pub);
		assert_int_equal(dir_entries(dir), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* A catcher keeps the first message and counts them all; NULL restores stderr. */
static void test_error_catch(void **state)
{
	char buf[32], buf2[8];
	struct ms_error_catcher c = { buf, sizeof(buf), 0 }, c2 = { buf2, sizeof(buf2), 0 };

	(void)state;
	assert_null(ms_error_catch(&c));
	assert_int_equal(ms_error("bad query '%s'", "x"), -1);
	ms_warn("second");
	errno = ENOENT;
	assert_int_equal(ms_error_errno("open %s", "f"), -1);
	assert_string_equal(buf, "bad query 'x'");
	assert_int_equal(c.caught, 3);
	/* nested: the old one is given back, a long message cut at len */
	assert_ptr_equal(ms_error_catch(&c2), &c);
	ms_error("a message longer than eight");
	assert_string_equal(buf2, "a messa");
	assert_int_equal(c2.caught, 1);
	assert_ptr_equal(ms_error_catch(&c), &c2);
	assert_int_equal(c.caught, 0);
	assert_string_equal(buf, "");
	assert_ptr_equal(ms_error_catch(NULL), &c);
	assert_int_equal(c.caught, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_populate),
		cmocka_unit_test(test_pages_alloc),
		cmocka_unit_test(test_prefault_small),
		cmocka_unit_test(test_prefault_anonymous),
		cmocka_unit_test(test_prefault_file),
		cmocka_unit_test(test_prefault_file_cut_short),
		cmocka_unit_test(test_prefault_pmd_mapped),
		cmocka_unit_test(test_publish_cache),
		cmocka_unit_test(test_error_catch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
