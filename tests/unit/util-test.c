/*
 * libcommon/util pieces without a layer of their own: arrays grown by
 * doubling (grow.h) and mappings faulted in from a thread (prefault.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/grow.h"
#include "util/prefault.h"

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

static void test_prefault(void **state)
{
	size_t len = 64 * 4096;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	struct ms_prefault *pf;
	unsigned char vec[64];

	(void)state;
	assert_true(m != MAP_FAILED);
	memset(m, 1, len);
	madvise(m, len, MADV_DONTNEED);	/* gone again: every page unmapped */
	assert_int_equal(mincore(m, len, vec), 0);
	for (int i = 0; i < 64; i++)
		assert_false(vec[i] & 1);
	pf = ms_prefault_start(m, len);
	assert_non_null(pf);
	ms_prefault_wait(pf);
	/* populated by the thread: every page is mapped now */
	assert_int_equal(mincore(m, len, vec), 0);
	for (int i = 0; i < 64; i++)
		assert_true(vec[i] & 1);
	assert_int_equal(m[len - 1], 0);	/* zero pages, read only */
	ms_prefault_wait(NULL);
	assert_null(ms_prefault_start(m, 0));
	munmap(m, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_prefault),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
