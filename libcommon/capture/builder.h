/*
 * The capture builder: fed facts one at a time (the records of a stream,
 * or rows an importer makes), it interns them into the dense tables of a
 * struct ms_capture and seals them.
 *
 * Determinism: the sealed capture depends only on the facts fed, not on
 * hash order, addresses or (for most tables) the order of the facts:
 *  - strings are sorted by their bytes ("" is string 0), and only strings
 *    some row uses are kept;
 *  - frames are sorted by (module, address, flags);
 *  - stack nodes are numbered depth by depth, each depth sorted by
 *    (parent, frame), so a parent always precedes its children;
 *  - threads are sorted by (pid, tid), samples by every field (the count
 *    last), info by key, problems by (stage, code), duty rows by time,
 *    loss rows by (time, source);
 *  - modules keep the order in which their stream ids were first seen.
 * So the same stream gives the same capture, and a capture dumped as a
 * stream (ms_capture_dump) and built again gives the same capture.
 *
 * What a fact does:
 *  - info: sets key to value (the last value of a key wins); but info
 *    MS_CAPTURE_INFO_SAMPLE_COUNT is no fact of the recording: its number
 *    is the count of the sample row the next stack or stack-ref makes
 *    (capture/convert.h says why); text or 0 there, or a count no stack
 *    takes, is a problem, and the row counts 1;
 *  - target: info "command" (argv joined by spaces), "pid", "launched";
 *  - target_exit: the capture's target_exit_code;
 *  - comm: names the thread (pid, tid): the last name wins; a thread made
 *    by fork takes its parent's name until it gets one of its own;
 *  - task (fork or exit): makes the thread known;
 *  - module: describes the stream's module id (the first description wins;
 *    a different one later is counted as a problem); a perf-map or
 *    jit-object module keeps its base (minor 6). A record whose base
 *    breaks capture.h's rule (such a module without a base or size, a
 *    range past the address space, a base on another kind) fails the
 *    builder with a message;
 *  - jit_read: the perf-map setting of its pid (capture.h:
 *    ms_cap_perf_map): the last record of a pid replaces the earlier
 *    ones, whose counts it includes. A status it does not know or an err
 *    above MS_CAP_ERRNO_MAX fails the builder with a message. Any row,
 *    or a perf-map or jit-object module, makes the capture 1.6;
 *  - frame: what symbolization found for (module, address); it applies to
 *    every frame at that address whatever its flags (first fact wins).
 *    The frames of an interpreted module (minor 7) are keyed at seal by
 *    the text of their fact, not the stream's address (capture.h:
 *    ms_cap_frame.address); a module record of that kind with an
 *    identity, or a frame of it without MS_FRAME_NO_ADDRESS, fails the
 *    builder with a message;
 *  - frame fallback: a fact that stands in where the stream's own fact for
 *    the address names less (a name beats none, lines beat a name alone),
 *    so that symbolizing again never loses what an earlier run found;
 *  - stack: a sample row of count 1 (or the count an info gave it);
 *    frames come innermost first as in the stream. stack_count: a row
 *    standing for count samples (an importer's "this stack, N times"),
 *    so that nothing grows with N;
 *  - lost: adds its count to its source's total (one past 2^64-1 stays
 *    there: a problem "lost-count-overflow"; an unknown source is a
 *    problem "unknown-lost-source" and counts nowhere), and, when its
 *    time is not 0 and its count not 0, to the loss row of its (time,
 *    source) (capture.h: ms_cap_loss). A time of 0 is a loss of unknown
 *    time: the total alone. The builder holds at most twice
 *    MS_CAPTURE_LOSSES_MAX rows (a hostile stream may send millions),
 *    and the capture keeps the rows of the earliest MS_CAPTURE_LOSSES_MAX
 *    pairs, whatever order they came in: losses of later pairs count in
 *    the totals only, and the problem "loss-rows-full" counts them (how
 *    many records, and from which time). Any row makes the capture 1.4;
 *  - throttle: the capture's total;
 *  - duty: a duty row (capture.h: ms_cap_duty); rows are sorted by time
 *    at seal, and of rows at one time the last given is kept (the others
 *    are a problem "duty-same-time"); a duty_ppm outside 1..1000000 is a
 *    problem "bad-duty" and no row. Any row makes the capture 1.3 with
 *    MS_CAPTURE_DUTY;
 *  - problem: a problems row; rows of the same (stage, code) are merged
 *    (counts added, the first detail kept);
 *  - ignored: adds count to info "ignored-records.WHAT", so records the
 *    capture does not hold are never dropped without trace.
 * Facts the builder finds wrong (a module id used but never described, a
 * string holding a NUL byte, ...) become problems of stage "ms-capture".
 *
 * Strings are passed as struct ms_str (pointer and length) and copied.
 * Every function returns 0, or -1 after one message (out of memory, or a
 * table at its limit of 2^32-1 rows); after a failure the builder refuses
 * everything until it is freed.
 */
#ifndef MS_CAPTURE_BUILDER_H
#define MS_CAPTURE_BUILDER_H

#include <stdint.h>

#include "capture/capture.h"
#include "stream/records.h"

struct ms_capture_builder;

/* NULL after a message (out of memory). */
struct ms_capture_builder *ms_capture_builder_new(void);
/* Frees a builder that was not sealed. NULL is a no-op. */
void ms_capture_builder_free(struct ms_capture_builder *b);

/* The info key that gives the next stack record's count (see above). */
#define MS_CAPTURE_INFO_SAMPLE_COUNT "sample-count"
/* The info key that says what recorded the switches (see below). */
#define MS_CAPTURE_INFO_OFF_CPU "off-cpu"

/* Info "producers": the header's producer chain, "NAME VERSION | ...". */
int ms_capture_builder_producers(struct ms_capture_builder *b, const struct ms_header *h);
int ms_capture_builder_info(struct ms_capture_builder *b, const struct ms_info *i);
int ms_capture_builder_target(struct ms_capture_builder *b, const struct ms_target *t);
int ms_capture_builder_target_exit(struct ms_capture_builder *b, const struct ms_target_exit *t);
int ms_capture_builder_comm(struct ms_capture_builder *b, const struct ms_comm *c);
/* kind is MS_REC_FORK or MS_REC_EXIT. */
int ms_capture_builder_task(struct ms_capture_builder *b, uint32_t kind, const struct ms_task *t);
int ms_capture_builder_module(struct ms_capture_builder *b, const struct ms_module *m);
int ms_capture_builder_jit_read(struct ms_capture_builder *b, const struct ms_jit_read *r);
/*
 * What the recording found of a process's Python (minor 7): a row of the
 * capture's Python processes (capture.h: ms_cap_py_process); identical
 * records make one row. A status it does not know fails the builder with
 * a message; past MS_CAPTURE_PY_PROCESSES_MAX rows a record is counted
 * in the problem "py-process-rows-full" and kept out.
 */
int ms_capture_builder_py_process(struct ms_capture_builder *b, const struct ms_py_process *p);
/*
 * A label over a run of a thread's samples (minor 7; capture.h:
 * ms_cap_label_span), which makes its thread known. One with an empty
 * key or value, no samples or an end before its start is a problem
 * "bad-label-span" and no row; past MS_CAPTURE_LABEL_SPANS_MAX spans one
 * is counted in "label-span-rows-full" and kept out. At seal a span that
 * overlaps the one before it of its thread and key (by start, then end)
 * goes, a problem "label-span-overlaps".
 */
int ms_capture_builder_label_span(struct ms_capture_builder *b, const struct ms_label_span *l);
/*
 * A read of a task (minor 8; capture.h: ms_cap_task, ms_cap_wait): its
 * task (pid, kind, id) made when new (a "thread" task makes its thread
 * known, so a COMM names it), its times and counts updated, and a
 * complete read a wait row at its STACK_DEF's stack (none: MS_NONE). One
 * with an empty kind, an unknown status, a stack for a read that keeps
 * none, or a thread task whose id is not its tid is a problem
 * "bad-task-wait" and no read; a stack no STACK_DEF defined fails the
 * build. Past MS_CAPTURE_TASKS_MAX tasks a new task's read is counted in
 * "task-rows-full" and kept out; past MS_CAPTURE_WAITS_MAX wait rows a
 * complete read is counted in "wait-rows-full" and as dropped on its
 * task. At seal a second complete read of one (task, time) goes, a
 * problem "wait-same-time".
 */
int ms_capture_builder_task_wait(struct ms_capture_builder *b, const struct ms_task_wait *t);
int ms_capture_builder_frame(struct ms_capture_builder *b, const struct ms_frame *f);
/* Give after every frame fact of the stream: see "frame fallback" above. */
int ms_capture_builder_frame_fallback(struct ms_capture_builder *b, const struct ms_frame *f);
int ms_capture_builder_stack(struct ms_capture_builder *b, const struct ms_stack *s);
/*
 * A sample row standing for count samples of s (count >= 1; 0 fails the
 * builder). s->period is the sum of their periods. The counts of all rows
 * must add up to at most UINT64_MAX, or the builder fails with a message.
 */
int ms_capture_builder_stack_count(struct ms_capture_builder *b, const struct ms_stack *s,
				   uint64_t count);
/*
 * As stack_count, for importers, whose rows seldom share a whole stack:
 * the row's stack nodes are made at seal, from every such row at once, by
 * sorting rather than through a hash index one frame at a time (memory
 * and time follow the rows' frames). The capture is the one stack_count
 * gives; mixed with the other stack calls, its rows are made as theirs.
 */
int ms_capture_builder_stack_import(struct ms_capture_builder *b, const struct ms_stack *s,
				    uint64_t count);
/*
 * A stream's STACK_DEF (ids dense from 0, in order) and the samples that
 * refer to it; an id out of order or a reference to one not defined fails
 * the builder with a message.
 */
int ms_capture_builder_stack_def(struct ms_capture_builder *b, uint32_t id,
				 const struct ms_stack *s);
int ms_capture_builder_stack_ref(struct ms_capture_builder *b, const struct ms_stack_ref *r);
/*
 * The record the next calls add: input's name and the record's byte
 * offset, named in a message when they refuse it (NULL: none).
 */
void ms_capture_builder_at(struct ms_capture_builder *b, const char *input, uint64_t offset);
int ms_capture_builder_lost(struct ms_capture_builder *b, const struct ms_lost *l);
int ms_capture_builder_throttle(struct ms_capture_builder *b, const struct ms_throttle *t);
/*
 * Off-CPU facts (minor 5; capture/capture.h: ms_cap_interval). A switch
 * record and a switch-out stack (its id names a STACK_DEF given before,
 * or the builder fails with a message) are paired per thread into
 * intervals, with the fork, exit and lost records (task, lost) and the
 * end of the stream (seal), by the rules of capture/intervals.h, which
 * man/microscope-capture.5 says for readers: an end the stream does not
 * prove is missing, never made up. What the pairing finds wrong becomes
 * a problem of stage ms-capture: "switch-in-unpaired",
 * "interval-ends-before-start", "interval-time-zero". Either record makes
 * its thread known, samples or not.
 * interval: one interval whole (ms-capture --dump writes them), kept as
 * given (its stack a STACK_DEF id, or MS_NONE), unless it breaks what
 * capture.h says of a row: then a problem "bad-interval" and no row.
 * The info "off-cpu" (what recorded the switches) marks the capture
 * MS_CAPTURE_OFF_CPU, as does any of these facts; a capture so marked
 * without that info gets it, as "unknown", at seal. Evidence rows are
 * deduplicated; intervals and evidence are sorted at seal as capture.h
 * says.
 */
int ms_capture_builder_switch(struct ms_capture_builder *b, const struct ms_switch *s);
int ms_capture_builder_off_cpu(struct ms_capture_builder *b, const struct ms_off_cpu *o);
int ms_capture_builder_interval(struct ms_capture_builder *b, const struct ms_interval *i);

int ms_capture_builder_duty(struct ms_capture_builder *b, const struct ms_duty *d);
int ms_capture_builder_problem(struct ms_capture_builder *b, const struct ms_problem *p);
/* count records of kind what ("sample", "mmap", "kind-77") were not used. */
int ms_capture_builder_ignored(struct ms_capture_builder *b, const char *what, uint64_t count);
/*
 * Mark the capture MS_CAPTURE_INCOMPLETE. detail, when not NULL, also adds
 * the problem ("ms-capture", "stream-cut-short", 1, detail).
 */
int ms_capture_builder_incomplete(struct ms_capture_builder *b, const char *detail);

/*
 * Seal the tables into a capture the caller frees with ms_capture_free().
 * Consumes the builder (freed even on failure). NULL after a message.
 */
struct ms_capture *ms_capture_builder_seal(struct ms_capture_builder *b);

#endif
