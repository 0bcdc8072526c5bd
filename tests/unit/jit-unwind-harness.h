/*
 * What the JIT unwind tests (unwind-jit-test, unwind-jitobj-test) share:
 * an unwinder with tests/unit/data/dwarf-frames mapped at BASE (and an
 * anonymous range of JIT code at JBASE), samples whose registers and
 * stack copy (mem, at SP0) they set, and the modules and FRAME records
 * the unwinder gives. Include after <cmocka.h> and elf-helpers.h; the
 * test allocates smp and stack in its setup.
 */
#ifndef MS_TESTS_JIT_UNWIND_HARNESS_H
#define MS_TESTS_JIT_UNWIND_HARNESS_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "stream/records.h"
#include "unwind/unwind.h"

#define PID 77
#define CHILD 78
#define BASE 0x7f1234000000ull		/* dwarf-frames */
#define JBASE 0x7f5500000000ull		/* the anonymous range of JIT code */
#define JLEN 0x10000ull
#define SP0 0x7ffe00001000ull
#define PERF_MASK 0xff01ffull

enum { AX, BX, CX, DX, SI, DI, BP, SP, IP };

static struct ms_sample *smp;
static uint64_t mem[64];
static struct ms_stack *stack;

/* The return addresses in dwarf-frames that the JIT code "calls" from. */
static uint64_t pc_of(const char *name)
{
	return pc_mapped_at("dwarf-frames", BASE, name);
}

static struct ms_mmap file_mapping(void)
{
	static char path[PATH_MAX + 64];
	struct ms_mmap m = { 0 };
	struct stat sb;

	snprintf(path, sizeof(path), "%s", data_path("dwarf-frames"));
	assert_int_equal(stat(path, &sb), 0);
	m.pid = m.tid = PID;
	m.time = 1;
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

static struct ms_mmap anon_mapping(uint32_t pid, uint64_t time)
{
	return (struct ms_mmap){
		.pid = pid, .tid = pid, .time = time, .start = JBASE, .len = JLEN,
		.prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER,
		.filename = { "//anon", 6 },
	};
}

/* The unwinder with dwarf-frames mapped (and the anonymous range when anon). */
static struct ms_unwinder *jit_unwinder(const struct ms_unwind_method *method, bool anon)
{
	struct ms_unwind_options o = { .method = method, .system_debug_dir = "" };
	struct ms_unwinder *u = ms_unwinder_new(&o);
	struct ms_mmap f = file_mapping(), a = anon_mapping(PID, 2);
	struct ms_comm c = { .pid = PID, .tid = PID, .time = 1, .comm = { "t", 1 } };

	assert_non_null(u);
	assert_int_equal(ms_unwinder_comm(u, &c), 0);
	assert_int_equal(ms_unwinder_mmap(u, &f), 0);
	if (anon)
		assert_int_equal(ms_unwinder_mmap(u, &a), 0);
	return u;
}

/* smp: a sample of pid at time and ip with %rsp SP0, %rbp bp, len bytes of mem copied. */
static struct ms_sample *jit_sample(uint32_t pid, uint64_t time, uint64_t ip, uint64_t bp,
				    uint32_t len)
{
	struct ms_sample *s = smp;
	uint32_t n = 0;

	memset(s, 0, sizeof(*s));
	s->pid = s->tid = pid;
	s->time = time;
	s->period = 1;
	s->ip = ip;
	s->cpumode = MS_CPUMODE_USER;
	s->regs_abi = 2;
	s->regs_mask = PERF_MASK;
	for (int bit = 0; bit < 24; bit++) {
		uint64_t v = 0x1000 + (uint64_t)bit;

		if (!(PERF_MASK & (1ull << bit)))
			continue;
		v = bit == SP ? SP0 : bit == BP ? bp : bit == IP ? ip : v;
		s->regs[n++] = v;
	}
	s->n_regs = n;
	s->n_uchain = 1;
	s->uchain[0] = ip;
	s->stack = (const uint8_t *)mem;
	s->stack_len = len;
	return s;
}

static void put(uint64_t addr, uint64_t v)
{
	assert_true(addr >= SP0 && addr < SP0 + sizeof(mem));
	mem[(addr - SP0) / 8] = v;
}

static void unwind(struct ms_unwinder *u)
{
	assert_int_equal(ms_unwinder_sample(u, smp, stack), 0);
}

/* The stream's modules of the last sample, by id (ids are dense from 0), and their paths. */
static struct ms_module mods[16];
static char mod_paths[16][64];
static uint32_t n_mods;
/* Its FRAME records. */
static struct {
	uint32_t module;
	uint64_t address, start;
	char name[64];
	uint32_t reason;
} frames[16];
static uint32_t n_frames;

static void drain(struct ms_unwinder *u)
{
	struct ms_module m;
	struct ms_frame f;

	while (ms_unwinder_next_module(u, &m)) {
		assert_true(m.id < 16);
		mods[m.id] = m;
		snprintf(mod_paths[m.id], sizeof(mod_paths[0]), "%.*s", (int)m.path.len, m.path.ptr);
		n_mods = m.id + 1 > n_mods ? m.id + 1 : n_mods;
	}
	n_frames = 0;
	while (ms_unwinder_next_frame(u, &f)) {
		assert_true(n_frames < 16);
		frames[n_frames].module = f.module;
		frames[n_frames].address = f.address;
		frames[n_frames].start = f.symbol_start;
		frames[n_frames].reason = f.reason;
		snprintf(frames[n_frames].name, sizeof(frames[0].name), "%.*s", (int)f.name.len,
			 f.name.ptr);
		n_frames++;
	}
}

static void expect_frame(uint32_t i, uint32_t kind, uint64_t address, uint32_t flags)
{
	assert_true(i < stack->n_frames);
	assert_true(stack->frames[i].module < n_mods);
	assert_int_equal(mods[stack->frames[i].module].kind, kind);
	assert_int_equal(stack->frames[i].address, address);
	assert_int_equal(stack->frames[i].flags, flags);
}

#endif
