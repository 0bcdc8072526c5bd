/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python walker of sampler.bpf.c: one thread's CPython frames, as
 * sampler.h states the rules (thread state from py_threads or py_find,
 * frames innermost first, C-stack frames skipped and marking ENTRY, the
 * GIL's state).
 *
 * ms_py_walk is a global function, so the verifier checks it once, apart
 * from its caller. Its loops are bounded by constants; what changes from
 * one iteration to the next lives in the per-CPU scratch (map memory), so
 * the verifier sees the same state at each loop head and prunes it.
 * Every read of the target is a bpf_probe_read_user of a fixed window
 * (pywindow.h): one per thread state looked at, one per frame, one for
 * the code's stamp, a few for the GIL.
 */
#ifndef MS_BPF_PYTHON_BPF_H
#define MS_BPF_PYTHON_BPF_H

#include "sampler.h"
#include "pywindow.h"

/* The record as written: header, head, frames. */
struct ms_py_record {
	struct ms_bpf_header h;
	struct ms_bpf_py_head head;
	struct ms_bpf_py_frame frames[MS_BPF_PY_FRAMES_MAX];
};
_Static_assert(sizeof(struct ms_py_record) <= MS_BPF_RECORD_MAX,
	       "a full Python record must fit MS_BPF_RECORD_MAX");

/* Per-CPU scratch: the record, the windows read, the walk's counters. */
struct ms_py_scratch {
	struct ms_py_record r;
	__u8 ts[MS_BPF_PY_TS_WINDOW];
	__u8 fr[MS_BPF_PY_FRAME_WINDOW];
	__u8 gil[MS_BPF_PY_GIL_WINDOW];
	/* py_find's */
	__u64 found, found_interp, cur, cur_interp, interp;
	__u32 seen, matches, interps, pad;
};

static __always_inline int py_rd(void *dst, __u32 size, __u64 src)
{
	return bpf_probe_read_user(dst, size, (const void *)src);
}

static __always_inline int py_rd64(__u64 src, __u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)src);
}

/* The u64 at off of a window of size bytes: 0, or -1 when it is outside. */
#define PY_WIN64(w, off, v) \
	((off) > sizeof(w) - 8 ? -1 : (*(v) = *(const __u64 *)((w) + (off)), 0))

/*
 * py_find: look through every interpreter's thread states, at most
 * find_bound of them, for the one whose native_thread_id is ns_tid.
 * Returns MS_BPF_PY_COMPLETE with *ts and *interp, or the status.
 */
static __always_inline __u32 py_find(struct ms_py_scratch *s, const struct ms_bpf_py_layout *l,
				     __u32 ns_tid, __u64 *ts, __u64 *interp)
{
	__u32 bound = l->find_bound;
	__u64 v;

	if (bound > MS_BPF_PY_FIND_MAX)
		bound = MS_BPF_PY_FIND_MAX;
	s->found = s->found_interp = s->cur = s->cur_interp = 0;
	s->seen = s->matches = s->interps = 0;
	if (py_rd64(l->runtime + l->rt_interp_head, &s->interp))
		return MS_BPF_PY_UNREADABLE;
	for (__u32 i = 0; i < MS_BPF_PY_FIND_MAX + MS_BPF_PY_INTERPS_MAX + 1; i++) {
		if (!s->cur) {
			/* the next interpreter's states */
			if (!s->interp)
				goto searched;
			if (s->interps >= MS_BPF_PY_INTERPS_MAX)
				return MS_BPF_PY_SEARCH_BOUND;
			s->interps++;
			s->cur_interp = s->interp;
			if (py_rd64(s->cur_interp + l->is_threads_head, &s->cur) ||
			    py_rd64(s->cur_interp + l->is_next, &s->interp))
				return MS_BPF_PY_UNREADABLE;
			continue;
		}
		if (s->seen >= bound)
			return MS_BPF_PY_SEARCH_BOUND;
		s->seen++;
		if (py_rd(s->ts, sizeof(s->ts), s->cur))
			return MS_BPF_PY_UNREADABLE;
		if (PY_WIN64(s->ts, l->ts_native_tid, &v))
			return MS_BPF_PY_UNREADABLE;
		if (v == ns_tid) {
			s->matches++;
			s->found = s->cur;
			s->found_interp = s->cur_interp;
		}
		if (PY_WIN64(s->ts, l->ts_next, &v))
			return MS_BPF_PY_UNREADABLE;
		s->cur = v;
	}
	return MS_BPF_PY_SEARCH_BOUND;
searched:
	if (s->matches == 0)
		return MS_BPF_PY_NO_THREAD;
	if (s->matches > 1)
		return MS_BPF_PY_AMBIGUOUS;
	*ts = s->found;
	*interp = s->found_interp;
	/* the window of the state found, for its frame */
	if (py_rd(s->ts, sizeof(s->ts), *ts))
		return MS_BPF_PY_UNREADABLE;
	return MS_BPF_PY_COMPLETE;
}

/* Whether thread state ts holds the GIL; interp is its interpreter, or 0 when unknown. */
static __always_inline __u32 py_gil(struct ms_py_scratch *s, const struct ms_bpf_py_layout *l,
				    __u64 ts, __u64 interp)
{
	__u64 gil = 0, next, holder;
	__u32 locked;

	if (l->gil_in_runtime >= 0) {
		gil = l->runtime + (__u32)l->gil_in_runtime;
	} else if (l->gil_ptr_in_interp >= 0) {
		if (!interp) {
			/* one interpreter: it is the thread's */
			if (py_rd64(l->runtime + l->rt_interp_head, &interp) || !interp ||
			    py_rd64(interp + l->is_next, &next) || next)
				return MS_BPF_PY_GIL_UNKNOWN;
		}
		if (py_rd64(interp + (__u32)l->gil_ptr_in_interp, &gil))
			return MS_BPF_PY_GIL_UNKNOWN;
	}
	if (!gil || py_rd(s->gil, sizeof(s->gil), gil))
		return MS_BPF_PY_GIL_UNKNOWN;
	if (l->gil_locked > (int)sizeof(s->gil) - 4 || l->gil_locked < 0 ||
	    PY_WIN64(s->gil, l->gil_holder, &holder))
		return MS_BPF_PY_GIL_UNKNOWN;
	locked = *(const __u32 *)(s->gil + l->gil_locked);
	return locked && holder == ts ? MS_BPF_PY_GIL_HELD : MS_BPF_PY_GIL_RELEASED;
}

/*
 * Walk the thread whose id in its process's namespace is ns_tid, starting
 * from hint (py_threads' state for it, or 0), into s->r.head and
 * s->r.frames. Returns the frames written.
 */
__noinline int ms_py_walk(struct ms_py_scratch *s, const struct ms_bpf_py_layout *l, __u64 hint,
			  __u32 ns_tid)
{
	struct ms_bpf_py_head *hd;
	__u64 ts = 0, interp = 0, frame, v, code, stamp;
	__u32 st, n;

	if (!s || !l)
		return 0;
	hd = &s->r.head;
	hd->status = MS_BPF_PY_COMPLETE;
	hd->n_frames = 0;
	hd->tstate = 0;
	hd->gil = MS_BPF_PY_GIL_UNKNOWN;
	hd->pad = 0;

	if (hint && !py_rd(s->ts, sizeof(s->ts), hint) &&
	    !PY_WIN64(s->ts, l->ts_native_tid, &v) && v == ns_tid)
		ts = hint;
	if (!ts) {
		st = py_find(s, l, ns_tid, &ts, &interp);
		if (st != MS_BPF_PY_COMPLETE) {
			hd->status = st;
			return 0;
		}
	}
	hd->tstate = ts;
	if (PY_WIN64(s->ts, l->ts_frame, &frame)) {
		hd->status = MS_BPF_PY_UNREADABLE;
		return 0;
	}
	hd->gil = py_gil(s, l, ts, interp);
	if (l->cf_current_frame >= 0 && frame &&
	    py_rd64(frame + (__u32)l->cf_current_frame, &frame)) {
		hd->status = MS_BPF_PY_UNREADABLE;
		return 0;
	}

	/* C-stack frames are not written: at most one beside each that is. */
	for (__u32 i = 0; i < 2 * MS_BPF_PY_FRAMES_MAX; i++) {
		if (!frame)
			return hd->n_frames;
		if (py_rd(s->fr, sizeof(s->fr), frame) ||
		    l->fr_owner > sizeof(s->fr) - 1) {
			hd->status = MS_BPF_PY_UNREADABLE;
			return hd->n_frames;
		}
		n = hd->n_frames;
		if (l->owner_cstack >= 0 && s->fr[l->fr_owner] == (__u8)l->owner_cstack) {
			/* the shim an activation pushes: the frame before it was its first */
			if (n > 0 && n <= MS_BPF_PY_FRAMES_MAX)
				s->r.frames[n - 1].flags |= MS_BPF_PY_ENTRY;
		} else {
			if (n >= MS_BPF_PY_FRAMES_MAX) {
				hd->status = MS_BPF_PY_TOO_DEEP;
				return n;
			}
			if (PY_WIN64(s->fr, l->fr_code, &code) ||
			    PY_WIN64(s->fr, l->fr_instr, &v)) {
				hd->status = MS_BPF_PY_UNREADABLE;
				return n;
			}
			if (!code || py_rd64(code + l->co_linetable, &stamp))
				stamp = 0;
			s->r.frames[n].code = code;
			s->r.frames[n].stamp = stamp;
			s->r.frames[n].instr = v;
			s->r.frames[n].flags = 0;
			s->r.frames[n].pad = 0;
			if (l->fr_is_entry >= 0 && l->fr_is_entry < (int)sizeof(s->fr) &&
			    s->fr[l->fr_is_entry])
				s->r.frames[n].flags = MS_BPF_PY_ENTRY;
			hd->n_frames = n + 1;
		}
		if (PY_WIN64(s->fr, l->fr_previous, &frame)) {
			hd->status = MS_BPF_PY_UNREADABLE;
			return hd->n_frames;
		}
	}
	hd->status = MS_BPF_PY_TOO_DEEP;
	return hd->n_frames;
}

#endif
