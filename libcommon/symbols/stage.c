/* The ms-symbolize stage: the symbolizer between a reader and a writer. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/stream.h"
#include "symbols/symbolize.h"
#include "util/error.h"
#include "util/grow.h"

/* Text mode: the frames of each STACK_DEF, for the STACK_REFs that follow. */
struct defs {
	struct ms_stack_frame *frames;
	uint32_t n_frames, alloc_frames;
	struct def {
		uint32_t first, n, reason;
	} *defs;
	uint32_t n, alloc;
};

struct symbolize_bufs {
	struct ms_stack stack;
	struct ms_stack_ref ref;
	struct ms_module module;
	struct ms_frame frame;
	struct defs defs;
	uint64_t stacks;
	const char *in_name;
	int text_errno;		/* why the text output failed */
};

static int keep_def(struct defs *d, uint32_t id, const struct ms_stack *st,
		    const struct ms_record *rec, const char *in_name)
{
	struct def *e;

	if (id != d->n)
		return ms_error("'%s': the stack-def at byte %" PRIu64 " defines stack %u where "
				"%u comes next: the stream is malformed", in_name, rec->offset,
				id, d->n);
	if (!ms_reserve((void **)&d->defs, &d->alloc, (uint64_t)d->n + 1, sizeof(*d->defs)) ||
	    !ms_reserve((void **)&d->frames, &d->alloc_frames, (uint64_t)d->n_frames + st->n_frames,
			sizeof(*d->frames)))
		return ms_error("out of memory for %u stacks", d->n + 1);
	e = &d->defs[d->n++];
	e->first = d->n_frames;
	e->n = st->n_frames;
	e->reason = st->reason;
	memcpy(&d->frames[d->n_frames], st->frames, (size_t)st->n_frames * sizeof(*st->frames));
	d->n_frames += st->n_frames;
	return 0;
}

/* Facts for the frames of a stack not seen before. */
static int new_frames(struct ms_symbolizer *s, struct ms_writer *w, struct symbolize_bufs *b)
{
	uint32_t i;
	int r;

	for (i = 0; i < b->stack.n_frames; i++) {
		if ((r = ms_symbolizer_frame_if_new(s, &b->stack.frames[i], &b->frame)) < 0)
			return -1;
		if (r && ms_frame_pack(w, &b->frame) < 0)
			return -1;
	}
	return 0;
}

/* Stream mode: facts for new frames, then the stack as it came. */
static int on_stack(struct ms_symbolizer *s, struct ms_writer *w, const struct ms_record *rec,
		    struct symbolize_bufs *b)
{
	uint32_t id;

	if (rec->kind == MS_REC_STACK_DEF ? ms_stack_def_unpack(rec, &id, &b->stack) < 0 :
					    ms_stack_unpack(rec, &b->stack) < 0)
		return -1;
	if (new_frames(s, w, b) < 0)
		return -1;
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
	const struct ms_stack_frame *frames = b->stack.frames;
	uint32_t i, j, n, reason, id;
	bool is_new;

	if (rec->kind == MS_REC_STACK_DEF)
		return ms_stack_def_unpack(rec, &id, &b->stack) < 0 ? -1 :
		       keep_def(&b->defs, id, &b->stack, rec, b->in_name);
	if (rec->kind == MS_REC_STACK_REF) {
		const struct def *d;

		if (ms_stack_ref_unpack(rec, &b->ref) < 0)
			return -1;
		if (b->ref.id >= b->defs.n)
			return ms_error("'%s': the stack-ref at byte %" PRIu64 " refers to stack "
					"%u, which no stack-def before it defines", b->in_name,
					rec->offset, b->ref.id);
		d = &b->defs.defs[b->ref.id];
		frames = &b->defs.frames[d->first];
		n = d->n;
		reason = d->reason;
		fprintf(out, "%" PRIu32 " %" PRIu32 " %" PRIu64 " %s ", b->ref.pid, b->ref.tid,
			b->ref.time, ms_stack_end_name(reason));
	} else {
		if (ms_stack_unpack(rec, &b->stack) < 0)
			return -1;
		n = b->stack.n_frames;
		fprintf(out, "%" PRIu32 " %" PRIu32 " %" PRIu64 " %s ", b->stack.pid,
			b->stack.tid, b->stack.time, ms_stack_end_name(b->stack.reason));
	}
	for (i = n; i-- > 0;) {
		const struct ms_stack_frame *f = &frames[i];
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
	b->stacks += rec->kind == MS_REC_STACK || rec->kind == MS_REC_STACK_REF;
	switch (rec->kind) {
	case MS_REC_MODULE:
		ms_symbolizer_set_origin(s, b->in_name, rec->offset);
		if (ms_module_unpack(rec, &b->module) < 0 ||
		    ms_symbolizer_module(s, &b->module) < 0)
			return -1;
		break;
	case MS_REC_VDSO: {
		struct ms_vdso v;

		if (ms_vdso_unpack(rec, &v) < 0 || ms_symbolizer_vdso(s, &v) < 0)
			return -1;
		break;
	}
	case MS_REC_FRAME:
		if (ms_frame_unpack(rec, &b->frame) < 0 || ms_symbolizer_known(s, &b->frame) < 0)
			return -1;
		break;
	case MS_REC_STACK:
	case MS_REC_STACK_DEF:
		return text ? print_stack(s, text, rec, b, lines) : on_stack(s, w, rec, b);
	case MS_REC_STACK_REF:
		if (text)
			return print_stack(s, text, rec, b, lines);
		break;
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
	for (;;) {
		const char *run;
		size_t run_len;
		uint64_t n;

		/* Stack references pass as they are: a run of them in one copy. */
		if (w && (n = ms_reader_stack_ref_run(r, &run, &run_len))) {
			b->stacks += n;
			if (ms_writer_copy_records(w, run, run_len, n) < 0) {
				rr = MS_READ_ERROR;
				break;
			}
			continue;
		}
		if ((rr = ms_reader_next(r, &rec)) != MS_READ_RECORD)
			break;
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
	if (opts && opts->exiting)
		ms_symbolizer_leave(s);
	else
		ms_symbolizer_free(s);
	ms_reader_free(r);
	if (b) {
		free(b->defs.frames);
		free(b->defs.defs);
	}
	free(b);
	return code;
}
