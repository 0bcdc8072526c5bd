/*
 * Unit tests of the size of Chrome traces before they are written
 * (formats.h: ms_chrome_estimate, ms_export_warn_size): the count is the
 * bytes the export writes, to the byte, the bound never below them, on
 * hand-built and pseudo-random captures; the warning is one line naming
 * the size and a smaller way, and only past the limit.
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

#include "capture/builder.h"
#include "capture/capture.h"
#include "formats/formats.h"
#include "stream/records.h"
#include "util/error.h"

#include "tests/unit/stderr-capture.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

static uint64_t rng;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static struct ms_str str(const char *s)
{
	return (struct ms_str){ s, (uint32_t)strlen(s) };
}

/*
 * A capture drawn from seed: up to 5 threads, stacks up to 30 frames over
 * 40 functions (names that need escaping among them, some with inline
 * lines), ends of every kind, periods of 0 (a span of a millisecond per
 * sample counted), of the usual size, and one so large a span saturates.
 */
static struct ms_capture *random_capture(uint64_t seed, uint32_t n_samples)
{
	static const char *const names[] = { "main", "work", "a \"quoted\" name", "tab\there",
					     "ünïcode", "std::vector<int>::push_back", "x" };
	static const uint32_t ends[] = { MS_END_OUTERMOST, MS_END_OUTERMOST, MS_END_STACK_COPY,
					 MS_END_FP_CHAIN, MS_END_KERNEL_ONLY, MS_END_UNKNOWN,
					 MS_END_NO_CFI, 99 };
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_frame *f = calloc(1, sizeof(*f));
	struct ms_info info = { S("event"), true, S("cpu-clock"), 0 };
	struct ms_module m;
	char buf[40][64];
	uint32_t n_threads = 1 + (uint32_t)(seed % 5), i, k;
	uint64_t time = 1000;
	struct ms_capture *cap;

	rng = 0x9e3779b97f4a7c15ull * (seed + 1);
	assert_non_null(b);
	assert_non_null(st);
	assert_non_null(f);
	assert_int_equal(ms_capture_builder_info(b, &info), 0);
	memset(&m, 0, sizeof(m));
	m.kind = MS_MODULE_FILE;
	m.path = S("/opt/a \"module\"/bin/prog");
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
	for (i = 0; i < 40; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s_%u", names[i % 7], i);
		memset(f, 0, sizeof(*f));
		f->address = 0x1000 + 0x10 * i;
		f->name = str(buf[i]);
		if (i % 5 == 2) {
			f->n_lines = 2;
			f->lines[0] = (struct ms_frame_line){ str("inlined"), str(""), str("a.h"), 3, 1 };
			f->lines[1] = (struct ms_frame_line){ str(buf[i]), str(""), str("a.c"), 9, 7 };
		}
		/* every fourth frame unnamed */
		if (i % 4 != 3)
			assert_int_equal(ms_capture_builder_frame(b, f), 0);
	}
	for (i = 0; i < n_threads; i++) {
		struct ms_comm c = { 0 };

		c.pid = 7;
		c.tid = 7 + i * 1000;
		c.comm = i ? S("worker \"w\"") : S("prog");
		assert_int_equal(ms_capture_builder_comm(b, &c), 0);
	}
	for (uint32_t s = 0; s < n_samples; s++) {
		uint32_t r = next_random(), depth = r % 31;

		memset(st, 0, offsetof(struct ms_stack, frames));
		st->pid = 7;
		st->tid = 7 + (next_random() % n_threads) * 1000;
		/* runs of one stack, gaps, and samples at one time */
		time += (r >> 8) % 4 == 0 ? 0 : (r >> 8) % 4 == 1 ? 5000000 : 1000000;
		st->time = time;
		st->cpu = r % 3;
		st->period = s % 7 == 0 ? 0 : s == n_samples / 2 ? UINT64_MAX / 2 : 1000000;
		st->reason = ends[(r >> 12) % 8];
		for (k = 0; k < depth && st->reason != MS_END_KERNEL_ONLY; k++)
			st->frames[k] = (struct ms_stack_frame){ 0, k ? MS_FRAME_RETURN : 0u,
								 0x1000 + 0x10 * ((k * 3 + (r >> 20)) % 40) };
		st->n_frames = k;
		assert_int_equal(ms_capture_builder_stack(b, st), 0);
	}
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	free(st);
	free(f);
	return cap;
}

static uint64_t export_size(const struct ms_capture *cap, const struct ms_export_options *o)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	assert_int_equal(ms_export(out, cap, MS_FORMAT_CHROME, o), 0);
	assert_int_equal(fclose(out), 0);
	free(buf);
	return n;
}

static void test_counted_is_written(void **state)
{
	(void)state;
	for (uint64_t seed = 0; seed < 12; seed++) {
		struct ms_capture *cap = random_capture(seed, 50 + (uint32_t)seed * 300);

		for (int form = 0; form < 2; form++) {
			struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
			uint64_t written, counted, bound;

			o.chrome_form = form ? MS_CHROME_SAMPLES : MS_CHROME_EVENTS;
			o.producer = "microscope test";
			written = export_size(cap, &o);
			/* a limit of 0: every answer is past it, so counted */
			counted = ms_chrome_estimate(cap, &o, 0);
			bound = ms_chrome_estimate(cap, &o, UINT64_MAX);
			assert_int_equal(counted, written);
			assert_true(bound >= written);
			/* at the limit, the bound is the answer; just below it, the count */
			assert_int_equal(ms_chrome_estimate(cap, &o, bound), bound);
			assert_int_equal(ms_chrome_estimate(cap, &o, bound - 1), written);
		}
		ms_capture_free(cap);
	}
}

/* The bound is a useful one: a few times the truth at most, for varied stacks. */
static void test_bound_is_close(void **state)
{
	struct ms_capture *cap = random_capture(3, 20000);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	uint64_t written, bound;

	(void)state;
	written = export_size(cap, &o);
	bound = ms_chrome_estimate(cap, &o, UINT64_MAX);
	assert_true(bound >= written);
	assert_true(bound < 4 * written);
	o.chrome_form = MS_CHROME_SAMPLES;
	written = export_size(cap, &o);
	bound = ms_chrome_estimate(cap, &o, UINT64_MAX);
	assert_true(bound >= written);
	assert_true(bound < 2 * written);
	ms_capture_free(cap);
}

static void test_warning(void **state)
{
	struct ms_capture *cap = random_capture(5, 2000);
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	uint64_t written = export_size(cap, &o), got;
	const char *msg;

	(void)state;
	ms_set_progname("ms-export");
	/* under the limit: nothing said */
	stderr_begin();
	got = ms_export_warn_size(cap, MS_FORMAT_CHROME, &o, "p.msc", written);
	assert_string_equal(stderr_end(), "");
	assert_true(got <= written);
	/* past it: one line with the size and the smaller ways */
	stderr_begin();
	got = ms_export_warn_size(cap, MS_FORMAT_CHROME, &o, "p.msc", 1000);
	msg = stderr_end();
	assert_int_equal(got, written);
	assert_int_equal(count_lines(msg), 1);
	assert_true(!strncmp(msg, "ms-export: warning: the Chrome trace of 'p.msc' will be about ", 62));
	/* as people read it: 2.8 MiB */
	{
		char want[64];

		assert_in_range(written, 1 << 20, 10 << 20);
		snprintf(want, sizeof(want), "about %.1f MiB; --chrome-form samples writes at most ",
			 (double)written / (1 << 20));
		assert_non_null(strstr(msg, want));
	}
	assert_non_null(strstr(msg, ", --pprof or --speedscope far less (-q: no warning)\n"));
	/* the samples form: the other formats */
	o.chrome_form = MS_CHROME_SAMPLES;
	stderr_begin();
	ms_export_warn_size(cap, MS_FORMAT_CHROME, &o, "p.msc", 1000);
	msg = stderr_end();
	assert_int_equal(count_lines(msg), 1);
	assert_null(strstr(msg, "--chrome-form"));
	assert_non_null(strstr(msg, "; --pprof or --speedscope write far less (-q: no warning)\n"));
	/* other formats are bounded by unique stacks: never */
	stderr_begin();
	assert_int_equal(ms_export_warn_size(cap, MS_FORMAT_FOLDED, &o, "p.msc", 0), 0);
	assert_int_equal(ms_export_warn_size(cap, MS_FORMAT_PPROF, &o, "p.msc", 0), 0);
	assert_string_equal(stderr_end(), "");
	ms_capture_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counted_is_written),
		cmocka_unit_test(test_bound_is_close),
		cmocka_unit_test(test_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
