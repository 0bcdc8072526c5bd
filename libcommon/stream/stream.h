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
 *    the record before anything reads it, so a hostile map32 header cannot
 *    make a decoder reserve memory or read past the record;
 *  - nesting is at most MS_RECORD_DEPTH deep;
 *  - the header comes first, with a known magic and a major version this
 *    build reads; the trailer's count matches what was read.
 *
 * Memory: a reader and a writer each own one fixed buffer (256 KiB; the
 * reader's grows only when its limit is raised above that; a reader of a
 * regular file maps it instead), reused, so nothing is allocated per
 * record after warm-up. Records are decoded from their bytes by each
 * kind's unpack (stream/records.h); no object model is built.
 *
 * This header is what a program that reads or writes streams needs. The
 * protocols the stages use for speed (sample prefetch, runs of records,
 * non-blocking output, packing in place) are internal to libcommon:
 * stream/protocols.h.
 * A record returned by ms_reader_next() borrows from the reader: it is valid
 * until the next call.
 */
#ifndef MS_STREAM_STREAM_H
#define MS_STREAM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_STREAM_MAGIC "microscope-stream"
#define MS_STREAM_MAJOR 1
#define MS_STREAM_MINOR 7

/*
 * Set in a stage's environment by a front command whose first stage
 * reports its own failures: an empty input (no header at all) then ends
 * the stage quietly, as a stream cut short, without a message of its own.
 */
#define MS_QUIET_EMPTY_INPUT "MS_QUIET_EMPTY_INPUT"

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
 * One record as the reader hands it out: its kind, and bytes/len its exact
 * encoding (an array whose element 0 is the kind), which the kind's
 * ms_*_unpack() decodes and a stage that does not consume the record
 * passes on with ms_writer_copy(). offset is the position of the record's
 * first byte in the input, for error messages ("at byte 1234").
 */
struct ms_record {
	uint32_t kind;
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
struct ms_writer;	/* opaque; see stream/writer.c */

/* The trailer: how many records came between header and trailer, and whether the stream is whole. */
struct ms_trailer {
	uint64_t records;
	bool complete;		/* false: a stage salvaged its cut-short input */
};

/*
 * Open a reader on fd. name names the input in messages ("stdin", a path).
 * Reads and validates the header; prints a message and returns NULL when
 * the input is not a stream this build reads (empty, wrong magic, other
 * major version, malformed or cut-short header); errno is ENODATA when
 * the input was empty. fd may be a pipe or a file, blocking or not; the
 * reader never closes it.
 */
struct ms_reader *ms_reader_open(int fd, const char *name);
/*
 * Next record; see enum ms_read_result. The header and trailer are never
 * returned: the reader checks them. After MS_READ_END, MS_READ_ERROR or
 * MS_READ_TRUNCATED every later call returns the same (ERROR for
 * TRUNCATED) without a new message.
 */
int ms_reader_next(struct ms_reader *r, struct ms_record *rec);
const struct ms_header *ms_reader_header(const struct ms_reader *r);
/* The trailer, once ms_reader_next() returned MS_READ_END; else NULL. */
const struct ms_trailer *ms_reader_trailer(const struct ms_reader *r);
void ms_reader_free(struct ms_reader *r);

/*
 * The writer buffers records and writes them to fd in large blocks;
 * records go in through their kind's ms_*_pack() (stream/records.h), or
 * as they are with ms_writer_copy() (pass-through). It counts records for
 * the trailer.
 *
 * Errors: a write error is reported once and every later call returns -1.
 * EPIPE (the downstream stage exited) is not reported as an error: the
 * writer says once "downstream closed the pipe" and ms_writer_broken_pipe()
 * turns true; the stage should stop and exit with MS_EXIT_PIPE. Every stage
 * ignores SIGPIPE so that it sees EPIPE.
 *
 * name names the output in messages ("stdout", a path). flags: see
 * enum ms_writer_flags in stream/protocols.h (0 for a blocking writer).
 */
struct ms_writer *ms_writer_open(int fd, const char *name, unsigned flags);
/*
 * Write the header. upstream is the header this stage read (NULL for a
 * source such as ms-collect); its producers come first, then stage/version.
 */
int ms_writer_header(struct ms_writer *w, const struct ms_header *upstream,
		     const char *stage, const char *version);
/*
 * One whole encoded record as is; -1 (record dropped, message printed)
 * when it is over MS_RECORD_MAX, comes before the header or after the
 * trailer, or the writer has failed.
 */
int ms_writer_copy(struct ms_writer *w, const char *bytes, size_t len);
/*
 * Write the trailer with the count of records written since the header.
 * complete is false for a salvaged stream (its input was cut short).
 * Flushes, blocking even in non-blocking mode.
 */
int ms_writer_trailer(struct ms_writer *w, bool complete);
bool ms_writer_broken_pipe(const struct ms_writer *w);
/*
 * Flush (unless failed) and free; does not close fd. Returns -1 when
 * anything failed, a broken pipe included (already reported: ask
 * ms_writer_broken_pipe() before closing to choose the exit code).
 */
int ms_writer_close(struct ms_writer *w);

#endif
