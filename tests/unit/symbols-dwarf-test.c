/*
 * Unit tests of the layers under ms-symbolize's source facts: the FRAME
 * record's lines (pack, unpack, absent, malformed), demangling (C++, Rust
 * legacy and v0), the kernel's notes, the string pool, and the DWARF index
 * over the inline fixture, whole and with its .debug_info corrupted in
 * memory.
 *
 * Files: tests/fixtures/inline (built by the suite, -O2 -g, with mix()
 * inlined into round_sum() inlined into inline_work()) and its source,
 * found through the DWARF's own file names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "util/demangle.h"
#include "dwarf/dwarfidx.h"
#include "perf/kernel.h"
#include "util/strpool.h"
#include "elf/elffile.h"
#include "util/error.h"

static const char *fixture_path(const char *name)
{
	static char buf[PATH_MAX + 64];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	/* tests/unit/THIS -> tests/fixtures/NAME */
	snprintf(buf, sizeof(buf), "%s/../fixtures/%s", dirname(exe), name);
	return buf;
}

static int memfd(void)
{
	int fd = memfd_create("symbols-dwarf-test", 0);

	assert_true(fd >= 0);
	return fd;
}

static struct ms_str S(const char *s)
{
	return (struct ms_str){ s, (uint32_t)strlen(s) };
}

static void assert_str(struct ms_str s, const char *want)
{
	if (s.len != strlen(want) || memcmp(s.ptr, want, s.len))
		fail_msg("'%.*s' != '%s'", (int)s.len, s.ptr, want);
}

/* ---- FRAME records ---- */

static struct ms_reader *reread(int fd)
{
	struct ms_reader *r;

	lseek(fd, 0, SEEK_SET);
	r = ms_reader_open(fd, "frames");
	assert_non_null(r);
	return r;
}

static void test_frame_lines_round_trip(void **state)
{
	int fd = memfd();
	struct ms_writer *w = ms_writer_open(fd, "frames", 0);
	struct ms_frame in = {
		.module = 2, .address = 0x1261, .name = S("inline_work"), .symbol_start = 0x1240,
		.reason = MS_SYM_OK, .n_lines = 3,
	};
	struct ms_frame none = { .module = 2, .address = 0x99, .name = S("x"),
				 .reason = MS_SYM_NO_DEBUG };
	struct ms_frame *out = calloc(1, sizeof(*out));
	struct ms_record rec;
	struct ms_reader *r;

	(void)state;
	in.lines[0] = (struct ms_frame_line){ S("mix"), S(""), S("/src/inline.c"), 19, 15 };
	in.lines[1] = (struct ms_frame_line){ S("round_sum"), S(""), S("/src/inline.c"), 30, 24 };
	in.lines[2] = (struct ms_frame_line){ S("ns::f(int)"), S("_ZN2ns1fEi"), S("/src/a.cc"),
					      36, 34 };
	assert_non_null(w);
	assert_non_null(out);
	assert_int_equal(ms_writer_header(w, NULL, "test", "1"), 0);
	assert_int_equal(ms_frame_pack(w, &in), 0);
	assert_int_equal(ms_frame_pack(w, &none), 0);
	/* More entries than a record may hold is the writer's error. */
	in.n_lines = MS_FRAME_LINES_MAX + 1;
	assert_int_equal(ms_frame_pack(w, &in), -1);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reread(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_frame_unpack(&rec, out), 0);
	assert_int_equal(out->module, 2);
	assert_int_equal(out->address, 0x1261);
	assert_str(out->name, "inline_work");
	assert_int_equal(out->symbol_start, 0x1240);
	assert_int_equal(out->n_lines, 3);
	assert_str(out->lines[0].function, "mix");
	assert_str(out->lines[0].system_name, "");
	assert_str(out->lines[0].file, "/src/inline.c");
	assert_int_equal(out->lines[0].line, 19);
	assert_int_equal(out->lines[0].function_line, 15);
	assert_str(out->lines[1].function, "round_sum");
	assert_int_equal(out->lines[1].line, 30);
	assert_str(out->lines[2].function, "ns::f(int)");
	assert_str(out->lines[2].system_name, "_ZN2ns1fEi");
	assert_str(out->lines[2].file, "/src/a.cc");
	assert_int_equal(out->lines[2].function_line, 34);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	out->n_lines = 7;
	assert_int_equal(ms_frame_unpack(&rec, out), 0);
	assert_int_equal(out->reason, MS_SYM_NO_DEBUG);
	assert_int_equal(out->n_lines, 0);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
	free(out);
}

/*
 * Write one raw FRAME record, encoded by msgpack-c (not by the stream's
 * own encoder): the five minor-0 fields, then `extra` as given.
 */
typedef void (*extra_fn)(msgpack_packer *pk);

static void raw_frame(struct ms_writer *w, extra_fn extra, uint32_t n_extra)
{
	msgpack_sbuffer sb;
	msgpack_packer packer, *pk = &packer;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(pk, 6 + n_extra);
	msgpack_pack_uint32(pk, MS_REC_FRAME);
	msgpack_pack_uint32(pk, 1);
	msgpack_pack_uint64(pk, 0x10);
	msgpack_pack_str_with_body(pk, "f", 1);
	msgpack_pack_uint64(pk, 0x8);
	msgpack_pack_uint32(pk, 0);
	if (extra)
		extra(pk);
	assert_int_equal(ms_writer_copy(w, sb.data, sb.size), 0);
	msgpack_sbuffer_destroy(&sb);
}

static void extra_not_array(msgpack_packer *pk)
{
	msgpack_pack_uint32(pk, 5);
}

static void extra_short_entry(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 4);
	msgpack_pack_str_with_body(pk, "f", 1);
	msgpack_pack_str_with_body(pk, "", 0);
	msgpack_pack_str_with_body(pk, "a.c", 3);
	msgpack_pack_uint32(pk, 3);
}

static void extra_bad_type(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 5);
	msgpack_pack_str_with_body(pk, "f", 1);
	msgpack_pack_str_with_body(pk, "", 0);
	msgpack_pack_uint32(pk, 7);	/* file must be a string */
	msgpack_pack_uint32(pk, 3);
	msgpack_pack_uint32(pk, 1);
}

static void extra_too_many(msgpack_packer *pk)
{
	msgpack_pack_array(pk, MS_FRAME_LINES_MAX + 1);
	for (int i = 0; i < MS_FRAME_LINES_MAX + 1; i++) {
		msgpack_pack_array(pk, 5);
		msgpack_pack_str_with_body(pk, "f", 1);
		msgpack_pack_str_with_body(pk, "", 0);
		msgpack_pack_str_with_body(pk, "a.c", 3);
		msgpack_pack_uint32(pk, 3);
		msgpack_pack_uint32(pk, 1);
	}
}

/* A later minor version: an entry with a sixth field, a record with a seventh. */
static void extra_later_minor(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 6);
	msgpack_pack_str_with_body(pk, "f", 1);
	msgpack_pack_str_with_body(pk, "", 0);
	msgpack_pack_str_with_body(pk, "a.c", 3);
	msgpack_pack_uint32(pk, 3);
	msgpack_pack_uint32(pk, 1);
	msgpack_pack_uint32(pk, 77);	/* column, say */
	msgpack_pack_str_with_body(pk, "more", 4);
}

static void test_frame_lines_malformed(void **state)
{
	int fd = memfd();
	struct ms_writer *w = ms_writer_open(fd, "frames", 0);
	struct ms_frame *out = calloc(1, sizeof(*out));
	struct ms_record rec;
	struct ms_reader *r;
	int i;

	(void)state;
	assert_non_null(out);
	assert_int_equal(ms_writer_header(w, NULL, "test", "1"), 0);
	raw_frame(w, NULL, 0);			/* minor 0: no lines */
	raw_frame(w, extra_not_array, 1);
	raw_frame(w, extra_short_entry, 1);
	raw_frame(w, extra_bad_type, 1);
	raw_frame(w, extra_too_many, 1);
	raw_frame(w, extra_later_minor, 2);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);

	r = reread(fd);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	out->n_lines = 3;
	assert_int_equal(ms_frame_unpack(&rec, out), 0);
	assert_int_equal(out->n_lines, 0);
	assert_str(out->name, "f");
	for (i = 0; i < 4; i++) {
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(ms_frame_unpack(&rec, out), -1);
	}
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
	assert_int_equal(ms_frame_unpack(&rec, out), 0);
	assert_int_equal(out->n_lines, 1);
	assert_str(out->lines[0].file, "a.c");
	assert_int_equal(out->lines[0].line, 3);
	assert_int_equal(ms_reader_next(r, &rec), MS_READ_END);
	ms_reader_free(r);
	close(fd);
	free(out);
}

static void test_reason_names(void **state)
{
	(void)state;
	assert_string_equal(ms_frame_reason_name(MS_SYM_NO_DEBUG), "no-debug-file");
	assert_string_equal(ms_frame_reason_name(MS_SYM_DEBUG_MISMATCH), "build-id-mismatch");
	assert_string_equal(ms_frame_reason_name(MS_SYM_BAD_DWARF), "bad-dwarf");
	assert_string_equal(ms_frame_reason_name(MS_SYM_NOT_IN_DEBUG), "not-in-debug-info");
	assert_string_equal(ms_frame_reason_name(MS_SYM_FDE_ONLY), "fde-only");
	assert_string_equal(ms_frame_reason_name(MS_SYM_FDE_ONLY + 1), "unknown");
}

/* ---- demangling ---- */

static void assert_demangles(const char *mangled, const char *want)
{
	char *got = ms_demangle(mangled);

	if (!want) {
		if (got)
			fail_msg("'%s' demangled to '%s', expected nothing", mangled, got);
		return;
	}
	if (!got)
		fail_msg("'%s' did not demangle, expected '%s'", mangled, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_demangle(void **state)
{
	(void)state;
	/* C++ */
	assert_demangles("_ZN4demo11AccumulatorIdE5totalEi", "demo::Accumulator<double>::total(int)");
	assert_demangles("_ZNK4demo11AccumulatorIdE5totalEi",
			 "demo::Accumulator<double>::total(int) const");
	assert_demangles("_ZN4demo5scaleIlEET_S1_i", "long demo::scale<long>(long, int)");
	assert_demangles("_ZNSt6vectorIiSaIiEE9push_backERKi",
			 "std::vector<int, std::allocator<int> >::push_back(int const&)");
	assert_demangles("_Z3fooi.cold", "foo(int) [clone .cold]");
	/* Rust legacy: escapes decoded, the hash dropped. */
	assert_demangles("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	assert_demangles("_ZN71_$LT$core..ops..range..Range$LT$Idx$GT$$u20$as$u20$core..fmt..Debug$GT$3fmt17h4ab0bbc7e7a0a8f5E",
			 "<core::ops::range::Range<Idx> as core::fmt::Debug>::fmt");
	/* Rust v0 */
	assert_demangles("_RNvCs1234_7mycrate3foo", "mycrate::foo");
	assert_demangles("_RNvNtCs9ltgdHTiPiY_4core3ptr13drop_in_place", "core::ptr::drop_in_place");
	/* Not mangled, or broken: untouched. */
	assert_false(ms_is_mangled("main"));
	assert_false(ms_is_mangled("_Z"));
	assert_true(ms_is_mangled("_ZN1a1bE"));
	assert_demangles("main", NULL);
	assert_demangles("_Z", NULL);
	assert_demangles("_ZN3foo", NULL);
	assert_demangles("_RNvC", NULL);
}

/* ---- kernel notes ---- */

static size_t put_note(uint8_t *p, uint32_t type, const char *name, const uint8_t *desc,
		       uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	size_t o = 12;

	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memcpy(p + o, name, namesz);
	o += (namesz + 3) & ~3u;
	memcpy(p + o, desc, descsz);
	o += (descsz + 3) & ~3u;
	return o;
}

static void test_kernel_notes(void **state)
{
	uint8_t notes[256] = { 0 }, out[MS_BUILD_ID_MAX];
	const uint8_t bid[20] = { 0x48, 0xdc, 0x54, 0x0c, 0x8b, 0x76, 0x39, 0x38, 0x04, 0xca,
				  0x80, 0x88, 0xdb, 0xfa, 0x7d, 0x42, 0x91, 0x1a, 0x94, 0x44 };
	const uint8_t xen[4] = { 1, 2, 3, 4 };
	size_t n = 0, first;
	char path[64];
	int fd;

	(void)state;
	/* Another note first, then the build id. */
	n += put_note(notes + n, 6, "Linux", xen, 4);
	first = n;
	n += put_note(notes + n, 3, "GNU", bid, 20);
	n += put_note(notes + n, 18, "Xen", xen, 4);
	assert_int_equal(ms_notes_build_id(notes, n, out), 20);
	assert_memory_equal(out, bid, 20);
	/* Cut inside the build id note: nothing, and no read past the end. */
	assert_int_equal(ms_notes_build_id(notes, first + 20, out), 0);
	assert_int_equal(ms_notes_build_id(notes, 5, out), 0);
	/* A note whose size claims more than there is. */
	notes[4] = 0xff;
	notes[5] = 0xff;
	assert_int_equal(ms_notes_build_id(notes, n, out), 0);
	notes[4] = 4;
	notes[5] = 0;

	fd = memfd();
	assert_int_equal(write(fd, notes, n), (ssize_t)n);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	assert_int_equal(ms_kernel_build_id(path, out), 20);
	assert_memory_equal(out, bid, 20);
	close(fd);
	assert_int_equal(ms_kernel_build_id("/nonexistent/notes", out), 0);
}

/* ---- the pool ---- */

static void test_strpool(void **state)
{
	struct ms_strpool p;
	const char *a, *b, *big;
	char *huge = malloc(100000);
	int i;

	(void)state;
	assert_non_null(huge);
	ms_strpool_init(&p);
	a = ms_strpool_add(&p, "hello", 5);
	assert_string_equal(a, "hello");
	memset(huge, 'x', 99999);
	huge[99999] = '\0';
	big = ms_strpool_add(&p, huge, 99999);
	/* Many small strings after a big one: earlier pointers never move. */
	for (i = 0; i < 20000; i++) {
		b = ms_strpool_add(&p, "abcdefgh", 8);
		assert_string_equal(b, "abcdefgh");
		assert_int_equal((uintptr_t)ms_strpool_alloc(&p, 24) % _Alignof(max_align_t), 0);
	}
	assert_string_equal(a, "hello");
	assert_int_equal(strlen(big), 99999);
	ms_strpool_release(&p);
	free(huge);
}

/* ---- the DWARF index ---- */

/* The line of the first line of path holding mark (1-based). */
static uint32_t mark_line(const char *path, const char *mark)
{
	FILE *f = fopen(path, "r");
	char line[512];
	uint32_t n = 0;

	if (!f)
		fail_msg("cannot open the fixture's source '%s'", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, mark)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no %s in %s", mark, path);
	return 0;
}

/* The value and size of symbol want in the file's .symtab. */
static void symbol(Elf *elf, const char *want, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			gelf_getsym(d, (int)i, &sym);
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, want)) {
				*value = sym.st_value;
				*size = sym.st_size;
				return;
			}
		}
	}
	fail_msg("no symbol %s", want);
}

static void test_dwarfidx_inline_chain(void **state)
{
	struct ms_elf_file f;
	struct ms_dwarfidx *d;
	struct ms_srcline chain[MS_FRAME_LINES_MAX];
	struct ms_dwarfidx_stats st;
	uint64_t work, size, start, a;
	uint32_t n, found = 0, decl, call_mix, call_round;
	const char *why, *src = NULL;

	(void)state;
	assert_int_equal(ms_elf_file_open(&f, fixture_path("inline")), MS_SYM_OK);
	d = ms_dwarfidx_new(f.elf, &why);
	assert_non_null(d);
	assert_null(ms_dwarfidx_problem(d));
	symbol(f.elf, "inline_work", &work, &size);

	/* Its first byte: inline_work itself, starting there. */
	assert_int_equal(ms_dwarfidx_lookup(d, work, chain, MS_FRAME_LINES_MAX, &n, &start),
			 MS_SYM_OK);
	assert_true(n >= 1);
	assert_string_equal(chain[n - 1].function, "inline_work");
	assert_int_equal(start, work);

	/* Somewhere in it, mix() is inlined into round_sum() inlined into it. */
	for (a = work; a < work + size && !found; a++) {
		assert_int_equal(ms_dwarfidx_lookup(d, a, chain, MS_FRAME_LINES_MAX, &n, &start),
				 MS_SYM_OK);
		if (n != 3)
			continue;
		found = 1;
		src = chain[0].file;
		assert_string_equal(chain[0].function, "mix");
		assert_string_equal(chain[1].function, "round_sum");
		assert_string_equal(chain[2].function, "inline_work");
		assert_string_equal(chain[0].system_name, "");
		for (int i = 0; i < 3; i++) {
			assert_non_null(strstr(chain[i].file, "tests/fixtures/inline.c"));
			assert_int_equal(chain[i].file[0], '/');
			assert_null(strstr(chain[i].file, "/./"));
		}
		assert_int_equal(start, work);
		decl = mark_line(src, "MARK_MIX_DECL");
		call_mix = mark_line(src, "MARK_CALL_MIX");
		call_round = mark_line(src, "MARK_CALL_ROUND");
		/* The innermost line is inside mix's body; callers' are call sites. */
		assert_int_equal(chain[0].function_line, decl);
		assert_true(chain[0].line > decl && chain[0].line < decl + 8);
		assert_int_equal(chain[1].line, call_mix);
		assert_int_equal(chain[2].line, call_round);
		assert_true(chain[1].function_line < call_mix);
		assert_true(chain[2].function_line < call_round);
	}
	assert_true(found);

	/* A chain longer than room: the innermost and the outermost are kept. */
	for (a = work; a < work + size; a++) {
		assert_int_equal(ms_dwarfidx_lookup(d, a, chain, MS_FRAME_LINES_MAX, &n, &start),
				 MS_SYM_OK);
		if (n == 3)
			break;
	}
	assert_int_equal(ms_dwarfidx_lookup(d, a, chain, 2, &n, &start), MS_SYM_OK);
	assert_int_equal(n, 2);
	assert_string_equal(chain[0].function, "mix");
	assert_string_equal(chain[1].function, "inline_work");

	/* Far from any code. */
	assert_int_equal(ms_dwarfidx_lookup(d, 1ull << 40, chain, MS_FRAME_LINES_MAX, &n, &start),
			 MS_SYM_NOT_IN_DEBUG);
	assert_int_equal(n, 0);
	ms_dwarfidx_stats(d, &st);
	assert_true(st.units >= 1);
	assert_true(st.units_indexed >= 1);
	assert_int_equal(st.units_bad, 0);
	assert_true(st.scopes >= 3);
	ms_dwarfidx_free(d);
	ms_elf_file_close(&f);
}

/*
 * A copy of the fixture in memory whose .debug_info damage() changed; it
 * returns the section's new size (shorter: the file was cut).
 */
typedef size_t (*damage_fn)(uint8_t *info, size_t len);

struct damaged {
	uint8_t *copy;
	Elf *elf;
};

static void damaged_open(damage_fn damage, struct damaged *out)
{
	int fd = open(fixture_path("inline"), O_RDONLY);
	struct stat st;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	out->copy = malloc(st.st_size);
	assert_non_null(out->copy);
	assert_int_equal(read(fd, out->copy, st.st_size), st.st_size);
	close(fd);
	assert_int_equal(ms_elf_setup(), 0);
	elf = elf_memory((char *)out->copy, st.st_size);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf64_Ehdr *eh = (Elf64_Ehdr *)out->copy;
		Elf64_Shdr *raw;
		size_t size;

		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".debug_info"))
			continue;
		size = damage(out->copy + sh.sh_offset, sh.sh_size);
		raw = (Elf64_Shdr *)(out->copy + eh->e_shoff + elf_ndxscn(scn) * eh->e_shentsize);
		raw->sh_size = size;
	}
	elf_end(elf);
	out->elf = elf_memory((char *)out->copy, st.st_size);
	assert_non_null(out->elf);
}

static void damaged_close(struct damaged *d)
{
	elf_end(d->elf);
	free(d->copy);
}

/* Every address of inline_work gives a chain or a reason, never a crash. */
static void lookup_damaged(damage_fn damage, uint32_t *bad)
{
	struct damaged dm;
	struct ms_dwarfidx *d;
	struct ms_srcline chain[MS_FRAME_LINES_MAX];
	uint64_t work = 0, size = 0, start, a;
	uint32_t n;
	const char *why;
	int r;

	damaged_open(damage, &dm);
	symbol(dm.elf, "inline_work", &work, &size);
	*bad = 0;
	d = ms_dwarfidx_new(dm.elf, &why);
	if (!d) {
		assert_non_null(why);
		*bad = (uint32_t)size;
		damaged_close(&dm);
		return;
	}
	for (a = work; a < work + size; a++) {
		r = ms_dwarfidx_lookup(d, a, chain, MS_FRAME_LINES_MAX, &n, &start);
		assert_true(r == MS_SYM_OK || r == MS_SYM_BAD_DWARF || r == MS_SYM_NOT_IN_DEBUG);
		if (r == MS_SYM_BAD_DWARF) {
			assert_non_null(ms_dwarfidx_problem(d));
			assert_int_equal(n, 0);
			(*bad)++;
		}
		if (r == MS_SYM_OK)
			assert_true(n >= 1 && n <= MS_FRAME_LINES_MAX);
	}
	ms_dwarfidx_free(d);
	damaged_close(&dm);
}

/* The section is cut in the middle of the unit. */
static size_t damage_cut(uint8_t *info, size_t len)
{
	(void)info;
	return len / 2;
}

/* The section is cut inside the unit's header. */
static size_t damage_cut_header(uint8_t *info, size_t len)
{
	(void)info;
	return len > 6 ? 6 : len;
}

/* The DIEs after the unit's header are garbage. */
static size_t damage_dies(uint8_t *info, size_t len)
{
	if (len > 40)
		memset(info + 12, 0xff, len - 12 > 200 ? 200 : len - 12);
	return len;
}

/* Abbreviation codes that point nowhere, deep inside the unit. */
static size_t damage_tail(uint8_t *info, size_t len)
{
	for (size_t i = len / 3; i < len; i += 7)
		info[i] = 0x7f;
	return len;
}

static void test_dwarfidx_corrupt(void **state)
{
	struct ms_elf_file f;
	struct ms_dwarfidx *d;
	char path[PATH_MAX + 64], exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *why;
	uint32_t bad;

	(void)state;
	/* A cut unit is lost whole: every address of it is bad-dwarf. */
	lookup_damaged(damage_cut, &bad);
	assert_true(bad > 0);
	lookup_damaged(damage_cut_header, &bad);
	assert_true(bad > 0);
	/* Garbage DIEs: a reason for the unit they are in. */
	lookup_damaged(damage_dies, &bad);
	assert_true(bad > 0);
	lookup_damaged(damage_tail, &bad);

	/* No DWARF at all: the stripped tiny ELF. */
	assert_true(len > 0);
	exe[len] = '\0';
	snprintf(path, sizeof(path), "%s/data/elf-tiny-stripped", dirname(exe));
	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	d = ms_dwarfidx_new(f.elf, &why);
	assert_null(d);
	assert_non_null(why);
	ms_elf_file_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_lines_round_trip),
		cmocka_unit_test(test_frame_lines_malformed),
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_kernel_notes),
		cmocka_unit_test(test_strpool),
		cmocka_unit_test(test_dwarfidx_inline_chain),
		cmocka_unit_test(test_dwarfidx_corrupt),
	};

	ms_set_progname("symbols-dwarf-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
