/*
 * Unit tests of the vdso's image in ms-collect and ms-unwind: the image this
 * process maps (perf/vdso.c), the unwinder keeping the stream's image and
 * knowing [vdso] mappings by its build id, a sample walked from vdso code
 * to its caller by the image's own call-frame information, and images that
 * are garbage, truncated at every length, corrupt, without a build id or
 * too large: counted problems and no CFI, never a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perf/vdso.h"
#include "stream/records.h"
#include "dwarf/cfi.h"
#include "elf/elffile.h"
#include "unwind/unwind.h"
#include "util/error.h"

#define PID 7
#define VDSO_AT 0x7fff00000000ull	/* where the samples' [vdso] is mapped */
#define ANON_AT 0x10000ull		/* the caller: anonymous code, no CFI */
#define CALLER (ANON_AT + 0x10)
#define SP 0x7ffe00001000ull

static uint8_t image[MS_VDSO_MAX];	/* this process's vdso, copied */
static uint32_t image_len;
static uint64_t entry;			/* __vdso_clock_gettime's address in it */
static uint32_t image_bid_len;		/* its build id's length */

static struct ms_stack *stack;
static struct ms_sample *sample;
static uint8_t stack_bytes[64];

/* The address of the first of names that the image's .dynsym defines. */
static uint64_t vdso_symbol(uint8_t *img, uint32_t len)
{
	static const char *const names[] = { "__vdso_clock_gettime", "clock_gettime" };
	struct ms_elf_file f;
	Elf_Scn *scn = NULL;
	uint64_t found = 0;

	assert_int_equal(ms_elf_memory_open(&f, img, len), MS_SYM_OK);
	while (!found && (scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (unsigned n = 0; n < 2 && !found; n++) {
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;

				if (gelf_getsym(d, (int)i, &sym) && sym.st_value &&
				    (name = elf_strptr(f.elf, sh.sh_link, sym.st_name)) &&
				    !strcmp(name, names[n])) {
					found = sym.st_value;
					break;
				}
			}
		}
	}
	ms_elf_file_close(&f);
	return found;
}

static int setup(void **state)
{
	struct ms_vdso v;
	struct ms_elf_file f;
	const char *why = NULL;

	(void)state;
	ms_set_progname("vdso-test");
	/* Fail, never skip: every x86-64 Linux host maps a vdso. */
	if (ms_vdso_own(&v, &why) != 1) {
		fprintf(stderr, "this process has no vdso image to test with: %s\n",
			why ? why : "AT_SYSINFO_EHDR is 0");
		return -1;
	}
	memcpy(image, v.image, v.len);
	image_len = v.len;
	entry = vdso_symbol(image, image_len);
	if (ms_elf_memory_open(&f, image, image_len) != MS_SYM_OK)
		return -1;
	image_bid_len = f.build_id_len;
	ms_elf_file_close(&f);
	stack = calloc(1, sizeof(*stack));
	sample = calloc(1, sizeof(*sample));
	return entry && stack && sample ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(stack);
	free(sample);
	return 0;
}

/* How many times the unwinder counted problem code (0 when never). */
static uint64_t problem(struct ms_unwinder *u, const char *code)
{
	const struct ms_problems *p = ms_unwinder_problems(u);

	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, code))
			return p->entries[i].count;
	return 0;
}

/* A DWARF unwinder of process PID: [vdso] at VDSO_AT, anonymous code at ANON_AT. */
static struct ms_unwinder *unwinder(const uint8_t *img, uint32_t len, bool with_record)
{
	struct ms_unwind_options o = { .method = &ms_unwind_method_dwarf };
	struct ms_unwinder *u = ms_unwinder_new(&o);
	struct ms_mmap m = {
		.pid = PID, .tid = PID, .start = VDSO_AT, .len = 0x2000,
		.prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER,
		.filename = { "[vdso]", 6 },
	};
	struct ms_vdso v = { .image = img, .len = len };

	assert_non_null(u);
	if (with_record)
		assert_int_equal(ms_unwinder_vdso(u, &v), 0);
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	m.start = ANON_AT;
	m.len = 0x1000;
	m.filename = (struct ms_str){ "//anon", 6 };
	assert_int_equal(ms_unwinder_mmap(u, &m), 0);
	return u;
}

/*
 * A sample at the first instruction of a vdso function at module address
 * at: its return address (CALLER) is on top of the copied stack, where
 * every function's entry rule (CFA = %rsp + 8) finds it.
 */
static const struct ms_sample *sample_at(uint64_t at)
{
	uint64_t ret = CALLER;

	memset(sample, 0, sizeof(*sample));
	sample->pid = sample->tid = PID;
	sample->cpumode = MS_CPUMODE_USER;
	sample->ip = VDSO_AT + at;
	sample->regs_abi = 2;
	sample->regs_mask = 0xff01ff;
	sample->n_regs = 17;
	sample->regs[7] = SP;			/* SP */
	sample->regs[8] = VDSO_AT + at;		/* IP */
	memset(stack_bytes, 0, sizeof(stack_bytes));
	memcpy(stack_bytes, &ret, 8);
	sample->stack = stack_bytes;
	sample->stack_len = sizeof(stack_bytes);
	return sample;
}

static void test_own_image(void **state)
{
	struct ms_elf_file f;

	(void)state;
	/* An ELF image of this process's class, with a build id and a function. */
	assert_true(image_len > 64 && image_len <= MS_VDSO_MAX);
	assert_memory_equal(image, "\x7f" "ELF\x02", 5);
	assert_int_equal(ms_elf_memory_open(&f, image, image_len), MS_SYM_OK);
	assert_true(f.build_id_len > 0);
	ms_elf_file_close(&f);
	assert_true(entry > 0 && entry < image_len);
}

static void test_unwinds_through_vdso(void **state)
{
	struct ms_unwinder *u = unwinder(image, image_len, true);
	struct ms_module m, vdso = { 0 };
	struct ms_elf_file f;
	int n = 0;

	(void)state;
	assert_int_equal(ms_unwinder_sample(u, sample_at(entry), stack), 0);
	/* The vdso frame, then its caller by the image's CFI: anonymous code ends it. */
	assert_int_equal(stack->n_frames, 2);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->frames[0].address, entry);
	assert_int_equal(stack->frames[0].flags, 0);
	assert_int_equal(stack->frames[1].address, CALLER);
	assert_int_equal(stack->frames[1].flags, MS_FRAME_RETURN);
	while (ms_unwinder_next_module(u, &m)) {
		if (m.id == stack->frames[0].module)
			vdso = m;
		n++;
	}
	assert_int_equal(n, 2);
	/* Known by the image's build id, under its mapping's name. */
	assert_int_equal(vdso.kind, MS_MODULE_VDSO);
	assert_int_equal(vdso.path.len, 6);
	assert_memory_equal(vdso.path.ptr, "[vdso]", 6);
	assert_int_equal(ms_elf_memory_open(&f, image, image_len), MS_SYM_OK);
	assert_int_equal(vdso.build_id_len, f.build_id_len);
	assert_memory_equal(vdso.build_id, f.build_id, f.build_id_len);
	ms_elf_file_close(&f);
	assert_int_equal(ms_unwinder_stats(u)->cfi_modules, 1);
	assert_int_equal(ms_problems_total(ms_unwinder_problems(u)), 0);
	/* The image is the stream's: a copy, not the caller's buffer. */
	{
		uint32_t len;

		assert_ptr_not_equal(ms_unwinder_vdso_image(u, &len), image);
		assert_int_equal(len, image_len);
	}
	/* The same image again is no news; another one is a problem, and ignored. */
	{
		struct ms_vdso same = { image, image_len }, other = { image, image_len - 1 };

		assert_int_equal(ms_unwinder_vdso(u, &same), 0);
		assert_int_equal(problem(u, "vdso-image-changed"), 0);
		assert_int_equal(ms_unwinder_vdso(u, &other), 0);
		assert_int_equal(problem(u, "vdso-image-changed"), 1);
		assert_int_equal(ms_unwinder_sample(u, sample_at(entry), stack), 0);
		assert_int_equal(stack->n_frames, 2);
	}
	ms_unwinder_free(u);
}

static void test_no_record(void **state)
{
	struct ms_unwinder *u = unwinder(image, image_len, false);
	struct ms_module m;

	(void)state;
	/* Without the image: the vdso frame ends the stack, as it always did. */
	assert_int_equal(ms_unwinder_sample(u, sample_at(entry), stack), 0);
	assert_int_equal(stack->n_frames, 1);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(stack->frames[0].address, entry);
	assert_true(ms_unwinder_next_module(u, &m));
	assert_int_equal(m.kind, MS_MODULE_VDSO);
	assert_int_equal(m.build_id_len, 0);
	assert_int_equal(problem(u, "no-vdso-image"), 1);
	ms_unwinder_free(u);
}

/*
 * Unwind samples at several vdso addresses with image img as the stream's:
 * whatever the image holds, each stack is the vdso frame alone (no CFI) or
 * with its caller, and ends with a reason.
 */
static uint32_t tried_bid_len;	/* the vdso module's build id length in try_image() */

static struct ms_unwinder *try_image(uint8_t *img, uint32_t len)
{
	static const uint64_t at[] = { 0, 0x10, 0x7ff, 0x1000, 0x1fff };
	struct ms_unwinder *u = unwinder(img, len, true);
	struct ms_module m;

	tried_bid_len = UINT32_MAX;
	for (unsigned i = 0; i <= sizeof(at) / sizeof(at[0]); i++) {
		assert_int_equal(ms_unwinder_sample(u, sample_at(i ? at[i - 1] : entry), stack), 0);
		assert_true(stack->n_frames == 1 || stack->n_frames == 2);
		assert_true(stack->reason <= MS_END_KERNEL_ONLY);
		while (ms_unwinder_next_module(u, &m))
			if (m.kind == MS_MODULE_VDSO)
				tried_bid_len = m.build_id_len;
	}
	assert_int_not_equal(tried_bid_len, UINT32_MAX);
	return u;
}

/*
 * The image tried was refused with problem code: the module has no build
 * id, and a sample at the entry has only the vdso frame (no CFI).
 */
static void assert_no_cfi(struct ms_unwinder *u, const char *code)
{
	assert_int_equal(tried_bid_len, 0);
	assert_int_equal(ms_unwinder_sample(u, sample_at(entry), stack), 0);
	assert_int_equal(stack->n_frames, 1);
	assert_int_equal(stack->reason, MS_END_NO_CFI);
	assert_int_equal(problem(u, code), 1);
	assert_int_equal(problem(u, "no-vdso-image"), 0);
	assert_int_equal(ms_unwinder_stats(u)->cfi_modules, 0);
}

static void test_garbage_and_oversized(void **state)
{
	static uint8_t junk[MS_VDSO_MAX + 1];
	struct ms_unwinder *u;

	(void)state;
	srandom(3);
	for (uint32_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)random();
	u = try_image(junk, 8192);
	assert_no_cfi(u, "bad-vdso-image");
	ms_unwinder_free(u);
	/* ELF magic, then garbage. */
	memcpy(junk, image, 16);
	u = try_image(junk, 8192);
	assert_no_cfi(u, "bad-vdso-image");
	ms_unwinder_free(u);
	/* More than a vdso record may hold (a caller of the library may try). */
	memcpy(junk, image, image_len);
	u = try_image(junk, MS_VDSO_MAX + 1);
	assert_no_cfi(u, "bad-vdso-image");
	ms_unwinder_free(u);
}

/* The image with its GNU build-id note renamed: an ELF file without a build id. */
static void test_no_build_id(void **state)
{
	static uint8_t copy[MS_VDSO_MAX];
	struct ms_unwinder *u;
	uint32_t i, hits = 0;

	(void)state;
	memcpy(copy, image, image_len);
	/* Note header: namesz 4, descsz, type 3 (NT_GNU_BUILD_ID), then "GNU\0". */
	for (i = 0; i + 16 <= image_len; i += 4) {
		uint32_t namesz, type;

		memcpy(&namesz, copy + i, 4);
		memcpy(&type, copy + i + 8, 4);
		if (namesz == 4 && type == 3 && !memcmp(copy + i + 12, "GNU", 4)) {
			copy[i + 12] = 'X';
			hits++;
		}
	}
	assert_true(hits >= 1);
	u = try_image(copy, image_len);
	assert_no_cfi(u, "vdso-no-build-id");
	ms_unwinder_free(u);
}

/* Cut at every length: a usable image or a counted problem, never a crash. */
static void test_truncated_everywhere(void **state)
{
	static uint8_t copy[MS_VDSO_MAX];
	uint32_t refused = 0;

	(void)state;
	for (uint32_t len = 1; len < image_len; len += len < 256 ? 1 : 7) {
		struct ms_unwinder *u;

		memcpy(copy, image, len);
		u = try_image(copy, len);
		/* A refused image is a problem and gives no CFI: its frame ends the stack. */
		if (ms_problems_total(ms_unwinder_problems(u))) {
			refused++;
			assert_int_equal(tried_bid_len, 0);
			assert_int_equal(ms_unwinder_sample(u, sample_at(entry), stack), 0);
			assert_int_equal(stack->n_frames, 1);
		} else {
			assert_int_equal(tried_bid_len, image_bid_len);
		}
		ms_unwinder_free(u);
	}
	/* Every cut inside the ELF header at least is refused. */
	assert_true(refused >= 64);
	memcpy(copy, image, 64);
	{
		struct ms_unwinder *u = try_image(copy, 64);

		assert_no_cfi(u, "bad-vdso-image");
		ms_unwinder_free(u);
	}
}

/*
 * Headers that claim far more than the image holds (section and segment
 * tables, the .eh_frame_hdr segment), and random corruption: libelf and
 * libdw must read within the bytes given.
 */
static void test_corrupt_headers(void **state)
{
	static uint8_t copy[MS_VDSO_MAX];
	Elf64_Ehdr eh;
	struct ms_unwinder *u;

	(void)state;
	memcpy(&eh, image, sizeof(eh));
	for (int what = 0; what < 6; what++) {
		Elf64_Ehdr h = eh;

		memcpy(copy, image, image_len);
		switch (what) {
		case 0: h.e_shoff = UINT64_MAX - 8; break;
		case 1: h.e_shnum = 0xffff; break;
		case 2: h.e_phoff = (uint64_t)image_len - 8; break;
		case 3: h.e_phnum = 0xffff; break;
		case 4: h.e_shstrndx = 0xfffe; break;
		default:
			/* Every segment's file size and offset huge. */
			for (unsigned i = 0; i < eh.e_phnum; i++) {
				Elf64_Phdr ph;
				uint8_t *p = copy + eh.e_phoff + i * sizeof(ph);

				memcpy(&ph, p, sizeof(ph));
				ph.p_filesz = UINT64_MAX / 2;
				ph.p_offset = ph.p_type == PT_LOAD ? 0 : UINT64_MAX - 0x1000;
				memcpy(p, &ph, sizeof(ph));
			}
			break;
		}
		memcpy(copy, &h, sizeof(h));
		u = try_image(copy, image_len);
		ms_unwinder_free(u);
	}
	/* Bytes flipped at random, a few at a time. */
	srandom(11);
	for (int round = 0; round < 300; round++) {
		memcpy(copy, image, image_len);
		for (int k = 0; k < 1 + round % 8; k++)
			copy[(uint32_t)random() % image_len] ^= (uint8_t)(1 + random() % 255);
		u = try_image(copy, image_len);
		ms_unwinder_free(u);
	}
}

/* The CFI of an image is used only when the image is the module (its build id). */
static void test_cfi_image_identity(void **state)
{
	struct ms_module m = { .kind = MS_MODULE_VDSO, .path = { "[vdso]", 6 } };
	struct ms_elf_file f;
	struct ms_cfi *c;
	uint32_t rule;

	(void)state;
	assert_int_equal(ms_elf_memory_open(&f, image, image_len), MS_SYM_OK);
	m.build_id_len = f.build_id_len;
	memcpy(m.build_id, f.build_id, f.build_id_len);
	ms_elf_file_close(&f);
	c = ms_cfi_open_image(image, image_len, &m, NULL);
	assert_non_null(c);
	assert_int_equal(ms_cfi_find(c, entry, &rule), 1);
	/* At a function's entry: CFA = %rsp + 8, the return address at CFA - 8. */
	assert_int_equal(ms_cfi_rule(c, rule)->cfa_reg, MS_DW_RSP);
	assert_int_equal(ms_cfi_rule(c, rule)->cfa_arg, 8);
	assert_true(ms_cfi_stats(c)->has_eh_frame);
	ms_cfi_free(c);
	/* Another build id: the image is not the module. */
	m.build_id[0] ^= 1;
	c = ms_cfi_open_image(image, image_len, &m, NULL);
	assert_non_null(c);
	assert_int_equal(ms_cfi_find(c, entry, &rule), 0);
	ms_cfi_free(c);
	/* No build id: nothing proves it. */
	m.build_id_len = 0;
	c = ms_cfi_open_image(image, image_len, &m, NULL);
	assert_non_null(c);
	assert_int_equal(ms_cfi_find(c, entry, &rule), 0);
	ms_cfi_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_image),
		cmocka_unit_test(test_unwinds_through_vdso),
		cmocka_unit_test(test_no_record),
		cmocka_unit_test(test_garbage_and_oversized),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_corrupt_headers),
		cmocka_unit_test(test_cfi_image_identity),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
