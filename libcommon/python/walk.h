/*
 * A userspace walker of a live CPython process's interpreted frames over
 * process_vm_readv, through a layout (layout.h): every interpreter's
 * thread states, each thread's frames innermost first, each frame's code
 * (file, qualified name, first line) and current line. The process runs
 * on: a walk is complete only when it ends where the runtime says it ends
 * (a NULL previous) with every object proved by its type; any other walk
 * is reported with its reason and the frames read so far, never as a
 * shorter complete stack.
 *
 * A light walk (ms_py_walker_light(), the snapshot engine's) reads per
 * frame only what a PY_SNAPSHOT record holds: the code's address, proved a
 * code object by its type, its stamp (co_linetable's pointer), the
 * instruction pointer and the flags; no names, no line tables. It is also
 * checked against the process running on: the thread's current frame is
 * read again after the walk, and a walk whose thread moved meanwhile is
 * CHANGED (its frames mix two states of the thread).
 */
#ifndef MS_PYTHON_WALK_H
#define MS_PYTHON_WALK_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "python/layout.h"
#include "python/pyobj.h"

/* Bounds of one walk. */
#define MS_PY_WALK_FRAMES 256		/* frames a thread */
#define MS_PY_WALK_THREADS 4096		/* thread states in all */
#define MS_PY_WALK_INTERPS 64		/* interpreters */
#define MS_PY_WALK_BYTES (16u << 20)	/* bytes read in one walk of all threads */
#define MS_PY_STR_MAX 1024		/* characters of a name or file */
#define MS_PY_LINETABLE_MAX (1u << 20)	/* bytes of one locations table */

enum ms_py_walk_status {
	MS_PY_WALK_COMPLETE = 0,	/* ended at a NULL previous */
	MS_PY_WALK_TOO_DEEP,		/* MS_PY_WALK_FRAMES frames and more */
	MS_PY_WALK_UNREADABLE,		/* a read failed: the memory changed or is gone */
	MS_PY_WALK_INVALID,		/* an object is not what the layout says it is */
	MS_PY_WALK_BUDGET,		/* the walk's bytes read (MS_PY_WALK_BYTES, or its budget) */
	MS_PY_WALK_CHANGED,		/* light: the current frame moved during the walk */
};
const char *ms_py_walk_status_name(enum ms_py_walk_status s);

/* A frame is the first its activation of the eval loop ran (bpf/sampler.h's MS_BPF_PY_ENTRY). */
#define MS_PY_FRAME_ENTRY 1u

struct ms_py_frame {
	uint64_t code;			/* the code object's address */
	int line;			/* current line; 0 when the instruction has none (full walks) */
	int firstlineno;		/* full walks */
	uint32_t file, func;		/* offsets into the thread's strings (full walks) */
	uint64_t stamp;			/* the code's co_linetable pointer */
	uint64_t instr;			/* prev_instr (3.11, 3.12) / instr_ptr (3.13) */
	/*
	 * MS_PY_FRAME_ENTRY as the BPF walker sets it: on 3.11 the frame's
	 * is_entry; on 3.12+ the frame just inside a C-stack shim frame.
	 */
	uint32_t flags;
};

struct ms_py_thread {
	uint64_t tstate, interp;
	uint64_t native_tid;
	uint32_t n_frames;		/* innermost first */
	struct ms_py_frame frames[MS_PY_WALK_FRAMES];
	enum ms_py_walk_status status;
	char reason[160];		/* what ended an incomplete walk */
	uint32_t skipped_cstack;	/* frames owned by the C stack, skipped */
	char *strings;			/* the walker's buffer: file and func names */
};

/* The walker: reused buffers, allocated once. */
struct ms_py_walker;
struct ms_py_walker *ms_py_walker_new(pid_t pid, const struct ms_py_layout *l);
void ms_py_walker_free(struct ms_py_walker *w);
/*
 * Walk process pid through layout l from now on (buffers and settings
 * kept): 0, or -1 when the layout's offsets are out of range (as
 * ms_py_walker_new() refuses them).
 */
int ms_py_walker_set(struct ms_py_walker *w, pid_t pid, const struct ms_py_layout *l);

/* Walk light (above) or full (the default). */
void ms_py_walker_light(struct ms_py_walker *w, bool light);
/*
 * Read through fn instead of the process (pyobj.h: a test's fake memory).
 * Every read of a walk goes through it, thread list included.
 */
void ms_py_walker_read_with(struct ms_py_walker *w, ms_py_read_fn fn, void *arg);
/*
 * The next walks may read at most bytes (at most MS_PY_WALK_BYTES, the
 * default); ms_py_walker_bytes() is what the last walk read, its thread
 * list included.
 */
void ms_py_walker_budget(struct ms_py_walker *w, uint64_t bytes);
uint64_t ms_py_walker_bytes(const struct ms_py_walker *w);
/* Whether the last walk found its budget spent (a read refused for it). */
bool ms_py_walker_spent(const struct ms_py_walker *w);

/* A frame's file or function name. */
const char *ms_py_thread_str(const struct ms_py_thread *t, uint32_t off);

/*
 * Walk every thread of every interpreter, calling fn for each (the thread
 * and its buffers are reused: copy what you keep). fn returning non-zero
 * stops the walk. Returns 0 when the list of interpreters and threads was
 * read to its end; -1 with the reason in err when it was not (the list
 * unreadable or past its bound): the threads given so far are not all;
 * errno is then the failed read's (ESRCH: the process is gone), or 0.
 */
typedef int (*ms_py_thread_fn)(const struct ms_py_thread *t, void *data);
int ms_py_walk(struct ms_py_walker *w, ms_py_thread_fn fn, void *data, char *err, size_t errlen);

/*
 * Name the code object at code and the line of instr in it, as a walk
 * names a frame (each object proved by its type): the walker's thread,
 * reused, holding that one frame and its strings; or NULL with the reason
 * in err (the code freed or replaced since its address was taken).
 */
const struct ms_py_thread *ms_py_walk_code(struct ms_py_walker *w, uint64_t code, uint64_t instr,
					   char *err, size_t errlen);

/*
 * The GIL of interpreter interp (3.11: the runtime's, the same for every
 * interpreter), read once: whether it is locked and its last holder (a
 * thread state). Counted in the walk's bytes. Returns 0, or -1 when the
 * layout does not say where it is or a read failed (the state unknown).
 */
int ms_py_walk_gil(struct ms_py_walker *w, uint64_t interp, bool *locked, uint64_t *holder);

#endif
