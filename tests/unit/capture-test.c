/*
 * Unit tests of libcommon/capture: the builder, the file format (writer
 * and validating reader), and the stream conversions.
 *
 * Corrupt files are made two ways: by flipping or cutting bytes of a good
 * file (caught by checksums and sizes), and by re-assembling a file from
 * edited sections with valid checksums (caught by the reader's checks of
 * every count, index, order and cross-reference).
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
#include <dirent.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/convert.h"
#include "capture/format.h"
#include "capture/internal.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "stream/stream.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })
/* Sections a capture of this version has. */
#define N_SECTIONS 11

/* ---- capturing the one message a failure prints ---- */

#include "tests/unit/stderr-capture.h"

/* Loading buf must fail with one message holding every given fragment. */
static void expect_refused(const unsigned char *buf, size_t len, ...)
{
	struct ms_capture *cap;
	const char *msg, *frag;
	va_list ap;

	stderr_begin();
	cap = ms_capture_load_buffer(buf, len, "t.msc");
	msg = stderr_end();
	if (cap) {
		ms_capture_free(cap);
		fail_msg("a damaged capture (%zu bytes) was accepted", len);
	}
	if (count_lines(msg) != 1)
		fail_msg("expected one message, got: %s", msg);
	if (!strstr(msg, "'t.msc'"))
		fail_msg("message does not name the file: %s", msg);
	va_start(ap, len);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(msg, frag))
			fail_msg("message lacks \"%s\": %s", frag, msg);
	va_end(ap);
}

/* ---- a capture to work on ---- */

static void feed_header(struct ms_capture_builder *b)
{
	struct ms_header h;

	memset(&h, 0, sizeof(h));
	h.major = 1;
	h.n_producers = 2;
	snprintf(h.producers[0].name, MS_NAME_MAX, "ms-collect");
	snprintf(h.producers[0].version, MS_NAME_MAX, "0.1.0");
	snprintf(h.producers[1].name, MS_NAME_MAX, "ms-symbolize");
	snprintf(h.producers[1].version, MS_NAME_MAX, "0.1.0");
	assert_int_equal(ms_capture_builder_producers(b, &h), 0);
}

static void feed_module(struct ms_capture_builder *b, uint32_t id, uint32_t kind,
			struct ms_str path)
{
	struct ms_module m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = kind;
	m.path = path;
	m.build_id_len = 4;
	memcpy(m.build_id, "\x01\x02\x03", 4);
	m.build_id[3] = (uint8_t)id;
	m.dev_maj = 8;
	m.dev_min = 2;
	m.ino = 77 + id;
	m.size = 9000;
	m.mtime = 123;
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
}

static void feed_frame(struct ms_capture_builder *b, uint32_t module, uint64_t address,
		       struct ms_str name, uint64_t start)
{
	struct ms_frame f = { .module = module, .address = address, .name = name,
			      .symbol_start = start,
			      .reason = name.len ? MS_SYM_OK : MS_SYM_NO_SYMBOL };

	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/* A stack: (module, address) pairs innermost first, 0-terminated by n. */
static void feed_stack(struct ms_capture_builder *b, uint32_t tid, uint64_t time, uint32_t cpu,
		       uint32_t n, ...)
{
	struct ms_stack *s = calloc(1, sizeof(*s));
	va_list ap;
	uint32_t i;

	s->pid = 100;
	s->tid = tid;
	s->time = time;
	s->cpu = cpu;
	s->period = 1000000;
	s->reason = n ? MS_END_FP_CHAIN : MS_END_KERNEL_ONLY;
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = i ? MS_FRAME_RETURN : 0;
	}
	va_end(ap);
	s->n_frames = n;
	assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

/* The order stacks are fed in: as listed, reversed, or sorted by time (as ms-decode gives them). */
enum feed { FEED_LISTED, FEED_REVERSED, FEED_SORTED };

static void feed_stacks(struct ms_capture_builder *b, enum feed how)
{
	/* rows by (time, tid, cpu): the builder's sample order, which it then need not sort */
	static const uint32_t sorted[] = { 1, 5, 2, 3, 4, 0, 6 };
	/* main -> work -> leaf_a / leaf_b, main -> other, and one frameless sample */
	static const struct { uint32_t tid; uint64_t time; uint32_t cpu; int shape; } rows[] = {
		{ 101, 3000, 1, 0 }, { 100, 1000, 0, 1 }, { 100, 2000, 0, 0 },
		{ 102, 2000, 1, 2 }, { 101, 2500, 0, 3 }, { 100, 1000, 1, 0 },
		{ 101, 3500, 0, 4 },
	};
	uint32_t i, n = sizeof(rows) / sizeof(rows[0]);

	for (uint32_t k = 0; k < n; k++) {
		i = how == FEED_REVERSED ? n - 1 - k : how == FEED_SORTED ? sorted[k] : k;
		switch (rows[i].shape) {
		case 0:
			feed_stack(b, rows[i].tid, rows[i].time, rows[i].cpu, 3,
				   0u, (uint64_t)0x1110, 0u, (uint64_t)0x1210, 1u, (uint64_t)0x500);
			break;
		case 1:
			feed_stack(b, rows[i].tid, rows[i].time, rows[i].cpu, 3,
				   0u, (uint64_t)0x1120, 0u, (uint64_t)0x1210, 1u, (uint64_t)0x500);
			break;
		case 2:
			feed_stack(b, rows[i].tid, rows[i].time, rows[i].cpu, 2,
				   0u, (uint64_t)0x1300, 1u, (uint64_t)0x500);
			break;
		case 3:
			feed_stack(b, rows[i].tid, rows[i].time, rows[i].cpu, 0);
			break;
		case 4:
			/* module 9 is never described; 0x7777 has no fact */
			feed_stack(b, rows[i].tid, rows[i].time, rows[i].cpu, 2,
				   9u, (uint64_t)0x7777, 1u, (uint64_t)0x500);
			break;
		}
	}
}

/*
 * The same facts in two orders must give the same capture. extra, when
 * not NULL, feeds more facts after the stacks.
 */
static struct ms_capture *make_capture_with(enum feed how, void (*extra)(struct ms_capture_builder *))
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_info info;
	struct ms_target t;
	struct ms_comm c;
	struct ms_task task;
	struct ms_lost lost;
	struct ms_throttle th;
	struct ms_problem p;
	struct ms_target_exit te = { 100, 3 << 8, 3 };
	struct ms_capture *cap;

	assert_non_null(b);
	feed_header(b);
	info = (struct ms_info){ S("hostname"), true, S("box"), 0 };
	assert_int_equal(ms_capture_builder_info(b, &info), 0);
	info = (struct ms_info){ S("frequency"), false, S(""), 999 };
	assert_int_equal(ms_capture_builder_info(b, &info), 0);
	/* the last value of a key wins */
	info = (struct ms_info){ S("hostname"), true, S("host"), 0 };
	assert_int_equal(ms_capture_builder_info(b, &info), 0);

	memset(&t, 0, sizeof(t));
	t.pid = 100;
	t.launched = true;
	t.argc = 3;
	t.argv[0] = S("./prog");
	t.argv[1] = S("a b");
	t.argv[2] = S("");
	assert_int_equal(ms_capture_builder_target(b, &t), 0);
	assert_int_equal(ms_capture_builder_target_exit(b, &te), 0);

	c = (struct ms_comm){ 100, 100, 10, true, false, S("sh") };
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	c.comm = S("prog");
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	task = (struct ms_task){ 100, 100, 101, 100, 20 };
	assert_int_equal(ms_capture_builder_task(b, MS_REC_FORK, &task), 0);
	task = (struct ms_task){ 100, 100, 102, 100, 30 };
	assert_int_equal(ms_capture_builder_task(b, MS_REC_FORK, &task), 0);
	c = (struct ms_comm){ 100, 102, 40, false, false, S("worker") };
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	task = (struct ms_task){ 100, 100, 99, 100, 50 };
	assert_int_equal(ms_capture_builder_task(b, MS_REC_EXIT, &task), 0);

	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_module(b, 1, MS_MODULE_FILE, S("/lib/libc.so.6"));
	feed_frame(b, 0, 0x1110, S("leaf_a"), 0x1100);
	feed_frame(b, 0, 0x1120, S("leaf_b"), 0x1120);
	feed_frame(b, 0, 0x1210, S("work"), 0x1200);
	feed_frame(b, 0, 0x1300, S("other"), 0x1300);
	feed_frame(b, 1, 0x500, S("__libc_start_main"), 0x480);
	feed_frame(b, 0, 0x9999, S("unused"), 0x9990);

	feed_stacks(b, how);
	if (extra)
		extra(b);

	/*
	 * Losses of unknown time (0), as a capture of format 1.3 or before
	 * dumps its totals: the totals alone, no loss rows (those have tests
	 * of their own: make_loss_capture()).
	 */
	lost = (struct ms_lost){ MS_LOST_KERNEL, 0, 1, 7 };
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	lost = (struct ms_lost){ MS_LOST_COLLECTOR, 0, 0, 2 };
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	lost.count = 3;
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	th = (struct ms_throttle){ 7, 1, false };
	assert_int_equal(ms_capture_builder_throttle(b, &th), 0);
	th.unthrottle = true;
	assert_int_equal(ms_capture_builder_throttle(b, &th), 0);
	p = (struct ms_problem){ S("ms-decode"), S("truncated-sample"), 4, S("first at byte 99") };
	assert_int_equal(ms_capture_builder_problem(b, &p), 0);
	p = (struct ms_problem){ S("ms-decode"), S("truncated-sample"), 1, S("another") };
	assert_int_equal(ms_capture_builder_problem(b, &p), 0);
	p = (struct ms_problem){ S("ms-collect"), S("ring-full"), 2, S("cpu 1") };
	assert_int_equal(ms_capture_builder_problem(b, &p), 0);
	assert_int_equal(ms_capture_builder_ignored(b, "sample", 5), 0);
	assert_int_equal(ms_capture_builder_ignored(b, "sample", 2), 0);
	assert_int_equal(ms_capture_builder_ignored(b, "mmap", 0), 0);

	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static struct ms_capture *make_capture(enum feed how)
{
	return make_capture_with(how, NULL);
}

static const char *frame_name(const struct ms_capture *cap, uint32_t frame)
{
	return cap->strings[cap->frames[frame].name];
}

/* The frame names of stack node s, outermost first, joined by ';'. */
static const char *stack_path(const struct ms_capture *cap, uint32_t s)
{
	static char buf[512];
	const char *names[64];
	uint32_t n = 0;
	size_t at = 0;

	buf[0] = '\0';
	for (; s != MS_NONE; s = cap->stacks[s].parent)
		names[n++] = frame_name(cap, cap->stacks[s].frame);
	while (n--)
		at += snprintf(buf + at, sizeof(buf) - at, "%s%s", names[n], n ? ";" : "");
	return buf;
}

/* ---- builder ---- */

static void test_builder_tables(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	uint64_t num;
	uint32_t i;

	/* strings: sorted, "" first, only the used ones */
	assert_string_equal(cap->strings[0], "");
	for (i = 1; i < cap->n_strings; i++)
		assert_true(strcmp(cap->strings[i - 1], cap->strings[i]) < 0);
	for (i = 0; i < cap->n_strings; i++) {
		assert_string_not_equal(cap->strings[i], "sh");		/* overwritten comm */
		assert_string_not_equal(cap->strings[i], "box");	/* overwritten info */
		assert_string_not_equal(cap->strings[i], "unused");	/* fact no frame used */
		assert_string_not_equal(cap->strings[i], "another");	/* second detail */
	}

	/* info */
	assert_string_equal(ms_capture_info_text(cap, "command"), "./prog a b ");
	assert_string_equal(ms_capture_info_text(cap, "hostname"), "host");
	assert_string_equal(ms_capture_info_text(cap, "producers"),
			    "ms-collect 0.1.0 | ms-symbolize 0.1.0");
	assert_true(ms_capture_info_number(cap, "pid", &num));
	assert_int_equal(num, 100);
	assert_true(ms_capture_info_number(cap, "launched", &num));
	assert_int_equal(num, 1);
	assert_true(ms_capture_info_number(cap, "frequency", &num));
	assert_int_equal(num, 999);
	assert_true(ms_capture_info_number(cap, "ignored-records.sample", &num));
	assert_int_equal(num, 7);
	assert_false(ms_capture_info_number(cap, "ignored-records.mmap", &num));
	assert_false(ms_capture_info_number(cap, "hostname", &num));
	assert_null(ms_capture_info_text(cap, "frequency"));
	assert_null(ms_capture_info_text(cap, "nothing"));
	assert_int_equal(cap->n_info, 7);
	for (i = 1; i < cap->n_info; i++)
		assert_true(strcmp(cap->strings[cap->info[i - 1].key],
				   cap->strings[cap->info[i].key]) < 0);

	/* modules in order of first use; module 9 was only used */
	assert_int_equal(cap->n_modules, 3);
	assert_string_equal(cap->strings[cap->modules[0].path], "/bin/prog");
	assert_int_equal(cap->modules[0].build_id_len, 4);
	assert_memory_equal(cap->modules[0].build_id, "\x01\x02\x03\x00", 4);
	assert_int_equal(cap->modules[0].ino, 77);
	assert_string_equal(cap->strings[cap->modules[1].path], "/lib/libc.so.6");
	assert_int_equal(cap->modules[2].kind, MS_MODULE_UNKNOWN);
	assert_int_equal(cap->modules[2].path, 0);

	/* frames by (module, address, flags), with their facts */
	assert_int_equal(cap->n_frames, 6);
	for (i = 1; i < cap->n_frames; i++) {
		const struct ms_cap_frame *a = &cap->frames[i - 1], *c = &cap->frames[i];

		assert_true(a->module < c->module ||
			    (a->module == c->module && a->address < c->address));
	}
	assert_string_equal(frame_name(cap, 0), "leaf_a");
	assert_int_equal(cap->frames[0].symbol_start, 0x1100);
	assert_int_equal(cap->frames[0].reason, MS_SYM_OK);
	assert_int_equal(cap->frames[0].flags, 0);
	assert_string_equal(frame_name(cap, 2), "work");
	assert_int_equal(cap->frames[2].flags, MS_FRAME_RETURN);
	assert_string_equal(frame_name(cap, 4), "__libc_start_main");
	assert_int_equal(cap->frames[5].module, 2);
	assert_int_equal(cap->frames[5].address, 0x7777);
	assert_int_equal(cap->frames[5].name, 0);
	assert_int_equal(cap->frames[5].reason, MS_CAP_UNSYMBOLIZED);

	/* stacks: a prefix tree rooted at the outermost frame */
	assert_int_equal(cap->n_stacks, 6);
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *s = &cap->stacks[i];

		assert_true(s->parent == MS_NONE || s->parent < i);
		assert_int_equal(s->depth, s->parent == MS_NONE ? 1 : cap->stacks[s->parent].depth + 1);
	}
	assert_int_equal(cap->stacks[0].parent, MS_NONE);
	assert_string_equal(frame_name(cap, cap->stacks[0].frame), "__libc_start_main");

	/* threads by (pid, tid), names: last comm, inherited at fork */
	assert_int_equal(cap->n_threads, 4);
	assert_int_equal(cap->threads[0].tid, 99);
	assert_int_equal(cap->threads[0].name, 0);
	assert_int_equal(cap->threads[0].first_time, 0);
	assert_int_equal(cap->threads[1].tid, 100);
	assert_string_equal(cap->strings[cap->threads[1].name], "prog");
	assert_int_equal(cap->threads[1].first_time, 1000);
	assert_int_equal(cap->threads[1].last_time, 2000);
	assert_int_equal(cap->threads[2].tid, 101);
	assert_string_equal(cap->strings[cap->threads[2].name], "prog");
	assert_int_equal(cap->threads[2].first_time, 2500);
	assert_int_equal(cap->threads[2].last_time, 3500);
	assert_string_equal(cap->strings[cap->threads[3].name], "worker");

	/* samples by (time, thread, cpu, stack) */
	assert_int_equal(cap->n_samples, 7);
	assert_int_equal(cap->samples[0].time, 1000);
	assert_int_equal(cap->samples[0].cpu, 0);
	assert_string_equal(stack_path(cap, cap->samples[0].stack), "__libc_start_main;work;leaf_b");
	assert_int_equal(cap->samples[1].time, 1000);
	assert_int_equal(cap->samples[1].cpu, 1);
	assert_string_equal(stack_path(cap, cap->samples[1].stack), "__libc_start_main;work;leaf_a");
	assert_int_equal(cap->samples[2].thread, 1);	/* tid 100 before 102 at 2000 */
	assert_int_equal(cap->samples[3].thread, 3);
	assert_string_equal(stack_path(cap, cap->samples[3].stack), "__libc_start_main;other");
	assert_int_equal(cap->samples[4].time, 2500);
	assert_int_equal(cap->samples[4].stack, MS_NONE);
	assert_int_equal(cap->samples[4].end, MS_END_KERNEL_ONLY);
	assert_string_equal(stack_path(cap, cap->samples[6].stack), "__libc_start_main;");
	for (i = 0; i < cap->n_samples; i++)
		assert_int_equal(cap->samples[i].period, 1000000);

	/* totals */
	assert_int_equal(cap->lost_kernel, 7);
	assert_int_equal(cap->lost_collector, 5);
	assert_int_equal(cap->throttled, 1);
	assert_int_equal(cap->start_time, 1000);
	assert_int_equal(cap->end_time, 3500);
	assert_int_equal(cap->target_exit_code, 3);
	assert_int_equal(cap->flags, 0);

	/* problems by (stage, code), merged, plus the builder's own */
	assert_int_equal(cap->n_problems, 3);
	assert_string_equal(cap->strings[cap->problems[0].stage], "ms-capture");
	assert_string_equal(cap->strings[cap->problems[0].code], "undefined-module");
	assert_non_null(strstr(cap->strings[cap->problems[0].detail], "module id 9"));
	assert_string_equal(cap->strings[cap->problems[1].stage], "ms-collect");
	assert_string_equal(cap->strings[cap->problems[2].code], "truncated-sample");
	assert_int_equal(cap->problems[2].count, 5);
	assert_string_equal(cap->strings[cap->problems[2].detail], "first at byte 99");
	ms_capture_free(cap);
}

static void test_builder_own_problems(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_frame f = { .module = 0, .address = 0x10, .name = S("one"), .symbol_start = 0x10,
			      .reason = MS_SYM_OK };
	struct ms_lost lost = { 9, 0, 0, 4 };
	struct ms_comm c = { 1, 1, 0, false, false, { "ab\0cd", 5 } };
	struct ms_capture *cap;
	const char *codes[] = { "frame-fact-redefined", "module-redefined", "nul-in-string",
				"stream-cut-short", "unknown-lost-source" };
	uint32_t i;

	memset(&m, 0, sizeof(m));
	m.path = S("/a");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	m.path = S("/b");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	f.name = S("two");
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	assert_int_equal(ms_capture_builder_incomplete(b, "cut at byte 5"), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->flags, MS_CAPTURE_INCOMPLETE);
	assert_string_equal(cap->strings[cap->modules[0].path], "/a");
	assert_string_equal(cap->strings[cap->threads[0].name], "ab");
	assert_int_equal(cap->lost_kernel + cap->lost_collector, 0);
	assert_int_equal(cap->n_problems, 5);
	for (i = 0; i < 5; i++) {
		assert_string_equal(cap->strings[cap->problems[i].stage], "ms-capture");
		assert_string_equal(cap->strings[cap->problems[i].code], codes[i]);
		assert_int_equal(cap->problems[i].count, 1);
	}
	assert_string_equal(cap->strings[cap->problems[3].detail], "cut at byte 5");
	ms_capture_free(cap);
}

/* Samples given as STACK_DEF + STACK_REF make the same capture as whole stacks. */
static void test_builder_stack_defs(void **state)
{
	struct ms_capture_builder *whole = ms_capture_builder_new(), *refs = ms_capture_builder_new();
	struct ms_stack *s = calloc(2, sizeof(*s));
	struct ms_stack_ref r = { .pid = 100, .period = 1000 };
	struct ms_capture *a, *b;
	unsigned char *abuf, *bbuf;
	size_t alen, blen;
	const char *err;

	for (int k = 0; k < 2; k++) {
		s[k].pid = 100;
		s[k].period = 1000;
		s[k].reason = k ? MS_END_NO_CFI : MS_END_OUTERMOST;
		s[k].n_frames = 2 + k;
		for (uint32_t i = 0; i < s[k].n_frames; i++) {
			s[k].frames[i].module = MS_NONE;
			s[k].frames[i].address = 0x1000 * (i + 1) + k;
			s[k].frames[i].flags = i ? MS_FRAME_RETURN : 0;
		}
	}
	/* samples: stack 0 twice on thread 1, stack 1 once on thread 2 */
	for (int i = 0; i < 3; i++) {
		int k = i == 2;

		s[k].tid = 1 + k;
		s[k].time = 10 + i;
		assert_int_equal(ms_capture_builder_stack(whole, &s[k]), 0);
	}
	assert_int_equal(ms_capture_builder_stack_def(refs, 0, &s[0]), 0);
	assert_int_equal(ms_capture_builder_stack_def(refs, 1, &s[1]), 0);
	for (int i = 0; i < 3; i++) {
		r.id = i == 2;
		r.tid = 1 + r.id;
		r.time = 10 + i;
		assert_int_equal(ms_capture_builder_stack_ref(refs, &r), 0);
	}
	a = ms_capture_builder_seal(whole);
	b = ms_capture_builder_seal(refs);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(b->n_samples, 3);
	assert_int_equal(ms_capture_encode(a, &abuf, &alen), 0);
	assert_int_equal(ms_capture_encode(b, &bbuf, &blen), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(abuf, bbuf, alen);
	free(abuf);
	free(bbuf);
	ms_capture_free(a);
	ms_capture_free(b);

	/* ids dense and in order; a reference only to what was defined */
	refs = ms_capture_builder_new();
	stderr_begin();
	assert_int_equal(ms_capture_builder_stack_def(refs, 1, &s[0]), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "a stack-def numbers its stack 1 where 0 comes next"));
	ms_capture_builder_free(refs);
	refs = ms_capture_builder_new();
	assert_int_equal(ms_capture_builder_stack_def(refs, 0, &s[0]), 0);
	r.id = 1;
	/* the record is named: its input and byte (ms-capture says where) */
	ms_capture_builder_at(refs, "stdin", 4242);
	stderr_begin();
	assert_int_equal(ms_capture_builder_stack_ref(refs, &r), -1);
	err = stderr_end();
	assert_non_null(strstr(err, "a stack-ref refers to stack 1, which no stack-def before it "
				    "defines (the record at byte 4242 of 'stdin')"));
	ms_capture_builder_free(refs);
	free(s);
}

static void test_builder_empty(void **state)
{
	struct ms_capture *cap = ms_capture_builder_seal(ms_capture_builder_new()), *back;
	unsigned char *buf;
	size_t len;

	assert_non_null(cap);
	assert_int_equal(cap->n_strings, 1);
	assert_int_equal(cap->n_samples + cap->n_threads + cap->n_stacks + cap->n_info, 0);
	assert_int_equal(cap->target_exit_code, -1);
	assert_int_equal(ms_capture_encode(cap, &buf, &len), 0);
	back = ms_capture_load_buffer(buf, len, "empty");
	assert_non_null(back);
	assert_int_equal(back->n_strings, 1);
	assert_int_equal(back->target_exit_code, -1);
	free(buf);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* ---- file format ---- */

/* Everything capture.h promises of a loaded capture, checked independently. */
static void assert_invariants(const struct ms_capture *cap)
{
	uint32_t i;

	assert_true(cap->n_strings >= 1);
	assert_string_equal(cap->strings[0], "");
	for (i = 0; i < cap->n_info; i++) {
		assert_true(cap->info[i].key < cap->n_strings);
		assert_true(cap->info[i].value_text < cap->n_strings);
		if (i)
			assert_true(strcmp(cap->strings[cap->info[i - 1].key],
					   cap->strings[cap->info[i].key]) < 0);
	}
	for (i = 0; i < cap->n_modules; i++) {
		const struct ms_cap_module *m = &cap->modules[i];

		assert_true(m->path < cap->n_strings);
		assert_true(m->build_id_len <= 20);
		/* minor 6: a perf-map or jit-object module's range is in the address space, no other has one */
		if (ms_module_kind_has_base(m->kind))
			assert_true(m->base && m->size && m->base <= UINT64_MAX - m->size);
		else
			assert_int_equal(m->base, 0);
	}
	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		assert_true(x->path < cap->n_strings);
		assert_true(x->status < MS_JIT_READ_STATUS_COUNT);
		assert_true(x->err <= MS_CAP_ERRNO_MAX);
		if (i)
			assert_true(x[-1].pid < x->pid);
	}
	for (i = 0; i < cap->n_frames; i++) {
		assert_true(cap->frames[i].module == MS_NONE || cap->frames[i].module < cap->n_modules);
		assert_true(cap->frames[i].name < cap->n_strings);
		assert_true((uint64_t)cap->frames[i].first_line + cap->frames[i].n_lines <= cap->n_lines);
	}
	for (i = 0; i < cap->n_functions; i++) {
		assert_true(cap->functions[i].name < cap->n_strings);
		assert_true(cap->functions[i].system_name < cap->n_strings);
		assert_true(cap->functions[i].file < cap->n_strings);
	}
	for (i = 0; i < cap->n_lines; i++)
		assert_true(cap->lines[i].function < cap->n_functions);
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *s = &cap->stacks[i];

		assert_true(s->parent == MS_NONE || s->parent < i);
		assert_true(s->frame < cap->n_frames);
		assert_int_equal(s->depth, s->parent == MS_NONE ? 1 : cap->stacks[s->parent].depth + 1);
	}
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];

		assert_true(t->name < cap->n_strings);
		if (i)
			assert_true(t[-1].pid < t->pid || (t[-1].pid == t->pid && t[-1].tid < t->tid));
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *x = &cap->samples[i], *p = x - 1;

		assert_true(x->thread < cap->n_threads);
		assert_true(x->stack == MS_NONE || x->stack < cap->n_stacks);
		assert_true(x->count >= 1);
		if (i)
			assert_true(p->time < x->time || (p->time == x->time &&
				    (p->thread < x->thread || (p->thread == x->thread &&
				     (p->cpu < x->cpu || (p->cpu == x->cpu && p->stack <= x->stack))))));
	}
	for (i = 0; i < cap->n_problems; i++) {
		assert_true(cap->problems[i].stage < cap->n_strings);
		assert_true(cap->problems[i].code < cap->n_strings);
		assert_true(cap->problems[i].detail < cap->n_strings);
	}
	assert_int_equal(!!cap->n_duty, !!(cap->flags & MS_CAPTURE_DUTY));
	for (i = 0; i < cap->n_duty; i++) {
		assert_true(cap->duty[i].duty_ppm >= 1 && cap->duty[i].duty_ppm <= 1000000);
		if (i)
			assert_true(cap->duty[i - 1].time < cap->duty[i].time);
	}
	assert_true(cap->n_losses <= MS_CAPTURE_LOSSES_MAX);
	{
		/* per source, the rows add up to at most the total */
		uint64_t left[2] = { cap->lost_kernel, cap->lost_collector };

		for (i = 0; i < cap->n_losses; i++) {
			const struct ms_cap_loss *x = &cap->losses[i];

			assert_true(x->source == MS_LOST_KERNEL || x->source == MS_LOST_COLLECTOR);
			assert_true(x->time >= 1);
			assert_true(x->count >= 1);
			assert_true(x->count <= left[x->source]);
			left[x->source] -= x->count;
			if (i)
				assert_true(x[-1].time < x->time ||
					    (x[-1].time == x->time && x[-1].source < x->source));
		}
	}
	assert_true(cap->start_time <= cap->end_time);
	/* intervals and evidence (minor 5): only with the flag */
	if (!(cap->flags & MS_CAPTURE_OFF_CPU)) {
		assert_int_equal(cap->n_intervals, 0);
		assert_int_equal(cap->n_evidence, 0);
	}
	for (i = 0; i < cap->n_evidence; i++) {
		const struct ms_cap_evidence *e = &cap->evidence[i], *p = e - 1;

		assert_true(e->cause < MS_CAUSE_COUNT);
		assert_int_equal(e->sources & ~(uint32_t)(MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH), 0);
		assert_true(e->preempt <= 1);
		if (i)
			assert_true(p->cause < e->cause || (p->cause == e->cause &&
				    (p->sources < e->sources || (p->sources == e->sources &&
				     (p->state < e->state || (p->state == e->state &&
				      p->preempt < e->preempt))))));
	}
	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *x = &cap->intervals[i], *p = x - 1;
		uint64_t k = x->start ? x->start : x->end, pk;

		assert_true(x->thread < cap->n_threads);
		assert_true(x->stack == MS_NONE || x->stack < cap->n_stacks);
		assert_true(x->evidence < cap->n_evidence);
		switch (x->missing) {
		case MS_INTERVAL_COMPLETE:
			assert_true(x->start > 0 && x->start <= x->end);
			break;
		case MS_INTERVAL_BEGAN_INSIDE:
		case MS_INTERVAL_LOST_START:
			assert_true(x->start == 0 && x->end > 0);
			assert_int_equal(x->cpu, MS_NONE);
			assert_int_equal(x->stack, MS_NONE);
			break;
		case MS_INTERVAL_ENDED_INSIDE:
		case MS_INTERVAL_LOST_END:
			assert_true(x->start > 0 && x->end == 0);
			break;
		default:
			fail_msg("interval %u: missing %u", i, x->missing);
		}
		if (!i)
			continue;
		pk = p->start ? p->start : p->end;
		assert_true(pk < k || (pk == k && (p->thread < x->thread ||
			    (p->thread == x->thread && (p->end < x->end ||
			     (p->end == x->end && p->stack <= x->stack))))));
	}
}

static void assert_same_capture(const struct ms_capture *a, const struct ms_capture *b)
{
	uint32_t i;

	assert_int_equal(a->major, b->major);
	assert_int_equal(a->minor, b->minor);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->n_strings, b->n_strings);
	for (i = 0; i < a->n_strings; i++)
		assert_string_equal(a->strings[i], b->strings[i]);
	assert_int_equal(a->n_info, b->n_info);
	for (i = 0; i < a->n_info; i++) {
		assert_int_equal(a->info[i].key, b->info[i].key);
		assert_int_equal(a->info[i].value_text, b->info[i].value_text);
		assert_int_equal(a->info[i].value_number, b->info[i].value_number);
	}
	assert_int_equal(a->n_modules, b->n_modules);
	for (i = 0; i < a->n_modules; i++) {
		const struct ms_cap_module *x = &a->modules[i], *y = &b->modules[i];

		assert_int_equal(x->path, y->path);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->build_id_len, y->build_id_len);
		assert_memory_equal(x->build_id, y->build_id, x->build_id_len);
		assert_int_equal(x->dev_maj, y->dev_maj);
		assert_int_equal(x->dev_min, y->dev_min);
		assert_int_equal(x->ino, y->ino);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->mtime, y->mtime);
		assert_int_equal(x->status, y->status);
		assert_int_equal(x->status_reason, y->status_reason);
		assert_int_equal(x->base, y->base);
	}
	assert_int_equal(a->n_perf_maps, b->n_perf_maps);
	if (a->n_perf_maps)	/* four u32 then u64s: no padding to differ */
		assert_memory_equal(a->perf_maps, b->perf_maps,
				    a->n_perf_maps * sizeof(*a->perf_maps));
	assert_int_equal(a->n_frames, b->n_frames);
	for (i = 0; i < a->n_frames; i++) {
		const struct ms_cap_frame *x = &a->frames[i], *y = &b->frames[i];

		assert_int_equal(x->module, y->module);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->name, y->name);
		assert_int_equal(x->symbol_start, y->symbol_start);
		assert_int_equal(x->reason, y->reason);
		assert_int_equal(x->first_line, y->first_line);
		assert_int_equal(x->n_lines, y->n_lines);
	}
	assert_int_equal(a->n_functions, b->n_functions);
	for (i = 0; i < a->n_functions; i++) {
		assert_int_equal(a->functions[i].name, b->functions[i].name);
		assert_int_equal(a->functions[i].system_name, b->functions[i].system_name);
		assert_int_equal(a->functions[i].file, b->functions[i].file);
		assert_int_equal(a->functions[i].start_line, b->functions[i].start_line);
	}
	assert_int_equal(a->n_lines, b->n_lines);
	for (i = 0; i < a->n_lines; i++) {
		assert_int_equal(a->lines[i].function, b->lines[i].function);
		assert_int_equal(a->lines[i].line, b->lines[i].line);
	}
	assert_int_equal(a->n_stacks, b->n_stacks);
	for (i = 0; i < a->n_stacks; i++) {
		assert_int_equal(a->stacks[i].parent, b->stacks[i].parent);
		assert_int_equal(a->stacks[i].frame, b->stacks[i].frame);
		assert_int_equal(a->stacks[i].depth, b->stacks[i].depth);
	}
	assert_int_equal(a->n_threads, b->n_threads);
	for (i = 0; i < a->n_threads; i++) {
		const struct ms_cap_thread *x = &a->threads[i], *y = &b->threads[i];

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->name, y->name);
		assert_int_equal(x->first_time, y->first_time);
		assert_int_equal(x->last_time, y->last_time);
	}
	assert_int_equal(a->n_samples, b->n_samples);
	for (i = 0; i < a->n_samples; i++) {
		const struct ms_cap_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_int_equal(x->time, y->time);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->cpu, y->cpu);
		assert_int_equal(x->stack, y->stack);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->period, y->period);
		assert_int_equal(x->count, y->count);
	}
	assert_int_equal(a->n_problems, b->n_problems);
	for (i = 0; i < a->n_problems; i++) {
		assert_int_equal(a->problems[i].stage, b->problems[i].stage);
		assert_int_equal(a->problems[i].code, b->problems[i].code);
		assert_int_equal(a->problems[i].detail, b->problems[i].detail);
		assert_int_equal(a->problems[i].count, b->problems[i].count);
	}
	assert_int_equal(a->n_duty, b->n_duty);
	for (i = 0; i < a->n_duty; i++) {
		assert_int_equal(a->duty[i].time, b->duty[i].time);
		assert_int_equal(a->duty[i].duty_ppm, b->duty[i].duty_ppm);
		assert_int_equal(a->duty[i].share_ppm, b->duty[i].share_ppm);
		assert_int_equal(a->duty[i].rate, b->duty[i].rate);
		assert_int_equal(a->duty[i].budget_ppm, b->duty[i].budget_ppm);
	}
	assert_int_equal(a->n_losses, b->n_losses);
	for (i = 0; i < a->n_losses; i++) {
		assert_int_equal(a->losses[i].time, b->losses[i].time);
		assert_int_equal(a->losses[i].count, b->losses[i].count);
		assert_int_equal(a->losses[i].source, b->losses[i].source);
	}
	assert_int_equal(a->n_evidence, b->n_evidence);
	for (i = 0; i < a->n_evidence; i++) {
		assert_int_equal(a->evidence[i].cause, b->evidence[i].cause);
		assert_int_equal(a->evidence[i].sources, b->evidence[i].sources);
		assert_int_equal(a->evidence[i].state, b->evidence[i].state);
		assert_int_equal(a->evidence[i].preempt, b->evidence[i].preempt);
	}
	assert_int_equal(a->n_intervals, b->n_intervals);
	for (i = 0; i < a->n_intervals; i++) {
		const struct ms_cap_interval *x = &a->intervals[i], *y = &b->intervals[i];

		assert_int_equal(x->start, y->start);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->cpu, y->cpu);
		assert_int_equal(x->stack, y->stack);
		assert_int_equal(x->stack_end, y->stack_end);
		assert_int_equal(x->missing, y->missing);
		assert_int_equal(x->evidence, y->evidence);
	}
	assert_int_equal(a->lost_kernel, b->lost_kernel);
	assert_int_equal(a->lost_collector, b->lost_collector);
	assert_int_equal(a->throttled, b->throttled);
	assert_int_equal(a->start_time, b->start_time);
	assert_int_equal(a->end_time, b->end_time);
	assert_int_equal(a->target_exit_code, b->target_exit_code);
}

/* buf (len bytes) loads, keeps the invariants, and holds what a holds. */
static void assert_reloads_same(const struct ms_capture *a, const uint8_t *buf, size_t len)
{
	struct ms_capture *back = ms_capture_load_buffer(buf, len, "t.msc");

	assert_non_null(back);
	assert_invariants(back);
	assert_same_capture(a, back);
	ms_capture_free(back);
}

static void encode(const struct ms_capture *cap, unsigned char **buf, size_t *len)
{
	assert_int_equal(ms_capture_encode(cap, buf, len), 0);
}

/* a and b encode to the same bytes: *buf (a's, for the caller to free), *len. */
static void encode_alike(const struct ms_capture *a, const struct ms_capture *b,
			 unsigned char **buf, size_t *len)
{
	unsigned char *other;
	size_t other_len;

	encode(a, buf, len);
	encode(b, &other, &other_len);
	assert_int_equal(*len, other_len);
	assert_memory_equal(*buf, other, *len);
	free(other);
}

static void test_encode_load(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	unsigned char *buf;
	size_t len;

	encode(cap, &buf, &len);
	assert_memory_equal(buf, MS_CAPTURE_MAGIC, 8);
	assert_int_equal(ms_get_u64(buf + MS_CAPF_FILE_SIZE), len);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	assert_invariants(cap);
	assert_invariants(back);
	ms_capture_free(back);
	free(buf);
	ms_capture_free(cap);
}

static void test_deterministic(void **state)
{
	struct ms_capture *a = make_capture(FEED_LISTED), *b = make_capture(FEED_LISTED);
	struct ms_capture *c = make_capture(FEED_REVERSED), *d = make_capture(FEED_SORTED);
	unsigned char *ba, *bb, *bc, *bd;
	size_t la, lb, lc, ld;

	encode(a, &ba, &la);
	encode(b, &bb, &lb);
	encode(c, &bc, &lc);
	encode(d, &bd, &ld);
	assert_int_equal(la, lb);
	assert_memory_equal(ba, bb, la);
	/* The same stacks in the opposite order: the same file. */
	assert_int_equal(la, lc);
	assert_memory_equal(ba, bc, la);
	/* And in time order already (the sort is skipped): the same file. */
	assert_int_equal(la, ld);
	assert_memory_equal(ba, bd, la);
	free(ba);
	free(bb);
	free(bc);
	free(bd);
	ms_capture_free(a);
	ms_capture_free(b);
	ms_capture_free(c);
	ms_capture_free(d);
}

static char tmpdir[] = "/tmp/capture-test.XXXXXX";

static unsigned count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_write_load_file(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	char path[128], bad_path[160];
	const char *msg;

	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/p.msc", tmpdir);
	assert_int_equal(ms_capture_write(cap, path), 0);
	/* written again over itself */
	assert_int_equal(ms_capture_write(cap, path), 0);
	assert_int_equal(count_files(tmpdir), 1);	/* no temporary left */
	back = ms_capture_load(path);
	assert_non_null(back);
	assert_same_capture(cap, back);
	ms_capture_free(back);

	snprintf(bad_path, sizeof(bad_path), "%s/no/such/dir/p.msc", tmpdir);
	stderr_begin();
	assert_int_equal(ms_capture_write(cap, bad_path), -1);
	msg = stderr_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "cannot create"));

	stderr_begin();
	assert_null(ms_capture_load(bad_path));
	msg = stderr_end();
	assert_non_null(strstr(msg, "cannot open capture"));
	unlink(path);
	rmdir(tmpdir);
	ms_capture_free(cap);
}

/* ---- damaged files: bytes ---- */

static void test_truncated_everywhere(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	unsigned char *buf;
	size_t len, cut;

	encode(cap, &buf, &len);
	for (cut = 0; cut < len; cut++) {
		/* A copy of exactly cut bytes, so a read past it is a fault under ASan. */
		unsigned char *part = malloc(cut ? cut : 1);

		memcpy(part, buf, cut);
		if (cut < MS_CAPF_HEADER_SIZE)
			expect_refused(part, cut, "truncated", "section 'header'", NULL);
		else if (cut < MS_CAPF_HEADER_SIZE + N_SECTIONS * MS_CAPF_DIR_SIZE_BYTES)
			expect_refused(part, cut, "truncated", "section 'directory'", NULL);
		else
			expect_refused(part, cut, "truncated", "section '", NULL);
		free(part);
	}
	/* the last section's last byte */
	expect_refused(buf, len - 1, "truncated", "section 'lines'", NULL);
	free(buf);
	ms_capture_free(cap);
}

static void test_flipped_byte_each_section(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	unsigned char *buf;
	size_t len;
	uint32_t i, n;
	char want[64];

	encode(cap, &buf, &len);
	n = ms_get_u32(buf + MS_CAPF_N_SECTIONS);
	assert_int_equal(n, N_SECTIONS);
	for (i = 0; i < n; i++) {
		const unsigned char *d = buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		uint64_t off = ms_get_u64(d + MS_CAPF_DIR_OFFSET), size = ms_get_u64(d + MS_CAPF_DIR_SIZE);
		uint64_t at;

		snprintf(want, sizeof(want), "section '%s'",
			 ms_capf_section_name(ms_get_u32(d + MS_CAPF_DIR_ID)));
		for (at = off; at < off + size; at += size / 3 + 1) {
			buf[at] ^= 0x40;
			expect_refused(buf, len, want, "checksum", NULL);
			buf[at] ^= 0x40;
		}
	}
	/* a byte of the directory or header */
	for (size_t at = 16; at < MS_CAPF_HEADER_SIZE + n * MS_CAPF_DIR_SIZE_BYTES; at += 13) {
		buf[at] ^= 0x01;
		expect_refused(buf, len, "section '", NULL);
		buf[at] ^= 0x01;
	}
	free(buf);
	ms_capture_free(cap);
}

static void fix_header_checksum(unsigned char *buf)
{
	uint32_t n = ms_get_u32(buf + MS_CAPF_N_SECTIONS);
	uint32_t crc = crc32_z(0, buf, MS_CAPF_CHECKSUM);

	crc = crc32_z(crc, buf + MS_CAPF_HEADER_SIZE, (size_t)n * MS_CAPF_DIR_SIZE_BYTES);
	ms_put_u32(buf + MS_CAPF_CHECKSUM, crc);
}

static void test_header_refusals(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *ok;
	unsigned char *buf, *d;
	size_t len;

	encode(cap, &buf, &len);

	buf[0] = 'X';
	expect_refused(buf, len, "not a microscope capture", NULL);
	buf[0] = 'M';
	expect_refused((const unsigned char *)"hello, world, this is not a capture at all....", 46,
		       "not a microscope capture", NULL);

	ms_put_u32(buf + MS_CAPF_MAJOR, 2);
	fix_header_checksum(buf);
	expect_refused(buf, len, "format 2.x; this microscope reads 1.x", NULL);
	ms_put_u32(buf + MS_CAPF_MAJOR, 1);

	/* a newer minor and an unknown informational flag are fine */
	ms_put_u32(buf + MS_CAPF_MINOR, 7);
	ms_put_u32(buf + MS_CAPF_FLAGS, 1u << 5);
	fix_header_checksum(buf);
	ok = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(ok);
	assert_int_equal(ok->minor, 7);
	ms_capture_free(ok);
	/* an unknown required feature is not */
	ms_put_u32(buf + MS_CAPF_FLAGS, 1u << 20);
	fix_header_checksum(buf);
	expect_refused(buf, len, "needs features", NULL);
	ms_put_u32(buf + MS_CAPF_FLAGS, 0);
	ms_put_u32(buf + MS_CAPF_MINOR, 0);

	/* the frames section's offset past the end of the file */
	d = buf + MS_CAPF_HEADER_SIZE + 3 * MS_CAPF_DIR_SIZE_BYTES;
	assert_int_equal(ms_get_u32(d + MS_CAPF_DIR_ID), MS_CAPF_FRAMES);
	ms_put_u64(d + MS_CAPF_DIR_OFFSET, len + 100);
	fix_header_checksum(buf);
	expect_refused(buf, len, "section 'frames'", "outside the file", NULL);
	/* or into the directory */
	ms_put_u64(d + MS_CAPF_DIR_OFFSET, 8);
	fix_header_checksum(buf);
	expect_refused(buf, len, "section 'frames'", "outside the file", NULL);
	free(buf);

	/* the file longer than its header says */
	encode(cap, &buf, &len);
	buf = realloc(buf, len + 1);
	buf[len] = 0;
	expect_refused(buf, len + 1, "section 'header'", "follow the end", NULL);
	free(buf);
	ms_capture_free(cap);
}

/* ---- damaged files: valid checksums, wrong contents ---- */

struct tsec {
	uint32_t id, codec;
	unsigned char *raw;	/* decompressed (known codec) or stored */
	size_t raw_len;
};

struct tfile {
	uint32_t major, minor, flags, n;
	struct tsec s[24];
};

static void parse_file(const unsigned char *buf, size_t len, struct tfile *f)
{
	uint32_t i;

	memset(f, 0, sizeof(*f));
	f->major = ms_get_u32(buf + MS_CAPF_MAJOR);
	f->minor = ms_get_u32(buf + MS_CAPF_MINOR);
	f->flags = ms_get_u32(buf + MS_CAPF_FLAGS);
	f->n = ms_get_u32(buf + MS_CAPF_N_SECTIONS);
	assert_true(f->n <= 24);
	for (i = 0; i < f->n; i++) {
		const unsigned char *d = buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		struct tsec *s = &f->s[i];
		LZ4F_dctx *dctx;
		size_t in_len = ms_get_u64(d + MS_CAPF_DIR_SIZE), out_len;

		s->id = ms_get_u32(d + MS_CAPF_DIR_ID);
		s->codec = ms_get_u32(d + MS_CAPF_DIR_CODEC);
		assert_int_equal(s->codec, MS_CAPF_CODEC_LZ4F);
		s->raw_len = out_len = ms_get_u64(d + MS_CAPF_DIR_RAW_SIZE);
		s->raw = malloc(s->raw_len);
		assert_false(LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
		assert_int_equal(LZ4F_decompress(dctx, s->raw, &out_len,
						 buf + ms_get_u64(d + MS_CAPF_DIR_OFFSET), &in_len, NULL), 0);
		assert_int_equal(out_len, s->raw_len);
		LZ4F_freeDecompressionContext(dctx);
	}
}

/* Assemble f by the spec, every checksum right; codec 0 sections are stored as is. */
static unsigned char *assemble(struct tfile *f, size_t *len)
{
	size_t dir_end = MS_CAPF_HEADER_SIZE + (size_t)f->n * MS_CAPF_DIR_SIZE_BYTES, at = dir_end;
	unsigned char *stored[24], *buf;
	size_t stored_len[24];
	uint32_t i;

	for (i = 0; i < f->n; i++) {
		struct tsec *s = &f->s[i];

		if (s->codec == MS_CAPF_CODEC_LZ4F) {
			size_t bound = LZ4F_compressFrameBound(s->raw_len, NULL);

			stored[i] = malloc(bound);
			stored_len[i] = LZ4F_compressFrame(stored[i], bound, s->raw, s->raw_len, NULL);
			assert_false(LZ4F_isError(stored_len[i]));
		} else {
			stored[i] = malloc(s->raw_len + 1);
			memcpy(stored[i], s->raw, s->raw_len);
			stored_len[i] = s->raw_len;
		}
		at += stored_len[i];
	}
	*len = at;
	buf = calloc(1, at);
	memcpy(buf, MS_CAPTURE_MAGIC, 8);
	ms_put_u32(buf + MS_CAPF_MAJOR, f->major);
	ms_put_u32(buf + MS_CAPF_MINOR, f->minor);
	ms_put_u32(buf + MS_CAPF_FLAGS, f->flags);
	ms_put_u32(buf + MS_CAPF_N_SECTIONS, f->n);
	ms_put_u64(buf + MS_CAPF_FILE_SIZE, at);
	at = dir_end;
	for (i = 0; i < f->n; i++) {
		unsigned char *d = buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;

		ms_put_u32(d + MS_CAPF_DIR_ID, f->s[i].id);
		ms_put_u32(d + MS_CAPF_DIR_CODEC, f->s[i].codec);
		ms_put_u64(d + MS_CAPF_DIR_OFFSET, at);
		ms_put_u64(d + MS_CAPF_DIR_SIZE, stored_len[i]);
		ms_put_u64(d + MS_CAPF_DIR_RAW_SIZE, f->s[i].raw_len);
		ms_put_u32(d + MS_CAPF_DIR_CHECKSUM, crc32_z(0, stored[i], stored_len[i]));
		memcpy(buf + at, stored[i], stored_len[i]);
		at += stored_len[i];
		free(stored[i]);
	}
	fix_header_checksum(buf);
	return buf;
}

static void release_file(struct tfile *f)
{
	for (uint32_t i = 0; i < f->n; i++)
		free(f->s[i].raw);
}

static struct tsec *section(struct tfile *f, uint32_t id)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (f->s[i].id == id)
			return &f->s[i];
	fail_msg("no section %u", id);
	return NULL;
}

static void test_assemble_matches_writer(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	unsigned char *buf, *again;
	size_t len, len2;
	struct tfile f;

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	again = assemble(&f, &len2);
	back = ms_capture_load_buffer(again, len2, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(again);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/* Encode cap after edit() changed it, and expect the reader to refuse it. */
static void refuse_edited(void (*edit)(struct ms_capture *), ...)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	unsigned char *buf;
	size_t len;
	const char *a, *b;
	va_list ap;

	edit(cap);
	encode(cap, &buf, &len);
	va_start(ap, edit);
	a = va_arg(ap, const char *);
	b = va_arg(ap, const char *);
	va_end(ap);
	expect_refused(buf, len, a, b, NULL);
	free(buf);
	ms_capture_free(cap);
}

static void edit_parent(struct ms_capture *c) { c->stacks[2].parent = 2; }
static void edit_parent_later(struct ms_capture *c) { c->stacks[1].parent = 5; }
static void edit_depth(struct ms_capture *c) { c->stacks[3].depth = 9; }
static void edit_stack_frame(struct ms_capture *c) { c->stacks[3].frame = c->n_frames; }
static void edit_frame_module(struct ms_capture *c) { c->frames[1].module = c->n_modules; }
static void edit_frame_name(struct ms_capture *c) { c->frames[1].name = c->n_strings + 3; }
static void edit_sample_thread(struct ms_capture *c) { c->samples[2].thread = c->n_threads; }
static void edit_sample_stack(struct ms_capture *c) { c->samples[2].stack = c->n_stacks; }
static void edit_sample_order(struct ms_capture *c) { c->samples[5].time = 1; }
static void edit_thread_order(struct ms_capture *c) { c->threads[2].tid = 100; }
static void edit_thread_name(struct ms_capture *c) { c->threads[0].name = MS_NONE; }
static void edit_info_order(struct ms_capture *c)
{
	struct ms_cap_info t = c->info[0];

	c->info[0] = c->info[1];
	c->info[1] = t;
}
static void edit_module_path(struct ms_capture *c) { c->modules[1].path = c->n_strings; }
static void edit_build_id(struct ms_capture *c) { c->modules[0].build_id_len = 21; }
static void edit_problem(struct ms_capture *c) { c->problems[1].detail = c->n_strings; }
static void edit_times(struct ms_capture *c) { c->start_time = c->end_time + 1; }
/* One chain a frame deeper than any stream's stack: refused, not analysed in O(depth^2). */
static void edit_too_deep(struct ms_capture *c)
{
	enum { DEPTH = MS_FRAMES_MAX + 1 };
	struct ms_cap_stack *s = ms_capture_keep(c, calloc(DEPTH, sizeof(*s)));

	assert_non_null(s);
	for (uint32_t i = 0; i < DEPTH; i++)
		s[i] = (struct ms_cap_stack){ i ? i - 1 : MS_NONE, 0, i + 1 };
	c->stacks = s;
	c->n_stacks = DEPTH;
}

static void test_bad_references(void **state)
{
	refuse_edited(edit_parent, "section 'stacks'", "parent 2 is not an earlier row");
	refuse_edited(edit_parent_later, "section 'stacks'", "parent 5");
	refuse_edited(edit_depth, "section 'stacks'", "depth 9");
	refuse_edited(edit_stack_frame, "section 'stacks'", "frame 6 of 6");
	refuse_edited(edit_frame_module, "section 'frames'", "module 3 of 3");
	refuse_edited(edit_frame_name, "section 'frames'", "name is string");
	refuse_edited(edit_sample_thread, "section 'samples'", "thread 4 of 4");
	refuse_edited(edit_sample_stack, "section 'samples'", "stack 6 of 6");
	refuse_edited(edit_sample_order, "section 'samples'", "out of order");
	refuse_edited(edit_thread_order, "section 'threads'", "row 2");
	refuse_edited(edit_thread_name, "section 'threads'", "name is string");
	refuse_edited(edit_info_order, "section 'info'", "not sorted");
	refuse_edited(edit_module_path, "section 'modules'", "path is string");
	refuse_edited(edit_build_id, "section 'modules'", "build id of 21 bytes");
	refuse_edited(edit_problem, "section 'problems'", "detail is string");
	refuse_edited(edit_times, "section 'totals'", "start time");
	refuse_edited(edit_too_deep, "section 'stacks'", "row 1024: depth 1025 (at most 1024");
}

static void test_bad_sections(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;
	struct tsec *s;
	unsigned char *raw;
	size_t raw_len;

	encode(cap, &buf, &len);

	/* lines (the last) under an unknown id: skipped, so the required one is missing */
	parse_file(buf, len, &f);
	section(&f, MS_CAPF_LINES)->id = 99;
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'lines'", "missing", NULL);
	free(bad);
	release_file(&f);

	/* sections out of order */
	parse_file(buf, len, &f);
	f.s[0].id = 5;
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'directory'", "increasing", NULL);
	free(bad);
	release_file(&f);

	/* an unknown compression for a known section */
	parse_file(buf, len, &f);
	section(&f, MS_CAPF_STACKS)->codec = 0;
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'stacks'", "unknown compression", NULL);
	free(bad);
	release_file(&f);

	/* a row count that does not fit the bytes */
	parse_file(buf, len, &f);
	s = section(&f, MS_CAPF_SAMPLES);
	ms_put_u32(s->raw, ms_get_u32(s->raw) + 1);
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'samples'", "do not fill", NULL);
	free(bad);
	release_file(&f);

	/* rows smaller than v1's */
	parse_file(buf, len, &f);
	s = section(&f, MS_CAPF_THREADS);
	ms_put_u32(s->raw + 4, 16);
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'threads'", "rows of 16 bytes", NULL);
	free(bad);
	release_file(&f);

	/* strings: a count that disagrees, a first string that is not "" */
	parse_file(buf, len, &f);
	s = section(&f, MS_CAPF_STRINGS);
	ms_put_u32(s->raw, ms_get_u32(s->raw) - 1);
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'strings'", "more than", NULL);
	free(bad);
	ms_put_u32(s->raw, ms_get_u32(s->raw) + 1);
	s->raw[MS_CAPF_TABLE_HEADER] = 'x';
	s->raw[MS_CAPF_TABLE_HEADER + 1] = '\0';
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'strings'", "string 0", NULL);
	free(bad);
	s->raw[s->raw_len - 1] = 'x';
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'strings'", "not terminated", NULL);
	free(bad);
	release_file(&f);

	/* a directory raw size that is not the data's */
	parse_file(buf, len, &f);
	s = section(&f, MS_CAPF_INFO);
	{
		unsigned char *tmp;
		uint32_t i;

		bad = assemble(&f, &blen);
		for (i = 0; i < f.n; i++)
			if (f.s[i].id == MS_CAPF_INFO)
				break;
		tmp = bad + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES + MS_CAPF_DIR_RAW_SIZE;
		ms_put_u64(tmp, ms_get_u64(tmp) + 16);
		fix_header_checksum(bad);
		expect_refused(bad, blen, "section 'info'", NULL);
		ms_put_u64(tmp, (uint64_t)1 << 40);
		fix_header_checksum(bad);
		expect_refused(bad, blen, "section 'info'", "implausible size", NULL);
		free(bad);
	}
	release_file(&f);

	/*
	 * A later minor version: an extra section and wider rows. A v1 reader
	 * skips both and sees the same capture.
	 */
	parse_file(buf, len, &f);
	f.minor = 9;
	f.s[f.n].id = 50;
	f.s[f.n].codec = 77;
	f.s[f.n].raw = (unsigned char *)strdup("data of a section from the future");
	f.s[f.n].raw_len = strlen((char *)f.s[f.n].raw);
	f.n++;
	s = section(&f, MS_CAPF_FRAMES);
	{
		uint32_t n = ms_get_u32(s->raw), i;

		raw_len = MS_CAPF_TABLE_HEADER + (size_t)n * (MS_CAPF_ROW_FRAMES + 8);
		raw = calloc(1, raw_len);
		ms_put_u32(raw, n);
		ms_put_u32(raw + 4, MS_CAPF_ROW_FRAMES + 8);
		for (i = 0; i < n; i++) {
			unsigned char *row = raw + MS_CAPF_TABLE_HEADER + i * (MS_CAPF_ROW_FRAMES + 8);

			memcpy(row, s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_FRAMES,
			       MS_CAPF_ROW_FRAMES);
			memset(row + MS_CAPF_ROW_FRAMES, 0xee, 8);
		}
		free(s->raw);
		s->raw = raw;
		s->raw_len = raw_len;
	}
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	assert_int_equal(back->minor, 9);
	back->minor = cap->minor;
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(bad);
	release_file(&f);

	free(buf);
	ms_capture_free(cap);
}


/*
 * Random edits of the decompressed tables, reassembled with valid
 * checksums: the reader either refuses the file with one message naming a
 * section, or returns a capture that keeps every invariant. cap is freed.
 */
static void mutate_sections(struct ms_capture *cap)
{
	struct ms_capture *back;
	uint64_t rnd = 12345;
	unsigned char *buf, *bad;
	size_t len, blen;
	unsigned iter, refused = 0, loaded = 0;

	encode(cap, &buf, &len);
	for (iter = 0; iter < 3000; iter++) {
		struct tfile f;
		struct tsec *s;
		unsigned k, n;
		const char *msg;

		parse_file(buf, len, &f);
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		s = &f.s[(rnd >> 33) % f.n];
		n = 1 + (rnd >> 20) % 4;
		for (k = 0; k < n; k++) {
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			/* Mostly small values, so that indexes land near their limits. */
			s->raw[(rnd >> 33) % s->raw_len] = (rnd >> 8) & 1 ? (rnd >> 12) & 0x0f : (rnd >> 12);
		}
		bad = assemble(&f, &blen);
		stderr_begin();
		back = ms_capture_load_buffer(bad, blen, "t.msc");
		msg = stderr_end();
		if (back) {
			assert_invariants(back);
			assert_string_equal(msg, "");
			ms_capture_free(back);
			loaded++;
		} else {
			assert_int_equal(count_lines(msg), 1);
			assert_non_null(strstr(msg, "section '"));
			refused++;
		}
		free(bad);
		release_file(&f);
	}
	/* Both outcomes happen, or the test proves little. */
	assert_true(refused > 100);
	assert_true(loaded > 100);
	free(buf);
	ms_capture_free(cap);
}

static struct ms_capture *make_loss_capture(void);

static void test_mutated_sections(void **state)
{
	mutate_sections(make_capture(FEED_LISTED));
	/* and a file with loss rows (format 1.4) */
	mutate_sections(make_loss_capture());
}

/* ---- streams ---- */

/* Dump cap into a file and read it back through the stream library. */
static struct ms_capture *through_stream(const struct ms_capture *cap, unsigned flags,
					 off_t cut, int *rc)
{
	FILE *f = tmpfile();
	struct ms_writer *w;
	struct ms_reader *r;
	struct ms_capture *back = NULL;

	assert_non_null(f);
	w = ms_writer_open(fileno(f), "tmp", 0);
	assert_non_null(w);
	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	if (cut)
		assert_int_equal(ftruncate(fileno(f), lseek(fileno(f), 0, SEEK_END) - cut), 0);
	lseek(fileno(f), 0, SEEK_SET);
	stderr_begin();
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	*rc = ms_capture_from_stream(r, &(struct ms_capture_stream_options){ .flags = flags },
				     &back);
	stderr_end();	/* the message stays in errbuf */
	ms_reader_free(r);
	fclose(f);
	return back;
}

/* cap dumped as a stream and captured again: the same tables, the same file. */
static void assert_dump_round_trip(const struct ms_capture *cap)
{
	struct ms_capture *back;
	unsigned char *a, *b;
	size_t la, lb;
	int rc;

	back = through_stream(cap, 0, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(back);
	/* The dump's header names only ms-capture; the info row keeps the chain. */
	assert_same_capture(cap, back);
	encode(cap, &a, &la);
	encode(back, &b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	ms_capture_free(back);
}

static void test_dump_round_trip(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);

	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

static void test_stream_cut_short(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back, *again;
	unsigned char *a, *b;
	size_t la, lb;
	uint64_t n;
	int rc;

	/* Cut inside the trailer: no capture without salvage. */
	back = through_stream(cap, 0, 2, &rc);
	assert_null(back);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(errbuf, "'tmp': stream cut short inside the record"));
	assert_int_equal(count_lines(errbuf), 1);

	back = through_stream(cap, MS_CAPTURE_SALVAGE, 2, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(back);
	assert_int_equal(back->flags, MS_CAPTURE_INCOMPLETE);
	assert_int_equal(back->n_samples, cap->n_samples);
	assert_true(ms_capture_info_number(back, "ignored-records.sample", &n));
	assert_int_equal(n, 7);
	assert_int_equal(back->n_problems, cap->n_problems + 1);
	assert_string_equal(back->strings[back->problems[0].code], "stream-cut-short");
	assert_non_null(strstr(back->strings[back->problems[0].detail], "without a trailer"));

	/* An incomplete capture dumps with an incomplete trailer, and stays so. */
	again = through_stream(back, 0, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(again);
	encode(back, &a, &la);
	encode(again, &b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	ms_capture_free(again);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* ---- source facts: functions, lines, module status (minor 1) ---- */

struct tline {
	const char *function, *system_name, *file;
	uint32_t line, function_line;
};

static void feed_frame_lines(struct ms_capture_builder *b, uint32_t module, uint64_t address,
			     const char *name, uint32_t reason, uint32_t n, const struct tline *l)
{
	struct ms_frame *f = calloc(1, sizeof(*f));
	uint32_t i;

	f->module = module;
	f->address = address;
	f->name = (struct ms_str){ name, strlen(name) };
	f->symbol_start = address & ~0xffull;
	f->reason = reason;
	f->n_lines = n;
	for (i = 0; i < n; i++) {
		f->lines[i].function = (struct ms_str){ l[i].function, strlen(l[i].function) };
		f->lines[i].system_name = (struct ms_str){ l[i].system_name, strlen(l[i].system_name) };
		f->lines[i].file = (struct ms_str){ l[i].file, strlen(l[i].file) };
		f->lines[i].line = l[i].line;
		f->lines[i].function_line = l[i].function_line;
	}
	assert_int_equal(ms_capture_builder_frame(b, f), 0);
	free(f);
}

/* A stack of (module, address, flags) triples, innermost first. */
static void feed_stack_flags(struct ms_capture_builder *b, uint64_t time, uint32_t n, ...)
{
	struct ms_stack *s = calloc(1, sizeof(*s));
	va_list ap;
	uint32_t i;

	s->pid = s->tid = 7;
	s->time = time;
	s->period = 1000;
	s->reason = MS_END_OUTERMOST;
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = va_arg(ap, uint32_t);
	}
	va_end(ap);
	s->n_frames = n;
	assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

static const struct tline chain_1110[] = {	/* leaf inlined into mid inlined into outer */
	{ "leaf", "", "/src/a.c", 12, 10 },
	{ "mid", "_Z3midv", "/src/a.h", 30, 25 },
	{ "outer", "", "/src/a.c", 40, 38 },
};
static const struct tline chain_1120[] = {
	{ "mid", "_Z3midv", "/src/a.h", 31, 25 },
	{ "outer", "", "/src/a.c", 41, 38 },
};
static const struct tline chain_main[] = { { "main", "", "/src/a.c", 50, 48 } };
static const struct tline chain_ghost[] = { { "ghost", "", "/src/ghost.c", 1, 1 } };

/*
 * Three stacks over frames with inline chains; reverse feeds the facts and
 * the stacks in the opposite order, which must not change the capture.
 */
static struct ms_capture *make_lines_capture(bool reverse)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	int k;

	assert_non_null(b);
	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/inl"));
	feed_module(b, 1, MS_MODULE_FILE, S("/lib/libm.so.6"));
	for (k = 0; k < 5; k++) {
		switch (reverse ? 4 - k : k) {
		case 0: feed_frame_lines(b, 0, 0x1110, "outer", MS_SYM_OK, 3, chain_1110); break;
		case 1: feed_frame_lines(b, 0, 0x1120, "outer", MS_SYM_OK, 2, chain_1120); break;
		case 2: feed_frame_lines(b, 0, 0x1210, "main", MS_SYM_OK, 1, chain_main); break;
		case 3: feed_frame_lines(b, 1, 0x500, "sqrt", MS_SYM_OK, 0, NULL); break;
		case 4: feed_frame_lines(b, 0, 0x9999, "unused", MS_SYM_OK, 1, chain_ghost); break;
		}
	}
	/* the same address again with another chain: the first is kept */
	feed_frame_lines(b, 0, 0x1120, "outer", MS_SYM_OK, 1, chain_1120 + 1);
	for (k = 0; k < 3; k++) {
		switch (reverse ? 2 - k : k) {
		case 0:
			feed_stack_flags(b, 100, 3, 0u, (uint64_t)0x1110, 0u,
					 0u, (uint64_t)0x1210, (uint32_t)MS_FRAME_RETURN,
					 1u, (uint64_t)0x500, (uint32_t)MS_FRAME_RETURN);
			break;
		case 1:
			feed_stack_flags(b, 200, 3, 0u, (uint64_t)0x1120, 0u,
					 0u, (uint64_t)0x1210, (uint32_t)MS_FRAME_RETURN,
					 1u, (uint64_t)0x500, (uint32_t)MS_FRAME_RETURN);
			break;
		case 2:
			feed_stack_flags(b, 300, 3, 1u, (uint64_t)0x500, 0u,
					 0u, (uint64_t)0x1120, (uint32_t)MS_FRAME_RETURN,
					 0u, (uint64_t)0x1210, (uint32_t)MS_FRAME_RETURN);
			break;
		}
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static const char *fn_name(const struct ms_capture *cap, uint32_t line)
{
	return cap->strings[cap->functions[cap->lines[line].function].name];
}

static void test_lines_tables(void **state)
{
	struct ms_capture *cap = make_lines_capture(false);
	static const struct { uint32_t module, flags; uint64_t address; uint32_t first, n; } fr[] = {
		{ 0, 0, 0x1110, 0, 3 },
		{ 0, 0, 0x1120, 3, 2 },
		{ 0, MS_FRAME_RETURN, 0x1120, 3, 2 },	/* shares the range of its address */
		{ 0, MS_FRAME_RETURN, 0x1210, 5, 1 },
		{ 1, 0, 0x500, 0, 0 },
		{ 1, MS_FRAME_RETURN, 0x500, 0, 0 },
	};
	static const struct { const char *name; uint32_t line; } ln[] = {
		{ "leaf", 12 }, { "mid", 30 }, { "outer", 40 },
		{ "mid", 31 }, { "outer", 41 },
		{ "main", 50 },
	};
	const struct ms_cap_function *fn;
	uint32_t i;

	assert_int_equal(cap->n_frames, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(cap->frames[i].module, fr[i].module);
		assert_int_equal(cap->frames[i].flags, fr[i].flags);
		assert_int_equal(cap->frames[i].address, fr[i].address);
		assert_int_equal(cap->frames[i].first_line, fr[i].first);
		assert_int_equal(cap->frames[i].n_lines, fr[i].n);
	}
	assert_int_equal(cap->n_lines, 6);
	for (i = 0; i < 6; i++) {
		assert_string_equal(fn_name(cap, i), ln[i].name);
		assert_int_equal(cap->lines[i].line, ln[i].line);
	}
	/* the functions used, once each, sorted by name: leaf main mid outer */
	assert_int_equal(cap->n_functions, 4);
	fn = cap->functions;
	assert_string_equal(cap->strings[fn[0].name], "leaf");
	assert_int_equal(fn[0].system_name, 0);
	assert_string_equal(cap->strings[fn[0].file], "/src/a.c");
	assert_int_equal(fn[0].start_line, 10);
	assert_string_equal(cap->strings[fn[1].name], "main");
	assert_int_equal(fn[1].start_line, 48);
	assert_string_equal(cap->strings[fn[2].name], "mid");
	assert_string_equal(cap->strings[fn[2].system_name], "_Z3midv");
	assert_string_equal(cap->strings[fn[2].file], "/src/a.h");
	assert_int_equal(fn[2].start_line, 25);
	assert_string_equal(cap->strings[fn[3].name], "outer");
	assert_int_equal(fn[3].start_line, 38);
	/* what no kept frame uses is gone */
	for (i = 0; i < cap->n_strings; i++) {
		assert_string_not_equal(cap->strings[i], "ghost");
		assert_string_not_equal(cap->strings[i], "/src/ghost.c");
	}
	/* the redefinition was counted */
	assert_int_equal(cap->n_problems, 1);
	assert_string_equal(cap->strings[cap->problems[0].code], "frame-fact-redefined");
	/* every frame has a fact: nothing to say about the modules */
	assert_int_equal(cap->modules[0].status, MS_CAP_MODULE_OK);
	assert_int_equal(cap->modules[1].status, MS_CAP_MODULE_OK);
	assert_invariants(cap);
	ms_capture_free(cap);
}

static void test_lines_encode_deterministic(void **state)
{
	struct ms_capture *a = make_lines_capture(false), *c = make_lines_capture(true), *back;
	unsigned char *ba, *bc;
	size_t la, lc;

	encode(a, &ba, &la);
	encode(c, &bc, &lc);
	assert_int_equal(la, lc);
	assert_memory_equal(ba, bc, la);
	assert_int_equal(ms_get_u32(ba + MS_CAPF_MINOR), 1);
	back = ms_capture_load_buffer(ba, la, "t.msc");
	assert_non_null(back);
	assert_same_capture(a, back);
	assert_invariants(back);
	ms_capture_free(back);
	free(ba);
	free(bc);
	ms_capture_free(a);
	ms_capture_free(c);
}

/*
 * The lines capture dumped as a stream and captured again: the same capture,
 * the same bytes. FRAME records carry their lines (stream 1.1 and later).
 */
static void test_lines_dump_round_trip(void **state)
{
	struct ms_capture *cap = make_lines_capture(false), *back;
	unsigned char *a, *b;
	size_t la, lb;
	int rc;

	back = through_stream(cap, 0, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(back);
	assert_same_capture(cap, back);
	encode(cap, &a, &la);
	encode(back, &b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* Encode the lines capture after edit() and expect the reader to refuse it. */
static void refuse_edited_lines(void (*edit)(struct ms_capture *), const char *a, const char *b)
{
	struct ms_capture *cap = make_lines_capture(false);
	unsigned char *buf;
	size_t len;

	edit(cap);
	encode(cap, &buf, &len);
	expect_refused(buf, len, a, b, NULL);
	free(buf);
	ms_capture_free(cap);
}

static void edit_function_name(struct ms_capture *c) { c->functions[0].name = c->n_strings; }
static void edit_function_system(struct ms_capture *c) { c->functions[2].system_name = c->n_strings + 1; }
static void edit_function_file(struct ms_capture *c) { c->functions[1].file = MS_NONE; }
static void edit_function_order(struct ms_capture *c)
{
	struct ms_cap_function t = c->functions[1];

	c->functions[1] = c->functions[2];
	c->functions[2] = t;
}
static void edit_function_dup(struct ms_capture *c) { c->functions[2] = c->functions[1]; }
static void edit_line_function(struct ms_capture *c) { c->lines[2].function = c->n_functions; }
static void edit_frame_lines(struct ms_capture *c) { c->frames[1].first_line = 5; }
static void edit_frame_n_lines(struct ms_capture *c) { c->frames[0].n_lines = UINT32_MAX; }

static void test_lines_bad_references(void **state)
{
	refuse_edited_lines(edit_function_name, "section 'functions'", "row 0: name is string");
	refuse_edited_lines(edit_function_system, "section 'functions'", "row 2: system_name is string");
	refuse_edited_lines(edit_function_file, "section 'functions'", "row 1: file is string");
	refuse_edited_lines(edit_function_order, "section 'functions'", "row 2 is not after row 1");
	refuse_edited_lines(edit_function_dup, "section 'functions'", "sorted and unique");
	refuse_edited_lines(edit_line_function, "section 'lines'", "row 2: function 4 of 4");
	refuse_edited_lines(edit_frame_lines, "section 'frames'", "row 1: 2 lines from line 5, of 6");
	refuse_edited_lines(edit_frame_n_lines, "section 'frames'", "row 0:");
}

/* Rewrite table section s with rows cut to row_size bytes. */
static void narrow_rows(struct tsec *s, uint32_t row_size)
{
	uint32_t n = ms_get_u32(s->raw), old = ms_get_u32(s->raw + 4), i;
	size_t len = MS_CAPF_TABLE_HEADER + (size_t)n * row_size;
	unsigned char *raw = calloc(1, len);

	ms_put_u32(raw, n);
	ms_put_u32(raw + 4, row_size);
	for (i = 0; i < n; i++)
		memcpy(raw + MS_CAPF_TABLE_HEADER + i * row_size,
		       s->raw + MS_CAPF_TABLE_HEADER + i * old, row_size);
	free(s->raw);
	s->raw = raw;
	s->raw_len = len;
}

/*
 * A file of format 1.0 (no functions or lines sections, the shorter module
 * and frame rows) still loads: without source facts, every module's status
 * "ok". A file of 1.1 must have the new sections and rows.
 */
static void test_reads_version_1_0(void **state)
{
	struct ms_capture *cap = make_lines_capture(false), *back;
	unsigned char *buf, *old;
	size_t len, olen;
	struct tfile f;
	uint32_t i;

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(f.s[f.n - 1].id, MS_CAPF_LINES);
	assert_int_equal(f.s[f.n - 2].id, MS_CAPF_FUNCTIONS);
	free(f.s[--f.n].raw);
	free(f.s[--f.n].raw);
	narrow_rows(section(&f, MS_CAPF_MODULES), MS_CAPF_ROW_MODULES_1_0);
	narrow_rows(section(&f, MS_CAPF_FRAMES), MS_CAPF_ROW_FRAMES_1_0);

	/* as 1.1, the sections are missing and the rows too short */
	old = assemble(&f, &olen);
	expect_refused(old, olen, "section 'functions'", "missing", NULL);
	free(old);

	f.minor = 0;
	old = assemble(&f, &olen);
	back = ms_capture_load_buffer(old, olen, "old.msc");
	assert_non_null(back);
	assert_int_equal(back->minor, 0);
	assert_int_equal(back->n_functions, 0);
	assert_int_equal(back->n_lines, 0);
	assert_int_equal(back->n_frames, cap->n_frames);
	for (i = 0; i < back->n_frames; i++) {
		assert_int_equal(back->frames[i].n_lines, 0);
		assert_int_equal(back->frames[i].first_line, 0);
		assert_string_equal(back->strings[back->frames[i].name],
				    cap->strings[cap->frames[i].name]);
	}
	for (i = 0; i < back->n_modules; i++)
		assert_int_equal(back->modules[i].status, MS_CAP_MODULE_OK);
	/* no counts before 1.2: each row is one sample */
	assert_int_equal(back->n_samples, cap->n_samples);
	for (i = 0; i < back->n_samples; i++)
		assert_int_equal(back->samples[i].count, 1);
	assert_invariants(back);
	ms_capture_free(back);
	free(old);
	release_file(&f);

	/* 1.1 with 1.0's frame rows */
	parse_file(buf, len, &f);
	narrow_rows(section(&f, MS_CAPF_FRAMES), MS_CAPF_ROW_FRAMES_1_0);
	old = assemble(&f, &olen);
	expect_refused(old, olen, "section 'frames'", "rows of 32 bytes", NULL);
	free(old);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

static void feed_info_text(struct ms_capture_builder *b, const char *key, const char *value)
{
	struct ms_info i = { { key, strlen(key) }, true, { value, strlen(value) }, 0 };

	assert_int_equal(ms_capture_builder_info(b, &i), 0);
}

/*
 * Module status, recorded deferred or not:
 *   0 build id, frames without facts          deferred / not-symbolized
 *   1 no build id, frames without facts       no-build-id / not-symbolized
 *   2 every frame failed: no-file twice, identity once   failed (no-file)
 *   3 one frame named, one failed             partial (no-symbol)
 *   4 named by its lines alone                ok
 *   5 one failed frame with a fact, one without       deferred
 *   6 no-symbol once, identity once: a tie    failed (no-symbol, the lower)
 *   7 named from symbol tables, no debug file partial (no-debug)
 *   8 named, one not in the debug information ok
 */
static struct ms_capture *make_status_capture(bool is_deferred)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	struct ms_capture *cap;
	uint32_t i;

	assert_non_null(b);
	feed_header(b);
	if (is_deferred)
		feed_info_text(b, "symbolize", "deferred");
	for (i = 0; i < 9; i++) {
		memset(&m, 0, sizeof(m));
		m.id = i;
		m.path = S("/m");
		m.build_id_len = i == 1 ? 0 : 20;
		memset(m.build_id, 0x10 + i, m.build_id_len);
		assert_int_equal(ms_capture_builder_module(b, &m), 0);
	}
	feed_frame_lines(b, 2, 0x10, "", MS_SYM_NO_FILE, 0, NULL);
	feed_frame_lines(b, 2, 0x20, "", MS_SYM_IDENTITY, 0, NULL);
	feed_frame_lines(b, 2, 0x30, "", MS_SYM_NO_FILE, 0, NULL);
	feed_frame_lines(b, 3, 0x10, "f", MS_SYM_OK, 0, NULL);
	feed_frame_lines(b, 3, 0x20, "", MS_SYM_NO_SYMBOL, 0, NULL);
	feed_frame_lines(b, 4, 0x10, "", MS_SYM_OK, 1, chain_main);
	feed_frame_lines(b, 5, 0x10, "", MS_SYM_NO_SYMBOL, 0, NULL);
	feed_frame_lines(b, 6, 0x10, "", MS_SYM_IDENTITY, 0, NULL);
	feed_frame_lines(b, 6, 0x20, "", MS_SYM_NO_SYMBOL, 0, NULL);
	feed_frame_lines(b, 7, 0x10, "g", MS_SYM_NO_DEBUG, 0, NULL);
	feed_frame_lines(b, 8, 0x10, "_start", MS_SYM_NOT_IN_DEBUG, 0, NULL);
	feed_frame_lines(b, 8, 0x20, "", MS_SYM_OK, 1, chain_main);
	feed_stack_flags(b, 1, 3, 0u, (uint64_t)0x10, 0u, 1u, (uint64_t)0x10, 0u,
			 2u, (uint64_t)0x10, 0u);
	feed_stack_flags(b, 2, 3, 2u, (uint64_t)0x20, 0u, 2u, (uint64_t)0x30, 0u,
			 3u, (uint64_t)0x10, 0u);
	feed_stack_flags(b, 3, 3, 3u, (uint64_t)0x20, 0u, 4u, (uint64_t)0x10, 0u,
			 5u, (uint64_t)0x10, 0u);
	feed_stack_flags(b, 4, 4, 5u, (uint64_t)0x20, 0u, 6u, (uint64_t)0x10, 0u,
			 6u, (uint64_t)0x20, 0u, 7u, (uint64_t)0x10, 0u);
	feed_stack_flags(b, 5, 2, 8u, (uint64_t)0x20, 0u, 8u, (uint64_t)0x10, 0u);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

/* Recorded deferred, symbolized later: the module's file could not be found. */
static struct ms_capture *later_without_build_id(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_frame f = { .module = 1, .address = 0x10, .reason = MS_SYM_NO_FILE };
	struct ms_module m = { .id = 1, .path = S("/m") };
	struct ms_capture *cap;

	feed_info_text(b, "symbolize", "deferred");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
	feed_stack_flags(b, 1, 1, 1u, (uint64_t)0x10, 0u);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_modules, 1);
	return cap;
}

static void test_module_status(void **state)
{
	struct ms_capture *cap = make_status_capture(true), *back;
	static const uint32_t deferred[] = {
		MS_CAP_MODULE_DEFERRED, MS_CAP_MODULE_NO_BUILD_ID, MS_CAP_MODULE_FAILED,
		MS_CAP_MODULE_PARTIAL, MS_CAP_MODULE_OK, MS_CAP_MODULE_DEFERRED, MS_CAP_MODULE_FAILED,
		MS_CAP_MODULE_PARTIAL, MS_CAP_MODULE_OK,
	};
	static const uint32_t reason[] = { 0, 0, MS_SYM_NO_FILE, MS_SYM_NO_SYMBOL, 0, 0,
					   MS_SYM_NO_SYMBOL, MS_SYM_NO_DEBUG, 0 };
	unsigned char *a, *b;
	size_t la, lb;
	uint32_t i;
	int rc;

	assert_int_equal(cap->n_modules, 9);
	for (i = 0; i < 9; i++) {
		assert_int_equal(cap->modules[i].status, deferred[i]);
		assert_int_equal(cap->modules[i].status_reason, reason[i]);
	}
	/* derived again from the dump: the same file */
	back = through_stream(cap, 0, 0, &rc);
	assert_non_null(back);
	encode(cap, &a, &la);
	encode(back, &b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	ms_capture_free(back);
	ms_capture_free(cap);

	/* not recorded deferred: frames without facts were never symbolized */
	cap = make_status_capture(false);
	assert_int_equal(cap->modules[0].status, MS_CAP_MODULE_NOT_SYMBOLIZED);
	assert_int_equal(cap->modules[1].status, MS_CAP_MODULE_NOT_SYMBOLIZED);
	assert_int_equal(cap->modules[5].status, MS_CAP_MODULE_NOT_SYMBOLIZED);
	assert_int_equal(cap->modules[2].status, MS_CAP_MODULE_FAILED);
	ms_capture_free(cap);

	/* a module without build id symbolized later, and failed: that is why */
	cap = later_without_build_id();
	assert_int_equal(cap->modules[0].status, MS_CAP_MODULE_NO_BUILD_ID);
	assert_int_equal(cap->modules[0].status_reason, MS_SYM_NO_FILE);
	ms_capture_free(cap);
	assert_string_equal(ms_cap_module_status_name(MS_CAP_MODULE_NO_BUILD_ID), "no-build-id");
	assert_string_equal(ms_cap_module_status_name(MS_CAP_MODULE_FAILED), "failed");
	assert_string_equal(ms_cap_module_status_name(99), "unknown");
}

/* A dump without the failed facts: those frames come back unsymbolized. */
static void test_dump_omit_failed(void **state)
{
	struct ms_capture *cap = make_status_capture(false), *back;
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_reader *r;
	uint32_t i;

	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", MS_DUMP_OMIT_FAILED), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &back), 0);
	ms_reader_free(r);
	fclose(f);
	assert_int_equal(back->n_frames, cap->n_frames);
	for (i = 0; i < cap->n_frames; i++) {
		uint32_t want = cap->frames[i].reason == MS_SYM_OK ? MS_SYM_OK : MS_CAP_UNSYMBOLIZED;

		assert_int_equal(back->frames[i].reason, want);
	}
	/* module 3 lost its failed frame's fact; module 2 all its facts */
	assert_int_equal(back->modules[3].status, MS_CAP_MODULE_NOT_SYMBOLIZED);
	assert_int_equal(back->modules[4].status, MS_CAP_MODULE_OK);
	assert_int_equal(back->modules[2].status, MS_CAP_MODULE_NOT_SYMBOLIZED);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/*
 * Fallback facts (ms-capture --keep-names) stand in only where the stream's
 * name less: a name beats none, lines beat a name alone.
 */
static void test_frame_fallback(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	uint32_t i;

	assert_non_null(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/p"));
	/* what the stream says */
	feed_frame_lines(b, 0, 0x10, "", MS_SYM_NO_FILE, 0, NULL);
	feed_frame_lines(b, 0, 0x20, "g", MS_SYM_NO_DEBUG, 0, NULL);
	feed_frame_lines(b, 0, 0x30, "outer", MS_SYM_OK, 2, chain_1120);
	feed_frame_lines(b, 0, 0x40, "", MS_SYM_NO_FILE, 0, NULL);
	/* what an earlier capture said */
	{
		struct ms_frame *f = calloc(1, sizeof(*f));

		f->module = 0;
		f->address = 0x10;
		f->name = S("f");
		f->reason = MS_SYM_NOT_IN_DEBUG;
		assert_int_equal(ms_capture_builder_frame_fallback(b, f), 0);
		f->address = 0x20;
		f->name = S("h");
		f->reason = MS_SYM_OK;
		f->n_lines = 1;
		f->lines[0] = (struct ms_frame_line){ S("h"), S(""), S("/src/h.c"), 7, 5 };
		assert_int_equal(ms_capture_builder_frame_fallback(b, f), 0);
		f->address = 0x30;
		f->name = S("other");
		f->lines[0] = (struct ms_frame_line){ S("other"), S(""), S("/src/o.c"), 2, 1 };
		assert_int_equal(ms_capture_builder_frame_fallback(b, f), 0);
		f->address = 0x40;
		f->name = S("");
		f->n_lines = 0;
		f->reason = MS_SYM_NO_SYMBOL;
		assert_int_equal(ms_capture_builder_frame_fallback(b, f), 0);
		f->address = 0x50;
		f->name = S("new");
		assert_int_equal(ms_capture_builder_frame_fallback(b, f), 0);
		free(f);
	}
	feed_stack_flags(b, 1, 5, 0u, (uint64_t)0x10, 0u, 0u, (uint64_t)0x20, 0u,
			 0u, (uint64_t)0x30, 0u, 0u, (uint64_t)0x40, 0u, 0u, (uint64_t)0x50, 0u);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_frames, 5);
	/* 0x10: the fallback's name, and its reason */
	assert_string_equal(frame_name(cap, 0), "f");
	assert_int_equal(cap->frames[0].reason, MS_SYM_NOT_IN_DEBUG);
	/* 0x20: the fallback's lines beat the stream's name alone */
	assert_string_equal(frame_name(cap, 1), "h");
	assert_int_equal(cap->frames[1].n_lines, 1);
	assert_string_equal(fn_name(cap, cap->frames[1].first_line), "h");
	/* 0x30: the stream's lines stay */
	assert_string_equal(frame_name(cap, 2), "outer");
	assert_int_equal(cap->frames[2].n_lines, 2);
	/* 0x40: a fallback without a name changes nothing */
	assert_int_equal(cap->frames[3].name, 0);
	assert_int_equal(cap->frames[3].reason, MS_SYM_NO_FILE);
	/* 0x50: no fact in the stream, the fallback's */
	assert_string_equal(frame_name(cap, 4), "new");
	for (i = 0; i < cap->n_strings; i++)
		assert_string_not_equal(cap->strings[i], "other");
	assert_int_equal(cap->n_problems, 0);
	ms_capture_free(cap);
}

/* Facts given after the stream (ms-capture --info) win over the stream's. */
static void test_from_stream_info(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	struct ms_info extra[2] = {
		{ S("hostname"), true, S("elsewhere"), 0 },
		{ S("symbolize"), true, S("deferred"), 0 },
	};
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_reader *r;

	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_int_equal(ms_capture_from_stream(r, &(struct ms_capture_stream_options){
							 .info = extra, .n_info = 2 },
						 &back), 0);
	ms_reader_free(r);
	fclose(f);
	assert_string_equal(ms_capture_info_text(back, "hostname"), "elsewhere");
	assert_string_equal(ms_capture_info_text(back, "symbolize"), "deferred");
	/* module 2 (the id never described) has a frame without a fact, no build id */
	assert_int_equal(back->modules[2].status, MS_CAP_MODULE_NO_BUILD_ID);
	assert_int_equal(back->modules[0].status, MS_CAP_MODULE_OK);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* ---- sample counts (format 1.2) ---- */

/* A row of count samples at time 0 of thread 7, one frame at (module 0, address). */
static void feed_counted(struct ms_capture_builder *b, uint64_t address, uint64_t period,
			 uint64_t count, int expect)
{
	struct ms_stack *s = calloc(1, sizeof(*s));

	s->pid = s->tid = 7;
	s->period = period;
	s->reason = MS_END_UNKNOWN;
	s->n_frames = 1;
	s->frames[0].address = address;
	stderr_begin();
	assert_int_equal(ms_capture_builder_stack_count(b, s, count), expect);
	stderr_end();
	free(s);
}

/*
 * What an import of "a;b 67108864" and of a file weighted by period makes:
 * rows that stand for many samples, their counts adding up to UINT64_MAX
 * exactly (the most a capture holds).
 */
#define BIG_COUNT (UINT64_MAX - (1ull << 26) - 1)
static struct ms_capture *make_counted_capture(void)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	assert_non_null(b);
	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_frame(b, 0, 0x10, S("a"), 0x10);
	feed_frame(b, 0, 0x20, S("b"), 0x20);
	feed_counted(b, 0x10, 0, 1ull << 26, 0);
	feed_counted(b, 0x20, 111500000, 1, 0);
	feed_counted(b, 0x10, 7, BIG_COUNT, 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static void test_counts_round_trip(void **state)
{
	struct ms_capture *cap = make_counted_capture(), *back;
	unsigned char *buf;
	size_t len;
	struct tfile f;

	/* one row per fact, however many samples it stands for */
	assert_int_equal(cap->n_samples, 3);
	assert_int_equal(ms_capture_sample_count(cap), UINT64_MAX);
	assert_true(cap->flags & MS_CAPTURE_WEIGHTED);
	assert_int_equal(cap->minor, 2);
	/* sorted by stack, then (a tie) period: a's rows, then b's */
	assert_int_equal(cap->samples[0].count, 1ull << 26);
	assert_int_equal(cap->samples[1].count, BIG_COUNT);
	assert_int_equal(cap->samples[1].period, 7);
	assert_int_equal(cap->samples[2].count, 1);
	assert_int_equal(cap->samples[2].period, 111500000);
	assert_invariants(cap);

	/* a 1.2 file with the required flag and the counts section */
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 2);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_WEIGHTED);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS + 1);
	assert_int_equal(f.s[f.n - 1].id, MS_CAPF_COUNTS);
	assert_int_equal(f.s[f.n - 1].raw_len, MS_CAPF_TABLE_HEADER + 3 * MS_CAPF_ROW_COUNTS);
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	ms_capture_free(back);

	/* through a stream (ms-capture --dump, then ms-capture): the same file */
	assert_dump_round_trip(cap);
	free(buf);
	ms_capture_free(cap);
}

/* Without counts a capture is the 1.1 file it was: no section, no flag. */
static void test_counts_absent_in_recordings(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *back;
	unsigned char *buf;
	size_t len;
	struct tfile f;
	uint32_t i;

	assert_int_equal(cap->minor, 1);
	assert_false(cap->flags & MS_CAPTURE_WEIGHTED);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 1);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), 0);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS);
	for (i = 0; i < f.n; i++)
		assert_int_not_equal(f.s[i].id, MS_CAPF_COUNTS);
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_int_equal(back->minor, 1);
	for (i = 0; i < back->n_samples; i++)
		assert_int_equal(back->samples[i].count, 1);
	assert_int_equal(ms_capture_sample_count(back), back->n_samples);
	ms_capture_free(back);
	free(buf);
	ms_capture_free(cap);
}

/* The records of a dump of cap: how many info "sample-count" it holds, and their sum. */
static void dumped_counts(const struct ms_capture *cap, uint64_t *n, uint64_t *sum)
{
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_info info;
	uint64_t records = 0;

	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	*n = *sum = 0;
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		records++;
		if (rec.kind != MS_REC_INFO)
			continue;
		assert_int_equal(ms_info_unpack(&rec, &info), 0);
		if (info.key.len == strlen(MS_CAPTURE_INFO_SAMPLE_COUNT) &&
		    !memcmp(info.key.ptr, MS_CAPTURE_INFO_SAMPLE_COUNT, info.key.len)) {
			++*n;
			*sum += info.number;
		}
	}
	/* bounded by the rows, not by the samples they stand for */
	assert_true(records < 64);
	ms_reader_free(r);
	fclose(f);
}

static void test_counts_dump(void **state)
{
	struct ms_capture *cap = make_counted_capture(), *plain = make_capture(FEED_LISTED);
	uint64_t n, sum;

	/* one info before each row of a count other than 1 */
	dumped_counts(cap, &n, &sum);
	assert_int_equal(n, 2);
	assert_int_equal(sum, (1ull << 26) + BIG_COUNT);
	/* a recording dumps as it always did */
	dumped_counts(plain, &n, &sum);
	assert_int_equal(n, 0);
	ms_capture_free(plain);
	ms_capture_free(cap);
}

static void feed_count_info(struct ms_capture_builder *b, bool is_text, uint64_t number)
{
	struct ms_info i = { S(MS_CAPTURE_INFO_SAMPLE_COUNT), is_text, S("many"), number };

	assert_int_equal(ms_capture_builder_info(b, &i), 0);
}

static const struct ms_cap_problem *find_problem(const struct ms_capture *cap, const char *code)
{
	for (uint32_t i = 0; i < cap->n_problems; i++)
		if (!strcmp(cap->strings[cap->problems[i].code], code))
			return &cap->problems[i];
	return NULL;
}

/* The stream's way to a count: an info right before the stack; misuse is a problem. */
static void test_counts_from_info(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	const struct ms_cap_problem *p;

	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_count_info(b, false, 5);
	feed_stack(b, 100, 1000, 0, 1, 0u, (uint64_t)0x10);	/* count 5 */
	feed_stack(b, 100, 2000, 0, 1, 0u, (uint64_t)0x10);	/* 1: the count was taken */
	feed_count_info(b, false, 0);
	feed_stack(b, 100, 3000, 0, 1, 0u, (uint64_t)0x10);	/* 1: 0 is no count */
	feed_count_info(b, true, 0);
	feed_stack(b, 100, 4000, 0, 1, 0u, (uint64_t)0x10);	/* 1: text is no count */
	feed_count_info(b, false, 9);
	feed_count_info(b, false, 3);
	feed_stack(b, 100, 5000, 0, 1, 0u, (uint64_t)0x10);	/* 3: the 9 was never used */
	feed_count_info(b, false, 4);				/* no stack after it */
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_samples, 5);
	assert_int_equal(cap->samples[0].count, 5);
	assert_int_equal(cap->samples[1].count, 1);
	assert_int_equal(cap->samples[2].count, 1);
	assert_int_equal(cap->samples[3].count, 1);
	assert_int_equal(cap->samples[4].count, 3);
	assert_int_equal(ms_capture_sample_count(cap), 11);
	/* never a fact of the capture */
	assert_null(ms_capture_info_text(cap, MS_CAPTURE_INFO_SAMPLE_COUNT));
	for (uint32_t i = 0; i < cap->n_info; i++)
		assert_string_not_equal(cap->strings[cap->info[i].key], MS_CAPTURE_INFO_SAMPLE_COUNT);
	p = find_problem(cap, "bad-sample-count");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	p = find_problem(cap, "unused-sample-count");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	ms_capture_free(cap);
}

/* Count 0 and a sum past UINT64_MAX fail the builder, with a message. */
static void test_counts_builder_limits(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();

	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_counted(b, 0x10, 0, UINT64_MAX - 1, 0);
	feed_counted(b, 0x10, 0, 1, 0);
	feed_counted(b, 0x10, 0, 1, -1);
	assert_non_null(strstr(errbuf, "add up past 2^64-1"));
	assert_null(ms_capture_builder_seal(b));

	b = ms_capture_builder_new();
	feed_counted(b, 0x10, 0, 0, -1);
	assert_non_null(strstr(errbuf, "count 0"));
	ms_capture_builder_free(b);
}

/* Damage to a weighted file (make_counted_capture()'s), for test_counts_refused. */
static void drop_counts(struct tfile *f) { free(f->s[--f->n].raw); }
static void clear_weighted(struct tfile *f) { f->flags &= ~(uint32_t)MS_CAPTURE_WEIGHTED; }
static void say_1_1(struct tfile *f) { f->minor = 1; }
static void short_counts(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_COUNTS);

	ms_put_u32(s->raw, 2);
	s->raw_len -= MS_CAPF_ROW_COUNTS;
}
static void last_count(struct tfile *f, uint64_t v)
{
	ms_put_u64(section(f, MS_CAPF_COUNTS)->raw + MS_CAPF_TABLE_HEADER + 2 * MS_CAPF_ROW_COUNTS, v);
}
static void zero_count(struct tfile *f) { last_count(f, 0); }
/* the other two add up to UINT64_MAX - 1 */
static void overflow_count(struct tfile *f) { last_count(f, 2); }

/* One way to damage an encoded file, and what the refusal must name. */
struct damage_case {
	void (*damage)(struct tfile *);
	const char *section, *what;
};

/* Encode cap (freed), then each damage alone: every one refused with its message. */
static void refuse_each(struct ms_capture *cap, const struct damage_case *cases, size_t n)
{
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;

	encode(cap, &buf, &len);
	for (size_t i = 0; i < n; i++) {
		parse_file(buf, len, &f);
		cases[i].damage(&f);
		bad = assemble(&f, &blen);
		expect_refused(bad, blen, cases[i].section, cases[i].what, NULL);
		free(bad);
		release_file(&f);
	}
	free(buf);
	ms_capture_free(cap);
}

/* Damaged counts: each refused with one message naming the section. */
static void test_counts_refused(void **state)
{
	static const struct damage_case cases[] = {
		{ drop_counts, "section 'counts'", "missing" },
		/* an older reader would count each row once */
		{ clear_weighted, "section 'counts'", "weighted flag" },
		{ say_1_1, "section 'header'", "weighted flag (0x00010000) in a file of format 1.1" },
		{ short_counts, "section 'counts'", "2 rows for 3 samples" },
		{ zero_count, "section 'counts'", "row 2: count 0" },
		/* past what a view can add up */
		{ overflow_count, "section 'counts'", "row 2: the counts add up past" },
	};
	refuse_each(make_counted_capture(), cases, sizeof(cases) / sizeof(cases[0]));
}

/* ---- duty rows (format 1.3) ---- */

static void feed_duty(struct ms_capture_builder *b, uint64_t time, uint32_t duty_ppm)
{
	struct ms_duty d = { time, duty_ppm, 2500 * (uint64_t)duty_ppm / 1000000, 30000 + duty_ppm / 100,
			     20000 };

	assert_int_equal(ms_capture_builder_duty(b, &d), 0);
}

/*
 * A recording held to a budget (the samples run from 1000 to 3500): out of
 * time order, two records at one time, two duties no recording can have.
 */
static void feed_duty_changes(struct ms_capture_builder *b)
{
	feed_duty(b, 2000, 250000);
	feed_duty(b, 1500, 500000);
	feed_duty(b, 3000, 1000000);
	feed_duty(b, 2200, 0);
	feed_duty(b, 2300, 1000001);
	feed_duty(b, 3000, 800000);	/* the later of one time: in force */
}

static struct ms_capture *make_duty_capture(void)
{
	return make_capture_with(FEED_LISTED, feed_duty_changes);
}

static void test_duty_builder(void **state)
{
	struct ms_capture *cap = make_duty_capture(), *plain = make_capture(FEED_LISTED);
	const struct ms_cap_problem *p;
	uint32_t i;

	assert_int_equal(cap->n_duty, 3);
	assert_int_equal(cap->duty[0].time, 1500);
	assert_int_equal(cap->duty[0].duty_ppm, 500000);
	assert_int_equal(cap->duty[0].rate, 1250);
	assert_int_equal(cap->duty[0].share_ppm, 35000);
	assert_int_equal(cap->duty[0].budget_ppm, 20000);
	assert_int_equal(cap->duty[1].time, 2000);
	assert_int_equal(cap->duty[1].duty_ppm, 250000);
	assert_int_equal(cap->duty[2].time, 3000);
	assert_int_equal(cap->duty[2].duty_ppm, 800000);
	assert_int_equal(cap->duty[2].share_ppm, 38000);
	assert_true(cap->flags & MS_CAPTURE_DUTY);
	assert_false(cap->flags & MS_CAPTURE_WEIGHTED);
	assert_int_equal(cap->minor, 3);
	p = find_problem(cap, "bad-duty");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_string_equal(cap->strings[p->stage], "ms-capture");
	assert_non_null(strstr(cap->strings[p->detail], "at time 2200 says 0 millionths"));
	p = find_problem(cap, "duty-same-time");
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_non_null(strstr(cap->strings[p->detail], "1000000 and 800000 millionths at one time (3000)"));
	assert_invariants(cap);
	/* the rest is the capture it would be without them, but for those problems */
	assert_int_equal(cap->n_samples, plain->n_samples);
	for (i = 0; i < cap->n_samples; i++)
		assert_memory_equal(&cap->samples[i], &plain->samples[i], sizeof(cap->samples[i]));
	assert_int_equal(cap->n_problems, plain->n_problems + 2);
	ms_capture_free(plain);
	ms_capture_free(cap);
}

static void test_duty_round_trip(void **state)
{
	struct ms_capture *cap = make_duty_capture(), *back, *again;
	unsigned char *buf, *buf2;
	size_t len, len2;
	struct tfile f;
	struct tsec *d;

	/* a 1.3 file with the required flag and the duty section, last */
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 3);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_DUTY);
	assert_true(MS_CAPTURE_DUTY & MS_CAPF_FLAGS_REQUIRED);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS + 1);
	d = &f.s[f.n - 1];
	assert_int_equal(d->id, MS_CAPF_DUTY);
	assert_int_equal(d->raw_len, MS_CAPF_TABLE_HEADER + 3 * MS_CAPF_ROW_DUTY);
	/* the row layout of the man page: time, duty, share, rate, budget, zero */
	{
		const unsigned char *row = d->raw + MS_CAPF_TABLE_HEADER + MS_CAPF_ROW_DUTY;

		assert_int_equal(ms_get_u32(d->raw), 3);
		assert_int_equal(ms_get_u32(d->raw + 4), MS_CAPF_ROW_DUTY);
		assert_int_equal(ms_get_u64(row), 2000);
		assert_int_equal(ms_get_u32(row + 8), 250000);
		assert_int_equal(ms_get_u32(row + 12), 32500);
		assert_int_equal(ms_get_u64(row + 16), 625);
		assert_int_equal(ms_get_u32(row + 24), 20000);
		assert_int_equal(ms_get_u32(row + 28), 0);
	}
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	assert_invariants(back);

	/* the same facts, the stacks in another order: the same bytes */
	again = make_capture_with(FEED_REVERSED, feed_duty_changes);
	encode(again, &buf2, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	ms_capture_free(again);

	/* through a stream (ms-capture --dump, then ms-capture): the same file */
	assert_dump_round_trip(cap);
	ms_capture_free(back);
	free(buf);
	ms_capture_free(cap);
}

/* Weighted and held to a budget: 1.3, both flags, both sections. */
static void feed_one_duty(struct ms_capture_builder *b) { feed_duty(b, 5, 100000); }

static void test_duty_with_counts(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap, *back;
	unsigned char *buf;
	size_t len;
	struct tfile f;

	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_counted(b, 0x10, 7000, 7, 0);
	feed_one_duty(b);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 3);
	assert_int_equal(cap->flags, MS_CAPTURE_WEIGHTED | MS_CAPTURE_DUTY);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 3);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_WEIGHTED | MS_CAPTURE_DUTY);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS + 2);
	assert_int_equal(f.s[f.n - 2].id, MS_CAPF_COUNTS);
	assert_int_equal(f.s[f.n - 1].id, MS_CAPF_DUTY);
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	assert_dump_round_trip(cap);
	ms_capture_free(back);
	free(buf);
	ms_capture_free(cap);
}

/* Without duty rows a capture is the file it was: no section, no flag, no 1.3. */
static void test_duty_absent(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *counted = make_counted_capture();
	unsigned char *buf;
	size_t len;
	struct tfile f;

	assert_int_equal(cap->n_duty, 0);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 1);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), 0);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS);
	for (uint32_t i = 0; i < f.n; i++)
		assert_int_not_equal(f.s[i].id, MS_CAPF_DUTY);
	release_file(&f);
	free(buf);
	/* counts alone stay 1.2 */
	encode(counted, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 2);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_WEIGHTED);
	free(buf);
	ms_capture_free(counted);
	ms_capture_free(cap);
}

/*
 * Captures written before duty rows existed (the golden recordings, an
 * import with counts) load and encode to their own bytes: the writer
 * still writes what it wrote.
 */
static void test_committed_captures_unchanged(void **state)
{
	static const char *const files[] = {
		"tests/golden/expected/spin.msc",
		"tests/golden/expected/spin-fp.msc",
		"tests/fuzz/corpus/capture/weighted-periods.msc",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		struct ms_capture *cap;
		unsigned char *want, *got;
		size_t want_len, got_len;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", MS_SRCDIR, files[i]);
		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		want_len = ftell(f);
		rewind(f);
		want = malloc(want_len);
		assert_int_equal(fread(want, 1, want_len, f), want_len);
		fclose(f);
		cap = ms_capture_load(path);
		assert_non_null(cap);
		assert_int_equal(cap->n_duty, 0);
		encode(cap, &got, &got_len);
		if (got_len != want_len || memcmp(got, want, want_len))
			fail_msg("'%s' encodes to other bytes than it holds", files[i]);
		free(got);
		free(want);
		ms_capture_free(cap);
	}
}

/* Damage to make_duty_capture()'s file, for test_duty_refused. */
static unsigned char *duty_row(struct tfile *f, uint32_t row)
{
	return section(f, MS_CAPF_DUTY)->raw + MS_CAPF_TABLE_HEADER + row * MS_CAPF_ROW_DUTY;
}
static void drop_duty(struct tfile *f) { free(f->s[--f->n].raw); }
static void clear_duty_flag(struct tfile *f) { f->flags &= ~(uint32_t)MS_CAPTURE_DUTY; }
static void say_1_2(struct tfile *f) { f->minor = 2; }
static void duty_unsorted(struct tfile *f) { ms_put_u64(duty_row(f, 1), 1000); }
static void duty_same_time(struct tfile *f) { ms_put_u64(duty_row(f, 2), 2000); }
static void duty_zero(struct tfile *f) { ms_put_u32(duty_row(f, 1) + 8, 0); }
static void duty_over(struct tfile *f) { ms_put_u32(duty_row(f, 2) + 8, 1000001); }
static void duty_no_rows(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_DUTY);

	ms_put_u32(s->raw, 0);
	s->raw_len = MS_CAPF_TABLE_HEADER;
}
static void duty_count_off(struct tfile *f) { ms_put_u32(section(f, MS_CAPF_DUTY)->raw, 4); }
/* Rows of 24 bytes: the layout cut before budget_ppm. */
static void duty_short_rows(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_DUTY);
	uint32_t n = ms_get_u32(s->raw);

	for (uint32_t i = 0; i < n; i++)
		memmove(s->raw + MS_CAPF_TABLE_HEADER + i * 24,
			s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_DUTY, 24);
	ms_put_u32(s->raw + 4, 24);
	s->raw_len = MS_CAPF_TABLE_HEADER + n * 24;
}

/* Damaged duty rows: each refused with one message naming the section. */
static void test_duty_refused(void **state)
{
	static const struct damage_case cases[] = {
		{ drop_duty, "section 'duty'", "missing (the header sets the duty flag)" },
		/* an older reader would take the periods for the time */
		{ clear_duty_flag, "section 'duty'", "does not set the duty flag (0x00020000)" },
		{ say_1_2, "section 'header'", "duty flag (0x00020000) in a file of format 1.2" },
		{ duty_unsorted, "section 'duty'", "row 1: time 1000 is not after row 0's 1500" },
		{ duty_same_time, "section 'duty'", "row 2: time 2000 is not after row 1's 2000" },
		{ duty_zero, "section 'duty'", "row 1: a duty of 0 millionths (1 to 1000000)" },
		{ duty_over, "section 'duty'", "row 2: a duty of 1000001 millionths" },
		{ duty_no_rows, "section 'duty'", "no rows" },
		{ duty_count_off, "section 'duty'", "4 rows of 32 bytes do not fill" },
		{ duty_short_rows, "section 'duty'", "rows of 24 bytes (this version needs 32" },
	};
	refuse_each(make_duty_capture(), cases, sizeof(cases) / sizeof(cases[0]));
}

/* A later minor may append fields to duty rows: they are skipped. */
static void test_duty_wider_rows(void **state)
{
	struct ms_capture *cap = make_duty_capture(), *back;
	unsigned char *buf, *bad, *raw;
	size_t len, blen;
	struct tfile f;
	struct tsec *s;
	uint32_t n, i;

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	f.minor = 9;
	s = section(&f, MS_CAPF_DUTY);
	n = ms_get_u32(s->raw);
	raw = calloc(1, MS_CAPF_TABLE_HEADER + n * (MS_CAPF_ROW_DUTY + 8));
	ms_put_u32(raw, n);
	ms_put_u32(raw + 4, MS_CAPF_ROW_DUTY + 8);
	for (i = 0; i < n; i++) {
		unsigned char *row = raw + MS_CAPF_TABLE_HEADER + i * (MS_CAPF_ROW_DUTY + 8);

		memcpy(row, s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_DUTY, MS_CAPF_ROW_DUTY);
		memset(row + MS_CAPF_ROW_DUTY, 0xee, 8);
	}
	free(s->raw);
	s->raw = raw;
	s->raw_len = MS_CAPF_TABLE_HEADER + n * (MS_CAPF_ROW_DUTY + 8);
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	back->minor = cap->minor;
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/*
 * A stream as ms-collect | ... | ms-symbolize makes it under --budget: duty
 * records among the stacks, in time order. ms-capture keeps each as a row,
 * and no longer counts them as ignored records.
 */
static void test_duty_from_stream(void **state)
{
	static const struct ms_duty duty[] = {
		{ 1500, 500000, 1250, 35000, 20000 },
		{ 2500, 125000, 312, 41000, 20000 },
		{ 9000, 1000000, 2500, 9000, 20000 },
	};
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_reader *r;
	struct ms_capture *cap;
	struct ms_stack *st = calloc(1, sizeof(*st));
	uint64_t ignored;
	uint32_t i, k = 0;

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (i = 0; i < 6; i++) {
		st->pid = st->tid = 7;
		st->time = 1000 + 500 * i;
		st->period = 1000000;
		st->reason = MS_END_KERNEL_ONLY;
		for (; k < 3 && duty[k].time <= st->time; k++)
			assert_int_equal(ms_duty_pack(w, &duty[k]), 0);
		assert_int_equal(ms_stack_pack(w, st), 0);
	}
	for (; k < 3; k++)
		assert_int_equal(ms_duty_pack(w, &duty[k]), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &cap), 0);
	ms_reader_free(r);
	fclose(f);
	free(st);

	assert_int_equal(cap->n_samples, 6);
	assert_int_equal(cap->n_duty, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(cap->duty[i].time, duty[i].time);
		assert_int_equal(cap->duty[i].duty_ppm, duty[i].duty_ppm);
		assert_int_equal(cap->duty[i].rate, duty[i].rate);
		assert_int_equal(cap->duty[i].share_ppm, duty[i].share_ppm);
		assert_int_equal(cap->duty[i].budget_ppm, duty[i].budget_ppm);
	}
	assert_true(cap->flags & MS_CAPTURE_DUTY);
	assert_false(ms_capture_info_number(cap, "ignored-records.duty", &ignored));
	assert_int_equal(cap->n_problems, 0);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* ---- loss rows (format 1.4) ---- */

static void feed_lost(struct ms_capture_builder *b, uint32_t source, uint64_t time, uint64_t count)
{
	struct ms_lost l = { .source = source, .time = time, .id = 3, .count = count };

	assert_int_equal(ms_capture_builder_lost(b, &l), 0);
}

/*
 * Lost records of a recording (its samples run from 1000 to 3500): out of
 * time order, a pair given twice apart and twice in a row, both sources
 * at one time, a count of 0, an unknown source.
 */
static const struct ms_lost loss_records[] = {
	{ MS_LOST_KERNEL, 2600, 1, 40 },
	{ MS_LOST_COLLECTOR, 1200, 0, 3 },
	{ MS_LOST_KERNEL, 1200, 2, 5 },
	{ MS_LOST_KERNEL, 2600, 1, 2 },
	{ MS_LOST_COLLECTOR, 3100, 0, 1 },
	{ MS_LOST_COLLECTOR, 3100, 0, 4 },
	{ MS_LOST_KERNEL, 1800, 1, 0 },
	{ 7, 1900, 0, 9 },
};
#define N_LOSS_RECORDS (sizeof(loss_records) / sizeof(loss_records[0]))

static void feed_losses(struct ms_capture_builder *b)
{
	for (size_t i = 0; i < N_LOSS_RECORDS; i++)
		assert_int_equal(ms_capture_builder_lost(b, &loss_records[i]), 0);
}

static void feed_losses_backwards(struct ms_capture_builder *b)
{
	for (size_t i = N_LOSS_RECORDS; i-- > 0;)
		assert_int_equal(ms_capture_builder_lost(b, &loss_records[i]), 0);
}

/*
 * make_capture()'s, with those: its own losses of unknown time (kernel 7,
 * collector 5) make the totals 54 and 13.
 */
static struct ms_capture *make_loss_capture(void)
{
	return make_capture_with(FEED_LISTED, feed_losses);
}

static void assert_loss(const struct ms_capture *cap, uint32_t i, uint64_t time, uint32_t source,
			uint64_t count)
{
	assert_true(i < cap->n_losses);
	assert_int_equal(cap->losses[i].time, time);
	assert_int_equal(cap->losses[i].source, source);
	assert_int_equal(cap->losses[i].count, count);
}

static void test_losses_builder(void **state)
{
	struct ms_capture *cap = make_loss_capture(), *plain = make_capture(FEED_LISTED);
	const struct ms_cap_problem *p;
	uint32_t i;

	/* one row per (time, source), sorted by them, their records' counts added */
	assert_int_equal(cap->n_losses, 4);
	assert_loss(cap, 0, 1200, MS_LOST_KERNEL, 5);
	assert_loss(cap, 1, 1200, MS_LOST_COLLECTOR, 3);
	assert_loss(cap, 2, 2600, MS_LOST_KERNEL, 42);
	assert_loss(cap, 3, 3100, MS_LOST_COLLECTOR, 5);
	/* the totals count the rows and the losses of unknown time */
	assert_int_equal(cap->lost_kernel, 47 + 7);
	assert_int_equal(cap->lost_collector, 8 + 5);
	/* 1.4 without a required flag: an older reader keeps the totals */
	assert_int_equal(cap->minor, 4);
	assert_int_equal(cap->flags & MS_CAPF_FLAGS_REQUIRED, 0);
	p = find_problem(cap, "unknown-lost-source");
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_non_null(strstr(cap->strings[p->detail], "9 records lost by unknown source 7"));
	assert_invariants(cap);
	/* the rest is the capture it would be without them, but for that problem */
	assert_int_equal(plain->n_losses, 0);
	assert_int_equal(plain->minor, 1);
	assert_int_equal(cap->n_samples, plain->n_samples);
	for (i = 0; i < cap->n_samples; i++)
		assert_memory_equal(&cap->samples[i], &plain->samples[i], sizeof(cap->samples[i]));
	assert_int_equal(cap->n_problems, plain->n_problems + 1);
	ms_capture_free(plain);
	ms_capture_free(cap);
}

/* The lost records a dump of cap writes, in order, and how many stacks came before each. */
struct dumped_loss {
	struct ms_lost l;
	uint32_t stacks_before;
	uint64_t last_stack_time;
};

static uint32_t dumped_losses(const struct ms_capture *cap, struct dumped_loss *out, uint32_t max)
{
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_stack *st = calloc(1, sizeof(*st));
	uint32_t n = 0, stacks = 0;
	uint64_t last = 0;

	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", 0), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	while (ms_reader_next(r, &rec) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_STACK) {
			assert_int_equal(ms_stack_unpack(&rec, st), 0);
			stacks++;
			last = st->time;
		}
		if (rec.kind != MS_REC_LOST)
			continue;
		assert_true(n < max);
		assert_int_equal(ms_lost_unpack(&rec, &out[n].l), 0);
		out[n].stacks_before = stacks;
		out[n].last_stack_time = last;
		n++;
	}
	ms_reader_free(r);
	fclose(f);
	free(st);
	return n;
}

static void test_losses_round_trip(void **state)
{
	struct ms_capture *cap = make_loss_capture(), *back, *again;
	unsigned char *buf, *buf2;
	size_t len, len2;
	struct tfile f;
	struct tsec *d;

	/* a 1.4 file, no flag, the losses section last */
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 4);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), 0);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS + 1);
	d = &f.s[f.n - 1];
	assert_int_equal(d->id, MS_CAPF_LOSSES);
	assert_int_equal(d->id, 14);
	assert_string_equal(ms_capf_section_name(d->id), "losses");
	assert_int_equal(d->raw_len, MS_CAPF_TABLE_HEADER + 4 * MS_CAPF_ROW_LOSSES);
	/* the row layout of the man page: time u64, count u64, source u32, zero u32 */
	{
		const unsigned char *row = d->raw + MS_CAPF_TABLE_HEADER;

		assert_int_equal(ms_get_u32(d->raw), 4);
		assert_int_equal(ms_get_u32(d->raw + 4), 24);
		assert_int_equal(ms_get_u64(row + 24), 1200);
		assert_int_equal(ms_get_u64(row + 24 + 8), 3);
		assert_int_equal(ms_get_u32(row + 24 + 16), MS_LOST_COLLECTOR);
		assert_int_equal(ms_get_u32(row + 24 + 20), 0);
		assert_int_equal(ms_get_u64(row + 48), 2600);
		assert_int_equal(ms_get_u64(row + 48 + 8), 42);
		assert_int_equal(ms_get_u32(row + 48 + 16), MS_LOST_KERNEL);
	}
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	assert_invariants(back);
	ms_capture_free(back);

	/* the same facts, stacks and lost records in other orders: the same bytes */
	again = make_capture_with(FEED_REVERSED, feed_losses_backwards);
	encode(again, &buf2, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	ms_capture_free(again);

	/* through a stream (ms-capture --dump, then ms-capture): the same file */
	assert_dump_round_trip(cap);
	free(buf);
	ms_capture_free(cap);
}

/*
 * A dump writes a lost record per row at its time, among the stacks in
 * time order, then what the rows do not hold of each total at time 0; a
 * capture without rows dumps its two totals as it always did.
 */
static void test_losses_dump(void **state)
{
	struct ms_capture *cap = make_loss_capture(), *plain = make_capture(FEED_LISTED);
	struct dumped_loss got[16];
	uint32_t n, i;

	n = dumped_losses(cap, got, 16);
	assert_int_equal(n, 6);
	for (i = 0; i < 4; i++) {
		assert_int_equal(got[i].l.time, cap->losses[i].time);
		assert_int_equal(got[i].l.source, cap->losses[i].source);
		assert_int_equal(got[i].l.count, cap->losses[i].count);
		/* after the stacks before its time, before those at or after it */
		assert_true(got[i].last_stack_time < got[i].l.time || !got[i].stacks_before);
		if (got[i].stacks_before < cap->n_samples)
			assert_true(cap->samples[got[i].stacks_before].time >= got[i].l.time);
	}
	/* 1200 comes after the two samples at 1000, 3100 before the one at 3500 */
	assert_int_equal(got[0].stacks_before, 2);
	assert_int_equal(got[3].stacks_before, cap->n_samples - 1);
	assert_int_equal(got[4].l.source, MS_LOST_KERNEL);
	assert_int_equal(got[4].l.time, 0);
	assert_int_equal(got[4].l.count, 7);
	assert_int_equal(got[5].l.source, MS_LOST_COLLECTOR);
	assert_int_equal(got[5].l.time, 0);
	assert_int_equal(got[5].l.count, 5);

	n = dumped_losses(plain, got, 16);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].l.source, MS_LOST_KERNEL);
	assert_int_equal(got[0].l.count, 7);
	assert_int_equal(got[1].l.source, MS_LOST_COLLECTOR);
	assert_int_equal(got[1].l.count, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(got[i].l.time, 0);
		assert_int_equal(got[i].stacks_before, plain->n_samples);
	}
	ms_capture_free(plain);
	ms_capture_free(cap);
}

/* Without a loss of known time a capture is the file it was: no section, no 1.4. */
static void test_losses_absent(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED), *duty = make_duty_capture();
	unsigned char *buf;
	size_t len;
	struct tfile f;

	/* it lost records, but at no known time */
	assert_int_equal(cap->lost_kernel, 7);
	assert_int_equal(cap->n_losses, 0);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 1);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS);
	for (uint32_t i = 0; i < f.n; i++)
		assert_int_not_equal(f.s[i].id, MS_CAPF_LOSSES);
	release_file(&f);
	free(buf);
	/* duty rows alone stay 1.3; with losses too, 1.4 with the duty flag */
	encode(duty, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 3);
	free(buf);
	ms_capture_free(duty);
	ms_capture_free(cap);
}

static void feed_duty_and_losses(struct ms_capture_builder *b)
{
	feed_duty_changes(b);
	feed_losses(b);
}

static void test_losses_with_duty_and_counts(void **state)
{
	struct ms_capture *cap = make_capture_with(FEED_LISTED, feed_duty_and_losses), *back;
	struct ms_capture_builder *b = ms_capture_builder_new();
	unsigned char *buf;
	size_t len;
	struct tfile f;

	assert_int_equal(cap->minor, 4);
	assert_int_equal(cap->flags, MS_CAPTURE_DUTY);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 4);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_DUTY);
	parse_file(buf, len, &f);
	assert_int_equal(f.n, N_SECTIONS + 2);
	assert_int_equal(f.s[f.n - 2].id, MS_CAPF_DUTY);
	assert_int_equal(f.s[f.n - 1].id, MS_CAPF_LOSSES);
	release_file(&f);
	back = ms_capture_load_buffer(buf, len, "t.msc");
	assert_non_null(back);
	assert_same_capture(cap, back);
	ms_capture_free(back);
	assert_dump_round_trip(cap);
	free(buf);
	ms_capture_free(cap);

	/* weighted: 1.4 with the weighted flag */
	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_counted(b, 0x10, 7000, 7, 0);
	feed_lost(b, MS_LOST_KERNEL, 5, 1);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 4);
	assert_int_equal(cap->flags, MS_CAPTURE_WEIGHTED);
	encode(cap, &buf, &len);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_MINOR), 4);
	assert_int_equal(ms_get_u32(buf + MS_CAPF_FLAGS), MS_CAPTURE_WEIGHTED);
	free(buf);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/*
 * More (time, source) pairs than a capture keeps, as a hostile stream may
 * send: the earliest MS_CAPTURE_LOSSES_MAX keep rows whatever the order,
 * the rest count in the totals alone and as a problem.
 */
#define BOUND_PAIRS (2 * MS_CAPTURE_LOSSES_MAX + 1000)	/* past the builder's buffer */
enum loss_order { LOSS_SCRAMBLED, LOSS_IN_ORDER, LOSS_BACKWARDS };

static struct ms_capture *make_bound_capture(enum loss_order order)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	assert_non_null(b);
	feed_header(b);
	for (uint64_t i = 0; i < BOUND_PAIRS; i++) {
		/* 7919 is prime, and BOUND_PAIRS no multiple of it: each time once */
		uint64_t k = order == LOSS_SCRAMBLED ? i * 7919 % BOUND_PAIRS :
			     order == LOSS_BACKWARDS ? BOUND_PAIRS - 1 - i : i;

		feed_lost(b, MS_LOST_KERNEL, 1 + k, 1);
		if (i == BOUND_PAIRS / 2) {
			/* a pair that keeps its row, again; one that does not, again */
			feed_lost(b, MS_LOST_KERNEL, 5, 2);
			feed_lost(b, MS_LOST_KERNEL, BOUND_PAIRS, 3);
			/* a collector's loss at a kept time */
			feed_lost(b, MS_LOST_COLLECTOR, 100, 6);
		}
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static void test_losses_bound(void **state)
{
	struct ms_capture *cap = make_bound_capture(LOSS_SCRAMBLED), *other;
	const struct ms_cap_problem *p;
	unsigned char *buf, *buf2;
	size_t len, len2;
	uint32_t i;

	assert_int_equal(cap->n_losses, MS_CAPTURE_LOSSES_MAX);
	/* the earliest pairs: kernel at 1.., with the collector's at 100 among them */
	assert_loss(cap, 0, 1, MS_LOST_KERNEL, 1);
	assert_loss(cap, 4, 5, MS_LOST_KERNEL, 3);
	assert_loss(cap, 99, 100, MS_LOST_KERNEL, 1);
	assert_loss(cap, 100, 100, MS_LOST_COLLECTOR, 6);
	assert_loss(cap, MS_CAPTURE_LOSSES_MAX - 1, MS_CAPTURE_LOSSES_MAX - 1, MS_LOST_KERNEL, 1);
	/* every loss in the totals */
	assert_int_equal(cap->lost_kernel, BOUND_PAIRS + 2 + 3);
	assert_int_equal(cap->lost_collector, 6);
	/* the rest, from the first pair without a row, counted as a problem */
	p = find_problem(cap, "loss-rows-full");
	assert_non_null(p);
	assert_int_equal(p->count, BOUND_PAIRS - (MS_CAPTURE_LOSSES_MAX - 1) + 3);
	assert_string_equal(cap->strings[p->stage], "ms-capture");
	assert_non_null(strstr(cap->strings[p->detail], "more than 65536 (time, source) pairs"));
	assert_non_null(strstr(cap->strings[p->detail], "from time 65536 on"));
	assert_invariants(cap);
	for (i = 0; i < cap->n_losses; i++)
		assert_true(cap->losses[i].time <= MS_CAPTURE_LOSSES_MAX - 1);

	/* the same records in time order, or backwards: the same file */
	encode(cap, &buf, &len);
	other = make_bound_capture(LOSS_IN_ORDER);
	encode(other, &buf2, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	ms_capture_free(other);
	other = make_bound_capture(LOSS_BACKWARDS);
	encode(other, &buf2, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	ms_capture_free(other);
	free(buf);

	/* a dump (65536 rows and the rest at time 0) captures again to the same file */
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* Totals stay within 64 bits, and the rows within the totals. */
static void test_losses_overflow(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	const struct ms_cap_problem *p;

	feed_header(b);
	feed_lost(b, MS_LOST_KERNEL, 10, UINT64_MAX - 5);
	feed_lost(b, MS_LOST_KERNEL, 20, 10);	/* 5 of them fit */
	feed_lost(b, MS_LOST_KERNEL, 30, 1);	/* none fits: no row */
	feed_lost(b, MS_LOST_COLLECTOR, 30, 1);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->lost_kernel, UINT64_MAX);
	assert_int_equal(cap->lost_collector, 1);
	assert_int_equal(cap->n_losses, 3);
	assert_loss(cap, 0, 10, MS_LOST_KERNEL, UINT64_MAX - 5);
	assert_loss(cap, 1, 20, MS_LOST_KERNEL, 5);
	assert_loss(cap, 2, 30, MS_LOST_COLLECTOR, 1);
	p = find_problem(cap, "lost-count-overflow");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_non_null(strstr(cap->strings[p->detail], "kernel lost add up past 2^64-1"));
	assert_invariants(cap);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* Damage to make_loss_capture()'s file, for test_losses_refused. */
static unsigned char *loss_row(struct tfile *f, uint32_t row)
{
	return section(f, MS_CAPF_LOSSES)->raw + MS_CAPF_TABLE_HEADER + row * MS_CAPF_ROW_LOSSES;
}
static void loss_unsorted(struct tfile *f) { ms_put_u64(loss_row(f, 2), 1000); }
static void loss_same_pair(struct tfile *f) { ms_put_u32(loss_row(f, 1) + 16, MS_LOST_KERNEL); }
static void loss_zero_count(struct tfile *f) { ms_put_u64(loss_row(f, 3) + 8, 0); }
static void loss_zero_time(struct tfile *f) { ms_put_u64(loss_row(f, 0), 0); }
static void loss_unknown_source(struct tfile *f) { ms_put_u32(loss_row(f, 3) + 16, 2); }
/* the kernel's rows 5 + 50: more than its total of 54 */
static void loss_sum_over(struct tfile *f) { ms_put_u64(loss_row(f, 2) + 8, 50); }
/* the collector's total cut to 7, under its rows' 8 */
static void loss_total_under(struct tfile *f)
{
	ms_put_u64(section(f, MS_CAPF_TOTALS)->raw + MS_CAPF_TABLE_HEADER + 8, 7);
}
/* a total of 2^64-1 that rows of 2^64-2 and 42 would pass: no wrap */
static void loss_sum_wraps(struct tfile *f)
{
	ms_put_u64(section(f, MS_CAPF_TOTALS)->raw + MS_CAPF_TABLE_HEADER, UINT64_MAX);
	ms_put_u64(loss_row(f, 0) + 8, UINT64_MAX - 1);
}
static void say_1_3(struct tfile *f) { f->minor = 3; }
static void loss_no_rows(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_LOSSES);

	ms_put_u32(s->raw, 0);
	s->raw_len = MS_CAPF_TABLE_HEADER;
}
static void loss_count_off(struct tfile *f) { ms_put_u32(section(f, MS_CAPF_LOSSES)->raw, 5); }
/* Rows of 16 bytes: the layout cut before source. */
static void loss_short_rows(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_LOSSES);
	uint32_t n = ms_get_u32(s->raw);

	for (uint32_t i = 0; i < n; i++)
		memmove(s->raw + MS_CAPF_TABLE_HEADER + i * 16,
			s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_LOSSES, 16);
	ms_put_u32(s->raw + 4, 16);
	s->raw_len = MS_CAPF_TABLE_HEADER + n * 16;
}
/* One row more than any writer makes. */
static void loss_too_many(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_LOSSES);
	uint32_t n = MS_CAPTURE_LOSSES_MAX + 1;

	free(s->raw);
	s->raw_len = MS_CAPF_TABLE_HEADER + (size_t)n * MS_CAPF_ROW_LOSSES;
	s->raw = calloc(1, s->raw_len);
	ms_put_u32(s->raw, n);
	ms_put_u32(s->raw + 4, MS_CAPF_ROW_LOSSES);
}

/* Damaged loss rows: each refused with one message naming the file and the section. */
static void test_losses_refused(void **state)
{
	static const struct damage_case cases[] = {
		{ loss_unsorted, "section 'losses'",
		  "row 2: (time 1000, source 0) is not after row 1's (1200, 1)" },
		{ loss_same_pair, "section 'losses'",
		  "row 1: (time 1200, source 0) is not after row 0's (1200, 0)" },
		{ loss_zero_count, "section 'losses'", "row 3: count 0" },
		{ loss_zero_time, "section 'losses'", "row 0: time 0" },
		{ loss_unknown_source, "section 'losses'", "row 3: source 2 (0 kernel, 1 collector)" },
		{ loss_sum_over, "section 'losses'",
		  "row 2: the kernel's rows add up to more than the 54 records its total" },
		{ loss_total_under, "section 'losses'",
		  "row 3: the collector's rows add up to more than the 7 records" },
		{ loss_sum_wraps, "section 'losses'",
		  "row 2: the kernel's rows add up to more than the 18446744073709551615" },
		{ say_1_3, "section 'losses'", "the section in a file of format 1.3: it came with 1.4" },
		{ loss_no_rows, "section 'losses'", "no rows" },
		{ loss_count_off, "section 'losses'", "5 rows of 24 bytes do not fill" },
		{ loss_short_rows, "section 'losses'", "rows of 16 bytes (this version needs 24" },
		{ loss_too_many, "section 'losses'", "65537 rows (at most 65536)" },
	};
	refuse_each(make_loss_capture(), cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * What a reader before 1.4 sees: a section it does not know, skipped
 * after its checksum (as this reader skips any unknown id), and the
 * totals, which stay the truth. And a later minor's wider rows: skipped.
 */
static void test_losses_older_and_later_readers(void **state)
{
	struct ms_capture *cap = make_loss_capture(), *back;
	unsigned char *buf, *bad, *raw;
	size_t len, blen;
	struct tfile f;
	struct tsec *s;
	uint32_t n, i;

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	section(&f, MS_CAPF_LOSSES)->id = 99;
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	assert_int_equal(back->n_losses, 0);
	assert_int_equal(back->lost_kernel, 54);
	assert_int_equal(back->lost_collector, 13);
	back->n_losses = cap->n_losses;
	back->losses = cap->losses;
	assert_same_capture(cap, back);
	back->losses = NULL;
	ms_capture_free(back);
	free(bad);
	release_file(&f);

	parse_file(buf, len, &f);
	f.minor = 9;
	s = section(&f, MS_CAPF_LOSSES);
	n = ms_get_u32(s->raw);
	raw = calloc(1, MS_CAPF_TABLE_HEADER + n * (MS_CAPF_ROW_LOSSES + 8));
	ms_put_u32(raw, n);
	ms_put_u32(raw + 4, MS_CAPF_ROW_LOSSES + 8);
	for (i = 0; i < n; i++) {
		unsigned char *row = raw + MS_CAPF_TABLE_HEADER + i * (MS_CAPF_ROW_LOSSES + 8);

		memcpy(row, s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_LOSSES, MS_CAPF_ROW_LOSSES);
		memset(row + MS_CAPF_ROW_LOSSES, 0xee, 8);
	}
	free(s->raw);
	s->raw = raw;
	s->raw_len = MS_CAPF_TABLE_HEADER + n * (MS_CAPF_ROW_LOSSES + 8);
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	back->minor = cap->minor;
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/*
 * A stream as ms-collect | ms-decode | ... makes it: lost records among
 * the stacks in time order, and one without a time. ms-capture keeps a
 * row of each timed one, and no longer only their totals.
 */
static void test_losses_from_stream(void **state)
{
	static const struct ms_lost lost[] = {
		{ MS_LOST_KERNEL, 1700, 4, 11 },
		{ MS_LOST_COLLECTOR, 2000, 0, 2 },
		{ MS_LOST_KERNEL, 2000, 4, 1 },
		{ MS_LOST_KERNEL, 9000, 4, 3 },
	};
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_lost untimed = { MS_LOST_COLLECTOR, 0, 0, 4 };
	struct ms_reader *r;
	struct ms_capture *cap;
	struct ms_stack *st = calloc(1, sizeof(*st));
	uint64_t ignored;
	uint32_t i, k = 0;

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	for (i = 0; i < 6; i++) {
		st->pid = st->tid = 7;
		st->time = 1000 + 500 * i;
		st->period = 1000000;
		st->reason = MS_END_KERNEL_ONLY;
		for (; k < 4 && lost[k].time <= st->time; k++)
			assert_int_equal(ms_lost_pack(w, &lost[k]), 0);
		assert_int_equal(ms_stack_pack(w, st), 0);
	}
	for (; k < 4; k++)
		assert_int_equal(ms_lost_pack(w, &lost[k]), 0);
	assert_int_equal(ms_lost_pack(w, &untimed), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &cap), 0);
	ms_reader_free(r);
	fclose(f);
	free(st);

	assert_int_equal(cap->n_samples, 6);
	assert_int_equal(cap->n_losses, 4);
	assert_loss(cap, 0, 1700, MS_LOST_KERNEL, 11);
	assert_loss(cap, 1, 2000, MS_LOST_KERNEL, 1);
	assert_loss(cap, 2, 2000, MS_LOST_COLLECTOR, 2);
	assert_loss(cap, 3, 9000, MS_LOST_KERNEL, 3);
	assert_int_equal(cap->lost_kernel, 15);
	assert_int_equal(cap->lost_collector, 6);
	assert_int_equal(cap->minor, 4);
	assert_false(ms_capture_info_number(cap, "ignored-records.lost", &ignored));
	assert_int_equal(cap->n_problems, 0);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* ---- off-CPU intervals and evidence (minor 5) ---- */

static void feed_info_text(struct ms_capture_builder *b, const char *key, const char *value);

/* A stack-def: (module, address) pairs innermost first, as feed_stack. */
static void feed_stack_def(struct ms_capture_builder *b, uint32_t id, uint32_t reason,
			   uint32_t n, ...)
{
	struct ms_stack *s = calloc(1, sizeof(*s));
	va_list ap;

	s->pid = 100;
	s->reason = reason;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = i ? MS_FRAME_RETURN : 0;
	}
	va_end(ap);
	s->n_frames = n;
	assert_int_equal(ms_capture_builder_stack_def(b, id, s), 0);
	free(s);
}

static void feed_off_cpu(struct ms_capture_builder *b, uint32_t tid, uint64_t time,
			 uint64_t state, uint32_t cause, uint32_t id)
{
	struct ms_off_cpu o = { 100, tid, time, 1, state, cause, id };

	assert_int_equal(ms_capture_builder_off_cpu(b, &o), 0);
}

static void feed_switch(struct ms_capture_builder *b, uint32_t tid, uint64_t time, bool out,
			bool preempt)
{
	struct ms_switch s = { 100, tid, time, 1, out, preempt };

	assert_int_equal(ms_capture_builder_switch(b, &s), 0);
}

/* Each thread's records (in time order), for feed_off_cpu_threads. */
static void thread_101(struct ms_capture_builder *b)
{
	struct ms_task task = { 100, 100, 101, 100, 50 };
	struct ms_stack_ref r = { 100, 101, 1500, 0, 1000000, 0 };

	/* born in the recording: its first switch-in is no interval */
	assert_int_equal(ms_capture_builder_task(b, MS_REC_FORK, &task), 0);
	feed_switch(b, 101, 100, false, false);
	feed_off_cpu(b, 101, 1000, 1, MS_CAUSE_SLEEPING, 0);
	feed_switch(b, 101, 1001, true, false);
	assert_int_equal(ms_capture_builder_stack_ref(b, &r), 0);
	feed_switch(b, 101, 5000, false, false);
	/* still off CPU when the recording ends */
	feed_off_cpu(b, 101, 6000, 2, MS_CAUSE_BLOCKED, 1);
	feed_switch(b, 101, 6001, true, false);
}

static void thread_102(struct ms_capture_builder *b)
{
	/* off CPU when the recording began */
	feed_switch(b, 102, 500, false, false);
	/* its sched_switch sample lost: the switch record alone */
	feed_switch(b, 102, 2000, true, true);
	feed_switch(b, 102, 2500, false, false);
	/* a stack of no frames: the end reason stays */
	feed_off_cpu(b, 102, 3000, 0x100, MS_CAUSE_PREEMPTED, 2);
	feed_switch(b, 102, 3001, true, true);
	feed_switch(b, 102, 3500, false, false);
}

static void thread_103(struct ms_capture_builder *b)
{
	/* the evidence of thread 101's first interval: one row for both */
	feed_off_cpu(b, 103, 1000, 1, MS_CAUSE_SLEEPING, 0);
	feed_switch(b, 103, 1001, true, false);
	feed_switch(b, 103, 4000, false, false);
	/* back on a CPU it never left, nothing lost: a problem */
	feed_switch(b, 103, 4100, false, false);
}

static void thread_104(struct ms_capture_builder *b)
{
	/* switch records only, no sample: the thread is known all the same */
	feed_switch(b, 104, 7000, true, false);
}

static void (*const thread_feeds[])(struct ms_capture_builder *) = {
	thread_101, thread_102, thread_103, thread_104,
};

/*
 * A recording with off-CPU records: stack-defs, then each thread's
 * records, the threads one after another in the order given (reversed or
 * not): the capture must not depend on it.
 */
static struct ms_capture *make_off_cpu_capture(bool reversed)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	uint32_t n = sizeof(thread_feeds) / sizeof(thread_feeds[0]);

	assert_non_null(b);
	feed_header(b);
	feed_info_text(b, "off-cpu", "sched_switch tracepoint, context switches");
	feed_module(b, 0, MS_MODULE_FILE, S("/bin/prog"));
	feed_module(b, 1, MS_MODULE_FILE, S("/lib/libc.so.6"));
	feed_frame(b, 0, 0x1110, S("leaf_a"), 0x1100);
	feed_frame(b, 0, 0x1210, S("work"), 0x1200);
	feed_frame(b, 0, 0x1300, S("other"), 0x1300);
	feed_frame(b, 1, 0x500, S("__libc_start_main"), 0x480);
	feed_stack_def(b, 0, MS_END_OUTERMOST, 3, 0u, (uint64_t)0x1110, 0u, (uint64_t)0x1210,
		       1u, (uint64_t)0x500);
	feed_stack_def(b, 1, MS_END_FP_CHAIN, 2, 0u, (uint64_t)0x1300, 1u, (uint64_t)0x500);
	feed_stack_def(b, 2, MS_END_KERNEL_ONLY, 0);
	for (uint32_t k = 0; k < n; k++)
		thread_feeds[reversed ? n - 1 - k : k](b);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static uint32_t thread_index(const struct ms_capture *cap, uint32_t tid)
{
	for (uint32_t i = 0; i < cap->n_threads; i++)
		if (cap->threads[i].tid == tid)
			return i;
	fail_msg("no thread %u", tid);
	return MS_NONE;
}

static void assert_interval(const struct ms_capture *cap, uint32_t i, uint32_t tid, uint64_t start,
			    uint64_t end, uint32_t missing, const char *stack, uint32_t stack_end)
{
	const struct ms_cap_interval *x = &cap->intervals[i];

	assert_true(i < cap->n_intervals);
	assert_int_equal(x->thread, thread_index(cap, tid));
	assert_int_equal(x->start, start);
	assert_int_equal(x->end, end);
	assert_int_equal(x->missing, missing);
	assert_string_equal(stack_path(cap, x->stack), stack);
	assert_int_equal(x->stack_end, stack_end);
}

static void assert_evidence(const struct ms_capture *cap, uint32_t interval, uint32_t cause,
			    uint32_t sources, uint64_t state, uint32_t preempt)
{
	const struct ms_cap_evidence *e = &cap->evidence[cap->intervals[interval].evidence];

	assert_int_equal(e->cause, cause);
	assert_int_equal(e->sources, sources);
	assert_int_equal(e->state, state);
	assert_int_equal(e->preempt, preempt);
}

static void test_off_cpu_tables(void **state)
{
	struct ms_capture *cap = make_off_cpu_capture(false);
	const struct ms_cap_problem *p;
	const uint32_t both = MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH;

	assert_int_equal(cap->minor, 5);
	assert_int_equal(cap->flags, MS_CAPTURE_OFF_CPU);
	/* every thread of a switch is known, 104 without any sample */
	assert_int_equal(cap->n_threads, 4);
	assert_int_equal(cap->threads[thread_index(cap, 104)].first_time, 0);
	assert_int_equal(cap->n_samples, 1);
	assert_int_equal(cap->n_intervals, 7);
	/* sorted by start, or end when the start is missing; then thread */
	assert_interval(cap, 0, 102, 0, 500, MS_INTERVAL_BEGAN_INSIDE, "", MS_END_UNKNOWN);
	assert_evidence(cap, 0, MS_CAUSE_UNKNOWN, 0, 0, 0);
	assert_int_equal(cap->intervals[0].cpu, MS_NONE);
	assert_interval(cap, 1, 101, 1000, 5000, MS_INTERVAL_COMPLETE,
			"__libc_start_main;work;leaf_a", MS_END_OUTERMOST);
	assert_evidence(cap, 1, MS_CAUSE_SLEEPING, both, 1, 0);
	assert_int_equal(cap->intervals[1].cpu, 1);
	assert_interval(cap, 2, 103, 1000, 4000, MS_INTERVAL_COMPLETE,
			"__libc_start_main;work;leaf_a", MS_END_OUTERMOST);
	/* the same evidence: the same row */
	assert_int_equal(cap->intervals[1].evidence, cap->intervals[2].evidence);
	/* the sample shares the stack node with the switch-outs */
	assert_int_equal(cap->samples[0].stack, cap->intervals[1].stack);
	assert_interval(cap, 3, 102, 2000, 2500, MS_INTERVAL_COMPLETE, "", MS_END_UNKNOWN);
	assert_evidence(cap, 3, MS_CAUSE_PREEMPTED, MS_EVIDENCE_SWITCH, 0, 1);
	assert_interval(cap, 4, 102, 3000, 3500, MS_INTERVAL_COMPLETE, "", MS_END_KERNEL_ONLY);
	assert_evidence(cap, 4, MS_CAUSE_PREEMPTED, both, 0x100, 1);
	assert_interval(cap, 5, 101, 6000, 0, MS_INTERVAL_ENDED_INSIDE,
			"__libc_start_main;other", MS_END_FP_CHAIN);
	assert_evidence(cap, 5, MS_CAUSE_BLOCKED, both, 2, 0);
	assert_interval(cap, 6, 104, 7000, 0, MS_INTERVAL_ENDED_INSIDE, "", MS_END_UNKNOWN);
	assert_evidence(cap, 6, MS_CAUSE_UNKNOWN, MS_EVIDENCE_SWITCH, 0, 0);
	/* six distinct facts, sorted by (cause, sources, state, preempt) */
	assert_int_equal(cap->n_evidence, 6);
	assert_int_equal(cap->evidence[0].cause, MS_CAUSE_UNKNOWN);
	assert_int_equal(cap->evidence[0].sources, 0);
	assert_int_equal(cap->evidence[1].sources, MS_EVIDENCE_SWITCH);
	assert_int_equal(cap->evidence[5].cause, MS_CAUSE_BLOCKED);
	p = find_problem(cap, "switch-in-unpaired");
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_non_null(strstr(cap->strings[p->detail], "thread 100/103 came back to a CPU at 4100"));
	assert_string_equal(ms_capture_info_text(cap, "off-cpu"),
			    "sched_switch tracepoint, context switches");
	assert_invariants(cap);
	ms_capture_free(cap);
}

/* The same records, the threads in another order: the same file; and it loads as it was. */
static void test_off_cpu_deterministic(void **state)
{
	struct ms_capture *a = make_off_cpu_capture(false), *b = make_off_cpu_capture(true);
	unsigned char *ba;
	size_t la;

	encode_alike(a, b, &ba, &la);
	assert_int_equal(ms_get_u32(ba + MS_CAPF_MINOR), 5);
	assert_int_equal(ms_get_u32(ba + MS_CAPF_FLAGS), MS_CAPTURE_OFF_CPU);
	assert_reloads_same(a, ba, la);
	free(ba);
	ms_capture_free(a);
	ms_capture_free(b);
}

/* Dumped (stack-defs and interval records) and captured again: the same file. */
static void test_off_cpu_dump_round_trip(void **state)
{
	struct ms_capture *cap = make_off_cpu_capture(false);

	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* A capture without off-CPU facts has neither section nor flag, and keeps its minor. */
static void test_off_cpu_absent(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	unsigned char *buf;
	size_t len;
	struct tfile f;

	assert_int_equal(cap->n_intervals, 0);
	assert_false(cap->flags & MS_CAPTURE_OFF_CPU);
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(f.minor, 1);
	assert_int_equal(f.n, N_SECTIONS);
	for (uint32_t i = 0; i < f.n; i++)
		assert_true(f.s[i].id < MS_CAPF_INTERVALS);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/* Off-CPU records without the info that says what recorded them: "unknown", kept through a dump. */
static void test_off_cpu_without_info(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;

	feed_header(b);
	thread_104(b);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->flags, MS_CAPTURE_OFF_CPU);
	assert_string_equal(ms_capture_info_text(cap, "off-cpu"), "unknown");
	assert_int_equal(cap->n_intervals, 1);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);

	/* the info alone: the flag, and empty sections (nothing was off CPU) */
	b = ms_capture_builder_new();
	feed_header(b);
	feed_info_text(b, "off-cpu", "sched_switch");
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->flags, MS_CAPTURE_OFF_CPU);
	assert_int_equal(cap->minor, 5);
	assert_int_equal(cap->n_intervals, 0);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* A loss while threads sleep and run: lost ends and starts, from a stream. */
static void test_off_cpu_losses(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_lost lost = { MS_LOST_KERNEL, 2000, 0, 5 };
	struct ms_capture *cap;

	feed_header(b);
	feed_stack_def(b, 0, MS_END_KERNEL_ONLY, 0);
	feed_off_cpu(b, 201, 1000, 1, MS_CAUSE_SLEEPING, 0);
	feed_switch(b, 202, 1500, false, false);	/* attached: began inside */
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	feed_switch(b, 201, 3000, false, false);	/* given up: no interval */
	feed_switch(b, 202, 3500, false, false);	/* ran through the loss: lost start */
	/* a loss of count 0 is none */
	lost = (struct ms_lost){ MS_LOST_KERNEL, 4000, 0, 0 };
	feed_off_cpu(b, 201, 3900, 1, MS_CAUSE_SLEEPING, 0);
	assert_int_equal(ms_capture_builder_lost(b, &lost), 0);
	feed_switch(b, 201, 4500, false, false);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_intervals, 4);
	/* by start, or end when the start is missing */
	assert_interval(cap, 0, 201, 1000, 0, MS_INTERVAL_LOST_END, "", MS_END_KERNEL_ONLY);
	assert_interval(cap, 1, 202, 0, 1500, MS_INTERVAL_BEGAN_INSIDE, "", MS_END_UNKNOWN);
	assert_interval(cap, 2, 202, 0, 3500, MS_INTERVAL_LOST_START, "", MS_END_UNKNOWN);
	assert_interval(cap, 3, 201, 3900, 4500, MS_INTERVAL_COMPLETE, "", MS_END_KERNEL_ONLY);
	assert_int_equal(cap->lost_kernel, 5);
	assert_int_equal(cap->n_losses, 1);
	assert_int_equal(cap->n_problems, 0);
	assert_invariants(cap);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* Interval records (a dump's) that break a row's rules: a problem each, no row. */
static void test_off_cpu_bad_interval_records(void **state)
{
	static const struct ms_interval bad[] = {
		/* pid, tid, start, end, cpu, missing, stack, cause, sources, state, preempt */
		{ 1, 1, 10, 5, 0, MS_INTERVAL_COMPLETE, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 0, 5, 0, MS_INTERVAL_COMPLETE, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 3, 5, MS_NONE, MS_INTERVAL_BEGAN_INSIDE, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 0, 5, 2, MS_INTERVAL_LOST_START, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_LOST_END, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 3, 5, 2, 9, MS_NONE, 0, 0, 0, 0 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, MS_CAUSE_COUNT, 0, 0, 0 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, 0, 4, 0, 0 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, 0, MS_EVIDENCE_SWITCH, 0, 2 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, 0, MS_EVIDENCE_SWITCH, 1, 0 },
		{ 1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, 0, MS_EVIDENCE_STATE, 1, 1 },
	};
	static const struct ms_interval good = {
		1, 1, 3, 5, 2, MS_INTERVAL_COMPLETE, MS_NONE, MS_CAUSE_SLEEPING,
		MS_EVIDENCE_STATE, 1, 0,
	};
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_interval undefined = good;
	struct ms_capture *cap;
	const struct ms_cap_problem *p;
	const char *msg;
	size_t i;

	feed_header(b);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ms_capture_builder_interval(b, &bad[i]), 0);
	assert_int_equal(ms_capture_builder_interval(b, &good), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->n_intervals, 1);
	assert_int_equal(cap->n_evidence, 1);
	p = find_problem(cap, "bad-interval");
	assert_non_null(p);
	assert_int_equal(p->count, sizeof(bad) / sizeof(bad[0]));
	assert_non_null(strstr(cap->strings[p->detail], "thread 1/1 (start 10, end 5) was left out"));
	assert_invariants(cap);
	ms_capture_free(cap);

	/* a stack no stack-def gave: the builder fails, with a message */
	b = ms_capture_builder_new();
	undefined.stack = 0;
	stderr_begin();
	assert_int_equal(ms_capture_builder_interval(b, &undefined), -1);
	msg = stderr_end();
	assert_non_null(strstr(msg, "an interval record refers to stack 0, which no stack-def"));
	ms_capture_builder_free(b);
	b = ms_capture_builder_new();
	stderr_begin();
	assert_int_equal(ms_capture_builder_off_cpu(b, &(struct ms_off_cpu){ 1, 1, 5, 0, 1, 2, 3 }),
			 -1);
	msg = stderr_end();
	assert_non_null(strstr(msg, "an off-cpu record refers to stack 3, which no stack-def"));
	ms_capture_builder_free(b);
}

/* Damage to make_off_cpu_capture()'s file, for test_off_cpu_refused. */
static unsigned char *interval_row(struct tfile *f, uint32_t row)
{
	return section(f, MS_CAPF_INTERVALS)->raw + MS_CAPF_TABLE_HEADER + row * MS_CAPF_ROW_INTERVALS;
}
static unsigned char *evidence_row(struct tfile *f, uint32_t row)
{
	return section(f, MS_CAPF_EVIDENCE)->raw + MS_CAPF_TABLE_HEADER + row * MS_CAPF_ROW_EVIDENCE;
}
static void iv_thread(struct tfile *f) { ms_put_u32(interval_row(f, 2) + 16, 4); }
static void iv_stack(struct tfile *f) { ms_put_u32(interval_row(f, 1) + 24, 99); }
static void iv_evidence(struct tfile *f) { ms_put_u32(interval_row(f, 3) + 36, 6); }
static void iv_missing(struct tfile *f) { ms_put_u32(interval_row(f, 3) + 32, 5); }
static void iv_backwards(struct tfile *f) { ms_put_u64(interval_row(f, 3) + 8, 1999); }
static void iv_start_zero(struct tfile *f) { ms_put_u64(interval_row(f, 1), 0); }
static void iv_began_start(struct tfile *f) { ms_put_u64(interval_row(f, 0), 10); }
static void iv_ended_end(struct tfile *f) { ms_put_u64(interval_row(f, 6) + 8, 8000); }
static void iv_began_cpu(struct tfile *f) { ms_put_u32(interval_row(f, 0) + 20, 0); }
static void iv_order(struct tfile *f) { ms_put_u64(interval_row(f, 4), 1500); }
static void ev_cause(struct tfile *f) { ms_put_u32(evidence_row(f, 5), MS_CAUSE_COUNT); }
static void ev_sources(struct tfile *f) { ms_put_u32(evidence_row(f, 0) + 4, 4); }
static void ev_preempt(struct tfile *f) { ms_put_u32(evidence_row(f, 2) + 16, 2); }
static void ev_state(struct tfile *f) { ms_put_u64(evidence_row(f, 1) + 8, 1); }
static void ev_preempt_alone(struct tfile *f) { ms_put_u32(evidence_row(f, 0) + 16, 1); }
static void ev_order(struct tfile *f) { ms_put_u32(evidence_row(f, 1) + 4, 0); }
static void clear_off_cpu_flag(struct tfile *f) { f->flags &= ~(uint32_t)MS_CAPTURE_OFF_CPU; }
static void say_1_4(struct tfile *f) { f->minor = 4; }
/* the last section, evidence, left out */
static void drop_evidence(struct tfile *f) { free(f->s[--f->n].raw); }
static void iv_short_rows(struct tfile *f)
{
	struct tsec *s = section(f, MS_CAPF_INTERVALS);
	uint32_t n = ms_get_u32(s->raw);

	for (uint32_t i = 0; i < n; i++)
		memmove(s->raw + MS_CAPF_TABLE_HEADER + i * 32,
			s->raw + MS_CAPF_TABLE_HEADER + i * MS_CAPF_ROW_INTERVALS, 32);
	ms_put_u32(s->raw + 4, 32);
	s->raw_len = MS_CAPF_TABLE_HEADER + n * 32;
}

/* Damaged intervals and evidence: each refused with one message naming the section and row. */
static void test_off_cpu_refused(void **state)
{
	static const struct damage_case cases[] = {
		{ iv_thread, "section 'intervals'", "row 2: thread 4 of 4" },
		{ iv_stack, "section 'intervals'", "row 1: stack 99 of" },
		{ iv_evidence, "section 'intervals'", "row 3: evidence 6 of 6" },
		{ iv_missing, "section 'intervals'", "row 3: missing 5 (0 to 4)" },
		{ iv_backwards, "section 'intervals'",
		  "row 3: complete from 2000 to 1999 (0 < start <= end)" },
		{ iv_start_zero, "section 'intervals'", "row 1: complete from 0 to 5000" },
		{ iv_began_start, "section 'intervals'",
		  "row 0: began-inside from 10 to 500 (exactly the missing time is 0)" },
		{ iv_ended_end, "section 'intervals'", "row 6: ended-inside from 7000 to 8000" },
		{ iv_began_cpu, "section 'intervals'", "row 0: began-inside with a CPU or stack" },
		{ iv_order, "section 'intervals'", "row 4 is out of order" },
		{ ev_cause, "section 'evidence'", "row 5: cause 4 (0 to 3)" },
		{ ev_sources, "section 'evidence'", "row 0: sources 0x4 (1 state, 2 switch)" },
		{ ev_preempt, "section 'evidence'", "row 2: preempt 2 (0 or 1)" },
		{ ev_state, "section 'evidence'", "row 1: a state without the state source" },
		{ ev_preempt_alone, "section 'evidence'", "row 0: preempt without the switch source" },
		{ ev_order, "section 'evidence'", "row 1 is not after row 0" },
		{ clear_off_cpu_flag, "section 'intervals'",
		  "the header does not set the off-cpu flag (0x00000002)" },
		{ say_1_4, "section 'header'", "the off-cpu flag (0x00000002) in a file of format 1.4" },
		{ drop_evidence, "section 'evidence'", "the section is missing (the header sets" },
		{ iv_short_rows, "section 'intervals'", "rows of 32 bytes (this version needs 40" },
	};
	refuse_each(make_off_cpu_capture(false), cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * What a reader before 1.5 sees: sections it does not know, skipped after
 * their checksums, and a flag it may ignore: the samples whole. And a
 * later minor's wider rows: skipped.
 */
static void test_off_cpu_older_and_later_readers(void **state)
{
	struct ms_capture *cap = make_off_cpu_capture(false), *back;
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	section(&f, MS_CAPF_INTERVALS)->id = 99;
	section(&f, MS_CAPF_EVIDENCE)->id = 100;
	f.flags = 0;
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	assert_int_equal(back->n_intervals, 0);
	assert_int_equal(back->n_samples, cap->n_samples);
	assert_int_equal(back->n_threads, cap->n_threads);
	ms_capture_free(back);
	free(bad);
	release_file(&f);

	parse_file(buf, len, &f);
	f.minor = 9;
	for (uint32_t id = MS_CAPF_INTERVALS; id <= MS_CAPF_EVIDENCE; id++) {
		struct tsec *s = section(&f, id);
		uint32_t n = ms_get_u32(s->raw), size = ms_get_u32(s->raw + 4);
		unsigned char *raw = calloc(1, MS_CAPF_TABLE_HEADER + n * (size + 8));

		ms_put_u32(raw, n);
		ms_put_u32(raw + 4, size + 8);
		for (uint32_t i = 0; i < n; i++) {
			unsigned char *row = raw + MS_CAPF_TABLE_HEADER + i * (size + 8);

			memcpy(row, s->raw + MS_CAPF_TABLE_HEADER + i * size, size);
			memset(row + size, 0xee, 8);
		}
		free(s->raw);
		s->raw = raw;
		s->raw_len = MS_CAPF_TABLE_HEADER + n * (size + 8);
	}
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	back->minor = cap->minor;
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/*
 * A stream as the off-CPU pipeline makes it: switch-outs unwound into
 * stack-defs and off-cpu records, switch records, and the records
 * ms-capture does not hold (a switch-out sample, the tracepoint's format)
 * counted as ignored.
 */
static void test_off_cpu_from_stream(void **state)
{
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_info info = { S("off-cpu"), true, S("sched_switch"), 0 };
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_switch_out *so = calloc(1, sizeof(*so));
	struct ms_tracepoint *tp = calloc(1, sizeof(*tp));
	struct ms_off_cpu o = { 7, 8, 1000, 0, 1, MS_CAUSE_SLEEPING, 0 };
	struct ms_switch s = { 7, 8, 1200, 0, true, false };
	struct ms_reader *r;
	struct ms_capture *cap;
	uint64_t n;

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_info_pack(w, &info), 0);
	tp->name = S("sched:sched_switch");
	assert_int_equal(ms_tracepoint_pack(w, tp), 0);
	so->sample.pid = 7;
	so->sample.tid = 8;
	assert_int_equal(ms_switch_out_pack(w, so), 0);
	st->reason = MS_END_KERNEL_ONLY;
	assert_int_equal(ms_stack_def_pack(w, 0, st), 0);
	assert_int_equal(ms_off_cpu_pack(w, &o), 0);
	assert_int_equal(ms_switch_pack(w, &s), 0);
	s.out = false;
	s.time = 9000;
	assert_int_equal(ms_switch_pack(w, &s), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &cap), 0);
	ms_reader_free(r);
	fclose(f);
	free(st);
	free(so);
	free(tp);

	assert_int_equal(cap->flags, MS_CAPTURE_OFF_CPU);
	assert_int_equal(cap->n_intervals, 1);
	assert_int_equal(cap->intervals[0].start, 1000);
	assert_int_equal(cap->intervals[0].end, 9000);
	assert_int_equal(cap->intervals[0].stack_end, MS_END_KERNEL_ONLY);
	assert_true(ms_capture_info_number(cap, "ignored-records.switch-out", &n));
	assert_int_equal(n, 1);
	assert_true(ms_capture_info_number(cap, "ignored-records.tracepoint", &n));
	assert_int_equal(n, 1);
	assert_false(ms_capture_info_number(cap, "ignored-records.switch", &n));
	assert_false(ms_capture_info_number(cap, "ignored-records.off-cpu", &n));
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* ---- JIT data (minor 6): perf-map modules and each process's perf-map setting ---- */

#define PM_BASE_A 0x7f0000001000ull
#define PM_BASE_B 0x7f0000001040ull
#define PM_BASE_C 0x7f1000000000ull

static void feed_perf_map_module(struct ms_capture_builder *b, uint32_t id, struct ms_str path,
				 uint64_t base, uint64_t size)
{
	struct ms_module m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = MS_MODULE_PERF_MAP;
	m.path = path;
	m.base = base;
	m.size = size;
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
}

/* A perf-map read: status, err, offset, functions, malformed, over_max, no_code, code_unread. */
static struct ms_jit_read jit_read(uint32_t pid, uint64_t time, struct ms_str path, uint32_t status,
				   uint32_t err, uint64_t offset, uint64_t functions,
				   uint64_t malformed, uint64_t over_max, uint64_t no_code,
				   uint64_t code_unread)
{
	return (struct ms_jit_read){ pid, time, path, status, err, offset, functions, malformed,
				     over_max, no_code, code_unread, functions * 64 };
}

/* Each process's reads in order; the last of each is its setting. */
static const struct ms_jit_read *jit_reads(uint32_t k, uint32_t *n)
{
	static struct ms_jit_read r100[2], r200[1], r300[1], r400[1];

	r100[0] = jit_read(100, 1500, S("/tmp/perf-100.map"), MS_JIT_READ_BOUNDED, 0, 16 << 20,
			   10, 1, 0, 0, 0);
	r100[1] = jit_read(100, 2600, S("/tmp/perf-100.map"), MS_JIT_READ_OK, 0, 20 << 20, 12,
			   2, 4, 3, 1);
	r200[0] = jit_read(200, 1800, S("/tmp/perf-200.map"), MS_JIT_READ_OK, 0, 90, 1, 0, 0, 0, 0);
	r300[0] = jit_read(300, 1900, S("/tmp/perf-300.map"), MS_JIT_READ_STALE, 0, 0, 0, 0, 0, 0, 0);
	r400[0] = jit_read(400, 2000, S("/tmp/perf-400.map"), MS_JIT_READ_FAILED, 13, 0, 0, 0, 0, 0,
			   0);
	switch (k) {
	case 0: *n = 2; return r100;
	case 1: *n = 1; return r200;
	case 2: *n = 1; return r300;
	default: *n = 1; return r400;
	}
}

/*
 * A recording of a JIT: a file module, three perf-map modules (two of one
 * process's map), frame facts naming their frames, samples through them,
 * and perf-map reads of four processes, fed process by process in the
 * order given (reversed or not): the capture must not depend on it.
 */
static struct ms_capture *make_jit_capture(bool reversed)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	const struct ms_jit_read *r;
	uint32_t k, i, n;

	assert_non_null(b);
	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/usr/bin/python3"));
	feed_perf_map_module(b, 1, S("/tmp/perf-100.map"), PM_BASE_A, 0x40);
	feed_perf_map_module(b, 2, S("/tmp/perf-100.map"), PM_BASE_B, 0x80);
	feed_perf_map_module(b, 3, S("/tmp/perf-200.map"), PM_BASE_C, 0x100);
	feed_frame(b, 0, 0x500, S("_PyEval_EvalFrameDefault"), 0x480);
	feed_frame(b, 1, PM_BASE_A + 0x10, S("py::f:/srv/app.py"), PM_BASE_A);
	feed_frame(b, 2, PM_BASE_B + 0x8, S("py::g:/srv/app.py"), PM_BASE_B);
	feed_frame(b, 3, PM_BASE_C + 0x20, S("py::h:/srv/other.py"), PM_BASE_C);
	feed_stack(b, 100, 1000, 0, 2, 1u, (uint64_t)PM_BASE_A + 0x10, 0u, (uint64_t)0x500);
	feed_stack(b, 100, 2000, 0, 3, 2u, (uint64_t)PM_BASE_B + 0x8, 1u,
		   (uint64_t)PM_BASE_A + 0x10, 0u, (uint64_t)0x500);
	feed_stack(b, 101, 2100, 1, 2, 3u, (uint64_t)PM_BASE_C + 0x20, 0u, (uint64_t)0x500);
	for (k = 0; k < 4; k++) {
		r = jit_reads(reversed ? 3 - k : k, &n);
		for (i = 0; i < n; i++)
			assert_int_equal(ms_capture_builder_jit_read(b, &r[i]), 0);
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static void assert_perf_map_row(const struct ms_capture *cap, uint32_t row,
				const struct ms_jit_read *want)
{
	const struct ms_cap_perf_map *x = &cap->perf_maps[row];

	assert_true(row < cap->n_perf_maps);
	assert_int_equal(x->pid, want->pid);
	assert_string_equal(cap->strings[x->path], want->path.ptr);
	assert_int_equal(x->status, want->status);
	assert_int_equal(x->err, want->err);
	assert_int_equal(x->time, want->time);
	assert_int_equal(x->offset, want->offset);
	assert_int_equal(x->functions, want->functions);
	assert_int_equal(x->malformed, want->malformed);
	assert_int_equal(x->over_max, want->over_max);
	assert_int_equal(x->no_code, want->no_code);
	assert_int_equal(x->code_unread, want->code_unread);
	assert_int_equal(x->code_bytes, want->code_bytes);
	assert_ptr_equal(ms_capture_perf_map(cap, want->pid), x);
}

static void test_jit_tables(void **state)
{
	struct ms_capture *cap = make_jit_capture(false);
	uint32_t n;

	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->flags, 0);
	assert_true(ms_capture_has_jit(cap));
	assert_int_equal(cap->n_modules, 4);
	assert_int_equal(cap->modules[0].base, 0);
	assert_int_equal(cap->modules[1].kind, MS_MODULE_PERF_MAP);
	assert_int_equal(cap->modules[1].base, PM_BASE_A);
	assert_int_equal(cap->modules[1].size, 0x40);
	assert_int_equal(cap->modules[2].base, PM_BASE_B);
	assert_int_equal(cap->modules[3].base, PM_BASE_C);
	assert_string_equal(cap->strings[cap->modules[3].path], "/tmp/perf-200.map");
	/* named as recorded: the module is ok, nothing waits for a symbolize run */
	assert_int_equal(cap->modules[1].status, MS_CAP_MODULE_OK);
	assert_string_equal(stack_path(cap, cap->samples[1].stack),
			    "_PyEval_EvalFrameDefault;py::f:/srv/app.py;py::g:/srv/app.py");
	/* one row per process, by pid; of process 100's two reads the last */
	assert_int_equal(cap->n_perf_maps, 4);
	assert_perf_map_row(cap, 0, &jit_reads(0, &n)[1]);
	assert_perf_map_row(cap, 1, jit_reads(1, &n));
	assert_perf_map_row(cap, 2, jit_reads(2, &n));
	assert_perf_map_row(cap, 3, jit_reads(3, &n));
	assert_null(ms_capture_perf_map(cap, 101));
	/* the earlier read's counts are no row's, and nothing is a problem */
	assert_int_equal(cap->n_problems, 0);
	assert_invariants(cap);
	ms_capture_free(cap);
}

/* The same facts in another order: the same file; 1.6, rows of 80 bytes, the section; loads back. */
static void test_jit_deterministic(void **state)
{
	struct ms_capture *a = make_jit_capture(false), *b = make_jit_capture(true);
	unsigned char *ba;
	size_t la;
	struct tfile f;

	encode_alike(a, b, &ba, &la);
	parse_file(ba, la, &f);
	assert_int_equal(f.minor, 6);
	assert_int_equal(f.flags, 0);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_MODULES)->raw + 4), MS_CAPF_ROW_MODULES_1_6);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_PERF_MAPS)->raw), 4);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_PERF_MAPS)->raw + 4), MS_CAPF_ROW_PERF_MAPS);
	release_file(&f);
	assert_reloads_same(a, ba, la);
	free(ba);
	ms_capture_free(a);
	ms_capture_free(b);
}

/* Dumped (modules with their base, a jit-read per process) and captured again: the same file. */
static void test_jit_dump_round_trip(void **state)
{
	struct ms_capture *cap = make_jit_capture(false);

	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* Only a perf-map module, or only a setting (a process whose map was stale): each makes 1.6. */
static void test_jit_either_makes_1_6(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_jit_read r = jit_read(7, 5, S("/tmp/perf-7.map"), MS_JIT_READ_STALE, 0, 0, 0, 0,
					0, 0, 0);
	struct ms_capture *cap;
	unsigned char *buf;
	size_t len;
	struct tfile f;

	feed_header(b);
	feed_perf_map_module(b, 0, S("/tmp/perf-7.map"), 0x10000, 1);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->n_perf_maps, 0);
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(f.minor, 6);
	for (uint32_t i = 0; i < f.n; i++)
		assert_true(f.s[i].id != MS_CAPF_PERF_MAPS);
	release_file(&f);
	free(buf);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);

	b = ms_capture_builder_new();
	feed_header(b);
	feed_module(b, 0, MS_MODULE_ANON, S("//anon"));
	assert_int_equal(ms_capture_builder_jit_read(b, &r), 0);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->n_perf_maps, 1);
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_MODULES)->raw + 4), MS_CAPF_ROW_MODULES_1_6);
	release_file(&f);
	free(buf);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* A capture without JIT data: rows of 72 bytes, no section, its old minor. */
static void test_jit_absent(void **state)
{
	struct ms_capture *cap = make_capture(FEED_LISTED);
	unsigned char *buf;
	size_t len;
	struct tfile f;

	assert_false(ms_capture_has_jit(cap));
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(f.minor, 1);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_MODULES)->raw + 4), MS_CAPF_ROW_MODULES);
	for (uint32_t i = 0; i < f.n; i++)
		assert_true(f.s[i].id != MS_CAPF_PERF_MAPS);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/* A module record the builder must refuse: one message naming the record and what is wrong. */
static void refuse_module(uint32_t kind, uint64_t base, uint64_t size, const char *what)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_module m;
	const char *msg;

	memset(&m, 0, sizeof(m));
	m.id = 4;
	m.kind = kind;
	m.path = S("/tmp/perf-1.map");
	m.base = base;
	m.size = size;
	feed_header(b);
	ms_capture_builder_at(b, "in.msr", 77);
	stderr_begin();
	assert_int_equal(ms_capture_builder_module(b, &m), -1);
	msg = stderr_end();
	assert_int_equal(count_lines(msg), 1);
	if (!strstr(msg, "module record 4") || !strstr(msg, what) || !strstr(msg, "byte 77 of 'in.msr'"))
		fail_msg("unexpected message: %s", msg);
	assert_null(ms_capture_builder_seal(b));
}

static void refuse_jit_read(struct ms_jit_read r, const char *what)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	const char *msg;

	feed_header(b);
	stderr_begin();
	assert_int_equal(ms_capture_builder_jit_read(b, &r), -1);
	msg = stderr_end();
	assert_int_equal(count_lines(msg), 1);
	if (!strstr(msg, "jit-read record of pid 9") || !strstr(msg, what))
		fail_msg("unexpected message: %s", msg);
	assert_null(ms_capture_builder_seal(b));
}

static void test_jit_builder_refusals(void **state)
{
	refuse_module(MS_MODULE_PERF_MAP, 0, 0x40, "perf-map module without a base");
	refuse_module(MS_MODULE_PERF_MAP, 0x10000, 0, "perf-map module of size 0");
	refuse_module(MS_MODULE_PERF_MAP, UINT64_MAX - 0xf, 0x20, "passes the end of the address");
	refuse_module(MS_MODULE_ANON, 0x10000, 0x40, "only perf-map and jit-object modules have");
	refuse_module(MS_MODULE_FILE, 1, 0x40, "only perf-map and jit-object modules have");
	refuse_jit_read(jit_read(9, 1, S("/tmp/perf-9.map"), MS_JIT_READ_STATUS_COUNT, 0, 0, 0, 0,
				 0, 0, 0), "status 5 (0 to 4)");
	refuse_jit_read(jit_read(9, 1, S("/tmp/perf-9.map"), MS_JIT_READ_FAILED, 4096, 0, 0, 0, 0,
				 0, 0), "err 4096, which is no errno");
}

/* Damage to make_jit_capture()'s tables, written as they are and refused on load. */
static void pm_base_zero(struct ms_capture *c) { c->modules[2].base = 0; }
static void pm_size_zero(struct ms_capture *c) { c->modules[2].size = 0; }
static void pm_past_end(struct ms_capture *c) { c->modules[2].base = UINT64_MAX - 0x7f; }
static void file_with_base(struct ms_capture *c) { c->modules[0].base = 0x1000; }
static void pm_pid_order(struct ms_capture *c) { c->perf_maps[2].pid = 200; }
static void pm_status(struct ms_capture *c) { c->perf_maps[1].status = 9; }
static void pm_err(struct ms_capture *c) { c->perf_maps[3].err = 70000; }
static void pm_path(struct ms_capture *c) { c->perf_maps[0].path = c->n_strings; }

static void refuse_jit_edited(void (*edit)(struct ms_capture *), const char *a, const char *b)
{
	struct ms_capture *cap = make_jit_capture(false);
	unsigned char *buf;
	size_t len;

	edit(cap);
	encode(cap, &buf, &len);
	expect_refused(buf, len, a, b, NULL);
	free(buf);
	ms_capture_free(cap);
}

/* The JIT sections of a file saying another minor, or rows of another size. */
static void say_minor(struct tfile *f, uint32_t minor) { f->minor = minor; }

static void test_jit_refused(void **state)
{
	struct ms_capture *cap = make_jit_capture(false);
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;

	refuse_jit_edited(pm_base_zero, "section 'modules'", "row 2: a perf-map module without a base");
	refuse_jit_edited(pm_size_zero, "section 'modules'", "row 2: a perf-map module of size 0");
	refuse_jit_edited(pm_past_end, "section 'modules'", "passes the end of the address space");
	refuse_jit_edited(file_with_base, "section 'modules'", "row 0: a file module with a base, "
			  "which only perf-map");
	refuse_jit_edited(pm_pid_order, "section 'perf-maps'", "row 2: pid 200 is not after pid 200");
	refuse_jit_edited(pm_status, "section 'perf-maps'", "row 1: status 9 (0 to 4)");
	refuse_jit_edited(pm_err, "section 'perf-maps'", "row 3: err 70000 is no errno");
	refuse_jit_edited(pm_path, "section 'perf-maps'", "row 0: path is string");

	/* a 1.5 file has neither perf-map rows nor perf-map modules */
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	say_minor(&f, 5);
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'perf-maps'", "in a file of format 1.5: it came with 1.6",
		       NULL);
	free(bad);
	free(f.s[--f.n].raw);	/* the last section: perf-maps */
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'modules'", "row 1: a perf-map module in a file before "
		       "format 1.6", NULL);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/* A reader skips what a later minor appends to rows: minor 9, rows 8 bytes longer. */
static void test_jit_later_readers(void **state)
{
	struct ms_capture *cap = make_jit_capture(false), *back;
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;
	static const uint32_t ids[] = { MS_CAPF_MODULES, MS_CAPF_PERF_MAPS };

	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	f.minor = 9;
	for (uint32_t k = 0; k < 2; k++) {
		struct tsec *s = section(&f, ids[k]);
		uint32_t n = ms_get_u32(s->raw), size = ms_get_u32(s->raw + 4);
		unsigned char *raw = calloc(1, MS_CAPF_TABLE_HEADER + n * (size + 8));

		ms_put_u32(raw, n);
		ms_put_u32(raw + 4, size + 8);
		for (uint32_t i = 0; i < n; i++) {
			unsigned char *row = raw + MS_CAPF_TABLE_HEADER + i * (size + 8);

			memcpy(row, s->raw + MS_CAPF_TABLE_HEADER + i * size, size);
			memset(row + size, 0xee, 8);
		}
		free(s->raw);
		s->raw = raw;
		s->raw_len = MS_CAPF_TABLE_HEADER + n * (size + 8);
	}
	bad = assemble(&f, &blen);
	back = ms_capture_load_buffer(bad, blen, "t.msc");
	assert_non_null(back);
	back->minor = cap->minor;
	assert_same_capture(cap, back);
	ms_capture_free(back);
	free(bad);
	/* but not a status it does not know: no builder would take the row again */
	ms_put_u32(section(&f, MS_CAPF_PERF_MAPS)->raw + MS_CAPF_TABLE_HEADER + 8, 7);
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'perf-maps'", "row 0: status 7 (0 to 4)", NULL);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/* A stream's records into the capture: f is rewound and read. */
static struct ms_capture *capture_file(FILE *f)
{
	struct ms_reader *r;
	struct ms_capture *cap;

	lseek(fileno(f), 0, SEEK_SET);
	r = ms_reader_open(fileno(f), "tmp");
	assert_non_null(r);
	assert_int_equal(ms_capture_from_stream(r, NULL, &cap), 0);
	ms_reader_free(r);
	return cap;
}

/* The JIT part of a stream as ms-unwind passes it on: modules, functions, reads, facts, a stack. */
static void write_jit_stream(struct ms_writer *w, uint32_t bad_status, uint64_t bad_base)
{
	struct ms_module m;
	struct ms_jit_func fn = { 100, 900, PM_BASE_A, PM_BASE_A + 0x40, S("py::f:/srv/app.py"),
				  MS_JIT_PERF_MAP, 1, 0, (const uint8_t *)"\x01\x02", 2 };
	struct ms_jit_read r = jit_read(100, 900, S("/tmp/perf-100.map"), MS_JIT_READ_OK, 0, 50,
					1, 0, 0, 0, 0);
	struct ms_frame fr = { .module = 1, .address = PM_BASE_A + 0x10,
			       .name = S("py::f:/srv/app.py"), .symbol_start = PM_BASE_A,
			       .reason = MS_SYM_OK };
	struct ms_frame failed = { .module = 0, .address = 0x700, .reason = MS_SYM_NO_SYMBOL };
	struct ms_stack *st = calloc(1, sizeof(*st));

	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/usr/bin/python3");
	assert_int_equal(ms_module_pack(w, &m), 0);
	m.id = 1;
	m.kind = MS_MODULE_PERF_MAP;
	m.path = S("/tmp/perf-100.map");
	m.base = bad_base;
	m.size = 0x40;
	assert_int_equal(ms_module_pack(w, &m), 0);
	assert_int_equal(ms_jit_func_pack(w, &fn), 0);
	fn.start += 0x40;
	fn.end += 0x40;
	assert_int_equal(ms_jit_func_pack(w, &fn), 0);
	r.status = MS_JIT_READ_BOUNDED;
	assert_int_equal(ms_jit_read_pack(w, &r), 0);
	r.status = bad_status;
	r.functions = 2;
	assert_int_equal(ms_jit_read_pack(w, &r), 0);
	assert_int_equal(ms_frame_pack(w, &fr), 0);
	assert_int_equal(ms_frame_pack(w, &failed), 0);
	st->pid = st->tid = 100;
	st->time = 1000;
	st->period = 1;
	st->reason = MS_END_NO_CFI;
	st->n_frames = 2;
	st->frames[0] = (struct ms_stack_frame){ 1, 0, PM_BASE_A + 0x10 };
	st->frames[1] = (struct ms_stack_frame){ 0, MS_FRAME_RETURN, 0x700 };
	assert_int_equal(ms_stack_pack(w, st), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	free(st);
}

/*
 * From a stream: the perf-map module with its base, the last read as the
 * setting, jit-func records counted as ignored; and a dump that leaves
 * failed facts out (what `microscope symbolize` reads) keeps the JIT
 * frame's name, which nothing could give it again.
 */
static void test_jit_from_stream(void **state)
{
	FILE *f = tmpfile(), *g = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	struct ms_capture *cap, *back;
	uint64_t n;

	assert_non_null(w);
	write_jit_stream(w, MS_JIT_READ_OK, PM_BASE_A);
	assert_int_equal(ms_writer_close(w), 0);
	cap = capture_file(f);
	fclose(f);
	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->modules[1].kind, MS_MODULE_PERF_MAP);
	assert_int_equal(cap->modules[1].base, PM_BASE_A);
	assert_int_equal(cap->n_perf_maps, 1);
	assert_int_equal(cap->perf_maps[0].status, MS_JIT_READ_OK);
	assert_int_equal(cap->perf_maps[0].functions, 2);
	assert_true(ms_capture_info_number(cap, "ignored-records.jit-func", &n));
	assert_int_equal(n, 2);
	assert_false(ms_capture_info_number(cap, "ignored-records.jit-read", &n));
	assert_dump_round_trip(cap);

	w = ms_writer_open(fileno(g), "tmp", 0);
	assert_int_equal(ms_capture_dump(cap, w, "ms-capture", "test", MS_DUMP_OMIT_FAILED), 0);
	assert_int_equal(ms_writer_close(w), 0);
	back = capture_file(g);
	fclose(g);
	assert_int_equal(back->n_frames, 2);
	assert_int_equal(back->frames[1].module, 1);
	assert_string_equal(back->strings[back->frames[1].name], "py::f:/srv/app.py");
	assert_int_equal(back->frames[1].reason, MS_SYM_OK);
	assert_int_equal(back->frames[0].reason, MS_CAP_UNSYMBOLIZED);
	assert_int_equal(back->modules[1].base, PM_BASE_A);
	assert_int_equal(back->n_perf_maps, 1);
	ms_capture_free(back);
	ms_capture_free(cap);
}

/* A stream whose read has an unknown status, or whose perf-map module has no base: refused, saying where. */
static void test_jit_stream_refused(void **state)
{
	for (int k = 0; k < 2; k++) {
		FILE *f = tmpfile();
		struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
		struct ms_reader *r;
		struct ms_capture *cap = NULL;
		const char *msg;

		write_jit_stream(w, k ? MS_JIT_READ_OK : 6, k ? 0 : PM_BASE_A);
		assert_int_equal(ms_writer_close(w), 0);
		lseek(fileno(f), 0, SEEK_SET);
		r = ms_reader_open(fileno(f), "tmp");
		assert_non_null(r);
		stderr_begin();
		assert_int_equal(ms_capture_from_stream(r, NULL, &cap), -1);
		msg = stderr_end();
		assert_null(cap);
		if (!strstr(msg, k ? "is a perf-map module without a base" : "has status 6 (0 to 4)") ||
		    !strstr(msg, "of 'tmp')"))
			fail_msg("unexpected message: %s", msg);
		ms_reader_free(r);
		fclose(f);
	}
}

/* ---- jit-object modules (minor 6): objects registered through the GDB JIT interface ---- */

#define JO_TEXT_A 0x7f2000001000ull
#define JO_TEXT_B 0x7f2000009000ull

static void feed_ranged_module(struct ms_capture_builder *b, uint32_t id, uint32_t kind,
			       struct ms_str path, uint64_t base, uint64_t size)
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

/*
 * A recording of lli: the interpreter's file module, two jit-object
 * modules (one object each, as ms-unwind makes them) named from their
 * symbols, one unnamed address in an object (a pc in no symbol), and a
 * perf-map module beside them; the frame facts in either order.
 */
static struct ms_capture *make_jit_object_capture(bool reversed)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	struct ms_frame unnamed = { .module = 2, .address = JO_TEXT_B + 0x30,
				    .reason = MS_SYM_NO_SYMBOL };

	assert_non_null(b);
	feed_header(b);
	feed_module(b, 0, MS_MODULE_FILE, S("/usr/bin/lli"));
	feed_ranged_module(b, 1, MS_MODULE_JIT_OBJECT, S("[jit-object 0x55d0c0a02e80]"),
			   JO_TEXT_A, 0x21);
	feed_ranged_module(b, 2, MS_MODULE_JIT_OBJECT, S("[jit-object 0x55d0c0a02f00]"),
			   JO_TEXT_B, 0x40);
	feed_ranged_module(b, 3, MS_MODULE_PERF_MAP, S("/tmp/perf-100.map"), PM_BASE_C, 0x100);
	if (reversed) {
		feed_frame(b, 3, PM_BASE_C + 0x20, S("py::h:/srv/other.py"), PM_BASE_C);
		assert_int_equal(ms_capture_builder_frame(b, &unnamed), 0);
		feed_frame(b, 2, JO_TEXT_B + 0x8, S("outer"), JO_TEXT_B);
		feed_frame(b, 1, JO_TEXT_A + 0x11, S("leaf"), JO_TEXT_A);
		feed_frame(b, 0, 0x500, S("main"), 0x480);
	} else {
		feed_frame(b, 0, 0x500, S("main"), 0x480);
		feed_frame(b, 1, JO_TEXT_A + 0x11, S("leaf"), JO_TEXT_A);
		feed_frame(b, 2, JO_TEXT_B + 0x8, S("outer"), JO_TEXT_B);
		assert_int_equal(ms_capture_builder_frame(b, &unnamed), 0);
		feed_frame(b, 3, PM_BASE_C + 0x20, S("py::h:/srv/other.py"), PM_BASE_C);
	}
	feed_stack(b, 100, 1000, 0, 3, 1u, (uint64_t)JO_TEXT_A + 0x11, 2u,
		   (uint64_t)JO_TEXT_B + 0x8, 0u, (uint64_t)0x500);
	feed_stack(b, 100, 2000, 0, 2, 2u, (uint64_t)JO_TEXT_B + 0x30, 0u, (uint64_t)0x500);
	feed_stack(b, 101, 2100, 1, 2, 3u, (uint64_t)PM_BASE_C + 0x20, 0u, (uint64_t)0x500);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

/* Each object's module with its range, named from its facts; 1.6 without a perf-map row. */
static void test_jit_object_tables(void **state)
{
	struct ms_capture *cap = make_jit_object_capture(false);

	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->flags, 0);
	assert_true(ms_capture_has_jit(cap));
	assert_int_equal(cap->n_perf_maps, 0);
	assert_int_equal(cap->n_modules, 4);
	assert_int_equal(cap->modules[0].base, 0);
	assert_int_equal(cap->modules[1].kind, MS_MODULE_JIT_OBJECT);
	assert_int_equal(cap->modules[1].base, JO_TEXT_A);
	assert_int_equal(cap->modules[1].size, 0x21);
	assert_string_equal(cap->strings[cap->modules[1].path], "[jit-object 0x55d0c0a02e80]");
	assert_int_equal(cap->modules[2].kind, MS_MODULE_JIT_OBJECT);
	assert_int_equal(cap->modules[2].base, JO_TEXT_B);
	assert_int_equal(cap->modules[3].kind, MS_MODULE_PERF_MAP);
	/* named from its symbols: ok; the one with an address in no symbol: partial */
	assert_int_equal(cap->modules[1].status, MS_CAP_MODULE_OK);
	assert_int_equal(cap->modules[2].status, MS_CAP_MODULE_PARTIAL);
	assert_string_equal(stack_path(cap, cap->samples[0].stack), "main;outer;leaf");
	assert_int_equal(cap->n_problems, 0);
	assert_invariants(cap);
	ms_capture_free(cap);
}

/* The same facts in another order: the same file; rows of 80 bytes; loads back the same. */
static void test_jit_object_deterministic(void **state)
{
	struct ms_capture *a = make_jit_object_capture(false), *b = make_jit_object_capture(true);
	struct ms_capture *back;
	unsigned char *ba;
	size_t la;
	struct tfile f;

	encode_alike(a, b, &ba, &la);
	parse_file(ba, la, &f);
	assert_int_equal(f.minor, 6);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_MODULES)->raw + 4), MS_CAPF_ROW_MODULES_1_6);
	for (uint32_t i = 0; i < f.n; i++)
		assert_true(f.s[i].id != MS_CAPF_PERF_MAPS);
	release_file(&f);
	back = ms_capture_load_buffer(ba, la, "t.msc");
	assert_non_null(back);
	assert_invariants(back);
	assert_same_capture(a, back);
	assert_int_equal(back->modules[1].base, JO_TEXT_A);
	ms_capture_free(back);
	free(ba);
	ms_capture_free(a);
	ms_capture_free(b);
}

/* Dumped (each jit-object module with its base) and captured again: the same file, byte for byte. */
static void test_jit_object_dump_round_trip(void **state)
{
	struct ms_capture *cap = make_jit_object_capture(false);

	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* A jit-object module alone makes the capture 1.6, and only JIT data does. */
static void test_jit_object_makes_1_6(void **state)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_capture *cap;
	unsigned char *buf;
	size_t len;
	struct tfile f;

	feed_header(b);
	feed_ranged_module(b, 0, MS_MODULE_JIT_OBJECT, S("[jit-object 0x1000]"), 0x10000, 1);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 6);
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	assert_int_equal(f.minor, 6);
	assert_int_equal(ms_get_u32(section(&f, MS_CAPF_MODULES)->raw + 4), MS_CAPF_ROW_MODULES_1_6);
	release_file(&f);
	free(buf);
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

static void test_jit_object_builder_refusals(void **state)
{
	refuse_module(MS_MODULE_JIT_OBJECT, 0, 0x40, "is a jit-object module without a base");
	refuse_module(MS_MODULE_JIT_OBJECT, 0x10000, 0, "is a jit-object module of size 0");
	refuse_module(MS_MODULE_JIT_OBJECT, UINT64_MAX - 0xf, 0x20,
		      "is a jit-object module whose range passes the end of the address space");
	refuse_module(MS_MODULE_JIT_OBJECT, UINT64_MAX - 0xf, 0x10, "whose range passes the end");
}

/* Damage to make_jit_object_capture()'s jit-object module, written as it is and refused on load. */
static void jo_base_zero(struct ms_capture *c) { c->modules[1].base = 0; }
static void jo_size_zero(struct ms_capture *c) { c->modules[2].size = 0; }
static void jo_past_end(struct ms_capture *c) { c->modules[2].base = UINT64_MAX - 0x3f; }
static void kernel_with_base(struct ms_capture *c) { c->modules[0].kind = MS_MODULE_KERNEL; c->modules[0].base = 1; }

static void refuse_jit_object_edited(void (*edit)(struct ms_capture *), const char *what)
{
	struct ms_capture *cap = make_jit_object_capture(false);
	unsigned char *buf;
	size_t len;

	edit(cap);
	encode(cap, &buf, &len);
	expect_refused(buf, len, "section 'modules'", what, NULL);
	free(buf);
	ms_capture_free(cap);
}

static void test_jit_object_refused(void **state)
{
	struct ms_capture *cap = make_jit_object_capture(false);
	unsigned char *buf, *bad;
	size_t len, blen;
	struct tfile f;

	refuse_jit_object_edited(jo_base_zero, "row 1: a jit-object module without a base");
	refuse_jit_object_edited(jo_size_zero, "row 2: a jit-object module of size 0");
	refuse_jit_object_edited(jo_past_end, "row 2: a jit-object module whose range passes the "
				 "end of the address space");
	refuse_jit_object_edited(kernel_with_base, "row 0: a kernel module with a base, which only "
				 "perf-map and jit-object modules have");
	/* a 1.5 file has no jit-object module (its rows are 80 bytes here: the base is read) */
	encode(cap, &buf, &len);
	parse_file(buf, len, &f);
	f.minor = 5;
	bad = assemble(&f, &blen);
	expect_refused(bad, blen, "section 'modules'", "row 1: a jit-object module in a file "
		       "before format 1.6", NULL);
	free(bad);
	release_file(&f);
	free(buf);
	ms_capture_free(cap);
}

/*
 * From a stream as ms-unwind passes it on: the jit-object module with its
 * base and its frames' facts; the JIT_OBJECT records ms-collect wrote
 * (chunks and an unregistration) counted as ignored, nothing else.
 */
static void test_jit_object_from_stream(void **state)
{
	FILE *f = tmpfile();
	struct ms_writer *w = ms_writer_open(fileno(f), "tmp", 0);
	static const uint8_t image[16] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	struct ms_jit_object o = { 100, 900, 0x55d0c0a02e80ull, 0x55d0c0b00000ull, 32, 0, image,
				   16 };
	struct ms_module m;
	struct ms_frame fr = { .module = 1, .address = JO_TEXT_A + 0x11, .name = S("leaf"),
			       .symbol_start = JO_TEXT_A, .reason = MS_SYM_OK };
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_capture *cap;
	uint64_t n;

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-test", "1"), 0);
	assert_int_equal(ms_jit_object_pack(w, &o), 0);
	o.offset = 16;
	assert_int_equal(ms_jit_object_pack(w, &o), 0);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/usr/bin/lli");
	assert_int_equal(ms_module_pack(w, &m), 0);
	m.id = 1;
	m.kind = MS_MODULE_JIT_OBJECT;
	m.path = S("[jit-object 0x55d0c0a02e80]");
	m.base = JO_TEXT_A;
	m.size = 0x21;
	assert_int_equal(ms_module_pack(w, &m), 0);
	assert_int_equal(ms_frame_pack(w, &fr), 0);
	st->pid = st->tid = 100;
	st->time = 1000;
	st->period = 1;
	st->reason = MS_END_OUTERMOST;
	st->n_frames = 2;
	st->frames[0] = (struct ms_stack_frame){ 1, 0, JO_TEXT_A + 0x11 };
	st->frames[1] = (struct ms_stack_frame){ 0, MS_FRAME_RETURN, 0x700 };
	assert_int_equal(ms_stack_pack(w, st), 0);
	o = (struct ms_jit_object){ 100, 2000, 0x55d0c0a02e80ull, 0, 0, 0, NULL, 0 };
	assert_int_equal(ms_jit_object_pack(w, &o), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	free(st);
	cap = capture_file(f);
	fclose(f);
	assert_non_null(cap);
	assert_int_equal(cap->minor, 6);
	assert_int_equal(cap->modules[1].kind, MS_MODULE_JIT_OBJECT);
	assert_int_equal(cap->modules[1].base, JO_TEXT_A);
	assert_int_equal(cap->modules[1].size, 0x21);
	assert_int_equal(cap->n_perf_maps, 0);
	assert_true(ms_capture_info_number(cap, "ignored-records.jit-object", &n));
	assert_int_equal(n, 3);
	assert_string_equal(stack_path(cap, cap->samples[0].stack), ";leaf");
	assert_dump_round_trip(cap);
	ms_capture_free(cap);
}

/* ---- the time a sample stands for (capture/weight.h) ---- */

/* A sample row of a hand-made capture: only time, period and count matter. */
static struct ms_cap_sample at(uint64_t time, uint64_t period, uint64_t count)
{
	return (struct ms_cap_sample){ .time = time, .period = period, .count = count };
}

static void test_weight_without_duty(void **state)
{
	struct ms_capture cap;
	struct ms_cap_sample s = at(5, 1000000, 1);

	memset(&cap, 0, sizeof(cap));
	assert_int_equal(ms_capture_duty_at(&cap, 0), MS_DUTY_FULL);
	assert_int_equal(ms_capture_duty_at(&cap, UINT64_MAX), MS_DUTY_FULL);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 1000000);
	s.period = UINT64_MAX;
	assert_int_equal(ms_capture_sample_weight(&cap, &s), UINT64_MAX);
}

static void test_weight_with_duty(void **state)
{
	static struct ms_cap_duty rows[] = {
		{ .time = 1000, .duty_ppm = 500000 },
		{ .time = 2000, .duty_ppm = 250000 },
		{ .time = 3000, .duty_ppm = 333333 },
		{ .time = 4000, .duty_ppm = 1000000 },
		{ .time = 5000, .duty_ppm = 1 },
	};
	struct ms_capture cap;
	struct ms_cap_sample s;

	memset(&cap, 0, sizeof(cap));
	cap.duty = rows;
	cap.n_duty = sizeof(rows) / sizeof(rows[0]);

	/* before the first row: always on */
	s = at(999, 1000000, 1);
	assert_int_equal(ms_capture_duty_at(&cap, 0), MS_DUTY_FULL);
	assert_int_equal(ms_capture_duty_at(&cap, 999), MS_DUTY_FULL);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 1000000);
	/* at a row's time its duty is in force, up to the next row's */
	s = at(1000, 1000000, 1);
	assert_int_equal(ms_capture_duty_at(&cap, 1000), 500000);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 2000000);
	s = at(1999, 1000000, 1);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 2000000);
	s = at(2000, 1000000, 1);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 4000000);
	/* rounded down, exactly: 1000001 * 10^6 / 333333 = 3000006.000006... */
	s = at(3500, 1000001, 1);
	assert_int_equal(ms_capture_duty_at(&cap, 3500), 333333);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 3000006);
	/* a row of 5 samples: its period is already their sum */
	s = at(2500, 5000000, 5);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 20000000);
	/* back to always on */
	s = at(4000, 7, 1);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 7);
	/* after the last row: its duty, and a weight past 64 bits saturates */
	s = at(UINT64_MAX, 18446744073709ull, 1);
	assert_int_equal(ms_capture_duty_at(&cap, UINT64_MAX), 1);
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 18446744073709000000ull);
	s.period = 18446744073710ull;
	assert_int_equal(ms_capture_sample_weight(&cap, &s), UINT64_MAX);
	s.period = 0;
	assert_int_equal(ms_capture_sample_weight(&cap, &s), 0);
}

/* Whether periods are CPU time, by the capture's info "event". */
static void test_time_event(void **state)
{
	static const char *strings[] = { "", "event", "cpu-clock", "sched:sched_switch" };
	struct ms_cap_info info = { .key = 1, .value_text = 2 };
	struct ms_capture cap;

	memset(&cap, 0, sizeof(cap));
	cap.strings = strings;
	cap.n_strings = 4;
	assert_true(ms_capture_time_event(&cap));
	cap.info = &info;
	cap.n_info = 1;
	assert_true(ms_capture_time_event(&cap));
	info.value_text = 3;
	assert_false(ms_capture_time_event(&cap));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builder_tables),
		cmocka_unit_test(test_builder_own_problems),
		cmocka_unit_test(test_builder_stack_defs),
		cmocka_unit_test(test_builder_empty),
		cmocka_unit_test(test_encode_load),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_write_load_file),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_flipped_byte_each_section),
		cmocka_unit_test(test_header_refusals),
		cmocka_unit_test(test_assemble_matches_writer),
		cmocka_unit_test(test_bad_references),
		cmocka_unit_test(test_bad_sections),
		cmocka_unit_test(test_mutated_sections),
		cmocka_unit_test(test_dump_round_trip),
		cmocka_unit_test(test_stream_cut_short),
		cmocka_unit_test(test_lines_tables),
		cmocka_unit_test(test_lines_encode_deterministic),
		cmocka_unit_test(test_lines_dump_round_trip),
		cmocka_unit_test(test_lines_bad_references),
		cmocka_unit_test(test_reads_version_1_0),
		cmocka_unit_test(test_module_status),
		cmocka_unit_test(test_dump_omit_failed),
		cmocka_unit_test(test_from_stream_info),
		cmocka_unit_test(test_frame_fallback),
		cmocka_unit_test(test_counts_round_trip),
		cmocka_unit_test(test_counts_absent_in_recordings),
		cmocka_unit_test(test_counts_dump),
		cmocka_unit_test(test_counts_from_info),
		cmocka_unit_test(test_counts_builder_limits),
		cmocka_unit_test(test_counts_refused),
		cmocka_unit_test(test_duty_builder),
		cmocka_unit_test(test_duty_round_trip),
		cmocka_unit_test(test_duty_with_counts),
		cmocka_unit_test(test_duty_absent),
		cmocka_unit_test(test_committed_captures_unchanged),
		cmocka_unit_test(test_duty_refused),
		cmocka_unit_test(test_duty_wider_rows),
		cmocka_unit_test(test_duty_from_stream),
		cmocka_unit_test(test_losses_builder),
		cmocka_unit_test(test_losses_round_trip),
		cmocka_unit_test(test_losses_dump),
		cmocka_unit_test(test_losses_absent),
		cmocka_unit_test(test_losses_with_duty_and_counts),
		cmocka_unit_test(test_losses_bound),
		cmocka_unit_test(test_losses_overflow),
		cmocka_unit_test(test_losses_refused),
		cmocka_unit_test(test_losses_older_and_later_readers),
		cmocka_unit_test(test_losses_from_stream),
		cmocka_unit_test(test_off_cpu_tables),
		cmocka_unit_test(test_off_cpu_deterministic),
		cmocka_unit_test(test_off_cpu_dump_round_trip),
		cmocka_unit_test(test_off_cpu_absent),
		cmocka_unit_test(test_off_cpu_without_info),
		cmocka_unit_test(test_off_cpu_losses),
		cmocka_unit_test(test_off_cpu_bad_interval_records),
		cmocka_unit_test(test_off_cpu_refused),
		cmocka_unit_test(test_off_cpu_older_and_later_readers),
		cmocka_unit_test(test_off_cpu_from_stream),
		cmocka_unit_test(test_jit_tables),
		cmocka_unit_test(test_jit_deterministic),
		cmocka_unit_test(test_jit_dump_round_trip),
		cmocka_unit_test(test_jit_either_makes_1_6),
		cmocka_unit_test(test_jit_absent),
		cmocka_unit_test(test_jit_builder_refusals),
		cmocka_unit_test(test_jit_refused),
		cmocka_unit_test(test_jit_later_readers),
		cmocka_unit_test(test_jit_from_stream),
		cmocka_unit_test(test_jit_stream_refused),
		cmocka_unit_test(test_jit_object_tables),
		cmocka_unit_test(test_jit_object_deterministic),
		cmocka_unit_test(test_jit_object_dump_round_trip),
		cmocka_unit_test(test_jit_object_makes_1_6),
		cmocka_unit_test(test_jit_object_builder_refusals),
		cmocka_unit_test(test_jit_object_refused),
		cmocka_unit_test(test_jit_object_from_stream),
		cmocka_unit_test(test_weight_without_duty),
		cmocka_unit_test(test_weight_with_duty),
		cmocka_unit_test(test_time_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
