/*
 * Unit tests of ms-symbolize's caches (libcommon/symbols/kcache.h and
 * dcache.h): the kallsyms cache's key (what changes it and what does not),
 * a round trip through the file, and a cache file that is stale, cut short
 * or corrupt in each field the loader checks, which must be refused, never
 * used, or corrupt in a symbol, which a lookup that meets it must tell. Then the inflated copy of a debug file with compressed sections:
 * written once, reused, and refused when cut short or of another build id.
 *
 * Files: temporary ones under $TMPDIR; tests/unit/data/elf-tiny (built by
 * the suite) compressed with objcopy for the debug-file copy (skipped
 * without objcopy).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/dcache.h"
#include "symbols/kcache.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define HDR 112		/* sizeof(struct kcache_header) in kcache.c */

static char dir[256];

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *name, const void *data, size_t len)
{
	char p[512];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* ELF notes holding one GNU build id of 20 bytes, all equal to fill. */
static void write_notes(const char *name, uint8_t fill)
{
	uint8_t buf[12 + 4 + 20];
	uint32_t h[3] = { 4, 20, 3 };

	memcpy(buf, h, sizeof(h));
	memcpy(buf + 12, "GNU", 4);
	memset(buf + 16, fill, 20);
	write_file(name, buf, sizeof(buf));
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/kcache-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	write_notes("notes", 0xab);
	write_notes("notes2", 0xcd);
	write_file("boot", "11111111-2222-3333-4444-555555555555\n", 37);
	write_file("boot2", "11111111-2222-3333-4444-666666666666\n", 37);
	write_file("mods", "a 100 0 - Live 0xffffffffc0000000\nb 200 3 a, Live 0xffffffffc0100000\n", 69);
	/* The same modules, other use counts and users: the same key. */
	write_file("mods-used", "a 100 5 b, Live 0xffffffffc0000000\nb 200 0 - Live 0xffffffffc0100000\n", 69);
	/* Module b loaded elsewhere: another key. */
	write_file("mods-moved", "a 100 0 - Live 0xffffffffc0000000\nb 200 3 a, Live 0xffffffffc0200000\n", 69);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void key(struct ms_kcache_key *k, const char *notes, const char *boot, const char *mods)
{
	char n[512], b[512], m[512];

	path_of(n, sizeof(n), notes);
	path_of(b, sizeof(b), boot);
	path_of(m, sizeof(m), mods);
	assert_int_equal(ms_kcache_key(k, n, b, m), 0);
}

static void test_key(void **state)
{
	struct ms_kcache_key k1, k2;
	char n[512], b[512], m[512];

	(void)state;
	key(&k1, "notes", "boot", "mods");
	key(&k2, "notes", "boot", "mods-used");
	assert_memory_equal(k1.bytes, k2.bytes, MS_KCACHE_KEY);
	key(&k2, "notes", "boot", "mods-moved");
	assert_memory_not_equal(k1.bytes, k2.bytes, MS_KCACHE_KEY);
	key(&k2, "notes", "boot2", "mods");
	assert_memory_not_equal(k1.bytes, k2.bytes, MS_KCACHE_KEY);
	key(&k2, "notes2", "boot", "mods");
	assert_memory_not_equal(k1.bytes, k2.bytes, MS_KCACHE_KEY);
	/* No modules file (a kernel without modules) is a key; no notes is none. */
	key(&k2, "notes", "boot", "no-such-file");
	assert_memory_not_equal(k1.bytes, k2.bytes, MS_KCACHE_KEY);
	path_of(n, sizeof(n), "no-notes");
	path_of(b, sizeof(b), "boot");
	path_of(m, sizeof(m), "mods");
	assert_int_equal(ms_kcache_key(&k2, n, b, m), -1);
	path_of(n, sizeof(n), "notes");
	path_of(b, sizeof(b), "no-boot");
	assert_int_equal(ms_kcache_key(&k2, n, b, m), -1);
}

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t helper\n"
	"ffffffff81000180 D some_data\n"
	"ffffffff81000200 W weak_one\n"
	"ffffffff81000300 T last_text\n"
	"ffffffff81000400 T _etext\n";

static void load_text(struct ms_symtab *t)
{
	FILE *f = fmemopen((void *)kallsyms, sizeof(kallsyms) - 1, "r");

	assert_non_null(f);
	ms_symtab_init(t);
	assert_int_equal(ms_symtab_load_kallsyms(t, f), 0);
	fclose(f);
}

static void assert_same_lookups(const struct ms_symtab *a, const struct ms_symtab *b)
{
	for (uint64_t addr = 0xffffffff80ffff00ull; addr < 0xffffffff81000500ull; addr += 0x10) {
		const struct ms_sym *x = ms_symtab_lookup(a, addr), *y = ms_symtab_lookup(b, addr);

		assert_int_equal(!x, !y);
		if (x) {
			assert_int_equal(x->start, y->start);
			assert_int_equal(x->size, y->size);
			assert_string_equal(ms_symtab_name(a, x), ms_symtab_name(b, y));
		}
	}
}

static void test_round_trip(void **state)
{
	struct ms_kcache_key k, other;
	struct ms_symtab t, m;
	char p[512];

	(void)state;
	key(&k, "notes", "boot", "mods");
	key(&other, "notes", "boot2", "mods");
	load_text(&t);
	path_of(p, sizeof(p), "cache/sub/kallsyms");
	/* The directories are made (0700). */
	assert_int_equal(ms_kcache_store(&t, p, &k), 0);
	ms_symtab_init(&m);
	assert_int_equal(ms_kcache_load(&m, p, &k), 0);
	assert_non_null(m.map);
	assert_int_equal(ms_symtab_count(&m), ms_symtab_count(&t));
	assert_same_lookups(&t, &m);
	ms_symtab_release(&m);
	/* Another boot: stale. */
	assert_int_equal(ms_kcache_load(&m, p, &other), -1);
	assert_null(m.map);
	path_of(p, sizeof(p), "no-such-cache");
	assert_int_equal(ms_kcache_load(&m, p, &k), -1);
	ms_symtab_release(&t);
}

/* Load a copy of the good cache with bytes [off, off + len) replaced. */
static int load_patched(const struct ms_kcache_key *k, size_t off, const void *bytes, size_t len,
			long cut)
{
	char good[512], bad[512];
	struct ms_symtab m;
	FILE *f;
	char *buf;
	long n;
	int r;

	path_of(good, sizeof(good), "cache/sub/kallsyms");
	path_of(bad, sizeof(bad), "bad-kallsyms");
	f = fopen(good, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (len)
		memcpy(buf + off, bytes, len);
	write_file("bad-kallsyms", buf, (size_t)(cut >= 0 ? cut : n));
	free(buf);
	ms_symtab_init(&m);
	r = ms_kcache_load(&m, bad, k);
	if (r == 0)
		ms_symtab_release(&m);
	return r;
}

/*
 * A copy of the good cache with bytes [off, off + len) replaced loads (the
 * header is good); whether a lookup of addr finds it malformed.
 */
static bool bad_at(const struct ms_kcache_key *k, size_t off, const void *bytes, size_t len,
		   uint64_t addr)
{
	char bad[512];
	struct ms_symtab m;
	bool is_bad;

	assert_int_equal(load_patched(k, off, bytes, len, -1), 0);
	path_of(bad, sizeof(bad), "bad-kallsyms");
	ms_symtab_init(&m);
	assert_int_equal(ms_kcache_load(&m, bad, k), 0);
	is_bad = true;
	if (!ms_symtab_lookup_checked(&m, addr, &is_bad))
		assert_true(is_bad || addr - 0xffffffff81000000ull >= 0x400);
	/* The plain lookup never answers with a malformed symbol either. */
	if (is_bad)
		assert_null(ms_symtab_lookup(&m, addr));
	ms_symtab_release(&m);
	return is_bad;
}

static void test_corrupt(void **state)
{
	struct ms_kcache_key k;
	struct ms_symtab t;
	char p[512];
	uint64_t big = 1ull << 40, zero = 0;
	uint64_t in0 = 0xffffffff81000010ull, in1 = 0xffffffff81000110ull;
	uint64_t in3 = 0xffffffff81000350ull;
	uint32_t u32;
	struct ms_sym s0;
	size_t sym0 = HDR, sym1 = HDR + sizeof(struct ms_sym);

	(void)state;
	key(&k, "notes", "boot", "mods");
	load_text(&t);
	path_of(p, sizeof(p), "cache/sub/kallsyms");
	assert_int_equal(ms_kcache_store(&t, p, &k), 0);
	s0 = t.tier[0].syms[0];

	/* What holds for the whole file is checked at load. */
	assert_int_equal(load_patched(&k, 0, NULL, 0, -1), 0);		/* the copy is good */
	assert_int_equal(load_patched(&k, 0, "MSKSYMX", 8, -1), -1);	/* magic */
	u32 = 2;
	assert_int_equal(load_patched(&k, 8, &u32, 4, -1), -1);		/* version */
	u32 = 8;
	assert_int_equal(load_patched(&k, 12, &u32, 4, -1), -1);	/* record size */
	assert_int_equal(load_patched(&k, HDR - 16, &big, 8, -1), -1);	/* symbol count */
	assert_int_equal(load_patched(&k, HDR - 16, &zero, 8, -1), -1);
	assert_int_equal(load_patched(&k, HDR - 8, &big, 8, -1), -1);	/* names length */
	assert_int_equal(load_patched(&k, 0, NULL, 0, HDR - 1), -1);	/* cut in the header */
	assert_int_equal(load_patched(&k, 0, NULL, 0, HDR + 40), -1);	/* cut in the symbols */
	assert_int_equal(load_patched(&k, 0, NULL, 0, 0), -1);		/* empty */
	/* The names must end with a NUL. */
	{
		char good[512];
		struct stat st;

		path_of(good, sizeof(good), "cache/sub/kallsyms");
		assert_int_equal(stat(good, &st), 0);
		assert_int_equal(load_patched(&k, (size_t)st.st_size - 1, "x", 1, -1), -1);
	}

	/* A symbol is checked where a lookup meets it; the good copy has none bad. */
	assert_false(bad_at(&k, 0, NULL, 0, in0));
	assert_false(bad_at(&k, 0, NULL, 0, in3));
	assert_false(bad_at(&k, 0, NULL, 0, 0xffffffff81000400ull));	/* past the last */
	assert_false(bad_at(&k, 0, NULL, 0, 0xffffffff80000000ull));	/* before the first */
	/* A symbol's name past the names: bad there, not at a symbol two away. */
	u32 = 1u << 30;
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, name), &u32, 4, in0));
	assert_false(bad_at(&k, sym0 + offsetof(struct ms_sym, name), &u32, 4, in3));
	/* A symbol of size 0, a rank out of range. */
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, size), &zero, 8, in0));
	u32 = 7;
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, rank), &u32, 4, in0));
	/* An end that wraps. */
	big = UINT64_MAX - 0x10;
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, size), &big, 8, in0));
	/* A display pointer in the file is never read: not bad, and not used. */
	big = 0x1234;
	assert_false(bad_at(&k, sym0 + offsetof(struct ms_sym, display), &big, 8, in0));
	/* Unsorted (the first two swapped): bad at both, and at the next one. */
	assert_true(bad_at(&k, sym1, &s0, sizeof(s0), in0));
	assert_true(bad_at(&k, sym1, &s0, sizeof(s0), in1));
	/* Overlapping: the first symbol reaches into the second. */
	big = s0.size * 4;
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, size), &big, 8, in0));
	/* ... and seen from the second, its neighbour. */
	assert_true(bad_at(&k, sym0 + offsetof(struct ms_sym, size), &big, 8, in1));
	ms_symtab_release(&t);
}

static void test_cache_file(void **state)
{
	char *p;

	(void)state;
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	p = ms_cache_file("kallsyms");
	assert_string_equal(p, "/x/cache/microscope/kallsyms");
	free(p);
	/* A relative XDG_CACHE_HOME is ignored (the XDG rule). */
	setenv("XDG_CACHE_HOME", "rel", 1);
	setenv("HOME", "/home/me", 1);
	p = ms_cache_file("debug/ab.debug");
	assert_string_equal(p, "/home/me/.cache/microscope/debug/ab.debug");
	free(p);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_null(ms_cache_file("kallsyms"));
}

/* The test ELF (data/ beside this binary) with its DWARF compressed by objcopy, or skip. */
static bool make_compressed(char *out, size_t n)
{
	char exe[512], src[600], cmd[1400];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (k <= 0)
		return false;
	exe[k] = '\0';
	snprintf(src, sizeof(src), "%s/data/elf-tiny", dirname(exe));
	if (access(src, R_OK) != 0)
		return false;
	path_of(out, n, "tiny-z");
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s' 2>/dev/null",
		 src, out);
	return system(cmd) == 0;
}

static void test_inflated_copy(void **state)
{
	struct ms_elf_file orig, copy, again;
	char z[512], cached[700];
	uint8_t other[MS_BUILD_ID_MAX];

	(void)state;
	if (!make_compressed(z, sizeof(z)))
		skip();
	setenv("XDG_CACHE_HOME", dir, 1);
	assert_int_equal(ms_elf_file_open(&orig, z), MS_SYM_OK);
	if (!orig.build_id_len || !ms_elf_debug_compressed(orig.elf)) {
		ms_elf_file_close(&orig);
		skip();
	}
	assert_int_equal(ms_dcache_open(&copy, orig.elf, orig.build_id, orig.build_id_len), 0);
	assert_false(ms_elf_debug_compressed(copy.elf));
	assert_int_equal(copy.build_id_len, orig.build_id_len);
	assert_memory_equal(copy.build_id, orig.build_id, orig.build_id_len);
	/* The second open maps the same file. */
	assert_int_equal(ms_dcache_open(&again, orig.elf, orig.build_id, orig.build_id_len), 0);
	assert_int_equal(again.st.st_ino, copy.st.st_ino);
	ms_elf_file_close(&again);
	/* Another build id never gets this copy. */
	memcpy(other, orig.build_id, orig.build_id_len);
	other[0] ^= 0xff;
	snprintf(cached, sizeof(cached), "%s/microscope/debug", dir);
	ms_elf_file_close(&copy);
	/* A copy cut short is refused and written again. */
	{
		char cmd[1500];
		static const char hex[] = "0123456789abcdef";
		char name[2 * MS_BUILD_ID_MAX + 1];
		struct stat st;

		for (uint32_t i = 0; i < orig.build_id_len; i++) {
			name[2 * i] = hex[orig.build_id[i] >> 4];
			name[2 * i + 1] = hex[orig.build_id[i] & 15];
		}
		name[2 * orig.build_id_len] = '\0';
		snprintf(cmd, sizeof(cmd), "truncate -s 600 '%s/%s.debug'", cached, name);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(ms_dcache_open(&copy, orig.elf, orig.build_id, orig.build_id_len), 0);
		assert_true(copy.st.st_size > 600);
		ms_elf_file_close(&copy);
		snprintf(cmd, sizeof(cmd), "%s/%s.debug", cached, name);
		assert_int_equal(stat(cmd, &st), 0);
		assert_true(st.st_size > 600);
	}
	ms_elf_file_close(&orig);
	unsetenv("XDG_CACHE_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_cache_file),
		cmocka_unit_test(test_inflated_copy),
	};

	ms_set_progname("kcache-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}
