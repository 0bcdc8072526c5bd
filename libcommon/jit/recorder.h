/*
 * ms-collect's JIT recorder: reads a target process's perf map
 * (/tmp/perf-PID.map, perfmap.h) when, and only when, a sample lands in
 * anonymous executable code that no function it already read covers;
 * proves each new function's frame from the process's own code
 * (rows.h); and writes MS_REC_JIT_FUNC and MS_REC_JIT_READ records
 * (stream/records.h) into the stream before the RAW record of the sample
 * that made it read. It is a watch of the recording (perf/collect.h):
 * ms-collect wires it, collect.c calls it.
 *
 * Per process (the target and its descendants: the only ones the
 * collector's events report) it keeps:
 *  - its anonymous executable ranges (recorderanon.h), from the mappings
 *    synthesized from /proc when attaching and each mapping record; a
 *    fork copies its parent's; an exec forgets them;
 *  - the functions read from its map, in a table of its own
 *    (perfmap.h): a mapping record made after the last read over a
 *    function ends it (ms_perfmap_unmap()), so that the next sample there
 *    reads again and may find the new code's line;
 *  - the read throttle (throttle.h) on the samples' time.
 *
 * The trigger (ms_anon_trigger()): the sample's ip, user call chain or
 * any 8-byte-aligned word of its user stack copy in an anonymous range
 * and in no function read. A process with no such range costs a look-up;
 * a word outside [lowest start, highest end) one compare.
 *
 * A read: the process's facts (recorderproc.h); a map older than the
 * process is STALE and not read (ms_perfmap_stale(),
 * MS_JIT_START_SLACK_NS); none is MISSING; one that is not the
 * process's user's or root's, or that cannot be opened or read, FAILED
 * (err says why). Otherwise at most MS_PERFMAP_READ_MAX bytes from where
 * the last read stopped (BOUNDED when it stopped there). A read that
 * found no new function is throttled, as a MISSING or STALE one.
 * Then, per new function in line order, not ended by a mapping since: the
 * code budget (ms_perfmap_code_fits(); past it MS_JIT_NO_CODE), its first
 * min(size, MS_PROVE_STOP_MAX) bytes read from the process (failing:
 * MS_JIT_CODE_UNREAD, as for a function a later line took the place of,
 * whose bytes are another's), proved (ms_prove_rows()) and encoded
 * (ms_rows_encode()) into one JIT_FUNC record timed at the read
 * (CLOCK_MONOTONIC, and after every mapping record of the process seen).
 * A JIT_READ record with the process's totals follows when something was
 * new or the read ended otherwise than the last one written.
 *
 * Room: the records of a read go out only when the output takes them.
 * No read starts without room for a first record (the trigger stays and a
 * later sample reads; counted in the problem "jit-read-deferred"); records
 * a read made that did not fit wait, and the sample waits with them
 * (MS_WATCH_WAIT): nothing is lost but what the collector drops and counts.
 * Records still waiting go out at the end (finish()).
 *
 * Allocation: per process and per read, never per sample.
 */
#ifndef MS_JIT_RECORDER_H
#define MS_JIT_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "perf/collect.h"

struct ms_jit_recorder;

/* What the recorder did, for the reports and the measurements. */
struct ms_jit_recorder_counts {
	uint64_t samples;	/* told of */
	uint64_t scanned;	/* of a process with anonymous code: searched */
	uint64_t triggers;	/* found an uncovered address */
	uint64_t throttled;	/* of those, not read: too soon after a read found nothing */
	uint64_t deferred;	/* of those, not read: no room in the output */
	uint64_t reads;		/* made */
	uint64_t funcs;		/* JIT_FUNC records written */
	uint64_t read_records;	/* JIT_READ records written */
	uint64_t waits;		/* samples told to wait for room */
	uint64_t dropped;	/* functions dropped when their process exec'd before they went out */
};

/* The recorder, with its prover (Zydis). NULL after a message. */
struct ms_jit_recorder *ms_jit_recorder_new(void);
void ms_jit_recorder_free(struct ms_jit_recorder *r);

/*
 * What it reads: perf maps (--no-perf-map turns them off), the objects
 * registered through the GDB JIT interface (recordergdb.h;
 * --no-jit-objects). Both by default.
 */
void ms_jit_recorder_sources(struct ms_jit_recorder *r, bool perf_maps, bool objects);

/* Fill *w with the recorder's callbacks, for ms_collect_opts.watches. */
void ms_jit_recorder_watch(struct ms_jit_recorder *r, struct ms_collect_watch *w);

const struct ms_jit_recorder_counts *ms_jit_recorder_counts(const struct ms_jit_recorder *r);
/* The GDB JIT part's state and counts (recordergdb.h). */
struct ms_gdb_shared;
const struct ms_gdb_shared *ms_jit_recorder_gdb(const struct ms_jit_recorder *r);

#endif
