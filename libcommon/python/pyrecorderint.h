/*
 * The Python recorder's state, shared by its parts (pyrecorder.h):
 * pyrecorder.c the watch, the processes and their layouts;
 * pyrecorderthreads.c the thread map's refresh and the translation of
 * native thread ids; pyrecordercode.c the naming of code objects;
 * pysnapshot.c the snapshot engine's rounds (pysnapshot.h).
 */
#ifndef MS_PYTHON_PYRECORDERINT_H
#define MS_PYTHON_PYRECORDERINT_H

#include <stdbool.h>
#include <stdint.h>

#include "python/codeobj.h"
#include "python/pyrecorder.h"

enum pyrec_state {
	PYREC_FREE = 0,
	PYREC_PENDING,		/* an interpreter's file mapped: the next tick looks */
	PYREC_LAYOUT,		/* set in the walker's map */
	PYREC_REFUSED,		/* the file's layout was refused: not tried again */
};

/* A mapped file: device and inode, or the build id's first bytes when perf gave that. */
struct pyrec_file {
	uint32_t maj, min;
	uint64_t ino;
	uint64_t bid;
};

struct pyrec_thread {
	uint32_t tid;		/* the recorder's id; native id before translation */
	uint64_t tstate;
};

/* A host tid and the same thread's id in the process's namespace. */
struct pyrec_nsid {
	uint32_t ns, host;
};

struct pyrec_code {
	uint64_t code, stamp;	/* code 0: an empty slot */
};
/* Open addressing at most half full. */
#define PYREC_CODE_SLOTS (2 * MS_PYREC_CODES_MAX)

struct pyrec_proc {
	uint32_t pid;
	enum pyrec_state state;
	struct pyrec_file file;		/* PENDING, REFUSED: the file that made it look */
	bool inherit;			/* PENDING: l is the parent's (a fork) */
	uint32_t tries;			/* PENDING: looks that could not read it */
	struct ms_py_layout l;
	uint64_t pidns_dev, pidns_ino;
	bool nested;			/* its pid namespace is not the recorder's */
	/* the walker's py_threads for it, by tid; fresh: the next reading */
	struct pyrec_thread *threads, *fresh;
	uint32_t n_threads;
	struct pyrec_nsid *nsids;	/* nested, or snapshots: the last reading of its tasks, by ns */
	uint32_t n_nsids;
	bool nsids_stale;		/* a thread of it exited since that reading */
	struct pyrec_code *codes;	/* PYREC_CODE_SLOTS, on the first code */
	uint32_t n_codes;
};

struct ms_py_recorder {
	struct ms_py_sink sink;
	struct pyrec_proc procs[MS_PYREC_PROCS_MAX];
	uint32_t last_proc;		/* the slot proc_of() found last: most records are its */
	struct ms_py_recorder_counts n;
	uint64_t self_ns_dev, self_ns_ino;
	uint64_t tick_bytes;		/* code bytes read since the last tick */
	uint32_t codes_max;
	/* the last code read, kept while its record waits for room */
	struct ms_py_code_info *info;
	bool info_waiting;
	uint32_t info_pid;
	uint64_t info_code, info_stamp;
	char err[512];
	/* --python snapshot: the engine's state (pysnapshot.c); NULL: the BPF engine */
	struct pyrec_snap *snap;
	uint64_t next_look_ns;		/* layouts looked for every MS_COLLECT_TICK_MS */
};

/* The process with a layout of that pid, or NULL. */
struct pyrec_proc *pyrec_layout_of(struct ms_py_recorder *r, uint32_t pid);

/* pyrecorderthreads.c: make the walker's py_threads match p's thread list now. */
void pyrec_threads_refresh(struct ms_py_recorder *r, struct pyrec_proc *p,
			   const struct ms_collect_out *out);
/* Forget p's threads in the walker's map and here. */
void pyrec_threads_drop(struct ms_py_recorder *r, struct pyrec_proc *p);

/*
 * The recorder's id of p's thread whose id in p's namespace is ns, proved
 * one of p's tasks (/proc/PID/task, NSpid when nested): 0 when none is.
 * A miss reads the tasks again, once while *reread is false (it is set).
 */
uint32_t pyrec_tid_of(struct pyrec_proc *p, uint64_t ns, bool *reread);

/* pyrecordercode.c: name the code objects of a walker record (pyrecorder.h). */
enum ms_watch_verdict pyrec_codes_name(struct ms_py_recorder *r, const struct ms_bpf_record *rec,
				       const struct ms_collect_out *out);
/*
 * Name one code of p (its PY_CODE record written now, unless named
 * already): WRITE when named or never to be (counted), WAIT when its record
 * found no room (it is kept for the next call), ERROR when writing failed.
 */
enum ms_watch_verdict pyrec_code_name(struct ms_py_recorder *r, struct pyrec_proc *p, uint64_t code,
				      uint64_t stamp, const struct ms_collect_out *out);

/* pysnapshot.c: the snapshot engine's state, NULL after a message. */
struct pyrec_snap *pyrec_snap_new(uint32_t interval_ms);
void pyrec_snap_free(struct pyrec_snap *s);
/* One round over every process with a layout: 0, or -1 when writing failed. */
int pyrec_snap_round(struct ms_py_recorder *r, uint64_t now_ns, const struct ms_collect_out *out);
uint32_t pyrec_snap_interval(const struct pyrec_snap *s);

#endif
