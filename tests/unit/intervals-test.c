/*
 * Unit tests of the off-CPU pairing (libcommon/capture/intervals.h): each
 * rule on a hand-made sequence of switch-outs, switch records, forks,
 * exits and losses, and what it ends (intervals, problems).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "capture/intervals.h"

#define MAX_OUT 4096

/* What the pairing ended, in the order it ended it. */
static struct ms_pairing_interval out[MAX_OUT];
static unsigned n_out;
static unsigned problems[MS_PAIRING_PROBLEM_COUNT];
static uint64_t problem_time[MS_PAIRING_PROBLEM_COUNT];

static int on_interval(void *ctx, const struct ms_pairing_interval *iv)
{
	(void)ctx;
	assert_true(n_out < MAX_OUT);
	out[n_out++] = *iv;
	return 0;
}

static void on_problem(void *ctx, enum ms_pairing_problem p, uint32_t pid, uint32_t tid,
		       uint64_t time)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	assert_true(p < MS_PAIRING_PROBLEM_COUNT);
	problems[p]++;
	problem_time[p] = time;
}

static struct ms_pairing *start(void)
{
	struct ms_pairing_sink sink = { NULL, on_interval, on_problem };
	struct ms_pairing *p = ms_pairing_new(&sink);

	assert_non_null(p);
	n_out = 0;
	memset(problems, 0, sizeof(problems));
	memset(problem_time, 0, sizeof(problem_time));
	return p;
}

#define PID 100
#define STACK 7		/* the caller's stack id: opaque to the pairing */

/* A sched_switch sample of tid at time: prev_state S (sleeping). */
static void off_cpu(struct ms_pairing *p, uint32_t tid, uint64_t time)
{
	struct ms_off_cpu o = { PID, tid, time, 1, 1, MS_CAUSE_SLEEPING, 0 };

	assert_int_equal(ms_pairing_off_cpu(p, &o, STACK, MS_END_OUTERMOST), 0);
}

static void off_cpu_state(struct ms_pairing *p, uint32_t tid, uint64_t time, uint64_t state,
			  uint32_t cause)
{
	struct ms_off_cpu o = { PID, tid, time, 1, state, cause, 0 };

	assert_int_equal(ms_pairing_off_cpu(p, &o, STACK, MS_END_OUTERMOST), 0);
}

static void sw(struct ms_pairing *p, uint32_t tid, uint64_t time, bool is_out, bool preempt)
{
	struct ms_switch s = { PID, tid, time, 1, is_out, preempt };

	assert_int_equal(ms_pairing_switch(p, &s), 0);
}

static void sw_out(struct ms_pairing *p, uint32_t tid, uint64_t time) { sw(p, tid, time, true, false); }
static void sw_in(struct ms_pairing *p, uint32_t tid, uint64_t time) { sw(p, tid, time, false, false); }

static void lost(struct ms_pairing *p, uint64_t time)
{
	assert_int_equal(ms_pairing_lost(p, time), 0);
}

static void finish(struct ms_pairing *p)
{
	assert_int_equal(ms_pairing_end(p), 0);
	ms_pairing_free(p);
}

/* Interval i is of tid, from start to end, with missing. */
static void assert_interval(unsigned i, uint32_t tid, uint64_t s, uint64_t e, uint32_t missing)
{
	if (i >= n_out)
		fail_msg("interval %u expected, %u ended", i, n_out);
	assert_int_equal(out[i].pid, PID);
	assert_int_equal(out[i].tid, tid);
	assert_int_equal(out[i].start, s);
	assert_int_equal(out[i].end, e);
	assert_int_equal(out[i].missing, missing);
}

static void assert_evidence(unsigned i, uint32_t cause, uint32_t sources, uint64_t state,
			    uint32_t preempt)
{
	assert_int_equal(out[i].evidence.cause, cause);
	assert_int_equal(out[i].evidence.sources, sources);
	assert_int_equal(out[i].evidence.state, state);
	assert_int_equal(out[i].evidence.preempt, preempt);
}

static void assert_no_problems(void)
{
	for (unsigned i = 0; i < MS_PAIRING_PROBLEM_COUNT; i++)
		if (problems[i])
			fail_msg("problem %s counted %u times", ms_pairing_problem_code(i), problems[i]);
}

/* sched_switch sample, then its switch record, then the switch-in: one complete interval. */
static void test_complete(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 1000);
	sw_out(p, 1, 1300);
	assert_int_equal(n_out, 0);
	sw_in(p, 1, 5000);
	assert_int_equal(n_out, 1);
	assert_interval(0, 1, 1000, 5000, MS_INTERVAL_COMPLETE);
	assert_int_equal(out[0].cpu, 1);
	assert_int_equal(out[0].stack, STACK);
	assert_int_equal(out[0].stack_end, MS_END_OUTERMOST);
	assert_evidence(0, MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 1, 0);
	finish(p);
	assert_int_equal(n_out, 1);
	assert_no_problems();
}

/* The sched_switch sample lost: the switch record opens it, no stack. */
static void test_switch_only(void **state)
{
	struct ms_pairing *p = start();

	sw(p, 1, 1000, true, true);
	sw_in(p, 1, 2000);
	sw(p, 1, 3000, true, false);
	sw_in(p, 1, 3500);
	finish(p);
	assert_int_equal(n_out, 2);
	assert_interval(0, 1, 1000, 2000, MS_INTERVAL_COMPLETE);
	assert_int_equal(out[0].stack, MS_NONE);
	assert_int_equal(out[0].stack_end, MS_END_UNKNOWN);
	/* the preempt flag alone says preempted ... */
	assert_evidence(0, MS_CAUSE_PREEMPTED, MS_EVIDENCE_SWITCH, 0, 1);
	/* ... and its absence says nothing */
	assert_interval(1, 1, 3000, 3500, MS_INTERVAL_COMPLETE);
	assert_evidence(1, MS_CAUSE_UNKNOWN, MS_EVIDENCE_SWITCH, 0, 0);
	assert_no_problems();
}

/* The cause is the sched_switch record's, whatever the switch flag says. */
static void test_cause_from_state(void **state)
{
	struct ms_pairing *p = start();

	off_cpu_state(p, 1, 100, 2, MS_CAUSE_BLOCKED);
	sw(p, 1, 101, true, true);
	sw_in(p, 1, 200);
	off_cpu_state(p, 1, 300, 0x100, MS_CAUSE_PREEMPTED);
	sw_in(p, 1, 400);
	/* a cause from a later stream version: unknown */
	off_cpu_state(p, 1, 500, 0x40, 77);
	sw_in(p, 1, 600);
	finish(p);
	assert_int_equal(n_out, 3);
	assert_evidence(0, MS_CAUSE_BLOCKED, MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 2, 1);
	assert_evidence(1, MS_CAUSE_PREEMPTED, MS_EVIDENCE_STATE, 0x100, 0);
	assert_evidence(2, MS_CAUSE_UNKNOWN, MS_EVIDENCE_STATE, 0x40, 0);
	assert_no_problems();
}

/* A second switch-out sample before any switch-in: the first never saw its end. */
static void test_off_cpu_twice(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 100);
	off_cpu(p, 1, 200);
	assert_int_equal(n_out, 1);
	assert_interval(0, 1, 100, 0, MS_INTERVAL_LOST_END);
	sw_in(p, 1, 300);
	finish(p);
	assert_int_equal(n_out, 2);
	assert_interval(1, 1, 200, 300, MS_INTERVAL_COMPLETE);
	assert_evidence(1, MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE, 1, 0);
	assert_no_problems();
}

/* Two switch-out records, no switch-in between: the first ends lost, the second opens. */
static void test_double_out(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 100);
	sw_out(p, 1, 101);
	sw(p, 1, 200, true, true);
	assert_int_equal(n_out, 1);
	assert_interval(0, 1, 100, 0, MS_INTERVAL_LOST_END);
	assert_evidence(0, MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 1, 0);
	sw_in(p, 1, 300);
	finish(p);
	assert_int_equal(n_out, 2);
	assert_interval(1, 1, 200, 300, MS_INTERVAL_COMPLETE);
	assert_int_equal(out[1].stack, MS_NONE);
	assert_evidence(1, MS_CAUSE_PREEMPTED, MS_EVIDENCE_SWITCH, 0, 1);
	assert_no_problems();
}

/* A thread forked in the recording: its first switch-in is its first run. */
static void test_born_by_fork(void **state)
{
	struct ms_pairing *p = start();

	assert_int_equal(ms_pairing_fork(p, PID, 2), 0);
	sw_in(p, 2, 50);
	assert_int_equal(n_out, 0);
	off_cpu(p, 2, 100);
	sw_out(p, 2, 101);
	sw_in(p, 2, 200);
	finish(p);
	assert_int_equal(n_out, 1);
	assert_interval(0, 2, 100, 200, MS_INTERVAL_COMPLETE);
	assert_no_problems();
}

/* Attached: a thread whose first event is a switch-in was off CPU when the recording began. */
static void test_attached(void **state)
{
	struct ms_pairing *p = start();

	sw_in(p, 3, 50);
	finish(p);
	assert_int_equal(n_out, 1);
	assert_interval(0, 3, 0, 50, MS_INTERVAL_BEGAN_INSIDE);
	assert_int_equal(out[0].cpu, MS_NONE);
	assert_int_equal(out[0].stack, MS_NONE);
	assert_int_equal(out[0].stack_end, MS_END_UNKNOWN);
	assert_evidence(0, MS_CAUSE_UNKNOWN, 0, 0, 0);
	assert_no_problems();
}

/* Two switch-ins, no switch-out between, nothing lost: a problem, no interval. */
static void test_double_in(void **state)
{
	struct ms_pairing *p = start();

	sw_in(p, 3, 50);
	sw_in(p, 3, 80);
	finish(p);
	assert_int_equal(n_out, 1);
	assert_interval(0, 3, 0, 50, MS_INTERVAL_BEGAN_INSIDE);
	assert_int_equal(problems[MS_PAIRING_SWITCH_IN_UNPAIRED], 1);
	assert_int_equal(problem_time[MS_PAIRING_SWITCH_IN_UNPAIRED], 80);
	assert_string_equal(ms_pairing_problem_code(MS_PAIRING_SWITCH_IN_UNPAIRED),
			    "switch-in-unpaired");
}

/* A loss while it ran: the next switch-in without a switch-out has lost its start. */
static void test_lost_while_running(void **state)
{
	struct ms_pairing *p = start();

	assert_int_equal(ms_pairing_fork(p, PID, 4), 0);
	sw_in(p, 4, 10);
	lost(p, 60);
	assert_int_equal(n_out, 0);
	sw_in(p, 4, 80);
	assert_int_equal(n_out, 1);
	assert_interval(0, 4, 0, 80, MS_INTERVAL_LOST_START);
	assert_int_equal(out[0].cpu, MS_NONE);
	assert_evidence(0, MS_CAUSE_UNKNOWN, 0, 0, 0);
	/* Running since, a loss before: a double switch-in is a lost start too. */
	sw_in(p, 4, 90);
	assert_int_equal(n_out, 2);
	assert_interval(1, 4, 0, 90, MS_INTERVAL_LOST_START);
	finish(p);
	assert_no_problems();
}

/*
 * A loss while off CPU: an interval that started before it ends lost at
 * once, and its switch-in, when it comes, makes none; one that started
 * after stays open.
 */
static void test_lost_while_off(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 100);
	sw_out(p, 1, 101);
	off_cpu(p, 2, 200);
	lost(p, 150);
	assert_int_equal(n_out, 1);
	assert_interval(0, 1, 100, 0, MS_INTERVAL_LOST_END);
	assert_evidence(0, MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 1, 0);
	sw_in(p, 1, 300);
	sw_in(p, 2, 310);
	assert_int_equal(n_out, 2);
	assert_interval(1, 2, 200, 310, MS_INTERVAL_COMPLETE);
	/* After the uncertain start, a new switch-out pairs again. */
	off_cpu(p, 1, 400);
	sw_in(p, 1, 500);
	finish(p);
	assert_int_equal(n_out, 3);
	assert_interval(2, 1, 400, 500, MS_INTERVAL_COMPLETE);
	assert_no_problems();
}

/* A loss of unknown time: every open interval ends lost, every running thread is uncertain. */
static void test_lost_time_zero(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 100);
	off_cpu(p, 2, 900);
	assert_int_equal(ms_pairing_fork(p, PID, 3), 0);
	sw_in(p, 3, 950);
	lost(p, 0);
	assert_int_equal(n_out, 2);
	assert_interval(0, 1, 100, 0, MS_INTERVAL_LOST_END);
	assert_interval(1, 2, 900, 0, MS_INTERVAL_LOST_END);
	sw_in(p, 3, 990);
	finish(p);
	assert_int_equal(n_out, 3);
	assert_interval(2, 3, 0, 990, MS_INTERVAL_LOST_START);
	assert_no_problems();
}

/* A thread exits running: an open interval lost its switch-in. */
static void test_exit_while_off(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 5, 100);
	assert_int_equal(ms_pairing_exit(p, PID, 5), 0);
	assert_int_equal(n_out, 1);
	assert_interval(0, 5, 100, 0, MS_INTERVAL_LOST_END);
	/* gone, nothing lost: a switch-in is unpaired */
	sw_in(p, 5, 200);
	finish(p);
	assert_int_equal(n_out, 1);
	assert_int_equal(problems[MS_PAIRING_SWITCH_IN_UNPAIRED], 1);
}

/* The recording ends while a thread sleeps: ended inside, no end made up. */
static void test_end_of_stream(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 100);
	sw_out(p, 2, 150);
	assert_int_equal(ms_pairing_fork(p, PID, 3), 0);
	finish(p);
	assert_int_equal(n_out, 2);
	/* earliest start first */
	assert_interval(0, 1, 100, 0, MS_INTERVAL_ENDED_INSIDE);
	assert_interval(1, 2, 150, 0, MS_INTERVAL_ENDED_INSIDE);
	assert_no_problems();
}

/* Hostile times: an end before the start, and a time of 0 where one is needed. */
static void test_impossible_times(void **state)
{
	struct ms_pairing *p = start();

	off_cpu(p, 1, 500);
	sw_in(p, 1, 400);
	assert_int_equal(n_out, 0);
	assert_int_equal(problems[MS_PAIRING_ENDS_BEFORE_START], 1);
	assert_int_equal(problem_time[MS_PAIRING_ENDS_BEFORE_START], 400);
	sw_in(p, 9, 0);		/* attached, began inside, ended at 0 */
	off_cpu(p, 8, 0);	/* opened at 0, ended inside */
	finish(p);
	assert_int_equal(n_out, 0);
	assert_int_equal(problems[MS_PAIRING_TIME_ZERO], 2);
	assert_string_equal(ms_pairing_problem_code(MS_PAIRING_ENDS_BEFORE_START),
			    "interval-ends-before-start");
	assert_string_equal(ms_pairing_problem_code(MS_PAIRING_TIME_ZERO), "interval-time-zero");
}

/* A thread id forked again after it exited is a new thread: born, not attached. */
static void test_fork_after_exit(void **state)
{
	struct ms_pairing *p = start();

	sw_in(p, 6, 10);			/* attached: began inside */
	assert_int_equal(ms_pairing_exit(p, PID, 6), 0);
	assert_int_equal(ms_pairing_fork(p, PID, 6), 0);
	sw_in(p, 6, 30);			/* its first run: nothing */
	finish(p);
	assert_int_equal(n_out, 1);
	assert_interval(0, 6, 0, 10, MS_INTERVAL_BEGAN_INSIDE);
	assert_no_problems();
}

static int cmp_out(const void *x, const void *y)
{
	const struct ms_pairing_interval *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

#define N_THREADS 200

/*
 * Many threads off CPU from scattered starts, a loss in the middle: exactly
 * those that started before it end lost (the heap by start), whatever the
 * order their records came in; the others close when they come back.
 */
static void run_many(const uint32_t *order, struct ms_pairing_interval *got, unsigned *n_got)
{
	struct ms_pairing *p = start();
	uint32_t i;

	for (i = 0; i < N_THREADS; i++)
		off_cpu(p, order[i] + 1, 1000 + (order[i] * 7919u) % 1000);
	lost(p, 1500);
	for (i = 0; i < N_THREADS; i++)
		sw_in(p, order[i] + 1, 3000 + order[i]);
	finish(p);
	assert_no_problems();
	memcpy(got, out, n_out * sizeof(*out));
	*n_got = n_out;
	qsort(got, *n_got, sizeof(*got), cmp_out);
}

static void test_many_threads_reordered(void **state)
{
	static struct ms_pairing_interval a[MAX_OUT], b[MAX_OUT];
	uint32_t fwd[N_THREADS], rev[N_THREADS], i, before = 0, want = 0;
	unsigned na, nb;

	for (i = 0; i < N_THREADS; i++) {
		fwd[i] = i;
		rev[i] = N_THREADS - 1 - i;
	}
	run_many(fwd, a, &na);
	run_many(rev, b, &nb);
	assert_int_equal(na, N_THREADS);
	assert_int_equal(nb, N_THREADS);
	assert_memory_equal(a, b, na * sizeof(*a));
	for (i = 0; i < na; i++) {
		if (a[i].start < 1500) {
			before++;
			assert_int_equal(a[i].missing, MS_INTERVAL_LOST_END);
			assert_int_equal(a[i].end, 0);
		} else {
			assert_int_equal(a[i].missing, MS_INTERVAL_COMPLETE);
			assert_int_equal(a[i].end, 3000 + a[i].tid - 1);
		}
	}
	for (i = 0; i < N_THREADS; i++)
		want += (i * 7919u) % 1000 < 500;
	assert_int_equal(before, want);
	assert_true(want > 50 && want < 150);
}

/* A sink that says stop: the pairing fails and refuses what follows. */
static int refuse(void *ctx, const struct ms_pairing_interval *iv)
{
	(void)ctx;
	(void)iv;
	return -1;
}

static void test_sink_stops(void **state)
{
	struct ms_pairing_sink sink = { NULL, refuse, NULL };
	struct ms_pairing *p = ms_pairing_new(&sink);
	struct ms_switch s = { PID, 1, 100, 0, false, false };

	assert_non_null(p);
	assert_int_equal(ms_pairing_switch(p, &s), -1);
	s.time = 200;
	assert_int_equal(ms_pairing_switch(p, &s), -1);
	assert_int_equal(ms_pairing_end(p), -1);
	ms_pairing_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_switch_only),
		cmocka_unit_test(test_cause_from_state),
		cmocka_unit_test(test_off_cpu_twice),
		cmocka_unit_test(test_double_out),
		cmocka_unit_test(test_born_by_fork),
		cmocka_unit_test(test_attached),
		cmocka_unit_test(test_double_in),
		cmocka_unit_test(test_lost_while_running),
		cmocka_unit_test(test_lost_while_off),
		cmocka_unit_test(test_lost_time_zero),
		cmocka_unit_test(test_exit_while_off),
		cmocka_unit_test(test_end_of_stream),
		cmocka_unit_test(test_impossible_times),
		cmocka_unit_test(test_fork_after_exit),
		cmocka_unit_test(test_many_threads_reordered),
		cmocka_unit_test(test_sink_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
