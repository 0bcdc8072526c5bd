/*
 * The snapshot engine's pure parts (pysnapshot.h): a round's bounds, the
 * GIL's value for a thread, and a walked thread as a PY_SNAPSHOT record.
 */
#include <stdio.h>
#include <string.h>

#include "bpf/sampler.h"
#include "python/pysnapshot.h"

_Static_assert(MS_PY_WALK_FRAMES <= MS_PY_SNAPSHOT_FRAMES_MAX,
	       "a complete walk's frames must fit a PY_SNAPSHOT record");
_Static_assert(MS_PY_FRAME_ENTRY == MS_BPF_PY_ENTRY,
	       "the light walker marks ENTRY as the BPF walker does");

void ms_py_snap_bounds_init(struct ms_py_snap_bounds *b, uint32_t interval_ms)
{
	memset(b, 0, sizeof(*b));
	b->interval_ns = (uint64_t)interval_ms * 1000000ull;
}

bool ms_py_snap_round_begin(struct ms_py_snap_bounds *b, uint64_t now)
{
	bool late = b->last_ns && now >= b->last_ns && now - b->last_ns >= 2 * b->interval_ns;

	b->last_ns = now;
	b->deadline_ns = now + b->interval_ns / MS_PY_SNAP_ROUND_SHARE;
	b->bytes_left = MS_PY_SNAP_ROUND_BYTES;
	b->threads_left = MS_PY_SNAP_THREADS_MAX;
	b->threads_hit = b->bytes_hit = b->time_hit = false;
	return late;
}

bool ms_py_snap_admit(struct ms_py_snap_bounds *b, uint64_t now)
{
	if (!b->bytes_left) {
		b->bytes_hit = true;
		return false;
	}
	if (!b->threads_left) {
		b->threads_hit = true;
		return false;
	}
	if (now > b->deadline_ns) {
		b->time_hit = true;
		return false;
	}
	b->threads_left--;
	return true;
}

bool ms_py_snap_spend(struct ms_py_snap_bounds *b, uint64_t bytes)
{
	b->bytes_left = bytes < b->bytes_left ? b->bytes_left - bytes : 0;
	if (!b->bytes_left)
		b->bytes_hit = true;
	return b->bytes_left > 0;
}

uint32_t ms_py_snap_gil(bool known, bool locked, uint64_t holder, uint64_t tstate)
{
	if (!known)
		return MS_BPF_PY_GIL_UNKNOWN;
	return locked && holder == tstate ? MS_BPF_PY_GIL_HELD : MS_BPF_PY_GIL_RELEASED;
}

void ms_py_snapshot_from_walk(const struct ms_py_thread *t, uint32_t pid, uint32_t tid,
			      uint64_t round, uint64_t time, uint32_t gil,
			      struct ms_py_snapshot *out, char *why, size_t why_len)
{
	out->pid = pid;
	out->tid = tid;
	out->time = time;
	out->round = round;
	out->gil = gil;
	out->tstate = t->tstate;
	out->n_words = 0;
	out->reason = (struct ms_str){ "", 0 };
	if (t->status == MS_PY_WALK_COMPLETE && t->n_frames <= MS_PY_SNAPSHOT_FRAMES_MAX) {
		out->status = MS_PY_SNAPSHOT_COMPLETE;
		for (uint32_t i = 0; i < t->n_frames; i++) {
			const struct ms_py_frame *f = &t->frames[i];
			uint64_t *w = out->words + 4 * i;

			w[0] = f->code;
			w[1] = f->stamp;
			w[2] = f->instr;
			w[3] = f->flags;
		}
		out->n_words = 4 * t->n_frames;
		return;
	}
	out->status = MS_PY_SNAPSHOT_CHANGED;
	snprintf(why, why_len, "%s: %s", ms_py_walk_status_name(t->status),
		 t->reason[0] ? t->reason : "no reason given");
	out->reason = (struct ms_str){ why, (uint32_t)strlen(why) };
}
