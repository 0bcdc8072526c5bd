/*
 * Unit tests of the record stream (libcommon/stream): round trips of every
 * record kind, the header and trailer rules, and hostile input that must
 * fail fast and without allocating what a header claims.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "stream/stream.h"
#include "stream/fastpack.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/schema.h"
#include <msgpack.h>
#include "stream/stackfile.h"
#include "util/error.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * Count allocations made by anything in this process (msgpack-c included),
 * to prove that reading allocates nothing per record and that a hostile
 * header never makes anything reserve what it claims.
 */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static size_t n_allocs, max_alloc;

static void note_alloc(size_t n)
{
	n_allocs++;
	if (n > max_alloc)
		max_alloc = n;
}

void *malloc(size_t n)
{
	note_alloc(n);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	note_alloc(n * m);
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	note_alloc(n);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

static void reset_allocs(void)
{
	n_allocs = 0;
	max_alloc = 0;
}

/* ---- helpers ---- */

static int new_fd(void)
{
	int fd = memfd_create("stream-test", 0);

	assert_true(fd >= 0);
	return fd;
}

static void rewind_fd(int fd)
{
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
}

static void write_bytes(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static size_t fd_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	assert_true(end >= 0);
	return end;
}

static char *read_all(int fd, size_t *len)
{
	size_t n = fd_size(fd);
	char *buf = malloc(n + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, n, 0), (ssize_t)n);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Messages go to a memfd while a test looks at them. */
static int saved_stderr = -1, capture_fd = -1;
static char captured[8192];

static void begin_capture(void)
{
	fflush(stderr);
	saved_stderr = dup(2);
	capture_fd = new_fd();
	dup2(capture_fd, 2);
}

static const char *end_capture(void)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	n = pread(capture_fd, captured, sizeof(captured) - 1, 0);
	captured[n > 0 ? n : 0] = '\0';
	close(capture_fd);
	return captured;
}

/* A test that failed while capturing gets its stderr back. */
static int restore_stderr(void **state)
{
	if (saved_stderr >= 0)
		fputs(end_capture(), stderr);
	return 0;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A stream file holding a header from producer "ms-test 1.0", no trailer. */
static int header_only(void)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	assert_int_equal(ms_writer_close(w), 0);
	return fd;
}

/* Open a stream file for reading from its start. */
static struct ms_reader *reopen(int fd)
{
	rewind_fd(fd);
	return ms_reader_open(fd, "test");
}

static struct ms_str S(const char *s)
{
	struct ms_str r = { s, strlen(s) };

	return r;
}

static void assert_str(struct ms_str s, const char *want)
{
	assert_int_equal(s.len, strlen(want));
	assert_memory_equal(s.ptr, want, s.len);
}

/* ---- every record kind ---- */

static struct ms_sample sample_in, sample_out;
static struct ms_stack stack_in, stack_out;
static struct ms_attr attr_in, attr_out;
static uint8_t stack_bytes[MS_STACK_MAX];

static void fill_records(void)
{
	sample_in = (struct ms_sample){
		.pid = 100, .tid = 101, .time = 123456789012ull, .cpu = 1,
		.period = 1000000, .ip = 0xffffffff81000000ull,
		.cpumode = MS_CPUMODE_KERNEL, .regs_abi = 2, .regs_mask = 0xff01ff,
	};
	sample_in.n_kchain = 3;
	for (uint32_t i = 0; i < 3; i++)
		sample_in.kchain[i] = 0xffffffff81000000ull + i;
	sample_in.n_uchain = MS_CHAIN_MAX;
	for (uint32_t i = 0; i < MS_CHAIN_MAX; i++)
		sample_in.uchain[i] = 0x400000 + 16 * i;
	sample_in.n_regs = __builtin_popcountll(sample_in.regs_mask);
	for (uint32_t i = 0; i < sample_in.n_regs; i++)
		sample_in.regs[i] = UINT64_MAX - i;
	for (size_t i = 0; i < sizeof(stack_bytes); i++)
		stack_bytes[i] = i * 7;
	sample_in.stack = stack_bytes;
	sample_in.stack_len = MS_STACK_MAX;

	stack_in = (struct ms_stack){
		.pid = 7, .tid = 8, .time = 9, .cpu = 0, .period = 10,
		.reason = MS_END_NO_CFI, .n_frames = MS_FRAMES_MAX,
	};
	for (uint32_t i = 0; i < MS_FRAMES_MAX; i++) {
		stack_in.frames[i].module = i % 5;
		stack_in.frames[i].address = 0x1000 + i;
		stack_in.frames[i].flags = i ? MS_FRAME_RETURN : 0;
	}

	attr_in = (struct ms_attr){
		.type = 1, .config = 0, .sample_type = 0x1234f, .read_format = 4,
		.sample_regs_user = 0xff01ff, .sample_stack_user = 8192,
		.flags = MS_ATTR_SAMPLE_ID_ALL | MS_ATTR_BUILD_ID, .n_ids = 2,
		.ids = { 17, 18 },
	};
}

static void write_all_kinds(struct ms_writer *w)
{
	static const uint8_t raw_bytes[] = { 9, 0, 0, 0, 0x30, 0, 0, 0 };
	struct ms_problem problem = { S("ms-decode"), S("truncated-sample"), 3, S("at byte 5") };
	struct ms_info info_text = { .key = S("command"), .is_text = true, .text = S("./burn 1") };
	struct ms_info info_num = { .key = S("frequency"), .number = 999 };
	struct ms_raw raw = { 1, raw_bytes, sizeof(raw_bytes) };
	struct ms_target target = { .pid = 42, .launched = true, .argc = 2,
				    .argv = { S("./burn"), S("") } };
	struct ms_target_exit texit = { 42, 0x0900, 137 };
	struct ms_mmap mmap_rec = {
		.pid = 1, .tid = 2, .time = 3, .start = 0x400000, .len = 0x1000,
		.pgoff = 0x2000, .maj = 8, .min = 1, .ino = 1234, .ino_generation = 5,
		.prot = 5, .flags = 2, .cpumode = MS_CPUMODE_USER, .synthesized = true,
		.filename = S("/usr/bin/burn"), .build_id_len = 20,
	};
	struct ms_comm comm = { 1, 2, 3, true, false, S("burn") };
	struct ms_task fork_rec = { 10, 1, 11, 1, 1000 };
	struct ms_task exit_rec = { 10, 1, 11, 1, 2000 };
	struct ms_lost lost = { MS_LOST_COLLECTOR, 5, 6, 7 };
	struct ms_throttle throttle = { 8, 9, true };
	struct ms_duty duty = { 10, 250000, 2500, 30000, 20000 };
	struct ms_module module = {
		.id = 3, .kind = MS_MODULE_FILE, .path = S("/lib/libc.so.6"),
		.build_id_len = 4, .build_id = { 1, 2, 3, 4 }, .dev_maj = 8, .dev_min = 2,
		.ino = 99, .size = 1 << 20, .mtime = 1700000000,
	};
	struct ms_frame frame = {
		.module = 3, .address = 0x1234, .name = S("main"), .symbol_start = 0x1200,
		.reason = MS_SYM_OK,
	};

	for (int i = 0; i < 20; i++)
		mmap_rec.build_id[i] = 0xa0 + i;
	assert_int_equal(ms_problem_pack(w, &problem), 0);
	assert_int_equal(ms_info_pack(w, &info_text), 0);
	assert_int_equal(ms_info_pack(w, &info_num), 0);
	assert_int_equal(ms_attr_pack(w, &attr_in), 0);
	assert_int_equal(ms_raw_pack(w, &raw), 0);
	assert_int_equal(ms_target_pack(w, &target), 0);
	assert_int_equal(ms_target_exit_pack(w, &texit), 0);
	assert_int_equal(ms_round_pack(w), 0);
	assert_int_equal(ms_sample_pack(w, &sample_in), 0);
	assert_int_equal(ms_mmap_pack(w, &mmap_rec), 0);
	assert_int_equal(ms_comm_pack(w, &comm), 0);
	assert_int_equal(ms_task_pack(w, MS_REC_FORK, &fork_rec), 0);
	assert_int_equal(ms_task_pack(w, MS_REC_EXIT, &exit_rec), 0);
	assert_int_equal(ms_lost_pack(w, &lost), 0);
	assert_int_equal(ms_throttle_pack(w, &throttle), 0);
	assert_int_equal(ms_duty_pack(w, &duty), 0);
	assert_int_equal(ms_module_pack(w, &module), 0);
	assert_int_equal(ms_stack_pack(w, &stack_in), 0);
	assert_int_equal(ms_frame_pack(w, &frame), 0);
}

#define ALL_KINDS_RECORDS 19

static void check_all_kinds(struct ms_reader *r)
{
	struct ms_record rec;
	struct ms_problem problem;
	struct ms_info info;
	struct ms_raw raw;
	struct ms_target target;
	struct ms_target_exit texit;
	struct ms_mmap m;
	struct ms_comm comm;
	struct ms_task task;
	struct ms_lost lost;
	struct ms_throttle throttle;
	struct ms_duty duty;
	struct ms_module module;
	struct ms_frame frame;

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_PROBLEM);
	assert_int_equal(rec.index, 0);
	assert_int_equal(ms_problem_unpack(&rec, &problem), 0);
	assert_str(problem.stage, "ms-decode");
	assert_str(problem.code, "truncated-sample");
	assert_int_equal(problem.count, 3);
	assert_str(problem.detail, "at byte 5");

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_info_unpack(&rec, &info), 0);
	assert_str(info.key, "command");
	assert_true(info.is_text);
	assert_str(info.text, "./burn 1");
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_info_unpack(&rec, &info), 0);
	assert_str(info.key, "frequency");
	assert_false(info.is_text);
	assert_int_equal(info.number, 999);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	memset(&attr_out, 0xff, sizeof(attr_out));
	assert_int_equal(ms_attr_unpack(&rec, &attr_out), 0);
	assert_int_equal(attr_out.type, attr_in.type);
	assert_int_equal(attr_out.sample_type, attr_in.sample_type);
	assert_int_equal(attr_out.read_format, attr_in.read_format);
	assert_int_equal(attr_out.sample_regs_user, attr_in.sample_regs_user);
	assert_int_equal(attr_out.sample_stack_user, attr_in.sample_stack_user);
	assert_int_equal(attr_out.flags, attr_in.flags);
	assert_int_equal(attr_out.n_ids, 2);
	assert_int_equal(attr_out.ids[1], 18);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_raw_unpack(&rec, &raw), 0);
	assert_int_equal(raw.cpu, 1);
	assert_int_equal(raw.len, 8);
	assert_int_equal(raw.data[4], 0x30);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_target_unpack(&rec, &target), 0);
	assert_int_equal(target.pid, 42);
	assert_true(target.launched);
	assert_int_equal(target.argc, 2);
	assert_str(target.argv[0], "./burn");
	assert_str(target.argv[1], "");

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_target_exit_unpack(&rec, &texit), 0);
	assert_int_equal(texit.pid, 42);
	assert_int_equal(texit.wait_status, 0x0900);
	assert_int_equal(texit.exit_code, 137);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_ROUND);
	assert_int_equal(rec.len, 2);	/* [14] */

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	memset(&sample_out, 0, sizeof(sample_out));
	assert_int_equal(ms_sample_unpack(&rec, &sample_out), 0);
	assert_int_equal(sample_out.pid, 100);
	assert_int_equal(sample_out.tid, 101);
	assert_int_equal(sample_out.time, sample_in.time);
	assert_int_equal(sample_out.cpu, 1);
	assert_int_equal(sample_out.period, sample_in.period);
	assert_int_equal(sample_out.ip, sample_in.ip);
	assert_int_equal(sample_out.cpumode, MS_CPUMODE_KERNEL);
	assert_int_equal(sample_out.n_kchain, 3);
	assert_memory_equal(sample_out.kchain, sample_in.kchain, 3 * sizeof(uint64_t));
	assert_int_equal(sample_out.n_uchain, MS_CHAIN_MAX);
	assert_memory_equal(sample_out.uchain, sample_in.uchain, MS_CHAIN_MAX * sizeof(uint64_t));
	assert_int_equal(sample_out.regs_abi, 2);
	assert_int_equal(sample_out.regs_mask, 0xff01ff);
	assert_int_equal(sample_out.n_regs, 17);
	assert_memory_equal(sample_out.regs, sample_in.regs, 17 * sizeof(uint64_t));
	assert_int_equal(sample_out.stack_len, MS_STACK_MAX);
	assert_memory_equal(sample_out.stack, stack_bytes, MS_STACK_MAX);
	/* Borrowed from the reader's buffer, not copied. */
	assert_true((const char *)sample_out.stack > rec.bytes &&
		    (const char *)sample_out.stack < rec.bytes + rec.len);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_mmap_unpack(&rec, &m), 0);
	assert_int_equal(m.pid, 1);
	assert_int_equal(m.tid, 2);
	assert_int_equal(m.time, 3);
	assert_int_equal(m.start, 0x400000);
	assert_int_equal(m.len, 0x1000);
	assert_int_equal(m.pgoff, 0x2000);
	assert_int_equal(m.maj, 8);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.ino, 1234);
	assert_int_equal(m.ino_generation, 5);
	assert_int_equal(m.prot, 5);
	assert_int_equal(m.flags, 2);
	assert_int_equal(m.cpumode, MS_CPUMODE_USER);
	assert_true(m.synthesized);
	assert_str(m.filename, "/usr/bin/burn");
	assert_int_equal(m.build_id_len, 20);
	assert_int_equal(m.build_id[19], 0xa0 + 19);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_comm_unpack(&rec, &comm), 0);
	assert_int_equal(comm.pid, 1);
	assert_int_equal(comm.tid, 2);
	assert_int_equal(comm.time, 3);
	assert_true(comm.exec);
	assert_false(comm.synthesized);
	assert_str(comm.comm, "burn");

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_FORK);
	assert_int_equal(ms_task_unpack(&rec, &task), 0);
	assert_int_equal(task.pid, 10);
	assert_int_equal(task.ppid, 1);
	assert_int_equal(task.tid, 11);
	assert_int_equal(task.ptid, 1);
	assert_int_equal(task.time, 1000);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_EXIT);
	assert_int_equal(ms_task_unpack(&rec, &task), 0);
	assert_int_equal(task.time, 2000);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_lost_unpack(&rec, &lost), 0);
	assert_int_equal(lost.source, MS_LOST_COLLECTOR);
	assert_int_equal(lost.time, 5);
	assert_int_equal(lost.id, 6);
	assert_int_equal(lost.count, 7);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_throttle_unpack(&rec, &throttle), 0);
	assert_int_equal(throttle.time, 8);
	assert_int_equal(throttle.id, 9);
	assert_true(throttle.unthrottle);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_duty_unpack(&rec, &duty), 0);
	assert_int_equal(duty.time, 10);
	assert_int_equal(duty.duty_ppm, 250000);
	assert_int_equal(duty.rate, 2500);
	assert_int_equal(duty.share_ppm, 30000);
	assert_int_equal(duty.budget_ppm, 20000);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_module_unpack(&rec, &module), 0);
	assert_int_equal(module.id, 3);
	assert_int_equal(module.kind, MS_MODULE_FILE);
	assert_str(module.path, "/lib/libc.so.6");
	assert_int_equal(module.build_id_len, 4);
	assert_int_equal(module.build_id[3], 4);
	assert_int_equal(module.dev_maj, 8);
	assert_int_equal(module.dev_min, 2);
	assert_int_equal(module.ino, 99);
	assert_int_equal(module.size, 1 << 20);
	assert_int_equal(module.mtime, 1700000000);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), 0);
	assert_int_equal(stack_out.pid, 7);
	assert_int_equal(stack_out.tid, 8);
	assert_int_equal(stack_out.time, 9);
	assert_int_equal(stack_out.period, 10);
	assert_int_equal(stack_out.reason, MS_END_NO_CFI);
	assert_int_equal(stack_out.n_frames, MS_FRAMES_MAX);
	assert_memory_equal(stack_out.frames, stack_in.frames, sizeof(stack_in.frames));

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_frame_unpack(&rec, &frame), 0);
	assert_int_equal(frame.module, 3);
	assert_int_equal(frame.address, 0x1234);
	assert_str(frame.name, "main");
	assert_int_equal(frame.symbol_start, 0x1200);
	assert_int_equal(frame.reason, MS_SYM_OK);
	assert_int_equal(rec.index, ALL_KINDS_RECORDS - 1);
}

static int all_kinds_stream(bool complete)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);

	assert_non_null(w);
	fill_records();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	write_all_kinds(w);
	assert_int_equal(ms_writer_records(w), ALL_KINDS_RECORDS);
	assert_int_equal(ms_writer_trailer(w, complete), 0);
	assert_int_equal(ms_writer_close(w), 0);
	return fd;
}

static void test_round_trip_every_kind(void **state)
{
	int fd = all_kinds_stream(true);
	struct ms_reader *r = reopen(fd);
	struct ms_record rec;

	assert_non_null(r);
	check_all_kinds(r);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	assert_int_equal(ms_reader_trailer(r)->records, ALL_KINDS_RECORDS);
	assert_true(ms_reader_trailer(r)->complete);
	assert_int_equal(ms_reader_offset(r), fd_size(fd));
	/* END is sticky. */
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
}

static void test_header_and_trailer(void **state)
{
	int fd = new_fd(), fd2 = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_reader *r;
	const struct ms_header *h;
	struct ms_record rec;

	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	assert_int_equal(ms_writer_trailer(w, false), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(fd);
	assert_non_null(r);
	h = ms_reader_header(r);
	assert_int_equal(h->major, MS_STREAM_MAJOR);
	assert_int_equal(h->minor, MS_STREAM_MINOR);
	assert_int_equal(h->n_producers, 1);
	assert_string_equal(h->producers[0].name, "ms-collect");
	assert_string_equal(h->producers[0].version, "0.1.0");
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	assert_int_equal(ms_reader_trailer(r)->records, 0);
	assert_false(ms_reader_trailer(r)->complete);

	/* A stage appends itself to the producers it read. */
	w = ms_writer_open(fd2, "test2", 0);
	assert_int_equal(ms_writer_header(w, h, "ms-decode", "0.2"), 0);
	assert_int_equal(ms_writer_trailer(w, ms_reader_trailer(r)->complete), 0);
	assert_int_equal(ms_writer_close(w), 0);
	ms_reader_free(r);

	r = reopen(fd2);
	h = ms_reader_header(r);
	assert_int_equal(h->n_producers, 2);
	assert_string_equal(h->producers[0].name, "ms-collect");
	assert_string_equal(h->producers[1].name, "ms-decode");
	assert_string_equal(h->producers[1].version, "0.2");
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	assert_false(ms_reader_trailer(r)->complete);
	ms_reader_free(r);
	close(fd);
	close(fd2);
}

static void test_writer_misuse(void **state)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_lost l = { 0 };
	const char *err;

	begin_capture();
	assert_int_equal(ms_lost_pack(w, &l), -1);	/* before the header */
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), -1);
	assert_int_equal(ms_lost_pack(w, &l), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_lost_pack(w, &l), -1);	/* after the trailer */
	err = end_capture();
	assert_contains(err, "before the header");
	assert_contains(err, "second header");
	assert_contains(err, "after the trailer");
	assert_int_equal(ms_writer_records(w), 1);
	assert_int_equal(ms_writer_close(w), 0);

	/* The refused records left no bytes behind: the stream reads clean. */
	{
		struct ms_reader *r = reopen(fd);
		struct ms_record rec;

		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
		ms_reader_free(r);
	}
	close(fd);
}

static void test_oversized_record_not_written(void **state)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	static uint8_t big[MS_RECORD_MAX];
	struct ms_raw raw = { 0, big, sizeof(big) };
	struct ms_lost l = { 0, 1, 2, 3 };
	struct ms_reader *r;
	struct ms_record rec;
	const char *err;

	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_lost_pack(w, &l), 0);
	begin_capture();
	assert_int_equal(ms_raw_pack(w, &raw), -1);
	err = end_capture();
	assert_contains(err, "raw record is larger than the limit of 163840 bytes");
	assert_int_equal(ms_lost_pack(w, &l), 0);
	assert_int_equal(ms_writer_records(w), 2);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_LOST);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
}

static void test_many_records_cross_buffers(void **state)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_sample s;
	uint64_t n = 0;

	fill_records();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	/* About 70 KiB each: records straddle both buffers' edges. */
	for (int i = 0; i < 40; i++) {
		sample_in.time = i;
		sample_in.stack_len = MS_STACK_MAX - 97 * i;
		assert_int_equal(ms_sample_pack(w, &sample_in), 0);
	}
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(fd);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		assert_int_equal(ms_sample_unpack(&rec, &s), 0);
		assert_int_equal(s.time, n);
		assert_int_equal(s.stack_len, MS_STACK_MAX - 97 * n);
		assert_memory_equal(s.stack, stack_bytes, s.stack_len);
		n++;
	}
	assert_int_equal(n, 40);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
}

/* ---- bad streams ---- */

/* Read fd to its end; return the last result and the messages printed. */
static int drain(int fd, const char **err)
{
	struct ms_reader *r;
	struct ms_record rec;
	int ret;

	begin_capture();
	r = reopen(fd);
	if (!r) {
		*err = end_capture();
		return 99;
	}
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		;
	ms_reader_free(r);
	*err = end_capture();
	return ret;
}

static void test_truncated_between_records(void **state)
{
	int fd = all_kinds_stream(true);
	size_t len;
	char *bytes = read_all(fd, &len);
	int fd2 = new_fd();
	struct ms_reader *r;
	struct ms_record rec;
	const char *err;
	int n = 0;

	/* The trailer [1, 18, true] is the last 4 bytes. */
	write_bytes(fd2, bytes, len - 4);
	begin_capture();
	r = reopen(fd2);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD)
		n++;
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_ERROR);
	ms_reader_free(r);
	err = end_capture();
	assert_int_equal(n, ALL_KINDS_RECORDS);
	assert_contains(err, "'test': stream cut short after 19 records (byte ");
	assert_contains(err, "the producer (ms-test 1.0) did not finish");
	assert_int_equal(count_lines(err), 1);

	close(fd2);
	fd2 = new_fd();
	write_bytes(fd2, bytes, len - 4);
	assert_int_equal(drain(fd2, &err), MS_READ_TRUNCATED);
	free(bytes);
	close(fd);
	close(fd2);
}

static void test_truncated_everywhere(void **state)
{
	int fd = all_kinds_stream(true);
	size_t len, header_len;
	char *bytes = read_all(fd, &len);
	const char *err;
	int fd2;

	fd2 = header_only();
	header_len = fd_size(fd2);
	close(fd2);
	/* Every cut of a stream is caught: no crash, no END. */
	for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
		int ret;

		fd2 = new_fd();
		write_bytes(fd2, bytes, cut);
		ret = drain(fd2, &err);
		if (cut < header_len)
			assert_int_equal(ret, 99);
		else
			assert_int_equal(ret, MS_READ_TRUNCATED);
		assert_int_equal(count_lines(err), 1);
		close(fd2);
	}
	free(bytes);
	close(fd);
}

static void test_empty_input(void **state)
{
	int fd = new_fd();
	const char *err;

	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "'test' is empty: no stream header");
	close(fd);
}

static void test_wrong_magic(void **state)
{
	/* [0, "microscope-strean", 1, 0, [["x", "1"]]] */
	static const char bad[] = "\x95\x00\xb1microscope-strean\x01\x00\x91\x92\xa1x\xa1\x31";
	int fd = new_fd();
	const char *err;

	write_bytes(fd, bad, sizeof(bad) - 1);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "'test' is not a microscope stream");
	close(fd);

	/* Text is not a stream either, and the message says what it saw. */
	fd = new_fd();
	write_bytes(fd, "hello\n", 6);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "at byte 0 is an integer (0x68), not an array");
	close(fd);

	/* A stream must start with its header, not another record. */
	fd = new_fd();
	write_bytes(fd, "\x92\x0e\x00", 3);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "is not a microscope stream");
	close(fd);
}

static void test_newer_major_version(void **state)
{
	static const char v2[] = "\x95\x00\xb1microscope-stream\x02\x03\x91\x92\xa1x\xa1\x31";
	static const char v0[] = "\x95\x00\xb1microscope-stream\x00\x09\x91\x92\xa1x\xa1\x31";
	static const char minor[] = "\x95\x00\xb1microscope-stream\x01\x07\x91\x92\xa1x\xa1\x31"
		"\x93\x01\x00\xc3";
	int fd = new_fd();
	const char *err;

	write_bytes(fd, v2, sizeof(v2) - 1);
	assert_int_equal(drain(fd, &err), 99);
	{
		char want[96];

		snprintf(want, sizeof(want), "version 2.3 stream, newer than this build reads (%d.%d)",
			 MS_STREAM_MAJOR, MS_STREAM_MINOR);
		assert_contains(err, want);
	}
	close(fd);

	fd = new_fd();
	write_bytes(fd, v0, sizeof(v0) - 1);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "version 0.9 stream");
	close(fd);

	/* A newer minor version is read. */
	fd = new_fd();
	write_bytes(fd, minor, sizeof(minor) - 1);
	assert_int_equal(drain(fd, &err), MS_READ_END);
	assert_string_equal(err, "");
	close(fd);
}

static void test_bad_producers(void **state)
{
	/* No producers, a producer that is not a pair, a name too long. */
	static const char none[] = "\x95\x00\xb1microscope-stream\x01\x00\x90";
	static const char notpair[] = "\x95\x00\xb1microscope-stream\x01\x00\x91\xa1x";
	char longname[128];
	int fd = new_fd();
	const char *err;
	size_t n;

	write_bytes(fd, none, sizeof(none) - 1);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "malformed header: 0 producers");
	close(fd);

	fd = new_fd();
	write_bytes(fd, notpair, sizeof(notpair) - 1);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "producer 0 is not [name, version]");
	close(fd);

	n = 0;
	memcpy(longname + n, "\x95\x00\xb1microscope-stream\x01\x00\x91\x92\xd9\x40", 24);
	n += 24;
	memset(longname + n, 'a', 64);
	n += 64;
	memcpy(longname + n, "\xa1\x31", 2);
	n += 2;
	fd = new_fd();
	write_bytes(fd, longname, n);
	assert_int_equal(drain(fd, &err), 99);
	assert_contains(err, "producer 0 is not [name, version]");
	close(fd);
}

/* A stream of a header followed by these bytes. */
static int stream_with(const void *bytes, size_t n)
{
	int fd = header_only();

	write_bytes(fd, bytes, n);
	return fd;
}

static void test_record_over_limit(void **state)
{
	int fd = header_only();
	struct ms_writer *w;
	static uint8_t data[100000];
	struct ms_raw raw = { 0, data, sizeof(data) };
	struct ms_reader *r;
	struct ms_record rec;
	const char *err;

	lseek(fd, 0, SEEK_END);
	{
		/* Write the raw record by hand through a second stream. */
		int tmp = new_fd();
		size_t len, hlen;
		char *bytes;

		w = ms_writer_open(tmp, "tmp", 0);
		ms_writer_header(w, NULL, "ms-test", "1.0");
		hlen = ms_writer_pending(w);
		assert_int_equal(ms_raw_pack(w, &raw), 0);
		ms_writer_close(w);
		bytes = read_all(tmp, &len);
		write_bytes(fd, bytes + hlen, len - hlen);
		free(bytes);
		close(tmp);
	}

	/* Under the default limit it reads; under a lower one it is refused. */
	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	ms_reader_free(r);

	begin_capture();
	r = reopen(fd);
	ms_reader_set_limit(r, 65536);
	reset_allocs();
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_ERROR);
	assert_int_equal(n_allocs, 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_ERROR);
	ms_reader_free(r);
	err = end_capture();
	assert_contains(err, "the record at byte 36 exceeds the limit of 65536 bytes");
	assert_contains(err, "a bin header at byte 39 claims 100000 bytes");
	assert_int_equal(count_lines(err), 1);
	close(fd);
}

static void expect_hostile(const void *bytes, size_t n, const char *msg)
{
	int fd = stream_with(bytes, n);
	struct ms_reader *r = reopen(fd);
	struct ms_record rec;
	struct timespec t0, t1;
	const char *err;
	int ret;

	assert_non_null(r);
	begin_capture();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	reset_allocs();
	ret = ms_reader_next(r, &rec);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	err = end_capture();
	assert_int_equal(ret, MS_READ_ERROR);
	/* Nothing reserved for the claim: at most a read buffer's worth. */
	assert_true(max_alloc <= 2 * MS_RECORD_MAX);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
	assert_contains(err, msg);
	ms_reader_free(r);
	close(fd);
}

static void test_hostile_headers(void **state)
{
	/* [10, {map32 of 0x0fffffff entries}] */
	static const char map32[] = "\x92\x0a\xdf\x0f\xff\xff\xff\x00\x00";
	static const char array32[] = "\x92\x0a\xdd\xff\xff\xff\xff\x00";
	static const char str32[] = "\x92\x0a\xdb\x7f\xff\xff\xff" "abc";
	static const char bin32[] = "\x92\x0a\xc6\xff\xff\xff\xf0" "abc";
	static const char ext32[] = "\x92\x0a\xc9\x40\x00\x00\x00\x01" "abc";
	static const char outer[] = "\xdd\x10\x00\x00\x00\x0a";
	/* Each claim fits alone, but not all of them together. */
	static const char many[] = "\x92\x0a\xdc\xff\xff\xdc\xff\xff\xdc\xff\xff\x00";

	expect_hostile(map32, sizeof(map32) - 1, "a map header at byte 38 claims 536870910 elements");
	expect_hostile(array32, sizeof(array32) - 1, "an array header at byte 38 claims 4294967295 elements");
	expect_hostile(str32, sizeof(str32) - 1, "a string header at byte 38 claims 2147483647 bytes");
	expect_hostile(bin32, sizeof(bin32) - 1, "a bin header at byte 38 claims 4294967280 bytes");
	expect_hostile(ext32, sizeof(ext32) - 1, "an ext header at byte 38 claims 1073741824 bytes");
	expect_hostile(outer, sizeof(outer) - 1, "an array header at byte 36 claims 268435456 elements");
	expect_hostile(many, sizeof(many) - 1, "exceeds the limit of 163840 bytes");
}

static void test_hostile_header_in_first_record(void **state)
{
	static const char map32[] = "\x95\xdf\x0f\xff\xff\xff";
	int fd = new_fd();
	const char *err;

	write_bytes(fd, map32, sizeof(map32) - 1);
	reset_allocs();
	assert_int_equal(drain(fd, &err), 99);
	assert_true(max_alloc <= 2 * MS_RECORD_MAX);
	assert_contains(err, "the record at byte 0 exceeds the limit");
	close(fd);
}

static void test_deep_nesting(void **state)
{
	char buf[64];
	size_t n = 0;
	const char *err;
	int fd;

	/* The record is level 1; seven more levels are allowed. */
	buf[n++] = (char)0x92;
	buf[n++] = 0x0a;
	for (int i = 0; i < MS_RECORD_DEPTH - 1; i++)
		buf[n++] = (char)0x91;
	buf[n - 1] = (char)0x90;
	memcpy(buf + n, "\x93\x01\x01\xc3", 4);
	fd = stream_with(buf, n + 4);
	assert_int_equal(drain(fd, &err), MS_READ_END);
	close(fd);

	n = 0;
	buf[n++] = (char)0x92;
	buf[n++] = 0x0a;
	for (int i = 0; i < MS_RECORD_DEPTH; i++)
		buf[n++] = (char)0x91;
	buf[n - 1] = (char)0x90;
	fd = stream_with(buf, n);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "the record at byte 36 nests deeper than 8 levels");
	close(fd);

	/* Deep maps too. */
	n = 0;
	buf[n++] = (char)0x92;
	buf[n++] = 0x0a;
	for (int i = 0; i < 20; i++) {
		buf[n++] = (char)0x81;
		buf[n++] = 0x00;
	}
	fd = stream_with(buf, n);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "nests deeper than 8 levels");
	close(fd);
}

static void test_record_not_array(void **state)
{
	const char *err;
	int fd;

	fd = stream_with("\x81\x0a\x00", 3);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "'test': the record at byte 36 is a map (0x81), not an array");
	close(fd);

	fd = stream_with("\xa3" "abc", 4);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "is a string (0xa3), not an array");
	close(fd);

	/* Arrays whose first element is not an unsigned kind. */
	fd = stream_with("\x90", 1);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "the record at byte 36 does not start with a record kind");
	close(fd);

	fd = stream_with("\x92\xff\x00", 3);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "does not start with a record kind");
	close(fd);

	fd = stream_with("\x91\xa1x", 3);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "does not start with a record kind");
	close(fd);

	fd = stream_with("\x91\xcf\x00\x00\x00\x01\x00\x00\x00\x00", 10);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "does not start with a record kind");
	close(fd);

	/* 0xc1 is never valid msgpack. */
	fd = stream_with("\x92\x0a\xc1", 3);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "invalid msgpack type byte 0xc1 at byte 38");
	close(fd);

	/* A second header. */
	fd = stream_with("\x95\x00\xb1microscope-stream\x01\x00\x91\x92\xa1x\xa1\x31", 29);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "a second header at byte 36");
	close(fd);
}

static void test_unknown_kind_passes(void **state)
{
	/* Kind 77 and kind 2^32-1 with odd contents are handed out as they are. */
	static const char recs[] = "\x93\x4d\xa2hi\x81\x01\x02"
		"\x92\xce\xff\xff\xff\xff\xc0"
		"\x93\x01\x02\xc3";
	int fd = stream_with(recs, sizeof(recs) - 1);
	struct ms_reader *r = reopen(fd);
	struct ms_record rec;

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, 77);
	assert_int_equal(rec.len, 8);
	assert_memory_equal(rec.bytes, recs, 8);
	assert_int_equal(rec.offset, 36);
	assert_string_equal(ms_record_kind_name(rec.kind), "unknown");
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, UINT32_MAX);
	assert_int_equal(rec.index, 1);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
}

static void test_trailing_garbage(void **state)
{
	const char *err;
	int fd = stream_with("\x93\x01\x00\xc3\x00", 5);

	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "unexpected data at byte 40 after the trailer");
	close(fd);

	/* Two streams back to back are not one stream. */
	fd = all_kinds_stream(true);
	{
		size_t len;
		char *bytes = read_all(fd, &len);

		write_bytes(fd, bytes, len);
		free(bytes);
	}
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "after the trailer");
	close(fd);
}

static void test_trailer_mismatch(void **state)
{
	const char *err;
	int fd = stream_with("\x91\x0e\x93\x01\x02\xc3", 6);

	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "the trailer at byte 38 counts 2 records but 1 came before it");
	close(fd);

	fd = stream_with("\x92\x01\x00", 3);
	assert_int_equal(drain(fd, &err), MS_READ_ERROR);
	assert_contains(err, "malformed trailer at byte 36");
	close(fd);
}

/* ---- unpack validation ---- */

/* Read the single record that follows the header in fd. */
static struct ms_reader *one_record(const void *bytes, size_t n, struct ms_record *rec)
{
	int fd = stream_with(bytes, n);
	struct ms_reader *r = reopen(fd);

	assert_non_null(r);
	assert_int_equal(ms_reader_next(r, rec), MS_READ_RECORD);
	return r;	/* the fd stays open until the test ends; it is a memfd */
}

static void test_unpack_validates(void **state)
{
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_lost lost;
	struct ms_comm comm;
	struct ms_info info;
	struct ms_task task;
	struct ms_frame frame;
	const char *err;

	/* Missing field. */
	r = one_record("\x94\x19\x00\x01\x02", 5, &rec);
	begin_capture();
	assert_int_equal(ms_lost_unpack(&rec, &lost), -1);
	err = end_capture();
	assert_contains(err, "malformed lost record at byte 36: field 'count' is missing");
	ms_reader_free(r);

	/* Wrong type. */
	r = one_record("\x95\x19\x00\x01\xa1x\x03", 7, &rec);
	begin_capture();
	assert_int_equal(ms_lost_unpack(&rec, &lost), -1);
	err = end_capture();
	assert_contains(err, "malformed lost record at byte 36: field 'id' is not an unsigned integer");
	ms_reader_free(r);

	/* Negative integer where unsigned is expected. */
	r = one_record("\x95\x19\xff\x01\x02\x03", 6, &rec);
	begin_capture();
	assert_int_equal(ms_lost_unpack(&rec, &lost), -1);
	err = end_capture();
	assert_contains(err, "field 'source' is not an unsigned integer");
	ms_reader_free(r);

	/* A 32-bit field given 33 bits. */
	r = one_record("\x95\x19\xcf\x00\x00\x00\x01\x00\x00\x00\x00\x01\x02\x03", 14, &rec);
	begin_capture();
	assert_int_equal(ms_lost_unpack(&rec, &lost), -1);
	err = end_capture();
	assert_contains(err, "field 'source' is 4294967296, more than 32 bits");
	ms_reader_free(r);

	/* Any integer encoding of a non-negative value is unsigned. */
	r = one_record("\x95\xd0\x19\xd0\x01\xd1\x00\x02\xcd\x00\x03\xd3\x00\x00\x00\x00\x00\x00\x00\x04",
		       20, &rec);
	assert_int_equal(rec.kind, MS_REC_LOST);
	assert_int_equal(ms_lost_unpack(&rec, &lost), 0);
	assert_int_equal(lost.source, 1);
	assert_int_equal(lost.time, 2);
	assert_int_equal(lost.id, 3);
	assert_int_equal(lost.count, 4);
	ms_reader_free(r);

	/* Extra trailing fields are accepted. */
	r = one_record("\x97\x19\x01\x02\x03\x04\xa5later\x90", 13, &rec);
	assert_int_equal(ms_lost_unpack(&rec, &lost), 0);
	assert_int_equal(lost.count, 4);
	ms_reader_free(r);

	/* Booleans are booleans. */
	r = one_record("\x97\x16\x01\x02\x03\x01\xc2\xa1x", 9, &rec);
	begin_capture();
	assert_int_equal(ms_comm_unpack(&rec, &comm), -1);
	err = end_capture();
	assert_contains(err, "field 'exec' is not a boolean");
	ms_reader_free(r);

	/* An info value is text or a number, nothing else. */
	r = one_record("\x93\x03\xa1k\xc0", 5, &rec);
	begin_capture();
	assert_int_equal(ms_info_unpack(&rec, &info), -1);
	err = end_capture();
	assert_contains(err, "field 'value' is neither a string nor an unsigned integer");
	ms_reader_free(r);

	/* Task records are fork or exit. */
	r = one_record("\x96\x18\x01\x02\x03\x04\x05", 7, &rec);
	assert_int_equal(ms_task_unpack(&rec, &task), 0);
	assert_int_equal(task.time, 5);
	begin_capture();
	assert_int_equal(ms_frame_unpack(&rec, &frame), -1);
	err = end_capture();
	assert_contains(err, "a exit record at byte 36 was given to the frame decoder");
	ms_reader_free(r);

	/* A frame record's name must be a string. */
	r = one_record("\x96\x28\x01\x02\xc4\x01x\x00\x00", 9, &rec);
	begin_capture();
	assert_int_equal(ms_frame_unpack(&rec, &frame), -1);
	err = end_capture();
	assert_contains(err, "malformed frame record at byte 36: field 'name' is not a string");
	ms_reader_free(r);
}

/*
 * Decode one STACK or SAMPLE record two ways: by its kind's unpack (the
 * fast path, which gives way to the generic codec for anything unusual)
 * and by the generic codec over the kind's field table alone. Both must
 * agree: the same result and, on failure, the very same message. Returns
 * it.
 */
static char two_ways_err[1024];

static int decode_one(const struct ms_record *rec, uint32_t kind)
{
	return kind == MS_REC_STACK ? ms_stack_unpack(rec, &stack_out)
				    : ms_sample_unpack(rec, &sample_out);
}

static int decode_generic(const struct ms_record *rec, uint32_t kind)
{
	return kind == MS_REC_STACK ? ms_schema_unpack(&ms_stack_schema, 0, rec, &stack_out)
				    : ms_schema_unpack(&ms_sample_schema, 0, rec, &sample_out);
}

static const char *decode_two_ways(const char *bytes, size_t n, uint32_t kind, int want)
{
	struct ms_record rec;
	struct ms_reader *r = one_record(bytes, n, &rec);
	struct ms_stack st;
	struct ms_sample sa;
	char first[1024];
	const char *err;

	assert_int_equal(rec.kind, kind);
	begin_capture();
	assert_int_equal(decode_generic(&rec, kind), want);
	err = end_capture();
	snprintf(first, sizeof(first), "%s", err);
	st = stack_out;
	sa = sample_out;

	memset(&stack_out, 0xa5, sizeof(stack_out));
	memset(&sample_out, 0xa5, sizeof(sample_out));
	begin_capture();
	assert_int_equal(decode_one(&rec, kind), want);
	assert_string_equal(end_capture(), first);
	if (want == 0 && kind == MS_REC_STACK) {
		assert_int_equal(stack_out.n_frames, st.n_frames);
		assert_memory_equal(&stack_out, &st,
				    offsetof(struct ms_stack, frames) +
				    st.n_frames * sizeof(st.frames[0]));
	} else if (want == 0) {
		assert_int_equal(sample_out.n_uchain, sa.n_uchain);
		assert_int_equal(sample_out.n_regs, sa.n_regs);
		assert_int_equal(sample_out.stack_len, sa.stack_len);
		assert_int_equal(sample_out.regs_mask, sa.regs_mask);
		assert_memory_equal(sample_out.uchain, sa.uchain,
				    sa.n_uchain * sizeof(sa.uchain[0]));
		assert_memory_equal(sample_out.regs, sa.regs, sa.n_regs * sizeof(sa.regs[0]));
		assert_int_equal(sample_out.stack_in_file, sa.stack_in_file);
		assert_int_equal(sample_out.stack_offset, sa.stack_offset);
		/* The copy points into the record, at the same place. */
		if (sa.stack_in_file)
			assert_null(sample_out.stack);
		else
			assert_ptr_equal(sample_out.stack, sa.stack);
	}
	ms_reader_free(r);
	snprintf(two_ways_err, sizeof(two_ways_err), "%s", first);
	return two_ways_err;
}

static void expect_stack_error(const char *bytes, size_t n, const char *msg)
{
	const char *err = decode_two_ways(bytes, n, MS_REC_STACK, -1);

	assert_contains(err, msg);
	assert_int_equal(count_lines(err), 1);
}

/* Pack a sample, then patch one field by rewriting the record by hand. */
static void expect_sample_error(const char *bytes, size_t n, const char *msg)
{
	const char *err = decode_two_ways(bytes, n, MS_REC_SAMPLE, -1);

	assert_contains(err, msg);
	assert_int_equal(count_lines(err), 1);
}

static size_t sample_head(char *b)
{
	/* [20, pid, tid, time, cpu, period, ip, cpumode, ... */
	memcpy(b, "\x9e\x14\x01\x02\x03\x00\x05\x06\x02", 9);
	return 9;
}

/* STACK records through the deferred (byte) path: the same verdicts. */
static void test_stack_bytes_path(void **state)
{
	static char b[16000];
	struct ms_record rec;
	size_t n;
	const char *err;

	/* Wrong types, and integers as msgpack-c judges them. */
	expect_stack_error("\x98\x1f\xa1x\x02\x03\x04\x05\x06\x90", 10,
			   "malformed stack record at byte 36: field 'pid' is not an unsigned integer");
	expect_stack_error("\x98\x1f\x01\xff\x03\x04\x05\x06\x90", 10,
			   "field 'tid' is not an unsigned integer");
	expect_stack_error("\x98\x1f\x01\x02\xc3\x04\x05\x06\x90", 10,
			   "field 'time' is not an unsigned integer");
	expect_stack_error("\x98\x1f\x01\x02\x03\xce\xff\xff\xff\xff\x05\xcf\0\0\0\x01\0\0\0\0\x90",
			   21, "field 'reason' is 4294967296, more than 32 bits");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\xc0", 9,
			   "field 'frames' is not an array");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x81\x01\x02", 11,
			   "field 'frames' is not an array");
	/* Too few fields. */
	expect_stack_error("\x97\x1f\x01\x02\x03\x04\x05\x06", 8,
			   "field 'frames' is missing (the record has 6 fields)");
	expect_stack_error("\x91\x1f", 2, "field 'pid' is missing (the record has 0 fields)");
	/* Frames: triples of unsigned integers, 32-bit module and flags. */
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x94\x01\x02\x03\x04", 13,
			   "field 'frames' has 4 elements, not a multiple of 3");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x92\x01\x02", 11,
			   "field 'frames' has 2 elements, not a multiple of 3");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x93\x01\xa1x\x03", 13,
			   "field 'frames' frame 0 is not three unsigned integers");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x96\x01\x02\x03"
			   "\xcf\0\0\0\x01\0\0\0\0\x02\x03", 24,
			   "frame 1 is not three unsigned integers");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x96\x01\x02\x03\x01\x02\xe0", 15,
			   "frame 1 is not three unsigned integers");
	expect_stack_error("\x98\x1f\x01\x02\x03\x04\x05\x06\x96\x01\x02\x03\x01\x02\xca\0\0\0\0",
			   19, "frame 1 is not three unsigned integers");
	/* A bad frame among many, where the fast path takes the others. */
	memcpy(b, "\x98\x1f\x01\x02\x03\x04\x05\x06\xdc\x00\x3c", 11);
	n = 11;
	for (int i = 0; i < 20; i++) {
		b[n++] = 1;
		memcpy(b + n, "\xcf\0\0\x7f\xff\x12\x34\x56\x78", 9);
		n += 9;
		b[n++] = i == 12 ? (char)0xc0 : 0;
	}
	expect_stack_error(b, n, "frame 12 is not three unsigned integers");
	/* Too many frames. */
	memcpy(b, "\x98\x1f\x01\x02\x03\x04\x05\x06\xdc\x0c\x03", 11);
	n = 11;
	memset(b + n, 1, 3 * (MS_FRAMES_MAX + 1));
	n += 3 * (MS_FRAMES_MAX + 1);
	expect_stack_error(b, n, "field 'frames' has 3075 elements, more than 3072");

	/* Valid: every integer encoding, signed ones holding values >= 0, extra fields. */
	memcpy(b, "\x99\xcc\x1f\xd0\x01\xcd\x00\x02\xce\0\0\0\x03\x04\xd3\0\0\0\0\0\0\0\x05\x06"
	       "\x99\x01\xcf\xff\xff\xff\xff\xff\xff\xff\xff\x02\xd1\x00\x07\xcc\x80\xd2\0\0\0\x09"
	       "\xce\xff\xff\xff\xff\x00\x00\xa3xyz", 57);
	decode_two_ways(b, 57, MS_REC_STACK, 0);
	assert_int_equal(stack_out.pid, 1);
	assert_int_equal(stack_out.tid, 2);
	assert_int_equal(stack_out.cpu, 4);
	assert_int_equal(stack_out.period, 5);
	assert_int_equal(stack_out.n_frames, 3);
	assert_true(stack_out.frames[0].address == UINT64_MAX);
	assert_int_equal(stack_out.frames[1].module, 7);
	assert_int_equal(stack_out.frames[1].address, 0x80);
	assert_int_equal(stack_out.frames[1].flags, 9);
	assert_int_equal(stack_out.frames[2].module, UINT32_MAX);
	/* Many frames: the fast path and the last few by the checked one. */
	memcpy(b, "\x98\x1f\x01\x02\x03\x04\x05\x06\xdc\x00\x3c", 11);
	n = 11;
	for (int i = 0; i < 20; i++) {
		b[n++] = (char)i;
		memcpy(b + n, "\xcf\0\0\x7f\xff\x12\x34\x56\x00", 9);
		b[n + 8] = (char)i;
		n += 9;
		b[n++] = 1;
	}
	decode_two_ways(b, n, MS_REC_STACK, 0);
	assert_int_equal(stack_out.n_frames, 20);
	for (uint32_t i = 0; i < 20; i++) {
		assert_int_equal(stack_out.frames[i].module, i);
		assert_true(stack_out.frames[i].address == (0x7fff12345600ull | i));
		assert_int_equal(stack_out.frames[i].flags, 1);
	}

	/*
	 * Counts past the end: the reader's framing scan refuses the record
	 * before any decoder sees it; a record built by hand is checked by
	 * the byte cursor itself.
	 */
	{
		int fd = stream_with("\x98\x1f\x01\x02\x03\x04\x05\x06\x96\x01\x02\x03", 12);
		struct ms_reader *r = reopen(fd);

		assert_non_null(r);
		begin_capture();
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_TRUNCATED);
		err = end_capture();
		assert_contains(err, "stream cut short inside the record at byte 36");
		ms_reader_free(r);
		close(fd);
	}
	memset(&rec, 0, sizeof(rec));
	rec.kind = MS_REC_STACK;
	rec.offset = 7;
	rec.bytes = "\x98\x1f\x01\x02\x03\x04\x05\x06\x96\x01\x02\x03";
	rec.len = 12;
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "malformed stack record at byte 7: it ends inside a field");
	rec.len = 6;
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "malformed stack record at byte 7: it ends inside a field");
	rec.bytes = "\x91\x1f";
	rec.len = 2;
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "malformed stack record at byte 7: field 'pid' is missing");
	(void)state;
}

static void test_sample_bounds(void **state)
{
	static char b[200000];
	size_t n;

	/* kchain longer than MS_CHAIN_MAX. */
	n = sample_head(b);
	b[n++] = (char)0xdc;
	b[n++] = (MS_CHAIN_MAX + 1) >> 8;
	b[n++] = (MS_CHAIN_MAX + 1) & 0xff;
	memset(b + n, 1, MS_CHAIN_MAX + 1);
	n += MS_CHAIN_MAX + 1;
	memcpy(b + n, "\x90\x00\x00\x90\xc4\x00", 6);
	n += 6;
	expect_sample_error(b, n, "field 'kchain' has 513 elements, more than 512");

	/* A chain element that is not an unsigned integer. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x92\x01\xc0\x00\x00\x90\xc4\x00", 9);
	n += 9;
	expect_sample_error(b, n, "field 'uchain' element 1 is not an unsigned integer");

	/* A bad element where the cursor's unchecked path reads the chain. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x9a", 2);
	n += 2;
	for (int i = 0; i < 10; i++) {
		memcpy(b + n, "\xcf\0\0\x7f\xff\x12\x34\x56\x78", 9);
		if (i == 6)
			b[n] = (char)0xd3;
		if (i == 6)
			b[n + 1] = (char)0x80;
		n += 9;
	}
	memcpy(b + n, "\x00\x00\x90\xc4\x00", 5);
	n += 5;
	expect_sample_error(b, n, "field 'uchain' element 6 is not an unsigned integer");
	/* The same chain valid: every path agrees on every value. */
	b[9 + 2 + 6 * 9] = (char)0xcf;
	b[9 + 2 + 6 * 9 + 1] = 0;
	decode_two_ways(b, n, MS_REC_SAMPLE, 0);
	assert_int_equal(sample_out.n_uchain, 10);
	assert_true(sample_out.uchain[9] == 0x7fff12345678ull);

	/* Registers: count must match the mask. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x02\x07\x92\x01\x02\xc4\x00", 9);
	n += 9;
	expect_sample_error(b, n, "field 'regs' has 2 registers but regs_mask 0x7 has 3 bits");

	/* Minor 2: registers as one bin of little-endian u64s. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x02\x05\xc4\x10" "\x01\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\x80"
	       "\xc4\x00", 24);
	decode_two_ways(b, n + 24, MS_REC_SAMPLE, 0);
	assert_int_equal(sample_out.n_regs, 2);
	assert_true(sample_out.regs[0] == 1);
	assert_true(sample_out.regs[1] == 0x8000000000000000ull);
	b[n + 5] = 0x0f;	/* 15 bytes: not whole registers */
	expect_sample_error(b, n + 23, "field 'regs' holds 15 bytes, not a multiple of 8");
	b[n + 5] = 0x08;	/* one register, but the mask has two bits */
	memcpy(b + n + 14, "\xc4\x00", 2);
	expect_sample_error(b, n + 16, "field 'regs' has 1 registers but regs_mask 0x5 has 2 bits");

	/* Registers given with abi 0 must still match. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x00\x00\x91\x01\xc4\x00", 8);
	n += 8;
	expect_sample_error(b, n, "field 'regs' has 1 registers but regs_mask 0x0 has 0 bits");

	/* Stack copy over MS_STACK_MAX. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x00\x00\x90\xc6\x00\x00\xff\xf9", 10);
	n += 10;
	memset(b + n, 0, MS_STACK_MAX + 1);
	n += MS_STACK_MAX + 1;
	expect_sample_error(b, n, "field 'stack' holds 65529 bytes, more than 65528");

	/* Stack is bin, not str. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x00\x00\x90\xa1x", 7);
	n += 7;
	expect_sample_error(b, n, "field 'stack' is not a bin");

	/* Minor 2: [offset, length] in the stack file instead of the bytes. */
	n = sample_head(b);
	memcpy(b + n, "\x90\x90\x00\x00\x90\x92\xcd\x10\x00\xcd\x20\x00", 12);
	decode_two_ways(b, n + 12, MS_REC_SAMPLE, 0);
	assert_true(sample_out.stack_in_file);
	assert_int_equal(sample_out.stack_offset, 0x1000);
	assert_int_equal(sample_out.stack_len, 0x2000);
	assert_null(sample_out.stack);
	memcpy(b + n, "\x90\x90\x00\x00\x90\x92\x01\xce\x00\x01\x00\x00", 12);
	expect_sample_error(b, n + 12, "field 'stack' refers to 65536 bytes, more than 65528");
	memcpy(b + n, "\x90\x90\x00\x00\x90\x91\x01", 7);
	expect_sample_error(b, n + 7, "field 'stack' is neither a bin nor [offset, length]");
	memcpy(b + n, "\x90\x90\x00\x00\x90\x92\x01\xa1x", 9);
	expect_sample_error(b, n + 9, "field 'stack' is neither a bin nor [offset, length]");
	memcpy(b + n, "\x90\x90\x00\x00\x90\x92\xff\x01", 8);
	expect_sample_error(b, n + 8, "field 'stack' is neither a bin nor [offset, length]");
	memcpy(b + n, "\x90\x90\x00\x00\x90\x93\x01\x02\x03", 9);
	expect_sample_error(b, n + 9, "field 'stack' has 3 elements, more than 2");

	/* abi 0 with a mask but no registers is a sample without registers. */
	{
		struct ms_record rec;
		struct ms_reader *r;

		n = sample_head(b);
		memcpy(b + n, "\x90\x90\x00\xcc\xff\x90\xc4\x01\x07", 9);
		n += 9;
		r = one_record(b, n, &rec);
		assert_int_equal(ms_sample_unpack(&rec, &sample_out), 0);
		assert_int_equal(sample_out.n_regs, 0);
		assert_int_equal(sample_out.stack_len, 1);
		assert_int_equal(sample_out.stack[0], 7);
		ms_reader_free(r);
	}
}

static void test_other_bounds(void **state)
{
	static char b[100000];
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_mmap m;
	struct ms_module mod;
	struct ms_target t;
	const char *err;
	size_t n;

	/* A build id of 21 bytes. */
	n = 0;
	memcpy(b, "\x9a\x1e\x00\x00\xa0\xc4\x15", 7);
	n = 7;
	memset(b + n, 0xab, 21);
	n += 21;
	memcpy(b + n, "\x00\x00\x00\x00\x00", 5);
	n += 5;
	r = one_record(b, n, &rec);
	begin_capture();
	assert_int_equal(ms_module_unpack(&rec, &mod), -1);
	err = end_capture();
	assert_contains(err, "malformed module record at byte 36: field 'build_id' holds 21 bytes, more than 20");
	ms_reader_free(r);

	/* mmap: the same bound. */
	memcpy(b, "\xdc\x00\x11\x15\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\xc2\xa0\xc4\x15", 21);
	n = 21;
	memset(b + n, 0xab, 21);
	n += 21;
	r = one_record(b, n, &rec);
	begin_capture();
	assert_int_equal(ms_mmap_unpack(&rec, &m), -1);
	err = end_capture();
	assert_contains(err, "malformed mmap record at byte 36: field 'build_id' holds 21 bytes");
	ms_reader_free(r);

	/* argv over MS_ARGV_MAX. */
	memcpy(b, "\x94\x0c\x01\xc3\xdc\x00\x41", 7);
	n = 7;
	for (int i = 0; i < MS_ARGV_MAX + 1; i++)
		b[n++] = (char)0xa0;
	r = one_record(b, n, &rec);
	begin_capture();
	assert_int_equal(ms_target_unpack(&rec, &t), -1);
	err = end_capture();
	assert_contains(err, "field 'argv' has 65 elements, more than 64");
	ms_reader_free(r);

	/* argv elements are strings. */
	r = one_record("\x94\x0c\x01\xc3\x92\xa1x\x01", 8, &rec);
	begin_capture();
	assert_int_equal(ms_target_unpack(&rec, &t), -1);
	err = end_capture();
	assert_contains(err, "field 'argv' element 1 is not a string");
	ms_reader_free(r);

	/* attr ids over MS_ATTR_IDS_MAX. */
	memcpy(b, "\x99\x0a\x01\x02\x03\x04\x05\x06\x07\xdc\x04\x01", 12);
	n = 12;
	memset(b + n, 1, MS_ATTR_IDS_MAX + 1);
	n += MS_ATTR_IDS_MAX + 1;
	r = one_record(b, n, &rec);
	begin_capture();
	assert_int_equal(ms_attr_unpack(&rec, &attr_out), -1);
	err = end_capture();
	assert_contains(err, "malformed attr record at byte 36: field 'ids' has 1025 elements, more than 1024");
	ms_reader_free(r);

	/* Stack frames: a multiple of three, at most MS_FRAMES_MAX. */
	r = one_record("\x98\x1f\x01\x02\x03\x04\x05\x06\x94\x01\x02\x03\x04", 13, &rec);
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "field 'frames' has 4 elements, not a multiple of 3");
	ms_reader_free(r);

	r = one_record("\x98\x1f\x01\x02\x03\x04\x05\x06\x93\x01\xa1x\x03", 13, &rec);
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "frame 0 is not three unsigned integers");
	ms_reader_free(r);

	memcpy(b, "\x98\x1f\x01\x02\x03\x04\x05\x06\xdc\x0c\x03", 11);
	n = 11;
	memset(b + n, 1, 3 * (MS_FRAMES_MAX + 1));
	n += 3 * (MS_FRAMES_MAX + 1);
	r = one_record(b, n, &rec);
	begin_capture();
	assert_int_equal(ms_stack_unpack(&rec, &stack_out), -1);
	err = end_capture();
	assert_contains(err, "field 'frames' has 3075 elements, more than 3072");
	ms_reader_free(r);
}

static void test_pack_refuses_overfull(void **state)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_target t = { .argc = MS_ARGV_MAX + 1 };
	const char *err;
	size_t hlen;

	fill_records();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	hlen = ms_writer_pending(w);
	begin_capture();
	sample_in.n_uchain = MS_CHAIN_MAX + 1;
	assert_int_equal(ms_sample_pack(w, &sample_in), -1);
	stack_in.n_frames = MS_FRAMES_MAX + 1;
	assert_int_equal(ms_stack_pack(w, &stack_in), -1);
	assert_int_equal(ms_target_pack(w, &t), -1);
	assert_int_equal(ms_task_pack(w, MS_REC_SAMPLE, &(struct ms_task){ 0 }), -1);
	err = end_capture();
	assert_contains(err, "a sample record with 513 user frames (at most 512)");
	assert_contains(err, "a stack record with 1025 frames");
	assert_contains(err, "a target record with 65 arguments");
	assert_int_equal(count_lines(err), 4);
	assert_int_equal(ms_writer_records(w), 0);
	assert_int_equal(ms_writer_pending(w), hlen);
	ms_writer_close(w);
	close(fd);
}

/* ---- pass-through ---- */

/* Streams in and out hold the same bytes after their headers (in_hdr, out_hdr bytes). */
static void assert_same_after_headers(int in, size_t in_hdr, int out, size_t out_hdr)
{
	size_t in_len, out_len;
	char *a = read_all(in, &in_len), *b = read_all(out, &out_len);

	assert_int_equal(in_len - in_hdr, out_len - out_hdr);
	assert_memory_equal(a + in_hdr, b + out_hdr, in_len - in_hdr);
	free(a);
	free(b);
}

static void test_pass_through_identical(void **state)
{
	int in = all_kinds_stream(false), out = new_fd();
	struct ms_reader *r = reopen(in);
	struct ms_writer *w = ms_writer_open(out, "out", 0);
	struct ms_record rec;
	size_t in_hdr, out_hdr;
	int ret;

	assert_int_equal(ms_writer_header(w, ms_reader_header(r), "ms-pass", "1"), 0);
	out_hdr = ms_writer_pending(w);
	in_hdr = ms_reader_offset(r);
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		assert_int_equal(ms_writer_copy(w, rec.bytes, rec.len), 0);
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(ms_writer_trailer(w, ms_reader_trailer(r)->complete), 0);
	assert_int_equal(ms_writer_close(w), 0);
	ms_reader_free(r);

	/* Everything after the headers is byte for byte the same. */
	assert_same_after_headers(in, in_hdr, out, out_hdr);
	assert_true(out_hdr > in_hdr);

	/* And the copy reads back as the original did. */
	r = reopen(out);
	assert_int_equal(ms_reader_header(r)->n_producers, 2);
	check_all_kinds(r);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	assert_false(ms_reader_trailer(r)->complete);
	ms_reader_free(r);
	close(in);
	close(out);
}

/* ---- pipes ---- */

struct feeder {
	int fd;
	const char *bytes;
	size_t len;
	unsigned seed;
};

/* Write the bytes to a pipe in small uneven pieces. */
static void *feed(void *arg)
{
	struct feeder *f = arg;
	size_t done = 0;

	while (done < f->len) {
		size_t n = 1 + rand_r(&f->seed) % 997;
		ssize_t w;

		if (n > f->len - done)
			n = f->len - done;
		w = write(f->fd, f->bytes + done, n);
		if (w <= 0)
			break;
		done += w;
	}
	close(f->fd);
	return NULL;
}

static void test_read_from_pipe_in_pieces(void **state)
{
	int fd = all_kinds_stream(true);
	int p[2];
	struct feeder f;
	pthread_t th;
	struct ms_reader *r;
	struct ms_record rec;

	f.bytes = read_all(fd, &f.len);
	f.seed = 1;
	assert_int_equal(pipe(p), 0);
	f.fd = p[1];
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	r = ms_reader_open(p[0], "pipe");
	assert_non_null(r);
	check_all_kinds(r);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	pthread_join(th, NULL);
	close(p[0]);
	free((char *)f.bytes);
	close(fd);
}

/*
 * Into a pipe, complete records go out once 64 KiB of them wait, before
 * the buffer (256 KiB) fills or anything flushes, by whichever way they
 * were written; into a file, nothing goes before a whole block.
 */
static void test_pipe_writes_soon(void **state)
{
	struct ms_stack_ref ref = { 7, 8, 1ull << 40, 1, 1000000, 3 };
	static char got[1 << 20];
	int p[2], fd = new_fd(), i;
	struct ms_writer *w;
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) > 0, 1);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	w = ms_writer_open(p[1], "pipe", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	/* packed records (ms_writer_end()): 80 KB of them */
	for (i = 0; i < 4000; i++)
		assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
	n = read(p[0], got, sizeof(got));
	assert_true(n >= 64 * 1024);
	assert_true(n < 4000 * 20);
	/* copied ones (ms_writer_copy(), ms_writer_copy_records()) too */
	for (i = 0; i < 9000; i++)
		memcpy(got + 8 * i, "\x97\x21\x07\x08\x01\x01\x02\x03", 8);
	for (i = 0; i < 9000; i++)
		assert_int_equal(ms_writer_copy(w, got, 8), 0);
	assert_true(read(p[0], got + 100000, sizeof(got) - 100000) >= 64 * 1024);
	assert_int_equal(ms_writer_copy_records(w, got, 8 * 9000, 9000), 0);
	assert_true(read(p[0], got + 100000, sizeof(got) - 100000) >= 64 * 1024);
	ms_writer_close(w);
	close(p[0]);
	close(p[1]);

	/* a file: only whole blocks, at a flush or a full buffer */
	w = ms_writer_open(fd, "file", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (i = 0; i < 4000; i++)
		assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
	assert_int_equal(fd_size(fd), 0);
	ms_writer_close(w);
	close(fd);
}

static void test_epipe(void **state)
{
	int p[2];
	struct ms_writer *w;
	struct ms_lost l = { 0 };
	const char *err;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	assert_int_equal(pipe(p), 0);
	close(p[0]);
	w = ms_writer_open(p[1], "stdout", 0);
	begin_capture();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_lost_pack(w, &l), 0);	/* buffered */
	assert_false(ms_writer_broken_pipe(w));
	assert_int_equal(ms_writer_flush(w), -1);
	assert_true(ms_writer_broken_pipe(w));
	assert_int_equal(ms_lost_pack(w, &l), -1);
	assert_int_equal(ms_writer_flush(w), -1);
	assert_int_equal(ms_writer_trailer(w, true), -1);
	assert_int_equal(ms_writer_close(w), -1);
	err = end_capture();
	assert_string_equal(err, "stream-test: downstream closed the pipe (stdout)\n");
	close(p[1]);
	signal(SIGPIPE, old);
}

static void test_epipe_when_buffer_fills(void **state)
{
	int p[2];
	struct ms_writer *w;
	static uint8_t data[60000];
	struct ms_raw raw = { 0, data, sizeof(data) };
	const char *err;
	int i, ret = 0;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	assert_int_equal(pipe(p), 0);
	close(p[0]);
	w = ms_writer_open(p[1], "stdout", 0);
	begin_capture();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (i = 0; i < 100 && (ret = ms_raw_pack(w, &raw)) == 0; i++)
		;
	err = end_capture();
	assert_int_equal(ret, -1);
	/* a pipe's records go out once 64 KiB wait: at the end of the second */
	assert_int_equal(i, 1);
	assert_true(ms_writer_broken_pipe(w));
	assert_string_equal(err, "stream-test: downstream closed the pipe (stdout)\n");
	ms_writer_close(w);
	close(p[1]);
	signal(SIGPIPE, old);
}

struct collector {
	int fd;
	char *buf;
	size_t len, cap;
};

/* Read a pipe to its end into memory. */
static void *collect(void *arg)
{
	struct collector *c = arg;
	ssize_t k;

	while ((k = read(c->fd, c->buf + c->len, c->cap - c->len)) > 0)
		c->len += k;
	return NULL;
}

static void test_nonblock_room(void **state)
{
	int p[2];
	struct ms_writer *w;
	static uint8_t data[10000];
	struct ms_raw raw = { 0, data, sizeof(data) };
	struct ms_reader *r;
	struct ms_record rec;
	uint64_t written = 0, refused = 0, n = 0;
	struct collector c = { .cap = 1 << 20 };
	pthread_t th;
	ssize_t k;
	int fd;

	c.buf = malloc(c.cap);
	assert_int_equal(pipe(p), 0);
	assert_true(fcntl(p[1], F_SETPIPE_SZ, 4096) >= 4096);
	w = ms_writer_open(p[1], "pipe", MS_WRITER_NONBLOCK);
	assert_true(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "1"), 0);

	/* Nobody reads: the buffer fills, then room says no; it never blocks. */
	for (int i = 0; i < 100; i++) {
		if (ms_writer_room(w, sizeof(data) + 16)) {
			assert_int_equal(ms_raw_pack(w, &raw), 0);
			written++;
		} else {
			refused++;
		}
		assert_true(ms_writer_pending(w) <= 256 * 1024);
	}
	/* 256 KiB of buffer plus a 4 KiB pipe hold 26 records of 10 KiB. */
	assert_int_equal(written, 26);
	assert_int_equal(refused, 74);
	assert_false(ms_writer_room(w, sizeof(data) + 16));
	assert_false(ms_writer_room(w, MS_RECORD_MAX + 1));
	assert_true(ms_writer_room(w, 1));

	/* The reader takes some; room comes back after a non-blocking drain. */
	for (int i = 0; i < 3; i++) {
		k = read(p[0], c.buf + c.len, 4096);
		assert_true(k > 0);
		c.len += k;
		assert_int_equal(ms_writer_drain(w), 0);
	}
	assert_true(ms_writer_room(w, sizeof(data) + 16));
	assert_int_equal(ms_raw_pack(w, &raw), 0);
	written++;
	assert_true(ms_writer_pending(w) > 0);

	/* The trailer waits until everything is out. */
	c.fd = p[0];
	assert_int_equal(pthread_create(&th, NULL, collect, &c), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_pending(w), 0);
	assert_int_equal(ms_writer_close(w), 0);
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);

	/* What got through is one valid stream of the records taken. */
	fd = new_fd();
	write_bytes(fd, c.buf, c.len);
	r = reopen(fd);
	assert_non_null(r);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD)
		n++;
	assert_int_equal(n, written);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
	free(c.buf);
}

struct late_trailer {
	int in, out;
	bool saw_output;
};

/* Finish the input only once the stage's output has arrived. */
static void *write_trailer_late(void *arg)
{
	struct late_trailer *t = arg;

	for (int i = 0; i < 500 && !t->saw_output; i++) {
		struct timespec ms = { 0, 10 * 1000 * 1000 };

		t->saw_output = lseek(t->out, 0, SEEK_END) > 0;
		if (!t->saw_output)
			nanosleep(&ms, NULL);
	}
	write_bytes(t->in, "\x93\x01\x01\xc3", 4);
	close(t->in);
	return NULL;
}

static void test_flush_before_blocking_read(void **state)
{
	int hdr = header_only(), p[2];
	size_t hlen;
	char *h = read_all(hdr, &hlen);
	struct late_trailer t = { 0 };
	struct ms_reader *r;
	struct ms_writer *w;
	struct ms_record rec;
	pthread_t th;

	assert_int_equal(pipe(p), 0);
	write_bytes(p[1], h, hlen);
	write_bytes(p[1], "\x91\x0e", 2);
	r = ms_reader_open(p[0], "pipe");
	assert_non_null(r);
	t.in = p[1];
	t.out = new_fd();
	w = ms_writer_open(t.out, "out", 0);
	ms_reader_flush_before_read(r, w);
	assert_int_equal(ms_writer_header(w, ms_reader_header(r), "ms-pass", "1"), 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_writer_copy(w, rec.bytes, rec.len), 0);
	assert_int_equal(lseek(t.out, 0, SEEK_END), 0);
	assert_int_equal(pthread_create(&th, NULL, write_trailer_late, &t), 0);
	/* This read must wait for input: the output is flushed first. */
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	pthread_join(th, NULL);
	assert_true(t.saw_output);
	ms_reader_free(r);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	close(t.out);
	close(p[0]);
	close(hdr);
	free(h);
}

/* ---- problems ---- */

static void test_problems(void **state)
{
	struct ms_problems p;
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_problem pr;
	char code[32];

	ms_problems_init(&p, "ms-decode");
	assert_int_equal(ms_problems_total(&p), 0);
	ms_problems_add(&p, "truncated-sample", "sample at byte %d", 100);
	ms_problems_add(&p, "truncated-sample", "sample at byte %d", 200);
	ms_problems_add(&p, "unknown-record", "type %d", 99);
	assert_int_equal(p.n, 2);
	assert_int_equal(ms_problems_total(&p), 3);
	assert_string_equal(p.entries[0].detail, "sample at byte 100");
	assert_int_equal(p.entries[0].count, 2);

	/* More codes than slots fold into "other-problems". */
	for (int i = 0; i < 40; i++) {
		snprintf(code, sizeof(code), "code-%d", i);
		ms_problems_add(&p, code, "example %d", i);
	}
	assert_int_equal(p.n, MS_PROBLEM_CODES_MAX);
	assert_int_equal(ms_problems_total(&p), 43);
	assert_string_equal(p.entries[MS_PROBLEM_CODES_MAX - 1].code, "other-problems");
	assert_string_equal(p.entries[MS_PROBLEM_CODES_MAX - 1].detail, "code-29: example 29");
	assert_int_equal(p.entries[MS_PROBLEM_CODES_MAX - 1].count, 11);
	/* A known code still counts in its own slot. */
	ms_problems_add(&p, "code-0", "x");
	assert_int_equal(p.entries[2].count, 2);

	assert_int_equal(ms_writer_header(w, NULL, "ms-decode", "1"), 0);
	assert_int_equal(ms_problems_write(w, &p), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_problem_unpack(&rec, &pr), 0);
	assert_str(pr.stage, "ms-decode");
	assert_str(pr.code, "truncated-sample");
	assert_int_equal(pr.count, 2);
	assert_str(pr.detail, "sample at byte 100");
	for (int i = 1; i < MS_PROBLEM_CODES_MAX; i++)
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_problem_unpack(&rec, &pr), 0);
	assert_str(pr.code, "other-problems");
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
}

static void test_names(void **state)
{
	assert_string_equal(ms_record_kind_name(MS_REC_SAMPLE), "sample");
	assert_string_equal(ms_record_kind_name(MS_REC_TARGET_EXIT), "target-exit");
	assert_string_equal(ms_record_kind_name(MS_REC_ROUND), "round");
	assert_string_equal(ms_record_kind_name(MS_REC_FRAME), "frame");
	assert_string_equal(ms_record_kind_name(MS_REC_PY_PROCESS), "py-process");
	assert_string_equal(ms_record_kind_name(MS_REC_PY_STACK), "py-stack");
	assert_string_equal(ms_record_kind_name(MS_REC_PY_SNAPSHOT), "py-snapshot");
	assert_string_equal(ms_record_kind_name(MS_REC_TASK_WAIT), "task-wait");
	assert_string_equal(ms_record_kind_name(8), "unknown");
	assert_string_equal(ms_record_kind_name(UINT32_MAX), "unknown");
	assert_string_equal(ms_stack_end_name(MS_END_OUTERMOST), "outermost");
	assert_string_equal(ms_stack_end_name(MS_END_KERNEL_ONLY), "kernel-only");
	assert_string_equal(ms_stack_end_name(MS_END_INTERPRETED_UNPLACED), "interpreted-unplaced");
	assert_string_equal(ms_stack_end_name(100), "unknown");
	assert_string_equal(ms_frame_reason_name(MS_SYM_IDENTITY), "identity");
	assert_string_equal(ms_frame_reason_name(MS_SYM_NO_MODULE), "no-module");
	assert_string_equal(ms_frame_reason_name(MS_SYM_FDE_ONLY + 1), "unknown");
}

/* ---- allocation ---- */

static void test_no_allocation_per_record(void **state)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_lost lost = { 0, 1, 2, 3 };
	size_t writes;
	int ret;

	fill_records();
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	reset_allocs();
	for (int i = 0; i < 2000; i++) {
		sample_in.time = i;
		assert_int_equal(ms_sample_pack(w, &sample_in), 0);
		assert_int_equal(ms_stack_pack(w, &stack_in), 0);
		assert_int_equal(ms_lost_pack(w, &lost), 0);
	}
	writes = n_allocs;
	assert_int_equal(writes, 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(fd);
	/* Warm up: the first records may size the zone. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	reset_allocs();
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_SAMPLE)
			assert_int_equal(ms_sample_unpack(&rec, &sample_out), 0);
	}
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(n_allocs, 0);
	ms_reader_free(r);
	close(fd);
}

static void test_fuzz_flips(void **state)
{
	int fd = all_kinds_stream(true);
	size_t len;
	char *bytes = read_all(fd, &len);
	char *copy = malloc(len);
	unsigned seed = 42;

	/* Random corruption ends in a controlled result, never a crash. */
	for (int round = 0; round < 300; round++) {
		int f = new_fd(), ret;
		const char *err;

		memcpy(copy, bytes, len);
		for (int k = 0; k < 1 + round % 4; k++)
			copy[rand_r(&seed) % len] ^= 1 << (rand_r(&seed) % 8);
		write_bytes(f, copy, len);
		ret = drain(f, &err);
		assert_true(ret == MS_READ_END || ret == MS_READ_ERROR ||
			    ret == MS_READ_TRUNCATED || ret == 99);
		if (ret != MS_READ_END)
			assert_true(count_lines(err) >= 1);
		close(f);
	}
	free(copy);
	free(bytes);
	close(fd);
}

static void test_fuzz_random_records(void **state)
{
	static const unsigned char types[] = {
		0x90, 0x93, 0x9f, 0xdc, 0xdd, 0x80, 0x81, 0xde, 0xdf, 0xa3, 0xd9, 0xda,
		0xdb, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xd4, 0xd8, 0xcc, 0xcf, 0xd3,
		0xc0, 0xc1, 0xc2, 0xc3, 0x00, 0x01, 0xff, 0xff,
	};
	unsigned seed = 7;
	unsigned char buf[256];

	/* Type bytes and lengths at random: only controlled outcomes. */
	for (int round = 0; round < 3000; round++) {
		size_t n = 1 + rand_r(&seed) % sizeof(buf);
		const char *err;
		int fd, ret;

		buf[0] = 0x90 + rand_r(&seed) % 16;
		for (size_t i = 1; i < n; i++)
			buf[i] = rand_r(&seed) % 3 ? types[rand_r(&seed) % sizeof(types)]
						   : rand_r(&seed);
		fd = stream_with(buf, n);
		reset_allocs();
		ret = drain(fd, &err);
		assert_true(max_alloc <= 4 * 1024 * 1024);
		assert_true(ret == MS_READ_END || ret == MS_READ_ERROR || ret == MS_READ_TRUNCATED);
		assert_int_equal(count_lines(err), ret == MS_READ_END ? 0 : 1);
		close(fd);
	}
}

/* ---- each stack once: stack-def and stack-ref ---- */

/* Unpack a STACK_DEF, keeping what it said. */
static int def_unpack(const struct ms_record *rec, uint32_t *id, struct ms_stack *st,
		      const char **err)
{
	static char first[512];
	int a;

	begin_capture();
	a = ms_stack_def_unpack(rec, id, st);
	snprintf(first, sizeof(first), "%s", end_capture());
	*err = first;
	return a;
}

/* A STACK_REF by the generic codec alone, not the fast path. */
static int ref_generic(const struct ms_record *rec, struct ms_stack_ref *r)
{
	return ms_schema_unpack(&ms_stack_ref_schema, 0, rec, r);
}

static void assert_same_ref(const struct ms_stack_ref *a, const struct ms_stack_ref *b)
{
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->time, b->time);
	assert_int_equal(a->cpu, b->cpu);
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->id, b->id);
}

static void test_stack_def_ref(void **state)
{
	struct ms_stack_ref ref = { 7, 8, 1ull << 40, 1, 1000000, 3 }, rback;
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_writer *w;
	const char *err;
	uint32_t id;
	int fd = new_fd();

	stack_in.n_frames = 3;
	w = ms_writer_open(fd, "test", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	assert_int_equal(ms_stack_def_pack(w, 3, &stack_in), 0);
	assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_STACK_DEF);
	memset(&stack_out, 0xff, sizeof(stack_out));
	assert_int_equal(def_unpack(&rec, &id, &stack_out, &err), 0);
	assert_int_equal(id, 3);
	assert_int_equal(stack_out.reason, stack_in.reason);
	assert_int_equal(stack_out.n_frames, 3);
	assert_memory_equal(stack_out.frames, stack_in.frames, 3 * sizeof(stack_in.frames[0]));
	/* the per-sample fields are not the definition's */
	assert_int_equal(stack_out.pid + stack_out.tid + stack_out.cpu, 0);
	assert_int_equal(stack_out.time + stack_out.period, 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_STACK_REF);
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), 0);
	assert_same_ref(&rback, &ref);
	memset(&rback, 0, sizeof(rback));
	assert_int_equal(ref_generic(&rec, &rback), 0);
	assert_same_ref(&rback, &ref);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);

	/* Malformed: an id that is not an integer, frames not in triples, a missing id. */
	r = one_record("\x94\x20\xa1x\x00\x90", 6, &rec);
	assert_int_equal(def_unpack(&rec, &id, &stack_out, &err), -1);
	assert_contains(err, "malformed stack-def record at byte 36: field 'id' is not an unsigned integer");
	ms_reader_free(r);
	r = one_record("\x94\x20\x00\x00\x92\x01\x02", 7, &rec);
	assert_int_equal(def_unpack(&rec, &id, &stack_out, &err), -1);
	assert_contains(err, "field 'frames' has 2 elements, not a multiple of 3");
	ms_reader_free(r);
	r = one_record("\x96\x21\x01\x02\x03\x04\x05", 7, &rec);
	begin_capture();
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), -1);
	err = end_capture();
	assert_contains(err, "malformed stack-ref record at byte 36: field 'id' is missing");
	ms_reader_free(r);
	/* What the fast path does not take gets the generic codec's verdict. */
	r = one_record("\x97\x21\xce\xff\xff\xff\xff\x02\x03\x04\x05\x06", 12, &rec);
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), 0);	/* pid 2^32-1 still fits */
	assert_int_equal(rback.pid, UINT32_MAX);
	assert_int_equal(rback.id, 6);
	ms_reader_free(r);
	r = one_record("\x97\x21\xcf\x00\x00\x00\x01\x00\x00\x00\x00\x02\x03\x04\x05\x06",
		       16, &rec);
	begin_capture();
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), -1);
	assert_int_equal(ref_generic(&rec, &rback), -1);
	err = end_capture();
	assert_int_equal(count_lines(err), 2);
	assert_contains(err, "field 'pid'");
	ms_reader_free(r);
	/* a negative id, and a seventh field (a later minor's): the checked path */
	r = one_record("\x97\x21\x01\x02\x03\x04\x05\xff", 8, &rec);
	begin_capture();
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), -1);
	assert_contains(end_capture(), "field 'id'");
	ms_reader_free(r);
	r = one_record("\x98\x21\x01\x02\x03\x04\x05\x06\x07", 9, &rec);
	assert_int_equal(ms_stack_ref_unpack(&rec, &rback), 0);
	assert_int_equal(rback.id, 6);
	ms_reader_free(r);
}

/*
 * Runs of STACK_REF records (ms_reader_stack_ref_run()) copied whole
 * (ms_writer_copy_records()): the same records, counted, as one at a time.
 */
static void test_stack_ref_runs(void **state)
{
	/* a STACK_REF whose pid is a string: framed, never part of a run */
	static const char bad_ref[] = "\x97\x21\xa1x\x01\x02\x03\x04\x05";
	int in = new_fd(), out = new_fd(), extra, ret;
	struct ms_writer *w = ms_writer_open(in, "test", 0);
	struct ms_stack_ref ref = { 7, 8, 1ull << 40, 1, 1000000, 3 }, back;
	struct ms_record rec;
	struct ms_reader *r;
	const char *run;
	size_t run_len, in_hdr, out_hdr;
	uint64_t n, total = 0;

	(void)state;
	stack_in.n_frames = 3;
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	assert_int_equal(ms_stack_def_pack(w, 3, &stack_in), 0);
	for (int i = 0; i < 5; i++, ref.time++)
		assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
	assert_int_equal(ms_writer_copy(w, bad_ref, sizeof(bad_ref) - 1), 0);
	/* more than MS_RECORD_MAX bytes of them: runs end at that bound */
	for (int i = 0; i < 20000; i++, ref.time++)
		assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(in);
	w = ms_writer_open(out, "out", 0);
	assert_int_equal(ms_writer_header(w, ms_reader_header(r), "ms-pass", "1"), 0);
	out_hdr = ms_writer_pending(w);
	in_hdr = ms_reader_offset(r);
	/* not at a STACK_REF: none */
	assert_int_equal(ms_reader_stack_ref_run(r, &run, &run_len), 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_STACK_DEF);
	assert_int_equal(ms_writer_copy(w, rec.bytes, rec.len), 0);
	/* the five, then the bad one stops the next run and comes one at a time */
	assert_int_equal(ms_reader_stack_ref_run(r, &run, &run_len), 5);
	assert_int_equal(ms_writer_copy_records(w, run, run_len, 5), 0);
	assert_int_equal(ms_reader_stack_ref_run(r, &run, &run_len), 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_STACK_REF);
	assert_int_equal(rec.index, 6);
	begin_capture();
	assert_int_equal(ms_stack_ref_unpack(&rec, &back), -1);
	assert_contains(end_capture(), "field 'pid' is not an unsigned integer");
	assert_int_equal(ms_writer_copy(w, rec.bytes, rec.len), 0);
	while ((n = ms_reader_stack_ref_run(r, &run, &run_len))) {
		assert_true(run_len <= MS_RECORD_MAX);
		assert_int_equal(ms_writer_copy_records(w, run, run_len, n), 0);
		total += n;
	}
	/*
	 * The last few are framed one at a time: a run frames a record only
	 * with room for its longest form (stack_ref_len()), which the end of
	 * the stream does not leave. The reader counted them all: the
	 * trailer's count agrees.
	 */
	assert_true(total >= 19990);
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		assert_int_equal(rec.kind, MS_REC_STACK_REF);
		assert_int_equal(ms_writer_copy(w, rec.bytes, rec.len), 0);
		total++;
	}
	assert_int_equal(total, 20000);
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(ms_writer_trailer(w, ms_reader_trailer(r)->complete), 0);
	assert_int_equal(ms_writer_close(w), 0);
	ms_reader_free(r);

	/* Byte for byte the records that came in, and the copy reads back whole. */
	assert_same_after_headers(in, in_hdr, out, out_hdr);
	r = reopen(out);
	total = 0;
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		total++;
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(total, 20007);
	ms_reader_free(r);

	/* A writer refuses a copy that is not whole records it can hold. */
	extra = new_fd();
	w = ms_writer_open(extra, "test", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	begin_capture();
	assert_int_equal(ms_writer_copy_records(w, bad_ref, sizeof(bad_ref) - 1, 0), -1);
	assert_contains(end_capture(), "internal error");
	ms_writer_close(w);
	close(extra);
	close(in);
	close(out);
}

/*
 * RAW records framed by the fast path (raw_len(), in frame() and in the
 * scout of a mapped input) are the records the general scan frames: the
 * same bytes and kinds, their objects built on request with the arena
 * sized for them, and a record the fast path does not take (a cpu that is
 * not an unsigned integer) still framed and handed out.
 */
static void test_raw_fast_framing(void **state)
{
	static uint8_t data[3][70000];
	/* [11, -1, bin 2]: a cpu the fast path leaves to the general scan */
	static const char odd_raw[] = "\x93\x0b\xff\xc4\x02\x01\x02";
	const uint32_t lens[3] = { 8, 300, 70000 }, cpus[3] = { 0, 200, 70000 };
	const uint32_t heads[3] = { 1 + 1 + 1 + 2, 1 + 1 + 2 + 3, 1 + 1 + 5 + 5 };
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_raw raw;

	(void)state;
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < 3; i++) {
			struct ms_raw in = { .cpu = cpus[i], .data = data[i], .len = lens[i] };

			memset(data[i], 'a' + i, lens[i]);
			assert_int_equal(ms_raw_pack(w, &in), 0);
		}
	assert_int_equal(ms_writer_copy(w, odd_raw, sizeof(odd_raw) - 1), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	{
		r = reopen(fd);
		ms_reader_set_limit(r, 80000);
		for (int round = 0; round < 4; round++)
			for (int i = 0; i < 3; i++) {
				assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
				assert_int_equal(rec.kind, MS_REC_RAW);
				/* array, kind, cpu (1, 2 or 5 bytes), bin header (2, 3 or 5) */
				assert_int_equal(rec.len, lens[i] + heads[i]);
				assert_int_equal(ms_raw_unpack(&rec, &raw), 0);
				assert_int_equal(raw.cpu, cpus[i]);
				assert_int_equal(raw.len, lens[i]);
				assert_memory_equal(raw.data, data[i], lens[i]);
			}
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.kind, MS_REC_RAW);
		assert_int_equal(rec.len, sizeof(odd_raw) - 1);
		begin_capture();
		assert_int_equal(ms_raw_unpack(&rec, &raw), -1);
		assert_contains(end_capture(), "cpu");
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
		ms_reader_free(r);
	}
	close(fd);
}

/* ---- samples whose stack copies stay in the saved stream ---- */

static void test_stack_file(void **state)
{
	static const char body[] = "0123456789abcdef";
	struct ms_stack_file f, back;
	struct ms_stack_map m = { 0 };
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_writer *w;
	char dir[512], file[600], path[4096];
	const char *why, *err;
	int fd, sfd;

	snprintf(dir, sizeof(dir), "%s/stream-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/run.msr", dir);
	sfd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(sfd >= 0);
	assert_int_equal(write(sfd, body, 16), 16);

	/* Described by its absolute path and identity, read back the same. */
	assert_int_equal(ms_stack_file_describe(sfd, &f, path, sizeof(path), &why), 0);
	assert_str(f.path, file);
	assert_int_equal(f.size, 16);
	fd = new_fd();
	w = ms_writer_open(fd, "test", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	assert_int_equal(ms_stack_file_pack(w, &f), 0);
	sample_in.stack_in_file = true;
	sample_in.stack_offset = 4;
	sample_in.stack_len = 8;
	assert_int_equal(ms_sample_pack(w, &sample_in), 0);
	sample_in.stack_in_file = false;
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_STACK_FILE);
	assert_int_equal(ms_stack_file_unpack(&rec, &back), 0);
	assert_str(back.path, file);
	assert_int_equal(back.dev_maj, f.dev_maj);
	assert_int_equal(back.dev_min, f.dev_min);
	assert_int_equal(back.ino, f.ino);
	assert_int_equal(back.mtime, f.mtime);
	assert_int_equal(ms_stack_map_open(&m, &back, "test"), 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_sample_unpack(&rec, &sample_out), 0);
	assert_true(sample_out.stack_in_file);
	assert_memory_equal(ms_stack_map_at(&m, sample_out.stack_offset, sample_out.stack_len),
			    "456789ab", 8);
	/* Bounds: the end, past it, and lengths that would wrap. */
	assert_non_null(ms_stack_map_at(&m, 16, 0));
	assert_null(ms_stack_map_at(&m, 9, 8));
	assert_null(ms_stack_map_at(&m, 17, 0));
	assert_null(ms_stack_map_at(&m, UINT64_MAX, 2));
	ms_stack_map_close(&m);
	assert_null(ms_stack_map_at(&m, 0, 1));

	/* A file with the same path but another identity is refused. */
	assert_int_equal(write(sfd, "x", 1), 1);
	begin_capture();
	assert_int_equal(ms_stack_map_open(&m, &back, "test"), -1);
	err = end_capture();
	assert_contains(err, "is not the one ms-decode read");
	assert_contains(err, "--stack-bytes=copy");
	assert_int_equal(count_lines(err), 1);
	/* And a file that is gone. */
	assert_int_equal(unlink(file), 0);
	begin_capture();
	assert_int_equal(ms_stack_map_open(&m, &back, "test"), -1);
	err = end_capture();
	assert_contains(err, "cannot be opened here");
	/* A deleted file or one without a path cannot be described. */
	assert_int_equal(ms_stack_file_describe(sfd, &f, path, sizeof(path), &why), -1);
	assert_string_equal(why, "the input file was deleted");
	assert_int_equal(ms_stack_file_describe(fd, &f, path, sizeof(path), &why), -1);
	ms_reader_free(r);
	close(fd);
	close(sfd);
	assert_int_equal(rmdir(dir), 0);
}

/* The vdso record (minor 2): an image round trip, and its bounds. */
static void test_vdso_record(void **state)
{
	static uint8_t image[MS_VDSO_MAX + 1], big[7 + MS_VDSO_MAX + 1];
	const uint32_t lens[] = { 1, 8192, MS_VDSO_MAX };
	struct ms_vdso v, back;
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_writer *w;
	const char *err;
	int fd;

	(void)state;
	for (uint32_t i = 0; i < sizeof(image); i++)
		image[i] = (uint8_t)(i * 7 + (i >> 8));
	assert_string_equal(ms_record_kind_name(MS_REC_VDSO), "vdso");
	/* The image comes back byte for byte, at every size the record allows. */
	fd = new_fd();
	w = ms_writer_open(fd, "test", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	for (uint32_t i = 0; i < 3; i++) {
		v = (struct ms_vdso){ .image = image, .len = lens[i] };
		assert_int_equal(ms_vdso_pack(w, &v), 0);
	}
	/* Nothing is written for an empty or oversized image. */
	begin_capture();
	v = (struct ms_vdso){ .image = image, .len = 0 };
	assert_int_equal(ms_vdso_pack(w, &v), -1);
	v.len = MS_VDSO_MAX + 1;
	assert_int_equal(ms_vdso_pack(w, &v), -1);
	err = end_capture();
	assert_contains(err, "a vdso record with an empty image");
	assert_contains(err, "a vdso record with 65537 image bytes (at most 65536)");
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	r = reopen(fd);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.kind, MS_REC_VDSO);
		assert_int_equal(ms_vdso_unpack(&rec, &back), 0);
		assert_int_equal(back.len, lens[i]);
		assert_memory_equal(back.image, image, lens[i]);
	}
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);

	/* Malformed: no image, not a bin, empty, over the bound. */
	r = one_record("\x91\x0f", 2, &rec);
	begin_capture();
	assert_int_equal(ms_vdso_unpack(&rec, &back), -1);
	err = end_capture();
	assert_contains(err, "malformed vdso record at byte 36: field 'image' is missing");
	ms_reader_free(r);
	r = one_record("\x92\x0f\xa4\x7f" "ELF", 7, &rec);
	begin_capture();
	assert_int_equal(ms_vdso_unpack(&rec, &back), -1);
	err = end_capture();
	assert_contains(err, "field 'image' is not a bin");
	ms_reader_free(r);
	r = one_record("\x92\x0f\xc4\x00", 4, &rec);
	begin_capture();
	assert_int_equal(ms_vdso_unpack(&rec, &back), -1);
	err = end_capture();
	assert_contains(err, "field 'image' is empty");
	ms_reader_free(r);
	/* [15, bin32 of 65537 bytes] */
	memcpy(big, "\x92\x0f\xc6\x00\x01\x00\x01", 7);
	r = one_record(big, 7 + MS_VDSO_MAX + 1, &rec);
	begin_capture();
	assert_int_equal(ms_vdso_unpack(&rec, &back), -1);
	err = end_capture();
	assert_contains(err, "field 'image' holds 65537 bytes, more than 65536");
	ms_reader_free(r);
	/* A later minor's extra field is ignored. */
	r = one_record("\x93\x0f\xc4\x02\x7f" "E\x01", 7, &rec);
	assert_int_equal(ms_vdso_unpack(&rec, &back), 0);
	assert_int_equal(back.len, 2);
	assert_memory_equal(back.image, "\x7f" "E", 2);
	ms_reader_free(r);
}

/* ---- a mapped input's scout, and the same verdicts as a pipe ---- */

struct bytes {
	char *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = 2 * (b->len + n);
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put_byte(struct bytes *b, unsigned char c)
{
	put(b, &c, 1);
}

/* A bin header claiming n bytes (the smallest form unless wide). */
static void put_bin_header(struct bytes *b, uint32_t n, bool wide)
{
	if (n < 256 && !wide) {
		put_byte(b, 0xc4);
		put_byte(b, (unsigned char)n);
	} else if (n < 65536 && !wide) {
		put_byte(b, 0xc5);
		put_byte(b, (unsigned char)(n >> 8));
		put_byte(b, (unsigned char)n);
	} else {
		put_byte(b, 0xc6);
		for (int sh = 24; sh >= 0; sh -= 8)
			put_byte(b, (unsigned char)(n >> sh));
	}
}

/* [11, cpu, bin of n bytes]: a raw record as ms-collect writes one. */
static void put_raw_record(struct bytes *b, unsigned cpu, uint32_t n)
{
	put_byte(b, 0x93);
	put_byte(b, MS_REC_RAW);
	put_byte(b, (unsigned char)cpu);
	put_bin_header(b, n, false);
	for (uint32_t i = 0; i < n; i++)
		put_byte(b, (unsigned char)(i * 13 + n));
}

/* A stream's header record, to put records after. */
static struct bytes header_bytes(void)
{
	int fd = header_only();
	struct bytes b = { 0 };
	size_t hlen;
	char *h = read_all(fd, &hlen);

	put(&b, h, hlen);
	free(h);
	close(fd);
	return b;
}

/* The header record, then raw and nested records of uneven sizes. */
static struct bytes good_records(unsigned n, unsigned seed)
{
	struct bytes b = header_bytes();

	for (unsigned i = 0; i < n; i++) {
		if (i % 7 == 3) {
			/* [125, "ab", [1, 2, [3]]]: the scan's general path */
			put(&b, "\x93\x7d\xa2" "ab" "\x93\x01\x02\x91\x03", 10);
		} else {
			put_raw_record(&b, i % 3, 1 + rand_r(&seed) % 9000);
		}
	}
	return b;
}

static void put_trailer(struct bytes *b, unsigned records)
{
	put_byte(b, 0x93);
	put_byte(b, MS_REC_TRAILER);
	put_byte(b, 0xcd);
	put_byte(b, (unsigned char)(records >> 8));
	put_byte(b, (unsigned char)records);
	put_byte(b, 0xc3);
}

struct outcome {
	int ret;
	uint64_t records;
	char err[1024];
};

/* Read fd to its end (the limit set after opening, when not 0). */
static void read_outcome(int fd, size_t limit, struct outcome *o)
{
	struct ms_reader *r;
	struct ms_record rec;

	begin_capture();
	r = ms_reader_open(fd, "test");
	o->records = 0;
	if (!r) {
		o->ret = 99;
	} else {
		if (limit)
			ms_reader_set_limit(r, limit);
		while ((o->ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
			o->records++;
		ms_reader_free(r);
	}
	snprintf(o->err, sizeof(o->err), "%s", end_capture());
}

/*
 * The same bytes read from a file (mapped: framed ahead by the scout) and
 * from a pipe (read in pieces: no scout): the same records, result and
 * messages.
 */
static void same_both_ways(const struct bytes *b, size_t limit, struct outcome *mapped)
{
	struct outcome piped;
	struct feeder f = { .bytes = b->p, .len = b->len, .seed = 3 };
	int fd = new_fd(), p[2];
	pthread_t th;

	write_bytes(fd, b->p, b->len);
	rewind_fd(fd);
	read_outcome(fd, limit, mapped);
	close(fd);
	assert_int_equal(pipe(p), 0);
	f.fd = p[1];
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	read_outcome(p[0], limit, &piped);
	close(p[0]);
	pthread_join(th, NULL);
	assert_int_equal(mapped->ret, piped.ret);
	assert_int_equal(mapped->records, piped.records);
	assert_string_equal(mapped->err, piped.err);
}

static void test_scout_agrees_with_pipe(void **state)
{
	const unsigned n = 60;
	struct outcome o;
	struct bytes b;
	size_t good;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	/* complete */
	b = good_records(n, 1);
	put_trailer(&b, n);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_END);
	assert_int_equal(o.records, n);
	assert_string_equal(o.err, "");
	/* cut inside the last record's bin, and just after its header */
	b.len -= 6 + 100;
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_TRUNCATED);
	assert_contains(o.err, "stream cut short inside the record at byte");
	free(b.p);

	/* a length that lies: more bytes than the file holds, then less */
	b = good_records(n, 2);
	good = b.len;
	put(&b, "\x93\x0b\x01", 3);
	put_bin_header(&b, 5000, false);
	put(&b, "abc", 3);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_TRUNCATED);
	assert_int_equal(o.records, n);
	b.len = good;
	put(&b, "\x93\x0b\x01", 3);
	put_bin_header(&b, 2, false);
	for (int i = 0; i < 300; i++)
		put_byte(&b, (unsigned char)(0x90 + i % 40));	/* what follows is garbage */
	same_both_ways(&b, 0, &o);
	assert_int_not_equal(o.ret, MS_READ_END);
	free(b.p);

	/* a header claiming more than the record limit (a wide bin32) */
	b = good_records(n, 3);
	put(&b, "\x93\x0b\x01", 3);
	put_bin_header(&b, 1u << 30, true);
	put(&b, "xyz", 3);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_ERROR);
	assert_contains(o.err, "exceeds the limit");
	free(b.p);

	/* a bad type byte inside a later record, and a record that is no array */
	b = good_records(n, 4);
	put(&b, "\x93\x0b\x01\xc1", 4);
	put_raw_record(&b, 0, 10);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_ERROR);
	assert_contains(o.err, "invalid msgpack type byte 0xc1");
	free(b.p);
	b = good_records(n, 5);
	put(&b, "\x81\x01\x02", 3);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_ERROR);
	assert_contains(o.err, "not an array");
	free(b.p);

	/* a limit lowered after opening: what the scout framed ahead is judged again */
	b = good_records(n, 6);
	put_trailer(&b, n);
	same_both_ways(&b, 4096, &o);
	assert_int_equal(o.ret, MS_READ_ERROR);
	assert_contains(o.err, "exceeds the limit of 4096 bytes");
	free(b.p);
}

/* Big-endian n bytes of v. */
static void put_be(struct bytes *b, uint64_t v, int n)
{
	for (int sh = 8 * (n - 1); sh >= 0; sh -= 8)
		put_byte(b, (unsigned char)(v >> sh));
}

/* An unsigned integer in the form ms_writer uses (the smallest). */
static void put_uint(struct bytes *b, uint64_t v)
{
	if (v < 128) {
		put_byte(b, (unsigned char)v);
	} else if (v < 256) {
		put_byte(b, 0xcc);
		put_be(b, v, 1);
	} else if (v < 65536) {
		put_byte(b, 0xcd);
		put_be(b, v, 2);
	} else if (v >> 32 == 0) {
		put_byte(b, 0xce);
		put_be(b, v, 4);
	} else {
		put_byte(b, 0xcf);
		put_be(b, v, 8);
	}
}

/* The value of nested element k of record i (below). */
static uint64_t nested_value(unsigned i, unsigned k)
{
	static const uint64_t big[] = { 0, 127, 128, 255, 256, 65535, 65536,
					0xffffffffull, 0x100000000ull, UINT64_MAX };

	return big[(i + k) % 10] + (k % 3 ? 0 : (uint64_t)i << 40);
}

/*
 * [126, i, [n integers], "ab", [i % 3 integers], bin of 3, -1]: a record of
 * SAMPLE's shape (integers, strings, bins and arrays of integers, in a
 * fixarray), whose chains are fixarrays or array16 (n of 0, 15, 16 or 40).
 */
static void put_nested_record(struct bytes *b, unsigned i)
{
	static const unsigned lens[] = { 0, 15, 16, 40 };
	unsigned n = lens[i % 4], k;

	put_byte(b, 0x97);
	put_byte(b, 126);
	put_uint(b, i);
	if (n < 16) {
		put_byte(b, (unsigned char)(0x90 | n));
	} else {
		put_byte(b, 0xdc);
		put_be(b, n, 2);
	}
	for (k = 0; k < n; k++)
		put_uint(b, nested_value(i, k));
	put(b, "\xa2" "ab", 3);
	put_byte(b, (unsigned char)(0x90 | i % 3));
	for (k = 0; k < i % 3; k++)
		put_uint(b, k);
	put(b, "\xc4\x03xyz", 5);
	put_byte(b, 0xff);
}

static struct bytes nested_records(unsigned n)
{
	struct bytes b = header_bytes();

	for (unsigned i = 0; i < n; i++)
		put_nested_record(&b, i);
	return b;
}

/* Record i as nested_records() wrote it, read back value by value. */
static void check_nested(const struct ms_record *rec, unsigned i)
{
	static const unsigned lens[] = { 0, 15, 16, 40 };
	struct bytes want = { 0 };
	msgpack_unpacked mp;
	const msgpack_object *o, *e;
	size_t off = 0;

	put_nested_record(&want, i);
	assert_int_equal(rec->len, want.len);
	assert_memory_equal(rec->bytes, want.p, want.len);
	free(want.p);
	msgpack_unpacked_init(&mp);
	assert_int_equal(msgpack_unpack_next(&mp, rec->bytes, rec->len, &off),
			 MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, rec->len);
	o = &mp.data;
	assert_int_equal(o->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(o->via.array.size, 7);
	e = o->via.array.ptr;
	assert_int_equal(e[0].via.u64, 126);
	assert_int_equal(e[1].via.u64, i);
	assert_int_equal(e[2].type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(e[2].via.array.size, lens[i % 4]);
	for (unsigned k = 0; k < lens[i % 4]; k++)
		assert_int_equal(e[2].via.array.ptr[k].via.u64, nested_value(i, k));
	assert_int_equal(e[3].type, MSGPACK_OBJECT_STR);
	assert_int_equal(e[4].via.array.size, i % 3);
	for (unsigned k = 0; k < i % 3; k++)
		assert_int_equal(e[4].via.array.ptr[k].via.u64, k);
	assert_int_equal(e[5].type, MSGPACK_OBJECT_BIN);
	assert_int_equal(e[6].via.i64, -1);
	msgpack_unpacked_destroy(&mp);
}

/* Records with arrays of integers: framed whole, mapped or piped. */
static void test_scan_nested_arrays(void **state)
{
	const unsigned n = 40;
	struct bytes b = nested_records(n);
	struct ms_reader *r;
	struct ms_record rec;
	struct outcome o;
	unsigned i = 0;
	int fd, ret;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	put_trailer(&b, n);
	fd = new_fd();
	write_bytes(fd, b.p, b.len);
	rewind_fd(fd);
	r = reopen(fd);
	assert_non_null(r);
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		check_nested(&rec, i++);
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(i, n);
	ms_reader_free(r);
	close(fd);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_END);
	assert_int_equal(o.records, n);
	free(b.p);
}

/*
 * A record with arrays of integers cut at every byte, and each of its
 * bytes replaced by bytes that break it (or make another record of it):
 * what the reader says is the same mapped and piped.
 */
static void test_scan_nested_malformed(void **state)
{
	static const unsigned char bad[] = { 0xc1, 0xdc, 0xdd, 0x9f, 0xa5, 0xc4, 0xcf, 0x81,
					     0xc0 };
	struct bytes b = nested_records(8), t;
	size_t good = b.len, len;
	struct outcome o;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	/* record 7: a 40-integer array16 and a fixarray of one */
	put_nested_record(&b, 7);
	len = b.len - good;
	for (size_t cut = 1; cut < len; cut++) {
		t = b;
		t.len = good + cut;
		same_both_ways(&t, 0, &o);
		assert_int_equal(o.ret, MS_READ_TRUNCATED);
		assert_int_equal(o.records, 8);
		assert_contains(o.err, "stream cut short inside the record at byte");
	}
	put_trailer(&b, 9);
	for (size_t at = good; at < good + len; at++) {
		unsigned char keep = (unsigned char)b.p[at];

		for (size_t k = 0; k < sizeof(bad); k++) {
			b.p[at] = (char)bad[k];
			same_both_ways(&b, 0, &o);
			assert_true(o.records >= 8);
		}
		b.p[at] = (char)keep;
	}
	/* An array16 that claims more elements than the record limit leaves. */
	b.len = good;
	put(&b, "\x93\x7e\x01\xdc\xff\xff\x01\x02", 8);
	same_both_ways(&b, 4096, &o);
	assert_int_equal(o.ret, MS_READ_ERROR);
	assert_contains(o.err, "claims 65535 elements");
	/* An array of integers nested one more level: the general scan, the same records. */
	b.len = good;
	put(&b, "\x93\x7e\x91\x92\x01\x02\x03", 7);
	put_trailer(&b, 9);
	same_both_ways(&b, 0, &o);
	assert_int_equal(o.ret, MS_READ_END);
	assert_int_equal(o.records, 9);
	free(b.p);
}

static void test_scout_stays_in_the_mapping(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct bytes b = good_records(40, 7);
	struct ms_reader *r;
	struct ms_record rec;
	const char *map, *err;
	size_t len, fill;
	void *guard;
	int fd, ret;

	(void)state;
	/*
	 * The file ends at a page boundary, inside a last raw record whose
	 * bin claims more than is left; a page after the mapping is made
	 * inaccessible where the address space allows, so that a read past
	 * the end would crash the test rather than go unnoticed.
	 */
	fill = page - (b.len + 6) % page;
	put(&b, "\x93\x0b\x01", 3);
	put_bin_header(&b, (uint32_t)fill + 1000, false);
	for (size_t i = 0; i < fill; i++)
		put_byte(&b, 0x7f);
	assert_int_equal(b.len % page, 0);
	fd = new_fd();
	write_bytes(fd, b.p, b.len);
	begin_capture();
	r = reopen(fd);
	assert_non_null(r);
	map = ms_reader_map(r, &len);
	assert_non_null(map);
	assert_int_equal(len, b.len);
	guard = mmap((void *)(map + len), page, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		;
	ms_reader_free(r);
	err = end_capture();
	assert_int_equal(ret, MS_READ_TRUNCATED);
	assert_contains(err, "stream cut short inside the record at byte");
	assert_int_equal(count_lines(err), 1);
	if (guard != MAP_FAILED)
		munmap(guard, page);
	free(b.p);
	close(fd);
}

/* ms-decode packs samples itself (fastpack.h): the bytes of ms_sample_pack(). */
static void test_fastpack_sample_same_bytes(void **state)
{
	static char enc[MS_RECORD_MAX];
	struct ms_sample s;

	(void)state;
	fill_records();
	for (int round = 0; round < 8; round++) {
		int fd = new_fd();
		struct ms_writer *w = ms_writer_open(fd, "test", 0);
		struct ms_reader *r;
		struct ms_record rec;
		char *end;

		s = sample_in;
		s.n_uchain = round * 37 % 100;
		s.n_kchain = round % 3;
		s.time = round & 1 ? 5 : UINT64_MAX - round;
		s.pid = round < 4 ? 200 : 70000;
		s.n_regs = round == 2 ? 0 : s.n_regs;
		s.stack_len = round % 4 == 0 ? 0 : 4000 + round;
		s.stack_in_file = round % 2;
		s.stack_offset = round * 100000ull;
		if (s.stack_in_file)
			s.stack = NULL;
		end = fp_sample(enc, &s);
		assert_true((size_t)(end - enc) <= fp_sample_bound(&s));
		assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
		assert_int_equal(ms_sample_pack(w, &s), 0);
		assert_int_equal(ms_writer_trailer(w, true), 0);
		assert_int_equal(ms_writer_close(w), 0);
		r = reopen(fd);
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.len, (size_t)(end - enc));
		assert_memory_equal(rec.bytes, enc, rec.len);
		ms_reader_free(r);
		close(fd);
	}
}

/* ---- STACK_REF records: framed at once when deferred, as by the general scan ---- */

/* An integer v in a random width: unsigned, signed, or the shortest. */
static void put_int_any(struct bytes *b, uint64_t v, unsigned *seed)
{
	unsigned r = (unsigned)rand_r(seed) % 6;

	if (r == 0 && v <= 0x7f) {
		put_byte(b, (unsigned char)v);
	} else if (r == 1 && v <= 0xff) {
		put_byte(b, 0xcc);
		put_byte(b, (unsigned char)v);
	} else if (r == 2 && v <= 0x7fff) {
		put_byte(b, 0xd1);
		put_byte(b, (unsigned char)(v >> 8));
		put_byte(b, (unsigned char)v);
	} else if (r == 3 && v <= 0xffffffffu) {
		put_byte(b, 0xce);
		for (int sh = 24; sh >= 0; sh -= 8)
			put_byte(b, (unsigned char)(v >> sh));
	} else if (r == 4) {
		put_byte(b, 0xe0 | (unsigned char)(v & 0x1f));	/* a negative fixint */
	} else {
		put_byte(b, 0xcf);
		for (int sh = 56; sh >= 0; sh -= 8)
			put_byte(b, (unsigned char)(v >> sh));
	}
}

/* Header, STACK_REFs of every encoding (some not 7 integers), a trailer. */
static struct bytes stack_refs(unsigned n, unsigned seed)
{
	struct bytes b = header_bytes();

	for (unsigned i = 0; i < n; i++) {
		unsigned shape = (unsigned)rand_r(&seed) % 10, fields = shape == 0 ? 5 : shape == 1 ? 7 : 6;

		put_byte(&b, (unsigned char)(0x90 | (fields + 1)));
		put_byte(&b, MS_REC_STACK_REF);
		for (unsigned k = 0; k < fields; k++) {
			if (shape == 2 && k == 3)
				put(&b, "\xa2no", 3);		/* a string where an integer goes */
			else
				put_int_any(&b, (uint64_t)rand_r(&seed) * rand_r(&seed), &seed);
		}
	}
	put_trailer(&b, n);
	return b;
}

/*
 * What a reader makes of each record: where, what, what unpacking says
 * (by the fast path, or by the generic codec alone), and what msgpack-c,
 * a framing of its own, makes of the record's bytes.
 */
static void read_refs(int fd, bool generic, char *out, size_t cap)
{
	struct ms_reader *r;
	struct ms_record rec;
	size_t used = 0;
	int ret;

	begin_capture();
	r = ms_reader_open(fd, "test");
	assert_non_null(r);
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		struct ms_stack_ref ref = { 0 };
		int v = generic ? ms_schema_unpack(&ms_stack_ref_schema, 0, &rec, &ref)
				: ms_stack_ref_unpack(&rec, &ref);
		msgpack_unpacked mp;
		size_t off = 0;

		msgpack_unpacked_init(&mp);
		assert_int_equal(msgpack_unpack_next(&mp, rec.bytes, rec.len, &off),
				 MSGPACK_UNPACK_SUCCESS);
		assert_int_equal(off, rec.len);
		used += (size_t)snprintf(out + used, cap - used, "%" PRIu64 "+%zu k%u v%d %u %u %" PRIu64
					 " %u %" PRIu64 " %u ", rec.offset, rec.len, rec.kind, v,
					 ref.pid, ref.tid, ref.time, ref.cpu, ref.period, ref.id);
		used += (size_t)msgpack_object_print_buffer(out + used, cap - used, mp.data);
		used += (size_t)snprintf(out + used, cap - used, "\n");
		msgpack_unpacked_destroy(&mp);
		assert_true(used < cap - 512);
	}
	ms_reader_free(r);
	snprintf(out + used, cap - used, "end %d: %s", ret, end_capture());
}

static void test_stack_ref_fast_framing(void **state)
{
	static char fast[1 << 20], general[1 << 20];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	for (unsigned round = 0; round < 40; round++) {
		struct bytes b = stack_refs(300, round);
		struct feeder f = { .bytes = b.p, .len = b.len, .seed = round };
		int fd = new_fd(), p[2];
		pthread_t th;

		/* Flip a byte now and then, or cut the stream short. */
		if (round % 3 == 1)
			b.p[60 + rand_r(&f.seed) % (b.len - 60)] ^= (char)(1 + rand_r(&f.seed) % 255);
		if (round % 5 == 2)
			b.len -= 1 + rand_r(&f.seed) % 40;
		f.len = b.len;
		write_bytes(fd, b.p, b.len);
		rewind_fd(fd);
		read_refs(fd, true, general, sizeof(general));
		rewind_fd(fd);
		read_refs(fd, false, fast, sizeof(fast));
		assert_string_equal(fast, general);
		close(fd);
		/* from a pipe fed in pieces: records cut anywhere */
		assert_int_equal(pipe(p), 0);
		f.fd = p[1];
		assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
		read_refs(p[0], true, fast, sizeof(fast));
		close(p[0]);
		pthread_join(th, NULL);
		assert_string_equal(fast, general);
		free(b.p);
	}
}

/*
 * A mapped input cut short while it is read (another process truncates
 * the file): the reader says so, as a stream cut short naming the input
 * and the byte, and the process gets no SIGBUS (util/mapguard.h).
 */
static void test_truncated_while_mapped(void **state)
{
	static uint8_t data[1000];
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "test", 0);
	struct ms_reader *r;
	struct ms_record rec;
	const char *err;
	int ret, n = 1;

	(void)state;
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	for (int i = 0; i < 4000; i++) {
		struct ms_raw raw = { .cpu = 0, .data = data, .len = sizeof(data) };

		assert_int_equal(ms_raw_pack(w, &raw), 0);
	}
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	r = reopen(fd);
	assert_non_null(r);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	/* Cut to 64 KiB: about 60 records are left. */
	assert_int_equal(ftruncate(fd, 65536), 0);
	begin_capture();
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD)
		n++;
	err = end_capture();
	assert_int_equal(ret, MS_READ_TRUNCATED);
	assert_true(n < 70);
	assert_contains(err, "'test' was cut short while being read: it ends before byte 65536 now");
	assert_int_equal(count_lines(err), 1);
	ms_reader_free(r);
	close(fd);
}

/* A stack file cut short while mapped: said once, never SIGBUS. */
static void test_stack_file_cut(void **state)
{
	static char page[4096];
	struct ms_stack_file f;
	struct ms_stack_map m = { .guard = -1 };
	char dir[512], file[600], path[4096];
	const char *why, *err;
	const uint8_t *p;
	volatile uint8_t sum = 0;
	int sfd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/stream-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/run.msr", dir);
	sfd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(sfd >= 0);
	memset(page, 'x', sizeof(page));
	for (int i = 0; i < 64; i++)
		assert_int_equal(write(sfd, page, sizeof(page)), (ssize_t)sizeof(page));
	assert_int_equal(ms_stack_file_describe(sfd, &f, path, sizeof(path), &why), 0);
	assert_int_equal(ms_stack_map_open(&m, &f, "test"), 0);
	assert_false(ms_stack_map_cut(&m, "test"));
	assert_int_equal(ftruncate(sfd, 8192), 0);
	/* a read past the new end: zeros, and the cut is known */
	p = ms_stack_map_at(&m, 40000, 64);
	assert_non_null(p);
	for (int i = 0; i < 64; i++)
		sum += p[i];
	assert_int_equal(sum, 0);
	begin_capture();
	assert_true(ms_stack_map_cut(&m, "test"));
	assert_true(ms_stack_map_cut(&m, "test"));
	err = end_capture();
	assert_contains(err, "'test': its stack file was cut short while being read");
	assert_int_equal(count_lines(err), 1);
	ms_stack_map_close(&m);
	close(sfd);
	unlink(file);
	rmdir(dir);
}

#define T(f) cmocka_unit_test_teardown(f, restore_stderr)

/* ---- off-CPU records (minor 4): round trips and malformed input ---- */

static void test_off_cpu_records(void **state)
{
	static const char *const names[] = { "prev_pid", "prev_state" };
	static struct ms_tracepoint tp, tp_back;
	static struct ms_switch_out so, so_back;
	static uint8_t stack[64];
	struct ms_switch sw = { 7, 8, 1000, 1, true, true }, sw_back;
	struct ms_off_cpu oc = { 7, 8, 2000, 1, 0x100, MS_CAUSE_PREEMPTED, 5 }, oc_back;
	struct ms_interval iv = { 7, 8, 1000, 0, UINT32_MAX, 2, UINT32_MAX, MS_CAUSE_SLEEPING,
				  3, 1, 0 }, iv_back;
	struct ms_record rec;
	struct ms_reader *r;
	struct ms_writer *w;
	const char *err;
	int fd;

	(void)state;
	assert_string_equal(ms_record_kind_name(MS_REC_TRACEPOINT), "tracepoint");
	assert_string_equal(ms_record_kind_name(MS_REC_SWITCH), "switch");
	assert_string_equal(ms_record_kind_name(MS_REC_SWITCH_OUT), "switch-out");
	assert_string_equal(ms_record_kind_name(MS_REC_OFF_CPU), "off-cpu");
	assert_string_equal(ms_record_kind_name(MS_REC_INTERVAL), "interval");
	tp.config = 372;
	tp.name = (struct ms_str){ "sched:sched_switch", 18 };
	tp.n_fields = tp.n_offsets = tp.n_sizes = tp.n_signed = 2;
	for (int i = 0; i < 2; i++) {
		tp.fields[i] = (struct ms_str){ names[i], (uint32_t)strlen(names[i]) };
		tp.offsets[i] = 24 + 8 * (uint64_t)i;
		tp.sizes[i] = 4 + 4 * (uint64_t)i;
		tp.is_signed[i] = 1;
	}
	for (uint32_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(i * 3);
	so.sample.pid = 7;
	so.sample.tid = 8;
	so.sample.time = 3000;
	so.sample.cpu = 1;
	so.sample.period = 1;
	so.sample.ip = 0xffffffff81000000ull;
	so.sample.cpumode = MS_CPUMODE_KERNEL;
	so.sample.n_kchain = 1;
	so.sample.kchain[0] = 0xffffffff81000010ull;
	so.sample.n_uchain = 2;
	so.sample.uchain[0] = 0x401000;
	so.sample.uchain[1] = 0x401100;
	so.sample.regs_abi = 2;
	so.sample.regs_mask = 0x3;
	so.sample.n_regs = 2;
	so.sample.regs[0] = 11;
	so.sample.regs[1] = 0x7ffc0000;
	so.sample.stack = stack;
	so.sample.stack_len = sizeof(stack);
	so.state = 2;
	so.cause = MS_CAUSE_BLOCKED;

	fd = new_fd();
	w = ms_writer_open(fd, "test", 0);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1.0"), 0);
	assert_int_equal(ms_tracepoint_pack(w, &tp), 0);
	assert_int_equal(ms_switch_pack(w, &sw), 0);
	assert_int_equal(ms_switch_out_pack(w, &so), 0);
	/* a switch-out whose stack is in the STACK_FILE */
	so.sample.stack_in_file = true;
	so.sample.stack_offset = 4096;
	so.sample.stack = NULL;
	assert_int_equal(ms_switch_out_pack(w, &so), 0);
	assert_int_equal(ms_off_cpu_pack(w, &oc), 0);
	assert_int_equal(ms_interval_pack(w, &iv), 0);
	/* parallel arrays of unequal length are not written */
	tp.n_sizes = 1;
	begin_capture();
	assert_int_equal(ms_tracepoint_pack(w, &tp), -1);
	err = end_capture();
	assert_contains(err, "field arrays differ in length");
	tp.n_sizes = 2;
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reopen(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(rec.kind, MS_REC_TRACEPOINT);
	assert_int_equal(ms_tracepoint_unpack(&rec, &tp_back), 0);
	assert_int_equal(tp_back.config, 372);
	assert_int_equal(tp_back.name.len, 18);
	assert_memory_equal(tp_back.name.ptr, "sched:sched_switch", 18);
	assert_int_equal(tp_back.n_fields, 2);
	assert_memory_equal(tp_back.fields[1].ptr, "prev_state", tp_back.fields[1].len);
	assert_int_equal(tp_back.offsets[1], 32);
	assert_int_equal(tp_back.sizes[0], 4);
	assert_int_equal(tp_back.is_signed[1], 1);

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_switch_unpack(&rec, &sw_back), 0);
	assert_int_equal(sw_back.pid, 7);
	assert_int_equal(sw_back.tid, 8);
	assert_int_equal(sw_back.time, 1000);
	assert_int_equal(sw_back.cpu, 1);
	assert_true(sw_back.out && sw_back.preempt);

	for (int i = 0; i < 2; i++) {
		const struct ms_sample *s = &so_back.sample;

		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.kind, MS_REC_SWITCH_OUT);
		assert_int_equal(ms_switch_out_unpack(&rec, &so_back), 0);
		assert_int_equal(s->pid, 7);
		assert_int_equal(s->tid, 8);
		assert_int_equal(s->time, 3000);
		assert_int_equal(s->cpumode, MS_CPUMODE_KERNEL);
		assert_int_equal(s->n_kchain, 1);
		assert_int_equal(s->kchain[0], 0xffffffff81000010ull);
		assert_int_equal(s->n_uchain, 2);
		assert_int_equal(s->uchain[1], 0x401100);
		assert_int_equal(s->n_regs, 2);
		assert_int_equal(s->regs[1], 0x7ffc0000);
		assert_int_equal(s->stack_len, sizeof(stack));
		assert_int_equal(s->stack_in_file, i == 1);
		if (i == 0)
			assert_memory_equal(s->stack, stack, sizeof(stack));
		else
			assert_int_equal(s->stack_offset, 4096);
		assert_int_equal(so_back.state, 2);
		assert_int_equal(so_back.cause, MS_CAUSE_BLOCKED);
	}

	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_off_cpu_unpack(&rec, &oc_back), 0);
	assert_int_equal(oc_back.pid, 7);
	assert_int_equal(oc_back.tid, 8);
	assert_int_equal(oc_back.time, 2000);
	assert_int_equal(oc_back.cpu, 1);
	assert_int_equal(oc_back.state, 0x100);
	assert_int_equal(oc_back.cause, MS_CAUSE_PREEMPTED);
	assert_int_equal(oc_back.id, 5);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_interval_unpack(&rec, &iv_back), 0);
	assert_int_equal(iv_back.start, 1000);
	assert_int_equal(iv_back.end, 0);
	assert_int_equal(iv_back.cpu, UINT32_MAX);
	assert_int_equal(iv_back.missing, 2);
	assert_int_equal(iv_back.stack, UINT32_MAX);
	assert_int_equal(iv_back.cause, MS_CAUSE_SLEEPING);
	assert_int_equal(iv_back.sources, 3);
	assert_int_equal(iv_back.state, 1);
	assert_int_equal(iv_back.preempt, 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);

	/* [17, 1, "a", ["x", "y"], [0], [4, 4], [0, 0]]: arrays of unequal length */
	r = one_record("\x97\x11\x01\xa1" "a" "\x92\xa1x\xa1y\x91\x00\x92\x04\x04\x92\x00\x00", 19,
		       &rec);
	begin_capture();
	assert_int_equal(ms_tracepoint_unpack(&rec, &tp_back), -1);
	err = end_capture();
	assert_contains(err, "malformed tracepoint record");
	assert_contains(err, "must be parallel");
	ms_reader_free(r);
	/* a field name that is not a string */
	r = one_record("\x97\x11\x01\xa1" "a" "\x91\x05\x91\x00\x91\x04\x91\x00", 13, &rec);
	begin_capture();
	assert_int_equal(ms_tracepoint_unpack(&rec, &tp_back), -1);
	end_capture();
	ms_reader_free(r);
	/* a switch whose out is not a boolean */
	r = one_record("\x97\x1c\x07\x08\x01\x00\x01\xc2", 8, &rec);
	begin_capture();
	assert_int_equal(ms_switch_unpack(&rec, &sw_back), -1);
	err = end_capture();
	assert_contains(err, "malformed switch record");
	ms_reader_free(r);
	/* a switch-out without its evidence */
	r = one_record("\xdc\x00\x0e\x1d\x07\x08\x01\x00\x01\x00\x01\x90\x90\x00\x00\xc4\x00\xc4\x00", 19,
		       &rec);
	begin_capture();
	assert_int_equal(ms_switch_out_unpack(&rec, &so_back), -1);
	err = end_capture();
	assert_contains(err, "field 'state' is missing");
	ms_reader_free(r);
	/* an off-cpu whose cause is past 32 bits */
	r = one_record("\x98\x22\x07\x08\x01\x00\x01\xcf\x00\x00\x00\x01\x00\x00\x00\x00\x00", 17,
		       &rec);
	begin_capture();
	assert_int_equal(ms_off_cpu_unpack(&rec, &oc_back), -1);
	err = end_capture();
	assert_contains(err, "more than 32 bits");
	ms_reader_free(r);
	/* an interval cut short */
	r = one_record("\x95\x23\x07\x08\x01\x02", 6, &rec);
	begin_capture();
	assert_int_equal(ms_interval_unpack(&rec, &iv_back), -1);
	err = end_capture();
	assert_contains(err, "malformed interval record");
	ms_reader_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_round_trip_every_kind),
		T(test_off_cpu_records),
		T(test_header_and_trailer),
		T(test_writer_misuse),
		T(test_oversized_record_not_written),
		T(test_many_records_cross_buffers),
		T(test_truncated_between_records),
		T(test_truncated_everywhere),
		T(test_empty_input),
		T(test_wrong_magic),
		T(test_newer_major_version),
		T(test_bad_producers),
		T(test_record_over_limit),
		T(test_hostile_headers),
		T(test_hostile_header_in_first_record),
		T(test_deep_nesting),
		T(test_record_not_array),
		T(test_unknown_kind_passes),
		T(test_trailing_garbage),
		T(test_trailer_mismatch),
		T(test_unpack_validates),
		T(test_sample_bounds),
		T(test_stack_bytes_path),
		T(test_stack_file),
		T(test_vdso_record),
		T(test_stack_def_ref),
		T(test_stack_ref_runs),
		T(test_raw_fast_framing),
		T(test_other_bounds),
		T(test_pack_refuses_overfull),
		T(test_pass_through_identical),
		T(test_read_from_pipe_in_pieces),
		T(test_pipe_writes_soon),
		T(test_epipe),
		T(test_epipe_when_buffer_fills),
		T(test_nonblock_room),
		T(test_flush_before_blocking_read),
		T(test_problems),
		T(test_names),
		T(test_no_allocation_per_record),
		T(test_fuzz_flips),
		T(test_fuzz_random_records),
		T(test_scout_agrees_with_pipe),
		T(test_scan_nested_arrays),
		T(test_scan_nested_malformed),
		T(test_scout_stays_in_the_mapping),
		T(test_fastpack_sample_same_bytes),
		T(test_stack_ref_fast_framing),
		T(test_truncated_while_mapped),
		T(test_stack_file_cut),
	};

	ms_set_progname("stream-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
