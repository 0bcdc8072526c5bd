/*
 * The capture (.msc): an immutable, validated set of dense tables. The
 * on-disk format is specified in man/microscope-capture.5; this is the
 * in-memory model every consumer (ms-analyze, ms-export, ms-capture --dump)
 * reads, and the builder that ms-capture and importers fill.
 *
 * Invariants a loaded capture guarantees (the reader checks them all before
 * returning, so consumers index without checking):
 *  - every string id < n_strings; string 0 is "" (the absent string);
 *  - every module, frame, stack and thread reference is < its table's count
 *    or MS_NONE where the field allows it;
 *  - a frame's lines lie inside the lines table, at most
 *    MS_FRAME_LINES_MAX (stream/records.h) of them, and every line's
 *    function is < n_functions (minor 1);
 *  - stacks form a prefix tree: stacks[i].parent < i or MS_NONE (the
 *    outermost frame's node has parent MS_NONE), at most MS_FRAMES_MAX
 *    deep (checked by the reader: views built in memory may go deeper);
 *  - samples are sorted by (time, thread, cpu, stack);
 *  - every sample's count is at least 1, and the counts of all samples
 *    add up to at most UINT64_MAX, so any sum of them a view makes fits
 *    a uint64_t (ms_capture_sample_count());
 *  - duty rows (minor 3) are sorted by strictly increasing time, and each
 *    duty_ppm is 1 to 1000000 (capture/weight.h turns them into time);
 *  - loss rows (minor 4) are at most MS_CAPTURE_LOSSES_MAX, sorted by
 *    strictly increasing (time, source): one row per (time, source); each
 *    time is at least 1, each count at least 1, each source an enum
 *    ms_lost_source; for each source the rows' counts add up to at most
 *    its total (lost_kernel, lost_collector), so no sum of them overflows
 *    (see ms_cap_loss: the rest are losses whose time is unknown);
 *  - intervals (minor 5) reference a thread < n_threads, an evidence row
 *    < n_evidence, a stack < n_stacks or MS_NONE, and hold the times
 *    their missing value says (ms_cap_interval); evidence rows hold a
 *    cause < MS_CAUSE_COUNT, known sources only, and preempt 0 or 1;
 *    intervals exist only with MS_CAPTURE_OFF_CPU;
 *  - modules (minor 6): a module of kind MS_MODULE_PERF_MAP or
 *    MS_MODULE_JIT_OBJECT has a base not 0, a size not 0, and base + size
 *    fits in 64 bits; every other module's base is 0;
 *  - perf-map rows (minor 6) are sorted by strictly increasing pid, each
 *    path a string, each status an enum ms_jit_read_status, each err at
 *    most MS_CAP_ERRNO_MAX;
 *  - interpreted code (minor 7): a module of kind MS_MODULE_INTERPRETED
 *    has no identity (no build id, device, inode, size or mtime) and no
 *    base; every frame of such a module has MS_FRAME_NO_ADDRESS and an
 *    address from 1, which is its text's key (ms_cap_frame); Python
 *    process rows are at most MS_CAPTURE_PY_PROCESSES_MAX, sorted by
 *    strictly increasing (pid, time, status, version_hex, source, path,
 *    engine, reason), each status an enum ms_py_process_status;
 *  - label spans (minor 7) are at most MS_CAPTURE_LABEL_SPANS_MAX, each
 *    of a thread < n_threads, a key and a value that are strings other
 *    than "", start <= end and samples >= 1; sorted by (thread, key,
 *    start), and the spans of one thread and key never overlap: each
 *    starts after the previous one ends (ms_cap_label_span);
 *  - tasks (minor 8) are at most MS_CAPTURE_TASKS_MAX, sorted by strictly
 *    increasing (pid, kind's text, id); each kind a string other than "";
 *    a "thread" task's thread the row of (pid, id), another kind's
 *    MS_NONE; first_time <= last_time; at least one read, waits at most
 *    MS_CAPTURE_WAITS_MAX, waits + changed + dropped fits 64 bits; wait
 *    rows (only with tasks) at most MS_CAPTURE_WAITS_MAX, sorted by
 *    strictly increasing (task, time), each of a task < n_tasks, a stack
 *    < n_stacks or MS_NONE, a reason that is a string other than "" or
 *    MS_NONE, a time inside its task's [first_time, last_time]; a task's
 *    rows number its waits, and its first and last read are a row's time
 *    or counted among its changed and dropped reads;
 *  - tables are in deterministic order: the same stream gives the same
 *    tables and the same file bytes.
 *
 * Ownership: ms_capture_load() returns a capture the caller frees with
 * ms_capture_free(); pointers into it live as long as it does.
 */
#ifndef MS_CAPTURE_CAPTURE_H
#define MS_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_CAPTURE_MAGIC "MSCAPT\r\n"	/* 8 bytes */
#define MS_CAPTURE_MAJOR 1
/*
 * The newest minor this code reads and writes. A capture is written as
 * the oldest minor that holds it: 1.7 when it holds Python data
 * (ms_capture_has_python(): an interpreted module, a frame flagged
 * MS_FRAME_INTERPRETER, a stack ended by an interpreted reason, or a
 * Python process row, a label span), 1.6 when it holds JIT data (a perf-map
 * or jit-object module, or a process's perf-map setting), 1.5 when it has off-CPU intervals
 * (MS_CAPTURE_OFF_CPU), 1.4 when it has loss rows, else 1.3
 * when it has duty rows (MS_CAPTURE_DUTY), else 1.2 when a sample's count
 * is not 1 (MS_CAPTURE_WEIGHTED), else 1.1, so a recording that lost
 * nothing and had no budget stays readable by a 1.1 reader and byte for
 * byte what it was before counts, duty and losses existed. Loss rows need
 * no required flag: a reader before 1.4 skips their section and keeps the
 * totals, which stay the truth (it only lacks the times). JIT data needs
 * none either: a reader before 1.6 skips the perf-map section and the
 * modules' base (rows grew to 80 bytes, which it skips), and shows a
 * perf-map or jit-object module as one of an unknown kind, whose frames
 * keep the names the recording gave them. Python data needs none: a
 * reader before 1.7 skips the py-processes and label-spans sections, shows an interpreted
 * module as one of an unknown kind whose frames keep their names (the
 * stacks as recorded, interpreted frames among native ones: the mixed
 * look), and the interpreted stack ends as unknown reasons.
 */
#define MS_CAPTURE_MINOR 8
#define MS_CAPTURE_MINOR_TASKS 8
#define MS_CAPTURE_MINOR_PYTHON 7
#define MS_CAPTURE_MINOR_JIT 6
#define MS_CAPTURE_MINOR_OFF_CPU 5
#define MS_CAPTURE_MINOR_LOSSES 4
#define MS_CAPTURE_MINOR_DUTY 3
#define MS_CAPTURE_MINOR_WEIGHTED 2
#define MS_CAPTURE_MINOR_UNWEIGHTED 1
#define MS_NONE UINT32_MAX

enum ms_capture_flags {
	MS_CAPTURE_INCOMPLETE = 1 << 0,	/* salvaged from a stream cut short */
	/*
	 * Minor 2, a required flag: some sample row stands for more than one
	 * sample (its count). A reader that ignored counts would show such a
	 * capture as one sample per row, so one that does not know the flag
	 * refuses the file. The builder sets it when it seals a capture with
	 * a count other than 1; the writer writes it the same way.
	 */
	MS_CAPTURE_WEIGHTED = 1 << 16,
	/*
	 * Minor 3, a required flag: the capture has duty rows (the recording
	 * was held to a CPU budget by pausing its events), so a sample stands
	 * for more time than its period. A reader that ignored them would
	 * undercount time, and most where sampling was paused most, so one
	 * that does not know the flag refuses the file. Set exactly when the
	 * capture has duty rows.
	 */
	MS_CAPTURE_DUTY = 1 << 17,
	/*
	 * Minor 5, not a required flag: the recording recorded when its
	 * threads left their CPUs (record --off-cpu), so the capture has an
	 * intervals section, possibly empty (a thread that never slept).
	 * A reader before 1.5 skips the section and shows the CPU samples,
	 * which stay whole; analysis uses the flag to tell "nothing was off
	 * CPU" from "off-CPU time was not recorded".
	 */
	MS_CAPTURE_OFF_CPU = 1 << 1,
};

/*
 * Why a module's frames are not (all) symbolized, minor 1. The writer
 * derives it when it seals the capture, from the module's frames and the
 * info "symbolize" (see ms_cap_module.status); a capture of minor 0 reads
 * as MS_CAP_MODULE_OK everywhere. Values past the last come from a later
 * minor: show them as unknown.
 */
enum ms_cap_module_status {
	MS_CAP_MODULE_OK = 0,		/* nothing to say: every frame has a fact */
	MS_CAP_MODULE_DEFERRED = 1,	/* frames wait for `microscope symbolize` */
	MS_CAP_MODULE_NO_BUILD_ID = 2,	/* deferred, but nothing can prove later which
					   file ran: it has no build id (status_reason:
					   how symbolizing later failed, or 0) */
	MS_CAP_MODULE_NOT_SYMBOLIZED = 3, /* frames without facts, not deferred: no
					   symbolize stage ran over them */
	MS_CAP_MODULE_FAILED = 4,	/* no frame of it got a name; status_reason says
					   why (the reason most of its frames have) */
	MS_CAP_MODULE_PARTIAL = 5,	/* some frames have no name, or lack source
					   facts for a reason about the whole module
					   (no debug file, say): status_reason is the
					   reason most of those have */
	MS_CAP_MODULE_STATUS_COUNT,
};
/* "ok", "deferred", "no-build-id", "not-symbolized", "failed", "partial", or "unknown". */
const char *ms_cap_module_status_name(uint32_t status);

struct ms_cap_module {
	uint32_t path;		/* string: a hint, never identity; a perf-map
				   module's is its map's, a jit-object
				   module's "[jit-object 0xENTRY]" */
	uint32_t kind;		/* enum ms_module_kind (stream/records.h) */
	uint32_t build_id_len;
	uint8_t build_id[20];
	uint32_t dev_maj, dev_min;
	uint64_t ino, size, mtime;
	/*
	 * Minor 1. status (enum ms_cap_module_status), derived at seal:
	 *  - a frame of the module has no fact (MS_CAP_UNSYMBOLIZED): DEFERRED
	 *    when info "symbolize" is "deferred" and the module has a build id,
	 *    NO_BUILD_ID when it is "deferred" and the module has none, else
	 *    NOT_SYMBOLIZED;
	 *  - else, when the module has frames and none has a name or lines:
	 *    FAILED, status_reason the enum ms_frame_reason most of them have
	 *    (the lowest on a tie); but NO_BUILD_ID (with that status_reason)
	 *    when info "symbolize" is "deferred" and it has no build id;
	 *  - else, when some frames have no name, or a reason that speaks of
	 *    the module as a whole (no file, identity, bad ELF, no debug file,
	 *    debug file mismatch, bad DWARF): PARTIAL, status_reason the
	 *    reason most of those frames have (one of a single address, such
	 *    as a named frame the debug information does not describe, does
	 *    not count);
	 *  - else OK.
	 * status_reason is 0 unless status is FAILED, PARTIAL or NO_BUILD_ID.
	 */
	uint32_t status;
	uint32_t status_reason;
	/*
	 * Minor 6: a perf-map or jit-object module's start in the process
	 * (its range is [base, base + size), and its frames' addresses are
	 * absolute, as anonymous ones); 0 for every other kind.
	 */
	uint64_t base;
};

/* A frame: one (module, address) with what symbolization found. */
struct ms_cap_frame {
	uint32_t module;	/* MS_NONE for an address in no module */
	uint32_t flags;		/* enum ms_frame_flags */
	/*
	 * Module-relative, as in the stream; for a frame of an interpreted
	 * module (minor 7) a key from 1: the builder numbers the module's
	 * frames by their text (file, function, line, first line: the
	 * frame's one line), never by the stream's keys, so captures built
	 * from other captures key such a frame by its text.
	 */
	uint64_t address;
	uint32_t name;		/* string; 0 when unnamed */
	uint64_t symbol_start;
	uint32_t reason;	/* enum ms_frame_reason, or MS_CAP_UNSYMBOLIZED */
	/*
	 * Minor 1: the inline chain that debug information gives the address,
	 * rows first_line .. first_line + n_lines - 1 of the lines table,
	 * innermost first (as pprof's Location.line): lines[first_line] is the
	 * function whose code is at the address (an inlined callee when there
	 * are several), lines[first_line + n_lines - 1] the function the
	 * symbol table names. n_lines 0 (and first_line 0): no source facts.
	 * Frames at the same (module, address) share one range.
	 */
	uint32_t first_line;
	uint32_t n_lines;
};

/*
 * A function of the source (minor 1), deduplicated: the table holds each
 * (name, system_name, file, start_line) once, sorted by those string
 * indexes then start_line.
 */
struct ms_cap_function {
	uint32_t name;		/* string: as people read it (demangled) */
	uint32_t system_name;	/* string: the linkage (mangled) name; 0 when
				   the same as name */
	uint32_t file;		/* string: its source file as debug information
				   spells it; 0 when unknown */
	uint32_t start_line;	/* where the function begins; 0 when unknown */
};

/*
 * One entry of a frame's inline chain (minor 1): the function, and the line
 * of the frame's address within it. For an entry that inlined the next
 * inner one, that line is the call site. 0 when unknown.
 */
struct ms_cap_line {
	uint32_t function;	/* function index */
	uint32_t line;
};

/*
 * A frame's reason when the stream held no frame fact for its (module,
 * address): the pipeline had no ms-symbolize stage, or it skipped the frame.
 */
#define MS_CAP_UNSYMBOLIZED UINT32_MAX

/* A node of the stack prefix tree, root = outermost frame. */
struct ms_cap_stack {
	uint32_t parent;	/* MS_NONE at the root */
	uint32_t frame;
	uint32_t depth;		/* 1 at the root */
};

struct ms_cap_thread {
	uint32_t pid, tid;
	uint32_t name;		/* string: last comm seen */
	uint64_t first_time, last_time;	/* of its samples; 0 when none */
};

/*
 * A sample row: count samples of one thread, stack and end reason at one
 * time and CPU. A recording has one row per sample (count 1); an import
 * whose input says "this stack, 67108864 times" makes one row with that
 * count, so nothing a reader holds grows with the number of samples a
 * file claims. Views count a row count times.
 */
struct ms_cap_sample {
	uint64_t time;
	uint32_t thread;
	uint32_t cpu;
	uint32_t stack;		/* innermost frame's node; MS_NONE if no frames */
	uint32_t end;		/* enum ms_stack_end */
	uint64_t period;	/* weight: the sum of the periods of the row's
				   samples (nanoseconds for cpu-clock) */
	uint64_t count;		/* samples the row stands for, at least 1;
				   1 in captures of minor 0 and 1 */
};

struct ms_cap_problem {
	uint32_t stage, code, detail;	/* strings */
	uint64_t count;
};

/*
 * A change of the sampling duty (minor 3), from the stream's duty record
 * (stream/records.h): from time on, the events were on for duty_ppm
 * millionths of the time, so a sample taken then stands for 1000000 /
 * duty_ppm times its period. Before the first row the duty is 1000000.
 */
struct ms_cap_duty {
	uint64_t time;		/* perf clock, ns, as the samples' */
	uint32_t duty_ppm;	/* 1 to 1000000 */
	uint32_t share_ppm;	/* the recording's own CPU, of one CPU, that decided it */
	uint64_t rate;		/* samples per second per running thread, in force */
	uint32_t budget_ppm;	/* the budget, of one CPU */
};

/*
 * Records lost at one time (minor 4), from the stream's lost records
 * (stream/records.h: struct ms_lost): where a timeline marks a gap. The
 * totals (ms_capture.lost_kernel, lost_collector) stay the truth: for
 * each source, the counts of its rows add up to at most its total, and
 * the rest (total - sum) are losses whose time the capture does not know:
 * a lost record of time 0 (how a stream says it has none, and how a dump
 * writes that rest), losses past the builder's bound of
 * MS_CAPTURE_LOSSES_MAX rows (a problem "loss-rows-full" says how many),
 * or every loss of a capture written before 1.4, which has no rows.
 * Sorted by (time, source), one row per (time, source): lost records of
 * one time and source are one row, their counts added.
 */
struct ms_cap_loss {
	uint64_t time;		/* perf clock, ns, as the samples'; never 0 */
	uint64_t count;		/* records lost, at least 1 */
	uint32_t source;	/* enum ms_lost_source (stream/records.h) */
};
/*
 * At most this many loss rows: the builder keeps the rows of the earliest
 * (time, source) pairs (whatever the order the records came in), and a
 * reader refuses a file with more, so a dump of any capture captures
 * again to the same rows.
 */
#define MS_CAPTURE_LOSSES_MAX 65536u

/*
 * Why an off-CPU interval lacks an end (minor 5). An interval with a
 * missing end is incomplete: it is never closed at a time the capture does
 * not know, so it adds nothing to any duration (views count it apart).
 */
enum ms_interval_missing {
	MS_INTERVAL_COMPLETE = 0,
	/* no start: the thread was off CPU when the recording began (attached) */
	MS_INTERVAL_BEGAN_INSIDE = 1,
	/* no end: the thread was still off CPU when the recording ended */
	MS_INTERVAL_ENDED_INSIDE = 2,
	/* no start: records were lost, and the thread came back to a CPU it
	 * was not seen to leave */
	MS_INTERVAL_LOST_START = 3,
	/* no end: records were lost while it was off CPU, so the next
	 * switch-in seen may not be this interval's end */
	MS_INTERVAL_LOST_END = 4,
	MS_INTERVAL_MISSING_COUNT,
};
/* "complete", "began-inside", "ended-inside", "lost-start", "lost-end", or "unknown". */
const char *ms_interval_missing_name(uint32_t missing);

/*
 * A time a thread was off CPU (minor 5): from the switch-out (its
 * sched_switch sample, or its switch record when that sample was lost)
 * to the switch-in that followed. Exactly one of start and end is 0 when
 * missing says an end is missing (BEGAN_INSIDE and LOST_START: start;
 * ENDED_INSIDE and LOST_END: end); when complete, 0 < start <= end. The
 * interval's facts are apart from why the thread left (its evidence row).
 */
struct ms_cap_interval {
	uint64_t start;		/* perf clock, ns, as the samples'; 0 when missing */
	uint64_t end;		/* 0 when missing */
	uint32_t thread;	/* index into threads */
	uint32_t cpu;		/* the CPU it left; MS_NONE when the start is missing */
	uint32_t stack;		/* innermost node of the switch-out stack; MS_NONE if none */
	uint32_t stack_end;	/* enum ms_stack_end of that stack; MS_END_UNKNOWN if none */
	uint32_t missing;	/* enum ms_interval_missing */
	uint32_t evidence;	/* index into evidence */
};

/*
 * Why a thread left its CPU (minor 5), kept apart from the interval: what
 * the kernel said, and the cause (enum ms_off_cpu_cause, stream/records.h)
 * derived from it. Deduplicated: one row per distinct (cause, sources,
 * state, preempt), sorted by those fields.
 */
enum ms_evidence_source {
	MS_EVIDENCE_STATE = 1 << 0,	/* state: the sched_switch prev_state */
	MS_EVIDENCE_SWITCH = 1 << 1,	/* preempt: the switch record's flag */
};
struct ms_cap_evidence {
	uint32_t cause;		/* enum ms_off_cpu_cause */
	uint32_t sources;	/* enum ms_evidence_source; 0: nothing is known */
	uint64_t state;		/* meaningful with MS_EVIDENCE_STATE, else 0 */
	uint32_t preempt;	/* 0 or 1, meaningful with MS_EVIDENCE_SWITCH, else 0 */
};

/*
 * A process's perf-map setting (minor 6): the last MS_REC_JIT_READ record
 * of its pid in the stream (stream/records.h: struct ms_jit_read), whose
 * counts are the process's totals, so the last says what the recording
 * made of the process's perf map: where it is, how far it was read,
 * what each bound kept out. One row per pid, sorted by pid.
 */
struct ms_cap_perf_map {
	uint32_t pid;
	uint32_t path;		/* string: the map's path */
	uint32_t status;	/* enum ms_jit_read_status of the last read */
	uint32_t err;		/* errno of a failed open or read, else 0 */
	uint64_t time;		/* of the last read: perf clock, ns */
	uint64_t offset;	/* bytes of the map read */
	uint64_t functions;	/* lines kept */
	uint64_t malformed;	/* lines that were not START SIZE NAME */
	uint64_t over_max;	/* lines past the function bound, not kept */
	uint64_t no_code;	/* functions past the code budget: no frames proved */
	uint64_t code_unread;	/* functions whose code could not be read */
	uint64_t code_bytes;	/* code read, of the budget */
};
/* The largest err a perf-map row may hold (Linux's errno values are below 4096). */
#define MS_CAP_ERRNO_MAX 4095u

/*
 * What the recording found of a process's Python interpreter (minor 7):
 * a PY_PROCESS record of the stream (stream/records.h: struct
 * ms_py_process), one row per distinct record. A process has a row when
 * it was first looked at and one more each time the finding changed (an
 * exec), so its last row by time is what held at the end.
 */
struct ms_cap_py_process {
	uint32_t pid;
	uint32_t status;	/* enum ms_py_process_status */
	uint32_t version_hex;	/* PY_VERSION_HEX; 0 when unknown */
	uint32_t source;	/* how the layout was found (python/layout.h); 0 none */
	uint64_t time;		/* perf clock, ns */
	uint32_t path;		/* string: the interpreter's module as mapped (a hint) */
	uint32_t engine;	/* string: "bpf" or "snapshot" */
	uint32_t reason;	/* string: why not ok, and what to do; "" when ok */
};
/*
 * At most this many Python process rows: the builder keeps the first it
 * is given (a stream's order is the recording's) and counts the others in
 * a problem "py-process-rows-full"; a reader refuses a file with more.
 */
#define MS_CAPTURE_PY_PROCESSES_MAX 65536u

/*
 * A label a runtime gave a thread over a run of its samples (minor 7):
 * the stream's LABEL_SPAN (stream/records.h: struct ms_label_span), as
 * ms-unwind makes them from the GIL state of Python's walker records
 * (key "gil", value "held" or "released"). The span covers the samples of
 * its thread from start to end, both included: the run's first and last
 * sample. Spans of one thread and key never overlap, so a sample has at
 * most one value per key (capture/labels.h finds it).
 */
struct ms_cap_label_span {
	uint32_t thread;	/* index into threads */
	uint32_t key;		/* string, not "" */
	uint32_t value;		/* string, not "" */
	uint64_t start, end;	/* perf clock, ns; start <= end */
	uint64_t samples;	/* samples of the run, at least 1 */
};
/*
 * At most this many label spans: the builder keeps the first it is given
 * (the stream's order) and counts the others in a problem
 * "label-span-rows-full"; a reader refuses a file with more.
 */
#define MS_CAPTURE_LABEL_SPANS_MAX (1u << 22)

/*
 * Tasks and where snapshots found them waiting (minor 8; the stream's
 * TASK_WAIT, stream/records.h). A snapshot engine reads a runtime's tasks
 * from the live process every so often; Python's thread snapshots
 * (--python snapshot) make each thread a task of kind "thread", whose id
 * is its tid, and each whole read of its frames a wait row at that stack.
 * A task is one row per (pid, kind, id) with the counts of its reads;
 * only complete reads are wait rows (a changed read is never kept
 * shorter: it is counted on its task). Wait rows are another source of
 * stacks beside samples: analysis weighs each as one snapshot (the unit
 * "snapshots"), never mixed with samples in one view.
 */
struct ms_cap_task {
	uint32_t pid;
	uint32_t thread;	/* its row in threads (kind "thread": pid and tid = id), MS_NONE: none */
	uint32_t kind;		/* string, not "": "thread" */
	uint32_t zero;
	uint64_t id;		/* the task's number in its kind: a thread's tid */
	uint64_t first_time, last_time;	/* its first and last read (any status) */
	uint64_t waits;		/* complete reads: its rows in waits */
	uint64_t changed;	/* reads that were not whole (MS_TASK_WAIT_CHANGED) */
	uint64_t dropped;	/* whole reads whose stack was not kept (MS_TASK_WAIT_DROPPED) */
};
struct ms_cap_wait {
	uint32_t task;		/* index into tasks */
	uint32_t stack;		/* index into stacks; MS_NONE: no frames (the thread ran no Python) */
	uint32_t reason;	/* string: why it waits, as its runtime says; MS_NONE: none given */
	uint32_t zero;
	uint64_t time;		/* the read's time, perf clock, ns */
};
/*
 * At most this many task and wait rows: the builder keeps the first it
 * is given (a stream's order is the recording's) and counts the others in
 * problems "task-rows-full" and "wait-rows-full"; a reader refuses a file
 * with more.
 */
#define MS_CAPTURE_TASKS_MAX (1u << 20)
#define MS_CAPTURE_WAITS_MAX (1u << 26)

/* key/value facts from MS_REC_INFO (value_text 0 when numeric). */
struct ms_cap_info {
	uint32_t key;
	uint32_t value_text;
	uint64_t value_number;
};

struct ms_capture {
	uint32_t major, minor;
	uint32_t flags;		/* enum ms_capture_flags */

	uint32_t n_strings;
	const char **strings;	/* NUL-terminated */

	uint32_t n_info;
	struct ms_cap_info *info;	/* sorted by key string */
	uint32_t n_modules;
	struct ms_cap_module *modules;
	uint32_t n_frames;
	struct ms_cap_frame *frames;
	uint32_t n_functions;		/* minor 1 */
	struct ms_cap_function *functions;
	uint32_t n_lines;		/* minor 1 */
	struct ms_cap_line *lines;	/* grouped by frame: see ms_cap_frame */
	uint32_t n_stacks;
	struct ms_cap_stack *stacks;
	uint32_t n_threads;
	struct ms_cap_thread *threads;	/* sorted by (pid, tid) */
	uint32_t n_samples;
	struct ms_cap_sample *samples;
	uint32_t n_problems;
	struct ms_cap_problem *problems;
	uint32_t n_duty;		/* minor 3; 0 when sampling was never paused */
	struct ms_cap_duty *duty;	/* sorted by time, one row per time */
	uint32_t n_losses;		/* minor 4; 0 when nothing was lost, or
					   the capture does not know when */
	struct ms_cap_loss *losses;	/* sorted by (time, source), one row per pair */
	uint32_t n_intervals;		/* minor 5: with MS_CAPTURE_OFF_CPU */
	struct ms_cap_interval *intervals; /* sorted by (start or else end, thread, end, stack) */
	uint32_t n_evidence;		/* minor 5 */
	struct ms_cap_evidence *evidence;
	uint32_t n_perf_maps;		/* minor 6: processes with a perf-map setting */
	struct ms_cap_perf_map *perf_maps;	/* sorted by pid, one row each */
	uint32_t n_py_processes;	/* minor 7: what the Python engine found */
	struct ms_cap_py_process *py_processes;	/* sorted (invariants above) */
	uint32_t n_label_spans;		/* minor 7: labels over runs of samples */
	struct ms_cap_label_span *label_spans;	/* sorted by (thread, key, start) */
	uint32_t n_tasks;		/* minor 8: tasks snapshots found */
	struct ms_cap_task *tasks;	/* sorted by (pid, kind's text, id), one row each */
	uint32_t n_waits;		/* minor 8: complete reads of tasks */
	struct ms_cap_wait *waits;	/* sorted by (task, time), one row per (task, time) */

	/* totals from the stream (with the loss rows or without: see ms_cap_loss) */
	uint64_t lost_kernel;		/* records the kernel dropped */
	uint64_t lost_collector;	/* records ms-collect could not pass on */
	uint64_t throttled;		/* throttle events */
	uint64_t start_time, end_time;	/* perf clock, ns */
	int32_t target_exit_code;	/* -1 when unknown or attached */

	void *storage;		/* owned backing memory */
};

/* Load and validate (path "-": standard input); NULL after one message naming the file and section. */
struct ms_capture *ms_capture_load(const char *path);
/* The same over bytes in memory (not kept); name names them in messages. */
struct ms_capture *ms_capture_load_buffer(const void *buf, size_t len, const char *name);
void ms_capture_free(struct ms_capture *cap);

/*
 * Serialize cap to a new malloc'd buffer (*buf, *len): the same tables give
 * the same bytes. It writes what it is given without checking it: a capture
 * from the builder (capture/builder.h) or the loader holds the invariants.
 * Returns 0, or -1 after one message.
 */
int ms_capture_encode(const struct ms_capture *cap, unsigned char **buf, size_t *len);
/*
 * Write cap to path: to path.tmp-XXXXXX (mkostemp) in the same directory,
 * fsync'd, then renamed over path, so path is never a partial file
 * (util/publish.h; a path that is not a regular file, such as a FIFO, is
 * written in place). On failure the temporary file is removed and path is
 * untouched. Returns 0 or -1.
 */
int ms_capture_write(const struct ms_capture *cap, const char *path);
/*
 * The number of samples: the sum of the rows' counts (no overflow: the
 * reader and the builder refuse more than UINT64_MAX).
 */
uint64_t ms_capture_sample_count(const struct ms_capture *cap);
/*
 * When the recording ran, on the samples' clock: the info "start-time"
 * and "end-time" (the collector's, or an import's 0 and its duration)
 * when both are there in order, else the first and last sample's times.
 */
void ms_capture_span(const struct ms_capture *cap, uint64_t *start, uint64_t *end);
/*
 * Whether cap holds JIT data (a perf-map or jit-object module, or a
 * perf-map row): what makes a capture of minor 6.
 */
bool ms_capture_has_jit(const struct ms_capture *cap);
/*
 * Whether cap holds Python data (an interpreted module, a frame flagged
 * MS_FRAME_INTERPRETER, a sample or interval ended by an interpreted
 * reason, a Python process row, a label span): what makes a capture of
 * minor 7.
 */
bool ms_capture_has_python(const struct ms_capture *cap);
/* Whether cap holds tasks (and so perhaps wait rows): what makes a capture of minor 8. */
bool ms_capture_has_tasks(const struct ms_capture *cap);
/*
 * NULL when a module of kind may have this identity, else what is wrong,
 * said after "a KIND module": an interpreted module ("with a build id",
 * "with a file identity") has none. The builder and the reader hold every
 * module to it.
 */
const char *ms_module_identity_wrong(uint32_t kind, uint32_t build_id_len, uint32_t dev_maj,
				     uint32_t dev_min, uint64_t ino, uint64_t size, uint64_t mtime);
/* Whether end is one of the interpreted ends (MS_END_INTERPRETED_*). */
bool ms_stack_end_interpreted(uint32_t end);
/* Whether frame f is interpreted code (its module's kind is MS_MODULE_INTERPRETED). */
bool ms_frame_interpreted(const struct ms_capture *cap, const struct ms_cap_frame *f);
/* Whether modules of kind have a base (perf-map, jit-object: their range in the process). */
bool ms_module_kind_has_base(uint32_t kind);
/*
 * NULL when a module of kind may have this base and size (a ranged kind's
 * range lies in the address space; no other kind has a base), else what is
 * wrong, said after "a KIND module" ("without a base"). The builder and
 * the reader hold every module to it.
 */
const char *ms_module_base_wrong(uint32_t kind, uint64_t base, uint64_t size);
/* The perf-map row of pid, or NULL. */
const struct ms_cap_perf_map *ms_capture_perf_map(const struct ms_capture *cap, uint32_t pid);
/* Info value by key, or NULL / false when absent. */
const char *ms_capture_info_text(const struct ms_capture *cap, const char *key);
bool ms_capture_info_number(const struct ms_capture *cap, const char *key, uint64_t *out);

#endif
