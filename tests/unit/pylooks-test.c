/*
 * Unit tests of Python data in the capture (minor 7) and of the looks
 * (capture/look.h) over it: a hand-built capture with known truth, as
 * ms-unwind would splice it. The interpreter (module 0, every frame
 * flagged interpreter) runs two segments of Python (module 1, "[python]")
 * through two activations of its loop, the inner segment calling into a
 * C extension (module 2):
 *
 *   A: main Py_RunMain _PyEval [f a.py] builtin_map _PyEval [g a.py, h b.py] hash_update
 *   B: main Py_RunMain _PyEval [f b.py]          (another f, in another file)
 *   C: main hash_update, ended interpreted-unknown (no Python frames known)
 *
 * Each look's folded stacks, top and tree are checked exactly; then the
 * round trip through a dump, the keys by text, what an older reader
 * sees, the Python process rows in summary and problems, the refusals,
 * and pprof's functions and locations. With --write FILE it writes the
 * capture to FILE instead (tests/0915-python-looks.bats).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "analysis/analysis.h"
#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/convert.h"
#include "capture/format.h"
#include "capture/look.h"
#include "formats/formats.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#include "pycapture-build.h"

/* A sample of (pid, tid): (module, address, flags) innermost first. */
static void stack(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint32_t reason,
		  uint32_t n, ...)
{
	va_list ap;

	va_start(ap, n);
	stack_va(b, UINT32_MAX, tid, time, reason, n, ap);
	va_end(ap);
}

/*
 * The stream keys of the four interpreted texts: ms-unwind's numbering,
 * which the capture must not keep (keys[] permuted gives the same file).
 */
struct keys {
	uint64_t f_a, g_a, h_b, f_b;
};

static struct ms_capture *python_capture_keys(struct keys k, bool with_processes)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	assert_non_null(b);
	module(b, 0, MS_MODULE_FILE, S("/usr/bin/python3.11"));
	module(b, 1, MS_MODULE_INTERPRETED, S("[python]"));
	module(b, 2, MS_MODULE_FILE, S("/usr/lib/_hashlib.so"));
	native(b, 0, 0x100, S("main"));
	native(b, 0, 0x200, S("Py_RunMain"));
	native(b, 0, 0x300, S("_PyEval_EvalFrameDefault"));
	native(b, 0, 0x400, S("builtin_map"));
	native(b, 2, 0x10, S("hash_update"));
	py(b, k.f_a, S("f"), S("a.py"), 3, 1);
	py(b, k.g_a, S("g"), S("a.py"), 8, 6);
	py(b, k.h_b, S("h"), S("b.py"), 2, 1);
	py(b, k.f_b, S("f"), S("b.py"), 3, 1);	/* a.py's f's lines, another file */
	/* A, twice */
	for (uint64_t t = 1000; t <= 2000; t += 1000)
		stack(b, 100, t, MS_END_OUTERMOST, 9, 2u, (uint64_t)0x10, 0u, 1u, k.h_b, (uint32_t)NA,
		      1u, k.g_a, (uint32_t)NA, 0u, (uint64_t)0x300, (uint32_t)(I | R),
		      0u, (uint64_t)0x400, (uint32_t)(I | R), 1u, k.f_a, (uint32_t)NA,
		      0u, (uint64_t)0x300, (uint32_t)(I | R), 0u, (uint64_t)0x200, (uint32_t)(I | R),
		      0u, (uint64_t)0x100, (uint32_t)(I | R));
	/* B */
	stack(b, 100, 3000, MS_END_OUTERMOST, 4, 1u, k.f_b, (uint32_t)NA,
	      0u, (uint64_t)0x300, (uint32_t)I, 0u, (uint64_t)0x200, (uint32_t)(I | R),
	      0u, (uint64_t)0x100, (uint32_t)(I | R));
	/* C, another thread */
	stack(b, 101, 4000, MS_END_INTERPRETED_UNKNOWN, 2, 2u, (uint64_t)0x10, 0u,
	      0u, (uint64_t)0x100, (uint32_t)(I | R));
	if (with_processes) {
		struct ms_py_process p = { 100, 500, MS_PY_PROCESS_OK, 0x030b07f0, 2,
					   S("/usr/bin/python3.11"), S("bpf"), S("") };
		struct ms_py_process q = { 200, 600, MS_PY_PROCESS_UNSUPPORTED, 0x030a0cf0, 0,
					   S("/usr/bin/python3.10"), S("bpf"),
					   S("Python 3.10 is not supported: use 3.11 or later") };

		assert_int_equal(ms_capture_builder_py_process(b, &q), 0);
		assert_int_equal(ms_capture_builder_py_process(b, &p), 0);
		assert_int_equal(ms_capture_builder_py_process(b, &p), 0);	/* one row */
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static struct ms_capture *python_capture(void)
{
	return python_capture_keys((struct keys){ 7, 5, 9, 3 }, true);
}

static char *folded(const struct ms_capture *cap, enum ms_look look)
{
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;

	o.look = look;
	return CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_FOLDED, &o));
}

static char *view(const struct ms_capture *cap, enum ms_view v, enum ms_look look, bool json)
{
	struct ms_query q;
	struct ms_view_out o = { 0 };

	ms_query_init(&q, v);
	q.look = look;
	o.json = json;
	return CAPTURE_OUTPUT((o.f = out, ms_view_write(&o, cap, &q)));
}

/* Each look gives exactly its stacks. */
static void test_folded_looks(void **state)
{
	struct ms_capture *cap = python_capture();

	(void)state;
	assert_string_equal(folded(cap, MS_LOOK_MIXED),
			    "[truncated: interpreted-unknown];main;hash_update 1\n"
			    "main;Py_RunMain;_PyEval_EvalFrameDefault;f (a.py:1);builtin_map;"
			    "_PyEval_EvalFrameDefault;g (a.py:6);h (b.py:1);hash_update 2\n"
			    "main;Py_RunMain;_PyEval_EvalFrameDefault;f (b.py:1) 1\n");
	free(membuf);
	assert_string_equal(folded(cap, MS_LOOK_NATIVE),
			    "[truncated: interpreted-unknown];main;hash_update 1\n"
			    "main;Py_RunMain;_PyEval_EvalFrameDefault 1\n"
			    "main;Py_RunMain;_PyEval_EvalFrameDefault;builtin_map;"
			    "_PyEval_EvalFrameDefault;hash_update 2\n");
	free(membuf);
	assert_string_equal(folded(cap, MS_LOOK_PYTHON),
			    "[truncated: interpreted-unknown];main;hash_update 1\n"
			    "f (a.py:1);g (a.py:6);h (b.py:1);hash_update 2\n"
			    "f (b.py:1) 1\n");
	free(membuf);
	ms_capture_free(cap);
}

static void test_top_tree_looks(void **state)
{
	struct ms_capture *cap = python_capture();
	char *text;

	(void)state;
	text = view(cap, MS_VIEW_TOP, MS_LOOK_PYTHON, true);
	/* two functions named f, apart, each with its own file */
	assert_non_null(strstr(text, "\"look\":\"python\""));
	assert_non_null(strstr(text, "{\"name\":\"f\",\"module\":\"[python]\",\"file\":\"a.py\",\"line\":1,\"self\":0,\"self_percent\":0,\"total\":2,"));
	assert_non_null(strstr(text, "{\"name\":\"f\",\"module\":\"[python]\",\"file\":\"b.py\",\"line\":1,\"self\":1,\"self_percent\":25,\"total\":1,"));
	assert_null(strstr(text, "_PyEval_EvalFrameDefault"));
	assert_null(strstr(text, "builtin_map"));
	free(text);
	text = view(cap, MS_VIEW_TOP, MS_LOOK_NATIVE, true);
	assert_non_null(strstr(text, "\"look\":\"native\""));
	assert_null(strstr(text, "[python]"));
	assert_non_null(strstr(text, "{\"name\":\"_PyEval_EvalFrameDefault\",\"module\":\"python3.11\",\"file\":\"\",\"line\":0,\"self\":1,\"self_percent\":25,\"total\":3,"));
	free(text);
	text = view(cap, MS_VIEW_TREE, MS_LOOK_PYTHON, false);
	assert_string_equal(text,
			    "4 samples\n"
			    "total%   self%  total  self  function\n"
			    "100.0%    0.0%      4     0  [root]\n"
			    " 50.0%    0.0%      2     0    f (a.py:1, [python])\n"
			    " 50.0%    0.0%      2     0      g (a.py:6, [python])\n"
			    " 50.0%    0.0%      2     0        h (b.py:1, [python])\n"
			    " 50.0%   50.0%      2     2          hash_update (_hashlib.so)\n"
			    " 25.0%    0.0%      1     0    [truncated: interpreted-unknown]\n"
			    " 25.0%    0.0%      1     0      main (python3.11)\n"
			    " 25.0%   25.0%      1     1        hash_update (_hashlib.so)\n"
			    " 25.0%   25.0%      1     1    f (b.py:1, [python])\n");
	free(text);
	ms_capture_free(cap);
}

/* Keys are the text's: any numbering of the stream gives the same bytes, dense from 1. */
static void test_keys_by_text(void **state)
{
	struct ms_capture *a = python_capture_keys((struct keys){ 7, 5, 9, 3 }, false);
	struct ms_capture *b = python_capture_keys((struct keys){ 1, 2, 3, 4 }, false);
	unsigned char *ba, *bb;
	size_t la, lb;
	uint64_t seen = 0;

	(void)state;
	assert_int_equal(ms_capture_encode(a, &ba, &la), 0);
	assert_int_equal(ms_capture_encode(b, &bb, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ba, bb, la);
	for (uint32_t i = 0; i < a->n_frames; i++) {
		const struct ms_cap_frame *f = &a->frames[i];

		if (!ms_frame_interpreted(a, f))
			continue;
		assert_true(f->flags & MS_FRAME_NO_ADDRESS);
		seen |= 1ull << f->address;
	}
	/* a.py f, a.py g, b.py f, b.py h: keys 1 to 4 in that order */
	assert_int_equal(seen, 0x1e);
	assert_int_equal(a->minor, MS_CAPTURE_MINOR_PYTHON);
	free(ba);
	free(bb);
	ms_capture_free(a);
	ms_capture_free(b);
}

/* cap dumped as a stream and captured again. */
static struct ms_capture *dump_and_capture(const struct ms_capture *cap)
{
	FILE *f = tmpfile();
	struct ms_writer *w;
	struct ms_reader *r;
	struct ms_capture *back = NULL;

	assert_non_null(f);
	w = ms_writer_open(fileno(f), "tmp", 0);
	assert_non_null(w);
	assert_int_equal(ms_capture_dump(cap, w, "ms-test", "1", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &back), 0);
	ms_reader_free(r);
	fclose(f);
	return back;
}

/*
 * Dump and capture again keeps every table (the second round gives the
 * first's bytes: the first adds only the dump's producers); the frames,
 * stacks, samples and Python rows are the original's.
 */
static void test_round_trip(void **state)
{
	struct ms_capture *cap = python_capture(), *back, *again, *loaded;
	unsigned char *a, *b;
	size_t la, lb;

	(void)state;
	back = dump_and_capture(cap);
	assert_non_null(back);
	again = dump_and_capture(back);
	assert_non_null(again);
	assert_int_equal(ms_capture_encode(back, &a, &la), 0);
	assert_int_equal(ms_capture_encode(again, &b, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_int_equal(back->n_frames, cap->n_frames);
	for (uint32_t i = 0; i < cap->n_frames; i++) {
		assert_int_equal(back->frames[i].module, cap->frames[i].module);
		assert_int_equal(back->frames[i].flags, cap->frames[i].flags);
		assert_int_equal(back->frames[i].address, cap->frames[i].address);
		assert_string_equal(back->strings[back->frames[i].name],
				    cap->strings[cap->frames[i].name]);
	}
	assert_int_equal(back->n_stacks, cap->n_stacks);
	assert_memory_equal(back->stacks, cap->stacks, cap->n_stacks * sizeof(*cap->stacks));
	assert_int_equal(back->n_samples, cap->n_samples);
	assert_memory_equal(back->samples, cap->samples, cap->n_samples * sizeof(*cap->samples));
	assert_int_equal(back->n_modules, cap->n_modules);
	assert_int_equal(back->modules[1].kind, MS_MODULE_INTERPRETED);
	loaded = ms_capture_load_buffer(a, la, "t.msc");
	assert_non_null(loaded);
	assert_int_equal(loaded->minor, 7);
	assert_int_equal(loaded->n_py_processes, 2);
	assert_int_equal(loaded->py_processes[0].pid, 100);
	assert_int_equal(loaded->py_processes[0].version_hex, 0x030b07f0);
	assert_string_equal(loaded->strings[loaded->py_processes[0].engine], "bpf");
	assert_int_equal(loaded->py_processes[1].status, MS_PY_PROCESS_UNSUPPORTED);
	assert_string_equal(loaded->strings[loaded->py_processes[1].reason],
			    "Python 3.10 is not supported: use 3.11 or later");
	assert_string_equal(folded(loaded, MS_LOOK_PYTHON),
			    "[truncated: interpreted-unknown];main;hash_update 1\n"
			    "f (a.py:1);g (a.py:6);h (b.py:1);hash_update 2\n"
			    "f (b.py:1) 1\n");
	free(membuf);
	ms_capture_free(loaded);
	free(a);
	free(b);
	ms_capture_free(again);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/*
 * What a reader before 1.7 sees: the py-processes section is one it does
 * not know, skipped after its checksum, and the rest whole: a file
 * without it (its id made unknown) loads to the same capture less the
 * rows. (Such a reader also shows the interpreted module as one of an
 * unknown kind, whose frames keep their names: the mixed look.)
 */
static void test_older_reader(void **state)
{
	struct ms_capture *cap = python_capture(), *back;
	unsigned char *buf;
	size_t len;
	uint32_t n, i;

	(void)state;
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 7);
	n = ms_get_u32(buf + MS_CAPF_N_SECTIONS);
	for (i = 0; i < n; i++) {
		unsigned char *d = buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;

		if (ms_get_u32(d + MS_CAPF_DIR_ID) == MS_CAPF_PY_PROCESSES) {
			uint32_t crc;

			ms_put_u32(d + MS_CAPF_DIR_ID, 99);
			crc = crc32_z(0, buf, MS_CAPF_CHECKSUM);
			crc = crc32_z(crc, buf + MS_CAPF_HEADER_SIZE, n * MS_CAPF_DIR_SIZE_BYTES);
			ms_put_u32(buf + MS_CAPF_CHECKSUM, crc);
			break;
		}
	}
	assert_true(i < n);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_int_equal(back->n_py_processes, 0);
	assert_int_equal(back->n_samples, cap->n_samples);
	assert_int_equal(back->n_frames, cap->n_frames);
	ms_capture_free(back);
	free(buf);
	ms_capture_free(cap);
}

/* A capture without Python data keeps its minor: 1.1 here. */
static void test_no_python_keeps_minor(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	(void)state;
	module(b, 0, MS_MODULE_FILE, S("/bin/true"));
	stack(b, 100, 1000, MS_END_OUTERMOST, 1, 0u, (uint64_t)0x10, 0u);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_false(ms_capture_has_python(cap));
	assert_int_equal(cap->minor, MS_CAPTURE_MINOR_UNWEIGHTED);
	ms_capture_free(cap);
}

static void test_summary_problems(void **state)
{
	struct ms_capture *cap = python_capture();
	char *text;

	(void)state;
	text = view(cap, MS_VIEW_SUMMARY, MS_LOOK_MIXED, false);
	assert_non_null(strstr(text,
		"python:      pid 100 /usr/bin/python3.11: ok, Python 3.11.7, layout from table+dwarf, engine bpf\n"
		"             pid 200 /usr/bin/python3.10: unsupported, Python 3.10.12, layout from none, engine bpf (ms-analyze problems says more)\n"));
	assert_non_null(strstr(text, "Python frames not known"));
	free(text);
	text = view(cap, MS_VIEW_SUMMARY, MS_LOOK_MIXED, true);
	assert_non_null(strstr(text, ",\"python\":[{\"pid\":100,\"time_ns\":500,\"status\":\"ok\",\"version\":\"3.11.7\",\"version_hex\":51054576,\"source\":\"table+dwarf\",\"path\":\"/usr/bin/python3.11\",\"engine\":\"bpf\",\"reason\":\"\"},{\"pid\":200,"));
	free(text);
	text = view(cap, MS_VIEW_PROBLEMS, MS_LOOK_MIXED, false);
	assert_non_null(strstr(text,
		"\npython: 1 finding of 2 whose frames were not walked\n"
		"  pid 200  /usr/bin/python3.10 (Python 3.10.12): unsupported: Python 3.10 is not supported: use 3.11 or later\n"));
	free(text);
	text = view(cap, MS_VIEW_PROBLEMS, MS_LOOK_MIXED, true);
	assert_non_null(strstr(text, ",\"python\":[{\"pid\":200,"));
	assert_null(strstr(text, "\"pid\":100,\"time_ns\""));
	free(text);
	ms_capture_free(cap);
}

static void expect_refused(struct ms_capture_builder *b, int rc, const char *what)
{
	(void)b;
	assert_int_equal(rc, -1);
	(void)what;
}

/* An interpreted module with an identity or a base, an interpreted frame with an address. */
static void test_malformed(void **state)
{
	struct ms_capture_builder *b;
	struct ms_module m;

	(void)state;
	b = ms_capture_builder_new();
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_INTERPRETED;
	m.path = S("[python]");
	m.build_id_len = 4;
	expect_refused(b, ms_capture_builder_module(b, &m), "a build id");
	ms_capture_builder_free(b);

	b = ms_capture_builder_new();
	m.build_id_len = 0;
	m.base = 0x1000;
	m.size = 0x10;
	expect_refused(b, ms_capture_builder_module(b, &m), "a base");
	ms_capture_builder_free(b);

	b = ms_capture_builder_new();
	m.base = 0;
	m.size = 0;
	m.ino = 12;
	expect_refused(b, ms_capture_builder_module(b, &m), "a file identity");
	ms_capture_builder_free(b);

	b = ms_capture_builder_new();
	module(b, 1, MS_MODULE_INTERPRETED, S("[python]"));
	stack(b, 100, 1000, MS_END_OUTERMOST, 1, 1u, (uint64_t)3, 0u);
	assert_null(ms_capture_builder_seal(b));
}

/* The reader refuses the same in a file: an interpreted frame without no-address. */
static void test_reader_refuses(void **state)
{
	struct ms_capture *cap = python_capture(), *back;
	unsigned char *buf;
	size_t len;

	(void)state;
	for (uint32_t i = 0; i < cap->n_frames; i++)
		if (ms_frame_interpreted(cap, &cap->frames[i])) {
			cap->frames[i].flags &= ~(uint32_t)MS_FRAME_NO_ADDRESS;
			break;
		}
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_null(back);
	free(buf);
	cap->frames[0].flags |= MS_FRAME_NO_ADDRESS;
	for (uint32_t i = 0; i < cap->n_modules; i++)
		if (cap->modules[i].kind == MS_MODULE_INTERPRETED)
			cap->modules[i].build_id_len = 20;
	for (uint32_t i = 0; i < cap->n_frames; i++)
		cap->frames[i].flags |= ms_frame_interpreted(cap, &cap->frames[i]) ?
					MS_FRAME_NO_ADDRESS : 0;
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_null(back);
	free(buf);
	ms_capture_free(cap);
}

/* pprof: interpreted functions with name, file and start line; locations with their line, no mapping, no address. */
static void test_pprof(void **state)
{
	struct ms_capture *cap = python_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Perftools__Profiles__Profile *p;
	unsigned char *raw = malloc(1 << 20);
	uLongf raw_len = 1 << 20;
	z_stream z;
	uint32_t found = 0;

	(void)state;
	CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_PPROF, &o));
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (unsigned char *)membuf;
	z.avail_in = membuf_len;
	z.next_out = raw;
	z.avail_out = raw_len;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	raw_len = z.total_out;
	inflateEnd(&z);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	for (size_t i = 0; i < p->n_mapping; i++)
		assert_string_not_equal(p->string_table[p->mapping[i]->filename], "[python]");
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		Perftools__Profiles__Function *fn = NULL;

		if (l->n_line != 1)
			continue;
		for (size_t k = 0; k < p->n_function; k++)
			if (p->function[k]->id == l->line[0]->function_id)
				fn = p->function[k];
		assert_non_null(fn);
		if (strcmp(p->string_table[fn->name], "g"))
			continue;
		assert_int_equal(l->mapping_id, 0);
		assert_int_equal(l->address, 0);
		assert_int_equal(l->line[0]->line, 8);
		assert_string_equal(p->string_table[fn->filename], "a.py");
		assert_int_equal(fn->start_line, 6);
		found++;
	}
	assert_int_equal(found, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(membuf);
	ms_capture_free(cap);
}

/* pylooks-test --write FILE: the hand-built capture to FILE, for tests/0915-python-looks.bats. */
static int write_capture(const char *path)
{
	struct ms_capture *cap = python_capture();
	int rc = ms_capture_write(cap, path);

	ms_capture_free(cap);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_looks),
		cmocka_unit_test(test_top_tree_looks),
		cmocka_unit_test(test_keys_by_text),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_older_reader),
		cmocka_unit_test(test_no_python_keeps_minor),
		cmocka_unit_test(test_summary_problems),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_reader_refuses),
		cmocka_unit_test(test_pprof),
	};

	ms_set_progname("pylooks-test");
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_capture(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
