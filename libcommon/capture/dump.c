/*
 * From a capture to a record stream: ms_capture_dump() and ms-capture
 * --dump, a source on the stage loop (stream/stage.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "capture/convert.h"
#include "stream/records.h"
#include "stream/stage.h"
#include "util/error.h"

/* The records of any kind a dump writes, one at a time. */
union any_record {
	struct ms_problem problem;
	struct ms_info info;
	struct ms_target target;
	struct ms_target_exit target_exit;
	struct ms_comm comm;
	struct ms_lost lost;
	struct ms_throttle throttle;
	struct ms_duty duty;
	struct ms_module module;
	struct ms_stack stack;
	struct ms_frame frame;
	struct ms_interval interval;
	struct ms_jit_read jit_read;
	struct ms_py_process py_process;
	struct ms_label_span label_span;
	struct ms_task_wait task_wait;
};

static struct ms_str str(const struct ms_capture *cap, uint32_t id)
{
	struct ms_str s = { cap->strings[id], strlen(cap->strings[id]) };

	return s;
}

static int dump_target(const struct ms_capture *cap, struct ms_writer *w, struct ms_target *t)
{
	const char *command = ms_capture_info_text(cap, "command");
	uint64_t pid, launched;
	const char *p;

	/* Only what a target record makes: it would add the keys missing. */
	if (!command || !ms_capture_info_number(cap, "pid", &pid) ||
	    !ms_capture_info_number(cap, "launched", &launched))
		return 0;
	t->pid = pid;
	t->launched = launched != 0;
	t->argc = 0;
	/*
	 * Split at every space, so joining the pieces with spaces gives the
	 * command back exactly; the last piece takes whatever is left.
	 */
	for (p = command;;) {
		const char *sp = strchr(p, ' ');

		if (!sp || t->argc == MS_ARGV_MAX - 1) {
			t->argv[t->argc].ptr = p;
			t->argv[t->argc++].len = strlen(p);
			break;
		}
		t->argv[t->argc].ptr = p;
		t->argv[t->argc++].len = sp - p;
		p = sp + 1;
	}
	return ms_target_pack(w, t);
}

int ms_capture_frame_fact(const struct ms_capture *cap, uint32_t i, struct ms_frame *out)
{
	const struct ms_cap_frame *f = &cap->frames[i];
	uint32_t k;

	if (f->n_lines > MS_FRAME_LINES_MAX)
		return ms_error("frame %u has %u inline lines, more than the %d a stream record holds",
				i, f->n_lines, MS_FRAME_LINES_MAX);
	out->module = f->module;
	out->address = f->address;
	out->name = str(cap, f->name);
	out->symbol_start = f->symbol_start;
	out->reason = f->reason;
	out->n_lines = f->n_lines;
	for (k = 0; k < f->n_lines; k++) {
		const struct ms_cap_line *l = &cap->lines[f->first_line + k];
		const struct ms_cap_function *fn = &cap->functions[l->function];

		out->lines[k].function = str(cap, fn->name);
		out->lines[k].system_name = str(cap, fn->system_name);
		out->lines[k].file = str(cap, fn->file);
		out->lines[k].line = l->line;
		out->lines[k].function_line = fn->start_line;
	}
	return 0;
}

/* The FRAME record of frame i, with its inline chain. */
static int dump_frame(const struct ms_capture *cap, struct ms_writer *w, uint32_t i,
		      struct ms_frame *out)
{
	return ms_capture_frame_fact(cap, i, out) < 0 ? -1 : ms_frame_pack(w, out);
}

/*
 * A stack record is one sample: a row of count N goes out as an info
 * "sample-count" N just before its stack, one record whatever N is (see
 * capture/convert.h). A row of count 1 needs none, so a recording dumps
 * as it always did. (Its own record: the stack fills the union.)
 */
static int dump_count(struct ms_writer *w, uint64_t count)
{
	struct ms_info info = { { MS_CAPTURE_INFO_SAMPLE_COUNT,
				  sizeof(MS_CAPTURE_INFO_SAMPLE_COUNT) - 1 },
				false, { "", 0 }, count };

	return count == 1 ? 0 : ms_info_pack(w, &info);
}

/*
 * The duty rows from *next on whose time is at most until, as records: a
 * dump keeps them in time order among the samples, as ms-decode does, so
 * a stage that follows the duty as it reads sees it in force from the
 * first sample it applies to.
 */
static int dump_duty(const struct ms_capture *cap, struct ms_writer *w, struct ms_duty *out,
		     uint32_t *next, uint64_t until)
{
	for (; *next < cap->n_duty && cap->duty[*next].time <= until; ++*next) {
		const struct ms_cap_duty *d = &cap->duty[*next];

		out->time = d->time;
		out->duty_ppm = d->duty_ppm;
		out->rate = d->rate;
		out->share_ppm = d->share_ppm;
		out->budget_ppm = d->budget_ppm;
		if (ms_duty_pack(w, out) < 0)
			return -1;
	}
	return 0;
}

/*
 * The loss rows from *next on whose time is at most until, as lost
 * records, in time order among the samples as ms-decode gives them.
 */
static int dump_losses(const struct ms_capture *cap, struct ms_writer *w, struct ms_lost *out,
		       uint32_t *next, uint64_t until)
{
	for (; *next < cap->n_losses && cap->losses[*next].time <= until; ++*next) {
		const struct ms_cap_loss *x = &cap->losses[*next];

		memset(out, 0, sizeof(*out));
		out->source = x->source;
		out->time = x->time;
		out->count = x->count;
		if (ms_lost_pack(w, out) < 0)
			return -1;
	}
	return 0;
}

/*
 * What the loss rows do not say of each source's total (all of it in a
 * capture without rows): lost records of time 0, which the builder counts
 * in the totals alone, so a capture without rows dumps as it always did.
 */
static int dump_untimed_losses(const struct ms_capture *cap, struct ms_writer *w,
			       struct ms_lost *out)
{
	uint64_t timed[2] = { 0, 0 };
	uint64_t total[2] = { cap->lost_kernel, cap->lost_collector };
	uint32_t i, source;

	/* The reader makes each source's rows add up to at most its total. */
	for (i = 0; i < cap->n_losses; i++)
		timed[cap->losses[i].source] += cap->losses[i].count;
	for (source = MS_LOST_KERNEL; source <= MS_LOST_COLLECTOR; source++) {
		if (total[source] == timed[source])
			continue;
		memset(out, 0, sizeof(*out));
		out->source = source;
		out->count = total[source] - timed[source];
		if (ms_lost_pack(w, out) < 0)
			return -1;
	}
	return 0;
}

/* The frames of stack node node into s (innermost first, as streams list them). */
static int stack_frames(const struct ms_capture *cap, uint32_t node, struct ms_stack *s,
			const char *what, uint32_t row)
{
	uint32_t n = 0;

	for (; node != MS_NONE; node = cap->stacks[node].parent) {
		const struct ms_cap_frame *f = &cap->frames[cap->stacks[node].frame];

		if (n == MS_FRAMES_MAX)
			return ms_error("%s %u has more than %d frames: a stream record cannot hold it",
					what, row, MS_FRAMES_MAX);
		s->frames[n].module = f->module;
		s->frames[n].flags = f->flags;
		s->frames[n].address = f->address;
		n++;
	}
	s->n_frames = n;
	return 0;
}

/* Whether interval x has a switch-out stack to dump (one with no frames has its end reason). */
static bool has_stack(const struct ms_cap_interval *x)
{
	return x->stack != MS_NONE || x->stack_end != MS_END_UNKNOWN;
}

/* By (stack, stack_end), then row: the order STACK_DEFs of intervals are numbered in. */
static int cmp_by_stack(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_interval *iv = ctx;
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	if (iv[a].stack != iv[c].stack)
		return iv[a].stack < iv[c].stack ? -1 : 1;
	if (iv[a].stack_end != iv[c].stack_end)
		return iv[a].stack_end < iv[c].stack_end ? -1 : 1;
	return a < c ? -1 : a > c;
}

/*
 * The intervals: a STACK_DEF for each distinct (stack, end reason) they
 * left with, numbered from 0 in that order, then an INTERVAL per row in
 * the rows' order, its stack that STACK_DEF's id (MS_NONE when it has
 * none) and its evidence inline.
 */
static int dump_intervals(const struct ms_capture *cap, struct ms_writer *w, union any_record *u,
			  uint32_t *defs_made)
{
	uint32_t n = cap->n_intervals, *order, *def_of, n_order = 0, n_defs = 0, i;
	int ret = -1;

	order = malloc((size_t)(n ? n : 1) * sizeof(*order));
	def_of = malloc((size_t)(n ? n : 1) * sizeof(*def_of));
	if (!order || !def_of) {
		ms_error("out of memory dumping the capture's %u intervals", n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		def_of[i] = MS_NONE;
		if (has_stack(&cap->intervals[i]))
			order[n_order++] = i;
	}
	qsort_r(order, n_order, sizeof(*order), cmp_by_stack, cap->intervals);
	for (i = 0; i < n_order; i++) {
		const struct ms_cap_interval *x = &cap->intervals[order[i]];

		if (i && cap->intervals[order[i - 1]].stack == x->stack &&
		    cap->intervals[order[i - 1]].stack_end == x->stack_end) {
			def_of[order[i]] = def_of[order[i - 1]];
			continue;
		}
		memset(&u->stack, 0, sizeof(u->stack));
		u->stack.pid = cap->threads[x->thread].pid;
		u->stack.tid = cap->threads[x->thread].tid;
		u->stack.time = x->start;
		u->stack.cpu = x->cpu;
		u->stack.reason = x->stack_end;
		if (stack_frames(cap, x->stack, &u->stack, "interval", order[i]) < 0 ||
		    ms_stack_def_pack(w, n_defs, &u->stack) < 0)
			goto out;
		def_of[order[i]] = n_defs++;
	}
	for (i = 0; i < n; i++) {
		const struct ms_cap_interval *x = &cap->intervals[i];
		const struct ms_cap_evidence *e = &cap->evidence[x->evidence];

		memset(&u->interval, 0, sizeof(u->interval));
		u->interval.pid = cap->threads[x->thread].pid;
		u->interval.tid = cap->threads[x->thread].tid;
		u->interval.start = x->start;
		u->interval.end = x->end;
		u->interval.cpu = x->cpu;
		u->interval.missing = x->missing;
		u->interval.stack = def_of[i];
		u->interval.cause = e->cause;
		u->interval.sources = e->sources;
		u->interval.state = e->state;
		u->interval.preempt = e->preempt;
		if (ms_interval_pack(w, &u->interval) < 0)
			goto out;
	}
	*defs_made = n_defs;
	ret = 0;
out:
	free(order);
	free(def_of);
	return ret;
}

/* One TASK_WAIT of task t (its thread's tid for a thread task), stack a STACK_DEF id or none. */
static int task_wait(const struct ms_capture *cap, struct ms_writer *w, struct ms_task_wait *out,
		     const struct ms_cap_task *t, uint64_t time, uint32_t status, uint32_t stack,
		     uint32_t reason)
{
	memset(out, 0, sizeof(*out));
	out->pid = t->pid;
	out->tid = t->thread != MS_NONE ? cap->threads[t->thread].tid : 0;
	out->time = time;
	out->kind = str(cap, t->kind);
	out->id = t->id;
	out->status = status;
	out->stack = stack;
	out->reason = reason != MS_NONE ? str(cap, reason) : (struct ms_str){ "", 0 };
	return ms_task_wait_pack(w, out);
}

/*
 * A task's changed and dropped reads, which have no rows: a read at each
 * end of the task's reads no wait row is at (so its times come back), the
 * rest at its first read. rows: its wait rows.
 */
static int task_others(const struct ms_capture *cap, struct ms_writer *w, struct ms_task_wait *out,
		       const struct ms_cap_task *t, const struct ms_cap_wait *rows)
{
	uint64_t left = t->changed + t->dropped, k;
	bool at_first = !t->waits || rows[0].time > t->first_time;
	bool at_last = (!t->waits && t->last_time != t->first_time) ||
		       (t->waits && rows[t->waits - 1].time < t->last_time);

	for (k = 0; k < left; k++) {
		uint64_t time = t->first_time;

		if (at_last && k == (at_first ? 1 : 0))
			time = t->last_time;
		if (task_wait(cap, w, out, t, time, k < t->changed ? MS_TASK_WAIT_CHANGED :
			      MS_TASK_WAIT_DROPPED, UINT32_MAX, MS_NONE) < 0)
			return -1;
	}
	return 0;
}

/*
 * The tasks: a STACK_DEF for each stack their wait rows are at, numbered
 * on from first_def in the rows' order, then a TASK_WAIT per row, then
 * one per changed and dropped read (task_others()), task by task.
 */
static int dump_tasks(const struct ms_capture *cap, struct ms_writer *w, union any_record *u,
		      uint32_t first_def)
{
	uint32_t *def_of, next = first_def, i, r = 0;
	int ret = -1;

	if (!cap->n_tasks)
		return 0;
	if (!(def_of = malloc((size_t)(cap->n_stacks ? cap->n_stacks : 1) * sizeof(*def_of))))
		return ms_error("out of memory dumping the capture's %u tasks", cap->n_tasks);
	for (i = 0; i < cap->n_stacks; i++)
		def_of[i] = MS_NONE;
	for (i = 0; i < cap->n_waits; i++) {
		const struct ms_cap_wait *x = &cap->waits[i];
		const struct ms_cap_task *t = &cap->tasks[x->task];

		if (x->stack == MS_NONE || def_of[x->stack] != MS_NONE)
			continue;
		memset(&u->stack, 0, sizeof(u->stack));
		u->stack.pid = t->pid;
		u->stack.tid = t->thread != MS_NONE ? cap->threads[t->thread].tid : 0;
		u->stack.time = x->time;
		u->stack.cpu = UINT32_MAX;
		/* a whole read: its walk ended where its runtime says (a row keeps no end) */
		u->stack.reason = MS_END_OUTERMOST;
		if (stack_frames(cap, x->stack, &u->stack, "wait", i) < 0 ||
		    ms_stack_def_pack(w, next, &u->stack) < 0)
			goto out;
		def_of[x->stack] = next++;
	}
	for (i = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];
		const struct ms_cap_wait *rows = cap->waits ? &cap->waits[r] : NULL;

		/* the reader checked: the rows are sorted by task, t->waits of them */
		for (; r < cap->n_waits && cap->waits[r].task == i; r++) {
			const struct ms_cap_wait *x = &cap->waits[r];

			if (task_wait(cap, w, &u->task_wait, t, x->time, MS_TASK_WAIT_COMPLETE,
				      x->stack == MS_NONE ? UINT32_MAX : def_of[x->stack],
				      x->reason) < 0)
				goto out;
		}
		if (task_others(cap, w, &u->task_wait, t, rows) < 0)
			goto out;
	}
	ret = 0;
out:
	free(def_of);
	return ret;
}

static int dump_tables(const struct ms_capture *cap, struct ms_writer *w, union any_record *u,
		       unsigned flags)
{
	uint32_t i, duty = 0, loss = 0, n_defs = 0;
	uint64_t k;

	for (i = 0; i < cap->n_info; i++) {
		const struct ms_cap_info *r = &cap->info[i];

		/*
		 * The key that counts the next stack is no fact a builder keeps:
		 * a file that holds it anyway would give its number to the first
		 * sample of the dump.
		 */
		if (!strcmp(cap->strings[r->key], MS_CAPTURE_INFO_SAMPLE_COUNT))
			continue;
		u->info.key = str(cap, r->key);
		u->info.is_text = r->value_text != 0;
		u->info.text = str(cap, r->value_text);
		u->info.number = r->value_number;
		if (ms_info_pack(w, &u->info) < 0)
			return -1;
	}
	/*
	 * The key that carries the off-cpu flag through a stream: a builder
	 * gives a capture with the flag and without the key the key, as
	 * "unknown", so one loaded without it dumps as the builder made it.
	 */
	if ((cap->flags & MS_CAPTURE_OFF_CPU) && !ms_capture_info_text(cap, MS_CAPTURE_INFO_OFF_CPU) &&
	    !ms_capture_info_number(cap, MS_CAPTURE_INFO_OFF_CPU, &k)) {
		u->info.key = (struct ms_str){ MS_CAPTURE_INFO_OFF_CPU,
					       sizeof(MS_CAPTURE_INFO_OFF_CPU) - 1 };
		u->info.is_text = true;
		u->info.text = (struct ms_str){ "unknown", 7 };
		u->info.number = 0;
		if (ms_info_pack(w, &u->info) < 0)
			return -1;
	}
	if (dump_target(cap, w, &u->target) < 0)
		return -1;
	if (cap->target_exit_code >= 0) {
		uint64_t pid = 0;

		ms_capture_info_number(cap, "pid", &pid);
		u->target_exit.pid = pid;
		u->target_exit.exit_code = cap->target_exit_code;
		/* A wait status that gives the same exit code back. */
		u->target_exit.wait_status = cap->target_exit_code > 128 ?
			(uint32_t)cap->target_exit_code - 128 : (uint32_t)cap->target_exit_code << 8;
		if (ms_target_exit_pack(w, &u->target_exit) < 0)
			return -1;
	}
	for (i = 0; i < cap->n_modules; i++) {
		const struct ms_cap_module *m = &cap->modules[i];

		memset(&u->module, 0, sizeof(u->module));
		u->module.id = i;
		u->module.kind = m->kind;
		u->module.path = str(cap, m->path);
		u->module.build_id_len = m->build_id_len;
		memcpy(u->module.build_id, m->build_id, m->build_id_len);
		u->module.dev_maj = m->dev_maj;
		u->module.dev_min = m->dev_min;
		u->module.ino = m->ino;
		u->module.size = m->size;
		u->module.mtime = m->mtime;
		u->module.base = m->base;
		if (ms_module_pack(w, &u->module) < 0)
			return -1;
	}
	/* One read per process, its last: the counts are its totals. */
	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		memset(&u->jit_read, 0, sizeof(u->jit_read));
		u->jit_read.pid = x->pid;
		u->jit_read.time = x->time;
		u->jit_read.path = str(cap, x->path);
		u->jit_read.status = x->status;
		u->jit_read.err = x->err;
		u->jit_read.offset = x->offset;
		u->jit_read.functions = x->functions;
		u->jit_read.malformed = x->malformed;
		u->jit_read.over_max = x->over_max;
		u->jit_read.no_code = x->no_code;
		u->jit_read.code_unread = x->code_unread;
		u->jit_read.code_bytes = x->code_bytes;
		if (ms_jit_read_pack(w, &u->jit_read) < 0)
			return -1;
	}
	for (i = 0; i < cap->n_py_processes; i++) {
		const struct ms_cap_py_process *x = &cap->py_processes[i];

		memset(&u->py_process, 0, sizeof(u->py_process));
		u->py_process.pid = x->pid;
		u->py_process.time = x->time;
		u->py_process.status = x->status;
		u->py_process.version_hex = x->version_hex;
		u->py_process.source = x->source;
		u->py_process.path = str(cap, x->path);
		u->py_process.engine = str(cap, x->engine);
		u->py_process.reason = str(cap, x->reason);
		if (ms_py_process_pack(w, &u->py_process) < 0)
			return -1;
	}
	for (i = 0; i < cap->n_label_spans; i++) {
		const struct ms_cap_label_span *x = &cap->label_spans[i];

		memset(&u->label_span, 0, sizeof(u->label_span));
		u->label_span.pid = cap->threads[x->thread].pid;
		u->label_span.tid = cap->threads[x->thread].tid;
		u->label_span.start = x->start;
		u->label_span.end = x->end;
		u->label_span.samples = x->samples;
		u->label_span.key = str(cap, x->key);
		u->label_span.value = str(cap, x->value);
		if (ms_label_span_pack(w, &u->label_span) < 0)
			return -1;
	}
	/* Frames are sorted by (module, address, flags): one fact per address. */
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];

		if (f->reason == MS_CAP_UNSYMBOLIZED ||
		    ((flags & MS_DUMP_OMIT_FAILED) && f->reason != MS_SYM_OK) ||
		    (i && f[-1].module == f->module && f[-1].address == f->address))
			continue;
		if (dump_frame(cap, w, i, &u->frame) < 0)
			return -1;
	}
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];

		u->comm.pid = t->pid;
		u->comm.tid = t->tid;
		u->comm.time = t->first_time;
		u->comm.exec = false;
		u->comm.synthesized = true;
		u->comm.comm = str(cap, t->name);
		if (ms_comm_pack(w, &u->comm) < 0)
			return -1;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		/*
		 * The duty and lost records of its time first (they share the
		 * union with the stack).
		 */
		if (dump_duty(cap, w, &u->duty, &duty, s->time) < 0 ||
		    dump_losses(cap, w, &u->lost, &loss, s->time) < 0)
			return -1;
		u->stack.pid = cap->threads[s->thread].pid;
		u->stack.tid = cap->threads[s->thread].tid;
		u->stack.time = s->time;
		u->stack.cpu = s->cpu;
		u->stack.period = s->period;
		u->stack.reason = s->end;
		if (stack_frames(cap, s->stack, &u->stack, "sample", i) < 0 ||
		    dump_count(w, s->count) < 0 || ms_stack_pack(w, &u->stack) < 0)
			return -1;
	}
	if (dump_duty(cap, w, &u->duty, &duty, UINT64_MAX) < 0 ||
	    dump_losses(cap, w, &u->lost, &loss, UINT64_MAX) < 0 ||
	    dump_untimed_losses(cap, w, &u->lost) < 0)
		return -1;
	/* After the losses: an interval record is whole, no pairing reads it. */
	if (dump_intervals(cap, w, u, &n_defs) < 0 || dump_tasks(cap, w, u, n_defs) < 0)
		return -1;
	/* The capture keeps only the count of throttle events (bounded above). */
	memset(&u->throttle, 0, sizeof(u->throttle));
	for (k = 0; k < cap->throttled; k++)
		if (ms_throttle_pack(w, &u->throttle) < 0)
			return -1;
	for (i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];

		u->problem.stage = str(cap, p->stage);
		u->problem.code = str(cap, p->code);
		u->problem.count = p->count;
		u->problem.detail = str(cap, p->detail);
		if (ms_problem_pack(w, &u->problem) < 0)
			return -1;
	}
	return 0;
}

int ms_capture_dump(const struct ms_capture *cap, struct ms_writer *w, const char *stage,
		    const char *version, unsigned flags)
{
	union any_record *u;
	int ret = -1;

	/*
	 * The stream has one record per throttle event: a count a file makes
	 * up (the reader cannot bound it) must not make us write records for
	 * ever. Refused before anything is written.
	 */
	if (cap->throttled > MS_DUMP_THROTTLE_MAX)
		return ms_error("the capture counts %" PRIu64 " throttle events; a dump writes a "
				"record for each, and at most %u", cap->throttled,
				MS_DUMP_THROTTLE_MAX);
	u = malloc(sizeof(*u));
	if (!u)
		return ms_error("out of memory dumping the capture");
	if (ms_writer_header(w, NULL, stage, version) == 0 && dump_tables(cap, w, u, flags) == 0 &&
	    ms_writer_trailer(w, !(cap->flags & MS_CAPTURE_INCOMPLETE)) == 0)
		ret = 0;
	free(u);
	return ret;
}

struct dump {
	const struct ms_capture *cap;
	unsigned flags;
};

static int produce(void *ctx, struct ms_stage_io *io)
{
	struct dump *d = ctx;

	return ms_capture_dump(d->cap, io->writer, "ms-capture", PACKAGE_VERSION, d->flags);
}

int ms_capture_dump_stage(const char *path, unsigned flags, int out_fd, const char *out_name)
{
	struct dump d = { .flags = flags };
	struct ms_stage_desc desc = { .name = "ms-capture", .version = PACKAGE_VERSION,
				      .ctx = &d, .produce = produce };
	struct ms_capture *cap = ms_capture_load(path);
	int code;

	if (!cap)
		return MS_EXIT_ERROR;
	d.cap = cap;
	code = ms_stage_run_source(&desc, out_fd, out_name);
	ms_capture_free(cap);
	return code;
}
