/*
 * mkpystream: write on stdout the stream ms-decode would give ms-unwind
 * for a Python process sampled with the BPF walker, without a collector
 * (tests/0770-python-splice.bats):
 *
 *   mkpystream [--no-engine] ELF
 *
 * Process 88 maps ELF (tests/unit/data/fakepy: an interpreter's stand-in
 * with exact CFI). PY_CODE records name four codes: <module> (main.py,
 * first line 1), Worker.run (main.py, 10), Worker.run (other.py, 30) and
 * one unreadable; each table gives code units 0-3 the line after the
 * first line, 4-7 the one after that. INFO python "bpf" says an engine
 * ran (not with --no-engine). Then samples, their user stacks unwound by
 * DWARF from register states and stack bytes made here, innermost first
 * (L an activation of the loop, Lc its .cold part, h interp_helper):
 *   time 1001  c_leaf L py_main + [run@11, <module>@3 ENTRY]     placed
 *   time 1002  c_leaf L h Lc py_main + [run@11 ENTRY, run'@32, <module>@2 ENTRY]
 *   time 1003  c_leaf L py_main + [run ENTRY, <module> ENTRY]    unplaced
 *   time 1004  c_leaf L h Lc py_main + [run@12, unreadable], too deep
 *   time 1005, 1006  c_leaf L py_main, no walker record          unknown
 *   time 1007  as 1001 (its native stack as 1005's)              placed
 *   a record for tid 89 at 1009, then the sample of tid 88 at 1009: unpaired
 *   time 1010  c_leaf py_main + [no thread]                      unchanged
 *   a record at 1011 that no sample follows: unpaired
 *
 *   mkpystream --snapshot ELF
 *
 * writes instead the stream of a recording with the snapshot engine
 * (INFO python "snapshot"): the same codes, thread 90 "worker" beside
 * 88, no walker record, thread snapshots (PY_SNAPSHOT) in three rounds:
 *   2000  88 [run@11, <module>@3] held     90 no frames, released
 *   2500  a sample of 88: c_leaf L py_main, which stays native
 *   3000  88 as at 2000, held              90 changed, released
 *   4000  88 [run'@32, <module>@2] released   90 [unreadable] held
 *
 *   mkpystream --stacks < STREAM
 *
 * prints instead each STACK_DEF of STREAM (ms-unwind's): its id, its end
 * and a letter a frame, innermost first: P an interpreted frame (no
 * address), L a frame of an interpreter (MS_FRAME_INTERPRETER), - any
 * other; and the module records' kinds and paths.
 *
 *   mkpystream --inject PID DEPTH < STREAM
 *
 * copies instead a decoded STREAM (a real recording's), putting before
 * each sample of process PID a walker record of a recursion of up to
 * DEPTH frames of one code and a <module> frame (one segment), with the
 * two codes' PY_CODE records first: the Python stream ms-unwind's cost
 * per sample is measured on against the native one (see ms-unwind(1)).
 *
 *   mkpystream --unnamed
 *
 * writes instead what ms-symbolize reads: the interpreted module and a
 * stack of one frame at key 1 in it that no FRAME record names.
 */
#include "config.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpf/sampler.h"
#include "elf/elffile.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#include "elf-map.h"

#define PID 88
#define BASE 0x7f1234000000ull
#define SP0 0x7ffe00001000ull
#define MAIN_PY "/srv/app/main.py"

static struct ms_writer *w;
static struct ms_elf_file elf;
static struct ms_elf_loads loads;
static uint64_t mem[64];

static void check(int rc)
{
	if (rc < 0)
		exit(1);
}

/* Where ELF's symbol name runs, mapped whole at BASE. */
static uint64_t pc_of(const char *name)
{
	uint64_t pc = elf_pc_at(elf.elf, &loads, BASE, name);

	if (!pc) {
		fprintf(stderr, "mkpystream: no symbol %s\n", name);
		exit(1);
	}
	return pc;
}

/* Code units 0-3 at first + 1, 4-7 at first + 2 (two "no columns" entries). */
static const uint8_t table[] = { 0xe8 | 3, 0x02, 0xe8 | 3, 0x02 };

#define CODE_MODULE 0x7f0000a00000ull
#define CODE_RUN 0x7f0000b00000ull
#define CODE_RUN2 0x7f0000c00000ull
#define CODE_GONE 0x7f0000d00000ull
#define STAMP(code) ((code) + 0x8000)
/* The instruction at code unit u of code. */
#define AT(code, u) ((code) + 0xc0 + 2 * (u))

static void code(uint64_t addr, uint32_t status, const char *qual, const char *file,
		 uint32_t first)
{
	struct ms_py_code c = {
		.pid = PID, .time = 500, .code = addr, .stamp = STAMP(addr), .status = status,
		.qualname = { qual, (uint32_t)strlen(qual) }, .file = { file, (uint32_t)strlen(file) },
		.firstlineno = first, .code_start = addr + 0xc0,
		.linetable = status == MS_PY_CODE_OK ? table : NULL,
		.linetable_len = status == MS_PY_CODE_OK ? sizeof(table) : 0,
	};

	check(ms_py_code_pack(w, &c));
}

/* A walker record: frames as (code, code unit, entry) triples. */
static void py_stack(uint32_t tid, uint64_t time, uint32_t status, uint32_t n, const uint64_t *f)
{
	static struct ms_py_stack s;

	memset(&s, 0, sizeof(s));
	s.pid = PID;
	s.tid = tid;
	s.time = time;
	s.cpu = 1;
	s.status = status;
	s.gil = MS_BPF_PY_GIL_HELD;
	s.tstate = 0x7f00000e0000ull;
	for (uint32_t i = 0; i < n; i++) {
		s.words[4 * i] = f[3 * i];
		s.words[4 * i + 1] = STAMP(f[3 * i]);
		s.words[4 * i + 2] = AT(f[3 * i], f[3 * i + 1]);
		s.words[4 * i + 3] = f[3 * i + 2] ? MS_BPF_PY_ENTRY : 0;
	}
	s.n_words = 4 * n;
	check(ms_py_stack_pack(w, &s));
}

/*
 * A sample of tid at time whose user stack is pcs[0, n) innermost first:
 * %rip pcs[0], each frame 16 bytes of the stack copy with its return
 * address pcs[1...] at 8 (py_main last: its CFI ends the stack).
 */
static void sample(uint32_t tid, uint64_t time, const char *const *pcs, uint32_t n)
{
	static struct ms_sample s;
	uint32_t r = 0;

	memset(mem, 0xee, sizeof(mem));
	for (uint32_t i = 1; i < n; i++)
		mem[2 * (i - 1) + 1] = pc_of(pcs[i]);
	memset(&s, 0, sizeof(s));
	s.pid = PID;
	s.tid = tid;
	s.time = time;
	s.cpu = 1;
	s.period = 1;
	s.ip = pc_of(pcs[0]);
	s.cpumode = MS_CPUMODE_USER;
	s.regs_abi = 2;
	s.regs_mask = 0xff01ffull;
	for (int bit = 0; bit < 24; bit++) {
		if (!(s.regs_mask & (1ull << bit)))
			continue;
		s.regs[r++] = bit == 7 ? SP0 : bit == 6 ? 0 : bit == 8 ? s.ip :
			      0x1000 + (uint64_t)bit;
	}
	s.n_regs = r;
	s.n_uchain = 1;
	s.uchain[0] = s.ip;
	s.stack = (const uint8_t *)mem;
	s.stack_len = sizeof(mem);
	check(ms_sample_pack(w, &s));
}

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static int unnamed(void)
{
	static struct ms_stack st;
	struct ms_module m = { .id = 0, .kind = MS_MODULE_INTERPRETED, .path = { "[python]", 8 } };

	w = ms_writer_open(1, "stdout", 0);
	if (!w)
		return 1;
	check(ms_writer_header(w, NULL, "mkpystream", PACKAGE_VERSION));
	check(ms_module_pack(w, &m));
	st.pid = st.tid = PID;
	st.time = 1;
	st.period = 1;
	st.reason = MS_END_INTERPRETED_UNPLACED;
	st.n_frames = 1;
	st.frames[0] = (struct ms_stack_frame){ .module = 0, .address = 1,
						.flags = MS_FRAME_NO_ADDRESS };
	check(ms_stack_pack(w, &st));
	check(ms_writer_trailer(w, true));
	return ms_writer_close(w) < 0;
}

static int inject(uint32_t pid, uint32_t depth)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	static struct ms_sample smp;
	static struct ms_py_stack ps;
	struct ms_record rec;
	uint64_t n = 0;
	int rc;

	if (!r || !(w = ms_writer_open(1, "stdout", 0)) ||
	    ms_writer_header(w, NULL, "mkpystream", PACKAGE_VERSION) < 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		uint64_t addr = i ? CODE_RUN : CODE_MODULE;
		struct ms_py_code c = {
			.pid = pid, .time = 1, .code = addr, .stamp = STAMP(addr),
			.status = MS_PY_CODE_OK, .qualname = { i ? "recurse" : "<module>", i ? 7 : 8 },
			.file = { MAIN_PY, sizeof(MAIN_PY) - 1 }, .firstlineno = 10,
			.code_start = addr + 0xc0, .linetable = table, .linetable_len = sizeof(table),
		};

		check(ms_py_code_pack(w, &c));
	}
	while ((rc = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_SAMPLE && ms_sample_unpack(&rec, &smp) == 0 &&
		    smp.pid == pid) {
			uint32_t d = 1 + (uint32_t)(n++ % depth);

			memset(&ps, 0, sizeof(ps));
			ps.pid = smp.pid;
			ps.tid = smp.tid;
			ps.time = smp.time;
			ps.cpu = smp.cpu;
			for (uint32_t i = 0; i <= d && i < MS_PY_STACK_FRAMES_MAX; i++) {
				uint64_t code = i == d ? CODE_MODULE : CODE_RUN;

				ps.words[4 * i] = code;
				ps.words[4 * i + 1] = STAMP(code);
				ps.words[4 * i + 2] = AT(code, i ? 4 : 0);
				ps.words[4 * i + 3] = i == d ? MS_BPF_PY_ENTRY : 0;
				ps.n_words = 4 * (i + 1);
			}
			check(ms_py_stack_pack(w, &ps));
		}
		check(ms_writer_copy(w, rec.bytes, rec.len));
	}
	ms_reader_free(r);
	if (rc != MS_READ_END)
		return 1;
	check(ms_writer_trailer(w, true));
	return ms_writer_close(w) < 0;
}

/* A thread snapshot of tid: frames as (code, code unit) pairs; reason: changed. */
static void snap(uint32_t tid, uint64_t time, uint64_t round, uint32_t gil, const char *reason,
		 uint32_t n, const uint64_t *f)
{
	static struct ms_py_snapshot s;

	memset(&s, 0, sizeof(s));
	s.pid = PID;
	s.tid = tid;
	s.time = time;
	s.round = round;
	s.gil = gil;
	s.tstate = 0x7f00000e0000ull + tid;
	s.status = reason ? MS_PY_SNAPSHOT_CHANGED : MS_PY_SNAPSHOT_COMPLETE;
	if (reason)
		s.reason = (struct ms_str){ reason, (uint32_t)strlen(reason) };
	for (uint32_t i = 0; i < n; i++) {
		s.words[4 * i] = f[2 * i];
		s.words[4 * i + 1] = STAMP(f[2 * i]);
		s.words[4 * i + 2] = AT(f[2 * i], f[2 * i + 1]);
	}
	s.n_words = 4 * n;
	check(ms_py_snapshot_pack(w, &s));
}

static int stacks(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	static struct ms_stack st;
	static struct ms_module mod;
	struct ms_record rec;
	uint32_t id;
	int rc;

	if (!r)
		return 1;
	while ((rc = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_MODULE) {
			if (ms_module_unpack(&rec, &mod) < 0)
				return 1;
			printf("module %u kind %u %.*s\n", mod.id, mod.kind, (int)mod.path.len,
			       mod.path.ptr);
		}
		if (rec.kind != MS_REC_STACK_DEF)
			continue;
		if (ms_stack_def_unpack(&rec, &id, &st) < 0)
			return 1;
		printf("stack %u %s ", id, ms_stack_end_name(st.reason));
		for (uint32_t i = 0; i < st.n_frames; i++)
			putchar(st.frames[i].flags & MS_FRAME_NO_ADDRESS ? 'P' :
				st.frames[i].flags & MS_FRAME_INTERPRETER ? 'L' : '-');
		putchar('\n');
	}
	ms_reader_free(r);
	return rc == MS_READ_END ? 0 : 1;
}

int main(int argc, char **argv)
{
	bool engine = !(argc == 3 && !strcmp(argv[1], "--no-engine"));
	bool snapshot = argc == 3 && !strcmp(argv[1], "--snapshot");
	const char *path = argv[argc - 1];
	struct ms_comm c = { .pid = PID, .tid = PID, .time = 1, .comm = { "python3", 7 } };
	struct ms_mmap m = { .pid = PID, .tid = PID, .time = 1, .start = BASE,
			     .prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER };
	struct ms_info info = { .key = { "python", 6 }, .is_text = true, .text = { "bpf", 3 } };
	struct ms_comm c90 = { .pid = PID, .tid = 90, .time = 1, .comm = { "worker", 6 } };
	const uint64_t s1[] = { CODE_RUN, 0, CODE_MODULE, 4 };
	const uint64_t s3[] = { CODE_RUN2, 5, CODE_MODULE, 0 };
	const uint64_t s4[] = { CODE_GONE, 0 };
	static const char *const one[] = { "c_leaf_body", "eval_ret", "py_main_ret" };
	static const char *const two[] = { "c_leaf_body", "eval_ret", "interp_helper_ret",
					   "eval_cold_ret", "py_main_ret" };
	static const char *const none[] = { "c_leaf_body", "py_main_ret" };
	const uint64_t f1[] = { CODE_RUN, 0, 0, CODE_MODULE, 4, 1 };
	const uint64_t f2[] = { CODE_RUN, 0, 1, CODE_RUN2, 5, 0, CODE_MODULE, 0, 1 };
	const uint64_t f3[] = { CODE_RUN, 0, 1, CODE_MODULE, 0, 1 };
	const uint64_t f4[] = { CODE_RUN, 7, 0, CODE_GONE, 0, 0 };
	struct stat sb;

	ms_set_progname("mkpystream");
	if (argc == 2 && !strcmp(argv[1], "--stacks"))
		return stacks();
	if (argc == 2 && !strcmp(argv[1], "--unnamed"))
		return unnamed();
	if (argc == 4 && !strcmp(argv[1], "--inject"))
		return inject((uint32_t)strtoul(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10));
	if (argc < 2 || stat(path, &sb) < 0 || ms_elf_setup() < 0 ||
	    ms_elf_file_open(&elf, path) != MS_SYM_OK || ms_elf_loads_read(elf.elf, &loads) < 0) {
		fprintf(stderr, "usage: mkpystream [--no-engine|--snapshot] ELF (an ELF file that "
			"exists)\n");
		return 2;
	}
	m.len = ((uint64_t)sb.st_size + 0xfff) & ~0xfffull;
	m.maj = major(sb.st_dev);
	m.min = minor(sb.st_dev);
	m.ino = sb.st_ino;
	m.filename = (struct ms_str){ path, (uint32_t)strlen(path) };

	w = ms_writer_open(1, "stdout", 0);
	if (!w)
		return 1;
	check(ms_writer_header(w, NULL, "mkpystream", PACKAGE_VERSION));
	if (snapshot)
		info.text = (struct ms_str){ "snapshot", 8 };
	if (engine)
		check(ms_info_pack(w, &info));
	/* ms-decode sends what the collector read ahead of every record it holds. */
	code(CODE_MODULE, MS_PY_CODE_OK, "<module>", MAIN_PY, 1);
	code(CODE_RUN, MS_PY_CODE_OK, "Worker.run", MAIN_PY, 10);
	code(CODE_RUN2, MS_PY_CODE_OK, "Worker.run", "/srv/app/other.py", 30);
	code(CODE_GONE, MS_PY_CODE_UNREADABLE, "", "", 0);
	check(ms_comm_pack(w, &c));
	check(ms_mmap_pack(w, &m));
	if (snapshot) {
		check(ms_comm_pack(w, &c90));
		snap(PID, 2000, 1, MS_BPF_PY_GIL_HELD, NULL, 2, s1);
		snap(90, 2000, 1, MS_BPF_PY_GIL_RELEASED, NULL, 0, NULL);
		sample(PID, 2500, one, N(one));
		snap(PID, 3000, 2, MS_BPF_PY_GIL_HELD, NULL, 2, s1);
		snap(90, 3000, 2, MS_BPF_PY_GIL_RELEASED, "the current frame moved", 0, NULL);
		snap(PID, 4000, 3, MS_BPF_PY_GIL_RELEASED, NULL, 2, s3);
		snap(90, 4000, 3, MS_BPF_PY_GIL_HELD, NULL, 1, s4);
		check(ms_writer_trailer(w, true));
		check(ms_writer_close(w));
		ms_elf_loads_release(&loads);
		ms_elf_file_close(&elf);
		return 0;
	}

	py_stack(PID, 1001, MS_BPF_PY_COMPLETE, 2, f1);
	sample(PID, 1001, one, N(one));
	py_stack(PID, 1002, MS_BPF_PY_COMPLETE, 3, f2);
	sample(PID, 1002, two, N(two));
	py_stack(PID, 1003, MS_BPF_PY_COMPLETE, 2, f3);
	sample(PID, 1003, one, N(one));
	py_stack(PID, 1004, MS_BPF_PY_TOO_DEEP, 2, f4);
	sample(PID, 1004, two, N(two));
	sample(PID, 1005, one, N(one));
	sample(PID, 1006, one, N(one));
	py_stack(PID, 1007, MS_BPF_PY_COMPLETE, 2, f1);
	sample(PID, 1007, one, N(one));
	py_stack(PID + 1, 1009, MS_BPF_PY_COMPLETE, 2, f1);
	sample(PID, 1009, one, N(one));
	py_stack(PID, 1010, MS_BPF_PY_NO_THREAD, 0, NULL);
	sample(PID, 1010, none, N(none));
	py_stack(PID, 1011, MS_BPF_PY_COMPLETE, 2, f1);
	check(ms_writer_trailer(w, true));
	check(ms_writer_close(w));
	ms_elf_loads_release(&loads);
	ms_elf_file_close(&elf);
	return 0;
}
