/*
 * Unit tests of the stage loop (libcommon/stream/stage.c) over hand-built
 * streams: what passes through, what a cut-short or headerless input
 * does, a closed downstream, failing callbacks, sinks and sources.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stream/cursor.h"
#include "stream/fastpack.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/stage.h"
#include "stream/stream.h"
#include "util/error.h"

#include "stderr-capture.h"

/* ---- streams by hand ---- */

static int new_fd(void)
{
	int fd = memfd_create("stage-test", 0);

	assert_true(fd >= 0);
	return fd;
}

/* One record [kind, value] whatever its kind: the loop must not care. */
static void pack_kv(struct ms_writer *w, uint32_t kind, uint32_t value)
{
	char buf[1 + 5 + 5], *p = buf;

	*p++ = (char)0x92;
	p = fp_uint(p, kind);
	p = fp_uint(p, value);
	assert_int_equal(ms_writer_copy(w, buf, (size_t)(p - buf)), 0);
}

/* The value of a [kind, value] record; 0 when it has none. */
static uint32_t kv_value(const struct ms_record *rec)
{
	struct ms_cursor c;
	uint32_t n;
	uint64_t k, v;

	ms_cur_init(&c, rec->bytes, rec->len);
	if (ms_cur_array(&c, &n) > 0 && n >= 2 && ms_cur_uint(&c, &k) > 0 &&
	    ms_cur_uint(&c, &v) > 0)
		return (uint32_t)v;
	return 0;
}

static void pack_ref(struct ms_writer *w, uint32_t id)
{
	struct ms_stack_ref ref = { .pid = 1, .tid = 2, .time = 3 + id, .cpu = 0, .period = 1,
				    .id = id };

	assert_int_equal(ms_stack_ref_pack(w, &ref), 0);
}

enum { WITH_TRAILER = 1, WITH_REFS = 2, WITHOUT_INFO = 4 };

/*
 * A stream from producer "hand": an info-kind record [3, 1] (none with
 * WITHOUT_INFO), kinds this build does not know ([63, 2], [99, 3], [200,
 * 4]), a [20, 5] (sample's kind), with WITH_REFS 100 STACK_REF records
 * between them, and with WITH_TRAILER a trailer. Read from its start.
 */
static int stream(unsigned how)
{
	int fd = new_fd();
	struct ms_writer *w = ms_writer_open(fd, "hand", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "hand", "1"), 0);
	if (!(how & WITHOUT_INFO))
		pack_kv(w, MS_REC_INFO, 1);
	pack_kv(w, 63, 2);
	if (how & WITH_REFS)
		for (uint32_t i = 0; i < 100; i++)
			pack_ref(w, i);
	pack_kv(w, 99, 3);
	pack_kv(w, 200, 4);
	pack_kv(w, MS_REC_SAMPLE, 5);
	if (how & WITH_TRAILER)
		assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static char *contents(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)end + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)end, 0), end);
	*len = (size_t)end;
	return buf;
}

/* ---- a stage that records what it saw ---- */

struct seen {
	int headers, ends;
	enum ms_stage_end how;
	uint32_t kinds[16], values[16];
	unsigned n;
	int fail_at;		/* the callback of record n fails when n + 1 == fail_at */
	bool pipe_at_end;	/* end() reports a closed pipe of its own */
};

static int on_header(void *ctx, struct ms_stage_io *io)
{
	struct seen *s = ctx;

	(void)io;
	s->headers++;
	return 0;
}

/* Consumes: remembers the value, writes nothing. */
static int on_kv(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct seen *s = ctx;

	(void)io;
	if ((int)s->n + 1 == s->fail_at)
		return ms_error("callback fails at record %u", s->n);
	s->kinds[s->n] = rec->kind;
	s->values[s->n++] = kv_value(rec);
	return 0;
}

/* Looks and lets the record go on. */
static int on_look(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	return on_kv(ctx, io, rec) < 0 ? -1 : MS_STAGE_PASS;
}

static int on_end(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	struct seen *s = ctx;

	s->ends++;
	s->how = how;
	if (s->pipe_at_end) {
		ms_stage_pipe_closed(io);
		ms_stage_pipe_closed(io);
		return -1;
	}
	return 0;
}

static struct ms_stage_desc stage_of(struct seen *s)
{
	struct ms_stage_desc st = {
		.name = "ms-test",
		.version = "9",
		.ctx = s,
		.header = on_header,
		.end = on_end,
	};

	/* INFO is consumed, SAMPLE looked at; the rest has no callback. */
	st.on[MS_REC_INFO] = on_kv;
	st.on[MS_REC_SAMPLE] = on_look;
	return st;
}

/* The kinds and values of the records of the stream on fd (from its start). */
static int read_back(int fd, uint32_t *kinds, uint32_t *values, unsigned max,
		     struct ms_header *h, bool *trailer)
{
	struct ms_reader *r;
	struct ms_record rec;
	int n = 0, rr;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	stderr_begin();
	r = ms_reader_open(fd, "out");
	if (r) {
		*h = *ms_reader_header(r);
		while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
			assert_true((unsigned)n < max);
			kinds[n] = rec.kind;
			values[n++] = kv_value(&rec);
		}
		*trailer = rr == MS_READ_END;
		ms_reader_free(r);
	} else {
		n = -1;
	}
	stderr_end();
	return n;
}

static int run(const struct ms_stage_desc *st, int in, int out, const char **err)
{
	int code;

	stderr_begin();
	code = ms_stage_run(st, in, "in", out, "out");
	*err = stderr_end();
	return code;
}

/* ---- tests ---- */

/* Kinds without a callback, known or not, go on byte for byte. */
static void test_pass_through(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(WITH_TRAILER), out = new_fd();
	uint32_t kinds[16], values[16];
	struct ms_header h;
	bool trailer;
	const char *err;
	int n;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_string_equal(err, "");
	assert_int_equal(s.headers, 1);
	assert_int_equal(s.ends, 1);
	assert_int_equal(s.how, MS_STAGE_COMPLETE);
	/* what the callbacks saw */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.kinds[0], MS_REC_INFO);
	assert_int_equal(s.values[0], 1);
	assert_int_equal(s.kinds[1], MS_REC_SAMPLE);
	assert_int_equal(s.values[1], 5);
	/* what went out: all but the consumed INFO, in order, and a trailer */
	n = read_back(out, kinds, values, 16, &h, &trailer);
	assert_int_equal(n, 4);
	assert_int_equal(kinds[0], 63);
	assert_int_equal(values[0], 2);
	assert_int_equal(kinds[1], 99);
	assert_int_equal(kinds[2], 200);
	assert_int_equal(values[2], 4);
	assert_int_equal(kinds[3], MS_REC_SAMPLE);
	assert_int_equal(values[3], 5);
	assert_true(trailer);
	/* the producer chain: upstream's, then the stage */
	assert_int_equal(h.n_producers, 2);
	assert_string_equal(h.producers[0].name, "hand");
	assert_string_equal(h.producers[1].name, "ms-test");
	assert_string_equal(h.producers[1].version, "9");
	close(in);
	close(out);
}

/* other() takes every kind without a callback of its own, unknown ones too. */
static void test_other(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(WITH_TRAILER), out = new_fd();
	const char *err;

	(void)state;
	st.other = on_kv;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.kinds[1], 63);
	assert_int_equal(s.kinds[2], 99);
	assert_int_equal(s.kinds[3], 200);
	close(in);
	close(out);
}

/* The offset of the first record after fd's header. */
static uint64_t body_offset(int fd)
{
	struct ms_reader *r;
	uint64_t off;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	r = ms_reader_open(fd, "stream");
	assert_non_null(r);
	off = ms_reader_offset(r);
	ms_reader_free(r);
	return off;
}

/*
 * Runs of STACK_REFs pass whole and are counted as read: with the INFO
 * record consumed, the output after its header is, byte for byte, the
 * same stream written without that record (trailer count included).
 */
static void test_stack_ref_runs(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(WITH_TRAILER | WITH_REFS), out = new_fd();
	int want = stream(WITH_TRAILER | WITH_REFS | WITHOUT_INFO);
	uint64_t out_body, want_body;
	char *got, *exp;
	size_t lgot, lexp;
	const char *err;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(s.n, 2);	/* the INFO consumed, the SAMPLE looked at */
	out_body = body_offset(out);
	want_body = body_offset(want);
	got = contents(out, &lgot);
	exp = contents(want, &lexp);
	assert_int_equal(lgot - out_body, lexp - want_body);
	assert_memory_equal(got + out_body, exp + want_body, lexp - want_body);
	free(got);
	free(exp);
	close(in);
	close(out);
	close(want);
}

/* A stage that takes STACK_REF records gets each: no run passes them by. */
static int count_call(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	(void)io;
	(void)rec;
	++*(unsigned *)ctx;
	return 0;
}

static int count_and_pass(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	return count_call(ctx, io, rec) < 0 ? -1 : MS_STAGE_PASS;
}

static void test_refs_to_callback(void **state)
{
	unsigned calls = 0;
	struct ms_stage_desc st = { .name = "ms-test", .version = "9", .ctx = &calls };
	int in = stream(WITH_TRAILER | WITH_REFS), out = new_fd();
	uint32_t kinds[16], values[16];
	struct ms_header h;
	bool trailer;
	const char *err;

	(void)state;
	st.on[MS_REC_STACK_REF] = count_call;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(calls, 100);
	assert_int_equal(read_back(out, kinds, values, 16, &h, &trailer), 5);
	close(out);
	/* the same through other() */
	calls = 0;
	st.on[MS_REC_STACK_REF] = NULL;
	st.other = count_call;
	out = new_fd();
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(calls, 105);	/* and info, 63, 99, 200, sample */
	close(out);
	/* a callback that passes each on sees each all the same */
	calls = 0;
	st.other = NULL;
	st.on[MS_REC_STACK_REF] = count_and_pass;
	out = new_fd();
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(calls, 100);
	{
		static uint32_t all_kinds[128], all_values[128];

		assert_int_equal(read_back(out, all_kinds, all_values, 128, &h, &trailer), 105);
	}
	close(out);
	close(in);
}

/* The counts per kind, runs included. */
static int count_refs(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	(void)how;
	*(uint64_t *)ctx = io->in[MS_REC_STACK_REF] * 1000 + io->in[MS_STAGE_KINDS] * 10 +
			   io->in[MS_REC_INFO];
	return 0;
}

static void test_counts(void **state)
{
	uint64_t got = 0;
	struct ms_stage_desc st = {
		.name = "ms-test", .version = "9", .ctx = &got, .end = count_refs,
	};
	int in = stream(WITH_TRAILER | WITH_REFS), out = new_fd();
	const char *err;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	/* 100 refs, 2 kinds >= 64 (99, 200), 1 info */
	assert_int_equal(got, 100021);
	close(in);
	close(out);
}

/* Cut short: what was read goes out without a trailer, said once, status 3. */
static void test_cut_short(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(0), out = new_fd();
	uint32_t kinds[16], values[16];
	struct ms_header h;
	bool trailer = true;
	const char *err;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_TRUNCATED);
	assert_non_null(strstr(err, "'in': stream cut short after 5 records"));
	assert_non_null(strstr(err, "output ends without a trailer after 4 records"));
	assert_int_equal(count_lines(err), 2);
	assert_int_equal(s.ends, 1);
	assert_int_equal(s.how, MS_STAGE_CUT);
	assert_int_equal(read_back(out, kinds, values, 16, &h, &trailer), 4);
	assert_false(trailer);
	close(out);

	/* QUIET_CUT: the reader's message only */
	st.flags = MS_STAGE_QUIET_CUT;
	out = new_fd();
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_TRUNCATED);
	assert_int_equal(count_lines(err), 1);
	close(out);

	/* SALVAGE: the cut is not a failure */
	st.flags = MS_STAGE_SALVAGE;
	out = new_fd();
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_OK);
	assert_int_equal(s.how, MS_STAGE_CUT);
	assert_int_equal(read_back(out, kinds, values, 16, &h, &trailer), 4);
	assert_false(trailer);
	close(out);
	close(in);
}

/* No header: status 1, no callback, nothing written. */
static void test_no_header(void **state)
{
	static const char garbage[] = "GET / HTTP/1.1\r\n\r\n";
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = new_fd(), out = new_fd();
	const char *err;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_ERROR);
	assert_non_null(strstr(err, "'in' is empty: no stream header"));
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(write(in, garbage, sizeof(garbage) - 1), (ssize_t)sizeof(garbage) - 1);
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_ERROR);
	assert_non_null(strstr(err, "'in'"));
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(s.headers + s.ends, 0);
	assert_int_equal(lseek(out, 0, SEEK_END), 0);
	close(in);
	close(out);
}

/* Bad input in the middle: status 1, end() told, what came before goes out, no trailer. */
static void test_bad_record(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(0), out = new_fd();
	uint32_t kinds[16], values[16];
	struct ms_header h;
	bool trailer = true;
	const char *err;

	(void)state;
	assert_true(lseek(in, 0, SEEK_END) > 0);
	assert_int_equal(write(in, "\xc1", 1), 1);	/* never a msgpack type */
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_ERROR);
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(s.how, MS_STAGE_BAD_INPUT);
	assert_int_equal(read_back(out, kinds, values, 16, &h, &trailer), 4);
	assert_false(trailer);
	close(in);
	close(out);
}

/* A failing callback ends the loop: status 1, end() told, no trailer. */
static void test_callback_fails(void **state)
{
	struct seen s = { .fail_at = 2 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(WITH_TRAILER), out = new_fd();
	uint32_t kinds[16], values[16];
	struct ms_header h;
	bool trailer = true;
	const char *err;

	(void)state;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_ERROR);
	assert_string_equal(err, "stage-test: callback fails at record 1\n");
	assert_int_equal(s.how, MS_STAGE_FAILED);
	/* [63, 2], [99, 3], [200, 4] went out before the sample failed */
	assert_int_equal(read_back(out, kinds, values, 16, &h, &trailer), 3);
	assert_false(trailer);
	close(in);
	close(out);
}

/* Downstream closed: status 5, said once, whatever else failed. */
static void test_epipe(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	int in = stream(WITH_TRAILER), p[2];
	const char *err;

	(void)state;
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(run(&st, in, p[1], &err), MS_EXIT_PIPE);
	assert_string_equal(err, "stage-test: downstream closed the pipe (out)\n");
	close(p[1]);

	/* cut short and downstream gone: the pipe wins */
	close(in);
	in = stream(0);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(run(&st, in, p[1], &err), MS_EXIT_PIPE);
	/* the reader's cut, the records that went out, the pipe */
	assert_int_equal(count_lines(err), 3);
	assert_non_null(strstr(err, "downstream closed the pipe (out)"));
	close(p[1]);
	close(in);
	signal(SIGPIPE, old);
}

/* A stage's own output closed: ms_stage_pipe_closed() says it once, status 5. */
static void test_own_pipe_closed(void **state)
{
	struct seen s = { .pipe_at_end = true };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(WITH_TRAILER), out = new_fd();
	const char *err;

	(void)state;
	st.flags = MS_STAGE_SINK;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_PIPE);
	assert_string_equal(err, "stage-test: downstream closed the pipe (out)\n");
	close(in);
	close(out);
}

/* A sink writes nothing; it is cut short all the same. */
static void test_sink(void **state)
{
	struct seen s = { 0 };
	struct ms_stage_desc st = stage_of(&s);
	int in = stream(0), out = new_fd();
	const char *err;

	(void)state;
	st.flags = MS_STAGE_SINK;
	assert_int_equal(run(&st, in, out, &err), MS_EXIT_TRUNCATED);
	assert_int_equal(count_lines(err), 1);	/* no output to say anything of */
	assert_int_equal(s.n, 2);
	assert_int_equal(lseek(out, 0, SEEK_END), 0);
	close(in);
	close(out);
}

/* A source writes the whole stream; a closed pipe is status 5. */
static int produce(void *ctx, struct ms_stage_io *io)
{
	(void)ctx;
	if (ms_writer_header(io->writer, NULL, "ms-test", "9") < 0)
		return -1;
	for (uint32_t i = 0; i < 20000; i++)
		if (ms_stack_ref_pack(io->writer, &(struct ms_stack_ref){ .id = i }) < 0)
			return -1;
	return ms_writer_trailer(io->writer, true);
}

static void test_source(void **state)
{
	struct ms_stage_desc st = { .name = "ms-test", .version = "9", .produce = produce };
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	int out = new_fd(), p[2];
	uint32_t kinds[20000], values[20000];
	struct ms_header h;
	bool trailer;
	const char *err;

	(void)state;
	stderr_begin();
	assert_int_equal(ms_stage_run_source(&st, out, "out"), MS_EXIT_OK);
	err = stderr_end();
	assert_string_equal(err, "");
	assert_int_equal(read_back(out, kinds, values, 20000, &h, &trailer), 20000);
	assert_true(trailer);
	close(out);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	stderr_begin();
	assert_int_equal(ms_stage_run_source(&st, p[1], "out"), MS_EXIT_PIPE);
	err = stderr_end();
	assert_string_equal(err, "stage-test: downstream closed the pipe (out)\n");
	close(p[1]);
	signal(SIGPIPE, old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_through),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_stack_ref_runs),
		cmocka_unit_test(test_refs_to_callback),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_cut_short),
		cmocka_unit_test(test_no_header),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_callback_fails),
		cmocka_unit_test(test_epipe),
		cmocka_unit_test(test_own_pipe_closed),
		cmocka_unit_test(test_sink),
		cmocka_unit_test(test_source),
	};

	ms_set_progname("stage-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
