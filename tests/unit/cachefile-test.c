/*
 * The header every cache file starts with (libcommon/util/cachefile.h): a
 * header ms_cachefile_init() filled passes ms_cachefile_check() with the
 * same magic, version and specific size, read from memory or mapped from a
 * file; one with any field of the common prefix wrong, a length that is
 * not the file's, another build's producer, any byte after the header
 * damaged, or a file cut short is refused with its own reason. A file
 * written by parts (ms_cachefile_begin/put/end) is the one sealed whole.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/crc32c.h"
#include "util/selfid.h"
#include "tmpdir.h"

#define MAGIC "MSTEST"
#define VERSION 7

/* A cache's own header, as a cache would define it. */
struct specific {
	uint64_t count;
	uint32_t key;
	uint32_t pad;
};

#define PAYLOAD 40
#define FILE_LEN (sizeof(struct ms_cachefile) + sizeof(struct specific) + PAYLOAD)

/* A good file: common header, specific header, payload; room for 8 more bytes. */
static union {
	uint64_t align;
	uint8_t b[FILE_LEN + 8];
} file;

static void make_good(void)
{
	struct ms_cachefile h;
	struct specific s = { 12345, 0xabcd, 0 };

	memset(&file, 0x5a, sizeof(file));
	ms_cachefile_init(&h, MAGIC, VERSION, sizeof(s), FILE_LEN);
	memcpy(file.b, &h, sizeof(h));
	memcpy(file.b + sizeof(h), &s, sizeof(s));
	for (size_t i = 0; i < PAYLOAD; i++)
		file.b[sizeof(h) + sizeof(s) + i] = (uint8_t)(i * 7);
	ms_cachefile_seal(file.b, FILE_LEN);
}

/* Check the first len bytes of the file: the fault, and the pointer returned in *spec. */
static enum ms_cachefile_fault check(size_t len, const void **spec)
{
	enum ms_cachefile_fault why = (enum ms_cachefile_fault)-1;

	*spec = ms_cachefile_check(file.b, len, MAGIC, VERSION, sizeof(struct specific), &why);
	return why;
}

/* With the common header's field at off (len bytes) set to bytes: the fault, and NULL returned. */
static enum ms_cachefile_fault patched(size_t off, const void *bytes, size_t len)
{
	const void *spec;
	enum ms_cachefile_fault why;

	make_good();
	memcpy(file.b + off, bytes, len);
	why = check(FILE_LEN, &spec);
	assert_null(spec);
	return why;
}

static void test_good(void **state)
{
	const struct ms_cachefile *h = (const void *)file.b;
	const struct specific *s;
	const void *spec;

	(void)state;
	make_good();
	assert_memory_equal(h->magic, "MSTEST\0\0", 8);
	assert_int_equal(h->version, VERSION);
	assert_int_equal(h->abi, MS_CACHEFILE_ABI);
	assert_int_equal(h->header_size, sizeof(struct ms_cachefile));
	assert_int_equal(h->specific_size, sizeof(struct specific));
	assert_int_equal(h->file_len, FILE_LEN);
	assert_memory_equal(h->producer, ms_cachefile_producer(), MS_CACHEFILE_PRODUCER);
	assert_int_equal(h->head_crc, ms_crc32c(0, file.b + sizeof(*h), sizeof(struct specific)));
	assert_int_equal(h->body_crc, ms_crc32c(0, file.b + sizeof(*h), FILE_LEN - sizeof(*h)));
	assert_int_equal(check(FILE_LEN, &spec), MS_CACHEFILE_OK);
	assert_ptr_equal(spec, file.b + sizeof(struct ms_cachefile));
	s = spec;
	assert_int_equal(s->count, 12345);
	assert_int_equal(s->key, 0xabcd);
	/* The reason may be ignored. */
	assert_ptr_equal(ms_cachefile_check(file.b, FILE_LEN, MAGIC, VERSION,
					    sizeof(struct specific), NULL), spec);
	/* A magic of the full 8 bytes, no NUL. */
	{
		struct ms_cachefile g;

		ms_cachefile_init(&g, "ABCDEFGH", 1, 0, sizeof(g));
		ms_cachefile_seal(&g, sizeof(g));
		assert_memory_equal(g.magic, "ABCDEFGH", 8);
		assert_non_null(ms_cachefile_check(&g, sizeof(g), "ABCDEFGH", 1, 0, NULL));
		assert_null(ms_cachefile_check(&g, sizeof(g), "ABCDEFG", 1, 0, NULL));
	}
}

static void test_wrong_fields(void **state)
{
	const void *spec;
	uint32_t u32;
	uint64_t u64;

	(void)state;
	/* Another kind: a letter off, a shorter magic, the expected one with a byte after its NUL. */
	assert_int_equal(patched(offsetof(struct ms_cachefile, magic), "MSTESX", 6),
			 MS_CACHEFILE_BAD_MAGIC);
	assert_int_equal(patched(offsetof(struct ms_cachefile, magic), "MSTES\0", 6),
			 MS_CACHEFILE_BAD_MAGIC);
	assert_int_equal(patched(offsetof(struct ms_cachefile, magic) + 7, "x", 1),
			 MS_CACHEFILE_BAD_MAGIC);
	make_good();
	assert_null(ms_cachefile_check(file.b, FILE_LEN, "MSKSYMS", VERSION,
				       sizeof(struct specific), NULL));
	/* The version before and after. */
	u32 = VERSION - 1;
	assert_int_equal(patched(offsetof(struct ms_cachefile, version), &u32, 4),
			 MS_CACHEFILE_BAD_VERSION);
	u32 = VERSION + 1;
	assert_int_equal(patched(offsetof(struct ms_cachefile, version), &u32, 4),
			 MS_CACHEFILE_BAD_VERSION);
	/* The ABI word of the other byte order, of 4-byte pointers, zero. */
	u32 = __builtin_bswap32(MS_CACHEFILE_ABI);
	assert_int_not_equal(u32, MS_CACHEFILE_ABI);
	assert_int_equal(patched(offsetof(struct ms_cachefile, abi), &u32, 4),
			 MS_CACHEFILE_BAD_ABI);
	u32 = (MS_CACHEFILE_ABI & ~0xff00u) | 4u << 8;
	assert_int_equal(patched(offsetof(struct ms_cachefile, abi), &u32, 4),
			 MS_CACHEFILE_BAD_ABI);
	u32 = 0;
	assert_int_equal(patched(offsetof(struct ms_cachefile, abi), &u32, 4),
			 MS_CACHEFILE_BAD_ABI);
	/* The common header's own size. */
	u32 = sizeof(struct ms_cachefile) + 8;
	assert_int_equal(patched(offsetof(struct ms_cachefile, header_size), &u32, 4),
			 MS_CACHEFILE_BAD_HEADER_SIZE);
	/* The specific header's size, in the file or as the reader expects it. */
	u32 = sizeof(struct specific) + 8;
	assert_int_equal(patched(offsetof(struct ms_cachefile, specific_size), &u32, 4),
			 MS_CACHEFILE_BAD_SPECIFIC_SIZE);
	u32 = sizeof(struct specific) - 8;
	assert_int_equal(patched(offsetof(struct ms_cachefile, specific_size), &u32, 4),
			 MS_CACHEFILE_BAD_SPECIFIC_SIZE);
	make_good();
	{
		enum ms_cachefile_fault why;

		assert_null(ms_cachefile_check(file.b, FILE_LEN, MAGIC, VERSION,
					       sizeof(struct specific) + 8, &why));
		assert_int_equal(why, MS_CACHEFILE_BAD_SPECIFIC_SIZE);
	}
	/* A length that is not the file's: each way, by a byte, and zero. */
	u64 = FILE_LEN + 1;
	assert_int_equal(patched(offsetof(struct ms_cachefile, file_len), &u64, 8),
			 MS_CACHEFILE_BAD_LENGTH);
	u64 = FILE_LEN - 1;
	assert_int_equal(patched(offsetof(struct ms_cachefile, file_len), &u64, 8),
			 MS_CACHEFILE_BAD_LENGTH);
	u64 = 0;
	assert_int_equal(patched(offsetof(struct ms_cachefile, file_len), &u64, 8),
			 MS_CACHEFILE_BAD_LENGTH);
	/* The good header, the file longer or shorter than it says. */
	make_good();
	assert_int_equal(check(FILE_LEN + 8, &spec), MS_CACHEFILE_BAD_LENGTH);
	assert_null(spec);
	assert_int_equal(check(FILE_LEN - 1, &spec), MS_CACHEFILE_BAD_LENGTH);
	assert_null(spec);
}

static void test_truncated(void **state)
{
	const void *spec;
	size_t len;

	(void)state;
	make_good();
	/* Shorter than the common header: nothing of it is read. */
	for (len = 0; len < sizeof(struct ms_cachefile); len++) {
		assert_int_equal(check(len, &spec), MS_CACHEFILE_SHORT);
		assert_null(spec);
	}
	/* Cut in the specific header, whatever file_len says. */
	for (; len < sizeof(struct ms_cachefile) + sizeof(struct specific); len++) {
		struct ms_cachefile *h = (void *)file.b;

		h->file_len = len;
		assert_int_equal(check(len, &spec), MS_CACHEFILE_SHORT);
		assert_null(spec);
	}
	/* Both headers whole and nothing after: the body's CRC was of more. */
	((struct ms_cachefile *)(void *)file.b)->file_len = len;
	assert_int_equal(check(len, &spec), MS_CACHEFILE_BAD_CRC);
	assert_null(spec);
	/* Sealed as that: the length decides. */
	ms_cachefile_seal(file.b, len);
	assert_int_equal(check(len, &spec), MS_CACHEFILE_OK);
	assert_non_null(spec);
}

/*
 * The producer is this program's build id (it has one: the build links with
 * --build-id), and another build's is refused, as is a file whose producer
 * is the version string of a build without an id.
 */
static void test_producer(void **state)
{
	uint8_t id[MS_CACHEFILE_PRODUCER] = { 0 }, other[MS_CACHEFILE_PRODUCER];
	size_t n = ms_self_build_id(id, sizeof(id));

	(void)state;
	assert_true(n >= 8);
	assert_memory_equal(ms_cachefile_producer(), id, sizeof(id));
	memcpy(other, id, sizeof(other));
	other[n - 1] ^= 1;
	assert_int_equal(patched(offsetof(struct ms_cachefile, producer), other, sizeof(other)),
			 MS_CACHEFILE_BAD_PRODUCER);
	memset(other, 0, sizeof(other));
	snprintf((char *)other, sizeof(other), "v0.1.0");
	assert_int_equal(patched(offsetof(struct ms_cachefile, producer), other, sizeof(other)),
			 MS_CACHEFILE_BAD_PRODUCER);
}

/*
 * Every byte after the common header, flipped: refused as damaged. Of the
 * cache's own header by both checks; of the payload only by the whole
 * check (a cache checked by parts checks its payload's parts itself). The
 * CRCs themselves, flipped: refused.
 */
static void test_damaged(void **state)
{
	const size_t own = sizeof(struct ms_cachefile), body = own + sizeof(struct specific);
	const void *spec;

	(void)state;
	for (size_t i = own; i < FILE_LEN; i++) {
		for (int bit = 0; bit < 8; bit += 7) {
			make_good();
			file.b[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(check(FILE_LEN, &spec), MS_CACHEFILE_BAD_CRC);
			assert_null(spec);
			spec = ms_cachefile_check_head(file.b, FILE_LEN, MAGIC, VERSION,
						       sizeof(struct specific), NULL);
			if (i < body)
				assert_null(spec);
			else
				assert_ptr_equal(spec, file.b + own);
		}
	}
	for (size_t f = 0; f < 2; f++) {
		size_t at = f ? offsetof(struct ms_cachefile, body_crc) :
				offsetof(struct ms_cachefile, head_crc);

		make_good();
		file.b[at] ^= 0x10;
		assert_int_equal(check(FILE_LEN, &spec), MS_CACHEFILE_BAD_CRC);
		assert_true(!ms_cachefile_check_head(file.b, FILE_LEN, MAGIC, VERSION,
						     sizeof(struct specific), NULL) == !f);
	}
}

/* Written by parts, in pieces cut at every place: the same bytes as sealed whole. */
static void test_written_by_parts(void **state)
{
	char dir[256], path[300];
	uint8_t back[FILE_LEN + 8];

	(void)state;
	tmpdir_make(dir, sizeof(dir), "cachefile-test");
	snprintf(path, sizeof(path), "%s/parts", dir);
	make_good();
	for (size_t cut = 0; cut <= FILE_LEN - sizeof(struct ms_cachefile); cut++) {
		struct ms_cachefile_out o;
		const uint8_t *body = file.b + sizeof(struct ms_cachefile);
		size_t rest = FILE_LEN - sizeof(struct ms_cachefile) - cut;
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		assert_int_equal(ms_cachefile_begin(&o, fd, MAGIC, VERSION,
						    sizeof(struct specific)), 0);
		assert_int_equal(ms_cachefile_put(&o, body, cut), 0);
		assert_int_equal(ms_cachefile_put(&o, body + cut, rest), 0);
		assert_int_equal(ms_cachefile_end(&o), 0);
		assert_int_equal(pread(fd, back, sizeof(back), 0), FILE_LEN);
		assert_memory_equal(back, file.b, FILE_LEN);
		close(fd);
	}
	/* A writer that never put its own header: never a valid file. */
	{
		struct ms_cachefile_out o;
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		assert_int_equal(ms_cachefile_begin(&o, fd, MAGIC, VERSION,
						    sizeof(struct specific)), 0);
		assert_int_equal(ms_cachefile_put(&o, file.b, 4), 0);
		assert_int_equal(ms_cachefile_end(&o), -1);
		close(fd);
	}
	assert_int_equal(tmpdir_remove(dir), 0);
}

/* Written to a file and mapped as the caches map theirs (ms_cache_map()). */
static void test_mapped(void **state)
{
	char dir[256], path[300];
	size_t len = 0;
	void *map;
	FILE *f;

	(void)state;
	tmpdir_make(dir, sizeof(dir), "cachefile-test");
	snprintf(path, sizeof(path), "%s/c", dir);
	make_good();
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(file.b, 1, FILE_LEN, f), FILE_LEN);
	assert_int_equal(fclose(f), 0);
	assert_non_null(map = ms_cache_map(path, sizeof(struct ms_cachefile), 1 << 20, &len));
	assert_int_equal(len, FILE_LEN);
	assert_ptr_equal(ms_cachefile_check(map, len, MAGIC, VERSION, sizeof(struct specific),
					    NULL), (uint8_t *)map + sizeof(struct ms_cachefile));
	munmap(map, len);
	/* A byte more on disk: refused. */
	assert_non_null(f = fopen(path, "a"));
	assert_int_equal(fputc(0, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(map = ms_cache_map(path, sizeof(struct ms_cachefile), 1 << 20, &len));
	assert_null(ms_cachefile_check(map, len, MAGIC, VERSION, sizeof(struct specific), NULL));
	munmap(map, len);
	assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_wrong_fields),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_producer),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_written_by_parts),
		cmocka_unit_test(test_mapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
