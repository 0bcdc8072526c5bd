/*
 * Unit tests of the perf map reader (jit/perfmap.h, perfmapread.h) and the
 * read throttle (jit/throttle.h): hand-written maps in the forms CPython
 * 3.12 -X perf and node --perf-basic-prof write, a real map recorded from
 * python3.12 (tests/unit/data/perf-python312.map), lines split across
 * feeds at every byte, bad lines of every kind, replacement, mappings that
 * end functions, the bounds, and the index against a brute-force answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit/perfmap.h"
#include "jit/perfmapread.h"
#include "jit/throttle.h"
#include "util/error.h"

#define MIB (1ull << 20)

static struct ms_perfmap *new_map(void)
{
	struct ms_perfmap *t = malloc(sizeof(*t));

	assert_non_null(t);
	ms_perfmap_init(t);
	return t;
}

static void free_map(struct ms_perfmap *t)
{
	ms_perfmap_release(t);
	free(t);
}

static void feed(struct ms_perfmap *t, const char *s)
{
	assert_int_equal(ms_perfmap_feed(t, s, strlen(s)), 0);
	assert_int_equal(ms_perfmap_index(t), 0);
}

static const char *name_at(const struct ms_perfmap *t, uint64_t addr)
{
	const struct ms_perfmap_func *f = ms_perfmap_find(t, addr);

	return f ? f->name : NULL;
}

/* CPython 3.12's lines: 11-byte trampolines, names with ':' and '<'. */
static void test_python_lines(void **state)
{
	struct ms_perfmap *t = new_map();

	(void)state;
	feed(t, "7f3c2a1b4000 b py::func:/path/file.py\n"
		"7f3c2a1b400b b py::<module>:<frozen importlib._bootstrap>\n");
	assert_int_equal(t->n, 2);
	assert_int_equal(t->funcs[0].start, 0x7f3c2a1b4000ull);
	assert_int_equal(t->funcs[0].end, 0x7f3c2a1b400bull);
	assert_int_equal(t->funcs[1].line, 2);
	assert_string_equal(name_at(t, 0x7f3c2a1b4000ull), "py::func:/path/file.py");
	assert_string_equal(name_at(t, 0x7f3c2a1b400aull), "py::func:/path/file.py");
	assert_string_equal(name_at(t, 0x7f3c2a1b400bull),
			    "py::<module>:<frozen importlib._bootstrap>");
	assert_null(name_at(t, 0x7f3c2a1b4016ull));
	assert_null(name_at(t, 0x7f3c2a1b3fffull));
	assert_int_equal(t->c.malformed, 0);
	assert_int_equal(t->consumed, t->parsed);
	free_map(t);
}

/* node's: spaces in names, 0x prefixes, upper-case hex and tabs taken too. */
static void test_node_lines(void **state)
{
	struct ms_perfmap *t = new_map();

	(void)state;
	feed(t, "7fd478005900 220 JS:*hot [eval]:1:13\n"
		"0x105da0f85d96 0x18 JS:~get href node:internal/url:925:11\n"
		"0X1000\t0A0   LazyCompile:  two  spaces  \n");
	assert_int_equal(t->n, 3);
	assert_string_equal(name_at(t, 0x7fd478005b1full), "JS:*hot [eval]:1:13");
	assert_null(name_at(t, 0x7fd478005b20ull));
	assert_string_equal(name_at(t, 0x105da0f85d96ull + 0x17),
			    "JS:~get href node:internal/url:925:11");
	/* The name is the rest of the line: its own spaces kept, trailing ones too. */
	assert_string_equal(name_at(t, 0x109f), "LazyCompile:  two  spaces  ");
	assert_int_equal(t->c.malformed, 0);
	free_map(t);
}

static void test_real_python312_map(void **state)
{
	struct ms_perfmap *t = new_map();
	struct ms_perfmap_readres r;
	int fd = open(MS_SRCDIR "/tests/unit/data/perf-python312.map", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ms_perfmap_read(t, fd, "perf-python312.map", &r), 0);
	close(fd);
	assert_int_equal(r.funcs, 36);
	assert_false(r.bounded);
	assert_int_equal(r.bytes, 2494);
	assert_int_equal(t->c.lines, 36);
	assert_int_equal(t->c.malformed + t->c.replaced + t->c.names_cut, 0);
	assert_string_equal(name_at(t, 0x7fca344b6000ull),
			    "py::_find_and_load:<frozen importlib._bootstrap>");
	assert_string_equal(name_at(t, 0x7fca344b67bcull + 10), "py::fib:<string>");
	assert_string_equal(name_at(t, 0x7fca344b67b1ull), "py::K.meth:<string>");
	assert_null(name_at(t, 0x7fca344b67bcull + 11));
	/* Interned: the two lines of one name share its copy. */
	for (uint32_t i = 0; i < t->n; i++)
		for (uint32_t j = i + 1; j < t->n; j++)
			if (strcmp(t->funcs[i].name, t->funcs[j].name) == 0)
				assert_ptr_equal(t->funcs[i].name, t->funcs[j].name);
	assert_true(t->n_names <= t->n);
	free_map(t);
}

/* Everything a table says, to compare two. */
static void assert_same(const struct ms_perfmap *a, const struct ms_perfmap *b)
{
	assert_int_equal(a->n, b->n);
	assert_memory_equal(&a->c, &b->c, sizeof(a->c));
	assert_int_equal(a->consumed, b->consumed);
	assert_int_equal(a->parsed, b->parsed);
	assert_int_equal(a->carry_len, b->carry_len);
	for (uint32_t i = 0; i < a->n; i++) {
		assert_int_equal(a->funcs[i].start, b->funcs[i].start);
		assert_int_equal(a->funcs[i].end, b->funcs[i].end);
		assert_int_equal(a->funcs[i].line, b->funcs[i].line);
		assert_int_equal(a->funcs[i].flags, b->funcs[i].flags);
		assert_string_equal(a->funcs[i].name, b->funcs[i].name);
	}
}

/* A map with every kind of line, whole and cut at every byte. */
static const char mixed[] =
	"1000 10 a b c\n"
	"garbage\n"
	"\r\n"
	"1008 10 over a\r\n"
	"2000 0 zero\n"
	"ffffffffffffff00 100 wraps\n"
	"ffffffffffffff00 ff last\n"
	"0x3000 0x8 py::f:x.py\n"
	"3000 8\n"
	"12345678901234567 1 too wide\n"
	"4000 1 tail";

static void test_split_at_every_byte(void **state)
{
	size_t len = strlen(mixed);
	struct ms_perfmap *whole = new_map(), *t;

	(void)state;
	feed(whole, mixed);
	assert_int_equal(whole->n, 4);
	assert_int_equal(whole->c.lines, 10);	/* the unended last is kept */
	assert_int_equal(whole->c.malformed, 6);
	assert_int_equal(whole->carry_len, strlen("4000 1 tail"));
	assert_int_equal(whole->parsed, len - strlen("4000 1 tail"));
	assert_int_equal(whole->consumed, len);
	assert_string_equal(whole->funcs[1].name, "over a");	/* CRLF: no \r */
	assert_int_equal(whole->funcs[2].end, UINT64_MAX);
	for (size_t cut = 0; cut <= len; cut++) {
		t = new_map();
		assert_int_equal(ms_perfmap_feed(t, mixed, cut), 0);
		assert_int_equal(ms_perfmap_index(t), 0);
		assert_int_equal(ms_perfmap_feed(t, mixed + cut, len - cut), 0);
		assert_int_equal(ms_perfmap_index(t), 0);
		assert_same(whole, t);
		free_map(t);
	}
	/* One byte a feed. */
	t = new_map();
	for (size_t i = 0; i < len; i++)
		assert_int_equal(ms_perfmap_feed(t, mixed + i, 1), 0);
	assert_int_equal(ms_perfmap_index(t), 0);
	assert_same(whole, t);
	/* The last line's newline completes it. */
	feed(t, "\n");
	assert_int_equal(t->n, 5);
	assert_string_equal(name_at(t, 0x4000), "tail");
	free_map(t);
	free_map(whole);
}

/* A line over the maximum is skipped to its newline, whole or in pieces. */
static void test_line_over_max(void **state)
{
	size_t n = MS_PERFMAP_LINE_MAX + 200;
	char *s = malloc(n + 64), *name;
	struct ms_perfmap *t;

	(void)state;
	assert_non_null(s);
	/* A line of exactly the maximum is taken, its name cut. */
	memcpy(s, "5000 10 ", 8);
	memset(s + 8, 'n', MS_PERFMAP_LINE_MAX - 8);
	memcpy(s + MS_PERFMAP_LINE_MAX, "\n", 2);
	t = new_map();
	feed(t, s);
	assert_int_equal(t->n, 1);
	assert_int_equal(strlen(t->funcs[0].name), MS_PERFMAP_NAME_MAX);
	assert_int_equal(t->c.names_cut, 1);
	free_map(t);
	/* One more byte, then a good line: one malformed, too long; the next read. */
	memset(s + 8, 'n', MS_PERFMAP_LINE_MAX - 7);
	memcpy(s + MS_PERFMAP_LINE_MAX + 1, "\n6000 1 next\n", 14);
	for (size_t step = 1; step <= 4096 * 2; step *= 4) {
		size_t len = strlen(s);

		t = new_map();
		for (size_t o = 0; o < len; o += step)
			assert_int_equal(ms_perfmap_feed(t, s + o, o + step > len ? len - o : step), 0);
		assert_int_equal(ms_perfmap_index(t), 0);
		assert_int_equal(t->c.malformed, 1);
		assert_int_equal(t->c.too_long, 1);
		assert_int_equal(t->c.lines, 2);
		assert_int_equal(t->n, 1);
		assert_string_equal(name_at(t, 0x6000), "next");
		assert_int_equal(t->funcs[0].line, 2);
		free_map(t);
	}
	/* A name cut at the maximum keeps whole UTF-8 characters. */
	memcpy(s, "7000 1 ", 7);
	name = s + 7;
	memset(name, 'x', MS_PERFMAP_NAME_MAX - 1);
	memcpy(name + MS_PERFMAP_NAME_MAX - 1, "\xc3\xa9tail\n", 8);
	t = new_map();
	feed(t, s);
	assert_int_equal(strlen(t->funcs[0].name), MS_PERFMAP_NAME_MAX - 1);
	free_map(t);
	free(s);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"hello\n", "\n", "\r\n", "1000\n", "1000 \n", "1000 10\n", "1000 10 \n",
		"1000 10 \r\n", "x1000 10 a\n", "1000 1g a\n", "1000 0 zero\n", "0x 10 a\n",
		"1000 0x a\n", "10000000000000000 1 a\n", "1 10000000000000000 a\n",
		"ffffffffffffffff 1 wraps\n", "8000000000000000 8000000000000000 wraps\n",
		" 1000 10 lead\n", "1000-10 a\n",
	};
	struct ms_perfmap *t = new_map();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		feed(t, bad[i]);
	/* A NUL in a name. */
	assert_int_equal(ms_perfmap_feed(t, "1000 10 a\0b\n", 12), 0);
	assert_int_equal(ms_perfmap_index(t), 0);
	assert_int_equal(t->n, 0);
	assert_int_equal(t->c.malformed, sizeof(bad) / sizeof(*bad) + 1);
	assert_int_equal(t->c.lines, t->c.malformed);
	assert_int_equal(t->c.too_long, 0);
	assert_null(ms_perfmap_find(t, 0x1000));
	/* The largest range that does not wrap is taken. */
	feed(t, "ffffffffffffff00 ff top\n0000000000000001 1 leading zeros\n");
	assert_int_equal(t->n, 2);
	assert_string_equal(name_at(t, UINT64_MAX - 1), "top");
	assert_null(name_at(t, UINT64_MAX));
	assert_string_equal(name_at(t, 1), "leading zeros");
	free_map(t);
}

static void test_replacement(void **state)
{
	struct ms_perfmap *t = new_map();

	(void)state;
	/* In one batch. */
	feed(t, "1000 1000 A\n1800 100 B\n");
	assert_string_equal(name_at(t, 0x17ff), "A");
	assert_string_equal(name_at(t, 0x1800), "B");
	assert_string_equal(name_at(t, 0x18ff), "B");
	assert_string_equal(name_at(t, 0x1900), "A");
	assert_string_equal(name_at(t, 0x1fff), "A");
	assert_int_equal(t->c.replaced, 1);
	assert_true(t->funcs[0].flags & MS_PERFMAP_REPLACED);
	assert_false(t->funcs[1].flags & MS_PERFMAP_REPLACED);
	/* A later batch over both, and one inside that. */
	feed(t, "1850 800 C\n1f00 10 D\n");
	assert_string_equal(name_at(t, 0x184f), "B");
	assert_string_equal(name_at(t, 0x1850), "C");
	assert_string_equal(name_at(t, 0x1eff), "C");
	assert_string_equal(name_at(t, 0x1f00), "D");
	assert_string_equal(name_at(t, 0x1f10), "C");
	assert_null(name_at(t, 0x2050));
	assert_int_equal(t->c.replaced, 3);	/* A (once), B, C */
	/* An earlier line never takes back what a later one holds. */
	feed(t, "1000 2000 E\n");
	assert_string_equal(name_at(t, 0x2fff), "E");
	feed(t, "1900 10 F\n");
	assert_string_equal(name_at(t, 0x1905), "F");
	assert_string_equal(name_at(t, 0x1915), "E");
	assert_int_equal(t->c.replaced, 5);	/* and D, E */
	free_map(t);
}

static void test_unmap(void **state)
{
	struct ms_perfmap *t = new_map();

	(void)state;
	feed(t, "1000 100 A\n2000 100 B\n2800 100 C\n");
	assert_int_equal(ms_perfmap_unmap(t, 0x2000, 0x2900), 0);
	assert_int_equal(t->c.ended, 2);
	assert_string_equal(name_at(t, 0x1050), "A");
	assert_null(name_at(t, 0x2050));
	assert_null(name_at(t, 0x2850));
	assert_true(t->funcs[1].flags & MS_PERFMAP_ENDED);
	assert_false(t->funcs[0].flags & MS_PERFMAP_ENDED);
	/* A line read after names the new code; the ended function stays gone. */
	feed(t, "2000 80 D\n");
	assert_string_equal(name_at(t, 0x2050), "D");
	assert_null(name_at(t, 0x2090));
	/* The ended functions' ranges left the index; an ended one is not replaced. */
	assert_int_equal(t->n_seg, 2);
	assert_int_equal(t->c.replaced, 0);
	/* A function only partly under the mapping ends whole. */
	assert_int_equal(ms_perfmap_unmap(t, 0x10ff, 0x1100), 0);
	assert_null(name_at(t, 0x1000));
	assert_int_equal(t->c.ended, 3);
	/* Fed but not indexed yet: still read before the mapping, so ended. */
	assert_int_equal(ms_perfmap_feed(t, "5000 100 E\n", 11), 0);
	assert_int_equal(ms_perfmap_unmap(t, 0x5000, 0x6000), 0);
	assert_null(name_at(t, 0x5000));
	feed(t, "5000 100 F\n");
	assert_string_equal(name_at(t, 0x5000), "F");
	/* A mapping over nothing, or empty, ends nothing. */
	assert_int_equal(ms_perfmap_unmap(t, 0x9000, 0xa000), 0);
	assert_int_equal(ms_perfmap_unmap(t, 0x5000, 0x5000), 0);
	assert_int_equal(t->c.ended, 4);
	/* An older function hidden under the one ended does not come back. */
	feed(t, "10000 100 G\n10040 20 H\n");
	assert_int_equal(ms_perfmap_unmap(t, 0x10045, 0x10050), 0);
	assert_null(name_at(t, 0x10045));
	assert_null(name_at(t, 0x10041));
	assert_string_equal(name_at(t, 0x10010), "G");
	assert_string_equal(name_at(t, 0x10070), "G");
	assert_int_equal(t->c.ended, 5);
	free_map(t);
}

static void test_code_budget(void **state)
{
	struct ms_perfmap *t = new_map();
	char s[256];

	(void)state;
	snprintf(s, sizeof(s),
		 "10000000 %llx A\n20000000 %llx B\n30000000 %llx C\n40000000 %llx D\n"
		 "50000000 1 E\n60000000 1 F\n",
		 40 * MIB, 30 * MIB, 20 * MIB, 4 * MIB);
	feed(t, s);
	assert_int_equal(ms_perfmap_unmap(t, 0x60000000, 0x60000001), 0);	/* F ended */
	/* Asked out of order: the budget still goes in line order. */
	assert_false(ms_perfmap_code_fits(t, 4));	/* E: 64 MiB already given */
	assert_true(ms_perfmap_code_fits(t, 0));
	assert_false(ms_perfmap_code_fits(t, 1));	/* B does not fit, takes nothing */
	assert_true(ms_perfmap_code_fits(t, 2));	/* so C does */
	assert_true(ms_perfmap_code_fits(t, 3));
	assert_false(ms_perfmap_code_fits(t, 5));	/* ended: no code, not counted */
	assert_false(ms_perfmap_code_fits(t, 6));	/* no such function */
	assert_int_equal(t->c.code_bytes, MS_PERFMAP_CODE_MAX);
	assert_int_equal(t->c.no_code, 2);
	assert_true(t->funcs[1].flags & MS_PERFMAP_NO_CODE);
	assert_true(t->funcs[4].flags & MS_PERFMAP_NO_CODE);
	assert_false(t->funcs[3].flags & MS_PERFMAP_NO_CODE);
	/* Answers never change. */
	assert_true(ms_perfmap_code_fits(t, 0));
	assert_false(ms_perfmap_code_fits(t, 1));
	assert_int_equal(t->c.no_code, 2);
	free_map(t);
}

/* At most MS_PERFMAP_FUNCS_MAX functions; later good lines are counted. */
static void test_funcs_max(void **state)
{
	size_t cap = (MS_PERFMAP_FUNCS_MAX + 5) * 16ull, len = 0;
	char *s = malloc(cap);
	struct ms_perfmap *t = new_map();

	(void)state;
	assert_non_null(s);
	for (uint32_t i = 0; i < MS_PERFMAP_FUNCS_MAX + 5; i++)
		len += (size_t)snprintf(s + len, cap - len, "%x 4 f\n", 0x100000 + 4 * i);
	assert_int_equal(ms_perfmap_feed(t, s, len), 0);
	assert_int_equal(ms_perfmap_index(t), 0);
	assert_int_equal(t->n, MS_PERFMAP_FUNCS_MAX);
	assert_int_equal(t->c.over_max, 5);
	assert_int_equal(t->c.malformed, 0);
	assert_int_equal(t->n_names, 1);
	assert_non_null(ms_perfmap_find(t, 0x100000 + 4ull * (MS_PERFMAP_FUNCS_MAX - 1)));
	assert_null(ms_perfmap_find(t, 0x100000 + 4ull * MS_PERFMAP_FUNCS_MAX));
	free_map(t);
	free(s);
}

/* The reader: appends are read on, an incomplete line waits, reads are bounded. */
static void test_read_appended(void **state)
{
	char path[] = "/tmp/ms-perfmap-test.XXXXXX";
	int fd = mkstemp(path);
	struct ms_perfmap *t = new_map();
	struct ms_perfmap_readres r;
	char line[128];
	uint64_t total = 0;
	uint32_t lines = 0;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "1000 10 a\n2000 10 hal", 21), 21);
	assert_int_equal(ms_perfmap_read(t, fd, path, &r), 0);
	assert_int_equal(r.funcs, 1);
	assert_int_equal(r.bytes, 21);
	assert_null(name_at(t, 0x2000));
	assert_int_equal(ms_perfmap_read(t, fd, path, &r), 0);
	assert_int_equal(r.funcs + r.bytes, 0);
	assert_int_equal(write(fd, "f\n", 2), 2);
	assert_int_equal(ms_perfmap_read(t, fd, path, &r), 0);
	assert_int_equal(r.funcs, 1);
	assert_string_equal(name_at(t, 0x2000), "half");
	/* Over 16 MiB: the first read stops there, the next goes on. */
	memset(line, 'n', sizeof(line));
	while (total < MS_PERFMAP_READ_MAX + 4096) {
		int n = snprintf(line, sizeof(line), "%x 1 %0100u\n", 0x100000 + lines, lines);

		assert_int_equal(write(fd, line, (size_t)n), n);
		total += (uint64_t)n;
		lines++;
	}
	assert_int_equal(ms_perfmap_read(t, fd, path, &r), 0);
	assert_true(r.bounded);
	assert_int_equal(r.bytes, MS_PERFMAP_READ_MAX);
	assert_true(r.funcs < lines);
	assert_int_equal(ms_perfmap_read(t, fd, path, &r), 0);
	assert_false(r.bounded);
	assert_int_equal(t->n, lines + 2);
	assert_int_equal(t->c.malformed, 0);
	/* A bad descriptor fails with a message. */
	assert_int_equal(ms_perfmap_read(t, -1, path, &r), -1);
	close(fd);
	free_map(t);
}

static void test_stale(void **state)
{
	const uint64_t ms = 1000000, start = 1000000 * ms;

	(void)state;
	assert_true(ms_perfmap_stale(start - 50 * ms, start, 20 * ms));
	assert_false(ms_perfmap_stale(start - 20 * ms, start, 20 * ms));
	assert_false(ms_perfmap_stale(start - 5 * ms, start, 20 * ms));
	assert_false(ms_perfmap_stale(start, start, 0));
	assert_false(ms_perfmap_stale(start + 1, start, 0));
	assert_true(ms_perfmap_stale(start - 1, start, 0));
	assert_false(ms_perfmap_stale(0, 5, UINT64_MAX));
	assert_true(ms_perfmap_stale(0, UINT64_MAX, UINT64_MAX - 1));
}

static void test_throttle(void **state)
{
	struct ms_jit_throttle th = { 0 };
	const uint64_t ms = 1000000;

	(void)state;
	assert_true(ms_jit_read_due(&th, 5 * ms, false));
	ms_jit_read_done(&th, 5 * ms, false);
	assert_false(ms_jit_read_due(&th, 5 * ms, false));
	assert_false(ms_jit_read_due(&th, 24 * ms, false));
	assert_false(ms_jit_read_due(&th, 25 * ms - 1, false));
	assert_true(ms_jit_read_due(&th, 25 * ms, false));
	assert_true(ms_jit_read_due(&th, 6 * ms, true));
	assert_false(ms_jit_read_due(&th, 4 * ms, false));	/* earlier: still waits */
	ms_jit_read_done(&th, 30 * ms, true);
	assert_true(ms_jit_read_due(&th, 30 * ms, false));
}

/* The index against a brute-force answer over random lines and mappings. */
struct ref {
	uint64_t start[256], end[256];
	bool ended[256];
	uint32_t n;
};

static int ref_winner(const struct ref *r, uint64_t a)
{
	for (int i = (int)r->n - 1; i >= 0; i--)
		if (r->start[i] <= a && a < r->end[i])
			return i;
	return -1;
}

static void ref_unmap(struct ref *r, uint64_t s, uint64_t e)
{
	int w[512], nw = 0;

	if (s >= e)
		return;
	/* The winners at s and at every range edge inside (s, e). */
	w[nw++] = ref_winner(r, s);
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->start[i] > s && r->start[i] < e)
			w[nw++] = ref_winner(r, r->start[i]);
		if (r->end[i] > s && r->end[i] < e)
			w[nw++] = ref_winner(r, r->end[i]);
	}
	for (int i = 0; i < nw; i++)
		if (w[i] >= 0)
			r->ended[w[i]] = true;
}

static void test_against_brute_force(void **state)
{
	(void)state;
	srandom(19);
	for (int round = 0; round < 200; round++) {
		struct ms_perfmap *t = new_map();
		struct ref r = { .n = 0 };
		uint64_t space = 64 + (uint64_t)(random() % 4096);

		while (r.n < 256) {
			int op = (int)(random() % 10);

			if (op < 7) {
				uint64_t s = (uint64_t)random() % space, len = 1 + (uint64_t)random() % 64;
				char line[64];

				snprintf(line, sizeof(line), "%llx %llx f%u\n", (unsigned long long)s,
					 (unsigned long long)len, r.n);
				assert_int_equal(ms_perfmap_feed(t, line, strlen(line)), 0);
				r.start[r.n] = s;
				r.end[r.n] = s + len;
				r.ended[r.n++] = false;
			} else if (op < 9) {
				assert_int_equal(ms_perfmap_index(t), 0);
			} else {
				uint64_t s = (uint64_t)random() % space, e = s + (uint64_t)random() % 32;

				assert_int_equal(ms_perfmap_unmap(t, s, e), 0);
				ref_unmap(&r, s, e);
			}
			if (random() % 8 == 0) {
				assert_int_equal(ms_perfmap_index(t), 0);
				for (uint64_t a = 0; a < space + 64; a++) {
					int w = ref_winner(&r, a);
					const struct ms_perfmap_func *f = ms_perfmap_find(t, a);

					const struct ms_perfmap_func *want =
						w < 0 || r.ended[w] ? NULL : &t->funcs[w];

					if (f != want)
						fail_msg("round %d, address %#llx: function %ld, not %ld",
							 round, (unsigned long long)a,
							 f ? (long)(f - t->funcs) : -1L,
							 want ? (long)w : -1L);
				}
				for (uint32_t i = 0; i < r.n; i++)
					assert_int_equal(!!(t->funcs[i].flags & MS_PERFMAP_ENDED),
							 r.ended[i]);
			}
		}
		free_map(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_lines),
		cmocka_unit_test(test_node_lines),
		cmocka_unit_test(test_real_python312_map),
		cmocka_unit_test(test_split_at_every_byte),
		cmocka_unit_test(test_line_over_max),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_replacement),
		cmocka_unit_test(test_unmap),
		cmocka_unit_test(test_code_budget),
		cmocka_unit_test(test_funcs_max),
		cmocka_unit_test(test_read_appended),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_throttle),
		cmocka_unit_test(test_against_brute_force),
	};

	ms_set_progname("perfmap-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
