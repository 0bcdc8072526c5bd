/*
 * The stage loop: what every stream stage does around its own work.
 *
 * A stage describes itself with a struct ms_stage_desc (its name and
 * version for the producer chain, a callback per record kind it consumes,
 * one at the header and one at the end) and ms_stage_run() does the rest
 * (util/pipeline.h's struct ms_stage is another thing: a stage as a
 * process of `microscope record`):
 *
 *  - opens a reader on the input; a missing or bad header ends the stage
 *    (the reader said why);
 *  - opens the writer on the output and writes the header: the input's
 *    producers, then this stage (a sink, MS_STAGE_SINK, has no output);
 *  - calls header(), then for each record the callback of its kind, or
 *    other() for a kind without one; a record with neither, or whose
 *    callback returns MS_STAGE_PASS, goes out unchanged;
 *  - at the input's end calls end() with how it ended, writes the trailer
 *    when the input had one, and at a cut-short input (no trailer) says how
 *    many records went out without one (unless MS_STAGE_QUIET_CUT);
 *  - flushes and closes the output; EPIPE is said once ("downstream closed
 *    the pipe") by the writer, or by ms_stage_pipe_closed() for an output
 *    of the stage's own;
 *  - returns the exit status (util/error.h), the first that applies:
 *    MS_EXIT_PIPE when downstream closed the pipe, MS_EXIT_ERROR when the
 *    input was bad or anything failed, MS_EXIT_TRUNCATED when the input was
 *    cut short (unless MS_STAGE_SALVAGE), else MS_EXIT_OK.
 *
 * The runners of stages (ms_decode_stage(), ms_unwind_stage(), ...) and
 * this loop are the only library functions that return an exit status;
 * every other returns 0 or -1 after one message.
 *
 * Callbacks return 0, MS_STAGE_PASS (record callbacks), or -1 after one
 * message (or quietly when the writer failed: it said so). A record
 * callback's failure ends the loop and end() is still called, with
 * MS_STAGE_FAILED; a failed header() ends the stage there.
 *
 * Speed: the loop adds a table lookup and an indirect call per record
 * (about 15 instructions) and allocates nothing per record. Callbacks
 * unpack the records they take from their bytes, and after a STACK_REF
 * the stage passed on, the ones that follow go out in one copy
 * (ms_reader_stack_ref_run()).
 */
#ifndef MS_STREAM_STAGE_H
#define MS_STREAM_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/stream.h"

/* Record kinds below this can have a callback of their own (records.h). */
#define MS_STAGE_KINDS 64

/* A record callback's "pass this record on unchanged". */
#define MS_STAGE_PASS 1

/* How the input ended, for end(). */
enum ms_stage_end {
	MS_STAGE_COMPLETE,	/* its trailer was read */
	MS_STAGE_CUT,		/* it ended without a trailer (the reader said so) */
	MS_STAGE_BAD_INPUT,	/* malformed input or a read error (the reader said so) */
	MS_STAGE_FAILED,	/* a callback or the output failed */
};

enum ms_stage_flags {
	MS_STAGE_SINK = 1 << 0,		/* no output stream (ms-capture, text output) */
	/* A cut-short input is not a failure: end() keeps what it held. */
	MS_STAGE_SALVAGE = 1 << 1,
	/* At a cut-short input, do not say how many records went out (ms-decode never has). */
	MS_STAGE_QUIET_CUT = 1 << 2,
};

/* What the loop hands to callbacks; theirs to use, the loop's to own. */
struct ms_stage_io {
	struct ms_reader *reader;
	struct ms_writer *writer;	/* NULL in a sink */
	int in_fd, out_fd;
	const char *in_name, *out_name;
	/* Records read per kind; the last slot counts kinds >= MS_STAGE_KINDS. */
	uint64_t in[MS_STAGE_KINDS + 1];
	bool pipe_closed;		/* see ms_stage_pipe_closed() */
};

typedef int ms_stage_record_fn(void *ctx, struct ms_stage_io *io, const struct ms_record *rec);

struct ms_stage_desc {
	const char *name;	/* appended to the producers: "ms-unwind" */
	const char *version;
	unsigned flags;		/* enum ms_stage_flags */
	void *ctx;		/* the stage's own state, passed to every callback */
	/*
	 * After the input's header was read and the output's written: set up
	 * what needs the reader or writer (reader options, first records).
	 */
	int (*header)(void *ctx, struct ms_stage_io *io);
	/* Per record kind consumed; other() for the rest (NULL: passed on). */
	ms_stage_record_fn *on[MS_STAGE_KINDS];
	ms_stage_record_fn *other;
	/*
	 * After the last record, however the input ended (not after a failed
	 * header()): write what is held, the stage's problems. The trailer
	 * comes after it, when the input had one.
	 */
	int (*end)(void *ctx, struct ms_stage_io *io, enum ms_stage_end how);
	/*
	 * A source (ms_stage_run_source()): write the whole stream to
	 * io->writer, header and trailer included.
	 */
	int (*produce)(void *ctx, struct ms_stage_io *io);
};

/*
 * Run stage st from the stream on in_fd (named in_name in messages) to
 * out_fd (named out_name); neither fd is closed. Returns an exit status
 * (see above).
 */
int ms_stage_run(const struct ms_stage_desc *st, int in_fd, const char *in_name, int out_fd,
		 const char *out_name);
/* The same over a reader the caller opened (and frees); in_fd is -1. */
int ms_stage_run_reader(const struct ms_stage_desc *st, struct ms_reader *r, int out_fd,
			const char *out_name);
/* Run a source: a stage with no input stream, whose produce() writes the stream. */
int ms_stage_run_source(const struct ms_stage_desc *st, int out_fd, const char *out_name);

/*
 * For a stage that writes an output of its own (text): downstream closed
 * it. Says so once, as the writer would; the stage exits MS_EXIT_PIPE.
 */
void ms_stage_pipe_closed(struct ms_stage_io *io);

#endif
