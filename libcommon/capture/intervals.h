/*
 * Off-CPU pairing: a stream's switch-outs (OFF_CPU, the sched_switch
 * sample unwound), switch records (PERF_RECORD_SWITCH out and in), forks,
 * exits and losses, per thread, into intervals of time off CPU, each with
 * which end is missing and why (capture.h: enum ms_interval_missing). Pure:
 * it reads no clock and no file, so it is tested on hand-made sequences
 * (tests/unit/intervals-test.c); the builder feeds it (builder.c).
 *
 * Per thread, a state: UNSEEN (no event yet), RUNNING, OFF (an open
 * interval: its start, CPU, stack and evidence), UNCERTAIN_OFF (its open
 * interval was given up for lost records), UNCERTAIN_RUNNING (records were
 * lost while it ran), GONE (it exited). The rules (man/microscope-capture.5
 * says them for readers):
 *  - off_cpu at t: in OFF, the open interval never saw its switch-in: it
 *    ends LOST_END; then (in any state) an interval opens at t with the
 *    sched_switch evidence (MS_EVIDENCE_STATE) and the stack;
 *  - switch out at t': in OFF with no switch evidence yet, this is the same
 *    switch: MS_EVIDENCE_SWITCH and preempt join the open interval. In OFF
 *    with switch evidence (two switch-outs, no switch-in between): the
 *    open one ends LOST_END and one opens at t' with switch evidence only.
 *    Otherwise an interval opens at t' with switch evidence only and no
 *    stack (the sched_switch sample was lost);
 *  - switch in at t'': OFF: the interval closes COMPLETE at t''. UNSEEN: a
 *    thread born in the recording (a fork was seen) runs for the first
 *    time: no interval; any other was off CPU when the recording began:
 *    BEGAN_INSIDE, ending at t''. RUNNING or GONE (a switch-in with no
 *    switch-out): LOST_START when any record was lost before, else no
 *    interval and the problem SWITCH_IN_UNPAIRED. UNCERTAIN_RUNNING:
 *    LOST_START. UNCERTAIN_OFF: no interval (its start was given up).
 *    The thread then runs;
 *  - lost (count > 0, any source) at tl: every OFF thread whose interval
 *    started before tl ends it LOST_END (its switch-in, if one comes, may
 *    not be its own) and goes UNCERTAIN_OFF; every RUNNING thread goes
 *    UNCERTAIN_RUNNING. Losses are per ring, not per thread: whose records
 *    were lost is unknown. A loss of time 0 (unknown) counts as later than
 *    every start;
 *  - exit: OFF ends LOST_END (no thread exits while off CPU); then GONE.
 *    fork: the thread is born in the recording (an open interval, which a
 *    new thread cannot have, ends LOST_END);
 *  - end of the stream: every OFF interval ends ENDED_INSIDE.
 * Evidence: cause is the off_cpu record's with MS_EVIDENCE_STATE; with the
 * switch flag alone, PREEMPTED when preempt, else UNKNOWN; with none,
 * UNKNOWN. An interval whose times cannot be (a complete one ending before
 * it starts, or a time of 0 where one is needed) is a problem, not an
 * interval.
 *
 * Memory: one state per thread in a dense table; OFF threads are also in a
 * heap by start and RUNNING ones in a list, so a loss costs the threads it
 * changes (O(log n) each), not every thread, whatever order times come in.
 */
#ifndef MS_CAPTURE_INTERVALS_H
#define MS_CAPTURE_INTERVALS_H

#include <stdint.h>

#include "capture/capture.h"
#include "stream/records.h"

/* An interval as the pairing ends it; stack is the caller's id (opaque). */
struct ms_pairing_interval {
	uint32_t pid, tid;
	uint64_t start, end;	/* 0 where missing says */
	uint32_t cpu;		/* MS_NONE when the start is missing */
	uint32_t stack;		/* the caller's, MS_NONE when none */
	uint32_t stack_end;	/* MS_END_UNKNOWN when no stack was given */
	uint32_t missing;	/* enum ms_interval_missing */
	struct ms_cap_evidence evidence;
};

enum ms_pairing_problem {
	/* a switch-in with no switch-out before it, and no loss to explain it */
	MS_PAIRING_SWITCH_IN_UNPAIRED,
	/* a complete interval that would end before it starts */
	MS_PAIRING_ENDS_BEFORE_START,
	/* a time of 0 where the interval needs one (its start, or its end) */
	MS_PAIRING_TIME_ZERO,
	MS_PAIRING_PROBLEM_COUNT,
};
/* "switch-in-unpaired", "interval-ends-before-start", "interval-time-zero". */
const char *ms_pairing_problem_code(enum ms_pairing_problem p);

struct ms_pairing_sink {
	void *ctx;
	/* Each interval that ends; 0, or -1 to stop (the pairing returns -1). */
	int (*interval)(void *ctx, const struct ms_pairing_interval *iv);
	/* A problem of the thread at time (its record's). */
	void (*problem)(void *ctx, enum ms_pairing_problem p, uint32_t pid, uint32_t tid,
			uint64_t time);
};

struct ms_pairing;

/* NULL after a message (out of memory). The sink is copied. */
struct ms_pairing *ms_pairing_new(const struct ms_pairing_sink *sink);
void ms_pairing_free(struct ms_pairing *p);

/*
 * The facts, in stream order. Each returns 0, or -1 after a message (out
 * of memory, a table full) or when the sink said stop; after -1 the
 * pairing refuses everything.
 */
int ms_pairing_off_cpu(struct ms_pairing *p, const struct ms_off_cpu *o, uint32_t stack,
		       uint32_t stack_end);
int ms_pairing_switch(struct ms_pairing *p, const struct ms_switch *s);
int ms_pairing_fork(struct ms_pairing *p, uint32_t pid, uint32_t tid);
int ms_pairing_exit(struct ms_pairing *p, uint32_t pid, uint32_t tid);
/* A loss of count > 0 records at time (0: unknown); call only for such. */
int ms_pairing_lost(struct ms_pairing *p, uint64_t time);
/* The end of the stream: every open interval ends ENDED_INSIDE. */
int ms_pairing_end(struct ms_pairing *p);

#endif
