/*
 * Unit tests of ms-unwind's model (libcommon/unwind): the address space
 * (overlap, split, exec, fork, lookup), module identity and build ids, the
 * normalization of addresses through ELF segments, stacks and their end
 * reasons, no allocation per sample, the stage over a whole stream, and
 * the DWARF walk's fast paths (the sampled registers of ms-record's mask,
 * the memo of rules, the inline step) against the general ones.
 *
 * Files: tests/unit/data/elf-tiny (build id 0123...4567, built by the
 * suite) and this test binary itself, both found next to /proc/self/exe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "unwind/addrspace.h"
#include "dwarf/cfi.h"
#include "unwind/dwarf.h"
#include "elf/elffile.h"
#include "unwind/unwind.h"
#include "util/error.h"
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

static const uint8_t tiny_build_id[20] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23,
	0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
};

/* ---- address space ---- */

static void check_map(const struct ms_mapping *m, uint64_t start, uint64_t end, uint64_t pgoff,
		      uint32_t ref)
{
	assert_non_null(m);
	assert_int_equal(m->start, start);
	assert_int_equal(m->end, end);
	assert_int_equal(m->pgoff, pgoff);
	assert_int_equal(m->ref, ref);
}

static void test_addrspace_insert_find(void **state)
{
	struct ms_addrspace as = MS_ADDRSPACE_INIT;

	(void)state;
	assert_int_equal(ms_addrspace_insert(&as, 0x3000, 0x4000, 0, 3), 0);
	assert_int_equal(ms_addrspace_insert(&as, 0x1000, 0x2000, 0x100, 1), 0);
	assert_int_equal(ms_addrspace_insert(&as, 0x2000, 0x3000, 0x200, 2), 0);
	assert_int_equal(as.n, 3);
	check_map(ms_addrspace_find(&as, 0x1000), 0x1000, 0x2000, 0x100, 1);
	check_map(ms_addrspace_find(&as, 0x1fff), 0x1000, 0x2000, 0x100, 1);
	check_map(ms_addrspace_find(&as, 0x2000), 0x2000, 0x3000, 0x200, 2);
	check_map(ms_addrspace_find(&as, 0x3fff), 0x3000, 0x4000, 0, 3);
	assert_null(ms_addrspace_find(&as, 0xfff));
	assert_null(ms_addrspace_find(&as, 0x4000));
	assert_null(ms_addrspace_find(&as, 0));
	assert_null(ms_addrspace_find(&as, UINT64_MAX));
	/* An empty range changes nothing. */
	assert_int_equal(ms_addrspace_insert(&as, 0x5000, 0x5000, 0, 9), 0);
	assert_int_equal(as.n, 3);
	ms_addrspace_release(&as);
}

static void test_addrspace_overlap(void **state)
{
	struct ms_addrspace as = MS_ADDRSPACE_INIT;
	uint64_t gen;

	(void)state;
	/* [1000,5000) pgoff 0, then a mapping in its middle splits it. */
	ms_addrspace_insert(&as, 0x1000, 0x5000, 0, 1);
	gen = as.generation;
	ms_addrspace_insert(&as, 0x2000, 0x3000, 0x9000, 2);
	assert_true(as.generation != gen);
	assert_int_equal(as.n, 3);
	check_map(&as.maps[0], 0x1000, 0x2000, 0, 1);
	check_map(&as.maps[1], 0x2000, 0x3000, 0x9000, 2);
	/* The right piece keeps the file offset its first byte had. */
	check_map(&as.maps[2], 0x3000, 0x5000, 0x2000, 1);

	/* Overlap the left end of one and the right end of another. */
	ms_addrspace_insert(&as, 0x1800, 0x3800, 0, 3);
	assert_int_equal(as.n, 3);
	check_map(&as.maps[0], 0x1000, 0x1800, 0, 1);
	check_map(&as.maps[1], 0x1800, 0x3800, 0, 3);
	check_map(&as.maps[2], 0x3800, 0x5000, 0x2800, 1);

	/* Cover everything: one mapping left. */
	ms_addrspace_insert(&as, 0x0, 0x10000, 0, 4);
	assert_int_equal(as.n, 1);
	check_map(ms_addrspace_find(&as, 0x4000), 0, 0x10000, 0, 4);

	/* Same range again: replaced, not duplicated. */
	ms_addrspace_insert(&as, 0x0, 0x10000, 0x1000, 5);
	assert_int_equal(as.n, 1);
	check_map(&as.maps[0], 0, 0x10000, 0x1000, 5);
	ms_addrspace_release(&as);
}

static void test_addrspace_remove(void **state)
{
	struct ms_addrspace as = MS_ADDRSPACE_INIT;

	(void)state;
	ms_addrspace_insert(&as, 0x1000, 0x4000, 0, 1);
	ms_addrspace_insert(&as, 0x5000, 0x6000, 0, 2);
	/* munmap of a middle page splits; of a whole mapping drops it. */
	ms_addrspace_remove(&as, 0x2000, 0x3000);
	ms_addrspace_remove(&as, 0x5000, 0x6000);
	assert_int_equal(as.n, 2);
	check_map(&as.maps[0], 0x1000, 0x2000, 0, 1);
	check_map(&as.maps[1], 0x3000, 0x4000, 0x2000, 1);
	assert_null(ms_addrspace_find(&as, 0x2800));
	assert_null(ms_addrspace_find(&as, 0x5800));
	ms_addrspace_release(&as);
}

static void test_addrspace_many(void **state)
{
	struct ms_addrspace as = MS_ADDRSPACE_INIT;
	uint32_t i;

	(void)state;
	/* Inserted in a scrambled order; lookups must find each one. */
	for (i = 0; i < 1000; i++) {
		uint32_t k = (i * 617) % 1000;

		assert_int_equal(ms_addrspace_insert(&as, 0x10000 + k * 0x2000,
						     0x10000 + k * 0x2000 + 0x1000, k, k), 0);
	}
	assert_int_equal(as.n, 1000);
	for (i = 1; i < as.n; i++)
		assert_true(as.maps[i - 1].end <= as.maps[i].start);
	for (i = 0; i < 1000; i++) {
		const struct ms_mapping *m = ms_addrspace_find(&as, 0x10000 + i * 0x2000 + 0x800);

		assert_non_null(m);
		assert_int_equal(m->ref, i);
		assert_null(ms_addrspace_find(&as, 0x10000 + i * 0x2000 + 0x1800));
	}
	ms_addrspace_release(&as);
}

static void test_addrspace_clear_copy(void **state)
{
	struct ms_addrspace a = MS_ADDRSPACE_INIT, b = MS_ADDRSPACE_INIT;

	(void)state;
	ms_addrspace_insert(&a, 0x1000, 0x2000, 0, 1);
	ms_addrspace_insert(&a, 0x3000, 0x4000, 0, 2);
	assert_int_equal(ms_addrspace_copy(&b, &a), 0);
	ms_addrspace_clear(&a);
	assert_null(ms_addrspace_find(&a, 0x1000));
	check_map(ms_addrspace_find(&b, 0x3000), 0x3000, 0x4000, 0, 2);
	/* The copy is independent of the original. */
	ms_addrspace_insert(&a, 0x3000, 0x4000, 0, 7);
	check_map(ms_addrspace_find(&b, 0x3000), 0x3000, 0x4000, 0, 2);
	ms_addrspace_release(&a);
	ms_addrspace_release(&b);
}

/* ---- records for the unwinder ---- */

static struct ms_mmap make_mmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
				uint32_t prot, const char *path)
{
	struct ms_mmap m = {
		.pid = pid, .tid = pid, .start = start, .len = len, .pgoff = pgoff,
		.prot = prot, .cpumode = MS_CPUMODE_USER,
		.filename = { path, (uint32_t)strlen(path) },
	};
	return m;
}

static struct ms_sample *new_sample(uint32_t pid, uint32_t tid)
{
	struct ms_sample *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->pid = pid;
	s->tid = tid;
	s->time = 1000;
	s->period = 1000000;
	s->cpumode = MS_CPUMODE_USER;
	return s;
}

static struct ms_stack *stack_buf;

static int setup_stack(void **state)
{
	(void)state;
	stack_buf = calloc(1, sizeof(*stack_buf));
	return stack_buf ? 0 : -1;
}

static int teardown_stack(void **state)
{
	(void)state;
	free(stack_buf);
	return 0;
}

/* Drain the modules the last sample introduced; returns how many. */
static int drain_modules(struct ms_unwinder *u, struct ms_module *mods, int max)
{
	struct ms_module m;
	int n = 0;

	while (ms_unwinder_next_module(u, &m)) {
		if (n < max)
			mods[n] = m;
		n++;
	}
	return n;
}

static void test_unwind_kernel_only(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample(0, 0);
	struct ms_stack *st = stack_buf;
	struct ms_module mods[4];

	(void)state;
	assert_non_null(u);
	s->cpumode = MS_CPUMODE_KERNEL;
	s->n_kchain = 3;
	s->kchain[0] = 0xffffffff81001000;
	s->kchain[1] = 0xffffffff81002000;
	s->kchain[2] = 0xffffffff81003000;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->reason, MS_END_KERNEL_ONLY);
	assert_int_equal(st->n_frames, 3);
	assert_int_equal(st->frames[0].flags, MS_FRAME_KERNEL);
	assert_int_equal(st->frames[1].flags, MS_FRAME_KERNEL | MS_FRAME_RETURN);
	assert_int_equal(st->frames[2].address, 0xffffffff81003000);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].id, 0);
	assert_int_equal(mods[0].kind, MS_MODULE_KERNEL);
	assert_int_equal(mods[0].path.len, strlen("[kernel.kallsyms]"));
	assert_memory_equal(mods[0].path.ptr, "[kernel.kallsyms]", mods[0].path.len);
	assert_int_equal(st->frames[0].module, 0);
	/* Once only. */
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(drain_modules(u, mods, 4), 0);
	free(s);
	ms_unwinder_free(u);
}

static void test_unwind_anon_and_unknown(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample(100, 100);
	struct ms_stack *st = stack_buf;
	struct ms_mmap m = make_mmap(100, 0x10000, 0x1000, 0, PROT_READ | PROT_EXEC, "//anon");
	struct ms_module mods[4];

	(void)state;
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	/* Kernel part, then user: the IP in anonymous code, a return address
	 * in no mapping, and one more that must not appear. */
	s->n_kchain = 1;
	s->kchain[0] = 0xffffffff81001000;
	s->n_uchain = 3;
	s->uchain[0] = 0x10010;
	s->uchain[1] = 0x50000;
	s->uchain[2] = 0x10020;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->reason, MS_END_NO_MODULE);
	assert_int_equal(st->n_frames, 3);
	assert_int_equal(st->frames[1].address, 0x10010);
	assert_int_equal(st->frames[1].flags, 0);
	assert_int_equal(st->frames[2].address, 0x50000);
	assert_int_equal(st->frames[2].flags, MS_FRAME_RETURN);
	/* Ids dense in order of first use: kernel, anon, unknown. */
	assert_int_equal(drain_modules(u, mods, 4), 3);
	assert_int_equal(mods[0].kind, MS_MODULE_KERNEL);
	assert_int_equal(mods[1].kind, MS_MODULE_ANON);
	assert_int_equal(mods[1].id, 1);
	assert_int_equal(mods[2].kind, MS_MODULE_UNKNOWN);
	assert_int_equal(mods[2].id, 2);
	assert_int_equal(st->frames[0].module, 0);
	assert_int_equal(st->frames[1].module, 1);
	assert_int_equal(st->frames[2].module, 2);

	/* A chain that stays mapped ends because the chain ended. */
	s->n_kchain = 0;
	s->n_uchain = 2;
	s->uchain[1] = 0x10020;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->reason, MS_END_FP_CHAIN);
	assert_int_equal(st->n_frames, 2);
	assert_int_equal(drain_modules(u, mods, 4), 0);

	/* A sample of a process never described: nothing is guessed. */
	s->pid = s->tid = 555;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->reason, MS_END_NO_MODULE);
	assert_int_equal(st->n_frames, 1);
	assert_int_equal(st->frames[0].module, 2);
	free(s);
	ms_unwinder_free(u);
}

/* The module of the first user frame of a sample at pc in pid. */
static uint32_t module_at(struct ms_unwinder *u, uint32_t pid, uint64_t pc, uint32_t *reason)
{
	struct ms_sample *s = new_sample(pid, pid);
	struct ms_stack *st = stack_buf;

	s->n_uchain = 1;
	s->uchain[0] = pc;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	free(s);
	*reason = st->reason;
	assert_true(st->n_frames >= 1);
	return st->frames[0].module;
}

static void test_unwind_exec_fork_exit(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_mmap m1 = make_mmap(100, 0x10000, 0x1000, 0, PROT_READ | PROT_EXEC, "[anon:one]");
	struct ms_mmap m2 = make_mmap(100, 0x20000, 0x1000, 0, PROT_READ | PROT_EXEC, "[anon:two]");
	struct ms_comm exec = { .pid = 100, .tid = 100, .exec = true,
				.comm = { "new", 3 } };
	struct ms_task fork_proc = { .pid = 200, .ppid = 100, .tid = 200, .ptid = 100 };
	struct ms_task fork_thread = { .pid = 200, .ppid = 200, .tid = 201, .ptid = 200 };
	struct ms_task exit_t;
	uint32_t reason, one, two;

	(void)state;
	assert_int_equal(ms_unwinder_mmap(u, &m1), 0);
	one = module_at(u, 100, 0x10000, &reason);
	assert_int_equal(reason, MS_END_FP_CHAIN);

	/* fork: the child sees the parent's mappings. */
	assert_int_equal(ms_unwinder_fork(u, &fork_proc), 0);
	assert_int_equal(module_at(u, 200, 0x10000, &reason), one);
	assert_int_equal(reason, MS_END_FP_CHAIN);

	/* exec in the parent: its old mappings are gone, the child's stay. */
	assert_int_equal(ms_unwinder_comm(u, &exec), 0);
	module_at(u, 100, 0x10000, &reason);
	assert_int_equal(reason, MS_END_NO_MODULE);
	assert_int_equal(module_at(u, 200, 0x10000, &reason), one);
	assert_int_equal(ms_unwinder_mmap(u, &m2), 0);
	two = module_at(u, 100, 0x20000, &reason);
	assert_int_equal(reason, MS_END_FP_CHAIN);
	assert_true(two != one);
	module_at(u, 200, 0x20000, &reason);
	assert_int_equal(reason, MS_END_NO_MODULE);

	/* A thread shares its process's space. */
	assert_int_equal(ms_unwinder_fork(u, &fork_thread), 0);
	m1.pid = 200;
	m1.start = 0x30000;
	assert_int_equal(ms_unwinder_mmap(u, &m1), 0);
	assert_non_null(ms_unwinder_process(u, 200));
	assert_non_null(ms_unwinder_lookup(u, ms_unwinder_process(u, 200), 0x30000));

	/* A non-executable mapping over code removes it. */
	m1.prot = PROT_READ | PROT_WRITE;
	assert_int_equal(ms_unwinder_mmap(u, &m1), 0);
	assert_null(ms_unwinder_lookup(u, ms_unwinder_process(u, 200), 0x30000));
	assert_non_null(ms_unwinder_lookup(u, ms_unwinder_process(u, 200), 0x10000));

	/* The space goes when the last known thread exits, not before. */
	exit_t = (struct ms_task){ .pid = 200, .ppid = 100, .tid = 200, .ptid = 100 };
	assert_int_equal(ms_unwinder_exit(u, &exit_t), 0);
	assert_non_null(ms_unwinder_process(u, 200));
	exit_t.tid = 201;
	assert_int_equal(ms_unwinder_exit(u, &exit_t), 0);
	assert_null(ms_unwinder_process(u, 200));
	assert_non_null(ms_unwinder_process(u, 100));
	assert_int_equal(ms_unwinder_stats(u)->processes_dropped, 1);
	ms_unwinder_free(u);
}

static void test_unwind_kernel_mmap_ignored(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_mmap m = make_mmap(UINT32_MAX, 0xffffffffc0000000, 0x1000, 0,
				     PROT_READ | PROT_EXEC, "[kernel.kallsyms]_text");
	struct ms_mmap bad = make_mmap(100, UINT64_MAX - 0x10, 0x1000, 0, PROT_EXEC, "//anon");

	(void)state;
	m.cpumode = MS_CPUMODE_KERNEL;
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	assert_null(ms_unwinder_process(u, UINT32_MAX));
	assert_int_equal(ms_unwinder_stats(u)->kernel_mmaps, 1);
	/* A mapping that wraps around is a counted problem, not a crash. */
	assert_int_equal(ms_unwinder_mmap(u, &bad), 0);
	assert_int_equal(ms_problems_total(ms_unwinder_problems(u)), 1);
	assert_string_equal(ms_unwinder_problems(u)->entries[0].code, "bad-mapping");
	ms_unwinder_free(u);
}

static void test_unwind_depth(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_mmap m = make_mmap(7, 0x10000, 0x10000, 0, PROT_EXEC, "//anon");
	struct ms_sample *s = new_sample(7, 7);
	struct ms_stack *st = stack_buf;
	uint32_t i;

	(void)state;
	ms_unwinder_mmap(u, &m);
	s->n_kchain = MS_CHAIN_MAX;
	for (i = 0; i < MS_CHAIN_MAX; i++)
		s->kchain[i] = 0xffffffff81000000 + i;
	s->n_uchain = MS_CHAIN_MAX;
	for (i = 0; i < MS_CHAIN_MAX; i++)
		s->uchain[i] = 0x10000 + i;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->n_frames, 2 * MS_CHAIN_MAX);
	assert_true(st->n_frames <= MS_FRAMES_MAX);
	free(s);
	ms_unwinder_free(u);
}

/* ---- files: build ids, identity, normalization ---- */

static void test_build_id_tiny(void **state)
{
	struct ms_elf_file f;
	struct ms_elf_loads loads;
	uint64_t v;

	(void)state;
	assert_int_equal(ms_elf_file_open(&f, data_path("elf-tiny")), MS_SYM_OK);
	assert_int_equal(f.build_id_len, 20);
	assert_memory_equal(f.build_id, tiny_build_id, 20);
	assert_int_equal(ms_elf_loads_read(f.elf, &loads), 0);
	assert_true(loads.n >= 2);
	/* Offset 0 is in the first segment; a byte past every segment is in none. */
	assert_true(ms_elf_loads_vaddr(&loads, 0, &v));
	assert_false(ms_elf_loads_vaddr(&loads, 1ull << 40, &v));
	ms_elf_loads_release(&loads);
	ms_elf_file_close(&f);

	assert_int_equal(ms_elf_file_open(&f, "/nonexistent/elf"), MS_SYM_NO_FILE);
	assert_int_equal(ms_elf_file_open(&f, "/"), MS_SYM_NO_FILE);
	assert_int_equal(ms_elf_file_open(&f, "/proc/self/status"), MS_SYM_BAD_ELF);
}

/* The build id of this program from its loaded notes (not through libelf). */
static int note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint8_t *out = data;
	int i;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;	/* only the main program */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + 12 <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const char *name = p + 12;
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == 3 && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				out[0] = (uint8_t)nh->n_descsz;
				memcpy(out + 1, desc, nh->n_descsz > 20 ? 20 : nh->n_descsz);
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* A function of this program with a known address. */
__attribute__((noinline)) int unwind_test_marker(int x);
__attribute__((noinline)) int unwind_test_marker(int x)
{
	return x * 7 + 3;
}

/* The /proc/self/maps line that holds addr, as a mapping record. */
static struct ms_mmap self_mapping(uint64_t addr, char *path, size_t path_size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	struct ms_mmap m = { 0 };

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &n) < 7)
			continue;
		if (addr < start || addr >= end)
			continue;
		snprintf(path, path_size, "%s", line + n);
		path[strcspn(path, "\n")] = '\0';
		m.pid = m.tid = (uint32_t)getpid();
		m.start = start;
		m.len = end - start;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.prot = PROT_READ | (perms[2] == 'x' ? PROT_EXEC : 0);
		m.cpumode = MS_CPUMODE_USER;
		m.filename.ptr = path;
		m.filename.len = (uint32_t)strlen(path);
		break;
	}
	fclose(f);
	assert_true(m.len > 0);
	return m;
}

static void test_unwind_self_normalized(void **state)
{
	uint64_t pc = (uint64_t)(uintptr_t)&unwind_test_marker;
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample((uint32_t)getpid(), (uint32_t)getpid());
	struct ms_stack *st = stack_buf;
	struct ms_module mods[4];
	uint8_t note[21] = { 0 };
	char path[PATH_MAX];
	struct ms_mmap m = self_mapping(pc, path, sizeof(path));
	struct stat sb;
	Dl_info dl;

	(void)state;
	assert_true(dladdr((void *)(uintptr_t)pc, &dl) != 0);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	s->n_uchain = 2;
	s->uchain[0] = pc + 4;
	s->uchain[1] = pc + 8;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->n_frames, 2);
	/* This is a PIE whose first segment is at 0: vaddr = pc - load base. */
	assert_int_equal(st->frames[0].address, pc + 4 - (uint64_t)(uintptr_t)dl.dli_fbase);
	assert_int_equal(st->frames[0].flags, 0);
	assert_int_equal(st->frames[1].flags, MS_FRAME_RETURN);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].kind, MS_MODULE_FILE);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(mods[0].size, (uint64_t)sb.st_size);
	assert_int_equal(mods[0].ino, (uint64_t)sb.st_ino);
	assert_int_equal(mods[0].dev_maj, major(sb.st_dev));
	assert_int_equal(mods[0].mtime, ms_stat_mtime_ns(&sb));
	/* The build id read from the file equals the one in memory. */
	assert_int_equal(dl_iterate_phdr(note_cb, note), 1);
	assert_int_equal(mods[0].build_id_len, note[0]);
	assert_memory_equal(mods[0].build_id, note + 1, note[0]);
	assert_int_equal(ms_unwinder_stats(u)->modules_unverified, 0);
	free(s);
	ms_unwinder_free(u);
}

/* elf-tiny mapped by hand: its segments are known (see tiny.c). */
static struct ms_mmap tiny_mapping(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
				   struct stat *sb)
{
	const char *path = data_path("elf-tiny");
	static char copy[PATH_MAX + 64];
	struct ms_mmap m;

	snprintf(copy, sizeof(copy), "%s", path);
	assert_int_equal(stat(copy, sb), 0);
	m = make_mmap(pid, start, len, pgoff, PROT_READ | PROT_EXEC, copy);
	m.maj = major(sb->st_dev);
	m.min = minor(sb->st_dev);
	m.ino = sb->st_ino;
	return m;
}

/* Where offset off of elf-tiny's file lies in memory: from its headers. */
static void tiny_segment(int want_exec, uint64_t *offset, uint64_t *vaddr, uint64_t *filesz)
{
	struct ms_elf_file f;
	size_t n, i;

	assert_int_equal(ms_elf_file_open(&f, data_path("elf-tiny")), MS_SYM_OK);
	assert_int_equal(elf_getphdrnum(f.elf, &n), 0);
	*filesz = 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(f.elf, (int)i, &ph));
		if (ph.p_type != PT_LOAD || !!(ph.p_flags & PF_X) != want_exec)
			continue;
		/* The writable segment is the one whose vaddr differs from its offset. */
		if (!want_exec && ph.p_vaddr == ph.p_offset)
			continue;
		*offset = ph.p_offset;
		*vaddr = ph.p_vaddr;
		*filesz = ph.p_filesz;
		break;
	}
	ms_elf_file_close(&f);
	assert_true(*filesz > 0);
}

static void test_unwind_tiny_segments(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample(42, 42);
	struct ms_stack *st = stack_buf;
	struct ms_module mods[4];
	uint64_t off, vaddr, filesz, base = 0x7f0000000000, page;
	struct stat sb;
	struct ms_mmap m;

	(void)state;
	/* The text segment. */
	tiny_segment(1, &off, &vaddr, &filesz);
	page = off & ~0xfffull;
	m = tiny_mapping(42, base, 0x1000, page, &sb);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	/* A segment whose vaddr differs from its offset, mapped executable on purpose. */
	tiny_segment(0, &off, &vaddr, &filesz);
	assert_true(vaddr != off);
	page = off & ~0xfffull;
	m = tiny_mapping(42, base + 0x10000, 0x2000, page, &sb);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);

	s->n_uchain = 1;
	s->uchain[0] = base + 0x10000 + (off - page) + 8;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->n_frames, 1);
	assert_int_equal(st->frames[0].address, vaddr + 8);
	assert_int_equal(st->frames[0].flags, 0);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].kind, MS_MODULE_FILE);
	assert_int_equal(mods[0].build_id_len, 20);
	assert_memory_equal(mods[0].build_id, tiny_build_id, 20);
	assert_int_equal(mods[0].size, (uint64_t)sb.st_size);

	/* What an unwind method sees of the same address. */
	{
		struct ms_code_loc loc;

		assert_int_equal(ms_unwinder_resolve(u, ms_unwinder_process(u, 42),
						     s->uchain[0], &loc), 1);
		assert_int_equal(loc.kind, MS_MODULE_FILE);
		assert_true(loc.verified);
		assert_int_equal(loc.address, vaddr + 8);
		assert_int_equal(loc.flags, 0);
		assert_string_equal(loc.path, data_path("elf-tiny"));
		assert_non_null(ms_unwinder_module_slot(u, loc.module));
		assert_int_equal(ms_unwinder_resolve(u, ms_unwinder_process(u, 42), 0x1000, &loc), 0);
		assert_int_equal(loc.kind, MS_MODULE_UNKNOWN);
		assert_int_equal(ms_unwinder_resolve(u, NULL, s->uchain[0], &loc), 0);
	}

	/* Both mappings are the same module. */
	tiny_segment(1, &off, &vaddr, &filesz);
	s->uchain[0] = base + (off - (off & ~0xfffull));
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->frames[0].address, vaddr);
	assert_int_equal(st->frames[0].module, mods[0].id);
	assert_int_equal(drain_modules(u, mods, 4), 0);
	free(s);
	ms_unwinder_free(u);
}

static void test_unwind_identity_mismatch(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample(42, 42);
	struct ms_stack *st = stack_buf;
	struct ms_module mods[4];
	struct stat sb;
	struct ms_mmap m = tiny_mapping(42, 0x400000, 0x1000, 0x1000, &sb);

	(void)state;
	/* The record's inode is not the file's: the file was replaced. */
	m.ino = sb.st_ino + 1;
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	s->n_uchain = 1;
	s->uchain[0] = 0x400010;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	/* The frame keeps the file offset and says so. */
	assert_int_equal(st->frames[0].address, 0x1010);
	assert_int_equal(st->frames[0].flags, MS_FRAME_FILE_OFFSET);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].kind, MS_MODULE_FILE);
	assert_int_equal(mods[0].size, 0);
	assert_int_equal(mods[0].mtime, 0);
	assert_int_equal(mods[0].ino, sb.st_ino + 1);
	assert_int_equal(mods[0].build_id_len, 0);
	assert_int_equal(ms_unwinder_stats(u)->modules_unverified, 1);
	assert_string_equal(ms_unwinder_problems(u)->entries[0].code, "unverified-module");
	{
		struct ms_code_loc loc;

		assert_int_equal(ms_unwinder_resolve(u, ms_unwinder_process(u, 42), 0x400010, &loc), 1);
		assert_false(loc.verified);
		assert_int_equal(loc.flags, MS_FRAME_FILE_OFFSET);
	}

	/* A record with a build id (no device, inode) that the file does not have. */
	m = tiny_mapping(43, 0x400000, 0x1000, 0x1000, &sb);
	m.maj = m.min = 0;
	m.ino = 0;
	m.build_id_len = 20;
	memset(m.build_id, 0xaa, 20);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	s->pid = s->tid = 43;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->frames[0].flags, MS_FRAME_FILE_OFFSET);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].size, 0);
	assert_int_equal(mods[0].build_id_len, 20);
	assert_int_equal(mods[0].build_id[0], 0xaa);

	/* The right build id proves the file without device and inode. */
	memcpy(m.build_id, tiny_build_id, 20);
	m.pid = m.tid = 44;
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	s->pid = s->tid = 44;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(st->frames[0].flags, 0);
	assert_int_equal(drain_modules(u, mods, 4), 1);
	assert_int_equal(mods[0].size, (uint64_t)sb.st_size);
	assert_int_equal(mods[0].ino, (uint64_t)sb.st_ino);

	/* A synthesized record (device, inode, no build id) of the same file
	 * is the same module: its build id comes from the file. */
	m = tiny_mapping(45, 0x400000, 0x1000, 0x1000, &sb);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	s->pid = s->tid = 45;
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	assert_int_equal(drain_modules(u, mods, 4), 0);
	free(s);
	ms_unwinder_free(u);
}

static void test_unwind_no_alloc_per_sample(void **state)
{
	struct ms_unwinder *u = ms_unwinder_new(NULL);
	struct ms_sample *s = new_sample(42, 42);
	struct ms_stack *st = stack_buf;
	struct ms_module mods[4];
	struct stat sb;
	struct ms_mmap m = tiny_mapping(42, 0x400000, 0x1000, 0x1000, &sb);
	struct ms_mmap anon = make_mmap(42, 0x500000, 0x1000, 0, PROT_EXEC, "//anon");
	int i;

	(void)state;
	ms_unwinder_mmap(u, &m);
	ms_unwinder_mmap(u, &anon);
	s->n_kchain = 2;
	s->kchain[0] = 0xffffffff81000000;
	s->kchain[1] = 0xffffffff81000100;
	s->n_uchain = 4;
	s->uchain[0] = 0x400010;
	s->uchain[1] = 0x500010;
	s->uchain[2] = 0x400020;
	s->uchain[3] = 0x600000;
	/* Warm-up: modules are probed and get ids. */
	assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	drain_modules(u, mods, 4);
	n_allocs = 0;
	for (i = 0; i < 10000; i++) {
		s->uchain[0] = 0x400010 + (i & 0xff);
		assert_int_equal(ms_unwinder_sample(u, s, st), 0);
	}
	assert_int_equal(n_allocs, 0);
	assert_int_equal(st->reason, MS_END_NO_MODULE);
	free(s);
	ms_unwinder_free(u);
}

/* ---- the DWARF walk's fast paths ---- */

/* The registers ms-record samples, and perf's default (flags, cs, ss too). */
static void test_dwarf_sampled_masks(void **state)
{
	struct ms_sample *a = new_sample(1, 1), *b = new_sample(1, 1);
	struct ms_sampled_state sa, sb;
	struct ms_regstate ra, rb;
	uint32_t i, j;

	(void)state;
	a->regs_abi = b->regs_abi = 2;
	a->regs_mask = 0xff01ff;
	b->regs_mask = 0xff0fff;
	for (i = 0, j = 0; i < 24; i++) {
		if (!(b->regs_mask & (1ull << i)))
			continue;
		b->regs[j++] = 0x1000 + i;
		if (a->regs_mask & (1ull << i))
			a->regs[a->n_regs++] = 0x1000 + i;
	}
	b->n_regs = j;
	a->stack = b->stack = (const uint8_t *)"0123456789abcdef";
	a->stack_len = b->stack_len = 16;
	ms_sampled_state_init(&sa, &ra, a);
	ms_sampled_state_init(&sb, &rb, b);
	assert_int_equal(ra.known, (1u << MS_DWARF_REGS) - 1);
	assert_int_equal(rb.known, ra.known);
	assert_int_equal(ra.saved, 0);
	assert_int_equal(rb.saved, 0);
	for (i = 0; i < MS_DWARF_REGS; i++)
		assert_int_equal(ra.val[i], rb.val[i]);
	/* perf's order: AX BX CX DX SI DI BP SP IP, then R8-R15 at bits 16-23. */
	assert_int_equal(ra.val[MS_DW_RBX], 0x1001);
	assert_int_equal(ra.val[MS_DW_RDX], 0x1003);
	assert_int_equal(ra.val[MS_DW_RSP], 0x1007);
	assert_int_equal(ra.val[MS_DW_RA], 0x1008);
	assert_int_equal(ra.val[8], 0x1010);
	assert_int_equal(ra.val[MS_DW_R15], 0x1017);
	assert_int_equal(sa.start, 0x1007);
	assert_int_equal(sa.len, 16);
	/* Fewer values than the mask says: only those there are known. */
	a->n_regs = 8;
	ms_sampled_state_init(&sa, &ra, a);
	assert_int_equal(ra.known, 0xff);	/* AX..SP: DWARF 0-7; no IP */
	free(a);
	free(b);
}

/*
 * A recursion of DEPTH frames of 16 bytes (%rbx saved at CFA - 16, the
 * return address at CFA - 8) under main (return address only) under
 * _start (outermost), in a stack copy at SP.
 */
#define W_SP 0x7ffc0000ull
#define W_LEAF 0x401010ull
#define W_REC_RET 0x401020ull
#define W_MAIN_RET 0x401110ull
#define W_START_RET 0x401210ull
#define W_DEPTH 20
#define W_MODULE 3
#define W_DELTA 0x3ff000ull

struct test_source {
	struct ms_rule_source src;	/* first: find() gets it back */
	struct ms_cfi_rule rec, main, start;
	struct ms_cfi_rule *leaf;	/* when set, the rule at W_LEAF */
	uint32_t calls;
};

static int test_find(struct ms_rule_source *src, struct ms_uframe *f, uint64_t lookup,
		     const struct ms_cfi_rule **rule, const struct ms_dwarf_op **ops,
		     uint32_t *end)
{
	struct test_source *t = (struct test_source *)src;

	t->calls++;
	f->resolved = true;
	f->module = W_MODULE;
	f->address = f->pc - W_DELTA;
	f->loc_flags = MS_FRAME_FILE_OFFSET;
	*ops = NULL;
	if (lookup == W_LEAF && t->leaf)
		*rule = t->leaf;
	else if (lookup >= 0x401000 && lookup < 0x401100)
		*rule = &t->rec;
	else if (lookup >= 0x401100 && lookup < 0x401200)
		*rule = &t->main;
	else if (lookup >= 0x401200 && lookup < 0x401300)
		*rule = &t->start;
	else {
		*end = MS_END_NO_CFI;
		return 0;
	}
	return 1;
}

/* CFA = %rsp + 16, %rbx (when rbx) at CFA - 16, the return address at CFA - 8. */
static void test_rule(struct ms_cfi_rule *r, bool rbx, bool simple, bool fast)
{
	memset(r, 0, sizeof(*r));
	r->cfa_kind = MS_CFA_REG;
	r->cfa_reg = MS_DW_RSP;
	r->cfa_arg = 16;
	/* The psABI's caller-saved registers. */
	r->undef = 1u << MS_DW_RAX | 1u << MS_DW_RDX | 1u << MS_DW_RCX | 1u << MS_DW_RSI |
		   1u << MS_DW_RDI | 0xfu << 8;
	if (rbx)
		r->regs[r->n++] = (struct ms_reg_rule){ MS_DW_RBX, MS_REG_OFFSET, 0, -16 };
	r->regs[r->n++] = (struct ms_reg_rule){ MS_DW_RSP, MS_REG_VAL_OFFSET, 0, 0 };
	r->regs[r->n++] = (struct ms_reg_rule){ MS_DW_RA, MS_REG_OFFSET, 0, -8 };
	r->saved = (rbx ? 1u << MS_DW_RBX : 0) | 1u << MS_DW_RA;
	r->valued = 1u << MS_DW_RSP;
	r->flags = simple ? MS_CFI_SIMPLE : 0;
	if (fast) {
		/* As ms_cfi_find() makes them. */
		r->fast = true;
		r->ra_off = -8;
		r->clear = r->undef | r->saved | r->valued;
		r->set_known = r->valued | 1u << MS_DW_RA;
		r->set_saved = r->saved & ~(1u << MS_DW_RA);
	}
}

static struct test_source *test_source_new(bool simple, bool fast)
{
	struct test_source *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->src.find = test_find;
	test_rule(&t->rec, true, simple, fast);
	test_rule(&t->main, false, simple, fast);
	test_rule(&t->start, false, false, false);
	t->start.flags = MS_CFI_OUTERMOST;
	t->start.undef |= 1u << MS_DW_RA;
	t->start.n--;
	return t;
}

static uint8_t walk_mem[512];

static void walk_put(uint64_t addr, uint64_t v)
{
	memcpy(&walk_mem[addr - W_SP], &v, 8);
}

/* The sample: its registers (%rbx 0xb0b) and a copy of len bytes. */
static struct ms_sample *walk_sample(uint32_t len)
{
	struct ms_sample *s = new_sample(1, 1);
	uint32_t k;

	memset(walk_mem, 0xee, sizeof(walk_mem));
	for (k = 0; k < W_DEPTH; k++) {
		walk_put(W_SP + 16 * k, 100 + k);
		walk_put(W_SP + 16 * k + 8, k + 1 < W_DEPTH ? W_REC_RET : W_MAIN_RET);
	}
	walk_put(W_SP + 16 * W_DEPTH + 8, W_START_RET);
	s->regs_abi = 2;
	s->regs_mask = 0xff01ff;
	s->n_regs = 17;
	for (k = 0; k < 17; k++)
		s->regs[k] = 0x5000 + k;
	s->regs[1] = 0xb0b;		/* BX */
	s->regs[7] = W_SP;		/* SP */
	s->regs[8] = W_LEAF;		/* IP */
	s->stack = walk_mem;
	s->stack_len = len;
	return s;
}

struct walk_result {
	struct ms_uframe frames[64];
	struct ms_walk w;
	struct ms_regstate rs;
};

static void do_walk(struct test_source *t, const struct ms_sample *s, uint32_t max,
		    struct walk_result *out)
{
	struct ms_sampled_state st;

	memset(out, 0, sizeof(*out));
	ms_sampled_state_init(&st, &out->rs, s);
	assert_int_equal(ms_dwarf_walk(&out->rs, &st.reader, &t->src, out->frames, max, &out->w), 0);
}

/* Same frames, end, last rule's kind and final state. */
static void same_walk(const struct walk_result *a, const struct walk_result *b)
{
	assert_int_equal(a->w.n, b->w.n);
	assert_int_equal(a->w.end, b->w.end);
	assert_int_equal(a->w.rule == NULL, b->w.rule == NULL);
	for (uint32_t i = 0; i < a->w.n; i++) {
		assert_int_equal(a->frames[i].pc, b->frames[i].pc);
		assert_int_equal(a->frames[i].flags, b->frames[i].flags);
		assert_int_equal(a->frames[i].resolved, b->frames[i].resolved);
		assert_int_equal(a->frames[i].module, b->frames[i].module);
		assert_int_equal(a->frames[i].address, b->frames[i].address);
		assert_int_equal(a->frames[i].loc_flags, b->frames[i].loc_flags);
	}
	assert_int_equal(a->rs.known, b->rs.known);
	assert_int_equal(a->rs.saved, b->rs.saved);
	for (unsigned r = 0; r < MS_DWARF_REGS; r++)
		if ((a->rs.known | a->rs.saved) & (1u << r))
			assert_int_equal(a->rs.val[r], b->rs.val[r]);
}

static void test_dwarf_walk_memo(void **state)
{
	struct test_source *fast = test_source_new(true, true);
	struct test_source *plain = test_source_new(false, false);
	struct ms_sample *s = walk_sample(sizeof(walk_mem));
	struct walk_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint32_t i;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	do_walk(fast, s, 64, a);
	assert_int_equal(a->w.end, MS_END_OUTERMOST);
	assert_int_equal(a->w.n, W_DEPTH + 2);
	assert_int_equal(a->frames[0].pc, W_LEAF);
	assert_int_equal(a->frames[0].flags, 0);
	for (i = 1; i < W_DEPTH; i++) {
		assert_int_equal(a->frames[i].pc, W_REC_RET);
		assert_int_equal(a->frames[i].flags, MS_FRAME_RETURN);
	}
	assert_int_equal(a->frames[W_DEPTH].pc, W_MAIN_RET);
	assert_int_equal(a->frames[W_DEPTH + 1].pc, W_START_RET);
	for (i = 0; i < a->w.n; i++) {
		/* Bound as the source bound it, memo or not. */
		assert_true(a->frames[i].resolved);
		assert_int_equal(a->frames[i].module, W_MODULE);
		assert_int_equal(a->frames[i].address, a->frames[i].pc - W_DELTA);
		assert_int_equal(a->frames[i].loc_flags, MS_FRAME_FILE_OFFSET);
	}
	/* The outermost frame's state: %rbx last saved by the outermost recursion frame. */
	assert_int_equal(a->rs.val[MS_DW_RSP], W_SP + 16 * (W_DEPTH + 1));
	assert_true(a->rs.saved & (1u << MS_DW_RBX));
	assert_int_equal(a->rs.val[MS_DW_RBX], W_SP + 16 * (W_DEPTH - 1));
	/* One question per distinct lookup: the recursion's return came from the memo. */
	assert_int_equal(fast->calls, 4);
	assert_int_equal(fast->src.memo_hits, W_DEPTH - 2);
	/* Without an epoch, a later walk asks again. */
	do_walk(fast, s, 64, b);
	same_walk(a, b);
	assert_int_equal(fast->calls, 8);
	/* With one, answers last while it does. */
	fast->src.epoch = 5;
	do_walk(fast, s, 64, b);
	assert_int_equal(fast->calls, 12);
	do_walk(fast, s, 64, b);
	same_walk(a, b);
	assert_int_equal(fast->calls, 12);
	fast->src.epoch = 6;
	do_walk(fast, s, 64, b);
	assert_int_equal(fast->calls, 16);
	same_walk(a, b);

	/* Rules that are not simple: asked every time, and the general step agrees. */
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(plain->calls, W_DEPTH + 2);
	assert_int_equal(plain->src.memo_hits, 0);
	free(a);
	free(b);
	free(s);
	free(fast);
	free(plain);
}

/* The inline step ends walks as the general one does. */
static void test_dwarf_walk_fast_ends(void **state)
{
	struct test_source *fast = test_source_new(true, true);
	struct test_source *plain = test_source_new(false, false);
	struct walk_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct ms_sample *s;
	uint32_t len;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	/* Every cut of the copy: the frames up to the last whole return address. */
	for (len = 0; len <= 16 * W_DEPTH + 24; len++) {
		s = walk_sample(len);
		do_walk(fast, s, 64, a);
		do_walk(plain, s, 64, b);
		same_walk(a, b);
		if (len < 16 * W_DEPTH + 16) {
			assert_int_equal(a->w.end, MS_END_STACK_COPY);
			/* Frame k's return address is at SP + 16k + 8. */
			assert_int_equal(a->w.n, len / 16 + 1);
			assert_non_null(a->w.rule);
		} else {
			assert_int_equal(a->w.end, MS_END_OUTERMOST);
		}
		free(s);
	}
	/* The depth limit: the last frame's rule is kept. */
	s = walk_sample(sizeof(walk_mem));
	do_walk(fast, s, 5, a);
	do_walk(plain, s, 5, b);
	same_walk(a, b);
	assert_int_equal(a->w.end, MS_END_DEPTH);
	assert_int_equal(a->w.n, 5);
	assert_ptr_equal(a->w.rule, &fast->rec);
	/* A CFA that does not move outwards. */
	fast->rec.cfa_arg = plain->rec.cfa_arg = 0;
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.end, MS_END_CFA_NOT_OUTWARDS);
	assert_int_equal(a->w.n, 1);
	/* A zero return address: outermost, no rule. */
	fast->rec.cfa_arg = plain->rec.cfa_arg = 16;
	walk_put(W_SP + 8, 0);
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.end, MS_END_OUTERMOST);
	assert_int_equal(a->w.n, 1);
	assert_null(a->w.rule);
	/* A CFA register with no value: the general step says which. */
	s->regs_mask = 0xff017f;	/* no SP */
	s->n_regs = 16;
	memmove(&s->regs[7], &s->regs[8], 9 * sizeof(s->regs[0]));
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.end, MS_END_MISSING_REGISTER);
	/* An address no rule covers. */
	s = walk_sample(sizeof(walk_mem));
	walk_put(W_SP + 16 * 3 + 8, 0x900000);
	do_walk(fast, s, 64, a);
	assert_int_equal(a->w.end, MS_END_NO_CFI);
	assert_int_equal(a->w.n, 5);
	assert_null(a->w.rule);
	free(s);
	free(a);
	free(b);
	free(fast);
	free(plain);
}

static uint64_t enough_token;

static bool enough(struct ms_rule_source *src, uint64_t token)
{
	(void)src;
	return token == enough_token;
}

/* A walk copied from the walk cache is the walk. */
static void test_dwarf_walk_cache(void **state)
{
	struct test_source *fast = test_source_new(true, true);
	struct test_source *plain = test_source_new(false, false);
	struct walk_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct ms_walk_cache *c = ms_walk_cache_new();
	const struct ms_walk_cache_stats *cs;
	struct ms_cfi_rule leaf;
	struct ms_sample *s;
	uint64_t token;
	uint32_t calls, len;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	cs = ms_walk_cache_stats(c);
	fast->src.cache = c;
	fast->src.epoch = 5;
	s = walk_sample(sizeof(walk_mem));
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(cs->misses, 1);
	assert_int_equal(cs->stored, 1);
	token = a->w.token;
	assert_true(token != 0);
	assert_int_equal(b->w.token, 0);	/* no cache, no token */
	/* Again: copied, without a question to the source; lookups count as memo hits. */
	calls = fast->calls;
	fast->src.memo_hits = 0;
	do_walk(fast, s, 64, a);
	same_walk(a, b);
	assert_ptr_equal(a->w.rule, &fast->start);
	assert_int_equal(cs->hits, 1);
	assert_int_equal(fast->calls, calls);
	assert_int_equal(fast->src.memo_hits, W_DEPTH + 2);
	assert_int_equal(a->w.token, token);
	/* A register the walk does not read and a word it does not read: still the walk. */
	s->regs[1] = 0xbad;		/* BX */
	walk_put(W_SP + 16 * 3, 0xbad);	/* a saved %rbx */
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(cs->hits, 2);
	assert_int_equal(a->w.token, token);
	/* A return address that differs (0: outermost): walked, and another token. */
	walk_put(W_SP + 16 * 5 + 8, 0);
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.n, 6);
	assert_int_equal(cs->hits, 2);
	assert_true(a->w.token != token && a->w.token != 0);
	/* Both are kept (ways of one set): each copied again. */
	do_walk(fast, s, 64, a);
	same_walk(a, b);
	assert_int_equal(cs->hits, 3);
	walk_put(W_SP + 16 * 5 + 8, W_REC_RET);
	do_walk(fast, s, 64, a);
	assert_int_equal(a->w.token, token);
	assert_int_equal(cs->hits, 4);
	/* A caller that needs only the token of a kept walk: no frame is written. */
	enough_token = token;
	fast->src.token_enough = enough;
	do_walk(plain, s, 64, b);
	memset(a->frames, 0x5a, sizeof(a->frames));
	{
		struct ms_sampled_state st;

		ms_sampled_state_init(&st, &a->rs, s);
		assert_int_equal(ms_dwarf_walk(&a->rs, &st.reader, &fast->src, a->frames, 64,
					       &a->w), 0);
	}
	assert_int_equal(a->w.token, token);
	assert_int_equal(a->w.n, b->w.n);
	assert_int_equal(a->w.end, b->w.end);
	assert_ptr_equal(a->w.rule, &fast->start);
	assert_int_equal(a->frames[0].pc, 0x5a5a5a5a5a5a5a5aull);
	assert_int_equal(a->rs.known, 1u << MS_DW_RSP);
	assert_int_equal(a->rs.saved, 0);
	assert_int_equal(a->rs.val[MS_DW_RSP], b->rs.val[MS_DW_RSP]);
	/* Another token: the frames as ever. */
	enough_token = token + 1000;
	do_walk(fast, s, 64, a);
	same_walk(a, b);
	fast->src.token_enough = NULL;
	/* Another limit, another epoch: walked. */
	do_walk(fast, s, 5, a);
	do_walk(plain, s, 5, b);
	same_walk(a, b);
	assert_ptr_equal(a->w.rule, &fast->rec);
	fast->src.epoch = 6;
	do_walk(fast, s, 64, a);
	assert_int_equal(cs->hits, 6);	/* the two above for the token */
	assert_true(a->w.token != token);
	free(s);

	/* Every cut of the copy, after the whole copy was kept: each as walked. */
	for (len = 0; len <= 16 * W_DEPTH + 24; len++) {
		s = walk_sample(len);
		do_walk(fast, s, 64, a);
		do_walk(plain, s, 64, b);
		same_walk(a, b);
		assert_int_equal(a->w.end, len < 16 * W_DEPTH + 16 ? MS_END_STACK_COPY :
					  MS_END_OUTERMOST);
		/* A walk cut by the copy's end is not kept. */
		assert_int_equal(a->w.token != 0, a->w.end != MS_END_STACK_COPY);
		free(s);
	}

	/* A CFA from another sampled register (%rbp at the leaf) is part of the key. */
	leaf = fast->rec;
	leaf.cfa_reg = MS_DW_RBP;
	fast->leaf = plain->leaf = &leaf;
	/* (Other answers: another epoch, as the source promises.) */
	fast->src.epoch = 8;
	s = walk_sample(sizeof(walk_mem));
	s->regs[6] = W_SP;		/* BP: the same CFA as %rsp would give */
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.end, MS_END_OUTERMOST);
	token = a->w.token;
	do_walk(fast, s, 64, a);
	assert_int_equal(a->w.token, token);
	s->regs[6] = W_SP + 16;		/* one frame further out */
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.n, W_DEPTH + 1);
	assert_true(a->w.token != token);
	free(s);

	/* A walk that needs a general step is not kept. */
	fast->leaf = plain->leaf = NULL;
	/* CFA = %rbx + 16: after the first frame %rbx is saved, and read by the general step. */
	fast->rec.cfa_reg = plain->rec.cfa_reg = MS_DW_RBX;
	fast->src.epoch = 9;
	s = walk_sample(sizeof(walk_mem));
	s->regs[1] = W_SP;
	do_walk(fast, s, 64, a);
	do_walk(plain, s, 64, b);
	same_walk(a, b);
	assert_int_equal(a->w.token, 0);
	fast->rec.cfa_reg = plain->rec.cfa_reg = MS_DW_RSP;
	free(s);

	/* Many keys: the pool empties when full, and walks stay right. */
	fast->src.epoch = 10;
	for (uint32_t k = 0; k < 3000; k++) {
		s = walk_sample(sizeof(walk_mem));
		/* SP, where the copy starts: another key, the same walk moved by 16 k. */
		s->regs[7] = W_SP + 16 * k;
		do_walk(fast, s, 64, a);
		do_walk(plain, s, 64, b);
		same_walk(a, b);
		free(s);
	}
	assert_true(cs->resets >= 1);
	/* Walks are given tokens in turn, never one of an emptied pool's again. */
	assert_true(a->w.token > token);
	ms_walk_cache_free(c);
	free(a);
	free(b);
	free(fast);
	free(plain);
}

/* ---- the stage over a stream ---- */

static int memfd(void)
{
	int fd = memfd_create("unwind-test", 0);

	assert_true(fd >= 0);
	return fd;
}

/* An input stream: mapping, sample, a comm to pass through; trailer or not. */
static int write_input(bool trailer, bool garbage)
{
	int fd = memfd();
	struct ms_writer *w = ms_writer_open(fd, "input", 0);
	struct ms_mmap m = make_mmap(9, 0x10000, 0x1000, 0, PROT_EXEC, "//anon");
	struct ms_comm c = { .pid = 9, .tid = 9, .comm = { "nine", 4 } };
	struct ms_sample *s = new_sample(9, 9);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "unwind-test", "1"), 0);
	assert_int_equal(ms_mmap_pack(w, &m), 0);
	assert_int_equal(ms_comm_pack(w, &c), 0);
	s->n_uchain = 1;
	s->uchain[0] = 0x10010;
	assert_int_equal(ms_sample_pack(w, s), 0);
	assert_int_equal(ms_sample_pack(w, s), 0);
	if (trailer)
		assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	if (garbage)
		assert_int_equal(write(fd, "\xc1\xc1\xc1\xc1", 4), 4);
	lseek(fd, 0, SEEK_SET);
	free(s);
	return fd;
}

/* Kinds of the records of stream fd, in order; returns the read result. */
static int read_kinds(int fd, uint32_t *kinds, int max, int *n)
{
	struct ms_reader *r;
	struct ms_record rec;
	int rr;

	lseek(fd, 0, SEEK_SET);
	r = ms_reader_open(fd, "output");
	assert_non_null(r);
	*n = 0;
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (*n < max)
			kinds[*n] = rec.kind;
		(*n)++;
	}
	assert_int_equal(ms_reader_header(r)->n_producers, 2);
	assert_string_equal(ms_reader_header(r)->producers[1].name, "ms-unwind");
	ms_reader_free(r);
	return rr;
}

static void test_stage_stream(void **state)
{
	int in = write_input(true, false), out = memfd(), n;
	struct ms_unwind_stats stats;
	uint32_t kinds[16];

	(void)state;
	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, &stats), MS_EXIT_OK);
	assert_int_equal(read_kinds(out, kinds, 16, &n), MS_READ_END);
	/*
	 * mmap, comm pass through; the policy (fp: no stack copy) before the
	 * first stack; module before its first stack; samples consumed: the
	 * two samples of one stack are one definition and two references.
	 */
	assert_int_equal(n, 7);
	assert_int_equal(kinds[0], MS_REC_MMAP);
	assert_int_equal(kinds[1], MS_REC_COMM);
	assert_int_equal(kinds[2], MS_REC_INFO);
	assert_int_equal(kinds[3], MS_REC_MODULE);
	assert_int_equal(kinds[4], MS_REC_STACK_DEF);
	assert_int_equal(kinds[5], MS_REC_STACK_REF);
	assert_int_equal(kinds[6], MS_REC_STACK_REF);
	assert_int_equal(stats.samples, 2);
	assert_int_equal(stats.ends[MS_END_FP_CHAIN], 2);
	close(in);
	close(out);
}

/* The INFO "unwind-policy" record of stream fd, as text. */
static void policy_of(int fd, char *buf, size_t size)
{
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_info info;

	lseek(fd, 0, SEEK_SET);
	r = ms_reader_open(fd, "output");
	assert_non_null(r);
	buf[0] = '\0';
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		if (rec.kind != MS_REC_INFO)
			continue;
		assert_int_equal(ms_info_unpack(&rec, &info), 0);
		if (info.key.len == 13 && !memcmp(info.key.ptr, "unwind-policy", 13) && info.is_text)
			snprintf(buf, size, "%.*s", (int)info.text.len, info.text.ptr);
	}
	ms_reader_free(r);
}

static void test_stage_policy(void **state)
{
	struct ms_unwind_options o = { .policy = MS_UNWIND_DWARF_FP };
	int in = write_input(true, false), out = memfd();
	char policy[32];

	(void)state;
	/* Chosen: written as chosen, whatever the samples hold. */
	assert_int_equal(ms_unwind_stage(in, "input", out, &o, NULL), MS_EXIT_OK);
	policy_of(out, policy, sizeof(policy));
	assert_string_equal(policy, "dwarf+fp");
	close(out);
	/* Default: fp for samples without a stack copy. */
	out = memfd();
	lseek(in, 0, SEEK_SET);
	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, NULL), MS_EXIT_OK);
	policy_of(out, policy, sizeof(policy));
	assert_string_equal(policy, "fp");
	close(in);
	close(out);
}

static void test_stage_truncated(void **state)
{
	int in = write_input(false, false), out = memfd(), n;
	uint32_t kinds[16];

	(void)state;
	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, NULL), MS_EXIT_TRUNCATED);
	/* What was processed is there, without a trailer. */
	assert_int_equal(read_kinds(out, kinds, 16, &n), MS_READ_TRUNCATED);
	assert_int_equal(n, 7);
	close(in);
	close(out);

	in = write_input(false, true);
	out = memfd();
	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, NULL), MS_EXIT_ERROR);
	close(in);
	close(out);

	/* Not a stream at all. */
	in = memfd();
	assert_int_equal(write(in, "hello, world\n", 13), 13);
	lseek(in, 0, SEEK_SET);
	out = memfd();
	assert_int_equal(ms_unwind_stage(in, "input", out, NULL, NULL), MS_EXIT_ERROR);
	assert_int_equal(lseek(out, 0, SEEK_END), 0);
	close(in);
	close(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addrspace_insert_find),
		cmocka_unit_test(test_addrspace_overlap),
		cmocka_unit_test(test_addrspace_remove),
		cmocka_unit_test(test_addrspace_many),
		cmocka_unit_test(test_addrspace_clear_copy),
		cmocka_unit_test(test_unwind_kernel_only),
		cmocka_unit_test(test_unwind_anon_and_unknown),
		cmocka_unit_test(test_unwind_exec_fork_exit),
		cmocka_unit_test(test_unwind_kernel_mmap_ignored),
		cmocka_unit_test(test_unwind_depth),
		cmocka_unit_test(test_build_id_tiny),
		cmocka_unit_test(test_unwind_self_normalized),
		cmocka_unit_test(test_unwind_tiny_segments),
		cmocka_unit_test(test_unwind_identity_mismatch),
		cmocka_unit_test(test_unwind_no_alloc_per_sample),
		cmocka_unit_test(test_dwarf_sampled_masks),
		cmocka_unit_test(test_dwarf_walk_memo),
		cmocka_unit_test(test_dwarf_walk_fast_ends),
		cmocka_unit_test(test_dwarf_walk_cache),
		cmocka_unit_test(test_stage_stream),
		cmocka_unit_test(test_stage_policy),
		cmocka_unit_test(test_stage_truncated),
	};

	ms_set_progname("unwind-test");
	return cmocka_run_group_tests(tests, setup_stack, teardown_stack);
}
