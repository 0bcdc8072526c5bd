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
 * being expanded. Percentages are of all samples in the capture,
 * including samples without frames, so they are comparable between views.
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
int ms_summary_write(FILE *out, const struct ms_capture *cap, bool json);

/*
 * Flat profile. self: samples whose innermost frame is the function;
 * total: samples with the function anywhere on the stack, counted once per
 * sample however often it recurses.
 */
enum ms_top_sort {
	MS_TOP_SORT_SELF = 0,	/* self desc, total desc, label, id */
	MS_TOP_SORT_TOTAL = 1,	/* total desc, self desc, label, id */
};
struct ms_top_entry {
	uint32_t func;
	uint64_t self, total;
};
struct ms_top {
	uint64_t samples;
	struct ms_funcs funcs;
	uint32_t n;		/* functions seen in at least one sample */
	struct ms_top_entry *entries;	/* sorted */
};
int ms_top_compute(struct ms_top *t, const struct ms_capture *cap, enum ms_top_sort sort);
void ms_top_release(struct ms_top *t);

struct ms_top_options {
	bool json;
	enum ms_top_sort sort;
	uint32_t limit;		/* rows to print; 0 = all */
};
int ms_top_write(FILE *out, const struct ms_capture *cap, const struct ms_top_options *o);

/*
 * Call tree from the outermost frame in. Paths are merged by function key:
 * a child is (parent node, function). Node 0 is the root "[root]", whose
 * self counts the samples without any frame. Children are sorted by total
 * desc, then label, then function id.
 */
struct ms_tree_node {
	uint32_t func;		/* MS_NONE for the root */
	uint32_t parent;	/* MS_NONE for the root */
	uint32_t depth;		/* 0 for the root */
	uint64_t self, total;
	uint32_t first_child, n_children;	/* range in struct ms_tree.children */
};
struct ms_tree {
	uint64_t samples;
	struct ms_funcs funcs;
	uint32_t n;
	struct ms_tree_node *nodes;
	uint32_t *children;	/* node ids, grouped by parent, sorted */
};
int ms_tree_build(struct ms_tree *t, const struct ms_capture *cap);
void ms_tree_release(struct ms_tree *t);

struct ms_tree_options {
	bool json;
	/* Leave out nodes under this share of all samples (0: print all). */
	double min_percent;
};
int ms_tree_write(FILE *out, const struct ms_capture *cap, const struct ms_tree_options *o);

/*
 * The report of `microscope report FILE`: the summary (starting with the
 * incomplete warning and the stack end shares), the top functions, then the
 * call tree. opts NULL means the defaults below.
 */
#define MS_REPORT_TOP_LIMIT 20
#define MS_REPORT_TREE_MIN_PERCENT 1.0
struct ms_report_options {
	uint32_t top_limit;
	double tree_min_percent;
};
int ms_report_write(FILE *out, const struct ms_capture *cap, const struct ms_report_options *opts);

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
