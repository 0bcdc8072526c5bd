/*
 * From a record stream to a capture: ms-capture's stage, a sink on the
 * stage loop (stream/stage.h) that feeds each record to the builder.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "capture/convert.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/stage.h"
#include "util/error.h"

/* Record kinds below this get a counter of their own when ignored. */
#define KINDS_COUNTED 256

struct ingest {
	struct ms_capture_builder *b;
	const struct ms_capture_stream_options *o;
	const char *output;		/* the file to write, or NULL: keep the capture */
	const char *keep_names;		/* a capture to load as the fallback */
	struct ms_capture *loaded;	/* that capture, ours to free */
	struct ms_capture *cap;		/* what was sealed */
	uint64_t ignored[KINDS_COUNTED + 1];
	/* The unpacked form of one record, reused for every record of its kind. */
	union {
		struct ms_problem problem;
		struct ms_info info;
		struct ms_target target;
		struct ms_target_exit target_exit;
		struct ms_comm comm;
		struct ms_task task;
		struct ms_lost lost;
		struct ms_throttle throttle;
		struct ms_duty duty;
		struct ms_module module;
		struct ms_stack stack;
		struct ms_stack_ref ref;
		struct ms_frame frame;
		struct ms_switch sw;
		struct ms_off_cpu off_cpu;
		struct ms_interval interval;
		struct ms_jit_read jit_read;
		struct ms_py_process py_process;
		struct ms_label_span label_span;
		struct ms_task_wait task_wait;
	} u;
};

/* ---- one callback per kind a capture holds ---- */

static int on_problem(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_problem_unpack(rec, &g->u.problem) < 0 ? -1 :
	       ms_capture_builder_problem(g->b, &g->u.problem);
}

static int on_info(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_info_unpack(rec, &g->u.info) < 0 ? -1 : ms_capture_builder_info(g->b, &g->u.info);
}

static int on_target(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_target_unpack(rec, &g->u.target) < 0 ? -1 :
	       ms_capture_builder_target(g->b, &g->u.target);
}

static int on_target_exit(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_target_exit_unpack(rec, &g->u.target_exit) < 0 ? -1 :
	       ms_capture_builder_target_exit(g->b, &g->u.target_exit);
}

static int on_comm(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_comm_unpack(rec, &g->u.comm) < 0 ? -1 : ms_capture_builder_comm(g->b, &g->u.comm);
}

/* FORK and EXIT */
static int on_task(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_task_unpack(rec, &g->u.task) < 0 ? -1 :
	       ms_capture_builder_task(g->b, rec->kind, &g->u.task);
}

static int on_lost(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_lost_unpack(rec, &g->u.lost) < 0 ? -1 : ms_capture_builder_lost(g->b, &g->u.lost);
}

static int on_throttle(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_throttle_unpack(rec, &g->u.throttle) < 0 ? -1 :
	       ms_capture_builder_throttle(g->b, &g->u.throttle);
}

static int on_duty(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_duty_unpack(rec, &g->u.duty) < 0 ? -1 : ms_capture_builder_duty(g->b, &g->u.duty);
}

static int on_module(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_module_unpack(rec, &g->u.module) < 0 ? -1 :
	       ms_capture_builder_module(g->b, &g->u.module);
}

/* A perf-map read of ms-collect: the last of each pid is its setting. */
static int on_jit_read(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_jit_read_unpack(rec, &g->u.jit_read) < 0 ? -1 :
	       ms_capture_builder_jit_read(g->b, &g->u.jit_read);
}

static int on_stack(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_stack_unpack(rec, &g->u.stack) < 0 ? -1 :
	       ms_capture_builder_stack(g->b, &g->u.stack);
}

static int on_stack_def(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;
	uint32_t id;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_stack_def_unpack(rec, &id, &g->u.stack) < 0 ? -1 :
	       ms_capture_builder_stack_def(g->b, id, &g->u.stack);
}

static int on_stack_ref(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_stack_ref_unpack(rec, &g->u.ref) < 0 ? -1 :
	       ms_capture_builder_stack_ref(g->b, &g->u.ref);
}

static int on_frame(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_frame_unpack(rec, &g->u.frame) < 0 ? -1 :
	       ms_capture_builder_frame(g->b, &g->u.frame);
}

static int on_switch(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	return ms_switch_unpack(rec, &g->u.sw) < 0 ? -1 : ms_capture_builder_switch(g->b, &g->u.sw);
}

static int on_off_cpu(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_off_cpu_unpack(rec, &g->u.off_cpu) < 0 ? -1 :
	       ms_capture_builder_off_cpu(g->b, &g->u.off_cpu);
}

static int on_interval(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_interval_unpack(rec, &g->u.interval) < 0 ? -1 :
	       ms_capture_builder_interval(g->b, &g->u.interval);
}

/* What ms-collect found of a process's Python: a row of the capture's. */
static int on_py_process(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_py_process_unpack(rec, &g->u.py_process) < 0 ? -1 :
	       ms_capture_builder_py_process(g->b, &g->u.py_process);
}

/* A label over a run of a thread's samples (ms-unwind's GIL spans): a row. */
static int on_label_span(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_label_span_unpack(rec, &g->u.label_span) < 0 ? -1 :
	       ms_capture_builder_label_span(g->b, &g->u.label_span);
}

/* A read of a task (ms-unwind's, of a thread snapshot): its task's counts, a wait row. */
static int on_task_wait(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	ms_capture_builder_at(g->b, ms_reader_name(io->reader), rec->offset);
	return ms_task_wait_unpack(rec, &g->u.task_wait) < 0 ? -1 :
	       ms_capture_builder_task_wait(g->b, &g->u.task_wait);
}

/*
 * Sample, switch-out, tracepoint, jit-func, jit-object, py-code and
 * py-stack, py-snapshot (ms-unwind made their modules, frame facts and
 * stacks),
 * mmap, attr, raw, round and kinds from
 * later versions: counted.
 */
static int on_ignored(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct ingest *g = ctx;

	(void)io;
	g->ignored[rec->kind < KINDS_COUNTED ? rec->kind : KINDS_COUNTED]++;
	return 0;
}

/* ---- start and end ---- */

static int on_header(void *ctx, struct ms_stage_io *io)
{
	struct ingest *g = ctx;

	if (g->keep_names && !(g->loaded = ms_capture_load(g->keep_names)))
		return -1;
	if (!(g->b = ms_capture_builder_new()))
		return -1;
	return ms_capture_builder_producers(g->b, ms_reader_header(io->reader));
}

static int flush_ignored(struct ms_capture_builder *b, const uint64_t *ignored)
{
	char name[32];
	uint32_t kind;

	for (kind = 0; kind <= KINDS_COUNTED; kind++) {
		const char *known = ms_record_kind_name(kind);

		if (!ignored[kind])
			continue;
		if (kind == KINDS_COUNTED)
			snprintf(name, sizeof(name), "kind-%d-or-more", KINDS_COUNTED);
		else if (!known || !strcmp(known, "unknown"))
			snprintf(name, sizeof(name), "kind-%u", kind);
		else
			snprintf(name, sizeof(name), "%s", known);
		if (ms_capture_builder_ignored(b, name, ignored[kind]) < 0)
			return -1;
	}
	return 0;
}

/* The facts of cap, each (module, address) once, as fallbacks. */
static int add_fallbacks(struct ms_capture_builder *b, const struct ms_capture *cap,
			 struct ms_frame *f)
{
	uint32_t i;

	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *fr = &cap->frames[i];

		if (fr->reason == MS_CAP_UNSYMBOLIZED ||
		    (i && fr[-1].module == fr->module && fr[-1].address == fr->address))
			continue;
		if (ms_capture_frame_fact(cap, i, f) < 0 ||
		    ms_capture_builder_frame_fallback(b, f) < 0)
			return -1;
	}
	return 0;
}

/*
 * Whether what was read makes a capture: 1 (marked incomplete when its
 * input was), 0 when not (bad input, or cut short without salvage), -1
 * after a message.
 */
static int mark_end(struct ingest *g, struct ms_stage_io *io, enum ms_stage_end how)
{
	char detail[160];

	switch (how) {
	case MS_STAGE_COMPLETE:
		/* An upstream stage salvaged the stream and said so in its trailer. */
		if (!ms_reader_trailer(io->reader)->complete)
			return ms_capture_builder_incomplete(g->b, NULL) < 0 ? -1 : 1;
		return 1;
	case MS_STAGE_CUT:
		if (!(g->o->flags & MS_CAPTURE_SALVAGE)) {
			if (g->output)
				ms_error("no capture written to '%s' (--salvage writes what the "
					 "stream held)", g->output);
			return 0;
		}
		/* No input name: the same bytes give the same capture wherever they came from. */
		snprintf(detail, sizeof(detail),
			 "the stream ended at byte %" PRIu64 " after %" PRIu64
			 " records, without a trailer; salvaged what it held",
			 ms_reader_offset(io->reader), ms_reader_records(io->reader));
		return ms_capture_builder_incomplete(g->b, detail) < 0 ? -1 : 1;
	default:
		return 0;	/* the reader or a callback said why */
	}
}

static int on_end(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	struct ingest *g = ctx;
	const struct ms_capture *fallback = g->loaded ? g->loaded : g->o->fallback;
	int r = mark_end(g, io, how);

	if (r <= 0)
		return r;
	if (flush_ignored(g->b, g->ignored) < 0)
		return -1;
	for (uint32_t i = 0; i < g->o->n_info; i++)
		if (ms_capture_builder_info(g->b, &g->o->info[i]) < 0)
			return -1;
	if (fallback && add_fallbacks(g->b, fallback, &g->u.frame) < 0)
		return -1;
	g->cap = ms_capture_builder_seal(g->b);
	g->b = NULL;
	if (!g->cap)
		return -1;
	if (!g->output)
		return 0;
	if (ms_capture_write(g->cap, g->output) < 0)
		return -1;
	if ((g->o->flags & MS_CAPTURE_SALVAGE) && (g->cap->flags & MS_CAPTURE_INCOMPLETE))
		ms_warn("wrote '%s' marked incomplete: its input was cut short", g->output);
	return 0;
}

static const struct ms_stage_desc capture_stage = {
	.name = "ms-capture",
	.version = PACKAGE_VERSION,
	.flags = MS_STAGE_SINK,
	.header = on_header,
	.on = {
		[MS_REC_PROBLEM] = on_problem,
		[MS_REC_INFO] = on_info,
		[MS_REC_TARGET] = on_target,
		[MS_REC_TARGET_EXIT] = on_target_exit,
		[MS_REC_COMM] = on_comm,
		[MS_REC_FORK] = on_task,
		[MS_REC_EXIT] = on_task,
		[MS_REC_LOST] = on_lost,
		[MS_REC_THROTTLE] = on_throttle,
		[MS_REC_DUTY] = on_duty,
		[MS_REC_MODULE] = on_module,
		[MS_REC_STACK] = on_stack,
		[MS_REC_STACK_DEF] = on_stack_def,
		[MS_REC_STACK_REF] = on_stack_ref,
		[MS_REC_FRAME] = on_frame,
		[MS_REC_SWITCH] = on_switch,
		[MS_REC_OFF_CPU] = on_off_cpu,
		[MS_REC_INTERVAL] = on_interval,
		[MS_REC_JIT_READ] = on_jit_read,
		[MS_REC_PY_PROCESS] = on_py_process,
		[MS_REC_LABEL_SPAN] = on_label_span,
		[MS_REC_TASK_WAIT] = on_task_wait,
	},
	.other = on_ignored,
	.end = on_end,
};

static const struct ms_capture_stream_options no_options;

/* The stage over r (opened by the caller, or by the loop when r is NULL). */
static int run(struct ingest *g, struct ms_reader *r, int in_fd, const char *in_name)
{
	struct ms_stage_desc desc = capture_stage;
	int code;

	desc.ctx = g;
	if (g->o->flags & MS_CAPTURE_SALVAGE)
		desc.flags |= MS_STAGE_SALVAGE;
	code = r ? ms_stage_run_reader(&desc, r, -1, NULL) :
		   ms_stage_run(&desc, in_fd, in_name, -1, NULL);
	ms_capture_builder_free(g->b);
	ms_capture_free(g->loaded);
	return code;
}

int ms_capture_stage(int in_fd, const char *in_name, const struct ms_capture_stage_options *o)
{
	struct ingest *g = calloc(1, sizeof(*g));
	int code;

	if (!g) {
		ms_error("out of memory reading '%s'", in_name);
		return MS_EXIT_ERROR;
	}
	g->o = &o->stream;
	g->output = o->output;
	g->keep_names = o->keep_names;
	code = run(g, NULL, in_fd, in_name);
	ms_capture_free(g->cap);
	free(g);
	return code;
}

int ms_capture_from_stream(struct ms_reader *r, const struct ms_capture_stream_options *o,
			   struct ms_capture **out)
{
	struct ingest *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return ms_error("out of memory reading '%s'", ms_reader_name(r));
	g->o = o ? o : &no_options;
	if (run(g, r, -1, NULL) == MS_EXIT_OK)
		*out = g->cap;
	else
		ms_capture_free(g->cap);
	free(g);
	return *out ? 0 : -1;
}
