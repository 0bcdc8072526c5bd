/*
 * Walking a live CPython process's frames (walk.h). Every read is checked
 * and counted against the walk's budget; every object is proved by its
 * ob_type before its fields are believed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "python/walk.h"
#include "python/pymem.h"
#include "python/pyobj.h"
#include "python/pyparse.h"

/* UTF-8 of one name at most (4 bytes a character). */
#define STR_BYTES (4 * MS_PY_STR_MAX + 1)
/* Strings of one thread: two a frame. */
#define STRINGS_BYTES ((size_t)MS_PY_WALK_FRAMES * 2 * STR_BYTES)
#define HDR_MAX MS_PY_OBJ_HDR_MAX
/* Frames one walk visits: its frames and the C-stack frames between them. */
#define VISITS_MAX (2 * MS_PY_WALK_FRAMES + 2)

struct ms_py_walker {
	pid_t pid;
	struct ms_py_layout l;
	bool light;				/* ms_py_walker_light() */
	bool spent;				/* the last walk stopped at its budget */
	uint64_t budget;			/* bytes a walk may read */
	uint32_t ts_read, fr_read, co_read;	/* bytes of each header read */
	uint32_t co_light_read;			/* of a code object, light: type and stamp */
	/*
	 * Light: each frame the walk visited, and the span of its code and
	 * previous fields as read, to read again after the walk.
	 */
	uint32_t link_lo, link_len;		/* the span: offset in the frame, bytes */
	uint32_t n_visits;
	uint64_t *visit_at;			/* VISITS_MAX frame addresses */
	uint8_t *visit_seen, *visit_now;	/* VISITS_MAX spans each */
	struct ms_py_reader r;			/* its bytes: read in this walk */
	struct ms_py_thread t;
	uint32_t strings_used;
	uint8_t *scratch;			/* a string's data, a locations table */
};

const char *ms_py_walk_status_name(enum ms_py_walk_status s)
{
	switch (s) {
	case MS_PY_WALK_COMPLETE: return "complete";
	case MS_PY_WALK_TOO_DEEP: return "too-deep";
	case MS_PY_WALK_UNREADABLE: return "unreadable";
	case MS_PY_WALK_INVALID: return "invalid";
	case MS_PY_WALK_BUDGET: return "budget";
	case MS_PY_WALK_CHANGED: return "changed";
	}
	return "?";
}

int ms_py_walker_set(struct ms_py_walker *w, pid_t pid, const struct ms_py_layout *l)
{
	const struct ms_py_offsets *o = &l->off;
	if (ms_py_offsets_check(o))
		return -1;
	uint32_t ts[] = { o->ts_next, o->ts_native_tid, o->ts_frame };
	uint32_t fr[] = { o->fr_previous, o->fr_code, o->fr_instr, o->fr_owner };
	uint32_t co[] = { o->ob_type, o->co_filename, o->co_name, o->co_qualname,
			  o->co_firstlineno, o->co_linetable };
	uint32_t co_light[] = { o->ob_type, o->co_linetable };
	uint32_t fr_read = ms_py_fields_end(fr, 4, 8);
	/* 3.11's is_entry, a byte */
	if (o->fr_is_entry >= 0 && (uint32_t)o->fr_is_entry + 1 > fr_read)
		fr_read = (uint32_t)o->fr_is_entry + 1;
	if (ms_py_fields_end(ts, 3, 8) > HDR_MAX || fr_read > HDR_MAX ||
	    ms_py_fields_end(co, 6, 8) > HDR_MAX || o->uni_ascii_size > HDR_MAX ||
	    o->bytes_sval > HDR_MAX)
		return -1;
	w->pid = pid;
	w->l = *l;
	w->ts_read = ms_py_fields_end(ts, 3, 8);
	w->fr_read = fr_read;
	w->co_read = ms_py_fields_end(co, 6, 8);
	w->co_light_read = ms_py_fields_end(co_light, 2, 8);
	w->link_lo = o->fr_code < o->fr_previous ? o->fr_code : o->fr_previous;
	w->link_len = (o->fr_code > o->fr_previous ? o->fr_code : o->fr_previous) + 8 - w->link_lo;
	/* a swapped reader stays */
	w->r.pid = pid;
	w->r.l = &w->l;
	w->r.bytes = 0;
	return 0;
}

struct ms_py_walker *ms_py_walker_new(pid_t pid, const struct ms_py_layout *l)
{
	struct ms_py_walker *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->budget = MS_PY_WALK_BYTES;
	w->t.strings = malloc(STRINGS_BYTES);
	w->scratch = malloc(MS_PY_LINETABLE_MAX > 4 * MS_PY_STR_MAX ? MS_PY_LINETABLE_MAX : 4 * MS_PY_STR_MAX);
	w->r = (struct ms_py_reader){ .budget = MS_PY_WALK_BYTES, .scratch = w->scratch };
	w->visit_at = malloc(VISITS_MAX * sizeof(*w->visit_at));
	w->visit_seen = malloc((size_t)VISITS_MAX * HDR_MAX);
	w->visit_now = malloc((size_t)VISITS_MAX * HDR_MAX);
	if (!w->t.strings || !w->scratch || !w->visit_at || !w->visit_seen || !w->visit_now ||
	    ms_py_walker_set(w, pid, l) < 0) {
		ms_py_walker_free(w);
		return NULL;
	}
	return w;
}

void ms_py_walker_light(struct ms_py_walker *w, bool light)
{
	w->light = light;
}

void ms_py_walker_read_with(struct ms_py_walker *w, ms_py_read_fn fn, void *arg)
{
	w->r.read = fn;
	w->r.read_arg = arg;
}

void ms_py_walker_budget(struct ms_py_walker *w, uint64_t bytes)
{
	w->budget = bytes < MS_PY_WALK_BYTES ? bytes : MS_PY_WALK_BYTES;
}

uint64_t ms_py_walker_bytes(const struct ms_py_walker *w)
{
	return w->r.bytes;
}

bool ms_py_walker_spent(const struct ms_py_walker *w)
{
	return w->spent;
}

void ms_py_walker_free(struct ms_py_walker *w)
{
	if (!w)
		return;
	free(w->t.strings);
	free(w->scratch);
	free(w->visit_at);
	free(w->visit_seen);
	free(w->visit_now);
	free(w);
}

const char *ms_py_thread_str(const struct ms_py_thread *t, uint32_t off)
{
	return t->strings + off;
}

/* End the thread's walk with status and a reason; returns -1. */
static int stop(struct ms_py_walker *w, enum ms_py_walk_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	w->t.status = s;
	vsnprintf(w->t.reason, sizeof(w->t.reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* End the walk as the reader's failure s says; returns -1. */
static int read_failed(struct ms_py_walker *w, enum ms_py_read s)
{
	w->spent |= s == MS_PY_READ_BUDGET;
	return stop(w, s == MS_PY_READ_UNREADABLE ? MS_PY_WALK_UNREADABLE :
		       s == MS_PY_READ_BUDGET ? MS_PY_WALK_BUDGET : MS_PY_WALK_INVALID,
		    "%s", w->r.reason);
}

/* A counted read: 0, or -1 after stop(). */
static int rd(struct ms_py_walker *w, uint64_t addr, void *buf, size_t len, const char *what)
{
	enum ms_py_read s = ms_py_read_mem(&w->r, addr, buf, len, what);

	return s == MS_PY_READ_OK ? 0 : read_failed(w, s);
}

#define u64 ms_py_u64
#define u32 ms_py_u32

/* Read the unicode object at addr into the thread's strings: its offset there, or -1. */
static int64_t read_str(struct ms_py_walker *w, uint64_t addr, const char *what)
{
	uint32_t at = w->strings_used, len;
	enum ms_py_read s = ms_py_read_str(&w->r, addr, what, w->t.strings + at, STR_BYTES, &len);

	if (s != MS_PY_READ_OK)
		return read_failed(w, s);
	w->strings_used += len + 1;
	return at;
}

/* The current line of code (header h) at instruction pointer instr. */
static int read_line(struct ms_py_walker *w, uint64_t code, const uint8_t *h, uint64_t instr,
		     int firstlineno, int *line)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint64_t n, data;
	enum ms_py_read s = ms_py_read_bytes_head(&w->r, u64(h, o->co_linetable), "co_linetable",
						  MS_PY_LINETABLE_MAX, &n, &data);
	if (s != MS_PY_READ_OK)
		return read_failed(w, s);
	if (rd(w, data, w->scratch, n, "co_linetable") < 0)
		return -1;
	int64_t addrq = (int64_t)(instr - (code + o->co_code_adaptive));
	switch (ms_py_linetable_line(w->scratch, n, firstlineno, addrq, line)) {
	case MS_PY_LINE_OK:
		return 0;
	case MS_PY_LINE_NONE:
		*line = 0;
		return 0;
	case MS_PY_LINE_PAST:
		return stop(w, MS_PY_WALK_INVALID, "instruction %lld is past the code at 0x%llx",
			    (long long)addrq, (unsigned long long)code);
	case MS_PY_LINE_BAD:
		break;
	}
	return stop(w, MS_PY_WALK_INVALID, "co_linetable of the code at 0x%llx is malformed",
		    (unsigned long long)code);
}

/* One frame's code and line into the thread: 0, or -1 after stop(). */
static int read_frame(struct ms_py_walker *w, uint64_t code, uint64_t instr)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint8_t h[HDR_MAX];
	if (rd(w, code, h, w->co_read, "code object") < 0)
		return -1;
	if (u64(h, o->ob_type) != w->l.code_type)
		return stop(w, MS_PY_WALK_INVALID, "the frame's code at 0x%llx is not a code object",
			    (unsigned long long)code);
	struct ms_py_frame *f = &w->t.frames[w->t.n_frames];
	f->code = code;
	f->stamp = u64(h, o->co_linetable);
	f->instr = instr;
	f->flags = 0;
	f->firstlineno = (int32_t)u32(h, o->co_firstlineno);
	int64_t file = read_str(w, u64(h, o->co_filename), "co_filename");
	if (file < 0)
		return -1;
	int64_t func = read_str(w, u64(h, o->co_qualname), "co_qualname");
	if (func < 0)
		return -1;
	f->file = (uint32_t)file;
	f->func = (uint32_t)func;
	if (read_line(w, code, h, instr, f->firstlineno, &f->line) < 0)
		return -1;
	w->t.n_frames++;
	return 0;
}

/* Light: one frame's code proved by its type, its stamp, instr. 0, or -1 after stop(). */
static int read_frame_light(struct ms_py_walker *w, uint64_t code, uint64_t instr)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint8_t h[HDR_MAX];
	if (rd(w, code, h, w->co_light_read, "code object") < 0)
		return -1;
	if (u64(h, o->ob_type) != w->l.code_type)
		return stop(w, MS_PY_WALK_INVALID, "the frame's code at 0x%llx is not a code object",
			    (unsigned long long)code);
	struct ms_py_frame *f = &w->t.frames[w->t.n_frames++];
	*f = (struct ms_py_frame){ .code = code, .stamp = u64(h, o->co_linetable), .instr = instr };
	return 0;
}

/* The thread's current frame, from its state's frame field: 0, or -1 after stop(). */
static int current_frame(struct ms_py_walker *w, uint64_t ts_frame, uint64_t *frame)
{
	const struct ms_py_offsets *o = &w->l.off;
	*frame = ts_frame;
	if (o->cf_current_frame >= 0 && *frame) {
		uint64_t cframe = *frame;
		if (rd(w, cframe + (uint32_t)o->cf_current_frame, frame, 8, "cframe") < 0)
			return -1;
	}
	return 0;
}

/*
 * Light: after a complete walk, the thread's current frame read again, and
 * every frame's code and previous link (one read of them all): a thread
 * that moved is CHANGED (frames of two states), never a complete stack.
 * The links matter beside the current frame: a generator that yields
 * (its frame's previous set NULL) and is resumed at the same address
 * between two reads leaves the current frame as it was.
 */
static void check_unchanged(struct ms_py_walker *w, uint64_t first)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint64_t ts_frame, now;
	if (rd(w, w->t.tstate + o->ts_frame, &ts_frame, 8, "thread state") < 0 ||
	    current_frame(w, ts_frame, &now) < 0)
		return;
	if (now != first) {
		stop(w, MS_PY_WALK_CHANGED, "the current frame moved from 0x%llx to 0x%llx during the walk",
		     (unsigned long long)first, (unsigned long long)now);
		return;
	}
	if (!w->n_visits)
		return;
	uint64_t at[VISITS_MAX];
	for (uint32_t i = 0; i < w->n_visits; i++)
		at[i] = w->visit_at[i] + w->link_lo;
	enum ms_py_read s = ms_py_read_many(&w->r, at, w->n_visits, w->link_len, w->visit_now,
					    "frames read again");
	if (s != MS_PY_READ_OK) {
		read_failed(w, s);
		return;
	}
	for (uint32_t i = 0; i < w->n_visits; i++)
		if (memcmp(w->visit_seen + (size_t)i * w->link_len, w->visit_now + (size_t)i * w->link_len,
			   w->link_len)) {
			stop(w, MS_PY_WALK_CHANGED, "the frame at 0x%llx (%u in) ran another code or "
			     "was called from elsewhere after it was read",
			     (unsigned long long)w->visit_at[i], i);
			return;
		}
}

/* Walk the frames of thread state ts (header h) into w->t. */
static void walk_thread(struct ms_py_walker *w, const uint8_t *h)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint64_t frame, first;
	if (current_frame(w, u64(h, o->ts_frame), &frame) < 0)
		return;
	first = frame;
	w->n_visits = 0;
	uint8_t fb[HDR_MAX];
	while (frame) {
		if (rd(w, frame, fb, w->fr_read, "frame") < 0)
			return;
		/* never past VISITS_MAX: the bounds below stop the walk first */
		if (w->light && w->n_visits < VISITS_MAX) {
			w->visit_at[w->n_visits] = frame;
			memcpy(w->visit_seen + (size_t)w->n_visits * w->link_len, fb + w->link_lo,
			       w->link_len);
			w->n_visits++;
		}
		uint8_t owner = fb[o->fr_owner];
		if (o->owner_cstack >= 0 && owner == (uint8_t)o->owner_cstack) {
			/* the shim an activation pushes: the frame inside it was its first */
			if (w->t.n_frames)
				w->t.frames[w->t.n_frames - 1].flags |= MS_PY_FRAME_ENTRY;
			w->t.skipped_cstack++;
		} else {
			if (w->t.n_frames == MS_PY_WALK_FRAMES) {
				stop(w, MS_PY_WALK_TOO_DEEP, "more than %u frames", MS_PY_WALK_FRAMES);
				return;
			}
			uint64_t code = u64(fb, o->fr_code), instr = u64(fb, o->fr_instr);
			if ((w->light ? read_frame_light(w, code, instr) : read_frame(w, code, instr)) < 0)
				return;
			if (o->fr_is_entry >= 0 && fb[o->fr_is_entry])
				w->t.frames[w->t.n_frames - 1].flags |= MS_PY_FRAME_ENTRY;
		}
		frame = u64(fb, o->fr_previous);
		/* Skipped frames count too: a cycle of them must end. */
		if (w->t.skipped_cstack > MS_PY_WALK_FRAMES) {
			stop(w, MS_PY_WALK_TOO_DEEP, "more than %u C-stack frames", MS_PY_WALK_FRAMES);
			return;
		}
	}
	w->t.status = MS_PY_WALK_COMPLETE;
	if (w->light)
		check_unchanged(w, first);
}

/* A read of the thread list: 0, or -1 with what failed in err. */
static int list_rd(struct ms_py_walker *w, uint64_t addr, void *buf, size_t len, const char *what,
		   char *err, size_t errlen)
{
	enum ms_py_read s = ms_py_read_mem(&w->r, addr, buf, len, what);
	if (s == MS_PY_READ_OK)
		return 0;
	int e = errno;
	w->spent |= s == MS_PY_READ_BUDGET;
	snprintf(err, errlen, "python walk: process %d: %s", (int)w->pid, w->r.reason);
	errno = s == MS_PY_READ_UNREADABLE ? e : 0;
	return -1;
}

int ms_py_walk(struct ms_py_walker *w, ms_py_thread_fn fn, void *data, char *err, size_t errlen)
{
	const struct ms_py_offsets *o = &w->l.off;
	w->r.bytes = 0;
	w->r.budget = w->budget;
	w->spent = false;
	uint64_t interp;
	if (list_rd(w, w->l.runtime + o->rt_interp_head, &interp, 8,
		    "_PyRuntime's interpreters", err, errlen) < 0)
		return -1;
	unsigned n_interps = 0, n_threads = 0;
	while (interp) {
		if (++n_interps > MS_PY_WALK_INTERPS) {
			snprintf(err, errlen, "python walk: process %d: more than %u interpreters (a cycle?)",
				 (int)w->pid, MS_PY_WALK_INTERPS);
			errno = 0;
			return -1;
		}
		uint64_t ts, next_interp;
		if (list_rd(w, interp + o->is_threads_head, &ts, 8, "interpreter", err, errlen) < 0 ||
		    list_rd(w, interp + o->is_next, &next_interp, 8, "interpreter", err, errlen) < 0)
			return -1;
		while (ts) {
			if (++n_threads > MS_PY_WALK_THREADS) {
				snprintf(err, errlen, "python walk: process %d: more than %u thread states (a cycle?)",
					 (int)w->pid, MS_PY_WALK_THREADS);
				errno = 0;
				return -1;
			}
			uint8_t h[HDR_MAX];
			if (list_rd(w, ts, h, w->ts_read, "thread state", err, errlen) < 0)
				return -1;
			w->t.tstate = ts;
			w->t.interp = interp;
			w->t.native_tid = u64(h, o->ts_native_tid);
			w->t.n_frames = 0;
			w->t.skipped_cstack = 0;
			w->t.reason[0] = '\0';
			w->strings_used = 0;
			walk_thread(w, h);
			int rc = fn(&w->t, data);
			if (rc)
				return rc;
			ts = u64(h, o->ts_next);
		}
		interp = next_interp;
	}
	return 0;
}

const struct ms_py_thread *ms_py_walk_code(struct ms_py_walker *w, uint64_t code, uint64_t instr,
					   char *err, size_t errlen)
{
	w->r.bytes = 0;
	w->r.budget = w->budget;
	w->t.n_frames = 0;
	w->t.reason[0] = '\0';
	w->strings_used = 0;
	if (read_frame(w, code, instr) < 0) {
		snprintf(err, errlen, "python code at 0x%llx in process %d: %s",
			 (unsigned long long)code, (int)w->pid, w->t.reason);
		return NULL;
	}
	w->t.status = MS_PY_WALK_COMPLETE;
	return &w->t;
}

int ms_py_walk_gil(struct ms_py_walker *w, uint64_t interp, bool *locked, uint64_t *holder)
{
	const struct ms_py_offsets *o = &w->l.off;
	uint64_t gil;
	uint8_t b[HDR_MAX];

	if (o->gil_locked < 0 || o->gil_holder < 0)
		return -1;
	if (o->gil_in_runtime >= 0)
		gil = w->l.runtime + (uint32_t)o->gil_in_runtime;
	else if (o->gil_ptr_in_interp < 0 ||
		 ms_py_read_mem(&w->r, interp + (uint32_t)o->gil_ptr_in_interp, &gil, 8, "the GIL's "
				"pointer") != MS_PY_READ_OK)
		return -1;
	uint32_t lo = (uint32_t)(o->gil_locked < o->gil_holder ? o->gil_locked : o->gil_holder);
	uint32_t hi = (uint32_t)(o->gil_locked + 4 > o->gil_holder + 8 ? o->gil_locked + 4
								      : o->gil_holder + 8);
	if (!gil || hi - lo > sizeof(b) ||
	    ms_py_read_mem(&w->r, gil + lo, b, hi - lo, "the GIL") != MS_PY_READ_OK)
		return -1;
	*locked = u32(b, (uint32_t)o->gil_locked - lo) != 0;
	*holder = u64(b, (uint32_t)o->gil_holder - lo);
	return 0;
}
