/*
 * Unit tests of what makes ms-symbolize's start-up cheap without changing
 * an answer (libcommon/symbols): the radix sort, kallsyms read whole (its
 * addresses as strtoull reads them), the units taken from
 * .debug_aranges (checked against each unit's DIE, and dropped for a full
 * read when they are wrong, short or overlapping), and the line tables read
 * without libdw (against libdw over every address of this program, and on
 * hand-built tables for the rules and the refusals), and the DIEs read
 * without libdw (dwarf/dieread.h: the same answers as libdw's at every
 * byte of this program and across libc).
 *
 * Files: this test binary itself (two units built with -g: this file and
 * symbols-index-aux.c), copied in memory and changed there, and the debug
 * file of the libc it runs with (libc6-dbg, as the 05xx bats tests need).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cachefile.h"
#include "util/crc32c.h"
#include "dwarf/dwarfidx.h"
#include "dwarf/lines.h"
#include "util/radix.h"
#include "util/strpool.h"
#include "symbols/symtab.h"
#include "stream/records.h"
#include "elf/elffile.h"
#include "util/error.h"
#include "tests/unit/dwarf-bytes.h"
#include "util/bits.h"

int symbols_index_aux_a(int x);
int symbols_index_aux_b(int x);

/* ---- the radix sort ---- */

static void test_radix_sort(void **state)
{
	enum { N = 5000 };
	struct ms_rkey *a = malloc(2 * N * sizeof(*a)), *s;
	uint64_t seed = 12345;
	size_t i;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* Few distinct keys, spread over high and low bytes: many ties. */
		a[i].key = (seed >> 60) << 40 | ((seed >> 20) & 7);
		a[i].pos = (uint32_t)i;
	}
	s = ms_radix_sort(a, a + N, N);
	for (i = 1; i < N; i++) {
		assert_true(s[i - 1].key <= s[i].key);
		/* Stable: equal keys keep their order. */
		if (s[i - 1].key == s[i].key)
			assert_true(s[i - 1].pos < s[i].pos);
	}
	/* All keys equal, one key, none: nothing moves. */
	for (i = 0; i < 10; i++)
		a[i] = (struct ms_rkey){ 42, (uint32_t)i, 0 };
	s = ms_radix_sort(a, a + 10, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(s[i].pos, i);
	assert_ptr_equal(ms_radix_sort(a, a + 1, 1), a);
	assert_ptr_equal(ms_radix_sort(a, a + 1, 0), a);
	free(a);
}

/* ---- kallsyms read whole, addresses as strtoull reads them ---- */

static void assert_ksym(const struct ms_symtab *t, uint64_t addr, const char *want)
{
	const struct ms_sym *sym = ms_symtab_lookup(t, addr);

	if (!want) {
		if (sym)
			fail_msg("0x%llx: %s, expected nothing", (unsigned long long)addr,
				 ms_symtab_name(t, sym));
		return;
	}
	if (!sym)
		fail_msg("0x%llx: nothing, expected %s", (unsigned long long)addr, want);
	assert_string_equal(ms_symtab_name(t, sym), want);
}

static void test_kallsyms_addresses(void **state)
{
	/* The usual form, and the ones strtoull also takes; the last line has no newline. */
	static const char text[] =
		"0x10 T hexpref\n"
		"  20 T spaced\n"
		"00000000000000000030 T longaddr\n"
		"0000000000000040 t low\n"
		"00000000000000AB W upper\n"
		"00000000000000c0 d data\n"
		"00000000000000c8 T\n"
		"zz T junk\n"
		"0000000000000100 T last";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct ms_symtab t;

	(void)state;
	assert_non_null(f);
	ms_symtab_init(&t);
	assert_int_equal(ms_symtab_load_kallsyms(&t, f), 0);
	fclose(f);
	assert_ksym(&t, 0xf, NULL);
	assert_ksym(&t, 0x10, "hexpref");
	assert_ksym(&t, 0x1f, "hexpref");
	assert_ksym(&t, 0x20, "spaced");
	assert_ksym(&t, 0x35, "longaddr");
	assert_ksym(&t, 0x41, "low");
	assert_ksym(&t, 0xab, "upper");
	/* Data ends the text before it; the last symbol covers nothing. */
	assert_ksym(&t, 0xbf, "upper");
	assert_ksym(&t, 0xc0, NULL);
	assert_ksym(&t, 0x100, NULL);
	assert_int_equal(ms_symtab_count(&t), 5);
	ms_symtab_release(&t);
}

/* ---- this program, copied in memory ---- */

struct image {
	uint8_t *buf;
	size_t size;
	Elf *elf;
};

static void image_open_path(struct image *im, const char *path)
{
	FILE *f;

	assert_int_equal(ms_elf_setup(), 0);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open '%s'", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	im->size = (size_t)ftell(f);
	rewind(f);
	im->buf = malloc(im->size);
	assert_non_null(im->buf);
	assert_int_equal(fread(im->buf, 1, im->size, f), im->size);
	fclose(f);
	im->elf = elf_memory((char *)im->buf, im->size);
	assert_non_null(im->elf);
}

static void image_open(struct image *im)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	image_open_path(im, exe);
}

/* Parse im->buf again after its bytes were changed. */
static void image_reload(struct image *im)
{
	elf_end(im->elf);
	im->elf = elf_memory((char *)im->buf, im->size);
	assert_non_null(im->elf);
}

static void image_close(struct image *im)
{
	elf_end(im->elf);
	free(im->buf);
}

/* The bytes of section name in the copy (NULL when it has none), and where its name is. */
static uint8_t *image_section_opt(struct image *im, const char *name, size_t *size,
				  char **name_at)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh, strsh;

	assert_int_equal(elf_getshdrstrndx(im->elf, &shstrndx), 0);
	assert_non_null(gelf_getshdr(elf_getscn(im->elf, shstrndx), &strsh));
	while ((scn = elf_nextscn(im->elf, scn))) {
		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(im->elf, shstrndx, sh.sh_name), name))
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			fail_msg("%s is compressed: build the tests without compressed debug sections",
				 name);
		*size = sh.sh_size;
		if (name_at)
			*name_at = (char *)im->buf + strsh.sh_offset + sh.sh_name;
		return im->buf + sh.sh_offset;
	}
	*size = 0;
	return NULL;
}

/* Where the name of section name is in the copy's section names. */
static char *image_section_name(struct image *im, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh, strsh;

	assert_int_equal(elf_getshdrstrndx(im->elf, &shstrndx), 0);
	assert_non_null(gelf_getshdr(elf_getscn(im->elf, shstrndx), &strsh));
	while ((scn = elf_nextscn(im->elf, scn))) {
		assert_non_null(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(im->elf, shstrndx, sh.sh_name), name))
			return (char *)im->buf + strsh.sh_offset + sh.sh_name;
	}
	fail_msg("no section %s", name);
	return NULL;
}

static uint8_t *image_section(struct image *im, const char *name, size_t *size, char **name_at)
{
	uint8_t *p = image_section_opt(im, name, size, name_at);

	if (!p)
		fail_msg("this test program has no %s: it needs GCC's debug information (-g)",
			 name);
	return p;
}

/* A function symbol of the copy's .symtab, by name (or its start when prefix). */
static void image_symbol_match(struct image *im, const char *want, bool prefix, uint64_t *value,
			       uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(im->elf, scn))) {
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
			name = elf_strptr(im->elf, sh.sh_link, sym.st_name);
			if (name && (prefix ? !strncmp(name, want, strlen(want)) : !strcmp(name, want)) &&
			    sym.st_size) {
				*value = sym.st_value;
				*size = sym.st_size;
				return;
			}
		}
	}
	fail_msg("no symbol %s in this file", want);
}

static void image_symbol(struct image *im, const char *want, uint64_t *value, uint64_t *size)
{
	image_symbol_match(im, want, false, value, size);
}

/* Addresses to ask about: the start and middle of every sized function. */
static uint64_t *image_addresses(struct image *im, size_t *n)
{
	uint64_t *out = NULL;
	size_t alloc = 0;
	Elf_Scn *scn = NULL;

	*n = 0;
	while ((scn = elf_nextscn(im->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			gelf_getsym(d, (int)i, &sym);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || !sym.st_value)
				continue;
			if (*n + 2 > alloc) {
				alloc = alloc ? alloc * 2 : 1024;
				out = realloc(out, alloc * sizeof(*out));
				assert_non_null(out);
			}
			out[(*n)++] = sym.st_value;
			out[(*n)++] = sym.st_value + sym.st_size / 2;
		}
	}
	assert_true(*n > 10);
	return out;
}

/* ---- .debug_aranges in the copy (DWARF32, 8-byte addresses, this host's order) ---- */

struct aset {
	uint8_t *header;	/* the set's first byte */
	uint8_t *tuples;	/* (address, length) pairs */
	size_t n_tuples;
};

/* The set whose tuples cover addr. */
static struct aset aranges_set(struct image *im, uint64_t addr)
{
	size_t size;
	uint8_t *p = image_section(im, ".debug_aranges", &size, NULL), *end = p + size;

	while (p < end) {
		uint32_t len;
		struct aset s = { p, p + 16, 0 };
		uint8_t *t;

		memcpy(&len, p, 4);
		assert_true(len < 0xfffffff0);
		assert_int_equal(p[10], 8);	/* address size */
		for (t = s.tuples; ms_load64(t) || ms_load64(t + 8); t += 16)
			s.n_tuples++;
		for (size_t i = 0; i < s.n_tuples; i++) {
			uint64_t lo = ms_load64(s.tuples + 16 * i), n = ms_load64(s.tuples + 16 * i + 8);

			if (addr >= lo && addr < lo + n)
				return s;
		}
		p += 4 + len;
	}
	fail_msg("no set of .debug_aranges covers 0x%llx", (unsigned long long)addr);
	return (struct aset){ 0 };
}

/* One lookup's answer as text, to compare indexes. */
static void answer(struct ms_dwarfidx *d, uint64_t addr, char *out, size_t size)
{
	struct ms_srcline chain[MS_FRAME_LINES_MAX];
	uint32_t n;
	uint64_t start;
	int r = ms_dwarfidx_lookup(d, addr, chain, MS_FRAME_LINES_MAX, &n, &start);
	size_t o = (size_t)snprintf(out, size, "%d %u 0x%llx", r, n, (unsigned long long)start);

	for (uint32_t i = 0; i < n && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, " | %s %s %s:%u %u",
				      chain[i].function ? chain[i].function : "(null)",
				      chain[i].system_name, chain[i].file, chain[i].line,
				      chain[i].function_line);
}

/* The answers of an index without aranges (their section renamed) for addrs. */
static char **reference_answers(const char *path, const uint64_t *addrs, size_t n,
				uint32_t *units)
{
	struct image im;
	struct ms_dwarfidx *d;
	struct ms_dwarfidx_stats st;
	char **out = calloc(n, sizeof(*out)), *name;
	const char *why;

	assert_non_null(out);
	if (path)
		image_open_path(&im, path);
	else
		image_open(&im);
	name = image_section_name(&im, ".debug_aranges");
	name[strlen(name) - 1] = 'Z';
	image_reload(&im);
	d = ms_dwarfidx_new(im.elf, &why);
	assert_non_null(d);
	ms_dwarfidx_stats(d, &st);
	assert_false(st.from_aranges);
	*units = st.units;
	for (size_t i = 0; i < n; i++) {
		out[i] = malloc(4096);
		assert_non_null(out[i]);
		answer(d, addrs[i], out[i], 4096);
	}
	ms_dwarfidx_free(d);
	image_close(&im);
	return out;
}

static void free_answers(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

/* d answers every address as the reference does. */
static void assert_answers(struct ms_dwarfidx *d, const uint64_t *addrs, char **want, size_t n)
{
	char got[4096];

	for (size_t i = 0; i < n; i++) {
		answer(d, addrs[i], got, sizeof(got));
		if (strcmp(got, want[i]))
			fail_msg("0x%llx: '%s', expected '%s'", (unsigned long long)addrs[i], got,
				 want[i]);
	}
}

static bool from_aranges(struct ms_dwarfidx *d)
{
	struct ms_dwarfidx_stats st;

	ms_dwarfidx_stats(d, &st);
	return st.from_aranges;
}

/* How the copy is changed before the index is built. */
enum aranges_change {
	AR_NONE,
	AR_UNIT_MISSING,	/* the aux unit's ranges are gone from aranges */
	AR_UNIT_SHORT,		/* its first range starts a byte late */
	AR_BAD_VERSION,		/* the first set has version 3 */
	AR_OVERLAP,		/* its first range is moved onto another unit's */
};

static struct ms_dwarfidx *changed_index(struct image *im, enum aranges_change change,
					 uint64_t aux, uint64_t other)
{
	struct aset s;
	const char *why;
	struct ms_dwarfidx *d;
	size_t size;
	uint8_t *first;

	image_open(im);
	switch (change) {
	case AR_NONE:
		break;
	case AR_UNIT_MISSING:
		s = aranges_set(im, aux);
		for (size_t i = 0; i < s.n_tuples; i++)
			ms_store64(s.tuples + 16 * i + 8, 0);
		break;
	case AR_UNIT_SHORT:
		s = aranges_set(im, aux);
		ms_store64(s.tuples, ms_load64(s.tuples) + 1);
		ms_store64(s.tuples + 8, ms_load64(s.tuples + 8) - 1);
		break;
	case AR_BAD_VERSION:
		first = image_section(im, ".debug_aranges", &size, NULL);
		first[4] = 3;
		break;
	case AR_OVERLAP:
		s = aranges_set(im, aux);
		ms_store64(s.tuples, ms_load64(aranges_set(im, other).tuples));
		break;
	}
	image_reload(im);
	d = ms_dwarfidx_new(im->elf, &why);
	assert_non_null(d);
	return d;
}

static void test_aranges(void **state)
{
	struct image im;
	struct ms_dwarfidx *d;
	struct ms_dwarfidx_stats st;
	uint64_t aux, aux_size, self, self_size, lost, *addrs;
	char **want, got[4096];
	uint32_t units;
	size_t n, i_lost;

	(void)state;
	/* Keep both units' functions in the program. */
	assert_int_equal(symbols_index_aux_b(1), 21);
	image_open(&im);
	image_symbol(&im, "symbols_index_aux_a", &aux, &aux_size);
	image_symbol(&im, "test_aranges", &self, &self_size);
	/* The first byte of the aux unit's first range, which AR_UNIT_SHORT loses. */
	lost = ms_load64(aranges_set(&im, aux).tuples);
	addrs = image_addresses(&im, &n);
	addrs[i_lost = n - 1] = lost;
	image_close(&im);
	want = reference_answers(NULL, addrs, n, &units);

	/* As built: the units come from aranges and every check holds. */
	d = changed_index(&im, AR_NONE, aux, self);
	assert_true(from_aranges(d));
	ms_dwarfidx_stats(d, &st);
	assert_int_equal(st.units, units);
	answer(d, aux + 1, got, sizeof(got));
	assert_non_null(strstr(got, "symbols_index_aux_a"));
	assert_non_null(strstr(got, "symbols-index-aux.c"));
	answer(d, self + 1, got, sizeof(got));
	assert_non_null(strstr(got, "test_aranges"));
	assert_true(from_aranges(d));
	/* (Addresses of the C runtime's objects, which have no DWARF, miss: read whole.) */
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	image_close(&im);

	/* A unit aranges do not list: its address misses, and the full read finds it. */
	d = changed_index(&im, AR_UNIT_MISSING, aux, self);
	assert_true(from_aranges(d));
	answer(d, self + 1, got, sizeof(got));
	assert_true(from_aranges(d));
	answer(d, aux + 1, got, sizeof(got));
	assert_false(from_aranges(d));
	assert_non_null(strstr(got, "symbols_index_aux_a"));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	image_close(&im);

	/* A unit whose aranges differ from its DIE's ranges: checked and dropped. */
	d = changed_index(&im, AR_UNIT_SHORT, aux, self);
	assert_true(from_aranges(d));
	answer(d, aux + aux_size / 2, got, sizeof(got));
	assert_false(from_aranges(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	image_close(&im);
	/* ... the same when the first address asked is the byte aranges lost. */
	d = changed_index(&im, AR_UNIT_SHORT, aux, self);
	answer(d, lost, got, sizeof(got));
	assert_false(from_aranges(d));
	assert_string_equal(got, want[i_lost]);
	ms_dwarfidx_free(d);
	image_close(&im);

	/* Sets that cannot be trusted at all: not used from the start. */
	d = changed_index(&im, AR_BAD_VERSION, aux, self);
	assert_false(from_aranges(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	image_close(&im);
	d = changed_index(&im, AR_OVERLAP, aux, self);
	assert_false(from_aranges(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	image_close(&im);

	free_answers(want, n);
	free(addrs);
}

/* ---- the list of units, cached (ms_dwarfidx_new_cached()) ---- */

/*
 * The file's layout, as dwarfidx.c writes it (host order): the common
 * header (util/cachefile.h), then struct units_header, then the lists.
 */
enum {
	UC_VERSION = offsetof(struct ms_cachefile, version),	/* u32 */
	UC_OWN = sizeof(struct ms_cachefile),
	UC_INFO_SIZE = UC_OWN + 40,	/* u64, part of the key */
	UC_N_UNITS = UC_OWN + 64,	/* u64 */
	UC_HEADER = UC_OWN + 88,
	UC_SLOT = 32,		/* u64 off, hdr; u32 ar, n_ar, from_dies, pad */
	UC_RANGE = 16,		/* u64 lo, hi */
	UC_URANGE = 24,		/* u64 lo, hi; u32 unit, pad */
};

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*size = (size_t)ftell(f);
	rewind(f);
	b = malloc(*size + 16);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *size, f), *size);
	fclose(f);
	return b;
}

static void spill(const char *path, const uint8_t *b, size_t size)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

static struct ms_dwarfidx *cached_index(struct image *im, const char *path, uint8_t bid0)
{
	const uint8_t bid[8] = { bid0, 2, 3, 4, 5, 6, 7, 8 };
	const char *why;
	struct ms_dwarfidx *d = ms_dwarfidx_new_cached(im->elf, path, bid, sizeof(bid), NULL, &why);

	assert_non_null(d);
	return d;
}

static bool units_cached(struct ms_dwarfidx *d)
{
	struct ms_dwarfidx_stats st;

	ms_dwarfidx_stats(d, &st);
	return st.units_cached;
}

/* How a good file is damaged. */
enum uc_damage {
	UC_CUT, UC_LONGER, UC_NEWER, UC_STALE, UC_COUNT, UC_UNIT_INDEX, UC_UNSORTED,
	UC_DIE_BEFORE_HEADER, UC_FROM_DIES, UC_EMPTY_RANGE, UC_FOREIGN_RANGE, UC_DAMAGE_N,
};

static size_t damage(uint8_t *b, size_t size, enum uc_damage how)
{
	uint64_t n_units, n_ar, v;
	uint8_t *units = b + UC_HEADER, *ar, *ur;

	memcpy(&n_units, b + UC_N_UNITS, 8);
	memcpy(&n_ar, b + UC_N_UNITS + 8, 8);
	ar = units + n_units * UC_SLOT;
	ur = ar + n_ar * UC_RANGE;
	switch (how) {
	case UC_CUT:
		return size - 8;
	case UC_LONGER:
		memset(b + size, 0, 8);
		return size + 8;
	case UC_NEWER:
		b[UC_VERSION]++;
		break;
	case UC_STALE:
		b[UC_INFO_SIZE]++;
		break;
	case UC_COUNT:
		v = UINT32_MAX;
		memcpy(b + UC_N_UNITS, &v, 8);
		break;
	case UC_UNIT_INDEX:
		memcpy(ur + 16, &n_units, 4);
		break;
	case UC_UNSORTED:
		/* The last range first: out of order. */
		memcpy(ur, b + size - UC_URANGE, UC_URANGE);
		break;
	case UC_DIE_BEFORE_HEADER:
		memcpy(units, units + 8, 8);
		break;
	case UC_FROM_DIES:
		units[24] = 1;
		break;
	case UC_EMPTY_RANGE:
		memcpy(ar + 8, ar, 8);
		break;
	case UC_FOREIGN_RANGE:
		/* A range of no unit, in order: the first one's start a byte later. */
		memcpy(&v, ur, 8);
		v++;
		memcpy(ur, &v, 8);
		break;
	default:
		break;
	}
	return size;
}

static void test_units_cache(void **state)
{
	struct image im;
	struct ms_dwarfidx *d;
	struct ms_dwarfidx_stats st;
	uint64_t aux, aux_size, *addrs, lo;
	char **want, got[4096], dir[] = "/tmp/ms-units-XXXXXX", path[64];
	uint8_t *good, *b;
	size_t n, good_size, size;
	uint32_t units;
	const char *why;

	(void)state;
	assert_int_equal(symbols_index_aux_b(1), 21);
	image_open(&im);
	image_symbol(&im, "symbols_index_aux_a", &aux, &aux_size);
	addrs = image_addresses(&im, &n);
	image_close(&im);
	want = reference_answers(NULL, addrs, n, &units);
	assert_non_null(mkdtemp(dir));
	/* A directory that does not exist yet is made. */
	snprintf(path, sizeof(path), "%s/debug/x.units", dir);

	/* No file: read from aranges and written. */
	image_open(&im);
	d = cached_index(&im, path, 1);
	assert_true(from_aranges(d));
	assert_false(units_cached(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);
	good = slurp(path, &good_size);
	assert_int_equal(good_size % 8, 0);

	/* Then mapped: the same units and answers. */
	d = cached_index(&im, path, 1);
	assert_true(units_cached(d));
	assert_true(from_aranges(d));
	ms_dwarfidx_stats(d, &st);
	assert_int_equal(st.units, units);
	answer(d, aux + 1, got, sizeof(got));
	assert_non_null(strstr(got, "symbols_index_aux_a"));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);

	/* Another build id: not this DWARF's list; rewritten for it. */
	d = cached_index(&im, path, 9);
	assert_false(units_cached(d));
	assert_true(from_aranges(d));
	ms_dwarfidx_free(d);
	d = cached_index(&im, path, 9);
	assert_true(units_cached(d));
	ms_dwarfidx_free(d);
	d = cached_index(&im, path, 1);
	assert_false(units_cached(d));
	ms_dwarfidx_free(d);

	/* Each damage: ignored (the list read again, the same answers) and rewritten. */
	for (int how = 0; how < UC_DAMAGE_N; how++) {
		b = malloc(good_size + 16);
		assert_non_null(b);
		memcpy(b, good, good_size);
		size = damage(b, good_size, (enum uc_damage)how);
		/* Sealed again (util/cachefile.h): the list's own checks must meet the damage. */
		ms_cachefile_seal(b, size);
		spill(path, b, size);
		d = cached_index(&im, path, 1);
		if (units_cached(d))
			fail_msg("damage %d: the file was used", how);
		assert_true(from_aranges(d));
		assert_answers(d, addrs, want, n);
		ms_dwarfidx_free(d);
		free(b);
		b = slurp(path, &size);
		assert_int_equal(size, good_size);
		assert_memory_equal(b, good, size);
		free(b);
	}

	/*
	 * Damage that keeps the file consistent: the aux unit's ranges start a
	 * byte late in both lists. The file is used, the unit fails its check
	 * against its DIE, and the answers are still right (read from the DIEs).
	 */
	b = malloc(good_size);
	assert_non_null(b);
	memcpy(b, good, good_size);
	for (size_t o = UC_HEADER; o + UC_RANGE <= good_size; o += 8) {
		memcpy(&lo, b + o, 8);
		if (lo == aux) {
			lo++;
			memcpy(b + o, &lo, 8);
		}
	}
	/* Not sealed again, the CRC refuses it; sealed, it is used. */
	spill(path, b, good_size);
	d = cached_index(&im, path, 1);
	assert_false(units_cached(d));
	ms_dwarfidx_free(d);
	ms_cachefile_seal(b, good_size);
	spill(path, b, good_size);
	free(b);
	d = cached_index(&im, path, 1);
	assert_true(units_cached(d));
	answer(d, aux + aux_size / 2, got, sizeof(got));
	assert_false(from_aranges(d));
	assert_non_null(strstr(got, "symbols_index_aux_a"));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);

	/* A path that cannot be written: no file, the same index. */
	d = ms_dwarfidx_new_cached(im.elf, "/proc/no/x.units", (const uint8_t *)"12345678", 8,
				   NULL, &why);
	assert_non_null(d);
	assert_false(units_cached(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);

	image_close(&im);
	unlink(path);
	snprintf(path, sizeof(path), "%s/debug", dir);
	rmdir(path);
	rmdir(dir);
	free(good);
	free_answers(want, n);
	free(addrs);
}

/* ---- indexed units, cached (ms_dwarfidx_index_cache()) ---- */

/*
 * The file's layout, as unitcache.c writes it (host order): the common
 * header (util/cachefile.h), then struct ic_header from IC_OWN.
 */
enum {
	IC_VERSION_AT = offsetof(struct ms_cachefile, version),	/* u32 */
	IC_OWN = sizeof(struct ms_cachefile),
	IC_BID_AT = IC_OWN + 32,	/* the build id */
	IC_SEC_AT = IC_OWN + 56,	/* u64 sizes of the 8 sections */
	IC_N_AT = IC_OWN + 120,		/* u64 entries */
	IC_DIRCRC_AT = IC_OWN + 128,	/* u32 */
	IC_HEADER = IC_OWN + 136,	/* the directory */
	IC_ENTRY = 32,		/* u64 hdr, pos, len; u32 crc, pad */
	IC_BLOB = 64,		/* see struct ic_blob */
	IC_SCOPE = 40,
	IC_TOP = 24,
	IC_NAME = 24,
	IC_ROW = 16,
};

/* An entry's parts, as dwarfidx.c's ic_split() finds them. */
struct icb {
	uint8_t *b;
	uint32_t n_cu, n_scopes, n_ranges, n_tops, n_names, n_rows, n_files, str_len, flags;
	uint8_t *cu, *scopes, *ranges, *tops, *names, *rows, *files, *str;
};

static uint64_t ic_entries(const uint8_t *f)
{
	return ms_load64(f + IC_N_AT);
}

static struct icb ic_blob(uint8_t *f, uint64_t e)
{
	struct icb c;
	uint8_t *p;

	c.b = f + ms_load64(f + IC_HEADER + e * IC_ENTRY + 8);
	c.n_cu = ms_load32(c.b + 24);
	c.n_scopes = ms_load32(c.b + 28);
	c.n_ranges = ms_load32(c.b + 32);
	c.n_tops = ms_load32(c.b + 36);
	c.n_names = ms_load32(c.b + 40);
	c.n_rows = ms_load32(c.b + 44);
	c.n_files = ms_load32(c.b + 48);
	c.str_len = ms_load32(c.b + 52);
	c.flags = ms_load32(c.b + 56);
	p = c.b + IC_BLOB;
	c.cu = p;
	p += 16 * c.n_cu;
	c.scopes = p;
	p += IC_SCOPE * c.n_scopes;
	c.ranges = p;
	p += 16 * c.n_ranges;
	c.tops = p;
	p += IC_TOP * c.n_tops;
	c.names = p;
	p += IC_NAME * c.n_names;
	c.rows = p;
	p += IC_ROW * c.n_rows;
	c.files = p;
	p += 4 * c.n_files;
	c.str = p;
	return c;
}

/* After a change made on purpose: every CRC right again, so that only the other checks can tell. */
static void ic_reseal(uint8_t *f)
{
	uint64_t n = ic_entries(f);

	for (uint64_t e = 0; e < n; e++) {
		uint8_t *en = f + IC_HEADER + e * IC_ENTRY;

		ms_store32(en + 24, ms_crc32c(0, f + ms_load64(en + 8), ms_load64(en + 16)));
	}
	ms_store32(f + IC_DIRCRC_AT, ms_crc32c(0, f + IC_HEADER, n * IC_ENTRY));
	/* And the common header's (util/cachefile.h), of the length it gives. */
	ms_cachefile_seal(f, ms_load64(f + offsetof(struct ms_cachefile, file_len)));
}

/* The entry with the most of everything: the one damage goes to. */
static uint64_t ic_fullest(uint8_t *f)
{
	uint64_t best = 0, most = 0;

	for (uint64_t e = 0; e < ic_entries(f); e++) {
		struct icb c = ic_blob(f, e);
		uint64_t m = (uint64_t)c.n_scopes + c.n_names + c.n_rows + c.n_files;

		if (c.n_names && c.n_rows > 1 && c.n_tops && m > most) {
			most = m;
			best = e;
		}
	}
	assert_true(most > 0);
	return best;
}

enum ic_damage {
	/* Found by the header, the directory or a CRC. */
	ICD_CUT, ICD_LONGER, ICD_VERSION, ICD_BID, ICD_STALE_SIZE, ICD_DIR_HDR, ICD_DIR_POS,
	ICD_DIR_CRC, ICD_BLOB_HEADER, ICD_CU_RANGES, ICD_SCOPES, ICD_RANGES, ICD_TOPS, ICD_NAMES,
	ICD_ROWS, ICD_FILES, ICD_STRINGS, ICD_PADDING,
	ICD_RESEALED,
	/* The CRCs made right again: found by the bounds and order checks. */
	ICD_HUGE_ENTRIES = ICD_RESEALED, ICD_DIR_ORDER, ICD_DIR_OVERLAP, ICD_HUGE_SCOPES,
	ICD_HUGE_ROWS, ICD_HUGE_STR, ICD_UNIT, ICD_PARENT, ICD_CHILD, ICD_SIBLING, ICD_RANGE,
	ICD_NAME_INDEX, ICD_NAME_STR, ICD_TOP_SCOPE, ICD_TOP_ORDER, ICD_ROW_ORDER, ICD_FILE_STR,
	ICD_STR_NUL, ICD_DIE_OFF, ICD_LINE_OFF, ICD_FLAGS, ICD_EMPTY_RANGE,
	/* Consistent, and still not this unit's: its DIE's ranges are not aranges'. */
	ICD_OTHER_RANGES,
	ICD_N,
};

/* Damage f (size bytes, room for 8 more) as how says: the new size. */
static size_t ic_damage(uint8_t *f, size_t size, enum ic_damage how)
{
	uint64_t e = ic_fullest(f), n = ic_entries(f);
	uint8_t *en = f + IC_HEADER + e * IC_ENTRY;
	struct icb c = ic_blob(f, e);
	uint8_t row[IC_ROW];

	switch (how) {
	case ICD_CUT:
		return size - 8;
	case ICD_LONGER:
		memset(f + size, 0, 8);
		return size + 8;
	case ICD_VERSION:
		f[IC_VERSION_AT]++;
		break;
	case ICD_BID:
		f[IC_BID_AT + 3] ^= 1;
		break;
	case ICD_STALE_SIZE:
		f[IC_SEC_AT + 7 * 8]++;	/* .debug_line's size */
		break;
	case ICD_DIR_HDR:
		en[0] ^= 1;
		break;
	case ICD_DIR_POS:
		en[8] ^= 8;
		break;
	case ICD_DIR_CRC:
		en[24] ^= 1;
		break;
	case ICD_BLOB_HEADER:
		c.b[28] ^= 1;
		break;
	case ICD_CU_RANGES:
		c.cu[0] ^= 0x10;
		break;
	case ICD_SCOPES:
		c.scopes[IC_SCOPE * (c.n_scopes / 2) + 28] ^= 2;	/* a call_file */
		break;
	case ICD_RANGES:
		c.ranges[16 * (c.n_ranges / 2) + 8] ^= 1;
		break;
	case ICD_TOPS:
		c.tops[IC_TOP * (c.n_tops / 2) + 16] ^= 1;
		break;
	case ICD_NAMES:
		c.names[IC_NAME * (c.n_names / 2) + 16] ^= 1;	/* a decl_line */
		break;
	case ICD_ROWS:
		c.rows[IC_ROW * (c.n_rows / 2) + 12] ^= 1;	/* a line */
		break;
	case ICD_FILES:
		c.files[0] ^= 1;
		break;
	case ICD_STRINGS:
		c.str[c.str_len / 2] ^= 0x20;
		break;
	case ICD_PADDING:
		/* The last entry's last byte: padding or a string's NUL, covered by the CRC either way. */
		f[size - 1] ^= 0x80;
		break;
	case ICD_HUGE_ENTRIES:
		ms_store64(f + IC_N_AT, UINT64_MAX / 2);
		break;
	case ICD_DIR_ORDER:
		assert_true(n >= 2);
		ms_store64(f + IC_HEADER, ms_load64(f + IC_HEADER + IC_ENTRY) + 1);
		break;
	case ICD_DIR_OVERLAP:
		assert_true(n >= 2);
		ms_store64(f + IC_HEADER + 8, ms_load64(f + IC_HEADER + IC_ENTRY + 8));
		break;
	case ICD_HUGE_SCOPES:
		ms_store32(c.b + 28, UINT32_MAX);
		break;
	case ICD_HUGE_ROWS:
		ms_store32(c.b + 44, 0x10000000);
		break;
	case ICD_HUGE_STR:
		ms_store32(c.b + 52, UINT32_MAX - 3);
		break;
	case ICD_UNIT:
		ms_store64(c.b, ms_load64(c.b) + 1);
		break;
	case ICD_PARENT:
		ms_store32(c.scopes + IC_SCOPE * (c.n_scopes - 1) + 8, c.n_scopes);
		break;
	case ICD_CHILD:
		ms_store32(c.scopes + 12, 0);	/* the first scope its own call */
		break;
	case ICD_SIBLING:
		ms_store32(c.scopes + 16, 5);	/* a subprogram with a sibling after it */
		break;
	case ICD_RANGE:
		ms_store32(c.scopes + 20, c.n_ranges);
		break;
	case ICD_NAME_INDEX:
		ms_store32(c.scopes + 36, c.n_names + 1);
		break;
	case ICD_NAME_STR:
		ms_store32(c.names + 12, c.str_len);
		break;
	case ICD_TOP_SCOPE:
		ms_store32(c.tops + 16, c.n_scopes);
		break;
	case ICD_TOP_ORDER:
		assert_true(c.n_tops >= 2);
		ms_store64(c.tops, ms_load64(c.tops + IC_TOP * (c.n_tops - 1)) + 1);
		break;
	case ICD_ROW_ORDER:
		memcpy(row, c.rows, IC_ROW);
		memcpy(c.rows, c.rows + IC_ROW * (c.n_rows - 1), IC_ROW);
		memcpy(c.rows + IC_ROW * (c.n_rows - 1), row, IC_ROW);
		break;
	case ICD_FILE_STR:
		ms_store32(c.files + 4 * (c.n_files - 1), c.str_len + 100);
		break;
	case ICD_STR_NUL:
		c.str[c.str_len - 1] = 'x';
		break;
	case ICD_DIE_OFF:
		ms_store64(c.scopes, UINT64_MAX / 4);
		break;
	case ICD_LINE_OFF:
		ms_store64(c.b + 16, UINT64_MAX / 4);
		break;
	case ICD_FLAGS:
		ms_store32(c.b + 56, c.flags | 0x100);
		break;
	case ICD_EMPTY_RANGE:
		memcpy(c.ranges + 8, c.ranges, 8);
		break;
	case ICD_OTHER_RANGES:
		ms_store64(c.cu, ms_load64(c.cu) + 1);
		break;
	default:
		break;
	}
	if (how > ICD_HUGE_ENTRIES)
		ic_reseal(f);
	return size;
}

static const uint8_t ic_bid[8] = { 7, 2, 3, 4, 5, 6, 7, 8 };

static struct ms_dwarfidx *ic_index(struct image *im, const char *path, const uint8_t *bid)
{
	const char *why;
	struct ms_dwarfidx *d = ms_dwarfidx_new(im->elf, &why);

	assert_non_null(d);
	ms_dwarfidx_index_cache(d, path, bid, 8);
	return d;
}

static void ic_stats(struct ms_dwarfidx *d, uint32_t *indexed, uint32_t *cached)
{
	struct ms_dwarfidx_stats st;

	ms_dwarfidx_stats(d, &st);
	*indexed = st.units_indexed;
	*cached = st.units_index_cached;
}

/* Index im with the cache at path, answer addrs as want, save: how many units came from the file. */
static uint32_t ic_run(struct image *im, const char *path, const uint8_t *bid,
		       const uint64_t *addrs, char **want, size_t n, uint32_t *indexed)
{
	struct ms_dwarfidx *d = ic_index(im, path, bid);
	uint32_t cached;

	assert_answers(d, addrs, want, n);
	ic_stats(d, indexed, &cached);
	ms_dwarfidx_save(d);
	/* Saved once: a second call writes nothing, lookups still work. */
	ms_dwarfidx_save(d);
	assert_answers(d, addrs, want, 1);
	ms_dwarfidx_free(d);
	return cached;
}

/* ---- the gate (ms_dwarfidx_gate): asked at the first read of the DWARF, never before ---- */

struct gate_log {
	int asked;
	bool pass;
};

static bool gate_check(void *arg)
{
	struct gate_log *g = arg;

	g->asked++;
	return g->pass;
}

static struct ms_dwarfidx *gated_index(struct image *im, const char *units, const char *index,
				       struct gate_log *g)
{
	const struct ms_dwarfidx_gate gate = { gate_check, g };
	const char *why;
	struct ms_dwarfidx *d = ms_dwarfidx_new_cached(im->elf, units, ic_bid, sizeof(ic_bid),
						       &gate, &why);

	assert_non_null(d);
	ms_dwarfidx_index_cache(d, index, ic_bid, sizeof(ic_bid));
	return d;
}

static void test_gate(void **state)
{
	struct image im;
	struct ms_dwarfidx *d;
	struct gate_log g;
	uint64_t inside[2], size;
	char *want[2], got[4096], dir[] = "/tmp/ms-gate-XXXXXX", units[64], index[64], refused[32];
	uint8_t *before, *after;
	size_t before_size, after_size;
	const char *why;

	(void)state;
	/* MS_SYM_BAD_DWARF and no entry, as answer() prints it. */
	snprintf(refused, sizeof(refused), "%d 0 0x0", MS_SYM_BAD_DWARF);
	assert_int_equal(symbols_index_aux_b(1), 21);
	image_open(&im);
	image_symbol(&im, "test_gate", &inside[0], &size);
	image_symbol(&im, "symbols_index_aux_a", &inside[1], &size);
	d = ms_dwarfidx_new(im.elf, &why);
	assert_non_null(d);
	for (size_t i = 0; i < 2; i++) {
		want[i] = malloc(4096);
		assert_non_null(want[i]);
		answer(d, inside[i], want[i], 4096);
		assert_non_null(strstr(want[i], i ? "symbols_index_aux_a" : "test_gate"));
	}
	ms_dwarfidx_free(d);
	assert_non_null(mkdtemp(dir));
	snprintf(units, sizeof(units), "%s/x.units", dir);
	snprintf(index, sizeof(index), "%s/x.index", dir);

	/* No cache: the list of units is read from the DWARF, so asked at once; passed, the answers. */
	g = (struct gate_log){ 0, true };
	d = gated_index(&im, units, index, &g);
	assert_int_equal(g.asked, 1);
	assert_answers(d, inside, want, 2);
	assert_int_equal(g.asked, 1);
	assert_false(ms_dwarfidx_refused(d));
	ms_dwarfidx_save(d);
	ms_dwarfidx_free(d);

	/* Both caches: a gate that would refuse is not asked while they answer. */
	g = (struct gate_log){ 0, false };
	d = gated_index(&im, units, index, &g);
	assert_answers(d, inside, want, 2);
	assert_int_equal(g.asked, 0);
	assert_false(ms_dwarfidx_refused(d));
	/* A miss sends the index to every unit's DIE: asked, refused, and no answer from then on. */
	answer(d, 1, got, sizeof(got));
	assert_int_equal(g.asked, 1);
	assert_true(ms_dwarfidx_refused(d));
	assert_string_equal(got, refused);
	answer(d, inside[0], got, sizeof(got));
	assert_string_equal(got, refused);
	assert_int_equal(g.asked, 1);
	assert_non_null(strstr(ms_dwarfidx_problem(d), "check"));
	/* A refused file taught nothing: the index cache is left as it was. */
	before = slurp(index, &before_size);
	ms_dwarfidx_save(d);
	ms_dwarfidx_free(d);
	after = slurp(index, &after_size);
	assert_int_equal(after_size, before_size);
	assert_memory_equal(after, before, before_size);
	free(after);
	free(before);

	/* The units cached but not their index: the first lookup reads DIEs, asked then. */
	assert_int_equal(unlink(index), 0);
	g = (struct gate_log){ 0, false };
	d = gated_index(&im, units, index, &g);
	assert_int_equal(g.asked, 0);
	answer(d, inside[1], got, sizeof(got));
	assert_int_equal(g.asked, 1);
	assert_string_equal(got, refused);
	ms_dwarfidx_free(d);
	/* And passed: the answers, as without a gate. */
	g = (struct gate_log){ 0, true };
	d = gated_index(&im, units, index, &g);
	assert_answers(d, inside, want, 2);
	assert_int_equal(g.asked, 1);
	ms_dwarfidx_free(d);

	image_close(&im);
	unlink(index);
	unlink(units);
	rmdir(dir);
	free(want[0]);
	free(want[1]);
}

static void test_crc32c(void **state)
{
	uint8_t buf[300];

	(void)state;
	assert_int_equal(ms_crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(ms_crc32c_portable(0, "123456789", 9), 0xe3069283);
	assert_int_equal(ms_crc32c(0, "", 0), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	/* Every alignment and length, and in pieces, as the table gives it. */
	for (size_t at = 0; at < 9; at++)
		for (size_t len = 0; at + len <= sizeof(buf); len += 7) {
			uint32_t want = ms_crc32c_portable(0, buf + at, len);

			assert_int_equal(ms_crc32c(0, buf + at, len), want);
			assert_int_equal(ms_crc32c(ms_crc32c(0, buf + at, len / 3), buf + at + len / 3,
						   len - len / 3), want);
		}
}

static void test_index_cache(void **state)
{
	struct image im;
	struct ms_dwarfidx *d;
	uint64_t *addrs;
	char **want, dir[] = "/tmp/ms-index-XXXXXX", path[64];
	const uint8_t other[8] = { 9, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t *good, *b;
	size_t n, good_size, size;
	uint32_t indexed, indexed2, cached;
	uint64_t inside[2];
	char *want_inside[2];
	const char *why;

	(void)state;
	assert_int_equal(symbols_index_aux_b(1), 21);
	image_open(&im);
	addrs = image_addresses(&im, &n);
	/* The answers without any cache. */
	want = calloc(n, sizeof(*want));
	assert_non_null(want);
	d = ms_dwarfidx_new(im.elf, &why);
	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		want[i] = malloc(4096);
		assert_non_null(want[i]);
		answer(d, addrs[i], want[i], 4096);
	}
	ms_dwarfidx_free(d);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/debug/x.index", dir);

	/* No file: every unit from the DWARF, then written (the directory made). */
	assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed), 0);
	assert_true(indexed >= 2);
	good = slurp(path, &good_size);
	assert_int_equal(good_size % 8, 0);
	assert_int_equal(ic_entries(good), indexed);

	/* Then every unit from the file, the same answers, the file as it was. */
	assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed2), indexed);
	assert_int_equal(indexed2, indexed);
	b = slurp(path, &size);
	assert_int_equal(size, good_size);
	assert_memory_equal(b, good, size);
	free(b);

	/* Another build id: not used, written for it; then the first one's again. */
	assert_int_equal(ic_run(&im, path, other, addrs, want, n, &indexed2), 0);
	assert_int_equal(ic_run(&im, path, other, addrs, want, n, &indexed2), indexed);
	assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed2), 0);
	b = slurp(path, &size);
	assert_int_equal(size, good_size);
	assert_memory_equal(b, good, size);
	free(b);

	/*
	 * Only addresses inside the units: no miss sends the index to read
	 * every unit's DIE, so the units stay aranges' and are checked.
	 */
	image_symbol(&im, "test_index_cache", &inside[0], &size);
	image_symbol(&im, "symbols_index_aux_a", &inside[1], &size);
	d = ms_dwarfidx_new(im.elf, &why);
	assert_non_null(d);
	for (size_t i = 0; i < 2; i++) {
		want_inside[i] = malloc(4096);
		assert_non_null(want_inside[i]);
		answer(d, inside[i], want_inside[i], 4096);
	}
	ms_dwarfidx_free(d);

	/* Each damage: that entry (or the file) ignored, the same answers, the file rewritten. */
	for (int how = 0; how < ICD_N; how++) {
		bool in = how == ICD_OTHER_RANGES;

		b = malloc(good_size + 16);
		assert_non_null(b);
		memcpy(b, good, good_size);
		spill(path, b, ic_damage(b, good_size, (enum ic_damage)how));
		free(b);
		cached = ic_run(&im, path, ic_bid, in ? inside : addrs, in ? want_inside : want,
				in ? 2 : n, &indexed2);
		if (cached >= indexed2)
			fail_msg("damage %d: every entry was used", how);
		assert_int_equal(indexed2, in ? 2 : indexed);
		/* The unit's entry was made again from fewer lookups: it learns the rest. */
		if (in)
			assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed2),
					 indexed);
		b = slurp(path, &size);
		if (size != good_size || memcmp(b, good, size))
			fail_msg("damage %d: the file was not written again as it was", how);
		free(b);
	}

	/* Only part of a run's units: the others are kept; the file grows by the new ones. */
	d = ic_index(&im, path, ic_bid);
	ms_dwarfidx_save(d);	/* nothing used, nothing new: left as it was */
	ms_dwarfidx_free(d);
	b = slurp(path, &size);
	assert_memory_equal(b, good, size);
	free(b);

	/* A bound of one entry: the unit used is kept, the others dropped; answers the same. */
	unlink(path);
	ms_dwarfidx_cache_max(IC_HEADER + 1);
	assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed2), 0);
	assert_int_equal(access(path, F_OK), -1);	/* nothing fits */
	ms_dwarfidx_cache_max(good_size - 8);
	assert_int_equal(ic_run(&im, path, ic_bid, addrs, want, n, &indexed2), 0);
	b = slurp(path, &size);
	assert_true(size <= good_size - 8);
	assert_true(ic_entries(b) >= 1 && ic_entries(b) < indexed);
	free(b);
	cached = ic_run(&im, path, ic_bid, addrs, want, n, &indexed2);
	assert_true(cached >= 1 && cached < indexed);
	ms_dwarfidx_cache_max(0);

	/* A path that cannot be written: no file, the same answers. */
	assert_int_equal(ic_run(&im, "/proc/no/x.index", ic_bid, addrs, want, n, &indexed2), 0);
	assert_int_equal(indexed2, indexed);

	image_close(&im);
	unlink(path);
	snprintf(path, sizeof(path), "%s/debug", dir);
	rmdir(path);
	rmdir(dir);
	free(good);
	free(want_inside[0]);
	free(want_inside[1]);
	free_answers(want, n);
	free(addrs);
}

/* ---- line tables ---- */

/* The line of addr in a unit, by libdw and by lines.h: the same. */
static void compare_line(Dwarf_Die *cudie, const struct ms_linetab *t, Dwarf_Addr x,
			 size_t *addrs)
{
	Dwarf_Line *line = dwarf_getsrc_die(cudie, x);
	const char *file = NULL;
	int lineno = 0, want_line;
	bool found = ms_linetab_find(t, x, &file, &lineno);

	(*addrs)++;
	if (found != (line != NULL))
		fail_msg("0x%llx: libdw %s a line, lines.h %s", (unsigned long long)x,
			 line ? "has" : "has no", found ? "has one" : "has none");
	if (!line)
		return;
	assert_int_equal(dwarf_lineno(line, &want_line), 0);
	assert_int_equal(lineno, want_line);
	if (!dwarf_linesrc(line, NULL, NULL))
		assert_null(file);
	else
		assert_string_equal(file, dwarf_linesrc(line, NULL, NULL));
}

/* The bytes of a section as libdw reads them (inflated when it was compressed). */
static const uint8_t *elf_section(Elf *elf, const char *name, size_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	*size = 0;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_size)
			return NULL;
		*size = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

/*
 * lines.h against libdw in every unit of dw (over elf, already opened by
 * libdw): every file name, and the line of every address of the unit's
 * ranges (every_byte) or of each row's address and its neighbours. The
 * number of addresses compared goes to *addrs.
 */
static size_t compare_lines(Elf *elf, Dwarf *dw, bool every_byte, size_t *addrs)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	struct ms_line_sections sec = { 0 };
	struct ms_line_scratch scratch = { 0 };
	struct ms_strpool pool;
	size_t units = 0;

	sec.line = elf_section(elf, ".debug_line", &sec.line_size);
	sec.str = elf_section(elf, ".debug_str", &sec.str_size);
	sec.line_str = elf_section(elf, ".debug_line_str", &sec.line_str_size);
	sec.big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	assert_non_null(sec.line);
	ms_strpool_init(&pool);
	*addrs = 0;
	while (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Attribute a;
		Dwarf_Word off;
		uint8_t addr_size;
		struct ms_linetab t;
		Dwarf_Files *files;
		size_t n_files;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t o = 0;

		cu = next;
		if (unit_type != DW_UT_compile || !dwarf_attr(&cudie, DW_AT_stmt_list, &a) ||
		    dwarf_formudata(&a, &off) != 0)
			continue;
		assert_int_equal(dwarf_cu_info(cu, NULL, NULL, NULL, NULL, NULL, &addr_size, NULL), 0);
		assert_int_equal(ms_linetab_read(&t, &sec, off, addr_size,
						 dwarf_attr(&cudie, DW_AT_comp_dir, &a) ?
						 dwarf_formstring(&a) : NULL, &pool, &scratch), 0);
		units++;
		assert_int_equal(dwarf_getsrcfiles(&cudie, &files, &n_files), 0);
		assert_int_equal(t.n_files, n_files);
		for (size_t i = 0; i <= n_files; i++) {
			const char *want = dwarf_filesrc(files, i, NULL, NULL);
			const char *got = ms_linetab_file(&t, i);

			if (!want)
				assert_null(got);
			else
				assert_string_equal(got, want);
		}
		while (every_byte && (o = dwarf_ranges(&cudie, o, &base, &lo, &hi)) > 0)
			for (Dwarf_Addr x = lo ? lo - 1 : 0; x <= hi; x++)
				compare_line(&cudie, &t, x, addrs);
		if (!every_byte) {
			Dwarf_Lines *lines;
			size_t n_lines;

			assert_int_equal(dwarf_getsrclines(&cudie, &lines, &n_lines), 0);
			for (size_t i = 0; i < n_lines; i++) {
				Dwarf_Addr x;

				assert_int_equal(dwarf_lineaddr(dwarf_onesrcline(lines, i), &x), 0);
				compare_line(&cudie, &t, x - 1, addrs);
				compare_line(&cudie, &t, x, addrs);
				compare_line(&cudie, &t, x + 1, addrs);
			}
		}
		ms_linetab_release(&t);
	}
	ms_line_scratch_release(&scratch);
	ms_strpool_release(&pool);
	return units;
}

static void test_lines_match_libdw(void **state)
{
	struct image im;
	Dwarf *dw;
	size_t addrs;

	(void)state;
	image_open(&im);
	dw = dwarf_begin_elf(im.elf, DWARF_C_READ, NULL);
	assert_non_null(dw);
	assert_true(compare_lines(im.elf, dw, true, &addrs) >= 2);
	assert_true(addrs > 100);
	dwarf_end(dw);
	image_close(&im);
}

/*
 * Every byte of elf's .text answered alike by an index that reads DIEs
 * with dieread.h and one that reads them with libdw alone; the number of
 * units dieread.h walked itself (not refused) goes to *ours.
 */
static void assert_dieread_matches(Elf *elf, uint32_t step, uint32_t *ours)
{
	struct ms_dwarfidx *a, *b;
	struct ms_dwarfidx_stats st;
	Elf_Scn *scn = NULL;
	uint64_t lo = 0, hi = 0;
	size_t shstrndx;
	const char *why;
	char x[4096], y[4096];

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text")) {
			lo = sh.sh_addr;
			hi = sh.sh_addr + sh.sh_size;
		}
	}
	assert_true(hi > lo);
	ms_dwarfidx_use_dieread(false);
	b = ms_dwarfidx_new(elf, &why);
	ms_dwarfidx_use_dieread(true);
	a = ms_dwarfidx_new(elf, &why);
	assert_non_null(a);
	assert_non_null(b);
	for (uint64_t addr = lo; addr < hi; addr += step) {
		answer(a, addr, x, sizeof(x));
		answer(b, addr, y, sizeof(y));
		if (strcmp(x, y))
			fail_msg("0x%llx: dieread '%s', libdw '%s'", (unsigned long long)addr, x, y);
	}
	ms_dwarfidx_stats(b, &st);
	assert_int_equal(st.units_libdw, st.units_indexed);
	ms_dwarfidx_stats(a, &st);
	*ours = st.units_indexed - st.units_libdw;
	ms_dwarfidx_free(a);
	ms_dwarfidx_free(b);
}

/* This program's two units, every byte: dieread.h answers as libdw. */
static void test_dieread_matches_libdw(void **state)
{
	struct image im;
	uint32_t ours;

	(void)state;
	image_open(&im);
	assert_dieread_matches(im.elf, 1, &ours);
#ifndef __clang__
	/* GCC's DWARF is all in forms dieread.h reads. */
	assert_true(ours >= 2);
#endif
	image_close(&im);
}

/*
 * libc's debug file (libc6-dbg), as ms-symbolize reads it for profiles:
 * every function's start and middle answered alike with and without
 * .debug_aranges, and lines.h answering as libdw at every row's address.
 */
static void test_libc(void **state)
{
	char path[PATH_MAX], line[PATH_MAX + 256], debug[PATH_MAX];
	struct ms_elf_file libc;
	struct image im;
	struct ms_dwarfidx *d;
	struct ms_dwarfidx_stats st;
	uint64_t msort, msort_size, *addrs;
	char **want, got[4096];
	const char *why;
	uint32_t units;
	size_t n, o, rows;
	char dir[] = "/tmp/ms-index-XXXXXX", cache[64];
	uint32_t indexed, indexed2;
	FILE *maps = fopen("/proc/self/maps", "r");
	Dwarf *dw;

	(void)state;
	assert_non_null(maps);
	path[0] = '\0';
	while (fgets(line, sizeof(line), maps)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	fclose(maps);
	assert_true(path[0]);
	assert_int_equal(ms_elf_file_open(&libc, path), MS_SYM_OK);
	assert_true(libc.build_id_len > 1);
	o = (size_t)snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%02x/",
			     libc.build_id[0]);
	for (uint32_t i = 1; i < libc.build_id_len; i++)
		o += (size_t)snprintf(debug + o, sizeof(debug) - o, "%02x", libc.build_id[i]);
	snprintf(debug + o, sizeof(debug) - o, ".debug");
	ms_elf_file_close(&libc);
	if (access(debug, R_OK))
		fail_msg("libc6-dbg is not installed (no %s): run scripts/install-deps", debug);

	image_open_path(&im, debug);
	image_symbol_match(&im, "msort_with_tmp", true, &msort, &msort_size);
	addrs = image_addresses(&im, &n);
	image_close(&im);
	want = reference_answers(debug, addrs, n, &units);

	image_open_path(&im, debug);
	d = ms_dwarfidx_new(im.elf, &why);
	assert_non_null(d);
	ms_dwarfidx_stats(d, &st);
	assert_true(st.from_aranges);
	assert_int_equal(st.units, units);
	answer(d, msort + msort_size / 2, got, sizeof(got));
	assert_non_null(strstr(got, "msort_with_tmp"));
	assert_non_null(strstr(got, "msort.c:"));
	assert_true(from_aranges(d));
	assert_answers(d, addrs, want, n);
	ms_dwarfidx_free(d);

	/* Every unit of libc through the index cache: written, then read back, the same answers. */
	assert_non_null(mkdtemp(dir));
	snprintf(cache, sizeof(cache), "%s/libc.index", dir);
	assert_int_equal(ic_run(&im, cache, ic_bid, addrs, want, n, &indexed), 0);
	assert_true(indexed > 1000);
	assert_int_equal(ic_run(&im, cache, ic_bid, addrs, want, n, &indexed2), indexed);
	unlink(cache);
	rmdir(dir);
	free_answers(want, n);
	free(addrs);

	dw = dwarf_begin_elf(im.elf, DWARF_C_READ, NULL);
	assert_non_null(dw);
	assert_true(compare_lines(im.elf, dw, false, &rows) > 1000);
	assert_true(rows > 100000);
	dwarf_end(dw);
	/* dieread.h answers as libdw at an address of every 61 bytes of libc. */
	assert_dieread_matches(im.elf, 61, &units);
	assert_true(units > 1000);
	image_close(&im);
}

/* Line tables written by hand (dwarf-bytes.h). */
static void set_address(struct bytes *b, uint64_t a)
{
	u8(b, 0);
	u8(b, 9);
	u8(b, DW_LNE_set_address);
	uint_le(b, a, 8);
}

static void end_sequence(struct bytes *b)
{
	u8(b, 0);
	u8(b, 1);
	u8(b, DW_LNE_end_sequence);
}

/* What the hand-written table gets wrong on purpose. */
enum table_flaw {
	FLAW_NONE,
	FLAW_DEFINE_FILE,	/* DW_LNE_define_file: libdw's */
	FLAW_VENDOR_OP,		/* an extended opcode of a vendor */
	FLAW_VLIW,		/* two operations per instruction */
	FLAW_LONG_EXT,		/* an extended opcode's length past one byte */
	FLAW_LINE_OVERFLOW,	/* a line past INT_MAX */
	FLAW_COLUMN,		/* a column libdw cannot store */
	FLAW_HEADER_SLACK,	/* a byte left at the end of the header */
	FLAW_OPEN_SEQUENCE,	/* the program ends inside a sequence */
	FLAW_BAD_SET_ADDRESS,	/* DW_LNE_set_address of the wrong length */
	FLAW_OPCODE_BASE,	/* an opcode base below DWARF 2's */
	FLAW_STD_LENGTH,	/* a standard opcode with another operand count */
	FLAW_DISCRIMINATOR,	/* a discriminator libdw cannot store */
	FLAW_DIR_INDEX,		/* a file in a directory that does not exist */
	FLAWS,
};

/*
 * A DWARF 4 table: directories "inc" and "/abs"; files a.c (dir 0), b.h
 * (dir 1), /x/c.h (dir 2); three sequences, the second below the first, the
 * third starting where the first ends.
 */
static void table_v4(struct bytes *b, enum table_flaw flaw)
{
	static const uint8_t lengths[] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t len_at, hdr_at, hdr_start;

	b->n = 0;
	len_at = b->n;
	uint_le(b, 0, 4);		/* unit length, set below */
	uint_le(b, 4, 2);		/* version */
	hdr_at = b->n;
	uint_le(b, 0, 4);		/* header length, set below */
	hdr_start = b->n;
	u8(b, 1);			/* minimum instruction length */
	u8(b, flaw == FLAW_VLIW ? 2 : 1);	/* operations per instruction */
	u8(b, 1);			/* default is_stmt */
	u8(b, (uint8_t)-5);		/* line base */
	u8(b, 14);			/* line range */
	u8(b, flaw == FLAW_OPCODE_BASE ? 9 : 13);	/* opcode base */
	for (unsigned int i = 0; i < (flaw == FLAW_OPCODE_BASE ? 8u : 12u); i++)
		u8(b, flaw == FLAW_STD_LENGTH && i == 1 ? 2 : lengths[i]);
	cstr(b, "inc");
	cstr(b, "/abs");
	u8(b, 0);
	cstr(b, "a.c");
	uleb(b, 0), uleb(b, 0), uleb(b, 0);
	cstr(b, "b.h");
	uleb(b, flaw == FLAW_DIR_INDEX ? 7 : 1), uleb(b, 0), uleb(b, 0);
	cstr(b, "/x/c.h");
	uleb(b, 2), uleb(b, 0), uleb(b, 0);
	u8(b, 0);
	if (flaw == FLAW_HEADER_SLACK)
		u8(b, 0);
	memcpy(b->b + hdr_at, &(uint32_t){ (uint32_t)(b->n - hdr_start) }, 4);

	/* Sequence 1: 0x2000 line 10, 0x2004 line 11, 0x2008 lines 11 then 12 (b.h), end 0x2010. */
	set_address(b, 0x2000);
	if (flaw == FLAW_BAD_SET_ADDRESS) {
		u8(b, 0), u8(b, 5), u8(b, DW_LNE_set_address), uint_le(b, 0x2000, 4);
	}
	u8(b, DW_LNS_advance_line), sleb(b, 9);
	u8(b, DW_LNS_copy);
	u8(b, 13 + (1 + 5) + 14 * 4);	/* special: line +1, address +4 */
	u8(b, DW_LNS_set_file), uleb(b, 2);
	u8(b, DW_LNS_advance_pc), uleb(b, 4);
	if (flaw == FLAW_COLUMN)
		u8(b, DW_LNS_set_column), uleb(b, 70000);
	if (flaw == FLAW_DISCRIMINATOR)
		u8(b, 0), u8(b, 5), u8(b, DW_LNE_set_discriminator), uleb(b, 1u << 24);
	u8(b, DW_LNS_copy);
	u8(b, DW_LNS_advance_line), sleb(b, 1);
	if (flaw == FLAW_LINE_OVERFLOW)
		u8(b, DW_LNS_advance_line), sleb(b, INT32_MAX);
	u8(b, DW_LNS_copy);
	u8(b, DW_LNS_advance_pc), uleb(b, 8);
	end_sequence(b);
	/* Sequence 2, lower: 0x1000 line 1 (a.c), end 0x1010. */
	set_address(b, 0x1000);
	u8(b, DW_LNS_copy);
	u8(b, DW_LNS_advance_pc), uleb(b, 0x10);
	end_sequence(b);
	/* Sequence 3 from the end of the first: 0x2010 line 100 (/x/c.h), end 0x2020. */
	set_address(b, 0x2010);
	u8(b, DW_LNS_set_file), uleb(b, 3);
	u8(b, DW_LNS_advance_line), sleb(b, 99);
	switch (flaw) {
	case FLAW_DEFINE_FILE:
		u8(b, 0), u8(b, 8), u8(b, DW_LNE_define_file);
		cstr(b, "d.c"), uleb(b, 0), uleb(b, 0), uleb(b, 0);
		break;
	case FLAW_VENDOR_OP:
		u8(b, 0), u8(b, 2), u8(b, DW_LNE_lo_user), u8(b, 0);
		break;
	case FLAW_LONG_EXT:
		u8(b, 0), uleb(b, 128), u8(b, DW_LNE_lo_user);
		for (int i = 0; i < 127; i++)
			u8(b, 0);
		break;
	default:
		break;
	}
	u8(b, DW_LNS_copy);
	u8(b, DW_LNS_advance_pc), uleb(b, 0x10);
	if (flaw != FLAW_OPEN_SEQUENCE)
		end_sequence(b);
	memcpy(b->b + len_at, &(uint32_t){ (uint32_t)(b->n - 4) }, 4);
}

static int read_table(struct ms_linetab *t, const struct bytes *b, const char *comp_dir,
		      struct ms_strpool *pool)
{
	struct ms_line_sections sec = { b->b, b->n, NULL, 0, NULL, 0, false };

	return ms_linetab_read(t, &sec, 0, 8, comp_dir, pool, NULL);
}

static void assert_line(const struct ms_linetab *t, uint64_t addr, const char *file, int line)
{
	const char *got_file = NULL;
	int got_line = 0;

	if (!file) {
		if (ms_linetab_find(t, addr, &got_file, &got_line))
			fail_msg("0x%llx: %s:%d, expected no line", (unsigned long long)addr,
				 got_file, got_line);
		return;
	}
	if (!ms_linetab_find(t, addr, &got_file, &got_line))
		fail_msg("0x%llx: no line, expected %s:%d", (unsigned long long)addr, file, line);
	assert_string_equal(got_file, file);
	assert_int_equal(got_line, line);
}

static void test_lines_rules(void **state)
{
	struct bytes b;
	struct ms_linetab t;
	struct ms_strpool pool;

	(void)state;
	ms_strpool_init(&pool);
	table_v4(&b, FLAW_NONE);
	assert_int_equal(read_table(&t, &b, "/comp", &pool), 0);
	/* Index 0 is libdw's placeholder before DWARF 5; names joined to their directory. */
	assert_int_equal(t.n_files, 4);
	assert_string_equal(ms_linetab_file(&t, 0), "???");
	assert_string_equal(ms_linetab_file(&t, 1), "/comp/a.c");
	assert_string_equal(ms_linetab_file(&t, 2), "inc/b.h");
	assert_string_equal(ms_linetab_file(&t, 3), "/x/c.h");
	assert_null(ms_linetab_file(&t, 4));
	assert_line(&t, 0xfff, NULL, 0);
	assert_line(&t, 0x1000, "/comp/a.c", 1);
	assert_line(&t, 0x100f, "/comp/a.c", 1);
	/* Past a sequence's end, and in the gap to the next: nothing. */
	assert_line(&t, 0x1010, NULL, 0);
	assert_line(&t, 0x1800, NULL, 0);
	assert_line(&t, 0x2000, "/comp/a.c", 10);
	assert_line(&t, 0x2003, "/comp/a.c", 10);
	assert_line(&t, 0x2004, "/comp/a.c", 11);
	/* Two rows at one address: the later one. */
	assert_line(&t, 0x2008, "inc/b.h", 12);
	assert_line(&t, 0x200f, "inc/b.h", 12);
	/* A sequence that starts where another ends: its row, not the end. */
	assert_line(&t, 0x2010, "/x/c.h", 100);
	assert_line(&t, 0x201f, "/x/c.h", 100);
	/* The table's last address and past it. */
	assert_line(&t, 0x2020, NULL, 0);
	assert_line(&t, UINT64_MAX, NULL, 0);
	ms_linetab_release(&t);

	/* Without a compilation directory, names in directory 0 stay relative. */
	assert_int_equal(read_table(&t, &b, NULL, &pool), 0);
	assert_string_equal(ms_linetab_file(&t, 1), "a.c");
	assert_line(&t, 0x1000, "a.c", 1);
	ms_linetab_release(&t);
	ms_strpool_release(&pool);
}

static void test_lines_refused(void **state)
{
	struct bytes b;
	struct ms_linetab t;
	struct ms_strpool pool;
	struct ms_line_sections sec;

	(void)state;
	ms_strpool_init(&pool);
	for (int flaw = FLAW_NONE + 1; flaw < FLAWS; flaw++) {
		table_v4(&b, (enum table_flaw)flaw);
		if (read_table(&t, &b, "/comp", &pool) != 1)
			fail_msg("a table with flaw %d was not left to libdw", flaw);
		/* Refused: nothing half read is kept. */
		assert_int_equal(t.n_rows, 0);
		assert_int_equal(t.n_files, 0);
	}
	/* Cut short anywhere: refused, never read past the end. */
	table_v4(&b, FLAW_NONE);
	for (size_t n = 0; n < b.n; n++) {
		struct bytes cut = b;

		cut.n = n;
		assert_int_equal(read_table(&t, &cut, "/comp", &pool), 1);
	}
	/* An offset past the section, an address size libdw does not read. */
	sec = (struct ms_line_sections){ b.b, b.n, NULL, 0, NULL, 0, false };
	assert_int_equal(ms_linetab_read(&t, &sec, b.n, 8, NULL, &pool, NULL), 1);
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 2, NULL, &pool, NULL), 1);
	ms_strpool_release(&pool);
}

/* A DWARF 5 table: directories by .debug_line_str offset, files with an MD5. */
static void table_v5(struct bytes *b, uint64_t n_files, uint64_t path_form)
{
	size_t hdr_at, hdr_start;

	b->n = 0;
	uint_le(b, 0, 4);
	uint_le(b, 5, 2);
	u8(b, 8);			/* address size */
	u8(b, 0);			/* segment selector size */
	hdr_at = b->n;
	uint_le(b, 0, 4);
	hdr_start = b->n;
	u8(b, 1), u8(b, 1), u8(b, 1), u8(b, (uint8_t)-5), u8(b, 14), u8(b, 13);
	for (unsigned int i = 0; i < 12; i++)
		u8(b, (uint8_t[]){ 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 }[i]);
	u8(b, 1);
	uleb(b, DW_LNCT_path), uleb(b, DW_FORM_line_strp);
	uleb(b, 2);
	uint_le(b, 0, 4);		/* "/comp" */
	uint_le(b, 6, 4);		/* "sub" */
	u8(b, 3);
	uleb(b, DW_LNCT_path), uleb(b, path_form);
	uleb(b, DW_LNCT_directory_index), uleb(b, DW_FORM_udata);
	uleb(b, DW_LNCT_MD5), uleb(b, DW_FORM_data16);
	uleb(b, n_files);
	for (uint64_t i = 0; i < n_files; i++) {
		cstr(b, i ? "x.h" : "main.c");
		uleb(b, i);
		for (int k = 0; k < 16; k++)
			u8(b, 0xa5);
	}
	memcpy(b->b + hdr_at, &(uint32_t){ (uint32_t)(b->n - hdr_start) }, 4);
	set_address(b, 0x400);
	u8(b, DW_LNS_copy);
	u8(b, DW_LNS_advance_pc), uleb(b, 2);
	end_sequence(b);
	memcpy(b->b, &(uint32_t){ (uint32_t)(b->n - 4) }, 4);
}

static void test_lines_v5(void **state)
{
	static const uint8_t line_str[] = "/comp\0sub";
	struct bytes b;
	struct ms_linetab t;
	struct ms_strpool pool;
	struct ms_line_sections sec;

	(void)state;
	ms_strpool_init(&pool);
	table_v5(&b, 2, DW_FORM_string);
	sec = (struct ms_line_sections){ b.b, b.n, NULL, 0, line_str, sizeof(line_str), false };
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 8, "/elsewhere", &pool, NULL), 0);
	/* DWARF 5 counts files from 0; the default file register is still 1. */
	assert_int_equal(t.n_files, 2);
	assert_string_equal(ms_linetab_file(&t, 0), "/comp/main.c");
	assert_string_equal(ms_linetab_file(&t, 1), "sub/x.h");
	assert_line(&t, 0x400, "sub/x.h", 1);
	assert_line(&t, 0x402, NULL, 0);
	ms_linetab_release(&t);
	/* No file at all: libdw's placeholder. */
	table_v5(&b, 0, DW_FORM_string);
	sec.line = b.b;
	sec.line_size = b.n;
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 8, NULL, &pool, NULL), 0);
	assert_int_equal(t.n_files, 1);
	assert_string_equal(ms_linetab_file(&t, 0), "???");
	{
		const char *file = "x";
		int line = 0;

		/* A row whose file is past the table: a line, no file (dwarf_linesrc's NULL). */
		assert_true(ms_linetab_find(&t, 0x400, &file, &line));
		assert_null(file);
		assert_int_equal(line, 1);
	}
	ms_linetab_release(&t);
	/* A form this reader does not know, a string section that is missing: libdw's. */
	table_v5(&b, 2, DW_FORM_strx1);
	sec.line = b.b;
	sec.line_size = b.n;
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 8, NULL, &pool, NULL), 1);
	table_v5(&b, 2, DW_FORM_string);
	sec.line = b.b;
	sec.line_size = b.n;
	sec.line_str = NULL;
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 8, NULL, &pool, NULL), 1);
	/* Another address size than the unit's. */
	sec.line_str = line_str;
	assert_int_equal(ms_linetab_read(&t, &sec, 0, 4, NULL, &pool, NULL), 1);
	ms_strpool_release(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_radix_sort),
		cmocka_unit_test(test_kallsyms_addresses),
		cmocka_unit_test(test_aranges),
		cmocka_unit_test(test_units_cache),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_index_cache),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_lines_match_libdw),
		cmocka_unit_test(test_dieread_matches_libdw),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_lines_rules),
		cmocka_unit_test(test_lines_refused),
		cmocka_unit_test(test_lines_v5),
	};

	ms_set_progname("symbols-index-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
