/*
 * The snapshot engine's pure parts (python/pysnapshot.h) and the light
 * walker (python/walk.h) over a fake process memory laid out as CPython
 * 3.11's and 3.12's checked tables say: a complete walk and its record,
 * ENTRY marks, the consistency rule (a thread that moves during the walk,
 * a generator resumed at the same address) as CHANGED and never a shorter
 * stack, objects that are not code, a cycle, the walk's budget, the GIL
 * read once, and a round's bounds (threads, bytes, time, late rounds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/sampler.h"
#include "python/layout.h"
#include "python/pysnapshot.h"
#include "python/walk.h"
#include "stream/records.h"

/* ---- a fake process: a few objects, each a region of bytes ---- */

#define REGIONS 16
#define REGION_BYTES 1024

struct fake {
	struct { uint64_t at; uint8_t b[REGION_BYTES]; } r[REGIONS];
	unsigned n;
	/* Once a read of hook_at happened: write hook_val at hook_put (the thread moves on). */
	uint64_t hook_at, hook_put, hook_val;
	unsigned reads;
};

static uint8_t *at(struct fake *f, uint64_t addr)
{
	for (unsigned i = 0; i < f->n; i++)
		if (addr >= f->r[i].at && addr < f->r[i].at + REGION_BYTES)
			return f->r[i].b + (addr - f->r[i].at);
	/* objects start at pages here, fields within REGION_BYTES of them */
	assert_true(f->n < REGIONS && (addr & 0xfff) < REGION_BYTES);
	f->r[f->n].at = addr & ~0xfffull;
	return f->r[f->n++].b + (addr & 0xfff);
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(at(f, addr), &v, 8);
}

static int fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = arg;

	f->reads++;
	for (unsigned i = 0; i < f->n; i++)
		if (addr >= f->r[i].at && addr + len <= f->r[i].at + REGION_BYTES) {
			memcpy(buf, f->r[i].b + (addr - f->r[i].at), len);
			if (f->hook_at && addr == f->hook_at) {
				put64(f, f->hook_put, f->hook_val);
				f->hook_at = 0;
			}
			return 0;
		}
	errno = EFAULT;
	return -1;
}

enum {
	RUNTIME = 0x10000, INTERP = 0x20000, TSTATE = 0x30000, CFRAME = 0x38000,
	F1 = 0x40000, SHIM = 0x41000, F3 = 0x42000, F_OTHER = 0x43000,
	C1 = 0x50000, C2 = 0x52000, NOT_CODE = 0x54000, GIL = 0x60000,
	CODE_TYPE = 0x7000, LT1 = 0x51000, LT2 = 0x53000,
};

/*
 * CPython 3.12 as its table says: a thread (native id 77) in C1, called
 * through a C-stack shim from C2, the outermost. The GIL locked by it.
 */
static void make312(struct fake *f, struct ms_py_layout *l)
{
	const struct ms_py_offsets *o = &l->off;

	memset(f, 0, sizeof(*f));
	memset(l, 0, sizeof(*l));
	assert_int_equal(ms_py_table(12, &l->off), 0);
	l->major = 3;
	l->minor = 12;
	l->runtime = RUNTIME;
	l->code_type = CODE_TYPE;
	put64(f, RUNTIME + o->rt_interp_head, INTERP);
	put64(f, INTERP + o->is_threads_head, TSTATE);
	put64(f, INTERP + o->is_next, 0);
	put64(f, INTERP + (uint32_t)o->gil_ptr_in_interp, GIL);
	put64(f, TSTATE + o->ts_next, 0);
	put64(f, TSTATE + o->ts_native_tid, 77);
	put64(f, TSTATE + o->ts_frame, CFRAME);
	put64(f, CFRAME + (uint32_t)o->cf_current_frame, F1);
	put64(f, F1 + o->fr_code, C1);
	put64(f, F1 + o->fr_previous, SHIM);
	put64(f, F1 + o->fr_instr, C1 + 0x100);
	put64(f, SHIM + o->fr_code, 0);
	put64(f, SHIM + o->fr_previous, F3);
	at(f, SHIM + o->fr_owner)[0] = (uint8_t)o->owner_cstack;
	put64(f, F3 + o->fr_code, C2);
	put64(f, F3 + o->fr_previous, 0);
	put64(f, F3 + o->fr_instr, C2 + 0x120);
	put64(f, F_OTHER + o->fr_code, C2);
	put64(f, F_OTHER + o->fr_previous, 0);
	put64(f, C1 + o->ob_type, CODE_TYPE);
	put64(f, C1 + o->co_linetable, LT1);
	put64(f, C2 + o->ob_type, CODE_TYPE);
	put64(f, C2 + o->co_linetable, LT2);
	put64(f, NOT_CODE + o->ob_type, 0x9999);
	put64(f, GIL + (uint32_t)o->gil_holder, TSTATE);
	at(f, GIL + (uint32_t)o->gil_locked)[0] = 1;
}

struct walked {
	struct ms_py_thread t;
	unsigned n;
};

static int keep(const struct ms_py_thread *t, void *data)
{
	struct walked *w = data;
	char *strings = w->t.strings;

	w->t = *t;
	w->t.strings = strings;
	w->n++;
	return 0;
}

/* Walk f light: the one thread. */
static struct walked *walk(struct fake *f, const struct ms_py_layout *l, uint64_t budget)
{
	static struct walked w;
	struct ms_py_walker *wk = ms_py_walker_new(1, l);
	char err[256];

	assert_non_null(wk);
	ms_py_walker_read_with(wk, fake_read, f);
	ms_py_walker_light(wk, true);
	if (budget)
		ms_py_walker_budget(wk, budget);
	memset(&w, 0, sizeof(w));
	if (ms_py_walk(wk, keep, &w, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(w.n, 1);
	if (budget)
		assert_true(ms_py_walker_spent(wk));
	ms_py_walker_free(wk);
	return &w;
}

static struct ms_py_snapshot rec;
static char why[256];

static void test_complete(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	struct walked *w = walk(&f, &l, 0);
	assert_int_equal(w->t.status, MS_PY_WALK_COMPLETE);
	assert_int_equal(w->t.native_tid, 77);
	assert_int_equal(w->t.tstate, TSTATE);
	assert_int_equal(w->t.n_frames, 2);
	assert_int_equal(w->t.skipped_cstack, 1);
	ms_py_snapshot_from_walk(&w->t, 5, 1234, 3, 999, MS_BPF_PY_GIL_HELD, &rec, why, sizeof(why));
	assert_int_equal(rec.status, MS_PY_SNAPSHOT_COMPLETE);
	assert_int_equal(rec.pid, 5);
	assert_int_equal(rec.tid, 1234);
	assert_int_equal(rec.round, 3);
	assert_int_equal(rec.time, 999);
	assert_int_equal(rec.tstate, TSTATE);
	assert_int_equal(rec.reason.len, 0);
	assert_int_equal(rec.n_words, 8);
	/* innermost first: code, stamp, instr, flags; the frame inside the shim is ENTRY */
	uint64_t want[8] = { C1, LT1, C1 + 0x100, MS_BPF_PY_ENTRY, C2, LT2, C2 + 0x120, 0 };
	for (int i = 0; i < 8; i++)
		assert_int_equal(rec.words[i], want[i]);
}

/* 3.11: no shim; a frame whose is_entry byte is set is ENTRY. */
static void test_entry_311(void **state)
{
	struct fake f;
	struct ms_py_layout l;
	const struct ms_py_offsets *o = &l.off;

	(void)state;
	make312(&f, &l);
	memset(&f, 0, sizeof(f));
	assert_int_equal(ms_py_table(11, &l.off), 0);
	l.minor = 11;
	put64(&f, RUNTIME + o->rt_interp_head, INTERP);
	put64(&f, INTERP + o->is_threads_head, TSTATE);
	put64(&f, TSTATE + o->ts_native_tid, 77);
	put64(&f, TSTATE + o->ts_frame, CFRAME);
	put64(&f, CFRAME + (uint32_t)o->cf_current_frame, F1);
	put64(&f, F1 + o->fr_code, C1);
	put64(&f, F1 + o->fr_previous, F3);
	put64(&f, F3 + o->fr_code, C2);
	at(&f, F3 + (uint32_t)o->fr_is_entry)[0] = 1;
	put64(&f, C1 + o->ob_type, CODE_TYPE);
	put64(&f, C2 + o->ob_type, CODE_TYPE);
	struct walked *w = walk(&f, &l, 0);
	assert_int_equal(w->t.status, MS_PY_WALK_COMPLETE);
	assert_int_equal(w->t.n_frames, 2);
	assert_int_equal(w->t.frames[0].flags, 0);
	assert_int_equal(w->t.frames[1].flags, MS_PY_FRAME_ENTRY);
}

static void assert_changed(struct walked *w, enum ms_py_walk_status status, const char *words)
{
	assert_int_equal(w->t.status, status);
	ms_py_snapshot_from_walk(&w->t, 5, 1234, 1, 1, MS_BPF_PY_GIL_UNKNOWN, &rec, why, sizeof(why));
	assert_int_equal(rec.status, MS_PY_SNAPSHOT_CHANGED);
	assert_int_equal(rec.n_words, 0);
	assert_non_null(strstr(rec.reason.ptr, words));
	assert_int_equal(rec.reason.len, strlen(rec.reason.ptr));
}

/* The thread returns to another frame while its frames are read. */
static void test_moved(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	f.hook_at = F3;
	f.hook_put = CFRAME + (uint32_t)l.off.cf_current_frame;
	f.hook_val = F_OTHER;
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_CHANGED, "current frame moved");
}

/*
 * A generator's frame read just after it yielded (its previous NULL) and
 * resumed at the same address before the walk ends: the current frame is
 * as it was, but the stack read ends early. CHANGED, never [C1] alone.
 */
static void test_resumed_generator(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	put64(&f, F1 + l.off.fr_previous, 0);
	f.hook_at = F1;
	f.hook_put = F1 + l.off.fr_previous;
	f.hook_val = SHIM;
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_CHANGED, "called from elsewhere");
}

/* The frame at the same address runs another code after it was read. */
static void test_same_frame_other_code(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	f.hook_at = F3;
	f.hook_put = F1 + l.off.fr_code;
	f.hook_val = C2;
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_CHANGED, "ran another code");
}

static void test_not_code(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	put64(&f, F3 + l.off.fr_code, NOT_CODE);
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_INVALID, "invalid: ");
}

static void test_cycle(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	put64(&f, F3 + l.off.fr_previous, F1);
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_TOO_DEEP, "too-deep: ");
}

static void test_unreadable(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	put64(&f, F3 + l.off.fr_previous, 0x999000);
	assert_changed(walk(&f, &l, 0), MS_PY_WALK_UNREADABLE, "unreadable: ");
}

/* A budget that the list takes but not the frames: the thread is BUDGET. */
static void test_budget(void **state)
{
	struct fake f;
	struct ms_py_layout l;

	(void)state;
	make312(&f, &l);
	assert_changed(walk(&f, &l, 400), MS_PY_WALK_BUDGET, "budget: ");
}

static void test_gil(void **state)
{
	struct fake f;
	struct ms_py_layout l;
	bool locked = false;
	uint64_t holder = 0;

	(void)state;
	make312(&f, &l);
	struct ms_py_walker *wk = ms_py_walker_new(1, &l);
	assert_non_null(wk);
	ms_py_walker_read_with(wk, fake_read, &f);
	assert_int_equal(ms_py_walk_gil(wk, INTERP, &locked, &holder), 0);
	assert_true(locked);
	assert_int_equal(holder, TSTATE);
	assert_int_equal(ms_py_snap_gil(true, locked, holder, TSTATE), MS_BPF_PY_GIL_HELD);
	assert_int_equal(ms_py_snap_gil(true, locked, holder, TSTATE + 8), MS_BPF_PY_GIL_RELEASED);
	assert_int_equal(ms_py_snap_gil(true, false, holder, TSTATE), MS_BPF_PY_GIL_RELEASED);
	assert_int_equal(ms_py_snap_gil(false, true, holder, TSTATE), MS_BPF_PY_GIL_UNKNOWN);
	/* no GIL where the interpreter points: unknown */
	put64(&f, INTERP + (uint32_t)l.off.gil_ptr_in_interp, 0x888000);
	assert_int_equal(ms_py_walk_gil(wk, INTERP, &locked, &holder), -1);
	ms_py_walker_free(wk);
}

static void test_bounds(void **state)
{
	struct ms_py_snap_bounds b;
	const uint64_t ms = 1000000;

	(void)state;
	ms_py_snap_bounds_init(&b, 10);
	/* the first round is never late; one an interval and a bit later neither */
	assert_false(ms_py_snap_round_begin(&b, 1000 * ms));
	assert_false(ms_py_snap_round_begin(&b, 1013 * ms));
	/* two intervals after: a round was missed */
	assert_true(ms_py_snap_round_begin(&b, 1033 * ms));
	assert_false(ms_py_snap_round_begin(&b, 1043 * ms));
	/* threads: MS_PY_SNAP_THREADS_MAX, then the bound */
	for (uint32_t i = 0; i < MS_PY_SNAP_THREADS_MAX; i++)
		assert_true(ms_py_snap_admit(&b, 1043 * ms));
	assert_false(b.threads_hit);
	assert_false(ms_py_snap_admit(&b, 1043 * ms));
	assert_true(b.threads_hit);
	assert_false(b.bytes_hit || b.time_hit);
	/* a new round forgets the last's */
	assert_false(ms_py_snap_round_begin(&b, 1053 * ms));
	assert_false(b.threads_hit);
	/* time: half the interval */
	assert_true(ms_py_snap_admit(&b, 1058 * ms));
	assert_false(ms_py_snap_admit(&b, 1058 * ms + 1));
	assert_true(b.time_hit);
	/* bytes */
	assert_false(ms_py_snap_round_begin(&b, 1063 * ms));
	assert_true(ms_py_snap_spend(&b, MS_PY_SNAP_ROUND_BYTES - 1));
	assert_true(ms_py_snap_admit(&b, 1063 * ms));
	assert_false(ms_py_snap_spend(&b, 1));
	assert_true(b.bytes_hit);
	assert_false(ms_py_snap_admit(&b, 1063 * ms));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_entry_311),
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_resumed_generator),
		cmocka_unit_test(test_same_frame_other_code),
		cmocka_unit_test(test_not_code),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_gil),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
