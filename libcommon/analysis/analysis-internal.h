/* Helpers shared by the analysis views; not part of the layer's API. */
#ifndef MS_ANALYSIS_INTERNAL_H
#define MS_ANALYSIS_INTERNAL_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/select.h"
#include "capture/look.h"
#include "util/json.h"


/* A weight as text: "1234" samples, or "12.345 ms" of time. */
void ms_view_value(char *buf, size_t size, const struct ms_select *s, uint64_t w);
/*
 * The line under a view's title when the query narrows the capture:
 * "selected 1200 of 2001 samples: tid 43, time 1s..2s, focus 'x'";
 * nothing when it does not.
 */
void ms_view_selection_line(FILE *out, const struct ms_select *s);
/* The filters of that line alone: ": threads 43, time 1s..2s"; nothing without filters. */
void ms_view_put_filters(FILE *out, const struct ms_query *q);
/* The first keys of a stack view's JSON: source, unit, by, look, samples, total, capture_total. */
void ms_view_json_head(struct ms_json *j, const struct ms_select *s);
/* The fewest columns a name is cut to, whatever the width. */
#define MS_VIEW_MIN_NAME 12
/*
 * A key's name and place for text: "burn_60 (burn.c:12)", with the module
 * "(burn.c:12, burn)" when with_module; the name shortened so the whole
 * fits width columns (0: no limit).
 */
void ms_view_put_key(const struct ms_view_out *o, const struct ms_select *s, uint32_t key,
		     size_t width, bool with_module);
/* The keys "pid", "tid" and "name" of capture thread th, into an open object. */
void ms_view_json_thread(struct ms_json *j, const struct ms_capture *cap,
			 const struct ms_cap_thread *th);
/*
 * The capture's problems table as a JSON array of {stage, code, count,
 * detail}, with meaning for a row ms_jit_problem_meaning() knows.
 */
void ms_view_json_problem_rows(struct ms_json *j, const struct ms_capture *cap);
/* "12.5%" in the heat colour of its share when colour is on. */
void ms_view_put_percent(const struct ms_view_out *o, double percent);

/* The off-CPU view's "incomplete" object: the count, and per missing reason count and lower bound. */
void ms_off_cpu_json_incomplete(struct ms_json *j, const struct ms_off_cpu_view *v);

/*
 * The perf-map settings (capture.h: ms_cap_perf_map), nothing when the
 * capture has none. problems_text: a section per process, its last read's
 * status and each bound's count with what it means; json: an array of
 * {pid, path, status, functions}, with detail also {meaning, err, error,
 * time_ns, bytes_read, code_bytes, issues: [{what, count, meaning}]};
 * summary_text: a line per process.
 */
void ms_perf_maps_problems_text(FILE *out, const struct ms_capture *cap);
void ms_perf_maps_json(struct ms_json *j, const struct ms_capture *cap, bool detail);
void ms_perf_maps_summary_text(FILE *out, const struct ms_capture *cap);

/*
 * The Python processes (capture.h: ms_cap_py_process; pyprocs.c), nothing
 * when the capture has none. summary_text: a line per row; problems_text:
 * the rows whose status is not ok, with the reason (or what the status
 * means); json: an array of {pid, time_ns, status, version, version_hex,
 * source, path, engine, reason}, only the rows not ok with problems_only.
 */
void ms_py_processes_summary_text(FILE *out, const struct ms_capture *cap);
void ms_py_processes_problems_text(FILE *out, const struct ms_capture *cap);
void ms_py_processes_json(struct ms_json *j, const struct ms_capture *cap, bool problems_only);
bool ms_py_processes_any_problem(const struct ms_capture *cap);
/* The capture's label spans (labelsum.c): a summary line, and its JSON value. */
void ms_labels_summary_text(FILE *out, const struct ms_capture *cap);
void ms_labels_json(struct ms_json *j, const struct ms_capture *cap);

/*
 * JIT objects (jitobjects.c). ms_jit_problem_meaning: what a problem row
 * of the GDB JIT interface (ms-collect's jit-descriptor-*, jit-object-*,
 * jit-objects-max, jit-process-gone; ms-unwind's jit-object-*) means for
 * the profile and what to do, NULL for any other. summary_text: a line per
 * process whose samples ran in jit-object modules (objects sampled,
 * samples in their code); json: the key "jit_objects" with
 * [{pid, objects, samples}], nothing when the capture has no jit-object
 * module. -1 after a message when out of memory.
 */
const char *ms_jit_problem_meaning(const char *stage, const char *code);
int ms_jit_objects_summary_text(FILE *out, const struct ms_capture *cap);
int ms_jit_objects_json(struct ms_json *j, const struct ms_capture *cap);


/*
 * The tasks of thread snapshots (tasks.c): a summary line per kind, and
 * the summary's JSON value {tasks, snapshots, changed, dropped}; nothing
 * when the capture has no tasks.
 */
void ms_tasks_summary_text(FILE *out, const struct ms_capture *cap);
void ms_tasks_summary_json(struct ms_json *j, const struct ms_capture *cap);
/* The tasks view (q: its thread filters): a row per task. */
int ms_tasks_write(const struct ms_view_out *o, const struct ms_capture *cap,
		   const struct ms_query *q);

#endif
