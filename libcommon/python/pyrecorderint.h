/*
 * The Python recorder's state, shared by its parts (pyrecorder.h):
 * pyrecorder.c the watch, the processes and their layouts;
 * pyrecorderthreads.c the thread map's refresh; pyrecordercode.c the
 * naming of code objects.
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
	struct pyrec_nsid *nsids;	/* nested: the last NSpid reading, by ns */
	uint32_t n_nsids;
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
};

/* The process with a layout of that pid, or NULL. */
struct pyrec_proc *pyrec_layout_of(struct ms_py_recorder *r, uint32_t pid);

/* pyrecorderthreads.c: make the walker's py_threads match p's thread list now. */
void pyrec_threads_refresh(struct ms_py_recorder *r, struct pyrec_proc *p,
			   const struct ms_collect_out *out);
/* Forget p's threads in the walker's map and here. */
void pyrec_threads_drop(struct ms_py_recorder *r, struct pyrec_proc *p);

/* pyrecordercode.c: name the code objects of a walker record (pyrecorder.h). */
enum ms_watch_verdict pyrec_codes_name(struct ms_py_recorder *r, const struct ms_bpf_record *rec,
				       const struct ms_collect_out *out);

#endif
