/*
 * The records bpf/sampler.bpf.c writes and ms-decode reads: the one
 * layout both sides share (kernel side: BPF C; user side: C11).
 *
 * Each record is the RAW data of a sample of a PERF_COUNT_SW_BPF_OUTPUT
 * event, written with bpf_perf_event_output() into the ring of the CPU
 * the sampler's sample was taken on, just before (or after: the kernel
 * decides) that sample. It begins with a fixed header; size counts the
 * header and the payload after it, so a later version (the Python walker)
 * grows the payload without moving the header. The kernel pads RAW data
 * to 8 bytes: a reader takes size, not the RAW length, and checks that
 * the padding is under 8 bytes.
 *
 * Invariants a reader checks before using a field (perf/bpfrecord.h):
 * magic, version (a newer major is refused), size within the RAW data and
 * at least the header, kind known.
 */
#ifndef MS_BPF_SAMPLER_H
#define MS_BPF_SAMPLER_H

#include <linux/types.h>

#define MS_BPF_MAGIC 0x5042534du	/* "MSBP" in memory on a little-endian host */
#define MS_BPF_VERSION 1u	/* kind 2 (Python) is an addition readers of 1 refuse by kind */

/* What follows the header. */
enum ms_bpf_kind {
	/* no payload: the sample's identity only (a process without a py_layout) */
	MS_BPF_KIND_SAMPLE = 1,
	/* struct ms_bpf_py_head, then n_frames struct ms_bpf_py_frame */
	MS_BPF_KIND_PYTHON = 2,
};

struct ms_bpf_header {
	__u32 magic;		/* MS_BPF_MAGIC */
	__u16 version;		/* MS_BPF_VERSION */
	__u16 kind;		/* enum ms_bpf_kind */
	__u32 size;		/* bytes of the record: this header and its payload */
	__u32 cpu;		/* bpf_get_smp_processor_id() */
	/* bpf_get_current_pid_tgid(): ids in the initial pid namespace */
	__u32 pid;
	__u32 tid;
	__u64 time;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* The largest record the program writes (header and payload). */
#define MS_BPF_RECORD_MAX 4096u

/*
 * ---- The Python walker (bpf/python.bpf.h) ----
 *
 * The program walks a thread's CPython frames only in a process that has
 * a py_layout (the map py_layouts, keyed by the process's tgid in the
 * initial pid namespace, filled by ms-collect once the interpreter's
 * module is mapped: python/layout.h). Other processes get no record.
 *
 * The thread's state is the one py_threads names for its tid (initial
 * namespace), refreshed by ms-collect every 20 ms from the interpreter's
 * thread list, when that state's native_thread_id is the thread's id in
 * the process's pid namespace (bpf_get_ns_current_pid_tgid with
 * pidns_dev, pidns_ino). Otherwise (no entry, a stale one) the walker
 * looks through every interpreter's states, at most find_bound of them,
 * for the one whose native_thread_id is that id (py_find): exactly one is
 * used; none, more than one or a search past the bound gives a record
 * with that status and no frames, never another thread's.
 *
 * From the state's current frame it follows previous pointers, at most
 * MS_BPF_PY_FRAMES_MAX frames. A frame owned by the C stack (3.12+:
 * owner == owner_cstack, the shim an activation of the interpreter's loop
 * pushes first) is not written; it marks the frame written before it
 * MS_BPF_PY_ENTRY. On 3.11 a frame whose is_entry byte is set is marked
 * MS_BPF_PY_ENTRY. So each activation of _PyEval_EvalFrameDefault runs
 * one segment of frames, innermost first, whose last is marked ENTRY.
 */
#define MS_BPF_PY_FRAMES_MAX 120u

/* Value of py_layouts: where one process keeps what the walker reads. */
struct ms_bpf_py_layout {
	__u64 runtime;			/* &_PyRuntime in the process */
	__u64 pidns_dev, pidns_ino;	/* its pid namespace (stat of /proc/PID/ns/pid) */
	__u32 version_hex;		/* PY_VERSION_HEX */
	__u32 find_bound;		/* thread states py_find may look through */
	/* offsets in bytes (python/layout.h: struct ms_py_offsets) */
	__u32 rt_interp_head, is_next, is_threads_head;
	__u32 ts_next, ts_native_tid, ts_frame;
	__s32 cf_current_frame;		/* -1: ts_frame is the current frame itself (3.13) */
	__u32 fr_previous, fr_code, fr_instr, fr_owner;
	__s32 fr_is_entry;		/* 3.11's is_entry byte; -1 on 3.12+ */
	__s32 owner_cstack;		/* FRAME_OWNED_BY_CSTACK; -1 on 3.11 */
	__u32 co_linetable;		/* the code's stamp: its locations table's address */
	/*
	 * The GIL (struct _gil_runtime_state): on 3.11 inside _PyRuntime at
	 * gil_in_runtime; on 3.12+ pointed to from each interpreter at
	 * gil_ptr_in_interp. -1 where the version has none; both -1: the
	 * layout knows no GIL and every record says MS_BPF_PY_GIL_UNKNOWN.
	 */
	__s32 gil_in_runtime, gil_ptr_in_interp;
	__u32 gil_locked, gil_holder;	/* .locked (int), .last_holder (thread state) */
};

/* Status of a walk (also the PY_STACK record's, stream/records.h). */
enum ms_bpf_py_status {
	MS_BPF_PY_COMPLETE = 0,		/* read to a NULL previous (0 frames: no Python running) */
	MS_BPF_PY_TOO_DEEP = 1,		/* MS_BPF_PY_FRAMES_MAX frames read, more follow */
	MS_BPF_PY_UNREADABLE = 2,	/* a read failed: the frames so far are written */
	MS_BPF_PY_NO_THREAD = 3,	/* no thread state names the thread */
	MS_BPF_PY_AMBIGUOUS = 4,	/* more than one names it */
	MS_BPF_PY_SEARCH_BOUND = 5,	/* py_find looked through find_bound states */
	MS_BPF_PY_NO_NAMESPACE = 6,	/* the thread's id in the process's namespace is unknown */
	MS_BPF_PY_STATUS_COUNT,
};

/* Whether the thread walked held the GIL as the sample was taken. */
enum ms_bpf_py_gil {
	MS_BPF_PY_GIL_UNKNOWN = 0,	/* no layout for it, no thread state, a read failed */
	MS_BPF_PY_GIL_HELD = 1,		/* locked, and its last holder is this thread's state */
	MS_BPF_PY_GIL_RELEASED = 2,	/* not locked, or held by another thread */
	MS_BPF_PY_GIL_COUNT,
};

struct ms_bpf_py_head {
	__u32 status;			/* enum ms_bpf_py_status */
	__u32 n_frames;			/* at most MS_BPF_PY_FRAMES_MAX */
	__u64 tstate;			/* the thread state walked; 0 when none */
	__u32 gil;			/* enum ms_bpf_py_gil */
	__u32 pad;
};

enum ms_bpf_py_frame_flags {
	MS_BPF_PY_ENTRY = 1 << 0,	/* the first frame its activation of the loop ran */
};

struct ms_bpf_py_frame {
	__u64 code;			/* f_code / f_executable, unproved */
	__u64 stamp;			/* the code's co_linetable pointer (0: unread) */
	__u64 instr;			/* prev_instr (3.11, 3.12) / instr_ptr (3.13) */
	__u32 flags;			/* enum ms_bpf_py_frame_flags */
	__u32 pad;
};

#endif
