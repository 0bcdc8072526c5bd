/*
 * The GIL as label spans in ms-unwind (python/labels.h): runs of one value
 * per thread, their times and counts, threads interleaved, a thread's
 * exit, the end of the stream, the bound on threads, and the stage over a
 * hand-built stream of PY_STACK records and their samples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "python/labels.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "unwind/unwind.h"
#include "util/error.h"

#define HELD MS_BPF_PY_GIL_HELD
#define RELEASED MS_BPF_PY_GIL_RELEASED
#define UNKNOWN MS_BPF_PY_GIL_UNKNOWN
#define NONE MS_PY_LABELS_NONE

static void check_span(const struct ms_label_span *s, uint32_t tid, uint64_t start,
		       uint64_t end, uint64_t samples, const char *value)
{
	assert_int_equal(s->tid, tid);
	assert_int_equal(s->start, start);
	assert_int_equal(s->end, end);
	assert_int_equal(s->samples, samples);
	assert_int_equal(s->key.len, 3);
	assert_memory_equal(s->key.ptr, "gil", 3);
	assert_int_equal(s->value.len, strlen(value));
	assert_memory_equal(s->value.ptr, value, s->value.len);
}

/* held, held, released, none, held: three spans, the last at the end. */
static void test_runs(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;

	(void)state;
	assert_non_null(l);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 100, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 200, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 300, RELEASED, &sp), 1);
	check_span(&sp, 2, 100, 200, 2, "held");
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 400, NONE, &sp), 1);
	check_span(&sp, 2, 300, 300, 1, "released");
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 500, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_next_open(l, &sp), 1);
	check_span(&sp, 2, 500, 500, 1, "held");
	assert_int_equal(ms_py_labels_next_open(l, &sp), 0);
	assert_int_equal(ms_py_labels_stats(l)->spans, 3);
	ms_py_labels_free(l);
}

/* An unknown value ends a run and starts none; so does no value. */
static void test_unknown_ends(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;

	(void)state;
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 10, UNKNOWN, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 20, RELEASED, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 30, UNKNOWN, &sp), 1);
	check_span(&sp, 2, 20, 20, 1, "released");
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 40, UNKNOWN, &sp), 0);
	assert_int_equal(ms_py_labels_next_open(l, &sp), 0);
	ms_py_labels_free(l);
}

/* Two threads interleaved keep runs of their own; an exit ends one. */
static void test_interleaved(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;

	(void)state;
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 10, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 3, 11, RELEASED, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 20, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 1, 3, 21, RELEASED, &sp), 0);
	/* thread 3 takes the GIL: its run ends; thread 2's goes on */
	assert_int_equal(ms_py_labels_sample(l, 1, 3, 31, HELD, &sp), 1);
	check_span(&sp, 3, 11, 21, 2, "released");
	assert_int_equal(ms_py_labels_sample(l, 1, 2, 30, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_exit(l, 1, 2, &sp), 1);
	check_span(&sp, 2, 10, 30, 3, "held");
	assert_int_equal(ms_py_labels_exit(l, 1, 2, &sp), 0);
	/* a sample of another thread without a value ends nothing of 3's */
	assert_int_equal(ms_py_labels_sample(l, 1, 4, 40, NONE, &sp), 0);
	assert_int_equal(ms_py_labels_next_open(l, &sp), 1);
	check_span(&sp, 3, 31, 31, 1, "held");
	assert_int_equal(ms_py_labels_next_open(l, &sp), 0);
	ms_py_labels_free(l);
}

/* Past the bound: counted, no span; the table's deletions keep every run found. */
static void test_bound(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;
	uint32_t t, n = 0;

	(void)state;
	for (t = 0; t < MS_PY_LABELS_THREADS_MAX; t++)
		assert_int_equal(ms_py_labels_sample(l, 7, 1000 + t, t + 1, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_sample(l, 7, 99, 1, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_stats(l)->threads_full, 1);
	/* every other thread exits: each found, its run ended */
	for (t = 0; t < MS_PY_LABELS_THREADS_MAX; t += 2) {
		assert_int_equal(ms_py_labels_exit(l, 7, 1000 + t, &sp), 1);
		assert_int_equal(sp.tid, 1000 + t);
	}
	/* the others still run: a released sample ends each one's held run */
	for (t = 1; t < MS_PY_LABELS_THREADS_MAX; t += 2) {
		assert_int_equal(ms_py_labels_sample(l, 7, 1000 + t, 1u << 20, RELEASED, &sp), 1);
		check_span(&sp, 1000 + t, t + 1, t + 1, 1, "held");
	}
	while (ms_py_labels_next_open(l, &sp)) {
		assert_string_equal("released", sp.value.ptr);
		n++;
	}
	assert_int_equal(n, MS_PY_LABELS_THREADS_MAX / 2);
	ms_py_labels_free(l);
}

/* ---- the stage ---- */

static int memfd(void)
{
	int fd = memfd_create("gil-labels-test", 0);

	assert_true(fd >= 0);
	return fd;
}

/* A sample of thread tid at time, after its walker record when gil is not NONE. */
static void put_sample(struct ms_writer *w, struct ms_sample *s, uint32_t tid, uint64_t time,
		       uint32_t gil)
{
	struct ms_py_stack py;

	s->tid = tid;
	s->time = time;
	if (gil != NONE) {
		memset(&py, 0, sizeof(py));
		py.pid = s->pid;
		py.tid = tid;
		py.time = time;
		py.cpu = s->cpu;
		py.status = MS_BPF_PY_COMPLETE;
		py.gil = gil;
		assert_int_equal(ms_py_stack_pack(w, &py), 0);
	}
	assert_int_equal(ms_sample_pack(w, s), 0);
}

static void test_stage(void **state)
{
	int in = memfd(), out = memfd(), rr;
	struct ms_writer *w = ms_writer_open(in, "input", 0);
	struct ms_sample *s = calloc(1, sizeof(*s));
	struct ms_task exit_rec = { .pid = 9, .tid = 11, .time = 65 };
	struct ms_unwind_stats stats;
	struct ms_label_span got[8];
	struct ms_reader *r;
	struct ms_record rec;
	int n = 0;

	(void)state;
	assert_non_null(w);
	assert_non_null(s);
	s->pid = 9;
	s->period = 1000;
	s->cpumode = MS_CPUMODE_USER;
	assert_int_equal(ms_writer_header(w, NULL, "gil-labels-test", "1"), 0);
	put_sample(w, s, 10, 10, HELD);
	put_sample(w, s, 11, 15, RELEASED);
	put_sample(w, s, 10, 20, HELD);
	put_sample(w, s, 10, 30, RELEASED);	/* 10: held 10..20 (2) */
	put_sample(w, s, 11, 35, RELEASED);
	put_sample(w, s, 10, 40, NONE);		/* 10: released 30..30 (1) */
	put_sample(w, s, 10, 50, HELD);
	put_sample(w, s, 11, 60, RELEASED);
	assert_int_equal(ms_task_pack(w, MS_REC_EXIT, &exit_rec), 0);	/* 11: released 15..60 (3) */
	/* 10: held 50..50 (1), at the end */
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(in, 0, SEEK_SET);
	free(s);

	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, &stats), MS_EXIT_OK);
	lseek(out, 0, SEEK_SET);
	r = ms_reader_open(out, "output");
	assert_non_null(r);
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		assert_int_not_equal(rec.kind, MS_REC_PY_STACK);
		if (rec.kind != MS_REC_LABEL_SPAN)
			continue;
		assert_true(n < 8);
		assert_int_equal(ms_label_span_unpack(&rec, &got[n]), 0);
		/* the strings borrow from the record: keep the value's first letter */
		got[n].key.ptr = NULL;
		got[n].value.ptr = got[n].value.len == 4 ? "held" : "released";
		n++;
	}
	assert_int_equal(rr, MS_READ_END);
	ms_reader_free(r);
	assert_int_equal(n, 4);
	assert_int_equal(stats.py_spans, 4);
	got[0].key = got[1].key = got[2].key = got[3].key = (struct ms_str){ "gil", 3 };
	check_span(&got[0], 10, 10, 20, 2, "held");
	check_span(&got[1], 10, 30, 30, 1, "released");
	check_span(&got[2], 11, 15, 60, 3, "released");
	check_span(&got[3], 10, 50, 50, 1, "held");
	close(in);
	close(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_unknown_ends),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_stage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
