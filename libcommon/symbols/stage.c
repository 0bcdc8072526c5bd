/* The ms-symbolize stage: the symbolizer between a reader and a writer. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/stream.h"
#include "symbols/symbolize.h"
#include "util/error.h"

struct symbolize_bufs {
	struct ms_stack stack;
	struct ms_module module;
	struct ms_frame frame;
	uint64_t stacks;
	const char *in_name;
	int text_errno;		/* why the text output failed */
};

/* Stream mode: facts for new frames, then the stack as it came. */
static int on_stack(struct ms_symbolizer *s, struct ms_writer *w, const struct ms_record *rec,
		    struct symbolize_bufs *b)
{
	uint32_t i;
	int r;

	if (ms_stack_unpack(rec, &b->stack) < 0)
		return -1;
	for (i = 0; i < b->stack.n_frames; i++) {
		if ((r = ms_symbolizer_frame_if_new(s, &b->stack.frames[i], &b->frame)) < 0)
			return -1;
		if (r && ms_frame_pack(w, &b->frame) < 0)
			return -1;
	}
	return ms_writer_copy(w, rec->bytes, rec->len);
}

static void print_str(FILE *out, const struct ms_str *s)
{
	fwrite(s->ptr, 1, s->len, out);
}

/* One function of a text line: its name, and with --lines where it is. */
static void print_function(FILE *out, const struct ms_str *name, const struct ms_frame_line *l,
			   uint32_t reason, bool lines)
{
	print_str(out, name);
	if (!lines)
		return;
	if (l)
		fprintf(out, " (%.*s:%" PRIu32 ")", (int)l->file.len, l->file.ptr, l->line);
	else
		fprintf(out, " (%s)", ms_frame_reason_name(reason));
}

/* Text mode: one line per stack, outermost frame first, inlined calls expanded. */
static int print_stack(struct ms_symbolizer *s, FILE *out, const struct ms_record *rec,
		       struct symbolize_bufs *b, bool lines)
{
	uint32_t i, j;
	bool is_new;

	if (ms_stack_unpack(rec, &b->stack) < 0)
		return -1;
	fprintf(out, "%" PRIu32 " %" PRIu32 " %" PRIu64 " %s ", b->stack.pid, b->stack.tid,
		b->stack.time, ms_stack_end_name(b->stack.reason));
	for (i = b->stack.n_frames; i-- > 0;) {
		const struct ms_stack_frame *f = &b->stack.frames[i];
		const struct ms_frame *fr = &b->frame;
		const char *path;

		if (ms_symbolizer_frame(s, f, &b->frame, &is_new) < 0)
			return -1;
		if (fr->n_lines && fr->name.len) {
			for (j = fr->n_lines; j-- > 0;) {
				const struct ms_frame_line *l = &fr->lines[j];

				static const struct ms_str unknown = { "??", 2 };

				print_function(out, l->function.len ? &l->function : &unknown, l,
					       fr->reason, lines);
				if (j)
					fputc(';', out);
			}
		} else if (fr->name.len) {
			print_function(out, &fr->name, NULL, fr->reason, lines);
		} else {
			path = ms_symbolizer_module_path(s, f->module);
			fprintf(out, "%s+0x%" PRIx64 "(%s)", path ? path : "?",
				fr->reason == MS_SYM_FDE_ONLY ? fr->symbol_start : f->address,
				ms_frame_reason_name(fr->reason));
		}
		if (i)
			fputc(';', out);
	}
	fputc('\n', out);
	if (ferror(out)) {
		b->text_errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int on_record(struct ms_symbolizer *s, struct ms_writer *w, FILE *text,
		     const struct ms_record *rec, struct symbolize_bufs *b, bool lines)
{
	b->stacks += rec->kind == MS_REC_STACK;
	switch (rec->kind) {
	case MS_REC_MODULE:
		ms_symbolizer_set_origin(s, b->in_name, rec->offset);
		if (ms_module_unpack(rec, &b->module) < 0 ||
		    ms_symbolizer_module(s, &b->module) < 0)
			return -1;
		break;
	case MS_REC_FRAME:
		if (ms_frame_unpack(rec, &b->frame) < 0 || ms_symbolizer_known(s, &b->frame) < 0)
			return -1;
		break;
	case MS_REC_STACK:
		return text ? print_stack(s, text, rec, b, lines) : on_stack(s, w, rec, b);
	default:
		break;
	}
	return text ? 0 : ms_writer_copy(w, rec->bytes, rec->len);
}

/* Text output failed: a closed pipe is not an error of ours. */
static int text_failed(int err)
{
	if (err == EPIPE) {
		ms_error("downstream closed the pipe (stdout)");
		return MS_EXIT_PIPE;
	}
	errno = err;
	ms_error_errno("cannot write to 'stdout'");
	return MS_EXIT_ERROR;
}

int ms_symbolize_stage(int in_fd, const char *in_name, int out_fd,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats)
{
	struct ms_reader *r = NULL;
	struct ms_writer *w = NULL;
	struct ms_symbolizer *s = NULL;
	struct symbolize_bufs *b = NULL;
	FILE *text = NULL;
	struct ms_record rec;
	int code = MS_EXIT_ERROR, rr = MS_READ_ERROR, fd;

	if (!(r = ms_reader_open(in_fd, in_name)))
		goto out;
	/* STACK records are only unpacked and copied: no objects. */
	ms_reader_defer_objects(r, true);
	if (!(s = ms_symbolizer_new(opts)))
		goto out;
	if (!(b = calloc(1, sizeof(*b)))) {
		ms_error("out of memory");
		goto out;
	}
	b->in_name = in_name;
	if (opts && opts->text) {
		if ((fd = dup(out_fd)) < 0 || !(text = fdopen(fd, "w"))) {
			ms_error_errno("cannot write to 'stdout'");
			goto out;
		}
	} else {
		if (!(w = ms_writer_open(out_fd, "stdout", 0)))
			goto out;
		ms_reader_flush_before_read(r, w);
		if (ms_writer_header(w, ms_reader_header(r), "ms-symbolize", PACKAGE_VERSION) < 0)
			goto out;
	}
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (on_record(s, w, text, &rec, b, opts && opts->text_lines) < 0) {
			rr = MS_READ_ERROR;
			break;
		}
	}
	if (w && ms_problems_write(w, ms_symbolizer_problems(s)) < 0)
		goto out;
	if (rr == MS_READ_END) {
		if (w && ms_writer_trailer(w, ms_reader_trailer_complete(r)) < 0)
			goto out;
		code = MS_EXIT_OK;
	} else if (rr == MS_READ_TRUNCATED) {
		/* What was processed goes out without a trailer: downstream sees the cut too. */
		if (w)
			ms_error("output ends without a trailer after %" PRIu64 " records",
				 ms_writer_records(w));
		code = MS_EXIT_TRUNCATED;
	}
out:
	if (w) {
		if (ms_writer_flush(w) < 0 && code == MS_EXIT_OK)
			code = MS_EXIT_ERROR;
		if (ms_writer_broken_pipe(w))
			code = MS_EXIT_PIPE;
		ms_writer_close(w);
	}
	if (text) {
		int err = 0;

		if (b && b->text_errno)
			err = b->text_errno;
		else if (ferror(text))
			err = EIO;
		if (fclose(text) != 0 && !err)
			err = errno;
		if (err)
			code = text_failed(err);
	}
	if (stats && s) {
		*stats = *ms_symbolizer_stats(s);
		stats->stacks = b ? b->stacks : 0;
	}
	ms_symbolizer_free(s);
	ms_reader_free(r);
	free(b);
	return code;
}
