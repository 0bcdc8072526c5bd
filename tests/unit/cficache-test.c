/*
 * Unit tests of the cache of CFI rows (libcommon/dwarf/cfi.c): a module's
 * rows of .eh_frame and their rules, written at ms_cfi_free() under its
 * build id and read back by the next ms_cfi of the same module. Answers
 * with a warm cache are the cold ones, made without libdw; a cache that is
 * cut, corrupt or another module's is ignored (and rewritten); so is one
 * with any single byte flipped, or a FIFO in its place, which must not
 * hang; with no cache directory nothing is written.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stream/records.h"
#include "dwarf/cfi.h"
#include "elf/elffile.h"
#include "cfi-helpers.h"
#include "elf-helpers.h"
#include "tmpdir.h"
#include "util/bits.h"
#include "util/cachefile.h"

/*
 * The file's layout (cfi.c): the common header (util/cachefile.h), the
 * cache's own from H_OWN, rules from HDR, rows.
 */
#define H_OWN ((int)sizeof(struct ms_cachefile))
#define H_RULE_SIZE (H_OWN + 0)
#define H_N_RULES (H_OWN + 8)
#define H_N_ROWS (H_OWN + 12)
#define H_FILE_SIZE (H_OWN + 16)
#define H_BUILD_ID (H_OWN + 28)
#define HDR (H_OWN + 48)
#define RULE 152
#define ROW 24
#define R_UNDEF 4
#define R_N 10
#define R_REGS 12
#define W_END 8
#define W_RULE 16

#define FRAMES_ID "00112233445566778899aabbccddeeff00112233"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static char cache_dir[PATH_MAX];

static const char *cache_path(const char *id)
{
	static char buf[PATH_MAX + 128];

	snprintf(buf, sizeof(buf), "%s/microscope/cfi/%s.rows", cache_dir, id);
	return buf;
}

static bool has_expr(const struct ms_cfi_rule *r)
{
	if (r->cfa_kind == MS_CFA_EXPR)
		return true;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->regs[i].kind == MS_REG_EXPR || r->regs[i].kind == MS_REG_VAL_EXPR)
			return true;
	return false;
}

/* What one run of lookups saw. */
struct run {
	uint64_t made, made_expr, cached_rows, from_cache, found;
};

/*
 * Look every step-th address of path's .text up (from the first + skip)
 * in an ms_cfi with rows and cache, and in one with neither: the answers
 * must be the same. Frees both (the first writes the cache).
 */
static struct run lookups(const char *path, uint64_t step, uint64_t skip)
{
	struct ms_module m;
	struct ms_cfi *c, *plain;
	struct run run = { 0 };
	uint64_t lo, hi;

	assert_true(module_at(path, &m));
	text_range(path, &lo, &hi);
	c = ms_cfi_open(path, &m, NULL);
	plain = ms_cfi_open(path, &m, NULL);
	assert_non_null(c);
	assert_non_null(plain);
	ms_cfi_no_rows(plain);
	for (uint64_t a = lo + skip; a < hi; a += step) {
		uint32_t rc, rp;
		uint64_t made = ms_cfi_stats(c)->made;
		int fc = ms_cfi_find(c, a, &rc), fp = ms_cfi_find(plain, a, &rp);

		assert_int_equal(fc, fp);
		if (fc != 1)
			continue;
		run.found++;
		assert_same_rule(c, ms_cfi_rule(c, rc), plain, ms_cfi_rule(plain, rp));
		if (ms_cfi_stats(c)->made != made && has_expr(ms_cfi_rule(c, rc)))
			run.made_expr++;
	}
	run.made = ms_cfi_stats(c)->made;
	run.cached_rows = ms_cfi_stats(c)->cached_rows;
	run.from_cache = ms_cfi_stats(c)->from_cache;
	/* The one without rows neither reads nor writes the cache. */
	assert_int_equal(ms_cfi_stats(plain)->cached_rows, 0);
	ms_cfi_free(plain);
	ms_cfi_free(c);
	return run;
}

static void rm_cache(void)
{
	char dir[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/microscope", cache_dir);
	assert_int_equal(tmpdir_remove(dir), 0);
}

static int setup(void **state)
{
	(void)state;
	tmpdir_make(cache_dir, sizeof(cache_dir), "cficache-test");
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(cache_dir);
}

static struct stat stat_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st;
}

/*
 * Cold, then warm: the same answers, and libdw made only the rules the
 * cache does not hold (expressions). Then a run that learns nothing does
 * not rewrite the file.
 */
static void test_round_trip(void **state)
{
	const char *path = data_path("dwarf-frames");
	struct run cold, warm, again;
	struct stat a, b;

	(void)state;
	rm_cache();
	cold = lookups(path, 1, 0);
	assert_true(cold.found > 0);
	assert_true(cold.made > cold.made_expr);
	assert_int_equal(cold.cached_rows, 0);
	a = stat_of(cache_path(FRAMES_ID));
	warm = lookups(path, 1, 0);
	assert_true(warm.cached_rows > 0);
	assert_true(warm.from_cache > 0);
	assert_int_equal(warm.made, cold.made_expr);
	assert_int_equal(warm.made_expr, cold.made_expr);
	b = stat_of(cache_path(FRAMES_ID));
	assert_true(a.st_ino == b.st_ino);	/* nothing learned: not rewritten */
	again = lookups(path, 1, 0);
	assert_int_equal(again.made, cold.made_expr);
}

/* Half the addresses, then all: the rows learned in the second run are merged. */
static void test_merge(void **state)
{
	const char *path = data_path("dwarf-frames");
	struct run half, all, warm;

	(void)state;
	rm_cache();
	half = lookups(path, 7, 0);
	all = lookups(path, 1, 0);
	assert_true(all.cached_rows > 0 && all.cached_rows <= half.made - half.made_expr);
	assert_true(all.made > all.made_expr);	/* learned rows past the first run's */
	warm = lookups(path, 1, 0);
	assert_true(warm.cached_rows > all.cached_rows);
	assert_int_equal(warm.made, warm.made_expr);
}

/* libc: many rows and rules (several rule blocks), cold and warm. */
static void test_libc(void **state)
{
	struct run cold, warm;
	uint64_t lo, hi, step;

	(void)state;
	if (access(LIBC, R_OK) < 0)
		fail_msg("no libc at %s", LIBC);
	rm_cache();
	text_range(LIBC, &lo, &hi);
	step = (hi - lo) / 20000 + 1;
	cold = lookups(LIBC, step, 0);
	assert_true(cold.made - cold.made_expr > 1000);
	warm = lookups(LIBC, step, 0);
	assert_int_equal(warm.made, warm.made_expr);
	assert_true(warm.cached_rows > 1000 && warm.cached_rows <= cold.made - cold.made_expr);
}

/* The cache file, read whole: its bytes in *buf (malloc'd), its length returned. */
static size_t slurp(const char *path, uint8_t **buf)
{
	FILE *f = fopen(path, "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > HDR);
	rewind(f);
	*buf = malloc((size_t)n + 16);
	assert_non_null(*buf);
	assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return (size_t)n;
}

static void spill(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

enum corruption {
	CUT, LONGER, BUILD_ID, FILE_SIZE, N_RULES, RULE_SIZE, REG_NUMBER, REG_KIND, REG_ORDER,
	UNDEF_BIT, REGISTER_ARG, RULE_INDEX, EMPTY_ROW, OVERLAP, GARBAGE, CORRUPTIONS
};

/* A rule of the file whose last register is the return address, after another. */
static uint8_t *rule_ending_in_ra(uint8_t *buf)
{
	uint32_t n_rules = ms_load32(buf + H_N_RULES);

	for (uint32_t i = 0; i < n_rules; i++) {
		uint8_t *r = buf + HDR + (size_t)i * RULE;
		uint8_t n = r[R_N];

		if (n >= 2 && r[R_REGS + 8 * (n - 1)] == MS_DW_RA)
			return r;
	}
	fail_msg("no rule ends in the return address");
	return NULL;
}

static void corrupt(uint8_t *buf, size_t *len, enum corruption k)
{
	uint32_t n_rules = ms_load32(buf + H_N_RULES);
	uint8_t *rows = buf + HDR + (size_t)n_rules * RULE, *r;

	switch (k) {
	case CUT:
		*len -= 1;
		break;
	case LONGER:
		buf[(*len)++] = 0;
		break;
	case BUILD_ID:
		buf[H_BUILD_ID + 3] ^= 1;
		break;
	case FILE_SIZE:
		buf[H_FILE_SIZE] ^= 1;
		break;
	case N_RULES:
		ms_store32(buf + H_N_RULES, n_rules + 1);
		break;
	case RULE_SIZE:
		ms_store32(buf + H_RULE_SIZE, RULE + 8);
		break;
	case REG_NUMBER:
		/* Still in order, not undefined: only the register's bound refuses it. */
		r = rule_ending_in_ra(buf);
		r[R_REGS + 8 * (r[R_N] - 1)] = MS_DWARF_REGS;
		break;
	case REG_KIND:
		r = rule_ending_in_ra(buf);
		r[R_REGS + 1] = MS_REG_EXPR;
		break;
	case REG_ORDER:
		r = rule_ending_in_ra(buf);
		r[R_REGS + 8] = r[R_REGS];
		break;
	case UNDEF_BIT:
		r = rule_ending_in_ra(buf);
		ms_store32(r + R_UNDEF, ms_load32(r + R_UNDEF) | 1u << MS_DW_RA);
		break;
	case REGISTER_ARG:
		r = rule_ending_in_ra(buf);
		r[R_REGS + 1] = MS_REG_REGISTER;
		ms_store32(r + R_REGS + 4, MS_DWARF_REGS);
		break;
	case RULE_INDEX:
		ms_store32(rows + W_RULE, n_rules);
		break;
	case EMPTY_ROW:
		/* The first row made empty: its start is its end. */
		memcpy(rows + W_END, rows, 8);
		break;
	case OVERLAP:
		/* The second row starts inside the first. */
		memcpy(rows + ROW, rows, 8);
		break;
	case GARBAGE:
		for (size_t i = 0; i < *len; i++)
			buf[i] = (uint8_t)(i * 151 + 7);
		break;
	case CORRUPTIONS:
		break;
	}
}

/* Each corruption: the cache is ignored (answers as cold), then rewritten whole. */
static void test_corrupt(void **state)
{
	const char *path = data_path("dwarf-frames");
	struct run cold, bad, warm;

	(void)state;
	for (int k = 0; k < CORRUPTIONS; k++) {
		uint8_t *buf;
		size_t len;

		rm_cache();
		cold = lookups(path, 1, 0);
		len = slurp(cache_path(FRAMES_ID), &buf);
		assert_true(ms_load32(buf + H_N_ROWS) >= 2);
		corrupt(buf, &len, k);
		/* Sealed again: the checks past the CRCs must meet the damage. */
		if (k != GARBAGE)
			ms_cachefile_seal(buf, len);
		spill(cache_path(FRAMES_ID), buf, len);
		free(buf);
		bad = lookups(path, 1, 0);
		if (bad.cached_rows)
			fail_msg("corruption %d: the cache was used", k);
		assert_int_equal(bad.made, cold.made);
		warm = lookups(path, 1, 0);
		assert_true(warm.cached_rows > 0);
		assert_int_equal(warm.made, cold.made_expr);
	}
}

/*
 * Every single byte of the file flipped, in turn (issue 15: 48 of 1,120
 * such flips changed stacks): each time every answer is the one without a
 * cache (lookups() compares them rule by rule).
 */
static void test_every_flip(void **state)
{
	const char *path = data_path("dwarf-frames");
	uint8_t *good, *buf;
	size_t len;
	uint64_t lo, hi, step;

	(void)state;
	rm_cache();
	text_range(path, &lo, &hi);
	/* Each row met a few times, not every address (a run per byte). */
	step = (hi - lo) / 400 + 1;
	lookups(path, step, 0);
	len = slurp(cache_path(FRAMES_ID), &good);
	buf = malloc(len);
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++) {
		memcpy(buf, good, len);
		buf[i] ^= (uint8_t)(1u << (i % 8));
		spill(cache_path(FRAMES_ID), buf, len);
		lookups(path, step, i % step);
	}
	free(buf);
	free(good);
}

/* A FIFO where the rows should be: ignored at once, no hang (alarm), and replaced. */
static void test_fifo(void **state)
{
	const char *path = data_path("dwarf-frames");
	struct run cold, after;
	struct stat st;

	(void)state;
	rm_cache();
	cold = lookups(path, 1, 0);
	assert_int_equal(unlink(cache_path(FRAMES_ID)), 0);
	assert_int_equal(mkfifo(cache_path(FRAMES_ID), 0600), 0);
	alarm(30);
	after = lookups(path, 1, 0);
	alarm(0);
	assert_int_equal(after.cached_rows, 0);
	assert_int_equal(after.made, cold.made);
	/* Rewritten as a file (renamed over the FIFO, never written into it). */
	assert_int_equal(lstat(cache_path(FRAMES_ID), &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

/* Another module's cache, under this one's build id: ignored. */
static void test_other_module(void **state)
{
	const char *frames = data_path("dwarf-frames");
	struct run cold, other;
	uint64_t lo, hi;
	char cmd[3 * PATH_MAX];

	(void)state;
	if (access(LIBC, R_OK) < 0)
		fail_msg("no libc at %s", LIBC);
	rm_cache();
	cold = lookups(frames, 1, 0);
	text_range(LIBC, &lo, &hi);
	lookups(LIBC, (hi - lo) / 2000 + 1, 0);
	/* libc's file in place of dwarf-frames'. */
	{
		DIR *d = opendir(cache_dir);
		struct dirent *e;
		char *libc_file = NULL;

		assert_non_null(d);
		closedir(d);
		snprintf(cmd, sizeof(cmd), "%s/microscope/cfi", cache_dir);
		d = opendir(cmd);
		assert_non_null(d);
		while ((e = readdir(d)))
			if (strstr(e->d_name, ".rows") && strncmp(e->d_name, FRAMES_ID, 40))
				libc_file = strdup(e->d_name);
		closedir(d);
		assert_non_null(libc_file);
		snprintf(cmd, sizeof(cmd), "cp '%s/microscope/cfi/%s' '%s'", cache_dir, libc_file,
			 cache_path(FRAMES_ID));
		free(libc_file);
		assert_int_equal(system(cmd), 0);
	}
	other = lookups(frames, 1, 0);
	assert_int_equal(other.cached_rows, 0);
	assert_int_equal(other.made, cold.made);
}

/* No cache directory: exactly as without a cache, and nothing written. */
static void test_no_cache_dir(void **state)
{
	const char *path = data_path("dwarf-frames");
	char cwd[PATH_MAX], *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	struct run a, b;
	struct stat st;

	(void)state;
	rm_cache();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(cache_dir), 0);
	/* A relative XDG_CACHE_HOME and no HOME: no cache (the XDG rule). */
	setenv("XDG_CACHE_HOME", "rel", 1);
	unsetenv("HOME");
	a = lookups(path, 1, 0);
	b = lookups(path, 1, 0);
	assert_int_equal(a.cached_rows, 0);
	assert_int_equal(b.cached_rows, 0);
	assert_int_equal(a.made, b.made);
	assert_true(stat("rel", &st) < 0);
	assert_true(stat("microscope", &st) < 0);
	assert_int_equal(chdir(cwd), 0);
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	if (home) {
		setenv("HOME", home, 1);
		free(home);
	}
	assert_true(stat(cache_path(FRAMES_ID), &st) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_every_flip),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_other_module),
		cmocka_unit_test(test_no_cache_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
