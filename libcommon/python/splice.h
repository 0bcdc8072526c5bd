/*
 * Splicing a sample's Python frames into its native stack (pure: no
 * state, no allocation). The BPF walker (bpf/sampler.h) reads a thread's
 * interpreted frames innermost first; each activation of the
 * interpreter's loop (_PyEval_EvalFrameDefault) runs one segment of them,
 * whose last frame the walker marks MS_BPF_PY_ENTRY. Segment k goes just
 * inside (before, innermost first) activation k of the native stack,
 * counting both from the innermost: the C code a Python function called
 * stays where it was called, and the loop that ran the function stays
 * outside it.
 *
 * The rules (stream/records.h, enum ms_stack_end):
 *  - a stack without activations and without Python frames never
 *    changes (a library's worker thread runs no Python);
 *  - activations but no usable Python frames (no walker record, a status
 *    that gives none, a walk that read nothing): MS_END_INTERPRETED_UNKNOWN,
 *    but only when an engine ran (without one nothing changes);
 *  - a complete walk whose segments equal the activations in number:
 *    placed, the native end reason stays;
 *  - a walk that stopped early (too deep, unreadable) with no more
 *    segments than activations: its segments placed on the innermost
 *    activations, MS_END_INTERPRETED_TRUNCATED;
 *  - otherwise (the counts differ, a complete walk whose outermost frame
 *    ends no segment, Python frames and no activation): every Python
 *    frame follows (is outer of) every native one,
 *    MS_END_INTERPRETED_UNPLACED.
 * A Python reason replaces the native one: the native frames are all
 * kept. A result longer than the caller's room is cut at its outer end
 * and ends MS_END_DEPTH.
 */
#ifndef MS_PYTHON_SPLICE_H
#define MS_PYTHON_SPLICE_H
#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

/* A Python frame as the stack will hold it, and whether it ends its segment. */
struct ms_py_splice_frame {
	struct ms_stack_frame frame;	/* the interpreted module's, MS_FRAME_NO_ADDRESS */
	bool entry;			/* MS_BPF_PY_ENTRY */
};

struct ms_py_splice_in {
	const struct ms_stack_frame *native;	/* innermost first */
	const bool *activation;			/* per native frame: runs the loop */
	uint32_t n_native;
	uint32_t native_reason;			/* enum ms_stack_end */
	bool engine;				/* a Python engine ran (INFO "python") */
	bool have_walk;				/* a walker record came with the sample */
	uint32_t status;			/* its enum ms_bpf_py_status */
	const struct ms_py_splice_frame *py;	/* innermost first */
	uint32_t n_py;
};

/* What the splice did, for the caller's counters. */
enum ms_py_splice_what {
	MS_PY_SPLICE_NATIVE = 0,	/* nothing to do: the native stack as it was */
	MS_PY_SPLICE_PLACED,		/* every segment on its activation */
	MS_PY_SPLICE_TRUNCATED,		/* an early stop's segments on the innermost ones */
	MS_PY_SPLICE_UNPLACED,		/* the Python frames after the native ones */
	MS_PY_SPLICE_UNKNOWN,		/* activations, no Python frames */
	MS_PY_SPLICE_WHAT_COUNT,
};

struct ms_py_splice_out {
	uint32_t n;			/* frames written */
	uint32_t reason;		/* the stack's end */
	enum ms_py_splice_what what;
	uint32_t activations, segments;
	bool cut;			/* out of room: cut, reason MS_END_DEPTH */
};

/*
 * Splice in into out[0, cap) (out must not overlap in->native or in->py).
 * Returns what it did, also in res->what.
 */
enum ms_py_splice_what ms_py_splice(const struct ms_py_splice_in *in, struct ms_stack_frame *out,
				    uint32_t cap, struct ms_py_splice_out *res);

/* Whether a walk's status gives frames that may be placed. */
bool ms_py_splice_status_usable(uint32_t status);

#endif
