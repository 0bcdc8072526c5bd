/*
 * Unit tests of the stream writer's output policy: a regular file receives
 * whole 2 MiB blocks at 2 MiB-aligned offsets until the stream is flushed
 * (so the page cache can hold it in large folios), and nothing is lost or
 * reordered by holding the rest back; a pipe or an O_APPEND file is
 * written as before, everything at each drain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "stream/protocols.h"
#include "stream/stream.h"
#include "stream/records.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK (2u << 20)

static unsigned char stack_bytes[MS_STACK_MAX];

static int tmp_file(int extra_flags)
{
	char path[] = "/tmp/ms-writer-blocks-XXXXXX";
	int fd = mkostemp(path, extra_flags);

	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static off_t file_size(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

/* A sample of about len bytes, numbered i. */
static void pack_sample(struct ms_writer *w, uint64_t i, uint32_t len)
{
	struct ms_sample s = {
		.pid = 1, .tid = 1, .time = i, .stack = stack_bytes, .stack_len = len,
	};

	assert_int_equal(ms_sample_pack(w, &s), 0);
}

/* Read fd from offset 0: n samples numbered 0.. in order, then the trailer. */
static void check_samples(int fd, uint64_t n)
{
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_sample s;
	uint64_t i = 0;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	r = ms_reader_open(dup(fd), "test");
	assert_non_null(r);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		assert_int_equal(ms_sample_unpack(&rec, &s), 0);
		assert_int_equal(s.time, i);
		assert_memory_equal(s.stack, stack_bytes, s.stack_len);
		i++;
	}
	assert_int_equal(i, n);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
}

static void test_file_gets_whole_blocks(void **state)
{
	int fd = tmp_file(0);
	struct ms_writer *w = ms_writer_open(fd, "test", MS_WRITER_NONBLOCK);
	uint64_t i;

	(void)state;
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	/* ~7 MiB of samples of varied sizes, drained after each as ms-collect does. */
	for (i = 0; i < 900; i++) {
		assert_true(ms_writer_room(w, 9000));
		pack_sample(w, i, 8192 - (uint32_t)(i % 97) * 8);
		assert_int_equal(ms_writer_drain(w), 0);
		assert_int_equal(file_size(fd) % BLOCK, 0);
	}
	assert_true(file_size(fd) >= 3 * (off_t)BLOCK);
	/* The trailer writes the rest. */
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_true(file_size(fd) % BLOCK != 0);
	assert_int_equal(ms_writer_close(w), 0);
	check_samples(fd, i);
	close(fd);
}

static void test_file_blocks_follow_offset(void **state)
{
	int fd = tmp_file(0);
	struct ms_writer *w;
	char junk[1000] = { 0 };
	struct ms_record rec;
	struct ms_reader *r;
	uint64_t i;

	(void)state;
	/* Something else wrote first: blocks end on the file's boundaries. */
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	w = ms_writer_open(fd, "test", 0);
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (i = 0; i < 600; i++) {
		pack_sample(w, i, 8000);
		assert_int_equal(ms_writer_drain(w), 0);
		assert_true(file_size(fd) == sizeof(junk) || file_size(fd) % BLOCK == 0);
	}
	assert_true(file_size(fd) >= 2 * (off_t)BLOCK);
	assert_int_equal(ms_writer_flush(w), 0);
	assert_true(file_size(fd) % BLOCK != 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	/* The stream starts after the junk and is whole. */
	assert_int_equal(lseek(fd, sizeof(junk), SEEK_SET), (off_t)sizeof(junk));
	r = ms_reader_open(dup(fd), "test");
	assert_non_null(r);
	for (i = 0; ms_reader_next(r, &rec) == MS_READ_RECORD; i++)
		;
	assert_int_equal(i, 600);
	ms_reader_free(r);
	close(fd);
}

static void test_append_file_written_at_once(void **state)
{
	int fd = tmp_file(O_APPEND);
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	off_t before;

	(void)state;
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	pack_sample(w, 0, 100);
	before = file_size(fd);
	assert_int_equal(ms_writer_drain(w), 0);
	/* O_APPEND: where a write lands is not ours to align; nothing held. */
	assert_true(file_size(fd) > before);
	assert_int_equal(ms_writer_pending(w), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	check_samples(fd, 1);
	close(fd);
}

static void test_pipe_written_at_once(void **state)
{
	int p[2];
	struct ms_writer *w;
	int queued = 0;

	(void)state;
	assert_int_equal(pipe(p), 0);
	w = ms_writer_open(p[1], "test", 0);
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	pack_sample(w, 0, 100);
	assert_int_equal(ms_writer_drain(w), 0);
	assert_int_equal(ms_writer_pending(w), 0);
	assert_int_equal(ioctl(p[0], FIONREAD, &queued), 0);
	assert_true(queued > 100);
	assert_int_equal(ms_writer_close(w), 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_gets_whole_blocks),
		cmocka_unit_test(test_file_blocks_follow_offset),
		cmocka_unit_test(test_append_file_written_at_once),
		cmocka_unit_test(test_pipe_written_at_once),
	};

	for (size_t i = 0; i < sizeof(stack_bytes); i++)
		stack_bytes[i] = (unsigned char)(i * 7 + 3);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
