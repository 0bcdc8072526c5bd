/*
 * Between a record stream and a capture: what ms-capture does, in both
 * directions.
 *
 * ms_capture_from_stream() reads every record of a stream into the builder
 * (capture/builder.h says what each kind becomes). Kinds a capture v1 does
 * not hold (sample, mmap, attr, raw, round, and kinds this build does not
 * know) are counted into info "ignored-records.KIND". A malformed record
 * ends it.
 *
 * ms_capture_dump() writes a capture back out as a stream that
 * ms_capture_from_stream() turns into the same capture, byte for byte:
 * header, INFO per info row, TARGET (when info has a text "command" and a
 * numeric "pid"; argv is "command" split at each space), TARGET_EXIT,
 * MODULE per module (id = its index), FRAME per symbolized (module,
 * address), COMM per thread, STACK per sample, LOST and THROTTLE for the
 * totals, PROBLEM per row, and a trailer whose "complete" is false for an
 * incomplete capture.
 */
#ifndef MS_CAPTURE_CONVERT_H
#define MS_CAPTURE_CONVERT_H

#include <stdbool.h>

#include "capture/capture.h"
#include "stream/stream.h"

enum ms_capture_from_stream_flags {
	/*
	 * A stream cut short (no trailer) still gives a capture: it is marked
	 * MS_CAPTURE_INCOMPLETE with a problem saying where the stream ended.
	 */
	MS_CAPTURE_SALVAGE = 1 << 0,
};

/*
 * Read r to its end into *out. Returns 0, or MS_READ_ERROR or
 * MS_READ_TRUNCATED (no salvage) after one message; *out is then NULL.
 */
int ms_capture_from_stream(struct ms_reader *r, unsigned flags, struct ms_capture **out);

/*
 * Write cap to w as a stream whose header names stage and version. Returns
 * 0, or -1 after a message (or quietly when the writer's pipe is broken:
 * check ms_writer_broken_pipe()).
 */
int ms_capture_dump(const struct ms_capture *cap, struct ms_writer *w,
		    const char *stage, const char *version);

#endif
