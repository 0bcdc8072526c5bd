/*
 * The typed query: what a view of a capture is asked. The terminal
 * (ms-analyze, microscope report), --json and the browser view build one
 * and hand it with a validated capture to a view; each view is a pure
 * function of the two, so the same capture and query give the same bytes.
 *
 * A query is a plain value: strings are borrowed (from argv, say) and
 * must outlive it. ms_query_check() refuses what cannot be answered with a
 * reason (a regex that does not compile, a range that ends before it
 * starts); ms_query_check_capture() refuses what this capture cannot
 * answer (CPU time of an event that is not time).
 */
#ifndef MS_ANALYSIS_QUERY_H
#define MS_ANALYSIS_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/look.h"

enum ms_view {
	MS_VIEW_REPORT = 0,	/* summary, top and tree, as microscope report prints */
	MS_VIEW_SUMMARY,
	MS_VIEW_TOP,
	MS_VIEW_TREE,
	MS_VIEW_CALLERS,	/* bottom-up from query.function */
	MS_VIEW_CALLEES,	/* top-down from query.function */
	MS_VIEW_THREADS,
	MS_VIEW_TIMELINE,
	MS_VIEW_PROBLEMS,
	MS_VIEW_DIFF,
	MS_VIEW_OFF_CPU,	/* off-CPU time per cause and thread, and its stacks */
	MS_VIEW_WALL,		/* wall-clock time per thread: on CPU, off CPU, unaccounted */
	MS_VIEW_TASKS,		/* per task of thread snapshots: its reads, whole and not */
	MS_VIEW_COUNT,
};

/*
 * What one key of a stack is: a function (the default), a source line of
 * a function, an instruction address of a function, or a module (runs of
 * frames in one module are one key). Inlined functions are keys of their
 * own at every granularity but module.
 */
enum ms_by {
	MS_BY_FUNCTION = 0,
	MS_BY_LINE,
	MS_BY_ADDRESS,
	MS_BY_MODULE,
	MS_BY_COUNT,
};

/*
 * How a path is seen: enum ms_look of capture/look.h, which says each
 * exactly: mixed, the stack as recorded (interpreted frames spliced among
 * native ones); native, without interpreted frames; python, from the
 * outermost interpreted frame in, without the interpreter's own frames.
 * A capture without interpreted code looks the same in all three.
 */

/*
 * What a view weighs. samples and cpu-time are measured by CPU sampling:
 * samples counts them; cpu-time adds the time each stands for (its
 * period, scaled by the sampling duty; capture/weight.h), which only a
 * capture of a clock event has. off-cpu is measured by the scheduler:
 * the duration of each complete off-CPU interval (capture.h), weighed at
 * its switch-out stack; an incomplete interval weighs nothing. snapshots
 * is measured by thread snapshots (record --python snapshot): each wait
 * row (capture.h: ms_cap_wait, a whole read of a task's stack) weighs
 * one, at its stack, on its task's thread, at its read's time; a read
 * that was not whole is no row and weighs nothing (the tasks view counts
 * them). Units are never mixed in one view.
 */
enum ms_unit {
	MS_UNIT_SAMPLES = 0,
	MS_UNIT_CPU_TIME,
	MS_UNIT_OFF_CPU,
	MS_UNIT_SNAPSHOTS,
	MS_UNIT_COUNT,
};

enum ms_sort {
	MS_SORT_SELF = 0,
	MS_SORT_TOTAL,
};

#define MS_QUERY_MAX_THREADS 64

struct ms_query {
	enum ms_view view;
	enum ms_by by;
	enum ms_look look;
	enum ms_unit unit;

	/*
	 * Filters: a sample is selected when it passes every one given.
	 * Threads: its tid is one of tids, or its thread's name one of
	 * thread_names (either list matching is enough when both are given).
	 */
	uint32_t n_tids;
	uint32_t tids[MS_QUERY_MAX_THREADS];
	uint32_t n_thread_names;
	const char *thread_names[MS_QUERY_MAX_THREADS];
	/* Nanoseconds from the recording's start (ms_query_origin()). */
	bool has_time_start, has_time_end;
	uint64_t time_start, time_end;	/* [start, end) */
	/* Its innermost frame lies in a module of this file name (basename). */
	const char *module;
	/*
	 * Off-CPU intervals whose evidence gives one of these causes: bit
	 * 1 << enum ms_off_cpu_cause (stream/records.h); 0: every cause.
	 */
	uint32_t causes;
	/*
	 * "KEY=VALUE" (ms_query_set_label()): its thread had a label span of
	 * that key and value covering its time (capture.h:
	 * ms_cap_label_span; Python's GIL: gil=held, gil=released). An
	 * off-CPU interval passes when one covers its start. NULL: none.
	 */
	const char *label;
	uint32_t label_key_len;	/* the bytes of label before '=' */
	/* POSIX extended regexes over key names. */
	const char *focus;	/* the stack goes through a matching key */
	const char *ignore;	/* matching keys are dropped from every stack */
	/* Rows and nodes under this share of the selection are not shown. */
	double hide_below;

	/* callers, callees: the key (its name, or a regex naming one) */
	const char *function;
	/* top, diff: the order and how many rows (0: all) */
	enum ms_sort sort;
	uint32_t limit;
	/* timeline: buckets per lane (0: the default) */
	uint32_t buckets;
};

/* The defaults: the report, by function, the mixed look, in samples. */
void ms_query_init(struct ms_query *q, enum ms_view view);

/* Names, as options and JSON spell them; NULL for a value out of range. */
const char *ms_view_name(enum ms_view v);
const char *ms_by_name(enum ms_by b);
const char *ms_unit_name(enum ms_unit u);
/* The unit's measure as text and JSON state it: "samples", "ns" or "snapshots". */
const char *ms_unit_measure(enum ms_unit u);
/* What measured it, as JSON states it: "cpu-sampling", "intervals" or "thread-snapshots". */
const char *ms_unit_source(enum ms_unit u);
/*
 * What a total in the unit is, for text: " samples", " of CPU time",
 * " of off-CPU time", " snapshots".
 */
const char *ms_unit_words(enum ms_unit u);

/* Parsers of option values: 0, or -1 after a message naming arg and the choices. */
int ms_view_parse(const char *arg, enum ms_view *out);
int ms_by_parse(const char *arg, enum ms_by *out);
int ms_look_parse(const char *arg, enum ms_look *out);
int ms_unit_parse(const char *arg, enum ms_unit *out);
/* The view arg names: 0, or -1 without a message. */
int ms_view_parse_quiet(const char *arg, enum ms_view *out);
/*
 * A time range START..END, either side may be empty; each a number with
 * a unit (ns, us, ms, s, min; seconds when none): "1.5s..2500ms", "..2",
 * "10ms..".
 */
int ms_query_parse_time(struct ms_query *q, const char *arg);
/* "123" or "12,13": tids added to q. */
int ms_query_add_tids(struct ms_query *q, const char *arg);
int ms_query_add_thread_name(struct ms_query *q, const char *name);
/* "sleeping" or "preempted,blocked": causes added to q. */
int ms_query_add_causes(struct ms_query *q, const char *arg);
/* "gil=held": the label filter (borrowed: arg must outlive q). */
int ms_query_set_label(struct ms_query *q, const char *arg);
/* The column head of a weight in the unit: "samples", "cpu time", "off cpu", "snapshots". */
const char *ms_unit_column(enum ms_unit u);
/* Whether q asks for off-CPU intervals (the unit, or a view of them). */
bool ms_query_off_cpu(const struct ms_query *q);

/* Whether q can be answered at all; -1 after a message. */
int ms_query_check(const struct ms_query *q);
/*
 * Whether cap can answer q (the unit; off-CPU intervals, which only a
 * capture with MS_CAPTURE_OFF_CPU has; snapshots and the tasks view, which
 * only a capture with task rows has; a label key, which only a capture
 * with spans of it has); -1 after a message naming file.
 */
int ms_query_check_capture(const struct ms_query *q, const struct ms_capture *cap,
			   const char *file);
/* Whether q selects fewer than all samples (some filter is given). */
bool ms_query_filters(const struct ms_query *q);

/*
 * Time 0 of the query's ranges and the timeline: the recording's start
 * when the capture knows it, else its first sample, else its first
 * off-CPU interval's first known time, else its first snapshot (wait
 * row), else 0.
 */
uint64_t ms_query_origin(const struct ms_capture *cap);

#endif
