/*
 * Python frames spliced into native stacks (libcommon/python/splice.h),
 * on hand-built stacks: native frames are modules 1 (C code), 2 (the
 * interpreter: activations of its loop, and a frame of it outside the
 * loop); Python frames are module 7, their address a key. Each case
 * writes the expected stack as a string of frame names, innermost first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "bpf/sampler.h"
#include "python/splice.h"

#define PY 7

/*
 * A native stack from a spec, innermost first: 'c' a C frame, 'L' an
 * activation of the loop, 'i' a frame of the interpreter outside the
 * loop. Python frames from a spec: a letter a frame, upper case when it
 * ends its segment (MS_BPF_PY_ENTRY).
 */
static struct ms_stack_frame native[64];
static bool act[64];
static struct ms_py_splice_frame py[64];
static struct ms_stack_frame out[64];

static struct ms_py_splice_in make(const char *nat, const char *pys, bool engine, bool walk,
				   uint32_t status)
{
	struct ms_py_splice_in in = { .native = native, .activation = act, .py = py,
				      .native_reason = MS_END_OUTERMOST, .engine = engine,
				      .have_walk = walk, .status = status };

	for (uint32_t i = 0; nat[i]; i++, in.n_native++) {
		native[i] = (struct ms_stack_frame){
			.module = nat[i] == 'c' ? 1 : 2, .address = 0x1000 + i,
			.flags = (i ? MS_FRAME_RETURN : 0) | (nat[i] == 'c' ? 0 : MS_FRAME_INTERPRETER),
		};
		act[i] = nat[i] == 'L';
	}
	for (uint32_t i = 0; pys && pys[i]; i++, in.n_py++)
		py[i] = (struct ms_py_splice_frame){
			.frame = { .module = PY, .address = (uint64_t)(pys[i] | 0x20),
				   .flags = MS_FRAME_NO_ADDRESS },
			.entry = pys[i] >= 'A' && pys[i] <= 'Z',
		};
	return in;
}

/* The stack out[0, n) as a spec: native frames as made, Python ones by their letter. */
static const char *spec(uint32_t n)
{
	static char s[80];

	for (uint32_t i = 0; i < n; i++) {
		if (out[i].module == PY) {
			assert_int_equal(out[i].flags, MS_FRAME_NO_ADDRESS);
			s[i] = (char)out[i].address;
		} else {
			/* a native frame is itself, in its place among the natives */
			s[i] = out[i].module == 1 ? 'c' :
			       act[out[i].address - 0x1000] ? 'L' : 'i';
		}
	}
	s[n] = '\0';
	return s;
}

static void expect(const char *nat, const char *pys, bool engine, bool walk, uint32_t status,
		   enum ms_py_splice_what what, uint32_t reason, const char *want)
{
	struct ms_py_splice_in in = make(nat, pys, engine, walk, status);
	struct ms_py_splice_out res;

	assert_int_equal(ms_py_splice(&in, out, 64, &res), what);
	assert_int_equal(res.what, what);
	assert_int_equal(res.reason, reason);
	assert_false(res.cut);
	assert_string_equal(spec(res.n), want);
}

/* Segment k before activation k: C code called from Python stays where it was called. */
static void equal_counts(void **state)
{
	(void)state;
	/* two activations (a C call between them runs Python again), two segments */
	expect("ccLcLc", "fGhI", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED,
	       MS_END_OUTERMOST, "ccfgLchiLc");
	/* without the engine's info too: the record says one ran */
	expect("ccLcLc", "fGhI", false, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED,
	       MS_END_OUTERMOST, "ccfgLchiLc");
	/* the sample in the loop itself */
	expect("Lc", "M", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED, MS_END_OUTERMOST,
	       "mLc");
}

/*
 * 3.12 and later: Python-to-Python calls stay in one activation, so a
 * segment is long, ENTRY on its outermost frame (the one the shim the
 * activation pushed was written before). 3.11: a frame whose is_entry is
 * set, often each frame a C call ran (one activation per frame).
 */
static void entry_styles(void **state)
{
	(void)state;
	expect("cLc", "abcdefG", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED,
	       MS_END_OUTERMOST, "cabcdefgLc");
	expect("LcLcLc", "ABC", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED,
	       MS_END_OUTERMOST, "aLcbLccLc");
}

/* Counts differ: every Python frame after every native one, unplaced. */
static void counts_differ(void **state)
{
	(void)state;
	expect("cLcc", "aBcD", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "cLccabcd");
	expect("LcLcLc", "aBcD", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "LcLcLcabcd");
	/* a complete walk whose outermost frame ends no segment */
	expect("cLcLc", "aBcd", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "cLcLcabcd");
	/* Python frames, and the native walk found no activation (cut short) */
	expect("cc", "aB", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "ccab");
}

/* A walk that stopped early: its segments on the innermost activations. */
static void truncated(void **state)
{
	(void)state;
	/* one whole segment and the part of the next the walk read */
	expect("cLcLcLc", "aBcd", true, true, MS_BPF_PY_TOO_DEEP, MS_PY_SPLICE_TRUNCATED,
	       MS_END_INTERPRETED_TRUNCATED, "cabLccdLcLc");
	expect("cLcLc", "ab", true, true, MS_BPF_PY_UNREADABLE, MS_PY_SPLICE_TRUNCATED,
	       MS_END_INTERPRETED_TRUNCATED, "cabLcLc");
	/* more segments than activations: unplaced */
	expect("cLc", "aBc", true, true, MS_BPF_PY_TOO_DEEP, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "cLcabc");
}

/* Activations and no Python frames: unknown, only where an engine ran. */
static void unknown(void **state)
{
	(void)state;
	/* no walker record: the engine's info decides */
	expect("cLc", NULL, true, false, 0, MS_PY_SPLICE_UNKNOWN, MS_END_INTERPRETED_UNKNOWN,
	       "cLc");
	expect("cLc", NULL, false, false, 0, MS_PY_SPLICE_NATIVE, MS_END_OUTERMOST, "cLc");
	/* a record that found no thread state, or read nothing */
	expect("cLc", NULL, false, true, MS_BPF_PY_NO_THREAD, MS_PY_SPLICE_UNKNOWN,
	       MS_END_INTERPRETED_UNKNOWN, "cLc");
	expect("cLc", NULL, true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNKNOWN,
	       MS_END_INTERPRETED_UNKNOWN, "cLc");
	expect("cLc", NULL, true, true, MS_BPF_PY_UNREADABLE, MS_PY_SPLICE_UNKNOWN,
	       MS_END_INTERPRETED_UNKNOWN, "cLc");
	/* frames with a status that read no thread are no thread's: not used */
	expect("cLc", "aB", true, true, MS_BPF_PY_AMBIGUOUS, MS_PY_SPLICE_UNKNOWN,
	       MS_END_INTERPRETED_UNKNOWN, "cLc");
	expect("cLc", "aB", true, true, MS_BPF_PY_STATUS_COUNT, MS_PY_SPLICE_UNKNOWN,
	       MS_END_INTERPRETED_UNKNOWN, "cLc");
}

/* No activation and no Python frames: the stack never changes. */
static void no_activation(void **state)
{
	(void)state;
	expect("ccc", NULL, true, false, 0, MS_PY_SPLICE_NATIVE, MS_END_OUTERMOST, "ccc");
	expect("ccc", NULL, true, true, MS_BPF_PY_NO_THREAD, MS_PY_SPLICE_NATIVE,
	       MS_END_OUTERMOST, "ccc");
	expect("ccc", NULL, true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_NATIVE,
	       MS_END_OUTERMOST, "ccc");
	expect("", NULL, true, false, 0, MS_PY_SPLICE_NATIVE, MS_END_OUTERMOST, "");
}

/* A frame of the interpreter outside its loop is no activation. */
static void interpreter_not_loop(void **state)
{
	(void)state;
	expect("ciLci", "aB", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_PLACED,
	       MS_END_OUTERMOST, "ciabLci");
	expect("cic", NULL, true, false, 0, MS_PY_SPLICE_NATIVE, MS_END_OUTERMOST, "cic");
	expect("cic", "aB", true, true, MS_BPF_PY_COMPLETE, MS_PY_SPLICE_UNPLACED,
	       MS_END_INTERPRETED_UNPLACED, "cicab");
}

/* Out of room: cut at the outer end, end depth; the native reason replaced too. */
static void cut(void **state)
{
	struct ms_py_splice_in in = make("cLcLc", "aBcD", true, true, MS_BPF_PY_COMPLETE);
	struct ms_py_splice_out res;

	(void)state;
	assert_int_equal(ms_py_splice(&in, out, 6, &res), MS_PY_SPLICE_PLACED);
	assert_true(res.cut);
	assert_int_equal(res.reason, MS_END_DEPTH);
	assert_int_equal(res.n, 6);
	assert_string_equal(spec(res.n), "cabLcc");
	assert_int_equal(res.activations, 2);
	assert_int_equal(res.segments, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_counts),
		cmocka_unit_test(entry_styles),
		cmocka_unit_test(counts_differ),
		cmocka_unit_test(truncated),
		cmocka_unit_test(unknown),
		cmocka_unit_test(no_activation),
		cmocka_unit_test(interpreter_not_loop),
		cmocka_unit_test(cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
