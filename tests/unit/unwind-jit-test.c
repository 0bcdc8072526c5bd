/*
 * ms-unwind's JIT functions (libcommon/unwind/jit.c, their use in
 * unwind.c and sample.c): hand-built JIT_FUNC records whose rows are
 * proved from the hand-assembled code of tests/unit/jit-code.h, over
 * samples (registers and stack bytes) whose callers are in
 * tests/unit/data/dwarf-frames, an ELF with exact CFI (dwarf-test.c). A
 * frameless leaf unwinds to its caller by its rows, a frame-pointer JIT
 * caller too; frames are perf-map modules named at once; the read time
 * decides what a mapping and exec do; latest line wins (and a name
 * written stays true: a new module); malformed rows and a pc past the
 * rows' stop end the stack with no CFI; dwarf+fp takes no chain entry
 * past a frameless JIT frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "jit/prove.h"
#include "jit/rows.h"
#include "stream/records.h"
#include "unwind/jit.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "elf-helpers.h"
#include "jit-code.h"
#include "jit-unwind-harness.h"

#define TRAMP (JBASE + 0x100)		/* trampoline[]: frameless, sub rsp, 8 */
#define CLASSIC (JBASE + 0x200)		/* classic[]: push rbp; mov rbp, rsp */
#define READ_TIME 1000			/* when the functions' lines were read */

static struct ms_prover *prover;
/* A JIT_FUNC record as ms_jit_func_unpack() gives it, its rows proved from code. */
static uint8_t rows_buf[MS_ROWS_ENCODED_MAX];
static struct ms_jit_func jit_func(uint32_t pid, uint64_t start, uint64_t size, const char *name,
				   uint64_t time, const uint8_t *code, size_t len)
{
	struct ms_jit_func f = {
		.pid = pid, .time = time, .start = start, .end = start + size,
		.name = { name, (uint32_t)strlen(name) }, .line = 1,
	};

	if (code) {
		struct ms_prove_rows t;

		ms_prove_rows(prover, code, len, &t);
		f.rows_len = (uint32_t)ms_rows_encode(&t, rows_buf, sizeof(rows_buf));
		assert_true(f.rows_len > 0);
		f.rows = rows_buf;
	}
	return f;
}

static void add(struct ms_unwinder *u, struct ms_jit_func f)
{
	assert_int_equal(ms_unwinder_jit_func(u, &f), 0);
}

/* The trampoline and the classic frame, read at READ_TIME. */
static void add_both(struct ms_unwinder *u, uint32_t pid)
{
	add(u, jit_func(pid, TRAMP, sizeof(trampoline), "py::tramp", READ_TIME, trampoline,
			sizeof(trampoline)));
	add(u, jit_func(pid, CLASSIC, sizeof(classic), "js::classic", READ_TIME, classic,
			sizeof(classic)));
}

/* A sample of pid at ip with %rsp SP0, %rbp bp, len bytes of mem copied. */
static struct ms_sample *sample(uint32_t pid, uint64_t ip, uint64_t bp, uint32_t len)
{
	return jit_sample(pid, 2000, ip, bp, len);
}
/*
 * The trampoline at ip (its offset 4: after sub rsp, 8) called from
 * t_fp, called from t_outer: tramp's return address at SP0 + 8, t_fp's
 * frame at %rbp = SP0 + 96.
 */
static struct ms_sample *tramp_sample(uint32_t pid, uint64_t ip)
{
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 8, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	return sample(pid, ip, SP0 + 96, sizeof(mem));
}

static void expect_named(uint32_t i, uint32_t module, uint64_t address, const char *name,
			 uint64_t start)
{
	assert_true(i < n_frames);
	assert_int_equal(frames[i].module, module);
	assert_int_equal(frames[i].address, address);
	assert_string_equal(frames[i].name, name);
	assert_int_equal(frames[i].start, start);
	assert_int_equal(frames[i].reason, MS_SYM_OK);
}

static void expect_perf_map(uint32_t id, const char *path)
{
	assert_int_equal(mods[id].kind, MS_MODULE_PERF_MAP);
	assert_int_equal(mods[id].base, JBASE);
	assert_int_equal(mods[id].size, JLEN);
	assert_int_equal(mods[id].build_id_len, 0);
	assert_int_equal((int)mods[id].path.len, (int)strlen(path));
	assert_memory_equal(mods[id].path.ptr, path, mods[id].path.len);
}

static uint64_t problems(struct ms_unwinder *u, const char *code)
{
	const struct ms_problems *p = ms_unwinder_problems(u);

	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, code))
			return p->entries[i].count;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	prover = ms_prover_new();
	smp = calloc(1, sizeof(*smp));
	stack = calloc(1, sizeof(*stack));
	return prover && smp && stack ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ms_prover_free(prover);
	free(smp);
	free(stack);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	n_mods = n_frames = 0;
	memset(mods, 0, sizeof(mods));
	return 0;
}

/* A frameless leaf (no frame pointer) unwinds by its rows to a caller in an ELF. */
static void test_leaf_to_elf(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	add_both(u, PID);
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	expect_frame(1, MS_MODULE_FILE, sym_in("dwarf-frames", "t_fp_ret"), MS_FRAME_RETURN);
	expect_frame(2, MS_MODULE_FILE, sym_in("dwarf-frames", "t_outer_ret"), MS_FRAME_RETURN);
	expect_perf_map(stack->frames[0].module, "/tmp/perf-77.map");
	assert_int_equal(n_frames, 1);
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp", TRAMP);
	/* Again (from the caches): the same stack, its frame named already. */
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	assert_int_equal(n_frames, 0);
	/* At its entry (before sub rsp, 8) the return address is at %rsp. */
	memset(mem, 0xee, sizeof(mem));
	put(SP0, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(PID, TRAMP, SP0 + 96, sizeof(mem));
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	expect_named(0, stack->frames[0].module, TRAMP, "py::tramp", TRAMP);
	assert_int_equal(ms_unwinder_stats(u)->jit_funcs, 2);
	ms_unwinder_free(u);
}

/* The leaf called from a JIT function with a frame pointer, called from t_fp. */
static void test_leaf_to_jit_caller(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	add_both(u, PID);
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 8, CLASSIC + 17);		/* the leaf's return address: after classic's call */
	put(SP0 + 96, SP0 + 112);		/* classic's frame: its caller's %rbp */
	put(SP0 + 104, pc_of("t_fp_ret"));
	put(SP0 + 112, 0);			/* t_fp's frame */
	put(SP0 + 120, pc_of("t_outer_ret"));
	sample(PID, TRAMP + 4, SP0 + 96, sizeof(mem));
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 4);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	expect_frame(1, MS_MODULE_PERF_MAP, CLASSIC + 17, MS_FRAME_RETURN);
	expect_frame(2, MS_MODULE_FILE, sym_in("dwarf-frames", "t_fp_ret"), MS_FRAME_RETURN);
	assert_int_equal(stack->frames[0].module, stack->frames[1].module);
	assert_int_equal(n_frames, 2);
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp", TRAMP);
	expect_named(1, stack->frames[0].module, CLASSIC + 17, "js::classic", CLASSIC);
	ms_unwinder_free(u);
}

/* The frame-pointer method binds and names JIT frames the same way. */
static void test_fp_method(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_fp, true);

	(void)state;
	add_both(u, PID);
	tramp_sample(PID, TRAMP + 4);
	smp->n_uchain = 3;
	smp->uchain[1] = CLASSIC + 17;
	smp->uchain[2] = pc_of("t_fp_ret");
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 3);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	expect_frame(1, MS_MODULE_PERF_MAP, CLASSIC + 17, MS_FRAME_RETURN);
	expect_named(1, stack->frames[0].module, CLASSIC + 17, "js::classic", CLASSIC);
	ms_unwinder_free(u);
}

/* A mapping made after the line was read ends the function; one made before does not. */
static void test_mapping_time(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_mmap before = anon_mapping(PID, READ_TIME), after = anon_mapping(PID, READ_TIME + 1);

	(void)state;
	add_both(u, PID);
	/* (Records come after the functions', as ms-decode sends them: Tm <= R keeps them.) */
	assert_int_equal(ms_unwinder_mmap(u, &before), 0);
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	assert_int_equal(ms_unwinder_stats(u)->jit_ended, 0);
	/* A non-executable mapping elsewhere changes nothing. */
	after.start = JBASE + JLEN;
	after.prot = PROT_READ;
	assert_int_equal(ms_unwinder_mmap(u, &after), 0);
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	/* Over it, later than the read: its code is gone, and nothing names the frame. */
	after = anon_mapping(PID, READ_TIME + 1);
	assert_int_equal(ms_unwinder_mmap(u, &after), 0);
	assert_int_equal(ms_unwinder_stats(u)->jit_ended, 2);
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 1);
	expect_frame(0, MS_MODULE_ANON, TRAMP + 4, 0);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(n_frames, 0);
	/* A line read later names the new code again. */
	add(u, jit_func(PID, TRAMP, sizeof(trampoline), "py::tramp2", READ_TIME + 5, trampoline,
			sizeof(trampoline)));
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp2", TRAMP);
	ms_unwinder_free(u);
}

/* exec ends the functions read before it; one read after (its record early) stays. */
static void test_exec(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_comm exec = { .pid = PID, .tid = PID, .time = READ_TIME + 10, .exec = true,
				.comm = { "t", 1 } };
	/* (A mapping as old as the lines, so that only the exec can end them.) */
	struct ms_mmap f = file_mapping(), a = anon_mapping(PID, READ_TIME);

	(void)state;
	add_both(u, PID);
	add(u, jit_func(PID, JBASE + 0x400, 16, "after-exec", READ_TIME + 20, NULL, 0));
	assert_int_equal(ms_unwinder_comm(u, &exec), 0);
	assert_int_equal(ms_unwinder_mmap(u, &f), 0);
	assert_int_equal(ms_unwinder_mmap(u, &a), 0);
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_ANON, TRAMP + 4, 0);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	/* The function read after the exec: named, no rows (no code read): no CFI. */
	sample(PID, JBASE + 0x404, SP0, sizeof(mem));
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_PERF_MAP, JBASE + 0x404, 0);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	expect_named(0, stack->frames[0].module, JBASE + 0x404, "after-exec", JBASE + 0x400);
	assert_int_equal(ms_unwinder_stats(u)->jit_funcs_no_rows, 1);
	ms_unwinder_free(u);
}

/* A forked child runs its parent's JIT code: named, under its own map's path. */
static void test_fork(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_task fork = { .pid = CHILD, .ppid = PID, .tid = CHILD, .ptid = PID,
				.time = READ_TIME + 1 };

	(void)state;
	add_both(u, PID);
	assert_int_equal(ms_unwinder_fork(u, &fork), 0);
	tramp_sample(CHILD, TRAMP + 4);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 4, 0);
	expect_perf_map(stack->frames[0].module, "/tmp/perf-78.map");
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp", TRAMP);
	ms_unwinder_free(u);
}

/* The path the latest JIT_READ of the process names is its modules'. */
static void test_read_path(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_jit_read r = { .pid = PID, .time = READ_TIME, .path = { "/proc/77/root/tmp/perf-9.map", 28 } };

	(void)state;
	add_both(u, PID);
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	expect_perf_map(stack->frames[0].module, "/tmp/perf-77.map");
	assert_int_equal(ms_unwinder_jit_read(u, &r), 0);
	unwind(u);
	drain(u);
	expect_perf_map(stack->frames[0].module, "/proc/77/root/tmp/perf-9.map");
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp", TRAMP);
	ms_unwinder_free(u);
}

/*
 * The latest line wins where lines overlap; a frame named before keeps
 * its name: the newer function's frames are another module's.
 */
static void test_latest_wins(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	uint32_t first;

	(void)state;
	add(u, jit_func(PID, TRAMP, 0x40, "old", READ_TIME, trampoline, sizeof(trampoline)));
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	first = stack->frames[0].module;
	expect_named(0, first, TRAMP + 4, "old", TRAMP);
	add(u, jit_func(PID, TRAMP, sizeof(trampoline), "new", READ_TIME + 1, trampoline,
			sizeof(trampoline)));
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_true(stack->frames[0].module != first);
	expect_perf_map(stack->frames[0].module, "/tmp/perf-77.map");
	expect_named(0, stack->frames[0].module, TRAMP + 4, "new", TRAMP);
	/* Past the new one's end, the old one still holds the address. */
	sample(PID, TRAMP + 0x30, SP0, sizeof(mem));
	unwind(u);
	drain(u);
	expect_named(0, stack->frames[0].module, TRAMP + 0x30, "old", TRAMP);
	ms_unwinder_free(u);
}

/* Malformed rows: counted, the function named, its frames end with no CFI. */
static void test_bad_rows(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_jit_func f = jit_func(PID, TRAMP, sizeof(trampoline), "py::tramp", READ_TIME,
					trampoline, sizeof(trampoline));
	uint8_t bad[MS_ROWS_ENCODED_MAX];

	(void)state;
	memcpy(bad, f.rows, f.rows_len);
	bad[0] = 99;	/* another version */
	f.rows = bad;
	assert_int_equal(ms_unwinder_jit_func(u, &f), 0);
	/* Cut short, and bytes that are no table at all. */
	f.rows = rows_buf;
	f.rows_len -= 3;
	assert_int_equal(ms_unwinder_jit_func(u, &f), 0);
	memset(bad, 0xff, sizeof(bad));
	f.rows = bad;
	f.rows_len = sizeof(bad);
	assert_int_equal(ms_unwinder_jit_func(u, &f), 0);
	assert_int_equal(problems(u, "jit-bad-rows"), 3);
	tramp_sample(PID, TRAMP + 4);
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 1);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	expect_named(0, stack->frames[0].module, TRAMP + 4, "py::tramp", TRAMP);
	assert_int_equal(ms_unwinder_stats(u)->jit_funcs_no_rows, 3);
	ms_unwinder_free(u);
}

/* A pc at or past the rows' stop (the trampoline's ret at 10, stop 11): no CFI. */
static void test_past_stop(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	add_both(u, PID);
	tramp_sample(PID, TRAMP + 12);	/* the padding after ret */
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 1);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	expect_frame(0, MS_MODULE_PERF_MAP, TRAMP + 12, 0);
	expect_named(0, stack->frames[0].module, TRAMP + 12, "py::tramp", TRAMP);
	/* At the ret itself (offset 10): the row there, CFA %rsp + 8. */
	memset(mem, 0xee, sizeof(mem));
	put(SP0, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(PID, TRAMP + 10, SP0 + 96, sizeof(mem));
	unwind(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	ms_unwinder_free(u);
}

/*
 * dwarf+fp: the walk ends in the classic JIT frame (its caller's return
 * address past the copy); the kernel's chain continues into the frameless
 * trampoline, whose rows are not a frame-pointer frame, so the chain's
 * next entry (which skipped the trampoline's caller) is not taken.
 */
static void test_fp_merge_stops_at_frameless(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf_fp, true);

	(void)state;
	add_both(u, PID);
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 96, SP0 + 200);		/* classic's saved %rbp: out of the copy */
	sample(PID, CLASSIC + 9, SP0 + 96, 100);	/* the return address at SP0 + 104: cut */
	smp->n_uchain = 4;
	smp->uchain[1] = TRAMP + 6;		/* after the trampoline's call */
	smp->uchain[2] = pc_of("t_outer_ret");	/* what the chain read next: not proved */
	smp->uchain[3] = 0x1234;
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 2);
	expect_frame(0, MS_MODULE_PERF_MAP, CLASSIC + 9, 0);
	expect_frame(1, MS_MODULE_PERF_MAP, TRAMP + 6, MS_FRAME_RETURN);
	assert_int_equal(stack->reason, MS_END_STACK_COPY);
	/* A frame-pointer JIT frame lets the chain go on (classic called from classic). */
	smp->uchain[1] = CLASSIC + 17;
	smp->uchain[2] = pc_of("t_fp_ret");
	smp->n_uchain = 3;
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 3);
	expect_frame(2, MS_MODULE_FILE, sym_in("dwarf-frames", "t_fp_ret"), MS_FRAME_RETURN);
	ms_unwinder_free(u);
}

/* Frames in the mapping outside every function stay anonymous. */
static void test_outside_functions(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	add_both(u, PID);
	sample(PID, JBASE + 0x800, SP0, sizeof(mem));
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_ANON, JBASE + 0x800, 0);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(n_frames, 0);
	ms_unwinder_free(u);
}

/* Rules are shared by functions whose frames are alike. */
static void test_rules_shared(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_jit_rules *r = ms_jit_rules_new();
	struct ms_jit_table *t = ms_jit_table_new();
	struct ms_problems p;

	(void)state;
	ms_problems_init(&p, "test");
	for (uint64_t i = 0; i < 100; i++) {
		struct ms_jit_func f = jit_func(PID, JBASE + i * 32, sizeof(trampoline), "t",
						READ_TIME, trampoline, sizeof(trampoline));

		assert_int_equal(ms_jit_table_add(t, r, &f, &p), MS_JIT_ADDED);
	}
	assert_int_equal(ms_jit_rules_count(r), 2);	/* %rsp + 8 and %rsp + 16 */
	assert_int_equal(ms_jit_table_count(t), 100);
	ms_jit_table_free(t);
	ms_jit_rules_free(r);
	ms_unwinder_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_leaf_to_elf, reset),
		cmocka_unit_test_setup(test_leaf_to_jit_caller, reset),
		cmocka_unit_test_setup(test_fp_method, reset),
		cmocka_unit_test_setup(test_mapping_time, reset),
		cmocka_unit_test_setup(test_exec, reset),
		cmocka_unit_test_setup(test_fork, reset),
		cmocka_unit_test_setup(test_read_path, reset),
		cmocka_unit_test_setup(test_latest_wins, reset),
		cmocka_unit_test_setup(test_bad_rows, reset),
		cmocka_unit_test_setup(test_past_stop, reset),
		cmocka_unit_test_setup(test_fp_merge_stops_at_frameless, reset),
		cmocka_unit_test_setup(test_outside_functions, reset),
		cmocka_unit_test_setup(test_rules_shared, reset),
	};

	ms_set_progname("unwind-jit-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}
