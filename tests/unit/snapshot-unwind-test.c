/*
 * Thread snapshots in ms-unwind: the GIL runs of snapshots
 * (python/labels.h: ms_py_labels_snapshot(), spans from the snapshot
 * before to this one), and the stage over a hand-built stream of PY_CODE
 * and PY_SNAPSHOT records: each snapshot one TASK_WAIT, complete ones
 * with a STACK_DEF of their interpreted frames (each stack once), the
 * [python] module and each frame's FRAME once, changed ones with no
 * stack, a malformed one a counted problem, and the label spans.
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

static void check_span(const struct ms_label_span *s, uint32_t tid, uint64_t start,
		       uint64_t end, uint64_t samples, const char *value)
{
	assert_int_equal(s->tid, tid);
	assert_int_equal(s->start, start);
	assert_int_equal(s->end, end);
	assert_int_equal(s->samples, samples);
	assert_int_equal(s->value.len, strlen(value));
	assert_memory_equal(s->value.ptr, value, s->value.len);
}

/*
 * held 100, held 200, released 300, held 400: a run after another starts
 * 1 ns after its end; the first at its own snapshot; runs merged.
 */
static void test_runs(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;

	(void)state;
	assert_non_null(l);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 100, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 200, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 300, RELEASED, &sp), 1);
	check_span(&sp, 2, 100, 200, 2, "held");
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 400, HELD, &sp), 1);
	check_span(&sp, 2, 201, 300, 1, "released");
	assert_int_equal(ms_py_labels_next_open(l, &sp), 1);
	check_span(&sp, 2, 301, 400, 1, "held");
	assert_int_equal(ms_py_labels_next_open(l, &sp), 0);
	assert_int_equal(ms_py_labels_stats(l)->spans, 3);
	ms_py_labels_free(l);
}

/*
 * An unknown value ends the run and is no value: the next run starts at
 * its own snapshot. A time out of order is moved after the run before.
 */
static void test_unknown_and_order(void **state)
{
	struct ms_py_labels *l = ms_py_labels_new();
	struct ms_label_span sp;

	(void)state;
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 10, UNKNOWN, &sp), 0);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 20, RELEASED, &sp), 0);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 30, UNKNOWN, &sp), 1);
	check_span(&sp, 2, 20, 20, 1, "released");
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 40, HELD, &sp), 0);
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 50, HELD, &sp), 0);
	/* before the run's end: after it, never overlapping */
	assert_int_equal(ms_py_labels_snapshot(l, 1, 2, 45, RELEASED, &sp), 1);
	check_span(&sp, 2, 40, 50, 2, "held");
	assert_int_equal(ms_py_labels_exit(l, 1, 2, &sp), 1);
	check_span(&sp, 2, 51, 51, 1, "released");
	assert_int_equal(ms_py_labels_next_open(l, &sp), 0);
	ms_py_labels_free(l);
}

/* ---- the stage ---- */

#define PID 9
#define CODE_MODULE 0x7f0000a00000ull
#define CODE_RUN 0x7f0000b00000ull
#define STAMP(code) ((code) + 0x8000)
#define AT(code, u) ((code) + 0xc0 + 2 * (u))

/* Code units 0-3 at first + 1, 4-7 at first + 2. */
static const uint8_t table[] = { 0xe8 | 3, 0x02, 0xe8 | 3, 0x02 };

static int memfd(void)
{
	int fd = memfd_create("snapshot-unwind-test", 0);

	assert_true(fd >= 0);
	return fd;
}

static void code(struct ms_writer *w, uint64_t addr, const char *qual, uint32_t first)
{
	struct ms_py_code c = {
		.pid = PID, .time = 50, .code = addr, .stamp = STAMP(addr),
		.status = MS_PY_CODE_OK, .qualname = { qual, (uint32_t)strlen(qual) },
		.file = { "/srv/main.py", 12 }, .firstlineno = first, .code_start = addr + 0xc0,
		.linetable = table, .linetable_len = sizeof(table),
	};

	assert_int_equal(ms_py_code_pack(w, &c), 0);
}

/* A snapshot of tid: frames as (code, code unit) pairs, innermost first; reason when changed. */
static void snap(struct ms_writer *w, uint32_t tid, uint64_t time, uint64_t round, uint32_t gil,
		 const char *reason, uint32_t n, const uint64_t *f)
{
	static struct ms_py_snapshot s;

	memset(&s, 0, sizeof(s));
	s.pid = PID;
	s.tid = tid;
	s.time = time;
	s.round = round;
	s.gil = gil;
	s.tstate = 0x7f00000e0000ull + tid;
	s.status = reason ? MS_PY_SNAPSHOT_CHANGED : MS_PY_SNAPSHOT_COMPLETE;
	if (reason)
		s.reason = (struct ms_str){ reason, (uint32_t)strlen(reason) };
	for (uint32_t i = 0; i < n; i++) {
		s.words[4 * i] = f[2 * i];
		s.words[4 * i + 1] = STAMP(f[2 * i]);
		s.words[4 * i + 2] = AT(f[2 * i], f[2 * i + 1]);
	}
	s.n_words = 4 * n;
	assert_int_equal(ms_py_snapshot_pack(w, &s), 0);
}

/* What the stage wrote, as text lines compared below. */
static char out_text[4096];
static size_t out_len;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_len += vsnprintf(out_text + out_len, sizeof(out_text) - out_len, fmt, ap);
	va_end(ap);
	assert_true(out_len < sizeof(out_text));
}

/* The records of fd that this test is about, one line each. */
static void read_out(int fd)
{
	static struct ms_stack st;
	struct ms_task_wait t;
	struct ms_label_span sp;
	struct ms_module m;
	struct ms_frame f;
	struct ms_problem p;
	struct ms_reader *r;
	struct ms_record rec;
	uint32_t id;
	int rr;

	out_len = 0;
	out_text[0] = '\0';
	lseek(fd, 0, SEEK_SET);
	r = ms_reader_open(fd, "output");
	assert_non_null(r);
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		assert_int_not_equal(rec.kind, MS_REC_PY_SNAPSHOT);
		assert_int_not_equal(rec.kind, MS_REC_PY_CODE);
		switch (rec.kind) {
		case MS_REC_MODULE:
			assert_int_equal(ms_module_unpack(&rec, &m), 0);
			say("module %u %u %.*s\n", m.id, m.kind, (int)m.path.len, m.path.ptr);
			break;
		case MS_REC_FRAME:
			assert_int_equal(ms_frame_unpack(&rec, &f), 0);
			assert_int_equal(f.n_lines, 1);
			say("frame %u %" PRIu64 " %.*s:%u\n", f.module, f.address,
			    (int)f.lines[0].function.len, f.lines[0].function.ptr, f.lines[0].line);
			break;
		case MS_REC_STACK_DEF:
			assert_int_equal(ms_stack_def_unpack(&rec, &id, &st), 0);
			say("stack %u %s", id, ms_stack_end_name(st.reason));
			for (uint32_t i = 0; i < st.n_frames; i++) {
				assert_true(st.frames[i].flags & MS_FRAME_NO_ADDRESS);
				say(" %u:%" PRIu64, st.frames[i].module, st.frames[i].address);
			}
			say("\n");
			break;
		case MS_REC_TASK_WAIT:
			assert_int_equal(ms_task_wait_unpack(&rec, &t), 0);
			assert_int_equal(t.reason.len, 0);
			say("wait %u/%u %" PRIu64 " %.*s %" PRIu64 " %s %d\n", t.pid, t.tid, t.time,
			    (int)t.kind.len, t.kind.ptr, t.id, ms_task_wait_status_name(t.status),
			    t.stack == UINT32_MAX ? -1 : (int)t.stack);
			break;
		case MS_REC_LABEL_SPAN:
			assert_int_equal(ms_label_span_unpack(&rec, &sp), 0);
			say("span %u %" PRIu64 "-%" PRIu64 " %" PRIu64 " %.*s=%.*s\n", sp.tid,
			    sp.start, sp.end, sp.samples, (int)sp.key.len, sp.key.ptr,
			    (int)sp.value.len, sp.value.ptr);
			break;
		case MS_REC_PROBLEM:
			assert_int_equal(ms_problem_unpack(&rec, &p), 0);
			say("problem %.*s %" PRIu64 "\n", (int)p.code.len, p.code.ptr, p.count);
			break;
		default:
			break;
		}
	}
	assert_int_equal(rr, MS_READ_END);
	ms_reader_free(r);
}

static void test_stage(void **state)
{
	int in = memfd(), out = memfd();
	struct ms_writer *w = ms_writer_open(in, "input", 0);
	struct ms_info info = { .key = { "python", 6 }, .is_text = true, .text = { "snapshot", 8 } };
	struct ms_task exit_rec = { .pid = PID, .tid = 11, .time = 350 };
	struct ms_unwind_stats stats;
	const uint64_t s1[] = { CODE_RUN, 0, CODE_MODULE, 4 };	/* run:11, <module>:3 */
	const uint64_t s2[] = { CODE_MODULE, 0 };			/* <module>:2 */
	const uint64_t s3[] = { CODE_RUN, 5, CODE_RUN, 1 };		/* run:12, run:11 */

	(void)state;
	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "snapshot-unwind-test", "1"), 0);
	assert_int_equal(ms_info_pack(w, &info), 0);
	code(w, CODE_MODULE, "<module>", 1);
	code(w, CODE_RUN, "run", 10);
	snap(w, 10, 100, 1, HELD, NULL, 2, s1);
	snap(w, 11, 100, 1, RELEASED, NULL, 0, NULL);		/* ran no Python */
	snap(w, 10, 200, 2, HELD, NULL, 2, s1);			/* the same stack */
	snap(w, 11, 200, 2, RELEASED, "the current frame moved", 0, NULL);
	snap(w, 11, 250, 0, HELD, NULL, 0, NULL);		/* round 0: malformed */
	snap(w, 10, 300, 3, RELEASED, NULL, 1, s2);
	snap(w, 11, 300, 3, HELD, NULL, 2, s3);
	assert_int_equal(ms_task_pack(w, MS_REC_EXIT, &exit_rec), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(in, 0, SEEK_SET);

	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, &stats), MS_EXIT_OK);
	read_out(out);
	assert_string_equal(out_text,
		"module 0 7 [python]\n"
		"frame 0 1 run:11\n"
		"frame 0 2 <module>:3\n"
		"stack 0 outermost 0:1 0:2\n"
		"wait 9/10 100 thread 10 complete 0\n"
		"wait 9/11 100 thread 11 complete -1\n"
		"wait 9/10 200 thread 10 complete 0\n"
		"wait 9/11 200 thread 11 changed -1\n"
		"frame 0 3 <module>:2\n"
		"stack 1 outermost 0:3\n"
		"wait 9/10 300 thread 10 complete 1\n"
		"span 10 100-200 2 gil=held\n"
		"frame 0 4 run:12\n"
		"stack 2 outermost 0:4 0:1\n"
		"wait 9/11 300 thread 11 complete 2\n"
		"span 11 100-200 2 gil=released\n"
		"span 11 201-300 1 gil=held\n"
		"span 10 201-300 1 gil=released\n"
		"problem bad-py-snapshot 1\n");
	assert_int_equal(stats.py_snapshots, 6);
	assert_int_equal(stats.py_snapshots_complete, 5);
	assert_int_equal(stats.py_snapshots_changed, 1);
	assert_int_equal(stats.py_snapshots_dropped, 0);
	assert_int_equal(stats.py_snapshots_bad, 1);
	assert_int_equal(stats.py_snapshot_frames, 7);
	assert_int_equal(stats.py_spans, 4);
	/* no sample: the walker's counters stay 0 */
	assert_int_equal(stats.py_stacks, 0);
	assert_int_equal(stats.py_unknown, 0);
	close(in);
	close(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_unknown_and_order),
		cmocka_unit_test(test_stage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
