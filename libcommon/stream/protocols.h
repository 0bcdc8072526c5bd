/*
 * Internal to libcommon: what the stages use besides stream/stream.h, for
 * speed or for their own bookkeeping. Programs outside libcommon (cmd/,
 * formats/) do not include this (scripts/check-layers says so).
 */
#ifndef MS_STREAM_PROTOCOLS_H
#define MS_STREAM_PROTOCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/stream.h"

struct ms_sample;	/* stream/records.h */

/* ---- reader ---- */

/*
 * Set the per-record limit (for tests and for stages that know better).
 * Values below 16 are raised to 16; a limit above MS_RECORD_MAX grows the
 * buffer to match. Call it between records.
 */
void ms_reader_set_limit(struct ms_reader *r, size_t max_record);
/*
 * SAMPLE records in the form ms-decode writes are unpacked into *s while
 * they are framed, one pass over their bytes instead of two
 * (ms_sample_frame()). ms_reader_sample() gives the sample of the record
 * ms_reader_next() just returned when it was (in s, or in the peek's
 * ahead), else NULL: unpack it with ms_sample_unpack() as usual. The
 * samples must outlive the reader's use.
 */
void ms_reader_unpack_samples(struct ms_reader *r, struct ms_sample *s);
struct ms_sample *ms_reader_sample(const struct ms_reader *r, const struct ms_record *rec);
/*
 * The next record's sample, when the next record is a whole SAMPLE in the
 * form above already in the reader's buffer (nothing is read): framed and
 * unpacked into ahead, which the next ms_reader_next() then hands out
 * without reading it again (ms_reader_sample()). Else NULL. Lets a stage
 * prefetch what the next sample will need. ahead must not be the sample
 * in use until then.
 */
const struct ms_sample *ms_reader_peek_sample(struct ms_reader *r, struct ms_sample *ahead);
/*
 * The STACK_REF records that come next, as many as are whole in the
 * buffer (nothing is read) and at most MS_RECORD_MAX bytes of them, each
 * framed as ms_reader_next() would (stack_ref_len()): their count, *bytes
 * and *len the span they make, consumed. 0 when the next record is not
 * one. For a stage that copies them as they are (ms-symbolize): one copy
 * instead of one call per record.
 */
uint64_t ms_reader_stack_ref_run(struct ms_reader *r, const char **bytes, size_t *len);
/*
 * The input's bytes when it is a regular file the reader mapped (from the
 * file's first byte, *len of them), else NULL: a record's bytes are then
 * at file offset rec->bytes - map. Valid until ms_reader_free().
 */
const char *ms_reader_map(const struct ms_reader *r, size_t *len);
const char *ms_reader_name(const struct ms_reader *r);
/* Bytes consumed so far (position of the next record). */
uint64_t ms_reader_offset(const struct ms_reader *r);
/* Records returned so far (the header and trailer not counted). */
uint64_t ms_reader_records(const struct ms_reader *r);
/*
 * Flush w before any read of the input that would block, so that a filter
 * never sits on output while it waits for input (s6's buffer_flush1read).
 * A failed flush is reported as usual and makes the writer's next call
 * return -1; the read goes ahead.
 */
void ms_reader_flush_before_read(struct ms_reader *r, struct ms_writer *w);
/*
 * Whether the mapped input was cut short under the reader (another
 * process truncated the file): said once, then true. For a stage whose
 * record callback failed on what may be the zeros read past the cut.
 */
bool ms_reader_cut_short(struct ms_reader *r);

/* ---- writer ---- */

enum ms_writer_flags {
	/*
	 * Never block on fd (ms-collect): when the pipe is full, records that
	 * do not fit in the bounded buffer are refused (ms_writer_room()
	 * returns false) and the caller counts them as lost.
	 */
	MS_WRITER_NONBLOCK = 1 << 0,
	/*
	 * Compress the stream into one LZ4 frame (stream/compress.h): what
	 * is written goes out compressed, waiting for the descriptor.
	 */
	MS_WRITER_LZ4 = 1 << 1,
};

/*
 * A record packed in place: ms_writer_begin() with its kind, then ms_writer_reserve()
 * room for up to n more bytes of it (NULL when the record would outgrow
 * MS_RECORD_MAX or the writer has failed: ms_writer_end() then reports
 * which and drops the record), ms_writer_advance() by the bytes written
 * there, and ms_writer_end(); or ms_writer_cancel() to drop it unsaid. A
 * regular file (not opened O_APPEND) receives whole 2 MiB blocks at
 * offsets that are multiples of 2 MiB, for the page cache's sake (see
 * writer.c); flush, trailer and close write the rest.
 */
void ms_writer_begin(struct ms_writer *w, uint32_t kind);
char *ms_writer_reserve(struct ms_writer *w, size_t n);
void ms_writer_advance(struct ms_writer *w, size_t n);
int ms_writer_end(struct ms_writer *w);
void ms_writer_cancel(struct ms_writer *w);
/* n whole records of len bytes in all (at most MS_RECORD_MAX), as they are. */
int ms_writer_copy_records(struct ms_writer *w, const char *bytes, size_t len, uint64_t n);
/*
 * For MS_WRITER_NONBLOCK: whether a record of up to len bytes can be taken
 * now, after a non-blocking attempt to drain the buffer when it is short
 * of room. Never blocks, never grows the buffer; false when len exceeds
 * MS_RECORD_MAX. A writer that has failed (or whose pipe broke) says true,
 * so that the caller's next write returns -1 and reports it. A record
 * packed without asking first is still written whole: if it does not fit,
 * the writer waits for the pipe (the one case where NONBLOCK blocks).
 */
bool ms_writer_room(struct ms_writer *w, size_t len);
/* Write everything buffered, waiting for the pipe even in NONBLOCK mode. */
int ms_writer_flush(struct ms_writer *w);
/*
 * NONBLOCK mode: write what the pipe takes now and keep the rest; for a
 * source between rounds of input. On a blocking fd this is a flush.
 */
int ms_writer_drain(struct ms_writer *w);
/* Bytes buffered and not yet written. */
size_t ms_writer_pending(const struct ms_writer *w);
uint64_t ms_writer_records(const struct ms_writer *w);

/*
 * Grow the pipe at fd, if it is one of the default 64 KiB, to 1 MiB: the
 * reader does it to its input, so each pipe between stages is grown by
 * the stage downstream.
 */
void ms_pipe_grow(int fd);

#endif
