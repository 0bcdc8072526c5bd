/*
 * Unit tests of the views and exports over thread snapshots (capture.h:
 * ms_cap_task, ms_cap_wait; the unit snapshots, the tasks view): a
 * hand-built capture with known truth. The builder makes the frames,
 * stacks (three STACK_DEFs of interpreted frames alone, as ms-unwind
 * writes a snapshot's), two CPU samples and the GIL spans; the tasks and
 * waits are set on the sealed capture by hand, as the reader would give
 * them.
 *
 *   stacks (outermost first): P1 f;g;h   P2 f;g   P3 k
 *   task 0: pid 100 thread 100 "main":   1100 P1, 1200 P1, 1300 P2, 1400 none;
 *           1 changed
 *   task 1: pid 100 thread 101 "worker": 1150 P3, 1250 P3, 1350 P1; 2 dropped
 *   task 2: pid 100 thread 102, no thread row: 3 changed, no whole read
 *   gil: 100 held 1000..1250, released 1251..1500; 101 released 1000..1500
 *   CPU samples: 100 at 1000 (main Py_RunMain _PyEval f), 101 at 2000
 *   (main hash_update): the snapshots unit never counts them.
 *
 * So in snapshots: 7 in all; self h 3, g 1, k 2, no frames 1; total f 4,
 * g 4, h 3, k 2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "analysis/analysis.h"
#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/labels.h"
#include "formats/formats.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"

#include "stderr-capture.h"

#include "pycapture-build.h"

/* A sample (def: a STACK_DEF of id tid instead): (module, address, flags) innermost first. */
static void stack(struct ms_capture_builder *b, bool def, uint32_t tid, uint64_t time,
		  uint32_t n, ...)
{
	va_list ap;

	va_start(ap, n);
	stack_va(b, def ? tid : UINT32_MAX, tid, time, MS_END_OUTERMOST, n, ap);
	va_end(ap);
}

static void span(struct ms_capture_builder *b, uint32_t tid, uint64_t start, uint64_t end,
		 struct ms_str value)
{
	struct ms_label_span l = { 100, tid, start, end, 1, S("gil"), value };

	assert_int_equal(ms_capture_builder_label_span(b, &l), 0);
}

static void comm(struct ms_capture_builder *b, uint32_t tid, struct ms_str name)
{
	struct ms_comm c = { 100, tid, 10, false, false, name };

	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
}

/* The stack node whose frames' names, outermost first, are path ("f;g;h"). */
static uint32_t node_of(const struct ms_capture *cap, const char *path)
{
	for (uint32_t i = 0; i < cap->n_stacks; i++) {
		char buf[256] = "";
		uint32_t nodes[16], n = 0;
		size_t len = 0;

		for (uint32_t at = i; at != MS_NONE && n < 16; at = cap->stacks[at].parent)
			nodes[n++] = at;
		while (n--)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						cap->strings[cap->frames[cap->stacks[nodes[n]].frame].name],
						n ? ";" : "");
		if (!strcmp(buf, path))
			return i;
	}
	fail_msg("no stack node %s", path);
	return MS_NONE;
}

static struct ms_cap_task tasks[3];
static struct ms_cap_wait waits[7];

/* The capture above; with_waits false: tasks and waits left out. */
static struct ms_capture *snap_capture(bool with_waits)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_info kind = { S("task-kinds"), true, S("thread"), 0 };
	struct ms_capture *cap;
	uint32_t p1, p2, p3, thread;

	assert_non_null(b);
	/* the kind's string, as the builder interns it from the task rows */
	assert_int_equal(ms_capture_builder_info(b, &kind), 0);
	module(b, 0, MS_MODULE_FILE, S("/usr/bin/python3.11"));
	module(b, 1, MS_MODULE_INTERPRETED, S("[python]"));
	module(b, 2, MS_MODULE_FILE, S("/usr/lib/_hashlib.so"));
	native(b, 0, 0x100, S("main"));
	native(b, 0, 0x200, S("Py_RunMain"));
	native(b, 0, 0x300, S("_PyEval_EvalFrameDefault"));
	native(b, 2, 0x10, S("hash_update"));
	py(b, 1, S("f"), S("a.py"), 3, 1);
	py(b, 2, S("g"), S("a.py"), 8, 6);
	py(b, 3, S("h"), S("b.py"), 2, 1);
	py(b, 4, S("k"), S("c.py"), 12, 10);
	comm(b, 100, S("main"));
	comm(b, 101, S("worker"));
	stack(b, false, 100, 1000, 4, 1u, (uint64_t)1, (uint32_t)NA, 0u, (uint64_t)0x300,
	      (uint32_t)I, 0u, (uint64_t)0x200, (uint32_t)(I | R), 0u, (uint64_t)0x100,
	      (uint32_t)(I | R));
	stack(b, false, 101, 2000, 2, 2u, (uint64_t)0x10, 0u, 0u, (uint64_t)0x100, (uint32_t)R);
	/* the snapshots' stacks: interpreted frames alone, innermost first */
	stack(b, true, 0, 0, 3, 1u, (uint64_t)3, (uint32_t)NA, 1u, (uint64_t)2, (uint32_t)NA,
	      1u, (uint64_t)1, (uint32_t)NA);
	stack(b, true, 1, 0, 2, 1u, (uint64_t)2, (uint32_t)NA, 1u, (uint64_t)1, (uint32_t)NA);
	stack(b, true, 2, 0, 1, 1u, (uint64_t)4, (uint32_t)NA);
	span(b, 100, 1000, 1250, S("held"));
	span(b, 100, 1251, 1500, S("released"));
	span(b, 101, 1000, 1500, S("released"));
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	if (!with_waits)
		return cap;

	p1 = node_of(cap, "f;g;h");
	p2 = node_of(cap, "f;g");
	p3 = node_of(cap, "k");
	kind.text.len = 6;
	thread = ms_capture_find_string(cap, "thread", 6);
	assert_int_not_equal(thread, MS_NONE);
	assert_int_equal(cap->n_threads, 2);
	tasks[0] = (struct ms_cap_task){ 100, 0, thread, 0, 100, 1100, 1450, 4, 1, 0 };
	tasks[1] = (struct ms_cap_task){ 100, 1, thread, 0, 101, 1150, 1350, 3, 0, 2 };
	tasks[2] = (struct ms_cap_task){ 100, MS_NONE, thread, 0, 102, 1100, 1300, 0, 3, 0 };
	waits[0] = (struct ms_cap_wait){ 0, p1, MS_NONE, 0, 1100 };
	waits[1] = (struct ms_cap_wait){ 0, p1, MS_NONE, 0, 1200 };
	waits[2] = (struct ms_cap_wait){ 0, p2, MS_NONE, 0, 1300 };
	waits[3] = (struct ms_cap_wait){ 0, MS_NONE, MS_NONE, 0, 1400 };
	waits[4] = (struct ms_cap_wait){ 1, p3, MS_NONE, 0, 1150 };
	waits[5] = (struct ms_cap_wait){ 1, p3, MS_NONE, 0, 1250 };
	waits[6] = (struct ms_cap_wait){ 1, p1, MS_NONE, 0, 1350 };
	cap->n_tasks = 3;
	cap->tasks = tasks;
	cap->n_waits = 7;
	cap->waits = waits;
	return cap;
}

static void snap_free(struct ms_capture *cap)
{
	/* the tables set by hand are not the capture's storage */
	cap->tasks = NULL;
	cap->n_tasks = 0;
	cap->waits = NULL;
	cap->n_waits = 0;
	ms_capture_free(cap);
}

static struct ms_query snap_query(enum ms_view v)
{
	struct ms_query q;

	ms_query_init(&q, v);
	q.unit = MS_UNIT_SNAPSHOTS;
	return q;
}

static char *view(const struct ms_capture *cap, const struct ms_query *q, bool json)
{
	struct ms_view_out o = { 0 };

	o.json = json;
	assert_int_equal(ms_query_check(q), 0);
	assert_int_equal(ms_query_check_capture(q, cap, "snap.msc"), 0);
	return CAPTURE_OUTPUT((o.f = out, ms_view_write(&o, cap, q)));
}

/* The flat profile counts each snapshot once, the CPU samples never. */
static void test_top(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_TOP);
	char *text;

	(void)state;
	text = view(cap, &q, true);
	assert_non_null(strstr(text, "{\"source\":\"thread-snapshots\",\"unit\":\"snapshots\","
				     "\"by\":\"function\",\"look\":\"mixed\",\"snapshots\":7,"
				     "\"total\":7,\"capture_total\":7,"));
	assert_non_null(strstr(text, "{\"name\":\"h\",\"module\":\"[python]\",\"file\":\"b.py\","
				     "\"line\":1,\"self\":3,"));
	assert_non_null(strstr(text, "{\"name\":\"k\",\"module\":\"[python]\",\"file\":\"c.py\","
				     "\"line\":10,\"self\":2,"));
	assert_non_null(strstr(text, "{\"name\":\"f\",\"module\":\"[python]\",\"file\":\"a.py\","
				     "\"line\":1,\"self\":0,\"self_percent\":0,\"total\":4,"));
	assert_null(strstr(text, "hash_update"));
	assert_null(strstr(text, "Py_RunMain"));
	free(text);
	snap_free(cap);
}

static void test_tree_text(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_TREE);
	char *text;

	(void)state;
	text = view(cap, &q, false);
	assert_string_equal(text,
			    "7 snapshots\n"
			    "total%   self%  total  self  function\n"
			    "100.0%   14.3%      7     1  [root]\n"
			    " 57.1%    0.0%      4     0    f (a.py:1, [python])\n"
			    " 57.1%   14.3%      4     1      g (a.py:6, [python])\n"
			    " 42.9%   42.9%      3     3        h (b.py:1, [python])\n"
			    " 28.6%   28.6%      2     2    k (c.py:10, [python])\n");
	free(text);
	snap_free(cap);
}

/* The report: the capture's summary (its samples), then top and tree in snapshots. */
static void test_report_callers(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_REPORT);
	char *text;

	(void)state;
	text = view(cap, &q, false);
	assert_non_null(strstr(text, "tasks:       3 threads read by snapshots"));
	assert_non_null(strstr(text, "\nhottest functions\n7 snapshots, "));
	assert_non_null(strstr(text, "\ncall tree\n7 snapshots\n"));
	free(text);
	/* who called h: g, from f, three times */
	q = snap_query(MS_VIEW_CALLERS);
	q.function = "h";
	text = view(cap, &q, true);
	assert_non_null(strstr(text, "\"snapshots\":7,\"total\":7,"));
	assert_non_null(strstr(text, "\"name\":\"g\""));
	assert_null(strstr(text, "\"name\":\"k\""));
	free(text);
	snap_free(cap);
}

/* A query's total under a filter, from top's JSON head. */
static void expect_selected(const struct ms_capture *cap, struct ms_query *q, unsigned n)
{
	char want[64], *text;

	q->view = MS_VIEW_TOP;
	text = view(cap, q, true);
	snprintf(want, sizeof(want), "\"snapshots\":%u,\"total\":%u,\"capture_total\":7,", n, n);
	if (!strstr(text, want))
		fail_msg("want %s in %s", want, text);
	free(text);
}

static void test_filters(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q;

	(void)state;
	/* the task's thread */
	q = snap_query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_tids(&q, "101"), 0);
	expect_selected(cap, &q, 3);
	q = snap_query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_thread_name(&q, "main"), 0);
	expect_selected(cap, &q, 4);
	/* the read's time, from the recording's start (the first sample, 1000) */
	q = snap_query(MS_VIEW_TOP);
	assert_int_equal(ms_query_parse_time(&q, "200ns..300ns"), 0);
	expect_selected(cap, &q, 2);
	/* the GIL held on 100 until 1250; 101 never */
	q = snap_query(MS_VIEW_TOP);
	assert_int_equal(ms_query_set_label(&q, "gil=held"), 0);
	expect_selected(cap, &q, 2);
	q = snap_query(MS_VIEW_TOP);
	assert_int_equal(ms_query_set_label(&q, "gil=released"), 0);
	expect_selected(cap, &q, 5);
	/* the innermost frame's module: the read without frames has none */
	q = snap_query(MS_VIEW_TOP);
	q.module = "[python]";
	expect_selected(cap, &q, 6);
	q = snap_query(MS_VIEW_TOP);
	q.module = "python3.11";
	expect_selected(cap, &q, 0);
	/* through g: P1 three times, P2 once */
	q = snap_query(MS_VIEW_TOP);
	q.focus = "^g$";
	expect_selected(cap, &q, 4);
	snap_free(cap);
}

/*
 * Looks: python keeps the interpreted stacks (in a tree renumbered from
 * the samples'), native drops every frame of them.
 */
static void test_looks(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_TREE);
	char *text;

	(void)state;
	q.look = MS_LOOK_PYTHON;
	text = view(cap, &q, false);
	assert_string_equal(text,
			    "7 snapshots\n"
			    "total%   self%  total  self  function\n"
			    "100.0%   14.3%      7     1  [root]\n"
			    " 57.1%    0.0%      4     0    f (a.py:1, [python])\n"
			    " 57.1%   14.3%      4     1      g (a.py:6, [python])\n"
			    " 42.9%   42.9%      3     3        h (b.py:1, [python])\n"
			    " 28.6%   28.6%      2     2    k (c.py:10, [python])\n");
	free(text);
	q.look = MS_LOOK_NATIVE;
	text = view(cap, &q, false);
	assert_string_equal(text,
			    "7 snapshots\n"
			    "total%   self%  total  self  function\n"
			    "100.0%  100.0%      7     7  [root]\n");
	free(text);
	snap_free(cap);
}

static void test_threads(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_THREADS);
	char *text;

	(void)state;
	text = view(cap, &q, true);
	assert_non_null(strstr(text, "\"threads\":[{\"pid\":100,\"tid\":100,\"name\":\"main\","
				     "\"snapshots\":4,\"total\":4,\"percent\":57.14,\"labels\":"
				     "[{\"key\":\"gil\",\"value\":\"held\",\"total\":2,"
				     "\"percent\":50},{\"key\":\"gil\",\"value\":\"released\","
				     "\"total\":2,\"percent\":50}]},{\"pid\":100,\"tid\":101,"
				     "\"name\":\"worker\",\"snapshots\":3,\"total\":3,"));
	free(text);
	text = view(cap, &q, false);
	assert_non_null(strstr(text, "7 snapshots in 2 threads\n"
				     " share     snapshots       pid       tid  name\n"
				     " 57.1%             4       100       100  main"));
	free(text);
	snap_free(cap);
}

static void test_timeline(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q = snap_query(MS_VIEW_TIMELINE);
	char *text;

	(void)state;
	/* the window 1000..2001 (the last sample) in buckets of 251 ns */
	q.buckets = 4;
	text = view(cap, &q, true);
	assert_non_null(strstr(text, "\"bucket_ns\":251,"));
	assert_non_null(strstr(text, "\"lanes\":[{\"pid\":100,\"tid\":100,\"name\":\"main\","
				     "\"total\":4,\"buckets\":[2,2,0,0]},{\"pid\":100,\"tid\":101,"
				     "\"name\":\"worker\",\"total\":3,\"buckets\":[2,1,0,0]}]"));
	free(text);
	snap_free(cap);
}

static void test_tasks_view(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q;
	char *text;

	(void)state;
	ms_query_init(&q, MS_VIEW_TASKS);
	text = view(cap, &q, true);
	assert_string_equal(text,
			    "{\"source\":\"thread-snapshots\",\"tasks\":3,\"snapshots\":7,"
			    "\"changed\":4,\"dropped\":2,\"rows\":["
			    "{\"pid\":100,\"kind\":\"thread\",\"id\":100,\"name\":\"main\","
			    "\"snapshots\":4,\"changed\":1,\"dropped\":0,\"first_ns\":100,"
			    "\"last_ns\":450,\"with_frames\":3,\"with_frames_percent\":75},"
			    "{\"pid\":100,\"kind\":\"thread\",\"id\":101,\"name\":\"worker\","
			    "\"snapshots\":3,\"changed\":0,\"dropped\":2,\"first_ns\":150,"
			    "\"last_ns\":350,\"with_frames\":3,\"with_frames_percent\":100},"
			    "{\"pid\":100,\"kind\":\"thread\",\"id\":102,\"name\":\"\","
			    "\"snapshots\":0,\"changed\":3,\"dropped\":0,\"first_ns\":100,"
			    "\"last_ns\":300,\"with_frames\":0,\"with_frames_percent\":0}]}\n");
	free(text);
	text = view(cap, &q, false);
	assert_non_null(strstr(text, "3 tasks: 7 snapshots, 4 changed, 2 dropped\n"));
	assert_non_null(strstr(text, "     100  thread           100          4        1        0   75.0%"));
	free(text);
	/* --tid: the task's thread, or the id of a thread without a row */
	assert_int_equal(ms_query_add_tids(&q, "102"), 0);
	text = view(cap, &q, false);
	assert_non_null(strstr(text, "1 task: 0 snapshots, 3 changed, 0 dropped: threads 102\n"));
	assert_non_null(strstr(text, "(no name)"));
	free(text);
	/* the tasks view counts without times: --time is refused */
	assert_int_equal(ms_query_parse_time(&q, "1ns.."), 0);
	stderr_begin();
	assert_int_equal(ms_query_check(&q), -1);
	assert_non_null(strstr(stderr_end(), "of the filters it takes only --tid and --thread"));
	snap_free(cap);
}

static void test_summary(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_query q;
	char *text;

	(void)state;
	ms_query_init(&q, MS_VIEW_SUMMARY);
	text = view(cap, &q, false);
	assert_non_null(strstr(text, "tasks:       3 threads read by snapshots: 7 whole, "
				     "4 changed, 2 dropped"));
	free(text);
	text = view(cap, &q, true);
	assert_non_null(strstr(text, "\"tasks\":{\"tasks\":3,\"snapshots\":7,\"changed\":4,"
				     "\"dropped\":2}"));
	free(text);
	snap_free(cap);
}

/* Without wait rows there is nothing to weigh: refused with what to do. */
static void test_refused(void **state)
{
	struct ms_capture *cap = snap_capture(false);
	struct ms_query q = snap_query(MS_VIEW_TOP);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	const char *err;

	(void)state;
	stderr_begin();
	assert_int_equal(ms_query_check_capture(&q, cap, "plain.msc"), -1);
	ms_query_init(&q, MS_VIEW_TASKS);
	assert_int_equal(ms_query_check_capture(&q, cap, "plain.msc"), -1);
	o.weight = MS_WEIGHT_SNAPSHOTS;
	assert_int_equal(ms_export_check(cap, MS_FORMAT_FOLDED, &o, "plain.msc"), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "'plain.msc' has no thread snapshots to weigh: record it "
				    "with microscope record --python snapshot"));
	assert_non_null(strstr(err, "'plain.msc' has no tasks"));
	snap_free(cap);
	/* a chrome trace has no room for them; pprof does */
	cap = snap_capture(true);
	o = (struct ms_export_options)MS_EXPORT_OPTIONS_INIT;
	assert_true(ms_capture_facts(cap) & MS_FACT_SNAPSHOTS);
	assert_false(ms_format_keeps(MS_FORMAT_CHROME, &o) & MS_FACT_SNAPSHOTS);
	assert_true(ms_format_keeps(MS_FORMAT_PPROF, &o) & MS_FACT_SNAPSHOTS);
	o.weight = MS_WEIGHT_SNAPSHOTS;
	assert_int_equal(ms_export_check(cap, MS_FORMAT_FOLDED, &o, "snap.msc"), 0);
	assert_true(ms_format_keeps(MS_FORMAT_FOLDED, &o) & MS_FACT_SNAPSHOTS);
	snap_free(cap);
}

/* diff in snapshots: B has task 1's reads of k turned into reads of h. */
static void test_diff(void **state)
{
	struct ms_capture *a = snap_capture(true), *b;
	struct ms_cap_wait saved[7];
	struct ms_query q = snap_query(MS_VIEW_DIFF);
	struct ms_view_out o = { 0 };
	char *text;

	(void)state;
	o.json = true;
	/* both captures share the static tables: b's waits are a copy */
	memcpy(saved, waits, sizeof(saved));
	b = calloc(1, sizeof(*b));
	*b = *a;
	b->storage = NULL;
	b->waits = saved;
	saved[4].stack = saved[6].stack;
	saved[5].stack = saved[6].stack;
	text = CAPTURE_OUTPUT((o.f = out, ms_diff_write(&o, a, "a", b, "b", &q)));
	assert_non_null(strstr(text, "\"unit\":\"snapshots\""));
	assert_non_null(strstr(text, "{\"name\":\"k\",\"module\":\"[python]\",\"file\":\"c.py\","
				     "\"line\":10,\"status\":\"gone\""));
	assert_non_null(strstr(text, "\"name\":\"h\""));
	free(text);
	free(b);
	snap_free(a);
}

static char *folded(const struct ms_capture *cap, enum ms_look look, bool thread_root)
{
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;

	o.look = look;
	o.weight = MS_WEIGHT_SNAPSHOTS;
	o.thread_root = thread_root;
	return CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_FOLDED, &o));
}

static void test_folded(void **state)
{
	struct ms_capture *cap = snap_capture(true);

	(void)state;
	assert_string_equal(folded(cap, MS_LOOK_MIXED, false),
			    "[no frames] 1\n"
			    "f (a.py:1);g (a.py:6) 1\n"
			    "f (a.py:1);g (a.py:6);h (b.py:1) 3\n"
			    "k (c.py:10) 2\n");
	free(membuf);
	assert_string_equal(folded(cap, MS_LOOK_PYTHON, true),
			    "main-100/100 1\n"
			    "main-100/100;f (a.py:1);g (a.py:6) 1\n"
			    "main-100/100;f (a.py:1);g (a.py:6);h (b.py:1) 2\n"
			    "worker-100/101;f (a.py:1);g (a.py:6);h (b.py:1) 1\n"
			    "worker-100/101;k (c.py:10) 2\n");
	free(membuf);
	assert_string_equal(folded(cap, MS_LOOK_NATIVE, false), "[no frames] 7\n");
	free(membuf);
	snap_free(cap);
}

/* pprof: a sample type "snapshots" of its own, last, and the CPU's the default. */
static void test_pprof(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Perftools__Profiles__Profile *p;
	unsigned char *raw = malloc(1 << 20);
	uLongf raw_len = 1 << 20;
	int64_t snaps = 0, samples = 0, h_snaps = 0;
	z_stream z;

	(void)state;
	CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_PPROF, &o));
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (unsigned char *)membuf;
	z.avail_in = membuf_len;
	z.next_out = raw;
	z.avail_out = raw_len;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	raw_len = z.total_out;
	inflateEnd(&z);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	assert_int_equal(p->n_sample_type, 3);
	assert_string_equal(p->string_table[p->sample_type[2]->type], "snapshots");
	assert_string_equal(p->string_table[p->sample_type[2]->unit], "count");
	assert_string_equal(p->string_table[p->default_sample_type], "cpu");
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 3);
		samples += s->value[0];
		snaps += s->value[2];
		/* a snapshot is no sample, and a sample no snapshot */
		assert_true(!s->value[0] || !s->value[2]);
		if (s->value[2] && s->n_location_id == 3)
			h_snaps += s->value[2];
	}
	assert_int_equal(samples, 2);
	assert_int_equal(snaps, 7);
	assert_int_equal(h_snaps, 3);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(membuf);
	snap_free(cap);
}

static void test_speedscope(void **state)
{
	struct ms_capture *cap = snap_capture(true);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	o.weight = MS_WEIGHT_SNAPSHOTS;
	text = CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_SPEEDSCOPE, &o));
	assert_non_null(strstr(text, "\"name\":\"main (100/100) snapshots\",\"unit\":\"none\","
				     "\"startValue\":0,\"endValue\":4,"));
	assert_non_null(strstr(text, "\"name\":\"worker (100/101) snapshots\",\"unit\":\"none\","
				     "\"startValue\":0,\"endValue\":3,"));
	free(text);
	snap_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_tree_text),
		cmocka_unit_test(test_report_callers),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_looks),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_tasks_view),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_speedscope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
