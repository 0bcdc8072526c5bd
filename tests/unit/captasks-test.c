/*
 * Capture 1.8's tasks and waits (capture.h: ms_cap_task, ms_cap_wait)
 * from TASK_WAIT records: the builder's tables and problems, the bound on
 * tasks, the reader's refusal of each broken invariant (naming the
 * section and row), the dump round trip byte for byte, and the minor a
 * capture is written as (1.8 only with tasks).
 *
 * The reads, in the order given (process 100 unless said):
 *   stack-defs 0 [spin, main], 1 [wait, main]
 *   thread 101: 10 complete@0, 20 complete@0, 30 changed, 40 complete@1,
 *               5 dropped (out of order), 10 complete@1 again (same time)
 *   thread 102: 15 changed, 25 changed (no wait row)
 *   thread 103: 12 complete, no stack (it ran no Python)
 *   goroutine 7 (tid 101): 50 complete@1, reason "chan receive"
 *   process 99, thread 99: 1 complete@0
 *   and two bad ones: an empty kind, a thread whose id is not its tid.
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
#include <unistd.h>

#include <zlib.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/convert.h"
#include "capture/format.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#include "stderr-capture.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })
#define NONE UINT32_MAX

static void stack_def(struct ms_capture_builder *b, uint32_t id, uint64_t fn)
{
	struct ms_stack *s = calloc(1, sizeof(*s));

	s->reason = MS_END_OUTERMOST;
	s->frames[0].module = 0;
	s->frames[0].address = fn;
	s->frames[1].module = 0;
	s->frames[1].address = 0x100;
	s->n_frames = 2;
	assert_int_equal(ms_capture_builder_stack_def(b, id, s), 0);
	free(s);
}

static int wait(struct ms_capture_builder *b, uint32_t pid, uint32_t tid, uint64_t time,
		struct ms_str kind, uint64_t id, uint32_t status, uint32_t stack, struct ms_str reason)
{
	struct ms_task_wait t = { .pid = pid, .tid = tid, .time = time, .kind = kind, .id = id,
				  .status = status, .stack = stack, .reason = reason };

	return ms_capture_builder_task_wait(b, &t);
}

static int thread_wait(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint32_t status,
		       uint32_t stack)
{
	return wait(b, 100, tid, time, S("thread"), tid, status, stack, S(""));
}

static struct ms_capture_builder *base(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_comm c = { .pid = 100, .tid = 101, .time = 1, .comm = S("worker") };
	struct ms_module m;
	static const struct { uint64_t a; const char *n; } fns[] = {
		{ 0x100, "main" }, { 0x200, "spin" }, { 0x300, "wait" },
	};

	assert_non_null(b);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/x");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	for (int i = 0; i < 3; i++) {
		struct ms_frame f = { .module = 0, .address = fns[i].a, .symbol_start = fns[i].a,
				      .reason = MS_SYM_OK,
				      .name = { fns[i].n, (uint32_t)strlen(fns[i].n) } };

		assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	}
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	stack_def(b, 0, 0x200);
	stack_def(b, 1, 0x300);
	return b;
}

static struct ms_capture *tasked(void)
{
	struct ms_capture_builder *b = base();
	struct ms_capture *cap;

	assert_int_equal(thread_wait(b, 101, 10, MS_TASK_WAIT_COMPLETE, 0), 0);
	assert_int_equal(thread_wait(b, 102, 15, MS_TASK_WAIT_CHANGED, NONE), 0);
	assert_int_equal(thread_wait(b, 103, 12, MS_TASK_WAIT_COMPLETE, NONE), 0);
	assert_int_equal(thread_wait(b, 101, 20, MS_TASK_WAIT_COMPLETE, 0), 0);
	assert_int_equal(thread_wait(b, 102, 25, MS_TASK_WAIT_CHANGED, NONE), 0);
	assert_int_equal(thread_wait(b, 101, 30, MS_TASK_WAIT_CHANGED, NONE), 0);
	assert_int_equal(thread_wait(b, 101, 40, MS_TASK_WAIT_COMPLETE, 1), 0);
	assert_int_equal(thread_wait(b, 101, 5, MS_TASK_WAIT_DROPPED, NONE), 0);
	assert_int_equal(thread_wait(b, 101, 10, MS_TASK_WAIT_COMPLETE, 1), 0);
	assert_int_equal(wait(b, 100, 101, 50, S("goroutine"), 7, MS_TASK_WAIT_COMPLETE, 1,
			      S("chan receive")), 0);
	assert_int_equal(wait(b, 99, 99, 1, S("thread"), 99, MS_TASK_WAIT_COMPLETE, 0, S("")), 0);
	assert_int_equal(wait(b, 100, 101, 60, S(""), 1, MS_TASK_WAIT_COMPLETE, 0, S("")), 0);
	assert_int_equal(wait(b, 100, 101, 60, S("thread"), 104, MS_TASK_WAIT_COMPLETE, 0, S("")), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static const char *str(const struct ms_capture *cap, uint32_t id)
{
	return id == NONE ? "-" : cap->strings[id];
}

static uint64_t problem(const struct ms_capture *cap, const char *code)
{
	for (uint32_t i = 0; i < cap->n_problems; i++)
		if (!strcmp(cap->strings[cap->problems[i].code], code))
			return cap->problems[i].count;
	return 0;
}

/* The frame names of stack node s, innermost first, joined by ';'. */
static const char *names(const struct ms_capture *cap, uint32_t s)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	for (; s != NONE; s = cap->stacks[s].parent)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ";" : "",
			      cap->strings[cap->frames[cap->stacks[s].frame].name]);
	return s == NONE && !n ? "-" : buf;
}

/* The tasks and waits as text, one line a row. */
static const char *tables(const struct ms_capture *cap)
{
	static char buf[2048];
	size_t n = 0;

	for (uint32_t i = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];

		n += snprintf(buf + n, sizeof(buf) - n, "task %u %s %" PRIu64 " thread %s %" PRIu64
			      "-%" PRIu64 " w%" PRIu64 " c%" PRIu64 " d%" PRIu64 "\n", t->pid,
			      str(cap, t->kind), t->id, t->thread == NONE ? "-" :
			      str(cap, cap->threads[t->thread].name), t->first_time, t->last_time,
			      t->waits, t->changed, t->dropped);
	}
	for (uint32_t i = 0; i < cap->n_waits; i++) {
		const struct ms_cap_wait *x = &cap->waits[i];

		n += snprintf(buf + n, sizeof(buf) - n, "wait %u %" PRIu64 " %s %s\n", x->task,
			      x->time, names(cap, x->stack), str(cap, x->reason));
	}
	return buf;
}

static void test_built(void **state)
{
	struct ms_capture *cap = tasked();

	(void)state;
	assert_int_equal(cap->minor, MS_CAPTURE_MINOR_TASKS);
	assert_true(ms_capture_has_tasks(cap));
	assert_string_equal(tables(cap),
		"task 99 thread 99 thread  1-1 w1 c0 d0\n"
		"task 100 goroutine 7 thread - 50-50 w1 c0 d0\n"
		"task 100 thread 101 thread worker 5-40 w3 c1 d1\n"
		"task 100 thread 102 thread  15-25 w0 c2 d0\n"
		"task 100 thread 103 thread  12-12 w1 c0 d0\n"
		"wait 0 1 spin;main -\n"
		"wait 1 50 wait;main chan receive\n"
		"wait 2 10 spin;main -\n"
		"wait 2 20 spin;main -\n"
		"wait 2 40 wait;main -\n"
		"wait 4 12 - -\n");
	/* each thread task's thread is its thread */
	for (uint32_t i = 0; i < cap->n_tasks; i++)
		if (cap->tasks[i].thread != NONE)
			assert_int_equal(cap->threads[cap->tasks[i].thread].tid, cap->tasks[i].id);
	assert_int_equal(problem(cap, "bad-task-wait"), 2);
	assert_int_equal(problem(cap, "wait-same-time"), 1);
	ms_capture_free(cap);
}

/* A stack no STACK_DEF defined fails the build, naming the record. */
static void test_undefined_stack(void **state)
{
	struct ms_capture_builder *b = base();

	(void)state;
	stderr_begin();
	assert_int_equal(thread_wait(b, 101, 10, MS_TASK_WAIT_COMPLETE, 2), -1);
	assert_non_null(strstr(stderr_end(), "refers to stack 2, which no stack-def"));
	assert_null(ms_capture_builder_seal(b));
}

/* Past MS_CAPTURE_TASKS_MAX tasks a new task's reads are counted, not kept. */
static void test_tasks_full(void **state)
{
	struct ms_capture_builder *b = base();
	struct ms_capture *cap;
	uint32_t i;

	(void)state;
	for (i = 0; i < MS_CAPTURE_TASKS_MAX; i++)
		assert_int_equal(wait(b, 100, 101, 10, S("goroutine"), i, MS_TASK_WAIT_CHANGED,
				      NONE, S("")), 0);
	assert_int_equal(wait(b, 100, 101, 11, S("goroutine"), i, MS_TASK_WAIT_CHANGED, NONE,
			      S("")), 0);
	assert_int_equal(wait(b, 100, 101, 12, S("goroutine"), i + 1, MS_TASK_WAIT_COMPLETE, 0,
			      S("")), 0);
	/* a known task still counts its reads */
	assert_int_equal(wait(b, 100, 101, 13, S("goroutine"), 0, MS_TASK_WAIT_COMPLETE, 0,
			      S("")), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_tasks, MS_CAPTURE_TASKS_MAX);
	assert_int_equal(problem(cap, "task-rows-full"), 2);
	assert_int_equal(cap->n_waits, 1);
	assert_int_equal(cap->tasks[0].waits, 1);
	assert_int_equal(cap->tasks[0].last_time, 13);
	ms_capture_free(cap);
}

static struct ms_capture *dump_and_capture(const struct ms_capture *cap)
{
	FILE *f = tmpfile();
	struct ms_writer *w;
	struct ms_reader *r;
	struct ms_capture *back = NULL;

	assert_non_null(f);
	w = ms_writer_open(fileno(f), "tmp", 0);
	assert_non_null(w);
	assert_int_equal(ms_capture_dump(cap, w, "ms-test", "1", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &back), 0);
	ms_reader_free(r);
	fclose(f);
	return back;
}

/* A dump's TASK_WAITs, counts and times included, capture back to the same bytes. */
static void test_round_trip(void **state)
{
	struct ms_capture *cap = tasked(), *back, *again, *loaded;
	unsigned char *b1, *b2;
	size_t l1, l2;
	char want[2048];

	(void)state;
	snprintf(want, sizeof(want), "%s", tables(cap));
	back = dump_and_capture(cap);
	assert_non_null(back);
	assert_string_equal(tables(back), want);
	/* (the dump of a built capture adds what a stream says: its producer) */
	again = dump_and_capture(back);
	assert_non_null(again);
	assert_int_equal(ms_capture_encode(back, &b1, &l1), 0);
	assert_int_equal(ms_capture_encode(again, &b2, &l2), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(b1, b2, l1);
	loaded = ms_capture_load_buffer(b1, l1, "t.msc");
	assert_non_null(loaded);
	assert_int_equal(loaded->minor, MS_CAPTURE_MINOR_TASKS);
	assert_string_equal(tables(loaded), want);
	free(b1);
	free(b2);
	ms_capture_free(loaded);
	ms_capture_free(again);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* Without tasks a capture is written as before: 1.7 with Python data, 1.1 with none. */
static void test_minor(void **state)
{
	struct ms_capture_builder *b = base();
	struct ms_label_span l = { .pid = 100, .tid = 101, .start = 1, .end = 2, .samples = 1,
				   .key = S("gil"), .value = S("held") };
	struct ms_capture *cap;
	unsigned char *buf;
	size_t len;

	(void)state;
	assert_int_equal(ms_capture_builder_label_span(b, &l), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_false(ms_capture_has_tasks(cap));
	assert_int_equal(cap->minor, MS_CAPTURE_MINOR_PYTHON);
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), MS_CAPTURE_MINOR_PYTHON);
	free(buf);
	ms_capture_free(cap);
	cap = ms_capture_builder_seal(base());
	assert_non_null(cap);
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), MS_CAPTURE_MINOR_UNWEIGHTED);
	free(buf);
	ms_capture_free(cap);
}

/* The header's minor set to minor, its checksum made again. */
static void set_minor(unsigned char *buf, uint32_t minor)
{
	uint32_t n = ms_get_u32(buf + MS_CAPF_N_SECTIONS), crc;

	ms_put_u32(buf + MS_CAPF_MINOR, minor);
	crc = crc32_z(0, buf, MS_CAPF_CHECKSUM);
	crc = crc32_z(crc, buf + MS_CAPF_HEADER_SIZE, (size_t)n * MS_CAPF_DIR_SIZE_BYTES);
	ms_put_u32(buf + MS_CAPF_CHECKSUM, crc);
}

/*
 * Encode the capture with one thing broken (how), and expect the reader
 * to refuse it with a message naming section and what.
 */
static void refused(int how, const char *section, const char *what)
{
	struct ms_capture *cap = tasked(), *back;
	struct ms_cap_task *t = cap->tasks;
	struct ms_cap_wait *x = cap->waits;
	unsigned char *buf;
	size_t len;
	const char *msg;
	char want[64];

	switch (how) {
	case 0: t[2].thread = cap->n_threads; break;
	case 1: t[2].kind = 0; break;
	case 2: t[2].kind = cap->n_strings; break;
	case 3: t[3].thread = t[2].thread; break;		/* another thread's row */
	case 4: t[1].thread = t[2].thread; break;		/* a goroutine with a thread */
	case 5: t[4].first_time = 13; break;			/* after its last */
	case 6: t[3].changed = 0; break;			/* no read */
	case 7: { struct ms_cap_task s = t[3]; t[3] = t[4]; t[4] = s; } break;
	case 8: t[3].id = 101; t[3].thread = t[2].thread; break;	/* twice (101) */
	case 10: x[3].task = cap->n_tasks; break;
	case 11: x[3].stack = cap->n_stacks; break;
	case 12: x[3].reason = 0; break;
	case 13: x[3].reason = cap->n_strings; break;
	case 14: x[4].time = 41; break;				/* after its task's last read */
	case 15: { struct ms_cap_wait s = x[2]; x[2] = x[3]; x[3] = s; } break;
	case 16: x[3].time = x[2].time; break;			/* one row per (task, time) */
	case 17: t[2].waits = 2; t[2].changed++; break;		/* 3 rows of it */
	case 18: t[3].changed = 1; break;			/* 15 and 25: two reads needed */
	case 19: t[2].first_time = 4; t[2].changed = t[2].dropped = 0; break;
	case 21: cap->n_tasks = 0; break;			/* waits without tasks */
	case 22: break;						/* a 1.7 file (below) */
	}
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	if (how == 21 || how == 22)
		set_minor(buf, how == 21 ? MS_CAPTURE_MINOR_TASKS : MS_CAPTURE_MINOR_PYTHON);
	stderr_begin();
	back = ms_capture_load_buffer(buf, len, "t.msc");
	msg = stderr_end();
	if (back)
		fail_msg("a capture broken by way %d was read", how);
	snprintf(want, sizeof(want), "in section '%s'", section);
	if (!strstr(msg, want) || !strstr(msg, what))
		fail_msg("way %d: '%s' and '%s' not in: %s", how, want, what, msg);
	free(buf);
	ms_capture_free(cap);
}

static void test_reader_refuses(void **state)
{
	(void)state;
	refused(0, "tasks", "row 2: thread");
	refused(1, "tasks", "row 2: an empty kind");
	refused(2, "tasks", "row 2: kind is string");
	refused(3, "tasks", "row 3: a thread task of process 100 numbered 102");
	refused(4, "tasks", "row 1: a goroutine task with a thread row");
	refused(5, "tasks", "row 4: first read at 13");
	refused(6, "tasks", "row 3: 0 complete, 0 changed");
	refused(7, "tasks", "row 4 is not after row 3");
	refused(8, "tasks", "row 3 is not after row 2");
	refused(10, "waits", "row 3: task 5 of 5");
	refused(11, "waits", "row 3: stack");
	refused(12, "waits", "row 3: an empty reason");
	refused(13, "waits", "row 3: reason is string");
	refused(14, "waits", "row 4: at 41, outside its task's reads (5 to 40)");
	refused(15, "waits", "row 3 is not after row 2");
	refused(16, "waits", "row 3 is not after row 2");
	refused(17, "tasks", "row 2: counts 2 complete reads, but the waits section has 3");
	refused(18, "tasks", "row 3: its first or last read");
	refused(19, "tasks", "row 2: its first or last read");
	refused(21, "waits", "without a tasks section");
	refused(22, "tasks", "in a file of format 1.7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built),
		cmocka_unit_test(test_undefined_stack),
		cmocka_unit_test(test_tasks_full),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_minor),
		cmocka_unit_test(test_reader_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
