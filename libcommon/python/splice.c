/* Python frames spliced into a native stack (splice.h). */
#include "python/splice.h"

#include <string.h>

#include "bpf/sampler.h"

bool ms_py_splice_status_usable(uint32_t status)
{
	/* The other statuses read no thread: frames with them would be no thread's. */
	return status == MS_BPF_PY_COMPLETE || status == MS_BPF_PY_TOO_DEEP ||
	       status == MS_BPF_PY_UNREADABLE;
}

/* Append a frame to out while there is room; past it the stack is cut. */
static void put(struct ms_stack_frame *out, uint32_t cap, struct ms_py_splice_out *res,
		const struct ms_stack_frame *f)
{
	if (res->n < cap)
		out[res->n++] = *f;
	else
		res->cut = true;
}

enum ms_py_splice_what ms_py_splice(const struct ms_py_splice_in *in, struct ms_stack_frame *out,
				    uint32_t cap, struct ms_py_splice_out *res)
{
	uint32_t i, k, a = 0, s = 0, n_py = 0, seg_end, py_pos;
	bool usable = in->have_walk && ms_py_splice_status_usable(in->status);
	bool complete = usable && in->status == MS_BPF_PY_COMPLETE, open_tail;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < in->n_native; i++)
		a += in->activation[i];
	if (usable)
		n_py = in->n_py;
	for (i = 0; i < n_py; i++)
		s += in->py[i].entry;
	/* Frames after the last entry: a segment whose start the walk did not reach. */
	open_tail = n_py && !in->py[n_py - 1].entry;
	s += open_tail;
	res->activations = a;
	res->segments = s;
	res->reason = in->native_reason;

	if (!n_py) {
		/* Nothing to place: unknown frames only where the loop ran and an engine walked. */
		res->what = a && (in->engine || in->have_walk) ? MS_PY_SPLICE_UNKNOWN :
								 MS_PY_SPLICE_NATIVE;
		if (res->what == MS_PY_SPLICE_UNKNOWN)
			res->reason = MS_END_INTERPRETED_UNKNOWN;
		for (i = 0; i < in->n_native; i++)
			put(out, cap, res, &in->native[i]);
	} else if (!a || s > a || (complete && (s != a || open_tail))) {
		res->what = MS_PY_SPLICE_UNPLACED;
		res->reason = MS_END_INTERPRETED_UNPLACED;
		for (i = 0; i < in->n_native; i++)
			put(out, cap, res, &in->native[i]);
		for (i = 0; i < n_py; i++)
			put(out, cap, res, &in->py[i].frame);
	} else {
		res->what = complete ? MS_PY_SPLICE_PLACED : MS_PY_SPLICE_TRUNCATED;
		if (!complete)
			res->reason = MS_END_INTERPRETED_TRUNCATED;
		/* Segment k (frames [py_pos, seg_end]) just before activation k. */
		py_pos = 0;
		for (i = 0, k = 0; i < in->n_native; i++) {
			if (in->activation[i] && k < s) {
				for (seg_end = py_pos; seg_end < n_py && !in->py[seg_end].entry;
				     seg_end++)
					;
				for (; py_pos <= seg_end && py_pos < n_py; py_pos++)
					put(out, cap, res, &in->py[py_pos].frame);
				k++;
			}
			put(out, cap, res, &in->native[i]);
		}
	}
	if (res->cut)
		res->reason = MS_END_DEPTH;
	return res->what;
}
