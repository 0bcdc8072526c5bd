/*
 * Unit tests of off-CPU time in exports: a small capture with CPU samples
 * and hand-made off-CPU intervals of known durations (complete, cut,
 * stackless, incomplete of every kind), through pprof (decoded back with
 * protobuf-c), folded and speedscope; that a capture without intervals
 * exports as before; and the refusals.
 *
 * The intervals and evidence rows are attached to a capture the builder
 * sealed (they are arrays of the test, detached before it is freed): the
 * exporters read only capture.h's tables.
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

#include "capture/builder.h"
#include "capture/capture.h"
#include "formats/formats.h"
#include "formats/internal.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

typedef Perftools__Profiles__Profile Profile;

#include "tests/unit/stderr-capture.h"

/* ---- the capture ---- */

static void frame_fact(struct ms_capture_builder *b, uint64_t address, const char *name)
{
	struct ms_frame f;

	memset(&f, 0, sizeof(f));
	f.module = 0;
	f.address = address;
	f.name = (struct ms_str){ name, (uint32_t)strlen(name) };
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/* Each CPU sample's period (0: an event that gave none). */
static uint64_t sample_period = 1000;

static void sample(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint32_t n,
		   const struct ms_stack_frame *frames)
{
	static struct ms_stack st;

	memset(&st, 0, sizeof(st));
	st.pid = 1;
	st.tid = tid;
	st.time = time;
	st.period = sample_period;
	st.reason = MS_END_OUTERMOST;
	st.n_frames = n;
	memcpy(st.frames, frames, n * sizeof(*frames));
	assert_int_equal(ms_capture_builder_stack(b, &st), 0);
}

/*
 * Threads 1/10 "prog", 1/11 "worker", 1/12 "idle"; CPU samples of 1000 ns:
 * prog work<-main twice, worker nanosleep<-main and read<-work<-main (so
 * those stacks exist for the intervals to stand on).
 */
static struct ms_capture *cpu_capture(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_comm c;
	struct ms_info info[] = {
		{ S("event"), true, S("cpu-clock"), 0 },
		{ S("frequency"), false, S(""), 1000 },
	};
	const struct ms_stack_frame work[] = { { 0, 0, 0x200 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame sleep[] = { { 0, 0, 0x400 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame rd[] = { { 0, 0, 0x500 }, { 0, MS_FRAME_RETURN, 0x200 },
					     { 0, MS_FRAME_RETURN, 0x100 } };
	struct ms_capture *cap;

	assert_non_null(b);
	for (size_t i = 0; i < sizeof(info) / sizeof(info[0]); i++)
		assert_int_equal(ms_capture_builder_info(b, &info[i]), 0);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/prog");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	frame_fact(b, 0x100, "main");
	frame_fact(b, 0x200, "work");
	frame_fact(b, 0x400, "nanosleep");
	frame_fact(b, 0x500, "read");
	memset(&c, 0, sizeof(c));
	c.pid = 1;
	c.tid = 10;
	c.comm = S("prog");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	c.tid = 11;
	c.comm = S("worker");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	c.tid = 12;
	c.comm = S("idle");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	sample(b, 10, 1000, 2, work);
	sample(b, 10, 2000, 2, work);
	sample(b, 11, 3000, 2, sleep);
	sample(b, 11, 4000, 3, rd);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static uint32_t thread_of(const struct ms_capture *cap, uint32_t tid)
{
	for (uint32_t i = 0; i < cap->n_threads; i++)
		if (cap->threads[i].tid == tid)
			return i;
	fail_msg("no thread %u", tid);
	return MS_NONE;
}

/* The stack of the first sample whose leaf frame is at address. */
static uint32_t stack_of(const struct ms_capture *cap, uint64_t leaf)
{
	for (uint32_t i = 0; i < cap->n_samples; i++) {
		uint32_t s = cap->samples[i].stack;

		if (s != MS_NONE && cap->frames[cap->stacks[s].frame].address == leaf)
			return s;
	}
	fail_msg("no stack with leaf 0x%llx", (unsigned long long)leaf);
	return MS_NONE;
}

enum { EV_SLEEPING, EV_PREEMPTED, EV_BLOCKED, EV_UNKNOWN, N_EV };
static struct ms_cap_evidence evidence[N_EV];
#define MAX_INTERVALS 16
static struct ms_cap_interval intervals[MAX_INTERVALS];

static void attach(struct ms_capture *cap, uint32_t n)
{
	cap->flags |= MS_CAPTURE_OFF_CPU;
	cap->n_intervals = n;
	cap->intervals = n ? intervals : NULL;
	cap->n_evidence = N_EV;
	cap->evidence = evidence;
}

static void detach_free(struct ms_capture *cap)
{
	cap->n_intervals = cap->n_evidence = 0;
	cap->intervals = NULL;
	cap->evidence = NULL;
	ms_capture_free(cap);
}

/*
 * The known truth, in nanoseconds of complete intervals:
 *   prog:   300 preempted on work<-main; 700 blocked on read<-work<-main
 *           cut short (stack-copy);
 *   worker: 2500 + 1000 sleeping on nanosleep<-main; 400 sleeping with no
 *           switch-out stack ("[no stack]");
 *   and incomplete ones, which weigh nothing: worker began inside (ended
 *   at 900), prog ended inside (from 7000) and lost its end (from 6500),
 *   idle lost its start (ended at 7500), all on stacks.
 */
static struct ms_capture *off_cpu_capture(void)
{
	struct ms_capture *cap = cpu_capture();
	uint32_t prog = thread_of(cap, 10), worker = thread_of(cap, 11), idle = thread_of(cap, 12);
	uint32_t work = stack_of(cap, 0x200), sleep = stack_of(cap, 0x400), rd = stack_of(cap, 0x500);
	const struct ms_cap_interval rows[] = {
		{ 0, 900, worker, MS_NONE, sleep, MS_END_OUTERMOST, MS_INTERVAL_BEGAN_INSIDE,
		  EV_UNKNOWN },
		{ 1500, 1800, prog, 0, work, MS_END_OUTERMOST, MS_INTERVAL_COMPLETE, EV_PREEMPTED },
		{ 2500, 5000, worker, 1, sleep, MS_END_OUTERMOST, MS_INTERVAL_COMPLETE, EV_SLEEPING },
		{ 5100, 6100, worker, 1, sleep, MS_END_OUTERMOST, MS_INTERVAL_COMPLETE, EV_SLEEPING },
		{ 5200, 5900, prog, 0, rd, MS_END_STACK_COPY, MS_INTERVAL_COMPLETE, EV_BLOCKED },
		{ 6000, 6400, worker, 0, MS_NONE, MS_END_UNKNOWN, MS_INTERVAL_COMPLETE, EV_SLEEPING },
		{ 6500, 0, prog, 1, work, MS_END_OUTERMOST, MS_INTERVAL_LOST_END, EV_SLEEPING },
		{ 7000, 0, prog, 0, sleep, MS_END_OUTERMOST, MS_INTERVAL_ENDED_INSIDE, EV_SLEEPING },
		{ 0, 7500, idle, MS_NONE, sleep, MS_END_OUTERMOST, MS_INTERVAL_LOST_START,
		  EV_UNKNOWN },
	};

	evidence[EV_SLEEPING] = (struct ms_cap_evidence){ MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE, 1, 0 };
	evidence[EV_PREEMPTED] = (struct ms_cap_evidence){ MS_CAUSE_PREEMPTED,
		MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 0x100, 1 };
	evidence[EV_BLOCKED] = (struct ms_cap_evidence){ MS_CAUSE_BLOCKED, MS_EVIDENCE_STATE, 2, 0 };
	evidence[EV_UNKNOWN] = (struct ms_cap_evidence){ MS_CAUSE_UNKNOWN, 0, 0, 0 };
	memcpy(intervals, rows, sizeof(rows));
	attach(cap, sizeof(rows) / sizeof(rows[0]));
	return cap;
}

/* ---- running exporters ---- */

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

static Profile *pprof_of(const struct ms_capture *cap, const struct ms_export_options *o)
{
	size_t len, plen, alloc = 1 << 20;
	char *gz = export_mem(cap, MS_FORMAT_PPROF, o, &len);
	unsigned char *raw = malloc(alloc);
	z_stream z;
	Profile *p;

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 31), Z_OK);
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)alloc;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	plen = z.total_out;
	inflateEnd(&z);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	free(raw);
	free(gz);
	return p;
}

static const char *pstr(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* The name of the function of location id's (one-line) location. */
static const char *loc_name(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->id != id)
			continue;
		assert_int_equal(l->n_line, 1);
		for (size_t k = 0; k < p->n_function; k++)
			if (p->function[k]->id == l->line[0]->function_id)
				return pstr(p, p->function[k]->name);
		fail_msg("location %llu names no function", (unsigned long long)id);
	}
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

/* A sample as one line: "thread tid cause: leaf;...;outermost = v0 v1 v2". */
static void sample_line(const Profile *p, const Perftools__Profiles__Sample *s, char *buf,
			size_t size)
{
	const char *thread = "-", *cause = "-";
	int64_t tid = 0;
	size_t n;

	for (size_t k = 0; k < s->n_label; k++) {
		const char *key = pstr(p, s->label[k]->key);

		if (!strcmp(key, "thread"))
			thread = pstr(p, s->label[k]->str);
		else if (!strcmp(key, "tid"))
			tid = s->label[k]->num;
		else if (!strcmp(key, "cause"))
			cause = pstr(p, s->label[k]->str);
	}
	n = (size_t)snprintf(buf, size, "%s %lld %s:", thread, (long long)tid, cause);
	for (size_t k = 0; k < s->n_location_id; k++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", k ? ";" : " ",
				      loc_name(p, s->location_id[k]));
	n += (size_t)snprintf(buf + n, size - n, " =");
	for (size_t k = 0; k < s->n_value; k++)
		n += (size_t)snprintf(buf + n, size - n, " %lld", (long long)s->value[k]);
}

/* The samples as lines, in the profile's order. */
static char *pprof_lines(const Profile *p)
{
	char *buf = NULL, line[512];
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	for (size_t i = 0; i < p->n_sample; i++) {
		sample_line(p, p->sample[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fclose(out);
	return buf;
}

/* ---- pprof ---- */

static void test_pprof_off_cpu(void **state)
{
	struct ms_capture *cap = off_cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Profile *p;
	char *lines;

	(void)state;
	p = pprof_of(cap, &o);
	assert_int_equal(p->n_sample_type, 3);
	assert_string_equal(pstr(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(pstr(p, p->sample_type[2]->type), "off-cpu");
	assert_string_equal(pstr(p, p->sample_type[2]->unit), "nanoseconds");
	/* pprof would show the last type: the CPU's is named the default */
	assert_string_equal(pstr(p, p->default_sample_type), "cpu");
	assert_string_equal(pstr(p, p->period_type->type), "cpu");
	lines = pprof_lines(p);
	/*
	 * CPU rows first, 0 off CPU; then one per (stack, thread, cut,
	 * cause) of the complete intervals, in the order of their first,
	 * 0 in the CPU columns; the incomplete ones are nowhere.
	 */
	assert_string_equal(lines,
		"prog 10 -: work;main = 2 2000 0\n"
		"worker 11 -: nanosleep;main = 1 1000 0\n"
		"worker 11 -: read;work;main = 1 1000 0\n"
		"prog 10 preempted: work;main = 0 0 300\n"
		"worker 11 sleeping: nanosleep;main = 0 0 3500\n"
		"prog 10 blocked: read;work;main;[truncated: stack-copy] = 0 0 700\n"
		"worker 11 sleeping: [no stack] = 0 0 400\n");
	free(lines);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* --cause: only those intervals; the CPU samples stay */
	assert_int_equal(ms_causes_by_name("sleeping", &o.causes), 0);
	p = pprof_of(cap, &o);
	lines = pprof_lines(p);
	assert_string_equal(lines,
		"prog 10 -: work;main = 2 2000 0\n"
		"worker 11 -: nanosleep;main = 1 1000 0\n"
		"worker 11 -: read;work;main = 1 1000 0\n"
		"worker 11 sleeping: nanosleep;main = 0 0 3500\n"
		"worker 11 sleeping: [no stack] = 0 0 400\n");
	free(lines);
	perftools__profiles__profile__free_unpacked(p, NULL);
	detach_free(cap);
}

/* Samples that are all intervals: pprof opens on off-CPU time. */
static void test_pprof_off_cpu_only(void **state)
{
	struct ms_capture *cap = off_cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	uint32_t n_samples = cap->n_samples;
	Profile *p;
	char *lines;

	(void)state;
	cap->n_samples = 0;
	p = pprof_of(cap, &o);
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pstr(p, p->sample_type[0]->type), "samples");
	assert_string_equal(pstr(p, p->sample_type[1]->type), "off-cpu");
	assert_string_equal(pstr(p, p->default_sample_type), "off-cpu");
	lines = pprof_lines(p);
	assert_string_equal(lines,
		"prog 10 preempted: work;main = 0 300\n"
		"worker 11 sleeping: nanosleep;main = 0 3500\n"
		"prog 10 blocked: read;work;main;[truncated: stack-copy] = 0 700\n"
		"worker 11 sleeping: [no stack] = 0 400\n");
	free(lines);
	perftools__profiles__profile__free_unpacked(p, NULL);
	cap->n_samples = n_samples;
	detach_free(cap);
}

/*
 * Recorded with --off-cpu but nothing complete: the type is there (the
 * time was recorded, and was none), and no sample weighs in it.
 */
static void test_pprof_no_complete_interval(void **state)
{
	struct ms_capture *cap = off_cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Profile *p;

	(void)state;
	for (uint32_t i = 0; i < cap->n_intervals; i++)
		if (intervals[i].missing == MS_INTERVAL_COMPLETE)
			intervals[i].evidence = EV_UNKNOWN;
	/* every complete one is unknown now: choose the others */
	o.causes = 1u << MS_CAUSE_SLEEPING | 1u << MS_CAUSE_BLOCKED;
	p = pprof_of(cap, &o);
	assert_int_equal(p->n_sample_type, 3);
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++)
		assert_int_equal(p->sample[i]->value[2], 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	detach_free(cap);
}

/* ---- without off-CPU time, nothing changes ---- */

static void test_unchanged_without_off_cpu(void **state)
{
	struct ms_capture *cap = off_cpu_capture(), *plain = cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	size_t a_len, b_len;
	char *a, *b;
	Profile *p;

	(void)state;
	o.producer = "microscope test";
	/* the samples' weights of every format are the samples' alone */
	for (enum ms_format f = MS_FORMAT_FOLDED; f <= MS_FORMAT_SPEEDSCOPE; f++) {
		for (int w = MS_WEIGHT_SAMPLES; w <= MS_WEIGHT_TIME; w++) {
			o.weight = (enum ms_weight)w;
			a = export_mem(cap, f, &o, &a_len);
			b = export_mem(plain, f, &o, &b_len);
			assert_int_equal(a_len, b_len);
			assert_memory_equal(a, b, a_len);
			free(a);
			free(b);
		}
	}
	/* pprof of a capture that recorded none: no type, no default, no label */
	o.weight = MS_WEIGHT_SAMPLES;
	p = pprof_of(plain, &o);
	assert_int_equal(p->n_sample_type, 2);
	assert_int_equal(p->default_sample_type, 0);
	for (size_t i = 0; i < p->n_string_table; i++) {
		assert_string_not_equal(p->string_table[i], "off-cpu");
		assert_string_not_equal(p->string_table[i], "cause");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	detach_free(cap);
	ms_capture_free(plain);
}

/*
 * Read back, a pprof with off-CPU time gives the samples the same pprof
 * without it gives: the off-CPU samples count no samples, and their
 * nanoseconds are no period of the samples' (here the only nanoseconds,
 * as the samples have no periods).
 */
static void test_pprof_import_ignores_off_cpu(void **state)
{
	struct ms_capture *cap, *plain, *a, *b;
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	size_t a_len, b_len;
	char *a_buf, *b_buf;

	(void)state;
	sample_period = 0;
	cap = off_cpu_capture();
	plain = cpu_capture();
	sample_period = 1000;
	a_buf = export_mem(cap, MS_FORMAT_PPROF, &o, &a_len);
	b_buf = export_mem(plain, MS_FORMAT_PPROF, &o, &b_len);
	stderr_begin();
	a = ms_pprof_import(a_buf, a_len, "off.pb.gz", "test 1");
	b = ms_pprof_import(b_buf, b_len, "cpu.pb.gz", "test 1");
	(void)stderr_end();
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->n_samples, 3);
	assert_int_equal(a->n_samples, b->n_samples);
	for (uint32_t i = 0; i < a->n_samples; i++) {
		assert_int_equal(a->samples[i].count, b->samples[i].count);
		assert_int_equal(a->samples[i].period, b->samples[i].period);
		assert_int_equal(a->samples[i].stack, b->samples[i].stack);
	}
	ms_capture_free(a);
	ms_capture_free(b);
	free(a_buf);
	free(b_buf);
	detach_free(cap);
	ms_capture_free(plain);
}

/* ---- folded ---- */

static void test_folded_off_cpu(void **state)
{
	struct ms_capture *cap = off_cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	assert_int_equal(ms_weight_by_name("off-cpu", &o.weight), 0);
	assert_int_equal(o.weight, MS_WEIGHT_OFF_CPU);
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
		"[no stack] 400\n"
		"[truncated: stack-copy];main;work;read 700\n"
		"main;nanosleep 3500\n"
		"main;work 300\n");
	free(text);

	o.thread_root = true;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
		"prog-1/10;[truncated: stack-copy];main;work;read 700\n"
		"prog-1/10;main;work 300\n"
		"worker-1/11;[no stack] 400\n"
		"worker-1/11;main;nanosleep 3500\n");
	free(text);

	o.thread_root = false;
	assert_int_equal(ms_causes_by_name("blocked,preempted", &o.causes), 0);
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
		"[truncated: stack-copy];main;work;read 700\n"
		"main;work 300\n");
	free(text);

	/* a cause nothing had: no lines */
	o.causes = 1u << MS_CAUSE_UNKNOWN;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text, "");
	free(text);
	detach_free(cap);
}

/* ---- speedscope ---- */

static void test_speedscope_off_cpu(void **state)
{
	struct ms_capture *cap = off_cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	o.weight = MS_WEIGHT_OFF_CPU;
	text = export_mem(cap, MS_FORMAT_SPEEDSCOPE, &o, NULL);
	/* frames: the 4 functions, the one cut, then "[no stack]" (5) */
	assert_non_null(strstr(text, "{\"name\":\"[truncated: stack-copy]\"},"
				     "{\"name\":\"[no stack]\"}]"));
	/* per thread, runs of one stack in time order, nanoseconds */
	assert_non_null(strstr(text, "\"name\":\"prog (1/10) off-CPU\",\"unit\":\"nanoseconds\","
				     "\"startValue\":0,\"endValue\":1000,"));
	/* main 0, nanosleep 1, read 2, work 3: the cut outermost, then main;work;read */
	assert_non_null(strstr(text, "\"samples\":[[0,3],[4,0,3,2]],\"weights\":[300,700]"));
	assert_non_null(strstr(text, "\"name\":\"worker (1/11) off-CPU\",\"unit\":\"nanoseconds\","
				     "\"startValue\":0,\"endValue\":3900,"));
	assert_non_null(strstr(text, "\"samples\":[[0,1],[5]],\"weights\":[3500,400]"));
	/* idle's one interval lost its start: no profile */
	assert_null(strstr(text, "idle"));
	free(text);
	detach_free(cap);
}

/* ---- what the notes say, and the refusals ---- */

static void test_facts_and_notes(void **state)
{
	struct ms_capture *cap = off_cpu_capture(), *plain = cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	const char *err;
	unsigned dropped;

	(void)state;
	assert_true(ms_capture_facts(cap) & MS_FACT_OFF_CPU);
	assert_true(ms_capture_facts(cap) & MS_FACT_INCOMPLETE_INTERVALS);
	assert_false(ms_capture_facts(plain) & (MS_FACT_OFF_CPU | MS_FACT_INCOMPLETE_INTERVALS));
	/* pprof keeps the time and drops the incomplete intervals: and says so */
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_PPROF, &o, "p.msc");
	err = stderr_end();
	assert_true(dropped & MS_FACT_INCOMPLETE_INTERVALS);
	assert_false(dropped & MS_FACT_OFF_CPU);
	assert_non_null(strstr(err, "incomplete intervals of 'p.msc'"));
	assert_null(strstr(err, "off-CPU time"));
	/* folded by samples drops the off-CPU time */
	stderr_begin();
	dropped = ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "p.msc");
	err = stderr_end();
	assert_true(dropped & MS_FACT_OFF_CPU);
	assert_non_null(strstr(err, "off-CPU time"));
	/* by off-CPU time it drops the samples' counts instead */
	o.weight = MS_WEIGHT_OFF_CPU;
	dropped = ms_capture_facts(cap) & ~ms_format_keeps(MS_FORMAT_FOLDED, &o);
	assert_false(dropped & MS_FACT_OFF_CPU);
	assert_true(dropped & MS_FACT_COUNTS);
	/* Chrome carries CPU samples only */
	o.weight = MS_WEIGHT_SAMPLES;
	assert_true(ms_capture_facts(cap) & ~ms_format_keeps(MS_FORMAT_CHROME, &o) &
		    MS_FACT_OFF_CPU);
	detach_free(cap);
	ms_capture_free(plain);
}

static void test_refusals(void **state)
{
	struct ms_capture *cap = off_cpu_capture(), *plain = cpu_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	FILE *null_out = fopen("/dev/null", "w");
	unsigned causes = 0;
	const char *err;

	(void)state;
	assert_non_null(null_out);
	/* names */
	assert_int_equal(ms_causes_by_name("sleeping,blocked", &causes), 0);
	assert_int_equal(causes, 1u << MS_CAUSE_SLEEPING | 1u << MS_CAUSE_BLOCKED);
	assert_int_equal(ms_causes_by_name("unknown", &causes), 0);
	assert_int_equal(causes, 1u << MS_CAUSE_SLEEPING | 1u << MS_CAUSE_BLOCKED |
				 1u << MS_CAUSE_UNKNOWN);
	causes = 0;
	assert_int_equal(ms_causes_by_name("io", &causes), -1);
	assert_int_equal(ms_causes_by_name("lock", &causes), -1);
	assert_int_equal(ms_causes_by_name("", &causes), -1);
	assert_int_equal(ms_causes_by_name("sleeping,", &causes), -1);
	assert_int_equal(ms_causes_by_name("sleep", &causes), -1);
	assert_int_equal(ms_causes_by_name("sleepingX", &causes), -1);
	assert_int_equal(causes, 0);

	/* off-CPU time asked of a capture that recorded none */
	o.weight = MS_WEIGHT_OFF_CPU;
	stderr_begin();
	assert_int_equal(ms_export_check(plain, MS_FORMAT_FOLDED, &o, "cpu.msc"), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "'cpu.msc' has no off-CPU intervals: record it with "
				    "microscope record --off-cpu"));
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(ms_export_check(cap, MS_FORMAT_FOLDED, &o, "off.msc"), 0);
	assert_int_equal(ms_export_check(cap, MS_FORMAT_SPEEDSCOPE, &o, "off.msc"), 0);
	/* the exporters refuse on their own too */
	stderr_begin();
	assert_int_equal(ms_export(null_out, plain, MS_FORMAT_FOLDED, &o), -1);
	assert_int_equal(ms_export(null_out, plain, MS_FORMAT_SPEEDSCOPE, &o), -1);
	err = stderr_end();
	assert_int_equal(count_lines(err), 2);
	assert_non_null(strstr(err, "no off-CPU intervals"));
	/* a format that weighs no off-CPU time */
	stderr_begin();
	assert_int_equal(ms_export_check(cap, MS_FORMAT_CHROME, &o, "off.msc"), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "--weight off-cpu goes with folded or speedscope"));
	/* causes: with pprof or the off-CPU weight, of a capture that has them */
	o.weight = MS_WEIGHT_SAMPLES;
	o.causes = 1u << MS_CAUSE_SLEEPING;
	assert_int_equal(ms_export_check(cap, MS_FORMAT_PPROF, &o, "off.msc"), 0);
	stderr_begin();
	assert_int_equal(ms_export_check(cap, MS_FORMAT_FOLDED, &o, "off.msc"), -1);
	assert_int_equal(ms_export_check(plain, MS_FORMAT_PPROF, &o, "cpu.msc"), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "--cause goes with pprof, or with --weight off-cpu"));
	assert_non_null(strstr(err, "'cpu.msc' has no off-CPU intervals"));
	/* nothing asked: nothing to refuse */
	o.causes = 0;
	assert_int_equal(ms_export_check(plain, MS_FORMAT_FOLDED, &o, "cpu.msc"), 0);
	fclose(null_out);
	detach_free(cap);
	ms_capture_free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_off_cpu),
		cmocka_unit_test(test_pprof_off_cpu_only),
		cmocka_unit_test(test_pprof_no_complete_interval),
		cmocka_unit_test(test_unchanged_without_off_cpu),
		cmocka_unit_test(test_pprof_import_ignores_off_cpu),
		cmocka_unit_test(test_folded_off_cpu),
		cmocka_unit_test(test_speedscope_off_cpu),
		cmocka_unit_test(test_facts_and_notes),
		cmocka_unit_test(test_refusals),
	};

	ms_set_progname("formats-offcpu-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
