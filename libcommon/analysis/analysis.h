/*
 * Analysis of a loaded capture: summary, flat profile (top),
 * call tree, and the report that `microscope report` prints.
 *
 * Analysis is pure over a validated capture (capture/capture.h): it reads
 * the tables as the loader guarantees them and nothing else: no clock, no
 * file, no process. Output is deterministic: every list is sorted with a
 * total order (explicit tie-breaks down to a dense id), never hash order.
 *
 * Counts are in samples: a sample row counts its count (capture.h), so an
 * imported row that stands for 67108864 samples weighs that much without
 * being expanded. The stack views weigh the samples a query selects
 * (analysis/query.h, select.h), in its unit, and their percentages are
 * of the selection, samples without frames included, so the views of
 * one query agree with each other.
 *
 * Every function returns 0, or -1 after one message (out of memory).
 * Writers print text for a terminal, or JSON (one object on one line, keys
 * in a fixed order) when asked; the JSON shapes are documented in
 * man/ms-analyze.1. Write errors stay on out for the caller to check
 * (ferror, fflush), as the caller knows whether EPIPE is an error.
 */
#ifndef MS_ANALYSIS_ANALYSIS_H
#define MS_ANALYSIS_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"
#include "capture/funcs.h"
#include "analysis/query.h"
#include "analysis/select.h"
#include "stream/records.h"

/*
 * Summary: the facts of the recording and how much of it can be trusted.
 */
struct ms_summary_thread {
	uint32_t pid, tid;
	const char *name;	/* borrowed from the capture */
	uint64_t samples;
};
struct ms_summary_end {
	uint32_t reason;	/* enum ms_stack_end */
	uint64_t samples;
};
struct ms_summary {
	const char *command;	/* info "command", "" when absent */
	uint32_t pid;		/* info "pid", else the lowest pid sampled */
	const char *record_options;	/* info "record-options", NULL when absent */
	/* info "import": the format a profile was imported from ("pprof"), NULL: recorded */
	const char *import;
	const char *import_file;	/* info "import-file": the file it was read from, or NULL */
	bool incomplete;
	uint64_t lost_kernel, lost_collector;	/* records lost (the capture's counts) */
	uint64_t samples;
	uint64_t period;	/* sum of the sample rows' periods */
	/*
	 * The time the samples stand for: the sum of ms_capture_sample_weight()
	 * (capture/weight.h), each period scaled up by the duty in force;
	 * UINT64_MAX when past 64 bits. CPU nanoseconds when time_event.
	 */
	uint64_t weight;
	bool time_event;	/* ms_capture_time_event() */
	/*
	 * When sampling was paused to keep to a CPU budget (duty rows): how
	 * often the duty changed (0: never paused, and the rest is 0), the
	 * budget of the last change, the lowest duty, and the mean duty over
	 * the time between the first and the last sample (the duty at the
	 * first sample when that is no time), all in millionths.
	 */
	uint32_t duty_changes;
	uint32_t budget_ppm, lowest_duty_ppm, mean_duty_ppm;
	uint64_t first_time, last_time;	/* of the samples; 0 when none */
	uint64_t start_time, end_time;	/* of the recording; 0 when unknown */
	uint32_t n_threads;
	struct ms_summary_thread *threads;	/* capture order: (pid, tid) */
	/* sorted by samples desc, then reason */
	uint32_t n_ends;
	struct ms_summary_end *ends;
	int32_t exit_code;	/* -1 when unknown */
	/* samples with a frame that symbolization gave no name (ms_frame_unnamed) */
	uint64_t unsymbolized;
	/* a module's frames wait for `microscope symbolize` (module status) */
	bool deferred;
	/*
	 * Off-CPU time (MS_CAPTURE_OFF_CPU; else all 0): ns in complete
	 * intervals, their count, and the incomplete ones per missing reason
	 * (enum ms_interval_missing; slot 0: a reason not known).
	 */
	bool off_cpu;
	uint64_t off_cpu_ns, off_cpu_intervals;
	uint64_t off_cpu_cause_ns[MS_CAUSE_COUNT];
	uint64_t off_cpu_incomplete;
	uint64_t off_cpu_missing[MS_INTERVAL_MISSING_COUNT];
};

int ms_summary_compute(struct ms_summary *s, const struct ms_capture *cap);
void ms_summary_release(struct ms_summary *s);
/* last - first sample time. */
uint64_t ms_summary_duration(const struct ms_summary *s);
/*
 * The lines every report of a capture starts with: the incomplete warning
 * when it is one, the lost-records warning when records were lost, the
 * share of samples per stack end reason, and the share of samples with an
 * unsymbolized frame.
 */
void ms_summary_write_header(FILE *out, const struct ms_summary *s);
/* The same, its warnings in the warning colour when color. */
void ms_summary_write_header_color(FILE *out, const struct ms_summary *s, bool color);
int ms_summary_write(FILE *out, const struct ms_capture *cap, bool json);

/*
 * Where and how a view writes: text for people (colour and a width when
 * the command decided so), or JSON for programs.
 */
struct ms_view_out {
	FILE *f;
	bool json;
	bool color;		/* SGR sequences in text */
	uint32_t width;		/* columns of the terminal; 0: no limit */
	/*
	 * When not NULL, called now and then with the rows written of all a
	 * long view writes (a whole tree): the command draws its progress
	 * line; the view reads no clock.
	 */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* The summary written to o (text with its colour, or JSON). */
int ms_summary_write_out(const struct ms_view_out *o, const struct ms_capture *cap);

/*
 * Flat profile, per key at the query's granularity. self: the weight of
 * samples whose innermost key it is; total: of samples with the key
 * anywhere on the stack, counted once per sample however often it
 * recurses. Truncated keys are not rows (the summary gives their shares).
 */
struct ms_top_entry {
	uint32_t key;
	uint64_t self, total;
};
struct ms_top {
	struct ms_select sel;
	uint32_t n;		/* keys seen in at least one selected sample */
	struct ms_top_entry *entries;	/* sorted by q->sort, then ms_key_cmp() */
};
int ms_top_compute(struct ms_top *t, const struct ms_capture *cap, const struct ms_query *q);
void ms_top_release(struct ms_top *t);
/* q->limit rows (0: all); rows under q->hide_below percent of total are left out. */
int ms_top_write(const struct ms_view_out *o, const struct ms_capture *cap, const struct ms_query *q);

/*
 * Call tree from the outermost key in, paths merged by key: a child is
 * (parent node, key). Node 0 is the root, whose self is the weight of
 * selected samples without any key. A truncated stack starts with its
 * truncated key. Children are sorted by total desc, then ms_key_cmp().
 * callers and callees are trees of the same shape rooted at one key.
 */
struct ms_tree_node {
	uint32_t key;		/* MS_NONE for the root */
	uint32_t parent;	/* MS_NONE for the root */
	uint32_t depth;		/* 0 for the root */
	uint64_t self, total;
	uint32_t first_child, n_children;	/* range in struct ms_tree.children */
};
struct ms_tree {
	struct ms_select sel;
	uint32_t n;
	struct ms_tree_node *nodes;
	uint32_t *children;	/* node ids, grouped by parent, sorted */
	uint32_t alloc;
	const char *root_label;	/* "[root]", or the key callers/callees start from */
};
int ms_tree_build(struct ms_tree *t, const struct ms_capture *cap, const struct ms_query *q);
/*
 * callers (bottom-up: the key, then who called it, outwards) or callees
 * (top-down: the key, then what it called). Each selected sample through
 * the key counts once: callers from the key's innermost activation,
 * callees from its outermost, so the root's total is the key's total in
 * top. q->function names the key: exactly, else by a regex matching one
 * key; -1 after a message when it names none or several.
 */
int ms_tree_build_from(struct ms_tree *t, const struct ms_capture *cap, const struct ms_query *q);
void ms_tree_release(struct ms_tree *t);
/* Nodes under q->hide_below percent of the selection are left out. */
int ms_tree_write(const struct ms_view_out *o, const struct ms_capture *cap, const struct ms_query *q);

/*
 * Threads: the selected weight per thread (pid, tid, name), sorted by
 * weight desc then (pid, tid); threads without selected samples are
 * counted, not listed, in text.
 */
int ms_threads_write(const struct ms_view_out *o, const struct ms_capture *cap,
		     const struct ms_query *q);

/*
 * Timeline: density lanes, the selected weight per thread per time
 * bucket from the recording's start (or --time's start) to its end.
 * q->buckets buckets (0: fit the width, or MS_TIMELINE_BUCKETS).
 */
#define MS_TIMELINE_BUCKETS 60
#define MS_TIMELINE_MAX_BUCKETS 10000
int ms_timeline_write(const struct ms_view_out *o, const struct ms_capture *cap,
		      const struct ms_query *q);

/*
 * Diff of two captures under one query: per key (matched by identity
 * across the captures: module file name, name, file, line), the self
 * and total of each, the absolute change (b - a) and the normalized one
 * (the change of share of each capture's selection, in points), sorted
 * by the magnitude of the normalized change of q->sort's measure, then
 * the absolute one, then the key. Keys only in b are new; only in a,
 * gone. Captures whose units differ are refused with the reason.
 */
int ms_diff_write(const struct ms_view_out *o, const struct ms_capture *a, const char *a_name,
		  const struct ms_capture *b, const char *b_name, const struct ms_query *q);

/*
 * off-cpu: the time threads spent off CPU (capture.h: intervals, minor 5),
 * in nanoseconds of wall-clock time from each switch-out to the switch-in
 * after it. Only complete intervals have time; an incomplete one (an end
 * missing) is counted per missing reason, with the lower bound its known
 * part gives (began-inside: from the recording's start; ended-inside: to
 * its end; 0 for lost ends), never summed into a total. The query's
 * filters apply to intervals as to samples (module and --focus by the
 * switch-out stack; --time keeps the part of each interval inside it;
 * --cause by the evidence).
 */
struct ms_off_cpu_view_thread {
	uint32_t thread;	/* index into the capture's threads */
	uint64_t total;		/* ns in complete intervals */
	uint64_t intervals;	/* complete */
	uint64_t incomplete;
	uint64_t cause_ns[MS_CAUSE_COUNT];	/* enum ms_off_cpu_cause */
};
struct ms_off_cpu_view {
	struct ms_query query;	/* the query in the unit off-cpu, which sel points to */
	struct ms_select sel;	/* sel.all is every complete interval's time */
	bool recorded;		/* the capture has MS_CAPTURE_OFF_CPU */
	uint64_t total, intervals;	/* selected complete intervals: ns, count */
	uint64_t cause_ns[MS_CAUSE_COUNT];
	uint64_t cause_intervals[MS_CAUSE_COUNT];
	/* incomplete intervals selected, per enum ms_interval_missing (slot 0: a reason not known) */
	uint64_t n_incomplete;
	uint64_t incomplete[MS_INTERVAL_MISSING_COUNT];
	uint64_t incomplete_known[MS_INTERVAL_MISSING_COUNT];	/* lower bounds, ns */
	/* threads with a selected interval, by total desc, incomplete desc, then (pid, tid) */
	uint32_t n_threads;
	struct ms_off_cpu_view_thread *threads;
};
int ms_off_cpu_view_compute(struct ms_off_cpu_view *v, const struct ms_capture *cap, const struct ms_query *q);
void ms_off_cpu_view_release(struct ms_off_cpu_view *v);
/* The causes with selected complete intervals into order, by time desc then cause; how many. */
uint32_t ms_off_cpu_view_causes(const struct ms_off_cpu_view *v, uint32_t *order);
/*
 * The totals per cause and per thread, the incomplete intervals per
 * reason, then per cause the top functions by off-CPU time at switch-out
 * (a top view of unit off-cpu and that cause). A capture without
 * MS_CAPTURE_OFF_CPU is refused.
 */
int ms_off_cpu_write(const struct ms_view_out *o, const struct ms_capture *cap,
		     const struct ms_query *q);

/*
 * wall: per thread, the wall-clock time from its first to its last event
 * the capture holds (in --time's range), split into on CPU (the CPU time
 * its samples stand for, capture/weight.h), off CPU per cause (complete
 * intervals), and the rest, unaccounted: neither sampled nor inside a
 * complete interval. All in nanoseconds of wall-clock time.
 */
struct ms_wall_thread {
	uint32_t thread;
	uint64_t first, last;	/* the thread's span, clipped to the range; first == last: none */
	bool on_known;		/* the samples' periods are CPU time */
	uint64_t on_cpu;	/* ns the samples stand for */
	uint64_t samples;
	uint64_t off_cpu;	/* ns in complete intervals */
	uint64_t cause_ns[MS_CAUSE_COUNT];
	uint64_t intervals, incomplete;
	uint64_t incomplete_known;	/* lower bound of the incomplete intervals' time, ns */
	uint64_t unaccounted;	/* span - on - off when that is not negative */
	uint64_t excess;	/* on + off - span when it is: sampling's estimate overshot */
};
struct ms_wall {
	uint32_t n_threads;
	struct ms_wall_thread *threads;	/* capture order (pid, tid), those with an event in range */
	uint64_t lo, hi;	/* the range, absolute */
};
int ms_wall_compute(struct ms_wall *w, const struct ms_capture *cap, const struct ms_query *q);
void ms_wall_release(struct ms_wall *w);
int ms_wall_write(const struct ms_view_out *o, const struct ms_capture *cap,
		  const struct ms_query *q);

/*
 * The report of `microscope report FILE`: the summary (starting with the
 * incomplete warning and the stack end shares), the top keys, then the
 * call tree, under one query (its filters apply to all three).
 */
#define MS_REPORT_TOP_LIMIT 20
#define MS_REPORT_TREE_HIDE_BELOW 1.0
int ms_report_write(const struct ms_view_out *o, const struct ms_capture *cap,
		    const struct ms_query *q);

/* The view q names (not diff), written to o. */
int ms_view_write(const struct ms_view_out *o, const struct ms_capture *cap,
		  const struct ms_query *q);

/*
 * Symbolization problems: the modules and addresses that could not be
 * symbolized, with the samples they touch. A module is listed when its
 * status (capture.h) is not ok or a frame of it has no name; an address
 * when its frame has no name (ms_frame_unnamed). Frames at one (module,
 * address) are one address. Samples count once per sample, wherever the
 * module or address is on the stack. Modules are sorted by samples desc,
 * then module id (none last); each module's addresses by samples desc,
 * then address.
 */
struct ms_sym_problem_address {
	uint64_t address;
	uint32_t frame;		/* one of the address's frames */
	uint32_t reason;	/* enum ms_frame_reason, or MS_CAP_UNSYMBOLIZED */
	uint64_t samples;
};
struct ms_sym_problem_module {
	uint32_t module;	/* MS_NONE: addresses in no module */
	uint64_t samples;	/* with a frame of it whose reason is not ok */
	uint32_t first_address, n_addresses;	/* range in addresses */
};
struct ms_sym_problems {
	uint64_t samples;	/* all samples */
	uint64_t unsymbolized;	/* samples with an unnamed frame */
	uint32_t n_modules;
	struct ms_sym_problem_module *modules;
	uint32_t n_addresses;
	struct ms_sym_problem_address *addresses;
};
int ms_sym_problems_compute(struct ms_sym_problems *v, const struct ms_capture *cap);
void ms_sym_problems_release(struct ms_sym_problems *v);
int ms_sym_problems_write(FILE *out, const struct ms_capture *cap, bool json);
/* "not-symbolized" for MS_CAP_UNSYMBOLIZED, else ms_frame_reason_name(). */
const char *ms_cap_reason_name(uint32_t reason);
/* Samples with an unnamed frame. -1 after a message. */
int ms_unsymbolized_samples(const struct ms_capture *cap, uint64_t *out);

/* Percentage of n in all; 0 when all is 0. */
double ms_percent(uint64_t n, uint64_t all);

#endif
