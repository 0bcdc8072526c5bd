/* The ms-unwind stage: the unwinder between a stream reader and a writer. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stackfile.h"
#include "stream/stream.h"
#include "unwind/stacktab.h"
#include "unwind/unwind.h"
#include "util/error.h"

/* Per-stage buffers, allocated once: a sample and a stack are large. */
struct unwind_bufs {
	struct ms_sample sample;
	/* The next sample, framed ahead (ms_reader_peek_sample()): two, in turn. */
	struct ms_sample ahead[2];
	struct ms_stack stack;
	struct ms_mmap mmap;
	struct ms_comm comm;
	struct ms_task task;
	struct ms_module module;
	struct ms_attr attr;
	struct ms_stack_file stack_file;
	/* The file samples' stack copies are in, when ms-decode referred to them. */
	struct ms_stack_map stack_map;
	const char *in_name;
	struct ms_reader *reader;
	/* Each stack's frames go out once (STACK_DEF), then samples refer to it. */
	struct ms_stacktab *stacks;
	struct ms_stack_ref ref;
};

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

/* The stack as a STACK_REF to its STACK_DEF, or whole when the table is full. */
static int write_stack(struct ms_unwinder *u, struct ms_writer *w, struct unwind_bufs *b)
{
	const struct ms_stack *s = &b->stack;
	uint32_t id;

	switch (ms_stacktab_intern(b->stacks, s, &id)) {
	case MS_STACKTAB_ADDED:
		if (ms_stack_def_pack(w, id, s) < 0)
			return -1;
		break;
	case MS_STACKTAB_FULL:
		ms_problems_add(ms_unwinder_problems(u), "stack-table-full",
				"the table of unique stacks is full after %u stacks: a stack "
				"not in it is written whole", ms_stacktab_count(b->stacks));
		return ms_stack_pack(w, s);
	default:
		break;
	}
	/* Later samples with this stack skip its frames (ms_unwinder_sample_tagged()). */
	ms_unwinder_tag(u, id);
	return write_ref(w, b, id);
}

/*
 * The stack-copy policy as the stage settles it: at the first sample (or
 * at the end), written once as INFO "unwind-policy" before any stack.
 */
struct policy {
	const struct ms_unwind_options *opts;
	bool settled;
	bool attr_seen, attr_stacks;	/* an attr asks for user registers and stack */
};

static int settle(struct ms_unwinder *u, struct ms_writer *w, struct policy *p,
		  const struct ms_sample *first)
{
	const struct ms_unwind_method *m = p->opts ? p->opts->method : NULL;
	int policy = p->opts ? p->opts->policy : MS_UNWIND_AUTO;
	struct ms_info info = { .key = { "unwind-policy", 13 }, .is_text = true };
	bool stacks;

	p->settled = true;
	if (!m) {
		if (policy == MS_UNWIND_AUTO) {
			stacks = p->attr_seen ? p->attr_stacks :
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

static int on_sample(struct ms_unwinder *u, struct ms_writer *w, const struct ms_record *rec,
		     struct unwind_bufs *b, struct policy *p)
{
	/* (Most samples were unpacked as the reader framed them.) */
	struct ms_sample *s = ms_reader_sample(b->reader, rec);
	uint32_t id;
	int r;

	if (!s) {
		if (ms_sample_unpack(rec, &b->sample) < 0)
			return -1;
		s = &b->sample;
	}
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
	if (!p->settled && settle(u, w, p, s) < 0)
		return -1;
	prefetch_next(u, b, s);
	/* A stack numbered before: its id, without its frames. */
	if ((r = ms_unwinder_sample_tagged(u, s, &b->stack, &id)) < 0)
		return -1;
	while (ms_unwinder_next_module(u, &b->module))
		if (ms_module_pack(w, &b->module) < 0)
			return -1;
	return r ? write_ref(w, b, id) : write_stack(u, w, b);
}

static int on_record(struct ms_unwinder *u, struct ms_writer *w, const struct ms_record *rec,
		     struct unwind_bufs *b, struct policy *p)
{
	int r = 0;

	switch (rec->kind) {
	case MS_REC_SAMPLE:
		return on_sample(u, w, rec, b, p);
	case MS_REC_ATTR:
		r = ms_attr_unpack(rec, &b->attr);
		if (!r) {
			p->attr_seen = true;
			p->attr_stacks |= b->attr.sample_stack_user && b->attr.sample_regs_user;
		}
		break;
	case MS_REC_MMAP:
		r = ms_mmap_unpack(rec, &b->mmap) < 0 ? -1 : ms_unwinder_mmap(u, &b->mmap);
		break;
	case MS_REC_COMM:
		r = ms_comm_unpack(rec, &b->comm) < 0 ? -1 : ms_unwinder_comm(u, &b->comm);
		break;
	case MS_REC_FORK:
		r = ms_task_unpack(rec, &b->task) < 0 ? -1 : ms_unwinder_fork(u, &b->task);
		break;
	case MS_REC_EXIT:
		r = ms_task_unpack(rec, &b->task) < 0 ? -1 : ms_unwinder_exit(u, &b->task);
		break;
	case MS_REC_VDSO: {
		/* kept for the vdso's CFI, and passed on for symbolization */
		struct ms_vdso v;

		r = ms_vdso_unpack(rec, &v) < 0 ? -1 : ms_unwinder_vdso(u, &v);
		break;
	}
	case MS_REC_STACK_FILE:
		/* consumed: after this stage no record refers to stack bytes */
		if (ms_stack_file_unpack(rec, &b->stack_file) < 0)
			return -1;
		return ms_stack_map_open(&b->stack_map, &b->stack_file, b->in_name);
	default:
		break;
	}
	if (r < 0)
		return -1;
	return ms_writer_copy(w, rec->bytes, rec->len);
}

int ms_unwind_stage(int in_fd, const char *in_name, int out_fd,
		    const struct ms_unwind_options *opts, struct ms_unwind_stats *stats)
{
	struct ms_reader *r = NULL;
	struct ms_writer *w = NULL;
	struct ms_unwinder *u = NULL;
	struct unwind_bufs *b = NULL;
	struct ms_record rec;
	struct policy pol = { .opts = opts };
	int code = MS_EXIT_ERROR, rr;

	if (!(r = ms_reader_open(in_fd, in_name)))
		goto out;
	/* SAMPLE records are only unpacked: no objects. */
	ms_reader_defer_objects(r, true);
	if (!(w = ms_writer_open(out_fd, "stdout", 0)) || !(u = ms_unwinder_new(opts)))
		goto out;
	if (!(b = malloc(sizeof(*b)))) {
		ms_error("out of memory");
		goto out;
	}
	b->stack_map = (struct ms_stack_map){ 0 };
	b->in_name = in_name;
	b->reader = r;
	ms_reader_unpack_samples(r, &b->sample);
	b->stacks = ms_stacktab_new(MS_STACKTAB_STACKS_MAX, MS_STACKTAB_FRAMES_MAX);
	if (!b->stacks) {
		ms_error("out of memory");
		goto out;
	}
	ms_reader_flush_before_read(r, w);
	if (ms_writer_header(w, ms_reader_header(r), "ms-unwind", PACKAGE_VERSION) < 0)
		goto out;
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (on_record(u, w, &rec, b, &pol) < 0)
			goto out;
	}
	if (rr != MS_READ_ERROR && !pol.settled && settle(u, w, &pol, NULL) < 0)
		goto out;
	if (ms_problems_write(w, ms_unwinder_problems(u)) < 0)
		goto out;
	if (rr == MS_READ_END) {
		if (ms_writer_trailer(w, ms_reader_trailer_complete(r)) < 0)
			goto out;
		code = MS_EXIT_OK;
	} else {
		/* What was processed goes out without a trailer: downstream sees the cut too. */
		if (rr == MS_READ_TRUNCATED) {
			ms_error("output ends without a trailer after %" PRIu64 " records",
				 ms_writer_records(w));
			code = MS_EXIT_TRUNCATED;
		}
	}
out:
	if (w) {
		/* Even after bad input, what was processed goes out. */
		if (ms_writer_flush(w) < 0 && code == MS_EXIT_OK)
			code = MS_EXIT_ERROR;
		if (ms_writer_broken_pipe(w))
			code = MS_EXIT_PIPE;
		ms_writer_close(w);
	}
	if (stats && u)
		*stats = *ms_unwinder_stats(u);
	ms_unwinder_free(u);
	ms_reader_free(r);
	if (b) {
		ms_stack_map_close(&b->stack_map);
		ms_stacktab_free(b->stacks);
	}
	free(b);
	return code;
}
