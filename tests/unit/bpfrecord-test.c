/*
 * Unit tests of the BPF sampler's records: the checker (perf/bpfrecord.h)
 * fed good and malformed bytes, ms_decode() of an output event's sample,
 * and the pid namespace check (perf/pidns.h).
 *
 * Not a test: `bpfrecord-test --pairs < STREAM` decodes an ms-collect
 * stream's RAW records with ms_decode() and prints, per thread and CPU,
 * "tid TID cpu CPU samples N records M", then "samples N records M
 * skipped K" over all, for tests/0760-bpf-sampler.bats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/bpfrecord.h"
#include "perf/decode.h"
#include "perf/pidns.h"
#include "stream/records.h"
#include "stream/stream.h"

static const struct ms_bpf_header good = {
	.magic = MS_BPF_MAGIC, .version = MS_BPF_VERSION, .kind = MS_BPF_KIND_SAMPLE,
	.size = sizeof(struct ms_bpf_header), .cpu = 1, .pid = 100, .tid = 101, .time = 5,
};

/* The header h in buf, with pad bytes of the kernel's padding after it: the length. */
static size_t lay(uint8_t *buf, const struct ms_bpf_header *h, size_t pad)
{
	memcpy(buf, h, sizeof(*h));
	memset(buf + sizeof(*h), 0, pad);
	return sizeof(*h) + pad;
}

/* The problem code of checking h with pad bytes after it, or "ok". */
static const char *check(const struct ms_bpf_header *h, size_t pad)
{
	uint8_t buf[256];
	struct ms_bpf_record r;
	const char *code = "ok";
	char detail[200];
	size_t len = lay(buf, h, pad);

	if (ms_bpf_record_check(buf, len, &r, &code, detail, sizeof(detail)) == 0) {
		assert_int_equal(r.payload_len, h->size - sizeof(*h));
		assert_ptr_equal(r.payload, buf + sizeof(*h));
		assert_int_equal(r.h.tid, h->tid);
		return "ok";
	}
	assert_true(detail[0] != '\0');
	return code;
}

static void test_good(void **state)
{
	(void)state;
	assert_string_equal(check(&good, 0), "ok");
	/* the kernel pads 4 + 32 bytes of RAW to 40: 4 bytes after the record */
	assert_string_equal(check(&good, 4), "ok");
	assert_string_equal(check(&good, 7), "ok");
}

static void test_malformed(void **state)
{
	struct ms_bpf_header h;
	uint8_t buf[64];
	struct ms_bpf_record r;
	const char *code = NULL;
	char detail[200];

	(void)state;
	/* shorter than the header, down to nothing */
	memcpy(buf, &good, sizeof(good));
	for (size_t n = 0; n < sizeof(good); n++) {
		assert_int_equal(ms_bpf_record_check(buf, n, &r, &code, detail, sizeof(detail)), -1);
		assert_string_equal(code, "bpf-record-short");
	}
	h = good, h.magic ^= 1;
	assert_string_equal(check(&h, 0), "bpf-record-magic");
	h = good, h.version = MS_BPF_VERSION + 1;
	assert_string_equal(check(&h, 0), "bpf-record-version");
	h = good, h.version = 0;
	assert_string_equal(check(&h, 0), "bpf-record-version");
	h = good, h.size = sizeof(h) - 1;
	assert_string_equal(check(&h, 0), "bpf-record-size");
	h = good, h.size = 0;
	assert_string_equal(check(&h, 0), "bpf-record-size");
	/* a size past the raw data */
	h = good, h.size = sizeof(h) + 8;
	assert_string_equal(check(&h, 4), "bpf-record-size");
	h = good, h.size = UINT32_MAX;
	assert_string_equal(check(&h, 4), "bpf-record-size");
	/* more than padding after it */
	assert_string_equal(check(&good, 8), "bpf-record-size");
	h = good, h.size = MS_BPF_RECORD_MAX + 8;
	assert_string_equal(check(&h, 100), "bpf-record-size");
	h = good, h.kind = 0;
	assert_string_equal(check(&h, 0), "bpf-record-kind");
	h = good, h.kind = MS_BPF_KIND_PYTHON + 1;
	assert_string_equal(check(&h, 0), "bpf-record-kind");
	/* a python record too short for its head (tests below: every other shape) */
	h = good, h.kind = MS_BPF_KIND_PYTHON;
	assert_string_equal(check(&h, 0), "py-record-malformed");
	/* a payload is taken by the size, padding left out */
	h = good, h.size = sizeof(h) + 3;
	assert_string_equal(check(&h, 3), "ok");
}

/* Every prefix of a good record, and every byte flipped: a code, never a crash. */
static void test_every_byte(void **state)
{
	uint8_t buf[40];
	struct ms_bpf_record r;
	const char *code;
	char detail[200];
	size_t len = lay(buf, &good, 4);

	(void)state;
	for (size_t i = 0; i < len; i++)
		for (unsigned bit = 0; bit < 8; bit++) {
			int ret;

			buf[i] ^= (uint8_t)(1u << bit);
			code = NULL;
			ret = ms_bpf_record_check(buf, len, &r, &code, detail, sizeof(detail));
			/*
			 * magic, version and kind: refused; size: refused unless it
			 * still fits the 36 bytes with under 8 left; cpu, ids, time
			 * and the padding are the decoder's to check against the sample
			 */
			if (i < 8)
				assert_int_equal(ret, -1);
			else if (i < 12)
				assert_int_equal(ret, r.h.size >= 32 && r.h.size <= 36 &&
						      (i > 8 || bit < 3) ? 0 : -1);
			else
				assert_int_equal(ret, 0);
			buf[i] ^= (uint8_t)(1u << bit);
		}
}

/* ---- the python walker's payload ---- */

/*
 * A PYTHON record of n frames (status, gil) in buf, frame i's code 0x1000
 * + i and flags ENTRY on the last, with pad bytes after it: the length.
 */
static size_t lay_py(uint8_t *buf, uint32_t n, uint32_t status, uint32_t gil, size_t pad)
{
	struct ms_bpf_header h = good;
	struct ms_bpf_py_head py = { .status = status, .n_frames = n, .tstate = 0x7f00,
				     .gil = gil };
	size_t len = sizeof(h) + sizeof(py);

	h.kind = MS_BPF_KIND_PYTHON;
	h.size = (uint32_t)(sizeof(h) + sizeof(py) + n * sizeof(struct ms_bpf_py_frame));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &py, sizeof(py));
	for (uint32_t i = 0; i < n; i++) {
		struct ms_bpf_py_frame f = { 0x1000 + i, 0x2000 + i, 0x3000 + i,
					     i + 1 == n ? MS_BPF_PY_ENTRY : 0, 0 };

		memcpy(buf + len, &f, sizeof(f));
		len += sizeof(f);
	}
	memset(buf + len, 0, pad);
	return len + pad;
}

static const char *check_raw(const uint8_t *buf, size_t len, struct ms_bpf_record *r)
{
	const char *code = "ok";
	char detail[200] = "";

	if (ms_bpf_record_check(buf, len, r, &code, detail, sizeof(detail)) == 0)
		return "ok";
	assert_true(detail[0] != '\0');
	return code;
}

static void test_python_good(void **state)
{
	static uint8_t buf[MS_BPF_RECORD_MAX + 8];
	struct ms_bpf_record r;
	struct ms_bpf_py_frame f;
	size_t len;

	(void)state;
	/* no frames (no Python running), one, the most, each with padding */
	for (uint32_t n = 0; n <= MS_BPF_PY_FRAMES_MAX; n += n < 2 ? 1 : MS_BPF_PY_FRAMES_MAX - 2) {
		len = lay_py(buf, n, n == MS_BPF_PY_FRAMES_MAX ? MS_BPF_PY_TOO_DEEP :
			     MS_BPF_PY_COMPLETE, MS_BPF_PY_GIL_HELD, 4);
		assert_string_equal(check_raw(buf, len, &r), "ok");
		assert_int_equal(r.h.kind, MS_BPF_KIND_PYTHON);
		assert_int_equal(r.py.n_frames, n);
		assert_int_equal(r.py.tstate, 0x7f00);
		assert_int_equal(r.py.gil, MS_BPF_PY_GIL_HELD);
		if (n) {
			ms_bpf_py_frame_get(&r, n - 1, &f);
			assert_int_equal(f.code, 0x1000 + n - 1);
			assert_int_equal(f.stamp, 0x2000 + n - 1);
			assert_int_equal(f.instr, 0x3000 + n - 1);
			assert_int_equal(f.flags, MS_BPF_PY_ENTRY);
		}
	}
	/* every status and GIL state; the ones that found no thread with no frames */
	for (uint32_t st = 0; st < MS_BPF_PY_STATUS_COUNT; st++)
		for (uint32_t gil = 0; gil < MS_BPF_PY_GIL_COUNT; gil++) {
			len = lay_py(buf, st >= MS_BPF_PY_NO_THREAD ? 0 : 3, st, gil, 0);
			assert_string_equal(check_raw(buf, len, &r), "ok");
		}
	/* the largest record fits MS_BPF_RECORD_MAX */
	assert_true(sizeof(struct ms_bpf_header) + sizeof(struct ms_bpf_py_head) +
		    MS_BPF_PY_FRAMES_MAX * sizeof(struct ms_bpf_py_frame) <= MS_BPF_RECORD_MAX);
}

/* Every malformed shape of the payload: py-record-malformed, with a detail. */
static void test_python_malformed(void **state)
{
	static uint8_t buf[MS_BPF_RECORD_MAX + 256];
	struct ms_bpf_record r;
	struct ms_bpf_header h;
	struct ms_bpf_py_head py;
	struct ms_bpf_py_frame f;
	size_t len, at;

	(void)state;
	/* a head cut short: every payload size below it */
	for (uint32_t n = 0; n < sizeof(py); n++) {
		len = lay_py(buf, 0, 0, 0, 0);
		memcpy(&h, buf, sizeof(h));
		h.size = (uint32_t)sizeof(h) + n;
		memcpy(buf, &h, sizeof(h));
		assert_string_equal(check_raw(buf, h.size, &r), "py-record-malformed");
	}
	/* more frames than the most */
	len = lay_py(buf, MS_BPF_PY_FRAMES_MAX, MS_BPF_PY_TOO_DEEP, 0, 0);
	memcpy(&py, buf + sizeof(h), sizeof(py));
	py.n_frames = MS_BPF_PY_FRAMES_MAX + 1;
	memcpy(buf + sizeof(h), &py, sizeof(py));
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	py.n_frames = UINT32_MAX;
	memcpy(buf + sizeof(h), &py, sizeof(py));
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	/* a count whose frames' size wraps to nothing in 32 bits, after a bare head */
	len = lay_py(buf, 0, 0, 0, 0);
	py.n_frames = 1u << 27;
	memcpy(buf + sizeof(h), &py, sizeof(py));
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	/* frames that do not fill the payload exactly: one more or one fewer said */
	len = lay_py(buf, 3, 0, 0, 0);
	for (int d = -1; d <= 1; d += 2) {
		memcpy(&py, buf + sizeof(h), sizeof(py));
		py.n_frames = (uint32_t)(3 + d);
		memcpy(buf + sizeof(h), &py, sizeof(py));
		assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	}
	/* a payload with a partial frame after its frames (size not a frame's multiple) */
	len = lay_py(buf, 2, 0, 0, 0);
	memcpy(&h, buf, sizeof(h));
	h.size += 8;
	memcpy(buf, &h, sizeof(h));
	memset(buf + len, 0, 8);
	assert_string_equal(check_raw(buf, len + 8, &r), "py-record-malformed");
	/* an unknown status or GIL state */
	len = lay_py(buf, 0, MS_BPF_PY_STATUS_COUNT, 0, 0);
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	len = lay_py(buf, 0, UINT32_MAX, 0, 0);
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	len = lay_py(buf, 0, 0, MS_BPF_PY_GIL_COUNT, 0);
	assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	/* a walk that found no thread state, with frames */
	for (uint32_t st = MS_BPF_PY_NO_THREAD; st < MS_BPF_PY_STATUS_COUNT; st++) {
		len = lay_py(buf, 1, st, 0, 0);
		assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	}
	/* a frame flag this reader does not know, on any frame */
	for (uint32_t i = 0; i < 3; i++) {
		len = lay_py(buf, 3, 0, 0, 0);
		at = sizeof(h) + sizeof(py) + i * sizeof(f);
		memcpy(&f, buf + at, sizeof(f));
		f.flags |= 2;
		memcpy(buf + at, &f, sizeof(f));
		assert_string_equal(check_raw(buf, len, &r), "py-record-malformed");
	}
	/* the kernel's padding after a good one: still good; 8 bytes: the size is wrong */
	len = lay_py(buf, 3, 0, 0, 7);
	assert_string_equal(check_raw(buf, len, &r), "ok");
	len = lay_py(buf, 3, 0, 0, 8);
	assert_string_equal(check_raw(buf, len, &r), "bpf-record-size");
}

/* ---- ms_decode() of an output event's sample ---- */

#define OUTPUT_ID 77
#define OUTPUT_ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

static void output_decoder(struct ms_decoder *d)
{
	struct ms_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = OUTPUT_ST;
	a.flags = MS_ATTR_SAMPLE_ID_ALL;
	a.n_ids = 1;
	a.ids[0] = OUTPUT_ID;
	ms_decoder_init(d);
	assert_int_equal(ms_decoder_add_attr(d, &a), 0);
}

/* An output sample of thread tid on cpu with h as its RAW data: its length. */
static size_t output_sample(uint8_t *buf, uint32_t tid, uint32_t cpu,
			    const struct ms_bpf_header *h)
{
	struct perf_event_header ph = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };
	uint64_t w[5] = { 0x401000, (uint64_t)tid << 32 | 100, 5, OUTPUT_ID, cpu };
	uint32_t raw = 36;	/* 32 bytes and 4 of padding: the next field aligned */
	size_t len = sizeof(ph);

	memcpy(buf + len, w, sizeof(w));
	len += sizeof(w);
	memcpy(buf + len, &raw, 4);
	len += 4;
	memcpy(buf + len, h, sizeof(*h));
	len += sizeof(*h);
	memset(buf + len, 0, 4);
	len += 4;
	ph.size = (uint16_t)len;
	memcpy(buf, &ph, sizeof(ph));
	return len;
}

static void test_decode(void **state)
{
	static struct ms_decoder d;
	static struct ms_decoded out;
	struct ms_bpf_header h = good;
	uint8_t buf[128];
	size_t len;

	(void)state;
	output_decoder(&d);
	len = output_sample(buf, 101, 1, &good);
	assert_int_equal(ms_decode(&d, 1, buf, len, &out), MS_DECODE_BPF);
	assert_int_equal(out.u.bpf.sample.tid, 101);
	assert_int_equal(out.u.bpf.rec.h.tid, 101);
	assert_int_equal(out.u.bpf.rec.payload_len, 0);

	/* a record of another thread or cpu than its sample's */
	len = output_sample(buf, 102, 1, &good);
	assert_int_equal(ms_decode(&d, 1, buf, len, &out), MS_DECODE_SKIP);
	assert_string_equal(out.problem, "bpf-record-mismatch");
	len = output_sample(buf, 101, 0, &good);
	assert_int_equal(ms_decode(&d, 0, buf, len, &out), MS_DECODE_SKIP);
	assert_string_equal(out.problem, "bpf-record-mismatch");

	/* a bad record inside a good sample */
	h.magic = 0;
	len = output_sample(buf, 101, 1, &h);
	assert_int_equal(ms_decode(&d, 1, buf, len, &out), MS_DECODE_SKIP);
	assert_string_equal(out.problem, "bpf-record-magic");
	h = good, h.size = 40;
	len = output_sample(buf, 101, 1, &h);
	assert_int_equal(ms_decode(&d, 1, buf, len, &out), MS_DECODE_SKIP);
	assert_string_equal(out.problem, "bpf-record-size");
}

/* ---- the pid namespace ---- */

static void test_pidns(void **state)
{
	char why[256], path[] = "/tmp/bpfrecord-test-XXXXXX";
	int fd;

	(void)state;
	/* not a namespace file: cannot tell */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ms_pidns_is_initial(path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not a namespace file"));
	unlink(path);
	assert_int_equal(ms_pidns_is_initial("/nonexistent/ns/pid", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot open"));
	/* another namespace kind is not the initial pid namespace */
	assert_int_equal(ms_pidns_is_initial("/proc/self/ns/net", why, sizeof(why)), 0);
	/* these tests run on the host (tests/0760 covers a nested namespace) */
	assert_int_equal(ms_pidns_is_initial(NULL, why, sizeof(why)), 1);
}

/* ---- --pairs ---- */

#define PAIRS_MAX 4096
static struct pair {
	uint32_t tid, cpu;
	uint64_t samples, records;
} pairs[PAIRS_MAX];
static size_t n_pairs;

static struct pair *pair_of(uint32_t tid, uint32_t cpu)
{
	for (size_t i = 0; i < n_pairs; i++)
		if (pairs[i].tid == tid && pairs[i].cpu == cpu)
			return &pairs[i];
	if (n_pairs == PAIRS_MAX)
		return NULL;
	pairs[n_pairs] = (struct pair){ .tid = tid, .cpu = cpu };
	return &pairs[n_pairs++];
}

static int print_pairs(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	static struct ms_decoder d;
	static struct ms_decoded out;
	static struct ms_attr a;
	struct ms_record rec;
	uint64_t samples = 0, records = 0, skipped = 0;
	int got;

	if (!r)
		return 1;
	ms_decoder_init(&d);
	while ((got = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		struct ms_raw raw;
		struct pair *p;
		int kind;

		if (rec.kind == MS_REC_ATTR) {
			if (ms_attr_unpack(&rec, &a) < 0 || ms_decoder_add_attr(&d, &a) < 0)
				return 1;
			continue;
		}
		if (rec.kind != MS_REC_RAW)
			continue;
		if (ms_raw_unpack(&rec, &raw) < 0)
			return 1;
		kind = ms_decode(&d, raw.cpu, raw.data, raw.len, &out);
		if (kind == MS_DECODE_SKIP) {
			fprintf(stderr, "skipped: %s: %s\n", out.problem, out.detail);
			skipped++;
		}
		if (kind != MS_DECODE_SAMPLE && kind != MS_DECODE_BPF)
			continue;
		p = pair_of(out.u.sample.tid, out.u.sample.cpu);
		if (!p)
			return 1;
		if (kind == MS_DECODE_SAMPLE)
			p->samples++, samples++;
		else
			p->records++, records++;
	}
	if (got != MS_READ_END)
		return 1;
	for (size_t i = 0; i < n_pairs; i++)
		printf("tid %u cpu %u samples %" PRIu64 " records %" PRIu64 "\n", pairs[i].tid,
		       pairs[i].cpu, pairs[i].samples, pairs[i].records);
	printf("samples %" PRIu64 " records %" PRIu64 " skipped %" PRIu64 "\n", samples, records,
	       skipped);
	ms_reader_free(r);
	return fclose(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_python_good),
		cmocka_unit_test(test_python_malformed),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_pidns),
	};

	if (argc == 2 && !strcmp(argv[1], "--pairs"))
		return print_pairs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
