/*
 * mkjitstream: write on stdout the stream ms-decode would give ms-unwind
 * for a process running JIT code named by its perf map, without a
 * collector (tests/0735-jit-unwind.bats):
 *
 *   mkjitstream [--bad] ELF
 *
 * Process 77 maps ELF (tests/unit/data/dwarf-frames, whose functions have
 * exact CFI) and an anonymous range at 0x7f5500000000, and its perf map
 * names two functions there, as JIT_FUNC records with the rows proved
 * from their code (tests/unit/jit-code.h): py::tramp (CPython's frameless
 * trampoline, sub rsp, 8) and js::classic (a frame-pointer frame). Then,
 * one a line of ms-symbolize --text, outermost first:
 *   time 901   t_outer;t_fp;py::tramp             the leaf by its rows
 *   time 902   t_outer;t_fp;js::classic;py::tramp a JIT caller
 *   time 903   [anonymous] (no-cfi)               outside every function
 *   (a mapping over the range made after the lines were read)
 *   time 1002  [anonymous] (no-cfi)               the functions ended
 * --bad adds, before the samples, a JIT_FUNC whose rows are corrupt (the
 * function named, its frames no-cfi: time 904, py::badrows) and one
 * whose source no reader knows (not kept).
 *
 *   mkjitstream --gdb [--bad] OBJECT ELF
 *
 * writes instead the stream for a process that registered OBJECT (the
 * image `jitgdb dump OBJECT` writes: jit_gdb_func at its .text address,
 * described by its .eh_frame and .symtab) through the GDB JIT interface,
 * as JIT_OBJECT records of 256-byte chunks read at time 1000, entry
 * 0x5555aaaa0010, then its unregistration at time 3000. Process 77 maps
 * ELF and the anonymous 64 KiB around the code; one a line of
 * ms-symbolize --text:
 *   time 901   t_outer;t_fp;jit_gdb_func          by the object's CFI
 *   time 902   t_outer;t_fp;jit_gdb_func          at its entry
 *   time 3001  [anonymous] (no-cfi)               unregistered at 3000
 * --bad adds, before them, a chunk sequence that skips 256 bytes, an
 * image cut short by its entry's unregistration, a record whose chunk
 * lies outside its object, and an image whose section headers lie
 * outside it: each a counted problem, none used.
 *
 *   mkjitstream --unnamed MAP ADDRESS
 *
 * writes instead what ms-symbolize reads: a perf-map module whose path is
 * MAP and a stack of one frame at ADDRESS (hex) in it that no FRAME record
 * names; --unnamed-object the same with a jit-object module.
 */
#include "config.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "elf/elffile.h"
#include "jit/prove.h"
#include "jit/rows.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#include "elf-map.h"
#include "jit-code.h"

#define PID 77
#define BASE 0x7f1234000000ull
#define JBASE 0x7f5500000000ull
#define JLEN 0x10000ull
#define TRAMP (JBASE + 0x100)
#define CLASSIC (JBASE + 0x200)
#define BADROWS (JBASE + 0x300)
#define SP0 0x7ffe00001000ull
#define READ_TIME 1000

static struct ms_writer *w;
static struct ms_elf_file elf;
static struct ms_elf_loads loads;
static struct ms_prover *prover;
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
		fprintf(stderr, "mkjitstream: no symbol %s\n", name);
		exit(1);
	}
	return pc;
}

static void jit_func(uint64_t start, uint64_t size, const char *name, const uint8_t *code,
		     size_t len, uint32_t line)
{
	uint8_t rows[MS_ROWS_ENCODED_MAX];
	struct ms_prove_rows t;
	struct ms_jit_func f = {
		.pid = PID, .time = READ_TIME, .start = start, .end = start + size,
		.name = { name, (uint32_t)strlen(name) }, .line = line, .rows = rows,
	};

	ms_prove_rows(prover, code, len, &t);
	f.rows_len = (uint32_t)ms_rows_encode(&t, rows, sizeof(rows));
	if (!strcmp(name, "py::badrows"))
		rows[f.rows_len - 1] ^= 0xff;	/* the last row's bytes: corrupt */
	if (!strcmp(name, "py::badsource"))
		f.source = 9;
	check(ms_jit_func_pack(w, &f));
}

/* A sample at ip, %rsp SP0, %rbp bp, with mem as its stack copy. */
static void sample(uint64_t time, uint64_t ip, uint64_t bp)
{
	static struct ms_sample s;
	uint32_t n = 0;

	memset(&s, 0, sizeof(s));
	s.pid = s.tid = PID;
	s.time = time;
	s.period = 1;
	s.ip = ip;
	s.cpumode = MS_CPUMODE_USER;
	s.regs_abi = 2;
	s.regs_mask = 0xff01ffull;
	for (int bit = 0; bit < 24; bit++) {
		if (!(s.regs_mask & (1ull << bit)))
			continue;
		s.regs[n++] = bit == 7 ? SP0 : bit == 6 ? bp : bit == 8 ? ip : 0x1000 + (uint64_t)bit;
	}
	s.n_regs = n;
	s.n_uchain = 1;
	s.uchain[0] = ip;
	s.stack = (const uint8_t *)mem;
	s.stack_len = sizeof(mem);
	check(ms_sample_pack(w, &s));
}

static void put(uint64_t addr, uint64_t v)
{
	mem[(addr - SP0) / 8] = v;
}

static void anon(uint64_t time)
{
	struct ms_mmap m = {
		.pid = PID, .tid = PID, .time = time, .start = JBASE, .len = JLEN,
		.prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER,
		.filename = { "//anon", 6 },
	};

	check(ms_mmap_pack(w, &m));
}

/* A perf-map (or jit-object) module at path and a stack at address that nothing named. */
static int unnamed(uint32_t kind, const char *path, uint64_t address)
{
	static struct ms_stack st;
	struct ms_module m = { .id = 0, .kind = kind,
			       .path = { path, (uint32_t)strlen(path) }, .base = address & ~0xfffull,
			       .size = 0x10000 };

	w = ms_writer_open(1, "stdout", 0);
	if (!w)
		return 1;
	check(ms_writer_header(w, NULL, "mkjitstream", PACKAGE_VERSION));
	check(ms_module_pack(w, &m));
	st.pid = st.tid = PID;
	st.time = 1;
	st.period = 1;
	st.reason = MS_END_NO_CFI;
	st.n_frames = 1;
	st.frames[0] = (struct ms_stack_frame){ .module = 0, .address = address };
	check(ms_stack_pack(w, &st));
	check(ms_writer_trailer(w, true));
	return ms_writer_close(w) < 0;
}

#define ENTRY 0x5555aaaa0010ull

/* The object's bytes [0, len) as JIT_OBJECT records of 256 bytes (skip: one left out). */
static void object_records(uint64_t entry, uint64_t addr, const uint8_t *img, size_t len,
			   size_t size, uint64_t time, size_t skip)
{
	for (size_t off = 0; off < len; off += 256) {
		struct ms_jit_object o = {
			.pid = PID, .time = time, .entry = entry, .addr = addr, .size = size,
			.offset = off, .chunk = img + off,
			.chunk_len = (uint32_t)(len - off < 256 ? len - off : 256),
		};

		if (off == skip)
			continue;
		check(ms_jit_object_pack(w, &o));
	}
}

/*
 * A JIT_OBJECT record whose chunk lies outside its object, which
 * ms_jit_object_pack() refuses to write: encoded by hand,
 * [9, pid, time, entry, addr 0x1000, size 16, offset 16, bin 0xc3].
 */
static void bad_chunk_record(void)
{
	static const uint8_t rec[] = {
		0x98, 0x09, PID, 0xcd, 0x03, 0xe8,
		0xcf, 0x00, 0x00, 0x55, 0x55, 0xaa, 0xaa, 0x03, 0x10,
		0xcd, 0x10, 0x00, 0x10, 0x10, 0xc4, 0x01, 0xc3,
	};

	check(ms_writer_copy(w, (const char *)rec, sizeof(rec)));
}

static int gdb(int argc, char **argv)
{
	bool bad = argc == 5;
	const char *obj_path = argv[argc - 2], *path = argv[argc - 1];
	static uint8_t img[1 << 20];
	struct ms_comm c = { .pid = PID, .tid = PID, .time = 1, .comm = { "jitgdb", 6 } };
	struct ms_mmap m = { .pid = PID, .tid = PID, .time = 1, .start = BASE,
			     .prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER };
	struct ms_jit_object un = { .pid = PID, .time = 3000, .entry = ENTRY };
	struct ms_elf_file of;
	GElf_Shdr text, eh;
	uint64_t addr, start;
	struct stat sb;
	size_t len;
	FILE *f;

	if ((bad && strcmp(argv[2], "--bad")) || !(f = fopen(obj_path, "rb"))) {
		fprintf(stderr, "usage: mkjitstream --gdb [--bad] OBJECT ELF (OBJECT: jitgdb dump's)\n");
		return 2;
	}
	len = fread(img, 1, sizeof(img), f);
	fclose(f);
	if (stat(path, &sb) < 0 || ms_elf_setup() < 0 ||
	    ms_elf_file_open(&elf, path) != MS_SYM_OK || ms_elf_loads_read(elf.elf, &loads) < 0 ||
	    ms_elf_file_open(&of, obj_path) != MS_SYM_OK || !ms_elf_section(of.elf, ".text", &text) ||
	    !ms_elf_section(of.elf, ".eh_frame", &eh)) {
		fprintf(stderr, "mkjitstream: %s or %s is not the ELF it should be\n", obj_path, path);
		return 2;
	}
	ms_elf_file_close(&of);
	/* Where the image lay: its .eh_frame's bytes are at their sh_addr. */
	addr = eh.sh_addr - eh.sh_offset;
	start = text.sh_addr & ~0xffffull;
	m.len = ((uint64_t)sb.st_size + 0xfff) & ~0xfffull;
	m.maj = major(sb.st_dev);
	m.min = minor(sb.st_dev);
	m.ino = sb.st_ino;
	m.filename = (struct ms_str){ path, (uint32_t)strlen(path) };

	w = ms_writer_open(1, "stdout", 0);
	if (!w)
		return 1;
	check(ms_writer_header(w, NULL, "mkjitstream", PACKAGE_VERSION));
	if (bad) {
		struct ms_jit_object cut = { .pid = PID, .time = READ_TIME, .entry = ENTRY + 0x100 };
		static uint8_t spoilt[1 << 20];

		object_records(ENTRY + 0x80, addr, img, len, len, READ_TIME, 256);
		object_records(ENTRY + 0x100, addr, img, 512, len, READ_TIME, SIZE_MAX);
		check(ms_jit_object_pack(w, &cut));
		bad_chunk_record();
		memcpy(spoilt, img, len);
		memset(spoilt + 0x28, 0x7f, 4);		/* e_shoff */
		object_records(ENTRY + 0x200, addr, spoilt, len, len, READ_TIME, SIZE_MAX);
	}
	object_records(ENTRY, addr, img, len, len, READ_TIME, SIZE_MAX);
	check(ms_jit_object_pack(w, &un));
	check(ms_comm_pack(w, &c));
	check(ms_mmap_pack(w, &m));
	{
		struct ms_mmap a = { .pid = PID, .tid = PID, .time = 2, .start = start,
				     .len = 0x10000, .prot = PROT_READ | PROT_EXEC,
				     .cpumode = MS_CPUMODE_USER, .filename = { "//anon", 6 } };

		check(ms_mmap_pack(w, &a));
	}
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 24, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(901, text.sh_addr + 0xa, SP0 + 96);
	memset(mem, 0xee, sizeof(mem));
	put(SP0, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(902, text.sh_addr, SP0 + 96);
	sample(3001, text.sh_addr, SP0 + 96);
	check(ms_writer_trailer(w, true));
	check(ms_writer_close(w));
	ms_elf_loads_release(&loads);
	ms_elf_file_close(&elf);
	return 0;
}

int main(int argc, char **argv)
{
	bool bad = argc == 3 && !strcmp(argv[1], "--bad");
	const char *path = argv[argc - 1];
	struct ms_comm c = { .pid = PID, .tid = PID, .time = 1, .comm = { "jit", 3 } };
	struct ms_jit_read r = { .pid = PID, .time = READ_TIME, .path = { "/tmp/perf-77.map", 16 },
				 .offset = 100, .functions = 2 };
	struct ms_mmap m = { .pid = PID, .tid = PID, .time = 1, .start = BASE,
			     .prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER };
	struct stat sb;

	ms_set_progname("mkjitstream");
	if (argc == 4 && !strcmp(argv[1], "--unnamed"))
		return unnamed(MS_MODULE_PERF_MAP, argv[2], strtoull(argv[3], NULL, 16));
	if (argc == 4 && !strcmp(argv[1], "--unnamed-object"))
		return unnamed(MS_MODULE_JIT_OBJECT, argv[2], strtoull(argv[3], NULL, 16));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--gdb"))
		return gdb(argc, argv);
	if (argc < 2 || stat(path, &sb) < 0 || ms_elf_setup() < 0 ||
	    ms_elf_file_open(&elf, path) != MS_SYM_OK || ms_elf_loads_read(elf.elf, &loads) < 0 ||
	    !(prover = ms_prover_new())) {
		fprintf(stderr, "usage: mkjitstream [--bad] ELF (an ELF file that exists)\n");
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
	check(ms_writer_header(w, NULL, "mkjitstream", PACKAGE_VERSION));
	/* ms-decode sends what the collector read ahead of every record it holds. */
	jit_func(TRAMP, sizeof(trampoline), "py::tramp", trampoline, sizeof(trampoline), 1);
	jit_func(CLASSIC, sizeof(classic), "js::classic", classic, sizeof(classic), 2);
	if (bad) {
		jit_func(BADROWS, sizeof(trampoline), "py::badrows", trampoline, sizeof(trampoline), 3);
		jit_func(BADROWS + 0x100, 16, "py::badsource", trampoline, sizeof(trampoline), 4);
	}
	check(ms_jit_read_pack(w, &r));
	check(ms_comm_pack(w, &c));
	check(ms_mmap_pack(w, &m));
	anon(2);

	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 8, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(901, TRAMP + 4, SP0 + 96);
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + 8, CLASSIC + 17);
	put(SP0 + 96, SP0 + 112);
	put(SP0 + 104, pc_of("t_fp_ret"));
	put(SP0 + 112, 0);
	put(SP0 + 120, pc_of("t_outer_ret"));
	sample(902, TRAMP + 4, SP0 + 96);
	sample(903, JBASE + 0x800, SP0 + 96);
	if (bad)
		sample(904, BADROWS + 4, SP0 + 96);
	anon(READ_TIME + 1);
	sample(1002, TRAMP + 4, SP0 + 96);
	check(ms_writer_trailer(w, true));
	check(ms_writer_close(w));
	ms_prover_free(prover);
	ms_elf_loads_release(&loads);
	ms_elf_file_close(&elf);
	return 0;
}
