/*
 * The SAMPLE decoder's paths must agree: the fast path for the encoding
 * ms-decode writes (stream/fastrec.c) and the generic codec over the
 * kind's field table (stream/schema.c). Random samples in every encoding
 * the format allows (written by msgpack-c), then random corruptions of
 * them, are decoded both ways: the same verdict, the same message and,
 * when valid, the same sample.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/schema.h"
#include "stream/stream.h"
#include "tests/unit/stderr-capture.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * An unsigned value: mostly as msgpack-c packs it (the fast path's case),
 * else in a wider unsigned form or, now and then, a signed one.
 */
static void put_uint(msgpack_packer *pk, uint64_t v)
{
	uint64_t r = next_rand() % 16;

	if (r < 8)
		msgpack_pack_uint64(pk, v);	/* shortest */
	else if (r < 11)
		msgpack_pack_fix_uint64(pk, v);	/* 9 bytes */
	else if (r < 15 && v <= UINT32_MAX)
		msgpack_pack_fix_uint32(pk, (uint32_t)v);
	else if (r == 15 && v <= INT64_MAX)
		msgpack_pack_fix_int64(pk, (int64_t)v);
	else
		msgpack_pack_uint64(pk, v);
}

static uint64_t rand_value(void)
{
	switch (next_rand() % 4) {
	case 0:
		return next_rand() % 128;
	case 1:
		return next_rand() % 70000;
	case 2:
		return next_rand() & 0xffffffffull;
	default:
		return next_rand();
	}
}

static uint8_t stack_bytes[300];

/* A random sample record into sb: every field form the format allows. */
static void random_sample(msgpack_sbuffer *sb)
{
	msgpack_packer pk;
	uint32_t nk = next_rand() % 4 == 0 ? next_rand() % 20 : 0;
	uint32_t nu = next_rand() % 3 == 0 ? next_rand() % 20 : next_rand() % 3;
	uint64_t mask = next_rand() % 5 == 0 ? next_rand() & 0xffffff : 0xff01ff;
	uint32_t nregs = (uint32_t)__builtin_popcountll(mask);
	uint32_t extra = next_rand() % 8 == 0;

	msgpack_sbuffer_clear(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 14 + extra);
	msgpack_pack_uint32(&pk, MS_REC_SAMPLE);
	put_uint(&pk, next_rand() % 100000);	/* pid */
	put_uint(&pk, next_rand() % 100000);	/* tid */
	put_uint(&pk, rand_value());		/* time */
	put_uint(&pk, next_rand() % 64);	/* cpu */
	put_uint(&pk, rand_value());		/* period */
	put_uint(&pk, rand_value());		/* ip */
	put_uint(&pk, next_rand() % 8);	/* cpumode */
	msgpack_pack_array(&pk, nk);
	for (uint32_t i = 0; i < nk; i++)
		put_uint(&pk, rand_value());
	msgpack_pack_array(&pk, nu);
	for (uint32_t i = 0; i < nu; i++)
		put_uint(&pk, rand_value());
	put_uint(&pk, next_rand() % 3);	/* regs_abi */
	put_uint(&pk, mask);
	if (next_rand() % 8) {
		uint8_t regs[8 * 64];

		for (uint32_t i = 0; i < 8 * nregs; i++)
			regs[i] = (uint8_t)next_rand();
		msgpack_pack_bin(&pk, 8 * nregs);
		msgpack_pack_bin_body(&pk, regs, 8 * nregs);
	} else {
		msgpack_pack_array(&pk, nregs);
		for (uint32_t i = 0; i < nregs; i++)
			put_uint(&pk, rand_value());
	}
	if (next_rand() % 2) {
		msgpack_pack_array(&pk, 2);
		put_uint(&pk, rand_value());
		put_uint(&pk, next_rand() % (MS_STACK_MAX + 1));
	} else {
		uint32_t len = next_rand() % sizeof(stack_bytes);

		msgpack_pack_bin(&pk, len);
		msgpack_pack_bin_body(&pk, stack_bytes, len);
	}
	if (extra)
		msgpack_pack_str_with_body(&pk, "later", 5);
}

static struct ms_sample by_bytes, by_obj;

static void assert_same_sample(const struct ms_sample *a, const struct ms_sample *b)
{
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_true(a->time == b->time);
	assert_int_equal(a->cpu, b->cpu);
	assert_true(a->period == b->period);
	assert_true(a->ip == b->ip);
	assert_int_equal(a->cpumode, b->cpumode);
	assert_int_equal(a->n_kchain, b->n_kchain);
	assert_memory_equal(a->kchain, b->kchain, a->n_kchain * sizeof(a->kchain[0]));
	assert_int_equal(a->n_uchain, b->n_uchain);
	assert_memory_equal(a->uchain, b->uchain, a->n_uchain * sizeof(a->uchain[0]));
	assert_int_equal(a->regs_abi, b->regs_abi);
	assert_true(a->regs_mask == b->regs_mask);
	assert_int_equal(a->n_regs, b->n_regs);
	assert_memory_equal(a->regs, b->regs, a->n_regs * sizeof(a->regs[0]));
	assert_int_equal(a->stack_in_file, b->stack_in_file);
	assert_int_equal(a->stack_len, b->stack_len);
	if (a->stack_in_file) {
		assert_true(a->stack_offset == b->stack_offset);
	} else {
		assert_memory_equal(a->stack, b->stack, a->stack_len);
	}
}

static struct ms_sample by_frame;
static uint64_t framed;		/* records ms_sample_frame() took */

/*
 * Framing and unpacking at once (ms_sample_frame()) from bytes[0, len)
 * followed by other bytes: when it takes a record, msgpack-c frames one
 * object of the same length there, and the checked path decodes the
 * same sample from it.
 */
static void frame_agrees(const char *bytes, size_t len)
{
	static char buf[80000];
	struct ms_record rec = { .kind = MS_REC_SAMPLE, .bytes = buf, .offset = 40 };
	msgpack_zone zone;
	msgpack_object obj;
	size_t n, off = 0, tail = next_rand() % 20;
	msgpack_unpack_return r;

	assert_true(len + tail <= sizeof(buf));
	memcpy(buf, bytes, len);
	for (size_t i = 0; i < tail; i++)
		buf[len + i] = (char)next_rand();
	n = ms_sample_frame(buf, len + tail, &by_frame);
	if (!n)
		return;
	framed++;
	msgpack_zone_init(&zone, 4096);
	r = msgpack_unpack(buf, len + tail, &off, &zone, &obj);
	assert_true(r == MSGPACK_UNPACK_SUCCESS || r == MSGPACK_UNPACK_EXTRA_BYTES);
	assert_int_equal(off, n);
	msgpack_zone_destroy(&zone);
	rec.len = n;
	assert_int_equal(ms_sample_unpack(&rec, &by_bytes), 0);
	assert_same_sample(&by_frame, &by_bytes);
}

/*
 * Decode bytes[0, len) both ways; the verdicts and messages must agree,
 * and so must the samples when valid. Returns the verdict.
 */
static int both_ways(const char *bytes, size_t len)
{
	struct ms_record rec = { .kind = MS_REC_SAMPLE, .bytes = bytes, .len = len, .offset = 40 };
	static char msg_a[1024], msg_b[1024];
	msgpack_zone zone;
	msgpack_object obj;
	size_t off = 0;
	int a, b;

	frame_agrees(bytes, len);
	stderr_begin();
	a = ms_sample_unpack(&rec, &by_bytes);
	snprintf(msg_a, sizeof(msg_a), "%s", stderr_end());
	msgpack_zone_init(&zone, 4096);
	if (msgpack_unpack(bytes, len, &off, &zone, &obj) != MSGPACK_UNPACK_SUCCESS ||
	    off != len || obj.type != MSGPACK_OBJECT_ARRAY || !obj.via.array.size ||
	    obj.via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    obj.via.array.ptr[0].via.u64 != MS_REC_SAMPLE) {
		/* Not one whole sample record: a reader would never frame it as one. */
		msgpack_zone_destroy(&zone);
		return a;
	}
	stderr_begin();
	b = ms_schema_unpack(&ms_sample_schema, 0, &rec, &by_obj);
	snprintf(msg_b, sizeof(msg_b), "%s", stderr_end());
	assert_int_equal(a, b);
	assert_string_equal(msg_a, msg_b);
	if (a == 0)
		assert_same_sample(&by_bytes, &by_obj);
	msgpack_zone_destroy(&zone);
	return a;
}

static void test_random_samples_agree(void **state)
{
	msgpack_sbuffer sb;
	int valid = 0;

	(void)state;
	msgpack_sbuffer_init(&sb);
	for (int i = 0; i < 3000; i++) {
		random_sample(&sb);
		if (both_ways(sb.data, sb.size) == 0)
			valid++;
	}
	/* Every random sample is valid: only the encodings vary. */
	assert_int_equal(valid, 3000);
	/* Those in the form ms-decode writes (most) were framed at once. */
	assert_true(framed > 300);
	msgpack_sbuffer_destroy(&sb);
}

static void test_corrupt_samples_agree(void **state)
{
	msgpack_sbuffer sb;
	char *copy = malloc(70000);
	int valid = 0, invalid = 0;

	(void)state;
	assert_non_null(copy);
	msgpack_sbuffer_init(&sb);
	for (int i = 0; i < 20000; i++) {
		size_t len;
		int flips = 1 + (int)(next_rand() % 3);

		random_sample(&sb);
		len = sb.size;
		memcpy(copy, sb.data, len);
		for (int f = 0; f < flips; f++)
			copy[next_rand() % len] = (char)next_rand();
		if (next_rand() % 4 == 0)
			len = next_rand() % len;	/* cut short too */
		if (both_ways(copy, len) == 0)
			valid++;
		else
			invalid++;
	}
	/* Both outcomes were exercised. */
	assert_true(valid > 1000);
	assert_true(invalid > 1000);
	msgpack_sbuffer_destroy(&sb);
	free(copy);
}

/* A stream of s alone into fd, from its start, and back to its start. */
static void write_one_sample(int fd, const struct ms_sample *s)
{
	struct ms_writer *w = ms_writer_open(fd, "test", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_sample_pack(w, s), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
}

/* The encoding ms-decode writes takes the fast path and reads right. */
static void test_packed_sample_reads_back(void **state)
{
	static struct ms_sample s;
	char path[] = "/tmp/ms-sample-unpack-XXXXXX";
	int fd = mkstemp(path);
	struct ms_reader *r;
	struct ms_record rec;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	s.pid = 7;
	s.tid = 8;
	s.time = 1ull << 40;
	s.cpu = 1;
	s.period = 250000;
	s.ip = 0x7fff12345678ull;
	s.cpumode = 2;
	s.n_uchain = 2;
	s.uchain[0] = 0x401000;
	s.uchain[1] = 0x402000;
	s.regs_abi = 2;
	s.regs_mask = 0xff01ff;
	s.n_regs = 17;
	for (int i = 0; i < 17; i++)
		s.regs[i] = 0x1111111111111111ull * (uint64_t)i;
	s.stack_in_file = true;
	s.stack_offset = 123456789;
	s.stack_len = 8192;
	write_one_sample(fd, &s);
	r = ms_reader_open(fd, "test");
	assert_non_null(r);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(both_ways(rec.bytes, rec.len), 0);
	assert_same_sample(&by_bytes, &s);
	ms_reader_free(r);
}

/* What a SAMPLE must encode to, written with msgpack-c alone (records.h). */
static void reference_encoding(msgpack_sbuffer *sb, const struct ms_sample *s)
{
	msgpack_packer pk;
	uint8_t le[8 * MS_REGS_MAX];

	msgpack_sbuffer_clear(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 14);
	msgpack_pack_uint32(&pk, MS_REC_SAMPLE);
	msgpack_pack_uint32(&pk, s->pid);
	msgpack_pack_uint32(&pk, s->tid);
	msgpack_pack_uint64(&pk, s->time);
	msgpack_pack_uint32(&pk, s->cpu);
	msgpack_pack_uint64(&pk, s->period);
	msgpack_pack_uint64(&pk, s->ip);
	msgpack_pack_uint32(&pk, s->cpumode);
	msgpack_pack_array(&pk, s->n_kchain);
	for (uint32_t i = 0; i < s->n_kchain; i++)
		msgpack_pack_uint64(&pk, s->kchain[i]);
	msgpack_pack_array(&pk, s->n_uchain);
	for (uint32_t i = 0; i < s->n_uchain; i++)
		msgpack_pack_uint64(&pk, s->uchain[i]);
	msgpack_pack_uint32(&pk, s->regs_abi);
	msgpack_pack_uint64(&pk, s->regs_mask);
	for (uint32_t i = 0; i < s->n_regs; i++)
		for (int b = 0; b < 8; b++)
			le[8 * i + b] = (uint8_t)(s->regs[i] >> (8 * b));
	msgpack_pack_bin_with_body(&pk, le, 8 * s->n_regs);
	if (s->stack_in_file) {
		msgpack_pack_array(&pk, 2);
		msgpack_pack_uint64(&pk, s->stack_offset);
		msgpack_pack_uint32(&pk, s->stack_len);
	} else {
		msgpack_pack_bin_with_body(&pk, s->stack, s->stack_len);
	}
}

/*
 * The in-place encoder (fastpack.h, used by ms_sample_pack() and
 * ms-decode) writes exactly what msgpack-c would, for values at every
 * width boundary and chains of every length class.
 */
static void test_encoder_matches_msgpack(void **state)
{
	static const uint64_t edges[] = {
		0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffffull,
		0x100000000ull, 0x7fffffffffffffffull, UINT64_MAX,
	};
	static struct ms_sample s;
	static char path[] = "/tmp/ms-sample-encode-XXXXXX";
	msgpack_sbuffer sb;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	msgpack_sbuffer_init(&sb);
	for (int i = 0; i < 2000; i++) {
		struct ms_reader *r;
		struct ms_record rec;
		uint64_t e = edges[next_rand() % 12] - (next_rand() % 2 && i % 12 ? 1 : 0);
		uint64_t v32 = e > UINT32_MAX ? UINT32_MAX : e;

		s.pid = (uint32_t)v32;
		s.tid = (uint32_t)(next_rand() % 2 ? v32 : rand_value());
		s.time = e;
		s.cpu = (uint32_t)(next_rand() % 300);
		s.period = rand_value();
		s.ip = next_rand() % 2 ? e : rand_value();
		s.cpumode = (uint32_t)(next_rand() % 8);
		s.n_kchain = (uint32_t)(next_rand() % 3 ? next_rand() % 4 : next_rand() % 70);
		for (uint32_t k = 0; k < s.n_kchain; k++)
			s.kchain[k] = next_rand() % 2 ? edges[next_rand() % 12] : rand_value();
		s.n_uchain = (uint32_t)(next_rand() % 3 ? next_rand() % 17 : next_rand() % 300);
		for (uint32_t k = 0; k < s.n_uchain; k++)
			s.uchain[k] = next_rand() % 2 ? edges[next_rand() % 12] : rand_value();
		s.regs_abi = (uint32_t)(next_rand() % 3);
		s.regs_mask = next_rand() % 4 ? 0xff01ff : next_rand() & 0xffffffffffull;
		s.n_regs = (uint32_t)__builtin_popcountll(s.regs_mask);
		if (s.n_regs > MS_REGS_MAX)
			s.n_regs = MS_REGS_MAX;
		for (uint32_t k = 0; k < s.n_regs; k++)
			s.regs[k] = next_rand();
		s.stack_in_file = next_rand() % 2;
		s.stack_offset = s.stack_in_file ? e : 0;
		s.stack_len = (uint32_t)(next_rand() % 2 ? next_rand() % sizeof(stack_bytes) :
					 next_rand() % 70000);
		if (!s.stack_in_file && s.stack_len > sizeof(stack_bytes))
			s.stack_len = sizeof(stack_bytes);
		if (s.stack_in_file && s.stack_len > MS_STACK_MAX)
			s.stack_len = MS_STACK_MAX;
		s.stack = s.stack_in_file ? NULL : stack_bytes;
		reference_encoding(&sb, &s);

		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		write_one_sample(fd, &s);
		r = ms_reader_open(dup(fd), "test");
		assert_non_null(r);
			assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.len, sb.size);
		assert_memory_equal(rec.bytes, sb.data, sb.size);
		ms_reader_free(r);
	}
	msgpack_sbuffer_destroy(&sb);
	close(fd);
}

/*
 * A stream of samples in every encoding, other records between them: a
 * reader that unpacks samples as it frames them hands out the same
 * records and samples as one that does not, from a pipe fed in pieces of
 * every size (records cut anywhere) and from a mapped file.
 */
static void check_reader(int fd, uint64_t *n_samples, uint64_t *n_unpacked)
{
	static struct ms_sample sink, ahead[2], copy;
	struct ms_reader *r = ms_reader_open(fd, "test");
	const struct ms_sample *peeked = NULL;
	struct ms_record rec;
	int rr;

	assert_non_null(r);
	ms_reader_unpack_samples(r, &sink);
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		const struct ms_sample *got = ms_reader_sample(r, &rec);

		/* A record peeked at is handed out from the peek, as it was. */
		if (peeked) {
			assert_ptr_equal(got, peeked);
			assert_same_sample(got, &copy);
		}
		peeked = NULL;
		if (rec.kind != MS_REC_SAMPLE) {
			assert_null(got);
		} else {
			(*n_samples)++;
			assert_int_equal(ms_sample_unpack(&rec, &by_bytes), 0);
			if (got) {
				(*n_unpacked)++;
				assert_same_sample(got, &by_bytes);
			}
		}
		/* Now and then (twice, even) look at the next record first. */
		if (next_rand() % 3) {
			struct ms_sample *into = got == &ahead[0] ? &ahead[1] : &ahead[0];

			peeked = ms_reader_peek_sample(r, into);
			if (next_rand() % 4 == 0)
				assert_ptr_equal(ms_reader_peek_sample(r, into), peeked);
			if (peeked) {
				assert_ptr_equal(peeked, into);
				copy = *peeked;
			}
		}
	}
	assert_int_equal(rr, MS_READ_END);
	assert_null(peeked);
	ms_reader_free(r);
}

static void test_reader_unpacks_while_framing(void **state)
{
	char path[] = "/tmp/ms-sample-frame-XXXXXX";
	int fd = mkstemp(path), p[2];
	msgpack_sbuffer sb;
	struct ms_writer *w;
	uint64_t samples = 0, unpacked = 0, piped = 0, piped_unpacked = 0;
	pid_t child;
	int status;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	msgpack_sbuffer_init(&sb);
	w = ms_writer_open(fd, "test", 0);
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (int i = 0; i < 4000; i++) {
		random_sample(&sb);
		assert_int_equal(ms_writer_copy(w, sb.data, sb.size), 0);
		if (i % 7 == 0)
			assert_int_equal(ms_round_pack(w), 0);
	}
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	msgpack_sbuffer_destroy(&sb);

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	check_reader(dup(fd), &samples, &unpacked);
	assert_int_equal(samples, 4000);

	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Pieces of 1 to 600 bytes: the reader sees records cut everywhere. */
		static char buf[600];
		ssize_t n;

		close(p[0]);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		while ((n = read(fd, buf, 1 + next_rand() % sizeof(buf))) > 0) {
			if (write(p[1], buf, (size_t)n) != n)
				_exit(1);
			if (next_rand() % 4 == 0)
				usleep(50);
		}
		_exit(n < 0);
	}
	close(p[1]);
	check_reader(p[0], &piped, &piped_unpacked);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(piped, 4000);
	/* Most samples are in the form ms-decode writes, and were taken at once. */
	assert_true(piped_unpacked > 1000);
	assert_true(piped_unpacked < piped);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_samples_agree),
		cmocka_unit_test(test_corrupt_samples_agree),
		cmocka_unit_test(test_packed_sample_reads_back),
		cmocka_unit_test(test_encoder_matches_msgpack),
		cmocka_unit_test(test_reader_unpacks_while_framing),
	};

	for (size_t i = 0; i < sizeof(stack_bytes); i++)
		stack_bytes[i] = (uint8_t)(i * 13 + 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
