/*
 * Unit tests of formats/: each exporter on a small hand-built capture
 * (golden output, or the pprof decoded back with protobuf-c), round trips
 * through pprof and folded, and every kind of hostile input the importers
 * must refuse with one message naming the position.
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
#include "formats/formats.h"
#include "formats/internal.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

typedef Perftools__Profiles__Profile Profile;

/* ---- capturing the messages a call prints ---- */

#include "tests/unit/stderr-capture.h"

/* ---- a small capture ---- */

static void frame_fact(struct ms_capture_builder *b, uint32_t module, uint64_t address,
		       const char *name)
{
	struct ms_frame f;

	memset(&f, 0, sizeof(f));
	f.module = module;
	f.address = address;
	f.name = (struct ms_str){ name, (uint32_t)strlen(name) };
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/* A sample of n frames (innermost first) whose unwinding ended with end. */
static void sample_end(struct ms_capture_builder *b, uint32_t tid, uint64_t time,
		       uint64_t period, uint32_t end, uint32_t n,
		       const struct ms_stack_frame *frames)
{
	static struct ms_stack st;

	memset(&st, 0, sizeof(st));
	st.pid = 1;
	st.tid = tid;
	st.time = time;
	st.period = period;
	st.reason = end;
	st.n_frames = n;
	memcpy(st.frames, frames, n * sizeof(*frames));
	assert_int_equal(ms_capture_builder_stack(b, &st), 0);
}

/*
 * A whole stack (it reached the thread's entry), or none at all (a kernel
 * thread's): stacks cut short are the tests of their own below.
 */
static void sample(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint64_t period,
		   uint32_t n, const struct ms_stack_frame *frames)
{
	sample_end(b, tid, time, period, n ? MS_END_OUTERMOST : MS_END_KERNEL_ONLY, n, frames);
}

/*
 * Thread 1/10 "prog": work<-main twice, then a sample without frames;
 * thread 1/11 "worker": "a;b"<-main, then sys<-work<-main. With duty,
 * recorded under a budget: sampling on half the time from 2000 ns, a
 * quarter from 4000, all of it from 5000.
 */
static struct ms_capture *small_capture_duty(bool duty)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_comm c;
	struct ms_info info[] = {
		{ S("event"), true, S("cpu-clock"), 0 },
		{ S("command"), true, S("./prog x"), 0 },
		{ S("frequency"), false, S(""), 1000 },
	};
	const struct ms_stack_frame work[] = { { 0, 0, 0x200 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame ab[] = { { 0, 0, 0x300 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame sys[] = { { 1, MS_FRAME_KERNEL, 0xffffffff81000000ull },
					      { 0, 0, 0x200 }, { 0, MS_FRAME_RETURN, 0x100 } };
	struct ms_capture *cap;

	assert_non_null(b);
	for (size_t i = 0; i < sizeof(info) / sizeof(info[0]); i++)
		assert_int_equal(ms_capture_builder_info(b, &info[i]), 0);
	memset(&m, 0, sizeof(m));
	m.id = 0;
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/prog");
	m.build_id_len = 20;
	memset(m.build_id, 0xab, 20);
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	memset(&m, 0, sizeof(m));
	m.id = 1;
	m.kind = MS_MODULE_KERNEL;
	m.path = S("[kernel.kallsyms]");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	frame_fact(b, 0, 0x100, "main");
	frame_fact(b, 0, 0x200, "work");
	frame_fact(b, 0, 0x300, "a;b");
	frame_fact(b, 1, 0xffffffff81000000ull, "sys");
	memset(&c, 0, sizeof(c));
	c.pid = 1;
	c.tid = 10;
	c.comm = S("prog");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	c.tid = 11;
	c.comm = S("worker");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	sample(b, 10, 1000, 1000, 2, work);
	sample(b, 10, 2000, 1000, 2, work);
	sample(b, 11, 3000, 2000, 2, ab);
	sample(b, 11, 4000, 1000, 3, sys);
	sample(b, 10, 5000, 1000, 0, NULL);
	if (duty) {
		static const struct ms_duty changes[] = {
			{ 2000, 500000, 500, 30000, 20000 },
			{ 4000, 250000, 250, 40000, 20000 },
			{ 5000, 1000000, 1000, 5000, 20000 },
		};

		for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
			assert_int_equal(ms_capture_builder_duty(b, &changes[i]), 0);
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static struct ms_capture *small_capture(void)
{
	return small_capture_duty(false);
}

/* Run an exporter into memory (NUL-terminated). */
static char *export_mem(const struct ms_capture *cap, enum ms_format f,
			const struct ms_export_options *o, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	assert_int_equal(ms_export(out, cap, f, o), 0);
	assert_int_equal(fclose(out), 0);
	if (len)
		*len = n;
	return buf;
}

/* An imported capture must be one the validating reader accepts. */
static void assert_loadable(const struct ms_capture *cap)
{
	unsigned char *buf;
	size_t len;
	struct ms_capture *back;

	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	back = ms_capture_load_buffer(buf, len, "re-encoded");
	assert_non_null(back);
	assert_int_equal(back->n_samples, cap->n_samples);
	ms_capture_free(back);
	free(buf);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "label self total" lines of the flat profile, sorted by label. */
static char *top_text(const struct ms_capture *cap)
{
	struct ms_top t;
	struct ms_query q;
	char *buf = NULL, **rows;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	ms_query_init(&q, MS_VIEW_TOP);
	assert_int_equal(ms_top_compute(&t, cap, &q), 0);
	rows = calloc(t.n + 1, sizeof(*rows));
	for (uint32_t i = 0; i < t.n; i++) {
		const struct ms_top_entry *e = &t.entries[i];

		assert_true(asprintf(&rows[i], "%s %llu %llu", t.sel.keys.keys[e->key].label,
				     (unsigned long long)e->self, (unsigned long long)e->total) > 0);
	}
	qsort(rows, t.n, sizeof(*rows), cmp_strp);
	for (uint32_t i = 0; i < t.n; i++) {
		fprintf(out, "%s\n", rows[i]);
		free(rows[i]);
	}
	fprintf(out, "samples %llu\n", (unsigned long long)t.sel.selected);
	fclose(out);
	free(rows);
	ms_top_release(&t);
	return buf;
}

/* ---- pprof, decoded back ---- */

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

static const char *pstr(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Function *pfunc(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Location *ploc(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static void test_pprof_export(void **state)
{
	struct ms_capture *cap = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	size_t len, plen;
	char *gz, *again;
	unsigned char *raw;
	Profile *p;
	int64_t count = 0, cpu = 0;
	bool saw_sys = false, saw_command = false;

	(void)state;
	o.producer = "microscope test";
	gz = export_mem(cap, MS_FORMAT_PPROF, &o, &len);
	/* deterministic */
	again = export_mem(cap, MS_FORMAT_PPROF, &o, NULL);
	assert_memory_equal(gz, again, len);
	free(again);
	raw = gunzip_mem((unsigned char *)gz, len, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pstr(p, p->sample_type[0]->type), "samples");
	assert_string_equal(pstr(p, p->sample_type[0]->unit), "count");
	assert_string_equal(pstr(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(pstr(p, p->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(pstr(p, p->period_type->type), "cpu");
	assert_int_equal(p->period, 1000000);	/* 1e9 / frequency 1000 */
	assert_int_equal(p->duration_nanos, 4000);
	/* one sample per unique (stack, thread) */
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *thread = NULL;
		int64_t tid = 0;

		count += s->value[0];
		cpu += s->value[1];
		for (size_t k = 0; k < s->n_label; k++) {
			const char *key = pstr(p, s->label[k]->key);

			if (!strcmp(key, "thread"))
				thread = pstr(p, s->label[k]->str);
			else if (!strcmp(key, "tid"))
				tid = s->label[k]->num;
			else
				assert_string_equal(key, "pid");
		}
		assert_string_equal(thread, tid == 10 ? "prog" : "worker");
		if (s->n_location_id == 3) {
			/* the leaf first */
			const Perftools__Profiles__Location *l = ploc(p, s->location_id[0]);

			assert_int_equal(l->address, 0xffffffff81000000ull);
			assert_int_equal(l->n_line, 1);
			assert_string_equal(pstr(p, pfunc(p, l->line[0]->function_id)->name), "sys");
			assert_string_equal(pstr(p, pfunc(p, ploc(p, s->location_id[2])->line[0]->function_id)->name),
					    "main");
			saw_sys = true;
		}
	}
	assert_true(saw_sys);
	assert_int_equal(count, 5);
	assert_int_equal(cpu, 6000);
	assert_int_equal(p->n_mapping, 2);
	assert_string_equal(pstr(p, p->mapping[0]->filename), "/bin/prog");
	assert_string_equal(pstr(p, p->mapping[0]->build_id),
			    "abababababababababababababababababababab");
	assert_true(p->mapping[0]->has_functions);
	assert_int_equal(p->mapping[0]->memory_start, 0x100);
	assert_int_equal(p->mapping[0]->memory_limit, 0x301);
	for (size_t i = 0; i < p->n_comment; i++)
		if (!strcmp(pstr(p, p->comment[i]), "command: ./prog x"))
			saw_command = true;
	assert_true(saw_command);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	ms_capture_free(cap);
}

static void test_pprof_round_trip(void **state)
{
	struct ms_capture *cap = small_capture(), *back, *again;
	size_t len, len2, len3;
	char *gz = export_mem(cap, MS_FORMAT_PPROF, NULL, &len), *gz2, *gz3;
	char *t0, *t1;

	(void)state;
	stderr_begin();
	back = ms_pprof_import(gz, len, "small.pb.gz", "test 1");
	assert_string_equal(stderr_end(), "");
	assert_non_null(back);
	assert_loadable(back);
	/* every function keeps its name, module and shares */
	t0 = top_text(cap);
	t1 = top_text(back);
	assert_string_equal(t0, t1);
	assert_int_equal(back->n_threads, 2);
	assert_string_equal(back->strings[back->threads[1].name], "worker");
	assert_string_equal(ms_capture_info_text(back, "command"), "./prog x");
	assert_string_equal(ms_capture_info_text(back, "import"), "pprof");
	/* a second trip changes nothing more */
	gz2 = export_mem(back, MS_FORMAT_PPROF, NULL, &len2);
	/* the same name: the file a capture was imported from is kept (info "import-file") */
	again = ms_pprof_import(gz2, len2, "small.pb.gz", "test 1");
	assert_non_null(again);
	gz3 = export_mem(again, MS_FORMAT_PPROF, NULL, &len3);
	assert_int_equal(len2, len3);
	assert_memory_equal(gz2, gz3, len2);
	free(t0);
	free(t1);
	free(gz);
	free(gz2);
	free(gz3);
	ms_capture_free(cap);
	ms_capture_free(back);
	ms_capture_free(again);
}

/*
 * Frames without a name get a pprof function named as ms-analyze names
 * them: an FDE's frames by the function's start (both of these), others by
 * their address. go tool pprof then shows those names, and the profile
 * read back groups the same frames under the same names.
 */
static void test_pprof_unnamed_frames(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_frame f;
	const struct ms_stack_frame fde1[] = { { 0, 0, 0x262c0 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame fde2[] = { { 0, 0, 0x26300 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame nosym[] = { { 0, 0, 0x400 }, { 0, MS_FRAME_RETURN, 0x100 } };
	struct ms_capture *cap, *back;
	size_t len, plen;
	char *gz, *t0, *t1;
	unsigned char *raw;
	Profile *p;
	uint32_t named = 0;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/usr/lib/libc.so.6");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	frame_fact(b, 0, 0x100, "main");
	memset(&f, 0, sizeof(f));
	f.address = 0x262c0;
	f.reason = MS_SYM_FDE_ONLY;
	f.symbol_start = 0x26000;
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	f.address = 0x26300;
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	f.address = 0x400;
	f.reason = MS_SYM_NO_SYMBOL;
	f.symbol_start = 0;
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	sample(b, 10, 1000, 1000, 2, fde1);
	sample(b, 10, 2000, 1000, 2, fde2);
	sample(b, 10, 3000, 1000, 2, nosym);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);

	gz = export_mem(cap, MS_FORMAT_PPROF, NULL, &len);
	raw = gunzip_mem((unsigned char *)gz, len, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const char *name;

		assert_int_equal(l->n_line, 1);
		name = pstr(p, pfunc(p, l->line[0]->function_id)->name);
		if (l->address == 0x262c0 || l->address == 0x26300) {
			assert_string_equal(name, "libc.so.6+0x26000");
			named++;
		} else if (l->address == 0x400) {
			assert_string_equal(name, "libc.so.6+0x400");
			named++;
		}
	}
	assert_int_equal(named, 3);
	/* one function for the two frames of one FDE */
	assert_int_equal(p->n_function, 3);

	/* read back: the same names and shares as ms-analyze's */
	back = ms_pprof_import(gz, len, "unnamed.pb.gz", "test 1");
	assert_non_null(back);
	t0 = top_text(cap);
	t1 = top_text(back);
	assert_string_equal(t0, t1);
	assert_non_null(strstr(t0, "libc.so.6+0x26000 2 2"));
	free(t0);
	free(t1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	ms_capture_free(cap);
	ms_capture_free(back);
}

/* ---- folded ---- */

static void test_folded_export(void **state)
{
	struct ms_capture *cap = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
			    "[no frames] 1\n"
			    "main;a:b 1\n"
			    "main;work 2\n"
			    "main;work;sys 1\n");
	free(text);
	o.thread_root = true;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
			    "prog-1/10 1\n"
			    "prog-1/10;main;work 2\n"
			    "worker-1/11;main;a:b 1\n"
			    "worker-1/11;main;work;sys 1\n");
	free(text);
	o.thread_root = false;
	o.weight = MS_WEIGHT_TIME;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
			    "[no frames] 1000\n"
			    "main;a:b 2000\n"
			    "main;work 2000\n"
			    "main;work;sys 1000\n");
	free(text);
	ms_capture_free(cap);
}

static void test_folded_round_trip(void **state)
{
	struct ms_capture *cap = small_capture(), *back;
	char *text = export_mem(cap, MS_FORMAT_FOLDED, NULL, NULL), *text2, *t0, *t1;
	(void)state;
	back = ms_folded_import(text, strlen(text), "small.folded", "test 1");
	assert_non_null(back);
	assert_loadable(back);
	/* the same lines come out again, so the same shares */
	text2 = export_mem(back, MS_FORMAT_FOLDED, NULL, NULL);
	assert_string_equal(text, text2);
	assert_int_equal(back->n_samples, 4);	/* a row per line */
	assert_int_equal(ms_capture_sample_count(back), 5);
	/* frames known by name only, in no module */
	for (uint32_t i = 0; i < back->n_frames; i++) {
		assert_int_equal(back->frames[i].module, MS_NONE);
		assert_true(back->frames[i].flags & MS_FRAME_NO_ADDRESS);
	}
	/* names and shares: the folded names ("a:b") against the original's */
	t0 = top_text(cap);
	t1 = top_text(back);
	assert_non_null(strstr(t0, "a;b 1 1\n"));
	assert_non_null(strstr(t1, "a:b 1 1\n"));
	assert_non_null(strstr(t1, "main 0 4\n"));
	assert_non_null(strstr(t1, "work 2 3\n"));
	assert_non_null(strstr(t1, "sys 1 1\n"));
	assert_non_null(strstr(t1, "samples 5\n"));
	free(t0);
	free(t1);
	free(text);
	free(text2);
	ms_capture_free(cap);
	ms_capture_free(back);
}

/* ---- chrome and speedscope ---- */

static void test_chrome_events(void **state)
{
	struct ms_capture *cap = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *json;
	const char *work, *caller;

	(void)state;
	o.producer = "microscope test";
	json = export_mem(cap, MS_FORMAT_CHROME, &o, NULL);
	assert_true(!strncmp(json, "{\"traceEvents\":[", 16));
	assert_non_null(strstr(json, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"./prog x\"}}"));
	assert_non_null(strstr(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":11,\"args\":{\"name\":\"worker\"}}"));
	/* thread 10: work and main from 1 us until the gap (2 us + one period) */
	work = strstr(json, "{\"name\":\"work\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":10}");
	caller = strstr(json, "{\"name\":\"main\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":10}");
	assert_non_null(work);
	assert_non_null(caller);
	/* the same start and end: the caller first, or viewers draw work as the root */
	assert_true(caller < work);
	/* thread 11: a;b ends when the next sample leaves it; main spans both */
	assert_non_null(strstr(json, "{\"name\":\"a;b\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":3,\"dur\":1,\"pid\":1,\"tid\":11}"));
	assert_non_null(strstr(json, "{\"name\":\"sys\",\"cat\":\"[kernel.kallsyms]\",\"ph\":\"X\",\"ts\":4,\"dur\":1,\"pid\":1,\"tid\":11}"));
	assert_non_null(strstr(json, "{\"name\":\"main\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":3,\"dur\":2,\"pid\":1,\"tid\":11}"));
	assert_non_null(strstr(json, "\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"microscope test\",\"command\":\"./prog x\"}}\n"));
	free(json);
	o.chrome_form = MS_CHROME_SAMPLES;
	json = export_mem(cap, MS_FORMAT_CHROME, &o, NULL);
	assert_non_null(strstr(json, "\"stackFrames\":{\"1\":{\"name\":\"main\",\"category\":\"prog\"}"));
	assert_non_null(strstr(json, "{\"name\":\"[no frames]\",\"category\":\"[unknown]\"}"));
	assert_non_null(strstr(json, "\"samples\":[{\"cpu\":0,\"pid\":1,\"tid\":10,\"ts\":1.000,\"name\":\"cpu-clock\",\"sf\":\""));
	assert_null(strstr(json, "\"ph\":\"X\""));
	free(json);
	ms_capture_free(cap);
}

/*
 * Events are in whole microseconds, start and end each rounded: viewers
 * add ts and dur in floating point, and frames that end together must end
 * at the same number or speedscope leaves one open.
 */
static void test_chrome_whole_microseconds(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	const struct ms_stack_frame work[] = { { 0, 0, 0x200 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame other[] = { { 0, 0, 0x300 }, { 0, MS_FRAME_RETURN, 0x100 } };
	struct ms_capture *cap;
	char *json;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/prog");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	frame_fact(b, 0, 0x100, "main");
	frame_fact(b, 0, 0x200, "work");
	frame_fact(b, 0, 0x300, "other");
	sample(b, 10, 1499, 1001, 2, work);
	sample(b, 10, 2500, 1001, 2, other);
	/* a gap of 300 ns: less than the rounding, so none (other goes on) */
	sample(b, 10, 3801, 1000, 2, other);
	/* a gap of 2 us: other and main end, and begin again */
	sample(b, 10, 6801, 1000, 2, other);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	json = export_mem(cap, MS_FORMAT_CHROME, NULL, NULL);
	/* 1499 ns is 1 us, 2500 ns 3 us, 4801 ns 5: main ends where other does */
	assert_non_null(strstr(json, "{\"name\":\"work\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"));
	assert_non_null(strstr(json, "{\"name\":\"main\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":1,\"dur\":4,"));
	assert_non_null(strstr(json, "{\"name\":\"other\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":3,\"dur\":2,"));
	/* after the real gap: both again, from 7 us to 8 */
	assert_non_null(strstr(json, "{\"name\":\"main\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":7,\"dur\":1,"));
	assert_non_null(strstr(json, "{\"name\":\"other\",\"cat\":\"prog\",\"ph\":\"X\",\"ts\":7,\"dur\":1,"));
	/* nothing else: a frame never ends and begins again at one time */
	{
		unsigned n = 0;

		for (const char *p = json; (p = strstr(p, "\"ph\":\"X\"")); p++)
			n++;
		assert_int_equal(n, 5);
	}
	free(json);
	ms_capture_free(cap);
}

static void test_speedscope(void **state)
{
	struct ms_capture *cap = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *json;

	(void)state;
	json = export_mem(cap, MS_FORMAT_SPEEDSCOPE, &o, NULL);
	assert_string_equal(json,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"shared\":{\"frames\":[{\"name\":\"a;b\",\"file\":\"/bin/prog\"},"
		"{\"name\":\"main\",\"file\":\"/bin/prog\"},{\"name\":\"work\",\"file\":\"/bin/prog\"},"
		"{\"name\":\"sys\",\"file\":\"[kernel.kallsyms]\"}]},"
		"\"profiles\":[{\"type\":\"sampled\",\"name\":\"prog (1/10)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":3,\"samples\":[[1,2],[]],\"weights\":[2,1]},"
		"{\"type\":\"sampled\",\"name\":\"worker (1/11)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":2,\"samples\":[[1,0],[1,2,3]],\"weights\":[1,1]}],"
		"\"name\":\"./prog x\",\"activeProfileIndex\":0,\"exporter\":\"microscope\"}\n");
	free(json);
	o.weight = MS_WEIGHT_TIME;
	json = export_mem(cap, MS_FORMAT_SPEEDSCOPE, &o, NULL);
	assert_non_null(strstr(json, "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":3000,\"samples\":[[1,2],[]],\"weights\":[2000,1000]}"));
	free(json);
	ms_capture_free(cap);
}

/* ---- loss ---- */

static void test_loss(void **state)
{
	struct ms_capture *cap = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	unsigned dropped;
	const char *msg;

	(void)state;
	assert_int_equal(ms_capture_facts(cap) & (MS_FACT_TIMES | MS_FACT_THREADS | MS_FACT_COUNTS |
						  MS_FACT_PERIODS | MS_FACT_ADDRESSES | MS_FACT_MODULES |
						  MS_FACT_STACK_ENDS | MS_FACT_INFO),
			 MS_FACT_TIMES | MS_FACT_THREADS | MS_FACT_COUNTS | MS_FACT_PERIODS |
			 MS_FACT_ADDRESSES | MS_FACT_MODULES | MS_FACT_STACK_ENDS | MS_FACT_INFO);
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "small.msc");
	msg = stderr_end();
	assert_int_equal(count_lines(msg), 1);
	assert_true(dropped & MS_FACT_THREADS);
	assert_false(dropped & MS_FACT_COUNTS);
	/* one short line: the facts by short names, the input, where to read more */
	assert_non_null(strstr(msg, ": note: folded drops times, threads, periods, addresses, "
				"modules, frame marks, info of 'small.msc' (ms-export(1))\n"));
	o.thread_root = true;
	o.weight = MS_WEIGHT_TIME;
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "small.msc");
	stderr_end();
	assert_false(dropped & MS_FACT_THREADS);
	assert_true(dropped & MS_FACT_COUNTS);
	assert_false(ms_capture_facts(cap) & ~ms_format_keeps(MS_FORMAT_CAPTURE, NULL));
	ms_capture_free(cap);
}

static void test_format_names(void **state)
{
	(void)state;
	assert_int_equal(ms_format_by_extension("a/p.pb.gz"), MS_FORMAT_PPROF);
	assert_int_equal(ms_format_by_extension("cpu.pprof"), MS_FORMAT_PPROF);
	assert_int_equal(ms_format_by_extension("p.msc"), MS_FORMAT_CAPTURE);
	assert_int_equal(ms_format_by_extension("p.folded"), MS_FORMAT_FOLDED);
	assert_int_equal(ms_format_by_extension("p.speedscope.json"), MS_FORMAT_SPEEDSCOPE);
	assert_int_equal(ms_format_by_extension("trace.json"), MS_FORMAT_CHROME);
	assert_int_equal(ms_format_by_extension("p"), MS_FORMAT_NONE);
	assert_int_equal(ms_format_by_magic("\x1f\x8b\x08", 3), MS_FORMAT_PPROF);
	assert_int_equal(ms_format_by_magic(MS_CAPTURE_MAGIC, 8), MS_FORMAT_CAPTURE);
	assert_int_equal(ms_format_by_magic("main;a 1", 8), MS_FORMAT_NONE);
	assert_int_equal(ms_format_by_name("speedscope"), MS_FORMAT_SPEEDSCOPE);
	assert_int_equal(ms_format_by_name("svg"), MS_FORMAT_NONE);
}

/* ---- pprof import: a valid profile, and each way to break it ---- */

/*
 * strings: "", samples, count, cpu, nanoseconds, main, work, /bin/prog,
 * pid, tid, thread, prog, src/a.c, inl
 */
static char *strtab[] = { "", "samples", "count", "cpu", "nanoseconds", "main", "work",
			  "/bin/prog", "pid", "tid", "thread", "prog", "src/a.c", "inl" };

struct pb {
	Profile p;
	Perftools__Profiles__ValueType st[2], *stp[2], period_type;
	Perftools__Profiles__Mapping map, *mapp[1];
	Perftools__Profiles__Function fn[3], *fnp[3];
	Perftools__Profiles__Line line[4], *linep[4];
	Perftools__Profiles__Location loc[3], *locp[3];
	Perftools__Profiles__Label lab[3], *labp[3];
	Perftools__Profiles__Sample smp[2], *smpp[2];
	uint64_t ids[2][3];
	int64_t values[2][2];
};

/*
 * Sample 0: 3 x (work inlining inl at 0x200) <- main, 3000 ns, thread
 * 1/10 "prog"; sample 1: main alone (a location with address 0), once.
 */
static void pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
	perftools__profiles__profile__init(&b->p);
	b->p.n_string_table = sizeof(strtab) / sizeof(strtab[0]);
	b->p.string_table = strtab;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->st[i]);
		b->st[i].type = i ? 3 : 1;
		b->st[i].unit = i ? 4 : 2;
		b->stp[i] = &b->st[i];
	}
	b->p.n_sample_type = 2;
	b->p.sample_type = b->stp;
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = 3;
	b->period_type.unit = 4;
	b->p.period_type = &b->period_type;
	b->p.period = 1000;
	perftools__profiles__mapping__init(&b->map);
	b->map.id = 1;
	b->map.filename = 7;
	b->map.has_functions = true;
	b->mapp[0] = &b->map;
	b->p.n_mapping = 1;
	b->p.mapping = b->mapp;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__function__init(&b->fn[i]);
		b->fn[i].id = (uint64_t)i + 1;
		b->fn[i].name = i == 0 ? 5 : i == 1 ? 6 : 13;
		b->fn[i].filename = 12;
		b->fn[i].start_line = 10 * (i + 1);
		b->fnp[i] = &b->fn[i];
	}
	b->p.n_function = 3;
	b->p.function = b->fnp;
	for (int i = 0; i < 4; i++) {
		perftools__profiles__line__init(&b->line[i]);
		b->linep[i] = &b->line[i];
	}
	/* location 1: main; location 2: inl inlined into work */
	b->line[0].function_id = 1;
	b->line[0].line = 12;
	b->line[1].function_id = 3;
	b->line[1].line = 31;
	b->line[2].function_id = 2;
	b->line[2].line = 22;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__location__init(&b->loc[i]);
		b->loc[i].id = (uint64_t)i + 1;
		b->loc[i].mapping_id = 1;
		b->locp[i] = &b->loc[i];
	}
	b->loc[0].address = 0x100;
	b->loc[0].n_line = 1;
	b->loc[0].line = &b->linep[0];
	b->loc[1].address = 0x200;
	b->loc[1].n_line = 2;
	b->loc[1].line = &b->linep[1];
	/* location 3: main again, with no address */
	b->loc[2].address = 0;
	b->loc[2].n_line = 1;
	b->loc[2].line = &b->linep[0];
	b->p.n_location = 3;
	b->p.location = b->locp;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__label__init(&b->lab[i]);
		b->labp[i] = &b->lab[i];
	}
	b->lab[0].key = 8;
	b->lab[0].num = 1;
	b->lab[1].key = 9;
	b->lab[1].num = 10;
	b->lab[2].key = 10;
	b->lab[2].str = 11;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__sample__init(&b->smp[i]);
		b->smpp[i] = &b->smp[i];
		b->smp[i].value = b->values[i];
		b->smp[i].n_value = 2;
		b->smp[i].location_id = b->ids[i];
	}
	b->ids[0][0] = 2;
	b->ids[0][1] = 1;
	b->smp[0].n_location_id = 2;
	b->values[0][0] = 3;
	b->values[0][1] = 3000;
	b->smp[0].n_label = 3;
	b->smp[0].label = b->labp;
	b->ids[1][0] = 3;
	b->smp[1].n_location_id = 1;
	b->values[1][0] = 1;
	b->values[1][1] = 1000;
	b->p.n_sample = 2;
	b->p.sample = b->smpp;
}

static unsigned char *pb_pack(const struct pb *b, size_t *len)
{
	unsigned char *buf;

	*len = perftools__profiles__profile__get_packed_size(&b->p);
	buf = malloc(*len ? *len : 1);
	perftools__profiles__profile__pack(&b->p, buf);
	return buf;
}

static unsigned char *gzip_mem(const unsigned char *in, size_t len, size_t *out_len)
{
	z_stream z;
	size_t alloc = len + 1024;
	unsigned char *out = malloc(alloc);

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)alloc;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Importing buf must fail with one message holding every fragment given. */
static void expect_pprof_refused(const void *buf, size_t len, ...)
{
	struct ms_capture *cap;
	const char *msg, *frag;
	va_list ap;

	stderr_begin();
	cap = ms_pprof_import(buf, len, "bad.pb.gz", "test 1");
	msg = stderr_end();
	assert_null(cap);
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "'bad.pb.gz'"));
	va_start(ap, len);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(msg, frag))
			fail_msg("message '%s' lacks '%s'", msg, frag);
	va_end(ap);
}

static void test_pprof_import(void **state)
{
	struct pb b;
	size_t len, zlen;
	unsigned char *raw, *gz;
	struct ms_capture *cap;
	bool saw_inline = false, saw_no_address = false;

	(void)state;
	pb_init(&b);
	raw = pb_pack(&b, &len);
	gz = gzip_mem(raw, len, &zlen);
	/* plain and gzipped give the same */
	cap = ms_pprof_import(gz, zlen, "ok.pb.gz", "test 1");
	assert_non_null(cap);
	assert_loadable(cap);
	/* a row per pprof sample, counting its samples, its period their time */
	assert_int_equal(cap->n_samples, 2);
	assert_int_equal(ms_capture_sample_count(cap), 4);
	assert_int_equal(cap->n_threads, 2);	/* 1/10 "prog" and 0/0 (no labels) */
	assert_string_equal(cap->strings[cap->threads[1].name], "prog");
	for (uint32_t i = 0; i < cap->n_samples; i++) {
		assert_int_equal(cap->samples[i].period, 1000 * cap->samples[i].count);
		assert_int_equal(cap->samples[i].end, MS_END_UNKNOWN);
	}
	for (uint32_t i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];

		if (f->n_lines == 2) {
			/* innermost first: inl inlined into work, whose symbol names the frame */
			assert_string_equal(cap->strings[cap->functions[cap->lines[f->first_line].function].name], "inl");
			assert_int_equal(cap->lines[f->first_line].line, 31);
			assert_string_equal(cap->strings[f->name], "work");
			saw_inline = true;
		}
		if (f->flags & MS_FRAME_NO_ADDRESS) {
			assert_string_equal(cap->strings[f->name], "main");
			saw_no_address = true;
		}
	}
	assert_true(saw_inline);
	assert_true(saw_no_address);
	assert_int_equal(cap->n_modules, 1);
	assert_string_equal(cap->strings[cap->modules[0].path], "/bin/prog");
	ms_capture_free(cap);
	cap = ms_pprof_import(raw, len, "ok.pb", "test 1");
	assert_non_null(cap);
	assert_int_equal(ms_capture_sample_count(cap), 4);
	ms_capture_free(cap);
	free(raw);
	free(gz);
}

static void test_pprof_bad_gzip(void **state)
{
	struct pb b;
	size_t len, zlen;
	unsigned char *raw, *gz, *more;

	(void)state;
	pb_init(&b);
	raw = pb_pack(&b, &len);
	gz = gzip_mem(raw, len, &zlen);
	expect_pprof_refused(gz, zlen / 2, "cut short after", NULL);
	expect_pprof_refused(gz, 10, "cut short", NULL);
	gz[12] ^= 0xff;
	gz[13] ^= 0x55;
	expect_pprof_refused(gz, zlen, "gzip", NULL);
	free(gz);
	gz = gzip_mem(raw, len, &zlen);
	more = malloc(zlen + 4);
	memcpy(more, gz, zlen);
	memcpy(more + zlen, "junk", 4);
	expect_pprof_refused(more, zlen + 4, "4 bytes of something else follow the gzip data", NULL);
	expect_pprof_refused("", 0, "empty", NULL);
	free(more);
	free(gz);
	free(raw);
}

static void test_pprof_bad_wire(void **state)
{
	(void)state;
	/* field 2 (sample) is a message: a varint there is the wrong wire type */
	expect_pprof_refused("\x10\x01", 2, "at byte 0", "Profile.sample (field 2) has wire type 0", NULL);
	/* time_nanos's varint cut short */
	expect_pprof_refused("\x48\x80", 2, "at byte 0", "cut short", NULL);
	/* a 6-byte string table entry in 3 bytes */
	expect_pprof_refused("\x32\x06" "abc", 5, "claims 6 bytes, past the end", NULL);
	/* a group, and a wire type that does not exist */
	expect_pprof_refused("\xa3\x01", 2, "field 20 uses a group wire type", NULL);
	expect_pprof_refused("\xa6\x01\x00", 3, "field 20 has wire type 6, which does not exist", NULL);
	/* an unknown field is skipped by its wire type, and must be whole */
	expect_pprof_refused("\xa2\x01\x05" "ab", 5, "field 20 claims 5 bytes", NULL);
	expect_pprof_refused("\x00\x00", 2, "field number 0", NULL);
	/* a string with a NUL byte */
	expect_pprof_refused("\x32\x00\x32\x03" "a\0b", 7, "at byte 2", "NUL byte", NULL);
	/* inside a sample: location_id (packed varints) cut short, at its own byte */
	expect_pprof_refused("\x32\x00\x12\x03\x0a\x01\x80", 7, "at byte 6",
			     "packed varint of Sample.location_id", NULL);
	/* a sample's value with a fixed64 wire type */
	expect_pprof_refused("\x12\x09\x11" "12345678", 11, "at byte 2", "Sample.value (field 2) has wire type 1",
			     NULL);
}

static void refused_after(void (*mutate)(struct pb *), ...)
{
	struct pb b;
	size_t len;
	unsigned char *raw;
	const char *frag;
	struct ms_capture *cap;
	const char *msg;
	va_list ap;

	pb_init(&b);
	mutate(&b);
	raw = pb_pack(&b, &len);
	stderr_begin();
	cap = ms_pprof_import(raw, len, "bad.pb", "test 1");
	msg = stderr_end();
	assert_null(cap);
	assert_int_equal(count_lines(msg), 1);
	va_start(ap, mutate);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(msg, frag))
			fail_msg("message '%s' lacks '%s'", msg, frag);
	va_end(ap);
	free(raw);
}

static void m_string_past_end(struct pb *b) { b->fn[1].name = 99; }
static void m_label_past_end(struct pb *b) { b->lab[2].str = 14; }
static void m_negative_string(struct pb *b) { b->map.filename = -1; }
static void m_zero_location_id(struct pb *b) { b->loc[2].id = 0; }
static void m_zero_function_id(struct pb *b) { b->fn[0].id = 0; }
static void m_zero_mapping_id(struct pb *b) { b->map.id = 0; }
static void m_duplicate_location(struct pb *b) { b->loc[2].id = 1; }
static void m_missing_location(struct pb *b) { b->ids[0][1] = 42; }
static void m_sample_location_zero(struct pb *b) { b->ids[1][0] = 0; }
static void m_missing_function(struct pb *b) { b->line[2].function_id = 7; }
static void m_line_function_zero(struct pb *b) { b->line[0].function_id = 0; }
static void m_missing_mapping(struct pb *b) { b->loc[1].mapping_id = 5; }
static void m_first_string(struct pb *b) { (void)b; strtab[0] = "x"; }
static void m_value_count(struct pb *b) { b->smp[1].n_value = 1; }
static void m_negative_value(struct pb *b) { b->values[0][0] = -3; }
/* count only: the period times INT64_MAX samples is past 64 bits of nanoseconds */
static void m_period_overflow(struct pb *b)
{
	b->p.n_sample_type = 1;
	b->smp[0].n_value = b->smp[1].n_value = 1;
	b->values[0][0] = INT64_MAX;
}
static void m_no_sample_types(struct pb *b) { b->p.n_sample_type = 0; b->smp[0].n_value = b->smp[1].n_value = 0; }
static void m_negative_period(struct pb *b) { b->p.period = -5; }

static void test_pprof_bad_refs(void **state)
{
	(void)state;
	refused_after(m_string_past_end, "function's name", "string 99, past the end of the string table (14 strings)",
		      "(byte ", NULL);
	refused_after(m_label_past_end, "label's value", "string 14", NULL);
	refused_after(m_negative_string, "mapping's file name", "string -1", NULL);
	refused_after(m_zero_location_id, "location 2", "id 0", NULL);
	refused_after(m_zero_function_id, "function 0", "id 0", NULL);
	refused_after(m_zero_mapping_id, "mapping 0", "id 0", NULL);
	refused_after(m_duplicate_location, "location 2", "reuses id 1 of location 0", NULL);
	refused_after(m_missing_location, "sample 0 (byte ", "frame 1 names location 42, which is not defined",
		      NULL);
	refused_after(m_sample_location_zero, "sample 1", "location id 0", NULL);
	refused_after(m_missing_function, "location 1", "names function 7, which is not defined", NULL);
	refused_after(m_line_function_zero, "location 0", "function id 0", NULL);
	refused_after(m_missing_mapping, "location 1", "names mapping 5, which is not defined", NULL);
	refused_after(m_first_string, "must start with the empty string", NULL);
	strtab[0] = "";
	refused_after(m_value_count, "sample 1", "has 1 values for 2 sample types", NULL);
	refused_after(m_negative_value, "sample 0", "negative value (-3) of type 'samples'", NULL);
	refused_after(m_period_overflow, "sample 0", "samples of period 1000 ns add up past", NULL);
	refused_after(m_no_sample_types, "no sample types", NULL);
	refused_after(m_negative_period, "period is negative", NULL);
}

/* A stack deeper than the capture takes keeps its innermost frames. */
static void test_pprof_deep_stack(void **state)
{
	struct pb b;
	uint64_t *ids = calloc(MS_FRAMES_MAX + 10, sizeof(*ids));
	size_t len;
	unsigned char *raw;
	struct ms_capture *cap;

	(void)state;
	pb_init(&b);
	for (int i = 0; i < MS_FRAMES_MAX + 10; i++)
		ids[i] = i % 2 ? 1 : 2;
	b.smp[0].location_id = ids;
	b.smp[0].n_location_id = MS_FRAMES_MAX + 10;
	raw = pb_pack(&b, &len);
	cap = ms_pprof_import(raw, len, "deep.pb", "test 1");
	assert_non_null(cap);
	assert_loadable(cap);
	assert_int_equal(cap->n_problems, 1);
	assert_string_equal(cap->strings[cap->problems[0].code], "import-stack-too-deep");
	assert_int_equal(cap->problems[0].count, 3);
	for (uint32_t i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].end == MS_END_DEPTH)
			assert_int_equal(cap->stacks[cap->samples[i].stack].depth, MS_FRAMES_MAX);
	ms_capture_free(cap);
	free(raw);
	free(ids);
}

/* What a capture cannot hold is named in one line; the import goes on. */
static void test_pprof_loss_line(void **state)
{
	struct pb b;
	size_t len;
	unsigned char *raw;
	struct ms_capture *cap;
	const char *msg;

	(void)state;
	pb_init(&b);
	b.lab[2].key = 12;	/* a label "src/a.c" */
	b.map.file_offset = 4096;
	raw = pb_pack(&b, &len);
	stderr_begin();
	cap = ms_pprof_import(raw, len, "lossy.pb", "test 1");
	msg = stderr_end();
	assert_non_null(cap);
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "labels other than a thread's and its process's ids and names"));
	assert_non_null(strstr(msg, "mapping file offsets"));
	assert_non_null(strstr(msg, "'lossy.pb'"));
	ms_capture_free(cap);
	free(raw);
}

/* ---- folded import ---- */

static void expect_folded_refused(const char *text, size_t len, ...)
{
	struct ms_capture *cap;
	const char *msg, *frag;
	va_list ap;

	stderr_begin();
	cap = ms_folded_import(text, len, "bad.folded", "test 1");
	msg = stderr_end();
	assert_null(cap);
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "'bad.folded'"));
	va_start(ap, len);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(msg, frag))
			fail_msg("message '%s' lacks '%s'", msg, frag);
	va_end(ap);
}

#define REFUSED(text, ...) expect_folded_refused(text, sizeof(text) - 1, __VA_ARGS__, NULL)

static void test_folded_import(void **state)
{
	static const char text[] = "\xef\xbb\xbf" "main;work 2\r\n\n  \nmain;work;deep frame 1\n"
				   "[no frames] 3\nmain 0\nother;work 1";
	struct ms_capture *cap;
	uint32_t no_frames = 0;

	(void)state;
	cap = ms_folded_import(text, sizeof(text) - 1, "ok.folded", "test 1");
	assert_non_null(cap);
	assert_loadable(cap);
	/* a row per line that counts something */
	assert_int_equal(cap->n_samples, 4);
	assert_int_equal(ms_capture_sample_count(cap), 7);
	for (uint32_t i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].stack == MS_NONE)
			no_frames += cap->samples[i].count;
	assert_int_equal(no_frames, 3);
	/* names: main, work, "deep frame", other */
	assert_int_equal(cap->n_frames, 4);
	assert_string_equal(ms_capture_info_text(cap, "import"), "folded");
	ms_capture_free(cap);
}

static void test_folded_bad(void **state)
{
	static char deep[(MS_FRAMES_MAX + 1) * 2 + 8];
	char *longline;
	size_t n = 0;

	(void)state;
	REFUSED("main;a 1\nmain;b\n", "line 2", "no count");
	REFUSED("main;a \n", "line 1", "no count");
	REFUSED("main;a -4\n", "line 1", "'-4' is negative");
	REFUSED("main;a 1.5\n", "line 1", "'1.5' is not a whole number");
	REFUSED("main;a 0x10\n", "'0x10' is not a whole number");
	REFUSED("main;a 18446744073709551616\n", "line 1", "is over 18446744073709551615");
	REFUSED("main;a 99999999999999999999999\n", "line 1", "is over 18446744073709551615");
	REFUSED("a 18446744073709551615\nb 1\n", "line 2", "add up past 18446744073709551615");
	REFUSED("main;;a 1\n", "line 1", "column 6: an empty frame name");
	REFUSED("main;a; 1\n", "column 8: an empty frame name");
	REFUSED(" 5\n", "line 1", "no frames before the count");
	REFUSED("ok 1\nma\0in 1\n", "line 2", "NUL byte");
	for (int i = 0; i <= MS_FRAMES_MAX; i++) {
		deep[n++] = 'f';
		deep[n++] = ';';
	}
	deep[n - 1] = ' ';
	deep[n++] = '1';
	expect_folded_refused(deep, n, "line 1", "more than 1024 frames", NULL);
	longline = malloc(MS_IMPORT_LINE_MAX + 16);
	memset(longline, 'x', MS_IMPORT_LINE_MAX + 8);
	memcpy(longline + MS_IMPORT_LINE_MAX + 8, " 1\n", 3);
	expect_folded_refused(longline, MS_IMPORT_LINE_MAX + 11, "line 1", "longer than", NULL);
	free(longline);
}

/* The whole pipeline of a file: nothing left under the name on failure. */
static void test_import_write(void **state)
{
	char dir[] = "/tmp/ms-formats-test.XXXXXX", in[128], out[128];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/in.folded", dir);
	snprintf(out, sizeof(out), "%s/out.msc", dir);
	f = fopen(in, "w");
	fputs("a;b 2\nc\n", f);
	fclose(f);
	stderr_begin();
	assert_int_equal(ms_import_write(in, MS_FORMAT_FOLDED, out, "test 1"), -1);
	assert_non_null(strstr(stderr_end(), "no capture written"));
	assert_int_equal(access(out, F_OK), -1);
	f = fopen(in, "w");
	fputs("a;b 2\nc 1\n", f);
	fclose(f);
	assert_int_equal(ms_import_write(in, MS_FORMAT_FOLDED, out, "test 1"), 0);
	assert_int_equal(access(out, F_OK), 0);
	unlink(in);
	unlink(out);
	rmdir(dir);
}

/* ---- weighted rows: imports that say "this stack, N times" ---- */

/* The bomb of issue 15: 13 bytes that claim 2^26 samples make one row. */
static void test_folded_import_bomb(void **state)
{
	static const char text[] = "a;b 67108864";
	struct ms_capture *cap;
	char *top;

	(void)state;
	cap = ms_folded_import(text, sizeof(text) - 1, "bomb.folded", "test 1");
	assert_non_null(cap);
	assert_int_equal(cap->n_samples, 1);
	top = top_text(cap);
	assert_string_equal(top, "a 0 67108864\nb 67108864 67108864\nsamples 67108864\n");
	free(top);
	ms_capture_free(cap);
}

/*
 * A folded file weighted by period (perf script | stackcollapse-perf.pl
 * with periods): counts like 111500000 import as they are, up to the most
 * a count can be.
 */
static void test_folded_import_periods(void **state)
{
	static const char text[] = "perf;main;work 111500000\n"
				   "perf;main;idle 2230000000\n"
				   "perf;main;work 111500000\n"
				   "perf;spin 18446744071256551615\n";
	struct ms_capture *cap;
	char *top, *folded;

	(void)state;
	cap = ms_folded_import(text, sizeof(text) - 1, "periods.folded", "test 1");
	assert_non_null(cap);
	assert_int_equal(cap->n_samples, 4);
	top = top_text(cap);
	assert_string_equal(top, "idle 2230000000 2230000000\n"
				 "main 0 2453000000\n"
				 "perf 0 18446744073709551615\n"
				 "spin 18446744071256551615 18446744071256551615\n"
				 "work 223000000 223000000\n"
				 "samples 18446744073709551615\n");
	free(top);
	/* and out again as the same counts, one line per stack */
	folded = export_mem(cap, MS_FORMAT_FOLDED, NULL, NULL);
	assert_string_equal(folded, "perf;main;idle 2230000000\n"
				    "perf;main;work 223000000\n"
				    "perf;spin 18446744071256551615\n");
	free(folded);
	ms_capture_free(cap);
}

/* cap exported as f with options o: a few bytes, holding every fragment given. */
static void expect_small_export(const struct ms_capture *cap, enum ms_format f,
				const struct ms_export_options *o, ...)
{
	const char *frag;
	size_t len;
	char *out = export_mem(cap, f, o, &len);
	va_list ap;

	assert_true(len < 4096);
	va_start(ap, o);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(out, frag))
			fail_msg("%s output lacks '%s': %s", ms_format_name(f), frag, out);
	va_end(ap);
	free(out);
}

/* Every exporter writes a weighted row's count as the format's weight, never as N entries. */
static void test_export_weighted(void **state)
{
	static const char text[] = "main;work 67108864\nmain 3\n";
	struct ms_capture *cap = ms_folded_import(text, sizeof(text) - 1, "w.folded", "test 1");
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	size_t len, rlen;
	char *gz;
	unsigned char *raw;
	Profile *p;
	int64_t sum = 0;

	(void)state;
	assert_non_null(cap);
	expect_small_export(cap, MS_FORMAT_SPEEDSCOPE, &o, "\"endValue\":67108867,",
			    "\"weights\":[3,67108864]", NULL);
	o.chrome_form = MS_CHROME_SAMPLES;
	expect_small_export(cap, MS_FORMAT_CHROME, &o, "\"weight\":67108864}", "\"weight\":3}",
			    NULL);
	/* a row without a period spans its count of the default 1 ms */
	o.chrome_form = MS_CHROME_EVENTS;
	expect_small_export(cap, MS_FORMAT_CHROME, &o, "\"dur\":67108864000,", NULL);
	gz = export_mem(cap, MS_FORMAT_PPROF, NULL, &len);
	raw = gunzip_mem((unsigned char *)gz, len, &rlen);
	p = perftools__profiles__profile__unpack(NULL, rlen, raw);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 2);
	for (size_t i = 0; i < p->n_sample; i++)
		sum += p->sample[i]->value[0];
	assert_int_equal(sum, 67108867);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	ms_capture_free(cap);
}

/* pprof's values are int64: a count past them is refused with a message, not wrapped. */
static void test_pprof_export_count_too_large(void **state)
{
	static const char text[] = "a 18446744073709551615\n";
	struct ms_capture *cap = ms_folded_import(text, sizeof(text) - 1, "big.folded", "test 1");
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	const char *msg;

	(void)state;
	assert_non_null(cap);
	stderr_begin();
	assert_int_equal(ms_export(out, cap, MS_FORMAT_PPROF, NULL), -1);
	msg = stderr_end();
	fclose(out);
	free(buf);
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "18446744073709551615 samples"));
	assert_non_null(strstr(msg, "folded or speedscope"));
	ms_capture_free(cap);
}

/* A pprof sample of 2^62 samples is one row (the old importer made one per sample). */
static void test_pprof_import_huge_count(void **state)
{
	struct pb b;
	size_t len;
	unsigned char *raw;
	struct ms_capture *cap;

	(void)state;
	pb_init(&b);
	b.values[1][0] = INT64_C(1) << 62;
	raw = pb_pack(&b, &len);
	cap = ms_pprof_import(raw, len, "huge.pb", "test 1");
	assert_non_null(cap);
	assert_int_equal(cap->n_samples, 2);
	assert_int_equal(ms_capture_sample_count(cap), (UINT64_C(1) << 62) + 3);
	assert_loadable(cap);
	ms_capture_free(cap);
	free(raw);
}

/* ---- time under a CPU budget ---- */

/*
 * small_capture_duty(true)'s samples stand for 1000 (work, at 1000 ns),
 * 2000 (work, 2000), 4000 (a;b: 2000 at half), 4000 (sys: 1000 at a
 * quarter) and 1000 ns (no frames, at 5000, all on again): the formats
 * that weigh by time give those, so a pprof read back has the time right.
 */
static void test_export_duty_time(void **state)
{
	struct ms_capture *cap = small_capture_duty(true), *back;
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	struct ms_summary sum;
	size_t len, plen;
	char *out;
	unsigned char *raw;
	Profile *p;
	int64_t cpu = 0, work = 0;

	(void)state;
	out = export_mem(cap, MS_FORMAT_PPROF, NULL, &len);
	raw = gunzip_mem((unsigned char *)out, len, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	assert_string_equal(pstr(p, p->sample_type[1]->unit), "nanoseconds");
	for (size_t i = 0; i < p->n_sample; i++) {
		cpu += p->sample[i]->value[1];
		if (p->sample[i]->n_location_id == 2 &&
		    !strcmp(pstr(p, pfunc(p, ploc(p, p->sample[i]->location_id[0])->line[0]->function_id)->name),
			    "work"))
			work = p->sample[i]->value[1];
	}
	assert_int_equal(cpu, 12000);
	assert_int_equal(work, 3000);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);

	/* read back: no duty rows, the time in its periods */
	stderr_begin();
	back = ms_pprof_import(out, len, "duty.pb.gz", "test 1");
	stderr_end();
	assert_non_null(back);
	assert_int_equal(back->n_duty, 0);
	assert_int_equal(ms_summary_compute(&sum, back), 0);
	assert_int_equal(sum.weight, 12000);
	ms_summary_release(&sum);
	ms_capture_free(back);
	free(out);

	o.weight = MS_WEIGHT_TIME;
	out = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(out,
			    "[no frames] 1000\n"
			    "main;a:b 4000\n"
			    "main;work 3000\n"
			    "main;work;sys 4000\n");
	free(out);
	out = export_mem(cap, MS_FORMAT_SPEEDSCOPE, &o, NULL);
	assert_non_null(strstr(out, "\"name\":\"prog (1/10)\",\"unit\":\"nanoseconds\",\"startValue\":0,"
				    "\"endValue\":4000,\"samples\":[[1,2],[]],\"weights\":[3000,1000]}"));
	assert_non_null(strstr(out, "\"name\":\"worker (1/11)\",\"unit\":\"nanoseconds\",\"startValue\":0,"
				    "\"endValue\":8000,\"samples\":[[1,0],[1,2,3]],\"weights\":[4000,4000]}"));
	free(out);
	/* counted in samples, a folded file is what it was */
	o.weight = MS_WEIGHT_SAMPLES;
	out = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(out, "[no frames] 1\nmain;a:b 1\nmain;work 2\nmain;work;sys 1\n");
	free(out);
	ms_capture_free(cap);
}

/* The duty is a fact: kept where samples weigh their time, said dropped elsewhere. */
static void test_loss_duty(void **state)
{
	struct ms_capture *cap = small_capture_duty(true), *plain = small_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	unsigned dropped;
	const char *msg;

	(void)state;
	assert_true(ms_capture_facts(cap) & MS_FACT_DUTY);
	assert_false(ms_capture_facts(plain) & MS_FACT_DUTY);
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "duty.msc");
	msg = stderr_end();
	assert_true(dropped & MS_FACT_DUTY);
	assert_non_null(strstr(msg, ", duty of 'duty.msc'"));
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_CHROME, &o, "duty.msc");
	stderr_end();
	assert_true(dropped & MS_FACT_DUTY);
	o.weight = MS_WEIGHT_TIME;
	stderr_begin();
	assert_false(ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "duty.msc") & MS_FACT_DUTY);
	assert_false(ms_export_note_loss(cap, MS_FORMAT_SPEEDSCOPE, &o, "duty.msc") & MS_FACT_DUTY);
	assert_false(ms_export_note_loss(cap, MS_FORMAT_PPROF, &o, "duty.msc") & MS_FACT_DUTY);
	stderr_end();
	ms_capture_free(plain);
	ms_capture_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_export),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_pprof_unnamed_frames),
		cmocka_unit_test(test_folded_export),
		cmocka_unit_test(test_folded_round_trip),
		cmocka_unit_test(test_chrome_events),
		cmocka_unit_test(test_chrome_whole_microseconds),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_export_duty_time),
		cmocka_unit_test(test_loss_duty),
		cmocka_unit_test(test_format_names),
		cmocka_unit_test(test_pprof_import),
		cmocka_unit_test(test_pprof_bad_gzip),
		cmocka_unit_test(test_pprof_bad_wire),
		cmocka_unit_test(test_pprof_bad_refs),
		cmocka_unit_test(test_pprof_deep_stack),
		cmocka_unit_test(test_pprof_loss_line),
		cmocka_unit_test(test_folded_import),
		cmocka_unit_test(test_folded_bad),
		cmocka_unit_test(test_import_write),
		cmocka_unit_test(test_folded_import_bomb),
		cmocka_unit_test(test_folded_import_periods),
		cmocka_unit_test(test_export_weighted),
		cmocka_unit_test(test_pprof_export_count_too_large),
		cmocka_unit_test(test_pprof_import_huge_count),
	};

	ms_set_progname("formats-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
