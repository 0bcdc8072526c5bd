/*
 * The one debug-file search (elf/debugfind.h), as both stages use it: for
 * a module with several candidate debug files, ms-unwind (the CFI it
 * walks) and ms-symbolize (the names it gives) read the same file; a
 * module whose file is gone, or is another file, is unwound and named
 * from the file its build id proves; a debug-only file (no code) gives
 * names but no stack past the module.
 *
 * The module is data/pick: stripped (no symbols, no CFI), its
 * .gnu_debuglink naming pick.debug. Its candidates are builds of the same
 * code with the same build id whose function name and CFI differ (see
 * data/pick.c): pick-b names it pick_b and puts the CFA at %rsp + 32 in
 * its body, pick-c pick_c and %rsp + 48; pick-wrong has another build id
 * (pick_wrong, %rsp + 64). A sample in the body with %rsp = SP0 holds 0 at
 * SP0 + 24 (with pick-b's rule the return address is 0: the stack ends as
 * outermost after one frame), an unmapped address at SP0 + 40 (pick-c's:
 * a second frame, in no module) and another at SP0 + 56 (pick-wrong's);
 * without CFI the stack is one frame that ends with no-cfi. So each
 * stage's output says which file it read.
 *
 * The candidates sit in a scratch folder S, in the finder's order:
 *   S/d1/.build-id/5e/1ec7ed...0001.debug  pick-wrong (refused: another build id)
 *   S/d2/pick.debug                         pick-b (--debug-dir DIR/LINK, DIR/NAME.debug)
 *   S/mod/pick.debug                        pick-c (.gnu_debuglink, beside the module)
 * and the module is S/mod/pick.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dwarf/cfi.h"
#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "stream/records.h"
#include "symbols/symbolize.h"
#include "unwind/unwind.h"
#include "elf-helpers.h"
#include "tmpdir.h"

#define PID 77
#define BASE 0x7f1234000000ull		/* where the module is mapped */
#define SP0 0x7ffe00001000ull		/* the sampled %rsp */
#define PERF_MASK 0xff01ffull		/* AX..IP, R8..R15 */
#define PERF_SP 7
#define PERF_IP 8
#define RA_C 0x4000ull			/* pick-c's return address: in no mapping */
#define RA_WRONG 0x5000ull		/* pick-wrong's */

/* The build id of data/pick, pick-b and pick-c (libcommon/elf/local.mk: PICK_LINK). */
static const char build_id_hex[] = "5e1ec7ed" "0000000000000000000000000000" "0001";
_Static_assert(sizeof(build_id_hex) == 41, "20 bytes in hex");

static char scratch[PATH_MAX];
static char d1[PATH_MAX + 8], d2[PATH_MAX + 8];	/* S/d1 and S/d2: the --debug-dir folders */

/* S/rel, in a buffer of four that rotate. */
static const char *in_scratch(const char *rel)
{
	static char buf[4][PATH_MAX + 64];
	static int next;
	char *out = buf[next++ & 3];

	snprintf(out, PATH_MAX + 64, "%s/%s", scratch, rel);
	return out;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* The body of the function: its virtual address, the same in every build. */
static uint64_t body_vaddr(void)
{
	uint64_t b = sym_in("pick-b", "pick_b") + 4;

	assert_true(b == sym_in("pick-c", "pick_c") + 4);
	assert_true(b == sym_in("pick-wrong", "pick_wrong") + 4);
	return b;
}

/* Where the body runs with the whole module mapped at BASE from offset 0. */
static uint64_t body_pc(void)
{
	struct ms_elf_file f;
	struct ms_elf_loads l;
	uint64_t vaddr = body_vaddr(), pc = 0;

	assert_int_equal(ms_elf_file_open(&f, data_path("pick")), MS_SYM_OK);
	assert_int_equal(ms_elf_loads_read(f.elf, &l), 0);
	for (uint32_t i = 0; i < l.n; i++)
		if (vaddr >= l.load[i].vaddr && vaddr - l.load[i].vaddr < l.load[i].filesz)
			pc = BASE + vaddr - l.load[i].vaddr + l.load[i].offset;
	ms_elf_loads_release(&l);
	ms_elf_file_close(&f);
	assert_true(pc != 0);
	return pc;
}

static struct {
	struct ms_sample s;
	uint64_t mem[16];
	uint64_t regs[64];
} *saved;
static struct ms_stack *stack;

/* The sample in the body, its stack as the header comment says. */
static const struct ms_sample *body_sample(void)
{
	struct ms_sample *s = &saved->s;
	uint64_t ip = body_pc();
	uint32_t n = 0;

	memset(saved, 0, sizeof(*saved));
	s->pid = s->tid = PID;
	s->time = 1;
	s->period = 1;
	s->ip = ip;
	s->cpumode = MS_CPUMODE_USER;
	s->regs_abi = 2;
	s->regs_mask = PERF_MASK;
	for (int bit = 0; bit < 64; bit++) {
		if (!(PERF_MASK & (1ull << bit)))
			continue;
		s->regs[n++] = bit == PERF_SP ? SP0 : bit == PERF_IP ? ip : 0x1000 + (uint64_t)bit;
	}
	s->n_regs = n;
	s->n_uchain = 1;
	s->uchain[0] = ip;
	saved->mem[24 / 8] = 0;
	saved->mem[40 / 8] = RA_C;
	saved->mem[56 / 8] = RA_WRONG;
	s->stack = (const uint8_t *)saved->mem;
	s->stack_len = sizeof(saved->mem);
	return s;
}

/*
 * The mapping of the module S/mod/pick: known by device and inode (its
 * file must be there) or, with by_build_id, by the build id alone, as
 * ms-collect records mappings.
 */
static struct ms_mmap module_mapping(bool by_build_id)
{
	static char path[PATH_MAX + 64];
	struct ms_mmap m = { 0 };
	struct stat sb;

	snprintf(path, sizeof(path), "%s", in_scratch("mod/pick"));
	assert_int_equal(stat(data_path("pick"), &sb), 0);
	m.pid = m.tid = PID;
	m.start = BASE;
	m.len = ((uint64_t)sb.st_size + 0xfff) & ~0xfffull;
	m.prot = PROT_READ | PROT_EXEC;
	m.cpumode = MS_CPUMODE_USER;
	m.filename = (struct ms_str){ path, (uint32_t)strlen(path) };
	if (by_build_id) {
		m.build_id_len = 20;
		for (int i = 0; i < 20; i++) {
			unsigned v;

			sscanf(build_id_hex + 2 * i, "%2x", &v);
			m.build_id[i] = (uint8_t)v;
		}
	} else {
		assert_int_equal(stat(path, &sb), 0);
		m.maj = major(sb.st_dev);
		m.min = minor(sb.st_dev);
		m.ino = sb.st_ino;
	}
	return m;
}

/* What the two stages made of the sample, and which files they used. */
struct outcome {
	uint32_t reason;	/* the stack's end */
	uint32_t n_frames;
	uint64_t second;	/* the second frame's address, when there is one */
	char name[64];		/* the first frame's name, "" when none */
	uint32_t sym_reason;	/* the first frame's symbolization reason */
	char refused[PATH_MAX + 256];	/* ms-symbolize's debug-build-id-mismatch problem */
	bool found;		/* ms-unwind read the module from another file */
	char file[PATH_MAX];	/* that file */
	char cfi_debug[PATH_MAX];	/* the debug file ms-unwind's CFI read, "" when none */
	bool problem;		/* ms-unwind counted the module unverified */
	char problem_text[PATH_MAX + 256];
};

/*
 * Run both stages over the sample, with --debug-dir dirs (n of them) and
 * neither /usr/lib/debug nor debuginfod: ms-unwind's DWARF method, then
 * ms-symbolize over the module records and the stack ms-unwind made.
 */
static struct outcome run_stages(const char *const *dirs, uint32_t n, bool by_build_id)
{
	struct ms_unwind_options uo = { .method = &ms_unwind_method_dwarf, .debug_dirs = dirs,
					.n_debug_dirs = n, .system_debug_dir = "" };
	struct ms_symbolize_options so = { .debug_dirs = dirs, .n_debug_dirs = n,
					   .system_debug_dir = "" };
	struct ms_unwinder *u = ms_unwinder_new(&uo);
	struct ms_symbolizer *s = ms_symbolizer_new(&so);
	struct ms_mmap map = module_mapping(by_build_id);
	struct ms_process *proc;
	struct ms_code_loc loc;
	struct ms_module mod;
	struct ms_frame fr;
	struct outcome o = { 0 };
	const struct ms_problems *p;
	void **slot;
	bool is_new;

	assert_non_null(u);
	assert_non_null(s);
	assert_int_equal(ms_unwinder_mmap(u, &map), 0);
	assert_int_equal(ms_unwinder_sample(u, body_sample(), stack), 0);
	o.reason = stack->reason;
	o.n_frames = stack->n_frames;
	assert_true(o.n_frames >= 1);
	if (o.n_frames > 1)
		o.second = stack->frames[1].address;
	/* Which file ms-unwind read the module from, and its CFI's debug file. */
	assert_non_null(proc = ms_unwinder_process(u, PID));
	assert_int_equal(ms_unwinder_resolve(u, proc, body_pc(), &loc), 1);
	o.found = loc.found;
	snprintf(o.file, sizeof(o.file), "%s", loc.file ? loc.file : "");
	slot = ms_unwinder_module_slot(u, loc.module);
	if (*slot && ms_cfi_debug_file(*slot))
		snprintf(o.cfi_debug, sizeof(o.cfi_debug), "%s", ms_cfi_debug_file(*slot));
	p = ms_unwinder_problems(u);
	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, "unverified-module")) {
			o.problem = true;
			snprintf(o.problem_text, sizeof(o.problem_text), "%s", p->entries[i].detail);
		}
	/* ms-symbolize: the module records, then the first frame. */
	while (ms_unwinder_next_module(u, &mod))
		assert_int_equal(ms_symbolizer_module(s, &mod), 0);
	assert_int_equal(ms_symbolizer_frame(s, &stack->frames[0], &fr, &is_new), 0);
	snprintf(o.name, sizeof(o.name), "%.*s", (int)fr.name.len, fr.name.ptr);
	o.sym_reason = fr.reason;
	p = ms_symbolizer_problems(s);
	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, "debug-build-id-mismatch"))
			snprintf(o.refused, sizeof(o.refused), "%s", p->entries[i].detail);
	ms_symbolizer_free(s);
	ms_unwinder_free(u);
	return o;
}

/* The stack ms-unwind makes with pick-b's CFI, pick-c's, none. */
static void assert_walked_b(const struct outcome *o)
{
	assert_int_equal(o->reason, MS_END_OUTERMOST);
	assert_int_equal(o->n_frames, 1);
}

static void assert_walked_c(const struct outcome *o)
{
	assert_int_equal(o->reason, MS_END_NO_MODULE);
	assert_int_equal(o->n_frames, 2);
	assert_true(o->second == RA_C);
}

static void assert_not_walked(const struct outcome *o)
{
	assert_int_equal(o->reason, MS_END_NO_CFI);
	assert_int_equal(o->n_frames, 1);
}

static void assert_named(const struct outcome *o, const char *name)
{
	if (strcmp(o->name, name))
		fail_msg("ms-symbolize named the frame '%s', not '%s'", o->name, name);
}

static void mkdir_in(const char *rel)
{
	assert_int_equal(mkdir(in_scratch(rel), 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	/* No caches (keyed by build id, which every build here shares), no debuginfod. */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	unsetenv("DEBUGINFOD_URLS");
	saved = calloc(1, sizeof(*saved));
	stack = calloc(1, sizeof(*stack));
	if (!saved || !stack)
		return -1;
	tmpdir_make(scratch, sizeof(scratch), "debugfind-test");
	snprintf(d1, sizeof(d1), "%s/d1", scratch);
	snprintf(d2, sizeof(d2), "%s/d2", scratch);
	mkdir_in("mod");
	mkdir_in("d1");
	mkdir_in("d1/.build-id");
	mkdir_in("d1/.build-id/5e");
	mkdir_in("d2");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(saved);
	free(stack);
	return tmpdir_remove(scratch);
}

/* Every candidate in place: a fresh layout for each test. */
static void lay_out(void)
{
	char wrong_by_id[64];

	snprintf(wrong_by_id, sizeof(wrong_by_id), "d1/.build-id/%.2s/%s.debug", build_id_hex,
		 build_id_hex + 2);
	copy_file(data_path("pick"), in_scratch("mod/pick"));
	copy_file(data_path("pick-wrong"), in_scratch(wrong_by_id));
	copy_file(data_path("pick-b"), in_scratch("d2/pick.debug"));
	copy_file(data_path("pick-c"), in_scratch("mod/pick.debug"));
}

static void test_same_file_by_order(void **state)
{
	const char *dirs[2] = { d1, d2 };
	struct outcome o;

	(void)state;
	lay_out();
	/* d1 refuses its file (another build id); d2's DIR/LINK comes before the debuglink. */
	o = run_stages(dirs, 2, false);
	assert_walked_b(&o);
	assert_named(&o, "pick_b");
	assert_string_equal(o.cfi_debug, in_scratch("d2/pick.debug"));
	assert_false(o.found);
	assert_string_equal(o.file, in_scratch("mod/pick"));

	/* Without d2: the file beside the module that its .gnu_debuglink names. */
	o = run_stages(dirs, 1, false);
	assert_walked_c(&o);
	assert_named(&o, "pick_c");
	assert_string_equal(o.cfi_debug, in_scratch("mod/pick.debug"));

	/* Only the refused one: neither stage uses it. */
	assert_int_equal(unlink(in_scratch("mod/pick.debug")), 0);
	o = run_stages(dirs, 1, false);
	assert_not_walked(&o);
	assert_named(&o, "");
	assert_int_equal(o.sym_reason, MS_SYM_NO_SYMBOL);
	assert_non_null(strstr(o.refused, "/d1/.build-id/5e/1ec7ed"));
	assert_string_equal(o.cfi_debug, "");
}

static void test_module_gone(void **state)
{
	const char *dirs[2] = { d1, d2 };
	struct outcome o;

	(void)state;
	lay_out();
	assert_int_equal(unlink(in_scratch("mod/pick")), 0);
	/*
	 * Gone: no debuglink to follow, so d2's file by its name (DIR/NAME.debug)
	 * stands in for the module, for both stages; the frame's address is
	 * the virtual address it would have been.
	 */
	o = run_stages(dirs, 2, true);
	assert_walked_b(&o);
	assert_named(&o, "pick_b");
	assert_true(o.found);
	assert_string_equal(o.file, in_scratch("d2/pick.debug"));
	assert_false(o.problem);
	assert_true(stack->frames[0].address == body_vaddr());
	assert_int_equal(stack->frames[0].flags & MS_FRAME_FILE_OFFSET, 0);

	/* Another file at the path (its build id differs): the same. */
	copy_file(data_path("pick-wrong"), in_scratch("mod/pick"));
	o = run_stages(dirs, 2, true);
	assert_walked_b(&o);
	assert_named(&o, "pick_b");
	assert_true(o.found);

	/* Nothing proved: the stack ends in the module, which the problem names. */
	o = run_stages(dirs, 1, true);
	assert_not_walked(&o);
	assert_false(o.found);
	assert_true(o.problem);
	assert_non_null(strstr(o.problem_text, in_scratch("mod/pick")));
	assert_true(stack->frames[0].flags & MS_FRAME_FILE_OFFSET);
}

static void test_debug_only_file(void **state)
{
	const char *dirs[1] = { d2 };
	struct outcome o;

	(void)state;
	lay_out();
	assert_int_equal(unlink(in_scratch("mod/pick")), 0);
	/* A debug-only copy (objcopy --only-keep-debug): names and lines, no code. */
	copy_file(data_path("pick-b.debug"), in_scratch("d2/pick.debug"));
	o = run_stages(dirs, 1, true);
	assert_not_walked(&o);
	assert_false(o.found);
	assert_true(o.problem);
	assert_non_null(strstr(o.problem_text, in_scratch("mod/pick")));
	assert_non_null(strstr(o.problem_text, in_scratch("d2/pick.debug")));
	assert_non_null(strstr(o.problem_text, "debug file without the code"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_file_by_order),
		cmocka_unit_test(test_module_gone),
		cmocka_unit_test(test_debug_only_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
