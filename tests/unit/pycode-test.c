/*
 * Python code objects and interpreted frame keys (libcommon/python/pycode.h):
 * lines from real locations tables (Shape.area below, compiled by pyenv's
 * CPython 3.11.7 and 3.12.1 at /srv/app/shapes.py; the expected line of
 * each code unit is its co_lines()), keys dense from 1 over (file,
 * qualname, line, first line), unknown and line-less codes, the first
 * record standing, processes apart, and the FRAME record of a key.
 *
 *     class Shape:                       # line 2
 *         def area(self, n):             # 3
 *             total = 0                  # 4
 *             for i in range(n):         # 5
 *                 if i % 3:              # 6
 *                     total += i * 2     # 7
 *                 else:                  # 8
 *                     total -= 1         # 9
 *             return total               # 10
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "python/pycode.h"

/* 3.11.7: Shape.area's co_linetable (first line 3) and the line of each code unit, from co_lines() */
static const uint8_t lt311[] = {0x80, 0x00, 0xd8, 0x10, 0x11, 0x88, 0x05, 0xdd, 0x11, 0x16, 0x90, 0x71, 0x91, 0x18, 0x94, 0x18, 0xf0, 0x00, 0x04, 0x09, 0x1b, 0xf0, 0x00, 0x04, 0x09, 0x1b, 0x88, 0x41, 0xd8, 0x0f, 0x10, 0x90, 0x31, 0x89, 0x75, 0xf0, 0x00, 0x03, 0x0d, 0x1b, 0xd8, 0x10, 0x15, 0x98, 0x11, 0x98, 0x51, 0x99, 0x15, 0x91, 0x0e, 0x90, 0x05, 0x90, 0x05, 0xe0, 0x10, 0x15, 0x98, 0x11, 0x91, 0x0a, 0x90, 0x05, 0x90, 0x05, 0xd8, 0x0f, 0x14, 0x88, 0x0c};
static const int lt311_lines[] = {3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 9, 9, 9, 9, 9, 9, 10, 10};
/* 3.12.1: Shape.area's co_linetable (first line 3) and the line of each code unit, from co_lines() */
static const uint8_t lt312[] = {0x80, 0x00, 0xd8, 0x10, 0x11, 0x88, 0x05, 0xdc, 0x11, 0x16, 0x90, 0x71, 0x93, 0x18, 0xf2, 0x00, 0x04, 0x09, 0x1b, 0x88, 0x41, 0xd8, 0x0f, 0x10, 0x90, 0x31, 0x8a, 0x75, 0xd8, 0x10, 0x15, 0x98, 0x11, 0x98, 0x51, 0x99, 0x15, 0x91, 0x0e, 0x91, 0x05, 0xe0, 0x10, 0x15, 0x98, 0x11, 0x91, 0x0a, 0x91, 0x05, 0xf0, 0x09, 0x04, 0x09, 0x1b, 0xf0, 0x0a, 0x00, 0x10, 0x15, 0x88, 0x0c};
static const int lt312_lines[] = {3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 9, 9, 9, 9, 9, 9, 5, 10, 10};

#define CODE 0x7f0000001000ull
#define STAMP 0x7f0000009000ull
#define START (CODE + 0xc0)
#define FILE_ "/srv/app/shapes.py"

static struct ms_py_code code_rec(uint32_t pid, uint64_t code, uint64_t stamp, uint32_t status,
				  const char *qual, uint32_t first, const uint8_t *lt, size_t len)
{
	return (struct ms_py_code){
		.pid = pid, .time = 5, .code = code, .stamp = stamp, .status = status,
		.qualname = { qual, (uint32_t)strlen(qual) }, .file = { FILE_, sizeof(FILE_) - 1 },
		.firstlineno = first, .code_start = code + 0xc0, .linetable = lt,
		.linetable_len = (uint32_t)len,
	};
}

static uint64_t key(struct ms_pycode *t, uint32_t pid, uint64_t code, uint64_t stamp,
		    uint64_t instr, bool *is_new)
{
	uint64_t k = ms_pycode_key(t, pid, code, stamp, instr, is_new);

	assert_true(k >= 1);
	return k;
}

/* The line the FRAME record of k gives. */
static uint32_t line_of(struct ms_pycode *t, uint64_t k)
{
	static struct ms_frame f;

	assert_true(ms_pycode_frame(t, k, 3, &f));
	assert_int_equal(f.n_lines, 1);
	return f.lines[0].line;
}

/* Every code unit's instruction has its co_lines() line; one key per line. */
static void real_lines(const uint8_t *lt, size_t len, const int *lines, size_t n)
{
	struct ms_pycode *t = ms_pycode_new();
	struct ms_py_code c = code_rec(100, CODE, STAMP, MS_PY_CODE_OK, "Shape.area", 3, lt, len);
	uint64_t by_line[16] = { 0 }, max = 0;
	bool is_new;

	assert_int_equal(ms_pycode_add(t, &c), 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key(t, 100, CODE, STAMP, START + 2 * i, &is_new);

		assert_int_equal(line_of(t, k), lines[i]);
		/* a line's key is the same at every instruction of it, new only the first time */
		assert_int_equal(is_new, by_line[lines[i]] == 0);
		if (!by_line[lines[i]])
			by_line[lines[i]] = k;
		assert_int_equal(k, by_line[lines[i]]);
		/* dense from 1 */
		assert_true(k <= max + 1);
		max = k > max ? k : max;
	}
	/* lines 3, 4, 5, 6, 7, 9, 10 */
	assert_int_equal(max, 7);
	/* asked again: the cache answers, the same keys */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(key(t, 100, CODE, STAMP, START + 2 * i, &is_new), by_line[lines[i]]);
	assert_false(is_new);
	assert_int_equal(ms_pycode_stats(t)->cache_hits, n);
	assert_int_equal(ms_pycode_stats(t)->bad_lines, 0);
	ms_pycode_free(t);
}

static void lines_311(void **state)
{
	(void)state;
	real_lines(lt311, sizeof(lt311), lt311_lines, sizeof(lt311_lines) / sizeof(int));
}

static void lines_312(void **state)
{
	(void)state;
	real_lines(lt312, sizeof(lt312), lt312_lines, sizeof(lt312_lines) / sizeof(int));
}

/* The FRAME record: name, one line [qualname, "", file, line, first line], ok. */
static void frame_record(void **state)
{
	struct ms_pycode *t = ms_pycode_new();
	struct ms_py_code c = code_rec(100, CODE, STAMP, MS_PY_CODE_OK, "Shape.area", 3, lt312,
				       sizeof(lt312));
	static struct ms_frame f;
	bool is_new;
	uint64_t k;

	(void)state;
	assert_int_equal(ms_pycode_add(t, &c), 1);
	k = key(t, 100, CODE, STAMP, START + 2 * 22, &is_new);
	assert_true(is_new);
	assert_true(ms_pycode_frame(t, k, 9, &f));
	assert_int_equal(f.module, 9);
	assert_int_equal(f.address, k);
	assert_int_equal(f.reason, MS_SYM_OK);
	assert_int_equal(f.symbol_start, 0);
	assert_int_equal(f.name.len, 10);
	assert_memory_equal(f.name.ptr, "Shape.area", 10);
	assert_int_equal(f.n_lines, 1);
	assert_memory_equal(f.lines[0].function.ptr, "Shape.area", 10);
	assert_int_equal(f.lines[0].system_name.len, 0);
	assert_int_equal(f.lines[0].file.len, sizeof(FILE_) - 1);
	assert_memory_equal(f.lines[0].file.ptr, FILE_, sizeof(FILE_) - 1);
	assert_int_equal(f.lines[0].line, 7);
	assert_int_equal(f.lines[0].function_line, 3);
	/* a key never given out has no record */
	assert_false(ms_pycode_frame(t, k + 1, 9, &f));
	assert_false(ms_pycode_frame(t, 0, 9, &f));
	ms_pycode_free(t);
}

/*
 * Absent, unreadable and invalid codes share the one unknown key (no
 * symbol, no line); a no-lines code is named at line 0; an instruction
 * before the code is the first line; one past the table is line 0, counted.
 */
static void unknown_and_lineless(void **state)
{
	struct ms_pycode *t = ms_pycode_new();
	struct ms_py_code unr = code_rec(100, CODE + 0x100, STAMP, MS_PY_CODE_UNREADABLE, "", 0,
					 NULL, 0);
	struct ms_py_code inv = code_rec(100, CODE + 0x200, STAMP, MS_PY_CODE_INVALID, "", 0,
					 NULL, 0);
	struct ms_py_code nol = code_rec(100, CODE + 0x300, STAMP, MS_PY_CODE_NO_LINES, "big", 40,
					 NULL, 0);
	struct ms_py_code ok = code_rec(100, CODE, STAMP, MS_PY_CODE_OK, "Shape.area", 3, lt311,
					sizeof(lt311));
	static struct ms_frame f;
	bool is_new;
	uint64_t u;

	(void)state;
	assert_int_equal(ms_pycode_add(t, &unr), 1);
	assert_int_equal(ms_pycode_add(t, &inv), 1);
	assert_int_equal(ms_pycode_add(t, &nol), 1);
	assert_int_equal(ms_pycode_add(t, &ok), 1);
	u = key(t, 100, CODE + 0x100, STAMP, CODE + 0x1c0, &is_new);
	assert_true(is_new);
	assert_int_equal(key(t, 100, CODE + 0x200, STAMP, CODE + 0x2c0, &is_new), u);
	assert_false(is_new);
	/* a code no record named, and a known code under another stamp */
	assert_int_equal(key(t, 100, CODE + 0x900, STAMP, CODE + 0x9c0, &is_new), u);
	assert_int_equal(key(t, 100, CODE, STAMP + 8, START, &is_new), u);
	assert_int_equal(ms_pycode_stats(t)->unknown_frames, 4);
	assert_true(ms_pycode_frame(t, u, 1, &f));
	assert_int_equal(f.reason, MS_SYM_NO_SYMBOL);
	assert_int_equal(f.n_lines, 0);
	assert_int_equal(f.name.len, strlen(MS_PYCODE_UNKNOWN));
	assert_memory_equal(f.name.ptr, MS_PYCODE_UNKNOWN, f.name.len);

	assert_int_equal(line_of(t, key(t, 100, CODE + 0x300, STAMP, CODE + 0x3c8, &is_new)), 0);
	assert_true(ms_pycode_frame(t, key(t, 100, CODE + 0x300, STAMP, CODE + 0x3c8, &is_new), 1,
				    &f));
	assert_int_equal(f.reason, MS_SYM_OK);
	assert_int_equal(f.lines[0].function_line, 40);
	/* 3.11's prev_instr before the first instruction: the first line */
	assert_int_equal(line_of(t, key(t, 100, CODE, STAMP, START - 2, &is_new)), 3);
	assert_int_equal(ms_pycode_stats(t)->bad_lines, 0);
	assert_int_equal(line_of(t, key(t, 100, CODE, STAMP, START + 4096, &is_new)), 0);
	assert_int_equal(ms_pycode_stats(t)->bad_lines, 1);
	ms_pycode_free(t);
}

/*
 * The first record of (pid, code, stamp) stands; another process's code
 * at the same address is its own; one name with two first lines is two
 * functions; two codes of one function text share keys.
 */
static void identity(void **state)
{
	struct ms_pycode *t = ms_pycode_new();
	struct ms_py_code a = code_rec(100, CODE, STAMP, MS_PY_CODE_OK, "Shape.area", 3, lt312,
				       sizeof(lt312));
	struct ms_py_code again = code_rec(100, CODE, STAMP, MS_PY_CODE_OK, "other", 3, lt312,
					   sizeof(lt312));
	struct ms_py_code b = code_rec(200, CODE, STAMP, MS_PY_CODE_OK, "Shape.area", 30, lt312,
				       sizeof(lt312));
	struct ms_py_code copy = code_rec(100, CODE + 0x1000, STAMP + 0x1000, MS_PY_CODE_OK,
					  "Shape.area", 3, lt312, sizeof(lt312));
	static struct ms_frame f;
	bool is_new;
	uint64_t ka, kb;

	(void)state;
	assert_int_equal(ms_pycode_add(t, &a), 1);
	assert_int_equal(ms_pycode_add(t, &again), 0);
	assert_int_equal(ms_pycode_stats(t)->codes_again, 1);
	assert_int_equal(ms_pycode_add(t, &b), 1);
	assert_int_equal(ms_pycode_add(t, &copy), 1);
	ka = key(t, 100, CODE, STAMP, START, &is_new);
	assert_true(ms_pycode_frame(t, ka, 1, &f));
	assert_memory_equal(f.name.ptr, "Shape.area", 10);
	kb = key(t, 200, CODE, STAMP, START, &is_new);
	assert_true(is_new);
	assert_int_not_equal(ka, kb);
	assert_true(ms_pycode_frame(t, kb, 1, &f));
	assert_int_equal(f.lines[0].function_line, 30);
	assert_int_equal(key(t, 100, CODE + 0x1000, STAMP + 0x1000, CODE + 0x10c0, &is_new), ka);
	assert_false(is_new);
	/* line 0 both, first lines apart: two functions */
	{
		struct ms_py_code n1 = code_rec(100, CODE + 0x2000, STAMP, MS_PY_CODE_NO_LINES,
						"gen", 5, NULL, 0);
		struct ms_py_code n2 = code_rec(100, CODE + 0x3000, STAMP, MS_PY_CODE_NO_LINES,
						"gen", 50, NULL, 0);

		assert_int_equal(ms_pycode_add(t, &n1), 1);
		assert_int_equal(ms_pycode_add(t, &n2), 1);
		assert_int_not_equal(key(t, 100, CODE + 0x2000, STAMP, CODE + 0x20c0, &is_new),
				     key(t, 100, CODE + 0x3000, STAMP, CODE + 0x30c0, &is_new));
	}
	ms_pycode_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_311),
		cmocka_unit_test(lines_312),
		cmocka_unit_test(frame_record),
		cmocka_unit_test(unknown_and_lineless),
		cmocka_unit_test(identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
