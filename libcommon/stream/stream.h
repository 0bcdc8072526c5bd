/*
 * The record stream: what microscope's stages pass to each other over pipes.
 * The normative spec is man/microscope-stream.5; this is its C interface.
 *
 * A stream is a sequence of msgpack objects. Each is a record: a msgpack
 * array whose first element is the record kind (enum ms_record_kind in
 * stream/records.h). The first record is a header (magic, version, the chain
 * of producers), the last a trailer (how many records came between them). A
 * stream that ends without a trailer was cut short.
 *
 * Invariants the reader enforces before any record reaches a caller:
 *  - no record exceeds the reader's limit (MS_RECORD_MAX unless set lower);
 *    every container and string header is checked against the bytes left in
 *    the record before msgpack-c sees it, so a hostile map32 header cannot
 *    make it reserve memory;
 *  - nesting is at most MS_RECORD_DEPTH deep;
 *  - the header comes first, with a known magic and a major version this
 *    build reads; the trailer's count matches what was read.
 *
 * Memory: a reader and a writer each own one fixed buffer (256 KiB; the
 * reader's grows only when its limit is raised above that; a reader of a
 * regular file maps it instead) and the reader one arena for a record's
 * msgpack objects, sized by the largest record seen; all are reused, so
 * nothing is allocated per record after warm-up.
 * A record returned by ms_reader_next() borrows from the reader: it is valid
 * until the next call.
 */
#ifndef MS_STREAM_STREAM_H
#define MS_STREAM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#define MS_STREAM_MAGIC "microscope-stream"
#define MS_STREAM_MAJOR 1
#define MS_STREAM_MINOR 2

/* Largest record: a 64 KiB stack copy plus registers and both callchains. */
#define MS_RECORD_MAX (160u * 1024u)
#define MS_RECORD_DEPTH 8
#define MS_PRODUCERS_MAX 16
#define MS_NAME_MAX 64

struct ms_producer {
	char name[MS_NAME_MAX];
	char version[MS_NAME_MAX];
};

/* Decoded stream header. */
struct ms_header {
	uint32_t major, minor;
	uint32_t n_producers;
	struct ms_producer producers[MS_PRODUCERS_MAX];
};

/*
 * One record as the reader hands it out. obj is the whole record (an array
 * whose element 0 is the kind); bytes/len are its exact encoding, which a
 * stage that does not consume the record passes on with ms_writer_copy().
 * offset is the position of the record's first byte in the input, for error
 * messages ("at byte 1234").
 */
struct ms_record {
	uint32_t kind;
	const msgpack_object *obj;
	const char *bytes;
	size_t len;
	uint64_t offset;
	uint64_t index;		/* 0-based, counting records after the header */
};

enum ms_read_result {
	MS_READ_RECORD = 1,	/* *rec holds the next record */
	MS_READ_END = 0,	/* trailer read and its count matched */
	MS_READ_ERROR = -1,	/* malformed input or I/O error; message printed */
	MS_READ_TRUNCATED = -2,	/* EOF before the trailer; message printed */
};

struct ms_reader;	/* opaque; see stream/reader.c */
struct ms_sample;	/* stream/records.h */

/*
 * Open a reader on fd. name names the input in messages ("stdin", a path).
 * Reads and validates the header; prints a message and returns NULL when
 * the input is not a stream this build reads (empty, wrong magic, other
 * major version, malformed or cut-short header). fd may be a pipe or a
 * file, blocking or not; the reader never closes it.
 */
struct ms_reader *ms_reader_open(int fd, const char *name);
/*
 * Set the per-record limit (for tests and for stages that know better).
 * Values below 16 are raised to 16; a limit above MS_RECORD_MAX grows the
 * buffer to match. Call it between records.
 */
void ms_reader_set_limit(struct ms_reader *r, size_t max_record);
const struct ms_header *ms_reader_header(const struct ms_reader *r);
/*
 * Next record; see enum ms_read_result. The header and trailer are never
 * returned: the reader checks them. After MS_READ_END, MS_READ_ERROR or
 * MS_READ_TRUNCATED every later call returns the same (ERROR for
 * TRUNCATED) without a new message.
 */
int ms_reader_next(struct ms_reader *r, struct ms_record *rec);
/*
 * Defer msgpack objects for RAW, STACK, STACK_DEF, STACK_REF and SAMPLE
 * records (off by default): the reader still frames and checks every
 * record, but hands those kinds out with rec->obj NULL, for their
 * ms_*_unpack() to decode from rec->bytes (building the objects was a fifth of
 * ms-symbolize). A stage that wants the object of such a record anyway
 * asks ms_reader_object(), which builds it; valid until the next call.
 */
void ms_reader_defer_objects(struct ms_reader *r, bool on);
/*
 * With objects deferred: SAMPLE records in the form ms-decode writes are
 * unpacked into *s while they are framed, one pass over their bytes
 * instead of two (ms_sample_frame()). ms_reader_sample() gives the sample
 * of the record ms_reader_next() just returned when it was (in s, or in
 * the peek's ahead), else NULL: unpack it with ms_sample_unpack() as
 * before. The samples must outlive the reader's use.
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
 * With objects deferred: the STACK_REF records that come next, as many as
 * are whole in the buffer (nothing is read) and at most MS_RECORD_MAX
 * bytes of them, each framed as ms_reader_next() would (stack_ref_len()):
 * their count, *bytes and *len the span they make, consumed. 0 when the
 * next record is not one. For a stage that copies them as they are
 * (ms-symbolize): one copy instead of one call per record.
 */
uint64_t ms_reader_stack_ref_run(struct ms_reader *r, const char **bytes, size_t *len);
/* rec->obj, built now if it was deferred; NULL after a message if rec is stale. */
const msgpack_object *ms_reader_object(struct ms_reader *r, const struct ms_record *rec);
/*
 * The input's bytes when it is a regular file the reader mapped (from the
 * file's first byte, *len of them), else NULL: a record's bytes are then
 * at file offset rec->bytes - map. Valid until ms_reader_free().
 */
const char *ms_reader_map(const struct ms_reader *r, size_t *len);
/* The trailer's fields, valid after MS_READ_END. */
uint64_t ms_reader_trailer_records(const struct ms_reader *r);
bool ms_reader_trailer_complete(const struct ms_reader *r);
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
struct ms_writer;
void ms_reader_flush_before_read(struct ms_reader *r, struct ms_writer *w);
void ms_reader_free(struct ms_reader *r);

/*
 * The writer buffers records and writes them to fd in large blocks.
 *
 * A record is packed between ms_writer_begin() and ms_writer_end() with the
 * msgpack packer that ms_writer_packer() returns, starting with
 * msgpack_pack_array(pk, n) and the kind. ms_writer_copy() writes an
 * already encoded record (pass-through). The writer counts records for the
 * trailer.
 *
 * Errors: a write error is reported once and every later call returns -1.
 * EPIPE (the downstream stage exited) is not reported as an error: the
 * writer says once "downstream closed the pipe" and ms_writer_broken_pipe()
 * turns true; the stage should stop and exit with MS_EXIT_PIPE. Every stage
 * ignores SIGPIPE so that it sees EPIPE.
 */
struct ms_writer;	/* opaque; see stream/writer.c */

enum ms_writer_flags {
	/*
	 * Never block on fd (ms-collect): when the pipe is full, records that
	 * do not fit in the bounded buffer are refused (ms_writer_room()
	 * returns false) and the caller counts them as lost.
	 */
	MS_WRITER_NONBLOCK = 1 << 0,
};

/*
 * name names the output in messages ("stdout", a path). A regular file
 * (not opened O_APPEND) receives whole 2 MiB blocks at offsets that are
 * multiples of 2 MiB, for the page cache's sake (see writer.c); flush,
 * trailer and close write the rest.
 */
struct ms_writer *ms_writer_open(int fd, const char *name, unsigned flags);
/*
 * Write the header. upstream is the header this stage read (NULL for a
 * source such as ms-collect); its producers come first, then stage/version.
 */
int ms_writer_header(struct ms_writer *w, const struct ms_header *upstream,
		     const char *stage, const char *version);
msgpack_packer *ms_writer_packer(struct ms_writer *w);
void ms_writer_begin(struct ms_writer *w);
int ms_writer_end(struct ms_writer *w);
/*
 * end: close the record; -1 (record dropped, message printed) when it
 * grew over MS_RECORD_MAX, came before the header or after the trailer,
 * or the writer has failed. copy: write one whole encoded record as is.
 */
int ms_writer_copy(struct ms_writer *w, const char *bytes, size_t len);
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
/*
 * Write the trailer with the count of records written since the header.
 * complete is false for a salvaged stream (its input was cut short).
 * Flushes, blocking even in NONBLOCK mode.
 */
int ms_writer_trailer(struct ms_writer *w, bool complete);
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
bool ms_writer_broken_pipe(const struct ms_writer *w);
/*
 * Flush (unless failed) and free; does not close fd. Returns -1 when
 * anything failed, a broken pipe included (already reported: ask
 * ms_writer_broken_pipe() before closing to choose the exit code).
 */
int ms_writer_close(struct ms_writer *w);

#endif
