/*
 * Label spans (the GIL) from the capture to every view: a hand-built
 * capture with known truth, as ms-unwind's spans make it. Process 100,
 * threads 101 and 102, one module with main, spin and wait:
 *
 *   101: 10 spin, 20 spin, 30 wait, 40 spin, 50 spin
 *        spans gil=held 10..20 (2), released 30..30 (1), held 50..50 (1);
 *        the sample at 40 had no walker record: no span covers it
 *   102: 15 wait, 25 wait, 35 wait; span gil=released 15..35 (3)
 *
 * Checked: the built table, the builder's refusals and pruning, the
 * reader's refusals, the dump round trip, --label in top, tree and
 * threads (composed with --tid), the threads view's shares, the summary,
 * the query's checks, and pprof's sample labels.
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
#include "capture/labels.h"
#include "formats/formats.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

static char *membuf;
static size_t membuf_len;

#define CAPTURE_OUTPUT(call) ({                                  \
	FILE *out = open_memstream(&membuf, &membuf_len);        \
	assert_non_null(out);                                    \
	assert_int_equal(call, 0);                               \
	assert_int_equal(fclose(out), 0);                        \
	membuf;                                                  \
})

static void sample(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint64_t fn)
{
	struct ms_stack *s = calloc(1, sizeof(*s));

	s->pid = 100;
	s->tid = tid;
	s->time = time;
	s->period = 1000000;
	s->reason = MS_END_OUTERMOST;
	s->frames[0].module = 0;
	s->frames[0].address = fn;
	s->frames[1].module = 0;
	s->frames[1].address = 0x100;
	s->frames[1].flags = MS_FRAME_RETURN;
	s->n_frames = 2;
	assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

static int span(struct ms_capture_builder *b, uint32_t tid, uint64_t start, uint64_t end,
		uint64_t samples, struct ms_str value)
{
	struct ms_label_span l = { .pid = 100, .tid = tid, .start = start, .end = end,
				   .samples = samples, .key = S("gil"), .value = value };

	return ms_capture_builder_label_span(b, &l);
}

static struct ms_capture_builder *base(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	static const struct { uint64_t a; const char *n; } fns[] = {
		{ 0x100, "main" }, { 0x200, "spin" }, { 0x300, "wait" },
	};

	assert_non_null(b);
	memset(&m, 0, sizeof(m));
	m.id = 0;
	m.kind = MS_MODULE_FILE;
	m.path = S("/bin/x");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	for (int i = 0; i < 3; i++) {
		struct ms_frame f = { .module = 0, .address = fns[i].a, .symbol_start = fns[i].a,
				      .reason = MS_SYM_OK,
				      .name = { fns[i].n, (uint32_t)strlen(fns[i].n) } };

		assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	}
	sample(b, 101, 10, 0x200);
	sample(b, 102, 15, 0x300);
	sample(b, 101, 20, 0x200);
	sample(b, 102, 25, 0x300);
	sample(b, 101, 30, 0x300);
	sample(b, 102, 35, 0x300);
	sample(b, 101, 40, 0x200);
	sample(b, 101, 50, 0x200);
	return b;
}

/* The spans in the order ms-unwind writes them: as runs end. */
static struct ms_capture *labelled(void)
{
	struct ms_capture_builder *b = base();
	struct ms_capture *cap;

	assert_int_equal(span(b, 101, 10, 20, 2, S("held")), 0);
	assert_int_equal(span(b, 101, 30, 30, 1, S("released")), 0);
	assert_int_equal(span(b, 102, 15, 35, 3, S("released")), 0);
	assert_int_equal(span(b, 101, 50, 50, 1, S("held")), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static const char *str(const struct ms_capture *cap, uint32_t id)
{
	return cap->strings[id];
}

static void test_built(void **state)
{
	struct ms_capture *cap = labelled();
	const struct ms_cap_label_span *x = cap->label_spans;
	struct ms_labels ix;

	(void)state;
	assert_int_equal(cap->minor, MS_CAPTURE_MINOR_PYTHON);
	assert_int_equal(cap->n_label_spans, 4);
	/* sorted by (thread, key, start); thread 0 is 101 */
	assert_int_equal(cap->threads[x[0].thread].tid, 101);
	assert_int_equal(x[0].start, 10);
	assert_int_equal(x[0].end, 20);
	assert_int_equal(x[0].samples, 2);
	assert_string_equal(str(cap, x[0].key), "gil");
	assert_string_equal(str(cap, x[0].value), "held");
	assert_int_equal(x[1].start, 30);
	assert_string_equal(str(cap, x[1].value), "released");
	assert_int_equal(x[2].start, 50);
	assert_int_equal(cap->threads[x[3].thread].tid, 102);
	assert_int_equal(x[3].samples, 3);
	/* the lookup: covered times, a gap, the bounds */
	assert_int_equal(ms_labels_init(&ix, cap), 0);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 10), 0);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 15), 0);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 20), 0);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 25), MS_NONE);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 30), 1);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 40), MS_NONE);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 50), 2);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].key, 5), MS_NONE);
	assert_int_equal(ms_labels_at(&ix, 1, x[0].key, 25), 3);
	assert_int_equal(ms_labels_at(&ix, 1, x[0].key, 36), MS_NONE);
	assert_int_equal(ms_labels_at(&ix, 0, x[0].value, 10), MS_NONE);
	ms_labels_release(&ix);
	ms_capture_free(cap);
}

static bool has_problem(const struct ms_capture *cap, const char *code)
{
	for (uint32_t i = 0; i < cap->n_problems; i++)
		if (!strcmp(str(cap, cap->problems[i].code), code))
			return true;
	return false;
}

/* Overlapping and malformed spans go, counted; the first of an overlap stays. */
static void test_builder_prunes(void **state)
{
	struct ms_capture_builder *b = base();
	struct ms_label_span bad = { .pid = 100, .tid = 101, .start = 9, .end = 8, .samples = 1,
				     .key = S("gil"), .value = S("held") };
	struct ms_capture *cap;

	(void)state;
	assert_int_equal(span(b, 101, 10, 20, 2, S("held")), 0);
	assert_int_equal(span(b, 101, 20, 30, 2, S("released")), 0);	/* starts at 20: inside */
	assert_int_equal(span(b, 102, 15, 35, 3, S("released")), 0);
	assert_int_equal(ms_capture_builder_label_span(b, &bad), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_label_spans, 2);
	assert_int_equal(cap->label_spans[0].end, 20);
	assert_true(has_problem(cap, "label-span-overlaps"));
	assert_true(has_problem(cap, "bad-label-span"));
	ms_capture_free(cap);
}

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

/* A dump writes LABEL_SPAN records; captured again, the spans are the same, and the bytes too. */
static void test_round_trip(void **state)
{
	struct ms_capture *cap = labelled(), *back, *again;
	unsigned char *b1, *b2;
	size_t l1, l2;

	(void)state;
	back = dump_and_capture(cap);
	assert_non_null(back);
	assert_int_equal(back->n_label_spans, cap->n_label_spans);
	for (uint32_t i = 0; i < cap->n_label_spans; i++) {
		const struct ms_cap_label_span *x = &cap->label_spans[i], *y = &back->label_spans[i];

		assert_int_equal(back->threads[y->thread].tid, cap->threads[x->thread].tid);
		assert_int_equal(y->start, x->start);
		assert_int_equal(y->end, x->end);
		assert_int_equal(y->samples, x->samples);
		assert_string_equal(str(back, y->key), str(cap, x->key));
		assert_string_equal(str(back, y->value), str(cap, x->value));
	}
	again = dump_and_capture(back);
	assert_non_null(again);
	assert_int_equal(ms_capture_encode(back, &b1, &l1), 0);
	assert_int_equal(ms_capture_encode(again, &b2, &l2), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(b1, b2, l1);
	/* and the file loads with its spans */
	ms_capture_free(again);
	again = ms_capture_load_buffer(b1, l1, "t.msc");
	assert_non_null(again);
	assert_int_equal(again->n_label_spans, 4);
	free(b1);
	free(b2);
	ms_capture_free(again);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* Encode cap with row i changed by how, and expect the reader to refuse it. */
static void refused(int how)
{
	struct ms_capture *cap = labelled(), *back;
	struct ms_cap_label_span *x = cap->label_spans;
	unsigned char *buf;
	size_t len;

	switch (how) {
	case 0: x[1].thread = cap->n_threads; break;
	case 1: x[1].start = x[1].end + 1; break;
	case 2: x[1].start = x[0].end; break;		/* overlaps row 0 */
	case 3: x[1].value = 0; break;
	case 4: x[1].key = cap->n_strings; break;
	case 5: x[1].samples = 0; break;
	case 6: { struct ms_cap_label_span t = x[0]; x[0] = x[1]; x[1] = t; } break;
	}
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	if (back)
		fail_msg("a label-span row changed by way %d was read", how);
	free(buf);
	ms_capture_free(cap);
}

static void test_reader_refuses(void **state)
{
	(void)state;
	for (int how = 0; how < 7; how++)
		refused(how);
}

static char *view(const struct ms_capture *cap, enum ms_view v, const char *label, uint32_t tid,
		  bool json)
{
	struct ms_query q;
	struct ms_view_out o = { 0 };

	ms_query_init(&q, v);
	if (label)
		assert_int_equal(ms_query_set_label(&q, label), 0);
	if (tid)
		q.tids[q.n_tids++] = tid;
	assert_int_equal(ms_query_check(&q), 0);
	assert_int_equal(ms_query_check_capture(&q, cap, "t.msc"), 0);
	o.json = json;
	return CAPTURE_OUTPUT((o.f = out, ms_view_write(&o, cap, &q)));
}

static void expect_in(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

/* --label selects the samples a span of its value covers, in every view, with other filters. */
static void test_label_filter(void **state)
{
	struct ms_capture *cap = labelled();

	(void)state;
	expect_in(view(cap, MS_VIEW_TOP, NULL, 0, true), "\"samples\":8,");
	expect_in(view(cap, MS_VIEW_TOP, "gil=held", 0, true), "\"samples\":3,");
	expect_in(membuf, "\"name\":\"spin\",\"module\":\"x\",\"file\":\"\",\"line\":0,\"self\":3,");
	expect_in(view(cap, MS_VIEW_TOP, "gil=released", 0, true), "\"samples\":4,");
	expect_in(view(cap, MS_VIEW_TREE, "gil=released", 0, true), "\"samples\":4,");
	expect_in(view(cap, MS_VIEW_TOP, "gil=released", 101, true), "\"samples\":1,");
	expect_in(view(cap, MS_VIEW_THREADS, "gil=released", 102, true), "\"samples\":3,");
	/* a value the capture never had: nothing selected */
	expect_in(view(cap, MS_VIEW_TOP, "gil=other", 0, true), "\"samples\":0,");
	/* the text says what was selected */
	expect_in(view(cap, MS_VIEW_TOP, "gil=held", 0, false), "label 'gil=held'");
	free(membuf);
	ms_capture_free(cap);
}

/* threads: each thread's share under each value; summary: the capture has labels. */
static void test_threads_summary(void **state)
{
	struct ms_capture *cap = labelled();

	(void)state;
	expect_in(view(cap, MS_VIEW_THREADS, NULL, 0, false), "[gil=held 60.0%, gil=released 20.0%]");
	expect_in(membuf, "[gil=released 100.0%]");
	expect_in(view(cap, MS_VIEW_THREADS, NULL, 0, true),
		  "\"labels\":[{\"key\":\"gil\",\"value\":\"held\",\"total\":3,\"percent\":60");
	expect_in(view(cap, MS_VIEW_SUMMARY, NULL, 0, false),
		  "labels:      4 spans over 2 threads: gil=held (3 samples), gil=released (4 samples)");
	expect_in(view(cap, MS_VIEW_SUMMARY, NULL, 0, true), "\"labels\":{\"spans\":4,\"threads\":2");
	free(membuf);
	ms_capture_free(cap);
}

/* The query refuses a malformed label, and a key the capture has no spans of. */
static void test_query_checks(void **state)
{
	struct ms_capture *cap = labelled();
	struct ms_query q;

	(void)state;
	ms_query_init(&q, MS_VIEW_TOP);
	assert_int_equal(ms_query_set_label(&q, "gil"), -1);
	assert_int_equal(ms_query_set_label(&q, "=held"), -1);
	assert_int_equal(ms_query_set_label(&q, "gil="), -1);
	assert_int_equal(ms_query_set_label(&q, "task=x"), 0);
	assert_int_equal(ms_query_check_capture(&q, cap, "t.msc"), -1);
	ms_query_init(&q, MS_VIEW_WALL);
	assert_int_equal(ms_query_set_label(&q, "gil=held"), 0);
	assert_int_equal(ms_query_check(&q), -1);
	ms_capture_free(cap);
}

/* pprof: each sample under a span carries its value as a string label. */
static void test_pprof_labels(void **state)
{
	struct ms_capture *cap = labelled();
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	Perftools__Profiles__Profile *p;
	unsigned char *raw = malloc(1 << 20);
	uLongf raw_len = 1 << 20;
	z_stream z;
	int64_t held = 0, released = 0, none = 0;

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
	for (size_t i = 0; i < p->n_sample; i++) {
		const char *gil = NULL;

		for (size_t k = 0; k < p->sample[i]->n_label; k++) {
			const Perftools__Profiles__Label *l = p->sample[i]->label[k];

			if (!strcmp(p->string_table[l->key], "gil")) {
				assert_null(gil);
				assert_int_equal(l->num, 0);
				gil = p->string_table[l->str];
			}
		}
		if (!gil)
			none += p->sample[i]->value[0];
		else if (!strcmp(gil, "held"))
			held += p->sample[i]->value[0];
		else if (!strcmp(gil, "released"))
			released += p->sample[i]->value[0];
		else
			fail_msg("gil label '%s'", gil);
	}
	assert_int_equal(held, 3);
	assert_int_equal(released, 4);
	assert_int_equal(none, 1);
	/* pprof keeps the labels; folded drops them and says so */
	assert_int_equal(ms_export_note_loss(cap, MS_FORMAT_PPROF, &o, "t") & MS_FACT_LABELS, 0);
	assert_int_not_equal(ms_export_note_loss(cap, MS_FORMAT_FOLDED, &o, "t") & MS_FACT_LABELS, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(membuf);
	ms_capture_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built),
		cmocka_unit_test(test_builder_prunes),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reader_refuses),
		cmocka_unit_test(test_label_filter),
		cmocka_unit_test(test_threads_summary),
		cmocka_unit_test(test_query_checks),
		cmocka_unit_test(test_pprof_labels),
	};

	ms_set_progname("caplabels-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
