/*
 * Between a record stream and a capture: what ms-capture does, in both
 * directions (capture/stage.c, capture/dump.c).
 *
 * ms_capture_from_stream() reads every record of a stream into the builder
 * (capture/builder.h says what each kind becomes). Kinds a capture v1 does
 * not hold (sample, mmap, attr, raw, round, jit-func, jit-object, and kinds
 * this build does not know) are counted into info "ignored-records.KIND". A malformed record
 * ends it. ms_capture_stage() is the same as ms-capture's stage, which
 * writes the capture to a file.
 *
 * ms_capture_dump() writes a capture back out as a stream that
 * ms_capture_from_stream() turns into the same capture, byte for byte:
 * header, INFO per info row, TARGET (when info has a text "command" and a
 * numeric "pid"; argv is "command" split at each space), TARGET_EXIT,
 * MODULE per module (id = its index; a perf-map or jit-object one with its base),
 * JIT_READ per perf-map row (its process's setting), PY_PROCESS per Python
 * process row, LABEL_SPAN per label span, FRAME per symbolized (module,
 * address) with its inline chain as lines, COMM per thread, STACK per
 * sample row with a DUTY per duty row and a LOST per loss row among them
 * in time order (before the samples of its time; those after the last
 * sample last), a LOST of time 0 per source for the part of its total
 * that no loss row holds (the whole total in a capture without rows: the
 * builder counts a loss of time 0 in the totals alone), the intervals
 * (a STACK_DEF per distinct stack, then INTERVAL per row), the tasks (a
 * STACK_DEF per stack a wait row is at, numbered on from the intervals',
 * then per task a TASK_WAIT per wait row and one per changed or dropped
 * read: at its first or last read where no wait row is, else at its
 * first), THROTTLE for the total, PROBLEM per row, and a trailer whose "complete" is false for an
 * incomplete capture.
 *
 * A stack record is one sample, and the stream has no field for more: a
 * sample row of count N (an imported "this stack, 67108864 times") is
 * dumped as INFO "sample-count" N (MS_CAPTURE_INFO_SAMPLE_COUNT) right
 * before its STACK, whose period is the row's. The builder gives that
 * count to the next stack it reads (builder.h). Stages between pass INFO
 * records on in order, and what they add (the FRAME records ms-symbolize
 * writes before a stack) takes no count, so the round trip keeps the row,
 * and a dump is one or two records per row, never N. Rows of count 1 get
 * no INFO: a recording's dump is what it always was. A reader that does
 * not know the convention (an ms-capture older than capture format 1.2)
 * keeps the INFO as a fact and counts each such row once. The dump leaves
 * out an info row of that key, which no builder keeps: a file holding one
 * would give its number to the first sample.
 *
 * A frame without a frame fact (MS_CAP_UNSYMBOLIZED: recorded with
 * symbolization deferred) gets no FRAME record, so that an ms-symbolize
 * stage reading the dump looks it up (it takes the FRAME records it reads
 * as known). That is how `microscope symbolize` works:
 *   ms-capture --dump IN | ms-symbolize | ms-capture -o OUT
 * The module statuses (capture.h) are not dumped: the builder derives them
 * again from what the stream holds.
 *
 * A stream says each throttle event with a record of its own, so a dump
 * writes one per event counted: a capture with more than
 * MS_DUMP_THROTTLE_MAX of them is refused with a message, as a file could
 * otherwise claim 2^64 and have the dump write records forever.
 */
#ifndef MS_CAPTURE_CONVERT_H
#define MS_CAPTURE_CONVERT_H

#include <stdbool.h>

#include "capture/capture.h"
#include "stream/records.h"
#include "stream/stream.h"

/* Throttle events a capture may count and still be dumped (see above). */
#define MS_DUMP_THROTTLE_MAX (1u << 24)

enum ms_capture_from_stream_flags {
	/*
	 * A stream cut short (no trailer) still gives a capture: it is marked
	 * MS_CAPTURE_INCOMPLETE with a problem saying where the stream ended.
	 */
	MS_CAPTURE_SALVAGE = 1 << 0,
};

/* What a capture takes besides the stream. */
struct ms_capture_stream_options {
	unsigned flags;			/* enum ms_capture_from_stream_flags */
	/* Info facts set after the stream's (ms-capture --info): they win. */
	const struct ms_info *info;
	uint32_t n_info;
	/*
	 * The frame facts of this capture stand in where the stream's name
	 * less (ms-capture --keep-names; builder.h: frame fallback). Its
	 * module ids must be the stream's: the stream is its dump, passed
	 * through a symbolize stage.
	 */
	const struct ms_capture *fallback;
};

/*
 * Read r to its end into *out; o may be NULL. Returns 0, or -1 after a
 * message (the reader's for bad or cut-short input) with *out NULL.
 */
int ms_capture_from_stream(struct ms_reader *r, const struct ms_capture_stream_options *o,
			   struct ms_capture **out);

/*
 * The ms-capture stage: the stream on in_fd (named in_name) into a
 * capture written to output (replaced only when complete). With
 * keep_names, the capture of that path, loaded once the input's header
 * was read, is the fallback. A stream cut short writes nothing ("no
 * capture written") unless stream.flags has MS_CAPTURE_SALVAGE. Runs on
 * the stage loop (stream/stage.h), whose exit status it returns.
 */
struct ms_capture_stage_options {
	const char *output;
	const char *keep_names;
	struct ms_capture_stream_options stream;
};
int ms_capture_stage(int in_fd, const char *in_name, const struct ms_capture_stage_options *o);

enum ms_capture_dump_flags {
	/*
	 * Leave out the FRAME records of frames whose symbolization failed
	 * (reason not MS_SYM_OK), so that a symbolize stage downstream tries
	 * them again (with debug directories it did not have before, say).
	 */
	MS_DUMP_OMIT_FAILED = 1 << 0,
};

/*
 * Write cap to w as a stream whose header names stage and version; flags
 * are enum ms_capture_dump_flags. Returns 0, or -1 after a message (or
 * quietly when the writer's pipe is broken: check ms_writer_broken_pipe()).
 */
int ms_capture_dump(const struct ms_capture *cap, struct ms_writer *w, const char *stage,
		    const char *version, unsigned flags);

/*
 * ms-capture --dump: the capture at path as a stream on out_fd (named
 * out_name). A source on the stage loop: returns its exit status.
 */
int ms_capture_dump_stage(const char *path, unsigned flags, int out_fd, const char *out_name);

/*
 * The frame fact of frame i of cap as a stream record would hold it (its
 * strings borrow from cap). -1 after a message when it has more lines than
 * a record holds.
 */
int ms_capture_frame_fact(const struct ms_capture *cap, uint32_t i, struct ms_frame *out);

#endif
