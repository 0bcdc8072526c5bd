/* The stage loop (stream/stage.h): one for every stream stage. */
#include "stream/stage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "stream/protocols.h"
#include "stream/records.h"
#include "util/error.h"

void ms_stage_pipe_closed(struct ms_stage_io *io)
{
	if (!io->pipe_closed)
		ms_error("downstream closed the pipe (%s)", io->out_name);
	io->pipe_closed = true;
}

/*
 * After a STACK_REF the stage passes on, the ones that follow it in the
 * reader's buffer go out in one copy (ms-symbolize reads mostly those).
 */
static int pass_ref_runs(struct ms_stage_io *io)
{
	const char *run;
	size_t run_len;
	uint64_t n;

	while ((n = ms_reader_stack_ref_run(io->reader, &run, &run_len))) {
		io->in[MS_REC_STACK_REF] += n;
		if (ms_writer_copy_records(io->writer, run, run_len, n) < 0)
			return -1;
	}
	return 0;
}

/* The record loop; how the input ended. */
static enum ms_stage_end records(const struct ms_stage_desc *st, struct ms_stage_io *io)
{
	struct ms_reader *r = io->reader;
	struct ms_writer *w = io->writer;
	/* The callback of each kind, other() filled in: one load a record. */
	ms_stage_record_fn *fns[MS_STAGE_KINDS + 1];
	bool runs = w && !st->on[MS_REC_STACK_REF] && !st->other;
	struct ms_record rec;
	int rr, ret;

	for (unsigned k = 0; k < MS_STAGE_KINDS; k++)
		fns[k] = st->on[k] ? st->on[k] : st->other;
	fns[MS_STAGE_KINDS] = st->other;
	for (;;) {
		unsigned k;

		if ((rr = ms_reader_next(r, &rec)) != MS_READ_RECORD)
			return rr == MS_READ_END ? MS_STAGE_COMPLETE :
			       rr == MS_READ_TRUNCATED ? MS_STAGE_CUT : MS_STAGE_BAD_INPUT;
		k = rec.kind < MS_STAGE_KINDS ? rec.kind : MS_STAGE_KINDS;
		io->in[k]++;
		ret = fns[k] ? fns[k](st->ctx, io, &rec) : MS_STAGE_PASS;
		if (__builtin_expect(ret == 0, 1))
			continue;
		/* What failed may be the zeros read past a cut in the mapped input. */
		if (ret < 0)
			return ms_reader_cut_short(r) ? MS_STAGE_CUT : MS_STAGE_FAILED;
		if (w && ms_writer_copy(w, rec.bytes, rec.len) < 0)
			return MS_STAGE_FAILED;
		if (runs && rec.kind == MS_REC_STACK_REF && pass_ref_runs(io) < 0)
			return MS_STAGE_FAILED;
	}
}

/*
 * Flush and close the output; whether it went out whole. A broken pipe
 * was said by the writer and is the exit status's business.
 */
static bool close_output(struct ms_stage_io *io)
{
	struct ms_writer *w = io->writer;
	bool ok = true;

	if (!w)
		return true;
	if (!ms_writer_broken_pipe(w) && ms_writer_flush(w) < 0)
		ok = false;
	if (ms_writer_broken_pipe(w))
		io->pipe_closed = true;
	if (ms_writer_close(w) < 0)
		ok = false;
	io->writer = NULL;
	return ok;
}

static int exit_status(const struct ms_stage_desc *st, const struct ms_stage_io *io,
		       enum ms_stage_end how, bool ok)
{
	if (io->pipe_closed)
		return MS_EXIT_PIPE;
	if (!ok || how == MS_STAGE_BAD_INPUT || how == MS_STAGE_FAILED)
		return MS_EXIT_ERROR;
	if (how == MS_STAGE_CUT && !(st->flags & MS_STAGE_SALVAGE))
		return MS_EXIT_TRUNCATED;
	return MS_EXIT_OK;
}

static int run(const struct ms_stage_desc *st, struct ms_reader *r, int in_fd, int out_fd,
	       const char *out_name)
{
	struct ms_stage_io io = {
		.reader = r,
		.in_fd = in_fd,
		.out_fd = out_fd,
		.in_name = ms_reader_name(r),
		.out_name = out_name,
	};
	enum ms_stage_end how = MS_STAGE_FAILED;
	bool ok = false;

	if (!(st->flags & MS_STAGE_SINK)) {
		if (!(io.writer = ms_writer_open(out_fd, out_name, 0)))
			return MS_EXIT_ERROR;
		/* A filter never sits on output while it waits for input. */
		ms_reader_flush_before_read(r, io.writer);
		if (ms_writer_header(io.writer, ms_reader_header(r), st->name, st->version) < 0)
			goto out;
	}
	if (st->header && st->header(st->ctx, &io) < 0)
		goto out;
	how = records(st, &io);
	if (st->end && st->end(st->ctx, &io, how) < 0)
		goto out;
	/* What was processed goes out in every case; a trailer only after one. */
	if (how == MS_STAGE_COMPLETE && io.writer &&
	    ms_writer_trailer(io.writer, ms_reader_trailer(r)->complete) < 0)
		goto out;
	if (how == MS_STAGE_CUT && io.writer && !(st->flags & MS_STAGE_QUIET_CUT))
		ms_error("output ends without a trailer after %" PRIu64 " records",
			 ms_writer_records(io.writer));
	ok = true;
out:
	if (!close_output(&io))
		ok = false;
	return exit_status(st, &io, how, ok);
}

int ms_stage_run_reader(const struct ms_stage_desc *st, struct ms_reader *r, int out_fd,
			const char *out_name)
{
	return run(st, r, -1, out_fd, out_name);
}

int ms_stage_run(const struct ms_stage_desc *st, int in_fd, const char *in_name, int out_fd,
		 const char *out_name)
{
	struct ms_reader *r = ms_reader_open(in_fd, in_name);
	int code;

	/* Empty under a front command: a symptom of the first stage's failure (stream.h). */
	if (!r)
		return errno == ENODATA && getenv(MS_QUIET_EMPTY_INPUT) ? MS_EXIT_TRUNCATED :
		       MS_EXIT_ERROR;
	code = run(st, r, in_fd, out_fd, out_name);
	ms_reader_free(r);
	return code;
}

int ms_stage_run_source(const struct ms_stage_desc *st, int out_fd, const char *out_name)
{
	struct ms_stage_io io = { .in_fd = -1, .out_fd = out_fd, .out_name = out_name };
	bool ok;

	if (!(io.writer = ms_writer_open(out_fd, out_name, 0)))
		return MS_EXIT_ERROR;
	ok = st->produce(st->ctx, &io) == 0;
	if (!close_output(&io))
		ok = false;
	return exit_status(st, &io, MS_STAGE_COMPLETE, ok);
}
