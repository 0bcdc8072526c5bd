/*
 * The snapshot engine of ms-collect's Python recorder (--python snapshot):
 * no BPF. Perf samples as always (native stacks), and every interval the
 * recorder reads every thread state of every interpreter of every process
 * with a layout (layouts found as for bpf, pyrecorder.h, their PY_PROCESS
 * records of engine "snapshot") with the light walker (walk.h), and
 * writes for each thread its PY_CODE records of codes not named yet, then
 * one PY_SNAPSHOT record (stream/records.h).
 *
 * A snapshot is complete only when its walk ended at a NULL previous
 * frame, every frame's code proved by its type, and, read again after the
 * walk, the thread's current frame and every frame's code and link were
 * the same (a generator resumed at the same address is caught so); any other read is written
 * changed with its reason and no frames, never a shorter stack.
 * native_thread_id is translated to the recorder's tid and proved one of
 * the process's tasks (/proc/PID/task; NSpid in a nested pid namespace); a
 * state whose id names none is not written, and counted. The GIL (locked,
 * last holder) is read once per interpreter per round: held when locked
 * by this thread's state, released otherwise, unknown when unread.
 *
 * Bounded, each bound a counted problem of the stream: at most
 * MS_PY_SNAP_THREADS_MAX thread states a round (python-snapshot-threads),
 * MS_PY_SNAP_ROUND_BYTES bytes read a round (python-snapshot-bytes: the
 * thread that found them spent is written changed, the rest of the round
 * is not read), a round's time at most 1/MS_PY_SNAP_ROUND_SHARE of its
 * interval (python-snapshot-time); a round that comes a whole interval
 * late is counted (python-snapshot-late) and the next is due an interval
 * after it (no backlog). Processes are read from a slot that moves each
 * round, so that bounds do not starve the same ones.
 *
 * Times are CLOCK_MONOTONIC, perf's clock (perf/session.c asks for it).
 */
#ifndef MS_PYTHON_PYSNAPSHOT_H
#define MS_PYTHON_PYSNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python/pyrecorder.h"
#include "python/walk.h"
#include "stream/records.h"

#define MS_PY_SNAP_INTERVAL_DEFAULT 10	/* ms */
#define MS_PY_SNAP_INTERVAL_MIN 1
#define MS_PY_SNAP_INTERVAL_MAX 1000
/* Thread states read in one round, every process's together. */
#define MS_PY_SNAP_THREADS_MAX 1024u
/* Bytes read in one round (2 MiB: 200 MiB/s at 10 ms; a thread of 30 frames reads some 6 KiB). */
#define MS_PY_SNAP_ROUND_BYTES (2u << 20)
/* A round takes at most this share of its interval: 1/2. */
#define MS_PY_SNAP_ROUND_SHARE 2

struct ms_py_snap_counts {
	uint64_t rounds;		/* rounds begun */
	uint64_t late;			/* rounds a whole interval late */
	uint64_t snapshots;		/* PY_SNAPSHOT records written */
	uint64_t complete;		/* of those, complete */
	uint64_t frames;		/* frames in the complete ones */
	uint64_t changed;		/* of those, changed */
	uint64_t bytes;			/* read by the walks */
	uint64_t threads_bounded;	/* rounds cut at MS_PY_SNAP_THREADS_MAX */
	uint64_t bytes_bounded;		/* rounds cut at MS_PY_SNAP_ROUND_BYTES */
	uint64_t time_bounded;		/* rounds cut at their time */
	uint64_t no_thread;		/* states whose native id named no task of the process */
	uint64_t no_room;		/* snapshots not written: the output was full */
	uint64_t unreadable;		/* a process's list of threads that did not read */
};

/*
 * One round's bounds, pure (the engine gives it the clock): begin() at the
 * round's start, admit() before each thread state, spend() the bytes read.
 */
struct ms_py_snap_bounds {
	uint64_t interval_ns;
	uint64_t last_ns;		/* the last round's start; 0: none yet */
	uint64_t deadline_ns;		/* this round's end */
	uint64_t bytes_left;
	uint32_t threads_left;
	bool threads_hit, bytes_hit, time_hit;	/* this round was cut so */
};
void ms_py_snap_bounds_init(struct ms_py_snap_bounds *b, uint32_t interval_ms);
/* Begin a round at now: true when it is late (a whole interval missed since the last). */
bool ms_py_snap_round_begin(struct ms_py_snap_bounds *b, uint64_t now);
/* May one more thread state be read at now? false sets the bound it hit. */
bool ms_py_snap_admit(struct ms_py_snap_bounds *b, uint64_t now);
/* bytes were read; true while some are left (false sets bytes_hit). */
bool ms_py_snap_spend(struct ms_py_snap_bounds *b, uint64_t bytes);

/* The GIL as a snapshot says it (enum ms_bpf_py_gil) for the state tstate. */
uint32_t ms_py_snap_gil(bool known, bool locked, uint64_t holder, uint64_t tstate);

/*
 * A light walk's thread t of process pid, the recorder's tid, as the
 * PY_SNAPSHOT record *out: complete with its frames, or changed with the
 * walk's status and reason, written into why (why_len bytes), which the
 * record's reason points to.
 */
void ms_py_snapshot_from_walk(const struct ms_py_thread *t, uint32_t pid, uint32_t tid,
			      uint64_t round, uint64_t time, uint32_t gil,
			      struct ms_py_snapshot *out, char *why, size_t why_len);

/*
 * The recorder with the snapshot engine, a round every interval_ms
 * (MS_PY_SNAP_INTERVAL_MIN..MAX): its watch (ms_py_recorder_watch) ticks
 * at that interval. Works in a nested pid namespace when /proc is that
 * namespace's (checked: /proc/self is this process). NULL after a message.
 */
struct ms_py_recorder *ms_py_snapshot_recorder_new(uint32_t interval_ms);
/* Its counts; NULL for a recorder of the BPF engine. */
const struct ms_py_snap_counts *ms_py_snapshot_counts(const struct ms_py_recorder *r);

#endif
