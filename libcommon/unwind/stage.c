/* The ms-unwind stage: the unwinder between a stream reader and a writer. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream.h"
#include "unwind/unwind.h"
#include "util/error.h"

/* Per-stage buffers, allocated once: a sample and a stack are large. */
struct unwind_bufs {
	struct ms_sample sample;
	struct ms_stack stack;
	struct ms_mmap mmap;
	struct ms_comm comm;
	struct ms_task task;
	struct ms_module module;
	struct ms_attr attr;
};

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

static int on_sample(struct ms_unwinder *u, struct ms_writer *w, const struct ms_record *rec,
		     struct unwind_bufs *b, struct policy *p)
{
	if (ms_sample_unpack(rec, &b->sample) < 0 ||
	    (!p->settled && settle(u, w, p, &b->sample) < 0) ||
	    ms_unwinder_sample(u, &b->sample, &b->stack) < 0)
		return -1;
	while (ms_unwinder_next_module(u, &b->module))
		if (ms_module_pack(w, &b->module) < 0)
			return -1;
	return ms_stack_pack(w, &b->stack);
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
	free(b);
	return code;
}
