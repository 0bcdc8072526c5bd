/*
 * Unit tests of the pairing of Python walker records with their samples
 * (perf/pypair.h): the table's rules directly, then the ms-decode stage
 * over synthetic rings (tests/unit/pystream.h: pys_scenario()): a record before its sample
 * and one stamped after it, a sample before any record, two rings
 * interleaved with times out of order, a LOST between a record and its
 * sample, a sample that never comes, a record whose sample comes after
 * the watermark passed it, a full table; every PY_STACK just before its
 * SAMPLE with the sample's pid, tid, time and cpu.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "perf/decode.h"
#include "perf/pypair.h"
#include "stream/stream.h"
#include "tests/unit/pystream.h"
#include "tests/unit/tmpdir.h"
#include "util/error.h"

/* ---- the table ---- */

static struct ms_problems problems;
static struct ms_py_pair pair;

/* A checked record of thread tid: kind PYTHON with n frames from base, or SAMPLE. */
static struct ms_bpf_record *rec(uint32_t tid, uint16_t kind, uint32_t n, uint64_t base)
{
	static uint8_t buf[MS_BPF_RECORD_MAX];
	static struct ms_bpf_record r;
	struct ms_bpf_header h = { .magic = MS_BPF_MAGIC, .version = MS_BPF_VERSION,
				   .kind = kind, .size = sizeof(h), .tid = tid, .pid = 7 };
	struct ms_bpf_py_head py = { .status = MS_BPF_PY_COMPLETE, .n_frames = n,
				     .tstate = 0x5000 + tid, .gil = MS_BPF_PY_GIL_RELEASED };
	size_t len = sizeof(h);
	const char *code;
	char detail[200];

	if (kind == MS_BPF_KIND_PYTHON) {
		h.size += (uint32_t)(sizeof(py) + n * sizeof(struct ms_bpf_py_frame));
		memcpy(buf + len, &py, sizeof(py));
		len += sizeof(py);
		for (uint32_t i = 0; i < n; i++) {
			struct ms_bpf_py_frame f = { base + i, 1, 2, 0, 0 };

			memcpy(buf + len, &f, sizeof(f));
			len += sizeof(f);
		}
	}
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(ms_bpf_record_check(buf, len, &r, &code, detail, sizeof(detail)), 0);
	return &r;
}

static void add(uint32_t ring, uint32_t tid, uint64_t time, uint64_t base)
{
	assert_int_equal(ms_py_pair_record(&pair, ring, rec(tid, MS_BPF_KIND_PYTHON, 2, base),
					   time), 0);
}

/* The first frame's code of what thread tid's sample on ring takes; 0: nothing. */
static uint64_t take(uint32_t ring, uint32_t tid)
{
	const struct ms_py_pending *py = ms_py_pair_take(&pair, ring, tid);

	if (!py)
		return 0;
	assert_int_equal(py->tid, tid);
	assert_int_equal(py->head.n_frames, 2);
	return py->frames[0].code;
}

static uint64_t count(const char *code)
{
	for (uint32_t i = 0; i < problems.n; i++)
		if (!strcmp(problems.entries[i].code, code))
			return problems.entries[i].count;
	return 0;
}

static int setup_pair(void **state)
{
	(void)state;
	ms_problems_init(&problems, "test");
	ms_py_pair_init(&pair, &problems);
	return 0;
}

static int teardown_pair(void **state)
{
	(void)state;
	ms_py_pair_release(&pair);
	return 0;
}

/* The next sample of the thread on the ring takes the record, once. */
static void test_next_sample(void **state)
{
	(void)state;
	assert_true(ms_py_pair_idle(&pair));
	assert_int_equal(take(0, 5), 0);
	add(0, 5, 100, 0xa0);
	assert_false(ms_py_pair_idle(&pair));
	/* another thread's sample, or this thread's on another ring: nothing */
	assert_int_equal(take(0, 6), 0);
	assert_int_equal(take(1, 5), 0);
	assert_int_equal(take(0, 5), 0xa0);
	assert_int_equal(take(0, 5), 0);
	assert_true(ms_py_pair_idle(&pair));
	/* one thread on two rings: each ring its own */
	add(0, 5, 200, 0xb0);
	add(3, 5, 201, 0xc0);
	assert_int_equal(take(3, 5), 0xc0);
	assert_int_equal(take(0, 5), 0xb0);
	assert_int_equal(pair.n.paired, 3);
	assert_int_equal(problems.n, 0);
}

/* A second record (or a SAMPLE record) of the thread before a sample: the first was unpaired. */
static void test_replaced(void **state)
{
	(void)state;
	add(0, 5, 100, 0xa0);
	add(0, 5, 110, 0xb0);
	assert_int_equal(count("py-record-unpaired"), 1);
	assert_int_equal(take(0, 5), 0xb0);
	add(0, 5, 120, 0xc0);
	assert_int_equal(ms_py_pair_record(&pair, 0, rec(5, MS_BPF_KIND_SAMPLE, 0, 0), 130), 0);
	assert_int_equal(count("py-record-unpaired"), 2);
	assert_int_equal(take(0, 5), 0);
	/* a SAMPLE record of a thread with none waiting drops nothing */
	add(0, 6, 140, 0xd0);
	assert_int_equal(ms_py_pair_record(&pair, 0, rec(5, MS_BPF_KIND_SAMPLE, 0, 0), 150), 0);
	assert_int_equal(take(0, 6), 0xd0);
	assert_int_equal(pair.n.bare, 2);
	assert_int_equal(pair.n.unpaired, 2);
	assert_true(ms_py_pair_idle(&pair));
}

/* A full ring's table lets the oldest go; other rings are not touched. */
static void test_full(void **state)
{
	(void)state;
	add(1, 999, 50, 0xf0);
	for (uint32_t t = 0; t <= MS_PY_PAIR_SLOTS; t++)
		add(0, 10 + t, 100 + t, 0x100 * (t + 1));
	assert_int_equal(count("py-pairing-full"), 1);
	assert_int_equal(take(0, 10), 0);
	for (uint32_t t = 1; t <= MS_PY_PAIR_SLOTS; t++)
		assert_int_equal(take(0, 10 + t), 0x100 * (t + 1));
	assert_int_equal(take(1, 999), 0xf0);
	/* the table takes MS_PY_PAIR_SLOTS again, the oldest going first */
	for (uint32_t t = 0; t < MS_PY_PAIR_SLOTS + 2; t++)
		add(0, 10 + t, 300 + t, 0x100 * (t + 1));
	assert_int_equal(count("py-pairing-full"), 3);
	assert_int_equal(take(0, 10), 0);
	assert_int_equal(take(0, 11), 0);
	assert_int_equal(take(0, 12), 0x300);
	assert_int_equal(pair.n.full, 3);
}

/* A LOST on a ring drops that ring's records; ms-collect's (no ring) every ring's. */
static void test_lost(void **state)
{
	(void)state;
	add(0, 5, 100, 0xa0);
	add(1, 5, 100, 0xb0);
	add(1, 6, 100, 0xc0);
	ms_py_pair_lost(&pair, 0);
	assert_int_equal(count("py-record-lost"), 1);
	assert_int_equal(take(0, 5), 0);
	ms_py_pair_lost(&pair, 2);
	assert_int_equal(take(1, 5), 0xb0);
	add(2, 7, 100, 0xd0);
	ms_py_pair_lost(&pair, UINT32_MAX);
	assert_int_equal(count("py-record-lost"), 3);
	assert_true(ms_py_pair_idle(&pair));
}

/* The watermark drops a record it passed by more than the slack, not one within it. */
static void test_expire(void **state)
{
	const uint64_t t = 5000000000ull;

	(void)state;
	add(0, 5, t, 0xa0);
	add(1, 6, t + 1000, 0xb0);
	ms_py_pair_expire(&pair, t + MS_PY_PAIRING_SLACK_NS);
	assert_int_equal(pair.n.expired, 0);
	ms_py_pair_expire(&pair, t + MS_PY_PAIRING_SLACK_NS + 1);
	assert_int_equal(count("py-record-expired"), 1);
	assert_int_equal(take(0, 5), 0);
	assert_int_equal(take(1, 6), 0xb0);
	/* a watermark below the slack drops nothing (no underflow) */
	add(0, 5, 0, 0xc0);
	ms_py_pair_expire(&pair, MS_PY_PAIRING_SLACK_NS / 2);
	assert_int_equal(take(0, 5), 0xc0);
	/* the end drops what waits */
	add(0, 5, 10, 0xd0);
	ms_py_pair_end(&pair);
	assert_int_equal(count("py-record-at-end"), 1);
	assert_true(ms_py_pair_idle(&pair));
}

/* A ring past the bound: dropped, counted; the bound's last is a ring. */
static void test_bad_ring(void **state)
{
	(void)state;
	add(MS_PY_PAIR_CPUS, 5, 100, 0xa0);
	add(UINT32_MAX, 5, 100, 0xa0);
	assert_int_equal(count("py-record-ring"), 2);
	assert_true(ms_py_pair_idle(&pair));
	assert_int_equal(take(MS_PY_PAIR_CPUS, 5), 0);
	add(MS_PY_PAIR_CPUS - 1, 5, 100, 0xb0);
	assert_int_equal(take(MS_PY_PAIR_CPUS - 1, 5), 0xb0);
}

/* The PY_STACK's bytes are what ms_py_stack_pack() writes: they unpack to its fields. */
static void test_stack_bytes(void **state)
{
	static struct ms_py_stack want, got;
	static char buf[8192];
	const struct ms_py_pending *py;
	struct ms_record r = { .kind = MS_REC_PY_STACK };
	char *end;

	(void)state;
	for (uint32_t n = 0; n <= MS_BPF_PY_FRAMES_MAX; n += n < 3 ? 1 : 39) {
		struct ms_bpf_record *b = rec(77, MS_BPF_KIND_PYTHON, n, 0x7f1234567890ull);

		b->py.status = n ? MS_BPF_PY_TOO_DEEP : MS_BPF_PY_NO_THREAD;
		b->py.gil = MS_BPF_PY_GIL_HELD;
		assert_int_equal(ms_py_pair_record(&pair, 2, b, 1), 0);
		py = ms_py_pair_take(&pair, 2, 77);
		assert_non_null(py);
		end = ms_py_stack_fp(buf, py, 4000000, 77, 0x1234567890abull, 300);
		assert_true((size_t)(end - buf) <= ms_py_stack_bound(py));
		r.bytes = buf;
		r.len = (size_t)(end - buf);
		assert_int_equal(ms_py_stack_unpack(&r, &got), 0);
		ms_py_stack_of(py, 4000000, 77, 0x1234567890abull, 300, &want);
		assert_int_equal(got.pid, 4000000);
		assert_int_equal(got.tid, 77);
		assert_int_equal(got.time, 0x1234567890abull);
		assert_int_equal(got.cpu, 300);
		assert_int_equal(got.status, want.status);
		assert_int_equal(got.gil, MS_BPF_PY_GIL_HELD);
		assert_int_equal(got.tstate, 0x5000 + 77);
		assert_int_equal(got.n_words, 4 * n);
		assert_memory_equal(got.words, want.words, got.n_words * sizeof(got.words[0]));
		if (n)
			assert_int_equal(got.words[4 * (n - 1)], 0x7f1234567890ull + n - 1);
	}
}

/* ---- the stage over synthetic rings ---- */

static char dir[4096];

static int tmp_fd(void)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/s-XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

/* The input keeps its name (in the test's folder): samples may refer to it. */
static int make_stream(void)
{
	char path[4200];
	struct ms_writer *w;
	int fd;

	snprintf(path, sizeof(path), "%s/in.msr", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	w = ms_writer_open(fd, "input", 0);
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	pys_attrs(w);
	pys_scenario(w);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* What the output says, in order: one line per sample and PY_STACK, and the problems. */
static char *describe(int fd)
{
	static char out[16384];
	static struct ms_sample s;
	static struct ms_py_stack py;
	struct ms_reader *rd = ms_reader_open(fd, "output");
	struct ms_record rec;
	size_t n = 0;
	bool held = false;
	int ret;

	assert_non_null(rd);
	out[0] = '\0';
	while ((ret = ms_reader_next(rd, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_PY_STACK) {
			assert_false(held);
			assert_int_equal(ms_py_stack_unpack(&rec, &py), 0);
			held = true;
			continue;
		}
		if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem p;

			assert_int_equal(ms_problem_unpack(&rec, &p), 0);
			n += (size_t)snprintf(out + n, sizeof(out) - n, "problem %.*s %" PRIu64 "\n",
					      (int)p.code.len, p.code.ptr, p.count);
			continue;
		}
		/* a PY_STACK is followed by its SAMPLE, and nothing else */
		assert_true(!held || rec.kind == MS_REC_SAMPLE);
		if (rec.kind != MS_REC_SAMPLE)
			continue;
		assert_int_equal(ms_sample_unpack(&rec, &s), 0);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "sample %u cpu %u +%" PRIu64,
				      s.tid, s.cpu, (uint64_t)(s.time - PYS_T0));
		if (held) {
			assert_int_equal(py.pid, s.pid);
			assert_int_equal(py.tid, s.tid);
			assert_int_equal(py.time, s.time);
			assert_int_equal(py.cpu, s.cpu);
			assert_int_equal(py.tstate, 0x7f0000000000ull + s.tid);
			assert_true(py.n_words >= 4);
			assert_int_equal(py.words[py.n_words - 1], MS_BPF_PY_ENTRY);
			n += (size_t)snprintf(out + n, sizeof(out) - n, " py %u 0x%" PRIx64,
					      py.n_words / 4, py.words[0]);
			held = false;
		}
		n += (size_t)snprintf(out + n, sizeof(out) - n, "\n");
		assert_true(n < sizeof(out));
	}
	assert_int_equal(ret, MS_READ_END);
	assert_false(held);
	ms_reader_free(rd);
	return out;
}

static const char want[] =
	"sample 101 cpu 0 +1 py 3 0x101001\n"
	"sample 103 cpu 1 +5\n"
	"sample 104 cpu 1 +7\n"
	"sample 103 cpu 1 +8 py 1 0x103001\n"
	"sample 102 cpu 0 +10 py 2 0x102001\n"
	"sample 105 cpu 1 +32\n"
	"sample 108 cpu 0 +100000001 py 1 0x108001\n"
	"sample 106 cpu 2 +42 py 4 0x106001\n"
	"sample 109 cpu 0 +200000000\n"
	"sample 109 cpu 0 +1000000000\n"
	"sample 109 cpu 0 +1500000000\n"
	"sample 107 cpu 3 +1500000001\n"
	"problem py-record-lost 1\n"
	"problem out-of-order 1\n"
	"problem py-record-expired 1\n"
	"problem py-record-at-end 1\n";

static void run(bool checked_only, enum ms_stack_bytes how, bool pipe_in)
{
	uint64_t fast = 0;
	struct ms_decode_options opt = { .version = "test", .checked_only = checked_only,
					 .stack_bytes = how, .fast_samples = &fast };
	int in = make_stream(), out = tmp_fd();

	if (pipe_in) {
		/* not a mapped file: no sample is deferred */
		int p[2];
		char buf[65536];
		ssize_t got;

		assert_int_equal(pipe(p), 0);
		/* the stream is small: it fits the pipe */
		while ((got = read(in, buf, sizeof(buf))) > 0)
			assert_int_equal(write(p[1], buf, (size_t)got), got);
		close(p[1]);
		close(in);
		in = p[0];
	}
	assert_int_equal(ms_decode_stage(in, "input", out, "output", &opt), MS_EXIT_OK);
	close(in);
	assert_int_equal(lseek(out, 0, SEEK_SET), 0);
	assert_string_equal(describe(out), want);
	/* the samples took the fast path, or none did */
	assert_int_equal(fast, checked_only ? 0 : 12);
	close(out);
}

static void test_stage(void **state)
{
	(void)state;
	run(false, MS_STACK_BYTES_COPY, false);
	run(true, MS_STACK_BYTES_COPY, false);
	run(false, MS_STACK_BYTES_COPY, true);
	run(true, MS_STACK_BYTES_COPY, true);
	/* the stack copies referred to in the input */
	run(false, MS_STACK_BYTES_REFER, false);
	run(true, MS_STACK_BYTES_REFER, false);
}

static int setup_dir(void **state)
{
	(void)state;
	tmpdir_make(dir, sizeof(dir), "pypair-test");
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_next_sample, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_replaced, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_full, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_lost, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_expire, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_bad_ring, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_stack_bytes, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_stage, setup_dir, teardown_dir),
	};

	ms_set_progname("pypair-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
