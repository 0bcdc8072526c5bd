/*
 * ms-collect's Python recorder (--python bpf): a watch of the recording
 * (perf/collect.h) that feeds the BPF walker (bpf/sampler.h) its maps and
 * names the code objects the walker's records point at. With the snapshot
 * engine (--python snapshot, pysnapshot.h: ms_py_snapshot_recorder_new)
 * the same layouts and code naming serve thread snapshots instead: no
 * sink, no thread map; its watch ticks every snapshot interval and looks
 * for layouts every MS_COLLECT_TICK_MS as here.
 *
 * Layout. When a recorded process maps a file named like an interpreter
 * (python3.X, libpython3.X.so*: ms_py_module_name()), or was attached to
 * with one mapped (the synthesized mappings), the next tick finds its
 * layout (ms_py_layout_find(): by then the loader mapped all of the
 * module), sets it in the walker's map through the sink and writes one
 * PY_PROCESS record (stream/records.h): ok, or unsupported / failed with
 * ms_py_layout_find()'s reason (a live process whose memory did not read
 * is looked at again, at most 5 ticks, before it is refused: the loader
 * may still be mapping the library). A refused (pid, file) is not tried
 * again; another file named so is. A forked child of a process with a layout
 * gets its parent's (its own pid namespace looked up) and its own
 * PY_PROCESS record. An exec or the process's end drops its layout, its
 * threads and its named code.
 *
 * Threads. Every tick, for each process with a layout, its interpreters'
 * thread lists are read (thread state, native_thread_id; at most
 * MS_PY_WALK_INTERPS interpreters and MS_PY_WALK_THREADS states) and the
 * walker's py_threads made to match: tid -> thread state, gone threads
 * dropped. native_thread_id is the thread's id in the process's pid
 * namespace: in the recorder's namespace it is the tid; in a nested one
 * it is translated through /proc/PID/task/TID/status (NSpid), re-read when
 * an id is not in the last reading. An id two states claim, or none
 * translates, is left out: the walker's own search (py_find) then says
 * ambiguous or no thread, never another thread's frames.
 *
 * Code. For each walker record of kind MS_BPF_KIND_PYTHON drained, each
 * frame whose (pid, code, stamp) is not named yet is read and proved
 * (codeobj.h) and written as a PY_CODE record ahead of the walker's
 * record, so that every stage after finds the code before the frames. At
 * most MS_PYREC_CODES_MAX codes a process are named (past that: the
 * counted problem python-code-table-full, no record; those frames show as
 * unknown code); at most MS_PYREC_TICK_BYTES bytes are read for code
 * between two ticks (past that: python-code-bounded, no record now: a
 * later record naming it tries again). A stamp of 0 (the walker could not
 * read it) is written unreadable without a read.
 *
 * Room: a PY_PROCESS record waits for room in the output at the tick (its
 * process is looked at again at the next); a PY_CODE record that does not
 * fit makes the walker's record wait (MS_WATCH_WAIT).
 *
 * Allocation: per process (its thread sets, its code table on the first
 * code), never per record or per tick.
 */
#ifndef MS_PYTHON_PYRECORDER_H
#define MS_PYTHON_PYRECORDER_H

#include <stdint.h>

#include "perf/collect.h"
#include "python/layout.h"

/* Processes with a layout (or waiting for one, or refused) at a time. */
#define MS_PYREC_PROCS_MAX 64
/* Code objects named per process. */
#define MS_PYREC_CODES_MAX 16384u
/* Bytes of code objects read between two ticks (some 20 ms): 100 MiB/s. */
#define MS_PYREC_TICK_BYTES (2u << 20)

/*
 * Where the recorder's findings go: the BPF walker's maps (ms-collect
 * wires ms_bpf_sampler_*; tests a fake). pids and tids are the
 * recorder's (the initial namespace's). Each returns 0, or -1 after a
 * message (counted as the problem python-map-failed).
 *  set_layout(): process pid's layout, and its pid namespace (as
 *   ms_bpf_py_pidns() gives it, python/bpflayout.h): the sink converts it
 *   to the walker's struct ms_bpf_py_layout.
 */
struct ms_py_sink {
	void *arg;
	int (*set_layout)(void *arg, uint32_t pid, const struct ms_py_layout *l,
			  uint64_t pidns_dev, uint64_t pidns_ino);
	int (*drop_layout)(void *arg, uint32_t pid);
	int (*set_thread)(void *arg, uint32_t tid, uint64_t tstate);
	int (*drop_thread)(void *arg, uint32_t tid);
};

struct ms_py_recorder_counts {
	uint64_t layouts;		/* PY_PROCESS ok written */
	uint64_t refused;		/* PY_PROCESS unsupported or failed written */
	uint64_t records;		/* walker records of kind PYTHON told of */
	uint64_t codes;			/* PY_CODE records written */
	uint64_t codes_ok;		/* of those, status ok */
	uint64_t code_bytes;		/* read for them */
	uint64_t bounded;		/* codes not read: the tick's bytes were spent */
	uint64_t table_full;		/* codes not named: the process's table was full */
	uint64_t thread_sets, thread_drops;	/* sink calls */
	uint64_t ticks;
};

struct ms_py_recorder;
/* NULL after a message. The sink is copied. */
struct ms_py_recorder *ms_py_recorder_new(const struct ms_py_sink *sink);
void ms_py_recorder_free(struct ms_py_recorder *r);
/* Fill *w with the recorder's callbacks, for ms_collect_opts.watches. */
void ms_py_recorder_watch(struct ms_py_recorder *r, struct ms_collect_watch *w);
const struct ms_py_recorder_counts *ms_py_recorder_counts(const struct ms_py_recorder *r);
/* For tests: name at most codes_max codes a process (at most MS_PYREC_CODES_MAX). */
void ms_py_recorder_limit_codes(struct ms_py_recorder *r, uint32_t codes_max);

/*
 * The sink of a loaded BPF sampler (perf/bpfload.h; pyrecorderbpf.c, which
 * only ms-collect links, with libbpf): each layout made the walker's
 * (ms_bpf_py_layout_make(), py_find looking through at most
 * MS_BPF_PY_FIND_MAX states) and set in its maps.
 */
struct ms_bpf_sampler;
void ms_py_recorder_bpf_sink(struct ms_bpf_sampler *b, struct ms_py_sink *out);

#endif
