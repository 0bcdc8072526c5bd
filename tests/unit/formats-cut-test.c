/*
 * Unit tests of the synthetic frame of stacks cut short in every export
 * (formats/internal.h, capture/funcs.h): on a hand-built capture whose
 * stacks end in each way, "[truncated: REASON]" is the outermost frame of
 * each stack that was cut, once, and of no other; a stack without frames
 * that was cut is that frame alone.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/funcs.h"
#include "formats/formats.h"
#include "formats/internal.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

typedef Perftools__Profiles__Profile Profile;

static void sample(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint32_t end,
		   uint32_t n, const struct ms_stack_frame *frames)
{
	static struct ms_stack st;

	memset(&st, 0, sizeof(st));
	st.pid = 1;
	st.tid = tid;
	st.time = time;
	st.period = 1000;
	st.reason = end;
	st.n_frames = n;
	memcpy(st.frames, frames, n * sizeof(*frames));
	assert_int_equal(ms_capture_builder_stack(b, &st), 0);
}

static void frame_fact(struct ms_capture_builder *b, uint64_t address, const char *name)
{
	struct ms_frame f;

	memset(&f, 0, sizeof(f));
	f.address = address;
	f.name = (struct ms_str){ name, (uint32_t)strlen(name) };
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/*
 * Thread 1/10 "prog": work<-main cut by the stack copy twice, whole once,
 * main cut at a frame without CFI, no frames and cut, no frames (a kernel
 * thread's sample). Thread 1/11 "worker": work<-main of an import (end
 * unknown: not cut), main with an end this code does not know (cut, for
 * an unknown reason), work<-main at the end of a frame-pointer chain.
 */
static struct ms_capture *cut_capture(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_comm c;
	struct ms_info info = { S("event"), true, S("cpu-clock"), 0 };
	const struct ms_stack_frame work[] = { { 0, 0, 0x200 }, { 0, MS_FRAME_RETURN, 0x100 } };
	const struct ms_stack_frame main_only[] = { { 0, 0, 0x100 } };
	struct ms_capture *cap;

	assert_non_null(b);
	assert_int_equal(ms_capture_builder_info(b, &info), 0);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/prog");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	frame_fact(b, 0x100, "main");
	frame_fact(b, 0x200, "work");
	memset(&c, 0, sizeof(c));
	c.pid = 1;
	c.tid = 10;
	c.comm = S("prog");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	c.tid = 11;
	c.comm = S("worker");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	sample(b, 10, 1000, MS_END_STACK_COPY, 2, work);
	sample(b, 10, 2000, MS_END_STACK_COPY, 2, work);
	sample(b, 10, 3000, MS_END_OUTERMOST, 2, work);
	sample(b, 10, 4000, MS_END_NO_CFI, 1, main_only);
	sample(b, 10, 5000, MS_END_STACK_COPY, 0, NULL);
	sample(b, 10, 6000, MS_END_KERNEL_ONLY, 0, NULL);
	sample(b, 11, 7000, MS_END_UNKNOWN, 2, work);
	sample(b, 11, 8000, 77, 1, main_only);
	sample(b, 11, 9000, MS_END_MISSING_REGISTER, 2, work);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

/* What every format must show, as folded lines: outermost first, sorted. */
static const char expected_stacks[] =
	"[no frames] 1\n"
	"[truncated: missing-register];main;work 1\n"
	"[truncated: no-cfi];main 1\n"
	"[truncated: stack-copy] 1\n"
	"[truncated: stack-copy];main;work 2\n"
	"[truncated: unknown];main 1\n"
	"main;work 2\n";

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

/* ---- the cuts themselves ---- */

static void test_cut_ids(void **state)
{
	struct ms_cuts cuts = MS_CUTS_INIT;
	uint32_t ends[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 254, 255, 256, 77, UINT32_MAX };

	(void)state;
	/* only ends that were cut get one; each label once, in order of first use */
	assert_int_equal(ms_cuts_id(&cuts, MS_END_OUTERMOST), MS_NONE);
	assert_int_equal(ms_cuts_id(&cuts, MS_END_KERNEL_ONLY), MS_NONE);
	assert_int_equal(ms_cuts_id(&cuts, MS_END_UNKNOWN), MS_NONE);
	assert_int_equal(ms_cuts_id(&cuts, MS_END_FP_CHAIN), MS_NONE);	/* not known to be cut */
	assert_int_equal(ms_cuts_id(&cuts, MS_END_STACK_COPY), 0);
	assert_int_equal(ms_cuts_id(&cuts, MS_END_MISSING_REGISTER), 1);
	assert_int_equal(ms_cuts_id(&cuts, MS_END_STACK_COPY), 0);
	assert_int_equal(ms_cuts_id(&cuts, 77), 2);
	assert_int_equal(ms_cuts_id(&cuts, 78), 2);	/* the same label: unknown */
	assert_string_equal(cuts.labels[0], "[truncated: stack-copy]");
	assert_string_equal(cuts.labels[2], "[truncated: unknown]");
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		assert_int_equal(ms_cuts_id(&cuts, ends[i]) == MS_NONE,
				 !ms_stack_end_truncated(ends[i]));
	/* every label there is fits, with room to spare */
	for (uint32_t end = 0; end < 4096; end++)
		ms_cuts_id(&cuts, end);
	assert_int_equal(cuts.n, 10);	/* 9 known reasons (3 interpreted) and unknown */
	assert_true(cuts.n < MS_CUTS_MAX);
	for (uint32_t i = 0; i < cuts.n; i++)
		for (uint32_t k = 0; k < i; k++)
			assert_string_not_equal(cuts.labels[i], cuts.labels[k]);
}

/* ---- folded ---- */

static void test_folded(void **state)
{
	struct ms_capture *cap = cut_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *text;

	(void)state;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text, expected_stacks);
	free(text);
	/* with the thread first, the cut next to it */
	o.thread_root = true;
	text = export_mem(cap, MS_FORMAT_FOLDED, &o, NULL);
	assert_string_equal(text,
			    "prog-1/10 1\n"
			    "prog-1/10;[truncated: no-cfi];main 1\n"
			    "prog-1/10;[truncated: stack-copy] 1\n"
			    "prog-1/10;[truncated: stack-copy];main;work 2\n"
			    "prog-1/10;main;work 1\n"
			    "worker-1/11;[truncated: missing-register];main;work 1\n"
			    "worker-1/11;[truncated: unknown];main 1\n"
			    "worker-1/11;main;work 1\n");
	free(text);
	ms_capture_free(cap);
}

/* ---- pprof ---- */

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

static const Perftools__Profiles__Location *ploc(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const char *pname(const Profile *p, const Perftools__Profiles__Location *l)
{
	assert_int_equal(l->n_line, 1);
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == l->line[0]->function_id)
			return p->string_table[p->function[i]->name];
	fail_msg("no function %llu", (unsigned long long)l->line[0]->function_id);
	return NULL;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines "outer;...;inner count", sorted, joined: as expected_stacks. */
static char *sorted_lines(char **lines, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	qsort(lines, n, sizeof(*lines), cmp_strp);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(out);
	return buf;
}

static void test_pprof(void **state)
{
	struct ms_capture *cap = cut_capture();
	size_t len, plen, n_lines = 0;
	char *gz = export_mem(cap, MS_FORMAT_PPROF, NULL, &len), *lines[16], *text;
	unsigned char *raw = gunzip_mem((unsigned char *)gz, len, &plen);
	Profile *p = perftools__profiles__profile__unpack(NULL, plen, raw);
	unsigned cut_locations = 0;

	(void)state;
	assert_non_null(p);
	/* the cut frames: a location in no mapping, at no address, named by the cut */
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (strncmp(pname(p, l), "[truncated: ", 12))
			continue;
		assert_int_equal(l->mapping_id, 0);
		assert_int_equal(l->address, 0);
		cut_locations++;
	}
	assert_int_equal(cut_locations, 4);
	/* per sample (summed over threads), its path outermost first: the leaf is first in pprof */
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		char *line = NULL;
		size_t ll = 0;
		FILE *out = open_memstream(&line, &ll);

		for (size_t k = s->n_location_id; k-- > 0;) {
			const char *name = pname(p, ploc(p, s->location_id[k]));

			/* a cut only ever last, the outermost */
			if (!strncmp(name, "[truncated: ", 12))
				assert_int_equal(k, s->n_location_id - 1);
			fprintf(out, "%s%s", k + 1 < s->n_location_id ? ";" : "", name);
		}
		if (!s->n_location_id)
			fputs("[no frames]", out);
		fprintf(out, " %lld", (long long)s->value[0]);
		fclose(out);
		/* one pprof sample per thread: merge the two threads' "main;work" */
		for (size_t k = 0; k < n_lines; k++) {
			if (!strcmp(line, "main;work 1") && !strcmp(lines[k], "main;work 1")) {
				free(line);
				free(lines[k]);
				line = strdup("main;work 2");
				lines[k] = lines[--n_lines];
				break;
			}
		}
		assert_true(n_lines < 16);
		lines[n_lines++] = line;
	}
	text = sorted_lines(lines, n_lines);
	assert_string_equal(text, expected_stacks);
	free(text);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	ms_capture_free(cap);
}

/* ---- chrome ---- */

#define EV(name, cat, ts, dur, tid) \
	"{\"name\":\"" name "\",\"cat\":\"" cat "\",\"ph\":\"X\",\"ts\":" ts ",\"dur\":" dur \
	",\"pid\":1,\"tid\":" tid "}"

static void test_chrome_events(void **state)
{
	struct ms_capture *cap = cut_capture();
	char *json = export_mem(cap, MS_FORMAT_CHROME, NULL, NULL);
	const char *events;

	(void)state;
	events = strstr(json, "{\"name\":\"[truncated");
	assert_non_null(events);
	/*
	 * Thread 10, as the samples come: the cut stack, its cut outermost
	 * (written first: viewers take the first of events with one start
	 * and end for the caller); the whole one; main cut at no-cfi; the
	 * cut alone; nothing (the kernel thread's sample) closes all.
	 */
	assert_non_null(strstr(json,
		EV("[truncated: stack-copy]", "[truncated]", "1", "2", "10") ","
		EV("main", "prog", "1", "2", "10") ","
		EV("work", "prog", "1", "2", "10") ","
		EV("main", "prog", "3", "1", "10") ","
		EV("work", "prog", "3", "1", "10") ","
		EV("[truncated: no-cfi]", "[truncated]", "4", "1", "10") ","
		EV("main", "prog", "4", "1", "10") ","
		EV("[truncated: stack-copy]", "[truncated]", "5", "1", "10")));
	/* thread 11: the import's whole stack, main cut for a reason unknown, the fp chain's */
	assert_non_null(strstr(json,
		EV("main", "prog", "7", "1", "11") ","
		EV("work", "prog", "7", "1", "11") ","
		EV("[truncated: unknown]", "[truncated]", "8", "1", "11") ","
		EV("main", "prog", "8", "1", "11") ","));
	assert_non_null(strstr(json,
		EV("[truncated: missing-register]", "[truncated]", "9", "1", "11") ","
		EV("main", "prog", "9", "1", "11") ","
		EV("work", "prog", "9", "1", "11") "]"));
	/* and no other: five cut events in all */
	{
		unsigned n = 0;

		for (const char *s = json; (s = strstr(s, "\"[truncated: ")); s++)
			n++;
		assert_int_equal(n, 5);
	}
	free(json);
	ms_capture_free(cap);
}

static void test_chrome_samples(void **state)
{
	struct ms_capture *cap = cut_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	char *json;

	(void)state;
	o.chrome_form = MS_CHROME_SAMPLES;
	json = export_mem(cap, MS_FORMAT_CHROME, &o, NULL);
	/* each cut a root of its own; its stack under it; the whole stack a tree of its own */
	assert_non_null(strstr(json,
		"\"stackFrames\":{"
		"\"1\":{\"name\":\"[truncated: stack-copy]\",\"category\":\"[truncated]\"},"
		"\"2\":{\"name\":\"main\",\"category\":\"prog\",\"parent\":\"1\"},"
		"\"3\":{\"name\":\"work\",\"category\":\"prog\",\"parent\":\"2\"},"
		"\"4\":{\"name\":\"main\",\"category\":\"prog\"},"
		"\"5\":{\"name\":\"work\",\"category\":\"prog\",\"parent\":\"4\"},"
		"\"6\":{\"name\":\"[truncated: no-cfi]\",\"category\":\"[truncated]\"},"
		"\"7\":{\"name\":\"main\",\"category\":\"prog\",\"parent\":\"6\"},"
		"\"8\":{\"name\":\"[no frames]\",\"category\":\"[unknown]\"},"
		"\"9\":{\"name\":\"[truncated: unknown]\",\"category\":\"[truncated]\"},"
		"\"10\":{\"name\":\"main\",\"category\":\"prog\",\"parent\":\"9\"},"
		"\"11\":{\"name\":\"[truncated: missing-register]\",\"category\":\"[truncated]\"},"
		"\"12\":{\"name\":\"main\",\"category\":\"prog\",\"parent\":\"11\"},"
		"\"13\":{\"name\":\"work\",\"category\":\"prog\",\"parent\":\"12\"}},"));
	/* each sample at its node: the cut stack's leaf, the whole one's, the cut alone */
	{
		static const char *const sf[] = { "3", "3", "5", "7", "1", "8", "5", "10", "13" };
		const char *s = strstr(json, "\"samples\":[");

		for (size_t i = 0; i < sizeof(sf) / sizeof(sf[0]); i++) {
			char want[32];

			snprintf(want, sizeof(want), "\"sf\":\"%s\"", sf[i]);
			s = strstr(s, "\"sf\":");
			assert_non_null(s);
			assert_memory_equal(s, want, strlen(want));
			s++;
		}
		assert_null(strstr(s, "\"sf\":"));
	}
	free(json);
	ms_capture_free(cap);
}

/* ---- speedscope ---- */

static void test_speedscope(void **state)
{
	struct ms_capture *cap = cut_capture();
	char *json = export_mem(cap, MS_FORMAT_SPEEDSCOPE, NULL, NULL);

	(void)state;
	/* the cuts' frames after the functions', each once; samples start with theirs */
	assert_string_equal(json,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"shared\":{\"frames\":[{\"name\":\"main\",\"file\":\"/bin/prog\"},"
		"{\"name\":\"work\",\"file\":\"/bin/prog\"},"
		"{\"name\":\"[truncated: stack-copy]\"},{\"name\":\"[truncated: no-cfi]\"},"
		"{\"name\":\"[truncated: unknown]\"},{\"name\":\"[truncated: missing-register]\"}]},"
		"\"profiles\":[{\"type\":\"sampled\",\"name\":\"prog (1/10)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":6,"
		"\"samples\":[[2,0,1],[0,1],[3,0],[2],[]],\"weights\":[2,1,1,1,1]},"
		"{\"type\":\"sampled\",\"name\":\"worker (1/11)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":3,"
		"\"samples\":[[0,1],[4,0],[5,0,1]],\"weights\":[1,1,1]}],"
		"\"name\":\"microscope capture\",\"activeProfileIndex\":0,\"exporter\":\"microscope\"}\n");
	free(json);
	ms_capture_free(cap);
}

/* ---- loss ---- */

static void test_stack_ends_kept(void **state)
{
	struct ms_capture *cap = cut_capture();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;

	(void)state;
	/* every export now shows why a stack ended early: the fact is kept */
	assert_true(ms_capture_facts(cap) & MS_FACT_STACK_ENDS);
	assert_true(ms_format_keeps(MS_FORMAT_PPROF, &o) & MS_FACT_STACK_ENDS);
	assert_true(ms_format_keeps(MS_FORMAT_FOLDED, &o) & MS_FACT_STACK_ENDS);
	assert_true(ms_format_keeps(MS_FORMAT_CHROME, &o) & MS_FACT_STACK_ENDS);
	assert_true(ms_format_keeps(MS_FORMAT_SPEEDSCOPE, &o) & MS_FACT_STACK_ENDS);
	o.chrome_form = MS_CHROME_SAMPLES;
	assert_true(ms_format_keeps(MS_FORMAT_CHROME, &o) & MS_FACT_STACK_ENDS);
	ms_capture_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_ids),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_chrome_events),
		cmocka_unit_test(test_chrome_samples),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_stack_ends_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
