/*
 * Record kinds of the stream and their fields: the contract between stages.
 * man/microscope-stream.5 documents each; keep the two in step.
 *
 * Every record is a msgpack array [kind, field1, field2, ...] with the
 * fields in the order of the struct below. Integers are msgpack unsigned
 * unless said otherwise; byte strings are msgpack bin; text is msgpack str.
 * A reader accepts extra trailing fields (added by a later minor version)
 * and ignores them; a missing field or a field of the wrong type is a
 * malformed record.
 *
 * ms_*_pack() writes one record through the writer (begin..end included).
 * ms_*_unpack() fills the struct from a record the reader returned; it
 * returns 0, or -1 after a message naming the record kind, field and the
 * record's offset. Pointers in an unpacked struct (strings, the stack copy)
 * borrow from the reader's buffer and stay valid until the next read.
 * Strings unpacked are NOT NUL-terminated in the buffer: each has a length;
 * fixed arrays (chains, registers) are copied and bounded by the MAX below.
 */
#ifndef MS_STREAM_RECORDS_H
#define MS_STREAM_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/stream.h"

enum ms_record_kind {
	MS_REC_HEADER = 0,	/* ["microscope-stream", major, minor, [[name, version]...]] */
	MS_REC_TRAILER = 1,	/* [records, complete] */
	MS_REC_PROBLEM = 2,	/* struct ms_problem */
	MS_REC_INFO = 3,	/* struct ms_info: recording facts */
	MS_REC_PY_PROCESS = 5,	/* minor 6: struct ms_py_process (ms-collect's; the 10s are full) */
	MS_REC_PY_CODE = 6,	/* minor 6: struct ms_py_code (ms-collect's) */
	MS_REC_PY_SNAPSHOT = 7,	/* minor 7: struct ms_py_snapshot (ms-collect's) */
	MS_REC_JIT_OBJECT = 9,	/* minor 5: struct ms_jit_object (ms-collect's; the 10s are full) */

	/* written by ms-collect */
	MS_REC_ATTR = 10,	/* struct ms_attr: how to decode raw records */
	MS_REC_RAW = 11,	/* struct ms_raw: one kernel perf record, unparsed */
	MS_REC_TARGET = 12,	/* struct ms_target: the process launched or attached */
	MS_REC_TARGET_EXIT = 13, /* struct ms_target_exit */
	MS_REC_ROUND = 14,	/* [14]: every ring was drained up to here */
	MS_REC_VDSO = 15,	/* minor 2: struct ms_vdso */
	MS_REC_DUTY = 16,	/* minor 3: struct ms_duty */
	MS_REC_TRACEPOINT = 17,	/* minor 4: struct ms_tracepoint */
	MS_REC_JIT_FUNC = 18,	/* minor 5: struct ms_jit_func */
	MS_REC_JIT_READ = 19,	/* minor 5: struct ms_jit_read */

	/* written by ms-decode */
	MS_REC_SAMPLE = 20,
	MS_REC_MMAP = 21,
	MS_REC_COMM = 22,
	MS_REC_FORK = 23,
	MS_REC_EXIT = 24,
	MS_REC_LOST = 25,
	MS_REC_THROTTLE = 26,
	MS_REC_STACK_FILE = 27,	/* minor 2: struct ms_stack_file */
	MS_REC_SWITCH = 28,	/* minor 4: struct ms_switch */
	MS_REC_SWITCH_OUT = 29,	/* minor 4: struct ms_switch_out */

	/* written by ms-unwind */
	MS_REC_MODULE = 30,
	MS_REC_STACK = 31,
	MS_REC_STACK_DEF = 32,	/* minor 2: a unique stack, numbered */
	MS_REC_STACK_REF = 33,	/* minor 2: struct ms_stack_ref */
	MS_REC_OFF_CPU = 34,	/* minor 4: struct ms_off_cpu */
	MS_REC_PY_STACK = 36,	/* minor 6: struct ms_py_stack (ms-decode's: the 20s are full) */
	MS_REC_LABEL_SPAN = 37,	/* minor 6: struct ms_label_span (ms-unwind's) */
	MS_REC_TASK_WAIT = 38,	/* minor 7: struct ms_task_wait (ms-unwind's, ms-capture --dump's) */

	/* written by ms-capture --dump */
	MS_REC_INTERVAL = 35,	/* minor 4: struct ms_interval */

	/* written by ms-symbolize */
	MS_REC_FRAME = 40,
};

/* Printable name of a kind ("sample"), or "unknown". */
const char *ms_record_kind_name(uint32_t kind);

/* A text field borrowed from the record. */
struct ms_str {
	const char *ptr;
	uint32_t len;
};

/*
 * A problem that let the stream continue, counted. Stages emit one record
 * per (stage, code) with the total count and the first example, just before
 * their trailer; problems from upstream pass through.
 * [2, stage, code, count, detail]
 */
struct ms_problem {
	struct ms_str stage;	/* "ms-decode" */
	struct ms_str code;	/* stable, machine-readable: "truncated-sample" */
	uint64_t count;
	struct ms_str detail;	/* first example, human-readable */
};

/*
 * A fact about the recording: "command", "hostname", "kernel", "event",
 * "frequency", "period", "stack-size", "start-time", "end-time", ...;
 * ms-unwind adds "unwind-policy" ("dwarf", "fp" or "dwarf+fp").
 * [3, key, value] where value is str or an unsigned integer.
 */
struct ms_info {
	struct ms_str key;
	bool is_text;
	struct ms_str text;
	uint64_t number;
};

/*
 * How the following raw records were produced: the parts of
 * perf_event_attr a decoder needs. One per distinct attr; ids lists the
 * kernel sample ids (PERF_EVENT_IOC_ID) of the events opened with it.
 * [10, type, config, sample_type, read_format, sample_regs_user,
 *  sample_stack_user, flags, [id...]]
 */
#define MS_ATTR_IDS_MAX 1024
enum ms_attr_flags {
	MS_ATTR_SAMPLE_ID_ALL = 1 << 0,
	MS_ATTR_FREQ = 1 << 1,
	MS_ATTR_EXCLUDE_KERNEL = 1 << 2,
	MS_ATTR_BUILD_ID = 1 << 3,	/* mmap2 records may carry build ids */
};
struct ms_attr {
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	uint32_t flags;
	uint32_t n_ids;
	uint64_t ids[MS_ATTR_IDS_MAX];
};

/*
 * One kernel record exactly as read from the ring of CPU cpu (the ring's
 * index); data starts with struct perf_event_header.
 * [11, cpu, bin]
 */
struct ms_raw {
	uint32_t cpu;
	const uint8_t *data;
	uint32_t len;
};

/*
 * [12, pid, launched, [argv...]]: the process recorded. launched is true
 * when ms-collect started it, false when it attached.
 */
#define MS_ARGV_MAX 64
struct ms_target {
	uint32_t pid;
	bool launched;
	uint32_t argc;
	struct ms_str argv[MS_ARGV_MAX];
};

/* [13, pid, wait_status, exit_code]: how a launched target ended. */
struct ms_target_exit {
	uint32_t pid;
	uint32_t wait_status;	/* as from waitpid() */
	uint32_t exit_code;	/* 0-255, 128+N for a signal */
};

/*
 * Minor version 3: the sampling duty changed (perf/budget.h): from time on,
 * the events are on for duty_ppm millionths of each slice, so that a
 * sample stands for 1000000 / duty_ppm times its period. ms-collect writes
 * one when --budget lowers or raises the duty, decided from share_ppm (the
 * recording's own CPU share in the window that ended at time) against
 * budget_ppm; rate is the sampling rate in force (requested rate x duty).
 * [16, time, duty_ppm, rate, share_ppm, budget_ppm]
 */
struct ms_duty {
	uint64_t time;		/* CLOCK_MONOTONIC ns, as samples' */
	uint32_t duty_ppm;	/* 1 to 1000000 */
	uint64_t rate;		/* samples per second per running thread, in force */
	uint32_t share_ppm;	/* of one CPU, in the window that decided it */
	uint32_t budget_ppm;	/* of one CPU */
};

/*
 * Minor version 4: how the RAW data of a tracepoint's samples is laid out,
 * as the kernel's tracefs format file (events/SYSTEM/NAME/format) says:
 * ms-collect reads it, because later stages read no files of the host.
 * config is the tracepoint's id (the attr's config); name is
 * "sched:sched_switch"; the four arrays are parallel, one entry per field
 * of the format, common fields included: the field's name ("prev_state"),
 * its offset and size in bytes within the RAW data, and 1 when it is
 * signed. At most MS_TRACEPOINT_FIELDS_MAX fields; a reader refuses arrays
 * of unequal length.
 * [17, config, name, [field...], [offset...], [size...], [signed...]]
 */
#define MS_TRACEPOINT_FIELDS_MAX 64
struct ms_tracepoint {
	uint64_t config;
	struct ms_str name;
	uint32_t n_fields;
	struct ms_str fields[MS_TRACEPOINT_FIELDS_MAX];
	uint32_t n_offsets;
	uint64_t offsets[MS_TRACEPOINT_FIELDS_MAX];
	uint32_t n_sizes;
	uint64_t sizes[MS_TRACEPOINT_FIELDS_MAX];
	uint32_t n_signed;
	uint64_t is_signed[MS_TRACEPOINT_FIELDS_MAX];
};

/*
 * Minor version 2: the image of the kernel's vdso, the code the kernel maps
 * into every process as "[vdso]" and that no file on disk holds. ms-collect
 * copies its own (the same image for every 64-bit process of the host),
 * once, before any raw record, so that later stages can read its build id,
 * call-frame information and symbols. None when the host maps no vdso.
 * [15, bin image]
 */
#define MS_VDSO_MAX 65536
struct ms_vdso {
	const uint8_t *image;	/* borrowed from the record */
	uint32_t len;		/* 1..MS_VDSO_MAX */
};

/*
 * Minor version 5: a JIT function as ms-collect read it from a process's
 * perf map (/tmp/perf-PID.map, source MS_JIT_PERF_MAP): the map's line
 * (from 1) said [start, end) holds name. Nothing describes such code's
 * frames, so ms-collect read the function's first bytes from the process
 * when it read the line and proved its frame from them (jit/rows.h): rows
 * is that table as ms_rows_encode() writes it, empty when no code was read
 * (flags say why). time is when the line was read (CLOCK_MONOTONIC ns, as
 * samples'): a mapping made over the function after that time ends it,
 * one made before does not (the line may name the new code).
 *
 * ms-collect writes the records of one read before the raw record of the
 * sample that made it read (a sample in anonymous code no function it had
 * read covered); ms-decode lets them go ahead of every record it still
 * holds for ordering, so that every sample not yet passed on, that one
 * included, is unwound and named with them.
 * [18, pid, time, start, end, name, source, line, flags, bin rows]
 */
enum ms_jit_source {
	MS_JIT_PERF_MAP = 0,
	MS_JIT_SOURCE_COUNT,
};
enum ms_jit_func_flags {
	MS_JIT_NO_CODE = 1 << 0,	/* past the code budget: not read, no frames proved */
	MS_JIT_CODE_UNREAD = 1 << 1,	/* reading it from the process failed */
};
#define MS_JIT_ROWS_MAX 4096	/* bytes: more than ms_rows_encode() ever writes */
struct ms_jit_func {
	uint32_t pid;
	uint64_t time;
	uint64_t start, end;	/* start < end */
	struct ms_str name;	/* not empty */
	uint32_t source;	/* enum ms_jit_source */
	uint32_t line;
	uint32_t flags;		/* enum ms_jit_func_flags */
	const uint8_t *rows;	/* borrowed from the record */
	uint32_t rows_len;	/* 0 to MS_JIT_ROWS_MAX */
};

/*
 * Minor version 5: what ms-collect's reads of one process's perf map came
 * to, written after a read that found something new or ended otherwise
 * than the one before. The counts are the process's totals so far, so the
 * last record of a process is its perf-map setting: path is the map,
 * offset how far it was read (bytes), functions the lines kept, and what
 * was bounded or refused (jit/perfmap.h: MS_PERFMAP_*_MAX). err is the
 * errno of a failed open or read, else 0.
 * [19, pid, time, path, status, err, offset, functions, malformed,
 *  over_max, no_code, code_unread, code_bytes]
 */
enum ms_jit_read_status {
	MS_JIT_READ_OK = 0,		/* read to its end */
	MS_JIT_READ_BOUNDED = 1,	/* one read's bound reached: the next goes on from offset */
	MS_JIT_READ_MISSING = 2,	/* the process has no map */
	MS_JIT_READ_STALE = 3,		/* older than the process: an earlier one's, not read */
	MS_JIT_READ_FAILED = 4,		/* opening or reading it failed (err) */
	MS_JIT_READ_STATUS_COUNT,
};
const char *ms_jit_read_status_name(uint32_t status);
struct ms_jit_read {
	uint32_t pid;
	uint64_t time;
	struct ms_str path;
	uint32_t status;	/* enum ms_jit_read_status */
	uint32_t err;
	uint64_t offset;
	uint64_t functions;
	uint64_t malformed;	/* lines that were not START SIZE NAME */
	uint64_t over_max;	/* lines past the function bound, not kept */
	uint64_t no_code;	/* functions past the code budget */
	uint64_t code_unread;	/* functions whose code could not be read */
	uint64_t code_bytes;	/* of the code budget, read */
};

/*
 * Minor version 5: an object a process registered through the GDB JIT
 * interface (__jit_debug_descriptor, as GDB documents it): an ELF image
 * whose sections lie at the addresses its code runs at, with its symbols
 * and call-frame information. ms-collect copies it from the process when
 * a sample lands in code nothing names (and reads the descriptor again
 * only when its bytes changed or a mapping replaced an object's code).
 * entry is the registration's identity (its jit_code_entry's address),
 * addr where the image lies (symfile_addr), size its bytes (at most
 * MS_JIT_OBJECT_MAX); time when it was read, as JIT_FUNC's. The image
 * comes in chunks of at most MS_JIT_OBJECT_CHUNK bytes, one record each,
 * consecutive, offsets from 0 covering [0, size) in order; a record of
 * size 0 (no chunk) says the entry was unregistered at time. ms-decode
 * lets them go ahead as it does JIT_FUNC.
 * [9, pid, time, entry, addr, size, offset, bin chunk]
 */
#define MS_JIT_OBJECT_MAX (4u << 20)
#define MS_JIT_OBJECT_CHUNK (128u << 10)
struct ms_jit_object {
	uint32_t pid;
	uint64_t time;
	uint64_t entry;
	uint64_t addr;
	uint64_t size;		/* 0: unregistered */
	uint64_t offset;	/* of chunk in the image */
	const uint8_t *chunk;	/* borrowed from the record */
	uint32_t chunk_len;	/* 1 to MS_JIT_OBJECT_CHUNK; 0 only when size is 0 */
};

/*
 * Minor version 6: what ms-collect found of a process's Python
 * interpreter (python/layout.h), written when it first looked (the
 * process mapped an interpreter's module, or was attached to with one
 * mapped) and again when the finding changed (an exec). status says
 * whether the process's Python frames can be walked; reason, when not,
 * says why and what to do. version_hex is PY_VERSION_HEX (0 when
 * unknown); source how the offsets were found (python/layout.h: enum
 * ms_py_source, 0 when none); path the interpreter's module as the
 * process maps it (a hint). engine is the recording's Python engine
 * ("bpf" or "snapshot"). ms-decode lets it go ahead as it does JIT_FUNC.
 * [5, pid, time, status, version_hex, source, path, engine, reason]
 */
enum ms_py_process_status {
	MS_PY_PROCESS_OK = 0,		/* the layout is known: frames are walked */
	MS_PY_PROCESS_UNSUPPORTED = 1,	/* a version or a layout this reader refuses */
	MS_PY_PROCESS_FAILED = 2,	/* the process could not be read */
	MS_PY_PROCESS_STATUS_COUNT,
};
/* "ok", "unsupported", "failed", or "unknown" past the last. */
const char *ms_py_process_status_name(uint32_t status);
struct ms_py_process {
	uint32_t pid;
	uint64_t time;
	uint32_t status;	/* enum ms_py_process_status */
	uint32_t version_hex;
	uint32_t source;
	struct ms_str path;
	struct ms_str engine;
	struct ms_str reason;	/* empty when status is ok */
};

/*
 * Minor version 6: a code object of a Python process, as ms-collect read
 * it when it drained the first walker record that named it (code and
 * stamp, as struct ms_bpf_py_frame gives them): named and proved (its
 * type is the interpreter's code type, its stamp its co_linetable)
 * while the program most likely still ran. A code object freed since is
 * unreadable: status says so, and its frames are shown as such. A later
 * record for the same (pid, code, stamp) replaces nothing: the first
 * stands. code_start is the address of its first code unit (code +
 * co_code_adaptive): a frame's instruction pointer minus code_start is
 * the byte offset its locations table (linetable, CPython's 3.11+
 * co_linetable) is looked up at. ms-decode lets it go ahead.
 * [6, pid, time, code, stamp, status, qualname, file, firstlineno,
 *  code_start, bin linetable]
 */
#define MS_PY_LINETABLE_STREAM_MAX 65536u
enum ms_py_code_status {
	MS_PY_CODE_OK = 0,		/* named, lines from linetable */
	MS_PY_CODE_UNREADABLE = 1,	/* a read failed: freed since, or gone */
	MS_PY_CODE_INVALID = 2,		/* not a code object (type, stamp or a field wrong) */
	MS_PY_CODE_NO_LINES = 3,	/* named, but its table is past the stream's bound */
	MS_PY_CODE_STATUS_COUNT,
};
/* "ok", "unreadable", "invalid", "no-lines", or "unknown" past the last. */
const char *ms_py_code_status_name(uint32_t status);
struct ms_py_code {
	uint32_t pid;
	uint64_t time;
	uint64_t code, stamp;
	uint32_t status;	/* enum ms_py_code_status */
	struct ms_str qualname;	/* empty unless status is ok or no-lines */
	struct ms_str file;
	uint32_t firstlineno;
	uint64_t code_start;
	const uint8_t *linetable;	/* borrowed from the record */
	uint32_t linetable_len;		/* 0 to MS_PY_LINETABLE_STREAM_MAX */
};

/*
 * Minor version 6: the Python frames the BPF walker (bpf/sampler.h,
 * --python bpf) read as the sample of (pid, tid, time, cpu) was taken,
 * paired by ms-decode with that sample and written just before it (same
 * pid, tid, time and cpu). status is enum ms_bpf_py_status, gil enum
 * ms_bpf_py_gil. frames holds four numbers per frame, innermost first:
 * code, stamp, instr, flags (struct ms_bpf_py_frame, flags enum
 * ms_bpf_py_frame_flags); n_frames is a quarter of its count.
 * [36, pid, tid, time, cpu, status, gil, tstate, [code, stamp, instr, flags, ...]]
 */
#define MS_PY_STACK_FRAMES_MAX 120	/* MS_BPF_PY_FRAMES_MAX */
struct ms_py_stack {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint32_t status;
	uint32_t gil;
	uint64_t tstate;
	uint32_t n_words;		/* 4 x frames */
	uint64_t words[4 * MS_PY_STACK_FRAMES_MAX];
};

/*
 * Minor version 6: a label a runtime gave a thread over a run of its
 * samples, one span per run of samples with one value: key "gil", value
 * "held" or "released" (from PY_STACK's gil; "unknown" makes no span).
 * ms-unwind writes a span when the thread's next sample has another
 * value or none (a sample of the thread without a PY_STACK ends it), and
 * the open spans at the end of the stream. start is the time of the run's
 * first sample, end of its last (start <= end); samples the number of
 * samples in the run (at least 1).
 * [37, pid, tid, start, end, samples, key, value]
 */
struct ms_label_span {
	uint32_t pid, tid;
	uint64_t start, end;
	uint64_t samples;
	struct ms_str key;	/* not empty */
	struct ms_str value;	/* not empty */
};

/*
 * Minor version 7: one thread's interpreted frames as the snapshot engine
 * (--python snapshot) read them from the live process at time, over
 * process_vm_readv, without stopping it. Every thread state of every
 * interpreter read in one round has the round's number (from 1) and time.
 *
 * status complete: the walk ended where the runtime says it ends (a NULL
 * previous frame), every frame's code was proved (its type the
 * interpreter's code type; stamp its co_linetable pointer as read then),
 * and, read again after the walk, the thread's current frame and every
 * frame's code and link were the same.
 * frames then holds four numbers per frame, innermost first, as PY_STACK's:
 * code, stamp, instr, flags (enum ms_bpf_py_frame_flags; ENTRY as the BPF
 * walker marks it); none when the thread runs no Python now.
 * status changed: any other read (a read failed, an object not what the
 * layout says, the current frame moved, deeper than
 * MS_PY_SNAPSHOT_FRAMES_MAX, the round's bytes spent): no frames, never a
 * shorter stack; reason says what (empty when complete).
 *
 * tid is the recorder's id of the thread (native_thread_id, translated
 * out of a nested pid namespace); a state whose id names no thread of the
 * process is not written (ms-collect counts it). gil is enum ms_bpf_py_gil
 * (held: the GIL is locked and this state its last holder).
 * ms-decode lets it go ahead, as PY_CODE (the PY_CODE records of its codes
 * come before it); ms-unwind consumes it and writes a TASK_WAIT.
 * [7, pid, tid, time, round, status, gil, tstate, reason, [code, stamp, instr, flags, ...]]
 */
#define MS_PY_SNAPSHOT_FRAMES_MAX 256	/* MS_PY_WALK_FRAMES */
enum ms_py_snapshot_status {
	MS_PY_SNAPSHOT_COMPLETE = 0,
	MS_PY_SNAPSHOT_CHANGED = 1,
	MS_PY_SNAPSHOT_STATUS_COUNT,
};
/* "complete", "changed", or "unknown" past the last. */
const char *ms_py_snapshot_status_name(uint32_t status);
struct ms_py_snapshot {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t round;
	uint32_t status;	/* enum ms_py_snapshot_status */
	uint32_t gil;		/* enum ms_bpf_py_gil */
	uint64_t tstate;
	struct ms_str reason;	/* empty when complete */
	uint32_t n_words;	/* 4 x frames; 0 unless complete */
	uint64_t words[4 * MS_PY_SNAPSHOT_FRAMES_MAX];
};

/*
 * Minor version 7: a task as a snapshot found it, one row of the
 * capture's waits (capture/capture.h: ms_cap_task, ms_cap_wait). A thread
 * snapshot (PY_SNAPSHOT) is a task of kind "thread" whose id is its tid,
 * and its stack the stack the task waits at. stack is the id of a
 * STACK_DEF written before it (its interpreted frames, innermost first,
 * module MS_MODULE_INTERPRETED, as a sample's stack holds them), or
 * UINT32_MAX when there is none: status complete with no frames (the
 * thread ran no Python), changed (the read was not whole: no stack), or
 * dropped (whole, but the table of stacks was full: its stack not kept).
 * reason: why the task waits as its runtime says (empty for a thread).
 * ms-unwind writes it for a PY_SNAPSHOT; ms-capture keeps it; ms-capture
 * --dump writes one per wait row and per changed or dropped count.
 * [38, pid, tid, time, kind, id, status, stack, reason]
 */
enum ms_task_wait_status {
	MS_TASK_WAIT_COMPLETE = 0,
	MS_TASK_WAIT_CHANGED = 1,
	MS_TASK_WAIT_DROPPED = 2,
	MS_TASK_WAIT_STATUS_COUNT,
};
/* "complete", "changed", "dropped", or "unknown" past the last. */
const char *ms_task_wait_status_name(uint32_t status);
struct ms_task_wait {
	uint32_t pid, tid;
	uint64_t time;
	struct ms_str kind;	/* not empty: "thread" */
	uint64_t id;
	uint32_t status;	/* enum ms_task_wait_status */
	uint32_t stack;		/* a STACK_DEF id, UINT32_MAX: none */
	struct ms_str reason;
};

/*
 * A sample, validated. Chains are split at the kernel's context markers:
 * kchain holds the kernel frames, uchain the user frames (frame-pointer
 * chain), innermost first, markers removed. regs are the user registers in
 * perf's order, as many as bits in regs_mask (regs_abi 0 = none). stack is
 * the copied user stack, only the dyn_size bytes that were readable.
 * [20, pid, tid, time, cpu, period, ip, cpumode, [kchain], [uchain],
 *  regs_abi, regs_mask, [regs], bin stack]
 *
 * Minor version 2: regs may be one bin of little-endian u64s (perf's own
 * layout: framing and reading it cost one step, not one per register), and
 * the stack field may instead be [offset, length], the
 * place of the copied bytes in the file a STACK_FILE record named earlier
 * in the stream (stack_in_file true, stack NULL until the consumer
 * resolves it against its own mapping of that file).
 */
#define MS_CHAIN_MAX 512
#define MS_REGS_MAX 64
#define MS_STACK_MAX 65528
enum ms_cpumode {
	MS_CPUMODE_UNKNOWN = 0,
	MS_CPUMODE_KERNEL = 1,
	MS_CPUMODE_USER = 2,
	MS_CPUMODE_HYPERVISOR = 3,
	MS_CPUMODE_GUEST_KERNEL = 4,
	MS_CPUMODE_GUEST_USER = 5,
};
struct ms_sample {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t ip;
	uint32_t cpumode;
	uint32_t n_kchain;
	uint64_t kchain[MS_CHAIN_MAX];
	uint32_t n_uchain;
	uint64_t uchain[MS_CHAIN_MAX];
	uint32_t regs_abi;
	uint64_t regs_mask;
	uint32_t n_regs;
	uint64_t regs[MS_REGS_MAX];
	uint32_t stack_len;
	const uint8_t *stack;
	bool stack_in_file;
	uint64_t stack_offset;	/* stack_in_file: where in the STACK_FILE */
};

/*
 * Minor version 4: a thread left or came back to a CPU
 * (PERF_RECORD_SWITCH of an event opened with context_switch). out is
 * true when it left; preempt, only when it left, is true when it was
 * preempted while still runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT).
 * time and cpu come from the record's sample_id_all trailer.
 * [28, pid, tid, time, cpu, out, preempt]
 */
struct ms_switch {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	bool out;
	bool preempt;
};

/*
 * Why a thread left its CPU, as the scheduler said (minor version 4):
 * the evidence a switch-out carries, never a guess from its stack. A
 * thread preempted while runnable is PREEMPTED; one waiting
 * interruptibly (a sleep, a read of a pipe, a futex) is SLEEPING; one
 * waiting uninterruptibly (most disk I/O) is BLOCKED; any other state
 * (stopped, traced, parked, idle, dying) or no evidence is UNKNOWN.
 */
enum ms_off_cpu_cause {
	MS_CAUSE_UNKNOWN = 0,
	MS_CAUSE_PREEMPTED = 1,
	MS_CAUSE_SLEEPING = 2,
	MS_CAUSE_BLOCKED = 3,
	MS_CAUSE_COUNT,
};
/* "unknown", "preempted", "sleeping", "blocked"; "unknown" past the last. */
const char *ms_off_cpu_cause_name(uint32_t cause);
/*
 * The cause a sched_switch prev_state gives: the kernel reports
 * TASK_REPORT_MAX (0x100) when it preempted the task, 0 when the task was
 * runnable (R), else one bit of TASK_REPORT (1 S, 2 D, 4 T, 8 t, 0x10 X,
 * 0x20 Z, 0x40 P, 0x80 I) since Linux 4.14.
 */
uint32_t ms_off_cpu_cause_of_state(uint64_t prev_state);

/*
 * Minor version 4: a sample of the sched:sched_switch tracepoint, taken as
 * a thread of the target left its CPU: the fields of a SAMPLE (its
 * registers and stack copy are the thread's user state as it entered the
 * kernel; period is the tracepoint's, 1), then the tracepoint's
 * prev_state as the kernel wrote it and the cause it gives.
 * [29, <the fields of a SAMPLE>, state, cause]
 * The struct begins with the sample, so that code reading a SAMPLE's
 * fields reads a switch-out's the same way.
 */
struct ms_switch_out {
	struct ms_sample sample;
	uint64_t state;		/* prev_state */
	uint32_t cause;		/* enum ms_off_cpu_cause */
};

/*
 * Where the stack bytes of later samples are (minor version 2): the saved
 * stream ms-decode read, when it referred to the copies in it rather than
 * copying them through the pipe (ms-decode(1) --stack-bytes). A consumer
 * opens path and uses it only if its identity (device, inode, size,
 * modification time in nanoseconds) is this one.
 * [27, path, dev_maj, dev_min, ino, size, mtime]
 */
struct ms_stack_file {
	struct ms_str path;
	uint32_t dev_maj, dev_min;
	uint64_t ino;
	uint64_t size;
	uint64_t mtime;
};

/*
 * A mapping (PERF_RECORD_MMAP2, or synthesized from /proc/PID/maps when
 * attaching). build_id_len is 0 when the kernel gave none.
 * [21, pid, tid, time, start, len, pgoff, maj, min, ino, ino_generation,
 *  prot, flags, cpumode, synthesized, filename, bin build_id]
 */
#define MS_BUILD_ID_MAX 20
struct ms_mmap {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint32_t cpumode;
	bool synthesized;
	struct ms_str filename;
	uint32_t build_id_len;
	uint8_t build_id[MS_BUILD_ID_MAX];
};

/* [22, pid, tid, time, exec, synthesized, comm] */
struct ms_comm {
	uint32_t pid, tid;
	uint64_t time;
	bool exec;
	bool synthesized;
	struct ms_str comm;
};

/* [23|24, pid, ppid, tid, ptid, time]: fork (new task) and exit. */
struct ms_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/*
 * Records lost. source 0: the kernel's ring overflowed (PERF_RECORD_LOST);
 * 1: ms-collect could not pass records on (output pipe full).
 * [25, source, time, id, count]
 */
enum ms_lost_source {
	MS_LOST_KERNEL = 0,
	MS_LOST_COLLECTOR = 1,
};
struct ms_lost {
	uint32_t source;
	uint64_t time;
	uint64_t id;
	uint64_t count;
};

/* [26, time, id, unthrottle] */
struct ms_throttle {
	uint64_t time;
	uint64_t id;
	bool unthrottle;
};

/*
 * A module: the code a frame belongs to, known by identity, never by path
 * alone. id is dense within the stream, assigned by ms-unwind in order of
 * first use. path is a hint. dev/ino/size/mtime identify the file that was
 * opened when there is no build id (mtime in nanoseconds since the epoch;
 * all zero when unknown).
 * [30, id, kind, path, bin build_id, dev_maj, dev_min, ino, size, mtime, base]
 */
enum ms_module_kind {
	MS_MODULE_FILE = 0,	/* an ELF file */
	MS_MODULE_KERNEL = 1,	/* the kernel image, addresses absolute */
	MS_MODULE_VDSO = 2,
	MS_MODULE_ANON = 3,	/* anonymous executable memory: no file */
	MS_MODULE_UNKNOWN = 4,	/* an address in no known mapping */
	/*
	 * Minor version 5: an anonymous range whose code a perf map names
	 * (MS_REC_JIT_FUNC): one module per range, base its start and size
	 * its length, path the map's. Addresses are absolute, as anonymous
	 * ones; ms-unwind writes the FRAME record of each of its frames
	 * itself (the name the map gave when it was read), since no build id
	 * proves which code a map describes: nothing names them later.
	 */
	MS_MODULE_PERF_MAP = 5,
	/*
	 * Minor version 5: the code of an object registered through the GDB
	 * JIT interface (MS_REC_JIT_OBJECT): one module per object, base the
	 * lowest address of its executable sections and size their extent,
	 * path "[jit-object ENTRY]" (ENTRY its jit_code_entry's address in
	 * hex). Addresses absolute; ms-unwind writes its frames' FRAME
	 * records from the object's symbols, as for perf-map modules.
	 */
	MS_MODULE_JIT_OBJECT = 6,
	/*
	 * Minor version 6: interpreted code (Python's frames, PY_STACK):
	 * one module of this kind per stream, path "[python]", no identity
	 * and no base. Its frames are keyed by their text, not an address:
	 * a frame's address is a key ms-unwind gives each distinct (file,
	 * function, line, first line of the function), dense from 1, with
	 * MS_FRAME_NO_ADDRESS set; ms-unwind writes each one's FRAME record
	 * itself (name the qualified name, one line [qualname, "", file,
	 * line, firstlineno]).
	 */
	MS_MODULE_INTERPRETED = 7,
	MS_MODULE_KIND_COUNT,
};
struct ms_module {
	uint32_t id;
	uint32_t kind;
	struct ms_str path;
	uint32_t build_id_len;
	uint8_t build_id[MS_BUILD_ID_MAX];
	uint32_t dev_maj, dev_min;
	uint64_t ino;
	uint64_t size;
	uint64_t mtime;
	uint64_t base;		/* minor 5, trailing: a perf-map or jit-object module's start, else 0 */
};

/*
 * A stack sample: frames innermost first. Each frame is a module id and an
 * address relative to that module: an ELF file's offsets are its virtual
 * addresses as in the file (what symbol tables use), the kernel's are
 * absolute. MS_FRAME_RETURN marks a return address (the caller's frame):
 * symbolization looks it up at address - 1. The stack ends with reason.
 * [31, pid, tid, time, cpu, period, reason, [module, address, flags, ...]]
 */
#define MS_FRAMES_MAX 1024
enum ms_frame_flags {
	MS_FRAME_RETURN = 1 << 0,
	MS_FRAME_KERNEL = 1 << 1,
	/*
	 * The address is a file offset, not a virtual address: the module's
	 * file could not be read or proved to be the mapped one when the
	 * stack was made (ms-unwind). A consumer with the module's file
	 * (found by build id) can translate it through the PT_LOAD headers.
	 */
	MS_FRAME_FILE_OFFSET = 1 << 2,
	/*
	 * The frame has no address: an importer (pprof, folded) knew it by
	 * name only, and address is a key it made, unique within the
	 * module. Exporters write no address for it.
	 */
	MS_FRAME_NO_ADDRESS = 1 << 3,
	/*
	 * Minor version 6: the frame is code of a Python interpreter (its
	 * module defines _PyEval_EvalFrameDefault): the python look leaves
	 * it out, as the interpreted frames it runs stand for it.
	 */
	MS_FRAME_INTERPRETER = 1 << 4,
};
enum ms_stack_end {
	MS_END_OUTERMOST = 0,	/* reached the thread's entry */
	MS_END_FP_CHAIN = 1,	/* the kernel's frame-pointer chain ended */
	MS_END_NO_CFI = 2,
	MS_END_MISSING_REGISTER = 3,
	MS_END_STACK_COPY = 4,	/* the copied bytes ended */
	MS_END_CFA_NOT_OUTWARDS = 5,
	MS_END_NO_MODULE = 6,	/* an address in no known module */
	MS_END_DEPTH = 7,
	MS_END_KERNEL_ONLY = 8,	/* no user frames (kernel thread) */
	/*
	 * Minor version 6, Python (PY_STACK). A python reason is the stack's
	 * end reason whatever the native frames' was: they are all kept.
	 * UNKNOWN: the native stack runs the interpreter's loop but its Python
	 * frames are not known (no layout yet, no walker record, a walk that
	 * found no thread state or read nothing). UNPLACED: the segments and
	 * the loop's activations differ in number, so the Python frames
	 * follow (are outer of) all native ones. TRUNCATED: the walk stopped
	 * before the outermost Python frame (too deep, a read failed): the
	 * segments read are placed on the innermost activations.
	 */
	MS_END_INTERPRETED_UNKNOWN = 9,
	MS_END_INTERPRETED_UNPLACED = 10,
	MS_END_INTERPRETED_TRUNCATED = 11,
	/* The producer did not say why (an imported pprof or folded profile). */
	MS_END_UNKNOWN = 255,
};
const char *ms_stack_end_name(uint32_t reason);
struct ms_stack_frame {
	uint32_t module;
	uint32_t flags;
	uint64_t address;
};
struct ms_stack {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint32_t reason;
	uint32_t n_frames;
	struct ms_stack_frame frames[MS_FRAMES_MAX];
};

/*
 * Minor version 2: each stack once. ms-unwind writes a STACK_DEF the first
 * time a stack (its end reason and frames) appears, and a STACK_REF for
 * every sample of it, so that later stages look at each stack's frames
 * once. ids are dense from 0 in the order of their definitions; a
 * definition comes before any reference to it. A STACK_DEF unpacks into a
 * struct ms_stack whose per-sample fields (pid ... period) are 0.
 * [32, id, reason, [module, address, flags, ...]]
 * [33, pid, tid, time, cpu, period, id]
 */
struct ms_stack_ref {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint32_t id;
};

/*
 * Minor version 4: the stack a thread left its CPU with, unwound by
 * ms-unwind from a SWITCH_OUT exactly as a SAMPLE's (id names a
 * STACK_DEF, shared with samples), with the switch-out's evidence.
 * [34, pid, tid, time, cpu, state, cause, id]
 */
struct ms_off_cpu {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t state;
	uint32_t cause;
	uint32_t id;
};

/*
 * Minor version 4: an off-CPU interval as a capture holds it (see
 * capture/capture.h: ms_cap_interval and ms_cap_evidence), written by
 * ms-capture --dump so that a capture dumped and captured again keeps
 * its intervals whole, incomplete ones with their missing end. start or
 * end is 0 when missing names it missing; cpu and stack are UINT32_MAX
 * when none (stack names a STACK_DEF); cause, sources, state and preempt
 * are the evidence.
 * [35, pid, tid, start, end, cpu, missing, stack, cause, sources, state, preempt]
 */
struct ms_interval {
	uint32_t pid, tid;
	uint64_t start, end;
	uint32_t cpu;
	uint32_t missing;	/* enum ms_interval_missing (capture/capture.h) */
	uint32_t stack;
	uint32_t cause;
	uint32_t sources;	/* enum ms_evidence_source (capture/capture.h) */
	uint64_t state;
	uint32_t preempt;
};

/*
 * What symbolization knows of one (module, address). Emitted once per
 * unique pair, before the first stack that uses it. name is the function
 * (demangled; the outermost entry of lines when there are lines); name_len
 * 0 means no symbol covers the address. reason is 0 when the frame is
 * fully symbolized (a name, and lines for a file module), otherwise what is
 * missing and why: a named frame may have one (no-debug-file, ...). With
 * MS_SYM_FDE_ONLY, symbol_start is the function's start from .eh_frame.
 * [40, module, address, name, symbol_start, reason, [lines...]]
 */
enum ms_frame_reason {
	MS_SYM_OK = 0,
	MS_SYM_NO_FILE = 1,	/* the module's file could not be opened */
	MS_SYM_NO_SYMBOL = 2,	/* no symbol covers the address */
	MS_SYM_IDENTITY = 3,	/* the file on disk is not the module that ran */
	MS_SYM_BAD_ELF = 4,
	MS_SYM_NO_MODULE = 5,	/* the address was in no module */
	/*
	 * Minor version 1 (issue 4). A frame may have a name and still a
	 * reason: 0 means fully symbolized (a name, and lines for a file
	 * module); these say what is missing.
	 */
	MS_SYM_NO_DEBUG = 6,	/* named from symbol tables: no debug file found */
	MS_SYM_DEBUG_MISMATCH = 7, /* debug files found had another build id: refused */
	MS_SYM_BAD_DWARF = 8,	/* the debug information for the address is corrupt */
	MS_SYM_NOT_IN_DEBUG = 9, /* the debug file does not describe the address */
	MS_SYM_FDE_ONLY = 10,	/* no symbol; symbol_start is the .eh_frame FDE's start */
};
const char *ms_frame_reason_name(uint32_t reason);
/*
 * Source facts, minor version 1 (issue 4): when debug information covers the
 * address, one entry per function on the inline chain, innermost (the
 * inlined callee) first and the function whose code holds the address last,
 * as pprof's Location.line. line is the line of this address within that
 * entry's function (for a caller of an inlined call, the call site);
 * function_line is the line where the function begins. system_name is the
 * linkage (mangled) name, empty when equal to function. An absent trailing
 * field (a minor-0 producer) means no lines.
 * [..., [[function, system_name, file, line, function_line], ...]]
 */
#define MS_FRAME_LINES_MAX 32
struct ms_frame_line {
	struct ms_str function;
	struct ms_str system_name;
	struct ms_str file;
	uint32_t line;
	uint32_t function_line;
};
struct ms_frame {
	uint32_t module;
	uint64_t address;
	struct ms_str name;
	uint64_t symbol_start;	/* module-relative start of the symbol */
	uint32_t reason;
	uint32_t n_lines;
	struct ms_frame_line lines[MS_FRAME_LINES_MAX];
};

int ms_problem_pack(struct ms_writer *w, const struct ms_problem *p);
int ms_problem_unpack(const struct ms_record *rec, struct ms_problem *p);
int ms_info_pack(struct ms_writer *w, const struct ms_info *i);
int ms_info_unpack(const struct ms_record *rec, struct ms_info *i);
int ms_attr_pack(struct ms_writer *w, const struct ms_attr *a);
int ms_attr_unpack(const struct ms_record *rec, struct ms_attr *a);
int ms_raw_pack(struct ms_writer *w, const struct ms_raw *r);
int ms_raw_unpack(const struct ms_record *rec, struct ms_raw *r);
int ms_target_pack(struct ms_writer *w, const struct ms_target *t);
int ms_target_unpack(const struct ms_record *rec, struct ms_target *t);
int ms_target_exit_pack(struct ms_writer *w, const struct ms_target_exit *t);
int ms_target_exit_unpack(const struct ms_record *rec, struct ms_target_exit *t);
/* [14]: no fields. */
int ms_round_pack(struct ms_writer *w);
int ms_vdso_pack(struct ms_writer *w, const struct ms_vdso *v);
int ms_vdso_unpack(const struct ms_record *rec, struct ms_vdso *v);
int ms_sample_pack(struct ms_writer *w, const struct ms_sample *s);
int ms_sample_unpack(const struct ms_record *rec, struct ms_sample *s);
/*
 * Frame and unpack at once: when the avail bytes at bytes begin a whole
 * SAMPLE record of 14 fields in the form ms-decode writes, its length,
 * with s as ms_sample_unpack() would make it from the record; else 0
 * (another form, a malformed or an incomplete record: frame it the usual
 * way). For readers (stream/reader.c: ms_reader_unpack_samples()).
 */
size_t ms_sample_frame(const char *bytes, size_t avail, struct ms_sample *s);
int ms_stack_file_pack(struct ms_writer *w, const struct ms_stack_file *f);
int ms_stack_file_unpack(const struct ms_record *rec, struct ms_stack_file *f);
int ms_mmap_pack(struct ms_writer *w, const struct ms_mmap *m);
int ms_mmap_unpack(const struct ms_record *rec, struct ms_mmap *m);
int ms_comm_pack(struct ms_writer *w, const struct ms_comm *c);
int ms_comm_unpack(const struct ms_record *rec, struct ms_comm *c);
/* kind is MS_REC_FORK or MS_REC_EXIT */
int ms_task_pack(struct ms_writer *w, uint32_t kind, const struct ms_task *t);
int ms_task_unpack(const struct ms_record *rec, struct ms_task *t);
int ms_lost_pack(struct ms_writer *w, const struct ms_lost *l);
int ms_lost_unpack(const struct ms_record *rec, struct ms_lost *l);
int ms_duty_pack(struct ms_writer *w, const struct ms_duty *d);
int ms_duty_unpack(const struct ms_record *rec, struct ms_duty *d);
int ms_throttle_pack(struct ms_writer *w, const struct ms_throttle *t);
int ms_throttle_unpack(const struct ms_record *rec, struct ms_throttle *t);
int ms_tracepoint_pack(struct ms_writer *w, const struct ms_tracepoint *t);
int ms_tracepoint_unpack(const struct ms_record *rec, struct ms_tracepoint *t);
int ms_jit_func_pack(struct ms_writer *w, const struct ms_jit_func *f);
int ms_jit_func_unpack(const struct ms_record *rec, struct ms_jit_func *f);
int ms_jit_read_pack(struct ms_writer *w, const struct ms_jit_read *r);
int ms_jit_object_pack(struct ms_writer *w, const struct ms_jit_object *o);
int ms_jit_object_unpack(const struct ms_record *rec, struct ms_jit_object *o);
int ms_jit_read_unpack(const struct ms_record *rec, struct ms_jit_read *r);
int ms_switch_pack(struct ms_writer *w, const struct ms_switch *s);
int ms_switch_unpack(const struct ms_record *rec, struct ms_switch *s);
int ms_switch_out_pack(struct ms_writer *w, const struct ms_switch_out *s);
int ms_switch_out_unpack(const struct ms_record *rec, struct ms_switch_out *s);
int ms_off_cpu_pack(struct ms_writer *w, const struct ms_off_cpu *o);
int ms_off_cpu_unpack(const struct ms_record *rec, struct ms_off_cpu *o);
int ms_interval_pack(struct ms_writer *w, const struct ms_interval *i);
int ms_interval_unpack(const struct ms_record *rec, struct ms_interval *i);
int ms_module_pack(struct ms_writer *w, const struct ms_module *m);
int ms_module_unpack(const struct ms_record *rec, struct ms_module *m);
int ms_stack_pack(struct ms_writer *w, const struct ms_stack *s);
int ms_stack_unpack(const struct ms_record *rec, struct ms_stack *s);
int ms_stack_def_pack(struct ms_writer *w, uint32_t id, const struct ms_stack *s);
int ms_stack_def_unpack(const struct ms_record *rec, uint32_t *id, struct ms_stack *s);
int ms_stack_ref_pack(struct ms_writer *w, const struct ms_stack_ref *r);
int ms_stack_ref_unpack(const struct ms_record *rec, struct ms_stack_ref *r);
int ms_py_process_pack(struct ms_writer *w, const struct ms_py_process *p);
int ms_py_process_unpack(const struct ms_record *rec, struct ms_py_process *p);
int ms_py_code_pack(struct ms_writer *w, const struct ms_py_code *c);
int ms_py_code_unpack(const struct ms_record *rec, struct ms_py_code *c);
int ms_py_stack_pack(struct ms_writer *w, const struct ms_py_stack *s);
int ms_py_stack_unpack(const struct ms_record *rec, struct ms_py_stack *s);
int ms_label_span_pack(struct ms_writer *w, const struct ms_label_span *l);
int ms_label_span_unpack(const struct ms_record *rec, struct ms_label_span *l);
int ms_py_snapshot_pack(struct ms_writer *w, const struct ms_py_snapshot *s);
int ms_py_snapshot_unpack(const struct ms_record *rec, struct ms_py_snapshot *s);
int ms_task_wait_pack(struct ms_writer *w, const struct ms_task_wait *t);
int ms_task_wait_unpack(const struct ms_record *rec, struct ms_task_wait *t);
int ms_frame_pack(struct ms_writer *w, const struct ms_frame *f);
int ms_frame_unpack(const struct ms_record *rec, struct ms_frame *f);

/*
 * Counted problems of one stage, emitted as MS_REC_PROBLEM records before
 * the trailer. ms_problems_add() keeps the first detail of each code.
 * Fixed capacity: codes beyond it are folded into "other-problems".
 */
#define MS_PROBLEM_CODES_MAX 32
struct ms_problems {
	const char *stage;
	uint32_t n;
	struct {
		char code[MS_NAME_MAX];
		uint64_t count;
		char detail[256];
	} entries[MS_PROBLEM_CODES_MAX];
};
void ms_problems_init(struct ms_problems *p, const char *stage);
void ms_problems_add(struct ms_problems *p, const char *code, const char *detail_fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t ms_problems_total(const struct ms_problems *p);
int ms_problems_write(struct ms_writer *w, const struct ms_problems *p);

#endif
