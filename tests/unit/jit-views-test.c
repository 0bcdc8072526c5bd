/*
 * Unit tests of what analysis and the exporters make of a capture's JIT
 * data (capture minor 6): the perf-map settings in ms-analyze problems
 * and summary (text and JSON, exact), perf-map modules' kind name, and
 * pprof's mappings and folded stacks of perf-map frames. The capture is
 * built from hand-made records with the builder, as ms-capture builds it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "analysis/analysis.h"
#include "analysis/analysis-internal.h"
#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/funcs.h"
#include "formats/formats.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })
#define BASE 0x7f0000100000ull

static char *membuf;
static size_t membuf_len;

#define CAPTURE_OUTPUT(call) ({                                  \
	FILE *out = open_memstream(&membuf, &membuf_len);        \
	assert_non_null(out);                                    \
	assert_int_equal(call, 0);                               \
	assert_int_equal(fclose(out), 0);                        \
	membuf;                                                  \
})

static void module(struct ms_capture_builder *b, uint32_t id, uint32_t kind, struct ms_str path,
		   uint64_t base, uint64_t size)
{
	struct ms_module m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = kind;
	m.path = path;
	m.base = base;
	m.size = size;
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
}

static void frame(struct ms_capture_builder *b, uint32_t module, uint64_t address, struct ms_str name)
{
	struct ms_frame f = { .module = module, .address = address, .name = name,
			      .symbol_start = address, .reason = MS_SYM_OK };

	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/* A sample of pid 100: (module, address) innermost first. */
static void stack(struct ms_capture_builder *b, uint64_t time, uint32_t reason, uint32_t n, ...)
{
	struct ms_stack *s = calloc(1, sizeof(*s));
	va_list ap;

	s->pid = s->tid = 100;
	s->time = time;
	s->period = 1000000;
	s->reason = reason;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = i ? MS_FRAME_RETURN : 0;
	}
	va_end(ap);
	s->n_frames = n;
	assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

static void read_of(struct ms_capture_builder *b, struct ms_jit_read r)
{
	assert_int_equal(ms_capture_builder_jit_read(b, &r), 0);
}

/*
 * A program running JIT code from a perf map (module 1, two functions),
 * called from the interpreter (module 0): three samples, one of them in
 * code past the budget, whose stack ends there. Process 100 read its map
 * twice; 200's was stale, 300's could not be opened, 400's was bounded.
 */
static struct ms_capture *jit_capture(bool with_reads)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	assert_non_null(b);
	module(b, 0, MS_MODULE_FILE, S("/usr/bin/python3.12"), 0, 0);
	module(b, 1, MS_MODULE_PERF_MAP, S("/tmp/perf-100.map"), BASE, 0x100);
	frame(b, 0, 0x5000, S("_PyEval_EvalFrameDefault"));
	frame(b, 0, 0x4000, S("main"));
	frame(b, 1, BASE + 0x10, S("py::work:/srv/app.py"));
	frame(b, 1, BASE + 0x90, S("py::idle:/srv/app.py"));
	stack(b, 1000, MS_END_OUTERMOST, 3, 1u, BASE + 0x10, 0u, (uint64_t)0x5000, 0u,
	      (uint64_t)0x4000);
	stack(b, 2000, MS_END_OUTERMOST, 3, 1u, BASE + 0x10, 0u, (uint64_t)0x5000, 0u,
	      (uint64_t)0x4000);
	stack(b, 3000, MS_END_NO_CFI, 1, 1u, BASE + 0x90);
	if (with_reads) {
		read_of(b, (struct ms_jit_read){ 100, 500, S("/tmp/perf-100.map"),
						 MS_JIT_READ_BOUNDED, 0, 16 << 20, 1, 0, 0, 0, 0,
						 16 });
		read_of(b, (struct ms_jit_read){ 400, 600, S("/tmp/perf-400.map"),
						 MS_JIT_READ_BOUNDED, 0, 16 << 20, 900, 0, 0, 0, 0,
						 1 << 20 });
		read_of(b, (struct ms_jit_read){ 300, 700, S("/tmp/perf-300.map"),
						 MS_JIT_READ_FAILED, 13, 0, 0, 0, 0, 0, 0, 0 });
		read_of(b, (struct ms_jit_read){ 200, 800, S("/tmp/perf-200.map"),
						 MS_JIT_READ_STALE, 0, 0, 0, 0, 0, 0, 0, 0 });
		read_of(b, (struct ms_jit_read){ 100, 900, S("/tmp/perf-100.map"), MS_JIT_READ_OK,
						 0, 4200, 2, 3, 0, 1, 1, 32 });
		read_of(b, (struct ms_jit_read){ 500, 950, S("/tmp/perf-500.map"), MS_JIT_READ_OK,
						 0, 80, 1, 0, 0, 0, 0, 16 });
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

/* The lines of text from the one that starts with first, up to a blank line. */
static char *section_of(const char *text, const char *first)
{
	const char *at = strstr(text, first), *end;

	if (!at)
		fail_msg("no \"%s\" in:\n%s", first, text);
	end = strstr(at, "\n\n");
	return strndup(at, end ? (size_t)(end - at + 1) : strlen(at));
}

static void test_problems_text(void **state)
{
	struct ms_capture *cap = jit_capture(true);
	char *text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, false)), *part;

	(void)state;
	part = section_of(text, "perf maps:");
	assert_string_equal(part,
		"perf maps: 5 processes read, 4 with something to report\n"
		"  pid 100  /tmp/perf-100.map: ok, 2 functions, 4200 bytes read\n"
		"    3 lines not START SIZE NAME: skipped, so the code they meant to name has "
		"none (the program that writes the map wrote them)\n"
		"    1 function past the 64 MiB code budget: named, but no frame was proved from "
		"their code, so stacks end in them (no unwind information)\n"
		"    1 function whose code could not be read from the process (gone before it was "
		"read): named, but stacks end in them (no unwind information)\n"
		"  pid 200  /tmp/perf-200.map: stale, 0 functions, 0 bytes read\n"
		"    stale: written by an earlier process with this pid; not read, so its JIT code "
		"has no names (remove the old map before recording)\n"
		"  pid 300  /tmp/perf-300.map: failed, 0 functions, 0 bytes read\n"
		"    failed: opening or reading it failed, so its JIT code has no names (make the "
		"map readable by the recorder); errno 13 (EACCES)\n"
		"  pid 400  /tmp/perf-400.map: bounded, 900 functions, 16777216 bytes read\n"
		"    bounded: the last read stopped at its bound of 16 MiB; what the process wrote "
		"after that was never read, so the functions named there have no name (a longer "
		"recording reads on)\n"
		"  pid 500  /tmp/perf-500.map: ok, 1 function, 80 bytes read\n");
	/* the perf-map frames are named: nothing about their module */
	assert_null(strstr(text, "perf-100.map: failed"));
	assert_non_null(strstr(text, "unsymbolized: none\n"));
	free(part);
	free(text);
	ms_capture_free(cap);
}

static void test_problems_json(void **state)
{
	struct ms_capture *cap = jit_capture(true);
	char *text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, true));
	const char *at = strstr(text, "\"perf_maps\":");
	static const char want[] =
		"\"perf_maps\":[{\"pid\":100,\"path\":\"/tmp/perf-100.map\",\"status\":\"ok\","
		"\"functions\":2,\"meaning\":\"read to its end\",\"err\":0,\"error\":\"\","
		"\"time_ns\":900,\"bytes_read\":4200,\"code_bytes\":32,\"issues\":["
		"{\"what\":\"malformed\",\"count\":3,\"meaning\":\"not START SIZE NAME: skipped, so "
		"the code they meant to name has none (the program that writes the map wrote "
		"them)\"},{\"what\":\"no_code\",\"count\":1,\"meaning\":\"past the 64 MiB code "
		"budget: named, but no frame was proved from their code, so stacks end in them (no "
		"unwind information)\"},{\"what\":\"code_unread\",\"count\":1,\"meaning\":\"whose "
		"code could not be read from the process (gone before it was read): named, but "
		"stacks end in them (no unwind information)\"}]},{\"pid\":200,";

	(void)state;
	assert_non_null(at);
	if (strncmp(at, want, sizeof(want) - 1))
		fail_msg("got: %s", at);
	assert_non_null(strstr(at, "{\"pid\":300,\"path\":\"/tmp/perf-300.map\",\"status\":\"failed\","
				   "\"functions\":0,\"meaning\":\"opening or reading it failed, so its "
				   "JIT code has no names (make the map readable by the recorder)\","
				   "\"err\":13,\"error\":\"errno 13 (EACCES)\",\"time_ns\":700,"
				   "\"bytes_read\":0,\"code_bytes\":0,\"issues\":[]}"));
	/* before the recording's problems, whose key closes the object */
	assert_non_null(strstr(at, "}],\"recording\":[]}\n"));
	free(text);
	ms_capture_free(cap);
}

static void test_summary(void **state)
{
	struct ms_capture *cap = jit_capture(true);
	char *text = CAPTURE_OUTPUT(ms_summary_write(out, cap, false)), *part;

	(void)state;
	part = section_of(text, "perf maps:");
	*strstr(part, "threads:") = '\0';
	assert_string_equal(part,
		"perf maps:   pid 100 /tmp/perf-100.map: 2 functions, ok (ms-analyze problems says more)\n"
		"             pid 200 /tmp/perf-200.map: 0 functions, stale (ms-analyze problems says more)\n"
		"             pid 300 /tmp/perf-300.map: 0 functions, failed (ms-analyze problems says more)\n"
		"             pid 400 /tmp/perf-400.map: 900 functions, bounded (ms-analyze problems says more)\n"
		"             pid 500 /tmp/perf-500.map: 1 function, ok\n");
	free(part);
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, true));
	assert_non_null(strstr(text,
		",\"perf_maps\":[{\"pid\":100,\"path\":\"/tmp/perf-100.map\",\"status\":\"ok\","
		"\"functions\":2},{\"pid\":200,\"path\":\"/tmp/perf-200.map\",\"status\":\"stale\","
		"\"functions\":0},{\"pid\":300,\"path\":\"/tmp/perf-300.map\",\"status\":\"failed\","
		"\"functions\":0},{\"pid\":400,\"path\":\"/tmp/perf-400.map\",\"status\":\"bounded\","
		"\"functions\":900},{\"pid\":500,\"path\":\"/tmp/perf-500.map\",\"status\":\"ok\","
		"\"functions\":1}],\"budget\":null,"));
	free(text);
	ms_capture_free(cap);
}

/* Without perf-map settings, nothing: every other capture's views stay as they were. */
static void test_no_settings_no_lines(void **state)
{
	struct ms_capture *cap = jit_capture(false);
	char *text;

	(void)state;
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, false));
	assert_null(strstr(text, "perf map"));
	free(text);
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, true));
	assert_null(strstr(text, "perf_maps"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, false));
	assert_null(strstr(text, "perf map"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, true));
	assert_null(strstr(text, "perf_maps"));
	free(text);
	ms_capture_free(cap);
}

/* The kind's name, and the label of a perf-map module's unnamed frame. */
static void test_kind_name(void **state)
{
	(void)state;
	assert_string_equal(ms_module_kind_name(MS_MODULE_PERF_MAP), "perf-map");
	assert_string_equal(ms_module_kind_name(MS_MODULE_ANON), "anon");
	assert_string_equal(ms_module_kind_name(MS_MODULE_KIND_COUNT), "unknown");
}

static unsigned char *gunzip_mem(const unsigned char *in, size_t len, size_t *out_len)
{
	z_stream z;
	size_t alloc = 1 << 20;
	unsigned char *out = malloc(alloc);

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 31), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)alloc;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

/*
 * The pprof export of cap has n_mapping mappings, one of them the file
 * name over [start, limit) claiming its functions, its locations inside
 * it with one line each, and one of them named func.
 */
static void expect_pprof_ranged_mapping(struct ms_capture *cap, size_t n_mapping,
					const char *file, uint64_t start, uint64_t limit,
					const char *func)
{
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Mapping *m = NULL;
	unsigned char *raw;
	size_t len, plen;
	bool named = false;
	char *gz;

	gz = CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_PPROF, &o));
	len = membuf_len;
	raw = gunzip_mem((unsigned char *)gz, len, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	assert_int_equal(p->n_mapping, n_mapping);
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!strcmp(p->string_table[p->mapping[i]->filename], file))
			m = p->mapping[i];
	assert_non_null(m);
	assert_int_equal(m->memory_start, start);
	assert_int_equal(m->memory_limit, limit);
	assert_true(m->has_functions);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->mapping_id != m->id)
			continue;
		assert_true(l->address >= m->memory_start && l->address < m->memory_limit);
		assert_int_equal(l->n_line, 1);
		for (size_t k = 0; k < p->n_function; k++)
			if (p->function[k]->id == l->line[0]->function_id &&
			    !strcmp(p->string_table[p->function[k]->name], func))
				named = true;
	}
	assert_true(named);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
}

/*
 * pprof: the perf-map module is a mapping over its range, named by its
 * map, claiming its functions (named from the frame facts, as recorded),
 * so that no pprof tool looks them up in a file.
 */
static void test_pprof_mapping(void **state)
{
	struct ms_capture *cap = jit_capture(true);

	(void)state;
	expect_pprof_ranged_mapping(cap, 2, "/tmp/perf-100.map", BASE, BASE + 0x100,
				    "py::work:/srv/app.py");
	ms_capture_free(cap);
}

/* Folded stacks name perf-map frames from their facts, as every other frame. */
static void test_folded_names(void **state)
{
	struct ms_capture *cap = jit_capture(true);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	text = CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_FOLDED, &o));
	assert_string_equal(text,
		"[truncated: no-cfi];py::idle:/srv/app.py 1\n"
		"main;_PyEval_EvalFrameDefault;py::work:/srv/app.py 2\n");
	free(text);
	ms_capture_free(cap);
}

/* ---- jit-object modules: objects registered through the GDB JIT interface ---- */

#define JO_A 0x7f2000001000ull
#define JO_B 0x7f2000009000ull

/* A sample of pid (tid the same): (module, address) innermost first. */
static void stack_of(struct ms_capture_builder *b, uint32_t pid, uint64_t time, uint32_t reason,
		     uint32_t n, ...)
{
	struct ms_stack *s = calloc(1, sizeof(*s));
	va_list ap;

	s->pid = s->tid = pid;
	s->time = time;
	s->period = 1000000;
	s->reason = reason;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = i ? MS_FRAME_RETURN : 0;
	}
	va_end(ap);
	s->n_frames = n;
	assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

static void problem(struct ms_capture_builder *b, struct ms_str stage, struct ms_str code,
		    uint64_t count, struct ms_str detail)
{
	struct ms_problem p = { stage, code, count, detail };

	assert_int_equal(ms_capture_builder_problem(b, &p), 0);
}

/*
 * lli running JIT code from two registered objects (modules 1 and 2)
 * called from the interpreter (module 0): process 100 in both objects
 * (one sample at an address no symbol of its object covers), process 200
 * in one; and the problems ms-collect and ms-unwind counted about them.
 */
static struct ms_capture *jit_object_capture(bool with_problems)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	struct ms_frame unnamed = { .module = 1, .address = JO_A + 0x38,
				    .reason = MS_SYM_NO_SYMBOL };

	assert_non_null(b);
	module(b, 0, MS_MODULE_FILE, S("/usr/bin/lli"), 0, 0);
	module(b, 1, MS_MODULE_JIT_OBJECT, S("[jit-object 0x55d0c0a02e80]"), JO_A, 0x40);
	module(b, 2, MS_MODULE_JIT_OBJECT, S("[jit-object 0x55d0c0a02f00]"), JO_B, 0x20);
	frame(b, 0, 0x4000, S("main"));
	frame(b, 1, JO_A + 0x11, S("leaf"));
	frame(b, 1, JO_A + 0x2c, S("middle"));
	assert_int_equal(ms_capture_builder_frame(b, &unnamed), 0);
	frame(b, 2, JO_B + 0x8, S("outer"));
	stack_of(b, 100, 1000, MS_END_OUTERMOST, 4, 1u, JO_A + 0x11, 1u, JO_A + 0x2c, 2u,
		 JO_B + 0x8, 0u, (uint64_t)0x4000);
	stack_of(b, 100, 2000, MS_END_OUTERMOST, 4, 1u, JO_A + 0x11, 1u, JO_A + 0x2c, 2u,
		 JO_B + 0x8, 0u, (uint64_t)0x4000);
	stack_of(b, 100, 3000, MS_END_NO_CFI, 1, 1u, JO_A + 0x38);
	stack_of(b, 200, 3500, MS_END_OUTERMOST, 2, 2u, JO_B + 0x8, 0u, (uint64_t)0x4000);
	stack_of(b, 200, 3600, MS_END_OUTERMOST, 1, 0u, (uint64_t)0x4000);
	if (with_problems) {
		problem(b, S("ms-collect"), S("jit-process-gone"), 2,
			S("pid 300 ended before its JIT objects were read"));
		problem(b, S("ms-unwind"), S("jit-object-chunks"), 1,
			S("pid 100: the object of entry 0x55d0c0a03000 came in chunks that do not "
			  "add up: dropped"));
		problem(b, S("ms-decode"), S("truncated-sample"), 1, S("a sample cut short"));
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

/* The kind's name, and what every view calls its unnamed frames: the kind, not the entry. */
static void test_jit_object_names(void **state)
{
	struct ms_capture *cap = jit_object_capture(false);
	char buf[64];
	uint32_t f;

	(void)state;
	assert_string_equal(ms_module_kind_name(MS_MODULE_JIT_OBJECT), "jit-object");
	assert_string_equal(ms_module_label(cap, 1), "[jit-object]");
	for (f = 0; f < cap->n_frames; f++)
		if (cap->frames[f].address == JO_A + 0x38)
			break;
	assert_true(f < cap->n_frames);
	ms_frame_label(buf, sizeof(buf), cap, &cap->frames[f]);
	assert_string_equal(buf, "[jit-object]+0x7f2000001038");
	ms_capture_free(cap);
}

static void test_jit_object_problems_text(void **state)
{
	struct ms_capture *cap = jit_object_capture(true);
	char *text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, false)), *part;

	(void)state;
	part = section_of(text, "[jit-object 0x55d0c0a02e80]");
	assert_string_equal(part,
		"[jit-object 0x55d0c0a02e80]: partial (no-symbol), 1 sample (20.0%)\n"
		"  identity: jit-object, no build id, range 0x7f2000001000..0x7f2000001040\n"
		"  samples   share  reason     address\n"
		"        1   20.0%  no-symbol  0x7f2000001038\n");
	free(part);
	part = section_of(text, "recording problems:");
	assert_string_equal(part,
		"recording problems: 3 kinds the stages counted\n"
		"  ms-collect  jit-process-gone  2  pid 300 ended before its JIT objects were read\n"
		"    what it means: the process ended before its JIT objects were read: they lived "
		"only in it, so the samples in their code stay unnamed and their stacks end there; "
		"nothing can name them later (a program that runs until its samples are read is "
		"named)\n"
		"  ms-decode  truncated-sample  1  a sample cut short\n"
		"  ms-unwind  jit-object-chunks  1  pid 100: the object of entry 0x55d0c0a03000 came "
		"in chunks that do not add up: dropped\n"
		"    what it means: ms-unwind could not use a JIT object the recording read, as the "
		"detail says (the object is dropped, or the part of it named there): the code it "
		"would have named has no names and stacks end in it\n");
	free(part);
	free(text);
	ms_capture_free(cap);
}

static void test_jit_object_problems_json(void **state)
{
	struct ms_capture *cap = jit_object_capture(true);
	char *text = CAPTURE_OUTPUT(ms_sym_problems_write(out, cap, true));

	(void)state;
	assert_non_null(strstr(text,
		"{\"path\":\"[jit-object 0x55d0c0a02e80]\",\"kind\":\"jit-object\",\"build_id\":\"\","
		"\"dev_major\":0,\"dev_minor\":0,\"inode\":0,\"size\":64,\"mtime\":0,"
		"\"status\":\"partial\",\"reason\":\"no-symbol\",\"samples\":1,\"addresses\":["
		"{\"address\":\"0x7f2000001038\",\"reason\":\"no-symbol\",\"samples\":1}]}"));
	assert_non_null(strstr(text,
		"{\"stage\":\"ms-collect\",\"code\":\"jit-process-gone\",\"count\":2,\"detail\":\"pid "
		"300 ended before its JIT objects were read\",\"meaning\":\"the process ended before "
		"its JIT objects were read: "));
	/* a row of another code has no meaning key: its JSON is what it was */
	assert_non_null(strstr(text,
		"{\"stage\":\"ms-decode\",\"code\":\"truncated-sample\",\"count\":1,\"detail\":\"a "
		"sample cut short\"}"));
	assert_non_null(strstr(text, "\"code\":\"jit-object-chunks\",\"count\":1,\"detail\":\"pid "
				     "100: the object of entry 0x55d0c0a03000 came in chunks that do "
				     "not add up: dropped\",\"meaning\":\"ms-unwind could not use"));
	assert_null(strstr(text, "perf_maps"));
	free(text);
	ms_capture_free(cap);
}

/* Every code of the GDB JIT interface has its sentence; others have none. */
static void test_jit_problem_meanings(void **state)
{
	static const char *const collect[] = {
		"jit-descriptor-unreadable", "jit-descriptor-version", "jit-object-too-large",
		"jit-object-unreadable", "jit-objects-max", "jit-object-not-elf", "jit-process-gone",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(collect) / sizeof(collect[0]); i++) {
		const char *m = ms_jit_problem_meaning("ms-collect", collect[i]);

		assert_non_null(m);
		/* each says what the profile lost */
		assert_non_null(strstr(m, "no names") ? m : strstr(m, "unnamed"));
	}
	assert_non_null(ms_jit_problem_meaning("ms-unwind", "jit-object-bad-elf"));
	assert_null(ms_jit_problem_meaning("ms-unwind", "jit-bad-rows"));
	assert_null(ms_jit_problem_meaning("ms-decode", "jit-process-gone"));
	assert_null(ms_jit_problem_meaning("ms-collect", "jit-read-deferred"));
}

static void test_jit_object_summary(void **state)
{
	struct ms_capture *cap = jit_object_capture(false);
	char *text = CAPTURE_OUTPUT(ms_summary_write(out, cap, false)), *part;

	(void)state;
	part = section_of(text, "jit objects:");
	*strstr(part, "threads:") = '\0';
	assert_string_equal(part,
		"jit objects: pid 100: 2 objects sampled, 3 samples in their code\n"
		"             pid 200: 1 object sampled, 1 sample in their code\n");
	free(part);
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, true));
	assert_non_null(strstr(text,
		",\"jit_objects\":[{\"pid\":100,\"objects\":2,\"samples\":3},"
		"{\"pid\":200,\"objects\":1,\"samples\":1}],\"budget\":null,"));
	free(text);
	ms_capture_free(cap);
	/* a capture without jit-object modules says nothing of them */
	cap = jit_capture(true);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, false));
	assert_null(strstr(text, "jit objects"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, cap, true));
	assert_null(strstr(text, "jit_objects"));
	free(text);
	ms_capture_free(cap);
}

/* pprof: each object a mapping over its range, named by its path, claiming its functions. */
static void test_jit_object_pprof(void **state)
{
	struct ms_capture *cap = jit_object_capture(false);

	(void)state;
	expect_pprof_ranged_mapping(cap, 3, "[jit-object 0x55d0c0a02e80]", JO_A, JO_A + 0x40, "leaf");
	ms_capture_free(cap);
}

/* Folded and speedscope name the objects' frames from their facts; the unnamed one by its kind. */
static void test_jit_object_folded_speedscope(void **state)
{
	struct ms_capture *cap = jit_object_capture(false);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	text = CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_FOLDED, &o));
	assert_string_equal(text,
		"[truncated: no-cfi];[jit-object]+0x7f2000001038 1\n"
		"main 1\n"
		"main;outer 1\n"
		"main;outer;middle;leaf 2\n");
	free(text);
	text = CAPTURE_OUTPUT(ms_export(out, cap, MS_FORMAT_SPEEDSCOPE, &o));
	/* its file the object's module, as a perf-map frame's is its map */
	assert_non_null(strstr(text, "{\"name\":\"leaf\",\"file\":\"[jit-object 0x55d0c0a02e80]\"}"));
	assert_non_null(strstr(text, "{\"name\":\"outer\",\"file\":\"[jit-object 0x55d0c0a02f00]\"}"));
	assert_non_null(strstr(text, "{\"name\":\"[jit-object]+0x7f2000001038\""));
	free(text);
	ms_capture_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_problems_text),
		cmocka_unit_test(test_problems_json),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_no_settings_no_lines),
		cmocka_unit_test(test_kind_name),
		cmocka_unit_test(test_pprof_mapping),
		cmocka_unit_test(test_folded_names),
		cmocka_unit_test(test_jit_object_names),
		cmocka_unit_test(test_jit_object_problems_text),
		cmocka_unit_test(test_jit_object_problems_json),
		cmocka_unit_test(test_jit_problem_meanings),
		cmocka_unit_test(test_jit_object_summary),
		cmocka_unit_test(test_jit_object_pprof),
		cmocka_unit_test(test_jit_object_folded_speedscope),
	};

	ms_set_progname("jit-views-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
