/* The ms-symbolize stage: the symbolizer between a reader and a writer. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/stage.h"
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

/* The stage's state. */
struct symbolize_bufs {
	struct ms_symbolizer *s;
	const struct ms_symbolize_options *opts;
	struct ms_stack stack;
	struct ms_stack_ref ref;
	struct ms_module module;
	struct ms_frame frame;
	struct defs defs;
	uint64_t stacks;
	const char *in_name;
	FILE *text;		/* text mode's output */
	bool text_failed;	/* and its failure was said */
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
static int on_stack(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct symbolize_bufs *b = ctx;
	uint32_t id;

	if (rec->kind == MS_REC_STACK_DEF ? ms_stack_def_unpack(rec, &id, &b->stack) < 0 :
					    ms_stack_unpack(rec, &b->stack) < 0)
		return -1;
	if (new_frames(b->s, io->writer, b) < 0)
		return -1;
	return MS_STAGE_PASS;
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

/* Text output failed: a closed pipe is not an error of ours. */
static int text_failed(struct symbolize_bufs *b, struct ms_stage_io *io, int err)
{
	b->text_failed = true;
	if (err == EPIPE) {
		ms_stage_pipe_closed(io);
		return -1;
	}
	errno = err;
	return ms_error_errno("cannot write to '%s'", io->out_name);
}

/* Text mode: one line per stack, outermost frame first, inlined calls expanded. */
static int print_stack(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct symbolize_bufs *b = ctx;
	struct ms_symbolizer *s = b->s;
	FILE *out = b->text;
	bool lines = b->opts && b->opts->text_lines;
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
	if (ferror(out))
		return text_failed(b, io, errno ? errno : EIO);
	return 0;
}

/* Described modules, the vdso and known frame facts: learnt, and passed on. */
static int on_module(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct symbolize_bufs *b = ctx;

	(void)io;
	ms_symbolizer_set_origin(b->s, b->in_name, rec->offset);
	if (ms_module_unpack(rec, &b->module) < 0 || ms_symbolizer_module(b->s, &b->module) < 0)
		return -1;
	return MS_STAGE_PASS;
}

static int on_vdso(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct symbolize_bufs *b = ctx;
	struct ms_vdso v;

	(void)io;
	if (ms_vdso_unpack(rec, &v) < 0 || ms_symbolizer_vdso(b->s, &v) < 0)
		return -1;
	return MS_STAGE_PASS;
}

static int on_frame(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct symbolize_bufs *b = ctx;

	(void)io;
	if (ms_frame_unpack(rec, &b->frame) < 0 || ms_symbolizer_known(b->s, &b->frame) < 0)
		return -1;
	return MS_STAGE_PASS;
}

static int on_header(void *ctx, struct ms_stage_io *io)
{
	struct symbolize_bufs *b = ctx;
	int fd;

	if (!(b->s = ms_symbolizer_new(b->opts)))
		return -1;
	if (b->opts && b->opts->text) {
		if ((fd = dup(io->out_fd)) < 0)
			return ms_error_errno("cannot write to '%s'", io->out_name);
		if (!(b->text = fdopen(fd, "w"))) {
			ms_error_errno("cannot write to '%s'", io->out_name);
			close(fd);
			return -1;
		}
	}
	return 0;
}

static int on_end(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	struct symbolize_bufs *b = ctx;
	int err = 0;

	(void)how;
	b->stacks = io->in[MS_REC_STACK] + io->in[MS_REC_STACK_REF];
	if (!b->text)
		return ms_problems_write(io->writer, ms_symbolizer_problems(b->s));
	/* Text mode: what is buffered goes out, and a failure is said once. */
	if (ferror(b->text))
		err = EIO;
	if (fclose(b->text) != 0 && !err)
		err = errno;
	b->text = NULL;
	if (b->text_failed)
		return -1;
	return err ? text_failed(b, io, err) : 0;
}

static const struct ms_stage_desc stream_stage = {
	.name = "ms-symbolize",
	.version = PACKAGE_VERSION,
	.header = on_header,
	/* STACK_REF records pass as they are: the loop copies runs of them. */
	.on = {
		[MS_REC_MODULE] = on_module,
		[MS_REC_VDSO] = on_vdso,
		[MS_REC_FRAME] = on_frame,
		[MS_REC_STACK] = on_stack,
		[MS_REC_STACK_DEF] = on_stack,
	},
	.end = on_end,
};

static const struct ms_stage_desc text_stage = {
	.name = "ms-symbolize",
	.version = PACKAGE_VERSION,
	.flags = MS_STAGE_SINK,
	.header = on_header,
	.on = {
		[MS_REC_MODULE] = on_module,
		[MS_REC_VDSO] = on_vdso,
		[MS_REC_FRAME] = on_frame,
		[MS_REC_STACK] = print_stack,
		[MS_REC_STACK_DEF] = print_stack,
		[MS_REC_STACK_REF] = print_stack,
	},
	.end = on_end,
};

int ms_symbolize_stage(int in_fd, const char *in_name, int out_fd,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats)
{
	struct ms_stage_desc st = opts && opts->text ? text_stage : stream_stage;
	struct symbolize_bufs *b;
	int code;

	if (!(b = calloc(1, sizeof(*b)))) {
		ms_error("out of memory");
		return MS_EXIT_ERROR;
	}
	b->opts = opts;
	b->in_name = in_name;
	st.ctx = b;
	code = ms_stage_run(&st, in_fd, in_name, out_fd, "stdout");
	if (stats && b->s) {
		*stats = *ms_symbolizer_stats(b->s);
		stats->stacks = b->stacks;
	}
	if (opts && opts->exiting)
		ms_symbolizer_leave(b->s);
	else
		ms_symbolizer_free(b->s);
	free(b->defs.frames);
	free(b->defs.defs);
	free(b);
	return code;
}
