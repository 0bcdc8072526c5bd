/* The ms-unwind stage: the unwinder between a stream reader and a writer. */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/sampler.h"
#include "python/labels.h"
#include "python/pycode.h"
#include "python/splice.h"
#include "stream/protocols.h"
#include "stream/stackfile.h"
#include "stream/stage.h"
#include "stream/stream.h"
#include "unwind/stacktab.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "util/grow.h"

/* The stage's state, allocated once: a sample and a stack are large. */
struct unwind_bufs {
	struct ms_unwinder *u;
	const struct ms_unwind_options *opts;
	/*
	 * The stack-copy policy as the stage settles it: at the first sample
	 * (or at the end), written once as INFO "unwind-policy" before any
	 * stack.
	 */
	bool settled;
	bool attr_seen, attr_stacks;	/* an attr asks for user registers and stack */
	struct ms_sample sample;
	/* A switch-out: its sample is unwound as a SAMPLE is. */
	struct ms_switch_out switch_out;
	struct ms_off_cpu off_cpu;
	/* The next sample, framed ahead (ms_reader_peek_sample()): two, in turn. */
	struct ms_sample ahead[2];
	struct ms_stack stack;
	struct ms_mmap mmap;
	struct ms_comm comm;
	struct ms_task task;
	struct ms_module module;
	struct ms_frame frame;
	struct ms_jit_func jit_func;
	struct ms_jit_read jit_read;
	struct ms_jit_object jit_object;
	struct ms_attr attr;
	struct ms_stack_file stack_file;
	/* The file samples' stack copies are in, when ms-decode referred to them. */
	struct ms_stack_map stack_map;
	const char *in_name;
	struct ms_reader *reader;
	/* Each stack's frames go out once (STACK_DEF), then samples refer to it. */
	struct ms_stacktab *stacks;
	struct ms_stack_ref ref;

	/*
	 * Python: whether an engine that pairs a walk with each sample ran
	 * (INFO "python", any but "snapshot"), the code objects
	 * (PY_CODE), the walker record waiting for its sample (PY_STACK), and
	 * the buffers of a splice: which native frames are activations of the
	 * loop, the Python frames, the spliced stack, the keys first used.
	 */
	bool py_engine;
	struct ms_pycode *pycode;
	struct ms_py_code py_code;
	bool py_pending;
	uint64_t py_pending_offset;
	struct ms_py_stack py_stack;
	bool act[MS_FRAMES_MAX];
	struct ms_py_splice_frame pyf[MS_PY_STACK_FRAMES_MAX];
	struct ms_stack_frame spliced[MS_FRAMES_MAX];
	uint32_t py_module;
	/* (a snapshot's frames are more than a walker record's) */
	uint64_t new_keys[MS_PY_SNAPSHOT_FRAMES_MAX];
	uint32_t n_new_keys;
	/*
	 * Whether the last stack made ended unknown, and which numbered
	 * stacks did (one bit each): a sample a tag answers is counted as its
	 * stack was.
	 */
	bool last_unknown;
	uint64_t *unknown_ids;
	uint32_t alloc_unknown_ids;
	/*
	 * The GIL's runs per thread, written as LABEL_SPANs as they end: of
	 * samples' walker records, and of thread snapshots (a table each).
	 */
	struct ms_py_labels *labels, *snap_labels;
	struct ms_label_span span;
	bool labels_full_said;
	/* A thread snapshot (PY_SNAPSHOT) and the TASK_WAIT it becomes. */
	struct ms_py_snapshot snapshot;
	struct ms_task_wait wait;
};

_Static_assert(MS_PY_SNAPSHOT_FRAMES_MAX >= MS_PY_STACK_FRAMES_MAX,
	       "new_keys holds the keys of a walker record's frames too");

/* A STACK_REF to stack id, with the per-sample fields of b->stack. */
static int write_ref(struct ms_writer *w, struct unwind_bufs *b, uint32_t id)
{
	const struct ms_stack *s = &b->stack;

	b->ref.pid = s->pid;
	b->ref.tid = s->tid;
	b->ref.time = s->time;
	b->ref.cpu = s->cpu;
	b->ref.period = s->period;
	b->ref.id = id;
	return ms_stack_ref_pack(w, &b->ref);
}

/*
 * The id of the stack just unwound, its STACK_DEF written the first time
 * it appears; MS_STACKTAB_FULL when the table is full (nothing written).
 */
static int intern_stack(struct ms_unwinder *u, struct ms_writer *w, struct unwind_bufs *b,
			uint32_t *id)
{
	const struct ms_stack *s = &b->stack;

	switch (ms_stacktab_intern(b->stacks, s, id)) {
	case MS_STACKTAB_ADDED:
		if (ms_stack_def_pack(w, *id, s) < 0)
			return -1;
		break;
	case MS_STACKTAB_FULL:
		ms_problems_add(ms_unwinder_problems(u), "stack-table-full",
				"the table of unique stacks is full after %u stacks: a stack "
				"not in it is written whole (a switch-out's: none)",
				ms_stacktab_count(b->stacks));
		return MS_STACKTAB_FULL;
	default:
		break;
	}
	/* Later samples with this stack skip its frames (ms_unwinder_sample_tagged()). */
	ms_unwinder_tag(u, *id);
	if (b->last_unknown) {
		uint32_t old = b->alloc_unknown_ids;

		if (MS_GROW(b->unknown_ids, *id / 64, b->alloc_unknown_ids) < 0)
			return -1;
		memset(b->unknown_ids + old, 0, (b->alloc_unknown_ids - old) * sizeof(uint64_t));
		b->unknown_ids[*id / 64] |= 1ull << (*id % 64);
	}
	return 0;
}

/* The stack as a STACK_REF to its STACK_DEF, or whole when the table is full. */
static int write_stack(struct ms_unwinder *u, struct ms_writer *w, struct unwind_bufs *b)
{
	uint32_t id;
	int r = intern_stack(u, w, b, &id);

	if (r < 0)
		return -1;
	return r == MS_STACKTAB_FULL ? ms_stack_pack(w, &b->stack) : write_ref(w, b, id);
}

static int settle(struct ms_unwinder *u, struct ms_writer *w, struct unwind_bufs *b,
		  const struct ms_sample *first)
{
	const struct ms_unwind_method *m = b->opts ? b->opts->method : NULL;
	int policy = b->opts ? b->opts->policy : MS_UNWIND_AUTO;
	struct ms_info info = { .key = { "unwind-policy", 13 }, .is_text = true };
	bool stacks;

	b->settled = true;
	if (!m) {
		if (policy == MS_UNWIND_AUTO) {
			stacks = b->attr_seen ? b->attr_stacks :
				 first && first->stack_len && first->n_regs;
			policy = stacks ? MS_UNWIND_DWARF : MS_UNWIND_FP;
		}
		m = ms_unwind_policy_method(policy);
		if (!m)
			return ms_error("unknown unwind policy %d", policy);
	}
	if (ms_unwinder_set_method(u, m) < 0)
		return -1;
	info.text.ptr = m->name;
	info.text.len = (uint32_t)strlen(m->name);
	return ms_info_pack(w, &info);
}

/*
 * The next sample's stack words are asked for before this one is walked:
 * they come from the saved stream, cold, and arrive meanwhile.
 */
static void prefetch_next(struct ms_unwinder *u, struct unwind_bufs *b,
			  const struct ms_sample *cur)
{
	struct ms_sample *ahead = cur == &b->ahead[0] ? &b->ahead[1] : &b->ahead[0];

	if (!ms_reader_peek_sample(b->reader, ahead) || !ahead->stack_in_file)
		return;
	ahead->stack = ms_stack_map_at(&b->stack_map, ahead->stack_offset, ahead->stack_len);
	if (ahead->stack)
		ms_unwinder_prefetch(u, ahead);
}

/*
 * The Python frames of py (NULL: none came) spliced into b->stack
 * (python/splice.h), their module and new keys noted for unwind_one() to
 * write. 0, or -1 after a message.
 */
static int python(struct unwind_bufs *b, const struct ms_py_stack *py)
{
	struct ms_unwinder *u = b->u;
	struct ms_unwind_stats *st = ms_unwinder_counters(u);
	struct ms_stack *stack = &b->stack;
	struct ms_py_splice_in in = {
		.native = stack->frames, .activation = b->act, .n_native = stack->n_frames,
		.native_reason = stack->reason, .engine = b->py_engine, .have_walk = py != NULL,
		.py = b->pyf,
	};
	struct ms_py_splice_out res;
	bool any = ms_unwinder_any_interpreter(u);

	for (uint32_t i = 0; i < stack->n_frames; i++)
		b->act[i] = any && ms_unwinder_activation(u, &stack->frames[i]);
	if (py) {
		in.status = py->status;
		if (ms_py_splice_status_usable(py->status) && py->n_words >= 4) {
			if (ms_unwinder_interpreted_module(u, &b->py_module) < 0)
				return -1;
			for (uint32_t i = 0; i < py->n_words / 4; i++) {
				const uint64_t *wd = &py->words[4 * i];
				bool is_new;
				uint64_t key = ms_pycode_key(b->pycode, py->pid, wd[0], wd[1], wd[2],
							     &is_new);

				if (!key)
					return -1;
				if (is_new)
					b->new_keys[b->n_new_keys++] = key;
				b->pyf[i] = (struct ms_py_splice_frame){
					.frame = { .module = b->py_module, .address = key,
						   .flags = MS_FRAME_NO_ADDRESS },
					.entry = (wd[3] & MS_BPF_PY_ENTRY) != 0,
				};
			}
			in.n_py = py->n_words / 4;
		}
	}
	switch (ms_py_splice(&in, b->spliced, MS_FRAMES_MAX, &res)) {
	case MS_PY_SPLICE_NATIVE:
		return 0;
	case MS_PY_SPLICE_PLACED:
		st->py_placed++;
		break;
	case MS_PY_SPLICE_TRUNCATED:
		st->py_truncated++;
		break;
	case MS_PY_SPLICE_UNPLACED:
		st->py_unplaced++;
		break;
	default:
		st->py_unknown++;
		b->last_unknown = true;
		break;
	}
	if (res.cut) {
		st->py_cut++;
		ms_problems_add(ms_unwinder_problems(u), "python-stack-cut",
				"a stack with its Python frames spliced in has more than %u frames: "
				"cut at its outer end (end depth)", MS_FRAMES_MAX);
	}
	st->py_frames += in.n_py;
	memcpy(stack->frames, b->spliced, res.n * sizeof(*stack->frames));
	stack->n_frames = res.n;
	stack->reason = res.reason;
	return 0;
}

/*
 * Unwind sample s (a SAMPLE's, or a SWITCH_OUT's) into b->stack, splice
 * in the Python frames of py (NULL: none came with it), and write the
 * modules and the FRAME records it used first. A sample with a walker
 * record is never answered by a tag: its stack is more than its native
 * walk. Returns 1 with *id when its stack was tagged before (its frames
 * not made), 0 when they were made, -1 after a message.
 */
static int unwind_one(struct unwind_bufs *b, struct ms_writer *w, const struct ms_record *rec,
		      struct ms_sample *s, uint32_t *id, const struct ms_py_stack *py)
{
	struct ms_unwinder *u = b->u;
	int r;

	if (s->stack_in_file) {
		s->stack = ms_stack_map_at(&b->stack_map, s->stack_offset, s->stack_len);
		if (!s->stack)
			return ms_error("'%s': the sample at byte %" PRIu64 " refers to %u stack "
					"bytes at offset %" PRIu64 " of %s, which %s", b->in_name,
					rec->offset, s->stack_len, s->stack_offset,
					b->stack_map.bytes ? "the stack file" : "a stack file",
					b->stack_map.bytes ? "does not hold them" :
					"no stack-file record named before it");
	}
	if (!b->settled && settle(u, w, b, s) < 0)
		return -1;
	prefetch_next(u, b, s);
	/* A stack numbered before: its id, without its frames. */
	if ((r = py ? ms_unwinder_sample(u, s, &b->stack) :
		      ms_unwinder_sample_tagged(u, s, &b->stack, id)) < 0)
		return -1;
	/* What was unwound from zeros read past a cut stack file is not written. */
	if (s->stack_in_file && ms_stack_map_cut(&b->stack_map, b->in_name))
		return -1;
	/*
	 * Without a walker record the splice depends on the native stack
	 * alone (unknown frames where the loop ran), so a tag stays true.
	 */
	b->n_new_keys = 0;
	b->last_unknown = false;
	if (r == 1 && *id / 64 < b->alloc_unknown_ids &&
	    (b->unknown_ids[*id / 64] >> (*id % 64) & 1))
		ms_unwinder_counters(u)->py_unknown++;
	if (!r && (py || (b->py_engine && ms_unwinder_any_interpreter(u))) && python(b, py) < 0)
		return -1;
	while (ms_unwinder_next_module(u, &b->module))
		if (ms_module_pack(w, &b->module) < 0)
			return -1;
	/* JIT functions' frames, named here: nothing names them later. */
	while (ms_unwinder_next_frame(u, &b->frame))
		if (ms_frame_pack(w, &b->frame) < 0)
			return -1;
	/* Interpreted frames: named here too, each key the first time. */
	for (uint32_t i = 0; i < b->n_new_keys; i++)
		if (ms_pycode_frame(b->pycode, b->new_keys[i], b->py_module, &b->frame) &&
		    ms_frame_pack(w, &b->frame) < 0)
			return -1;
	return r;
}

/* The walker record held is not followed by its sample: dropped, counted. */
static void py_drop(struct unwind_bufs *b)
{
	const struct ms_py_stack *p = &b->py_stack;

	ms_unwinder_counters(b->u)->py_unpaired++;
	ms_problems_add(ms_unwinder_problems(b->u), "python-stack-unpaired",
			"'%s': the py-stack record at byte %" PRIu64 " (pid %u tid %u time %" PRIu64
			") is not followed by its sample: its Python frames are dropped",
			b->in_name, b->py_pending_offset, p->pid, p->tid, p->time);
	b->py_pending = false;
}

/* The walker record waiting for its sample, when s is that sample (else dropped, counted). */
static const struct ms_py_stack *py_take(struct unwind_bufs *b, const struct ms_sample *s)
{
	const struct ms_py_stack *p = &b->py_stack;

	if (!b->py_pending)
		return NULL;
	if (p->pid == s->pid && p->tid == s->tid && p->time == s->time && p->cpu == s->cpu) {
		b->py_pending = false;
		return p;
	}
	py_drop(b);
	return NULL;
}

/* The counters of the GIL's runs (both tables), and the problem of the tables' bound. */
static void label_stats(struct unwind_bufs *b)
{
	const struct ms_py_labels_stats *ls = ms_py_labels_stats(b->labels);
	const struct ms_py_labels_stats *ss = ms_py_labels_stats(b->snap_labels);
	struct ms_unwind_stats *st = ms_unwinder_counters(b->u);
	uint64_t full = ls->threads_full + ss->threads_full;

	st->py_spans = ls->spans + ss->spans;
	if (full > st->py_spans_full && !b->labels_full_said) {
		b->labels_full_said = true;
		ms_problems_add(ms_unwinder_problems(b->u), "python-label-threads-full",
				"more than %u threads had a GIL run open at once: samples of "
				"the others make no GIL label span (ms-unwind --stats counts them)",
				MS_PY_LABELS_THREADS_MAX);
	}
	st->py_spans_full = full;
}

/*
 * The sample's GIL state (its walker record's; none without one) goes
 * into its thread's run: a run it ends goes out as a LABEL_SPAN first.
 */
static int label_sample(struct unwind_bufs *b, struct ms_writer *w, const struct ms_sample *s,
			const struct ms_py_stack *py)
{
	int r = ms_py_labels_sample(b->labels, s->pid, s->tid, s->time,
				    py ? py->gil : MS_PY_LABELS_NONE, &b->span);

	if (r < 0 || (r && ms_label_span_pack(w, &b->span) < 0))
		return -1;
	if (r || py)
		label_stats(b);
	return 0;
}

static int on_sample(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;
	/* (Most samples were unpacked as the reader framed them.) */
	struct ms_sample *s = ms_reader_sample(b->reader, rec);
	const struct ms_py_stack *py;
	uint32_t id;
	int r;

	if (!s) {
		if (ms_sample_unpack(rec, &b->sample) < 0)
			return -1;
		s = &b->sample;
	}
	py = py_take(b, s);
	if (label_sample(b, io->writer, s, py) < 0)
		return -1;
	if ((r = unwind_one(b, io->writer, rec, s, &id, py)) < 0)
		return -1;
	return r ? write_ref(io->writer, b, id) : write_stack(b->u, io->writer, b);
}

/*
 * A switch-out: its stack unwound by the same walk and numbered in the
 * same table as samples' (a STACK_DEF the first time), then an OFF_CPU
 * that refers to it with the evidence. No stack to refer to when the
 * table is full: id UINT32_MAX.
 */
static int on_switch_out(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;
	struct ms_switch_out *so = &b->switch_out;
	struct ms_off_cpu *o = &b->off_cpu;
	uint32_t id;
	int r;

	if (ms_switch_out_unpack(rec, so) < 0)
		return -1;
	if ((r = unwind_one(b, io->writer, rec, &so->sample, &id, NULL)) < 0)
		return -1;
	if (!r && (r = intern_stack(b->u, io->writer, b, &id)) < 0)
		return -1;
	o->pid = so->sample.pid;
	o->tid = so->sample.tid;
	o->time = so->sample.time;
	o->cpu = so->sample.cpu;
	o->state = so->state;
	o->cause = so->cause;
	o->id = r == MS_STACKTAB_FULL ? UINT32_MAX : id;
	ms_unwinder_counters(b->u)->switch_outs++;
	return ms_off_cpu_pack(io->writer, o);
}

/* Records the unwinder learns from go on for the stages after it. */
static int on_attr(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_attr_unpack(rec, &b->attr) < 0)
		return -1;
	b->attr_seen = true;
	b->attr_stacks |= b->attr.sample_stack_user && b->attr.sample_regs_user;
	return MS_STAGE_PASS;
}

static int on_mmap(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_mmap_unpack(rec, &b->mmap) < 0 || ms_unwinder_mmap(b->u, &b->mmap) < 0)
		return -1;
	return MS_STAGE_PASS;
}

static int on_comm(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_comm_unpack(rec, &b->comm) < 0 || ms_unwinder_comm(b->u, &b->comm) < 0)
		return -1;
	return MS_STAGE_PASS;
}

static int on_task(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_task_unpack(rec, &b->task) < 0)
		return -1;
	if ((rec->kind == MS_REC_FORK ? ms_unwinder_fork(b->u, &b->task) :
					ms_unwinder_exit(b->u, &b->task)) < 0)
		return -1;
	/* A thread that exits ends its GIL run (its id may be reused). */
	if (rec->kind == MS_REC_EXIT && b->labels) {
		struct ms_py_labels *tables[2] = { b->labels, b->snap_labels };

		for (int k = 0; k < 2; k++) {
			if (!ms_py_labels_exit(tables[k], b->task.pid, b->task.tid, &b->span))
				continue;
			if (ms_label_span_pack(io->writer, &b->span) < 0)
				return -1;
			label_stats(b);
		}
	}
	return MS_STAGE_PASS;
}

/*
 * The kernel that ran (info kernel-build-id); whether a Python engine that
 * walks at each sample ran (info python: its name, "none" or empty when
 * none did). Thread snapshots ("snapshot") walk no sample: their samples
 * stay native, never interpreted-unknown, as nothing was expected with
 * them. Every info goes on.
 */
static int on_info(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;
	struct ms_info i;

	(void)io;
	if (ms_info_unpack(rec, &i) < 0 || ms_unwinder_info(b->u, &i) < 0)
		return -1;
	if (i.key.len == 6 && !memcmp(i.key.ptr, "python", 6))
		b->py_engine = i.is_text ? i.text.len && !(i.text.len == 4 &&
							   !memcmp(i.text.ptr, "none", 4)) &&
					   !(i.text.len == 8 && !memcmp(i.text.ptr, "snapshot", 8)) :
					   i.number != 0;
	return MS_STAGE_PASS;
}

/*
 * A Python code object: kept for the frames that name it, and consumed
 * (its frames go out named). A record that does not unpack is a counted
 * problem, not the stream's end: frames of its code are unknown.
 */
static int on_py_code(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;
	struct ms_unwind_stats *st = ms_unwinder_counters(b->u);
	const struct ms_pycode_stats *ps = ms_pycode_stats(b->pycode);
	int r;

	(void)io;
	if (ms_py_code_unpack(rec, &b->py_code) < 0) {
		ms_problems_add(ms_unwinder_problems(b->u), "bad-py-code",
				"'%s': the py-code record at byte %" PRIu64 " is malformed (see "
				"the message above): its code's frames are shown as unknown code",
				b->in_name, rec->offset);
		return 0;
	}
	if ((r = ms_pycode_add(b->pycode, &b->py_code)) < 0)
		return -1;
	if (!r && ps->codes_refused > st->py_codes_refused)
		ms_problems_add(ms_unwinder_problems(b->u), "python-codes-full",
				"the Python codes kept reached %u MiB: the code at 0x%" PRIx64
				" of process %u and later ones are not kept, and their frames "
				"are shown as unknown code", MS_PYCODE_BYTES_MAX >> 20,
				b->py_code.code, b->py_code.pid);
	st->py_codes = ps->codes;
	st->py_codes_again = ps->codes_again;
	st->py_codes_refused = ps->codes_refused;
	return 0;
}

/*
 * A walker record: held for the sample ms-decode wrote just after it
 * (py_take()), consumed. One still held when another comes is dropped
 * and counted; a malformed one is a counted problem.
 */
static int on_py_stack(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (b->py_pending) {
		py_drop(b);
	}
	if (ms_py_stack_unpack(rec, &b->py_stack) < 0) {
		ms_problems_add(ms_unwinder_problems(b->u), "bad-py-stack",
				"'%s': the py-stack record at byte %" PRIu64 " is malformed (see "
				"the message above): its sample has no Python frames",
				b->in_name, rec->offset);
		return 0;
	}
	ms_unwinder_counters(b->u)->py_stacks++;
	b->py_pending = true;
	b->py_pending_offset = rec->offset;
	return 0;
}

/*
 * A snapshot's frames as b->stack (innermost first, as read; the walk
 * ended where the runtime says, so the stack ends outermost), their keys
 * first used in b->new_keys, the [python] module noted. 0, or -1 after a
 * message.
 */
static int snapshot_stack(struct unwind_bufs *b, const struct ms_py_snapshot *p)
{
	struct ms_stack *stack = &b->stack;
	uint32_t n = p->n_words / 4;

	if (ms_unwinder_interpreted_module(b->u, &b->py_module) < 0)
		return -1;
	memset(stack, 0, offsetof(struct ms_stack, frames));
	stack->pid = p->pid;
	stack->tid = p->tid;
	stack->time = p->time;
	stack->cpu = UINT32_MAX;
	stack->reason = MS_END_OUTERMOST;
	stack->n_frames = n;
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *wd = &p->words[4 * i];
		bool is_new;
		uint64_t key = ms_pycode_key(b->pycode, p->pid, wd[0], wd[1], wd[2], &is_new);

		if (!key)
			return -1;
		if (is_new)
			b->new_keys[b->n_new_keys++] = key;
		stack->frames[i] = (struct ms_stack_frame){ .module = b->py_module, .address = key,
							    .flags = MS_FRAME_NO_ADDRESS };
	}
	return 0;
}

/*
 * The [python] module and the FRAME records of keys first used, then the
 * stack as a STACK_DEF the first time it appears (never tagged: no
 * sample's walk made it). Returns its id, or UINT32_MAX when the table of
 * stacks is full (a problem), -1 after a message.
 */
static int64_t snapshot_def(struct unwind_bufs *b, struct ms_writer *w)
{
	uint32_t id;

	while (ms_unwinder_next_module(b->u, &b->module))
		if (ms_module_pack(w, &b->module) < 0)
			return -1;
	for (uint32_t i = 0; i < b->n_new_keys; i++)
		if (ms_pycode_frame(b->pycode, b->new_keys[i], b->py_module, &b->frame) &&
		    ms_frame_pack(w, &b->frame) < 0)
			return -1;
	switch (ms_stacktab_intern(b->stacks, &b->stack, &id)) {
	case MS_STACKTAB_ADDED:
		if (ms_stack_def_pack(w, id, &b->stack) < 0)
			return -1;
		return id;
	case MS_STACKTAB_FULL:
		ms_problems_add(ms_unwinder_problems(b->u), "stack-table-full",
				"the table of unique stacks is full after %u stacks: a stack "
				"not in it is written whole (a switch-out's and a snapshot's: "
				"none)", ms_stacktab_count(b->stacks));
		return UINT32_MAX;
	default:
		return id;
	}
}

/*
 * A thread snapshot (PY_SNAPSHOT), consumed: a TASK_WAIT of kind "thread"
 * numbered by its tid, complete with the STACK_DEF of its frames (none
 * when it ran no Python), changed with none, or dropped when the table of
 * stacks is full; its GIL state goes into the thread's snapshot run. A
 * record that does not unpack is a counted problem, not the stream's end.
 */
static int on_py_snapshot(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	static const char thread[] = "thread";
	struct unwind_bufs *b = ctx;
	struct ms_unwind_stats *st = ms_unwinder_counters(b->u);
	const struct ms_py_snapshot *p = &b->snapshot;
	struct ms_task_wait *t = &b->wait;
	int64_t id = UINT32_MAX;
	int r;

	if (ms_py_snapshot_unpack(rec, &b->snapshot) < 0) {
		st->py_snapshots_bad++;
		ms_problems_add(ms_unwinder_problems(b->u), "bad-py-snapshot",
				"'%s': the py-snapshot record at byte %" PRIu64 " is malformed (see "
				"the message above): its thread's read is not kept",
				b->in_name, rec->offset);
		return 0;
	}
	st->py_snapshots++;
	memset(t, 0, sizeof(*t));
	t->pid = p->pid;
	t->tid = p->tid;
	t->time = p->time;
	t->kind = (struct ms_str){ thread, sizeof(thread) - 1 };
	t->id = p->tid;
	t->status = MS_TASK_WAIT_CHANGED;
	t->stack = UINT32_MAX;
	if (p->status == MS_PY_SNAPSHOT_COMPLETE) {
		t->status = MS_TASK_WAIT_COMPLETE;
		b->n_new_keys = 0;
		if (p->n_words && (snapshot_stack(b, p) < 0 ||
				   (id = snapshot_def(b, io->writer)) < 0))
			return -1;
		if (p->n_words && id == UINT32_MAX)
			t->status = MS_TASK_WAIT_DROPPED;
		t->stack = (uint32_t)id;
		st->py_snapshot_frames += p->n_words / 4;
	}
	st->py_snapshots_complete += t->status == MS_TASK_WAIT_COMPLETE;
	st->py_snapshots_changed += t->status == MS_TASK_WAIT_CHANGED;
	st->py_snapshots_dropped += t->status == MS_TASK_WAIT_DROPPED;
	if (ms_task_wait_pack(io->writer, t) < 0)
		return -1;
	r = ms_py_labels_snapshot(b->snap_labels, p->pid, p->tid, p->time, p->gil, &b->span);
	if (r < 0 || (r && ms_label_span_pack(io->writer, &b->span) < 0))
		return -1;
	label_stats(b);
	return 0;
}

/*
 * A JIT function: kept for the process's frames, and consumed (large, and
 * of use to no later stage: the frames go out named). A record that does
 * not unpack is a counted problem, not the stream's end.
 */
static int on_jit_func(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_jit_func_unpack(rec, &b->jit_func) < 0) {
		ms_problems_add(ms_unwinder_problems(b->u), "bad-jit-function",
				"'%s': the jit-func record at byte %" PRIu64 " is malformed (see "
				"the message above): its function is not kept, and its frames "
				"stay anonymous", b->in_name, rec->offset);
		return 0;
	}
	return ms_unwinder_jit_func(b->u, &b->jit_func);
}

/* What a read of a perf map came to: its path names the modules; passed on. */
static int on_jit_read(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_jit_read_unpack(rec, &b->jit_read) < 0) {
		ms_problems_add(ms_unwinder_problems(b->u), "bad-jit-read",
				"'%s': the jit-read record at byte %" PRIu64 " is malformed (see "
				"the message above): passed on as it is", b->in_name, rec->offset);
		return MS_STAGE_PASS;
	}
	if (ms_unwinder_jit_read(b->u, &b->jit_read) < 0)
		return -1;
	return MS_STAGE_PASS;
}

/*
 * A JIT object's chunk or unregistration: consumed, as JIT_FUNC (the
 * frames go out named). A record that does not unpack is a counted
 * problem, not the stream's end.
 */
static int on_jit_object(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_jit_object_unpack(rec, &b->jit_object) < 0) {
		ms_problems_add(ms_unwinder_problems(b->u), "bad-jit-object",
				"'%s': the jit-object record at byte %" PRIu64 " is malformed (see "
				"the message above): the object it belongs to is broken, and its "
				"code's frames stay anonymous", b->in_name, rec->offset);
		return 0;
	}
	return ms_unwinder_jit_object(b->u, &b->jit_object);
}

/* Kept for the vdso's CFI, and passed on for symbolization. */
static int on_vdso(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;
	struct ms_vdso v;

	(void)io;
	if (ms_vdso_unpack(rec, &v) < 0 || ms_unwinder_vdso(b->u, &v) < 0)
		return -1;
	return MS_STAGE_PASS;
}

/* Consumed: after this stage no record refers to stack bytes. */
static int on_stack_file(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct unwind_bufs *b = ctx;

	(void)io;
	if (ms_stack_file_unpack(rec, &b->stack_file) < 0)
		return -1;
	return ms_stack_map_open(&b->stack_map, &b->stack_file, b->in_name);
}

static int on_header(void *ctx, struct ms_stage_io *io)
{
	struct unwind_bufs *b = ctx;

	if (!(b->u = ms_unwinder_new(b->opts)))
		return -1;
	b->reader = io->reader;
	/* SAMPLE records are unpacked as the reader frames them. */
	ms_reader_unpack_samples(io->reader, &b->sample);
	b->stacks = ms_stacktab_new(MS_STACKTAB_STACKS_MAX, MS_STACKTAB_FRAMES_MAX);
	if (!b->stacks)
		return ms_error("out of memory");
	if (!(b->pycode = ms_pycode_new()))
		return -1;
	if (!(b->labels = ms_py_labels_new()) || !(b->snap_labels = ms_py_labels_new()))
		return -1;
	return 0;
}

static int on_end(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	struct unwind_bufs *b = ctx;

	/* After a failure, only what was written goes out. */
	if (how == MS_STAGE_FAILED)
		return 0;
	ms_unwinder_end(b->u);
	if (b->py_pending) {
		py_drop(b);
	}
	/* The GIL runs still open end with the stream. */
	while (b->labels && ms_py_labels_next_open(b->labels, &b->span))
		if (ms_label_span_pack(io->writer, &b->span) < 0)
			return -1;
	while (b->snap_labels && ms_py_labels_next_open(b->snap_labels, &b->span))
		if (ms_label_span_pack(io->writer, &b->span) < 0)
			return -1;
	if (b->labels)
		label_stats(b);
	{
		struct ms_unwind_stats *st = ms_unwinder_counters(b->u);
		const struct ms_pycode_stats *ps = ms_pycode_stats(b->pycode);

		st->py_keys = ps->keys;
		st->py_unknown_frames = ps->unknown_frames;
		st->py_bad_lines = ps->bad_lines;
		if (ps->bad_lines)
			ms_problems_add(ms_unwinder_problems(b->u), "python-bad-lines",
					"%" PRIu64 " Python frames' instructions lie past or outside "
					"their code's locations table: shown at line 0",
					ps->bad_lines);
	}
	/* After bad input the policy is not settled: no stack follows. */
	if (how != MS_STAGE_BAD_INPUT && !b->settled && settle(b->u, io->writer, b, NULL) < 0)
		return -1;
	return ms_problems_write(io->writer, ms_unwinder_problems(b->u));
}

static const struct ms_stage_desc unwind_stage = {
	.name = "ms-unwind",
	.version = PACKAGE_VERSION,
	.header = on_header,
	.on = {
		[MS_REC_SAMPLE] = on_sample,
		[MS_REC_SWITCH_OUT] = on_switch_out,
		[MS_REC_ATTR] = on_attr,
		[MS_REC_MMAP] = on_mmap,
		[MS_REC_COMM] = on_comm,
		[MS_REC_FORK] = on_task,
		[MS_REC_EXIT] = on_task,
		[MS_REC_INFO] = on_info,
		[MS_REC_VDSO] = on_vdso,
		[MS_REC_STACK_FILE] = on_stack_file,
		[MS_REC_JIT_FUNC] = on_jit_func,
		[MS_REC_JIT_READ] = on_jit_read,
		[MS_REC_JIT_OBJECT] = on_jit_object,
		[MS_REC_PY_CODE] = on_py_code,
		[MS_REC_PY_STACK] = on_py_stack,
		[MS_REC_PY_SNAPSHOT] = on_py_snapshot,
	},
	.end = on_end,
};

int ms_unwind_stage(int in_fd, const char *in_name, int out_fd,
		    const struct ms_unwind_options *opts, struct ms_unwind_stats *stats)
{
	struct ms_stage_desc st = unwind_stage;
	struct unwind_bufs *b;
	int code;

	if (!(b = malloc(sizeof(*b)))) {
		ms_error("out of memory");
		return MS_EXIT_ERROR;
	}
	b->u = NULL;
	b->opts = opts;
	b->settled = b->attr_seen = b->attr_stacks = false;
	b->stack_map = (struct ms_stack_map){ .guard = -1 };
	b->in_name = in_name;
	b->reader = NULL;
	b->stacks = NULL;
	b->py_engine = b->py_pending = false;
	b->pycode = NULL;
	b->unknown_ids = NULL;
	b->alloc_unknown_ids = 0;
	b->labels = b->snap_labels = NULL;
	b->labels_full_said = false;
	st.ctx = b;
	code = ms_stage_run(&st, in_fd, in_name, out_fd, "stdout");
	if (stats && b->u)
		*stats = *ms_unwinder_stats(b->u);
	ms_unwinder_free(b->u);
	ms_stack_map_close(&b->stack_map);
	ms_stacktab_free(b->stacks);
	ms_pycode_free(b->pycode);
	ms_py_labels_free(b->labels);
	ms_py_labels_free(b->snap_labels);
	free(b->unknown_ids);
	free(b);
	return code;
}
