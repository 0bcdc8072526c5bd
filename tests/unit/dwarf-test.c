/*
 * Unit tests of DWARF unwinding (libcommon/dwarf/cfi.c, dwarf.c, sample.c):
 * saved samples (registers in perf's order and copied stack bytes) over
 * tests/unit/data/dwarf-frames, an ELF whose call-frame information is
 * written by hand (see dwarf-frames.c), mapped at a fixed address. Each end
 * reason, a copy cut at every length (a prefix of the full stack, never an
 * invented frame), the PLT and realignment expressions, a signal frame,
 * the dwarf+fp merge rules, CFI from .debug_frame and from separate debug
 * files (build id, debuglink, a debuglink whose CRC differs), the
 * expression evaluator, and no allocation per sample.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "dwarf/cfi.h"
#include "unwind/dwarf.h"
#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "cfi-helpers.h"
#include "elf-helpers.h"

/* Count allocations to prove the per-sample path makes none. */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static size_t n_allocs;

void *malloc(size_t n)
{
	n_allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	n_allocs++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	n_allocs++;
	return __libc_realloc(p, n);
}

#define PID 77
#define BASE 0x7f1234000000ull		/* where the test ELF is mapped */
#define SP0 0x7ffe00001000ull		/* the sampled %rsp */
#define UNMAPPED 0x1234ull
#define PERF_MASK 0xff01ffull		/* AX..IP, R8..R15 */

static uint64_t sym(const char *name)
{
	return sym_in("dwarf-frames", name);
}

/* The whole file mapped executable at BASE: pc = BASE + file offset. */
static uint64_t pc_of(uint64_t vaddr)
{
	struct ms_elf_file f;
	struct ms_elf_loads l;
	uint64_t pc = 0;

	assert_int_equal(ms_elf_file_open(&f, data_path("dwarf-frames")), MS_SYM_OK);
	assert_int_equal(ms_elf_loads_read(f.elf, &l), 0);
	for (uint32_t i = 0; i < l.n; i++)
		if (vaddr >= l.load[i].vaddr && vaddr - l.load[i].vaddr < l.load[i].filesz)
			pc = BASE + vaddr - l.load[i].vaddr + l.load[i].offset;
	ms_elf_loads_release(&l);
	ms_elf_file_close(&f);
	assert_true(pc != 0);
	return pc;
}

/* Memoized: the no-allocation test makes samples inside its measurement. */
static uint64_t pc(const char *name)
{
	static struct {
		const char *name;
		uint64_t pc;
	} memo[32];

	for (size_t i = 0; i < sizeof(memo) / sizeof(memo[0]); i++) {
		if (!memo[i].name) {
			memo[i].name = name;
			memo[i].pc = pc_of(sym(name));
		}
		if (!strcmp(memo[i].name, name))
			return memo[i].pc;
	}
	return pc_of(sym(name));
}

static struct ms_mmap file_mapping(const char *file)
{
	static char path[PATH_MAX + 64];
	struct ms_mmap m = { 0 };
	struct stat sb;

	snprintf(path, sizeof(path), "%s", data_path(file));
	assert_int_equal(stat(path, &sb), 0);
	m.pid = m.tid = PID;
	m.start = BASE;
	m.len = ((uint64_t)sb.st_size + 0xfff) & ~0xfffull;
	m.prot = PROT_READ | PROT_EXEC;
	m.cpumode = MS_CPUMODE_USER;
	m.maj = major(sb.st_dev);
	m.min = minor(sb.st_dev);
	m.ino = sb.st_ino;
	m.filename = (struct ms_str){ path, (uint32_t)strlen(path) };
	return m;
}

/* An unwinder over file's mapping whose finder looks in debug_dir (NULL: none) only. */
static struct ms_unwinder *unwinder_for(const struct ms_unwind_method *method, const char *file,
					const char *debug_dir)
{
	static const char *dirs[1];
	struct ms_unwind_options o = { .method = method, .debug_dirs = dirs,
				       .n_debug_dirs = debug_dir ? 1 : 0, .system_debug_dir = "" };
	struct ms_mmap m = file_mapping(file);
	struct ms_unwinder *u;

	dirs[0] = debug_dir;	/* (one unwinder of this kind at a time) */
	u = ms_unwinder_new(&o);
	assert_non_null(u);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	return u;
}

static struct ms_unwinder *unwinder(const struct ms_unwind_method *method)
{
	return unwinder_for(method, "dwarf-frames", NULL);
}

/* A saved sample: registers by DWARF number, then stack words from SP0. */
struct saved {
	struct ms_sample s;
	uint64_t mem[64];
};

static struct saved *saved;
static struct ms_stack *stack;

static int setup(void **state)
{
	(void)state;
	/* Rules made from libdw, counted: no cache of rows (cficache-test has it). */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	saved = calloc(1, sizeof(*saved));
	stack = calloc(1, sizeof(*stack));
	return saved && stack ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(saved);
	free(stack);
	return 0;
}

enum { AX, BX, CX, DX, SI, DI, BP, SP, IP, R8 = 16, R10 = 18 };

/* A fresh sample at ip with %rsp = SP0, %rbp = bp, len bytes of stack. */
static struct ms_sample *sample(uint64_t ip, uint64_t bp, uint32_t len)
{
	struct ms_sample *s = &saved->s;
	uint32_t n = 0;

	memset(s, 0, sizeof(*s));
	s->pid = s->tid = PID;
	s->time = 1;
	s->period = 1;
	s->ip = ip;
	s->cpumode = MS_CPUMODE_USER;
	s->regs_abi = 2;
	s->regs_mask = PERF_MASK;
	for (int bit = 0; bit < 64; bit++) {
		uint64_t v = 0x1000 + (uint64_t)bit;	/* garbage the rules must not need */

		if (!(PERF_MASK & (1ull << bit)))
			continue;
		if (bit == SP)
			v = SP0;
		else if (bit == BP)
			v = bp;
		else if (bit == IP)
			v = ip;
		s->regs[n++] = v;
	}
	s->n_regs = n;
	s->n_uchain = 1;
	s->uchain[0] = ip;
	s->stack = (const uint8_t *)saved->mem;
	s->stack_len = len;
	return s;
}

/* Set the sampled register of perf number bit. */
static void set_reg(struct ms_sample *s, int bit, uint64_t v)
{
	uint32_t idx = 0;

	for (int b = 0; b < bit; b++)
		idx += !!(s->regs_mask & (1ull << b));
	s->regs[idx] = v;
}

/* The stack word at address addr. */
static void put(uint64_t addr, uint64_t v)
{
	assert_true(addr >= SP0 && addr < SP0 + sizeof(saved->mem));
	saved->mem[(addr - SP0) / 8] = v;
}

static void unwind(struct ms_unwinder *u)
{
	assert_int_equal(ms_unwinder_sample(u, &saved->s, stack), 0);
}

/*
 * Check the stack: frame i at the vaddr of names[i] in dwarf-frames (a
 * return address when flagged "+"), then reason.
 */
static void expect(uint32_t reason, int n, const char *const *names)
{
	if (stack->n_frames != (uint32_t)n || stack->reason != reason) {
		fprintf(stderr, "got %u frames, reason %s:", stack->n_frames,
			ms_stack_end_name(stack->reason));
		for (uint32_t i = 0; i < stack->n_frames; i++)
			fprintf(stderr, " %#llx", (unsigned long long)stack->frames[i].address);
		fprintf(stderr, "\n");
	}
	assert_int_equal(stack->reason, reason);
	assert_int_equal(stack->n_frames, n);
	for (int i = 0; i < n; i++) {
		bool ret = names[i][0] == '+';
		const char *name = names[i] + ret;

		if (!strcmp(name, "?"))
			continue;
		assert_int_equal(stack->frames[i].address, sym(name));
		assert_int_equal(stack->frames[i].flags, ret ? MS_FRAME_RETURN : 0);
	}
}

#define EXPECT(reason, ...) do { \
	static const char *const names_[] = { __VA_ARGS__ }; \
	expect(reason, (int)(sizeof(names_) / sizeof(names_[0])), names_); \
} while (0)

/*
 * leaf <- nofp <- fp <- outer, as the functions would have left it:
 *   leaf:  CFA SP0+32,  return address at SP0+24
 *   nofp:  CFA SP0+80,  %rbx at SP0+64, return address at SP0+72
 *   fp:    %rbp SP0+96, saved %rbp (0) at SP0+96, return address at SP0+104
 *   outer: the return address is undefined
 */
#define FULL 128
static struct ms_sample *chain_sample(uint32_t len)
{
	struct ms_sample *s = sample(pc("t_leaf_body"), SP0 + 96, len);

	memset(saved->mem, 0xee, sizeof(saved->mem));
	put(SP0 + 24, pc("t_nofp_ret"));
	put(SP0 + 64, 0xb0b);
	put(SP0 + 72, pc("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc("t_outer_ret"));
	return s;
}

static void test_complete(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	chain_sample(FULL);
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
	/* Again: from the caches, the same stack. */
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
	assert_true(ms_unwinder_stats(u)->pc_cache_hits >= 4);
	assert_int_equal(ms_unwinder_stats(u)->cfi_modules, 1);
	ms_unwinder_free(u);
}

static void test_truncated_every_length(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	for (uint32_t len = 0; len <= FULL; len++) {
		uint32_t want = len < 32 ? 1 : len < 80 ? 2 : len < 112 ? 3 : 4;
		static const char *const full[] = {
			"t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret",
		};

		chain_sample(len);
		unwind(u);
		expect(want == 4 ? MS_END_OUTERMOST : MS_END_STACK_COPY, (int)want, full);
	}
	/* Bytes past the copy are never read: poison them, same result. */
	chain_sample(80);
	for (uint64_t a = SP0 + 80; a < SP0 + sizeof(saved->mem); a += 8)
		put(a, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_STACK_COPY, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret");
	ms_unwinder_free(u);
}

static void test_no_cfi_no_module(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	chain_sample(FULL);
	put(SP0 + 24, pc("t_nocfi_ret"));
	unwind(u);
	EXPECT(MS_END_NO_CFI, "t_leaf_body", "+t_nocfi_ret");

	chain_sample(FULL);
	put(SP0 + 24, UNMAPPED);
	unwind(u);
	assert_int_equal(stack->reason, MS_END_NO_MODULE);
	assert_int_equal(stack->n_frames, 2);
	assert_int_equal(stack->frames[1].address, UNMAPPED);

	/* The first PC itself in no mapping. */
	sample(UNMAPPED, 0, FULL);
	unwind(u);
	assert_int_equal(stack->reason, MS_END_NO_MODULE);
	assert_int_equal(stack->n_frames, 1);
	ms_unwinder_free(u);
}

/*
 * More PCs than the PC cache has entries: every slot is taken and entries
 * are replaced in place, and every answer stays what it was, the first
 * time and again; a known stack is still found whole after each pass.
 */
static void test_pc_cache_full(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);
	const struct ms_unwind_stats *st = ms_unwinder_stats(u);
	const uint64_t many = 20000, first = 0x10000;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < many; i++) {
			sample(first + 16 * i, 0, FULL);
			unwind(u);
			assert_int_equal(stack->reason, MS_END_NO_MODULE);
			assert_int_equal(stack->n_frames, 1);
			assert_int_equal(stack->frames[0].address, first + 16 * i);
		}
		chain_sample(FULL);
		unwind(u);
		EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
		chain_sample(FULL);
		put(SP0 + 24, pc("t_nocfi_ret"));
		unwind(u);
		EXPECT(MS_END_NO_CFI, "t_leaf_body", "+t_nocfi_ret");
	}
	/* 20000 PCs in 8192 slots: the second pass missed again for most */
	assert_true(st->pc_cache_misses > many + many / 2);
	assert_int_equal(st->cfi_modules, 1);
	ms_unwinder_free(u);
}

static void test_missing_register(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);
	struct ms_sample *s;

	(void)state;
	/* t_r10's CFA is %r10, which a callee need not keep: unknown in a caller. */
	chain_sample(FULL);
	put(SP0 + 24, pc("t_r10_ret"));
	unwind(u);
	EXPECT(MS_END_MISSING_REGISTER, "t_leaf_body", "+t_r10_ret");

	/* As the innermost frame, %r10 was sampled: CFA = %r10. */
	s = sample(pc("t_r10_ret"), 0, FULL);
	set_reg(s, R10, SP0 + 8);
	put(SP0, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_r10_ret", "+t_outer_ret");

	/* A sample without registers: the first frame only. */
	s = chain_sample(FULL);
	s->regs_abi = 0;
	s->regs_mask = 0;
	s->n_regs = 0;
	unwind(u);
	EXPECT(MS_END_MISSING_REGISTER, "t_leaf_body");

	/* %rbp not sampled, and t_fp's CFA is %rbp + 16. */
	s = sample(pc("t_fp_ret"), 0, FULL);
	s->regs_mask = PERF_MASK & ~(1ull << BP);
	s->n_regs = 0;
	for (int bit = 0; bit < 64; bit++)
		if (s->regs_mask & (1ull << bit))
			s->regs[s->n_regs++] = bit == SP ? SP0 : bit == IP ? pc("t_fp_ret") : 0;
	unwind(u);
	EXPECT(MS_END_MISSING_REGISTER, "t_fp_ret");
	ms_unwinder_free(u);
}

static void test_cfa_not_outwards(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	/* %rbp below %rsp: CFA = %rbp + 16 is not above the sampled %rsp. */
	sample(pc("t_fp_ret"), SP0 - 64, FULL);
	unwind(u);
	EXPECT(MS_END_CFA_NOT_OUTWARDS, "t_fp_ret");

	/* A caller whose CFA is below its callee's: t_fp's %rbp restored low. */
	chain_sample(FULL);
	put(SP0 + 24, pc("t_fp_ret"));
	/* leaf's CFA is SP0 + 32; the sampled %rbp makes t_fp's SP0 + 16. */
	set_reg(&saved->s, BP, SP0);
	unwind(u);
	EXPECT(MS_END_CFA_NOT_OUTWARDS, "t_leaf_body", "+t_fp_ret");
	ms_unwinder_free(u);
}

static void test_depth(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);
	struct ms_user_stack *us = calloc(1, sizeof(*us));
	struct ms_sample *s = chain_sample(FULL);

	(void)state;
	assert_non_null(us);
	/* The method is asked for at most two frames: the stack ends at depth. */
	assert_int_equal(ms_unwind_method_dwarf.walk(u, ms_unwinder_process(u, PID), s, 2, us), 0);
	assert_int_equal(us->end, MS_END_DEPTH);
	assert_int_equal(us->n, 2);
	assert_int_equal(us->frames[1].pc, pc("t_nofp_ret"));
	assert_true(us->frames[1].flags & MS_FRAME_RETURN);
	/* Through the unwinder: kernel frames take room from the stack's. */
	s->n_kchain = MS_CHAIN_MAX;
	for (uint32_t i = 0; i < s->n_kchain; i++)
		s->kchain[i] = 0xffffffff81000000ull + i;
	unwind(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, MS_CHAIN_MAX + 4);
	free(us);
	ms_unwinder_free(u);
}

static void test_plt_expression(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	/* Bytes 0..10 of the entry: CFA = %rsp + 8. */
	sample(pc("t_plt"), 0, FULL);
	put(SP0, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_plt", "+t_outer_ret");
	/* From byte 11 on: CFA = %rsp + 16. */
	sample(pc("t_plt_late"), 0, FULL);
	put(SP0, 0xbad);
	put(SP0 + 8, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_plt_late", "+t_outer_ret");
	ms_unwinder_free(u);
}

static void test_realign_expression(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	/* CFA = [%rbp - 8] = SP0 + 48; the caller's %rbp saved at [%rbp]. */
	sample(pc("t_realign_body"), SP0 + 16, FULL);
	put(SP0 + 8, SP0 + 48);
	put(SP0 + 16, 0x5eed);
	put(SP0 + 40, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_realign_body", "+t_outer_ret");
	/* The read the CFA needs is past the copy. */
	saved->s.stack_len = 8;
	unwind(u);
	EXPECT(MS_END_STACK_COPY, "t_realign_body");
	ms_unwinder_free(u);
}

static void test_signal_frame(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);

	(void)state;
	/*
	 * Interrupted at t_r10's first instruction, which follows bytes with
	 * no CFI: looked up at the exact PC it is found, at PC - 1 it is not.
	 */
	sample(pc("t_sig_body"), 0, FULL);
	put(SP0, 0x5eed);
	put(SP0 + 8, pc("t_r10"));
	put(SP0 + 16, SP0 + 64);
	put(SP0 + 64, pc("t_outer_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_sig_body", "t_r10", "+t_outer_ret");
	ms_unwinder_free(u);
}

/* dwarf+fp ------------------------------------------------------------------ */

/*
 * outer <- fpA <- fpB <- nofp <- leaf: chain_sample with fpB's saved %rbp
 * pointing at fpA's frame (%rbp SP0+128, return address at SP0+136), and
 * the kernel's frame-pointer chain from the sampled %rbp (fpB's).
 */
static struct ms_sample *merge_sample(uint32_t len)
{
	struct ms_sample *s = chain_sample(len);

	put(SP0 + 96, SP0 + 128);
	put(SP0 + 104, pc("t_fp_ret"));
	put(SP0 + 128, 0);
	put(SP0 + 136, pc("t_outer_ret"));
	s->n_uchain = 3;
	s->uchain[1] = pc("t_fp_ret");
	s->uchain[2] = pc("t_outer_ret");
	return s;
}

static void test_merge_continues_proved_frames(void **state)
{
	struct ms_unwinder *d = unwinder(&ms_unwind_method_dwarf);
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf_fp);

	(void)state;
	/* The whole stack copied: both policies agree. */
	merge_sample(FULL + 16);
	unwind(d);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_fp_ret",
	       "+t_outer_ret");
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_fp_ret",
	       "+t_outer_ret");
	assert_int_equal(ms_unwinder_stats(u)->fp_frames, 0);

	/* The copy ends before fpB's return address: dwarf stops there... */
	merge_sample(104);
	unwind(d);
	EXPECT(MS_END_STACK_COPY, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret");
	/* ...and dwarf+fp continues from fpB, a proved standard frame, to outer. */
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_fp_ret",
	       "+t_outer_ret");
	assert_int_equal(ms_unwinder_stats(u)->fp_frames, 2);

	/* A chain that ends early ends the stack with fp-chain. */
	merge_sample(104)->n_uchain = 2;
	unwind(u);
	EXPECT(MS_END_FP_CHAIN, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_fp_ret");
	ms_unwinder_free(d);
	ms_unwinder_free(u);
}

static void test_merge_refused(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf_fp);
	struct ms_sample *s;

	(void)state;
	/* The last proved frame (nofp) keeps no frame pointer: nothing taken. */
	merge_sample(72);
	unwind(u);
	EXPECT(MS_END_STACK_COPY, "t_leaf_body", "+t_nofp_ret");

	/* A chain frame that keeps no frame pointer ends the stack after it. */
	s = merge_sample(104);
	s->uchain[1] = pc("t_nofp_ret");
	unwind(u);
	EXPECT(MS_END_STACK_COPY, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_nofp_ret");

	/* A chain frame without CFI ends it there, with that reason. */
	s = merge_sample(104);
	s->uchain[1] = pc("t_nocfi_ret");
	unwind(u);
	EXPECT(MS_END_NO_CFI, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_nocfi_ret");

	/* No CFI in the walk itself: never continued by the chain. */
	merge_sample(FULL);
	put(SP0 + 24, pc("t_nocfi_ret"));
	unwind(u);
	EXPECT(MS_END_NO_CFI, "t_leaf_body", "+t_nocfi_ret");

	/* A missing register: never continued either. */
	merge_sample(FULL);
	put(SP0 + 24, pc("t_r10_ret"));
	unwind(u);
	EXPECT(MS_END_MISSING_REGISTER, "t_leaf_body", "+t_r10_ret");
	assert_int_equal(ms_unwinder_stats(u)->fp_frames, 2);
	ms_unwinder_free(u);
}

/*
 * fpA <- fpB as the innermost frames: the walk restores fpA's %rbp from
 * the copy, and the kernel's chain must be replayed through the copy to
 * find where fpA's frame is in it.
 */
static void test_merge_replay(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf_fp);
	struct ms_sample *s;

	(void)state;
	/* fpB at t_fp_ret: %rbp SP0+16, saved %rbp SP0+48 at SP0+16, RA at SP0+24. */
	s = sample(pc("t_fp_ret"), SP0 + 16, 56);
	put(SP0 + 16, SP0 + 48);
	put(SP0 + 24, pc("t_fp_ret"));
	s->n_uchain = 3;
	s->uchain[1] = pc("t_fp_ret");		/* [SP0+24] */
	s->uchain[2] = pc("t_outer_ret");	/* [SP0+56], past the copy */
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_fp_ret", "+t_fp_ret", "+t_outer_ret");

	/* A chain that disagrees with the copy where both hold the step: refused. */
	s->uchain[1] = pc("t_nofp_ret");
	unwind(u);
	EXPECT(MS_END_STACK_COPY, "t_fp_ret", "+t_fp_ret");
	ms_unwinder_free(u);
}

/* CFI sources ---------------------------------------------------------------- */

/* The module record of file as ms-unwind would prove it. */
static struct ms_module module_of(const char *file)
{
	struct ms_module m;

	assert_true(module_at(data_path(file), &m));
	return m;
}

/*
 * Rules kept by row (see cfi.c) are the rules libdw makes at each
 * address: every few addresses of the .text of libc, python3 and the test
 * binary, looked up in a scrambled order (rows are made going up and
 * down), against a lookup of each address with rows off.
 */
static void test_cfi_rows(void **state)
{
	const char *files[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11",
				NULL };
	uint64_t hits = 0;

	(void)state;
	files[2] = data_path("dwarf-frames");
	for (int fi = 0; fi < 3; fi++) {
		struct ms_module m;
		struct ms_elf_file f;
		struct ms_cfi *rows, *plain;
		Elf_Scn *scn = NULL;
		uint64_t lo = 0, hi = 0, n, step;
		size_t shstrndx;

		if (!module_at(files[fi], &m))
			continue;	/* (python3 is optional; libc is there) */
		assert_int_equal(ms_elf_file_open(&f, files[fi]), MS_SYM_OK);
		assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
		while ((scn = elf_nextscn(f.elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(f.elf, shstrndx, sh.sh_name)) && !strcmp(name, ".text")) {
				lo = sh.sh_addr;
				hi = sh.sh_addr + sh.sh_size;
			}
		}
		ms_elf_file_close(&f);
		assert_true(hi > lo);
		rows = ms_cfi_open(files[fi], &m, NULL);
		plain = ms_cfi_open(files[fi], &m, NULL);
		assert_non_null(rows);
		assert_non_null(plain);
		ms_cfi_no_rows(plain);
		step = (hi - lo) / 60000 + 1;
		n = (hi - lo) / step;
		/* i * 40503 mod n, n not a multiple of it: every index once, scrambled. */
		for (uint64_t i = 0; i < n; i++) {
			uint64_t addr = lo + ((i * 40503) % n) * step;
			uint32_t ra, rp;
			int fa = ms_cfi_find(rows, addr, &ra), fp = ms_cfi_find(plain, addr, &rp);

			if (n % 40503 == 0)
				break;
			assert_int_equal(fa, fp);
			if (fa == 1)
				assert_same_rule(rows, ms_cfi_rule(rows, ra), plain, ms_cfi_rule(plain, rp));
		}
		hits += ms_cfi_stats(rows)->from_rows;
		assert_int_equal(ms_cfi_stats(plain)->from_rows, 0);
		ms_cfi_free(rows);
		ms_cfi_free(plain);
	}
	/* Rows answered most lookups. */
	assert_true(hits > 10000);
}

/*
 * Look t_fp_ret - 1 up in file's CFI, with a finder that looks in
 * debug_dir (NULL: nowhere) and beside the file; the source that had it,
 * or -1.
 */
static int source_of(const char *file, const char *debug_dir)
{
	const char *dirs[1] = { debug_dir };
	struct ms_debug_search search = { .dirs = dirs, .n_dirs = debug_dir ? 1 : 0,
					  .system_dir = "", .no_debuginfod = true };
	struct ms_debugfind *finder = ms_debugfind_new(&search);
	struct ms_module m = module_of(file);
	struct ms_cfi *c = ms_cfi_open(data_path(file), &m, finder);
	const struct ms_cfi_stats *st;
	uint32_t rule;
	int r, which = -1;

	assert_non_null(c);
	r = ms_cfi_find(c, sym_in(file, "t_fp_ret") - 1, &rule);
	assert_true(r >= 0);
	st = ms_cfi_stats(c);
	if (r) {
		assert_true(ms_cfi_rule(c, rule)->flags & MS_CFI_FRAME_POINTER);
		for (int i = 0; i < MS_CFI_SOURCES; i++)
			if (st->from[i])
				which = i;
	}
	ms_cfi_free(c);
	ms_debugfind_free(finder);
	return which;
}

static void test_cfi_sources(void **state)
{
	(void)state;
	assert_int_equal(source_of("dwarf-frames", NULL), MS_CFI_EH_FRAME);
	assert_int_equal(source_of("dwarf-frames-dbg", NULL), MS_CFI_DEBUG_FRAME);
	/* Stripped: its .debug_frame is in DIR/.build-id/xx/rest.debug. */
	assert_int_equal(source_of("dwarf-frames-stripped", data_path("debug")), MS_CFI_DEBUG_FILE);
	assert_int_equal(source_of("dwarf-frames-stripped", NULL), -1);
	/*
	 * No build id: the .gnu_debuglink file next to it proves nothing, as
	 * for ms-symbolize (a CRC is no identity), with a right CRC or not.
	 */
	assert_int_equal(source_of("dwarf-frames-link", NULL), -1);
	assert_int_equal(source_of("dwarf-frames-badlink", NULL), -1);
}

static void test_cfi_rules(void **state)
{
	struct ms_module m = module_of("dwarf-frames");
	struct ms_cfi *c = ms_cfi_open(data_path("dwarf-frames"), &m, NULL);
	const struct ms_cfi_rule *r;
	uint32_t idx, again;
	bool rax_undef = false, rbx_listed = false;

	(void)state;
	assert_non_null(c);
	assert_int_equal(ms_cfi_find(c, sym("t_leaf_body"), &idx), 1);
	r = ms_cfi_rule(c, idx);
	assert_int_equal(r->cfa_kind, MS_CFA_REG);
	assert_int_equal(r->cfa_reg, MS_DW_RSP);
	assert_int_equal(r->cfa_arg, 32);
	assert_int_equal(r->flags, MS_CFI_SIMPLE);
	/* psABI defaults, whatever libdw's: %rax unknown, %rbx the same. */
	rax_undef = r->undef & (1u << MS_DW_RAX);
	assert_false(r->undef & (1u << MS_DW_RBX));
	for (uint32_t i = 0; i < r->n; i++) {
		assert_true(r->regs[i].kind != MS_REG_UNDEF);
		if (r->regs[i].reg == MS_DW_RBX)
			rbx_listed = true;
		if (r->regs[i].reg == MS_DW_RA) {
			assert_int_equal(r->regs[i].kind, MS_REG_OFFSET);
			assert_int_equal(r->regs[i].arg, -8);
		}
	}
	assert_true(rax_undef);
	assert_false(rbx_listed);
	/* A second lookup is the same rule, made once. */
	assert_int_equal(ms_cfi_find(c, sym("t_leaf_body"), &again), 1);
	assert_int_equal(again, idx);
	assert_int_equal(ms_cfi_stats(c)->made, 1);

	assert_int_equal(ms_cfi_find(c, sym("t_outer_ret") - 1, &idx), 1);
	assert_true(ms_cfi_rule(c, idx)->flags & MS_CFI_OUTERMOST);
	assert_int_equal(ms_cfi_find(c, sym("t_nofp_ret") - 1, &idx), 1);
	assert_false(ms_cfi_rule(c, idx)->flags & MS_CFI_FRAME_POINTER);
	assert_int_equal(ms_cfi_find(c, sym("t_sig_body"), &idx), 1);
	assert_int_equal(ms_cfi_rule(c, idx)->flags, MS_CFI_SIGNAL);
	assert_int_equal(ms_cfi_find(c, sym("t_plt"), &idx), 1);
	assert_int_equal(ms_cfi_rule(c, idx)->cfa_kind, MS_CFA_EXPR);
	assert_false(ms_cfi_rule(c, idx)->flags & MS_CFI_SIMPLE);
	assert_int_equal(ms_cfi_find(c, sym("t_realign_ret") - 1, &idx), 1);
	assert_false(ms_cfi_rule(c, idx)->flags & MS_CFI_SIMPLE);
	assert_int_equal(ms_cfi_find(c, sym("t_nocfi") + 1, &idx), 0);
	assert_int_equal(ms_cfi_find(c, sym("t_nocfi") + 1, &idx), 0);
	assert_int_equal(ms_cfi_stats(c)->none, 1);
	ms_cfi_free(c);
}

static void test_debug_file_walk(void **state)
{
	struct ms_unwinder *u;

	(void)state;
	/* The stripped file's frames, by the rules of its separate debug file. */
	u = unwinder_for(&ms_unwind_method_dwarf, "dwarf-frames-stripped", data_path("debug"));
	chain_sample(FULL);
	/* Same code layout as dwarf-frames: its addresses are valid here. */
	assert_int_equal(sym_in("dwarf-frames-stripped", "t_fp_ret"), sym("t_fp_ret"));
	unwind(u);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
	ms_unwinder_free(u);

	/* A file that is not the mapped one (another inode) is never read. */
	u = ms_unwinder_new(&(struct ms_unwind_options){ .method = &ms_unwind_method_dwarf });
	{
		struct ms_mmap m = file_mapping("dwarf-frames");

		m.ino++;
		assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	}
	chain_sample(FULL);
	unwind(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->n_frames, 1);
	assert_int_equal(ms_unwinder_stats(u)->cfi_modules, 0);
	ms_unwinder_free(u);
}

/* Expressions ---------------------------------------------------------------- */

static int fixed_read(const struct ms_state_reader *r, uint64_t addr, uint64_t *out)
{
	(void)r;
	if (addr != 0x1000)
		return -1;
	*out = 0x1122334455667788ull;
	return 0;
}

static void test_expressions(void **state)
{
	struct ms_state_reader rd = { .read = fixed_read };
	struct ms_regstate rs = { .known = 1u << MS_DW_RSP | 1u << MS_DW_RA };
	uint64_t v;
	uint32_t end;

	(void)state;
	rs.val[MS_DW_RSP] = 0x7000;
	rs.val[MS_DW_RA] = 0x40000c;
	{
		/* The PLT's: %rsp + 8 + ((%rip & 15) >= 11) << 3 at byte 12. */
		struct ms_dwarf_op ops[] = {
			{ DW_OP_breg7, 0, 8, 0 }, { DW_OP_breg16, 2, 0, 0 }, { DW_OP_lit15, 4, 0, 0 },
			{ DW_OP_and, 5, 0, 0 }, { DW_OP_lit11, 6, 0, 0 }, { DW_OP_ge, 7, 0, 0 },
			{ DW_OP_lit3, 8, 0, 0 }, { DW_OP_shl, 9, 0, 0 }, { DW_OP_plus, 10, 0, 0 },
		};

		assert_true(ms_dwarf_expr_eval(ops, 9, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(v, 0x7010);
		rs.val[MS_DW_RA] = 0x400003;
		assert_true(ms_dwarf_expr_eval(ops, 9, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(v, 0x7008);
	}
	{
		/* 5 - 7 < 0 ? skip : ...; bra over a lit, deref_size 2. */
		struct ms_dwarf_op ops[] = {
			{ DW_OP_lit5, 0, 0, 0 }, { DW_OP_lit7, 1, 0, 0 }, { DW_OP_lt, 2, 0, 0 },
			{ DW_OP_bra, 3, 1, 0 },		/* to offset 7 */
			{ DW_OP_lit1, 6, 0, 0 },
			{ DW_OP_const2u, 7, 0x1000, 0 }, { DW_OP_deref_size, 10, 2, 0 },
		};

		assert_true(ms_dwarf_expr_eval(ops, 7, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(v, 0x7788);
	}
	{
		/* call_frame_cfa, neg, abs, over, swap, rot, pick, dup, drop, xor. */
		struct ms_dwarf_op ops[] = {
			{ DW_OP_call_frame_cfa, 0, 0, 0 }, { DW_OP_lit2, 1, 0, 0 },
			{ DW_OP_over, 2, 0, 0 }, { DW_OP_swap, 3, 0, 0 }, { DW_OP_rot, 4, 0, 0 },
			{ DW_OP_pick, 5, 2, 0 }, { DW_OP_dup, 7, 0, 0 }, { DW_OP_drop, 8, 0, 0 },
			{ DW_OP_neg, 9, 0, 0 }, { DW_OP_abs, 10, 0, 0 }, { DW_OP_xor, 11, 0, 0 },
		};

		/* cfa 100: [100 2 100] -> swap [100 100 2] -> rot [2 100 100] -> pick 2
		 * [2 100 100 2] -> ... abs(-2) = 2 -> 100 ^ 2 = 102 */
		assert_true(ms_dwarf_expr_eval(ops, 11, &rs, &rd, true, 100, &v, &end));
		assert_int_equal(v, 102);
		assert_false(ms_dwarf_expr_eval(ops, 1, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(end, MS_END_NO_CFI);
	}
	{
		struct ms_dwarf_op deref_out[] = { { DW_OP_lit8, 0, 0, 0 }, { DW_OP_deref, 1, 0, 0 } };
		struct ms_dwarf_op bad_reg[] = { { DW_OP_breg3, 0, 0, 0 } };
		struct ms_dwarf_op underflow[] = { { DW_OP_plus, 0, 0, 0 } };
		struct ms_dwarf_op unknown[] = {
			{ DW_OP_lit1, 0, 0, 0 }, { DW_OP_GNU_push_tls_address, 1, 0, 0 },
		};
		struct ms_dwarf_op div0[] = {
			{ DW_OP_lit1, 0, 0, 0 }, { DW_OP_lit0, 1, 0, 0 }, { DW_OP_div, 2, 0, 0 },
		};
		struct ms_dwarf_op loop[] = { { DW_OP_skip, 0, (uint64_t)-3, 0 } };

		assert_false(ms_dwarf_expr_eval(deref_out, 2, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(end, MS_END_STACK_COPY);
		assert_false(ms_dwarf_expr_eval(bad_reg, 1, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(end, MS_END_MISSING_REGISTER);
		assert_false(ms_dwarf_expr_eval(underflow, 1, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(end, MS_END_NO_CFI);
		assert_false(ms_dwarf_expr_eval(unknown, 2, &rs, &rd, false, 0, &v, &end));
		assert_int_equal(end, MS_END_NO_CFI);
		assert_false(ms_dwarf_expr_eval(div0, 3, &rs, &rd, false, 0, &v, &end));
		assert_false(ms_dwarf_expr_eval(loop, 1, &rs, &rd, false, 0, &v, &end));
		assert_false(ms_dwarf_expr_eval(NULL, 0, &rs, &rd, false, 0, &v, &end));
	}
}

/* The sampled reader: exactly the copied bytes, nothing around them. */
static void test_sampled_reader(void **state)
{
	struct ms_sampled_state st;
	struct ms_regstate rs;
	uint64_t v;

	(void)state;
	sample(0x1234, 0, 24);
	saved->mem[0] = 1;
	saved->mem[2] = 3;
	ms_sampled_state_init(&st, &rs, &saved->s);
	assert_int_equal(rs.val[MS_DW_RSP], SP0);
	assert_int_equal(rs.val[MS_DW_RA], 0x1234);
	assert_int_equal(rs.val[8], 0x1000 + 16);	/* perf's R8 is DWARF's 8 */
	assert_int_equal(rs.val[MS_DW_RDX], 0x1000 + 3);	/* perf DX (3) is DWARF 1 */
	assert_int_equal(rs.val[MS_DW_RBX], 0x1000 + 1);
	assert_int_equal(st.reader.read(&st.reader, SP0, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(st.reader.read(&st.reader, SP0 + 16, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(st.reader.read(&st.reader, SP0 + 17, &v), -1);
	assert_int_equal(st.reader.read(&st.reader, SP0 + 24, &v), -1);
	assert_int_equal(st.reader.read(&st.reader, SP0 - 8, &v), -1);
	assert_int_equal(st.reader.read(&st.reader, SP0 - 1, &v), -1);
	assert_int_equal(st.reader.read(&st.reader, 0, &v), -1);
}

static void test_no_alloc_per_sample(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf_fp);
	size_t before;

	(void)state;
	merge_sample(104);
	unwind(u);
	chain_sample(FULL);
	unwind(u);
	before = n_allocs;
	for (int i = 0; i < 1000; i++) {
		merge_sample(104);
		unwind(u);
		chain_sample((uint32_t)(i % FULL));
		unwind(u);
	}
	assert_int_equal(n_allocs, before);
	ms_unwinder_free(u);
}

/* Counters a tagged sample must keep as an untagged one does. */
static void same_counts(const struct ms_unwind_stats *a, const struct ms_unwind_stats *b)
{
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->stacks, b->stacks);
	assert_int_equal(a->kernel_frames, b->kernel_frames);
	assert_int_equal(a->user_frames, b->user_frames);
	assert_int_equal(a->dwarf_frames, b->dwarf_frames);
	assert_memory_equal(a->ends, b->ends, sizeof(a->ends));
}

/* ms_unwinder_sample_tagged() and ms_unwinder_sample() tell the same stacks. */
static void tagged(struct ms_unwinder *u, struct ms_unwinder *ref, int want, uint32_t want_tag)
{
	struct ms_stack *rs = malloc(sizeof(*rs));
	uint32_t tag = 12345;

	assert_non_null(rs);
	assert_int_equal(ms_unwinder_sample(ref, &saved->s, rs), 0);
	assert_int_equal(ms_unwinder_sample_tagged(u, &saved->s, stack, &tag), want);
	assert_int_equal(stack->reason, rs->reason);
	assert_int_equal(stack->pid, rs->pid);
	assert_int_equal(stack->time, rs->time);
	if (want) {
		assert_int_equal(tag, want_tag);
		assert_int_equal(stack->n_frames, 0);
	} else {
		assert_int_equal(tag, 12345);
		assert_int_equal(stack->n_frames, rs->n_frames);
		assert_memory_equal(stack->frames, rs->frames,
				    rs->n_frames * sizeof(rs->frames[0]));
	}
	same_counts(ms_unwinder_stats(u), ms_unwinder_stats(ref));
	free(rs);
}

static void test_tagged_stacks(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);
	struct ms_unwinder *ref = unwinder(&ms_unwind_method_dwarf);
	struct ms_sample *s;
	size_t before;

	(void)state;
	/* Made, tagged, then told by its tag without frames. */
	chain_sample(FULL);
	tagged(u, ref, 0, 0);
	ms_unwinder_tag(u, 7);
	tagged(u, ref, 1, 7);
	saved->s.time = 2;
	tagged(u, ref, 1, 7);
	/* Another stack: made until it is tagged. */
	chain_sample(FULL);
	put(SP0 + 24, pc("t_nocfi_ret"));
	tagged(u, ref, 0, 0);
	tagged(u, ref, 0, 0);
	ms_unwinder_tag(u, 9);
	tagged(u, ref, 1, 9);
	/* The first one still is. */
	chain_sample(FULL);
	tagged(u, ref, 1, 7);
	/* A cut copy's walk is not kept: made every time, tagged or not. */
	chain_sample(80);
	tagged(u, ref, 0, 0);
	ms_unwinder_tag(u, 11);
	tagged(u, ref, 0, 0);
	/* Kernel frames: not the walk's stack alone. */
	s = chain_sample(FULL);
	s->n_kchain = 1;
	s->kchain[0] = 0xffffffff81000000ull;
	tagged(u, ref, 0, 0);
	ms_unwinder_tag(u, 13);
	tagged(u, ref, 0, 0);
	/* ms_unwinder_sample() tags nothing. */
	chain_sample(FULL);
	put(SP0 + 24, UNMAPPED);
	unwind(u);
	assert_int_equal(ms_unwinder_sample(ref, &saved->s, stack), 0);
	ms_unwinder_tag(u, 15);
	tagged(u, ref, 0, 0);
	/* No allocation for a tagged stack. */
	chain_sample(FULL);
	before = n_allocs;
	for (int i = 0; i < 100; i++)
		tagged(u, ref, 1, 7);
	assert_int_equal(n_allocs, before + 100);	/* tagged()'s own */
	/* Another method forgets the tags. */
	assert_int_equal(ms_unwinder_set_method(u, &ms_unwind_method_fp), 0);
	assert_int_equal(ms_unwinder_set_method(u, &ms_unwind_method_dwarf), 0);
	assert_int_equal(ms_unwinder_sample_tagged(u, &saved->s, stack, &(uint32_t){ 0 }), 0);
	ms_unwinder_free(u);
	ms_unwinder_free(ref);
}

/* A new mapping over the same addresses is another module: no stale rule. */
static void test_generation(void **state)
{
	struct ms_unwinder *u = unwinder(&ms_unwind_method_dwarf);
	struct ms_mmap m = file_mapping("dwarf-frames");

	(void)state;
	chain_sample(FULL);
	unwind(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	m.ino++;	/* a rebuilt file at the same path: not proved */
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	unwind(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->n_frames, 1);
	assert_true(stack->frames[0].flags & MS_FRAME_FILE_OFFSET);
	ms_unwinder_free(u);
}

static void test_policy_names(void **state)
{
	(void)state;
	assert_int_equal(ms_unwind_policy_parse("dwarf"), MS_UNWIND_DWARF);
	assert_int_equal(ms_unwind_policy_parse("fp"), MS_UNWIND_FP);
	assert_int_equal(ms_unwind_policy_parse("dwarf+fp"), MS_UNWIND_DWARF_FP);
	assert_int_equal(ms_unwind_policy_parse("DWARF"), -1);
	assert_int_equal(ms_unwind_policy_parse(""), -1);
	assert_ptr_equal(ms_unwind_policy_method(MS_UNWIND_DWARF_FP), &ms_unwind_method_dwarf_fp);
	assert_string_equal(ms_unwind_policy_method(MS_UNWIND_DWARF)->name, "dwarf");
	assert_string_equal(ms_unwind_policy_name(MS_UNWIND_DWARF_FP), "dwarf+fp");
	assert_null(ms_unwind_policy_method(MS_UNWIND_AUTO));
}

/*
 * ms_sampled_pc_sp() gives what ms_sampled_state_init() gives for PC and
 * %rsp, for the usual 17 registers, other masks, 32-bit or no registers,
 * and a PC from the sample's IP or user chain.
 */
static void test_sampled_pc_sp(void **state)
{
	static struct ms_sample s;
	uint64_t masks[] = { 0xff01ff, 0x1ff, 0x180, 0x100, 0x80, 0xff00ff, 0 };
	unsigned seed = 7;

	(void)state;
	for (int i = 0; i < 2000; i++) {
		struct ms_sampled_state st;
		struct ms_regstate rs;
		uint64_t pc = 1, sp = 1;
		bool got, want;

		memset(&s, 0, sizeof(s));
		s.regs_abi = (uint32_t)(rand_r(&seed) % 4 ? 2 : rand_r(&seed) % 3);
		s.regs_mask = masks[rand_r(&seed) % 7];
		s.n_regs = (uint32_t)__builtin_popcountll(s.regs_mask);
		if (rand_r(&seed) % 10 == 0 && s.n_regs)
			s.n_regs--;		/* fewer registers than the mask says */
		for (uint32_t k = 0; k < s.n_regs; k++)
			s.regs[k] = 0x1000 * (k + 1) + (uint64_t)rand_r(&seed);
		s.cpumode = (uint32_t)(rand_r(&seed) % 3);
		s.ip = rand_r(&seed) % 2 ? 0x401000 : 0;
		s.n_uchain = (uint32_t)(rand_r(&seed) % 2);
		s.uchain[0] = 0x402000;
		ms_sampled_state_init(&st, &rs, &s);
		want = (rs.known & (1u << MS_DW_RA)) && (rs.known & (1u << MS_DW_RSP));
		got = ms_sampled_pc_sp(&s, &pc, &sp);
		assert_int_equal(got, want);
		if (want) {
			assert_true(pc == rs.val[MS_DW_RA]);
			assert_true(sp == rs.val[MS_DW_RSP]);
		}
	}
}

/* ---- a switch-out through the ms-unwind stage ---- */

static int stream_fd(void)
{
	int fd = memfd_create("dwarf-test", 0);

	assert_true(fd >= 0);
	return fd;
}

/* The mapping, then the saved sample as a SAMPLE (with_sample) and as a SWITCH_OUT. */
static int switch_out_input(bool with_sample)
{
	static struct ms_switch_out so;
	struct ms_mmap m = file_mapping("dwarf-frames");
	int fd = stream_fd();
	struct ms_writer *w = ms_writer_open(fd, "input", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "dwarf-test", "1"), 0);
	assert_int_equal(ms_mmap_pack(w, &m), 0);
	if (with_sample)
		assert_int_equal(ms_sample_pack(w, &saved->s), 0);
	so.sample = saved->s;
	so.sample.time = 2;
	so.state = 1;
	so.cause = MS_CAUSE_SLEEPING;
	assert_int_equal(ms_switch_out_pack(w, &so), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/*
 * Unwind the input through the stage: the one STACK_DEF into *def (its
 * frames checked), the ids of STACK_REF and OFF_CPU records.
 */
static void unwind_stream(int in, struct ms_stack *def, int64_t *ref_id, int64_t *off_id)
{
	const char *dirs[1] = { NULL };
	struct ms_unwind_options o = { .method = &ms_unwind_method_dwarf, .debug_dirs = dirs,
				       .system_debug_dir = "" };
	struct ms_unwind_stats stats;
	int out = stream_fd(), n_defs = 0;
	struct ms_reader *r;
	struct ms_record rec;
	uint32_t id;

	*ref_id = *off_id = -1;
	assert_int_equal(ms_unwind_stage(in, "input", out, &o, &stats), MS_EXIT_OK);
	assert_int_equal(stats.switch_outs, 1);
	assert_int_equal(lseek(out, 0, SEEK_SET), 0);
	r = ms_reader_open(out, "output");
	assert_non_null(r);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_STACK_DEF) {
			assert_int_equal(ms_stack_def_unpack(&rec, &id, def), 0);
			assert_int_equal(id, 0);
			n_defs++;
		} else if (rec.kind == MS_REC_STACK_REF) {
			struct ms_stack_ref ref;

			assert_int_equal(ms_stack_ref_unpack(&rec, &ref), 0);
			*ref_id = ref.id;
		} else if (rec.kind == MS_REC_OFF_CPU) {
			struct ms_off_cpu oc;

			assert_int_equal(ms_off_cpu_unpack(&rec, &oc), 0);
			assert_int_equal(oc.pid, PID);
			assert_int_equal(oc.tid, PID);
			assert_int_equal(oc.time, 2);
			assert_int_equal(oc.state, 1);
			assert_int_equal(oc.cause, MS_CAUSE_SLEEPING);
			*off_id = oc.id;
		} else {
			assert_true(rec.kind != MS_REC_SWITCH_OUT && rec.kind != MS_REC_STACK);
		}
	}
	/* one stack: the sample's and the switch-out's are the same */
	assert_int_equal(n_defs, 1);
	ms_reader_free(r);
	close(out);
	close(in);
}

/* A switch-out's saved registers and stack unwind to the frames the same sample gives. */
static void test_switch_out_unwinds_as_sample(void **state)
{
	struct ms_stack *first = calloc(1, sizeof(*first));
	int64_t ref_id, off_id;

	(void)state;
	assert_non_null(first);
	chain_sample(FULL);
	unwind_stream(switch_out_input(true), first, &ref_id, &off_id);
	assert_int_equal(ref_id, 0);
	assert_int_equal(off_id, 0);
	*stack = *first;
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
	/* the switch-out alone: its own STACK_DEF, of the same frames */
	unwind_stream(switch_out_input(false), stack, &ref_id, &off_id);
	assert_int_equal(ref_id, -1);
	assert_int_equal(off_id, 0);
	EXPECT(MS_END_OUTERMOST, "t_leaf_body", "+t_nofp_ret", "+t_fp_ret", "+t_outer_ret");
	assert_int_equal(stack->n_frames, first->n_frames);
	assert_memory_equal(stack->frames, first->frames,
			    first->n_frames * sizeof(first->frames[0]));
	free(first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_switch_out_unwinds_as_sample),
		cmocka_unit_test(test_sampled_pc_sp),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_no_cfi_no_module),
		cmocka_unit_test(test_pc_cache_full),
		cmocka_unit_test(test_missing_register),
		cmocka_unit_test(test_cfa_not_outwards),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_plt_expression),
		cmocka_unit_test(test_realign_expression),
		cmocka_unit_test(test_signal_frame),
		cmocka_unit_test(test_merge_continues_proved_frames),
		cmocka_unit_test(test_merge_refused),
		cmocka_unit_test(test_merge_replay),
		cmocka_unit_test(test_cfi_sources),
		cmocka_unit_test(test_cfi_rules),
		cmocka_unit_test(test_cfi_rows),
		cmocka_unit_test(test_debug_file_walk),
		cmocka_unit_test(test_expressions),
		cmocka_unit_test(test_sampled_reader),
		cmocka_unit_test(test_no_alloc_per_sample),
		cmocka_unit_test(test_tagged_stacks),
		cmocka_unit_test(test_generation),
		cmocka_unit_test(test_policy_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
