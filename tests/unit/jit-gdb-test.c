/*
 * The GDB JIT interface as ms-collect reads it (jit/gdbjit.h,
 * jit/gdbjitfind.h): the entry walk over fake memory (cycles, bounds,
 * unreadable and misaligned entries), the descriptor's bytes, the diff of
 * what was shipped against a walk, an object's executable sections from a
 * hand-made image, the load bias, /proc/PID/maps lines, and the search of
 * this very process, which defines __jit_debug_descriptor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jit/gdbjit.h"
#include "jit/gdbjitfind.h"

/* ---- fake memory: entries at BASE + 32 * i ---- */

#define BASE 0x10000ull
#define N_FAKE 80000u

struct fake {
	uint64_t next[N_FAKE];
	uint32_t n;		/* entries readable */
	uint64_t reads;
};

static struct fake fk;

static long fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	uint64_t i = (addr - BASE) / 32, w[4];

	f->reads++;
	if (addr < BASE || (addr - BASE) % 32 || i >= f->n || len != 32)
		return errno = EFAULT, -1;
	w[0] = f->next[i];
	w[1] = 0;
	w[2] = 0x900000 + i * 0x1000;	/* symfile_addr */
	w[3] = 0x100 + i;		/* symfile_size */
	memcpy(buf, w, 32);
	return 32;
}

static uint64_t at(uint32_t i)
{
	return BASE + 32ull * i;
}

/* A list 0 -> 1 -> ... -> n-1. */
static void chain(uint32_t n)
{
	fk.n = n;
	fk.reads = 0;
	for (uint32_t i = 0; i < n; i++)
		fk.next[i] = i + 1 < n ? at(i + 1) : 0;
}

static void test_walk(void **state)
{
	struct ms_gdbjit_walk w;

	(void)state;
	ms_gdbjit_walk_init(&w);
	/* Empty. */
	assert_int_equal(ms_gdbjit_walk(&w, 0, 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_DONE);
	assert_int_equal(w.n, 0);
	/* Three, in list order, with their images. */
	chain(3);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_DONE);
	assert_int_equal(w.n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(w.e[i].entry, at(i));
		assert_int_equal(w.e[i].addr, 0x900000 + i * 0x1000);
		assert_int_equal(w.e[i].size, 0x100 + i);
	}
	/* A cycle back to the second: it stops there, each entry once. */
	chain(5);
	fk.next[4] = at(1);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_CYCLE);
	assert_int_equal(w.end_at, at(1));
	assert_int_equal(w.n, 5);
	/* A self-loop. */
	chain(1);
	fk.next[0] = at(0);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_CYCLE);
	assert_int_equal(w.n, 1);
	/* An entry that cannot be read: what came before it stays. */
	chain(4);
	fk.next[2] = at(50);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_UNREADABLE);
	assert_int_equal(w.end_at, at(50));
	assert_int_equal(w.err, EFAULT);
	assert_int_equal(w.n, 3);
	/* A misaligned pointer is not read at all. */
	chain(4);
	fk.next[1] = at(2) + 4;
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_MISALIGNED);
	assert_int_equal(w.n, 2);
	assert_int_equal(fk.reads, 2);
	/* A bound given. */
	chain(10);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 5, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_MAX_REACHED);
	assert_int_equal(w.n, 5);
	assert_int_equal(w.end_at, at(5));
	/* The default bound: 65536 entries, not one read more. */
	chain(N_FAKE);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_MAX_REACHED);
	assert_int_equal(w.n, MS_GDBJIT_WALK_MAX);
	assert_int_equal(fk.reads, MS_GDBJIT_WALK_MAX);
	/* A long cycle found after the set grew, and exactly the bound ends DONE. */
	chain(MS_GDBJIT_WALK_MAX);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_DONE);
	assert_int_equal(w.n, MS_GDBJIT_WALK_MAX);
	chain(3000);
	fk.next[2999] = at(1234);
	assert_int_equal(ms_gdbjit_walk(&w, at(0), 0, fake_read, &fk), 0);
	assert_int_equal(w.end, MS_GDBJIT_WALK_CYCLE);
	assert_int_equal(w.n, 3000);
	ms_gdbjit_walk_release(&w);
}

static void test_desc(void **state)
{
	uint8_t b[MS_GDBJIT_DESC_SIZE] = { 1, 0, 0, 0, 2, 0, 0, 0 };
	uint64_t rel = 0x7f0012345678, first = 0x5555aaaa0000;
	struct ms_gdbjit_desc d;

	(void)state;
	memcpy(b + 8, &rel, 8);
	memcpy(b + 16, &first, 8);
	ms_gdbjit_desc_parse(b, &d);
	assert_int_equal(d.version, 1);
	assert_int_equal(d.action, 2);
	assert_int_equal(d.relevant, rel);
	assert_int_equal(d.first, first);
}

/* ---- the diff ---- */

static char log_buf[512];

static void log_gone(void *ctx, const struct ms_gdbjit_entry *e)
{
	(void)ctx;
	snprintf(log_buf + strlen(log_buf), sizeof(log_buf) - strlen(log_buf), "-%llx ",
		 (unsigned long long)e->entry);
}

static void log_added(void *ctx, const struct ms_gdbjit_entry *e)
{
	(void)ctx;
	snprintf(log_buf + strlen(log_buf), sizeof(log_buf) - strlen(log_buf), "+%llx:%llx ",
		 (unsigned long long)e->entry, (unsigned long long)e->addr);
}

static void log_kept(void *ctx, uint32_t i)
{
	(void)ctx;
	snprintf(log_buf + strlen(log_buf), sizeof(log_buf) - strlen(log_buf), "=%u ", i);
}

static const struct ms_gdbjit_diff_fns log_fns = { log_gone, log_added, log_kept };

static void test_diff(void **state)
{
	const struct ms_gdbjit_entry old[] = {
		{ 0xa0, 0x1000, 16 }, { 0xb0, 0x2000, 16 }, { 0xc0, 0x3000, 16 }, { 0xe0, 0x5000, 8 },
	};
	struct ms_gdbjit_entry now[4];

	(void)state;
	/* Listed newest first, as JITs prepend. */
	now[0] = (struct ms_gdbjit_entry){ 0xd0, 0x4000, 16 };	/* new */
	now[1] = (struct ms_gdbjit_entry){ 0xc0, 0x3800, 16 };	/* reused entry: another image */
	now[2] = (struct ms_gdbjit_entry){ 0xb0, 0x2000, 16 };	/* the same */
	now[3] = (struct ms_gdbjit_entry){ 0xe0, 0x5000, 9 };	/* another size */
	log_buf[0] = '\0';
	ms_gdbjit_diff(old, 4, now, 4, true, &log_fns, NULL);
	assert_string_equal(log_buf, "-a0 =1 -c0 +c0:3800 +d0:4000 -e0 +e0:5000 ");
	/* A walk that stopped early says nothing of what it did not reach. */
	now[0] = (struct ms_gdbjit_entry){ 0xd0, 0x4000, 16 };
	now[1] = (struct ms_gdbjit_entry){ 0xc0, 0x3000, 16 };
	log_buf[0] = '\0';
	ms_gdbjit_diff(old, 4, now, 2, false, &log_fns, NULL);
	assert_string_equal(log_buf, "=2 +d0:4000 ");
	/* Everything gone; nothing shipped yet. */
	log_buf[0] = '\0';
	ms_gdbjit_diff(old, 4, now, 0, true, &log_fns, NULL);
	assert_string_equal(log_buf, "-a0 -b0 -c0 -e0 ");
	log_buf[0] = '\0';
	ms_gdbjit_diff(NULL, 0, now, 2, true, &log_fns, NULL);
	assert_string_equal(log_buf, "+c0:3000 +d0:4000 ");
}

/* ---- an image ---- */

#define IMG_SH 6

/* An ELF64 x86-64 object: section headers after the header, as jitgdb makes its own. */
static size_t make_image(uint8_t *img, const Elf64_Shdr *sh, uint16_t n)
{
	Elf64_Ehdr eh = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = n;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), sh, n * sizeof(*sh));
	return sizeof(eh) + n * sizeof(*sh);
}

static void test_exec_ranges(void **state)
{
	static uint8_t img[4096];
	Elf64_Shdr sh[IMG_SH] = {
		{ 0 },
		/* .text and a second code section touching it: one range */
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = 0x7f0000001000, .sh_size = 0x20 },
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_WRITE, .sh_addr = 0x7f0000009000, .sh_size = 0x100 },
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = 0x7f0000000100, .sh_size = 0x8 },
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = 0x7f0000001020, .sh_size = 0x10 },
		/* empty, and wrapping: none */
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = 0x7f0000005000, .sh_size = 0 },
	};
	struct ms_gdbjit_range r[8];
	size_t len;
	Elf64_Ehdr eh;

	(void)state;
	len = make_image(img, sh, IMG_SH);
	assert_null(ms_gdbjit_image_wrong(img, len));
	assert_int_equal(ms_gdbjit_exec_ranges(img, len, r, 8), 2);
	assert_int_equal(r[0].start, 0x7f0000000100);
	assert_int_equal(r[0].end, 0x7f0000000108);
	assert_int_equal(r[1].start, 0x7f0000001000);
	assert_int_equal(r[1].end, 0x7f0000001030);
	/* Bounded by what the caller gives. */
	assert_int_equal(ms_gdbjit_exec_ranges(img, len, r, 1), 1);
	sh[5].sh_size = 0x10;
	sh[5].sh_addr = UINT64_MAX - 4;
	len = make_image(img, sh, IMG_SH);
	assert_int_equal(ms_gdbjit_exec_ranges(img, len, r, 8), 2);
	/* Wrong images. */
	assert_non_null(ms_gdbjit_image_wrong(img, 10));
	assert_non_null(ms_gdbjit_image_wrong(img, len - 1));	/* headers cut */
	memcpy(&eh, img, sizeof(eh));
	eh.e_shoff = 1u << 20;
	memcpy(img, &eh, sizeof(eh));
	assert_non_null(ms_gdbjit_image_wrong(img, len));
	assert_int_equal(ms_gdbjit_exec_ranges(img, len, r, 8), -1);
	len = make_image(img, sh, IMG_SH);
	img[EI_CLASS] = ELFCLASS32;
	assert_non_null(ms_gdbjit_image_wrong(img, len));
	len = make_image(img, sh, IMG_SH);
	memcpy(&eh, img, sizeof(eh));
	eh.e_machine = EM_AARCH64;
	memcpy(img, &eh, sizeof(eh));
	assert_non_null(ms_gdbjit_image_wrong(img, len));
	len = make_image(img, sh, IMG_SH);
	img[1] = 'X';
	assert_non_null(ms_gdbjit_image_wrong(img, len));
	/* A huge shnum that would read past the image. */
	len = make_image(img, sh, IMG_SH);
	memcpy(&eh, img, sizeof(eh));
	eh.e_shnum = 0xffff;
	memcpy(img, &eh, sizeof(eh));
	assert_non_null(ms_gdbjit_image_wrong(img, len));
}

/* ---- the load bias ---- */

static void test_bias(void **state)
{
	/* A PIE: headers, code, then data whose file offset is not page-aligned. */
	const struct ms_elf_load pie[] = {
		{ .offset = 0, .filesz = 0x1000, .vaddr = 0 },
		{ .offset = 0x1000, .filesz = 0x5000, .vaddr = 0x1000 },
		{ .offset = 0x6e10, .filesz = 0x300, .vaddr = 0x7e10 },
	};
	const struct ms_elf_load exe[] = { { .offset = 0, .filesz = 0x2000, .vaddr = 0x400000 } };
	uint64_t bias;

	(void)state;
	assert_true(ms_gdbjit_bias(pie, 3, 0x7f0000000000, 0, 0x1000, &bias));
	assert_int_equal(bias, 0x7f0000000000);
	assert_true(ms_gdbjit_bias(pie, 3, 0x7f0000001000, 0x1000, 0x1000, &bias));
	assert_int_equal(bias, 0x7f0000000000);
	/* The data mapping starts at the page holding its segment's first byte. */
	assert_true(ms_gdbjit_bias(pie, 3, 0x7f0000007000, 0x6000, 0x1000, &bias));
	assert_int_equal(bias, 0x7f0000000000);
	/* A non-PIE executable: no bias. */
	assert_true(ms_gdbjit_bias(exe, 1, 0x400000, 0, 0x1000, &bias));
	assert_int_equal(bias, 0);
	/* An offset no segment holds. */
	assert_false(ms_gdbjit_bias(pie, 3, 0x7f0000009000, 0x9000, 0x1000, &bias));
	assert_false(ms_gdbjit_bias(pie, 0, 0x7f0000000000, 0, 0x1000, &bias));
}

/* ---- /proc/PID/maps ---- */

static void test_maps_line(void **state)
{
	struct ms_gdbjit_mapline m;
	const char *l1 = "7f1c2a000000-7f1c2a022000 r--p 00001000 fd:01 1234567                    /usr/lib/x86_64-linux-gnu/libc.so.6";
	const char *l2 = "55d0c0a00000-55d0c0a01000 r-xp 00000000 08:02 99 /tmp/a b (deleted)";
	const char *l3 = "7ffd5e1f0000-7ffd5e211000 rw-p 00000000 00:00 0                          [stack]";

	(void)state;
	assert_int_equal(ms_gdbjit_maps_line(l1, strlen(l1), &m), 0);
	assert_int_equal(m.start, 0x7f1c2a000000);
	assert_int_equal(m.end, 0x7f1c2a022000);
	assert_int_equal(m.pgoff, 0x1000);
	assert_int_equal(m.maj, 0xfd);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.ino, 1234567);
	assert_int_equal(m.path_len, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_memory_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.path_len);
	assert_false(m.deleted);
	assert_int_equal(ms_gdbjit_maps_line(l2, strlen(l2), &m), 0);
	assert_true(m.deleted);
	assert_int_equal(m.path_len, strlen("/tmp/a b"));
	assert_int_equal(ms_gdbjit_maps_line(l3, strlen(l3), &m), 0);
	assert_int_equal(m.ino, 0);
	assert_int_equal(ms_gdbjit_maps_line("7f-7e r-xp 0 00:00 0", 20, &m), -1);	/* end < start */
	assert_int_equal(ms_gdbjit_maps_line("7f-80 r-xp", 10, &m), -1);
	assert_int_equal(ms_gdbjit_maps_line("zz-80 r-xp 0 00:00 0", 20, &m), -1);
	assert_int_equal(ms_gdbjit_maps_line("11112222333344445-80 r-xp 0 00:00 0", 36, &m), -1);
}

/* ---- the search, of this process ---- */

struct jit_descriptor {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
};
/* What a JIT defines: the search finds it in this executable's .symtab. */
__attribute__((used)) struct jit_descriptor __jit_debug_descriptor = { 1, 0, 0, 0 };

static void test_search_self(void **state)
{
	struct ms_gdbjit_files *c = ms_gdbjit_files_new();
	struct ms_gdbjit_found f;

	(void)state;
	assert_non_null(c);
	assert_int_equal(ms_gdbjit_search(c, getpid(), &f), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.addr[0], (uint64_t)(uintptr_t)&__jit_debug_descriptor);
	assert_true(f.files >= 2);
	assert_int_equal(f.opened, f.files);
	assert_int_equal(f.unproved, 0);
	/* Again: every file's answer from the cache, none opened. */
	assert_int_equal(ms_gdbjit_search(c, getpid(), &f), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.opened, 0);
	/* A process that is not there. */
	assert_int_equal(ms_gdbjit_search(c, 0x3fffffff, &f), -1);
	assert_int_equal(errno, ESRCH);
	ms_gdbjit_files_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_desc),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_exec_ranges),
		cmocka_unit_test(test_bias),
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_search_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
