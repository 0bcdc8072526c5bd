/*
 * Unit tests of the off-CPU analysis over captures built by hand with
 * known truth: the off-cpu unit (weights by duration at switch-out
 * stacks), incomplete intervals excluded from every time and counted,
 * --time clipping, --cause, the off-cpu and wall views, the timeline's
 * off-CPU lanes, the summary and problems, JSON fields, determinism, and
 * the refusal of a capture that did not record off-CPU time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/intervals.h"
#include "analysis/select.h"
#include "analysis/waits.h"
#include "capture/capture.h"
#include "stream/records.h"
#include "tests/unit/stderr-capture.h"

#define MS_ 1000000ull		/* ns in a millisecond */
#define T0 (1000 * MS_)		/* the recording's start */

struct tcap {
	struct ms_capture cap;
	const char *strings[32];
	struct ms_cap_module modules[4];
	struct ms_cap_frame frames[16];
	struct ms_cap_stack stacks[16];
	struct ms_cap_thread threads[4];
	struct ms_cap_sample samples[64];
	struct ms_cap_interval intervals[16];
	struct ms_cap_evidence evidence[4];
	struct ms_cap_problem problems[2];
};

static uint32_t str(struct tcap *t, const char *s)
{
	uint32_t i;

	for (i = 0; i < t->cap.n_strings; i++)
		if (!strcmp(t->strings[i], s))
			return i;
	assert_true(t->cap.n_strings < 32);
	t->strings[t->cap.n_strings] = s;
	return t->cap.n_strings++;
}

static uint32_t frame(struct tcap *t, uint32_t mod, uint64_t address, const char *name)
{
	t->frames[t->cap.n_frames] = (struct ms_cap_frame){ .module = mod, .address = address,
							    .name = str(t, name), .reason = MS_SYM_OK };
	return t->cap.n_frames++;
}

/* A stack node of two frames, outermost first; parents come first. */
static uint32_t stack2(struct tcap *t, uint32_t outer, uint32_t inner)
{
	uint32_t i, parent = MS_NONE;

	for (i = 0; i < t->cap.n_stacks; i++)
		if (t->stacks[i].parent == MS_NONE && t->stacks[i].frame == outer)
			parent = i;
	if (parent == MS_NONE) {
		t->stacks[t->cap.n_stacks] = (struct ms_cap_stack){ MS_NONE, outer, 1 };
		parent = t->cap.n_stacks++;
	}
	t->stacks[t->cap.n_stacks] = (struct ms_cap_stack){ parent, inner, 2 };
	return t->cap.n_stacks++;
}

/* Samples of 1 ms of cpu-clock each at the given times (ms from T0). */
static void sample_at(struct tcap *t, uint32_t thr, uint32_t stack, uint64_t from_ms, uint64_t to_ms)
{
	for (uint64_t ms = from_ms; ms <= to_ms; ms++)
		t->samples[t->cap.n_samples++] = (struct ms_cap_sample){
			.time = T0 + ms * MS_, .thread = thr, .stack = stack,
			.end = MS_END_OUTERMOST, .period = MS_, .count = 1,
		};
}

/* An interval from start_ms to end_ms (0: missing), of evidence ev. */
static void interval(struct tcap *t, uint32_t thr, uint64_t start_ms, uint64_t end_ms,
		     uint32_t missing, uint32_t ev, uint32_t stack)
{
	t->intervals[t->cap.n_intervals++] = (struct ms_cap_interval){
		.start = start_ms || missing == MS_INTERVAL_ENDED_INSIDE || missing == MS_INTERVAL_LOST_END ||
			 missing == MS_INTERVAL_COMPLETE ? T0 + start_ms * MS_ : 0,
		.end = missing == MS_INTERVAL_ENDED_INSIDE || missing == MS_INTERVAL_LOST_END ? 0
										  : T0 + end_ms * MS_,
		.thread = thr,
		.cpu = missing == MS_INTERVAL_BEGAN_INSIDE || missing == MS_INTERVAL_LOST_START ? MS_NONE : 0,
		.stack = stack,
		.stack_end = stack == MS_NONE ? MS_END_UNKNOWN : MS_END_OUTERMOST,
		.missing = missing,
		.evidence = ev,
	};
}

/* An empty off-CPU capture over t's arrays, string 0 "" made. */
static void tcap_init(struct tcap *t)
{
	assert_non_null(t);
	t->cap.major = MS_CAPTURE_MAJOR;
	t->cap.minor = MS_CAPTURE_MINOR;
	t->cap.flags = MS_CAPTURE_OFF_CPU;
	t->cap.strings = t->strings;
	t->cap.modules = t->modules;
	t->cap.frames = t->frames;
	t->cap.stacks = t->stacks;
	t->cap.threads = t->threads;
	t->cap.samples = t->samples;
	t->cap.intervals = t->intervals;
	t->cap.evidence = t->evidence;
	t->cap.problems = t->problems;
	t->cap.target_exit_code = -1;
	str(t, "");
}

enum { EV_UNKNOWN, EV_PREEMPTED, EV_SLEEPING, EV_BLOCKED };

/*
 * The recording, 100 ms from T0; times in ms from T0:
 *   thread 10 "main": CPU samples at 31..39 and 81..84 (compute); off CPU
 *     sleeping [10, 30) and [50, 80) in nanosleep, preempted [40, 45) in
 *     compute; a lost end from 85 (nanosleep, no cause);
 *   thread 11 "reader": off CPU since before the start until 5 (began
 *     inside, no stack), blocked [20, 60) in read, sleeping [62, 70) in
 *     futex_wait, still sleeping from 90 when the recording ended; CPU
 *     samples at 61 and 72..89.
 * Complete: main 55 ms (sleeping 50, preempted 5), reader 48 ms (blocked
 * 40, sleeping 8); 103 ms in 6 intervals. Incomplete: 3, with lower
 * bounds 5 ms (began inside) and 10 ms (ended inside).
 */
static struct tcap *offcpu_capture(void)
{
	struct tcap *t = calloc(1, sizeof(*t));
	uint32_t app, libc, mainf, compute, nsleep, rd, futex;
	uint32_t s_sleep, s_comp, s_read, s_futex;

	tcap_init(t);
	t->cap.start_time = T0;
	t->cap.end_time = T0 + 100 * MS_;
	t->modules[0] = (struct ms_cap_module){ .path = str(t, "/usr/bin/app"), .kind = MS_MODULE_FILE };
	t->modules[1] = (struct ms_cap_module){ .path = str(t, "/lib/libc.so.6"), .kind = MS_MODULE_FILE };
	t->cap.n_modules = 2;
	app = 0;
	libc = 1;
	mainf = frame(t, app, 0x1000, "main");
	compute = frame(t, app, 0x1100, "compute");
	nsleep = frame(t, libc, 0x2000, "nanosleep");
	rd = frame(t, libc, 0x2100, "read");
	futex = frame(t, libc, 0x2200, "futex_wait");
	s_comp = stack2(t, mainf, compute);
	s_sleep = stack2(t, mainf, nsleep);
	s_read = stack2(t, mainf, rd);
	s_futex = stack2(t, mainf, futex);
	t->threads[0] = (struct ms_cap_thread){ 10, 10, str(t, "main"), T0 + 31 * MS_, T0 + 84 * MS_ };
	t->threads[1] = (struct ms_cap_thread){ 10, 11, str(t, "reader"), T0 + 61 * MS_, T0 + 89 * MS_ };
	t->cap.n_threads = 2;
	t->evidence[EV_UNKNOWN] = (struct ms_cap_evidence){ MS_CAUSE_UNKNOWN, 0, 0, 0 };
	t->evidence[EV_PREEMPTED] = (struct ms_cap_evidence){ MS_CAUSE_PREEMPTED, MS_EVIDENCE_STATE |
							       MS_EVIDENCE_SWITCH, 0x100, 1 };
	t->evidence[EV_SLEEPING] = (struct ms_cap_evidence){ MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE, 1, 0 };
	t->evidence[EV_BLOCKED] = (struct ms_cap_evidence){ MS_CAUSE_BLOCKED, MS_EVIDENCE_STATE, 2, 0 };
	t->cap.n_evidence = 4;

	/* samples in time order */
	sample_at(t, 0, s_comp, 31, 39);
	sample_at(t, 1, s_futex, 61, 61);
	sample_at(t, 1, s_futex, 72, 80);
	sample_at(t, 0, s_comp, 81, 84);
	sample_at(t, 1, s_futex, 81, 89);
	/* the order the capture keeps: by start, or else end */
	interval(t, 1, 0, 5, MS_INTERVAL_BEGAN_INSIDE, EV_UNKNOWN, MS_NONE);
	interval(t, 0, 10, 30, MS_INTERVAL_COMPLETE, EV_SLEEPING, s_sleep);
	interval(t, 1, 20, 60, MS_INTERVAL_COMPLETE, EV_BLOCKED, s_read);
	interval(t, 0, 40, 45, MS_INTERVAL_COMPLETE, EV_PREEMPTED, s_comp);
	interval(t, 0, 50, 80, MS_INTERVAL_COMPLETE, EV_SLEEPING, s_sleep);
	interval(t, 1, 62, 70, MS_INTERVAL_COMPLETE, EV_SLEEPING, s_futex);
	interval(t, 0, 85, 0, MS_INTERVAL_LOST_END, EV_UNKNOWN, s_sleep);
	interval(t, 1, 90, 0, MS_INTERVAL_ENDED_INSIDE, EV_SLEEPING, s_futex);
	return t;
}

/* What a writer printed, as a string the caller frees. */
static char *membuf;
static size_t membuf_len;
#define CAPTURE_OUTPUT(call) ({                                  \
	FILE *out = open_memstream(&membuf, &membuf_len);        \
	assert_non_null(out);                                    \
	assert_int_equal(call, 0);                               \
	assert_int_equal(fclose(out), 0);                        \
	membuf;                                                  \
})
#define VIEW_OUT(as_json) (&(struct ms_view_out){ .f = out, .json = (as_json) })

#define EXPECT_ERROR(call, frag) do {                                                   \
	const char *msg_;                                                               \
	int rc_;                                                                        \
	stderr_begin();                                                                 \
	rc_ = (call);                                                                   \
	msg_ = stderr_end();                                                            \
	if (rc_ != -1 || count_lines(msg_) != 1 || !strstr(msg_, (frag)))               \
		fail_msg("%s: expected -1 and one message with \"%s\"; got %d and \"%s\"", \
			 #call, (frag), rc_, msg_);                                     \
} while (0)

static struct ms_query query(enum ms_view v)
{
	struct ms_query q;

	ms_query_init(&q, v);
	return q;
}

static char *view(const struct ms_capture *cap, const struct ms_query *q, bool json)
{
	return CAPTURE_OUTPUT(ms_view_write(VIEW_OUT(json), cap, q));
}

static void expect_in(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("expected \"%s\" in:\n%s", want, text);
}

static void expect_start(const char *text, const char *want)
{
	if (strncmp(text, want, strlen(want)))
		fail_msg("expected the start \"%s\" of:\n%s", want, text);
}

/* The top entry of the function named name, or fail. */
static const struct ms_top_entry *top_entry(const struct ms_top *top, const char *name)
{
	uint32_t i;

	for (i = 0; i < top->n; i++)
		if (!strcmp(top->sel.keys.keys[top->entries[i].key].label, name))
			return &top->entries[i];
	fail_msg("no top entry '%s'", name);
	return NULL;
}

/* ---- the unit ---- */

static void test_unit_weights_by_duration(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_top top;

	(void)state;
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_top_compute(&top, &t->cap, &q), 0);
	/* complete intervals only: the three incomplete ones weigh nothing */
	assert_int_equal(top.sel.all, 103 * MS_);
	assert_int_equal(top.sel.selected, 103 * MS_);
	assert_int_equal(top.sel.selected_intervals, 5);
	assert_int_equal(top.sel.selected_samples, 0);
	assert_int_equal(top_entry(&top, "nanosleep")->self, 50 * MS_);
	assert_int_equal(top_entry(&top, "read")->self, 40 * MS_);
	assert_int_equal(top_entry(&top, "futex_wait")->self, 8 * MS_);
	assert_int_equal(top_entry(&top, "compute")->self, 5 * MS_);
	assert_int_equal(top_entry(&top, "main")->total, 103 * MS_);
	assert_int_equal(top_entry(&top, "main")->self, 0);
	/* sorted by self, ties by key */
	assert_string_equal(top.sel.keys.keys[top.entries[0].key].label, "nanosleep");
	ms_top_release(&top);
	free(t);
}

static void test_unit_tree_callers(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_CALLERS);
	struct ms_tree tree;

	(void)state;
	q.unit = MS_UNIT_OFF_CPU;
	q.function = "read";
	assert_int_equal(ms_tree_build_from(&tree, &t->cap, &q), 0);
	assert_int_equal(tree.nodes[0].total, 40 * MS_);
	ms_tree_release(&tree);
	q = query(MS_VIEW_TREE);
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_tree_build(&tree, &t->cap, &q), 0);
	assert_int_equal(tree.nodes[0].total, 103 * MS_);
	ms_tree_release(&tree);
	free(t);
}

/* An interval without a stack weighs in the selection with no frame, as a sample without one. */
static void test_unit_no_stack(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_select s;

	(void)state;
	t->intervals[1].stack = MS_NONE;	/* [10, 30) sleeping */
	t->intervals[1].stack_end = MS_END_UNKNOWN;
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_select_build(&s, &t->cap, &q), 0);
	assert_int_equal(s.selected, 103 * MS_);
	assert_int_equal(s.noframe[s.class_of_end[ms_keys_end_slot(MS_END_UNKNOWN)]], 20 * MS_);
	ms_select_release(&s);
	free(t);
}

static uint64_t selected(const struct ms_capture *cap, const struct ms_query *q)
{
	struct ms_select s;
	uint64_t v;

	assert_int_equal(ms_select_build(&s, cap, q), 0);
	v = s.selected;
	ms_select_release(&s);
	return v;
}

static void test_time_clipped(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_off_cpu_view v;

	(void)state;
	q.unit = MS_UNIT_OFF_CPU;
	/* [25, 55): 5 of [10, 30), all of [40, 45), 5 of [50, 80), 30 of [20, 60) */
	assert_int_equal(ms_query_parse_time(&q, "25ms..55ms"), 0);
	assert_int_equal(selected(&t->cap, &q), 45 * MS_);
	q.view = MS_VIEW_OFF_CPU;
	assert_int_equal(ms_off_cpu_view_compute(&v, &t->cap, &q), 0);
	assert_int_equal(v.total, 45 * MS_);
	assert_int_equal(v.intervals, 4);
	assert_int_equal(v.cause_ns[MS_CAUSE_SLEEPING], 10 * MS_);
	assert_int_equal(v.cause_ns[MS_CAUSE_BLOCKED], 30 * MS_);
	assert_int_equal(v.cause_ns[MS_CAUSE_PREEMPTED], 5 * MS_);
	/* no incomplete interval's known part lies there */
	assert_int_equal(v.n_incomplete, 0);
	assert_int_equal(v.n_threads, 2);
	assert_int_equal(v.threads[0].total, 30 * MS_);	/* reader */
	assert_int_equal(v.threads[1].total, 15 * MS_);
	ms_off_cpu_view_release(&v);
	/* [2, 4): only the began-inside interval: counted, 2 ms known, no time */
	assert_int_equal(ms_query_parse_time(&q, "2ms..4ms"), 0);
	assert_int_equal(ms_off_cpu_view_compute(&v, &t->cap, &q), 0);
	assert_int_equal(v.total, 0);
	assert_int_equal(v.n_incomplete, 1);
	assert_int_equal(v.incomplete[MS_INTERVAL_BEGAN_INSIDE], 1);
	assert_int_equal(v.incomplete_known[MS_INTERVAL_BEGAN_INSIDE], 2 * MS_);
	ms_off_cpu_view_release(&v);
	/* the lost end's one known time, 85 ms, in [85, 86) */
	assert_int_equal(ms_query_parse_time(&q, "85ms..86ms"), 0);
	assert_int_equal(ms_off_cpu_view_compute(&v, &t->cap, &q), 0);
	assert_int_equal(v.n_incomplete, 1);
	assert_int_equal(v.incomplete[MS_INTERVAL_LOST_END], 1);
	assert_int_equal(v.incomplete_known[MS_INTERVAL_LOST_END], 0);
	ms_off_cpu_view_release(&v);
	free(t);
}

static void test_cause_filter(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);

	(void)state;
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_query_add_causes(&q, "sleeping"), 0);
	assert_int_equal(q.causes, 1u << MS_CAUSE_SLEEPING);
	assert_int_equal(selected(&t->cap, &q), 58 * MS_);
	q.causes = 0;
	assert_int_equal(ms_query_add_causes(&q, "blocked,preempted"), 0);
	assert_int_equal(selected(&t->cap, &q), 45 * MS_);
	/* repeatable: the option adds */
	assert_int_equal(ms_query_add_causes(&q, "unknown"), 0);
	assert_int_equal(q.causes, (1u << MS_CAUSE_BLOCKED) | (1u << MS_CAUSE_PREEMPTED) |
				   (1u << MS_CAUSE_UNKNOWN));
	assert_true(ms_query_filters(&q));
	/* not a cause: refused, the query unchanged past what parsed */
	q.causes = 0;
	EXPECT_ERROR(ms_query_add_causes(&q, "io"), "--cause wants preempted, sleeping, blocked or "
		     "unknown, or a list such as sleeping,blocked; not 'io'\n");
	EXPECT_ERROR(ms_query_add_causes(&q, "sleeping,"), "not 'sleeping,'");
	EXPECT_ERROR(ms_query_add_causes(&q, ""), "not ''");
	free(t);
}

/* thread, module and focus filters select intervals as they select samples. */
static void test_filters(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);

	(void)state;
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_query_add_tids(&q, "11"), 0);
	assert_int_equal(selected(&t->cap, &q), 48 * MS_);
	q = query(MS_VIEW_TOP);
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_query_add_thread_name(&q, "main"), 0);
	assert_int_equal(selected(&t->cap, &q), 55 * MS_);
	q = query(MS_VIEW_TOP);
	q.unit = MS_UNIT_OFF_CPU;
	q.module = "libc.so.6";
	assert_int_equal(selected(&t->cap, &q), 98 * MS_);
	q.module = NULL;
	q.focus = "^(read|futex_wait)$";
	assert_int_equal(selected(&t->cap, &q), 48 * MS_);
	free(t);
}

/* ---- the off-cpu view ---- */

static void test_off_cpu_view_counts(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_OFF_CPU);
	struct ms_off_cpu_view v;
	uint32_t order[MS_CAUSE_COUNT];

	(void)state;
	assert_int_equal(ms_off_cpu_view_compute(&v, &t->cap, &q), 0);
	assert_true(v.recorded);
	assert_int_equal(v.total, 103 * MS_);
	assert_int_equal(v.intervals, 5);
	assert_int_equal(v.cause_ns[MS_CAUSE_SLEEPING], 58 * MS_);
	assert_int_equal(v.cause_ns[MS_CAUSE_BLOCKED], 40 * MS_);
	assert_int_equal(v.cause_ns[MS_CAUSE_PREEMPTED], 5 * MS_);
	assert_int_equal(v.cause_ns[MS_CAUSE_UNKNOWN], 0);
	assert_int_equal(v.cause_intervals[MS_CAUSE_SLEEPING], 3);
	/* incomplete: counted per reason, lower bounds apart, never in a total */
	assert_int_equal(v.n_incomplete, 3);
	assert_int_equal(v.incomplete[MS_INTERVAL_BEGAN_INSIDE], 1);
	assert_int_equal(v.incomplete[MS_INTERVAL_ENDED_INSIDE], 1);
	assert_int_equal(v.incomplete[MS_INTERVAL_LOST_END], 1);
	assert_int_equal(v.incomplete_known[MS_INTERVAL_BEGAN_INSIDE], 5 * MS_);
	assert_int_equal(v.incomplete_known[MS_INTERVAL_ENDED_INSIDE], 10 * MS_);
	assert_int_equal(v.incomplete_known[MS_INTERVAL_LOST_END], 0);
	/* threads by total: main 55, reader 48 */
	assert_int_equal(v.n_threads, 2);
	assert_int_equal(v.threads[0].thread, 0);
	assert_int_equal(v.threads[0].total, 55 * MS_);
	assert_int_equal(v.threads[0].incomplete, 1);
	assert_int_equal(v.threads[1].total, 48 * MS_);
	assert_int_equal(v.threads[1].cause_ns[MS_CAUSE_BLOCKED], 40 * MS_);
	assert_int_equal(v.threads[1].incomplete, 2);
	/* causes by time */
	assert_int_equal(ms_off_cpu_view_causes(&v, order), 3);
	assert_int_equal(order[0], MS_CAUSE_SLEEPING);
	assert_int_equal(order[1], MS_CAUSE_BLOCKED);
	assert_int_equal(order[2], MS_CAUSE_PREEMPTED);
	ms_off_cpu_view_release(&v);
	free(t);
}

static void test_off_cpu_view_text(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_OFF_CPU);
	char *text;

	(void)state;
	text = view(&t->cap, &q, false);
	expect_in(text, "off-CPU time: 103.000 ms in 5 complete intervals (wall-clock ns");
	expect_in(text, "incomplete:  3 intervals with an end missing, counted in no time here:\n");
	expect_in(text, "         1  began-inside  off CPU when the recording began (at least "
		  "5.000 ms inside the recording, not summed)\n");
	expect_in(text, "         1  lost-end      records were lost while it was off CPU: its end "
		  "is not known\n");
	expect_in(text, "\n 56.3%     58.000 ms          3  sleeping   waiting interruptibly (task state S)\n"
		  " 38.8%     40.000 ms          1  blocked    waiting uninterruptibly (task state D)\n"
		  "  4.9%      5.000 ms          1  preempted  runnable, switched out by the scheduler\n");
	expect_in(text, "\n 53.4%     55.000 ms          3           1        10        10  main  "
		  "(sleeping 50.000 ms, preempted 5.000 ms)\n"
		  " 46.6%     48.000 ms          2           2        10        11  reader  "
		  "(sleeping 8.000 ms, blocked 40.000 ms)\n");
	/* then per cause, the functions, in the cause's order */
	expect_in(text, "\nwhere threads were sleeping: functions by off-CPU time at switch-out\n"
		  "58.000 ms of off-CPU time, 3 functions\nselected 58.000 ms of 103.000 ms: cause sleeping\n"
		  " self%       self  total%      total  module     function\n"
		  " 86.2%  50.000 ms   86.2%  50.000 ms  libc.so.6  nanosleep\n"
		  " 13.8%   8.000 ms   13.8%   8.000 ms  libc.so.6  futex_wait\n"
		  "  0.0%       0 ns  100.0%  58.000 ms  app        main\n");
	assert_true(strstr(text, "were sleeping") < strstr(text, "were blocked"));
	assert_true(strstr(text, "were blocked") < strstr(text, "were preempted"));
	/* the words of what was not seen stay out */
	assert_null(strstr(text, "I/O"));
	assert_null(strstr(text, " lock"));
	free(text);
	free(t);
}

static void test_off_cpu_view_json(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_OFF_CPU);
	char *text;

	(void)state;
	text = view(&t->cap, &q, true);
	expect_start(text, "{\"source\":\"intervals\",\"unit\":\"ns\",\"look\":\"mixed\",\"total\":103000000,"
			     "\"capture_total\":103000000,\"intervals\":5,\"incomplete\":{\"intervals\":3,"
			     "\"reasons\":[{\"missing\":\"began-inside\",\"intervals\":1,\"at_least_ns\":5000000},"
			     "{\"missing\":\"ended-inside\",\"intervals\":1,\"at_least_ns\":10000000},"
			     "{\"missing\":\"lost-end\",\"intervals\":1,\"at_least_ns\":0}]},"
			     "\"causes\":[{\"cause\":\"sleeping\",\"total\":58000000,\"intervals\":3,"
			     "\"sites\":[{\"syscall\":null,\"total\":50000000,\"intervals\":2,"
			     "\"functions\":[{\"name\":\"nanosleep\",\"module\":\"libc.so.6\"");
	expect_in(text, "{\"syscall\":null,\"total\":8000000,\"intervals\":1,"
		  "\"functions\":[{\"name\":\"futex_wait\",");
	expect_in(text, "\"top\":{\"source\":\"intervals\",\"unit\":\"ns\",\"by\":\"function\","
		  "\"look\":\"mixed\",\"intervals\":3,\"total\":58000000,\"capture_total\":103000000,"
		  "\"functions\":[");
	expect_in(text, "},{\"cause\":\"blocked\",\"total\":40000000,\"intervals\":1,\"sites\":[{");
	expect_in(text, "\"threads\":[{\"pid\":10,\"tid\":10,\"name\":\"main\",\"total\":55000000,"
		  "\"intervals\":3,\"incomplete\":1,\"causes\":{\"unknown\":0,\"preempted\":5000000,"
		  "\"sleeping\":50000000,\"blocked\":0}},{\"pid\":10,\"tid\":11,");
	assert_string_equal(text + strlen(text) - 5, "}}]}\n");
	free(text);
	free(t);
}

/* ---- wall ---- */

static void test_wall_sums(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_WALL);
	struct ms_wall w;
	const struct ms_wall_thread *m, *r;

	(void)state;
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_int_equal(w.n_threads, 2);
	m = &w.threads[0];
	r = &w.threads[1];
	/* main: from 10 (its first interval) to 85 (the lost end's start) */
	assert_int_equal(m->first, T0 + 10 * MS_);
	assert_int_equal(m->last, T0 + 85 * MS_);
	assert_true(m->on_known);
	assert_int_equal(m->on_cpu, 13 * MS_);
	assert_int_equal(m->samples, 13);
	assert_int_equal(m->off_cpu, 55 * MS_);
	assert_int_equal(m->cause_ns[MS_CAUSE_SLEEPING], 50 * MS_);
	/* [39, 40), [45, 50), [84, 85) */
	assert_int_equal(m->unaccounted, 7 * MS_);
	assert_int_equal(m->excess, 0);
	assert_int_equal(m->incomplete, 1);
	assert_int_equal(m->incomplete_known, 0);
	/* reader: the whole recording, as it began and ended off CPU */
	assert_int_equal(r->first, T0);
	assert_int_equal(r->last, T0 + 100 * MS_);
	assert_int_equal(r->on_cpu, 19 * MS_);
	assert_int_equal(r->off_cpu, 48 * MS_);
	assert_int_equal(r->unaccounted, 33 * MS_);
	assert_int_equal(r->incomplete, 2);
	assert_int_equal(r->incomplete_known, 15 * MS_);
	/* each sums up: on + off + unaccounted = span */
	assert_int_equal(m->on_cpu + m->off_cpu + m->unaccounted, m->last - m->first);
	assert_int_equal(r->on_cpu + r->off_cpu + r->unaccounted, r->last - r->first);
	ms_wall_release(&w);

	/* --time [20, 40): clipped spans and intervals */
	assert_int_equal(ms_query_parse_time(&q, "20ms..40ms"), 0);
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_int_equal(w.n_threads, 2);
	assert_int_equal(w.threads[0].first, T0 + 20 * MS_);
	assert_int_equal(w.threads[0].last, T0 + 39 * MS_);
	assert_int_equal(w.threads[0].off_cpu, 10 * MS_);
	assert_int_equal(w.threads[0].on_cpu, 9 * MS_);
	assert_int_equal(w.threads[1].off_cpu, 20 * MS_);
	assert_int_equal(w.threads[1].incomplete, 0);
	ms_wall_release(&w);
	/* a sample stands for the CPU time before it: main's at 31 ms began at 30 ms */
	assert_int_equal(ms_query_parse_time(&q, "30500us..39ms"), 0);
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_int_equal(w.threads[0].first, T0 + 30500000);
	assert_int_equal(w.threads[0].last, T0 + 38 * MS_);
	assert_int_equal(w.threads[0].on_cpu, 8 * MS_);
	ms_wall_release(&w);
	/* --tid: one thread */
	q = query(MS_VIEW_WALL);
	assert_int_equal(ms_query_add_tids(&q, "11"), 0);
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_int_equal(w.n_threads, 1);
	assert_int_equal(w.threads[0].thread, 1);
	ms_wall_release(&w);
	free(t);
}

/* Sampling estimates past the span are said, never taken off another part. */
static void test_wall_excess_and_unknown_on_cpu(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_WALL);
	struct ms_wall w;
	const char *info_key;
	char *text;
	uint32_t i;

	(void)state;
	for (i = 0; i < t->cap.n_samples; i++)
		if (t->samples[i].thread == 0)
			t->samples[i].period = 3 * MS_;	/* 39 ms in a span that holds 20 */
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_int_equal(w.threads[0].on_cpu, 39 * MS_);
	assert_int_equal(w.threads[0].unaccounted, 0);
	/* span 75 (from 10), on 39 + off 55 = 94 */
	assert_int_equal(w.threads[0].excess, 19 * MS_);
	ms_wall_release(&w);
	text = view(&t->cap, &q, false);
	expect_in(text, "  unaccounted           0 ns    0.0%  neither sampled nor in a complete interval\n"
		  "  over             19.000 ms  on and off CPU add up to more than the span: the "
		  "samples' periods are an estimate\n");
	free(text);

	/* an event that is not time: on CPU is not known, and JSON says null */
	info_key = "event";
	t->cap.info = (struct ms_cap_info[]){ { .key = str(t, info_key), .value_text = str(t, "cycles") } };
	t->cap.n_info = 1;
	assert_int_equal(ms_wall_compute(&w, &t->cap, &q), 0);
	assert_false(w.threads[0].on_known);
	ms_wall_release(&w);
	text = view(&t->cap, &q, true);
	expect_in(text, "\"on_cpu\":null");
	free(text);
	text = view(&t->cap, &q, false);
	expect_in(text, "  on CPU           not known          13 samples, whose periods are not CPU time\n");
	free(text);
	free(t);
}

static void test_wall_text_json(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_WALL);
	char *text;

	(void)state;
	text = view(&t->cap, &q, false);
	expect_in(text, "wall-clock time per thread, in ns of wall-clock time: on CPU from the CPU "
		  "samples' periods, off CPU from complete off-CPU intervals\n");
	expect_in(text, "\n10 main (pid 10): 75.000 ms, from 10.000 ms to 85.000 ms\n"
		  "  on CPU           13.000 ms   17.3%  from 13 samples\n"
		  "  off CPU          55.000 ms   73.3%  in 3 complete intervals\n"
		  "    preempted       5.000 ms    6.7%\n"
		  "    sleeping       50.000 ms   66.7%\n"
		  "  unaccounted       7.000 ms    9.3%  neither sampled nor in a complete interval\n"
		  "  incomplete               1  interval with an end missing, not counted above\n");
	expect_in(text, "  incomplete               2  intervals with an end missing, not counted "
		  "above (at least 15.000 ms of it known)\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{\"source\":\"cpu-sampling+intervals\",\"unit\":\"ns\",\"threads\":["
		"{\"pid\":10,\"tid\":10,\"name\":\"main\",\"start\":10000000,\"end\":85000000,"
		"\"wall\":75000000,\"on_cpu\":13000000,\"samples\":13,\"off_cpu\":55000000,"
		"\"intervals\":3,\"causes\":{\"unknown\":0,\"preempted\":5000000,\"sleeping\":50000000,"
		"\"blocked\":0},\"unaccounted\":7000000,\"excess\":0,\"incomplete\":1,"
		"\"incomplete_at_least\":0},"
		"{\"pid\":10,\"tid\":11,\"name\":\"reader\",\"start\":0,\"end\":100000000,"
		"\"wall\":100000000,\"on_cpu\":19000000,\"samples\":19,\"off_cpu\":48000000,"
		"\"intervals\":2,\"causes\":{\"unknown\":0,\"preempted\":0,\"sleeping\":8000000,"
		"\"blocked\":40000000},\"unaccounted\":33000000,\"excess\":0,\"incomplete\":2,"
		"\"incomplete_at_least\":15000000}]}\n");
	free(text);
	free(t);
}

/* ---- timeline ---- */

static void test_timeline_lanes(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	(void)state;
	q.buckets = 10;
	text = view(&t->cap, &q, true);
	expect_in(text, "\"start\":0,\"end\":100000000,\"bucket_ns\":10000000,");
	expect_in(text, ",\"off_cpu\":{\"source\":\"intervals\",\"unit\":\"ns\",\"lanes\":["
		  "{\"pid\":10,\"tid\":10,\"name\":\"main\",\"total\":55000000,\"incomplete\":1,"
		  "\"buckets\":[0,10000000,10000000,0,5000000,10000000,10000000,10000000,0,0],"
		  "\"causes\":[null,\"sleeping\",\"sleeping\",null,\"preempted\",\"sleeping\","
		  "\"sleeping\",\"sleeping\",null,null],"
		  "\"incomplete_buckets\":[0,0,0,0,0,0,0,0,1,0]},"
		  "{\"pid\":10,\"tid\":11,\"name\":\"reader\",\"total\":48000000,\"incomplete\":2,"
		  "\"buckets\":[0,0,10000000,10000000,10000000,10000000,8000000,0,0,0],"
		  "\"causes\":[null,null,\"blocked\",\"blocked\",\"blocked\",\"blocked\",\"sleeping\","
		  "null,null,null],"
		  "\"incomplete_buckets\":[1,0,0,0,0,0,0,0,0,1]}]}}\n");
	free(text);
	text = view(&t->cap, &q, false);
	/* the lost end's one known time, 85 ms: ~ */
	expect_in(text, "\n10 main                 | ██ ▄███~ | 55.000 ms\n"
		  "  cause                 | SS PSSS  | 1 incomplete\n");
	/* the began-inside bucket and the ended-inside one: ~, no time */
	expect_in(text, "\n11 reader               |~ ████▇  ~| 48.000 ms\n"
		  "  cause                 |  BBBBS   | 2 incomplete\n");
	free(text);
	/* --cause and --time narrow the off-CPU lanes */
	assert_int_equal(ms_query_add_causes(&q, "blocked"), 0);
	assert_int_equal(ms_query_parse_time(&q, "20ms..60ms"), 0);
	q.buckets = 4;
	text = view(&t->cap, &q, true);
	expect_in(text, "\"lanes\":[{\"pid\":10,\"tid\":11,\"name\":\"reader\",\"total\":40000000,"
		  "\"incomplete\":0,\"buckets\":[10000000,10000000,10000000,10000000],");
	free(text);
	/* a bucket partly off CPU: its share, on one scale for every lane */
	q = query(MS_VIEW_TIMELINE);
	q.buckets = 5;		/* 20 ms each: main's [40, 45) is a quarter of [40, 60) with [50, 60) */
	text = view(&t->cap, &q, true);
	expect_in(text, "\"buckets\":[10000000,10000000,15000000,20000000,0]");
	/* [40, 60): preempted 5 ms, sleeping 10 ms: the cause of most of it */
	expect_in(text, "\"causes\":[\"sleeping\",\"sleeping\",\"sleeping\",\"sleeping\",null]");
	free(text);
	free(t);
}

static void test_timeline_without_off_cpu(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	(void)state;
	t->cap.flags = 0;
	t->cap.n_intervals = 0;
	t->cap.n_evidence = 0;
	q.buckets = 10;
	text = view(&t->cap, &q, true);
	expect_in(text, ",\"off_cpu\":null}\n");
	free(text);
	text = view(&t->cap, &q, false);
	assert_null(strstr(text, "off CPU"));
	free(text);
	free(t);
}

/* ---- summary and problems ---- */

static void test_summary(void **state)
{
	struct tcap *t = offcpu_capture();
	char *text;

	(void)state;
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	expect_in(text, "\noff cpu:     103 ms in 5 complete intervals (preempted 5.0 ms, sleeping 58.0 ms, "
		  "blocked 40.0 ms); 3 incomplete, in no total (began-inside 1, ended-inside 1, "
		  "lost-end 1)\n");
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	expect_in(text, ",\"off_cpu\":{\"source\":\"intervals\",\"unit\":\"ns\",\"total\":103000000,"
		  "\"intervals\":5,\"causes\":{\"unknown\":0,\"preempted\":5000000,\"sleeping\":58000000,"
		  "\"blocked\":40000000},\"incomplete\":3,\"missing\":{\"began-inside\":1,"
		  "\"ended-inside\":1,\"lost-start\":0,\"lost-end\":1}},\"budget\":");
	free(text);
	/* not recorded: no line, and null */
	t->cap.flags = 0;
	t->cap.n_intervals = 0;
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_null(strstr(text, "off cpu"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	expect_in(text, ",\"off_cpu\":null,");
	free(text);
	free(t);
}

static void test_problems(void **state)
{
	struct tcap *t = offcpu_capture();
	char *text;

	(void)state;
	t->problems[0] = (struct ms_cap_problem){ str(t, "ms-capture"), str(t, "switch-in-unpaired"),
						   str(t, "a switch-in with no switch-out before it"), 4 };
	t->cap.n_problems = 1;
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, false));
	expect_in(text, "\noff-CPU intervals: 3 of 8 incomplete: an end is missing, so they add no "
		  "time to any view\n"
		  "     count  missing       what it means\n"
		  "         1  began-inside  off CPU when the recording began (at least 5.000 ms "
		  "inside the recording)\n"
		  "         1  ended-inside  still off CPU when the recording ended (at least "
		  "10.000 ms inside the recording)\n"
		  "         1  lost-end      records were lost while it was off CPU: its end is not "
		  "known\n"
		  "\nrecording problems: 1 kind the stages counted\n"
		  "  ms-capture  switch-in-unpaired  4  a switch-in with no switch-out before it\n");
	free(text);
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, true));
	expect_in(text, ",\"off_cpu\":{\"intervals\":8,\"incomplete\":{\"intervals\":3,\"reasons\":["
		  "{\"missing\":\"began-inside\",\"intervals\":1,\"at_least_ns\":5000000},");
	expect_in(text, "]}},\"recording\":[{\"stage\":\"ms-capture\",\"code\":\"switch-in-unpaired\","
		  "\"count\":4,\"detail\":\"a switch-in with no switch-out before it\"}]}\n");
	free(text);
	free(t);
}

/* ---- the query's checks ---- */

static void test_refused_without_off_cpu(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	t->cap.flags = 0;
	t->cap.n_intervals = 0;
	q.unit = MS_UNIT_OFF_CPU;
	EXPECT_ERROR(ms_query_check_capture(&q, &t->cap, "p.msc"),
		     "'p.msc' has no off-CPU intervals: record it with microscope record --off-cpu\n");
	q = query(MS_VIEW_OFF_CPU);
	EXPECT_ERROR(ms_query_check_capture(&q, &t->cap, "p.msc"), "record --off-cpu");
	q = query(MS_VIEW_WALL);
	EXPECT_ERROR(ms_query_check_capture(&q, &t->cap, "p.msc"), "record --off-cpu");
	/* the timeline and the CPU views still answer */
	q = query(MS_VIEW_TIMELINE);
	assert_int_equal(ms_query_check_capture(&q, &t->cap, "p.msc"), 0);
	/* the writers refuse too, and write nothing */
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	q = query(MS_VIEW_OFF_CPU);
	EXPECT_ERROR(ms_view_write(VIEW_OUT(false), &t->cap, &q), "record --off-cpu");
	q = query(MS_VIEW_WALL);
	EXPECT_ERROR(ms_view_write(VIEW_OUT(true), &t->cap, &q), "record --off-cpu");
	assert_int_equal(fclose(out), 0);
	assert_string_equal(buf, "");
	free(buf);
	/* with the flag and no interval: nothing was off CPU, which is an answer */
	t->cap.flags = MS_CAPTURE_OFF_CPU;
	q = query(MS_VIEW_OFF_CPU);
	assert_int_equal(ms_query_check_capture(&q, &t->cap, "p.msc"), 0);
	buf = view(&t->cap, &q, false);
	expect_in(buf, "off-CPU time: 0 ns in 0 complete intervals");
	expect_in(buf, "(no complete interval selected)\n");
	free(buf);
	free(t);
}

static void test_query_checks(void **state)
{
	struct ms_query q;

	(void)state;
	q = query(MS_VIEW_TOP);
	q.causes = 1u << MS_CAUSE_SLEEPING;
	EXPECT_ERROR(ms_query_check(&q), "--cause selects off-CPU intervals: use it with --unit "
		     "off-cpu, the off-cpu view or the timeline\n");
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_query_check(&q), 0);
	q = query(MS_VIEW_TIMELINE);
	q.causes = 1u << MS_CAUSE_SLEEPING;
	assert_int_equal(ms_query_check(&q), 0);
	q.unit = MS_UNIT_OFF_CPU;
	EXPECT_ERROR(ms_query_check(&q), "the timeline draws off-CPU lanes of its own");
	q = query(MS_VIEW_WALL);
	q.causes = 1u << MS_CAUSE_SLEEPING;
	EXPECT_ERROR(ms_query_check(&q), "the wall view joins every cause");
	q = query(MS_VIEW_OFF_CPU);
	q.unit = MS_UNIT_CPU_TIME;
	EXPECT_ERROR(ms_query_check(&q), "the off-cpu view states its own units");
	q = query(MS_VIEW_OFF_CPU);
	q.causes = 1u << MS_CAUSE_BLOCKED;
	assert_int_equal(ms_query_check(&q), 0);
	assert_string_equal(ms_view_name(MS_VIEW_OFF_CPU), "off-cpu");
	assert_string_equal(ms_view_name(MS_VIEW_WALL), "wall");
	assert_string_equal(ms_unit_source(MS_UNIT_OFF_CPU), "intervals");
	assert_string_equal(ms_unit_source(MS_UNIT_CPU_TIME), "cpu-sampling");
}

/* The helpers over intervals, including rows a loader would refuse. */
static void test_interval_helpers(void **state)
{
	struct tcap *t = offcpu_capture();
	struct ms_cap_interval iv = t->intervals[1];
	uint64_t from, to;

	(void)state;
	assert_int_equal(ms_interval_cause(&t->cap, &iv), MS_CAUSE_SLEEPING);
	iv.evidence = 99;
	assert_int_equal(ms_interval_cause(&t->cap, &iv), MS_CAUSE_UNKNOWN);
	t->evidence[EV_BLOCKED].cause = 77;
	iv.evidence = EV_BLOCKED;
	assert_int_equal(ms_interval_cause(&t->cap, &iv), MS_CAUSE_UNKNOWN);
	assert_string_equal(ms_interval_missing_name(MS_INTERVAL_LOST_START), "lost-start");
	assert_string_equal(ms_interval_missing_name(99), "unknown");
	assert_int_equal(ms_interval_clipped(&iv, 0, UINT64_MAX), 20 * MS_);
	assert_int_equal(ms_interval_clipped(&iv, T0 + 30 * MS_, UINT64_MAX), 0);
	assert_int_equal(ms_interval_clipped(&iv, T0 + 29 * MS_, T0 + 29 * MS_), 0);
	iv.missing = MS_INTERVAL_LOST_START;
	assert_int_equal(ms_interval_clipped(&iv, 0, UINT64_MAX), 0);
	iv.start = 0;
	ms_interval_known(&t->cap, &iv, &from, &to);
	assert_int_equal(from, T0 + 30 * MS_);
	assert_int_equal(to, T0 + 30 * MS_);
	/* ended inside a recording whose end the capture does not know: no known time */
	iv = t->intervals[7];
	t->cap.end_time = 0;
	ms_interval_known(&t->cap, &iv, &from, &to);
	assert_int_equal(from, to);
	/* a began-inside whose end is before the recording's start (bad clocks): no time */
	iv = t->intervals[0];
	iv.end = T0 - 1;
	ms_interval_known(&t->cap, &iv, &from, &to);
	assert_int_equal(from, to);
	free(t);
}

/*
 * Rows a loader refuses (a thread or stack past its table, a missing
 * reason past the known ones) are not read past their tables by any view.
 */
static void test_rows_past_tables(void **state)
{
	struct tcap *t = offcpu_capture();
	int v, json;

	(void)state;
	t->intervals[2].thread = 99;		/* [20, 60) blocked */
	t->intervals[3].stack = 999;		/* [40, 45) preempted */
	t->intervals[6].missing = 42;		/* the lost end */
	for (json = 0; json <= 1; json++)
		for (v = 0; v < MS_VIEW_COUNT; v++) {
			struct ms_query q = query((enum ms_view)v);
			char *x;

			if (v == MS_VIEW_DIFF)
				continue;
			q.function = "main";
			q.buckets = 5;
			if (v != MS_VIEW_TIMELINE && v != MS_VIEW_OFF_CPU && v != MS_VIEW_WALL)
				q.unit = MS_UNIT_OFF_CPU;
			x = view(&t->cap, &q, json);
			assert_true(*x);
			free(x);
		}
	free(t);
}

/* Every view of the off-CPU capture, text and JSON, under several queries: the same bytes twice. */
/* The node of a stack of n frames (outermost first), made as needed. */
static uint32_t chain(struct tcap *t, uint32_t n, const uint32_t *frames)
{
	uint32_t parent = MS_NONE;

	for (uint32_t d = 0; d < n; d++) {
		uint32_t i;

		for (i = 0; i < t->cap.n_stacks; i++)
			if (t->stacks[i].parent == parent && t->stacks[i].frame == frames[d])
				break;
		if (i == t->cap.n_stacks) {
			assert_true(i < 16);
			t->stacks[i] = (struct ms_cap_stack){ parent, frames[d], d + 1 };
			t->cap.n_stacks++;
		}
		parent = i;
	}
	return parent;
}

/*
 * Wait sites: the system call (the outermost kernel frame named like its
 * entry), the innermost user function and where its module was called
 * from; ordered by time, summed per (cause, call, functions).
 */
static void test_wait_sites(void **state)
{
	struct tcap *t = calloc(1, sizeof(*t));
	uint32_t app, libc, kern, f_main, f_lock, f_mlock, f_wait, f_entry, f_sys, f_helper,
		 f_sched, f_read, f_kread, f_comp, f_irq, s_futex, s_read, s_pre;
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_select sel;
	struct ms_wait_site *w;
	uint32_t n;

	(void)state;
	tcap_init(t);
	t->modules[0] = (struct ms_cap_module){ .path = str(t, "/usr/bin/app"), .kind = MS_MODULE_FILE };
	t->modules[1] = (struct ms_cap_module){ .path = str(t, "/lib/libc.so.6"), .kind = MS_MODULE_FILE };
	t->modules[2] = (struct ms_cap_module){ .path = str(t, "[kernel.kallsyms]"),
						.kind = MS_MODULE_KERNEL };
	t->cap.n_modules = 3;
	app = 0, libc = 1, kern = 2;
	f_main = frame(t, app, 0x1000, "main");
	f_lock = frame(t, app, 0x1100, "lock_it");
	f_mlock = frame(t, libc, 0x2000, "pthread_mutex_lock");
	f_wait = frame(t, libc, 0x2100, "lll_lock_wait");
	f_read = frame(t, libc, 0x2200, "read");
	f_comp = frame(t, app, 0x1200, "compute");
	f_entry = frame(t, kern, 0xffff0000, "entry_SYSCALL_64");
	f_sys = frame(t, kern, 0xffff0100, "__x64_sys_futex");
	f_helper = frame(t, kern, 0xffff0200, "__se_sys_helper_not_the_call");
	f_kread = frame(t, kern, 0xffff0300, "ksys_read");
	f_irq = frame(t, kern, 0xffff0400, "asm_sysvec_apic_timer_interrupt");
	f_sched = frame(t, kern, 0xffff0500, "__schedule");
	s_futex = chain(t, 7, (uint32_t[]){ f_main, f_lock, f_mlock, f_wait, f_entry, f_sys,
					   f_helper });
	s_futex = chain(t, 8, (uint32_t[]){ f_main, f_lock, f_mlock, f_wait, f_entry, f_sys,
					   f_helper, f_sched });
	s_read = chain(t, 4, (uint32_t[]){ f_main, f_read, f_kread, f_sched });
	s_pre = chain(t, 4, (uint32_t[]){ f_main, f_comp, f_irq, f_sched });
	t->threads[0] = (struct ms_cap_thread){ 10, 10, str(t, "app"), 0, 0 };
	t->cap.n_threads = 1;
	t->evidence[0] = (struct ms_cap_evidence){ MS_CAUSE_PREEMPTED, MS_EVIDENCE_STATE, 0x100, 0 };
	t->evidence[1] = (struct ms_cap_evidence){ MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE, 1, 0 };
	t->cap.n_evidence = 2;
	interval(t, 0, 10, 20, MS_INTERVAL_COMPLETE, 1, s_futex);	/* 10 ms */
	interval(t, 0, 21, 50, MS_INTERVAL_COMPLETE, 1, s_read);	/* 29 ms */
	interval(t, 0, 51, 52, MS_INTERVAL_COMPLETE, 0, s_pre);		/*  1 ms */
	interval(t, 0, 60, 70, MS_INTERVAL_COMPLETE, 1, s_futex);	/* 10 ms */
	interval(t, 0, 80, 0, MS_INTERVAL_ENDED_INSIDE, 1, s_futex);	/* no time */
	q.unit = MS_UNIT_OFF_CPU;
	assert_int_equal(ms_select_build(&sel, &t->cap, &q), 0);
	assert_int_equal(ms_wait_sites(&sel, &w, &n), 0);
	assert_int_equal(n, 3);
	/* read's 29 ms first; its call named by ksys_read; read is called from main */
	assert_int_equal(w[0].ns, 29 * MS_);
	assert_int_equal(w[0].intervals, 1);
	assert_int_equal(w[0].cause, MS_CAUSE_SLEEPING);
	assert_string_equal(t->strings[w[0].syscall], "ksys_read");
	assert_string_equal(sel.keys.keys[w[0].key[0]].label, "read");
	assert_string_equal(sel.keys.keys[w[0].key[1]].label, "main");
	/* the futex wait, twice: the outermost named frame is the call, not a helper inside it;
	   the innermost function, then where libc was called from (lock_it, not pthread_mutex_lock) */
	assert_int_equal(w[1].ns, 20 * MS_);
	assert_int_equal(w[1].intervals, 2);
	assert_string_equal(t->strings[w[1].syscall], "__x64_sys_futex");
	assert_int_equal(ms_wait_syscall_name(t->strings[w[1].syscall]), strlen("__x64_sys_"));
	assert_string_equal(sel.keys.keys[w[1].key[0]].label, "lll_lock_wait");
	assert_string_equal(sel.keys.keys[w[1].key[1]].label, "lock_it");
	/* preempted in user code: no system call; one module: the direct caller */
	assert_int_equal(w[2].cause, MS_CAUSE_PREEMPTED);
	assert_int_equal(w[2].syscall, MS_NONE);
	assert_string_equal(sel.keys.keys[w[2].key[0]].label, "compute");
	assert_string_equal(sel.keys.keys[w[2].key[1]].label, "main");
	free(w);
	ms_select_release(&sel);
	/* --cause narrows them */
	q.causes = 1u << MS_CAUSE_PREEMPTED;
	assert_int_equal(ms_select_build(&sel, &t->cap, &q), 0);
	assert_int_equal(ms_wait_sites(&sel, &w, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(w[0].cause, MS_CAUSE_PREEMPTED);
	free(w);
	ms_select_release(&sel);
	assert_int_equal(ms_wait_syscall_name("schedule"), 0);
	assert_int_equal(ms_wait_syscall_name("__x64_sys_"), 0);
	free(t);
}

static void test_deterministic(void **state)
{
	struct tcap *t = offcpu_capture(), *u = offcpu_capture();
	int v, json, k;

	(void)state;
	for (k = 0; k < 4; k++)
		for (json = 0; json <= 1; json++)
			for (v = 0; v < MS_VIEW_COUNT; v++) {
				struct ms_query q = query((enum ms_view)v);
				char *x, *y;

				/* tasks: snapshots-view-test.c */
				if (v == MS_VIEW_DIFF || v == MS_VIEW_TASKS)
					continue;
				q.function = "main";
				q.buckets = 7;
				if (k >= 1 && v != MS_VIEW_TIMELINE && v != MS_VIEW_OFF_CPU && v != MS_VIEW_WALL)
					q.unit = MS_UNIT_OFF_CPU;
				if (k == 2 && v != MS_VIEW_WALL)
					assert_int_equal(ms_query_add_causes(&q, "sleeping,blocked"), 0);
				if (k == 3)
					assert_int_equal(ms_query_parse_time(&q, "15ms..65ms"), 0);
				if (ms_query_check(&q))
					fail_msg("query %d of view %s refused", k, ms_view_name((enum ms_view)v));
				x = view(&t->cap, &q, json);
				y = view(&u->cap, &q, json);
				assert_string_equal(x, y);
				free(y);
				y = view(&t->cap, &q, json);
				assert_string_equal(x, y);
				free(x);
				free(y);
			}
	free(t);
	free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_weights_by_duration),
		cmocka_unit_test(test_unit_tree_callers),
		cmocka_unit_test(test_unit_no_stack),
		cmocka_unit_test(test_time_clipped),
		cmocka_unit_test(test_cause_filter),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_off_cpu_view_counts),
		cmocka_unit_test(test_off_cpu_view_text),
		cmocka_unit_test(test_off_cpu_view_json),
		cmocka_unit_test(test_wall_sums),
		cmocka_unit_test(test_wall_excess_and_unknown_on_cpu),
		cmocka_unit_test(test_wall_text_json),
		cmocka_unit_test(test_timeline_lanes),
		cmocka_unit_test(test_timeline_without_off_cpu),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_problems),
		cmocka_unit_test(test_refused_without_off_cpu),
		cmocka_unit_test(test_query_checks),
		cmocka_unit_test(test_interval_helpers),
		cmocka_unit_test(test_rows_past_tables),
		cmocka_unit_test(test_wait_sites),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
