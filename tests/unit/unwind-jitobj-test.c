/*
 * ms-unwind's registered JIT objects (libcommon/unwind/jitobj*.c and their
 * use in unwind.c and sample.c): objects built here (jitobj-image.h: the
 * jitgdb fixture's shape) at chosen addresses, fed as MS_REC_JIT_OBJECT
 * records (chunks), over samples whose callers are in
 * tests/unit/data/dwarf-frames (exact CFI). A frameless function unwinds
 * by the object's .eh_frame to its caller and is named from .symtab;
 * unregistration and a later mapping end the object (by time); code in no
 * mapping is still the object's; objects win over perf-map functions;
 * broken chunk sequences and corrupt images are counted problems.
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

#include "dwarf/cfi.h"
#include "unwind/jitobj.h"
#include "unwind/jitobjtab.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "elf-helpers.h"
#include "jitobj-image.h"
#include "jit-unwind-harness.h"

#define TEXT (JBASE + 0x1000)		/* the object's .text */
#define TEXT_LEN 0x40
#define IMAGE (JBASE + 0x8000)		/* where the image lies */
#define ENTRY 0x5555aaaa0010ull		/* its jit_code_entry */
#define READ_TIME 1000

static uint8_t image[4096];
static size_t image_len;
static struct jo_layout lay;

/*
 * The object: jo_func at TEXT + 0 (symbol jit_gdb_func, its FDE), a leaf
 * at TEXT + 0x30 with an FDE (CFA rsp+8 throughout) and no symbol, and
 * nothing at TEXT + 0x38.
 */
static void build(uint64_t text)
{
	uint8_t code[TEXT_LEN];
	static const uint8_t none[] = { 0 };
	const struct jo_fde fdes[] = {
		{ 0, sizeof(jo_func), jo_func_cfa, sizeof(jo_func_cfa) },
		{ 0x30, 8, none, 1 },
	};
	const struct jo_sym syms[] = { { "jit_gdb_func", 0, sizeof(jo_func) } };

	memset(code, 0xcc, sizeof(code));
	memcpy(code, jo_func, sizeof(jo_func));
	code[0x30] = 0xc3;
	image_len = jo_build(image, text, IMAGE, code, sizeof(code), fdes, 2, syms, 1, &lay);
}

/* The image (bytes [0, len)) as records of chunk bytes each, read at time. */
static void send(struct ms_unwinder *u, uint32_t pid, uint64_t entry, const uint8_t *bytes,
		 size_t len, size_t chunk, uint64_t time)
{
	for (size_t off = 0; off < len; off += chunk) {
		struct ms_jit_object o = {
			.pid = pid, .time = time, .entry = entry, .addr = IMAGE, .size = len,
			.offset = off, .chunk = bytes + off,
			.chunk_len = (uint32_t)(len - off < chunk ? len - off : chunk),
		};

		assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	}
}

static void send_object(struct ms_unwinder *u, uint32_t pid, uint64_t time)
{
	send(u, pid, ENTRY, image, image_len, 100, time);
}

static void unregister(struct ms_unwinder *u, uint32_t pid, uint64_t time)
{
	struct ms_jit_object o = { .pid = pid, .time = time, .entry = ENTRY };

	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
}

static struct ms_sample *sample(uint32_t pid, uint64_t time, uint64_t ip, uint64_t bp)
{
	return jit_sample(pid, time, ip, bp, sizeof(mem));
}

/*
 * A sample in the object's code at text + off, called from t_fp, called
 * from t_outer: the return address at %rsp + ra (CFA - 8), t_fp's frame
 * at %rbp = SP0 + 96.
 */
static void obj_sample(uint32_t pid, uint64_t time, uint64_t pc, uint32_t ra)
{
	memset(mem, 0xee, sizeof(mem));
	put(SP0 + ra, pc_of("t_fp_ret"));
	put(SP0 + 96, 0);
	put(SP0 + 104, pc_of("t_outer_ret"));
	sample(pid, time, pc, SP0 + 96);
}

static void expect_object_module(uint32_t id, uint64_t base, uint64_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "[jit-object 0x%llx]", (unsigned long long)ENTRY);
	assert_int_equal(mods[id].kind, MS_MODULE_JIT_OBJECT);
	assert_int_equal(mods[id].base, base);
	assert_int_equal(mods[id].size, size);
	assert_int_equal(mods[id].build_id_len, 0);
	assert_string_equal(mod_paths[id], path);
}

static void expect_name(uint32_t i, uint64_t address, const char *name, uint64_t start)
{
	assert_true(i < n_frames);
	assert_int_equal(frames[i].address, address);
	assert_string_equal(frames[i].name, name);
	assert_int_equal(frames[i].start, start);
	assert_int_equal(frames[i].reason, name[0] ? MS_SYM_OK : MS_SYM_NO_SYMBOL);
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
	smp = calloc(1, sizeof(*smp));
	stack = calloc(1, sizeof(*stack));
	return smp && stack ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(smp);
	free(stack);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	n_mods = n_frames = 0;
	memset(mods, 0, sizeof(mods));
	build(TEXT);
	return 0;
}

/* The frameless function in its loop (CFA rsp+32) unwinds by the object's CFI to an ELF. */
static void expect_full(void)
{
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	expect_frame(0, MS_MODULE_JIT_OBJECT, TEXT + 0xa, 0);
	expect_frame(1, MS_MODULE_FILE, sym_in("dwarf-frames", "t_fp_ret"), MS_FRAME_RETURN);
	expect_frame(2, MS_MODULE_FILE, sym_in("dwarf-frames", "t_outer_ret"), MS_FRAME_RETURN);
}

static void test_cfi_and_symbols(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	send_object(u, PID, READ_TIME);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	expect_object_module(stack->frames[0].module, TEXT, TEXT_LEN);
	assert_int_equal(n_frames, 1);
	assert_int_equal(frames[0].module, stack->frames[0].module);
	expect_name(0, TEXT + 0xa, "jit_gdb_func", TEXT);
	/* Again, from the caches: the same stack, named already. */
	unwind(u);
	drain(u);
	expect_full();
	assert_int_equal(n_frames, 0);
	/* At its entry the return address is at %rsp; after add rsp at 0x20 too. */
	obj_sample(PID, 2001, TEXT, 0);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	expect_name(0, TEXT, "jit_gdb_func", TEXT);
	obj_sample(PID, 2002, TEXT + 0x20, 0);
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 3);
	/* An FDE but no symbol: unwound, a frame with no name. */
	obj_sample(PID, 2003, TEXT + 0x30, 0);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_OUTERMOST);
	assert_int_equal(stack->n_frames, 3);
	expect_name(0, TEXT + 0x30, "", 0);
	/* Neither: the object's frame, then no CFI. */
	obj_sample(PID, 2004, TEXT + 0x38, 0);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->n_frames, 1);
	expect_frame(0, MS_MODULE_JIT_OBJECT, TEXT + 0x38, 0);
	assert_int_equal(ms_unwinder_stats(u)->jit_objects, 1);
	assert_int_equal(ms_unwinder_stats(u)->jit_object_frames_named, 3);
	assert_int_equal(ms_unwinder_problems(u)->n, 0);
	ms_unwinder_free(u);
}

/* The frame-pointer method binds the object's frames and names them too. */
static void test_fp_method(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_fp, true);

	(void)state;
	send_object(u, PID, READ_TIME);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	smp->n_uchain = 2;
	smp->uchain[1] = pc_of("t_outer_ret");
	unwind(u);
	drain(u);
	assert_int_equal(stack->n_frames, 2);
	expect_frame(0, MS_MODULE_JIT_OBJECT, TEXT + 0xa, 0);
	expect_name(0, TEXT + 0xa, "jit_gdb_func", TEXT);
	ms_unwinder_free(u);
}

/* Code in no mapping the stream described (a lost record) is still the object's. */
static void test_no_mapping(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, false);

	(void)state;
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_MODULE);
	send_object(u, PID, READ_TIME);
	unwind(u);
	drain(u);
	expect_full();
	expect_name(0, TEXT + 0xa, "jit_gdb_func", TEXT);
	ms_unwinder_free(u);
}

/* Unregistered at T: samples up to T have it, later ones do not. */
static void test_unregister(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	send_object(u, PID, READ_TIME);
	/* (Ahead of the samples before it, as ms-decode sends it.) */
	unregister(u, PID, 3000);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	obj_sample(PID, 3000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	obj_sample(PID, 3001, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->n_frames, 1);
	expect_frame(0, MS_MODULE_ANON, TEXT + 0xa, 0);
	assert_int_equal(ms_unwinder_stats(u)->jit_objects_ended, 1);
	/* Another entry's unregistration ends nothing. */
	send_object(u, PID, 4000);
	unwind(u);
	drain(u);
	expect_full();
	{
		struct ms_jit_object o = { .pid = PID, .time = 4500, .entry = ENTRY + 0x40 };

		assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	}
	obj_sample(PID, 5000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	ms_unwinder_free(u);
}

/* A mapping made over its code after its read ends it; one made before does not. */
static void test_mapping_time(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_mmap before = anon_mapping(PID, READ_TIME), after = anon_mapping(PID, 2500);

	(void)state;
	send_object(u, PID, READ_TIME);
	assert_int_equal(ms_unwinder_mmap(u, &before), 0);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	/* Elsewhere: nothing ends. */
	after.start = JBASE + JLEN;
	assert_int_equal(ms_unwinder_mmap(u, &after), 0);
	unwind(u);
	drain(u);
	expect_full();
	after = anon_mapping(PID, 2500);
	assert_int_equal(ms_unwinder_mmap(u, &after), 0);
	obj_sample(PID, 2500, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	expect_frame(0, MS_MODULE_ANON, TEXT + 0xa, 0);
	/* Read again after the mapping: the object describes the new code. */
	send_object(u, PID, 2600);
	obj_sample(PID, 2700, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	ms_unwinder_free(u);
}

/* The same object read again is no new object; its module stays. */
static void test_read_again(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	uint32_t module;

	(void)state;
	send_object(u, PID, READ_TIME);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	module = stack->frames[0].module;
	send_object(u, PID, 2100);
	obj_sample(PID, 2200, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	assert_int_equal(stack->frames[0].module, module);
	assert_int_equal(ms_unwinder_stats(u)->jit_objects, 1);
	assert_int_equal(ms_unwinder_stats(u)->jit_objects_again, 1);
	ms_unwinder_free(u);
}

/* A perf-map function over the object's code never names it; one beside it does. */
static void test_over_perf_map(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_jit_func f = { .pid = PID, .time = READ_TIME, .start = TEXT, .end = TEXT + TEXT_LEN,
				 .name = { "py::over", 8 }, .line = 1 };
	struct ms_jit_func g = { .pid = PID, .time = READ_TIME, .start = TEXT + 0x100,
				 .end = TEXT + 0x140, .name = { "py::beside", 10 }, .line = 2 };

	(void)state;
	assert_int_equal(ms_unwinder_jit_func(u, &f), 0);
	assert_int_equal(ms_unwinder_jit_func(u, &g), 0);
	send_object(u, PID, READ_TIME);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	expect_name(0, TEXT + 0xa, "jit_gdb_func", TEXT);
	obj_sample(PID, 2001, TEXT + 0x104, 0);
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_PERF_MAP, TEXT + 0x104, 0);
	expect_name(0, TEXT + 0x104, "py::beside", TEXT + 0x100);
	/* The perf-map module stops where the object's code ends. */
	assert_int_equal(mods[stack->frames[0].module].base, TEXT + TEXT_LEN);
	assert_int_equal(mods[stack->frames[0].module].size, JBASE + JLEN - (TEXT + TEXT_LEN));
	ms_unwinder_free(u);
}

/* exec keeps only objects read after it; a child starts with its parent's. */
static void test_exec_fork(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_task t = { .pid = CHILD, .ppid = PID, .tid = CHILD, .ptid = PID, .time = 1500 };
	struct ms_comm exec = { .pid = PID, .tid = PID, .time = 1800, .comm = { "x", 1 },
				.exec = true };
	struct ms_mmap f = file_mapping(), a = anon_mapping(PID, 1900);

	(void)state;
	send_object(u, PID, READ_TIME);
	assert_int_equal(ms_unwinder_fork(u, &t), 0);
	obj_sample(CHILD, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	assert_int_equal(ms_unwinder_comm(u, &exec), 0);
	f.time = 1900;
	assert_int_equal(ms_unwinder_mmap(u, &f), 0);
	assert_int_equal(ms_unwinder_mmap(u, &a), 0);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	/* The child's stays. */
	obj_sample(CHILD, 2001, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_full();
	ms_unwinder_free(u);
}

/* Broken chunk sequences: counted, the object dropped, nothing crashes. */
static void test_broken_chunks(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);
	struct ms_jit_object o = { .pid = PID, .time = READ_TIME, .entry = ENTRY, .addr = IMAGE,
				   .size = image_len, .offset = 100, .chunk = image + 100,
				   .chunk_len = 100 };

	(void)state;
	/* A chunk with nothing before it. */
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	assert_int_equal(problems(u, "jit-object-broken"), 1);
	/* Out of order: 0, then 200. */
	o.offset = 0;
	o.chunk = image;
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	o.offset = 200;
	o.chunk = image + 200;
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	assert_int_equal(problems(u, "jit-object-broken"), 2);
	/* Another size on the way. */
	o.offset = 0;
	o.chunk = image;
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	o.offset = 100;
	o.chunk = image + 100;
	o.size = image_len + 8;
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	assert_int_equal(problems(u, "jit-object-broken"), 3);
	/* Cut short by its unregistration, then by a new first chunk, then by the end. */
	send(u, PID, ENTRY, image, 200, 100, READ_TIME);	/* (size 200: complete, bad ELF) */
	o.size = image_len;
	o.offset = 0;
	o.chunk = image;
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	unregister(u, PID, READ_TIME + 1);
	assert_int_equal(problems(u, "jit-object-broken"), 4);
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	assert_int_equal(ms_unwinder_jit_object(u, &o), 0);
	assert_int_equal(problems(u, "jit-object-broken"), 5);
	ms_unwinder_end(u);
	assert_int_equal(problems(u, "jit-object-broken"), 6);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	expect_frame(0, MS_MODULE_ANON, TEXT + 0xa, 0);
	assert_int_equal(ms_unwinder_stats(u)->jit_objects, 0);
	/* A whole one after all that is used. */
	send_object(u, PID, READ_TIME);
	unwind(u);
	drain(u);
	expect_full();
	ms_unwinder_free(u);
}

/* Spoil one thing of a good image: refused with the reason, counted. */
static void refused(void (*spoil)(void), const char *why)
{
	struct ms_jitobj *o;
	const char *w, *code;
	uint8_t *copy;

	build(TEXT);
	spoil();
	copy = malloc(image_len);
	assert_non_null(copy);
	memcpy(copy, image, image_len);
	o = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY, &w, &code);
	assert_null(o);
	assert_non_null(w);
	assert_string_equal(code, "jit-object-bad-elf");
	if (!strstr(w, why))
		fail_msg("refused for '%s', not '%s'", w, why);
}

static void bad_magic(void) { image[1] = 'X'; }
static void bad_class(void) { image[EI_CLASS] = ELFCLASS32; }
static void bad_machine(void) { image[18] = 3; /* EM_386 */ }
static void short_image(void) { image_len = 40; }
static void shdrs_outside(void) { memset(image + 0x28, 0x7f, 4); /* e_shoff */ }
static void section_outside(void) { jo_shdr(image, &lay, JO_SYMTAB)->sh_size = 1u << 20; }
static void name_outside(void) { jo_shdr(image, &lay, JO_EH)->sh_name = 4000; }
static void shstrndx_bad(void) { image[62] = 9; }
static void no_code(void) { jo_shdr(image, &lay, JO_TEXT)->sh_flags = SHF_ALLOC; }
static void code_wraps(void) { jo_shdr(image, &lay, JO_TEXT)->sh_addr = UINT64_MAX - 8; }

static void code_overlaps(void)
{
	/* .eh_frame made executable over .text's addresses */
	Elf64_Shdr *eh = jo_shdr(image, &lay, JO_EH);

	eh->sh_flags |= SHF_EXECINSTR;
	eh->sh_addr = TEXT + 0x10;
}

static void test_bad_elf(void **state)
{
	(void)state;
	refused(bad_magic, "not ELF");
	refused(bad_class, "not ELF64");
	refused(bad_machine, "not ELF64");
	refused(short_image, "shorter than");
	refused(shdrs_outside, "section headers");
	refused(section_outside, "bytes lie outside");
	refused(name_outside, "name lies outside");
	refused(shstrndx_bad, "names no section name table");
	refused(no_code, "no executable section");
	refused(code_wraps, "wrap");
	refused(code_overlaps, "overlap");
}

/* Through the unwinder: a corrupt image is a problem, its code stays anonymous. */
static void test_bad_elf_counted(void **state)
{
	struct ms_unwinder *u = jit_unwinder(&ms_unwind_method_dwarf, true);

	(void)state;
	memset(image + 0x28, 0x7f, 4);
	send_object(u, PID, READ_TIME);
	assert_int_equal(problems(u, "jit-object-bad-elf"), 1);
	obj_sample(PID, 2000, TEXT + 0xa, 24);
	unwind(u);
	drain(u);
	expect_frame(0, MS_MODULE_ANON, TEXT + 0xa, 0);
	ms_unwinder_free(u);
}

/* Symbols that do not fit their section, or whose names lie outside .strtab, name nothing. */
static void test_bad_symbols(void **state)
{
	struct ms_jitobj *o;
	const char *w, *code;
	uint8_t *copy;
	uint64_t start;
	Elf64_Sym s;

	(void)state;
	/* its size past .text's end */
	memcpy(&s, image + lay.symtab + sizeof(s), sizeof(s));
	s.st_size = TEXT_LEN + 1;
	memcpy(image + lay.symtab + sizeof(s), &s, sizeof(s));
	copy = malloc(image_len);
	memcpy(copy, image, image_len);
	assert_non_null(o = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY, &w, &code));
	assert_null(ms_jitobj_symbol(o, TEXT + 0xa, &start));
	ms_jitobj_unref(o);
	/* its name outside .strtab */
	s.st_size = 0x21;
	s.st_name = 5000;
	memcpy(image + lay.symtab + sizeof(s), &s, sizeof(s));
	copy = malloc(image_len);
	memcpy(copy, image, image_len);
	assert_non_null(o = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY, &w, &code));
	assert_null(ms_jitobj_symbol(o, TEXT + 0xa, &start));
	ms_jitobj_unref(o);
	/* size 0: to the section's end */
	s.st_name = 1;
	s.st_size = 0;
	memcpy(image + lay.symtab + sizeof(s), &s, sizeof(s));
	copy = malloc(image_len);
	memcpy(copy, image, image_len);
	assert_non_null(o = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY, &w, &code));
	assert_string_equal(ms_jitobj_symbol(o, TEXT + 0x3f, &start), "jit_gdb_func");
	assert_null(ms_jitobj_symbol(o, TEXT + 0x40, &start));
	ms_jitobj_unref(o);
}

/* Objects over the same code: the older holds it until its end; then the newer. */
static void test_table_overlap(void **state)
{
	struct ms_jitobj_table *t = ms_jitobj_table_new();
	struct ms_jitobj *a, *b, *found;
	const char *w, *code;
	uint8_t *copy;
	uint64_t lo, hi;

	(void)state;
	copy = malloc(image_len);
	memcpy(copy, image, image_len);
	assert_non_null(a = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY, &w, &code));
	build(TEXT + 0x20);
	copy = malloc(image_len);
	memcpy(copy, image, image_len);
	assert_non_null(b = ms_jitobj_new(copy, (uint32_t)image_len, ENTRY + 8, &w, &code));
	assert_int_equal(ms_jitobj_table_add(t, a, 100), 1);
	assert_int_equal(ms_jitobj_table_add(t, a, 100), 0);
	assert_int_equal(ms_jitobj_table_add(t, b, 200), 1);
	assert_int_equal(ms_jitobj_table_next_end(t), 200);
	assert_int_equal(ms_jitobj_table_find(t, TEXT + 0x30, &found), 1);
	assert_ptr_equal(found, a);
	assert_int_equal(ms_jitobj_table_find(t, TEXT + 0x50, &found), 1);
	assert_ptr_equal(found, b);
	assert_int_equal(ms_jitobj_table_expire(t, 199), 0);
	assert_int_equal(ms_jitobj_table_expire(t, 200), 1);
	assert_int_equal(ms_jitobj_table_find(t, TEXT + 0x30, &found), 1);
	assert_ptr_equal(found, b);
	assert_int_equal(ms_jitobj_table_find(t, TEXT + 0x10, &found), 0);
	lo = JBASE;
	hi = JBASE + JLEN;
	assert_int_equal(ms_jitobj_table_gap(t, TEXT + 0x10, &lo, &hi), 0);
	assert_int_equal(lo, JBASE);
	assert_int_equal(hi, TEXT + 0x20);
	lo = JBASE;
	hi = JBASE + JLEN;
	assert_int_equal(ms_jitobj_table_gap(t, TEXT + 0x70, &lo, &hi), 0);
	assert_int_equal(lo, TEXT + 0x60);
	assert_int_equal(hi, JBASE + JLEN);
	ms_jitobj_unref(a);
	ms_jitobj_unref(b);
	ms_jitobj_table_free(t);
}

/*
 * A real object as LLVM 14's lli registers it (tests/fixtures/jitwork.ll,
 * copied from a running lli with gdb): ET_REL, .text at 0x7f031678e000
 * with leaf, middle, outer and main, and its .eh_frame still unrelocated
 * (each FDE's pc 0, R_X86_64_PC64 against .text in .rela.eh_frame), as
 * GDB relocates it when it reads it. Relocated, every function has CFI;
 * read as it is, none has.
 */
static void test_lli_object(void **state)
{
	static const struct { uint64_t off; int32_t cfa; } at[] = {
		{ 0x10, 8 },		/* leaf: no frame */
		{ 0x51, 16 },		/* middle, after its push */
		{ 0x78, 48 },		/* outer, after its five pushes */
	};
	FILE *f = fopen(MS_SRCDIR "/tests/unit/data/lli14-jitwork.jitobj", "rb");
	const uint64_t text = 0x7f031678e000ull;
	uint8_t *bytes = malloc(4096);
	struct ms_jitobj *o;
	const char *w, *code;
	uint32_t rule;
	size_t len;

	(void)state;
	assert_non_null(f);
	assert_non_null(bytes);
	len = fread(bytes, 1, 4096, f);
	fclose(f);
	assert_int_equal(len, 1976);
	assert_non_null(o = ms_jitobj_new(bytes, (uint32_t)len, ENTRY, &w, &code));
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		const struct ms_cfi_rule *r;

		assert_int_equal(ms_cfi_find(ms_jitobj_cfi(o), text + at[i].off, &rule), 1);
		r = ms_cfi_rule(ms_jitobj_cfi(o), rule);
		assert_int_equal(r->cfa_reg, 7);
		assert_int_equal(r->cfa_arg, at[i].cfa);
	}
	ms_jitobj_unref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_lli_object, reset),
		cmocka_unit_test_setup(test_cfi_and_symbols, reset),
		cmocka_unit_test_setup(test_fp_method, reset),
		cmocka_unit_test_setup(test_no_mapping, reset),
		cmocka_unit_test_setup(test_unregister, reset),
		cmocka_unit_test_setup(test_mapping_time, reset),
		cmocka_unit_test_setup(test_read_again, reset),
		cmocka_unit_test_setup(test_over_perf_map, reset),
		cmocka_unit_test_setup(test_exec_fork, reset),
		cmocka_unit_test_setup(test_broken_chunks, reset),
		cmocka_unit_test_setup(test_bad_elf, reset),
		cmocka_unit_test_setup(test_bad_elf_counted, reset),
		cmocka_unit_test_setup(test_bad_symbols, reset),
		cmocka_unit_test_setup(test_table_overlap, reset),
	};

	ms_set_progname("unwind-jitobj-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}
