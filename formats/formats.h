/*
 * Converters between a capture (capture/capture.h) and the formats other
 * tools read: pprof, folded stacks, Chrome's Trace Event Format and
 * speedscope. ms-export, `microscope convert` and `ms-capture --import`
 * are thin commands over this header.
 *
 * Exporters read a loaded (so validated) capture and write one file. They
 * stream: besides the capture itself, what they hold is bounded by the
 * number of unique stacks (and threads), never by the number of samples.
 * Output is deterministic: the same capture gives the same bytes.
 *
 * Importers treat their input as hostile. They either build a capture
 * through the capture builder, so it holds every invariant a capture read
 * from disk holds, or print one message naming the input and the position
 * (byte, line, or table row) that is wrong and return NULL: nothing
 * half-built ever reaches the caller.
 *
 * A stack that ended early (capture/funcs.h: ms_stack_end_truncated())
 * gets a synthetic outermost frame naming why, ms_truncated_label(), in
 * every export, so no viewer draws a cut stack's outermost frame as a root.
 *
 * Loss is a property of each converter: man/ms-export.1 lists the facts
 * each keeps and drops, and ms_export_note_loss() says in one line which
 * facts present in a given capture a format drops.
 *
 * Every function returns 0 (or a capture), or -1 (NULL) after one message.
 */
#ifndef MS_FORMATS_FORMATS_H
#define MS_FORMATS_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"
#include "capture/look.h"
#include "util/input.h"

enum ms_format {
	MS_FORMAT_NONE = 0,
	MS_FORMAT_CAPTURE,	/* a microscope capture (.msc) */
	MS_FORMAT_PPROF,	/* gzip-compressed profile.proto */
	MS_FORMAT_FOLDED,	/* "outer;inner COUNT" lines */
	MS_FORMAT_CHROME,	/* Trace Event Format JSON */
	MS_FORMAT_SPEEDSCOPE,	/* speedscope's file format (JSON) */
};

/* "pprof", "folded", ...; "" for MS_FORMAT_NONE. */
const char *ms_format_name(enum ms_format f);
/* The format named name ("pprof"), or MS_FORMAT_NONE. */
enum ms_format ms_format_by_name(const char *name);
/*
 * The format a file name says, by its ending: .msc; .pb.gz, .pb, .pprof;
 * .folded, .collapsed, .txt; .speedscope.json; .json (Chrome trace).
 * MS_FORMAT_NONE when the name says nothing.
 */
enum ms_format ms_format_by_extension(const char *path);
/*
 * The format the first bytes of a file show: a capture's magic, gzip's
 * magic (pprof), or MS_FORMAT_NONE when they prove nothing.
 */
enum ms_format ms_format_by_magic(const void *buf, size_t len);

/* What a folded line or a speedscope sample weighs. */
enum ms_weight {
	MS_WEIGHT_SAMPLES = 0,	/* one per sample */
	MS_WEIGHT_TIME = 1,	/* the time the samples stand for: their periods (nanoseconds
				   for cpu-clock), scaled by the duty in force (capture/weight.h) */
	MS_WEIGHT_OFF_CPU = 2,	/* not the samples: the nanoseconds of the complete off-CPU
				   intervals (capture.h: ms_cap_interval), by switch-out stack */
	MS_WEIGHT_SNAPSHOTS = 3,	/* not the samples: one per thread snapshot (capture.h:
					   ms_cap_wait, record --python snapshot), at its stack */
};

/* The two shapes of a Chrome trace. */
enum ms_chrome_form {
	/* "X" events per function on each thread's time line (flame chart) */
	MS_CHROME_EVENTS = 0,
	/* "stackFrames" and "samples": one entry per sample */
	MS_CHROME_SAMPLES = 1,
};

struct ms_export_options {
	enum ms_weight weight;		/* folded, speedscope */
	bool thread_root;		/* folded: each stack starts with its thread */
	enum ms_chrome_form chrome_form;
	const char *producer;		/* "NAME VERSION", written where a format has room */
	/*
	 * The off-CPU intervals written (pprof, and folded and speedscope
	 * weighed by off-cpu): those whose evidence's cause is in this set
	 * of 1 << enum ms_off_cpu_cause (stream/records.h); 0: every cause.
	 */
	unsigned causes;
	/*
	 * How each stack is seen (capture/look.h): mixed (as recorded), native
	 * (no interpreted frames) or python. ms_export() applies it; the
	 * format functions write the capture they are given.
	 */
	enum ms_look look;
};
#define MS_EXPORT_OPTIONS_INIT { MS_WEIGHT_SAMPLES, false, MS_CHROME_EVENTS, NULL, 0, MS_LOOK_MIXED }

/*
 * Option values by name ("samples", "time", "off-cpu", "snapshots"; "events", "samples"):
 * 0, or -1 (no message).
 */
int ms_weight_by_name(const char *name, enum ms_weight *out);
int ms_chrome_form_by_name(const char *name, enum ms_chrome_form *out);
/*
 * Causes by name, a comma-separated list of ms_off_cpu_cause_name()s
 * ("sleeping,blocked"), added to *causes: 0, or -1 (no message) when a
 * name is none of them or the list is empty.
 */
int ms_causes_by_name(const char *list, unsigned *causes);

/*
 * Whether cap can be exported as format f with o: weighing by off-CPU
 * time, or choosing causes, needs a capture that recorded off-CPU time
 * (MS_CAPTURE_OFF_CPU), and a format that carries it; weighing by
 * snapshots a capture with wait rows and folded or speedscope. Returns 0, or -1
 * after one message naming the input (what) and what to do.
 */
int ms_export_check(const struct ms_capture *cap, enum ms_format f,
		    const struct ms_export_options *o, const char *what);

/*
 * Write cap to out in format f (an export format: not NONE or CAPTURE).
 * Write errors are left on out for the caller (ferror, fflush).
 */
int ms_export(FILE *out, const struct ms_capture *cap, enum ms_format f,
	      const struct ms_export_options *o);
int ms_pprof_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o);
int ms_folded_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o);
int ms_chrome_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o);
int ms_speedscope_export(FILE *out, const struct ms_capture *cap,
			 const struct ms_export_options *o);

/*
 * Chrome traces of the events form grow with the samples times their
 * stacks' depth: two million samples make gigabytes. ms_chrome_estimate()
 * says how many bytes ms_chrome_export() would write with o: a bound from
 * the stacks' depths when that is at most limit, else the exact count, by
 * a pass that writes nothing (a fraction of the export's time), so any
 * answer above limit is exact. UINT64_MAX when it cannot tell.
 */
uint64_t ms_chrome_estimate(const struct ms_capture *cap, const struct ms_export_options *o,
			    uint64_t limit);
/*
 * Past this size ms-export warns before it writes; one large enough that
 * a viewer struggles to open the file (speedscope and Chrome's trace
 * viewer load it whole).
 */
#define MS_EXPORT_WARN_BYTES (1ull << 30)
/*
 * When format f's output of cap would pass limit bytes (only a Chrome
 * trace can; the other formats hold one entry per unique stack or run),
 * print one warning to stderr naming the input (what), the size, and a
 * smaller way to write it. Returns the estimate, 0 for other formats.
 */
uint64_t ms_export_warn_size(const struct ms_capture *cap, enum ms_format f,
			     const struct ms_export_options *o, const char *what, uint64_t limit);

/*
 * Facts a capture can hold that a format may not carry. ms_capture_facts()
 * says which are present in cap; ms_format_keeps() which a format keeps
 * with these options.
 */
enum ms_fact {
	MS_FACT_TIMES = 1 << 0,		/* when each sample was taken */
	MS_FACT_CPUS = 1 << 1,		/* the CPU of each sample */
	MS_FACT_THREADS = 1 << 2,	/* which thread (pid, tid, name) */
	MS_FACT_COUNTS = 1 << 3,	/* how many samples */
	MS_FACT_PERIODS = 1 << 4,	/* each sample's weight (period) */
	MS_FACT_ADDRESSES = 1 << 5,	/* the address of each frame */
	MS_FACT_MODULES = 1 << 6,	/* module paths and build ids */
	MS_FACT_FRAME_FLAGS = 1 << 7,	/* return-address and kernel marks */
	MS_FACT_STACK_ENDS = 1 << 8,	/* why each unwinding ended */
	MS_FACT_PROBLEMS = 1 << 9,	/* problems, lost and throttled records */
	MS_FACT_INFO = 1 << 10,		/* recording facts: host, event, ... */
	MS_FACT_INCOMPLETE = 1 << 11,	/* the mark of a salvaged capture */
	MS_FACT_DUTY = 1 << 12,		/* the sampling duty under a CPU budget: kept
					   where samples weigh their time */
	MS_FACT_OFF_CPU = 1 << 13,	/* the time of complete off-CPU intervals */
	MS_FACT_INCOMPLETE_INTERVALS = 1 << 14,	/* off-CPU intervals with an end missing:
						   no duration, so no format carries them */
	MS_FACT_LABELS = 1 << 15,	/* label spans (the GIL): pprof keeps each
					   sample's values as its labels */
	MS_FACT_SNAPSHOTS = 1 << 16,	/* thread snapshots (wait rows): pprof keeps them
					   as a sample type; folded and speedscope
					   weighed by snapshots */
};
unsigned ms_capture_facts(const struct ms_capture *cap);
unsigned ms_format_keeps(enum ms_format f, const struct ms_export_options *o);
/*
 * When format f drops facts present in cap, print one line to stderr
 * naming them and the input (what), and return the dropped set.
 */
unsigned ms_export_note_loss(const struct ms_capture *cap, enum ms_format f,
			     const struct ms_export_options *o, const char *what);

/*
 * Write cap to path in format f, or to stdout when path is NULL or "-".
 * A file is written under a temporary name in the same directory and
 * renamed when complete: on failure nothing is left under path. A path
 * that exists and is not a regular file (/dev/null, a FIFO) is written in
 * place. Returns 0, or -1 after a message; errno is then EPIPE when
 * downstream closed stdout (said as "downstream closed the pipe"), and
 * not EPIPE otherwise.
 */
int ms_export_file(const char *path, const struct ms_capture *cap, enum ms_format f,
		   const struct ms_export_options *o);

/*
 * Importers. buf holds the whole input (len bytes; not kept); name names
 * it in messages. producer ("ms-capture 0.1.0") is recorded as the
 * capture's producer. Limits: see MS_IMPORT_*.
 *
 * A sample's count becomes the count of one sample row (capture.h), never
 * that many rows: what an import holds is bounded by its input's size
 * (a row per folded line or pprof sample), whatever the counts claim.
 * Counts may be anything whose sum fits in 64 bits.
 */
#define MS_IMPORT_PPROF_MAX (1u << 30)		/* bytes of a profile, unzipped */
#define MS_IMPORT_LINE_MAX (1u << 20)		/* bytes of one folded line */
struct ms_capture *ms_pprof_import(const void *buf, size_t len, const char *name,
				   const char *producer);
struct ms_capture *ms_folded_import(const void *buf, size_t len, const char *name,
				    const char *producer);
/*
 * Read path ("-" or NULL: stdin) whole and import it as format f (pprof
 * or folded). Input over MS_IMPORT_PPROF_MAX bytes is refused.
 */
struct ms_capture *ms_import_file(const char *path, enum ms_format f, const char *producer);

/*
 * Import input (as ms_import_file) and write the capture to output, under
 * a temporary name renamed when complete: on any failure nothing is left
 * under output.
 */
int ms_import_write(const char *input, enum ms_format f, const char *output,
		    const char *producer);

/* ms_read_file() is util/input.h's, declared there. */

#endif
